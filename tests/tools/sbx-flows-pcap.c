/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sbx-flows-pcap: the flow table (shared/flowtable.c) and the IPFIX exporter (shared/ipfix.c) on
 * captures or on synthetic traffic, outside the appliance (docs/FLOWS.md).
 *
 *   sbx-flows-pcap [OPTIONS] CAPTURE...
 *     meters every frame of each capture (pcap or pcapng; Ethernet, or raw IP given an Ethernet
 *     header) with the pcap timestamps as time, capture i on ingress port index i; the expiry walk
 *     runs after every frame (budget 64); at the end of each capture its remaining flows are flushed
 *     (reason forced, or idle / active when due at the capture's last time). Records go to the
 *     collector (--collector) and/or one TSV line each to --records FILE:
 *       ipver src dst proto sport dport vlan inner_vlan port packets bytes first_ms last_ms tcp_flags reason
 *     and with --biflow (RFC 5103: both directions in one record, forward the first frame's) the
 *     reverse direction's packets, bytes and tcp_flags after the reason
 *   sbx-flows-pcap --bench-meter FLOWS [--frames N] : cycles per frame of metering 64-byte UDP
 *     frames over FLOWS active flows (uniformly random flow per frame, bursts of 32, one expiry
 *     walk of 8 slots per burst), the cost of building the frames measured apart and subtracted
 *   sbx-flows-pcap --bench-meter FLOWS --bench-lines L [--frames N] : the memory floor of a lookup
 *     in that table: per frame a random slot's signature line and L (0, 1, 2) lines of the flow it
 *     names, with the meter's prefetches, nothing else (bench/flows_micro.sh LINES=1)
 *   sbx-flows-pcap --bench-export RECORDS --collector ... [--rate R] : RECORDS synthetic IPv4 records
 *     to the collector as fast as the socket takes them (or paced at R records/s); prints records/s
 *
 * Options: --collector ADDR:PORT (IPv6: [ADDR]:PORT), --transport udp|tcp, --domain N,
 *   --active S, --idle S (seconds, fractions allowed; defaults 60 / 15), --capacity N (flows,
 *   default 65536), --records FILE, --template-period S, --retry-ms MS (TCP reconnect interval),
 *   --biflow (biflows, RFC 5103), --huge (EAL memory in hugepages, as a worker has it, instead of --no-huge: 4 KiB pages cost
 *   the metering bench TLB misses a worker does not have; needs the -m of free hugepages).
 * Prints key=value lines (flow table counters, exporter counters) on stdout. Exit 0, 2 on a usage,
 * file or setup error. EAL: no huge pages (memory of the process), no shared config, no PCI, lcore id 123, its own file prefix.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_prefetch.h>

#include "spanbox/flowtable.h"
#include "spanbox/ipfix.h"

#define MAX_FRAME 262144
#define BURST 32
#define EXPIRE_BUDGET 8 /* slots of the expiry walk per burst in the bench (a worker's choice) */

static struct sbx_ipfix *exp_;
static FILE *recs;
static uint64_t n_records;

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void addr_str(const struct sbx_flow_key *k, const uint8_t *a, char *out, size_t n)
{
	inet_ntop(k->ipver == 4 ? AF_INET : AF_INET6, a, out, (socklen_t)n);
}

static void on_record(void *arg, const struct sbx_flow_record *r)
{
	(void)arg;
	n_records++;
	if (exp_)
		sbx_ipfix_add(exp_, r, mono_ns());
	if (recs) {
		char s[64], d[64];

		addr_str(&r->key, r->key.src, s, sizeof(s));
		addr_str(&r->key, r->key.dst, d, sizeof(d));
		fprintf(recs, "%u\t%s\t%s\t%u\t%u\t%u\t%u\t%u\t%u\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64
			"\t%u\t%s%s", r->key.ipver, s, d, r->key.proto, r->key.sport, r->key.dport, r->key.vlan,
			r->key.inner_vlan, r->key.port, r->packets, r->bytes, (uint64_t)(r->first_ns / 1000000u),
			(uint64_t)(r->last_ns / 1000000u), r->tcp_flags, sbx_flow_end_reason_name(r->end_reason),
			r->biflow ? "\t" : "\n");
		if (r->biflow) /* the line goes on with the reverse direction's counts */
			fprintf(recs, "%" PRIu64 "\t%" PRIu64 "\t%u\n", r->rev_packets, r->rev_bytes, r->rev_tcp_flags);
	}
}

static int meter_capture(struct sbx_flowtable *ft, const char *path, uint16_t port)
{
	static uint8_t buf[MAX_FRAME + 14];
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t now = 0;
	pcap_t *in;
	int dlt, rc;

	in = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
	if (!in) {
		fprintf(stderr, "sbx-flows-pcap: %s: %s\n", path, err);
		return -1;
	}
	dlt = pcap_datalink(in);
	while ((rc = pcap_next_ex(in, &h, &data)) == 1) {
		uint32_t len = h->caplen > MAX_FRAME ? MAX_FRAME : h->caplen;
		const uint8_t *f = data;

		now = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec; /* nano precision */
		if (dlt == DLT_RAW || dlt == 101 || dlt == 14) {
			memset(buf, 0, 12);
			buf[12] = len && (data[0] >> 4) == 6 ? 0x86 : 0x08;
			buf[13] = len && (data[0] >> 4) == 6 ? 0xdd : 0x00;
			memcpy(buf + 14, data, len);
			f = buf;
			len += 14;
		} else if (dlt != DLT_EN10MB) {
			len = 0; /* not metered: counted as non-IP */
		}
		sbx_flowtable_meter(ft, &f, &len, 1, port, now);
		sbx_flowtable_expire(ft, now, 64);
		if (exp_)
			sbx_ipfix_poll(exp_, mono_ns());
	}
	pcap_close(in);
	sbx_flowtable_flush(ft, now, SBX_FLOW_END_FORCED);
	return 0;
}

/* 64-byte UDP/IPv4 frame of flow @p id (addresses and ports from the id). */
static void make_frame(uint8_t *f, uint32_t id)
{
	f[26] = 10, f[27] = (uint8_t)(id >> 24), f[28] = (uint8_t)(id >> 16), f[29] = (uint8_t)(id >> 8);
	f[34] = (uint8_t)id, f[35] = (uint8_t)(id >> 3);
}

static void frame_template(uint8_t *f)
{
	static const uint8_t hdr[42] = {
		0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 6, 0x08, 0x00,
		0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 192, 168, 0, 1,
		0, 1, 0x12, 0x34, 0, 26, 0, 0};

	memset(f, 0, 64);
	memcpy(f, hdr, sizeof(hdr));
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int bench_meter(struct sbx_flowtable *ft, uint32_t flows, uint64_t frames)
{
	static uint8_t fb[BURST][64];
	const uint8_t *fp[BURST];
	uint32_t lens[BURST];
	uint64_t seed = 88172645463325252ull, t0, t_base, t_meter, now = 1, i;
	struct sbx_flowtable_stats st;
	unsigned int j;

	for (j = 0; j < BURST; j++) {
		frame_template(fb[j]);
		fp[j] = fb[j];
		lens[j] = 64;
	}
	for (i = 0; i < flows; i += BURST) { /* create every flow */
		for (j = 0; j < BURST; j++)
			make_frame(fb[j], (uint32_t)((i + j) % flows));
		sbx_flowtable_meter(ft, fp, lens, BURST, 0, now);
	}
	/* the frames alone (building them), then with the metering and the expiry walk */
	t0 = rte_rdtsc_precise();
	for (i = 0; i < frames; i += BURST) {
		for (j = 0; j < BURST; j++)
			make_frame(fb[j], (uint32_t)(xorshift(&seed) % flows));
		__asm__ volatile("" : : "r"(fb) : "memory");
	}
	t_base = rte_rdtsc_precise() - t0;
	seed = 88172645463325252ull;
	t0 = rte_rdtsc_precise();
	for (i = 0; i < frames; i += BURST) {
		for (j = 0; j < BURST; j++)
			make_frame(fb[j], (uint32_t)(xorshift(&seed) % flows));
		now += 1000;
		sbx_flowtable_meter(ft, fp, lens, BURST, 0, now);
		sbx_flowtable_expire(ft, now, EXPIRE_BUDGET);
	}
	t_meter = rte_rdtsc_precise() - t0;
	sbx_flowtable_stats(ft, &st);
	printf("bench_flows=%u\nbench_frames=%" PRIu64 "\nbench_active=%" PRIu64 "\nbench_created=%" PRIu64
	       "\nbench_evicted=%" PRIu64 "\nbench_tsc_hz=%" PRIu64 "\nbench_cycles_per_frame=%.1f\n"
	       "bench_cycles_per_frame_with_build=%.1f\n", flows, frames, st.active, st.flows, st.evicted_full,
	       rte_get_tsc_hz(), (double)(t_meter - t_base) / (double)frames, (double)t_meter / (double)frames);
	return 0;
}

/* The slot of a random one of @p flows flows spread @p step apart (32.32 fixed point) */
static inline uint32_t flow_slot(uint64_t *seed, uint32_t flows, uint64_t step)
{
	return (uint32_t)((((xorshift(seed) >> 32) * flows) >> 32) * step >> 32);
}

/*
 * The memory floor of the table's layout (--bench-lines L with --bench-meter FLOWS): per frame, the
 * reads a lookup of a random one of FLOWS flows cannot avoid, in the meter's order and with its
 * prefetches (shared/flowtable.c sbx_flowtable_meter_dir), and nothing else: the signature line of
 * a random slot, then L lines of the flow that signature names (L = 2: a flow's two lines as the
 * table has them; 1: one line; 0: none), a counter written in the first, as the meter writes its
 * counters. The same number of slots and bytes as the table of the meter bench. What the random
 * numbers cost is measured in a loop of their own and subtracted. No parse, no hash, no compare:
 * the meter's figure at FLOWS flows minus this one is what they cost.
 */
static int bench_lines(uint32_t capacity, uint32_t flows, uint64_t frames, unsigned int lines)
{
	struct sbx_flowtable_mem m;
	uint64_t slots, step, seed = 88172645463325252ull, t0, t_base, t_lines, i, sum = 0;
	uint32_t *sig, slot[BURST], pos[BURST];
	uint8_t *e;
	unsigned int j;

	sbx_flowtable_mem(capacity, &m);
	slots = m.states / 64;
	sig = rte_zmalloc("bench_sig", (slots + 8) * sizeof(*sig), 64);
	e = rte_zmalloc("bench_flows", slots * 128, 64);
	if (!sig || !e) {
		fprintf(stderr, "sbx-flows-pcap: --bench-lines: no memory for %" PRIu64 " slots\n", slots);
		rte_free(e);
		rte_free(sig);
		return 2;
	}
	/* FLOWS slots spread evenly over the table (slot k * slots / FLOWS, 32.32 fixed point): as
	 * many distinct flow lines as the meter's FLOWS flows, not every slot's */
	step = (slots << 32) / flows;
	for (i = 0; i < slots; i++) /* the signature names the flow's slot: the flow read depends on it */
		sig[i] = (uint32_t)i;
	t0 = rte_rdtsc_precise();
	for (i = 0; i < frames; i += BURST) {
		for (j = 0; j < BURST; j++)
			slot[j] = flow_slot(&seed, flows, step);
		__asm__ volatile("" : : "r"(slot) : "memory");
	}
	t_base = rte_rdtsc_precise() - t0;
	seed = 88172645463325252ull;
	t0 = rte_rdtsc_precise();
	for (i = 0; i < frames; i += BURST) {
		for (j = 0; j < BURST; j++) {
			slot[j] = flow_slot(&seed, flows, step);
			rte_prefetch0(&sig[slot[j]]);
		}
		for (j = 0; j < BURST; j++) {
			pos[j] = sig[slot[j]];
			if (lines > 0)
				rte_prefetch0(e + (uint64_t)pos[j] * 128);
			if (lines > 1)
				rte_prefetch0(e + (uint64_t)pos[j] * 128 + 64);
		}
		for (j = 0; j < BURST; j++) {
			uint8_t *f = e + (uint64_t)pos[j] * 128;

			if (lines > 0)
				(*(uint64_t *)(f + 16))++;
			if (lines > 1)
				sum += *(const uint64_t *)(f + 64);
			sum += pos[j];
		}
	}
	t_lines = rte_rdtsc_precise() - t0;
	printf("bench_lines=%u\nbench_lines_flows=%u\nbench_lines_slots=%" PRIu64 "\nbench_lines_frames=%" PRIu64
	       "\nbench_lines_cycles_per_frame=%.1f\nbench_lines_sum=%" PRIu64 "\n", lines, flows, slots, frames,
	       ((double)t_lines - (double)t_base) / (double)frames, sum);
	rte_free(e);
	rte_free(sig);
	return 0;
}

static void bench_export(uint64_t n, uint64_t rate)
{
	struct sbx_flow_record r;
	uint64_t t0 = mono_ns(), i, t1;

	memset(&r, 0, sizeof(r));
	r.key.ipver = 4;
	r.key.proto = 17;
	r.key.src[0] = 10;
	r.key.dst[0] = 192, r.key.dst[1] = 168;
	r.packets = 1;
	r.bytes = 46;
	r.end_reason = SBX_FLOW_END_IDLE;
	for (i = 0; i < n; i++) {
		r.key.src[2] = (uint8_t)(i >> 8), r.key.src[3] = (uint8_t)i;
		r.key.sport = (uint16_t)(i >> 16);
		r.key.dport = 53;
		r.first_ns = 1700000000000000000ull + i * 1000;
		r.last_ns = r.first_ns;
		if (rate) /* paced: never ahead of i / rate */
			while ((mono_ns() - t0) * rate < i * 1000000000ull)
				;
		sbx_ipfix_add(exp_, &r, mono_ns());
	}
	sbx_ipfix_flush(exp_, mono_ns());
	t1 = mono_ns();
	printf("bench_export_records=%" PRIu64 "\nbench_export_seconds=%.3f\nbench_export_records_per_s=%.0f\n", n,
	       (double)(t1 - t0) / 1e9, (double)n * 1e9 / (double)(t1 - t0));
}

static int split_hostport(char *s, const char **host, uint16_t *port)
{
	char *c = strrchr(s, ':');

	if (!c)
		return -1;
	*c = 0;
	*port = (uint16_t)atoi(c + 1);
	*host = s;
	if (*s == '[' && c > s && c[-1] == ']') {
		c[-1] = 0;
		*host = s + 1;
	}
	return *port ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"collector", 1, 0, 'c'}, {"transport", 1, 0, 't'}, {"domain", 1, 0, 'd'}, {"active", 1, 0, 'a'},
		{"idle", 1, 0, 'i'}, {"capacity", 1, 0, 'n'}, {"records", 1, 0, 'r'}, {"template-period", 1, 0, 'p'},
		{"bench-meter", 1, 0, 'M'}, {"bench-export", 1, 0, 'E'}, {"frames", 1, 0, 'f'}, {"rate", 1, 0, 'R'}, {"retry-ms", 1, 0, 'T'},
		{"huge", 0, 0, 'H'}, {"biflow", 0, 0, 'B'}, {"bench-lines", 1, 0, 'L'}, {0, 0, 0, 0}};
	char prefix[64], mem[16], err[256];
	char *eal[] = {"sbx-flows-pcap", "--no-huge", "--no-pci", "--no-shconf", "--lcores=123@(0-1)", "-m", mem,
		       "--no-telemetry", "--log-level=lib.eal:error", prefix, NULL};
	int first;
	struct sbx_flowtable_params fp = {.name = "sbx_flows_pcap", .capacity = 65536,
					  .active_ns = SBX_FLOW_ACTIVE_DEFAULT_NS, .idle_ns = SBX_FLOW_IDLE_DEFAULT_NS,
					  .socket_id = SOCKET_ID_ANY, .emit = on_record};
	struct sbx_ipfix_params xp = {0};
	struct sbx_flowtable_stats st;
	struct sbx_ipfix_stats xs;
	struct sbx_flowtable *ft;
	uint64_t bench_frames = 10000000, bench_export_n = 0, rate = 0;
	uint32_t bench_flows = 0;
	int bench_lines_n = -1;
	char *collector = NULL;
	int o, i, rc = 0;

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'c': collector = optarg; break;
		case 't':
			if (sbx_ipfix_transport_parse(optarg, &xp.transport) != 0) {
				fprintf(stderr, "sbx-flows-pcap: --transport: udp or tcp\n");
				return 2;
			}
			break;
		case 'd': xp.domain = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'a': fp.active_ns = (uint64_t)(atof(optarg) * 1e9); break;
		case 'i': fp.idle_ns = (uint64_t)(atof(optarg) * 1e9); break;
		case 'n': fp.capacity = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'r':
			recs = fopen(optarg, "w");
			if (!recs) {
				perror(optarg);
				return 2;
			}
			break;
		case 'p': xp.template_period_s = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'M': bench_flows = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'E': bench_export_n = strtoull(optarg, NULL, 0); break;
		case 'f': bench_frames = strtoull(optarg, NULL, 0); break;
		case 'R': rate = strtoull(optarg, NULL, 0); break;
		case 'T': xp.retry_ms = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'B': fp.biflow = 1; break;
		case 'L':
			bench_lines_n = atoi(optarg);
			if (bench_lines_n < 0 || bench_lines_n > 2) {
				fprintf(stderr, "sbx-flows-pcap: --bench-lines: 0, 1 or 2\n");
				return 2;
			}
			break;
		case 'H': eal[1] = "--in-memory"; break; /* hugepages, as a worker's table (no files) */
		default:
			fprintf(stderr, "usage: sbx-flows-pcap [--collector ADDR:PORT] [--transport udp|tcp] [--domain N] "
				"[--active S] [--idle S] [--capacity N] [--biflow] [--records FILE] CAPTURE...\n"
				"       sbx-flows-pcap --bench-meter FLOWS [--frames N] [--bench-lines 0|1|2]\n"
				"       sbx-flows-pcap --bench-export N --collector ADDR:PORT [--rate R]\n");
			return 2;
		}
	}
	if (collector) {
		if (split_hostport(collector, &xp.address, &xp.port) != 0) {
			fprintf(stderr, "sbx-flows-pcap: --collector: ADDR:PORT\n");
			return 2;
		}
		exp_ = sbx_ipfix_open(&xp, err, sizeof(err));
		if (!exp_) {
			fprintf(stderr, "sbx-flows-pcap: collector: %s\n", err);
			return 2;
		}
	}
	if (bench_export_n) {
		if (!exp_) {
			fprintf(stderr, "sbx-flows-pcap: --bench-export needs --collector\n");
			return 2;
		}
		bench_export(bench_export_n, rate);
		goto out;
	}
	first = optind; /* rte_eal_init runs getopt too */
	if (bench_flows)
		fp.capacity = bench_flows + bench_flows / 8 + 64;
	snprintf(prefix, sizeof(prefix), "--file-prefix=sbxflows%d", (int)getpid());
	snprintf(mem, sizeof(mem), "%u", 256 + (unsigned int)((uint64_t)fp.capacity * 400 >> 20));
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0) {
		fprintf(stderr, "sbx-flows-pcap: EAL: %s\n", rte_strerror(rte_errno));
		return 2;
	}
	ft = sbx_flowtable_create(&fp);
	if (!ft) {
		fprintf(stderr, "sbx-flows-pcap: flow table: %s\n", rte_strerror(rte_errno));
		return 2;
	}
	if (bench_flows && bench_lines_n >= 0) {
		rc = bench_lines(fp.capacity, bench_flows, bench_frames, (unsigned int)bench_lines_n);
	} else if (bench_flows) {
		rc = bench_meter(ft, bench_flows, bench_frames);
	} else {
		for (i = first; i < argc; i++)
			if (meter_capture(ft, argv[i], (uint16_t)(i - first)) != 0)
				rc = 2;
	}
	sbx_flowtable_stats(ft, &st);
	printf("frames=%" PRIu64 "\nnon_ip=%" PRIu64 "\nflows=%" PRIu64 "\nrecords=%" PRIu64 "\nexpired_idle=%" PRIu64
	       "\nexpired_active=%" PRIu64 "\nexpired_end=%" PRIu64 "\nexpired_forced=%" PRIu64 "\nevicted_full=%" PRIu64
	       "\n", st.frames, st.non_ip, st.flows, n_records, st.expired_idle, st.expired_active, st.expired_end,
	       st.expired_forced, st.evicted_full);
	sbx_flowtable_free(ft);
	rte_eal_cleanup();
out:
	if (exp_) {
		sbx_ipfix_flush(exp_, mono_ns());
		sbx_ipfix_stats(exp_, &xs);
		printf("records_sent=%" PRIu64 "\nrecords_lost=%" PRIu64 "\nmessages_sent=%" PRIu64 "\nmessages_lost=%"
		       PRIu64 "\ntemplate_sends=%" PRIu64 "\nconnects=%" PRIu64 "\nconnect_failures=%" PRIu64
		       "\ndisconnects=%" PRIu64 "\nsend_errors=%" PRIu64 "\n", xs.records_sent, xs.records_lost,
		       xs.messages_sent, xs.messages_lost, xs.template_sends, xs.connects, xs.connect_failures,
		       xs.disconnects, xs.send_errors);
		sbx_ipfix_close(exp_, mono_ns());
	}
	if (recs)
		fclose(recs);
	return rc;
}
