/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-rule counters of the maps (issue #27, docs/MAPS.md "Per-rule counters"): the packets and
 * bytes of the frames whose decision (pass or drop) each rule of each map made, per worker.
 *
 * One block per set of rule tables (one generation of the maps' classifiers, primary/maps.c),
 * allocated by the primary with rte_malloc beside the rte_acl contexts (the same address in every
 * process: the workers and mgmt find it through struct sbx_tables.maps.ctr of the active tables),
 * sized by the config: (workers + 1) rows x the rules of the tables. Row w (< nb_rows) is written
 * by worker slot w only (plain stores, no atomics: one writer per row; a restarted worker or the
 * standby that takes its slot writes on where it left off); rows start on a cache line, so no two
 * workers share one. Row nb_rows, the carried row, is written by the primary only: what the rules
 * kept from the tables before this block counted there (sbx_rule_ctrs_fold). A rule's total is the
 * sum of all nb_rows + 1 rows.
 * Entry (row r, map j, rule i) is rows[r * row_stride + first[j] + i]; a map's entries are
 * consecutive, in rule order.
 */
#ifndef SPANBOX_MAPRULECTR_H
#define SPANBOX_MAPRULECTR_H

#include <stdint.h>

#include <rte_prefetch.h>

#include "spanbox/config.h"
#include "spanbox/mapset.h"
#include "spanbox/mapacl.h"
#include "spanbox/maprules.h"

/** One rule's counters in one row: frames whose decision the rule made, and their bytes (the
 *  frame's length as the rules saw it: after the ingress stages, FCS excluded). */
struct sbx_rule_ctr {
	uint64_t packets;
	uint64_t bytes;
};

/** The per-rule counters of one set of rule tables (rte_malloc, sbx_rule_ctrs_alloc). */
struct sbx_rule_ctrs {
	uint32_t nb_rows;               /**< worker rows (cfg.nb_workers); row nb_rows is the carried row */
	uint32_t nb_maps;               /**< maps of the tables (cfg.nb_maps) */
	uint64_t row_stride;            /**< entries from one row to the next, a multiple of 4 (64 bytes) */
	uint32_t first[SBX_MAX_MAPS];   /**< entry of map j's rule 0 within a row */
	uint32_t n[SBX_MAX_MAPS];       /**< rules of map j */
	struct sbx_rule_ctr *rows;      /**< (nb_rows + 1) x row_stride entries, cache aligned */
};

/** Not a rule of the previous tables (sbx_map_rules_kept). */
#define SBX_RULE_NEW UINT32_MAX

/**
 * Allocate a zeroed block for @p nb_maps maps of @p n[j] rules each and @p nb_workers workers, in
 * rte_malloc memory on @p socket (SOCKET_ID_ANY: -1). Needs an initialised EAL.
 * @return the block, or NULL (out of memory, nb_maps > SBX_MAX_MAPS)
 */
struct sbx_rule_ctrs *sbx_rule_ctrs_alloc(const uint32_t *n, uint32_t nb_maps, uint32_t nb_workers, int socket);

/** Free a block (NULL is fine). Only once no process reads or writes it. */
void sbx_rule_ctrs_free(struct sbx_rule_ctrs *c);

/** Bytes of @p c: its header and its rows (workers + the carried row), as rte_malloc holds them. */
size_t sbx_rule_ctrs_bytes(const struct sbx_rule_ctrs *c);

/** Row @p w's entry of map @p j's rule 0; NULL when @p w or @p j is out of the block. */
static inline struct sbx_rule_ctr *sbx_rule_ctrs_map(const struct sbx_rule_ctrs *c, uint32_t w, uint32_t j)
{
	if (c == NULL || w > c->nb_rows || j >= c->nb_maps)
		return NULL;
	return &c->rows[w * c->row_stride + c->first[j]];
}

/** Rule @p i of map @p j summed over every row (the carried one included); zeroes when out of the block. */
struct sbx_rule_ctr sbx_rule_ctrs_total(const struct sbx_rule_ctrs *c, uint32_t j, uint32_t i);

/**
 * Which rules of @p nw (the new table of a map) are rules of @p old kept unchanged, for their
 * counters: the longest common prefix of the two tables, then the longest common suffix of what is
 * left (rules compared field by field, as parsed). An append keeps every old rule, a deleted rule
 * keeps the rules before and after it (those after it one index lower), a rule changed in place
 * keeps all the others; a table replaced by another keeps only the rules equal at its start and end.
 * @param from  nw->n entries: the old index of new rule i, or SBX_RULE_NEW
 * @return the rules kept
 */
uint32_t sbx_map_rules_kept(const struct sbx_map_rules *old, const struct sbx_map_rules *nw, uint32_t *from);

/** Entries sbx_rule_ctrs_count prefetches before it writes them. */
#define SBX_RULE_CTRS_CHUNK 64u

/**
 * Count one burst's decisions: for each frame i (< @p n) and each category c (< @p nc,
 * <= SBX_MAPSET_BITS) in @p colmask whose result matched (pass or drop), one packet and @p len[i]
 * bytes into entry col[c][SBX_MAPACL_RULE(result)]. One pass over the results finds the entries
 * (per 64 categories, a bit mask of the matched ones per frame; a word of @p colmask that is zero,
 * or 64 results that are all 0, is not looked at further) and prefetches them; they are written by chunks of SBX_RULE_CTRS_CHUNK (two
 * stores to one cache line per matched map per frame).
 * @param col      per category: the row's entry of its map's rule 0 (NULL: leave its bit out of colmask)
 * @param colmask  the categories to count (bit c = category c, not a map index)
 * @param results  sbx_mapacl_classify's output, @p stride results per frame
 */
static inline void sbx_rule_ctrs_count(struct sbx_rule_ctr *const *col, uint32_t nc, const struct sbx_mapset *colmask,
				       const uint32_t *results, uint32_t stride, const uint32_t *len, uint32_t n)
{
	struct sbx_rule_ctr *e[SBX_RULE_CTRS_CHUNK];
	uint32_t l[SBX_RULE_CTRS_CHUNK], k = 0, i, c, x, wd;

	for (i = 0; i < n; i++) {
		const uint32_t *r = &results[i * stride];

		for (wd = 0; wd < SBX_MAPSET_WORDS && wd * 64 < nc; wd++) {
			const uint64_t cm = colmask->w[wd];
			const uint32_t base = wd * 64, lim = nc - base < 64 ? nc - base : 64;
			uint64_t m;

			if (cm == 0 || sbx_mapacl_none(r, base, base + lim))
				continue; /* no category counted, or no rule matched: no bit to find */
			for (m = sbx_mapacl_masks(r, base, base + lim, NULL) & cm; m != 0; m &= m - 1) {
				c = base + (uint32_t)__builtin_ctzll(m);
				e[k] = &col[c][SBX_MAPACL_RULE(r[c])];
				rte_prefetch0(e[k]);
				l[k++] = len[i];
				if (k == SBX_RULE_CTRS_CHUNK) {
					for (x = 0; x < k; x++) {
						e[x]->packets++;
						e[x]->bytes += l[x];
					}
					k = 0;
				}
			}
		}
	}
	for (x = 0; x < k; x++) {
		e[x]->packets++;
		e[x]->bytes += l[x];
	}
}

#endif
