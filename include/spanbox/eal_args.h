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

#define SBX_EAL_MAX_ARGS 64

/** Which process the arguments are for. */
enum sbx_role { SBX_ROLE_PRIMARY, SBX_ROLE_WORKER, SBX_ROLE_MGMT };

/** An argv owned by the struct (strings live in buf). */
struct sbx_eal_args {
	int argc;
	char *argv[SBX_EAL_MAX_ARGS + 1]; /**< NULL-terminated */
	char buf[8192];
	size_t used;
};

/**
 * Fill @p a with the EAL arguments for @p role.
 * @param prog      argv[0]
 * @param lcore_id  lcore id of the process (ignored for the primary and mgmt: taken from cfg)
 * @return 0, or -1 when the arguments do not fit.
 */
int sbx_eal_args_build(struct sbx_eal_args *a, const struct sbx_config *cfg, enum sbx_role role,
		       const char *prog, unsigned int lcore_id);

#endif
