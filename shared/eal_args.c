/* SPDX-License-Identifier: BSD-3-Clause */
/* EAL command lines for the primary, the workers and mgmt. */
#include <errno.h>
#include <glob.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "spanbox/eal_args.h"
#include "spanbox/hostinfo.h"

static int push(struct sbx_eal_args *a, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (a->argc >= SBX_EAL_MAX_ARGS)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(a->buf + a->used, sizeof(a->buf) - a->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(a->buf) - a->used)
		return -1;
	a->argv[a->argc++] = a->buf + a->used;
	a->argv[a->argc] = NULL;
	a->used += (size_t)n + 1;
	return 0;
}

/* NUMA nodes of this machine (/sys/devices/system/node/node*), at least 1. */
static unsigned int numa_nodes(void)
{
	glob_t g;
	unsigned int n = 1;

	if (glob("/sys/devices/system/node/node[0-9]*", GLOB_ONLYDIR, NULL, &g) == 0) {
		n = g.gl_pathc > 0 ? (unsigned int)g.gl_pathc : 1;
		globfree(&g);
	}
	return n;
}

/* The housekeeping CPU list of @p cfg (eal.cpus when the parser did not settle one). */
static const char *housekeeping(const struct sbx_config *cfg)
{
	return cfg->housekeeping_cpus[0] != '\0' ? cfg->housekeeping_cpus : cfg->cpus;
}

int sbx_eal_housekeeping_affinity(const struct sbx_config *cfg, char *err, size_t errlen)
{
	struct sbx_cpuset set;
	cpu_set_t cs;
	unsigned int cpu;

	if (sbx_cpulist_parse(housekeeping(cfg), &set) <= 0) {
		snprintf(err, errlen, "housekeeping CPUs \"%s\": not a CPU list", housekeeping(cfg));
		return -1;
	}
	CPU_ZERO(&cs);
	for (cpu = 0; cpu < SBX_MAX_CPUS && cpu < CPU_SETSIZE; cpu++)
		if (sbx_cpuset_has(&set, cpu))
			CPU_SET(cpu, &cs);
	if (sched_setaffinity(0, sizeof(cs), &cs) != 0) {
		snprintf(err, errlen, "cannot bind to the housekeeping CPUs %s: %s", housekeeping(cfg), strerror(errno));
		return -1;
	}
	return 0;
}

int sbx_eal_args_build(struct sbx_eal_args *a, const struct sbx_config *cfg, enum sbx_role role,
		       const char *prog, unsigned int lcore_id, int cpu)
{
	int rc = 0;
	uint16_t i;

	memset(a, 0, sizeof(*a));
	if (role == SBX_ROLE_PRIMARY)
		lcore_id = cfg->primary_lcore;
	else if (role == SBX_ROLE_MGMT)
		lcore_id = cfg->mgmt_lcore;

	rc |= push(a, "%s", prog);
	rc |= push(a, "--file-prefix=%s", cfg->file_prefix);
	/* a pinned worker's lcore on its one CPU; everything else (primary, mgmt, parked standbys,
	 * workers without workers.cpus) on the housekeeping CPUs, which are eal.cpus without
	 * workers.cpus. EAL's control threads run on the process's start-up affinity less its
	 * lcore's CPU: the housekeeping CPUs (sbx_eal_housekeeping_affinity()). */
	if (role == SBX_ROLE_WORKER && cpu >= 0)
		rc |= push(a, "--lcores=%u@%d", lcore_id, cpu);
	else
		rc |= push(a, "--lcores=%u@(%s)", lcore_id, housekeeping(cfg));
	rc |= push(a, "--main-lcore=%u", lcore_id);
	rc |= push(a, "--log-level=lib.eal:notice");
	/* one hugepage file per memory segment list instead of one per page: a worker attaches
	 * (re-)starting in ~10 ms less (bench/restart.sh); every process must agree on the layout */
	rc |= push(a, "--single-file-segments");
	if (role == SBX_ROLE_PRIMARY) {
		rc |= push(a, "--proc-type=primary");
		/* the same amount on every socket: "--socket-mem=512,512" on two sockets */
		char mem[128] = "";
		unsigned int s, nodes = numa_nodes();

		for (s = 0; s < nodes && strlen(mem) + 12 < sizeof(mem); s++)
			snprintf(mem + strlen(mem), sizeof(mem) - strlen(mem), "%s%u", s ? "," : "", cfg->socket_mem_mb);
		rc |= push(a, "--socket-mem=%s", mem);
		for (i = 0; i < cfg->nb_ports; i++) {
			if (cfg->ports[i].is_pci) {
				rc |= push(a, "-a");
				rc |= push(a, "%s", cfg->ports[i].devargs);
			} else if (cfg->ports[i].kind == SBX_PORT_ETHDEV) {
				/* pcap ports are files the primary drives itself (primary/pcap_port.c) */
				rc |= push(a, "--vdev=%s", cfg->ports[i].devargs);
			}
		}
	} else {
		/* Secondaries learn the vdevs from the primary over the EAL IPC channel. */
		rc |= push(a, "--proc-type=secondary");
		for (i = 0; i < cfg->nb_ports; i++) {
			if (cfg->ports[i].is_pci) {
				rc |= push(a, "-a");
				rc |= push(a, "%s", cfg->ports[i].devargs);
			}
		}
	}
	if (!sbx_config_has_pci(cfg))
		rc |= push(a, "--no-pci");
	for (i = 0; i < cfg->nb_extra_eal; i++)
		rc |= push(a, "%s", cfg->extra_eal[i]);
	return rc ? -1 : 0;
}
