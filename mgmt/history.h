/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file history.h
 * Stats history in SQLite (docs/MGMT.md "Stats history"): cumulative counters and gauges of the
 * memzone sampled every mgmt.history_interval_s seconds by mgmt's main thread, kept at three
 * resolutions (1 s for 1 hour, 10 s for 1 day, 1 min for 30 days) by a compaction job on the same
 * thread, and queried by the HTTP thread (GET /api/v1/stats/history) as rates or values.
 *
 * Threads: mgmt_history_tick() (sampling, compaction) runs on the main thread with its own
 * connection; mgmt_history_query() and mgmt_history_known() run on the HTTP thread with another,
 * read-only one (WAL: reads never wait for the writer, nor for another process's write lock);
 * mgmt_history_status_json() may run anywhere (a snapshot under a mutex, no SQL).
 */
#ifndef SBX_MGMT_HISTORY_H
#define SBX_MGMT_HISTORY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "spanbox/shm.h"

struct sqlite3;
struct sqlite3_stmt;

#define MGMT_HISTORY_KEEP_1S (3600)          /**< 1 s rows kept, seconds */
#define MGMT_HISTORY_KEEP_10S (86400)        /**< 10 s rows kept, seconds */
#define MGMT_HISTORY_KEEP_1M (30 * 86400)    /**< 1 min rows kept, seconds */
#define MGMT_HISTORY_COMPACT_S 10            /**< default seconds between two compactions */
#define MGMT_HISTORY_MAX_SERIES 1024         /**< series ids cached by the sampler */
#define MGMT_HISTORY_MAX_POINTS 10000        /**< points one query may answer */

/** One cached series id: (kind, name, metric) -> history_series.id. */
struct mgmt_history_series {
	char key[96];       /**< "kind\tname\tmetric" */
	int64_t id;
};

/** The stats history of one database. Fields are private to history.c. */
struct mgmt_history {
	struct sqlite3 *w;            /**< main thread: sampling and compaction */
	struct sqlite3 *r;            /**< HTTP thread: queries, read-only */
	char path[256];
	unsigned int interval_s;      /**< seconds between samples (mgmt.history_interval_s) */
	unsigned int compact_s;       /**< seconds between compactions */
	int64_t last_sample_s;        /**< CLOCK_REALTIME s of the last sample attempt */
	int64_t last_compact_s;       /**< CLOCK_REALTIME s of the last compaction attempt */
	struct sqlite3_stmt *ins, *ins_series, *sel_series;
	struct mgmt_history_series cache[MGMT_HISTORY_MAX_SERIES];
	unsigned int nb_cache;
	/* the status snapshot (guarded by mu) */
	pthread_mutex_t mu;
	uint64_t rows;                /**< rows in the three sample tables */
	int64_t oldest, newest;       /**< unix s of the oldest and newest row, 0 = none */
	bool writable;                /**< false while writes fail (locked or unwritable database) */
	uint64_t failed_samples;      /**< samples lost to a failing database since start */
	uint64_t outages;             /**< times writes started failing */
	uint64_t failed_at_outage;    /**< failed_samples when the current outage began */
	uint64_t compactions;         /**< compactions that completed */
	uint64_t vacuumed_pages;      /**< pages given back to the file system by incremental vacuum */
	char last_error[160];         /**< reason of the current or last outage */
};

/**
 * Open the history's two connections to the database @p path (already created and migrated by
 * mgmt_db_open()), prepare the sampler's statements and count the stored rows.
 * @param interval_s  seconds between samples (1..60).
 * @param err         receives the reason on failure.
 * @return 0, or -1 (nothing stays open).
 */
int mgmt_history_open(struct mgmt_history *h, const char *path, unsigned int interval_s, char *err,
		      size_t errlen);

/**
 * The main thread's periodic call (every 100 ms): take a sample when a new interval began and
 * compact when compact_s passed. A failing database is counted and logged once per outage; the
 * sample is lost; the next interval tries again.
 * @param shm  the live memzone, NULL when the appliance is down (then only compaction runs).
 */
void mgmt_history_tick(struct mgmt_history *h, const struct sbx_shm *shm);

/**
 * Store one sample of every series at unix time @p t_s, in one transaction.
 * @return values stored, MGMT_DB_BUSY (db.h) when the database is locked or unwritable, -1 on
 *         another error.
 */
int mgmt_history_sample(struct mgmt_history *h, const struct sbx_shm *shm, int64_t t_s);

/**
 * Roll 1 s rows older than MGMT_HISTORY_KEEP_1S into the 10 s table (the last value of each
 * 10 s bucket, at its own time), 10 s rows older than MGMT_HISTORY_KEEP_10S into the 1 min table,
 * delete 1 min rows older than MGMT_HISTORY_KEEP_1M, in one transaction; then give free pages back
 * (incremental vacuum) when more than an eighth of the file is free.
 * @param now_s  unix time the ages are measured from.
 * @return 0, MGMT_DB_BUSY, or -1.
 */
int mgmt_history_compact(struct mgmt_history *h, int64_t now_s);

/** Is there stored history for object (@p kind, @p name)? (HTTP thread) */
bool mgmt_history_known(struct mgmt_history *h, const char *kind, const char *name);

/**
 * Points of one series (HTTP thread). A point at T (multiples of @p step in [from, to]) is,
 * for a counter, the rate per second over (T - step, T] (from the last sample at or before
 * T - step when it is at most 120 s older, else from the first sample in the window, to the last
 * one in the window; a decrease counts as a reset to 0); for a gauge, the last value in the
 * window; null without samples.
 * @param counter  true for a counter (rate), false for a gauge.
 * @param points   array the [t, value] pairs are appended to.
 * @return 0, -1 on a database error.
 */
int mgmt_history_query(struct mgmt_history *h, const char *kind, const char *name,
		       const char *metric, bool counter, int64_t from, int64_t to, int64_t step,
		       cJSON *points);

/**
 * Add the history's part of /status "database" to @p d: samples (rows), oldest and newest
 * (RFC 3339, null when empty), writable, failed_samples, outages, compactions.
 */
void mgmt_history_status_json(struct mgmt_history *h, cJSON *d);

/** Close both connections (a no-op when not open). */
void mgmt_history_close(struct mgmt_history *h);

#endif
