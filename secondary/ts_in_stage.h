/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file ts_in_stage.h
 * The worker's timestamps-in stage (ingress.timestamp, docs/INGRESS.md "Timestamps in"): the first
 * ingress stage, before decap. It takes an Arista AVSP header or a Metamako trailer off a frame
 * (the parsers: include/spanbox/ts_in.h, shared/ts_in.c) and keeps the frame's time in DPDK's
 * timestamp dynamic field of the mbuf (RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, flag
 * RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, registered by the primary before the workers start), in UTC
 * nanoseconds; the recorder's copy (secondary/capture.c) writes it as the frame's pcapng time.
 */
#ifndef SPANBOX_SECONDARY_TS_IN_STAGE_H
#define SPANBOX_SECONDARY_TS_IN_STAGE_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "spanbox/config.h"
#include "spanbox/counters.h"
#include "spanbox/ts_in.h"

/** Offset of the timestamp dynamic field in an mbuf, -1 until sbx_ts_in_dyn_init() found it. */
extern int sbx_ts_dyn_off;
/** The RX timestamp dynamic flag (ol_flags bit), 0 until sbx_ts_in_dyn_init() found it. */
extern uint64_t sbx_ts_dyn_flag;

/**
 * Find the timestamp dynamic field and flag (rte_mbuf_dyn_rx_timestamp_register: the primary
 * registered them, a secondary finds the same offsets). Idempotent.
 * @return 0, or -1 (rte_errno set): the stage still removes headers and trailers, but no frame
 *         carries its time to the recorder.
 */
int sbx_ts_in_dyn_init(void);

/** @return the ingress time of @p m (UTC ns) when the stage set one, else 0. */
static inline uint64_t sbx_ts_in_of(const struct rte_mbuf *m)
{
	if (sbx_ts_dyn_flag == 0 || !(m->ol_flags & sbx_ts_dyn_flag))
		return 0;
	return *RTE_MBUF_DYNFIELD(m, sbx_ts_dyn_off, const rte_mbuf_timestamp_t *);
}

/**
 * Run the timestamp stage of port config @p c (c->ts_format != NONE) on @p m, a direct mbuf of
 * refcount 1 (the caller checked). Arista: the AVSP header after the MACs is removed (the MACs move
 * forward, rte_pktmbuf_adj); a frame without one passes unchanged (timestamp_absent). Metamako:
 * the trailer (and the FCS with c->ts_fcs) is cut from the end (rte_pktmbuf_trim). The time goes
 * into the mbuf's timestamp field and its offset from @p now_ns (our CLOCK_REALTIME, the burst's)
 * into @p off. Counters in @p pc (timestamps_in, timestamp_absent, timestamp_malformed_<reason>,
 * ingress_unwritable for a header outside the first segment or a trailer across segments).
 * @return 0 to keep the frame, 1 to drop it (counted here, not in drop_packets: the caller's).
 */
int sbx_ts_in_frame(const struct sbx_ingress_cfg *c, struct rte_mbuf *m, struct sbx_port_counters *pc,
		    struct sbx_ts_in_offset *off, uint64_t now_ns);

#endif
