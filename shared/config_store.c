/* SPDX-License-Identifier: BSD-3-Clause */
/* The stored live config (include/spanbox/config_store.h): table config_store and the live sections. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spanbox/config_maps.h"
#include "spanbox/config_store.h"

static const char *const live_sections[] = SBX_LIVE_SECTIONS;

int sbx_store_put(sqlite3 *h, const char *config_path, const char *live_json, const char *saved_at,
		  const char *client)
{
	sqlite3_stmt *st = NULL;
	int rc;

	/* live_json NULL: back to the file, i.e. nothing stored for it any more */
	rc = sqlite3_prepare_v2(h, live_json ? "INSERT INTO config_store(saved_at, client, json, config_path)"
					       " VALUES(?1, ?2, ?3, ?4)"
					     : "DELETE FROM config_store WHERE config_path = ?4",
				-1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	if (live_json != NULL) {
		sqlite3_bind_text(st, 1, saved_at, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, client, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, live_json, -1, SQLITE_TRANSIENT);
	}
	sqlite3_bind_text(st, 4, config_path, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc;
}

char *sbx_store_get(const char *db_path, const char *config_path, char *when, size_t wlen)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char *json = NULL;

	if (access(db_path, R_OK) != 0 || config_path[0] == '\0')
		return NULL;
	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_busy_timeout(db, 2000) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT json, saved_at || ' by ' || client FROM config_store"
			       " WHERE config_path = ?1 ORDER BY id DESC LIMIT 1", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_bind_text(st, 1, config_path, -1, SQLITE_TRANSIENT) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		json = strdup((const char *)sqlite3_column_text(st, 0));
		snprintf(when, wlen, "%s", (const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return json;
}

int sbx_store_forget(const char *db_path, const char *config_path, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	int rc, n = -1;

	if (access(db_path, F_OK) != 0)
		return 0;
	rc = sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_busy_timeout(db, 2000);
	/* a database of a mgmt that never stored a change may lack the table: nothing to forget */
	if (rc == SQLITE_OK && sqlite3_table_column_metadata(db, NULL, "config_store", "config_path", NULL, NULL,
							     NULL, NULL, NULL) != SQLITE_OK) {
		n = 0;
	} else if (rc == SQLITE_OK && (rc = sbx_store_put(db, config_path, NULL, NULL, NULL)) == SQLITE_DONE) {
		n = sqlite3_changes(db);
		if (sqlite3_table_column_metadata(db, NULL, "map_rules", "digest", NULL, NULL, NULL, NULL, NULL) ==
		    SQLITE_OK) /* the maps' rule tables too */
			sbx_store_prune_map_rules(db, config_path, NULL);
	} else {
		snprintf(err, errlen, "database %s: %s", db_path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
	}
	sqlite3_close(db);
	return n;
}

/* {"<port name>": <its ingress object>, ...} of the ports of @p doc that have one. */
static cJSON *ingress_extract(const cJSON *doc)
{
	const cJSON *ports = cJSON_GetObjectItemCaseSensitive(doc, "ports"), *p;
	cJSON *o = cJSON_CreateObject();

	cJSON_ArrayForEach(p, ports) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
		const cJSON *ing = cJSON_GetObjectItemCaseSensitive(p, "ingress");

		if (cJSON_IsString(name) && ing != NULL)
			cJSON_AddItemToObject(o, name->valuestring, cJSON_Duplicate(ing, true));
	}
	return o;
}

/* Every port of @p doc gets the ingress object @p ing names it by (none: it has none). */
static void ingress_merge(cJSON *doc, const cJSON *ing)
{
	cJSON *ports = cJSON_GetObjectItemCaseSensitive(doc, "ports"), *p;

	cJSON_ArrayForEach(p, ports) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
		const cJSON *mine = cJSON_IsString(name) ? cJSON_GetObjectItemCaseSensitive(ing, name->valuestring) : NULL;

		cJSON_DeleteItemFromObjectCaseSensitive(p, "ingress");
		if (mine != NULL)
			cJSON_AddItemToObject(p, "ingress", cJSON_Duplicate(mine, true));
	}
}

/* A copy of the mirrors array @m without its captures (destination "recorder"): a capture is
 * never stored, it ends with the processes that run it (docs/CAPTURE.md). */
static cJSON *mirrors_without_captures(const cJSON *m)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *it;

	cJSON_ArrayForEach(it, m) {
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(it, "destination");

		if (cJSON_GetObjectItemCaseSensitive(d, "recorder") == NULL)
			cJSON_AddItemToArray(out, cJSON_Duplicate(it, true));
	}
	return out;
}

/* ---- flows (live but flows_per_worker, docs/RUNTIME_TABLES.md "Flows") ---- */

/* The flows section of @p doc as stored: without flows_per_worker (static: the file's own wins at
 * the next start), JSON null when @p doc has none (the file's section is then dropped too). */
static cJSON *flows_extract(const cJSON *doc)
{
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(doc, "flows");
	cJSON *o;

	if (f == NULL)
		return cJSON_CreateNull();
	o = cJSON_Duplicate(f, true);
	cJSON_DeleteItemFromObjectCaseSensitive(o, "flows_per_worker");
	return o;
}

/* The stored flows section @p stored (consumed; JSON null: none) replaces @p doc's, with the file's
 * flows_per_worker kept. */
static void flows_merge(cJSON *doc, cJSON *stored)
{
	cJSON *old = cJSON_GetObjectItemCaseSensitive(doc, "flows");
	cJSON *fpw = cJSON_IsObject(old) ? cJSON_DetachItemFromObjectCaseSensitive(old, "flows_per_worker") : NULL;

	cJSON_DeleteItemFromObjectCaseSensitive(doc, "flows");
	if (cJSON_IsObject(stored)) {
		cJSON_DeleteItemFromObjectCaseSensitive(stored, "flows_per_worker");
		if (fpw != NULL)
			cJSON_AddItemToObject(stored, "flows_per_worker", fpw);
		fpw = NULL;
		cJSON_AddItemToObject(doc, "flows", stored);
	} else {
		cJSON_Delete(stored);
	}
	cJSON_Delete(fpw);
}

/* ---- maps (live, issue #27, docs/RUNTIME_TABLES.md "Maps"): the row holds each map with its rules'
 * summary {"count", "digest"}; the rules are in table map_rules, one row per table ---- */

/* The summary of rule array @p rules (parsed: a bad one gets digest of no rules), or a copy of a summary. */
static cJSON *rules_summary(const cJSON *rules)
{
	struct sbx_map_rules r = { 0 };
	char hex[20];
	cJSON *o;

	if (cJSON_IsObject(rules))
		return cJSON_Duplicate(rules, true);
	if (rules != NULL && sbx_map_rules_parse(rules, "rules", &r, NULL, 0) != 0)
		memset(&r, 0, sizeof(r));
	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)sbx_config_maps_digest(&r));
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "count", r.n);
	cJSON_AddStringToObject(o, "digest", hex);
	sbx_map_rules_free(&r);
	return o;
}

cJSON *sbx_maps_summarised(const cJSON *maps)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *m;

	cJSON_ArrayForEach(m, maps) {
		cJSON *c = cJSON_Duplicate(m, true);

		if (cJSON_IsObject(c)) {
			cJSON *s = rules_summary(cJSON_GetObjectItemCaseSensitive(m, "rules"));

			cJSON_DeleteItemFromObjectCaseSensitive(c, "rules");
			cJSON_AddItemToObject(c, "rules", s);
		}
		cJSON_AddItemToArray(out, c);
	}
	return out;
}

int sbx_store_put_map_rules(sqlite3 *h, const char *config_path, const char *digest, unsigned int count,
			    const char *rules_json)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(h, "INSERT OR REPLACE INTO map_rules(config_path, digest, count, rules)"
				       " VALUES(?1, ?2, ?3, ?4)", -1, &st, NULL);

	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, config_path, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, digest, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, count);
	sqlite3_bind_text(st, 4, rules_json, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc;
}

int sbx_store_prune_map_rules(sqlite3 *h, const char *config_path, const char *live_json)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(h, live_json
				       ? "DELETE FROM map_rules WHERE config_path = ?1 AND digest NOT IN"
					 " (SELECT json_extract(value, '$.rules.digest') FROM json_each(?2, '$.maps'))"
				       : "DELETE FROM map_rules WHERE config_path = ?1",
				    -1, &st, NULL);

	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, config_path, -1, SQLITE_TRANSIENT);
	if (live_json != NULL)
		sqlite3_bind_text(st, 2, live_json, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc;
}

/* The rules stored under @p digest for @p config_path in @p db (NULL: none). */
static cJSON *stored_rules(sqlite3 *db, const char *config_path, const char *digest)
{
	sqlite3_stmt *st = NULL;
	cJSON *r = NULL;

	if (db != NULL &&
	    sqlite3_prepare_v2(db, "SELECT rules FROM map_rules WHERE config_path = ?1 AND digest = ?2", -1, &st,
			       NULL) == SQLITE_OK &&
	    sqlite3_bind_text(st, 1, config_path, -1, SQLITE_TRANSIENT) == SQLITE_OK &&
	    sqlite3_bind_text(st, 2, digest, -1, SQLITE_TRANSIENT) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		r = cJSON_Parse((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return r;
}

int sbx_store_maps_resolve(cJSON *doc, const cJSON *file_maps, const char *db_path, const char *config_path,
			   char *err, size_t errlen)
{
	cJSON *maps = cJSON_GetObjectItemCaseSensitive(doc, "maps"), *m;
	sqlite3 *db = NULL;
	int i = 0, rc = 0;

	cJSON_ArrayForEach(m, maps) {
		const cJSON *sum = cJSON_GetObjectItemCaseSensitive(m, "rules");
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(sum, "digest"), *fm;
		cJSON *rules = NULL;

		if (!cJSON_IsObject(sum) || !cJSON_IsString(d)) {
			i++;
			continue;
		}
		if (db == NULL && access(db_path, R_OK) == 0 &&
		    (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
		     sqlite3_busy_timeout(db, 2000) != SQLITE_OK)) {
			sqlite3_close(db);
			db = NULL;
		}
		rules = stored_rules(db, config_path, d->valuestring);
		cJSON_ArrayForEach(fm, file_maps) { /* a table the file holds (a map stored unchanged) */
			cJSON *fs;

			if (rules != NULL)
				break;
			fs = rules_summary(cJSON_GetObjectItemCaseSensitive(fm, "rules"));
			if (cJSON_Compare(fs, sum, true))
				rules = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(fm, "rules"), true);
			cJSON_Delete(fs);
		}
		if (rules == NULL) {
			snprintf(err, errlen, "maps[%d].rules: the rules of digest %s are neither stored nor in the file", i,
				 d->valuestring);
			rc = -1;
			break;
		}
		cJSON_ReplaceItemInObjectCaseSensitive(m, "rules", rules);
		i++;
	}
	sqlite3_close(db);
	return rc;
}

char *sbx_live_extract(const cJSON *doc)
{
	cJSON *o = cJSON_CreateObject();
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(doc, "forwarding");
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "mirrors"), *g;
	char *s;

	if (o == NULL)
		return NULL;
	if (f != NULL)
		cJSON_AddItemToObject(o, "forwarding", cJSON_Duplicate(f, true));
	cJSON_AddItemToObject(o, "mirrors", mirrors_without_captures(m));
	cJSON_AddItemToObject(o, "ingress", ingress_extract(doc));
	g = cJSON_GetObjectItemCaseSensitive(doc, "tool_groups");
	cJSON_AddItemToObject(o, "tool_groups", g ? cJSON_Duplicate(g, true) : cJSON_CreateArray());
	cJSON_AddItemToObject(o, "flows", flows_extract(doc));
	cJSON_AddItemToObject(o, "maps", sbx_maps_summarised(cJSON_GetObjectItemCaseSensitive(doc, "maps")));
	s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

void sbx_live_merge(cJSON *doc, cJSON *live)
{
	size_t i;

	/* ports[].ingress is kept as {"ingress": {port name: object}}; a row stored before ingress
	 * existed has no such key and leaves the file's ingress objects as they are */
	if (cJSON_GetObjectItemCaseSensitive(live, "ingress") != NULL)
		ingress_merge(doc, cJSON_GetObjectItemCaseSensitive(live, "ingress"));
	/* tool_groups likewise: a row stored before tool groups existed keeps the file's */
	if (cJSON_GetObjectItemCaseSensitive(live, "tool_groups") != NULL) {
		cJSON_DeleteItemFromObjectCaseSensitive(doc, "tool_groups");
		cJSON_AddItemToObject(doc, "tool_groups", cJSON_DetachItemFromObjectCaseSensitive(live, "tool_groups"));
	}
	/* maps likewise (a row stored before maps were live keeps the file's); summaries: sbx_store_maps_resolve */
	if (cJSON_GetObjectItemCaseSensitive(live, "maps") != NULL) {
		cJSON_DeleteItemFromObjectCaseSensitive(doc, "maps");
		if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(live, "maps")) > 0)
			cJSON_AddItemToObject(doc, "maps", cJSON_DetachItemFromObjectCaseSensitive(live, "maps"));
	}
	/* flows likewise (a row stored before flows were live keeps the file's) */
	if (cJSON_GetObjectItemCaseSensitive(live, "flows") != NULL)
		flows_merge(doc, cJSON_DetachItemFromObjectCaseSensitive(live, "flows"));
	for (i = 0; i < sizeof(live_sections) / sizeof(live_sections[0]); i++) {
		cJSON_DeleteItemFromObjectCaseSensitive(doc, live_sections[i]);
		if (cJSON_GetObjectItemCaseSensitive(live, live_sections[i]))
			cJSON_AddItemToObject(doc, live_sections[i],
					      cJSON_DetachItemFromObjectCaseSensitive(live, live_sections[i]));
	}
}
