/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-worker flow table (include/spanbox/flowtable.h is the reference: key, timing rules, records). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include "spanbox/flowtable.h"
#include "spanbox/l3_walk.h"

_Static_assert(sizeof(struct sbx_flow_key) == 6 * sizeof(uint64_t), "the key is written as 6 words");

#define TCP_FIN 0x01
#define TCP_RST 0x04
#define NIL UINT32_MAX
#define CHUNK 32 /* frames per rte_hash_lookup_bulk */

/* One flow's counters, indexed by its rte_hash key position; on the creation list (prev/next). */
struct flow_state {
	uint64_t first_ns;
	uint64_t last_ns;
	uint64_t packets;
	uint64_t bytes;
	uint32_t prev;
	uint32_t next;
	uint8_t tcp_flags;
	uint8_t used;
} __rte_cache_aligned;

struct sbx_flowtable {
	struct rte_hash *h;
	struct flow_state *st;
	uint32_t capacity;
	uint32_t head, tail; /* creation list: head the oldest */
	uint32_t cursor;     /* idle walk */
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

/* sbx_flow_parse, inlined into the burst loop. */
static inline __attribute__((always_inline)) int flow_parse(const uint8_t *f, uint32_t len, uint32_t port,
							    struct sbx_flow_key *k, uint32_t *bytes, uint8_t *flags)
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
	memcpy(k, w, sizeof(w));
	return rc;
}

int sbx_flow_parse(const uint8_t *f, uint32_t len, uint16_t port, struct sbx_flow_key *k, uint32_t *bytes,
		   uint8_t *flags)
{
	return flow_parse(f, len, port, k, bytes, flags);
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

struct sbx_flowtable *sbx_flowtable_create(const struct sbx_flowtable_params *p)
{
	struct rte_hash_parameters hp = {0};
	struct sbx_flowtable *ft;
	char name[RTE_HASH_NAMESIZE];

	if (!p || !p->name || !p->emit || p->capacity < 8 || p->active_ns == 0 || p->idle_ns == 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	ft = rte_zmalloc_socket("sbx_flowtable", sizeof(*ft), RTE_CACHE_LINE_SIZE, p->socket_id);
	if (!ft) {
		rte_errno = ENOMEM;
		return NULL;
	}
	snprintf(name, sizeof(name), "%s", p->name);
	hp.name = name;
	hp.entries = p->capacity;
	hp.key_len = sizeof(struct sbx_flow_key);
	hp.hash_func = rte_hash_crc;
	hp.socket_id = p->socket_id;
	/* the extendable bucket table: every key slot usable whatever the cuckoo buckets hold, so a
	 * full table is exactly capacity flows */
	hp.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
	ft->h = rte_hash_create(&hp);
	ft->st = ft->h ? rte_zmalloc_socket("sbx_flowstate", sizeof(*ft->st) * p->capacity, RTE_CACHE_LINE_SIZE,
					    p->socket_id) : NULL;
	if (!ft->st) {
		int e = rte_errno ? rte_errno : ENOMEM;

		rte_hash_free(ft->h);
		rte_free(ft);
		rte_errno = e;
		return NULL;
	}
	ft->capacity = p->capacity;
	ft->head = ft->tail = NIL;
	ft->active_ns = p->active_ns;
	ft->idle_ns = p->idle_ns;
	ft->emit = p->emit;
	ft->emit_arg = p->emit_arg;
	return ft;
}

/* Smallest power of two >= v (rte_align32pow2, here without EAL). */
static uint64_t pow2_ge(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* Bytes of an rte_ring of @p count 4-byte elements in its memzone (rte_ring_get_memsize_elem). */
static uint64_t ring_bytes(uint64_t count)
{
	return RTE_ALIGN_CEIL(sizeof(struct rte_ring) + count * 4, RTE_CACHE_LINE_SIZE);
}

uint64_t sbx_flowtable_mem(uint32_t capacity, struct sbx_flowtable_mem *out)
{
	/* rte_cuckoo_hash.c (22.11): num_key_slots = entries + 1 (slot 0 is the lookups' dummy),
	 * num_buckets = align32pow2(entries) / RTE_HASH_BUCKET_ENTRIES (8), as many extendable
	 * buckets; a bucket is 64 B (8 signatures, 8 key indexes, 8 flags, a next pointer) */
	const uint64_t slots = (uint64_t)capacity + 1, buckets = pow2_ge(capacity) / 8;
	struct sbx_flowtable_mem m;

	m.hash_keys = slots * RTE_ALIGN_CEIL(sizeof(void *) + sizeof(struct sbx_flow_key), 16);
	m.hash_buckets = 2 * buckets * 64;
	m.hash_rings = ring_bytes(pow2_ge(slots)) + ring_bytes(pow2_ge(buckets + 1));
	m.states = (uint64_t)capacity * sizeof(struct flow_state);
	/* struct rte_hash, its tailq entry and change counter, the memzones' and rte_malloc's headers
	 * and alignment, struct sbx_flowtable: 8 allocations (measured: 2240 B) */
	m.other = 4096;
	m.total = m.hash_keys + m.hash_buckets + m.hash_rings + m.states + m.other;
	if (out)
		*out = m;
	return m.total;
}

void sbx_flowtable_free(struct sbx_flowtable *ft)
{
	if (!ft)
		return;
	rte_hash_free(ft->h);
	rte_free(ft->st);
	rte_free(ft);
}

static inline void list_unlink(struct sbx_flowtable *ft, uint32_t pos)
{
	struct flow_state *s = &ft->st[pos];

	if (s->prev != NIL)
		ft->st[s->prev].next = s->next;
	else
		ft->head = s->next;
	if (s->next != NIL)
		ft->st[s->next].prev = s->prev;
	else
		ft->tail = s->prev;
}

static inline void list_append(struct sbx_flowtable *ft, uint32_t pos)
{
	struct flow_state *s = &ft->st[pos];

	s->prev = ft->tail;
	s->next = NIL;
	if (ft->tail != NIL)
		ft->st[ft->tail].next = pos;
	else
		ft->head = pos;
	ft->tail = pos;
}

/* Hand the flow at @p pos out as a record (reason @p why) and count it. */
static void emit_record(struct sbx_flowtable *ft, uint32_t pos, const struct sbx_flow_key *key, uint8_t why)
{
	const struct flow_state *s = &ft->st[pos];
	struct sbx_flow_record r;

	memset(&r, 0, sizeof(r));
	r.key = *key;
	r.first_ns = s->first_ns;
	r.last_ns = s->last_ns;
	r.packets = s->packets;
	r.bytes = s->bytes;
	r.tcp_flags = s->tcp_flags;
	r.end_reason = why;
	switch (why) {
	case SBX_FLOW_END_IDLE: ft->s.expired_idle++; break;
	case SBX_FLOW_END_ACTIVE: ft->s.expired_active++; break;
	case SBX_FLOW_END_OF_FLOW: ft->s.expired_end++; break;
	case SBX_FLOW_END_RESOURCES: ft->s.evicted_full++; break;
	default: ft->s.expired_forced++; break;
	}
	ft->emit(ft->emit_arg, &r);
}

/* Close the flow at @p pos: record out, off the list, key out of the hash. */
static void close_flow(struct sbx_flowtable *ft, uint32_t pos, uint8_t why)
{
	struct sbx_flow_key key;
	void *kp;

	if (rte_hash_get_key_with_position(ft->h, (int32_t)pos, &kp) != 0)
		return;
	key = *(const struct sbx_flow_key *)kp;
	emit_record(ft, pos, &key, why);
	list_unlink(ft, pos);
	ft->st[pos].used = 0;
	ft->s.active--;
	rte_hash_del_key(ft->h, &key);
}

static inline void start_flow(struct sbx_flowtable *ft, uint32_t pos, uint64_t now)
{
	struct flow_state *s = &ft->st[pos];

	s->first_ns = s->last_ns = now;
	s->packets = s->bytes = 0;
	s->tcp_flags = 0;
	s->used = 1;
	list_append(ft, pos);
	ft->s.flows++;
}

/* The position of @p key, added if new (a full table pushes out its oldest flows first); *deleted
 * set when keys left the hash (positions looked up before are stale). -1 if it cannot be added. */
static int32_t add_flow(struct sbx_flowtable *ft, const struct sbx_flow_key *key, hash_sig_t sig, uint64_t now,
			int *deleted)
{
	int32_t pos;
	int tries;

	for (tries = 0; tries < 8; tries++) {
		if (ft->s.active >= ft->capacity && ft->head != NIL) {
			pos = rte_hash_lookup_with_hash(ft->h, key, sig);
			if (pos >= 0)
				return pos;
			close_flow(ft, ft->head, SBX_FLOW_END_RESOURCES);
			*deleted = 1;
		}
		pos = rte_hash_add_key_with_hash(ft->h, key, sig);
		if (pos >= 0) {
			if (!ft->st[pos].used) {
				ft->s.active++;
				start_flow(ft, (uint32_t)pos, now);
			}
			return pos;
		}
		if (pos != -ENOSPC || ft->head == NIL)
			return -1;
		close_flow(ft, ft->head, SBX_FLOW_END_RESOURCES);
		*deleted = 1;
	}
	return -1;
}

/* Count one frame on the flow at @p pos (timeouts seen on arrival close it first). */
static inline void count(struct sbx_flowtable *ft, uint32_t pos, const struct sbx_flow_key *key, uint32_t bytes,
			 uint8_t flags, uint64_t now, int *deleted)
{
	struct flow_state *s = &ft->st[pos];

	if (unlikely(now - s->last_ns >= ft->idle_ns && now > s->last_ns) ||
	    unlikely(now - s->first_ns >= ft->active_ns && now > s->first_ns)) {
		emit_record(ft, pos, key, now - s->last_ns >= ft->idle_ns ? SBX_FLOW_END_IDLE : SBX_FLOW_END_ACTIVE);
		list_unlink(ft, pos);
		start_flow(ft, pos, now);
	}
	s->packets++;
	s->bytes += bytes;
	s->tcp_flags |= flags;
	if (now > s->last_ns)
		s->last_ns = now;
	if (unlikely(flags & (TCP_FIN | TCP_RST)) && key->proto == PROTO_TCP) {
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
	const void *kp[CHUNK];
	hash_sig_t sig[CHUNK];
	int32_t pos[CHUNK];
	uint32_t bytes[CHUNK];
	uint8_t flags[CHUNK];
	unsigned int done, i, m;

	for (done = 0; done < n; done += i) {
		int deleted = 0;

		/* the frames' headers, all at once: in a worker they are cold (written by a NIC or by
		 * the primary's pcap read on another core), and the parse loop would take their misses
		 * one after the other */
		for (i = 0; i < CHUNK && done + i < n; i++)
			rte_prefetch0(frames[done + i]);
		for (i = 0, m = 0; i < CHUNK && done + i < n; i++) {
			if (flow_parse(frames[done + i], lens[done + i], port, &keys[m], &bytes[m], &flags[m]) != 0) {
				ft->s.non_ip++;
				continue;
			}
			kp[m] = &keys[m];
			/* the table's hash function, inlined here (rte_hash calls it through a pointer) */
			sig[m] = rte_hash_crc(&keys[m], sizeof(keys[m]), 0);
			m++;
		}
		if (m == 0)
			continue;
		rte_hash_lookup_with_hash_bulk(ft->h, kp, sig, m, pos);
		for (unsigned int j = 0; j < m; j++)
			if (pos[j] >= 0)
				rte_prefetch0(&ft->st[pos[j]]);
		for (unsigned int j = 0; j < m; j++) {
			int32_t p = pos[j];

			if (deleted) /* keys left the hash during this chunk: positions looked up are stale */
				p = rte_hash_lookup_with_hash(ft->h, &keys[j], sig[j]);
			if (p < 0)
				p = add_flow(ft, &keys[j], sig[j], now, &deleted);
			if (p < 0) { /* not reached: a full table pushes out its oldest flow */
				ft->s.non_ip++;
				continue;
			}
			ft->s.frames++;
			count(ft, (uint32_t)p, &keys[j], bytes[j], flags[j], now, &deleted);
		}
	}
}

unsigned int sbx_flowtable_expire(struct sbx_flowtable *ft, uint64_t now, unsigned int budget)
{
	unsigned int n = 0, k;

	while (n < budget && ft->head != NIL && now > ft->st[ft->head].first_ns &&
	       now - ft->st[ft->head].first_ns >= ft->active_ns) {
		uint32_t h = ft->head;

		close_flow(ft, h, now - ft->st[h].last_ns >= ft->idle_ns ? SBX_FLOW_END_IDLE : SBX_FLOW_END_ACTIVE);
		n++;
	}
	for (k = 0; k < budget && n < budget && ft->s.active > 0; k++) {
		uint32_t c = ft->cursor;
		const struct flow_state *s = &ft->st[c];

		ft->cursor = c + 1 == ft->capacity ? 0 : c + 1;
		if (s->used && now > s->last_ns && now - s->last_ns >= ft->idle_ns) {
			close_flow(ft, c, SBX_FLOW_END_IDLE);
			n++;
		}
	}
	/* the slots of the next call: their misses overlap the next burst instead of stalling it */
	for (k = 0; k < budget; k++)
		rte_prefetch0(&ft->st[ft->cursor + k < ft->capacity ? ft->cursor + k : ft->cursor + k - ft->capacity]);
	return n;
}

unsigned int sbx_flowtable_flush(struct sbx_flowtable *ft, uint64_t now, enum sbx_flow_end_reason reason)
{
	unsigned int n = 0;

	while (ft->head != NIL) {
		uint32_t h = ft->head;
		const struct flow_state *s = &ft->st[h];
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
