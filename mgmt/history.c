/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stats history: sampling from the memzone, compaction, queries (history.h, docs/MGMT.md).
 *
 * Storage (migration 3 of db.c): history_series(id, kind, name, metric) names every series once;
 * history_1s, history_10s and history_1m hold (series, t, v) with t in unix seconds and v the
 * CUMULATIVE value as read (counters) or the value (gauges). WITHOUT ROWID tables keyed by
 * (series, t): a query reads one contiguous key range per table, and compaction works series by
 * series on the same key, so no other index is needed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "spanbox/shm.h"
#include "db.h"
#include "history.h"
#include "shmview.h"
#include "timefmt.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define LOOKBACK_S 120 /* a window's base sample may be this much older than the window */

/** One value read from the memzone. */
struct val {
	const char *kind;        /* "port", "worker", "mirror", "map", "pool" */
	char name[SBX_NAME_LEN];
	const char *metric;
	uint64_t v;
};

/* Series per object: the hand-written ones (port: drops; worker: packets and restarts; mirror:
 * drops; map: passed and drops) plus every counter of counters.h marked SERIES (a map's session
 * counters are a mirror's). */
#define ONE_IF_SERIES(field, json, prom, unit, hist, help) SBX_IF_SERIES(hist, +1)
#define MIRROR_ONE_IF_SERIES(field, json, replay, prom, reason, unit, hist, help) SBX_IF_SERIES(hist, +1)
#define PORT_SERIES (1 SBX_FOREACH_ETHDEV_COUNTER(ONE_IF_SERIES))
#define WORKER_SERIES (2 SBX_FOREACH_WORKER_COUNTER(ONE_IF_SERIES))
#define MIRROR_SERIES (1 SBX_FOREACH_MIRROR_COUNTER(MIRROR_ONE_IF_SERIES))
#define MAP_SERIES (MIRROR_SERIES + 1)

/* filled by collect(), main thread only */
static struct val g_vals[SBX_MAX_PORTS * PORT_SERIES + SBX_MAX_WORKERS * WORKER_SERIES + SBX_MAX_MIRRORS * MIRROR_SERIES +
			 SBX_MAX_MAPS * MAP_SERIES + SBX_MAX_POOLS];

static int64_t now_s(void)
{
	return (int64_t)(sbx_realtime_ns() / 1000000000ULL);
}

static void add(unsigned int *n, const char *kind, const char *name, const char *metric, uint64_t v)
{
	struct val *x = &g_vals[*n];

	x->kind = kind;
	snprintf(x->name, sizeof(x->name), "%s", name);
	x->metric = metric;
	x->v = v;
	(*n)++;
}

/* The series of a session's counters @p c (a mirror's, or a map's session): every mirror counter
 * marked SERIES, and "drops", the sum of those marked DROPS. */
static void add_session(unsigned int *n, const char *kind, const char *name, const struct sbx_mirror_counters *c)
{
	uint64_t drops = 0;

#define SESSION_ADD(field, json, replay, prom, reason, unit, hist, help)                             \
	SBX_IF_SERIES(hist, add(n, kind, name, json, c->field);) SBX_IF_DROPS(hist, drops += c->field;)
	SBX_FOREACH_MIRROR_COUNTER(SESSION_ADD)
#undef SESSION_ADD
	add(n, kind, name, "drops", drops);
}

/* Read every sampled value of the memzone into g_vals. @return how many. */
static unsigned int collect(const struct sbx_shm *shm)
{
	const struct sbx_config *mcfg = sbx_shm_cfg(shm); /* mirrors: the active runtime tables */
	uint16_t nb_ports = mgmt_nb_ports(shm), nb_w = mgmt_nb_workers(shm);
	char name[SBX_NAME_LEN];
	unsigned int n = 0, i, w;

	for (i = 0; i < nb_ports; i++) {
		const struct sbx_port_shm *ps = &shm->ports[i];
		struct sbx_port_counters sum;
		uint64_t drops = 0;

		mgmt_port_worker_sum(shm, (uint16_t)i, nb_w, &sum);
#define PORT_DROPS(field, json, prom, unit, hist, help) SBX_IF_DROPS(hist, drops += sum.field;)
		SBX_FOREACH_PORT_COUNTER(PORT_DROPS)
#undef PORT_DROPS
		snprintf(name, sizeof(name), "%.*s", SBX_NAME_LEN - 1, shm->cfg.ports[i].name);
#define ETHDEV_ADD(field, key, prom, unit, hist, help)                                                 \
	SBX_IF_SERIES(hist, add(&n, "port", name, key, ps->field);) SBX_IF_DROPS(hist, drops += ps->field;)
		SBX_FOREACH_ETHDEV_COUNTER(ETHDEV_ADD)
#undef ETHDEV_ADD
		add(&n, "port", name, "drops", drops);
	}
	for (w = 0; w < nb_w; w++) {
		const struct sbx_worker_shm *ws = sbx_shm_worker(shm, w);
		uint64_t pkts = 0;

		for (i = 0; i < nb_ports; i++)
			pkts += ws->stats.port[i].rx_pkts;
		snprintf(name, sizeof(name), "%u", w);
		add(&n, "worker", name, "packets", pkts);
#define WORKER_ADD(field, json, prom, unit, hist, help) SBX_IF_SERIES(hist, add(&n, "worker", name, json, ws->stats.field);)
		SBX_FOREACH_WORKER_COUNTER(WORKER_ADD)
#undef WORKER_ADD
		add(&n, "worker", name, "restarts", ws->restarts);
	}
	for (i = 0; i < mgmt_nb_mirrors(shm); i++) {
		struct sbx_mirror_counters c;

		mgmt_mirror_sum(shm, (uint16_t)i, nb_w, &c); /* by the session's counter set */
		snprintf(name, sizeof(name), "%u", (unsigned int)mcfg->mirrors[i].id);
		add_session(&n, "mirror", name, &c);
	}
	for (i = 0; i < MIN(mcfg->nb_maps, SBX_MAX_MAPS); i++) { /* by the map's counter set, as GET /maps */
		struct sbx_mirror_counters c;
		const uint64_t passed = mgmt_map_sum(shm, (uint16_t)i, nb_w, &c);

		snprintf(name, sizeof(name), "%u", (unsigned int)mcfg->maps[i].s.id);
		add(&n, "map", name, "passed", passed);
		add_session(&n, "map", name, &c);
	}
	for (i = 0; i < MIN(shm->nb_pools, SBX_MAX_POOLS); i++) {
		snprintf(name, sizeof(name), "%.*s", SBX_NAME_LEN - 1, shm->pools[i].name);
		add(&n, "pool", name, "in_use", shm->pools[i].in_use);
	}
	return n;
}

/* @return the single integer of @p sql on @p h, @p dflt for no row or NULL, and on error. */
static int64_t q_int(sqlite3 *h, const char *sql, int64_t dflt)
{
	sqlite3_stmt *st;
	int64_t v = dflt;

	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
		return dflt;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* SELECT min(m) / max(m) over the three tables, series by series on the primary key */
#define PER_SERIES(agg)                                                                            \
	"SELECT " agg "(m) FROM (SELECT (SELECT " agg "(t) FROM history_1m WHERE series = s.id) AS m" \
	" FROM history_series s UNION ALL SELECT (SELECT " agg "(t) FROM history_10s WHERE series = s.id)" \
	" FROM history_series s UNION ALL SELECT (SELECT " agg "(t) FROM history_1s WHERE series = s.id)" \
	" FROM history_series s)"

/* Recount rows, oldest and newest (at open, after a compaction). */
static void refresh_stats(struct mgmt_history *h, sqlite3 *c)
{
	int64_t rows = q_int(c, "SELECT (SELECT count(*) FROM history_1s) + (SELECT count(*) FROM history_10s)"
			     " + (SELECT count(*) FROM history_1m)", -1);
	int64_t oldest = q_int(c, PER_SERIES("min"), 0), newest = q_int(c, PER_SERIES("max"), 0);

	pthread_mutex_lock(&h->mu);
	if (rows >= 0)
		h->rows = (uint64_t)rows;
	h->oldest = oldest;
	h->newest = newest;
	pthread_mutex_unlock(&h->mu);
}

/* Keep the connection's last error message for /status (under the mutex: the HTTP thread reads it). */
static void keep_error(struct mgmt_history *h)
{
	pthread_mutex_lock(&h->mu);
	snprintf(h->last_error, sizeof(h->last_error), "%s", sqlite3_errmsg(h->w));
	pthread_mutex_unlock(&h->mu);
}

int mgmt_history_open(struct mgmt_history *h, const char *path, unsigned int interval_s, char *err,
		      size_t errlen)
{
	const char *what = "open";

	memset(h, 0, sizeof(*h));
	pthread_mutex_init(&h->mu, NULL);
	snprintf(h->path, sizeof(h->path), "%s", path);
	h->interval_s = interval_s ? interval_s : 1;
	h->compact_s = MGMT_HISTORY_COMPACT_S;
	h->writable = true;
	/* test hook: compact more often (tests/e2e/57_history.sh) */
	if (getenv("SBX_TEST_HISTORY_COMPACT_S") != NULL) {
		long v = strtol(getenv("SBX_TEST_HISTORY_COMPACT_S"), NULL, 10);

		if (v >= 1 && v <= 3600)
			h->compact_s = (unsigned int)v;
	}
	if (sqlite3_open_v2(path, &h->w, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK)
		goto fail;
	/* short: the main loop must not stall on a locked database (each tick retries anyway) */
	sqlite3_busy_timeout(h->w, 100);
	sqlite3_exec(h->w, "PRAGMA journal_size_limit=4194304", NULL, NULL, NULL);
	what = "prepare";
	if (sqlite3_prepare_v3(h->w, "INSERT OR REPLACE INTO history_1s(series, t, v) VALUES(?1, ?2, ?3)",
			       -1, SQLITE_PREPARE_PERSISTENT, &h->ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(h->w, "INSERT OR IGNORE INTO history_series(kind, name, metric) VALUES(?1, ?2, ?3)",
			       -1, SQLITE_PREPARE_PERSISTENT, &h->ins_series, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v3(h->w, "SELECT id FROM history_series WHERE kind = ?1 AND name = ?2 AND metric = ?3",
			       -1, SQLITE_PREPARE_PERSISTENT, &h->sel_series, NULL) != SQLITE_OK)
		goto fail;
	what = "open read-only";
	if (sqlite3_open_v2(path, &h->r, SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_busy_timeout(h->r, MGMT_DB_BUSY_MS);
	refresh_stats(h, h->r);
	return 0;
fail:
	snprintf(err, errlen, "history %s: %s: %s", path, what,
		 h->r ? sqlite3_errmsg(h->r) : h->w ? sqlite3_errmsg(h->w) : "out of memory");
	mgmt_history_close(h);
	return -1;
}

/* The id of series (kind, name, metric), created if new. Inside the sampler's transaction.
 * @return the id, or -1. */
static int64_t series_id(struct mgmt_history *h, const struct val *x)
{
	char key[sizeof(h->cache[0].key)];
	int64_t id = -1;
	unsigned int i;

	snprintf(key, sizeof(key), "%s\t%s\t%s", x->kind, x->name, x->metric);
	for (i = 0; i < h->nb_cache; i++)
		if (strcmp(h->cache[i].key, key) == 0)
			return h->cache[i].id;
	sqlite3_bind_text(h->ins_series, 1, x->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(h->ins_series, 2, x->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(h->ins_series, 3, x->metric, -1, SQLITE_STATIC);
	if (sqlite3_step(h->ins_series) != SQLITE_DONE) {
		sqlite3_reset(h->ins_series);
		return -1;
	}
	sqlite3_reset(h->ins_series);
	sqlite3_bind_text(h->sel_series, 1, x->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(h->sel_series, 2, x->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(h->sel_series, 3, x->metric, -1, SQLITE_STATIC);
	if (sqlite3_step(h->sel_series) == SQLITE_ROW)
		id = sqlite3_column_int64(h->sel_series, 0);
	sqlite3_reset(h->sel_series);
	if (id >= 0 && h->nb_cache < MGMT_HISTORY_MAX_SERIES) {
		snprintf(h->cache[h->nb_cache].key, sizeof(key), "%s", key);
		h->cache[h->nb_cache++].id = id;
	}
	return id;
}

int mgmt_history_sample(struct mgmt_history *h, const struct sbx_shm *shm, int64_t t_s)
{
	unsigned int n = collect(shm), i;
	int rc, stored = 0;

	if (h->w == NULL)
		return -1;
	rc = sqlite3_exec(h->w, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		keep_error(h);
		return mgmt_db_rc(rc) < 0 ? mgmt_db_rc(rc) : -1;
	}
	for (i = 0; i < n; i++) {
		int64_t id = series_id(h, &g_vals[i]);

		if (id < 0) {
			rc = sqlite3_errcode(h->w);
			goto fail;
		}
		sqlite3_bind_int64(h->ins, 1, id);
		sqlite3_bind_int64(h->ins, 2, t_s);
		/* counters stay below 2^63 in practice; stored as SQLite's signed 64-bit integer */
		sqlite3_bind_int64(h->ins, 3, (sqlite3_int64)g_vals[i].v);
		rc = sqlite3_step(h->ins);
		sqlite3_reset(h->ins);
		if (rc != SQLITE_DONE)
			goto fail;
		stored++;
	}
	rc = sqlite3_exec(h->w, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	return stored;
fail:
	keep_error(h);
	sqlite3_exec(h->w, "ROLLBACK", NULL, NULL, NULL);
	return mgmt_db_rc(rc) < 0 ? mgmt_db_rc(rc) : -1;
}

/* The compaction's statements for one series, in order; ?1 series, ?2 cutoff. */
static const char *const compact_sql[] = {
	/* SQLite: with one max() aggregate, the bare column v comes from the row holding max(t) */
	"INSERT OR REPLACE INTO history_10s(series, t, v) SELECT series, max(t), v FROM history_1s"
	" WHERE series = ?1 AND t < ?2 GROUP BY t / 10",
	"DELETE FROM history_1s WHERE series = ?1 AND t < ?2",
	"INSERT OR REPLACE INTO history_1m(series, t, v) SELECT series, max(t), v FROM history_10s"
	" WHERE series = ?1 AND t < ?2 GROUP BY t / 60",
	"DELETE FROM history_10s WHERE series = ?1 AND t < ?2",
	"DELETE FROM history_1m WHERE series = ?1 AND t < ?2",
};

int mgmt_history_compact(struct mgmt_history *h, int64_t now)
{
	/* cut-offs on bucket boundaries: only whole buckets move */
	const int64_t cut[] = {
		(now - MGMT_HISTORY_KEEP_1S) / 10 * 10, (now - MGMT_HISTORY_KEEP_1S) / 10 * 10,
		(now - MGMT_HISTORY_KEEP_10S) / 60 * 60, (now - MGMT_HISTORY_KEEP_10S) / 60 * 60,
		now - MGMT_HISTORY_KEEP_1M,
	};
	sqlite3_stmt *st[5] = { NULL }, *ids = NULL;
	int64_t pages, freel;
	unsigned int k;
	int rc;

	if (h->w == NULL)
		return -1;
	rc = sqlite3_exec(h->w, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		keep_error(h);
		return mgmt_db_rc(rc) < 0 ? mgmt_db_rc(rc) : -1;
	}
	for (k = 0; k < RTE_DIM(st); k++) {
		rc = sqlite3_prepare_v2(h->w, compact_sql[k], -1, &st[k], NULL);
		if (rc != SQLITE_OK)
			goto fail;
	}
	rc = sqlite3_prepare_v2(h->w, "SELECT id FROM history_series ORDER BY id", -1, &ids, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	while ((rc = sqlite3_step(ids)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(ids, 0);

		for (k = 0; k < RTE_DIM(st); k++) {
			sqlite3_bind_int64(st[k], 1, id);
			sqlite3_bind_int64(st[k], 2, cut[k]);
			rc = sqlite3_step(st[k]);
			sqlite3_reset(st[k]);
			if (rc != SQLITE_DONE)
				goto fail;
		}
	}
	if (rc != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(ids);
	ids = NULL;
	for (k = 0; k < RTE_DIM(st); k++)
		sqlite3_finalize(st[k]);
	memset(st, 0, sizeof(st));
	rc = sqlite3_exec(h->w, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	/* the size bound: give free pages back once more than an eighth of the file is free */
	pages = q_int(h->w, "PRAGMA page_count", 0);
	freel = q_int(h->w, "PRAGMA freelist_count", 0);
	if (freel > 16 && freel * 8 > pages && sqlite3_exec(h->w, "PRAGMA incremental_vacuum", NULL, NULL, NULL) == SQLITE_OK) {
		pthread_mutex_lock(&h->mu);
		h->vacuumed_pages += (uint64_t)(freel - q_int(h->w, "PRAGMA freelist_count", 0));
		pthread_mutex_unlock(&h->mu);
	}
	refresh_stats(h, h->w);
	pthread_mutex_lock(&h->mu);
	h->compactions++;
	pthread_mutex_unlock(&h->mu);
	return 0;
fail:
	keep_error(h);
	sqlite3_finalize(ids);
	for (k = 0; k < RTE_DIM(st); k++)
		sqlite3_finalize(st[k]);
	sqlite3_exec(h->w, "ROLLBACK", NULL, NULL, NULL);
	return mgmt_db_rc(rc) < 0 ? mgmt_db_rc(rc) : -1;
}

/* Record the result @p rc of a write: count failures, log the start and the end of an outage once. */
static void outcome(struct mgmt_history *h, const char *what, int rc)
{
	bool was;

	pthread_mutex_lock(&h->mu);
	was = h->writable;
	h->writable = rc >= 0;
	if (rc < 0 && was) {
		h->outages++;
		h->failed_at_outage = h->failed_samples;
	}
	if (rc < 0 && strcmp(what, "sample") == 0)
		h->failed_samples++;
	pthread_mutex_unlock(&h->mu);
	if (rc < 0 && was)
		fprintf(stderr, "spanbox-mgmt: history: database %s: %s failed (%s: %s); samples are lost"
			" until it can be written again\n", h->path, what,
			rc == MGMT_DB_BUSY ? "locked or unwritable" : "error", h->last_error);
	else if (rc >= 0 && !was)
		fprintf(stderr, "spanbox-mgmt: history: database %s writable again, %llu samples lost\n",
			h->path, (unsigned long long)(h->failed_samples - h->failed_at_outage));
}

void mgmt_history_tick(struct mgmt_history *h, const struct sbx_shm *shm)
{
	int64_t now = now_s();
	int rc;

	if (h->w == NULL)
		return;
	if (shm != NULL && now / h->interval_s != h->last_sample_s / h->interval_s) {
		h->last_sample_s = now;
		rc = mgmt_history_sample(h, shm, now);
		if (rc >= 0) {
			pthread_mutex_lock(&h->mu);
			h->rows += (uint64_t)rc;
			if (rc > 0) {
				h->newest = now;
				if (h->oldest == 0)
					h->oldest = now;
			}
			pthread_mutex_unlock(&h->mu);
		}
		outcome(h, "sample", rc);
	}
	if (now - h->last_compact_s >= (int64_t)h->compact_s) {
		h->last_compact_s = now;
		rc = mgmt_history_compact(h, now);
		outcome(h, "compaction", rc);
	}
}

/* history_series.id of (kind, name, metric) on the read connection: -1 none, -2 error. */
static int64_t find_series(struct mgmt_history *h, const char *kind, const char *name, const char *metric)
{
	sqlite3_stmt *st;
	int64_t id = -1;
	int rc;

	if (sqlite3_prepare_v2(h->r, metric ? "SELECT id FROM history_series WHERE kind = ?1 AND name = ?2 AND metric = ?3"
				      : "SELECT id FROM history_series WHERE kind = ?1 AND name = ?2 LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return -2;
	sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	if (metric)
		sqlite3_bind_text(st, 3, metric, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE)
		id = -2;
	sqlite3_finalize(st);
	return id;
}

bool mgmt_history_known(struct mgmt_history *h, const char *kind, const char *name)
{
	return h->r != NULL && find_series(h, kind, name, NULL) >= 0;
}

/** One stored sample, with the reset-adjusted running total of a counter. */
struct row {
	int64_t t;
	double v;   /* the value (gauge) or the reset-adjusted cumulative count (counter) */
};

/* @return the index of the last row with t <= @p t, -1 if none. */
static long last_at_or_before(const struct row *rows, long n, int64_t t)
{
	long lo = 0, hi = n; /* first index with rows[i].t > t */

	while (lo < hi) {
		long mid = lo + (hi - lo) / 2;

		if (rows[mid].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

int mgmt_history_query(struct mgmt_history *h, const char *kind, const char *name,
		       const char *metric, bool counter, int64_t from, int64_t to, int64_t step,
		       cJSON *points)
{
	int64_t first = (from + step - 1) / step * step, t, id;
	struct row *rows = NULL;
	long n = 0, cap = 0;
	sqlite3_stmt *st;
	int64_t prev_raw = 0;
	int rc;

	if (h->r == NULL)
		return -1;
	id = find_series(h, kind, name, metric);
	if (id == -2)
		return -1;
	if (id >= 0) {
		if (sqlite3_prepare_v2(h->r,
				"SELECT t, v FROM history_1m WHERE series = ?1 AND t BETWEEN ?2 AND ?3"
				" UNION ALL SELECT t, v FROM history_10s WHERE series = ?1 AND t BETWEEN ?2 AND ?3"
				" UNION ALL SELECT t, v FROM history_1s WHERE series = ?1 AND t BETWEEN ?2 AND ?3"
				" ORDER BY 1", -1, &st, NULL) != SQLITE_OK)
			return -1;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, first - step - LOOKBACK_S);
		sqlite3_bind_int64(st, 3, to);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t raw = sqlite3_column_int64(st, 1);

			if (n == cap) {
				struct row *nr = realloc(rows, (size_t)(cap = cap ? cap * 2 : 1024) * sizeof(*rows));

				if (nr == NULL) {
					rc = SQLITE_NOMEM;
					break;
				}
				rows = nr;
			}
			rows[n].t = sqlite3_column_int64(st, 0);
			if (!counter)
				rows[n].v = (double)raw;
			else if (n == 0)
				rows[n].v = 0;
			else /* a decrease is a reset (worker or primary restart): it counted from 0 */
				rows[n].v = rows[n - 1].v + (double)(raw >= prev_raw ? raw - prev_raw : raw);
			prev_raw = raw;
			n++;
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE) {
			free(rows);
			return -1;
		}
	}
	for (t = first; t <= to; t += step) {
		long e = last_at_or_before(rows, n, t), b;
		cJSON *p = cJSON_CreateArray();
		bool have = false;
		double v = 0;

		cJSON_AddItemToArray(p, cJSON_CreateNumber((double)t));
		if (e >= 0 && rows[e].t > t - step) { /* a sample in the window */
			if (!counter) {
				v = rows[e].v;
				have = true;
			} else {
				b = last_at_or_before(rows, n, t - step);
				if (b < 0 || rows[b].t < t - step - LOOKBACK_S)
					b++; /* first sample in the window */
				if (b < e && rows[e].t > rows[b].t) {
					v = (rows[e].v - rows[b].v) / (double)(rows[e].t - rows[b].t);
					have = true;
				}
			}
		}
		if (!have) /* values are >= 0: three decimals, rounded */
			cJSON_AddItemToArray(p, cJSON_CreateNull());
		else
			cJSON_AddItemToArray(p, cJSON_CreateNumber((double)(int64_t)(v * 1000 + 0.5) / 1000));
		cJSON_AddItemToArray(points, p);
	}
	free(rows);
	return 0;
}

void mgmt_history_status_json(struct mgmt_history *h, cJSON *d)
{
	char ts[40];
	cJSON *o;

	pthread_mutex_lock(&h->mu);
	cJSON_AddNumberToObject(d, "samples", (double)h->rows);
	if (h->oldest) {
		mgmt_rfc3339((uint64_t)h->oldest * 1000000000ULL, ts, sizeof(ts));
		cJSON_AddStringToObject(d, "oldest", ts);
	} else {
		cJSON_AddNullToObject(d, "oldest");
	}
	if (h->newest) {
		mgmt_rfc3339((uint64_t)h->newest * 1000000000ULL, ts, sizeof(ts));
		cJSON_AddStringToObject(d, "newest", ts);
	} else {
		cJSON_AddNullToObject(d, "newest");
	}
	cJSON_AddBoolToObject(d, "writable", h->writable);
	o = cJSON_AddObjectToObject(d, "history");
	cJSON_AddNumberToObject(o, "interval_s", h->interval_s);
	cJSON_AddNumberToObject(o, "compact_s", h->compact_s);
	cJSON_AddNumberToObject(o, "failed_samples", (double)h->failed_samples);
	cJSON_AddNumberToObject(o, "outages", (double)h->outages);
	cJSON_AddNumberToObject(o, "compactions", (double)h->compactions);
	cJSON_AddNumberToObject(o, "vacuumed_pages", (double)h->vacuumed_pages);
	if (h->last_error[0])
		cJSON_AddStringToObject(o, "last_error", h->last_error);
	else
		cJSON_AddNullToObject(o, "last_error");
	pthread_mutex_unlock(&h->mu);
}

void mgmt_history_close(struct mgmt_history *h)
{
	sqlite3_finalize(h->ins);
	sqlite3_finalize(h->ins_series);
	sqlite3_finalize(h->sel_series);
	h->ins = h->ins_series = h->sel_series = NULL;
	if (h->w != NULL)
		sqlite3_close(h->w);
	if (h->r != NULL)
		sqlite3_close(h->r);
	h->w = h->r = NULL;
	pthread_mutex_destroy(&h->mu);
}
