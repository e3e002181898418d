/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The dedup table of the ingress stage (include/spanbox/ingress.h, docs/CONFIG.md "dedup").
 *
 * A frame is identified by its length and two hashes of its bytes, with the ignored fields set to
 * zero: a 64-bit one, Bob Jenkins' lookup3 hashlittle2 (DPDK's rte_jhash_2hashes, seeds
 * SEED_JHASH_C / SEED_JHASH_B), and an independent 32-bit one, CRC32C (the SSE4.2 crc32
 * instruction, or DPDK's rte_crc_sw.h tables where it is missing: the same function, seed
 * SEED_CRC). Both are computed over the frame cut in blocks of BLOCK bytes at fixed offsets,
 * each block copied into an aligned buffer, so that the result does not depend on how the frame
 * is split into segments (and rte_jhash's word loads never read past the frame or unaligned).
 *
 * The table: entries / WAYS buckets of WAYS entries; the bucket is chosen by the high bits of the
 * 64-bit hash. A hit needs equal length and both hashes and a time within the window; otherwise
 * the frame takes an empty or expired way of its bucket, or the oldest one (an eviction when that
 * one was still within the window).
 */
#include <string.h>

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#else
#include <rte_crc_sw.h>
#endif
#include <rte_jhash.h>

#include "spanbox/ingress.h"

#define WAYS 8                      /* entries of a bucket */
#define BLOCK 256                   /* bytes hashed at a time (the first block holds the headers) */
#define SEED_JHASH_C 0x9e3779b9u    /* lookup3's two initial values (pc, pb) */
#define SEED_JHASH_B 0x7f4a7c15u
#define SEED_CRC 0xffffffffu        /* CRC32C's usual initial value */

/* One bucket: the fields of its WAYS entries side by side (192 bytes, three cache lines; a miss
 * reads the first only). len 0 = an empty way. */
struct bucket {
	uint64_t h64[WAYS];
	uint32_t h32[WAYS];
	uint32_t len[WAYS];
	uint64_t seen[WAYS];
};

struct sbx_dedup_table {
	uint32_t entries;
	uint32_t shift;  /* 64 - log2(buckets): the bucket is h64 >> shift */
	uint64_t window;
	uint8_t pad[48]; /* the buckets start a cache line after the table's start */
	struct bucket b[];
};

_Static_assert(sizeof(struct bucket) == 24 * WAYS, "24 bytes an entry");
_Static_assert(sizeof(struct sbx_dedup_table) == 64, "a 64-byte header");

size_t sbx_dedup_mem_size(uint32_t entries)
{
	if (entries < WAYS || (entries & (entries - 1)) != 0)
		return 0;
	return sizeof(struct sbx_dedup_table) + (size_t)(entries / WAYS) * sizeof(struct bucket);
}

struct sbx_dedup_table *sbx_dedup_init(void *mem, uint32_t entries, uint64_t window)
{
	struct sbx_dedup_table *t = mem;
	uint32_t buckets = entries / WAYS, bits = 0;

	if (mem == NULL || sbx_dedup_mem_size(entries) == 0)
		return NULL;
	memset(mem, 0, sbx_dedup_mem_size(entries));
	while ((1u << bits) < buckets)
		bits++;
	t->entries = entries;
	t->shift = 64 - bits; /* bits 0 (one bucket): shift 64 is undefined, see bucket_of() */
	t->window = window;
	return t;
}

static inline uint32_t bucket_of(const struct sbx_dedup_table *t, uint64_t h64)
{
	return t->shift >= 64 ? 0 : (uint32_t)(h64 >> t->shift);
}

static inline uint32_t crc32c(const uint8_t *p, uint32_t n, uint32_t crc)
{
	uint64_t w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
#if defined(__SSE4_2__)
		crc = (uint32_t)_mm_crc32_u64(crc, w);
#else
		crc = crc32c_2words(w, crc);
#endif
	}
	for (; n > 0; p++, n--) {
#if defined(__SSE4_2__)
		crc = _mm_crc32_u8(crc, *p);
#else
		crc = crc32c_1byte(*p, crc);
#endif
	}
	return crc;
}

/* Reads a frame made of segments, BLOCK bytes at a time. */
struct reader {
	const uint8_t *const *seg;
	const uint32_t *seg_len;
	uint32_t nb_seg, i, off; /* segment i, offset in it */
};

/* Copy the next @n bytes of the frame to @dst (the caller knows they are there). */
static void gather(struct reader *r, uint8_t *dst, uint32_t n)
{
	uint32_t k;

	while (n > 0 && r->i < r->nb_seg) {
		k = r->seg_len[r->i] - r->off;
		if (k > n)
			k = n;
		if (k > 0 && r->seg[r->i] != NULL)
			memcpy(dst, r->seg[r->i] + r->off, k);
		else if (k > 0)
			memset(dst, 0, k);
		dst += k;
		n -= k;
		r->off += k;
		if (r->off == r->seg_len[r->i]) {
			r->i++;
			r->off = 0;
		}
	}
}

/* Zero the ignored fields of the first block @b (@n bytes), whose EtherType (or first VLAN tag)
 * is at offset @p: the IPv4 or IPv6 header after at most two VLAN tags. */
static void mask_fields(uint8_t *b, uint32_t n, uint8_t ignore, uint32_t p)
{
	uint16_t type;
	int tags;

	if (!(ignore & (SBX_DEDUP_IGNORE_TTL | SBX_DEDUP_IGNORE_DSCP | SBX_DEDUP_IGNORE_IP_CHECKSUM)))
		return;
	if (n < p + 2)
		return;
	type = (uint16_t)(b[p] << 8 | b[p + 1]);
	for (tags = 0; tags < 2 && (type == 0x8100 || type == 0x88A8 || type == 0x9100) && p + 6 <= n; tags++) {
		p += 4;
		type = (uint16_t)(b[p] << 8 | b[p + 1]);
	}
	p += 2; /* the IP header */
	if (type == 0x0800 && p + 20 <= n && b[p] >> 4 == 4) {
		if (ignore & SBX_DEDUP_IGNORE_DSCP)
			b[p + 1] &= 0x03; /* ToS: DSCP 6 bits, ECN 2 bits */
		if (ignore & SBX_DEDUP_IGNORE_TTL)
			b[p + 8] = 0;
		/* the checksum covers TTL and DSCP: ignored whenever either is */
		b[p + 10] = b[p + 11] = 0;
	} else if (type == 0x86DD && p + 40 <= n && b[p] >> 4 == 6) {
		if (ignore & SBX_DEDUP_IGNORE_DSCP) {
			b[p] &= 0xF0;     /* traffic class bits 7..4 (DSCP 5..2) */
			b[p + 1] &= 0x3F; /* traffic class bits 3..2 (DSCP 1..0) */
		}
		if (ignore & SBX_DEDUP_IGNORE_TTL)
			b[p + 7] = 0; /* hop limit */
	}
}

bool sbx_dedup_check(struct sbx_dedup_table *t, const uint8_t *const *seg, const uint32_t *seg_len,
		     uint32_t nb_seg, uint8_t ignore, uint64_t now, struct sbx_dedup_stats *st)
{
	return sbx_dedup_check_window(t, seg, seg_len, nb_seg, ignore, now, t->window, st);
}

bool sbx_dedup_check_window(struct sbx_dedup_table *t, const uint8_t *const *seg, const uint32_t *seg_len,
			    uint32_t nb_seg, uint8_t ignore, uint64_t now, uint64_t window, struct sbx_dedup_stats *st)
{
	/* + 4: rte_jhash reads the last bytes as a whole 32-bit word */
	uint32_t buf[(BLOCK + 4) / 4] __attribute__((aligned(16)));
	struct reader r = {seg, seg_len, nb_seg, 0, 0};
	uint32_t pc = SEED_JHASH_C, pb = SEED_JHASH_B, crc = SEED_CRC, n, w, victim = 0, type_at = 12;
	uint64_t len = 0, h64, oldest = UINT64_MAX;
	struct bucket *b;
	bool first = true, have_free = false;

	for (w = 0; w < nb_seg; w++)
		len += seg_len[w];
	if (len == 0 || len > UINT32_MAX) {
		st->unique++;
		return false;
	}
	if (ignore & SBX_DEDUP_IGNORE_VLAN) {
		/* compared from the first EtherType that is not a VLAN tag's: the MAC addresses and the
		 * tags (802.1Q, 802.1ad, 0x9100; at most 8) are left out, so that one packet seen on two
		 * VLANs of a trunk is one */
		uint8_t head[12 + 8 * 4 + 2];
		uint32_t skip = 12, hn = len < sizeof(head) ? (uint32_t)len : (uint32_t)sizeof(head);
		struct reader peek = r;

		gather(&peek, head, hn);
		while (skip + 4 + 2 <= hn) {
			uint16_t t = (uint16_t)(head[skip] << 8 | head[skip + 1]);

			if (t != 0x8100 && t != 0x88A8 && t != 0x9100)
				break;
			skip += 4;
		}
		if (skip < len) {
			gather(&r, head, skip); /* past the MACs and tags */
			len -= skip;
			type_at = 0;
		}
	}
	/* the bytes, BLOCK at a time at fixed offsets of the frame, whatever the segments */
	for (uint64_t left = len; left > 0; left -= n) {
		n = left > BLOCK ? BLOCK : (uint32_t)left;
		buf[n / 4] = 0;
		gather(&r, (uint8_t *)buf, n);
		if (first)
			mask_fields((uint8_t *)buf, n, ignore, type_at);
		first = false;
		rte_jhash_2hashes(buf, n, &pc, &pb);
		crc = crc32c((const uint8_t *)buf, n, crc);
	}
	h64 = (uint64_t)pc << 32 | pb;
	b = &t->b[bucket_of(t, h64)];
	for (w = 0; w < WAYS; w++) {
		bool live = b->len[w] != 0 && now >= b->seen[w] && now - b->seen[w] <= window;

		if (b->len[w] == len && b->h64[w] == h64 && b->h32[w] == crc) {
			if (live) {
				st->duplicates++;
				return true; /* the window runs from the copy that was kept */
			}
			victim = w; /* the same frame, seen before the window: its way */
			have_free = true;
			break;
		}
		if (!live && !have_free) {
			victim = w; /* the first empty or expired way */
			have_free = true;
		} else if (live && !have_free && b->seen[w] < oldest) {
			victim = w;
			oldest = b->seen[w];
		}
	}
	if (!have_free)
		st->evictions++; /* every way of the bucket is within the window: the oldest goes */
	b->h64[victim] = h64;
	b->h32[victim] = crc;
	b->len[victim] = (uint32_t)len;
	b->seen[victim] = now;
	st->unique++;
	return false;
}
