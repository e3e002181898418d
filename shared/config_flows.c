/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The section "flows" (issue #28, docs/CONFIG.md "flows", docs/FLOWS.md).
 */
#include <stdio.h>
#include <string.h>

#include "config_int.h"

static const char *const flows_keys[] = {"enabled", "ports", "active_timeout_s", "idle_timeout_s", "flows_per_worker",
					 "observation_domain_id", "template_period_s", "collectors", "biflow", "sessions", NULL};

static const char *const flow_port_keys[] = {"port", "direction", NULL};

static const char *const collector_keys[] = {"address", "port", "transport", NULL};

/* ---- flows (issue #28, docs/CONFIG.md "flows") ---- */

/* Parse "flows.collectors": 1..SBX_MAX_FLOW_COLLECTORS {address, port, transport}. */
static int parse_flow_collectors(struct cfg_ctx *c, const cJSON *o, struct sbx_flows_cfg *f)
{
	static const struct cfg_choice transports[] = {{"udp", 0}, {"tcp", 1}, {NULL, 0}};
	const cJSON *arr, *it;
	char path[48];
	uint8_t v4[16], ver;
	int i = 0, j;

	if (cfg_get_array(c, o, "flows", "collectors", SBX_MAX_FLOW_COLLECTORS, &arr))
		return -1;
	if (f->enabled && (arr == NULL || cJSON_GetArraySize(arr) == 0))
		return cfg_fail(c, "flows", "collectors", "at least one collector {\"address\": IP, \"port\": 4739} "
			    "while flows.enabled is true");
	cJSON_ArrayForEach(it, arr) {
		struct sbx_flow_collector_cfg *k = &f->collectors[i];

		snprintf(path, sizeof(path), "flows.collectors[%d]", i);
		if (!cJSON_IsObject(it))
			return cfg_fail(c, path, NULL, "expected an object");
		if (cfg_check_keys(c, it, path, collector_keys) || cfg_need(c, it, path, "address") ||
		    cfg_get_ip(c, it, path, "address", v4, &ver, k->address, sizeof(k->address)) ||
		    cfg_get_u16(c, it, path, "port", 1, 65535, 4739, &k->port) ||
		    cfg_get_choice(c, it, path, "transport", transports, 0, &k->transport))
			return -1;
		for (j = 0; j < i; j++)
			if (!strcmp(f->collectors[j].address, k->address) && f->collectors[j].port == k->port &&
			    f->collectors[j].transport == k->transport)
				return cfg_fail(c, path, NULL, "the same collector as flows.collectors[%d]", j);
		i++;
	}
	f->nb_collectors = (uint16_t)i;
	return 0;
}

/* Parse the optional static section "flows" (needs "ports"). */
/* Parse "flows.sessions": ids of maps whose frames are metered (resolved by sbx_config_flows_resolve
 * once "maps" is parsed). */
static int parse_flow_sessions(struct cfg_ctx *c, const cJSON *o, struct sbx_flows_cfg *f)
{
	const cJSON *arr, *it;
	char path[48];
	uint16_t i;
	double v;

	if (cfg_get_array(c, o, "flows", "sessions", SBX_MAX_MAPS + SBX_MAX_MIRRORS, &arr))
		return -1;
	cJSON_ArrayForEach(it, arr) {
		snprintf(path, sizeof(path), "flows.sessions[%u]", f->nb_sessions);
		v = cJSON_IsNumber(it) ? it->valuedouble : -1;
		if (!cJSON_IsNumber(it) || v != (double)(long long)v || v < SBX_MIRROR_ID_MIN || v > SBX_MIRROR_ID_MAX)
			return cfg_fail(c, path, NULL, "expected a map or mirror session id (an integer %d..%d)", SBX_MIRROR_ID_MIN,
				    SBX_MIRROR_ID_MAX);
		for (i = 0; i < f->nb_sessions; i++)
			if (f->session_ids[i] == (uint16_t)v)
				return cfg_fail(c, path, NULL, "%u is listed twice", (unsigned int)v);
		f->session_ids[f->nb_sessions++] = (uint16_t)v;
	}
	return 0;
}

int cfg_parse_flows(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	struct sbx_flows_cfg *f = &cfg->flows;
	const cJSON *o, *arr, *it;
	char path[48];
	uint8_t dir;
	int i = 0, p;

	if (cfg_get_section(c, root, "flows", flows_keys, &o))
		return -1;
	if (cfg_get_bool(c, o, "flows", "enabled", o != NULL, &f->enabled) ||
	    cfg_get_u32(c, o, "flows", "active_timeout_s", 1, 86400, 60, &f->active_s) ||
	    cfg_get_u32(c, o, "flows", "idle_timeout_s", 1, 3600, 15, &f->idle_s) ||
	    cfg_get_u32(c, o, "flows", "flows_per_worker", 1024, SBX_FLOWS_CAPACITY_MAX, SBX_FLOWS_CAPACITY_DEFAULT,
		    &f->capacity) ||
	    cfg_get_u32(c, o, "flows", "observation_domain_id", 0, UINT32_MAX, 0, &f->domain) ||
	    cfg_get_u32(c, o, "flows", "template_period_s", 1, 3600, 60, &f->template_period_s) ||
	    cfg_get_bool(c, o, "flows", "biflow", false, &f->biflow) ||
	    cfg_get_array(c, o, "flows", "ports", SBX_MAX_PORTS, &arr) ||
	    parse_flow_sessions(c, o, f))
		return -1;
	if (arr == NULL && f->enabled && f->nb_sessions == 0) /* neither ports nor sessions: every port's RX */
		f->port_mask = cfg->nb_ports >= 64 ? UINT64_MAX : (1ull << cfg->nb_ports) - 1;
	cJSON_ArrayForEach(it, arr) {
		snprintf(path, sizeof(path), "flows.ports[%d]", i);
		if (!cJSON_IsObject(it))
			return cfg_fail(c, path, NULL, "expected an object {\"port\": NAME, \"direction\": \"rx\"}");
		if (cfg_check_keys(c, it, path, flow_port_keys) || cfg_get_port(c, cfg, it, path, &p) ||
		    cfg_get_choice(c, it, path, "direction", cfg_direction_choices, SBX_DIR_RX, &dir))
			return -1;
		if ((f->port_mask & (1ull << p)) || (f->tx_mask & (1ull << p)))
			return cfg_fail(c, path, "port", "%s is listed twice (one entry per port: direction \"both\")",
				    cfg->ports[p].name);
		if (dir & SBX_DIR_RX)
			f->port_mask |= 1ull << p;
		if (dir & SBX_DIR_TX)
			f->tx_mask |= 1ull << p;
		i++;
	}
	return parse_flow_collectors(c, o, f);
}

int sbx_config_flows_resolve(struct sbx_config *cfg, char *err, size_t errlen)
{
	struct sbx_flows_cfg *f = &cfg->flows;
	struct cfg_ctx c = { err, errlen };
	char path[48];
	uint16_t i, j, k;

	sbx_mapset_zero(&f->map_mask);
	f->mirror_mask = 0;
	for (i = 0; i < f->nb_sessions; i++) {
		snprintf(path, sizeof(path), "flows.sessions[%u]", i);
		for (j = 0; j < cfg->nb_maps && cfg->maps[j].s.id != f->session_ids[i]; j++)
			;
		if (j < cfg->nb_maps) {
			sbx_mapset_set(&f->map_mask, j);
			continue;
		}
		for (k = 0; k < cfg->nb_mirrors && cfg->mirrors[k].id != f->session_ids[i]; k++)
			;
		if (k < cfg->nb_mirrors) {
			f->mirror_mask |= 1ull << k;
			continue;
		}
		return cfg_fail(&c, path, NULL, "%u is not the id of a map or mirror session", f->session_ids[i]);
	}
	return 0;
}
