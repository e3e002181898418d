/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Samples of the memzone over time (watch.h): cycles per packet over a window, stalled workers,
 * pools that drain with no explanation.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "pool_audit.h"
#include "watch.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define SAMPLES (MGMT_CPP_WINDOW_S + 2) /* one a second, the window's oldest included */
#define NS 1000000000ULL

struct cpp_sample {
	uint64_t t_ns, cycles, pkts;
};

struct worker_watch {
	struct cpp_sample s[SAMPLES]; /* ring: s[(head - 1 - k) % SAMPLES] is k samples old */
	unsigned int n, head;
	int32_t pid;                  /* process the loops counter belongs to */
	uint64_t loops;               /* its last value */
	uint64_t loops_ns;            /* the tick it last changed at (or the process or state did), 0 never */
};

struct pool_watch {
	unsigned int bad;             /* samples in a row with more unexplained than allowed */
	int64_t unexplained;          /* of the last sample */
	uint64_t allowance;           /* mbufs the plan allows in flight, at the last sample */
	uint32_t available, size;
	/* its indirect-mbuf pool: in flight against what mirror queues and copy buffers hold */
	unsigned int ind_bad;
	int64_t ind_in_flight;
	uint64_t ind_allowance;
};

static struct {
	pthread_mutex_t mu;
	uint64_t start_ns;            /* shm->start_realtime_ns of the primary sampled */
	uint64_t last_sample_ns;
	uint64_t tick_ns;             /* the last tick: a loops counter is stale only as seen by one
					 (a main thread held up, by SQLite say, proves nothing) */
	struct worker_watch w[SBX_MAX_WORKERS];
	struct pool_watch p[SBX_MAX_POOLS];
} g = { .mu = PTHREAD_MUTEX_INITIALIZER };

uint64_t mgmt_watch_stale_ms(const struct sbx_shm *shm)
{
	uint64_t ms = shm->cfg.hang_timeout_ms / 2;

	ms = MIN(MAX(ms, MGMT_STALE_MIN_MS), MGMT_STALE_MAX_MS);
	return MAX(ms, shm->cfg.idle_sleep_us / 1000 + 100);
}

/* Mbufs of pool @p i the plan allows outside the audit's known places at any instant. */
static uint64_t pool_allowance(const struct sbx_shm *shm, uint32_t i)
{
	const struct sbx_pool_plan *pl = &shm->pools[i].plan;
	uint64_t crashes = 0;
	uint16_t w;

	for (w = 0; w < MIN(shm->cfg.nb_workers, SBX_MAX_WORKERS); w++)
		crashes += sbx_shm_worker(shm, w)->crashes;
	/* TX descriptors and mirror queues hold frames until the PMD frees them, a worker holds its
	 * burst (and the copies of it) between RX and TX, the primary one read burst per bridged port;
	 * a crash loses at most the burst it was sending (primary/workers.c) and the outer fragments
	 * its reassembly tables held (its share of plan.reassembly, docs/INGRESS.md "Fragments") */
	return pl->tx_desc + pl->mirror_tx + pl->bursts + pl->rings +
	       crashes * (shm->cfg.burst + pl->reassembly / MAX(pl->workers, 1u));
}

/* Indirect mbufs of the pool beside pool @p i the plan allows in flight: the shares mirror TX
 * queues and the workers' copy buffers hold (plan.mirror_tx), and a burst per crash. */
static uint64_t ind_pool_allowance(const struct sbx_shm *shm, uint32_t i)
{
	uint64_t crashes = 0;
	uint16_t w;

	for (w = 0; w < MIN(shm->cfg.nb_workers, SBX_MAX_WORKERS); w++)
		crashes += sbx_shm_worker(shm, w)->crashes;
	return shm->pools[i].plan.mirror_tx + crashes * shm->cfg.burst;
}

void mgmt_watch_tick(const struct sbx_shm *shm)
{
	uint16_t nb_w = MIN(shm->cfg.nb_workers, SBX_MAX_WORKERS);
	uint32_t nb_p = MIN(shm->nb_pools, SBX_MAX_POOLS), i;
	struct mgmt_pool_audit au[SBX_MAX_POOLS];
	struct mgmt_ind_pool_audit ia[SBX_MAX_POOLS];
	int au_rc[SBX_MAX_POOLS], ia_rc[SBX_MAX_POOLS];
	uint64_t now = sbx_now_ns();
	bool sample;
	uint16_t w;

	pthread_mutex_lock(&g.mu);
	if (g.start_ns != shm->start_realtime_ns) { /* another primary: its counters start anew */
		memset(g.w, 0, sizeof(g.w));
		memset(g.p, 0, sizeof(g.p));
		g.start_ns = shm->start_realtime_ns;
		g.last_sample_ns = 0;
	}
	g.tick_ns = now;
	for (w = 0; w < nb_w; w++) {
		const struct sbx_worker_shm *ws = sbx_shm_worker(shm, w);
		struct worker_watch *x = &g.w[w];
		uint64_t loops = ws->stats.loops;

		if (x->loops_ns == 0 || ws->pid != x->pid || loops != x->loops || ws->state != SBX_W_RUNNING) {
			x->pid = ws->pid;
			x->loops = loops;
			x->loops_ns = now;
		}
	}
	sample = now - g.last_sample_ns >= MGMT_WATCH_PERIOD_NS;
	if (sample) {
		g.last_sample_ns = now;
		for (w = 0; w < nb_w; w++) {
			struct worker_watch *x = &g.w[w];
			struct cpp_sample c = { now, sbx_shm_worker(shm, w)->stats.busy_cycles, sbx_shm_worker(shm, w)->stats.busy_pkts };
			const struct cpp_sample *last = x->n ? &x->s[(x->head + SAMPLES - 1) % SAMPLES] : NULL;

			if (last != NULL && (c.cycles < last->cycles || c.pkts < last->pkts))
				x->n = 0; /* counters went back: nothing before is comparable */
			x->s[x->head] = c;
			x->head = (x->head + 1) % SAMPLES;
			x->n = MIN(x->n + 1, SAMPLES);
		}
	}
	pthread_mutex_unlock(&g.mu);
	if (!sample)
		return;
	/* the audits read the mempools: outside the lock, the HTTP thread does not wait for them */
	for (i = 0; i < nb_p; i++) {
		au_rc[i] = mgmt_pool_audit(shm, i, &au[i]);
		ia_rc[i] = mgmt_ind_pool_audit(shm, i, &ia[i]);
	}
	pthread_mutex_lock(&g.mu);
	for (i = 0; i < nb_p; i++) {
		struct pool_watch *x = &g.p[i];

		x->allowance = pool_allowance(shm, i);
		x->unexplained = au_rc[i] == 0 ? au[i].unexplained : 0;
		x->available = shm->pools[i].avail;
		x->size = shm->pools[i].size;
		x->bad = au_rc[i] == 0 && x->unexplained > (int64_t)x->allowance ? x->bad + 1 : 0;
		x->ind_allowance = ind_pool_allowance(shm, i);
		x->ind_in_flight = ia_rc[i] == 0 ? ia[i].in_flight : 0;
		x->ind_bad = ia_rc[i] == 0 && x->ind_in_flight > (int64_t)x->ind_allowance ? x->ind_bad + 1 : 0;
	}
	pthread_mutex_unlock(&g.mu);
}

void mgmt_watch_cpp(const struct sbx_shm *shm, uint16_t w, struct mgmt_cpp_window *out)
{
	uint64_t now = sbx_now_ns(), cycles = sbx_shm_worker(shm, w)->stats.busy_cycles, pkts = sbx_shm_worker(shm, w)->stats.busy_pkts;
	const uint64_t oldest = MGMT_CPP_WINDOW_S * NS + NS / 2, youngest = NS / 2;
	struct cpp_sample s = { 0, 0, 0 };
	const struct worker_watch *x;
	unsigned int k;

	memset(out, 0, sizeof(*out));
	if (w >= SBX_MAX_WORKERS)
		return;
	pthread_mutex_lock(&g.mu);
	x = &g.w[w];
	if (g.start_ns == shm->start_realtime_ns) {
		/* the oldest sample within the window, at least half a second old */
		for (k = 0; k < x->n; k++) {
			const struct cpp_sample *c = &x->s[(x->head + SAMPLES - 1 - k) % SAMPLES];

			if (now - c->t_ns > oldest)
				break;
			if (now - c->t_ns >= youngest)
				s = *c;
		}
	}
	pthread_mutex_unlock(&g.mu);
	if (s.t_ns == 0 || pkts < s.pkts || cycles < s.cycles)
		return;
	out->have_window = true;
	out->window_s = (double)(now - s.t_ns) / (double)NS;
	out->frames = pkts - s.pkts;
	out->valid = out->frames >= MGMT_CPP_MIN_FRAMES;
	if (out->valid)
		out->cpp = (double)(cycles - s.cycles) / (double)out->frames;
}

static cJSON *problem(cJSON *a, const char *kind, const char *msg)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "kind", kind);
	cJSON_AddStringToObject(o, "message", msg);
	cJSON_AddItemToArray(a, o);
	return o;
}

/*
 * Worker @p w is failed (crash_limit): a problem naming it and the RX queues nobody polls since
 * (as "PORT/QUEUE" in the message, as {port, queue} objects in "queues"), with its last exit.
 */
static void failed_problem(cJSON *a, const struct sbx_shm *shm, uint16_t w)
{
	const struct sbx_worker_shm *ws = sbx_shm_worker(shm, w);
	const struct sbx_worker_rxqs *wq = &shm->placement[w];
	uint16_t nb_q = MIN(wq->nb_rxq, SBX_MAX_RXQ_PER_WORKER), i;
	char qs[256] = "", last[80], msg[768];
	size_t n = 0;
	cJSON *o, *arr;
	int st = (int)ws->exit_status;

	for (i = 0; i < nb_q && n < sizeof(qs); i++)
		n += (size_t)snprintf(qs + n, sizeof(qs) - n, "%s%.*s/%u", i ? ", " : "", SBX_NAME_LEN,
				      shm->cfg.ports[wq->rxq[i].port % SBX_MAX_PORTS].name, wq->rxq[i].queue);
	if (WIFSIGNALED(st))
		snprintf(last, sizeof(last), "the last killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(last, sizeof(last), "the last exited with status %d", WEXITSTATUS(st));
	snprintf(msg, sizeof(msg),
		 "worker %u failed: %u crashes within workers.crash_window_s %u s (workers.crash_limit), %s; not "
		 "restarted: nobody polls its RX queues %s, what arrives there is lost; a parked standby does not take "
		 "a failed worker over (it runs the same binary), POST /api/v1/workers/%u/restart starts it again",
		 w, shm->cfg.crash_limit, shm->cfg.crash_window_s, last, nb_q ? qs : "(none)", w);
	o = problem(a, "worker", msg);
	cJSON_AddNumberToObject(o, "worker", w);
	arr = cJSON_AddArrayToObject(o, "queues");
	for (i = 0; i < nb_q; i++) {
		cJSON *q = cJSON_CreateObject();
		char port[SBX_NAME_LEN];

		snprintf(port, sizeof(port), "%.*s", SBX_NAME_LEN - 1, shm->cfg.ports[wq->rxq[i].port % SBX_MAX_PORTS].name);
		cJSON_AddStringToObject(q, "port", port);
		cJSON_AddNumberToObject(q, "queue", wq->rxq[i].queue);
		cJSON_AddItemToArray(arr, q);
	}
}

cJSON *mgmt_watch_problems(const struct sbx_shm *shm)
{
	cJSON *a = cJSON_CreateArray();
	uint64_t now = sbx_now_ns(), stale;
	char msg[512];
	uint32_t i;
	uint16_t w;

	if (a == NULL || shm == NULL)
		return a;
	stale = mgmt_watch_stale_ms(shm);
	pthread_mutex_lock(&g.mu);
	for (w = 0; w < MIN(shm->cfg.nb_workers, SBX_MAX_WORKERS); w++) {
		const struct sbx_worker_shm *ws = sbx_shm_worker(shm, w);
		const struct worker_watch *x = &g.w[w];
		uint64_t hb = ws->stats.heartbeat_ns, hb_ms, loops_ms = 0;

		if (ws->state == SBX_W_FAILED)
			failed_problem(a, shm, w);
		if (ws->state != SBX_W_RUNNING || ws->pid <= 0 || hb == 0)
			continue;
		hb_ms = now > hb ? (now - hb) / 1000000ULL : 0;
		if (g.start_ns == shm->start_realtime_ns && x->pid == ws->pid && x->loops_ns && g.tick_ns > x->loops_ns)
			loops_ms = (g.tick_ns - x->loops_ns) / 1000000ULL;
		if (hb_ms <= stale && loops_ms <= stale)
			continue;
		if (ws->starved) /* the primary saw its CPU time stand still (primary/workers.c) */
			snprintf(msg, sizeof(msg),
				 "worker %u (pid %d, lcore %u) is not scheduled (CPU-starved or stopped): heartbeat %llu ms "
				 "old, its thread's CPU time stands still; the primary kills it after %u x "
				 "workers.hang_timeout_ms %u", w, (int)ws->pid, ws->lcore_id, (unsigned long long)hb_ms,
				 SBX_STARVE_FACTOR, shm->cfg.hang_timeout_ms);
		else
			snprintf(msg, sizeof(msg),
				 "worker %u (pid %d, lcore %u) is running but stalled: heartbeat %llu ms old, loops counter "
				 "unchanged for %llu ms (more than %llu ms); the primary kills it after "
				 "workers.hang_timeout_ms %u if its CPU time advances (hung), after %u x that if it does not "
				 "(not scheduled)", w, (int)ws->pid, ws->lcore_id, (unsigned long long)hb_ms,
				 (unsigned long long)loops_ms, (unsigned long long)stale, shm->cfg.hang_timeout_ms,
				 SBX_STARVE_FACTOR);
		cJSON_AddNumberToObject(problem(a, "worker", msg), "worker", w);
	}
	for (i = 0; g.start_ns == shm->start_realtime_ns && i < MIN(shm->nb_pools, SBX_MAX_POOLS); i++) {
		const struct pool_watch *x = &g.p[i];

		if (x->bad >= MGMT_POOL_BAD_SAMPLES) {
			snprintf(msg, sizeof(msg),
				 "pool %.*s: %lld mbufs unexplained by the pool audit for %u s, more than the %llu its plan "
				 "allows in flight (TX descriptors, mirror queues, bursts, bridge rings, a burst per crash); "
				 "%u of %u available: a process holds or leaks them (GET /api/v1/pools/%.*s)",
				 SBX_NAME_LEN, shm->pools[i].name, (long long)x->unexplained, x->bad,
				 (unsigned long long)x->allowance, x->available, x->size, SBX_NAME_LEN, shm->pools[i].name);
			problem(a, "pool", msg);
		}
		if (x->ind_bad >= MGMT_POOL_BAD_SAMPLES) { /* its indirect-mbuf pool */
			snprintf(msg, sizeof(msg),
				 "pool %.*s: %lld indirect mbufs in flight for %u s, more than the %llu its plan allows "
				 "(mirror queues, copy buffers, a burst per crash): a process holds or leaks shared mirror "
				 "copies (GET /api/v1/pools/%.*s)",
				 SBX_NAME_LEN, shm->pools[i].indirect.name, (long long)x->ind_in_flight, x->ind_bad,
				 (unsigned long long)x->ind_allowance, SBX_NAME_LEN, shm->pools[i].name);
			problem(a, "pool", msg);
		}
	}
	pthread_mutex_unlock(&g.mu);
	return a;
}
