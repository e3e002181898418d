/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One pktmbuf pool per NUMA socket: sized from what the config really needs, created before any
 * traffic, timed, and never freed while the primary runs (workers attach to it; restarting a
 * worker costs no pool rebuild).
 */
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "primary.h"

#define SBX_POOL_HEADROOM 2048 /* mbufs for bursts in flight in the primary and slack */

/* Socket of a port, 0 when the device does not know (virtual devices say SOCKET_ID_ANY). */
static int port_socket(uint16_t port_id)
{
	int s = rte_eth_dev_is_valid_port(port_id) ? rte_eth_dev_socket_id(port_id) : (int)rte_socket_id();

	return s < 0 ? 0 : s;
}

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

/* Mbufs a socket's pool must hold for the config, with each term printed. */
static uint32_t plan_pool(struct sbx_primary *p, int socket)
{
	const struct sbx_config *cfg = p->cfg;
	uint64_t desc = 0, caches, bursts = 0, rings = 0, total;
	uint16_t i;

	for (i = 0; i < cfg->nb_ports; i++) {
		uint16_t pid = p->shm->ports[i].port_id;

		if (port_socket(pid) != socket)
			continue;
		if (cfg->ports[i].kind == SBX_PORT_BRIDGED) {
			rings += (uint64_t)SBX_BRIDGE_RING_SIZE * (p->shm->ports[i].nb_rxq + p->shm->ports[i].nb_txq);
		} else {
			desc += (uint64_t)p->shm->ports[i].nb_rxq * cfg->ports[i].rx_desc +
				(uint64_t)p->shm->ports[i].nb_txq * cfg->ports[i].tx_desc;
		}
	}
	/* each lcore's cache may hold up to 1.5 x its size (rte_mempool flush threshold) */
	caches = (uint64_t)(cfg->nb_workers + 2) * cfg->pool_cache * 3 / 2;
	/* each worker holds a burst per polled queue, plus up to a burst per mirror session */
	for (i = 0; i < cfg->nb_workers; i++)
		bursts += (uint64_t)cfg->burst * (cfg->workers[i].nb_rxq + cfg->nb_mirrors);
	total = desc + caches + bursts + rings + SBX_POOL_HEADROOM;
	printf("spanbox-primary: pool plan socket %d: descriptors %llu + lcore caches %llu + bursts %llu"
	       " + bridge rings %llu + headroom %u = %llu mbufs\n",
	       socket, (unsigned long long)desc, (unsigned long long)caches,
	       (unsigned long long)bursts, (unsigned long long)rings, SBX_POOL_HEADROOM,
	       (unsigned long long)total);
	return (uint32_t)total;
}

/* Round up to 2^k - 1: the ring-based mempool is most memory-efficient at that size. */
static uint32_t round_pool_size(uint32_t n)
{
	uint32_t v = 1024;

	while (v - 1 < n)
		v <<= 1;
	return v - 1;
}

int sbx_pools_create(struct sbx_primary *p)
{
	const struct sbx_config *cfg = p->cfg;
	bool used[RTE_MAX_NUMA_NODES] = { false };
	uint32_t room = plan_data_room(cfg);
	uint16_t i;
	int s;

	used[rte_socket_id() < RTE_MAX_NUMA_NODES ? rte_socket_id() : 0] = true;
	for (i = 0; i < cfg->nb_ports; i++)
		used[port_socket(p->shm->ports[i].port_id)] = true;

	p->shm->nb_pools = 0;
	for (s = 0; s < RTE_MAX_NUMA_NODES; s++) {
		struct sbx_pool_shm *ps;
		struct rte_mempool *mp;
		uint32_t n;
		uint64_t t0;

		if (!used[s])
			continue;
		if (p->shm->nb_pools == SBX_MAX_POOLS) {
			fprintf(stderr, "spanbox-primary: more than %d sockets in use\n", SBX_MAX_POOLS);
			return -1;
		}
		n = cfg->pool_mbufs ? cfg->pool_mbufs : round_pool_size(plan_pool(p, s));
		ps = &p->shm->pools[p->shm->nb_pools];
		sbx_pool_name(s, ps->name, sizeof(ps->name));
		t0 = sbx_now_ns();
		mp = rte_pktmbuf_pool_create(ps->name, n, cfg->pool_cache, 0, (uint16_t)room, s);
		if (mp == NULL) {
			fprintf(stderr, "spanbox-primary: cannot create pool %s (%u mbufs of %u B on socket %d): %s\n",
				ps->name, n, room, s, rte_strerror(rte_errno));
			return -1;
		}
		ps->populate_ns = sbx_now_ns() - t0;
		ps->socket_id = s;
		ps->size = mp->size;
		ps->cache_size = mp->cache_size;
		ps->elt_size = mp->elt_size;
		ps->data_room = room;
		printf("spanbox-primary: pool %s: %u mbufs x %u B on socket %d, cache %u, created in %.1f ms\n",
		       ps->name, n, mp->elt_size, s, mp->cache_size, ps->populate_ns / 1e6);
		p->pools[p->shm->nb_pools] = mp;
		p->pool_socket[p->shm->nb_pools] = s;
		p->shm->nb_pools++;
	}
	sbx_pools_refresh(p);
	return 0;
}

struct rte_mempool *sbx_pool_for_socket(struct sbx_primary *p, int socket_id)
{
	uint32_t i;

	if (socket_id < 0)
		socket_id = 0;
	for (i = 0; i < p->shm->nb_pools; i++)
		if (p->pool_socket[i] == socket_id)
			return p->pools[i];
	return p->pools[0];
}

void sbx_pools_refresh(struct sbx_primary *p)
{
	uint32_t i;

	for (i = 0; i < p->shm->nb_pools; i++) {
		p->shm->pools[i].avail = rte_mempool_avail_count(p->pools[i]);
		p->shm->pools[i].in_use = rte_mempool_in_use_count(p->pools[i]);
	}
}

void sbx_pools_free(struct sbx_primary *p)
{
	uint32_t i;

	for (i = 0; i < p->shm->nb_pools; i++) {
		rte_mempool_free(p->pools[i]);
		p->pools[i] = NULL;
	}
}
