/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file mirror.h
 * The mirror engine of one worker: SPAN, RSPAN, ERSPAN II/III copies of the frames of its source
 * ports, made with a size-aware strategy and sent on the worker's own mirror TX queue of each
 * destination port. Mirroring never delays or drops forwarded traffic: a copy that cannot be made
 * or sent is counted and freed, the forwarded frame is untouched (nobody writes to a shared buffer).
 */
#ifndef SPANBOX_MIRROR_H
#define SPANBOX_MIRROR_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_bpf.h>
#include <rte_mbuf.h>

#include "spanbox/shm.h"
#include "spanbox/timestamp.h"
#include "queue.h"
#include "toolgroup.h"

#define SBX_MIRROR_TXBUF (2 * SBX_MAX_BURST) /**< mirror copies a session buffers: two bursts of the
						largest size (a TX-mirrored burst may follow an RX one) */


/** One session as this worker runs it. */
struct sbx_mirror_rt {
	const struct sbx_mirror_cfg *cfg;
	struct sbx_mirror_counters *st;  /**< this worker's counters for the session (in shm) */
	uint64_t *seq_shared;            /**< shm->mirrors[cset].seq_next: numbers copies when sent */
	struct rte_bpf *bpf;             /**< compiled filter, NULL = every frame */
	uint64_t (*jit)(void *);         /**< its JIT-compiled code, NULL when only interpretable */
	struct sbx_queue dst;            /**< this worker's mirror TX queue on the destination port */
	struct sbx_toolgroup_rt *grp;    /**< destination {"group"}: its members (e->grp[i]), else NULL */
	uint8_t src_mac[6];              /**< outer source MAC */
	uint8_t outer_tmpl[64];          /**< Ethernet + IP header of every copy (ERSPAN), patched per copy */
	uint8_t outer_len;               /**< 34 (IPv4) or 54 (IPv6) */
	uint16_t mtu;                    /**< MTU of the destination (bytes of L3 payload; a group: its
					      smallest member's) the copies must fit, 0 = no limit
					      (docs/MIRRORING.md "Copies and the destination's MTU") */
	uint32_t sample_left;            /**< frames to skip before the next mirrored one */
	uint16_t ntx;                    /**< copies waiting in txbuf */
	uint16_t burst_start;            /**< first txbuf entry of the burst being prepared */
	struct rte_mbuf *txbuf[SBX_MIRROR_TXBUF];
	uint16_t src_idx[SBX_MIRROR_TXBUF]; /**< index of the original frame in its burst */
	/* a capture (destination recorder, capture.h): NULL rec_ring for a mirror session */
	struct rte_ring *rec_ring;       /**< the capture's ring to the recorder (NULL: not a capture) */
	struct rte_mempool *rec_mp;      /**< the capture pool its pcapng copies come from */
	const volatile uint32_t *rec_ended; /**< its slot's `ended` flag: set, it copies nothing */
};

/** Every session of one worker, and which sessions watch each port and direction. */
struct sbx_mirror_engine {
	uint16_t nb;
	struct sbx_mirror_rt s[SBX_MAX_MIRRORS + SBX_MAX_MAPS]; /**< the mirrors', then the maps' (map_first) */
	struct sbx_toolgroup_rt grp[SBX_MAX_MIRRORS + SBX_MAX_MAPS]; /**< the tool group of session i, when it has one */
	uint8_t nb_rx[SBX_MAX_PORTS], nb_tx[SBX_MAX_PORTS];
	uint8_t rx[SBX_MAX_PORTS][SBX_MAX_MIRRORS]; /**< session indexes mirroring RX of a port */
	uint8_t tx[SBX_MAX_PORTS][SBX_MAX_MIRRORS]; /**< session indexes mirroring TX of a port */
	struct rte_mempool *mp;          /**< pool for copies and header mbufs (the socket's pktmbuf pool) */
	struct rte_mempool *mp_ind;      /**< pool for the indirect mbufs of shares (the socket's
					      indirect-mbuf pool, struct sbx_ind_pool_shm; NULL when
					      there is none: then e->mp's mbufs serve) */
	uint64_t tsc_hz;                 /**< DPDK's nominal TSC rate (Hz): tsclk's first 10 ms */
	uint64_t dst_wait_cycles;        /**< TSC cycles a copy may wait for room in a pcap
					      destination's ring: 1 s in a replay (every port a pcap
					      file), else 0 (never delay forwarding) */
	uint16_t ip_id;                  /**< outer IPv4 identification */
	unsigned int worker;
	/* the flow hashes of the burst being prepared (tool groups): frame i's hash with fields f
	 * (enum sbx_flow_hash_fields) is fh[f][i] when fh_gen[f][i] == gen; gen moves on with every
	 * sbx_mirror_prepare() but one that follows sbx_mirror_same_burst(), so that a frame copied
	 * by several sessions, or on RX of one port and TX of its peer, is hashed once */
	uint64_t gen;                    /**< the burst being prepared (0 before the first) */
	bool same_burst;                 /**< the next sbx_mirror_prepare() keeps gen */
	bool fh_shared;                  /**< some frame is hashed by two sessions or directions to
					      groups: the hashes are kept in fh (else hashed straight) */
	uint64_t fh_gen[2][SBX_MAX_BURST];
	uint32_t fh[2][SBX_MAX_BURST];
	struct sbx_mb_worker *mb;        /**< the worker's microburst windows: copies sent count as TX of
					      their destination port (set by the worker after each
					      sbx_mirror_setup(); NULL: not counted) */
	/* the time on copies: AVSP / Metamako timestamps (sessions with timestamp.format, issue #26)
	 * and ERSPAN III's header timestamp, both from one clock */
	uint16_t nb_ts;                  /**< sessions that carry a time (timestamp.format, or ERSPAN
					      III): 0, the clock is not read */
	uint64_t ts_ns;                  /**< CLOCK_REALTIME ns of the burst being copied (tsclk) */
	struct sbx_ts_clock tsclk;       /**< TSC -> CLOCK_REALTIME, re-read every SBX_TS_RESYNC_MS;
					      kept over sbx_mirror_setup() (monotonic across table
					      changes): the engine must be zeroed before its first setup */
	/* maps (issue #27, docs/MAPS.md): map j of cfg.maps is session s[map_first + j] */
	uint16_t map_first;              /**< session index of map 0 (= the number of mirrors) */
	uint16_t nb_maps;
	uint16_t nb_map_rx[SBX_MAX_PORTS], nb_map_tx[SBX_MAX_PORTS];
	uint16_t map_rx[SBX_MAX_PORTS][SBX_MAX_MAPS]; /**< map indexes watching RX of a port */
	uint16_t map_tx[SBX_MAX_PORTS][SBX_MAX_MAPS]; /**< map indexes watching TX of a port */
	struct sbx_map_counters *map_st[SBX_MAX_MAPS]; /**< this worker's counters of map j (shm, its counter set) */
};

/**
 * Set up the engine of worker @p worker for the sessions of runtime tables @p t: compile filters
 * (pcap_compile + rte_bpf_convert + rte_bpf_load), look up destination queues (queue
 * sbx_mirror_txq(), or its ring); session i counts in counter set t->cset[i] of the memzone.
 * The engine keeps pointers into @p t: set it up again before @p t can be rewritten.
 * @return 0, or -1 with "mirrors[i]...: reason" in @p err (the engine then mirrors nothing).
 */
int sbx_mirror_setup(struct sbx_mirror_engine *e, struct sbx_shm *shm, const struct sbx_tables *t,
		     unsigned int worker, char *err, size_t errlen);

/**
 * Fill the parts of session @p rt that come from its config @p mc alone (no filter, no queue):
 * @p mc itself (kept by pointer: it must outlive the session), the counters @p st and the shared
 * GRE sequence counter @p seq_shared it updates (both kept by pointer, not owned), the outer
 * source MAC (mc->src_mac, else @p port_mac: 6 bytes, copied) and, for ERSPAN, the outer header
 * template. sbx_mirror_setup() calls it for every session; calibrate.c for its measured one.
 */
void sbx_mirror_session_init(struct sbx_mirror_rt *rt, const struct sbx_mirror_cfg *mc, const uint8_t *port_mac,
			     struct sbx_mirror_counters *st, uint64_t *seq_shared);

/**
 * Make one mirror copy of frame @p m (only read, never written) seen on @p dir of port @p port,
 * as sbx_mirror_prepare() makes every copy: header of the session's encapsulation (ERSPAN with
 * GRE sequence 0: numbered when sent), frame cut at the snaplen, deep copy or shared (indirect
 * mbuf behind a header mbuf) by size and copy strategy; counts copied/shared/truncated in rt->st.
 * @p now_ns is CLOCK_REALTIME ns for the ERSPAN III timestamp. Needs e->mp (copies and headers come
 * from it), e->mp_ind (the indirect mbufs of shares; NULL: from e->mp) and e->ip_id; no filter, sampling or queue. sbx_mirror_copy_burst() of one frame. Exposed for
 * spanbox-worker --calibrate --cross-core and the tests.
 * @return the copy (the caller owns it), or NULL counted in drop_nombuf or drop_malformed.
 */
struct rte_mbuf *sbx_mirror_copy_one(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt, struct rte_mbuf *m,
				     uint16_t port, uint8_t dir, uint64_t now_ns);

/**
 * Make the mirror copies of session @p rt of @p n frames seen on @p dir of port @p port, the way
 * sbx_mirror_prepare() makes a burst's copies once filter and sampling chose the frames
 * @p pkts[0..n-1] (n <= SBX_MAX_BURST; only read). Each copy is
 * made as sbx_mirror_copy_one() says; the mbufs of all one-mbuf copies and share headers come
 * from one rte_pktmbuf_alloc_bulk() of e->mp, the indirect mbufs of one-segment shares from one of
 * e->mp_ind, or, when a pool cannot give them all, one at a time for as many as it has (the copies
 * of the first frames are made, the others counted in drop_nombuf; nothing is kept back). The ERSPAN header is built once for the call (@p now_ns: CLOCK_REALTIME ns
 * of the ERSPAN III timestamp, and of a session's timestamp.format). For a session to a tool group (rt->grp) each copy is tagged with
 * its frame's bucket in hash.usr (toolgroup.h), the frames hashed anew (not the hashes of the
 * burst sbx_mirror_prepare() last had).
 * @return number of copies, in @p out (the caller owns them; room for @p n), with in @p out_idx
 * (room for @p n) the index into @p pkts of the frame each copy is of. Exposed for spanbox-worker --calibrate.
 */
uint16_t sbx_mirror_copy_burst(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt, struct rte_mbuf **pkts,
			       uint16_t n, uint16_t port, uint8_t dir, uint64_t now_ns, struct rte_mbuf **out,
			       uint16_t *out_idx);

/** Release filters and free buffered copies; the engine then has no session. */
void sbx_mirror_teardown(struct sbx_mirror_engine *e);

/**
 * Make mirror copies of @p n frames received on (dir SBX_DIR_RX) or about to be sent from
 * (SBX_DIR_TX) port @p port. The frames are only read; copies are buffered per session.
 * For TX, call sbx_mirror_commit_tx() after the TX burst with the number the PMD accepted.
 */
void sbx_mirror_prepare(struct sbx_mirror_engine *e, uint16_t port, uint8_t dir, struct rte_mbuf **pkts, uint16_t n);

/**
 * sbx_mirror_prepare, and with @p taken non-NULL: taken[i] = 1 when a mirror session whose index
 * (cfg.mirrors) is in @p take_mask took frame i (its filter and sampling passed it): the frames
 * flows.sessions meters (docs/FLOWS.md "Selected by sessions"). taken[] is only set, never cleared.
 */
void sbx_mirror_prepare_sel(struct sbx_mirror_engine *e, uint16_t port, uint8_t dir, struct rte_mbuf **pkts,
			    uint16_t n, uint64_t take_mask, uint8_t *taken);

/**
 * Say that the next sbx_mirror_prepare() of @p e is given the very frames of the last one (the same
 * array, unchanged: the TX side of the burst whose RX side was just prepared), so that it reuses
 * the flow hashes the last one computed. Without this call every sbx_mirror_prepare() hashes anew.
 */
static inline void sbx_mirror_same_burst(struct sbx_mirror_engine *e)
{
	e->same_burst = true;
}

/**
 * Keep the copies of the first @p sent frames prepared for TX of @p port, free the others
 * (frames the TX queue refused were never on the wire, so they are not mirrored).
 */
void sbx_mirror_commit_tx(struct sbx_mirror_engine *e, uint16_t port, uint16_t sent);

/**
 * Send every buffered copy, numbering ERSPAN copies (GRE sequence) as they go; what a destination
 * refuses is freed and counted in drop_txfull (its number is then missing on the wire). In a
 * replay a pcap destination's full ring is waited for (dst_wait_cycles) instead.
 */
void sbx_mirror_flush(struct sbx_mirror_engine *e);

/**
 * Make the copies of the maps watching @p dir of port @p port of @p n frames (only read): frame i
 * goes to map j when map j is in @p sets[i] (secondary/maps_stage.c: its rules passed it, or it is
 * a collector no other map took), then through the map's filter and sampling, and is copied as its
 * session says (sbx_mirror_prepare); counts each map's passed frames. Only the maps of @p any (the
 * union of the sets, sbx_maps_stage_burst) are visited, word by word: a burst no map takes costs
 * no per-map work. For TX, the copies are kept or freed by sbx_mirror_commit_tx() as a mirror
 * session's. With @p taken non-NULL, taken[i] = 1 when a map j in @p take_mask took frame i (its
 * rules, filter and sampling): what flows.sessions meters. taken[] is only set, never cleared.
 */
void sbx_mirror_prepare_maps(struct sbx_mirror_engine *e, uint16_t port, uint8_t dir, struct rte_mbuf **pkts,
			     uint16_t n, const struct sbx_mapset *sets, const struct sbx_mapset *any,
			     const struct sbx_mapset *take_mask, uint8_t *taken);

/** @return true when any session watches @p dir of @p port. */
static inline bool sbx_mirror_watches(const struct sbx_mirror_engine *e, uint16_t port, uint8_t dir)
{
	return dir == SBX_DIR_RX ? e->nb_rx[port] != 0 : e->nb_tx[port] != 0;
}

#endif
