/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spanbox-worker --calibrate: measure, on this machine, what a mirror copy costs by deep copy and
 * by sharing, for frame sizes from 64 B to 9000 B, and recommend copy.threshold: the largest size
 * at which the deep copy is still not dearer than sharing.
 *
 * Both paths are the worker's own (make_copy in mirror.c): "copy" is rte_pktmbuf_copy + header
 * prepend + free; "share" is header mbuf alloc + rte_pktmbuf_clone + chain + free, whose refcount
 * updates are atomic read-modify-writes. Runs as its own small EAL instance (in memory, no
 * hugepages, --no-pci), so it needs no running appliance. Sizes are frame bytes, costs TSC cycles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include "spanbox/shm.h"
#include "calibrate.h"

#define SBX_CAL_HDR 50 /* bytes of an ERSPAN II header over IPv4: 14 + 20 + 8 + 8 */

static const uint32_t sizes[] = { 64, 128, 256, 384, 512, 768, 1024, 1518, 4096, 9000 };

/* Median of n doubles (sorts in place). */
static double median(double *v, int n)
{
	int i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[n / 2];
}

/* Cycles per copy of frame m by one strategy, averaged over iters, median of 5 rounds. */
static double measure(struct rte_mempool *mp, struct rte_mbuf *m, bool share, unsigned int iters)
{
	double r[5];
	int round;

	for (round = 0; round < 5; round++) {
		uint64_t t0 = rte_rdtsc_precise();
		unsigned int i;

		for (i = 0; i < iters; i++) {
			struct rte_mbuf *c;

			if (!share) {
				c = rte_pktmbuf_copy(m, mp, 0, UINT32_MAX);
				if (c != NULL && rte_pktmbuf_prepend(c, SBX_CAL_HDR) != NULL)
					*rte_pktmbuf_mtod(c, volatile uint8_t *) = 0x45;
			} else {
				struct rte_mbuf *h = rte_pktmbuf_alloc(mp);
				struct rte_mbuf *cl = rte_pktmbuf_clone(m, mp);

				c = h;
				if (h != NULL && cl != NULL) {
					*(volatile uint8_t *)rte_pktmbuf_append(h, SBX_CAL_HDR) = 0x45;
					rte_pktmbuf_chain(h, cl);
				} else {
					rte_pktmbuf_free(cl);
				}
			}
			rte_pktmbuf_free(c);
		}
		r[round] = (double)(rte_rdtsc_precise() - t0) / iters;
	}
	return median(r, 5);
}

int sbx_calibrate(const char *prog, unsigned int iters)
{
	char *eal[] = { (char *)prog, "--no-pci", "--no-huge", "--no-shconf", "-m", "256", "-l", "0",
			"--file-prefix=sbxcalibrate", "--no-telemetry", "--log-level=lib.eal:error", NULL };
	char dir[SBX_PATH_LEN];
	uint32_t threshold = 0, room = 9000 + RTE_PKTMBUF_HEADROOM;
	bool copy_wins = true; /* copy has been the cheaper one at every size so far */
	struct rte_mempool *mp;
	unsigned int k;

	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "spanbox-worker --calibrate: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	mp = rte_pktmbuf_pool_create("sbx_calibrate", 4095, 256, 0, (uint16_t)room, (int)rte_socket_id());
	if (mp == NULL) {
		fprintf(stderr, "spanbox-worker --calibrate: pool: %s\n", rte_strerror(rte_errno));
		rte_eal_cleanup();
		return 1;
	}
	printf("# mirror copy cost on this machine (TSC %.2f GHz), cycles per copy, median of 5 x %u\n",
	       rte_get_tsc_hz() / 1e9, iters);
	printf("%8s %10s %10s %8s\n", "bytes", "copy", "share", "better");
	for (k = 0; k < RTE_DIM(sizes); k++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		double c, s;

		memset(rte_pktmbuf_append(m, (uint16_t)sizes[k]), 0xa5, sizes[k]);
		c = measure(mp, m, false, iters);
		s = measure(mp, m, true, iters);
		printf("%8u %10.1f %10.1f %8s\n", sizes[k], c, s, c <= s ? "copy" : "share");
		copy_wins = copy_wins && c <= s;
		if (copy_wins)
			threshold = sizes[k];
		rte_pktmbuf_free(m);
	}
	printf("recommended copy.threshold: %u\n", threshold);
	rte_mempool_free(mp);
	rte_eal_cleanup();
	sbx_runtime_dir("sbxcalibrate", dir, sizeof(dir));
	rmdir(dir); /* EAL leaves the (empty) runtime directory behind */
	return 0;
}
