/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timestamps on mirror copies (shared/timestamp.c): the AVSP 64-bit header and the Metamako
 * trailer byte for byte (layouts of Wireshark's packet-avsp.c and packet-metamako.c, written
 * out by hand here), read back by the ingress parsers of shared/ts_in.c; the TSC -> CLOCK_REALTIME clock on a simulated TSC whose real
 * rate differs from the nominal one, and on this machine's TSC against CLOCK_REALTIME (the
 * accuracy is printed). No EAL.
 */
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "spanbox/timestamp.h"
#include "spanbox/ts_in.h"
#include "tap.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

static uint64_t raw_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC_RAW);
}

static void test_avsp(void)
{
	/* 1764645000 s = 0x692e5888, 123456789 ns = 0x075bcd15 */
	static const uint8_t want[14] = {0xd2, 0x8b, 0x00, 0x01, 0x01, 0x10, 0x69, 0x2e, 0x58, 0x88,
					 0x07, 0x5b, 0xcd, 0x15};
	const uint64_t t = 1764645000ull * 1000000000ull + 123456789;
	uint8_t f[12 + 14 + 2 + 2]; /* MACs, the header, the EtherType it moved, a guard */
	struct sbx_ts_in_info ti = {0};

	memset(f, 0xee, sizeof(f));
	check(sbx_ts_avsp64_write(f + 12, t) == 14 && !memcmp(f + 12, want, 14) && f[26] == 0xee,
	      "avsp64: EtherType d28b, subtype 1, version 0x0110 (64-bit UTC), seconds, ns; 14 bytes, no more");
	f[26] = 0x08, f[27] = 0x00;
	/* read back by the product's own ingress parser (shared/ts_in.c) */
	check(sbx_ts_in_avsp(f, 28, 0, t, &ti) == SBX_TS_IN_OK && ti.ns == t && ti.cut_front == 14 &&
		      ti.version == 0x0110, "avsp64 reads back through sbx_ts_in_avsp()");
	check(sbx_ts_in_avsp(f, 12 + 13, 0, t, &ti) == SBX_TS_IN_MALFORMED_short, "avsp64: 13 bytes are too few");
	f[12 + 3] = 2;
	check(sbx_ts_in_avsp(f, 28, 0, t, &ti) == SBX_TS_IN_MALFORMED_subtype,
	      "avsp: another subtype is not a timestamp");
	f[12 + 3] = 1;
	f[12] = 0x08;
	check(sbx_ts_in_avsp(f, 28, 0, t, &ti) == SBX_TS_IN_ABSENT, "not EtherType d28b: no header");
}

static void test_metamako(void)
{
	static const uint8_t want[16] = {0, 0, 0, 0, 0x69, 0x2e, 0x58, 0x88, 0x3b, 0x9a, 0xc9, 0xff,
					 0x00, 0x12, 0x34, 0x07};
	const uint64_t t = 1764645000ull * 1000000000ull + 999999999;
	uint8_t f[14 + 16 + 2]; /* an Ethernet header, the trailer, a guard */
	struct sbx_ts_in_info ti = {0};

	memset(f, 0xee, sizeof(f));
	check(sbx_ts_metamako_write(f + 14, t, 0x1234, 7) == 16 && !memcmp(f + 14, want, 16) && f[13] == 0xee &&
		      f[30] == 0xee,
	      "metamako: orig FCS 0, seconds, ns, flags 0, device 0x1234, port 7; 16 bytes");
	/* read back by the product's own ingress parser (shared/ts_in.c) */
	check(sbx_ts_in_metamako(f, 30, 30, false, 1, t, &ti) == SBX_TS_IN_OK && ti.ns == t && ti.cut_back == 16 &&
		      ti.flags == 0 && ti.device == 0x1234 && ti.src_port == 7,
	      "metamako reads back from its end through sbx_ts_in_metamako()");
	f[14 + 8] = 0x3c; /* ns 0x3c9ac9ff >= 1e9 */
	check(sbx_ts_in_metamako(f, 30, 30, false, 1, t, &ti) == SBX_TS_IN_MALFORMED_implausible,
	      "metamako: ns >= 1e9 is no trailer");
}

/* A TSC that really runs at 2.5 GHz, its nominal rate 2.49 GHz (DPDK's 10 MHz rounding can be
 * that far off): the clock is read every 100 ms against an exact CLOCK_REALTIME. */
static void test_clock_sim(void)
{
	const uint64_t real_hz = 2500000000ull, nominal = 2490000000ull, t0 = 1764645000ull * 1000000000ull;
	struct sbx_ts_clock c;
	uint64_t tsc = 1000, worst = 0, prev = 0;
	bool mono = true;
	int k;

	sbx_ts_clock_init(&c, nominal, tsc, t0, 100);
	check(!sbx_ts_clock_due(&c, tsc + nominal / 100 - 1) && sbx_ts_clock_due(&c, tsc + nominal / 100),
	      "first reading due after 10 ms of nominal cycles");
	/* run 1 s: a burst every 10 us, a reading when due */
	for (k = 1; k <= 100000; k++) {
		uint64_t t = tsc + (uint64_t)k * (real_hz / 100000), real = t0 + (uint64_t)k * 10000, ns, d;

		if (sbx_ts_clock_due(&c, t))
			sbx_ts_clock_resync(&c, t, real);
		ns = sbx_ts_clock_mono(&c, t);
		mono &= ns >= prev;
		prev = ns;
		d = ns > real ? ns - real : real - ns;
		if (k > 2000 && d > worst) /* after the first 20 ms */
			worst = d;
	}
	check(c.resyncs == 10 || c.resyncs == 11, "readings every 100 ms after the first at 10 ms (%lu)",
	      (unsigned long)c.resyncs);
	check(mono, "times never go back, the first reading (conversion ahead by 40 us) included");
	check(worst <= 2, "after the first reading the rate is measured: at most 2 ns off (%lu ns)",
	      (unsigned long)worst);
	check(c.max_err_ns <= 2, "max_err_ns leaves out the first reading (%lu ns)", (unsigned long)c.max_err_ns);
	/* without resync the nominal rate drifts 4 ms a second */
	sbx_ts_clock_init(&c, nominal, tsc, t0, 100);
	check(sbx_ts_clock_ns(&c, tsc + real_hz) > t0 + 1004016064ull - 2 &&
		      sbx_ts_clock_ns(&c, tsc + real_hz) < t0 + 1004016064ull + 2,
	      "the nominal rate alone: 1 s reads as 1.004016 s (what the resync corrects)");
	/* a reading that finds the conversion ahead: the time holds, never goes back */
	sbx_ts_clock_init(&c, real_hz, 0, t0, 100);
	prev = sbx_ts_clock_mono(&c, real_hz / 10);         /* t0 + 100 ms */
	sbx_ts_clock_resync(&c, real_hz / 10, t0 + 99000000); /* CLOCK_REALTIME says 99 ms */
	/* the rate is now 99 ms per 100 ms of cycles: 2 ms of cycles later it is 99 + 1.98 ms */
	check(sbx_ts_clock_mono(&c, real_hz / 10 + 2500) == prev &&
		      sbx_ts_clock_mono(&c, real_hz / 10 + real_hz / 500) + 2 >= t0 + 100980000ull &&
		      sbx_ts_clock_mono(&c, real_hz / 10 + real_hz / 500) <= t0 + 100980000ull + 2,
	      "conversion 1 ms ahead: held at its last value, then CLOCK_REALTIME's time at the measured rate");
	check(c.last_err_ns >= 1000000 - 2 && c.last_err_ns <= 1000000 + 2, "the error of that reading: +1 ms (%ld)",
	      (long)c.last_err_ns);
}

/* The conversion's expected error (ns, conversion - wall clock) @p elapsed cycles after a reading,
 * the last interval @p len cycles long with wall-clock steps @p prev, @p cur steps since the
 * reading (test_clock_real below); @p len 0: no interval measured yet. */
static int64_t step_error(int64_t prev, int64_t cur, uint64_t elapsed, uint64_t len)
{
	return (len ? (int64_t)((double)prev * (double)elapsed / (double)len) : 0) - cur;
}

/* This machine's TSC against CLOCK_REALTIME for 1 s, read as the worker does (midpoint of two
 * rdtsc around clock_gettime), nominal rate from a 20 ms estimate against CLOCK_MONOTONIC_RAW
 * rounded to 10 MHz as DPDK does.
 *
 * CLOCK_REALTIME is also watched against CLOCK_MONOTONIC_RAW between samples (1 ms apart): a move
 * of their difference by more than 50 us is a step of the wall clock (settimeofday by a time
 * agent; NTP's slew is at most 500 ppm, 0.5 us a ms). Seen on a VM whose agent stepped it +500 us
 * every 100 ms. A clock re-read every SBX_TS_RESYNC_MS cannot follow a step before its next
 * reading, and the rate it measured over an interval with a step S runs ahead by S over the next
 * interval: its expected error at a sample, and at the next reading, is frac x S_prev - S_cur
 * (frac: the part of the last interval's length elapsed since the reading, S_prev the steps of
 * that interval, S_cur those since the reading). The check is the error minus that within 100 us:
 * with no step, the 100 us bound alone. */
static void test_clock_real(void)
{
	struct sbx_ts_clock c;
	uint64_t a, b, r0, hz, worst = 0, worst_read = 0, t_end, n = 0, steps = 0, stepped = 0;
	uint64_t rd_tsc = 0, rd_len = 0;
	int64_t off, last_off, cur = 0, prev = 0;
	struct timespec pause = {0, 20000000};

	a = __rdtsc();
	r0 = raw_ns();
	nanosleep(&pause, NULL);
	b = __rdtsc();
	hz = (b - a) * 1000000000ull / (raw_ns() - r0);
	hz = (hz + 5000000) / 10000000 * 10000000;
	a = raw_ns();
	r0 = realtime_ns();
	last_off = (int64_t)(r0 - (a + raw_ns()) / 2);
	a = __rdtsc();
	sbx_ts_clock_init(&c, hz, a, r0, SBX_TS_RESYNC_MS);
	rd_tsc = a;
	t_end = r0 + 1000000000ull;
	for (;;) {
		uint64_t w1 = raw_ns(), t1 = __rdtsc(), real = realtime_ns(), t2 = __rdtsc(), w2 = raw_ns();
		uint64_t mid = t1 + (t2 - t1) / 2, d;
		int64_t step, e, want;

		/* the wall clock against the raw one, from readings bracketed within 2 us only (a
		 * preemption between them would read as a step and its return) */
		if (w2 - w1 < 2000) {
			off = (int64_t)(real - (w1 + (w2 - w1) / 2));
			step = off - last_off;
			last_off = off;
			if (step > 50000 || step < -50000) {
				steps++;
				stepped += (uint64_t)(step < 0 ? -step : step);
				cur += step;
			}
		}
		if (real > t_end)
			break;
		if (sbx_ts_clock_due(&c, mid)) {
			e = sbx_ts_clock_resync(&c, mid, real);
			want = step_error(prev, cur, mid - rd_tsc, rd_len);
			d = (uint64_t)(e > want ? e - want : want - e);
			if (c.resyncs > 1 && d > worst_read) /* the first interval ran on the nominal rate */
				worst_read = d;
			prev = cur;
			cur = 0;
			rd_len = mid - rd_tsc;
			rd_tsc = mid;
			continue;
		}
		e = (int64_t)(sbx_ts_clock_ns(&c, mid) - real);
		want = step_error(prev, cur, mid - rd_tsc, rd_len);
		d = (uint64_t)(e > want ? e - want : want - e);
		if (c.resyncs >= 2 && t2 - t1 < hz / 1000000 && d > worst) /* readings of under 1 us only */
			worst = d;
		n++;
		pause.tv_nsec = 1000000;
		nanosleep(&pause, NULL);
	}
	printf("# this machine: TSC nominal %lu Hz; after the first 10 ms, conversion vs CLOCK_REALTIME: max "
	       "|error - expected| %lu ns over %lu samples; at the readings (every %u ms) max %lu ns (%lu beyond the "
	       "expected), last %ld ns; CLOCK_REALTIME stepped %lu times, %lu us in all\n",
	       (unsigned long)hz, (unsigned long)worst, (unsigned long)n, SBX_TS_RESYNC_MS,
	       (unsigned long)c.max_err_ns, (unsigned long)worst_read, (long)c.last_err_ns, (unsigned long)steps,
	       (unsigned long)(stepped / 1000));
	/* bound: 100 us leaves room for a loaded machine (5 agents on 2 CPUs) and NTP slewing; the
	 * nominal rate alone would be up to 5 MHz / 2 GHz x 100 ms = 250 us off */
	check(c.resyncs >= 9 && worst < 100000 && worst_read < 100000,
	      "real TSC: within 100 us of CLOCK_REALTIME after its steps (max %lu ns, at readings %lu ns; %lu steps "
	      "of the wall clock seen)", (unsigned long)worst, (unsigned long)worst_read, (unsigned long)steps);
}

int main(void)
{
	test_avsp();
	test_metamako();
	test_clock_sim();
	test_clock_real();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
