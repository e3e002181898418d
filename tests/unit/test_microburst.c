/* SPDX-License-Identifier: BSD-3-Clause */
/* Microburst windows (shared/microburst.c): window and capacity arithmetic, the histogram buckets,
 * the workers' rings (publish, read, overrun) and the primary's sums: the windows of two workers
 * add up, a steady stream at 30 % gives no burst, the same average in 3 ms bursts gives a peak of
 * 100 % and one event per second (the rest counted), at the burst's start time. No EAL. */
#include <stdlib.h>
#include <string.h>

#include "spanbox/microburst.h"
#include "tap.h"

#define HZ 1000000000ull            /* 1 cycle = 1 ns */
#define RT0 1700000000000000000ull  /* CLOCK_REALTIME at TSC T0: a whole second */
#define T0 5000000000ull            /* window 5000 (1 ms windows) starts at RT0 */

struct ev {
	unsigned int dir;
	uint64_t start_ns;
	uint32_t peak, windows;
};
static struct ev evs[64];
static unsigned int nev;

static void on_event(void *ctx, unsigned int dir, uint64_t start_ns, uint32_t peak, uint32_t windows)
{
	(void)ctx;
	if (nev < 64)
		evs[nev++] = (struct ev){dir, start_ns, peak, windows};
}

static struct sbx_mb_agg *agg_for;
static struct sbx_mb_port_shm *out_for;
static void to_agg(void *ctx, const struct sbx_mb_entry *e)
{
	(void)ctx;
	sbx_mb_agg_add(agg_for, out_for, e);
}

static void arithmetic(void)
{
	check(sbx_mb_window_cycles(2600000000ull, 1000) == 2600000, "1 ms at 2.6 GHz: 2600000 cycles");
	check(sbx_mb_window_cycles(1000, 100) == 1, "a window is at least one cycle");
	check(sbx_mb_capacity(1000, 1000) == 125000, "1 Gb/s holds 125000 B in 1 ms");
	check(sbx_mb_capacity(10000, 100) == 125000, "10 Gb/s holds 125000 B in 100 us");
	check(sbx_mb_capacity(0, 1000) == 0, "no speed: no capacity");
	check(sbx_mb_util_ppm(100000, 125000) == 800000, "100000 B of 125000: 80 %%");
	check(sbx_mb_util_ppm(250000, 125000) == 2000000, "twice the capacity: 200 %% (a virtual port)");
	check(sbx_mb_util_ppm(5, 0) == 0, "no capacity: 0");
	check(sbx_mb_bucket(0) == 0 && sbx_mb_bucket(100000) == 0 && sbx_mb_bucket(100001) == 1 &&
		      sbx_mb_bucket(800000) == 7 && sbx_mb_bucket(1000000) == 9 && sbx_mb_bucket(1000001) == 10,
	      "buckets: le 0.1 holds 0..10 %%, le 1 up to 100 %%, +Inf above");
	check(!strcmp(sbx_mb_bucket_le(0), "0.1") && !strcmp(sbx_mb_bucket_le(9), "1") &&
		      !strcmp(sbx_mb_bucket_le(10), "+Inf"), "le labels 0.1, 1, +Inf");
}

static void rings(void)
{
	static struct sbx_mb_ring r[SBX_MAX_PORTS];
	struct sbx_mb_worker w;
	struct sbx_mb_agg a;
	struct sbx_mb_port_shm o;
	uint64_t tail = 0, lost = 0;
	unsigned int n;

	memset(r, 0, sizeof(r));
	sbx_mb_worker_init(&w, r, 2, 1000, 1000500);
	check(w.idx == 1000 && w.next == 1001000, "worker starts in window 1000, ends at TSC 1001000");
	sbx_mb_add(&w, 0, SBX_MB_RX, 1500);
	sbx_mb_add(&w, 1, SBX_MB_TX, 1500);
	sbx_mb_add(&w, 1, SBX_MB_TX, 64);
	sbx_mb_tick(&w, 1000999);
	check(r[0].head == 0 && r[1].head == 0, "nothing published within the window");
	sbx_mb_tick(&w, 1003100);
	check(r[0].head == 1 && r[0].e[0].idx == 1000 && r[0].e[0].bytes[0] == 1500 && r[0].e[0].bytes[1] == 0 &&
		      r[1].head == 1 && r[1].e[0].bytes[1] == 1564, "the finished window published per port");
	check(w.idx == 1003 && w.next == 1004000 && w.bytes[0][0] == 0, "next window 1003 (idle windows skipped)");
	sbx_mb_tick(&w, 1004100);
	check(r[0].head == 1, "an empty window is not published");

	memset(&o, 0, sizeof(o));
	sbx_mb_agg_init(&a, 1, 80, 1000000, 999000, RT0); /* 1 us windows at 1 MHz: 1 cycle each */
	agg_for = &a;
	out_for = &o;
	for (unsigned int i = 0; i < 300; i++) {
		r[2].e[r[2].head % SBX_MB_RING] = (struct sbx_mb_entry){.idx = 999001 + i, .bytes = {i, 0}};
		r[2].head++;
	}
	n = sbx_mb_ring_read(&r[2], &tail, &lost, to_agg, NULL);
	check(n == 256 && lost == 44 && tail == 300, "a lapped ring: the 256 newest read, 44 counted lost (%u, %llu)",
	      n, (unsigned long long)lost);
	check(sbx_mb_ring_read(&r[2], &tail, &lost, to_agg, NULL) == 0, "nothing new: nothing read");
}

/* Feed @p secs seconds of 1 ms windows from two workers (half of each window's bytes each). */
static void feed(struct sbx_mb_agg *a, struct sbx_mb_port_shm *o, unsigned int secs, uint64_t (*bytes)(uint64_t))
{
	uint64_t first = T0 / 1000000, last = first + secs * 1000u;

	for (uint64_t idx = first; idx < last; idx++) {
		uint64_t b = bytes(idx - first);
		struct sbx_mb_entry e0 = {.idx = idx, .bytes = {b / 2, b / 4}};
		struct sbx_mb_entry e1 = {.idx = idx, .bytes = {b - b / 2, 0}};

		if (b) {
			sbx_mb_agg_add(a, o, &e0);
			sbx_mb_agg_add(a, o, &e1);
		}
		if (idx >= first + 20) /* final 20 windows behind, as the primary does */
			sbx_mb_agg_finish(a, o, idx - 20, 125000, on_event, NULL);
	}
	sbx_mb_agg_finish(a, o, last + 1, 125000, on_event, NULL); /* the second after ends the last */
}

static uint64_t steady(uint64_t i)
{
	(void)i;
	return 37500; /* 30 % of 125000 B every 1 ms */
}

static uint64_t bursty(uint64_t i)
{
	return i % 10 < 3 ? 125000 : 0; /* 3 ms at 100 % every 10 ms: 30 % on average */
}

static void aggregate(void)
{
	struct sbx_mb_agg *a = calloc(1, sizeof(*a));
	struct sbx_mb_port_shm o;
	struct sbx_mb_entry late = {.idx = T0 / 1000000, .bytes = {1, 1}};

	memset(&o, 0, sizeof(o));
	nev = 0;
	sbx_mb_agg_init(a, 1000, 80, HZ, T0 - 1, RT0 - 1);
	check(sbx_mb_window_ns(a, T0 / 1000000) == RT0 && sbx_mb_window_ns(a, T0 / 1000000 + 1500) == RT0 + 1500000000ull,
	      "window 5000 starts at RT0, window 6500 1.5 s later");
	feed(a, &o, 3, steady);
	check(nev == 0 && o.bursts[0] == 0 && o.events == 0, "steady 30 %%: no burst, no event");
	check(o.peak_ppm[0] == 300000 && o.avg_ppm[0] == 300000, "steady: the last second's peak and average 30 %% "
	      "(%u, %u ppm)", o.peak_ppm[0], o.avg_ppm[0]);
	check(o.peak_ppm[1] == 75000 && o.avg_ppm[1] == 75000, "tx: a quarter of the bytes of one worker: 7.5 %%");
	check(o.hist[0][2] == 3000 && o.hist[0][0] == 2 && o.windows == 3002 && o.sum_ppm[0] == 3000ull * 300000,
	      "histogram: 3000 windows in le 0.3, 2 empty ones of the 4th second in le 0.1");
	check(o.second == RT0 / 1000000000 + 2, "published: the third second");
	sbx_mb_agg_add(a, &o, &late);
	check(o.late_windows == 1, "a window already final is counted late, not added");
	free(a);

	a = calloc(1, sizeof(*a));
	memset(&o, 0, sizeof(o));
	nev = 0;
	sbx_mb_agg_init(a, 1000, 80, HZ, T0 - 1, RT0 - 1);
	feed(a, &o, 3, bursty);
	check(o.peak_ppm[0] == 1000000 && o.avg_ppm[0] == 300000, "bursts: peak 100 %%, average 30 %% (%u, %u)",
	      o.peak_ppm[0], o.avg_ppm[0]);
	check(o.bursts[0] == 300 && o.bursts[1] == 0, "300 bursts in 3 s on rx, none on tx (at 25 %%): %llu",
	      (unsigned long long)o.bursts[0]);
	check(nev == 3 && o.events == 3 && o.events_suppressed == 297, "one event per second, 297 counted (%u)", nev);
	check(nev == 3 && evs[0].start_ns == RT0 && evs[1].start_ns == RT0 + 1000000000ull &&
		      evs[2].start_ns == RT0 + 2000000000ull && evs[0].peak == 1000000 && evs[0].windows == 3 &&
		      evs[0].dir == SBX_MB_RX, "events at each second's first burst: start, 100 %%, 3 windows, rx");
	check(o.hist[0][9] == 900 && o.hist[0][0] == 2102, "histogram: 900 windows le 1, the empty ones le 0.1");
	free(a);

	/* no speed known: bytes only */
	a = calloc(1, sizeof(*a));
	memset(&o, 0, sizeof(o));
	nev = 0;
	sbx_mb_agg_init(a, 1000, 80, HZ, T0 - 1, RT0 - 1);
	for (uint64_t idx = T0 / 1000000; idx < T0 / 1000000 + 1500; idx++) {
		struct sbx_mb_entry e = {.idx = idx, .bytes = {idx % 10 == 0 ? 200000 : 0, 0}};

		sbx_mb_agg_add(a, &o, &e);
	}
	sbx_mb_agg_finish(a, &o, T0 / 1000000 + 1500, 0, on_event, NULL);
	check(nev == 0 && o.windows == 0 && o.peak_bytes[0] == 200000 && o.peak_ppm[0] == 0,
	      "no speed: peak bytes kept, no utilisation, histogram or event");
	/* 1500 windows published at once (as after a stall): the 476 beyond done + SBX_MB_ACC late when
	 * added; finishing 1500 at once walks the last 1024 only: the 477 before them late too */
	check(o.late_windows == 476 + 477, "a stall: windows out of reach counted late (%llu)",
	      (unsigned long long)o.late_windows);
	free(a);
}

int main(void)
{
	arithmetic();
	rings();
	aggregate();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
