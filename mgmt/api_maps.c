/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Routes of the maps (issue #27, docs/MAPS.md "Live changes", docs/MGMT.md "Maps"):
 *   GET    /api/v1/maps                     the maps as they run, counters, what the classifiers took
 *   POST   /api/v1/maps                     create a map (rules included)
 *   GET    /api/v1/maps/{id}                one map
 *   PUT    /api/v1/maps/{id}                replace a whole map, rules included
 *   DELETE /api/v1/maps/{id}
 *   GET    /api/v1/maps/{id}/rules?offset=&limit=&sort=&search=&field=&value=
 *                                            its rules with their counters, searched, sorted, paged
 *   POST   /api/v1/maps/{id}/rules          append one rule
 *   DELETE /api/v1/maps/{id}/rules/{n}      delete rule n (the later ones move up)
 * A change builds the new whole config document (the running one: each map's rules a summary
 * {"count","digest"}; the changed map's rules an array) and goes the steps of every runtime-table
 * change (mgmt_tables_change, api_tables.c): the rules parsed (a 422 naming the rule's field),
 * stored in SQLite (map_rules) with the document, sent to the primary, which builds the new
 * classifiers off the data path and publishes them with the generation. The running rules are
 * read from the primary's SBX_MAPS_RUNNING_FILE (config_maps.h), parsed once per version of the
 * file (its inode, size and mtime: the primary renames a new one in at each change) and kept. The
 * per-rule counters are the active tables' block (maps.ctr, maprulectr.h), summed over the rows.
 * These routes take bodies up to 32 MiB (http.c MAPS_MAX_BODY).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <rte_eal.h>

#include "spanbox/config_maps.h"
#include "spanbox/maprulectr.h"
#include "api.h"
#include "status.h"
#include "shmview.h"
#include "validate.h"
#include "spanbox/shm.h"

#define NUM(o, k, v) cJSON_AddNumberToObject((o), (k), (double)(v))

/* Map @p j of the running config, its counters summed over @p nw workers. */
static cJSON *map_json(const struct sbx_shm *shm, uint16_t j, uint16_t nw)
{
	const struct sbx_tables *t = sbx_shm_tables(shm); /* live: the active tables' */
	const struct sbx_map_cfg *m = &t->cfg.maps[j];
	struct sbx_mirror_counters sum;
	const uint64_t passed = mgmt_map_sum(shm, j, nw, &sum); /* by the map's counter set */
	cJSON *o = cJSON_CreateObject(), *c;

	mgmt_session_json(o, shm, &m->s); /* id, name, sources, destination, filter: as a mirror's */
	cJSON_AddBoolToObject(o, "collector", m->collector);
	NUM(o, "rule_count", m->nb_rules);
	c = cJSON_AddObjectToObject(o, "counters");
	NUM(c, "passed", passed);
	mgmt_mirror_counters_json(c, &sum);
	return o;
}

static unsigned int get_maps(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = mgmt_need_shm(r, body, &code);
	uint16_t nw, j;
	uint64_t classified = 0;
	cJSON *o, *a;

	if (shm == NULL)
		return code;
	nw = shm->cfg.nb_workers < SBX_MAX_WORKERS ? shm->cfg.nb_workers : SBX_MAX_WORKERS;
	*body = o = cJSON_CreateObject();
	for (uint16_t w = 0; w < nw; w++)
		classified += sbx_shm_worker(shm, w)->stats.maps_classified;
	NUM(o, "classified_frames", classified);
	NUM(o, "contexts", shm->maps.contexts);
	NUM(o, "build_ms", (double)(shm->maps.build_ns / 1000) / 1000.0);
	NUM(o, "memory_bytes", shm->maps.memory);
	a = cJSON_AddArrayToObject(o, "maps");
	for (j = 0; j < sbx_shm_cfg(shm)->nb_maps && j < SBX_MAX_MAPS; j++)
		cJSON_AddItemToArray(a, map_json(shm, j, nw));
	return code;
}

/* ---- live changes ---- */

#define RULES_PAGE_DEFAULT 100
#define RULES_PAGE_MAX 10000

/* The primary's running rule tables (SBX_MAPS_RUNNING_FILE), parsed once per version of the file:
 * a GET of a page of 50 rules no longer parses the ~7 MB of 65,536 rules. Under running_lock. */
static pthread_mutex_t running_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	cJSON *doc;
} running;

/* The parsed running file, current (read again when it changed), or NULL; running_lock held. */
static const cJSON *running_doc_locked(void)
{
	char path[512], *text = NULL;
	struct stat sb;
	FILE *f;
	cJSON *doc = NULL;

	snprintf(path, sizeof(path), "%s/%s", rte_eal_get_runtime_dir(), SBX_MAPS_RUNNING_FILE);
	f = fopen(path, "r");
	if (f == NULL || fstat(fileno(f), &sb) != 0) {
		if (f != NULL)
			fclose(f);
		return NULL;
	}
	if (running.doc != NULL && sb.st_dev == running.dev && sb.st_ino == running.ino && sb.st_size == running.size &&
	    sb.st_mtim.tv_sec == running.mtime.tv_sec && sb.st_mtim.tv_nsec == running.mtime.tv_nsec) {
		fclose(f);
		return running.doc;
	}
	if (sb.st_size > 0 && (text = malloc((size_t)sb.st_size + 1)) != NULL &&
	    fread(text, 1, (size_t)sb.st_size, f) == (size_t)sb.st_size) {
		text[sb.st_size] = '\0';
		doc = cJSON_Parse(text);
	}
	free(text);
	fclose(f);
	if (doc == NULL)
		return NULL;
	cJSON_Delete(running.doc);
	running.doc = doc;
	running.dev = sb.st_dev;
	running.ino = sb.st_ino;
	running.size = sb.st_size;
	running.mtime = sb.st_mtim;
	return doc;
}

/* The rules array of map @p id in the parsed running file @p doc, or NULL. */
static const cJSON *doc_rules(const cJSON *doc, long id)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(doc, "maps")) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "id");

		if (cJSON_IsNumber(v) && (long)v->valuedouble == id)
			return cJSON_GetObjectItemCaseSensitive(m, "rules");
	}
	return NULL;
}

/* The running rules of map @p id (SBX_MAPS_RUNNING_FILE, as the primary keeps them): a copy, or NULL. */
static cJSON *running_rules(long id)
{
	cJSON *out = NULL;
	const cJSON *a;

	pthread_mutex_lock(&running_lock);
	a = doc_rules(running_doc_locked(), id);
	if (cJSON_IsArray(a))
		out = cJSON_Duplicate(a, true);
	pthread_mutex_unlock(&running_lock);
	return out;
}

/* The answer of a change: the map as sent, its rules replaced by their count. */
static cJSON *map_answer(const cJSON *m)
{
	cJSON *o = cJSON_Duplicate(m, true);
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(m, "rules");

	cJSON_DeleteItemFromObjectCaseSensitive(o, "rules");
	cJSON_AddNumberToObject(o, "rule_count", cJSON_IsArray(r) ? cJSON_GetArraySize(r)
					      : cJSON_IsObject(r) ? cJSON_GetObjectItemCaseSensitive(r, "count")->valuedouble : 0);
	return o;
}

/* A {id} path parameter: 404 with *body when it names no map of @p doc. */
static cJSON *need_map(struct req *r, cJSON *doc, int *idx, long *id, cJSON **body, unsigned int *code)
{
	cJSON *m;

	*id = mgmt_mirror_id_param(r->params[0]);
	m = *id > 0 ? mgmt_find_map(doc, *id, idx) : NULL;
	if (m == NULL) {
		*code = MHD_HTTP_NOT_FOUND;
		*body = mgmt_error(*code, NULL, "no map %s", r->params[0]);
	}
	return m;
}

/* The body of POST/PUT of a map (mgmt_check_map_body). */
static cJSON *map_body(struct req *r, cJSON **body, unsigned int *code)
{
	cJSON *in = mgmt_parse_body(r, body, code);
	struct mgmt_verdict v;

	if (in != NULL && mgmt_check_map_body(in, &v) != 0) {
		*code = v.code;
		*body = mgmt_error(v.code, v.field, "%s", v.msg);
		cJSON_Delete(in);
		return NULL;
	}
	return in;
}

static unsigned int post_map(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_CREATED;
	struct mgmt_verdict v;
	cJSON *in, *doc, *ok;
	char detail[160];
	long id;

	if (!mgmt_change_begin(r, body, &code, map_body, &in, &doc))
		return code;
	if (mgmt_merge_post_map(in, doc, &id, &v) != 0) {
		*body = mgmt_error(v.code, v.field, "%s", v.msg);
		cJSON_Delete(in);
		cJSON_Delete(doc);
		return v.code;
	}
	snprintf(detail, sizeof(detail), "POST /api/v1/maps: map %ld added (%d rules)", id,
		 cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(in, "rules")));
	ok = map_answer(in);
	cJSON_Delete(in);
	return mgmt_tables_change(r, body, doc, "config_change", detail, MHD_HTTP_CREATED, ok, NULL);
}

static unsigned int get_map(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm;
	cJSON *doc, *m;
	long id;
	int idx = -1;

	shm = mgmt_need_shm(r, body, &code);
	doc = shm != NULL ? mgmt_running_doc(r, body, &code) : NULL;
	if (doc == NULL)
		return code;
	m = need_map(r, doc, &idx, &id, body, &code);
	if (m != NULL) {
		uint16_t nw = shm->cfg.nb_workers < SBX_MAX_WORKERS ? shm->cfg.nb_workers : SBX_MAX_WORKERS;
		const struct sbx_config *cfg = sbx_shm_cfg(shm);
		cJSON *c;

		*body = map_answer(m);
		for (uint16_t j = 0; j < cfg->nb_maps && j < SBX_MAX_MAPS; j++)
			if (cfg->maps[j].s.id == id) {
				cJSON *st = map_json(shm, j, nw);

				c = cJSON_DetachItemFromObjectCaseSensitive(st, "counters");
				if (c != NULL)
					cJSON_AddItemToObject(*body, "counters", c);
				cJSON_Delete(st);
			}
	}
	cJSON_Delete(doc);
	return code;
}

static unsigned int put_map(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	struct mgmt_verdict v;
	cJSON *in, *doc, *ok;
	char detail[160];
	long id;
	int idx = -1;

	if (!mgmt_change_begin(r, body, &code, map_body, &in, &doc))
		return code;
	if (need_map(r, doc, &idx, &id, body, &code) == NULL || mgmt_merge_put_map(in, doc, id, idx, &v) != 0) {
		if (idx >= 0) {
			code = v.code;
			*body = mgmt_error(v.code, v.field, "%s", v.msg);
		}
		cJSON_Delete(in);
		cJSON_Delete(doc);
		return code;
	}
	snprintf(detail, sizeof(detail), "PUT /api/v1/maps/%ld: map replaced (%d rules)", id,
		 cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(in, "rules")));
	ok = map_answer(in);
	cJSON_Delete(in);
	return mgmt_tables_change(r, body, doc, "config_change", detail, MHD_HTTP_OK, ok, NULL);
}

static unsigned int delete_map(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	cJSON *doc, *ok;
	char detail[160];
	long id;
	int idx = -1;

	if (mgmt_run_on(r, MGMT_LANE_CHANGES))
		return 0;
	doc = mgmt_running_doc(r, body, &code);
	if (doc == NULL || need_map(r, doc, &idx, &id, body, &code) == NULL) {
		cJSON_Delete(doc);
		return code;
	}
	cJSON_DeleteItemFromArray(mgmt_doc_array(doc, "maps"), idx);
	snprintf(detail, sizeof(detail), "DELETE /api/v1/maps/%ld: map deleted", id);
	ok = cJSON_CreateObject();
	cJSON_AddNumberToObject(ok, "deleted", (double)id);
	return mgmt_tables_change(r, body, doc, "config_change", detail, MHD_HTTP_OK, ok, NULL);
}

/* Query parameter @p name: absent -> @p dflt; a plain decimal up to @p max, else -1 (400). */
static long page_param(struct req *r, const char *name, long dflt, long max)
{
	const char *v = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
	long n;

	if (v == NULL)
		return dflt;
	n = mgmt_decimal_param(v, 9);
	return n >= 0 && n <= max ? n : -1;
}

/* The keys of a rule (docs/MAPS.md "Rule fields"): what field= may name. */
/* Whether value @p v (as given: a string or a number) contains @p text, case-insensitive. */
static bool value_has(const cJSON *v, const char *text)
{
	char num[32];

	if (cJSON_IsString(v))
		return strcasestr(v->valuestring, text) != NULL;
	if (!cJSON_IsNumber(v))
		return false;
	if (v->valuedouble == (double)(long long)v->valuedouble)
		snprintf(num, sizeof(num), "%lld", (long long)v->valuedouble);
	else
		snprintf(num, sizeof(num), "%g", v->valuedouble);
	return strcasestr(num, text) != NULL;
}

/* Whether rule @p x is kept by search=@p search (any field's value) and field=@p field&value=@p value. */
static bool rule_kept(const cJSON *x, const char *search, const char *field, const char *value)
{
	if (field != NULL && !value_has(cJSON_GetObjectItemCaseSensitive(x, field), value))
		return false;
	if (search != NULL) {
		const cJSON *f;

		cJSON_ArrayForEach(f, x)
			if (value_has(f, search))
				return true;
		return false;
	}
	return true;
}

/* One rule of the answer: its index, packets and bytes. */
struct rule_hit {
	const cJSON *rule;
	uint32_t index;
	struct sbx_rule_ctr c;
};

/* sort=hits: packets descending, then index */
static int by_hits(const void *a, const void *b)
{
	const struct rule_hit *x = a, *y = b;

	if (x->c.packets != y->c.packets)
		return x->c.packets < y->c.packets ? 1 : -1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static unsigned int get_rules(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	long off = page_param(r, "offset", 0, SBX_MAP_MAX_RULES), lim = page_param(r, "limit", RULES_PAGE_DEFAULT, RULES_PAGE_MAX);
	const char *sort = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "sort");
	const char *search = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "search");
	const char *field = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "field");
	const char *value = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "value");
	const struct sbx_shm *shm;
	const struct sbx_rule_ctrs *ctr = NULL;
	struct rule_hit *hits;
	const cJSON *rules;
	cJSON *doc, *o, *a;
	long id, total, matched = 0;
	int idx = -1, j = -1;
	bool known = field == NULL;

	for (size_t k = 0; field != NULL && k < SBX_MAP_RULE_KEYS; k++)
		known |= strcmp(field, sbx_map_rule_keys[k]) == 0;
	if (off < 0 || lim < 0 || (sort != NULL && strcmp(sort, "hits") != 0 && strcmp(sort, "index") != 0) || !known ||
	    (field != NULL) != (value != NULL)) {
		const char *f = off < 0 ? "offset" : lim < 0 ? "limit" : sort != NULL && strcmp(sort, "hits") != 0 &&
						strcmp(sort, "index") != 0 ? "sort" : !known || field == NULL ? "field" : "value";

		if (strcmp(f, "sort") == 0)
			*body = mgmt_error(MHD_HTTP_BAD_REQUEST, f, "sort: \"%.64s\" is not a sort (\"hits\": packets "
					   "descending, or \"index\": the rules' order)", sort);
		else if (strcmp(f, "field") == 0 && field != NULL) {
			char keys[200];

			*body = mgmt_error(MHD_HTTP_BAD_REQUEST, f, "field: \"%.64s\" is not a rule field (%s)", field,
					   sbx_map_rule_keys_text(keys, sizeof(keys)));
		}
		else if (strcmp(f, "field") == 0 || strcmp(f, "value") == 0)
			*body = mgmt_error(MHD_HTTP_BAD_REQUEST, f, "%s: missing (field and value go together)", f);
		else
			*body = mgmt_error(MHD_HTTP_BAD_REQUEST, f, "%s: %s", f,
					   off < 0 ? "a rule index 0..65536" : "a number of rules 0..10000");
		return MHD_HTTP_BAD_REQUEST;
	}
	shm = mgmt_need_shm(r, body, &code);
	doc = shm != NULL ? mgmt_running_doc(r, body, &code) : NULL;
	if (doc == NULL || need_map(r, doc, &idx, &id, body, &code) == NULL) {
		cJSON_Delete(doc);
		return code;
	}
	cJSON_Delete(doc);
	{
		const struct sbx_tables *t = sbx_shm_tables(shm); /* the active tables: their counters */

		for (uint16_t k = 0; k < t->cfg.nb_maps && k < SBX_MAX_MAPS; k++)
			if (t->cfg.maps[k].s.id == id) {
				j = k;
				ctr = t->maps.ctr;
			}
	}
	pthread_mutex_lock(&running_lock);
	rules = doc_rules(running_doc_locked(), id);
	if (!cJSON_IsArray(rules)) {
		pthread_mutex_unlock(&running_lock);
		*body = mgmt_error(MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "the primary's rule tables (%s) cannot be read",
				   SBX_MAPS_RUNNING_FILE);
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	total = cJSON_GetArraySize(rules);
	hits = malloc(sizeof(*hits) * (size_t)(total ? total : 1));
	if (hits == NULL) {
		pthread_mutex_unlock(&running_lock);
		*body = mgmt_error(MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "out of memory");
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	{
		const cJSON *x;
		uint32_t i = 0;

		cJSON_ArrayForEach(x, rules) {
			if (rule_kept(x, search, field, value)) {
				hits[matched].rule = x;
				hits[matched].index = i;
				/* the active tables' counts (0 for a rule past them: the file of a newer generation) */
				hits[matched++].c = j >= 0 ? sbx_rule_ctrs_total(ctr, (uint32_t)j, i) : (struct sbx_rule_ctr){ 0, 0 };
			}
			i++;
		}
	}
	if (sort != NULL && strcmp(sort, "hits") == 0)
		qsort(hits, (size_t)matched, sizeof(*hits), by_hits);
	*body = o = cJSON_CreateObject();
	NUM(o, "id", id);
	NUM(o, "total", total);
	NUM(o, "matched", matched);
	NUM(o, "offset", off);
	NUM(o, "limit", lim);
	cJSON_AddStringToObject(o, "sort", sort != NULL ? sort : "index");
	a = cJSON_AddArrayToObject(o, "rules");
	for (long i = off; i < matched && i < off + lim; i++) {
		cJSON *x = cJSON_Duplicate(hits[i].rule, true);

		NUM(x, "index", hits[i].index);
		NUM(x, "packets", hits[i].c.packets);
		NUM(x, "bytes", hits[i].c.bytes);
		cJSON_AddItemToArray(a, x);
	}
	pthread_mutex_unlock(&running_lock);
	free(hits);
	return code;
}

/* POST (@p add: the body is one rule, appended) or DELETE (rule {n}) of one rule of map {id}. */
static unsigned int change_rule(struct req *r, cJSON **body, bool add)
{
	unsigned int code = add ? MHD_HTTP_CREATED : MHD_HTTP_OK;
	cJSON *in = NULL, *doc, *m, *rules, *ok;
	char detail[160];
	long id, n = -1;
	int idx = -1;

	if (!mgmt_change_begin(r, body, &code, NULL, add ? &in : NULL, &doc))
		return code;
	m = need_map(r, doc, &idx, &id, body, &code);
	rules = m != NULL ? running_rules(id) : NULL;
	if (m != NULL && rules == NULL) {
		code = MHD_HTTP_SERVICE_UNAVAILABLE;
		*body = mgmt_error(code, NULL, "the primary's rule tables (%s) cannot be read", SBX_MAPS_RUNNING_FILE);
	}
	if (rules != NULL && !add) {
		n = mgmt_decimal_param(r->params[1], 5);
		if (n < 0 || n >= cJSON_GetArraySize(rules)) {
			code = MHD_HTTP_NOT_FOUND;
			*body = mgmt_error(code, NULL, "map %ld has no rule %s (%d rules)", id, r->params[1],
					   cJSON_GetArraySize(rules));
			cJSON_Delete(rules);
			rules = NULL;
		}
	}
	if (rules == NULL) {
		cJSON_Delete(in);
		cJSON_Delete(doc);
		return code;
	}
	ok = cJSON_CreateObject();
	NUM(ok, "id", id);
	if (add) {
		n = mgmt_merge_post_rule(m, rules, in);
		NUM(ok, "index", n);
	} else {
		cJSON_DeleteItemFromArray(rules, (int)n);
		NUM(ok, "deleted", n);
		cJSON_ReplaceItemInObjectCaseSensitive(m, "rules", rules);
	}
	NUM(ok, "rule_count", cJSON_GetArraySize(rules));
	snprintf(detail, sizeof(detail), "%s /api/v1/maps/%ld/rules: rule %ld %s", add ? "POST" : "DELETE", id, n,
		 add ? "added" : "deleted");
	return mgmt_tables_change(r, body, doc, "config_change", detail, code, ok, NULL);
}

static unsigned int post_rule(struct req *r, cJSON **body)
{
	return change_rule(r, body, true);
}

static unsigned int delete_rule(struct req *r, cJSON **body)
{
	return change_rule(r, body, false);
}

const struct mgmt_route mgmt_routes_maps[] = {
	{ "GET", "/api/v1/maps", get_maps },
	{ "POST", "/api/v1/maps", post_map },
	{ "GET", "/api/v1/maps/{id}", get_map },
	{ "PUT", "/api/v1/maps/{id}", put_map },
	{ "DELETE", "/api/v1/maps/{id}", delete_map },
	{ "GET", "/api/v1/maps/{id}/rules", get_rules },
	{ "POST", "/api/v1/maps/{id}/rules", post_rule },
	{ "DELETE", "/api/v1/maps/{id}/rules/{n}", delete_rule },
	{ NULL, NULL, NULL },
};
