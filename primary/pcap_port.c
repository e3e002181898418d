/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pcap ports, driven by the primary with libpcap instead of DPDK's net_pcap PMD.
 *
 * Why (docs/PCAP_SECONDARY.md): every DPDK 22.11 secondary process re-probes the primary's vdevs
 * with the same devargs, and net_pcap's probe then opens the files again in each secondary:
 * tx_pcap files are re-created with O_TRUNC (seen with strace: one open per worker) and rx_pcap
 * files are read from the start by every process. The PMD also gives no end-of-file signal. So the
 * primary reads and writes pcap files itself and hands mbufs to workers through rte_rings, which
 * keeps the forward path zero-copy and makes EOF exact (pcap_next_ex() returns -2).
 *
 * devargs keep the net_pcap spelling users know: "net_pcapN,rx_pcap=IN.pcap,tx_pcap=OUT.pcap"
 * (either key may be omitted), plus "pps=N": read the input at N frames per second (default: as
 * fast as the workers take it), like tcpreplay's --pps, and "pps_burst=B": B frames at once every
 * B / N seconds instead of one every 1 / N (the same average, in bursts: microbursts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <rte_mbuf.h>

#include "spanbox/config.h"
#include "spanbox/shm.h"
#include "pcap_port.h"

#define SBX_PCAP_SNAPLEN 262144 /* bytes; libpcap's own maximum for Ethernet */

/* Copy the value of "key=" from a devargs string. @return 1 found, 0 absent, -1 too long. */
static int devarg(const char *devargs, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key);
	const char *s = devargs;

	while ((s = strchr(s, ',')) != NULL) {
		s++;
		if (strncmp(s, key, klen) == 0 && s[klen] == '=') {
			size_t n = strcspn(s + klen + 1, ",");

			if (n >= len)
				return -1;
			memcpy(buf, s + klen + 1, n);
			buf[n] = '\0';
			return 1;
		}
	}
	return 0;
}

int sbx_pcap_port_open(struct sbx_pcap_port *pp, const char *devargs, char *err, size_t errlen)
{
	char path[SBX_DEVARGS_LEN], ebuf[PCAP_ERRBUF_SIZE];

	memset(pp, 0, sizeof(*pp));
	pp->rx_eof = true;
	if (devarg(devargs, "rx_pcap", path, sizeof(path)) == 1) {
		pp->rx = pcap_open_offline(path, ebuf);
		if (pp->rx == NULL) {
			snprintf(err, errlen, "rx_pcap %s: %s", path, ebuf);
			return -1;
		}
		if (pcap_datalink(pp->rx) != DLT_EN10MB) {
			snprintf(err, errlen, "rx_pcap %s: link type %s, only Ethernet (EN10MB) is supported", path,
				 pcap_datalink_val_to_name(pcap_datalink(pp->rx)));
			sbx_pcap_port_close(pp);
			return -1;
		}
		pp->rx_eof = false;
		snprintf(pp->rx_path, sizeof(pp->rx_path), "%s", path);
	}
	if (devarg(devargs, "pps", path, sizeof(path)) == 1) {
		char *end;

		pp->pps = strtoull(path, &end, 10);
		if (*end != '\0' || pp->pps == 0 || pp->pps > 100000000) {
			snprintf(err, errlen, "pps=%s: not a rate in 1..100000000 frames/s", path);
			sbx_pcap_port_close(pp);
			return -1;
		}
	}
	if (devarg(devargs, "pps_burst", path, sizeof(path)) == 1) {
		char *end;

		pp->pps_burst = strtoull(path, &end, 10);
		if (*end != '\0' || pp->pps_burst == 0 || pp->pps_burst > 1000000 || pp->pps == 0) {
			snprintf(err, errlen, "pps_burst=%s: not a count in 1..1000000 frames, with pps=", path);
			sbx_pcap_port_close(pp);
			return -1;
		}
	}
	if (devarg(devargs, "tx_pcap", path, sizeof(path)) == 1) {
		pp->tx_dead = pcap_open_dead(DLT_EN10MB, SBX_PCAP_SNAPLEN);
		pp->tx = pp->tx_dead ? pcap_dump_open(pp->tx_dead, path) : NULL;
		if (pp->tx == NULL) {
			snprintf(err, errlen, "tx_pcap %s: %s", path,
				 pp->tx_dead ? pcap_geterr(pp->tx_dead) : "out of memory");
			sbx_pcap_port_close(pp);
			return -1;
		}
	}
	return 0;
}

/* Copy len bytes into a chain of mbufs from mp. @return the head, or NULL (nothing leaked). */
static struct rte_mbuf *frame_to_mbuf(struct rte_mempool *mp, const u_char *data, uint32_t len)
{
	struct rte_mbuf *head = NULL, *tail = NULL;
	uint32_t off = 0;

	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		uint32_t n;

		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		n = RTE_MIN(len - off, (uint32_t)rte_pktmbuf_tailroom(m));
		memcpy(rte_pktmbuf_mtod(m, void *), data + off, n);
		m->data_len = (uint16_t)n;
		off += n;
		if (head == NULL) {
			head = m;
		} else {
			tail->next = m;
			head->nb_segs++;
		}
		tail = m;
	} while (off < len);
	head->pkt_len = len;
	return head;
}

uint16_t sbx_pcap_port_rx(struct sbx_pcap_port *pp, struct rte_mempool *mp, struct rte_mbuf **pkts, uint16_t n)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	uint16_t got = 0;

	if (pp->pps) { /* pacing: frames allowed by now since the first read */
		uint64_t now = sbx_now_ns(), allowed;

		if (pp->pace_start_ns == 0)
			pp->pace_start_ns = now;
		allowed = (now - pp->pace_start_ns) / 1000 * pp->pps / 1000000;
		/* one frame at once, or pps_burst frames at once (the burst that started last) */
		allowed = pp->pps_burst > 1 ? (allowed / pp->pps_burst + 1) * pp->pps_burst : allowed + 1;
		if (allowed <= pp->rx_pkts + pp->rx_nombuf)
			return 0;
		if (allowed - pp->rx_pkts - pp->rx_nombuf < n)
			n = (uint16_t)(allowed - pp->rx_pkts - pp->rx_nombuf);
	}
	while (!pp->rx_eof && got < n) {
		int rc = pcap_next_ex(pp->rx, &h, &data);

		if (rc != 1) {
			/* -2: end of file; -1: read error (a damaged file ends there, counted and said) */
			if (rc == -1) {
				pp->rx_errors++;
				pp->rx_failed = true;
				snprintf(pp->rx_error, sizeof(pp->rx_error), "%s", pcap_geterr(pp->rx));
				fprintf(stderr, "spanbox-primary: warning: rx_pcap read error after %llu frames, input"
					" ends here: %s\n", (unsigned long long)pp->rx_pkts, pp->rx_error);
			}
			pp->rx_eof = true;
			break;
		}
		if (h->caplen == 0) {
			pp->rx_errors++;
			continue;
		}
		pkts[got] = frame_to_mbuf(mp, data, h->caplen);
		if (pkts[got] == NULL) {
			pp->rx_nombuf++;
			/* nothing read is dropped silently: this frame is counted and skipped */
			continue;
		}
		pp->rx_pkts++;
		pp->rx_bytes += h->caplen;
		got++;
	}
	return got;
}

void sbx_pcap_port_tx(struct sbx_pcap_port *pp, struct rte_mbuf **pkts, uint16_t n)
{
	static u_char linear[SBX_PCAP_SNAPLEN];
	struct pcap_pkthdr h;
	struct timeval now;
	uint16_t i;

	gettimeofday(&now, NULL);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (pp->tx != NULL && m->pkt_len <= SBX_PCAP_SNAPLEN) {
			const void *d = rte_pktmbuf_read(m, 0, m->pkt_len, linear);

			h.ts = now;
			h.caplen = h.len = m->pkt_len;
			pcap_dump((u_char *)pp->tx, &h, d);
			pp->tx_dirty = true;
			pp->tx_pkts++;
			pp->tx_bytes += m->pkt_len;
		} else {
			pp->tx_errors++; /* no tx_pcap: the port discards like net_pcap's tx_drop */
		}
		rte_pktmbuf_free(m);
	}
}

void sbx_pcap_port_flush(struct sbx_pcap_port *pp)
{
	if (pp->tx != NULL && pp->tx_dirty) {
		pcap_dump_flush(pp->tx);
		pp->tx_dirty = false;
	}
}

void sbx_pcap_port_close(struct sbx_pcap_port *pp)
{
	if (pp->rx != NULL)
		pcap_close(pp->rx);
	if (pp->tx != NULL)
		pcap_dump_close(pp->tx);
	if (pp->tx_dead != NULL)
		pcap_close(pp->tx_dead);
	pp->rx = NULL;
	pp->tx = NULL;
	pp->tx_dead = NULL;
	pp->rx_eof = true;
}
