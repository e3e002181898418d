/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timestamps on mirror copies: the Arista AVSP header, the Metamako trailer (wire formats and
 * their sources: include/spanbox/timestamp.h) and the worker's TSC -> CLOCK_REALTIME clock.
 */
#include <arpa/inet.h>
#include <string.h>

#include "spanbox/bytes.h"
#include "spanbox/timestamp.h"

#define NS_PER_S 1000000000ull

size_t sbx_ts_avsp64_write(uint8_t *p, uint64_t utc_ns)
{
	sbx_put16(p, SBX_ETHERTYPE_AVSP);
	sbx_put16(p + 2, SBX_AVSP_SUBTYPE_TS);
	sbx_put16(p + 4, SBX_AVSP_VER_TS64_UTC);
	sbx_put32(p + 6, (uint32_t)(utc_ns / NS_PER_S));
	sbx_put32(p + 10, (uint32_t)(utc_ns % NS_PER_S));
	return SBX_TS_AVSP64_LEN;
}

size_t sbx_ts_metamako_write(uint8_t *p, uint64_t utc_ns, uint16_t device, uint8_t port)
{
	sbx_put32(p, 0); /* original FCS: none kept (flag 0x01 clear) */
	sbx_put32(p + 4, (uint32_t)(utc_ns / NS_PER_S));
	sbx_put32(p + 8, (uint32_t)(utc_ns % NS_PER_S));
	p[12] = 0; /* flags: no original FCS, no extensions */
	sbx_put16(p + 13, device);
	p[15] = port;
	return SBX_TS_METAMAKO_LEN;
}

void sbx_ts_clock_init(struct sbx_ts_clock *c, uint64_t hz, uint64_t tsc, uint64_t real_ns, uint32_t resync_ms)
{
	c->tsc0 = tsc;
	c->ns0 = real_ns;
	c->mult = (uint64_t)((NS_PER_S << SBX_TS_CLOCK_SHIFT) / hz);
	c->resync_cycles = hz / 1000 * resync_ms;
	c->first_cycles = hz / 100; /* the first reading after 10 ms: the nominal rate runs only that long */
	c->last_ns = 0;
	c->resyncs = 0;
	c->last_err_ns = 0;
	c->max_err_ns = 0;
}

int64_t sbx_ts_clock_resync(struct sbx_ts_clock *c, uint64_t tsc, uint64_t real_ns)
{
	int64_t err = (int64_t)(sbx_ts_clock_ns(c, tsc) - real_ns);
	uint64_t dt = tsc - c->tsc0, dn = real_ns - c->ns0;
	uint64_t a = err < 0 ? (uint64_t)-err : (uint64_t)err;

	/* the rate over the interval: ns per cycle, when the interval is long enough (>= 1 ms) for
	 * the jitter of one reading (~100 ns) to matter little, and CLOCK_REALTIME went forward */
	if (real_ns > c->ns0 && dn >= 1000000u && dt != 0)
		c->mult = (uint64_t)(((unsigned __int128)dn << SBX_TS_CLOCK_SHIFT) / dt);
	c->tsc0 = tsc;
	c->ns0 = real_ns;
	c->resyncs++;
	c->last_err_ns = err;
	if (c->resyncs > 1 && a > c->max_err_ns) /* the first interval ran on the nominal rate */
		c->max_err_ns = a;
	return err;
}
