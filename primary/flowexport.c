/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The primary's flow exporter (issue #28, docs/FLOWS.md): one thread drains the workers' rings of
 * flow records (SBX_FLOWS_RING_FMT, created here before the workers start) and hands each record to
 * one IPFIX exporter per collector (shared/ipfix.c: bounded sockets, templates, losses counted). A
 * collector that is down or slow costs the workers nothing: they only ever see their ring, and
 * this thread never waits longer than ipfix.c's bounds. The thread publishes its counters into
 * shm->flows every 100 ms; the main loop turns a collector's up/down changes into events
 * (sbx_flows_tick: events are the main thread's to write).
 * flows is live (docs/RUNTIME_TABLES.md "Flows"): the runtime tables thread posts each new flows
 * config (sbx_flows_reconfigure), this thread takes it between two rounds (take_config) and
 * re-opens the collectors that changed; the rings are made at the first change that turns
 * metering on when it was off at start (sbx_flows_prepare).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "spanbox/ipfix.h"
#include "primary.h"

#define DRAIN_BURST 64 /* records taken off one ring at a time */
#define RETRY_MIN_MS 1000  /* a collector that could not be opened: first retry after 1 s */
#define RETRY_MAX_MS 60000 /* ... doubling up to once a minute */

static struct {
	struct sbx_primary *p;
	struct rte_ring *ring[SBX_MAX_WORKERS];
	struct sbx_ipfix *x[SBX_MAX_FLOW_COLLECTORS];
	/* live changes: posted by the tables thread (next, next_gen under lock), taken by this thread
	 * into cfg (its collectors: fx.x[c] sends to cfg.collectors[c]) */
	pthread_mutex_t lock;
	struct sbx_flows_cfg next;
	uint64_t next_gen, cur_gen;
	struct sbx_flows_cfg cfg;
	struct sbx_flows_cfg posted; /* tables thread: the last section posted (or the start's) */
	bool rings;
	uint32_t seen_transitions[SBX_MAX_FLOW_COLLECTORS]; /* main thread: transitions it told of */
	/* collectors that could not be opened: the next try (collector_retry) */
	uint64_t retry_ns[SBX_MAX_FLOW_COLLECTORS];
	uint32_t retry_ms[SBX_MAX_FLOW_COLLECTORS];
	struct sbx_ipfix_stats base[SBX_MAX_FLOW_COLLECTORS]; /* counted before a late open */
	bool based[SBX_MAX_FLOW_COLLECTORS];
	pthread_t tid;
	bool started;
	uint32_t stop;
	/* top talkers: the SBX_FLOWS_TOP largest records of each second of the window, by bytes
	 * (top[TOP_BYTES]) and by packets (top[TOP_PACKETS]); the largest of the window are among them
	 * (each is one of the largest of its own second). Two rankings, not one: a flow of many small
	 * frames is never among the largest by bytes of its second */
	struct top_sec {
		uint64_t sec;    /* CLOCK_MONOTONIC second it holds */
		unsigned int n, min;
		struct sbx_flow_record r[SBX_FLOWS_TOP];
	} top[2][SBX_FLOWS_TOP_WINDOW_S];
} fx;

enum { TOP_BYTES, TOP_PACKETS };

/* What ranking @p k ranks a record by. */
static uint64_t top_measure(const struct sbx_flow_record *r, unsigned int k)
{
	return k == TOP_PACKETS ? r->packets : r->bytes;
}

/* Keep @p r among the largest records of second @p sec, in both rankings. */
static void top_add(const struct sbx_flow_record *r, uint64_t sec)
{
	unsigned int i, k;

	for (k = TOP_BYTES; k <= TOP_PACKETS; k++) {
		struct top_sec *t = &fx.top[k][sec % SBX_FLOWS_TOP_WINDOW_S];

		if (t->sec != sec) {
			t->sec = sec;
			t->n = 0;
		}
		if (t->n < SBX_FLOWS_TOP) {
			t->r[t->n++] = *r;
		} else if (top_measure(r, k) > top_measure(&t->r[t->min], k)) {
			t->r[t->min] = *r;
		} else {
			continue;
		}
		for (i = 1, t->min = 0; i < t->n; i++) /* the smallest: the next to give way */
			if (top_measure(&t->r[i], k) < top_measure(&t->r[t->min], k))
				t->min = i;
	}
}

static int bytes_desc(const void *a, const void *b)
{
	const struct sbx_flow_record *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/* Most packets first; equal packets: most bytes first. */
static int packets_desc(const void *a, const void *b)
{
	const struct sbx_flow_record *x = a, *y = b;

	return x->packets < y->packets ? 1 : x->packets > y->packets ? -1 : bytes_desc(a, b);
}

/* The largest records of the window of ranking @p k into @p all (SBX_FLOWS_TOP at most), sorted. */
static unsigned int top_rank(unsigned int k, uint64_t sec, struct sbx_flow_record *all)
{
	unsigned int n = 0, s, i;

	for (s = 0; s < SBX_FLOWS_TOP_WINDOW_S; s++)
		if (fx.top[k][s].n && fx.top[k][s].sec + SBX_FLOWS_TOP_WINDOW_S > sec)
			for (i = 0; i < fx.top[k][s].n; i++)
				all[n++] = fx.top[k][s].r[i];
	qsort(all, n, sizeof(all[0]), k == TOP_PACKETS ? packets_desc : bytes_desc);
	return n > SBX_FLOWS_TOP ? SBX_FLOWS_TOP : n;
}

/* The largest records of the window into the memzone (sequence lock: see struct sbx_flows_shm). */
static void top_publish(uint64_t sec)
{
	static struct sbx_flow_record all[SBX_FLOWS_TOP_WINDOW_S * SBX_FLOWS_TOP];
	static struct sbx_flow_record pk[SBX_FLOWS_TOP_WINDOW_S * SBX_FLOWS_TOP];
	struct sbx_flows_shm *fs = &fx.p->shm->flows;
	unsigned int n = top_rank(TOP_BYTES, sec, all), np = top_rank(TOP_PACKETS, sec, pk);

	__atomic_add_fetch(&fs->top_seq, 1, __ATOMIC_RELEASE); /* odd: being written */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(fs->top, all, n * sizeof(all[0]));
	fs->nb_top = n;
	memcpy(fs->top_packets, pk, np * sizeof(pk[0]));
	fs->nb_top_packets = np;
	fs->top_ns = sbx_realtime_ns();
	__atomic_add_fetch(&fs->top_seq, 1, __ATOMIC_RELEASE);
}

/* Copy collector @p c's counters into the memzone; a change of up/down is logged. */
static void publish(unsigned int c)
{
	const struct sbx_flow_collector_cfg *k = &fx.cfg.collectors[c];
	struct sbx_flow_collector_shm *o = &fx.p->shm->flows.collectors[c];
	struct sbx_ipfix_stats s = o->x; /* no exporter (it could not be opened): what drain counted */
	uint32_t up = o->up;

	if (fx.x[c] != NULL) {
		sbx_ipfix_stats(fx.x[c], &s);
		if (fx.based[c])
			sbx_ipfix_stats_add(&s, &fx.base[c]);
	}
	/* over the last 100 ms: a loss is down (UDP: an ICMP port unreachable loses every other
	 * message, the kernel takes the rest), records sent and none lost is up */
	if (s.records_lost > o->x.records_lost)
		up = 0;
	else if (s.records_sent > o->x.records_sent)
		up = 1;
	o->x = s;
	if (up != o->up) {
		printf("spanbox-primary: flows: collector %s:%u (%s) %s (%llu records sent, %llu lost)\n", k->address,
		       k->port, k->transport ? "tcp" : "udp", up ? "up" : "down",
		       (unsigned long long)s.records_sent, (unsigned long long)s.records_lost);
		fflush(stdout);
		o->since_ns = sbx_realtime_ns();
		__atomic_store_n(&o->up, up, __ATOMIC_RELAXED);
		__atomic_add_fetch(&o->transitions, 1, __ATOMIC_RELEASE);
	}
}

/* ---- live changes of flows (this thread's side) ---- */

/* sbx_ipfix_open, but for the test hook: while the file named by SBX_TEST_FLOWS_OPEN_FAIL_FILE exists,
 * every open fails (tests/e2e/28f_flows_select.sh: a collector that comes back is retried). */
static struct sbx_ipfix *ipfix_open(const struct sbx_ipfix_params *xp, char *err, size_t errlen)
{
	const char *hook = getenv("SBX_TEST_FLOWS_OPEN_FAIL_FILE");

	if (hook != NULL && access(hook, F_OK) == 0) {
		snprintf(err, errlen, "address: refused by the test hook %s", hook);
		return NULL;
	}
	return sbx_ipfix_open(xp, err, errlen);
}

/* Open collectors[c] of @p f into fx.x[c] (NULL when it cannot be: logged, its records counted
 * lost) and reset its slot in the memzone. */
static void collector_open(unsigned int c, const struct sbx_flows_cfg *f)
{
	const struct sbx_flow_collector_cfg *k = &f->collectors[c];
	struct sbx_flow_collector_shm *o = &fx.p->shm->flows.collectors[c];
	struct sbx_ipfix_params xp = {
		.address = k->address, .port = k->port, .transport = k->transport,
		.domain = f->domain, .template_period_s = f->template_period_s,
	};
	struct sbx_flows_shm *fs = &fx.p->shm->flows;
	char err[256];

	fx.x[c] = ipfix_open(&xp, err, sizeof(err));
	fx.retry_ms[c] = RETRY_MIN_MS;
	if (fx.x[c] == NULL) {
		fs->open_failures[c]++;
		fx.retry_ns[c] = sbx_now_ns() + (uint64_t)fx.retry_ms[c] * 1000000ull;
		fprintf(stderr, "spanbox-primary: flows.collectors[%u]: %s (retried in %u ms)\n", c, err, fx.retry_ms[c]);
	}
	memset(&o->x, 0, sizeof(o->x));
	fx.based[c] = false;
	/* mgmt and the main thread read the address while we write it: sequence lock (shm.h) */
	__atomic_add_fetch(&fs->cfg_seq, 1, __ATOMIC_RELEASE); /* odd: being written */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	o->cfg = *k;
	__atomic_add_fetch(&fs->cfg_seq, 1, __ATOMIC_RELEASE);
	o->since_ns = sbx_realtime_ns();
	__atomic_store_n(&o->up, fx.x[c] != NULL, __ATOMIC_RELAXED); /* up until records are lost */
	if (fx.x[c] == NULL) /* an event collector_down (sbx_flows_tick) */
		__atomic_add_fetch(&o->transitions, 1, __ATOMIC_RELEASE);
}

/*
 * A collector that could not be opened (collector_open) is tried again, not only at the next config
 * change: after RETRY_MIN_MS, the wait doubled after each failure up to RETRY_MAX_MS. Every failure
 * is counted (open_failures), logged; the first one of a collector that was up and the success
 * change its state (events collector_down / collector_up, sbx_flows_tick). Its counters go on.
 */
static void collector_retry(unsigned int c, uint64_t now)
{
	const struct sbx_flow_collector_cfg *k = &fx.cfg.collectors[c];
	struct sbx_flow_collector_shm *o = &fx.p->shm->flows.collectors[c];
	struct sbx_ipfix_params xp = {
		.address = k->address, .port = k->port, .transport = k->transport,
		.domain = fx.cfg.domain, .template_period_s = fx.cfg.template_period_s,
	};
	char err[256];

	if (now < fx.retry_ns[c])
		return;
	fx.x[c] = ipfix_open(&xp, err, sizeof(err));
	if (fx.x[c] == NULL) {
		fx.p->shm->flows.open_failures[c]++;
		fx.retry_ms[c] = fx.retry_ms[c] * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : fx.retry_ms[c] * 2;
		fx.retry_ns[c] = now + (uint64_t)fx.retry_ms[c] * 1000000ull;
		fprintf(stderr, "spanbox-primary: flows.collectors[%u]: %s (retried in %u ms)\n", c, err, fx.retry_ms[c]);
		return;
	}
	fx.retry_ms[c] = RETRY_MIN_MS;
	printf("spanbox-primary: flows: collector %s:%u (%s) opened after %u failures\n", k->address, k->port,
	       k->transport ? "tcp" : "udp", fx.p->shm->flows.open_failures[c]);
	fflush(stdout);
	/* the counters of the time it could not be opened stay: the new exporter's add to them */
	fx.base[c] = o->x;
	fx.based[c] = true;
	o->since_ns = sbx_realtime_ns();
	__atomic_store_n(&o->up, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&o->transitions, 1, __ATOMIC_RELEASE); /* an event collector_up */
}

/* Collector @p c sends the same way under @p a and @p b (address, port, transport, domain, period). */
static bool same_collector(const struct sbx_flows_cfg *a, const struct sbx_flows_cfg *b, unsigned int c)
{
	const struct sbx_flow_collector_cfg *x = &a->collectors[c], *y = &b->collectors[c];

	return c < a->nb_collectors && c < b->nb_collectors && a->domain == b->domain &&
	       a->template_period_s == b->template_period_s && strcmp(x->address, y->address) == 0 &&
	       x->port == y->port && x->transport == y->transport;
}

/* The newest posted config: collectors that changed are flushed (their buffered records go to the
 * old collector, sent or counted lost), closed, their counters added to shm->flows.retired, and
 * opened anew; those that did not keep their connection, sequence numbers and counters. */
static void take_config(uint64_t now)
{
	struct sbx_flows_shm *fs = &fx.p->shm->flows;
	struct sbx_flows_cfg n;
	struct sbx_ipfix_stats s;
	unsigned int c;
	uint64_t gen;

	pthread_mutex_lock(&fx.lock);
	n = fx.next;
	gen = fx.next_gen;
	pthread_mutex_unlock(&fx.lock);
	for (c = 0; c < SBX_MAX_FLOW_COLLECTORS; c++) {
		if (same_collector(&fx.cfg, &n, c) || (c >= fx.cfg.nb_collectors && c >= n.nb_collectors))
			continue;
		if (c < fx.cfg.nb_collectors) {
			if (fx.x[c] != NULL)
				sbx_ipfix_flush(fx.x[c], now);
			publish(c); /* its last counters, before they are retired */
			s = fs->collectors[c].x;
			sbx_ipfix_stats_add(&fs->retired, &s);
			sbx_ipfix_close(fx.x[c], now);
			fx.x[c] = NULL;
			printf("spanbox-primary: flows: collector %s:%u (%s) closed (%llu records sent, %llu lost)\n",
			       fx.cfg.collectors[c].address, fx.cfg.collectors[c].port,
			       fx.cfg.collectors[c].transport ? "tcp" : "udp", (unsigned long long)s.records_sent,
			       (unsigned long long)s.records_lost);
		}
		if (c < n.nb_collectors) {
			collector_open(c, &n);
			printf("spanbox-primary: flows: collector %s:%u (%s) opened as flows.collectors[%u]\n",
			       n.collectors[c].address, n.collectors[c].port, n.collectors[c].transport ? "tcp" : "udp", c);
		}
	}
	fx.cfg = n;
	fs->nb_collectors = n.nb_collectors;
	fs->reconfigs++;
	fx.cur_gen = gen;
	fflush(stdout);
}

/* ---- end of live changes (this thread's side) ---- */

static void *export_thread(void *arg)
{
	struct sbx_flow_record recs[DRAIN_BURST];
	struct sbx_flows_shm *fs = &fx.p->shm->flows;
	unsigned int nw = fx.p->cfg->nb_workers, nc, w, c, i, n;
	uint64_t next_pub = 0, next_top = 0;

	(void)arg;
	for (;;) {
		bool stopping = __atomic_load_n(&fx.stop, __ATOMIC_ACQUIRE);
		uint64_t now = sbx_now_ns(), got = 0;

		if (__atomic_load_n(&fx.next_gen, __ATOMIC_ACQUIRE) != fx.cur_gen)
			take_config(now);
		nc = fx.cfg.nb_collectors;
		for (w = 0; w < nw; w++) {
			while ((n = rte_ring_sc_dequeue_burst_elem(fx.ring[w], recs, sizeof(recs[0]), DRAIN_BURST,
								   NULL)) > 0) {
				for (i = 0; i < n; i++) {
					for (c = 0; c < nc; c++) {
						if (likely(fx.x[c] != NULL))
							sbx_ipfix_add(fx.x[c], &recs[i], now);
						else
							fs->collectors[c].x.records_lost++;
					}
					top_add(&recs[i], now / 1000000000ull);
				}
				if (nc == 0)
					fs->records_no_collector += n;
				got += n;
				if (got >= 4096)
					break; /* the other rings too, and the timers */
			}
		}
		fs->records_in += got;
		for (c = 0; c < nc; c++)
			if (fx.x[c] != NULL)
				sbx_ipfix_poll(fx.x[c], now);
			else if (!stopping)
				collector_retry(c, now);
		if (now >= next_pub) {
			next_pub = now + 100000000ull;
			for (c = 0; c < nc; c++)
				publish(c);
			if (now >= next_top) {
				next_top = now + 1000000000ull;
				top_publish(now / 1000000000ull);
			}
		}
		if (stopping && got == 0)
			break; /* the workers are gone: their rings are empty */
		if (got == 0)
			usleep(1000);
	}
	for (c = 0; c < fx.cfg.nb_collectors; c++) {
		if (fx.x[c] != NULL)
			sbx_ipfix_flush(fx.x[c], sbx_now_ns());
		publish(c);
	}
	top_publish(sbx_now_ns() / 1000000000ull);
	return NULL;
}

/* The workers' rings (once). @return 0, or -1 with the reason in @p err. */
static int rings_create(struct sbx_primary *p, char *err, size_t errlen)
{
	char name[RTE_RING_NAMESIZE];
	unsigned int w;

	if (fx.rings)
		return 0;
	for (w = 0; w < p->cfg->nb_workers; w++) {
		snprintf(name, sizeof(name), SBX_FLOWS_RING_FMT, w);
		fx.ring[w] = rte_ring_lookup(name); /* made by a change that was refused later */
		if (fx.ring[w] == NULL)
			fx.ring[w] = rte_ring_create_elem(name, sizeof(struct sbx_flow_record), SBX_FLOWS_RING_SIZE,
							  SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (fx.ring[w] == NULL) {
			snprintf(err, errlen, "ring %s: %s", name, rte_strerror(rte_errno));
			return -1;
		}
	}
	fx.rings = true;
	return 0;
}

static int thread_start(void)
{
	if (pthread_create(&fx.tid, NULL, export_thread, NULL) != 0) {
		fprintf(stderr, "spanbox-primary: flows: cannot start the exporter thread\n");
		return -1;
	}
	pthread_setname_np(fx.tid, "sbx-flows");
	__atomic_store_n(&fx.started, true, __ATOMIC_RELEASE);
	fx.p->shm->flows.running = 1;
	return 0;
}

int sbx_flows_init(struct sbx_primary *p)
{
	const struct sbx_flows_cfg *f = &p->cfg->flows;
	struct sbx_flows_shm *fs = &p->shm->flows;
	char err[256];
	unsigned int c;

	memset(&fx, 0, sizeof(fx));
	pthread_mutex_init(&fx.lock, NULL);
	fx.p = p;
	memset(fs, 0, sizeof(*fs));
	if (!sbx_flows_cfg_meters(f))
		return 0;
	if (rings_create(p, err, sizeof(err)) != 0) {
		fprintf(stderr, "spanbox-primary: flows: %s\n", err);
		return -1;
	}
	fx.cfg = *f;
	fx.posted = *f;
	for (c = 0; c < f->nb_collectors; c++) {
		collector_open(c, f);
		if (fx.x[c] == NULL)
			return -1;
	}
	fs->nb_collectors = f->nb_collectors;
	if (thread_start() != 0)
		return -1;
	printf("spanbox-primary: flows: metering ports rx 0x%" PRIx64 " tx 0x%" PRIx64 " maps %u"
	       " mirrors 0x%" PRIx64 ", %u flows per worker, %u collectors\n", f->port_mask, f->tx_mask,
	       sbx_mapset_count(&f->map_mask),
	       f->mirror_mask, f->capacity, f->nb_collectors);
	return 0;
}

/* ---- live changes of flows (the runtime tables thread's side, tables.c) ---- */

static void no_emit(void *arg, const struct sbx_flow_record *rec)
{
	(void)arg;
	(void)rec;
}

/*
 * Metering turned on at run time: the workers without a table will create one each (secondary/flows.c)
 * once the change is published. Before it is, every such table is created here at once, on its
 * worker's socket, then freed: a change whose tables do not fit in the hugepage heap is refused naming
 * flows.flows_per_worker, nothing changed (issue #28: it answered 200 and metered nothing before).
 */
static int tables_fit(struct sbx_primary *p, const struct sbx_flows_cfg *n, char *err, size_t errlen)
{
	struct sbx_flowtable *ft[SBX_MAX_WORKERS] = {0};
	struct sbx_flowtable_params fp = {0};
	char name[32];
	unsigned int w, nw = 0;
	int rc = 0;

	fp.capacity = p->cfg->flows.capacity; /* static: the start's */
	fp.active_ns = (uint64_t)n->active_s * 1000000000ull;
	fp.idle_ns = (uint64_t)n->idle_s * 1000000000ull;
	fp.emit = no_emit;
	fp.name = name;
	for (w = 0; w < p->cfg->nb_workers && w < SBX_MAX_WORKERS; w++) {
		int s = p->shm->lcores[w + 2].socket;

		if (__atomic_load_n(&sbx_shm_worker(p->shm, w)->stats.flows_table, __ATOMIC_ACQUIRE) != NULL)
			continue; /* it has its table (metering on, or turned off at run time) */
		snprintf(name, sizeof(name), "ftchk%u", w);
		fp.socket_id = s >= 0 ? s : p->fallback_socket;
		ft[w] = sbx_flowtable_create(&fp);
		if (ft[w] == NULL) {
			snprintf(err, errlen, "flows.flows_per_worker: the flow table of worker %u (%u flows, %.1f MiB on "
				 "socket %d) does not fit in the hugepage memory left (%u tables were made before it); "
				 "nothing changed (fewer flows per worker need a restart, or more eal.socket_mem_mb)",
				 w, fp.capacity, (double)sbx_flowtable_mem(fp.capacity, NULL) / (1 << 20), fp.socket_id,
				 nw);
			rc = -1;
			break;
		}
		nw++;
	}
	for (w = 0; w < SBX_MAX_WORKERS; w++)
		sbx_flowtable_free(ft[w]);
	return rc;
}

int sbx_flows_prepare(struct sbx_primary *p, const struct sbx_flows_cfg *n, char *err, size_t errlen)
{
	if (!sbx_flows_cfg_meters(n))
		return 0;
	if (tables_fit(p, n, err, errlen) != 0)
		return -1;
	return rings_create(p, err, errlen);
}

void sbx_flows_reconfigure(struct sbx_primary *p, const struct sbx_flows_cfg *n)
{
	if (!fx.rings || memcmp(&fx.posted, n, sizeof(*n)) == 0)
		return; /* metering never ran (no record to export), or a change of other tables */
	fx.posted = *n;
	pthread_mutex_lock(&fx.lock);
	fx.next = *n;
	__atomic_add_fetch(&fx.next_gen, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fx.lock);
	if (!__atomic_load_n(&fx.started, __ATOMIC_ACQUIRE) && thread_start() == 0)
		printf("spanbox-primary: flows: metering turned on at run time (ports 0x%" PRIx64 ", %u flows per worker)\n",
		       n->port_mask, p->cfg->flows.capacity);
}

/* ---- end of live changes (the tables thread's side) ---- */

void sbx_flows_tick(struct sbx_primary *p)
{
	unsigned int c;

	if (!__atomic_load_n(&fx.started, __ATOMIC_ACQUIRE))
		return;
	for (c = 0; c < p->shm->flows.nb_collectors; c++) {
		const struct sbx_flow_collector_shm *o = &p->shm->flows.collectors[c];
		struct sbx_flow_collector_cfg kc, *k = &kc; /* the exporter's (live changes): under cfg_seq */
		uint32_t t = __atomic_load_n(&o->transitions, __ATOMIC_ACQUIRE);

		if (t == fx.seen_transitions[c])
			continue;
		fx.seen_transitions[c] = t;
		sbx_flows_collector_cfg(&p->shm->flows, c, &kc);
		sbx_event(p, __atomic_load_n(&o->up, __ATOMIC_RELAXED) ? "collector_up" : "collector_down", -1,
			  getpid(), "flows.collectors[%u] %s:%u (%s): %llu records sent, %llu lost", c, k->address,
			  k->port, k->transport ? "tcp" : "udp", (unsigned long long)o->x.records_sent,
			  (unsigned long long)o->x.records_lost);
	}
}

void sbx_flows_fini(void)
{
	unsigned int w, c;

	if (fx.p == NULL)
		return;
	if (fx.started) {
		__atomic_store_n(&fx.stop, 1, __ATOMIC_RELEASE);
		pthread_join(fx.tid, NULL);
		sbx_flows_tick(fx.p); /* a change of its last moments (a replay's flush) */
		fx.started = false;
		fx.p->shm->flows.running = 0;
		/* one line a replay's reader (tests/e2e/28b_flows_live.sh) can take apart */
		printf("spanbox-primary: flows: records_in=%llu", (unsigned long long)fx.p->shm->flows.records_in);
		for (c = 0; c < fx.p->shm->flows.nb_collectors; c++)
			printf(" collector%u_sent=%llu collector%u_lost=%llu", c,
			       (unsigned long long)fx.p->shm->flows.collectors[c].x.records_sent, c,
			       (unsigned long long)fx.p->shm->flows.collectors[c].x.records_lost);
		for (w = 0; w < fx.p->cfg->nb_workers; w++) {
			const struct sbx_worker_stats *st = &sbx_shm_worker(fx.p->shm, w)->stats;

			printf(" worker%u_frames=%llu worker%u_queued=%llu worker%u_lost_ring=%llu worker%u_forced=%llu", w,
			       (unsigned long long)st->flows_frames, w, (unsigned long long)st->flows_records_queued, w,
			       (unsigned long long)st->flows_lost_ring, w, (unsigned long long)st->flows_expired_forced);
		}
		printf("\n");
		fflush(stdout);
	}
	for (c = 0; c < SBX_MAX_FLOW_COLLECTORS; c++) {
		if (fx.x[c] != NULL)
			sbx_ipfix_close(fx.x[c], sbx_now_ns());
		fx.x[c] = NULL;
	}
	for (w = 0; w < SBX_MAX_WORKERS; w++) {
		rte_ring_free(fx.ring[w]);
		fx.ring[w] = NULL;
	}
	fx.p = NULL;
}
