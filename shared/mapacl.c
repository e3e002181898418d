/* SPDX-License-Identifier: BSD-3-Clause */
/* The rte_acl classifier of maps (design: include/spanbox/mapacl.h, docs/MAPS.md). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_acl.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "spanbox/mapacl.h"

enum { FAM_V4 = 0, FAM_V6 = 1 };

/* One rte_acl context and which canonical field each of its rte_acl fields is. */
struct actx {
	struct rte_acl_ctx *ctx; /* NULL: no rules, every result 0 */
	char name[RTE_ACL_NAMESIZE]; /* its name in DPDK's RTE_ACL tailq (sbx_mapacl_check_shared) */
	uint32_t nb_fields;
	uint8_t field[SBX_MF_COUNT];
};

/* Up to 16 maps (consecutive): their categories, one context per family (single: c[1] unused).
 * A map whose rules do not fit one context is split into parts: sets of that one map, each with
 * a range [rule_lo, rule_hi) of its rules, in ascending order; a later part (rule_lo > 0) only
 * fills the frames no earlier part matched (its rules come after theirs: first match). */
struct set {
	uint32_t first_map, nb_maps, cats;
	uint32_t rule_lo, rule_hi; /* the rules of the maps in this set: 0, UINT32_MAX but in parts */
	struct actx c[2];
};

/* The end of set @p s's rules in map @p m. */
static uint32_t rules_end(const struct sbx_map_rules *maps, const struct set *s, uint32_t m)
{
	return maps[m].n < s->rule_hi ? maps[m].n : s->rule_hi;
}

struct sbx_mapacl {
	uint32_t nb_maps, stride, nb_sets, cap_sets;
	int single;
	struct set set[];
};

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static size_t heap_bytes(void)
{
	struct rte_malloc_socket_stats s;
	size_t sum = 0;
	unsigned int i;

	for (i = 0; i < rte_socket_count(); i++)
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &s) == 0)
			sum += s.heap_allocsz_bytes;
	return sum;
}

/* rte_acl's category count for @p n maps: 1 or a multiple of RTE_ACL_RESULTS_MULTIPLIER (4). */
static uint32_t cats_for(uint32_t n)
{
	return n <= 1 ? 1 : (n + RTE_ACL_RESULTS_MULTIPLIER - 1) / RTE_ACL_RESULTS_MULTIPLIER * RTE_ACL_RESULTS_MULTIPLIER;
}

/* Is a rule in the context of family @p fam (single: every rule is)? */
static int rule_in(const struct sbx_map_rule *r, int fam, int single)
{
	return single || r->family == 0 || (r->family == 4) == (fam == FAM_V4);
}

/* The groups a context needs: those its rules name, the protocol byte and the flags, the address
 * groups that go with the family; the IPv6 words (groups 9, 11) never in an IPv4 context. */
static uint32_t groups_of(const struct sbx_map_rules *maps, const struct set *s, int fam, int single)
{
	uint32_t g = 1u << 0 | 1u << 1, m, i;
	int f;

	for (m = s->first_map; m < s->first_map + s->nb_maps; m++)
		for (i = s->rule_lo; i < rules_end(maps, s, m); i++) {
			const struct sbx_map_rule *r = &maps[m].rule[i];

			if (!rule_in(r, fam, single))
				continue;
			for (f = 0; f < SBX_MF_COUNT; f++)
				if (r->used & (1u << f))
					g |= 1u << sbx_map_field_defs[f].group;
		}
	if (g & (1u << 4 | 1u << 5 | 1u << 6)) /* the MACs: both hi words and the lo pair, one unit */
		g |= 1u << 4 | 1u << 5 | 1u << 6;
	if (fam == FAM_V6 || single) { /* the four words of an address together */
		if (g & (1u << 8 | 1u << 9))
			g |= 1u << 8 | 1u << 9;
		if (g & (1u << 10 | 1u << 11))
			g |= 1u << 10 | 1u << 11;
	} else {
		g &= ~(1u << 9 | 1u << 11);
	}
	return g;
}

/* The order of the groups in a context's trie: the protocol byte first (rte_acl wants a 1-byte
 * first field), the flags, the exact-or-prefix fields, the range fields (VLANs, ports) last: a range
 * early in the trie multiplies the nodes of every field after it. */
static const uint8_t group_order[] = { 0, 1, 8, 9, 10, 11, 3, 4, 5, 6, 2, 7 };

/* rte_acl field definitions of the groups @p g: u32 fields an input index each, the smaller fields
 * of one group share one (4 bytes). */
static void field_defs(struct actx *c, uint32_t g, struct rte_acl_config *cfg)
{
	uint32_t input = 0, o;
	int f;

	c->nb_fields = 0;
	for (o = 0; o < sizeof(group_order); o++) {
		int first_of_group = 1;

		if (!(g & (1u << group_order[o])))
			continue;
		for (f = 0; f < SBX_MF_COUNT; f++) {
			const struct sbx_map_field_def *d = &sbx_map_field_defs[f];
			struct rte_acl_field_def *a = &cfg->defs[c->nb_fields];

			if (d->group != group_order[o])
				continue;
			if (c->nb_fields > 0 && (d->size == 4 || first_of_group))
				input++;
			first_of_group = 0;
			a->type = d->type;
			a->size = d->size;
			a->field_index = (uint8_t)c->nb_fields;
			a->input_index = (uint8_t)input;
			a->offset = d->offset;
			c->field[c->nb_fields++] = (uint8_t)f;
		}
	}
	cfg->num_fields = c->nb_fields;
}

static int build_ctx(const struct sbx_map_rules *maps, struct set *s, int fam, int single,
		     const struct sbx_mapacl_opts *o, struct sbx_mapacl_stats *st, char *err, size_t errlen)
{
	static atomic_uint seq;
	struct actx *c = &s->c[fam];
	struct rte_acl_config cfg;
	struct rte_acl_param prm;
	char name[RTE_ACL_NAMESIZE];
	uint32_t n = 0, m, i, j, k = 0;
	size_t rsz;
	uint8_t *rules;
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	field_defs(c, groups_of(maps, s, fam, single), &cfg);
	for (m = s->first_map; m < s->first_map + s->nb_maps; m++)
		for (i = s->rule_lo; i < rules_end(maps, s, m); i++)
			n += (uint32_t)rule_in(&maps[m].rule[i], fam, single);
	if (n == 0)
		return 0;
	rsz = RTE_ACL_RULE_SZ(c->nb_fields);
	rules = calloc(n, rsz);
	if (rules == NULL) {
		snprintf(err, errlen, "maps: out of memory for %u rules", n);
		return -1;
	}
	for (m = s->first_map; m < s->first_map + s->nb_maps; m++)
		for (i = s->rule_lo; i < rules_end(maps, s, m); i++) {
			const struct sbx_map_rule *r = &maps[m].rule[i];
			struct rte_acl_rule *a = (struct rte_acl_rule *)(rules + rsz * k);

			if (!rule_in(r, fam, single))
				continue;
			a->data.category_mask = 1u << (m - s->first_map);
			a->data.priority = (int32_t)(SBX_MAP_MAX_RULES - i);
			a->data.userdata = (i + 1) | (uint32_t)r->action << 31;
			for (j = 0; j < c->nb_fields; j++) {
				a->field[j].value.u64 = 0;
				a->field[j].mask_range.u64 = 0;
				switch (sbx_map_field_defs[c->field[j]].size) {
				case 1:
					a->field[j].value.u8 = (uint8_t)r->f[c->field[j]].value;
					a->field[j].mask_range.u8 = (uint8_t)r->f[c->field[j]].mask_range;
					break;
				case 2:
					a->field[j].value.u16 = (uint16_t)r->f[c->field[j]].value;
					a->field[j].mask_range.u16 = (uint16_t)r->f[c->field[j]].mask_range;
					break;
				default:
					a->field[j].value.u32 = r->f[c->field[j]].value;
					a->field[j].mask_range.u32 = r->f[c->field[j]].mask_range;
				}
			}
			k++;
		}
	snprintf(name, sizeof(name), "sbxmap%u", atomic_fetch_add(&seq, 1));
	memcpy(c->name, name, sizeof(c->name));
	prm = (struct rte_acl_param){ .name = name, .socket_id = o && o->socket_id ? o->socket_id : SOCKET_ID_ANY,
				      .rule_size = (uint32_t)rsz, .max_rule_num = n };
	c->ctx = rte_acl_create(&prm);
	if (c->ctx == NULL) {
		free(rules);
		snprintf(err, errlen, "maps: rte_acl_create: %s", rte_strerror(rte_errno));
		return -1;
	}
	rc = rte_acl_add_rules(c->ctx, (const struct rte_acl_rule *)rules, n);
	free(rules);
	cfg.num_categories = s->cats;
	cfg.max_size = o ? o->max_size : 0;
	if (rc == 0)
		rc = rte_acl_build(c->ctx, &cfg);
	if (rc != 0) {
		snprintf(err, errlen, "maps: rte_acl build of %u rules: %s", n, strerror(-rc));
		return -1;
	}
	if (o && o->alg && (rc = rte_acl_set_ctx_classify(c->ctx, (enum rte_acl_classify_alg)o->alg)) != 0) {
		snprintf(err, errlen, "maps: rte_acl classify algorithm %d: %s", o->alg, strerror(-rc));
		return -1;
	}
	if (st) {
		st->contexts++;
		st->acl_rules += n;
	}
	return 0;
}

static void free_set(struct set *x)
{
	rte_acl_free(x->c[0].ctx);
	rte_acl_free(x->c[1].ctx);
	memset(x, 0, sizeof(*x));
}

/* The maps first..first+n-1 (of one map: its rules lo..hi-1) into the next set(s): one set when
 * rte_acl builds them, else the two halves apart (rte_acl gives up past 8 tries: rules of many maps
 * with different fields); one map's rules, in halves of its rules (parts). */
static int build_sets(struct sbx_mapacl *a, const struct sbx_map_rules *maps, uint32_t first, uint32_t n,
		      uint32_t lo, uint32_t hi, const struct sbx_mapacl_opts *o, struct sbx_mapacl_stats *st, char *err,
		      size_t errlen)
{
	struct set *x;
	struct sbx_mapacl_stats before = st ? *st : (struct sbx_mapacl_stats){0};

	if (a->nb_sets >= a->cap_sets) {
		snprintf(err, errlen, "maps[%u]: more than %u rte_acl context sets", first, a->cap_sets);
		return -1;
	}
	x = &a->set[a->nb_sets];
	x->first_map = first;
	x->nb_maps = n;
	x->cats = cats_for(n);
	x->rule_lo = lo;
	x->rule_hi = hi;
	if (build_ctx(maps, x, FAM_V4, a->single, o, st, err, errlen) == 0 &&
	    (a->single || build_ctx(maps, x, FAM_V6, a->single, o, st, err, errlen) == 0)) {
		a->nb_sets++;
		if (st && a->nb_sets == 1) {
			st->fields[0] = x->c[FAM_V4].nb_fields;
			st->fields[1] = a->single ? x->c[FAM_V4].nb_fields : x->c[FAM_V6].nb_fields;
		}
		return 0;
	}
	free_set(x);
	if (st)
		*st = before;
	if (n == 1 && (o == NULL || o->max_size == 0)) {
		/* one map past 8 tries at rte_acl's smallest node limit: the largest limit (fewer, bigger
		 * tries; max_size bounds the memory) before giving up */
		struct sbx_mapacl_opts big = o ? *o : (struct sbx_mapacl_opts){0};

		big.max_size = SBX_MAPACL_RETRY_MAX_SIZE;
		x->first_map = first; /* free_set() cleared the set */
		x->nb_maps = n;
		x->cats = cats_for(n);
		x->rule_lo = lo;
		x->rule_hi = hi;
		if (build_ctx(maps, x, FAM_V4, a->single, &big, st, err, errlen) == 0 &&
		    (a->single || build_ctx(maps, x, FAM_V6, a->single, &big, st, err, errlen) == 0)) {
			a->nb_sets++;
			if (st) {
				st->retries++;
				if (a->nb_sets == 1) {
					st->fields[0] = x->c[FAM_V4].nb_fields;
					st->fields[1] = a->single ? x->c[FAM_V4].nb_fields : x->c[FAM_V6].nb_fields;
				}
			}
			return 0;
		}
		free_set(x);
		if (st)
			*st = before;
	}
	if (n == 1) {
		const uint32_t end = maps[first].n < hi ? maps[first].n : hi, mid = lo + (end - lo) / 2;
		char why[200];

		if (end - lo >= 2) { /* the map's rules in two parts, each looked up (docs/MAPS.md "Design") */
			if (st)
				st->parts++;
			return build_sets(a, maps, first, 1, lo, mid, o, st, err, errlen) ||
			       build_sets(a, maps, first, 1, mid, end, o, st, err, errlen);
		}
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "maps[%u]: rule %u does not fit an rte_acl context (%s)", first, lo, why);
		return -1;
	}
	if (st)
		st->splits++;
	return build_sets(a, maps, first, n / 2, 0, UINT32_MAX, o, st, err, errlen) ||
	       build_sets(a, maps, first + n / 2, n - n / 2, 0, UINT32_MAX, o, st, err, errlen);
}

struct sbx_mapacl *sbx_mapacl_build(const struct sbx_map_rules *maps, uint32_t nb_maps,
				    const struct sbx_mapacl_opts *o, struct sbx_mapacl_stats *st,
				    char *err, size_t errlen)
{
	struct sbx_mapacl *a;
	size_t mem0 = heap_bytes();
	uint64_t t0 = now_ns();
	uint32_t m, s;

	if (st)
		memset(st, 0, sizeof(*st));
	/* rte_malloc memory: a secondary process may classify with it (sbx_mapacl_check_shared) */
	/* a set per map at most, and the parts of maps split by their rules (SBX_MAPACL_MAX_PARTS in all) */
	a = rte_zmalloc("sbx_mapacl", sizeof(*a) + (nb_maps + SBX_MAPACL_MAX_PARTS) * sizeof(a->set[0]), 0);
	if (a == NULL) {
		snprintf(err, errlen, "maps: out of memory");
		return NULL;
	}
	a->cap_sets = nb_maps + SBX_MAPACL_MAX_PARTS;
	a->nb_maps = nb_maps;
	a->single = o && o->single;
	for (m = 0; m < nb_maps; m += SBX_MAPACL_MAPS_PER_CTX)
		if (build_sets(a, maps, m, nb_maps - m < SBX_MAPACL_MAPS_PER_CTX ? nb_maps - m : SBX_MAPACL_MAPS_PER_CTX,
			       0, UINT32_MAX, o, st, err, errlen) != 0) {
			sbx_mapacl_free(a);
			return NULL;
		}
	a->stride = 1;
	for (s = 0; s < a->nb_sets; s++)
		if (a->set[s].first_map + a->set[s].cats > a->stride)
			a->stride = a->set[s].first_map + a->set[s].cats;
	if (st) {
		st->sets = a->nb_sets;
		st->build_ns = now_ns() - t0;
		st->memory = heap_bytes() - mem0;
	}
	return a;
}

void sbx_mapacl_free(struct sbx_mapacl *a)
{
	uint32_t s;

	if (a == NULL)
		return;
	for (s = 0; s < a->nb_sets; s++)
		free_set(&a->set[s]);
	rte_free(a);
}

uint32_t sbx_mapacl_stride(const struct sbx_mapacl *a)
{
	return a->stride;
}

/* Classify the @p n keys @p p (all of one context) into tmp, then their rows of @p results. */
static void classify_some(const struct set *x, const struct actx *c, const uint8_t **p, const uint32_t *idx,
			  uint32_t n, uint32_t *results, uint32_t stride, uint32_t col)
{
	uint32_t tmp[SBX_MAPACL_MAX_BURST * RTE_ACL_MAX_CATEGORIES], i;

	if (n == 0)
		return;
	if (x->rule_lo > 0) { /* a later part of one map: only where no earlier part matched */
		if (c->ctx == NULL)
			return;
		rte_acl_classify(c->ctx, p, tmp, n, x->cats);
		for (i = 0; i < n; i++)
			if (results[idx[i] * stride + col] == 0)
				results[idx[i] * stride + col] = tmp[i * x->cats];
		return;
	}
	if (c->ctx == NULL) {
		for (i = 0; i < n; i++)
			memset(&results[idx[i] * stride + col], 0, x->cats * sizeof(uint32_t));
		return;
	}
	rte_acl_classify(c->ctx, p, tmp, n, x->cats);
	for (i = 0; i < n; i++)
		memcpy(&results[idx[i] * stride + col], &tmp[i * x->cats], x->cats * sizeof(uint32_t));
}

int sbx_mapacl_classify(const struct sbx_mapacl *a, const struct sbx_map_key *keys, uint32_t n, uint32_t *results)
{
	const uint8_t *p[2][SBX_MAPACL_MAX_BURST];
	uint32_t idx[2][SBX_MAPACL_MAX_BURST], cnt[2] = {0, 0}, i, s;

	if (n > SBX_MAPACL_MAX_BURST)
		return -1;
	if (a->nb_sets == 0) {
		memset(results, 0, (size_t)n * a->stride * sizeof(uint32_t));
		return 0;
	}
	for (i = 0; i < n; i++) {
		int fam = !a->single && (keys[i].flags & SBX_MAPK_IP6) ? FAM_V6 : FAM_V4;

		p[fam][cnt[fam]] = (const uint8_t *)&keys[i];
		idx[fam][cnt[fam]++] = i;
	}
	/* the common case: one set, one context for the whole burst, results straight into place */
	if (a->nb_sets == 1 && (cnt[FAM_V4] == n || cnt[FAM_V6] == n)) {
		const struct actx *c = &a->set[0].c[cnt[FAM_V4] == n ? FAM_V4 : FAM_V6];

		if (c->ctx)
			rte_acl_classify(c->ctx, p[cnt[FAM_V4] == n ? FAM_V4 : FAM_V6], results, n, a->set[0].cats);
		else
			memset(results, 0, (size_t)n * a->stride * sizeof(uint32_t));
		return 0;
	}
	for (s = 0; s < a->nb_sets; s++) {
		const struct set *x = &a->set[s];

		classify_some(x, &x->c[FAM_V4], p[FAM_V4], idx[FAM_V4], cnt[FAM_V4], results, a->stride, x->first_map);
		classify_some(x, &x->c[FAM_V6], p[FAM_V6], idx[FAM_V6], cnt[FAM_V6], results, a->stride, x->first_map);
	}
	return 0;
}

void sbx_mapacl_dump(const struct sbx_mapacl *a)
{
	uint32_t s;

	for (s = 0; s < a->nb_sets; s++) {
		if (a->set[s].c[0].ctx)
			rte_acl_dump(a->set[s].c[0].ctx);
		if (a->set[s].c[1].ctx)
			rte_acl_dump(a->set[s].c[1].ctx);
	}
}

int sbx_mapacl_check_shared(const struct sbx_mapacl *a, char *err, size_t errlen)
{
	uint32_t s, f;

	for (s = 0; s < a->nb_sets; s++)
		for (f = 0; f < 2; f++) {
			const struct actx *c = &a->set[s].c[f];

			if (c->ctx != NULL && rte_acl_find_existing(c->name) != c->ctx) {
				snprintf(err, errlen, "maps: rte_acl context %s not found in this process", c->name);
				return -1;
			}
		}
	return 0;
}
