/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests (TAP) of the worker's mirror engine (secondary/mirror.c, the same library the worker
 * links) on a real EAL: no hugepages, no shared config (--no-shconf: DPDK 22.11 refuses
 * --in-memory with --no-huge, "--legacy-mem is not compatible"), no PCI, lcore id 100 floating
 * on every CPU, its own file prefix. A real pktmbuf pool, real rte_rings as destination queues (a pcap file port's
 * mirror TX ring), and an engine set up by sbx_mirror_setup() from a hand-made struct sbx_shm and
 * struct sbx_tables (calloc'd, not a memzone). Checks copy vs share, the bytes of SPAN, RSPAN and
 * ERSPAN II and VXLAN (IPv4 and IPv6 outer, chains) copies, snaplen truncation, 1-in-N sampling,
 * commit_tx trimming, GRE sequence numbers at send time across bursts and two workers, drop_txfull
 * and the replay wait, the fast path (per-burst ERSPAN header template against erspan.c's
 * field-by-field bytes, II and III, IPv4 and IPv6; the pool running dry halfway through a burst's
 * bulk allocation, of the main pool or of the indirect-mbuf pool; which pool a share's mbufs come
 * from; the share of a clone; the TSC-to-ns fixed point), and that every mbuf is back in the pools
 * after each part.
 * usage: test_mirror_engine [repo-root]   (the argument is unused)
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "spanbox/erspan.h"
#include "spanbox/flowhash.h"
#include "spanbox/shm.h"
#include "spanbox/ts_in.h"
#include "../../secondary/mirror.h"
#include "tap.h"

#define PREFIX "sbxut_mirror_engine"
#define POOL_N 2047u
#define IND_N 1023u     /* the indirect-mbuf pool (no data room), as the primary's beside its pool */
#define ROOM (2048 + RTE_PKTMBUF_HEADROOM)
#define CSET 3          /* counter set of the session (not 0: the indirection is used) */
#define DST_MAC_PORT { 0x02, 0x00, 0x00, 0x00, 0x00, 0x11 }

static struct rte_mempool *mp, *mp_ind;
static bool no_ind; /* world(): no indirect-mbuf pool in shm (the engine falls back to mp) */
static struct rte_ring *ring_w0, *ring_w1, *ring_small;
static struct sbx_shm *shm;
static struct sbx_shm_layout shm_lay; /* the memzone's regions (workers, microburst rings) */
static struct sbx_tables *tab;

/* The world of one test: port 0 the source (@p src_kind), port 1 a pcap file port (its mirror TX
 * queues are rings), two workers; worker 0's mirror ring is @p r0. Counters and sequence reset. */
static void world(uint8_t src_kind, struct rte_ring *r0)
{
	static const uint8_t mac[6] = DST_MAC_PORT;
	struct sbx_config *c = &tab->cfg;

	memset(shm, 0, shm_lay.total_size);
	shm->layout = shm_lay;
	memset(tab, 0, sizeof(*tab));
	shm->nb_pools = 1;
	snprintf(shm->pools[0].name, sizeof(shm->pools[0].name), "%s", mp->name);
	shm->pools[0].socket_id = (int32_t)rte_socket_id();
	if (!no_ind)
		snprintf(shm->pools[0].indirect.name, sizeof(shm->pools[0].indirect.name), "%s", mp_ind->name);
	c->nb_ports = 2;
	snprintf(c->ports[0].name, sizeof(c->ports[0].name), "src");
	snprintf(c->ports[1].name, sizeof(c->ports[1].name), "dst");
	c->ports[0].kind = src_kind;
	c->ports[1].kind = SBX_PORT_PCAP_FILE;
	c->nb_workers = 2;
	memcpy(shm->ports[1].mac, mac, 6);
	snprintf(shm->ports[1].tx_ring[sbx_mirror_txq(c, 0)], SBX_NAME_LEN, "%s", r0->name);
	snprintf(shm->ports[1].tx_ring[sbx_mirror_txq(c, 1)], SBX_NAME_LEN, "%s", ring_w1->name);
	tab->cset[0] = CSET;
}

/* Session 0 of the tables: mirror both directions of port 0 to port 1. */
static struct sbx_mirror_cfg *session(uint8_t encap, uint8_t strategy, uint32_t threshold, uint32_t snaplen,
				      uint32_t sample)
{
	struct sbx_mirror_cfg *m = &tab->cfg.mirrors[0];

	memset(m, 0, sizeof(*m));
	tab->cfg.nb_mirrors = 1;
	m->id = 865;
	m->nb_sources = 1;
	m->sources[0] = (struct sbx_mirror_source){ .port = 0, .direction = SBX_DIR_BOTH };
	m->sample = sample;
	m->snaplen = snaplen;
	m->dst_port = 1;
	m->encap = encap;
	m->vlan = 100;
	m->ip_version = 4;
	memcpy(m->src_ip, (uint8_t[]){ 192, 0, 2, 1 }, 4);
	memcpy(m->dst_ip, (uint8_t[]){ 192, 0, 2, 2 }, 4);
	memcpy(m->dst_mac, (uint8_t[]){ 0x02, 0, 0, 0, 0, 0x22 }, 6);
	m->ttl = 64;
	m->df = true;
	m->copy_strategy = strategy;
	m->copy_threshold = threshold;
	return m;
}

static struct sbx_mirror_counters *ctr(unsigned int w)
{
	return &sbx_shm_worker(shm, w)->stats.mirror[CSET];
}

static bool setup(struct sbx_mirror_engine *e, unsigned int w)
{
	char err[256] = "";
	int rc = sbx_mirror_setup(e, shm, tab, w, err, sizeof(err));

	if (rc != 0)
		printf("# sbx_mirror_setup: %s\n", err);
	return rc == 0;
}

/* A one-segment Ethernet/IPv4 frame of @p len bytes whose payload bytes derive from @p seed. */
static struct rte_mbuf *frame(uint32_t len, uint8_t seed)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	uint8_t *d;
	uint32_t i;

	if (m == NULL)
		return NULL;
	d = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	for (i = 0; i < len; i++)
		d[i] = (uint8_t)(i * 7 + seed);
	if (len >= 16) {
		memcpy(d, (uint8_t[]){ 0x02, 0, 0, 0, 0, 0xbb, 0x02, 0, 0, 0, 0, 0xaa, 0x08, 0x00, 0x45, 0x00 }, 16);
		d[20] = seed; /* identifies the frame in a copy */
	}
	return m;
}

static uint16_t frames(struct rte_mbuf **f, uint16_t n, uint32_t len, uint8_t seed0)
{
	uint16_t i;

	for (i = 0; i < n; i++)
		f[i] = frame(len, (uint8_t)(seed0 + i));
	return n;
}

static void free_all(struct rte_mbuf **f, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		rte_pktmbuf_free(f[i]);
}

static unsigned int drain(struct rte_ring *r, struct rte_mbuf **out, unsigned int max)
{
	return rte_ring_sc_dequeue_burst(r, (void **)out, max, NULL);
}

/* Mirror the @p n frames @p f received on port 0, send the copies, take them off ring @p r. */
static unsigned int mirror_rx(struct sbx_mirror_engine *e, struct rte_mbuf **f, uint16_t n, struct rte_ring *r,
			      struct rte_mbuf **out, unsigned int max)
{
	sbx_mirror_prepare(e, 0, SBX_DIR_RX, f, n);
	sbx_mirror_flush(e);
	return drain(r, out, max);
}

/* The bytes of @p m, linearised into @p buf (at most @p cap). @return pkt_len. */
static uint32_t bytes(const struct rte_mbuf *m, uint8_t *buf, uint32_t cap)
{
	uint32_t len = RTE_MIN(m->pkt_len, cap);
	const void *p = rte_pktmbuf_read(m, 0, len, buf);

	if (p != buf)
		memcpy(buf, p, len);
	return m->pkt_len;
}

static bool pool_full(const char *after)
{
	unsigned int avail = rte_mempool_avail_count(mp), avail_ind = rte_mempool_avail_count(mp_ind);

	return check(avail == POOL_N && avail_ind == IND_N,
		     "after %s every mbuf is back in the pool (%u of %u) and the indirect pool (%u of %u)", after,
		     avail, POOL_N, avail_ind, IND_N);
}

/* Start one part: the world, session 0 as given, worker 0's engine set up (a TAP line). @return the
 * session's config, NULL when the engine could not be set up. */
static const struct sbx_mirror_cfg *begin(struct sbx_mirror_engine *e, uint8_t src_kind, struct rte_ring *r0,
					  uint8_t encap, uint8_t strategy, uint32_t threshold, uint32_t snaplen,
					  uint32_t sample, const char *what)
{
	const struct sbx_mirror_cfg *mc;

	world(src_kind, r0);
	mc = session(encap, strategy, threshold, snaplen, sample);
	return check(setup(e, 0), "%s: engine set up", what) ? mc : NULL;
}

/* End one part: free its @p n frames @p f, no session left, every mbuf back in the pool. */
static void end(struct sbx_mirror_engine *e, const char *what, struct rte_mbuf **f, unsigned int n)
{
	free_all(f, n);
	sbx_mirror_teardown(e);
	pool_full(what);
}

static uint32_t gre_seq(const struct rte_mbuf *m)
{
	uint8_t b[4];
	const uint8_t *p = rte_pktmbuf_read(m, 34 + 4, 4, b);

	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* What make_copy must write for an ERSPAN II copy of frame @p f cut to @p cap bytes: the outer
 * header (erspan.c, tested on its own by test_erspan_parity), GRE with sequence 0, ERSPAN II with
 * index = port 0, then the frame. @return length. */
static uint32_t erspan2_expect(const struct sbx_mirror_cfg *mc, const struct rte_mbuf *f, uint32_t cap,
			       uint16_t ip_id, uint8_t *out)
{
	static const uint8_t mac[6] = DST_MAC_PORT;
	struct sbx_erspan_fields ef = { .version = 1 };
	const uint8_t *fd = rte_pktmbuf_mtod(f, const uint8_t *);
	uint32_t ge;

	sbx_erspan_fields_from_frame(&ef, fd, f->pkt_len, 0);
	ef.session_id = mc->id;
	ef.truncated = cap < f->pkt_len;
	ef.seq_present = true;
	ef.index = 0;
	ge = (uint32_t)sbx_gre_erspan_write(out + 34, &ef);
	sbx_outer_write(out, mc, mac, ge + cap, ip_id);
	memcpy(out + 34 + ge, fd, cap);
	return 34 + ge + cap;
}

static void test_copy_or_share(struct sbx_mirror_engine *e)
{
	static const uint32_t len[4] = { 64, 512, 513, 1500 };
	struct rte_mbuf *f[4], *out[8];
	uint8_t a[2048], b[2048];
	unsigned int n, i, same = 0, cloned = 0;
	uint64_t sum = 0;

	if (begin(e, SBX_PORT_ETHDEV, ring_w0,
		  SBX_ENCAP_SPAN, SBX_COPY_ADAPTIVE, 512, 0, 1, "SPAN, adaptive 512, calloc'd shm") == NULL)
		return;
	check(e->dst_wait_cycles == 0, "a live source port: copies never wait for the destination");
	for (i = 0; i < 4; i++) {
		f[i] = frame(len[i], (uint8_t)i);
		sum += len[i];
	}
	n = mirror_rx(e, f, 4, ring_w0, out, 8);
	check(n == 4, "4 frames of 64, 512, 513, 1500 B: 4 copies on the mirror ring (%u)", n);
	check(ctr(0)->copied == 2 && ctr(0)->shared == 2,
	      "frames <= threshold 512 copied, bigger ones shared (copied %" PRIu64 ", shared %" PRIu64 ")",
	      ctr(0)->copied, ctr(0)->shared);
	check(ctr(0)->mirrored_pkts == 4 && ctr(0)->mirrored_bytes == sum,
	      "mirrored 4 frames, %" PRIu64 " bytes (%" PRIu64 ", %" PRIu64 ")", sum, ctr(0)->mirrored_pkts,
	      ctr(0)->mirrored_bytes);
	for (i = 0; i < n && i < 4; i++) {
		uint32_t la = bytes(out[i], a, sizeof(a)), lb = bytes(f[i], b, sizeof(b));

		same += la == lb && memcmp(a, b, la) == 0;
		cloned += RTE_MBUF_CLONED(out[i]) ? 1u << i : 0;
	}
	check(same == 4, "SPAN copies are the frames byte for byte (%u of 4)", same);
	check(cloned == 0xc, "the two big copies are indirect mbufs of the frames, the small ones private (mask %#x)",
	      cloned);
	check(rte_mbuf_refcnt_read(f[3]) == 2, "a shared frame holds one more reference while its copy lives");
	free_all(out, n);
	check(rte_mbuf_refcnt_read(f[3]) == 1, "freeing the copy gives the reference back");

	/* the strategy overrides the size */
	session(SBX_ENCAP_SPAN, SBX_COPY_COPY, 512, 0, 1);
	sbx_mirror_teardown(e);
	setup(e, 0);
	memset(ctr(0), 0, sizeof(*ctr(0)));
	sbx_mirror_prepare(e, 0, SBX_DIR_RX, &f[3], 1);
	session(SBX_ENCAP_SPAN, SBX_COPY_SHARE, 512, 0, 1);
	n = mirror_rx(e, &f[0], 1, ring_w0, out, 8);
	check(n == 2 && ctr(0)->copied == 1 && ctr(0)->shared == 1 && !RTE_MBUF_CLONED(out[0]) &&
		      RTE_MBUF_CLONED(out[1]),
	      "strategy copy copies a 1500 B frame, strategy share shares a 64 B one");
	free_all(out, n);
	end(e, "copy vs share", f, 4);
}

static void test_rspan(struct sbx_mirror_engine *e)
{
	struct rte_mbuf *f[3], *out[4];
	uint8_t a[2048], x[2048];
	unsigned int n, i, good = 0;

	if (begin(e, SBX_PORT_ETHDEV, ring_w0, SBX_ENCAP_RSPAN, SBX_COPY_ADAPTIVE, 512, 0, 1, "RSPAN vlan 100") ==
	    NULL)
		return;
	f[0] = frame(64, 1);
	f[1] = frame(1500, 2);
	f[2] = frame(11, 3); /* no room for the MACs */
	n = mirror_rx(e, f, 3, ring_w0, out, 4);
	check(n == 2 && ctr(0)->drop_malformed == 1, "an 11 B frame cannot carry the tag: drop_malformed (%u copies)",
	      n);
	for (i = 0; i < n && i < 2; i++) {
		const uint8_t *fd = rte_pktmbuf_mtod(f[i], const uint8_t *);
		uint32_t fl = f[i]->pkt_len, la = bytes(out[i], a, sizeof(a));

		memcpy(x, fd, 12);
		memcpy(x + 12, (uint8_t[]){ 0x81, 0x00, 0x00, 100 }, 4);
		memcpy(x + 16, fd + 12, fl - 12);
		good += la == fl + 4 && memcmp(a, x, la) == 0;
	}
	check(good == 2, "RSPAN copies (one copied, one shared): MACs, 81 00 00 64, the rest (%u of 2)", good);
	check(ctr(0)->copied == 1 && ctr(0)->shared == 1, "RSPAN: 64 B copied, 1500 B shared");
	free_all(out, n);
	end(e, "RSPAN", f, 3);
}

static void test_erspan2(struct sbx_mirror_engine *e)
{
	struct rte_mbuf *f[3], *out[4];
	uint8_t a[2048], x[2048];
	const struct sbx_mirror_cfg *mc;
	unsigned int n;
	uint32_t la, lx;

	/* whole frames */
	mc = begin(e, SBX_PORT_ETHDEV, ring_w0, SBX_ENCAP_ERSPAN2, SBX_COPY_ADAPTIVE, 512, 0, 1, "ERSPAN II");
	if (mc == NULL)
		return;
	f[0] = frame(100, 1);
	n = mirror_rx(e, f, 1, ring_w0, out, 4);
	if (check(n == 1, "ERSPAN II: one copy")) {
		la = bytes(out[0], a, sizeof(a));
		lx = erspan2_expect(mc, f[0], 100, 0, x);
		check(la == 150 && la == lx && memcmp(a, x, la) == 0,
		      "ERSPAN II copy of 100 B: 50 B header (Eth, IPv4, GRE + seq, ERSPAN II), frame (%u B)",
		      la);
		check(a[12] == 0x08 && a[13] == 0x00 && a[23] == 47 && (a[16] << 8 | a[17]) == 136 && a[34] == 0x10 &&
			      a[36] == 0x88 && a[37] == 0xbe && a[42] >> 4 == 1 && (a[44] & 0x04) == 0 &&
			      ((a[44] & 3) << 8 | a[45]) == 865,
		      "by hand: IPv4 proto 47, total length 136, GRE S bit, 0x88BE, ERSPAN ver 1, no T, session 865");
		check(memcmp(a, (uint8_t[]){ 0x02, 0, 0, 0, 0, 0x22 }, 6) == 0 &&
			      memcmp(a + 6, (uint8_t[])DST_MAC_PORT, 6) == 0,
		      "outer MACs: the session's destination, the destination port's own MAC as source");
		free_all(out, n);
	}
	sbx_mirror_teardown(e);
	free_all(f, 1);

	/* snaplen 64: a 200 B frame is cut and marked, a 60 B one is not */
	mc = begin(e, SBX_PORT_ETHDEV, ring_w0,
		  SBX_ENCAP_ERSPAN2, SBX_COPY_ADAPTIVE, 512, 64, 1, "ERSPAN II, snaplen 64");
	if (mc == NULL)
		return;
	f[0] = frame(200, 1);
	f[1] = frame(60, 2);
	f[2] = frame(1500, 3);
	n = mirror_rx(e, f, 2, ring_w0, out, 4);
	if (check(n == 2, "snaplen 64: two copies")) {
		la = bytes(out[0], a, sizeof(a));
		lx = erspan2_expect(mc, f[0], 64, 0, x);
		x[34 + 4 + 3] = 0; /* sequence 0 */
		check(la == 50 + 64 && la == lx && memcmp(a, x, la) == 0 && (a[44] & 0x04) &&
			      (a[16] << 8 | a[17]) == 100,
		      "200 B frame at snaplen 64: 50 + 64 B, T bit set, IPv4 total length 100 (%u B)", la);
		la = bytes(out[1], a, sizeof(a));
		lx = erspan2_expect(mc, f[1], 60, 1, x);
		x[34 + 4 + 3] = 1; /* sequence 1 */
		check(la == 50 + 60 && la == lx && memcmp(a, x, la) == 0 && !(a[44] & 0x04),
		      "60 B frame under snaplen 64: whole, no T bit, sequence 1, IP id 1 (%u B)", la);
		check(ctr(0)->truncated == 1, "truncated counts the cut copy only (%" PRIu64 ")", ctr(0)->truncated);
		free_all(out, n);
	}
	sbx_mirror_teardown(e);

	/* snaplen on a shared frame: the clone is cut (chain_trim), the header in its own mbuf */
	mc = begin(e, SBX_PORT_ETHDEV, ring_w0,
		  SBX_ENCAP_ERSPAN2, SBX_COPY_ADAPTIVE, 32, 100, 1, "ERSPAN II, shared and cut");
	if (mc == NULL) {
		free_all(f, 3);
		return;
	}
	n = mirror_rx(e, &f[2], 1, ring_w0, out, 4);
	if (check(n == 1, "snaplen 100, threshold 32: one copy of a 1500 B frame")) {
		la = bytes(out[0], a, sizeof(a));
		lx = erspan2_expect(mc, f[2], 100, 0, x);
		check(la == 150 && la == lx && memcmp(a, x, la) == 0 && out[0]->nb_segs == 2 && ctr(0)->shared == 1 &&
			      ctr(0)->truncated == 1 && f[2]->pkt_len == 1500 && f[2]->data_len == 1500,
		      "shared and cut: header mbuf + 100 B clone, T bit, frame untouched (%u B, %u segs)",
		      la, out[0]->nb_segs);
		free_all(out, n);
	}
	end(e, "ERSPAN II and snaplen", f, 3);
}

/* VXLAN (issue 13): what make_copy must write for a copy of @p f (@p cap bytes of it; linearised in
 * @p fb): sbx_vxlan_write() (tested on its own by test_vxlan) with the flow hash's source port and
 * the IPv6 checksum over the copied bytes, then the frame. @return length. */
static uint32_t vxlan_expect(const struct sbx_mirror_cfg *mc, const struct rte_mbuf *f, const uint8_t *fb,
			     uint32_t cap, uint16_t ip_id, uint8_t *out)
{
	static const uint8_t mac[6] = DST_MAC_PORT;
	uint16_t sport = sbx_vxlan_src_port(sbx_flow_hash(rte_pktmbuf_mtod(f, const uint8_t *), f->data_len,
							  SBX_FLOW_HASH_5TUPLE, SBX_FLOW_HASH_SEED));
	uint32_t h = (uint32_t)sbx_vxlan_write(out, mc, mac, cap, sport, ip_id, sbx_csum16(fb, cap, 0));

	memcpy(out + h, fb, cap);
	return h + cap;
}

/* The UDP datagram of an IPv6 VXLAN copy @p a verifies (pseudo-header + datagram sum to 0xffff). */
static bool udp6_verifies(const uint8_t *a, uint32_t len)
{
	uint32_t ulen = (uint32_t)(a[18] << 8 | a[19]);
	uint8_t ph[8] = { 0, 0, (uint8_t)(ulen >> 8), (uint8_t)ulen, 0, 0, 0, 17 };
	uint16_t s;

	if (len != 54 + ulen || a[20] != 17)
		return false;
	s = sbx_csum16(a + 22, 32, 0);
	s = sbx_csum16(ph, 8, s);
	return sbx_csum16(a + 54, ulen, s) == 0xffff;
}

/* A chain of three segments of @p l0, @p l1, @p l2 bytes (odd lengths put segments at odd offsets):
 * one Ethernet/IPv4/UDP frame. */
static struct rte_mbuf *chain3(uint32_t l0, uint32_t l1, uint32_t l2, uint8_t seed)
{
	struct rte_mbuf *m = frame(l0, seed), *b = frame(l1, (uint8_t)(seed + 1)), *c = frame(l2, (uint8_t)(seed + 2));

	if (m == NULL || b == NULL || c == NULL || rte_pktmbuf_chain(m, b) || rte_pktmbuf_chain(m, c))
		return NULL;
	rte_pktmbuf_mtod(m, uint8_t *)[23] = 17; /* UDP: the flow hash sees ports */
	return m;
}

static void test_vxlan(struct sbx_mirror_engine *e)
{
	struct rte_mbuf *f[4], *out[8];
	uint8_t a[2048], x[2048], fb[2048];
	struct sbx_mirror_cfg *mc;
	unsigned int n, i, good = 0, ok6 = 0;
	uint32_t la, lx;

	/* IPv4 outer, adaptive 512: a 100 B frame copied, a 1500 B one shared; VNI and port of the session */
	if (begin(e, SBX_PORT_ETHDEV, ring_w0, SBX_ENCAP_VXLAN, SBX_COPY_ADAPTIVE, 512, 0, 1, "VXLAN over IPv4") == NULL)
		return;
	mc = &tab->cfg.mirrors[0];
	mc->vni = 0x123456;
	mc->udp_port = 4789;
	sbx_mirror_teardown(e);
	setup(e, 0);
	f[0] = frame(100, 1);
	f[1] = frame(1500, 2);
	n = mirror_rx(e, f, 2, ring_w0, out, 8);
	for (i = 0; i < n && i < 2; i++) {
		bytes(f[i], fb, sizeof(fb));
		la = bytes(out[i], a, sizeof(a));
		lx = vxlan_expect(mc, f[i], fb, f[i]->pkt_len, (uint16_t)i, x);
		good += la == lx && memcmp(a, x, la) == 0;
	}
	check(n == 2 && good == 2 && ctr(0)->copied == 1 && ctr(0)->shared == 1 && !RTE_MBUF_CLONED(out[0]) &&
		      out[1]->nb_segs == 2,
	      "VXLAN/IPv4: a copied 100 B and a shared 1500 B copy, 50 B header + frame byte for byte (%u of %u)", good, n);
	if (n == 2)
		check(a[23] == 17 && (a[36] << 8 | a[37]) == 4789 && (a[34] << 8 | a[35]) >= 49152 && a[40] == 0 &&
			      a[41] == 0 && a[42] == 0x08 && a[46] == 0x12 && a[47] == 0x34 && a[48] == 0x56,
		      "VXLAN/IPv4 by hand: UDP, port 4789, source port %u >= 49152, checksum 0, flags I, VNI 0x123456 "
		      "(no GRE sequence number written into it)", a[34] << 8 | a[35]);
	free_all(out, n);
	sbx_mirror_teardown(e);
	free_all(f, 2);

	/* IPv6 outer, port 8472: copy strategy, share strategy, snaplen, and chains with segments at
	 * odd offsets (the UDP checksum adds them up) */
	for (i = 0; i < 2; i++) {
		static const char *const what[2] = { "VXLAN over IPv6, copy, snaplen 1000", "VXLAN over IPv6, share, snaplen 1000" };
		unsigned int k;

		if (begin(e, SBX_PORT_ETHDEV, ring_w0, SBX_ENCAP_VXLAN, i ? SBX_COPY_SHARE : SBX_COPY_COPY, 512, 1000, 1,
			  what[i]) == NULL)
			return;
		mc = &tab->cfg.mirrors[0];
		mc->ip_version = 6;
		memcpy(mc->src_ip, (uint8_t[]){ 0x20, 0x01, 0x0d, 0xb8, [15] = 1 }, 16);
		memcpy(mc->dst_ip, (uint8_t[]){ 0x20, 0x01, 0x0d, 0xb8, [15] = 2 }, 16);
		mc->vni = 7777;
		mc->udp_port = 8472;
		sbx_mirror_teardown(e);
		setup(e, 0);
		f[0] = frame(61, 3);
		f[1] = chain3(101, 333, 600, 4);  /* 1034 B: cut at 1000 in the third segment */
		f[2] = chain3(15, 1, 500, 7);     /* 516 B, a 1 B segment at an odd offset */
		f[3] = frame(1500, 9);
		good = ok6 = 0;
		n = mirror_rx(e, f, 4, ring_w0, out, 8);
		for (k = 0; k < n && k < 4; k++) {
			uint32_t cap = RTE_MIN(f[k]->pkt_len, 1000u);

			bytes(f[k], fb, sizeof(fb));
			la = bytes(out[k], a, sizeof(a));
			lx = vxlan_expect(mc, f[k], fb, cap, (uint16_t)k, x);
			good += la == lx && memcmp(a, x, la) == 0;
			ok6 += udp6_verifies(a, la) && (a[56] << 8 | a[57]) == 8472 && a[62] == 0x08 &&
			       (a[66] << 16 | a[67] << 8 | a[68]) == 7777;
		}
		check(n == 4 && good == 4 && ok6 == 4 && ctr(0)->truncated == 2 &&
			      (i ? ctr(0)->shared : ctr(0)->copied) == 4,
		      "%s: 4 copies (61 B, chains of 101+333+600 and 15+1+500 B, 1500 B), 70 B header + frame, "
		      "UDP checksum verifies, port 8472, VNI 7777 (%u equal, %u verify)", what[i], good, ok6);
		free_all(out, n);
		end(e, what[i], f, 4);
	}

	/* filter and sampling come before the encapsulation, as for ERSPAN: "ip" drops 2 ARP frames,
	 * 1 in 2 of the 4 IPv4 ones is mirrored */
	if (begin(e, SBX_PORT_ETHDEV, ring_w0, SBX_ENCAP_VXLAN, SBX_COPY_ADAPTIVE, 512, 0, 2, "VXLAN, filter ip, sample 2") ==
	    NULL)
		return;
	mc = &tab->cfg.mirrors[0];
	snprintf(mc->filter, sizeof(mc->filter), "ip");
	mc->vni = 5;
	mc->udp_port = 4789;
	sbx_mirror_teardown(e);
	setup(e, 0);
	frames(f, 4, 80, 20);
	rte_pktmbuf_mtod(f[1], uint8_t *)[12] = 0x08;
	rte_pktmbuf_mtod(f[1], uint8_t *)[13] = 0x06;
	rte_pktmbuf_mtod(f[2], uint8_t *)[13] = 0x06;
	{
		struct rte_mbuf *g[2] = { frame(90, 30), frame(91, 31) };

		n = mirror_rx(e, f, 4, ring_w0, out, 8);
		n += mirror_rx(e, g, 2, ring_w0, out + n, 8 - n);
		good = 0;
		for (i = 0; i < n && i < 2; i++) {
			const struct rte_mbuf *src = i == 0 ? f[0] : g[0];

			bytes(src, fb, sizeof(fb));
			la = bytes(out[i], a, sizeof(a));
			lx = vxlan_expect(mc, src, fb, src->pkt_len, (uint16_t)i, x);
			good += la == lx && memcmp(a, x, la) == 0;
		}
		check(n == 2 && good == 2 && ctr(0)->filtered_out == 2 && ctr(0)->sampled_out == 2,
		      "VXLAN, filter \"ip\", sample 2: 2 ARP frames filtered out, 2 of 4 IPv4 frames sampled out, the 1st "
		      "and 3rd IPv4 frames mirrored (%u copies, %u right)", n, good);
		free_all(out, n);
		free_all(g, 2);
	}
	end(e, "VXLAN, filter and sample", f, 4);
}

static void test_sampling(struct sbx_mirror_engine *e)
{
	struct rte_mbuf *f[10], *out[64];
	unsigned int b, n = 0, i, in_order = 0;

	if (begin(e, SBX_PORT_ETHDEV, ring_w0, SBX_ENCAP_SPAN, SBX_COPY_ADAPTIVE, 512, 0, 4, "sampling 1 in 4") ==
	    NULL)
		return;
	for (b = 0; b < 10; b++) {
		frames(f, 10, 64, (uint8_t)(b * 10));
		sbx_mirror_prepare(e, 0, SBX_DIR_RX, f, 10);
		sbx_mirror_flush(e);
		free_all(f, 10);
	}
	n = drain(ring_w0, out, 64);
	check(n == 25 && ctr(0)->mirrored_pkts == 25 && ctr(0)->sampled_out == 75,
	      "100 frames in bursts of 10, 1 in 4: exactly 25 mirrored, 75 sampled out (%u, %" PRIu64 ")", n,
	      ctr(0)->sampled_out);
	for (i = 0; i < n; i++)
		in_order += rte_pktmbuf_mtod(out[i], uint8_t *)[20] == i * 4;
	check(in_order == 25, "the mirrored ones are frames 0, 4, 8, ... across bursts (%u of 25)", in_order);
	free_all(out, n);
	end(e, "sampling", NULL, 0);
}

static void test_commit_tx(struct sbx_mirror_engine *e)
{
	struct rte_mbuf *rx[3], *tx[8], *out[16];
	struct sbx_mirror_rt *rt = &e->s[0];
	unsigned int n, i, seeds = 0;
	static const uint8_t want[8] = { 100, 101, 102, 0, 1, 2, 3, 4 };

	if (begin(e, SBX_PORT_ETHDEV, ring_w0, SBX_ENCAP_SPAN, SBX_COPY_ADAPTIVE, 512, 0, 1, "commit_tx") == NULL)
		return;
	frames(rx, 3, 64, 100);
	frames(tx, 8, 64, 0);
	sbx_mirror_prepare(e, 0, SBX_DIR_RX, rx, 3);
	sbx_mirror_prepare(e, 0, SBX_DIR_TX, tx, 8);
	check(rt->ntx == 11, "3 RX and 8 TX copies buffered (%u)", rt->ntx);
	sbx_mirror_commit_tx(e, 0, 5);
	check(rt->ntx == 8, "the PMD took 5 of 8: the RX copies and the first 5 TX copies stay (%u)", rt->ntx);
	sbx_mirror_flush(e);
	n = drain(ring_w0, out, 16);
	for (i = 0; i < n && i < 8; i++)
		seeds += rte_pktmbuf_mtod(out[i], uint8_t *)[20] == want[i];
	check(n == 8 && seeds == 8, "on the ring: RX frames 0-2, then TX frames 0-4 (%u copies, %u in place)", n,
	      seeds);
	check(ctr(0)->mirrored_pkts == 8, "mirrored counts what was sent (%" PRIu64 ")", ctr(0)->mirrored_pkts);
	free_all(out, n);
	sbx_mirror_prepare(e, 0, SBX_DIR_TX, tx, 8);
	sbx_mirror_commit_tx(e, 0, 0);
	check(rt->ntx == 0, "the PMD took none: no copy stays (%u)", rt->ntx);
	sbx_mirror_prepare(e, 0, SBX_DIR_TX, tx, 8);
	sbx_mirror_commit_tx(e, 0, 8);
	check(rt->ntx == 8, "the PMD took all: every copy stays (%u)", rt->ntx);
	free_all(rx, 3);
	end(e, "commit_tx", tx, 8);
}

static void test_sequence(struct sbx_mirror_engine *e0, struct sbx_mirror_engine *e1)
{
	struct rte_mbuf *f[8], *o0[32], *o1[32];
	unsigned int n0, n1, i, ok0 = 0, ok1 = 0;
	static const uint32_t want0[8] = { 2, 3, 4, 5, 6, 14, 15, 16 }, want1[9] = { 0, 1, 7, 8, 9, 10, 11, 12, 13 };

	world(SBX_PORT_ETHDEV, ring_w0);
	session(SBX_ENCAP_ERSPAN2, SBX_COPY_ADAPTIVE, 512, 0, 1);
	if (!check(setup(e0, 0) && setup(e1, 1), "GRE sequence: two workers' engines on one session"))
		return;
	check(e0->s[0].seq_shared == e1->s[0].seq_shared && e0->s[0].seq_shared == &shm->mirrors[CSET].seq_next,
	      "both number from the session's one counter in shm");
	/* prepared first, sent second: numbers are given when sent */
	frames(f, 5, 64, 0);
	sbx_mirror_prepare(e0, 0, SBX_DIR_RX, f, 5);
	free_all(f, 5);
	frames(f, 2, 64, 0);
	sbx_mirror_prepare(e1, 0, SBX_DIR_RX, f, 2);
	free_all(f, 2);
	sbx_mirror_flush(e1); /* 0, 1 */
	sbx_mirror_flush(e0); /* 2..6 */
	frames(f, 7, 64, 0);
	sbx_mirror_prepare(e1, 0, SBX_DIR_RX, f, 7);
	sbx_mirror_flush(e1); /* 7..13 */
	free_all(f, 7);
	frames(f, 3, 64, 0);
	sbx_mirror_prepare(e0, 0, SBX_DIR_RX, f, 3);
	sbx_mirror_flush(e0); /* 14..16 */
	free_all(f, 3);
	n0 = drain(ring_w0, o0, 32);
	n1 = drain(ring_w1, o1, 32);
	for (i = 0; i < n0 && i < 8; i++)
		ok0 += gre_seq(o0[i]) == want0[i];
	for (i = 0; i < n1 && i < 9; i++)
		ok1 += gre_seq(o1[i]) == want1[i];
	check(n0 == 8 && ok0 == 8, "worker 0 sent 2-6 then 14-16: consecutive in each burst (%u copies, %u right)",
	      n0, ok0);
	check(n1 == 9 && ok1 == 9, "worker 1 sent 0-1 then 7-13: numbered at send time, not at prepare (%u, %u)", n1,
	      ok1);
	check(shm->mirrors[CSET].seq_next == 17, "17 numbers handed out, none twice, none lost (%" PRIu64 ")",
	      shm->mirrors[CSET].seq_next);
	free_all(o0, n0);
	free_all(o1, n1);
	sbx_mirror_teardown(e0);
	sbx_mirror_teardown(e1);
	pool_full("GRE sequence");
}

static void test_txfull(struct sbx_mirror_engine *e)
{
	struct rte_mbuf *f[20], *out[32];
	unsigned int cap = rte_ring_get_capacity(ring_small), n;
	uint64_t t0, ms;

	if (begin(e, SBX_PORT_ETHDEV, ring_small,
		  SBX_ENCAP_ERSPAN2, SBX_COPY_ADAPTIVE, 512, 0, 1, "drop_txfull on a small ring") == NULL)
		return;
	frames(f, 20, 64, 0);
	t0 = rte_get_tsc_cycles();
	sbx_mirror_prepare(e, 0, SBX_DIR_RX, f, 20);
	sbx_mirror_flush(e);
	ms = (rte_get_tsc_cycles() - t0) * 1000 / rte_get_tsc_hz();
	n = drain(ring_small, out, 32);
	check(n == cap && ctr(0)->mirrored_pkts == cap && ctr(0)->drop_txfull == 20 - cap,
	      "20 copies, room for %u: %u sent, drop_txfull %" PRIu64 " (freed)", cap, n, ctr(0)->drop_txfull);
	check(ctr(0)->mirrored_bytes == (uint64_t)cap * (50 + 64),
	      "mirrored_bytes counts only the sent ones (%" PRIu64 ")", ctr(0)->mirrored_bytes);
	check(ms < 500, "a live port's mirror never waits for room (%" PRIu64 " ms)", ms);
	check(shm->mirrors[CSET].seq_next == 20 && gre_seq(out[n - 1]) == n - 1,
	      "the dropped ones used their numbers (missing on the wire): next is 20");
	free_all(out, n);
	end(e, "drop_txfull", f, 20);
}

/* The primary of a replay: writes (dequeues) the destination's ring after 200 ms. */
static void *late_reader(void *arg)
{
	struct rte_mbuf **held = arg;
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	drain(ring_small, held, 32);
	return NULL;
}

static void test_replay_wait(struct sbx_mirror_engine *e)
{
	struct rte_mbuf *fill[32], *f[4], *held[32] = { 0 }, *out[32];
	unsigned int cap = rte_ring_get_capacity(ring_small), n, i;
	pthread_t th;
	uint64_t t0, ms;

	if (begin(e, SBX_PORT_PCAP_FILE, ring_small,
		  SBX_ENCAP_SPAN, SBX_COPY_ADAPTIVE, 512, 0, 1, "replay (every port a pcap file)") == NULL)
		return;
	check(e->dst_wait_cycles > 0 && e->dst_wait_cycles == rte_get_tsc_hz(),
	      "replay: a copy may wait 1 s for room (dst_wait_cycles %" PRIu64 ")", e->dst_wait_cycles);
	frames(fill, (uint16_t)cap, 64, 200);
	n = rte_ring_sp_enqueue_burst(ring_small, (void **)fill, cap, NULL);
	check(n == cap && rte_ring_full(ring_small), "the destination's ring is full (%u)", n);
	frames(f, 4, 64, 0);
	sbx_mirror_prepare(e, 0, SBX_DIR_RX, f, 4);
	if (!check(pthread_create(&th, NULL, late_reader, held) == 0, "a late reader started"))
		return;
	t0 = rte_get_tsc_cycles();
	sbx_mirror_flush(e);
	ms = (rte_get_tsc_cycles() - t0) * 1000 / rte_get_tsc_hz();
	pthread_join(th, NULL);
	n = drain(ring_small, out, 32);
	check(ctr(0)->drop_txfull == 0 && ctr(0)->mirrored_pkts == 4 && n == 4,
	      "the copies waited for room instead of being dropped (drop_txfull %" PRIu64 ", %u on the ring)",
	      ctr(0)->drop_txfull, n);
	check(ms >= 150 && ms < 1000, "flush waited for the reader (%" PRIu64 " ms, reader at 200 ms)", ms);
	for (i = 0; i < 32 && held[i] != NULL; i++)
		rte_pktmbuf_free(held[i]);
	free_all(out, n);
	end(e, "the replay wait", f, 4);
}

static void test_copy_one(struct sbx_mirror_engine *e)
{
	struct sbx_mirror_cfg mc = { .id = 9, .sample = 1, .encap = SBX_ENCAP_ERSPAN2, .ip_version = 4, .ttl = 64,
				     .copy_strategy = SBX_COPY_COPY };
	static const uint8_t mac[6] = DST_MAC_PORT;
	struct sbx_mirror_counters st = { 0 };
	uint64_t seq = 0;
	struct rte_mbuf *f = frame(300, 1), *c;
	uint8_t a[2048], x[2048];
	uint32_t la, lx;

	memset(e, 0, sizeof(*e));
	e->mp = mp;
	sbx_mirror_session_init(&e->s[0], &mc, mac, &st, &seq);
	c = sbx_mirror_copy_one(e, &e->s[0], f, 0, SBX_DIR_RX, 0);
	if (check(c != NULL, "sbx_mirror_copy_one (what --calibrate times) makes a copy")) {
		la = bytes(c, a, sizeof(a));
		lx = erspan2_expect(&mc, f, 300, 0, x);
		check(la == lx && memcmp(a, x, la) == 0 && st.copied == 1,
		      "the same bytes as the engine's copies, counted in the given counters");
		rte_pktmbuf_free(c);
	}
	rte_pktmbuf_free(f);
	pool_full("sbx_mirror_copy_one");
}

/* Copies of @p n frames @p f on ring @p r, each tagged with its frame's bucket (hash.usr) for
 * fields @p fields: @return how many of the @p got drained copies carry the bucket of their own
 * bytes (SPAN: the frame unchanged), each freed. */
static unsigned int tags_right(struct rte_ring *r, enum sbx_flow_hash_fields fields, unsigned int *got)
{
	struct rte_mbuf *out[64];
	unsigned int i, right = 0;

	*got = drain(r, out, RTE_DIM(out));
	for (i = 0; i < *got; i++) {
		uint32_t want = sbx_flow_hash(rte_pktmbuf_mtod(out[i], const uint8_t *), out[i]->data_len, fields,
					      SBX_FLOW_HASH_SEED) % SBX_GROUP_BUCKETS;

		right += out[i]->hash.usr == want;
		rte_pktmbuf_free(out[i]);
	}
	return right;
}

/*
 * Tool group tags (toolgroup.h): three sessions of port 0 RX, to groups g0 (5tuple, member port 1),
 * g1 (2tuple, member port 2) and g2 (5tuple, member port 3): the engine keeps the burst's hashes
 * (two sessions hash the same frames). Each copy carries the bucket of its frame's hash with its
 * group's fields; a next burst in the same array (other frames) is hashed anew, and so is a
 * session's selection (a filter) by the frames' places in the burst.
 */
static void test_group_tags(struct sbx_mirror_engine *e)
{
	struct rte_ring *rings[3] = { ring_w0, ring_w1, ring_small };
	static const uint8_t fields[3] = { SBX_FLOW_HASH_5TUPLE, SBX_FLOW_HASH_2TUPLE, SBX_FLOW_HASH_5TUPLE };
	struct sbx_config *c = &tab->cfg;
	struct rte_mbuf *f[8];
	unsigned int g, got, right, all = 0, want = 0;
	int round;

	world(SBX_PORT_PCAP_FILE, ring_w0);
	c->nb_ports = 4;
	for (g = 0; g < 3; g++) {
		struct sbx_mirror_cfg *m = &c->mirrors[g];

		c->ports[1 + g].kind = SBX_PORT_PCAP_FILE;
		snprintf(c->ports[1 + g].name, sizeof(c->ports[1 + g].name), "t%u", g);
		snprintf(shm->ports[1 + g].tx_ring[sbx_mirror_txq(c, 0)], SBX_NAME_LEN, "%s", rings[g]->name);
		c->tool_groups[g].nb_members = 1;
		c->tool_groups[g].members[0] = (uint16_t)(1 + g);
		c->tool_groups[g].hash = fields[g] == SBX_FLOW_HASH_2TUPLE ? SBX_GROUP_HASH_2TUPLE : SBX_GROUP_HASH_5TUPLE;
		tab->gslot[g] = (uint8_t)g;
		tab->cset[g] = (uint8_t)g;
		memset(m, 0, sizeof(*m));
		*m = (struct sbx_mirror_cfg){ .id = (uint16_t)(20 + g), .nb_sources = 1, .sample = 1, .dst_port = (uint16_t)(1 + g),
					      .dst_kind = SBX_DST_GROUP, .dst_group = (uint8_t)g, .copy_strategy = SBX_COPY_COPY };
		m->sources[0] = (struct sbx_mirror_source){ .port = 0, .direction = SBX_DIR_RX };
	}
	snprintf(c->mirrors[2].filter, sizeof(c->mirrors[2].filter), "ip");
	c->nb_tool_groups = 3;
	c->nb_mirrors = 3;
	if (!check(setup(e, 0), "tool group tags: engine set up (3 sessions of port 0 RX to 3 groups)"))
		return;
	for (round = 0; round < 2; round++) {
		frames(f, 8, 128, (uint8_t)(17 + 40 * round)); /* the same array, other frames each round */
		sbx_mirror_prepare(e, 0, SBX_DIR_RX, f, 8);
		sbx_mirror_flush(e);
		for (g = 0; g < 3; g++) {
			right = tags_right(rings[g], (enum sbx_flow_hash_fields)fields[g], &got);
			all += right;
			want += 8;
			if (got != 8 || right != got)
				printf("# round %d group %u: %u copies, %u with the right bucket\n", round, g, got, right);
		}
		free_all(f, 8);
	}
	check(all == want, "tool group tags: every copy carries its frame's bucket with its group's fields (5tuple, 2tuple, "
	      "5tuple behind a filter), the second burst in the same array hashed anew (%u of %u)", all, want);
	sbx_mirror_teardown(e);
	pool_full("tool group tags");
}

/* What the engine must write for an ERSPAN copy (II or III, as @p mc says) of frame @p f cut to
 * @p cap bytes, built with erspan.c for this one frame (fields, sbx_gre_erspan_write, the outer
 * header with its checksum from scratch) as the engine did before its per-burst header template:
 * the reference for the template's per-frame word and incremental checksum. @return length. */
static uint32_t erspan_expect(const struct sbx_mirror_cfg *mc, const struct rte_mbuf *f, uint32_t cap,
			      uint16_t ip_id, uint16_t port, uint8_t dir, uint64_t now_ns, uint8_t *out)
{
	static const uint8_t mac[6] = DST_MAC_PORT;
	struct sbx_erspan_fields ef = { .version = mc->encap == SBX_ENCAP_ERSPAN2 ? 1 : 2 };
	uint8_t lin[2048];
	const uint8_t *fd = rte_pktmbuf_read(f, 0, RTE_MIN(f->pkt_len, (uint32_t)sizeof(lin)), lin);
	uint32_t ge, outer = mc->ip_version == 6 ? 54 : 34;

	sbx_erspan_fields_from_frame(&ef, fd, RTE_MIN(f->pkt_len, 64u), 0);
	sbx_erspan_fields_session(&ef, mc, port, dir == SBX_DIR_TX, now_ns);
	ef.truncated = cap < f->pkt_len;
	ge = (uint32_t)sbx_gre_erspan_write(out + outer, &ef);
	sbx_outer_write(out, mc, mac, ge + cap, ip_id);
	memcpy(out + outer + ge, fd, cap);
	return outer + ge + cap;
}

/* Frame @p f with an 802.1Q tag (VLAN @p vid, PCP 5) after its MACs and IPv4 TOS @p tos. */
static struct rte_mbuf *tagged(uint32_t len, uint8_t seed, uint16_t vid, uint8_t tos)
{
	struct rte_mbuf *m = frame(len, seed);
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);

	memcpy(d + 12, (uint8_t[]){ 0x81, 0x00, (uint8_t)(0xa0 | vid >> 8), (uint8_t)vid, 0x08, 0x00, 0x45, tos }, 8);
	return m;
}

/* The per-burst header template: every copy of one burst gets its own per-frame fields (VLAN,
 * COS, En, T bit), IPv4 length, identification and checksum, byte for byte what erspan.c writes
 * field by field; copied and shared ones alike. */
static void test_burst_header(struct sbx_mirror_engine *e)
{
	struct rte_mbuf *f[6], *out[8];
	uint8_t a[2048], x[2048];
	const struct sbx_mirror_cfg *mc;
	unsigned int n, i, same = 0;

	mc = begin(e, SBX_PORT_ETHDEV, ring_w0, SBX_ENCAP_ERSPAN2, SBX_COPY_ADAPTIVE, 512, 1000, 1,
		   "ERSPAN II burst template");
	if (mc == NULL)
		return;
	f[0] = frame(100, 1);               /* untagged IPv4, TOS 0 */
	f[1] = frame(200, 2);
	rte_pktmbuf_mtod(f[1], uint8_t *)[15] = 0xe0; /* TOS: precedence 7 */
	f[2] = tagged(300, 3, 0x123, 0x40); /* tagged: VLAN 0x123, En 3, COS 2 */
	f[3] = tagged(1400, 4, 0x456, 0xa0); /* shared (over 512), cut at 1000: T bit */
	f[4] = frame(1300, 5);              /* shared, cut */
	f[5] = frame(60, 6);
	rte_pktmbuf_mtod(f[5], uint8_t *)[12] = 0x86; /* not IPv4: the general field code */
	rte_pktmbuf_mtod(f[5], uint8_t *)[13] = 0xdd;
	n = mirror_rx(e, f, 6, ring_w0, out, 8);
	for (i = 0; i < n && i < 6; i++) {
		uint32_t la = bytes(out[i], a, sizeof(a));
		uint32_t lx = erspan_expect(mc, f[i], RTE_MIN(f[i]->pkt_len, 1000u), (uint16_t)i, 0, SBX_DIR_RX, 0, x);

		x[34 + 4 + 3] = (uint8_t)i; /* the GRE sequence number given at send time */
		same += la == lx && memcmp(a, x, la) == 0;
		if (la != lx || memcmp(a, x, la) != 0)
			printf("# copy %u differs (%u vs %u B)\n", i, la, lx);
	}
	check(n == 6 && same == 6, "6 frames in one burst: each copy's header as erspan.c writes it (%u of %u)", same, n);
	check(ctr(0)->copied == 4 && ctr(0)->shared == 2 && ctr(0)->truncated == 2,
	      "4 copied, 2 shared (bigger than 512), both cut at snaplen 1000");
	check(n == 6 && (bytes(out[2], a, sizeof(a)), ((a[42] & 0x0f) << 8 | a[43]) == 0x123 && (a[44] >> 3 & 3) == 3 &&
			  a[44] >> 5 == 2),
	      "by hand: the tagged frame's copy says VLAN 0x123, En 3, COS 2");
	free_all(out, n);
	sbx_mirror_teardown(e);
	free_all(f, 6);

	/* IPv6 outer, ERSPAN III with subheader, TX direction: through sbx_mirror_copy_one, whose
	 * header comes from the same template code, at a given time */
	{
		struct sbx_mirror_cfg m3 = { .id = 77, .sample = 1, .encap = SBX_ENCAP_ERSPAN3, .ip_version = 6,
					     .ttl = 9, .dscp = 10, .gra = SBX_GRA_IEEE1588, .hw_id = 5, .sgt = 0xbeef,
					     .platform_subheader = true, .copy_strategy = SBX_COPY_ADAPTIVE,
					     .copy_threshold = 512, .dst_mac = { 0x02, 0, 0, 0, 0, 0x33 } };
		static const uint8_t mac[6] = DST_MAC_PORT;
		struct sbx_mirror_counters st = { 0 };
		uint64_t seq = 0, now = 1764590000123456789ull;
		struct rte_mbuf *g[2] = { tagged(400, 7, 0x9, 0x20), frame(1500, 8) }, *c;
		unsigned int ok = 0;

		memset(m3.src_ip, 0x20, 16);
		memset(m3.dst_ip, 0x30, 16);
		memset(e, 0, sizeof(*e));
		e->mp = mp;
		sbx_mirror_session_init(&e->s[0], &m3, mac, &st, &seq);
		for (i = 0; i < 2; i++) {
			c = sbx_mirror_copy_one(e, &e->s[0], g[i], 3, SBX_DIR_TX, now);
			if (c == NULL)
				continue;
			ok += bytes(c, a, sizeof(a)) == erspan_expect(&m3, g[i], g[i]->pkt_len, 0, 3, SBX_DIR_TX, now, x) &&
			      memcmp(a, x, c->pkt_len) == 0;
			rte_pktmbuf_free(c);
		}
		check(ok == 2 && st.copied == 1 && st.shared == 1,
		      "ERSPAN III over IPv6, subheader, IEEE 1588 time, TX: copied and shared copies as erspan.c writes them");
		free_all(g, 2);
	}
	pool_full("the burst template");
}

/* The one-compare decision of a session without snaplen, RSPAN or strategy share: a one-segment
 * frame of at most min(threshold, room - header) bytes is a one-mbuf copy; at the limits (the
 * threshold, the data room) and for a chain the general code decides. Every copy is the frame
 * under the header erspan.c writes, byte for byte. */
static void test_one_compare(struct sbx_mirror_engine *e)
{
	static const struct {
		uint8_t strategy;
		uint32_t len[4]; /* 0: a 3-segment chain of 100 + 101 + 102 B */
		unsigned int copied, shared, one_seg; /* one_seg: mask of copies in one private mbuf */
		const char *what;
	} c[] = {
		{ SBX_COPY_ADAPTIVE, { 511, 512, 513, 0 }, 3, 1, 0xb, "adaptive 512: 511 and 512 B copied, 513 shared, a chain copied" },
		{ SBX_COPY_COPY, { 1997, 1998, 1999, 0 }, 4, 0, 0xf, "copy: 1997 and 1998 B in one mbuf with the 50 B header, 1999 B by the general code, a chain" },
	};
	static uint8_t a[4096], x[4096];
	unsigned int k;

	for (k = 0; k < RTE_DIM(c); k++) {
		struct rte_mbuf *f[4], *out[8];
		const struct sbx_mirror_cfg *mc;
		unsigned int n, i, same = 0, one = 0, sane = 0;
		const char *why = "";

		mc = begin(e, SBX_PORT_ETHDEV, ring_w0, SBX_ENCAP_ERSPAN2, c[k].strategy, 512, 0, 1, c[k].what);
		if (mc == NULL)
			return;
		for (i = 0; i < 4; i++)
			f[i] = c[k].len[i] ? frame(c[k].len[i], (uint8_t)(i + 1)) : chain3(100, 101, 102, (uint8_t)(i + 1));
		n = mirror_rx(e, f, 4, ring_w0, out, 8);
		for (i = 0; i < n && i < 4; i++) {
			uint32_t la = bytes(out[i], a, sizeof(a));
			uint32_t lx = erspan_expect(mc, f[i], f[i]->pkt_len, (uint16_t)i, 0, SBX_DIR_RX, 0, x);

			x[34 + 4 + 3] = (uint8_t)i; /* the GRE sequence number given at send time */
			same += la == lx && memcmp(a, x, la) == 0;
			one |= out[i]->nb_segs == 1 && !RTE_MBUF_CLONED(out[i]) ? 1u << i : 0;
			/* every segment within its buffer (data_off + data_len <= buf_len), lengths summed */
			sane += rte_mbuf_check(out[i], 1, &why) == 0;
		}
		check(sane == n, "%s: every copy passes rte_mbuf_check() (%u of %u%s%s)", c[k].what, sane, n,
		      sane == n ? "" : ": ", sane == n ? "" : why);
		check(n == 4 && same == 4 && ctr(0)->copied == c[k].copied && ctr(0)->shared == c[k].shared &&
			      (one & 0x3) == (c[k].one_seg & 0x3),
		      "%s (%u of %u as erspan.c writes them, copied %" PRIu64 ", shared %" PRIu64 ", one-mbuf mask %#x)",
		      c[k].what, same, n, ctr(0)->copied, ctr(0)->shared, one);
		free_all(out, n);
		end(e, c[k].what, f, 4);
	}
}

/* A pool runs dry halfway through a burst: the bulk allocation of the burst's copies (or of its
 * shares' indirect mbufs) fails, the engine takes what is left one at a time; the copies it cannot
 * make are counted drop_nombuf, the ones it makes are the first frames', and nothing leaks (a
 * share whose header mbuf was there but not its indirect mbuf, or the reverse, gives it back).
 * ERSPAN II: a share is a header mbuf of mp and an indirect mbuf of mp_ind (of mp without one). */
static void test_nombuf(struct sbx_mirror_engine *e)
{
	static const struct {
		uint8_t strategy;
		unsigned int left, left_ind, made; /* left: UINT32_MAX the pool as it is */
		bool no_ind;
		const char *what;
	} c[] = {
		{ SBX_COPY_COPY, 10, UINT32_MAX, 10, false, "copy, 10 mbufs left" },
		{ SBX_COPY_SHARE, 11, UINT32_MAX, 11, false, "share, 11 header mbufs left" },
		{ SBX_COPY_SHARE, UINT32_MAX, 7, 7, false, "share, 7 indirect mbufs left" },
		{ SBX_COPY_SHARE, 9, 20, 9, false, "share, 9 header and 20 indirect mbufs left" },
		{ SBX_COPY_SHARE, 11, UINT32_MAX, 5, true, "share without an indirect pool (both from one), 11 left" },
		{ SBX_COPY_COPY, 0, UINT32_MAX, 0, false, "copy, pool empty" },
		{ SBX_COPY_SHARE, UINT32_MAX, 0, 0, false, "share, indirect pool empty" },
	};
	struct rte_mbuf *f[32], *out[64], **hold = calloc(POOL_N, sizeof(*hold)), **hold_i = calloc(IND_N, sizeof(*hold));
	unsigned int k, nh, nhi, n, i, inorder, a0, ai0;

	if (!check(hold != NULL && hold_i != NULL, "drop_nombuf: room to hold the pools"))
		return;
	for (k = 0; k < RTE_DIM(c); k++) {
		bool share = c[k].strategy == SBX_COPY_SHARE;
		unsigned int per_main = share && c[k].no_ind ? 2 : 1, per_ind = share && !c[k].no_ind ? 1 : 0;
		char what[112];

		snprintf(what, sizeof(what), "pool dry mid-burst, %s", c[k].what);
		no_ind = c[k].no_ind;
		if (begin(e, SBX_PORT_ETHDEV, ring_w0, SBX_ENCAP_ERSPAN2, c[k].strategy, 512, 0, 1, what) == NULL) {
			no_ind = false;
			break;
		}
		no_ind = false;
		frames(f, 32, 64, 0);
		nh = nhi = 0;
		while (c[k].left != UINT32_MAX && rte_mempool_avail_count(mp) > c[k].left &&
		       (hold[nh] = rte_pktmbuf_alloc(mp)) != NULL)
			nh++;
		while (c[k].left_ind != UINT32_MAX && rte_mempool_avail_count(mp_ind) > c[k].left_ind &&
		       (hold_i[nhi] = rte_pktmbuf_alloc(mp_ind)) != NULL)
			nhi++;
		a0 = rte_mempool_avail_count(mp);
		ai0 = rte_mempool_avail_count(mp_ind);
		n = mirror_rx(e, f, 32, ring_w0, out, 64);
		for (i = 0, inorder = 0; i < n; i++) { /* byte 20 of frame i is i: byte 70 of its copy */
			uint8_t b;
			const uint8_t *p = rte_pktmbuf_read(out[i], 50 + 20, 1, &b);

			inorder += p != NULL && *p == i;
		}
		check(n == c[k].made && ctr(0)->mirrored_pkts == c[k].made && ctr(0)->drop_nombuf == 32 - c[k].made &&
			      inorder == n,
		      "%s: %u copies of the first frames, drop_nombuf %" PRIu64 " (%u sent, %u in order)", what,
		      c[k].made, ctr(0)->drop_nombuf, n, inorder);
		check(rte_mempool_avail_count(mp) == a0 - per_main * n &&
			      rte_mempool_avail_count(mp_ind) == ai0 - per_ind * n,
		      "%s: no mbuf lost in the engine (%u of %u free, %u of %u indirect, with %u copies out)", what,
		      rte_mempool_avail_count(mp), a0, rte_mempool_avail_count(mp_ind), ai0, n);
		free_all(out, n);
		free_all(hold, nh);
		free_all(hold_i, nhi);
		end(e, what, f, 32);
	}
	free(hold);
	free(hold_i);
}

/* A share's indirect mbuf comes from the indirect-mbuf pool, its header from the main pool (the
 * one-segment inline attach and rte_pktmbuf_clone() of a chain alike); without an indirect pool in
 * shm both come from the main pool. */
static void test_share_pools(struct sbx_mirror_engine *e)
{
	static const struct { uint8_t encap; bool chain, no_ind; const char *what; } c[] = {
		{ SBX_ENCAP_ERSPAN2, false, false, "ERSPAN II share of one segment" },
		{ SBX_ENCAP_SPAN, false, false, "SPAN share of one segment (no header)" },
		{ SBX_ENCAP_ERSPAN2, true, false, "ERSPAN II share of a 3-segment chain" },
		{ SBX_ENCAP_ERSPAN2, false, true, "ERSPAN II share, no indirect pool" },
	};
	unsigned int k;

	for (k = 0; k < RTE_DIM(c); k++) {
		struct rte_mbuf *f[1], *out[2], *ind;
		struct rte_mempool *want = c[k].no_ind ? mp : mp_ind;
		unsigned int n, ai0, segs_ind = 0, segs_main = 0;
		bool hdr = c[k].encap != SBX_ENCAP_SPAN;
		const struct rte_mbuf *s;

		no_ind = c[k].no_ind;
		if (begin(e, SBX_PORT_ETHDEV, ring_w0, c[k].encap, SBX_COPY_SHARE, 512, 0, 1, c[k].what) == NULL) {
			no_ind = false;
			break;
		}
		no_ind = false;
		f[0] = c[k].chain ? chain3(300, 301, 302, 5) : frame(1400, 5);
		ai0 = rte_mempool_avail_count(mp_ind);
		n = mirror_rx(e, f, 1, ring_w0, out, 2);
		ind = n == 1 && hdr ? out[0]->next : n == 1 ? out[0] : NULL;
		for (s = ind; s != NULL; s = s->next) {
			segs_ind += s->pool == want && RTE_MBUF_CLONED(s);
			segs_main += s->pool == mp;
		}
		check(n == 1 && (!hdr || out[0]->pool == mp) && segs_ind == (c[k].chain ? 3u : 1u) &&
			      (c[k].no_ind || (segs_main == 0 && rte_mempool_avail_count(mp_ind) == ai0 - segs_ind)) &&
			      out[0]->pkt_len == (hdr ? 50u : 0u) + f[0]->pkt_len,
		      "%s: the header from the pool, %u indirect mbufs from %s (%u of the main pool), %u B",
		      c[k].what, segs_ind, want->name, segs_main, n ? out[0]->pkt_len : 0);
		free_all(out, n);
		end(e, c[k].what, f, 1);
	}
}

/* A frame that is itself an indirect mbuf (a clone) is shared through its direct buffer. */
static void test_share_clone(struct sbx_mirror_engine *e)
{
	struct rte_mbuf *d, *f[1], *out[2];
	unsigned int n;

	if (begin(e, SBX_PORT_ETHDEV, ring_w0, SBX_ENCAP_SPAN, SBX_COPY_SHARE, 512, 0, 1, "share of a clone") == NULL)
		return;
	d = frame(700, 9);
	f[0] = rte_pktmbuf_clone(d, mp);
	n = mirror_rx(e, f, 1, ring_w0, out, 2);
	check(n == 1 && rte_mbuf_refcnt_read(d) == 3 && out[0]->buf_addr == d->buf_addr && out[0]->pkt_len == 700,
	      "the copy of a clone points at the direct buffer, which counts 3 references (%u)",
	      rte_mbuf_refcnt_read(d));
	free_all(out, n);
	check(rte_mbuf_refcnt_read(d) == 2, "freeing the copy gives its reference back");
	rte_pktmbuf_free(d);
	end(e, "share of a clone", f, 1);
}

/* Sampled TX copies remember which frame of the burst they are of (the selection is mapped back
 * to burst indexes): commit_tx keeps exactly the copies of frames the PMD took. */
static void test_sampled_commit(struct sbx_mirror_engine *e)
{
	struct rte_mbuf *tx[8], *out[8];
	unsigned int n, i, seeds = 0;

	if (begin(e, SBX_PORT_ETHDEV, ring_w0, SBX_ENCAP_SPAN, SBX_COPY_ADAPTIVE, 512, 0, 2, "sampled commit_tx") ==
	    NULL)
		return;
	frames(tx, 8, 64, 0);
	sbx_mirror_prepare(e, 0, SBX_DIR_TX, tx, 8); /* 1 in 2: copies of frames 0, 2, 4, 6 */
	sbx_mirror_commit_tx(e, 0, 5);              /* the PMD took frames 0-4 */
	sbx_mirror_flush(e);
	n = drain(ring_w0, out, 8);
	for (i = 0; i < n && i < 3; i++)
		seeds += rte_pktmbuf_mtod(out[i], uint8_t *)[20] == i * 2;
	check(n == 3 && seeds == 3, "1 in 2 of 8 TX frames, 5 sent: the copies of frames 0, 2, 4 stay (%u copies, %u right)",
	      n, seeds);
	free_all(out, n);
	end(e, "sampled commit_tx", tx, 8);
}

/* Session 0 as begin() sets it up, with the destination port's MTU @p mtu (shm, as the primary
 * publishes it) and oversize @p oversize. @return its config, NULL when not set up. */
static struct sbx_mirror_cfg *begin_mtu(struct sbx_mirror_engine *e, uint8_t encap, uint8_t strategy, uint16_t mtu,
					uint8_t oversize, const char *what)
{
	struct sbx_mirror_cfg *mc;

	world(SBX_PORT_ETHDEV, ring_w0);
	mc = session(encap, strategy, 512, 0, 1);
	mc->oversize = oversize;
	shm->ports[1].mtu = mtu;
	return check(setup(e, 0), "%s: engine set up", what) ? mc : NULL;
}

/* The ERSPAN T bit of copy @p m (IPv4 outer, 34 B): bit 10 of the first ERSPAN word. */
static bool t_bit(const struct rte_mbuf *m)
{
	uint8_t b[2];
	const uint8_t *p = rte_pktmbuf_read(m, 34 + 8 + 2, 2, b);

	return p != NULL && (p[0] & 0x04) != 0;
}

/*
 * Copies and the destination port's MTU (docs/MIRRORING.md "Copies and the destination's MTU"):
 * a copy may be an Ethernet frame of mtu + 14 bytes plus 4 per 802.1Q/802.1ad tag in front of its
 * L3 payload (SPAN and RSPAN copies keep the frame's tags and RSPAN adds one; an ERSPAN or VXLAN
 * copy's outer IP packet is its L3 payload); a longer one is cut to fit (ERSPAN: T bit) or, with
 * oversize drop, not made; both counted in tx_oversize. MTU 0 (unknown): no limit.
 */
static void test_mtu(struct sbx_mirror_engine *e)
{
	static const uint8_t strategies[] = { SBX_COPY_ADAPTIVE, SBX_COPY_COPY, SBX_COPY_SHARE };
	static const char *const sname[] = { "adaptive", "copy", "share" };
	struct rte_mbuf *f[4], *out[8];
	uint8_t a[2048], x[2048];
	const struct sbx_mirror_cfg *mc;
	unsigned int n, i, k, good;

	/* ERSPAN II to a port of MTU 1500, whatever the copy strategy: 1464 B fits exactly (50 + 1464
	 * = 1514), 1465 B and 1514 B are cut to 1464 B with the T bit */
	for (k = 0; k < RTE_DIM(strategies); k++) {
		char what[96];

		snprintf(what, sizeof(what), "MTU 1500, ERSPAN II, %s", sname[k]);
		mc = begin_mtu(e, SBX_ENCAP_ERSPAN2, strategies[k], 1500, SBX_OVERSIZE_TRUNCATE, what);
		if (mc == NULL)
			return;
		f[0] = frame(1464, 1);
		f[1] = frame(1465, 2);
		f[2] = frame(1514, 3);
		n = mirror_rx(e, f, 3, ring_w0, out, 8);
		good = 0;
		for (i = 0; i < n && i < 3; i++) {
			uint32_t la = bytes(out[i], a, sizeof(a)), lx = erspan2_expect(mc, f[i], 1464, (uint16_t)i, x);

			x[34 + 7] = (uint8_t)i; /* GRE sequence: numbered when sent, from 0 */
			good += la == 1514 && la == lx && memcmp(a, x, la) == 0 && t_bit(out[i]) == (i > 0);
		}
		check(n == 3 && good == 3, "%s: copies of 1464, 1465, 1514 B frames are 1514 B, the last two cut "
		      "to 1464 B with the T bit, byte for byte (%u of %u)", what, good, n);
		check(ctr(0)->tx_oversize == 2 && ctr(0)->truncated == 2,
		      "%s: tx_oversize 2, truncated 2 (%" PRIu64 ", %" PRIu64 ")", what, ctr(0)->tx_oversize,
		      ctr(0)->truncated);
		free_all(out, n);
		end(e, what, f, 3);
	}

	/* oversize drop: the 1465 B frame gets no copy */
	mc = begin_mtu(e, SBX_ENCAP_ERSPAN2, SBX_COPY_ADAPTIVE, 1500, SBX_OVERSIZE_DROP, "MTU 1500, oversize drop");
	if (mc == NULL)
		return;
	f[0] = frame(1464, 1);
	f[1] = frame(1465, 2);
	f[2] = frame(64, 3);
	n = mirror_rx(e, f, 3, ring_w0, out, 8);
	check(n == 2 && out[0]->pkt_len == 1514 && out[1]->pkt_len == 114 && !t_bit(out[0]) &&
		      ctr(0)->tx_oversize == 1 && ctr(0)->truncated == 0 && ctr(0)->mirrored_pkts == 2,
	      "oversize drop: 1464 B and 64 B frames copied whole, the 1465 B one not (tx_oversize %" PRIu64 ")",
	      ctr(0)->tx_oversize);
	free_all(out, n);
	end(e, "oversize drop", f, 3);

	/* VXLAN over IPv4 at MTU 1400: copies of at most 1414 B, the frame cut to 1364 B */
	mc = begin_mtu(e, SBX_ENCAP_VXLAN, SBX_COPY_ADAPTIVE, 1400, SBX_OVERSIZE_TRUNCATE, "MTU 1400, VXLAN");
	if (mc == NULL)
		return;
	f[0] = frame(1364, 1);
	f[1] = frame(1500, 2);
	n = mirror_rx(e, f, 2, ring_w0, out, 8);
	check(n == 2 && out[0]->pkt_len == 1414 && out[1]->pkt_len == 1414 && ctr(0)->tx_oversize == 1,
	      "VXLAN, MTU 1400: copies of 1364 B and 1500 B frames are 1414 B (%u B, %u B)", n ? out[0]->pkt_len : 0,
	      n > 1 ? out[1]->pkt_len : 0);
	free_all(out, n);
	end(e, "MTU 1400, VXLAN", f, 2);

	/* SPAN at MTU 1500: an untagged frame up to 1514 B, a tagged one up to 1518 B */
	mc = begin_mtu(e, SBX_ENCAP_SPAN, SBX_COPY_ADAPTIVE, 1500, SBX_OVERSIZE_TRUNCATE, "MTU 1500, SPAN");
	if (mc == NULL)
		return;
	f[0] = frame(1514, 1);
	f[1] = frame(1522, 2);
	f[2] = tagged(1518, 3, 7, 0);
	f[3] = tagged(1522, 4, 7, 0);
	n = mirror_rx(e, f, 4, ring_w0, out, 8);
	check(n == 4 && out[0]->pkt_len == 1514 && out[1]->pkt_len == 1514 && out[2]->pkt_len == 1518 &&
		      out[3]->pkt_len == 1518 && ctr(0)->tx_oversize == 2,
	      "SPAN, MTU 1500: untagged 1514, 1522 B -> 1514, 1514 B; tagged 1518, 1522 B -> 1518, 1518 B");
	good = 0;
	for (i = 0; i < n && i < 4; i++) {
		uint32_t la = bytes(out[i], a, sizeof(a));

		good += memcmp(rte_pktmbuf_mtod(f[i], const uint8_t *), a, la) == 0;
	}
	check(good == 4, "SPAN: the copies are the frames' first bytes (%u of 4)", good);
	free_all(out, n);
	end(e, "MTU 1500, SPAN", f, 4);

	/* RSPAN at MTU 1500: the session's tag is not part of the MTU (a 1514 B frame's copy of 1518 B
	 * passes), a longer frame is cut to 1514 B before the tag */
	mc = begin_mtu(e, SBX_ENCAP_RSPAN, SBX_COPY_ADAPTIVE, 1500, SBX_OVERSIZE_TRUNCATE, "MTU 1500, RSPAN");
	if (mc == NULL)
		return;
	f[0] = frame(1514, 1);
	f[1] = frame(1522, 2);
	n = mirror_rx(e, f, 2, ring_w0, out, 8);
	check(n == 2 && out[0]->pkt_len == 1518 && out[1]->pkt_len == 1518 && ctr(0)->tx_oversize == 1 &&
		      ctr(0)->truncated == 1,
	      "RSPAN, MTU 1500: 1514 B -> 1518 B whole, 1522 B -> 1518 B cut (%u B, %u B)", n ? out[0]->pkt_len : 0,
	      n > 1 ? out[1]->pkt_len : 0);
	free_all(out, n);
	end(e, "MTU 1500, RSPAN", f, 2);

	/* MTU unknown (0): no limit */
	mc = begin_mtu(e, SBX_ENCAP_ERSPAN2, SBX_COPY_ADAPTIVE, 0, SBX_OVERSIZE_DROP, "MTU unknown");
	if (mc == NULL)
		return;
	f[0] = frame(1900, 1);
	n = mirror_rx(e, f, 1, ring_w0, out, 8);
	check(n == 1 && out[0]->pkt_len == 1950 && ctr(0)->tx_oversize == 0, "MTU unknown: a 1900 B frame copied whole");
	free_all(out, n);
	end(e, "MTU unknown", f, 1);
}

/* Masks (issue #26): a masked session copies every frame (never shares), writes the pattern over
 * its region of the copy only (the frames stay as they were), over segments, behind every kind of
 * header; a short frame is masked to its end, a frame without the anchor copied as it is. */
static void test_mask(struct sbx_mirror_engine *e)
{
	static const uint8_t encaps[4] = { SBX_ENCAP_SPAN, SBX_ENCAP_RSPAN, SBX_ENCAP_ERSPAN2, SBX_ENCAP_VXLAN };
	static const char *const what[4] = { "mask under SPAN", "mask under RSPAN", "mask under ERSPAN II",
					     "mask under VXLAN/IPv6" };
	static uint8_t a[2048], x[2048], orig[4][2048];
	struct rte_mbuf *f[4], *out[8];
	struct sbx_mirror_cfg *mc;
	unsigned int n, k, i, good, same, ok6;

	for (i = 0; i < 4; i++) {
		if (begin(e, SBX_PORT_ETHDEV, ring_w0, encaps[i], SBX_COPY_SHARE, 0, 0, 1, what[i]) == NULL)
			return;
		mc = &tab->cfg.mirrors[0];
		mc->mask = (struct sbx_mask_cfg){ .from = SBX_MASK_L4, .offset = 4, .length = 1200, .pattern = 0xee };
		if (encaps[i] == SBX_ENCAP_VXLAN) {
			mc->ip_version = 6;
			memcpy(mc->src_ip, (uint8_t[]){ 0x20, 0x01, 0x0d, 0xb8, [15] = 1 }, 16);
			memcpy(mc->dst_ip, (uint8_t[]){ 0x20, 0x01, 0x0d, 0xb8, [15] = 2 }, 16);
			mc->udp_port = 4789;
		}
		sbx_mirror_teardown(e);
		setup(e, 0);
		f[0] = frame(100, 1);             /* region 38..1238: masked to its end */
		f[1] = frame(1500, 2);            /* region inside */
		f[2] = chain3(101, 333, 600, 3); /* 1034 B over three segments, masked to its end */
		f[3] = frame(80, 4);
		rte_pktmbuf_mtod(f[3], uint8_t *)[13] = 0x06; /* ARP: no L4 */
		for (k = 0; k < 4; k++) {
			rte_pktmbuf_mtod(f[k], uint8_t *)[20] = 0; /* not a fragment */
			rte_pktmbuf_mtod(f[k], uint8_t *)[21] = 0;
			bytes(f[k], orig[k], sizeof(orig[k]));
		}
		n = mirror_rx(e, f, 4, ring_w0, out, 8);
		good = same = ok6 = 0;
		for (k = 0; k < n && k < 4; k++) {
			uint32_t fl = f[k]->pkt_len, la = bytes(out[k], a, sizeof(a)), h;

			memcpy(x, orig[k], fl);
			if (k < 3)
				memset(x + 38, 0xee, RTE_MIN(fl, 1238u) - 38);
			if (encaps[i] == SBX_ENCAP_RSPAN) /* the MACs, the tag, the rest */
				good += la == fl + 4 && !memcmp(a, x, 12) && !memcmp(a + 16, x + 12, fl - 12);
			else {
				h = encaps[i] == SBX_ENCAP_SPAN ? 0 : encaps[i] == SBX_ENCAP_ERSPAN2 ? 50 : 70;
				good += la == fl + h && !memcmp(a + h, x, fl);
			}
			same += bytes(f[k], a, sizeof(a)) == fl && !memcmp(a, orig[k], fl);
			if (encaps[i] == SBX_ENCAP_VXLAN)
				ok6 += udp6_verifies(rte_pktmbuf_read(out[k], 0, RTE_MIN(out[k]->pkt_len, 2048u), x),
						     out[k]->pkt_len);
		}
		check(n == 4 && good == 4 && same == 4 && ctr(0)->copied == 4 && ctr(0)->shared == 0,
		      "%s, strategy share: 4 copies, none shared; pattern over L4 + 4.., every other byte the frame's; "
		      "the frames unchanged (%u right, %u unchanged)", what[i], good, same);
		check(ctr(0)->masked == 3 && ctr(0)->mask_short == 2 && ctr(0)->mask_no_anchor == 1,
		      "%s: masked 3, mask_short 2 (100 B, 1034 B), mask_no_anchor 1 (ARP)", what[i]);
		if (encaps[i] == SBX_ENCAP_VXLAN)
			check(ok6 == 4, "%s: the UDP checksum over the masked frame verifies (%u of 4)", what[i], ok6);
		free_all(out, n);
		end(e, what[i], f, 4);
	}
	/* a region over the IPv4 addresses: the header checksum of the copy is valid again */
	if (begin(e, SBX_PORT_ETHDEV, ring_w0, SBX_ENCAP_SPAN, SBX_COPY_ADAPTIVE, 512, 0, 1, "mask l3 +12") == NULL)
		return;
	tab->cfg.mirrors[0].mask = (struct sbx_mask_cfg){ .from = SBX_MASK_L3, .offset = 12, .length = 8 };
	sbx_mirror_teardown(e);
	setup(e, 0);
	f[0] = frame(100, 5);
	n = mirror_rx(e, f, 1, ring_w0, out, 8);
	if (n == 1)
		bytes(out[0], a, sizeof(a));
	check(n == 1 && sbx_csum16(a + 14, 20, 0) == 0xffff && a[26] == 0 && a[33] == 0 &&
		      a[25 - 13] == 0x08 && a[34] == (uint8_t)(34 * 7 + 5),
	      "mask l3 +12 len 8, pattern 0: the addresses are 0 and the IPv4 header checksum verifies");
	free_all(out, n);
	end(e, "mask l3 +12", f, 1);
}

/*
 * Timestamps (issue #26, copy_ts): arista64 and metamako on one-segment frames and on a chain of
 * segments at odd offsets (61 + 700 + 334 B: the trailer at an odd offset too), copied and shared, SPAN and VXLAN over IPv6: the
 * copy is the frame with the 14 B AVSP header after its MACs or the 16 B trailer at its end (the
 * time given to sbx_mirror_copy_burst), the UDP checksum verifies, the frames are untouched.
 */
static void test_timestamps(struct sbx_mirror_engine *e)
{
	static const uint64_t now = 1764645000ull * 1000000000ull + 123456789;
	static const uint8_t strat[2] = { SBX_COPY_COPY, SBX_COPY_SHARE };
	uint8_t a[2048], before[3][2048];
	struct rte_mbuf *f[3], *out[3];
	struct sbx_mirror_cfg *mc;
	uint16_t idx[3], n;
	unsigned int fmt, st, v6, i, good, udp_ok, same, empty;
	uint32_t fl, cl, h;

	for (fmt = SBX_TS_ARISTA64; fmt <= SBX_TS_METAMAKO; fmt++) {
		for (v6 = 0; v6 < 2; v6++) {
			for (st = 0; st < 2; st++) {
				world(SBX_PORT_ETHDEV, ring_w0);
				mc = session(v6 ? SBX_ENCAP_VXLAN : SBX_ENCAP_SPAN, strat[st], 512, 0, 1);
				if (v6) {
					mc->ip_version = 6;
					memcpy(mc->src_ip, (uint8_t[]){ 0x20, 0x01, 0x0d, 0xb8, [15] = 1 }, 16);
					memcpy(mc->dst_ip, (uint8_t[]){ 0x20, 0x01, 0x0d, 0xb8, [15] = 2 }, 16);
					mc->udp_port = 4789;
				}
				mc->ts_format = (uint8_t)fmt;
				mc->ts_device = 0x1234;
				if (!setup(e, 0))
					continue;
				f[0] = frame(100, 1);
				f[1] = frame(1500, 2);
				f[2] = chain3(61, 700, 334, 3); /* 1095 B: a trailer at an odd offset */
				for (i = 0; i < 3; i++)
					bytes(f[i], before[i], sizeof(before[i]));
				n = sbx_mirror_copy_burst(e, &e->s[0], f, 3, 0, SBX_DIR_RX, now, out, idx);
				good = udp_ok = same = empty = 0;
				h = v6 ? 70 : 0;
				for (i = 0; i < n; i++) {
					struct rte_mbuf *fr = f[idx[i]];
					struct sbx_ts_in_info ti = {0};

					fl = fr->pkt_len;
					cl = bytes(out[i], a, sizeof(a));
					if (fmt == SBX_TS_ARISTA64)
						good += cl == h + fl + 14 && !memcmp(a + h, before[idx[i]], 12) &&
							sbx_ts_in_avsp(a + h, cl - h, 0, now, &ti) == SBX_TS_IN_OK &&
							ti.ns == now && ti.cut_front == 14 &&
							!memcmp(a + h + 26, before[idx[i]] + 12, fl - 12);
					else
						good += cl == h + fl + 16 && !memcmp(a + h, before[idx[i]], fl) &&
							sbx_ts_in_metamako(a + h, cl - h, cl - h, false, 1, now, &ti) == SBX_TS_IN_OK &&
							ti.ns == now && ti.flags == 0 && ti.device == 0x1234 && ti.src_port == 0 && !memcmp(a + cl - 16, (uint8_t[4]){0}, 4);
					udp_ok += !v6 || udp6_verifies(a, cl);
					for (const struct rte_mbuf *sg = out[i]; sg != NULL; sg = sg->next)
						empty += sg->data_len == 0; /* a PMD may choke on one */
					same += bytes(fr, a, sizeof(a)) == fl && !memcmp(a, before[idx[i]], fl);
				}
				check(n == 3 && good == 3 && udp_ok == 3 && same == 3 && empty == 0 && ctr(0)->timestamped == 3 &&
					      ctr(0)->copied + ctr(0)->shared == 3 &&
					      (strat[st] == SBX_COPY_COPY ? ctr(0)->copied == 3 : ctr(0)->shared == 3),
				      "timestamp %s, %s, %s: 3 copies of 100 B, 1500 B and a 1095 B 3-segment chain: %u the frame "
				      "with the %s, %u UDP checksums verify, %u frames untouched, %u empty segments; timestamped %" PRIu64,
				      fmt == SBX_TS_ARISTA64 ? "arista64" : "metamako", v6 ? "VXLAN/IPv6" : "SPAN",
				      st ? "share" : "copy", good,
				      fmt == SBX_TS_ARISTA64 ? "AVSP header after its MACs" : "trailer (device 0x1234, port 0)",
				      udp_ok, same, empty, ctr(0)->timestamped);
				free_all(out, n);
				end(e, "timestamps", f, 3);
			}
		}
	}
}

int main(int argc, char **argv)
{
	char *eal[] = { argv[0], "--no-huge", "--no-pci", "--no-shconf", "-m", "256", "--lcores", "100@(0-1)",
			"--file-prefix=" PREFIX, "--no-telemetry", "--log-level=lib.eal:error", NULL };
	struct sbx_mirror_engine *e0, *e1;
	char dir[SBX_PATH_LEN];

	(void)argc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!check(rte_eal_init((int)RTE_DIM(eal) - 1, eal) >= 0, "EAL in memory on lcore 100 (%s)",
		   rte_strerror(rte_errno))) {
		printf("1..%d\n", tests);
		return 1;
	}
	mp = rte_pktmbuf_pool_create("sbxut_me_pool", POOL_N, 0, 0, ROOM, (int)rte_socket_id());
	mp_ind = rte_pktmbuf_pool_create("sbxut_me_ind", IND_N, 0, 0, 0, (int)rte_socket_id());
	ring_w0 = rte_ring_create("sbxut_me_w0", 256, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	ring_w1 = rte_ring_create("sbxut_me_w1", 256, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	ring_small = rte_ring_create("sbxut_me_small", 16, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	sbx_shm_layout(SBX_MAX_WORKERS, SBX_MAX_PORTS, SBX_MAX_TUNNEL_SOURCES, SBX_MAX_TOOL_GROUPS,
		       SBX_MAX_GROUP_MEMBERS, &shm_lay);
	shm = calloc(1, shm_lay.total_size);
	tab = calloc(1, sizeof(*tab));
	e0 = calloc(1, sizeof(*e0));
	e1 = calloc(1, sizeof(*e1));
	if (!check(mp && mp_ind && ring_w0 && ring_w1 && ring_small && shm && tab && e0 && e1,
		   "a %u-mbuf pool, a %u-mbuf indirect pool, three rings, shm and tables", POOL_N, IND_N)) {
		printf("1..%d\n", tests);
		return 1;
	}
	pool_full("start");

	test_copy_or_share(e0);
	test_rspan(e0);
	test_erspan2(e0);
	test_vxlan(e0);
	test_sampling(e0);
	test_commit_tx(e0);
	test_sequence(e0, e1);
	test_txfull(e0);
	test_replay_wait(e0);
	test_copy_one(e0);
	test_burst_header(e0);
	test_one_compare(e0);
	test_nombuf(e0);
	test_share_pools(e0);
	test_share_clone(e0);
	test_sampled_commit(e0);
	test_group_tags(e0);
	test_mtu(e0);
	test_mask(e0);
	test_timestamps(e0);

	free(e0);
	free(e1);
	free(tab);
	free(shm);
	rte_ring_free(ring_w0);
	rte_ring_free(ring_w1);
	rte_ring_free(ring_small);
	rte_mempool_free(mp);
	rte_mempool_free(mp_ind);
	rte_eal_cleanup();
	sbx_runtime_dir(PREFIX, dir, sizeof(dir));
	rmdir(dir); /* EAL leaves the (empty) runtime directory behind */
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
