/* SPDX-License-Identifier: BSD-3-Clause */
/* The stored live config and the audit of changes (store.c). */
#ifndef SBX_MGMT_STORE_H
#define SBX_MGMT_STORE_H

#include <stddef.h>

struct cJSON;

struct mgmt_db;

/**
 * Begin a change: BEGIN IMMEDIATE, then store @p live_json ({"forwarding":..,"mirrors":..}) as the
 * newest row of config_store for the config file @p config_path (its realpath, the key the primary
 * reads at start), or with @p live_json NULL delete that file's rows (the change goes back to the
 * file's own sections), and the audit event (@p kind, @p detail, @p client) in events. The
 * transaction stays open: end it with mgmt_store_commit() once the primary applied the change, or
 * mgmt_store_rollback().
 * @return 0; -2 when the database is locked, read-only or unwritable (answer 503; nothing was
 *         stored); -1 on another database error (500). @p err says why.
 */
/**
 * In the transaction mgmt_store_begin opened: store each rule table of @p tables (a cJSON array of
 * {"digest": "<16 hex>", "count": N, "rules": [..]}) for @p config_path in map_rules, then delete
 * the tables of @p config_path the maps of @p live_json do not name (all of them when NULL).
 * @return 0, or -1 with @p err (the caller rolls back).
 */
int mgmt_store_map_rules(const char *config_path, const char *live_json, const struct cJSON *tables, char *err,
			 size_t len);

int mgmt_store_begin(const struct mgmt_db *db, const char *config_path, const char *live_json, const char *client,
		     const char *kind, const char *detail, char *err, size_t len);

/** Commit the change. @return 0, -2 (locked/unwritable) or -1; on failure it is rolled back. */
int mgmt_store_commit(char *err, size_t len);

/** Roll the open change back (a no-op when none). */
void mgmt_store_rollback(void);

/** Close the store's connection (before mgmt re-executes or exits). */
void mgmt_store_close(void);

#endif
