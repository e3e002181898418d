/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Field layout parity of our GRE/ERSPAN and outer IP encoder (shared/erspan.c) with reference
 * captures, as decoded by tshark.
 *
 *   python3 tests/lib/erspan_ref.py REF.pcap... | build/tests/erspan_parity
 *
 * (run by tests/e2e/50_erspan_parity.sh; the binary is not called test_* because it needs its
 * records on stdin). Records, one a line, grouped by file (see tests/lib/erspan_ref.py):
 *
 *   file NAME
 *   hdr NAME FRAME ver= gre_flags= seq= vlan= cos= en= t= sid= [index=] [ts= sgt= p= ft= hw= dir=
 *       gra= o= [port_id= ts_upper=]] tagged= inner=HEX expect=HEX
 *   outer NAME FRAME ipv= src= dst= ttl= dscp= ecn= [df= rb= id= cksum_ok= cksum=] gre_len= expect=HEX
 *   skip NAME FRAME hdr|outer|both REASON
 *   error NAME MESSAGE
 *   # comment
 *
 * For each hdr record: session fields come from tshark; VLAN, En and COS are derived by OUR
 * sbx_erspan_fields_from_frame() from the inner frame (untagged_vlan = tshark's VLAN only when
 * tshark saw no tag on the inner frame) and compared with tshark's values:
 *  - a VLAN or En/BSO disagreement is a failure, except En = 1 (ISL, the source port's trunk
 *    encapsulation, which no Ethernet frame carries) on an untagged type II frame: counted and
 *    reported, tshark's En then used;
 *  - a COS disagreement is counted and reported ("COS from another source") and tshark's COS is
 *    used for the byte comparison.
 * Then sbx_gre_erspan_write() must give the reference bytes from the GRE header start to the inner
 * frame start. For each outer record, sbx_outer_write() must give the reference IP header (the
 * checksum bytes only when tshark calls the reference checksum good; otherwise our checksum must be
 * the one tshark calculates for the reference header).
 *
 * Output: per file "ok"/"not ok" TAP lines for the GRE+ERSPAN bytes, the derived fields and the outer
 * header, "# ..." lines naming every disagreement (first differing byte and its field). Exit status 1
 * when any line is "not ok" or the input is unusable.
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spanbox/erspan.h"

#define MAX_HEX 512
#define MAX_DIAG 4 /* "# " lines per file and kind; more are counted */

struct file_stats {
	char name[256];
	int hdr_n, hdr_ok, hdr_skip;
	int derived_bad;      /* VLAN or En/BSO of ours != tshark's (not an accepted reference property) */
	int cos_other;        /* COS from another source than IP precedence */
	int en_isl;           /* En = 1 (ISL) on an untagged type II frame */
	int no_seq;           /* type III frames without GRE S bit */
	int outer_n, outer_ok, outer_skip, outer_badck;
	int diag_hdr, diag_derived, diag_outer;
	char skip_reasons[1024];
	char cos_frames[1024], en_frames[1024];
	bool cos_pair[8][8]; /* [ours][reference] COS pairs seen */
};

static struct file_stats fs;
static int n_tap, n_fail;

static void tap(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	n_tap++;
	if (!ok)
		n_fail++;
}

static void append(char *dst, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *dst, size_t size, const char *fmt, ...)
{
	size_t l = strlen(dst);
	va_list ap;

	if (l + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(dst + l, size - l, fmt, ap);
	va_end(ap);
}

/* Value of key in the record's tokens, or NULL. */
static const char *get(char **tok, int ntok, const char *key)
{
	size_t kl = strlen(key);

	for (int i = 0; i < ntok; i++)
		if (strncmp(tok[i], key, kl) == 0 && tok[i][kl] == '=')
			return tok[i] + kl + 1;
	return NULL;
}

static bool getu(char **tok, int ntok, const char *key, unsigned long *v, bool required)
{
	const char *s = get(tok, ntok, key);
	char *end;

	if (!s) {
		*v = 0;
		return !required;
	}
	*v = strtoul(s, &end, 0);
	return *s && !*end;
}

static int unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = strlen(s);

	if (n % 2 || n / 2 > max)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned int b;

		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = (uint8_t)b;
	}
	return (int)(n / 2);
}

static void hexs(char *dst, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(dst + 2 * i, "%02x", b[i]);
	dst[2 * n] = '\0';
}

/* Name of the GRE/ERSPAN field holding byte @p off of a header written for @p f. */
static const char *hdr_field(size_t off, const struct sbx_erspan_fields *f)
{
	size_t gre = f->seq_present ? 8 : 4;

	if (off < 2)
		return "GRE flags/version";
	if (off < 4)
		return "GRE protocol type";
	if (off < gre)
		return "GRE sequence number";
	off -= gre;
	if (off < 2)
		return "ERSPAN Ver/VLAN";
	if (off < 4)
		return f->version == 2 ? "ERSPAN COS/BSO/T/Session ID" : "ERSPAN COS/En/T/Session ID";
	if (f->version != 2)
		return off < 8 ? "ERSPAN II Reserved/Index" : "beyond the ERSPAN II header";
	if (off < 8)
		return "ERSPAN III Timestamp";
	if (off < 10)
		return "ERSPAN III SGT";
	if (off < 12)
		return "ERSPAN III P/FT/HwID/D/Gra/O";
	if (f->o && off < 16)
		return "platform subheader Platf ID/Port ID";
	if (f->o && off < 20)
		return "platform subheader upper timestamp";
	return "beyond the ERSPAN III header";
}

static const char *ip4_field(size_t off)
{
	static const char *const names[20] = {"Version/IHL", "DSCP/ECN", "Total Length", "Total Length",
		"Identification", "Identification", "Flags/Fragment", "Flags/Fragment", "TTL", "Protocol",
		"Header Checksum", "Header Checksum", "Source", "Source", "Source", "Source", "Destination",
		"Destination", "Destination", "Destination"};

	return off < 20 ? names[off] : "?";
}

static const char *ip6_field(size_t off)
{
	if (off < 4)
		return "Version/Traffic Class/Flow Label";
	if (off < 6)
		return "Payload Length";
	if (off == 6)
		return "Next Header";
	if (off == 7)
		return "Hop Limit";
	return off < 24 ? "Source" : "Destination";
}

static void file_end(void)
{
	const char *n = fs.name;

	if (!n[0])
		return;
	if (fs.skip_reasons[0])
		printf("# %s: skipped:%s\n", n, fs.skip_reasons);
	if (fs.no_seq)
		printf("# %s: %d type III frames carry no GRE sequence number (GRE flags 0x0000): compared with "
		       "seq_present=false; spanbox itself always sets the S bit and a sequence number\n", n,
		       fs.no_seq);
	if (fs.en_isl)
		printf("# %s: %d frames with En=1 (ISL-encapsulated at the source port; the mirrored frame is "
		       "untagged): our rule gives En=0 for an untagged frame; tshark's En used for the byte "
		       "comparison (frames%s)\n", n, fs.en_isl, fs.en_frames);
	if (fs.cos_other) {
		char pairs[256] = "";

		for (int a = 0; a < 8; a++)
			for (int b = 0; b < 8; b++)
				if (fs.cos_pair[a][b])
					append(pairs, sizeof(pairs), " %d/%d", a, b);
		printf("# %s: %d frames with COS from another source (not the inner IP precedence TOS>>5 our "
		       "encoder uses; ours/reference:%s); tshark's COS used for the byte comparison (frames%s)\n",
		       n, fs.cos_other, pairs, fs.cos_frames);
	}
	if (fs.hdr_n == 0) {
		printf("ok - %s: no frame to compare GRE+ERSPAN bytes with # SKIP %d frames skipped\n", n,
		       fs.hdr_skip);
		n_tap++;
	} else {
		tap(fs.hdr_ok == fs.hdr_n, "%s: %d/%d frames identical GRE+ERSPAN bytes (%d skipped)", n, fs.hdr_ok,
		    fs.hdr_n, fs.hdr_skip);
		tap(fs.derived_bad == 0, "%s: our VLAN and En (type III: BSO) derived from the inner frame agree with tshark in %d/%d "
		    "frames (COS from another source: %d, En=1 ISL: %d)", n, fs.hdr_n - fs.derived_bad, fs.hdr_n,
		    fs.cos_other, fs.en_isl);
	}
	if (fs.outer_n == 0) {
		printf("ok - %s: no outer IP header to compare # SKIP %d frames skipped\n", n, fs.outer_skip);
		n_tap++;
	} else
		tap(fs.outer_ok == fs.outer_n, "%s: %d/%d outer IP headers identical (%d skipped)%s", n, fs.outer_ok,
		    fs.outer_n, fs.outer_skip,
		    fs.outer_badck ? " (reference checksum bad per tshark in some frames: for those the checksum "
				     "bytes are compared with tshark's calculated checksum)" : " (checksum included)");
	if (fs.outer_badck)
		printf("# %s: %d frames whose reference IPv4 checksum tshark reports as bad (the capture was "
		       "rewritten): the other 18 bytes compared with the reference, our checksum with tshark's "
		       "calculated one\n", n, fs.outer_badck);
	memset(&fs, 0, sizeof(fs));
}

static void file_begin(const char *name)
{
	file_end();
	snprintf(fs.name, sizeof(fs.name), "%s", name);
}

/* Compare @p got with @p exp; on a difference print "# " lines and return false. */
static bool compare(const char *what, const char *frame, const uint8_t *exp, size_t exp_len, const uint8_t *got,
		    size_t got_len, const char *(*name)(size_t, const void *), const void *ctx, int *diag)
{
	char he[2 * MAX_HEX + 1], hg[2 * MAX_HEX + 1];
	size_t i, n = exp_len < got_len ? exp_len : got_len;

	for (i = 0; i < n && exp[i] == got[i]; i++)
		;
	if (i == n && exp_len == got_len)
		return true;
	if ((*diag)++ >= MAX_DIAG)
		return false;
	if (i < n) {
		size_t k = 0;

		for (size_t j = i; j < n; j++)
			k += exp[j] != got[j];
		printf("# %s frame %s: %s: first difference at byte %zu (%s): expected 0x%02x, got 0x%02x "
		       "(%zu of %zu bytes differ)\n", fs.name, frame, what, i, name(i, ctx), exp[i], got[i], k, exp_len);
	}
	else
		printf("# %s frame %s: %s: length: expected %zu bytes, got %zu\n", fs.name, frame, what, exp_len,
		       got_len);
	hexs(he, exp, exp_len);
	hexs(hg, got, got_len);
	printf("#   expected %s\n#   got      %s\n", he, hg);
	return false;
}

static const char *hdr_name(size_t off, const void *ctx) { return hdr_field(off, ctx); }
static const char *ip4_name(size_t off, const void *ctx) { (void)ctx; return ip4_field(off); }
static const char *ip6_name(size_t off, const void *ctx) { (void)ctx; return ip6_field(off); }

static int do_hdr(char **tok, int ntok, const char *frame)
{
	unsigned long ver, gflags, seq, vlan, cos, en, t, sid, idx, ts, sgt, p, ft, hw, dir, gra, o, pid, tsu, tagged;
	uint8_t inner[MAX_HEX], exp[MAX_HEX], got[SBX_ENCAP_MAX_LEN + 16];
	struct sbx_erspan_fields f;
	const char *inner_hex = get(tok, ntok, "inner"), *exp_hex = get(tok, ntok, "expect");
	int inner_len, exp_len;
	bool ok = true;
	size_t len;

	if (!getu(tok, ntok, "ver", &ver, true) || !getu(tok, ntok, "gre_flags", &gflags, true) ||
	    !getu(tok, ntok, "seq", &seq, true) || !getu(tok, ntok, "vlan", &vlan, true) ||
	    !getu(tok, ntok, "cos", &cos, true) || !getu(tok, ntok, "en", &en, true) ||
	    !getu(tok, ntok, "t", &t, true) || !getu(tok, ntok, "sid", &sid, true) ||
	    !getu(tok, ntok, "index", &idx, ver == 1) || !getu(tok, ntok, "ts", &ts, ver == 2) ||
	    !getu(tok, ntok, "sgt", &sgt, ver == 2) || !getu(tok, ntok, "p", &p, ver == 2) ||
	    !getu(tok, ntok, "ft", &ft, ver == 2) || !getu(tok, ntok, "hw", &hw, ver == 2) ||
	    !getu(tok, ntok, "dir", &dir, ver == 2) || !getu(tok, ntok, "gra", &gra, ver == 2) ||
	    !getu(tok, ntok, "o", &o, ver == 2) || !getu(tok, ntok, "port_id", &pid, o != 0) ||
	    !getu(tok, ntok, "ts_upper", &tsu, o != 0) || !getu(tok, ntok, "tagged", &tagged, true) || !inner_hex ||
	    !exp_hex || (inner_len = unhex(inner_hex, inner, sizeof(inner))) < 0 ||
	    (exp_len = unhex(exp_hex, exp, sizeof(exp))) < 0 || (ver != 1 && ver != 2))
		return -1;

	fs.hdr_n++;
	memset(&f, 0, sizeof(f));
	f.version = (uint8_t)ver; /* known before the frame is looked at, as in the worker */
	/* frame-derived fields: ours */
	sbx_erspan_fields_from_frame(&f, inner, (uint32_t)inner_len, tagged ? 0 : (uint16_t)vlan);
	if (f.vlan != vlan) {
		ok = false;
		fs.derived_bad++;
		if (fs.diag_derived++ < MAX_DIAG)
			printf("# %s frame %s: VLAN: ours %u, tshark %lu (inner frame %s)\n", fs.name, frame, f.vlan,
			       vlan, tagged ? "tagged" : "untagged");
	}
	if (f.en != en) {
		if (ver == 1 && en == 1 && !tagged && f.en == SBX_ERSPAN_EN_NOVLAN) {
			fs.en_isl++;
			append(fs.en_frames, sizeof(fs.en_frames), " %s", frame);
			f.en = (uint8_t)en;
		} else {
			ok = false;
			fs.derived_bad++;
			if (fs.diag_derived++ < MAX_DIAG)
				printf("# %s frame %s: %s: ours %u, tshark %lu (inner frame %s)%s\n", fs.name, frame,
				       ver == 2 ? "type III BSO (Bad/Short/Oversized)" : "type II En", f.en, en,
				       tagged ? "tagged" : "untagged",
				       ver == 2 && f.en == SBX_ERSPAN_EN_INFRAME
					       ? ": sbx_erspan_fields_from_frame() puts the type II En code 3 (VLAN "
						 "tag kept) into the type III BSO field, where 3 means \"bad frame (CRC "
						 "or alignment error)\"; draft-foschiano-erspan-03 4.2 has no En in type "
						 "III"
					       : "");
		}
	}
	if (f.cos != cos) {
		fs.cos_other++;
		append(fs.cos_frames, sizeof(fs.cos_frames), " %s", frame);
		fs.cos_pair[f.cos & 7][cos & 7] = true;
		f.cos = (uint8_t)cos;
	}
	/* session fields: tshark's */
	f.version = (uint8_t)ver;
	f.seq_present = (gflags & 0x1000) != 0;
	f.seq = (uint32_t)seq;
	f.truncated = t != 0;
	f.session_id = (uint16_t)sid;
	f.index = (uint32_t)idx;
	f.timestamp = (uint32_t)ts;
	f.sgt = (uint16_t)sgt;
	f.p = p != 0;
	f.ft = (uint8_t)ft;
	f.hw_id = (uint8_t)hw;
	f.dir = (uint8_t)dir;
	f.gra = (uint8_t)gra;
	f.o = o != 0;
	f.port_id = (uint16_t)pid;
	f.ts_upper = (uint32_t)tsu;
	if (ver == 2 && !f.seq_present)
		fs.no_seq++;

	memset(got, 0xa5, sizeof(got));
	len = sbx_gre_erspan_write(got, &f);
	if (!compare("GRE+ERSPAN", frame, exp, (size_t)exp_len, got, len, hdr_name, &f, &fs.diag_hdr))
		ok = false;
	if (ok)
		fs.hdr_ok++;
	return 0;
}

static int do_outer(char **tok, int ntok, const char *frame)
{
	unsigned long ipv, ttl, dscp, ecn, df, rb, id, gre_len, ck_ok, ck;
	const char *src = get(tok, ntok, "src"), *dst = get(tok, ntok, "dst"), *exp_hex = get(tok, ntok, "expect");
	static const uint8_t src_mac[6] = {0x02, 0, 0, 0, 0, 1};
	uint8_t exp[MAX_HEX], got[64];
	struct sbx_mirror_cfg s;
	int exp_len;
	size_t len;
	bool ok;

	if (!getu(tok, ntok, "ipv", &ipv, true) || !getu(tok, ntok, "ttl", &ttl, true) ||
	    !getu(tok, ntok, "dscp", &dscp, true) || !getu(tok, ntok, "ecn", &ecn, true) ||
	    !getu(tok, ntok, "gre_len", &gre_len, true) || !getu(tok, ntok, "df", &df, ipv == 4) ||
	    !getu(tok, ntok, "rb", &rb, ipv == 4) || !getu(tok, ntok, "id", &id, ipv == 4) ||
	    !getu(tok, ntok, "cksum_ok", &ck_ok, ipv == 4) || !getu(tok, ntok, "cksum", &ck, ipv == 4) || !src ||
	    !dst || !exp_hex || (exp_len = unhex(exp_hex, exp, sizeof(exp))) < 0 || (ipv != 4 && ipv != 6))
		return -1;
	memset(&s, 0, sizeof(s));
	s.ip_version = (uint8_t)ipv;
	if (inet_pton(ipv == 4 ? AF_INET : AF_INET6, src, s.src_ip) != 1 ||
	    inet_pton(ipv == 4 ? AF_INET : AF_INET6, dst, s.dst_ip) != 1)
		return -1;
	s.ttl = (uint8_t)ttl;
	s.dscp = (uint8_t)dscp;
	s.df = df != 0;
	/* ECN and the reserved flag bit are not session settings: spanbox writes 0. A reference that
	 * sets them shows up as a byte difference. */
	(void)ecn;
	(void)rb;
	fs.outer_n++;
	len = sbx_outer_write(got, &s, src_mac, (uint32_t)gre_len, (uint16_t)id) - 14;
	if (ipv == 6) {
		ok = compare("outer IPv6", frame, exp, (size_t)exp_len, got + 14, len, ip6_name, NULL, &fs.diag_outer);
	} else if (ck_ok) {
		ok = compare("outer IPv4", frame, exp, (size_t)exp_len, got + 14, len, ip4_name, NULL, &fs.diag_outer);
	} else {
		/* reference checksum bad: compare every other byte with the reference and our checksum
		 * with the one tshark calculates for the reference header */
		fs.outer_badck++;
		exp[10] = (uint8_t)(ck >> 8);
		exp[11] = (uint8_t)ck;
		ok = compare("outer IPv4 (checksum: tshark's calculated)", frame, exp, (size_t)exp_len, got + 14,
			     len, ip4_name, NULL, &fs.diag_outer);
	}
	if (ok)
		fs.outer_ok++;
	return 0;
}

int main(int argc, char **argv)
{
	char line[8192];
	int lineno = 0, bad_input = 0;

	(void)argv;
	if (argc > 1) {
		/* not meant to be run as tests/run.sh runs build/tests/test_* (repo root, no stdin) */
		fprintf(stderr, "usage: python3 tests/lib/erspan_ref.py REF.pcap... | %s\n", argv[0]);
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		char *tok[64], *save = NULL, *rest;
		int ntok = 0;

		lineno++;
		if (!strchr(line, '\n') && !feof(stdin)) {
			printf("not ok - input line %d longer than %zu bytes\n", lineno, sizeof(line) - 1);
			return 1;
		}
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#') {
			puts(line);
			continue;
		}
		if (!line[0])
			continue;
		for (char *t = strtok_r(line, " ", &save); t && ntok < 64; t = strtok_r(NULL, " ", &save))
			tok[ntok++] = t;
		if (strcmp(tok[0], "file") == 0 && ntok == 2) {
			file_begin(tok[1]);
		} else if (strcmp(tok[0], "error") == 0 && ntok >= 2) {
			rest = ntok > 2 ? tok[2] : "";
			for (int i = 3; i < ntok; i++)
				tok[i][-1] = ' '; /* undo strtok: the message keeps its spaces */
			tap(false, "%s: %s", tok[1], rest);
		} else if (strcmp(tok[0], "skip") == 0 && ntok >= 5 && strcmp(tok[1], fs.name) == 0) {
			bool h = strcmp(tok[3], "outer") != 0, o = strcmp(tok[3], "hdr") != 0;

			for (int i = 5; i < ntok; i++)
				tok[i][-1] = ' ';
			fs.hdr_skip += h;
			fs.outer_skip += o;
			append(fs.skip_reasons, sizeof(fs.skip_reasons), " frame %s (%s): %s;", tok[2],
			       h && o ? "header and outer" : h ? "header" : "outer", tok[4]);
		} else if ((strcmp(tok[0], "hdr") == 0 || strcmp(tok[0], "outer") == 0) && ntok > 3 &&
			   strcmp(tok[1], fs.name) == 0) {
			int r = tok[0][0] == 'h' ? do_hdr(tok + 3, ntok - 3, tok[2]) : do_outer(tok + 3, ntok - 3, tok[2]);

			if (r < 0) {
				printf("# input line %d: bad %s record for frame %s\n", lineno, tok[0], tok[2]);
				bad_input++;
			}
		} else {
			printf("# input line %d: not understood: %.80s\n", lineno, tok[0]);
			bad_input++;
		}
	}
	file_end();
	if (bad_input)
		tap(false, "%d input records not understood", bad_input);
	if (n_tap == 0)
		tap(false, "no records on stdin");
	return n_fail ? 1 : 0;
}
