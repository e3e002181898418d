/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading the memzone's counters: bounded counts of the running config, sums of a counter family
 * over the workers, and the JSON of each family (include/spanbox/counters.h). Used by /status
 * (status.c), the port routes (api_ports.c), /metrics (api_metrics.c) and the stats history
 * (history.c): every number two of them show is computed here once. Depends on nothing of mgmt.
 */
#ifndef SBX_MGMT_SHMVIEW_H
#define SBX_MGMT_SHMVIEW_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "spanbox/shm.h"

/** Ports, workers, mirror sessions of the running config, bounded by the array sizes. */
uint16_t mgmt_nb_ports(const struct sbx_shm *shm);
uint16_t mgmt_nb_workers(const struct sbx_shm *shm);
uint16_t mgmt_nb_mirrors(const struct sbx_shm *shm);

/** @return the index of port @p name in the running config, -1 when there is none. */
int mgmt_port_index(const struct sbx_shm *shm, const char *name);

/**
 * Counter set of session @p i of the active runtime tables (workers[w].stats.mirror[cset]),
 * always < SBX_MIRROR_COUNTER_SETS.
 */
uint8_t mgmt_mirror_cset(const struct sbx_shm *shm, uint16_t i);

/**
 * Sum the counters of port @p i over workers 0..@p nb_w-1 (what /status shows as ports[].workers).
 * @param sum  overwritten.
 */
void mgmt_port_worker_sum(const struct sbx_shm *shm, uint16_t i, uint16_t nb_w, struct sbx_port_counters *sum);

/** Sum the counters of mirror session @p i (index into cfg.mirrors) over workers 0..@p nb_w-1. */
void mgmt_mirror_sum(const struct sbx_shm *shm, uint16_t i, uint16_t nb_w, struct sbx_mirror_counters *sum);

/**
 * Sum the counters of map @p j (index into the active tables' cfg.maps) over workers
 * 0..@p nb_w-1, by the map's counter set: its session's mirror counters into @p sum (overwritten).
 * @return its passed frames (SBX_FOREACH_MAP_COUNTER).
 */
uint64_t mgmt_map_sum(const struct sbx_shm *shm, uint16_t j, uint16_t nb_w, struct sbx_mirror_counters *sum);

/** Tool groups of the running config (active tables), bounded by SBX_MAX_TOOL_GROUPS. */
uint16_t mgmt_nb_tool_groups(const struct sbx_shm *shm);

/** Slot of tool group @p i of the active tables (shm->groups[slot]), always < shm->layout.nb_group_slots. */
uint8_t mgmt_group_slot(const struct sbx_shm *shm, uint16_t i);

/** Sum the counters of member @p k of group slot @p slot over workers 0..@p nb_w-1 (overwrites @p sum). */
void mgmt_group_member_sum(const struct sbx_shm *shm, uint8_t slot, uint16_t k, uint16_t nb_w,
			   struct sbx_group_member_counters *sum);

/** Sum the group counters (no_member) of slot @p slot over workers 0..@p nb_w-1 (overwrites @p sum). */
void mgmt_group_sum(const struct sbx_shm *shm, uint8_t slot, uint16_t nb_w, struct sbx_group_counters *sum);

/** Add every counter of SBX_FOREACH_GROUP_MEMBER_COUNTER to object @p o (json keys). */
void mgmt_group_member_counters_json(cJSON *o, const struct sbx_group_member_counters *c);

/**
 * A worker's TSC cycles per packet, busy_cycles / busy_pkts (unrounded).
 * @return false (and @p cpp untouched) before its first packet.
 */
bool mgmt_cycles_per_packet(const struct sbx_worker_shm *ws, double *cpp);

/** Add every counter of SBX_FOREACH_PORT_COUNTER to object @p o, as number members named by json key. */
void mgmt_port_counters_json(cJSON *o, const struct sbx_port_counters *c);

/** Add every counter of SBX_FOREACH_MIRROR_COUNTER to object @p o (json keys). */
void mgmt_mirror_counters_json(cJSON *o, const struct sbx_mirror_counters *c);

/** Add every counter of SBX_FOREACH_WORKER_COUNTER of @p st to object @p o (json keys). */
void mgmt_worker_counters_json(cJSON *o, const struct sbx_worker_stats *st);

/**
 * Add every counter of SBX_FOREACH_ETHDEV_COUNTER of port @p c to object @p o, named by its field
 * (ipackets...: /status ports[].stats).
 */
void mgmt_ethdev_counters_json(cJSON *o, const struct sbx_port_shm *c);

/** The recorder slot of capture @p id in @p shm (any state but free), NULL when none. */
const struct sbx_capture_shm *mgmt_capture_slot(const struct sbx_shm *shm, long id);

/** The running session of capture @p id (a recorder destination) in the active tables, its index
 *  in *@p idx when not NULL; NULL when none. */
const struct sbx_mirror_cfg *mgmt_capture_session(const struct sbx_shm *shm, long id, uint16_t *idx);

#endif
