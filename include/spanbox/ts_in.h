/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file ts_in.h
 * Timestamps in (issue #26): the ingress stage `ingress.timestamp` takes the time a switch or a tap
 * put on a frame off it, and keeps that time for the recorder (docs/INGRESS.md "Timestamps in").
 * Bytes only (no mbuf, no DPDK runtime): the worker's stage (secondary/ingress.c), the unit test
 * (tests/unit/test_ts_in.c) and the fuzzer (tests/fuzz/fuzz_ts_in.c) call the same code.
 *
 * Wire formats, as Wireshark decodes them:
 *  - **Arista AVSP timestamp header** (epan/dissectors/packet-avsp.c, "Arista Vendor Specific
 *    ethertype Protocol"; tshark 4.0 field names avsp.sub_type, avsp.ver, avsp.64sec, avsp.64ns,
 *    avsp.48sec, avsp.48ns, avsp.etype). Inserted after the source MAC address:
 *    EtherType 0xD28B (2), subtype (2, 0x0001 = timestamp), version (2), the time, then the frame's
 *    own EtherType. Versions: 0x0010 64-bit TAI, 0x0110 64-bit UTC, 0x0020 48-bit TAI, 0x0120
 *    48-bit UTC, and their "J2" variants 0x0011, 0x0111, 0x0021, 0x0121 (the newer dissector). The
 *    64-bit time is seconds (32 bits) + nanoseconds (32 bits), IEEE 1588 time of day; the 48-bit
 *    time is the low 16 bits of the seconds + nanoseconds (32 bits): the upper bits of the seconds
 *    are taken from our clock (the second nearest it with those low bits, +-9 hours). All big
 *    endian. The header is 14 bytes (64-bit) or 12 (48-bit) beside the EtherType that follows.
 *  - **Metamako / MetaWatch trailer** (epan/dissectors/packet-metamako.c, a heuristic dissector
 *    of "eth.trailer"; tshark fields metamako.time, metamako.flags, metamako.srcdevice,
 *    metamako.srcport): appended at the end of the frame: the original FCS (4), trailer extensions
 *    (only when flags bit 0x02 says so: TLVs read backwards from the seconds, each a 32-bit tag
 *    word, its length (bits 6-7, in 32-bit words; a tag 0x1F has an 11-bit length, bits 6-15, + 1)
 *    and a last-TLV bit 5), seconds (4), nanoseconds (4), flags (1), device id (2), port id (1);
 *    then, on a port that keeps it, the frame's new FCS (4). 16 bytes without extensions. A
 *    trailer has no marker: Wireshark's plausibility test is nanoseconds < 10^9, seconds > 3600
 *    and within 30 days of the capture time; here the port's config says the frames carry one and
 *    the same test (with our clock and the configured window) tells a broken trailer.
 */
#ifndef SPANBOX_TS_IN_H
#define SPANBOX_TS_IN_H

#include <stdbool.h>
#include <stdint.h>

/** ingress.timestamp.format: where a port's frames carry their time. */
enum sbx_ts_in_format {
	SBX_TS_IN_NONE = 0,     /**< no timestamp stage */
	SBX_TS_IN_ARISTA = 1,   /**< "arista": an AVSP timestamp header after the source MAC */
	SBX_TS_IN_METAMAKO = 2, /**< "metamako": a Metamako/MetaWatch trailer at the end */
};

/** The AVSP EtherType (Arista's vendor-specific EtherType, IEEE assigned 2016). */
#define SBX_AVSP_ETHERTYPE 0xD28Bu
/** The AVSP subtype of the timestamp header. */
#define SBX_AVSP_SUBTYPE_TIMESTAMP 0x0001u
/** TAI - UTC in seconds since 2017-01-01 (IERS Bulletin C): the default ingress.timestamp.tai_offset_s. */
#define SBX_TAI_UTC_OFFSET_DEFAULT 37
/** Bytes of a Metamako trailer without extensions: original FCS, seconds, nanoseconds, flags, device, port. */
#define SBX_METAMAKO_TRAILER_LEN 16
/** The default ingress.timestamp.window_s: Wireshark's 30 days (packet-metamako.c). */
#define SBX_TS_IN_WINDOW_DEFAULT 2592000u
/** Most bytes at the end of a frame sbx_ts_in_metamako() looks at (extensions further back: implausible). */
#define SBX_METAMAKO_TAIL_MAX 256u

/**
 * Why a frame that carries (or on a Metamako port must carry) a timestamp is malformed: counted
 * (timestamp_malformed_<name>) and dropped. Declared once: _(name, help).
 */
#define foreach_sbx_ts_in_malformed                                                                  \
	_(short, "an AVSP header cut short, or a frame too short for its trailer and an Ethernet header") \
	_(subtype, "an AVSP header of a subtype other than 0x0001 (timestamp)")                      \
	_(version, "an AVSP timestamp header of a version other than 64/48-bit TAI/UTC")           \
	_(implausible, "a time that fails the plausibility test (nanoseconds >= 10^9; Metamako: seconds " \
	  "outside the window around our clock, or extensions past the frame)")

/** What a parse found. */
enum sbx_ts_in_result {
	SBX_TS_IN_OK = 0,     /**< a time; cut the header (front) or the trailer (back) */
	SBX_TS_IN_ABSENT = 1, /**< Arista: no AVSP header after the MACs: the frame is left as it is */
#define _(n, h) SBX_TS_IN_MALFORMED_##n,
	foreach_sbx_ts_in_malformed
#undef _
	SBX_TS_IN_RESULT_MAX
};

/** What an OK parse found. */
struct sbx_ts_in_info {
	uint64_t ns;        /**< the frame's time: UTC nanoseconds since 1970-01-01 (TAI less tai_offset_s) */
	uint32_t cut_front; /**< bytes to remove right after the 12 MAC bytes (the AVSP header), or 0 */
	uint32_t cut_back;  /**< bytes to remove from the end (the Metamako trailer, with the FCS when kept), or 0 */
	uint16_t version;   /**< AVSP: the version word */
	uint16_t device;    /**< Metamako: the device id */
	uint8_t src_port;   /**< Metamako: the port id */
	uint8_t flags;      /**< Metamako: the flags byte */
};

/** @return the counter suffix of malformed result @p r ("short", ...), NULL for OK, ABSENT or others. */
const char *sbx_ts_in_malformed_name(enum sbx_ts_in_result r);

/**
 * Parse an Arista AVSP timestamp header of the frame at @p frame: @p avail readable bytes (the
 * frame's first segment; the header must lie in them). The EtherType after the MACs (offset 12)
 * must be 0xD28B, else SBX_TS_IN_ABSENT (a frame under 14 bytes too). Then: fewer bytes than the
 * subtype and version, or than the time and the EtherType behind it: MALFORMED_short; a subtype
 * other than 1: MALFORMED_subtype; an unknown version: MALFORMED_version; nanoseconds >= 10^9:
 * MALFORMED_implausible. TAI times become UTC by @p tai_offset_s (TAI - UTC, seconds). A 48-bit
 * time takes its upper seconds from @p now_ns (CLOCK_REALTIME ns, UTC): the nearest second with
 * the header's low 16 bits. Never reads past @p avail, never writes.
 * @return OK with @p out->ns and @p out->cut_front (14 or 12), or ABSENT, or a MALFORMED reason.
 */
enum sbx_ts_in_result sbx_ts_in_avsp(const uint8_t *frame, uint32_t avail, uint32_t tai_offset_s, uint64_t now_ns,
				     struct sbx_ts_in_info *out);

/**
 * Parse a Metamako trailer at the end of a frame of @p frame_len bytes, given its last @p tail_len
 * bytes at @p tail (tail_len <= frame_len; the stage gives min(frame_len, SBX_METAMAKO_TAIL_MAX)).
 * @p fcs: the frame ends in a 4-byte FCS after the trailer (cut with it). Plausible: nanoseconds
 * < 10^9, seconds > 3600 and the trailer's whole second within @p window_s + 1 s of @p now_ns
 * (CLOCK_REALTIME ns; Wireshark: 30 days of the capture time), else MALFORMED_implausible; so are extensions (flags 0x02) that run past the
 * tail or more than 64 TLVs. What is left must be an Ethernet header at least (14 bytes), else
 * MALFORMED_short. Never reads outside the tail, never writes.
 * @return OK with @p out->ns, @p out->cut_back (16 + extensions, + 4 with @p fcs), device, port,
 *         flags; or MALFORMED_short / MALFORMED_implausible.
 */
enum sbx_ts_in_result sbx_ts_in_metamako(const uint8_t *tail, uint32_t tail_len, uint32_t frame_len, bool fcs,
					 uint32_t window_s, uint64_t now_ns, struct sbx_ts_in_info *out);

/**
 * Remove @p cut bytes right after the 12 MAC bytes of the frame at @p frame (writable, at least
 * 12 + @p cut bytes): the MACs move forward by @p cut. @return the frame's new start (@p frame + cut).
 */
uint8_t *sbx_ts_in_cut_front(uint8_t *frame, uint32_t cut);

/**
 * The clock offset of one sender (their time minus ours, ns), kept by a worker per input port in
 * its slot (struct sbx_ingress_stats.ts): written by that worker only, read by mgmt. Zero it for a
 * new sender. sbx_ts_in_offset_add() keeps it.
 */
struct sbx_ts_in_offset {
	uint64_t frames;  /**< frames whose time was taken */
	int64_t last_ns;  /**< offset of the last one */
	int64_t min_ns;   /**< the least offset seen */
	int64_t max_ns;   /**< the largest offset seen */
	uint64_t seen_ns; /**< our CLOCK_REALTIME ns of the last one */
};

/** Count a frame of time @p their_ns received at our time @p our_ns (both UTC ns) in @p o. */
void sbx_ts_in_offset_add(struct sbx_ts_in_offset *o, uint64_t their_ns, uint64_t our_ns);

/** Fold @p b (another worker's view of the same port) into @p a: frames summed, min and max of both, the
 *  last of the one seen last. */
void sbx_ts_in_offset_merge(struct sbx_ts_in_offset *a, const struct sbx_ts_in_offset *b);

#endif
