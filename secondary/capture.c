/* SPDX-License-Identifier: BSD-3-Clause */
/* The workers' half of a capture: pcapng copies into the capture's ring (capture.h). */
#include <rte_mempool.h>
#include <rte_pcapng.h>
#include <rte_ring.h>

#include "capture.h"
#include "mirror.h"
#include "ts_in_stage.h"

/* the `ended` flag of a session whose capture has no slot: it copies nothing */
static const uint32_t no_capture = 1;

void sbx_capture_setup(struct sbx_mirror_rt *rt, struct sbx_shm *shm, const struct sbx_mirror_cfg *mc)
{
	unsigned int k;

	rt->rec_ended = &no_capture;
	rt->rec_ring = NULL;
	rt->rec_mp = rte_mempool_lookup(SBX_CAPTURE_POOL_NAME);
	for (k = 0; k < SBX_CAPTURE_SLOTS && rt->rec_mp != NULL; k++) {
		struct sbx_capture_shm *cs = &shm->captures[k];

		if (__atomic_load_n(&cs->state, __ATOMIC_ACQUIRE) == SBX_CAP_FREE || cs->id != mc->id)
			continue;
		rt->rec_ring = rte_ring_lookup(cs->ring);
		if (rt->rec_ring != NULL)
			rt->rec_ended = &cs->ended;
		return;
	}
}

struct rte_mbuf *sbx_capture_copy(struct sbx_mirror_rt *rt, struct rte_mbuf *m, uint16_t port, uint8_t dir,
				  uint64_t tsc)
{
	uint32_t snap = rt->cfg->snaplen ? rt->cfg->snaplen : UINT32_MAX;
	struct rte_mbuf *cp = rte_pcapng_copy(port, 0, m, rt->rec_mp, snap, tsc,
					      dir == SBX_DIR_RX ? RTE_PCAPNG_DIRECTION_IN : RTE_PCAPNG_DIRECTION_OUT);

	if (unlikely(cp == NULL)) {
		rt->st->drop_nombuf++;
		return NULL;
	}
	cp->port = port; /* rte_pcapng_copy sets it too: the recorder maps it to the file's interface */
	if (sbx_ts_in_of(m) != 0) {
		/* timestamps in (ts_in_stage.h): the frame's own time, not the burst's TSC, is its EPB
		 * time: rte_pcapng_copy() put the Enhanced Packet Block at the start of the copy, the
		 * timestamp (ns, if_tsresol 9) in host order at offsets 12 (high) and 16 (low) */
		uint64_t ns = sbx_ts_in_of(m);
		uint32_t *epb = rte_pktmbuf_mtod(cp, uint32_t *);

		epb[3] = (uint32_t)(ns >> 32);
		epb[4] = (uint32_t)ns;
	}
	rt->st->copied++;
	if (snap < m->pkt_len)
		rt->st->truncated++;
	return cp;
}

void sbx_capture_flush(struct sbx_mirror_rt *rt)
{
	uint64_t bytes = 0;
	unsigned int sent;
	uint16_t i;

	sent = rte_ring_mp_enqueue_burst(rt->rec_ring, (void **)rt->txbuf, rt->ntx, NULL);
	for (i = 0; i < sent; i++)
		bytes += rt->txbuf[i]->pkt_len;
	if (unlikely(sent < rt->ntx)) {
		rte_pktmbuf_free_bulk(rt->txbuf + sent, rt->ntx - sent);
		rt->st->drop_txfull += rt->ntx - sent;
	}
	rt->st->mirrored_pkts += sent;
	rt->st->mirrored_bytes += bytes;
	rt->ntx = 0;
}
