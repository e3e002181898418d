/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the ERSPAN/GRE field decoder sbx_erspan_fields_from_frame() (shared/erspan.c)
 * on any frame, for type II and III, then the header writer on what it decoded (the fields must
 * stay in their bit widths, the header in SBX_ENCAP_MAX_LEN). Input: one Ethernet frame.
 * Seeds: frames of ../shared/captures (tests/fuzz/seeds.py).
 */
#include <stdint.h>
#include <stdlib.h>

#include <spanbox/erspan.h>

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
	return 0;
}
