/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The section "workers" (lcores, standbys, queues, CPUs; docs/CONFIG.md).
 */
#include <stdio.h>
#include <string.h>

#include "spanbox/hostinfo.h"

#include "config_int.h"

#define MAX_RXQ_ID 15            /* highest RX queue id a worker may poll */

static const char *const worker_keys[] = {
	"count", "lcores", "burst", "idle_sleep_us", "idle_polls", "busy_poll", "queues",
	"hang_timeout_ms", "crash_limit", "crash_window_s", "standby", "standby_lcores", "tunnel_senders", "cpus", "tool_group_capacity", NULL};

static const char *const tunnel_senders_keys[] = {"entries", "idle_s", NULL};

static const char *const tg_capacity_keys[] = {"groups", "members", NULL};

static const char *const rxq_keys[] = {"port", "queue", NULL};

/* Parse workers.lcores, or derive it (primary_lcore+1+i, skipping mgmt_lcore); ids unique. */
static int parse_lcores(struct cfg_ctx *c, const cJSON *o, struct sbx_config *cfg)
{
	unsigned int next = cfg->primary_lcore + 1u;
	const cJSON *arr;
	char path[64];
	long long v = 0;
	int w, j;

	if (cfg_get_array(c, o, "workers", "lcores", SBX_MAX_WORKERS, &arr))
		return -1;
	if (arr && cJSON_GetArraySize(arr) != cfg->nb_workers)
		return cfg_fail(c, "workers", "lcores", "%d entries, expected workers.count = %u",
			    cJSON_GetArraySize(arr), cfg->nb_workers);
	for (w = 0; w < cfg->nb_workers; w++) {
		snprintf(path, sizeof(path), "workers.lcores[%d]", w);
		if (arr) {
			if (cfg_to_int(c, cJSON_GetArrayItem(arr, w), path, NULL, 0, SBX_LCORE_ID_MAX, &v))
				return -1;
		} else {
			if (next == cfg->mgmt_lcore)
				next++;
			if (next > SBX_LCORE_ID_MAX)
				return cfg_fail(c, "workers", "lcores",
					    "default lcore %u of worker %d is above %d: list the lcores",
					    next, w, SBX_LCORE_ID_MAX);
			v = next++;
		}
		if (v == cfg->primary_lcore)
			return cfg_fail(c, path, NULL, "lcore %lld is already eal.primary_lcore", v);
		if (v == cfg->mgmt_lcore)
			return cfg_fail(c, path, NULL, "lcore %lld is already eal.mgmt_lcore", v);
		for (j = 0; j < w; j++)
			if (cfg->workers[j].lcore_id == v)
				return cfg_fail(c, path, NULL, "lcore %lld is already used by worker %d", v, j);
		cfg->workers[w].lcore_id = (uint16_t)v;
	}
	return 0;
}

/* Is lcore @p v taken by the primary, mgmt, a worker or one of the first @p nb_sb standbys? Says
 * which in @p who. */
static bool lcore_taken(const struct sbx_config *cfg, long long v, unsigned int nb_sb, char *who, size_t len)
{
	unsigned int j;

	if (v == cfg->primary_lcore)
		return snprintf(who, len, "eal.primary_lcore"), true;
	if (v == cfg->mgmt_lcore)
		return snprintf(who, len, "eal.mgmt_lcore"), true;
	for (j = 0; j < cfg->nb_workers; j++)
		if (cfg->workers[j].lcore_id == v)
			return snprintf(who, len, "used by worker %u", j), true;
	for (j = 0; j < nb_sb; j++)
		if (cfg->standby_lcores[j] == v)
			return snprintf(who, len, "used by standby %u", j), true;
	return false;
}

/* Parse workers.standby and workers.standby_lcores, or derive them: the next free ids after the
 * highest worker lcore (past 127: the lowest free ones); never an id another process has. */
static int parse_standby(struct cfg_ctx *c, const cJSON *o, struct sbx_config *cfg)
{
	unsigned int next = 0, s, w;
	const cJSON *arr;
	char path[64], who[48];
	long long v = 0;

	if (cfg_get_u16(c, o, "workers", "standby", 0, SBX_MAX_STANDBYS, 1, &cfg->nb_standby) ||
	    cfg_get_array(c, o, "workers", "standby_lcores", SBX_MAX_STANDBYS, &arr))
		return -1;
	if (arr && cJSON_GetArraySize(arr) != cfg->nb_standby)
		return cfg_fail(c, "workers", "standby_lcores", "%d entries, expected workers.standby = %u",
			    cJSON_GetArraySize(arr), cfg->nb_standby);
	for (w = 0; w < cfg->nb_workers; w++)
		if (cfg->workers[w].lcore_id >= next)
			next = cfg->workers[w].lcore_id + 1u;
	for (s = 0; s < cfg->nb_standby; s++) {
		snprintf(path, sizeof(path), "workers.standby_lcores[%u]", s);
		if (arr) {
			if (cfg_to_int(c, cJSON_GetArrayItem(arr, (int)s), path, NULL, 0, SBX_LCORE_ID_MAX, &v))
				return -1;
			if (lcore_taken(cfg, v, s, who, sizeof(who)))
				return cfg_fail(c, path, NULL, "lcore %lld is already %s", v, who);
		} else {
			while (next <= SBX_LCORE_ID_MAX && lcore_taken(cfg, next, s, who, sizeof(who)))
				next++;
			if (next > SBX_LCORE_ID_MAX) /* wrap once: the lowest free id */
				for (next = 0; next <= SBX_LCORE_ID_MAX &&
				     lcore_taken(cfg, next, s, who, sizeof(who)); next++)
					;
			if (next > SBX_LCORE_ID_MAX)
				return cfg_fail(c, "workers", "standby_lcores", "no free lcore id for standby %u: list them",
					    s);
			v = next++;
		}
		cfg->standby_lcores[s] = (uint16_t)v;
	}
	return 0;
}

/* Default polling: worker w polls queue w of every ETHDEV port; worker 0 polls BRIDGED ports. */
_Static_assert(SBX_MAX_RXQ_PER_WORKER >= SBX_MAX_PORTS, "a worker's default queues: one of every port");

static void default_queues(struct sbx_config *cfg)
{
	uint16_t w, p;

	for (w = 0; w < cfg->nb_workers; w++) {
		struct sbx_worker_cfg *wk = &cfg->workers[w];

		for (p = 0; p < cfg->nb_ports; p++) {
			if (cfg->ports[p].kind == SBX_PORT_PCAP_FILE && w != 0)
				continue;
			wk->rxq[wk->nb_rxq].port = p;
			wk->rxq[wk->nb_rxq].queue = w;
			wk->nb_rxq++;
		}
	}
}

/* Parse workers.queues, or derive it; each (port, queue) is polled by one worker at most. */
static int parse_queues(struct cfg_ctx *c, const cJSON *o, struct sbx_config *cfg)
{
	int owner[SBX_MAX_PORTS][MAX_RXQ_ID + 1];
	const cJSON *arr, *list, *e;
	char path[64], epath[64], name[SBX_NAME_LEN];
	int w = 0, n, p;
	long long q;

	if (cfg_get_array(c, o, "workers", "queues", SBX_MAX_WORKERS, &arr))
		return -1;
	if (!arr) {
		default_queues(cfg);
		return 0;
	}
	if (cJSON_GetArraySize(arr) != cfg->nb_workers)
		return cfg_fail(c, "workers", "queues", "%d entries, expected workers.count = %u",
			    cJSON_GetArraySize(arr), cfg->nb_workers);
	memset(owner, 0xff, sizeof(owner)); /* -1: nobody */
	cJSON_ArrayForEach(list, arr) {
		struct sbx_worker_cfg *wk = &cfg->workers[w];

		snprintf(path, sizeof(path), "workers.queues[%d]", w);
		if (!cJSON_IsArray(list))
			return cfg_fail(c, path, NULL, "expected an array of {\"port\", \"queue\"} objects");
		if (cJSON_GetArraySize(list) > SBX_MAX_RXQ_PER_WORKER)
			return cfg_fail(c, path, NULL, "%d entries, at most %d", cJSON_GetArraySize(list),
				    SBX_MAX_RXQ_PER_WORKER);
		n = 0;
		cJSON_ArrayForEach(e, list) {
			snprintf(epath, sizeof(epath), "workers.queues[%d][%d]", w, n);
			if (!cJSON_IsObject(e))
				return cfg_fail(c, epath, NULL, "expected an object");
			if (cfg_check_keys(c, e, epath, rxq_keys) || cfg_need(c, e, epath, "port") ||
			    cfg_need(c, e, epath, "queue") ||
			    cfg_get_string(c, e, epath, "port", name, sizeof(name), true, NULL, ""))
				return -1;
			p = sbx_config_port_index(cfg, name);
			if (p < 0)
				return cfg_fail(c, epath, "port", "unknown port \"%s\"", name);
			if (cfg_get_int(c, e, epath, "queue", 0, MAX_RXQ_ID, 0, &q))
				return -1;
			if (cfg->ports[p].kind == SBX_PORT_PCAP_FILE && q >= cfg->nb_workers)
				return cfg_fail(c, epath, "queue",
					    "%lld out of range 0..%u (bridged port %s: one queue per worker)",
					    q, cfg->nb_workers - 1u, name);
			if (owner[p][q] >= 0)
				return cfg_fail(c, epath, NULL, "%s queue %lld is already polled by worker %d",
					    name, q, owner[p][q]);
			owner[p][q] = w;
			wk->rxq[n].port = (uint16_t)p;
			wk->rxq[n].queue = (uint16_t)q;
			n++;
		}
		wk->nb_rxq = (uint16_t)n;
		w++;
	}
	return 0;
}

/* Parse "workers": count, lcores, polling knobs and queues (needs eal and ports parsed). */
/*
 * Parse workers.cpus (one CPU per worker, none twice, none of eal.housekeeping_cpus) and settle
 * eal.housekeeping_cpus: given, or eal.cpus (no workers.cpus), or eal.cpus less the workers' CPUs.
 * Whether the CPUs exist and are online is checked at start (sbx_config_placement_check()).
 */
static int parse_worker_cpus(struct cfg_ctx *c, const cJSON *o, struct sbx_config *cfg)
{
	struct sbx_cpuset hk, workers;
	const cJSON *arr;
	char path[64];
	long long v;
	int w, j;
	bool hk_given = cfg->housekeeping_cpus[0] != '\0';

	if (cfg_get_array(c, o, "workers", "cpus", SBX_MAX_WORKERS, &arr))
		return -1;
	if (arr && cJSON_GetArraySize(arr) != cfg->nb_workers)
		return cfg_fail(c, "workers", "cpus", "%d entries, expected workers.count = %u (one CPU per worker)",
			    cJSON_GetArraySize(arr), cfg->nb_workers);
	cfg->pinned = arr != NULL;
	memset(&workers, 0, sizeof(workers));
	for (w = 0; w < cfg->nb_workers; w++) {
		cfg->workers[w].cpu = -1;
		if (!arr)
			continue;
		snprintf(path, sizeof(path), "workers.cpus[%d]", w);
		if (cfg_to_int(c, cJSON_GetArrayItem(arr, w), path, NULL, 0, SBX_MAX_CPUS - 1, &v))
			return -1;
		for (j = 0; j < w; j++)
			if (cfg->workers[j].cpu == v)
				return cfg_fail(c, path, NULL, "CPU %lld is already the CPU of worker %d: two polling workers "
					    "on one CPU take turns (give each its own)", v, j);
		cfg->workers[w].cpu = (int16_t)v;
		workers.bits[v / 64] |= 1ULL << (v % 64);
	}
	if (sbx_cpulist_parse(hk_given ? cfg->housekeeping_cpus : cfg->cpus, &hk) < 0)
		return cfg_fail(c, "eal", hk_given ? "housekeeping_cpus" : "cpus", "not a CPU list");
	if (hk_given) {
		for (w = 0; w < cfg->nb_workers; w++)
			if (cfg->workers[w].cpu >= 0 && sbx_cpuset_has(&hk, (unsigned int)cfg->workers[w].cpu)) {
				snprintf(path, sizeof(path), "workers.cpus[%d]", w);
				return cfg_fail(c, path, NULL, "CPU %d is in eal.housekeeping_cpus (%s): a worker's CPU "
					    "is its own", cfg->workers[w].cpu, cfg->housekeeping_cpus);
			}
	} else {
		for (j = 0; j < SBX_MAX_CPUS / 64; j++)
			hk.bits[j] &= ~workers.bits[j];
		if (sbx_cpulist_format(&hk, cfg->housekeeping_cpus, sizeof(cfg->housekeeping_cpus)),
		    cfg->housekeeping_cpus[0] == '\0')
			return cfg_fail(c, "eal", "housekeeping_cpus", "eal.cpus (%s) less workers.cpus leaves no CPU for the "
				    "primary and mgmt: set eal.housekeeping_cpus", cfg->cpus);
		return 0;
	}
	sbx_cpulist_format(&hk, cfg->housekeeping_cpus, sizeof(cfg->housekeeping_cpus));
	return 0;
}

int cfg_parse_workers(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	const cJSON *o, *ts;

	if (cfg_get_section(c, root, "workers", worker_keys, &o) ||
	    cfg_get_u16(c, o, "workers", "count", 1, SBX_MAX_WORKERS, 2, &cfg->nb_workers) ||
	    cfg_get_u16(c, o, "workers", "burst", 1, SBX_MAX_BURST, 32, &cfg->burst) ||
	    cfg_get_u32(c, o, "workers", "idle_sleep_us", 0, 1000000, 100, &cfg->idle_sleep_us) ||
	    cfg_get_u32(c, o, "workers", "idle_polls", 1, 1000000, 64, &cfg->idle_polls) ||
	    cfg_get_u32(c, o, "workers", "hang_timeout_ms", 50, 60000, 500, &cfg->hang_timeout_ms) ||
	    cfg_get_u16(c, o, "workers", "crash_limit", 1, 1000, 5, &cfg->crash_limit) ||
	    cfg_get_u16(c, o, "workers", "crash_window_s", 1, 3600, 30, &cfg->crash_window_s))
		return -1;
	if (cfg_get_bool(c, o, "workers", "busy_poll", false, &cfg->busy_poll))
		return -1;
	if (cfg_get_object(c, o, "workers", "tunnel_senders", "workers.tunnel_senders", tunnel_senders_keys, &ts) ||
	    cfg_get_u32(c, ts, "workers.tunnel_senders", "entries", 1, SBX_MAX_TUNNEL_SOURCES, SBX_TUNNEL_SENDERS_DEFAULT,
		    &cfg->tunnel_senders) ||
	    cfg_get_u32(c, ts, "workers.tunnel_senders", "idle_s", 1, 86400, SBX_TUNNEL_IDLE_S_DEFAULT, &cfg->tunnel_idle_s))
		return -1;
	if (cfg_get_object(c, o, "workers", "tool_group_capacity", "workers.tool_group_capacity", tg_capacity_keys, &ts) ||
	    cfg_get_u16(c, ts, "workers.tool_group_capacity", "groups", 1, SBX_MAX_TOOL_GROUPS,
		    SBX_TOOL_GROUP_CAPACITY_DEFAULT, &cfg->tg_cap_groups) ||
	    cfg_get_u16(c, ts, "workers.tool_group_capacity", "members", 1, SBX_MAX_GROUP_MEMBERS,
		    SBX_TOOL_GROUP_CAPACITY_DEFAULT, &cfg->tg_cap_members))
		return -1;
	return (parse_lcores(c, o, cfg) || parse_standby(c, o, cfg) || parse_worker_cpus(c, o, cfg) ||
		parse_queues(c, o, cfg)) ? -1 : 0;
}
