/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VXLAN mirror encapsulation builder (sbx_vxlan_write() of shared/erspan.c, issue 13), on byte
 * arrays, no EAL: every field of the outer Ethernet / IPv4 or IPv6 / UDP / VXLAN headers (RFC 7348
 * section 5), the IPv4 header checksum, the UDP checksum (0 over IPv4, computed over IPv6 and
 * checked here by an independent sum over the pseudo-header and the whole datagram, 0xffff for a
 * computed 0), the VNI's 24 bits and the source port range.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "spanbox/erspan.h"
#include "tap.h"

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* Reference one's complement sum, the textbook way (RFC 1071 section 4.1), 32-bit accumulator. */
static uint32_t ref_sum(const uint8_t *p, size_t len, uint32_t acc)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		acc += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		acc += (uint32_t)p[len - 1] << 8;
	return acc;
}

static uint16_t ref_fold(uint32_t acc)
{
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)acc;
}

/* The whole packet's UDP datagram over IPv6 verifies: pseudo-header + datagram sums to 0xffff. */
static bool udp6_ok(const uint8_t *pkt, size_t len)
{
	const uint8_t *ip = pkt + 14, *udp = ip + 40;
	uint32_t ulen = be16(ip + 4), acc = 0;
	uint8_t ph[8] = { 0, 0, (uint8_t)(ulen >> 8), (uint8_t)ulen, 0, 0, 0, 17 };

	if (len != 14 + 40 + ulen)
		return false;
	acc = ref_sum(ip + 8, 32, acc);
	acc = ref_sum(ph, 8, acc);
	acc = ref_sum(udp, ulen, acc);
	return ref_fold(acc) == 0xffff;
}

static void session(struct sbx_mirror_cfg *s, int v6)
{
	static const uint8_t src4[4] = { 192, 0, 2, 1 }, dst4[4] = { 198, 51, 100, 7 };
	static const uint8_t src6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 }, dst6[16] = { 0x20, 0x01, 0x0d, 0xb8, [14] = 0xab, [15] = 2 };
	static const uint8_t dmac[6] = { 0x02, 0, 0, 0, 0x98, 0x02 };

	memset(s, 0, sizeof(*s));
	s->id = 42;
	s->encap = SBX_ENCAP_VXLAN;
	s->ip_version = v6 ? 6 : 4;
	memcpy(s->src_ip, v6 ? src6 : src4, v6 ? 16 : 4);
	memcpy(s->dst_ip, v6 ? dst6 : dst4, v6 ? 16 : 4);
	memcpy(s->dst_mac, dmac, 6);
	s->ttl = 17;
	s->dscp = 46;
	s->df = true;
	s->vni = 0xabcdef;
	s->udp_port = SBX_VXLAN_PORT;
}

/* Fill @p f with @p n bytes of a frame (a made-up but plausible Ethernet frame). */
static void frame(uint8_t *f, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		f[i] = (uint8_t)(i * 7 + seed * 13 + (i >> 3));
	if (n >= 14) {
		f[12] = 0x08;
		f[13] = 0x00;
	}
}

static void test_ipv4(void)
{
	static const uint8_t smac[6] = { 0x02, 0, 0, 0, 0x98, 0x01 };
	struct sbx_mirror_cfg s;
	uint8_t pkt[SBX_ENCAP_MAX_LEN + 2000], *ip = pkt + 14, *udp = pkt + 34, *vx = pkt + 42;
	uint32_t n = 1000;
	size_t h;
	bool cks_ok = true;
	unsigned int id;

	session(&s, 0);
	memset(pkt, 0xee, sizeof(pkt));
	frame(pkt + 50, n, 1);
	h = sbx_vxlan_write(pkt, &s, smac, n, 51234, 0x1234, 0xdead /* ignored over IPv4 */);
	check(h == 50, "IPv4 outer: 50 header bytes (14 + 20 + 8 + 8), got %zu", h);
	check(!memcmp(pkt, s.dst_mac, 6) && !memcmp(pkt + 6, smac, 6) && be16(pkt + 12) == 0x0800,
	      "IPv4 outer: Ethernet dst = session dst_mac, src = the given MAC, EtherType 0x0800");
	check(ip[0] == 0x45 && ip[1] == 46 << 2 && be16(ip + 2) == 20 + 8 + 8 + n && be16(ip + 4) == 0x1234 &&
		      be16(ip + 6) == 0x4000 && ip[8] == 17 && ip[9] == 17,
	      "IPv4: version/IHL 0x45, DSCP 46, total length %u, id 0x1234, DF, TTL 17, protocol 17 (UDP)",
	      20 + 8 + 8 + n);
	check(!memcmp(ip + 12, s.src_ip, 4) && !memcmp(ip + 16, s.dst_ip, 4), "IPv4: addresses of the session");
	check(ref_fold(ref_sum(ip, 20, 0)) == 0xffff, "IPv4: header checksum verifies (0x%04x)", be16(ip + 10));
	check(be16(udp) == 51234 && be16(udp + 2) == 4789 && be16(udp + 4) == 8 + 8 + n,
	      "UDP: source port as given, destination 4789, length %u", 8 + 8 + n);
	check(be16(udp + 6) == 0, "UDP over IPv4: checksum 0 (RFC 7348 section 5)");
	check(vx[0] == SBX_VXLAN_FLAG_I && vx[1] == 0 && vx[2] == 0 && vx[3] == 0,
	      "VXLAN: flags 0x08 (I only), reserved 24 bits zero");
	check(vx[4] == 0xab && vx[5] == 0xcd && vx[6] == 0xef && vx[7] == 0, "VXLAN: VNI 0xabcdef, reserved byte zero");
	check(pkt[50] == (uint8_t)(0 * 7 + 13) && pkt[50 + n] == 0xee, "the builder writes nothing past its header");

	/* every id, the checksum right each time (DSCP 0, DF off, another TTL and frame length) */
	s.df = false;
	s.dscp = 0;
	s.ttl = 255;
	for (id = 0; id < 65536; id += 257) {
		sbx_vxlan_write(pkt, &s, smac, (uint32_t)(id % 9000), 49152, (uint16_t)id, 0);
		if (ref_fold(ref_sum(ip, 20, 0)) != 0xffff || be16(ip + 6) != 0)
			cks_ok = false;
	}
	check(cks_ok, "IPv4: header checksum verifies for 256 identifications and lengths, DF off");
	s.vni = 0;
	sbx_vxlan_write(pkt, &s, smac, 64, 65535, 0, 0);
	check(be32(vx + 4) == 0 && vx[0] == 0x08 && be16(udp) == 65535, "VNI 0 and source port 65535 written as such");
	s.vni = 0xffffffffu; /* the config refuses more than 24 bits; the builder keeps to them anyway */
	sbx_vxlan_write(pkt, &s, smac, 64, 49152, 0, 0);
	check(be32(vx + 4) == 0xffffff00u, "VNI: only 24 bits written, the reserved byte stays zero");
	s.udp_port = 8472;
	sbx_vxlan_write(pkt, &s, smac, 64, 49152, 0, 0);
	check(be16(udp + 2) == 8472, "UDP destination: the session's udp_port (8472)");
}

static void test_ipv6(void)
{
	static const uint8_t smac[6] = { 0x02, 0, 0, 0, 0x98, 0x01 };
	struct sbx_mirror_cfg s;
	uint8_t pkt[SBX_ENCAP_MAX_LEN + 2000], *ip = pkt + 14, *udp = pkt + 54, *vx = pkt + 62;
	static const uint32_t lens[] = { 14, 15, 60, 61, 64, 999, 1000, 1514, 1515, 1800 };
	size_t h, i;
	bool all = true;
	uint16_t fs;

	session(&s, 1);
	memset(pkt, 0, sizeof(pkt));
	frame(pkt + 70, 1000, 2);
	h = sbx_vxlan_write(pkt, &s, smac, 1000, 50000, 0x1234, sbx_csum16(pkt + 70, 1000, 0));
	check(h == 70, "IPv6 outer: 70 header bytes (14 + 40 + 8 + 8), got %zu", h);
	check(be16(pkt + 12) == 0x86dd && be32(ip) == ((6u << 28) | (46u << 22)) && be16(ip + 4) == 8 + 8 + 1000 &&
		      ip[6] == 17 && ip[7] == 17 && !memcmp(ip + 8, s.src_ip, 16) && !memcmp(ip + 24, s.dst_ip, 16),
	      "IPv6: EtherType 0x86dd, traffic class DSCP 46, payload length 1016, next header 17, hop limit 17, addresses");
	check(be16(udp) == 50000 && be16(udp + 2) == 4789 && be16(udp + 4) == 1016 && vx[0] == 0x08 &&
		      be32(vx + 4) == 0xabcdef00u,
	      "IPv6: UDP ports and length, VXLAN flags and VNI");
	check(be16(udp + 6) != 0 && udp6_ok(pkt, 70 + 1000), "UDP over IPv6: checksum computed and verifies (0x%04x)",
	      be16(udp + 6));
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		frame(pkt + 70, lens[i], (unsigned int)i);
		sbx_vxlan_write(pkt, &s, smac, lens[i], (uint16_t)(49152 + i * 977), (uint16_t)i,
				sbx_csum16(pkt + 70, lens[i], 0));
		if (!udp6_ok(pkt, 70 + lens[i]) || be16(udp + 6) == 0) {
			all = false;
			printf("# frame of %u bytes: UDP checksum 0x%04x does not verify\n", lens[i], be16(udp + 6));
		}
	}
	check(all, "UDP over IPv6: checksum verifies for frames of odd and even lengths from 14 to 1800 bytes");
	/* the frame's sum given in pieces (as the worker adds segments) gives the same checksum */
	frame(pkt + 70, 1515, 9);
	fs = sbx_csum16(pkt + 70 + 700, 815, sbx_csum16(pkt + 70, 700, 0));
	check(fs == sbx_csum16(pkt + 70, 1515, 0), "sbx_csum16 of two pieces (the first of even length) = of the whole");
	/* a datagram whose sum is exactly 0xffff: the computed checksum 0 is sent as 0xffff (RFC 768/8200) */
	frame(pkt + 70, 100, 5);
	pkt[70 + 98] = pkt[70 + 99] = 0;
	sbx_vxlan_write(pkt, &s, smac, 100, 50000, 0, sbx_csum16(pkt + 70, 100, 0));
	{
		uint16_t c = be16(udp + 6); /* with 0 in the frame's last word: set that word to the checksum */

		pkt[70 + 98] = (uint8_t)(c >> 8);
		pkt[70 + 99] = (uint8_t)c;
	}
	sbx_vxlan_write(pkt, &s, smac, 100, 50000, 0, sbx_csum16(pkt + 70, 100, 0));
	check(be16(udp + 6) == 0xffff && udp6_ok(pkt, 170), "UDP over IPv6: a computed checksum of 0 is sent as 0xffff");
}

static void test_csum_and_ports(void)
{
	/* RFC 1071 section 3 example: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2 */
	static const uint8_t ex[8] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	uint32_t h, seen[4] = { 0 };
	uint16_t lo = 65535, hi = 0, p;
	bool all_in = true;
	unsigned int distinct = 0, i;
	static uint8_t used[16384];

	check(sbx_csum16(ex, 8, 0) == 0xddf2, "sbx_csum16: RFC 1071 example sums to 0xddf2 (0x%04x)", sbx_csum16(ex, 8, 0));
	check(sbx_csum16(ex, 7, 0) == ref_fold(ref_sum(ex, 7, 0)), "sbx_csum16: odd length, last byte padded with zero");
	for (h = 0, i = 0; i < 100000; i++, h = h * 2654435761u + 0x9e3779b9u) {
		p = sbx_vxlan_src_port(h);
		if (p < SBX_VXLAN_SPORT_MIN)
			all_in = false;
		lo = p < lo ? p : lo;
		hi = p > hi ? p : hi;
		if (!used[p - SBX_VXLAN_SPORT_MIN]++)
			distinct++;
	}
	check(all_in && lo < 49200 && hi > 65500, "source ports of 100000 hashes in 49152..65535 (seen %u..%u)", lo, hi);
	check(distinct > 16000, "source ports of 100000 hashes cover the range (%u of 16384 ports)", distinct);
	/* a change in the hash's upper bits alone still moves the port (they are folded in) */
	for (i = 0; i < 4; i++)
		seen[i] = sbx_vxlan_src_port(0x12345678u ^ (1u << (18 + i * 4)));
	check(seen[0] != sbx_vxlan_src_port(0x12345678u) && seen[1] != seen[0] && seen[2] != seen[1] &&
		      seen[3] != sbx_vxlan_src_port(0x12345678u),
	      "source port: upper hash bits change it too");
	check(sbx_vxlan_src_port(7) == sbx_vxlan_src_port(7), "source port: one hash, one port");
}

int main(void)
{
	test_ipv4();
	test_ipv6();
	test_csum_and_ports();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
