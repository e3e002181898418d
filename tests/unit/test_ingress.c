/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The byte-level ingress stages (shared/ingress.c, shared/dedup.c; include/spanbox/ingress.h):
 * strip of 802.1Q/802.1ad tags and MPLS stacks, tag push, sequence tracking, the tunnel sender table,
 * the dedup table.
 * No EAL, no mbufs: frames are byte arrays. TAP output.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spanbox/ingress.h"
#include "tap.h"

#define MAC "\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02"
#define IP4 "\x45\x00\x00\x1c\x12\x34\x40\x00\x40\x11\xab\xcd\xc0\x00\x02\x01\xc6\x33\x64\x07" /* 20 bytes */
#define IP6 "\x60\x00\x00\x00\x00\x08\x11\x40" "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01" \
	    "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x02" /* 40 bytes */
#define UDP "\x04\x00\x08\x00\x00\x08\x00\x00"

/* A frame built from pieces (C strings with their lengths given): at most 256 bytes. */
struct frame {
	uint8_t b[320];
	uint32_t len;
};

static void put(struct frame *f, const char *bytes, uint32_t n)
{
	memcpy(f->b + f->len, bytes, n);
	f->len += n;
}
#define PUT(f, s) put(f, s, sizeof(s) - 1)

/* Strip @what from @in (copied to a buffer of exactly its length, at offset 16): the frame that
 * results equals @want; *res filled. */
static bool strip_is(const struct frame *in, uint8_t what, const struct frame *want, struct sbx_strip_result *res)
{
	uint8_t *buf = malloc(in->len ? in->len : 1);
	uint32_t n;
	bool ok;

	memcpy(buf, in->b, in->len);
	n = sbx_ingress_strip(buf, in->len, what, res);
	ok = n <= in->len && in->len - n == want->len && !memcmp(buf + n, want->b, want->len);
	free(buf);
	return ok;
}

static void test_strip(void)
{
	struct frame in, out;
	struct sbx_strip_result r;
	uint8_t guard[64];
	uint32_t n;
	int labels;

	/* 0 tags: nothing */
	memset(&in, 0, sizeof(in));
	PUT(&in, MAC "\x08\x00" IP4);
	check(strip_is(&in, SBX_STRIP_VLAN | SBX_STRIP_MPLS, &in, &r) && r.vlan_tags == 0 && r.mpls_labels == 0,
	      "strip: an untagged IPv4 frame is unchanged, 0 removed");
	/* 1 tag */
	memset(&in, 0, sizeof(in));
	memset(&out, 0, sizeof(out));
	PUT(&in, MAC "\x81\x00\x20\x65\x08\x00" IP4);
	PUT(&out, MAC "\x08\x00" IP4);
	check(strip_is(&in, SBX_STRIP_VLAN, &out, &r) && r.vlan_tags == 1, "strip vlan: one 802.1Q tag removed");
	check(strip_is(&in, SBX_STRIP_MPLS, &in, &r) && r.vlan_tags == 0, "strip mpls only: a VLAN tag stays");
	/* 2 tags of 0x8100, QinQ 0x88a8 + 0x8100, 0x9100 + 0x8100, three tags */
	static const char *const outer[] = {"\x81\x00", "\x88\xa8", "\x91\x00"};
	for (int k = 0; k < 3; k++) {
		memset(&in, 0, sizeof(in));
		PUT(&in, MAC);
		put(&in, outer[k], 2);
		PUT(&in, "\x00\x0a\x81\x00\x00\x14\x86\xdd" IP6 UDP);
		memset(&out, 0, sizeof(out));
		PUT(&out, MAC "\x86\xdd" IP6 UDP);
		check(strip_is(&in, SBX_STRIP_VLAN, &out, &r) && r.vlan_tags == 2,
		      "strip vlan: outer TPID 0x%02x%02x + 0x8100 (QinQ): both removed, IPv6 follows",
		      (uint8_t)outer[k][0], (uint8_t)outer[k][1]);
	}
	memset(&in, 0, sizeof(in));
	PUT(&in, MAC "\x91\x00\x00\x01\x88\xa8\x00\x02\x81\x00\x00\x03\x08\x06" "\x00\x01\x08\x00");
	memset(&out, 0, sizeof(out));
	PUT(&out, MAC "\x08\x06" "\x00\x01\x08\x00");
	check(strip_is(&in, SBX_STRIP_VLAN, &out, &r) && r.vlan_tags == 3, "strip vlan: three tags, ARP follows");
	/* MPLS: 1, 2, 3 labels carrying IPv4, IPv6 */
	for (labels = 1; labels <= 3; labels++) {
		for (int v6 = 0; v6 < 2; v6++) {
			memset(&in, 0, sizeof(in));
			PUT(&in, MAC "\x88\x47");
			for (int l = 0; l < labels; l++) {
				uint8_t e[4] = {0x00, 0x01, (uint8_t)(l == labels - 1 ? 0x01 : 0x00), 0x40};

				put(&in, (const char *)e, 4);
			}
			memset(&out, 0, sizeof(out));
			if (v6) {
				PUT(&in, IP6 UDP);
				PUT(&out, MAC "\x86\xdd" IP6 UDP);
			} else {
				PUT(&in, IP4 UDP);
				PUT(&out, MAC "\x08\x00" IP4 UDP);
			}
			check(strip_is(&in, SBX_STRIP_MPLS, &out, &r) && r.mpls_labels == (uint32_t)labels &&
				      !r.mpls_unknown,
			      "strip mpls: %d label(s) carrying %s: stack removed, EtherType %s", labels,
			      v6 ? "IPv6" : "IPv4", v6 ? "0x86dd" : "0x0800");
			check(strip_is(&in, SBX_STRIP_VLAN, &in, &r) && r.mpls_labels == 0,
			      "strip vlan only: a %d-label stack stays", labels);
		}
	}
	/* MPLS carrying something else (an Ethernet pseudowire control word, first nibble 0): kept */
	memset(&in, 0, sizeof(in));
	PUT(&in, MAC "\x88\x47\x00\x01\x01\x40\x00\x00\x00\x00" MAC "\x08\x00" IP4);
	check(strip_is(&in, SBX_STRIP_MPLS, &in, &r) && r.mpls_labels == 0 && r.mpls_unknown,
	      "strip mpls: a stack carrying neither IPv4 nor IPv6 is kept whole, flagged");
	/* multicast MPLS 0x8848 */
	memset(&in, 0, sizeof(in));
	memset(&out, 0, sizeof(out));
	PUT(&in, MAC "\x88\x48\x00\x01\x01\x40" IP4);
	PUT(&out, MAC "\x08\x00" IP4);
	check(strip_is(&in, SBX_STRIP_MPLS, &out, &r) && r.mpls_labels == 1, "strip mpls: multicast 0x8848");
	/* VLAN + MPLS: both, or MPLS only (the tag stays in front) */
	memset(&in, 0, sizeof(in));
	PUT(&in, MAC "\x81\x00\x00\x64\x88\x47\x00\x01\x00\x40\x00\x02\x01\x40" IP4);
	memset(&out, 0, sizeof(out));
	PUT(&out, MAC "\x08\x00" IP4);
	check(strip_is(&in, SBX_STRIP_VLAN | SBX_STRIP_MPLS, &out, &r) && r.vlan_tags == 1 && r.mpls_labels == 2,
	      "strip vlan+mpls: MPLS in VLAN: tag and 2 labels removed");
	memset(&out, 0, sizeof(out));
	PUT(&out, MAC "\x81\x00\x00\x64\x08\x00" IP4);
	check(strip_is(&in, SBX_STRIP_MPLS, &out, &r) && r.vlan_tags == 0 && r.mpls_labels == 2,
	      "strip mpls: MPLS in VLAN: labels removed, the tag kept, its EtherType now IPv4");
	memset(&out, 0, sizeof(out));
	PUT(&out, MAC "\x88\x47\x00\x01\x00\x40\x00\x02\x01\x40" IP4);
	check(strip_is(&in, SBX_STRIP_VLAN, &out, &r) && r.vlan_tags == 1 && r.mpls_labels == 0,
	      "strip vlan: MPLS in VLAN: the tag removed, the stack kept");
	check(strip_is(&in, 0, &in, &r), "strip nothing asked: unchanged");

	/* short frames: every prefix of tagged/labelled frames; never reads past avail (the bytes after
	 * are a guard that would change the result), never removes a partial header */
	memset(&in, 0, sizeof(in));
	PUT(&in, MAC "\x88\xa8\x00\x0a\x81\x00\x00\x14\x88\x47\x00\x01\x00\x40\x00\x02\x01\x40" IP4);
	bool short_ok = true;
	for (uint32_t avail = 0; avail <= in.len; avail++) {
		uint8_t buf[sizeof(in.b) + sizeof(guard)];

		memcpy(buf, in.b, avail);
		memset(buf + avail, 0x45, sizeof(guard)); /* an IPv4 nibble, a BoS bit: looks like more */
		n = sbx_ingress_strip(buf, avail, SBX_STRIP_VLAN | SBX_STRIP_MPLS, &r);
		uint32_t want = avail < 14 ? 0 : avail < 18 ? 0 : avail < 22 ? 4 : avail < 31 ? 8 : 16;
		/* 14..17: the first tag's next EtherType is cut: kept; 18..21: one tag; 22..30: two tags and
		 * a stack cut short (kept); from 31 (the payload's first byte): tags and stack */
		if (n != want || memcmp(buf + avail, (uint8_t[64]){[0 ... 63] = 0x45}, sizeof(guard))) {
			printf("# avail %u: removed %u, want %u\n", avail, n, want);
			short_ok = false;
		}
	}
	check(short_ok, "strip: every prefix of a QinQ+MPLS frame (0..%u bytes): whole headers only, nothing past avail",
	      in.len);
	check(sbx_ingress_strip(NULL, 0, SBX_STRIP_VLAN, &r) == 0 && sbx_ingress_strip(in.b, 13, 3, NULL) == 0,
	      "strip: NULL frame, 13 bytes, NULL result");

	/* 20 VLAN tags go at once (fuzz_ingress found a frame of more than 16 whose second strip still
	 * found tags: the walk stopped after 16); 22 VN-Tags to keep (132 bytes, more than the 128 kept
	 * bytes hold) stop the walk at the 22nd: it and what follows stay, and a second strip agrees */
	{
		uint8_t big[12 + 22 * 6 + 20 * 4 + 2 + 20], copy[sizeof(big)];
		uint32_t k, at = 12, n2;
		struct sbx_strip_result r2;

		memset(big, 0, sizeof(big));
		for (k = 0; k < 20; k++, at += 4)
			memcpy(big + at, "\x81\x00\x00\x0a", 4);
		memcpy(big + at, "\x08\x00", 2);
		memcpy(copy, big, sizeof(big));
		n = sbx_ingress_strip(copy, at + 2 + 20, SBX_STRIP_VLAN, &r);
		n2 = sbx_ingress_strip(copy + n, at + 2 + 20 - n, SBX_STRIP_VLAN, &r2);
		check(n == 80 && r.vlan_tags == 20 && n2 == 0 && copy[n + 12] == 0x08 && copy[n + 13] == 0x00,
		      "strip: 20 VLAN tags all go at once (%u bytes removed, %u tags; then %u)", n, r.vlan_tags, n2);
		memset(big, 0, sizeof(big));
		for (at = 12, k = 0; k < 22; k++, at += 6)
			memcpy(big + at, "\x89\x26\x00\x01\x00\x02", 6);
		for (k = 0; k < 20; k++, at += 4)
			memcpy(big + at, "\x81\x00\x00\x0a", 4);
		memcpy(big + at, "\x08\x00", 2);
		memcpy(copy, big, sizeof(big));
		n = sbx_ingress_strip(copy, sizeof(big), SBX_STRIP_VLAN, &r);
		n2 = sbx_ingress_strip(copy + n, sizeof(big) - n, SBX_STRIP_VLAN, &r2);
		check(n == 0 && n2 == 0 && !memcmp(copy, big, sizeof(big)),
		      "strip: 22 VN-Tags to keep before VLAN tags: past the 128 kept bytes nothing moves (%u, then %u)", n, n2);
	}
}

static void test_tag_push(void)
{
	uint8_t buf[64], want[64];
	struct frame in;
	uint8_t *f;

	memset(&in, 0, sizeof(in));
	PUT(&in, MAC "\x08\x00" IP4);
	memset(buf, 0xee, sizeof(buf));
	memcpy(buf + 4, in.b, in.len);
	f = sbx_ingress_tag_push(buf + 4, 101);
	memcpy(want, MAC "\x81\x00\x00\x65\x08\x00" IP4, in.len + 4);
	check(f == buf && !memcmp(f, want, in.len + 4), "tag push: 802.1Q VLAN 101, PCP 0, after the MACs");
	memcpy(buf + 4, in.b, in.len);
	f = sbx_ingress_tag_push(buf + 4, 4094);
	check(f[12] == 0x81 && f[13] == 0x00 && f[14] == 0x0f && f[15] == 0xfe && f[16] == 0x08,
	      "tag push: VLAN 4094 (0x0ffe)");
}

/* What a run of sequence numbers counted: the sums a sender's counters would hold. */
struct seq_counts {
	int64_t lost;          /* sum of *lost (= s.lost) */
	unsigned int gaps, reordered, duplicates, restarts;
};

/* Feed the @p n numbers of @p seq to a new sender's state @p s. */
static struct seq_counts seq_run(struct sbx_seq_state *s, const uint32_t *seq, unsigned int n)
{
	struct seq_counts c = {0};
	unsigned int i;
	int64_t lost;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < n; i++) {
		switch (sbx_seq_track(s, seq[i], &lost)) {
		case SBX_SEQ_GAP: c.gaps++; break;
		case SBX_SEQ_REORDERED: c.reordered++; break;
		case SBX_SEQ_DUPLICATE: c.duplicates++; break;
		case SBX_SEQ_RESTARTED: c.restarts++; break;
		default: break;
		}
		c.lost += lost;
	}
	return c;
}

/* Sequences with their counts worked out by hand (lost = numbers skipped less those that came late). */
static void test_seq_cases(void)
{
	static const struct {
		const char *what;
		uint32_t seq[12];
		unsigned int n;
		int64_t lost;
		unsigned int gaps, reordered, duplicates;
	} cases[] = {
		{"10 11 12 16 15 17 (issue #24): 13..15 skipped, 15 late", {10, 11, 12, 16, 15, 17}, 6, 2, 1, 1, 0},
		{"1 3 2: the gap filled", {1, 3, 2}, 3, 0, 1, 1, 0},
		{"1 2 2 3: a duplicate", {1, 2, 2, 3}, 4, 0, 0, 0, 1},
		{"1 5 4 3 2: every skipped number late", {1, 5, 4, 3, 2}, 5, 0, 1, 3, 0},
		{"1 5 3 3 6: one late, then its duplicate", {1, 5, 3, 3, 6}, 5, 2, 1, 1, 1},
		{"5 4 4 6: 4 from before the first number: late, never lost", {5, 4, 4, 6}, 4, 0, 0, 1, 1},
		{"1 2 5 5 3 4 1: both late, 5 and 1 twice", {1, 2, 5, 5, 3, 4, 1}, 7, 0, 1, 2, 2},
		{"1 4 8 2 7 3: two gaps, 3 of 5 late", {1, 4, 8, 2, 7, 3}, 6, 2, 2, 3, 0},
		{"0xfffffffe 0xffffffff 2 1 0: late across the wrap", {0xfffffffeu, 0xffffffffu, 2, 1, 0}, 5, 0, 1, 2, 0},
		{"7 7 7: the same number again is a duplicate", {7, 7, 7}, 3, 0, 0, 0, 2},
		{"20 19 18 21 19: late before the first, then a duplicate", {20, 19, 18, 21, 19}, 5, 0, 0, 2, 1},
	};
	struct sbx_seq_state s;
	struct seq_counts c;
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c = seq_run(&s, cases[i].seq, cases[i].n);
		check(c.lost == cases[i].lost && (int64_t)s.lost == c.lost && c.gaps == cases[i].gaps &&
			      c.reordered == cases[i].reordered && c.duplicates == cases[i].duplicates,
		      "seq %s: lost %lld gaps %u reordered %u duplicates %u (want %lld %u %u %u)", cases[i].what,
		      (long long)c.lost, c.gaps, c.reordered, c.duplicates, (long long)cases[i].lost, cases[i].gaps,
		      cases[i].reordered, cases[i].duplicates);
	}
}

/* The window: a late frame un-counts its loss only within SBX_SEQ_WINDOW; lost_final is what left it. */
static void test_seq_window(void)
{
	const uint32_t w = SBX_SEQ_WINDOW;
	struct sbx_seq_state s = {0};
	int64_t lost;
	uint32_t i;
	int ok = 1;

	sbx_seq_track(&s, 100, &lost);
	check(sbx_seq_track(&s, 100 + w, &lost) == SBX_SEQ_GAP && lost == w - 1 && s.missing == w - 1 && s.lost_final == 0,
	      "seq window: a gap of W-1 (101..100+W-1): all W-1 missing, none final");
	ok = sbx_seq_track(&s, 101, &lost) == SBX_SEQ_REORDERED && lost == -1 && s.lost == w - 2 && s.missing == w - 2;
	check(ok, "seq window: 101, W-1 behind, is late: its loss un-counted (lost %llu)", (unsigned long long)s.lost);
	ok = sbx_seq_track(&s, 100, &lost) == SBX_SEQ_RESTARTED && lost == 0 && s.lost == w - 2 &&
	     s.lost_final == w - 2 && s.missing == 0;
	check(ok, "seq window: 100, W behind, is a restart; what was missing is final (%llu)", (unsigned long long)s.lost_final);
	ok = 1;
	/* missing numbers become final when they leave the window */
	memset(&s, 0, sizeof(s));
	sbx_seq_track(&s, 1, &lost);
	sbx_seq_track(&s, 5, &lost); /* 2, 3, 4 missing */
	for (i = 6; i <= w; i++)
		ok &= sbx_seq_track(&s, i, &lost) == SBX_SEQ_IN_ORDER;
	check(ok && s.lost == 3 && s.missing == 3 && s.lost_final == 0,
	      "seq window: 1, 5, 6..W: 2..4 still in the window (missing %u, final %llu)", s.missing,
	      (unsigned long long)s.lost_final);
	ok = sbx_seq_track(&s, w + 1, &lost) == SBX_SEQ_IN_ORDER && s.missing == 3 && s.lost_final == 0;
	check(ok, "seq window: W+1 pushes out 1, which came: nothing final (missing %u)", s.missing);
	ok = sbx_seq_track(&s, w + 2, &lost) == SBX_SEQ_IN_ORDER && s.missing == 2 && s.lost_final == 1;
	check(ok, "seq window: W+2 pushes out 2, which never came: 1 final (final %llu, missing %u)",
	      (unsigned long long)s.lost_final, s.missing);
	for (i = w + 2; i <= w + 5; i++)
		sbx_seq_track(&s, i, &lost);
	check(s.lost == 3 && s.missing == 0 && s.lost_final == 3, "seq window: at W+5, 2..4 are final: lost 3, final 3");
	check(sbx_seq_track(&s, 4, &lost) == SBX_SEQ_RESTARTED && s.lost == 3,
	      "seq window: 4 once it left the window: a restart, not a late frame");
	/* a gap wider than the window: what it skips beyond the window is final at once */
	memset(&s, 0, sizeof(s));
	sbx_seq_track(&s, 1, &lost);
	check(sbx_seq_track(&s, 1 + w + 10, &lost) == SBX_SEQ_GAP && lost == w + 9 && s.missing == w - 1 &&
		      s.lost_final == 10,
	      "seq window: a gap of W+9: W-1 missing, 10 final");
	check(sbx_seq_track(&s, w + 10, &lost) == SBX_SEQ_REORDERED && lost == -1 && s.lost == w + 8 &&
		      s.lost_final == 10,
	      "seq window: the number before the gap's end is late: lost W+8");
	/* lost_final never goes down, lost never below it */
	memset(&s, 0, sizeof(s));
	{
		uint64_t prev = 0;
		uint32_t x = 12345, n = 1000;

		ok = 1;
		for (i = 0; i < 200000; i++) {
			x = x * 1103515245u + 12345u;
			/* mostly forward, sometimes late or repeated, sometimes skipping */
			n += (x >> 16) % 7 == 0 ? (uint32_t)-(int32_t)((x >> 8) % 40) : (x >> 20) % 5;
			sbx_seq_track(&s, n, &lost);
			ok &= s.lost_final >= prev && s.lost >= s.lost_final && s.lost - s.lost_final == s.missing &&
			      s.missing < w;
			prev = s.lost_final;
		}
		check(ok, "seq window: 200000 random numbers: lost_final never decreases, lost = final + missing "
			  "(lost %llu, final %llu)", (unsigned long long)s.lost, (unsigned long long)s.lost_final);
	}
}

static void test_seq(void)
{
	struct sbx_seq_state s = {0};
	int64_t lost = 99, total = 0;
	int i, ok = 1;

	check(sbx_seq_track(&s, 100, &lost) == SBX_SEQ_IN_ORDER && lost == 0 && s.started && s.next == 101,
	      "seq: the first number is in order");
	for (i = 101; i < 110; i++)
		ok &= sbx_seq_track(&s, (uint32_t)i, &lost) == SBX_SEQ_IN_ORDER && lost == 0;
	check(ok, "seq: 101..109 in order");
	check(sbx_seq_track(&s, 115, &lost) == SBX_SEQ_GAP && lost == 5 && s.next == 116, "seq: 110..114 missing: a gap of 5");
	check(sbx_seq_track(&s, 112, &lost) == SBX_SEQ_REORDERED && lost == -1 && s.next == 116 && s.lost == 4,
	      "seq: 112 late: reordered, no longer lost (4 are), next unchanged");
	check(sbx_seq_track(&s, 115, &lost) == SBX_SEQ_DUPLICATE && lost == 0, "seq: 115 again: a duplicate");
	check(sbx_seq_track(&s, 116, &lost) == SBX_SEQ_IN_ORDER, "seq: 116 in order after it");
	/* wrap at 2^32 */
	memset(&s, 0, sizeof(s));
	sbx_seq_track(&s, 0xfffffffeu, &lost);
	check(sbx_seq_track(&s, 0xffffffffu, &lost) == SBX_SEQ_IN_ORDER && sbx_seq_track(&s, 0, &lost) == SBX_SEQ_IN_ORDER &&
		      sbx_seq_track(&s, 1, &lost) == SBX_SEQ_IN_ORDER,
	      "seq: 0xfffffffe, 0xffffffff, 0, 1: in order across the wrap");
	check(sbx_seq_track(&s, 4, &lost) == SBX_SEQ_GAP && lost == 2, "seq: after the wrap, 2..3 missing: a gap of 2");
	memset(&s, 0, sizeof(s));
	sbx_seq_track(&s, 0xfffffff0u, &lost);
	check(sbx_seq_track(&s, 3, &lost) == SBX_SEQ_GAP && lost == 18, "seq: a gap across the wrap: 0xfffffff1..2 = 18 lost");
	check(sbx_seq_track(&s, 0xfffffff5u, &lost) == SBX_SEQ_REORDERED && lost == -1,
	      "seq: a number from before the wrap is late (17 lost)");
	/* a sender that numbers every frame 0 */
	memset(&s, 0, sizeof(s));
	ok = sbx_seq_track(&s, 0, &lost) == SBX_SEQ_IN_ORDER;
	for (i = 0; i < 1000; i++) {
		ok &= sbx_seq_track(&s, 0, &lost) == SBX_SEQ_NOT_MAINTAINED;
		total += lost;
	}
	check(ok && total == 0 && s.zero_run == 1001, "seq: 1001 frames numbered 0: not maintained, 0 lost (zero_run %llu)",
	      (unsigned long long)s.zero_run);
	/* a sender that starts at 0 and counts */
	memset(&s, 0, sizeof(s));
	check(sbx_seq_track(&s, 0, &lost) == SBX_SEQ_IN_ORDER && sbx_seq_track(&s, 1, &lost) == SBX_SEQ_IN_ORDER &&
		      sbx_seq_track(&s, 2, &lost) == SBX_SEQ_IN_ORDER && s.zero_run == 0,
	      "seq: 0, 1, 2 is a maintained sequence");
	check(sbx_seq_track(&s, 0x90000000u, &lost) == SBX_SEQ_RESTARTED && lost == 0,
	      "seq: a jump of 2^31 or more is never counted as loss (a restart)");
	/* a sender that starts counting again (a switch reload): the count goes on from the new number,
	 * no frame after it is "reordered" and a later gap is seen again */
	memset(&s, 0, sizeof(s));
	for (i = 0; i < 100000; i++)
		sbx_seq_track(&s, (uint32_t)i, &lost);
	ok = sbx_seq_track(&s, 0, &lost) == SBX_SEQ_RESTARTED && lost == 0;
	for (i = 1; i < 50; i++)
		ok &= sbx_seq_track(&s, (uint32_t)i, &lost) == SBX_SEQ_IN_ORDER;
	check(ok, "seq: 0..99999, then 0..49 again (a restart): no frame after the restart is reordered");
	check(sbx_seq_track(&s, 53, &lost) == SBX_SEQ_GAP && lost == 3, "seq: after the restart a gap of 3 is seen");
	memset(&s, 0, sizeof(s));
	sbx_seq_track(&s, 10000, &lost);
	check(sbx_seq_track(&s, 10001 - SBX_SEQ_REORDER_MAX, &lost) == SBX_SEQ_REORDERED &&
		      sbx_seq_track(&s, 10000 - SBX_SEQ_REORDER_MAX, &lost) == SBX_SEQ_RESTARTED && s.next == 10001 - SBX_SEQ_REORDER_MAX,
	      "seq: SBX_SEQ_REORDER_MAX behind is late, one more is a restart");
	test_seq_cases();
	test_seq_window();
}

/* dedup_one(t, frame, len, ignore, now, st): a single-segment check */
static bool dedup_one(struct sbx_dedup_table *t, const uint8_t *f, uint32_t len, uint8_t ignore, uint64_t now,
		      struct sbx_dedup_stats *st)
{
	const uint8_t *seg[1] = {f};
	uint32_t seg_len[1] = {len};

	return sbx_dedup_check(t, seg, seg_len, 1, ignore, now, st);
}

/* An IPv4/UDP frame (behind @tags VLAN tags) with TTL @ttl, DSCP @dscp and a right header checksum. */
static uint32_t ip4_frame(uint8_t *b, int tags, uint8_t ttl, uint8_t dscp, uint16_t id, uint32_t payload)
{
	uint32_t p = 12, i, sum = 0;

	memcpy(b, MAC, 12);
	for (i = 0; i < (uint32_t)tags; i++, p += 4)
		memcpy(b + p, i ? "\x81\x00\x00\x0a" : "\x88\xa8\x00\x14", 4);
	memcpy(b + p, "\x08\x00", 2);
	p += 2;
	memcpy(b + p, IP4, 20);
	b[p + 1] = (uint8_t)(dscp << 2 | 1); /* ECN 1: not ignored */
	b[p + 4] = (uint8_t)(id >> 8);
	b[p + 5] = (uint8_t)id;
	b[p + 8] = ttl;
	b[p + 10] = b[p + 11] = 0;
	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)(b[p + i] << 8 | b[p + i + 1]);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = ~((sum & 0xffff) + (sum >> 16)) & 0xffff;
	b[p + 10] = (uint8_t)(sum >> 8);
	b[p + 11] = (uint8_t)sum;
	for (i = 0; i < payload; i++)
		b[p + 20 + i] = (uint8_t)(i * 7 + id);
	return p + 20 + payload;
}

static void test_dedup(void)
{
	const uint8_t all = SBX_DEDUP_IGNORE_TTL | SBX_DEDUP_IGNORE_IP_CHECKSUM | SBX_DEDUP_IGNORE_DSCP;
	struct sbx_dedup_stats st = {0};
	struct sbx_dedup_table *t;
	uint8_t a[2048], b[2048];
	uint32_t la, lb, i;
	void *mem;
	bool ok;

	check(sbx_dedup_mem_size(65536) == 64 + 65536 * 24 && sbx_dedup_mem_size(8) == 64 + 192 &&
		      sbx_dedup_mem_size(1048576) == 64 + 1048576ull * 24,
	      "dedup: memory 64 + 24 bytes an entry (65536 entries: %zu bytes)", sbx_dedup_mem_size(65536));
	check(sbx_dedup_mem_size(0) == 0 && sbx_dedup_mem_size(4) == 0 && sbx_dedup_mem_size(1000) == 0,
	      "dedup: no size for 0, 4 (< 8) or 1000 (not a power of two) entries");
	mem = aligned_alloc(64, sbx_dedup_mem_size(1024));
	check(sbx_dedup_init(mem, 1000, 10) == NULL && sbx_dedup_init(NULL, 1024, 10) == NULL,
	      "dedup: init refuses 1000 entries and no memory");
	t = sbx_dedup_init(mem, 1024, 100);
	check(t == mem, "dedup: init of 1024 entries, window 100");

	la = ip4_frame(a, 0, 64, 0, 1, 26);
	check(!dedup_one(t, a, la, 0, 1000, &st) && st.unique == 1, "dedup: first frame unique");
	check(dedup_one(t, a, la, 0, 1050, &st) && st.duplicates == 1, "dedup: the same frame 50 later: duplicate");
	check(dedup_one(t, a, la, 0, 1100, &st) && st.duplicates == 2, "dedup: 100 later (== window): duplicate");
	check(!dedup_one(t, a, la, 0, 1101, &st) && st.unique == 2,
	      "dedup: 101 after the kept copy (beyond the window): kept (the window runs from the kept copy)");
	check(dedup_one(t, a, la, 0, 1150, &st), "dedup: ... and that one restarts the window");
	memcpy(b, a, la);
	b[la - 1] ^= 1;
	check(!dedup_one(t, b, la, 0, 1150, &st), "dedup: one bit different in the payload: unique");
	check(!dedup_one(t, a, la - 1, 0, 1150, &st), "dedup: one byte shorter: unique");

	/* TTL: ignored only with "ttl"; checksum recomputed with it */
	t = sbx_dedup_init(mem, 1024, 100);
	st = (struct sbx_dedup_stats){0};
	la = ip4_frame(a, 0, 64, 10, 2, 100);
	lb = ip4_frame(b, 0, 63, 10, 2, 100);
	check(!dedup_one(t, a, la, 0, 0, &st) && !dedup_one(t, b, lb, 0, 1, &st),
	      "dedup: TTL 64 and TTL 63 (checksum recomputed) differ without ignore");
	t = sbx_dedup_init(mem, 1024, 100);
	check(!dedup_one(t, a, la, SBX_DEDUP_IGNORE_DSCP, 0, &st) && !dedup_one(t, b, lb, SBX_DEDUP_IGNORE_DSCP, 1, &st),
	      "dedup: ... and with dscp only (TTL still compared)");
	t = sbx_dedup_init(mem, 1024, 100);
	check(!dedup_one(t, a, la, SBX_DEDUP_IGNORE_TTL, 0, &st) && dedup_one(t, b, lb, SBX_DEDUP_IGNORE_TTL, 1, &st),
	      "dedup: with ttl the TTL-1 copy (checksum differs too) is a duplicate: the checksum goes with it");
	/* ip_checksum alone: a TTL difference still differs */
	t = sbx_dedup_init(mem, 1024, 100);
	check(!dedup_one(t, a, la, SBX_DEDUP_IGNORE_IP_CHECKSUM, 0, &st) &&
		      !dedup_one(t, b, lb, SBX_DEDUP_IGNORE_IP_CHECKSUM, 1, &st),
	      "dedup: ip_checksum alone does not hide a TTL difference");
	memcpy(b, a, la);
	b[14 + 10] ^= 0xff; /* a wrong checksum only */
	check(dedup_one(t, b, la, SBX_DEDUP_IGNORE_IP_CHECKSUM, 2, &st), "dedup: ip_checksum alone: a checksum difference is ignored");
	/* DSCP */
	t = sbx_dedup_init(mem, 1024, 100);
	lb = ip4_frame(b, 0, 64, 46, 2, 100);
	check(!dedup_one(t, a, la, SBX_DEDUP_IGNORE_TTL, 0, &st) && !dedup_one(t, b, lb, SBX_DEDUP_IGNORE_TTL, 1, &st),
	      "dedup: DSCP 10 and 46 differ without dscp");
	t = sbx_dedup_init(mem, 1024, 100);
	check(!dedup_one(t, a, la, SBX_DEDUP_IGNORE_DSCP, 0, &st) && dedup_one(t, b, lb, SBX_DEDUP_IGNORE_DSCP, 1, &st),
	      "dedup: with dscp, DSCP 10 and 46 are equal (checksum ignored with it)");
	b[15] ^= 0x03; /* ECN */
	check(!dedup_one(t, b, lb, SBX_DEDUP_IGNORE_DSCP, 2, &st), "dedup: ECN is never ignored");
	/* only the headers are masked: bytes at the same offsets of a later block count */
	t = sbx_dedup_init(mem, 1024, 100);
	la = ip4_frame(a, 0, 64, 0, 9, 600);
	memcpy(a + 256 + 12, "\x08\x00\x45", 3); /* an "EtherType" and "IPv4 header" there */
	memcpy(b, a, la);
	b[256 + 22] ^= 0x5a;
	b[256 + 24] ^= 0x5a;
	check(!dedup_one(t, a, la, all, 0, &st) && !dedup_one(t, b, la, all, 1, &st),
	      "dedup: payload bytes 256 on (where a second block's TTL/checksum would be) are compared");
	/* through two VLAN tags */
	t = sbx_dedup_init(mem, 1024, 100);
	la = ip4_frame(a, 2, 64, 0, 3, 40);
	lb = ip4_frame(b, 2, 60, 8, 3, 40);
	check(!dedup_one(t, a, la, all, 0, &st) && dedup_one(t, b, lb, all, 1, &st),
	      "dedup: TTL, DSCP and checksum masked behind two tags (QinQ)");
	t = sbx_dedup_init(mem, 1024, 100);
	check(!dedup_one(t, a, la, 0, 0, &st) && !dedup_one(t, b, lb, 0, 1, &st), "dedup: ... and compared without ignore");
	/* IPv6 hop limit and traffic class */
	{
		struct frame x, y;

		memset(&x, 0, sizeof(x));
		PUT(&x, MAC "\x81\x00\x00\x01\x86\xdd" IP6 UDP);
		y = x;
		y.b[18 + 7] = 10;                       /* hop limit 64 -> 10 */
		y.b[18] = 0x6b;                         /* traffic class 0xb? : DSCP bits */
		y.b[19] = (uint8_t)(0xc0 | (y.b[19] & 0x0f)); /* low DSCP bits, ECN 0 */
		t = sbx_dedup_init(mem, 1024, 100);
		check(!dedup_one(t, x.b, x.len, all, 0, &st) && dedup_one(t, y.b, y.len, all, 1, &st),
		      "dedup: IPv6 hop limit and DSCP ignored behind a tag");
		check(!dedup_one(t, y.b, y.len, SBX_DEDUP_IGNORE_TTL, 2, &st) &&
			      !dedup_one(t, x.b, x.len, SBX_DEDUP_IGNORE_DSCP, 3, &st),
		      "dedup: IPv6 with one of them only: differ");
		y = x;
		y.b[19] |= 0x01; /* flow label: never ignored */
		check(!dedup_one(t, y.b, y.len, all, 4, &st), "dedup: IPv6 flow label is never ignored");
	}
	/* different frames never equal: 20000 frames differing by id and payload, none a duplicate */
	t = sbx_dedup_init(mem, 1024, 1000000);
	st = (struct sbx_dedup_stats){0};
	ok = true;
	for (i = 0; i < 20000; i++) {
		la = ip4_frame(a, (int)(i % 3), (uint8_t)(i % 200 + 1), 0, (uint16_t)i, 14 + i % 900);
		ok &= !dedup_one(t, a, la, all, i, &st);
	}
	check(ok && st.duplicates == 0 && st.unique == 20000,
	      "dedup: 20000 different frames in a 1024-entry table: none a duplicate (evictions %llu)",
	      (unsigned long long)st.evictions);
	check(st.evictions == 20000 - 1024, "dedup: a full table evicts one live entry per new frame: %llu evictions",
	      (unsigned long long)st.evictions);
	/* multi-segment equals single segment, for every split of a 1400-byte frame in 2 and 3 */
	{
		const uint8_t *seg[3];
		uint32_t seg_len[3], s1, s2;
		uint8_t c1[2048], c2[2048], c3[2048];

		la = ip4_frame(a, 1, 64, 0, 77, 1400 - 36);
		ok = true;
		for (s1 = 0; s1 <= la && ok; s1 += 7) {
			t = sbx_dedup_init(mem, 1024, 100);
			dedup_one(t, a, la, all, 0, &st);
			memcpy(c1, a, s1);
			memcpy(c2, a + s1, la - s1);
			seg[0] = c1;
			seg[1] = c2;
			seg_len[0] = s1;
			seg_len[1] = la - s1;
			ok &= sbx_dedup_check(t, seg, seg_len, 2, all, 1, &st);
			s2 = s1 + (la - s1) / 3;
			memcpy(c3, a + s2, la - s2);
			seg[2] = c3;
			seg_len[1] = s2 - s1;
			seg_len[2] = la - s2;
			ok &= sbx_dedup_check(t, seg, seg_len, 3, all, 2, &st);
		}
		check(ok, "dedup: a %u-byte frame in 2 and 3 segments (every 7th split) equals it in one", la);
		/* the masked fields in the second segment (a split inside the IP header) */
		lb = ip4_frame(b, 1, 30, 5, 77, 1400 - 36);
		t = sbx_dedup_init(mem, 1024, 100);
		dedup_one(t, a, la, all, 0, &st);
		seg[0] = b;
		seg_len[0] = 20;
		seg[1] = b + 20;
		seg_len[1] = lb - 20;
		check(sbx_dedup_check(t, seg, seg_len, 2, all, 1, &st),
		      "dedup: TTL/DSCP/checksum ignored when the IP header is split across segments");
		seg_len[0] = 0;
		seg[1] = a;
		seg_len[1] = la;
		check(sbx_dedup_check(t, seg, seg_len, 2, all, 1, &st), "dedup: an empty first segment");
	}
	/* eviction in an 8-entry table (one bucket): the oldest live entry goes, counted */
	t = sbx_dedup_init(mem, 8, 100);
	st = (struct sbx_dedup_stats){0};
	for (i = 0; i < 8; i++) {
		la = ip4_frame(a, 0, 64, 0, (uint16_t)(1000 + i), 30);
		dedup_one(t, a, la, 0, 10 + i, &st);
	}
	check(st.unique == 8 && st.evictions == 0, "dedup: 8 frames fill an 8-entry table, no eviction");
	la = ip4_frame(a, 0, 64, 0, 2000, 30);
	check(!dedup_one(t, a, la, 0, 20, &st) && st.evictions == 1, "dedup: a 9th live frame evicts one (counted)");
	la = ip4_frame(a, 0, 64, 0, 1000, 30);
	check(!dedup_one(t, a, la, 0, 21, &st) && st.evictions == 2,
	      "dedup: the evicted one was the oldest (frame 0): its copy passes (a miss, never a false drop)");
	la = ip4_frame(a, 0, 64, 0, 1007, 30);
	check(dedup_one(t, a, la, 0, 22, &st), "dedup: the youngest (frame 7) is still there: a duplicate");
	la = ip4_frame(a, 0, 64, 0, 3000, 30);
	check(!dedup_one(t, a, la, 0, 200, &st) && st.evictions == 2,
	      "dedup: once the window is past, a new frame takes an expired entry: no eviction");
	/* len 0 */
	check(!sbx_dedup_check(t, NULL, NULL, 0, 0, 300, &st), "dedup: a frame of no bytes is never a duplicate");
	free(mem);
}

/* The tunnel sender table (sbx_senders_*): a bounded table in caller memory, senders found again,
 * a full table refuses, idle senders and a port's senders leave it, a restart keeps the slots. */
static void test_senders(void)
{
	static struct sbx_tunnel_source src[SBX_MAX_TUNNEL_SOURCES];
	static struct sbx_sender_table t, t2;
	uint64_t expired[SBX_MAX_PORTS] = { 0 };
	bool drop[SBX_MAX_PORTS] = { false };
	uint8_t a[16] = { 192, 0, 2, 0 }, a6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	struct sbx_tunnel_source *e[8], *x;
	unsigned int i, used;
	int ok = 1;

	sbx_senders_init(&t, src, 8, SBX_MAX_TUNNEL_SOURCES);
	for (i = 0; i < 8; i++) {
		a[3] = (uint8_t)(i + 1);
		e[i] = sbx_senders_get(&t, (uint8_t)(i % 2), 2, 4, 100 + i, a);
		ok &= e[i] != NULL && e[i]->used && !(e[i]->gen & 1) && e[i]->port == i % 2 && e[i]->id == 100 + i;
		if (e[i])
			e[i]->last_seen_ns = 1000 + i; /* sender i last seen at 1000 + i */
	}
	check(ok && t.nb_used == 8, "senders: a table of 8 takes 8 senders (ports 0 and 1)");
	a[3] = 9;
	check(sbx_senders_get(&t, 0, 2, 4, 108, a) == NULL, "senders: the 9th finds the table full (untracked)");
	for (i = 0, ok = 1; i < 8; i++) {
		a[3] = (uint8_t)(i + 1);
		ok &= sbx_senders_get(&t, (uint8_t)(i % 2), 2, 4, 100 + i, a) == e[i];
	}
	check(ok, "senders: each of the 8 finds its own slot again");
	a[3] = 1;
	check(sbx_senders_get(&t, 0, 2, 4, 101, a) == NULL && sbx_senders_get(&t, 1, 2, 4, 100, a) == NULL &&
		      sbx_senders_get(&t, 0, 3, 4, 100, a) == NULL && sbx_senders_get(&t, 0, 2, 6, 100, a) == NULL,
	      "senders: another id, port, kind or family is another sender");
	/* idle: at 1000 + 3 + idle, senders 0..3 are idle for >= idle, 4..7 not */
	check(sbx_senders_expire(&t, 1003 + 50, 50, NULL, expired) == 4 && t.nb_used == 4 && expired[0] == 2 &&
		      expired[1] == 2,
	      "senders: the 4 idle for 50 ns or longer leave (2 of port 0, 2 of port 1)");
	for (i = 0, ok = 1; i < 8; i++) {
		a[3] = (uint8_t)(i + 1);
		ok &= i < 4 ? !e[i]->used : sbx_senders_get(&t, (uint8_t)(i % 2), 2, 4, 100 + i, a) == e[i];
	}
	check(ok, "senders: the others keep their slots and are found again");
	for (i = 0, ok = 1; i < 4; i++) {
		a[3] = (uint8_t)(20 + i);
		x = sbx_senders_get(&t, 2, 5, 4, i, a);
		ok &= x != NULL && x->packets == 0 && x->seq.lost == 0 && x->port == 2;
		if (x)
			x->last_seen_ns = 5000;
	}
	a6[15] = 1;
	check(ok && t.nb_used == 8 && sbx_senders_get(&t, 2, 5, 6, 0, a6) == NULL,
	      "senders: 4 new senders take the freed slots, zeroed; then the table is full again");
	/* a port's senders dropped (its rules changed), whatever their age */
	drop[1] = true;
	memset(expired, 0, sizeof(expired));
	check(sbx_senders_expire(&t, 0, UINT64_MAX, drop, expired) == 2 && t.nb_used == 6 && expired[1] == 0,
	      "senders: the rules of port 1 changed: its 2 senders leave (not counted as expired)");
	x = sbx_senders_get(&t, 2, 5, 6, 0, a6);
	check(x != NULL && x->af == 6 && !memcmp(x->src, a6, 16), "senders: an IPv6 sender takes a freed slot");
	/* a worker restarted into its slots finds the senders again */
	for (i = 0, used = 0; i < SBX_MAX_TUNNEL_SOURCES; i++)
		used += src[i].used;
	sbx_senders_init(&t2, src, 8, SBX_MAX_TUNNEL_SOURCES);
	a[3] = 20;
	check(t2.nb_used == used && used == 7 && sbx_senders_get(&t2, 2, 5, 4, 0, a) != NULL && t2.nb_used == 7 &&
		      sbx_senders_get(&t2, 2, 5, 6, 0, a6) == x,
	      "senders: a new table on the same slots (a restarted worker) has the 7 senders (%u)", t2.nb_used);
	/* a slot left half written (gen odd) is freed at init; a smaller table frees the slots beyond it */
	x->gen |= 1;
	sbx_senders_init(&t2, src, 4, SBX_MAX_TUNNEL_SOURCES);
	for (i = 0, used = 0; i < SBX_MAX_TUNNEL_SOURCES; i++)
		used += src[i].used;
	check(t2.nb_used == used && used <= 4 && !x->used && !(x->gen & 1),
	      "senders: a half-written slot and the slots beyond the table's size are freed (%u left)", used);
	/* a full table of the most slots: every sender found again, lookups stay bounded */
	memset(src, 0, sizeof(src));
	sbx_senders_init(&t, src, SBX_MAX_TUNNEL_SOURCES, SBX_MAX_TUNNEL_SOURCES);
	for (i = 0, ok = 1; i < SBX_MAX_TUNNEL_SOURCES; i++) {
		a[2] = (uint8_t)(i >> 8);
		a[3] = (uint8_t)i;
		ok &= sbx_senders_get(&t, 0, 2, 4, 7, a) != NULL;
	}
	for (i = 0; i < SBX_MAX_TUNNEL_SOURCES; i++) {
		a[2] = (uint8_t)(i >> 8);
		a[3] = (uint8_t)i;
		x = sbx_senders_get(&t, 0, 2, 4, 7, a);
		ok &= x != NULL && x->src[2] == a[2] && x->src[3] == a[3];
	}
	a[1] = 1;
	check(ok && t.nb_used == SBX_MAX_TUNNEL_SOURCES && sbx_senders_get(&t, 0, 2, 4, 7, a) == NULL,
	      "senders: %u senders in a table of %u, each found again; one more is untracked", SBX_MAX_TUNNEL_SOURCES,
	      SBX_MAX_TUNNEL_SOURCES);
}

/* VN-Tag (0x8926) and E-Tag (0x893F): alone, before and after VLAN tags, kept when not named, cut
 * short (issue #26). */
static void test_fabric_tags(void)
{
	struct frame in, out;
	struct sbx_strip_result r;
	const uint8_t all = SBX_STRIP_VNTAG | SBX_STRIP_ETAG;

	memset(&in, 0, sizeof(in));
	memset(&out, 0, sizeof(out));
	PUT(&in, MAC "\x89\x26\x80\x01\x00\x02\x08\x00" IP4);
	PUT(&out, MAC "\x08\x00" IP4);
	check(strip_is(&in, SBX_STRIP_VNTAG, &out, &r) && r.vntags == 1 && r.etags == 0 && r.vlan_tags == 0,
	      "strip vntag: the 6-byte VN-Tag removed, IPv4 follows");
	check(strip_is(&in, SBX_STRIP_ETAG | SBX_STRIP_VLAN, &in, &r) && r.vntags == 0,
	      "strip etag and vlan: a VN-Tag stays (frame unchanged)");
	memset(&in, 0, sizeof(in));
	memset(&out, 0, sizeof(out));
	PUT(&in, MAC "\x89\x3f\x00\x00\x10\x05\x00\x00\x81\x00\x00\x64\x86\xdd" IP6 UDP);
	PUT(&out, MAC "\x81\x00\x00\x64\x86\xdd" IP6 UDP);
	check(strip_is(&in, SBX_STRIP_ETAG, &out, &r) && r.etags == 1 && r.vlan_tags == 0,
	      "strip etag: the 8-byte E-Tag before a VLAN tag removed, the VLAN tag stays in place");
	memset(&out, 0, sizeof(out));
	PUT(&out, MAC "\x86\xdd" IP6 UDP);
	check(strip_is(&in, SBX_STRIP_ETAG | SBX_STRIP_VLAN, &out, &r) && r.etags == 1 && r.vlan_tags == 1,
	      "strip etag and vlan: both removed");
	memset(&in, 0, sizeof(in));
	memset(&out, 0, sizeof(out));
	PUT(&in, MAC "\x81\x00\x00\x64\x89\x26\x00\x01\x00\x02\x89\x3f\x00\x00\x10\x05\x00\x00\x08\x00" IP4);
	PUT(&out, MAC "\x81\x00\x00\x64\x08\x00" IP4);
	check(strip_is(&in, all, &out, &r) && r.vntags == 1 && r.etags == 1 && r.vlan_tags == 0,
	      "strip vntag and etag: a VLAN tag before them stays, both fabric tags go");
	memset(&in, 0, sizeof(in));
	PUT(&in, MAC "\x89\x26\x80\x01");
	check(strip_is(&in, all, &in, &r) && r.vntags == 0, "strip vntag: a VN-Tag cut short stays (nothing read past the end)");
}

int main(void)
{
	test_strip();
	test_fabric_tags();
	test_tag_push();
	test_seq();
	test_dedup();
	test_senders();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
