/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive-side scaling of a port (ports[].rss, docs/CONFIG.md "RSS"): which header fields the
 * NIC hashes, with which Toeplitz key, and the redirection table (RETA) that maps the hash to
 * the port's RX queues. Pure functions (no EAL): the config parser, the primary and the unit test
 * call them.
 *
 * Why symmetric: dedup compares the frames one worker sees, tool groups keep per-flow buckets
 * per worker, the tunnel sequence state is per worker; all of them assume that both directions
 * of a flow reach one worker. With the Microsoft Toeplitz key of RSS specs, A->B and B->A hash
 * apart. A key made of one 16-bit pattern repeated (0x6d5a here, "Scalable TCP Session
 * Monitoring with Symmetric Receive-side Scaling", S. Woo and K. Park, KAIST 2012) makes the
 * Toeplitz hash of (src, dst, sport, dport) equal that of (dst, src, dport, sport): each 32-bit
 * window of the key then repeats every 16 bits, and the swapped fields sit 32 (addresses) or 16
 * (ports) bits apart.
 */
#ifndef SPANBOX_RSS_H
#define SPANBOX_RSS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SBX_RSS_KEY_MAX 64     /**< bytes of a Toeplitz key held (NICs use 40 or 52) */
#define SBX_RSS_KEY_DEFAULT 40 /**< bytes of the symmetric key when the device does not say */
#define SBX_RSS_RETA_MAX 512   /**< redirection table entries held (NICs: 64..512) */

/** Hash fields of ports[].rss.fields (bits of the rss_hf DPDK takes: see sbx_rss_hf()). */
enum sbx_rss_field {
	SBX_RSS_F_IPV4 = 1u << 0, /**< "ipv4": IPv4 source and destination addresses */
	SBX_RSS_F_IPV6 = 1u << 1, /**< "ipv6": IPv6 source and destination addresses */
	SBX_RSS_F_TCP = 1u << 2,  /**< "tcp": TCP ports too (with the addresses of its IP version) */
	SBX_RSS_F_UDP = 1u << 3,  /**< "udp": UDP ports too */
};

/** ports[].rss as configured. */
struct sbx_rss_cfg {
	bool enabled;                 /**< the port has an "rss" object */
	bool symmetric;               /**< key "symmetric" (the default): the repeated 0x6d5a pattern,
					   as long as the device's key (sbx_rss_symmetric_key()) */
	uint8_t fields;               /**< enum sbx_rss_field bits (default: all four) */
	uint8_t key_len;              /**< bytes of key[] (explicit key); 0 with symmetric */
	uint8_t key[SBX_RSS_KEY_MAX]; /**< explicit key (hex in the config) */
};

/**
 * Fill @p key with the symmetric key of @p len bytes (0x6d, 0x5a repeated).
 */
void sbx_rss_symmetric_key(uint8_t *key, size_t len);

/** @return true when @p key (@p len bytes) is made of one 16-bit pattern repeated (symmetric). */
bool sbx_rss_key_is_symmetric(const uint8_t *key, size_t len);

/**
 * Parse a key written as hex ("6d5a6d5a...", optional ':' between bytes) into @p key.
 * @return its length in bytes (1..SBX_RSS_KEY_MAX), or -1 when it is not whole hex bytes or longer.
 */
int sbx_rss_key_parse(const char *hex, uint8_t key[SBX_RSS_KEY_MAX]);

/** Write @p len bytes of @p key as lowercase hex into @p buf (NUL-terminated, truncated to @p size). */
void sbx_rss_key_format(const uint8_t *key, size_t len, char *buf, size_t size);

/**
 * The DPDK rss_hf (RTE_ETH_RSS_* bits) of @p fields: ipv4 -> IPV4 | FRAG_IPV4 | NONFRAG_IPV4_OTHER,
 * tcp -> NONFRAG_IPV4_TCP / NONFRAG_IPV6_TCP (the IP versions chosen), udp likewise, ipv6 ->
 * IPV6 | FRAG_IPV6 | NONFRAG_IPV6_OTHER. Fragments hash on the addresses only (they have no ports).
 */
uint64_t sbx_rss_hf(uint8_t fields);

/** The enum sbx_rss_field bits an rss_hf read back from a device covers (any of its bits). */
uint8_t sbx_rss_fields_of_hf(uint64_t hf);

/** Field name of one enum sbx_rss_field bit ("ipv4", "ipv6", "tcp", "udp"), NULL for others. */
const char *sbx_rss_field_name(uint8_t bit);

/** Spread @p nb_queues RX queues over a RETA of @p size entries: entry i -> queue i % nb_queues. */
void sbx_rss_reta_spread(uint16_t *reta, uint16_t size, uint16_t nb_queues);

#endif
