/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file toolgroup.h
 * The data plane of a tool group in a worker (docs/CONFIG.md "tool_groups"): which member each
 * mirror copy of a session with a group destination goes to (symmetric flow hash of the frame as
 * the worker holds it after its ingress stages, one of SBX_GROUP_BUCKETS buckets, the bucket's
 * member in the primary's bucket table), the members' token-bucket rate limits (this worker's
 * share), and the per-member counters in the worker's slot. The mirror engine (mirror.c) tags each
 * copy with its bucket in copy->hash.usr in the pass that makes it (the frame's hash computed once
 * per burst and fields, mirror.h "gen") and hands the session's buffered copies to
 * sbx_toolgroup_send() where it would send them to one destination port.
 */
#ifndef SPANBOX_TOOLGROUP_H
#define SPANBOX_TOOLGROUP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "spanbox/flowhash.h"
#include "spanbox/shm.h"
#include "queue.h"

/** A token bucket: tokens (packets or bits) refilled at rate per TSC cycle, at most cap. */
struct sbx_token_bucket {
	double rate;   /**< tokens per TSC cycle; 0 = no limit */
	double cap;    /**< most tokens it holds (a burst) */
	double tokens; /**< tokens now */
};

/** One member as this worker sends to it. */
struct sbx_toolgroup_member {
	struct sbx_queue q;                     /**< this worker's mirror TX queue on the member port */
	struct sbx_group_member_counters *c;    /**< this worker's counters of the member (in shm) */
	struct sbx_token_bucket pps, bps;       /**< this worker's share of member_rate_limit */
	struct sbx_group_demand *dem;           /**< this worker's demand of the member (in shm) */
	const uint32_t *share_pps, *share_bps;  /**< this worker's shares the primary computes (in shm) */
};

/** One group as a session of this worker sends to it. */
struct sbx_toolgroup_rt {
	const uint8_t *buckets;                 /**< shm->groups[slot].buckets (read once per copy) */
	struct sbx_group_counters *gc;          /**< this worker's group counters (no_member) */
	uint8_t nb;                             /**< members */
	uint8_t fields;                         /**< enum sbx_flow_hash_fields */
	bool limited;                           /**< any rate limit */
	uint64_t last_tsc;                      /**< last refill of the token buckets */
	uint64_t next_rebalance;                /**< TSC when the shares are taken again */
	uint64_t rebalance_cycles;              /**< SBX_GROUP_REBALANCE_MS in TSC cycles */
	uint64_t rate_pps, rate_bps;            /**< member_rate_limit of the group (0: none) */
	uint64_t wait_cycles;                   /**< sbx_q_tx_wait() bound (a replay waits, else 0) */
	struct sbx_toolgroup_member m[SBX_MAX_GROUP_MEMBERS];
	struct sbx_mb_worker *mb;               /**< the worker's microburst windows (copies sent count as
						     TX of their member's port), set by the mirror engine
						     before each send; NULL: not counted */
};

/**
 * Set up @p g for tool group @p group of tables @p t as worker @p worker sends to it: member
 * queues (mirror TX queue of the worker, or its ring for a pcap member), counters of the group's
 * slot t->gslot[group], and, to begin with, member_rate_limit divided by the workers that can send
 * copies to the group (workers polling a source port of a session to it, or the cross-connect peer
 * of a TX source), at least 1; from then on the share the primary computes from every worker's
 * demand (taken by sbx_toolgroup_send() every SBX_GROUP_REBALANCE_MS). Keeps pointers into @p shm. @p wait_cycles: see struct
 * sbx_toolgroup_rt.
 * @return 0, or -1 with "tool_groups[i]...: why" in @p err.
 */
int sbx_toolgroup_setup(struct sbx_toolgroup_rt *g, struct sbx_shm *shm, const struct sbx_tables *t,
			unsigned int group, unsigned int worker, uint64_t wait_cycles, char *err, size_t errlen);

/**
 * Send the @p n tagged copies @p cp (ownership passes: each is sent or freed) to the members their
 * buckets name: copies of a bucket no member holds are freed (no_member), copies over a member's
 * rate limit freed (drop_rate_limit), copies its TX queue refuses freed (drop_txfull); each counted
 * per member. @p sent / @p bytes / @p refused receive what the session counts (copies and bytes
 * accepted, copies refused by a TX queue). With a rate limit, what each member is offered is added
 * to this worker's demand (shm group_demand) and, every SBX_GROUP_REBALANCE_MS, this worker's share
 * of the limit is taken from what the primary computed (its part of every worker's demand, at
 * least SBX_GROUP_SHARE_FLOOR_PPM: docs/CONFIG.md "Rate limits with several workers").
 */
void sbx_toolgroup_send(struct sbx_toolgroup_rt *g, struct rte_mbuf **cp, uint16_t n, uint64_t *sent,
			uint64_t *bytes, uint64_t *refused);

#endif
