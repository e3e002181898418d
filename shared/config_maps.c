/* SPDX-License-Identifier: BSD-3-Clause */
/* The config section "maps" (include/spanbox/config_maps.h, docs/CONFIG.md "maps"). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "spanbox/config_maps.h"

/* Keys of a map beyond a mirror session's. */
static const char *const map_extra_keys[] = {"rules", "collector", NULL};
static const char *const summary_keys[] = {"count", "digest", NULL};
static const char summary_in_file[] =
	"a summary of a running document (count, digest): the config to start from must hold the rules themselves";

__attribute__((format(printf, 3, 4)))
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static uint64_t fnv(uint64_t h, uint32_t v)
{
	for (int b = 0; b < 4; b++) {
		h ^= (v >> (8 * b)) & 0xff;
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t sbx_config_maps_digest(const struct sbx_map_rules *r)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (uint32_t i = 0; i < r->n; i++) {
		const struct sbx_map_rule *x = &r->rule[i];

		h = fnv(h, (uint32_t)x->action << 8 | x->family);
		h = fnv(h, x->used);
		for (int f = 0; f < SBX_MF_COUNT; f++)
			if (x->used & (1u << f)) {
				h = fnv(h, x->f[f].value);
				h = fnv(h, x->f[f].mask_range);
			}
	}
	return h;
}

/* The summary {"count": N, "digest": "<16 hex>"} of a running document at @p path into @p m. */
static int parse_summary(const cJSON *o, const char *path, struct sbx_map_cfg *m, char *err, size_t errlen)
{
	const cJSON *it, *n = cJSON_GetObjectItemCaseSensitive(o, "count"), *d = cJSON_GetObjectItemCaseSensitive(o, "digest");
	char *end;

	cJSON_ArrayForEach(it, o) {
		int k;

		for (k = 0; summary_keys[k] && strcmp(summary_keys[k], it->string); k++)
			;
		if (!summary_keys[k])
			return fail(err, errlen, "%s.%s: unknown key (rules are an array of rules)", path, it->string);
	}
	if (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble > SBX_MAP_MAX_RULES ||
	    n->valuedouble != (double)(uint32_t)n->valuedouble)
		return fail(err, errlen, "%s.count: a number of rules 0..%u", path, SBX_MAP_MAX_RULES);
	if (!cJSON_IsString(d) || strlen(d->valuestring) != 16 || strspn(d->valuestring, "0123456789abcdef") != 16)
		return fail(err, errlen, "%s.digest: 16 lowercase hex digits", path);
	m->nb_rules = (uint32_t)n->valuedouble;
	m->rules_digest = strtoull(d->valuestring, &end, 16);
	return 0;
}

/* Map @p i at @p obj into cfg->maps[i] (maps 0..i-1 parsed); *@p total counts the rules so far. */
static int parse_map(const cJSON *obj, int i, struct sbx_config *cfg, uint32_t *total, bool file, char *err,
		     size_t errlen)
{
	struct sbx_map_cfg *m = &cfg->maps[i];
	const cJSON *rules, *col;
	char path[24], rpath[40];
	int j;

	snprintf(path, sizeof(path), "maps[%d]", i);
	if (!cJSON_IsObject(obj))
		return fail(err, errlen, "%s: expected an object", path);
	if (sbx_config_session_parse(obj, path, map_extra_keys, cfg, &m->s, err, errlen) != 0)
		return -1;
	for (j = 0; j < i; j++) {
		if (cfg->maps[j].s.id == m->s.id)
			return fail(err, errlen, "%s.id: duplicate session id %u (see maps[%d])", path, m->s.id, j);
		if (!strcmp(cfg->maps[j].s.name, m->s.name))
			return fail(err, errlen, "%s.name: duplicate session name \"%s\" (see maps[%d])", path, m->s.name, j);
	}
	if (m->s.dst_kind == SBX_DST_RECORDER)
		return fail(err, errlen, "%s.destination.recorder: not for a map (a port or a group)", path);
	col = cJSON_GetObjectItemCaseSensitive(obj, "collector");
	if (col != NULL && !cJSON_IsBool(col))
		return fail(err, errlen, "%s.collector: expected true or false", path);
	m->collector = cJSON_IsTrue(col);
	rules = cJSON_GetObjectItemCaseSensitive(obj, "rules");
	snprintf(rpath, sizeof(rpath), "%s.rules", path);
	if (cJSON_IsObject(rules)) {
		if (file)
			return fail(err, errlen, "%s: %s", rpath, summary_in_file);
		if (parse_summary(rules, rpath, m, err, errlen) != 0)
			return -1;
	} else if (rules != NULL) {
		struct sbx_map_rules r = {0};

		if (sbx_map_rules_parse(rules, rpath, &r, err, errlen) != 0)
			return -1;
		m->nb_rules = r.n;
		m->rules_digest = sbx_config_maps_digest(&r);
		sbx_map_rules_free(&r);
	} else {
		struct sbx_map_rules none = {0};

		m->rules_digest = sbx_config_maps_digest(&none);
	}
	if (m->collector && m->nb_rules)
		return fail(err, errlen, "%s: a collector takes the frames no other map passed: it has no rules", rpath);
	*total += m->nb_rules;
	if (*total > SBX_MAP_MAX_RULES)
		return fail(err, errlen, "%s: %u rules in maps[0..%d], at most %u in all", rpath, *total, i,
			    SBX_MAP_MAX_RULES);
	return 0;
}

int sbx_config_maps_parse(const cJSON *root, struct sbx_config *cfg, bool file, char *err, size_t errlen)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "maps"), *it;
	uint32_t total = 0;
	int i = 0;

	cfg->nb_maps = 0;
	if (arr == NULL)
		return 0;
	if (!cJSON_IsArray(arr))
		return fail(err, errlen, "maps: expected an array");
	if (cJSON_GetArraySize(arr) > SBX_MAX_MAPS)
		return fail(err, errlen, "maps: %d entries, at most %d", cJSON_GetArraySize(arr), SBX_MAX_MAPS);
	cJSON_ArrayForEach(it, arr) {
		if (parse_map(it, i, cfg, &total, file, err, errlen) != 0)
			return -1;
		i++;
	}
	cfg->nb_maps = (uint16_t)i;
	return 0;
}

/* The summary that stands for a map's rules in the memzone document: {"count": n, "digest": "<16 hex>"}. */
static cJSON *summary(uint32_t n, uint64_t digest)
{
	cJSON *s = cJSON_CreateObject();
	char hex[20];

	snprintf(hex, sizeof(hex), "%016" PRIx64, digest);
	if (s == NULL || !cJSON_AddNumberToObject(s, "count", n) || !cJSON_AddStringToObject(s, "digest", hex)) {
		cJSON_Delete(s);
		return NULL;
	}
	return s;
}

/* Replace the rule array of map object @p m by its summary; the parsed rules into @p r when not NULL. */
static int summarise(cJSON *m, int i, struct sbx_map_rules *r, char *err, size_t errlen)
{
	cJSON *rules = cJSON_GetObjectItemCaseSensitive(m, "rules"), *s;
	struct sbx_map_rules tmp = {0};
	char path[40];

	snprintf(path, sizeof(path), "maps[%d].rules", i);
	if (r == NULL)
		r = &tmp;
	memset(r, 0, sizeof(*r));
	if (cJSON_IsObject(rules))
		return fail(err, errlen, "%s: %s", path, summary_in_file);
	if (rules != NULL && sbx_map_rules_parse(rules, path, r, err, errlen) != 0)
		return -1;
	s = summary(r->n, sbx_config_maps_digest(r));
	if (s == NULL) {
		sbx_map_rules_free(r);
		return fail(err, errlen, "%s: out of memory", path);
	}
	sbx_map_rules_free(&tmp);
	cJSON_DeleteItemFromObjectCaseSensitive(m, "rules");
	cJSON_AddItemToObject(m, "rules", s);
	return 0;
}

bool sbx_config_maps_fits(const char *text, size_t max)
{
	cJSON *doc = cJSON_Parse(text), *maps = doc ? cJSON_GetObjectItemCaseSensitive(doc, "maps") : NULL, *m;
	bool arrays = false, fits = false;
	char *out;

	if (!cJSON_IsArray(maps))
		maps = NULL;
	cJSON_ArrayForEach(m, maps) {
		cJSON *rules = cJSON_GetObjectItemCaseSensitive(m, "rules");

		/* as summarise() will store it (a map without rules gets one too): the same length, any digest */
		if (cJSON_IsArray(rules)) {
			arrays = true;
			cJSON_ReplaceItemInObjectCaseSensitive(m, "rules", summary((uint32_t)cJSON_GetArraySize(rules), 0));
		} else if (rules == NULL && cJSON_IsObject(m)) {
			cJSON_AddItemToObject(m, "rules", summary(0, 0));
		}
	}
	if (arrays && (out = cJSON_PrintUnformatted(doc)) != NULL) {
		fits = strlen(out) <= max;
		free(out);
	}
	cJSON_Delete(doc);
	return fits;
}

char *sbx_config_maps_take(const char *text, struct sbx_map_rules tables[SBX_MAX_MAPS], uint16_t *nb, char *err,
			   size_t errlen)
{
	cJSON *doc = cJSON_Parse(text), *maps, *m;
	char *out = NULL;
	int i = 0;

	*nb = 0;
	if (doc == NULL) {
		fail(err, errlen, "config: not JSON");
		return NULL;
	}
	maps = cJSON_GetObjectItemCaseSensitive(doc, "maps");
	if (!cJSON_IsArray(maps))
		maps = NULL;
	cJSON_ArrayForEach(m, maps) {
		if (i >= SBX_MAX_MAPS || summarise(m, i, &tables[i], err, errlen) != 0)
			goto fail;
		*nb = (uint16_t)++i;
	}
	out = cJSON_PrintUnformatted(doc); /* as sbx_config_maps_fits measured it */
	if (out == NULL)
		fail(err, errlen, "config: out of memory");
	cJSON_Delete(doc);
	if (out != NULL)
		return out;
	i = *nb;
fail:
	while (i-- > 0)
		sbx_map_rules_free(&tables[i]);
	*nb = 0;
	cJSON_Delete(doc);
	return NULL;
}
