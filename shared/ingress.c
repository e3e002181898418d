/* SPDX-License-Identifier: BSD-3-Clause */
/* Strip, tag push and sequence tracking of the ingress stages (include/spanbox/ingress.h). */
#include <string.h>

#include "spanbox/bytes.h"
#include "spanbox/ingress.h"

#define ETH_ADDRS 12 /* destination + source MAC */

static inline bool is_vlan_tpid(uint16_t t)
{
	return t == 0x8100 || t == 0x88A8 || t == 0x9100;
}

uint32_t sbx_ingress_strip(uint8_t *frame, uint32_t avail, uint8_t what, struct sbx_strip_result *res)
{
	uint8_t kept[16 * 8]; /* the tags that stay, in order: 16 E-Tags, 21 VN-Tags, 32 VLAN tags */
	uint32_t p = ETH_ADDRS, eth_at, s, kn = 0, tags = 0, vntags = 0, etags = 0, labels = 0;
	uint16_t type, inner = 0;
	bool unknown = false, bos = false;
	const uint8_t strips = SBX_STRIP_VLAN | SBX_STRIP_MPLS | SBX_STRIP_VNTAG | SBX_STRIP_ETAG;

	if (res != NULL)
		memset(res, 0, sizeof(*res));
	if (frame == NULL || avail < ETH_ADDRS + 2 || !(what & strips))
		return 0;
	/* p: offset of the EtherType field; a tag is its EtherType (at p), its body, then the next
	 * EtherType. A tag whose next EtherType is not within avail is not a whole tag: it stays, and
	 * so does everything after it. */
	type = sbx_get16(frame + p);
	for (;;) { /* p grows by 4 at least each turn and stays below avail: it ends */
		uint32_t len;
		bool strip;

		if (is_vlan_tpid(type)) {
			len = 4; /* TPID, TCI (IEEE 802.1Q) */
			strip = what & SBX_STRIP_VLAN;
		} else if (type == 0x8926) {
			len = 6; /* EtherType, D/P/looped/version, dvif, svif (Cisco VN-Tag, IEEE 802.1Qbh draft) */
			strip = what & SBX_STRIP_VNTAG;
		} else if (type == 0x893F) {
			len = 8; /* EtherType, PCP/DEI/ingress E-CID/GRP/E-CID (IEEE 802.1BR-2012 7.2) */
			strip = what & SBX_STRIP_ETAG;
		} else {
			break;
		}
		if (p + len + 2 > avail)
			break;
		if (!strip && kn + len > sizeof(kept))
			break; /* more tags to keep than kept[] holds: this one and those after it stay */
		if (strip) {
			tags += len == 4;
			vntags += len == 6;
			etags += len == 8;
		} else {
			memcpy(kept + kn, frame + p, len);
			kn += len;
		}
		p += len;
		type = sbx_get16(frame + p);
	}
	eth_at = p;
	if ((what & SBX_STRIP_MPLS) && (type == 0x8847 || type == 0x8848)) {
		/* label stack entries (RFC 3032): label 20, TC 3, S 1, TTL 8 bits; S set on the last */
		for (s = p + 2; s + 4 <= avail && !bos; s += 4) {
			bos = frame[s + 2] & 0x01;
			labels++;
		}
		if (bos && s < avail && (frame[s] >> 4 == 4 || frame[s] >> 4 == 6))
			inner = frame[s] >> 4 == 4 ? 0x0800 : 0x86DD;
		if (inner) {
			eth_at = s - 2;
			sbx_put16(frame + eth_at, inner);
		} else {
			/* neither IPv4 nor IPv6 (a pseudowire, a control word), or a stack cut short: kept whole */
			unknown = true;
			labels = 0;
		}
	}
	if (res != NULL) {
		res->vlan_tags = tags;
		res->vntags = vntags;
		res->etags = etags;
		res->mpls_labels = labels;
		res->mpls_unknown = unknown;
	}
	if (eth_at - ETH_ADDRS == kn)
		return 0; /* nothing removed */
	/* the kept tags right before the EtherType, the addresses before them: the kept tags' new
	 * place starts at ETH_ADDRS + the bytes removed, past the addresses' old place */
	memmove(frame + eth_at - kn, kept, kn);
	memmove(frame + eth_at - kn - ETH_ADDRS, frame, ETH_ADDRS);
	return eth_at - kn - ETH_ADDRS;
}

uint8_t *sbx_ingress_tag_push(uint8_t *frame, uint16_t vlan)
{
	uint8_t *f = frame - 4;

	memmove(f, frame, ETH_ADDRS);
	sbx_put16(f + ETH_ADDRS, 0x8100);
	sbx_put16(f + ETH_ADDRS + 2, (uint16_t)(vlan & 0x0FFF)); /* PCP 0, DEI 0 */
	return f;
}

/* Was number @p n seen (its bit in the window)? */
static inline bool seq_seen(const struct sbx_seq_state *s, uint32_t n)
{
	return s->seen[n % SBX_SEQ_WINDOW / 64] >> (n % 64) & 1;
}

static inline void seq_mark(struct sbx_seq_state *s, uint32_t n, bool seen)
{
	uint64_t bit = 1ull << (n % 64);

	if (seen)
		s->seen[n % SBX_SEQ_WINDOW / 64] |= bit;
	else
		s->seen[n % SBX_SEQ_WINDOW / 64] &= ~bit;
}

/* Start following at @p seq (the first number, or the first after a restart): numbers still missing
 * in the window can no longer come. */
static void seq_first(struct sbx_seq_state *s, uint32_t seq)
{
	s->started = true;
	s->next = seq + 1;
	s->span = 1;
	s->lost_final += s->missing;
	s->missing = 0;
	memset(s->seen, 0, sizeof(s->seen));
	seq_mark(s, seq, true);
}

/* The window moves from next to @p seq + 1 (@p d = seq - next < 2^31 numbers skipped): each slot
 * taken by a new number drops the number SBX_SEQ_WINDOW before it, final when it was counted lost
 * (in the span) and not seen; the skipped numbers are missing, those already out of the window final. */
static void seq_advance(struct sbx_seq_state *s, uint32_t seq, uint32_t d)
{
	const uint32_t w = SBX_SEQ_WINDOW;
	uint32_t k = d >= w ? w : d + 1, j;

	if (k == w) { /* the whole window is replaced */
		s->lost_final += s->missing;
		s->missing = 0;
		memset(s->seen, 0, sizeof(s->seen));
	} else {
		for (j = 0; j < k; j++) { /* slot of number next + j held number next + j - w */
			if (j >= w - s->span && !seq_seen(s, s->next + j)) {
				s->missing--;
				s->lost_final++;
			}
			seq_mark(s, s->next + j, false);
		}
	}
	seq_mark(s, seq, true);
	s->missing += d < w - 1 ? d : w - 1;
	s->lost_final += d < w - 1 ? 0 : d - (w - 1);
	s->lost += d;
	s->span = d >= w - s->span ? w : s->span + d + 1;
	s->next = seq + 1;
}

enum sbx_seq_verdict sbx_seq_track(struct sbx_seq_state *s, uint32_t seq, int64_t *lost)
{
	uint32_t d, behind;

	*lost = 0;
	if (!s->started) {
		seq_first(s, seq);
		s->zero_run = seq == 0;
		return SBX_SEQ_IN_ORDER;
	}
	if (seq == 0 && s->zero_run > 0) {
		/* every number so far was 0: the sender does not number its frames */
		s->zero_run++;
		s->next = 1;
		return SBX_SEQ_NOT_MAINTAINED;
	}
	s->zero_run = 0;
	d = seq - s->next; /* modulo 2^32: a wrap from 0xffffffff to 0 is in order */
	if (d < 0x80000000u) {
		seq_advance(s, seq, d);
		*lost = d;
		return d ? SBX_SEQ_GAP : SBX_SEQ_IN_ORDER;
	}
	behind = s->next - 1 - seq; /* 0: the last number again */
	if (behind >= SBX_SEQ_WINDOW) {
		/* far behind: the sender counts again from seq (a reload), not 2^31 late frames */
		seq_first(s, seq);
		return SBX_SEQ_RESTARTED;
	}
	if (seq_seen(s, seq))
		return SBX_SEQ_DUPLICATE;
	seq_mark(s, seq, true);
	if (behind < s->span) { /* a gap counted it lost: it is not */
		s->missing--;
		s->lost--;
		*lost = -1;
	}
	return SBX_SEQ_REORDERED;
}

/* The index cell a sender's probe starts at: a multiplicative mix of every key byte. */
static uint32_t sender_hash(uint8_t port, uint8_t kind, uint8_t af, uint32_t id, const uint8_t *addr)
{
	uint64_t h = ((uint64_t)port << 16 | (uint64_t)kind << 8 | af) * 0x9e3779b97f4a7c15ull ^ id;
	unsigned int i, n = af == 6 ? 16 : 4;

	for (i = 0; i < n; i += 4) {
		uint32_t w = (uint32_t)addr[i] << 24 | (uint32_t)addr[i + 1] << 16 | (uint32_t)addr[i + 2] << 8 | addr[i + 3];

		h = (h ^ w) * 0xff51afd7ed558ccdull;
	}
	return (uint32_t)(h >> 32) % SBX_SENDER_INDEX_CELLS;
}

static bool sender_is(const struct sbx_tunnel_source *e, uint8_t port, uint8_t kind, uint8_t af, uint32_t id,
		      const uint8_t *addr)
{
	return e->port == port && e->kind == kind && e->af == af && e->id == id &&
	       memcmp(e->src, addr, af == 6 ? 16 : 4) == 0;
}

/* Put slot @p k in the index. */
static void index_put(struct sbx_sender_table *t, uint32_t k)
{
	const struct sbx_tunnel_source *e = &t->src[k];
	uint32_t c = sender_hash(e->port, e->kind, e->af, e->id, e->src);

	while (t->index[c] != 0)
		c = (c + 1) % SBX_SENDER_INDEX_CELLS;
	t->index[c] = (uint16_t)(k + 1);
}

/* Rebuild the index from the used slots. */
static void index_build(struct sbx_sender_table *t)
{
	uint32_t k;

	memset(t->index, 0, sizeof(t->index));
	t->nb_used = 0;
	for (k = 0; k < t->nb; k++)
		if (t->src[k].used) {
			index_put(t, k);
			t->nb_used++;
		}
}

/* Free slot @p e: a reader sees gen odd, or used 0. */
static void slot_free(struct sbx_tunnel_source *e)
{
	__atomic_store_n(&e->gen, e->gen | 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&e->used, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&e->gen, (e->gen | 1) + 1, __ATOMIC_RELEASE);
}

void sbx_senders_init(struct sbx_sender_table *t, struct sbx_tunnel_source *src, uint32_t nb, uint32_t cap)
{
	uint32_t k;

	if (cap > SBX_MAX_TUNNEL_SOURCES)
		cap = SBX_MAX_TUNNEL_SOURCES;
	t->src = src;
	t->nb = nb > cap ? cap : nb;
	t->free_hint = 0;
	for (k = t->nb; k < cap; k++)
		if (src[k].used)
			slot_free(&src[k]);
	/* a slot left half written (gen odd: the worker died in the middle) is freed */
	for (k = 0; k < t->nb; k++)
		if (src[k].gen & 1)
			slot_free(&src[k]);
	index_build(t);
}

struct sbx_tunnel_source *sbx_senders_get(struct sbx_sender_table *t, uint8_t port, uint8_t kind, uint8_t af,
					  uint32_t id, const uint8_t *addr)
{
	uint32_t c = sender_hash(port, kind, af, id, addr), k, i;
	struct sbx_tunnel_source *e;
	uint32_t gen;

	for (; t->index[c] != 0; c = (c + 1) % SBX_SENDER_INDEX_CELLS) {
		e = &t->src[t->index[c] - 1];
		if (sender_is(e, port, kind, af, id, addr))
			return e;
	}
	if (t->nb_used >= t->nb)
		return NULL;
	for (i = 0, k = t->free_hint; i < t->nb && t->src[k].used; i++)
		k = k + 1 < t->nb ? k + 1 : 0;
	e = &t->src[k];
	t->free_hint = k + 1 < t->nb ? k + 1 : 0;
	gen = e->gen | 1;
	__atomic_store_n(&e->gen, gen, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memset((uint8_t *)e + sizeof(e->gen), 0, sizeof(*e) - sizeof(e->gen));
	e->port = port;
	e->kind = kind;
	e->af = af;
	e->id = id;
	memcpy(e->src, addr, af == 6 ? 16 : 4);
	e->used = 1;
	__atomic_store_n(&e->gen, gen + 1, __ATOMIC_RELEASE);
	t->index[c] = (uint16_t)(k + 1);
	t->nb_used++;
	return e;
}

uint32_t sbx_senders_expire(struct sbx_sender_table *t, uint64_t now_ns, uint64_t idle_ns, const bool *drop_port,
			    uint64_t *expired)
{
	uint32_t k, n = 0;

	for (k = 0; k < t->nb; k++) {
		struct sbx_tunnel_source *e = &t->src[k];
		bool idle;

		if (!e->used)
			continue;
		idle = now_ns > e->last_seen_ns && now_ns - e->last_seen_ns >= idle_ns;
		if (!idle && !(drop_port && e->port < SBX_MAX_PORTS && drop_port[e->port]))
			continue;
		if (idle && expired && e->port < SBX_MAX_PORTS && !(drop_port && drop_port[e->port]))
			expired[e->port]++;
		slot_free(e);
		n++;
	}
	if (n)
		index_build(t);
	return n;
}
