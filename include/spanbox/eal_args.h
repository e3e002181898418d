/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file eal_args.h
 * Builds the EAL command line of each spanbox process from the config, so that every process
 * uses the same --file-prefix, its own lcore id (--lcores '<id>@(<cpus>)'), and --no-pci unless
 * the config lists PCI ports (rule: never probe the machine's own NIC).
 */
#ifndef SPANBOX_EAL_ARGS_H
#define SPANBOX_EAL_ARGS_H

#include "config.h"

/** Room for one --vdev per port (SBX_MAX_PORTS) besides spanbox's own and eal.extra_args: 64 arguments
 * refused a config of 64 vdev ports with "EAL arguments too long" (25d found it). */
#define SBX_EAL_MAX_ARGS (SBX_MAX_PORTS + 64)

/** Which process the arguments are for. */
enum sbx_role { SBX_ROLE_PRIMARY, SBX_ROLE_WORKER, SBX_ROLE_MGMT };

/** An argv owned by the struct (strings live in buf). */
struct sbx_eal_args {
	int argc;
	char *argv[SBX_EAL_MAX_ARGS + 1]; /**< NULL-terminated */
	char buf[SBX_MAX_PORTS * SBX_DEVARGS_LEN + 8192]; /**< every port's devargs at their longest, and the rest */
	size_t used;
};

/**
 * Fill @p a with the EAL arguments for @p role.
 * @param prog      argv[0]
 * @param lcore_id  lcore id of the process (ignored for the primary and mgmt: taken from cfg)
 * @param cpu       the one CPU of a pinned worker's lcore (workers.cpus), or -1: the lcore floats
 *                  on the housekeeping CPUs (eal.housekeeping_cpus, which is eal.cpus without
 *                  workers.cpus). A standby parks with -1 and moves to its worker's CPU itself.
 * @return 0, or -1 when the arguments do not fit.
 */
int sbx_eal_args_build(struct sbx_eal_args *a, const struct sbx_config *cfg, enum sbx_role role,
		       const char *prog, unsigned int lcore_id, int cpu);

/**
 * Bind the calling process (call it before it starts any thread, before rte_eal_init()) to the
 * housekeeping CPUs of @p cfg. EAL puts its control threads (interrupts, rte_mp, telemetry) on
 * the start-up affinity less the lcores' CPUs: from a process allowed on every CPU they would
 * land on the pinned workers' CPUs. The primary and mgmt call it; a worker inherits the
 * primary's housekeeping affinity through fork().
 * @return 0, or -1 with why in @p err (sched_setaffinity failed).
 */
int sbx_eal_housekeeping_affinity(const struct sbx_config *cfg, char *err, size_t errlen);

#endif
