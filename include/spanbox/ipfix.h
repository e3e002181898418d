/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPFIX exporter (RFC 7011) of flow records (include/spanbox/flowtable.h) to one collector over
 * UDP or TCP. libfixbuf (CERT NetSA, Debian libfixbuf-dev) encodes: the IANA information model,
 * templates, sets, message headers, sequence numbers; this file owns the socket (libfixbuf's
 * buffer exporter, fbExporterAllocBuffer, hands each message back), because libfixbuf's own
 * network exporter connects and writes blocking sockets: a TCP collector that does not answer
 * would block the caller for the kernel's SYN timeout (minutes). Here every wait is bounded
 * (connect_timeout_ms, send_timeout_ms) and every record that does not reach the socket is counted.
 *
 * Two templates (ids 256 IPv4, 257 IPv6), IANA IEs (RFC 5102 / IANA registry numbers):
 *   octetDeltaCount(1) u64, packetDeltaCount(2) u64, flowStartMilliseconds(152) u64,
 *   flowEndMilliseconds(153) u64, sourceIPv4Address(8) / sourceIPv6Address(27),
 *   destinationIPv4Address(12) / destinationIPv6Address(28), ingressInterface(10) u32,
 *   sourceTransportPort(7) u16, destinationTransportPort(11) u16, tcpControlBits(6) u16,
 *   vlanId(58) u16, protocolIdentifier(4) u8, flowEndReason(136) u8.
 * Templates go at the start of the first message, of the first message after a (re)connect (TCP),
 * and on UDP again at the start of the first message after template_period_s (RFC 7011 section 8.4:
 * resent at a configurable interval; RFC 6728's templateRefreshTimeout defaults to 600 s, we resend
 * every 60 s by default so that a restarted collector decodes within a minute).
 * A message is sent when it is full (max_message bytes) or by sbx_ipfix_poll after flush_ms.
 * Not thread-safe: one exporter per thread.
 */
#ifndef SPANBOX_IPFIX_H
#define SPANBOX_IPFIX_H

#include <stddef.h>
#include <stdint.h>

#include "spanbox/counters.h"
#include "spanbox/flowtable.h"

enum sbx_ipfix_transport { SBX_IPFIX_UDP = 0, SBX_IPFIX_TCP = 1 };

#define SBX_IPFIX_TID_V4 256
#define SBX_IPFIX_TID_V6 257
/*
 * Eight templates, always announced: SBX_IPFIX_TID_V4 + (IPv6 ? 1 : 0) + (frames sent on a port,
 * flows.ports[].direction "tx" ? 2 : 0) + (biflow ? 4 : 0), i.e. 256 IPv4, 257 IPv6, 258/259 the
 * same for frames spanbox sent (egressInterface (IE 14) instead of ingressInterface, then
 * flowDirection (IE 61) = 1, egress), 260..263 the four before them for biflows (RFC 5103: followed
 * by reverseOctetDeltaCount, reversePacketDeltaCount, reverseTcpControlBits, PEN 29305).
 */
#define SBX_IPFIX_TID_V4_TX 258
#define SBX_IPFIX_TID_V6_TX 259
#define SBX_IPFIX_TID_V4_BIFLOW 260
#define SBX_IPFIX_TID_V6_BIFLOW 261

/** The template id of a record: @p ipv6, @p tx (frames sent on the port), @p biflow (RFC 5103). */
uint16_t sbx_ipfix_tid(int ipv6, int tx, int biflow);

/** Exporter parameters; 0 in a numeric field takes the default in brackets. */
struct sbx_ipfix_params {
	const char *address;            /**< collector IPv4/IPv6 literal or host name */
	uint16_t port;                  /**< [4739] */
	enum sbx_ipfix_transport transport;
	uint32_t domain;                /**< observation domain id (0 is a valid id) */
	uint32_t template_period_s;     /**< UDP template resend period [60] */
	uint32_t max_message;           /**< message size limit, bytes [UDP 1400: no IP fragments on
					 *   a 1500 B MTU path; TCP 8192], 256..65000 */
	uint32_t flush_ms;              /**< sbx_ipfix_poll sends a message this old [200] */
	uint32_t connect_timeout_ms;    /**< TCP connect wait [100] */
	uint32_t send_timeout_ms;       /**< wait for a full socket buffer [50] */
	uint32_t retry_ms;              /**< TCP reconnect interval after a failure [1000] */
};

/* struct sbx_ipfix_stats, what the exporter counted: SBX_FOREACH_IPFIX_COUNTER of counters.h */

struct sbx_ipfix;

/** Open an exporter (UDP: socket connected at once; TCP: the first connect on the first record).
 *  NULL on error with a message in @p err (bad address, parameter, libfixbuf setup). */
struct sbx_ipfix *sbx_ipfix_open(const struct sbx_ipfix_params *p, char *err, size_t errlen);

/**
 * Append one record (@p now_ns: a monotonic clock for the timers, not the flow's times).
 * Sends a message when it is full. @return 0 appended, -1 lost (counted: no connection, encode
 * error).
 */
int sbx_ipfix_add(struct sbx_ipfix *x, const struct sbx_flow_record *r, uint64_t now_ns);

/** Send the message being built if it holds records older than flush_ms. */
void sbx_ipfix_poll(struct sbx_ipfix *x, uint64_t now_ns);

/** Send the message being built now (if any records). */
void sbx_ipfix_flush(struct sbx_ipfix *x, uint64_t now_ns);

void sbx_ipfix_stats(const struct sbx_ipfix *x, struct sbx_ipfix_stats *out);

/** Flush, close the socket, free. */
void sbx_ipfix_close(struct sbx_ipfix *x, uint64_t now_ns);

/** "udp" / "tcp" -> 0 and *out, -1 otherwise. */
int sbx_ipfix_transport_parse(const char *name, enum sbx_ipfix_transport *out);

#endif
