/* SPDX-License-Identifier: BSD-3-Clause */
/* The worker's ingress stage (secondary/ingress.h, docs/INGRESS.md): decap, strip, tag, dedup. */
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "spanbox/decap.h"
#include "ingress.h"
#include "ts_in_stage.h"

/* Most segments of a frame the dedup stage hashes (longer chains are not compared: passed). */
#define DEDUP_MAX_SEGS 16

/* Are decap rules @p a and @p b the same rule (field by field: struct copies need not copy padding)? */
static bool rule_same(const struct sbx_decap_rule *a, const struct sbx_decap_rule *b)
{
	return a->type == b->type && a->strip_fcs == b->strip_fcs && a->udp_port == b->udp_port &&
	       a->nb_ids == b->nb_ids && !memcmp(a->ids, b->ids, sizeof(a->ids[0]) * RTE_MIN(a->nb_ids, SBX_MAX_DECAP_IDS)) &&
	       a->local_af == b->local_af && !memcmp(a->local_ip, b->local_ip, sizeof(a->local_ip));
}

/* Zero the rule counters of port @p i when its rules are not those they counted for (and mark its
 * tunnel senders in @p drop: they were followed under other rules); remember them. */
static void rules_take(struct sbx_ingress_engine *ig, uint16_t i, const struct sbx_ingress_cfg *c, bool *drop)
{
	uint8_t n = c ? RTE_MIN(c->nb_decap, SBX_MAX_DECAP_RULES) : 0, k;
	bool same = n == ig->nb_rules[i];

	for (k = 0; same && k < n; k++)
		same = rule_same(&ig->rules[i][k], &c->decap[k]);
	if (!same && ig->rules_known) {
		memset(ig->st->ingress.rule_pkts[i], 0, sizeof(ig->st->ingress.rule_pkts[i]));
		memset(ig->st->ingress.rule_bytes[i], 0, sizeof(ig->st->ingress.rule_bytes[i]));
		drop[i] = true;
	}
	for (k = 0; k < n; k++)
		ig->rules[i][k] = c->decap[k];
	ig->nb_rules[i] = n;
}

static void dedup_free(struct sbx_ingress_engine *ig)
{
	rte_free(ig->dedup_mem);
	ig->dedup_mem = NULL;
	ig->dedup = NULL;
	ig->dedup_entries = 0;
}

/*
 * Free the mbufs of the death row: the fragments port @p port's table gave up on (a timeout, the
 * table full, an overlap, more than RTE_LIBRTE_IP_FRAG_MAX_FRAG fragments). Each is a fragment the
 * port received: counted as dropped there (decap_malformed_ip_fragment, drop_packets, its bytes).
 */
static void dr_flush(struct sbx_ingress_engine *ig, uint16_t port)
{
	struct sbx_port_counters *pc = &ig->st->port[port];
	uint64_t bytes = 0, segs = 0;
	uint32_t k;

	if (ig->dr.cnt == 0)
		return;
	for (k = 0; k < ig->dr.cnt; k++) {
		bytes += ig->dr.row[k]->pkt_len;
		segs += ig->dr.row[k]->nb_segs;
	}
	pc->decap_bad_ip_fragment += ig->dr.cnt;
	pc->drop_pkts += ig->dr.cnt;
	pc->drop_bytes += bytes;
	ig->st->reasm_held -= segs;
	rte_ip_frag_free_death_row(&ig->dr, 0);
}

/* Free port @p port's reassembly table, counting the fragments it held as dropped. */
static void reasm_free(struct sbx_ingress_engine *ig, uint16_t port)
{
	unsigned int n;

	if (ig->frag[port] == NULL)
		return;
	/* everything expires at the end of time; the death row takes a bounded number per call */
	for (n = 0; n < SBX_REASM_FLOWS * 2; n++) {
		rte_ip_frag_table_del_expired_entries(ig->frag[port], &ig->dr, UINT64_MAX);
		if (ig->dr.cnt == 0)
			break;
		dr_flush(ig, port);
	}
	rte_ip_frag_table_destroy(ig->frag[port]); /* frees what is left, if anything */
	ig->frag[port] = NULL;
}

/* A reassembly table for every port with decap rules (kept across changes of the tables), none
 * elsewhere. @return 0, or -1 with the reason in @p err (that port's fragments are dropped). */
static int reasm_setup(struct sbx_ingress_engine *ig, const struct sbx_config *cfg, char *err, size_t errlen)
{
	uint16_t i;
	int rc = 0;

	ig->frag_timeout = rte_get_tsc_hz() / 1000 * SBX_REASM_TIMEOUT_MS;
	for (i = 0; i < SBX_MAX_PORTS; i++) {
		bool want = ig->cfg[i] != NULL && ig->cfg[i]->nb_decap > 0;

		if (!want) {
			reasm_free(ig, i);
			continue;
		}
		if (ig->frag[i] != NULL)
			continue;
		/* SBX_REASM_FLOWS buckets of 4 entries for at most SBX_REASM_FLOWS datagrams: a datagram
		 * finds room unless 4 others share its bucket or the table is full (then it is dropped) */
		ig->frag[i] = rte_ip_frag_table_create(SBX_REASM_FLOWS, 4, SBX_REASM_FLOWS, ig->frag_timeout,
						       (int)rte_socket_id());
		if (ig->frag[i] == NULL && rc == 0) {
			snprintf(err, errlen, "port %s: no memory for a reassembly table of %u datagrams: its outer "
				 "fragments are dropped", cfg->ports[i].name, SBX_REASM_FLOWS);
			rc = -1;
		}
	}
	return rc;
}

int sbx_ingress_setup(struct sbx_ingress_engine *ig, const struct sbx_tables *t, struct sbx_worker_stats *st,
		      char *err, size_t errlen)
{
	const struct sbx_config *cfg = &t->cfg;
	uint64_t hz = rte_get_tsc_hz();
	bool drop[SBX_MAX_PORTS] = { false };
	uint32_t entries = 0;
	uint16_t i;
	int rc = 0;

	ig->st = st;
	if (!ig->rules_known) { /* static (workers section): taken once; a restart keeps the slot's senders */
		sbx_senders_init(&ig->senders, ig->src,
				 cfg->tunnel_senders ? cfg->tunnel_senders : SBX_TUNNEL_SENDERS_DEFAULT, ig->nb_src);
		ig->idle_ns = (uint64_t)(cfg->tunnel_idle_s ? cfg->tunnel_idle_s : SBX_TUNNEL_IDLE_S_DEFAULT) * 1000000000ull;
	}
	for (i = 0; i < SBX_MAX_PORTS; i++) {
		const struct sbx_ingress_cfg *c = i < cfg->nb_ports ? &cfg->ports[i].ingress : NULL;

		ig->cfg[i] = NULL;
		ig->window[i] = 0;
		rules_take(ig, i, c, drop);
		if (c == NULL || sbx_ingress_cfg_empty(c))
			continue;
		ig->cfg[i] = c;
		if (c->dedup_window_us != 0) {
			ig->window[i] = hz / 1000000 * c->dedup_window_us + hz % 1000000 * c->dedup_window_us / 1000000;
			if (c->dedup_entries > entries)
				entries = c->dedup_entries;
		}
	}
	ig->rules_known = true;
	for (i = 0; i < cfg->nb_ports && i < SBX_MAX_PORTS; i++) /* timestamps in: the mbuf's time field */
		if (ig->cfg[i] != NULL && ig->cfg[i]->ts_format && sbx_ts_in_dyn_init() != 0 && rc == 0) {
			snprintf(err, errlen, "port %s: no mbuf timestamp field (%s): its frames lose their "
				 "header or trailer but keep no time", cfg->ports[i].name, rte_strerror(rte_errno));
			rc = -1;
		}
	/* a port whose rules changed starts its senders anew (their counts were of the old rules) */
	sbx_senders_expire(&ig->senders, 0, UINT64_MAX, drop, NULL);
	if (reasm_setup(ig, cfg, err, errlen) != 0)
		rc = -1;
	if (entries == 0) {
		dedup_free(ig);
		return rc;
	}
	if (ig->dedup_mem == NULL || ig->dedup_entries != entries) {
		dedup_free(ig);
		ig->dedup_mem = rte_malloc_socket("sbx_dedup", sbx_dedup_mem_size(entries), RTE_CACHE_LINE_SIZE,
						  (int)rte_socket_id());
		if (ig->dedup_mem == NULL) {
			for (i = 0; i < SBX_MAX_PORTS; i++)
				ig->window[i] = 0;
			snprintf(err, errlen, "dedup: no memory for a table of %u entries (%zu bytes): dedup is off",
				 entries, sbx_dedup_mem_size(entries));
			return -1;
		}
		ig->dedup_entries = entries;
		/* the window is per port: the table holds TSC stamps and each lookup brings its own window */
		ig->dedup = sbx_dedup_init(ig->dedup_mem, entries, 0);
	}
	/* a table of the same size is kept as it is: emptying it at every change of the tables (a
	 * mirror, another port's ingress) let the copy of every frame seen before the change through */
	return rc;
}

void sbx_ingress_teardown(struct sbx_ingress_engine *ig)
{
	uint16_t i;

	dedup_free(ig);
	for (i = 0; i < SBX_MAX_PORTS; i++)
		reasm_free(ig, i);
}

void sbx_ingress_tick(struct sbx_ingress_engine *ig, uint64_t now)
{
	uint16_t i;

	for (i = 0; i < SBX_MAX_PORTS; i++)
		if (ig->frag[i] != NULL) {
			rte_ip_frag_table_del_expired_entries(ig->frag[i], &ig->dr, now);
			dr_flush(ig, i);
		}
}

void sbx_ingress_age(struct sbx_ingress_engine *ig, uint64_t now_ns)
{
	uint64_t expired[SBX_MAX_PORTS] = { 0 };
	uint16_t i;

	if (now_ns < ig->next_age_ns || ig->senders.nb_used == 0)
		return;
	ig->next_age_ns = now_ns + 1000000000ull;
	if (sbx_senders_expire(&ig->senders, now_ns, ig->idle_ns, NULL, expired) == 0)
		return;
	for (i = 0; i < SBX_MAX_PORTS; i++)
		ig->st->port[i].tunnel_senders_expired += expired[i];
}

/* Follow @p ti's sender: counters and sequence numbers (RFC 2890). *now_ns: the burst's
 * CLOCK_REALTIME, 0 until a sender of the burst reads it. */
static void source_count(struct sbx_ingress_engine *ig, uint16_t port, const struct sbx_tunnel_info *ti,
			 uint32_t inner_len, uint64_t *now_ns)
{
	struct sbx_tunnel_source *e = sbx_senders_get(&ig->senders, (uint8_t)port, ti->kind, ti->af, ti->id, ti->src);
	int64_t lost;

	if (unlikely(e == NULL)) {
		ig->st->port[port].tunnels_untracked++;
		return;
	}
	e->packets++;
	e->bytes += inner_len;
	e->truncated += ti->truncated;
	/* one clock read per burst (a vDSO call costs ~60 cycles), taken by its first sender */
	if (*now_ns == 0)
		*now_ns = sbx_realtime_ns();
	e->last_seen_ns = *now_ns;
	if (!ti->seq_present)
		return;
	e->seq_frames++;
	switch (sbx_seq_track(&e->seq, ti->seq, &lost)) {
	case SBX_SEQ_GAP:
		e->seq_gaps++;
		break;
	case SBX_SEQ_REORDERED:
		e->seq_reordered++;
		break;
	case SBX_SEQ_DUPLICATE:
		e->seq_duplicates++;
		break;
	case SBX_SEQ_NOT_MAINTAINED:
		e->seq_sticky_zero = 1;
		break;
	default:
		break;
	}
	/* "not maintained": the sender was seen numbering runs of 0, or no number but 0 came yet */
	e->seq_not_maintained = e->seq_sticky_zero || e->seq.zero_run >= e->seq_frames;
}

/* Count a malformed tunnel frame by its reason. */
static void count_malformed(struct sbx_port_counters *pc, enum sbx_decap_result r)
{
	switch (r) {
	case SBX_DECAP_MALFORMED_short_outer: pc->decap_bad_short_outer++; break;
	case SBX_DECAP_MALFORMED_gre_unsupported: pc->decap_bad_gre++; break;
	case SBX_DECAP_MALFORMED_vxlan_flags: pc->decap_bad_vxlan_flags++; break;
	case SBX_DECAP_MALFORMED_inner_runt: pc->decap_bad_inner_runt++; break;
	case SBX_DECAP_MALFORMED_length_mismatch: pc->decap_bad_length++; break;
	case SBX_DECAP_MALFORMED_frame_type: pc->decap_bad_frame_type++; break;
	case SBX_DECAP_MALFORMED_geneve_header: pc->decap_bad_geneve++; break;
	case SBX_DECAP_MALFORMED_gtpu_header: pc->decap_bad_gtpu++; break;
	default: pc->decap_bad_short_outer++; break;
	}
}

/* Could a GRE (47) or UDP (17) datagram, @p ip_proto, be a tunnel of one of @p c's rules? */
static bool proto_candidate(const struct sbx_ingress_cfg *c, uint8_t ip_proto)
{
	unsigned int k;

	for (k = 0; k < c->nb_decap; k++)
		if (ip_proto == 17 ? sbx_decap_type_udp(c->decap[k].type) : !sbx_decap_type_udp(c->decap[k].type))
			return true;
	return false;
}

/*
 * Is a malformed parse of @p ti one of this port's tunnels? Only then is it counted and dropped;
 * otherwise the frame is "not a tunnel" (non_tunnel decides). Every UDP datagram is a VXLAN
 * candidate to the parser (decap.h): it counts for a VXLAN rule on its destination port only. A
 * fault found before the kind was known (an outer IP header cut short or of a wrong length) counts
 * for a port with a rule its protocol could carry (GRE: erspan and gre rules, UDP: vxlan rules):
 * docs/INGRESS.md.
 */
static bool malformed_applies(const struct sbx_ingress_cfg *c, const struct sbx_tunnel_info *ti)
{
	unsigned int k;

	if (ti->kind == SBX_TUN_NONE)
		return proto_candidate(c, ti->ip_proto);
	for (k = 0; k < c->nb_decap; k++) {
		const struct sbx_decap_rule *r = &c->decap[k];

		switch (ti->kind) {
		case SBX_TUN_VXLAN:
			if (r->type == SBX_DECAP_VXLAN && (r->udp_port ? r->udp_port : SBX_VXLAN_PORT) == ti->udp_dst)
				return true;
			break;
		case SBX_TUN_GRE_TEB:
			if (r->type == SBX_DECAP_GRE)
				return true;
			break;
		case SBX_TUN_GENEVE:
		case SBX_TUN_GTPU: /* the parser read the datagram by the map of these rules' ports */
			if (r->type == (ti->kind == SBX_TUN_GENEVE ? SBX_DECAP_GENEVE : SBX_DECAP_GTPU) &&
			    r->udp_port == ti->udp_dst)
				return true;
			break;
		default: /* ERSPAN I, II, III */
			if (r->type == SBX_DECAP_ERSPAN)
				return true;
			break;
		}
	}
	return false;
}

/* Drop reasons of the stage, for the caller's accounting. */
enum verdict { KEEP = 0, DROP = 1, TAKEN = 2 /* by the reassembly table: neither out nor dropped */ };

/*
 * Hand the outer fragment *@p mp (parsed into @p ti) to port @p port's reassembly table (DPDK's
 * rte_ip_frag). @return TAKEN (held, or given up on and counted by dr_flush), KEEP with *mp the
 * reassembled datagram (a chain, the first fragment's headers in front; IPv6: without its
 * Fragment header), or DROP (no table, or padding it cannot cut: counted here).
 */
static enum verdict reassemble(struct sbx_ingress_engine *ig, uint16_t port, const struct sbx_tunnel_info *ti,
			       struct rte_mbuf **mp, uint64_t now)
{
	struct sbx_port_counters *pc = &ig->st->port[port];
	struct rte_mbuf *m = *mp, *d;
	uint32_t end = (uint32_t)ti->ip_off + ti->ip_len;
	uint8_t *ip;

	pc->reasm_fragments++;
	/* Ethernet padding is not the fragment's: the table adds up the fragments' payload lengths */
	if (ig->frag[port] == NULL || (m->pkt_len > end && rte_pktmbuf_trim(m, (uint16_t)(m->pkt_len - end)) != 0)) {
		pc->decap_bad_ip_fragment++;
		return DROP;
	}
	/* the burst array no longer describes the mbufs: a crash from here on leaks, never frees twice */
	if (ig->st->held != 0)
		__atomic_store_n(&ig->st->held, 0, __ATOMIC_RELEASE);
	m->l2_len = ti->ip_off;
	m->l3_len = ti->ip_hlen;
	ip = rte_pktmbuf_mtod_offset(m, uint8_t *, ti->ip_off);
	ig->st->reasm_held += m->nb_segs;
	/* the death row has room for one call's worst (a datagram's fragments and this one) */
	if (ig->dr.cnt > RTE_IP_FRAG_DEATH_ROW_MBUF_LEN - RTE_LIBRTE_IP_FRAG_MAX_FRAG - 1)
		dr_flush(ig, port);
	if (ti->af == 4)
		d = rte_ipv4_frag_reassemble_packet(ig->frag[port], &ig->dr, m, now, (struct rte_ipv4_hdr *)ip);
	else
		d = rte_ipv6_frag_reassemble_packet(ig->frag[port], &ig->dr, m, now, (struct rte_ipv6_hdr *)ip,
						    (struct rte_ipv6_fragment_ext *)(ip + 40));
	dr_flush(ig, port);
	if (d == NULL)
		return TAKEN;
	ig->st->reasm_held -= d->nb_segs;
	pc->reasm_datagrams++;
	if (ti->af == 4) { /* rte_ip_frag leaves the checksum 0 for a TX offload to fill: fill it here */
		struct rte_ipv4_hdr *h = rte_pktmbuf_mtod_offset(d, struct rte_ipv4_hdr *, d->l2_len);

		h->hdr_checksum = 0;
		h->hdr_checksum = rte_ipv4_cksum(h);
	}
	d->ol_flags &= ~(RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6);
	*mp = d;
	return KEEP;
}

/*
 * Decap one frame by the port's rules. Changes *@p mp in place; an outer fragment of GRE or UDP
 * that a rule of the port could concern is reassembled first (*mp becomes the datagram once it is
 * whole). @return KEEP, DROP (counted) or TAKEN (by the reassembly table).
 */
static enum verdict decap_one(struct sbx_ingress_engine *ig, uint16_t port, const struct sbx_ingress_cfg *c,
			      const struct sbx_decap_udp_map *map, struct rte_mbuf **mp, uint64_t now, uint64_t *now_ns)
{
	struct sbx_port_counters *pc = &ig->st->port[port];
	struct rte_mbuf *m = *mp;
	struct sbx_tunnel_info ti;
	enum sbx_decap_result r;
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t inner_len, excess;
	unsigned int k;
	enum verdict v;

	r = sbx_decap_parse_map(f, m->pkt_len, m->data_len, map, &ti);
	if (r == SBX_DECAP_FRAGMENT) {
		/* a later fragment has no GRE or UDP header: what only the whole datagram says, a
		 * protocol some rule of the port could carry is reason enough to reassemble it */
		if (!proto_candidate(c, ti.ip_proto)) {
			r = SBX_DECAP_NOT_TUNNEL; /* a UDP fragment (DNS, NFS) on a port with ERSPAN rules */
		} else {
			v = reassemble(ig, port, &ti, mp, now);
			if (v != KEEP)
				return v;
			m = *mp;
			f = rte_pktmbuf_mtod(m, uint8_t *);
			r = sbx_decap_parse_map(f, m->pkt_len, m->data_len, map, &ti);
			if (r == SBX_DECAP_FRAGMENT) /* not what rte_ip_frag returns: never passed on half */
				r = SBX_DECAP_MALFORMED_short_outer;
		}
	}
	if (r != SBX_DECAP_OK && r != SBX_DECAP_NOT_TUNNEL) {
		if (malformed_applies(c, &ti)) {
			count_malformed(pc, r);
			return DROP;
		}
		r = SBX_DECAP_NOT_TUNNEL; /* e.g. a DNS datagram on a port with a VXLAN rule on 4789 */
	}
	for (k = 0; r == SBX_DECAP_OK && k < c->nb_decap; k++)
		if (sbx_decap_rule_match(&c->decap[k], &ti))
			break;
	if (r != SBX_DECAP_OK || k == c->nb_decap) {
		if (c->non_tunnel == SBX_NON_TUNNEL_DROP) {
			pc->non_tunnel_drop++;
			return DROP;
		}
		pc->non_tunnel_pass++;
		return KEEP;
	}
	inner_len = ti.inner_len;
	if (c->decap[k].strip_fcs) {
		if (inner_len < SBX_FRAME_MIN + 4) {
			pc->decap_bad_inner_runt++;
			return DROP;
		}
		inner_len -= 4;
	}
	if ((ti.kind == SBX_TUN_ERSPAN3 || ti.kind == SBX_TUN_GTPU) && ti.ft == 2) {
		/* ERSPAN III FT 2 and GTP-U (IP): the inner IP packet gets an Ethernet header made of the
		 * outer MACs and the EtherType of its version; the outer headers before it (>= 14 + 20 +
		 * 4 + 12 bytes, GTP-U 14 + 20 + 8 + 8) make room */
		uint16_t et = (f[ti.inner_off] >> 4) == 6 ? 0x86DD : 0x0800;

		if (ti.inner_off < SBX_FRAME_MIN) {
			pc->decap_bad_short_outer++;
			return DROP;
		}
		memmove(f + ti.inner_off - SBX_FRAME_MIN, f, 12);
		f[ti.inner_off - 2] = (uint8_t)(et >> 8);
		f[ti.inner_off - 1] = (uint8_t)et;
		ti.inner_off -= SBX_FRAME_MIN;
		inner_len += SBX_FRAME_MIN;
		pc->decap_ft_ip++;
	}
	/* the inner frame: from inner_off, inner_len bytes (the rest is outer padding or the FCS) */
	excess = m->pkt_len - ti.inner_off - inner_len;
	if (excess > 0 && rte_pktmbuf_trim(m, (uint16_t)excess) != 0) {
		pc->decap_bad_length++; /* the padding spans segments: not a frame we can cut in place */
		return DROP;
	}
	if (rte_pktmbuf_adj(m, ti.inner_off) == NULL) {
		pc->decap_bad_short_outer++;
		return DROP;
	}
	m->packet_type = 0; /* the PMD's classification was of the outer headers */
	m->ol_flags &= ~(RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK | RTE_MBUF_F_RX_VLAN |
			 RTE_MBUF_F_RX_VLAN_STRIPPED | RTE_MBUF_F_RX_RSS_HASH);
	pc->decap_pkts++;
	pc->decap_bytes += m->pkt_len;
	ig->st->ingress.rule_pkts[port][k]++;
	ig->st->ingress.rule_bytes[port][k] += m->pkt_len;
	source_count(ig, port, &ti, m->pkt_len, now_ns);
	return KEEP;
}

/* The dedup verdict of @p m (hashed over its segments). */
static enum verdict dedup_one(struct sbx_ingress_engine *ig, uint16_t port, const struct sbx_ingress_cfg *c,
			      struct rte_mbuf *m, uint64_t now)
{
	struct sbx_port_counters *pc = &ig->st->port[port];
	const uint8_t *seg[DEDUP_MAX_SEGS];
	uint32_t seg_len[DEDUP_MAX_SEGS], nb = 0;
	struct sbx_dedup_stats ds = { 0 };
	const struct rte_mbuf *s;
	bool dup;

	if (ig->dedup == NULL || ig->window[port] == 0)
		return KEEP;
	for (s = m; s != NULL && nb < DEDUP_MAX_SEGS; s = s->next, nb++) {
		seg[nb] = rte_pktmbuf_mtod(s, const uint8_t *);
		seg_len[nb] = s->data_len;
	}
	if (s != NULL) /* a longer chain: not compared */
		return KEEP;
	/* the table keeps TSC stamps: "seen within the window" is now - stamp < window[port] */
	dup = sbx_dedup_check_window(ig->dedup, seg, seg_len, nb, c->dedup_ignore, now, ig->window[port], &ds);
	pc->dedup_unique += ds.unique;
	pc->dedup_evict += ds.evictions;
	if (c->dedup_action == SBX_DEDUP_COUNT) { /* measure before dropping: the duplicate goes on */
		pc->dedup_counted += ds.duplicates;
		return KEEP;
	}
	pc->dedup_dup += ds.duplicates;
	return dup ? DROP : KEEP;
}

uint16_t sbx_ingress_burst(struct sbx_ingress_engine *ig, uint16_t port, struct rte_mbuf **pkts, uint16_t n,
			   struct rte_mbuf **out, struct rte_mbuf **drop, uint16_t *nb_drop, uint64_t now,
			   uint64_t *out_bytes)
{
	const struct sbx_ingress_cfg *c = ig->cfg[port];
	struct sbx_port_counters *pc = &ig->st->port[port];
	uint64_t bytes = 0, dropped_bytes = 0, now_ns = 0;
	uint16_t i, no = 0, nd = 0;
	struct sbx_decap_udp_map map = { .n = 0 };

	if (c->nb_decap) /* the UDP ports of the port's rules: once a burst, not once a frame */
		sbx_decap_udp_map_of(c, &map);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint32_t len = m->pkt_len;
		enum verdict v = KEEP;

		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		/* every stage but dedup writes into the frame: never into a buffer someone else sees */
		if ((c->nb_decap || c->strip || c->tag_vlan || c->ts_format) &&
		    unlikely(!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)) {
			pc->ingress_unwritable++;
			v = DROP;
		}
		if (v == KEEP && c->ts_format) { /* first: the switch or tap added it last */
			if (now_ns == 0)
				now_ns = sbx_realtime_ns();
			if (sbx_ts_in_frame(c, m, pc, &ig->st->ingress.ts[port], now_ns))
				v = DROP;
		}
		if (v == KEEP && c->nb_decap) {
			v = decap_one(ig, port, c, &map, &m, now, &now_ns);
			if (v == TAKEN)
				continue;
		}
		if (v == KEEP && c->strip) {
			struct sbx_strip_result sr = { 0 };
			uint32_t cut = sbx_ingress_strip(rte_pktmbuf_mtod(m, uint8_t *), m->data_len, c->strip, &sr);

			if (cut != 0) /* the addresses moved forward over what was removed */
				rte_pktmbuf_adj(m, (uint16_t)cut);
			pc->vlan_stripped += sr.vlan_tags;
			pc->mpls_stripped += sr.mpls_labels;
			pc->vntag_stripped += sr.vntags;
			pc->etag_stripped += sr.etags;
		}
		if (v == KEEP && c->tag_vlan) {
			uint8_t *f = (uint8_t *)rte_pktmbuf_prepend(m, 4);

			if (f == NULL) {
				pc->ingress_unwritable++;
				v = DROP;
			} else {
				sbx_ingress_tag_push(f + 4, c->tag_vlan);
				pc->tagged++;
			}
		}
		if (v == KEEP && c->dedup_window_us)
			v = dedup_one(ig, port, c, m, now);
		if (v == KEEP) {
			out[no++] = m;
			bytes += m->pkt_len;
		} else {
			drop[nd++] = m;
			dropped_bytes += len; /* as received: what the port's rx_bytes counted */
		}
	}
	pc->drop_pkts += nd;
	pc->drop_bytes += dropped_bytes;
	*nb_drop = nd;
	*out_bytes = bytes;
	return no;
}
