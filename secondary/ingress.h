/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file ingress.h
 * The worker's ingress stage (docs/INGRESS.md): between RX and everything else, for the ports
 * whose config has an "ingress" object. A burst in, a compacted burst out: tunnels terminated
 * (decap, in the same mbuf: the data offset moves, nothing is copied), tags and labels stripped,
 * one tag pushed, duplicates recognised. Forwarding and the mirror sessions see only what comes
 * out. The byte-level work is shared/decap.c, shared/ingress.c and shared/dedup.c; this file moves
 * mbuf offsets and counts, in the worker's slot (struct sbx_worker_stats: port counters of
 * include/spanbox/counters.h and struct sbx_ingress_stats).
 */
#ifndef SPANBOX_SECONDARY_INGRESS_H
#define SPANBOX_SECONDARY_INGRESS_H

#include <stdint.h>

#include <rte_ip_frag.h>
#include <rte_mbuf.h>

#include "spanbox/decap.h"
#include "spanbox/ingress.h"
#include "spanbox/shm.h"

/** One worker's view of the ingress stages of the active runtime tables. */
struct sbx_ingress_engine {
	const struct sbx_ingress_cfg *cfg[SBX_MAX_PORTS]; /**< per input port, NULL = no stage (the
							       active tables' cfg: valid while online) */
	uint64_t window[SBX_MAX_PORTS];                   /**< dedup window per port, TSC cycles */
	struct sbx_dedup_table *dedup;                    /**< this worker's table (all ports), or NULL */
	void *dedup_mem;                                  /**< rte_malloc'd memory of the table */
	uint32_t dedup_entries;                           /**< its size in entries */
	struct sbx_worker_stats *st;                      /**< this worker's counters */
	/** the decap rules the per-rule counters (sbx_ingress_stats.rule_pkts) count for, per port: a
	 *  port whose rules change gets its rule counters zeroed, so that no count moves to another rule */
	struct sbx_decap_rule rules[SBX_MAX_PORTS][SBX_MAX_DECAP_RULES];
	uint8_t nb_rules[SBX_MAX_PORTS]; /**< entries used in rules[port] */
	bool rules_known;                /**< rules[] hold the last tables' (false before the first setup) */
	struct sbx_sender_table senders; /**< the tunnel senders this worker follows (slots: src) */
	struct sbx_tunnel_source *src;   /**< this worker's sender slots in the memzone (sbx_shm_senders()),
					      set before the first sbx_ingress_setup() */
	uint32_t nb_src;                 /**< slots at src (shm->layout.senders_per_worker) */
	uint64_t idle_ns;                /**< workers.tunnel_senders.idle_s, ns */
	uint64_t next_age_ns;            /**< CLOCK_REALTIME ns of the next look for idle senders */
	/** per input port with decap rules: the reassembly table of its outer fragments (rte_ip_frag,
	 *  SBX_REASM_FLOWS datagrams in progress, SBX_REASM_TIMEOUT_MS), NULL elsewhere */
	struct rte_ip_frag_tbl *frag[SBX_MAX_PORTS];
	uint64_t frag_timeout;           /**< SBX_REASM_TIMEOUT_MS in TSC cycles */
	/** mbufs a table gave up on, freed (and counted on their port) after each call that fills it */
	struct rte_ip_frag_death_row dr;
};

/* rte_ip_frag keeps what SBX_REASM_MAX_FRAGS says (the pool plan counts with it) */
_Static_assert(SBX_REASM_MAX_FRAGS == RTE_LIBRTE_IP_FRAG_MAX_FRAG, "SBX_REASM_MAX_FRAGS");

/**
 * Take the ingress config of tables @p t for worker stats @p st: ports without an ingress object get
 * no stage; a dedup table (the largest dedup.entries of any port) is allocated on the caller's
 * socket, or kept with its entries when it already has that size (emptied only when allocated
 * again). The per-rule counters of a port whose decap rules differ from the previous tables' are
 * zeroed, and its tunnel senders dropped (not at the first call: a restarted worker keeps the counts
 * and the senders of its slot). The first call takes the sender table (workers.tunnel_senders).
 * @return 0, or -1 with the reason in @p err (no memory for the table: the ports keep their other
 *         stages, dedup is off).
 */
int sbx_ingress_setup(struct sbx_ingress_engine *ig, const struct sbx_tables *t, struct sbx_worker_stats *st,
		      char *err, size_t errlen);

/**
 * Drop the tunnel senders idle for workers.tunnel_senders.idle_s or longer (counted per port in
 * tunnel_senders_expired). Looks at most once a second, whatever the calls: the worker calls it
 * every 100 ms, idle or not. @p now_ns: CLOCK_REALTIME ns.
 */
void sbx_ingress_age(struct sbx_ingress_engine *ig, uint64_t now_ns);

/** Free what sbx_ingress_setup() allocated; the fragments the reassembly tables hold are freed
 *  and counted as dropped (decap_malformed_ip_fragment, drop_packets) on their port. */
void sbx_ingress_teardown(struct sbx_ingress_engine *ig);

/**
 * Drop the datagrams whose fragments waited longer than SBX_REASM_TIMEOUT_MS at TSC @p now (counted
 * as above). The worker calls it every heartbeat (10 ms), traffic or not, so that an idle port
 * holds no mbuf for longer than the timeout.
 */
void sbx_ingress_tick(struct sbx_ingress_engine *ig, uint64_t now);

/** @return true when input port @p port has an ingress stage. */
static inline bool sbx_ingress_active(const struct sbx_ingress_engine *ig, uint16_t port)
{
	return ig->cfg[port] != NULL;
}

/**
 * Run the ingress stages of input port @p port on the @p n frames of @p pkts (well-formed chains
 * of at least 14 bytes: the worker's checks ran first). Frames that go on are written to @p out in
 * order (changed in place: data offset, length, header bytes; never a shared buffer); frames the
 * stage drops go to @p drop (*nb_drop of them), counted on the port (drop_packets, drop_bytes and
 * their reason). Ownership: the caller frees @p drop once the burst is no longer recoverable by
 * the primary (struct sbx_worker_stats.held = 0), so that a crash in between frees nothing twice.
 * Outer fragments of GRE or UDP that a decap rule of the port could concern are handed to the
 * port's reassembly table (they leave the burst: neither in @p out nor in @p drop; the stage sets
 * held = 0 before the first one goes, as a crash after it would leave a chain the burst array
 * does not describe); a datagram they complete comes out in @p out in the place of the fragment
 * that completed it, and goes through the stage like any frame.
 * @param now  the TSC of this burst (dedup window).
 * @param out_bytes  receives the bytes of the frames in @p out.
 * @return the number of frames in @p out.
 */
uint16_t sbx_ingress_burst(struct sbx_ingress_engine *ig, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
			   struct rte_mbuf **out, struct rte_mbuf **drop, uint16_t *nb_drop, uint64_t now,
			   uint64_t *out_bytes);

#endif
