/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the ingress tunnel parser sbx_decap_parse() (shared/decap.c) on any frame, with
 * fewer readable bytes than the frame has (an mbuf's first segment), then sbx_decap_rule_match() on
 * what it found. Input: byte 0 chooses avail, the rest is the frame (len bytes):
 *   0: avail = len; 1..127: avail = len - byte (the tail not readable); 128..255: avail = byte - 128
 *   (a short first segment), never more than len.
 * The parser reads a heap copy of exactly avail bytes, so ASan reports any read past it. Checked:
 * the result is in range and has a name; an OK result has a kind, inner_off <= avail,
 * inner_off + inner_len <= len and inner_len >= 14 (ERSPAN III FT 2: >= 20); id/vlan/cos/ft within
 * their bit widths. Seeds: frames of ../shared/captures (tests/fuzz/seeds.py), byte 0 = 0.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <spanbox/decap.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_tunnel_info ti;
	enum sbx_decap_result r;
	uint32_t len, avail;
	uint8_t *f;
	uint8_t t;

	if (size < 1 || size > 65536 + 1)
		return 0;
	len = (uint32_t)size - 1;
	avail = data[0] == 0 ? len : data[0] < 128 ? (data[0] < len ? len - data[0] : 0) : (uint32_t)data[0] - 128;
	if (avail > len)
		avail = len;
	f = malloc(avail ? avail : 1);
	if (!f)
		return 0;
	memcpy(f, data + 1, avail);
	r = sbx_decap_parse(f, len, avail, &ti);
	if ((unsigned)r >= SBX_DECAP_RESULT_MAX || !sbx_decap_result_name(r))
		abort();
	if (r == SBX_DECAP_NOT_TUNNEL && ti.kind != SBX_TUN_NONE)
		abort();
	/* what the stage hands to rte_ip_frag: the IP header (IPv6: and its Fragment header) readable,
	 * the packet within the frame, of GRE or UDP */
	if (r == SBX_DECAP_FRAGMENT &&
	    (ti.kind != SBX_TUN_NONE || (ti.ip_proto != 47 && ti.ip_proto != 17) || ti.ip_hlen < 20 ||
	     (uint32_t)ti.ip_off + ti.ip_hlen > avail || (uint64_t)ti.ip_off + ti.ip_len > len ||
	     ti.ip_len < ti.ip_hlen || (ti.af == 6 && ti.ip_hlen != 48) || (ti.af != 4 && ti.af != 6)))
		abort();
	if (r == SBX_DECAP_OK) {
		if (ti.kind < SBX_TUN_ERSPAN1 || ti.kind > SBX_TUN_GRE_TEB || ti.inner_off > avail ||
		    (uint64_t)ti.inner_off + ti.inner_len > len || ti.inner_len < (ti.ft == 2 ? 20u : 14u) ||
		    (ti.ft != 0 && ti.ft != 2) || (ti.af != 4 && ti.af != 6))
			abort();
		if (ti.vlan > 0xfff || ti.cos > 7 || (ti.kind == SBX_TUN_VXLAN && ti.id > 0xffffff) ||
		    (ti.kind != SBX_TUN_VXLAN && ti.kind != SBX_TUN_GRE_TEB && ti.id > 0x3ff))
			abort();
		/* every rule type, with and without the id found, and with its destination */
		for (t = SBX_DECAP_ERSPAN; t <= SBX_DECAP_GRE; t++) {
			struct sbx_decap_rule rule = { .type = t, .udp_port = ti.udp_dst, .nb_ids = 1, .ids = { ti.id },
						       .local_af = ti.af };
			bool kind_ok = t == SBX_DECAP_ERSPAN ? ti.kind <= SBX_TUN_ERSPAN3 :
				       t == SBX_DECAP_VXLAN  ? ti.kind == SBX_TUN_VXLAN && ti.udp_dst != 0 : /* 0 = 4789 */
							       ti.kind == SBX_TUN_GRE_TEB;

			memcpy(rule.local_ip, ti.dst, 16);
			rule.nb_ids = 0;
			if (sbx_decap_rule_match(&rule, &ti) != kind_ok)
				abort(); /* its own type, port and destination, any id: matches exactly its kind */
			rule.nb_ids = 1;
			(void)sbx_decap_rule_match(&rule, &ti);
		}
	}
	free(f);
	return 0;
}
