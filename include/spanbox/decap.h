/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file decap.h
 * Tunnel termination on ingress: parse the outer headers of a received frame (bytes only: no mbufs,
 * no DPDK runtime), so the worker's ingress stage, the unit tests and the fuzzer call the same code.
 *
 * Sources:
 *  - Ethernet II, 802.1Q / 802.1ad outer tags: IEEE 802.1Q.
 *  - IPv4: RFC 791 (fragments: MF bit or a fragment offset); IPv6: RFC 8200 (extension headers
 *    are not walked: a next header other than GRE/UDP is "not a tunnel", a Fragment header
 *    directly behind the fixed header, in front of GRE/UDP, is a fragment: SBX_DECAP_FRAGMENT, for
 *    the stage to reassemble or pass; an atomic fragment, offset 0 and M 0, is none: RFC 6946
 *    section 4, "processed in isolation", its GRE/UDP parsed behind the Fragment header).
 *  - GRE: RFC 2784 (C bit: 4 bytes checksum + reserved1, the checksum is not verified), RFC 2890
 *    (K: 4-byte key, S: 4-byte sequence number), version 0 only; as RFC 2784 section 2.3 says of a
 *    receiver that does not implement RFC 1701, bits 1-5 other than K and S (RFC 1701's routing bit
 *    R, strict source route s, the high bit of Recur) are refused and bits 6-12 ignored. GRE with
 *    another protocol (IP, PPTP's 0x880B, keepalives) is "not a tunnel".
 *  - ERSPAN: draft-foschiano-erspan-03. Type I: GRE protocol 0x88BE without the S bit, the frame
 *    follows the 4-byte GRE header directly (no ERSPAN header). Type II: 0x88BE with the S bit,
 *    8-byte ERSPAN header (version 1). Type III: protocol 0x22EB, 12-byte header (version 2), plus
 *    the 8-byte platform-specific subheader when O = 1; real senders omit the GRE S bit. The type
 *    is told by the GRE protocol and flags, never by the version field alone.
 *  - VXLAN: RFC 7348 (8-byte header after UDP, I flag required, reserved bits ignored).
 *  - GRE transparent Ethernet bridging: protocol 0x6558.
 *  - GENEVE: RFC 8926 (8-byte header: Ver 2 bits (0), Opt Len 6 bits in 4-byte words, O, C,
 *    protocol type, VNI 24 bits; the options are skipped by their length). Ethernet payload
 *    (protocol 0x6558) only.
 *  - GTP-U: 3GPP TS 29.281 section 5 (version 1, PT 1; E, S or PN set: the 4-byte optional field
 *    of sequence number, N-PDU number and next extension header type; extension headers walked by
 *    their length in 4-byte units, the last byte of each the next type, 0 ends). Only G-PDUs
 *    (message type 255) are tunnels (echo, error indication, end marker are not); their payload is
 *    an IPv4 or IPv6 packet (ft 2: the stage puts an Ethernet header in front).
 *  A UDP datagram is read by its destination port: sbx_decap_parse_map()'s map, else 6081
 *  GENEVE, 2152 GTP-U and any other port a VXLAN candidate.
 */
#ifndef SPANBOX_DECAP_H
#define SPANBOX_DECAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/** Datagrams one port's reassembly table (secondary/ingress.c, rte_ip_frag) holds in progress per
 *  worker: outer fragments of a port with decap rules (docs/INGRESS.md "Fragments"). */
#define SBX_REASM_FLOWS 256
/** Fragments a datagram may have (DPDK's RTE_LIBRTE_IP_FRAG_MAX_FRAG): a table holds at most
 *  SBX_REASM_FLOWS x this many mbufs (the pool plan's "reassembly" term). */
#define SBX_REASM_MAX_FRAGS 8
/** A datagram whose fragments did not all arrive within this is dropped (decap_malformed_ip_fragment). */
#define SBX_REASM_TIMEOUT_MS 1000

/** What kind of tunnel a frame arrived in (sbx_tunnel_info.kind). */
enum sbx_tunnel_kind {
	SBX_TUN_NONE = 0,
	SBX_TUN_ERSPAN1 = 1, /**< ERSPAN type I */
	SBX_TUN_ERSPAN2 = 2, /**< ERSPAN type II */
	SBX_TUN_ERSPAN3 = 3, /**< ERSPAN type III */
	SBX_TUN_VXLAN = 4,   /**< VXLAN */
	SBX_TUN_GRE_TEB = 5, /**< GRE, transparent Ethernet bridging */
	SBX_TUN_GENEVE = 6,  /**< GENEVE (RFC 8926) */
	SBX_TUN_GTPU = 7,    /**< GTP-U G-PDU (3GPP TS 29.281) */
};

/** The tunnel a UDP destination port carries, for sbx_decap_parse_map(): the port's rules' ports. */
struct sbx_decap_udp_map {
	uint8_t n;                                /**< entries used */
	uint16_t port[SBX_MAX_DECAP_RULES];       /**< UDP destination port */
	uint8_t kind[SBX_MAX_DECAP_RULES];        /**< enum sbx_tunnel_kind: VXLAN, GENEVE or GTPU */
};

/**
 * Reasons a frame that is a tunnel (or claims to be one) is malformed: counted and dropped. Declared
 * once; _(name, help): the counter is decap_malformed_<name>, the help text says what it counts.
 */
#define foreach_sbx_decap_malformed                                                                  \
	_(short_outer, "the outer headers end before the frame does (truncated Ethernet/IP/GRE/UDP/ERSPAN/VXLAN)") \
	_(gre_unsupported, "GRE version other than 0, or the routing bit set")                          \
	_(vxlan_flags, "VXLAN header without the I flag")                                             \
	_(inner_runt, "inner frame shorter than 14 bytes (ERSPAN III FT 2: IP packet shorter than 20)") \
	_(length_mismatch, "outer IP or UDP length larger than the frame, or smaller than its own header") \
	_(frame_type, "ERSPAN type III frame type other than Ethernet (0) or IP (2)")                   \
	_(geneve_header, "GENEVE version other than 0, or a protocol other than Ethernet (0x6558)")      \
	_(gtpu_header, "GTP-U version other than 1 or protocol type GTP', extension headers past the datagram, " \
	  "or a G-PDU that carries neither IPv4 nor IPv6")

/** Result of sbx_decap_parse(). */
enum sbx_decap_result {
	SBX_DECAP_NOT_TUNNEL = 0, /**< no tunnel spanbox terminates: the frame is left as it is */
	SBX_DECAP_OK = 1,         /**< a tunnel: *ti describes it and where the inner frame is */
	SBX_DECAP_FRAGMENT = 2,   /**< an outer IPv4 fragment, or IPv6 Fragment header, of GRE or UDP: a
				       tunnel only its reassembled datagram can tell (a later fragment has
				       no GRE or UDP header); ti->af, addresses and the ip_ fields are set */
#define _(n, h) SBX_DECAP_MALFORMED_##n,
	foreach_sbx_decap_malformed
#undef _
	SBX_DECAP_RESULT_MAX
};

/** What sbx_decap_parse() learnt of one tunnelled frame. Addresses in network order. */
struct sbx_tunnel_info {
	uint8_t kind;          /**< enum sbx_tunnel_kind */
	uint8_t af;            /**< outer address family: 4 or 6 */
	uint8_t src[16];       /**< outer source address (IPv4 in bytes 0..3) */
	uint8_t dst[16];       /**< outer destination address */
	uint32_t id;           /**< ERSPAN II/III session id (10 bits), VXLAN or GENEVE VNI (24 bits), GRE-TEB key,
				    GTP-U TEID; else 0 */
	bool key_present;      /**< GRE K bit: key is valid (GRE-TEB: id is the key) */
	uint32_t key;          /**< GRE key (RFC 2890), any GRE kind; 0 without the K bit */
	bool seq_present;      /**< GRE S bit: seq is valid */
	uint32_t seq;          /**< GRE sequence number (RFC 2890) */
	bool truncated;        /**< ERSPAN T bit: the sender cut the mirrored frame */
	uint8_t ft;            /**< ERSPAN III frame type (0 Ethernet, 2 IP); 2 for GTP-U (IP); 0 for other kinds */
	uint16_t vlan;         /**< ERSPAN II/III VLAN field (12 bits) */
	uint8_t cos;           /**< ERSPAN II/III COS (3 bits) */
	uint16_t udp_dst;      /**< VXLAN, GENEVE, GTP-U: outer UDP destination port */
	uint8_t ip_proto;      /**< outer IP protocol (IPv6: the next header, behind a Fragment header
				    the Fragment header's): 47 or 17 once the outer IP header was read, else 0 */
	uint16_t ip_off;       /**< bytes from the frame's start to the outer IP header (once read) */
	uint16_t ip_hlen;      /**< outer IP header bytes: IPv4 IHL x 4; IPv6 40, 48 with a Fragment header */
	uint32_t ip_len;       /**< outer IP packet bytes from ip_off (IPv4 total length, IPv6 40 + payload
				    length); the rest of the frame is Ethernet padding */
	uint16_t inner_off;    /**< bytes from the frame's start to the inner Ethernet header (to the inner
				    IP header when ft == 2); <= avail */
	uint32_t inner_len;    /**< bytes of the inner frame (or IP packet): up to the end of the outer IP
				    payload (VXLAN: of the UDP datagram), not of the frame, so Ethernet padding
				    of a short outer frame is not part of it; the FCS, if the sender kept one,
				    is (sbx_decap_rule.strip_fcs) */
};

/**
 * Parse the outer headers of @p frame: @p len bytes in all, of which the first @p avail are readable
 * (an mbuf's first segment). A frame whose outer headers claim a tunnel but end before @p len or
 * @p avail bytes is SBX_DECAP_MALFORMED_short_outer; a frame that is no IP/GRE/UDP candidate at all
 * (a 10-byte frame, ARP, TCP) is SBX_DECAP_NOT_TUNNEL.
 * Outer Ethernet with up to two 802.1Q/802.1ad tags (0x8100, 0x88A8, 0x9100), IPv4 or IPv6, then
 * GRE (ERSPAN I/II/III, GRE-TEB) or UDP (VXLAN on any port: the caller's rule decides which ports
 * count, see sbx_decap_rule_match()). Reads only the first min(len, avail) bytes; never writes.
 * Lengths: an outer IPv4 total length, IPv6 payload length or UDP length larger than the frame
 * (@p len) is length_mismatch; smaller is Ethernet padding, left out of inner_len. An outer IPv4
 * fragment (MF or an offset) or an IPv6 Fragment header (directly behind the fixed header) in
 * front of GRE/UDP, of a consistent length, is SBX_DECAP_FRAGMENT, whatever its offset (but an
 * IPv6 atomic fragment, offset 0 and M 0, which RFC 6946 has parsed like any datagram): the caller
 * decides by ti->ip_proto and its rules whether to reassemble it (rte_ip_frag) and parse the
 * datagram again, or to treat it as not a tunnel.
 * ERSPAN III: FT 0 is an Ethernet frame; FT 2 is SBX_DECAP_OK with ti->ft = 2 and inner_off at the
 * IP header (the stage decides whether to synthesise an Ethernet header or drop it); any other FT
 * is MALFORMED_frame_type (ti->ft says which).
 * On a malformed result, *ti holds what was parsed before the fault: af and the addresses once
 * the outer IP header was read, kind once the GRE protocol or UDP was (UDP: kind SBX_TUN_VXLAN and
 * udp_dst set). Any UDP datagram is a VXLAN candidate here, so a caller must count a malformed UDP
 * result (kind SBX_TUN_VXLAN) only when one of its VXLAN rules names ti->udp_dst, and treat it as
 * not a tunnel otherwise (a DNS query is no broken VXLAN); a fault of the outer IP header has kind
 * SBX_TUN_NONE and ti->ip_proto (GRE or UDP) says which rules it concerns.
 * @return SBX_DECAP_OK with *ti filled, SBX_DECAP_NOT_TUNNEL (ti->kind = SBX_TUN_NONE),
 *         SBX_DECAP_FRAGMENT, or the malformed reason.
 */
enum sbx_decap_result sbx_decap_parse(const uint8_t *frame, uint32_t len, uint32_t avail,
				      struct sbx_tunnel_info *ti);

/**
 * sbx_decap_parse() with the UDP ports of a port's rules (@p map, NULL = the defaults): a datagram
 * to a port of the map is read as that tunnel (VXLAN, GENEVE or GTP-U), else by the defaults
 * (6081 GENEVE, 2152 GTP-U, any other VXLAN). Sets ti->kind accordingly on a malformed UDP
 * result, so the caller counts it only for its rule of that kind and port.
 */
enum sbx_decap_result sbx_decap_parse_map(const uint8_t *frame, uint32_t len, uint32_t avail,
					  const struct sbx_decap_udp_map *map, struct sbx_tunnel_info *ti);

/** The UDP map of @p c's decap rules (their ports and kinds) into @p map. */
void sbx_decap_udp_map_of(const struct sbx_ingress_cfg *c, struct sbx_decap_udp_map *map);

/**
 * Does the tunnel @p ti (SBX_DECAP_OK from sbx_decap_parse) belong to @p rule? Type (ERSPAN I/II/III
 * for SBX_DECAP_ERSPAN, VXLAN with ti->udp_dst == rule->udp_port, GRE-TEB for SBX_DECAP_GRE), the
 * rule's ids (none = any; ERSPAN type I carries no session id and matches only a rule without ids;
 * for SBX_DECAP_GRE the ids are GRE keys and a frame without a key matches only a rule without ids),
 * and its local address (local_af 0 = any, else af and dst must equal local_ip). A rule udp_port of
 * 0 means SBX_VXLAN_PORT. Pure; @p ti must come from an SBX_DECAP_OK parse.
 */
bool sbx_decap_rule_match(const struct sbx_decap_rule *rule, const struct sbx_tunnel_info *ti);

/** Name of a tunnel kind ("erspan1", "erspan2", "erspan3", "vxlan", "gre"; "none"), as /status,
 * /metrics and the replay summary show it; "unknown" out of range. Static storage. */
const char *sbx_tunnel_kind_name(uint8_t kind);

/** Human-readable name of a result ("ok", "not_tunnel", "fragment", "short_outer", ...: the malformed names
 * of foreach_sbx_decap_malformed), for logs and JSON; "unknown" out of range. Static storage. */
const char *sbx_decap_result_name(enum sbx_decap_result r);

#endif
