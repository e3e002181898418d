/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the mask of mirror copies (shared/mask.c, issue #26) on hand-built frames: where
 * each anchor lies (L2, L3, L4 behind VLAN, QinQ, MPLS, IPv6 extension headers; inner L3/L4 of a
 * VXLAN frame, and of a frame without tunnel), fragments, a frame without the anchor, a frame
 * shorter than the region, and the IPv4 header checksum after masking. No EAL.
 */
#include <string.h>

#include <spanbox/mask.h>

#include "tap.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t ip4_sum(const uint8_t *ip, uint32_t hlen)
{
	uint32_t s = 0;

	for (uint32_t k = 0; k < hlen; k += 2)
		s += (uint32_t)(ip[k] << 8 | ip[k + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s; /* 0xffff when the checksum is valid */
}

/* Ethernet header with @p ntags tags of TPIDs @p tpid, EtherType @p type at @p f: its length. */
static uint32_t eth(uint8_t *f, int ntags, const uint16_t *tpid, uint16_t type)
{
	uint32_t o = 12;

	for (int k = 0; k < 12; k++)
		f[k] = (uint8_t)(0x10 + k);
	for (int k = 0; k < ntags; k++, o += 4) {
		put16(f + o, tpid[k]);
		put16(f + o + 2, (uint16_t)(100 + k));
	}
	put16(f + o, type);
	return o + 2;
}

/* IPv4 header (20 B, valid checksum) of protocol @p proto, @p plen payload bytes, fragment offset
 * @p fo (8-byte units). */
static uint32_t ip4(uint8_t *p, uint8_t proto, uint32_t plen, uint16_t fo)
{
	uint16_t s;

	memset(p, 0, 20);
	p[0] = 0x45;
	put16(p + 2, (uint16_t)(20 + plen));
	put16(p + 4, 0x1234);
	put16(p + 6, fo);
	p[8] = 64;
	p[9] = proto;
	memcpy(p + 12, "\xc0\x00\x02\x01\xc6\x33\x64\x07", 8);
	s = (uint16_t)~ip4_sum(p, 20);
	put16(p + 10, s);
	return 20;
}

/* IPv6 header (2000:: to 2000::) of next header @p nh, @p plen payload bytes. */
static uint32_t ip6(uint8_t *p, uint8_t nh, uint32_t plen)
{
	static const uint8_t tmpl[40] = { 0x60, [7] = 64, [8] = 0x20, [24] = 0x20 };

	memcpy(p, tmpl, sizeof(tmpl));
	put16(p + 4, (uint16_t)plen);
	p[6] = nh;
	return 40;
}

/* Fill @p n bytes with a counting payload. */
static void payload(uint8_t *p, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		p[k] = (uint8_t)(0xa0 + k);
}

/* Ethernet / IPv4 / UDP 4789 / VXLAN / Ethernet / IPv4 / TCP with 30 B of payload at @p f: its length. */
static uint32_t vxlan_frame(uint8_t *f)
{
	static const uint8_t udp_vxlan[16] = { 0xc3, 0x50, 0x12, 0xb5, 0, 8 + 8 + 14 + 20 + 30, 0, 0,
					       0x08, 0, 0, 0, 0, 0x01, 0, 0 };
	uint32_t o = eth(f, 0, NULL, 0x0800);

	o += ip4(f + o, 17, sizeof(udp_vxlan) + 14 + 20 + 30, 0);
	memcpy(f + o, udp_vxlan, sizeof(udp_vxlan));
	o += sizeof(udp_vxlan);
	o += eth(f + o, 0, NULL, 0x0800);
	o += ip4(f + o, 6, 30, 0);
	payload(f + o, 30);
	return o + 30;
}

static struct sbx_mask_cfg mk(uint8_t from, uint16_t off, uint16_t len)
{
	return (struct sbx_mask_cfg){ .from = from, .offset = off, .length = len, .pattern = 0x5a };
}

/* The region of mask @p m in @p f (@p len bytes) is [@p s, @p e). */
static void region_is(const char *what, struct sbx_mask_cfg m, const uint8_t *f, uint32_t len, uint32_t s,
		      uint32_t e)
{
	struct sbx_mask_region r;
	bool ok = sbx_mask_region(&m, f, len, len, &r);

	check(ok && r.start == s && r.end == e, "%s: region [%u, %u) (got %s [%u, %u))", what, s, e,
	      ok ? "" : "no anchor", ok ? r.start : 0, ok ? r.end : 0);
}

int main(void)
{
	static const uint16_t vlan[1] = { 0x8100 }, qinq[2] = { 0x88a8, 0x8100 };
	uint8_t f[400], g[400];
	struct sbx_mask_region r;
	struct sbx_mask_cfg m;
	uint32_t o, n, len;

	/* IPv4 / TCP, untagged: L2 0, L3 14, L4 34 */
	o = eth(f, 0, NULL, 0x0800);
	o += ip4(f + o, 6, 52, 0);
	payload(f + o, 52);
	len = o + 52;
	region_is("ipv4 l2 +5", mk(SBX_MASK_L2, 5, 10), f, len, 5, 15);
	region_is("ipv4 l3 +0", mk(SBX_MASK_L3, 0, 20), f, len, 14, 34);
	region_is("ipv4 l4 +20", mk(SBX_MASK_L4, 20, 10), f, len, 54, 64);
	region_is("ipv4 inner_l4 without tunnel = l4", mk(SBX_MASK_INNER_L4, 20, 10), f, len, 54, 64);
	region_is("ipv4 inner_l3 without tunnel = l3", mk(SBX_MASK_INNER_L3, 0, 4), f, len, 14, 18);

	/* mask written: pattern in the region, other bytes kept, IPv4 checksum valid again */
	memcpy(g, f, len);
	m = mk(SBX_MASK_L3, 12, 8); /* both addresses */
	sbx_mask_region(&m, g, len, len, &r);
	n = sbx_mask_apply(&m, &r, g, len);
	{
		bool pat = true, rest = true;

		for (uint32_t k = 0; k < len; k++) {
			if (k >= 26 && k < 34)
				pat &= g[k] == 0x5a;
			else if (k != 24 && k != 25)
				rest &= g[k] == f[k];
		}
		check(n == 8 && pat && rest, "l3 +12 len 8: the two addresses are 0x5a, every other byte kept");
		check(ip4_sum(g + 14, 20) == 0xffff && memcmp(g + 24, f + 24, 2) != 0,
		      "the IPv4 header checksum is recomputed and valid");
	}
	memcpy(g, f, len);
	m = mk(SBX_MASK_L3, 8, 4); /* TTL, protocol, checksum */
	sbx_mask_region(&m, g, len, len, &r);
	sbx_mask_apply(&m, &r, g, len);
	check(g[24] == 0x5a && g[25] == 0x5a, "a region over the checksum field keeps the pattern there");
	memcpy(g, f, len);
	m = mk(SBX_MASK_L4, 0, 20);
	sbx_mask_region(&m, g, len, len, &r);
	sbx_mask_apply(&m, &r, g, len);
	check(memcmp(g, f, 34) == 0, "a region behind the IPv4 header leaves the header (and checksum) as it was");

	/* short: the frame ends inside the region, and before it */
	m = mk(SBX_MASK_L4, 40, 100);
	memcpy(g, f, len);
	check(sbx_mask_region(&m, g, len, len, &r) && r.end > len, "l4 +40 len 100 of an 86 B frame: past its end");
	n = sbx_mask_apply(&m, &r, g, len);
	check(n == len - 74 && g[len - 1] == 0x5a && g[73] == f[73], "masked to the end of the frame: %u bytes", n);
	m = mk(SBX_MASK_L2, 200, 10);
	sbx_mask_region(&m, g, len, len, &r);
	check(sbx_mask_apply(&m, &r, g, len) == 0, "a region that starts past the frame writes nothing");

	/* VLAN, QinQ, MPLS */
	o = eth(f, 1, vlan, 0x0800);
	o += ip4(f + o, 17, 30, 0);
	payload(f + o, 30);
	region_is("vlan l3", mk(SBX_MASK_L3, 0, 4), f, o + 30, 18, 22);
	region_is("vlan l4 +8", mk(SBX_MASK_L4, 8, 4), f, o + 30, 46, 50);
	o = eth(f, 2, qinq, 0x86dd);
	o += ip6(f + o, 6, 40);
	payload(f + o, 40);
	region_is("qinq ipv6 l3", mk(SBX_MASK_L3, 8, 16), f, o + 40, 30, 46);
	region_is("qinq ipv6 l4", mk(SBX_MASK_L4, 0, 4), f, o + 40, 62, 66);
	o = eth(f, 0, NULL, 0x8847);
	memcpy(f + o, "\x00\x01\x00\x40\x00\x02\x01\x40", 8); /* two labels, the second bottom of stack */
	o += 8;
	o += ip4(f + o, 6, 20, 0);
	region_is("mpls l3", mk(SBX_MASK_L3, 0, 1), f, o + 20, 22, 23);
	region_is("mpls l4", mk(SBX_MASK_L4, 0, 1), f, o + 20, 42, 43);

	/* IPv6 with a hop-by-hop header (8 B) and a destination options header (16 B) */
	o = eth(f, 0, NULL, 0x86dd);
	o += ip6(f + o, 0, 64);
	f[o] = 60;
	f[o + 1] = 0;
	o += 8;
	f[o] = 17;
	f[o + 1] = 1;
	o += 16;
	payload(f + o, 40);
	region_is("ipv6 ext headers l4", mk(SBX_MASK_L4, 8, 8), f, o + 40, 86, 94);

	/* fragments: the region in L4 bytes of the datagram, in whichever fragment they are */
	o = eth(f, 0, NULL, 0x0800);
	o += ip4(f + o, 6, 40, 3); /* bytes 24..63 of the datagram's payload */
	payload(f + o, 40);
	region_is("ipv4 later fragment, l4 +30", mk(SBX_MASK_L4, 30, 10), f, o + 40, 34 + 6, 34 + 16);
	region_is("ipv4 later fragment, l4 +20 starts before it", mk(SBX_MASK_L4, 20, 10), f, o + 40, 34, 34 + 6);
	region_is("ipv4 later fragment, l4 +10 lies before it", mk(SBX_MASK_L4, 10, 10), f, o + 40, 34, 34);
	o = eth(f, 0, NULL, 0x86dd);
	o += ip6(f + o, 44, 48);
	memset(f + o, 0, 8);
	f[o] = 6;
	put16(f + o + 2, 2 << 3); /* offset 2 (16 bytes) */
	o += 8;
	region_is("ipv6 later fragment, l4 +20", mk(SBX_MASK_L4, 20, 4), f, o + 40, 62 + 4, 62 + 8);

	/* no anchor: ARP has no L3 this knows, a cut IPv6 header has no L4 */
	o = eth(f, 0, NULL, 0x0806);
	payload(f + o, 28);
	m = mk(SBX_MASK_L3, 0, 4);
	check(!sbx_mask_region(&m, f, o + 28, o + 28, &r), "arp: no l3 anchor");
	m = mk(SBX_MASK_L2, 0, 6);
	check(sbx_mask_region(&m, f, o + 28, o + 28, &r) && r.start == 0 && r.end == 6, "arp: l2 anchor");
	o = eth(f, 0, NULL, 0x86dd);
	o += ip6(f + o, 6, 20);
	m = mk(SBX_MASK_L4, 0, 4);
	check(!sbx_mask_region(&m, f, 40, 40, &r), "ipv6 cut at 40 B: no l4 anchor");

	/* VXLAN (UDP 4789) carrying Ethernet / IPv4 / TCP: inner L3 at 64, inner L4 at 84 */
	len = vxlan_frame(f);
	region_is("vxlan inner_l3", mk(SBX_MASK_INNER_L3, 0, 20), f, len, 64, 84);
	region_is("vxlan inner_l4 +4", mk(SBX_MASK_INNER_L4, 4, 8), f, len, 88, 96);
	region_is("vxlan l4 is the outer UDP", mk(SBX_MASK_L4, 0, 8), f, len, 34, 42);
	memcpy(g, f, len);
	m = mk(SBX_MASK_INNER_L3, 12, 8);
	sbx_mask_region(&m, g, len, len, &r);
	sbx_mask_apply(&m, &r, g, len);
	check(r.nb_ip4 == 2 && ip4_sum(g + 14, 20) == 0xffff && ip4_sum(g + 64, 20) == 0xffff && g[76] == 0x5a,
	      "vxlan inner_l3 +12: inner addresses masked, inner and outer IPv4 checksums valid");
	memcpy(g, f, len);
	m = mk(SBX_MASK_L4, 42, 4); /* from the outer UDP: the inner source address */
	sbx_mask_region(&m, g, len, len, &r);
	sbx_mask_apply(&m, &r, g, len);
	check(r.start == 76 && ip4_sum(g + 64, 20) == 0xffff && ip4_sum(g + 14, 20) == 0xffff && g[76] == 0x5a,
	      "vxlan l4 +42: the inner IPv4 header's checksum is kept valid under an outer anchor too");
	put16(f + 36, 4790);
	region_is("udp 4790 is no VXLAN: inner_l3 = l3", mk(SBX_MASK_INNER_L3, 0, 20), f, len, 14, 34);

	/* every prefix of the VXLAN frame: no read past avail (ASan in the sanitizer build), sane regions */
	put16(f + 36, 4789);
	{
		bool sane = true;

		for (uint32_t a = 0; a <= len; a++)
			for (uint8_t from = SBX_MASK_L2; from <= SBX_MASK_INNER_L4; from++) {
				m = mk(from, 3, 7);
				if (sbx_mask_region(&m, f, a, a, &r))
					sane &= r.start <= r.end && r.end - r.start <= 7;
			}
		check(sane, "every prefix and anchor: regions at most the length");
	}
	check(!strcmp(sbx_mask_from_name(SBX_MASK_INNER_L4), "inner_l4") && !strcmp(sbx_mask_from_name(9), "unknown"),
	      "anchor names");
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
