/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests (TAP) of map rules (shared/maprules.c): the parser's errors name the rule and the field
 * ("rules[1].dst_port: 70000 is not a port"), good rules give the fields rte_acl gets, shadowed
 * rules are found with the earlier rule that covers them, and the key extractor on hand-built
 * frames: untagged, 802.1Q, QinQ (0x88a8 + 0x8100), IPv4 options, IPv4 and IPv6 fragments (first:
 * ports; later: none, never a port rule), IPv6 extension-header chains, ARP and MPLS (not IP),
 * every prefix of every frame from a heap copy of exactly that many bytes.
 * usage: test_maprules
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "spanbox/maprules.h"
#include "tap.h"

/* Parse one JSON text of rules; 0 or -1 with err. */
static int parse(const char *json, struct sbx_map_rules *r, char *err, size_t errlen)
{
	cJSON *j = cJSON_Parse(json);
	int rc;

	if (j == NULL) {
		snprintf(err, errlen, "(bad JSON in the test)");
		return -1;
	}
	rc = sbx_map_rules_parse(j, "rules", r, err, errlen);
	cJSON_Delete(j);
	return rc;
}

static void parser_errors(void)
{
	static const struct { const char *json, *err; } bad[] = {
		{ "[{\"action\":\"pass\"},{\"action\":\"pass\",\"dst_port\":70000}]", "rules[1].dst_port: 70000 is not a port" },
		{ "[{\"action\":\"pass\",\"dst_port\":\"1023-1\"}]", "rules[0].dst_port: \"1023-1\" is a reversed range" },
		{ "[{\"action\":\"pass\",\"src_port\":\"1-x\"}]", "rules[0].src_port: \"1-x\" is not a port range (lo-hi, 0..65535)" },
		{ "[{\"action\":\"pass\",\"vlan\":4096}]", "rules[0].vlan: 4096 is not a VLAN id" },
		{ "[{\"action\":\"pass\",\"inner_vlan\":\"300-200\"}]", "rules[0].inner_vlan: \"300-200\" is a reversed range" },
		{ "[{\"action\":\"pass\",\"src\":\"10.0.0.0/33\"}]", "rules[0].src: \"10.0.0.0/33\" has a bad prefix length (0..32)" },
		{ "[{\"action\":\"pass\",\"src\":\"10.0.0.1/24\"}]", "rules[0].src: \"10.0.0.1/24\" has bits set past its prefix length" },
		{ "[{\"action\":\"pass\",\"dst\":\"10.0.0/8\"}]", "rules[0].dst: \"10.0.0/8\" is not an IPv4 or IPv6 prefix (address/length)" },
		{ "[{\"action\":\"pass\",\"dst\":\"2001:db8::/129\"}]", "rules[0].dst: \"2001:db8::/129\" has a bad prefix length (0..128)" },
		{ "[{\"action\":\"pass\",\"src\":\"10.0.0.0/8\",\"dst\":\"2001:db8::/32\"}]", "rules[0].dst: \"2001:db8::/32\" is IPv6 in a rule with an IPv4 address" },
		{ "[{\"action\":\"pass\",\"colour\":1}]", "rules[0].colour: unknown key (a rule takes action, vlan, inner_vlan, ethertype, src_mac, dst_mac, src, dst, ip_proto, dscp, src_port, dst_port, tcp_flags, fragment)" },
		{ "[{\"dst_port\":80}]", "rules[0].action: missing (\"pass\" or \"drop\")" },
		{ "[{\"action\":\"forward\"}]", "rules[0].action: \"forward\" is not an action (\"pass\" or \"drop\")" },
		{ "[1]", "rules[0]: is not an object" },
		{ "{}", "rules: not an array of rules" },
		{ "[{\"action\":\"pass\",\"ip_proto\":256}]", "rules[0].ip_proto: 256 is not an IP protocol (0..255)" },
		{ "[{\"action\":\"pass\",\"dscp\":64}]", "rules[0].dscp: 64 is not a DSCP value (0..63)" },
		{ "[{\"action\":\"pass\",\"ethertype\":\"0x10000\"}]", "rules[0].ethertype: \"0x10000\" is not an EtherType" },
		{ "[{\"action\":\"pass\",\"src_mac\":\"02:00:00:00:00\"}]", "rules[0].src_mac: \"02:00:00:00:00\" is not a MAC address (aa:bb:cc:dd:ee:ff or value/mask)" },
		{ "[{\"action\":\"pass\",\"tcp_flags\":\"0x100/0x12\"}]", "rules[0].tcp_flags: \"0x100/0x12\" is not TCP flags (0..0xff, value or value/mask) (value/mask, 0..0xff)" },
		{ "[{\"action\":\"pass\",\"fragment\":\"middle\"}]", "rules[0].fragment: \"middle\" is not a fragment state (\"none\", \"first\" or \"later\")" },
		{ "[{\"action\":\"pass\",\"fragment\":\"later\",\"dst_port\":80}]", "rules[0].fragment: \"later\" never matches a rule naming ports: a later fragment has no transport header" },
		{ "[{\"action\":\"pass\",\"ip_proto\":1,\"dst_port\":80}]", "rules[0].ip_proto: 1 has no ports (only 6, 17 and 132 do): the rule names ports" },
		{ "[{\"action\":\"pass\",\"ip_proto\":17,\"tcp_flags\":2}]", "rules[0].ip_proto: 17 is not TCP (6): the rule names tcp_flags" },
		{ "[{\"action\":\"pass\",\"dst_port\":1.5}]", "rules[0].dst_port: 1.5 is not a port" },
	};
	struct sbx_map_rules r;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		int rc = parse(bad[i].json, &r, err, sizeof(err));

		check(rc == -1 && strcmp(err, bad[i].err) == 0 && r.rule == NULL && r.n == 0,
		      "refused: %s (got %d \"%s\")", bad[i].err, rc, err);
	}
	/* too many rules: 65,537 */
	{
		cJSON *a = cJSON_CreateArray();

		for (i = 0; i < SBX_MAP_MAX_RULES + 1; i++) {
			cJSON *o = cJSON_CreateObject();

			cJSON_AddStringToObject(o, "action", "pass");
			cJSON_AddItemToArray(a, o);
		}
		int rc = sbx_map_rules_parse(a, "maps[2].rules", &r, err, sizeof(err));

		check(rc == -1 && strcmp(err, "maps[2].rules: 65537 rules, at most 65536") == 0,
		      "65,537 rules refused (%s)", err);
		cJSON_DeleteItemFromArray(a, 0);
		rc = sbx_map_rules_parse(a, "maps[2].rules", &r, err, sizeof(err));
		check(rc == 0 && r.n == SBX_MAP_MAX_RULES, "65,536 rules taken");
		sbx_map_rules_free(&r);
		cJSON_Delete(a);
	}
}

static void parser_fields(void)
{
	struct sbx_map_rules r;
	char err[256] = "";
	int rc = parse("[{\"action\":\"drop\",\"ip_proto\":6,\"dst_port\":\"873\"},"
		       "{\"action\":\"pass\",\"vlan\":\"100-199\",\"inner_vlan\":7},"
		       "{\"action\":\"pass\",\"src\":\"10.20.0.0/16\",\"dst_port\":\"1-1023\"},"
		       "{\"action\":\"pass\",\"dst\":\"2001:db8:1::/48\",\"ip_proto\":17},"
		       "{\"action\":\"pass\",\"src_mac\":\"02:00:00:00:00:00/ff:00:00:00:00:00\",\"ethertype\":\"0x0806\"},"
		       "{\"action\":\"pass\",\"tcp_flags\":\"0x02/0x12\",\"dscp\":46,\"fragment\":\"first\"}]", &r, err, sizeof(err));

	if (!check(rc == 0 && r.n == 6, "six good rules parse (%s)", err))
		return;
	check(r.rule[0].action == SBX_MAP_DROP && r.rule[0].f[SBX_MF_PROTO].value == 6 &&
	      r.rule[0].f[SBX_MF_PROTO].mask_range == 0xff && r.rule[0].f[SBX_MF_DPORT].value == 873 &&
	      r.rule[0].f[SBX_MF_DPORT].mask_range == 873 && r.rule[0].f[SBX_MF_SPORT].mask_range == 65535 &&
	      r.rule[0].f[SBX_MF_FLAGS].value == (SBX_MAPK_IP | SBX_MAPK_PORTS),
	      "rule 0: drop, protocol 6, port 873..873, source port any, needs IP and ports");
	check(r.rule[1].f[SBX_MF_VLAN].value == 100 && r.rule[1].f[SBX_MF_VLAN].mask_range == 199 &&
	      r.rule[1].f[SBX_MF_IVLAN].value == 7 && r.rule[1].f[SBX_MF_FLAGS].value == (SBX_MAPK_VLAN | SBX_MAPK_IVLAN),
	      "rule 1: outer VLAN 100..199, inner 7, needs both tags");
	check(r.rule[2].family == 4 && r.rule[2].f[SBX_MF_SRC0].value == 0x0a140000 &&
	      r.rule[2].f[SBX_MF_SRC0].mask_range == 16 && r.rule[2].f[SBX_MF_FLAGS].mask_range & SBX_MAPK_IP6 &&
	      !(r.rule[2].f[SBX_MF_FLAGS].value & SBX_MAPK_IP6), "rule 2: 10.20.0.0/16 in word 0, IPv4 only");
	check(r.rule[3].family == 6 && r.rule[3].f[SBX_MF_DST0].value == 0x20010db8 && r.rule[3].f[SBX_MF_DST0].mask_range == 32 &&
	      r.rule[3].f[SBX_MF_DST1].value == 0x00010000 && r.rule[3].f[SBX_MF_DST1].mask_range == 16 &&
	      r.rule[3].f[SBX_MF_DST2].mask_range == 0, "rule 3: 2001:db8:1::/48 as /32 + /16 + /0 + /0");
	check(r.rule[4].f[SBX_MF_SMAC_HI].value == 0x02000000 && r.rule[4].f[SBX_MF_SMAC_HI].mask_range == 0xff000000 &&
	      r.rule[4].f[SBX_MF_SMAC_LO].mask_range == 0 && r.rule[4].f[SBX_MF_ETYPE].value == 0x0806,
	      "rule 4: source MAC value/mask, EtherType 0x0806");
	check(r.rule[5].f[SBX_MF_TCPF].value == 0x02 && r.rule[5].f[SBX_MF_TCPF].mask_range == 0x12 &&
	      r.rule[5].f[SBX_MF_DSCP].value == 46 && (r.rule[5].f[SBX_MF_FLAGS].value & SBX_MAPK_FRAG_FIRST),
	      "rule 5: TCP flags 0x02/0x12, DSCP 46, first fragment");
	sbx_map_rules_free(&r);
}

static void shadowing(void)
{
	struct sbx_map_rules r;
	struct sbx_map_shadow sh[8];
	char err[256] = "";
	size_t n;
	int rc = parse("[{\"action\":\"pass\",\"src\":\"10.0.0.0/8\"},"            /* 0 */
		       "{\"action\":\"drop\",\"src\":\"10.1.0.0/16\",\"dst_port\":80},"  /* 1: by 0 */
		       "{\"action\":\"pass\",\"dst_port\":\"1-1023\"},"                  /* 2 */
		       "{\"action\":\"pass\",\"dst_port\":\"22\",\"ip_proto\":6},"        /* 3: by 2 */
		       "{\"action\":\"pass\",\"dst_port\":\"1000-2000\"},"                /* 4: overlaps 2 only */
		       "{\"action\":\"pass\",\"src\":\"2001:db8::/32\"},"                 /* 5: v6, 0 is v4 */
		       "{\"action\":\"pass\",\"ip_proto\":17},"                           /* 6 */
		       "{\"action\":\"pass\",\"ip_proto\":17,\"fragment\":\"later\"},"    /* 7: by 6 */
		       "{\"action\":\"pass\",\"vlan\":\"10-20\"},"                        /* 8 */
		       "{\"action\":\"pass\",\"vlan\":15,\"inner_vlan\":3}]",              /* 9: by 8 */
		       &r, err, sizeof(err));

	if (!check(rc == 0, "shadow rules parse (%s)", err))
		return;
	n = sbx_map_rules_shadowed(&r, sh, 8);
	check(n == 4 && sh[0].rule == 1 && sh[0].by == 0 && sh[1].rule == 3 && sh[1].by == 2 &&
	      sh[2].rule == 7 && sh[2].by == 6 && sh[3].rule == 9 && sh[3].by == 8,
	      "shadowed: 1 by 0, 3 by 2, 7 by 6, 9 by 8; not 4 (a partial overlap) nor 5 (other family) (%zu found)", n);
	check(sbx_map_rules_shadowed(&r, sh, 1) == 4, "the count is whole when the room is not");
	sbx_map_rules_free(&r);
}

/* ---------------------------------------------------------------- extractor */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Ethernet header with @p tags tags (first 0x88a8 when 2), EtherType @p et; returns its length. */
static uint32_t eth(uint8_t *p, int tags, uint16_t et)
{
	uint32_t off = 12;
	int t;

	memset(p, 0, 512);
	memcpy(p, "\x02\x00\x00\x00\x00\x0b\x02\x00\x00\x00\x00\x0a", 12);
	for (t = 0; t < tags; t++, off += 4) {
		put16(p + off, t == 0 && tags >= 2 ? 0x88a8 : 0x8100);
		put16(p + off + 2, (uint16_t)(0x3000 | (100 + t))); /* PCP 1 set: masked away */
	}
	put16(p + off, et);
	return off + 2;
}

/* IPv4 with @p optw option words, protocol, fragment field; TCP/UDP ports 1234 -> 80, flags SYN. */
static uint32_t ipv4(uint8_t *p, uint32_t off, int optw, uint8_t proto, uint16_t frag)
{
	uint32_t ihl = 20 + (uint32_t)optw * 4;

	p[off] = (uint8_t)(0x40 | ihl / 4);
	p[off + 1] = 46 << 2;
	put16(p + off + 2, (uint16_t)(ihl + 20));
	put16(p + off + 6, frag);
	p[off + 8] = 64;
	p[off + 9] = proto;
	memcpy(p + off + 12, "\x0a\x01\x02\x03\xc0\xa8\x00\x01", 8);
	put16(p + off + ihl, 1234);
	put16(p + off + ihl + 2, 80);
	p[off + ihl + 13] = 0x02;
	return off + ihl + 20;
}

/* IPv6 with the extension headers @p ext (ending in @p proto), traffic class 0xb8 (DSCP 46). */
static uint32_t ipv6(uint8_t *p, uint32_t off, const uint8_t *ext, int next, uint8_t proto, uint16_t frag)
{
	uint32_t q = off + 40;
	int i;

	p[off] = 0x6b;
	p[off + 1] = 0x80;
	p[off + 6] = next ? ext[0] : proto;
	p[off + 7] = 64;
	memcpy(p + off + 8, "\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01", 16);
	memcpy(p + off + 24, "\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02", 16);
	for (i = 0; i < next; i++) {
		uint8_t nh = i + 1 < next ? ext[i + 1] : proto;

		p[q] = nh;
		if (ext[i] == 44) {
			put16(p + q + 2, frag);
			q += 8;
		} else if (ext[i] == 51) {
			p[q + 1] = 1; /* (1 + 2) * 4 = 12 bytes */
			q += 12;
		} else {
			p[q + 1] = 1; /* (1 + 1) * 8 = 16 bytes */
			q += 16;
		}
	}
	put16(p + q, 1234);
	put16(p + q + 2, 80);
	p[q + 13] = 0x12;
	put16(p + off + 4, (uint16_t)(q - off - 40 + 20));
	return q + 20;
}

static int every_prefix(const uint8_t *f, uint32_t len)
{
	struct sbx_map_key k;
	uint32_t l;

	for (l = 0; l <= len; l++) {
		uint8_t *c = malloc(l ? l : 1);

		memcpy(c, f, l);
		sbx_map_key_extract(c, l, &k);
		free(c);
		if ((k.flags & SBX_MAPK_PORTS) && l < len - 16) /* ports need their 4 bytes: L4 at len - 20 */
			return 0;
	}
	return 1;
}

static void extractor(void)
{
	uint8_t f[512];
	struct sbx_map_key k;
	uint32_t len;
	static const uint8_t chain[] = { 0, 60, 43, 51 }, frag[] = { 0, 44 };

	len = ipv4(f, eth(f, 0, 0x0800), 0, 6, 0x4000);
	sbx_map_key_extract(f, len, &k);
	check(k.flags == (SBX_MAPK_IP | SBX_MAPK_PORTS | SBX_MAPK_TCPF) && k.proto == 6 && k.dscp == 46 &&
	      ntohs(k.src_port) == 1234 && ntohs(k.dst_port) == 80 && ntohs(k.tcp_flags) == 0x02 &&
	      ntohl(k.ethertype) == 0x0800 && sbx_map_key_field(&k, SBX_MF_SRC0) == 0x0a010203 &&
	      sbx_map_key_field(&k, SBX_MF_DST0) == 0xc0a80001 && sbx_map_key_field(&k, SBX_MF_SRC1) == 0 &&
	      sbx_map_key_field(&k, SBX_MF_SMAC_HI) == 0x02000000 && sbx_map_key_field(&k, SBX_MF_SMAC_LO) == 0x000a &&
	      sbx_map_key_field(&k, SBX_MF_DMAC_LO) == 0x000b, "untagged IPv4/TCP (DF): every field");
	check(every_prefix(f, len), "untagged IPv4/TCP: every prefix, ports only when whole");

	len = ipv4(f, eth(f, 2, 0x0800), 2, 17, 0);
	sbx_map_key_extract(f, len, &k);
	check(k.flags == (SBX_MAPK_IP | SBX_MAPK_PORTS | SBX_MAPK_VLAN | SBX_MAPK_IVLAN) && ntohs(k.outer_vlan) == 100 &&
	      ntohs(k.inner_vlan) == 101 && k.proto == 17 && ntohs(k.dst_port) == 80 && k.tcp_flags == 0,
	      "QinQ (0x88a8 100, 0x8100 101) IPv4 with options /UDP: VLAN ids without PCP, ports, no TCP flags");
	check(every_prefix(f, len), "QinQ IPv4/UDP: every prefix");

	len = ipv4(f, eth(f, 3, 0x0800), 0, 17, 0);
	sbx_map_key_extract(f, len, &k);
	check(ntohs(k.outer_vlan) == 100 && ntohs(k.inner_vlan) == 101 && ntohl(k.ethertype) == 0x0800 && ntohs(k.dst_port) == 80,
	      "three tags: outer and inner are the first two, the EtherType the one after the last");

	len = ipv4(f, eth(f, 1, 0x0800), 0, 6, 0x2000);
	sbx_map_key_extract(f, len, &k);
	check(k.flags == (SBX_MAPK_IP | SBX_MAPK_PORTS | SBX_MAPK_TCPF | SBX_MAPK_FRAG_FIRST | SBX_MAPK_VLAN),
	      "IPv4 first fragment (MF, offset 0): fragment first, ports and flags read");
	len = ipv4(f, eth(f, 0, 0x0800), 0, 6, 185);
	sbx_map_key_extract(f, len, &k);
	check(k.flags == (SBX_MAPK_IP | SBX_MAPK_FRAG_LATER) && k.src_port == 0 && k.dst_port == 0 && k.proto == 6,
	      "IPv4 later fragment (offset 185): no ports, no flags");

	len = ipv6(f, eth(f, 0, 0x86dd), chain, 4, 6, 0);
	sbx_map_key_extract(f, len, &k);
	check(k.flags == (SBX_MAPK_IP | SBX_MAPK_IP6 | SBX_MAPK_PORTS | SBX_MAPK_TCPF) && k.proto == 6 && k.dscp == 46 &&
	      ntohs(k.dst_port) == 80 && ntohs(k.tcp_flags) == 0x12 && sbx_map_key_field(&k, SBX_MF_SRC0) == 0x20010db8 &&
	      sbx_map_key_field(&k, SBX_MF_DST3) == 2, "IPv6 through hop-by-hop, dest opts, routing, AH to TCP");
	check(every_prefix(f, len), "IPv6 chain: every prefix");

	len = ipv6(f, eth(f, 0, 0x86dd), frag, 2, 17, 0x0001);
	sbx_map_key_extract(f, len, &k);
	check(k.flags == (SBX_MAPK_IP | SBX_MAPK_IP6 | SBX_MAPK_PORTS | SBX_MAPK_FRAG_FIRST) && k.proto == 17 && ntohs(k.src_port) == 1234,
	      "IPv6 first fragment (M set, offset 0): ports");
	len = ipv6(f, eth(f, 1, 0x86dd), frag, 2, 17, 185 << 3);
	sbx_map_key_extract(f, len, &k);
	check(k.flags == (SBX_MAPK_IP | SBX_MAPK_IP6 | SBX_MAPK_FRAG_LATER | SBX_MAPK_VLAN) && k.proto == 17 && k.dst_port == 0,
	      "IPv6 later fragment: protocol from the fragment header, no ports");
	{
		static const uint8_t two[] = { 44, 44 };
		uint32_t l3 = eth(f, 0, 0x86dd);

		len = ipv6(f, l3, two, 2, 17, 0x0001);
		put16(f + l3 + 40 + 8 + 2, 185 << 3); /* the second fragment header: a later one */
		sbx_map_key_extract(f, len, &k);
		check(k.flags == (SBX_MAPK_IP | SBX_MAPK_IP6 | SBX_MAPK_FRAG_LATER),
		      "IPv6 first then later fragment header: later only, no ports (fuzz_maprules found first+later)");
	}
	len = ipv6(f, eth(f, 0, 0x86dd), frag, 2, 17, 0);
	sbx_map_key_extract(f, len, &k);
	check(k.flags == (SBX_MAPK_IP | SBX_MAPK_IP6 | SBX_MAPK_PORTS), "IPv6 atomic fragment (offset 0, no M): not a fragment");

	len = eth(f, 0, 0x0806) + 28;
	sbx_map_key_extract(f, len, &k);
	check(k.flags == 0 && k.proto == 0 && ntohl(k.ethertype) == 0x0806, "ARP: not IP, EtherType 0x0806");
	len = eth(f, 0, 0x8847);
	memcpy(f + len, "\x00\x01\x01\x40", 4);
	len = ipv4(f, len + 4, 0, 6, 0);
	sbx_map_key_extract(f, len, &k);
	check(k.flags == 0 && ntohl(k.ethertype) == 0x8847, "MPLS: the payload is not read as IP");
	sbx_map_key_extract(f, 5, &k);
	check(k.flags == 0 && sbx_map_key_field(&k, SBX_MF_DMAC_HI) == 0x02000000 && k.ethertype == 0, "5 bytes: a part of a MAC");
}

/* The reference match on the extracted keys: ports never on a later fragment. */
static void reference_match(void)
{
	struct sbx_map_rules r;
	struct sbx_map_key k;
	uint8_t f[512];
	char err[256] = "";
	uint32_t len;
	int rc = parse("[{\"action\":\"pass\",\"dst_port\":\"0-65535\"},{\"action\":\"pass\",\"ip_proto\":6,\"fragment\":\"later\"},"
		       "{\"action\":\"pass\",\"vlan\":0}]", &r, err, sizeof(err));

	if (!check(rc == 0, "match rules parse (%s)", err))
		return;
	len = ipv4(f, eth(f, 0, 0x0800), 0, 6, 185);
	sbx_map_key_extract(f, len, &k);
	check(!sbx_map_rule_match(&r.rule[0], &k) && sbx_map_rule_match(&r.rule[1], &k),
	      "a later fragment: not the rule of every port, the rule of later fragments");
	len = ipv4(f, eth(f, 0, 0x0800), 0, 1, 0);
	sbx_map_key_extract(f, len, &k);
	check(!sbx_map_rule_match(&r.rule[0], &k) && !sbx_map_rule_match(&r.rule[2], &k),
	      "ICMP: not a port rule; untagged: not the rule of VLAN 0");
	len = ipv4(f, eth(f, 0, 0x0800), 0, 17, 0);
	sbx_map_key_extract(f, len, &k);
	check(sbx_map_rule_match(&r.rule[0], &k), "UDP: the rule of every port");
	sbx_map_rules_free(&r);
}

/* A random rule of few, often nested values (so that many rules cover others): the fields of
 * struct sbx_map_rule set directly, as the parser would (values without host bits). */
static void random_rule(struct sbx_map_rule *r, unsigned int *seed)
{
	static const uint32_t bases[] = { 0x0a000000, 0x0a010000, 0x0a010200, 0xc0a80000, 0xc0a80100, 0xac100000 };
	static const uint8_t lens[] = { 8, 16, 24, 32, 12, 20 };

	memset(r, 0, sizeof(*r));
	r->action = (uint8_t)(rand_r(seed) & 1);
	for (int f = 0; f < SBX_MF_COUNT; f++) {
		uint32_t lo, hi;

		if (rand_r(seed) % 4 == 0)
			continue;
		switch (f) {
		case SBX_MF_PROTO:
			r->f[f] = (struct sbx_map_rule_field){ (uint32_t)(rand_r(seed) & 1 ? 6 : 17), 0xff };
			break;
		case SBX_MF_VLAN:
		case SBX_MF_SPORT:
		case SBX_MF_DPORT:
			lo = (uint32_t)(rand_r(seed) % 8) * 100, hi = lo + (uint32_t)(rand_r(seed) % 4) * 150;
			r->f[f] = (struct sbx_map_rule_field){ lo, hi };
			break;
		case SBX_MF_SRC0:
		case SBX_MF_DST0: {
			uint32_t len = lens[rand_r(seed) % 6], v = bases[rand_r(seed) % 6] | (uint32_t)(rand_r(seed) & 0xff);

			r->f[f] = (struct sbx_map_rule_field){ len == 32 ? v : v & (UINT32_MAX << (32 - len)), len };
			break;
		}
		case SBX_MF_FLAGS:
			r->f[f] = (struct sbx_map_rule_field){ (uint32_t)(rand_r(seed) & 0x3), 0x3 };
			break;
		default:
			continue;
		}
		r->used |= 1u << f;
	}
	for (int f = 0; f < SBX_MF_COUNT; f++)
		if (!(r->used & (1u << f)))
			r->f[f] = (struct sbx_map_rule_field){ 0, sbx_map_field_defs[f].type == SBX_MFT_RANGE ?
							      (sbx_map_field_defs[f].size == 1 ? 0xffu : 0xffffu) : 0 };
}

/* The shadow check's index (shared/maprules.c) against the plain definition: every rule j with the
 * first earlier rule that covers it, by sbx_map_rule_covers() over all pairs. */
static void shadowing_random(void)
{
	const uint32_t sizes[] = { 1, 2, 50, 3000 };
	unsigned int seed = 12345;

	for (size_t t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
		struct sbx_map_rules r = { calloc(sizes[t], sizeof(struct sbx_map_rule)), sizes[t] };
		struct sbx_map_shadow *got = calloc(sizes[t], sizeof(*got)), *want = calloc(sizes[t], sizeof(*want));
		size_t ng, nw = 0, same = 0;

		if (r.rule == NULL || got == NULL || want == NULL)
			return;
		for (uint32_t i = 0; i < r.n; i++)
			random_rule(&r.rule[i], &seed);
		for (uint32_t j = 1; j < r.n; j++)
			for (uint32_t i = 0; i < j; i++)
				if (sbx_map_rule_covers(&r.rule[i], &r.rule[j])) {
					want[nw++] = (struct sbx_map_shadow){ .rule = j, .by = i };
					break;
				}
		ng = sbx_map_rules_shadowed(&r, got, r.n);
		for (size_t k = 0; k < ng && k < nw; k++)
			same += got[k].rule == want[k].rule && got[k].by == want[k].by;
		check(ng == nw && same == nw && (r.n < 3000 || nw > 300),
		      "%u random rules: %zu shadowed, the same rules by the same first earlier rule as the plain check "
		      "(%zu found, %zu agree)", r.n, nw, ng, same);
		free(r.rule);
		free(got);
		free(want);
	}
}

int main(void)
{
	parser_errors();
	parser_fields();
	shadowing();
	shadowing_random();
	extractor();
	reference_match();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
