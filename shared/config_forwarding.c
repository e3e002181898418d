/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The section "forwarding" (cross-connects; docs/CONFIG.md).
 */
#include <stdio.h>
#include <string.h>

#include "config_int.h"

static const char *const fwd_keys[] = {"xconnects", NULL};

/* Parse forwarding.xconnects: pairs of two distinct ports, each port in one pair at most. */
int cfg_parse_forwarding(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	int used[SBX_MAX_PORTS], end[2], i = 0, k;
	char path[64], epath[64], name[SBX_NAME_LEN];
	const cJSON *o, *arr, *pair;

	if (cfg_get_section(c, root, "forwarding", fwd_keys, &o) ||
	    cfg_get_array(c, o, "forwarding", "xconnects", SBX_MAX_XCONNECTS, &arr))
		return -1;
	memset(used, 0xff, sizeof(used)); /* -1: in no xconnect */
	cJSON_ArrayForEach(pair, arr) {
		snprintf(path, sizeof(path), "forwarding.xconnects[%d]", i);
		if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2)
			return cfg_fail(c, path, NULL, "expected an array of 2 port names");
		for (k = 0; k < 2; k++) {
			snprintf(epath, sizeof(epath), "forwarding.xconnects[%d][%d]", i, k);
			if (cfg_to_string(c, cJSON_GetArrayItem(pair, k), epath, NULL, name, sizeof(name),
				      true, NULL))
				return -1;
			end[k] = sbx_config_port_index(cfg, name);
			if (end[k] < 0)
				return cfg_fail(c, epath, NULL, "unknown port \"%s\"", name);
			if (k == 1 && end[1] == end[0])
				return cfg_fail(c, epath, NULL, "%s is cross-connected to itself", name);
			if (used[end[k]] >= 0)
				return cfg_fail(c, epath, NULL, "%s is already in forwarding.xconnects[%d]",
					    name, used[end[k]]);
			used[end[k]] = i;
		}
		cfg->xconnects[i].a = (uint16_t)end[0];
		cfg->xconnects[i].b = (uint16_t)end[1];
		i++;
	}
	cfg->nb_xconnects = (uint16_t)i;
	return 0;
}
