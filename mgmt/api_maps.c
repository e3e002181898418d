/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Route GET /api/v1/maps (issue #27, docs/MAPS.md, docs/MGMT.md "Maps"): the maps as they run
 * (static: the config as parsed at start), each with its sources, destination, rule count (the
 * rules live apart from the memzone's document: primary/maps.c), collector flag and its counters
 * summed over the workers (the session's mirror counters of counters.h and "passed"), and what
 * the classifiers took to build.
 */
#include <stdio.h>

#include "api.h"
#include "shmview.h"
#include "spanbox/shm.h"

#define NUM(o, k, v) cJSON_AddNumberToObject((o), (k), (double)(v))

static const char *dir_name(uint8_t d)
{
	return d == SBX_DIR_RX ? "rx" : d == SBX_DIR_TX ? "tx" : "both";
}

/* Map @p j of the running config, its counters summed over @p nw workers. */
static cJSON *map_json(const struct sbx_shm *shm, uint16_t j, uint16_t nw)
{
	const struct sbx_map_cfg *m = &shm->cfg.maps[j];
	struct sbx_mirror_counters sum = { 0 };
	uint64_t passed = 0;
	cJSON *o = cJSON_CreateObject(), *a, *d, *c;

	NUM(o, "id", m->s.id);
	cJSON_AddStringToObject(o, "name", m->s.name);
	cJSON_AddBoolToObject(o, "collector", m->collector);
	NUM(o, "rule_count", m->nb_rules);
	a = cJSON_AddArrayToObject(o, "sources");
	for (uint16_t k = 0; k < m->s.nb_sources && k < SBX_MAX_MIRROR_SOURCES; k++) {
		cJSON *s = cJSON_CreateObject();

		cJSON_AddStringToObject(s, "port", shm->cfg.ports[m->s.sources[k].port % SBX_MAX_PORTS].name);
		cJSON_AddStringToObject(s, "direction", dir_name(m->s.sources[k].direction));
		cJSON_AddItemToArray(a, s);
	}
	d = cJSON_AddObjectToObject(o, "destination");
	if (m->s.dst_kind == SBX_DST_GROUP)
		cJSON_AddStringToObject(d, "group", shm->cfg.tool_groups[m->s.dst_group % SBX_MAX_TOOL_GROUPS].name);
	else
		cJSON_AddStringToObject(d, "port", shm->cfg.ports[m->s.dst_port % SBX_MAX_PORTS].name);
	cJSON_AddStringToObject(o, "filter", m->s.filter);
	for (uint16_t w = 0; w < nw; w++) {
		sbx_mirror_counters_add(&sum, &sbx_shm_worker(shm, w)->stats.map_mirror[j]);
		passed += sbx_shm_worker(shm, w)->stats.map[j].passed;
	}
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
	for (j = 0; j < shm->cfg.nb_maps && j < SBX_MAX_MAPS; j++)
		cJSON_AddItemToArray(a, map_json(shm, j, nw));
	return code;
}

const struct mgmt_route mgmt_routes_maps[] = {
	{ "GET", "/api/v1/maps", get_maps },
	{ NULL, NULL, NULL },
};
