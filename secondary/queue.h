/* SPDX-License-Identifier: BSD-3-Clause */
/* A worker's RX or TX queue: an ethdev queue, or a ring to the primary for pcap file ports. */
#ifndef SPANBOX_QUEUE_H
#define SPANBOX_QUEUE_H

#include <stdint.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_pause.h>
#include <rte_ring.h>

/** Where a worker receives or transmits: an ethdev queue, or a bridge ring (pcap ports). */
struct sbx_queue {
	uint16_t port;         /**< index into cfg.ports */
	uint16_t port_id;      /**< DPDK port id */
	uint16_t queue;        /**< queue id on the ethdev */
	struct rte_ring *ring; /**< non-NULL for pcap file ports: mbufs go through this ring instead */
};

/** Receive up to @p n mbufs; the caller owns them. @return count. */
static inline uint16_t sbx_q_rx(const struct sbx_queue *q, struct rte_mbuf **pkts, uint16_t n)
{
	if (q->ring != NULL)
		return (uint16_t)rte_ring_sc_dequeue_burst(q->ring, (void **)pkts, n, NULL);
	return rte_eth_rx_burst(q->port_id, q->queue, pkts, n);
}

/** Transmit up to @p n mbufs; ownership of the first (returned) count passes on, the rest stays with
 * the caller. */
static inline uint16_t sbx_q_tx(const struct sbx_queue *q, struct rte_mbuf **pkts, uint16_t n)
{
	if (q->ring != NULL)
		return (uint16_t)rte_ring_sp_enqueue_burst(q->ring, (void **)pkts, n, NULL);
	return rte_eth_tx_burst(q->port_id, q->queue, pkts, n);
}

/**
 * Forward TX: like sbx_q_tx(), but a pcap file port (ring to the primary) is not a wire: when its
 * ring is full the worker waits for the primary to write (up to @p max_wait_cycles TSC cycles)
 * instead of dropping, so replays lose nothing. Ethdev queues behave as sbx_q_tx().
 */
static inline uint16_t sbx_q_tx_wait(const struct sbx_queue *q, struct rte_mbuf **pkts, uint16_t n,
				    uint64_t max_wait_cycles)
{
	uint16_t sent = sbx_q_tx(q, pkts, n);
	uint64_t deadline;

	if (likely(sent == n || q->ring == NULL))
		return sent;
	deadline = rte_get_tsc_cycles() + max_wait_cycles;
	while (sent < n && rte_get_tsc_cycles() < deadline) {
		rte_pause();
		sent = (uint16_t)(sent + sbx_q_tx(q, pkts + sent, (uint16_t)(n - sent)));
	}
	return sent;
}

#endif
