/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file erspan.h
 * Wire formats of mirror encapsulations, written into caller buffers (no mbufs, no DPDK runtime),
 * so the same code serves the worker and the field-parity tests.
 *
 * Sources:
 *  - ERSPAN type II and III: draft-foschiano-erspan-03 (section 4.1 type II, 4.2 type III and its
 *    platform-specific subheader, platform id 0x3).
 *  - GRE: RFC 2784 (base header), RFC 2890 (sequence number: S bit, 32-bit field after the header).
 *  - VXLAN: RFC 7348 (section 5: header, UDP destination port 4789, source port from a hash of
 *    the inner frame in 49152-65535); UDP: RFC 768, its checksum over IPv6: RFC 8200 section 8.1
 *    (RFC 6935/6936 allow 0 only with care: we compute it).
 *  - IPv4: RFC 791 (header checksum RFC 1071); IPv6: RFC 8200; 802.1Q tags: IEEE 802.1Q.
 *
 * All multi-byte fields are written in network byte order.
 */
#ifndef SPANBOX_ERSPAN_H
#define SPANBOX_ERSPAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define SBX_GRE_SEQ_OFFSET 4 /**< bytes from the GRE header to its sequence number (RFC 2890: flags and
				   protocol, no checksum or key: what sbx_gre_erspan_write() writes) */
#define SBX_GRE_PROTO_ERSPAN2 0x88BE /**< GRE protocol type of ERSPAN types I and II */
#define SBX_GRE_PROTO_ERSPAN3 0x22EB /**< GRE protocol type of ERSPAN type III */
#define SBX_ERSPAN_EN_NOVLAN 0        /**< En: frame originally without VLAN tag */
#define SBX_ERSPAN_EN_INFRAME 3       /**< En: VLAN tag preserved in the mirrored frame */
#define SBX_ENCAP_MAX_LEN 96          /**< largest header any encapsulation writes, bytes */
#define SBX_VXLAN_PORT 4789           /**< IANA UDP port of VXLAN (RFC 7348), encap.udp_port's default */
#define SBX_VXLAN_FLAG_I 0x08         /**< VXLAN flags: the I bit, "the VNI is valid" (RFC 7348 section 5) */
#define SBX_VXLAN_HLEN 8              /**< VXLAN header, bytes */
#define SBX_UDP_HLEN 8                /**< UDP header, bytes */
#define SBX_VXLAN_SPORT_MIN 49152     /**< lowest UDP source port sbx_vxlan_src_port() gives (RFC 6335 dynamic range) */
#define SBX_VXLAN_VNI_MAX 0xffffffu   /**< VNIs are 24 bits */

/** Values of the GRE and ERSPAN header fields, host order, before packing. */
struct sbx_erspan_fields {
	uint8_t version;     /**< 1 = type II, 2 = type III */
	uint16_t vlan;       /**< 12 bits */
	uint8_t cos;         /**< 3 bits */
	uint8_t en;          /**< type II En / type III BSO, 2 bits */
	bool truncated;      /**< T bit: the frame was cut (snaplen) */
	uint16_t session_id; /**< 10 bits */
	uint32_t index;      /**< type II: 20-bit port index */
	uint32_t timestamp;  /**< type III: low 32 bits, in units of gra */
	uint16_t sgt;        /**< type III security group tag */
	bool p;              /**< type III P: the payload is an Ethernet PDU (frame without FCS) */
	uint8_t ft;          /**< type III frame type, 5 bits (0 = Ethernet) */
	uint8_t hw_id;       /**< type III hardware id, 6 bits */
	uint8_t dir;         /**< type III D: 0 ingress, 1 egress */
	uint8_t gra;         /**< type III timestamp granularity, 2 bits */
	bool o;              /**< type III O: a platform-specific subheader follows */
	uint16_t port_id;    /**< subheader (platform id 0x3): 14-bit port id/index */
	uint32_t ts_upper;   /**< subheader (platform id 0x3): upper 32 bits of the timestamp */
	bool seq_present;    /**< GRE S bit (we always set it; reference captures may not) */
	uint32_t seq;        /**< GRE sequence number */
};

/**
 * Write the GRE header (with the sequence number when seq_present) and the ERSPAN header of
 * @p f->version (plus the platform subheader when f->o) into @p buf.
 * @return bytes written: 8+8 (type II), 8+12 (type III), 8+20 (type III with subheader),
 *         4 fewer without a sequence number.
 */
size_t sbx_gre_erspan_write(uint8_t *buf, const struct sbx_erspan_fields *f);

/**
 * Set vlan, en and cos of @p f from the mirrored frame, the documented way (set f->version first):
 *  - a frame that carries an 802.1Q/802.1ad tag keeps it inside the mirror copy: VLAN = the outer
 *    tag's VLAN id (12 bits) and, for type II, En = 3; an untagged frame: En = 0 and VLAN =
 *    @p untagged_vlan. Type III has no En field: BSO stays 0 (the frames we mirror are good);
 *  - COS is the IP precedence (IPv4 TOS or IPv6 traffic class >> 5) of the first IP header behind
 *    at most two tags, as Linux's ERSPAN encoder does; 0 for non-IP frames.
 * Reads at most the first 58 bytes; a short frame gives the untagged values.
 */
void sbx_erspan_fields_from_frame(struct sbx_erspan_fields *f, const uint8_t *frame, uint32_t len,
				  uint16_t untagged_vlan);

/**
 * Set the fields of @p f that come from mirror session @p s and the copy's context, not from the
 * frame, the documented way (docs/MIRRORING.md "Field rules"): version (type II or III from
 * s->encap), session id, GRE S bit with sequence 0 (numbered when sent); type II: index = @p port;
 * type III: timestamp of @p now_ns (CLOCK_REALTIME ns) at s->gra, SGT, P = 1, hardware id, D (1 when
 * @p tx), granularity, the platform subheader (s->platform_subheader) with port id = @p port and
 * the timestamp's upper 32 bits. Leaves vlan, en, cos and truncated as they are (per frame).
 */
void sbx_erspan_fields_session(struct sbx_erspan_fields *f, const struct sbx_mirror_cfg *s, uint16_t port, bool tx,
			       uint64_t now_ns);

/**
 * Write Ethernet + IPv4 (checksum computed) or IPv6 outer headers for a GRE payload of
 * @p gre_len bytes (GRE header through the end of the mirrored frame), protocol 47.
 * Addresses, TTL, DSCP and DF come from the session; @p src_mac is the source MAC to use.
 * @return bytes written (34 for IPv4, 54 for IPv6).
 */
size_t sbx_outer_write(uint8_t *buf, const struct sbx_mirror_cfg *s, const uint8_t *src_mac, uint32_t gre_len,
		       uint16_t ip_id);

/**
 * Patch a copy of an outer header template (written by sbx_outer_write() with gre_len 0 and
 * ip_id 0) for a GRE payload of @p gre_len bytes and IPv4 identification @p ip_id: IPv4 total
 * length, identification and checksum (updated incrementally, RFC 1624), or the IPv6 payload length.
 * Gives the same bytes as sbx_outer_write() with those values, for about a tenth of the work.
 */
void sbx_outer_patch(uint8_t *hdr, uint8_t ip_version, uint32_t gre_len, uint16_t ip_id);

/**
 * ERSPAN type III timestamp of @p ns (CLOCK_REALTIME ns) at granularity @p gra (enum
 * sbx_erspan_gra): 100 us or 100 ns units, or IEEE 1588 (low word = ns within the second, upper
 * word = seconds). @return the 64-bit value; the header carries the low 32 bits, the platform
 * subheader the upper 32.
 */
uint64_t sbx_erspan_timestamp(uint64_t ns, uint8_t gra);

/**
 * RFC 1071 one's complement sum of @p len bytes at @p p (big-endian 16-bit words, an odd last
 * byte padded with a zero), added to @p sum. @return the folded sum, not complemented (so that
 * sums of pieces starting at even offsets add up; equal to rte_be_to_cpu_16(rte_raw_cksum())).
 */
uint16_t sbx_csum16(const uint8_t *p, size_t len, uint16_t sum);

/**
 * VXLAN UDP source port of a frame whose flow hash is @p hash (RFC 7348 section 5: ECMP entropy,
 * one port per flow): the 32 bits folded into 14, in 49152..65535. Both directions of a flow get
 * the same port when the hash is symmetric (sbx_flow_hash()).
 */
uint16_t sbx_vxlan_src_port(uint32_t hash);

/**
 * Write the VXLAN encapsulation of one mirror copy of session @p s: Ethernet (s->dst_mac,
 * @p src_mac) / IPv4 (identification @p ip_id, header checksum computed) or IPv6 (from the family
 * of s->src_ip/dst_ip; ttl, dscp, df as for ERSPAN) / UDP (source @p src_port, destination
 * s->udp_port) / VXLAN (flags I, VNI s->vni) for an inner frame of @p frame_len bytes (at most
 * 65535 - 20 - 16). UDP checksum: 0 over IPv4; over IPv6 computed, where @p frame_sum is
 * sbx_csum16() of the inner frame's bytes (ignored over IPv4).
 * Pure: writes only @p buf, which must hold SBX_ENCAP_MAX_LEN bytes.
 * @return bytes written: 50 (IPv4 outer) or 70 (IPv6 outer); the frame follows.
 */
size_t sbx_vxlan_write(uint8_t *buf, const struct sbx_mirror_cfg *s, const uint8_t *src_mac, uint32_t frame_len,
		       uint16_t src_port, uint16_t ip_id, uint16_t frame_sum);

#endif
