/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the ERSPAN/GRE field decoder sbx_erspan_fields_from_frame() (shared/erspan.c)
 * on any frame, for type II and III, then the header writer on what it decoded (the fields must
 * stay in their bit widths, the header in SBX_ENCAP_MAX_LEN). Then the VXLAN writer on the same
 * frame, with the source port from its flow hash (shared/flowhash.c): the port in 49152..65535, the
 * header 50 or 70 bytes, the IPv4 header checksum and the IPv6 UDP checksum verify.
 * Input: one Ethernet frame.
 * Seeds: frames of ../shared/captures (tests/fuzz/seeds.py).
 */
#include <stdint.h>
#include <stdlib.h>

#include <string.h>

#include <spanbox/erspan.h>
#include <spanbox/flowhash.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	uint8_t buf[SBX_ENCAP_MAX_LEN];
	uint8_t ver;

	for (ver = 1; ver <= 2; ver++) {
		struct sbx_erspan_fields f = { .version = ver, .seq_present = true, .o = ver == 2 };
		size_t n;

		sbx_erspan_fields_from_frame(&f, data, (uint32_t)len, len > 0 ? (uint16_t)(data[0] << 4 | len) & 0xfff : 0);
		if (f.vlan > 0xfff || f.cos > 7 || f.en > 3)
			abort();
		n = sbx_gre_erspan_write(buf, &f);
		if (n > sizeof(buf))
			abort();
	}
	if (len <= 65535 - 36) {
		static const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 1 };
		struct sbx_mirror_cfg s = { .encap = SBX_ENCAP_VXLAN, .ttl = 64, .df = true, .udp_port = SBX_VXLAN_PORT };
		/* frames under 14 B never reach a session (runts are dropped on input); sbx_flow_hash() of
		 * under 12 B reads past the end (rte_jhash reads whole words): not fed to it here */
		uint16_t sp = sbx_vxlan_src_port(len >= 14 ? sbx_flow_hash(data, (uint32_t)len, SBX_FLOW_HASH_5TUPLE,
									   SBX_FLOW_HASH_SEED) : 0);
		uint16_t fs = sbx_csum16(data, len, 0);
		uint8_t ph[8] = { 0 };
		size_t n;

		if (sp < SBX_VXLAN_SPORT_MIN)
			abort();
		s.ip_version = len > 0 && (data[0] & 1) ? 6 : 4;
		s.vni = len > 3 ? (uint32_t)(data[1] << 16 | data[2] << 8 | data[3]) : 0;
		memset(s.src_ip, 0x11, 16);
		memset(s.dst_ip, 0x22, 16);
		n = sbx_vxlan_write(buf, &s, mac, (uint32_t)len, sp, (uint16_t)len, fs);
		if (n != (s.ip_version == 6 ? 70u : 50u))
			abort();
		if (s.ip_version == 4 && (sbx_csum16(buf + 14, 20, 0) != 0xffff || buf[40] || buf[41]))
			abort();
		if (s.ip_version == 6) { /* pseudo-header + UDP/VXLAN headers + frame sum to 0xffff */
			ph[2] = buf[18];
			ph[3] = buf[19];
			ph[7] = 17;
			if (sbx_csum16(buf + 54, 16, sbx_csum16(ph, 8, sbx_csum16(buf + 22, 32, fs))) != 0xffff)
				abort();
		}
	}
	return 0;
}
