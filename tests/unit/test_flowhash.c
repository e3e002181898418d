/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests (TAP) of the symmetric flow hash (shared/flowhash.c): both directions equal for TCP, UDP
 * and SCTP over IPv4 and IPv6, behind 802.1Q / 802.1ad tags and MPLS labels; ports count for 5-tuple
 * and not for 2-tuple; every fragment of a datagram (IPv4, IPv6 fragment header) gives one value;
 * non-IP frames by the MAC pair; IPv4 and IPv6 keys apart; every prefix of every frame parsed from
 * a heap copy of exactly that many bytes (a sanitizer build sees a read past it); the spread of
 * 10,000 flows over 4096 buckets and 4 members; UDP without ports (a flow's fragmented and
 * unfragmented datagrams alike) and the balance that costs over 10,000..16 address pairs.
 * usage: test_flowhash
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spanbox/flowhash.h"
#include "tap.h"

#define SEED SBX_FLOW_HASH_SEED

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Frame description: one direction of a flow. */
struct flow {
	int v6;
	uint8_t proto;
	uint32_t a, b;      /* IPv4 addresses, or the last 4 bytes of 2001:db8::/96 ones */
	uint16_t pa, pb;
	int vlans;          /* 0..2 tags in front (first 0x88a8 when 2) */
	int mpls;           /* MPLS labels in front of the IP header */
	int frag;           /* 0: none; 1: first fragment (MF, offset 0); 2: a later one (offset 185) */
	int v6_ext;         /* IPv6: a hop-by-hop header before the transport header */
};

/* Build @p fl into @p p (reversed when @p rev); returns the frame length. */
static uint32_t build(uint8_t *p, const struct flow *fl, int rev)
{
	uint32_t off = 12, a = rev ? fl->b : fl->a, b = rev ? fl->a : fl->b, l4;
	uint16_t pa = rev ? fl->pb : fl->pa, pb = rev ? fl->pa : fl->pb;
	uint8_t ma[6] = {0x02, 0, 0, 0, 0, 0x0a}, mb[6] = {0x02, 0, 0, 0, 0, 0x0b};
	int t;

	memset(p, 0, 256);
	memcpy(p, rev ? ma : mb, 6);
	memcpy(p + 6, rev ? mb : ma, 6);
	for (t = 0; t < fl->vlans; t++, off += 4) {
		put16(p + off, t == 0 && fl->vlans == 2 ? 0x88a8 : 0x8100);
		put16(p + off + 2, (uint16_t)(10 + t));
	}
	if (fl->mpls) {
		put16(p + off, 0x8847);
		off += 2;
		for (t = 0; t < fl->mpls; t++, off += 4) {
			p[off] = 0x01;
			p[off + 1] = (uint8_t)(t << 4);
			p[off + 2] = t == fl->mpls - 1 ? 0x01 : 0x00;
			p[off + 3] = 64;
		}
	} else {
		put16(p + off, fl->v6 ? 0x86dd : 0x0800);
		off += 2;
	}
	if (!fl->v6) {
		p[off] = 0x45;
		put16(p + off + 2, 20 + 8 + 20);
		put16(p + off + 6, fl->frag == 1 ? 0x2000 : fl->frag == 2 ? 185 : 0x4000 /* DF */);
		p[off + 8] = 64;
		p[off + 9] = fl->proto;
		put16(p + off + 12, (uint16_t)(a >> 16));
		put16(p + off + 14, (uint16_t)a);
		put16(p + off + 16, (uint16_t)(b >> 16));
		put16(p + off + 18, (uint16_t)b);
		l4 = off + 20;
	} else {
		uint8_t nh = fl->proto;

		p[off] = 0x60;
		p[off + 7] = 64;
		p[off + 8] = 0x20, p[off + 9] = 0x01, p[off + 10] = 0x0d, p[off + 11] = 0xb8;
		p[off + 24] = 0x20, p[off + 25] = 0x01, p[off + 26] = 0x0d, p[off + 27] = 0xb8;
		put16(p + off + 20, (uint16_t)(a >> 16));
		put16(p + off + 22, (uint16_t)a);
		put16(p + off + 36, (uint16_t)(b >> 16));
		put16(p + off + 38, (uint16_t)b);
		l4 = off + 40;
		if (fl->v6_ext) {
			p[off + 6] = 0; /* hop-by-hop, 8 bytes */
			p[l4] = fl->frag ? 44 : nh;
			l4 += 8;
		} else {
			p[off + 6] = fl->frag ? 44 : nh;
		}
		if (fl->frag) {
			p[l4] = nh;
			put16(p + l4 + 2, fl->frag == 1 ? 0x0001 : (uint16_t)(185 << 3));
			l4 += 8;
		}
	}
	if (fl->frag != 2) {
		put16(p + l4, pa);
		put16(p + l4 + 2, pb);
	} else {
		memset(p + l4, 0xa5, 8); /* payload of a later fragment: no ports */
	}
	return l4 + 20;
}

static uint32_t hash_of(const struct flow *fl, int rev, enum sbx_flow_hash_fields f)
{
	uint8_t buf[256];
	uint32_t len = build(buf, fl, rev), h;
	uint8_t *c = malloc(len);

	memcpy(c, buf, len);
	h = sbx_flow_hash(c, len, f, SEED);
	free(c);
	return h;
}

/* Every prefix of the frame from a heap copy of exactly that length: no crash (ASan: no read past). */
static int prefixes(const struct flow *fl)
{
	uint8_t buf[256];
	uint32_t len = build(buf, fl, 0), n;
	volatile uint32_t sink = 0;

	for (n = 0; n <= len; n++) {
		uint8_t *c = malloc(n ? n : 1);

		memcpy(c, buf, n);
		sink ^= sbx_flow_hash(c, n, SBX_FLOW_HASH_5TUPLE, SEED);
		sink ^= sbx_flow_hash(c, n, SBX_FLOW_HASH_2TUPLE, SEED);
		free(c);
	}
	(void)sink;
	return 1;
}

int main(void)
{
	static const struct { const char *name; struct flow fl; } cases[] = {
		{"IPv4 TCP", {0, 6, 0xc6120001, 0xc6120002, 40000, 80, 0, 0, 0, 0}},
		{"IPv4 UDP", {0, 17, 0x0a000001, 0x0a000102, 5353, 53, 0, 0, 0, 0}},
		{"IPv4 SCTP", {0, 132, 0x0a000001, 0x0a000002, 2905, 2905 + 1, 0, 0, 0, 0}},
		{"IPv4 TCP behind 802.1Q", {0, 6, 0x0a000001, 0x0a000002, 1234, 443, 1, 0, 0, 0}},
		{"IPv4 TCP behind 802.1ad + 802.1Q", {0, 6, 0x0a000001, 0x0a000002, 1234, 443, 2, 0, 0, 0}},
		{"IPv4 UDP behind 3 MPLS labels", {0, 17, 0x0a000001, 0x0a000002, 1000, 2000, 0, 3, 0, 0}},
		{"IPv4 UDP behind 802.1Q + MPLS", {0, 17, 0x0a000001, 0x0a000002, 1000, 2000, 1, 1, 0, 0}},
		{"IPv6 TCP", {1, 6, 0x00000001, 0x00000002, 50000, 22, 0, 0, 0, 0}},
		{"IPv6 UDP behind hop-by-hop", {1, 17, 0x00000001, 0x00000002, 50000, 4789, 0, 0, 0, 1}},
		{"IPv6 SCTP behind 802.1ad + 802.1Q", {1, 132, 0x00000005, 0x00000003, 9, 10, 2, 0, 0, 0}},
		{"IPv6 TCP behind MPLS", {1, 6, 0x00000001, 0x00000002, 50000, 22, 0, 2, 0, 0}},
		{"IPv4 ICMP (no ports)", {0, 1, 0x0a000001, 0x0a000002, 0, 0, 0, 0, 0, 0}},
	};
	size_t i;
	int ok;

	/* 1. symmetric, and the 2-tuple hash does not depend on the ports */
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct flow *fl = &cases[i].fl;

		check(hash_of(fl, 0, SBX_FLOW_HASH_5TUPLE) == hash_of(fl, 1, SBX_FLOW_HASH_5TUPLE),
		      "%s: 5-tuple hash the same both ways", cases[i].name);
		check(hash_of(fl, 0, SBX_FLOW_HASH_2TUPLE) == hash_of(fl, 1, SBX_FLOW_HASH_2TUPLE),
		      "%s: 2-tuple hash the same both ways", cases[i].name);
		check(prefixes(fl), "%s: every prefix of the frame hashed without a read past it", cases[i].name);
	}

	/* 1b. a transport header cut short: the address pair only, whether the frame is untagged (the
	 * common frames' fast path) or tagged (the general walk), at each length short of the ports */
	{
		struct flow u = {0, 17, 0x0a000001, 0x0a000002, 1000, 2000, 0, 0, 0, 0}, icmp = u, ut = u;
		uint8_t buf[256], *c;
		uint32_t n, want, bad = 0;

		icmp.proto = 1;
		ut.vlans = 1;
		want = hash_of(&icmp, 0, SBX_FLOW_HASH_5TUPLE);
		for (n = 34; n < 38; n++) {
			build(buf, &u, 0);
			c = malloc(n);
			memcpy(c, buf, n);
			bad += sbx_flow_hash(c, n, SBX_FLOW_HASH_5TUPLE, SEED) != want;
			free(c);
			build(buf, &ut, 0);
			c = malloc(n + 4);
			memcpy(c, buf, n + 4);
			bad += sbx_flow_hash(c, n + 4, SBX_FLOW_HASH_5TUPLE, SEED) != want;
			free(c);
		}
		check(bad == 0, "IPv4 UDP cut within its ports (34..37 bytes untagged, 38..41 behind 802.1Q): the "
		      "address pair only, as an ICMP frame of the same addresses (%u of 8 differ)", bad);
	}

	/* 2. what each field set covers */
	{
		struct flow a = cases[0].fl, b = cases[0].fl, tagged = cases[0].fl, v6 = cases[0].fl;

		b.pa = 40001;
		check(hash_of(&a, 0, SBX_FLOW_HASH_5TUPLE) != hash_of(&b, 0, SBX_FLOW_HASH_5TUPLE),
		      "5-tuple: another source port, another hash");
		check(hash_of(&a, 0, SBX_FLOW_HASH_2TUPLE) == hash_of(&b, 0, SBX_FLOW_HASH_2TUPLE),
		      "2-tuple: another source port, the same hash");
		b = a;
		b.proto = 17;
		check(hash_of(&a, 0, SBX_FLOW_HASH_5TUPLE) != hash_of(&b, 0, SBX_FLOW_HASH_5TUPLE),
		      "5-tuple: UDP and TCP of the same ports apart");
		tagged.vlans = 2;
		tagged.mpls = 2;
		check(hash_of(&a, 0, SBX_FLOW_HASH_5TUPLE) == hash_of(&tagged, 0, SBX_FLOW_HASH_5TUPLE),
		      "tags and labels in front do not change the hash (same flow, other encapsulation)");
		v6.v6 = 1;
		check(hash_of(&a, 0, SBX_FLOW_HASH_2TUPLE) != hash_of(&v6, 0, SBX_FLOW_HASH_2TUPLE),
		      "an IPv4 and an IPv6 pair with the same address bytes apart (kind in the key)");
		check(sbx_flow_hash((const uint8_t *)"\x02\0\0\0\0\x0a\x02\0\0\0\0\x0b\x08\x06", 14,
				    SBX_FLOW_HASH_5TUPLE, SEED) ==
			      sbx_flow_hash((const uint8_t *)"\x02\0\0\0\0\x0b\x02\0\0\0\0\x0a\x08\x06", 14,
					    SBX_FLOW_HASH_5TUPLE, SEED),
		      "ARP: the sorted MAC pair, the same both ways");
		check(sbx_flow_hash((const uint8_t *)"\x02\0\0\0\0\x0a\x02\0\0\0\0\x0b\x08\x06", 14,
				    SBX_FLOW_HASH_5TUPLE, SEED) !=
			      sbx_flow_hash((const uint8_t *)"\x02\0\0\0\0\x0a\x02\0\0\0\0\x0c\x08\x06", 14,
					    SBX_FLOW_HASH_5TUPLE, SEED),
		      "ARP: another MAC, another hash");
	}

	/* 3. fragments: first and later fragments of a datagram, both directions, one value = the pair's */
	for (i = 0; i < 2; i++) {
		struct flow first = cases[i == 0 ? 0 : 7].fl, later, whole2;
		uint32_t h1, h2, h1r, h2r, pair;

		first.frag = 1;
		later = first;
		later.frag = 2;
		whole2 = first;
		whole2.frag = 0;
		h1 = hash_of(&first, 0, SBX_FLOW_HASH_5TUPLE);
		h1r = hash_of(&first, 1, SBX_FLOW_HASH_5TUPLE);
		h2 = hash_of(&later, 0, SBX_FLOW_HASH_5TUPLE);
		h2r = hash_of(&later, 1, SBX_FLOW_HASH_5TUPLE);
		pair = hash_of(&whole2, 0, SBX_FLOW_HASH_2TUPLE);
		check(h1 == h2 && h1 == h1r && h2 == h2r,
		      "%s: the first fragment (with ports) and a later one (without) hash alike, both ways",
		      i == 0 ? "IPv4" : "IPv6");
		check(h1 == pair, "%s: a fragment hashes as the 2-tuple of its address pair", i == 0 ? "IPv4" : "IPv6");
		check(h1 != hash_of(&whole2, 0, SBX_FLOW_HASH_5TUPLE),
		      "%s: an unfragmented packet of the flow uses its ports (another value)", i == 0 ? "IPv4" : "IPv6");
	}

	/* 3b. issue #24 item 6: one UDP flow's fragmented and unfragmented datagrams on one member. 5-tuple
	 * hashes UDP on its address pair (no ports: a later fragment carries none), TCP and SCTP with ports */
	for (i = 0; i < 2; i++) {
		struct flow whole = {i, 17, 0x0a000001, 0x0a000102, 5353, 53, 0, 0, 0, 0}, first = whole, later = whole;
		struct flow other = whole, tcp = whole;

		first.frag = 1;
		later.frag = 2;
		other.pa = 5354;
		tcp.proto = 6;
		check(hash_of(&whole, 0, SBX_FLOW_HASH_5TUPLE) == hash_of(&first, 0, SBX_FLOW_HASH_5TUPLE) &&
			      hash_of(&whole, 1, SBX_FLOW_HASH_5TUPLE) == hash_of(&later, 0, SBX_FLOW_HASH_5TUPLE),
		      "%s UDP, 5-tuple: an unfragmented datagram hashes as the fragments of the flow's others, both ways",
		      i == 0 ? "IPv4" : "IPv6");
		check(hash_of(&whole, 0, SBX_FLOW_HASH_5TUPLE) == hash_of(&other, 0, SBX_FLOW_HASH_5TUPLE) &&
			      hash_of(&whole, 0, SBX_FLOW_HASH_5TUPLE) == hash_of(&whole, 0, SBX_FLOW_HASH_2TUPLE),
		      "%s UDP, 5-tuple: the address pair only (another port, the same hash; = 2-tuple)",
		      i == 0 ? "IPv4" : "IPv6");
		tcp.pa = 5354;
		check(hash_of(&tcp, 0, SBX_FLOW_HASH_5TUPLE) != hash_of(&whole, 0, SBX_FLOW_HASH_5TUPLE),
		      "%s TCP, 5-tuple: still its ports", i == 0 ? "IPv4" : "IPv6");
	}

	/* 4. spread: 10,000 flows (random addresses and ports), 4096 buckets, bucket b to member b % 4 */
	{
		static unsigned bucket[4096];
		unsigned member[4] = {0}, used = 0, lo = ~0u, hi = 0;
		uint32_t x = 12345;
		int n, m;

		for (n = 0; n < 10000; n++) {
			struct flow fl = {0, 6, 0, 0, 0, 0, 0, 0, 0, 0};
			uint32_t h;

			x = x * 1103515245u + 12345u;
			fl.a = 0x0a000000 | (x >> 8);
			x = x * 1103515245u + 12345u;
			fl.b = 0xc6120000 | (x >> 16);
			x = x * 1103515245u + 12345u;
			fl.pa = (uint16_t)(1024 + (x >> 20));
			fl.pb = (uint16_t)(x & 1 ? 443 : 80);
			h = hash_of(&fl, n & 1, SBX_FLOW_HASH_5TUPLE);
			bucket[h % 4096]++;
			member[(h % 4096) % 4]++;
		}
		for (n = 0; n < 4096; n++)
			used += bucket[n] != 0;
		for (m = 0; m < 4; m++) {
			lo = member[m] < lo ? member[m] : lo;
			hi = member[m] > hi ? member[m] : hi;
		}
		/* 10,000 balls in 4096 bins: about 4096 * (1 - e^-2.44) = 3735 bins hold one */
		check(used > 3600, "10,000 flows fill %u of 4096 buckets (> 3600; uniform: ~3735)", used);
		ok = lo >= 2300 && hi <= 2700;
		check(ok, "10,000 flows over 4 members: %u..%u each (2300..2700)", lo, hi);
	}

	/* 4b. what hashing UDP without ports costs the balance (docs/CONFIG.md "tool_groups" quotes these
	 * lines): 10,000 UDP flows over P address pairs (random ports), 4 members, the flows each member
	 * gets with the address-pair key (UDP now) and with ports in the key (UDP before; TCP now) */
	{
		static const unsigned pairs[] = {10000, 1000, 100, 16};
		unsigned k;

		for (k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
			unsigned mem_pair[4] = {0}, mem_port[4] = {0}, lo_pair = ~0u, hi_pair = 0, lo_port = ~0u, hi_port = 0;
			uint32_t x = 777 + k;
			int n, m;

			for (n = 0; n < 10000; n++) {
				struct flow fl = {0, 17, 0, 0, 0, 0, 0, 0, 0, 0}, t;

				fl.a = 0x0a000000 | (uint32_t)(n % pairs[k]);
				fl.b = 0xc6120000 | (uint32_t)((n % pairs[k]) * 7 % 65536);
				x = x * 1103515245u + 12345u;
				fl.pa = (uint16_t)(1024 + (x >> 20));
				fl.pb = 53;
				t = fl;
				t.proto = 6;
				mem_pair[(hash_of(&fl, n & 1, SBX_FLOW_HASH_5TUPLE) % 4096) % 4]++;
				mem_port[(hash_of(&t, n & 1, SBX_FLOW_HASH_5TUPLE) % 4096) % 4]++;
			}
			for (m = 0; m < 4; m++) {
				lo_pair = mem_pair[m] < lo_pair ? mem_pair[m] : lo_pair;
				hi_pair = mem_pair[m] > hi_pair ? mem_pair[m] : hi_pair;
				lo_port = mem_port[m] < lo_port ? mem_port[m] : lo_port;
				hi_port = mem_port[m] > hi_port ? mem_port[m] : hi_port;
			}
			printf("# balance: 10000 UDP flows over %5u address pairs, 4 members: address pair key %u..%u "
			       "flows per member (max/mean %.2f), with ports %u..%u (max/mean %.2f)\n", pairs[k], lo_pair,
			       hi_pair, hi_pair / 2500.0, lo_port, hi_port, hi_port / 2500.0);
			/* a pair's flows go together: the members' counts vary as those of P balls (10000 / P
			 * flows each), a standard deviation of 10000 / P * sqrt(P * 3 / 16) flows; 4 of them */
			if (pairs[k] >= 1000) {
				unsigned dev = pairs[k] == 10000 ? 200 : 520;

				check(lo_pair >= 2500 - dev && hi_pair <= 2500 + dev,
				      "10000 UDP flows over %u address pairs, 4 members: %u..%u each (2500 +- %u)",
				      pairs[k], lo_pair, hi_pair, dev);
			}
		}
	}

	/* 5. names */
	{
		enum sbx_flow_hash_fields f;

		check(sbx_flow_hash_fields_parse("2tuple", &f) == 0 && f == SBX_FLOW_HASH_2TUPLE &&
			      sbx_flow_hash_fields_parse("5tuple", &f) == 0 && f == SBX_FLOW_HASH_5TUPLE &&
			      strcmp(sbx_flow_hash_fields_name(SBX_FLOW_HASH_2TUPLE), "2tuple") == 0 &&
			      strcmp(sbx_flow_hash_fields_name(SBX_FLOW_HASH_5TUPLE), "5tuple") == 0,
		      "names 5tuple / 2tuple parse and print");
		check(sbx_flow_hash_fields_parse("3tuple", &f) == -1 && sbx_flow_hash_fields_parse(NULL, &f) == -1 &&
			      sbx_flow_hash_fields_name((enum sbx_flow_hash_fields)7) == NULL,
		      "an unknown name refused, an unknown value has no name");
	}
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
