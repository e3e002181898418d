/* SPDX-License-Identifier: BSD-3-Clause */
/* The worker's flow metering stage (flows.h, docs/FLOWS.md). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_pause.h>
#include <rte_lcore.h>
#include <rte_ring_elem.h>

#include "clock.h"
#include "flows.h"

/* A record leaves the table: onto the ring, or counted lost (never a wait). */
static void emit(void *arg, const struct sbx_flow_record *rec)
{
	struct sbx_flows_worker *f = arg;

	if (likely(rte_ring_sp_enqueue_elem(f->ring, (void *)(uintptr_t)rec, sizeof(*rec)) == 0)) {
		f->st->flows_records_queued++;
		return;
	}
	/* the flush of a graceful stop may wait a little for the exporter to make room */
	while (unlikely(f->stop_deadline != 0) && rte_rdtsc() < f->stop_deadline) {
		rte_pause();
		if (rte_ring_sp_enqueue_elem(f->ring, (void *)(uintptr_t)rec, sizeof(*rec)) == 0) {
			f->st->flows_records_queued++;
			return;
		}
	}
	f->st->flows_lost_ring++;
}

/* TSC @p tsc as CLOCK_REALTIME ns (the flows' times: IPFIX flowStart/EndMilliseconds): the
 * worker's re-measured clock (clock.h), as the mirror engine's timestamps. */
static inline uint64_t tsc_ns(struct sbx_flows_worker *f, uint64_t tsc)
{
	return sbx_worker_clock_ns(&f->clk, tsc);
}

/* Expiry budget (issue #28, bench/flows.sh): at most the ring's free room, so that a mass expiry
 * (1 M flows going idle at once) waits in the table while the exporter drains, instead of being
 * lost on a full ring (52,392 of 1,000,000 records were, with a fixed budget). */
static inline unsigned int expire_budget(const struct sbx_flows_worker *f, unsigned int budget)
{
	unsigned int room = rte_ring_free_count(f->ring);

	return room < budget ? room : budget;
}

int sbx_flows_setup(struct sbx_flows_worker *f, struct sbx_shm *shm, unsigned int id, char *err, size_t errlen)
{
	const struct sbx_flows_cfg *c = &sbx_shm_cfg(shm)->flows; /* the active tables': flows is live */
	struct sbx_worker_stats *st = &sbx_shm_worker(shm, id)->stats;
	struct sbx_flowtable *old = st->flows_table;
	struct sbx_flowtable_params p = {0};
	char ring[RTE_RING_NAMESIZE], name[RTE_HASH_NAMESIZE];

	memset(f, 0, sizeof(*f));
	f->st = st;
	if (old != NULL) {
		/* the predecessor was killed with flows in its table: they are lost, count them */
		struct sbx_flowtable_stats os;

		sbx_flowtable_stats(old, &os);
		st->flows_lost_killed += os.active;
		st->flows_table = NULL;
		sbx_flowtable_free(old);
	}
	st->flows_active = 0;
	if (!sbx_flows_cfg_meters(c))
		return 0;
	snprintf(ring, sizeof(ring), SBX_FLOWS_RING_FMT, id);
	f->ring = rte_ring_lookup(ring);
	if (f->ring == NULL) {
		snprintf(err, errlen, "flows: ring %s not found", ring);
		return -1;
	}
	f->base = (struct sbx_flowtable_stats){
		.frames = st->flows_frames, .non_ip = st->flows_non_ip, .flows = st->flows_created,
		.expired_idle = st->flows_expired_idle, .expired_active = st->flows_expired_active,
		.expired_end = st->flows_expired_end, .expired_forced = st->flows_expired_forced,
		.evicted_full = st->flows_evicted_full,
	};
	f->tsc_hz = rte_get_tsc_hz();
	sbx_worker_clock_start(&f->clk);
	/* unique per process: a killed predecessor's table may still hold its name until freed */
	snprintf(name, sizeof(name), "ft%u_%d", id, (int)getpid());
	p.name = name;
	p.capacity = c->capacity;
	p.active_ns = (uint64_t)c->active_s * 1000000000ull;
	p.idle_ns = (uint64_t)c->idle_s * 1000000000ull;
	p.socket_id = (int)rte_socket_id();
	p.emit = emit;
	p.emit_arg = f;
	p.biflow = c->biflow;
	f->ft = sbx_flowtable_create(&p);
	if (f->ft == NULL) {
		snprintf(err, errlen, "flows: a table of %u flows: %s (flows.flows_per_worker; eal.socket_mem_mb)",
			 c->capacity, rte_strerror(rte_errno));
		return -1;
	}
	__atomic_store_n(&st->flows_table, f->ft, __ATOMIC_RELEASE);
	f->port_mask = c->port_mask;
	f->tx_mask = c->tx_mask;
	f->map_mask = c->map_mask;
	f->mirror_mask = c->mirror_mask;
	return 0;
}

void sbx_flows_burst(struct sbx_flows_worker *f, uint16_t port, struct rte_mbuf *const *pkts, uint16_t n,
		     uint64_t tsc)
{
	sbx_flows_burst_dir(f, port, SBX_FLOW_DIR_RX, pkts, n, NULL, tsc);
}

void sbx_flows_burst_dir(struct sbx_flows_worker *f, uint16_t port, uint8_t dir, struct rte_mbuf *const *pkts,
			 uint16_t n, const uint8_t *taken, uint64_t tsc)
{
	const uint8_t *frames[SBX_MAX_BURST];
	uint32_t lens[SBX_MAX_BURST];
	uint64_t now;
	uint16_t i, m = 0;

	if (f->ft == NULL)
		return;
	for (i = 0; i < n; i++) {
		if (taken != NULL && !taken[i])
			continue;
		frames[m] = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
		lens[m++] = pkts[i]->data_len; /* the first segment holds the headers a key needs */
	}
	if (m == 0)
		return;
	n = m;
	now = tsc_ns(f, tsc);
	sbx_flowtable_meter_dir(f->ft, frames, lens, n, port, dir, now);
	/* 1 slot per 4 frames (8 for a full burst of 32): a stream of small bursts walks no faster
	 * per frame than full ones (bench/flows.sh) */
	sbx_flowtable_expire(f->ft, now, expire_budget(f, RTE_MIN((n + 3u) / 4u, (unsigned int)SBX_FLOWS_EXPIRE_BUSY)));
	f->walked = true;
}

void sbx_flows_loop(struct sbx_flows_worker *f, uint64_t tsc)
{
	/* at most one idle walk per SBX_FLOWS_IDLE_WALK_US: a busy-polling worker runs millions of
	 * empty loops a second, each walking 64 slots (a cache miss each) was 68 % of its samples
	 * with the input slower than it (bench/flows.sh), and delayed the next poll */
	if (!f->walked && tsc >= f->next_idle_walk) {
		f->next_idle_walk = tsc + f->tsc_hz / (1000000 / SBX_FLOWS_IDLE_WALK_US);
		sbx_flowtable_expire(f->ft, tsc_ns(f, tsc), expire_budget(f, SBX_FLOWS_EXPIRE_IDLE));
	}
	f->walked = false;
}

void sbx_flows_publish(struct sbx_flows_worker *f)
{
	struct sbx_worker_stats *st = f->st;
	struct sbx_flowtable_stats s;

	if (f->ft == NULL)
		return;
	sbx_flowtable_stats(f->ft, &s);
	st->flows_frames = f->base.frames + s.frames;
	st->flows_non_ip = f->base.non_ip + s.non_ip;
	st->flows_created = f->base.flows + s.flows;
	st->flows_expired_idle = f->base.expired_idle + s.expired_idle;
	st->flows_expired_active = f->base.expired_active + s.expired_active;
	st->flows_expired_end = f->base.expired_end + s.expired_end;
	st->flows_expired_forced = f->base.expired_forced + s.expired_forced;
	st->flows_evicted_full = f->base.evicted_full + s.evicted_full;
	st->flows_active = s.active;
}

void sbx_flows_stop(struct sbx_flows_worker *f, bool graceful)
{
	if (f->ft == NULL)
		return;
	f->stop_deadline = rte_rdtsc() + f->tsc_hz / 2; /* a full ring: up to 0.5 s for the exporter */
	if (graceful)
		sbx_flowtable_flush(f->ft, tsc_ns(f, rte_rdtsc()), SBX_FLOW_END_FORCED);
	sbx_flows_publish(f);
	f->st->flows_active = 0; /* graceful: all exported; else the primary is gone (nothing reads them) */
	__atomic_store_n(&f->st->flows_table, NULL, __ATOMIC_RELEASE);
	sbx_flowtable_free(f->ft);
	f->ft = NULL;
	f->port_mask = 0;
	f->tx_mask = 0;
	sbx_mapset_zero(&f->map_mask);
	f->mirror_mask = 0;
}

/* ---- live changes of flows (docs/RUNTIME_TABLES.md "Flows") ---- */

void sbx_flows_live(struct sbx_flows_worker *f, struct sbx_shm *shm, unsigned int id, const struct sbx_flows_cfg *c)
{
	char err[256];

	if (sbx_flows_cfg_meters(c) && f->ft == NULL && sbx_flows_setup(f, shm, id, err, sizeof(err)) != 0) {
		f->st->tables_errors++;
		fprintf(stderr, "spanbox-worker %u: %s (metering nothing)\n", id, err);
	}
	if (f->ft == NULL)
		return;
	sbx_flowtable_set_timeouts(f->ft, (uint64_t)c->active_s * 1000000000ull, (uint64_t)c->idle_s * 1000000000ull);
	/* biflow switched: the flows leave first (forced), onto the ring or counted lost */
	sbx_flowtable_set_biflow(f->ft, tsc_ns(f, rte_rdtsc()), c->biflow);
	f->port_mask = c->enabled ? c->port_mask : 0; /* off: the table's flows leave by their timeouts */
	f->tx_mask = c->enabled ? c->tx_mask : 0;
	f->map_mask = c->map_mask;
	if (!c->enabled)
		sbx_mapset_zero(&f->map_mask);
	f->mirror_mask = c->enabled ? c->mirror_mask : 0;
}
