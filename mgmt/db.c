/* SPDX-License-Identifier: BSD-3-Clause */
/* SQLite: open, migrate, log events. Every statement with data uses bound parameters. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "spanbox/shm.h"
#include "db.h"
#include "timefmt.h"

/* Migration i + 1 is migrations[i]. Append only; never edit an applied one. */
static const char *const migrations[] = {
	"CREATE TABLE schema_version(version INTEGER NOT NULL, applied_at TEXT NOT NULL);"
	"CREATE TABLE events(id INTEGER PRIMARY KEY, ts TEXT NOT NULL, kind TEXT NOT NULL,"
	" detail TEXT NOT NULL);",
	/* 2: events of the primary (memzone ring): who, and where they came from, to skip repeats */
	"ALTER TABLE events ADD COLUMN worker INTEGER;"
	"ALTER TABLE events ADD COLUMN pid INTEGER;"
	"ALTER TABLE events ADD COLUMN primary_start INTEGER;"
	"ALTER TABLE events ADD COLUMN seq INTEGER;"
	"CREATE UNIQUE INDEX events_origin ON events(primary_start, seq) WHERE seq IS NOT NULL;",
	/* 3: stats history (history.c): one row per (series, time), cumulative values, three
	 * resolutions. WITHOUT ROWID: the primary key (series, t) is the row, the query's index */
	"CREATE TABLE history_series(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL,"
	" metric TEXT NOT NULL, UNIQUE(kind, name, metric));"
	"CREATE TABLE history_1s(series INTEGER NOT NULL, t INTEGER NOT NULL, v INTEGER NOT NULL,"
	" PRIMARY KEY(series, t)) WITHOUT ROWID;"
	"CREATE TABLE history_10s(series INTEGER NOT NULL, t INTEGER NOT NULL, v INTEGER NOT NULL,"
	" PRIMARY KEY(series, t)) WITHOUT ROWID;"
	"CREATE TABLE history_1m(series INTEGER NOT NULL, t INTEGER NOT NULL, v INTEGER NOT NULL,"
	" PRIMARY KEY(series, t)) WITHOUT ROWID;",
	/* 4: the live sections (forwarding, mirrors) changed through the API: the newest row wins over
	 * the config file at the next start (primary/tables.c); audit: who asked for an event */
	"CREATE TABLE config_store(id INTEGER PRIMARY KEY, saved_at TEXT NOT NULL, client TEXT NOT NULL,"
	" json TEXT NOT NULL);"
	"ALTER TABLE events ADD COLUMN client TEXT;",
	/* 5: stored configs are per config file (its realpath): a change made while running one file
	 * never overrides another file at its start; rows of version 4 (no path) apply to none */
	"ALTER TABLE config_store ADD COLUMN config_path TEXT;"
	"CREATE INDEX config_store_path ON config_store(config_path, id);",
	/* 6: the maps' rule tables (issue #27): a config_store row holds each map's rules as a summary
	 * {"count", "digest"}; the rules themselves, one row per table (config_store.h) */
	"CREATE TABLE map_rules(config_path TEXT NOT NULL, digest TEXT NOT NULL, count INTEGER NOT NULL,"
	" rules TEXT NOT NULL, PRIMARY KEY(config_path, digest)) WITHOUT ROWID;",
};

int mgmt_make_parent(const char *path)
{
	char dir[PATH_MAX];
	char *p;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -1;
	p = strrchr(dir, '/');
	if (p == NULL || p == dir)
		return 0;
	*p = '\0';
	for (p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(dir, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/* Run every statement of @p sql (no parameters). */
static int exec_all(sqlite3 *h, const char *sql)
{
	sqlite3_stmt *st;
	int rc;

	while (*sql) {
		if (sqlite3_prepare_v2(h, sql, -1, &st, &sql) != SQLITE_OK)
			return -1;
		if (st == NULL) /* trailing blanks */
			break;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			;
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return -1;
	}
	return 0;
}

/* @return the single integer the query yields, @p dflt when no row, -1 on error. */
static int query_int(sqlite3 *h, const char *sql, int dflt)
{
	sqlite3_stmt *st;
	int v = -1, rc;

	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		v = sqlite3_column_type(st, 0) == SQLITE_NULL ? dflt : sqlite3_column_int(st, 0);
	else if (rc == SQLITE_DONE)
		v = dflt;
	sqlite3_finalize(st);
	return v;
}

/* @return the schema version (0 for an empty database), -1 on error. */
static int current_version(sqlite3 *h)
{
	int v = query_int(h, "SELECT count(*) FROM sqlite_master WHERE type='table' AND "
			  "name='schema_version'", 0);

	return v > 0 ? query_int(h, "SELECT max(version) FROM schema_version", 0) : v;
}

/* Apply migration @p n (1-based) unless another process did; one transaction. */
static int migrate_one(struct mgmt_db *db, int n)
{
	sqlite3_stmt *st;
	char ts[40];
	int cur, rc;

	if (exec_all(db->h, "BEGIN IMMEDIATE") < 0)
		return -1;
	cur = current_version(db->h);
	if (cur < 0)
		goto fail;
	if (cur >= n) { /* a concurrent mgmt got there first */
		db->schema_version = cur;
		return exec_all(db->h, "COMMIT");
	}
	if (exec_all(db->h, migrations[n - 1]) < 0 ||
	    sqlite3_prepare_v2(db->h, "INSERT INTO schema_version(version, applied_at) VALUES(?1, ?2)",
			       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	mgmt_rfc3339(sbx_realtime_ns(), ts, sizeof(ts));
	sqlite3_bind_int(st, 1, n);
	sqlite3_bind_text(st, 2, ts, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE || exec_all(db->h, "COMMIT") < 0)
		goto fail;
	db->schema_version = n;
	return 0;
fail:
	/* keep the failing statement's message: ROLLBACK would overwrite it */
	fprintf(stderr, "mgmt: database %s: migration %d: %s\n", db->path, n, sqlite3_errmsg(db->h));
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

int mgmt_db_open(struct mgmt_db *db, const char *path, char *err, size_t errlen)
{
	const int n = (int)(sizeof(migrations) / sizeof(migrations[0]));
	int cur, i;

	memset(db, 0, sizeof(*db));
	if (strlen(path) >= sizeof(db->path)) {
		snprintf(err, errlen, "database %s: path too long", path);
		return -1;
	}
	snprintf(db->path, sizeof(db->path), "%s", path);
	if (mgmt_make_parent(path) < 0) {
		snprintf(err, errlen, "database %s: cannot create its directory: %s", path,
			 strerror(errno));
		return -1;
	}
	/* FULLMUTEX: the HTTP thread, its lanes (http.c) and the main thread (event import) share the connection */
	/* auto_vacuum before anything else: it only takes effect on a database without tables */
	if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) !=
		    SQLITE_OK ||
	    sqlite3_busy_timeout(db->h, 2000) != SQLITE_OK ||
	    exec_all(db->h, "PRAGMA auto_vacuum=INCREMENTAL") < 0 ||
	    exec_all(db->h, "PRAGMA journal_mode=WAL") < 0 ||
	    exec_all(db->h, "PRAGMA journal_size_limit=4194304") < 0) /* WAL truncated to 4 MiB */
		goto fail;
	cur = current_version(db->h);
	if (cur < 0)
		goto fail;
	if (cur > n) {
		snprintf(err, errlen, "database %s: schema version %d is newer than this mgmt (%d)",
			 path, cur, n);
		mgmt_db_close(db);
		return -1;
	}
	db->schema_version = cur;
	for (i = cur + 1; i <= n; i++) {
		if (migrate_one(db, i) < 0) {
			snprintf(err, errlen, "database %s: migration %d failed", path, i);
			mgmt_db_close(db);
			return -1;
		}
	}
	/* A database created before auto_vacuum was set (schema 1-2: events only, small) is
	 * converted once; if it is locked now, the next start tries again. */
	if (query_int(db->h, "PRAGMA auto_vacuum", 0) != 2 &&
	    (exec_all(db->h, "PRAGMA auto_vacuum=INCREMENTAL") < 0 || exec_all(db->h, "VACUUM") < 0))
		fprintf(stderr, "mgmt: database %s: cannot switch to incremental auto-vacuum now (%s);"
			" the file is still bounded, free pages are reused\n", path, sqlite3_errmsg(db->h));
	sqlite3_busy_timeout(db->h, MGMT_DB_BUSY_MS);
	return 0;
fail:
	snprintf(err, errlen, "database %s: %s", path,
		 db->h ? sqlite3_errmsg(db->h) : "out of memory");
	mgmt_db_close(db);
	return -1;
}

int mgmt_db_event(struct mgmt_db *db, const char *kind, const char *detail)
{
	return mgmt_db_audit(db, kind, detail, NULL);
}

/*
 * Events that could not be written at once: while a change holds the write lock (store.c, on the
 * changes lane of http.c) an event of another thread (a restart's audit on the control lane)
 * would wait for the busy timeout, holding this connection (and every GET that reads it), and
 * then be lost; it is queued instead, with its time, and written by the main thread
 * (mgmt_db_flush_later, every 100 ms) once the lock is free.
 */
#define LATER_MAX 64

static struct {
	pthread_mutex_t lock;
	unsigned int n;
	struct {
		char ts[40], kind[32], detail[256], client[64];
		bool has_client;
	} ev[LATER_MAX];
} later = { .lock = PTHREAD_MUTEX_INITIALIZER };
static int change_open; /* a change transaction is open (mgmt_db_change_open), atomic */

void mgmt_db_change_open(bool open)
{
	__atomic_store_n(&change_open, open ? 1 : 0, __ATOMIC_RELEASE);
}

/* Queue an event for mgmt_db_flush_later(). @return 0, or -1 when the queue is full (printed). */
static int queue_later(const struct mgmt_db *db, const char *ts, const char *kind, const char *detail,
		       const char *client)
{
	int rc = -1;

	pthread_mutex_lock(&later.lock);
	if (later.n < LATER_MAX) {
		snprintf(later.ev[later.n].ts, sizeof(later.ev[0].ts), "%s", ts);
		snprintf(later.ev[later.n].kind, sizeof(later.ev[0].kind), "%s", kind);
		snprintf(later.ev[later.n].detail, sizeof(later.ev[0].detail), "%s", detail);
		snprintf(later.ev[later.n].client, sizeof(later.ev[0].client), "%s", client ? client : "");
		later.ev[later.n].has_client = client != NULL;
		later.n++;
		rc = 0;
	}
	pthread_mutex_unlock(&later.lock);
	if (rc != 0)
		fprintf(stderr, "mgmt: database %s: cannot record event %s: %d events wait already\n", db->path,
			kind, LATER_MAX);
	return rc;
}

int mgmt_db_insert_event(sqlite3 *h, const char *ts, const char *kind, const char *detail, const char *client)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(h, "INSERT INTO events(ts, kind, detail, client) VALUES(?1, ?2, ?3, ?4)", -1,
			       &st, NULL) != SQLITE_OK)
		return sqlite3_errcode(h);
	sqlite3_bind_text(st, 1, ts, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, detail, -1, SQLITE_TRANSIENT);
	if (client != NULL)
		sqlite3_bind_text(st, 4, client, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 4);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc;
}

int mgmt_db_flush_later(struct mgmt_db *db)
{
	unsigned int i, n;
	int rc;

	if (db->h == NULL || __atomic_load_n(&later.n, __ATOMIC_ACQUIRE) == 0 ||
	    __atomic_load_n(&change_open, __ATOMIC_ACQUIRE))
		return 0;
	rc = mgmt_db_rc(sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL));
	if (rc < 0)
		return rc; /* still locked: next time */
	pthread_mutex_lock(&later.lock);
	n = later.n;
	for (i = 0; i < n; i++)
		mgmt_db_insert_event(db->h, later.ev[i].ts, later.ev[i].kind, later.ev[i].detail,
			     later.ev[i].has_client ? later.ev[i].client : NULL);
	rc = mgmt_db_rc(sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL));
	if (rc < 0)
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	else
		later.n = 0;
	pthread_mutex_unlock(&later.lock);
	return rc < 0 ? rc : (int)n;
}

int mgmt_db_audit(struct mgmt_db *db, const char *kind, const char *detail, const char *client)
{
	char ts[40];
	int rc;

	if (db->h == NULL)
		return -1;
	mgmt_rfc3339(sbx_realtime_ns(), ts, sizeof(ts));
	if (__atomic_load_n(&change_open, __ATOMIC_ACQUIRE))
		return queue_later(db, ts, kind, detail, client);
	rc = mgmt_db_insert_event(db->h, ts, kind, detail, client);
	if (rc == SQLITE_DONE)
		return 0;
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		return queue_later(db, ts, kind, detail, client); /* a change began meanwhile */
	fprintf(stderr, "mgmt: database %s: cannot record event %s: %s\n", db->path, kind,
		sqlite3_errmsg(db->h));
	return -1;
}

int mgmt_db_import_events(struct mgmt_db *db, const struct sbx_shm *shm)
{
	uint64_t last = shm->event_seq, first, s;
	sqlite3_stmt *st;
	int n = 0, rc;

	if (db->h == NULL || last == 0 ||
	    (db->events_primary == shm->start_realtime_ns && db->events_seq == last))
		return 0;
	first = last > SBX_EVENTS ? last - SBX_EVENTS + 1 : 1;
	if (sqlite3_prepare_v2(db->h,
			       "INSERT OR IGNORE INTO events(ts, kind, detail, worker, pid, primary_start, seq)"
			       " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)", -1, &st, NULL) != SQLITE_OK)
		return -1;
	/* the write lock first: a locked database costs one busy timeout, not one per event */
	rc = mgmt_db_rc(sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL));
	if (rc < 0) {
		sqlite3_finalize(st);
		return rc;
	}
	for (s = first; s <= last; s++) {
		const struct sbx_event *e = &shm->events[(s - 1) % SBX_EVENTS];
		struct sbx_event copy = *e;
		char ts[40];

		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (copy.seq != s || e->seq != s) /* overwritten or being written */
			continue;
		copy.kind[sizeof(copy.kind) - 1] = '\0';
		copy.detail[sizeof(copy.detail) - 1] = '\0';
		mgmt_rfc3339(copy.time_ns, ts, sizeof(ts));
		sqlite3_bind_text(st, 1, ts, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, copy.kind, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, copy.detail, -1, SQLITE_TRANSIENT);
		if (copy.worker >= 0)
			sqlite3_bind_int(st, 4, copy.worker);
		else
			sqlite3_bind_null(st, 4);
		sqlite3_bind_int(st, 5, copy.pid);
		sqlite3_bind_int64(st, 6, (sqlite3_int64)shm->start_realtime_ns);
		sqlite3_bind_int64(st, 7, (sqlite3_int64)s);
		if (sqlite3_step(st) == SQLITE_DONE)
			n += sqlite3_changes(db->h);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	rc = mgmt_db_rc(sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL));
	if (rc < 0) {
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
		return rc;
	}
	db->events_primary = shm->start_realtime_ns;
	db->events_seq = last;
	return n;
}

cJSON *mgmt_db_events_json(struct mgmt_db *db, int limit, const char *kind)
{
	cJSON *arr = cJSON_CreateArray();
	sqlite3_stmt *st;

	if (db->h == NULL || sqlite3_prepare_v2(db->h,
			"SELECT id, ts, kind, detail, worker, pid, client FROM events WHERE ?2 IS NULL OR kind = ?2"
			" ORDER BY ts DESC, id DESC LIMIT ?1", /* by time: the primary's events are stored when mgmt reads them */
			-1, &st, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_int(st, 1, limit);
	if (kind != NULL)
		sqlite3_bind_text(st, 2, kind, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(st) == SQLITE_ROW) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddNumberToObject(o, "id", (double)sqlite3_column_int64(st, 0));
		cJSON_AddStringToObject(o, "time", (const char *)sqlite3_column_text(st, 1));
		cJSON_AddStringToObject(o, "kind", (const char *)sqlite3_column_text(st, 2));
		cJSON_AddStringToObject(o, "detail", (const char *)sqlite3_column_text(st, 3));
		if (sqlite3_column_type(st, 4) == SQLITE_NULL)
			cJSON_AddNullToObject(o, "worker");
		else
			cJSON_AddNumberToObject(o, "worker", sqlite3_column_int(st, 4));
		if (sqlite3_column_type(st, 5) == SQLITE_NULL)
			cJSON_AddNullToObject(o, "pid");
		else
			cJSON_AddNumberToObject(o, "pid", sqlite3_column_int(st, 5));
		if (sqlite3_column_type(st, 6) == SQLITE_NULL) /* who asked: REST changes (audit) */
			cJSON_AddNullToObject(o, "client");
		else
			cJSON_AddStringToObject(o, "client", (const char *)sqlite3_column_text(st, 6));
		cJSON_AddItemToArray(arr, o);
	}
	sqlite3_finalize(st);
	return arr;
}

uint64_t mgmt_db_size(const struct mgmt_db *db)
{
	char wal[sizeof(db->path) + 8];
	struct stat st;
	uint64_t size = 0;

	if (stat(db->path, &st) == 0)
		size += (uint64_t)st.st_size;
	snprintf(wal, sizeof(wal), "%s-wal", db->path);
	if (stat(wal, &st) == 0)
		size += (uint64_t)st.st_size;
	return size;
}

int mgmt_db_rc(int rc)
{
	switch (rc & 0xff) { /* primary code of an extended one */
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return 0;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
	case SQLITE_READONLY:
	case SQLITE_IOERR:
	case SQLITE_FULL:
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
		return MGMT_DB_BUSY;
	default:
		return -1;
	}
}

int mgmt_db_begin_write(struct mgmt_db *db)
{
	if (db->h == NULL)
		return MGMT_DB_BUSY;
	return mgmt_db_rc(sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL));
}

int mgmt_db_commit(struct mgmt_db *db)
{
	int rc;

	if (db->h == NULL)
		return MGMT_DB_BUSY;
	rc = mgmt_db_rc(sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL));
	if (rc < 0)
		mgmt_db_rollback(db);
	return rc;
}

void mgmt_db_rollback(struct mgmt_db *db)
{
	if (db->h != NULL && !sqlite3_get_autocommit(db->h))
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}

bool mgmt_db_writable(struct mgmt_db *db)
{
	if (mgmt_db_begin_write(db) < 0)
		return false;
	mgmt_db_rollback(db);
	return true;
}

void mgmt_db_close(struct mgmt_db *db)
{
	if (db->h != NULL)
		sqlite3_close(db->h);
	db->h = NULL;
}
