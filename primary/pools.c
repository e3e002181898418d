/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One pktmbuf pool per NUMA socket that serves a port: sized by a capacity plan whose every term is
 * shown (log, shm, API), checked against the hugepages EAL can still get, created before any
 * traffic, timed (optionally beside a first-touch memset of the same bytes, the memory bound of
 * populating it), and never freed while the primary runs (workers attach to it; restarting a
 * worker costs no pool rebuild). NOTES section 4.
 */
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "spanbox/decap.h"
#include "spanbox/hostinfo.h"
#include "spanbox/poolsize.h"
#include "spanbox/pool_mem.h"
#include "primary.h"

#define SBX_PRIMARY_READ_BURST 64 /* mbufs the primary holds per bridged port (rx_pending) */
#define MIB(b) ((double)(b) / (1 << 20))

/* Data room that holds the largest frame of any port in one segment. */
static uint32_t plan_data_room(const struct sbx_config *cfg)
{
	uint32_t room = RTE_MBUF_DEFAULT_BUF_SIZE;
	uint16_t i;

	for (i = 0; i < cfg->nb_ports; i++) {
		/* MTU + Ethernet header + two VLAN tags + CRC */
		uint32_t need = (uint32_t)cfg->ports[i].mtu + RTE_ETHER_HDR_LEN + 8 + RTE_ETHER_CRC_LEN +
				RTE_PKTMBUF_HEADROOM;
		if (need > room)
			room = need;
	}
	return room;
}

/* Mirror sessions whose destination is port @p port. */
static uint32_t sessions_to(const struct sbx_config *cfg, uint16_t port)
{
	uint32_t n = 0;
	uint16_t m;

	for (m = 0; m < cfg->nb_mirrors; m++)
		n += cfg->mirrors[m].dst_port == port;
	for (m = 0; m < cfg->nb_maps; m++) /* maps are sessions too (issue #27) */
		n += cfg->maps[m].s.dst_port == port;
	return n;
}

/*
 * The plan of the pool on @p socket: what the ports it serves (ports[].pool_socket == socket),
 * the workers and the primary can hold at once. The queue counts are those sbx_ports_lookup()
 * settled (shm ports[]), so they match what is set up.
 */
static void plan_pool(const struct sbx_primary *p, int socket, struct sbx_pool_plan *pl)
{
	const struct sbx_config *cfg = p->cfg;
	const uint64_t cache_max = (uint64_t)cfg->pool_cache * 3 / 2; /* rte_mempool flush threshold */
	bool bridged = false;
	uint16_t i, w, q;

	memset(pl, 0, sizeof(*pl));
	for (i = 0; i < cfg->nb_ports; i++) {
		const struct sbx_port_shm *ps = &p->shm->ports[i];
		const struct sbx_port_cfg *pc = &cfg->ports[i];
		uint32_t fwd_txq = RTE_MIN(ps->nb_txq, cfg->nb_workers);

		if (ps->pool_socket != socket)
			continue;
		pl->ports++;
		if (pc->kind == SBX_PORT_PCAP_FILE) {
			bridged = true;
			pl->rings += (uint64_t)SBX_BRIDGE_RING_SIZE * (ps->nb_rxq + ps->nb_txq) + SBX_PRIMARY_READ_BURST;
		} else {
			pl->rx_desc += (uint64_t)ps->nb_rxq * pc->rx_desc;
			pl->tx_desc += (uint64_t)fwd_txq * pc->tx_desc;
			/* every port has its mirror queues: a session may be added at run time */
			pl->mirror_tx += (uint64_t)(ps->nb_txq - fwd_txq) * pc->tx_desc;
		}
		/* outer fragments its reassembly tables may hold, one per worker (docs/INGRESS.md) */
		if (pc->ingress.nb_decap > 0)
			pl->reassembly += (uint64_t)cfg->nb_workers * SBX_REASM_FLOWS * SBX_REASM_MAX_FRAGS;
		/* copies a worker builds for a session before handing them to the destination queue */
		pl->mirror_tx += (uint64_t)cfg->nb_workers * cfg->burst * sessions_to(cfg, i);
	}
	if (bridged) /* the primary allocates for pcap reads: its own lcore cache */
		pl->rings += cache_max;
	pl->workers = cfg->nb_workers;
	pl->lcore_caches = (uint64_t)cfg->nb_workers * cache_max;
	for (w = 0; w < cfg->nb_workers; w++)
		for (q = 0; q < p->shm->placement[w].nb_rxq; q++)
			if (p->shm->ports[p->shm->placement[w].rxq[q].port].pool_socket == socket)
				pl->bursts += cfg->burst;
	pl->headroom = cfg->pool_headroom;
	pl->total = pl->rx_desc + pl->tx_desc + pl->mirror_tx + pl->lcore_caches + pl->bursts + pl->rings +
		    pl->reassembly + pl->headroom;
}

static void print_plan(FILE *f, const char *name, int socket, const struct sbx_pool_plan *pl)
{
	fprintf(f,
		"spanbox-primary: pool plan %s (socket %d, %u ports, %u workers): rx_desc %llu + tx_desc %llu"
		" + mirror_tx %llu + lcore_caches %llu + bursts %llu + rings %llu + reassembly %llu + headroom %llu"
		" = %llu mbufs\n",
		name, socket, pl->ports, pl->workers, (unsigned long long)pl->rx_desc,
		(unsigned long long)pl->tx_desc, (unsigned long long)pl->mirror_tx,
		(unsigned long long)pl->lcore_caches, (unsigned long long)pl->bursts,
		(unsigned long long)pl->rings, (unsigned long long)pl->reassembly, (unsigned long long)pl->headroom,
		(unsigned long long)pl->total);
}

/*
 * The plan of the indirect-mbuf pool beside the pool of plan @p pl, mbufs: a shared copy takes one
 * indirect mbuf per segment of its frame, and lives where a copy does (mirror TX descriptors, the
 * workers' copy buffers: mirror_tx) or in an lcore cache; plus pool.headroom.
 */
static uint64_t plan_ind_pool(const struct sbx_pool_plan *pl)
{
	return pl->mirror_tx + pl->lcore_caches + pl->headroom;
}

/* Round up to 2^k - 1: the ring-based mempool is most memory-efficient at that size. */
static uint32_t round_pool_size(uint64_t n)
{
	uint64_t v = 1024;

	while (v - 1 < n && v < (1ULL << 31))
		v <<= 1;
	return (uint32_t)(v - 1);
}


/* The optional first-touch memset of @p bytes on fresh pages of the pool's socket, into @p ps. */
static void measure_memset(struct sbx_pool_shm *ps, uint64_t bytes, uint64_t page_sz, int socket)
{
	struct sbx_memset_result r;
	char err[sizeof(ps->memset_error)];

	if (sbx_memset_probe(bytes, page_sz, socket, &r, err, sizeof(err)) != 0) {
		ps->memset_status = -1;
		snprintf(ps->memset_error, sizeof(ps->memset_error), "%s", err);
		printf("spanbox-primary: pool %s: first-touch memset not measured: %s\n", ps->name, err);
		return;
	}
	ps->memset_status = 1;
	ps->memset_ns = r.ns;
	ps->memset_bytes = r.bytes;
	ps->memset_page_size = r.page_size;
	printf("spanbox-primary: pool %s: first-touch memset of %.1f MiB on fresh %llu KiB pages: %.1f ms (%.2f GB/s)\n",
	       ps->name, MIB(r.bytes), (unsigned long long)(r.page_size >> 10), r.ns / 1e6,
	       r.ns ? (double)r.bytes / (double)r.ns : 0.0);
}

/* Create the indirect-mbuf pool of pool @p i, @p n mbufs on @p socket (no data room, no private
 * data), timed, into p->ind_pools[i]. @return 0 or -1 (message printed). */
static int create_ind_pool(struct sbx_primary *p, uint32_t i, uint32_t n, int socket)
{
	struct sbx_ind_pool_shm *ip = &p->shm->pools[i].indirect;
	struct sbx_pool_mem mem;
	struct rte_mempool *mp;
	uint64_t t0 = sbx_now_ns();

	mp = rte_pktmbuf_pool_create(ip->name, n, p->cfg->pool_cache, 0, 0, socket);
	if (mp == NULL) {
		fprintf(stderr, "spanbox-primary: cannot create pool %s (%u indirect mbufs on socket %d): %s\n",
			ip->name, n, socket, rte_strerror(rte_errno));
		return -1;
	}
	ip->populate_ns = sbx_now_ns() - t0;
	mem = sbx_pool_mem(mp);
	ip->bytes = mem.bytes;
	ip->size = mp->size;
	ip->cache_size = mp->cache_size;
	ip->elt_size = mp->elt_size;
	printf("spanbox-primary: pool %s: %u indirect mbufs x %u B on socket %d, cache %u: %.1f MiB, created in"
	       " %.1f ms\n", ip->name, n, mp->elt_size, socket, mp->cache_size, MIB(ip->bytes), ip->populate_ns / 1e6);
	p->ind_pools[i] = mp;
	return 0;
}

int sbx_pools_create(struct sbx_primary *p)
{
	const struct sbx_config *cfg = p->cfg;
	uint32_t room = plan_data_room(cfg), n[RTE_MAX_NUMA_NODES] = { 0 }, ind_n[RTE_MAX_NUMA_NODES] = { 0 };
	struct sbx_pool_estimate est[RTE_MAX_NUMA_NODES], ind_est;
	bool used[RTE_MAX_NUMA_NODES] = { false }, refused = false;
	uint16_t i;
	int s;

	for (i = 0; i < cfg->nb_ports; i++)
		used[p->shm->ports[i].pool_socket] = true;

	/* 1. the plan of every pool, and its size */
	p->shm->nb_pools = 0;
	for (s = 0; s < RTE_MAX_NUMA_NODES; s++) {
		struct sbx_pool_shm *ps;

		if (!used[s])
			continue;
		if (p->shm->nb_pools == SBX_MAX_POOLS) {
			fprintf(stderr, "spanbox-primary: more than %d sockets in use\n", SBX_MAX_POOLS);
			return -1;
		}
		ps = &p->shm->pools[p->shm->nb_pools];
		p->pool_socket[p->shm->nb_pools++] = s;
		sbx_pool_name(s, ps->name, sizeof(ps->name));
		ps->socket_id = s;
		plan_pool(p, s, &ps->plan);
		/* a refusal prints the plan on stderr, beside its reason */
		print_plan(cfg->pool_mbufs == 0 || cfg->pool_mbufs >= ps->plan.total || cfg->pool_force ? stdout
													  : stderr,
			   ps->name, s, &ps->plan);
		if (cfg->pool_mbufs == 0) {
			n[s] = round_pool_size(ps->plan.total);
			ps->size_source = SBX_POOL_SIZE_PLAN;
			printf("spanbox-primary: pool %s: %u mbufs (the plan rounded up to 2^k - 1)\n", ps->name, n[s]);
		} else if (cfg->pool_mbufs >= ps->plan.total) {
			n[s] = cfg->pool_mbufs;
			ps->size_source = SBX_POOL_SIZE_CONFIG;
			printf("spanbox-primary: pool %s: %u mbufs (pool.mbufs, at least the plan)\n", ps->name, n[s]);
		} else if (cfg->pool_force) {
			n[s] = cfg->pool_mbufs;
			ps->size_source = SBX_POOL_SIZE_FORCED;
			sbx_warn(p, "pool", "pool %s: pool.mbufs %u is below the plan of %llu mbufs (pool.force):"
				 " queues may find it empty under load (rx_nombuf, drop_nombuf)",
				 ps->name, cfg->pool_mbufs, (unsigned long long)ps->plan.total);
		} else {
			fprintf(stderr,
				"spanbox-primary: pool %s: pool.mbufs %u is below the plan of %llu mbufs: refused"
				" (raise pool.mbufs to at least %llu, remove it to use the plan, or set pool.force: true)\n",
				ps->name, cfg->pool_mbufs, (unsigned long long)ps->plan.total,
				(unsigned long long)ps->plan.total);
			refused = true;
		}
	}
	if (refused)
		return -2;
	for (i = 0; i < p->shm->nb_pools; i++) {
		struct sbx_pool_shm *ps = &p->shm->pools[i];

		s = p->pool_socket[i];
		ps->indirect.plan_total = plan_ind_pool(&ps->plan);
		ind_n[s] = round_pool_size(ps->indirect.plan_total);
		sbx_pool_ind_name(s, ps->indirect.name, sizeof(ps->indirect.name));
		printf("spanbox-primary: pool %s: mirror_tx %llu + lcore_caches %llu + headroom %llu = %llu indirect"
		       " mbufs: %u (rounded up to 2^k - 1)\n", ps->indirect.name, (unsigned long long)ps->plan.mirror_tx,
		       (unsigned long long)ps->plan.lcore_caches, (unsigned long long)ps->plan.headroom,
		       (unsigned long long)ps->indirect.plan_total, ind_n[s]);
	}

	/* 2. the hugepages of every socket, before any pool takes them */
	for (i = 0; i < p->shm->nb_pools; i++) {
		struct sbx_pool_shm *ps = &p->shm->pools[i];

		s = p->pool_socket[i];
		sbx_pool_estimate(n[s], cfg->pool_cache, (uint16_t)room, sbx_hugepages_eal_page_size(s), &est[s]);
		sbx_pool_estimate(ind_n[s], cfg->pool_cache, 0, sbx_hugepages_eal_page_size(s), &ind_est);
		ps->need_bytes = est[s].total + ind_est.total;
		ps->flows_bytes = sbx_flows_plan(p, s); /* the workers' flow tables there (flowplan.c) */
		ps->need_bytes += ps->flows_bytes;
		if (sbx_hugepages_check(p, s, ps->need_bytes, &ps->heap_free_bytes, &ps->free_huge_bytes) != 0) {
			fprintf(stderr, "spanbox-primary: pool %s: %u mbufs x %llu B = %.1f MiB of objects + %.1f MiB"
				" ring and header\n", ps->name, n[s], (unsigned long long)est[s].obj_size,
				MIB(est[s].obj_bytes), MIB(est[s].ring_bytes + est[s].header_bytes));
			return -2;
		}
	}

	/* 3. create each pool, timed (after the optional memset bound on fresh pages) */
	for (i = 0; i < p->shm->nb_pools; i++) {
		struct sbx_pool_shm *ps = &p->shm->pools[i];
		struct sbx_pool_mem mem;
		struct rte_mempool *mp;
		uint64_t t0, heap0;

		s = p->pool_socket[i];
		if (cfg->pool_measure_memset)
			measure_memset(ps, est[s].obj_bytes, sbx_hugepages_eal_page_size(s), s);
		heap0 = sbx_heap_total_bytes(s);
		t0 = sbx_now_ns();
		mp = rte_pktmbuf_pool_create(ps->name, n[s], cfg->pool_cache, 0, (uint16_t)room, s);
		if (mp == NULL) {
			fprintf(stderr, "spanbox-primary: cannot create pool %s (%u mbufs of %u B on socket %d): %s\n",
				ps->name, n[s], room, s, rte_strerror(rte_errno));
			return -1;
		}
		ps->populate_ns = sbx_now_ns() - t0;
		ps->heap_grow_bytes = sbx_heap_total_bytes(s) - heap0;
		mem = sbx_pool_mem(mp);
		ps->bytes = mem.bytes;
		ps->hugepage_size = mem.page_sz;
		ps->size = mp->size;
		ps->cache_size = mp->cache_size;
		ps->elt_size = mp->elt_size;
		ps->data_room = room;
		printf("spanbox-primary: pool %s: %u mbufs x %u B on socket %d, cache %u: %.1f MiB on %llu KiB pages"
		       " (%.1f MiB of them fresh), created in %.1f ms",
		       ps->name, n[s], mp->elt_size, s, mp->cache_size, MIB(ps->bytes),
		       (unsigned long long)(ps->hugepage_size >> 10), MIB(ps->heap_grow_bytes), ps->populate_ns / 1e6);
		if (ps->memset_status == 1 && ps->memset_ns)
			printf("; first-touch memset bound %.1f ms, creation / memset %.2f",
			       ps->memset_ns / 1e6, (double)ps->populate_ns / (double)ps->memset_ns);
		printf("\n");
		p->pools[i] = mp;
		if (create_ind_pool(p, i, ind_n[s], s) != 0)
			return -1;
	}
	sbx_pools_refresh(p);
	return 0;
}

struct rte_mempool *sbx_pool_for_socket(struct sbx_primary *p, int socket_id)
{
	uint32_t i;

	if (socket_id < 0)
		socket_id = p->fallback_socket;
	for (i = 0; i < p->shm->nb_pools; i++)
		if (p->pool_socket[i] == socket_id)
			return p->pools[i];
	for (i = 0; i < p->shm->nb_pools; i++)
		if (p->pool_socket[i] == p->fallback_socket)
			return p->pools[i];
	return p->pools[0];
}

void sbx_pools_refresh(struct sbx_primary *p)
{
	uint32_t i;

	for (i = 0; i < p->shm->nb_pools; i++) {
		if (p->pools[i] == NULL)
			continue;
		p->shm->pools[i].avail = rte_mempool_avail_count(p->pools[i]);
		p->shm->pools[i].in_use = rte_mempool_in_use_count(p->pools[i]);
		if (p->ind_pools[i] == NULL)
			continue;
		p->shm->pools[i].indirect.avail = rte_mempool_avail_count(p->ind_pools[i]);
		p->shm->pools[i].indirect.in_use = rte_mempool_in_use_count(p->ind_pools[i]);
	}
}

void sbx_pools_free(struct sbx_primary *p)
{
	uint32_t i;

	for (i = 0; i < p->shm->nb_pools; i++) {
		rte_mempool_free(p->pools[i]);
		rte_mempool_free(p->ind_pools[i]);
		p->pools[i] = NULL;
		p->ind_pools[i] = NULL;
	}
}
