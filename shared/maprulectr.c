/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-rule counters of the maps (include/spanbox/maprulectr.h, docs/MAPS.md "Per-rule counters"). */
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "spanbox/maprulectr.h"

struct sbx_rule_ctrs *sbx_rule_ctrs_alloc(const uint32_t *n, uint32_t nb_maps, uint32_t nb_workers, int socket)
{
	struct sbx_rule_ctrs *c;
	uint64_t entries = 0, size;

	if (nb_maps > SBX_MAX_MAPS)
		return NULL;
	c = rte_zmalloc_socket("sbx_rule_ctrs", sizeof(*c), RTE_CACHE_LINE_SIZE, socket);
	if (c == NULL)
		return NULL;
	for (uint32_t j = 0; j < nb_maps; j++) {
		c->first[j] = (uint32_t)entries;
		c->n[j] = n[j];
		entries += n[j];
	}
	c->nb_maps = nb_maps;
	c->nb_rows = nb_workers;
	/* a row is whole cache lines: no two workers write one line */
	c->row_stride = RTE_ALIGN_CEIL(entries ? entries : 1, RTE_CACHE_LINE_SIZE / sizeof(struct sbx_rule_ctr));
	size = (uint64_t)(nb_workers + 1) * c->row_stride * sizeof(struct sbx_rule_ctr);
	c->rows = rte_zmalloc_socket("sbx_rule_ctr_rows", size, RTE_CACHE_LINE_SIZE, socket);
	if (c->rows == NULL) {
		rte_free(c);
		return NULL;
	}
	return c;
}

void sbx_rule_ctrs_free(struct sbx_rule_ctrs *c)
{
	if (c == NULL)
		return;
	rte_free(c->rows);
	rte_free(c);
}

struct sbx_rule_ctr sbx_rule_ctrs_total(const struct sbx_rule_ctrs *c, uint32_t j, uint32_t i)
{
	struct sbx_rule_ctr t = { 0, 0 };

	if (c == NULL || j >= c->nb_maps || i >= c->n[j])
		return t;
	for (uint32_t w = 0; w <= c->nb_rows; w++) {
		const volatile struct sbx_rule_ctr *e = &c->rows[w * c->row_stride + c->first[j] + i];

		t.packets += e->packets;
		t.bytes += e->bytes;
	}
	return t;
}

/* Two parsed rules equal (field by field: the struct has padding). */
static int rule_eq(const struct sbx_map_rule *a, const struct sbx_map_rule *b)
{
	return a->action == b->action && a->family == b->family && a->used == b->used &&
	       memcmp(a->f, b->f, sizeof(a->f)) == 0;
}

uint32_t sbx_map_rules_kept(const struct sbx_map_rules *old, const struct sbx_map_rules *nw, uint32_t *from)
{
	uint32_t p = 0, s = 0, on = old != NULL ? old->n : 0, i;

	for (i = 0; i < nw->n; i++)
		from[i] = SBX_RULE_NEW;
	while (p < on && p < nw->n && rule_eq(&old->rule[p], &nw->rule[p])) {
		from[p] = p;
		p++;
	}
	while (s < on - p && s < nw->n - p && rule_eq(&old->rule[on - 1 - s], &nw->rule[nw->n - 1 - s])) {
		from[nw->n - 1 - s] = on - 1 - s;
		s++;
	}
	return p + s;
}

size_t sbx_rule_ctrs_bytes(const struct sbx_rule_ctrs *c)
{
	return c == NULL ? 0 : sizeof(*c) + ((size_t)c->nb_rows + 1) * c->row_stride * sizeof(struct sbx_rule_ctr);
}
