/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Byte helpers of the wire-format code (shared/, secondary/): big-endian (network order) fields
 * read and written at any alignment, and the ones' complement addition of the Internet checksum
 * (RFC 1071). Header-only, no DPDK.
 */
#ifndef SPANBOX_BYTES_H
#define SPANBOX_BYTES_H

#include <stdint.h>

/** @return the big-endian 16-bit field at @p p (any alignment). */
static inline uint16_t sbx_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/** @return the big-endian 32-bit field at @p p (any alignment). */
static inline uint32_t sbx_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/** Write @p v at @p p big-endian (2 bytes, any alignment). */
static inline void sbx_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/** Write @p v at @p p big-endian (4 bytes, any alignment). */
static inline void sbx_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/**
 * The ones' complement sum of two 16-bit words (RFC 1071), folded: adds a word to a running
 * checksum sum, or two sbx_csum16() results; RFC 1624's incremental update is built of it.
 */
static inline uint16_t sbx_csum_add(uint16_t a, uint16_t b)
{
	uint32_t x = (uint32_t)a + b;

	return (uint16_t)((x & 0xffff) + (x >> 16));
}

#endif
