/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The flow table (shared/flowtable.c) on hand-built frames in EAL memory (EAL without huge
 * pages, lcore id 121, its own file prefix): keys (IPv4, IPv6 extension headers, fragments, VLAN,
 * QinQ, MPLS, ingress port), counting, the idle and active timeouts (on arrival and by the expiry
 * walk), TCP FIN/RST, a full table pushing out its oldest flows (counted, every frame still
 * counted), a burst whose keys leave the table in the middle, churn through a two-thirds full table,
 * biflows (RFC 5103).
 */
#include <arpa/inet.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>

#include "spanbox/flowtable.h"
#include "tap.h"

#define S 1000000000ull

static struct sbx_flow_record recs[256];
static unsigned int nrec;
static uint64_t rec_packets; /* packets of every record emitted (beyond the 256 kept too) */

static void on_rec(void *arg, const struct sbx_flow_record *r)
{
	(void)arg;
	rec_packets += r->packets;
	if (nrec < 256)
		recs[nrec] = *r;
	nrec++;
}

/* Ethernet (+ @p ntags 802.1Q/802.1ad tags with ids from @p vids) + EtherType; returns the length. */
static uint32_t eth(uint8_t *f, int ntags, const uint16_t *vids, uint16_t et)
{
	uint32_t o = 12;
	int i;

	memset(f, 0, 12);
	f[5] = 1, f[11] = 2;
	for (i = 0; i < ntags; i++) {
		f[o] = i == 0 && ntags > 1 ? 0x88 : 0x81, f[o + 1] = i == 0 && ntags > 1 ? 0xa8 : 0x00;
		f[o + 2] = (uint8_t)(vids[i] >> 8) | 0x20, f[o + 3] = (uint8_t)vids[i]; /* PCP 1 must not leak in */
		o += 4;
	}
	f[o] = (uint8_t)(et >> 8), f[o + 1] = (uint8_t)et;
	return o + 2;
}

/* IPv4 header at @p p: 20 bytes, total length @p tot, protocol, fragment field, 10.0.0.a -> 10.0.0.b. */
static void ip4(uint8_t *p, uint16_t tot, uint8_t proto, uint16_t frag, uint8_t a, uint8_t b)
{
	memset(p, 0, 20);
	p[0] = 0x45, p[2] = (uint8_t)(tot >> 8), p[3] = (uint8_t)tot, p[6] = (uint8_t)(frag >> 8), p[7] = (uint8_t)frag;
	p[8] = 64, p[9] = proto, p[12] = 10, p[15] = a, p[16] = 10, p[19] = b;
}

static void ports(uint8_t *p, uint16_t s, uint16_t d, uint8_t tcpflags)
{
	memset(p, 0, 20);
	p[0] = (uint8_t)(s >> 8), p[1] = (uint8_t)s, p[2] = (uint8_t)(d >> 8), p[3] = (uint8_t)d;
	p[12] = 0x50, p[13] = tcpflags;
}

/* A TCP/IPv4 frame 10.0.0.a:s -> 10.0.0.b:d of 60 bytes (IP total 46), untagged. */
static uint32_t tcp4(uint8_t *f, uint8_t a, uint8_t b, uint16_t s, uint16_t d, uint8_t flags)
{
	uint32_t o = eth(f, 0, NULL, 0x0800);

	ip4(f + o, 46, 6, 0, a, b);
	ports(f + o + 20, s, d, flags);
	return 60;
}

static void meter1(struct sbx_flowtable *ft, const uint8_t *f, uint32_t len, uint16_t port, uint64_t now)
{
	sbx_flowtable_meter(ft, &f, &len, 1, port, now);
}

static struct sbx_flowtable *table(const char *name, uint32_t cap, uint64_t active, uint64_t idle)
{
	struct sbx_flowtable_params p = {.name = name, .capacity = cap, .active_ns = active, .idle_ns = idle,
					 .socket_id = SOCKET_ID_ANY, .emit = on_rec};

	nrec = 0;
	return sbx_flowtable_create(&p);
}

static void test_parse(void)
{
	uint8_t f[256];
	uint16_t vids[3] = {100, 200, 300};
	struct sbx_flow_key k;
	uint32_t bytes, o, len;
	uint8_t fl;
	int rc;

	len = tcp4(f, 1, 2, 1234, 80, 0x12);
	rc = sbx_flow_parse(f, len, 7, &k, &bytes, &fl);
	check(rc == 0 && k.ipver == 4 && k.proto == 6 && k.sport == 1234 && k.dport == 80 && k.port == 7 &&
	      k.src[0] == 10 && k.src[3] == 1 && k.dst[3] == 2 && k.src[4] == 0 && bytes == 46 && fl == 0x12 &&
	      k.vlan == 0, "IPv4 TCP: addresses, ports, protocol, port index, IP octets 46, flags 0x12");

	o = eth(f, 1, vids, 0x0800);
	ip4(f + o, 28, 17, 0, 1, 2);
	ports(f + o + 20, 53, 5353, 0xff);
	rc = sbx_flow_parse(f, o + 28, 0, &k, &bytes, &fl);
	check(rc == 0 && k.vlan == 100 && k.inner_vlan == 0 && k.proto == 17 && k.sport == 53 && k.dport == 5353 &&
	      fl == 0 && bytes == 28, "802.1Q: VLAN id 100 (PCP masked), UDP ports, no TCP flags for UDP");

	o = eth(f, 2, vids, 0x0800);
	ip4(f + o, 28, 17, 0, 1, 2);
	ports(f + o + 20, 53, 5353, 0);
	rc = sbx_flow_parse(f, o + 28, 0, &k, &bytes, &fl);
	check(rc == 0 && k.vlan == 100 && k.inner_vlan == 200 && k.sport == 53, "QinQ (802.1ad + 802.1Q): outer 100, inner 200");

	o = eth(f, 0, NULL, 0x0800);
	ip4(f + o, 1500, 17, 0x2000, 1, 2); /* first fragment: MF, offset 0 */
	ports(f + o + 20, 1000, 2000, 0);
	rc = sbx_flow_parse(f, o + 28, 0, &k, &bytes, &fl);
	check(rc == 0 && k.sport == 1000 && k.dport == 2000 && bytes == 1500, "IPv4 first fragment: ports, octets from the header (1500)");
	ip4(f + o, 500, 17, 185, 1, 2); /* a later fragment: offset 185 * 8 */
	rc = sbx_flow_parse(f, o + 28, 0, &k, &bytes, &fl);
	check(rc == 0 && k.sport == 0 && k.dport == 0 && k.proto == 17 && bytes == 500,
	      "IPv4 later fragment: protocol 17, no ports (its bytes are payload)");

	/* IPv6: hop-by-hop (8 bytes), destination options (16 bytes), TCP */
	o = eth(f, 0, NULL, 0x86dd);
	memset(f + o, 0, 40);
	f[o] = 0x60, f[o + 5] = 8 + 16 + 20, f[o + 6] = 0, f[o + 8] = 0x20, f[o + 23] = 1, f[o + 24] = 0x20, f[o + 39] = 2;
	memset(f + o + 40, 0, 24);
	f[o + 40] = 60, f[o + 41] = 0;      /* hop-by-hop -> destination options, 8 bytes */
	f[o + 48] = 6, f[o + 49] = 1;       /* destination options -> TCP, 16 bytes */
	ports(f + o + 64, 443, 50000, 0x11);
	rc = sbx_flow_parse(f, o + 84, 0, &k, &bytes, &fl);
	check(rc == 0 && k.ipver == 6 && k.proto == 6 && k.sport == 443 && k.dport == 50000 && fl == 0x11 &&
	      k.src[0] == 0x20 && k.src[15] == 1 && k.dst[15] == 2 && bytes == 40 + 44,
	      "IPv6 through hop-by-hop and destination options to TCP 443 -> 50000, octets 40 + payload");

	/* IPv6 fragment header: first (offset 0, M) then a later one */
	f[o + 6] = 44, f[o + 5] = 8 + 8;
	memset(f + o + 40, 0, 8);
	f[o + 40] = 17, f[o + 43] = 1;      /* next UDP, offset 0, M = 1 */
	ports(f + o + 48, 4000, 4001, 0);
	rc = sbx_flow_parse(f, o + 56, 0, &k, &bytes, &fl);
	check(rc == 0 && k.proto == 17 && k.sport == 4000 && k.dport == 4001, "IPv6 first fragment: UDP ports");
	f[o + 42] = 0x05, f[o + 43] = 0x00; /* offset 160 */
	rc = sbx_flow_parse(f, o + 56, 0, &k, &bytes, &fl);
	check(rc == 0 && k.proto == 17 && k.sport == 0 && k.dport == 0, "IPv6 later fragment: protocol 17, no ports");

	/* MPLS label stack (2 labels) over IPv4 */
	o = eth(f, 0, NULL, 0x8847);
	memset(f + o, 0, 8);
	f[o + 6] = 0x01; /* second label: bottom of stack */
	ip4(f + o + 8, 40, 6, 0, 3, 4);
	ports(f + o + 28, 1, 2, 0x02);
	rc = sbx_flow_parse(f, o + 48, 0, &k, &bytes, &fl);
	check(rc == 0 && k.ipver == 4 && k.src[3] == 3 && k.sport == 1 && fl == 0x02, "MPLS (2 labels) over IPv4");

	o = eth(f, 0, NULL, 0x0806);
	check(sbx_flow_parse(f, o + 28, 0, &k, &bytes, &fl) == -1, "ARP: not metered");
	len = tcp4(f, 1, 2, 1, 2, 0);
	check(sbx_flow_parse(f, 14 + 19, 0, &k, &bytes, &fl) == -1, "IPv4 header cut short: not metered");
	f[14] = 0x44;
	check(sbx_flow_parse(f, len, 0, &k, &bytes, &fl) == -1, "IPv4 IHL 4 (16 bytes): not metered");
}

static void test_counting(void)
{
	struct sbx_flowtable *ft = table("ut_ft_count", 64, 60 * S, 15 * S);
	struct sbx_flowtable_stats st;
	uint8_t f[128], g[128];
	uint32_t len;
	const uint8_t *fp[4];
	uint32_t lens[4];

	if (!check(ft != NULL, "table of 64 flows (%s)", ft ? "created" : rte_strerror(rte_errno)))
		return;
	len = tcp4(f, 1, 2, 1000, 80, 0x02);
	meter1(ft, f, len, 0, 1 * S);
	tcp4(f, 1, 2, 1000, 80, 0x10);
	meter1(ft, f, len, 0, 2 * S);
	meter1(ft, f, len, 0, 3 * S);
	meter1(ft, f, len, 1, 3 * S);        /* another ingress port: another flow */
	tcp4(g, 2, 1, 80, 1000, 0x10);       /* the reverse direction: another flow */
	fp[0] = g, fp[1] = g, fp[2] = f, lens[0] = lens[1] = lens[2] = len;
	sbx_flowtable_meter(ft, fp, lens, 3, 0, 4 * S);
	sbx_flowtable_stats(ft, &st);
	check(st.frames == 7 && st.flows == 3 && st.active == 3 && nrec == 0, "7 frames, 3 flows, nothing out yet");
	sbx_flowtable_flush(ft, 5 * S, SBX_FLOW_END_FORCED);
	check(nrec == 3 && recs[0].packets == 4 && recs[0].bytes == 4 * 46 && recs[0].first_ns == 1 * S &&
	      recs[0].last_ns == 4 * S && recs[0].tcp_flags == 0x12 && recs[0].end_reason == SBX_FLOW_END_FORCED &&
	      recs[0].key.port == 0, "flush: oldest first, 4 packets, 184 octets, first 1 s, last 4 s, flags SYN|ACK, forced");
	check(nrec == 3 && recs[1].key.port == 1 && recs[1].packets == 1 && recs[2].packets == 2 &&
	      recs[2].key.sport == 80, "port 1 flow: 1 packet; reverse flow: 2 packets");
	check(nrec == 3 && recs[2].app_id == 0 && recs[2].reserved[0] == 0 && recs[2].biflow == 0 &&
	      recs[2].rev_packets == 0 && recs[2].rev_bytes == 0, "room for the application id, zero; no reverse (unidirectional)");
	sbx_flowtable_stats(ft, &st);
	check(st.active == 0 && st.expired_forced == 3, "table empty, 3 forced");
	sbx_flowtable_free(ft);
}

/* flows.ports[].direction "both": the frames received on a port and those sent on it are separate
 * flows (key.dir), the same 5-tuple and port notwithstanding. */
static void test_directions(void)
{
	struct sbx_flowtable *ft = table("ut_ft_dir", 64, 60 * S, 15 * S);
	uint8_t f[128];
	const uint8_t *fp[1] = {f};
	uint32_t len;

	if (!check(ft != NULL, "table of 64 flows (%s)", ft ? "created" : rte_strerror(rte_errno)))
		return;
	nrec = 0;
	len = tcp4(f, 1, 2, 1000, 80, 0x10);
	sbx_flowtable_meter_dir(ft, fp, &len, 1, 3, SBX_FLOW_DIR_RX, 1 * S);
	sbx_flowtable_meter_dir(ft, fp, &len, 1, 3, SBX_FLOW_DIR_TX, 1 * S);
	sbx_flowtable_meter_dir(ft, fp, &len, 1, 3, SBX_FLOW_DIR_TX, 2 * S);
	sbx_flowtable_meter(ft, fp, &len, 1, 3, 2 * S); /* meter = RX */
	sbx_flowtable_flush(ft, 3 * S, SBX_FLOW_END_FORCED);
	check(nrec == 2 && recs[0].key.port == 3 && recs[0].key.dir == SBX_FLOW_DIR_RX && recs[0].packets == 2 &&
		      recs[1].key.port == 3 && recs[1].key.dir == SBX_FLOW_DIR_TX && recs[1].packets == 2,
	      "one port, one 5-tuple: an RX flow and a TX flow of 2 packets each (%u records)", nrec);
	sbx_flowtable_free(ft);
}

static void test_timeouts(void)
{
	struct sbx_flowtable *ft = table("ut_ft_time", 64, 10 * S, 3 * S);
	struct sbx_flowtable_stats st;
	uint8_t f[128];
	uint32_t len = tcp4(f, 1, 2, 1000, 80, 0x10);
	unsigned int n;
	int i;

	if (!ft)
		return;
	meter1(ft, f, len, 0, 100 * S);
	meter1(ft, f, len, 0, 100 * S + 3 * S - 1); /* just under the idle timeout: same flow */
	check(nrec == 0, "a frame 3 s - 1 ns after the last: same flow");
	meter1(ft, f, len, 0, 106 * S - 1);             /* 3 s after the last: idle */
	check(nrec == 1 && recs[0].end_reason == SBX_FLOW_END_IDLE && recs[0].packets == 2,
	      "a frame 3 s after the last closes the flow first (idle, 2 packets)");
	n = sbx_flowtable_expire(ft, 109 * S - 2, 64);
	check(n == 0 && nrec == 1, "expire 1 ns before the idle timeout: nothing");
	n = sbx_flowtable_expire(ft, 109 * S - 1, 64);
	check(n == 1 && nrec == 2 && recs[1].end_reason == SBX_FLOW_END_IDLE && recs[1].packets == 1,
	      "expire at the idle timeout: the flow out (idle, 1 packet)");

	sbx_flowtable_stats(ft, &st);
	check(st.active == 0 && st.expired_idle == 2, "counters: 2 idle, none left");
	sbx_flowtable_free(ft);

	/* active 10 s, idle 9 s: a frame every second for 12 s */
	ft = table("ut_ft_active", 64, 10 * S, 9 * S);
	if (!ft)
		return;
	for (i = 0; i <= 12; i++)
		meter1(ft, f, len, 0, 200 * S + (uint64_t)i * S);
	check(nrec == 1 && recs[0].end_reason == SBX_FLOW_END_ACTIVE && recs[0].packets == 10 &&
	      recs[0].first_ns == 200 * S && recs[0].last_ns == 209 * S,
	      "active timeout 10 s: the frame at 10 s starts a new flow, the first has 10 packets (%u records)", nrec);
	n = sbx_flowtable_expire(ft, 220 * S - 1, 64);
	check(n == 0, "expire 1 ns before 10 s from its first frame: nothing");
	n = sbx_flowtable_expire(ft, 220 * S, 64);
	check(n == 1 && nrec == 2 && recs[1].end_reason == SBX_FLOW_END_ACTIVE && recs[1].packets == 3,
	      "expire at the active timeout: out (active, 3 packets)");

	nrec = 0;
	len = tcp4(f, 1, 2, 1000, 80, 0x10);
	meter1(ft, f, len, 0, 300 * S);
	tcp4(f, 1, 2, 1000, 80, 0x11);
	meter1(ft, f, len, 0, 300 * S + 1);
	check(nrec == 1 && recs[0].end_reason == SBX_FLOW_END_OF_FLOW && recs[0].packets == 2 && recs[0].tcp_flags == 0x11,
	      "FIN: counted, then the flow ends (end of flow, 2 packets)");
	tcp4(f, 1, 2, 1000, 80, 0x04);
	meter1(ft, f, len, 0, 300 * S + 2);
	check(nrec == 2 && recs[1].end_reason == SBX_FLOW_END_OF_FLOW && recs[1].packets == 1, "RST alone: a 1-packet flow, end of flow");
	sbx_flowtable_stats(ft, &st);
	check(st.active == 0 && st.expired_idle == 0 && st.expired_active == 2 && st.expired_end == 2,
	      "counters: 2 active, 2 end, none left");
	sbx_flowtable_free(ft);
}

static void test_full(void)
{
	struct sbx_flowtable *ft = table("ut_ft_full", 8, 60 * S, 15 * S);
	struct sbx_flowtable_stats st;
	uint8_t f[32][128];
	const uint8_t *fp[32];
	uint32_t lens[32];
	uint64_t pk = 0;
	unsigned int i, ok = 1;

	if (!ft)
		return;
	for (i = 0; i < 20; i++) {
		lens[0] = tcp4(f[0], 1, 2, (uint16_t)(1000 + i), 80, 0x10);
		meter1(ft, f[0], lens[0], 0, (1 + i) * S);
	}
	sbx_flowtable_stats(ft, &st);
	for (i = 0; i < nrec && i < 12; i++)
		ok &= recs[i].key.sport == 1000 + i && recs[i].end_reason == SBX_FLOW_END_RESOURCES;
	check(st.frames == 20 && st.active == 8 && st.evicted_full == 12 && nrec == 12 && ok,
	      "20 flows into 8: the 12 oldest out early (lack of resources), counted, 8 stay (%u out)", nrec);

	/* a burst [a new flow, the oldest flow]: the new one pushes the oldest out (its key slot freed
	 * and taken again); the oldest's frame must not be counted on the slot its lookup found */
	lens[0] = tcp4(f[0], 1, 2, 3000, 80, 0x10);
	lens[1] = tcp4(f[1], 1, 2, 1012, 80, 0x10);
	fp[0] = f[0], fp[1] = f[1];
	sbx_flowtable_meter(ft, fp, lens, 2, 0, 50 * S);
	nrec = 0;
	sbx_flowtable_flush(ft, 50 * S, SBX_FLOW_END_FORCED);
	for (i = 0, ok = 0; i < nrec; i++)
		ok += (recs[i].key.sport == 3000 && recs[i].packets == 1) + (recs[i].key.sport == 1012 && recs[i].packets == 1);
	check(nrec == 8 && ok == 2, "burst of a new flow and the oldest into a full table: 1 packet each (%u of 2 right)", ok);
	nrec = 12;

	/* a burst of 32 frames over 16 new flows (2 each, interleaved) into a full table of 8: keys
	 * leave during the burst, every frame is still counted on the right flow */
	for (i = 0; i < 32; i++) {
		lens[i] = tcp4(f[i], 5, 6, (uint16_t)(2000 + i % 16), 80, 0x10);
		fp[i] = f[i];
	}
	sbx_flowtable_meter(ft, fp, lens, 32, 0, 100 * S);
	sbx_flowtable_flush(ft, 100 * S, SBX_FLOW_END_FORCED);
	sbx_flowtable_stats(ft, &st);
	for (i = 12; i < nrec && i < 256; i++)
		pk += recs[i].packets;
	check(st.frames == 54 && pk == 32 && st.active == 0,
	      "burst of 32 frames over 16 flows into a full table: all counted (%llu packets out)", (unsigned long long)pk);
	sbx_flowtable_free(ft);
}

/* sbx_flowtable_expire(budget) emits at most budget records per call however many flows are due
 * (the worker passes its ring's free room: a mass expiry waits in the table instead of being lost
 * on a full ring), and every due flow still leaves, once. */
static void test_expire_bound(void)
{
	struct sbx_flowtable *ft = table("ut_ft_bound", 64, 10 * S, 5 * S);
	uint8_t f[128], seen[40] = {0};
	unsigned int i, n, calls = 0, most = 0, dup = 0;
	uint32_t len;

	if (!ft)
		return;
	for (i = 0; i < 40; i++) {
		len = tcp4(f, 1, 2, (uint16_t)(1000 + i), 80, 0x10);
		meter1(ft, f, len, 0, 1 * S);
	}
	/* two walks while nothing is due move the slot cursor past the oldest flows' slots; at 100 s
	 * every flow is past both timeouts: the creation list and the slot walk find different ones */
	sbx_flowtable_expire(ft, 2 * S, 8);
	sbx_flowtable_expire(ft, 2 * S, 8);
	while (calls < 100) {
		nrec = 0;
		n = sbx_flowtable_expire(ft, 100 * S, 8);
		calls++;
		most = n > most ? n : most;
		for (i = 0; i < nrec && i < 256; i++) {
			unsigned int k = (unsigned int)(recs[i].key.sport - 1000);

			if (k < 40)
				dup += seen[k]++ != 0;
		}
		if (n == 0)
			break;
	}
	for (i = 0, n = 0; i < 40; i++)
		n += seen[i] != 0;
	check(most <= 8, "expire(budget 8) with 40 flows due: at most 8 records per call (most %u)", most);
	check(n == 40 && dup == 0, "every one of the 40 flows out once in %u calls (%u out, %u twice)", calls, n, dup);
	nrec = 0;
	check(sbx_flowtable_expire(ft, 100 * S, 0) == 0 && nrec == 0, "expire(budget 0): nothing");
	sbx_flowtable_free(ft);
}

/* Churn: 500 flows in a table of 512 (its slots two-thirds full: long probe runs), frames in
 * random order in bursts of 32, a FIN on one frame in 8 closing its flow: every record carries
 * exactly the frames its flow saw since its last FIN (a plain model), so that a flow moved back
 * in its run by a deletion is found again, in the middle of a burst too. */
static void test_churn(void)
{
	struct sbx_flowtable *ft = table("ut_ft_churn", 512, 1000 * S, 1000 * S);
	static uint8_t f[32][128];
	static uint32_t model[500];
	const uint8_t *fp[32];
	uint32_t lens[32];
	uint64_t seed = 12345, frames = 0, out = 0;
	unsigned int b, i, bad = 0, recs_seen = 0;

	if (!ft)
		return;
	for (b = 0; b < 2000; b++) {
		unsigned int r0 = nrec;

		for (i = 0; i < 32; i++) {
			unsigned int k;
			uint8_t fin;

			seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
			k = (unsigned int)(seed % 500);
			fin = (seed >> 20) % 8 == 0 ? 0x11 : 0x10;
			lens[i] = tcp4(f[i], (uint8_t)(k % 7 + 1), 2, (uint16_t)(1000 + k), 80, fin);
			fp[i] = f[i];
		}
		nrec = 0;
		sbx_flowtable_meter(ft, fp, lens, 32, 0, (1 + b) * S / 1000);
		for (i = 0; i < 32; i++) {
			unsigned int k = (unsigned int)(f[i][34] << 8 | f[i][35]) - 1000;

			model[k]++;
			frames++;
			if (f[i][47] & 0x01) { /* this frame's FIN closed the flow: the next record is it */
				if (recs_seen >= nrec || recs[recs_seen].key.sport != 1000 + k ||
				    recs[recs_seen].packets != model[k])
					bad++;
				out += model[k];
				model[k] = 0;
				recs_seen++;
			}
		}
		bad += nrec != recs_seen;
		recs_seen = 0;
		(void)r0;
	}
	nrec = 0;
	rec_packets = 0;
	sbx_flowtable_flush(ft, 3 * S, SBX_FLOW_END_FORCED);
	out += rec_packets;
	check(bad == 0 && out == frames, "churn: 64,000 frames over 500 flows in 512, 1 in 8 a FIN: every record"
	      " right (%u wrong), every frame out once (%llu of %llu)", bad, (unsigned long long)out,
	      (unsigned long long)frames);
	sbx_flowtable_free(ft);
}

/* Biflows (RFC 5103): both directions in one record, forward = the first frame's direction. */
static void test_biflow(void)
{
	struct sbx_flowtable_params p = {.name = "ut_ft_bi", .capacity = 64, .active_ns = 60 * S, .idle_ns = 15 * S,
					 .socket_id = SOCKET_ID_ANY, .emit = on_rec, .biflow = 1};
	struct sbx_flowtable *ft;
	struct sbx_flowtable_stats st;
	uint8_t f[128];
	uint32_t len;

	nrec = 0;
	ft = sbx_flowtable_create(&p);
	if (!check(ft != NULL, "biflow table"))
		return;
	/* a server (10.0.0.9:80) answers a client (10.0.0.1:5000): the client's SYN comes first,
	 * though its key sorts after the server's (5000 > 80 with the same first word) */
	len = tcp4(f, 9, 1, 5000, 80, 0x02); /* 10.0.0.9:5000 -> 10.0.0.1:80 */
	meter1(ft, f, len, 0, 1 * S);
	tcp4(f, 1, 9, 80, 5000, 0x12);
	meter1(ft, f, len, 0, 2 * S);
	tcp4(f, 9, 1, 5000, 80, 0x10);
	meter1(ft, f, len, 0, 3 * S);
	meter1(ft, f, len, 0, 3 * S);
	tcp4(f, 1, 9, 80, 5000, 0x11);       /* the server's FIN: one direction only, the flow stays */
	meter1(ft, f, len, 0, 4 * S);
	sbx_flowtable_stats(ft, &st);
	check(st.flows == 1 && st.active == 1 && nrec == 0, "both directions one flow, a FIN one way keeps it (%llu flows)",
	      (unsigned long long)st.flows);
	tcp4(f, 9, 1, 5000, 80, 0x11);       /* the client's FIN: both ways, the flow ends */
	meter1(ft, f, len, 0, 5 * S);
	check(nrec == 1 && recs[0].biflow == 1 && recs[0].key.src[3] == 9 && recs[0].key.sport == 5000 &&
	      recs[0].key.dst[3] == 1 && recs[0].key.dport == 80 && recs[0].packets == 4 && recs[0].bytes == 4 * 46 &&
	      recs[0].tcp_flags == 0x13 && recs[0].rev_packets == 2 && recs[0].rev_bytes == 2 * 46 &&
	      recs[0].rev_tcp_flags == 0x13 && recs[0].first_ns == 1 * S && recs[0].last_ns == 5 * S &&
	      recs[0].end_reason == SBX_FLOW_END_OF_FLOW,
	      "record: forward the client's (4 packets, SYN|ACK|FIN), reverse the server's (2, SYN|ACK|FIN), FINs both ways end it");
	/* the first frame from the other side: forward is that side */
	nrec = 0;
	len = tcp4(f, 1, 9, 80, 6000, 0x10);
	meter1(ft, f, len, 0, 6 * S);
	tcp4(f, 9, 1, 6000, 80, 0x04);       /* a RST ends a biflow at once */
	meter1(ft, f, len, 0, 7 * S);
	check(nrec == 1 && recs[0].key.src[3] == 1 && recs[0].key.sport == 80 && recs[0].packets == 1 &&
	      recs[0].rev_packets == 1 && recs[0].rev_tcp_flags == 0x04, "the server's frame first: forward is the server; a RST ends it");
	/* switched off at run time (flows.biflow is live): the flows leave first, forced */
	nrec = 0;
	tcp4(f, 1, 9, 80, 7000, 0x10);
	meter1(ft, f, len, 0, 8 * S);
	check(sbx_flowtable_set_biflow(ft, 9 * S, 0) == 1 && nrec == 1 && recs[0].end_reason == SBX_FLOW_END_FORCED &&
	      !sbx_flowtable_biflow(ft) && sbx_flowtable_set_biflow(ft, 9 * S, 0) == 0,
	      "biflow switched off: its flow out (forced), then unidirectional; the same mode again: nothing");
	nrec = 0;
	tcp4(f, 9, 1, 7000, 80, 0x10);
	meter1(ft, f, len, 0, 10 * S);
	tcp4(f, 1, 9, 80, 7000, 0x10);
	meter1(ft, f, len, 0, 10 * S);
	sbx_flowtable_flush(ft, 10 * S, SBX_FLOW_END_FORCED);
	check(nrec == 2 && recs[0].biflow == 0 && recs[0].rev_packets == 0 && recs[1].packets == 1,
	      "after the switch: two unidirectional flows, no reverse counts");
	sbx_flowtable_free(ft);
}

/* EAL heap bytes allocated now, all sockets (rte_malloc's own count: memzones included). */
static uint64_t heap_alloc(void)
{
	struct rte_malloc_socket_stats st;
	uint64_t b = 0;
	int s;

	for (s = 0; s < RTE_MAX_NUMA_NODES; s++)
		if (rte_malloc_get_socket_stats(s, &st) == 0)
			b += st.heap_allocsz_bytes;
	return b;
}

/* sbx_flowtable_mem (what the capacity plan counts per worker) against what creating a table
 * really takes from the EAL heap: never less, at most 1 % + 64 KiB more, so that a DPDK whose
 * rte_hash allocates differently fails here instead of the plan drifting silently. */
static void test_mem(void)
{
	static const uint32_t caps[] = {1024, 65536, 100000, 1000000, 1250000};
	struct sbx_flowtable_params p = {.active_ns = S, .idle_ns = S, .socket_id = SOCKET_ID_ANY, .emit = on_rec};
	unsigned int i;

	for (i = 0; i < RTE_DIM(caps); i++) {
		struct sbx_flowtable_mem m;
		struct sbx_flowtable *ft;
		uint64_t before = heap_alloc(), used, est;

		p.name = "ut_ft_mem";
		p.capacity = caps[i];
		ft = sbx_flowtable_create(&p);
		used = heap_alloc() - before;
		est = sbx_flowtable_mem(caps[i], &m);
		check(ft != NULL && est >= used && est <= used + used / 100 + 65536 &&
		      est == m.keys + m.signatures + m.states + m.other && m.total == est,
		      "a table of %u flows takes %llu bytes of the EAL heap, the plan counts %llu (keys %llu,"
		      " signatures %llu, states %llu, other %llu)", caps[i], (unsigned long long)used,
		      (unsigned long long)est, (unsigned long long)m.keys, (unsigned long long)m.signatures,
		      (unsigned long long)m.states, (unsigned long long)m.other);
		sbx_flowtable_free(ft);
	}
}

int main(int argc, char **argv)
{
	char *eal[] = {argv[0], "--no-huge", "--no-pci", "--no-shconf", "-m", "512", "--lcores", "121@(0-1)",
		       "--file-prefix=sbxut_ft", "--no-telemetry", "--log-level=lib.eal:error", NULL};

	(void)argc;
	if (!check(rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) >= 0, "EAL on lcore 121 (%s)",
		   rte_strerror(rte_errno))) {
		printf("1..%d\n", tests);
		return 1;
	}
	test_parse();
	test_counting();
	test_directions();
	test_timeouts();
	test_full();
	test_expire_bound();
	test_churn();
	test_biflow();
	test_mem();
	rte_eal_cleanup();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
