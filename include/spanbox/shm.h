/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file shm.h
 * Layout of the shared memzone the primary publishes and workers and mgmt attach to.
 *
 * Who writes what (one writer per field), who reads it, how often, and with which ordering:
 *  - the primary writes the header, pools[], lcores[], warnings[], cfg, ports[] and events[] (its
 *    main thread), the runtime tables (its EAL IPC thread, docs/RUNTIME_TABLES.md), and the control
 *    half of workers[] (pid, lcore_id, nonce, stop, restarts, ...: main thread, at starts and
 *    exits). It publishes `running` and `tables_gen` with release stores; readers acquire.
 *  - worker w writes workers[w].stats (plain stores of its own counters, on cache lines of its own:
 *    no false sharing between workers; `held` and `tables_gen` with release stores, read by the
 *    primary after a crash and in a grace period), and workers[w].state (RUNNING, DRAINING,
 *    STOPPED: at those transitions), and mirrors[cset].seq_next (atomic fetch-add, one per session
 *    and burst of copies: the only line workers share on the fast path).
 *  - a standby writes its standbys[s].state (PARKED, TAKEN), heartbeat_ns and parked_ns; the
 *    primary the rest of the slot, and its role word last (release) when it hands a worker slot
 *    over (docs/CONFIG.md "Hot standbys"). A worker writes released_ns and released (release) of
 *    its slot when it stopped at a graceful hand-over; after that the slot is its successor's.
 *    The primary writes upgrade (an upgrade of the workers).
 *  - mgmt reads everything (~1 to 10 times a second), and writes only mgmt_pid, the staging area
 *    of the runtime tables (compare-and-swap hand-over with the primary: include/spanbox/ipc.h)
 *    and upgrade_path (just before it sends SBX_CTL_UPGRADE_WORKERS).
 * Per loop a worker reads one line it does not write: the one of tables_gen and running, which the
 * primary writes only at a change of tables and at start/stop. The primary reads each worker's
 * heartbeat every ms: the heartbeat line holds nothing the worker writes per burst.
 * Readers of 64-bit counters on x86-64 see whole values (aligned 8-byte stores are atomic), so a
 * snapshot may mix two loops of a worker but never shows a torn counter.
 *
 * Any change to this layout must bump SBX_SHM_VERSION: a process built for another layout refuses
 * to attach instead of misreading memory.
 */
#ifndef SPANBOX_SHM_H
#define SPANBOX_SHM_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <rte_common.h>
#include <rte_mbuf.h>

#include "config.h"
#include "counters.h"
#include "ingress.h"
#include "ipc.h"
#include "microburst.h"
#include "ipfix.h"

#define SBX_MEMZONE_NAME "spanbox_shm"
#define SBX_SHM_MAGIC 0x31584f424e415053ULL /* "SPANBOX1" little-endian */
#ifdef SBX_TEST_SHM_VERSION /* a test build of another layout (tests/e2e/92_upgrade.sh): refused */
#define SBX_SHM_VERSION SBX_TEST_SHM_VERSION
#else
#define SBX_SHM_VERSION 39
#endif
#define SBX_MAX_POOLS 4 /**< one pktmbuf pool per NUMA socket in use */
#define SBX_MAX_WARNINGS 64 /**< start-up warnings kept (NUMA placement, PCIe, pool size) */
#define SBX_WARN_LEN 232    /**< one warning's text, NUL included */
#define SBX_MAX_LCORES (SBX_MAX_WORKERS + 2) /**< primary, mgmt and every worker */
/**
 * Counter sets of mirror sessions: a counter set is one index into workers[w].stats.mirror[] and
 * mirrors[] (a session's counters and its GRE sequence number). A session keeps its counter set
 * while it exists; the counter set of a session that a change removes is reused only by a later
 * change (workers still running the previous tables may count into it until the grace period
 * ends). One change holds at most its kept + removed sessions (the old ones, <= SBX_MAX_MIRRORS)
 * plus its added ones (<= SBX_MAX_MIRRORS - kept): twice SBX_MAX_MIRRORS counter sets always
 * suffice.
 */
#define SBX_MIRROR_COUNTER_SETS (2 * SBX_MAX_MIRRORS)
/** Counter sets of the maps (struct sbx_tables.mcset), sized as the mirrors': one change holds up
 *  to its kept + removed + added maps at once, at most twice the maps a config holds. */
#define SBX_MAP_COUNTER_SETS (2 * SBX_MAX_MAPS)

/**
 * Tool group slots: like counter sets, one index into workers[w].stats.group_member[] /
 * stats.group[] and groups[] (the bucket table and the members' health). A group keeps its slot
 * while its name, members and hash stay the same (its limits and failover may change); a slot
 * of a group a change removed or changed is reused only by a later change. Twice the groups a
 * config holds always suffice (struct sbx_tables.gslot). SBX_GROUP_SLOTS is the most at the limits;
 * a memzone holds 2 x workers.tool_group_capacity.groups slots of tool_group_capacity.members
 * members each (sbx_shm_group(), sbx_shm_group_member(): regions sized at start, issue #25).
 */
#define SBX_GROUP_SLOTS (2 * SBX_MAX_TOOL_GROUPS)
#define SBX_GROUP_BUCKETS 4096   /**< buckets of a tool group: a flow's hash picks one, the bucket a member */
#define SBX_GROUP_NO_MEMBER 0xFF /**< a bucket no member holds (every member down) */

/** Health of a tool group member (struct sbx_group_member_shm.state). */
enum sbx_member_state {
	SBX_MEMBER_UP = 0,       /**< holds its buckets */
	SBX_MEMBER_DOWN = 1,     /**< failed (reason): its buckets are spread over the members up */
	SBX_MEMBER_HOLDDOWN = 2, /**< healthy again, waiting hold_down_ms before its buckets return */
};

/** Why a member is down (struct sbx_group_member_shm.reason). */
enum sbx_member_reason {
	SBX_MEMBER_REASON_NONE = 0,
	SBX_MEMBER_REASON_LINK = 1,       /**< "link down" */
	SBX_MEMBER_REASON_TX_REFUSED = 2, /**< "tx refused": over tx_refused_percent in a window */
};

/** @return "up", "down" or "holddown". */
const char *sbx_member_state_name(uint32_t s);
/** @return "link down", "tx refused" or "". */
const char *sbx_member_reason_name(uint32_t r);

/** One member of a tool group slot, as the primary's health check keeps it (primary/toolgroups.c). */
struct sbx_group_member_shm {
	uint32_t state;          /**< enum sbx_member_state */
	uint32_t reason;         /**< enum sbx_member_reason of the last failure (kept in holddown) */
	uint32_t buckets;        /**< buckets it holds now */
	uint32_t transitions;    /**< state changes since the slot was set up */
	uint64_t since_ns;       /**< CLOCK_MONOTONIC of the last state change */
	uint64_t win_start_ns;   /**< start of the current TX refusal window (CLOCK_MONOTONIC) */
	uint64_t win_sent;       /**< sum over workers of packets at the window's start */
	uint64_t win_refused;    /**< sum over workers of drop_txfull at the window's start */
	/** each worker's share of member_rate_limit (pps, bps), parts per million, written by the
	 *  primary every SBX_GROUP_REBALANCE_MS from one snapshot of every worker's group_demand,
	 *  max-min fair (primary/toolgroups.c); 0 = none yet: the worker keeps its start share */
	uint32_t share_pps_ppm[SBX_MAX_WORKERS];
	uint32_t share_bps_ppm[SBX_MAX_WORKERS];
};

/**
 * The bucket table and member health of one tool group slot. buckets[] is written by the primary
 * only (one byte store per bucket that moves, relaxed: a worker sees each bucket either at its old
 * or its new member, never anything else) and read by every worker sending to the group, once per
 * copy. The home of bucket b is member b % nb_members: a member up holds exactly its home buckets
 * plus its share of those of failed members, so a member that comes back takes exactly its home
 * buckets back.
 */
struct sbx_group_shm {
	uint8_t buckets[SBX_GROUP_BUCKETS]; /**< member index, or SBX_GROUP_NO_MEMBER */
	uint32_t nb_members;                /**< members of the group the slot was set up for */
	uint32_t members_up;                /**< members in state up */
	/** the members: shm->layout.group_members of them (workers.tool_group_capacity.members), the
	 *  slot's stride is shm->layout.group_stride (sbx_shm_group()) */
	struct sbx_group_member_shm m[];
} __rte_cache_aligned;

/**
 * What one worker offered one rate-limited tool group member since the slot was set up: copies and
 * their bytes (encapsulation included) handed to the member's token buckets, admitted or not.
 * Written by that worker only (a relaxed store of its own running sum, once per burst and member:
 * no atomic read-modify-write), read by the primary every SBX_GROUP_REBALANCE_MS: each worker's
 * share of member_rate_limit follows its part of the demand (struct sbx_group_member_shm
 * share_*_ppm; docs/CONFIG.md "Rate limits with several workers"). Zeroed with the slot.
 */
struct sbx_group_demand {
	uint64_t pkts;  /**< copies offered */
	uint64_t bytes; /**< their bytes */
};

#define SBX_GROUP_REBALANCE_MS 5 /**< how often the primary shares member rate limits out anew (and
				   workers take their shares) */
#define SBX_GROUP_SHARE_FLOOR_PPM 20000 /**< the least share of a member's rate limit a worker gets
					    (2 %): a worker whose first copies come has tokens at once */

/** Life cycle of a worker, as the primary and the worker itself record it. */
enum sbx_worker_state {
	SBX_W_STARTING = 0, /**< forked, EAL attaching */
	SBX_W_RUNNING,      /**< polling */
	SBX_W_DRAINING,     /**< stop requested: no more RX, flushing TX */
	SBX_W_STOPPED,      /**< exited cleanly */
	SBX_W_DEAD,         /**< exited on a signal or a non-zero status */
	SBX_W_RESTARTING,   /**< primary is starting a replacement */
	SBX_W_FAILED,       /**< crash-loop limit reached; not restarted */
};

/** @return a lower-case name for @p s ("running"...), "unknown" when out of range. */
const char *sbx_worker_state_name(uint32_t s);

/**
 * A worker whose heartbeat is older than workers.hang_timeout_ms but whose polling thread got no
 * CPU time meanwhile (/proc/PID/task/TID/schedstat) is starved (or stopped), not hung: the primary
 * counts it (sbx_worker_shm.starvations) and kills it only once the heartbeat is this many times
 * hang_timeout_ms old (a SIGSTOPped worker never runs again by itself).
 */
#define SBX_STARVE_FACTOR 5

/**
 * Life cycle of a hot-standby process (docs/CONFIG.md workers.standby): one writer per transition.
 * NONE -> STARTING (primary, at the fork) -> PARKED (the standby, once attached and ready) ->
 * ASSIGNED (primary: it wrote a role) -> TAKEN (the standby read it; the process is now the
 * worker of that slot) -> NONE (primary: the standby slot is free for the next standby).
 */
enum sbx_standby_state {
	SBX_SB_NONE = 0,  /**< no process */
	SBX_SB_STARTING,  /**< forked, EAL attaching */
	SBX_SB_PARKED,    /**< ready: waits for its role (a signal, or 10 ms at most), heartbeat every 10 ms */
	SBX_SB_ASSIGNED,  /**< the primary wrote a role, the standby has not read it yet */
	SBX_SB_TAKEN,     /**< the standby took the role (it runs as that worker now) */
	SBX_SB_FAILED,    /**< it kept dying before it was ready: not started again */
};

/** Signal the primary sends a standby's main thread (tgkill) right after it wrote its role word (ends its wait at once). */
#define SBX_STANDBY_WAKE_SIGNAL SIGUSR1

/** @return a lower-case name for @p s ("parked"...), "unknown" when out of range. */
const char *sbx_standby_state_name(uint32_t s);

/** Shortest frame a worker forwards: an Ethernet header (two MACs and the EtherType), bytes. */
#define SBX_FRAME_MIN 14
/** Bytes a frame may have beyond its port's mtu: the Ethernet header and two VLAN tags (QinQ). */
#define SBX_FRAME_L2_OVERHEAD (14 + 2 * 4)

/* struct sbx_port_counters and struct sbx_mirror_counters: counters.h (one list per family) */


/** Per worker ingress counters beyond the port counters (counters.h): per decap rule, per sender. */
struct sbx_ingress_stats {
	uint64_t rule_pkts[SBX_MAX_PORTS][SBX_MAX_DECAP_RULES];  /**< frames decapsulated by rule r of port p */
	uint64_t rule_bytes[SBX_MAX_PORTS][SBX_MAX_DECAP_RULES]; /**< their inner bytes */
	/* the worker's tunnel sender table is a region of the memzone: sbx_shm_senders() */
	/** timestamps in (ingress.timestamp): the clock offset of each input port's sender (ts_in.h) */
	struct sbx_ts_in_offset ts[SBX_MAX_PORTS];
};

/**
 * Counters written only by the worker that owns the slot. Two groups on separate cache lines: the
 * first is written at most every 10 ms (heartbeat) or at rare events and is read by the primary
 * every ms; the second is written every loop or burst and read by mgmt about once a second.
 */
struct sbx_worker_stats {
	/* --- read by the primary every ms; written every 10 ms or at rare events --- */
	uint64_t heartbeat_ns;   /**< CLOCK_MONOTONIC ns, written at least every 10 ms and before each idle sleep */
	uint64_t loops;          /**< poll loops (updated with the heartbeat) */
	uint64_t idle_sleeps;    /**< times the worker slept for idle back-off */
	uint64_t tables_gen;     /**< generation of the runtime tables the worker runs with */
	uint64_t tables_errors;  /**< runtime tables it could not take (mirroring nothing since) */
	uint64_t first_rx_ns;    /**< CLOCK_REALTIME ns of the first burst this process received */
	/* --- written every loop or burst --- */
	uint64_t busy_cycles __rte_cache_aligned; /**< TSC cycles spent in loops that received packets */
	uint64_t busy_pkts;      /**< packets handled in those loops; cycles/packet = busy_cycles/busy_pkts */
	uint64_t bad_pkts;       /**< mbufs dropped because their chain is inconsistent */
	uint64_t held;           /**< mbufs of burst[] still owned by the burst (freed by the primary if
				      the worker dies); 0 once any of them was freed or handed to a PMD */
	uint64_t reasm_held;     /**< mbufs the worker's reassembly tables hold now (outer fragments
				      waiting for the rest of their datagram, secondary/ingress.c): the
				      pool audit's held_by_reassembly */
	uint64_t busy_loops;     /**< loops that received packets: busy_pkts / busy_loops is the mean
				      burst (a benchmark's check that its input keeps the worker full) */
	struct sbx_port_counters port[SBX_MAX_PORTS];
	/** indexed by the session's counter set (struct sbx_tables.cset) */
	struct sbx_mirror_counters mirror[SBX_MIRROR_COUNTER_SETS];
	struct sbx_ingress_stats ingress; /**< decap rules and tunnel senders (secondary/ingress.c) */
	/* the worker's tool group counters (per slot and member: member counters, demand; per slot:
	 * group counters) are a region of the memzone sized by workers.tool_group_capacity:
	 * sbx_shm_group_member(), sbx_shm_group_demand(), sbx_shm_group_ctr() */
	/* flow metering (secondary/flows.c, docs/FLOWS.md): counters of every process of the slot
	 * (a successor continues from its predecessor's values), published every heartbeat (10 ms)
	 * and at a stop; the flows_* lines of SBX_FOREACH_WORKER_COUNTER */
	uint64_t flows_frames;          /**< frames metered (IPv4 / IPv6) */
	uint64_t flows_non_ip;          /**< frames of metered ports not metered: not IP, IP header cut */
	uint64_t flows_created;         /**< flows created */
	uint64_t flows_expired_idle;    /**< records: idle timeout */
	uint64_t flows_expired_active;  /**< records: active timeout */
	uint64_t flows_expired_end;     /**< records: TCP FIN / RST */
	uint64_t flows_expired_forced;  /**< records: flushed at a graceful stop */
	uint64_t flows_evicted_full;    /**< records: pushed out by a full table */
	uint64_t flows_records_queued;  /**< records put on the ring to the primary's exporter */
	uint64_t flows_lost_ring;       /**< records lost: that ring was full */
	uint64_t flows_lost_killed;     /**< flows a killed predecessor left in its table (never exported) */
	uint64_t flows_active;          /**< flows in the table now (a gauge) */
	void *flows_table;              /**< struct sbx_flowtable * of the process that runs the slot
					     (hugepage memory, the same address in every process): a
					     successor frees a killed predecessor's; NULL once freed */
	/* maps (issue #27, secondary/maps_stage.c): indexed by the map's counter set
	 * (struct sbx_tables.mcset: a map keeps it while it exists, as a mirror its cset) */
	uint64_t maps_classified;       /**< frames looked up in a port's rule tables */
	struct sbx_mirror_counters map_mirror[SBX_MAP_COUNTER_SETS]; /**< each map's session counters */
	struct sbx_map_counters map[SBX_MAP_COUNTER_SETS];           /**< passed */
	struct rte_mbuf *burst[SBX_MAX_BURST]; /**< the worker receives into this array */
} __rte_cache_aligned;

/**
 * Shared per-session state: the session's GRE sequence numbers (RFC 2890). A worker numbers its
 * copies when it sends them: one atomic fetch-add of the burst's count per session and burst
 * (not one per frame, which would bounce this cache line between workers), so every number is
 * used by exactly one copy, a number is missing on the wire only when its copy was dropped
 * (drop_txfull), and copies of two workers interleave by at most one burst. A worker that dies
 * or restarts leaves no gap (it holds no numbers). On its own cache line: every worker mirroring
 * the session writes it.
 */
struct sbx_mirror_shm {
	uint64_t seq_next; /**< the next number to hand out (the low 32 bits go on the wire) */
} __rte_cache_aligned;

/**
 * One worker slot: a worker's entry in the memzone (sbx_shm_worker(shm, w)), the one sense of "slot" in
 * spanbox (as in DPDK's client_server_mp). It outlives the worker process: the primary starts a
 * new process into the same slot.
 */
struct sbx_worker_shm {
	/* written by the primary */
	int32_t pid;             /**< process id, 0 when none */
	uint32_t state;          /**< enum sbx_worker_state (the worker also writes RUNNING/DRAINING/STOPPED) */
	uint32_t lcore_id;       /**< EAL lcore id the worker runs as */
	uint32_t restarts;       /**< times the primary restarted this slot */
	uint64_t start_ns;       /**< CLOCK_REALTIME ns of the last start */
	volatile uint32_t stop;  /**< set by the primary: drain and exit */
	uint32_t exit_status;    /**< last wait status (as from waitpid) */
	uint32_t crashes;        /**< exits on a signal or non-zero status, hangs included */
	uint32_t hangs;          /**< times the primary killed it for a stale heartbeat: hung (its CPU
				      time advanced, its heartbeat did not), or not scheduled for
				      SBX_STARVE_FACTOR x hang_timeout_ms */
	uint64_t recovered_mbufs; /**< mbufs of its burst the primary freed after it crashed */
	uint64_t nonce;          /**< random, written before each start and passed to that process as
				      "--nonce HEX"; 0 while no start is pending or running. A worker
				      whose --nonce differs, or whose pid is not pid, is not the one the
				      primary started for this slot and refuses to touch its queues */
	uint32_t takeovers;      /**< times a standby took this slot over (also counted in restarts) */
	uint32_t takeover_from;  /**< pid the last takeover replaced */
	uint32_t takeovers_before_reap; /**< takeovers of a dead predecessor made as soon as its life lock
					     said so, before waitpid() reaped it (spanbox/life.h) */
	uint64_t takeover_death_ns; /**< CLOCK_REALTIME ns the last predecessor was reaped (crash, hang)
					 or let go of the queues (graceful hand-over) */
	uint64_t takeover_gap_ns;   /**< from takeover_death_ns to the successor's first received burst,
					 ns; 0 while it has received nothing */
	uint32_t starvations;    /**< times the primary found the heartbeat older than hang_timeout_ms
				      while the polling thread's CPU time stood still: not scheduled
				      (CPU-starved, or stopped), not hung; not killed for it unless it
				      lasts SBX_STARVE_FACTOR x hang_timeout_ms (primary/workers.c) */
	uint32_t starved;        /**< 1 while such a starvation lasts (the heartbeat is still old), else 0 */
	/* written by the worker at a graceful stop (a hand-over waits for it) */
	uint64_t released_ns;    /**< CLOCK_REALTIME ns it stopped polling and flushed */
	uint32_t released;       /**< 1 (release store, after released_ns): it touches no queue any more */
	/* the life lock (spanbox/life.h): held by the process that runs the slot, from the moment the
	 * slot is its own until it releases the queues; a thread of the primary waits on it and learns
	 * of a death in exit_mm(), ~6 ms before waitpid() could. Its own cache line: the futex word
	 * is written only when the owner changes, and never shares a line with counters */
	pthread_mutex_t life __rte_cache_aligned; /**< primary: sbx_life_init(); owner: sbx_life_hold() */
	int32_t life_pid;        /**< owner: its pid, stored after it holds life (never cleared) */
	char binary[SBX_PATH_LEN] __rte_cache_aligned; /**< primary: the executable the current process runs */
	struct sbx_worker_stats stats;
} __rte_cache_aligned;

/**
 * One hot-standby process (shm->standbys[s]): started with the workers, it completes EAL init,
 * attaches, checks its nonce and parks until the primary writes a worker id into role; it then
 * runs as that worker (workers[role]), and the primary starts a new standby into this slot.
 */
struct sbx_standby_shm {
	int32_t pid;             /**< primary: the process, 0 none */
	uint32_t state;          /**< enum sbx_standby_state (writers: see there) */
	uint32_t lcore_id;       /**< primary: EAL lcore id it runs as */
	uint32_t starts;         /**< primary: processes started into this slot */
	uint64_t nonce;          /**< primary: as sbx_worker_shm.nonce, passed as "--nonce HEX" */
	uint64_t start_ns;       /**< primary: CLOCK_REALTIME ns of the fork */
	uint64_t parked_ns;      /**< standby: CLOCK_REALTIME ns it was ready */
	uint64_t heartbeat_ns;   /**< standby: CLOCK_MONOTONIC ns, at least every 10 ms while parked */
	int32_t role;            /**< primary (release store, last): the worker id to run as, -1 none */
	uint32_t failures;       /**< primary: exits before it was ready, in a row */
	char binary[SBX_PATH_LEN]; /**< primary: the executable it runs */
} __rte_cache_aligned;

/** Where an upgrade of the workers stands (sbx_upgrade_shm.state). */
enum sbx_upgrade_state {
	SBX_UPG_NONE = 0, /**< none asked since the start */
	SBX_UPG_RUNNING,  /**< standbys of the new binary start; the workers are handed over one by one */
	SBX_UPG_DONE,     /**< every worker runs the new binary */
	SBX_UPG_REFUSED,  /**< a standby of the new binary refused (error), or none parked in time: the
			       workers were not touched and run the old binary */
};

/** @return a lower-case name for @p s ("running"...), "unknown" when out of range. */
const char *sbx_upgrade_state_name(uint32_t s);

/** The last upgrade of the workers (POST /api/v1/workers/upgrade). Written by the primary. */
struct sbx_upgrade_shm {
	uint32_t state;            /**< enum sbx_upgrade_state */
	uint32_t workers_done;     /**< workers handed over to the new binary so far */
	uint64_t started_ns;       /**< CLOCK_REALTIME */
	uint64_t finished_ns;      /**< CLOCK_REALTIME of DONE or REFUSED, 0 while running */
	char binary[SBX_PATH_LEN]; /**< the new binary */
	char from[SBX_PATH_LEN];   /**< the binary the workers ran before */
	char error[1024];          /**< REFUSED: why, with both values of what did not match */
};

/** One port as the primary set it up. */
struct sbx_port_shm {
	uint16_t port_id;        /**< DPDK port id */
	uint16_t nb_rxq, nb_txq; /**< queues configured */
	int32_t socket_id;       /**< rte_eth_dev_socket_id(), -1 when unknown */
	int32_t numa_socket;     /**< socket the primary plans with: socket_id, or the value of the test
				      hook SBX_TEST_PORT_SOCKET; -1 when unknown (treated as the
				      primary's socket, never reported as remote) */
	int32_t pool_socket;     /**< socket of the pool that serves this port (its RX mbufs) */
	uint8_t socket_from_hook; /**< 1 when numa_socket comes from SBX_TEST_PORT_SOCKET */
	uint8_t mac[6];
	uint16_t mtu;            /**< the port's MTU as its PMD has it (rte_eth_dev_get_mtu() once
				      configured; else the config's mtu), bytes of L3 payload; 0 =
				      unknown, no limit. Mirror copies sent there fit it (mirror.c) */
	/* refreshed by the primary every 100 ms */
	uint32_t link_up;        /**< 1 = up */
	uint32_t link_speed;     /**< Mb/s */
	uint64_t ipackets, opackets, ibytes, obytes, imissed, ierrors, oerrors, rx_nombuf;
	/* RSS as the device reports it once started (ports[].rss; rte_eth_dev_rss_hash_conf_get and
	 * rte_eth_dev_rss_reta_query): what /api/v1/status shows, not what the config asked */
	uint8_t rss_on;          /**< 1 when ports[].rss was applied */
	uint8_t rss_key_len;     /**< bytes of rss_key */
	uint16_t rss_reta_size;  /**< entries of rss_reta (the device's RETA size, at most SBX_RSS_RETA_MAX) */
	uint64_t rss_hf;         /**< hash fields (RTE_ETH_RSS_* bits) */
	uint8_t rss_key[SBX_RSS_KEY_MAX];
	uint16_t rss_reta[SBX_RSS_RETA_MAX]; /**< RX queue of each RETA entry */
	/** For SBX_PORT_PCAP_FILE ports: names of the rings, "<rx|tx>_<port>_<queue>" form.
	 *  RX ring q: primary enqueues, worker polling queue q dequeues.
	 *  TX ring w: worker w enqueues, primary dequeues and transmits. */
	char rx_ring[SBX_MAX_WORKERS][SBX_NAME_LEN];
	char tx_ring[2 * SBX_MAX_WORKERS][SBX_NAME_LEN]; /* forward + mirror queues */
} __rte_cache_aligned;

#define SBX_EVENTS 256 /**< events kept in the memzone ring (mgmt copies them to SQLite) */

/**
 * An event of the primary: worker start, exit, crash, hang, restart, give-up. Written by the
 * primary's main thread only; a reader takes events[(s - 1) % SBX_EVENTS] for s up to event_seq
 * and keeps it only when its seq is still s (not overwritten meanwhile).
 */
struct sbx_event {
	uint64_t seq;            /**< 1, 2, ...; written last */
	uint64_t time_ns;        /**< CLOCK_REALTIME */
	int32_t worker;          /**< worker id, -1 for the appliance */
	int32_t pid;
	char kind[16];           /**< "worker_start", "worker_exit", "worker_crash", "worker_hang",
				      "worker_restart", "worker_failed", "worker_takeover", "takeover_rx",
				      "standby_start", "standby_ready", "standby_exit", "standby_hang",
				      "standby_failed", "upgrade_start", "upgrade_done", "upgrade_refused",
				      "appliance_start", "appliance_stop", "tables_applied", "member_down",
				      "member_holddown", "member_up", "capture_start", "capture_end",
				      "worker_starved", "worker_resumed", "microburst", "collector_down",
				      "collector_up" (flows.collectors) (at most 15) */
	char detail[104];
};

/**
 * The capacity plan of one pool: what it must hold so that no RX queue, TX queue, cache or burst
 * ever waits for an mbuf, each term in mbufs (docs/CONFIG.md "pool"). total is the sum of the terms.
 */
struct sbx_pool_plan {
	uint64_t rx_desc;      /**< ethdev ports this pool serves: sum of RX queues x rx_desc */
	uint64_t tx_desc;      /**< the same ports: forwarding TX queues (one per worker) x tx_desc */
	uint64_t mirror_tx;    /**< every port: mirror TX queues (one per worker) x
				    tx_desc, plus one burst of copies per worker and session */
	uint64_t lcore_caches; /**< workers x 1.5 x pool.cache (a cache holds up to its flush threshold) */
	uint64_t bursts;       /**< sum over workers of burst x RX queues it polls on these ports */
	uint64_t rings;        /**< bridged (pcap) ports: ring entries, the primary's read burst and its
				    lcore cache (1.5 x pool.cache) */
	uint64_t reassembly;   /**< ports with decap rules in the config at start: workers x
				    SBX_REASM_FLOWS x SBX_REASM_MAX_FRAGS (outer fragments waiting) */
	uint64_t headroom;     /**< pool.headroom */
	uint64_t total;        /**< sum of the terms above */
	uint32_t ports;        /**< ports this pool serves */
	uint32_t workers;      /**< workers counted in lcore_caches */
};

/** Where a pool's size comes from. */
enum sbx_pool_size_source {
	SBX_POOL_SIZE_PLAN = 0,   /**< the plan's total rounded up to 2^k - 1 */
	SBX_POOL_SIZE_CONFIG = 1, /**< pool.mbufs, at least the plan */
	SBX_POOL_SIZE_FORCED = 2, /**< pool.mbufs below the plan, accepted with pool.force (a warning) */
};

/**
 * The RX queues one worker polls, as the primary placed them at start: those the config gives it
 * (workers.rxq of the config, kept as parsed in sbx_shm.cfg) plus those ports.c added (net_tap
 * needs as many RX as TX queues: queue q of such a port goes to worker q % nb_workers, so that no
 * frame the kernel puts on an extra queue is stranded). Written once, before workers start.
 */
struct sbx_worker_rxqs {
	uint16_t nb_rxq;                                /**< entries used in rxq[] */
	struct sbx_rxq_cfg rxq[SBX_MAX_RXQ_PER_WORKER]; /**< (port, queue) pairs, in polling order */
};

/**
 * The indirect-mbuf pool beside a socket's pktmbuf pool: mbufs without data room or private data
 * (struct rte_mbuf alone, 128 B + the mempool's object header), from which a shared mirror copy
 * takes the mbuf that points at the frame's buffer (rte_pktmbuf_attach(), rte_pktmbuf_clone()).
 * Its objects sit 192 B apart instead of one per data room (2.3 KB, 9.4 KB at MTU 9000), so the
 * indirect mbufs of a burst share cache lines and TLB entries; measured -2 to -4 % cycles per share
 * (docs/BENCHMARKS.md "Mirror fast path, third pass"). Created and sized by the primary with the
 * main pool, never freed while it runs; a worker that finds none uses the main pool.
 */
struct sbx_ind_pool_shm {
	char name[SBX_NAME_LEN]; /**< rte_mempool name (sbx_pool_ind_name()); "" when there is none */
	uint32_t size;           /**< mbufs */
	uint32_t cache_size;     /**< per-lcore cache, mbufs (pool.cache, as the main pool) */
	uint32_t elt_size;       /**< bytes per object (struct rte_mbuf, no data room) */
	uint32_t in_use;         /**< refreshed by the primary every 100 ms */
	uint32_t avail;
	uint32_t pad;
	uint64_t populate_ns;    /**< time rte_pktmbuf_pool_create took, ns */
	uint64_t bytes;          /**< memory holding its objects, bytes */
	uint64_t plan_total;     /**< the plan, mbufs: shares in flight on mirror TX queues and in the
				      workers' copy buffers (plan.mirror_tx), the lcore caches
				      (plan.lcore_caches) and pool.headroom; size is it rounded up to
				      2^k - 1 */
};

/** One pktmbuf pool. */
struct sbx_pool_shm {
	char name[SBX_NAME_LEN]; /**< rte_mempool name */
	int32_t socket_id;
	uint32_t size;           /**< mbufs */
	uint32_t cache_size;     /**< per-lcore cache, mbufs */
	uint32_t elt_size;       /**< bytes per object */
	uint32_t data_room;      /**< mbuf data room, bytes */
	uint64_t populate_ns;    /**< time rte_pktmbuf_pool_create took, ns */
	uint32_t in_use;         /**< refreshed by the primary every 100 ms */
	uint32_t avail;
	uint32_t rx_held;        /**< mbufs the ports' RX rings held once started, before any traffic */
	struct sbx_pool_plan plan;
	uint32_t size_source;    /**< enum sbx_pool_size_source */
	uint64_t bytes;          /**< memory holding the pool's objects (sum of its chunks), bytes */
	uint64_t hugepage_size;  /**< page size of that memory, bytes */
	uint64_t heap_grow_bytes; /**< hugepage memory EAL added to its heap while creating the pool:
				       fresh pages whose first touch is inside populate_ns (the rest was
				       pre-faulted by EAL at init, eal.socket_mem_mb) */
	/* hugepage check of this pool's socket, before any pool was created */
	uint64_t need_bytes;     /**< estimated memory of every pool on this socket (objects, ring, header) */
	uint64_t heap_free_bytes; /**< free in EAL's heap on this socket at the check */
	uint64_t free_huge_bytes; /**< free hugepages on this node EAL could still add, bytes */
	uint64_t flows_bytes;    /**< of need_bytes: the flow tables of the workers on this socket and
				      the flow record rings (primary/flowplan.c), 0 with flows off */
	/* first-touch memset of the same bytes on fresh hugepages (pool.measure_memset) */
	int32_t memset_status;   /**< 0 not requested, 1 measured, -1 failed (memset_error says why) */
	uint64_t memset_ns;      /**< time of the memset, ns */
	uint64_t memset_bytes;   /**< bytes set (the estimate of the pool's object memory, whole pages) */
	uint64_t memset_page_size; /**< bytes */
	char memset_error[128];
	struct sbx_ind_pool_shm indirect; /**< its indirect-mbuf pool (shared mirror copies) */
};

/** One lcore of the appliance and where it runs. */
struct sbx_lcore_shm {
	uint16_t lcore_id;       /**< EAL lcore id */
	int16_t worker;          /**< worker id, -1 for the primary and mgmt */
	int32_t socket;          /**< NUMA node of its CPU set; -2 when the set spans nodes, -1 unknown
				      (SBX_SOCKET_MIXED, SBX_SOCKET_UNKNOWN of hostinfo.h) */
	char role[12];           /**< "primary", "mgmt" or "worker" */
	char cpus[SBX_NAME_LEN]; /**< CPU set it floats on (eal.cpus: --lcores id@(cpus)) */
	char nodes[SBX_NAME_LEN]; /**< NUMA nodes of those CPUs, e.g. "0" or "0,1" */
};

/** A warning the primary found at start (a remote NUMA pair, a PCIe path problem, a forced pool). */
struct sbx_warning {
	char kind[16];           /**< "numa", "pcie", "pool" */
	char text[SBX_WARN_LEN]; /**< the message, naming both ends of a remote pair */
};

/** How long the primary's shutdown waits for mgmt to leave the memzone (mgmt_pid 0) before it
 *  frees it, ms (mgmt ticks every 100 ms); past it mgmt must not write the memzone any more. */
#define SBX_MGMT_DETACH_MS 1000
#define SBX_TABLES_JSON_MAX (64 * 1024) /**< bytes of a config document, NUL included */
#define SBX_RCU_MEMZONE_NAME "spanbox_rcu" /**< the rte_rcu_qsbr variable of the tables */

/**
 * The maps' classifiers of one generation of the runtime tables (issue #27, primary/maps.c,
 * docs/MAPS.md "Live changes"): acl[p] is a struct sbx_mapacl * in rte_malloc memory (the same
 * address in every process; its rte_acl contexts are in DPDK's RTE_ACL tailq under names no other
 * generation uses) whose categories are the maps with a source on port p, in the order of
 * cols[p]; NULL: no map with rules on p. Written by the primary into the inactive buffer only.
 */
struct sbx_maps_acl {
	void *acl[SBX_MAX_PORTS];
	uint16_t nb_cols[SBX_MAX_PORTS];             /**< maps with a source on port p (<= SBX_MAX_MAPS) */
	uint16_t cols[SBX_MAX_PORTS][SBX_MAX_MAPS];  /**< category c of acl[p]: index into cfg.maps */
	/** the per-rule counters of these tables: a struct sbx_rule_ctrs * in rte_malloc memory
	 *  (maprulectr.h), row w written by worker slot w; NULL: none (no maps, or no memory) */
	void *ctr;
};

/**
 * One of the two buffers of the runtime tables (docs/RUNTIME_TABLES.md): what can change while
 * the appliance runs (forwarding.xconnects and mirrors) inside a whole running config. The static
 * sections (eal, pool, ports, workers, mgmt) are those of the start and equal in both buffers.
 * Written only by the primary, and only while no worker can read it (rte_rcu_qsbr grace period).
 */
struct sbx_tables {
	uint64_t gen;                 /**< generation this buffer holds */
	struct sbx_config cfg;        /**< the running config: static sections as parsed at start
					   (equal to shm->cfg), live sections (xconnects, mirrors) as the
					   change proposed them */
	uint8_t cset[SBX_MAX_MIRRORS]; /**< counter set (< SBX_MIRROR_COUNTER_SETS) of cfg.mirrors[i]:
					    workers[w].stats.mirror[cset] and mirrors[cset]; a session
					    keeps its counter set while it exists */
	uint8_t gslot[SBX_MAX_TOOL_GROUPS]; /**< slot (< SBX_GROUP_SLOTS) of cfg.tool_groups[i]:
					       groups[slot] and the workers' group counters */
	uint64_t request_id;          /**< the mgmt request that published it (staging), 0 = the start */
	uint32_t json_len;            /**< bytes of json, NUL excluded */
	char json[SBX_TABLES_JSON_MAX]; /**< the config document cfg was parsed from */
	struct sbx_maps_acl maps;     /**< the classifiers of cfg.maps (primary/maps.c): built before
					   this buffer is published, freed only after the grace period of
					   the generation that replaced it */
	uint16_t mcset[SBX_MAX_MAPS]; /**< counter set (< SBX_MAP_COUNTER_SETS) of cfg.maps[j]:
					   workers[w].stats.map[mcset], map_mirror[mcset] and
					   maps.seq[mcset]; a map keeps it while its id exists */
};

/**
 * Where mgmt puts a proposed config document for the primary to apply (SBX_TABLES_APPLY of the
 * rte_mp action SBX_IPC_TABLES, ipc.h), and where the primary answers why it refused. Who may
 * read or write it is decided by @p state (enum sbx_staging_state, changed with atomic
 * compare-and-swap by both sides; ipc.h draws the state machine): mgmt writes json, client and
 * request_id only in SBX_STAGING_FREE; the primary reads them only after it took the request
 * (PENDING -> WORKING) and writes error, result and done_id before it stores FREE.
 */
struct sbx_tables_staging {
	uint32_t state;               /**< enum sbx_staging_state */
	uint32_t result;              /**< enum sbx_tables_result of request done_id */
	uint64_t request_id;          /**< the staged request (mgmt: 1, 2, ...) */
	uint64_t done_id;             /**< the request result answers */
	uint32_t len;                 /**< bytes of json, NUL excluded */
	char json[SBX_TABLES_JSON_MAX];
	char client[64];              /**< who asked (for the primary's event) */
	char error[512];              /**< "field: message" of a refusal */
	char error_field[128];        /**< the field alone */
};

#define SBX_MAX_CAPTURES 8            /**< captures recording at once (running; ended ones do not count) */
/** Slots of the recorder (struct sbx_shm.captures): an ended capture keeps its slot until its
 *  session is removed, and a change that removes ended captures and adds new ones holds both until
 *  the workers' grace period: twice the sessions of `mirrors`, as the counter sets. */
#define SBX_CAPTURE_SLOTS (2 * SBX_MAX_MIRRORS)
#define SBX_CAPTURE_RING_SIZE 8192    /**< entries of a capture's ring (workers -> recorder) */
#define SBX_CAPTURE_POOL_MBUFS 16383  /**< mbufs of the capture pool (the pcapng copies) */
#define SBX_CAPTURE_POOL_NAME "sbx_capture_pool" /**< created by the primary at the first capture */

/** Life cycle of a capture slot (struct sbx_capture_shm.state). */
enum sbx_capture_state {
	SBX_CAP_FREE = 0,   /**< no capture */
	SBX_CAP_RUNNING,    /**< workers copy into the ring, the recorder writes files */
	SBX_CAP_ENDED,      /**< ended (reason says why); its files stay until the session is removed */
};

/**
 * One capture as the recorder of the primary runs it (primary/recorder.c, docs/CAPTURE.md). The
 * primary writes everything but the workers' counters (which are the session's mirror counters,
 * workers[w].stats.mirror[cset]); mgmt reads it for GET /api/v1/captures. `ended` is read by the
 * workers once per burst: set, they stop copying (a capture that reached a stop condition).
 */
struct sbx_capture_shm {
	uint32_t state;          /**< enum sbx_capture_state */
	uint32_t ended;          /**< 1 once the recorder ended it (workers stop copying) */
	uint16_t id;             /**< the session's id (= the capture's id) */
	char ring[SBX_NAME_LEN]; /**< the rte_ring the workers enqueue pcapng copies into */
	uint64_t start_ns;       /**< CLOCK_REALTIME of the start */
	uint64_t end_ns;         /**< CLOCK_REALTIME of the end, 0 while running */
	uint64_t frames;         /**< frames written into its files */
	uint64_t bytes;          /**< bytes written (pcapng blocks, all files) */
	uint64_t disk_bytes;     /**< bytes its files take now (a ring deletes old files) */
	uint64_t drop_disk;      /**< frames lost by the recorder: a write failed (disk full, slow) */
	uint32_t file_first;     /**< number of its oldest file still on disk (files are 1, 2, ...) */
	uint32_t file_last;      /**< number of the file being written (or the last one), 0 = none */
	char reason[96];         /**< why it ended: "stop.packets", "quota", "mgmt restarted", ... */
};

/* ---- flow export (issue #28, docs/FLOWS.md) ---- */
#define SBX_FLOWS_RING_SIZE 16384 /**< records (128 B each) a worker's ring to the exporter holds */
#define SBX_FLOWS_RING_FMT "sbx_flows_w%u" /**< rte_ring name of worker w's ring (primary creates it) */

/** One IPFIX collector as the primary's exporter thread sees it (primary/flowexport.c). */
struct sbx_flow_collector_shm {
	uint32_t up;             /**< 1: the last records went out (or none tried yet), 0: being lost */
	uint32_t transitions;    /**< up/down changes */
	uint64_t since_ns;       /**< CLOCK_REALTIME of the last change (or of the start) */
	struct sbx_ipfix_stats x; /**< the collector's exporter counters (ipfix.h), copied every 100 ms */
	struct sbx_flow_collector_cfg cfg; /**< the collector the exporter sends to (flows are live: it
					        follows the active tables within a round, ~1 ms) */
};

#define SBX_FLOWS_TOP 20          /**< top talkers kept: the largest flows of the window (by bytes, and by packets) */
#define SBX_FLOWS_TOP_WINDOW_S 60 /**< their window: records exported in the last 60 s */

/** The exporter thread's state (written by that thread only, read by mgmt). */
struct sbx_flows_shm {
	uint32_t running;        /**< 1 while the exporter thread runs */
	uint32_t nb_collectors;
	uint64_t records_in;     /**< records taken off the workers' rings */
	struct sbx_flow_collector_shm collectors[SBX_MAX_FLOW_COLLECTORS];
	/* live changes (docs/RUNTIME_TABLES.md "Flows"): a collector replaced or removed is flushed and
	 * closed, its final counters added here; records with no collector configured are counted */
	struct sbx_ipfix_stats retired; /**< sum of the counters of collectors closed by live changes */
	uint64_t reconfigs;      /**< flows configs the exporter took after the start */
	uint64_t records_no_collector; /**< records taken while no collector was configured (dropped) */
	/* top talkers, rewritten every second under a sequence lock: top_seq odd while being written
	 * (a reader copies, then checks that top_seq was even and unchanged) */
	uint32_t top_seq;
	uint32_t nb_top;         /**< entries of top[] */
	uint64_t top_ns;         /**< CLOCK_REALTIME of the last rewrite */
	struct sbx_flow_record top[SBX_FLOWS_TOP]; /**< largest bytes first */
	/* the same window ranked by packets (GET /api/v1/flows/top?by=packets), under the same top_seq */
	uint32_t nb_top_packets; /**< entries of top_packets[] */
	uint32_t reserved_top;
	struct sbx_flow_record top_packets[SBX_FLOWS_TOP]; /**< most packets first */
	/* collectors[].cfg is rewritten by live changes under a sequence lock: cfg_seq odd while being
	 * written (a reader copies with sbx_flows_collector_cfg(): a garbled address is never read) */
	uint32_t cfg_seq;
	uint32_t open_failures[SBX_MAX_FLOW_COLLECTORS]; /**< collectors[c] could not be opened (socket,
							      connect): each try counted, retried with back-off */
};

/** Copy collectors[@p c].cfg of @p fs into @p out under cfg_seq (a live change may be rewriting it). */
static inline void sbx_flows_collector_cfg(const struct sbx_flows_shm *fs, unsigned int c,
					   struct sbx_flow_collector_cfg *out)
{
	uint32_t s0, s1;
	int tries = 0;

	do { /* the writer holds it odd for one copy of ~70 bytes: a few tries at most */
		s0 = __atomic_load_n(&fs->cfg_seq, __ATOMIC_ACQUIRE);
		__builtin_memcpy(out, &fs->collectors[c].cfg, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s1 = __atomic_load_n(&fs->cfg_seq, __ATOMIC_RELAXED);
	} while (((s0 & 1) || s0 != s1) && ++tries < 100000);
	out->address[sizeof(out->address) - 1] = '\0';
}

/** The memzone. */
#define SBX_PDUMP_MAX 32 /**< captures of DPDK's tools at once: one (port, queue, direction) each */
#define SBX_PDUMP_ALL_QUEUES 0xffff /**< RTE_PDUMP_ALL_QUEUES */

/** One capture of dpdk-dumpcap / dpdk-pdump (primary/pdump.c, docs/CAPTURE.md). */
struct sbx_pdump_entry {
	uint64_t id;         /**< 1, 2, ... in order of enabling; 0 = free slot */
	uint16_t port;       /**< index in cfg.ports (an ethdev port) */
	uint16_t port_id;    /**< its DPDK port id */
	uint16_t queue;      /**< queue id, or SBX_PDUMP_ALL_QUEUES */
	uint16_t rx;         /**< 1: frames received (RX callbacks), 0: frames sent (TX callbacks) */
	uint32_t pcapng;     /**< 1: rte_pcapng_copy records (dumpcap), 0: rte_pktmbuf_copy (pdump) */
	uint32_t snaplen;    /**< bytes kept of each frame, UINT32_MAX = all */
	int32_t client_pid;  /**< the requesting process (its IPC socket name), 0 unknown: its
				  captures are removed once it is gone (a dumpcap killed with -9) */
	uint32_t reserved;
	void *ring;          /**< struct rte_ring * of the client (shared memory) */
	void *mp;            /**< struct rte_mempool * of the client */
	const void *prm;     /**< const struct rte_bpf_prm * of the client, NULL: no filter */
};

/** The capture table: written by the primary into pdump[(pdump_gen + 1) & 1], then pdump_gen
 * bumped; workers read pdump[pdump_gen & 1] at a burst boundary (double buffer and grace period
 * as the runtime tables). */
struct sbx_pdump_table {
	uint32_t nb;                                 /**< entries used in e[] */
	uint32_t reserved;
	struct sbx_pdump_entry e[SBX_PDUMP_MAX];
};

/** Counters of DPDK's capture requests (primary/pdump.c), for /spanbox/status. */
struct sbx_pdump_stats {
	uint64_t enables, disables; /**< requests done */
	uint64_t refused;           /**< requests answered with an error */
	uint64_t reaped;            /**< captures removed because their client was gone */
	uint64_t late;              /**< changes answered before every worker took them (grace timeout) */
};

/**
 * The maps' classifiers (issue #27, primary/maps.c, docs/MAPS.md): acl, nb_cols and cols are
 * unused since maps change at run time (each generation's are in struct sbx_tables.maps); the
 * rest describes the last build (nb_rules: of the active generation).
 * acl[p] is a struct sbx_mapacl * in rte_malloc memory (the same address in every process; its
 * rte_acl contexts are in DPDK's RTE_ACL tailq, found by name with rte_acl_find_existing) whose
 * categories are the maps with a source on port p, in the order of cols[p]; NULL: no map on p.
 */
/** One port's classifier at the last build of the maps (struct sbx_maps_shm.port). */
struct sbx_maps_port_build {
	uint64_t build_ns; /**< wall time of its contexts' create + add + build (ns) */
	uint64_t memory;   /**< rte_malloc bytes its contexts hold (rules and run-time tries) */
	uint32_t contexts; /**< rte_acl contexts of it (sets x families; empty ones are not built) */
	uint32_t maps;     /**< maps with rules and a source on the port: its categories */
	uint32_t rules;    /**< rules of those maps */
	uint32_t pad;
};

struct sbx_maps_shm {
	void *acl[SBX_MAX_PORTS];
	uint16_t nb_cols[SBX_MAX_PORTS];             /**< maps with a source on port p (<= SBX_MAX_MAPS) */
	uint16_t cols[SBX_MAX_PORTS][SBX_MAX_MAPS];  /**< category c of acl[p]: index into cfg.maps */
	uint32_t nb_rules[SBX_MAX_MAPS];             /**< rules the primary holds for each map */
	uint64_t build_ns;                           /**< wall time of the last build, every port */
	uint64_t memory;                             /**< rte_malloc bytes the contexts hold */
	uint32_t contexts;                           /**< rte_acl contexts built */
	struct sbx_mirror_shm seq[SBX_MAP_COUNTER_SETS]; /**< each map's GRE sequence, by counter set */
	struct sbx_maps_port_build port[SBX_MAX_PORTS]; /**< each port's classifier at the last build
							    (GET /api/v1/system "maps") */
	int64_t built_at_ns;                         /**< CLOCK_REALTIME of the last build (ns), 0 none */
	uint32_t builds;                             /**< builds since start, the one at start included */
	uint64_t counters_bytes;                     /**< rte_malloc bytes of the per-rule counters
							  (maprulectr.h: workers + 1 rows of every rule) */
};

/**
 * Sizes and offsets of the memzone's regions for one config (sbx_shm_layout()): the regions after
 * struct sbx_shm, sized by the config at start (issue #25 "Limits"). The primary writes it into the
 * header (struct sbx_shm.layout) before magic: a reader indexes the regions with these strides and
 * offsets alone (sbx_shm_worker(), sbx_shm_mb_ring()), without the config. Offsets from the
 * memzone's start, each region cache aligned; bytes.
 */
struct sbx_shm_layout {
	uint64_t workers_off;     /**< offset of worker slot 0 */
	uint64_t mb_rings_off;    /**< offset of the microburst ring of worker 0, port 0 */
	uint64_t senders_off;     /**< offset of worker 0's tunnel sender table */
	uint64_t groups_off;      /**< offset of tool group slot 0 (struct sbx_group_shm) */
	uint64_t gstats_off;      /**< offset of worker 0's tool group counters: nb_group_slots x
				       group_members member counters, then as many demands, then
				       nb_group_slots group counters; nb_worker_slots + 1 rows (a spare) */
	uint32_t group_stride;    /**< bytes of one tool group slot (its group_members members) */
	uint32_t gstats_stride;   /**< bytes of one worker's tool group counters (cache aligned) */
	uint32_t nb_group_slots;  /**< tool group slots: 2 x workers.tool_group_capacity.groups */
	uint32_t group_members;   /**< members of each slot: workers.tool_group_capacity.members */
	uint64_t total_size;      /**< bytes of the memzone: struct sbx_shm and its regions */
	uint32_t nb_worker_slots; /**< worker slots (cfg.nb_workers); slot nb_worker_slots is the spare */
	uint32_t mb_nb_ports;     /**< rings per worker (cfg.nb_ports); worker w's row starts at
				       ring w * mb_nb_ports */
	uint32_t mb_nb_rows;      /**< rows of rings: nb_worker_slots, or 1 (a spare row, never
				       written) when microburst is off */
	uint32_t senders_per_worker; /**< slots of each worker's table (workers.tunnel_senders.entries) */
	uint32_t worker_stride;   /**< bytes from one worker slot to the next (sizeof(struct sbx_worker_shm)) */
	uint32_t mb_ring_stride;  /**< bytes of one ring (sizeof(struct sbx_mb_ring)) */
	uint32_t sender_stride;   /**< bytes of one sender slot (sizeof(struct sbx_tunnel_source)) */
};

struct sbx_shm {
	uint64_t magic;          /**< SBX_SHM_MAGIC */
	uint32_t version;        /**< SBX_SHM_VERSION */
	uint32_t size;           /**< sizeof(struct sbx_shm) of the writer */
	int32_t primary_pid;
	uint64_t primary_heartbeat_ns; /**< CLOCK_MONOTONIC ns, written by the primary every 100 ms */
	uint64_t start_realtime_ns;    /**< CLOCK_REALTIME ns of primary start */
	uint64_t tsc_hz;         /**< rte_get_tsc_hz() */
	uint32_t nb_pools;
	struct sbx_pool_shm pools[SBX_MAX_POOLS];
	uint32_t nb_lcores;
	struct sbx_lcore_shm lcores[SBX_MAX_LCORES];
	uint32_t nb_warnings;    /**< entries used in warnings[] (written before running is set) */
	uint32_t warnings_dropped; /**< warnings that did not fit */
	struct sbx_warning warnings[SBX_MAX_WARNINGS];
	struct sbx_config cfg;   /**< the config as parsed at start, never written after: its static
				      sections are those that run; its xconnects and mirrors are those
				      of the start, the live ones are in the active tables (sbx_shm_cfg) */
	struct sbx_worker_rxqs placement[SBX_MAX_WORKERS]; /**< what the primary derived: the RX
							       queues each worker polls */
	struct sbx_port_shm ports[SBX_MAX_PORTS];
	/* the worker slots are a region after this struct, one per configured worker (issue #25:
	 * a config with few workers does not reserve the limit's): sbx_shm_worker() */
	uint32_t nb_standbys;    /**< standby slots in use (cfg.nb_standby) */
	struct sbx_standby_shm standbys[SBX_MAX_STANDBYS];
	struct sbx_upgrade_shm upgrade;
	char upgrade_path[SBX_PATH_LEN]; /**< written by mgmt before it sends SBX_CTL_UPGRADE_WORKERS (one
					      request at a time: its control lane); read by the primary's IPC
					      thread while it handles that request */
	struct sbx_mirror_shm mirrors[SBX_MIRROR_COUNTER_SETS]; /**< indexed by counter set */
	/* the tool group slots are a region after this struct (sbx_shm_group()) */
	struct {
		uint64_t ticks;    /**< health checks run (sbx_groups_tick, every 5 ms while groups exist) */
		uint64_t ns_total; /**< their summed wall time (ns, CLOCK_MONOTONIC) */
		uint64_t ns_max;   /**< the longest one (ns) */
		uint64_t ns_last;  /**< the last one (ns) */
	} group_check;           /**< what the primary's tool group health check costs (issue #25: it
				      reads every member's counters of every worker); /status */
	uint64_t event_seq;      /**< events written so far */
	struct sbx_event events[SBX_EVENTS];
	/* read by every worker every loop, written by the primary at a change or at start/stop:
	 * alone on their cache line, so nothing else the primary writes (events, heartbeat) evicts
	 * it from the workers' caches */
	struct {
		/** runtime tables: tables[tables_gen & 1] is the active buffer (docs/RUNTIME_TABLES.md);
		 *  bumped (release) by the primary after writing the inactive buffer */
		uint64_t tables_gen;
		uint32_t running; /**< 1 while the primary runs; 0 once it is shutting down */
		uint32_t reserved0;
		/** capture table of DPDK's tools: pdump[pdump_gen & 1] is active (primary/pdump.c) */
		uint64_t pdump_gen;
	} __rte_cache_aligned;
	uint64_t tables_applied_ns __rte_cache_aligned; /**< CLOCK_REALTIME of the last change, 0 = as started */
	char config_path[SBX_PATH_LEN]; /**< realpath of the config file the primary runs: the key of
					     the stored config (mgmt's config_store rows), "" if too long */
	int32_t mgmt_pid;        /**< written by mgmt: its pid while attached, 0 once it left (the
				      primary frees the memzone only after that, or a timeout) */
	struct sbx_tables tables[2];
	struct sbx_tables_staging staging;
	struct sbx_capture_shm captures[SBX_CAPTURE_SLOTS]; /**< the recorder's slots (primary/recorder.c) */
	struct sbx_pdump_table pdump[2]; /**< captures of dpdk-dumpcap / dpdk-pdump (see pdump_gen) */
	struct sbx_pdump_stats pdump_stats;
	/* microbursts (microburst.h): what the primary sums per port, and each worker's ring per port
	 * (written by the worker of the slot, read by the primary) */
	struct sbx_mb_port_shm microburst[SBX_MAX_PORTS];
	/* (the rings per worker and port are a region after this struct: sbx_shm_mb_ring()) */
	struct sbx_flows_shm flows; /**< the flow exporter (primary/flowexport.c) */
	struct sbx_maps_shm maps;   /**< the maps' classifiers (primary/maps.c), static */
	/* the regions after this struct, sized by the config at start: where they are */
	struct sbx_shm_layout layout; /**< written by the primary before magic (sbx_shm_layout()) */
};

/**
 * The layout of the memzone for @p nb_workers worker slots, @p mb_ports ports with microburst rings
 * (the config's ports; 0 when microburst is off: one spare ring then, never written), @p nb_senders
 * tunnel senders a worker follows (workers.tunnel_senders.entries) and a tool group capacity of
 * @p tg_groups groups of @p tg_members members (workers.tool_group_capacity): struct sbx_shm, then
 * nb_workers + 1 worker slots (the last one is the spare: sbx_shm_worker() of an index past the
 * slots), then nb_workers rows of mb_ports microburst rings (one ring without microburst), then nb_workers tables of nb_senders
 * tunnel sender slots (struct sbx_tunnel_source), then 2 x tg_groups tool group slots of
 * tg_members members, then nb_workers + 1 rows of tool group counters (slots x members member
 * counters and demands, slots group counters; the last row is the spare), each region and row
 * cache aligned.
 * Pure arithmetic (no DPDK call; inline, so that tools/shm_sizes.c needs no library). Bytes.
 */
static inline void sbx_shm_layout(uint32_t nb_workers, uint32_t mb_ports, uint32_t nb_senders, uint32_t tg_groups,
				  uint32_t tg_members, struct sbx_shm_layout *l)
{
	uint64_t off = RTE_ALIGN_CEIL((uint64_t)sizeof(struct sbx_shm), RTE_CACHE_LINE_SIZE);
	uint64_t cells;

	l->nb_worker_slots = nb_workers;
	l->worker_stride = sizeof(struct sbx_worker_shm);
	l->mb_ring_stride = sizeof(struct sbx_mb_ring);
	l->sender_stride = sizeof(struct sbx_tunnel_source);
	l->mb_nb_ports = mb_ports ? mb_ports : 1;
	l->workers_off = off;
	off += (uint64_t)(nb_workers + 1) * sizeof(struct sbx_worker_shm); /* + the spare */
	off = RTE_ALIGN_CEIL(off, RTE_CACHE_LINE_SIZE);
	l->mb_rings_off = off;
	l->mb_nb_rows = nb_workers && mb_ports ? nb_workers : 1;
	off += (uint64_t)l->mb_nb_rows * l->mb_nb_ports * sizeof(struct sbx_mb_ring);
	off = RTE_ALIGN_CEIL(off, RTE_CACHE_LINE_SIZE);
	l->senders_per_worker = nb_senders ? nb_senders : 1;
	l->senders_off = off;
	off += (uint64_t)(nb_workers ? nb_workers : 1) * l->senders_per_worker * sizeof(struct sbx_tunnel_source);
	off = RTE_ALIGN_CEIL(off, RTE_CACHE_LINE_SIZE);
	l->nb_group_slots = 2 * (tg_groups ? tg_groups : 1);
	l->group_members = tg_members ? tg_members : 1;
	l->group_stride = (uint32_t)RTE_ALIGN_CEIL(sizeof(struct sbx_group_shm) +
							   l->group_members * sizeof(struct sbx_group_member_shm),
						   RTE_CACHE_LINE_SIZE);
	l->groups_off = off;
	off += (uint64_t)l->nb_group_slots * l->group_stride;
	off = RTE_ALIGN_CEIL(off, RTE_CACHE_LINE_SIZE);
	cells = (uint64_t)l->nb_group_slots * l->group_members;
	l->gstats_stride = (uint32_t)RTE_ALIGN_CEIL(cells * (sizeof(struct sbx_group_member_counters) +
							     sizeof(struct sbx_group_demand)) +
							    l->nb_group_slots * sizeof(struct sbx_group_counters),
						    RTE_CACHE_LINE_SIZE);
	l->gstats_off = off;
	off += (uint64_t)(nb_workers + 1) * l->gstats_stride; /* + the spare */
	l->total_size = RTE_ALIGN_CEIL(off, RTE_CACHE_LINE_SIZE);
}


/** Worker slot @p w of @p shm (mutable); an index >= nb_worker_slots gives the spare slot. */
static inline struct sbx_worker_shm *sbx_shm_worker_mut(const struct sbx_shm *shm, uint32_t w)
{
	if (w > shm->layout.nb_worker_slots)
		w = shm->layout.nb_worker_slots;
	return (struct sbx_worker_shm *)(uintptr_t)((const char *)shm + shm->layout.workers_off +
						    (uint64_t)w * shm->layout.worker_stride);
}

/**
 * Worker slot @p w (0 .. nb_worker_slots - 1) of the memzone @p shm, const when @p shm is. An
 * index past the configured workers gives the spare slot, zeroed at start and never run: a reader
 * that loops up to a limit reads zeros there, never past the memzone.
 */
#define sbx_shm_worker(shm, w)                                                                     \
	_Generic((shm), const struct sbx_shm *: (const struct sbx_worker_shm *)sbx_shm_worker_mut(   \
				(shm), (uint32_t)(w)),                                              \
		 default: sbx_shm_worker_mut((shm), (uint32_t)(w)))

/** The microburst ring worker @p w (< mb_nb_rows) writes for port @p p (< mb_nb_ports)
 *  (struct sbx_mb_ring, microburst.h); an index out of range is clamped to the last row or ring
 *  (never past the memzone; every caller loops over the config's workers and ports). */
static inline struct sbx_mb_ring *sbx_shm_mb_ring(const struct sbx_shm *shm, uint32_t w, uint32_t p)
{
	if (w >= shm->layout.mb_nb_rows)
		w = shm->layout.mb_nb_rows ? shm->layout.mb_nb_rows - 1 : 0;
	if (p >= shm->layout.mb_nb_ports)
		p = shm->layout.mb_nb_ports - 1;
	return (struct sbx_mb_ring *)(uintptr_t)((const char *)shm + shm->layout.mb_rings_off +
						 ((uint64_t)w * shm->layout.mb_nb_ports + p) * shm->layout.mb_ring_stride);
}

/**
 * The tunnel sender table of worker @p w (< nb_worker_slots): senders_per_worker slots
 * (workers.tunnel_senders.entries), written by that worker only (secondary/ingress.c, the slot
 * protocol of struct sbx_tunnel_source), read by mgmt and the replay report. A successor in the
 * slot keeps its predecessor's senders. An index out of range is clamped to the last table.
 */
static inline struct sbx_tunnel_source *sbx_shm_senders(const struct sbx_shm *shm, uint32_t w)
{
	if (w >= shm->layout.nb_worker_slots)
		w = shm->layout.nb_worker_slots ? shm->layout.nb_worker_slots - 1 : 0;
	return (struct sbx_tunnel_source *)(uintptr_t)((const char *)shm + shm->layout.senders_off +
						       (uint64_t)w * shm->layout.senders_per_worker * shm->layout.sender_stride);
}

/**
 * Tool group slot @p slot (< nb_group_slots) of @p shm: its bucket table and its group_members
 * members' health (written by the primary, primary/toolgroups.c). An index out of range is
 * clamped to the last slot (never past the memzone).
 */
static inline struct sbx_group_shm *sbx_shm_group(const struct sbx_shm *shm, uint32_t slot)
{
	if (slot >= shm->layout.nb_group_slots)
		slot = shm->layout.nb_group_slots ? shm->layout.nb_group_slots - 1 : 0;
	return (struct sbx_group_shm *)(uintptr_t)((const char *)shm + shm->layout.groups_off +
						   (uint64_t)slot * shm->layout.group_stride);
}

/* the row of worker @p w's tool group counters; past the workers: the spare row (zeroes) */
static inline char *sbx_shm_gstats_row_(const struct sbx_shm *shm, uint32_t w)
{
	if (w > shm->layout.nb_worker_slots)
		w = shm->layout.nb_worker_slots;
	return (char *)(uintptr_t)((const char *)shm + shm->layout.gstats_off + (uint64_t)w * shm->layout.gstats_stride);
}

/* the cell of (@p slot, @p k), each index clamped to the capacity */
static inline uint64_t sbx_shm_gcell_(const struct sbx_shm *shm, uint32_t slot, uint32_t k)
{
	if (slot >= shm->layout.nb_group_slots)
		slot = shm->layout.nb_group_slots ? shm->layout.nb_group_slots - 1 : 0;
	if (k >= shm->layout.group_members)
		k = shm->layout.group_members ? shm->layout.group_members - 1 : 0;
	return (uint64_t)slot * shm->layout.group_members + k;
}

/**
 * Worker @p w's counters of member @p k of tool group slot @p slot (written by that worker only,
 * secondary/toolgroup.c; summed by mgmt). A worker index past the workers gives the spare row
 * (zeroes); slot and member are clamped to the capacity.
 */
static inline struct sbx_group_member_counters *sbx_shm_group_member(const struct sbx_shm *shm, uint32_t w,
								     uint32_t slot, uint32_t k)
{
	return (struct sbx_group_member_counters *)(void *)sbx_shm_gstats_row_(shm, w) + sbx_shm_gcell_(shm, slot, k);
}

/** Worker @p w's demand of member @p k of slot @p slot (struct sbx_group_demand; as sbx_shm_group_member()). */
static inline struct sbx_group_demand *sbx_shm_group_demand(const struct sbx_shm *shm, uint32_t w, uint32_t slot,
							    uint32_t k)
{
	uint64_t cells = (uint64_t)shm->layout.nb_group_slots * shm->layout.group_members;

	return (struct sbx_group_demand *)(void *)(sbx_shm_gstats_row_(shm, w) +
						   cells * sizeof(struct sbx_group_member_counters)) +
	       sbx_shm_gcell_(shm, slot, k);
}

/** Worker @p w's group counters of slot @p slot (struct sbx_group_counters; as sbx_shm_group_member()). */
static inline struct sbx_group_counters *sbx_shm_group_ctr(const struct sbx_shm *shm, uint32_t w, uint32_t slot)
{
	uint64_t cells = (uint64_t)shm->layout.nb_group_slots * shm->layout.group_members;

	if (slot >= shm->layout.nb_group_slots)
		slot = shm->layout.nb_group_slots ? shm->layout.nb_group_slots - 1 : 0;
	return (struct sbx_group_counters *)(void *)(sbx_shm_gstats_row_(shm, w) +
						     cells * (sizeof(struct sbx_group_member_counters) +
							      sizeof(struct sbx_group_demand))) +
	       slot;
}

/* The layout the comments above promise. */
_Static_assert(offsetof(struct sbx_shm, tables_gen) % RTE_CACHE_LINE_SIZE == 0, "tables_gen starts a cache line");
_Static_assert(offsetof(struct sbx_shm, tables_applied_ns) - offsetof(struct sbx_shm, tables_gen) ==
		       RTE_CACHE_LINE_SIZE, "tables_gen and running alone on their line");
_Static_assert(offsetof(struct sbx_worker_stats, busy_cycles) % RTE_CACHE_LINE_SIZE == 0 &&
		       offsetof(struct sbx_worker_stats, busy_cycles) >= RTE_CACHE_LINE_SIZE,
	       "the heartbeat line holds no per-burst counter");
_Static_assert(sizeof(struct sbx_worker_shm) % RTE_CACHE_LINE_SIZE == 0,
	       "each worker's slot on cache lines of its own (sbx_shm_layout() aligns the region)");
_Static_assert(sizeof(struct sbx_mirror_shm) == RTE_CACHE_LINE_SIZE, "one sequence counter a line");
_Static_assert(sizeof(((struct sbx_worker_stats *)0)->burst) / sizeof(struct rte_mbuf *) == SBX_MAX_BURST,
	       "the burst array holds the largest workers.burst");
_Static_assert(SBX_MIRROR_COUNTER_SETS <= UINT8_MAX, "counter sets fit struct sbx_tables.cset");
_Static_assert(SBX_MAP_COUNTER_SETS < UINT16_MAX, "map counter sets fit struct sbx_tables.mcset (UINT16_MAX: none)");
_Static_assert(SBX_MAX_MAPS <= UINT16_MAX, "maps fit struct sbx_maps_acl.cols and nb_cols");
_Static_assert(SBX_GROUP_SLOTS < UINT8_MAX && SBX_MAX_GROUP_MEMBERS < SBX_GROUP_NO_MEMBER,
	       "slots fit struct sbx_tables.gslot, member indexes a bucket");

/**
 * The active runtime tables. A worker reads them only when tables_gen changed (and reports
 * quiescent states to the primary's rte_rcu_qsbr); mgmt, which is not an RCU reader, may see a
 * buffer being rewritten if it keeps the pointer across a change: take it anew for each request.
 */
static inline const struct sbx_tables *sbx_shm_tables(const struct sbx_shm *shm)
{
	return &shm->tables[__atomic_load_n(&shm->tables_gen, __ATOMIC_ACQUIRE) & 1];
}

/** The running config: static sections of the start, xconnects and mirrors of the active tables. */
static inline const struct sbx_config *sbx_shm_cfg(const struct sbx_shm *shm)
{
	return &sbx_shm_tables(shm)->cfg;
}

/**
 * Look up the memzone and check magic, version and size.
 * For secondaries (workers, mgmt) after rte_eal_init().
 * @return the memzone, or NULL with a message in @p err.
 */
struct sbx_shm *sbx_shm_attach(char *err, size_t errlen);

/** @return CLOCK_MONOTONIC in ns. */
uint64_t sbx_now_ns(void);

/** @return CLOCK_REALTIME in ns. */
uint64_t sbx_realtime_ns(void);

/** The name of the pool used on socket @p socket_id, written into @p buf. */
void sbx_pool_name(int socket_id, char *buf, size_t len);

/** The name of the indirect-mbuf pool (struct sbx_ind_pool_shm) on socket @p socket_id, into @p buf. */
void sbx_pool_ind_name(int socket_id, char *buf, size_t len);

/**
 * DPDK's runtime directory of file prefix @p prefix (/var/run/dpdk/PREFIX, or
 * $XDG_RUNTIME_DIR/dpdk/PREFIX when not root, as eal_create_runtime_dir()), into @p buf.
 */
void sbx_runtime_dir(const char *prefix, char *buf, size_t len);

/**
 * Path of the "attachable" marker of file prefix @p prefix, in DPDK's runtime directory
 * (/var/run/dpdk/PREFIX, or $XDG_RUNTIME_DIR/dpdk/PREFIX when not root).
 *
 * Why: a DPDK secondary that runs rte_eal_init() while a primary of the same prefix is still in
 * its own rte_eal_init() can attach to the previous primary's stale runtime files and hold a lock
 * on them (fbarray_memzone), and the primary then fails with "Cannot allocate memzone list". The
 * primary removes the marker before its EAL starts and writes its pid into it once the memzone is
 * published and the ports and pools exist; mgmt attaches only while the marker names a live
 * process.
 */
void sbx_attach_marker_path(const char *prefix, char *buf, size_t len);

/** @return the pid in @p prefix's attachable marker, 0 when there is none (or it is unreadable). */
int sbx_attach_marker_pid(const char *prefix);

#endif
