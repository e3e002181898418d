/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests (TAP) of the tunnel parser of the ingress decap stage (shared/decap.c): hand-built
 * frames for every branch (each kind, each malformed reason, outer tags, IPv6, GRE C/K/S, ERSPAN III
 * O bit and FT, VXLAN flags, fragments, padding), rule matching, and round trips through our own
 * ERSPAN II/III encoder (shared/erspan.c). Every parse reads a heap copy of exactly `avail` bytes,
 * so a sanitizer build (tests/e2e/98_sanitizers.sh) sees any read past it.
 * usage: test_decap <repo-root>   (the argument is unused)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spanbox/decap.h"
#include "spanbox/erspan.h"
#include "tap.h"

#define INNER_LEN 60
static uint8_t inner_frame[INNER_LEN];

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/* Outer Ethernet with @p ntags tags (first 0x88a8 when qinq) and EtherType @p et; returns its length. */
static uint32_t eth(uint8_t *p, int ntags, uint16_t tpid, uint16_t et)
{
	uint32_t off = 12;
	int t;

	memset(p, 0, 12);
	p[0] = 0x02;
	p[6] = 0x02;
	p[11] = 1;
	for (t = 0; t < ntags; t++, off += 4) {
		put16(p + off, t == 0 ? tpid : 0x8100);
		put16(p + off + 2, (uint16_t)(100 + t));
	}
	put16(p + off, et);
	return off + 2;
}

/* IPv4 header, protocol @p proto, total length 20 + @p plen, flags/fragment word @p frag. */
static uint32_t ipv4(uint8_t *p, uint8_t proto, uint32_t plen, uint16_t frag)
{
	memset(p, 0, 20);
	p[0] = 0x45;
	put16(p + 2, (uint16_t)(20 + plen));
	put16(p + 6, frag);
	p[8] = 64;
	p[9] = proto;
	put32(p + 12, 0xc0000201); /* 192.0.2.1 */
	put32(p + 16, 0xc000020a); /* 192.0.2.10 */
	return 20;
}

static const uint8_t v6src[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
static const uint8_t v6dst[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x10 };

static uint32_t ipv6(uint8_t *p, uint8_t nh, uint32_t plen)
{
	memset(p, 0, 40);
	p[0] = 0x60;
	put16(p + 4, (uint16_t)plen);
	p[6] = nh;
	p[7] = 64;
	memcpy(p + 8, v6src, 16);
	memcpy(p + 24, v6dst, 16);
	return 40;
}

/* GRE with @p flags (C/K/S bits, version) and @p proto; key 0x11223344, sequence 0x55667788. */
static uint32_t gre(uint8_t *p, uint16_t flags, uint16_t proto)
{
	uint32_t off = 4;

	put16(p, flags);
	put16(p + 2, proto);
	if (flags & 0x8000) {
		put32(p + off, 0xabcd0000);
		off += 4;
	}
	if (flags & 0x2000) {
		put32(p + off, 0x11223344);
		off += 4;
	}
	if (flags & 0x1000) {
		put32(p + off, 0x55667788);
		off += 4;
	}
	return off;
}

/* UDP header to port @p dport for @p plen payload bytes, then a VXLAN header (flags, VNI). */
static uint32_t udp_vxlan(uint8_t *p, uint16_t dport, uint32_t plen, uint8_t flags, uint32_t vni)
{
	put16(p, 54321);
	put16(p + 2, dport);
	put16(p + 4, (uint16_t)(8 + 8 + plen));
	put16(p + 6, 0);
	memset(p + 8, 0, 8);
	p[8] = flags;
	put32(p + 12, vni << 8);
	return 16;
}

/* ERSPAN II header: VLAN, COS, T, session. */
static uint32_t erspan2(uint8_t *p, uint16_t vlan, uint8_t cos, int t, uint16_t sess)
{
	put32(p, (1u << 28) | (uint32_t)vlan << 16 | (uint32_t)cos << 13 | (uint32_t)t << 10 | sess);
	put32(p + 4, 0x12345);
	return 8;
}

/* ERSPAN III header with frame type @p ft and O bit @p o (+8-byte subheader). */
static uint32_t erspan3(uint8_t *p, uint16_t vlan, uint8_t cos, uint16_t sess, uint8_t ft, int o)
{
	put32(p, (2u << 28) | (uint32_t)vlan << 16 | (uint32_t)cos << 13 | sess);
	put32(p + 4, 0xdeadbeef);
	put16(p + 8, 0x1234);
	put16(p + 10, (uint16_t)((uint32_t)(ft & 0x1f) << 10 | (o ? 1 : 0)));
	if (!o)
		return 12;
	put32(p + 12, 0x3u << 26 | 5);
	put32(p + 16, 0);
	return 20;
}

/* A whole ERSPAN II frame (IPv4, @p ntags outer tags, GRE @p gre_flags, the inner frame); its length. */
static uint32_t erspan2_frame(uint8_t *f, int ntags, uint16_t tpid, uint16_t gre_flags, uint16_t vlan, uint8_t cos,
			      int t, uint16_t sess)
{
	uint32_t o = eth(f, ntags, tpid, 0x0800), l3 = o;

	o += ipv4(f + o, 47, 0, 0);
	o += gre(f + o, gre_flags, 0x88be);
	o += erspan2(f + o, vlan, cos, t, sess);
	memcpy(f + o, inner_frame, INNER_LEN);
	o += INNER_LEN;
	put16(f + l3 + 2, (uint16_t)(o - l3)); /* IPv4 total length */
	return o;
}

/* Parse @p f of @p len bytes from a heap copy of @p avail bytes (ASan sees reads past it). */
static enum sbx_decap_result parse_n(const uint8_t *f, uint32_t len, uint32_t avail, struct sbx_tunnel_info *ti)
{
	uint8_t *c = malloc(avail ? avail : 1);
	enum sbx_decap_result r;

	memcpy(c, f, avail);
	r = sbx_decap_parse(c, len, avail, ti);
	free(c);
	return r;
}

static enum sbx_decap_result parse(const uint8_t *f, uint32_t len, struct sbx_tunnel_info *ti)
{
	return parse_n(f, len, len, ti);
}

static bool inner_is(const uint8_t *f, const struct sbx_tunnel_info *ti, const uint8_t *want, uint32_t wlen)
{
	return ti->inner_len == wlen && memcmp(f + ti->inner_off, want, wlen) == 0;
}

/* Every cut of @p f inside its outer headers, [from, inner_off), read with avail < len: short_outer. */
static void cuts(const char *what, const uint8_t *f, uint32_t len, uint32_t from, uint32_t to,
		 enum sbx_decap_result want)
{
	struct sbx_tunnel_info ti;
	uint32_t a, bad = 0, first = 0;

	for (a = from; a < to; a++)
		if (parse_n(f, len, a, &ti) != want && bad++ == 0)
			first = a;
	check(bad == 0, "%s: cut at every byte %u..%u (avail < len) is %s (%u wrong, first at %u)", what, from,
	      to - 1, sbx_decap_result_name(want), bad, first);
}

/* UDP to @p dport carrying @p hlen header bytes then @p plen payload bytes (the caller writes them). */
static uint32_t udp_hdr(uint8_t *p, uint16_t dport, uint32_t hlen, uint32_t plen)
{
	put16(p, 54321);
	put16(p + 2, dport);
	put16(p + 4, (uint16_t)(8 + hlen + plen));
	put16(p + 6, 0);
	return 8;
}

/* GENEVE (RFC 8926) over IPv4 (or IPv6) to port @p dport: version @p ver, @p optw 4-byte option words,
 * protocol @p proto, VNI @p vni, then the inner frame. @return the frame's length; *inner_at set. */
static uint32_t geneve_frame(uint8_t *f, bool v6, uint16_t dport, uint8_t ver, uint8_t optw, uint16_t proto,
			     uint32_t vni, uint32_t *inner_at)
{
	uint32_t hlen = 8 + 4u * optw, o = eth(f, 1, 0x8100, v6 ? 0x86dd : 0x0800), l3 = o, i;

	o += v6 ? ipv6(f + o, 17, 8 + hlen + INNER_LEN) : ipv4(f + o, 17, 8 + hlen + INNER_LEN, 0);
	o += udp_hdr(f + o, dport, hlen, INNER_LEN);
	f[o] = (uint8_t)(ver << 6 | optw);
	f[o + 1] = 0;
	put16(f + o + 2, proto);
	put32(f + o + 4, vni << 8);
	for (i = 0; i < 4u * optw; i++)
		f[o + 8 + i] = (uint8_t)(0x80 + i); /* option class/type/length bytes: skipped by length */
	o += hlen;
	*inner_at = o;
	memcpy(f + o, inner_frame, INNER_LEN);
	(void)l3;
	return o + INNER_LEN;
}

/* GTP-U (3GPP TS 29.281) over IPv4 to port 2152: message type @p type, TEID @p teid, @p ext PDU
 * session container extension headers (E flag), then @p ip (an IPv4 packet of @p iplen bytes). */
static uint32_t gtpu_frame(uint8_t *f, uint8_t type, uint32_t teid, int ext, const uint8_t *ip, uint32_t iplen,
			   uint32_t *inner_at)
{
	uint32_t hlen = 8 + (ext ? 4 + 4u * (uint32_t)ext : 0), o = eth(f, 0, 0, 0x0800), g;
	int k;

	o += ipv4(f + o, 17, 8 + hlen + iplen, 0);
	o += udp_hdr(f + o, 2152, hlen, iplen);
	g = o;
	f[o] = (uint8_t)(0x30 | (ext ? 0x04 : 0)); /* version 1, PT 1, E */
	f[o + 1] = type;
	put16(f + o + 2, (uint16_t)(hlen - 8 + iplen));
	put32(f + o + 4, teid);
	o += 8;
	if (ext) {
		put16(f + o, 0); /* sequence number */
		f[o + 2] = 0;    /* N-PDU number */
		f[o + 3] = 0x85; /* next: PDU session container */
		o += 4;
		for (k = 0; k < ext; k++) { /* 4 bytes each: length 1, two content bytes, next type */
			f[o] = 1;
			f[o + 1] = 0x10;
			f[o + 2] = 0x09;
			f[o + 3] = k + 1 < ext ? 0x85 : 0;
			o += 4;
		}
	}
	(void)g;
	*inner_at = o;
	memcpy(f + o, ip, iplen);
	return o + iplen;
}

/* GENEVE and GTP-U (issue #26): parsed by their default ports or a rule's map, matched by VNI/TEID,
 * malformed ones by reason. */
static void test_geneve_gtpu(void)
{
	static uint8_t f[2048];
	uint8_t ip[40];
	struct sbx_tunnel_info ti;
	struct sbx_decap_udp_map map = { .n = 1, .port = { 7000 }, .kind = { SBX_TUN_GENEVE } };
	struct sbx_decap_rule gen = { .type = SBX_DECAP_GENEVE, .udp_port = 6081, .nb_ids = 1, .ids = { 77 } };
	struct sbx_decap_rule gtp = { .type = SBX_DECAP_GTPU, .udp_port = 2152 };
	uint32_t len, at;
	enum sbx_decap_result r;

	len = geneve_frame(f, false, 6081, 0, 0, 0x6558, 77, &at);
	r = parse(f, len, &ti);
	check(r == SBX_DECAP_OK && ti.kind == SBX_TUN_GENEVE && ti.id == 77 && ti.inner_off == at &&
	      inner_is(f, &ti, inner_frame, INNER_LEN), "GENEVE (VLAN, IPv4, no options): ok, VNI 77, the inner frame");
	check(sbx_decap_rule_match(&gen, &ti), "... a geneve rule of VNI 77 matches it");
	gen.ids[0] = 78;
	check(!sbx_decap_rule_match(&gen, &ti), "... one of VNI 78 does not");
	len = geneve_frame(f, true, 6081, 0, 5, 0x6558, 0xabcdef, &at);
	r = parse(f, len, &ti);
	check(r == SBX_DECAP_OK && ti.kind == SBX_TUN_GENEVE && ti.af == 6 && ti.id == 0xabcdef &&
	      inner_is(f, &ti, inner_frame, INNER_LEN), "GENEVE over IPv6 with 20 bytes of options: skipped by Opt Len");
	len = geneve_frame(f, false, 6081, 1, 0, 0x6558, 1, &at);
	check(parse(f, len, &ti) == SBX_DECAP_MALFORMED_geneve_header && ti.kind == SBX_TUN_GENEVE,
	      "GENEVE version 1: malformed geneve_header");
	len = geneve_frame(f, false, 6081, 0, 0, 0x0800, 1, &at);
	check(parse(f, len, &ti) == SBX_DECAP_MALFORMED_geneve_header, "GENEVE carrying IPv4 (0x0800): geneve_header");
	len = geneve_frame(f, false, 6081, 0, 40, 0x6558, 1, &at);
	put16(f + 14 + 4 + 2, (uint16_t)(20 + 8 + 8 + 40)); /* IPv4 total length: the options run past it */
	put16(f + 14 + 4 + 20 + 4, (uint16_t)(8 + 8 + 40));
	r = parse(f, 14 + 4 + 20 + 8 + 8 + 40, &ti);
	check(r == SBX_DECAP_MALFORMED_short_outer || r == SBX_DECAP_MALFORMED_inner_runt,
	      "GENEVE options longer than the datagram: short_outer (%s)", sbx_decap_result_name(r));
	len = geneve_frame(f, false, 7000, 0, 0, 0x6558, 5, &at);
	check(parse(f, len, &ti) == SBX_DECAP_MALFORMED_vxlan_flags && ti.kind == SBX_TUN_VXLAN && ti.udp_dst == 7000,
	      "GENEVE on port 7000 without a map: read as a VXLAN candidate (no I flag)");
	check(sbx_decap_parse_map(f, len, len, &map, &ti) == SBX_DECAP_OK && ti.kind == SBX_TUN_GENEVE && ti.id == 5,
	      "... with a map naming 7000 geneve: GENEVE, VNI 5");

	memset(ip, 0, sizeof(ip));
	ip[0] = 0x45;
	put16(ip + 2, sizeof(ip));
	ip[9] = 6;
	len = gtpu_frame(f, 255, 0x01020304, 0, ip, sizeof(ip), &at);
	r = parse(f, len, &ti);
	check(r == SBX_DECAP_OK && ti.kind == SBX_TUN_GTPU && ti.id == 0x01020304 && ti.ft == 2 && ti.inner_off == at &&
	      inner_is(f, &ti, ip, sizeof(ip)), "GTP-U G-PDU: ok, TEID, ft 2, the inner IPv4 packet");
	check(sbx_decap_rule_match(&gtp, &ti), "... a gtpu rule without TEIDs matches it");
	gtp.nb_ids = 1;
	gtp.ids[0] = 9;
	check(!sbx_decap_rule_match(&gtp, &ti), "... one of TEID 9 does not");
	len = gtpu_frame(f, 255, 7, 2, ip, sizeof(ip), &at);
	r = parse(f, len, &ti);
	check(r == SBX_DECAP_OK && ti.inner_off == at && inner_is(f, &ti, ip, sizeof(ip)),
	      "GTP-U with the optional field and two extension headers: walked, the inner packet");
	ip[0] = 0x60;
	len = gtpu_frame(f, 255, 7, 0, ip, sizeof(ip), &at);
	check(parse(f, len, &ti) == SBX_DECAP_OK && inner_is(f, &ti, ip, sizeof(ip)), "GTP-U carrying IPv6: ok");
	ip[0] = 0x45;
	len = gtpu_frame(f, 1, 7, 0, ip, sizeof(ip), &at);
	check(parse(f, len, &ti) == SBX_DECAP_NOT_TUNNEL && ti.kind == SBX_TUN_NONE, "GTP-U echo request: not_tunnel");
	len = gtpu_frame(f, 255, 7, 0, ip, sizeof(ip), &at);
	f[14 + 20 + 8] = 0x50; /* version 2 */
	check(parse(f, len, &ti) == SBX_DECAP_MALFORMED_gtpu_header, "GTP-U version 2: gtpu_header");
	len = gtpu_frame(f, 255, 7, 0, ip, sizeof(ip), &at);
	f[at] = 0x00;
	check(parse(f, len, &ti) == SBX_DECAP_MALFORMED_gtpu_header, "GTP-U payload neither IPv4 nor IPv6: gtpu_header");
	len = gtpu_frame(f, 255, 7, 1, ip, sizeof(ip), &at);
	f[at - 4] = 200; /* the extension header's length runs past the datagram */
	check(parse(f, len, &ti) == SBX_DECAP_MALFORMED_gtpu_header, "GTP-U extension header past the datagram: gtpu_header");
	len = gtpu_frame(f, 255, 7, 1, ip, sizeof(ip), &at);
	f[at - 4] = 0; /* a zero-length extension header would never end */
	check(parse(f, len, &ti) == SBX_DECAP_MALFORMED_gtpu_header, "GTP-U zero-length extension header: gtpu_header");
	len = gtpu_frame(f, 255, 7, 0, ip, sizeof(ip), &at);
	put16(f + 14 + 20 + 8 + 2, 500); /* Length past the datagram */
	check(parse(f, len, &ti) == SBX_DECAP_MALFORMED_length_mismatch, "GTP-U Length past the datagram: length_mismatch");
	len = gtpu_frame(f, 255, 7, 0, ip, sizeof(ip), &at);
	for (uint32_t cut = 14 + 20 + 8; cut < at; cut++)
		if (parse_n(f, len, cut, &ti) != SBX_DECAP_MALFORMED_short_outer) {
			check(false, "GTP-U read with %u bytes available: short_outer", cut);
			return;
		}
	check(true, "GTP-U read with every cut of its headers available: short_outer, nothing read past");
}

int main(void)
{
	struct sbx_tunnel_info ti;
	enum sbx_decap_result r;
	uint8_t f[2048];
	uint32_t o, l3, ip_at, i;

	for (i = 0; i < INNER_LEN; i++)
		inner_frame[i] = (uint8_t)(0xa0 + i);
	inner_frame[12] = 0x08;
	inner_frame[13] = 0x00;

	/* --- not a tunnel --- */
	memset(f, 0, sizeof(f));
	check(parse(f, 10, &ti) == SBX_DECAP_NOT_TUNNEL && ti.kind == SBX_TUN_NONE, "10-byte frame: not_tunnel");
	check(parse_n(f, 60, 0, &ti) == SBX_DECAP_NOT_TUNNEL, "avail 0: not_tunnel, nothing read");
	o = eth(f, 0, 0, 0x0806);
	check(parse(f, 60, &ti) == SBX_DECAP_NOT_TUNNEL, "ARP: not_tunnel");
	o = eth(f, 0, 0, 0x0800);
	o += ipv4(f + o, 6, 40, 0);
	check(parse(f, 74, &ti) == SBX_DECAP_NOT_TUNNEL, "IPv4 TCP: not_tunnel");
	o = eth(f, 0, 0, 0x86dd);
	o += ipv6(f + o, 0, 64); /* hop-by-hop in front of GRE: not walked */
	f[o] = 47;
	check(parse(f, o + 64, &ti) == SBX_DECAP_NOT_TUNNEL, "IPv6 hop-by-hop options in front of GRE: not_tunnel");
	o = eth(f, 0, 0, 0x0800);
	o += ipv4(f + o, 47, 4 + 40, 0);
	o += gre(f + o, 0, 0x0800);
	check(parse(f, o + 40, &ti) == SBX_DECAP_NOT_TUNNEL, "GRE carrying IPv4 (0x0800): not_tunnel");
	o = eth(f, 0, 0, 0x0800);
	o += ipv4(f + o, 47, 8 + 40, 0);
	o += gre(f + o, 0x2001, 0x880b);
	check(parse(f, o + 40, &ti) == SBX_DECAP_NOT_TUNNEL, "PPTP (GRE version 1, 0x880B): not_tunnel");
	o = eth(f, 0, 0, 0x0800);
	f[o] = 0x44; /* IHL 4 */
	f[o + 9] = 47;
	check(parse(f, 60, &ti) == SBX_DECAP_NOT_TUNNEL, "IPv4 header length 16: not_tunnel");
	o = eth(f, 3, 0x88a8, 0x0800);
	o += ipv4(f + o, 47, 4 + INNER_LEN, 0);
	o += gre(f + o, 0, 0x6558);
	check(parse(f, o + INNER_LEN, &ti) == SBX_DECAP_NOT_TUNNEL, "three outer tags: not_tunnel (two at most)");

	/* --- ERSPAN type I: 0x88BE without S, the frame follows the GRE header --- */
	o = eth(f, 0, 0, 0x0800);
	o += ipv4(f + o, 47, 4 + INNER_LEN, 0);
	o += gre(f + o, 0, 0x88be);
	memcpy(f + o, inner_frame, INNER_LEN);
	r = parse(f, o + INNER_LEN, &ti);
	check(r == SBX_DECAP_OK && ti.kind == SBX_TUN_ERSPAN1 && ti.inner_off == 38 && inner_is(f, &ti, inner_frame, INNER_LEN) &&
		      !ti.seq_present && ti.id == 0 && ti.af == 4,
	      "ERSPAN I: ok, kind 1, inner at 38, %u bytes equal (got %s kind %u off %u)", INNER_LEN,
	      sbx_decap_result_name(r), ti.kind, ti.inner_off);
	check(ti.src[0] == 192 && ti.src[3] == 1 && ti.dst[3] == 10, "ERSPAN I: outer addresses reported");
	cuts("ERSPAN I", f, o + INNER_LEN, 14 + 10, 38, SBX_DECAP_MALFORMED_short_outer);
	cuts("ERSPAN I, IPv4 header cut before protocol", f, o + INNER_LEN, 0, 14 + 10, SBX_DECAP_NOT_TUNNEL);

	/* --- ERSPAN type II --- */
	o = erspan2_frame(f, 0, 0, 0x1000, 342, 6, 1, 666) - INNER_LEN;
	r = parse(f, o + INNER_LEN, &ti);
	check(r == SBX_DECAP_OK && ti.kind == SBX_TUN_ERSPAN2 && ti.inner_off == 50 && inner_is(f, &ti, inner_frame, INNER_LEN),
	      "ERSPAN II: ok, kind 2, inner at 50 (got %s %u %u)", sbx_decap_result_name(r), ti.kind, ti.inner_off);
	check(ti.id == 666 && ti.vlan == 342 && ti.cos == 6 && ti.truncated && ti.seq_present && ti.seq == 0x55667788,
	      "ERSPAN II: session 666, VLAN 342, COS 6, T, sequence 0x55667788 (got %u %u %u %d %x)", ti.id, ti.vlan,
	      ti.cos, ti.truncated, ti.seq);
	cuts("ERSPAN II", f, o + INNER_LEN, 14 + 10, 50, SBX_DECAP_MALFORMED_short_outer);
	/* the version field alone never tells the type: a version-2 word behind 0x88BE+S is still type II */
	f[42] = (uint8_t)((f[42] & 0x0f) | 0x20);
	check(parse(f, o + INNER_LEN, &ti) == SBX_DECAP_OK && ti.kind == SBX_TUN_ERSPAN2 && ti.inner_off == 50,
	      "ERSPAN II with version field 2: still type II (told by GRE protocol and S bit)");

	/* --- ERSPAN type III: without S (as real captures), with S, O bit, FT --- */
	for (i = 0; i < 4; i++) {
		int s = i & 1, ob = (i >> 1) & 1;
		uint32_t hl = (s ? 8u : 4u) + (ob ? 20u : 12u);

		o = eth(f, 0, 0, 0x0800);
		o += ipv4(f + o, 47, hl + INNER_LEN, 0);
		o += gre(f + o, s ? 0x1000 : 0, 0x22eb);
		o += erspan3(f + o, 0xabc, 5, 1023, 0, ob);
		memcpy(f + o, inner_frame, INNER_LEN);
		r = parse(f, o + INNER_LEN, &ti);
		check(r == SBX_DECAP_OK && ti.kind == SBX_TUN_ERSPAN3 && ti.inner_off == 34 + hl &&
			      inner_is(f, &ti, inner_frame, INNER_LEN) && ti.id == 1023 && ti.vlan == 0xabc && ti.cos == 5 &&
			      ti.seq_present == (bool)s && ti.ft == 0 && !ti.truncated,
		      "ERSPAN III S=%d O=%d: ok, inner at %u, session 1023, VLAN 0xabc, COS 5 (got %s off %u)", s, ob,
		      34 + hl, sbx_decap_result_name(r), ti.inner_off);
		cuts(s ? (ob ? "ERSPAN III S O" : "ERSPAN III S") : (ob ? "ERSPAN III O" : "ERSPAN III"), f, o + INNER_LEN,
		     24, 34 + hl, SBX_DECAP_MALFORMED_short_outer);
	}
	/* FT 2: an IP packet, reported with inner_off at the IP header */
	o = eth(f, 0, 0, 0x0800);
	o += ipv4(f + o, 47, 4 + 12 + 40, 0);
	o += gre(f + o, 0, 0x22eb);
	o += erspan3(f + o, 0, 0, 7, 2, 0);
	ip_at = o;
	ipv4(f + o, 6, 20, 0);
	r = parse(f, o + 40, &ti);
	check(r == SBX_DECAP_OK && ti.ft == 2 && ti.inner_off == ip_at && ti.inner_len == 40 && f[ti.inner_off] == 0x45,
	      "ERSPAN III FT 2: ok, ft 2, inner_off at the inner IP header, 40 bytes (got %s ft %u off %u len %u)",
	      sbx_decap_result_name(r), ti.ft, ti.inner_off, ti.inner_len);
	put16(f + 16, (uint16_t)(20 + 4 + 12 + 19));
	check(parse(f, o + 19, &ti) == SBX_DECAP_MALFORMED_inner_runt, "ERSPAN III FT 2 with a 19-byte IP packet: inner_runt");
	for (i = 1; i < 32; i++) {
		if (i == 2)
			continue;
		o = eth(f, 0, 0, 0x0800);
		o += ipv4(f + o, 47, 4 + 12 + INNER_LEN, 0);
		o += gre(f + o, 0, 0x22eb);
		o += erspan3(f + o, 0, 0, 7, (uint8_t)i, 0);
		memcpy(f + o, inner_frame, INNER_LEN);
		r = parse(f, o + INNER_LEN, &ti);
		if (r != SBX_DECAP_MALFORMED_frame_type || ti.ft != i)
			break;
	}
	check(i == 32, "ERSPAN III FT 1, 3..31: frame_type, ft reported (first wrong: %u)", i);

	/* --- GRE-TEB with every C/K/S combination --- */
	for (i = 0; i < 8; i++) {
		uint16_t flags = (uint16_t)((i & 1 ? 0x8000 : 0) | (i & 2 ? 0x2000 : 0) | (i & 4 ? 0x1000 : 0));
		uint32_t gl = 4 + 4 * ((i & 1) + ((i >> 1) & 1) + ((i >> 2) & 1));

		o = eth(f, 0, 0, 0x0800);
		o += ipv4(f + o, 47, gl + INNER_LEN, 0);
		o += gre(f + o, flags, 0x6558);
		memcpy(f + o, inner_frame, INNER_LEN);
		r = parse(f, o + INNER_LEN, &ti);
		check(r == SBX_DECAP_OK && ti.kind == SBX_TUN_GRE_TEB && ti.inner_off == 34 + gl &&
			      inner_is(f, &ti, inner_frame, INNER_LEN) && ti.key_present == !!(i & 2) &&
			      ti.id == (i & 2 ? 0x11223344u : 0) && ti.key == ti.id && ti.seq_present == !!(i & 4) &&
			      (!(i & 4) || ti.seq == 0x55667788),
		      "GRE-TEB C=%u K=%u S=%u: ok, inner at %u, key/sequence read at their offsets (got %s off %u)", i & 1,
		      (i >> 1) & 1, (i >> 2) & 1, 34 + gl, sbx_decap_result_name(r), ti.inner_off);
		if (i == 7)
			cuts("GRE-TEB C K S", f, o + INNER_LEN, 24, 34 + gl, SBX_DECAP_MALFORMED_short_outer);
	}
	/* ERSPAN II with C and K: the key does not displace the ERSPAN header */
	o = erspan2_frame(f, 0, 0, 0xb000, 1, 0, 0, 99) - INNER_LEN;
	r = parse(f, o + INNER_LEN, &ti);
	check(r == SBX_DECAP_OK && ti.kind == SBX_TUN_ERSPAN2 && ti.id == 99 && ti.key_present && ti.key == 0x11223344 &&
		      ti.seq == 0x55667788 && inner_is(f, &ti, inner_frame, INNER_LEN),
	      "ERSPAN II with GRE C, K and S: session 99, key and sequence, inner at %u (got %s %u)", o,
	      sbx_decap_result_name(r), ti.inner_off);

	/* --- GRE flags not supported --- */
	{
		static const uint16_t bad[] = { 0x0001, 0x0007, 0x4000, 0x0800, 0x0400 };
		static const char *const what[] = { "version 1", "version 7", "routing bit R", "strict source route",
						    "recursion" };

		for (i = 0; i < 5; i++) {
			o = erspan2_frame(f, 0, 0, (uint16_t)(0x1000 | bad[i]), 0, 0, 0, 1);
			check(parse(f, o, &ti) == SBX_DECAP_MALFORMED_gre_unsupported,
			      "ERSPAN II, GRE %s: gre_unsupported", what[i]);
		}
		o = erspan2_frame(f, 0, 0, 0x1000 | 0x00f8, 0, 0, 0, 1); /* reserved bits 8-12: ignored (RFC 2784) */
		check(parse(f, o, &ti) == SBX_DECAP_OK, "GRE reserved bits 8-12 set: ignored, ok");
	}

	/* --- VXLAN --- */
	o = eth(f, 0, 0, 0x0800);
	o += ipv4(f + o, 17, 16 + INNER_LEN, 0);
	o += udp_vxlan(f + o, 4789, INNER_LEN, 0x08, 5001);
	memcpy(f + o, inner_frame, INNER_LEN);
	r = parse(f, o + INNER_LEN, &ti);
	check(r == SBX_DECAP_OK && ti.kind == SBX_TUN_VXLAN && ti.id == 5001 && ti.udp_dst == 4789 && ti.inner_off == 50 &&
		      inner_is(f, &ti, inner_frame, INNER_LEN) && !ti.seq_present,
	      "VXLAN: ok, VNI 5001, port 4789, inner at 50 (got %s %u %u)", sbx_decap_result_name(r), ti.id, ti.inner_off);
	cuts("VXLAN", f, o + INNER_LEN, 24, 50, SBX_DECAP_MALFORMED_short_outer);
	f[42] = 0xff; /* every reserved flag bit, I included */
	f[43] = f[44] = f[45] = f[49] = 0xff;
	check(parse(f, o + INNER_LEN, &ti) == SBX_DECAP_OK && ti.id == 5001, "VXLAN with every reserved bit set: ignored, ok");
	f[42] = 0xf7; /* everything but I */
	r = parse(f, o + INNER_LEN, &ti);
	check(r == SBX_DECAP_MALFORMED_vxlan_flags && ti.kind == SBX_TUN_VXLAN && ti.udp_dst == 4789,
	      "VXLAN without the I flag: vxlan_flags, kind and udp_dst reported");
	o = eth(f, 0, 0, 0x0800);
	o += ipv4(f + o, 17, 16 + INNER_LEN, 0);
	o += udp_vxlan(f + o, 8472, INNER_LEN, 0x08, 16777215);
	memcpy(f + o, inner_frame, INNER_LEN);
	check(parse(f, o + INNER_LEN, &ti) == SBX_DECAP_OK && ti.udp_dst == 8472 && ti.id == 16777215,
	      "VXLAN on port 8472, VNI 16777215: ok (any port; the rule decides)");

	/* --- outer tags --- */
	{
		static const uint16_t tpids[] = { 0x8100, 0x88a8, 0x9100 };
		int nt;

		for (nt = 1; nt <= 2; nt++)
			for (i = 0; i < 3; i++) {
				l3 = 14 + 4 * (uint32_t)nt;
				o = erspan2_frame(f, nt, tpids[i], 0x1000, 342, 6, 0, 666) - INNER_LEN;
				r = parse(f, o + INNER_LEN, &ti);
				check(r == SBX_DECAP_OK && ti.inner_off == l3 + 36 && inner_is(f, &ti, inner_frame, INNER_LEN) &&
					      ti.id == 666,
				      "ERSPAN II behind %d outer tag(s), first TPID 0x%04x: ok, inner at %u", nt, tpids[i],
				      l3 + 36);
			}
		cuts("ERSPAN II behind two tags, a cut tag", f, o + INNER_LEN, 14, 22, SBX_DECAP_NOT_TUNNEL);
	}

	/* --- IPv6 outer --- */
	o = eth(f, 0, 0, 0x86dd);
	o += ipv6(f + o, 47, 8 + 8 + INNER_LEN);
	o += gre(f + o, 0x1000, 0x88be);
	o += erspan2(f + o, 1, 2, 0, 3);
	memcpy(f + o, inner_frame, INNER_LEN);
	r = parse(f, o + INNER_LEN, &ti);
	check(r == SBX_DECAP_OK && ti.af == 6 && ti.kind == SBX_TUN_ERSPAN2 && ti.inner_off == 70 &&
		      inner_is(f, &ti, inner_frame, INNER_LEN) && memcmp(ti.src, v6src, 16) == 0 &&
		      memcmp(ti.dst, v6dst, 16) == 0,
	      "IPv6 ERSPAN II: ok, af 6, addresses, inner at 70 (got %s %u)", sbx_decap_result_name(r), ti.inner_off);
	cuts("IPv6 ERSPAN II", f, o + INNER_LEN, 14 + 7, 70, SBX_DECAP_MALFORMED_short_outer);
	cuts("IPv6 header cut before its next header", f, o + INNER_LEN, 0, 14 + 7, SBX_DECAP_NOT_TUNNEL);
	o = eth(f, 0, 0, 0x86dd);
	o += ipv6(f + o, 17, 16 + INNER_LEN);
	o += udp_vxlan(f + o, 4789, INNER_LEN, 0x08, 77);
	memcpy(f + o, inner_frame, INNER_LEN);
	r = parse(f, o + INNER_LEN, &ti);
	check(r == SBX_DECAP_OK && ti.af == 6 && ti.kind == SBX_TUN_VXLAN && ti.id == 77 && ti.inner_off == 70 &&
		      inner_is(f, &ti, inner_frame, INNER_LEN),
	      "IPv6 VXLAN: ok, VNI 77, inner at 70");
	put16(f + 18, (uint16_t)(16 + INNER_LEN + 1));
	check(parse(f, o + INNER_LEN, &ti) == SBX_DECAP_MALFORMED_length_mismatch,
	      "IPv6 payload length 1 byte beyond the frame: length_mismatch");
	o = eth(f, 0, 0, 0x86dd);
	o += ipv6(f + o, 44, 8 + 16 + INNER_LEN);
	memset(f + o, 0, 8);
	f[o] = 17; /* Fragment header: next header UDP, offset 0, M 0: an atomic fragment (RFC 6946) */
	o += 8;
	o += udp_vxlan(f + o, 4789, INNER_LEN, 0x08, 77);
	memcpy(f + o, inner_frame, INNER_LEN);
	r = parse(f, o + INNER_LEN, &ti);
	check(r == SBX_DECAP_OK && ti.af == 6 && ti.kind == SBX_TUN_VXLAN && ti.id == 77 && ti.inner_off == 78 &&
		      ti.ip_hlen == 48 && inner_is(f, &ti, inner_frame, INNER_LEN),
	      "IPv6 atomic fragment (offset 0, M 0) of VXLAN: no fragment (RFC 6946), decapsulated: VNI 77, inner at 78 (got %s)",
	      sbx_decap_result_name(r));
	udp_vxlan(f + 62, 53, INNER_LEN, 0x08, 77);
	r = parse(f, o + INNER_LEN, &ti);
	check(r != SBX_DECAP_FRAGMENT && ti.udp_dst == 53,
	      "IPv6 atomic fragment of UDP to port 53: parsed in isolation (port 53 for the rules to refuse), not a fragment to reassemble (got %s)",
	      sbx_decap_result_name(r));
	udp_vxlan(f + 62, 4789, INNER_LEN, 0x08, 77);
	f[14 + 40 + 3] = 1; /* M: more fragments follow */
	check(parse(f, o + INNER_LEN, &ti) == SBX_DECAP_FRAGMENT && ti.af == 6 && ti.ip_proto == 17 &&
		      ti.ip_off == 14 && ti.ip_hlen == 48 && ti.ip_len == 40 + 8 + 16 + INNER_LEN,
	      "IPv6 Fragment header (M 1) in front of UDP: fragment (UDP, header 48 bytes at 14, length to the frame's end)");
	f[14 + 40 + 3] = 0;
	put16(f + 14 + 40 + 2, 0x0010); /* offset 2 (16 bytes), M 0: the last fragment */
	check(parse(f, o + INNER_LEN, &ti) == SBX_DECAP_FRAGMENT, "IPv6 Fragment header, offset 16 bytes, M 0: fragment");
	put16(f + 14 + 40 + 2, 0x0001);
	put16(f + 18, 7);
	check(parse(f, o + INNER_LEN, &ti) == SBX_DECAP_MALFORMED_length_mismatch && ti.ip_proto == 17,
	      "IPv6 Fragment header, payload length 7 (shorter than the Fragment header): length_mismatch");
	put16(f + 18, (uint16_t)(8 + 16 + INNER_LEN));
	f[54] = 6;
	check(parse(f, o + INNER_LEN, &ti) == SBX_DECAP_NOT_TUNNEL, "IPv6 Fragment header in front of TCP: not_tunnel");

	/* --- IPv4 fragments --- */
	{
		static const uint16_t frag[] = { 0x2000, 0x0001, 0x2010, 0x1fff };

		for (i = 0; i < 4; i++) {
			o = eth(f, 0, 0, 0x0800);
			o += ipv4(f + o, 47, 4 + INNER_LEN, frag[i]);
			o += gre(f + o, 0, 0x6558);
			memcpy(f + o, inner_frame, INNER_LEN);
			r = parse(f, o + INNER_LEN, &ti);
			check(r == SBX_DECAP_FRAGMENT && ti.ip_proto == 47 && ti.ip_off == 14 && ti.ip_hlen == 20 &&
				      ti.ip_len == 20 + 4 + INNER_LEN && ti.af == 4,
			      "IPv4 GRE, flags/fragment word 0x%04x: fragment of GRE, header 20 bytes at 14 (got %s)",
			      frag[i], sbx_decap_result_name(r));
		}
		o = eth(f, 0, 0, 0x0800);
		o += ipv4(f + o, 17, 4 + INNER_LEN, 0x2000);
		memcpy(f + o, inner_frame, INNER_LEN);
		memset(f + o + INNER_LEN, 0, 4 + 10);
		r = parse(f, o + INNER_LEN + 4 + 10, &ti); /* 10 bytes of Ethernet padding */
		check(r == SBX_DECAP_FRAGMENT && ti.ip_proto == 17 && ti.ip_len == 20 + 4 + INNER_LEN,
		      "IPv4 UDP first fragment with padding: fragment of UDP, ip_len without the padding (got %s)",
		      sbx_decap_result_name(r));
		put16(f + 16, (uint16_t)(20 + 4 + INNER_LEN + 11));
		check(parse(f, o + INNER_LEN + 4 + 10, &ti) == SBX_DECAP_MALFORMED_length_mismatch && ti.ip_proto == 17,
		      "IPv4 fragment whose total length passes the frame's end: length_mismatch, of UDP");
		o = eth(f, 0, 0, 0x0800);
		o += ipv4(f + o, 6, 4 + INNER_LEN, 0x2000);
		check(parse(f, o + INNER_LEN + 4, &ti) == SBX_DECAP_NOT_TUNNEL, "IPv4 TCP fragment: not_tunnel");
		o = eth(f, 0, 0, 0x0800);
		o += ipv4(f + o, 47, 4 + INNER_LEN, 0x4000); /* DF only */
		o += gre(f + o, 0, 0x6558);
		memcpy(f + o, inner_frame, INNER_LEN);
		check(parse(f, o + INNER_LEN, &ti) == SBX_DECAP_OK, "IPv4 with DF, not a fragment: ok");
	}

	/* --- lengths: larger than the frame, padding, runts --- */
	o = eth(f, 0, 0, 0x0800);
	o += ipv4(f + o, 47, 4 + INNER_LEN + 1, 0);
	o += gre(f + o, 0, 0x6558);
	memcpy(f + o, inner_frame, INNER_LEN);
	check(parse(f, o + INNER_LEN, &ti) == SBX_DECAP_MALFORMED_length_mismatch,
	      "IPv4 total length 1 byte beyond the frame: length_mismatch");
	put16(f + 16, 19);
	check(parse(f, o + INNER_LEN, &ti) == SBX_DECAP_MALFORMED_length_mismatch,
	      "IPv4 total length 19 (< its header): length_mismatch");
	o = eth(f, 0, 0, 0x0800);
	o += ipv4(f + o, 17, 16 + INNER_LEN, 0);
	o += udp_vxlan(f + o, 4789, INNER_LEN + 1, 0x08, 1);
	memcpy(f + o, inner_frame, INNER_LEN);
	check(parse(f, o + INNER_LEN, &ti) == SBX_DECAP_MALFORMED_length_mismatch,
	      "UDP length 1 byte beyond the IP payload: length_mismatch");
	put16(f + 38, 7);
	check(parse(f, o + INNER_LEN, &ti) == SBX_DECAP_MALFORMED_length_mismatch, "UDP length 7: length_mismatch");
	put16(f + 38, 8 + 4);
	check(parse(f, o + INNER_LEN, &ti) == SBX_DECAP_MALFORMED_short_outer,
	      "UDP length 12 (the VXLAN header beyond the datagram): short_outer");
	/* short outer frame: IPv4 says 20+4+14, the frame is padded to 64 bytes; the inner frame is 14 */
	o = eth(f, 0, 0, 0x0800);
	o += ipv4(f + o, 47, 4 + 14, 0);
	o += gre(f + o, 0, 0x6558);
	memcpy(f + o, inner_frame, 14);
	memset(f + o + 14, 0xee, 64 - o - 14);
	r = parse(f, 64, &ti);
	check(r == SBX_DECAP_OK && ti.inner_len == 14, "padded short outer frame: inner_len 14 from the IP length, "
						      "not %u from the frame (got %s %u)", 64 - o, sbx_decap_result_name(r),
	      ti.inner_len);
	o = eth(f, 0, 0, 0x0800);
	o += ipv4(f + o, 17, 16 + 20 + 4, 0);
	o += udp_vxlan(f + o, 4789, 20, 0x08, 1); /* UDP says 20 inner bytes, IP 4 more */
	memcpy(f + o, inner_frame, 24);
	r = parse(f, o + 24, &ti);
	check(r == SBX_DECAP_OK && ti.inner_len == 20, "UDP length smaller than the IP payload: inner_len from UDP (got %u)",
	      ti.inner_len);
	o = eth(f, 0, 0, 0x0800);
	o += ipv4(f + o, 47, 4 + 13, 0);
	o += gre(f + o, 0, 0x6558);
	memcpy(f + o, inner_frame, 13);
	memset(f + o + 13, 0, 64 - o - 13);
	check(parse(f, 64, &ti) == SBX_DECAP_MALFORMED_inner_runt,
	      "GRE-TEB with a 13-byte inner frame in a padded 64-byte frame: inner_runt (padding not counted)");
	o = eth(f, 0, 0, 0x0800);
	o += ipv4(f + o, 17, 16 + 13, 0);
	o += udp_vxlan(f + o, 4789, 13, 0x08, 1);
	check(parse(f, o + 13, &ti) == SBX_DECAP_MALFORMED_inner_runt, "VXLAN with a 13-byte inner frame: inner_runt");
	o = eth(f, 0, 0, 0x0800);
	o += ipv4(f + o, 47, 8 + 8 + 0, 0);
	o += gre(f + o, 0x1000, 0x88be);
	o += erspan2(f + o, 0, 0, 1, 1);
	check(parse(f, o, &ti) == SBX_DECAP_MALFORMED_inner_runt, "ERSPAN II with no inner frame at all: inner_runt");
	/* avail < len with every header present: fine, the inner frame may go on in other segments */
	o = eth(f, 0, 0, 0x0800);
	o += ipv4(f + o, 17, 16 + 1500, 0);
	o += udp_vxlan(f + o, 4789, 1500, 0x08, 1);
	memcpy(f + o, inner_frame, INNER_LEN);
	r = parse_n(f, o + 1500, o, &ti);
	check(r == SBX_DECAP_OK && ti.inner_off == o && ti.inner_len == 1500,
	      "avail ends at the inner frame (a multi-segment mbuf): ok, inner_len 1500 from the lengths");

	/* --- rules --- */
	{
		struct sbx_tunnel_info e1 = { .kind = SBX_TUN_ERSPAN1, .af = 4, .dst = { 192, 0, 2, 10 } };
		struct sbx_tunnel_info e2 = { .kind = SBX_TUN_ERSPAN2, .af = 4, .id = 865, .dst = { 192, 0, 2, 10 } };
		struct sbx_tunnel_info e3 = { .kind = SBX_TUN_ERSPAN3, .af = 6, .id = 866 };
		struct sbx_tunnel_info vx = { .kind = SBX_TUN_VXLAN, .af = 4, .id = 5001, .udp_dst = 4789 };
		struct sbx_tunnel_info teb = { .kind = SBX_TUN_GRE_TEB, .af = 4 };
		struct sbx_tunnel_info tebk = { .kind = SBX_TUN_GRE_TEB, .af = 4, .key_present = true, .id = 7, .key = 7 };
		struct sbx_decap_rule any_erspan = { .type = SBX_DECAP_ERSPAN };
		struct sbx_decap_rule sess = { .type = SBX_DECAP_ERSPAN, .nb_ids = 2, .ids = { 865, 866 } };
		struct sbx_decap_rule local = { .type = SBX_DECAP_ERSPAN, .local_af = 4, .local_ip = { 192, 0, 2, 10 } };
		struct sbx_decap_rule vxr = { .type = SBX_DECAP_VXLAN, .udp_port = 4789, .nb_ids = 1, .ids = { 5001 } };
		struct sbx_decap_rule vx0 = { .type = SBX_DECAP_VXLAN };
		struct sbx_decap_rule vx8472 = { .type = SBX_DECAP_VXLAN, .udp_port = 8472 };
		struct sbx_decap_rule gr = { .type = SBX_DECAP_GRE };
		struct sbx_decap_rule grk = { .type = SBX_DECAP_GRE, .nb_ids = 1, .ids = { 7 } };
		struct sbx_decap_rule loc6 = { .type = SBX_DECAP_ERSPAN, .local_af = 6 };

		memcpy(e3.dst, v6dst, 16);
		memcpy(loc6.local_ip, v6dst, 16);
		check(sbx_decap_rule_match(&any_erspan, &e1) && sbx_decap_rule_match(&any_erspan, &e2) &&
			      sbx_decap_rule_match(&any_erspan, &e3) && !sbx_decap_rule_match(&any_erspan, &vx) &&
			      !sbx_decap_rule_match(&any_erspan, &teb),
		      "rule erspan without ids: ERSPAN I, II, III, not VXLAN or GRE-TEB");
		check(sbx_decap_rule_match(&sess, &e2) && sbx_decap_rule_match(&sess, &e3) && !sbx_decap_rule_match(&sess, &e1),
		      "rule erspan sessions [865, 866]: sessions 865 and 866; type I (no session id) never");
		e2.id = 864;
		check(!sbx_decap_rule_match(&sess, &e2), "rule erspan sessions [865, 866]: not session 864");
		check(sbx_decap_rule_match(&local, &e2) && sbx_decap_rule_match(&local, &e1) && !sbx_decap_rule_match(&local, &e3),
		      "rule erspan local_ip 192.0.2.10: IPv4 to 192.0.2.10, not IPv6");
		e1.dst[3] = 11;
		check(!sbx_decap_rule_match(&local, &e1), "rule erspan local_ip 192.0.2.10: not to 192.0.2.11");
		check(sbx_decap_rule_match(&loc6, &e3) && !sbx_decap_rule_match(&loc6, &e2), "rule erspan local_ip IPv6: match");
		check(sbx_decap_rule_match(&vxr, &vx) && sbx_decap_rule_match(&vx0, &vx) && !sbx_decap_rule_match(&vx8472, &vx),
		      "rule vxlan: port 4789 (also udp_port 0 = 4789), not port 8472");
		vx.id = 5002;
		check(!sbx_decap_rule_match(&vxr, &vx) && sbx_decap_rule_match(&vx0, &vx), "rule vxlan vnis [5001]: not VNI 5002");
		vx.udp_dst = 8472;
		check(sbx_decap_rule_match(&vx8472, &vx) && !sbx_decap_rule_match(&vx0, &vx), "rule vxlan udp_port 8472: port 8472");
		check(sbx_decap_rule_match(&gr, &teb) && sbx_decap_rule_match(&gr, &tebk) && !sbx_decap_rule_match(&gr, &e2) &&
			      sbx_decap_rule_match(&grk, &tebk) && !sbx_decap_rule_match(&grk, &teb),
		      "rule gre: GRE-TEB with or without key; ids = keys: key 7, not keyless");
	}

	/* --- round trips through our own encoder (shared/erspan.c) --- */
	for (i = 0; i < 12; i++) {
		struct sbx_mirror_cfg s = { .ttl = 64, .df = true, .dscp = 10 };
		struct sbx_erspan_fields ef = { 0 };
		uint8_t src_mac[6] = { 2, 0, 0, 0, 0, 9 };
		uint8_t big[1600];
		uint32_t ilen = i & 1 ? 1500 : INNER_LEN, g, ol;
		int v6 = (i >> 1) & 1, kind = (int)(i >> 2); /* 0 type II, 1 type III, 2 type III + subheader */

		for (g = 0; g < ilen; g++)
			big[g] = (uint8_t)(g * 7 + 3);
		big[12] = 0x81; /* a tagged inner frame */
		big[13] = 0x00;
		big[14] = 0x60 | 0x01;
		big[15] = 0x56;
		big[16] = 0x08;
		big[17] = 0x00;
		big[18] = 0x45;
		big[19] = 0xb8; /* TOS: precedence 5 */
		s.ip_version = v6 ? 6 : 4;
		if (v6) {
			memcpy(s.src_ip, v6src, 16);
			memcpy(s.dst_ip, v6dst, 16);
		} else {
			put32(s.src_ip, 0xc0000201);
			put32(s.dst_ip, 0xc000020a);
		}
		ef.version = kind == 0 ? 1 : 2;
		ef.session_id = (uint16_t)(100 + i);
		/* type II always with S: 0x88BE without S is type I on the wire (our writer's doc says the
		 * worker always sets it) */
		ef.seq_present = kind == 0 || i % 3 != 0;
		ef.seq = 1000 + i;
		ef.o = kind == 2;
		ef.port_id = 5;
		ef.timestamp = 0x01020304;
		ef.truncated = i == 3;
		sbx_erspan_fields_from_frame(&ef, big, ilen, 0);
		g = (uint32_t)sbx_gre_erspan_write(f + 64, &ef); /* header after a 64-byte reserve */
		ol = (uint32_t)sbx_outer_write(f, &s, src_mac, g + ilen, (uint16_t)i);
		memmove(f + ol, f + 64, g);
		memcpy(f + ol + g, big, ilen);
		r = parse(f, ol + g + ilen, &ti);
		check(r == SBX_DECAP_OK && ti.kind == (kind == 0 ? SBX_TUN_ERSPAN2 : SBX_TUN_ERSPAN3) &&
			      ti.af == (v6 ? 6 : 4) && ti.inner_off == ol + g && inner_is(f, &ti, big, ilen) &&
			      ti.id == ef.session_id && ti.vlan == 0x156 && ti.cos == 5 && ti.seq_present == ef.seq_present &&
			      (!ef.seq_present || ti.seq == ef.seq) && ti.truncated == ef.truncated && ti.ft == 0,
		      "round trip: our ERSPAN %s%s, IPv%d, S=%d, %u-byte tagged inner frame: parsed back, same bytes, "
		      "session %u, VLAN 0x156, COS 5 (got %s kind %u off %u len %u)",
		      kind == 0 ? "II" : "III", kind == 2 ? " with subheader" : "", v6 ? 6 : 4, ef.seq_present, ilen,
		      ef.session_id, sbx_decap_result_name(r), ti.kind, ti.inner_off, ti.inner_len);
	}

	/* --- names --- */
	check(strcmp(sbx_decap_result_name(SBX_DECAP_OK), "ok") == 0 &&
		      strcmp(sbx_decap_result_name(SBX_DECAP_NOT_TUNNEL), "not_tunnel") == 0 &&
		      strcmp(sbx_decap_result_name(SBX_DECAP_MALFORMED_short_outer), "short_outer") == 0 &&
		      strcmp(sbx_decap_result_name(SBX_DECAP_MALFORMED_frame_type), "frame_type") == 0 &&
		      strcmp(sbx_decap_result_name(SBX_DECAP_RESULT_MAX), "unknown") == 0,
	      "result names: ok, not_tunnel, short_outer, ..., frame_type; unknown out of range");

	test_geneve_gtpu();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
