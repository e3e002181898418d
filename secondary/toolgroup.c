/* SPDX-License-Identifier: BSD-3-Clause */
/* The data plane of tool groups in a worker (toolgroup.h). */
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ring.h>

#include "toolgroup.h"

/* true when worker @p w polls port @p port (its placement). */
static bool polls(const struct sbx_shm *shm, unsigned int w, uint16_t port)
{
	const struct sbx_worker_rxqs *r = &shm->placement[w];

	for (uint16_t i = 0; i < r->nb_rxq && i < SBX_MAX_RXQ_PER_WORKER; i++)
		if (r->rxq[i].port == port)
			return true;
	return false;
}

/* true when worker @p w can make copies of session @p m for group @p group: @p m goes to it and @p w
 * polls an RX source of @p m, or the cross-connect peer of a TX source. */
static bool session_sends(const struct sbx_shm *shm, const struct sbx_config *cfg, unsigned int w,
			  const struct sbx_mirror_cfg *m, unsigned int group)
{
	if (m->dst_kind != SBX_DST_GROUP || m->dst_group != group)
		return false;
	for (uint16_t k = 0; k < m->nb_sources; k++) {
		int16_t peer = sbx_config_peer(cfg, m->sources[k].port);

		if (((m->sources[k].direction & SBX_DIR_RX) && polls(shm, w, m->sources[k].port)) ||
		    ((m->sources[k].direction & SBX_DIR_TX) && peer >= 0 && polls(shm, w, (uint16_t)peer)))
			return true;
	}
	return false;
}

/* Workers that can make copies for group @p group of @p cfg: they poll an RX source of a session
 * to it, or the cross-connect peer of a TX source (the frames they send there). At least 1. */
static unsigned int senders(const struct sbx_shm *shm, const struct sbx_config *cfg, unsigned int group)
{
	unsigned int w, n = 0;
	uint16_t i;

	for (w = 0; w < cfg->nb_workers; w++) {
		bool yes = false;

		for (i = 0; i < cfg->nb_mirrors && !yes; i++)
			yes = session_sends(shm, cfg, w, &cfg->mirrors[i], group);
		for (i = 0; i < cfg->nb_maps && !yes; i++) /* maps are sessions too (issue #27) */
			yes = session_sends(shm, cfg, w, &cfg->maps[i].s, group);
		n += yes;
	}
	return n ? n : 1;
}

/* Token bucket @p b at part @p frac (0..1) of @p per_s tokens a second (0: none); its tokens kept
 * (at most the new cap). */
static void bucket_share(struct sbx_token_bucket *b, uint64_t per_s, double frac, double min_cap)
{
	double r = (double)per_s * frac;

	b->rate = r / (double)rte_get_tsc_hz();
	b->cap = r / 10 > min_cap ? r / 10 : min_cap; /* 100 ms of the rate (a worker off its CPU that long loses nothing), at least min_cap */
	if (b->tokens > b->cap)
		b->tokens = b->cap;
}

/* A token bucket of @p per_s tokens a second (0: none), shared by @p share workers, full. */
static void bucket_init(struct sbx_token_bucket *b, uint64_t per_s, unsigned int share, double min_cap)
{
	bucket_share(b, per_s, 1.0 / share, min_cap);
	b->tokens = b->cap;
}

#define PPS_MIN_CAP 8.0              /* tokens of a pps bucket at least: a burst of 8 copies */
#define BPS_MIN_CAP (8.0 * 9600 * 2) /* bits of a bps bucket at least: two jumbo frames */

/* Take this worker's shares of every member's rate limits, as the primary last computed them from
 * every worker's demand (toolgroups.c there; 0: not yet, the start share stays). */
static void take_shares(struct sbx_toolgroup_rt *g)
{
	for (uint8_t k = 0; k < g->nb; k++) {
		struct sbx_toolgroup_member *m = &g->m[k];
		uint32_t fp = __atomic_load_n(m->share_pps, __ATOMIC_RELAXED);
		uint32_t fb = __atomic_load_n(m->share_bps, __ATOMIC_RELAXED);

		if (fp != 0 && g->rate_pps != 0)
			bucket_share(&m->pps, g->rate_pps, fp / 1e6, PPS_MIN_CAP);
		if (fb != 0 && g->rate_bps != 0)
			bucket_share(&m->bps, g->rate_bps, fb / 1e6, BPS_MIN_CAP);
	}
}

int sbx_toolgroup_setup(struct sbx_toolgroup_rt *g, struct sbx_shm *shm, const struct sbx_tables *t,
			unsigned int group, unsigned int worker, uint64_t wait_cycles, char *err, size_t errlen)
{
	const struct sbx_config *cfg = &t->cfg;
	const struct sbx_tool_group_cfg *gc;
	unsigned int slot, share;
	uint16_t q = sbx_mirror_txq(cfg, worker);
	uint8_t k;

	memset(g, 0, sizeof(*g));
	if (group >= cfg->nb_tool_groups || t->gslot[group] >= shm->layout.nb_group_slots ||
	    cfg->tool_groups[group].nb_members > shm->layout.group_members) {
		snprintf(err, errlen, "tool_groups[%u]: no such group or slot", group);
		return -1;
	}
	gc = &cfg->tool_groups[group];
	slot = t->gslot[group];
	share = senders(shm, cfg, group);
	g->buckets = sbx_shm_group(shm, slot)->buckets;
	g->gc = sbx_shm_group_ctr(shm, worker, slot);
	g->nb = gc->nb_members;
	g->fields = gc->hash == SBX_GROUP_HASH_2TUPLE ? SBX_FLOW_HASH_2TUPLE : SBX_FLOW_HASH_5TUPLE;
	g->limited = gc->rate_pps != 0 || gc->rate_bps != 0;
	g->last_tsc = rte_rdtsc();
	g->wait_cycles = wait_cycles;
	g->rate_pps = gc->rate_pps;
	g->rate_bps = gc->rate_bps;
	g->rebalance_cycles = rte_get_tsc_hz() * SBX_GROUP_REBALANCE_MS / 1000;
	g->next_rebalance = g->last_tsc + g->rebalance_cycles;
	for (k = 0; k < g->nb; k++) {
		struct sbx_toolgroup_member *m = &g->m[k];
		uint16_t port = gc->members[k];
		const struct sbx_port_shm *dp = &shm->ports[port];

		m->q = (struct sbx_queue){ .port = port, .port_id = dp->port_id, .queue = q };
		if (cfg->ports[port].kind == SBX_PORT_PCAP_FILE) {
			m->q.ring = rte_ring_lookup(dp->tx_ring[q]);
			if (m->q.ring == NULL) {
				snprintf(err, errlen, "tool_groups[%u].members[%u]: ring %s not found", group, k,
					 dp->tx_ring[q]);
				return -1;
			}
		}
		m->c = sbx_shm_group_member(shm, worker, slot, k);
		m->dem = sbx_shm_group_demand(shm, worker, slot, k);
		m->share_pps = &sbx_shm_group(shm, slot)->m[k].share_pps_ppm[worker];
		m->share_bps = &sbx_shm_group(shm, slot)->m[k].share_bps_ppm[worker];
		bucket_init(&m->pps, gc->rate_pps, share, PPS_MIN_CAP);
		bucket_init(&m->bps, gc->rate_bps, share, BPS_MIN_CAP);
	}
	return 0;
}

/* Refill every member's buckets for the time since the last refill (at this worker's shares, taken
 * anew every SBX_GROUP_REBALANCE_MS). */
static void refill(struct sbx_toolgroup_rt *g)
{
	uint64_t now = rte_rdtsc();
	double dt = (double)(now - g->last_tsc);

	g->last_tsc = now;
	if (unlikely(now >= g->next_rebalance)) {
		take_shares(g);
		g->next_rebalance = now + g->rebalance_cycles;
	}
	for (uint8_t k = 0; k < g->nb; k++) {
		struct sbx_token_bucket *b[2] = { &g->m[k].pps, &g->m[k].bps };

		for (int j = 0; j < 2; j++) {
			b[j]->tokens += dt * b[j]->rate;
			if (b[j]->tokens > b[j]->cap)
				b[j]->tokens = b[j]->cap;
		}
	}
}

/* true when member @p m may take one more copy of @p len bytes (tokens taken). */
static inline bool admit(struct sbx_toolgroup_member *m, uint32_t len)
{
	double bits = 8.0 * len;

	if ((m->pps.rate != 0 && m->pps.tokens < 1.0) || (m->bps.rate != 0 && m->bps.tokens < bits))
		return false;
	m->pps.tokens -= m->pps.rate != 0 ? 1.0 : 0.0;
	m->bps.tokens -= m->bps.rate != 0 ? bits : 0.0;
	return true;
}

/* Send the @p ns copies @p sel (all for member @p m) through its rate limit and TX queue; adds
 * what was accepted to @p sent / @p bytes and what the queue refused to @p refused. */
static void send_member(struct sbx_toolgroup_rt *g, struct sbx_toolgroup_member *m, struct rte_mbuf **sel,
			uint16_t n, uint64_t *sent, uint64_t *bytes, uint64_t *refused)
{
	uint64_t b = 0, lost = 0, over = 0;
	uint16_t i, ns = 0, ok;

	for (i = 0; i < n; i++) {
		if (g->limited && !admit(m, sel[i]->pkt_len)) {
			m->c->drop_rate_limit++;
			over += sel[i]->pkt_len;
			rte_pktmbuf_free(sel[i]);
			continue;
		}
		b += sel[i]->pkt_len;
		sel[ns++] = sel[i];
	}
	if (g->limited) { /* this worker's demand: only it writes it, the primary reads it (shares) */
		__atomic_store_n(&m->dem->pkts, m->dem->pkts + n, __ATOMIC_RELAXED);
		__atomic_store_n(&m->dem->bytes, m->dem->bytes + b + over, __ATOMIC_RELAXED);
	}
	if (ns == 0)
		return;
	ok = sbx_q_tx_wait(&m->q, sel, ns, g->wait_cycles);
	if (unlikely(ok < ns)) {
		for (i = ok; i < ns; i++)
			lost += sel[i]->pkt_len;
		rte_pktmbuf_free_bulk(sel + ok, ns - ok);
	}
	m->c->packets += ok;
	m->c->bytes += b - lost;
	if (g->mb != NULL)
		sbx_mb_add(g->mb, m->q.port, SBX_MB_TX, b - lost);
	m->c->drop_txfull += ns - ok;
	*sent += ok;
	*bytes += b - lost;
	*refused += ns - ok;
}

/* The member index bucket of copy @p cp names (>= g->nb: none). */
static inline uint8_t member_of(const struct sbx_toolgroup_rt *g, const struct rte_mbuf *cp)
{
	return __atomic_load_n(&g->buckets[cp->hash.usr % SBX_GROUP_BUCKETS], __ATOMIC_RELAXED);
}

void sbx_toolgroup_send(struct sbx_toolgroup_rt *g, struct rte_mbuf **cp, uint16_t n, uint64_t *sent,
			uint64_t *bytes, uint64_t *refused)
{
	uint16_t start[SBX_MAX_GROUP_MEMBERS + 1] = {0}, at[SBX_MAX_GROUP_MEMBERS];
	uint8_t member[n > 0 ? n : 1];
	struct rte_mbuf *by[n > 0 ? n : 1];
	uint16_t i;
	uint8_t k, k0;

	*sent = *bytes = *refused = 0;
	if (n == 0)
		return;
	if (g->limited)
		refill(g);
	/* the copies all for one member (a group of one up, a burst of one flow): sent as they are,
	 * one bucket load each and no sort */
	k0 = member_of(g, cp[0]);
	for (i = 1; i < n && member_of(g, cp[i]) == k0; i++)
		;
	if (likely(i == n)) {
		if (likely(k0 < g->nb)) {
			send_member(g, &g->m[k0], cp, n, sent, bytes, refused);
		} else { /* nobody up (or the buckets of a group being set up) */
			g->gc->no_member += n;
			rte_pktmbuf_free_bulk(cp, n);
		}
		return;
	}
	/* else one pass for the members, then a counting sort orders the copies by member: two
	 * passes over the copies whatever the number of members, not one per member */
	for (i = 0; i < n; i++) {
		k = member_of(g, cp[i]);
		if (unlikely(k >= g->nb)) {
			g->gc->no_member++;
			rte_pktmbuf_free(cp[i]);
			k = SBX_MAX_GROUP_MEMBERS; /* counted in no bucket */
		} else {
			start[k + 1]++;
		}
		member[i] = k;
	}
	for (k = 0; k < g->nb; k++) {
		start[k + 1] += start[k];
		at[k] = start[k];
	}
	for (i = 0; i < n; i++)
		if (likely(member[i] < g->nb))
			by[at[member[i]]++] = cp[i];
	for (k = 0; k < g->nb; k++)
		if (start[k + 1] > start[k])
			send_member(g, &g->m[k], by + start[k], start[k + 1] - start[k], sent, bytes, refused);
}
