/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow tables in the capacity plan (issue #28, docs/FLOWS.md "Memory"): each worker creates a
 * table of flows.flows_per_worker flows in hugepage memory on its lcore's socket
 * (secondary/flows.c), the primary one ring of SBX_FLOWS_RING_SIZE records per worker
 * (primary/flowexport.c). Their bytes join the pools' in the hugepage check of that socket
 * (pools.c), so that a table that cannot fit is refused at start, not when its worker starts.
 */
#include <stdio.h>

#include <rte_ring.h>

#include "spanbox/flowtable.h"
#include "primary.h"

#define MIB(b) ((double)(b) / (1 << 20))

uint64_t sbx_flows_plan(const struct sbx_primary *p, int socket)
{
	const struct sbx_flows_cfg *f = &p->cfg->flows;
	struct sbx_flowtable_mem m;
	uint64_t rings = 0, tables;
	uint32_t w, nw = 0;

	if (!sbx_flows_cfg_meters(f))
		return 0;
	sbx_flowtable_mem(f->capacity, &m);
	for (w = 0; w < p->cfg->nb_workers; w++) {
		int s = p->shm->lcores[w + 2].socket; /* a floating or unknown lcore: the primary's socket */

		nw += (s >= 0 ? s : p->fallback_socket) == socket;
	}
	if (socket == p->fallback_socket) /* the rings: created by the primary (SOCKET_ID_ANY) */
		rings = (uint64_t)p->cfg->nb_workers *
			RTE_ALIGN_CEIL(rte_ring_get_memsize_elem(sizeof(struct sbx_flow_record), SBX_FLOWS_RING_SIZE) +
				       128, RTE_CACHE_LINE_SIZE);
	tables = (uint64_t)nw * m.total;
	if (tables + rings == 0)
		return 0;
	printf("spanbox-primary: flows plan (socket %d): %u workers x a table of %u flows (keys %.1f + signatures"
	       " %.1f + flow states %.1f + %.1f = %.1f MiB) + %u rings of %u records %.1f MiB"
	       " = %.1f MiB\n", socket, nw, f->capacity, MIB(m.keys), MIB(m.signatures),
	       MIB(m.states), MIB(m.other), MIB(m.total), socket == p->fallback_socket ? p->cfg->nb_workers : 0,
	       SBX_FLOWS_RING_SIZE, MIB(rings), MIB(tables + rings));
	return tables + rings;
}
