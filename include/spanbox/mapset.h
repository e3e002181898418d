/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file mapset.h
 * A set of maps (issue #27 "Scale": up to 256 maps, docs/MAPS.md "Limits"): bit j = cfg.maps[j],
 * 256 bits in four 64-bit words (map j is bit j % 64 of word j / 64). It replaces the uint64_t masks
 * of 32 maps everywhere a set of maps is kept: the maps each frame takes (secondary/maps_stage.c,
 * secondary/mirror.c), the maps watching a port, the collectors, the categories counting per-rule
 * counters (maprulectr.h), flows.sessions (config.h map_set).
 *
 * Pure inline code, no DPDK. The helpers that walk a set go word by word and skip zero words: a
 * set whose maps are all in word 0 costs a test of three zero words more than a uint64_t did.
 */
#ifndef SPANBOX_MAPSET_H
#define SPANBOX_MAPSET_H

#include <stdbool.h>
#include <stdint.h>

#define SBX_MAPSET_BITS 256u                    /**< maps a set holds (>= SBX_MAX_MAPS) */
#define SBX_MAPSET_WORDS (SBX_MAPSET_BITS / 64u) /**< its 64-bit words */
#define SBX_MAPSET_NONE UINT32_MAX              /**< sbx_mapset_next: no more bits */

/** A set of maps: bit j of the set is bit (j % 64) of w[j / 64]. Zero-initialise for the empty set. */
struct sbx_mapset {
	uint64_t w[SBX_MAPSET_WORDS];
};

/** Empty @p s. */
static inline void sbx_mapset_zero(struct sbx_mapset *s)
{
	for (unsigned int i = 0; i < SBX_MAPSET_WORDS; i++)
		s->w[i] = 0;
}

/** Add map @p j (< SBX_MAPSET_BITS) to @p s. */
static inline void sbx_mapset_set(struct sbx_mapset *s, uint32_t j)
{
	s->w[j >> 6] |= 1ULL << (j & 63);
}

/** @return true when map @p j (< SBX_MAPSET_BITS) is in @p s. */
static inline bool sbx_mapset_test(const struct sbx_mapset *s, uint32_t j)
{
	return (s->w[j >> 6] >> (j & 63)) & 1;
}

/** @return true when @p s holds no map. */
static inline bool sbx_mapset_empty(const struct sbx_mapset *s)
{
	uint64_t o = 0;

	for (unsigned int i = 0; i < SBX_MAPSET_WORDS; i++)
		o |= s->w[i];
	return o == 0;
}

/** @p d |= @p s (the union into @p d). */
static inline void sbx_mapset_or(struct sbx_mapset *d, const struct sbx_mapset *s)
{
	for (unsigned int i = 0; i < SBX_MAPSET_WORDS; i++)
		d->w[i] |= s->w[i];
}

/** @p d &= @p s (the intersection into @p d). */
static inline void sbx_mapset_and(struct sbx_mapset *d, const struct sbx_mapset *s)
{
	for (unsigned int i = 0; i < SBX_MAPSET_WORDS; i++)
		d->w[i] &= s->w[i];
}

/** @return true when @p a and @p b hold the same maps. */
static inline bool sbx_mapset_equal(const struct sbx_mapset *a, const struct sbx_mapset *b)
{
	uint64_t x = 0;

	for (unsigned int i = 0; i < SBX_MAPSET_WORDS; i++)
		x |= a->w[i] ^ b->w[i];
	return x == 0;
}

/** @return the number of maps in @p s. */
static inline uint32_t sbx_mapset_count(const struct sbx_mapset *s)
{
	uint32_t n = 0;

	for (unsigned int i = 0; i < SBX_MAPSET_WORDS; i++)
		n += (uint32_t)__builtin_popcountll(s->w[i]);
	return n;
}

/**
 * The lowest map of @p s at or above @p from: walk a set with
 * `for (j = sbx_mapset_next(s, 0); j != SBX_MAPSET_NONE; j = sbx_mapset_next(s, j + 1))`.
 * Zero words are skipped with one test each.
 * @return its index, or SBX_MAPSET_NONE when there is none (also for @p from >= SBX_MAPSET_BITS)
 */
static inline uint32_t sbx_mapset_next(const struct sbx_mapset *s, uint32_t from)
{
	uint32_t i = from >> 6;
	uint64_t m;

	if (i >= SBX_MAPSET_WORDS)
		return SBX_MAPSET_NONE;
	m = s->w[i] & (~0ULL << (from & 63));
	while (m == 0) {
		if (++i >= SBX_MAPSET_WORDS)
			return SBX_MAPSET_NONE;
		m = s->w[i];
	}
	return (i << 6) + (uint32_t)__builtin_ctzll(m);
}

#endif
