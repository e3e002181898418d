/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spanbox-worker --calibrate: measure, on this machine, what a mirror copy costs by deep copy and
 * by sharing, for frame sizes from 64 B to 9000 B, and recommend copy.threshold: the largest size
 * at which the deep copy is still not dearer than sharing.
 *
 * Both paths are the worker's own code, not a model of it: sbx_mirror_copy_burst() (make_copy in
 * mirror.c, in bursts of 32 as the worker makes them) of an ERSPAN II session with copy strategy
 * "copy" (header + frame written into one new mbuf, or rte_pktmbuf_copy + header prepend for
 * frames bigger than one mbuf) and "share" (header mbuf + an indirect mbuf attached to the frame,
 * whose refcount updates are atomic read-modify-writes),
 * each followed by the free the destination's TX completion does. Runs as its own small EAL
 * instance (in memory, no hugepages, --no-pci), so it needs no running appliance. Sizes are
 * frame bytes, costs TSC cycles.
 */
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_launch.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

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

#define CAL_BURST 32 /* copies per sbx_mirror_copy_burst() call: the default workers.burst */

/* measure() of the session @p mc (kept by pointer while it runs). */
static double measure_cfg(struct sbx_mirror_engine *e, struct rte_mbuf *m, const struct sbx_mirror_cfg *mc,
			  unsigned int iters)
{
	static const uint8_t port_mac[6] = { 0x02, 0, 0, 0, 0, 1 };
	struct sbx_mirror_counters st = { 0 };
	uint64_t seq = 0;
	struct sbx_mirror_rt *rt = &e->s[0];
	struct rte_mbuf *burst[CAL_BURST], *out[CAL_BURST];
	uint16_t idx[CAL_BURST];
	uint64_t total = ((uint64_t)iters + CAL_BURST - 1) / CAL_BURST * CAL_BURST, i;
	double r[5];
	int round;

	for (i = 0; i < CAL_BURST; i++)
		burst[i] = m;
	sbx_mirror_session_init(rt, mc, port_mac, &st, &seq);
	for (round = 0; round < 5; round++) {
		uint64_t t0 = rte_rdtsc_precise();

		for (i = 0; i < total; i += CAL_BURST)
			rte_pktmbuf_free_bulk(out, sbx_mirror_copy_burst(e, rt, burst, CAL_BURST, 0, SBX_DIR_RX, 0,
									  out, idx));
		r[round] = (double)(rte_rdtsc_precise() - t0) / (double)total;
	}
	rt->cfg = NULL; /* mc is the caller's */
	return median(r, 5);
}

/*
 * Cycles per copy of frame m by one strategy (SBX_COPY_COPY or SBX_COPY_SHARE), averaged over
 * iters (rounded up to bursts), median of 5 rounds: the worker's own sbx_mirror_copy_burst() of
 * CAL_BURST frames for an ERSPAN II session over IPv4 (a 50 B header: 14 + 20 + 8 + 8), one bulk
 * allocation and one header template per burst as in the worker, then free, as the destination's
 * TX completes it.
 */
static double measure(struct sbx_mirror_engine *e, struct rte_mbuf *m, uint8_t strategy, unsigned int iters)
{
	struct sbx_mirror_cfg mc = {
		.id = 1, .sample = 1, .encap = SBX_ENCAP_ERSPAN2, .ip_version = 4, .ttl = 64, .df = true,
		.src_ip = { 192, 0, 2, 1 }, .dst_ip = { 192, 0, 2, 2 }, .dst_mac = { 0x02, 0, 0, 0, 0, 2 },
		.copy_strategy = strategy,
	};

	return measure_cfg(e, m, &mc, iters);
}

/* The EAL, pools and engine of a calibration (@p what names it in errors): as the primary's
 * pools, a pktmbuf pool of 9000 B data room and an indirect-mbuf pool. @return the engine (e->mp,
 * e->mp_ind set), NULL when it could not start (said on stderr). */
static struct sbx_mirror_engine *cal_start(const char *prog, const char *what)
{
	char *eal[] = { (char *)prog, "--no-pci", "--no-huge", "--no-shconf", "-m", "256", "-l", "0",
			"--file-prefix=sbxcalibrate", "--no-telemetry", "--log-level=lib.eal:error", NULL };
	uint32_t room = 9000 + RTE_PKTMBUF_HEADROOM;
	struct rte_mempool *mp, *mp_ind;
	struct sbx_mirror_engine *e;

	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "spanbox-worker %s: EAL init failed: %s\n", what, rte_strerror(rte_errno));
		return NULL;
	}
	mp = rte_pktmbuf_pool_create("sbx_calibrate", 4095, 256, 0, (uint16_t)room, (int)rte_socket_id());
	mp_ind = rte_pktmbuf_pool_create("sbx_calibrate_ind", 4095, 256, 0, 0, (int)rte_socket_id());
	e = mp && mp_ind ? calloc(1, sizeof(*e)) : NULL;
	if (e == NULL) {
		fprintf(stderr, "spanbox-worker %s: pool or memory: %s\n", what, rte_strerror(rte_errno));
		rte_mempool_free(mp);
		rte_mempool_free(mp_ind);
		rte_eal_cleanup();
		return NULL;
	}
	e->mp = mp;
	e->mp_ind = mp_ind;
	return e;
}

/* Undo cal_start(). */
static void cal_end(struct sbx_mirror_engine *e)
{
	char dir[SBX_PATH_LEN];

	rte_mempool_free(e->mp);
	rte_mempool_free(e->mp_ind);
	free(e);
	rte_eal_cleanup();
	sbx_runtime_dir("sbxcalibrate", dir, sizeof(dir));
	rmdir(dir); /* EAL leaves the (empty) runtime directory behind */
}

int sbx_calibrate(const char *prog, unsigned int iters)
{
	uint32_t threshold = 0;
	bool copy_wins = true; /* copy has been the cheaper one at every size so far */
	struct sbx_mirror_engine *e = cal_start(prog, "--calibrate");
	unsigned int k;

	if (e == NULL)
		return 1;
	printf("# mirror copy cost on this machine (TSC %.2f GHz), cycles per copy, median of 5 x %u\n",
	       rte_get_tsc_hz() / 1e9, iters);
	printf("%8s %10s %10s %8s\n", "bytes", "copy", "share", "better");
	for (k = 0; k < RTE_DIM(sizes); k++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(e->mp);
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
	cal_end(e);
	return 0;
}

int sbx_calibrate_timestamps(const char *prog, unsigned int iters)
{
	static const uint32_t ts_sizes[] = { 64, 512, 1518 };
	static const char *const fmt_name[] = { "none", "arista64", "metamako" };
	struct sbx_mirror_engine *e = cal_start(prog, "--calibrate --timestamps");
	unsigned int k, enc, st, f;

	if (e == NULL)
		return 1;
	printf("# timestamp cost per mirror copy on this machine (TSC %.2f GHz), cycles per copy (the worker's "
	       "sbx_mirror_copy_burst, bursts of %d, then freed), median of 5 x %u\n",
	       rte_get_tsc_hz() / 1e9, CAL_BURST, iters);
	printf("%8s %8s %6s %10s %10s %10s %10s %10s\n", "bytes", "encap", "copy", fmt_name[0], fmt_name[1],
	       fmt_name[2], "+arista64", "+metamako");
	for (k = 0; k < RTE_DIM(ts_sizes); k++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(e->mp);
		uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)ts_sizes[k]);

		memset(d, 0xa5, ts_sizes[k]);
		memcpy(d, (uint8_t[]){ 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45 }, 15);
		for (enc = 0; enc < 2; enc++)
			for (st = 0; st < 2; st++) {
				struct sbx_mirror_cfg mc = {
					.id = 1, .sample = 1, .encap = enc ? SBX_ENCAP_ERSPAN2 : SBX_ENCAP_SPAN,
					.ip_version = 4, .ttl = 64, .df = true, .src_ip = { 192, 0, 2, 1 },
					.dst_ip = { 192, 0, 2, 2 }, .dst_mac = { 0x02, 0, 0, 0, 0, 2 },
					.copy_strategy = st ? SBX_COPY_SHARE : SBX_COPY_COPY,
				};
				double c[3];

				for (f = 0; f < 3; f++) {
					mc.ts_format = (uint8_t)f;
					c[f] = measure_cfg(e, m, &mc, iters);
				}
				printf("%8u %8s %6s %10.1f %10.1f %10.1f %+10.1f %+10.1f\n", ts_sizes[k],
				       enc ? "erspan2" : "span", st ? "share" : "copy", c[0], c[1], c[2], c[1] - c[0],
				       c[2] - c[0]);
			}
		rte_pktmbuf_free(m);
	}
	cal_end(e);
	return 0;
}

/*
 * spanbox-worker --calibrate --cross-core: what sharing a buffer costs when another core frees the
 * share (NOTES.md section 5, seed report 5: the refcount cache line bounces between cores), against
 * the same work on one core, and the deep copy beside it. A "burst" is XC_BURST frames of 64 B that
 * the producer (lcore 0, the first CPU of the process) holds as a worker holds its forwarded frames;
 * per frame it makes one item, and the item is released either by the producer itself right after
 * the burst (one core) or by the consumer (lcore 1, the second CPU), to which the producer passes
 * each burst through an SP/SC ring (two cores). Items:
 *  - refcount: rte_mbuf_refcnt_update(+1) of the frame, released by -1: the bare atomic;
 *  - attach:   an indirect mbuf attached to the frame (what the one-segment share does), freed;
 *  - share:    the worker's own sbx_mirror_copy_one(), ERSPAN II, strategy share (header mbuf +
 *              indirect mbuf), freed;
 *  - copy:     the same, strategy copy (one new mbuf with header and frame), freed.
 * Cycles per frame: elapsed TSC / frames (for two cores the pipeline's rate), and for two cores the
 * busy cycles of each side (elapsed minus the time the producer waited for room in the ring, or
 * the consumer found it empty). Median of 5 rounds of @p frames frames.
 */
#define XC_BURST 32

enum xc_item { XC_REF, XC_ATTACH, XC_SHARE, XC_COPY };

struct xc_run {
	enum xc_item item;
	struct rte_ring *ring;
	volatile int stop;      /* the producer is done: drain and return */
	uint64_t idle;          /* consumer: cycles it found the ring empty */
	uint64_t n;             /* consumer: items released */
};

static struct sbx_mirror_engine *xc_e;

static inline void xc_release(enum xc_item item, struct rte_mbuf *m)
{
	if (item == XC_REF)
		rte_mbuf_refcnt_update(m, -1);
	else
		rte_pktmbuf_free(m);
}

static inline struct rte_mbuf *xc_make(enum xc_item item, struct rte_mbuf *m)
{
	struct rte_mbuf *mi;

	switch (item) {
	case XC_REF:
		rte_mbuf_refcnt_update(m, 1);
		return m;
	case XC_ATTACH:
		mi = rte_pktmbuf_alloc(xc_e->mp);
		if (mi != NULL)
			rte_pktmbuf_attach(mi, m);
		return mi;
	default:
		return sbx_mirror_copy_one(xc_e, &xc_e->s[0], m, 0, SBX_DIR_RX, 0);
	}
}

static int xc_consumer(void *arg)
{
	struct xc_run *r = arg;
	struct rte_mbuf *b[XC_BURST];

	for (;;) {
		uint64_t t0 = rte_rdtsc();
		unsigned int n = rte_ring_sc_dequeue_burst(r->ring, (void **)b, XC_BURST, NULL), i;

		if (n == 0) {
			if (r->stop && rte_ring_empty(r->ring))
				return 0;
			r->idle += rte_rdtsc() - t0;
			continue;
		}
		for (i = 0; i < n; i++)
			xc_release(r->item, b[i]);
		r->n += n;
	}
}

/* One round: @p frames items made on this lcore, released here (@p cross false) or on lcore 1.
 * @return elapsed cycles; @p wait receives the producer's cycles waiting for ring room. */
static uint64_t xc_round(struct xc_run *r, struct rte_mbuf **orig, unsigned int frames, bool cross, uint64_t *wait)
{
	struct rte_mbuf *b[XC_BURST];
	unsigned int done, i, n;
	uint64_t t0, w = 0;

	if (cross) {
		r->stop = 0;
		r->idle = 0;
		r->n = 0;
		rte_eal_remote_launch(xc_consumer, r, rte_get_next_lcore(rte_get_main_lcore(), 1, 0));
	}
	t0 = rte_rdtsc_precise();
	for (done = 0; done < frames; done += XC_BURST) {
		for (i = 0, n = 0; i < XC_BURST; i++)
			if ((b[n] = xc_make(r->item, orig[i])) != NULL)
				n++;
		if (!cross) {
			for (i = 0; i < n; i++)
				xc_release(r->item, b[i]);
			continue;
		}
		for (i = 0; i < n;) {
			uint64_t tw = rte_rdtsc();
			unsigned int k = rte_ring_sp_enqueue_burst(r->ring, (void **)(b + i), n - i, NULL);

			if (k == 0)
				w += rte_rdtsc() - tw;
			i += k;
		}
	}
	if (cross) {
		r->stop = 1;
		rte_eal_wait_lcore(rte_get_next_lcore(rte_get_main_lcore(), 1, 0));
	}
	*wait = w;
	return rte_rdtsc_precise() - t0;
}

int sbx_calibrate_cross_core(const char *prog, unsigned int frames)
{
	static const char *const names[] = { "refcount +1/-1", "attach (indirect mbuf)", "share (worker, ERSPAN II)",
					     "copy (worker, ERSPAN II)" };
	static const uint8_t port_mac[6] = { 0x02, 0, 0, 0, 0, 1 };
	char lcores[64], *eal[] = { (char *)prog, "--no-pci", "--no-huge", "--no-shconf", "-m", "256", "--lcores",
				    lcores, "--file-prefix=sbxcalibrate", "--no-telemetry",
				    "--log-level=lib.eal:error", NULL };
	struct sbx_mirror_cfg mc = {
		.id = 1, .sample = 1, .encap = SBX_ENCAP_ERSPAN2, .ip_version = 4, .ttl = 64, .df = true,
		.src_ip = { 192, 0, 2, 1 }, .dst_ip = { 192, 0, 2, 2 }, .dst_mac = { 0x02, 0, 0, 0, 0, 2 },
	};
	struct sbx_mirror_counters st = { 0 };
	struct rte_mbuf *orig[XC_BURST];
	struct xc_run r = { 0 };
	char dir[SBX_PATH_LEN];
	int cpu[2], nc = 0, c, rc = 1;
	struct rte_mempool *mp = NULL;
	uint64_t seq = 0;
	cpu_set_t set;
	unsigned int k, i;

	frames = frames > UINT_MAX - XC_BURST ? UINT_MAX / XC_BURST * XC_BURST
					      : (frames + XC_BURST - 1) / XC_BURST * XC_BURST;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (c = 0; c < CPU_SETSIZE && nc < 2; c++)
			if (CPU_ISSET(c, &set))
				cpu[nc++] = c;
	if (nc < 2) {
		fprintf(stderr, "spanbox-worker --calibrate --cross-core: needs two CPUs, this process may use %d\n", nc);
		return 1;
	}
	snprintf(lcores, sizeof(lcores), "0@%d,1@%d", cpu[0], cpu[1]);
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "spanbox-worker --calibrate --cross-core: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	mp = rte_pktmbuf_pool_create("sbx_calibrate", 8191, 256, 0, 2048 + RTE_PKTMBUF_HEADROOM, (int)rte_socket_id());
	r.ring = rte_ring_create("sbx_calibrate_xc", 1024, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	xc_e = calloc(1, sizeof(*xc_e));
	if (mp == NULL || r.ring == NULL || xc_e == NULL) {
		fprintf(stderr, "spanbox-worker --calibrate --cross-core: pool, ring or memory: %s\n",
			rte_strerror(rte_errno));
		goto out;
	}
	xc_e->mp = mp;
	xc_e->mp_ind = NULL; /* one pool: the placements are compared, not the pools */
	for (i = 0; i < XC_BURST; i++) {
		orig[i] = rte_pktmbuf_alloc(mp);
		memset(rte_pktmbuf_append(orig[i], 64), 0xa5, 64);
	}
	printf("# cross-core cost of a shared buffer (TSC %.2f GHz): lcore 0 on CPU %d makes one item per 64 B frame,\n"
	       "# bursts of %u, released on the same lcore or on lcore 1 on CPU %d; cycles per frame, median of 5 x %u\n",
	       rte_get_tsc_hz() / 1e9, cpu[0], XC_BURST, cpu[1], frames);
	printf("%-28s %10s %10s %10s %10s\n", "item", "one core", "two cores", "producer", "consumer");
	for (k = 0; k < RTE_DIM(names); k++) {
		double one[5], two[5], prod[5], cons[5];
		int round;

		r.item = (enum xc_item)k;
		mc.copy_strategy = k == XC_COPY ? SBX_COPY_COPY : SBX_COPY_SHARE;
		sbx_mirror_session_init(&xc_e->s[0], &mc, port_mac, &st, &seq);
		for (round = 0; round < 5; round++) {
			uint64_t w, el;

			one[round] = (double)xc_round(&r, orig, frames, false, &w) / frames;
			el = xc_round(&r, orig, frames, true, &w);
			two[round] = (double)el / frames;
			prod[round] = (double)(el - w) / frames;
			cons[round] = (double)(el - RTE_MIN(r.idle, el)) / frames;
		}
		printf("%-28s %10.1f %10.1f %10.1f %10.1f\n", names[k], median(one, 5), median(two, 5), median(prod, 5),
		       median(cons, 5));
	}
	printf("# one core: make and release on lcore 0; two cores: elapsed per frame with lcore 1 releasing,\n"
	       "# producer / consumer: busy cycles per frame of each side (elapsed minus waiting)\n");
	for (i = 0; i < XC_BURST; i++)
		rte_pktmbuf_free(orig[i]);
	rc = 0;
out:
	if (xc_e != NULL)
		xc_e->s[0].cfg = NULL; /* mc lives on this stack only */
	free(xc_e);
	rte_ring_free(r.ring);
	rte_mempool_free(mp);
	rte_eal_cleanup();
	sbx_runtime_dir("sbxcalibrate", dir, sizeof(dir));
	rmdir(dir);
	return rc;
}
