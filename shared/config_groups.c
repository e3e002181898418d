/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The section "tool_groups" and a session's group destination (docs/CONFIG.md).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "config_int.h"

static const char *const group_keys[] = {"name", "members", "hash", "failover", "member_rate_limit", NULL};

static const char *const failover_keys[] = {"hold_down_ms", "tx_refused_percent", "tx_refused_window_ms", NULL};

static const char *const rate_keys[] = {"pps", "bps", NULL};

static const struct cfg_choice group_hash_choices[] = {
	{"5tuple", SBX_GROUP_HASH_5TUPLE}, {"2tuple", SBX_GROUP_HASH_2TUPLE}, {NULL, 0}};

/*
 * A destination {"group": NAME} at @dpath (object @o) of session @m: a group of tool_groups (parsed
 * before the mirrors), not together with "port"; no source of the session may be a cfg_member (a
 * mirror loop). dst_port becomes the group's first cfg_member (the copies' source MAC).
 */
int cfg_parse_group_destination(struct cfg_ctx *c, const struct sbx_config *cfg, const cJSON *o, const char *dpath,
				struct sbx_mirror_cfg *m)
{
	char name[SBX_NAME_LEN];
	const struct sbx_tool_group_cfg *g;
	int gi, j, k;

	if (cfg_member(o, "port") != NULL || cfg_member(o, "recorder") != NULL)
		return cfg_fail(c, dpath, "group", "give one of port, group or recorder");
	if (cfg_member(o, "allow_forwarding") != NULL)
		return cfg_fail(c, dpath, "allow_forwarding", "applies to a port destination only (no tool group member "
			    "may forward)");
	if (cfg_get_string(c, o, dpath, "group", name, sizeof(name), true, NULL, ""))
		return -1;
	gi = sbx_config_group_index(cfg, name);
	if (gi < 0)
		return cfg_fail(c, dpath, "group", "unknown tool group \"%s\" (not in tool_groups)", name);
	g = &cfg->tool_groups[gi];
	for (j = 0; j < m->nb_sources; j++)
		for (k = 0; k < g->nb_members; k++)
			if (m->sources[j].port == g->members[k])
				return cfg_fail(c, dpath, "group", "%s is a member of tool group %s and a source of this "
					    "session (mirror loop)", cfg->ports[g->members[k]].name, g->name);
	m->dst_kind = SBX_DST_GROUP;
	m->dst_group = (uint8_t)gi;
	m->dst_port = g->members[0];
	return 0;
}

int sbx_config_group_index(const struct sbx_config *cfg, const char *name)
{
	for (uint16_t i = 0; i < cfg->nb_tool_groups && i < SBX_MAX_TOOL_GROUPS; i++)
		if (strcmp(cfg->tool_groups[i].name, name) == 0)
			return i;
	return -1;
}

/* Parse tool_groups[@i] (object @obj): name, members, hash, failover, member_rate_limit. */
static int parse_tool_group(struct cfg_ctx *c, const cJSON *obj, int i, struct sbx_config *cfg)
{
	struct sbx_tool_group_cfg *g = &cfg->tool_groups[i];
	char path[32], mpath[48], opath[64], name[SBX_NAME_LEN];
	const cJSON *arr, *it, *o;
	long long v;
	int j, k = 0, p;

	snprintf(path, sizeof(path), "tool_groups[%d]", i);
	if (!cJSON_IsObject(obj))
		return cfg_fail(c, path, NULL, "expected an object");
	if (cfg_check_keys(c, obj, path, group_keys) || cfg_need(c, obj, path, "name") ||
	    cfg_get_string(c, obj, path, "name", g->name, sizeof(g->name), true, cfg_name_chars, ""))
		return -1;
	for (j = 0; j < i; j++)
		if (strcmp(cfg->tool_groups[j].name, g->name) == 0)
			return cfg_fail(c, path, "name", "duplicate tool group name \"%s\" (see tool_groups[%d])", g->name,
				    j);
	if (cfg_need(c, obj, path, "members") ||
	    cfg_get_array(c, obj, path, "members", INT_MAX, &arr)) /* bounded by the capacity, below */
		return -1;
	if (cJSON_GetArraySize(arr) > cfg->tg_cap_members || cJSON_GetArraySize(arr) > SBX_MAX_GROUP_MEMBERS)
		return cfg_fail(c, path, "members", "%d members, over the capacity of %u (workers.tool_group_capacity.members, "
			    "static: at most %d)", cJSON_GetArraySize(arr), cfg->tg_cap_members, SBX_MAX_GROUP_MEMBERS);
	if (cJSON_GetArraySize(arr) == 0)
		return cfg_fail(c, path, "members", "at least one member port is required");
	cJSON_ArrayForEach(it, arr) {
		snprintf(mpath, sizeof(mpath), "%s.members[%d]", path, k);
		if (cfg_to_string(c, it, mpath, NULL, name, sizeof(name), true, NULL))
			return -1;
		p = sbx_config_port_index(cfg, name);
		if (p < 0)
			return cfg_fail(c, mpath, NULL, "unknown port \"%s\"", name);
		for (j = 0; j < k; j++)
			if (g->members[j] == p)
				return cfg_fail(c, mpath, NULL, "%s is already %s.members[%d] (a member once)", name, path, j);
		for (j = 0; j < cfg->nb_xconnects; j++)
			if (cfg->xconnects[j].a == p || cfg->xconnects[j].b == p)
				return cfg_fail(c, mpath, NULL, "%s forwards traffic (forwarding.xconnects[%d]): a tool "
					    "group member only receives mirror copies", name, j);
		g->members[k++] = (uint16_t)p;
	}
	g->nb_members = (uint8_t)k;
	if (cfg_get_choice(c, obj, path, "hash", group_hash_choices, SBX_GROUP_HASH_5TUPLE, &g->hash))
		return -1;
	snprintf(opath, sizeof(opath), "%s.failover", path);
	if (cfg_get_object(c, obj, path, "failover", opath, failover_keys, &o) ||
	    cfg_get_u32(c, o, opath, "hold_down_ms", 0, 3600000, 2000, &g->hold_down_ms) ||
	    cfg_get_u32(c, o, opath, "tx_refused_percent", 1, 100, 50, &g->tx_refused_percent) ||
	    cfg_get_u32(c, o, opath, "tx_refused_window_ms", 100, 60000, 1000, &g->tx_refused_window_ms))
		return -1;
	snprintf(opath, sizeof(opath), "%s.member_rate_limit", path);
	if (cfg_get_object(c, obj, path, "member_rate_limit", opath, rate_keys, &o) ||
	    cfg_get_int(c, o, opath, "pps", 0, 1000000000LL, 0, &v))
		return -1;
	g->rate_pps = (uint64_t)v;
	if (cfg_get_int(c, o, opath, "bps", 0, 10000000000000LL, 0, &v))
		return -1;
	g->rate_bps = (uint64_t)v;
	return 0;
}

/* Parse the optional "tool_groups" array (needs ports and forwarding; before mirrors). */
int cfg_parse_tool_groups(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	const cJSON *arr, *it;
	int i = 0;

	if (cfg_get_array(c, root, "", "tool_groups", INT_MAX, &arr)) /* bounded by the capacity, below */
		return -1;
	if (cJSON_GetArraySize(arr) > cfg->tg_cap_groups || cJSON_GetArraySize(arr) > SBX_MAX_TOOL_GROUPS)
		return cfg_fail(c, "tool_groups", NULL, "%d tool groups, over the capacity of %u "
			    "(workers.tool_group_capacity.groups, static: at most %d)", cJSON_GetArraySize(arr),
			    cfg->tg_cap_groups, SBX_MAX_TOOL_GROUPS);
	cJSON_ArrayForEach(it, arr) {
		if (parse_tool_group(c, it, i, cfg))
			return -1;
		i++;
	}
	cfg->nb_tool_groups = (uint16_t)i;
	return 0;
}
