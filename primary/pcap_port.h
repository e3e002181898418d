/* SPDX-License-Identifier: BSD-3-Clause */
/* pcap file ports driven by the primary with libpcap (see pcap_port.c for why not net_pcap). */
#ifndef SPANBOX_PCAP_PORT_H
#define SPANBOX_PCAP_PORT_H

#include <stdbool.h>
#include <stdint.h>
#include <pcap/pcap.h>

#include <rte_mbuf.h>

/** One pcap port: an optional input file and an optional output file. */
struct sbx_pcap_port {
	pcap_t *rx;            /**< input (pcap_open_offline), NULL when none */
	pcap_t *tx_dead;       /**< handle the dumper writes through */
	pcap_dumper_t *tx;     /**< output, NULL when none */
	bool rx_eof;           /**< input exhausted (or absent), or ended by a read error */
	bool rx_failed;        /**< the input ended on a read error, not at its end (rx_error says why) */
	char rx_error[PCAP_ERRBUF_SIZE]; /**< libpcap's message for that error */
	char rx_path[256];     /**< the rx_pcap file, "" when none */
	bool tx_dirty;         /**< frames written since the last flush */
	uint64_t rx_pkts, rx_bytes;   /**< frames read and delivered as mbufs */
	uint64_t tx_pkts, tx_bytes;   /**< frames written */
	uint64_t rx_errors;    /**< unreadable or empty records */
	uint64_t rx_nombuf;    /**< records skipped because the pool was empty */
	uint64_t tx_errors;    /**< frames discarded (no tx_pcap, or over 256 KiB) */
	uint64_t pps;          /**< input pacing, frames per second; 0 = unpaced */
	uint64_t pps_burst;    /**< pps pacing releases this many frames at once, every pps_burst / pps
				    seconds (bursts of the same average rate); 0 or 1 = one at a time */
	uint64_t pace_start_ns; /**< CLOCK_MONOTONIC of the first paced read */
};

/**
 * Open the files named by "rx_pcap=" and "tx_pcap=" in @p devargs (tx file created/truncated);
 * "pps=N" paces the input at N frames per second; "pps_burst=B" (with pps) releases B frames at
 * once every B / N seconds: bursts of the same average rate (microburst tests).
 * @return 0, or -1 with "rx_pcap <path>: <libpcap error>" in @p err.
 */
int sbx_pcap_port_open(struct sbx_pcap_port *pp, const char *devargs, char *err, size_t errlen);

/**
 * Read up to @p n records into new mbufs from @p mp (frames larger than one mbuf become chains).
 * The caller owns the returned mbufs. A truncated record gives an mbuf of its captured length.
 * A read error ends the input: rx_eof and rx_failed are set, rx_error holds libpcap's message.
 * @return mbufs written to @p pkts; 0 with pp->rx_eof set at end of file.
 */
uint16_t sbx_pcap_port_rx(struct sbx_pcap_port *pp, struct rte_mempool *mp, struct rte_mbuf **pkts, uint16_t n);

/** Write @p n frames to the output file (timestamp = now) and free them: takes ownership of all. */
void sbx_pcap_port_tx(struct sbx_pcap_port *pp, struct rte_mbuf **pkts, uint16_t n);

/**
 * Write out what the output file holds in its buffer, when frames were written since the last
 * call, so that a reader following the file sees whole records. The primary calls it every
 * 100 ms (sbx_ports_refresh). A write error is counted by libpcap's stdio stream and shows at
 * close; it is not reported here.
 */
void sbx_pcap_port_flush(struct sbx_pcap_port *pp);

/** Flush and close both files. */
void sbx_pcap_port_close(struct sbx_pcap_port *pp);

#endif
