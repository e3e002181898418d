/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Microbursts, the primary's side (issue #26; shared/microburst.c has the arithmetic): every main
 * loop (about 1 ms) read the workers' rings of finished windows, sum them by port and window,
 * and make the windows final SBX_MB_LAG_US after their end: utilisation of the port's speed
 * (ports[].speed_mbps, else the link speed rte_eth_link_get_nowait() gave the last refresh; a pcap
 * file port has none), histogram, the last second's peak and average (shm->microburst[p]), and a
 * `microburst` event per burst, one per port and second at most.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "primary.h"

static struct sbx_mb_agg agg[SBX_MAX_PORTS];
static uint64_t tail[SBX_MAX_WORKERS][SBX_MAX_PORTS];
static uint64_t lag;
static bool on;

struct add_ctx {
	struct sbx_mb_agg *a;
	struct sbx_mb_port_shm *out;
};

struct event_ctx {
	struct sbx_primary *p;
	uint16_t port;
};

static void add_entry(void *ctx, const struct sbx_mb_entry *e)
{
	struct add_ctx *c = ctx;

	sbx_mb_agg_add(c->a, c->out, e);
}

static void on_burst(void *ctx, unsigned int dir, uint64_t start_ns, uint32_t peak_ppm, uint32_t windows)
{
	const struct event_ctx *c = ctx;
	time_t t = (time_t)(start_ns / 1000000000u);
	char when[40];
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	/* "p0 rx start 2026-12-02T04:31:07.123456Z peak 96.3% windows 3" (detail: 103 chars at most) */
	sbx_event(c->p, "microburst", -1, getpid(), "%s %s start %s.%06uZ peak %.1f%% windows %u",
		  c->p->cfg->ports[c->port].name, dir == SBX_MB_RX ? "rx" : "tx", when,
		  (unsigned int)(start_ns / 1000 % 1000000), peak_ppm / 10000.0, windows);
}

void sbx_microburst_init(struct sbx_primary *p)
{
	const struct sbx_config *cfg = p->cfg;
	uint64_t tsc = rte_rdtsc(), rt = sbx_realtime_ns();

	on = cfg->mb_enabled;
	if (!on)
		return;
	lag = sbx_mb_lag_windows(cfg->mb_window_us);
	for (uint16_t i = 0; i < cfg->nb_ports; i++)
		sbx_mb_agg_init(&agg[i], cfg->mb_window_us, cfg->mb_threshold_pct, p->shm->tsc_hz, tsc, rt);
	for (unsigned int w = 0; w < cfg->nb_workers; w++)
		for (uint16_t i = 0; i < cfg->nb_ports; i++)
			tail[w][i] = __atomic_load_n(&sbx_shm_mb_ring(p->shm, w, i)->head, __ATOMIC_ACQUIRE);
}

void sbx_microburst_poll(struct sbx_primary *p)
{
	const struct sbx_config *cfg = p->cfg;
	uint64_t now_idx, upto;

	if (!on)
		return;
	for (uint16_t i = 0; i < cfg->nb_ports; i++) {
		struct add_ctx c = {&agg[i], &p->shm->microburst[i]};

		for (unsigned int w = 0; w < cfg->nb_workers; w++)
			sbx_mb_ring_read(sbx_shm_mb_ring(p->shm, w, i), &tail[w][i], &c.out->lost_windows, add_entry, &c);
	}
	now_idx = rte_rdtsc() / agg[0].win_cycles;
	if (now_idx <= lag + agg[0].done)
		return;
	upto = now_idx - lag;
	for (uint16_t i = 0; i < cfg->nb_ports; i++) {
		const struct sbx_port_shm *ps = &p->shm->ports[i];
		struct sbx_mb_port_shm *out = &p->shm->microburst[i];
		struct event_ctx ec = {p, i};
		uint32_t speed = cfg->ports[i].speed_mbps;

		if (speed == 0 && ps->link_up && ps->link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
			speed = ps->link_speed;
		out->speed_mbps = speed;
		out->speed_configured = cfg->ports[i].speed_mbps != 0;
		sbx_mb_agg_finish(&agg[i], out, upto, sbx_mb_capacity(speed, cfg->mb_window_us), on_burst, &ec);
	}
}
