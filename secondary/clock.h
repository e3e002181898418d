/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The worker's TSC -> CLOCK_REALTIME time of a burst, one mechanism for every stage that puts a
 * time on what leaves the worker: the mirror engine (ERSPAN III headers, AVSP / Metamako
 * timestamps) and flow metering (IPFIX flowStart/EndMilliseconds). A struct sbx_ts_clock
 * (include/spanbox/timestamp.h) re-read against CLOCK_REALTIME when due (every SBX_TS_RESYNC_MS),
 * so DPDK's nominal TSC rate (rounded to 10 MHz: up to 0.25 % off, 9 s an hour) does not drift.
 */
#ifndef SPANBOX_SECONDARY_CLOCK_H
#define SPANBOX_SECONDARY_CLOCK_H

#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>

#include "spanbox/shm.h"
#include "spanbox/timestamp.h"

/** Start @p c now (nominal rate: DPDK's rte_get_tsc_hz()), re-read every SBX_TS_RESYNC_MS. */
static inline void sbx_worker_clock_start(struct sbx_ts_clock *c)
{
	sbx_ts_clock_init(c, rte_get_tsc_hz(), rte_rdtsc(), sbx_realtime_ns(), SBX_TS_RESYNC_MS);
}

/* A new reading: CLOCK_REALTIME between two TSC reads, at their midpoint. */
static __rte_noinline void sbx_worker_clock_resync(struct sbx_ts_clock *c)
{
	uint64_t a = rte_rdtsc(), real = sbx_realtime_ns(), b = rte_rdtsc();

	sbx_ts_clock_resync(c, a + (b - a) / 2, real);
}

/**
 * CLOCK_REALTIME ns (UTC) of TSC value @p tsc (a burst's), monotonic: a 64 x 64 -> 128-bit multiply;
 * a reading of CLOCK_REALTIME first when one is due (every SBX_TS_RESYNC_MS: ~1 us then).
 */
static inline uint64_t sbx_worker_clock_ns(struct sbx_ts_clock *c, uint64_t tsc)
{
	if (unlikely(sbx_ts_clock_due(c, tsc))) {
		sbx_worker_clock_resync(c);
		if (tsc < c->tsc0) /* the reading came after the burst's TSC */
			tsc = c->tsc0;
	}
	return sbx_ts_clock_mono(c, tsc);
}

#endif
