/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file ingress.h
 * The byte-level work of a port's ingress stages after decap (docs/CONFIG.md "ingress"): strip tags
 * and labels, push a tag, recognise duplicates, follow a tunnel's sequence numbers. No mbufs and no
 * DPDK runtime: the worker's stage (secondary/ingress.c) moves mbuf offsets, these functions move and
 * compare bytes, so unit tests and the fuzzer call them without ports.
 *
 * Sources: IEEE 802.1Q (C-tag 0x8100, S-tag 0x88A8, and the pre-standard 0x9100), RFC 3032 (MPLS label
 * stack entry, bottom-of-stack bit; 0x8847 unicast, 0x8848 multicast), RFC 791 / RFC 8200 (TTL, DSCP,
 * IPv4 header checksum), RFC 2890 (GRE sequence numbers).
 */
#ifndef SPANBOX_INGRESS_H
#define SPANBOX_INGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/** What sbx_ingress_strip() removed. */
struct sbx_strip_result {
	uint32_t vlan_tags;   /**< 802.1Q/802.1ad tags removed */
	uint32_t mpls_labels; /**< MPLS label stack entries removed */
	bool mpls_unknown;    /**< a stack whose payload is neither IPv4 nor IPv6 (first nibble): kept whole */
};

/**
 * Remove the tags (@p what & SBX_STRIP_VLAN) and/or MPLS label stacks (SBX_STRIP_MPLS) that follow
 * the MAC addresses of the Ethernet frame at @p frame (@p avail readable and writable bytes): the
 * 12 address bytes are moved forward over what is removed, and the EtherType becomes that of what
 * was carried (for MPLS: 0x0800 or 0x86DD by the payload's first nibble).
 * @return bytes removed from the front: the frame now starts at @p frame + return value and is that
 *         much shorter. 0 when nothing was removed. Never reads past @p avail.
 */
uint32_t sbx_ingress_strip(uint8_t *frame, uint32_t avail, uint8_t what, struct sbx_strip_result *res);

/**
 * Push one 802.1Q tag (TPID 0x8100, PCP 0, DEI 0, VLAN @p vlan) after the MAC addresses of the frame
 * at @p frame, whose 4 bytes before it must be writable headroom: the addresses move 4 bytes back.
 * @return the new start of the frame (@p frame - 4).
 */
uint8_t *sbx_ingress_tag_push(uint8_t *frame, uint16_t vlan);

/**
 * Dedup table: per worker, bounded. Each entry holds a 64-bit hash, a second 32-bit hash, the frame
 * length and the time it was last seen. A frame is a duplicate when an entry of the same bucket has
 * equal length and both hashes and was seen within the window (documented false-positive rate in
 * docs/CONFIG.md "dedup"). Memory: sbx_dedup_mem_size(entries) bytes, allocated by the caller.
 */
struct sbx_dedup_table;

/** What sbx_dedup_check() decided, for counters. */
struct sbx_dedup_stats {
	uint64_t unique;     /**< frames not seen within the window: kept and inserted */
	uint64_t duplicates; /**< frames dropped as duplicates */
	uint64_t evictions;  /**< live entries (younger than the window) overwritten for want of room */
};

/** Bytes a table of @p entries (a power of two, >= 8) needs: 64 + 24 per entry; 0 for any other
 * @p entries. */
size_t sbx_dedup_mem_size(uint32_t entries);

/**
 * Make the table in @p mem (sbx_dedup_mem_size(entries) bytes, any alignment the caller gives of 64)
 * empty. @p window is the dedup window in the caller's time unit (TSC cycles in the worker).
 * @return the table (== mem), or NULL when entries is not a power of two >= 8.
 */
struct sbx_dedup_table *sbx_dedup_init(void *mem, uint32_t entries, uint64_t window);

/**
 * Is the frame made of @p nb_seg segments (@p seg[i], @p seg_len[i] bytes, any split: empty segments
 * and headers across segments are fine; the bytes are only read) a duplicate of one kept within the
 * window before @p now (same unit as the window; now - kept <= window)? The @p ignore fields
 * (SBX_DEDUP_IGNORE_*, found behind at most two VLAN tags) are treated as equal; the IPv4 header
 * checksum is ignored whenever TTL or DSCP is. A frame that is not a duplicate is inserted (taking an
 * empty or expired entry of its bucket, else evicting the bucket's oldest: st->evictions) and counted
 * in st->unique; a duplicate is counted in st->duplicates and does not restart the window. A frame
 * of 0 bytes is never a duplicate. Hashes: lookup3 (rte_jhash_2hashes) 64 bits + CRC32C 32 bits
 * + the length (shared/dedup.c, docs/CONFIG.md "dedup" for the false-positive rate).
 * @return true: a duplicate (the caller drops it); false: unique.
 */
bool sbx_dedup_check(struct sbx_dedup_table *t, const uint8_t *const *seg, const uint32_t *seg_len,
		     uint32_t nb_seg, uint8_t ignore, uint64_t now, struct sbx_dedup_stats *st);

/**
 * sbx_dedup_check() with the window of this lookup, @p window, instead of the table's: one table
 * serves the ports of a worker whose dedup windows differ (secondary/ingress.c). An entry is live
 * for a lookup when it was kept within that lookup's window.
 */
bool sbx_dedup_check_window(struct sbx_dedup_table *t, const uint8_t *const *seg, const uint32_t *seg_len,
			    uint32_t nb_seg, uint8_t ignore, uint64_t now, uint64_t window, struct sbx_dedup_stats *st);

/** Sequence state of one tunnel sender (outer source, session or VNI). */
struct sbx_seq_state {
	bool started;       /**< a first number was seen */
	uint32_t next;      /**< the number expected next */
	uint64_t zero_run;  /**< frames in a row numbered 0: a sender that does not maintain numbers */
};

/** What one sequence number told sbx_seq_track(). */
enum sbx_seq_verdict {
	SBX_SEQ_IN_ORDER = 0,      /**< the expected number (or the first one) */
	SBX_SEQ_GAP = 1,           /**< a jump forward: *lost frames were not seen */
	SBX_SEQ_REORDERED = 2,     /**< a number behind the expected one (late, or a duplicate) */
	SBX_SEQ_NOT_MAINTAINED = 3, /**< the sender numbers every frame 0 */
	SBX_SEQ_RESTARTED = 4      /**< more than SBX_SEQ_REORDER_MAX behind: the sender started again */
};

/**
 * Frames a number may be behind the expected one and still be a late frame (reordered). A number
 * further behind is a sender that started counting again (a switch reload, a session re-created):
 * counting it as late would call every later frame reordered until the old count came back.
 */
#define SBX_SEQ_REORDER_MAX 4096u

/**
 * Follow one sender's GRE sequence numbers (RFC 2890; 32-bit, wrapping). A jump forward of less than
 * 2^31 is a gap of (seq - next) frames written to @p lost; a number at most SBX_SEQ_REORDER_MAX behind
 * is reordered (never lost); one further behind is a restart: the count goes on from it (neither loss
 * nor reordering); a sender whose numbers stay 0 is "not maintained" and never counted as loss.
 */
enum sbx_seq_verdict sbx_seq_track(struct sbx_seq_state *s, uint32_t seq, uint64_t *lost);

#endif
