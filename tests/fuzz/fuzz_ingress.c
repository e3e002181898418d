/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the byte-level ingress stages (shared/ingress.c, shared/dedup.c) on arbitrary
 * frames. Input: byte 0 = strip bits (SBX_STRIP_*, low 2 bits) and dedup ignore bits (bits 2..4),
 * byte 1 and 2 = where the frame is cut into up to three segments, the rest = the frame.
 *  - sbx_ingress_strip() on a buffer of exactly the frame's length (ASan: never a read or write
 *    past it); what it removed is at most the frame; a second strip of the result finds nothing
 *    more to remove of what was asked (VLAN tags all go at once; an MPLS stack is removed whole);
 *  - sbx_ingress_tag_push() into 4 bytes of headroom;
 *  - sbx_dedup_check() of the frame whole, then cut in segments (each its own exact allocation):
 *    the cut copy must be a duplicate of the whole one (abort otherwise);
 *  - sbx_seq_track() on the frame's 32-bit words: a gap never exceeds 2^31 - 1, the final losses never
 *    go down, and the loss is the final one plus the numbers still missing in the window.
 * Seeds: the first frames of the captures (tests/fuzz/seeds.py).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <spanbox/ingress.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

#define ENTRIES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static uint64_t mem[(64 + ENTRIES * 24) / 8 + 8] __attribute__((aligned(64)));
	static uint64_t now;
	struct sbx_dedup_stats st = {0};
	struct sbx_strip_result res, res2;
	struct sbx_seq_state seq = {0};
	const uint8_t *segs[3];
	uint32_t seg_len[3], flen, cut1, cut2, n, n2, k;
	struct sbx_dedup_table *t;
	uint8_t *buf, *head, *s[3], what, ignore;
	uint64_t final = 0;
	int64_t lost;

	if (len < 3 || len > 65536 + 3)
		return 0;
	what = data[0] & 0x3;
	ignore = (uint8_t)((data[0] >> 2) & 0x7);
	flen = (uint32_t)(len - 3);
	cut1 = flen ? data[1] % (flen + 1) : 0;
	cut2 = flen ? cut1 + data[2] % (flen - cut1 + 1) : 0;

	/* strip, exactly flen bytes allocated */
	buf = malloc(flen ? flen : 1);
	memcpy(buf, data + 3, flen);
	n = sbx_ingress_strip(buf, flen, what, &res);
	if (n > flen || (n > 0 && flen - n < 14))
		abort(); /* never more than the frame, and a frame keeps its Ethernet header */
	if (n != 4 * res.vlan_tags + 4 * res.mpls_labels)
		abort(); /* the bytes removed are the tags and labels reported */
	n2 = sbx_ingress_strip(buf + n, flen - n, what & SBX_STRIP_VLAN, &res2);
	if ((what & SBX_STRIP_VLAN) && n2 != 0)
		abort(); /* every whole tag went the first time */
	/* tag push behind 4 bytes of headroom */
	head = malloc(flen - n + 4);
	memcpy(head + 4, buf + n, flen - n);
	if (flen - n >= 14 && sbx_ingress_tag_push(head + 4, (uint16_t)(data[1] | data[2] << 8)) != head)
		abort();
	free(head);
	free(buf);

	/* dedup: whole, then in three segments of their own: the same frame */
	t = sbx_dedup_init(mem, ENTRIES, 1000);
	if (t == NULL)
		abort();
	segs[0] = data + 3;
	seg_len[0] = flen;
	now += 1;
	(void)sbx_dedup_check(t, segs, seg_len, 1, ignore, now, &st);
	seg_len[0] = cut1;
	seg_len[1] = cut2 - cut1;
	seg_len[2] = flen - cut2;
	for (k = 0; k < 3; k++) {
		s[k] = malloc(seg_len[k] ? seg_len[k] : 1);
		memcpy(s[k], data + 3 + (k == 0 ? 0 : k == 1 ? cut1 : cut2), seg_len[k]);
		segs[k] = s[k];
	}
	if (flen > 0 && !sbx_dedup_check(t, segs, seg_len, 3, ignore, now + 1, &st))
		abort(); /* segmentation changed the frame's identity */
	for (k = 0; k < 3; k++)
		free(s[k]);

	/* sequence numbers: the frame's 32-bit words */
	for (k = 0; k + 4 <= flen && k < 4096; k += 4) {
		uint32_t v = (uint32_t)data[3 + k] << 24 | (uint32_t)data[4 + k] << 16 | (uint32_t)data[5 + k] << 8 |
			     data[6 + k];

		if (sbx_seq_track(&seq, v, &lost) == SBX_SEQ_GAP && (lost <= 0 || lost >= 0x80000000))
			abort();
		/* the final losses never go down; lost = final + the numbers missing in the window */
		if (seq.lost_final < final || seq.lost != seq.lost_final + seq.missing || seq.missing >= SBX_SEQ_WINDOW)
			abort();
		final = seq.lost_final;
	}
	return 0;
}
