/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The rte_acl classifier of maps (docs/MAPS.md "Design"): the rule tables of N maps built into DPDK
 * rte_acl contexts, one lookup per frame answering every map.
 *
 *   - Each map is one rte_acl category (a rule's category_mask has its map's bit); a context set
 *     holds up to 16 consecutive maps (RTE_ACL_MAX_CATEGORIES). Past 16 maps there is one set per
 *     16 maps and a frame is looked up once in each set. When rte_acl cannot build a group of maps
 *     into one context (it gives up past 8 tries: rules of many maps naming different fields), the
 *     group is split in halves, down to one map per set; one map that does not fit is built again
 *     with max_size SBX_MAPACL_RETRY_MAX_SIZE (rte_acl's largest node limit: fewer tries) when
 *     opts.max_size is 0; one that does not fit then is split in halves of its rules (parts: a set
 *     of the one map each, looked up in rule order, a later part taking only the frames no earlier
 *     part matched: first match is kept), down to one rule; SBX_MAPACL_MAX_PARTS parts in all.
 *   - First match within a map: rule i of a map has priority 65536 - i, so the earliest matching
 *     rule wins its category; its userdata says the rule index and the action.
 *   - Per set, by default two contexts: one for IPv4 and non-IP frames (address fields one 32-bit
 *     word each) and one for IPv6 frames (four words each); a rule without addresses is in both.
 *     The fields of a context are only those some rule of it names (plus the protocol byte and the
 *     flags group), so a context of 5-tuple rules never walks the MAC or VLAN bytes.
 *     SBX_MAPACL_SINGLE builds one context per set for both families instead (measured in
 *     docs/BENCHMARKS.md "Maps").
 * The caller owns the rule tables; the contexts copy what they need. Building needs an initialised
 * EAL (rte_acl allocates with rte_malloc, and so does the build for the classifier itself, so that a
 * secondary process can use the primary's); classifying is thread safe on a built context (read only).
 */
#ifndef SPANBOX_MAPACL_H
#define SPANBOX_MAPACL_H

#include <stddef.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "spanbox/mapset.h"
#include "spanbox/maprules.h"

/** Maps one context answers (rte_acl's categories). */
#define SBX_MAPACL_MAPS_PER_CTX 16u
/** max_size of the second build of a single map that did not fit in 8 tries with max_size 0:
 *  rte_acl starts at its largest node limit (fewer tries); 64 MiB bounds the run-time tries. */
#define SBX_MAPACL_RETRY_MAX_SIZE ((size_t)64 << 20)
/** Parts in all of the maps split by their rules (one lookup each): a map whose rules rte_acl cannot
 *  build into one context even with SBX_MAPACL_RETRY_MAX_SIZE is built in halves of its rules. */
#define SBX_MAPACL_MAX_PARTS 256u
/** Most frames one sbx_mapacl_classify call takes. */
#define SBX_MAPACL_MAX_BURST 256u

/** A result: 0 = no rule of the map matched; else the deciding rule and its action. */
#define SBX_MAPACL_MATCHED(r) ((r) != 0)
#define SBX_MAPACL_RULE(r) (((r) & 0x7fffffffu) - 1u)   /**< the rule's index in its map */
#define SBX_MAPACL_ACTION(r) ((r) >> 31)                /**< enum sbx_map_action */

/**
 * True when results @p r[from..to) are all 0 (no rule of those categories matched): one OR over
 * them, which the compiler vectorises, so that the maps of a context set no rule matched (the
 * common case) cost a few instructions per 16 instead of a test each.
 */
static inline bool sbx_mapacl_none(const uint32_t *r, uint32_t from, uint32_t to)
{
	uint32_t o = 0;

	for (uint32_t c = from; c < to; c++)
		o |= r[c];
	return o == 0;
}

/**
 * Results @p r[from..to) (to - from <= 64) as bit masks, bit c - from for category c: the return
 * value has the categories where a rule matched (r != 0), *@p pass (when not NULL) those where the
 * deciding rule passes the frame (matched, action SBX_MAP_PASS: r > 0 as a signed word). Four categories per
 * SSE2 compare: the per-category loop it replaces (a test, a variable shift and an OR each) was a
 * fifth of the maps stage's samples with 16 maps (perf, bench/maps.sh maps-1024), its shifts by
 * %cl a chain through the flags from one category to the next.
 */
static inline uint64_t sbx_mapacl_masks(const uint32_t *r, uint32_t from, uint32_t to, uint64_t *pass)
{
	uint64_t m = 0, p = 0;
	uint32_t c = from;
#ifdef __SSE2__
	const __m128i zero = _mm_setzero_si128();

	for (; c + 4 <= to; c += 4) {
		const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(r + c));

		m |= (uint64_t)(~(uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, zero))) & 0xfu) << (c - from);
		p |= (uint64_t)(uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(v, zero))) << (c - from);
	}
#endif
	for (; c < to; c++) {
		m |= (uint64_t)SBX_MAPACL_MATCHED(r[c]) << (c - from);
		p |= (uint64_t)(SBX_MAPACL_MATCHED(r[c]) && SBX_MAPACL_ACTION(r[c]) == SBX_MAP_PASS) << (c - from);
	}
	if (pass != NULL) /* NULL: the pass mask is not wanted (its compares then compile away) */
		*pass = p;
	return m;
}

/**
 * One frame's set of maps from its @p nc results @p r (sbx_mapacl_classify's row of the frame):
 * map cols[c] is in @p s when category c matched with a pass rule and the map is in @p watch; when
 * none is, @p s is @p collect (the collectors there; @p collects: it is not empty). The results are
 * read 16 at a time (one context set's), a block of zeroes skipped at once; the common case, no
 * rule passed the frame, touches no word of @p watch. Used by the worker's maps stage
 * (secondary/maps_stage.c) and timed by the micro benchmark (tests/tools/sbx-map-classify.c).
 * @return true when @p s is not empty
 */
static inline bool sbx_mapacl_frame_set(const uint32_t *r, uint32_t nc, const uint16_t *cols,
					const struct sbx_mapset *watch, const struct sbx_mapset *collect,
					bool collects, struct sbx_mapset *s)
{
	bool hit = false;

	sbx_mapset_zero(s);
	for (uint32_t b = 0; b < nc; b += SBX_MAPACL_MAPS_PER_CTX) {
		const uint32_t e = nc - b < SBX_MAPACL_MAPS_PER_CTX ? nc : b + SBX_MAPACL_MAPS_PER_CTX;

		uint64_t pass;

		/* no rule matched, the common case: one OR over the block (the masks' compares cost
		 * 2-3 x more there: sbx-map-classify at 0 rules, sets_cyc 10-13 -> 13-30) */
		if (sbx_mapacl_none(r, b, e))
			continue;
		(void)sbx_mapacl_masks(r, b, e, &pass);
		for (; pass != 0; pass &= pass - 1) {
			sbx_mapset_set(s, cols[b + (uint32_t)__builtin_ctzll(pass)]);
			hit = true;
		}
	}
	if (hit) {
		sbx_mapset_and(s, watch);
		hit = !sbx_mapset_empty(s);
	}
	if (!hit && collects) {
		*s = *collect;
		hit = true;
	}
	return hit;
}

/** Build options (zeroed: the defaults). */
struct sbx_mapacl_opts {
	size_t max_size;  /**< rte_acl_config.max_size: bytes the run-time tries may use (0: no limit);
			       smaller splits the rules into more tries: less memory, slower lookups */
	int socket_id;    /**< NUMA socket of the contexts (0 is taken as SOCKET_ID_ANY) */
	int single;       /**< 1: one context per set for IPv4, IPv6 and non-IP frames */
	int alg;          /**< enum rte_acl_classify_alg (0: rte_acl's choice for the CPU and the EAL's
			       max SIMD width); a value the CPU cannot run fails the build */
};

/** What a build cost. */
struct sbx_mapacl_stats {
	uint64_t build_ns;   /**< wall time of create + add + build, all contexts */
	size_t memory;       /**< rte_malloc bytes the contexts hold (rules and run-time tries) */
	uint32_t contexts;   /**< rte_acl contexts built (empty ones are not built) */
	uint32_t sets;       /**< context sets: one lookup per set (and family) per frame */
	uint32_t splits;     /**< groups of maps rte_acl could not build together, split in halves */
	uint32_t retries;    /**< single maps built again with max_size SBX_MAPACL_RETRY_MAX_SIZE (opts.max_size 0) */
	uint32_t parts;      /**< maps (or parts) that did not fit even then, split in halves of their rules */
	uint32_t acl_rules;  /**< rules added over all contexts (a rule without addresses counts twice) */
	uint32_t fields[2];  /**< rte_acl fields of the first set's contexts: [0] IPv4/non-IP, [1] IPv6 */
};

struct sbx_mapacl;

/**
 * Build the contexts of @p nb_maps maps (map m's rules: maps[m]).
 * @param st   filled when not NULL
 * @return the classifier, or NULL with @p err set (no EAL, rte_acl out of memory or over max_size)
 */
struct sbx_mapacl *sbx_mapacl_build(const struct sbx_map_rules *maps, uint32_t nb_maps,
				    const struct sbx_mapacl_opts *opts, struct sbx_mapacl_stats *st,
				    char *err, size_t errlen);

/**
 * Check, in a process other than the builder's (a DPDK secondary), that every context of @p a
 * (built in rte_malloc memory by the primary, the same address here) is the one DPDK's RTE_ACL
 * tailq holds under its name (rte_acl_find_existing): the shared memory is the builder's.
 * @return 0, or -1 with the name of the first context not found in @p err
 */
int sbx_mapacl_check_shared(const struct sbx_mapacl *a, char *err, size_t errlen);

/** Free the contexts (NULL is fine). Not while a classify call runs on them. */
void sbx_mapacl_free(struct sbx_mapacl *a);

/** Results per frame in sbx_mapacl_classify's output (>= the number of maps). */
uint32_t sbx_mapacl_stride(const struct sbx_mapacl *a);

/**
 * Classify @p n keys (n <= SBX_MAPACL_MAX_BURST): results[i * stride + m] is frame i's result for
 * map m (SBX_MAPACL_* macros); columns past the number of maps are 0.
 * @return 0, or -1 when n is too large
 */
int sbx_mapacl_classify(const struct sbx_mapacl *a, const struct sbx_map_key *keys, uint32_t n, uint32_t *results);

/** rte_acl_dump of every context to stdout (diagnostics). */
void sbx_mapacl_dump(const struct sbx_mapacl *a);

#endif
