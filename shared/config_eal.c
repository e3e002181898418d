/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sections "eal" and "pool" (docs/CONFIG.md).
 */
#include <stdio.h>
#include <string.h>

#include "spanbox/hostinfo.h"

#include "config_int.h"

static const char *const eal_keys[] = {
	"file_prefix", "socket_mem_mb", "primary_lcore", "mgmt_lcore", "cpus", "housekeeping_cpus", "extra_args",
	NULL};

static const char *const pool_keys[] = {"mbufs", "cache", "headroom", "force", "measure_memset", NULL};

/*
 * EAL options spanbox sets itself (shared/eal_args.c) or that conflict with one it sets: an
 * extra argument repeating one would start a process with two prefixes, lcore maps or device
 * lists (EAL takes the last, or refuses at init, long after --check said "valid"). name: a long
 * option without "--", or one short option letter.
 */
static const struct {
	const char *name;
	const char *why;
} eal_refused[] = {
	{"file-prefix", "spanbox sets --file-prefix itself (eal.file_prefix)"},
	{"lcores", "@lcores"}, {"main-lcore", "@lcores"}, {"master-lcore", "@lcores"},
	{"l", "@lcores"}, {"c", "@lcores"},
	{"proc-type", "spanbox sets --proc-type itself (primary, or secondary for the workers and mgmt)"},
	{"socket-mem", "spanbox sets --socket-mem itself (eal.socket_mem_mb)"},
	{"m", "@mem"}, {"no-huge", "@mem"},
	{"vdev", "@dev"}, {"allow", "@dev"}, {"pci-whitelist", "@dev"}, {"block", "@dev"},
	{"pci-blacklist", "@dev"}, {"no-pci", "@dev"}, {"a", "@dev"}, {"b", "@dev"},
	{"single-file-segments",
	 "spanbox sets --single-file-segments itself (every process must agree on the memory layout)"},
};

/* The reasons shared by several options of eal_refused[]. */
static const char *eal_why(const char *why)
{
	if (!strcmp(why, "@lcores"))
		return "spanbox sets --lcores and --main-lcore itself (eal.primary_lcore, eal.mgmt_lcore, "
		       "workers.lcores, eal.cpus)";
	if (!strcmp(why, "@mem"))
		return "conflicts with --socket-mem, which spanbox sets itself (eal.socket_mem_mb)";
	if (!strcmp(why, "@dev"))
		return "spanbox sets the devices itself (ports[].devargs: --vdev for virtual devices, -a for PCI "
		       "ports, --no-pci when there is none)";
	return why;
}

/* Long EAL options (DPDK 22.11) that take their value as the next argument when given without "=". */
static const char *const eal_long_with_value[] = {
	"base-virtaddr", "file-prefix", "huge-dir", "iova-mode", "lcores", "log-level", "trace", "trace-dir",
	"trace-bufsz", "trace-mode", "main-lcore", "master-lcore", "mbuf-pool-ops-name", "proc-type",
	"socket-mem", "socket-limit", "syslog", "vdev", "vfio-intr", "vfio-vf-token", "allow", "block",
	"pci-whitelist", "pci-blacklist", "force-max-simd-bitwidth", NULL};

/* Short EAL options (DPDK 22.11 eal_short_options "a:b:c:s:d:hl:S:m:n:r:v") that take a value. */
static const char EAL_SHORT_WITH_VALUE[] = "abcsdlSmnr";

/*
 * Refuse extra EAL argument @arg (eal.extra_args[@i]) when it is an option of eal_refused[]: a long
 * option by its name before "=" or by an abbreviation getopt_long would take for it, a short one
 * anywhere in a cluster ("-vl1"). *skip_next is set when @arg is an option whose value is the next
 * argument (that argument is a value, not an option).
 */
static int check_extra_arg(struct cfg_ctx *c, int i, const char *arg, bool *skip_next)
{
	char path[32];
	size_t k, n;

	*skip_next = false;
	snprintf(path, sizeof(path), "eal.extra_args[%d]", i);
	if (arg[0] != '-' || arg[1] == '\0')
		return 0; /* not an option (EAL refuses stray arguments itself) */
	if (arg[1] == '-') {
		const char *name = arg + 2;

		n = strcspn(name, "=");
		if (n == 0)
			return 0;
		for (k = 0; k < sizeof(eal_refused) / sizeof(eal_refused[0]); k++) {
			const char *full = eal_refused[k].name;

			if (full[1] == '\0' || strlen(full) < n || strncmp(full, name, n))
				continue;
			if (strlen(full) == n)
				return cfg_fail(c, path, NULL, "\"%s\": %s", arg, eal_why(eal_refused[k].why));
			return cfg_fail(c, path, NULL, "\"%s\": EAL takes it for --%s: %s", arg, full,
				    eal_why(eal_refused[k].why));
		}
		for (k = 0; name[n] == '\0' && eal_long_with_value[k]; k++)
			if (strlen(eal_long_with_value[k]) == n && !strncmp(eal_long_with_value[k], name, n))
				*skip_next = true;
		return 0;
	}
	for (n = 1; arg[n]; n++) {
		for (k = 0; k < sizeof(eal_refused) / sizeof(eal_refused[0]); k++)
			if (eal_refused[k].name[1] == '\0' && eal_refused[k].name[0] == arg[n])
				return cfg_fail(c, path, NULL, "\"%s\": %s", arg, eal_why(eal_refused[k].why));
		if (strchr(EAL_SHORT_WITH_VALUE, arg[n])) {
			*skip_next = arg[n + 1] == '\0';
			return 0; /* the rest of the cluster is the option's value */
		}
	}
	return 0;
}

/* Parse "eal": prefix, hugepage memory, lcore ids of primary and mgmt, cpu set, extra args. */
int cfg_parse_eal(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	const cJSON *o, *arr, *it;
	bool skip = false;
	char path[64];
	int i = 0;

	if (cfg_get_section(c, root, "eal", eal_keys, &o) ||
	    cfg_get_string(c, o, "eal", "file_prefix", cfg->file_prefix, sizeof(cfg->file_prefix),
		       true, cfg_name_chars, "spanbox") ||
	    cfg_get_u32(c, o, "eal", "socket_mem_mb", 64, 65536, 512, &cfg->socket_mem_mb) ||
	    cfg_get_u16(c, o, "eal", "primary_lcore", 0, SBX_LCORE_ID_MAX, 0, &cfg->primary_lcore) ||
	    cfg_get_u16(c, o, "eal", "mgmt_lcore", 0, SBX_LCORE_ID_MAX, 100, &cfg->mgmt_lcore) ||
	    cfg_get_string(c, o, "eal", "cpus", cfg->cpus, sizeof(cfg->cpus), true, cfg_cpu_chars, "0-1") ||
	    cfg_get_string(c, o, "eal", "housekeeping_cpus", cfg->housekeeping_cpus, sizeof(cfg->housekeeping_cpus),
		       false, cfg_cpu_chars, "") ||
	    cfg_get_array(c, o, "eal", "extra_args", SBX_MAX_EXTRA_EAL, &arr))
		return -1;
	if (cfg->mgmt_lcore == cfg->primary_lcore)
		return cfg_fail(c, "eal", "mgmt_lcore", "lcore %u is already eal.primary_lcore",
			    cfg->mgmt_lcore);
	{
		struct sbx_cpuset set;

		if (sbx_cpulist_parse(cfg->cpus, &set) <= 0)
			return cfg_fail(c, "eal", "cpus", "\"%s\" is not a CPU list (\"0-3,8\", CPUs 0..%d)", cfg->cpus,
				    SBX_MAX_CPUS - 1);
		if (cfg->housekeeping_cpus[0] != '\0' && sbx_cpulist_parse(cfg->housekeeping_cpus, &set) <= 0)
			return cfg_fail(c, "eal", "housekeeping_cpus", "\"%s\" is not a CPU list (\"0-3,8\", CPUs 0..%d)",
				    cfg->housekeeping_cpus, SBX_MAX_CPUS - 1);
	}
	cJSON_ArrayForEach(it, arr) {
		snprintf(path, sizeof(path), "eal.extra_args[%d]", i);
		if (cfg_to_string(c, it, path, NULL, cfg->extra_eal[i], SBX_DEVARGS_LEN, true, NULL))
			return -1;
		if (skip)
			skip = false; /* the value of the option before */
		else if (check_extra_arg(c, i, cfg->extra_eal[i], &skip))
			return -1;
		i++;
	}
	cfg->nb_extra_eal = (uint16_t)i;
	return 0;
}

/* Parse "pool": mbuf count (0 = let the planner compute it), per-lcore cache, the planner's
 * headroom, whether a count below the plan is allowed, and the start-up memset measurement. */
int cfg_parse_pool(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	const cJSON *o;

	if (cfg_get_section(c, root, "pool", pool_keys, &o) ||
	    cfg_get_u32(c, o, "pool", "mbufs", 0, 16777216, 0, &cfg->pool_mbufs) ||
	    cfg_get_u16(c, o, "pool", "cache", 0, 512, 256, &cfg->pool_cache) ||
	    cfg_get_u32(c, o, "pool", "headroom", 0, 1000000, 2048, &cfg->pool_headroom) ||
	    cfg_get_bool(c, o, "pool", "force", false, &cfg->pool_force) ||
	    cfg_get_bool(c, o, "pool", "measure_memset", false, &cfg->pool_measure_memset))
		return -1;
	if (cfg->pool_mbufs > 0 && cfg->pool_mbufs < 1024)
		return cfg_fail(c, "pool", "mbufs", "%u out of range 1024..16777216 (or 0 = computed)",
			    cfg->pool_mbufs);
	return 0;
}
