/* SPDX-License-Identifier: BSD-3-Clause */
/* mgmt's SQLite database: schema migrations and the event log. */
#ifndef SBX_MGMT_DB_H
#define SBX_MGMT_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "spanbox/shm.h"

struct sqlite3;
struct mgmt_history;

/** Busy timeout of every connection after the migrations, ms: a locked database answers fast (503). */
#define MGMT_DB_BUSY_MS 200
/** Return value of the write helpers below: the database is locked, busy or cannot be written. */
#define MGMT_DB_BUSY (-2)

/** An open database. */
struct mgmt_db {
	struct sqlite3 *h;        /**< the connection, opened FULLMUTEX (HTTP thread, its lanes, main thread) */
	char path[256];           /**< file name as given */
	int schema_version;       /**< highest migration applied */
	uint64_t events_primary;  /**< start time of the primary whose events were last imported */
	uint64_t events_seq;      /**< highest event sequence number imported from it */
	struct mgmt_history *history; /**< the stats history (history.h) once opened, else NULL; not owned */
};

/** mkdir -p (mode 0755) of the directory part of @p path. @return 0, or -1 (errno set). */
int mgmt_make_parent(const char *path);

/**
 * Open or create the database at @p path (creating missing parent directories, mode 0755),
 * switch it to WAL, apply pending migrations, one transaction each (2 s busy timeout), then
 * turn a database without incremental auto-vacuum into one (a one-time VACUUM) and set the busy
 * timeout to MGMT_DB_BUSY_MS.
 * @param db      filled on success; on failure nothing stays open.
 * @param err     receives "database <path>: <reason>" on failure.
 * @return 0 on success, -1 on failure.
 */
int mgmt_db_open(struct mgmt_db *db, const char *path, char *err, size_t errlen);

/**
 * Append an event (timestamped now, RFC 3339 UTC) to the events table.
 * @param kind    short tag, e.g. "mgmt_start".
 * @param detail  free text; copied.
 * @return 0, or -1 (the error is printed to stderr: losing an event is not fatal).
 */
int mgmt_db_event(struct mgmt_db *db, const char *kind, const char *detail);

/**
 * mgmt_db_event() of a change a REST client asked for: @p client ("addr:port") is kept with it,
 * NULL for mgmt's own events. While a change transaction is open (mgmt_db_change_open), or when
 * the database is locked, the event is queued with its time (up to 64) and written by
 * mgmt_db_flush_later(): no thread waits for the change's write lock. Thread-safe.
 * @return 0 (written or queued) or -1 (printed to stderr).
 */
int mgmt_db_audit(struct mgmt_db *db, const char *kind, const char *detail, const char *client);

/**
 * store.c: a change transaction (its own connection) is open (@p open true, set before its
 * BEGIN IMMEDIATE) or over (false). Events of other threads are queued meanwhile.
 */
void mgmt_db_change_open(bool open);

/**
 * Main thread, every loop: write the queued events (mgmt_db_audit) in one transaction, unless a
 * change is open or the database is locked (then next time).
 * @return how many were written, 0 when none waited, MGMT_DB_BUSY or -1.
 */
int mgmt_db_flush_later(struct mgmt_db *db);

/**
 * INSERT one event (time @p ts RFC 3339, @p kind, @p detail, @p client or NULL) on connection @p h,
 * in the caller's transaction if one is open (store.c's change). @return the SQLite result of the
 * step (SQLITE_DONE on success).
 */
int mgmt_db_insert_event(sqlite3 *h, const char *ts, const char *kind, const char *detail, const char *client);

/**
 * Copy the primary's new events from the memzone ring into the events table. Events already stored
 * (same primary start time and sequence number) are skipped, so a restarted mgmt re-imports nothing.
 * Does nothing when no event arrived since the last successful import.
 * @return events added, MGMT_DB_BUSY when the database is locked (nothing added, retried on the
 *         next call), -1 on another database error.
 */
int mgmt_db_import_events(struct mgmt_db *db, const struct sbx_shm *shm);

/** @return the newest @p limit events (only those of kind @p kind unless it is NULL), newest
 *  first, as a new JSON array; NULL on error. */
cJSON *mgmt_db_events_json(struct mgmt_db *db, int limit, const char *kind);

/** @return bytes the database uses on disk (main file plus WAL), 0 when unknown. */
uint64_t mgmt_db_size(const struct mgmt_db *db);

/**
 * Map an SQLite result code to the write helpers' convention.
 * @return 0 for SQLITE_OK/DONE/ROW; MGMT_DB_BUSY for a locked, busy or unwritable database
 *         (SQLITE_BUSY, LOCKED, READONLY, IOERR, FULL, CANTOPEN, PERM): answer 503; -1 otherwise (500).
 */
int mgmt_db_rc(int sqlite_rc);

/**
 * Start a write transaction (BEGIN IMMEDIATE: takes the write lock now, waiting at most
 * MGMT_DB_BUSY_MS). For the HTTP write routes:
 *     rc = mgmt_db_begin_write(db);   if (rc == MGMT_DB_BUSY) -> 503, if (rc < 0) -> 500
 *     ... statements ... (on failure: mgmt_db_rollback(db))
 *     rc = mgmt_db_commit(db);        same mapping
 * @return 0, MGMT_DB_BUSY (locked/busy/unwritable), or -1.
 */
int mgmt_db_begin_write(struct mgmt_db *db);

/** Commit the transaction of mgmt_db_begin_write(); rolls back on failure. @return as mgmt_db_begin_write(). */
int mgmt_db_commit(struct mgmt_db *db);

/** Roll back the transaction of mgmt_db_begin_write() (a no-op outside a transaction). */
void mgmt_db_rollback(struct mgmt_db *db);

/**
 * Can a write happen now? Takes and releases the write lock (waits at most MGMT_DB_BUSY_MS).
 * For a route that wants to refuse (503) before it changes anything elsewhere (the primary's tables).
 * @return true when the write lock could be taken.
 */
bool mgmt_db_writable(struct mgmt_db *db);

/** Close the connection (a no-op when not open). */
void mgmt_db_close(struct mgmt_db *db);

#endif
