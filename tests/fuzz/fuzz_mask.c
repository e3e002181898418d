/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the mask of mirror copies (shared/mask.c, issue #26) on any frame: where the
 * region lies (sbx_mask_region(), fewer readable bytes than the frame has) and its write
 * (sbx_mask_apply()). Input: byte 0 = anchor (mod 6: none, l2, l3, l4, inner_l3, inner_l4), bytes
 * 1-2 offset and 3-4 length (big-endian, taken mod 9601, length at least 1), byte 5 the pattern,
 * byte 6 chooses avail as fuzz_decap.c does (0: all; 1..127: len - byte; 128..255: byte - 128),
 * the rest is the frame. The walk reads a heap copy of exactly min(avail, 512) bytes, so ASan
 * reports any read past it. Checked: a region has start <= end and end - start <= length; the
 * write changes only the region and the checksum fields of the IPv4 headers the walk noted (inside
 * the frame); the bytes it reports written are the region cut to the frame. Seeds: the frames of
 * ../shared/captures (tests/fuzz/seeds.py) behind l4 +20 len 64 and inner_l3 +0 len 20 headers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <spanbox/mask.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_mask_cfg mk;
	struct sbx_mask_region r;
	uint32_t len, avail, n, k, end;
	uint8_t *f, *g;

	if (size < 7 || size > 16384 + 7)
		return 0;
	mk.from = (uint8_t)(data[0] % 6);
	mk.offset = (uint16_t)((data[1] << 8 | data[2]) % (SBX_MASK_LEN_MAX + 1));
	mk.length = (uint16_t)((data[3] << 8 | data[4]) % SBX_MASK_LEN_MAX + 1);
	mk.pattern = data[5];
	len = (uint32_t)size - 7;
	avail = data[6] == 0 ? len : data[6] < 128 ? (data[6] < len ? len - data[6] : 0) : (uint32_t)data[6] - 128;
	if (avail > len)
		avail = len;
	if (avail > SBX_MASK_WALK_MAX)
		avail = SBX_MASK_WALK_MAX;
	f = malloc(avail ? avail : 1);
	g = malloc(len ? len : 1);
	if (f == NULL || g == NULL) {
		free(f);
		free(g);
		return 0;
	}
	memcpy(f, data + 7, avail);
	if (sbx_mask_region(&mk, f, len, avail, &r)) {
		if (mk.from == 0 || r.start > r.end || r.end - r.start > mk.length || r.nb_ip4 > 2)
			abort();
		memcpy(g, data + 7, len);
		n = sbx_mask_apply(&mk, &r, g, len);
		end = r.end < len ? r.end : len;
		if (n != (r.start < end ? end - r.start : 0))
			abort();
		for (k = 0; k < len; k++) {
			bool in = k >= r.start && k < end, csum = false;

			for (uint8_t i = 0; i < r.nb_ip4; i++)
				csum |= k == r.ip4_off[i] + 10u || k == r.ip4_off[i] + 11u;
			if (in ? g[k] != mk.pattern : (g[k] != data[7 + k] && !csum))
				abort();
		}
	}
	free(f);
	free(g);
	return 0;
}
