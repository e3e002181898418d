/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON views of the shared memzone. */
#ifndef SBX_MGMT_STATUS_H
#define SBX_MGMT_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "spanbox/shm.h"

struct mgmt_db;
struct rte_mempool;

/*
 * Shared helpers: every number /status shows is computed here once, and /metrics and the port
 * routes reuse them (mgmt/api_metrics.c).
 */

/** Ports, workers, mirror sessions of the running config, bounded by the array sizes. */
uint16_t mgmt_nb_ports(const struct sbx_shm *shm);
uint16_t mgmt_nb_workers(const struct sbx_shm *shm);
uint16_t mgmt_nb_mirrors(const struct sbx_shm *shm);

/** @return the index of port @p name in the running config, -1 when there is none. */
int mgmt_port_index(const struct sbx_shm *shm, const char *name);

/** @return seconds since the primary started (shm->start_realtime_ns), 0 if the clock went back. */
uint64_t mgmt_uptime_s(const struct sbx_shm *shm);

/**
 * Sum the counters of port @p i over workers 0..@p nb_w-1 (what /status shows as ports[].workers).
 * @param sum  overwritten.
 */
void mgmt_port_worker_sum(const struct sbx_shm *shm, uint16_t i, uint16_t nb_w, struct sbx_port_counters *sum);

/** Sum the counters of mirror session @p i (index into cfg.mirrors) over workers 0..@p nb_w-1. */
void mgmt_mirror_sum(const struct sbx_shm *shm, uint16_t i, uint16_t nb_w, struct sbx_mirror_counters *sum);

/**
 * A worker's TSC cycles per packet, busy_cycles / busy_pkts (unrounded).
 * @return false (and @p cpp untouched) before its first packet.
 */
bool mgmt_cycles_per_packet(const struct sbx_worker_shm *ws, double *cpp);

/** @return mbufs now sitting in the per-lcore caches of @p mp (a racy but whole-valued sum). */
uint64_t mgmt_mempool_cached(const struct rte_mempool *mp);

/**
 * Format a CLOCK_REALTIME time as RFC 3339 UTC with milliseconds ("2026-11-30T01:37:58.123Z").
 * @param realtime_ns  ns since the Unix epoch.
 * @param buf          receives the text; 25 bytes are enough.
 */
void mgmt_rfc3339(uint64_t realtime_ns, char *buf, size_t len);

/**
 * The body of GET /api/v1/health.
 * @param shm  the memzone, or NULL when the appliance is down.
 * @return a new object the caller frees with cJSON_Delete(), NULL when out of memory.
 */
cJSON *mgmt_health_json(const struct sbx_shm *shm);

/**
 * The body of GET /api/v1/status (appliance, ports, workers, pools, start-up warnings, database);
 * reads @p shm only.
 * @param shm  the memzone of a live primary (not NULL).
 * @param db   the open database (path, size on disk, schema version).
 * @return a new object the caller frees with cJSON_Delete(), NULL when out of memory.
 */
cJSON *mgmt_status_json(const struct sbx_shm *shm, const struct mgmt_db *db);

/** One port's JSON as in /status (config, socket, link, queues, peer, stats, worker counters). */
cJSON *mgmt_port_json(const struct sbx_shm *shm, uint16_t i);

/** One worker's JSON (state, pid, lcore, restarts, crashes, heartbeat, queues, counters). */
cJSON *mgmt_worker_json(const struct sbx_shm *shm, uint16_t w);

/** One pool's JSON (socket, size, cache, in use, populate time, and mgmt_pool_details_json()). */
cJSON *mgmt_pool_json(const struct sbx_shm *shm, uint32_t i);

/** Where the mbufs of one pool are (mgmt_pool_audit()), in mbufs. */
struct mgmt_pool_audit {
	uint64_t populated;   /**< objects of the pool */
	uint64_t in_ring;     /**< free in the pool's ring */
	uint64_t in_caches;   /**< free in the per-lcore caches */
	uint64_t rx_held;     /**< held by the ports' RX rings (measured at start, before traffic) */
	uint64_t in_rings;    /**< in the bridge rings of pcap ports */
	uint64_t in_workers;  /**< bursts the workers hold (stats.held) */
	uint64_t recovered;   /**< burst mbufs the primary freed after crashes (not subtracted) */
	int64_t unexplained;  /**< populated minus all of the above but recovered */
};

/**
 * The pool audit of pool @p i as numbers, computed now (see mgmt_pool_audit_json()). Needs the
 * DPDK secondary attachment. @return 0, or -1 when the mempool is not found (*@p a zeroed).
 */
int mgmt_pool_audit(const struct sbx_shm *shm, uint32_t i, struct mgmt_pool_audit *a);

/**
 * The pool audit, computed now (a few hundred reads, no locks): where every mbuf of pool @p i is.
 * populated = in the ring + in lcore caches + held by port RX rings (measured once at start,
 * before traffic) + in bridge rings + held by workers + unexplained; unexplained covers mbufs lost
 * in worker crashes (at most one burst per crash: the rest is recovered by the primary) and
 * transient ones.
 * Needs the DPDK secondary attachment (reads the mempool). @return new JSON, NULL if not found.
 */
cJSON *mgmt_pool_audit_json(const struct sbx_shm *shm, uint32_t i);

/** Session @p i of the active runtime tables: its config and counters (summed and per worker). */
cJSON *mgmt_mirror_json(const struct sbx_shm *shm, uint16_t i);

#endif
