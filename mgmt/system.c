/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The appliance's view of the machine (system.h): NUMA sockets, lcores, hugepages, placement
 * warnings, PCIe paths, pool plans, and the rate-limited copy probe.
 *
 * Threads: every function but the probe's worker thread runs on the HTTP thread, except
 * mgmt_memprobe_launch() and mgmt_memprobe_result(), which run on the probe lane of http.c
 * (api_core.c waits there for the run). The probe's state is shared under probe.lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_memory.h>

#include "spanbox/hostinfo.h"
#include "spanbox/pcie.h"
#include "spanbox/pcie_json.h"
#include "system.h"
#include "timefmt.h"
#include "validate.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX_SOCKETS 32        /* sockets tracked per hugepage size (RTE_MAX_NUMA_NODES) */
#define PROBE_OUT_MAX (1 << 20) /* bytes of probe stdout kept */
#define PROBE_ERR_MAX 4096      /* bytes of probe stderr kept */

extern char **environ;

static void num(cJSON *o, const char *key, double v)
{
	cJSON_AddNumberToObject(o, key, v);
}

/* A socket number, null when negative (unknown or several). */
static void socket_num(cJSON *o, const char *key, int s)
{
	if (s >= 0)
		num(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

/* A string from a fixed-size char array of the memzone, even without its NUL. */
static void fixed_str(cJSON *o, const char *key, const char *s, size_t size)
{
	char buf[SBX_WARN_LEN];

	snprintf(buf, sizeof(buf), "%.*s", (int)MIN(size, sizeof(buf) - 1), s);
	cJSON_AddStringToObject(o, key, buf);
}
#define FIXED_STR(o, key, arr) fixed_str(o, key, arr, sizeof(arr))

cJSON *mgmt_warnings_json(const struct sbx_shm *shm)
{
	cJSON *a = cJSON_CreateArray();
	uint32_t i;

	for (i = 0; shm != NULL && i < MIN(shm->nb_warnings, SBX_MAX_WARNINGS); i++) {
		cJSON *w = cJSON_CreateObject();

		FIXED_STR(w, "kind", shm->warnings[i].kind);
		FIXED_STR(w, "message", shm->warnings[i].text);
		cJSON_AddItemToArray(a, w);
	}
	return a;
}

/* ---- pools ---- */

void mgmt_pool_details_json(cJSON *po, const struct sbx_shm *shm, uint32_t i)
{
	static const char *const sources[] = { "plan", "config", "config below the plan (pool.force)" };
	const struct sbx_pool_shm *p = &shm->pools[i];
	const struct sbx_pool_plan *pl = &p->plan;
	cJSON *o = cJSON_AddObjectToObject(po, "plan");

	num(o, "rx_desc", (double)pl->rx_desc);
	num(o, "tx_desc", (double)pl->tx_desc);
	num(o, "mirror_tx", (double)pl->mirror_tx);
	num(o, "lcore_caches", (double)pl->lcore_caches);
	num(o, "bursts", (double)pl->bursts);
	num(o, "rings", (double)pl->rings);
	num(o, "reassembly", (double)pl->reassembly);
	num(o, "headroom", (double)pl->headroom);
	num(o, "total", (double)pl->total);
	num(o, "ports", pl->ports);
	num(o, "workers", pl->workers);
	cJSON_AddStringToObject(po, "size_source", sources[p->size_source % 3]);
	num(po, "bytes", (double)p->bytes);
	num(po, "hugepage_size_kb", (double)(p->hugepage_size >> 10));
	/* memory EAL mapped for this pool while creating it: its first touch is inside populate_ms */
	num(po, "fresh_hugepage_bytes", (double)p->heap_grow_bytes);
	o = cJSON_AddObjectToObject(po, "hugepage_check");
	num(o, "need_bytes", (double)p->need_bytes);
	num(o, "eal_heap_free_bytes", (double)p->heap_free_bytes);
	num(o, "free_hugepage_bytes", (double)p->free_huge_bytes);
	num(o, "flows_bytes", (double)p->flows_bytes); /* of need_bytes: flow tables and rings */
	if (p->memset_status == 1) {
		o = cJSON_AddObjectToObject(po, "memset");
		num(o, "memset_ms", (double)(p->memset_ns / 1000) / 1000.0);
		num(o, "bytes", (double)p->memset_bytes);
		num(o, "page_size_kb", (double)(p->memset_page_size >> 10));
		num(o, "ratio", p->memset_ns ? (double)(uint64_t)((double)p->populate_ns / (double)p->memset_ns * 1000 + 0.5) / 1000 : 0);
		cJSON_AddStringToObject(o, "ratio_is", "populate_ms / memset_ms");
	} else if (p->memset_status == -1) {
		o = cJSON_AddObjectToObject(po, "memset");
		FIXED_STR(o, "error", p->memset_error);
	} else {
		cJSON_AddNullToObject(po, "memset");
	}
}

/* ---- ports ---- */

/* True when warning @p text names port @p name ("port NAME " or "port NAME:"). */
static bool names_port(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *s = text;

	while ((s = strstr(s, "port ")) != NULL) {
		s += 5;
		if (strncmp(s, name, n) == 0 && (s[n] == ' ' || s[n] == ':' || s[n] == '\0'))
			return true;
	}
	return false;
}

void mgmt_port_placement_json(cJSON *o, const struct sbx_shm *shm, uint16_t i)
{
	const struct sbx_port_shm *ps = &shm->ports[i];
	const struct sbx_port_cfg *pc = &shm->cfg.ports[i];
	char pool[SBX_NAME_LEN], name[SBX_NAME_LEN], bdf[SBX_PCIE_BDF_LEN], err[512];
	cJSON *a, *pci = NULL;
	uint16_t w, q;
	uint32_t k;

	snprintf(name, sizeof(name), "%.*s", SBX_NAME_LEN - 1, pc->name);
	socket_num(o, "socket", ps->numa_socket);
	socket_num(o, "device_socket", ps->socket_id);
	cJSON_AddStringToObject(o, "socket_source", ps->socket_from_hook ? "test hook SBX_TEST_PORT_SOCKET"
						    : ps->socket_id < 0 ? "unknown (the device does not say)"
									: "device (rte_eth_dev_socket_id)");
	sbx_pool_name(ps->pool_socket, pool, sizeof(pool));
	a = cJSON_AddObjectToObject(o, "pool");
	cJSON_AddStringToObject(a, "name", pool);
	num(a, "socket", ps->pool_socket);
	a = cJSON_AddArrayToObject(o, "polled_by");
	for (w = 0; w < MIN(shm->cfg.nb_workers, SBX_MAX_WORKERS); w++) {
		const struct sbx_worker_cfg *wc = &shm->cfg.workers[w];
		const struct sbx_worker_rxqs *wq = &shm->placement[w];
		cJSON *x = NULL, *qs = NULL;

		for (q = 0; q < MIN(wq->nb_rxq, SBX_MAX_RXQ_PER_WORKER); q++) {
			if (wq->rxq[q].port != i)
				continue;
			if (x == NULL) {
				x = cJSON_CreateObject();
				num(x, "worker", w);
				num(x, "lcore", wc->lcore_id);
				for (k = 0; k < MIN(shm->nb_lcores, SBX_MAX_LCORES); k++)
					if (shm->lcores[k].worker == (int16_t)w)
						socket_num(x, "socket", shm->lcores[k].socket);
				qs = cJSON_AddArrayToObject(x, "queues");
				cJSON_AddItemToArray(a, x);
			}
			cJSON_AddItemToArray(qs, cJSON_CreateNumber(wq->rxq[q].queue));
		}
	}
	a = cJSON_AddArrayToObject(o, "warnings");
	for (k = 0; k < MIN(shm->nb_warnings, SBX_MAX_WARNINGS); k++)
		if (names_port(shm->warnings[k].text, name))
			cJSON_AddItemToArray(a, cJSON_CreateString(shm->warnings[k].text));
	if (pc->is_pci && sbx_pcie_devargs_bdf(pc->devargs, bdf) && mgmt_pci_json(bdf, &pci, err, sizeof(err)) == 200) {
		cJSON_AddItemToObject(o, "pci", pci);
	} else if (pc->is_pci) {
		pci = cJSON_AddObjectToObject(o, "pci");
		cJSON_AddStringToObject(pci, "error", pc->is_pci && sbx_pcie_devargs_bdf(pc->devargs, bdf) ? err
												  : "not a DDDD:BB:DD.F address");
	} else {
		cJSON_AddNullToObject(o, "pci");
	}
}

/* ---- PCI ---- */

unsigned int mgmt_pci_json(const char *bdf, cJSON **out, char *err, size_t errlen)
{
	static struct sbx_pcie_info chain[SBX_PCIE_MAX_CHAIN];
	char warn[32][SBX_PCIE_WARN_LEN], path[96], lower[SBX_PCIE_BDF_LEN];
	cJSON *a;
	int n, nw, i;

	*out = NULL;
	if (!sbx_pcie_bdf_valid(bdf)) {
		snprintf(err, errlen, "%s is not a PCI address DDDD:BB:DD.F (hex, device 00..1f, function 0..7)", bdf);
		return 400;
	}
	sbx_pcie_devargs_bdf(bdf, lower); /* sysfs names are lower case */
	bdf = lower;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", bdf);
	if (access(path, F_OK) != 0) {
		snprintf(err, errlen, "no PCI device %s", bdf);
		return 404;
	}
	n = sbx_pcie_path(bdf, chain, SBX_PCIE_MAX_CHAIN, err, errlen);
	if (n < 0)
		return 500;
	nw = sbx_pcie_warnings(chain, n, warn, (int)(sizeof(warn) / sizeof(warn[0])));
	*out = cJSON_CreateObject();
	if (*out == NULL)
		return 500;
	cJSON_AddStringToObject(*out, "bdf", bdf);
	cJSON_AddItemToObject(*out, "device", sbx_pcie_info_json(&chain[0], false));
	a = cJSON_AddArrayToObject(*out, "bridges");
	for (i = 1; i < n; i++)
		cJSON_AddItemToArray(a, sbx_pcie_info_json(&chain[i], true));
	a = cJSON_AddArrayToObject(*out, "warnings");
	for (i = 0; i < nw; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(warn[i]));
	return 200;
}

/* ---- GET /system ---- */

/* Pages spanbox's EAL holds, per page size and socket (memseg lists of the shared memconfig). */
struct seg_count {
	uint64_t page_sz[SBX_MAX_HUGE_SIZES];
	uint64_t pages[SBX_MAX_HUGE_SIZES][MAX_SOCKETS];
};

static int count_seg(const struct rte_memseg_list *msl, const struct rte_memseg *ms, void *arg)
{
	struct seg_count *c = arg;
	int k;

	(void)ms;
	if (msl->external || msl->socket_id < 0 || msl->socket_id >= MAX_SOCKETS)
		return 0;
	for (k = 0; k < SBX_MAX_HUGE_SIZES; k++) {
		if (c->page_sz[k] == 0)
			c->page_sz[k] = msl->page_sz;
		if (c->page_sz[k] == msl->page_sz) {
			c->pages[k][msl->socket_id]++;
			break;
		}
	}
	return 0;
}

/* Pages of @p page_sz on @p socket held by spanbox; -1 when not known (appliance down). */
static double seg_pages(const struct seg_count *c, bool known, uint64_t page_sz, int socket)
{
	int k;

	if (!known)
		return -1;
	for (k = 0; k < SBX_MAX_HUGE_SIZES; k++)
		if (c->page_sz[k] == page_sz && socket >= 0 && socket < MAX_SOCKETS)
			return (double)c->pages[k][socket];
	return 0;
}

static cJSON *hugepages_json(const struct sbx_shm *shm)
{
	static struct sbx_hugepages h[SBX_MAX_HUGE_SIZES * (SBX_MAX_NODES + 1)];
	static struct seg_count segs;
	struct sbx_hugetlbfs m[16];
	cJSON *o = cJSON_CreateObject(), *a, *x, *per;
	int n = sbx_hugepages_read(h, (int)(sizeof(h) / sizeof(h[0]))), nm = sbx_hugetlbfs_mounts(m, 16), i, k;
	uint64_t files_total = 0, bytes_total = 0;
	bool known = shm != NULL;
	char prefix[SBX_NAME_LEN] = "";

	if (known)
		snprintf(prefix, sizeof(prefix), "%.*s", SBX_NAME_LEN - 1, shm->cfg.file_prefix);

	memset(&segs, 0, sizeof(segs));
	if (known)
		rte_memseg_walk(count_seg, &segs);
	num(o, "default_page_size_kb", (double)(sbx_default_hugepage_size() >> 10));
	a = cJSON_AddArrayToObject(o, "sizes");
	for (i = 0; i < n; i++) {
		double pages;

		if (h[i].node != -1)
			continue;
		x = cJSON_CreateObject();
		num(x, "page_size_kb", (double)(h[i].page_size >> 10));
		num(x, "total", (double)h[i].nr);
		num(x, "free", (double)h[i].free);
		num(x, "reserved", (double)h[i].resv);
		num(x, "surplus", (double)h[i].surplus);
		per = cJSON_AddArrayToObject(x, "sockets");
		for (k = 0; k < n; k++) {
			cJSON *s;

			if (h[k].node < 0 || h[k].page_size != h[i].page_size)
				continue;
			s = cJSON_CreateObject();
			num(s, "socket", h[k].node);
			num(s, "total", (double)h[k].nr);
			num(s, "free", (double)h[k].free);
			num(s, "surplus", (double)h[k].surplus);
			pages = seg_pages(&segs, known, h[k].page_size, h[k].node);
			if (pages >= 0)
				num(s, "spanbox_pages", pages);
			else
				cJSON_AddNullToObject(s, "spanbox_pages");
			cJSON_AddItemToArray(per, s);
		}
		cJSON_AddItemToArray(a, x);
	}
	a = cJSON_AddArrayToObject(o, "mounts");
	for (i = 0; i < nm; i++) {
		uint64_t files = 0, bytes = 0;

		x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "path", m[i].path);
		num(x, "page_size_kb", (double)(m[i].page_size >> 10));
		if (known && sbx_prefix_hugefiles(m[i].path, prefix, &files, &bytes) == 0) {
			num(x, "spanbox_files", (double)files);
			num(x, "spanbox_bytes", (double)bytes);
			files_total += files;
			bytes_total += bytes;
		}
		cJSON_AddItemToArray(a, x);
	}
	x = cJSON_AddObjectToObject(o, "spanbox");
	if (known) {
		cJSON_AddStringToObject(x, "file_prefix", prefix);
		num(x, "files", (double)files_total);
		num(x, "bytes", (double)bytes_total);
	} else {
		cJSON_AddNullToObject(x, "file_prefix");
		cJSON_AddNullToObject(x, "files");
		cJSON_AddNullToObject(x, "bytes");
	}
	cJSON_AddStringToObject(x, "note", "files: <mount>/<prefix>map_* (bytes allocated in them); spanbox_pages per"
			       " socket: the hugepages of EAL's memory segments (null while the appliance is down)");
	return o;
}

/* A sysfs CPU list file (one line) into @p buf; "" when missing or unreadable. */
static void read_cpu_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/*
 * "kernel": the CPU isolation the kernel command line asks for (isolcpus, nohz_full, rcu_nocbs:
 * null when absent) and what the kernel applies (/sys/devices/system/cpu/isolated, nohz_full);
 * "placement": pinned or floating workers, the housekeeping CPUs, and the workers' CPUs that
 * the kernel does not isolate (a pinned worker shares its CPU with whatever the scheduler puts
 * there: docs/CONFIG.md "Placement").
 */
static void placement_json(cJSON *o, const struct sbx_shm *shm)
{
	static const char *const params[] = { "isolcpus", "nohz_full", "rcu_nocbs" };
	char cmdline[4096] = "", v[1024], isolated[1024];
	cJSON *k = cJSON_AddObjectToObject(o, "kernel"), *pl, *a;
	struct sbx_cpuset iso;
	FILE *f = fopen("/proc/cmdline", "r");
	size_t i;
	uint16_t w;

	if (f != NULL) {
		if (fgets(cmdline, sizeof(cmdline), f) == NULL)
			cmdline[0] = '\0';
		fclose(f);
	}
	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		if (sbx_cmdline_param(cmdline, params[i], v, sizeof(v)) == 0)
			cJSON_AddStringToObject(k, params[i], v);
		else
			cJSON_AddNullToObject(k, params[i]);
	}
	read_cpu_file("/sys/devices/system/cpu/isolated", isolated, sizeof(isolated));
	cJSON_AddStringToObject(k, "isolated_cpus", isolated);
	read_cpu_file("/sys/devices/system/cpu/nohz_full", v, sizeof(v));
	cJSON_AddStringToObject(k, "nohz_full_cpus", strcmp(v, "(null)") == 0 ? "" : v);
	if (sbx_cpulist_parse(isolated, &iso) < 0)
		memset(&iso, 0, sizeof(iso));
	pl = cJSON_AddObjectToObject(o, "placement");
	if (shm == NULL) {
		cJSON_AddNullToObject(pl, "pinned");
		return;
	}
	cJSON_AddBoolToObject(pl, "pinned", shm->cfg.pinned);
	FIXED_STR(pl, "cpus", shm->cfg.cpus);
	FIXED_STR(pl, "housekeeping_cpus", shm->cfg.housekeeping_cpus[0] ? shm->cfg.housekeeping_cpus : shm->cfg.cpus);
	a = cJSON_AddArrayToObject(pl, "workers_not_isolated");
	for (w = 0; shm->cfg.pinned && w < MIN(shm->cfg.nb_workers, SBX_MAX_WORKERS); w++)
		if (shm->cfg.workers[w].cpu >= 0 && !sbx_cpuset_has(&iso, (unsigned int)shm->cfg.workers[w].cpu)) {
			cJSON *x = cJSON_CreateObject();

			num(x, "worker", w);
			num(x, "cpu", shm->cfg.workers[w].cpu);
			cJSON_AddItemToArray(a, x);
		}
}

/*
 * "memzone": the bytes the primary reserved for the shared memzone (its header's total_size) and
 * what a config with as many workers and ports as the limits allow would take (issue #25
 * "Limits", docs/MGMT.md); null while down.
 */
static void memzone_json(cJSON *o, const struct sbx_shm *shm)
{
	struct sbx_shm_layout max;
	cJSON *x;

	if (shm == NULL) {
		cJSON_AddNullToObject(o, "memzone");
		return;
	}
	x = cJSON_AddObjectToObject(o, "memzone");
	if (x == NULL)
		return;
	sbx_shm_layout(SBX_MAX_WORKERS, SBX_MAX_PORTS, SBX_MAX_TUNNEL_SOURCES, SBX_MAX_TOOL_GROUPS,
		       SBX_MAX_GROUP_MEMBERS, &max);
	num(x, "bytes", (double)shm->layout.total_size);
	num(x, "bytes_at_maximum", (double)max.total_size);
	num(x, "worker_slot_bytes", (double)sizeof(struct sbx_worker_shm));
}

/*
 * "maps": what the maps' rule tables take (issue #27): the rte_acl contexts of each port's
 * classifier at the last build (memory, build time, maps and rules), their sum, when the last
 * build ran and how many ran. Memory is rte_malloc memory from the EAL's hugepages; null when
 * the appliance is down.
 */
static void maps_json(cJSON *o, const struct sbx_shm *shm)
{
	const struct sbx_maps_shm *ms;
	char when[40];
	cJSON *x, *a;

	if (shm == NULL) {
		cJSON_AddNullToObject(o, "maps");
		return;
	}
	ms = &shm->maps;
	x = cJSON_AddObjectToObject(o, "maps");
	if (x == NULL)
		return;
	num(x, "memory_bytes", (double)ms->memory);
	num(x, "rule_counters_bytes", (double)ms->counters_bytes);
	num(x, "build_ms", (double)(ms->build_ns / 1000) / 1000.0);
	num(x, "contexts", ms->contexts);
	num(x, "builds", ms->builds);
	if (ms->built_at_ns > 0) {
		mgmt_rfc3339((uint64_t)ms->built_at_ns, when, sizeof(when));
		cJSON_AddStringToObject(x, "built_at", when);
	} else {
		cJSON_AddNullToObject(x, "built_at");
	}
	a = cJSON_AddArrayToObject(x, "classifiers");
	for (uint16_t p = 0; p < MIN(shm->cfg.nb_ports, SBX_MAX_PORTS); p++) {
		const struct sbx_maps_port_build *b = &ms->port[p];
		cJSON *c;

		if (b->maps == 0)
			continue;
		c = cJSON_CreateObject();
		FIXED_STR(c, "port", shm->cfg.ports[p].name);
		num(c, "maps", b->maps);
		num(c, "rules", b->rules);
		num(c, "contexts", b->contexts);
		num(c, "memory_bytes", (double)b->memory);
		num(c, "build_ms", (double)(b->build_ns / 1000) / 1000.0);
		cJSON_AddItemToArray(a, c);
	}
}

cJSON *mgmt_system_json(const struct sbx_shm *shm)
{
	cJSON *o = cJSON_CreateObject(), *a, *x;
	int nodes[SBX_MAX_NODES], nn = sbx_numa_nodes(nodes, SBX_MAX_NODES), i;
	char cpus[256];
	uint32_t k;
	uint16_t p;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "appliance", shm ? "up" : "down");
	a = cJSON_AddArrayToObject(o, "sockets");
	for (i = 0; i < nn; i++) {
		x = cJSON_CreateObject();
		num(x, "id", nodes[i]);
		if (sbx_numa_node_cpus(nodes[i], cpus, sizeof(cpus)) == 0)
			cJSON_AddStringToObject(x, "cpus", cpus);
		else
			cJSON_AddNullToObject(x, "cpus");
		cJSON_AddItemToArray(a, x);
	}
	cJSON_AddItemToObject(o, "hugepages", hugepages_json(shm));
	placement_json(o, shm);
	a = cJSON_AddArrayToObject(o, "lcores");
	for (k = 0; shm != NULL && k < MIN(shm->nb_lcores, SBX_MAX_LCORES); k++) {
		const struct sbx_lcore_shm *l = &shm->lcores[k];

		x = cJSON_CreateObject();
		num(x, "id", l->lcore_id);
		FIXED_STR(x, "role", l->role);
		if (l->worker >= 0)
			num(x, "worker", l->worker);
		else
			cJSON_AddNullToObject(x, "worker");
		FIXED_STR(x, "cpus", l->cpus);
		socket_num(x, "socket", l->socket);
		FIXED_STR(x, "nodes", l->nodes);
		cJSON_AddItemToArray(a, x);
	}
	a = cJSON_AddArrayToObject(o, "ports");
	for (p = 0; shm != NULL && p < MIN(shm->cfg.nb_ports, SBX_MAX_PORTS); p++) {
		x = cJSON_CreateObject();
		FIXED_STR(x, "name", shm->cfg.ports[p].name);
		mgmt_port_placement_json(x, shm, p);
		cJSON_AddItemToArray(a, x);
	}
	a = cJSON_AddArrayToObject(o, "pools");
	for (k = 0; shm != NULL && k < MIN(shm->nb_pools, SBX_MAX_POOLS); k++) {
		x = cJSON_CreateObject();
		FIXED_STR(x, "name", shm->pools[k].name);
		num(x, "socket", shm->pools[k].socket_id);
		num(x, "bytes", (double)shm->pools[k].bytes);
		num(x, "hugepage_size_kb", (double)(shm->pools[k].hugepage_size >> 10));
		cJSON_AddItemToArray(a, x);
	}
	memzone_json(o, shm);
	maps_json(o, shm);
	cJSON_AddItemToObject(o, "warnings", mgmt_warnings_json(shm));
	num(o, "warnings_dropped", shm ? shm->warnings_dropped : 0);
	return o;
}

/* ---- POST /system/memprobe ---- */

static struct {
	pthread_mutex_t lock;
	uint64_t last_start_ns;  /* CLOCK_MONOTONIC of the last accepted run, 0 = never */
	bool reserved;           /* accepted, not launched yet */
	bool thread;             /* a thread was started and not joined */
	bool finished;           /* its result is ready */
	pthread_t tid;
	long size_mb, runs;
	pid_t child;             /* the running probe, 0 when none */
	void (*done)(void *arg);
	void *arg;
	unsigned int code;
	cJSON *body;
	char err[512];
} probe = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Join a finished thread whose result was never taken. Lock held. */
static void reap_stale(void)
{
	if (probe.thread && probe.finished) {
		pthread_join(probe.tid, NULL);
		probe.thread = false;
		cJSON_Delete(probe.body);
		probe.body = NULL;
	}
}

unsigned int mgmt_memprobe_accept(const char *body, size_t len, unsigned int *retry_after, char *err,
				  size_t errlen)
{
	long size_mb = 256, runs = 5; /* spanbox-memprobe's own defaults */
	uint64_t now = sbx_now_ns(), window = MGMT_MEMPROBE_INTERVAL_S * 1000000000ULL;
	unsigned int code;

	code = mgmt_memprobe_body(body, len, &size_mb, &runs, err, errlen);
	if (code != 0)
		return code;
	pthread_mutex_lock(&probe.lock);
	reap_stale();
	if (probe.reserved || probe.thread || (probe.last_start_ns && now - probe.last_start_ns < window)) {
		uint64_t left = probe.last_start_ns && now - probe.last_start_ns < window
					? window - (now - probe.last_start_ns) : window;

		*retry_after = (unsigned int)((left + 999999999ULL) / 1000000000ULL);
		snprintf(err, errlen, "the copy probe runs at most once per %d s%s: retry in %u s",
			 MGMT_MEMPROBE_INTERVAL_S, probe.thread && !probe.finished ? " (one is running)" : "",
			 *retry_after);
		code = 429;
	} else {
		probe.reserved = true;
		probe.last_start_ns = now;
		probe.size_mb = size_mb;
		probe.runs = runs;
	}
	pthread_mutex_unlock(&probe.lock);
	return code;
}

/* spanbox-memprobe beside this binary: <dir of spanbox-mgmt>/../tools/spanbox-memprobe. */
static void probe_path(char *buf, size_t len)
{
	char self[512];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		snprintf(buf, len, "spanbox-memprobe");
		return;
	}
	self[n] = '\0';
	snprintf(buf, len, "%s/../tools/spanbox-memprobe", dirname(self));
}

/* Append what is readable on @p fd to @p buf (at most @p max bytes kept). @return false at EOF. */
static bool drain(int fd, char **buf, size_t *len, size_t max)
{
	char tmp[4096];
	ssize_t n = read(fd, tmp, sizeof(tmp));

	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	if (n == 0)
		return false;
	if (*len + (size_t)n <= max) {
		char *b = realloc(*buf, *len + (size_t)n + 1);

		if (b != NULL) {
			memcpy(b + *len, tmp, (size_t)n);
			*len += (size_t)n;
			b[*len] = '\0';
			*buf = b;
		}
	}
	return true;
}

static void *probe_thread(void *unused)
{
	char path[600], size[16], runs[16], *argv[8], *out = NULL, *errtxt = NULL;
	size_t out_len = 0, err_len = 0;
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, status = 0, rc;
	bool out_open = true, err_open = true, timed_out = false;
	uint64_t deadline = sbx_now_ns() + MGMT_MEMPROBE_TIMEOUT_S * 1000000000ULL;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, dfl;
	unsigned int code = 500;
	cJSON *body = NULL;
	char msg[512] = "";
	pid_t pid = 0;

	(void)unused;
	probe_path(path, sizeof(path));
	snprintf(size, sizeof(size), "%ld", probe.size_mb);
	snprintf(runs, sizeof(runs), "%ld", probe.runs);
	argv[0] = path;
	argv[1] = "--json";
	argv[2] = "--size";
	argv[3] = size;
	argv[4] = "--runs";
	argv[5] = runs;
	argv[6] = NULL;
	if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
		snprintf(msg, sizeof(msg), "pipe: %s", strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	posix_spawnattr_init(&attr);
	/* this thread blocks SIGINT/SIGTERM and mgmt ignores SIGPIPE: give the probe the defaults */
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	pthread_mutex_lock(&probe.lock);
	rc = posix_spawn(&pid, path, &fa, &attr, argv, environ);
	probe.child = rc == 0 ? pid : 0;
	pthread_mutex_unlock(&probe.lock);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close(po[1]);
	close(pe[1]);
	if (rc != 0) {
		snprintf(msg, sizeof(msg), "cannot run %.400s: %s", path, strerror(rc));
		goto out;
	}
	while (out_open || err_open) {
		struct pollfd fds[2] = { { out_open ? po[0] : -1, POLLIN, 0 }, { err_open ? pe[0] : -1, POLLIN, 0 } };
		uint64_t now = sbx_now_ns();
		int left_ms = now >= deadline ? 0 : (int)((deadline - now) / 1000000ULL) + 1;

		if (now >= deadline) {
			timed_out = true;
			kill(pid, SIGKILL);
			break;
		}
		if (poll(fds, 2, left_ms) < 0 && errno != EINTR)
			break;
		if (fds[0].revents)
			out_open = drain(po[0], &out, &out_len, PROBE_OUT_MAX);
		if (fds[1].revents)
			err_open = drain(pe[0], &errtxt, &err_len, PROBE_ERR_MAX);
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	pthread_mutex_lock(&probe.lock);
	probe.child = 0;
	pthread_mutex_unlock(&probe.lock);
	if (timed_out) {
		code = 504;
		snprintf(msg, sizeof(msg), "spanbox-memprobe did not finish within %d s: killed", MGMT_MEMPROBE_TIMEOUT_S);
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		body = out ? cJSON_Parse(out) : NULL;
		if (body != NULL)
			code = 200;
		else
			snprintf(msg, sizeof(msg), "spanbox-memprobe printed no JSON");
	} else {
		if (errtxt != NULL)
			errtxt[strcspn(errtxt, "\n")] = '\0';
		snprintf(msg, sizeof(msg), "spanbox-memprobe %s %d: %s", WIFEXITED(status) ? "exited with status" : "killed by signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), errtxt ? errtxt : "(no message)");
	}
out:
	if (po[0] >= 0)
		close(po[0]);
	if (pe[0] >= 0)
		close(pe[0]);
	free(out);
	free(errtxt);
	pthread_mutex_lock(&probe.lock);
	probe.code = code;
	probe.body = body;
	snprintf(probe.err, sizeof(probe.err), "%s", msg);
	probe.finished = true;
	pthread_mutex_unlock(&probe.lock);
	probe.done(probe.arg);
	return NULL;
}

int mgmt_memprobe_launch(void (*done)(void *arg), void *arg)
{
	int rc;

	pthread_mutex_lock(&probe.lock);
	probe.done = done;
	probe.arg = arg;
	probe.finished = false;
	probe.body = NULL;
	rc = pthread_create(&probe.tid, NULL, probe_thread, NULL);
	probe.reserved = false;
	probe.thread = rc == 0;
	pthread_mutex_unlock(&probe.lock);
	return rc == 0 ? 0 : -1;
}

unsigned int mgmt_memprobe_result(cJSON **body, char *err, size_t errlen)
{
	unsigned int code;
	bool join;

	pthread_mutex_lock(&probe.lock);
	code = probe.finished ? probe.code : 500;
	*body = probe.finished ? probe.body : NULL;
	snprintf(err, errlen, "%s", probe.finished ? probe.err : "the copy probe has not finished");
	probe.body = NULL;
	join = probe.thread && probe.finished;
	probe.thread = probe.thread && !join;
	pthread_mutex_unlock(&probe.lock);
	if (join) /* the thread has returned from done() or is about to */
		pthread_join(probe.tid, NULL);
	return code;
}

void mgmt_memprobe_shutdown(void)
{
	bool join;

	pthread_mutex_lock(&probe.lock);
	if (probe.child > 0)
		kill(probe.child, SIGKILL);
	join = probe.thread;
	probe.thread = false;
	pthread_mutex_unlock(&probe.lock);
	if (join)
		pthread_join(probe.tid, NULL);
	pthread_mutex_lock(&probe.lock);
	cJSON_Delete(probe.body);
	probe.body = NULL;
	pthread_mutex_unlock(&probe.lock);
}
