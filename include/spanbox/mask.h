/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file mask.h
 * Masking of mirror copies (issue #26, docs/CONFIG.md "mask"): one region of a copied frame,
 * anchored at the start of the frame, of its L3 or L4 header, or of the L3 or L4 header of the
 * frame a tunnel inside it carries, overwritten with one pattern byte. Pure byte code (no mbufs,
 * no DPDK runtime), so the mirror engine (secondary/mirror.c), the unit test and the fuzzer call
 * the same functions.
 *
 * Sources: Ethernet II and IEEE 802.1Q / 802.1ad tags (0x8100, 0x88A8, 0x9100); MPLS RFC 3032
 * (after the bottom of stack, the first nibble tells IPv4 from IPv6, as Linux and Wireshark guess);
 * IPv4 RFC 791 (IHL, fragment offset, header checksum RFC 1071); IPv6 RFC 8200 (extension headers
 * walked as include/spanbox/ip6walk.h, the Fragment header's offset); tunnels as
 * include/spanbox/decap.h parses them (ERSPAN I/II/III, GRE-TEB, VXLAN on UDP 4789 only, GENEVE
 * on 6081, GTP-U G-PDUs on 2152).
 */
#ifndef SPANBOX_MASK_H
#define SPANBOX_MASK_H

#include <stdbool.h>
#include <stdint.h>

/** What a mask's offset counts from (sbx_mask_cfg.from); 0: the session masks nothing. */
enum sbx_mask_from {
	SBX_MASK_OFF = 0,      /**< no mask */
	SBX_MASK_L2 = 1,       /**< the first byte of the frame (the destination MAC) */
	SBX_MASK_L3 = 2,       /**< the IPv4 or IPv6 header behind the Ethernet header, tags, MPLS labels */
	SBX_MASK_L4 = 3,       /**< the header behind the IP header and IPv6 extension headers (TCP,
				    UDP, ICMP, anything): the start of the IP payload */
	SBX_MASK_INNER_L3 = 4, /**< L3 of the frame inside a tunnel the frame carries; without one, L3 */
	SBX_MASK_INNER_L4 = 5, /**< L4 of the frame inside a tunnel the frame carries; without one, L4 */
};

#define SBX_MASK_LEN_MAX 9600    /**< longest region, bytes (and largest offset) */
#define SBX_MASK_WALK_MAX 512    /**< bytes at the head of a frame the walk reads: headers beyond
				      them are not found (counted as no anchor) */

/** A session's mask (config key mirrors[].mask). */
struct sbx_mask_cfg {
	uint8_t from;     /**< enum sbx_mask_from; SBX_MASK_OFF: no mask */
	uint8_t pattern;  /**< the byte written over the region */
	uint16_t offset;  /**< bytes from the anchor to the region, 0..SBX_MASK_LEN_MAX */
	uint16_t length;  /**< bytes of the region, 1..SBX_MASK_LEN_MAX */
};

/** Where a mask goes in one frame (sbx_mask_region()). */
struct sbx_mask_region {
	uint32_t start;       /**< first frame byte to overwrite */
	uint32_t end;         /**< one past the last; may lie past the frame's end (then the frame is
				   masked to its end: "short") */
	uint8_t nb_ip4;       /**< IPv4 headers the walk passed, whatever the anchor: the frame's L3
				   and that of the frame a tunnel in it carries; their checksums are
				   recomputed when the region touches them */
	uint16_t ip4_off[2];  /**< their offsets in the frame */
	uint8_t ip4_hlen[2];  /**< their lengths (IHL x 4) as the frame had them */
};

/**
 * Find where mask @p mk goes in frame @p f: @p len bytes in all, of which the first @p avail are
 * readable (the caller passes at most SBX_MASK_WALK_MAX). Reads only, never writes.
 * The anchor: L2 = 0; L3 = the IP header behind Ethernet, up to 8 tags and 8 MPLS labels; L4 =
 * the IP payload (IPv4: behind IHL x 4 bytes; IPv6: behind the extension headers). A non-first
 * fragment (IPv4 fragment offset, IPv6 Fragment header offset > 0) carries the L4 payload from
 * fragment offset x 8: its L4 anchor lies that many bytes before its IP payload, so a region
 * given in L4 bytes masks the same bytes of the datagram in whichever fragment they travel, never
 * the fragment's IP header. inner_*: the L3 / L4 of the frame (or IP packet, ERSPAN III FT 2 and
 * GTP-U) a tunnel carries (sbx_decap_parse_map() with VXLAN on 4789 only); a frame without a
 * tunnel is its own innermost frame: its L3 / L4.
 * @return true with *r set (start = anchor + offset, end = start + length, the lower bound raised
 *         to the IP payload for a fragment's L4 anchor); false: the frame has no such header
 *         (a non-IP frame for l3/l4, headers cut or past avail), *r undefined.
 */
bool sbx_mask_region(const struct sbx_mask_cfg *mk, const uint8_t *f, uint32_t len, uint32_t avail,
		     struct sbx_mask_region *r);

/**
 * Recompute the IPv4 header checksum (RFC 1071) of the header at @p ip (@p hlen bytes, 20..60)
 * whose bytes at frame offsets [@p off, @p off + @p hlen) the region @p r may have changed: done
 * when the region overlaps the header but not its checksum field (bytes 10..11), whose pattern
 * then stays. @return true when the checksum was rewritten.
 */
bool sbx_mask_ip4_fix(const struct sbx_mask_region *r, uint8_t *ip, uint32_t off, uint32_t hlen);

/**
 * Apply region @p r of mask @p mk to the contiguous frame @p f of @p len bytes: the pattern over
 * [r->start, min(r->end, len)), then sbx_mask_ip4_fix() of the IPv4 headers the walk passed that
 * lie whole in the frame. @return bytes overwritten by the pattern (0: the frame ends before the
 * region starts).
 */
uint32_t sbx_mask_apply(const struct sbx_mask_cfg *mk, const struct sbx_mask_region *r, uint8_t *f, uint32_t len);

/** Name of a mask anchor ("l2", "l3", "l4", "inner_l3", "inner_l4"; "none" for SBX_MASK_OFF), as
 * the config and the API spell it; "unknown" out of range. Static storage. */
const char *sbx_mask_from_name(uint8_t from);

#endif
