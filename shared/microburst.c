/* SPDX-License-Identifier: BSD-3-Clause */
/* Microburst windows: the workers' rings and the primary's sums (microburst.h, issue #26). */
#include <string.h>

#include "spanbox/microburst.h"

uint64_t sbx_mb_window_cycles(uint64_t tsc_hz, uint32_t window_us)
{
	uint64_t c = (uint64_t)((unsigned __int128)tsc_hz * window_us / 1000000u);

	return c ? c : 1;
}

uint64_t sbx_mb_capacity(uint32_t speed_mbps, uint32_t window_us)
{
	/* Mb/s x us = bits; / 8 = bytes */
	return (uint64_t)speed_mbps * window_us / 8;
}

uint32_t sbx_mb_util_ppm(uint64_t bytes, uint64_t capacity)
{
	unsigned __int128 v;

	if (capacity == 0)
		return 0;
	v = (unsigned __int128)bytes * 1000000u / capacity;
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

unsigned int sbx_mb_bucket(uint32_t ppm)
{
	unsigned int b;

	if (ppm > 1000000)
		return SBX_MB_BUCKETS - 1;
	b = (ppm + 99999) / 100000; /* 0 and 1..100000 -> bucket 0 (le 0.1) */
	return b ? b - 1 : 0;
}

const char *sbx_mb_bucket_le(unsigned int b)
{
	static const char *const le[SBX_MB_BUCKETS] = {"0.1", "0.2", "0.3", "0.4", "0.5", "0.6",
						       "0.7", "0.8", "0.9", "1", "+Inf"};

	return b < SBX_MB_BUCKETS ? le[b] : "+Inf";
}

void sbx_mb_worker_init(struct sbx_mb_worker *w, struct sbx_mb_ring *rings, uint16_t nb_ports,
			uint64_t win_cycles, uint64_t tsc)
{
	memset(w, 0, sizeof(*w));
	w->rings = rings;
	w->nb_ports = nb_ports > SBX_MAX_PORTS ? SBX_MAX_PORTS : nb_ports;
	w->win_cycles = rings != NULL ? win_cycles : 0;
	if (w->win_cycles == 0) {
		w->next = UINT64_MAX;
		return;
	}
	w->idx = tsc / w->win_cycles;
	w->next = (w->idx + 1) * w->win_cycles;
}

void sbx_mb_roll(struct sbx_mb_worker *w, uint64_t tsc)
{
	uint16_t p;

	if (w->win_cycles == 0)
		return;
	for (p = 0; p < w->nb_ports; p++) {
		struct sbx_mb_ring *r = &w->rings[p];
		struct sbx_mb_entry *e;
		uint64_t h;

		if ((w->bytes[p][0] | w->bytes[p][1]) == 0)
			continue;
		h = r->head; /* only this worker writes it */
		e = &r->e[h % SBX_MB_RING];
		e->idx = w->idx;
		e->bytes[0] = w->bytes[p][0];
		e->bytes[1] = w->bytes[p][1];
		__atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
		w->bytes[p][0] = w->bytes[p][1] = 0;
	}
	w->idx = tsc / w->win_cycles;
	w->next = (w->idx + 1) * w->win_cycles;
}

unsigned int sbx_mb_ring_read(const struct sbx_mb_ring *r, uint64_t *tail, uint64_t *lost,
			      void (*fn)(void *ctx, const struct sbx_mb_entry *e), void *ctx)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE), t = *tail;
	unsigned int n = 0;

	if (head < t) /* a ring we never saw (a fresh memzone): start over */
		t = 0;
	if (head - t > SBX_MB_RING) {
		*lost += head - t - SBX_MB_RING;
		t = head - SBX_MB_RING;
	}
	for (; t < head; t++) {
		struct sbx_mb_entry e = r->e[t % SBX_MB_RING];

		/* the writer may have lapped us while we copied: then the copy may be torn */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&r->head, __ATOMIC_RELAXED) - t > SBX_MB_RING) {
			(*lost)++;
			continue;
		}
		fn(ctx, &e);
		n++;
	}
	*tail = t;
	return n;
}

uint64_t sbx_mb_lag_windows(uint32_t window_us)
{
	uint64_t l = window_us ? (SBX_MB_LAG_US + window_us - 1) / window_us : 4;

	return l < 4 ? 4 : l;
}

void sbx_mb_agg_init(struct sbx_mb_agg *a, uint32_t window_us, uint32_t threshold_pct, uint64_t tsc_hz,
		     uint64_t tsc, uint64_t rt_ns)
{
	memset(a, 0, sizeof(*a));
	a->window_us = window_us;
	a->threshold_ppm = threshold_pct * 10000u;
	a->tsc_hz = tsc_hz;
	a->win_cycles = sbx_mb_window_cycles(tsc_hz, window_us);
	a->tsc0 = tsc;
	a->rt0_ns = rt_ns;
	a->done = tsc / a->win_cycles;
	for (unsigned int i = 0; i < SBX_MB_ACC; i++)
		a->acc[i].idx = UINT64_MAX;
}

uint64_t sbx_mb_window_ns(const struct sbx_mb_agg *a, uint64_t idx)
{
	__int128 d = (__int128)((unsigned __int128)idx * a->win_cycles) - (__int128)a->tsc0;

	return (uint64_t)((__int128)a->rt0_ns + d * 1000000000 / (__int128)a->tsc_hz);
}

void sbx_mb_agg_add(struct sbx_mb_agg *a, struct sbx_mb_port_shm *out, const struct sbx_mb_entry *e)
{
	struct sbx_mb_entry *s;

	if (e->idx <= a->done || e->idx - a->done > SBX_MB_ACC) {
		out->late_windows++;
		return;
	}
	s = &a->acc[e->idx % SBX_MB_ACC];
	if (s->idx != e->idx) {
		s->idx = e->idx;
		s->bytes[0] = s->bytes[1] = 0;
	}
	s->bytes[0] += e->bytes[0];
	s->bytes[1] += e->bytes[1];
}

/* A run of windows over the threshold ended: count it, and write its event unless the port had one
 * in the second the run started. */
static void run_end(struct sbx_mb_agg *a, struct sbx_mb_port_shm *out, unsigned int d, sbx_mb_event_fn fn,
		    void *ctx)
{
	uint64_t start = sbx_mb_window_ns(a, a->run_start[d]), sec = start / 1000000000u;

	out->bursts[d]++;
	if (out->events && sec == a->last_event_sec) {
		out->events_suppressed++;
	} else {
		a->last_event_sec = sec;
		out->events++;
		if (fn != NULL)
			fn(ctx, d, start, a->run_peak[d], a->run_len[d]);
	}
	a->run_len[d] = 0;
}

/* The second a->sec is over: its bursts end, its peak and average are published. */
static void second_end(struct sbx_mb_agg *a, struct sbx_mb_port_shm *out, uint64_t capacity, sbx_mb_event_fn fn,
		       void *ctx)
{
	for (unsigned int d = 0; d < 2; d++) {
		if (a->run_len[d])
			run_end(a, out, d, fn, ctx);
		out->peak_bytes[d] = a->sec_peak_bytes[d];
		out->peak_start_ns[d] = sbx_mb_window_ns(a, a->sec_peak_idx[d]);
		out->peak_ppm[d] = sbx_mb_util_ppm(a->sec_peak_bytes[d], capacity);
		out->avg_ppm[d] = sbx_mb_util_ppm(a->sec_bytes[d], capacity * (a->sec_windows ? a->sec_windows : 1));
		a->sec_bytes[d] = a->sec_peak_bytes[d] = 0;
		a->sec_peak_idx[d] = 0;
	}
	__atomic_store_n(&out->second, a->sec, __ATOMIC_RELEASE);
	a->sec_windows = 0;
}

void sbx_mb_agg_finish(struct sbx_mb_agg *a, struct sbx_mb_port_shm *out, uint64_t upto, uint64_t capacity,
		       sbx_mb_event_fn fn, void *ctx)
{
	uint64_t idx;

	/* after a stall of the caller longer than SBX_MB_ACC windows: only the last SBX_MB_ACC are
	 * walked (bounded work); the older ones holding bytes are counted late, not added */
	if (upto > a->done + SBX_MB_ACC) {
		uint64_t from = upto - SBX_MB_ACC;

		for (unsigned int i = 0; i < SBX_MB_ACC; i++)
			if (a->acc[i].idx != UINT64_MAX && a->acc[i].idx <= from) {
				out->late_windows++;
				a->acc[i].idx = UINT64_MAX;
			}
		a->done = from;
	}
	for (idx = a->done + 1; idx <= upto && idx > a->done; idx++) {
		struct sbx_mb_entry *s = &a->acc[idx % SBX_MB_ACC];
		uint64_t b[2] = {0, 0}, sec = sbx_mb_window_ns(a, idx) / 1000000000u;

		if (s->idx == idx) {
			b[0] = s->bytes[0];
			b[1] = s->bytes[1];
		}
		s->idx = UINT64_MAX;
		if (a->sec != 0 && sec != a->sec)
			second_end(a, out, capacity, fn, ctx);
		a->sec = sec;
		for (unsigned int d = 0; d < 2; d++) {
			uint32_t ppm;

			a->sec_bytes[d] += b[d];
			if (b[d] > a->sec_peak_bytes[d] || a->sec_windows == 0) {
				a->sec_peak_bytes[d] = b[d];
				a->sec_peak_idx[d] = idx;
			}
			if (capacity == 0)
				continue;
			ppm = sbx_mb_util_ppm(b[d], capacity);
			out->hist[d][sbx_mb_bucket(ppm)]++;
			out->sum_ppm[d] += ppm;
			if (ppm >= a->threshold_ppm && b[d] > 0) {
				if (a->run_len[d] == 0) {
					a->run_start[d] = idx;
					a->run_peak[d] = 0;
				}
				a->run_len[d]++;
				if (ppm > a->run_peak[d])
					a->run_peak[d] = ppm;
			} else if (a->run_len[d]) {
				run_end(a, out, d, fn, ctx);
			}
		}
		if (capacity)
			out->windows++;
		a->sec_windows++;
		a->done = idx;
	}
}
