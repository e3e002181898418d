/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mirror copies, size-aware (NOTES.md section 5): small frames are deep-copied (a 64-256 B memcpy
 * is cheaper than refcount atomics that bounce a cache line between cores); big frames are shared
 * through an indirect mbuf (rte_pktmbuf_clone) behind a separate header mbuf, so the shared
 * buffer is never written. Each worker sends on its own mirror TX queue of the destination.
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memcpy.h>
#include <rte_mempool.h>

#include "spanbox/bpf_filter.h"
#include "spanbox/erspan.h"
#include "capture.h"
#include "mirror.h"

/* Largest mirrored frame an ERSPAN packet can carry: 65535 B of IP minus IPv4 + GRE + ERSPAN III
 * with subheader; longer frames (TSO super-frames in captures) are cut and marked truncated. */
#define SBX_ERSPAN_MAX_INNER (65535 - 20 - 28)

void sbx_mirror_session_init(struct sbx_mirror_rt *rt, const struct sbx_mirror_cfg *mc, const uint8_t *port_mac,
			     struct sbx_mirror_counters *st, uint64_t *seq_shared)
{
	rt->cfg = mc;
	rt->st = st;
	rt->seq_shared = seq_shared;
	memcpy(rt->src_mac, mc->src_mac_set ? mc->src_mac : port_mac, 6);
	if (mc->encap == SBX_ENCAP_ERSPAN2 || mc->encap == SBX_ENCAP_ERSPAN3)
		rt->outer_len = (uint8_t)sbx_outer_write(rt->outer_tmpl, mc, rt->src_mac, 0, 0);
}

int sbx_mirror_setup(struct sbx_mirror_engine *e, struct sbx_shm *shm, const struct sbx_tables *t,
		     unsigned int worker, char *err, size_t errlen)
{
	const struct sbx_config *cfg = &t->cfg;
	uint16_t i, k;

	memset(e, 0, sizeof(*e));
	e->worker = worker;
	e->tsc_hz = rte_get_tsc_hz();
	e->tsc0 = rte_rdtsc();
	e->ns0 = sbx_realtime_ns();
	e->mp = shm->nb_pools ? rte_mempool_lookup(shm->pools[0].name) : NULL;
	for (i = 0; i < shm->nb_pools; i++)
		if (shm->pools[i].socket_id == (int)rte_socket_id())
			e->mp = rte_mempool_lookup(shm->pools[i].name);
	if (cfg->nb_mirrors && e->mp == NULL) {
		snprintf(err, errlen, "no mbuf pool for mirror copies");
		return -1;
	}
	/* a replay (every port a pcap file): nothing live waits, so copies wait for room in the
	 * destination's ring as forwarded frames do (1 s, then the primary is gone) instead of being
	 * dropped; with any live port a copy never delays forwarding */
	e->dst_wait_cycles = rte_get_tsc_hz();
	for (i = 0; i < cfg->nb_ports; i++)
		if (cfg->ports[i].kind != SBX_PORT_PCAP_FILE)
			e->dst_wait_cycles = 0;
	for (i = 0; i < cfg->nb_mirrors; i++) {
		const struct sbx_mirror_cfg *mc = &cfg->mirrors[i];
		const struct sbx_port_shm *dp = &shm->ports[mc->dst_port];
		struct sbx_mirror_rt *rt = &e->s[i];
		uint16_t q = sbx_mirror_txq(cfg, worker);

		if (t->cset[i] >= SBX_MIRROR_COUNTER_SETS) {
			snprintf(err, errlen, "mirrors[%u]: counter set %u out of range", i, t->cset[i]);
			return -1;
		}
		sbx_mirror_session_init(rt, mc, dp->mac, &shm->workers[worker].stats.mirror[t->cset[i]],
					&shm->mirrors[t->cset[i]].seq_next);
		rt->dst = (struct sbx_queue){ .port = mc->dst_port, .port_id = dp->port_id, .queue = q };
		if (mc->dst_kind == SBX_DST_RECORDER) {
			sbx_capture_setup(rt, shm, mc);
		} else if (cfg->ports[mc->dst_port].kind == SBX_PORT_PCAP_FILE) {
			rt->dst.ring = rte_ring_lookup(dp->tx_ring[q]);
			if (rt->dst.ring == NULL) {
				snprintf(err, errlen, "mirrors[%u]: ring %s not found", i, dp->tx_ring[q]);
				return -1;
			}
		}
		if (mc->filter[0] != '\0') {
			char ferr[512];

			rt->bpf = sbx_filter_load(mc->filter, ferr, sizeof(ferr));
			if (rt->bpf == NULL) {
				snprintf(err, errlen, "mirrors[%u].filter: %s", i, ferr);
				return -1;
			}
			{ /* the JIT-compiled entry point, looked up once (NULL: interpret) */
				struct rte_bpf_jit jit = { 0 };

				rte_bpf_get_jit(rt->bpf, &jit);
				rt->jit = jit.func;
			}
		}
		for (k = 0; k < mc->nb_sources; k++) {
			uint16_t port = mc->sources[k].port;

			if (mc->sources[k].direction & SBX_DIR_RX)
				e->rx[port][e->nb_rx[port]++] = (uint8_t)i;
			if (mc->sources[k].direction & SBX_DIR_TX)
				e->tx[port][e->nb_tx[port]++] = (uint8_t)i;
		}
		e->nb++;
	}
	return 0;
}

void sbx_mirror_teardown(struct sbx_mirror_engine *e)
{
	uint16_t i;

	for (i = 0; i < e->nb; i++) {
		struct sbx_mirror_rt *rt = &e->s[i];

		if (rt->ntx)
			rte_pktmbuf_free_bulk(rt->txbuf, rt->ntx);
		rt->ntx = 0;
		if (rt->bpf != NULL)
			rte_bpf_destroy(rt->bpf);
		rt->bpf = NULL;
	}
	e->nb = 0;
	memset(e->nb_rx, 0, sizeof(e->nb_rx));
	memset(e->nb_tx, 0, sizeof(e->nb_tx));
}

/* Cut a (cloned) chain to @p len bytes, freeing the segments past it. */
static void chain_trim(struct rte_mbuf *m, uint32_t len)
{
	struct rte_mbuf *s = m;
	uint32_t cum = 0;
	uint16_t segs = 1;

	while (cum + s->data_len < len && s->next != NULL) {
		cum += s->data_len;
		s = s->next;
		segs++;
	}
	s->data_len = (uint16_t)(len - cum);
	if (s->next != NULL) {
		rte_pktmbuf_free(s->next);
		s->next = NULL;
	}
	m->nb_segs = segs;
	m->pkt_len = len;
}

/*
 * Write the encapsulation header of one copy into hdr. @p strip receives how many bytes of the
 * frame the header replaces (RSPAN re-writes the two MAC addresses in front of its tag).
 * @return header length.
 */
static uint32_t build_header(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt, const struct rte_mbuf *m,
			     uint16_t port, uint8_t dir, uint32_t cap, bool truncated, uint64_t now_ns,
			     uint8_t *hdr, uint32_t *strip)
{
	const struct sbx_mirror_cfg *c = rt->cfg;
	uint8_t tmp[64];
	const uint8_t *f;
	struct sbx_erspan_fields ef;
	uint32_t outer, ge;
	uint64_t ts;

	*strip = 0;
	switch (c->encap) {
	case SBX_ENCAP_RSPAN:
		/* IEEE 802.1Q: the new tag goes right after the MACs, in front of any existing tag;
		 * a frame shorter than the two MACs has no place for it (the caller checked) */
		f = rte_pktmbuf_read(m, 0, 12, tmp);
		memcpy(hdr, f, 12);
		hdr[12] = 0x81;
		hdr[13] = 0x00;
		hdr[14] = (uint8_t)(c->vlan >> 8);
		hdr[15] = (uint8_t)c->vlan;
		*strip = 12;
		return 16;
	case SBX_ENCAP_ERSPAN2:
	case SBX_ENCAP_ERSPAN3:
		break;
	default:
		return 0;
	}
	memset(&ef, 0, sizeof(ef));
	ef.version = c->encap == SBX_ENCAP_ERSPAN2 ? 1 : 2;
	f = rte_pktmbuf_read(m, 0, RTE_MIN(m->pkt_len, (uint32_t)sizeof(tmp)), tmp);
	sbx_erspan_fields_from_frame(&ef, f, RTE_MIN(m->pkt_len, (uint32_t)sizeof(tmp)), 0);
	ef.session_id = c->id;
	ef.truncated = truncated;
	ef.seq_present = true;
	ef.seq = 0; /* numbered when sent (number_copies) */
	if (c->encap == SBX_ENCAP_ERSPAN2) {
		ef.index = port;
	} else {
		ts = sbx_erspan_timestamp(now_ns, c->gra);
		ef.timestamp = (uint32_t)ts;
		ef.sgt = c->sgt;
		ef.p = true; /* the payload is an Ethernet frame without FCS */
		ef.hw_id = c->hw_id;
		ef.dir = dir == SBX_DIR_TX;
		ef.gra = c->gra;
		ef.o = c->platform_subheader;
		ef.port_id = port;
		ef.ts_upper = (uint32_t)(ts >> 32);
	}
	outer = rt->outer_len;
	ge = (uint32_t)sbx_gre_erspan_write(hdr + outer, &ef);
	memcpy(hdr, rt->outer_tmpl, outer);
	sbx_outer_patch(hdr, c->ip_version, ge + cap, e->ip_id++);
	return outer + ge;
}

/* One mirror copy of @p m, or NULL (counted: drop_nombuf or drop_malformed). */
static struct rte_mbuf *make_copy(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt, struct rte_mbuf *m,
				  uint16_t port, uint8_t dir, uint64_t now_ns)
{
	const struct sbx_mirror_cfg *c = rt->cfg;
	uint8_t hdr[SBX_ENCAP_MAX_LEN];
	uint32_t len = m->pkt_len, cap = len, hlen, strip;
	struct rte_mbuf *cp, *h;
	bool share;

	if (c->snaplen && c->snaplen < cap)
		cap = c->snaplen;
	if ((c->encap == SBX_ENCAP_ERSPAN2 || c->encap == SBX_ENCAP_ERSPAN3) && cap > SBX_ERSPAN_MAX_INNER)
		cap = SBX_ERSPAN_MAX_INNER;
	if (c->encap == SBX_ENCAP_RSPAN && len < 12) {
		rt->st->drop_malformed++; /* no MAC addresses to put the tag behind */
		return NULL;
	}
	hlen = build_header(e, rt, m, port, dir, cap, cap < len, now_ns, hdr, &strip);
	share = c->copy_strategy == SBX_COPY_SHARE ||
		(c->copy_strategy == SBX_COPY_ADAPTIVE && cap > c->copy_threshold);
	/* RSPAN re-writes the MACs: sharing needs them in the first segment to skip them */
	if (share && strip > m->data_len)
		share = false;

	if (!share && m->nb_segs == 1 && hlen + cap - strip <= (uint32_t)rte_pktmbuf_data_room_size(e->mp) -
							     RTE_PKTMBUF_HEADROOM) {
		/* the common case, a small one-segment frame: header and frame in one write each */
		uint8_t *d;

		cp = rte_pktmbuf_alloc(e->mp);
		if (cp == NULL) {
			rt->st->drop_nombuf++;
			return NULL;
		}
		d = (uint8_t *)rte_pktmbuf_append(cp, (uint16_t)(hlen + cap - strip));
		memcpy(d, hdr, hlen);
		rte_memcpy(d + hlen, rte_pktmbuf_mtod_offset(m, const uint8_t *, strip), cap - strip);
		rt->st->copied++;
	} else if (!share) {
		/* rte_pktmbuf_copy() refuses an offset at the very end of the frame: a 12 B frame under
		 * RSPAN keeps nothing but its MACs, which the header already holds */
		cp = cap > strip ? rte_pktmbuf_copy(m, e->mp, strip, cap - strip) : rte_pktmbuf_alloc(e->mp);
		if (cp == NULL) {
			rt->st->drop_nombuf++;
			return NULL;
		}
		if (hlen) {
			char *d = rte_pktmbuf_prepend(cp, (uint16_t)hlen);

			if (d == NULL) { /* headroom too small: cannot happen with RTE_PKTMBUF_HEADROOM >= 96 */
				rte_pktmbuf_free(cp);
				rt->st->drop_nombuf++;
				return NULL;
			}
			memcpy(d, hdr, hlen);
		}
		rt->st->copied++;
	} else {
		cp = rte_pktmbuf_clone(m, e->mp);
		if (cp == NULL) {
			rt->st->drop_nombuf++;
			return NULL;
		}
		if (cap < len)
			chain_trim(cp, cap);
		if (strip)
			rte_pktmbuf_adj(cp, (uint16_t)strip);
		if (hlen) {
			h = rte_pktmbuf_alloc(e->mp);
			if (h == NULL) {
				rte_pktmbuf_free(cp);
				rt->st->drop_nombuf++;
				return NULL;
			}
			memcpy(rte_pktmbuf_append(h, (uint16_t)hlen), hdr, hlen);
			if (rte_pktmbuf_chain(h, cp) != 0) { /* more than RTE_MBUF_MAX_NB_SEGS segments */
				rte_pktmbuf_free(h);
				rte_pktmbuf_free(cp);
				rt->st->drop_malformed++;
				return NULL;
			}
			cp = h;
		}
		rt->st->shared++;
	}
	if (cap < len)
		rt->st->truncated++;
	return cp;
}

struct rte_mbuf *sbx_mirror_copy_one(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt, struct rte_mbuf *m,
				     uint16_t port, uint8_t dir, uint64_t now_ns)
{
	return make_copy(e, rt, m, port, dir, now_ns);
}

/*
 * Give the @p n copies of @p rt their GRE sequence numbers (RFC 2890), in the order they are
 * sent: one atomic fetch-add for the burst (struct sbx_mirror_shm). The number sits right after
 * the outer header and the GRE flags/protocol word (SBX_GRE_SEQ_OFFSET), in the copy's first
 * segment.
 */
static void number_copies(struct sbx_mirror_rt *rt, struct rte_mbuf **cp, uint16_t n)
{
	uint32_t seq = (uint32_t)__atomic_fetch_add(rt->seq_shared, n, __ATOMIC_RELAXED);
	uint16_t i;

	for (i = 0; i < n; i++) {
		uint32_t be = rte_cpu_to_be_32(seq + i);

		memcpy(rte_pktmbuf_mtod_offset(cp[i], uint8_t *, rt->outer_len + SBX_GRE_SEQ_OFFSET), &be, 4);
	}
}

/* Send the buffered copies of one session. */
static void flush_session(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt)
{
	uint64_t bytes = 0, lost = 0;
	uint16_t i, sent;

	for (i = 0; i < rt->ntx; i++)
		bytes += rt->txbuf[i]->pkt_len;
	if (rt->outer_len)
		number_copies(rt, rt->txbuf, rt->ntx);
	sent = sbx_q_tx_wait(&rt->dst, rt->txbuf, rt->ntx, e->dst_wait_cycles);
	if (unlikely(sent < rt->ntx)) {
		for (i = sent; i < rt->ntx; i++)
			lost += rt->txbuf[i]->pkt_len;
		rte_pktmbuf_free_bulk(rt->txbuf + sent, rt->ntx - sent);
		rt->st->drop_txfull += rt->ntx - sent;
	}
	rt->st->mirrored_pkts += sent;
	rt->st->mirrored_bytes += bytes - lost;
	rt->ntx = 0;
}

static void sbx_mirror_flush_one(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt);

void sbx_mirror_prepare(struct sbx_mirror_engine *e, uint16_t port, uint8_t dir, struct rte_mbuf **pkts, uint16_t n)
{
	const uint8_t *list = dir == SBX_DIR_RX ? e->rx[port] : e->tx[port];
	uint8_t nb = dir == SBX_DIR_RX ? e->nb_rx[port] : e->nb_tx[port];
	uint64_t tsc = rte_rdtsc();
	uint64_t now_ns = e->ns0 + (uint64_t)((double)(tsc - e->tsc0) * 1e9 / (double)e->tsc_hz);
	uint8_t k;
	uint16_t i;

	for (k = 0; k < nb; k++) {
		struct sbx_mirror_rt *rt = &e->s[list[k]];

		if (rt->ntx + n > SBX_MIRROR_TXBUF)
			sbx_mirror_flush_one(e, rt);
		if (unlikely(rt->rec_ended != NULL) && *rt->rec_ended)
			continue; /* a capture that ended: nothing more to take */
		rt->burst_start = rt->ntx;
		for (i = 0; i < n; i++) {
			struct rte_mbuf *cp;

			if (rt->bpf != NULL &&
			    (rt->jit ? rt->jit(pkts[i]) : rte_bpf_exec(rt->bpf, pkts[i])) == 0) {
				rt->st->filtered_out++;
				continue;
			}
			if (rt->sample_left) {
				rt->sample_left--;
				rt->st->sampled_out++;
				continue;
			}
			rt->sample_left = rt->cfg->sample - 1;
			cp = rt->rec_ring != NULL ? sbx_capture_copy(rt, pkts[i], port, dir, tsc)
						  : make_copy(e, rt, pkts[i], port, dir, now_ns);
			if (unlikely(cp == NULL))
				continue; /* counted by make_copy */
			rt->txbuf[rt->ntx] = cp;
			rt->src_idx[rt->ntx++] = i;
		}
	}
}

void sbx_mirror_commit_tx(struct sbx_mirror_engine *e, uint16_t port, uint16_t sent)
{
	uint8_t k;

	for (k = 0; k < e->nb_tx[port]; k++) {
		struct sbx_mirror_rt *rt = &e->s[e->tx[port][k]];
		uint16_t j = rt->burst_start;

		while (j < rt->ntx && rt->src_idx[j] < sent)
			j++;
		if (j < rt->ntx) {
			rte_pktmbuf_free_bulk(rt->txbuf + j, rt->ntx - j);
			rt->ntx = j;
		}
	}
}

/* Send the buffered copies of one session: to its capture's ring, or to its destination port. */
static void sbx_mirror_flush_one(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt)
{
	if (rt->rec_ring != NULL)
		sbx_capture_flush(rt);
	else
		flush_session(e, rt);
}

void sbx_mirror_flush(struct sbx_mirror_engine *e)
{
	uint16_t i;

	for (i = 0; i < e->nb; i++)
		if (e->s[i].ntx)
			sbx_mirror_flush_one(e, &e->s[i]);
}
