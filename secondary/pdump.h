/* SPDX-License-Identifier: BSD-3-Clause */
/* The worker's side of DPDK's capture tools (docs/CAPTURE.md "DPDK's own tools"). */
#ifndef SPANBOX_WORKER_PDUMP_H
#define SPANBOX_WORKER_PDUMP_H

#include <stdint.h>

#include "spanbox/shm.h"

struct sbx_pdump_cap; /* one capture of the table, with its callbacks (pdump.c) */

/** This worker's view of the capture table (shm->pdump). */
struct sbx_pdump_worker {
	uint64_t gen;                /**< pdump_gen taken; UINT64_MAX: none yet (the first loop takes it) */
	unsigned int nb;             /**< captures in cap[] */
	struct sbx_pdump_cap *cap[SBX_PDUMP_MAX];
	void *stats;                 /**< librte_pdump's memzone "rte_pdump_stats" (NULL: not counted) */
};

/**
 * Take the capture table pdump[gen & 1] of @p shm: remove this process's callbacks of captures
 * that ended, register RX callbacks (rte_eth_add_first_rx_callback) and TX callbacks
 * (rte_eth_add_tx_callback) on every queue of the port for new ones, loading each filter with
 * rte_bpf_load. Called by the worker's own thread between two bursts only (its callbacks run in
 * that thread, inside rte_eth_rx_burst / rte_eth_tx_burst): a removed callback is freed at once.
 * A capture that cannot be set up (no memory, a filter that does not load) is skipped and logged.
 */
void sbx_pdump_sync(struct sbx_pdump_worker *pw, const struct sbx_shm *shm);

/** Remove every callback of this process (the worker is stopping). */
void sbx_pdump_teardown(struct sbx_pdump_worker *pw);

#endif
