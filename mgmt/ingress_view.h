/* SPDX-License-Identifier: BSD-3-Clause */
/* The ingress stages of a port as /status shows them (docs/INGRESS.md, docs/MGMT.md). */
#ifndef SBX_MGMT_INGRESS_VIEW_H
#define SBX_MGMT_INGRESS_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "spanbox/shm.h"

/** Most tunnel senders of one port mgmt_ingress_senders() can return. */
#define MGMT_INGRESS_SENDERS_MAX (SBX_MAX_WORKERS * SBX_MAX_TUNNEL_SOURCES)

/** Packets and bytes of each decap rule of port @p port, summed over workers 0..@p nb_w-1. */
void mgmt_ingress_rules(const struct sbx_shm *shm, uint16_t port, uint16_t nb_w, uint64_t pkts[SBX_MAX_DECAP_RULES],
			uint64_t bytes[SBX_MAX_DECAP_RULES]);

/**
 * The tunnel senders of port @p port, summed over workers 0..@p nb_w-1 by (kind, outer source, id)
 * into @p sum (MGMT_INGRESS_SENDERS_MAX entries; a slot the worker is taking or freeing at that
 * moment is left out); *@p untracked: frames of senders beyond the workers' tables (the port counter
 * tunnels_untracked summed). @return the number of senders.
 */
unsigned int mgmt_ingress_senders(const struct sbx_shm *shm, uint16_t port, uint16_t nb_w,
				  struct sbx_tunnel_source *sum, uint64_t *untracked);

/** Timestamps in: the clock offset of port @p port's sender, the views of workers 0..@p nb_w-1
 *  merged (sbx_ts_in_offset_merge) into @p out. */
void mgmt_ingress_ts(const struct sbx_shm *shm, uint16_t port, uint16_t nb_w, struct sbx_ts_in_offset *out);

/** A sender's outer source address as text ("?" when it cannot be printed). */
void mgmt_tunnel_source_text(const struct sbx_tunnel_source *e, char *buf, size_t len);

/**
 * The ingress object of port @p port for /status ports[].ingress: null when the port has no
 * ingress stage in the active runtime tables, else {"decap": [{type, packets, bytes} per rule],
 * "tunnels": [{kind, source, id, packets, bytes, sequence ("maintained", "not_maintained",
 * "absent"), seq_gaps, seq_lost, seq_reordered, seq_duplicates, truncated, last_seen}],
 * "tunnels_untracked": N, and with ingress.timestamp "timestamp": {format, frames, offset_ns: {last,
 * min, max}, last_seen} (null offsets before a first frame)}
 * summed over workers 0..@p nb_w-1. @return a new cJSON item (caller owns), NULL out of memory.
 */
cJSON *mgmt_ingress_json(const struct sbx_shm *shm, uint16_t port, uint16_t nb_w);

#endif
