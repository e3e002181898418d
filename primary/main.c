/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spanbox-primary: owns the EAL, the hugepages, every port and one pktmbuf pool per socket;
 * publishes the shared memzone; supervises the workers. Shutdown order: workers, ports, pools,
 * memzone, EAL, then the hugepage files of our prefix.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_mbuf_dyn.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_memzone.h>

#include "spanbox/bpf_filter.h"
#include "spanbox/config_store.h"
#include "spanbox/eal_args.h"
#include "spanbox/abi.h"
#include "spanbox/lcore_lock.h"
#include "lifewatch.h"
#include "primary.h"

#define SBX_REFRESH_NS (100ULL * 1000 * 1000)    /* stats, heartbeat, supervision period */
#define SBX_READY_TIMEOUT_NS (20ULL * 1000 * 1000 * 1000)
/* how long a new primary waits for a dead primary's secondaries to detach (mgmt re-attaches within 1 s) */
#define SBX_STALE_WAIT_MS 10000
/* how long --clean-prefix waits for a process of the prefix that is exiting */
#define SBX_CLEAN_WAIT_MS 2000

static volatile sig_atomic_t quit;

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: spanbox-primary -c CONFIG [--check] [--replay] [--ready-file PATH] [--worker-bin PATH]\n"
		"  -c, --config PATH     JSON config (docs/CONFIG.md)\n"
		"  --check               validate the config (and mgmt.tls's files) and exit (0 valid, 2 refused)\n"
		"  --replay              exit 0 once every pcap input is at EOF and every queue drained\n"
		"                        (1 when an input ended on a read error before its end)\n"
		"  --ready-file PATH     created once all workers run, removed at exit\n"
		"  --worker-bin PATH     spanbox-worker binary (default: next to this one)\n"
		"  --no-stored-config    ignore the " SBX_LIVE_PARTS_TEXT " mgmt stored in its database\n"
		"                        (they win over the file otherwise; never used with --replay)\n"
		"  --forget-stored-config  forget what mgmt stored for this config file, and exit\n"
		"  --clean-prefix        remove what a dead appliance of the config's file prefix left (hugepage\n"
		"                        files, runtime directory) when no process of the prefix runs, and exit\n"
		"                        (0 removed or nothing there, 1 a process of the prefix still runs)\n");
}

/*
 * Default worker binary: in a build tree build/secondary/spanbox-worker beside build/primary/;
 * installed (the Debian package, docs/PACKAGE.md) spanbox-worker in this binary's own directory
 * (/usr/bin). The build tree's path wins when it is executable, the installed one otherwise
 * (main() then names the build tree's path if neither exists).
 */
static void default_worker_bin(char *buf, size_t len)
{
	char self[SBX_PATH_LEN], beside[SBX_PATH_LEN + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *dir;

	if (n <= 0) {
		snprintf(buf, len, "spanbox-worker");
		return;
	}
	self[n] = '\0';
	dir = dirname(self);
	snprintf(buf, len, "%s/../secondary/spanbox-worker", dir);
	if (access(buf, X_OK) == 0)
		return;
	snprintf(beside, sizeof(beside), "%s/spanbox-worker", dir);
	if (access(beside, X_OK) == 0 && strlen(beside) < len)
		memcpy(buf, beside, strlen(beside) + 1);
}

/* Remove what EAL leaves of our prefix: hugepage files and the runtime directory. */

/*
 * Every mirror filter must also load as DPDK BPF (some libpcap filters, e.g. "inbound", use
 * metadata rte_bpf_convert cannot express): refuse at start, naming the field, rather than let
 * every worker fail. @return 0 or -1 (message printed).
 */
static int check_filters(const struct sbx_config *cfg)
{
	char err[600];

	if (sbx_filters_check(cfg, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "spanbox-primary: %s\n", err);
	return -1;
}

/* The key of @p path's stored config: its realpath ("" when it does not fit @p len). */
static void config_key(const char *path, char *buf, size_t len)
{
	char *rp = realpath(path, NULL);

	if (rp == NULL || strlen(rp) >= len)
		buf[0] = '\0';
	else
		snprintf(buf, len, "%s", rp);
	free(rp);
}

/* Wait up to @p timeout_ms for mgmt to say it left the memzone (shm->mgmt_pid back to 0). */
static void wait_mgmt_detached(struct sbx_shm *shm, unsigned int timeout_ms)
{
	uint64_t deadline = sbx_now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	int32_t pid;

	while ((pid = __atomic_load_n(&shm->mgmt_pid, __ATOMIC_ACQUIRE)) > 0 && (kill(pid, 0) == 0 || errno != ESRCH)) {
		if (sbx_now_ns() > deadline) {
			fprintf(stderr, "spanbox-primary: mgmt (pid %d) did not detach within %u ms\n", pid, timeout_ms);
			return;
		}
		usleep(10000);
	}
}

/* true when some port reads a pcap file (a replay needs an end). */
static bool has_pcap_input(const struct sbx_config *cfg)
{
	uint16_t i;

	for (i = 0; i < cfg->nb_ports; i++)
		if (cfg->ports[i].kind == SBX_PORT_PCAP_FILE && strstr(cfg->ports[i].devargs, "rx_pcap=") != NULL)
			return true;
	return false;
}

/* Test hook: while the file named by SBX_TEST_BRIDGE_PAUSE_FILE exists, the pcap bridge is not
 * polled (a pcap destination that falls behind: its rings fill). Checked every 10 ms. */
static bool bridge_paused(uint64_t now)
{
	static const char *path;
	static bool init, paused;
	static uint64_t next;

	if (!init) {
		init = true;
		path = getenv("SBX_TEST_BRIDGE_PAUSE_FILE");
	}
	if (path == NULL)
		return false;
	if (now >= next) {
		next = now + 10 * 1000 * 1000;
		paused = access(path, F_OK) == 0;
	}
	return paused;
}

/* Bench hook: the primary's nap between two loops that moved no pcap frame, in microseconds:
 * SBX_TEST_BRIDGE_IDLE_US (1..1000000) when set, else 50 in a replay and 1000 otherwise. A pcap
 * input with pps= is read in bursts of what its rate allowed during the nap: bench/capture.sh
 * shortens it so a paced input arrives in bursts of tens of frames, not a millisecond's worth. */
static useconds_t bridge_idle_us(bool replay)
{
	static long us = -1;

	if (us < 0) {
		const char *s = getenv("SBX_TEST_BRIDGE_IDLE_US");
		char *end;

		us = s != NULL ? strtol(s, &end, 10) : 0;
		if (s == NULL || *end != '\0' || us < 1 || us > 1000000)
			us = 0;
	}
	return us > 0 ? (useconds_t)us : replay ? 50 : 1000;
}

/* Reserve and fill the shared memzone. */
static struct sbx_shm *shm_publish(const struct sbx_config *cfg)
{
	struct sbx_shm_layout lay, lay_max;
	const struct rte_memzone *mz;
	struct sbx_shm *shm;

	sbx_shm_layout(cfg->nb_workers, cfg->mb_enabled ? cfg->nb_ports : 0, /* no rings without microburst */
		       cfg->tunnel_senders ? cfg->tunnel_senders : SBX_TUNNEL_SENDERS_DEFAULT,
		       cfg->tg_cap_groups ? cfg->tg_cap_groups : SBX_TOOL_GROUP_CAPACITY_DEFAULT,
		       cfg->tg_cap_members ? cfg->tg_cap_members : SBX_TOOL_GROUP_CAPACITY_DEFAULT, &lay);
	sbx_shm_layout(SBX_MAX_WORKERS, SBX_MAX_PORTS, SBX_MAX_TUNNEL_SOURCES, SBX_MAX_TOOL_GROUPS,
		       SBX_MAX_GROUP_MEMBERS, &lay_max);
	mz = rte_memzone_reserve(SBX_MEMZONE_NAME, lay.total_size, (int)rte_socket_id(), 0);
	if (mz == NULL) {
		fprintf(stderr, "spanbox-primary: cannot reserve memzone %s (%llu B): %s\n", SBX_MEMZONE_NAME,
			(unsigned long long)lay.total_size, rte_strerror(rte_errno));
		return NULL;
	}
	shm = mz->addr;
	memset(shm, 0, lay.total_size);
	shm->layout = lay; /* where the regions are (sbx_shm_layout()) */
	shm->cfg = *cfg;
	for (unsigned int w = 0; w < SBX_MAX_WORKERS; w++) {
		shm->placement[w].nb_rxq = cfg->workers[w].nb_rxq;
		memcpy(shm->placement[w].rxq, cfg->workers[w].rxq, sizeof(shm->placement[w].rxq));
		/* the slot's lcore id: the configured one, until a standby takes the slot over */
		if (w < cfg->nb_workers)
			sbx_shm_worker(shm, w)->lcore_id = cfg->workers[w].lcore_id;
	}
	shm->nb_standbys = cfg->nb_standby;
	for (unsigned int s = 0; s < SBX_MAX_STANDBYS; s++) {
		shm->standbys[s].role = -1;
		shm->standbys[s].lcore_id = cfg->standby_lcores[s];
	}
	shm->primary_pid = getpid();
	shm->start_realtime_ns = sbx_realtime_ns();
	shm->primary_heartbeat_ns = sbx_now_ns();
	shm->tsc_hz = rte_get_tsc_hz();
	shm->size = sizeof(*shm);
	shm->version = SBX_SHM_VERSION;
	/* magic last: a reader that sees it sees a complete header */
	rte_smp_wmb();
	shm->magic = SBX_SHM_MAGIC;
	/* the capacity plan's memory line (issue #25; GET /api/v1/system "memzone"): this config's
	 * memzone and the one of a config with as many workers and ports as the limits allow */
	printf("spanbox-primary: memzone %s: %llu B (%.1f MiB; at the maximum %llu B), worker slot %zu B\n",
	       SBX_MEMZONE_NAME, (unsigned long long)lay.total_size, (double)lay.total_size / (1 << 20),
	       (unsigned long long)lay_max.total_size, sizeof(struct sbx_worker_shm));
	return shm;
}

/* Periodic work (every SBX_REFRESH_NS): heartbeat, port and pool stats. */
static void refresh(struct sbx_primary *p)
{
	p->shm->primary_heartbeat_ns = sbx_now_ns();
	sbx_ports_refresh(p);
	sbx_pools_refresh(p);
}

/* What one run of the primary holds from its start to its exit. */
struct primary_run {
	struct sbx_config cfg;      /**< the config as run: the file, with the stored live sections */
	struct sbx_config file_cfg; /**< the file alone */
	char *json;                 /**< the document cfg was parsed from (the tables keep it) */
	const char *config_path, *ready_file;
	bool check, use_stored, from_store, forget, clean;
	int lock_fd;                /**< our lcore lock (lcore_lock.h), -1 none */
	int prefix_fd;              /**< our prefix lock (sbx_prefix_lock()), -1 none */
};

/* Options into @p r and @p p. @return -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, struct primary_run *r, struct sbx_primary *p)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' }, { "check", no_argument, NULL, 'k' },
		{ "replay", no_argument, NULL, 'r' },       { "ready-file", required_argument, NULL, 'f' },
		{ "worker-bin", required_argument, NULL, 'w' }, { "help", no_argument, NULL, 'h' },
		{ "no-stored-config", no_argument, NULL, 'n' }, { "forget-stored-config", no_argument, NULL, 'F' },
		{ "clean-prefix", no_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	default_worker_bin(p->worker_bin, sizeof(p->worker_bin));
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': r->config_path = optarg; break;
		case 'k': r->check = true; break;
		case 'r': p->replay = true; break;
		case 'f': r->ready_file = optarg; break;
		case 'w': snprintf(p->worker_bin, sizeof(p->worker_bin), "%s", optarg); break;
		case 'n': r->use_stored = false; break;
		case 'F': r->forget = true; break;
		case 'C': r->clean = true; break;
		case 'h': usage(); return 0;
		default: usage(); return 2;
		}
	}
	if (r->config_path == NULL) {
		usage();
		return 2;
	}
	return -1;
}

/* --forget-stored-config: what mgmt stored for this file goes (config_store.h). @return the exit code. */
static int forget_stored(const struct primary_run *r)
{
	char *key = realpath(r->config_path, NULL), err[512];
	int n = key ? sbx_store_forget(r->cfg.mgmt_database, key, err, sizeof(err)) : -1;

	if (key == NULL)
		snprintf(err, sizeof(err), "%s: %s", r->config_path, strerror(errno));
	free(key);
	if (n < 0) {
		fprintf(stderr, "spanbox-primary: %s\n", err);
		return 1;
	}
	printf("spanbox-primary: forgot %d stored change%s of the " SBX_LIVE_PARTS_TEXT " for %s (database %s)\n", n,
	       n == 1 ? "" : "s", r->config_path, r->cfg.mgmt_database);
	return 0;
}

/* The config file, checked; then what runs: the file with the forwarding and mirrors stored
 * through the API (tables.c). @return -1 to go on, else the exit code (0 for --check). */
static int load_config(struct primary_run *r, struct sbx_primary *p)
{
	char err[512];

	if (sbx_config_load(r->config_path, &r->cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "spanbox-primary: %s\n", err);
		return 2;
	}
	if (r->check && sbx_config_mgmt_check(&r->cfg, true, err, sizeof(err)) != 0) {
		fprintf(stderr, "spanbox-primary: %s\n", err); /* what spanbox-mgmt would refuse */
		return 2;
	}
	if (sbx_config_placement_check(&r->cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "spanbox-primary: %s\n", err); /* CPUs this machine does not have */
		return 2;
	}
	if (sbx_config_queue_check(&r->cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "spanbox-primary: %s\n", err); /* more queues than a vdev driver takes */
		return 2;
	}
	if (r->check) {
		printf("%s: valid\n", r->config_path);
		return 0;
	}
	if (r->forget)
		return forget_stored(r);
	if (r->clean) /* a dead primary's workers and mgmt get 2 s to go */
		return sbx_prefix_clean(r->cfg.file_prefix, SBX_CLEAN_WAIT_MS);
	setvbuf(stdout, NULL, _IOLBF, 0); /* lines in order with stderr in the log */
	r->file_cfg = r->cfg;
	r->json = sbx_tables_effective_json(r->config_path, &r->file_cfg, r->use_stored && !p->replay, err,
					    sizeof(err), &r->from_store);
	if (r->json == NULL) {
		fprintf(stderr, "spanbox-primary: %s\n", err);
		return 2;
	}
	if (sbx_maps_take(&r->json, err, sizeof(err)) != 0) { /* rules apart (maps.c); stored maps too */
		fprintf(stderr, "spanbox-primary: %s\n", err);
		return 2;
	}
	if (r->from_store && sbx_config_parse(r->json, &r->cfg, err, sizeof(err)) != 0) {
		fprintf(stderr,
			"spanbox-primary: the forwarding and mirrors stored for this file (database %s) no longer fit it: %s\n"
			"spanbox-primary: forget them with ./spanbox reset-config %s (or spanbox-primary --no-stored-config)\n",
			r->file_cfg.mgmt_database, err, r->config_path);
		return 2;
	}
	if (p->replay && !has_pcap_input(&r->cfg)) {
		fprintf(stderr, "spanbox-primary: replay: no port reads a pcap file (ports[].devargs with rx_pcap=)\n");
		return 2;
	}
	if (access(p->worker_bin, X_OK) != 0) {
		fprintf(stderr, "spanbox-primary: worker binary %s: %s\n", p->worker_bin, strerror(errno));
		return 2;
	}
	snprintf(p->config_path, sizeof(p->config_path), "%s", r->config_path);
	p->cfg = &r->cfg;
	return -1;
}

/* Our lcore lock, then EAL. @return -1 to go on, else the exit code (nothing to tear down). */
static int eal_start(struct primary_run *r, char *argv0)
{
	struct sbx_eal_args eal;
	char err[512];
	int pid;

	if (sbx_eal_housekeeping_affinity(&r->cfg, err, sizeof(err)) != 0)
		fprintf(stderr, "spanbox-primary: %s: EAL's threads may share the workers' CPUs\n", err);
	if (sbx_eal_args_build(&eal, &r->cfg, SBX_ROLE_PRIMARY, argv0, 0, -1) != 0) {
		fprintf(stderr, "spanbox-primary: EAL arguments too long\n");
		return 2;
	}
	/* first, before anything of the prefix is touched: a second primary of a running prefix must
	 * not remove its marker, nor wait for its secondaries as if they were a dead primary's. The
	 * prefix lock whatever its primary_lcore; the EAL's own lock on its config file too (a primary
	 * of another build or program on the same prefix) */
	r->prefix_fd = sbx_prefix_lock(r->cfg.file_prefix, "primary", &pid, err, sizeof(err));
	if (r->prefix_fd < 0) {
		fprintf(stderr, "spanbox-primary: %s\n", err);
		return 1;
	}
	if ((pid = sbx_prefix_eal_primary(r->cfg.file_prefix)) != 0) {
		fprintf(stderr, "spanbox-primary: an appliance of file prefix '%s' is running (primary pid %d holds "
			"its EAL config lock): stop it first, or use another eal.file_prefix; nothing of it was "
			"touched\n", r->cfg.file_prefix, pid);
		return 1;
	}
	r->lock_fd = sbx_lcore_lock(r->cfg.file_prefix, r->cfg.primary_lcore, "primary", err, sizeof(err));
	if (r->lock_fd < 0) {
		fprintf(stderr, "spanbox-primary: %s\n", err);
		return 1;
	}
	/* a killed primary's marker would let mgmt attach to our half-initialised EAL */
	sbx_marker_remove(r->cfg.file_prefix);
	if (sbx_runtime_dir_wait_free(r->cfg.file_prefix, SBX_STALE_WAIT_MS) != 0)
		return 1;
	if (rte_eal_init(eal.argc, eal.argv) < 0) {
		fprintf(stderr, "spanbox-primary: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	{ /* timestamps in (ingress.timestamp): the mbuf's timestamp field, registered here, before any
	   * worker, which can only find it (secondary/ts_in_stage.h) */
		int ts_off;
		uint64_t ts_flag;

		if (rte_mbuf_dyn_rx_timestamp_register(&ts_off, &ts_flag) != 0)
			fprintf(stderr, "spanbox-primary: no mbuf timestamp field (%s): ingress.timestamp keeps no "
				"times\n", rte_strerror(rte_errno));
	}
	/* the file's filters too: a bad file is refused even when the store replaces its mirrors */
	if (check_filters(&r->file_cfg) != 0 || (r->from_store && check_filters(&r->cfg) != 0)) {
		rte_eal_cleanup();
		close(r->lock_fd); /* our own lock file goes with the prefix's files */
		sbx_prefix_files_remove(r->cfg.file_prefix);
		sbx_prefix_unlock(r->prefix_fd, r->cfg.file_prefix);
		return 2;
	}
	return -1;
}

/*
 * After EAL: the memzone, ports, NUMA placement, pools, control and tables, then the workers.
 * @return 0, or the exit code (1 failure, 2 a refusal of the config); what was set up is torn
 * down by primary_fini() either way.
 */
static int primary_init(struct primary_run *r, struct sbx_primary *p)
{
	const struct sbx_config *cfg = &r->cfg;
	unsigned int w;
	int prc = 0;
	bool ok;

	p->shm = shm_publish(cfg);
	/* what a secondary must match (layout version, mempool drivers in table order): abi.h */
	if (p->shm == NULL || sbx_abi_publish(SBX_SHM_VERSION) != 0)
		return 1;
	config_key(r->config_path, p->shm->config_path, sizeof(p->shm->config_path));
	p->cfg = &p->shm->cfg; /* as parsed; what the primary derives goes to shm->placement */
	sbx_pcie_log(p); /* first: the path of a PCI port is worth seeing even if it fails */
	/* refusals (pool.mbufs below the plan, hugepages short, a bad test hook) exit with 2 */
	ok = (prc = sbx_ports_lookup(p)) == 0 && (prc = sbx_numa_setup(p)) == 0 && (prc = sbx_pools_create(p)) == 0 &&
	     sbx_ports_start(p) == 0;
	if (!ok)
		return prc == -2 ? 2 : 1;
	/* mbufs the ports' RX rings hold before any traffic: the pool audit's baseline */
	sbx_pools_refresh(p);
	for (w = 0; w < p->shm->nb_pools; w++)
		p->shm->pools[w].rx_held = p->shm->pools[w].in_use;
	if (sbx_groups_init(p) != 0 || sbx_control_init(p) != 0 || sbx_tables_init(p, r->json) != 0 ||
	    sbx_pdump_init(p) != 0 || sbx_telemetry_init(p) != 0 || sbx_flows_init(p) != 0)
		return 1;
	if (sbx_maps_build(p) != 0) /* the maps' classifiers, before the workers */
		return 2;
	__atomic_store_n(&p->shm->running, 1, __ATOMIC_RELEASE); /* after everything it publishes */
	sbx_marker_write(cfg->file_prefix);
	sbx_event(p, "appliance_start", -1, getpid(), "%u ports, %u workers, %u pools", cfg->nb_ports,
		  cfg->nb_workers, p->shm->nb_pools);
	sbx_microburst_init(p); /* before the workers: their first windows are summed */
	/* the workers' life locks and their watchers, before the first worker can take one */
	if (sbx_lifewatch_start(p) != 0)
		return 1;
	for (w = 0; w < cfg->nb_workers; w++)
		if (sbx_worker_spawn(p, w) != 0)
			return 1;
	/* the standbys (workers.standby) start from the main loop's supervision, after the workers */
	snprintf(p->standby_bin, sizeof(p->standby_bin), "%s", p->worker_bin);
	return 0;
}

/* Once every worker has settled: say so, and create the ready file. */
static void announce_ready(const struct primary_run *r, struct sbx_primary *p)
{
	unsigned int running = sbx_workers_count(p, SBX_W_RUNNING), nb = r->cfg.nb_workers;
	FILE *f;

	printf("spanbox-primary: ready: %u of %u workers running, pid %d\n", running, nb, (int)getpid());
	if (running < nb)
		fprintf(stderr, "spanbox-primary: warning: %u workers failed to start (see events)\n", nb - running);
	if (r->ready_file != NULL && (f = fopen(r->ready_file, "w")) != NULL) {
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
	}
}

/*
 * The main loop, about every ms: pcap bridging, supervision, control requests; every 100 ms the
 * port and pool counters. Ends on a signal, at the end of a replay, or when no worker could
 * start. @return the exit code.
 */
static int primary_run(const struct primary_run *r, struct sbx_primary *p)
{
	uint64_t t_refresh = 0, t_start = sbx_now_ns(), stable = 0;
	bool ready = false;

	while (!quit) {
		uint64_t now = sbx_now_ns();
		unsigned int moved = bridge_paused(now) ? 0 : sbx_bridge_poll(p);

		/* every loop (about 1 ms): a dead worker is replaced without waiting for a refresh */
		sbx_workers_supervise(p, true);
		sbx_control_poll(p); /* a link request of mgmt (control.c) */
		sbx_groups_tick(p, now); /* tool group members' health (toolgroups.c) */
		sbx_microburst_poll(p); /* microburst windows (microburst.c) */
		sbx_flows_tick(p); /* collectors up / down: events (flowexport.c) */
		if (now - t_refresh >= SBX_REFRESH_NS) {
			t_refresh = now;
			refresh(p);
			/* ready once every worker has settled: running, or given up on (failed) with at
			 * least one running; a worker that keeps crashing must not hold the appliance back */
			if (!ready && sbx_workers_settled(p)) {
				ready = true;
				announce_ready(r, p);
			} else if (!ready && sbx_workers_count(p, SBX_W_FAILED) == r->cfg.nb_workers) {
				fprintf(stderr, "spanbox-primary: every worker failed to start (see the events above)\n");
				return 1;
			} else if (!ready && now - t_start > SBX_READY_TIMEOUT_NS) {
				fprintf(stderr, "spanbox-primary: no worker could start within 20 s\n");
				return 1;
			}
		}
		if (p->replay && ready && moved == 0 && sbx_replay_inputs_at_eof(p)) {
			/* done only when the condition holds on three polls in a row, 10 ms apart; never
			 * sleep that long while inputs remain: a full RX ring must be refilled promptly */
			stable = sbx_replay_done(p) ? stable + 1 : 0;
			if (stable >= 3)
				return 0;
			usleep(10000);
			continue;
		}
		/* busy_poll is for the workers; the primary spins only while it moves pcap frames */
		if (moved == 0)
			usleep(bridge_idle_us(p->replay));
	}
	return 0;
}

/* Shutdown in order: workers, mgmt's detach, ports, pools, memzone, EAL, our files. @return the
 * exit code (@p rc, or 1 when a replay's input ended on a read error). */
static int primary_fini(struct primary_run *r, struct sbx_primary *p, int rc)
{
	printf("spanbox-primary: shutting down\n");
	sbx_pdump_fini();
	sbx_control_fini();
	sbx_tables_fini();
	sbx_groups_fini(); /* after the tables thread; the main loop is done */
	if (p->shm != NULL) {
		sbx_event(p, "appliance_stop", -1, getpid(), "%s", quit ? "signal" : rc ? "error" : "replay done");
		sbx_workers_stop(p, 3000);
		sbx_lifewatch_stop(p); /* before the memzone its threads wait in goes */
		sbx_recorder_fini(); /* after the workers: nothing enqueues to a capture's ring any more */
		sbx_flows_fini(); /* after the workers: their last flows are on the rings */
		sbx_maps_fini(p); /* after the workers: nothing classifies any more */
		refresh(p);
		sbx_marker_remove(r->cfg.file_prefix); /* no new secondary attaches to what is being torn down */
		__atomic_store_n(&p->shm->running, 0, __ATOMIC_RELEASE);
		/* an attached mgmt copies the last events (every 100 ms), sees running 0 and detaches;
		 * only then are the pools and the memzone freed: their pages may be unmapped in every
		 * process, and mgmt would fault on them */
		wait_mgmt_detached(p->shm, SBX_MGMT_DETACH_MS);
		p->cfg = &r->cfg; /* the memzone is freed below */
		if (p->replay && rc == 0) {
			sbx_print_counters(p);
			if (sbx_replay_inputs_failed(p) > 0)
				rc = 1; /* the counters are those of a part of the input */
		}
		sbx_ports_stop(p);
		sbx_pools_free(p);
		rte_memzone_free(rte_memzone_lookup(SBX_MEMZONE_NAME));
	}
	if (r->ready_file != NULL)
		unlink(r->ready_file);
	rte_eal_cleanup();
	close(r->lock_fd); /* our own lock file goes with the prefix's files */
	sbx_prefix_files_remove(r->cfg.file_prefix);
	sbx_prefix_unlock(r->prefix_fd, r->cfg.file_prefix); /* last: the prefix is free from now */
	printf("spanbox-primary: stopped\n");
	return rc;
}

int main(int argc, char **argv)
{
	static struct primary_run r = { .use_stored = true, .lock_fd = -1, .prefix_fd = -1 };
	static struct sbx_primary p;
	int rc;

	if ((rc = parse_args(argc, argv, &r, &p)) >= 0 || (rc = load_config(&r, &p)) >= 0)
		goto out;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	if ((rc = eal_start(&r, argv[0])) >= 0)
		goto out;
	rc = primary_init(&r, &p);
	if (rc == 0)
		rc = primary_run(&r, &p);
	rc = primary_fini(&r, &p, rc);
out:
	free(r.json);
	return rc;
}
