/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runtime tables (docs/RUNTIME_TABLES.md): cross-connects, mirror sessions, tool groups and the
 * ports' ingress stages change while the workers forward, without a stop.
 *
 * Scheme: a versioned double buffer in the memzone plus DPDK's rte_rcu_qsbr.
 *   - shm->tables[tables_gen & 1] is active. Only the primary writes, and only the inactive buffer.
 *   - A worker compares tables_gen with the generation it runs each loop (one load of a
 *     read-mostly cache line); when it changed, it rebuilds its private state from the active
 *     buffer between two bursts. After every loop it reports a quiescent state; it goes offline
 *     while it sleeps (idle back-off), and the primary puts a dead worker offline.
 *   - Publishing: write the inactive buffer, store tables_gen + 1 (release), then wait for a
 *     grace period (rte_rcu_qsbr_start + rte_rcu_qsbr_check): once it ends, no worker reads the
 *     previous buffer, so the next change may overwrite it. A change that finds the previous grace
 *     period still open (a hung worker) waits for it, then gives up with an error: never a torn read.
 *
 * Requests come from mgmt over rte_mp (SBX_IPC_TABLES, include/spanbox/ipc.h): the proposed config
 * document is in shm->staging, handed over by the state machine ipc.h describes. They are applied
 * on a tables thread of its own (ipc.h: the EAL IPC thread never blocks): validation, filter
 * compilation and the grace period stall neither the main loop (supervision, pcap bridging) nor
 * the other requests.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "spanbox/config_maps.h" /* SBX_CONFIG_FILE_MAX */
#include <rte_bpf.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memzone.h>
#include <rte_rcu_qsbr.h>

#include "spanbox/bpf_filter.h"
#include "spanbox/config_store.h"
#include "primary.h"

#define SBX_GRACE_TIMEOUT_NS (2ULL * 1000 * 1000 * 1000) /* a hung worker is restarted within 0.5 s */

static struct sbx_primary *tp;
static struct rte_rcu_qsbr *rcu;
static uint64_t open_token;      /* grace period still open from the last change, 0 = none */

/* Wait for the grace period of @p token; true when it ended within SBX_GRACE_TIMEOUT_NS. */
static bool grace_wait(uint64_t token)
{
	uint64_t deadline = sbx_now_ns() + SBX_GRACE_TIMEOUT_NS;
	struct timespec ts = { 0, 50000 };

	while (rte_rcu_qsbr_check(rcu, token, false) != 1) {
		if (sbx_now_ns() > deadline)
			return false;
		nanosleep(&ts, NULL);
	}
	return true;
}

/* A worker that hangs in the grace period: name it. */
static int late_worker(void)
{
	unsigned int w;

	for (w = 0; w < tp->cfg->nb_workers; w++)
		if (sbx_shm_worker(tp->shm, w)->pid > 0 &&
		    __atomic_load_n(&sbx_shm_worker(tp->shm, w)->stats.tables_gen, __ATOMIC_ACQUIRE) !=
			    __atomic_load_n(&tp->shm->tables_gen, __ATOMIC_ACQUIRE))
			return (int)w;
	return -1;
}

/*
 * The counter set of each session of @p n, into @p cset: its counter set in @p old when the id was
 * there, else one no session of @p old uses, whose counters and sequence number are zeroed. A
 * removed session's counter set is free only at the next change (workers on @p old may still
 * count into it): SBX_MIRROR_COUNTER_SETS (shm.h) is sized so that a free one always exists.
 * @return 0, or -1 when none is left (never, by that sizing; checked anyway: the index addresses
 * shared memory).
 */
static int assign_counter_sets(const struct sbx_tables *old, const struct sbx_config *n, uint8_t *cset)
{
	bool used[SBX_MIRROR_COUNTER_SETS] = { false };
	uint16_t i, j, w;

	RTE_BUILD_BUG_ON(SBX_MIRROR_COUNTER_SETS > UINT8_MAX);
	if (n->nb_mirrors > SBX_MAX_MIRRORS || old->cfg.nb_mirrors > SBX_MAX_MIRRORS)
		return -1;
	for (j = 0; j < old->cfg.nb_mirrors; j++) {
		if (old->cset[j] >= SBX_MIRROR_COUNTER_SETS)
			return -1;
		used[old->cset[j]] = true; /* kept, or removed: free only next time */
	}
	for (i = 0; i < n->nb_mirrors; i++) {
		cset[i] = UINT8_MAX;
		for (j = 0; j < old->cfg.nb_mirrors; j++)
			if (old->cfg.mirrors[j].id == n->mirrors[i].id)
				cset[i] = old->cset[j];
	}
	for (i = 0; i < n->nb_mirrors; i++) {
		if (cset[i] != UINT8_MAX)
			continue;
		for (j = 0; j < SBX_MIRROR_COUNTER_SETS && used[j]; j++)
			;
		if (j >= SBX_MIRROR_COUNTER_SETS)
			return -1;
		cset[i] = (uint8_t)j;
		used[j] = true;
		/* no worker writes counter set j: the last grace period ended and old uses no session
		 * in it */
		for (w = 0; w < tp->shm->layout.nb_worker_slots; w++)
			memset(&sbx_shm_worker(tp->shm, w)->stats.mirror[j], 0, sizeof(sbx_shm_worker(tp->shm, w)->stats.mirror[j]));
		__atomic_store_n(&tp->shm->mirrors[j].seq_next, 0, __ATOMIC_RELAXED);
	}
	return 0;
}

/* Test hook: SBX_TEST_APPLY_DELAY_MS=<before>[,<after>] delays an apply before it takes the
 * decision to publish (a slow validation) and after it (a slow publication), in ms. */
static void test_delay(int which)
{
	const char *v = getenv("SBX_TEST_APPLY_DELAY_MS");
	unsigned long ms[2] = { 0, 0 };
	struct timespec ts;

	if (v == NULL || sscanf(v, "%lu,%lu", &ms[0], &ms[1]) < 1 || ms[which] == 0)
		return;
	ts.tv_sec = (time_t)(ms[which] / 1000);
	ts.tv_nsec = (long)(ms[which] % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) /* a signal (SIGCHLD) must not shorten it */
		;
}

/* Say why a proposal is refused: into the staging area, for mgmt. */
static int refuse(const char *field, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(const char *field, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tp->shm->staging.error, sizeof(tp->shm->staging.error), fmt, ap);
	va_end(ap);
	snprintf(tp->shm->staging.error_field, sizeof(tp->shm->staging.error_field), "%s", field ? field : "");
	return -1;
}

/* Move the staging area from @p from to @p to; false when it was not in @p from (ipc.h). */
static bool staging_cas(struct sbx_tables_staging *st, uint32_t from, uint32_t to)
{
	return __atomic_compare_exchange_n(&st->state, &from, to, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* The staged request is answered with @p result: hand the staging area back to mgmt. */
static void staging_done(struct sbx_tables_staging *st, uint32_t result)
{
	st->result = result;
	st->done_id = st->request_id;
	__atomic_store_n(&st->state, SBX_STAGING_FREE, __ATOMIC_RELEASE);
}

/*
 * Validate the staged document (state WORKING) and publish it. On success the staging area is
 * handed back (FREE) once the change is live, before the grace period; on failure the caller
 * hands it back. @return 0, -1 refused (422), -2 busy (503).
 */
static int apply_staged(void)
{
	struct sbx_tables_staging *st = &tp->shm->staging;
	struct sbx_config *n = malloc(sizeof(*n));
	const struct sbx_tables *cur;
	struct sbx_tables *next;
	char err[512], client[sizeof(tp->shm->staging.client)], *colon, field[64];
	struct sbx_maps_acl maps;
	const char *diff;
	uint64_t gen, token;
	unsigned int i;
	bool locked = false;
	int rc = -1;

	if (n == NULL)
		return refuse(NULL, "out of memory");
	st->error[0] = st->error_field[0] = '\0';
	if (st->len >= sizeof(st->json) || st->json[st->len] != '\0') {
		rc = refuse(NULL, "staged document not terminated");
		goto out;
	}
	if (sbx_config_parse(st->json, n, err, sizeof(err)) != 0) {
		colon = strchr(err, ':');
		if (colon != NULL)
			*colon = '\0';
		rc = refuse(err, "%s%s%s", err, colon ? ":" : "", colon ? colon + 1 : "");
		goto out;
	}
	diff = sbx_config_static_diff(n, &tp->shm->cfg); /* the config as parsed at start */
	if (diff != NULL) {
		rc = refuse(diff, "%s: cannot change while the appliance runs (only forwarding, mirrors, tool_groups, "
			    "the ports' ingress, maps and flows but its flows_per_worker can): "
			    "restart it with the new config file", diff);
		goto out;
	}
	if (sbx_filters_check(n, err, sizeof(err)) != 0) {
		colon = strchr(err, ':'); /* "mirrors[i].filter: reason" */
		if (colon != NULL)
			*colon = '\0';
		rc = refuse(err, "%s:%s", err, colon ? colon + 1 : " invalid filter");
		goto out;
	}
	/* the previous buffer is free only once the last grace period ended */
	if (open_token != 0) {
		if (!grace_wait(open_token)) {
			int w = late_worker();

			rc = -2;
			refuse(NULL, "worker %d has not taken the previous change yet (hung?): try again", w);
			goto out;
		}
		open_token = 0;
		sbx_recorder_prune(sbx_shm_cfg(tp->shm)); /* captures the late change removed */
		sbx_maps_retire_done(); /* the contexts the late change replaced */
	}
	/* the maps' classifiers, built without the lock (seconds for 65,536 rules: the health check
	 * runs meanwhile); only this thread publishes, so the active tables stay those read here */
	if (sbx_maps_prepare(tp, n, sbx_shm_tables(tp->shm), st->request_id, &maps, field, sizeof(field), err,
			     sizeof(err)) != 0) {
		rc = refuse(field[0] ? field : "maps", "%s", err);
		goto out;
	}
	/* the health check (main loop) keeps a pointer to the active tables while it runs: no buffer
	 * is rewritten meanwhile (new group slots are ones the active tables do not use) */
	sbx_groups_lock();
	locked = true;
	gen = __atomic_load_n(&tp->shm->tables_gen, __ATOMIC_ACQUIRE);
	cur = &tp->shm->tables[gen & 1];
	next = &tp->shm->tables[(gen + 1) & 1];
	/* static sections as parsed at start (shm->cfg), live ones as proposed */
	next->cfg = tp->shm->cfg;
	next->cfg.nb_xconnects = n->nb_xconnects;
	memcpy(next->cfg.xconnects, n->xconnects, sizeof(n->xconnects));
	next->cfg.nb_mirrors = n->nb_mirrors;
	memcpy(next->cfg.mirrors, n->mirrors, sizeof(n->mirrors));
	for (i = 0; i < SBX_MAX_PORTS; i++) /* ports are static but for their ingress stages */
		next->cfg.ports[i].ingress = n->ports[i].ingress;
	next->cfg.nb_tool_groups = n->nb_tool_groups;
	memcpy(next->cfg.tool_groups, n->tool_groups, sizeof(n->tool_groups));
	next->cfg.flows = n->flows; /* live but its capacity (static_diff): flowexport.c */
	next->cfg.nb_maps = n->nb_maps; /* live (issue #27): classifiers built here, off the data path */
	memcpy(next->cfg.maps, n->maps, sizeof(n->maps));
	next->maps = maps;
	if (sbx_flows_prepare(tp, &n->flows, err, sizeof(err)) != 0) { /* its rings, its tables fit */
		colon = strchr(err, ':');
		if (strncmp(err, "flows.", 6) == 0 && colon != NULL) { /* "flows.flows_per_worker: why" */
			*colon = '\0';
			rc = refuse(err, "%s:%s", err, colon + 1);
		} else {
			rc = refuse("flows", "flows: %s", err);
		}
		goto out;
	}
	if (assign_counter_sets(cur, n, next->cset) != 0) {
		rc = refuse("mirrors", "mirrors: no free counter set (at most %d sessions, %d counter sets)",
			    SBX_MAX_MIRRORS, SBX_MIRROR_COUNTER_SETS);
		goto out;
	}
	if (sbx_maps_assign_csets(tp, cur, n, next->mcset) != 0) {
		rc = refuse("maps", "maps: no free counter set (at most %d maps, %d counter sets)", SBX_MAX_MAPS,
			    SBX_MAP_COUNTER_SETS);
		goto out;
	}
	if (sbx_groups_assign(tp, cur, n, next->gslot) != 0) {
		rc = refuse("tool_groups", "tool_groups: no free tool group slot (capacity %u groups of %u members, "
			    "%u slots: workers.tool_group_capacity)", (unsigned int)tp->shm->cfg.tg_cap_groups,
			    (unsigned int)tp->shm->cfg.tg_cap_members, tp->shm->layout.nb_group_slots);
		goto out;
	}
	if (sbx_recorder_add(&next->cfg, err, sizeof(err)) != 0) { /* the rings of new captures */
		sbx_recorder_prune(&cur->cfg);
		colon = strchr(err, ':');
		if (colon != NULL)
			*colon = '\0';
		rc = refuse(err, "%s:%s", err, colon ? colon + 1 : " cannot start the capture");
		goto out;
	}
	memcpy(next->json, st->json, st->len + 1);
	next->json_len = st->len;
	next->gen = gen + 1;
	next->request_id = st->request_id;
	snprintf(client, sizeof(client), "%s", st->client);
	sbx_groups_unlock();
	locked = false;
	test_delay(0);
	/* the decision: from here on the change will be live, unless mgmt gave up on it already */
	if (!staging_cas(st, SBX_STAGING_WORKING, SBX_STAGING_APPLYING)) {
		rc = -2;
		sbx_recorder_prune(&cur->cfg);
		refuse(NULL, "mgmt stopped waiting for this change: nothing was changed");
		goto out;
	}
	test_delay(1);
	__atomic_store_n(&tp->shm->tables_gen, gen + 1, __ATOMIC_RELEASE);
	tp->shm->tables_applied_ns = sbx_realtime_ns();
	sbx_maps_published(gen + 1); /* the set replaced is retired: freed after the grace period */
	rc = 0;
	staging_done(st, SBX_TABLES_APPLIED); /* mgmt may write the staging area again */
	sbx_flows_reconfigure(tp, &next->cfg.flows); /* the exporter re-opens changed collectors */
	token = rte_rcu_qsbr_start(rcu);
	if (!grace_wait(token))
		open_token = token; /* published; the next change waits for the late worker */
	else {
		sbx_recorder_prune(&next->cfg); /* no worker uses a removed capture's ring any more */
		sbx_maps_retire_done(); /* nor the classifiers the change replaced */
	}
	sbx_event(tp, "tables_applied", -1, 0, "generation %llu: %u xconnects, %u mirrors, %u maps (%s)%s",
		  (unsigned long long)(gen + 1), n->nb_xconnects, n->nb_mirrors, n->nb_maps, client,
		  open_token ? "; a worker is late" : "");
out:
	if (rc != 0)
		sbx_maps_abandon(); /* a set built for this change, never published */
	if (locked)
		sbx_groups_unlock();
	free(n);
	return rc;
}

/*
 * SBX_IPC_TABLES requests (ipc.h). The EAL IPC thread only checks a message and queues it, with a
 * copy of the sender's address; the tables thread (tables_thread) applies one request at a time
 * and answers it with rte_mp_reply(), so that validation, filter compilation and a grace period
 * (up to seconds) delay neither the main loop (supervision, pcap bridging) nor the other rte_mp
 * actions (a worker restart, a link change: control.c). A request is taken only when it names
 * the staged request and the staging area is PENDING; anything else is answered without touching
 * the tables.
 */
#define TABLES_QUEUE 4 /* mgmt sends one request at a time: room for a late duplicate or two */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct sbx_tables_req req[TABLES_QUEUE];
	char peer[TABLES_QUEUE][108]; /* sun_path of each requester */
	unsigned int head, n;
	bool stop, started;
	pthread_t tid;
} tq = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static int tables_reply(const struct sbx_tables_reply *rep, const char *peer)
{
	return sbx_ipc_reply(SBX_IPC_TABLES, rep, sizeof(*rep), peer);
}

/* Apply one checked request (tables thread). */
static void tables_serve(const struct sbx_tables_req *req, const char *peer)
{
	struct sbx_tables_staging *st = &tp->shm->staging;
	struct sbx_tables_reply rep = { .version = SBX_IPC_VERSION, .request_id = req->request_id };
	int rc;

	/* only the tables thread applies: changes are serialized by its queue, no lock */
	if (req->request_id != __atomic_load_n(&st->request_id, __ATOMIC_ACQUIRE) ||
	    !staging_cas(st, SBX_STAGING_PENDING, SBX_STAGING_WORKING)) {
		rep.result = SBX_TABLES_STALE; /* mgmt gave up on it, or a late duplicate */
	} else {
		rc = apply_staged();
		if (rc != 0)
			staging_done(st, rc == -2 ? SBX_TABLES_BUSY : SBX_TABLES_REFUSED);
		rep.result = rc == 0 ? SBX_TABLES_APPLIED : rc == -2 ? SBX_TABLES_BUSY : SBX_TABLES_REFUSED;
	}
	rep.gen = __atomic_load_n(&tp->shm->tables_gen, __ATOMIC_ACQUIRE);
	tables_reply(&rep, peer);
}

static void *tables_thread(void *arg)
{
	struct sbx_tables_req req;
	char peer[sizeof(tq.peer[0])];
	sigset_t all;

	(void)arg;
	sigfillset(&all); /* SIGINT/SIGTERM/SIGCHLD are the main loop's (main.c, workers.c) */
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_mutex_lock(&tq.lock);
	for (;;) {
		while (tq.n == 0 && !tq.stop)
			pthread_cond_wait(&tq.cond, &tq.lock);
		if (tq.n == 0) /* stopping, nothing left */
			break;
		req = tq.req[tq.head];
		memcpy(peer, tq.peer[tq.head], sizeof(peer));
		tq.head = (tq.head + 1) % TABLES_QUEUE;
		tq.n--;
		pthread_mutex_unlock(&tq.lock);
		tables_serve(&req, peer);
		pthread_mutex_lock(&tq.lock);
	}
	pthread_mutex_unlock(&tq.lock);
	return NULL;
}

/* EAL IPC thread: check the message, queue it for the tables thread; never waits. */
static int on_request(const struct rte_mp_msg *msg, const void *peer)
{
	struct sbx_tables_reply rep = { .version = SBX_IPC_VERSION, .result = SBX_TABLES_BAD_MESSAGE };
	struct sbx_tables_req req;
	unsigned int at;

	if (msg->len_param == (int)sizeof(req)) {
		memcpy(&req, msg->param, sizeof(req));
		rep.request_id = req.request_id;
		if (req.version == SBX_IPC_VERSION && req.verb == SBX_TABLES_APPLY) {
			pthread_mutex_lock(&tq.lock);
			if (tq.n < TABLES_QUEUE && !tq.stop) {
				at = (tq.head + tq.n) % TABLES_QUEUE;
				tq.req[at] = req;
				snprintf(tq.peer[at], sizeof(tq.peer[at]), "%s", (const char *)peer);
				tq.n++;
				pthread_cond_signal(&tq.cond);
				pthread_mutex_unlock(&tq.lock);
				return 0; /* the tables thread answers */
			}
			pthread_mutex_unlock(&tq.lock);
			rep.result = SBX_TABLES_BUSY; /* the staging area is untouched: nothing done */
		}
	}
	rep.gen = __atomic_load_n(&tp->shm->tables_gen, __ATOMIC_ACQUIRE);
	return tables_reply(&rep, peer);
}

int sbx_tables_init(struct sbx_primary *p, const char *json)
{
	size_t sz = rte_rcu_qsbr_get_memsize(SBX_MAX_WORKERS), len = strlen(json);
	const struct rte_memzone *mz;
	struct sbx_tables *t = &p->shm->tables[0];
	char err[512] = "";
	uint16_t i;

	tp = p;
	if (len >= sizeof(t->json)) {
		fprintf(stderr, "spanbox-primary: config: longer than %zu bytes\n", sizeof(t->json) - 1);
		return -1;
	}
	mz = rte_memzone_reserve(SBX_RCU_MEMZONE_NAME, sz, (int)rte_socket_id(), 0);
	if (mz == NULL || rte_rcu_qsbr_init(mz->addr, SBX_MAX_WORKERS) != 0) {
		fprintf(stderr, "spanbox-primary: cannot set up %s: %s\n", SBX_RCU_MEMZONE_NAME, rte_strerror(rte_errno));
		return -1;
	}
	rcu = mz->addr;
	t->cfg = p->shm->cfg;
	for (i = 0; i < SBX_MAX_MIRRORS; i++)
		t->cset[i] = (uint8_t)i;
	if (sbx_groups_assign(p, NULL, &t->cfg, t->gslot) != 0) {
		fprintf(stderr, "spanbox-primary: tool_groups: no slot\n");
		return -1;
	}
	t->request_id = 0;
	p->shm->staging.state = SBX_STAGING_FREE;
	memcpy(t->json, json, len + 1);
	t->json_len = (uint32_t)len;
	t->gen = 0;
	p->shm->tables_gen = 0;
	if (sbx_recorder_init(p) != 0 || sbx_recorder_add(&t->cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "spanbox-primary: config: %s\n", err);
		return -1;
	}
	tq.stop = false;
	if (pthread_create(&tq.tid, NULL, tables_thread, NULL) != 0) {
		fprintf(stderr, "spanbox-primary: cannot start the tables thread\n");
		return -1;
	}
	tq.started = true;
	if (rte_mp_action_register(SBX_IPC_TABLES, on_request) != 0) {
		fprintf(stderr, "spanbox-primary: cannot register IPC action %s\n", SBX_IPC_TABLES);
		return -1;
	}
	return 0;
}

void sbx_tables_fini(void)
{
	rte_mp_action_unregister(SBX_IPC_TABLES);
	if (tq.started) { /* the changes queued and in flight end first */
		pthread_mutex_lock(&tq.lock);
		tq.stop = true;
		pthread_cond_signal(&tq.cond);
		pthread_mutex_unlock(&tq.lock);
		pthread_join(tq.tid, NULL);
		tq.started = false;
	}
}

void sbx_tables_worker_gone(unsigned int w)
{
	if (rcu != NULL)
		rte_rcu_qsbr_thread_offline(rcu, w);
}

char *sbx_tables_effective_json(const char *path, const struct sbx_config *file_cfg, bool use_stored, char *err,
				size_t errlen, bool *from_store)
{
	FILE *f = fopen(path, "r");
	char *text = NULL, *stored = NULL, *out = NULL, when[128] = "", *key;
	cJSON *doc = NULL, *live = NULL, *file_maps = NULL;
	long n;

	*from_store = false;
	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		snprintf(err, errlen, "config: %s: %s", path, strerror(errno));
		goto out;
	}
	if ((size_t)n > SBX_CONFIG_FILE_MAX) { /* the maps' rules go apart (maps.c); tables_init checks the rest */
		snprintf(err, errlen, "config: %s: longer than %d bytes", path, SBX_CONFIG_FILE_MAX);
		goto out;
	}
	text = calloc(1, (size_t)n + 1);
	if (text == NULL || fread(text, 1, (size_t)n, f) != (size_t)n) {
		snprintf(err, errlen, "config: %s: cannot read", path);
		goto out;
	}
	if (use_stored) {
		char *key = realpath(path, NULL);

		stored = key ? sbx_store_get(file_cfg->mgmt_database, key, when, sizeof(when)) : NULL;
		free(key);
	}
	if (stored == NULL) {
		out = text;
		text = NULL;
		goto out;
	}
	doc = cJSON_Parse(text);
	live = cJSON_Parse(stored);
	if (doc == NULL || live == NULL) {
		snprintf(err, errlen, "stored config in %s: not JSON", file_cfg->mgmt_database);
		goto out;
	}
	/* the stored live sections replace the file's (absent in the store = absent) */
	file_maps = cJSON_DetachItemFromObjectCaseSensitive(doc, "maps");
	if (file_maps != NULL)
		cJSON_AddItemToObject(doc, "maps", cJSON_Duplicate(file_maps, true));
	sbx_live_merge(doc, live);
	key = realpath(path, NULL); /* stored maps hold summaries: their rules from map_rules or the file */
	if (sbx_store_maps_resolve(doc, file_maps, file_cfg->mgmt_database, key ? key : "", err, errlen) != 0) {
		size_t l = strlen(err);

		snprintf(err + l, errlen - l, " (database %s; ./spanbox reset-config %s forgets what is stored)",
			 file_cfg->mgmt_database, path);
		free(key);
		goto out;
	}
	free(key);
	out = cJSON_Print(doc);
	*from_store = true;
	printf("spanbox-primary: " SBX_LIVE_PARTS_TEXT ": the ones changed through the API for %s (database %s,"
	       " saved %s) win over the file's; ./spanbox reset-config %s goes back to the file's\n",
	       path, file_cfg->mgmt_database, when, path);
out:
	if (f != NULL)
		fclose(f);
	free(text);
	free(stored);
	cJSON_Delete(doc);
	cJSON_Delete(live);
	cJSON_Delete(file_maps);
	return out;
}
