/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Flow metering (issue #28, docs/FLOWS.md): one table per worker, unidirectional flows (or biflows,
 * RFC 5103, when created with biflow: both directions in one record) keyed by
 * (IP version, source and destination address, protocol, source and destination port, outer and
 * inner VLAN id, ingress port index), counting packets, IP octets, first and last time (ns) and
 * the OR of the TCP flags; records leave the table when a flow is idle (idle timeout), has lasted
 * the active timeout, ends (TCP FIN or RST), is pushed out by a full table (its oldest flow, counted)
 * or at a flush, as fixed-size struct sbx_flow_record handed to a callback (a worker's callback
 * puts them on its ring to the primary's exporter, shared/ipfix.c encodes them).
 *
 * The table is our own (it replaced DPDK's rte_hash, which cost a bucket line, a key-store line
 * and a state line per frame: docs/BENCHMARKS.md "Flow metering"): open addressing with linear
 * probing over capacity x 1.5 slots, home slot from the CRC32 of the 48-byte struct sbx_flow_key
 * (times an odd constant), a 4-byte signature per slot in an array of their own (8 compared at
 * once), and per slot one 128-byte flow: a line of counters and times, a line with the key. A
 * burst is parsed and hashed, the signature lines prefetched, the signatures probed and the flow
 * lines prefetched, then counted. Deletion shifts the rest of a run back (no tombstones). Flows are
 * also on a list in order of creation: its head is the oldest flow, the one a full table pushes
 * out and the first to reach the active timeout.
 *
 * Biflows: the key is canonical (the (address, port) end that sorts first as source) so that both
 * directions find one flow; the direction of its first frame is forward (the record's key), frames
 * the other way count in rev_packets / rev_bytes / rev_tcp_flags; a RST, or a FIN from each side,
 * ends it (a FIN one way does not).
 *
 * Timing rules (the reference tests/lib/flows_ref.py implements the same):
 *   - a frame of a flow whose last frame is idle_ns or more before it, or whose first frame is
 *     active_ns or more before it, first closes that flow (reason idle / active) and starts a new
 *     one: how a flow splits depends only on the frames and their times, not on when the expiry
 *     walk runs;
 *   - a TCP frame with FIN or RST is counted, then its flow closes (reason end of flow; biflow: a
 *     RST, or the frame that brings the second direction's FIN);
 *   - sbx_flowtable_expire() closes idle and active flows that see no more frames: the active
 *     ones from the head of the creation list, the idle ones by a cursor over the slots, at
 *     most @p budget slots per call (cheap enough for every worker burst).
 * Times are what the caller says (a worker: TSC converted to ns; the pcap tool: the capture's
 * timestamps); they must not go backwards by more than the timeouts (a frame older than its flow's
 * last is counted, last time unchanged).
 */
#ifndef SPANBOX_FLOWTABLE_H
#define SPANBOX_FLOWTABLE_H

#include <stdint.h>

/** flowEndReason values (IANA IPFIX IE 136, RFC 5102 section 5.11.3). */
enum sbx_flow_end_reason {
	SBX_FLOW_END_IDLE = 1,     /**< idle timeout */
	SBX_FLOW_END_ACTIVE = 2,   /**< active timeout */
	SBX_FLOW_END_OF_FLOW = 3,  /**< TCP FIN or RST seen */
	SBX_FLOW_END_FORCED = 4,   /**< forced end: sbx_flowtable_flush (shutdown, reconfiguration) */
	SBX_FLOW_END_RESOURCES = 5, /**< lack of resources: a full table pushed out its oldest flow */
};

/**
 * The key of a flow (48 bytes, zero padding: compared and hashed whole). Addresses in network
 * order; an IPv4 address fills the first 4 bytes, the other 12 are zero. Ports in host order, 0
 * for protocols without ports (other than TCP 6, UDP 17, SCTP 132) and for IPv4/IPv6 fragments
 * other than the first (they carry no transport header). vlan / inner_vlan: the 12-bit VLAN id of
 * the outermost and the second 802.1Q/802.1ad tag, 0 when absent.
 */
struct sbx_flow_key {
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport;
	uint16_t dport;
	uint16_t vlan;
	uint16_t inner_vlan;
	uint16_t port;      /**< the port index (the appliance's port number): ingress, or egress when dir is 1 */
	uint8_t proto;      /**< IP protocol (IPv6: the upper-layer header after extension headers) */
	uint8_t ipver;      /**< 4 or 6 */
	uint8_t dir;        /**< SBX_FLOW_DIR_RX (0: received on port) or SBX_FLOW_DIR_TX (1: sent on port),
			         as IPFIX flowDirection (IE 61): the RX and TX flows of one port are apart */
	uint8_t pad[3];
};
_Static_assert(sizeof(struct sbx_flow_key) == 48, "flow key is 48 bytes");

/**
 * An expired flow, as it travels on a worker's ring to the exporter: 128 bytes, no pointers, the
 * same layout in every process of one build. Times in ns (the caller's clock: UNIX time for the
 * appliance and the tool), counts since the flow started (IPFIX delta counts: one record per
 * flow). bytes: IP octets (IPv4 total length, IPv6 40 + payload length), as octetDeltaCount
 * defines them (RFC 5102 5.10.1), not frame lengths. app_id/app_proto: room for nDPI's
 * application identification (issue #28 "next"), 0 today.
 */
struct sbx_flow_record {
	struct sbx_flow_key key;   /**< 0: the flow */
	uint64_t first_ns;         /**< 48: time of the first frame */
	uint64_t last_ns;          /**< 56: time of the last frame */
	uint64_t packets;          /**< 64 */
	uint64_t bytes;            /**< 72 */
	uint8_t tcp_flags;         /**< 80: OR of the TCP flags (FIN 0x01 ... CWR 0x80), 0 if not TCP */
	uint8_t end_reason;        /**< 81: enum sbx_flow_end_reason */
	uint16_t app_proto;        /**< 82: reserved for nDPI (master protocol) */
	uint32_t app_id;           /**< 84: reserved for nDPI (application id), 0 unknown */
	uint64_t rev_packets;      /**< 88: biflow (RFC 5103): packets from the key's destination, else 0 */
	uint64_t rev_bytes;        /**< 96: biflow: their IP octets, else 0 */
	uint8_t rev_tcp_flags;     /**< 104: biflow: OR of their TCP flags, else 0 */
	uint8_t biflow;            /**< 105: 1 when the table meters biflows (the record has a reverse) */
	uint8_t reserved[22];      /**< 106: zero; future fields */
};
_Static_assert(sizeof(struct sbx_flow_record) == 128, "flow record is 128 bytes (2 cache lines)");

/** Receives every record that leaves the table (the record is valid during the call only). */
typedef void (*sbx_flow_emit_fn)(void *arg, const struct sbx_flow_record *rec);

/** Creation parameters. */
struct sbx_flowtable_params {
	const char *name;      /**< a name (kept for the callers; the table is not registered by it) */
	uint32_t capacity;     /**< flows at most (>= 8) */
	uint64_t active_ns;    /**< active timeout, ns (SBX_FLOW_ACTIVE_DEFAULT_NS) */
	uint64_t idle_ns;      /**< idle timeout, ns (SBX_FLOW_IDLE_DEFAULT_NS) */
	int socket_id;         /**< NUMA socket of the memory (SOCKET_ID_ANY) */
	sbx_flow_emit_fn emit; /**< where records go (required) */
	void *emit_arg;
	int biflow;            /**< 1: biflows (RFC 5103): both directions of a flow in one record */
};

/** Most flows a table holds (its slots, 1.5 x capacity, are 32-bit indexes). */
#define SBX_FLOWTABLE_CAPACITY_MAX (1u << 30)

#define SBX_FLOW_ACTIVE_DEFAULT_NS (60ull * 1000000000ull) /**< 60 s, as nProbe and routers */
#define SBX_FLOW_IDLE_DEFAULT_NS (15ull * 1000000000ull)   /**< 15 s */

/** What the table counted (all monotonic except active). */
struct sbx_flowtable_stats {
	uint64_t frames;          /**< frames metered (IPv4 / IPv6) */
	uint64_t non_ip;          /**< frames not metered: not IP, or an IP header cut short */
	uint64_t flows;           /**< flows created */
	uint64_t expired_idle;
	uint64_t expired_active;
	uint64_t expired_end;     /**< TCP FIN / RST */
	uint64_t expired_forced;  /**< flushed */
	uint64_t evicted_full;    /**< pushed out early by a full table (reason: lack of resources) */
	uint64_t active;          /**< flows in the table now */
};

struct sbx_flowtable;

/**
 * Parse one frame into a flow key (pure byte parsing, no EAL): through up to 8 802.1Q / 802.1ad
 * (0x8100, 0x88a8, 0x9100) tags, IPv4 (RFC 791) and IPv6 (RFC 8200, hop-by-hop, routing,
 * destination options, fragment and AH extension headers, at most 8) to TCP / UDP / SCTP ports.
 * @param frame, len the frame from its Ethernet header, bytes readable
 * @param port       ingress port index, copied into the key
 * @param key        out: the key (zeroed first)
 * @param ip_bytes   out: IP octets of the packet (IPv4 total length, IPv6 40 + payload length)
 * @param tcp_flags  out: the TCP flags byte, 0 if not TCP or not the first fragment
 * @return 0, or -1 when the frame is not IPv4/IPv6 or its IP header is cut short (not metered)
 */
int sbx_flow_parse(const uint8_t *frame, uint32_t len, uint16_t port, struct sbx_flow_key *key,
		   uint32_t *ip_bytes, uint8_t *tcp_flags);

/** Create a table (needs EAL: rte_zmalloc memory on p->socket_id). NULL and rte_errno on error
 *  (EINVAL: a parameter, capacity above SBX_FLOWTABLE_CAPACITY_MAX; ENOMEM). */
struct sbx_flowtable *sbx_flowtable_create(const struct sbx_flowtable_params *p);

/**
 * The memory a table of @p capacity flows takes from the EAL heap (hugepages), bytes, as
 * sbx_flowtable_create allocates it: slots = capacity + capacity / 2 + 1 (open addressing, at most
 * two-thirds full), each a 128-byte flow (a line of counters and times, a line with the key) and a
 * 4-byte signature. The capacity plan counts it per worker (docs/FLOWS.md "Memory");
 * tests/unit/test_flowtable.c checks it against what rte_malloc counts when a table is created
 * (never less, at most 1 % + 64 KiB more).
 */
struct sbx_flowtable_mem {
	uint64_t keys;         /**< slots x 64 B: each flow's key line (48-byte key, 16 spare) */
	uint64_t signatures;   /**< (slots + 8) x 4 B, rounded up to a cache line: the probe array */
	uint64_t states;       /**< slots x 64 B: each flow's counters, times, creation list links and
				    room for the biflow reverse counters */
	uint64_t other;        /**< struct sbx_flowtable, rte_malloc element headers and alignment */
	uint64_t total;        /**< the sum */
};

/** Fill @p out (may be NULL) for a table of @p capacity flows. @return out->total. No EAL needed. */
uint64_t sbx_flowtable_mem(uint32_t capacity, struct sbx_flowtable_mem *out);

/** Free the table without emitting its flows (sbx_flowtable_flush first to export them). */
void sbx_flowtable_free(struct sbx_flowtable *ft);

/**
 * Meter @p n frames that arrived on port @p port at @p now_ns (one time for the burst). Frames are
 * only read. Records of flows that close (timeouts seen on arrival, FIN/RST, full table) are
 * emitted during the call.
 */
void sbx_flowtable_meter(struct sbx_flowtable *ft, const uint8_t *const frames[], const uint32_t lens[],
			 unsigned int n, uint16_t port, uint64_t now_ns);

#define SBX_FLOW_DIR_RX 0 /**< key.dir: frames received on key.port (flowDirection 0, ingress) */
#define SBX_FLOW_DIR_TX 1 /**< key.dir: frames spanbox sent on key.port (flowDirection 1, egress) */

/** sbx_flowtable_meter for frames sent on (@p dir SBX_FLOW_DIR_TX) or received on (SBX_FLOW_DIR_RX)
 *  port @p port: the key's dir, so the two directions of a port are separate flows. */
void sbx_flowtable_meter_dir(struct sbx_flowtable *ft, const uint8_t *const frames[], const uint32_t lens[],
			     unsigned int n, uint16_t port, uint8_t dir, uint64_t now_ns);

/**
 * Close the flows that reached a timeout by @p now_ns: every flow past the active timeout (from
 * the oldest, at most @p budget of them) and the idle ones among the next @p budget key slots of
 * the cursor walk, **at most @p budget records in all** (a worker passes the free room of its ring
 * when that is smaller: a mass expiry then waits in the table rather than overflow the ring). A
 * walk of the whole table takes capacity / budget calls.
 * @return records emitted (<= @p budget)
 */
unsigned int sbx_flowtable_expire(struct sbx_flowtable *ft, uint64_t now_ns, unsigned int budget);

/** Close every flow (reason @p reason, normally SBX_FLOW_END_FORCED; the idle and active timeouts
 *  are applied first, as by expire). @return records emitted. */
unsigned int sbx_flowtable_flush(struct sbx_flowtable *ft, uint64_t now_ns, enum sbx_flow_end_reason reason);

/** Copy the counters. */
void sbx_flowtable_stats(const struct sbx_flowtable *ft, struct sbx_flowtable_stats *out);

/** "idle", "active", "end", "forced", "resources" (NULL for another value). */
const char *sbx_flow_end_reason_name(unsigned int reason);

/** Change the timeouts of @p ft (ns; 0 keeps one), for the flows in it too: they apply from the
 *  next frame or expiry walk on (flows is live). The table's owner thread only. */
void sbx_flowtable_set_timeouts(struct sbx_flowtable *ft, uint64_t active_ns, uint64_t idle_ns);

/** Switch @p ft between unidirectional flows and biflows (@p biflow 1, RFC 5103). A change first
 *  closes every flow (reason forced: their keys are not in the new mode's form). @return records
 *  emitted. The table's owner thread only. */
unsigned int sbx_flowtable_set_biflow(struct sbx_flowtable *ft, uint64_t now_ns, int biflow);

/** Whether @p ft meters biflows. */
int sbx_flowtable_biflow(const struct sbx_flowtable *ft);

#endif
