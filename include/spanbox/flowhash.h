/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Symmetric flow hash of an Ethernet frame: both directions of a flow give the same value, so that a
 * tool group (docs/CONFIG.md "tool_groups") sends a whole conversation to one member, and the VXLAN
 * mirror encapsulation gets a UDP source port with ECMP entropy that does not depend on the
 * direction (RFC 7348 section 5). Pure byte parsing (no EAL, no mbuf): unit tests and fuzzers call it
 * on byte arrays.
 *
 * What is hashed (this comment is the reference the docs point to):
 *   - the headers are found through any number (at most 8) of 802.1Q / 802.1ad (0x8100, 0x88a8, 0x9100)
 *     tags and of MPLS labels (0x8847, 0x8848; the payload after the bottom of stack is IPv4 or IPv6 by
 *     its first nibble, anything else is non-IP);
 *   - IPv4 (RFC 791) and IPv6 (RFC 8200, through hop-by-hop, routing, destination options, fragment and
 *     AH (RFC 4302) extension headers, at most 8): SBX_FLOW_HASH_5TUPLE hashes (sorted address pair,
 *     protocol, sorted port pair) for TCP (6) and SCTP (132, RFC 9260: its ports sit where TCP's
 *     do); UDP (17), a fragment (IPv4 MF set or offset != 0; IPv6 fragment header with M set or
 *     offset != 0), another protocol or a transport header cut short hashes the sorted address pair
 *     only, so that every fragment of a datagram gives the same value and a UDP flow's fragmented
 *     and unfragmented datagrams give the same value (a later fragment has no ports; UDP is the
 *     protocol whose datagrams fragment: DNS, NFS, tunnels; the balance this costs is measured in
 *     docs/CONFIG.md "tool_groups"); SBX_FLOW_HASH_2TUPLE always hashes the sorted address pair only;
 *   - anything else (ARP, LLDP, a malformed or truncated IP header, an MPLS payload that is not IP)
 *     hashes the sorted MAC address pair.
 * The pair is sorted (IPv4 and MAC addresses as the numbers their bytes load as, IPv6 ones by
 * memcmp), the ports as numbers, independently: (a, b, pa, pb) and (b, a, pb, pa) give the same key.
 * The key words (addresses, then kind, protocol and ports in one 64-bit word; the kind byte keeps an
 * IPv4, an IPv6 and a MAC key apart) go into CRC32-C seeded with @p seed (the SSE4.2 crc32
 * instruction, which DPDK's -march=corei7 guarantees; DPDK's rte_crc_sw.h tables otherwise), then
 * through murmur3's fmix32 finalizer. Values are the same on every x86-64 host (little-endian loads).
 * Cost on the machine of docs/BENCHMARKS.md: see "Tool groups" there.
 */
#ifndef SPANBOX_FLOWHASH_H
#define SPANBOX_FLOWHASH_H

#include <stdint.h>

/** The fields a flow hash covers (config "hash": "5tuple" / "2tuple"). */
enum sbx_flow_hash_fields {
	SBX_FLOW_HASH_5TUPLE = 0, /**< addresses, protocol, ports for TCP/SCTP (addresses only for UDP,
				       fragments and others) */
	SBX_FLOW_HASH_2TUPLE = 1, /**< the address pair only */
};

/** The seed spanbox uses everywhere (tool groups, VXLAN source ports): fixed, so that a restart, a
 *  second worker or a second appliance maps a flow to the same value. */
#define SBX_FLOW_HASH_SEED 0x5b0c5eedu

/**
 * Symmetric hash of one frame.
 * @param frame  the frame from its Ethernet header (decapsulated frames: the inner frame)
 * @param len    bytes readable at @p frame (for an mbuf: the first segment's data_len); nothing past
 *               it is read, however the headers claim more
 * @param fields what to hash (enum sbx_flow_hash_fields; an unknown value is taken as 5-tuple)
 * @param seed   CRC32-C initial value (SBX_FLOW_HASH_SEED)
 * @return the hash; a frame shorter than 12 bytes hashes the bytes it has (never fails)
 */
uint32_t sbx_flow_hash(const uint8_t *frame, uint32_t len, enum sbx_flow_hash_fields fields, uint32_t seed);

/** "5tuple" / "2tuple" (the config's and the API's names); NULL for an unknown value. */
const char *sbx_flow_hash_fields_name(enum sbx_flow_hash_fields fields);

/** Parse a config/API name: 0 and *out set, or -1 for an unknown name. */
int sbx_flow_hash_fields_parse(const char *name, enum sbx_flow_hash_fields *out);

#endif
