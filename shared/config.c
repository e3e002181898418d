/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The config's sections in order (sbx_config_sections_parse: each section's own file) and the checks
 * across them: files, static diff, placement (schema: docs/CONFIG.md; lookups: config_lookup.c).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spanbox/hostinfo.h"

#include "config_int.h"

static const char *const root_keys[] = {
	"eal", "pool", "ports", "workers", "forwarding", "mgmt", "mirrors", "tool_groups", "microburst", "flows", "maps", NULL};

/*
 * What a file path names, for comparing two of them: the realpath; for a file that does not exist
 * yet, its parent's realpath and its last component; when the parent does not exist either, the
 * path made absolute from the working directory (the primary opens relative paths from there). An
 * existing file also by device and inode, so that two hard links are one file.
 */
struct file_id {
	char path[PATH_MAX + NAME_MAX + 2];
	bool exists;
	dev_t dev;
	ino_t ino;
};

static void file_id(const char *p, struct file_id *f)
{
	char dir[PATH_MAX], *rp;
	const char *slash = strrchr(p, '/'), *base = slash ? slash + 1 : p;
	struct stat st;

	f->exists = stat(p, &st) == 0;
	f->dev = f->exists ? st.st_dev : 0;
	f->ino = f->exists ? st.st_ino : 0;
	rp = realpath(p, NULL);
	if (rp != NULL) {
		snprintf(f->path, sizeof(f->path), "%s", rp);
		free(rp);
		return;
	}
	snprintf(dir, sizeof(dir), "%.*s", slash ? (slash == p ? 1 : (int)(slash - p)) : 1, slash ? p : ".");
	rp = realpath(dir, NULL);
	if (rp != NULL) {
		snprintf(f->path, sizeof(f->path), "%s/%s", strcmp(rp, "/") ? rp : "", base);
		free(rp);
	} else if (p[0] == '/' || getcwd(dir, sizeof(dir)) == NULL) {
		snprintf(f->path, sizeof(f->path), "%s", p);
	} else {
		snprintf(f->path, sizeof(f->path), "%s/%s", dir, p);
	}
}

/* True when @a and @b name the same file. */
static bool same_file(const struct file_id *a, const struct file_id *b)
{
	if (a->exists && b->exists)
		return a->dev == b->dev && a->ino == b->ino;
	return strcmp(a->path, b->path) == 0;
}

/* The files of the pcap file ports and of mgmt, while check_files() compares them. */
struct files {
	char rx[SBX_MAX_PORTS][SBX_DEVARGS_LEN], tx[SBX_MAX_PORTS][SBX_DEVARGS_LEN];
	struct file_id rx_id[SBX_MAX_PORTS], tx_id[SBX_MAX_PORTS];
	struct file_id own[6];
};

/*
 * Output files must not destroy input or state: refuse a tx_pcap written by two ports (the
 * records interleave: a corrupt capture), a tx_pcap that a port reads (opening it for writing
 * truncates the input before it is read), and a tx_pcap that is the database (or its -wal, -shm,
 * -journal file), the token file or the config file @config_path (NULL: not known).
 */
static int check_files(struct cfg_ctx *c, const struct sbx_config *cfg, const char *config_path)
{
	static const char *const own_name[] = {"mgmt.database", "mgmt.database's -wal file",
					       "mgmt.database's -shm file", "mgmt.database's -journal file",
					       "mgmt.token_file", "the config file itself"};
	static const char *const db_suffix[] = {"", "-wal", "-shm", "-journal"}; /* SQLite's files */
	char path[32], buf[SBX_PATH_LEN + 16];
	struct files *f = calloc(1, sizeof(*f));
	int i, j, k, rc = 0;
	struct cfg_ctx quiet = {NULL, 0};

	if (f == NULL)
		return cfg_fail(c, "config", NULL, "out of memory");
	for (i = 0; i < cfg->nb_ports; i++) {
		if (cfg->ports[i].kind != SBX_PORT_PCAP_FILE)
			continue;
		cfg_check_devargs(&quiet, "", cfg->ports[i].devargs, f->rx[i], f->tx[i]); /* checked already */
		if (f->rx[i][0])
			file_id(f->rx[i], &f->rx_id[i]);
		if (f->tx[i][0])
			file_id(f->tx[i], &f->tx_id[i]);
	}
	for (k = 0; k < 4; k++) {
		snprintf(buf, sizeof(buf), "%s%s", cfg->mgmt_database, db_suffix[k]);
		file_id(buf, &f->own[k]);
	}
	file_id(cfg->mgmt_token_file, &f->own[4]);
	if (config_path != NULL)
		file_id(config_path, &f->own[5]);
	for (j = 0; j < cfg->nb_ports && rc == 0; j++) {
		snprintf(path, sizeof(path), "ports[%d]", j);
		for (i = 0; i <= j && rc == 0; i++) {
			if (f->tx[j][0] && f->tx[i][0] && i < j && same_file(&f->tx_id[j], &f->tx_id[i]))
				rc = cfg_fail(c, path, "devargs",
					  "tx_pcap \"%s\" is also the tx_pcap of ports[%d] (%s): two ports writing one "
					  "file corrupt it",
					  f->tx[j], i, f->tx_id[j].path);
			else if (f->tx[j][0] && f->rx[i][0] && same_file(&f->tx_id[j], &f->rx_id[i]))
				rc = cfg_fail(c, path, "devargs",
					  "tx_pcap \"%s\" is the rx_pcap of ports[%d] (%s): writing it would destroy "
					  "that input",
					  f->tx[j], i, f->tx_id[j].path);
			else if (f->rx[j][0] && f->tx[i][0] && i < j && same_file(&f->rx_id[j], &f->tx_id[i]))
				rc = cfg_fail(c, path, "devargs",
					  "rx_pcap \"%s\" is the tx_pcap of ports[%d] (%s): writing it would destroy "
					  "this input",
					  f->rx[j], i, f->rx_id[j].path);
		}
		for (k = 0; k < 6 && rc == 0 && f->tx[j][0]; k++)
			if ((k < 5 || config_path != NULL) && same_file(&f->tx_id[j], &f->own[k]))
				rc = cfg_fail(c, path, "devargs", "tx_pcap \"%s\" is %s (%s)", f->tx[j], own_name[k],
					  f->tx_id[j].path);
	}
	free(f);
	return rc;
}

int sbx_config_sections_parse(const cJSON *root, struct sbx_config *cfg, char *err, size_t errlen)
{
	struct cfg_ctx c = {err, errlen};

	if (!cJSON_IsObject(root))
		return cfg_fail(&c, "config", NULL, "expected a JSON object");
	return cfg_check_keys(&c, root, "", root_keys) || cfg_parse_eal(&c, root, cfg) || cfg_parse_pool(&c, root, cfg) ||
			       cfg_parse_ports(&c, root, cfg) || cfg_parse_workers(&c, root, cfg) ||
			       cfg_parse_forwarding(&c, root, cfg) || cfg_parse_tool_groups(&c, root, cfg) ||
			       cfg_parse_mirrors(&c, root, cfg) || cfg_parse_mgmt(&c, root, cfg) || cfg_parse_microburst(&c, root, cfg) ||
			       cfg_parse_flows(&c, root, cfg)
		       ? -1
		       : 0;
}

int sbx_config_files_check(const struct sbx_config *cfg, const char *config_path, char *err, size_t errlen)
{
	struct cfg_ctx c = {err, errlen};

	return check_files(&c, cfg, config_path);
}

const char *sbx_config_static_diff(const struct sbx_config *a, const struct sbx_config *b)
{
	/* sbx_config_parse() zeroes the whole struct first: padding compares equal. "ports" is all of
	 * each port but its ingress object (live: runtime tables): the members before it and after it. */
#define ING_END (offsetof(struct sbx_port_cfg, ingress) + sizeof(struct sbx_ingress_cfg))
	static const struct {
		const char *name;
		size_t from, to;
	} sec[] = {
		{ "eal", offsetof(struct sbx_config, file_prefix), offsetof(struct sbx_config, pool_mbufs) },
		{ "pool", offsetof(struct sbx_config, pool_mbufs), offsetof(struct sbx_config, nb_ports) },
		{ "ports", 0, 0 },
		{ "workers.tool_group_capacity", offsetof(struct sbx_config, tg_cap_groups),
		  offsetof(struct sbx_config, tg_cap_members) + sizeof(uint16_t) },
		{ "workers", offsetof(struct sbx_config, nb_workers), offsetof(struct sbx_config, nb_xconnects) },
		{ "microburst", offsetof(struct sbx_config, mb_enabled), offsetof(struct sbx_config, mgmt_listen) },
		{ "mgmt", offsetof(struct sbx_config, mgmt_listen), offsetof(struct sbx_config, flows) },
		/* flows is live (docs/RUNTIME_TABLES.md "Flows") but for the size of the workers' tables */
		{ "flows.flows_per_worker", offsetof(struct sbx_config, flows.capacity),
		  offsetof(struct sbx_config, flows.capacity) + sizeof(uint32_t) },
		/* maps is live (issue #27, docs/RUNTIME_TABLES.md "Maps"): not compared */
	};
	size_t i, p;

	for (i = 0; i < sizeof(sec) / sizeof(sec[0]); i++) {
		if (sec[i].to == 0) {
			if (a->nb_ports != b->nb_ports)
				return sec[i].name;
			for (p = 0; p < SBX_MAX_PORTS; p++)
				if (memcmp(&a->ports[p], &b->ports[p], offsetof(struct sbx_port_cfg, ingress)) ||
				    memcmp((const char *)&a->ports[p] + ING_END, (const char *)&b->ports[p] + ING_END,
					   sizeof(struct sbx_port_cfg) - ING_END))
					return sec[i].name;
		} else if (memcmp((const char *)a + sec[i].from, (const char *)b + sec[i].from, sec[i].to - sec[i].from)) {
			return sec[i].name;
		}
	}
	return NULL;
#undef ING_END
}

/* The first CPU of @p set not in @p online, or -1. */
static int first_offline(const struct sbx_cpuset *set, const struct sbx_cpuset *online)
{
	unsigned int cpu;

	for (cpu = 0; cpu < SBX_MAX_CPUS; cpu++)
		if (sbx_cpuset_has(set, cpu) && !sbx_cpuset_has(online, cpu))
			return (int)cpu;
	return -1;
}

int sbx_config_placement_check(const struct sbx_config *cfg, char *err, size_t errlen)
{
	struct sbx_cpuset online, set;
	char list[256];
	int cpu;
	uint16_t w;

	if (sbx_cpus_online(&online) < 0)
		return 0; /* no sysfs: EAL checks the CPUs itself */
	sbx_cpulist_format(&online, list, sizeof(list));
	for (w = 0; w < cfg->nb_workers; w++)
		if (cfg->workers[w].cpu >= 0 && !sbx_cpuset_has(&online, (unsigned int)cfg->workers[w].cpu)) {
			snprintf(err, errlen, "workers.cpus[%u]: CPU %d does not exist or is offline (online: %s)", w,
				 cfg->workers[w].cpu, list);
			return -1;
		}
	if (sbx_cpulist_parse(cfg->cpus, &set) >= 0 && (cpu = first_offline(&set, &online)) >= 0) {
		snprintf(err, errlen, "eal.cpus: CPU %d does not exist or is offline (online: %s)", cpu, list);
		return -1;
	}
	if (sbx_cpulist_parse(cfg->housekeeping_cpus, &set) >= 0 && (cpu = first_offline(&set, &online)) >= 0) {
		snprintf(err, errlen, "eal.housekeeping_cpus: CPU %d does not exist or is offline (online: %s)", cpu,
			 list);
		return -1;
	}
	return 0;
}
