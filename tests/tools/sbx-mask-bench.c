/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sbx-mask-bench [ITERATIONS]: what masking (issue #26, docs/CONFIG.md "mask") costs per mirror
 * copy, side by side with the same session unmasked (run by bench/mask_micro.sh).
 *
 * The worker's own sbx_mirror_copy_burst() (secondary/mirror.c, bursts of 32 as the worker makes
 * them, then the free the destination's TX completion does) of an ERSPAN II session over IPv4, on
 * one Ethernet / IPv4 / TCP frame per size, as spanbox-worker --calibrate measures it; per size:
 *   copy           strategy copy, no mask
 *   copy+mask      strategy copy, mask {from l4, offset 20, length 64}: a TCP payload's first 64 B
 *   copy+mask-all  strategy copy, mask {from l4, offset 20, length 9600}: the whole TCP payload
 *   adaptive       strategy adaptive (threshold 512: bigger frames shared), no mask
 *   adaptive+mask  the same with the first mask: a masked session never shares, so above 512 B
 *                  this is a copy and its mask instead of a share
 * TSC cycles per copy: ROUNDS rounds (9) of ITERATIONS copies each (default 200000, rounded up to
 * bursts), the five configurations interleaved round by round so that a disturbance (other
 * processes on a shared machine) hits them alike; printed: the minimum of the rounds (the least
 * disturbed) and, in parentheses, the median. Own EAL: in memory, no hugepages, no PCI, lcore 0
 * (pin the process with taskset).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include "spanbox/shm.h"
#include "../../secondary/mirror.h"

#define BURST 32
#define ROUNDS 9
#define PREFIX "sbxmaskbench"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Cycles per copy of @p m by session config @p mc in one round of @p total copies. */
static double cost(struct sbx_mirror_engine *e, const struct sbx_mirror_cfg *mc, struct rte_mbuf *m, uint64_t total)
{
	static const uint8_t port_mac[6] = { 0x02, 0, 0, 0, 0, 1 };
	struct sbx_mirror_counters st = { 0 };
	struct rte_mbuf *in[BURST], *out[BURST];
	struct sbx_mirror_rt *rt = &e->s[0];
	uint16_t idx[BURST];
	uint64_t seq = 0, n, t0;

	for (n = 0; n < BURST; n++)
		in[n] = m;
	sbx_mirror_session_init(rt, mc, port_mac, &st, &seq);
	t0 = rte_rdtsc_precise();
	for (n = 0; n < total; n += BURST)
		rte_pktmbuf_free_bulk(out, sbx_mirror_copy_burst(e, rt, in, BURST, 0, SBX_DIR_RX, 0, out, idx));
	t0 = rte_rdtsc_precise() - t0;
	if (mc->mask.from != SBX_MASK_OFF && st.masked == 0)
		fprintf(stderr, "sbx-mask-bench: the mask wrote nothing\n");
	return (double)t0 / (double)total;
}

/* An Ethernet / IPv4 / TCP frame of @p len bytes (>= 54) in a new mbuf of @p mp. */
static struct rte_mbuf *tcp_frame(struct rte_mempool *mp, uint32_t len)
{
	static const uint8_t hdr[54] = {
		0x02, 0, 0, 0, 0, 0xb, 0x02, 0, 0, 0, 0, 0xa, 0x08, 0x00,
		0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0, 192, 0, 2, 1, 198, 51, 100, 7,
		0x9c, 0x40, 0x01, 0xbb, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0,
	};
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *d = m ? (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len) : NULL;

	if (d == NULL)
		return NULL;
	memset(d, 0xa5, len);
	memcpy(d, hdr, sizeof(hdr));
	d[16] = (uint8_t)((len - 14) >> 8);
	d[17] = (uint8_t)(len - 14);
	return m;
}

int main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 64, 128, 256, 512, 1024, 1518, 4096, 9000 };
	char *eal[] = { argv[0], "--no-pci", "--no-huge", "--no-shconf", "-m", "256", "-l", "0",
			"--file-prefix=" PREFIX, "--no-telemetry", "--log-level=lib.eal:error", NULL };
	uint64_t iters = argc > 1 ? strtoull(argv[1], NULL, 10) : 200000, total;
	struct sbx_mirror_cfg mc = {
		.id = 1, .sample = 1, .encap = SBX_ENCAP_ERSPAN2, .ip_version = 4, .ttl = 64, .df = true,
		.src_ip = { 192, 0, 2, 1 }, .dst_ip = { 192, 0, 2, 2 }, .dst_mac = { 0x02, 0, 0, 0, 0, 2 },
		.copy_threshold = 512,
	};
	const struct sbx_mask_cfg m64 = { .from = SBX_MASK_L4, .offset = 20, .length = 64, .pattern = 0 },
				  mall = { .from = SBX_MASK_L4, .offset = 20, .length = SBX_MASK_LEN_MAX, .pattern = 0 };
	struct rte_mempool *mp, *mp_ind;
	struct sbx_mirror_engine *e;
	char dir[SBX_PATH_LEN];

	if (argc > 2 || iters == 0 || iters > 1000000000) {
		fprintf(stderr, "usage: sbx-mask-bench [ITERATIONS 1..1000000000]\n");
		return 2;
	}
	total = (iters + BURST - 1) / BURST * BURST;
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "sbx-mask-bench: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	mp = rte_pktmbuf_pool_create("sbx_maskbench", 4095, 256, 0, 9000 + RTE_PKTMBUF_HEADROOM, (int)rte_socket_id());
	mp_ind = rte_pktmbuf_pool_create("sbx_maskbench_ind", 4095, 256, 0, 0, (int)rte_socket_id());
	e = mp && mp_ind ? calloc(1, sizeof(*e)) : NULL;
	if (e == NULL) {
		fprintf(stderr, "sbx-mask-bench: pools: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	e->mp = mp;
	e->mp_ind = mp_ind;
	printf("# cycles per ERSPAN II copy (TSC %.2f GHz), minimum (median) of %d interleaved rounds of %" PRIu64
	       " copies, mask from l4 +20\n", rte_get_tsc_hz() / 1e9, ROUNDS, total);
	printf("| frame B | copy | copy+mask 64 B | copy+mask all | adaptive | adaptive+mask 64 B |\n");
	printf("|---|---|---|---|---|---|\n");
	for (unsigned int k = 0; k < RTE_DIM(sizes); k++) {
		const uint8_t strat[5] = { SBX_COPY_COPY, SBX_COPY_COPY, SBX_COPY_COPY, SBX_COPY_ADAPTIVE, SBX_COPY_ADAPTIVE };
		const struct sbx_mask_cfg *mask[5] = { NULL, &m64, &mall, NULL, &m64 };
		struct rte_mbuf *m = tcp_frame(mp, sizes[k]);
		double c[5][ROUNDS];

		if (m == NULL)
			return 1;
		for (int r = 0; r < ROUNDS; r++)
			for (int j = 0; j < 5; j++) {
				mc.copy_strategy = strat[j];
				mc.mask = mask[j] ? *mask[j] : (struct sbx_mask_cfg){ 0 };
				c[j][r] = cost(e, &mc, m, total);
			}
		printf("| %u |", sizes[k]);
		for (int j = 0; j < 5; j++) {
			qsort(c[j], ROUNDS, sizeof(double), cmp_double);
			printf(" %.1f (%.1f) |", c[j][0], c[j][ROUNDS / 2]);
		}
		printf("\n");
		rte_pktmbuf_free(m);
	}
	e->s[0].cfg = NULL;
	free(e);
	rte_mempool_free(mp);
	rte_mempool_free(mp_ind);
	rte_eal_cleanup();
	sbx_runtime_dir(PREFIX, dir, sizeof(dir));
	rmdir(dir);
	return 0;
}
