/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hugepage check before any pool is created. EAL reserved eal.socket_mem_mb on each socket at
 * init: that memory is its heap, part of it already used (the memzone, rings). In DPDK's default
 * (dynamic) memory mode the heap grows by mapping more hugepages of the node when a reservation
 * does not fit, so what a pool can still get on a socket is the heap's free part plus the node's
 * free hugepages; with --legacy-mem the heap never grows. Failing here, with the numbers and the
 * file to raise, beats a pool creation that fails with "Cannot allocate memory" (or, worse, one
 * that takes pages another process was counting on).
 */
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "spanbox/hostinfo.h"
#include "primary.h"

#define MIB(b) ((unsigned long long)(((b) + (1ULL << 20) - 1) >> 20))

struct page_size_arg {
	int socket;
	uint64_t page_sz;
};

static int msl_page_size(const struct rte_memseg_list *msl, void *arg)
{
	struct page_size_arg *a = arg;

	if (msl->external || msl->socket_id != a->socket)
		return 0;
	a->page_sz = msl->page_sz;
	return 1;
}

uint64_t sbx_hugepages_eal_page_size(int socket)
{
	struct page_size_arg a = { .socket = socket, .page_sz = 0 };

	rte_memseg_list_walk(msl_page_size, &a);
	return a.page_sz ? a.page_sz : sbx_default_hugepage_size();
}

/* True when an extra EAL argument is @p opt. */
static bool has_eal_arg(const struct sbx_config *cfg, const char *opt)
{
	uint16_t i;

	for (i = 0; i < cfg->nb_extra_eal; i++)
		if (strcmp(cfg->extra_eal[i], opt) == 0)
			return true;
	return false;
}

/* The sysfs file that sets the number of hugepages of @p page_sz (on @p node when > 1 node). */
static void nr_file(uint64_t page_sz, int node, char *buf, size_t len)
{
	int nodes[SBX_MAX_NODES];

	if (sbx_numa_nodes(nodes, SBX_MAX_NODES) > 1)
		snprintf(buf, len, "/sys/devices/system/node/node%d/hugepages/hugepages-%llukB/nr_hugepages", node,
			 (unsigned long long)(page_sz >> 10));
	else
		snprintf(buf, len, "/sys/kernel/mm/hugepages/hugepages-%llukB/nr_hugepages",
			 (unsigned long long)(page_sz >> 10));
}

int sbx_hugepages_check(const struct sbx_primary *p, int socket, uint64_t need, uint64_t *heap_free,
			uint64_t *free_huge)
{
	const struct sbx_config *cfg = p->cfg;
	struct rte_malloc_socket_stats st;
	struct sbx_hugepages h[SBX_MAX_HUGE_SIZES * (SBX_MAX_NODES + 1)];
	uint64_t page_sz = sbx_hugepages_eal_page_size(socket), pages = 0, nr = 0, have, missing;
	bool growable = !has_eal_arg(cfg, "--legacy-mem");
	char file[160];
	int n, i;

	*heap_free = rte_malloc_get_socket_stats(socket, &st) == 0 ? st.heap_freesz_bytes : 0;
	*free_huge = 0;
	if (!rte_eal_has_hugepages()) {
		printf("spanbox-primary: hugepages: EAL runs without hugepages (--no-huge): no check\n");
		return 0;
	}
	n = sbx_hugepages_read(h, (int)RTE_DIM(h));
	for (i = 0; i < n; i++) {
		if (h[i].page_size != page_sz)
			continue;
		if (h[i].node == socket || (h[i].node == -1 && nr == 0))
			nr = h[i].nr;
	}
	if (growable) {
		pages = sbx_hugepages_available(page_sz, socket);
		*free_huge = pages * page_sz;
	}
	have = *heap_free + *free_huge;
	if (need <= have) {
		printf("spanbox-primary: hugepages: socket %d: the pools need %llu MiB; EAL can get %llu MiB there"
		       " (%llu MiB free in its heap + %llu free %llu MiB pages, nr_hugepages %llu)\n",
		       socket, MIB(need), MIB(have), MIB(*heap_free), (unsigned long long)pages,
		       (unsigned long long)(page_sz >> 20), (unsigned long long)nr);
		return 0;
	}
	nr_file(page_sz, socket, file, sizeof(file));
	missing = (need - have + page_sz - 1) / page_sz;
	fprintf(stderr,
		"spanbox-primary: hugepages: the pools need %llu MiB on socket %d, EAL can get %llu MiB there:"
		" %llu MiB free in its heap (eal.socket_mem_mb %u reserved at init) + %llu MiB of %llu MiB pages"
		" free (%llu of nr_hugepages %llu%s)\n",
		MIB(need), socket, MIB(have), MIB(*heap_free), cfg->socket_mem_mb, MIB(*free_huge),
		(unsigned long long)(page_sz >> 20), (unsigned long long)pages, (unsigned long long)nr,
		growable ? "" : "; --legacy-mem: the heap cannot grow");
	if (growable)
		fprintf(stderr, "spanbox-primary: hugepages: raise %s by at least %llu (to %llu), or lower pool.mbufs\n",
			file, (unsigned long long)missing, (unsigned long long)(nr + missing));
	else
		fprintf(stderr, "spanbox-primary: hugepages: raise eal.socket_mem_mb by at least %llu, or lower"
			" pool.mbufs\n", MIB(need - have));
	return -2;
}
