/* SPDX-License-Identifier: BSD-3-Clause */
/* Symmetric flow hash (what is hashed and the sources of the formats: include/spanbox/flowhash.h).
 * Every read is preceded by a bound check against len. */
#include <string.h>

#ifdef __SSE4_2__
#include <nmmintrin.h>
#else
#include <rte_crc_sw.h>
#endif

#include "spanbox/flowhash.h"
#include "spanbox/ip6walk.h"
#include "spanbox/l3_walk.h"

/*
 * The key, hashed as it is found: kind (mac / ipv4 / ipv6) and protocol in one word with the
 * sorted port pair, the sorted address pair in 64-bit words, all into CRC32-C (the SSE4.2 crc32
 * instruction; DPDK's table-driven rte_crc_sw.h where the compiler targets a CPU without it), then
 * murmur3's fmix32 finalizer so that every output bit depends on every key bit (bucket = the low
 * bits). No key buffer is built: the words go straight from the frame into the CRC.
 */
enum key_kind { KEY_MAC = 1, KEY_IPV4 = 4, KEY_IPV6 = 6 };

static inline uint32_t crc64(uint32_t h, uint64_t w)
{
#ifdef __SSE4_2__
	return (uint32_t)_mm_crc32_u64(h, w);
#else
	return crc32c_2words(w, h);
#endif
}

static inline uint32_t fmix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* The last key word: kind, protocol and the sorted port pair of a TCP, UDP or SCTP header at
 * @p l4 (NULL: no ports, protocol 0). */
static inline uint64_t tail_word(enum key_kind kind, uint8_t proto, const uint8_t *l4)
{
	uint16_t s, d;

	if (l4 == NULL)
		return kind;
	s = sbx_get16(l4);
	d = sbx_get16(l4 + 2);
	return (uint64_t)(s < d ? s : d) << 48 | (uint64_t)(s < d ? d : s) << 32 | (uint32_t)proto << 8 | kind;
}

/* Are the ports of @p proto part of a 5-tuple key? TCP and SCTP; not UDP, whose datagrams are
 * fragmented often enough (DNS, NFS, tunnels) that a key with ports sent one flow's fragmented and
 * unfragmented datagrams to two members (issue #24 item 6; docs/CONFIG.md "tool_groups"). */
static inline int hash_ports(uint8_t proto)
{
	return proto == PROTO_TCP || proto == PROTO_SCTP;
}

/* The IPv4 key words of the whole header at @p ip (@p ihl bytes) into the CRC from @p h: the sorted
 * address pair, then protocol and ports (when @p five, not a fragment, and @p l4_whole: the 4 port
 * bytes are in the segment). */
static inline __attribute__((always_inline)) uint32_t ipv4_key(uint32_t h, const uint8_t *ip, uint32_t ihl, int five, int l4_whole)
{
	uint32_t a = load32(ip + 12), b = load32(ip + 16);
	const uint8_t *l4 = five && (sbx_get16(ip + 6) & 0x3fff) == 0 && hash_ports(ip[9]) && l4_whole ? ip + ihl : NULL;

	return crc64(crc64(h, a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a), tail_word(KEY_IPV4, ip[9], l4));
}

/* IPv4 at @p off: 0 and *h the hash, -1 when the header is not whole (the caller falls back). */
static int ipv4_hash(uint32_t *h, const uint8_t *f, uint32_t off, uint32_t len, int five)
{
	const uint8_t *ip = f + off;
	uint32_t ihl;

	if (len < off + 20 || (ip[0] >> 4) != 4)
		return -1;
	ihl = (uint32_t)(ip[0] & 0x0f) * 4;
	if (ihl < 20 || len < off + ihl)
		return -1;
	*h = ipv4_key(*h, ip, ihl, five, len >= off + ihl + 4);
	return 0;
}

/* IPv6 at @p off (extension headers walked): as ipv4_hash. */
static int ipv6_hash(uint32_t *h, const uint8_t *f, uint32_t off, uint32_t len, int five)
{
	const uint8_t *ip = f + off, *lo, *hi, *l4 = NULL;
	uint8_t nh;
	uint32_t p;
	int i;

	if (len < off + 40 || (ip[0] >> 4) != 6)
		return -1;
	lo = memcmp(ip + 8, ip + 24, 16) <= 0 ? ip + 8 : ip + 24;
	hi = lo == ip + 8 ? ip + 24 : ip + 8;
	nh = ip[6];
	p = off + 40;
	for (i = 0; five && i < MAX_EXT_HDRS; i++) {
		int r = sbx_ip6_ext_skip(f, len, &nh, &p); /* hop-by-hop, routing, destination options, AH */

		if (r < 0)
			goto addresses;
		if (r > 0)
			continue;
		if (nh == IP6_FRAG) {
			if (len < p + 8 || (sbx_get16(f + p + 2) & 0xfff9) != 0)
				goto addresses; /* a fragment (offset or M set; reserved bits ignored) */
			nh = f[p];
			p += 8;
		} else {
			break;
		}
	}
	if (five && hash_ports(nh) && len >= p + 4)
		l4 = f + p;
addresses:
	*h = crc64(crc64(crc64(crc64(*h, load64(lo)), load64(lo + 8)), load64(hi)), load64(hi + 8));
	*h = crc64(*h, tail_word(KEY_IPV6, nh, l4));
	return 0;
}

/* The sorted MAC pair of the frame at @p f (at least 12 bytes), into the CRC from @p seed. */
static inline uint32_t mac_hash(const uint8_t *f, uint32_t seed)
{
	uint64_t a = load64(f) & 0xffffffffffffull, b;

	memcpy(&b, f + 4, 8);
	b >>= 16;
	return crc64(crc64(seed, a < b ? a : b), (a < b ? b : a) << 8 | KEY_MAC);
}

uint32_t sbx_flow_hash(const uint8_t *f, uint32_t len, enum sbx_flow_hash_fields fields, uint32_t seed)
{
	uint32_t off = 12, h = seed;
	uint16_t et;
	int five = fields != SBX_FLOW_HASH_2TUPLE, i, r = -1;

	/* the common frames first, with the values the general walk below gives them: untagged
	 * IPv4 without options (TCP/SCTP ports unless a fragment or 2tuple), and an untagged
	 * frame of an EtherType that is neither IP, a tag nor MPLS (the MAC pair) */
	if (__builtin_expect(len >= 34, 1)) {
		et = sbx_get16(f + 12);
		if (__builtin_expect(et == ET_IPV4 && f[14] == 0x45, 1)) /* a 20 B header: 14 + 20 <= len */
			return fmix32(ipv4_key(seed, f + 14, 20, five, len >= 38));
		if (et != ET_IPV4 && et != ET_IPV6 && et != ET_VLAN && et != ET_QINQ && et != ET_QINQ_OLD &&
		    et != ET_MPLS && et != ET_MPLS_MC)
			return fmix32(mac_hash(f, seed));
	}
	if (len < 12) {
		uint8_t tail[16] = {0}; /* never a read past the frame */

		memcpy(tail, f, len);
		return fmix32(crc64(crc64(seed ^ len, load64(tail)), load64(tail + 8)));
	}
	for (i = 0; i <= MAX_TAGS && len >= off + 2; i++) {
		et = sbx_get16(f + off);
		if (et != ET_VLAN && et != ET_QINQ && et != ET_QINQ_OLD) {
			off += 2;
			if (et == ET_IPV4) {
				r = ipv4_hash(&h, f, off, len, five);
			} else if (et == ET_IPV6) {
				r = ipv6_hash(&h, f, off, len, five);
			} else if (et == ET_MPLS || et == ET_MPLS_MC) {
				int l;

				for (l = 0; l < MAX_LABELS && len >= off + 4; l++) {
					off += 4;
					if (f[off - 2] & 0x01) /* bottom of stack */
						break;
				}
				if (len > off && (f[off] >> 4) == 4)
					r = ipv4_hash(&h, f, off, len, five);
				else if (len > off && (f[off] >> 4) == 6)
					r = ipv6_hash(&h, f, off, len, five);
			}
			break;
		}
		off += 4;
	}
	if (r != 0) /* non-IP: the sorted MAC pair */
		h = mac_hash(f, seed);
	return fmix32(h);
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
