/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-worker flow table (include/spanbox/flowtable.h is the reference: key, timing rules, records). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "spanbox/flowtable.h"
#include "spanbox/l3_walk.h"

_Static_assert(sizeof(struct sbx_flow_key) == 6 * sizeof(uint64_t), "the key is written as 6 words");

#define TCP_FIN 0x01
#define TCP_RST 0x04
#define NIL UINT32_MAX
#define CHUNK 32 /* frames looked up together */
#define SIG_PAD 8 /* zero signatures past the last slot (probe() reads 8 from a home slot) */

/* One flow: two cache lines, the first with what every frame updates (counters, times, its place
 * on the creation list), the second with the key (read to confirm a signature match, written when
 * the flow starts). Biflows (RFC 5103): the key is canonical (the smaller endpoint first) and
 * `swapped` says whether the first frame went from the key's destination to its source; frames in
 * the first frame's direction count as forward, the others as reverse. */
struct flow_entry {
	uint64_t first_ns;
	uint64_t last_ns;
	uint64_t packets;
	uint64_t bytes;
	uint64_t rev_packets;
	uint64_t rev_bytes;
	uint32_t prev;
	uint32_t next;
	uint8_t tcp_flags;
	uint8_t rev_tcp_flags;
	uint8_t swapped;
	uint8_t fin_dirs;   /* biflow: bit 0 a forward FIN seen, bit 1 a reverse FIN */
	uint32_t spare;
	/* second line */
	struct sbx_flow_key key;
	uint8_t spare2[16];
} __rte_cache_aligned;
_Static_assert(sizeof(struct flow_entry) == 128, "a flow is two cache lines");

/* The table: open addressing with linear probing over `slots` positions (capacity * 3 / 2: load
 * at most 2/3), the home position of a key hash h is (h * slots) >> 32. sig[i] is the CRC32 of the
 * key in slot i (0 mapped to 1), 0 for a free slot: 4 bytes a slot, 16 a cache line, so that a
 * probe reads the signatures of its run in one line (100,000 flows: 600 KB, cache resident) and
 * then the one flow line it needs. Deletion shifts the following run back (no tombstones). */
struct sbx_flowtable {
	uint32_t *sig;
	struct flow_entry *e;
	uint32_t slots;
	uint32_t capacity;
	uint32_t head, tail; /* creation list: head the oldest */
	uint32_t cursor;     /* idle walk */
	uint8_t biflow;
	uint64_t active_ns, idle_ns;
	sbx_flow_emit_fn emit;
	void *emit_arg;
	struct sbx_flowtable_stats s;
};

/* The key's fields while parsing, as scalars: the key is then written in whole 64-bit words, so
 * that the hash's 64-bit loads that follow are forwarded from the stores (narrow stores followed
 * by a wide load of the same bytes stall the load for ~15 cycles on x86). */
struct fields {
	uint64_t s0, s1, d0, d1; /* addresses as loaded (memory order) */
	uint32_t ports;          /* source port | destination port << 16 (host order): one store, so
				    that the key's word is not loaded from two 16-bit stores (a store
				    forwarding stall: 30 % of the parse's samples at 100,000 flows) */
	uint8_t proto, ver;
};

/* Ports and TCP flags of the transport header at @p l4 (when whole enough). */
static inline void l4_fields(const uint8_t *f, uint32_t len, uint32_t l4, struct fields *x, uint8_t *flags)
{
	if (!has_ports(x->proto) || len < l4 + 4)
		return;
	x->ports = (uint32_t)sbx_get16(f + l4) | (uint32_t)sbx_get16(f + l4 + 2) << 16;
	if (x->proto == PROTO_TCP && len >= l4 + 14)
		*flags = f[l4 + 13];
}

static inline int parse_ipv4(const uint8_t *f, uint32_t len, uint32_t off, struct fields *x, uint32_t *bytes,
			     uint8_t *flags)
{
	const uint8_t *ip = f + off;
	uint32_t ihl;

	if (len < off + 20 || (ip[0] >> 4) != 4)
		return -1;
	ihl = (uint32_t)(ip[0] & 0x0f) * 4;
	if (ihl < 20 || len < off + ihl || sbx_get16(ip + 2) < ihl)
		return -1;
	*bytes = sbx_get16(ip + 2);
	x->ver = 4;
	x->proto = ip[9];
	x->s0 = load32(ip + 12);
	x->d0 = load32(ip + 16);
	if ((sbx_get16(ip + 6) & 0x1fff) == 0) /* not a later fragment: the transport header is here */
		l4_fields(f, len, off + ihl, x, flags);
	return 0;
}

static int parse_ipv6(const uint8_t *f, uint32_t len, uint32_t off, struct fields *x, uint32_t *bytes,
		      uint8_t *flags)
{
	const uint8_t *ip = f + off;
	uint32_t p = off + 40;
	uint8_t nh;
	int i;

	if (len < off + 40 || (ip[0] >> 4) != 6)
		return -1;
	*bytes = 40u + sbx_get16(ip + 4);
	if (sbx_get16(ip + 4) == 0) /* jumbogram (RFC 2675) or empty: what the frame holds */
		*bytes = len - off;
	x->ver = 6;
	x->s0 = load64(ip + 8), x->s1 = load64(ip + 16);
	x->d0 = load64(ip + 24), x->d1 = load64(ip + 32);
	nh = ip[6];
	for (i = 0; i < MAX_EXT_HDRS; i++) {
		if (nh == IP6_HOPOPTS || nh == IP6_ROUTING || nh == IP6_DSTOPTS || nh == IP6_AH) {
			uint32_t hlen;

			if (len < p + 2)
				break; /* cut short: the extension header is the protocol, no ports */
			hlen = nh == IP6_AH ? ((uint32_t)f[p + 1] + 2) * 4 : ((uint32_t)f[p + 1] + 1) * 8;
			nh = f[p];
			p += hlen;
		} else if (nh == IP6_FRAG) {
			if (len < p + 8)
				break;
			nh = f[p];
			if ((sbx_get16(f + p + 2) & 0xfff8) != 0) { /* a later fragment: no transport header */
				x->proto = nh;
				return 0;
			}
			p += 8;
		} else {
			break;
		}
	}
	x->proto = nh;
	l4_fields(f, len, p, x, flags);
	return 0;
}

/* Biflow: the key's words turned so that the smaller (address, port) end is the source; 1 when
 * they were. On the words before they are stored: turning the stored key (loading it back whole)
 * stalled on store forwarding, ~50 cycles a frame (bench/flows_micro.sh BIFLOW=1). Branch-free:
 * which end sorts first is a coin toss per flow. Any total order will do: the address words as
 * loaded, then the ports. */
static inline __attribute__((always_inline)) uint8_t canonical(uint64_t w[6])
{
	uint64_t m, x;
	uint32_t sp = (uint32_t)(w[4] & 0xffff), dp = (uint32_t)(w[4] >> 16 & 0xffff), c;

	c = (uint32_t)(w[0] > w[2]) |
	    ((uint32_t)(w[0] == w[2]) & ((uint32_t)(w[1] > w[3]) | ((uint32_t)(w[1] == w[3]) & (uint32_t)(sp > dp))));
	m = -(uint64_t)c;
	x = (w[0] ^ w[2]) & m, w[0] ^= x, w[2] ^= x;
	x = (w[1] ^ w[3]) & m, w[1] ^= x, w[3] ^= x;
	x = ((uint64_t)(sp ^ dp) | (uint64_t)(sp ^ dp) << 16) & m;
	w[4] ^= x;
	return (uint8_t)c;
}

/* sbx_flow_parse, inlined into the burst loop. */
static inline __attribute__((always_inline)) int flow_parse(const uint8_t *f, uint32_t len, uint32_t port,
							    struct sbx_flow_key *k, uint32_t *bytes, uint8_t *flags,
							    int biflow, uint8_t *turned)
{
	struct fields x = {0};
	uint64_t w[6];
	uint32_t off = 12;
	uint16_t et, vlan = 0, inner = 0;
	int tags = 0, l, rc = -1;

	*flags = 0;
	*bytes = 0;
	if (len < 14)
		goto out;
	et = sbx_get16(f + 12);
	if (likely(et == ET_IPV4)) { /* the common frame first: untagged IPv4 */
		rc = parse_ipv4(f, len, 14, &x, bytes, flags);
		goto out;
	}
	while (et == ET_VLAN || et == ET_QINQ || et == ET_QINQ_OLD) {
		if (tags == MAX_TAGS || len < off + 6)
			goto out;
		if (tags == 0)
			vlan = sbx_get16(f + off + 2) & 0x0fff;
		else if (tags == 1)
			inner = sbx_get16(f + off + 2) & 0x0fff;
		tags++;
		off += 4;
		et = sbx_get16(f + off);
	}
	off += 2;
	if (et == ET_MPLS || et == ET_MPLS_MC) {
		for (l = 0; l < MAX_LABELS && len >= off + 4; l++) {
			off += 4;
			if (f[off - 2] & 0x01) /* bottom of stack */
				break;
		}
		if (len <= off)
			goto out;
		et = (f[off] >> 4) == 4 ? ET_IPV4 : (f[off] >> 4) == 6 ? ET_IPV6 : 0;
	}
	if (et == ET_IPV4)
		rc = parse_ipv4(f, len, off, &x, bytes, flags);
	else if (et == ET_IPV6)
		rc = parse_ipv6(f, len, off, &x, bytes, flags);
out:
	if (rc != 0)
		x = (struct fields){0}, vlan = inner = 0;
	/* struct sbx_flow_key in 64-bit words (little-endian: the first field in the low bytes) */
	w[0] = x.s0, w[1] = x.s1, w[2] = x.d0, w[3] = x.d1;
	w[4] = (uint64_t)x.ports | (uint64_t)vlan << 32 | (uint64_t)inner << 48;
	/* port: the index in its low 16 bits, the direction (key.dir) above */
	w[5] = (uint64_t)(port & 0xffff) | (uint64_t)x.proto << 16 | (uint64_t)x.ver << 24 | (uint64_t)(port >> 16) << 32;
	*turned = biflow ? canonical(w) : 0;
	memcpy(k, w, sizeof(w));
	return rc;
}

int sbx_flow_parse(const uint8_t *f, uint32_t len, uint16_t port, struct sbx_flow_key *k, uint32_t *bytes,
		   uint8_t *flags)
{
	uint8_t turned;

	return flow_parse(f, len, port, k, bytes, flags, 0, &turned);
}

const char *sbx_flow_end_reason_name(unsigned int reason)
{
	switch (reason) {
	case SBX_FLOW_END_IDLE: return "idle";
	case SBX_FLOW_END_ACTIVE: return "active";
	case SBX_FLOW_END_OF_FLOW: return "end";
	case SBX_FLOW_END_FORCED: return "forced";
	case SBX_FLOW_END_RESOURCES: return "resources";
	}
	return NULL;
}

/* Slots of a table of @p capacity flows (load at most 2/3). */
static uint64_t table_slots(uint32_t capacity)
{
	return (uint64_t)capacity + capacity / 2 + 1;
}

struct sbx_flowtable *sbx_flowtable_create(const struct sbx_flowtable_params *p)
{
	struct sbx_flowtable *ft;
	uint64_t slots;

	if (!p || !p->name || !p->emit || p->capacity < 8 || p->active_ns == 0 || p->idle_ns == 0 ||
	    p->capacity > SBX_FLOWTABLE_CAPACITY_MAX) {
		rte_errno = EINVAL;
		return NULL;
	}
	slots = table_slots(p->capacity);
	ft = rte_zmalloc_socket("sbx_flowtable", sizeof(*ft), RTE_CACHE_LINE_SIZE, p->socket_id);
	if (!ft) {
		rte_errno = ENOMEM;
		return NULL;
	}
	ft->sig = rte_zmalloc_socket("sbx_flowsig", (slots + SIG_PAD) * sizeof(uint32_t), RTE_CACHE_LINE_SIZE, p->socket_id);
	ft->e = ft->sig ? rte_zmalloc_socket("sbx_flows", slots * sizeof(struct flow_entry), RTE_CACHE_LINE_SIZE,
					     p->socket_id) : NULL;
	if (!ft->e) {
		rte_free(ft->sig);
		rte_free(ft);
		rte_errno = ENOMEM;
		return NULL;
	}
	ft->slots = (uint32_t)slots;
	ft->capacity = p->capacity;
	ft->head = ft->tail = NIL;
	ft->biflow = p->biflow ? 1 : 0;
	ft->active_ns = p->active_ns;
	ft->idle_ns = p->idle_ns;
	ft->emit = p->emit;
	ft->emit_arg = p->emit_arg;
	return ft;
}

uint64_t sbx_flowtable_mem(uint32_t capacity, struct sbx_flowtable_mem *out)
{
	const uint64_t slots = table_slots(capacity);
	struct sbx_flowtable_mem m;

	/* three rte_zmalloc_socket allocations, each rounded to cache lines */
	m.keys = slots * 64;           /* each flow's second line: the key */
	m.signatures = RTE_ALIGN_CEIL((slots + SIG_PAD) * sizeof(uint32_t), RTE_CACHE_LINE_SIZE);
	m.states = slots * 64;         /* each flow's first line: counters, times, creation list */
	/* struct sbx_flowtable and rte_malloc's element headers and alignment: 3 allocations */
	m.other = 1024;
	m.total = m.keys + m.signatures + m.states + m.other;
	if (out)
		*out = m;
	return m.total;
}

void sbx_flowtable_free(struct sbx_flowtable *ft)
{
	if (!ft)
		return;
	rte_free(ft->e);
	rte_free(ft->sig);
	rte_free(ft);
}

static inline uint32_t home_of(const struct sbx_flowtable *ft, uint32_t sig)
{
	return (uint32_t)(((uint64_t)sig * ft->slots) >> 32);
}

static inline uint32_t next_slot(const struct sbx_flowtable *ft, uint32_t i)
{
	return i + 1 == ft->slots ? 0 : i + 1;
}

static inline int key_eq(const struct sbx_flow_key *a, const struct sbx_flow_key *b)
{
	const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;

	return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3]) | (x[4] ^ y[4]) | (x[5] ^ y[5])) == 0;
}

/* The slot of @p key (signature @p sig) from slot @p i on (its home or a later slot of its run),
 * or -1 (*free_slot: the free slot that ends the run). */
static inline int32_t find_from(const struct sbx_flowtable *ft, const struct sbx_flow_key *key, uint32_t sig,
				uint32_t i, uint32_t *free_slot)
{
	for (;;) {
		uint32_t s = ft->sig[i];

		if (s == 0) {
			*free_slot = i;
			return -1;
		}
		if (s == sig && key_eq(&ft->e[i].key, key))
			return (int32_t)i;
		i = next_slot(ft, i);
	}
}

/* The first slot of the run from @p sig's home slot whose signature is @p sig, -1 when a free slot
 * comes first. The 8 signatures from the home slot are compared at once (SSE2): a run's length
 * varies from key to key, and a loop over it mispredicted its exit once per frame (a third of the
 * meter's samples at 1,000 flows); the array has 8 zero signatures past its last slot, so the
 * load never leaves it (a run that wraps to slot 0 takes the loop). */
static inline int32_t probe(const struct sbx_flowtable *ft, uint32_t sig)
{
	uint32_t h = home_of(ft, sig), k, s;
#ifdef __SSE2__
	const __m128i *p = (const __m128i *)&ft->sig[h];
	const __m128i a = _mm_loadu_si128(p), b = _mm_loadu_si128(p + 1), want = _mm_set1_epi32((int)sig);
	const __m128i zero = _mm_setzero_si128();
	uint32_t eq = (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(a, want))) |
		      (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(b, want))) << 4;
	uint32_t z = (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(a, zero))) |
		     (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(b, zero))) << 4;
	uint32_t before = (z & -z) - 1; /* the lanes before the first free one (all when none) */

	if (likely(eq & before))
		return (int32_t)(h + (uint32_t)__builtin_ctz(eq & before));
	if (likely(z != 0) && h + (uint32_t)__builtin_ctz(z) < ft->slots)
		return -1;
#endif
	for (k = h; (s = ft->sig[k]) != 0; k = next_slot(ft, k))
		if (s == sig)
			return (int32_t)k;
	return -1;
}

static inline void list_unlink(struct sbx_flowtable *ft, uint32_t pos)
{
	struct flow_entry *s = &ft->e[pos];

	if (s->prev != NIL)
		ft->e[s->prev].next = s->next;
	else
		ft->head = s->next;
	if (s->next != NIL)
		ft->e[s->next].prev = s->prev;
	else
		ft->tail = s->prev;
}

static inline void list_append(struct sbx_flowtable *ft, uint32_t pos)
{
	struct flow_entry *s = &ft->e[pos];

	s->prev = ft->tail;
	s->next = NIL;
	if (ft->tail != NIL)
		ft->e[ft->tail].next = pos;
	else
		ft->head = pos;
	ft->tail = pos;
}

/* Take slot @p i out of the table, shifting the rest of its run back (linear probing without
 * tombstones: every key stays reachable from its home slot). Moved flows keep their place on the
 * creation list. */
static void slot_remove(struct sbx_flowtable *ft, uint32_t i)
{
	uint32_t j = i;

	for (;;) {
		uint32_t h;

		j = next_slot(ft, j);
		if (ft->sig[j] == 0)
			break;
		h = home_of(ft, ft->sig[j]);
		/* the flow at j may move to i when i is in its probe path [h, j) */
		if (((j - h + ft->slots) % ft->slots) >= ((j - i + ft->slots) % ft->slots)) {
			struct flow_entry *d = &ft->e[i];

			*d = ft->e[j];
			ft->sig[i] = ft->sig[j];
			if (d->prev != NIL)
				ft->e[d->prev].next = i;
			else
				ft->head = i;
			if (d->next != NIL)
				ft->e[d->next].prev = i;
			else
				ft->tail = i;
			i = j;
		}
	}
	ft->sig[i] = 0;
}

/* The flow's key as its first frame had it (biflow: the canonical key turned back). */
static inline void forward_key(const struct flow_entry *s, struct sbx_flow_key *k)
{
	*k = s->key;
	if (s->swapped) {
		memcpy(k->src, s->key.dst, 16);
		memcpy(k->dst, s->key.src, 16);
		k->sport = s->key.dport;
		k->dport = s->key.sport;
	}
}

/* Hand the flow at @p pos out as a record (reason @p why) and count it. */
static void emit_record(struct sbx_flowtable *ft, uint32_t pos, uint8_t why)
{
	const struct flow_entry *s = &ft->e[pos];
	struct sbx_flow_record r;

	memset(&r, 0, sizeof(r));
	forward_key(s, &r.key);
	r.first_ns = s->first_ns;
	r.last_ns = s->last_ns;
	r.packets = s->packets;
	r.bytes = s->bytes;
	r.tcp_flags = s->tcp_flags;
	r.end_reason = why;
	r.biflow = ft->biflow;
	r.rev_packets = s->rev_packets;
	r.rev_bytes = s->rev_bytes;
	r.rev_tcp_flags = s->rev_tcp_flags;
	switch (why) {
	case SBX_FLOW_END_IDLE: ft->s.expired_idle++; break;
	case SBX_FLOW_END_ACTIVE: ft->s.expired_active++; break;
	case SBX_FLOW_END_OF_FLOW: ft->s.expired_end++; break;
	case SBX_FLOW_END_RESOURCES: ft->s.evicted_full++; break;
	default: ft->s.expired_forced++; break;
	}
	ft->emit(ft->emit_arg, &r);
}

/* Close the flow at @p pos: record out, off the list, out of the table. */
static void close_flow(struct sbx_flowtable *ft, uint32_t pos, uint8_t why)
{
	emit_record(ft, pos, why);
	list_unlink(ft, pos);
	ft->s.active--;
	slot_remove(ft, pos);
}

static inline void start_flow(struct sbx_flowtable *ft, uint32_t pos, uint64_t now)
{
	struct flow_entry *s = &ft->e[pos];

	s->first_ns = s->last_ns = now;
	s->packets = s->bytes = 0;
	s->rev_packets = s->rev_bytes = 0;
	s->tcp_flags = s->rev_tcp_flags = 0;
	s->fin_dirs = 0;
	list_append(ft, pos);
	ft->s.flows++;
}

/* The slot of @p key, added if new (a full table pushes out its oldest flow first); *deleted set
 * when flows left the table (slots looked up before are stale). */
static int32_t add_flow(struct sbx_flowtable *ft, const struct sbx_flow_key *key, uint32_t sig, uint8_t swapped,
			uint64_t now, int *deleted)
{
	uint32_t fs = 0;
	int32_t pos = find_from(ft, key, sig, home_of(ft, sig), &fs);

	if (pos >= 0)
		return pos;
	if (ft->s.active >= ft->capacity && ft->head != NIL) {
		close_flow(ft, ft->head, SBX_FLOW_END_RESOURCES);
		*deleted = 1;
		(void)find_from(ft, key, sig, home_of(ft, sig), &fs); /* the run may have shifted */
	}
	ft->sig[fs] = sig;
	ft->e[fs].key = *key;
	ft->e[fs].swapped = swapped;
	ft->s.active++;
	start_flow(ft, fs, now);
	return (int32_t)fs;
}

/* Count one frame on the flow at @p pos (timeouts seen on arrival close it first). @p swapped:
 * the frame's direction relative to the canonical key (biflow; always 0 otherwise). */
static inline void count(struct sbx_flowtable *ft, uint32_t pos, uint8_t swapped, uint8_t proto, uint32_t bytes,
			 uint8_t flags, uint64_t now, int *deleted)
{
	struct flow_entry *s = &ft->e[pos];

	if (unlikely(now - s->last_ns >= ft->idle_ns && now > s->last_ns) ||
	    unlikely(now - s->first_ns >= ft->active_ns && now > s->first_ns)) {
		emit_record(ft, pos, now - s->last_ns >= ft->idle_ns ? SBX_FLOW_END_IDLE : SBX_FLOW_END_ACTIVE);
		list_unlink(ft, pos);
		s->swapped = swapped; /* the new flow's forward direction: this frame's */
		start_flow(ft, pos, now);
	}
	if (likely(swapped == s->swapped)) {
		s->packets++;
		s->bytes += bytes;
		s->tcp_flags |= flags;
	} else {
		s->rev_packets++;
		s->rev_bytes += bytes;
		s->rev_tcp_flags |= flags;
	}
	if (now > s->last_ns)
		s->last_ns = now;
	if (unlikely(flags & (TCP_FIN | TCP_RST)) && proto == PROTO_TCP) {
		/* unidirectional: a FIN or RST ends the flow; biflow: a RST, or FINs both ways */
		if (ft->biflow && !(flags & TCP_RST)) {
			s->fin_dirs |= swapped == s->swapped ? 1 : 2;
			if (s->fin_dirs != 3)
				return;
		}
		close_flow(ft, pos, SBX_FLOW_END_OF_FLOW);
		*deleted = 1;
	}
}

void sbx_flowtable_meter(struct sbx_flowtable *ft, const uint8_t *const frames[], const uint32_t lens[],
			 unsigned int n, uint16_t port, uint64_t now)
{
	sbx_flowtable_meter_dir(ft, frames, lens, n, port, SBX_FLOW_DIR_RX, now);
}

void sbx_flowtable_meter_dir(struct sbx_flowtable *ft, const uint8_t *const frames[], const uint32_t lens[],
			     unsigned int n, uint16_t port16, uint8_t dir, uint64_t now)
{
	const uint32_t port = (uint32_t)port16 | (uint32_t)(dir & 1) << 16;
	struct sbx_flow_key keys[CHUNK];
	uint32_t sig[CHUNK], bytes[CHUNK];
	int32_t pos[CHUNK];
	uint8_t flags[CHUNK], sw[CHUNK];
	unsigned int done, i, m;

	for (done = 0; done < n; done += i) {
		int deleted = 0;
		unsigned int j;

		/* the frames' headers, all at once: in a worker they are cold (written by a NIC or by
		 * the primary's pcap read on another core), and the parse loop would take their misses
		 * one after the other */
		for (i = 0; i < CHUNK && done + i < n; i++)
			rte_prefetch0(frames[done + i]);
		/* 1. parse, hash, prefetch the signature line of the key's home slot */
		for (i = 0, m = 0; i < CHUNK && done + i < n; i++) {
			uint32_t h;

			if (flow_parse(frames[done + i], lens[done + i], port, &keys[m], &bytes[m], &flags[m], ft->biflow,
				       &sw[m]) != 0) {
				ft->s.non_ip++;
				continue;
			}
			/* CRC32 is linear over GF(2): keys that differ in a few bits (one counter in an
			 * address) get hashes in a small subspace whose top bits, the home slot, cluster;
			 * a multiply by an odd constant (Knuth's 2^32 / golden ratio) spreads them */
			h = rte_hash_crc(&keys[m], sizeof(keys[m]), 0) * 0x9e3779b1u;
			sig[m] = h ? h : 1;
			rte_prefetch0(&ft->sig[home_of(ft, sig[m])]);
			m++;
		}
		/* 2. the first slot of each key's run with its signature (or -1: none before a free
		 * slot): its flow's two lines prefetched */
		for (j = 0; j < m; j++) {
			pos[j] = probe(ft, sig[j]);
			if (pos[j] >= 0) {
				rte_prefetch0(&ft->e[pos[j]]);
				rte_prefetch0(&ft->e[pos[j]].key);
			}
		}
		/* 3. confirm the key, count */
		for (j = 0; j < m; j++) {
			int32_t p = pos[j];
			uint32_t fs;

			if (p >= 0 && !deleted && unlikely(!key_eq(&ft->e[p].key, &keys[j])))
				p = find_from(ft, &keys[j], sig[j], next_slot(ft, (uint32_t)p), &fs);
			else if (deleted) /* flows left during this chunk: slots looked up are stale */
				p = find_from(ft, &keys[j], sig[j], home_of(ft, sig[j]), &fs);
			if (p < 0)
				p = add_flow(ft, &keys[j], sig[j], sw[j], now, &deleted);
			ft->s.frames++;
			count(ft, (uint32_t)p, sw[j], keys[j].proto, bytes[j], flags[j], now, &deleted);
		}
	}
}

unsigned int sbx_flowtable_expire(struct sbx_flowtable *ft, uint64_t now, unsigned int budget)
{
	unsigned int n = 0, k;

	while (n < budget && ft->head != NIL && now > ft->e[ft->head].first_ns &&
	       now - ft->e[ft->head].first_ns >= ft->active_ns) {
		uint32_t h = ft->head;

		close_flow(ft, h, now - ft->e[h].last_ns >= ft->idle_ns ? SBX_FLOW_END_IDLE : SBX_FLOW_END_ACTIVE);
		n++;
	}
	for (k = 0; k < budget && n < budget && ft->s.active > 0; k++) {
		uint32_t c = ft->cursor;
		const struct flow_entry *s = &ft->e[c];

		ft->cursor = next_slot(ft, c);
		if (ft->sig[c] != 0 && now > s->last_ns && now - s->last_ns >= ft->idle_ns) {
			close_flow(ft, c, SBX_FLOW_END_IDLE);
			n++;
			/* the run shifted back: a flow may now be in slot c, look at it again */
			ft->cursor = c;
		}
	}
	/* the flows of the next call: their misses overlap the next burst instead of stalling it */
	for (k = 0; k < budget; k++) {
		uint32_t c = ft->cursor + k < ft->slots ? ft->cursor + k : ft->cursor + k - ft->slots;

		rte_prefetch0(&ft->e[c]);
	}
	return n;
}

unsigned int sbx_flowtable_flush(struct sbx_flowtable *ft, uint64_t now, enum sbx_flow_end_reason reason)
{
	unsigned int n = 0;

	while (ft->head != NIL) {
		uint32_t h = ft->head;
		const struct flow_entry *s = &ft->e[h];
		uint8_t why = reason;

		if (now > s->last_ns && now - s->last_ns >= ft->idle_ns)
			why = SBX_FLOW_END_IDLE;
		else if (now > s->first_ns && now - s->first_ns >= ft->active_ns)
			why = SBX_FLOW_END_ACTIVE;
		close_flow(ft, h, why);
		n++;
	}
	return n;
}

void sbx_flowtable_stats(const struct sbx_flowtable *ft, struct sbx_flowtable_stats *out)
{
	*out = ft->s;
}

/* ---- live timeouts (flows is live: docs/RUNTIME_TABLES.md "Flows") ---- */

void sbx_flowtable_set_timeouts(struct sbx_flowtable *ft, uint64_t active_ns, uint64_t idle_ns)
{
	if (active_ns != 0)
		ft->active_ns = active_ns;
	if (idle_ns != 0)
		ft->idle_ns = idle_ns;
}

unsigned int sbx_flowtable_set_biflow(struct sbx_flowtable *ft, uint64_t now, int biflow)
{
	unsigned int n = 0;

	if (ft->biflow == (biflow ? 1 : 0))
		return 0;
	n = sbx_flowtable_flush(ft, now, SBX_FLOW_END_FORCED);
	ft->biflow = biflow ? 1 : 0;
	return n;
}

int sbx_flowtable_biflow(const struct sbx_flowtable *ft)
{
	return ft->biflow;
}
