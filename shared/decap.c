/* SPDX-License-Identifier: BSD-3-Clause */
/* Tunnel parser of the ingress decap stage (sources and contract in include/spanbox/decap.h). Reads
 * only the first min(len, avail) bytes of a frame: every read below is preceded by a bound check. */
#include <string.h>

#include "spanbox/bytes.h"
#include "spanbox/decap.h"
#include "spanbox/erspan.h"

#define ETH_HLEN 14
#define ET_IPV4 0x0800
#define ET_IPV6 0x86dd
#define ET_VLAN 0x8100
#define ET_QINQ 0x88a8
#define ET_QINQ_OLD 0x9100
#define ET_TEB 0x6558
#define IPPROTO_GRE_ 47
#define IPPROTO_UDP_ 17
#define IP6_NH_FRAG 44
#define GRE_C 0x8000u
#define GRE_R 0x4000u
#define GRE_K 0x2000u
#define GRE_S 0x1000u
#define GRE_SSR 0x0800u   /* RFC 1701 strict source route */
#define GRE_RECUR0 0x0400u /* RFC 1701 recursion control, its high bit (bit 5) */
#define GRE_VER 0x0007u
#define VXLAN_I 0x08u
#define IPV4_MIN_HLEN 20 /* an ERSPAN III FT 2 payload shorter than this is an inner runt */

/* The inner frame starts at @p off and ends at @p end (the end of the outer IP or UDP payload). */
static enum sbx_decap_result inner(struct sbx_tunnel_info *ti, uint32_t off, uint32_t end, uint32_t lim)
{
	uint32_t min = ti->ft == 2 ? IPV4_MIN_HLEN : ETH_HLEN;

	if (off > lim || off > end)
		return SBX_DECAP_MALFORMED_short_outer;
	ti->inner_off = (uint16_t)off;
	ti->inner_len = end - off;
	if (ti->inner_len < min)
		return SBX_DECAP_MALFORMED_inner_runt;
	return SBX_DECAP_OK;
}

/* The optional 4-byte GRE word (key or sequence number) at *off, if below @p hlim: read, *off past it. */
static bool gre_word(const uint8_t *f, uint32_t *off, uint32_t hlim, bool *present, uint32_t *v)
{
	if (*off + 4 > hlim)
		return false;
	*present = true;
	*v = sbx_get32(f + *off);
	*off += 4;
	return true;
}

/* GRE at @p off, the outer IP payload ending at @p end. */
static enum sbx_decap_result gre(const uint8_t *f, uint32_t off, uint32_t end, uint32_t lim,
				 struct sbx_tunnel_info *ti)
{
	uint32_t hlim = end < lim ? end : lim; /* outer headers must lie in the IP payload and be readable */
	uint16_t flags, proto;
	const uint8_t *e;

	if (off + 4 > hlim)
		return SBX_DECAP_MALFORMED_short_outer;
	flags = sbx_get16(f + off);
	proto = sbx_get16(f + off + 2);
	if (proto == SBX_GRE_PROTO_ERSPAN3)
		ti->kind = SBX_TUN_ERSPAN3;
	else if (proto == SBX_GRE_PROTO_ERSPAN2)
		ti->kind = flags & GRE_S ? SBX_TUN_ERSPAN2 : SBX_TUN_ERSPAN1;
	else if (proto == ET_TEB)
		ti->kind = SBX_TUN_GRE_TEB;
	else
		return SBX_DECAP_NOT_TUNNEL; /* GRE carrying IP, PPTP (version 1), keepalives, ... */
	/* RFC 2784: bits 1-5 non-zero are discarded unless RFC 1701 is implemented; RFC 2890 gives K
	 * and S a meaning, so R, strict source route and recursion are refused; bits 6-12 ignored */
	if ((flags & GRE_VER) != 0 || (flags & (GRE_R | GRE_SSR | GRE_RECUR0)) != 0)
		return SBX_DECAP_MALFORMED_gre_unsupported;
	off += 4;
	if (flags & GRE_C)
		off += 4; /* checksum + reserved1 (not verified) */
	if (((flags & GRE_K) && !gre_word(f, &off, hlim, &ti->key_present, &ti->key)) ||
	    ((flags & GRE_S) && !gre_word(f, &off, hlim, &ti->seq_present, &ti->seq)))
		return SBX_DECAP_MALFORMED_short_outer;
	switch (ti->kind) {
	case SBX_TUN_GRE_TEB:
		ti->id = ti->key_present ? ti->key : 0;
		return inner(ti, off, end, hlim);
	case SBX_TUN_ERSPAN1:
		return inner(ti, off, end, hlim);
	case SBX_TUN_ERSPAN2:
		if (off + 8 > hlim)
			return SBX_DECAP_MALFORMED_short_outer;
		break;
	default: /* type III: 12 bytes, O = 1: 8 more */
		if (off + 12 > hlim)
			return SBX_DECAP_MALFORMED_short_outer;
		break;
	}
	/* first word of types II and III: Ver(4) VLAN(12) COS(3) En/BSO(2) T(1) Session ID(10) */
	e = f + off;
	ti->vlan = sbx_get16(e) & 0xfff;
	ti->cos = e[2] >> 5;
	ti->truncated = (e[2] >> 2) & 1;
	ti->id = sbx_get16(e + 2) & 0x3ff;
	if (ti->kind == SBX_TUN_ERSPAN2)
		return inner(ti, off + 8, end, hlim);
	/* type III word 3: SGT(16) P(1) FT(5) Hw ID(6) D(1) Gra(2) O(1) */
	ti->ft = (e[10] >> 2) & 0x1f;
	off += 12;
	if (e[11] & 1)
		off += 8; /* platform-specific subheader */
	if (ti->ft != 0 && ti->ft != 2) {
		if (off > hlim)
			return SBX_DECAP_MALFORMED_short_outer;
		return SBX_DECAP_MALFORMED_frame_type;
	}
	return inner(ti, off, end, hlim);
}

/* The tunnel UDP destination port @p port carries: @p map's, else the defaults. */
static uint8_t udp_kind(const struct sbx_decap_udp_map *map, uint16_t port)
{
	uint8_t i;

	for (i = 0; map != NULL && i < map->n && i < SBX_MAX_DECAP_RULES; i++)
		if (map->port[i] == port)
			return map->kind[i];
	return port == SBX_GENEVE_PORT ? SBX_TUN_GENEVE : port == SBX_GTPU_PORT ? SBX_TUN_GTPU : SBX_TUN_VXLAN;
}

/* GENEVE (RFC 8926) header at @p off of a UDP datagram ending at @p end. */
static enum sbx_decap_result geneve(const uint8_t *f, uint32_t off, uint32_t end, uint32_t hlim,
				    struct sbx_tunnel_info *ti)
{
	uint32_t opt;

	if (off + 8 > hlim)
		return SBX_DECAP_MALFORMED_short_outer;
	/* Ver(2) Opt Len(6) | O C Rsvd(6) | Protocol Type(16) | VNI(24) Reserved(8) */
	if (f[off] >> 6 != 0)
		return SBX_DECAP_MALFORMED_geneve_header;
	opt = (uint32_t)(f[off] & 0x3f) * 4;
	ti->id = sbx_get32(f + off + 4) >> 8;
	if (sbx_get16(f + off + 2) != ET_TEB)
		return SBX_DECAP_MALFORMED_geneve_header;
	return inner(ti, off + 8 + opt, end, hlim);
}

/* GTP-U (3GPP TS 29.281) header at @p off of a UDP datagram ending at @p end. */
static enum sbx_decap_result gtpu(const uint8_t *f, uint32_t off, uint32_t end, uint32_t hlim,
				  struct sbx_tunnel_info *ti)
{
	uint32_t gend, p;
	uint8_t next;

	if (off + 8 > hlim)
		return SBX_DECAP_MALFORMED_short_outer;
	/* Version(3) PT(1) spare(1) E(1) S(1) PN(1) | Message Type | Length | TEID */
	if (f[off] >> 5 != 1 || !(f[off] & 0x10))
		return SBX_DECAP_MALFORMED_gtpu_header;
	if (f[off + 1] != 255) { /* echo, error indication, end marker: signalling, not a tunnel */
		ti->kind = SBX_TUN_NONE;
		return SBX_DECAP_NOT_TUNNEL;
	}
	ti->id = sbx_get32(f + off + 4);
	gend = off + 8 + sbx_get16(f + off + 2); /* Length: the bytes after the mandatory 8 */
	if (gend > end)
		return SBX_DECAP_MALFORMED_length_mismatch;
	p = off + 8;
	if (f[off] & 0x07) { /* E, S or PN: sequence number (2), N-PDU number (1), next extension type (1) */
		if (p + 4 > hlim || p + 4 > gend)
			return SBX_DECAP_MALFORMED_short_outer;
		next = (f[off] & 0x04) ? f[p + 3] : 0;
		p += 4;
		while (next != 0) { /* extension headers: length in 4-byte units, the next type last */
			uint32_t n;

			if (p + 1 > hlim || f[p] == 0)
				return p + 1 > hlim ? SBX_DECAP_MALFORMED_short_outer : SBX_DECAP_MALFORMED_gtpu_header;
			n = (uint32_t)f[p] * 4;
			if (p + n > gend)
				return SBX_DECAP_MALFORMED_gtpu_header;
			if (p + n > hlim)
				return SBX_DECAP_MALFORMED_short_outer;
			next = f[p + n - 1];
			p += n;
		}
	}
	ti->ft = 2; /* an IP packet: the stage gives it an Ethernet header */
	if (p < gend && p < hlim && f[p] >> 4 != 4 && f[p] >> 4 != 6)
		return SBX_DECAP_MALFORMED_gtpu_header;
	return inner(ti, p, gend, hlim);
}

/* UDP at @p off (read by its destination port: @p map), the outer IP payload ending at @p end. */
static enum sbx_decap_result udp(const uint8_t *f, uint32_t off, uint32_t end, uint32_t lim,
				 const struct sbx_decap_udp_map *map, struct sbx_tunnel_info *ti)
{
	uint32_t ulen, hlim;

	if (off + 8 > (end < lim ? end : lim))
		return SBX_DECAP_MALFORMED_short_outer;
	ti->udp_dst = sbx_get16(f + off + 2);
	ti->kind = udp_kind(map, ti->udp_dst);
	ulen = sbx_get16(f + off + 4);
	if (ulen < 8 || ulen > end - off)
		return SBX_DECAP_MALFORMED_length_mismatch;
	end = off + ulen; /* less than the IP payload: the rest is not the datagram's */
	hlim = end < lim ? end : lim;
	off += 8;
	if (ti->kind == SBX_TUN_GENEVE)
		return geneve(f, off, end, hlim, ti);
	if (ti->kind == SBX_TUN_GTPU)
		return gtpu(f, off, end, hlim, ti);
	if (off + 8 > hlim)
		return SBX_DECAP_MALFORMED_short_outer;
	/* RFC 7348: Flags(8: R R R R I R R R) Reserved(24) VNI(24) Reserved(8); reserved bits ignored */
	if (!(f[off] & VXLAN_I))
		return SBX_DECAP_MALFORMED_vxlan_flags;
	ti->id = sbx_get32(f + off + 4) >> 8;
	return inner(ti, off + 8, end, hlim);
}

enum sbx_decap_result sbx_decap_parse(const uint8_t *frame, uint32_t len, uint32_t avail,
				      struct sbx_tunnel_info *ti)
{
	return sbx_decap_parse_map(frame, len, avail, NULL, ti);
}

void sbx_decap_udp_map_of(const struct sbx_ingress_cfg *c, struct sbx_decap_udp_map *map)
{
	uint8_t k;

	map->n = 0;
	for (k = 0; k < c->nb_decap && k < SBX_MAX_DECAP_RULES; k++) {
		const struct sbx_decap_rule *r = &c->decap[k];

		if (!sbx_decap_type_udp(r->type))
			continue;
		map->port[map->n] = r->udp_port;
		map->kind[map->n++] = r->type == SBX_DECAP_GENEVE ? SBX_TUN_GENEVE
				      : r->type == SBX_DECAP_GTPU ? SBX_TUN_GTPU : SBX_TUN_VXLAN;
	}
}

enum sbx_decap_result sbx_decap_parse_map(const uint8_t *frame, uint32_t len, uint32_t avail,
					  const struct sbx_decap_udp_map *map, struct sbx_tunnel_info *ti)
{
	uint32_t lim = avail < len ? avail : len; /* bytes that may be read */
	uint32_t off = 12, end;
	uint16_t type;
	uint8_t proto;
	int tags = 0;

	memset(ti, 0, sizeof(*ti));
	if (lim < ETH_HLEN)
		return SBX_DECAP_NOT_TUNNEL;
	type = sbx_get16(frame + off);
	while ((type == ET_VLAN || type == ET_QINQ || type == ET_QINQ_OLD) && tags < 2) {
		if (off + 6 > lim)
			return SBX_DECAP_NOT_TUNNEL; /* a cut tag: nothing says what follows */
		off += 4;
		tags++;
		type = sbx_get16(frame + off);
	}
	off += 2; /* the outer IP header */
	ti->ip_off = (uint16_t)off;
	if (type == ET_IPV4) {
		uint32_t ihl, tot;

		if (off + 10 > lim || (frame[off] >> 4) != 4 || (frame[off] & 0xf) < 5)
			return SBX_DECAP_NOT_TUNNEL;
		proto = frame[off + 9];
		if (proto != IPPROTO_GRE_ && proto != IPPROTO_UDP_)
			return SBX_DECAP_NOT_TUNNEL;
		ti->ip_proto = proto;
		if (off + (uint32_t)(frame[off] & 0xf) * 4 > lim) /* says GRE/UDP, its header is cut */
			return SBX_DECAP_MALFORMED_short_outer;
		ti->af = 4;
		memcpy(ti->src, frame + off + 12, 4);
		memcpy(ti->dst, frame + off + 16, 4);
		ihl = (uint32_t)(frame[off] & 0xf) * 4;
		tot = sbx_get16(frame + off + 2);
		if (tot > len - off || tot < ihl)
			return SBX_DECAP_MALFORMED_length_mismatch;
		ti->ip_hlen = (uint16_t)ihl;
		ti->ip_len = tot;
		if ((sbx_get16(frame + off + 6) & 0x3fff) != 0) /* MF or a fragment offset */
			return SBX_DECAP_FRAGMENT;
		end = off + tot; /* shorter than the frame: Ethernet padding follows */
		off += ihl;
	} else if (type == ET_IPV6) {
		if (off + 7 > lim || (frame[off] >> 4) != 6)
			return SBX_DECAP_NOT_TUNNEL;
		proto = frame[off + 6];
		if (proto == IP6_NH_FRAG) {
			/* a fragment of a tunnel: the Fragment header says what it carries */
			if (off + 41 > lim || (frame[off + 40] != IPPROTO_GRE_ && frame[off + 40] != IPPROTO_UDP_))
				return SBX_DECAP_NOT_TUNNEL;
			ti->ip_proto = frame[off + 40];
			if (off + 48 > lim)
				return SBX_DECAP_MALFORMED_short_outer; /* the Fragment header is cut */
		} else if (proto != IPPROTO_GRE_ && proto != IPPROTO_UDP_) {
			return SBX_DECAP_NOT_TUNNEL; /* extension headers are not walked */
		} else if (off + 40 > lim) {
			ti->ip_proto = proto;
			return SBX_DECAP_MALFORMED_short_outer; /* says GRE/UDP, its header is cut */
		} else {
			ti->ip_proto = proto;
		}
		ti->af = 6;
		memcpy(ti->src, frame + off + 8, 16);
		memcpy(ti->dst, frame + off + 24, 16);
		if (sbx_get16(frame + off + 4) > len - off - 40 || (proto == IP6_NH_FRAG && sbx_get16(frame + off + 4) < 8))
			return SBX_DECAP_MALFORMED_length_mismatch;
		ti->ip_len = 40 + (uint32_t)sbx_get16(frame + off + 4);
		ti->ip_hlen = proto == IP6_NH_FRAG ? 48 : 40;
		end = off + 40 + sbx_get16(frame + off + 4);
		if (proto == IP6_NH_FRAG) {
			/* an atomic fragment (offset 0, M 0: RFC 6946) is no fragment: "processed in
			 * isolation", its payload parsed behind the Fragment header; any other waits for
			 * reassembly (a lone one was dropped there after SBX_REASM_TIMEOUT_MS) */
			if ((sbx_get16(frame + off + 42) & 0xfff9) != 0)
				return SBX_DECAP_FRAGMENT;
			proto = ti->ip_proto;
			off += 48;
		} else {
			off += 40;
		}
	} else {
		return SBX_DECAP_NOT_TUNNEL;
	}
	return proto == IPPROTO_GRE_ ? gre(frame, off, end, lim, ti) : udp(frame, off, end, lim, map, ti);
}

bool sbx_decap_rule_match(const struct sbx_decap_rule *rule, const struct sbx_tunnel_info *ti)
{
	uint8_t i;

	switch (rule->type) {
	case SBX_DECAP_ERSPAN:
		if (ti->kind != SBX_TUN_ERSPAN1 && ti->kind != SBX_TUN_ERSPAN2 && ti->kind != SBX_TUN_ERSPAN3)
			return false;
		if (ti->kind == SBX_TUN_ERSPAN1 && rule->nb_ids > 0)
			return false; /* type I carries no session id */
		break;
	case SBX_DECAP_VXLAN:
		if (ti->kind != SBX_TUN_VXLAN || ti->udp_dst != (rule->udp_port ? rule->udp_port : SBX_VXLAN_PORT))
			return false;
		break;
	case SBX_DECAP_GRE:
		if (ti->kind != SBX_TUN_GRE_TEB || (rule->nb_ids > 0 && !ti->key_present))
			return false;
		break;
	case SBX_DECAP_GENEVE:
		if (ti->kind != SBX_TUN_GENEVE || ti->udp_dst != (rule->udp_port ? rule->udp_port : SBX_GENEVE_PORT))
			return false;
		break;
	case SBX_DECAP_GTPU:
		if (ti->kind != SBX_TUN_GTPU || ti->udp_dst != (rule->udp_port ? rule->udp_port : SBX_GTPU_PORT))
			return false;
		break;
	default:
		return false;
	}
	if (rule->local_af != 0 &&
	    (rule->local_af != ti->af || memcmp(rule->local_ip, ti->dst, ti->af == 6 ? 16 : 4) != 0))
		return false;
	if (rule->nb_ids == 0)
		return true;
	for (i = 0; i < rule->nb_ids && i < SBX_MAX_DECAP_IDS; i++)
		if (rule->ids[i] == ti->id)
			return true;
	return false;
}

const char *sbx_tunnel_kind_name(uint8_t kind)
{
	static const char *const names[] = {
		[SBX_TUN_NONE] = "none", [SBX_TUN_ERSPAN1] = "erspan1", [SBX_TUN_ERSPAN2] = "erspan2",
		[SBX_TUN_ERSPAN3] = "erspan3", [SBX_TUN_VXLAN] = "vxlan", [SBX_TUN_GRE_TEB] = "gre",
		[SBX_TUN_GENEVE] = "geneve", [SBX_TUN_GTPU] = "gtpu",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "unknown";
}

const char *sbx_decap_result_name(enum sbx_decap_result r)
{
	static const char *const names[SBX_DECAP_RESULT_MAX] = {
		[SBX_DECAP_NOT_TUNNEL] = "not_tunnel",
		[SBX_DECAP_OK] = "ok",
		[SBX_DECAP_FRAGMENT] = "fragment",
#define _(n, h) [SBX_DECAP_MALFORMED_##n] = #n,
		foreach_sbx_decap_malformed
#undef _
	};

	return (unsigned)r < SBX_DECAP_RESULT_MAX ? names[r] : "unknown";
}
