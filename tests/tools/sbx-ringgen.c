/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sbx-ringgen: an input faster than a worker. Keeps the RX ring of a running appliance's net_ring
 * port full with the frames of a pcap file, so that a benchmark (bench/flows.sh, bench/maps.sh)
 * measures the worker's cycles per frame with full bursts of varied frames (issues #27, #28:
 * net_null invents identical zeroed frames; a pcap file port fed through a FIFO is slower than
 * the worker, whose bursts are then small and whose cycles per frame follow the feeder's rate).
 *
 *   sbx-ringgen --prefix P --lcore ID --cpu CPU --dev net_ringN --pcap FILE
 *               [--seconds S] [--count N] [--queue Q] [--socket S] [--demote]
 *
 * How. DPDK's net_ring PMD, given plain devargs "net_ringN", creates one ring per queue named
 * "ETH_RXTX<q>_net_ringN" (1024 slots, RING_F_SP_ENQ | RING_F_SC_DEQ; DPDK 22.11
 * drivers/net/ring/rte_eth_ring.c eth_dev_ring_create()), and the port's RX queue q and TX queue q
 * are that SAME ring. This tool enqueues mbufs into ETH_RXTX<Q>_<dev>; the worker polling that RX
 * queue dequeues them with rte_eth_rx_burst(). The ring is single-producer: this tool must be its
 * only producer, so the appliance must never transmit on that port (cross-connect it to a port
 * that receives nothing, e.g. "net_null0,size=64,no-rx=1", and poll only the input's queue).
 *
 * Why a secondary. The frames must be mbufs of the appliance's own pool (the worker's TX hands
 * them to the output port, which frees them into that pool), and the ring lives in the
 * appliance's hugepages: so this is a DPDK secondary process of the appliance's file prefix
 * (--proc-type=secondary, --no-pci, no telemetry), one lcore id of its own pinned to CPU
 * (--lcores ID@CPU) so that its mempool cache is its own. Like the appliance's processes it takes
 * the lcore lock of that id (include/spanbox/lcore_lock.h) before rte_eal_init(): a second
 * process on the id would corrupt that cache.
 *
 * Mbuf ownership. This tool allocates (rte_pktmbuf_alloc_bulk from the pool sbx_pool_name() names
 * for the socket), fills and enqueues; once enqueued an mbuf is the worker's, and the worker's TX
 * (the output port's driver) frees it. What the ring did not take stays held here for the next
 * try (no free/alloc churn) and is freed at exit.
 *
 * Frames: every record of the pcap file (Ethernet), read once into memory; each becomes one mbuf
 * of its captured bytes (rte_memcpy into the data room; data_len = pkt_len = caplen), in file
 * order, from the start again after the last. A record larger than the pool's data room is
 * refused at load. Loop: allocate 32 (or what --count leaves), copy frames i..i+31, enqueue
 * burst; spin with rte_pause() while the ring is full (counted: ring_full_spins).
 *
 * --demote: after filling an mbuf, CLDEMOTE (rte_cldemote(), a hint: a no-op where the CPU lacks
 * it; /proc/cpuinfo flag "cldemote") its two header lines and its data lines, so that the worker
 * finds them in the last-level cache, where a NIC's DMA with Intel DDIO leaves a received frame,
 * instead of Modified in this core's L2 (a cross-core transfer per line, which no NIC input
 * pays). Without it the worker's first read of a frame is such a transfer: the figures of the
 * stages that read frames (maps, flows) then include it (docs/BENCHMARKS.md "Maps in the running
 * product", "Flow metering").
 *
 * Bounded: --seconds S (default 10 when neither is given) and/or --count N, whichever comes first;
 * SIGTERM / SIGINT stop it cleanly. Prints one line at the end, on stdout:
 *   sbx-ringgen: enqueued N frames in S s: M Mpps, ring_full_spins K, alloc_failures A, waited W %,
 *                own C cycles/frame (capacity X Mpps)
 * ring_full_spins: enqueue attempts that found the ring full (each followed by one rte_pause());
 * own: the TSC cycles of the run less those spent waiting for room in the ring, per frame: what
 * one frame costs this tool (allocation, copy, enqueue; time others took its CPU included), and
 * X the rate it could feed at that cost (TSC Hz / C); ring fill: the mean number of frames in the
 * ring (rte_ring_count every 1024 tries) and how often it held less than a burst (a worker
 * polling then gets a short or no burst);
 * alloc_failures: allocations that found the pool empty; waited: the share of the S seconds this
 * thread was runnable but waiting for its CPU (/proc/thread-self/schedstat field 2). The ring
 * holds 1024 frames, which a worker empties in tens of microseconds: while this thread waits for
 * its CPU (other processes on it) the worker starves, so a run where W is not near 0 did not
 * keep the worker's input full whatever its Mpps (look at the worker's frames per loop).
 * Exit 0, 1 on a runtime error (no ring, no pool, EAL), 2 on a usage error.
 */
/* rte_cldemote() (--demote) is still experimental in DPDK 22.11 */
#define ALLOW_EXPERIMENTAL_API 1
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>
#include <rte_prefetch.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "spanbox/lcore_lock.h"
#include "spanbox/shm.h"

#define BURST 32

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The frames of the pcap file: their bytes back to back in data, frame i at off[i], len[i] bytes. */
struct frames {
	uint8_t *data;
	size_t *off;
	uint16_t *len;
	uint32_t n;
};

/* Read every record of @p path into @p f; a record above @p room bytes is an error. 0 or -1
 * (message on stderr). */
static int load_pcap(const char *path, uint16_t room, struct frames *f)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	size_t cap = 0, cap_n = 0, used = 0;
	pcap_t *p = pcap_open_offline(path, err);
	int rc;

	memset(f, 0, sizeof(*f));
	if (p == NULL) {
		fprintf(stderr, "sbx-ringgen: %s: %s\n", path, err);
		return -1;
	}
	if (pcap_datalink(p) != DLT_EN10MB) {
		fprintf(stderr, "sbx-ringgen: %s: not an Ethernet capture (link type %d)\n", path, pcap_datalink(p));
		pcap_close(p);
		return -1;
	}
	while ((rc = pcap_next_ex(p, &h, &d)) == 1) {
		if (h->caplen > room || h->caplen == 0) {
			fprintf(stderr, "sbx-ringgen: %s: record %u has %u bytes (the pool's data room is %u)\n", path,
				f->n + 1, h->caplen, room);
			goto fail;
		}
		if (f->n == cap_n) {
			cap_n = cap_n ? cap_n * 2 : 4096;
			f->off = realloc(f->off, cap_n * sizeof(*f->off));
			f->len = realloc(f->len, cap_n * sizeof(*f->len));
			if (f->off == NULL || f->len == NULL)
				goto nomem;
		}
		if (used + h->caplen > cap) {
			cap = cap ? cap * 2 : (1u << 20);
			while (cap < used + h->caplen)
				cap *= 2;
			f->data = realloc(f->data, cap);
			if (f->data == NULL)
				goto nomem;
		}
		memcpy(f->data + used, d, h->caplen);
		f->off[f->n] = used;
		f->len[f->n] = (uint16_t)h->caplen;
		used += h->caplen;
		f->n++;
	}
	if (rc == -1) {
		fprintf(stderr, "sbx-ringgen: %s: %s\n", path, pcap_geterr(p));
		goto fail;
	}
	pcap_close(p);
	if (f->n == 0) {
		fprintf(stderr, "sbx-ringgen: %s: no frames\n", path);
		return -1;
	}
	return 0;
nomem:
	fprintf(stderr, "sbx-ringgen: out of memory reading %s\n", path);
fail:
	pcap_close(p);
	free(f->data);
	free(f->off);
	free(f->len);
	memset(f, 0, sizeof(*f));
	return -1;
}

/* ns this thread has waited for a CPU while runnable so far (schedstat field 2), 0 if unknown */
static uint64_t run_delay_ns(void)
{
	unsigned long long run = 0, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	fclose(f);
	return wait;
}

/* How many frames the next burst takes: BURST, or what --count @p count leaves after @p sent. */
static unsigned int next_want(uint64_t count, uint64_t sent)
{
	if (count == 0)
		return BURST;
	return count - sent < BURST ? (unsigned int)(count - sent) : BURST;
}

/*
 * Prefetch (for writing) the lines the fill of @p n raw mbufs will write: the two header lines
 * rte_pktmbuf_reset() writes and the first data line (at @p data_off from the mbuf). The mbufs
 * come back from the worker's core (its TX freed them), so each line is a transfer from the other
 * core's cache: overlapped with the fill of the burst before, not waited for one by one.
 */
static void prefetch_burst(struct rte_mbuf *const *m, unsigned int n, size_t data_off)
{
	for (unsigned int i = 0; i < n; i++) {
		__builtin_prefetch(m[i], 1, 3);
		__builtin_prefetch((char *)m[i] + RTE_CACHE_LINE_SIZE, 1, 3);
		__builtin_prefetch((char *)m[i] + data_off, 1, 3);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: sbx-ringgen --prefix P --lcore ID --cpu CPU --dev net_ringN --pcap FILE "
			"[--seconds S] [--count N] [--queue Q] [--socket S] [--demote]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "prefix", required_argument, NULL, 'p' }, { "lcore", required_argument, NULL, 'l' },
		{ "cpu", required_argument, NULL, 'c' },    { "dev", required_argument, NULL, 'd' },
		{ "pcap", required_argument, NULL, 'f' },   { "seconds", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },  { "queue", required_argument, NULL, 'q' },
		{ "socket", required_argument, NULL, 'S' }, { "demote", no_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 }
	};
	const char *prefix = NULL, *dev = NULL, *pcap_path = NULL;
	long lcore = -1, cpu = -1, queue = 0, socket = -1;
	int demote = 0;
	double seconds = 0;
	uint64_t count = 0;
	char pfx[300], lc[64], rname[RTE_RING_NAMESIZE], pname[RTE_MEMPOOL_NAMESIZE], err[512];
	char *eal[] = { argv[0], "--proc-type=secondary", pfx, lc, "--no-pci", "--no-telemetry",
			"--log-level=lib.eal:error", NULL };
	struct rte_mbuf *held[BURST], *next[BURST];
	unsigned int nnext = 0;
	size_t data_off;
	unsigned int hoff = 0, nheld = 0;
	uint64_t sent = 0, spins = 0, nomem = 0, iter = 0, t0, t1, end_tsc = UINT64_MAX, hz, w0, w1;
	uint64_t spin_t0 = 0, spin_cyc = 0; /* the cycles spent waiting for room in the ring */
	uint64_t fill_sum = 0, fill_n = 0, fill_low = 0; /* the ring's fill, sampled every 1024 tries */
	uint32_t fi = 0;
	uint16_t room, port_id = RTE_MBUF_PORT_INVALID;
	struct rte_mempool *mp;
	struct rte_ring *ring;
	struct frames fr;
	struct sigaction sa;
	int c, lock_fd;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p': prefix = optarg; break;
		case 'l': lcore = strtol(optarg, NULL, 10); break;
		case 'c': cpu = strtol(optarg, NULL, 10); break;
		case 'd': dev = optarg; break;
		case 'f': pcap_path = optarg; break;
		case 's': seconds = strtod(optarg, NULL); break;
		case 'n': count = strtoull(optarg, NULL, 10); break;
		case 'q': queue = strtol(optarg, NULL, 10); break;
		case 'S': socket = strtol(optarg, NULL, 10); break;
		case 'D': demote = 1; break;
		default: usage(); return 2;
		}
	}
	if (prefix == NULL || dev == NULL || pcap_path == NULL || lcore < 0 || lcore >= RTE_MAX_LCORE || cpu < 0 ||
	    queue < 0 || queue > 15 || seconds < 0 || optind != argc) {
		usage();
		return 2;
	}
	if (seconds == 0 && count == 0)
		seconds = 10;
	snprintf(pfx, sizeof(pfx), "--file-prefix=%s", prefix);
	snprintf(lc, sizeof(lc), "--lcores=%ld@%ld", lcore, cpu);
	lock_fd = sbx_lcore_lock(prefix, (unsigned int)lcore, "sbx-ringgen", err, sizeof(err));
	if (lock_fd < 0) {
		fprintf(stderr, "sbx-ringgen: %s\n", err);
		return 1;
	}
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0) {
		fprintf(stderr, "sbx-ringgen: rte_eal_init failed: %s (is an appliance of prefix '%s' running?)\n",
			rte_strerror(rte_errno), prefix);
		sbx_lcore_unlock(lock_fd, prefix, (unsigned int)lcore);
		return 1;
	}
	snprintf(rname, sizeof(rname), "ETH_RXTX%ld_%s", queue, dev);
	ring = rte_ring_lookup(rname);
	sbx_pool_name(socket >= 0 ? (int)socket : (int)rte_socket_id(), pname, sizeof(pname));
	mp = rte_mempool_lookup(pname);
	if (ring == NULL || mp == NULL) {
		fprintf(stderr, "sbx-ringgen: %s %s not found in prefix '%s'\n", ring == NULL ? "ring" : "pool",
			ring == NULL ? rname : pname, prefix);
		rte_eal_cleanup();
		sbx_lcore_unlock(lock_fd, prefix, (unsigned int)lcore);
		return 1;
	}
	/* the PMD does not set mbuf->port on RX; set it as a NIC's driver would */
	if (rte_eth_dev_get_port_by_name(dev, &port_id) != 0)
		port_id = RTE_MBUF_PORT_INVALID;
	room = (uint16_t)(rte_pktmbuf_data_room_size(mp) - RTE_PKTMBUF_HEADROOM);
	/* where a direct mbuf's data starts (rte_pktmbuf_init(): buf_addr after the private area) */
	data_off = sizeof(struct rte_mbuf) + rte_pktmbuf_priv_size(mp) + RTE_PKTMBUF_HEADROOM;
	if (load_pcap(pcap_path, room, &fr) != 0) {
		rte_eal_cleanup();
		sbx_lcore_unlock(lock_fd, prefix, (unsigned int)lcore);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	hz = rte_get_tsc_hz();
	w0 = run_delay_ns();
	t0 = rte_rdtsc();
	if (seconds > 0)
		end_tsc = t0 + (uint64_t)(seconds * (double)hz);
	while (!stop) {
		unsigned int n;

		if (nheld == 0) {
			unsigned int want, i;

			if (nnext == 0) { /* (the first burst, or the pool was empty) */
				want = next_want(count, sent);
				if (want == 0)
					break;
				if (rte_mempool_get_bulk(mp, (void **)next, want) != 0) {
					nomem++; /* the pool is empty for now: the worker's TX returns mbufs */
					rte_pause();
					goto tick;
				}
				nnext = want;
			}
			want = nnext;
			memcpy(held, next, want * sizeof(*held));
			nnext = 0;
			/* the burst after this one: taken now, its lines prefetched while this one is filled */
			i = next_want(count, sent + want);
			if (i && rte_mempool_get_bulk(mp, (void **)next, i) == 0) {
				nnext = i;
				prefetch_burst(next, nnext, data_off);
			}
			for (i = 0; i < want; i++) {
				struct rte_mbuf *m = held[i];

				rte_pktmbuf_reset(m); /* what rte_pktmbuf_alloc_bulk() does after the get */
				rte_memcpy(rte_pktmbuf_mtod(m, void *), fr.data + fr.off[fi], fr.len[fi]);
				m->data_len = fr.len[fi];
				m->pkt_len = fr.len[fi];
				m->port = port_id;
				if (demote) { /* as a NIC's DMA leaves them (DDIO): in the LLC, not this core's L2 */
					rte_cldemote(m);
					rte_cldemote((char *)m + RTE_CACHE_LINE_SIZE);
					for (uint32_t o = 0; o < fr.len[fi]; o += RTE_CACHE_LINE_SIZE)
						rte_cldemote(rte_pktmbuf_mtod_offset(m, char *, o));
				}
				if (++fi == fr.n)
					fi = 0;
			}
			nheld = want;
			hoff = 0;
		}
		n = rte_ring_enqueue_burst(ring, (void **)&held[hoff], nheld, NULL);
		sent += n;
		hoff += n;
		nheld -= n;
		if (n == 0) {
			if (spin_t0 == 0)
				spin_t0 = rte_rdtsc();
			spins++;
			rte_pause();
		} else if (spin_t0 != 0) {
			spin_cyc += rte_rdtsc() - spin_t0;
			spin_t0 = 0;
		}
tick:
		if ((++iter & 1023) == 0) {
			unsigned int fill = rte_ring_count(ring);

			fill_sum += fill;
			fill_n++;
			fill_low += fill < BURST;
			if (rte_rdtsc() >= end_tsc)
				break;
		}
	}
	t1 = rte_rdtsc();
	w1 = run_delay_ns();
	if (spin_t0 != 0)
		spin_cyc += t1 - spin_t0;
	if (nheld)
		rte_pktmbuf_free_bulk(&held[hoff], nheld);
	if (nnext)
		rte_mempool_put_bulk(mp, (void **)next, nnext); /* as taken: raw, never reset */
	{
		double s = (double)(t1 - t0) / (double)hz;
		double own = sent ? (double)(t1 - t0 - spin_cyc) / (double)sent : 0.0;

		printf("sbx-ringgen: enqueued %" PRIu64 " frames in %.3f s: %.2f Mpps, ring_full_spins %" PRIu64
		       ", alloc_failures %" PRIu64 ", waited %.0f %%, own %.1f cycles/frame (capacity %.1f Mpps)",
		       sent, s, s > 0 ? (double)sent / s / 1e6 : 0.0, spins, nomem,
		       s > 0 ? (double)(w1 - w0) / 1e9 / s * 100 : 0.0, own, own > 0 ? (double)hz / own / 1e6 : 0.0);
		if (fill_n) /* (none in a run of fewer than 1024 tries) */
			printf(", ring fill %.0f of %u (below %d in %.0f %% of samples)", (double)fill_sum / (double)fill_n,
			       rte_ring_get_capacity(ring), BURST, (double)fill_low / (double)fill_n * 100);
		printf("\n");
		fflush(stdout);
	}
	free(fr.data);
	free(fr.off);
	free(fr.len);
	rte_eal_cleanup();
	sbx_lcore_unlock(lock_fd, prefix, (unsigned int)lcore);
	return 0;
}
