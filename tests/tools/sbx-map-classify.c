/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sbx-map-classify: the map classifier (shared/maprules.c + shared/mapacl.c) on real rte_acl
 * contexts, outside the product (an EAL of its own: no hugepages, no shared config, no PCI, lcore
 * 118, file prefix sbxmapc<pid>).
 *
 *   sbx-map-classify [OPTS] RULES.json IN.pcap
 *       RULES.json: {"maps": [{"rules": [...]}, ...]} (docs/MAPS.md); one line per frame of IN.pcap:
 *       one word per map, "-" (no rule matched), "p<i>" or "d<i>" (rule i decided: pass / drop).
 *       Build figures and the shadowed rules go to stderr ("# ..." lines). A bad rule: its error
 *       ("maps[0].rules[3].dst_port: 70000 is not a port") on stderr, exit 2.
 *   sbx-map-classify --bench [OPTS] --rules N [--maps M] [--seed S] [--verify F]
 *       ClassBench-like random rules (prefixes of every length drawn from a few base networks so
 *       that they nest and overlap, IPv4 and 1 in 8 IPv6, protocols, exact ports and port ranges)
 *       spread over M maps (16), frames built to hit random rules; one TSV line: rules, maps,
 *       parse ms, shadow-check ms, build ms, context MiB, extract cycles/frame, classify
 *       cycles/frame (bursts of 32), and with --verify F the number of F frames whose results
 *       differ from the reference match (sbx_map_rule_match, first match per map), shadowed
 *       rules, context sets, contexts, and the cycles/frame the per-rule counters add
 *       (sbx_rule_ctrs_count of one worker's row after each burst's lookup, every map counted).
 *   sbx-map-classify --bench --rules N [--maps M] [--seed S] [--profile P] --write-rules FILE
 *                    --write-pcap FILE [--pcap-frames F]
 *       The same generated rules and frames written out instead of measured (no rte_acl build):
 *       FILE of --write-rules the maps JSON the product's config takes in its "maps" entries
 *       ({"maps": [{"rules": [...]}, ...]}, docs/MAPS.md); FILE of --write-pcap a pcap (Ethernet,
 *       microseconds) of F frames (default 65536): 7 in 8 built to hit a rule (the rules taken in
 *       a random order, each once before any twice: every rule is hit when 7/8 F >= N), the others
 *       random; IPv4 frames 60 bytes (64 on the wire), IPv6 ones 74 (their headers need more).
 *       One line on stdout: rules, frames, IPv4 frames. For bench/maps.sh.
 *   OPTS: --single (one context for both families), --max-size BYTES (rte_acl max_size),
 *         --bench-frames F (the bench's distinct frames, default 2048, a multiple of 32: with F of
 *         the order of the rules, e.g. 131072, the lookups walk every path of the tries and the
 *         frames no longer fit the caches, as in the product's bench/maps.sh; the rounds are then
 *         64 x 2048 / F, at least 4),
 *         --alg N (enum rte_acl_classify_alg: 1 scalar, 2 SSE, 3 AVX2, 6 AVX512X16, 7 AVX512X32),
 *         --dump (rte_acl_dump of every context to stdout), --eal ARG (one more EAL argument)
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <pcap/pcap.h>
#include <rte_cycles.h>
#include <rte_eal.h>

#include "spanbox/mapacl.h"
#include <rte_memory.h>

#include "spanbox/maprulectr.h"
#include "spanbox/maprules.h"

#define BURST 32

static struct sbx_mapacl_opts opts;
static int dump;
static const char *rules_file; /* --bench --rules-file: the maps of this file, not generated ones */

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Parse {"maps":[{"rules":[...]}...]}: 0, or -1 with the error on stderr. */
static int parse_maps(const cJSON *root, struct sbx_map_rules **maps, uint32_t *nb)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "maps"), *m;
	char err[256], path[48];
	uint32_t i = 0;

	if (!cJSON_IsArray(arr)) {
		fprintf(stderr, "maps: not an array\n");
		return -1;
	}
	*nb = (uint32_t)cJSON_GetArraySize(arr);
	*maps = calloc(*nb ? *nb : 1, sizeof(**maps));
	cJSON_ArrayForEach(m, arr) {
		snprintf(path, sizeof(path), "maps[%u].rules", i);
		if (sbx_map_rules_parse(cJSON_GetObjectItemCaseSensitive(m, "rules"), path, &(*maps)[i], err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return -1;
		}
		i++;
	}
	return 0;
}

static size_t report_shadows(const struct sbx_map_rules *maps, uint32_t nb)
{
	struct sbx_map_shadow sh[8];
	size_t total = 0, n, i;
	uint32_t m;

	for (m = 0; m < nb; m++) {
		n = sbx_map_rules_shadowed(&maps[m], sh, 8);
		for (i = 0; i < n && i < 8; i++)
			fprintf(stderr, "# shadowed: maps[%u].rules[%u] by rules[%u]\n", m, sh[i].rule, sh[i].by);
		total += n;
	}
	return total;
}

static void print_result(uint32_t r)
{
	if (!SBX_MAPACL_MATCHED(r))
		fputs("-", stdout);
	else
		printf("%c%u", SBX_MAPACL_ACTION(r) == SBX_MAP_DROP ? 'd' : 'p', SBX_MAPACL_RULE(r));
}

/* The JSON document of file @p path, or NULL (the reason on stderr). */
static cJSON *read_json(const char *path)
{
	FILE *f = fopen(path, "r");
	cJSON *root;
	char *text;
	long sz;

	if (f == NULL || fseek(f, 0, SEEK_END) || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		perror(path);
		if (f != NULL)
			fclose(f);
		return NULL;
	}
	text = malloc((size_t)sz + 1);
	text[fread(text, 1, (size_t)sz, f)] = '\0';
	fclose(f);
	root = cJSON_Parse(text);
	free(text);
	if (root == NULL)
		fprintf(stderr, "%s: not JSON\n", path);
	return root;
}

static int classify_pcap(const char *rules_path, const char *pcap_path)
{
	char ebuf[PCAP_ERRBUF_SIZE], err[256];
	struct sbx_map_key keys[BURST];
	struct sbx_mapacl_stats st;
	struct sbx_map_rules *maps;
	struct pcap_pkthdr *h;
	const u_char *data;
	struct sbx_mapacl *acl;
	uint32_t nb, n = 0, i, m, stride, *res;
	uint64_t frames = 0;
	cJSON *root;
	pcap_t *p;

	root = read_json(rules_path);
	if (root == NULL || parse_maps(root, &maps, &nb) != 0)
		return 2;
	cJSON_Delete(root);
	fprintf(stderr, "# shadowed rules: %zu\n", report_shadows(maps, nb));
	acl = sbx_mapacl_build(maps, nb, &opts, &st, err, sizeof(err));
	if (acl == NULL) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	fprintf(stderr, "# maps %u contexts %u acl_rules %u fields %u/%u build_ms %.1f memory_bytes %zu sets %u splits %u "
		"retries %u parts %u\n", nb, st.contexts, st.acl_rules, st.fields[0], st.fields[1], (double)st.build_ns / 1e6,
		st.memory, st.sets, st.splits, st.retries, st.parts);
	if (dump)
		sbx_mapacl_dump(acl);
	stride = sbx_mapacl_stride(acl);
	res = calloc((size_t)BURST * stride, sizeof(*res));
	p = pcap_open_offline(pcap_path, ebuf);
	if (p == NULL) {
		fprintf(stderr, "%s: %s\n", pcap_path, ebuf);
		return 2;
	}
	for (;;) {
		int rc = pcap_next_ex(p, &h, &data);

		if (rc == 1)
			sbx_map_key_extract(data, h->caplen, &keys[n++]);
		if ((rc != 1 && n > 0) || n == BURST) {
			sbx_mapacl_classify(acl, keys, n, res);
			for (i = 0; i < n; i++) {
				for (m = 0; m < nb; m++) {
					if (m)
						fputc(' ', stdout);
					print_result(res[i * stride + m]);
				}
				fputc('\n', stdout);
			}
			frames += n;
			n = 0;
		}
		if (rc != 1)
			break;
	}
	pcap_close(p);
	fprintf(stderr, "# frames %" PRIu64 "\n", frames);
	sbx_mapacl_free(acl);
	for (m = 0; m < nb; m++)
		sbx_map_rules_free(&maps[m]);
	free(maps);
	free(res);
	return 0;
}

/* ---------------------------------------------------------------- bench */

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint32_t rndn(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

/* A prefix length: every length, weighted like ClassBench seeds (most between /16 and /32). */
static uint32_t plen(uint32_t max)
{
	uint32_t r = rndn(100);

	return r < 2 ? 0 : r < 20 ? rndn(max / 2 + 1) : max / 2 + rndn(max / 2 + 1);
}

/* The base networks prefixes are cut from (so that rules nest and overlap). */
static const uint32_t base4[4] = { 0x0a000000, 0xac100000, 0xc0a80000, 0x64400000 };

static cJSON *gen_rule(void)
{
	cJSON *o = cJSON_CreateObject();
	char buf[80];
	uint32_t r, a, l, lo, hi, proto;
	int v6 = rndn(8) == 0;

	cJSON_AddStringToObject(o, "action", rndn(5) == 0 ? "drop" : "pass");
	for (int side = 0; side < 2; side++) {
		if (rndn(50) == 0 && !v6)
			continue; /* any */
		if (!v6) {
			l = plen(32);
			a = (base4[rndn(4)] | (uint32_t)(rnd() & 0xffff) << (rndn(2) ? 0 : 8)) & (l ? UINT32_MAX << (32 - l) : 0);
			snprintf(buf, sizeof(buf), "%u.%u.%u.%u/%u", a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255, l);
		} else {
			l = plen(128);
			uint8_t b[16] = {0x20, 0x01, 0x0d, 0xb8};

			for (int i = 4; i < 16; i++)
				b[i] = (uint8_t)rnd();
			for (int i = 0; i < 16; i++)
				b[i] &= (uint8_t)(l >= (uint32_t)(i + 1) * 8 ? 0xff : l <= (uint32_t)i * 8 ? 0 : 0xff << (8 - (l - i * 8)));
			snprintf(buf, sizeof(buf), "%x:%x:%x:%x:%x:%x:%x:%x/%u", b[0] << 8 | b[1], b[2] << 8 | b[3],
				 b[4] << 8 | b[5], b[6] << 8 | b[7], b[8] << 8 | b[9], b[10] << 8 | b[11],
				 b[12] << 8 | b[13], b[14] << 8 | b[15], l);
		}
		cJSON_AddStringToObject(o, side ? "dst" : "src", buf);
	}
	r = rndn(10);
	proto = r < 5 ? 6 : r < 8 ? 17 : 0;
	if (proto)
		cJSON_AddNumberToObject(o, "ip_proto", proto);
	if (proto && rndn(5) == 0) { /* source port range */
		lo = rndn(2) ? 1024 : rndn(65536);
		hi = lo + rndn(65536 - lo);
		snprintf(buf, sizeof(buf), "%u-%u", lo, hi);
		cJSON_AddStringToObject(o, "src_port", buf);
	}
	if (proto && rndn(5) != 0) {
		r = rndn(10);
		if (r < 5) {
			cJSON_AddNumberToObject(o, "dst_port", rndn(1024));
		} else {
			lo = r < 7 ? 0 : r < 9 ? 1024 : rndn(65536);
			hi = r < 7 ? 1023 : r < 9 ? 65535 : lo + rndn(65536 - lo);
			snprintf(buf, sizeof(buf), "%u-%u", lo, hi);
			cJSON_AddStringToObject(o, "dst_port", buf);
		}
	}
	return o;
}

/*
 * Profile "acl1": rules drawn from the distributions of ClassBench's acl1 seed (D. E. Taylor and
 * J. S. Turner, "ClassBench: A Packet Classification Benchmark", INFOCOM 2005; parameter file
 * parameter_files/acl1_seed of github.com/jafingerhut/classbench), as its db_generator produces
 * them: protocol TCP 87 %, any 8.5 %, ICMP 3 %, UDP 1 %; source port always any; destination
 * port exact 56 % (1521 a third of those), any 32 %, one of the seed's ranges 12 %; source
 * prefixes spread over the whole space, 69 % /32, 19 % /31, 8 % /21-/25, a few short ones;
 * destination prefixes inside a few /16 networks (one holds a quarter of the rules), 68 % /32,
 * 15 % /31, 10 % /21-/25, 3 % shorter. What an operator's IDS or firewall list looks like; the
 * default profile ("mixed") is harder: every field random, arbitrary port ranges on both sides.
 */
static uint32_t acl1_len(int dst)
{
	uint32_t r = rndn(1000);

	if (r < 690)
		return 32;
	if (r < 690 + (dst ? 155 : 190))
		return 31;
	if (r < (dst ? 871 : 913))
		return 29 + rndn(2); /* /29-/30 */
	if (r < (dst ? 971 : 997))
		return 21 + rndn(dst ? 8 : 5); /* /21-/25 (/28) */
	return dst && r < 986 ? 12 + rndn(6) : rndn(10);
}

/* A prefix of length @p l at address @p a, as "a.b.c.d/l", or NULL for /0 (any). */
static const char *v4_prefix(char *buf, size_t sz, uint32_t a, uint32_t l)
{
	if (l == 0)
		return NULL;
	a &= UINT32_MAX << (32 - l);
	snprintf(buf, sz, "%u.%u.%u.%u/%u", a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255, l);
	return buf;
}

static cJSON *gen_rule_acl1(uint32_t nb_rules)
{
	static const uint16_t em[] = { 1526, 1221, 1433, 1525, 135, 14753, 1712, 1711, 1704, 1708, 5555, 1705,
				       6000, 20, 21, 1724, 1717, 1707, 1733, 1706, 80, 443, 22, 23, 25, 53, 110, 8080 };
	static const uint16_t ar[][2] = { { 1600, 1649 }, { 1300, 1349 }, { 1300, 1350 }, { 7500, 7599 },
					  { 2200, 2210 }, { 1025, 65535 }, { 1700, 1750 }, { 5001, 65535 },
					  { 32200, 32207 }, { 8000, 8100 }, { 61700, 61709 }, { 61500, 61509 },
					  { 20000, 20010 }, { 1600, 1650 }, { 62200, 62219 }, { 1300, 1399 } };
	/* the destinations: one in 8 rules' worth of distinct prefixes in 132 /16 networks, a few of
	 * them named by thousands of rules (the servers of an ACL), drawn with a steep skew */
	static uint32_t *pool, pool_n;
	cJSON *o = cJSON_CreateObject();
	uint32_t r = rndn(1000), proto, k;
	const char *pfx;
	char buf[64];
	double u;

	if (pool == NULL) {
		uint32_t net[132];

		pool_n = nb_rules / 8 > 64 ? nb_rules / 8 : 64;
		pool = calloc(pool_n, 2 * sizeof(*pool));
		for (k = 0; k < 132; k++)
			net[k] = (uint32_t)(1 + rndn(223)) << 24 | rndn(256) << 16;
		for (k = 0; k < pool_n; k++) {
			uint32_t n = rndn(4) == 0 ? 0 : rndn(8) == 0 ? 1 + rndn(4) : 5 + rndn(127);

			pool[2 * k] = net[n] | (uint32_t)(rnd() & 0xffff);
			pool[2 * k + 1] = acl1_len(1);
		}
	}
	cJSON_AddStringToObject(o, "action", rndn(5) == 0 ? "drop" : "pass");
	if ((pfx = v4_prefix(buf, sizeof(buf), (uint32_t)rnd(), acl1_len(0))) != NULL)
		cJSON_AddStringToObject(o, "src", pfx);
	u = (double)rndn(1u << 30) / (double)(1u << 30);
	k = (uint32_t)((double)pool_n * u * u * u); /* index 0 is the most named */
	if ((pfx = v4_prefix(buf, sizeof(buf), pool[2 * k], pool[2 * k + 1])) != NULL)
		cJSON_AddStringToObject(o, "dst", pfx);
	proto = r < 873 ? 6 : r < 958 ? 0 : r < 989 ? 1 : 17;
	if (proto)
		cJSON_AddNumberToObject(o, "ip_proto", proto);
	if (proto == 6 || proto == 17) {
		r = rndn(100);
		if (r < 19)
			cJSON_AddNumberToObject(o, "dst_port", 1521);
		else if (r < 56)
			cJSON_AddNumberToObject(o, "dst_port", em[rndn(sizeof(em) / sizeof(em[0]))]);
		else if (r < 68) {
			k = rndn(sizeof(ar) / sizeof(ar[0]));
			snprintf(buf, sizeof(buf), "%u-%u", ar[k][0], ar[k][1]);
			cJSON_AddStringToObject(o, "dst_port", buf);
		}
	}
	return o;
}

static int profile_acl1; /* --profile acl1 */
static const char *write_rules, *write_pcap; /* --write-rules, --write-pcap */
static uint32_t pcap_frames = 65536;        /* --pcap-frames */
static uint32_t bench_frames = 2048;        /* --bench-frames: distinct frames the bench classifies */

/* A frame (bytes) inside rule @p r: addresses, protocol and ports drawn from its fields. */
static uint32_t gen_frame(uint8_t *f, const struct sbx_map_rule *r)
{
	uint32_t off = 14, l4, proto, sp, dp, w;
	int v6 = r->family == 6 || (r->family == 0 && rndn(8) == 0);

	memset(f, 0, 128);
	memcpy(f, "\x02\x00\x00\x00\x00\x0b\x02\x00\x00\x00\x00\x0a", 12);
	proto = r->f[SBX_MF_PROTO].mask_range ? r->f[SBX_MF_PROTO].value : rndn(2) ? 6 : 17;
	sp = r->f[SBX_MF_SPORT].value + rndn(r->f[SBX_MF_SPORT].mask_range - r->f[SBX_MF_SPORT].value + 1);
	dp = r->f[SBX_MF_DPORT].value + rndn(r->f[SBX_MF_DPORT].mask_range - r->f[SBX_MF_DPORT].value + 1);
	if (!v6) {
		f[12] = 0x08;
		f[14] = 0x45;
		f[16] = 0, f[17] = 46;
		f[22] = 64;
		f[23] = (uint8_t)proto;
		for (int s = 0; s < 2; s++) {
			const struct sbx_map_rule_field *x = &r->f[s ? SBX_MF_DST0 : SBX_MF_SRC0];
			uint32_t m = x->mask_range ? UINT32_MAX << (32 - x->mask_range) : 0;

			w = (x->value & m) | ((uint32_t)rnd() & ~m);
			f[26 + s * 4] = (uint8_t)(w >> 24), f[27 + s * 4] = (uint8_t)(w >> 16);
			f[28 + s * 4] = (uint8_t)(w >> 8), f[29 + s * 4] = (uint8_t)w;
		}
		l4 = off + 20;
	} else {
		f[12] = 0x86, f[13] = 0xdd;
		f[14] = 0x60;
		f[19] = 20;
		f[20] = (uint8_t)proto;
		f[21] = 64;
		for (int s = 0; s < 2; s++)
			for (int i = 0; i < 4; i++) {
				const struct sbx_map_rule_field *x = &r->f[(s ? SBX_MF_DST0 : SBX_MF_SRC0) + i];
				uint32_t m = x->mask_range ? UINT32_MAX << (32 - x->mask_range) : 0;

				w = (x->value & m) | ((uint32_t)rnd() & ~m);
				f[22 + s * 16 + i * 4] = (uint8_t)(w >> 24), f[23 + s * 16 + i * 4] = (uint8_t)(w >> 16);
				f[24 + s * 16 + i * 4] = (uint8_t)(w >> 8), f[25 + s * 16 + i * 4] = (uint8_t)w;
			}
		l4 = off + 40;
	}
	f[l4] = (uint8_t)(sp >> 8), f[l4 + 1] = (uint8_t)sp, f[l4 + 2] = (uint8_t)(dp >> 8), f[l4 + 3] = (uint8_t)dp;
	return l4 + 20;
}

/* --write-rules / --write-pcap: @p doc (the generated maps' JSON) to write_rules, pcap_frames frames
 * hitting the rules of @p maps to write_pcap (see the usage at the top). 0, or 1 with a message. */
static int write_set(const cJSON *doc, const struct sbx_map_rules *maps, uint32_t nb_maps)
{
	static const struct sbx_map_rule any = { .f[SBX_MF_SPORT] = { 0, 65535 }, .f[SBX_MF_DPORT] = { 0, 65535 } };
	uint32_t total = 0, next = 0, i, m, v4 = 0, (*order)[2];
	uint8_t f[128];
	FILE *out;

	if (write_rules != NULL) {
		char *text = cJSON_PrintUnformatted(doc);

		out = fopen(write_rules, "w");
		if (text == NULL || out == NULL || fputs(text, out) < 0 || fputc('\n', out) < 0 || fclose(out) != 0) {
			fprintf(stderr, "%s: cannot write\n", write_rules);
			free(text);
			return 1;
		}
		free(text);
	}
	if (write_pcap == NULL)
		return 0;
	for (m = 0; m < nb_maps; m++)
		total += (uint32_t)maps[m].n;
	order = calloc(total ? total : 1, sizeof(*order));
	for (m = 0, i = 0; m < nb_maps; m++)
		for (uint32_t j = 0; j < maps[m].n; j++, i++)
			order[i][0] = m, order[i][1] = j;
	for (i = total; i > 1; i--) { /* Fisher-Yates */
		uint32_t k = rndn(i), t0 = order[i - 1][0], t1 = order[i - 1][1];

		order[i - 1][0] = order[k][0], order[i - 1][1] = order[k][1];
		order[k][0] = t0, order[k][1] = t1;
	}
	out = fopen(write_pcap, "wb");
	if (out == NULL) {
		fprintf(stderr, "%s: cannot write\n", write_pcap);
		free(order);
		return 1;
	}
	{ /* classic pcap header: microseconds, snaplen 65535, Ethernet */
		const uint32_t h[6] = { 0xa1b2c3d4, 2 | 4u << 16, 0, 0, 65535, 1 };

		fwrite(h, sizeof(h), 1, out);
	}
	for (i = 0; i < pcap_frames; i++) {
		const struct sbx_map_rule *r = &any;
		uint32_t len, l4, rec[4];

		if (total && rndn(8) != 0) { /* 7 in 8 hit a rule, every rule once before any twice */
			r = &maps[order[next][0]].rule[order[next][1]];
			next = next + 1 == total ? 0 : next + 1;
		}
		len = gen_frame(f, r);
		l4 = len - 20;
		if (f[l4 - 20 + 3] == 46 && f[12] == 0x08) { /* IPv4 (total length 46): 64 B on the wire */
			len = 60;
			v4++;
		}
		if ((f[12] == 0x08 ? f[23] : f[20]) == 6)
			f[l4 + 12] = 0x50; /* a TCP header of 20 bytes (tcpdump reads the frames) */
		else if ((f[12] == 0x08 ? f[23] : f[20]) == 17)
			f[l4 + 5] = (uint8_t)(len - l4); /* the UDP length */
		rec[0] = i / 1000000, rec[1] = i % 1000000, rec[2] = rec[3] = len;
		fwrite(rec, sizeof(rec), 1, out);
		fwrite(f, len, 1, out);
	}
	free(order);
	if (fclose(out) != 0) {
		fprintf(stderr, "%s: cannot write\n", write_pcap);
		return 1;
	}
	printf("%u\t%u\t%u\n", total, pcap_frames, v4);
	return 0;
}

/* The per-frame set of maps as the maps stage made it before issue #27 "Scale" (a uint64_t of at
 * most 64 maps; main's maps_stage.c up to commit 59921f4), kept here only to time it beside
 * sbx_mapacl_frame_set: sets64_cyc against sets_cyc is what the 256-bit set adds. */
static inline uint64_t frame_set64(const uint32_t *r, uint32_t nc, const uint16_t *cols, uint64_t watch, uint64_t collect)
{
	uint64_t s = 0;

	for (uint32_t c = 0; c < nc; c++)
		if (SBX_MAPACL_MATCHED(r[c]) && SBX_MAPACL_ACTION(r[c]) == SBX_MAP_PASS)
			s |= 1ULL << cols[c];
	s &= watch;
	return s != 0 ? s : collect;
}

static int bench(uint32_t nb_rules, uint32_t nb_maps, uint32_t verify)
{
	const uint32_t FRAMES = bench_frames, ROUNDS = bench_frames <= 2048 ? 64 : (uint32_t)RTE_MAX(4u, 64u * 2048u / bench_frames);
	struct sbx_map_key bkeys[BURST];
	uint32_t bres[BURST * (SBX_MAX_MAPS + SBX_MAPACL_MAPS_PER_CTX)];
	struct sbx_map_rules *maps = calloc(nb_maps, sizeof(*maps));
	struct sbx_map_key *keys = calloc(FRAMES, sizeof(*keys));
	uint8_t (*frames)[128] = calloc(FRAMES, 128);
	uint32_t *lens = calloc(FRAMES, sizeof(*lens)), *res, stride, i, m, differ = 0;
	double parse_ms, shadow_ms;
	struct sbx_mapacl_stats st;
	struct sbx_mapacl *acl;
	struct timespec t0;
	uint64_t c0, c_extract, c_classify, c_count, c_sets, c_sets64, bsets64[BURST], any64;
	struct sbx_mapset watch = { { 0 } }, nocollect = { { 0 } }, bsets[BURST], any;
	uint16_t cols[SBX_MAX_MAPS];
	struct sbx_rule_ctrs *ctr;
	struct sbx_rule_ctr *col[SBX_MAX_MAPS] = { NULL };
	uint32_t nrules[SBX_MAX_MAPS] = { 0 };
	struct sbx_mapset colmask = { { 0 } };
	char err[256];
	size_t shadowed;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (rules_file != NULL) { /* a rule set made elsewhere (e.g. ClassBench's db_generator) */
		cJSON *root = read_json(rules_file);

		free(maps);
		if (root == NULL || parse_maps(root, &maps, &nb_maps))
			return 1;
		cJSON_Delete(root);
		for (nb_rules = 0, m = 0; m < nb_maps; m++)
			nb_rules += (uint32_t)maps[m].n;
	}
	cJSON *doc = cJSON_CreateObject(), *jmaps = cJSON_AddArrayToObject(doc, "maps");

	for (m = 0; rules_file == NULL && m < nb_maps; m++) {
		cJSON *a = cJSON_CreateArray();
		char path[32];

		for (i = m; i < nb_rules; i += nb_maps)
			cJSON_AddItemToArray(a, profile_acl1 ? gen_rule_acl1(nb_rules) : gen_rule());
		snprintf(path, sizeof(path), "maps[%u].rules", m);
		if (sbx_map_rules_parse(a, path, &maps[m], err, sizeof(err))) {
			fprintf(stderr, "generated rule refused: %s\n", err);
			return 1;
		}
		cJSON *mo = cJSON_CreateObject();

		cJSON_AddItemToArray(jmaps, mo);
		cJSON_AddItemToObject(mo, "rules", a); /* kept for --write-rules */
	}
	if (write_rules != NULL || write_pcap != NULL) {
		int rc = write_set(doc, maps, nb_maps);

		cJSON_Delete(doc);
		for (m = 0; m < nb_maps; m++)
			sbx_map_rules_free(&maps[m]);
		free(maps), free(keys), free(frames), free(lens);
		return rc;
	}
	cJSON_Delete(doc);
	parse_ms = ms_since(&t0); /* (includes making the JSON) */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	shadowed = 0;
	for (m = 0; m < nb_maps; m++)
		shadowed += sbx_map_rules_shadowed(&maps[m], NULL, 0);
	shadow_ms = ms_since(&t0);
	acl = sbx_mapacl_build(maps, nb_maps, &opts, &st, err, sizeof(err));
	if (acl == NULL) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (dump)
		sbx_mapacl_dump(acl);
	stride = sbx_mapacl_stride(acl);
	res = calloc((size_t)FRAMES * stride, sizeof(*res));
	for (i = 0; i < FRAMES; i++) {
		static const struct sbx_map_rule any = { .f[SBX_MF_SPORT] = { 0, 65535 }, .f[SBX_MF_DPORT] = { 0, 65535 } };
		const struct sbx_map_rule *r = &any;

		m = rndn(nb_maps);
		if (maps[m].n && rndn(8) != 0) /* 7 in 8 hit a rule, the others random */
			r = &maps[m].rule[rndn(maps[m].n)];
		lens[i] = gen_frame(frames[i], r);
	}
	/* the per-rule counters of one worker, every map counted (maprulectr.h), as the maps stage does */
	for (m = 0; m < nb_maps && m < SBX_MAX_MAPS; m++)
		nrules[m] = maps[m].n;
	ctr = sbx_rule_ctrs_alloc(nrules, nb_maps < SBX_MAX_MAPS ? nb_maps : SBX_MAX_MAPS, 1, SOCKET_ID_ANY);
	for (m = 0; ctr != NULL && m < nb_maps && m < SBX_MAX_MAPS; m++) {
		col[m] = sbx_rule_ctrs_map(ctr, 0, m);
		if (col[m] != NULL)
			sbx_mapset_set(&colmask, m);
	}
	/* per burst of 32, as a worker would: extraction into one burst of keys, then the same with
	 * the classification into one burst of results; classify = the difference; then the same with
	 * the per-rule counters: count = that minus classify and extract */
	for (m = 0; m < SBX_MAX_MAPS; m++) { /* category m is map m, every map watches */
		cols[m] = (uint16_t)m;
		sbx_mapset_set(&watch, m);
	}
	c_extract = c_classify = c_count = c_sets = c_sets64 = UINT64_MAX; /* the quickest round of each: preemption on a shared machine only adds */
	for (uint32_t k = 0; k < ROUNDS; k++) {
		c0 = rte_rdtsc_precise();
		for (i = 0; i < FRAMES; i += BURST)
			for (uint32_t j = 0; j < BURST; j++)
				sbx_map_key_extract(frames[i + j], lens[i + j], &bkeys[j]);
		c0 = rte_rdtsc_precise() - c0;
		c_extract = c0 < c_extract ? c0 : c_extract;
		c0 = rte_rdtsc_precise();
		for (i = 0; i < FRAMES; i += BURST) {
			for (uint32_t j = 0; j < BURST; j++)
				sbx_map_key_extract(frames[i + j], lens[i + j], &bkeys[j]);
			sbx_mapacl_classify(acl, bkeys, BURST, bres);
		}
		c0 = rte_rdtsc_precise() - c0;
		c_classify = c0 < c_classify ? c0 : c_classify;
		c0 = rte_rdtsc_precise();
		for (i = 0; i < FRAMES; i += BURST) {
			for (uint32_t j = 0; j < BURST; j++)
				sbx_map_key_extract(frames[i + j], lens[i + j], &bkeys[j]);
			sbx_mapacl_classify(acl, bkeys, BURST, bres);
			sbx_rule_ctrs_count(col, nb_maps < SBX_MAX_MAPS ? nb_maps : SBX_MAX_MAPS, &colmask, bres, stride,
					    &lens[i], BURST);
		}
		c0 = rte_rdtsc_precise() - c0;
		c_count = c0 < c_count ? c0 : c_count;
		/* each frame's set of maps and the burst's union, as the maps stage makes them */
		c0 = rte_rdtsc_precise();
		for (i = 0; i < FRAMES; i += BURST) {
			const uint32_t nc = nb_maps < SBX_MAX_MAPS ? nb_maps : SBX_MAX_MAPS;

			for (uint32_t j = 0; j < BURST; j++)
				sbx_map_key_extract(frames[i + j], lens[i + j], &bkeys[j]);
			sbx_mapacl_classify(acl, bkeys, BURST, bres);
			sbx_mapset_zero(&any);
			for (uint32_t j = 0; j < BURST; j++)
				if (sbx_mapacl_frame_set(&bres[j * stride], nc, cols, &watch, &nocollect, false, &bsets[j]))
					sbx_mapset_or(&any, &bsets[j]);
			__asm__ volatile("" : : "r"(&any), "r"(bsets) : "memory"); /* keep the sets */
		}
		c0 = rte_rdtsc_precise() - c0;
		c_sets = c0 < c_sets ? c0 : c_sets;
		/* the same with the set of 64 maps of before (up to 64 maps) */
		c0 = rte_rdtsc_precise();
		for (i = 0; nb_maps <= 64 && i < FRAMES; i += BURST) {
			for (uint32_t j = 0; j < BURST; j++)
				sbx_map_key_extract(frames[i + j], lens[i + j], &bkeys[j]);
			sbx_mapacl_classify(acl, bkeys, BURST, bres);
			any64 = 0;
			for (uint32_t j = 0; j < BURST; j++)
				any64 |= bsets64[j] = frame_set64(&bres[j * stride], nb_maps, cols, ~0ULL, 0);
			__asm__ volatile("" : : "r"(any64), "r"(bsets64) : "memory");
		}
		c0 = rte_rdtsc_precise() - c0;
		c_sets64 = c0 < c_sets64 ? c0 : c_sets64;
	}
	c_sets64 = nb_maps <= 64 && c_sets64 > c_classify ? c_sets64 - c_classify : 0;
	c_sets = c_sets > c_classify ? c_sets - c_classify : 0;
	c_count = c_count > c_classify ? c_count - c_classify : 0;
	c_classify = c_classify > c_extract ? c_classify - c_extract : 0;
	for (i = 0; i < FRAMES; i++)
		sbx_map_key_extract(frames[i], lens[i], &keys[i]);
	for (i = 0; i < FRAMES; i += BURST)
		sbx_mapacl_classify(acl, &keys[i], BURST, &res[(size_t)i * stride]);
	for (i = 0; i < verify && i < FRAMES; i++) /* (verify > FRAMES: FRAMES) */
		for (m = 0; m < nb_maps; m++) {
			uint32_t want = 0, j;

			for (j = 0; j < maps[m].n; j++)
				if (sbx_map_rule_match(&maps[m].rule[j], &keys[i])) {
					want = (j + 1) | (uint32_t)maps[m].rule[j].action << 31;
					break;
				}
			differ += want != res[(size_t)i * stride + m];
		}
	printf("%u\t%u\t%.0f\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%s%u\t%zu\t%u\t%u\t%.1f\t%.1f\t%.1f\n", nb_rules, nb_maps, parse_ms,
	       shadow_ms, (double)st.build_ns / 1e6, (double)st.memory / 1048576.0, (double)c_extract / FRAMES,
	       (double)c_classify / FRAMES, verify ? "" : "-", verify ? differ : 0, shadowed, st.sets, st.contexts,
	       ctr != NULL ? (double)c_count / FRAMES : -1.0, (double)c_sets / FRAMES,
	       nb_maps <= 64 ? (double)c_sets64 / FRAMES : -1.0);
	sbx_rule_ctrs_free(ctr);
	sbx_mapacl_free(acl);
	for (m = 0; m < nb_maps; m++)
		sbx_map_rules_free(&maps[m]);
	free(maps), free(keys), free(frames), free(lens), free(res);
	return differ ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "bench", no_argument, NULL, 'b' }, { "single", no_argument, NULL, 's' },
		{ "max-size", required_argument, NULL, 'x' }, { "dump", no_argument, NULL, 'd' },
		{ "rules", required_argument, NULL, 'r' }, { "maps", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 'S' }, { "verify", required_argument, NULL, 'v' },
		{ "eal", required_argument, NULL, 'e' }, { "alg", required_argument, NULL, 'a' },
		{ "rules-file", required_argument, NULL, 'F' }, { "profile", required_argument, NULL, 'P' },
		{ "write-rules", required_argument, NULL, 'W' }, { "write-pcap", required_argument, NULL, 'w' },
		{ "pcap-frames", required_argument, NULL, 'f' }, { "bench-frames", required_argument, NULL, 'B' },
		{ NULL, 0, NULL, 0 } };
	char prefix[64];
	char *eal[16] = { argv[0], "--no-huge", "--no-pci", "--no-shconf", "-m", "2048", "--lcores", "118@(0-1)",
			  prefix, "--no-telemetry", "--log-level=lib.eal:error" };
	int neal = 11, c, is_bench = 0;
	uint32_t rules = 0, nmaps = 16, verify = 0;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'b': is_bench = 1; break;
		case 's': opts.single = 1; break;
		case 'x': opts.max_size = strtoull(optarg, NULL, 0); break;
		case 'd': dump = 1; break;
		case 'r': rules = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'm': nmaps = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'S': rng_state = (strtoull(optarg, NULL, 0) + 1) * 0x9e3779b97f4a7c15ull; break; /* never 0 */
		case 'v': verify = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'e': if (neal < 15) eal[neal++] = optarg; break;
		case 'a': opts.alg = atoi(optarg); break;
		case 'F': rules_file = optarg; break;
		case 'W': write_rules = optarg; break;
		case 'w': write_pcap = optarg; break;
		case 'f': pcap_frames = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'B':
			bench_frames = (uint32_t)strtoul(optarg, NULL, 0);
			if (bench_frames < BURST || bench_frames % BURST || bench_frames > (1u << 20)) {
				fprintf(stderr, "--bench-frames: %s is not a multiple of %d from %d to 1048576\n", optarg,
					BURST, BURST);
				return 2;
			}
			break;
		case 'P':
			if (strcmp(optarg, "acl1") && strcmp(optarg, "mixed")) {
				fprintf(stderr, "--profile: %s is not a profile (acl1, mixed)\n", optarg);
				return 2;
			}
			profile_acl1 = !strcmp(optarg, "acl1");
			break;
		default: return 2;
		}
	}
	if ((!is_bench && argc - optind != 2) || (is_bench && (nmaps == 0 || nmaps > 256))) {
		fprintf(stderr, "usage: %s [--single] [--max-size B] RULES.json IN.pcap\n"
				"       %s --bench --rules N [--maps M] [--seed S] [--verify F] [--single] [--max-size B]\n",
			argv[0], argv[0]);
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=sbxmapc%d", (int)getpid());
	if (rte_eal_init(neal, eal) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 2;
	}
	c = is_bench ? bench(rules, nmaps, verify) : classify_pcap(argv[optind], argv[optind + 1]);
	rte_eal_cleanup();
	return c;
}
