/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mirror copies, size-aware (NOTES.md section 5): small frames are deep-copied (a 64-256 B memcpy
 * is cheaper than refcount atomics that bounce a cache line between cores); big frames are shared
 * through an indirect mbuf (rte_pktmbuf_attach, rte_pktmbuf_clone) behind a separate header mbuf,
 * so the shared buffer is never written; the indirect mbufs come from the socket's indirect-mbuf
 * pool (struct sbx_ind_pool_shm), whose objects have no data room. Each worker sends on its own mirror TX queue of the destination.
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_memcpy.h>
#include <rte_mempool.h>
#include <rte_prefetch.h>

#include "spanbox/bytes.h"
#include "spanbox/bpf_filter.h"
#include "spanbox/erspan.h"
#include "spanbox/flowhash.h"
#include "spanbox/mask.h"
#include "capture.h"
#include "clock.h"
#include "mirror.h"

/* Largest mirrored frame an ERSPAN packet can carry: 65535 B of IP minus IPv4 + GRE + ERSPAN III
 * with subheader; longer frames (TSO super-frames in captures) are cut and marked truncated. */
#define SBX_ERSPAN_MAX_INNER (65535 - 20 - 28)
/* The same for VXLAN: 65535 B of IPv4 or of IPv6 payload minus UDP + VXLAN (the IPv4 header counted). */
#define SBX_VXLAN_MAX_INNER (65535 - 20 - SBX_UDP_HLEN - SBX_VXLAN_HLEN)

/*
 * sbx_csum16() of @p len bytes of chain @p m from byte @p off (an even offset), segment by segment
 * (rte_raw_cksum_mbuf() of DPDK 22.11 truncates its 32-bit partial sums of segments at odd
 * offsets: not used).
 */
static uint16_t chain_csum16(const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	uint32_t done = 0, acc = 0;

	for (; m != NULL && off >= m->data_len; m = m->next)
		off -= m->data_len; /* the segment the bytes start in */
	for (; m != NULL && done < len; m = m->next, off = 0) {
		uint32_t n = RTE_MIN((uint32_t)m->data_len - off, len - done);
		uint16_t r = rte_raw_cksum(rte_pktmbuf_mtod_offset(m, const uint8_t *, off), n); /* native order */

		acc += (done & 1) ? rte_bswap16(r) : r; /* a segment at an odd offset: bytes swapped */
		done += n;
	}
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return rte_be_to_cpu_16((uint16_t)acc);
}

/* The symmetric flow hash (@p f, the documented seed) of frame @p m's headers in its first segment. */
static inline uint32_t mbuf_flow_hash(const struct rte_mbuf *m, enum sbx_flow_hash_fields f)
{
	return sbx_flow_hash(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, f, SBX_FLOW_HASH_SEED);
}

/*
 * VXLAN header of one copy of @p m (@p cap bytes of it): UDP source port from the symmetric flow
 * hash of the whole frame's headers in its first segment (RFC 7348 section 5: one port per flow,
 * both directions alike), over IPv6 the UDP checksum over the copied bytes.
 */
static uint32_t vxlan_header(struct sbx_mirror_engine *e, const struct sbx_mirror_rt *rt, const struct rte_mbuf *m,
			     uint32_t cap, uint8_t *hdr)
{
	uint16_t sport = sbx_vxlan_src_port(mbuf_flow_hash(m, SBX_FLOW_HASH_5TUPLE));

	return (uint32_t)sbx_vxlan_write(hdr, rt->cfg, rt->src_mac, cap, sport, e->ip_id++,
					 rt->cfg->ip_version == 6 ? chain_csum16(m, 0, cap) : 0);
}

void sbx_mirror_session_init(struct sbx_mirror_rt *rt, const struct sbx_mirror_cfg *mc, const uint8_t *port_mac,
			     struct sbx_mirror_counters *st, uint64_t *seq_shared)
{
	rt->cfg = mc;
	rt->st = st;
	rt->seq_shared = seq_shared;
	rt->mtu = 0; /* no limit until sbx_mirror_setup() knows the destination */
	memcpy(rt->src_mac, mc->src_mac_set ? mc->src_mac : port_mac, 6);
	if (mc->encap == SBX_ENCAP_ERSPAN2 || mc->encap == SBX_ENCAP_ERSPAN3)
		rt->outer_len = (uint8_t)sbx_outer_write(rt->outer_tmpl, mc, rt->src_mac, 0, 0);
}

/* Sessions of @p e (set up from @p cfg) to tool groups that see a frame of port p: RX of p, and TX
 * of its cross-connect peer (the frames of p's bursts are sent there). */
static unsigned int group_watchers(const struct sbx_mirror_engine *e, const struct sbx_config *cfg, uint16_t p)
{
	int16_t peer = sbx_config_peer(cfg, p);
	unsigned int n = 0;
	uint8_t k;

	for (k = 0; k < e->nb_rx[p]; k++)
		n += e->s[e->rx[p][k]].grp != NULL;
	for (k = 0; peer >= 0 && k < e->nb_tx[peer]; k++)
		n += e->s[e->tx[peer][k]].grp != NULL;
	return n;
}

/* true when some frame is hashed by two sessions or directions to tool groups (then the hashes are
 * kept per burst: burst_hash), false when each is hashed once anyway (then straight in the pass
 * that makes the copy, no bookkeeping). */
static bool hashes_shared(const struct sbx_mirror_engine *e, const struct sbx_config *cfg)
{
	for (uint16_t p = 0; p < cfg->nb_ports; p++)
		if (group_watchers(e, cfg, p) > 1)
			return true;
	return false;
}

/* The MTU copies to group @p g must fit: the smallest its members' ports have (0 = none known).
 * A copy is made before its member is chosen (toolgroup.c), so one size fits every member. */
static uint16_t group_mtu(const struct sbx_shm *shm, const struct sbx_tool_group_cfg *g)
{
	uint16_t mtu = 0;

	for (uint8_t k = 0; k < g->nb_members; k++) {
		uint16_t m = shm->ports[g->members[k]].mtu;

		if (m != 0 && (mtu == 0 || m < mtu))
			mtu = m;
	}
	return mtu;
}

/*
 * Session @p idx of @p e from config @p mc (what="mirrors"/"maps", index @p wi, in errors):
 * counters @p st and GRE sequence @p seq (shm), its destination queue, ring or tool group, and
 * its compiled filter. Its sources are the caller's.
 */
static int session_setup(struct sbx_mirror_engine *e, struct sbx_shm *shm, const struct sbx_tables *t,
			 unsigned int worker, uint16_t idx, const struct sbx_mirror_cfg *mc, struct sbx_mirror_counters *st,
			 uint64_t *seq, const char *what, unsigned int wi, char *err, size_t errlen)
{
	const struct sbx_config *cfg = &t->cfg;
	const struct sbx_port_shm *dp = &shm->ports[mc->dst_port];
	struct sbx_mirror_rt *rt = &e->s[idx];
	uint16_t q = sbx_mirror_txq(cfg, worker);

	sbx_mirror_session_init(rt, mc, dp->mac, st, seq);
	rt->dst = (struct sbx_queue){ .port = mc->dst_port, .port_id = dp->port_id, .queue = q };
	if (mc->dst_kind == SBX_DST_RECORDER) {
		sbx_capture_setup(rt, shm, mc);
	} else if (cfg->ports[mc->dst_port].kind == SBX_PORT_PCAP_FILE) {
		rt->dst.ring = rte_ring_lookup(dp->tx_ring[q]);
		if (rt->dst.ring == NULL) {
			snprintf(err, errlen, "%s[%u]: ring %s not found", what, wi, dp->tx_ring[q]);
			return -1;
		}
	}
	if (mc->dst_kind == SBX_DST_GROUP) { /* the copies go to its members (toolgroup.c) */
		if (sbx_toolgroup_setup(&e->grp[idx], shm, t, mc->dst_group, worker, e->dst_wait_cycles, err,
					errlen) != 0)
			return -1;
		rt->grp = &e->grp[idx];
		rt->mtu = group_mtu(shm, &cfg->tool_groups[mc->dst_group]);
	} else if (mc->dst_kind != SBX_DST_RECORDER) {
		rt->mtu = dp->mtu;
	}
	if (mc->filter[0] != '\0') {
		char ferr[512];

		rt->bpf = sbx_filter_load(mc->filter, ferr, sizeof(ferr));
		if (rt->bpf == NULL) {
			snprintf(err, errlen, "%s[%u].filter: %s", what, wi, ferr);
			return -1;
		}
		{ /* the JIT-compiled entry point, looked up once (NULL: interpret) */
			struct rte_bpf_jit jit = { 0 };

			rte_bpf_get_jit(rt->bpf, &jit);
			rt->jit = jit.func;
		}
	}
	return 0;
}

/* One more session of @p e, config @p mc, number @p idx in the lists of the ports and directions
 * it watches (@p rx / @p tx: rows of @p width entries per port, their counts @p nb_rx / @p nb_tx). */
static void session_watch(struct sbx_mirror_engine *e, const struct sbx_mirror_cfg *mc, uint8_t idx, uint8_t *nb_rx,
			  uint8_t *rx, uint8_t *nb_tx, uint8_t *tx, size_t width)
{
	for (uint16_t k = 0; k < mc->nb_sources; k++) {
		uint16_t port = mc->sources[k].port;

		if (mc->sources[k].direction & SBX_DIR_RX)
			rx[port * width + nb_rx[port]++] = idx;
		if (mc->sources[k].direction & SBX_DIR_TX)
			tx[port * width + nb_tx[port]++] = idx;
	}
	e->nb++;
	e->nb_ts += mc->ts_format != SBX_TS_NONE || mc->encap == SBX_ENCAP_ERSPAN3;
}

/* ---- maps (issue #27, docs/MAPS.md): map j is session map_first + j, after the mirrors ---- */

/* The sessions of the maps of @p t (static config) and the maps watching each port and direction. */
static int maps_setup(struct sbx_mirror_engine *e, struct sbx_shm *shm, const struct sbx_tables *t,
		      unsigned int worker, char *err, size_t errlen)
{
	const struct sbx_config *cfg = &t->cfg;

	e->map_first = e->nb;
	if (cfg->nb_maps && e->mp == NULL) {
		snprintf(err, errlen, "no mbuf pool for map copies");
		return -1;
	}
	for (uint16_t j = 0; j < cfg->nb_maps; j++) {
		const struct sbx_mirror_cfg *mc = &cfg->maps[j].s;
		const uint16_t cs = t->mcset[j]; /* its counter set: it keeps it while it exists */

		if (cs >= SBX_MAP_COUNTER_SETS) {
			snprintf(err, errlen, "maps[%u]: counter set %u out of range", j, cs);
			return -1;
		}
		e->map_st[j] = &sbx_shm_worker(shm, worker)->stats.map[cs];
		if (session_setup(e, shm, t, worker, (uint16_t)(e->map_first + j), mc,
				  &sbx_shm_worker(shm, worker)->stats.map_mirror[cs], &shm->maps.seq[cs].seq_next, "maps", j, err,
				  errlen) != 0)
			return -1;
		for (uint16_t k = 0; k < mc->nb_sources; k++) { /* as session_watch, lists of uint16_t */
			const uint16_t port = mc->sources[k].port;

			if (mc->sources[k].direction & SBX_DIR_RX)
				e->map_rx[port][e->nb_map_rx[port]++] = j;
			if (mc->sources[k].direction & SBX_DIR_TX)
				e->map_tx[port][e->nb_map_tx[port]++] = j;
		}
		e->nb++;
		e->nb_ts += mc->ts_format != SBX_TS_NONE || mc->encap == SBX_ENCAP_ERSPAN3;
		e->nb_maps++;
	}
	return 0;
}

int sbx_mirror_setup(struct sbx_mirror_engine *e, struct sbx_shm *shm, const struct sbx_tables *t,
		     unsigned int worker, char *err, size_t errlen)
{
	const struct sbx_config *cfg = &t->cfg;
	uint16_t i, k;

	struct sbx_ts_clock tsclk = e->tsclk; /* kept over setups: timestamps stay monotonic */

	memset(e, 0, sizeof(*e));
	e->tsclk = tsclk;
	e->worker = worker;
	e->tsc_hz = rte_get_tsc_hz();
	k = 0;
	for (i = 0; i < shm->nb_pools; i++)
		if (shm->pools[i].socket_id == (int)rte_socket_id())
			k = i;
	e->mp = shm->nb_pools ? rte_mempool_lookup(shm->pools[k].name) : NULL;
	e->mp_ind = shm->nb_pools && shm->pools[k].indirect.name[0] ? rte_mempool_lookup(shm->pools[k].indirect.name)
								 : NULL;
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

		if (t->cset[i] >= SBX_MIRROR_COUNTER_SETS) {
			snprintf(err, errlen, "mirrors[%u]: counter set %u out of range", i, t->cset[i]);
			return -1;
		}
		if (session_setup(e, shm, t, worker, i, mc, &sbx_shm_worker(shm, worker)->stats.mirror[t->cset[i]],
				  &shm->mirrors[t->cset[i]].seq_next, "mirrors", i, err, errlen) != 0)
			return -1;
		session_watch(e, mc, (uint8_t)i, e->nb_rx, &e->rx[0][0], e->nb_tx, &e->tx[0][0], SBX_MAX_MIRRORS);
	}
	if (maps_setup(e, shm, t, worker, err, errlen) != 0) /* maps: sessions after the mirrors' */
		return -1;
	if (e->nb_ts && e->tsclk.mult == 0) /* the first setup with a time on copies: start the clock */
		sbx_worker_clock_start(&e->tsclk);
	e->fh_shared = hashes_shared(e, cfg);
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
	e->nb_maps = 0; /* maps: no session either */
	memset(e->nb_map_rx, 0, sizeof(e->nb_map_rx));
	memset(e->nb_map_tx, 0, sizeof(e->nb_map_tx));
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
 * The part of every copy's header that a burst shares, built once per burst and session
 * (burst_hdr_init): for ERSPAN the outer Ethernet + IP template, GRE with sequence 0 (numbered
 * when sent) and the ERSPAN header with the port index (II) or the timestamp, direction and port
 * (III) of the burst, its per-frame fields (VLAN, COS, En, T) zero; each copy then gets them with
 * one 32-bit word and the outer IP header with an incremental checksum update (RFC 1624).
 */
struct burst_hdr {
	uint8_t tmpl[SBX_ENCAP_MAX_LEN]; /* ERSPAN: the header of a copy, per-frame fields zero */
	uint32_t len;                    /* header bytes of every copy: 0 SPAN, 16 RSPAN, ERSPAN */
	uint32_t room;                   /* data room of a copy mbuf after its headroom, bytes */
	uint32_t fit;                    /* frame bytes an untagged frame's copy may carry within the
					    destination's MTU (UINT32_MAX: no limit); see frame_fit() */
	bool tag_room;                   /* SPAN, RSPAN: the frame's own tags add to fit (4 B each) */
	uint32_t word0;                  /* ERSPAN: first ERSPAN word (version, session id), host order */
	uint32_t csum0;                  /* ERSPAN over IPv4: ~checksum + ~total length + ~identification
					    of the template, 16-bit words summed (RFC 1624 eqn. 3) */
	uint8_t ts[SBX_TS_METAMAKO_LEN]; /* timestamp sessions: the burst's AVSP header (14 B) or
					    Metamako trailer (16 B), burst_ts_init() */
};

/* How one copy is made (classify): a deep copy into one new mbuf, a one-segment frame shared
 * through one indirect mbuf (behind a header mbuf when there is a header), both from mbufs of the
 * burst's bulk allocations (the indirect mbuf from e->mp_ind); or the general code (chains, big
 * frames) with its own allocations. */
enum copy_kind { COPY_ONE, SHARE_ONE, COPY_SLOW, SHARE_SLOW, COPY_TS, COPY_NONE };

/*
 * bh->fit and bh->tag_room of session @p rt, whose copies carry @p outer bytes of header (ERSPAN,
 * VXLAN: the outer Ethernet + IP packet, whose IP packet must fit the MTU; 0 for SPAN and RSPAN,
 * whose copies are the frame, RSPAN's tag counted as a tag, @p tag_room). A copy may be an
 * Ethernet frame of mtu + 14 B, plus 4 B per 802.1Q/802.1ad tag in front of its L3 payload.
 */
static inline void burst_fit(struct burst_hdr *bh, const struct sbx_mirror_rt *rt, uint32_t outer, bool tag_room)
{
	uint32_t frame = (uint32_t)rt->mtu + 14;

	bh->tag_room = tag_room;
	if (rt->mtu == 0)
		bh->fit = UINT32_MAX;
	else
		bh->fit = frame > outer ? frame - outer : 0;
}

static void burst_hdr_init(struct burst_hdr *bh, const struct sbx_mirror_engine *e, const struct sbx_mirror_rt *rt,
			   uint16_t port, uint8_t dir, uint64_t now_ns)
{
	const struct sbx_mirror_cfg *c = rt->cfg;
	struct sbx_erspan_fields ef;

	bh->room = (uint32_t)rte_pktmbuf_data_room_size(e->mp) - RTE_PKTMBUF_HEADROOM;
	bh->word0 = 0;
	switch (c->encap) {
	case SBX_ENCAP_RSPAN:
		bh->len = 16;
		burst_fit(bh, rt, 0, true);
		return;
	case SBX_ENCAP_ERSPAN2:
	case SBX_ENCAP_ERSPAN3:
		break;
	case SBX_ENCAP_VXLAN:
		/* written whole per copy (its UDP source port and IPv6 checksum are per frame) */
		bh->len = 14 + (c->ip_version == 6 ? 40 : 20) + SBX_UDP_HLEN + SBX_VXLAN_HLEN;
		burst_fit(bh, rt, bh->len, false);
		return;
	default:
		bh->len = 0;
		burst_fit(bh, rt, 0, true);
		return;
	}
	memset(&ef, 0, sizeof(ef));
	sbx_erspan_fields_session(&ef, c, port, dir == SBX_DIR_TX, now_ns);
	memcpy(bh->tmpl, rt->outer_tmpl, rt->outer_len);
	bh->len = rt->outer_len + (uint32_t)sbx_gre_erspan_write(bh->tmpl + rt->outer_len, &ef);
	bh->word0 = ((uint32_t)(ef.version & 0xf) << 28) | (ef.session_id & 0x3ffu);
	burst_fit(bh, rt, bh->len, false);
	if (c->ip_version != 6) {
		const uint8_t *ip = bh->tmpl + 14;

		bh->csum0 = (uint32_t)(uint16_t)~(ip[10] << 8 | ip[11]) + (uint16_t)~(ip[2] << 8 | ip[3]) +
			    (uint16_t)~(ip[4] << 8 | ip[5]);
	}
}

/* Outer IP header of one copy at @p hdr (a copy of bh->tmpl) for a GRE payload of @p gre_len
 * bytes: what sbx_outer_patch() does, with the template's part of the checksum sum precomputed. */
static inline void outer_patch(const struct burst_hdr *bh, uint8_t ip_version, uint8_t *hdr, uint32_t gre_len,
			       uint16_t ip_id)
{
	uint8_t *ip = hdr + 14;
	uint16_t len;
	uint32_t sum;

	if (ip_version == 6) {
		ip[4] = (uint8_t)(gre_len >> 8);
		ip[5] = (uint8_t)gre_len;
		return;
	}
	len = (uint16_t)(20 + gre_len);
	sum = bh->csum0 + len + ip_id;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	ip[2] = (uint8_t)(len >> 8);
	ip[3] = (uint8_t)len;
	ip[4] = (uint8_t)(ip_id >> 8);
	ip[5] = (uint8_t)ip_id;
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
}

/*
 * Write the header of one copy of @p m (cut to @p cap bytes) at @p hdr: bh->len bytes. RSPAN
 * re-writes the two MAC addresses in front of its tag (the caller skips them in the frame).
 */
static __rte_always_inline void write_header(struct sbx_mirror_engine *e, const struct sbx_mirror_rt *rt,
				const struct burst_hdr *bh, const struct rte_mbuf *m, uint32_t cap, uint8_t *hdr)
{
	const struct sbx_mirror_cfg *c = rt->cfg;
	struct sbx_erspan_fields ef;
	uint8_t tmp[64];
	const uint8_t *f;
	uint32_t fl, w;

	if (bh->len == 0)
		return;
	if (c->encap == SBX_ENCAP_RSPAN) {
		/* IEEE 802.1Q: the new tag goes right after the MACs, in front of any existing tag;
		 * a frame shorter than the two MACs has no place for it (classify checked) */
		f = rte_pktmbuf_read(m, 0, 12, tmp);
		memcpy(hdr, f, 12);
		hdr[12] = 0x81;
		hdr[13] = 0x00;
		hdr[14] = (uint8_t)(c->vlan >> 8);
		hdr[15] = (uint8_t)c->vlan;
		return;
	}
	if (c->encap == SBX_ENCAP_VXLAN) {
		vxlan_header(e, rt, m, cap, hdr);
		return;
	}
	fl = RTE_MIN(m->pkt_len, (uint32_t)sizeof(tmp));
	f = rte_pktmbuf_read(m, 0, fl, tmp);
	if (likely(fl >= 16 && f[12] == 0x08 && f[13] == 0x00)) {
		/* untagged IPv4, the common frame: VLAN 0, En 0, COS = IP precedence, as
		 * sbx_erspan_fields_from_frame() gives it, without the call */
		w = (uint32_t)(f[15] >> 5) << 13;
	} else {
		ef.version = c->encap == SBX_ENCAP_ERSPAN2 ? 1 : 2;
		sbx_erspan_fields_from_frame(&ef, f, fl, 0);
		w = ((uint32_t)(ef.vlan & 0xfff) << 16) | ((uint32_t)(ef.cos & 0x7) << 13) |
		    ((uint32_t)(ef.en & 0x3) << 11);
	}
	w |= bh->word0 | (cap < m->pkt_len ? 1u << 10 : 0);
	rte_memcpy(hdr, bh->tmpl, RTE_MIN(bh->len, (uint32_t)sizeof(bh->tmpl))); /* the bound: len never exceeds it */
	w = rte_cpu_to_be_32(w);
	memcpy(hdr + rt->outer_len + SBX_GRE_SEQ_OFFSET + 4, &w, 4);
	outer_patch(bh, c->ip_version, hdr, bh->len - rt->outer_len + cap, e->ip_id++);
}

/* write_header() out of line, for the general code (chains, big frames, RSPAN's short frames). */
static __rte_noinline void write_header_slow(struct sbx_mirror_engine *e, const struct sbx_mirror_rt *rt,
					     const struct burst_hdr *bh, const struct rte_mbuf *m, uint32_t cap,
					     uint8_t *hdr)
{
	write_header(e, rt, bh, m, cap, hdr);
}

/* Bytes of @p m a copy can carry, the destination's MTU aside: the whole frame, or the snaplen,
 * or what ERSPAN or VXLAN can carry. */
static inline uint32_t snap_cap(const struct sbx_mirror_cfg *c, const struct rte_mbuf *m)
{
	uint32_t cap = m->pkt_len;

	if (c->snaplen && c->snaplen < cap)
		cap = c->snaplen;
	if ((c->encap == SBX_ENCAP_ERSPAN2 || c->encap == SBX_ENCAP_ERSPAN3) && cap > SBX_ERSPAN_MAX_INNER)
		cap = SBX_ERSPAN_MAX_INNER;
	if (c->encap == SBX_ENCAP_VXLAN && cap > SBX_VXLAN_MAX_INNER)
		cap = SBX_VXLAN_MAX_INNER;
	return cap;
}

/* The most bytes of @p m its copy may carry within the destination's MTU: bh->fit, plus 4 per
 * 802.1Q/802.1ad tag (at most two, as a port takes them: CONFIG.md "Frame length") at the head
 * of the frame for SPAN and RSPAN. Only asked for frames longer than bh->fit. */
static uint32_t frame_fit(const struct burst_hdr *bh, const struct rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t fit = bh->fit, off = 12;

	for (int k = 0; bh->tag_room && k < 2 && off + 2 <= m->data_len; k++, off += 4) {
		uint16_t type = (uint16_t)(d[off] << 8 | d[off + 1]);

		if (type != RTE_ETHER_TYPE_VLAN && type != RTE_ETHER_TYPE_QINQ)
			break;
		fit += 4;
	}
	return fit;
}

/* Bytes of @p m its copy carries: snap_cap(), cut to fit the destination's MTU (classify() has
 * counted and, with oversize drop, refused a copy that needs the cut). */
static inline uint32_t copy_cap(const struct sbx_mirror_cfg *c, const struct burst_hdr *bh, const struct rte_mbuf *m)
{
	uint32_t cap = snap_cap(c, m);

	return unlikely(cap > bh->fit) ? RTE_MIN(cap, frame_fit(bh, m)) : cap;
}

/*
 * How the copy of @p m is made (enum copy_kind), and in @p nmb how many mbufs of the burst's bulk
 * allocation from e->mp it takes, in @p nind how many from e->mp_ind (both 0 for the general code);
 * COPY_NONE when the frame cannot be mirrored (counted: drop_malformed) or its copy would not fit
 * the destination's MTU and the session drops such copies (counted: tx_oversize; a copy cut to fit
 * is counted there too).
 */
static inline enum copy_kind classify(const struct sbx_mirror_rt *rt, const struct burst_hdr *bh,
				      const struct rte_mbuf *m, unsigned int *nmb, unsigned int *nind)
{
	const struct sbx_mirror_cfg *c = rt->cfg;
	uint32_t cap = snap_cap(c, m), strip = c->encap == SBX_ENCAP_RSPAN ? 12 : 0;
	bool share;

	*nmb = 0;
	*nind = 0;
	if (c->encap == SBX_ENCAP_RSPAN && m->pkt_len < 12) {
		rt->st->drop_malformed++; /* no MAC addresses to put the tag behind */
		return COPY_NONE;
	}
	if (unlikely(cap > bh->fit)) { /* longer than the destination's MTU may take */
		uint32_t fit = frame_fit(bh, m);

		if (cap > fit) {
			rt->st->tx_oversize++;
			/* a copy needs its Ethernet header (RSPAN: its MACs) at least */
			if (c->oversize == SBX_OVERSIZE_DROP || fit < 14)
				return COPY_NONE;
			cap = fit;
		}
	}
	share = c->copy_strategy == SBX_COPY_SHARE ||
		(c->copy_strategy == SBX_COPY_ADAPTIVE && cap > c->copy_threshold);
	if (unlikely(c->mask.from != SBX_MASK_OFF))
		share = false; /* a mask writes into the copy: never into the shared frame */
	/* RSPAN re-writes the MACs: sharing needs them in the first segment to skip them */
	if (share && strip > m->data_len)
		share = false;
	if (unlikely(c->ts_format != SBX_TS_NONE)) {
		*nmb = 1; /* copy_ts: its first mbuf from the burst's bulk, any other its own */
		return COPY_TS;
	}
	if (m->nb_segs != 1)
		return share ? SHARE_SLOW : COPY_SLOW;
	if (share) {
		*nmb = bh->len != 0;
		*nind = 1;
		return SHARE_ONE;
	}
	if (bh->len + cap - strip > bh->room)
		return COPY_SLOW;
	*nmb = 1;
	return COPY_ONE;
}

/* The pool of the indirect mbufs of shares: the indirect-mbuf pool, or the main pool without one. */
static inline struct rte_mempool *share_pool(const struct sbx_mirror_engine *e)
{
	return e->mp_ind != NULL ? e->mp_ind : e->mp;
}

/*
 * For a session without snaplen, RSPAN or strategy share (the common one), the largest one-segment
 * frame classify() makes a one-mbuf copy of, bytes: the threshold of "adaptive", at most the room
 * the header leaves in a copy mbuf; so that a burst's frames are classified with two compares
 * each (-22 instructions per 64 B copy, docs/BENCHMARKS.md "third pass"). 0 for any other session
 * (classify() decides every frame).
 */
static inline uint32_t copy_one_limit(const struct sbx_mirror_cfg *c, const struct burst_hdr *bh)
{
	uint32_t lim;

	/* (a masked session: a one-mbuf copy is right for it too; classify() never shares) */
	if (c->snaplen != 0 || c->encap == SBX_ENCAP_RSPAN || c->copy_strategy == SBX_COPY_SHARE ||
	    c->ts_format != SBX_TS_NONE)
		return 0;
	lim = bh->room - bh->len;
	if (c->copy_strategy == SBX_COPY_ADAPTIVE && c->copy_threshold < lim)
		lim = c->copy_threshold;
	return RTE_MIN(lim, bh->fit); /* longer frames: classify() checks them against the MTU */
}

/*
 * classify() of the @p n frames @p pkts into @p kind, the mbufs they take added to @p need (main
 * pool) and @p need_i (indirect pool); a one-segment frame of at most @p lim bytes (copy_one_limit(),
 * 0: none) is a one-mbuf copy without classify(). Inlined with @p lim a constant 0 or known not 0,
 * so that each caller's loop carries only its own test.
 */
static __rte_always_inline void classify_burst(const struct sbx_mirror_rt *rt, const struct burst_hdr *bh,
					       struct rte_mbuf **pkts, uint16_t n, uint8_t *kind, unsigned int *need,
					       unsigned int *need_i, uint32_t lim)
{
	unsigned int nmb, ni;
	uint16_t i;

	for (i = 0; i < n; i++) {
		if (likely(lim != 0 && pkts[i]->nb_segs == 1 && pkts[i]->pkt_len <= lim)) {
			kind[i] = COPY_ONE;
			(*need)++;
			continue;
		}
		kind[i] = (uint8_t)classify(rt, bh, pkts[i], &nmb, &ni);
		*need += nmb;
		*need_i += ni;
	}
}

/* Write @p n bytes of @p pat into chain @p cp from its byte @p off (bytes past its end: none). */
static void mask_fill(struct rte_mbuf *cp, uint32_t off, uint32_t n, uint8_t pat)
{
	for (; cp != NULL && n != 0; cp = cp->next) {
		uint32_t k;

		if (off >= cp->data_len) {
			off -= cp->data_len;
			continue;
		}
		k = RTE_MIN(n, (uint32_t)cp->data_len - off);
		memset(rte_pktmbuf_mtod_offset(cp, uint8_t *, off), pat, k);
		n -= k;
		off = 0;
	}
}

/*
 * Mask copy @p cp of @p m (issue #26, mask.h): the region of the session's mask, found in the
 * original frame @p m (only read), overwritten in the copy, whose frame bytes start at @p hlen
 * (the session's header) less @p strip (RSPAN: the frame's MACs sit in the header, in front of
 * its tag), @p cap of them; the IPv4 header checksums the region touches are recomputed, and so
 * is the UDP checksum of a VXLAN copy over IPv6, which covers the frame. Counts masked, mask_short
 * and mask_no_anchor.
 */
static __rte_noinline void sbx_mirror_mask_copy(struct sbx_mirror_rt *rt, const struct rte_mbuf *m,
						struct rte_mbuf *cp, uint32_t hlen, uint32_t strip, uint32_t cap)
{
	const struct sbx_mirror_cfg *c = rt->cfg;
	uint32_t avail = RTE_MIN(m->pkt_len, (uint32_t)SBX_MASK_WALK_MAX), end, k;
	uint8_t tmp[SBX_MASK_WALK_MAX], *d = rte_pktmbuf_mtod(cp, uint8_t *);
	const uint8_t *f = rte_pktmbuf_read(m, 0, avail, tmp);
	struct sbx_mask_region r;

	if (f == NULL || !sbx_mask_region(&c->mask, f, m->pkt_len, avail, &r)) {
		rt->st->mask_no_anchor++;
		return;
	}
	if (r.end > m->pkt_len)
		rt->st->mask_short++;
	end = RTE_MIN(r.end, cap);
	if (r.start >= end)
		return; /* the copy ends before the region starts */
	rt->st->masked++;
	if (r.start < strip) /* RSPAN: the MACs, in the header */
		mask_fill(cp, r.start, RTE_MIN(end, strip) - r.start, c->mask.pattern);
	if (end > strip)
		mask_fill(cp, hlen + RTE_MAX(r.start, strip) - strip, end - RTE_MAX(r.start, strip), c->mask.pattern);
	for (k = 0; k < r.nb_ip4; k++) { /* an IP header lies behind the MACs: at hlen - strip + its offset */
		uint32_t at = hlen - strip + r.ip4_off[k];

		if (r.ip4_off[k] + (uint32_t)r.ip4_hlen[k] <= cap && at + r.ip4_hlen[k] <= cp->data_len)
			sbx_mask_ip4_fix(&r, d + at, r.ip4_off[k], r.ip4_hlen[k]);
	}
	if (c->encap == SBX_ENCAP_VXLAN && c->ip_version == 6) /* the UDP checksum covers the frame */
		sbx_vxlan_write(d, c, rt->src_mac, cap, (uint16_t)(d[hlen - 16] << 8 | d[hlen - 15]), 0,
				chain_csum16(cp, hlen, cap));
}

/*
 * The header of a timestamped copy of @p m (@p cap bytes of the frame, carried as @p inner bytes:
 * the frame with the AVSP header @p avsp (NULL: none) inserted at byte 12, the Metamako trailer
 * @p trl (NULL: none) appended) at @p hdr: what write_header() writes, with the lengths (and the
 * VXLAN UDP checksum over IPv6) of @p inner bytes. RSPAN's and SPAN's have no length.
 */
static void ts_header(struct sbx_mirror_engine *e, const struct sbx_mirror_rt *rt, const struct burst_hdr *bh,
		      const struct rte_mbuf *m, uint32_t cap, uint32_t inner, const uint8_t *avsp, const uint8_t *trl,
		      uint8_t *hdr)
{
	const struct sbx_mirror_cfg *c = rt->cfg;
	uint16_t sum = 0, t;

	if (c->encap != SBX_ENCAP_VXLAN) {
		write_header_slow(e, rt, bh, m, cap, hdr);
		if (rt->outer_len) /* ERSPAN: the outer IP length of the longer frame, same id */
			outer_patch(bh, c->ip_version, hdr, bh->len - rt->outer_len + inner, (uint16_t)(e->ip_id - 1));
		return;
	}
	if (c->ip_version == 6) { /* the UDP checksum: the frame's bytes and what is added */
		sum = chain_csum16(m, 0, cap);
		if (avsp != NULL) /* at byte 12, an even length: the frame's bytes keep their parity */
			sum = sbx_csum16(avsp, SBX_TS_AVSP64_LEN, sum);
		if (trl != NULL) {
			t = sbx_csum16(trl, SBX_TS_METAMAKO_LEN, 0);
			sum = sbx_csum_add(sum, (inner - SBX_TS_METAMAKO_LEN) & 1 ? rte_bswap16(t) : t);
		}
	}
	sbx_vxlan_write(hdr, c, rt->src_mac, inner, sbx_vxlan_src_port(mbuf_flow_hash(m, SBX_FLOW_HASH_5TUPLE)),
			e->ip_id++, sum);
}

/* The @p len bytes of @p m from @p off on, into @p d (at least @p len bytes there). */
static inline void read_into(const struct rte_mbuf *m, uint32_t off, uint32_t len, uint8_t *d)
{
	const void *f = rte_pktmbuf_read(m, off, len, d);

	if (f != d)
		rte_memcpy(d, f, len);
}

/*
 * One copy of @p m (@p cap bytes of it) for a session with a timestamp (kind COPY_TS): the
 * session's encapsulation header, then the frame with, for arista64, the AVSP header inserted
 * after its source MAC (after an RSPAN tag: the tag stays outermost) or, for metamako, the
 * trailer appended; both as burst_ts_init() wrote them for the burst (bh->ts). A frame the
 * session copies (strategy, threshold) that fits one mbuf is one mbuf; else the header, MACs and
 * AVSP header are in a header mbuf in front of the rest of the frame, copied or shared (never
 * written), and a Metamako trailer goes behind a copy's last segment or, behind a shared frame,
 * into an mbuf of its own (with no header at all: into @p h, chained at the end; no segment is
 * empty). @p h: an empty mbuf of e->mp (classify() counted it: the burst's bulk allocation),
 * taken over (freed on failure).
 * @return the copy, or NULL counted in drop_nombuf or drop_malformed.
 */
static __rte_noinline struct rte_mbuf *copy_ts(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt,
					       const struct burst_hdr *bh, struct rte_mbuf *m, uint32_t cap,
					       struct rte_mbuf *h)
{
	const struct sbx_mirror_cfg *c = rt->cfg;
	bool ari = c->ts_format == SBX_TS_ARISTA64, share;
	uint32_t ins = ari ? SBX_TS_AVSP64_LEN : 0, tl = ari ? 0 : SBX_TS_METAMAKO_LEN;
	uint32_t strip = c->encap == SBX_ENCAP_RSPAN || ari ? 12 : 0, mac = ari && c->encap != SBX_ENCAP_RSPAN ? 12 : 0;
	uint32_t max = c->encap == SBX_ENCAP_VXLAN ? SBX_VXLAN_MAX_INNER
		       : c->encap == SBX_ENCAP_ERSPAN2 || c->encap == SBX_ENCAP_ERSPAN3 ? SBX_ERSPAN_MAX_INNER
											 : UINT32_MAX;
	uint32_t pre, inner, body_len;
	uint8_t *d = NULL, *dt = NULL;
	struct rte_mbuf *head = h, *body = NULL, *t;

	if (m->pkt_len < strip) /* no MACs to put the header behind */
		goto malformed;
	if (cap + ins + tl > max) /* a tunnel carries at most max bytes */
		cap = max - ins - tl;
	pre = bh->len + mac + ins;
	inner = cap + ins + tl;
	body_len = cap - strip;
	share = c->copy_strategy == SBX_COPY_SHARE || (c->copy_strategy == SBX_COPY_ADAPTIVE && cap > c->copy_threshold);
	if (!share && pre + body_len + tl <= bh->room) { /* one mbuf */
		d = (uint8_t *)rte_pktmbuf_append(h, (uint16_t)(pre + body_len + tl));
		if (body_len != 0)
			read_into(m, strip, body_len, d + pre);
		dt = d + pre + body_len;
	} else { /* the frame's bytes copied or shared, behind the header mbuf h */
		if (body_len != 0 && share && strip <= m->data_len) {
			body = rte_pktmbuf_clone(m, share_pool(e));
			if (body != NULL) {
				if (cap < m->pkt_len)
					chain_trim(body, cap);
				rte_pktmbuf_adj(body, (uint16_t)strip);
			}
		} else if (body_len != 0) {
			share = false;
			body = rte_pktmbuf_copy(m, e->mp, strip, body_len);
		}
		if (body_len != 0 && body == NULL)
			goto nombuf;
		if (pre == 0 && body != NULL) { /* no header (SPAN, metamako): h carries the trailer */
			dt = (uint8_t *)rte_pktmbuf_append(h, (uint16_t)tl);
			if (rte_pktmbuf_chain(body, h) != 0) {
				rte_pktmbuf_free(body);
				goto malformed;
			}
			head = body;
		} else {
			d = (uint8_t *)rte_pktmbuf_append(h, (uint16_t)pre);
			if (body != NULL && rte_pktmbuf_chain(h, body) != 0) {
				rte_pktmbuf_free(body);
				goto malformed;
			}
			/* the trailer: behind a copy in its tailroom, else (a share) in its own mbuf: the
			 * shared buffer's tailroom is other copies' too */
			if (tl != 0 && !share)
				dt = (uint8_t *)rte_pktmbuf_append(h, (uint16_t)tl);
			if (tl != 0 && dt == NULL) {
				t = rte_pktmbuf_alloc(e->mp);
				if (t == NULL)
					goto nombuf;
				dt = (uint8_t *)rte_pktmbuf_append(t, (uint16_t)tl);
				if (rte_pktmbuf_chain(h, t) != 0) {
					rte_pktmbuf_free(t);
					goto malformed;
				}
			}
		}
	}
	if (bh->len != 0)
		ts_header(e, rt, bh, m, cap, inner, ari ? bh->ts : NULL, ari ? NULL : bh->ts, d);
	if (mac != 0)
		read_into(m, 0, 12, d + bh->len);
	if (ari)
		memcpy(d + bh->len + mac, bh->ts, SBX_TS_AVSP64_LEN);
	else
		memcpy(dt, bh->ts, SBX_TS_METAMAKO_LEN);
	if (share)
		rt->st->shared++;
	else
		rt->st->copied++;
	rt->st->timestamped++;
	if (cap < m->pkt_len)
		rt->st->truncated++;
	return head;
nombuf:
	rte_pktmbuf_free(head);
	rt->st->drop_nombuf++;
	return NULL;
malformed:
	rte_pktmbuf_free(head);
	rt->st->drop_malformed++;
	return NULL;
}

/*
 * One mirror copy of @p m made as @p kind says, from the mbufs @p mb[*@p used...] and indirect
 * mbufs @p mi[*@p used_i...] (as many as classify said, taken over by the copy: the indexes move
 * past them) or, for the general code, its own allocations.
 * @return the copy, or NULL (counted: drop_nombuf or drop_malformed).
 */
static inline __attribute__((always_inline)) struct rte_mbuf *
make_copy(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt, const struct burst_hdr *bh, struct rte_mbuf *m,
	  enum copy_kind kind, struct rte_mbuf **mb, unsigned int *used, struct rte_mbuf **mi, unsigned int *used_i)
{
	const struct sbx_mirror_cfg *c = rt->cfg;
	uint32_t len = m->pkt_len, cap = copy_cap(c, bh, m), hlen = bh->len;
	uint32_t strip = c->encap == SBX_ENCAP_RSPAN ? 12 : 0;
	struct rte_mbuf *cp, *h;
	uint8_t *d;

	switch (kind) {
	case COPY_ONE:
		/* the common case, a small one-segment frame: header and frame in one write each,
		 * straight into the new mbuf */
		cp = mb[(*used)++];
		d = rte_pktmbuf_mtod(cp, uint8_t *);
		cp->data_len = (uint16_t)(hlen + cap - strip);
		cp->pkt_len = hlen + cap - strip;
		write_header(e, rt, bh, m, cap, d);
		rte_memcpy(d + hlen, rte_pktmbuf_mtod_offset(m, const uint8_t *, strip), cap - strip);
		rt->st->copied++;
		break;
	case SHARE_ONE:
		/* a one-segment frame: what rte_pktmbuf_clone() does, inline, with a preallocated mbuf;
		 * the frame's buffer is never written (only its refcount) */
		cp = mi[(*used_i)++];
		rte_pktmbuf_attach(cp, m);
		if (cap < len) {
			cp->data_len = (uint16_t)cap;
			cp->pkt_len = cap;
		}
		if (strip)
			rte_pktmbuf_adj(cp, (uint16_t)strip);
		if (hlen) {
			h = mb[(*used)++];
			d = rte_pktmbuf_mtod(h, uint8_t *);
			h->data_len = (uint16_t)hlen;
			write_header(e, rt, bh, m, cap, d);
			h->next = cp;
			h->nb_segs = 2;
			h->pkt_len = hlen + cp->pkt_len;
			cp = h;
		}
		rt->st->shared++;
		break;
	case COPY_SLOW:
		/* rte_pktmbuf_copy() refuses an offset at the very end of the frame: a 12 B frame under
		 * RSPAN keeps nothing but its MACs, which the header already holds */
		cp = cap > strip ? rte_pktmbuf_copy(m, e->mp, strip, cap - strip) : rte_pktmbuf_alloc(e->mp);
		if (cp == NULL) {
			rt->st->drop_nombuf++;
			return NULL;
		}
		if (hlen) {
			d = (uint8_t *)rte_pktmbuf_prepend(cp, (uint16_t)hlen);
			if (d == NULL) { /* headroom too small: cannot happen with RTE_PKTMBUF_HEADROOM >= 96 */
				rte_pktmbuf_free(cp);
				rt->st->drop_nombuf++;
				return NULL;
			}
			write_header_slow(e, rt, bh, m, cap, d);
		}
		rt->st->copied++;
		break;
	case SHARE_SLOW:
		cp = rte_pktmbuf_clone(m, share_pool(e));
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
			write_header_slow(e, rt, bh, m, cap, (uint8_t *)rte_pktmbuf_append(h, (uint16_t)hlen));
			if (rte_pktmbuf_chain(h, cp) != 0) { /* more than RTE_MBUF_MAX_NB_SEGS segments */
				rte_pktmbuf_free(h);
				rte_pktmbuf_free(cp);
				rt->st->drop_malformed++;
				return NULL;
			}
			cp = h;
		}
		rt->st->shared++;
		break;
	case COPY_TS:
		return copy_ts(e, rt, bh, m, cap, mb[(*used)++]); /* counts its own */
	default:
		return NULL;
	}
	if (cap < len)
		rt->st->truncated++;
	if (unlikely(c->mask.from != SBX_MASK_OFF)) /* a copy of its own (classify: never shared) */
		sbx_mirror_mask_copy(rt, m, cp, hlen, strip, cap);
	return cp;
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

	if (rt->outer_len)
		number_copies(rt, rt->txbuf, rt->ntx);
	if (rt->grp != NULL) { /* a tool group: each copy to its flow's member */
		uint64_t ok, ok_bytes, refused;

		rt->grp->mb = e->mb;
		sbx_toolgroup_send(rt->grp, rt->txbuf, rt->ntx, &ok, &ok_bytes, &refused);
		rt->st->mirrored_pkts += ok;
		rt->st->mirrored_bytes += ok_bytes;
		rt->st->drop_txfull += refused;
		rt->ntx = 0;
		return;
	}
	for (i = 0; i < rt->ntx; i++)
		bytes += rt->txbuf[i]->pkt_len;
	sent = sbx_q_tx_wait(&rt->dst, rt->txbuf, rt->ntx, e->dst_wait_cycles);
	if (unlikely(sent < rt->ntx)) {
		for (i = sent; i < rt->ntx; i++)
			lost += rt->txbuf[i]->pkt_len;
		rte_pktmbuf_free_bulk(rt->txbuf + sent, rt->ntx - sent);
		rt->st->drop_txfull += rt->ntx - sent;
	}
	rt->st->mirrored_pkts += sent;
	rt->st->mirrored_bytes += bytes - lost;
	if (e->mb != NULL)
		sbx_mb_add(e->mb, rt->dst.port, SBX_MB_TX, bytes - lost);
	rt->ntx = 0;
}

/*
 * The mbufs of a burst's copies: @p n from @p mp into @p mb and @p n_i from @p mpi into @p mi, one
 * bulk get from each pool. @return true; false when a pool cannot give them all at once (then
 * nothing is taken: the copies take their mbufs one frame at a time, take_one()).
 */
static inline bool alloc_copies(struct rte_mempool *mp, struct rte_mbuf **mb, unsigned int n,
				struct rte_mempool *mpi, struct rte_mbuf **mi, unsigned int n_i)
{
	if (n != 0 && unlikely(rte_pktmbuf_alloc_bulk(mp, mb, n) != 0))
		return false;
	if (n_i != 0 && unlikely(rte_pktmbuf_alloc_bulk(mpi, mi, n_i) != 0)) {
		if (n != 0)
			rte_pktmbuf_free_bulk(mb, n);
		return false;
	}
	return true;
}

/* The @p n (0 or 1) mbufs of @p mp and @p n_i (0 or 1) of @p mpi one copy needs, into @p mb and
 * @p mi, when the burst's bulk gets failed. @return true; false with nothing taken. */
static bool take_one(struct rte_mempool *mp, struct rte_mbuf **mb, unsigned int n, struct rte_mempool *mpi,
		     struct rte_mbuf **mi, unsigned int n_i)
{
	if (n != 0 && (mb[0] = rte_pktmbuf_alloc(mp)) == NULL)
		return false;
	if (n_i != 0 && (mi[0] = rte_pktmbuf_alloc(mpi)) == NULL) {
		if (n != 0)
			rte_pktmbuf_free(mb[0]);
		return false;
	}
	return true;
}

/*
 * The flow hash (fields @p f) of frame @p m, index @p bi in the burst being prepared: computed once
 * per burst and fields (e->fh) whichever sessions and directions ask for it.
 */
static inline uint32_t burst_hash(struct sbx_mirror_engine *e, uint8_t f, uint16_t bi, const struct rte_mbuf *m)
{
	f &= 1;
	if (e->fh_gen[f][bi] != e->gen) {
		e->fh[f][bi] = mbuf_flow_hash(m, (enum sbx_flow_hash_fields)f);
		e->fh_gen[f][bi] = e->gen;
	}
	return e->fh[f][bi];
}

/* bh's part for a session with a timestamp: the AVSP header or Metamako trailer of the burst
 * (time e->ts_ns; the trailer's port: the session's, or @p port, where the burst was seen), and
 * bh->fit less the bytes the timestamp adds (the copy must still fit the destination's MTU). */
static void burst_ts_init(struct burst_hdr *bh, const struct sbx_mirror_engine *e, const struct sbx_mirror_rt *rt,
			  uint16_t port)
{
	const struct sbx_mirror_cfg *c = rt->cfg;
	uint32_t add;

	if (c->ts_format == SBX_TS_ARISTA64)
		add = (uint32_t)sbx_ts_avsp64_write(bh->ts, e->ts_ns);
	else
		add = (uint32_t)sbx_ts_metamako_write(bh->ts, e->ts_ns, c->ts_device,
						      c->ts_port_set ? c->ts_port : (uint8_t)port);
	if (bh->fit != UINT32_MAX)
		bh->fit = bh->fit > add ? bh->fit - add : 0;
}

/*
 * sbx_mirror_copy_burst(), its body for each kind of session (@p tag: a constant, so that the
 * loop of a session to a port carries no test of it). @p tag: the session goes to a tool group
 * and each copy is tagged with its frame's bucket in copy->hash.usr (toolgroup.h) in the pass that
 * makes it (the frame's first line is in cache then); with e->fh_shared (more than one session or
 * direction of this worker hashes the same frames) the hash is taken from, or kept in, the
 * engine's per-burst hashes (burst_hash), frame i being frame @p bsel[i] of the burst being
 * prepared (@p bsel NULL: frame i).
 */
static inline __attribute__((always_inline)) uint16_t
copy_burst_body(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt, struct rte_mbuf **pkts, uint16_t n,
		uint16_t port, uint8_t dir, uint64_t now_ns, struct rte_mbuf **out, uint16_t *out_idx,
		const uint16_t *bsel, const bool tag)
{
	struct rte_mempool *mpi = share_pool(e);
	struct rte_mbuf *mb[SBX_MAX_BURST], *mi[SBX_MAX_BURST];
	uint8_t kind[SBX_MAX_BURST];
	unsigned int need = 0, need_i = 0, used = 0, used_i = 0;
	struct burst_hdr bh;
	uint32_t fast_lim;
	uint16_t i, nc = 0;
	bool bulk;

	burst_hdr_init(&bh, e, rt, port, dir, now_ns);
	if (unlikely(rt->cfg->ts_format != SBX_TS_NONE))
		burst_ts_init(&bh, e, rt, port);
	fast_lim = copy_one_limit(rt->cfg, &bh);
	/* how each copy is made: then one allocation for the burst's copies and headers, one for its
	 * indirect mbufs */
	if (fast_lim != 0) /* two loops: the one without the limit tests none */
		classify_burst(rt, &bh, pkts, n, kind, &need, &need_i, fast_lim);
	else
		classify_burst(rt, &bh, pkts, n, kind, &need, &need_i, 0);
	bulk = alloc_copies(e->mp, mb, need, mpi, mi, need_i);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i], *cp;

		if (unlikely(kind[i] == COPY_NONE))
			continue; /* counted by classify */
		if (i + 1 < n) /* the next frame's first line, read while this copy is written */
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		if (unlikely(!bulk) && !take_one(e->mp, mb + used,
						 kind[i] == COPY_ONE || kind[i] == COPY_TS || (kind[i] == SHARE_ONE && bh.len),
						 mpi, mi + used_i, kind[i] == SHARE_ONE)) {
			rt->st->drop_nombuf++; /* a pool ran dry within the burst */
			continue;
		}
		cp = make_copy(e, rt, &bh, m, (enum copy_kind)kind[i], mb, &used, mi, &used_i);
		if (unlikely(cp == NULL))
			continue; /* counted by make_copy */
		if (tag && e->fh_shared)
			cp->hash.usr = burst_hash(e, rt->grp->fields, bsel != NULL ? bsel[i] : i, m) %
				       SBX_GROUP_BUCKETS;
		else if (tag)
			cp->hash.usr = mbuf_flow_hash(m, (enum sbx_flow_hash_fields)rt->grp->fields) % SBX_GROUP_BUCKETS;
		out[nc] = cp;
		out_idx[nc++] = i;
	}
	return nc;
}

/* copy_burst_body() for session @p rt: to a port, or to a group. */
static uint16_t copy_burst(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt, struct rte_mbuf **pkts, uint16_t n,
			   uint16_t port, uint8_t dir, uint64_t now_ns, struct rte_mbuf **out, uint16_t *out_idx,
			   const uint16_t *bsel)
{
	if (rt->grp == NULL)
		return copy_burst_body(e, rt, pkts, n, port, dir, now_ns, out, out_idx, bsel, false);
	return copy_burst_body(e, rt, pkts, n, port, dir, now_ns, out, out_idx, bsel, true);
}

uint16_t sbx_mirror_copy_burst(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt, struct rte_mbuf **pkts,
			       uint16_t n, uint16_t port, uint8_t dir, uint64_t now_ns, struct rte_mbuf **out,
			       uint16_t *out_idx)
{
	if (rt->grp != NULL && !e->same_burst) /* its own burst: no hash of another one reused */
		e->gen++;
	e->ts_ns = now_ns;
	return copy_burst(e, rt, pkts, n, port, dir, now_ns, out, out_idx, NULL);
}

struct rte_mbuf *sbx_mirror_copy_one(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt, struct rte_mbuf *m,
				     uint16_t port, uint8_t dir, uint64_t now_ns)
{
	struct rte_mbuf *cp = NULL;
	uint16_t idx;

	sbx_mirror_copy_burst(e, rt, &m, 1, port, dir, now_ns, &cp, &idx);
	return cp;
}

static void sbx_mirror_flush_one(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt);

/* e->ts_ns: the time of the burst read at TSC @p tsc, for the sessions that carry a time. */
static inline void ts_burst_time(struct sbx_mirror_engine *e, uint64_t tsc)
{
	e->ts_ns = sbx_worker_clock_ns(&e->tsclk, tsc);
}

/* Whether session @p rt copies frame @p m: its filter, then sampling (what it skips is counted). */
static inline bool frame_taken(struct sbx_mirror_rt *rt, struct rte_mbuf *m)
{
	if (rt->bpf != NULL && (rt->jit ? rt->jit(m) : rte_bpf_exec(rt->bpf, m)) == 0) {
		rt->st->filtered_out++;
		return false;
	}
	if (rt->sample_left) {
		rt->sample_left--;
		rt->st->sampled_out++;
		return false;
	}
	rt->sample_left = rt->cfg->sample - 1;
	return true;
}

/* The copies of session @p rt of the @p ns frames @p sp (frames @p sel of the burst) into its
 * txbuf from ntx on, @p idx (its src_idx from ntx) set to their frames' places in the burst.
 * @return the number of copies (not yet added to ntx) */
static inline uint16_t copy_selected(struct sbx_mirror_engine *e, struct sbx_mirror_rt *rt, struct rte_mbuf **sp,
				     const uint16_t *sel, uint16_t ns, uint16_t port, uint8_t dir, uint64_t now_ns,
				     uint16_t *idx)
{
	uint16_t nc = copy_burst(e, rt, sp, ns, port, dir, now_ns, rt->txbuf + rt->ntx, idx, sel);

	for (uint16_t i = 0; i < nc; i++) /* index in the selection -> index in the burst */
		idx[i] = sel[idx[i]];
	return nc;
}

void sbx_mirror_prepare(struct sbx_mirror_engine *e, uint16_t port, uint8_t dir, struct rte_mbuf **pkts, uint16_t n)
{
	sbx_mirror_prepare_sel(e, port, dir, pkts, n, 0, NULL);
}

void sbx_mirror_prepare_sel(struct sbx_mirror_engine *e, uint16_t port, uint8_t dir, struct rte_mbuf **pkts,
			    uint16_t n, uint64_t take_mask, uint8_t *taken)
{
	const uint8_t *list = dir == SBX_DIR_RX ? e->rx[port] : e->tx[port];
	uint8_t nb = dir == SBX_DIR_RX ? e->nb_rx[port] : e->nb_tx[port];
	uint64_t tsc = rte_rdtsc(), now_ns = 0;
	struct rte_mbuf *sp[SBX_MAX_BURST];
	uint16_t sel[SBX_MAX_BURST];
	uint8_t k;
	uint16_t i, nc;

	if (!e->same_burst) /* a new burst: the flow hashes of the last one are stale */
		e->gen++;
	e->same_burst = false;
	if (unlikely(e->nb_ts != 0) && nb != 0) {
		ts_burst_time(e, tsc);
		now_ns = e->ts_ns; /* ERSPAN III's timestamp: the same clock as AVSP / Metamako */
	}
	for (k = 0; k < nb; k++) {
		struct sbx_mirror_rt *rt = &e->s[list[k]];
		const bool mark = unlikely(taken != NULL) && ((take_mask >> list[k]) & 1); /* flows.sessions */
		uint16_t ns = 0, *idx;

		if (rt->ntx + n > SBX_MIRROR_TXBUF)
			sbx_mirror_flush_one(e, rt);
		if (unlikely(rt->rec_ended != NULL) && *rt->rec_ended)
			continue; /* a capture that ended: nothing more to take */
		rt->burst_start = rt->ntx;
		idx = rt->src_idx + rt->ntx;
		if (rt->rec_ring == NULL && rt->bpf == NULL && rt->cfg->sample == 1) { /* every frame (the common case) */
			if (mark)
				memset(taken, 1, n);
			nc = copy_burst(e, rt, pkts, n, port, dir, now_ns, rt->txbuf + rt->ntx, idx, NULL);
			goto copied;
		}
		/* which frames get a copy: filter, then sampling */
		for (i = 0; i < n; i++)
			if (frame_taken(rt, pkts[i])) {
				sel[ns] = i;
				sp[ns++] = pkts[i];
				if (mark)
					taken[i] = 1;
			}
		if (ns == 0)
			continue;
		if (unlikely(rt->rec_ring != NULL)) { /* a capture: pcapng copies for the recorder's ring */
			struct rte_mbuf *cp;

			for (i = 0; i < ns; i++) {
				cp = sbx_capture_copy(rt, sp[i], port, dir, tsc);
				if (unlikely(cp == NULL))
					continue; /* counted by sbx_capture_copy */
				rt->txbuf[rt->ntx] = cp;
				rt->src_idx[rt->ntx++] = sel[i];
			}
			continue;
		}
		nc = copy_selected(e, rt, sp, sel, ns, port, dir, now_ns, idx);
copied:
		rt->ntx += nc;
	}
}

/* Keep the copies session @p rt prepared of the first @p sent frames of the last TX burst, free the others. */
static void commit_session(struct sbx_mirror_rt *rt, uint16_t sent)
{
	uint16_t j = rt->burst_start;

	while (j < rt->ntx && rt->src_idx[j] < sent)
		j++;
	if (j < rt->ntx) {
		rte_pktmbuf_free_bulk(rt->txbuf + j, rt->ntx - j);
		rt->ntx = j;
	}
}

void sbx_mirror_commit_tx(struct sbx_mirror_engine *e, uint16_t port, uint16_t sent)
{
	uint8_t k;

	for (k = 0; k < e->nb_tx[port]; k++)
		commit_session(&e->s[e->tx[port][k]], sent);
	for (uint16_t m = 0; m < e->nb_map_tx[port]; m++) /* maps */
		commit_session(&e->s[e->map_first + e->map_tx[port][m]], sent);
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

/* ---- maps (issue #27): the copies of the frames each map's rules passed ---- */

void sbx_mirror_prepare_maps(struct sbx_mirror_engine *e, uint16_t port, uint8_t dir, struct rte_mbuf **pkts,
			     uint16_t n, const struct sbx_mapset *sets, const struct sbx_mapset *any,
			     const struct sbx_mapset *take_mask, uint8_t *taken)
{
	struct rte_mbuf *sp[SBX_MAX_BURST];
	uint16_t sel[SBX_MAX_BURST], i;
	const bool rx = dir == SBX_DIR_RX;
	uint64_t now_ns = 0;

	if (!rx) /* every map watching TX here starts this burst (sbx_mirror_commit_tx), copies or not */
		for (uint16_t k = 0; k < e->nb_map_tx[port]; k++) {
			struct sbx_mirror_rt *rt = &e->s[e->map_first + e->map_tx[port][k]];

			rt->burst_start = rt->ntx;
		}
	if (sbx_mapset_empty(any))
		return; /* no map takes a frame of the burst */
	e->gen++; /* the flow hashes of this pass are its own (burst_hash) */
	if (unlikely(e->nb_ts != 0)) {
		ts_burst_time(e, rte_rdtsc());
		now_ns = e->ts_ns; /* ERSPAN III's timestamp: the same clock as AVSP / Metamako */
	}
	for (uint32_t wd = 0; wd < SBX_MAPSET_WORDS; wd++) /* the maps of the burst, word by word */
		for (uint64_t m = any->w[wd]; m != 0; m &= m - 1) {
			const uint32_t j = wd * 64 + (uint32_t)__builtin_ctzll(m);
			const uint64_t bit = 1ULL << (j & 63);
			const bool mark = unlikely(taken != NULL) && (take_mask->w[wd] & bit);
			struct sbx_mirror_rt *rt = &e->s[e->map_first + j];
			uint16_t ns = 0, passed = 0, *idx;

			if (rt->ntx + n > SBX_MIRROR_TXBUF)
				sbx_mirror_flush_one(e, rt);
			rt->burst_start = rt->ntx;
			idx = rt->src_idx + rt->ntx;
			/* the frames its rules passed, then its filter, then sampling */
			for (i = 0; i < n; i++) {
				if (!(sets[i].w[wd] & bit))
					continue;
				passed++;
				if (frame_taken(rt, pkts[i])) {
					sel[ns] = i;
					sp[ns++] = pkts[i];
					if (mark)
						taken[i] = 1;
				}
			}
			e->map_st[j]->passed += passed;
			if (ns != 0)
				rt->ntx += copy_selected(e, rt, sp, sel, ns, port, dir, now_ns, idx);
		}
}
