/* SPDX-License-Identifier: BSD-3-Clause */
/* Checks of the writing routes' bodies, without libmicrohttpd or the memzone (validate.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <spanbox/config.h>

#include "validate.h"

static unsigned int refuse(struct mgmt_verdict *v, unsigned int code, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static unsigned int refuse(struct mgmt_verdict *v, unsigned int code, const char *field, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v->msg, sizeof(v->msg), fmt, ap);
	va_end(ap);
	v->code = code;
	v->field = field;
	return code;
}

/* true when a long holds @p d truncated (casting anything else is undefined behaviour) */
static bool in_long_range(double d)
{
	return d >= -9.2e18 && d <= 9.2e18;
}

/* true when @p d is a whole number a long holds */
static bool is_long(double d)
{
	return in_long_range(d) && d == (double)(long)d;
}

cJSON *mgmt_body_json(const char *body, size_t len, struct mgmt_verdict *v)
{
	const char *end = NULL;
	cJSON *doc;
	size_t n;

	if (len == 0) {
		refuse(v, 400, NULL, "empty body: a JSON document is expected");
		return NULL;
	}
	if (strlen(body) != len) {
		refuse(v, 400, NULL, "body holds a NUL byte at byte offset %zu", strlen(body));
		return NULL;
	}
	/* cJSON decodes \u0000 into a NUL that silently ends the C string: refuse it (an escape is a
	 * backslash preceded by an even number of backslashes) */
	for (n = 0; n + 6 <= len; n++) {
		size_t k = n;

		if (strncasecmp(body + n, "\\u0000", 6) != 0)
			continue;
		while (k > 0 && body[k - 1] == '\\')
			k--;
		if ((n - k) % 2 == 0) {
			refuse(v, 400, NULL,
			       "body holds a NUL character (\\u0000) at byte offset %zu: not allowed in any value", n);
			return NULL;
		}
	}
	doc = cJSON_ParseWithLengthOpts(body, len + 1, &end, 1) /* + its NUL: cJSON checks the terminator within the length */;
	if (doc == NULL) {
		size_t off = end != NULL && end >= body ? (size_t)(end - body) : 0;

		refuse(v, 400, NULL, "body is not valid JSON: error at byte offset %zu", off);
	}
	return doc;
}

cJSON *mgmt_doc_array(cJSON *doc, const char *key)
{
	cJSON *a = cJSON_GetObjectItemCaseSensitive(doc, key);

	if (!cJSON_IsArray(a)) {
		cJSON_DeleteItemFromObjectCaseSensitive(doc, key);
		a = cJSON_AddArrayToObject(doc, key);
	}
	return a;
}

cJSON *mgmt_doc_xconnects(cJSON *doc)
{
	cJSON *f = cJSON_GetObjectItemCaseSensitive(doc, "forwarding");

	if (!cJSON_IsObject(f)) {
		cJSON_DeleteItemFromObjectCaseSensitive(doc, "forwarding");
		f = cJSON_AddObjectToObject(doc, "forwarding");
	}
	return mgmt_doc_array(f, "xconnects");
}

cJSON *mgmt_find_mirror(cJSON *doc, long id, int *idx)
{
	cJSON *m, *a = cJSON_GetObjectItemCaseSensitive(doc, "mirrors");
	int i = 0;

	cJSON_ArrayForEach(m, a) {
		cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "id");

		if (cJSON_IsNumber(v) && v->valuedouble == (double)id) {
			if (idx)
				*idx = i;
			return m;
		}
		i++;
	}
	return NULL;
}

const char *mgmt_session_id_owner(cJSON *doc, long id)
{
	if (mgmt_find_mirror(doc, id, NULL) != NULL)
		return "a mirror session or a capture";
	return mgmt_find_map(doc, id, NULL) != NULL ? "a map" : NULL;
}

long mgmt_free_session_id(cJSON *doc, bool (*id_free)(const void *ctx, long id), const void *ctx)
{
	long id;

	for (id = SBX_MIRROR_ID_MIN; id <= SBX_MIRROR_ID_MAX; id++)
		if (mgmt_session_id_owner(doc, id) == NULL && (id_free == NULL || id_free(ctx, id)))
			break;
	return id;
}

unsigned int mgmt_check_post_mirror_body(const cJSON *in, struct mgmt_verdict *v)
{
	return cJSON_IsObject(in) ? 0 : refuse(v, 422, NULL, "expected a mirror session object");
}

unsigned int mgmt_merge_post_mirror(cJSON *in, cJSON *doc, long *id, char *prefix, size_t prefix_len,
				    struct mgmt_verdict *v)
{
	cJSON *idv = cJSON_GetObjectItemCaseSensitive(in, "id");

	if (idv == NULL) {
		*id = mgmt_free_session_id(doc, NULL, NULL);
		cJSON_AddNumberToObject(in, "id", (double)*id);
	} else if (cJSON_IsNumber(idv) && is_long(idv->valuedouble) &&
		   mgmt_find_mirror(doc, (long)idv->valuedouble, NULL) != NULL) {
		return refuse(v, 409, "id", "mirror session %ld exists: PUT /api/v1/mirrors/%ld to change it",
			      (long)idv->valuedouble, (long)idv->valuedouble);
	} else if (cJSON_IsNumber(idv) && is_long(idv->valuedouble) &&
		   mgmt_find_map(doc, (long)idv->valuedouble, NULL) != NULL) {
		return refuse(v, 409, "id", "id: session %ld is a map (maps and mirror sessions share one id space)",
			      (long)idv->valuedouble);
	}
	idv = cJSON_GetObjectItemCaseSensitive(in, "id");
	/* an id no long holds is refused by sbx_config_parse() (1..1023): 0 names it in the detail */
	*id = cJSON_IsNumber(idv) && in_long_range(idv->valuedouble) ? (long)idv->valuedouble : 0;
	cJSON_AddItemToArray(mgmt_doc_array(doc, "mirrors"), cJSON_Duplicate(in, true));
	snprintf(prefix, prefix_len, "mirrors[%d].", cJSON_GetArraySize(mgmt_doc_array(doc, "mirrors")) - 1);
	return 0;
}

unsigned int mgmt_merge_put_mirror(cJSON *in, cJSON *doc, long id, int idx, char *prefix, size_t prefix_len,
				   struct mgmt_verdict *v)
{
	cJSON *idv = cJSON_GetObjectItemCaseSensitive(in, "id");

	if (!cJSON_IsObject(in))
		return refuse(v, 422, NULL, "expected a mirror session object (session %ld)", id);
	if (idv != NULL && !(cJSON_IsNumber(idv) && idv->valuedouble == (double)id))
		return refuse(v, 422, "id", "id: must be %ld (the session in the path)", id);
	if (idv == NULL)
		cJSON_AddNumberToObject(in, "id", (double)id);
	cJSON_ReplaceItemInArray(mgmt_doc_array(doc, "mirrors"), idx, cJSON_Duplicate(in, true));
	snprintf(prefix, prefix_len, "mirrors[%d].", idx);
	return 0;
}

cJSON *mgmt_find_map(cJSON *doc, long id, int *idx)
{
	cJSON *m;
	int i = 0;

	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(doc, "maps")) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "id");

		if (cJSON_IsNumber(v) && v->valuedouble == (double)id) {
			if (idx != NULL)
				*idx = i;
			return m;
		}
		i++;
	}
	return NULL;
}

unsigned int mgmt_check_map_body(const cJSON *in, struct mgmt_verdict *v)
{
	const cJSON *rules = cJSON_GetObjectItemCaseSensitive(in, "rules");

	if (!cJSON_IsObject(in))
		return refuse(v, 422, NULL, "expected a map object");
	if (rules != NULL && !cJSON_IsArray(rules))
		return refuse(v, 422, "rules", "rules: not an array of rules");
	return 0;
}

unsigned int mgmt_merge_post_map(cJSON *in, cJSON *doc, long *id, struct mgmt_verdict *v)
{
	const cJSON *idv = cJSON_GetObjectItemCaseSensitive(in, "id");

	if (idv == NULL) {
		*id = mgmt_free_session_id(doc, NULL, NULL);
		cJSON_AddNumberToObject(in, "id", (double)*id);
	} else if (cJSON_IsNumber(idv) && is_long(idv->valuedouble) &&
		   mgmt_session_id_owner(doc, (long)idv->valuedouble) != NULL) {
		return refuse(v, 409, "id", "id: session %ld exists (PUT /api/v1/maps/%ld replaces a map)",
			      (long)idv->valuedouble, (long)idv->valuedouble);
	}
	idv = cJSON_GetObjectItemCaseSensitive(in, "id");
	*id = cJSON_IsNumber(idv) && in_long_range(idv->valuedouble) ? (long)idv->valuedouble : 0;
	cJSON_AddItemToArray(mgmt_doc_array(doc, "maps"), cJSON_Duplicate(in, true));
	return 0;
}

unsigned int mgmt_merge_put_map(cJSON *in, cJSON *doc, long id, int idx, struct mgmt_verdict *v)
{
	const cJSON *idv = cJSON_GetObjectItemCaseSensitive(in, "id");

	if (idv != NULL && !(cJSON_IsNumber(idv) && idv->valuedouble == (double)id))
		return refuse(v, 422, "id", "id: the body's id is not %ld, the map of the path", id);
	if (idv == NULL)
		cJSON_AddNumberToObject(in, "id", (double)id);
	cJSON_ReplaceItemInArray(mgmt_doc_array(doc, "maps"), idx, cJSON_Duplicate(in, true));
	return 0;
}

long mgmt_merge_post_rule(cJSON *m, cJSON *rules, cJSON *in)
{
	long n = cJSON_GetArraySize(rules);

	cJSON_AddItemToArray(rules, in);
	if (!cJSON_ReplaceItemInObjectCaseSensitive(m, "rules", rules))
		cJSON_AddItemToObject(m, "rules", rules);
	return n;
}

cJSON *mgmt_find_group(cJSON *doc, const char *name, int *idx)
{
	cJSON *g, *a = cJSON_GetObjectItemCaseSensitive(doc, "tool_groups");
	int i = 0;

	cJSON_ArrayForEach(g, a) {
		cJSON *n = cJSON_GetObjectItemCaseSensitive(g, "name");

		if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) {
			if (idx)
				*idx = i;
			return g;
		}
		i++;
	}
	return NULL;
}

unsigned int mgmt_merge_put_groups(const cJSON *in, cJSON *doc, struct mgmt_verdict *v)
{
	const cJSON *a = cJSON_IsArray(in) ? in : cJSON_GetObjectItemCaseSensitive(in, "tool_groups");

	if (cJSON_IsObject(in) && cJSON_GetArraySize(in) != 1)
		return refuse(v, 422, NULL, "expected {\"tool_groups\": [...]} and no other key");
	if (!cJSON_IsArray(a))
		return refuse(v, 422, "tool_groups", "tool_groups: expected an array of tool groups");
	cJSON_DeleteItemFromObjectCaseSensitive(doc, "tool_groups");
	cJSON_AddItemToObject(doc, "tool_groups", cJSON_Duplicate(a, true));
	return 0;
}

unsigned int mgmt_merge_put_group(cJSON *in, cJSON *doc, const char *name, bool *created, char *prefix,
				  size_t prefix_len, struct mgmt_verdict *v)
{
	cJSON *n = cJSON_GetObjectItemCaseSensitive(in, "name");
	int idx = -1;

	if (!cJSON_IsObject(in))
		return refuse(v, 422, NULL, "expected a tool group object (group %s)", name);
	if (n != NULL && !(cJSON_IsString(n) && strcmp(n->valuestring, name) == 0))
		return refuse(v, 422, "name", "name: must be \"%s\" (the group in the path)", name);
	if (n == NULL)
		cJSON_AddStringToObject(in, "name", name);
	*created = mgmt_find_group(doc, name, &idx) == NULL;
	if (*created) {
		cJSON_AddItemToArray(mgmt_doc_array(doc, "tool_groups"), cJSON_Duplicate(in, true));
		idx = cJSON_GetArraySize(mgmt_doc_array(doc, "tool_groups")) - 1;
	} else {
		cJSON_ReplaceItemInArray(mgmt_doc_array(doc, "tool_groups"), idx, cJSON_Duplicate(in, true));
	}
	snprintf(prefix, prefix_len, "tool_groups[%d].", idx);
	return 0;
}

unsigned int mgmt_check_group_unused(const cJSON *doc, const char *name, struct mgmt_verdict *v)
{
	const cJSON *m, *a = cJSON_GetObjectItemCaseSensitive(doc, "mirrors");
	int i = 0;

	cJSON_ArrayForEach(m, a) {
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(m, "destination");
		const cJSON *g = cJSON_GetObjectItemCaseSensitive(d, "group");
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");

		if (cJSON_IsString(g) && (name == NULL || strcmp(g->valuestring, name) == 0)) {
			snprintf(v->scratch, sizeof(v->scratch), "mirrors[%d].destination.group", i);
			return refuse(v, 422, v->scratch, "%s: mirror session %.0f sends to tool group %s: delete the "
				      "session or change its destination first", v->scratch,
				      cJSON_IsNumber(id) ? id->valuedouble : 0.0, g->valuestring);
		}
		i++;
	}
	return 0;
}

const cJSON *mgmt_check_xconnect_body(const cJSON *in, struct mgmt_verdict *v)
{
	const cJSON *ports = cJSON_IsObject(in) ? cJSON_GetObjectItemCaseSensitive(in, "ports") : NULL;

	if (cJSON_IsObject(in) && cJSON_GetArraySize(in) > 1) { /* another key, or "ports" twice */
		const cJSON *k;

		cJSON_ArrayForEach(k, in)
			if (k != ports)
				break;
		refuse(v, 422, k && k->string ? k->string : NULL, "%s: %s key (only \"ports\" is allowed)",
		       k && k->string ? k->string : "?",
		       k && k->string && strcmp(k->string, "ports") == 0 ? "duplicate" : "unknown");
		return NULL;
	}
	if (!cJSON_IsArray(ports) || cJSON_GetArraySize(ports) != 2 || !cJSON_IsString(cJSON_GetArrayItem(ports, 0)) ||
	    !cJSON_IsString(cJSON_GetArrayItem(ports, 1))) {
		refuse(v, 422, "ports", "ports: expected {\"ports\": [\"a\", \"b\"]} with two port names");
		return NULL;
	}
	return ports;
}

int mgmt_doc_port(const cJSON *doc, const char *name)
{
	const cJSON *p;
	int i = 0;

	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(doc, "ports")) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(p, "name");

		if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
			return i;
		i++;
	}
	return -1;
}

unsigned int mgmt_merge_put_ingress(const cJSON *in, cJSON *doc, int idx, char *prefix, size_t prefix_len,
				    struct mgmt_verdict *v)
{
	cJSON *port = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "ports"), idx);

	if (!cJSON_IsObject(in))
		return refuse(v, 422, NULL, "expected an ingress object (docs/CONFIG.md \"ingress\")");
	if (port == NULL)
		return refuse(v, 404, NULL, "no port %d", idx);
	cJSON_DeleteItemFromObjectCaseSensitive(port, "ingress");
	cJSON_AddItemToObject(port, "ingress", cJSON_Duplicate(in, true));
	snprintf(prefix, prefix_len, "ports[%d].ingress.", idx);
	return 0;
}

unsigned int mgmt_check_put_config_body(const cJSON *in, struct mgmt_verdict *v)
{
	return cJSON_IsObject(in) ? 0 : refuse(v, 422, "config", "config: expected a JSON object");
}

bool mgmt_config_token_redacted(const cJSON *in, const char *redacted)
{
	const cJSON *mg = cJSON_GetObjectItemCaseSensitive(in, "mgmt");
	const cJSON *tok = cJSON_IsObject(mg) ? cJSON_GetObjectItemCaseSensitive(mg, "token") : NULL;

	return cJSON_IsString(tok) && strcmp(tok->valuestring, redacted) == 0;
}

void mgmt_config_take_token(cJSON *in, const cJSON *run)
{
	cJSON *mg = cJSON_GetObjectItemCaseSensitive(in, "mgmt");
	const cJSON *rmg = cJSON_GetObjectItemCaseSensitive(run, "mgmt");

	if (cJSON_IsObject(mg) && cJSON_IsObject(rmg) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(rmg, "token")))
		cJSON_ReplaceItemInObjectCaseSensitive(mg, "token",
						       cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(rmg, "token"), true));
}

void mgmt_validation_verdict(char *err, const char *prefix, struct mgmt_verdict *v)
{
	char *colon = strstr(err, ": "), *field = err;
	size_t pl = prefix ? strlen(prefix) : 0;

	if (colon != NULL)
		*colon = '\0';
	if (pl && strncmp(field, prefix, pl) == 0 && field[pl] != '\0')
		field += pl;
	else if (pl && strncmp(field, prefix, pl - 1) == 0 && field[pl - 1] == '\0')
		field = "session";
	refuse(v, 422, field, "%s%s%s", field, colon ? ": " : "", colon ? colon + 2 : "");
}

/* an integer @p key of @p o in min..max, when present */
static int body_int(const cJSON *o, const char *key, long min, long max, long *v, char *err, size_t errlen)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	if (it == NULL)
		return 0;
	if (!cJSON_IsNumber(it) || !is_long(it->valuedouble) || it->valuedouble < (double)min ||
	    it->valuedouble > (double)max) {
		snprintf(err, errlen, "%s: expected an integer %ld..%ld", key, min, max);
		return -1;
	}
	*v = (long)it->valuedouble;
	return 0;
}

unsigned int mgmt_memprobe_body(const char *body, size_t len, long *size_mb, long *runs, char *err, size_t errlen)
{
	const cJSON *it;
	cJSON *o;

	while (len > 0 && (body[len - 1] == ' ' || body[len - 1] == '\n' || body[len - 1] == '\r' || body[len - 1] == '\t'))
		len--;
	if (len == 0)
		return 0;
	o = cJSON_ParseWithLength(body, len);
	if (o == NULL || !cJSON_IsObject(o)) {
		snprintf(err, errlen, "body: expected a JSON object such as {\"size_mb\": 64, \"runs\": 3}");
		cJSON_Delete(o);
		return 400;
	}
	cJSON_ArrayForEach(it, o) {
		if (strcmp(it->string, "size_mb") != 0 && strcmp(it->string, "runs") != 0) {
			snprintf(err, errlen, "%s: unknown key (size_mb, runs)", it->string);
			cJSON_Delete(o);
			return 400;
		}
	}
	if (body_int(o, "size_mb", 1, 1024, size_mb, err, errlen) != 0 || body_int(o, "runs", 1, 20, runs, err, errlen) != 0) {
		cJSON_Delete(o);
		return 400;
	}
	cJSON_Delete(o);
	return 0;
}

/* sbx_config_parse() of @p doc, as change() does; 0 or 422 with @p v set (v->field into @p err). */
static unsigned int config_check(const cJSON *doc, const char *prefix, char *err, size_t errlen, struct mgmt_verdict *v)
{
	struct sbx_config *tmp = malloc(sizeof(*tmp));
	char *text = cJSON_Print(doc);
	unsigned int code = 0;

	if (tmp == NULL || text == NULL)
		code = refuse(v, 500, NULL, "out of memory");
	else if (sbx_config_parse(text, tmp, err, errlen) != 0) {
		mgmt_validation_verdict(err, prefix, v);
		code = v->code;
	}
	free(text);
	free(tmp);
	return code;
}

/* mgmt_validate_write() of POST /captures: no capture directory, every id is free */
static bool any_id_free(const void *ctx, long id)
{
	(void)ctx;
	(void)id;
	return true;
}

unsigned int mgmt_validate_write(enum mgmt_write_route route, const char *body, size_t len, const char *running,
				 long id, const char *redacted, struct mgmt_verdict *v)
{
	char prefix[32] = "";
	cJSON *in = NULL, *doc = NULL;
	const cJSON *ports = NULL;
	unsigned int code = 0;
	long got;
	int idx = -1;

	v->code = 0;
	v->field = NULL;
	v->msg[0] = '\0';
	if (route == MGMT_W_MEMPROBE) {
		long size_mb = 256, runs = 5;

		if (len > 0 && body[strspn(body, " \t\r\n")] != '\0') {
			in = mgmt_body_json(body, len, v);
			if (in == NULL)
				return v->code;
			cJSON_Delete(in);
		}
		code = mgmt_memprobe_body(body, len, &size_mb, &runs, v->msg, sizeof(v->msg));
		v->code = code;
		return code;
	}
	if (route == MGMT_W_PUT_MIRROR) { /* the route reads the running document and the session first */
		doc = running ? cJSON_Parse(running) : NULL;
		if (doc == NULL)
			return refuse(v, 500, NULL, "running config is not JSON");
		if (id < SBX_MIRROR_ID_MIN || id > SBX_MIRROR_ID_MAX || mgmt_find_mirror(doc, id, &idx) == NULL) {
			cJSON_Delete(doc);
			return refuse(v, 404, NULL, "no mirror session %ld", id);
		}
	}
	if (route == MGMT_W_PUT_MAP || route == MGMT_W_POST_RULE) { /* the route finds the map first */
		doc = running ? cJSON_Parse(running) : NULL;
		if (doc == NULL)
			return refuse(v, 500, NULL, "running config is not JSON");
		if (id < SBX_MIRROR_ID_MIN || id > SBX_MIRROR_ID_MAX || mgmt_find_map(doc, id, &idx) == NULL) {
			cJSON_Delete(doc);
			return refuse(v, 404, NULL, "no map %ld", id);
		}
	}
	if (route == MGMT_W_PUT_INGRESS) { /* the route finds the port in the running document first */
		doc = running ? cJSON_Parse(running) : NULL;
		if (doc == NULL)
			return refuse(v, 500, NULL, "running config is not JSON");
		if (id < 0 || id >= cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "ports"))) {
			cJSON_Delete(doc);
			return refuse(v, 404, NULL, "no port %ld", id);
		}
	}
	in = mgmt_body_json(body, len, v);
	if (in == NULL) {
		cJSON_Delete(doc);
		return v->code;
	}
	switch (route) {
	case MGMT_W_POST_MIRROR:
		code = mgmt_check_post_mirror_body(in, v);
		break;
	case MGMT_W_POST_XCONNECT:
		ports = mgmt_check_xconnect_body(in, v);
		code = ports == NULL ? v->code : 0;
		break;
	case MGMT_W_PUT_CONFIG:
		code = mgmt_check_put_config_body(in, v);
		break;
	case MGMT_W_POST_MAP:
	case MGMT_W_PUT_MAP:
		code = mgmt_check_map_body(in, v);
		break;
	default:
		break;
	}
	if (code == 0 && doc == NULL) {
		doc = running ? cJSON_Parse(running) : NULL;
		if (doc == NULL)
			code = refuse(v, 500, NULL, "running config is not JSON");
	}
	if (code != 0)
		goto out;
	switch (route) {
	case MGMT_W_POST_MIRROR:
		code = mgmt_merge_post_mirror(in, doc, &got, prefix, sizeof(prefix), v);
		break;
	case MGMT_W_PUT_MIRROR:
		code = mgmt_merge_put_mirror(in, doc, id, idx, prefix, sizeof(prefix), v);
		break;
	case MGMT_W_POST_XCONNECT:
		cJSON_AddItemToArray(mgmt_doc_xconnects(doc), cJSON_Duplicate(ports, true));
		break;
	case MGMT_W_PUT_CONFIG:
		if (mgmt_config_token_redacted(in, redacted))
			mgmt_config_take_token(in, doc);
		cJSON_Delete(doc);
		doc = cJSON_Duplicate(in, true);
		break;
	case MGMT_W_PUT_INGRESS:
		code = mgmt_merge_put_ingress(in, doc, (int)id, prefix, sizeof(prefix), v);
		break;
	case MGMT_W_PUT_GROUPS:
		code = mgmt_merge_put_groups(in, doc, v);
		break;
	case MGMT_W_PUT_GROUP: {
		char name[24];
		bool created;

		snprintf(name, sizeof(name), id % 2 == 0 ? "ids" : "g%ld", id);
		code = mgmt_merge_put_group(in, doc, name, &created, prefix, sizeof(prefix), v);
		break;
	}
	case MGMT_W_PUT_FLOWS:
		code = mgmt_merge_put_flows(in, doc, v);
		break;
	case MGMT_W_POST_MAP:
		code = mgmt_merge_post_map(in, doc, &got, v);
		break;
	case MGMT_W_PUT_MAP:
		code = mgmt_merge_put_map(in, doc, id, idx, v);
		break;
	case MGMT_W_POST_RULE: { /* the route appends to the running table: here the document's own rules */
		cJSON *m = mgmt_find_map(doc, id, NULL);
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(m, "rules");

		mgmt_merge_post_rule(m, cJSON_IsArray(r) ? cJSON_Duplicate(r, true) : cJSON_CreateArray(),
				     cJSON_Duplicate(in, true));
		break;
	}
	case MGMT_W_POST_CAPTURE: {
		const struct mgmt_capture_room room = { .quota = 1ULL << 30, .pid = 1, .max_frame = 1522 };

		code = mgmt_merge_post_capture(in, doc, &room, any_id_free, NULL, &got, prefix, sizeof(prefix), v);
		break;
	}
	default:
		break;
	}
	if (code == 0)
		code = config_check(doc, prefix[0] ? prefix : NULL, v->scratch, sizeof(v->scratch), v);
out:
	cJSON_Delete(in);
	cJSON_Delete(doc);
	return code;
}

/* The number member @p key of object @p o (0 when absent), -1 when not a whole number 0..10^15
 * (checked before the cast: a cast of a larger double is undefined behaviour). */
static double capture_num(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	if (it == NULL)
		return 0;
	if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0 && it->valuedouble <= 1e15))
		return -1;
	return it->valuedouble == (double)(long long)it->valuedouble ? it->valuedouble : -1;
}

unsigned int mgmt_merge_post_capture(const cJSON *in, cJSON *doc, const struct mgmt_capture_room *room,
				     bool (*id_free)(const void *ctx, long id), const void *ctx, long *id, char *prefix, size_t prefix_len,
				     struct mgmt_verdict *v)
{
	static const char *const keys[] = { "id", "name", "sources", "filter", "snaplen", "files", "stop", NULL };
	const cJSON *it, *files, *stop, *idv;
	cJSON *s, *rec;
	double count, mb, sbytes, spkts, snap;
	uint64_t need = 0, left;
	size_t k;

	if (!cJSON_IsObject(in))
		return refuse(v, 422, NULL, "expected a capture object");
	cJSON_ArrayForEach(it, in) {
		for (k = 0; keys[k] != NULL && strcmp(keys[k], it->string) != 0; k++)
			;
		if (keys[k] == NULL)
			return refuse(v, 422, keys[0], "unknown key \"%.64s\" (a capture takes id, name, sources, filter, "
				      "snaplen, files, stop)", it->string);
	}
	if (cJSON_GetObjectItemCaseSensitive(in, "sources") == NULL)
		return refuse(v, 422, "sources", "sources: missing required key (the ports to capture)");
	files = cJSON_GetObjectItemCaseSensitive(in, "files");
	stop = cJSON_GetObjectItemCaseSensitive(in, "stop");
	if ((files != NULL && !cJSON_IsObject(files)) || (stop != NULL && !cJSON_IsObject(stop)))
		return refuse(v, 422, files != NULL && !cJSON_IsObject(files) ? "files" : "stop", "expected an object");
	count = capture_num(files, "count");
	mb = capture_num(files, "mb");
	sbytes = capture_num(stop, "bytes");
	spkts = capture_num(stop, "packets");
	snap = capture_num(in, "snaplen"); /* its range: sbx_config_parse */
	if (count < 0 || mb < 0 || sbytes < 0 || spkts < 0)
		return refuse(v, 422, count < 0 ? "files.count" : mb < 0 ? "files.mb" : sbytes < 0 ? "stop.bytes" : "stop.packets",
			      "expected a whole number 0..10^15");
	if (count > 1e6 || mb > 1e6)
		return refuse(v, 422, count > 1e6 ? "files.count" : "files.mb", "out of range");
	/* the bound of what the capture keeps on disk: its ring, or stop.bytes; else all that is left */
	if (count > 0 && mb > 0)
		need = (uint64_t)count * (uint64_t)mb * 1024 * 1024 + MGMT_CAPTURE_SLACK;
	if (sbytes > 0 && (need == 0 || (uint64_t)sbytes + MGMT_CAPTURE_SLACK < need))
		need = (uint64_t)sbytes + MGMT_CAPTURE_SLACK;
	if (spkts > 0 && snap >= 0) {
		uint64_t per = (snap > 0 && (uint64_t)snap < room->max_frame ? (uint64_t)snap : room->max_frame) + 64;
		uint64_t b = (uint64_t)spkts * per + MGMT_CAPTURE_SLACK;

		if (need == 0 || b < need)
			need = b;
	}
	left = room->quota > room->used + room->reserved ? room->quota - room->used - room->reserved : 0;
	if (need > left || (need == 0 && left < MGMT_CAPTURE_SLACK))
		return refuse(v, 422, "quota_mb",
			      "quota_mb: the capture may take %.1f MiB, mgmt.captures.quota_mb leaves %.1f MiB (%.1f MiB "
			      "of files kept, %.1f MiB held by running captures)",
			      need ? (double)need / 1048576.0 : 0.0, (double)left / 1048576.0,
			      (double)room->used / 1048576.0, (double)room->reserved / 1048576.0);
	idv = cJSON_GetObjectItemCaseSensitive(in, "id");
	if (idv == NULL) {
		*id = mgmt_free_session_id(doc, id_free, ctx);
	} else if (!cJSON_IsNumber(idv) || !is_long(idv->valuedouble) || idv->valuedouble < SBX_MIRROR_ID_MIN ||
		   idv->valuedouble > SBX_MIRROR_ID_MAX) {
		return refuse(v, 422, "id", "id: a whole number %d..%d", SBX_MIRROR_ID_MIN, SBX_MIRROR_ID_MAX);
	} else {
		const char *owner;

		*id = (long)idv->valuedouble;
		owner = mgmt_session_id_owner(doc, *id);
		if (owner != NULL)
			return refuse(v, 409, "id", "id: session %ld exists (%s)", *id, owner);
	}
	s = cJSON_CreateObject();
	cJSON_AddNumberToObject(s, "id", (double)*id);
	cJSON_ArrayForEach(it, in)
		if (strcmp(it->string, "id") != 0 && strcmp(it->string, "files") != 0 && strcmp(it->string, "stop") != 0)
			cJSON_AddItemToObject(s, it->string, cJSON_Duplicate(it, true));
	rec = cJSON_AddObjectToObject(cJSON_AddObjectToObject(s, "destination"), "recorder");
	if (files != NULL)
		cJSON_AddItemToObject(rec, "files", cJSON_Duplicate(files, true));
	if (stop != NULL)
		cJSON_AddItemToObject(rec, "stop", cJSON_Duplicate(stop, true));
	cJSON_AddNumberToObject(rec, "max_bytes", (double)(need ? need : left));
	cJSON_AddNumberToObject(rec, "owner_pid", (double)room->pid);
	cJSON_AddItemToArray(mgmt_doc_array(doc, "mirrors"), s);
	snprintf(prefix, prefix_len, "mirrors[%d].", cJSON_GetArraySize(mgmt_doc_array(doc, "mirrors")) - 1);
	return 0;
}

/* ---- PUT /flows/config (docs/RUNTIME_TABLES.md "Flows") ---- */

unsigned int mgmt_merge_put_flows(const cJSON *in, cJSON *doc, struct mgmt_verdict *v)
{
	const cJSON *fpw = cJSON_GetObjectItemCaseSensitive(in, "flows_per_worker");
	const cJSON *run = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "flows"),
							    "flows_per_worker");
	double running = cJSON_IsNumber(run) ? run->valuedouble : SBX_FLOWS_CAPACITY_DEFAULT;
	cJSON *f;

	if (!cJSON_IsObject(in))
		return refuse(v, 422, "flows", "flows: expected a JSON object (the whole section)");
	if (cJSON_IsNumber(fpw) && fpw->valuedouble != running)
		return refuse(v, 409, "flows.flows_per_worker",
			      "flows.flows_per_worker: cannot change while the appliance runs (the size of the workers' flow "
			      "tables, %.0f): restart it with the new value in the config file; nothing was changed", running);
	f = cJSON_Duplicate(in, true);
	if (f == NULL)
		return refuse(v, 500, NULL, "out of memory");
	if (fpw == NULL) /* static: the running value */
		cJSON_AddNumberToObject(f, "flows_per_worker", running);
	cJSON_DeleteItemFromObjectCaseSensitive(doc, "flows");
	cJSON_AddItemToObject(doc, "flows", f);
	return 0;
}
