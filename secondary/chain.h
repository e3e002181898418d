/* SPDX-License-Identifier: BSD-3-Clause */
/* Consistency check of an mbuf chain, done on every received frame before TX or mirroring. */
#ifndef SPANBOX_CHAIN_H
#define SPANBOX_CHAIN_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

/**
 * @return true when pkt_len equals the sum of the segments' data_len and nb_segs the number of
 * segments. A frame that fails (DPDK 22.11's net_pcap builds such chains for frames over 64 KiB:
 * a 16-bit length wraps) must be dropped, never handed to a PMD that would read past its data.
 * Single-segment frames are checked from the first cache line only (m->next is in the second).
 */
static inline bool sbx_mbuf_chain_ok(const struct rte_mbuf *m)
{
	const struct rte_mbuf *s;
	uint32_t len = 0;
	uint16_t segs = 0;

	if (likely(m->nb_segs == 1))
		return m->data_len == m->pkt_len;
	for (s = m; s != NULL && segs <= m->nb_segs; s = s->next) {
		len += s->data_len;
		segs++;
	}
	return s == NULL && segs == m->nb_segs && len == m->pkt_len;
}

#endif
