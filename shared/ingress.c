/* SPDX-License-Identifier: BSD-3-Clause */
/* Strip, tag push and sequence tracking of the ingress stages (include/spanbox/ingress.h). */
#include <string.h>

#include "spanbox/ingress.h"

#define ETH_ADDRS 12 /* destination + source MAC */

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline bool is_vlan_tpid(uint16_t t)
{
	return t == 0x8100 || t == 0x88A8 || t == 0x9100;
}

uint32_t sbx_ingress_strip(uint8_t *frame, uint32_t avail, uint8_t what, struct sbx_strip_result *res)
{
	uint32_t p = ETH_ADDRS, head, eth_at, s, tags = 0, labels = 0;
	uint16_t type, inner = 0;
	bool unknown = false, bos = false;

	if (res != NULL)
		memset(res, 0, sizeof(*res));
	if (frame == NULL || avail < ETH_ADDRS + 2 || !(what & (SBX_STRIP_VLAN | SBX_STRIP_MPLS)))
		return 0;
	/* p: offset of the EtherType field; a tag is TPID (at p), TCI, then the next EtherType at p + 4.
	 * A tag whose next EtherType is not within avail is not a whole tag: it stays. */
	type = get16(frame + p);
	while (is_vlan_tpid(type) && p + 6 <= avail) {
		p += 4;
		tags++;
		type = get16(frame + p);
	}
	/* with "vlan" every whole tag goes; without it the tags stay, in front of what is removed */
	head = (what & SBX_STRIP_VLAN) ? ETH_ADDRS : p;
	if (!(what & SBX_STRIP_VLAN))
		tags = 0;
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
			put16(frame + eth_at, inner);
		} else {
			/* neither IPv4 nor IPv6 (a pseudowire, a control word), or a stack cut short: kept whole */
			unknown = true;
			labels = 0;
		}
	}
	if (res != NULL) {
		res->vlan_tags = tags;
		res->mpls_labels = labels;
		res->mpls_unknown = unknown;
	}
	if (eth_at == head)
		return 0;
	memmove(frame + (eth_at - head), frame, head);
	return eth_at - head;
}

uint8_t *sbx_ingress_tag_push(uint8_t *frame, uint16_t vlan)
{
	uint8_t *f = frame - 4;

	memmove(f, frame, ETH_ADDRS);
	put16(f + ETH_ADDRS, 0x8100);
	put16(f + ETH_ADDRS + 2, (uint16_t)(vlan & 0x0FFF)); /* PCP 0, DEI 0 */
	return f;
}

enum sbx_seq_verdict sbx_seq_track(struct sbx_seq_state *s, uint32_t seq, uint64_t *lost)
{
	uint32_t d;

	*lost = 0;
	if (!s->started) {
		s->started = true;
		s->next = seq + 1;
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
	if (seq == s->next) {
		s->next = seq + 1;
		return SBX_SEQ_IN_ORDER;
	}
	d = seq - s->next; /* modulo 2^32: a wrap from 0xffffffff to 0 is in order */
	if (d < 0x80000000u) {
		*lost = d;
		s->next = seq + 1;
		return SBX_SEQ_GAP;
	}
	if (s->next - seq > SBX_SEQ_REORDER_MAX) {
		/* far behind: the sender counts again from seq (a reload), not 2^31 late frames */
		s->next = seq + 1;
		return SBX_SEQ_RESTARTED;
	}
	return SBX_SEQ_REORDERED;
}
