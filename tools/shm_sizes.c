/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spanbox-shm-sizes: what the shared memzone (struct sbx_shm, include/spanbox/shm.h) and one
 * worker slot (struct sbx_worker_shm) weigh with the limits this binary was built with, part by
 * part, in bytes (issue #25 "Limits": measure the memzone and the per-worker slot at today's
 * default and at the maximum). Each array is printed as its whole size and, where it is a table
 * over ports, workers or tool group slots, what one entry costs: what sizing it by the config
 * (instead of by the SBX_MAX_* limit) would save.
 *
 * The memzone is struct sbx_shm (fixed: sized by the limits) followed by regions sized by the
 * config (sbx_shm_layout(): the worker slots, the microburst rings, one per worker and port, and
 * each worker's tunnel sender table): "memzone W workers P ports" is what the primary reserves for
 * such a config with the default workers.tunnel_senders (256 entries), and the first one printed,
 * "memzone (at the limits)", the largest the limits allow (GET /api/v1/system memzone).
 * bench/shm_sizes.sh builds this tool a second time against the limits issue #25 asks for and
 * prints both side by side (docs/BENCHMARKS.md "Memzone size at the limits").
 *
 *   spanbox-shm-sizes
 * Exit status: 0. No DPDK runtime: the sizes come from the headers only.
 */
#include <stddef.h>
#include <stdio.h>

#include "spanbox/shm.h"

#define FIELD_SIZE(type, f) sizeof(((type *)0)->f)
#define ROW(name, bytes) printf("%-44s %12zu\n", name, (size_t)(bytes))

int main(void)
{
	printf("# limits: ports %d, workers %d, tool groups %d x %d members, xconnects %d, sources %d, "
	       "decap rules %d, mirrors %d, maps %d, tunnel senders %d\n",
	       SBX_MAX_PORTS, SBX_MAX_WORKERS, SBX_MAX_TOOL_GROUPS, SBX_MAX_GROUP_MEMBERS,
	       SBX_MAX_XCONNECTS, SBX_MAX_MIRROR_SOURCES, SBX_MAX_DECAP_RULES, SBX_MAX_MIRRORS,
	       SBX_MAX_MAPS, SBX_MAX_TUNNEL_SOURCES);
	static const unsigned int cfgs[][2] = { { 1, 2 }, { 2, 3 }, { 2, 16 }, { 2, 64 }, { 8, 16 }, { 8, 64 }, { 32, 64 } };
	struct sbx_shm_layout l;
	char name[64];

	sbx_shm_layout(SBX_MAX_WORKERS, SBX_MAX_PORTS, SBX_MAX_TUNNEL_SOURCES, SBX_MAX_TOOL_GROUPS, SBX_MAX_GROUP_MEMBERS, &l);
	ROW("memzone (at the limits)", l.total_size);
	for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
		if (cfgs[i][0] > SBX_MAX_WORKERS || cfgs[i][1] > SBX_MAX_PORTS) {
			printf("memzone %u workers %u ports: over the limits\n", cfgs[i][0], cfgs[i][1]);
			continue;
		}
		sbx_shm_layout(cfgs[i][0], cfgs[i][1], SBX_TUNNEL_SENDERS_DEFAULT, SBX_TOOL_GROUP_CAPACITY_DEFAULT, SBX_TOOL_GROUP_CAPACITY_DEFAULT, &l);
		snprintf(name, sizeof(name), "memzone %u workers %u ports", cfgs[i][0], cfgs[i][1]);
		ROW(name, l.total_size);
		sbx_shm_layout(cfgs[i][0], 0, SBX_TUNNEL_SENDERS_DEFAULT, SBX_TOOL_GROUP_CAPACITY_DEFAULT, SBX_TOOL_GROUP_CAPACITY_DEFAULT, &l);
		snprintf(name, sizeof(name), "memzone %u workers %u ports, microburst off", cfgs[i][0], cfgs[i][1]);
		ROW(name, l.total_size);
		sbx_shm_layout(cfgs[i][0], cfgs[i][1], SBX_TUNNEL_SENDERS_DEFAULT, SBX_MAX_TOOL_GROUPS, SBX_MAX_GROUP_MEMBERS, &l);
		snprintf(name, sizeof(name), "memzone %u workers %u ports, groups %dx%d", cfgs[i][0], cfgs[i][1],
			 SBX_MAX_TOOL_GROUPS, SBX_MAX_GROUP_MEMBERS);
		ROW(name, l.total_size);
	}
	ROW("  struct sbx_shm (fixed part)", sizeof(struct sbx_shm));
	ROW("  worker slots (region, at the limits)", (SBX_MAX_WORKERS + 1) * sizeof(struct sbx_worker_shm));
	ROW("  microburst rings (region, at the limits)",
	    SBX_MAX_WORKERS * SBX_MAX_PORTS * sizeof(struct sbx_mb_ring));
	ROW("  tunnel sender tables (region, at the limits)",
	    SBX_MAX_WORKERS * SBX_MAX_TUNNEL_SOURCES * sizeof(struct sbx_tunnel_source));
	sbx_shm_layout(SBX_MAX_WORKERS, SBX_MAX_PORTS, SBX_MAX_TUNNEL_SOURCES, SBX_MAX_TOOL_GROUPS, SBX_MAX_GROUP_MEMBERS, &l);
	ROW("  tool group slots (region, at the limits)", (uint64_t)l.nb_group_slots * l.group_stride);
	ROW("  tool group counters (region, at the limits)", (uint64_t)(SBX_MAX_WORKERS + 1) * l.gstats_stride);
	sbx_shm_layout(2, 3, SBX_TUNNEL_SENDERS_DEFAULT, SBX_TOOL_GROUP_CAPACITY_DEFAULT, SBX_TOOL_GROUP_CAPACITY_DEFAULT, &l);
	ROW("  tool group slots (region, capacity 8x8)", (uint64_t)l.nb_group_slots * l.group_stride);
	ROW("  tool group counters (region, 8x8, 2 workers)", (uint64_t)3 * l.gstats_stride);
	ROW("  ports[]", FIELD_SIZE(struct sbx_shm, ports));
	ROW("  cfg (one struct sbx_config)", sizeof(struct sbx_config));
	ROW("  tables[2] (each holds a config)", FIELD_SIZE(struct sbx_shm, tables));
	ROW("  staging", FIELD_SIZE(struct sbx_shm, staging));
	ROW("  events[]", FIELD_SIZE(struct sbx_shm, events));
	ROW("  warnings[]", FIELD_SIZE(struct sbx_shm, warnings));
	ROW("  microburst[ports]", FIELD_SIZE(struct sbx_shm, microburst));
	ROW("  flows", FIELD_SIZE(struct sbx_shm, flows));
	ROW("  maps", FIELD_SIZE(struct sbx_shm, maps));
	ROW("  captures[]", FIELD_SIZE(struct sbx_shm, captures));
	ROW("  placement[workers]", FIELD_SIZE(struct sbx_shm, placement));
	ROW("worker slot (struct sbx_worker_shm)", sizeof(struct sbx_worker_shm));
	ROW("  stats.port[ports]", FIELD_SIZE(struct sbx_worker_stats, port));
	ROW("  stats.mirror[counter sets]", FIELD_SIZE(struct sbx_worker_stats, mirror));
	ROW("  stats.ingress.rule_*[ports][rules]",
	    FIELD_SIZE(struct sbx_worker_stats, ingress.rule_pkts) +
		    FIELD_SIZE(struct sbx_worker_stats, ingress.rule_bytes));
	ROW("  stats.ingress.ts[ports]", FIELD_SIZE(struct sbx_worker_stats, ingress.ts));
	ROW("  stats.map_mirror[maps] + map[maps]",
	    FIELD_SIZE(struct sbx_worker_stats, map_mirror) + FIELD_SIZE(struct sbx_worker_stats, map));
	ROW("  stats.burst[]", FIELD_SIZE(struct sbx_worker_stats, burst));
	printf("# one entry of each table\n");
	ROW("port counters (one port, one worker)", sizeof(struct sbx_port_counters));
	ROW("tunnel sender (one, one worker)", sizeof(struct sbx_tunnel_source));
	ROW("group member counters + demand (one)",
	    sizeof(struct sbx_group_member_counters) + sizeof(struct sbx_group_demand));
	ROW("microburst ring (one worker, one port)", sizeof(struct sbx_mb_ring));
	ROW("port slot (struct sbx_port_shm)", sizeof(struct sbx_port_shm));
	ROW("  its rx_ring+tx_ring names", FIELD_SIZE(struct sbx_port_shm, rx_ring) +
						    FIELD_SIZE(struct sbx_port_shm, tx_ring));
	ROW("group slot (struct sbx_group_shm)", sizeof(struct sbx_group_shm));
	ROW("port config (struct sbx_port_cfg)", sizeof(struct sbx_port_cfg));
	return 0;
}
