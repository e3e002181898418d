/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sbx-mb-micro [BURSTS] [BURST] [ROUNDS]: the cost of the microburst accounting of a worker
 * (include/spanbox/microburst.h) in isolation, run by bench/microburst.sh beside its whole-path
 * runs (whose noise on a shared VM is larger than the cost). Two loops over BURSTS simulated bursts
 * of BURST frames each, alternating ROUNDS times: "off" does what forward_burst() and the loop do
 * per burst with the counters (rx/tx packets and bytes of two ports in the worker's slot, one TSC
 * read per loop), "on" the same plus what the accounting adds (sbx_mb_add on RX and TX, sbx_mb_tick
 * with the loop's TSC, publishing 1 ms windows into real rings). Prints the minimum cycles per burst
 * of each and the difference per burst and per frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "spanbox/microburst.h"

struct ctr {
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
};

static struct sbx_mb_ring rings[SBX_MAX_PORTS];
static struct ctr port[SBX_MAX_PORTS];

/* One simulated loop per burst: the counters of forward_burst(), the loop's TSC read; with @on the
 * accounting. noinline: both variants are the same function, the compiler cannot merge work away. */
static __attribute__((noinline)) uint64_t run(struct sbx_mb_worker *w, uint64_t bursts, uint16_t burst, int on)
{
	uint64_t t0 = __rdtsc(), sink = 0;

	for (uint64_t i = 0; i < bursts; i++) {
		uint16_t in = (uint16_t)(i & 1), out = (uint16_t)(in ^ 1);
		uint64_t bytes = (uint64_t)burst * 64 + (i & 7);
		uint64_t now;

		port[in].rx_pkts += burst;
		port[in].rx_bytes += bytes;
		if (on)
			sbx_mb_add(w, in, SBX_MB_RX, bytes);
		port[out].tx_pkts += burst;
		port[out].tx_bytes += bytes;
		if (on)
			sbx_mb_add(w, out, SBX_MB_TX, bytes);
		now = __rdtsc();
		sink += now;
		if (on)
			sbx_mb_tick(w, now);
		__asm__ volatile("" ::: "memory");
	}
	(void)sink;
	return __rdtsc() - t0;
}

/* TSC Hz from /proc/cpuinfo's "cpu MHz" (the window length only) */
static uint64_t tsc_hz(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];
	double mhz = 2000;

	while (f != NULL && fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu MHz : %lf", &mhz) == 1)
			break;
	if (f != NULL)
		fclose(f);
	return (uint64_t)(mhz * 1e6);
}

int main(int argc, char **argv)
{
	uint64_t bursts = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000000;
	uint16_t burst = argc > 2 ? (uint16_t)atoi(argv[2]) : 32;
	int rounds = argc > 3 ? atoi(argv[3]) : 7;
	double best[2] = {1e300, 1e300};
	struct sbx_mb_worker w;

	if (bursts == 0 || burst == 0 || rounds <= 0) {
		fprintf(stderr, "usage: sbx-mb-micro [BURSTS>0] [BURST>0] [ROUNDS>0]\n");
		return 2;
	}
	sbx_mb_worker_init(&w, rings, 2, sbx_mb_window_cycles(tsc_hz(), 1000), __rdtsc());
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < 2; k++) {
			int on = (r & 1) ? !k : k; /* alternate which runs first */
			double c = (double)run(&w, bursts, burst, on) / (double)bursts;

			if (c < best[on])
				best[on] = c;
		}
	printf("off %.2f cycles/burst, on %.2f cycles/burst: %+.2f cycles per burst, %+.3f cycles per frame "
	       "(burst %u, %llu bursts x %d rounds, minimum; windows published %llu)\n",
	       best[0], best[1], best[1] - best[0], (best[1] - best[0]) / burst, burst,
	       (unsigned long long)bursts, rounds, (unsigned long long)(rings[0].head + rings[1].head));
	return 0;
}
