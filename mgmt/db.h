/* SPDX-License-Identifier: BSD-3-Clause */
/* mgmt's SQLite database: schema migrations and the event log. */
#ifndef SBX_MGMT_DB_H
#define SBX_MGMT_DB_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "spanbox/shm.h"

struct sqlite3;

/** An open database. */
struct mgmt_db {
	struct sqlite3 *h;        /**< the connection, opened FULLMUTEX (HTTP thread + main thread) */
	char path[256];           /**< file name as given */
	int schema_version;       /**< highest migration applied */
};

/**
 * Open or create the database at @p path (creating missing parent directories, mode 0755),
 * switch it to WAL, set a 2 s busy timeout and apply pending migrations, one transaction each.
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
 * Copy the primary's new events from the memzone ring into the events table. Events already stored
 * (same primary start time and sequence number) are skipped, so a restarted mgmt re-imports nothing.
 * @return events added, -1 on a database error.
 */
int mgmt_db_import_events(struct mgmt_db *db, const struct sbx_shm *shm);

/** @return the newest @p limit events, newest first, as a new JSON array; NULL on error. */
cJSON *mgmt_db_events_json(struct mgmt_db *db, int limit);

/** @return bytes the database uses on disk (main file plus WAL), 0 when unknown. */
uint64_t mgmt_db_size(const struct mgmt_db *db);

/** Close the connection (a no-op when not open). */
void mgmt_db_close(struct mgmt_db *db);

#endif
