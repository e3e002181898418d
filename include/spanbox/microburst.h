/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Microburst detection (issue #26, docs/MGMT.md "Microbursts"): per port and direction, the bytes
 * of each window of microburst.window_us, summed over the workers, as utilisation of the port's
 * speed; per second the peak window and the average, a histogram of the windows' utilisation, and a
 * `microburst` event when windows pass microburst.threshold_pct.
 *
 * Three parts, all here without DPDK (the unit test runs them without EAL):
 *  - the worker's side (struct sbx_mb_worker): bytes of the current window per port and direction,
 *    added once per burst; at the first loop after the window ended (one compare per loop against
 *    a TSC the loop reads anyway) the non-zero windows go into the worker's ring of each port;
 *  - the rings (struct sbx_mb_ring, in the memzone): one writer (the worker of the slot), one
 *    reader (the primary), windows by index (TSC / window cycles: every process of the machine
 *    reads the same TSC, so the workers' windows of one index are the same time);
 *  - the primary's side (struct sbx_mb_agg): the windows of every worker summed by index; a window
 *    is final SBX_MB_LAG_US after it ended (a worker publishes it at its next loop); then its
 *    utilisation goes into the histogram and the second's peak, and runs of windows over the
 *    threshold become events, one per port and second at most (the others are counted).
 */
#ifndef SPANBOX_MICROBURST_H
#define SPANBOX_MICROBURST_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

#define SBX_MB_RING 256      /**< windows one ring holds (a power of two) */
#define SBX_MB_ACC 1024      /**< windows the primary keeps open per port (a power of two) */
#define SBX_MB_BUCKETS 11    /**< histogram buckets: utilisation <= 10 %, 20 %, ... 100 %, and above */
#define SBX_MB_LAG_US 20000  /**< a window is final this long after its end (at least 4 windows) */
#define SBX_MB_RX 0          /**< direction index: received on the port */
#define SBX_MB_TX 1          /**< direction index: sent out of it (forwarded frames and mirror copies) */

/** One published window of one worker and port. */
struct sbx_mb_entry {
	uint64_t idx;      /**< window index: TSC / window cycles */
	uint64_t bytes[2]; /**< frame bytes received [SBX_MB_RX] and sent [SBX_MB_TX] in it */
};

/**
 * A ring of finished windows of one (worker, port), in the memzone. Written only by the worker that
 * runs the slot (a successor continues at head), read only by the primary.
 */
struct sbx_mb_ring {
	uint64_t head;     /**< entries written so far (release store after the entry) */
	uint64_t pad[7];
	struct sbx_mb_entry e[SBX_MB_RING]; /**< entry n at e[n % SBX_MB_RING] */
} __attribute__((aligned(64)));

/** What the primary publishes per port (shm->microburst[p]); read by mgmt. */
struct sbx_mb_port_shm {
	uint32_t speed_mbps;       /**< the speed utilisation is of: ports[].speed_mbps, else the link's;
				        0 = none known (no utilisation, no histogram, no events) */
	uint32_t speed_configured; /**< 1 when speed_mbps comes from ports[].speed_mbps */
	uint64_t second;           /**< Unix second the fields below are of (the last whole one), 0 none yet */
	uint32_t peak_ppm[2];      /**< its highest window utilisation, parts per million (may pass 1e6
				        when more bytes passed than speed_mbps allows: a virtual port) */
	uint32_t avg_ppm[2];       /**< its average utilisation (bytes of the second / capacity) */
	uint64_t peak_bytes[2];    /**< bytes of its busiest window */
	uint64_t peak_start_ns[2]; /**< CLOCK_REALTIME start of that window */
	uint64_t hist[2][SBX_MB_BUCKETS]; /**< windows per bucket (not cumulative), speed known */
	uint64_t sum_ppm[2];       /**< sum of their utilisation, ppm (the histogram's _sum) */
	uint64_t windows;          /**< windows counted in hist (each direction) */
	uint64_t bursts[2];        /**< runs of windows over the threshold (one per burst) */
	uint64_t events;           /**< `microburst` events written */
	uint64_t events_suppressed; /**< runs not written as an event: one per port and second at most */
	uint64_t late_windows;     /**< worker windows published after the window was final: not counted */
	uint64_t lost_windows;     /**< worker windows overwritten in a ring before the primary read them */
};

/** The worker's side: process memory, not shared. */
struct sbx_mb_worker {
	uint64_t win_cycles;  /**< TSC cycles per window; 0 = microbursts off */
	uint64_t idx;         /**< window the bytes below belong to */
	uint64_t next;        /**< TSC at which it ends (UINT64_MAX when off) */
	uint64_t bytes[SBX_MAX_PORTS][2]; /**< this worker's bytes in window idx */
	struct sbx_mb_ring *rings; /**< this worker's ring of each port, [SBX_MAX_PORTS] (memzone) */
	uint16_t nb_ports;
};

/** TSC cycles of one window of @p window_us microseconds at @p tsc_hz (at least 1). */
uint64_t sbx_mb_window_cycles(uint64_t tsc_hz, uint32_t window_us);

/** Bytes one window of @p window_us holds at @p speed_mbps (Mb/s = 125000 B/s); 0 when either is 0. */
uint64_t sbx_mb_capacity(uint32_t speed_mbps, uint32_t window_us);

/** Utilisation of @p bytes in a window of @p capacity bytes, parts per million (saturates at UINT32_MAX). */
uint32_t sbx_mb_util_ppm(uint64_t bytes, uint64_t capacity);

/** Histogram bucket of @p ppm: 0 for <= 10 %, ..., 9 for <= 100 %, 10 above. */
unsigned int sbx_mb_bucket(uint32_t ppm);

/** Upper bound of bucket @p b as a ratio ("0.1" .. "1", "+Inf"), for /metrics le labels. */
const char *sbx_mb_bucket_le(unsigned int b);

/**
 * Start the worker's side at TSC @p tsc: @p rings is its ring per port in the memzone (NULL or
 * @p win_cycles 0: off, nothing is published).
 */
void sbx_mb_worker_init(struct sbx_mb_worker *w, struct sbx_mb_ring *rings, uint16_t nb_ports,
			uint64_t win_cycles, uint64_t tsc);

/** Publish the finished window's non-zero ports and start the window of @p tsc (sbx_mb_tick). */
void sbx_mb_roll(struct sbx_mb_worker *w, uint64_t tsc);

/** Count @p bytes of one burst of port @p port in direction @p dir (SBX_MB_RX/TX). Per burst. */
static inline void sbx_mb_add(struct sbx_mb_worker *w, uint16_t port, unsigned int dir, uint64_t bytes)
{
	w->bytes[port][dir] += bytes;
}

/** Once per loop with the loop's TSC: a window that ended is published (one compare otherwise). */
static inline void sbx_mb_tick(struct sbx_mb_worker *w, uint64_t tsc)
{
	if (__builtin_expect(tsc >= w->next, 0))
		sbx_mb_roll(w, tsc);
}

/**
 * Read the entries of @p r the primary has not read (from *@p tail) and pass each to @p fn.
 * Entries overwritten before they were read are counted in *@p lost. @return entries passed.
 */
unsigned int sbx_mb_ring_read(const struct sbx_mb_ring *r, uint64_t *tail, uint64_t *lost,
			      void (*fn)(void *ctx, const struct sbx_mb_entry *e), void *ctx);

/** Called for each burst of windows over the threshold, once the run ended (or its second did). */
typedef void (*sbx_mb_event_fn)(void *ctx, unsigned int dir, uint64_t start_ns, uint32_t peak_ppm,
				uint32_t windows);

/** The primary's side, per port: process memory. */
struct sbx_mb_agg {
	uint32_t window_us;
	uint32_t threshold_ppm;
	uint64_t win_cycles, tsc_hz;
	uint64_t tsc0, rt0_ns;        /**< a TSC and CLOCK_REALTIME read together: window -> UTC */
	uint64_t done;                /**< windows up to this index are final */
	struct sbx_mb_entry acc[SBX_MB_ACC]; /**< open windows, by index % SBX_MB_ACC */
	/* the second being summed */
	uint64_t sec;
	uint64_t sec_bytes[2], sec_peak_bytes[2], sec_peak_idx[2];
	uint32_t sec_windows, sec_peak_ppm[2];
	/* a run of windows over the threshold, per direction (run_len 0: none) */
	uint64_t run_start[2];
	uint32_t run_len[2], run_peak[2];
	uint64_t last_event_sec;      /**< second of the last event written */
};

/**
 * Start @p a: windows of @p window_us at @p tsc_hz, events over @p threshold_pct; @p tsc and
 * @p rt_ns are a TSC and a CLOCK_REALTIME read together; windows before @p tsc's are final.
 */
void sbx_mb_agg_init(struct sbx_mb_agg *a, uint32_t window_us, uint32_t threshold_pct, uint64_t tsc_hz,
		     uint64_t tsc, uint64_t rt_ns);

/** CLOCK_REALTIME ns at which window @p idx starts. */
uint64_t sbx_mb_window_ns(const struct sbx_mb_agg *a, uint64_t idx);

/** Add a worker's window; one already final is counted in @p out->late_windows and dropped. */
void sbx_mb_agg_add(struct sbx_mb_agg *a, struct sbx_mb_port_shm *out, const struct sbx_mb_entry *e);

/**
 * Make every window up to index @p upto final (windows nobody published are empty): utilisation
 * of @p capacity bytes (0: unknown, only bytes are kept), histogram, the second's peak and average
 * (published into @p out when the second is over), bursts and their events through @p fn. At most
 * the last SBX_MB_ACC windows before @p upto are walked (after a stall of the caller the older
 * ones are skipped; those holding bytes are counted in late_windows).
 */
void sbx_mb_agg_finish(struct sbx_mb_agg *a, struct sbx_mb_port_shm *out, uint64_t upto, uint64_t capacity,
		       sbx_mb_event_fn fn, void *ctx);

/** Windows a window stays open after its end (SBX_MB_LAG_US, at least 4). */
uint64_t sbx_mb_lag_windows(uint32_t window_us);

#endif
