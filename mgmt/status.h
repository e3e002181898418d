/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON views of the shared memzone. */
#ifndef SBX_MGMT_STATUS_H
#define SBX_MGMT_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "spanbox/shm.h"
#include "shmview.h"
#include "timefmt.h"

struct mgmt_db;
struct rte_mempool;

/*
 * Shared helpers: every number /status shows is computed here or in shmview.h once, and /metrics,
 * the port routes and the history reuse them.
 */

/** @return seconds since the primary started (shm->start_realtime_ns), 0 if the clock went back. */
uint64_t mgmt_uptime_s(const struct sbx_shm *shm);


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

/** The views of GET /api/v1/status (?view=, docs/MGMT.md "Views of /status"). */
enum mgmt_status_view {
	MGMT_STATUS_VIEW_FULL, /**< the default answer, every field */
	MGMT_STATUS_VIEW_PAGE, /**< what the status page shows: workers[] carry "ports_total" (their
				    counters summed over ports) instead of "ports" (one object per port),
				    ports[].rss without "reta", mirrors[] without "workers" */
};

/**
 * The body of GET /api/v1/status?view=@p view; MGMT_STATUS_VIEW_FULL is mgmt_status_json().
 * The page's view is what web/app.js reads every second: at 64 ports and 32 workers the full
 * answer is 2.2 MB, almost all of it workers[].ports (docs/BENCHMARKS.md "The page at scale").
 * @return a new object the caller frees with cJSON_Delete(), NULL when out of memory.
 */
cJSON *mgmt_status_view_json(const struct sbx_shm *shm, const struct mgmt_db *db, enum mgmt_status_view view);

/** One port's JSON as in /status (config, socket, link, queues, peer, stats, worker counters). */
cJSON *mgmt_port_json(const struct sbx_shm *shm, uint16_t i);

/** One worker's JSON (state, pid, lcore, restarts, crashes, heartbeat, queues, counters). */
cJSON *mgmt_worker_json(const struct sbx_shm *shm, uint16_t w);

/** Standby slot @p s's JSON (slot, pid, lcore, state, binary, starts, heartbeat_age_ms, parked_since). */
cJSON *mgmt_standby_json(const struct sbx_shm *shm, uint32_t s);

/** Every standby slot's JSON (mgmt_standby_json()), an array; /status "standbys" and GET /standbys. */
cJSON *mgmt_standbys_json(const struct sbx_shm *shm);

/** The last upgrade of the workers: state, binary, from, workers_done, workers, started, finished,
 * error (GET /api/v1/workers/upgrade). */
cJSON *mgmt_upgrade_json(const struct sbx_shm *shm);

/** One pool's JSON (socket, size, cache, in use, populate time, and mgmt_pool_details_json()). */
cJSON *mgmt_pool_json(const struct sbx_shm *shm, uint32_t i);


/**
 * The pool audit, computed now (a few hundred reads, no locks): where every mbuf of pool @p i is.
 * populated = in the ring + in lcore caches + held by port RX rings (measured once at start,
 * before traffic) + in bridge rings + held by workers + unexplained; unexplained covers mbufs lost
 * in worker crashes (at most one burst per crash: the rest is recovered by the primary) and
 * transient ones.
 * Needs the DPDK secondary attachment (reads the mempool). @return new JSON, NULL if not found.
 */
cJSON *mgmt_pool_audit_json(const struct sbx_shm *shm, uint32_t i);

/**
 * Tool group @p i of the active runtime tables (/status tool_groups[i]): name, hash, buckets,
 * members_up, counters summed over workers and members, and per member its port, state, reason,
 * buckets, share and counters; with @p with_config also failover and member_rate_limit (GET
 * /api/v1/tool_groups). @return a new object the caller frees.
 */
cJSON *mgmt_tool_group_json(const struct sbx_shm *shm, uint16_t i, bool with_config);

/**
 * The part of a session's JSON that mirrors and maps share (/status mirrors[], GET /api/v1/maps):
 * id, name, sources[] (port, direction), destination ({"port"}, {"group"} or {"recorder"}),
 * destination_group (the group's name or null) and filter of @p m, added to @p o.
 */
void mgmt_session_json(cJSON *o, const struct sbx_shm *shm, const struct sbx_mirror_cfg *m);

/** Session @p i of the active runtime tables: its config and counters (summed and per worker). */
cJSON *mgmt_mirror_json(const struct sbx_shm *shm, uint16_t i);

#endif
