/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timestamps in (shared/ts_in.c, include/spanbox/ts_in.h): the Arista AVSP timestamp header and the
 * Metamako trailer on hand-built frames (the layouts of Wireshark's packet-avsp.c and
 * packet-metamako.c), every cut of a header, every malformed reason, the 48-bit seconds around our
 * clock, TAI to UTC, the clock offsets. Each parse reads a heap copy of exactly the bytes it is given
 * (the sanitizer build sees a read past them). No EAL. TAP output.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spanbox/ts_in.h"
#include "tap.h"

#define NS 1000000000ull
/* a plain frame: MACs, IPv4 EtherType, 20 bytes of "IP" */
static const uint8_t plain[] = { 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00, 0x45, 0, 0, 20, 1, 2, 3, 4,
				 64, 17, 0, 0, 192, 0, 2, 1, 198, 51, 100, 7 };
static const uint64_t now = 1764650000ull * NS + 123456789; /* 2025-12-02 */

static void be16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void be32(uint8_t *p, uint32_t v) { be16(p, v >> 16); be16(p + 2, v & 0xffff); }

/* plain with an AVSP header of @version: 64-bit (secs, ns) or 48-bit (secs & 0xffff, ns). @return length. */
static uint32_t avsp_frame(uint8_t *b, uint16_t subtype, uint16_t version, uint32_t secs, uint32_t ns)
{
	bool is48 = (version & 0xf0) == 0x20;
	uint32_t h = is48 ? 12 : 14;

	memcpy(b, plain, 12);
	be16(b + 12, 0xD28B);
	be16(b + 14, subtype);
	be16(b + 16, version);
	if (is48) {
		be16(b + 18, secs & 0xffff);
		be32(b + 20, ns);
	} else {
		be32(b + 18, secs);
		be32(b + 22, ns);
	}
	memcpy(b + 12 + h, plain + 12, sizeof(plain) - 12);
	return sizeof(plain) + h;
}

/* sbx_ts_in_avsp() on a heap copy of the first @avail bytes of @b. */
static enum sbx_ts_in_result avsp(const uint8_t *b, uint32_t avail, uint32_t tai, uint64_t t, struct sbx_ts_in_info *o)
{
	uint8_t *c = malloc(avail ? avail : 1);
	enum sbx_ts_in_result r;

	memcpy(c, b, avail);
	r = sbx_ts_in_avsp(c, avail, tai, t, o);
	free(c);
	return r;
}

static void test_avsp(void)
{
	static const uint16_t v64[] = { 0x0010, 0x0110, 0x0011, 0x0111 }, v48[] = { 0x0020, 0x0120, 0x0021, 0x0121 };
	static const struct {
		uint16_t subtype, version;
		uint32_t secs, ns;
		enum sbx_ts_in_result want;
		const char *what;
	} bad[] = {
		{ 0xCAFE, 0x0001, 1, 1, SBX_TS_IN_MALFORMED_subtype, "subtype 0xCAFE (TGen)" },
		{ 3, 0x0020, 1, 1, SBX_TS_IN_MALFORMED_subtype, "subtype 3 (GRE TAP)" },
		{ 1, 0x0030, 1, 1, SBX_TS_IN_MALFORMED_version, "version 0x0030" },
		{ 1, 0x0210, 1, 1, SBX_TS_IN_MALFORMED_version, "version 0x0210" },
		{ 1, 0x0110, 1764650001, 1000000000, SBX_TS_IN_MALFORMED_implausible, "nanoseconds 10^9" },
		{ 1, 0x0010, 36, 0, SBX_TS_IN_MALFORMED_implausible, "TAI 36 s (before the UTC epoch)" },
	};
	struct sbx_ts_in_info o;
	uint8_t b[128];
	uint32_t n, k, cut_ok;
	uint8_t *f;

	for (k = 0; k < 4; k++) {
		bool utc = v64[k] & 0x100;

		n = avsp_frame(b, 1, v64[k], 1764650001, 987654321);
		check(avsp(b, n, 37, now, &o) == SBX_TS_IN_OK && o.cut_front == 14 && o.version == v64[k] &&
		      o.ns == (utc ? 1764650001ull : 1764650001ull - 37) * NS + 987654321,
		      "AVSP 64-bit version 0x%04x: %s time, header of 14 bytes", v64[k], utc ? "UTC" : "TAI - 37 s");
		f = sbx_ts_in_cut_front(b, o.cut_front);
		check(n - o.cut_front == sizeof(plain) && !memcmp(f, plain, sizeof(plain)),
		      "AVSP 64-bit 0x%04x: removed, the frame is byte for byte the plain one", v64[k]);
	}
	for (k = 0; k < 4; k++) {
		bool utc = v48[k] & 0x100;
		uint64_t want = utc ? 1764650001ull : 1764650001ull - 37;

		/* the low 16 bits of a TAI header are of the TAI seconds (UTC + 37 s) */
		n = avsp_frame(b, 1, v48[k], 1764650001u & 0xffff, 5);
		check(avsp(b, n, 37, now, &o) == SBX_TS_IN_OK && o.cut_front == 12 && o.ns == want * NS + 5,
		      "AVSP 48-bit version 0x%04x: upper seconds from our clock (%s)", v48[k], utc ? "UTC" : "TAI");
		f = sbx_ts_in_cut_front(b, o.cut_front);
		check(n - o.cut_front == sizeof(plain) && !memcmp(f, plain, sizeof(plain)),
		      "AVSP 48-bit 0x%04x: removed, byte for byte", v48[k]);
	}
	/* 48-bit seconds across a wrap of the low 16 bits: our clock at ...fff0, the header at 0x0010: the
	 * next block; our clock at ...0010, the header at 0xfff0: the previous one */
	n = avsp_frame(b, 1, 0x0120, 0x0010, 0);
	check(avsp(b, n, 37, (0x69000000ull | 0xfff0) * NS, &o) == SBX_TS_IN_OK && o.ns == (0x69010000ull | 0x0010) * NS,
	      "AVSP 48-bit: seconds 0x0010 just after our ...fff0 are in the next 65536 s");
	n = avsp_frame(b, 1, 0x0120, 0xfff0, 0);
	check(avsp(b, n, 37, (0x69010000ull | 0x0010) * NS, &o) == SBX_TS_IN_OK && o.ns == (0x69000000ull | 0xfff0) * NS,
	      "AVSP 48-bit: seconds 0xfff0 just before our ...0010 are in the previous 65536 s");
	n = avsp_frame(b, 1, 0x0020, 0xffff, 0);
	check(avsp(b, n, 37, UINT64_MAX - 5, &o) == SBX_TS_IN_MALFORMED_implausible,
	      "AVSP 48-bit with our clock at 2^64 ns: implausible, no overflow (fuzz_ts_in found it)");
	/* not there */
	check(avsp(plain, sizeof(plain), 37, now, &o) == SBX_TS_IN_ABSENT, "no 0xD28B after the MACs: absent");
	check(avsp(plain, 13, 37, now, &o) == SBX_TS_IN_ABSENT, "a 13-byte frame: absent");
	/* every cut of a 64-bit and a 48-bit header: short, never OK, never a read past the bytes */
	n = avsp_frame(b, 1, 0x0110, 1764650001, 1);
	for (k = 14, cut_ok = 0; k < 28; k++)
		cut_ok += avsp(b, k, 37, now, &o) == SBX_TS_IN_MALFORMED_short;
	check(cut_ok == 14 && avsp(b, 28, 37, now, &o) == SBX_TS_IN_OK, "64-bit header cut at each of 14..27 bytes: short; 28: OK");
	n = avsp_frame(b, 1, 0x0120, 1, 1);
	for (k = 14, cut_ok = 0; k < 26; k++)
		cut_ok += avsp(b, k, 37, now, &o) == SBX_TS_IN_MALFORMED_short;
	check(cut_ok == 12 && avsp(b, 26, 37, now, &o) == SBX_TS_IN_OK, "48-bit header cut at each of 14..25 bytes: short; 26: OK");
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		n = avsp_frame(b, bad[k].subtype, bad[k].version, bad[k].secs, bad[k].ns);
		check(avsp(b, n, 37, now, &o) == bad[k].want, "%s: malformed %s", bad[k].what,
		      sbx_ts_in_malformed_name(bad[k].want));
	}
	check(sbx_ts_in_malformed_name(SBX_TS_IN_MALFORMED_version) && !strcmp(sbx_ts_in_malformed_name(SBX_TS_IN_MALFORMED_version), "version") &&
	      sbx_ts_in_malformed_name(SBX_TS_IN_OK) == NULL, "reason names");
}

/* plain + a Metamako trailer (+ @ext bytes of extensions before the seconds, flags | 0x02 then) + FCS. */
static uint32_t mm_frame(uint8_t *b, uint32_t secs, uint32_t ns, uint8_t flags, const uint8_t *ext, uint32_t ext_len,
			 bool fcs)
{
	uint32_t n = sizeof(plain);

	memcpy(b, plain, n);
	be32(b + n, 0xdeadbeef); /* original FCS */
	n += 4;
	if (ext_len)
		memcpy(b + n, ext, ext_len);
	n += ext_len;
	be32(b + n, secs);
	be32(b + n + 4, ns);
	b[n + 8] = flags;
	be16(b + n + 9, 0x1234); /* device */
	b[n + 11] = 7;           /* port */
	n += 12;
	if (fcs) {
		be32(b + n, 0x01020304);
		n += 4;
	}
	return n;
}

/* sbx_ts_in_metamako() on a heap copy of the last min(len, 256) bytes of @b. */
static enum sbx_ts_in_result mm(const uint8_t *b, uint32_t len, bool fcs, uint32_t window, struct sbx_ts_in_info *o)
{
	uint32_t t = len < SBX_METAMAKO_TAIL_MAX ? len : SBX_METAMAKO_TAIL_MAX;
	uint8_t *c = malloc(t ? t : 1);
	enum sbx_ts_in_result r;

	memcpy(c, b + len - t, t);
	r = sbx_ts_in_metamako(c, t, len, fcs, window, now, o);
	free(c);
	return r;
}

static void test_metamako(void)
{
	struct sbx_ts_in_info o;
	uint8_t b[600], ext[300];
	uint32_t n, k;

	n = mm_frame(b, 1764650002, 999999999, 0x01, NULL, 0, false);
	check(mm(b, n, false, SBX_TS_IN_WINDOW_DEFAULT, &o) == SBX_TS_IN_OK && o.cut_back == 16 &&
	      o.ns == 1764650002ull * NS + 999999999 && o.device == 0x1234 && o.src_port == 7 && o.flags == 1 &&
	      n - o.cut_back == sizeof(plain) && !memcmp(b, plain, sizeof(plain)),
	      "trailer of 16 bytes: time, device 0x1234, port 7; what is left is the plain frame");
	n = mm_frame(b, 1764650002, 5, 0, NULL, 0, true);
	check(mm(b, n, true, SBX_TS_IN_WINDOW_DEFAULT, &o) == SBX_TS_IN_OK && o.cut_back == 20 &&
	      o.ns == 1764650002ull * NS + 5 && o.device == 0x1234, "with fcs: trailer + FCS, 20 bytes cut");
	check(mm(b, n, false, SBX_TS_IN_WINDOW_DEFAULT, &o) != SBX_TS_IN_OK,
	      "the same frame read without fcs: the FCS is no time (implausible), never a wrong cut");
	/* one TLV with one data word (tag 1, last): 8 bytes of extensions */
	be32(ext, 0x00abcdef);
	be32(ext + 4, 1u << 6 | 1u << 5 | 1);
	n = mm_frame(b, 1764650002, 6, 0x02, ext, 8, false);
	check(mm(b, n, false, SBX_TS_IN_WINDOW_DEFAULT, &o) == SBX_TS_IN_OK && o.cut_back == 24 &&
	      n - o.cut_back == sizeof(plain), "extensions: one TLV of 1 word walked, 24 bytes cut");
	/* two TLVs, the second (further back) a 0x1F tag of 3 words, last */
	be32(ext, 0x11111111);
	be32(ext + 4, 0x22222222);
	be32(ext + 8, 0x33333333);
	be32(ext + 12, 2u << 6 | 1u << 5 | 0x1f);
	be32(ext + 16, 0u << 6 | 0);
	n = mm_frame(b, 1764650002, 6, 0x02, ext, 20, false);
	check(mm(b, n, false, SBX_TS_IN_WINDOW_DEFAULT, &o) == SBX_TS_IN_OK && o.cut_back == 36,
	      "extensions: a TLV without data, then a 0x1F tag of 3 words: 36 bytes cut");
	/* a chain without a last TLV within the bytes looked at (70 empty TLVs): implausible */
	memset(ext, 0, 280);
	n = mm_frame(b, 1764650002, 6, 0x02, ext, 280, false);
	check(mm(b, n, false, SBX_TS_IN_WINDOW_DEFAULT, &o) == SBX_TS_IN_MALFORMED_implausible,
	      "extensions without a last TLV in the last 256 bytes: implausible");
	/* a long TLV that reaches past the 256 bytes looked at */
	be32(ext, 100u << 6 | 1u << 5 | 0x1f);
	n = mm_frame(b, 1764650002, 6, 0x02, ext, 4, false);
	check(mm(b, n, false, SBX_TS_IN_WINDOW_DEFAULT, &o) == SBX_TS_IN_MALFORMED_implausible,
	      "a TLV of 101 words past the frame: implausible");
	n = mm_frame(b, 1764650002, 1000000000, 0, NULL, 0, false);
	check(mm(b, n, false, SBX_TS_IN_WINDOW_DEFAULT, &o) == SBX_TS_IN_MALFORMED_implausible, "nanoseconds 10^9: implausible");
	n = mm_frame(b, 1764650000 + 2592001 + 1, 0, 0, NULL, 0, false);
	check(mm(b, n, false, SBX_TS_IN_WINDOW_DEFAULT, &o) == SBX_TS_IN_MALFORMED_implausible,
	      "seconds 30 days + 2 s ahead of our clock: implausible");
	n = mm_frame(b, 1764650000 - 2592000, 0, 0, NULL, 0, false);
	check(mm(b, n, false, SBX_TS_IN_WINDOW_DEFAULT, &o) == SBX_TS_IN_OK, "seconds 30 days behind: plausible");
	check(mm(b, n, false, 60, &o) == SBX_TS_IN_MALFORMED_implausible, "the same with a window of 60 s: implausible");
	n = mm_frame(b, 3000, 0, 0, NULL, 0, false);
	check(mm(b, n, false, UINT32_MAX, &o) == SBX_TS_IN_MALFORMED_implausible, "seconds 3000 (uptime): implausible");
	/* a frame too short for a trailer and an Ethernet header */
	n = mm_frame(b, 1764650002, 0, 0, NULL, 0, false);
	memmove(b + 13, b + n - 16, 16);
	check(mm(b, 29, false, SBX_TS_IN_WINDOW_DEFAULT, &o) == SBX_TS_IN_MALFORMED_short, "29 bytes with a trailer: short");
	check(mm(b, 30, false, SBX_TS_IN_WINDOW_DEFAULT, &o) != SBX_TS_IN_MALFORMED_short, "30 bytes: not short");
	for (k = 0; k < 16; k++)
		if (mm(b, k, false, SBX_TS_IN_WINDOW_DEFAULT, &o) != SBX_TS_IN_MALFORMED_short)
			break;
	check(k == 16, "frames of 0..15 bytes: short");
}

static void test_offsets(void)
{
	struct sbx_ts_in_offset a = { 0 }, b = { 0 };

	sbx_ts_in_offset_add(&a, 1000, 1500);
	sbx_ts_in_offset_add(&a, 3000, 2000);
	sbx_ts_in_offset_add(&a, 2900, 3000);
	check(a.frames == 3 && a.min_ns == -500 && a.max_ns == 1000 && a.last_ns == -100 && a.seen_ns == 3000,
	      "offsets: their time minus ours, last -100, min -500, max 1000");
	sbx_ts_in_offset_add(&b, 10000, 4000);
	sbx_ts_in_offset_merge(&a, &b);
	check(a.frames == 4 && a.min_ns == -500 && a.max_ns == 6000 && a.last_ns == 6000,
	      "merged with another worker's: the last is the one seen last");
}

int main(void)
{
	test_avsp();
	test_metamako();
	test_offsets();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
