/* SPDX-License-Identifier: BSD-3-Clause */
/* The pool audit (pool_audit.h). */
#include <string.h>

#include <rte_mempool.h>
#include <rte_ring.h>

#include "pool_audit.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

uint64_t mgmt_mempool_cached(const struct rte_mempool *mp)
{
	uint64_t n = 0;
	unsigned int l;

	if (mp->cache_size)
		for (l = 0; l < RTE_MAX_LCORE; l++)
			n += mp->local_cache[l].len;
	return n;
}

/* The free objects of @p mp: in its ring and in the lcore caches (rte_mempool_avail_count() is
 * both), and its populated size. */
static void free_split(const struct rte_mempool *mp, uint64_t *populated, uint64_t *in_ring, uint64_t *in_caches)
{
	uint64_t avail = rte_mempool_avail_count(mp);

	*in_caches = mgmt_mempool_cached(mp);
	*in_ring = avail > *in_caches ? avail - *in_caches : 0;
	*populated = mp->populated_size;
}

int mgmt_ind_pool_audit(const struct sbx_shm *shm, uint32_t i, struct mgmt_ind_pool_audit *a)
{
	const struct sbx_ind_pool_shm *ip = &shm->pools[i].indirect;
	struct rte_mempool *mp = ip->name[0] ? rte_mempool_lookup(ip->name) : NULL;

	memset(a, 0, sizeof(*a));
	if (mp == NULL)
		return -1;
	free_split(mp, &a->populated, &a->in_ring, &a->in_caches);
	a->in_flight = (int64_t)a->populated - (int64_t)a->in_ring - (int64_t)a->in_caches;
	return 0;
}

int mgmt_pool_audit(const struct sbx_shm *shm, uint32_t i, struct mgmt_pool_audit *a)
{
	const struct sbx_pool_shm *ps = &shm->pools[i];
	struct rte_mempool *mp = rte_mempool_lookup(ps->name);
	unsigned int q;
	uint16_t p, w;

	memset(a, 0, sizeof(*a));
	if (mp == NULL)
		return -1;
	free_split(mp, &a->populated, &a->in_ring, &a->in_caches);
	for (p = 0; p < MIN(shm->cfg.nb_ports, SBX_MAX_PORTS); p++) {
		const struct sbx_port_shm *pp = &shm->ports[p];

		if (shm->cfg.ports[p].kind != SBX_PORT_PCAP_FILE)
			continue;
		for (q = 0; q < RTE_DIM(pp->rx_ring); q++) {
			struct rte_ring *r = pp->rx_ring[q][0] ? rte_ring_lookup(pp->rx_ring[q]) : NULL;
			a->in_rings += r ? rte_ring_count(r) : 0;
		}
		for (q = 0; q < RTE_DIM(pp->tx_ring); q++) {
			struct rte_ring *r = pp->tx_ring[q][0] ? rte_ring_lookup(pp->tx_ring[q]) : NULL;
			a->in_rings += r ? rte_ring_count(r) : 0;
		}
	}
	for (w = 0; w < MIN(shm->cfg.nb_workers, SBX_MAX_WORKERS); w++) {
		a->in_workers += sbx_shm_worker(shm, w)->stats.held;
		a->in_reasm += sbx_shm_worker(shm, w)->stats.reasm_held;
		a->recovered += sbx_shm_worker(shm, w)->recovered_mbufs;
	}
	a->rx_held = ps->rx_held;
	a->unexplained = (int64_t)a->populated - (int64_t)a->in_ring - (int64_t)a->in_caches -
			 (int64_t)a->rx_held - (int64_t)a->in_rings - (int64_t)a->in_workers - (int64_t)a->in_reasm;
	return 0;
}
