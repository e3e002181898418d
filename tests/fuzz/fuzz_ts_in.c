/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: timestamps in (shared/ts_in.c): the Arista AVSP header parser and the Metamako
 * trailer parser on any frame, and the clock offsets. Input: byte 0 chooses the readable bytes and the
 * options, bytes 1..8 our clock (ns, little endian), the rest is the frame (len bytes):
 *   bits 0-5 of byte 0: AVSP: avail = len - that (a first segment shorter than the frame);
 *   bit 6: Metamako: the frames end in an FCS; bit 7: a window of 60 s instead of 30 days.
 * Each parser reads a heap copy of exactly the bytes it is given (AVSP: avail; Metamako: the last
 * min(len, 256)), so ASan reports any read past them. Checked: the result is in range; an OK AVSP
 * parse cuts 12 or 14 bytes that lie, with the EtherType after them, within avail, and the cut (on
 * a writable copy) leaves the MACs in front of that EtherType; an OK Metamako parse cuts 16 bytes at
 * least (20 with the FCS), no more than it was given, and leaves 14 bytes at least; an AVSP time's
 * nanoseconds are the header's (below 10^9). Seeds: tests/fuzz/seeds.py (frames with headers and trailers).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <spanbox/ts_in.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_ts_in_offset o = { 0 }, o2 = { 0 };
	struct sbx_ts_in_info ti;
	enum sbx_ts_in_result r;
	uint32_t len, avail, t, k;
	uint64_t now = 0;
	uint8_t *f;

	if (size < 9 || size > 65536 + 9)
		return 0;
	for (k = 0; k < 8; k++)
		now |= (uint64_t)data[1 + k] << (8 * k);
	len = (uint32_t)size - 9;
	avail = (data[0] & 0x3f) < len ? len - (data[0] & 0x3f) : 0;
	f = malloc(len ? len : 1);
	if (!f)
		return 0;
	memcpy(f, data + 9, len);
	/* AVSP on exactly avail bytes (a heap block of that size: the copy is realloc'd down) */
	{
		uint8_t *a = malloc(avail ? avail : 1);

		if (!a)
			goto out;
		memcpy(a, f, avail);
		r = sbx_ts_in_avsp(a, avail, data[1], now, &ti);
		if ((unsigned)r >= SBX_TS_IN_RESULT_MAX)
			abort();
		if (r == SBX_TS_IN_OK) {
			const uint8_t *nsf = a + (ti.cut_front == 14 ? 22 : 20); /* the header's nanoseconds */

			if ((ti.cut_front != 12 && ti.cut_front != 14) || 12 + ti.cut_front + 2 > avail ||
			    ti.ns % 1000000000u != ((uint32_t)nsf[0] << 24 | (uint32_t)nsf[1] << 16 | (uint32_t)nsf[2] << 8 | nsf[3]))
				abort();
			if (memcmp(sbx_ts_in_cut_front(a, ti.cut_front), f, 12) != 0)
				abort();
			sbx_ts_in_offset_add(&o, ti.ns, now);
		} else if (r != SBX_TS_IN_ABSENT && !sbx_ts_in_malformed_name(r)) {
			abort();
		}
		free(a);
	}
	/* Metamako on the last min(len, 256) bytes */
	t = len < SBX_METAMAKO_TAIL_MAX ? len : SBX_METAMAKO_TAIL_MAX;
	{
		uint8_t *tail = malloc(t ? t : 1);

		if (!tail)
			goto out;
		memcpy(tail, f + len - t, t);
		r = sbx_ts_in_metamako(tail, t, len, data[0] & 0x40, (data[0] & 0x80) ? 60 : SBX_TS_IN_WINDOW_DEFAULT, now, &ti);
		free(tail);
		if ((unsigned)r >= SBX_TS_IN_RESULT_MAX || r == SBX_TS_IN_ABSENT)
			abort();
		if (r == SBX_TS_IN_OK) {
			if (ti.cut_back < SBX_METAMAKO_TRAILER_LEN + ((data[0] & 0x40) ? 4u : 0u) || ti.cut_back > t ||
			    len - ti.cut_back < 14)
				abort();
			sbx_ts_in_offset_add(&o2, ti.ns, now);
		}
	}
	sbx_ts_in_offset_merge(&o, &o2);
	if (o.frames && (o.min_ns > o.max_ns || o.last_ns < o.min_ns || o.last_ns > o.max_ns))
		abort();
out:
	free(f);
	return 0;
}
