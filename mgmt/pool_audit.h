/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pool audit: where every mbuf of a pool is, computed from the memzone and the mempool. Used
 * by the pools route (status.c) and the health watch (watch.c); depends on nothing else of mgmt.
 */
#ifndef SBX_MGMT_POOL_AUDIT_H
#define SBX_MGMT_POOL_AUDIT_H

#include <stdint.h>

#include <rte_mempool.h>

#include "spanbox/shm.h"

/** @return mbufs now sitting in the per-lcore caches of @p mp (a racy but whole-valued sum). */
uint64_t mgmt_mempool_cached(const struct rte_mempool *mp);

/** Where the mbufs of one pool are (mgmt_pool_audit()), in mbufs. */
struct mgmt_pool_audit {
	uint64_t populated;   /**< objects of the pool */
	uint64_t in_ring;     /**< free in the pool's ring */
	uint64_t in_caches;   /**< free in the per-lcore caches */
	uint64_t rx_held;     /**< held by the ports' RX rings (measured at start, before traffic) */
	uint64_t in_rings;    /**< in the bridge rings of pcap ports */
	uint64_t in_workers;  /**< bursts the workers hold (stats.held) */
	uint64_t in_reasm;    /**< outer fragments the workers' reassembly tables hold (stats.reasm_held) */
	uint64_t recovered;   /**< burst mbufs the primary freed after crashes (not subtracted) */
	int64_t unexplained;  /**< populated minus all of the above but recovered */
};

/** Where the mbufs of an indirect-mbuf pool are (mgmt_ind_pool_audit()), in mbufs. */
struct mgmt_ind_pool_audit {
	uint64_t populated;   /**< objects of the pool */
	uint64_t in_ring;     /**< free in the pool's ring */
	uint64_t in_caches;   /**< free in the per-lcore caches */
	int64_t in_flight;    /**< populated minus the free ones: shares on mirror queues, in the workers'
				   copy buffers, or lost in crashes */
};

/**
 * The audit of the indirect-mbuf pool beside pool @p i (struct sbx_ind_pool_shm), computed now.
 * @return 0, or -1 when there is none or it is not found (*@p a zeroed).
 */
int mgmt_ind_pool_audit(const struct sbx_shm *shm, uint32_t i, struct mgmt_ind_pool_audit *a);

/**
 * The pool audit of pool @p i as numbers, computed now (see mgmt_pool_audit_json()). Needs the
 * DPDK secondary attachment. @return 0, or -1 when the mempool is not found (*@p a zeroed).
 */
int mgmt_pool_audit(const struct sbx_shm *shm, uint32_t i, struct mgmt_pool_audit *a);

#endif
