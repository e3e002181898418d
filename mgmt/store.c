/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stored live config (table config_store, migration 4 of db.c) and the audit event of each
 * change, written in one transaction that stays open while the primary applies the change: the
 * caller commits only when the primary took it, and rolls back otherwise. Its own connection
 * (the changes lane of http.c only), so the history sampler's writes on the main connection never land inside,
 * or get rolled back with, a change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "spanbox/config_store.h"
#include "db.h"
#include "timefmt.h"
#include "store.h"

#define STORE_BUSY_MS 200 /* a locked database answers 503 quickly instead of hanging the request */

static sqlite3 *h;

static int fail(const char *what, char *err, size_t len)
{
	int code = h ? sqlite3_errcode(h) : SQLITE_CANTOPEN;

	snprintf(err, len, "database: %s: %s", what, h ? sqlite3_errmsg(h) : "cannot open");
	return code == SQLITE_BUSY || code == SQLITE_LOCKED || code == SQLITE_READONLY ||
			       code == SQLITE_CANTOPEN || code == SQLITE_IOERR || code == SQLITE_FULL
		       ? -2
		       : -1;
}

/* Open the connection once (the database exists: mgmt_db_open() created and migrated it). */
static int store_open(const struct mgmt_db *db, char *err, size_t len)
{
	if (h != NULL)
		return 0;
	if (sqlite3_open_v2(db->path, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
		int rc = fail("open", err, len);

		sqlite3_close(h);
		h = NULL;
		return rc;
	}
	sqlite3_busy_timeout(h, STORE_BUSY_MS);
	return 0;
}

int mgmt_store_begin(const struct mgmt_db *db, const char *config_path, const char *live_json, const char *client,
		     const char *kind, const char *detail, char *err, size_t len)
{
	char ts[40];
	int rc;

	if (store_open(db, err, len) != 0)
		return -2;
	mgmt_db_change_open(true); /* other threads queue their events meanwhile (db.h) */
	if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		rc = fail("begin", err, len);
		mgmt_db_change_open(false);
		return rc;
	}
	mgmt_rfc3339(sbx_realtime_ns(), ts, sizeof(ts));
	if (sbx_store_put(h, config_path, live_json, ts, client) == SQLITE_DONE &&
	    mgmt_db_insert_event(h, ts, kind, detail, client) == SQLITE_DONE)
		return 0;
	rc = fail("store", err, len);
	sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
	mgmt_db_change_open(false);
	return rc;
}

int mgmt_store_map_rules(const char *config_path, const char *live_json, const cJSON *tables, char *err, size_t len)
{
	const cJSON *t;

	if (h == NULL)
		return -1;
	cJSON_ArrayForEach(t, tables) {
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(t, "digest"), *n = cJSON_GetObjectItemCaseSensitive(t, "count");
		char *rules = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(t, "rules"));
		int rc = rules != NULL && cJSON_IsString(d) && cJSON_IsNumber(n)
				 ? sbx_store_put_map_rules(h, config_path, d->valuestring, (unsigned int)n->valuedouble, rules)
				 : SQLITE_NOMEM;

		free(rules);
		if (rc != SQLITE_DONE) {
			snprintf(err, len, "store map rules: %s", sqlite3_errstr(rc));
			return -1;
		}
	}
	if (sbx_store_prune_map_rules(h, config_path, live_json) != SQLITE_DONE) {
		snprintf(err, len, "store map rules: %s", sqlite3_errmsg(h));
		return -1;
	}
	return 0;
}

int mgmt_store_commit(char *err, size_t len)
{
	if (h == NULL)
		return -1;
	if (sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		int rc = fail("commit", err, len);

		sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
		mgmt_db_change_open(false);
		return rc;
	}
	mgmt_db_change_open(false);
	return 0;
}

void mgmt_store_rollback(void)
{
	if (h != NULL)
		sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
	mgmt_db_change_open(false);
}

void mgmt_store_close(void)
{
	sqlite3_close(h);
	h = NULL;
}
