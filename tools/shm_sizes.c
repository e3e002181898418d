/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spanbox-shm-sizes: what the shared memzone (struct sbx_shm, include/spanbox/shm.h) and one
 * worker slot (struct sbx_worker_shm) weigh with the limits this binary was built with, part by
 * part, in bytes (issue #25 "Limits": measure the memzone and the per-worker slot at today's
 * default and at the maximum). Each array is printed as its whole size and, where it is a table
 * over ports, workers or tool group slots, what one entry costs: what sizing it by the config
 * (instead of by the SBX_MAX_* limit) would save.
 *
 * Today's layout is static: every config reserves sizeof(struct sbx_shm) (the primary's
 * rte_memzone_reserve, primary/main.c), however few ports and workers it uses.
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
	ROW("memzone (struct sbx_shm)", sizeof(struct sbx_shm));
	ROW("  workers[] (all slots)", FIELD_SIZE(struct sbx_shm, workers));
	ROW("  mb_rings[workers][ports]", FIELD_SIZE(struct sbx_shm, mb_rings));
	ROW("  groups[] (tool group slots)", FIELD_SIZE(struct sbx_shm, groups));
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
	ROW("  stats.ingress.src[tunnel senders]", FIELD_SIZE(struct sbx_worker_stats, ingress.src));
	ROW("  stats.ingress.ts[ports]", FIELD_SIZE(struct sbx_worker_stats, ingress.ts));
	ROW("  stats.group_member[slots][members]", FIELD_SIZE(struct sbx_worker_stats, group_member));
	ROW("  stats.group_demand[slots][members]", FIELD_SIZE(struct sbx_worker_stats, group_demand));
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
