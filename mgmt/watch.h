/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What mgmt sees of the appliance over time, not in one read of the memzone: cycles per packet over
 * a recent window, and the run-time problems /health and /status report (a worker "running" whose
 * heartbeat or loops counter stands still, a pool whose mbufs drain with no explanation).
 *
 * Threads: mgmt's main thread samples (mgmt_watch_tick(), every 100 ms tick); the HTTP thread reads
 * (the other functions). The samples are guarded by a mutex of this module.
 */
#ifndef SBX_MGMT_WATCH_H
#define SBX_MGMT_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "spanbox/shm.h"

#define MGMT_WATCH_PERIOD_NS 1000000000ULL /**< one sample of counters and pools a second */
#define MGMT_CPP_WINDOW_S 10               /**< cycles_per_packet covers the last 10 s at most */
#define MGMT_CPP_MIN_FRAMES 1000           /**< fewer frames in the window: cycles_per_packet null */
#define MGMT_POOL_BAD_SAMPLES 3            /**< samples in a row a pool must look drained: 3 s */
#define MGMT_STALE_MIN_MS 200              /**< a running worker's counters may stand still this long */
#define MGMT_STALE_MAX_MS 1000             /**< ... and at most this long before it is a problem */

/**
 * Take the samples that are due from @p shm (the live memzone): the loops counter of every worker
 * at each call, and once a second each worker's busy cycles and packets and each pool's audit.
 * Main thread only; cheap when nothing is due.
 */
void mgmt_watch_tick(const struct sbx_shm *shm);

/** Cycles per packet of one worker over the recent window (mgmt_watch_cpp()). */
struct mgmt_cpp_window {
	bool have_window; /**< a sample at least 0.5 s old exists; else the fields below are 0 */
	bool valid;       /**< frames >= MGMT_CPP_MIN_FRAMES: cpp means something */
	double cpp;       /**< busy TSC cycles / packets over the window (when valid) */
	double window_s;  /**< seconds the window spans (up to MGMT_CPP_WINDOW_S, plus one tick) */
	uint64_t frames;  /**< packets the worker handled in the window */
};

/**
 * Cycles per packet of worker @p w from the oldest sample of the last MGMT_CPP_WINDOW_S seconds
 * to the counters now. A counter that went back (a new primary) empties the window.
 */
void mgmt_watch_cpp(const struct sbx_shm *shm, uint16_t w, struct mgmt_cpp_window *out);

/**
 * The ms a running worker's heartbeat or loops counter may stand still before it is a problem:
 * workers.hang_timeout_ms / 2 within MGMT_STALE_MIN_MS..MGMT_STALE_MAX_MS, and at least
 * workers.idle_sleep_us + 100 ms (a worker writes both before each idle sleep).
 */
uint64_t mgmt_watch_stale_ms(const struct sbx_shm *shm);

/**
 * The run-time problems now, as {"kind", "message"} objects: kind "worker" (with "worker": its id)
 * for a worker in state failed (crash_limit; with "queues": the [{port, queue}] nobody polls since)
 * and for a worker in state running whose heartbeat or loops counter is older than
 * mgmt_watch_stale_ms() (the message says when the primary sees it not scheduled), kind "pool" for a
 * pool whose audit left more mbufs unexplained than its plan allows in flight (TX descriptors,
 * mirror queues, bursts, bridge rings, one burst per worker crash) on MGMT_POOL_BAD_SAMPLES samples
 * in a row.
 * @param shm  the live memzone, or NULL (no problems: the appliance is down, /health says so).
 * @return a new array (possibly empty) the caller owns, NULL when out of memory.
 */
cJSON *mgmt_watch_problems(const struct sbx_shm *shm);

#endif
