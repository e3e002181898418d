/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file capture.h
 * The workers' half of a capture (docs/CAPTURE.md "Recording through the API"): a capture is a
 * mirror session whose destination is the primary's recorder. The mirror engine (mirror.c) takes
 * its frames like any session's (sources, filter, sampling); instead of a mirror copy it makes a
 * pcapng copy with DPDK's rte_pcapng_copy() (an Enhanced Packet Block: TSC timestamp, direction
 * flag, the original length when the snaplen cut the frame) from the capture pool, and enqueues it
 * to the capture's ring (multi-producer: every worker). A full ring or an empty pool is a counted
 * drop of the capture (drop_txfull, drop_nombuf of the session): a worker never waits for the
 * recorder or the disk.
 */
#ifndef SPANBOX_CAPTURE_H
#define SPANBOX_CAPTURE_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "spanbox/shm.h"

struct sbx_mirror_rt;

/**
 * Point session @p rt (config @p mc, a recorder destination) at its capture: the ring and the
 * `ended` flag of the recorder's slot with the session's id, and the capture pool. When there is
 * no such slot (a capture the recorder could not start) the session copies nothing.
 */
void sbx_capture_setup(struct sbx_mirror_rt *rt, struct sbx_shm *shm, const struct sbx_mirror_cfg *mc);

/**
 * The pcapng copy of frame @p m (only read) seen on direction @p dir (SBX_DIR_RX: inbound,
 * SBX_DIR_TX: outbound) of port index @p port, cut at the session's snaplen; @p tsc is the TSC of
 * the burst (the packet's timestamp). The copy's `port` is @p port: the recorder's interface id.
 * Counts copied and truncated in rt->st. @return the copy, or NULL counted in drop_nombuf.
 */
struct rte_mbuf *sbx_capture_copy(struct sbx_mirror_rt *rt, struct rte_mbuf *m, uint16_t port, uint8_t dir,
				  uint64_t tsc);

/** Enqueue the buffered copies of @p rt to its ring (never waits): what does not fit is freed and
 *  counted in drop_txfull; the others in mirrored_pkts / mirrored_bytes. */
void sbx_capture_flush(struct sbx_mirror_rt *rt);

#endif
