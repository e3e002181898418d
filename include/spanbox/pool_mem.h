/* SPDX-License-Identifier: BSD-3-Clause */
/* Where a mempool's memory is: bytes and page size, and the EAL heap it grows. */
#ifndef SPANBOX_POOL_MEM_H
#define SPANBOX_POOL_MEM_H

#include <stdint.h>

#include <rte_mempool.h>

/** Memory of one mempool, summed over its chunks. */
struct sbx_pool_mem {
	uint64_t bytes;   /**< bytes of all memory chunks */
	uint64_t page_sz; /**< largest page size backing them, bytes */
};

/** @return the memory of @p mp (rte_mempool_mem_iter over its chunks). */
struct sbx_pool_mem sbx_pool_mem(struct rte_mempool *mp);

/** @return bytes in EAL's malloc heap on @p socket (it grows when EAL maps more hugepages), 0 if unknown. */
uint64_t sbx_heap_total_bytes(int socket);

#endif
