/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests (TAP) of the pieces of the mirror path that need no EAL: the mbuf chain check and
 * the frame-derived ERSPAN fields (VLAN/En/COS) and header bit layout.
 * usage: test_mirror_units <repo-root>   (the argument is unused)
 */
#include <stdio.h>
#include <string.h>

#include "../../secondary/chain.h"
#include "spanbox/erspan.h"
#include "tap.h"


/* An Ethernet frame with optional tags (TPID, VID) and an IPv4 TOS. */
static uint32_t frame(uint8_t *f, int tags, uint16_t tpid, uint16_t vid, uint8_t tos)
{
	uint32_t off = 12;
	int t;

	memset(f, 0, 64);
	for (t = 0; t < tags; t++) {
		f[off] = (uint8_t)(tpid >> 8);
		f[off + 1] = (uint8_t)tpid;
		f[off + 2] = (uint8_t)(0xa0 | (vid >> 8)); /* PCP 5 */
		f[off + 3] = (uint8_t)vid;
		off += 4;
		tpid = 0x8100;
		vid = 7;
	}
	f[off] = 0x08;
	f[off + 1] = 0x00;
	f[off + 2] = 0x45;
	f[off + 3] = tos;
	return 64;
}

int main(void)
{
	struct rte_mbuf m[3];
	struct sbx_erspan_fields ef;
	uint8_t f[64], hdr[64];
	size_t len;

	/* chain check */
	memset(m, 0, sizeof(m));
	m[0].nb_segs = 1;
	m[0].data_len = 60;
	m[0].pkt_len = 60;
	check(sbx_mbuf_chain_ok(&m[0]), "single segment, pkt_len == data_len: kept");
	m[0].pkt_len = 70000;
	m[0].data_len = (uint16_t)70000;
	check(!sbx_mbuf_chain_ok(&m[0]), "single segment of a 70000 B frame whose 16-bit length wrapped: dropped");
	m[0] = (struct rte_mbuf){ .nb_segs = 3, .data_len = 2000, .pkt_len = 5000, .next = &m[1] };
	m[1] = (struct rte_mbuf){ .data_len = 2000, .next = &m[2] };
	m[2] = (struct rte_mbuf){ .data_len = 1000 };
	check(sbx_mbuf_chain_ok(&m[0]), "3 segments adding up: kept");
	m[0].pkt_len = 5001;
	check(!sbx_mbuf_chain_ok(&m[0]), "3 segments, pkt_len one byte longer than the data: dropped");
	m[0].pkt_len = 5000;
	m[0].nb_segs = 2;
	check(!sbx_mbuf_chain_ok(&m[0]), "nb_segs 2 but 3 segments chained: dropped");
	m[2].next = &m[0];
	m[0].nb_segs = 3;
	check(!sbx_mbuf_chain_ok(&m[0]), "a looped chain: dropped, and the check terminates");

	/* frame-derived fields */
	memset(&ef, 0, sizeof(ef));
	ef.version = 1;
	sbx_erspan_fields_from_frame(&ef, f, frame(f, 1, 0x8100, 865, 0), 0);
	check(ef.vlan == 865 && ef.en == 3, "type II, 802.1Q VID 865: VLAN 865 (all 12 bits), En 3");
	sbx_erspan_fields_from_frame(&ef, f, frame(f, 1, 0x8100, 4094, 0), 0);
	check(ef.vlan == 4094, "type II, VID 4094: VLAN 4094");
	sbx_erspan_fields_from_frame(&ef, f, frame(f, 2, 0x88a8, 200, 0xc0), 0);
	check(ef.vlan == 200 && ef.en == 3 && ef.cos == 6, "QinQ: outer VID 200, En 3, COS 6 from TOS 0xc0 behind two tags");
	sbx_erspan_fields_from_frame(&ef, f, frame(f, 0, 0, 0, 0x20), 342);
	check(ef.vlan == 342 && ef.en == 0 && ef.cos == 1, "untagged: En 0, VLAN from the source (342), COS 1 from TOS 0x20");
	sbx_erspan_fields_from_frame(&ef, f, 13, 9);
	check(ef.vlan == 9 && ef.en == 0 && ef.cos == 0, "13 B runt: untagged values, no read past the frame");
	ef.version = 2;
	sbx_erspan_fields_from_frame(&ef, f, frame(f, 1, 0x8100, 865, 0), 0);
	check(ef.vlan == 865 && ef.en == 0, "type III, tagged: VLAN 865, BSO stays 0 (no En in type III)");

	/* header bits: every field at its maximum must land in its own bits */
	memset(&ef, 0, sizeof(ef));
	ef.version = 1;
	ef.vlan = 865;
	ef.cos = 7;
	ef.en = 3;
	ef.truncated = true;
	ef.session_id = 1023;
	ef.index = 0xfffff;
	ef.seq_present = true;
	ef.seq = 0x01020304;
	len = sbx_gre_erspan_write(hdr, &ef);
	check(len == 16 && memcmp(hdr, "\x10\x00\x88\xbe\x01\x02\x03\x04\x13\x61\xff\xff\x00\x0f\xff\xff", 16) == 0,
	      "type II header: S bit, 0x88BE, seq, Ver 1 VLAN 865 COS 7 En 3 T 1 id 1023, index 0xfffff");
	memset(&ef, 0, sizeof(ef));
	ef.version = 2;
	ef.session_id = 5;
	ef.seq_present = true;
	ef.timestamp = 0xaabbccdd;
	ef.sgt = 0x1234;
	ef.p = true;
	ef.hw_id = 63;
	ef.dir = 1;
	ef.gra = 1;
	ef.o = true;
	ef.port_id = 0x3fff;
	ef.ts_upper = 0x11223344;
	len = sbx_gre_erspan_write(hdr, &ef);
	check(len == 8 + 20 && hdr[0] == 0x10 && hdr[2] == 0x22 && hdr[3] == 0xeb,
	      "type III: GRE S bit set like type II, protocol 0x22EB, 20 B header with subheader");
	check(memcmp(hdr + 8, "\x20\x00\x00\x05\xaa\xbb\xcc\xdd\x12\x34\x83\xfb\x0c\x00\x3f\xff\x11\x22\x33\x44", 20) == 0,
	      "type III fields: Ver 2, id 5, timestamp, SGT, P, FT 0, HwID 63, D 1, Gra 1, O 1, platf id 3, port id, upper ts");
	check(sbx_erspan_timestamp(1234567890123456789ULL, SBX_GRA_IEEE1588) ==
		      ((1234567890ULL << 32) | 123456789ULL),
	      "IEEE 1588 granularity: seconds in the upper word, ns in the lower");
	check(sbx_erspan_timestamp(1000000, SBX_GRA_100US) == 10 && sbx_erspan_timestamp(1000, SBX_GRA_100NS) == 10,
	      "100 us and 100 ns granularities");
	/* outer header: template + incremental patch (RFC 1624) == a full write, IPv4 and IPv6 */
	{
		struct sbx_mirror_cfg mc;
		static const uint32_t lens[] = { 0, 1, 62, 1514, 9050, 65000 };
		static const uint16_t ids[] = { 0, 1, 0x1234, 0xfffe, 0xffff };
		uint8_t tmpl[64], full[64], mac[6] = { 2, 0, 0, 0, 0, 1 };
		int v, bad = 0, cases = 0;
		size_t a, b, olen;

		memset(&mc, 0, sizeof(mc));
		memcpy(mc.dst_mac, "\x02\x00\x00\x00\x00\x02", 6);
		mc.ttl = 64;
		mc.dscp = 46;
		mc.df = true;
		for (v = 4; v <= 6; v += 2) {
			mc.ip_version = (uint8_t)v;
			static const uint8_t v4s[16] = { 192, 0, 2, 1 }, v4d[16] = { 198, 51, 100, 254 };
			static const uint8_t v6s[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
			static const uint8_t v6d[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };

			memcpy(mc.src_ip, v == 4 ? v4s : v6s, 16);
			memcpy(mc.dst_ip, v == 4 ? v4d : v6d, 16);
			olen = sbx_outer_write(tmpl, &mc, mac, 0, 0);
			for (a = 0; a < RTE_DIM(lens); a++)
				for (b = 0; b < RTE_DIM(ids); b++) {
					uint8_t patched[64];

					memcpy(patched, tmpl, olen);
					sbx_outer_patch(patched, mc.ip_version, lens[a], ids[b]);
					sbx_outer_write(full, &mc, mac, lens[a], ids[b]);
					bad += memcmp(patched, full, olen) != 0;
					cases++;
				}
		}
		printf("# %d outer header cases\n", cases);
		check(bad == 0, "outer header template patched per copy equals a full write (IPv4 checksum by RFC 1624, IPv6)");
	}
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
