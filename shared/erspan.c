/* SPDX-License-Identifier: BSD-3-Clause */
/* GRE / ERSPAN II / ERSPAN III / VXLAN / outer Ethernet+IP headers (sources in include/spanbox/erspan.h). */
#include <string.h>

#include "spanbox/bytes.h"
#include "spanbox/erspan.h"

size_t sbx_gre_erspan_write(uint8_t *buf, const struct sbx_erspan_fields *f)
{
	uint8_t *p = buf;
	uint32_t w;

	/* GRE (RFC 2784 + RFC 2890): only the S bit of the flags, version 0 */
	sbx_put16(p, f->seq_present ? 0x1000 : 0x0000);
	sbx_put16(p + 2, f->version == 2 ? SBX_GRE_PROTO_ERSPAN3 : SBX_GRE_PROTO_ERSPAN2);
	p += SBX_GRE_SEQ_OFFSET;
	if (f->seq_present) {
		sbx_put32(p, f->seq);
		p += 4;
	}
	/* first word, both types: Ver(4) VLAN(12) COS(3) En|BSO(2) T(1) Session ID(10) */
	w = ((uint32_t)(f->version & 0xf) << 28) | ((uint32_t)(f->vlan & 0xfff) << 16) |
	    ((uint32_t)(f->cos & 0x7) << 13) | ((uint32_t)(f->en & 0x3) << 11) |
	    ((uint32_t)(f->truncated ? 1 : 0) << 10) | (f->session_id & 0x3ff);
	sbx_put32(p, w);
	p += 4;
	if (f->version != 2) {
		/* type II: Reserved(12) Index(20) */
		sbx_put32(p, f->index & 0xfffff);
		return (size_t)(p + 4 - buf);
	}
	/* type III: Timestamp(32); SGT(16) P(1) FT(5) Hw ID(6) D(1) Gra(2) O(1) */
	sbx_put32(p, f->timestamp);
	sbx_put16(p + 4, f->sgt);
	sbx_put16(p + 6, (uint16_t)(((f->p ? 1u : 0u) << 15) | ((f->ft & 0x1fu) << 10) | ((f->hw_id & 0x3fu) << 4) |
				((f->dir & 1u) << 3) | ((f->gra & 3u) << 1) | (f->o ? 1u : 0u)));
	p += 8;
	if (f->o) {
		/* platform-specific subheader, platform id 0x3: Platf ID(6) Reserved(12) Port ID(14);
		 * then the upper 32 bits of the timestamp */
		sbx_put32(p, (0x3u << 26) | (f->port_id & 0x3fffu));
		sbx_put32(p + 4, f->ts_upper);
		p += 8;
	}
	return (size_t)(p - buf);
}

void sbx_erspan_fields_from_frame(struct sbx_erspan_fields *f, const uint8_t *frame, uint32_t len,
				  uint16_t untagged_vlan)
{
	uint32_t off = 12;
	uint16_t type;
	int tags = 0;

	f->vlan = untagged_vlan & 0xfff;
	f->en = SBX_ERSPAN_EN_NOVLAN;
	f->cos = 0;
	if (len < 14)
		return;
	type = (uint16_t)(frame[off] << 8 | frame[off + 1]);
	while ((type == 0x8100 || type == 0x88a8) && tags < 2 && off + 6 <= len) {
		if (tags == 0) {
			f->vlan = (uint16_t)((frame[off + 2] << 8 | frame[off + 3]) & 0xfff);
			/* type III has no En: its BSO field (bad/short/oversized) stays 0, "good" */
			if (f->version != 2)
				f->en = SBX_ERSPAN_EN_INFRAME;
		}
		off += 4;
		tags++;
		type = (uint16_t)(frame[off] << 8 | frame[off + 1]);
	}
	off += 2; /* first byte after the EtherType */
	if (type == 0x0800 && off + 2 <= len)
		f->cos = frame[off + 1] >> 5; /* TOS >> 5 */
	else if (type == 0x86dd && off + 2 <= len)
		f->cos = (uint8_t)((((frame[off] & 0x0f) << 4) | (frame[off + 1] >> 4)) >> 5); /* TC >> 5 */
}

void sbx_erspan_fields_session(struct sbx_erspan_fields *f, const struct sbx_mirror_cfg *s, uint16_t port, bool tx,
			       uint64_t now_ns)
{
	uint64_t ts;

	f->version = s->encap == SBX_ENCAP_ERSPAN3 ? 2 : 1;
	f->session_id = s->id;
	f->seq_present = true;
	f->seq = 0;
	if (f->version == 1) {
		f->index = port;
		return;
	}
	ts = sbx_erspan_timestamp(now_ns, s->gra);
	f->timestamp = (uint32_t)ts;
	f->sgt = s->sgt;
	f->p = true; /* the payload is an Ethernet frame without FCS */
	f->hw_id = s->hw_id;
	f->dir = tx;
	f->gra = s->gra;
	f->o = s->platform_subheader;
	f->port_id = port;
	f->ts_upper = (uint32_t)(ts >> 32);
}

/* RFC 1071 checksum of an IPv4 header of 20 bytes. */
static uint16_t ipv4_cksum(const uint8_t *h)
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Ethernet + IPv4 (checksum computed) or IPv6 for a payload of @p len bytes of protocol @p proto. */
static size_t outer_ip_write(uint8_t *buf, const struct sbx_mirror_cfg *s, const uint8_t *src_mac, uint32_t len,
			     uint16_t ip_id, uint8_t proto)
{
	uint8_t *ip = buf + 14;

	memcpy(buf, s->dst_mac, 6);
	memcpy(buf + 6, src_mac, 6);
	if (s->ip_version == 6) {
		uint32_t vtf = (6u << 28) | ((uint32_t)(s->dscp & 0x3f) << 22);

		sbx_put16(buf + 12, 0x86dd);
		sbx_put32(ip, vtf);
		sbx_put16(ip + 4, (uint16_t)len);
		ip[6] = proto; /* next header */
		ip[7] = s->ttl;
		memcpy(ip + 8, s->src_ip, 16);
		memcpy(ip + 24, s->dst_ip, 16);
		return 14 + 40;
	}
	sbx_put16(buf + 12, 0x0800);
	ip[0] = 0x45;
	ip[1] = (uint8_t)(s->dscp << 2);
	sbx_put16(ip + 2, (uint16_t)(20 + len));
	sbx_put16(ip + 4, ip_id);
	sbx_put16(ip + 6, s->df ? 0x4000 : 0);
	ip[8] = s->ttl;
	ip[9] = proto;
	sbx_put16(ip + 10, 0);
	memcpy(ip + 12, s->src_ip, 4);
	memcpy(ip + 16, s->dst_ip, 4);
	sbx_put16(ip + 10, ipv4_cksum(ip));
	return 14 + 20;
}

size_t sbx_outer_write(uint8_t *buf, const struct sbx_mirror_cfg *s, const uint8_t *src_mac, uint32_t gre_len,
		       uint16_t ip_id)
{
	return outer_ip_write(buf, s, src_mac, gre_len, ip_id, 47); /* protocol: GRE */
}

void sbx_outer_patch(uint8_t *hdr, uint8_t ip_version, uint32_t gre_len, uint16_t ip_id)
{
	uint8_t *ip = hdr + 14;
	uint16_t len, old_len, hc, sum;

	if (ip_version == 6) {
		sbx_put16(ip + 4, (uint16_t)gre_len);
		return;
	}
	/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') for each changed 16-bit word m -> m' */
	old_len = (uint16_t)(ip[2] << 8 | ip[3]);
	len = (uint16_t)(20 + gre_len);
	hc = (uint16_t)(ip[10] << 8 | ip[11]);
	sum = (uint16_t)~hc;
	sum = sbx_csum_add(sum, (uint16_t)~old_len);
	sum = sbx_csum_add(sum, len);
	sum = sbx_csum_add(sum, (uint16_t)~(uint16_t)(ip[4] << 8 | ip[5]));
	sum = sbx_csum_add(sum, ip_id);
	sbx_put16(ip + 2, len);
	sbx_put16(ip + 4, ip_id);
	sbx_put16(ip + 10, (uint16_t)~sum);
}

uint64_t sbx_erspan_timestamp(uint64_t ns, uint8_t gra)
{
	switch (gra) {
	case SBX_GRA_100NS:
		return ns / 100;
	case SBX_GRA_IEEE1588:
		return ((ns / 1000000000ULL) << 32) | (ns % 1000000000ULL);
	default:
		return ns / 100000;
	}
}

uint16_t sbx_csum16(const uint8_t *p, size_t len, uint16_t sum)
{
	uint32_t acc = sum;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		acc += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		acc += (uint32_t)p[len - 1] << 8; /* RFC 1071: the odd byte padded with a zero */
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (uint16_t)acc;
}

uint16_t sbx_vxlan_src_port(uint32_t hash)
{
	/* fold the 32 bits into the 14 of the range, so that every hash bit counts */
	uint32_t h = hash ^ (hash >> 14) ^ (hash >> 28);

	return (uint16_t)(SBX_VXLAN_SPORT_MIN | (h & 0x3fff));
}

size_t sbx_vxlan_write(uint8_t *buf, const struct sbx_mirror_cfg *s, const uint8_t *src_mac, uint32_t frame_len,
		       uint16_t src_port, uint16_t ip_id, uint16_t frame_sum)
{
	uint32_t udp_len = SBX_UDP_HLEN + SBX_VXLAN_HLEN + frame_len;
	size_t outer = outer_ip_write(buf, s, src_mac, udp_len, ip_id, 17); /* protocol: UDP */
	uint8_t *udp = buf + outer, *vx = udp + SBX_UDP_HLEN;
	uint16_t sum;

	sbx_put16(udp, src_port);
	sbx_put16(udp + 2, s->udp_port);
	sbx_put16(udp + 4, (uint16_t)udp_len);
	sbx_put16(udp + 6, 0); /* IPv4: no checksum (RFC 7348 section 5) */
	/* VXLAN (RFC 7348 section 5): flags with only I set, 24 reserved bits, VNI, 8 reserved bits */
	sbx_put32(vx, (uint32_t)SBX_VXLAN_FLAG_I << 24);
	sbx_put32(vx + 4, (s->vni & 0xffffff) << 8);
	if (s->ip_version != 6)
		return outer + SBX_UDP_HLEN + SBX_VXLAN_HLEN;
	/* IPv6: the checksum is mandatory (RFC 8200 section 8.1; RFC 6935/6936 allow 0 only for
	 * tunnels that opt in): pseudo-header (addresses, upper-layer length, next header 17), UDP
	 * and VXLAN headers, then the frame's own sum; a result of 0 is sent as 0xffff */
	sum = sbx_csum16(buf + 14 + 8, 32, 0);
	sum = sbx_csum16(udp, SBX_UDP_HLEN + SBX_VXLAN_HLEN, sum);
	{
		uint8_t ph[8] = { 0 };

		sbx_put32(ph, udp_len);
		ph[7] = 17;
		sum = sbx_csum16(ph, sizeof(ph), sum);
		sbx_put16(ph, frame_sum);
		sum = sbx_csum16(ph, 2, sum);
	}
	sum = (uint16_t)~sum;
	sbx_put16(udp + 6, sum == 0 ? 0xffff : sum);
	return outer + SBX_UDP_HLEN + SBX_VXLAN_HLEN;
}
