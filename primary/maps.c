/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The maps' rule tables and classifiers in the primary (issue #27, docs/MAPS.md "Live changes"):
 * the tables are taken out of the config document at start (they do not go into the memzone's
 * 64 KiB document, config_maps.h), and the rte_acl contexts are built from them off the data path,
 * in shared memory: one classifier per source port whose categories are the maps with a source on
 * it (collectors excepted: they have no rules).
 *
 * Generations: the classifiers of the runtime tables' generation g are in tables[g & 1].maps
 * (shm.h). A change of `maps` (mgmt, SBX_IPC_TABLES) builds a new set of tables and contexts
 * (new rte_acl names: mapacl.c numbers them) on the tables thread before the buffer is published;
 * the set it replaced is freed only once every worker passed a quiescent state after the
 * publication (tables.c calls sbx_maps_retire_done after the grace period, or at the next change
 * when a worker was late). The rules of that set are kept one generation longer (host memory
 * only), so that a change undone (mgmt's compensation: the previous document again) finds them.
 *
 * The rules of a changed map travel from mgmt in a file of the EAL runtime directory
 * (SBX_MAPS_STAGING_FILE: {"request_id": N, "maps": [{"id": .., "rules": [..]}]}), the document in
 * the staging area holds their summary ({"count", "digest"}); a map whose summary names rules the
 * primary holds (by digest) keeps them. The running tables are written, as given, to
 * SBX_MAPS_RUNNING_FILE after every change, for mgmt's GET of the rules.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <rte_eal.h>
#include <rte_lcore.h>

#include "spanbox/config_maps.h"
#include "spanbox/mapacl.h"
#include "spanbox/maprulectr.h"
#include "primary.h"

/* One set of rule tables (cfg.maps[j] -> tables[j]) and the classifiers built from it. */
struct mapset {
	uint16_t nb;
	struct sbx_map_rules tables[SBX_MAX_MAPS];
	uint64_t digest[SBX_MAX_MAPS];
	uint16_t id[SBX_MAX_MAPS];
	char *rules_json[SBX_MAX_MAPS]; /* the rule array as given (printed), for the running file */
	struct sbx_maps_acl acl;
	bool acl_live;                  /* acl holds contexts this set owns */
	/* per-rule counters (maprulectr.h): freed with the set, one generation after its contexts
	 * (mgmt reads the active tables' block without taking part in the grace period) */
	struct sbx_rule_ctrs *ctr;
	/* until the set it replaced is retired (sbx_rule_ctrs_fold): per entry of ctr, the entry of
	 * the same rule in that set's block (SBX_RULE_NEW: none) and its total when this set was built */
	uint32_t *from;
	struct sbx_rule_ctr *snap;
};

static struct mapset *taken;   /* the file's (or store's) tables, between sbx_maps_take and build */
static struct mapset *cur;     /* the active generation's */
static struct mapset *pending; /* built for the generation being published */
static struct mapset *retired; /* replaced by cur: its contexts freed after the grace period */
static struct mapset *last;    /* the set before cur, rules only (a change undone finds them) */

static void set_free_acl(struct mapset *s)
{
	if (s == NULL || !s->acl_live)
		return;
	for (uint16_t p = 0; p < SBX_MAX_PORTS; p++)
		sbx_mapacl_free(s->acl.acl[p]);
	memset(&s->acl, 0, sizeof(s->acl));
	s->acl_live = false;
}

static void set_free(struct mapset *s)
{
	if (s == NULL)
		return;
	set_free_acl(s);
	sbx_rule_ctrs_free(s->ctr);
	free(s->from);
	free(s->snap);
	for (uint16_t j = 0; j < s->nb; j++) {
		sbx_map_rules_free(&s->tables[j]);
		free(s->rules_json[j]);
	}
	free(s);
}

/* The running file: {"gen": g, "maps": [{"id": .., "rules": [..]}]} (tmp + rename: read whole). */
static void write_running(const struct mapset *s, uint64_t gen)
{
	char path[512], tmp[520];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", rte_eal_get_runtime_dir(), SBX_MAPS_RUNNING_FILE);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f == NULL)
		return;
	fprintf(f, "{\"gen\":%" PRIu64 ",\"maps\":[", gen);
	for (uint16_t j = 0; s != NULL && j < s->nb; j++)
		fprintf(f, "%s{\"id\":%u,\"rules\":%s}", j ? "," : "", s->id[j],
			s->rules_json[j] ? s->rules_json[j] : "[]");
	fputs("]}\n", f);
	if (fclose(f) == 0)
		rename(tmp, path);
	else
		unlink(tmp);
}

int sbx_maps_take(char **json, char *err, size_t errlen)
{
	struct mapset *s = calloc(1, sizeof(*s));
	cJSON *doc = cJSON_Parse(*json), *m;
	char *out;
	int i = 0;

	if (s == NULL || doc == NULL) {
		snprintf(err, errlen, "maps: out of memory");
		free(s);
		cJSON_Delete(doc);
		return -1;
	}
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(doc, "maps")) {
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(m, "rules"), *id = cJSON_GetObjectItemCaseSensitive(m, "id");

		if (i >= SBX_MAX_MAPS)
			break;
		s->rules_json[i] = cJSON_IsArray(r) ? cJSON_PrintUnformatted(r) : strdup("[]");
		s->id[i] = cJSON_IsNumber(id) ? (uint16_t)id->valuedouble : 0;
		i++;
	}
	cJSON_Delete(doc);
	out = sbx_config_maps_take(*json, s->tables, &s->nb, err, errlen);
	if (out == NULL) {
		set_free(s);
		return -1;
	}
	for (uint16_t j = 0; j < s->nb; j++)
		s->digest[j] = sbx_config_maps_digest(&s->tables[j]);
	free(*json);
	*json = out;
	set_free(taken);
	taken = s;
	return 0;
}

/* Whether map @p m has a source on port @p port (either direction). */
static bool map_on(const struct sbx_map_cfg *m, uint16_t port)
{
	for (uint16_t k = 0; k < m->s.nb_sources; k++)
		if (m->s.sources[k].port == port)
			return true;
	return false;
}

/* Build the classifiers of set @p s for the maps of @p cfg into s->acl; stats into @p ms. */
static int set_build(struct mapset *s, const struct sbx_config *cfg, struct sbx_maps_shm *ms, char *err, size_t errlen)
{
	struct sbx_maps_port_build pb[SBX_MAX_PORTS];
	uint64_t build_ns = 0, memory = 0;
	uint32_t contexts = 0;

	memset(pb, 0, sizeof(pb));
	memset(&s->acl, 0, sizeof(s->acl));
	s->acl_live = true;
	for (uint16_t port = 0; port < cfg->nb_ports; port++) {
		struct sbx_map_rules sel[SBX_MAX_MAPS];
		struct sbx_mapacl_opts o = { .socket_id = (int)rte_socket_id() };
		struct sbx_mapacl_stats st;
		uint16_t n = 0;

		for (uint16_t j = 0; j < cfg->nb_maps; j++)
			if (!cfg->maps[j].collector && map_on(&cfg->maps[j], port)) {
				s->acl.cols[port][n] = j;
				sel[n++] = s->tables[j];
			}
		s->acl.nb_cols[port] = n;
		if (n == 0)
			continue;
		s->acl.acl[port] = sbx_mapacl_build(sel, n, &o, &st, err, errlen);
		if (s->acl.acl[port] == NULL) {
			char why[400];

			snprintf(why, sizeof(why), "%s", err);
			snprintf(err, errlen, "maps: the classifier of port %s: %s", cfg->ports[port].name, why);
			set_free_acl(s);
			return -1;
		}
		build_ns += st.build_ns;
		memory += st.memory;
		contexts += st.contexts;
		pb[port] = (struct sbx_maps_port_build){ .build_ns = st.build_ns, .memory = st.memory,
							 .contexts = st.contexts, .maps = n };
		for (uint16_t k = 0; k < n; k++)
			pb[port].rules += sel[k].n;
	}
	{
		uint32_t n[SBX_MAX_MAPS] = { 0 };

		for (uint16_t j = 0; j < cfg->nb_maps && j < s->nb; j++)
			n[j] = s->tables[j].n;
		sbx_rule_ctrs_free(s->ctr);
		s->ctr = sbx_rule_ctrs_alloc(n, cfg->nb_maps, cfg->nb_workers, (int)rte_socket_id());
		if (s->ctr == NULL) {
			snprintf(err, errlen, "maps: out of memory for the per-rule counters (%u workers)", cfg->nb_workers);
			set_free_acl(s);
			return -1;
		}
		s->acl.ctr = s->ctr;
	}
	if (ms != NULL) {
		ms->build_ns = build_ns;
		ms->memory = memory;
		ms->contexts = contexts;
		memset(ms->nb_rules, 0, sizeof(ms->nb_rules));
		for (uint16_t j = 0; j < s->nb; j++)
			ms->nb_rules[j] = s->tables[j].n;
		memcpy(ms->port, pb, sizeof(ms->port));
		ms->counters_bytes = sbx_rule_ctrs_bytes(s->ctr);
		ms->built_at_ns = sbx_realtime_ns();
		ms->builds++;
	}
	return 0;
}

/* Entry @p e of @p c summed over every row (the carried one included). */
static struct sbx_rule_ctr entry_total(const struct sbx_rule_ctrs *c, uint32_t e)
{
	struct sbx_rule_ctr t = { 0, 0 };

	for (uint32_t w = 0; w <= c->nb_rows; w++) {
		const volatile struct sbx_rule_ctr *x = &c->rows[w * c->row_stride + e];

		t.packets += x->packets;
		t.bytes += x->bytes;
	}
	return t;
}

/*
 * The rules set @p s keeps from @p old (the active set it will replace): each map of the same id
 * keeps the counters of its unchanged rules (sbx_map_rules_kept). What they counted in @p old so
 * far goes into s's carried row now (before s is published: the totals never go back); what
 * they count there until the workers leave @p old is added by ctr_fold after the grace period.
 */
static int ctr_carry(struct mapset *s, const struct mapset *old)
{
	struct sbx_rule_ctrs *c = s->ctr;
	uint64_t entries = 0;
	uint32_t *from1;

	if (old == NULL || old->ctr == NULL || c == NULL)
		return 0;
	for (uint32_t j = 0; j < c->nb_maps; j++)
		entries += c->n[j];
	s->from = malloc(sizeof(*s->from) * (entries ? entries : 1));
	s->snap = calloc(entries ? entries : 1, sizeof(*s->snap));
	from1 = malloc(sizeof(*from1) * SBX_MAP_MAX_RULES);
	if (s->from == NULL || s->snap == NULL || from1 == NULL) {
		free(from1);
		return -1;
	}
	for (uint64_t e = 0; e < entries; e++)
		s->from[e] = SBX_RULE_NEW;
	for (uint32_t j = 0; j < c->nb_maps && j < s->nb; j++)
		for (uint16_t jo = 0; jo < old->nb && jo < old->ctr->nb_maps; jo++) {
			if (old->id[jo] != s->id[j])
				continue;
			sbx_map_rules_kept(&old->tables[jo], &s->tables[j], from1);
			for (uint32_t i = 0; i < s->tables[j].n; i++) {
				const uint32_t e = c->first[j] + i;

				if (from1[i] == SBX_RULE_NEW)
					continue;
				s->from[e] = old->ctr->first[jo] + from1[i];
				s->snap[e] = entry_total(old->ctr, s->from[e]);
				c->rows[c->nb_rows * c->row_stride + e] = s->snap[e];
			}
			break;
		}
	free(from1);
	return 0;
}

/* @p old's workers are gone (its grace period ended): what the rules @p s kept from it counted
 * there since ctr_carry goes into s's carried row; then s no longer needs old's block. */
static void ctr_fold(struct mapset *s, const struct mapset *old)
{
	struct sbx_rule_ctrs *c = s->ctr;
	uint64_t entries = 0;

	if (c == NULL || s->from == NULL || old == NULL || old->ctr == NULL)
		return;
	for (uint32_t j = 0; j < c->nb_maps; j++)
		entries += c->n[j];
	for (uint64_t e = 0; e < entries; e++) {
		if (s->from[e] == SBX_RULE_NEW)
			continue;
		struct sbx_rule_ctr t = entry_total(old->ctr, s->from[e]);
		volatile struct sbx_rule_ctr *x = &c->rows[c->nb_rows * c->row_stride + e];

		x->packets += t.packets - s->snap[e].packets;
		x->bytes += t.bytes - s->snap[e].bytes;
	}
	free(s->from);
	free(s->snap);
	s->from = NULL;
	s->snap = NULL;
}

int sbx_maps_build(struct sbx_primary *p)
{
	const struct sbx_config *cfg = &p->shm->cfg;
	struct sbx_maps_shm *ms = &p->shm->maps;
	struct mapset *s = taken != NULL ? taken : calloc(1, sizeof(*s));
	uint32_t rules = 0;
	char err[512];

	taken = NULL;
	memset(ms, 0, sizeof(*ms));
	if (s == NULL)
		return -1;
	cur = s;
	if (s->nb != cfg->nb_maps) {
		fprintf(stderr, "spanbox-primary: maps: %u rule tables for %u maps\n", s->nb, cfg->nb_maps);
		return -1;
	}
	for (uint16_t j = 0; j < s->nb; j++)
		rules += s->tables[j].n;
	if (set_build(s, cfg, ms, err, sizeof(err)) != 0) {
		fprintf(stderr, "spanbox-primary: %s\n", err);
		return -1;
	}
	p->shm->tables[0].maps = s->acl; /* generation 0 (sbx_tables_init ran) */
	p->shm->tables[1].maps = s->acl;
	for (uint16_t j = 0; j < SBX_MAX_MAPS; j++) /* map j counts into counter set j */
		p->shm->tables[0].mcset[j] = p->shm->tables[1].mcset[j] = j;
	write_running(s, 0);
	if (cfg->nb_maps)
		printf("spanbox-primary: maps: %u maps, %u rules, %u rte_acl contexts built in %.1f ms (%.1f KiB)\n",
		       cfg->nb_maps, rules, ms->contexts, ms->build_ns / 1e6, ms->memory / 1024.0);
	return 0;
}

/* The rules of digest @p d and @p count rules in set @p s (copied into @p out), or -1. */
static int copy_known(const struct mapset *s, uint64_t d, uint32_t count, struct sbx_map_rules *out, char **json)
{
	for (uint16_t j = 0; s != NULL && j < s->nb; j++)
		if (s->digest[j] == d && s->tables[j].n == count) {
			out->n = count;
			out->rule = count ? malloc(sizeof(*out->rule) * count) : NULL;
			if (count && out->rule == NULL)
				return -1;
			if (count)
				memcpy(out->rule, s->tables[j].rule, sizeof(*out->rule) * count);
			*json = strdup(s->rules_json[j] ? s->rules_json[j] : "[]");
			return 0;
		}
	return -1;
}

/* The staging file's rule array of map @p id for request @p req_id, or NULL. */
static cJSON *staged_rules(cJSON *staged, uint16_t id)
{
	cJSON *m;

	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(staged, "maps")) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "id");

		if (cJSON_IsNumber(v) && (uint16_t)v->valuedouble == id)
			return cJSON_GetObjectItemCaseSensitive(m, "rules");
	}
	return NULL;
}

/* The staging file of request @p req_id, parsed; NULL when absent or another request's. */
static cJSON *read_staging(uint64_t req_id)
{
	char path[512], *text = NULL;
	FILE *f;
	long n;
	cJSON *doc = NULL, *r;

	snprintf(path, sizeof(path), "%s/%s", rte_eal_get_runtime_dir(), SBX_MAPS_STAGING_FILE);
	f = fopen(path, "r");
	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && n <= SBX_CONFIG_FILE_MAX && fseek(f, 0, SEEK_SET) == 0 &&
	    (text = malloc((size_t)n + 1)) != NULL && fread(text, 1, (size_t)n, f) == (size_t)n) {
		text[n] = '\0';
		doc = cJSON_Parse(text);
	}
	free(text);
	fclose(f);
	r = cJSON_GetObjectItemCaseSensitive(doc, "request_id");
	if (!cJSON_IsNumber(r) || (uint64_t)r->valuedouble != req_id) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

int sbx_maps_prepare(struct sbx_primary *p, const struct sbx_config *n, const struct sbx_tables *now,
		     uint64_t req_id, struct sbx_maps_acl *out, char *field, size_t flen, char *err, size_t errlen)
{
	struct mapset *s;
	cJSON *staged = NULL;
	int rc = -1;

	field[0] = '\0';
	if (n->nb_maps == now->cfg.nb_maps &&
	    memcmp(n->maps, now->cfg.maps, sizeof(n->maps[0]) * n->nb_maps) == 0) {
		*out = now->maps; /* the same maps: the same classifiers */
		return 0;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(err, errlen, "maps: out of memory");
		return -1;
	}
	for (uint16_t j = 0; j < n->nb_maps; j++) {
		const struct sbx_map_cfg *m = &n->maps[j];
		cJSON *arr;

		s->id[j] = m->s.id;
		s->digest[j] = m->rules_digest;
		s->nb = (uint16_t)(j + 1);
		if (copy_known(cur, m->rules_digest, m->nb_rules, &s->tables[j], &s->rules_json[j]) == 0 ||
		    copy_known(last, m->rules_digest, m->nb_rules, &s->tables[j], &s->rules_json[j]) == 0)
			continue;
		if (staged == NULL)
			staged = read_staging(req_id);
		arr = staged_rules(staged, m->s.id);
		snprintf(field, flen, "maps[%u].rules", j);
		if (arr == NULL) {
			snprintf(err, errlen, "%s: the primary has no rules of digest %016" PRIx64 " (%u rules)", field,
				 m->rules_digest, m->nb_rules);
			goto out;
		}
		if (sbx_map_rules_parse(arr, field, &s->tables[j], err, errlen) != 0)
			goto out;
		if (s->tables[j].n != m->nb_rules || sbx_config_maps_digest(&s->tables[j]) != m->rules_digest) {
			snprintf(err, errlen, "%s: the rules sent do not match their summary (count %u, digest %016" PRIx64 ")",
				 field, m->nb_rules, m->rules_digest);
			goto out;
		}
		s->rules_json[j] = cJSON_PrintUnformatted(arr);
		field[0] = '\0';
	}
	snprintf(field, flen, "maps");
	if (set_build(s, n, &p->shm->maps, err, errlen) != 0)
		goto out;
	if (ctr_carry(s, cur) != 0) {
		snprintf(err, errlen, "maps: out of memory for the per-rule counters");
		goto out;
	}
	field[0] = '\0';
	*out = s->acl;
	set_free(pending);
	pending = s;
	s = NULL;
	rc = 0;
out:
	cJSON_Delete(staged);
	set_free(s);
	return rc;
}

int sbx_maps_assign_csets(struct sbx_primary *p, const struct sbx_tables *old, const struct sbx_config *n,
			  uint16_t *mcset)
{
	bool used[SBX_MAP_COUNTER_SETS] = { false };
	uint16_t i, j, w;

	if (n->nb_maps > SBX_MAX_MAPS || old->cfg.nb_maps > SBX_MAX_MAPS)
		return -1;
	for (j = 0; j < old->cfg.nb_maps; j++) {
		if (old->mcset[j] >= SBX_MAP_COUNTER_SETS)
			return -1;
		used[old->mcset[j]] = true; /* kept, or removed: free only at the next change */
	}
	for (i = 0; i < n->nb_maps; i++) {
		mcset[i] = UINT16_MAX;
		for (j = 0; j < old->cfg.nb_maps; j++)
			if (old->cfg.maps[j].s.id == n->maps[i].s.id)
				mcset[i] = old->mcset[j];
	}
	for (i = 0; i < n->nb_maps; i++) {
		if (mcset[i] != UINT16_MAX)
			continue;
		for (j = 0; j < SBX_MAP_COUNTER_SETS && used[j]; j++)
			;
		if (j >= SBX_MAP_COUNTER_SETS)
			return -1;
		mcset[i] = j;
		used[j] = true;
		/* no worker writes counter set j: the last grace period ended and old uses no map in it */
		for (w = 0; w < SBX_MAX_WORKERS; w++) {
			memset(&sbx_shm_worker(p->shm, w)->stats.map[j], 0, sizeof(sbx_shm_worker(p->shm, w)->stats.map[j]));
			memset(&sbx_shm_worker(p->shm, w)->stats.map_mirror[j], 0, sizeof(sbx_shm_worker(p->shm, w)->stats.map_mirror[j]));
		}
		__atomic_store_n(&p->shm->maps.seq[j].seq_next, 0, __ATOMIC_RELAXED);
	}
	return 0;
}

void sbx_maps_abandon(void)
{
	set_free(pending);
	pending = NULL;
}

void sbx_maps_published(uint64_t gen)
{
	if (pending == NULL) /* the maps did not change */
		return;
	if (retired != NULL) { /* never: the grace period of its generation ended before this change */
		ctr_fold(cur, retired);
		set_free_acl(retired);
		set_free(last);
		last = retired;
	}
	retired = cur;
	cur = pending;
	pending = NULL;
	write_running(cur, gen);
}

void sbx_maps_retire_done(void)
{
	if (retired == NULL)
		return;
	ctr_fold(cur, retired); /* no worker counts there any more */
	set_free_acl(retired); /* no worker reads these contexts any more */
	set_free(last);
	last = retired;
	retired = NULL;
}

void sbx_maps_fini(struct sbx_primary *p)
{
	(void)p;
	set_free(taken);
	set_free(pending);
	set_free(retired);
	set_free(last);
	set_free(cur);
	taken = pending = retired = last = cur = NULL;
}
