/* SPDX-License-Identifier: BSD-3-Clause */
/* The ingress stages of a port as /status shows them (docs/INGRESS.md, docs/MGMT.md). */
#ifndef SBX_MGMT_INGRESS_VIEW_H
#define SBX_MGMT_INGRESS_VIEW_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "spanbox/shm.h"

/**
 * The ingress object of port @p port for /status ports[].ingress: null when the port has no
 * ingress stage in the active runtime tables, else {"decap": [{type, packets, bytes} per rule],
 * "tunnels": [{kind, source, id, packets, bytes, sequence ("maintained", "not_maintained",
 * "absent"), seq_gaps, seq_lost, seq_reordered, truncated, last_seen}], "tunnels_untracked": N}
 * summed over workers 0..@p nb_w-1. @return a new cJSON item (caller owns), NULL out of memory.
 */
cJSON *mgmt_ingress_json(const struct sbx_shm *shm, uint16_t port, uint16_t nb_w);

#endif
