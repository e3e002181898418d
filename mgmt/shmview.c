/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters of the memzone, read while workers write them: each 64-bit value is whole, but one
 * answer may mix values of neighbouring loops. uint64 counters go out as JSON numbers (doubles:
 * exact up to 2^53).
 */
#include <string.h>

#include "shmview.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* The worker list names existing fields of struct sbx_worker_stats: each must be a uint64_t. */
#define WORKER_FIELD_IS_U64(field, ...)                                                              \
	_Static_assert(sizeof(((struct sbx_worker_stats *)0)->field) == sizeof(uint64_t),             \
		       "SBX_FOREACH_WORKER_COUNTER: " #field " is not a uint64_t");
SBX_FOREACH_WORKER_COUNTER(WORKER_FIELD_IS_U64)
/* ... and the ethdev list fields of struct sbx_port_shm */
#define ETHDEV_FIELD_IS_U64(field, ...)                                                              \
	_Static_assert(sizeof(((struct sbx_port_shm *)0)->field) == sizeof(uint64_t),                 \
		       "SBX_FOREACH_ETHDEV_COUNTER: " #field " is not a uint64_t");
SBX_FOREACH_ETHDEV_COUNTER(ETHDEV_FIELD_IS_U64)

uint16_t mgmt_nb_ports(const struct sbx_shm *shm)
{
	return MIN(shm->cfg.nb_ports, SBX_MAX_PORTS);
}

uint16_t mgmt_nb_workers(const struct sbx_shm *shm)
{
	return MIN(shm->cfg.nb_workers, SBX_MAX_WORKERS);
}

uint16_t mgmt_nb_mirrors(const struct sbx_shm *shm)
{
	return MIN(sbx_shm_cfg(shm)->nb_mirrors, SBX_MAX_MIRRORS);
}

uint8_t mgmt_mirror_cset(const struct sbx_shm *shm, uint16_t i)
{
	/* the primary never publishes a counter set out of range; the bound keeps a misread from
	 * leaving the array (mgmt may read a buffer being rewritten, shm.h) */
	return sbx_shm_tables(shm)->cset[i] % SBX_MIRROR_COUNTER_SETS;
}

int mgmt_port_index(const struct sbx_shm *shm, const char *name)
{
	uint16_t i;

	for (i = 0; i < mgmt_nb_ports(shm); i++)
		if (strncmp(shm->cfg.ports[i].name, name, sizeof(shm->cfg.ports[i].name)) == 0)
			return i;
	return -1;
}

void mgmt_port_worker_sum(const struct sbx_shm *shm, uint16_t i, uint16_t nb_w, struct sbx_port_counters *sum)
{
	uint16_t w;

	memset(sum, 0, sizeof(*sum));
	for (w = 0; w < nb_w; w++)
		sbx_port_counters_add(sum, &sbx_shm_worker(shm, w)->stats.port[i]);
}

void mgmt_mirror_sum(const struct sbx_shm *shm, uint16_t i, uint16_t nb_w, struct sbx_mirror_counters *sum)
{
	uint16_t k;

	memset(sum, 0, sizeof(*sum));
	for (k = 0; k < nb_w; k++)
		sbx_mirror_counters_add(sum, &sbx_shm_worker(shm, k)->stats.mirror[mgmt_mirror_cset(shm, i)]);
}

uint64_t mgmt_map_sum(const struct sbx_shm *shm, uint16_t j, uint16_t nb_w, struct sbx_mirror_counters *sum)
{
	const uint16_t cs = sbx_shm_tables(shm)->mcset[j % SBX_MAX_MAPS] % SBX_MAP_COUNTER_SETS;
	uint64_t passed = 0;

	memset(sum, 0, sizeof(*sum));
	for (uint16_t k = 0; k < nb_w; k++) {
		sbx_mirror_counters_add(sum, &sbx_shm_worker(shm, k)->stats.map_mirror[cs]);
		passed += sbx_shm_worker(shm, k)->stats.map[cs].passed;
	}
	return passed;
}

uint16_t mgmt_nb_tool_groups(const struct sbx_shm *shm)
{
	return MIN(sbx_shm_cfg(shm)->nb_tool_groups, SBX_MAX_TOOL_GROUPS);
}

uint8_t mgmt_group_slot(const struct sbx_shm *shm, uint16_t i)
{
	uint32_t n = shm->layout.nb_group_slots ? shm->layout.nb_group_slots : 1;

	return (uint8_t)(sbx_shm_tables(shm)->gslot[i % SBX_MAX_TOOL_GROUPS] % n);
}

void mgmt_group_member_sum(const struct sbx_shm *shm, uint8_t slot, uint16_t k, uint16_t nb_w,
			   struct sbx_group_member_counters *sum)
{
	uint16_t w;

	memset(sum, 0, sizeof(*sum));
	for (w = 0; w < nb_w; w++)
		sbx_group_member_counters_add(sum, sbx_shm_group_member(shm, w, slot, k));
}

void mgmt_group_sum(const struct sbx_shm *shm, uint8_t slot, uint16_t nb_w, struct sbx_group_counters *sum)
{
	uint16_t w;

	memset(sum, 0, sizeof(*sum));
	for (w = 0; w < nb_w; w++)
		sum->no_member += sbx_shm_group_ctr(shm, w, slot)->no_member;
}

bool mgmt_cycles_per_packet(const struct sbx_worker_shm *ws, double *cpp)
{
	uint64_t cycles = ws->stats.busy_cycles, pkts = ws->stats.busy_pkts;

	if (pkts == 0)
		return false;
	*cpp = (double)cycles / (double)pkts;
	return true;
}

#define JSON_NUM(field, json, ...) cJSON_AddNumberToObject(o, json, (double)c->field);

void mgmt_port_counters_json(cJSON *o, const struct sbx_port_counters *c)
{
	SBX_FOREACH_PORT_COUNTER(JSON_NUM)
}

void mgmt_mirror_counters_json(cJSON *o, const struct sbx_mirror_counters *c)
{
	SBX_FOREACH_MIRROR_COUNTER(JSON_NUM)
}

void mgmt_group_member_counters_json(cJSON *o, const struct sbx_group_member_counters *c)
{
#define GROUP_NUM(field, json, ...) cJSON_AddNumberToObject(o, json, (double)c->field);
	SBX_FOREACH_GROUP_MEMBER_COUNTER(GROUP_NUM)
#undef GROUP_NUM
}

void mgmt_worker_counters_json(cJSON *o, const struct sbx_worker_stats *c)
{
	SBX_FOREACH_WORKER_COUNTER(JSON_NUM)
}

void mgmt_ethdev_counters_json(cJSON *o, const struct sbx_port_shm *c)
{
#define ETHDEV_NUM(field, ...) cJSON_AddNumberToObject(o, #field, (double)c->field);
	SBX_FOREACH_ETHDEV_COUNTER(ETHDEV_NUM)
#undef ETHDEV_NUM
}

/* The slot of the recorder for capture @p id, NULL when none. */
const struct sbx_capture_shm *mgmt_capture_slot(const struct sbx_shm *shm, long id)
{
	unsigned int k;

	for (k = 0; k < SBX_CAPTURE_SLOTS; k++)
		if (__atomic_load_n(&shm->captures[k].state, __ATOMIC_ACQUIRE) != SBX_CAP_FREE &&
		    shm->captures[k].id == id)
			return &shm->captures[k];
	return NULL;
}

/* The running session of capture @p id (its index in the active tables in *@p idx), or NULL. */
const struct sbx_mirror_cfg *mgmt_capture_session(const struct sbx_shm *shm, long id, uint16_t *idx)
{
	const struct sbx_config *cfg = sbx_shm_cfg(shm);
	uint16_t i;

	for (i = 0; i < cfg->nb_mirrors; i++)
		if (cfg->mirrors[i].dst_kind == SBX_DST_RECORDER && cfg->mirrors[i].id == id) {
			if (idx != NULL)
				*idx = i;
			return &cfg->mirrors[i];
		}
	return NULL;
}
