/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sbx-decap-pcap IN OUT: run the ingress tunnel parser (sbx_decap_parse, shared/decap.c) on every
 * frame of the capture IN (pcap or pcapng, what libpcap reads) and write the inner Ethernet frame
 * of every SBX_DECAP_OK frame with ERSPAN III FT 0 (or another kind) to the pcap OUT (Ethernet,
 * microseconds, the original timestamps); print one TSV line per frame on stdout:
 *   index result kind id seq seq_present vlan cos truncated inner_off inner_len ft written
 * index counts from 1 (tshark's frame.number); result is sbx_decap_result_name(); kind is the enum
 * sbx_tunnel_kind number; id the ERSPAN session / VNI / GRE-TEB key; written 1 when the inner frame
 * went to OUT (FT 2 IP packets are not written: OUT is Ethernet). The parser sees the captured
 * bytes (caplen) as the frame, as ./spanbox replay's net_pcap port does. A raw-IP capture (DLT_RAW,
 * linktype 101/12/14) is given a synthetic 14-byte Ethernet header (EtherType from the IP version),
 * since the parser takes Ethernet frames; other link types are parsed as they are.
 * Exit 0, or 2 on a file error. Used by tests/e2e/18_decap_captures.sh.
 *
 * sbx-decap-pcap --bench ROUNDS IN: the parser's cost instead (bench/decap_micro.sh): every frame
 * of IN (at most 4,096, Ethernet) parsed ROUNDS times over; one TSV line: frames, the result of
 * the first frame, TSC cycles per frame of sbx_decap_parse_map() with the default UDP ports (the
 * quickest round: preemption on a shared machine only adds).
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <x86intrin.h>

#include "spanbox/decap.h"

#define MAX_FRAME 262144
#define BENCH_FRAMES 4096

/* --bench: see the file's comment. */
static int bench(unsigned long rounds, const char *path)
{
	static uint8_t frames[BENCH_FRAMES][2048];
	static uint32_t lens[BENCH_FRAMES];
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t best = UINT64_MAX, sink = 0;
	unsigned int n = 0, i;
	struct sbx_tunnel_info ti;
	enum sbx_decap_result first;
	pcap_t *in = pcap_open_offline(path, err);

	if (!in) {
		fprintf(stderr, "sbx-decap-pcap: %s: %s\n", path, err);
		return 2;
	}
	while (n < BENCH_FRAMES && pcap_next_ex(in, &h, &data) == 1) {
		lens[n] = h->caplen > sizeof(frames[0]) ? (uint32_t)sizeof(frames[0]) : h->caplen;
		memcpy(frames[n], data, lens[n]);
		n++;
	}
	pcap_close(in);
	if (n == 0) {
		fprintf(stderr, "sbx-decap-pcap: %s: no frame\n", path);
		return 2;
	}
	first = sbx_decap_parse_map(frames[0], lens[0], lens[0], NULL, &ti);
	while (rounds--) {
		uint64_t t = __rdtsc();

		for (i = 0; i < n; i++) {
			sink += (uint64_t)sbx_decap_parse_map(frames[i], lens[i], lens[i], NULL, &ti);
			sink += ti.inner_off;
		}
		t = __rdtsc() - t;
		best = t < best ? t : best;
	}
	printf("%u\t%s\t%.1f\n", n, sbx_decap_result_name(first), (double)best / n);
	return sink == 1 ? 3 : 0; /* (sink keeps the calls) */
}

int main(int argc, char **argv)
{
	char err[PCAP_ERRBUF_SIZE];
	static uint8_t buf[MAX_FRAME + 14];
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_dumper_t *out;
	pcap_t *in, *dead;
	unsigned long idx = 0;
	int dlt, rc;

	if (argc == 4 && strcmp(argv[1], "--bench") == 0)
		return bench(strtoul(argv[2], NULL, 10), argv[3]);
	if (argc != 3) {
		fprintf(stderr, "usage: sbx-decap-pcap IN.pcap OUT.pcap | --bench ROUNDS IN.pcap\n");
		return 2;
	}
	in = pcap_open_offline(argv[1], err);
	if (!in) {
		fprintf(stderr, "sbx-decap-pcap: %s: %s\n", argv[1], err);
		return 2;
	}
	dlt = pcap_datalink(in);
	dead = pcap_open_dead(DLT_EN10MB, MAX_FRAME);
	out = dead ? pcap_dump_open(dead, argv[2]) : NULL;
	if (!out) {
		fprintf(stderr, "sbx-decap-pcap: %s: %s\n", argv[2], dead ? pcap_geterr(dead) : "pcap_open_dead");
		return 2;
	}
	while ((rc = pcap_next_ex(in, &h, &data)) == 1) {
		struct sbx_tunnel_info ti;
		enum sbx_decap_result r;
		uint32_t len = h->caplen > MAX_FRAME ? MAX_FRAME : h->caplen;
		uint8_t *f;
		int written = 0;

		idx++;
		if (dlt == DLT_RAW || dlt == 101 || dlt == 14) {
			memset(buf, 0, 12);
			buf[12] = len > 0 && (data[0] >> 4) == 6 ? 0x86 : 0x08;
			buf[13] = len > 0 && (data[0] >> 4) == 6 ? 0xdd : 0x00;
			memcpy(buf + 14, data, len);
			len += 14;
		} else {
			memcpy(buf, data, len);
		}
		/* a heap copy of exactly len bytes: a sanitizer build sees any read past the frame */
		f = malloc(len ? len : 1);
		if (!f)
			return 2;
		memcpy(f, buf, len);
		r = sbx_decap_parse(f, len, len, &ti);
		if (r == SBX_DECAP_OK && ti.ft == 0) {
			struct pcap_pkthdr oh = *h;

			oh.caplen = oh.len = ti.inner_len;
			pcap_dump((u_char *)out, &oh, f + ti.inner_off);
			written = 1;
		}
		printf("%lu\t%s\t%u\t%u\t%u\t%d\t%u\t%u\t%d\t%u\t%u\t%u\t%d\n", idx, sbx_decap_result_name(r), ti.kind,
		       ti.id, ti.seq, ti.seq_present, ti.vlan, ti.cos, ti.truncated, ti.inner_off, ti.inner_len, ti.ft,
		       written);
		free(f);
	}
	if (rc == -1)
		fprintf(stderr, "sbx-decap-pcap: %s: %s (after %lu frames)\n", argv[1], pcap_geterr(in), idx);
	pcap_dump_close(out);
	pcap_close(dead);
	pcap_close(in);
	return 0;
}
