/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Routes: mirrors, cross-connects and the whole config. Every change is made on the running config
 * document (the active runtime tables' json), validated as a whole (sbx_config_parse: 422 naming
 * the field), stored in SQLite and applied by the primary in one step (change(), one function a
 * step):
 *   validate   sbx_config_parse of the whole document                   (422, nothing stored)
 *   store      BEGIN IMMEDIATE; live sections + audit event             (locked database: 503)
 *   apply      the primary applies it (SBX_IPC_TABLES, ipc.h)            (refused: ROLLBACK, 422;
 *                                                                         not applied: ROLLBACK, 503)
 *   COMMIT, or compensate when it fails: the previous document is applied again (500)
 * Every writing route runs on the changes lane (mgmt_run_on, api.h): one change at a time, read,
 * modified, validated, stored and applied before the next one reads the running document, and
 * the HTTP thread (every GET) never waits for the primary.
 * The workers take the new tables between two bursts, without a stop (docs/RUNTIME_TABLES.md).
 * Only forwarding and mirrors can change at run time; PUT /config with other sections changed is
 * refused (422, field = the section).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>

#include "spanbox/config_maps.h"
#include "spanbox/config_store.h"
#include "spanbox/maprules.h"
#include "api.h"
#include "shmview.h"
#include "attach.h"
#include "db.h"
#include "status.h"
#include "store.h"
#include "validate.h"

#define REDACTED "<redacted>"
#define SBX_MAPS_APPLY_TIMEOUT_MS 30000 /* a change of maps: 65,536 rules built and live well within */
#define MAPS_WARNINGS_MAX 100           /* shadowed rules listed in an answer (all are counted) */

/* The running config document (active tables), or NULL with a 503/500 set; the memzone it came
 * from in *@p from when not NULL. */
static cJSON *running_doc_shm(struct req *r, cJSON **body, unsigned int *code, const struct sbx_shm **from)
{
	const struct sbx_shm *shm = mgmt_need_shm(r, body, code);
	cJSON *doc;

	if (from != NULL)
		*from = shm;
	if (shm == NULL)
		return NULL;
	doc = cJSON_Parse(sbx_shm_tables(shm)->json);
	if (doc == NULL) {
		*body = mgmt_error(MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "running config is not JSON");
		*code = MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
	return doc;
}

static cJSON *running_doc(struct req *r, cJSON **body, unsigned int *code)
{
	return running_doc_shm(r, body, code, NULL);
}

/* The document's array @p key (created when absent; a non-array is replaced). */
static cJSON *doc_array(cJSON *doc, const char *key)
{
	return mgmt_doc_array(doc, key);
}

static cJSON *doc_xconnects(cJSON *doc)
{
	return mgmt_doc_xconnects(doc);
}

/* The error body of a refusal of validate.c. */
static cJSON *verdict_error(const struct mgmt_verdict *v)
{
	return mgmt_error(v->code, v->field, "%s", v->msg);
}

/* How long mgmt waits for an apply: filter compilation + one grace period (at most 2 s) and the
 * previous one; test hook SBX_TEST_APPLY_TIMEOUT_MS. */
static unsigned int apply_timeout_ms(void)
{
	const char *v = getenv("SBX_TEST_APPLY_TIMEOUT_MS");
	unsigned long ms = v ? strtoul(v, NULL, 10) : 0;

	return ms > 0 && ms < 600000 ? (unsigned int)ms : SBX_TABLES_APPLY_TIMEOUT_MS;
}

static bool staging_cas(struct sbx_tables_staging *st, uint32_t from, uint32_t to)
{
	return __atomic_compare_exchange_n(&st->state, &from, to, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* Wait up to @p ms for the staging area to be FREE. A PENDING one is left by a mgmt that died
 * after it wrote a request (this process has none in flight): taken back. */
static bool staging_wait_free(struct sbx_tables_staging *st, unsigned int ms)
{
	uint64_t deadline = sbx_now_ns() + (uint64_t)ms * 1000000ULL;
	struct timespec nap = { 0, 1000000 };

	for (;;) {
		uint32_t s = __atomic_load_n(&st->state, __ATOMIC_ACQUIRE);

		if (s == SBX_STAGING_FREE || (s == SBX_STAGING_PENDING && staging_cas(st, s, SBX_STAGING_FREE)))
			return true;
		if (sbx_now_ns() > deadline)
			return false;
		nanosleep(&nap, NULL);
	}
}

/* The result of request @p id once the primary answered it in the staging area. */
static int staged_result(const struct sbx_tables_staging *st, uint64_t id, char *why, size_t len)
{
	uint32_t result = st->done_id == id ? st->result : SBX_TABLES_NONE;

	if (result == SBX_TABLES_APPLIED)
		return 0;
	snprintf(why, len, "%s", st->error[0] ? st->error : sbx_tables_result_name(result));
	return result == SBX_TABLES_REFUSED ? -1 : -2;
}

/*
 * Ask the primary to apply @p text (the state machine of include/spanbox/ipc.h): every answer is
 * true. @return 0 applied, -1 refused (422, @p why), -2 not applied (503: busy, or no answer in
 * time, and then the primary will not apply it later), -3 unknown (the primary decided to
 * publish it and did not finish in time: it may be live).
 */
/* The rule tables a change sends (maps_take_rules): [{"id", "digest", "count", "rules"}]; NULL none. */
static const cJSON *staged_tables;

/* Write the rules of @p tables for request @p id into the runtime directory's SBX_MAPS_STAGING_FILE
 * (config_maps.h; tmp + rename), where the primary's tables thread reads them. @return 0 or -1. */
static int write_maps_staging(const cJSON *tables, uint64_t id, char *why, size_t len)
{
	char path[512], tmp[520];
	const cJSON *t;
	FILE *f;
	int k = 0;

	snprintf(path, sizeof(path), "%s/%s", rte_eal_get_runtime_dir(), SBX_MAPS_STAGING_FILE);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f == NULL) {
		snprintf(why, len, "maps: cannot write %s", tmp);
		return -1;
	}
	fprintf(f, "{\"request_id\":%llu,\"maps\":[", (unsigned long long)id);
	cJSON_ArrayForEach(t, tables) {
		char *rules = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(t, "rules"));

		fprintf(f, "%s{\"id\":%d,\"rules\":%s}", k++ ? "," : "",
			cJSON_GetObjectItemCaseSensitive(t, "id")->valueint, rules ? rules : "[]");
		free(rules);
	}
	fputs("]}\n", f);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		snprintf(why, len, "maps: cannot write %s", path);
		return -1;
	}
	return 0;
}

static int primary_apply(const struct sbx_shm *cshm, const char *text, const char *client, char *why, size_t len)
{
	struct sbx_shm *shm = (struct sbx_shm *)cshm; /* mgmt writes only the staging area */
	struct sbx_tables_staging *st = &shm->staging;
	/* new rule tables: the primary builds their classifiers first (seconds for 65,536 rules) */
	unsigned int timeout = staged_tables != NULL && apply_timeout_ms() < SBX_MAPS_APPLY_TIMEOUT_MS
				       ? SBX_MAPS_APPLY_TIMEOUT_MS : apply_timeout_ms();
	struct sbx_tables_req req = { .version = SBX_IPC_VERSION, .verb = SBX_TABLES_APPLY };
	struct sbx_tables_reply rep;
	size_t n = strlen(text), rlen = sizeof(rep);
	uint64_t deadline;

	if (n >= sizeof(st->json)) {
		snprintf(why, len, "config document longer than %zu bytes", sizeof(st->json) - 1);
		return -1;
	}
	if (!staging_wait_free(st, timeout)) {
		snprintf(why, len, "the primary is still working on an earlier change");
		return -2;
	}
	memcpy(st->json, text, n + 1);
	st->len = (uint32_t)n;
	snprintf(st->client, sizeof(st->client), "%s", client);
	req.request_id = st->request_id + 1;
	if (staged_tables != NULL && write_maps_staging(staged_tables, req.request_id, why, len) != 0)
		return -2;
	__atomic_store_n(&st->request_id, req.request_id, __ATOMIC_RELEASE);
	__atomic_store_n(&st->state, SBX_STAGING_PENDING, __ATOMIC_RELEASE);
	if (mgmt_request(SBX_IPC_TABLES, &req, sizeof(req), timeout, &rep, &rlen) == 0 && rlen == sizeof(rep) &&
	    rep.version == SBX_IPC_VERSION && rep.request_id == req.request_id &&
	    (rep.result == SBX_TABLES_APPLIED || rep.result == SBX_TABLES_REFUSED || rep.result == SBX_TABLES_BUSY))
		return staged_result(st, req.request_id, why, len);
	/* no (usable) answer: settle what happened, so that the answer is true */
	if (staging_cas(st, SBX_STAGING_PENDING, SBX_STAGING_FREE) ||
	    staging_cas(st, SBX_STAGING_WORKING, SBX_STAGING_ABANDONED)) {
		snprintf(why, len, "no answer from the primary within %u ms", timeout);
		return -2; /* the primary never publishes it now */
	}
	/* APPLYING or FREE: the primary decided; wait for it to finish publishing */
	deadline = sbx_now_ns() + 10ULL * 1000000000ULL;
	while (__atomic_load_n(&st->state, __ATOMIC_ACQUIRE) != SBX_STAGING_FREE && sbx_now_ns() < deadline &&
	       kill(shm->primary_pid, 0) == 0) {
		struct timespec nap = { 0, 1000000 };

		nanosleep(&nap, NULL);
	}
	if (__atomic_load_n(&st->state, __ATOMIC_ACQUIRE) == SBX_STAGING_FREE)
		return staged_result(st, req.request_id, why, len);
	snprintf(why, len, "the primary decided to apply the change but did not finish: it may be live"
		 " (GET /api/v1/config shows what runs)");
	return -3;
}

/* The forwarding and mirrors sections of the config file the primary runs, as read once at
 * attach (mgmt_tables_attach); NULL when it could not be read. Read by the changes lane only. */
static cJSON *file_sections;

/* The document of the config file @p path, NULL when unreadable. */
static cJSON *file_doc(const char *path)
{
	FILE *f = path[0] ? fopen(path, "r") : NULL;
	char *text;
	cJSON *doc = NULL;
	size_t n;

	if (f == NULL)
		return NULL;
	/* up to SBX_CONFIG_FILE_MAX: its maps' rules may take more than the memzone's document */
	text = calloc(1, SBX_CONFIG_FILE_MAX + 1);
	if (text != NULL) {
		n = fread(text, 1, SBX_CONFIG_FILE_MAX, f);
		text[n] = '\0';
		doc = cJSON_Parse(text);
	}
	free(text);
	fclose(f);
	return doc;
}

void mgmt_tables_attach(const struct sbx_shm *shm)
{
	cJSON *doc = shm != NULL ? file_doc(shm->config_path) : NULL;
	char *live = doc != NULL ? sbx_live_extract(doc) : NULL;

	cJSON_Delete(file_sections);
	file_sections = live != NULL ? cJSON_Parse(live) : NULL; /* the file's live sections, as stored */
	free(live);
	cJSON_Delete(doc);
}

/* true when the live sections @p live (sbx_live_extract) are those of the running config file. */
static bool is_file_content(const char *live)
{
	cJSON *l = file_sections != NULL ? cJSON_Parse(live) : NULL;
	bool same = l != NULL && cJSON_Compare(file_sections, l, true);

	cJSON_Delete(l);
	return same;
}

/*
 * A validation error of the whole document, said in the terms of the request: for a request on
 * one session (@p prefix "mirrors[3]."), "mirrors[3].filter: ..." becomes "filter: ...".
 */
static cJSON *validation_error(char *err, const char *prefix)
{
	struct mgmt_verdict v;

	mgmt_validation_verdict(err, prefix, &v);
	return verdict_error(&v);
}

/* A change on its way through its steps (change()). */
struct change {
	struct req *r;
	const struct sbx_shm *shm;
	char *text; /**< the whole document, printed: what the primary applies */
	char *live; /**< the live sections config_store keeps; NULL: back to the file's own */
	char *old;  /**< the running document before the change, to put back if the commit fails */
	cJSON *tables;   /**< the rule tables the change sends ([{"id","digest","count","rules"}]), NULL none */
	cJSON *warnings; /**< shadowed rules of those tables (strings), NULL none */
	unsigned int shadowed; /**< how many */
};

/*
 * Maps (issue #27): each map of @p doc whose "rules" is an array is parsed (sbx_map_rules_parse,
 * the path "maps[i].rules"), replaced by its summary {"count","digest"} (what the memzone's
 * document and config_store keep) and its table put into c->tables for the primary (staging file)
 * and the store (map_rules); its shadowed rules into c->warnings. @return 0, or 422 with *body.
 */
static unsigned int maps_take_rules(struct change *c, cJSON *doc, cJSON **body)
{
	cJSON *m;
	int i = 0;

	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(doc, "maps")) {
		cJSON *rules = cJSON_GetObjectItemCaseSensitive(m, "rules"), *t, *sum;
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
		struct sbx_map_rules r = { 0 };
		struct sbx_map_shadow *sh;
		char path[40], err[600], hex[20];
		size_t ns;

		snprintf(path, sizeof(path), "maps[%d].rules", i++);
		if (!cJSON_IsArray(rules))
			continue; /* a summary (the running map's) or none: sbx_config_parse judges it */
		if (sbx_map_rules_parse(rules, path, &r, err, sizeof(err)) != 0) {
			*body = validation_error(err, NULL);
			return MHD_HTTP_UNPROCESSABLE_CONTENT;
		}
		if (!cJSON_IsNumber(id)) { /* sbx_config_parse names it */
			sbx_map_rules_free(&r);
			continue;
		}
		sh = r.n ? malloc(sizeof(*sh) * r.n) : NULL;
		ns = sh != NULL ? sbx_map_rules_shadowed(&r, sh, r.n) : 0;
		for (size_t k = 0; k < ns; k++) {
			if (c->warnings == NULL)
				c->warnings = cJSON_CreateArray();
			if (k < MAPS_WARNINGS_MAX) {
				char w[120];

				snprintf(w, sizeof(w), "%s[%u]: never decides: rules[%u] before it covers it", path, sh[k].rule,
					 sh[k].by);
				cJSON_AddItemToArray(c->warnings, cJSON_CreateString(w));
			}
		}
		c->shadowed += (unsigned int)ns;
		free(sh);
		snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)sbx_config_maps_digest(&r));
		if (c->tables == NULL)
			c->tables = cJSON_CreateArray();
		t = cJSON_CreateObject();
		cJSON_AddNumberToObject(t, "id", id->valuedouble);
		cJSON_AddStringToObject(t, "digest", hex);
		cJSON_AddNumberToObject(t, "count", r.n);
		sum = cJSON_CreateObject();
		cJSON_AddNumberToObject(sum, "count", r.n);
		cJSON_AddStringToObject(sum, "digest", hex);
		sbx_map_rules_free(&r);
		cJSON_AddItemToObject(t, "rules", cJSON_DetachItemViaPointer(m, rules));
		cJSON_AddItemToObject(m, "rules", sum);
		cJSON_AddItemToArray(c->tables, t);
	}
	return 0;
}

/* Step 1: validate @p doc as a whole (sbx_config_parse) and print what the next steps need.
 * @return 0, or the HTTP status with *body set. */
static unsigned int change_validate(struct change *c, cJSON *doc, const char *field_prefix, cJSON **body)
{
	struct sbx_config *tmp;
	unsigned int code = maps_take_rules(c, doc, body);
	char err[600];

	if (code != 0)
		return code;
	tmp = malloc(sizeof(*tmp));
	c->text = cJSON_Print(doc);
	c->live = sbx_live_extract(doc); /* what config_store keeps */
	if (tmp == NULL || c->text == NULL || c->live == NULL) {
		code = MHD_HTTP_INTERNAL_SERVER_ERROR;
		*body = mgmt_error(code, NULL, "out of memory");
	} else if (sbx_config_parse(c->text, tmp, err, sizeof(err)) != 0) {
		code = MHD_HTTP_UNPROCESSABLE_CONTENT;
		*body = validation_error(err, field_prefix);
	} else if (is_file_content(c->live)) {
		/* the file's own sections: nothing is stored for it any more (the file wins again) */
		free(c->live);
		c->live = NULL;
	}
	free(tmp);
	return code;
}

/* Step 2: BEGIN IMMEDIATE; store the live sections and the audit event (store.c). The
 * transaction stays open for step 3. @return 0, or 503 (locked)/500 with *body set. */
static unsigned int change_store(struct change *c, const char *kind, const char *detail, cJSON **body)
{
	unsigned int code;
	char why[600];
	int rc = mgmt_store_begin(c->r->ctx->db, c->shm->config_path, c->live, c->r->who,
				  c->live ? kind : "config_reset", detail, why, sizeof(why));

	if (rc == 0 && mgmt_store_map_rules(c->shm->config_path, c->live, c->tables, why, sizeof(why)) != 0) {
		mgmt_store_rollback();
		rc = -1;
	}
	if (rc == 0)
		return 0;
	code = rc == -2 ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_INTERNAL_SERVER_ERROR;
	*body = mgmt_error(code, NULL, "%s: nothing was changed", why);
	return code;
}

/* Step 3: the primary applies it (primary_apply); refused or not applied: ROLLBACK. @return 0, or
 * 422 (refused, naming the field), 503 (not applied, or maybe live: said so) with *body set. */
static unsigned int change_apply(struct change *c, cJSON **body)
{
	unsigned int code;
	char why[600];
	int rc;

	c->old = strdup(sbx_shm_tables(c->shm)->json);
	__atomic_add_fetch(c->r->ctx->changes_in_flight, 1, __ATOMIC_ACQ_REL);
	staged_tables = c->tables;
	rc = primary_apply(c->shm, c->text, c->r->client, why, sizeof(why));
	staged_tables = NULL;
	__atomic_sub_fetch(c->r->ctx->changes_in_flight, 1, __ATOMIC_ACQ_REL);
	if (rc == 0)
		return 0;
	mgmt_store_rollback();
	if (rc == -1) {
		code = MHD_HTTP_UNPROCESSABLE_CONTENT;
		*body = mgmt_error(code, c->shm->staging.error_field[0] ? c->shm->staging.error_field : NULL, "%s", why);
	} else if (rc == -3) {
		code = MHD_HTTP_SERVICE_UNAVAILABLE;
		*body = mgmt_error(code, NULL, "%s; it was not stored", why);
	} else {
		code = MHD_HTTP_SERVICE_UNAVAILABLE;
		*body = mgmt_error(code, NULL, "%s: nothing was changed", why);
	}
	return code;
}

/* Step 4, when the COMMIT failed: applied but not stored: put the previous tables back, so that
 * store and run agree. */
static void change_compensate(struct change *c)
{
	char why[600];

	if (c->old != NULL)
		primary_apply(c->shm, c->old, c->r->client, why, sizeof(why));
}

/*
 * Validate, store and apply @p doc (consumed), then commit (or compensate). Runs on the changes
 * lane (api.h), one change at a time. On success *body = @p ok_body (consumed) and the answer is
 * @p ok_code; on failure @p ok_body is freed and *body is the error.
 */
static unsigned int change(struct req *r, cJSON **body, cJSON *doc, const char *kind, const char *detail,
			   unsigned int ok_code, cJSON *ok_body, const char *field_prefix)
{
	struct change c = { .r = r };
	unsigned int code;
	char err[600];

	*body = NULL;
	code = MHD_HTTP_OK;
	c.shm = mgmt_need_shm(r, body, &code);
	if (c.shm == NULL)
		goto out;
	code = change_validate(&c, doc, field_prefix, body);
	if (code == 0)
		code = change_store(&c, kind, detail, body);
	if (code == 0)
		code = change_apply(&c, body);
	if (code == 0 && mgmt_store_commit(err, sizeof(err)) != 0) {
		change_compensate(&c);
		code = MHD_HTTP_INTERNAL_SERVER_ERROR;
		*body = mgmt_error(code, NULL, "%s: the change was undone", err);
	}
	if (code == 0) {
		code = ok_code;
		if (c.warnings != NULL && cJSON_IsObject(ok_body)) { /* shadowed rules: said, not refused */
			cJSON_AddItemToObject(ok_body, "warnings", c.warnings);
			cJSON_AddNumberToObject(ok_body, "shadowed_rules", c.shadowed);
			c.warnings = NULL;
		}
		*body = ok_body;
		ok_body = NULL;
	}
out:
	cJSON_Delete(c.tables);
	cJSON_Delete(c.warnings);
	free(c.old);
	free(c.text);
	free(c.live);
	cJSON_Delete(ok_body);
	cJSON_Delete(doc);
	return code;
}

/* The session @p id of @p doc's mirrors (index in *idx), or NULL. */
static cJSON *find_mirror(cJSON *doc, long id, int *idx)
{
	return mgmt_find_mirror(doc, id, idx);
}

/* Path parameter {id} of a mirror: 1..1023, else -1 (404: no such session can exist). */
/* The session object as stored, with the live counters of the running session @p id added. */
static cJSON *mirror_out(const struct sbx_shm *shm, const cJSON *m, long id)
{
	cJSON *o = cJSON_Duplicate(m, true);
	const struct sbx_config *cfg = sbx_shm_cfg(shm);
	char name[32];
	uint16_t i;

	if (cJSON_GetObjectItemCaseSensitive(o, "name") == NULL && id > 0) { /* the default, as /status shows */
		snprintf(name, sizeof(name), "session-%ld", id);
		cJSON_AddStringToObject(o, "name", name);
	}

	for (i = 0; i < mgmt_nb_mirrors(shm); i++) {
		if (cfg->mirrors[i].id == id) {
			cJSON *st = mgmt_mirror_json(shm, i);
			cJSON *c = cJSON_DetachItemFromObjectCaseSensitive(st, "counters");

			if (c != NULL)
				cJSON_AddItemToObject(o, "counters", c);
			cJSON_Delete(st);
			break;
		}
	}
	return o;
}

static unsigned int get_mirrors(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm;
	cJSON *doc = running_doc_shm(r, body, &code, &shm), *m;

	if (doc == NULL)
		return code;
	*body = cJSON_CreateArray();
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(doc, "mirrors")) {
		cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "id");

		if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "destination"), "recorder"))
			continue; /* a capture: GET /api/v1/captures */

		cJSON_AddItemToArray(*body, mirror_out(shm, m, cJSON_IsNumber(v) ? (long)v->valuedouble : -1));
	}
	cJSON_Delete(doc);
	return code;
}

static unsigned int get_mirror(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	long id = mgmt_mirror_id_param(r->params[0]);
	const struct sbx_shm *shm;
	cJSON *doc = running_doc_shm(r, body, &code, &shm), *m;

	if (doc == NULL)
		return code;
	m = id > 0 ? find_mirror(doc, id, NULL) : NULL;
	if (m == NULL) {
		code = MHD_HTTP_NOT_FOUND;
		*body = mgmt_error(code, NULL, "no mirror session %s", r->params[0]);
	} else {
		*body = mirror_out(shm, m, id);
	}
	cJSON_Delete(doc);
	return code;
}

int mgmt_tables_evict_ended_captures(const struct sbx_shm *shm, cJSON *doc, char *ids, size_t len)
{
	cJSON *arr = mgmt_doc_array(doc, "mirrors");
	size_t off = 0;
	int n = 0;

	ids[0] = '\0';
	while (cJSON_GetArraySize(arr) >= SBX_MAX_MIRRORS) {
		const struct sbx_capture_shm *cs, *oldest = NULL;
		int i = 0, at = -1;
		cJSON *it;

		cJSON_ArrayForEach(it, arr) {
			const cJSON *idv = cJSON_GetObjectItemCaseSensitive(it, "id");

			cs = cJSON_IsNumber(idv) && mgmt_capture_session(shm, (long)idv->valuedouble, NULL) != NULL
				     ? mgmt_capture_slot(shm, (long)idv->valuedouble) : NULL;
			if (cs != NULL && __atomic_load_n(&cs->state, __ATOMIC_ACQUIRE) == SBX_CAP_ENDED &&
			    (oldest == NULL || cs->end_ns < oldest->end_ns)) {
				oldest = cs;
				at = i;
			}
			i++;
		}
		if (oldest == NULL)
			break;
		if (off < len)
			off += (size_t)snprintf(ids + off, len - off, " %u", oldest->id);
		cJSON_DeleteItemFromArray(arr, at);
		n++;
	}
	return n;
}

/* POST /mirrors: add a session; "id" optional (the lowest free one is given). 201, 409, 422. */
static unsigned int post_mirror(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_CREATED;
	const struct sbx_shm *shm;
	cJSON *in, *doc;
	char detail[160], prefix[32], evicted[64];
	struct mgmt_verdict v;
	long id;

	if (mgmt_run_on(r, MGMT_LANE_CHANGES)) /* one change at a time; it waits for the primary */
		return 0;
	in = mgmt_parse_body(r, body, &code);
	if (in == NULL)
		return code;
	if (mgmt_check_post_mirror_body(in, &v) != 0) {
		cJSON_Delete(in);
		*body = verdict_error(&v);
		return v.code;
	}
	shm = mgmt_need_shm(r, body, &code);
	doc = shm != NULL ? running_doc(r, body, &code) : NULL;
	if (doc == NULL) {
		cJSON_Delete(in);
		return code;
	}
	mgmt_tables_evict_ended_captures(shm, doc, evicted, sizeof(evicted));
	if (mgmt_merge_post_mirror(in, doc, &id, prefix, sizeof(prefix), &v) != 0) {
		*body = verdict_error(&v);
		cJSON_Delete(in);
		cJSON_Delete(doc);
		return v.code;
	}
	snprintf(detail, sizeof(detail), "POST /api/v1/mirrors: session %ld added%s%.80s", id,
		 evicted[0] ? "; ended captures out of the sessions:" : "", evicted);
	return change(r, body, doc, "config_change", detail, MHD_HTTP_CREATED, in, prefix);
}

/* PUT /mirrors/{id}: replace a session (the body's id, when given, must be {id}). */
static unsigned int put_mirror(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	long id = mgmt_mirror_id_param(r->params[0]);
	cJSON *in, *doc;
	char detail[160], prefix[32];
	struct mgmt_verdict v;
	int idx = -1;

	if (mgmt_run_on(r, MGMT_LANE_CHANGES)) /* one change at a time; it waits for the primary */
		return 0;
	doc = running_doc(r, body, &code);
	if (doc == NULL)
		return code;
	if (id < 0 || find_mirror(doc, id, &idx) == NULL) {
		cJSON_Delete(doc);
		*body = mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "no mirror session %s", r->params[0]);
		return MHD_HTTP_NOT_FOUND;
	}
	in = mgmt_parse_body(r, body, &code);
	if (in == NULL) {
		cJSON_Delete(doc);
		return code;
	}
	if (mgmt_merge_put_mirror(in, doc, id, idx, prefix, sizeof(prefix), &v) != 0) {
		*body = verdict_error(&v);
		cJSON_Delete(in);
		cJSON_Delete(doc);
		return v.code;
	}
	snprintf(detail, sizeof(detail), "PUT /api/v1/mirrors/%ld: session replaced", id);
	return change(r, body, doc, "config_change", detail, MHD_HTTP_OK, in, prefix);
}

static unsigned int delete_mirror(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	long id = mgmt_mirror_id_param(r->params[0]);
	cJSON *doc, *ok;
	char detail[160];
	int idx = -1;

	if (mgmt_run_on(r, MGMT_LANE_CHANGES)) /* one change at a time; it waits for the primary */
		return 0;
	doc = running_doc(r, body, &code);
	if (doc == NULL)
		return code;
	if (id < 0 || find_mirror(doc, id, &idx) == NULL) {
		cJSON_Delete(doc);
		*body = mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "no mirror session %s", r->params[0]);
		return MHD_HTTP_NOT_FOUND;
	}
	cJSON_DeleteItemFromArray(doc_array(doc, "mirrors"), idx);
	snprintf(detail, sizeof(detail), "DELETE /api/v1/mirrors/%ld: session deleted", id);
	ok = cJSON_CreateObject();
	cJSON_AddNumberToObject(ok, "deleted", (double)id);
	return change(r, body, doc, "config_change", detail, MHD_HTTP_OK, ok, NULL);
}

/* "a-b" of a cross-connect pair, or "" when @p pair is not two strings. */
static void xc_id(const cJSON *pair, char *buf, size_t len)
{
	const cJSON *a = cJSON_GetArrayItem(pair, 0), *b = cJSON_GetArrayItem(pair, 1);

	if (cJSON_IsArray(pair) && cJSON_IsString(a) && cJSON_IsString(b))
		snprintf(buf, len, "%s-%s", a->valuestring, b->valuestring);
	else
		buf[0] = '\0';
}

static cJSON *xc_out(const cJSON *pair)
{
	cJSON *o = cJSON_CreateObject();
	char id[140];

	xc_id(pair, id, sizeof(id));
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddItemToObject(o, "ports", cJSON_Duplicate(pair, true));
	return o;
}

static unsigned int get_xconnects(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	cJSON *doc = running_doc(r, body, &code), *pair;

	if (doc == NULL)
		return code;
	*body = cJSON_CreateArray();
	cJSON_ArrayForEach(pair, doc_xconnects(doc))
		cJSON_AddItemToArray(*body, xc_out(pair));
	cJSON_Delete(doc);
	return code;
}

/* POST /forwarding/xconnects {"ports": ["a", "b"]}: 201 {"id": "a-b", "ports": [...]}. */
static unsigned int post_xconnect(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_CREATED;
	cJSON *in, *doc;
	const cJSON *ports;
	char detail[200], id[140];
	struct mgmt_verdict v;

	if (mgmt_run_on(r, MGMT_LANE_CHANGES)) /* one change at a time; it waits for the primary */
		return 0;
	in = mgmt_parse_body(r, body, &code);
	if (in == NULL)
		return code;
	ports = mgmt_check_xconnect_body(in, &v);
	if (ports == NULL) {
		*body = verdict_error(&v);
		cJSON_Delete(in);
		return v.code;
	}
	doc = running_doc(r, body, &code);
	if (doc == NULL) {
		cJSON_Delete(in);
		return code;
	}
	cJSON_AddItemToArray(doc_xconnects(doc), cJSON_Duplicate(ports, true));
	xc_id(ports, id, sizeof(id));
	snprintf(detail, sizeof(detail), "POST /api/v1/forwarding/xconnects: %s added", id);
	code = change(r, body, doc, "config_change", detail, MHD_HTTP_CREATED, xc_out(ports), NULL);
	cJSON_Delete(in);
	return code;
}

static unsigned int delete_xconnect(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	cJSON *doc, *pair, *ok;
	char detail[200], id[140];
	int i = 0, idx = -1;

	if (mgmt_run_on(r, MGMT_LANE_CHANGES)) /* one change at a time; it waits for the primary */
		return 0;
	doc = running_doc(r, body, &code);
	if (doc == NULL)
		return code;
	cJSON_ArrayForEach(pair, doc_xconnects(doc)) {
		xc_id(pair, id, sizeof(id));
		if (strcmp(id, r->params[0]) == 0)
			idx = i;
		i++;
	}
	if (idx < 0) {
		cJSON_Delete(doc);
		*body = mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "no cross-connect %s", r->params[0]);
		return MHD_HTTP_NOT_FOUND;
	}
	cJSON_DeleteItemFromArray(doc_xconnects(doc), idx);
	snprintf(detail, sizeof(detail), "DELETE /api/v1/forwarding/xconnects/%s", r->params[0]);
	ok = cJSON_CreateObject();
	cJSON_AddStringToObject(ok, "deleted", r->params[0]);
	return change(r, body, doc, "config_change", detail, MHD_HTTP_OK, ok, NULL);
}

/* GET /config: the running document, mgmt.token redacted (GET needs no token). */
static unsigned int get_config(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	cJSON *doc = running_doc(r, body, &code), *mg;

	if (doc == NULL)
		return code;
	mg = cJSON_GetObjectItemCaseSensitive(doc, "mgmt");
	if (cJSON_IsObject(mg) && cJSON_GetObjectItemCaseSensitive(mg, "token") != NULL)
		cJSON_ReplaceItemInObjectCaseSensitive(mg, "token", cJSON_CreateString(REDACTED));
	*body = doc;
	return code;
}

/* PUT /config: replace the whole document; only forwarding, mirrors, tool_groups and ports[].ingress may differ. */
static unsigned int put_config(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	cJSON *in, *run;
	struct mgmt_verdict v;

	if (mgmt_run_on(r, MGMT_LANE_CHANGES)) /* one change at a time; it waits for the primary */
		return 0;
	in = mgmt_parse_body(r, body, &code);
	if (in == NULL)
		return code;
	if (mgmt_check_put_config_body(in, &v) != 0) {
		cJSON_Delete(in);
		*body = verdict_error(&v);
		return v.code;
	}
	/* a document from GET /config carries the redacted token: take the running one */
	if (mgmt_config_token_redacted(in, REDACTED)) {
		run = running_doc(r, body, &code);
		if (run == NULL) {
			cJSON_Delete(in);
			return code;
		}
		mgmt_config_take_token(in, run);
		cJSON_Delete(run);
	}
	code = change(r, body, cJSON_Duplicate(in, true), "config_change", "PUT /api/v1/config: whole config replaced",
		      MHD_HTTP_OK, NULL, NULL);
	cJSON_Delete(in);
	if (code == MHD_HTTP_OK)
		return get_config(r, body);
	return code;
}

/* The running document and the index of port {name} in it; NULL with *body set (404) when none. */
static cJSON *doc_with_port(struct req *r, cJSON **body, unsigned int *code, int *idx)
{
	cJSON *doc = running_doc(r, body, code);

	if (doc == NULL)
		return NULL;
	*idx = mgmt_doc_port(doc, r->params[0]);
	if (*idx < 0) {
		cJSON_Delete(doc);
		*code = MHD_HTTP_NOT_FOUND;
		*body = mgmt_error(*code, NULL, "no port %s", r->params[0]);
		return NULL;
	}
	return doc;
}

/* GET /ports/{name}/ingress: {"port": name, "ingress": the object as running, or null}. */
static unsigned int get_ingress(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	int idx;
	cJSON *doc = doc_with_port(r, body, &code, &idx), *o, *ing;

	if (doc == NULL)
		return code;
	ing = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "ports"), idx),
					       "ingress");
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "port", r->params[0]);
	cJSON_AddItemToObject(o, "ingress", ing ? cJSON_Duplicate(ing, true) : cJSON_CreateNull());
	cJSON_Delete(doc);
	*body = o;
	return code;
}

/* PUT /ports/{name}/ingress: the port's ingress object replaced (live, stored); DELETE: removed. */
static unsigned int put_ingress(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	char detail[160], prefix[32];
	struct mgmt_verdict v;
	cJSON *doc, *in;
	int idx;

	if (mgmt_run_on(r, MGMT_LANE_CHANGES)) /* one change at a time; it waits for the primary */
		return 0;
	doc = doc_with_port(r, body, &code, &idx);
	if (doc == NULL)
		return code;
	in = mgmt_parse_body(r, body, &code);
	if (in == NULL) {
		cJSON_Delete(doc);
		return code;
	}
	if (mgmt_merge_put_ingress(in, doc, idx, prefix, sizeof(prefix), &v) != 0) {
		*body = verdict_error(&v);
		cJSON_Delete(in);
		cJSON_Delete(doc);
		return v.code;
	}
	snprintf(detail, sizeof(detail), "PUT /api/v1/ports/%s/ingress: ingress replaced", r->params[0]);
	return change(r, body, doc, "config_change", detail, MHD_HTTP_OK, in, prefix);
}

static unsigned int delete_ingress(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	char detail[160];
	cJSON *doc, *ok;
	int idx;

	if (mgmt_run_on(r, MGMT_LANE_CHANGES))
		return 0;
	doc = doc_with_port(r, body, &code, &idx);
	if (doc == NULL)
		return code;
	cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "ports"), idx),
						"ingress");
	snprintf(detail, sizeof(detail), "DELETE /api/v1/ports/%s/ingress: ingress removed", r->params[0]);
	ok = cJSON_CreateObject();
	cJSON_AddStringToObject(ok, "port", r->params[0]);
	cJSON_AddNullToObject(ok, "ingress");
	return change(r, body, doc, "config_change", detail, MHD_HTTP_OK, ok, NULL);
}

/* GET /tool_groups: {"tool_groups": [every group as /status shows it, with its config keys]}. */
static unsigned int get_groups(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = mgmt_need_shm(r, body, &code);
	cJSON *a;
	uint16_t i;

	if (shm == NULL)
		return code;
	*body = cJSON_CreateObject();
	a = cJSON_AddArrayToObject(*body, "tool_groups");
	for (i = 0; i < mgmt_nb_tool_groups(shm); i++)
		cJSON_AddItemToArray(a, mgmt_tool_group_json(shm, i, true));
	return code;
}

static unsigned int get_group(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = mgmt_need_shm(r, body, &code);
	uint16_t i;

	if (shm == NULL)
		return code;
	for (i = 0; i < mgmt_nb_tool_groups(shm); i++) {
		if (strncmp(sbx_shm_cfg(shm)->tool_groups[i].name, r->params[0], SBX_NAME_LEN) == 0) {
			*body = mgmt_tool_group_json(shm, i, true);
			return code;
		}
	}
	*body = mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "no tool group %s", r->params[0]);
	return MHD_HTTP_NOT_FOUND;
}

/* A refusal of validate.c of a tool group PUT: its error body; @p in and @p doc freed. */
static unsigned int group_refused(cJSON **body, const struct mgmt_verdict *v, cJSON *in, cJSON *doc)
{
	*body = verdict_error(v);
	cJSON_Delete(in);
	cJSON_Delete(doc);
	return v->code;
}

/* PUT /tool_groups: every group replaced ({"tool_groups": [...]}). */
static unsigned int put_groups(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	struct mgmt_verdict v;
	cJSON *in, *doc, *ok;

	if (!mgmt_change_begin(r, body, &code, NULL, &in, &doc))
		return code;
	if (mgmt_merge_put_groups(in, doc, &v) != 0)
		return group_refused(body, &v, in, doc);
	ok = cJSON_CreateObject();
	cJSON_AddItemToObject(ok, "tool_groups", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(doc, "tool_groups"), true));
	cJSON_Delete(in);
	return change(r, body, doc, "config_change", "PUT /api/v1/tool_groups: every tool group replaced", MHD_HTTP_OK,
		      ok, NULL);
}

/* PUT /tool_groups/{name}: one group created (201) or replaced (200). */
static unsigned int put_group(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	char detail[160], prefix[32];
	struct mgmt_verdict v;
	bool created = false;
	cJSON *in, *doc;

	if (!mgmt_change_begin(r, body, &code, NULL, &in, &doc))
		return code;
	if (mgmt_merge_put_group(in, doc, r->params[0], &created, prefix, sizeof(prefix), &v) != 0)
		return group_refused(body, &v, in, doc);
	snprintf(detail, sizeof(detail), "PUT /api/v1/tool_groups/%.64s: tool group %s", r->params[0],
		 created ? "added" : "replaced");
	return change(r, body, doc, "config_change", detail, created ? MHD_HTTP_CREATED : MHD_HTTP_OK, in, prefix);
}

/* DELETE /tool_groups/{name} (@p one) or every group: refused (422) while a session sends to it. */
static unsigned int delete_groups_(struct req *r, cJSON **body, bool one)
{
	unsigned int code = MHD_HTTP_OK;
	struct mgmt_verdict v;
	char detail[160];
	cJSON *doc, *ok;
	int idx = -1;

	if (mgmt_run_on(r, MGMT_LANE_CHANGES)) /* one change at a time; it waits for the primary */
		return 0;
	doc = running_doc(r, body, &code);
	if (doc == NULL)
		return code;
	if (one && mgmt_find_group(doc, r->params[0], &idx) == NULL) {
		cJSON_Delete(doc);
		*body = mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "no tool group %s", r->params[0]);
		return MHD_HTTP_NOT_FOUND;
	}
	if (mgmt_check_group_unused(doc, one ? r->params[0] : NULL, &v) != 0) {
		cJSON_Delete(doc);
		*body = verdict_error(&v);
		return v.code;
	}
	ok = cJSON_CreateObject();
	if (one) {
		cJSON_DeleteItemFromArray(doc_array(doc, "tool_groups"), idx);
		snprintf(detail, sizeof(detail), "DELETE /api/v1/tool_groups/%.64s: tool group deleted", r->params[0]);
		cJSON_AddStringToObject(ok, "deleted", r->params[0]);
	} else {
		cJSON_DeleteItemFromObjectCaseSensitive(doc, "tool_groups");
		snprintf(detail, sizeof(detail), "DELETE /api/v1/tool_groups: every tool group deleted");
		cJSON_AddArrayToObject(ok, "tool_groups");
	}
	return change(r, body, doc, "config_change", detail, MHD_HTTP_OK, ok, NULL);
}

static unsigned int delete_group(struct req *r, cJSON **body)
{
	return delete_groups_(r, body, true);
}

static unsigned int delete_groups(struct req *r, cJSON **body)
{
	return delete_groups_(r, body, false);
}

const struct mgmt_route mgmt_routes_tables[] = {
	{ "GET", "/api/v1/tool_groups", get_groups },
	{ "PUT", "/api/v1/tool_groups", put_groups },
	{ "DELETE", "/api/v1/tool_groups", delete_groups },
	{ "GET", "/api/v1/tool_groups/{name}", get_group },
	{ "PUT", "/api/v1/tool_groups/{name}", put_group },
	{ "DELETE", "/api/v1/tool_groups/{name}", delete_group },
	{ "GET", "/api/v1/mirrors", get_mirrors },
	{ "POST", "/api/v1/mirrors", post_mirror },
	{ "GET", "/api/v1/mirrors/{id}", get_mirror },
	{ "PUT", "/api/v1/mirrors/{id}", put_mirror },
	{ "DELETE", "/api/v1/mirrors/{id}", delete_mirror },
	{ "GET", "/api/v1/forwarding/xconnects", get_xconnects },
	{ "POST", "/api/v1/forwarding/xconnects", post_xconnect },
	{ "DELETE", "/api/v1/forwarding/xconnects/{id}", delete_xconnect },
	{ "GET", "/api/v1/ports/{name}/ingress", get_ingress },
	{ "PUT", "/api/v1/ports/{name}/ingress", put_ingress },
	{ "DELETE", "/api/v1/ports/{name}/ingress", delete_ingress },
	{ "GET", "/api/v1/config", get_config },
	{ "PUT", "/api/v1/config", put_config },
	{ NULL, NULL, NULL },
};

cJSON *mgmt_running_doc(struct req *r, cJSON **body, unsigned int *code)
{
	return running_doc(r, body, code);
}

bool mgmt_change_begin(struct req *r, cJSON **body, unsigned int *code,
		       cJSON *(*parse)(struct req *r, cJSON **body, unsigned int *code), cJSON **in, cJSON **doc)
{
	if (mgmt_run_on(r, MGMT_LANE_CHANGES)) { /* one change at a time; it waits for the primary */
		*code = 0;
		return false;
	}
	if (in != NULL) {
		*in = (parse != NULL ? parse : mgmt_parse_body)(r, body, code);
		if (*in == NULL)
			return false;
	}
	*doc = running_doc(r, body, code);
	if (*doc == NULL) {
		if (in != NULL) {
			cJSON_Delete(*in);
			*in = NULL;
		}
		return false;
	}
	return true;
}

unsigned int mgmt_tables_change(struct req *r, cJSON **body, cJSON *doc, const char *kind, const char *detail,
				unsigned int ok_code, cJSON *ok_body, const char *field_prefix)
{
	return change(r, body, doc, kind, detail, ok_code, ok_body, field_prefix);
}
