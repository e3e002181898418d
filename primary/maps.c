/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The maps' rule tables and classifiers in the primary (issue #27, docs/MAPS.md): the tables are
 * taken out of the config document at start (they do not go into the memzone's 64 KiB document,
 * config_maps.h), and the rte_acl contexts are built from them before the workers start, off the
 * data path, in shared memory: one classifier per source port whose categories are the maps with
 * a source on it (collectors excepted: they have no rules), published in shm->maps (shm.h).
 * Static: the tables and contexts live as long as the primary; a change needs a restart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>

#include "spanbox/config_maps.h"
#include "spanbox/mapacl.h"
#include "primary.h"

static struct sbx_map_rules tables[SBX_MAX_MAPS];
static uint16_t nb_tables;

int sbx_maps_take(char **json, char *err, size_t errlen)
{
	char *out = sbx_config_maps_take(*json, tables, &nb_tables, err, errlen);

	if (out == NULL)
		return -1;
	free(*json);
	*json = out;
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

int sbx_maps_build(struct sbx_primary *p)
{
	const struct sbx_config *cfg = &p->shm->cfg;
	struct sbx_maps_shm *ms = &p->shm->maps;
	uint32_t rules = 0;
	char err[512];

	memset(ms, 0, sizeof(*ms));
	if (cfg->nb_maps == 0)
		return 0;
	if (nb_tables != cfg->nb_maps) {
		fprintf(stderr, "spanbox-primary: maps: %u rule tables for %u maps\n", nb_tables, cfg->nb_maps);
		return -1;
	}
	for (uint16_t j = 0; j < cfg->nb_maps; j++) {
		ms->nb_rules[j] = tables[j].n;
		rules += tables[j].n;
	}
	for (uint16_t port = 0; port < cfg->nb_ports; port++) {
		struct sbx_map_rules sel[SBX_MAX_MAPS];
		struct sbx_mapacl_opts o = { .socket_id = (int)rte_socket_id() };
		struct sbx_mapacl_stats st;
		uint8_t n = 0;

		for (uint16_t j = 0; j < cfg->nb_maps; j++)
			if (!cfg->maps[j].collector && map_on(&cfg->maps[j], port)) {
				ms->cols[port][n] = (uint8_t)j;
				sel[n++] = tables[j];
			}
		ms->nb_cols[port] = n;
		if (n == 0)
			continue;
		ms->acl[port] = sbx_mapacl_build(sel, n, &o, &st, err, sizeof(err));
		if (ms->acl[port] == NULL) {
			fprintf(stderr, "spanbox-primary: maps of port %s: %s\n", cfg->ports[port].name, err);
			return -1;
		}
		ms->build_ns += st.build_ns;
		ms->memory += st.memory;
		ms->contexts += st.contexts;
	}
	printf("spanbox-primary: maps: %u maps, %u rules, %u rte_acl contexts built in %.1f ms (%.1f KiB)\n",
	       cfg->nb_maps, rules, ms->contexts, ms->build_ns / 1e6, ms->memory / 1024.0);
	return 0;
}

void sbx_maps_fini(struct sbx_primary *p)
{
	for (uint16_t j = 0; j < nb_tables; j++)
		sbx_map_rules_free(&tables[j]);
	nb_tables = 0;
	if (p->shm == NULL)
		return;
	for (uint16_t port = 0; port < SBX_MAX_PORTS; port++) {
		sbx_mapacl_free(p->shm->maps.acl[port]);
		p->shm->maps.acl[port] = NULL;
	}
}
