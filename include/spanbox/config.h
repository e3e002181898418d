/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file config.h
 * The appliance configuration: what a JSON config file (docs/CONFIG.md) parses into.
 *
 * The struct is plain data with fixed-size arrays and no pointers, so the primary can copy it
 * verbatim into the shared memzone (shm.h) where workers and mgmt read it.
 */
#ifndef SPANBOX_CONFIG_H
#define SPANBOX_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "spanbox/rss.h"
#include "spanbox/mapset.h"
#include "spanbox/mask.h"
#include "spanbox/ts_in.h"
#include "spanbox/timestamp.h"

struct cJSON;

#define SBX_MAX_PORTS 64           /**< ports in one config */
#define SBX_MAX_WORKERS 32         /**< worker processes */
#define SBX_MAX_STANDBYS 4         /**< hot-standby worker processes (workers.standby) */
#define SBX_MAX_RXQ_PER_WORKER 64  /**< (port, queue) pairs one worker polls: SBX_MAX_PORTS, so that the
					 default queues (a queue of every port, 98_sanitizers found 64 ports
					 overflow 16) always fit */
#define SBX_MAX_XCONNECTS 32       /**< cross-connect pairs */
#define SBX_NAME_LEN 32            /**< port, prefix and netns names, NUL included */
#define SBX_MAX_BURST 256          /**< largest workers.burst, mbufs (the worker's burst array) */
#define SBX_DEVARGS_LEN 256        /**< DPDK devargs string, NUL included */
#define SBX_PATH_LEN 256           /**< file paths, NUL included */
#define SBX_MAX_EXTRA_EAL 8        /**< extra EAL arguments passed to every process */
#define SBX_MAX_TUNNEL_SOURCES 1024 /**< most tunnel senders one worker follows (workers.tunnel_senders) */
#define SBX_TUNNEL_SENDERS_DEFAULT 256 /**< workers.tunnel_senders.entries by default */
#define SBX_TUNNEL_IDLE_S_DEFAULT 300  /**< workers.tunnel_senders.idle_s by default */
#define SBX_LCORE_ID_MAX 127       /**< highest lcore id (RTE_MAX_LCORE - 1 in Debian's DPDK 22.11) */

/** How a port is driven. */
enum sbx_port_kind {
	SBX_PORT_ETHDEV = 0, /**< workers call rte_eth_rx_burst/tx_burst on it directly */
	SBX_PORT_PCAP_FILE = 1, /**< net_pcap: only the primary can poll it (docs/PCAP_SECONDARY.md);
				 workers exchange mbufs with the primary through rte_rings */
};

/** Tunnels an ingress decap rule terminates (docs/CONFIG.md "ingress"). */
enum sbx_decap_type {
	SBX_DECAP_ERSPAN = 1, /**< ERSPAN types I, II and III over GRE (draft-foschiano-erspan-03) */
	SBX_DECAP_VXLAN = 2,  /**< VXLAN over UDP (RFC 7348) */
	SBX_DECAP_GRE = 3,    /**< GRE transparent Ethernet bridging, protocol 0x6558 (RFC 2784, RFC 2890, RFC 1701) */
	SBX_DECAP_GENEVE = 4, /**< GENEVE over UDP (RFC 8926), Ethernet payload (protocol 0x6558) only */
	SBX_DECAP_GTPU = 5,   /**< GTP-U G-PDUs over UDP (3GPP TS 29.281): inner IPv4/IPv6 behind a synthesised
				   Ethernet header */
};

/** @return true for the decap types carried in UDP (their rules have a udp_port). */
static inline bool sbx_decap_type_udp(uint8_t type)
{
	return type == SBX_DECAP_VXLAN || type == SBX_DECAP_GENEVE || type == SBX_DECAP_GTPU;
}

#define SBX_MAX_DECAP_RULES 16 /**< decap rules of one port */
#define SBX_MAX_DECAP_IDS 8   /**< ERSPAN session ids or VXLAN VNIs one rule lists */
#define SBX_VXLAN_PORT 4789   /**< IANA VXLAN UDP port (RFC 7348 section 5), the rule's default */
#define SBX_GENEVE_PORT 6081  /**< IANA GENEVE UDP port (RFC 8926 section 3.3), the rule's default */
#define SBX_GTPU_PORT 2152    /**< GTP-U UDP port (3GPP TS 29.281 section 4.4.2.3), the rule's default */

/** One decap rule of a port's ingress: which tunnels it terminates. */
struct sbx_decap_rule {
	uint8_t type;                     /**< enum sbx_decap_type */
	bool strip_fcs;                   /**< the inner frame ends in a 4-byte FCS to remove (default false) */
	uint16_t udp_port;                /**< vxlan, geneve, gtpu: outer UDP destination port (default
					       SBX_VXLAN_PORT, SBX_GENEVE_PORT, SBX_GTPU_PORT) */
	uint8_t nb_ids;                   /**< entries used in ids[]; 0 = every session / VNI */
	uint32_t ids[SBX_MAX_DECAP_IDS];  /**< erspan: session ids 0..1023; vxlan, geneve: VNIs 0..16777215; gre: GRE
					       keys; gtpu: TEIDs */
	uint8_t local_af;                 /**< 0 = any outer destination, 4 or 6: local_ip must match */
	uint8_t local_ip[16];             /**< outer destination address, network order (IPv4 in bytes 0..3) */
};

/** The config name of a decap rule type ("erspan", "vxlan", "gre"), "unknown" out of range. */
const char *sbx_decap_type_name(uint8_t type);

/** What a port with decap rules does with a frame that matches none of them. */
enum sbx_non_tunnel { SBX_NON_TUNNEL_PASS = 0, SBX_NON_TUNNEL_DROP = 1 };

/** ingress.strip bits: headers removed after decap. */
#define SBX_STRIP_VLAN 0x1 /**< every 802.1Q (0x8100) and 802.1ad (0x88A8, 0x9100) tag */
#define SBX_STRIP_MPLS 0x2 /**< MPLS label stacks (0x8847, 0x8848) */
#define SBX_STRIP_VNTAG 0x4 /**< Cisco VN-Tag (EtherType 0x8926, 6 bytes with it) */
#define SBX_STRIP_ETAG 0x8  /**< IEEE 802.1BR E-Tag (EtherType 0x893F, 8 bytes with it) */

/** ingress.dedup.ignore bits: fields treated as equal when frames are compared. */
#define SBX_DEDUP_IGNORE_TTL 0x1         /**< IPv4 TTL, IPv6 hop limit */
#define SBX_DEDUP_IGNORE_IP_CHECKSUM 0x2 /**< IPv4 header checksum (implied by TTL or DSCP) */
#define SBX_DEDUP_IGNORE_DSCP 0x4        /**< IPv4 DSCP, IPv6 traffic class DSCP bits */
#define SBX_DEDUP_IGNORE_VLAN 0x8        /**< the MAC addresses and every VLAN tag: frames are compared from
					      their first EtherType that is not a VLAN tag's on */

/** ingress.dedup.action: what the dedup stage does with a duplicate. */
enum sbx_dedup_action {
	SBX_DEDUP_DROP = 0,  /**< "drop" (default): dropped, counted in dedup_duplicates */
	SBX_DEDUP_COUNT = 1, /**< "count": passed on, counted in dedup_duplicates_passed (measure first) */
};

/** ingress.dedup.entries: entries of a worker's dedup table (a power of two; 24 bytes each, plus a
 * 64-byte header: sbx_dedup_mem_size() in ingress.h). The default takes 1572928 bytes (1.5 MiB). */
#define SBX_DEDUP_ENTRIES_MIN 1024
#define SBX_DEDUP_ENTRIES_MAX 1048576
#define SBX_DEDUP_ENTRIES_DEFAULT 65536

/**
 * A port's ingress stages (docs/CONFIG.md "ingress"), applied by the worker to every frame received
 * on the port before forwarding and mirroring see it: decap, then strip, then tag, then dedup.
 * All zero = no ingress stage (the frame is untouched).
 */
struct sbx_ingress_cfg {
	uint8_t nb_decap;                                 /**< entries used in decap[] */
	struct sbx_decap_rule decap[SBX_MAX_DECAP_RULES]; /**< first match wins */
	uint8_t non_tunnel;                               /**< enum sbx_non_tunnel (default pass) */
	uint8_t strip;                                    /**< SBX_STRIP_* bits */
	uint16_t tag_vlan;                                /**< 802.1Q VLAN id 1..4094 pushed after strip; 0 = none */
	uint32_t dedup_window_us;                         /**< microseconds, 1..1000000; 0 = no dedup */
	uint8_t dedup_ignore;                             /**< SBX_DEDUP_IGNORE_* bits */
	uint8_t dedup_action;                             /**< enum sbx_dedup_action */
	uint32_t dedup_entries;                           /**< dedup table entries per worker (power of two) */
	/* ingress.timestamp (timestamps in, include/spanbox/ts_in.h): runs first, before decap */
	uint8_t ts_format;                                /**< enum sbx_ts_in_format; 0 = no timestamp stage */
	bool ts_fcs;                                      /**< metamako: the frames end in an FCS after the trailer */
	uint8_t ts_tai_offset_s;                          /**< arista: TAI - UTC, seconds (TAI headers become UTC) */
	uint32_t ts_window_s;                             /**< metamako: plausibility window around our clock, seconds */
};

/** One port: a DPDK device (vdev or PCI) and its host-side demo set-up. */
struct sbx_port_cfg {
	char name[SBX_NAME_LEN];       /**< user name, e.g. "p0"; unique */
	char devargs[SBX_DEVARGS_LEN]; /**< DPDK devargs, e.g. "net_tap0,iface=sbx-p0" or "0000:01:00.0" */
	uint16_t mtu;                  /**< bytes of L3 payload; 68..9600 */
	uint16_t rx_desc;              /**< RX descriptors per queue; 64..16384 */
	uint16_t tx_desc;              /**< TX descriptors per queue; 64..16384 */
	char netns[SBX_NAME_LEN];      /**< launcher moves the tap iface into this netns ("" = stay) */
	char address[48];              /**< launcher gives the iface this CIDR address ("" = none) */
	uint8_t kind;                  /**< enum sbx_port_kind, derived from devargs */
	bool is_pci;                   /**< devargs names a PCI address: EAL runs without --no-pci */
	uint32_t speed_mbps;           /**< ports[].speed_mbps: the speed microburst utilisation is of,
					    Mb/s; 0 = the link's (a pcap file port has none) */
	struct sbx_ingress_cfg ingress; /**< ingress stages of frames received here (all zero = none) */
	struct sbx_rss_cfg rss;        /**< ports[].rss: hash fields, key, RETA spread (rss.h) */
};

/** @return true when @p c holds no ingress stage at all (the port's frames pass untouched). */
static inline bool sbx_ingress_cfg_empty(const struct sbx_ingress_cfg *c)
{
	return c->nb_decap == 0 && c->strip == 0 && c->tag_vlan == 0 && c->dedup_window_us == 0 &&
	       c->ts_format == SBX_TS_IN_NONE;
}

/** One (port, queue) a worker polls. */
struct sbx_rxq_cfg {
	uint16_t port;  /**< index into sbx_config.ports */
	uint16_t queue; /**< RX queue id on that port */
};

/** One worker process. */
struct sbx_worker_cfg {
	uint16_t lcore_id;   /**< EAL lcore id; unique across every spanbox process */
	int16_t cpu;         /**< the one CPU its polling thread is pinned to (workers.cpus[i]), or -1:
				  it floats on eal.cpus (no workers.cpus) */
	uint16_t nb_rxq;     /**< entries used in rxq[] */
	struct sbx_rxq_cfg rxq[SBX_MAX_RXQ_PER_WORKER];
};

/** A cross-connect: every frame received on a goes out of b and vice versa. */
struct sbx_xconnect_cfg {
	uint16_t a, b; /**< indexes into sbx_config.ports; a != b */
};

#define SBX_MAX_MIRRORS 16          /**< mirror sessions */
#define SBX_MAX_MIRROR_SOURCES 64   /**< sources of one session */
#define SBX_FILTER_LEN 256          /**< tcpdump filter text, NUL included */

/** Which traffic of a source port a session mirrors. */
enum sbx_direction { SBX_DIR_RX = 1, SBX_DIR_TX = 2, SBX_DIR_BOTH = 3 };

/** The config name of direction @p d (enum sbx_direction: "rx", "tx", "both"), "unknown" out of
 *  range; the names the config's "direction" keys take (shared/config.c), every answer uses them. */
const char *sbx_direction_name(uint8_t d);

/** How the mirrored frame is carried to the destination. */
enum sbx_encap {
	SBX_ENCAP_SPAN = 0,    /**< the original frame, unchanged */
	SBX_ENCAP_RSPAN = 1,   /**< an 802.1Q tag (vlan) pushed in front of any existing tags (IEEE 802.1Q) */
	SBX_ENCAP_ERSPAN2 = 2, /**< Eth/IP/GRE(0x88BE)/ERSPAN type II (draft-foschiano-erspan, RFC 2784/2890) */
	SBX_ENCAP_ERSPAN3 = 3, /**< Eth/IP/GRE(0x22EB)/ERSPAN type III (draft-foschiano-erspan) */
	SBX_ENCAP_VXLAN = 4,   /**< Eth/IP/UDP(udp_port)/VXLAN(vni) (RFC 7348) */
};

/** How a mirror copy is made. */
enum sbx_copy_strategy {
	SBX_COPY_ADAPTIVE = 0, /**< copy frames of at most threshold bytes, share bigger ones */
	SBX_COPY_COPY = 1,     /**< always a private deep copy (rte_pktmbuf_copy) */
	SBX_COPY_SHARE = 2,    /**< always share the frame (indirect mbuf, refcount) behind a header mbuf */
};

/** What a session does with a copy longer than its destination's MTU allows (docs/MIRRORING.md
 *  "Copies and the destination's MTU"): the key "oversize" of a session. */
enum sbx_oversize {
	SBX_OVERSIZE_TRUNCATE = 0, /**< cut the frame so that the copy fits (ERSPAN: T bit set); the default */
	SBX_OVERSIZE_DROP = 1,     /**< make no copy (counted: tx_oversize) */
};

/** ERSPAN type III timestamp granularity (the Gra field). */
enum sbx_erspan_gra {
	SBX_GRA_100US = 0,    /**< 100 microseconds */
	SBX_GRA_100NS = 1,    /**< 100 nanoseconds */
	SBX_GRA_IEEE1588 = 2, /**< IEEE 1588: seconds (upper 32 bits, in the platform subheader) + ns */
};

/** One source of a session. */
struct sbx_mirror_source {
	uint16_t port;     /**< index into sbx_config.ports */
	uint8_t direction; /**< enum sbx_direction */
};

/** Mirror session ids: SBX_MIRROR_ID_MIN..SBX_MIRROR_ID_MAX (the 10-bit session id of ERSPAN; 0 is not one). */
#define SBX_MIRROR_ID_MIN 1
#define SBX_MIRROR_ID_MAX 1023

/** Where a session's copies go (sbx_mirror_cfg.dst_kind). */
enum sbx_dst_kind {
	SBX_DST_PORT = 0,     /**< a port's mirror TX queues (dst_port) */
	SBX_DST_RECORDER = 1, /**< the primary's recorder: a capture into pcapng files (docs/CAPTURE.md) */
	SBX_DST_GROUP = 2,    /**< a tool group (dst_group): one member per flow (docs/CONFIG.md "tool_groups") */
};

#define SBX_CAPTURE_FILES_MAX 1000 /**< files in one capture's ring */

/**
 * What the recorder does with the frames of a capture (destination "recorder" of a session,
 * docs/CAPTURE.md "Recording through the API"). All limits 0 = none.
 */
struct sbx_capture_cfg {
	uint32_t file_count;   /**< ring of files: keep the last file_count files (0 = one file, no ring) */
	uint32_t file_mb;      /**< start the next file past this many MiB (1..4096; 0 = no size limit) */
	uint32_t file_seconds; /**< start the next file after this many seconds (0 = no time limit) */
	uint32_t stop_seconds; /**< end the capture after this many seconds */
	uint64_t stop_packets; /**< end it once this many frames are written */
	uint64_t stop_bytes;   /**< end it once this many bytes of pcapng are written (all files) */
	uint64_t max_bytes;    /**< bytes its files may take on disk at once (its share of the quota:
				    mgmt.captures.quota_mb); reached: ended "quota" */
	int32_t owner_pid;     /**< the mgmt process that started it (0 = the config file): the capture
				    ends when another mgmt attaches or this one leaves */
};

/** One mirror session (docs/CONFIG.md "mirrors"). */
struct sbx_mirror_cfg {
	uint16_t id;                  /**< session id: SBX_MIRROR_ID_MIN..SBX_MIRROR_ID_MAX; unique */
	char name[SBX_NAME_LEN];
	uint16_t nb_sources;
	struct sbx_mirror_source sources[SBX_MAX_MIRROR_SOURCES];
	char filter[SBX_FILTER_LEN];  /**< tcpdump syntax, "" = every frame */
	uint32_t snaplen;             /**< bytes of the frame kept, 0 = whole frame */
	uint32_t sample;              /**< mirror 1 frame in N (per worker), 1 = every frame */
	uint16_t dst_port;            /**< index into sbx_config.ports (dst_kind SBX_DST_PORT; a group
					   destination: its first member, for the copies' source MAC) */
	uint8_t dst_kind;             /**< enum sbx_dst_kind */
	uint8_t dst_group;            /**< dst_kind SBX_DST_GROUP: index into sbx_config.tool_groups (the
					   copies go to one member per flow, not to dst_port) */
	struct sbx_capture_cfg rec;   /**< dst_kind SBX_DST_RECORDER: files and stop conditions */
	/* encap */
	uint8_t encap;                /**< enum sbx_encap */
	uint16_t vlan;                /**< RSPAN VLAN id 1..4094 */
	uint8_t ip_version;           /**< 4 or 6, from the address family of src_ip/dst_ip */
	uint8_t src_ip[16], dst_ip[16]; /**< network byte order; IPv4 in the first 4 bytes */
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	bool src_mac_set;             /**< false: use the destination port's MAC */
	uint8_t ttl;                  /**< IPv4 TTL / IPv6 hop limit, default 64 */
	uint8_t dscp;                 /**< 0..63 */
	bool df;                      /**< IPv4 don't-fragment bit, default true */
	uint8_t gra;                  /**< enum sbx_erspan_gra (type III) */
	uint8_t hw_id;                /**< 6-bit hardware id (type III) */
	uint16_t sgt;                 /**< security group tag (type III) */
	bool platform_subheader;      /**< type III: append the platform-specific subheader (id 0x3) */
	uint32_t vni;                 /**< vxlan: 24-bit VNI, default the session id */
	uint16_t udp_port;            /**< vxlan: UDP destination port, default 4789 */
	/* copy */
	uint8_t copy_strategy;        /**< enum sbx_copy_strategy */
	uint32_t copy_threshold;      /**< bytes; adaptive copies frames <= threshold (default 512) */
	uint8_t oversize;             /**< enum sbx_oversize: a copy longer than the destination's MTU */
	struct sbx_mask_cfg mask;     /**< the region masked in every copy (mask.h); from 0: none */
	/* timestamp (issue #26, include/spanbox/timestamp.h) */
	uint8_t ts_format;            /**< enum sbx_ts_format: SBX_TS_NONE (0) = no timestamp */
	uint8_t ts_port;              /**< metamako: source port field, when ts_port_set */
	bool ts_port_set;             /**< false: the trailer's port is the frame's source port index */
	uint16_t ts_device;           /**< metamako: source device id field (default 0) */
};

#define SBX_MAX_TOOL_GROUPS 64      /**< tool groups in one config (workers.tool_group_capacity.groups at most) */
#define SBX_MAX_GROUP_MEMBERS 64    /**< member ports of one tool group (workers.tool_group_capacity.members at most) */
#define SBX_TOOL_GROUP_CAPACITY_DEFAULT 8 /**< workers.tool_group_capacity.groups and .members by default */

/** Which header fields the flow hash of a tool group takes (include/spanbox/flowhash.h). */
enum sbx_group_hash {
	SBX_GROUP_HASH_5TUPLE = 0, /**< sorted IP pair, protocol, sorted port pair (SBX_FLOW_HASH_5TUPLE) */
	SBX_GROUP_HASH_2TUPLE = 1, /**< sorted IP pair only (SBX_FLOW_HASH_2TUPLE) */
};

/**
 * One tool group (docs/CONFIG.md "tool_groups"): mirror copies sent to it are spread over its
 * member ports by a symmetric flow hash, each flow (both directions) to one member; a member that
 * fails loses its share to the others until it is healthy again for hold_down_ms.
 */
struct sbx_tool_group_cfg {
	char name[SBX_NAME_LEN];                 /**< unique among the groups */
	uint8_t nb_members;                      /**< 1..SBX_MAX_GROUP_MEMBERS */
	uint16_t members[SBX_MAX_GROUP_MEMBERS]; /**< indexes into sbx_config.ports, distinct */
	uint8_t hash;                            /**< enum sbx_group_hash (default 5tuple) */
	uint32_t hold_down_ms;                   /**< failover.hold_down_ms: healthy this long before a
						      failed member gets its buckets back (default 2000) */
	uint32_t tx_refused_percent;             /**< failover.tx_refused_percent: a member whose TX
						      queue refused more than this share of its copies
						      in one window goes down (1..100, default 50) */
	uint32_t tx_refused_window_ms;           /**< failover.tx_refused_window_ms: that window
						      (100..60000, default 1000) */
	uint64_t rate_pps;                       /**< member_rate_limit.pps: copies/s each member may
						      get, 0 = no limit */
	uint64_t rate_bps;                       /**< member_rate_limit.bps: bits/s (frame bytes x 8)
						      each member may get, 0 = no limit */
};

/* ---- maps (issue #27, docs/MAPS.md, docs/CONFIG.md "maps"; static: a change needs a restart) ---- */
#define SBX_MAX_MAPS 256 /**< maps in one config (their rules: SBX_MAP_MAX_RULES in all; a set of
			   maps is a struct sbx_mapset, mapset.h) */
_Static_assert(SBX_MAX_MAPS <= SBX_MAPSET_BITS, "a struct sbx_mapset holds every map");

/**
 * One map: a mirror session whose selection is a rule table (include/spanbox/maprules.h). The
 * session part (id, name, sources, destination, encap, copy, filter ...) is parsed and run as a
 * mirror session's; the rules are not here (this struct is copied into the memzone): the primary
 * keeps them apart (shared/config_maps.c, primary/maps.c), the config only says how many and
 * their digest, so that a running document without them still names the same tables.
 */
struct sbx_map_cfg {
	struct sbx_mirror_cfg s;  /**< the session: filter runs only on frames the rules passed */
	bool collector;           /**< takes the frames of its sources no other map passed */
	uint32_t nb_rules;        /**< rules of its table, 0..SBX_MAP_MAX_RULES */
	uint64_t rules_digest;    /**< FNV-1a 64 of the parsed rules (sbx_config_maps_digest) */
};

/** The whole configuration. */
/* ---- flow metering (issue #28, docs/FLOWS.md, docs/CONFIG.md "flows") ---- */
#define SBX_MAX_FLOW_COLLECTORS 4      /**< IPFIX collectors of flows.collectors */
#define SBX_FLOWS_CAPACITY_DEFAULT 65536 /**< flows.flows_per_worker by default */
#define SBX_FLOWS_CAPACITY_MAX (4u << 20) /**< largest flows.flows_per_worker */

/** One IPFIX collector (flows.collectors[i]). */
struct sbx_flow_collector_cfg {
	char address[64];   /**< IPv4 or IPv6 literal */
	uint16_t port;      /**< UDP/TCP port (default 4739, RFC 7011) */
	uint8_t transport;  /**< enum sbx_ipfix_transport: 0 udp, 1 tcp */
};

/** The "flows" section: what the workers meter and where the primary exports; live (runtime
 *  tables) but for capacity (flows_per_worker, static: the size of the workers' tables). */
struct sbx_flows_cfg {
	bool enabled;              /**< flows.enabled (default true once the section is given) */
	uint64_t port_mask;        /**< bit p: frames received on port p are metered (flows.ports;
				        default: every port) */
	uint32_t active_s;         /**< flows.active_timeout_s (1..86400, default 60) */
	uint32_t idle_s;           /**< flows.idle_timeout_s (1..3600, default 15) */
	uint32_t capacity;         /**< flows.flows_per_worker (1024..SBX_FLOWS_CAPACITY_MAX) */
	uint32_t domain;           /**< flows.observation_domain_id (default 0) */
	uint32_t template_period_s; /**< flows.template_period_s: UDP template resend (1..3600, default 60) */
	uint16_t nb_collectors;
	struct sbx_flow_collector_cfg collectors[SBX_MAX_FLOW_COLLECTORS];
	bool biflow;               /**< flows.biflow: biflows (RFC 5103), both directions of a flow in one
				        record, forward the first frame's direction (default false); live: a
				        change flushes the workers' tables (reason forced) */
	uint64_t tx_mask;          /**< bit p: frames spanbox sends on port p are metered (flows.ports[]
				        direction "tx" or "both"; port_mask is the "rx" side) */
	struct sbx_mapset map_mask; /**< map j: frames cfg.maps[j] took (its rules, filter and sampling)
				        on any of its sources are metered (flows.sessions, map ids) */
	uint16_t nb_sessions;      /**< flows.sessions as given: ids, resolved to map_mask / mirror_mask after "maps" */
	uint16_t session_ids[SBX_MAX_MAPS + SBX_MAX_MIRRORS];
	uint64_t mirror_mask;      /**< bit i: frames cfg.mirrors[i] took (its filter and sampling) are
				        metered (flows.sessions, mirror session ids) */
};

/** True when the flows section @p f meters anything (enabled, and a port, direction or map selected). */
static inline bool sbx_flows_cfg_meters(const struct sbx_flows_cfg *f)
{
	return f->enabled && (f->port_mask != 0 || f->tx_mask != 0 || !sbx_mapset_empty(&f->map_mask) || f->mirror_mask != 0);
}

struct sbx_config {
	/* eal */
	char file_prefix[SBX_NAME_LEN]; /**< EAL --file-prefix shared by all processes */
	uint32_t socket_mem_mb;         /**< hugepage memory the primary reserves on each NUMA socket, MiB */
	uint16_t primary_lcore;         /**< lcore id of the primary */
	uint16_t mgmt_lcore;            /**< lcore id of mgmt */
	char cpus[SBX_NAME_LEN];        /**< CPU set every lcore id floats on, e.g. "0-1" (without
					     workers.cpus), the default of housekeeping_cpus */
	char housekeeping_cpus[SBX_NAME_LEN]; /**< CPU set of the primary's and mgmt's threads (recorder,
						   watchers, EAL's control threads) and of parked standbys
						   (eal.housekeeping_cpus; default eal.cpus without workers.cpus,
						   eal.cpus less the workers' CPUs with it); canonical list */
	bool pinned;                    /**< workers.cpus given: each worker on a CPU of its own */
	uint16_t nb_extra_eal;
	char extra_eal[SBX_MAX_EXTRA_EAL][SBX_DEVARGS_LEN]; /**< passed verbatim to every EAL */
	/* pool */
	uint32_t pool_mbufs;            /**< mbufs per socket pool; 0 = computed by the planner */
	uint16_t pool_cache;            /**< per-lcore mempool cache, objects; 0..512 */
	uint32_t pool_headroom;         /**< mbufs the planner adds to each pool; 0..1000000 (default 2048) */
	bool pool_force;                /**< start with a pool.mbufs below the plan (warning, not refusal) */
	bool pool_measure_memset;       /**< time a first-touch memset of each pool's bytes at start */
	/* ports */
	uint16_t nb_ports;
	struct sbx_port_cfg ports[SBX_MAX_PORTS];
	/* workers */
	uint16_t nb_workers;
	uint16_t burst;                 /**< packets per rx/tx burst; 1..SBX_MAX_BURST */
	uint32_t idle_sleep_us;         /**< sleep after idle_polls empty polls, microseconds */
	uint32_t idle_polls;            /**< empty polls in a row before sleeping */
	bool busy_poll;                 /**< never sleep (benchmarks) */
	uint32_t hang_timeout_ms;       /**< a worker whose heartbeat is older is killed and restarted */
	uint16_t crash_limit;           /**< crashes within crash_window_s that mark a worker failed */
	uint16_t crash_window_s;        /**< seconds */
	struct sbx_worker_cfg workers[SBX_MAX_WORKERS];
	uint16_t nb_standby;            /**< hot-standby processes (workers.standby), 0..SBX_MAX_STANDBYS */
	uint16_t standby_lcores[SBX_MAX_STANDBYS]; /**< their first lcore ids (workers.standby_lcores, or the
						       next free ids); unique across every spanbox process */
	uint32_t tunnel_senders;        /**< workers.tunnel_senders.entries: tunnel senders each worker
					     follows, 1..SBX_MAX_TUNNEL_SOURCES (default 256) */
	uint32_t tunnel_idle_s;         /**< workers.tunnel_senders.idle_s: a sender with no frame for this
					     many seconds leaves the table (1..86400, default 300) */
	uint16_t tg_cap_groups;         /**< workers.tool_group_capacity.groups: tool groups the memzone
					     holds slots for, 1..SBX_MAX_TOOL_GROUPS (default 8); static */
	uint16_t tg_cap_members;        /**< workers.tool_group_capacity.members: members of each,
					     1..SBX_MAX_GROUP_MEMBERS (default 8); static */
	/* forwarding */
	uint16_t nb_xconnects;
	struct sbx_xconnect_cfg xconnects[SBX_MAX_XCONNECTS];
	/* mirroring */
	uint16_t nb_mirrors;
	struct sbx_mirror_cfg mirrors[SBX_MAX_MIRRORS];
	/* tool groups (live, like mirrors: between mirrors and mgmt, see sbx_config_static_diff) */
	uint16_t nb_tool_groups;
	struct sbx_tool_group_cfg tool_groups[SBX_MAX_TOOL_GROUPS];
	/* maps (static: sbx_config_static_diff "maps"; their rules live apart, config_maps.h) */
	uint16_t nb_maps;
	struct sbx_map_cfg maps[SBX_MAX_MAPS];
	/* microburst (docs/CONFIG.md "microburst"; static: a change needs a restart) */
	bool mb_enabled;                /**< microburst.enabled: per-window byte accounting (default true) */
	uint32_t mb_window_us;          /**< microburst.window_us: window length, us (100..100000, default 1000) */
	uint32_t mb_threshold_pct;      /**< microburst.threshold_pct: a window at or above this utilisation
					     is part of a burst (1..1000, default 80) */
	/* mgmt */
	char mgmt_listen[48];           /**< IPv4 or IPv6 literal */
	uint16_t mgmt_port;             /**< TCP port */
	char mgmt_database[SBX_PATH_LEN]; /**< SQLite file */
	char mgmt_token[129];           /**< bearer token for mutating requests; "" = read/generate token_file */
	char mgmt_token_file[SBX_PATH_LEN + 8]; /**< where the generated token lives (0600), default database + ".token" */
	uint16_t mgmt_history_interval_s; /**< stats history sampling period, seconds (1..60) */
	char mgmt_web_root[SBX_PATH_LEN]; /**< static files of the web page; "" = web/ of the source tree */
	char mgmt_viewer_token[129];    /**< mgmt.tokens.viewer: bearer token of the viewer role (GET/HEAD
					     only); "" = mgmt_viewer_token_file, or no viewer role */
	char mgmt_viewer_token_file[SBX_PATH_LEN]; /**< mgmt.tokens.viewer_file: the viewer token in a
						     file (0600, generated when missing); "" = none */
	char mgmt_tls_cert[SBX_PATH_LEN]; /**< mgmt.tls.cert: PEM certificate (chain) file; "" = plain HTTP */
	char mgmt_tls_key[SBX_PATH_LEN];  /**< mgmt.tls.key: PEM private key file ("" iff no cert) */
	char capture_dir[SBX_PATH_LEN]; /**< mgmt.captures.directory: capture files (<dir>/<id>/<n>.pcapng) */
	uint32_t capture_quota_mb;      /**< mgmt.captures.quota_mb: MiB all capture files may take */
	bool mgmt_insecure;             /**< mgmt.insecure: serve a non-127.0.0.1 address without TLS
					     (logged, and a /status warning) */
	struct sbx_flows_cfg flows;     /**< flows (live but flows_per_worker): flow metering and IPFIX export */
};

/**
 * Parse and validate a JSON config held in memory.
 *
 * @param text    NUL-terminated JSON text.
 * @param cfg     filled on success; left in an unspecified state on error.
 * @param err     on error, receives "field: message" (e.g. "ports[1].devargs: must not be empty").
 * @param errlen  size of err in bytes.
 * @return 0 on success, -1 on any error (unknown key, wrong type, out of range, duplicate name,
 *         dangling reference; a devargs key the port's driver does not take; an eal.extra_args
 *         option spanbox sets itself; a pcap port's tx_pcap that is another port's tx_pcap, any
 *         port's rx_pcap, mgmt.database or its -wal/-shm/-journal, or mgmt.token_file, compared by
 *         realpath and inode: relative paths are taken from the current working directory).
 */
int sbx_config_parse(const char *text, struct sbx_config *cfg, char *err, size_t errlen);

/*
 * The steps of sbx_config_parse() (shared/config_doc.c), for the files that parse one section each:
 * shared/config.c holds every section but "maps" (shared/config_maps.c) and the checks across them.
 */

/**
 * Every section of the JSON object @p root but "maps", in order (the root's keys checked first), into
 * @p cfg (zeroed by the caller). @return 0, or -1 with "field: message" in @p err.
 */
int sbx_config_sections_parse(const struct cJSON *root, struct sbx_config *cfg, char *err, size_t errlen);

/**
 * After "maps": resolve flows.sessions (ids of maps and mirror sessions) into flows.map_mask (bit j =
 * cfg.maps[j]) and flows.mirror_mask (bit i = cfg.mirrors[i]). An unknown id is refused naming
 * flows.sessions[i]. @return 0, or -1 with "field:
 * message" in @p err.
 */
int sbx_config_flows_resolve(struct sbx_config *cfg, char *err, size_t errlen);

/**
 * The checks across the parsed sections' files (pcap ports, mgmt.database, token file: none is
 * another's, nor @p config_path when it is known). @return 0, or -1 with the field in @p err.
 */
int sbx_config_files_check(const struct sbx_config *cfg, const char *config_path, char *err, size_t errlen);

/**
 * The session parser of "mirrors" (shared/config.c) for an object at @p path whose keys are the
 * mirror keys and @p extra_keys (NULL-terminated); ids and names are checked against every mirror.
 * @return 0, or -1 with "<path>.<key>: why" in @p err
 */
int sbx_config_session_parse(const struct cJSON *obj, const char *path, const char *const extra_keys[],
			     struct sbx_config *cfg, struct sbx_mirror_cfg *m, char *err, size_t errlen);

/**
 * Read a file and parse it with sbx_config_parse(); a tx_pcap that is @p path itself is refused too.
 * @return 0 on success, -1 on error; a missing or unreadable file gives "config: <path>: <strerror>".
 */
int sbx_config_load(const char *path, struct sbx_config *cfg, char *err, size_t errlen);

/** @return index of the port called @p name, or -1. */
int sbx_config_port_index(const struct sbx_config *cfg, const char *name);

/** @return number of RX queues the primary sets up on port @p port (max queue id polled + 1, >= 1). */
uint16_t sbx_config_port_nb_rxq(const struct sbx_config *cfg, uint16_t port);

/** @return index of the tool group called @p name, or -1. */
int sbx_config_group_index(const struct sbx_config *cfg, const char *name);

/** @return true when port @p port is the destination of a mirror session (its port, or a member of
 *  its tool group). */
static inline bool sbx_config_is_mirror_dst(const struct sbx_config *cfg, uint16_t port)
{
	for (uint16_t i = 0; i < cfg->nb_mirrors; i++) {
		const struct sbx_mirror_cfg *m = &cfg->mirrors[i];

		if (m->dst_kind == SBX_DST_PORT && m->dst_port == port)
			return true;
		if (m->dst_kind == SBX_DST_GROUP && m->dst_group < cfg->nb_tool_groups)
			for (uint8_t k = 0; k < cfg->tool_groups[m->dst_group].nb_members; k++)
				if (cfg->tool_groups[m->dst_group].members[k] == port)
					return true;
	}
	return false;
}

/**
 * TX queues of port @p port: one per worker for forwarding (queue w), plus one per worker for
 * mirror copies (queue nb_workers + w), so mirror traffic never waits behind, or blocks, forwarded
 * traffic, and no queue is shared by two cores. Every port has its mirror queues, so a session
 * added at run time (REST API) can use any port as its destination.
 */
static inline uint16_t sbx_config_port_nb_txq(const struct sbx_config *cfg, uint16_t port)
{
	(void)port;
	return (uint16_t)(cfg->nb_workers * 2);
}

/** The TX queue (on every port) on which worker @p w sends forwarded frames. */
static inline uint16_t sbx_fwd_txq(unsigned int w)
{
	return (uint16_t)w;
}

/** The TX queue (on every port) on which worker @p w sends its mirror copies. */
static inline uint16_t sbx_mirror_txq(const struct sbx_config *cfg, unsigned int w)
{
	return (uint16_t)(cfg->nb_workers + w);
}

/**
 * The cross-connect peer of every port of @p cfg: @p peer[i] = the index of the port frames
 * received on port i are forwarded to, -1 for none. The one builder of the map: workers forward
 * with it, mgmt shows it (from the active runtime tables, when it is read).
 */
static inline void sbx_config_peer_map(const struct sbx_config *cfg, int16_t peer[SBX_MAX_PORTS])
{
	for (uint16_t i = 0; i < SBX_MAX_PORTS; i++)
		peer[i] = -1;
	for (uint16_t i = 0; i < cfg->nb_xconnects; i++) {
		peer[cfg->xconnects[i].a] = (int16_t)cfg->xconnects[i].b;
		peer[cfg->xconnects[i].b] = (int16_t)cfg->xconnects[i].a;
	}
}

/** The cross-connect peer of port @p port of @p cfg (index), -1 for none. */
static inline int16_t sbx_config_peer(const struct sbx_config *cfg, uint16_t port)
{
	for (uint16_t i = 0; i < cfg->nb_xconnects; i++) {
		if (cfg->xconnects[i].a == port)
			return (int16_t)cfg->xconnects[i].b;
		if (cfg->xconnects[i].b == port)
			return (int16_t)cfg->xconnects[i].a;
	}
	return -1;
}

/**
 * Compare the sections that cannot change while the appliance runs (eal, pool, ports but their
 * ingress objects, workers, mgmt, and flows.flows_per_worker: the rest of flows is live) of two
 * configs made by sbx_config_parse().
 * @return NULL when equal, else the name of the first section that differs ("ports",
 *         "flows.flows_per_worker").
 */
const char *sbx_config_static_diff(const struct sbx_config *a, const struct sbx_config *b);

/**
 * Whether mgmt listening on @p listen serves reads without a token: exactly 127.0.0.1 (any other
 * address, 127.0.0.2 and ::1 included, needs a token for every API request, and TLS).
 */
bool sbx_config_mgmt_local(const char *listen);

/**
 * Check @p cfg's CPUs against this machine (at start and with --check, not at parse time: a
 * config is portable until it runs): every CPU of eal.cpus, eal.housekeeping_cpus and
 * workers.cpus must exist and be online (sbx_cpus_online()).
 * @return 0, or -1 with "FIELD: why" in @p err.
 */
int sbx_config_placement_check(const struct sbx_config *cfg, char *err, size_t errlen);

/**
 * The queues spanbox sets up on each vdev port (2 TX queues per worker on every port, the RX
 * queues workers.queues polls) against what its driver takes (net_tap and net_ring 16, net_memif
 * 255; shared/port_queues.c), so that --check refuses what rte_eth_dev_configure would refuse at
 * start. PCI NICs and pcap file ports are not checked here (the start checks a NIC's own limits).
 * @return 0, or -1 with "ports[i].devargs: why" in @p err.
 */
int sbx_config_queue_check(const struct sbx_config *cfg, char *err, size_t errlen);

/**
 * What spanbox-mgmt will refuse at start about HTTPS (docs/MGMT.md "HTTPS"), so that the
 * primary's --check says it too: on any address but 127.0.0.1, `mgmt.tls` unless `mgmt.insecure`;
 * with @p files, each of `mgmt.tls.cert` / `mgmt.tls.key` must be readable and hold a PEM block
 * ("-----BEGIN ...CERTIFICATE-----" / "-----BEGIN ...PRIVATE KEY-----"; spanbox-mgmt parses them
 * with GnuTLS and also checks that they match).
 * @param err  receives "mgmt.tls...: why" on failure.
 * @return 0, or -1.
 */
int sbx_config_mgmt_check(const struct sbx_config *cfg, bool files, char *err, size_t errlen);

/** @return true when any port is a PCI device (EAL must then run without --no-pci). */
bool sbx_config_has_pci(const struct sbx_config *cfg);

#endif
