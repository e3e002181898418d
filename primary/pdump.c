/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK's packet capture tools against spanbox (docs/CAPTURE.md "DPDK's own tools"): the primary
 * answers dpdk-dumpcap's and dpdk-pdump's requests (action SBX_IPC_PDUMP, DPDK 22.11's
 * "mp_pdump", struct sbx_pdump_req of spanbox/ipc.h), but the captures happen in the workers,
 * which poll the ports: librte_pdump's own server would register its RX/TX callbacks in the
 * primary, whose ethdev callbacks no worker ever runs (callbacks are per process).
 *
 * Request path: the EAL IPC thread checks the size and queues a copy of the request with the
 * sender's address (it never waits); the pdump thread takes it, validates it (the device is one
 * of our ethdev ports, the queue exists, the filter loads as DPDK BPF), writes the capture table
 * into the inactive half of shm->pdump[], bumps shm->pdump_gen and waits for a grace period of
 * the tables' QSBR variable (SBX_RCU_MEMZONE_NAME): once it ends every running worker has taken
 * the new table at a burst boundary (secondary/pdump.c registers or removes its callbacks there),
 * so an enable is answered once the workers capture, and a disable once no worker touches the
 * client's ring, mempool or filter any more (the client frees them right after the answer: the
 * "pdump disable race" DPDK had). Then it answers with rte_mp_reply(). A worker started later
 * reads the table when it starts (its first loop), so it captures what is in progress.
 *
 * The per-queue statistics dumpcap prints at its end (rte_pdump_stats()) live in librte_pdump's
 * memzone "rte_pdump_stats": rte_pdump_init() creates it here, its own action is replaced by
 * ours, and the workers count into it (secondary/pdump.c).
 *
 * A client that is gone (killed, so it never disabled) has its captures removed within about
 * SBX_PDUMP_REAP_MS: its pid is in its IPC socket's name (mp_socket_<pid>_<tsc>).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_bpf.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_memzone.h>
#include <rte_pdump.h>
#include <rte_rcu_qsbr.h>

#include "spanbox/ipc.h"
#include "spanbox/pdump_stats.h"
#include "primary.h"

#define SBX_PDUMP_QUEUE 16           /* requests waiting for the pdump thread */
#define SBX_PDUMP_GRACE_NS (3000ULL * 1000 * 1000) /* dumpcap's own request waits 5 s */
#define SBX_PDUMP_REAP_MS 500

struct pdump_msg {
	struct sbx_pdump_req req;
	char peer[108]; /* sun_path of the requester */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t tid;
	bool started, stop;
	unsigned int head, n;
	struct pdump_msg q[SBX_PDUMP_QUEUE];
} pq = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static struct sbx_primary *pp;
static struct rte_rcu_qsbr *rcu;
static uint64_t next_id = 1;
static uint64_t open_token; /* grace period still open from the last change, 0 none */

/* The pid in a peer's socket name ".../mp_socket_<pid>_<tsc>", 0 when it has none. */
static int32_t peer_pid(const char *peer)
{
	const char *s = strrchr(peer, '/');
	long v;

	s = s ? s + 1 : peer;
	if (strncmp(s, "mp_socket_", 10) != 0)
		return 0;
	v = strtol(s + 10, NULL, 10);
	return v > 0 && v < INT32_MAX ? (int32_t)v : 0;
}

static bool grace_wait(uint64_t token)
{
	uint64_t deadline = sbx_now_ns() + SBX_PDUMP_GRACE_NS;
	struct timespec ts = { 0, 100000 };

	while (rte_rcu_qsbr_check(rcu, token, false) != 1) {
		if (sbx_now_ns() > deadline)
			return false;
		nanosleep(&ts, NULL);
	}
	return true;
}

/* Publish @p t as the next table and wait for the workers. @return 0, or -EBUSY (the previous
 * change's grace period never ended: nothing published). */
static int publish(const struct sbx_pdump_table *t)
{
	uint64_t gen = __atomic_load_n(&pp->shm->pdump_gen, __ATOMIC_ACQUIRE), token;

	if (open_token != 0) {
		if (!grace_wait(open_token))
			return -EBUSY;
		open_token = 0;
	}
	pp->shm->pdump[(gen + 1) & 1] = *t;
	__atomic_store_n(&pp->shm->pdump_gen, gen + 1, __ATOMIC_RELEASE);
	token = rte_rcu_qsbr_start(rcu);
	if (!grace_wait(token)) {
		open_token = token; /* the next change waits for it before it writes */
		pp->shm->pdump_stats.late++;
		fprintf(stderr, "spanbox-primary: pdump: a worker did not take capture table %llu within %llu ms\n",
			(unsigned long long)(gen + 1), (unsigned long long)(SBX_PDUMP_GRACE_NS / 1000000));
	}
	return 0;
}

/* The index in cfg.ports of the ethdev port named @p dev, -1 none. */
static int port_of(const char *dev, uint16_t *port_id)
{
	uint16_t id, i;

	if (rte_eth_dev_get_port_by_name(dev, &id) != 0)
		return -1;
	for (i = 0; i < pp->cfg->nb_ports; i++)
		if (pp->cfg->ports[i].kind == SBX_PORT_ETHDEV && pp->shm->ports[i].port_id == id) {
			*port_id = id;
			return i;
		}
	return -1;
}

/* A new capture's counters start at 0 (dumpcap prints them at its end as this capture's): no
 * worker counts into them, the port and direction had no capture (-EEXIST otherwise). */
static void stats_reset(uint16_t port_id, uint16_t queue, bool rx)
{
	struct sbx_pdump_stats_mz *st = sbx_pdump_stats_lookup();
	unsigned int q;

	if (st == NULL || port_id >= RTE_MAX_ETHPORTS)
		return;
	for (q = 0; q < RTE_MAX_QUEUES_PER_PORT; q++)
		if (queue == SBX_PDUMP_ALL_QUEUES || q == queue)
			memset(rx ? &st->rx[port_id][q] : &st->tx[port_id][q], 0, sizeof(st->rx[0][0]));
}

static bool queues_overlap(uint16_t a, uint16_t b)
{
	return a == SBX_PDUMP_ALL_QUEUES || b == SBX_PDUMP_ALL_QUEUES || a == b;
}

/* Carry out @p r (already of the right size). @return 0 or a negative errno. */
static int apply(const struct sbx_pdump_req *r, int32_t client)
{
	const struct sbx_pdump_table *cur = &pp->shm->pdump[__atomic_load_n(&pp->shm->pdump_gen, __ATOMIC_ACQUIRE) & 1];
	struct sbx_pdump_table t = { 0 };
	char dev[SBX_PDUMP_DEV_NAME_LEN];
	uint16_t port_id = 0;
	int port, dir, rc;
	uint32_t i, removed = 0;

	memcpy(dev, r->device, sizeof(dev));
	dev[sizeof(dev) - 1] = '\0';
	if ((r->ver != SBX_PDUMP_V1 && r->ver != SBX_PDUMP_V2) ||
	    (r->op != SBX_PDUMP_OP_ENABLE && r->op != SBX_PDUMP_OP_DISABLE) ||
	    (r->flags & (RTE_PDUMP_FLAG_RX | RTE_PDUMP_FLAG_TX)) == 0)
		return -EINVAL;
	port = port_of(dev, &port_id);
	if (port < 0) {
		fprintf(stderr, "spanbox-primary: pdump: %s is not an ethdev port of this appliance\n", dev);
		return -EINVAL;
	}
	if (r->queue != SBX_PDUMP_ALL_QUEUES &&
	    (((r->flags & RTE_PDUMP_FLAG_RX) && r->queue >= pp->shm->ports[port].nb_rxq) ||
	     ((r->flags & RTE_PDUMP_FLAG_TX) && r->queue >= pp->shm->ports[port].nb_txq)))
		return -EINVAL;
	if (r->op == SBX_PDUMP_OP_DISABLE) {
		for (i = 0; i < cur->nb; i++) {
			const struct sbx_pdump_entry *e = &cur->e[i];
			bool match = e->port == port && queues_overlap(e->queue, r->queue) &&
				     (r->flags & (e->rx ? RTE_PDUMP_FLAG_RX : RTE_PDUMP_FLAG_TX));

			if (match)
				removed++;
			else
				t.e[t.nb++] = *e;
		}
		if (removed == 0)
			return -EINVAL; /* as librte_pdump: no capture to disable */
		rc = publish(&t);
		if (rc == 0)
			pp->shm->pdump_stats.disables++;
		return rc;
	}
	if (r->ring == NULL || r->mp == NULL)
		return -EINVAL;
	if (r->prm != NULL) { /* a filter the workers could not load is refused here, not there */
		struct rte_bpf *bpf = rte_bpf_load(r->prm);

		if (bpf == NULL) {
			fprintf(stderr, "spanbox-primary: pdump: the filter of the capture on %s does not load: %s\n",
				dev, rte_strerror(rte_errno));
			return -EINVAL;
		}
		rte_bpf_destroy(bpf);
	}
	t = *cur;
	for (dir = 0; dir < 2; dir++) {
		uint32_t flag = dir == 0 ? RTE_PDUMP_FLAG_RX : RTE_PDUMP_FLAG_TX;
		struct sbx_pdump_entry *e;

		if (!(r->flags & flag))
			continue;
		for (i = 0; i < cur->nb; i++)
			if (cur->e[i].port == port && cur->e[i].rx == (dir == 0) && queues_overlap(cur->e[i].queue, r->queue))
				return -EEXIST; /* as librte_pdump: one capture per queue and direction */
		if (t.nb >= SBX_PDUMP_MAX)
			return -ENOSPC;
		stats_reset(port_id, r->queue, dir == 0);
		e = &t.e[t.nb++];
		memset(e, 0, sizeof(*e));
		e->id = next_id++;
		e->port = (uint16_t)port;
		e->port_id = port_id;
		e->queue = r->queue;
		e->rx = dir == 0;
		e->pcapng = r->ver == SBX_PDUMP_V2 || (r->flags & RTE_PDUMP_FLAG_PCAPNG);
		e->snaplen = r->snaplen == 0 ? UINT32_MAX : r->snaplen;
		e->client_pid = client;
		e->ring = r->ring;
		e->mp = r->mp;
		e->prm = r->prm;
	}
	rc = publish(&t);
	if (rc == 0)
		pp->shm->pdump_stats.enables++;
	return rc;
}

/* Remove the captures of clients that are gone. */
static void reap(void)
{
	const struct sbx_pdump_table *cur = &pp->shm->pdump[__atomic_load_n(&pp->shm->pdump_gen, __ATOMIC_ACQUIRE) & 1];
	struct sbx_pdump_table t = { 0 };
	uint32_t i, gone = 0;

	for (i = 0; i < cur->nb; i++) {
		int32_t pid = cur->e[i].client_pid;

		if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH)
			gone++;
		else
			t.e[t.nb++] = cur->e[i];
	}
	if (gone && publish(&t) == 0) {
		pp->shm->pdump_stats.reaped += gone;
		fprintf(stderr, "spanbox-primary: pdump: removed %u capture%s of a client that is gone\n", gone,
			gone == 1 ? "" : "s");
	}
}

static void *pdump_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pq.lock);
	while (!pq.stop) {
		struct pdump_msg m;
		struct sbx_pdump_reply rep;
		struct timespec until;

		if (pq.n == 0) {
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += SBX_PDUMP_REAP_MS * 1000000L;
			until.tv_sec += until.tv_nsec / 1000000000L;
			until.tv_nsec %= 1000000000L;
			if (pthread_cond_timedwait(&pq.cond, &pq.lock, &until) == ETIMEDOUT) {
				pthread_mutex_unlock(&pq.lock);
				reap();
				pthread_mutex_lock(&pq.lock);
			}
			continue;
		}
		m = pq.q[pq.head];
		pq.head = (pq.head + 1) % SBX_PDUMP_QUEUE;
		pq.n--;
		pthread_mutex_unlock(&pq.lock);
		rep = (struct sbx_pdump_reply){ .ver = m.req.ver, .res_op = m.req.op };
		rep.err_value = apply(&m.req, peer_pid(m.peer));
		if (rep.err_value != 0)
			pp->shm->pdump_stats.refused++;
		sbx_ipc_reply(SBX_IPC_PDUMP, &rep, sizeof(rep), m.peer);
		pthread_mutex_lock(&pq.lock);
	}
	pthread_mutex_unlock(&pq.lock);
	return NULL;
}

/* EAL IPC thread: check the size, queue the request; never waits. */
static int on_request(const struct rte_mp_msg *msg, const void *peer)
{
	struct sbx_pdump_reply rep = { .err_value = -EINVAL };
	bool queued = false;

	if (msg->len_param == (int)sizeof(struct sbx_pdump_req)) {
		const struct sbx_pdump_req *r = (const void *)msg->param;

		rep.ver = r->ver;
		rep.res_op = r->op;
		rep.err_value = -EBUSY;
		pthread_mutex_lock(&pq.lock);
		if (pq.n < SBX_PDUMP_QUEUE && !pq.stop) {
			struct pdump_msg *m = &pq.q[(pq.head + pq.n) % SBX_PDUMP_QUEUE];

			memcpy(&m->req, r, sizeof(*r));
			snprintf(m->peer, sizeof(m->peer), "%s", (const char *)peer);
			pq.n++;
			queued = true;
			pthread_cond_signal(&pq.cond);
		}
		pthread_mutex_unlock(&pq.lock);
	}
	if (queued)
		return 0; /* the pdump thread answers */
	pp->shm->pdump_stats.refused++;
	return sbx_ipc_reply(SBX_IPC_PDUMP, &rep, sizeof(rep), peer);
}

int sbx_pdump_init(struct sbx_primary *p)
{
	const struct rte_memzone *mz = rte_memzone_lookup(SBX_RCU_MEMZONE_NAME);

	pp = p;
	if (mz == NULL) {
		fprintf(stderr, "spanbox-primary: pdump: memzone %s not found\n", SBX_RCU_MEMZONE_NAME);
		return -1;
	}
	rcu = mz->addr;
	memset(p->shm->pdump, 0, sizeof(p->shm->pdump));
	p->shm->pdump_gen = 0;
	/* librte_pdump's statistics memzone (dumpcap reads it); its server is replaced by ours */
	if (rte_pdump_init() != 0) {
		fprintf(stderr, "spanbox-primary: pdump: rte_pdump_init: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	rte_mp_action_unregister(SBX_IPC_PDUMP);
	pq.stop = false;
	if (pthread_create(&pq.tid, NULL, pdump_thread, NULL) != 0) {
		fprintf(stderr, "spanbox-primary: pdump: cannot start its thread\n");
		return -1;
	}
	pq.started = true;
	if (rte_mp_action_register(SBX_IPC_PDUMP, on_request) != 0) {
		fprintf(stderr, "spanbox-primary: cannot register IPC action %s\n", SBX_IPC_PDUMP);
		return -1;
	}
	return 0;
}

void sbx_pdump_fini(void)
{
	if (pp == NULL)
		return;
	rte_mp_action_unregister(SBX_IPC_PDUMP);
	if (pq.started) {
		pthread_mutex_lock(&pq.lock);
		pq.stop = true;
		pthread_cond_signal(&pq.cond);
		pthread_mutex_unlock(&pq.lock);
		pthread_join(pq.tid, NULL);
		pq.started = false;
	}
	/* requests still queued: answered, nothing done */
	while (pq.n > 0) {
		struct pdump_msg *m = &pq.q[pq.head];
		struct sbx_pdump_reply rep = { .ver = m->req.ver, .res_op = m->req.op, .err_value = -EBUSY };

		sbx_ipc_reply(SBX_IPC_PDUMP, &rep, sizeof(rep), m->peer);
		pq.head = (pq.head + 1) % SBX_PDUMP_QUEUE;
		pq.n--;
	}
	/* the stats memzone stays until EAL cleanup: a worker may still count into it */
}

unsigned int sbx_pdump_active(const struct sbx_shm *shm)
{
	return shm->pdump[__atomic_load_n(&shm->pdump_gen, __ATOMIC_ACQUIRE) & 1].nb;
}
