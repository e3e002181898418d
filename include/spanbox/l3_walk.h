/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The numbers both frame walks of spanbox use (shared/flowhash.c: the symmetric flow hash;
 * shared/flowtable.c: the flow key): EtherTypes (IEEE 802.1Q, 802.1ad and the older 0x9100 tag,
 * MPLS RFC 3032), IP protocol numbers (IANA), IPv6 extension headers (RFC 8200, AH RFC 4302) and
 * how deep the walks go; their byte loads (no alignment assumed).
 */
#ifndef SPANBOX_L3_WALK_H
#define SPANBOX_L3_WALK_H

#include <stdint.h>
#include <string.h>

#include "spanbox/bytes.h"

#define ET_IPV4 0x0800
#define ET_IPV6 0x86dd
#define ET_VLAN 0x8100
#define ET_QINQ 0x88a8
#define ET_QINQ_OLD 0x9100
#define ET_MPLS 0x8847
#define ET_MPLS_MC 0x8848
#define MAX_TAGS 8       /* VLAN tags walked at most */
#define MAX_LABELS 8     /* MPLS labels walked at most */
#define MAX_EXT_HDRS 8   /* IPv6 extension headers walked at most */
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_SCTP 132
#define IP6_HOPOPTS 0
#define IP6_ROUTING 43
#define IP6_FRAG 44
#define IP6_AH 51
#define IP6_DSTOPTS 60

/* 4 / 8 bytes as they lie in memory (host order of the loaded integer). */
static inline uint32_t load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* Protocols whose ports sit in the first 4 bytes of their header: TCP, UDP, SCTP (RFC 9260). */
static inline int has_ports(uint8_t proto)
{
	return proto == PROTO_TCP || proto == PROTO_UDP || proto == PROTO_SCTP;
}

#endif
