/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tool groups in the primary (docs/CONFIG.md "tool_groups", docs/RUNTIME_TABLES.md "Tool groups"):
 * the slots of the groups of each runtime tables generation, the bucket tables, the members'
 * health (link state, TX refusals) with its failover, and each worker's share of the members'
 * rate limits by demand (shares_update).
 *
 * Buckets: bucket b's home is member b % nb_members. rebalance() keeps the one invariant
 *   - a bucket whose home is up is held by its home;
 *   - a bucket whose home is not up is held by some member up (it stays where it is while that
 *     member stays up), or by nobody when no member is up;
 * and places each bucket it has to move on the member up holding the fewest buckets. So a failing
 * member's buckets (its home ones and those it had taken over) spread evenly over the members up,
 * no other bucket moves, and a member that comes back (healthy for hold_down_ms) takes exactly its
 * home buckets back: the same buckets it had before it failed.
 *
 * States (enum sbx_member_state): up -> down when its link is down ("link down") or when its TX
 * queues refused more than tx_refused_percent of its copies in a tx_refused_window_ms window (at
 * least 32 copies: "tx refused"). Down for link -> holddown once the link is up, holddown -> up
 * after hold_down_ms with the link up throughout (a link down in between: down again). Down for
 * refusals -> up after hold_down_ms: only sending shows whether the tool reads again, so it is
 * tried again, and a window that refuses too much takes it down again.
 *
 * Threads: the main loop runs the health check (sbx_groups_tick, every SBX_GROUP_TICK_NS); the
 * tables thread sets up the slots of a change (sbx_groups_assign) and publishes it under the same
 * lock, so the health check never looks at a slot being set up or at tables being rewritten.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "primary.h"

#define SBX_GROUP_TICK_NS (SBX_GROUP_REBALANCE_MS * 1000ULL * 1000) /* health check and rate shares period (5 ms): a link down is seen within 10 ms */
#define SBX_GROUP_MIN_COPIES 32                /* copies a refusal window needs before it can judge */

static pthread_mutex_t groups_lock = PTHREAD_MUTEX_INITIALIZER;
/* every worker's demand of each member at the last share computation (shares_update), its smoothed
 * rate as a part of the limit per second (pps, bps), and the time of that computation: sized by
 * the memzone's tool group capacity (slots x members) and the workers at start (sbx_groups_init),
 * not by the limits (64 x 64 groups of 32 workers: 8 MB) */
static struct {
	uint32_t slots, members, workers; /* the dimensions, fixed at start */
	struct sbx_group_demand *seen;    /* [slots][members][workers] */
	double *rate_ew;                  /* [slots][members][2: pps, bps][workers] */
	uint64_t *shares_ns;              /* [slots] */
} sh;
#define SHARE_EWMA 0.25 /* weight of the last 5 ms in the smoothed demand: about 20 ms of memory */

/* The demand seen of worker 0 for member @p k of slot @p slot: sh.workers entries. */
static struct sbx_group_demand *seen_of(unsigned int slot, unsigned int k)
{
	return &sh.seen[((size_t)slot * sh.members + k) * sh.workers];
}

/* The smoothed rate (@p d 0: pps, 1: bps) of worker 0 for member @p k of slot @p slot: sh.workers entries. */
static double *rate_ew_of(unsigned int slot, unsigned int k, unsigned int d)
{
	return &sh.rate_ew[(((size_t)slot * sh.members + k) * 2 + d) * sh.workers];
}

int sbx_groups_init(struct sbx_primary *p)
{
	sh.slots = RTE_MAX(p->shm->layout.nb_group_slots, 1u);
	sh.members = RTE_MAX(p->shm->layout.group_members, 1u);
	sh.workers = RTE_MAX(RTE_MIN((uint32_t)p->cfg->nb_workers, (uint32_t)SBX_MAX_WORKERS), 1u);
	sh.seen = calloc((size_t)sh.slots * sh.members * sh.workers, sizeof(*sh.seen));
	sh.rate_ew = calloc((size_t)sh.slots * sh.members * 2 * sh.workers, sizeof(*sh.rate_ew));
	sh.shares_ns = calloc(sh.slots, sizeof(*sh.shares_ns));
	if (sh.seen == NULL || sh.rate_ew == NULL || sh.shares_ns == NULL) {
		fprintf(stderr, "spanbox-primary: out of memory for the tool groups' rate shares "
			"(%u slots x %u members x %u workers)\n", sh.slots, sh.members, sh.workers);
		sbx_groups_fini();
		return -1;
	}
	return 0;
}

void sbx_groups_fini(void)
{
	sbx_groups_lock();
	free(sh.seen);
	free(sh.rate_ew);
	free(sh.shares_ns);
	memset(&sh, 0, sizeof(sh));
	sbx_groups_unlock();
}

void sbx_groups_lock(void)
{
	pthread_mutex_lock(&groups_lock);
}

void sbx_groups_unlock(void)
{
	pthread_mutex_unlock(&groups_lock);
}

/* Re-establish the invariant of the file comment on slot @p gs of a group of @p n members. */
static void rebalance(struct sbx_group_shm *gs, uint32_t n)
{
	uint32_t count[SBX_MAX_GROUP_MEMBERS] = { 0 }, b, k, up = 0;
	bool is_up[SBX_MAX_GROUP_MEMBERS] = { false };

	for (k = 0; k < n; k++) {
		is_up[k] = gs->m[k].state == SBX_MEMBER_UP;
		up += is_up[k];
	}
	/* home buckets of members up go home; buckets still on a member up stay */
	for (b = 0; b < SBX_GROUP_BUCKETS; b++) {
		uint32_t home = b % n, cur = gs->buckets[b];

		if (is_up[home] && cur != home)
			__atomic_store_n(&gs->buckets[b], (uint8_t)home, __ATOMIC_RELAXED);
		if (is_up[home])
			count[home]++;
		else if (cur < n && is_up[cur])
			count[cur]++;
	}
	/* orphans (home not up, holder not up): to the member up with the fewest buckets */
	for (b = 0; b < SBX_GROUP_BUCKETS; b++) {
		uint32_t home = b % n, cur = gs->buckets[b], best = SBX_GROUP_NO_MEMBER;

		if (is_up[home] || (cur < n && is_up[cur]))
			continue;
		for (k = 0; k < n; k++)
			if (is_up[k] && (best == SBX_GROUP_NO_MEMBER || count[k] < count[best]))
				best = k;
		if (best != SBX_GROUP_NO_MEMBER)
			count[best]++;
		__atomic_store_n(&gs->buckets[b], (uint8_t)best, __ATOMIC_RELAXED);
	}
	for (k = 0; k < n; k++)
		gs->m[k].buckets = count[k];
	gs->members_up = up;
}

/* Set up slot @p slot for group @p g: every member up, buckets at home, counters zeroed. No
 * worker uses the slot (the caller's invariant: see sbx_groups_assign). */
static void slot_init(struct sbx_primary *p, unsigned int slot, const struct sbx_tool_group_cfg *g)
{
	struct sbx_group_shm *gs = sbx_shm_group(p->shm, slot);
	uint64_t now = sbx_now_ns();
	unsigned int w, k;

	memset(gs, 0, p->shm->layout.group_stride);
	gs->nb_members = g->nb_members;
	for (k = 0; k < g->nb_members; k++) {
		gs->m[k].state = SBX_MEMBER_UP;
		gs->m[k].since_ns = now;
		gs->m[k].win_start_ns = now;
	}
	for (w = 0; w < p->shm->layout.nb_worker_slots; w++) {
		memset(sbx_shm_group_member(p->shm, w, slot, 0), 0,
		       p->shm->layout.group_members * sizeof(struct sbx_group_member_counters));
		memset(sbx_shm_group_ctr(p->shm, w, slot), 0, sizeof(struct sbx_group_counters));
		memset(sbx_shm_group_demand(p->shm, w, slot, 0), 0, p->shm->layout.group_members * sizeof(struct sbx_group_demand));
	}
	memset(seen_of(slot, 0), 0, (size_t)sh.members * sh.workers * sizeof(*sh.seen));
	memset(rate_ew_of(slot, 0, 0), 0, (size_t)sh.members * 2 * sh.workers * sizeof(*sh.rate_ew));
	sh.shares_ns[slot] = 0;
	rebalance(gs, g->nb_members);
}

/* true when groups @p a and @p b keep one slot: same name, members and hash. */
static bool same_slot(const struct sbx_tool_group_cfg *a, const struct sbx_tool_group_cfg *b)
{
	return strcmp(a->name, b->name) == 0 && a->nb_members == b->nb_members && a->hash == b->hash &&
	       memcmp(a->members, b->members, a->nb_members * sizeof(a->members[0])) == 0;
}

int sbx_groups_assign(struct sbx_primary *p, const struct sbx_tables *old, const struct sbx_config *n,
		      uint8_t *gslot)
{
	bool used[SBX_GROUP_SLOTS] = { false };
	uint16_t i, j;

	unsigned int slots = RTE_MIN(p->shm->layout.nb_group_slots, (uint32_t)SBX_GROUP_SLOTS);

	if (n->nb_tool_groups > SBX_MAX_TOOL_GROUPS || (old && old->cfg.nb_tool_groups > SBX_MAX_TOOL_GROUPS))
		return -1;
	for (i = 0; i < n->nb_tool_groups; i++) /* the config's parse checked them: the slots' capacity */
		if (n->tool_groups[i].nb_members > p->shm->layout.group_members)
			return -1;
	for (j = 0; old != NULL && j < old->cfg.nb_tool_groups; j++) {
		if (old->gslot[j] >= slots)
			return -1;
		used[old->gslot[j]] = true; /* kept, or dropped: free only at the next change */
	}
	for (i = 0; i < n->nb_tool_groups; i++) {
		gslot[i] = UINT8_MAX;
		for (j = 0; old != NULL && j < old->cfg.nb_tool_groups; j++)
			if (same_slot(&old->cfg.tool_groups[j], &n->tool_groups[i]))
				gslot[i] = old->gslot[j];
	}
	for (i = 0; i < n->nb_tool_groups; i++) {
		if (gslot[i] != UINT8_MAX)
			continue;
		for (j = 0; j < slots && used[j]; j++)
			;
		if (j >= slots)
			return -1;
		used[j] = true;
		gslot[i] = (uint8_t)j;
		slot_init(p, j, &n->tool_groups[i]);
	}
	return 0;
}

/* Sums over workers of member @p k of slot @p slot: copies sent and refused. */
static void member_sums(const struct sbx_primary *p, unsigned int slot, unsigned int k, uint64_t *sent,
			uint64_t *refused)
{
	unsigned int w;

	*sent = *refused = 0;
	for (w = 0; w < p->cfg->nb_workers; w++) {
		const struct sbx_group_member_counters *c = sbx_shm_group_member(p->shm, w, slot, k);

		*sent += __atomic_load_n(&c->packets, __ATOMIC_RELAXED);
		*refused += __atomic_load_n(&c->drop_txfull, __ATOMIC_RELAXED);
	}
}

/* Member @p k of group @p g (slot @p gs) goes to @p state for @p reason: rebalance, event. */
static void member_set(struct sbx_primary *p, const struct sbx_tool_group_cfg *g, struct sbx_group_shm *gs,
		       unsigned int k, uint32_t state, uint32_t reason, uint64_t now)
{
	struct sbx_group_member_shm *m = &gs->m[k];
	uint32_t before = m->buckets, was = m->state;

	m->state = state;
	if (reason != SBX_MEMBER_REASON_NONE)
		m->reason = reason;
	m->since_ns = now;
	m->transitions++;
	if (was == SBX_MEMBER_UP || state == SBX_MEMBER_UP)
		rebalance(gs, g->nb_members);
	if (state == SBX_MEMBER_UP) {
		/* the detail holds 103 characters: short */
		sbx_event(p, "member_up", -1, 0, "tool group %s: member %s up after %u ms %s: %u buckets, %u/%u up",
			  g->name, p->cfg->ports[g->members[k]].name, g->hold_down_ms,
			  was == SBX_MEMBER_DOWN ? "(retry after tx refused)" : "healthy", m->buckets, gs->members_up,
			  g->nb_members);
		m->reason = SBX_MEMBER_REASON_NONE;
	} else if (state == SBX_MEMBER_DOWN) {
		sbx_event(p, "member_down", -1, 0, "tool group %s: member %s down (%s): %u buckets moved to %u "
			  "members up", g->name, p->cfg->ports[g->members[k]].name, sbx_member_reason_name(reason),
			  before, gs->members_up);
	} else {
		sbx_event(p, "member_holddown", -1, 0, "tool group %s: member %s healthy again (was %s): back "
			  "in %u ms unless it fails", g->name, p->cfg->ports[g->members[k]].name,
			  sbx_member_reason_name(m->reason), g->hold_down_ms);
	}
}

/* One health check of member @p k of group @p g in slot @p slot. */
static void member_check(struct sbx_primary *p, const struct sbx_tool_group_cfg *g, unsigned int slot,
			 unsigned int k, uint64_t now)
{
	struct sbx_group_shm *gs = sbx_shm_group(p->shm, slot);
	struct sbx_group_member_shm *m = &gs->m[k];
	uint16_t port = g->members[k];
	bool link = p->cfg->ports[port].kind == SBX_PORT_PCAP_FILE || p->shm->ports[port].link_up;
	const uint64_t window = (uint64_t)g->tx_refused_window_ms * 1000000ULL;
	uint64_t sent, refused, ds, dr;

	/* The sums read the member's counters in every worker's slot: at 32 workers and 64 x 64
	 * members that was 1.5 ms of every 5 ms tick. An up member needs them only at the end of its
	 * TX refusal window (1 s by default), a member that is not up only when it comes up (its
	 * window starts then): most ticks read nothing but the link and the member's state. */
	if (link && m->state == SBX_MEMBER_UP && now - m->win_start_ns < window)
		return;
	if (link && m->state == SBX_MEMBER_HOLDDOWN && now - m->since_ns < (uint64_t)g->hold_down_ms * 1000000ULL)
		return;
	if (m->state == SBX_MEMBER_DOWN && (!link || (m->reason == SBX_MEMBER_REASON_TX_REFUSED &&
						      now - m->since_ns < (uint64_t)g->hold_down_ms * 1000000ULL)))
		return;
	member_sums(p, slot, k, &sent, &refused);
	if (!link && m->state != SBX_MEMBER_DOWN) {
		member_set(p, g, gs, k, SBX_MEMBER_DOWN, SBX_MEMBER_REASON_LINK, now);
	} else if (m->state == SBX_MEMBER_UP) { /* its window ended (an open one returned above) */
		ds = sent - m->win_sent;
		dr = refused - m->win_refused;
		if (ds + dr >= SBX_GROUP_MIN_COPIES && dr * 100 > (uint64_t)g->tx_refused_percent * (ds + dr))
			member_set(p, g, gs, k, SBX_MEMBER_DOWN, SBX_MEMBER_REASON_TX_REFUSED, now);
	} else if (m->state == SBX_MEMBER_DOWN && link && m->reason == SBX_MEMBER_REASON_LINK) {
		member_set(p, g, gs, k, SBX_MEMBER_HOLDDOWN, SBX_MEMBER_REASON_NONE, now);
	} else if (m->state == SBX_MEMBER_DOWN && link && m->reason == SBX_MEMBER_REASON_TX_REFUSED &&
		   now - m->since_ns >= (uint64_t)g->hold_down_ms * 1000000ULL) {
		/* refused copies: nothing shows it is well again but sending to it, so it is tried again
		 * after hold_down_ms (and goes down again at the end of a window that refuses too much) */
		member_set(p, g, gs, k, SBX_MEMBER_UP, SBX_MEMBER_REASON_NONE, now);
	} else if (m->state == SBX_MEMBER_HOLDDOWN && now - m->since_ns >= (uint64_t)g->hold_down_ms * 1000000ULL) {
		member_set(p, g, gs, k, SBX_MEMBER_UP, SBX_MEMBER_REASON_NONE, now);
	}
	if (m->state != SBX_MEMBER_UP || now - m->win_start_ns >= window || m->since_ns == now) {
		m->win_start_ns = now; /* a new window: at each end, and from the moment it is up again */
		m->win_sent = sent;
		m->win_refused = refused;
	}
}

/*
 * The shares @p ppm (parts per million of the limit, at least SBX_GROUP_SHARE_FLOOR_PPM) of @p nw
 * workers whose demands are @p x (parts of the limit): max-min fair, water-filling. In the order
 * of their demands, each worker gets its demand or an even part of what is left, whichever is
 * less; what nobody asked for is spread evenly. So workers that all want more than the limit split
 * it evenly, one worker alone gets all of it, and the parts add up to the whole.
 */
static void waterfill(const double *x, unsigned int nw, uint32_t *ppm)
{
	unsigned int ord[SBX_MAX_WORKERS], i, j;
	double left = 1.0, a[SBX_MAX_WORKERS];

	for (i = 0; i < nw; i++) { /* insertion sort by demand (8 workers at most) */
		for (j = i; j > 0 && x[ord[j - 1]] > x[i]; j--)
			ord[j] = ord[j - 1];
		ord[j] = i;
	}
	for (i = 0; i < nw; i++) {
		double fair = left / (nw - i);

		a[ord[i]] = x[ord[i]] < fair ? x[ord[i]] : fair;
		left -= a[ord[i]];
	}
	for (i = 0; i < nw; i++) {
		double part = (a[i] + left / nw) * 1e6;

		__atomic_store_n(&ppm[i], part > SBX_GROUP_SHARE_FLOOR_PPM ? (uint32_t)part : SBX_GROUP_SHARE_FLOOR_PPM,
				 __ATOMIC_RELAXED);
	}
}

/*
 * Share the rate limits of the members of group @p g (slot @p slot) out among the workers by
 * demand (docs/CONFIG.md "Rate limits with several workers"): from one snapshot of every worker's
 * demand sums (copies and bytes offered to the member), each worker's demand rate since the last
 * time @p now (ns), smoothed (SHARE_EWMA), then waterfill(). The workers take their shares every
 * SBX_GROUP_REBALANCE_MS (secondary/toolgroup.c).
 */
static void shares_update(struct sbx_primary *p, const struct sbx_tool_group_cfg *g, unsigned int slot, uint64_t now)
{
	unsigned int nw = RTE_MIN(p->cfg->nb_workers, sh.workers), w, k;
	double dt = (double)(now - sh.shares_ns[slot]) / 1e9;
	bool first = sh.shares_ns[slot] == 0;

	sh.shares_ns[slot] = now;
	for (k = 0; k < g->nb_members; k++) {
		struct sbx_group_member_shm *ms = &sbx_shm_group(p->shm, slot)->m[k];
		double *pps = rate_ew_of(slot, k, 0), *bps = rate_ew_of(slot, k, 1);

		for (w = 0; w < nw; w++) {
			const struct sbx_group_demand *d = sbx_shm_group_demand(p->shm, w, slot, k);
			struct sbx_group_demand cur = { __atomic_load_n(&d->pkts, __ATOMIC_RELAXED),
							__atomic_load_n(&d->bytes, __ATOMIC_RELAXED) };
			struct sbx_group_demand *old = &seen_of(slot, k)[w];
			/* a sum that went back (the slot zeroed) is no demand */
			double dp = cur.pkts >= old->pkts ? (double)(cur.pkts - old->pkts) : 0;
			double db = cur.bytes >= old->bytes ? (double)(cur.bytes - old->bytes) : 0;

			*old = cur;
			if (first || dt <= 0)
				continue;
			if (g->rate_pps != 0)
				pps[w] += SHARE_EWMA * (dp / dt / (double)g->rate_pps - pps[w]);
			if (g->rate_bps != 0)
				bps[w] += SHARE_EWMA * (8 * db / dt / (double)g->rate_bps - bps[w]);
		}
		if (first)
			continue;
		waterfill(pps, nw, ms->share_pps_ppm);
		waterfill(bps, nw, ms->share_bps_ppm);
	}
}

void sbx_groups_tick(struct sbx_primary *p, uint64_t now)
{
	static uint64_t last;
	bool refreshed[SBX_MAX_PORTS] = { false };
	uint64_t t0;
	const struct sbx_tables *t;
	uint16_t i, k;

	if (now - last < SBX_GROUP_TICK_NS)
		return;
	last = now;
	t0 = sbx_now_ns();
	sbx_groups_lock();
	t = sbx_shm_tables(p->shm);
	if (t->cfg.nb_tool_groups == 0) {
		sbx_groups_unlock();
		return;
	}
	for (i = 0; i < t->cfg.nb_tool_groups && i < SBX_MAX_TOOL_GROUPS; i++) {
		const struct sbx_tool_group_cfg *g = &t->cfg.tool_groups[i];

		if (t->gslot[i] >= p->shm->layout.nb_group_slots || sbx_shm_group(p->shm, t->gslot[i])->nb_members != g->nb_members)
			continue;
		for (k = 0; k < g->nb_members; k++) {
			uint16_t port = g->members[k];

			if (!refreshed[port] && p->cfg->ports[port].kind != SBX_PORT_PCAP_FILE)
				sbx_ports_link_refresh(p, port); /* the 100 ms refresh is too slow for failover */
			refreshed[port] = true;
			member_check(p, g, t->gslot[i], k, now);
		}
		if (g->rate_pps != 0 || g->rate_bps != 0)
			shares_update(p, g, t->gslot[i], now);
	}
	sbx_groups_unlock();
	{ /* its cost, as /status shows it: the ticks' wall time, the lock's wait included */
		uint64_t ns = sbx_now_ns() - t0;

		p->shm->group_check.ns_last = ns;
		p->shm->group_check.ns_total += ns;
		if (ns > p->shm->group_check.ns_max)
			p->shm->group_check.ns_max = ns;
		p->shm->group_check.ticks++;
	}
}
