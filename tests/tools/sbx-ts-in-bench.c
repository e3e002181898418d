/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sbx-ts-in-bench [FRAMES]: cycles per frame of the timestamps-in parsers (shared/ts_in.c) against
 * the same loop without them (bench/ts_in.sh prints both, docs/BENCHMARKS.md "Timestamps in").
 * FRAMES (default 2048) frames of 64..1500 bytes in memory, each with an AVSP 64-bit UTC header and
 * a Metamako trailer; per round and frame:
 *   avsp off: restore the frame's first 26 bytes (the MACs and the header) from a pristine copy;
 *   avsp on:  the same, then sbx_ts_in_avsp(), sbx_ts_in_cut_front(), sbx_ts_in_offset_add();
 *   mm off:   read the frame's last byte;
 *   mm on:    sbx_ts_in_metamako() on its last min(len, 256) bytes, sbx_ts_in_offset_add().
 * The quickest of 64 rounds (TSC, rdtsc; preemption on a shared machine only adds). No EAL.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "spanbox/ts_in.h"

#define NS 1000000000ull

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)atoi(argv[1]) : 2048, i, r, k;
	const uint64_t now = 1764650000ull * NS;
	uint8_t **fr = calloc(n, sizeof(*fr)), (*orig)[26] = calloc(n, 26);
	uint32_t *len = calloc(n, sizeof(*len));
	double best[4] = { 1e30, 1e30, 1e30, 1e30 };
	struct sbx_ts_in_offset off = { 0 };
	volatile uint64_t sink = 0;
	struct sbx_ts_in_info ti;

	if (!fr || !orig || !len || n == 0)
		return 1;
	srand(1);
	for (i = 0; i < n; i++) {
		len[i] = 64 + (uint32_t)rand() % 1437;
		fr[i] = malloc(len[i]);
		for (k = 0; k < len[i]; k++)
			fr[i][k] = (uint8_t)rand();
		fr[i][12] = 0xD2, fr[i][13] = 0x8B, fr[i][14] = 0, fr[i][15] = 1, fr[i][16] = 0x01, fr[i][17] = 0x10;
		be32(fr[i] + 18, 1764650000 - 5);
		be32(fr[i] + 22, i);
		be32(fr[i] + len[i] - 12, 1764650000 - 5); /* the trailer: seconds, ns, flags 1, device, port */
		be32(fr[i] + len[i] - 8, i);
		fr[i][len[i] - 4] = 1;
		memcpy(orig[i], fr[i], 26);
	}
	for (r = 0; r < 64; r++) {
		for (k = 0; k < 4; k++) {
			uint64_t t0 = __rdtsc(), t;

			for (i = 0; i < n; i++) {
				switch (k) {
				case 0:
					memcpy(fr[i], orig[i], 26);
					sink += fr[i][12];
					break;
				case 1:
					memcpy(fr[i], orig[i], 26);
					if (sbx_ts_in_avsp(fr[i], len[i], 37, now, &ti) == SBX_TS_IN_OK) {
						sbx_ts_in_cut_front(fr[i], ti.cut_front);
						sbx_ts_in_offset_add(&off, ti.ns, now);
					}
					break;
				case 2:
					sink += fr[i][len[i] - 1];
					break;
				default: {
					uint32_t tl = len[i] < SBX_METAMAKO_TAIL_MAX ? len[i] : SBX_METAMAKO_TAIL_MAX;

					if (sbx_ts_in_metamako(fr[i] + len[i] - tl, tl, len[i], false, SBX_TS_IN_WINDOW_DEFAULT, now,
							       &ti) == SBX_TS_IN_OK)
						sbx_ts_in_offset_add(&off, ti.ns, now);
					break;
				}
				}
			}
			t = __rdtsc() - t0;
			if ((double)t / n < best[k])
				best[k] = (double)t / n;
		}
	}
	if (off.frames != 64ull * 2 * n) {
		fprintf(stderr, "sbx-ts-in-bench: %llu frames parsed, expected %llu\n", (unsigned long long)off.frames,
			64ull * 2 * n);
		return 1;
	}
	printf("frames\tavsp_off\tavsp_on\tmm_off\tmm_on\n%u\t%.1f\t%.1f\t%.1f\t%.1f\n", n, best[0], best[1], best[2], best[3]);
	return (int)(sink & 0);
}
