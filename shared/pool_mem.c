/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory of a mempool and of EAL's heap (used by the primary and by spanbox-pooltime). */
#include <rte_malloc.h>
#include <rte_memory.h>

#include "spanbox/pool_mem.h"

/* rte_mempool_mem_iter() callback: add one chunk. */
static void sum_chunk(struct rte_mempool *mp, void *opaque, struct rte_mempool_memhdr *memhdr, unsigned int idx)
{
	struct sbx_pool_mem *s = opaque;
	const struct rte_memseg_list *msl = rte_mem_virt2memseg_list(memhdr->addr);

	(void)mp;
	(void)idx;
	s->bytes += memhdr->len;
	if (msl != NULL && msl->page_sz > s->page_sz)
		s->page_sz = msl->page_sz;
}

struct sbx_pool_mem sbx_pool_mem(struct rte_mempool *mp)
{
	struct sbx_pool_mem s = { 0, 0 };

	rte_mempool_mem_iter(mp, sum_chunk, &s);
	return s;
}

uint64_t sbx_heap_total_bytes(int socket)
{
	struct rte_malloc_socket_stats st;

	return rte_malloc_get_socket_stats(socket, &st) == 0 ? st.heap_totalsz_bytes : 0;
}
