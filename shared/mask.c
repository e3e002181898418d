/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Masking of mirror copies (mask.h): where a session's region lies in a frame, and writing it.
 * Wire formats and their sources: include/spanbox/mask.h.
 */
#include <string.h>

#include "spanbox/decap.h"
#include "spanbox/ip6walk.h"
#include "spanbox/l3_walk.h"
#include "spanbox/mask.h"

/* What the walk of one Ethernet frame found (walk_frame). */
struct walk {
	uint32_t l3, l4;  /* offsets of the IP header and of the IP payload */
	int64_t frag8;    /* a fragment's offset in its datagram's payload, bytes (0: first or whole) */
	uint8_t proto;    /* the IP protocol / last next header: GRE and UDP may carry a tunnel */
	bool has_l3, has_l4;
};

/* Remember the IPv4 header at @p off (IHL x 4 = @p hlen) for the checksum fix. */
static void note_ip4(struct sbx_mask_region *r, uint32_t off, uint32_t hlen)
{
	if (r->nb_ip4 < 2) {
		r->ip4_off[r->nb_ip4] = (uint16_t)off;
		r->ip4_hlen[r->nb_ip4++] = (uint8_t)hlen;
	}
}

/*
 * Walk the IP packet at @p off of @p f (@p lim readable bytes, @p len in all): w->l4 and w->frag8.
 * IPv4 headers are noted in @p r.
 */
static void walk_ip(const uint8_t *f, uint32_t len, uint32_t lim, uint32_t off, struct walk *w,
		    struct sbx_mask_region *r)
{
	w->l3 = off;
	w->has_l3 = true;
	if (off + 1 > lim)
		return;
	if ((f[off] >> 4) == 4) {
		uint32_t hlen = (uint32_t)(f[off] & 0xf) * 4;

		if (hlen < 20 || off + hlen > lim)
			return;
		note_ip4(r, off, hlen);
		w->l4 = off + hlen;
		w->frag8 = (int64_t)(sbx_get16(f + off + 6) & 0x1fff) * 8;
		w->proto = f[off + 9];
		w->has_l4 = w->l4 <= len;
	} else if ((f[off] >> 4) == 6) {
		uint32_t p = off + 40;
		uint8_t nh;
		int k, s;

		if (off + 40 > lim)
			return;
		nh = f[off + 6];
		for (k = 0; k < MAX_EXT_HDRS; k++) {
			s = sbx_ip6_ext_skip(f, lim, &nh, &p);
			if (s < 0)
				return; /* an extension header cut: no L4 known */
			if (s > 0)
				continue;
			if (nh != IP6_FRAG)
				break;
			if (p + 8 > lim)
				return;
			w->frag8 = sbx_get16(f + p + 2) & 0xfff8; /* offset in 8-byte units, shifted left 3 */
			nh = f[p];
			p += 8;
		}
		if (k == MAX_EXT_HDRS || p > lim)
			return; /* more headers than walked, or the last one past the readable bytes */
		w->l4 = p;
		w->has_l4 = p <= len;
		w->proto = nh;
	} else {
		w->has_l3 = false; /* MPLS guessed wrong: neither version */
	}
}

/* Walk the Ethernet frame at @p off of @p f: tags, MPLS labels, IP (walk_ip). */
static void walk_frame(const uint8_t *f, uint32_t len, uint32_t lim, uint32_t off, struct walk *w,
		       struct sbx_mask_region *r)
{
	uint16_t type;
	int k;

	memset(w, 0, sizeof(*w));
	off += 12;
	if (off + 2 > lim)
		return;
	type = sbx_get16(f + off);
	for (k = 0; k < MAX_TAGS && (type == ET_VLAN || type == ET_QINQ || type == ET_QINQ_OLD); k++) {
		off += 4;
		if (off + 2 > lim)
			return;
		type = sbx_get16(f + off);
	}
	off += 2;
	if (type == ET_MPLS || type == ET_MPLS_MC) {
		for (k = 0; k < MAX_LABELS; k++, off += 4)
			if (off + 4 > lim || (f[off + 2] & 1))
				break;
		if (k == MAX_LABELS || off + 4 > lim)
			return;
		off += 4; /* behind the bottom of the stack: IPv4 or IPv6 by the first nibble */
	} else if (type != ET_IPV4 && type != ET_IPV6) {
		return;
	}
	walk_ip(f, len, lim, off, w, r);
}

bool sbx_mask_region(const struct sbx_mask_cfg *mk, const uint8_t *f, uint32_t len, uint32_t avail,
		     struct sbx_mask_region *r)
{
	uint32_t lim = avail < len ? avail : len;
	struct sbx_tunnel_info ti;
	struct walk w, wi;
	int64_t anchor, lower, s, e;
	uint8_t from = mk->from;

	memset(r, 0, sizeof(*r));
	walk_frame(f, len, lim, 0, &w, r);
	/* the tunnel's inner frame, walked whatever the anchor: its IPv4 header checksum is kept
	 * valid too when the region touches it */
	if ((w.proto == 47 || w.proto == 17) && sbx_decap_parse(f, len, lim, &ti) == SBX_DECAP_OK &&
	    (ti.kind != SBX_TUN_VXLAN || ti.udp_dst == SBX_VXLAN_PORT)) {
		if (ti.ft == 2) { /* an IP packet (ERSPAN III FT 2, GTP-U) */
			memset(&wi, 0, sizeof(wi));
			walk_ip(f, len, lim, ti.inner_off, &wi, r);
		} else {
			walk_frame(f, len, lim, ti.inner_off, &wi, r);
		}
		if (from == SBX_MASK_INNER_L3 || from == SBX_MASK_INNER_L4)
			w = wi;
	} /* else: no tunnel (or none we read): the frame is the innermost, inner_* its own L3/L4 */
	if (from == SBX_MASK_INNER_L3 || from == SBX_MASK_INNER_L4)
		from = from == SBX_MASK_INNER_L3 ? SBX_MASK_L3 : SBX_MASK_L4;
	switch (from) {
	case SBX_MASK_L2:
		anchor = lower = 0;
		break;
	case SBX_MASK_L3:
		if (!w.has_l3)
			return false;
		anchor = lower = w.l3;
		break;
	case SBX_MASK_L4:
		if (!w.has_l4)
			return false;
		lower = w.l4;
		anchor = (int64_t)w.l4 - w.frag8; /* a later fragment: where its datagram's L4 began */
		break;
	default:
		return false;
	}
	s = anchor + mk->offset;
	e = s + mk->length;
	if (s < lower)
		s = lower;
	if (e < s)
		e = s;
	r->start = (uint32_t)s;
	r->end = (uint32_t)e;
	return true;
}

bool sbx_mask_ip4_fix(const struct sbx_mask_region *r, uint8_t *ip, uint32_t off, uint32_t hlen)
{
	uint32_t sum = 0, k;

	if (r->start >= r->end || r->end <= off || r->start >= off + hlen)
		return false; /* the region does not touch the header */
	if (r->start < off + 12 && r->end > off + 10)
		return false; /* it covers (part of) the checksum: the pattern stays */
	ip[10] = ip[11] = 0;
	for (k = 0; k + 1 < hlen; k += 2)
		sum += (uint32_t)(ip[k] << 8 | ip[k + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	ip[10] = (uint8_t)(sum >> 8);
	ip[11] = (uint8_t)sum;
	return true;
}

uint32_t sbx_mask_apply(const struct sbx_mask_cfg *mk, const struct sbx_mask_region *r, uint8_t *f, uint32_t len)
{
	uint32_t end = r->end < len ? r->end : len, n = 0;

	if (r->start < end) {
		n = end - r->start;
		memset(f + r->start, mk->pattern, n);
	}
	for (uint8_t k = 0; k < r->nb_ip4 && k < 2; k++)
		if ((uint32_t)r->ip4_off[k] + r->ip4_hlen[k] <= len)
			sbx_mask_ip4_fix(r, f + r->ip4_off[k], r->ip4_off[k], r->ip4_hlen[k]);
	return n;
}

const char *sbx_mask_from_name(uint8_t from)
{
	static const char *const names[] = { "none", "l2", "l3", "l4", "inner_l3", "inner_l4" };

	return from < sizeof(names) / sizeof(names[0]) ? names[from] : "unknown";
}
