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
	uint32_t vntags;      /**< VN-Tags removed */
	uint32_t etags;       /**< E-Tags removed */
	bool mpls_unknown;    /**< a stack whose payload is neither IPv4 nor IPv6 (first nibble): kept whole */
};

/**
 * Remove the tags (@p what & SBX_STRIP_VLAN: 802.1Q/802.1ad; SBX_STRIP_VNTAG: Cisco VN-Tag,
 * EtherType 0x8926, 6 bytes; SBX_STRIP_ETAG: IEEE 802.1BR E-Tag, EtherType 0x893F, 8 bytes: in any
 * order and number after the MAC addresses; every tag named goes, however many, up to a tag not
 * named that would make those kept exceed 128 bytes: that one and everything after it stay) and/or MPLS label stacks
 * (SBX_STRIP_MPLS) that follow the MAC addresses of the Ethernet frame at @p frame (@p avail
 * readable and writable bytes): the tags not named stay, in their order; the 12 address bytes and
 * the kept tags are moved forward over what is removed, and the EtherType becomes that of what
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

/**
 * Numbers a GRE sequence number may be behind the expected one and still be a late frame (or a
 * duplicate): the window sbx_seq_track() remembers which numbers it saw in. A number further behind
 * is a sender that started counting again (a switch reload, a session re-created): counting it as
 * late would call every later frame reordered until the old count came back. A power of two.
 */
#define SBX_SEQ_WINDOW 1024u
/** The old name of SBX_SEQ_WINDOW: frames a number may be behind the expected one and be late. */
#define SBX_SEQ_REORDER_MAX SBX_SEQ_WINDOW

/**
 * Sequence state of one tunnel sender (outer source, session or VNI), RFC 2890 numbers. Zero it for
 * a new sender. 168 bytes.
 */
struct sbx_seq_state {
	bool started;        /**< a first number was seen */
	uint32_t next;       /**< the number expected next */
	uint32_t span;       /**< numbers of the window (next - SBX_SEQ_WINDOW .. next - 1) at or after
				  the first number seen since the start or a restart: 1..SBX_SEQ_WINDOW */
	uint32_t missing;    /**< numbers of the window counted in @ref lost and not seen (yet): a late
				  frame may still bring them */
	uint64_t zero_run;   /**< frames in a row numbered 0: a sender that does not maintain numbers */
	uint64_t lost;       /**< frames lost: numbers skipped by jumps forward, less those that came
				  late within the window (RFC 3550's "cumulative number of packets lost"
				  without duplicates): it goes down by one when a late frame fills a gap */
	uint64_t lost_final; /**< the part of @ref lost that can no longer change: numbers that left the
				  window unseen (never decreases: a counter for /metrics) */
	uint64_t seen[SBX_SEQ_WINDOW / 64]; /**< bit n % SBX_SEQ_WINDOW: number n of the window was seen */
};

/** What one sequence number told sbx_seq_track(). */
enum sbx_seq_verdict {
	SBX_SEQ_IN_ORDER = 0,       /**< the expected number (or the first one) */
	SBX_SEQ_GAP = 1,            /**< a jump forward: *lost frames were not seen (yet) */
	SBX_SEQ_REORDERED = 2,      /**< a late number, not seen before, within the window: when the gap
				         that skipped it counted it lost, *lost = -1 (it is not lost) */
	SBX_SEQ_NOT_MAINTAINED = 3, /**< the sender numbers every frame 0 */
	SBX_SEQ_RESTARTED = 4,      /**< SBX_SEQ_WINDOW or more behind: the sender started again */
	SBX_SEQ_DUPLICATE = 5,      /**< a number of the window seen already (the same frame twice) */
};

/**
 * Follow one sender's GRE sequence numbers (RFC 2890; 32-bit, wrapping). A jump forward of less than
 * 2^31 is a gap: its (seq - next) numbers are counted lost (*lost = that many). A number behind the
 * expected one within SBX_SEQ_WINDOW is a duplicate when it was seen, else a late frame (reordered):
 * one a gap counted lost is taken out of the loss again (*lost = -1; numbers from before the first
 * one seen were never counted). One further behind is a restart: the count goes on from it (neither
 * loss nor reordering). A sender whose numbers stay 0 is "not maintained" and never counted as loss.
 * Updates s->lost, s->lost_final and s->missing; *lost: the change of s->lost by this number.
 * Example (issue #24): 10, 11, 12, 16, 15, 17 is one gap (13..15: +3), 15 late (-1): 2 lost, 1
 * reordered.
 */
enum sbx_seq_verdict sbx_seq_track(struct sbx_seq_state *s, uint32_t seq, int64_t *lost);

/**
 * One tunnel sender a worker decapsulated frames of: (input port, outer source address, kind,
 * ERSPAN session id / VNI / GRE key), a slot of the worker's table in the memzone
 * (struct sbx_ingress_stats.src). Written by that worker only. The key is written under @ref gen:
 * odd while the worker takes or frees the slot, so a reader (mgmt) copies a slot whose gen was even
 * and unchanged before and after the copy (and @ref used set). Counters of one sender whose frames
 * reach two workers (two RX queues) are summed by mgmt; its sequence numbers are followed per
 * worker (docs/INGRESS.md).
 */
struct sbx_tunnel_source {
	uint32_t gen;            /**< odd while the key is being written or cleared */
	uint8_t used;            /**< 1 while the slot holds a sender */
	uint8_t port;            /**< input port index */
	uint8_t kind;            /**< enum sbx_tunnel_kind (decap.h) */
	uint8_t af;              /**< 4 or 6 */
	uint32_t id;             /**< ERSPAN session id, VNI or GRE key (0: none) */
	uint8_t src[16];         /**< outer source address, network order (IPv4: bytes 0..3, the rest 0) */
	uint64_t packets;        /**< frames decapsulated */
	uint64_t bytes;          /**< inner bytes delivered */
	uint64_t seq_gaps;       /**< jumps forward of the GRE sequence number */
	uint64_t seq_reordered;  /**< late numbers within the window (SBX_SEQ_REORDERED) */
	uint64_t seq_duplicates; /**< numbers of the window seen twice (SBX_SEQ_DUPLICATE) */
	uint64_t seq_frames;     /**< frames that carried a sequence number */
	uint64_t truncated;      /**< frames with the ERSPAN T bit (cut by the sender) */
	uint64_t last_seen_ns;   /**< CLOCK_REALTIME ns of the last frame (the idle timeout runs from it) */
	uint8_t seq_not_maintained; /**< "sequence not maintained": every number so far was 0, or the
					 sender was seen numbering a run of frames 0 (seq_sticky_zero) */
	uint8_t seq_sticky_zero; /**< sbx_seq_track() said SBX_SEQ_NOT_MAINTAINED once */
	struct sbx_seq_state seq; /**< sequence state: seq.lost, seq.lost_final are the loss counts */
};

/** The sequence state of sender @p e as /status and the replay summary name it: "absent" (no
 * frame had the GRE S bit), "not_maintained", or "maintained". */
static inline const char *sbx_tunnel_sequence_name(const struct sbx_tunnel_source *e)
{
	return e->seq_frames == 0 ? "absent" : e->seq_not_maintained ? "not_maintained" : "maintained";
}

/** Cells of a sender table's index: twice the most slots, so a probe ends soon (load <= 1/2). */
#define SBX_SENDER_INDEX_CELLS (2 * SBX_MAX_TUNNEL_SOURCES)

/**
 * A worker's tunnel sender table: @ref nb slots of the memzone (struct sbx_tunnel_source) and the
 * worker's own index of them (open addressing, linear probing; rebuilt whole after a slot is freed,
 * so no tombstones). Only the worker writes it; mgmt reads the slots (see gen).
 */
struct sbx_sender_table {
	struct sbx_tunnel_source *src;  /**< the slots */
	uint32_t nb;                    /**< slots in use of src[] (workers.tunnel_senders.entries) */
	uint32_t nb_used;               /**< slots holding a sender */
	uint32_t free_hint;             /**< where the search for a free slot starts */
	uint16_t index[SBX_SENDER_INDEX_CELLS]; /**< slot + 1, 0 = empty cell */
};

/**
 * Take @p nb slots at @p src (@p nb <= @p cap <= SBX_MAX_TUNNEL_SOURCES; @p cap: the slots the
 * memory at @p src holds) as table @p t: the senders the slots hold (a worker restarted into its
 * slot keeps them) are indexed; slots from @p nb to @p cap are freed.
 */
void sbx_senders_init(struct sbx_sender_table *t, struct sbx_tunnel_source *src, uint32_t nb, uint32_t cap);

/**
 * The slot of sender (@p port, @p kind, @p af, @p id, @p addr: 4 or 16 bytes by af): found, or taken
 * (zeroed, key written, used) when a slot is free. @return the slot, NULL when the table is full
 * (the caller counts the frame as untracked).
 */
struct sbx_tunnel_source *sbx_senders_get(struct sbx_sender_table *t, uint8_t port, uint8_t kind, uint8_t af,
					  uint32_t id, const uint8_t *addr);

/**
 * Free the senders whose last frame is older than @p idle_ns before @p now_ns (CLOCK_REALTIME ns),
 * and every sender of a port whose @p drop_port[port] is true (its rules changed). @p expired[port]
 * (SBX_MAX_PORTS entries, may be NULL) is increased by the senders freed for idleness per port.
 * @return the number of slots freed.
 */
uint32_t sbx_senders_expire(struct sbx_sender_table *t, uint64_t now_ns, uint64_t idle_ns, const bool *drop_port,
			    uint64_t *expired);

#endif
