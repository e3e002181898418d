/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal interfaces of spanbox-primary: pools, ports, workers, replay. */
#ifndef SPANBOX_PRIMARY_H
#define SPANBOX_PRIMARY_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "spanbox/config.h"
#include "spanbox/shm.h"
#include "pcap_port.h"

#define SBX_BRIDGE_RING_SIZE 1024 /**< entries per bridge ring (power of two) */
#define SBX_CRASH_HISTORY 64      /**< crash times kept per worker for the crash-loop limit */

/** Where a link request of control.c stands (sbx_primary.link_req_state). */
enum sbx_link_req_state {
	SBX_LINK_REQ_IDLE = 0, /**< none */
	SBX_LINK_REQ_POSTED,   /**< posted by the IPC thread, not yet taken */
	SBX_LINK_REQ_TAKEN,    /**< the main loop is carrying it out; it answers and resets to IDLE */
};

/** Process-local state of the primary (the shared part lives in shm). */
struct sbx_primary {
	struct sbx_shm *shm;
	const struct sbx_config *cfg;
	struct rte_mempool *pools[SBX_MAX_POOLS];
	struct rte_mempool *ind_pools[SBX_MAX_POOLS]; /**< the indirect-mbuf pool beside pools[i] */
	int pool_socket[SBX_MAX_POOLS];
	int fallback_socket; /**< pool socket of ports whose own socket has no hugepage memory (numa.c) */
	char worker_bin[SBX_PATH_LEN];
	char config_path[SBX_PATH_LEN];
	bool replay;
	/* bridged (pcap) ports: rings and mbufs the primary holds between bursts */
	struct rte_ring *rx_ring[SBX_MAX_PORTS][SBX_MAX_WORKERS];
	struct rte_ring *tx_ring[SBX_MAX_PORTS][2 * SBX_MAX_WORKERS];
	struct rte_mbuf *rx_pending[SBX_MAX_PORTS][64];
	uint16_t rx_pending_n[SBX_MAX_PORTS], rx_pending_off[SBX_MAX_PORTS];
	uint16_t rx_rr[SBX_MAX_PORTS];
	struct sbx_pcap_port pcap[SBX_MAX_PORTS]; /**< files of bridged ports */
	int netns_sock[SBX_MAX_PORTS]; /**< socket in ports[i].netns for link state, -1 none */
	uint64_t worker_next_start_ns[SBX_MAX_WORKERS];
	uint64_t worker_spawn_ns[SBX_MAX_WORKERS];   /**< CLOCK_MONOTONIC of the last fork */
	bool kill_sent[SBX_MAX_WORKERS];             /**< SIGKILL sent for a hang, not yet reaped */
	/* a stale heartbeat: hung or not scheduled? (workers.c check_hangs) */
	int cpu_pid[SBX_MAX_WORKERS];                /**< process the CPU time sample is of (0 none) */
	uint64_t cpu_ns[SBX_MAX_WORKERS];            /**< its polling thread's CPU time then, ns */
	uint64_t cpu_at_ns[SBX_MAX_WORKERS];         /**< CLOCK_MONOTONIC of that sample */
	uint64_t starved_hb_ns[SBX_MAX_WORKERS];     /**< heartbeat when the starvation was seen */
	uint64_t crash_ns[SBX_MAX_WORKERS][SBX_CRASH_HISTORY];
	unsigned int crash_next[SBX_MAX_WORKERS];
	bool restart_requested[SBX_MAX_WORKERS];     /**< the stopping worker is to be started again */
	uint32_t restart_flag[SBX_MAX_WORKERS];      /**< set by the IPC thread (control.c), atomically */
	/* hot standbys (workers.c) */
	char standby_bin[SBX_PATH_LEN];              /**< binary new standbys run (worker_bin until an upgrade) */
	uint64_t standby_next_start_ns[SBX_MAX_STANDBYS]; /**< CLOCK_MONOTONIC: not before */
	uint64_t standby_spawn_ns[SBX_MAX_STANDBYS];      /**< CLOCK_MONOTONIC of the last fork */
	bool standby_kill_sent[SBX_MAX_STANDBYS];         /**< SIGKILL sent (hang, stop), not yet reaped */
	bool handover_wait[SBX_MAX_WORKERS];   /**< graceful hand-over asked: waiting for workers[w].released */
	bool takeover_pending[SBX_MAX_WORKERS]; /**< taken over, its first frame not seen yet */
	uint64_t death_rt_ns[SBX_MAX_WORKERS];  /**< CLOCK_REALTIME the last process of the slot was reaped */
	int dead_pid[SBX_MAX_WORKERS];          /**< and its pid */
	/* an upgrade of the workers (control.c posts it, workers.c carries it out) */
	uint32_t upgrade_flag;                  /**< set by the IPC thread (atomically) after upgrade_req */
	char upgrade_req[SBX_PATH_LEN];         /**< the requested binary (IPC thread, before the flag) */
	uint64_t upgrade_deadline_ns;           /**< CLOCK_MONOTONIC: no progress by then: refused/stalled */
	int retired_pid[SBX_MAX_WORKERS];      /**< predecessor of a graceful hand-over, not yet reaped (0 none) */
	unsigned int retired_lcore[SBX_MAX_WORKERS]; /**< its lcore id (free once it is reaped) */
	uint64_t retired_ns[SBX_MAX_WORKERS];  /**< CLOCK_MONOTONIC of the hand-over (SIGKILL after 3 s) */
	/* a worker that died holding its life lock, taken back before it was reaped (lifewatch.c) */
	int dying_pid[SBX_MAX_WORKERS];        /**< its pid until waitpid() reaps it (0 none) */
	unsigned int dying_lcore[SBX_MAX_WORKERS]; /**< its lcore id (free once it is reaped) */
	uint64_t dying_held[SBX_MAX_WORKERS];  /**< mbufs of its burst freed, for the crash event */
	/* a link request of control.c, carried out by the main loop (sbx_control_poll) */
	uint32_t link_req_state;  /**< enum sbx_link_req_state, accessed atomically */
	uint16_t link_req_port;      /**< index into cfg->ports */
	bool link_req_up;            /**< set the link up (true) or down */
	uint64_t link_req_id;        /**< sbx_ctl_req.request_id, echoed in the reply */
	uint64_t link_req_posted_ns; /**< CLOCK_MONOTONIC when the IPC thread posted it */
	char link_req_peer[108];     /**< the requester's IPC socket path (sun_path), for rte_mp_reply */
};

/* events.c */
/**
 * Record an event in the memzone ring (mgmt stores it in SQLite) and print it to stdout with a
 * timestamp. Thread-safe (a mutex: the main loop and the tables thread of tables.c write events).
 */
void sbx_event(struct sbx_primary *p, const char *kind, int worker, int pid, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* control.c */
/**
 * Register the EAL multi-process action SBX_IPC_CTL (include/spanbox/ipc.h): mgmt (a secondary)
 * asks for SBX_CTL_RESTART_WORKER (validated, flagged for the main loop, answered at once) or
 * SBX_CTL_LINK_SET (carried out and answered by the main loop within SBX_CTL_LINK_WAIT_MS, with
 * the link state read back). The EAL IPC thread never waits. @return 0 or -1.
 */
int sbx_control_init(struct sbx_primary *p);
/** Unregister the action. */
void sbx_control_fini(void);
/**
 * Answer an rte_mp request of @p action with the @p len bytes of @p rep (a struct of
 * spanbox/ipc.h, at most SBX_IPC_PARAM_MAX), sent to @p peer: the requester's socket path as the
 * EAL gave it to the action's handler, or a copy of it (any thread, any time later: ipc.h).
 * @return 0, or -1 (too long, or rte_mp_reply failed: rte_errno).
 */
int sbx_ipc_reply(const char *action, const void *rep, size_t len, const char *peer);
/**
 * Main loop: carry out a posted link request (sbx_ports_set_link), or drop one posted more than
 * SBX_CTL_LINK_WAIT_MS ago (answered BUSY), and answer it (rte_mp_reply to the requester). Cheap
 * when there is none (one atomic load).
 */
void sbx_control_poll(struct sbx_primary *p);

/* numa.c */
/**
 * Record a start-up warning: printed as "spanbox-primary: warning: <text>" and kept in
 * shm->warnings (GET /api/v1/system, /status). Main thread only, before the appliance runs.
 * @param kind  "numa", "pcie" or "pool" (at most 15 characters).
 */
void sbx_warn(struct sbx_primary *p, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/**
 * NUMA placement, after sbx_ports_lookup() and before sbx_pools_create(): the socket of every
 * port (rte_eth_dev_socket_id(), or the test hook SBX_TEST_PORT_SOCKET="p1=1,p2=0" which makes
 * the primary pretend a port is on another socket), of every lcore (the NUMA nodes of the CPU set
 * eal.cpus it floats on, from /sys/devices/system/cpu/cpuN/nodeM), and the socket of the pool
 * that serves each port (the port's own, or p->fallback_socket when that socket has no hugepage
 * memory). Fills shm ports[].numa_socket/pool_socket and shm lcores[], prints them, and records a
 * warning for each remote pair: port-worker, port-pool, worker-pool, and a worker whose CPU set
 * spans sockets.
 * @return 0, or -2 when the test hook is malformed or names no port (message printed; exit 2).
 */
int sbx_numa_setup(struct sbx_primary *p);
/**
 * For each PCI port: decode its PCIe path (device and bridges, shared/pcie.c), print it, and
 * record each warning (kind "pcie"). A path that cannot be read is a warning, not an error.
 */
void sbx_pcie_log(struct sbx_primary *p);

/* hugepages.c */
/**
 * The hugepage check, before any pool is created: can EAL get @p need bytes on @p socket? EAL
 * already reserved eal.socket_mem_mb per socket at init (its heap); beyond its free part, EAL can
 * add free hugepages of the node (not with --legacy-mem, where the heap never grows). Prints the
 * figures; on a shortage prints what to raise (the nr_hugepages file) and returns -2.
 * @param heap_free   receives the heap's free bytes on @p socket.
 * @param free_huge   receives the bytes of free hugepages of node @p socket EAL could add.
 * @return 0 when the memory is there, -2 when not (message printed; exit 2).
 */
int sbx_hugepages_check(const struct sbx_primary *p, int socket, uint64_t need, uint64_t *heap_free,
			uint64_t *free_huge);
/** Hugepage bytes the flow tables of the workers on @p socket (sbx_flowtable_mem of
 *  flows.flows_per_worker each) and, on the primary's socket, the workers' record rings take,
 *  for that check (flowplan.c, docs/FLOWS.md "Memory"); the terms logged. 0 with flows off. */
uint64_t sbx_flows_plan(const struct sbx_primary *p, int socket);
/** The hugepage size EAL allocates with on @p socket (its memseg lists; default size if none). */
uint64_t sbx_hugepages_eal_page_size(int socket);

/* pools.c */
/**
 * Plan and create one pktmbuf pool per NUMA socket that serves a port (ports[].pool_socket, set
 * by sbx_numa_setup()) or hosts the primary. For each pool the plan's terms are computed, printed
 * and kept in shm (sbx_pool_plan); pool.mbufs overrides the size, but a size below the plan is
 * refused unless pool.force (then a warning). Then the hugepage check of every socket, then per
 * pool the optional first-touch memset measurement (pool.measure_memset) and the timed creation
 * (populate_ns, bytes, hugepage size), and beside it its indirect-mbuf pool (struct
 * sbx_ind_pool_shm: mbufs without data room for shared mirror copies), counted in the check.
 * @return 0; -2 when refused (pool.mbufs below the plan, not enough hugepages: the message and
 *         the plan are printed; exit 2); -1 when a pool cannot be created (message printed).
 */
int sbx_pools_create(struct sbx_primary *p);
/** Refresh in_use/avail of every pool and indirect pool in shm (cheap: ring count plus cache counts). */
void sbx_pools_refresh(struct sbx_primary *p);
/** Free every pool (after ports are closed and workers gone). */
void sbx_pools_free(struct sbx_primary *p);
/** @return the pool for @p socket_id; for a socket without a pool, the pool of
 *  p->fallback_socket (the first pool if there is none). */
struct rte_mempool *sbx_pool_for_socket(struct sbx_primary *p, int socket_id);

/* ports.c */
/**
 * Map each config port to its DPDK port id, open pcap files, fill peers in shm.
 * @return 0; -2 when a pcap file of ports[].devargs cannot be opened (a refusal, exit 2); -1 else.
 */
int sbx_ports_lookup(struct sbx_primary *p);
/** Configure and start every ethdev port; create the rings of pcap ports. @return 0 or -1. */
int sbx_ports_start(struct sbx_primary *p);
/** Refresh link and basic stats of every port in shm. */
void sbx_ports_refresh(struct sbx_primary *p);
/** Refresh the link state and speed of ethdev port @p i in shm (main thread). */
void sbx_ports_link_refresh(struct sbx_primary *p, uint16_t i);
/**
 * Set the link of port @p i up or down (main thread), then read it back into shm at once.
 * ethdev ports: rte_eth_dev_set_link_up/down; a tap moved into a network namespace
 * (ports[].netns) is set up or down inside that namespace instead, where the tap PMD's own ioctl
 * cannot reach it. Bridged (pcap) ports have no link.
 * @param answer  receives "ok up" / "ok down" (the state read back) or "error: <why>".
 * @return 0, or -1 (refused or failed: @p answer says why).
 */
int sbx_ports_set_link(struct sbx_primary *p, uint16_t i, bool up, char *answer, size_t len);
/**
 * Move mbufs between pcap files and the bridge rings (file -> rx ring, tx rings -> file).
 * Ownership: mbufs dequeued from tx rings are written and freed here.
 * @return frames moved (0 = idle).
 */
unsigned int sbx_bridge_poll(struct sbx_primary *p);
/** @return true when no mbuf waits in a bridge ring or in the primary's pending buffers. */
bool sbx_bridge_idle(struct sbx_primary *p);
/** Stop and close every port, free bridge rings and the mbufs they still hold. */
void sbx_ports_stop(struct sbx_primary *p);

/* workers.c */
/**
 * Fork/exec worker @p w with its EAL arguments, "-- --id W --nonce HEX": a fresh random nonce is
 * written into the slot before the fork and the child's pid right after it; the worker refuses to
 * run unless both are its own (secondary/main.c). @return 0 or -1.
 */
int sbx_worker_spawn(struct sbx_primary *p, unsigned int w);
/** Reap exited workers and restart them (after a short back-off). Called from the main loop. */
void sbx_workers_supervise(struct sbx_primary *p, bool restart);
/**
 * Hot standbys: fork/exec standby slot @p s on lcore @p lcore_id with "-- --standby S --nonce HEX"
 * (nonce and pid in shm->standbys[s] as for a worker), running p->standby_bin. @return 0 or -1.
 */
int sbx_standby_spawn(struct sbx_primary *p, unsigned int s, unsigned int lcore_id);
/** @return true while an upgrade of the workers runs (shm->upgrade.state RUNNING, or one is posted). */
static inline bool sbx_upgrade_busy(struct sbx_primary *p)
{
	return __atomic_load_n(&p->upgrade_flag, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&p->shm->upgrade.state, __ATOMIC_ACQUIRE) == SBX_UPG_RUNNING;
}
/** @return standby slots in @p state (enum sbx_standby_state). */
unsigned int sbx_standbys_count(struct sbx_primary *p, uint32_t state);
/** Ask every worker and standby to drain and exit; SIGKILL those still alive after @p timeout_ms. */
void sbx_workers_stop(struct sbx_primary *p, unsigned int timeout_ms);
/** @return how many worker slots are in @p state. */
unsigned int sbx_workers_count(struct sbx_primary *p, enum sbx_worker_state state);
/** @return true when every worker is RUNNING or FAILED (given up on), at least one RUNNING. */
bool sbx_workers_settled(struct sbx_primary *p);

/* replay.c */
/** @return true when every pcap input file is at EOF. */
bool sbx_replay_inputs_at_eof(struct sbx_primary *p);
/** @return true when every pcap input is at EOF and every queue and ring has drained. */
bool sbx_replay_done(struct sbx_primary *p);
/** Print per-port counters (primary's view and the workers' sums, runt and oversize included) to stdout. */
void sbx_print_counters(struct sbx_primary *p);
/**
 * The pcap inputs that ended on a read error instead of at their end: one line each on stderr
 * ("replay: ports[N] (NAME): rx_pcap PATH did not reach its end: read error after K frames: ...").
 * @return how many; a replay with any exits 1 (its input was not replayed whole).
 */
unsigned int sbx_replay_inputs_failed(struct sbx_primary *p);

/* toolgroups.c: tool group slots, bucket tables and member health */
/**
 * Allocate the tool groups' rate-share state once, sized by the memzone's tool group capacity
 * (layout.nb_group_slots x layout.group_members, workers.tool_group_capacity) and the workers of
 * the config: after the memzone is published, before the first sbx_groups_assign().
 * @return 0, or -1 when out of memory (said on stderr).
 */
int sbx_groups_init(struct sbx_primary *p);
/** Free what sbx_groups_init() allocated (at exit, once the tables thread and the main loop are
 *  done; safe when it was never called). */
void sbx_groups_fini(void);
/**
 * The slot of each tool group of @p n, into @p gslot: the slot of the group of @p old (the active
 * tables, NULL at start) with the same name, members and hash, else a slot no group of @p old
 * uses, set up afresh (every member up, buckets at home, the workers' counters of the slot
 * zeroed). Tables thread (or start), with sbx_groups_lock() held until the tables are published.
 * @return 0, or -1 when no slot is free (never, by SBX_GROUP_SLOTS; checked: indexes shared memory).
 */
int sbx_groups_assign(struct sbx_primary *p, const struct sbx_tables *old, const struct sbx_config *n,
		      uint8_t *gslot);
/**
 * Main loop, every loop (runs every 5 ms): the health of every member of the active tables' groups
 * (link state, read anew for ethdev members; TX refusal share per tx_refused_window_ms), state
 * changes with their events (member_down, member_holddown, member_up) and the bucket moves they cause.
 * @param now  CLOCK_MONOTONIC ns.
 */
void sbx_groups_tick(struct sbx_primary *p, uint64_t now);
/** Serialise slot set-up and publication (tables thread) with the health check (main loop). */
void sbx_groups_lock(void);
/** Release sbx_groups_lock(). */
void sbx_groups_unlock(void);
/* microburst.c: microburst windows of every port (issue #26, docs/MGMT.md "Microbursts") */

/** Start the sums (microburst.enabled): windows from now on; the rings are read from their heads. */
void sbx_microburst_init(struct sbx_primary *p);
/** Every main loop: read the workers' rings, make the windows of SBX_MB_LAG_US ago final (events). */
void sbx_microburst_poll(struct sbx_primary *p);
/* recorder.c: captures into pcapng files (docs/CAPTURE.md) */

/** Ready the recorder (each capture gets a writer thread of its own at its start). @return 0. */
int sbx_recorder_init(struct sbx_primary *p);
/**
 * Start a capture for every session of @p n whose destination is the recorder and that has none
 * yet: its slot in shm->captures, its ring, its directory <mgmt.captures.directory>/<id> (older
 * files of that id removed), its first file and its writer thread. At most SBX_MAX_CAPTURES
 * running at once (ended captures keep their slot but do not count). Called before @p n is published, so that the
 * workers find the ring. @return 0, or -1 with "field: reason" in @p err (the change is refused;
 * the captures it started are pruned by the caller).
 */
int sbx_recorder_add(const struct sbx_config *n, char *err, size_t errlen);
/**
 * End and free the capture of every slot whose session is not in @p n (the running tables): its
 * ring drained into its files, its last file closed with its statistics. Only once no worker can
 * use the ring any more (after the grace period of the change that removed the session). Joins
 * the capture's writer: waits for a write of that capture that blocks (of no other).
 */
void sbx_recorder_prune(const struct sbx_config *n);
/** End every capture ("primary stopped") and join its writer; after the workers stopped. */
void sbx_recorder_fini(void);
/* pdump.c: DPDK's capture tools (docs/CAPTURE.md "DPDK's own tools") */

/**
 * Serve dpdk-dumpcap and dpdk-pdump: create librte_pdump's statistics memzone (rte_pdump_init)
 * and replace its rte_mp action SBX_IPC_PDUMP by spanbox's, which publishes each capture in the
 * memzone's capture table for the workers (shm->pdump, pdump_gen) and answers once they took it;
 * start the thread that does so. Call after sbx_tables_init() (it uses the tables' QSBR variable).
 * @return 0, or -1 (message printed).
 */
int sbx_pdump_init(struct sbx_primary *p);

/** Unregister the action and stop the thread; requests still queued are answered -EBUSY. */
void sbx_pdump_fini(void);

/** @return the captures in the active capture table of @p shm. */
unsigned int sbx_pdump_active(const struct sbx_shm *shm);

/* telemetry.c: spanbox's own DPDK telemetry commands (docs/CAPTURE.md "Telemetry") */

/**
 * Register /spanbox/status, /spanbox/ports, /spanbox/workers, /spanbox/mirrors, /spanbox/pools
 * and /spanbox/pdump with rte_telemetry_register_cmd(); they read @p p's memzone from the EAL's
 * telemetry thread. @return 0, or -1 when a command could not be registered (message printed).
 */
int sbx_telemetry_init(struct sbx_primary *p);

/* tables.c: runtime tables (docs/RUNTIME_TABLES.md) */

/**
 * Publish generation 0 of the runtime tables (the running config: document @p json, parsed in
 * shm->cfg, the reference a change's static sections must equal), create the rte_rcu_qsbr
 * variable the workers report to, register the rte_mp action SBX_IPC_TABLES through which mgmt
 * asks for changes, and start the tables thread that applies them (ipc.h).
 * @return 0, or -1 (message printed).
 */
int sbx_tables_init(struct sbx_primary *p, const char *json);

/** Unregister the action and stop the tables thread; returns once the changes queued and in
 * flight are answered. */
void sbx_tables_fini(void);

/** Worker @p w is gone: take it out of the grace periods (rte_rcu_qsbr_thread_offline). */
void sbx_tables_worker_gone(unsigned int w);

/**
 * The config document to run: the file at @p path, whose forwarding and mirrors sections are
 * replaced by those mgmt stored (table config_store of file_cfg->mgmt_database) when @p use_stored
 * and there are some.
 * @param from_store  set to true when the stored sections were used.
 * @return the document (malloc'd, caller frees), or NULL with the reason in @p err.
 */
char *sbx_tables_effective_json(const char *path, const struct sbx_config *file_cfg, bool use_stored, char *err,
				size_t errlen, bool *from_store);

/* runtime_dir.c: the file prefix's runtime directory and hugepage files */

/**
 * Before rte_eal_init(): wait up to @p timeout_ms (ms) until no other process holds a lock on the
 * prefix's DPDK runtime files (a secondary of a primary that died, not yet detached), naming it
 * while waiting. @return 0 when free, -1 (message printed) when still held at the timeout.
 */
int sbx_runtime_dir_wait_free(const char *prefix, unsigned int timeout_ms);

/** Write our pid into the prefix's attachable marker (spanbox/shm.h): mgmt may attach from now. */
void sbx_marker_write(const char *prefix);

/** Remove the prefix's attachable marker (missing is fine). */
void sbx_marker_remove(const char *prefix);

/** @return the pid of the DPDK primary holding the EAL config lock of @p prefix (its runtime
 *  directory's "config", fcntl lock as rte_eal_primary_proc_alive() tests it), 0 when none. */
int sbx_prefix_eal_primary(const char *prefix);

/**
 * `--clean-prefix`: remove what a dead appliance of @p prefix left (a primary killed with -9 leaves
 * its hugepage files, 512 MiB by default, and its runtime directory until the prefix starts
 * again), once no process of the prefix uses them: under the prefix lock (lcore_lock.h), when no
 * EAL primary holds its config lock and no process holds a runtime or hugepage file, waiting up to
 * @p timeout_ms for one that is exiting. An lcore lock a down mgmt still holds stays.
 * @return 0 (removed, said on stdout, or nothing there), 1 when a process of the prefix still uses
 *         them (named on stderr; nothing removed).
 */
int sbx_prefix_clean(const char *prefix, unsigned int timeout_ms);

/** Remove the prefix's hugepage files (every hugetlbfs mount) and its DPDK runtime directory; lock
 *  files someone holds (lcore locks, the prefix lock) stay. */
void sbx_prefix_files_remove(const char *prefix);

/* ---- flow export (flowexport.c, docs/FLOWS.md) ---- */
/** Create the workers' record rings and start the exporter thread (flows.enabled); before the
 *  workers start. @return 0, or -1 (logged). */
int sbx_flows_init(struct sbx_primary *p);
/** Runtime tables thread, before a change with flows @p n is published: the workers' rings exist
 *  once metering is on (created at the first such change when flows were off at start).
 *  @return 0, or -1 with the reason in @p err (nothing published). */
int sbx_flows_prepare(struct sbx_primary *p, const struct sbx_flows_cfg *n, char *err, size_t errlen);
/** Runtime tables thread, once a change with flows @p n is published: the exporter thread takes it
 *  at its next round (collectors whose address, port or transport changed, or all when the
 *  observation domain or the template period changed, are flushed, closed and opened anew; their
 *  counters go to shm->flows.retired); the thread is started if it did not run. */
void sbx_flows_reconfigure(struct sbx_primary *p, const struct sbx_flows_cfg *n);
/** Main loop: a collector's up/down change becomes an event (collector_up / collector_down). */
void sbx_flows_tick(struct sbx_primary *p);
/** After the workers stopped (their last flows flushed): drain the rings, send, stop the thread,
 *  close the collectors, free the rings. */
void sbx_flows_fini(void);

/* maps.c: the maps' rule tables and rte_acl classifiers (issue #27, docs/MAPS.md), per generation */
/**
 * Take the rule tables out of config document *@p json (replaced by the document without them,
 * each map's rules a {"count", "digest"} summary: what the memzone keeps). Before EAL.
 * @return 0, or -1 with "maps[i].rules: why" in @p err
 */
int sbx_maps_take(char **json, char *err, size_t errlen);
/** Build each port's classifier of generation 0 into tables[].maps (after sbx_tables_init, before the workers). @return 0 or -1. */
int sbx_maps_build(struct sbx_primary *p);
/** Free the tables and classifiers (after the workers stopped, before the memzone goes). */
void sbx_maps_fini(struct sbx_primary *p);
/**
 * Tables thread, before a generation is published: the classifiers of the maps of the proposed
 * config @p n into @p out. The same maps as the active tables @p now: their classifiers. Else a
 * new set of tables (each map's rules: those the primary holds under its summary's digest, or the
 * staging file's for request @p req_id, checked against the summary) and contexts built off the
 * data path, kept pending until sbx_maps_published or sbx_maps_abandon.
 * @return 0, or -1 with the field ("maps[j].rules", "maps") in @p field and "field: why" in @p err
 */
int sbx_maps_prepare(struct sbx_primary *p, const struct sbx_config *n, const struct sbx_tables *now,
		     uint64_t req_id, struct sbx_maps_acl *out, char *field, size_t flen, char *err, size_t errlen);
/**
 * The counter set of each map of @p n into @p mcset (tables thread, groups lock held): its counter
 * set in @p old when its id was there, else one no map of @p old uses, zeroed (counters, GRE
 * sequence). As the mirrors' (tables.c): a removed map's set is free only at the next change.
 * @return 0, or -1 when none is left (never: SBX_MAP_COUNTER_SETS is twice the maps).
 */
int sbx_maps_assign_csets(struct sbx_primary *p, const struct sbx_tables *old, const struct sbx_config *n,
			  uint16_t *mcset);
/** The prepared set will not be published: free it. */
void sbx_maps_abandon(void);
/** Generation @p gen (holding the prepared set) is published: the set it replaced is retired. */
void sbx_maps_published(uint64_t gen);
/** The grace period after the last publication ended: free the retired set's contexts. */
void sbx_maps_retire_done(void);

#endif
