/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file pdump_stats.h
 * librte_pdump's statistics memzone, as DPDK 22.11 lays it out (lib/pdump/rte_pdump.c, private
 * there): rte_pdump_init() in the primary reserves it (primary/pdump.c), the workers count their
 * captures' copies into it (secondary/pdump.c), dpdk-dumpcap reads it with rte_pdump_stats(), and
 * /spanbox/ports sums it (primary/telemetry.c). Per DPDK port and queue, one struct
 * rte_pdump_stats a direction; a queue is polled or sent on by one worker, the adds are atomic
 * anyway (relaxed).
 */
#ifndef SPANBOX_PDUMP_STATS_H
#define SPANBOX_PDUMP_STATS_H

#include <rte_memzone.h>
#include <rte_pdump.h>

#define SBX_PDUMP_STATS_MZ "rte_pdump_stats" /**< librte_pdump's MZ_RTE_PDUMP_STATS */

/** The memzone's layout. */
struct sbx_pdump_stats_mz {
	struct rte_pdump_stats rx[RTE_MAX_ETHPORTS][RTE_MAX_QUEUES_PER_PORT]; /**< frames received */
	struct rte_pdump_stats tx[RTE_MAX_ETHPORTS][RTE_MAX_QUEUES_PER_PORT]; /**< frames sent */
	const struct rte_memzone *mz; /**< the memzone itself (librte_pdump frees it with it) */
};

/** @return the memzone of this prefix (any process), NULL when rte_pdump_init() did not create it
 * or it is smaller than this layout (another DPDK version: nothing is counted then). */
static inline struct sbx_pdump_stats_mz *sbx_pdump_stats_lookup(void)
{
	const struct rte_memzone *mz = rte_memzone_lookup(SBX_PDUMP_STATS_MZ);

	return mz != NULL && mz->len >= sizeof(struct sbx_pdump_stats_mz) ? mz->addr : NULL;
}

#endif
