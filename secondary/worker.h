/* SPDX-License-Identifier: BSD-3-Clause */
/* The worker's forwarding loop. */
#ifndef SPANBOX_WORKER_H
#define SPANBOX_WORKER_H

#include <signal.h>
#include <stdint.h>

#include <rte_rcu_qsbr.h>

#include "spanbox/shm.h"
#include "flows.h"
#include "ingress.h"
#include "maps_stage.h"
#include "mirror.h"
#include "pdump.h"
#include "queue.h"

/** Everything the loop needs, resolved once at start. */
struct sbx_worker {
	unsigned int id;
	struct sbx_shm *shm;
	struct sbx_worker_shm *slot; /**< this worker's slot in the memzone: sbx_shm_worker(shm, id) */
	uint16_t nb_rxq;
	struct sbx_queue rxq[SBX_MAX_RXQ_PER_WORKER];
	struct sbx_queue txq[SBX_MAX_PORTS]; /**< this worker's own TX queue on each port */
	int16_t peer[SBX_MAX_PORTS];         /**< cross-connect: output port of each input port, -1 none */
	uint32_t len_span[SBX_MAX_PORTS];    /**< per input port: longest frame - SBX_FRAME_MIN, bytes (one
						  unsigned compare finds runts and oversize frames) */
	struct sbx_ingress_engine ingress;   /**< this worker's view of the ingress stages (ingress.c) */
	struct sbx_mirror_engine mirror;     /**< this worker's view of the mirror sessions */
	struct sbx_maps_stage maps;          /**< the maps stage (maps_stage.c): each frame's maps */
	struct sbx_mapset map_sets[SBX_MAX_BURST]; /**< its output for the burst: map j in it = map j takes the frame */
	struct sbx_mapset map_any;           /**< the union of map_sets (the maps that take a frame of the burst) */
	uint8_t flows_taken[2][SBX_MAX_BURST]; /**< RX [0] / TX [1]: 1 when a session of flows.sessions took the frame */
	struct sbx_flows_worker flows;       /**< flow metering (flows.c): zeroed when flows are off */
	struct sbx_pdump_worker pdump;       /**< captures of DPDK's tools registered in this process */
	struct sbx_mb_worker mb;             /**< microburst windows: bytes per port and direction of the
						  current window, published into sbx_shm_mb_ring(shm, id, p) */
	struct rte_rcu_qsbr *rcu;            /**< the tables' QSBR variable (memzone SBX_RCU_MEMZONE_NAME) */
	uint64_t gen;                        /**< generation of the runtime tables in use */
	uint64_t file_wait_cycles;           /**< longest wait for a full pcap-port TX ring, TSC cycles */
	volatile sig_atomic_t *quit;
	volatile sig_atomic_t *test_hang;    /**< test hook SBX_TEST_HANG_WORKER (main.c): once set, the loop
						  spins without heartbeats until *quit (a hung worker);
						  NULL without the hook */
};

/**
 * Resolve queues and rings of worker @p id from the memzone.
 * @return 0, or -1 with a message in @p err.
 */
int sbx_worker_setup(struct sbx_worker *wk, struct sbx_shm *shm, unsigned int id, char *err, size_t errlen);

/** @return false when the primary of @p shm is gone (no such pid) or shutting down (running 0). */
bool sbx_primary_alive(const struct sbx_shm *shm);

/**
 * Poll until *wk->quit, the primary asks to stop, or the primary is gone.
 * Forward path: rx_burst -> cross-connect -> tx_burst of the same mbufs (no copy); mbufs TX refuses
 * are freed here and counted as drops on the output port. Frames with an inconsistent mbuf chain
 * (bad_pkts), shorter than SBX_FRAME_MIN bytes (runt) or longer than the input port's mtu +
 * SBX_FRAME_L2_OVERHEAD (oversize) are freed before any TX or mirroring and counted as drops on
 * the input port.
 * @return 0 on a requested stop, 1 when the primary is gone.
 */
int sbx_worker_run(struct sbx_worker *wk);

#endif
