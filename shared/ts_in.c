/* SPDX-License-Identifier: BSD-3-Clause */
/* Timestamps in: the AVSP header and the Metamako trailer parsers (include/spanbox/ts_in.h; the wire
 * formats and their sources are documented there). Bytes only. */
#include <string.h>

#include "spanbox/bytes.h"
#include "spanbox/ts_in.h"

#define NS_PER_S 1000000000ull

const char *sbx_ts_in_malformed_name(enum sbx_ts_in_result r)
{
	switch (r) {
#define _(n, h) case SBX_TS_IN_MALFORMED_##n: return #n;
	foreach_sbx_ts_in_malformed
#undef _
	default:
		return NULL;
	}
}

enum sbx_ts_in_result sbx_ts_in_avsp(const uint8_t *frame, uint32_t avail, uint32_t tai_offset_s, uint64_t now_ns,
				     struct sbx_ts_in_info *out)
{
	uint32_t hlen, tlen, ns;
	uint64_t secs, tai;
	uint16_t version;

	if (avail < 14 || sbx_get16(frame + 12) != SBX_AVSP_ETHERTYPE)
		return SBX_TS_IN_ABSENT;
	if (avail < 18)
		return SBX_TS_IN_MALFORMED_short;
	if (sbx_get16(frame + 14) != SBX_AVSP_SUBTYPE_TIMESTAMP)
		return SBX_TS_IN_MALFORMED_subtype;
	version = sbx_get16(frame + 16);
	switch (version) {
	case 0x0010: case 0x0110: case 0x0011: case 0x0111: /* 64-bit TAI / UTC (and J2) */
		tlen = 8;
		break;
	case 0x0020: case 0x0120: case 0x0021: case 0x0121: /* 48-bit TAI / UTC (and J2) */
		tlen = 6;
		break;
	default:
		return SBX_TS_IN_MALFORMED_version;
	}
	hlen = 6 + tlen; /* EtherType, subtype, version, time */
	if (avail < 12 + hlen + 2)  /* the frame's own EtherType must follow */
		return SBX_TS_IN_MALFORMED_short;
	tai = (version & 0x0100) ? 0 : tai_offset_s; /* 0x01xx: UTC, else TAI */
	if (tlen == 8) {
		secs = sbx_get32(frame + 18);
		ns = sbx_get32(frame + 22);
	} else {
		uint64_t now_s = now_ns / NS_PER_S + tai, low = sbx_get16(frame + 18);

		ns = sbx_get32(frame + 20);
		/* the second nearest our clock (in the header's scale) whose low 16 bits are the header's */
		secs = (now_s & ~0xffffull) | low;
		if (secs > now_s + 32768)
			secs = secs >= 65536 ? secs - 65536 : secs;
		else if (secs + 32768 < now_s)
			secs += 65536;
	}
	/* UTC from 1970 on, and ns that fit in 64 bits (a 48-bit time near a clock past 2554 would not) */
	if (ns >= NS_PER_S || secs < tai || secs - tai > UINT64_MAX / NS_PER_S - 1)
		return SBX_TS_IN_MALFORMED_implausible;
	memset(out, 0, sizeof(*out));
	out->ns = (secs - tai) * NS_PER_S + ns;
	out->cut_front = hlen;
	out->version = version;
	return SBX_TS_IN_OK;
}

enum sbx_ts_in_result sbx_ts_in_metamako(const uint8_t *tail, uint32_t tail_len, uint32_t frame_len, bool fcs,
					 uint32_t window_s, uint64_t now_ns, struct sbx_ts_in_info *out)
{
	uint32_t fcs_len = fcs ? 4 : 0, e, p, ns, k;
	uint64_t secs, t;
	uint8_t flags;

	if (tail_len > frame_len || tail_len < SBX_METAMAKO_TRAILER_LEN + fcs_len ||
	    frame_len < SBX_METAMAKO_TRAILER_LEN + fcs_len + 14)
		return SBX_TS_IN_MALFORMED_short;
	e = tail_len - fcs_len;   /* the trailer ends here */
	p = e - 12;               /* seconds, nanoseconds, flags, device, port */
	secs = sbx_get32(tail + p);
	ns = sbx_get32(tail + p + 4);
	flags = tail[p + 8];
	/* within window_s of our clock, in ns (no division per frame: the second's fraction is the slack) */
	t = secs * NS_PER_S;
	if (ns >= NS_PER_S || secs <= 3600 || (t > now_ns ? t - now_ns : now_ns - t) > ((uint64_t)window_s + 1) * NS_PER_S)
		return SBX_TS_IN_MALFORMED_implausible;
	if (flags & 0x02) { /* extensions: TLVs read backwards from the seconds (packet-metamako.c) */
		for (k = 0;; k++) {
			uint32_t w, len;

			if (k == 64 || p < 4)
				return SBX_TS_IN_MALFORMED_implausible;
			w = sbx_get32(tail + p - 4);
			p -= 4;
			len = (w & 0x1f) == 0x1f ? ((w >> 6) & 0x3ff) + 1 : (w >> 6) & 0x3;
			if (4 * len > p)
				return SBX_TS_IN_MALFORMED_implausible;
			p -= 4 * len;
			if ((w >> 5) & 1) /* the last TLV */
				break;
		}
	}
	if (p < 4) /* no room for the original FCS in what we were given */
		return SBX_TS_IN_MALFORMED_implausible;
	p -= 4;
	if (frame_len - (tail_len - p) < 14)
		return SBX_TS_IN_MALFORMED_short;
	memset(out, 0, sizeof(*out));
	out->ns = secs * NS_PER_S + ns;
	out->cut_back = tail_len - p;
	out->flags = flags;
	out->device = sbx_get16(tail + e - 3);
	out->src_port = tail[e - 1];
	return SBX_TS_IN_OK;
}

uint8_t *sbx_ts_in_cut_front(uint8_t *frame, uint32_t cut)
{
	memmove(frame + cut, frame, 12);
	return frame + cut;
}

void sbx_ts_in_offset_add(struct sbx_ts_in_offset *o, uint64_t their_ns, uint64_t our_ns)
{
	int64_t d = (int64_t)(their_ns - our_ns);

	if (o->frames == 0 || d < o->min_ns)
		o->min_ns = d;
	if (o->frames == 0 || d > o->max_ns)
		o->max_ns = d;
	o->last_ns = d;
	o->seen_ns = our_ns;
	o->frames++;
}

void sbx_ts_in_offset_merge(struct sbx_ts_in_offset *a, const struct sbx_ts_in_offset *b)
{
	if (b->frames == 0)
		return;
	if (a->frames == 0) {
		*a = *b;
		return;
	}
	a->frames += b->frames;
	if (b->min_ns < a->min_ns)
		a->min_ns = b->min_ns;
	if (b->max_ns > a->max_ns)
		a->max_ns = b->max_ns;
	if (b->seen_ns > a->seen_ns) {
		a->seen_ns = b->seen_ns;
		a->last_ns = b->last_ns;
	}
}
