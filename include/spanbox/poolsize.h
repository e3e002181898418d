/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file poolsize.h
 * How much memory rte_pktmbuf_pool_create() of N mbufs takes, computed before creating it (the
 * hugepage check and the first-touch memset bound need the figure first). Shared by
 * spanbox-primary and tools/pooltime.
 */
#ifndef SPANBOX_POOLSIZE_H
#define SPANBOX_POOLSIZE_H

#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

/** Memory of one pktmbuf pool, bytes. */
struct sbx_pool_estimate {
	uint64_t obj_size;     /**< one object: mempool header + struct rte_mbuf + data room (+ padding) */
	uint64_t obj_bytes;    /**< the objects: whole pages of them (an object never straddles a page)
				    plus the objects of the last, partly used page */
	uint64_t ring_bytes;   /**< the ring of free objects (the default "ring_mp_mc" driver) */
	uint64_t header_bytes; /**< struct rte_mempool, per-lcore caches, pktmbuf private data */
	uint64_t total;        /**< the sum, plus one page of allocator slack */
};

/**
 * Estimate the memory of rte_pktmbuf_pool_create(name, @p n, @p cache, 0, @p data_room, socket)
 * on pages of @p page_size bytes (the layout of DPDK 22.11's default mempool driver).
 */
static inline void sbx_pool_estimate(uint32_t n, uint32_t cache, uint16_t data_room, uint64_t page_size,
				     struct sbx_pool_estimate *e)
{
	uint64_t per_page;

	e->obj_size = rte_mempool_calc_obj_size((uint32_t)sizeof(struct rte_mbuf) + data_room, 0, NULL);
	per_page = page_size >= e->obj_size ? page_size / e->obj_size : 1;
	e->obj_bytes = page_size >= e->obj_size ? n / per_page * page_size + n % per_page * e->obj_size
						: (uint64_t)n * e->obj_size;
	e->ring_bytes = (uint64_t)rte_ring_get_memsize(rte_align32pow2(n + 1));
	e->header_bytes = sizeof(struct rte_mempool) + sizeof(struct rte_pktmbuf_pool_private) +
			  (cache ? (uint64_t)RTE_MAX_LCORE * sizeof(struct rte_mempool_cache) : 0);
	e->total = e->obj_bytes + e->ring_bytes + e->header_bytes + page_size;
}

#endif
