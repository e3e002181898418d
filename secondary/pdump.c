/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Captures of dpdk-dumpcap / dpdk-pdump in the worker (docs/CAPTURE.md "DPDK's own tools"). The
 * primary publishes them in the memzone (primary/pdump.c); the worker registers ethdev RX and TX
 * callbacks in its own process, so every frame it receives on the port and every frame it hands
 * to a TX queue of the port (forward and mirror queues alike) is seen. Each callback does what
 * librte_pdump's does in 22.11: the client's filter (rte_bpf_exec_burst), a copy into the
 * client's mempool (rte_pcapng_copy for dumpcap's pcapng, with the snaplen and the direction;
 * rte_pktmbuf_copy for dpdk-pdump), an enqueue to the client's ring, and the per-queue counters
 * dumpcap prints (librte_pdump's memzone "rte_pdump_stats"). A copy that does not fit the
 * client's mbufs (a 9000 B chain into small mbufs) fails cleanly and is counted as nombuf.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bpf.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_pcapng.h>
#include <rte_pdump.h>
#include <rte_ring.h>

#include "spanbox/pdump_stats.h"
#include "pdump.h"

/* What one callback needs (its user_param). */
struct qcb {
	const struct rte_eth_rxtx_callback *cb;
	uint16_t queue;
	struct sbx_pdump_cap *cap;
	struct rte_pdump_stats *stats; /* NULL: not counted */
};

struct sbx_pdump_cap {
	struct sbx_pdump_entry e; /* copied from the table */
	struct rte_bpf *bpf;      /* e.prm loaded in this process, NULL: every frame */
	uint16_t nq;
	struct qcb q[];
};

static void capture(struct qcb *qc, struct rte_mbuf **pkts, uint16_t n)
{
	const struct sbx_pdump_cap *c = qc->cap;
	struct rte_mbuf *dup[SBX_MAX_BURST > 64 ? SBX_MAX_BURST : 64];
	uint64_t rcs[RTE_DIM(dup)], ts = rte_get_tsc_cycles(), filtered = 0, nombuf = 0;
	uint16_t i, d, off = 0, m;

	for (; off < n; off = (uint16_t)(off + m)) { /* bursts longer than dup[] in slices */
		unsigned int enq;

		m = (uint16_t)RTE_MIN((unsigned int)(n - off), RTE_DIM(dup));
		d = 0;
		if (c->bpf != NULL)
			rte_bpf_exec_burst(c->bpf, (void **)(pkts + off), rcs, m);
		for (i = 0; i < m; i++) {
			struct rte_mbuf *p;

			if (c->bpf != NULL && rcs[i] == 0) {
				filtered++;
				continue;
			}
			p = c->e.pcapng ? rte_pcapng_copy(c->e.port_id, qc->queue, pkts[off + i], c->e.mp, c->e.snaplen, ts,
							  c->e.rx ? RTE_PCAPNG_DIRECTION_IN : RTE_PCAPNG_DIRECTION_OUT)
					: rte_pktmbuf_copy(pkts[off + i], c->e.mp, 0, c->e.snaplen);
			if (unlikely(p == NULL))
				nombuf++;
			else
				dup[d++] = p;
		}
		enq = d ? rte_ring_enqueue_burst(c->e.ring, (void **)dup, d, NULL) : 0;
		if (unlikely(enq < d))
			rte_pktmbuf_free_bulk(dup + enq, d - enq);
		if (qc->stats != NULL) {
			__atomic_fetch_add(&qc->stats->accepted, d, __ATOMIC_RELAXED);
			if (enq < d)
				__atomic_fetch_add(&qc->stats->ringfull, d - enq, __ATOMIC_RELAXED);
		}
	}
	if (qc->stats != NULL && (filtered || nombuf)) {
		__atomic_fetch_add(&qc->stats->filtered, filtered, __ATOMIC_RELAXED);
		__atomic_fetch_add(&qc->stats->nombuf, nombuf, __ATOMIC_RELAXED);
	}
}

static uint16_t rx_cb(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n, uint16_t max, void *arg)
{
	(void)port;
	(void)queue;
	(void)max;
	if (n)
		capture(arg, pkts, n);
	return n;
}

static uint16_t tx_cb(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	(void)port;
	(void)queue;
	if (n)
		capture(arg, pkts, n);
	return n;
}

static void cap_free(struct sbx_pdump_cap *c)
{
	uint16_t i;

	for (i = 0; i < c->nq; i++) {
		if (c->q[i].cb == NULL)
			continue;
		if (c->e.rx)
			rte_eth_remove_rx_callback(c->e.port_id, c->q[i].queue, c->q[i].cb);
		else
			rte_eth_remove_tx_callback(c->e.port_id, c->q[i].queue, c->q[i].cb);
		/* only this thread runs this process's bursts, and it is between two: nobody is in it */
		rte_free((void *)(uintptr_t)c->q[i].cb);
	}
	if (c->bpf != NULL)
		rte_bpf_destroy(c->bpf);
	free(c);
}

/* Set up capture @p e: its filter and a callback on each queue (all of the port, or e->queue). */
static struct sbx_pdump_cap *cap_new(const struct sbx_pdump_entry *e, const struct sbx_shm *shm,
				     struct sbx_pdump_stats_mz *st)
{
	uint16_t nq = e->rx ? shm->ports[e->port].nb_rxq : shm->ports[e->port].nb_txq, q0 = 0, i;
	struct sbx_pdump_cap *c;

	if (e->queue != SBX_PDUMP_ALL_QUEUES) {
		if (e->queue >= nq)
			return NULL;
		q0 = e->queue;
		nq = 1;
	}
	c = calloc(1, sizeof(*c) + nq * sizeof(c->q[0]));
	if (c == NULL)
		return NULL;
	c->e = *e;
	c->nq = nq;
	if (e->prm != NULL && (c->bpf = rte_bpf_load(e->prm)) == NULL) {
		fprintf(stderr, "spanbox-worker: capture %llu: filter does not load: %s\n", (unsigned long long)e->id,
			rte_strerror(rte_errno));
		free(c);
		return NULL;
	}
	for (i = 0; i < nq; i++) {
		struct qcb *qc = &c->q[i];

		qc->queue = (uint16_t)(q0 + i);
		qc->cap = c;
		qc->stats = st == NULL || e->port_id >= RTE_MAX_ETHPORTS || qc->queue >= RTE_MAX_QUEUES_PER_PORT ? NULL :
			    e->rx ? &st->rx[e->port_id][qc->queue] : &st->tx[e->port_id][qc->queue];
		qc->cb = e->rx ? rte_eth_add_first_rx_callback(e->port_id, qc->queue, rx_cb, qc)
			       : rte_eth_add_tx_callback(e->port_id, qc->queue, tx_cb, qc);
		if (qc->cb == NULL) {
			fprintf(stderr, "spanbox-worker: capture %llu: no callback on port %u queue %u: %s\n",
				(unsigned long long)e->id, e->port_id, qc->queue, rte_strerror(rte_errno));
			cap_free(c);
			return NULL;
		}
	}
	return c;
}

void sbx_pdump_sync(struct sbx_pdump_worker *pw, const struct sbx_shm *shm)
{
	uint64_t gen = __atomic_load_n(&shm->pdump_gen, __ATOMIC_ACQUIRE);
	const struct sbx_pdump_table *t = &shm->pdump[gen & 1];
	struct sbx_pdump_cap *keep[SBX_PDUMP_MAX];
	unsigned int i, j, nk = 0;
	uint32_t nb = RTE_MIN(t->nb, (uint32_t)SBX_PDUMP_MAX);

	if (pw->stats == NULL)
		pw->stats = sbx_pdump_stats_lookup();
	/* captures that ended go first: their client frees its ring and mempool after the answer */
	for (i = 0; i < pw->nb; i++) {
		bool found = false;

		for (j = 0; j < nb && !found; j++)
			found = t->e[j].id == pw->cap[i]->e.id;
		if (found)
			keep[nk++] = pw->cap[i];
		else
			cap_free(pw->cap[i]);
	}
	memcpy(pw->cap, keep, nk * sizeof(keep[0]));
	pw->nb = nk;
	for (j = 0; j < nb; j++) {
		bool have = false;

		for (i = 0; i < nk && !have; i++)
			have = pw->cap[i]->e.id == t->e[j].id;
		if (!have && pw->nb < SBX_PDUMP_MAX) {
			struct sbx_pdump_cap *c = cap_new(&t->e[j], shm, pw->stats);

			if (c != NULL)
				pw->cap[pw->nb++] = c;
		}
	}
	pw->gen = gen;
}

void sbx_pdump_teardown(struct sbx_pdump_worker *pw)
{
	unsigned int i;

	for (i = 0; i < pw->nb; i++)
		cap_free(pw->cap[i]);
	pw->nb = 0;
}
