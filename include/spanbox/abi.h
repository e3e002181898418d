/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file abi.h
 * What a secondary (worker, standby, mgmt) must match to use the primary's pools and memzone,
 * published by the primary in a memzone of its own (SBX_ABI_MEMZONE_NAME) whose layout never
 * changes, so that a binary built for another layout can still read it and say why it refuses:
 *  - the memzone layout version (SBX_SHM_VERSION of include/spanbox/shm.h);
 *  - the mempool drivers in the order of DPDK's mempool ops table: a pool records the index of its
 *    driver in that table, and the table is filled in the order the drivers register (link order,
 *    plugin load order), so in a binary linked otherwise the same index names another handler
 *    (DPDK bug 1073).
 * A secondary checks both after rte_eal_init() and before it looks up any pool or queue
 * (sbx_abi_check()); a mismatch is refused with both values in the message, which it also writes
 * into the memzone's refusal field for the primary (an upgrade of the workers reports it).
 */
#ifndef SPANBOX_ABI_H
#define SPANBOX_ABI_H

#include <stddef.h>
#include <stdint.h>

#define SBX_ABI_MEMZONE_NAME "spanbox_abi"
#define SBX_ABI_MAGIC 0x3130494241584253ULL /* "SBXABI01" little-endian: this layout, forever */
#define SBX_ABI_MAX_OPS 16                  /**< RTE_MEMPOOL_MAX_OPS_IDX of DPDK 22.11 */
#define SBX_ABI_OPS_NAMESIZE 32             /**< RTE_MEMPOOL_OPS_NAMESIZE */
#define SBX_ABI_REFUSAL_LEN 1024            /**< bytes of a refusal message, NUL included */

/** The published requirements (written once by the primary before any secondary starts), and the
 * last refusal (written by the refusing secondary). Frozen layout: append nothing, change nothing. */
struct sbx_abi_shm {
	uint64_t magic;                 /**< SBX_ABI_MAGIC, written last */
	uint32_t shm_version;           /**< SBX_SHM_VERSION of the primary */
	uint32_t nb_ops;                /**< entries of ops[] in use (rte_mempool_ops_table.num_ops) */
	char ops[SBX_ABI_MAX_OPS][SBX_ABI_OPS_NAMESIZE]; /**< mempool driver names, table order */
	int32_t refusal_pid;            /**< the last secondary that refused (0 none); written after refusal */
	uint32_t reserved;
	char refusal[SBX_ABI_REFUSAL_LEN]; /**< its message (both values) */
};

/**
 * Primary, after rte_eal_init(): reserve SBX_ABI_MEMZONE_NAME and publish @p shm_version and this
 * process's mempool ops table. @return 0, or -1 (message printed).
 */
int sbx_abi_publish(uint32_t shm_version);

/**
 * Secondary, after rte_eal_init() and before any pool, ring or port is touched: compare the
 * published layout version with @p my_version (the caller's SBX_SHM_VERSION, as it was compiled)
 * and the published mempool drivers with this process's table, in order.
 * @return 0 when both match; -1 with the reason in @p err ("memzone layout version: primary 15,
 *         this binary 16", "mempool drivers ...: primary [a, b], this binary [b, a]"), also written
 *         into the memzone's refusal field with our pid; -1 when there is no such memzone.
 */
int sbx_abi_check(uint32_t my_version, char *err, size_t errlen);

/** The published requirements, or NULL (no memzone, or not yet published). */
const struct sbx_abi_shm *sbx_abi_lookup(void);

#endif
