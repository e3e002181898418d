/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file timestamp.h
 * Timestamps on mirror copies (docs/CONFIG.md "mirrors" `timestamp`, issue #26): the two formats
 * tools read, written into (and read back from) caller buffers, and the worker's clock that gives
 * them, TSC cycles converted to CLOCK_REALTIME (UTC) ns. No mbufs, no DPDK runtime: the worker and
 * the unit test share this code.
 *
 * Sources of the wire formats (Wireshark's dissectors, which tshark uses to decode them):
 *  - Arista timestamp header, AVSP (epan/dissectors/packet-avsp.c, "Arista Vendor Specific
 *    ethertype Protocol"): inserted after the source MAC, it is EtherType 0xD28B (assigned to
 *    Arista on 12 May 2016), a 16-bit subtype (0x0001: timestamp), a 16-bit version (0x0010:
 *    64-bit TAI, 0x0110: 64-bit UTC, 0x0020 / 0x0120: 48-bit TAI / UTC) and the time in IEEE 1588
 *    time-of-day format, seconds (32 bits in the 64-bit format) then nanoseconds (32 bits); the
 *    frame's own EtherType follows. We write the 64-bit UTC version (0x0110): our clock is UTC.
 *  - Metamako trailer (epan/dissectors/packet-metamako.c): appended at the end of the frame, in
 *    front of the FCS: original FCS (32 bits), [TLV extensions, flagged], seconds (32), nanoseconds
 *    (32), flags (8: 0x01 original FCS valid, 0x02 extensions present), source device id (16),
 *    source port (8). We write no extensions and flags 0 (no original FCS: the NIC removed it).
 *    Wireshark's heuristic (`metamako_eth`, off by default) takes a trailer whose seconds are
 *    > 3600, nanoseconds < 1e9 and within 30 days of the capture's own time.
 * All fields in network byte order.
 */
#ifndef SPANBOX_TIMESTAMP_H
#define SPANBOX_TIMESTAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SBX_ETHERTYPE_AVSP 0xD28B     /**< Arista vendor-specific EtherType (AVSP) */
#define SBX_AVSP_SUBTYPE_TS 0x0001    /**< AVSP subtype: timestamp L2 header */
#define SBX_AVSP_VER_TS64_TAI 0x0010  /**< AVSP timestamp version: 64-bit, TAI */
#define SBX_AVSP_VER_TS64_UTC 0x0110  /**< AVSP timestamp version: 64-bit, UTC (what we write) */
#define SBX_TS_AVSP64_LEN 14          /**< bytes the 64-bit AVSP header inserts after the source MAC */
#define SBX_TS_METAMAKO_LEN 16        /**< bytes of a Metamako trailer without extensions */
#define SBX_TS_RESYNC_MS 100          /**< period of sbx_ts_clock_resync() in the worker, ms */

/** Timestamp format of a session's copies (sbx_mirror_cfg.ts_format). */
enum sbx_ts_format {
	SBX_TS_NONE = 0,     /**< no timestamp (the default) */
	SBX_TS_ARISTA64 = 1, /**< AVSP 64-bit UTC header inserted after the source MAC (14 B) */
	SBX_TS_METAMAKO = 2, /**< Metamako trailer appended (16 B) */
};

/**
 * Write the 64-bit AVSP timestamp header (SBX_TS_AVSP64_LEN bytes, version 0x0110 UTC) for
 * CLOCK_REALTIME time @p utc_ns at @p p: what goes between the source MAC and the frame's own
 * EtherType. @return SBX_TS_AVSP64_LEN.
 */
size_t sbx_ts_avsp64_write(uint8_t *p, uint64_t utc_ns);

/**
 * Write a Metamako trailer (SBX_TS_METAMAKO_LEN bytes) at @p p: original FCS 0, the time
 * @p utc_ns (CLOCK_REALTIME ns), flags 0, source device @p device, source port @p port.
 * @return SBX_TS_METAMAKO_LEN.
 */
size_t sbx_ts_metamako_write(uint8_t *p, uint64_t utc_ns, uint16_t device, uint8_t port);

#define SBX_TS_CLOCK_SHIFT 32 /**< fixed-point shift of sbx_ts_clock.mult */

/**
 * CLOCK_REALTIME (UTC) ns from TSC cycles, for one worker: ns = ns0 + (tsc - tsc0) * mult >> 32.
 * The pair (tsc0, ns0) is a reading of both clocks taken together; sbx_ts_clock_resync() (every
 * SBX_TS_RESYNC_MS in the worker) takes a new one, measures the rate of the TSC against
 * CLOCK_REALTIME over the interval since the last (DPDK's rte_get_tsc_hz() may be off by up to
 * 5 MHz: it is rounded to 10 MHz), and records how far the conversion was from CLOCK_REALTIME
 * then: the error a timestamp can have. sbx_ts_clock_mono() never goes back (a resync that finds
 * the conversion ahead holds the time until CLOCK_REALTIME catches up).
 */
struct sbx_ts_clock {
	uint64_t tsc0;        /**< TSC of the last reading */
	uint64_t ns0;         /**< CLOCK_REALTIME ns of the last reading */
	uint64_t mult;        /**< ns per cycle << SBX_TS_CLOCK_SHIFT */
	uint64_t resync_cycles; /**< cycles between two readings (the worker's period) */
	uint64_t first_cycles; /**< cycles to the first reading after init (10 ms: until then the
				    nominal rate converts) */
	uint64_t last_ns;     /**< the last time sbx_ts_clock_mono() gave */
	uint64_t resyncs;     /**< readings taken since init */
	int64_t last_err_ns;  /**< conversion - CLOCK_REALTIME at the last reading, ns */
	uint64_t max_err_ns;  /**< largest |error| of the readings since init but the first (which
				   measures the nominal rate, not the clock as it runs), ns */
};

/**
 * Start clock @p c from one reading (@p tsc, @p real_ns) and the nominal TSC rate @p hz (> 0),
 * re-read every @p resync_ms ms.
 */
void sbx_ts_clock_init(struct sbx_ts_clock *c, uint64_t hz, uint64_t tsc, uint64_t real_ns, uint32_t resync_ms);

/**
 * A new reading (@p tsc, @p real_ns), @p tsc after the last one: the error of the conversion at
 * @p tsc is recorded (last_err_ns, max_err_ns), the rate measured over the interval since the last
 * reading (when it is at least 1 ms: else the rate is kept), and the reading becomes the base.
 * @return the error, ns (conversion - CLOCK_REALTIME).
 */
int64_t sbx_ts_clock_resync(struct sbx_ts_clock *c, uint64_t tsc, uint64_t real_ns);

/** The conversion of @p tsc (not before c->tsc0) to CLOCK_REALTIME ns; no state changes. */
static inline uint64_t sbx_ts_clock_ns(const struct sbx_ts_clock *c, uint64_t tsc)
{
	return c->ns0 + (uint64_t)(((unsigned __int128)(tsc - c->tsc0) * c->mult) >> SBX_TS_CLOCK_SHIFT);
}

/** sbx_ts_clock_ns() of @p tsc, never less than the last value it gave (monotonic). */
static inline uint64_t sbx_ts_clock_mono(struct sbx_ts_clock *c, uint64_t tsc)
{
	uint64_t ns = sbx_ts_clock_ns(c, tsc);

	if (ns < c->last_ns)
		ns = c->last_ns;
	c->last_ns = ns;
	return ns;
}

/** @return true when clock @p c wants a new reading at @p tsc (c->resync_cycles since the last). */
static inline bool sbx_ts_clock_due(const struct sbx_ts_clock *c, uint64_t tsc)
{
	return tsc - c->tsc0 >= (c->resyncs != 0 ? c->resync_cycles : c->first_cycles);
}

#endif
