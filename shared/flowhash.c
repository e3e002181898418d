/* SPDX-License-Identifier: BSD-3-Clause */
/* Symmetric flow hash (what is hashed and the sources of the formats: include/spanbox/flowhash.h).
 * Every read is preceded by a bound check against len. */
#include <string.h>

#include <rte_jhash.h>

#include "spanbox/flowhash.h"

#define ETH_ALEN_ 6
#define ET_IPV4 0x0800
#define ET_IPV6 0x86dd
#define ET_VLAN 0x8100
#define ET_QINQ 0x88a8
#define ET_QINQ_OLD 0x9100
#define ET_MPLS 0x8847
#define ET_MPLS_MC 0x8848
#define MAX_TAGS 8
#define MAX_LABELS 8
#define MAX_EXT_HDRS 8
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_SCTP 132
#define IP6_HOPOPTS 0
#define IP6_ROUTING 43
#define IP6_FRAG 44
#define IP6_AH 51
#define IP6_DSTOPTS 60

/* The hashed key: kind, sorted address pair, protocol and sorted port pair (zero when not used). */
enum key_kind { KEY_MAC = 1, KEY_IPV4 = 4, KEY_IPV6 = 6 };
struct flow_key {
	uint8_t kind;
	uint8_t proto;
	uint16_t port_lo, port_hi;
	uint8_t pad[2];
	uint8_t addr_lo[16], addr_hi[16];
};

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Sorted copy of two @p n byte addresses into the key. */
static void put_pair(struct flow_key *k, const uint8_t *a, const uint8_t *b, size_t n)
{
	if (memcmp(a, b, n) > 0) {
		const uint8_t *t = a;

		a = b;
		b = t;
	}
	memcpy(k->addr_lo, a, n);
	memcpy(k->addr_hi, b, n);
}

/* Sorted port pair of a TCP, UDP or SCTP header at @p l4 (4 bytes checked by the caller). */
static void put_ports(struct flow_key *k, uint8_t proto, const uint8_t *l4)
{
	uint16_t s = get16(l4), d = get16(l4 + 2);

	k->proto = proto;
	k->port_lo = s < d ? s : d;
	k->port_hi = s < d ? d : s;
}

static int has_ports(uint8_t proto)
{
	return proto == PROTO_TCP || proto == PROTO_UDP || proto == PROTO_SCTP;
}

/* IPv4 at @p off: 0 and the key filled, -1 when the header is not whole (the caller falls back). */
static int ipv4_key(struct flow_key *k, const uint8_t *f, uint32_t off, uint32_t len, int five)
{
	uint32_t ihl;
	uint16_t frag;

	if (len < off + 20 || (f[off] >> 4) != 4)
		return -1;
	ihl = (uint32_t)(f[off] & 0x0f) * 4;
	if (ihl < 20 || len < off + ihl)
		return -1;
	k->kind = KEY_IPV4;
	put_pair(k, f + off + 12, f + off + 16, 4);
	frag = get16(f + off + 6);
	if (five && (frag & 0x3fff) == 0 && has_ports(f[off + 9]) && len >= off + ihl + 4)
		put_ports(k, f[off + 9], f + off + ihl);
	return 0;
}

/* IPv6 at @p off (extension headers walked): as ipv4_key. */
static int ipv6_key(struct flow_key *k, const uint8_t *f, uint32_t off, uint32_t len, int five)
{
	uint8_t nh;
	uint32_t p;
	int i;

	if (len < off + 40 || (f[off] >> 4) != 6)
		return -1;
	k->kind = KEY_IPV6;
	put_pair(k, f + off + 8, f + off + 24, 16);
	if (!five)
		return 0;
	nh = f[off + 6];
	p = off + 40;
	for (i = 0; i < MAX_EXT_HDRS; i++) {
		if (nh == IP6_HOPOPTS || nh == IP6_ROUTING || nh == IP6_DSTOPTS) {
			if (len < p + 2)
				return 0;
			nh = f[p];
			p += ((uint32_t)f[p + 1] + 1) * 8;
		} else if (nh == IP6_AH) {
			if (len < p + 2)
				return 0;
			nh = f[p];
			p += ((uint32_t)f[p + 1] + 2) * 4;
		} else if (nh == IP6_FRAG) {
			if (len < p + 8 || (get16(f + p + 2) & 0xfff9) != 0)
				return 0; /* a fragment (offset or M set; reserved bits ignored): addresses only */
			nh = f[p];
			p += 8;
		} else {
			break;
		}
	}
	if (has_ports(nh) && len >= p + 4)
		put_ports(k, nh, f + p);
	return 0;
}

uint32_t sbx_flow_hash(const uint8_t *f, uint32_t len, enum sbx_flow_hash_fields fields, uint32_t seed)
{
	struct flow_key k;
	uint32_t off = 12;
	uint16_t et;
	int five = fields != SBX_FLOW_HASH_2TUPLE, i, r = -1;

	if (len < 12)
		return rte_jhash(f, len, seed);
	memset(&k, 0, sizeof(k));
	for (i = 0; i <= MAX_TAGS && len >= off + 2; i++) {
		et = get16(f + off);
		if (et != ET_VLAN && et != ET_QINQ && et != ET_QINQ_OLD) {
			off += 2;
			if (et == ET_MPLS || et == ET_MPLS_MC) {
				int l;

				for (l = 0; l < MAX_LABELS && len >= off + 4; l++) {
					off += 4;
					if (f[off - 2] & 0x01) /* bottom of stack */
						break;
				}
				if (len > off && (f[off] >> 4) == 4)
					r = ipv4_key(&k, f, off, len, five);
				else if (len > off && (f[off] >> 4) == 6)
					r = ipv6_key(&k, f, off, len, five);
			} else if (et == ET_IPV4) {
				r = ipv4_key(&k, f, off, len, five);
			} else if (et == ET_IPV6) {
				r = ipv6_key(&k, f, off, len, five);
			}
			break;
		}
		off += 4;
	}
	if (r != 0) {
		memset(&k, 0, sizeof(k));
		k.kind = KEY_MAC;
		put_pair(&k, f, f + ETH_ALEN_, ETH_ALEN_);
	}
	return rte_jhash(&k, sizeof(k), seed);
}

const char *sbx_flow_hash_fields_name(enum sbx_flow_hash_fields fields)
{
	switch (fields) {
	case SBX_FLOW_HASH_5TUPLE: return "5tuple";
	case SBX_FLOW_HASH_2TUPLE: return "2tuple";
	}
	return NULL;
}

int sbx_flow_hash_fields_parse(const char *name, enum sbx_flow_hash_fields *out)
{
	if (name && strcmp(name, "5tuple") == 0)
		*out = SBX_FLOW_HASH_5TUPLE;
	else if (name && strcmp(name, "2tuple") == 0)
		*out = SBX_FLOW_HASH_2TUPLE;
	else
		return -1;
	return 0;
}
