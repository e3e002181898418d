/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests (TAP) of the set of maps (include/spanbox/mapset.h, issue #27 "Scale": 256 maps):
 * set/test of every one of the 256 bits and of no other, next over all of them and over sets with
 * bits in each of the four words (zero words skipped, the last bit of a word then the first of the
 * next), or/and/empty/equal/count against a plain bool array as the reference.
 * usage: test_mapset
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spanbox/config.h"
#include "spanbox/mapacl.h"
#include "spanbox/mapset.h"
#include "tap.h"

/* The bits of @p s as a bool array, walked with sbx_mapset_next; @return how many next gave. */
static unsigned int walk(const struct sbx_mapset *s, bool *out, bool *ascending)
{
	unsigned int n = 0;
	uint32_t last = 0;

	memset(out, 0, SBX_MAPSET_BITS);
	*ascending = true;
	for (uint32_t j = sbx_mapset_next(s, 0); j != SBX_MAPSET_NONE && n <= SBX_MAPSET_BITS; j = sbx_mapset_next(s, j + 1)) {
		if (j >= SBX_MAPSET_BITS || (n && j <= last))
			*ascending = false;
		else
			out[j] = true;
		last = j;
		n++;
	}
	return n;
}

static void each_bit(void)
{
	unsigned int bad_set = 0, bad_next = 0, bad_word = 0;

	check(SBX_MAPSET_BITS == 256 && SBX_MAPSET_WORDS == 4 && sizeof(struct sbx_mapset) == 32 &&
		      SBX_MAX_MAPS <= SBX_MAPSET_BITS, "a set holds 256 maps in 4 words of 64 bits (SBX_MAX_MAPS %d)",
	      SBX_MAX_MAPS);
	for (uint32_t j = 0; j < SBX_MAPSET_BITS; j++) {
		struct sbx_mapset s = { { 0 } };

		sbx_mapset_set(&s, j);
		for (uint32_t k = 0; k < SBX_MAPSET_BITS; k++)
			bad_set += sbx_mapset_test(&s, k) != (k == j);
		bad_word += s.w[j / 64] != 1ULL << (j % 64) || sbx_mapset_count(&s) != 1 || sbx_mapset_empty(&s);
		bad_next += sbx_mapset_next(&s, 0) != j || sbx_mapset_next(&s, j) != j ||
			    sbx_mapset_next(&s, j + 1) != SBX_MAPSET_NONE;
	}
	check(bad_set == 0, "set(j) then test(k): true for k = j only, each of the 256 bits (%u wrong)", bad_set);
	check(bad_word == 0, "set(j) is bit j %% 64 of word j / 64, count 1, not empty (%u wrong)", bad_word);
	check(bad_next == 0, "next(0) and next(j) find j, next(j + 1) none, each of the 256 bits (%u wrong)", bad_next);
}

static void walks(void)
{
	static const uint32_t edges[] = { 0, 63, 64, 127, 128, 191, 192, 255 };
	struct sbx_mapset s = { { 0 } }, all = { { 0 } };
	bool seen[SBX_MAPSET_BITS], up;
	unsigned int n, miss = 0;

	check(sbx_mapset_empty(&s) && sbx_mapset_next(&s, 0) == SBX_MAPSET_NONE, "the empty set: empty, next finds none");
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		sbx_mapset_set(&s, edges[i]);
	n = walk(&s, seen, &up);
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		miss += !seen[edges[i]];
	check(n == 8 && miss == 0 && up && sbx_mapset_count(&s) == 8,
	      "maps 0, 63, 64, 127, 128, 191, 192, 255 (both ends of every word): next gives the 8 in order (%u)", n);
	check(sbx_mapset_next(&s, 1) == 63 && sbx_mapset_next(&s, 65) == 127 && sbx_mapset_next(&s, 129) == 191 &&
		      sbx_mapset_next(&s, 193) == 255 && sbx_mapset_next(&s, 256) == SBX_MAPSET_NONE &&
		      sbx_mapset_next(&s, 1000) == SBX_MAPSET_NONE,
	      "next from inside a word finds the rest of it; from 256 and past, none");
	memset(&s, 0, sizeof(s));
	sbx_mapset_set(&s, 255);
	check(sbx_mapset_next(&s, 0) == 255 && s.w[0] == 0 && s.w[1] == 0 && s.w[2] == 0,
	      "map 255 alone: next(0) skips three zero words to it");
	for (uint32_t j = 0; j < SBX_MAPSET_BITS; j++)
		sbx_mapset_set(&all, j);
	n = walk(&all, seen, &up);
	miss = 0;
	for (uint32_t j = 0; j < SBX_MAPSET_BITS; j++)
		miss += !seen[j];
	check(n == 256 && miss == 0 && up && sbx_mapset_count(&all) == 256, "all 256 maps: next gives 0..255 in order (%u)", n);
}

static void ops(void)
{
	unsigned int bad = 0;

	srand(27);
	for (int round = 0; round < 1000; round++) {
		struct sbx_mapset a = { { 0 } }, b = { { 0 } }, o, x;
		bool ra[SBX_MAPSET_BITS] = { false }, rb[SBX_MAPSET_BITS] = { false }, seen[SBX_MAPSET_BITS], up;
		unsigned int no = 0, nx = 0, got;

		for (int k = rand() % 40; k > 0; k--) { /* random bits, some words left empty */
			uint32_t j = (uint32_t)rand() % (round % 4 ? SBX_MAPSET_BITS : 64);

			sbx_mapset_set(&a, j);
			ra[j] = true;
			j = (uint32_t)rand() % SBX_MAPSET_BITS;
			sbx_mapset_set(&b, j);
			rb[j] = true;
		}
		o = a;
		sbx_mapset_or(&o, &b);
		x = a;
		sbx_mapset_and(&x, &b);
		for (uint32_t j = 0; j < SBX_MAPSET_BITS; j++) {
			bad += sbx_mapset_test(&o, j) != (ra[j] || rb[j]) || sbx_mapset_test(&x, j) != (ra[j] && rb[j]);
			no += ra[j] || rb[j];
			nx += ra[j] && rb[j];
		}
		bad += sbx_mapset_count(&o) != no || sbx_mapset_count(&x) != nx || sbx_mapset_empty(&x) != (nx == 0);
		got = walk(&o, seen, &up);
		bad += got != no || !up;
		for (uint32_t j = 0; j < SBX_MAPSET_BITS; j++)
			bad += seen[j] != (ra[j] || rb[j]);
		bad += !sbx_mapset_equal(&a, &a) || sbx_mapset_equal(&a, &b) != (memcmp(ra, rb, sizeof(ra)) == 0);
	}
	check(bad == 0, "1000 random pairs: or, and, count, empty, equal, next agree with a bool array (%u wrong)", bad);
}

/* sbx_mapacl_frame_set (mapacl.h, the maps stage's per-frame set): results of 256 categories,
 * category c answering for map 255 - c, passes in blocks far apart, a drop, maps not watched. */
static void frame_sets(void)
{
	uint32_t r[256] = { 0 };
	uint16_t cols[256];
	struct sbx_mapset watch = { { 0 } }, collect = { { 0 } }, s, none = { { 0 } };

	for (uint32_t c = 0; c < 256; c++) {
		cols[c] = (uint16_t)(255 - c);
		if (c != 55) /* map 55 (category 200) does not watch here */
			sbx_mapset_set(&watch, c);
	}
	sbx_mapset_set(&collect, 7);
	check(!sbx_mapacl_frame_set(r, 256, cols, &watch, &none, false, &s) && sbx_mapset_empty(&s),
	      "no result matched, no collector: the empty set");
	check(sbx_mapacl_frame_set(r, 256, cols, &watch, &collect, true, &s) && sbx_mapset_equal(&s, &collect),
	      "no result matched: the collectors' set");
	r[0] = 1;                                 /* pass, map 255 */
	r[63] = 3;                                /* pass, map 192 */
	r[130] = 2u | (uint32_t)SBX_MAP_DROP << 31; /* drop, map 125: not taken */
	r[200] = 1;                               /* pass, map 55: not watched */
	r[255] = 1;                               /* pass, map 0 */
	check(sbx_mapacl_frame_set(r, 256, cols, &watch, &collect, true, &s) && sbx_mapset_count(&s) == 3 &&
		      sbx_mapset_test(&s, 255) && sbx_mapset_test(&s, 192) && sbx_mapset_test(&s, 0),
	      "passes in categories 0, 63, 255 (maps 255, 192, 0): those 3; the drop and the unwatched pass left out");
	memset(r, 0, sizeof(r));
	r[130] = 1u | (uint32_t)SBX_MAP_DROP << 31;
	r[200] = 1;
	check(sbx_mapacl_frame_set(r, 256, cols, &watch, &collect, true, &s) && sbx_mapset_equal(&s, &collect),
	      "only a drop and an unwatched pass: the collectors take it");
	memset(r, 0, sizeof(r));
	r[250] = 1; /* past nc: not read */
	check(!sbx_mapacl_frame_set(r, 241, cols, &watch, &none, false, &s),
	      "nc = 241: a result past the last category is not read");
	r[240] = 1;
	check(sbx_mapacl_frame_set(r, 241, cols, &watch, &none, false, &s) && sbx_mapset_count(&s) == 1 &&
		      sbx_mapset_test(&s, 15), "nc = 241: category 240, alone in the last block, gives map 15");
}

/* sbx_mapacl_masks (mapacl.h: four categories per SSE2 compare, a scalar tail) against the
 * definition, category by category: random results (0, a pass, a drop, a rule index with every bit
 * but the action's) over every range of up to 64 categories from offsets 0-7 (blocks of four and
 * tails of 1-3 both), with and without the pass mask asked for. */
static void masks(void)
{
	uint32_t r[80], bad = 0, ranges = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (int round = 0; round < 200; round++) {
		for (uint32_t c = 0; c < 80; c++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			switch (x % 5) {
			case 0: case 1: r[c] = 0; break;
			case 2: r[c] = 1u + (uint32_t)(x >> 40) % 1000u; break;                             /* pass */
			case 3: r[c] = (1u + (uint32_t)(x >> 40) % 1000u) | (uint32_t)SBX_MAP_DROP << 31; break; /* drop */
			default: r[c] = 0x7fffffffu; break; /* the largest pass */
			}
		}
		for (uint32_t from = 0; from < 8; from++)
			for (uint32_t to = from; to <= from + 64; to++) {
				uint64_t pass, m = sbx_mapacl_masks(r, from, to, &pass), wm = 0, wp = 0;

				for (uint32_t c = from; c < to; c++) {
					wm |= (uint64_t)SBX_MAPACL_MATCHED(r[c]) << (c - from);
					wp |= (uint64_t)(SBX_MAPACL_MATCHED(r[c]) && SBX_MAPACL_ACTION(r[c]) == SBX_MAP_PASS)
					      << (c - from);
				}
				bad += m != wm || pass != wp || sbx_mapacl_masks(r, from, to, NULL) != wm;
				ranges++;
			}
	}
	check(bad == 0, "sbx_mapacl_masks: %u ranges of 0-64 categories from offsets 0-7 agree with the definition (%u wrong)",
	      ranges, bad);
}

int main(void)
{
	each_bit();
	walks();
	ops();
	frame_sets();
	masks();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
