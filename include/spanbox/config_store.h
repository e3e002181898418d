/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file config_store.h
 * The stored live config: table config_store of mgmt's SQLite database (migrations 4 and 5 of
 * mgmt/db.c: id, saved_at, client, json, config_path). It holds the live parts
 * (SBX_LIVE_PARTS_TEXT) changed through the REST API, per config file (its realpath); the newest row of a
 * file wins over the file's own sections at that file's next start (docs/RUNTIME_TABLES.md).
 *
 * The one module that knows the table and the live sections, for every caller: mgmt's REST
 * changes (sbx_store_put inside its transaction), the primary's start (sbx_store_get +
 * sbx_live_merge) and `./spanbox reset-config` of a stopped appliance (spanbox-primary
 * --forget-stored-config: sbx_store_forget).
 */
#ifndef SPANBOX_CONFIG_STORE_H
#define SPANBOX_CONFIG_STORE_H

#include <stddef.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

/** The sections of a config document that change at run time, in the order they are kept. */
#define SBX_LIVE_SECTIONS { "forwarding", "mirrors" }

/**
 * What the stored live config holds, in words, for the messages of the primary (a start on it,
 * `./spanbox reset-config`): every part sbx_live_extract() keeps. Update it with that function.
 */
#define SBX_LIVE_PARTS_TEXT "forwarding, mirrors, ingress stages, tool groups, flows and maps"

/**
 * Store @p live_json ({"forwarding":..,"mirrors":..}, sbx_live_extract) for config file
 * @p config_path on connection @p h, saved at @p saved_at (RFC 3339) by @p client; @p live_json
 * NULL forgets what is stored for the file (it runs the file's own sections again). Runs in the
 * caller's transaction. @return SQLITE_DONE, or the SQLite error code.
 */
int sbx_store_put(sqlite3 *h, const char *config_path, const char *live_json, const char *saved_at,
		  const char *client);

/**
 * The newest live sections stored for config file @p config_path (realpath) in the database file
 * @p db_path, opened read-only (2 s busy timeout). @p when receives "SAVED_AT by CLIENT".
 * @return the JSON (malloc'd, caller frees), NULL when nothing is stored or the database is absent.
 */
char *sbx_store_get(const char *db_path, const char *config_path, char *when, size_t wlen);

/**
 * Forget what is stored for @p config_path in database file @p db_path (absent: nothing to do).
 * @return the number of rows removed, or -1 with the reason in @p err.
 */
int sbx_store_forget(const char *db_path, const char *config_path, char *err, size_t errlen);

/** A copy of the array @p maps with each map's "rules" replaced by its summary {"count","digest"}
 *  (config_maps.h; a summary is copied as it is): what a config_store row keeps of the maps. */
cJSON *sbx_maps_summarised(const cJSON *maps);

/**
 * Store rule table @p rules_json (a JSON array of rules, as given) of summary @p digest (16 hex) and
 * @p count rules for @p config_path in table map_rules (mgmt/db.c), in the caller's transaction
 * (one row per table: 65,536 rules in one statement). @return SQLITE_DONE, or the SQLite error.
 */
int sbx_store_put_map_rules(sqlite3 *h, const char *config_path, const char *digest, unsigned int count,
			    const char *rules_json);

/** Delete the rule tables of @p config_path that the maps of @p live_json (a stored row) do not
 *  name; all of them when @p live_json is NULL. @return SQLITE_DONE, or the SQLite error. */
int sbx_store_prune_map_rules(sqlite3 *h, const char *config_path, const char *live_json);

/**
 * Replace each map summary of @p doc's maps by its rules: those stored in map_rules of database
 * @p db_path (read-only) for @p config_path, else those of the file's map (in @p file_maps) with
 * the same summary. @return 0, or -1 with "maps[i].rules: why" in @p err.
 */
int sbx_store_maps_resolve(cJSON *doc, const cJSON *file_maps, const char *db_path, const char *config_path,
			   char *err, size_t errlen);

/** The live sections of config document @p doc as stored: {"forwarding":..,"mirrors":[..] (without
 *  its captures: sessions whose destination is a recorder are never stored),
 *  "ingress":{"<port name>":{..}},"tool_groups":[..],"flows":{..}} (mirrors, ingress, tool_groups
 *  and flows always present; ingress holds the ports[].ingress objects by port name; flows is the
 *  section without its static flows_per_worker, null when @p doc has none), printed unformatted.
 *  @return malloc'd JSON, NULL when out of memory. */
char *sbx_live_extract(const cJSON *doc);

/** Replace the live sections of @p doc by those of @p live (a section absent from @p live is
 *  removed from @p doc; the ports' ingress objects, tool_groups and flows are replaced only when
 *  @p live has "ingress" / "tool_groups" / "flows": rows stored before they existed keep the file's;
 *  flows keeps the file's flows_per_worker, static);
 *  @p live is emptied. */
void sbx_live_merge(cJSON *doc, cJSON *live);

#endif
