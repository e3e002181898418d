/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spanbox-worker --calibrate: measure, on this machine, what a mirror copy costs by deep copy and
 * by sharing, for frame sizes from 64 B to 9000 B, and recommend copy.threshold: the largest size
 * at which the deep copy is still not dearer than sharing.
 *
 * Both paths are the worker's own code, not a model of it: sbx_mirror_copy_one() (make_copy in
 * mirror.c) of an ERSPAN II session with copy strategy "copy" (header + frame written into one
 * new mbuf, or rte_pktmbuf_copy + header prepend for frames bigger than one mbuf) and "share"
 * (header mbuf + rte_pktmbuf_clone + chain, whose refcount updates are atomic read-modify-writes),
 * each followed by the free the destination's TX completion does. Runs as its own small EAL
 * instance (in memory, no hugepages, --no-pci), so it needs no running appliance. Sizes are
 * frame bytes, costs TSC cycles.
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
#include "mirror.h"

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

/*
 * Cycles per copy of frame m by one strategy (SBX_COPY_COPY or SBX_COPY_SHARE), averaged over
 * iters, median of 5 rounds: the worker's own sbx_mirror_copy_one() for an ERSPAN II session over
 * IPv4 (a 50 B header: 14 + 20 + 8 + 8), then free, as the destination's TX completes it.
 */
static double measure(struct sbx_mirror_engine *e, struct rte_mbuf *m, uint8_t strategy, unsigned int iters)
{
	static const uint8_t port_mac[6] = { 0x02, 0, 0, 0, 0, 1 };
	struct sbx_mirror_cfg mc = {
		.id = 1, .sample = 1, .encap = SBX_ENCAP_ERSPAN2, .ip_version = 4, .ttl = 64, .df = true,
		.src_ip = { 192, 0, 2, 1 }, .dst_ip = { 192, 0, 2, 2 }, .dst_mac = { 0x02, 0, 0, 0, 0, 2 },
		.copy_strategy = strategy,
	};
	struct sbx_mirror_counters st = { 0 };
	uint64_t seq = 0;
	struct sbx_mirror_rt *rt = &e->s[0];
	double r[5];
	int round;

	sbx_mirror_session_init(rt, &mc, port_mac, &st, &seq);
	for (round = 0; round < 5; round++) {
		uint64_t t0 = rte_rdtsc_precise();
		unsigned int i;

		for (i = 0; i < iters; i++)
			rte_pktmbuf_free(sbx_mirror_copy_one(e, rt, m, 0, SBX_DIR_RX, 0));
		r[round] = (double)(rte_rdtsc_precise() - t0) / iters;
	}
	rt->cfg = NULL; /* mc lives on this stack only */
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
	struct sbx_mirror_engine *e;
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
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		fprintf(stderr, "spanbox-worker --calibrate: out of memory\n");
		rte_mempool_free(mp);
		rte_eal_cleanup();
		return 1;
	}
	e->mp = mp;
	printf("# mirror copy cost on this machine (TSC %.2f GHz), cycles per copy, median of 5 x %u\n",
	       rte_get_tsc_hz() / 1e9, iters);
	printf("%8s %10s %10s %8s\n", "bytes", "copy", "share", "better");
	for (k = 0; k < RTE_DIM(sizes); k++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		double c, s;

		memset(rte_pktmbuf_append(m, (uint16_t)sizes[k]), 0xa5, sizes[k]);
		c = measure(e, m, SBX_COPY_COPY, iters);
		s = measure(e, m, SBX_COPY_SHARE, iters);
		printf("%8u %10.1f %10.1f %8s\n", sizes[k], c, s, c <= s ? "copy" : "share");
		copy_wins = copy_wins && c <= s;
		if (copy_wins)
			threshold = sizes[k];
		rte_pktmbuf_free(m);
	}
	printf("recommended copy.threshold: %u\n", threshold);
	free(e);
	rte_mempool_free(mp);
	rte_eal_cleanup();
	sbx_runtime_dir("sbxcalibrate", dir, sizeof(dir));
	rmdir(dir); /* EAL leaves the (empty) runtime directory behind */
	return 0;
}
