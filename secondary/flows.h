/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The worker's flow metering stage (issue #28, docs/FLOWS.md): after the ingress stages, the frames
 * a metered port received (flows.ports) are counted into the worker's own flow table
 * (shared/flowtable.c, one rte_hash per worker, no sharing); the records that leave it go on the
 * worker's rte_ring to the primary's exporter (primary/flowexport.c). A full ring is a counted loss
 * (flows_records_lost_ring), never a wait. Expiry is bounded per loop (SBX_FLOWS_EXPIRE_BUSY key
 * slots after a metered burst, SBX_FLOWS_EXPIRE_IDLE in a loop without one).
 * (issue #28, bench/flows.sh): a burst walks 1 slot per 4 of its frames (at most 8), the walk of
 * loops without one runs at most once per SBX_FLOWS_IDLE_WALK_US, and no walk emits more records
 * than the ring has room for.
 */
#ifndef SPANBOX_SECONDARY_FLOWS_H
#define SPANBOX_SECONDARY_FLOWS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "spanbox/timestamp.h"
#include "spanbox/flowtable.h"
#include "spanbox/shm.h"

#define SBX_FLOWS_EXPIRE_BUSY 8  /**< key slots the expiry walk visits after a metered burst */
#define SBX_FLOWS_EXPIRE_IDLE 64 /**< ... in a loop without a metered burst */
#define SBX_FLOWS_IDLE_WALK_US 10 /**< ... at most once per this many us: 6.4 M slots/s, a table
				       of 4 M flows walked in 0.65 s without traffic */

/** One worker's flow stage. Zeroed (port_mask 0, ft NULL): off, the loop pays one branch a burst. */
struct sbx_flows_worker {
	uint64_t port_mask;              /**< bit p: frames received on port p are metered; 0 when flows are off */
	uint64_t tx_mask;                /**< bit p: frames sent on port p are metered (direction "tx") */
	struct sbx_mapset map_mask;      /**< map j: frames cfg.maps[j] took are metered (flows.sessions) */
	uint64_t mirror_mask;            /**< bit i: frames cfg.mirrors[i] took are metered (flows.sessions) */
	struct sbx_flowtable *ft;        /**< the worker's table, NULL when off */
	struct rte_ring *ring;           /**< to the exporter (SBX_FLOWS_RING_FMT), SP/SC, 128 B elements */
	struct sbx_worker_stats *st;     /**< the slot's counters */
	struct sbx_flowtable_stats base; /**< the slot's flows_* counters when this process started */
	struct sbx_ts_clock clk;         /**< the flows' clock: TSC -> CLOCK_REALTIME (secondary/clock.h) */
	uint64_t tsc_hz;
	bool walked;                     /**< a metered burst ran the expiry walk in this loop */
	uint64_t stop_deadline;          /**< TSC: while flushing at a stop, a full ring is waited for
					      until then (0 on the data path: never a wait) */
	uint64_t next_idle_walk;         /**< TSC: no idle expiry walk before (SBX_FLOWS_IDLE_WALK_US) */
};

/**
 * Set up worker @p id's stage from the active tables' flows section: look its ring up, free a killed predecessor's
 * table (its flows counted as flows_records_lost_killed), create the table (flows_per_worker flows,
 * on the worker's NUMA socket). Flows off: nothing, 0.
 * @return 0, or -1 with a message in @p err.
 */
int sbx_flows_setup(struct sbx_flows_worker *f, struct sbx_shm *shm, unsigned int id, char *err, size_t errlen);

/**
 * Take the flows section @p c of new runtime tables (between two bursts): the ports metered and
 * the timeouts (for the flows in the table too); metering turned on when it was off creates the
 * table (sbx_flows_setup: a failure is logged and counted in tables_errors, metering stays off);
 * turned off, nothing more is metered and the flows in the table leave by their timeouts.
 */
void sbx_flows_live(struct sbx_flows_worker *f, struct sbx_shm *shm, unsigned int id, const struct sbx_flows_cfg *c);

/** True when frames received on @p port are metered (one load and test). */
static inline bool sbx_flows_meters(const struct sbx_flows_worker *f, uint16_t port)
{
	return (f->port_mask >> port) & 1;
}

/** True when frames sent on @p port are metered. */
static inline bool sbx_flows_meters_tx(const struct sbx_flows_worker *f, uint16_t port)
{
	return (f->tx_mask >> port) & 1;
}

/** Meter the @p n frames @p pkts received on @p port at TSC @p tsc (frames only read; mbufs stay
 *  the caller's), then run the expiry walk a little. */
void sbx_flows_burst(struct sbx_flows_worker *f, uint16_t port, struct rte_mbuf *const *pkts, uint16_t n,
		     uint64_t tsc);

/**
 * The same for frames seen in direction @p dir (SBX_FLOW_DIR_RX: received on @p port, SBX_FLOW_DIR_TX:
 * about to be sent on @p port: metered before the TX burst, the mbufs being the PMD's after it).
 * With @p taken non-NULL only frame i with taken[i] != 0 (a session of flows.sessions took it:
 * sbx_mirror_prepare_sel, sbx_mirror_prepare_maps) is metered.
 */
void sbx_flows_burst_dir(struct sbx_flows_worker *f, uint16_t port, uint8_t dir, struct rte_mbuf *const *pkts,
			 uint16_t n, const uint8_t *taken, uint64_t tsc);

/** True when flows.sessions selects a session (mirror or map): the worker marks the frames they take. */
static inline bool sbx_flows_selects(const struct sbx_flows_worker *f)
{
	return f->mirror_mask != 0 || !sbx_mapset_empty(&f->map_mask);
}

/** End of a poll loop (@p tsc: now): the expiry walk (SBX_FLOWS_EXPIRE_IDLE slots) when no metered
 *  burst walked in this loop, so that flows expire while the metered ports are quiet. */
void sbx_flows_loop(struct sbx_flows_worker *f, uint64_t tsc);

/** Copy the table's counters into the slot (every heartbeat, and at the end). */
void sbx_flows_publish(struct sbx_flows_worker *f);

/**
 * The end of the process: @p graceful, every flow is flushed to the ring (reason forced end);
 * else (the primary is gone) the flows are dropped. Then the table is freed. Idempotent.
 */
void sbx_flows_stop(struct sbx_flows_worker *f, bool graceful);

#endif
