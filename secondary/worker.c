/* SPDX-License-Identifier: BSD-3-Clause */
/* The forwarding loop of a worker: zero copy, own TX queue per port, idle back-off. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_pause.h>
#include <rte_rcu_qsbr.h>

#include "chain.h"
#include "worker.h"

/*
 * Take the active runtime tables: cross-connect peers and mirror sessions (docs/RUNTIME_TABLES.md).
 * Called at start and whenever tables_gen changed, between two bursts: nothing is buffered then
 * but mirror copies, which are sent first. Building filters costs 0.2-0.3 ms for the
 * first, 0.03-0.06 ms for each next (measured, sbx_filter_load); the RX rings absorb it.
 */
static int tables_take(struct sbx_worker *wk, char *err, size_t errlen)
{
	uint64_t gen = __atomic_load_n(&wk->shm->tables_gen, __ATOMIC_ACQUIRE);
	const struct sbx_tables *t = &wk->shm->tables[gen & 1];
	char ierr[160];
	int rc;

	sbx_mirror_flush(&wk->mirror);
	sbx_mirror_teardown(&wk->mirror);
	sbx_config_peer_map(&t->cfg, wk->peer);
	rc = sbx_mirror_setup(&wk->mirror, wk->shm, t, wk->id, err, errlen);
	if (rc != 0)
		sbx_mirror_teardown(&wk->mirror); /* forward on, mirror nothing */
	wk->mirror.mb = &wk->mb; /* copies sent count in the microburst windows */
	/* ingress stages: a dedup table it cannot allocate turns dedup off, the rest runs */
	wk->ingress.src = sbx_shm_senders(wk->shm, wk->id);
	wk->ingress.nb_src = wk->shm->layout.senders_per_worker;
	if (sbx_ingress_setup(&wk->ingress, t, &wk->slot->stats, ierr, sizeof(ierr)) != 0 && rc == 0) {
		snprintf(err, errlen, "%s", ierr);
		rc = -1;
	}
	sbx_flows_live(&wk->flows, wk->shm, wk->id, &t->cfg.flows); /* flows is live: ports, timeouts */
	/* maps are live (issue #27): this generation's classifiers, found by name in this process */
	if (sbx_maps_stage_setup(&wk->maps, t, &wk->slot->stats, wk->id, ierr, sizeof(ierr)) != 0 && rc == 0) {
		snprintf(err, errlen, "%s", ierr);
		rc = -1;
	}
	wk->gen = gen;
	__atomic_store_n(&wk->slot->stats.tables_gen, gen, __ATOMIC_RELEASE);
	return rc;
}

/* tables_take() from the loop: an error is counted and logged, the worker forwards on. */
static void tables_retake(struct sbx_worker *wk)
{
	char err[256];

	if (tables_take(wk, err, sizeof(err)) != 0) {
		wk->slot->stats.tables_errors++;
		fprintf(stderr, "spanbox-worker %u: tables %llu: %s (mirroring nothing)\n", wk->id,
			(unsigned long long)wk->gen, err);
	}
}

int sbx_worker_setup(struct sbx_worker *wk, struct sbx_shm *shm, unsigned int id, char *err, size_t errlen)
{
	const struct sbx_config *cfg = &shm->cfg;
	uint16_t i;

	if (id >= cfg->nb_workers) {
		snprintf(err, errlen, "worker id %u: the config has %u workers", id, cfg->nb_workers);
		return -1;
	}
	wk->id = id;
	wk->shm = shm;
	wk->slot = sbx_shm_worker(shm, id);
	wk->nb_rxq = shm->placement[id].nb_rxq;
	wk->file_wait_cycles = rte_get_tsc_hz(); /* 1 s: the primary is writing, or it is gone */
	for (i = 0; i < cfg->nb_ports; i++) {
		const struct sbx_port_shm *ps = &shm->ports[i];

		/* as a NIC would: what the port receives is an Ethernet frame of at most mtu + 2 tags */
		wk->len_span[i] = (uint32_t)cfg->ports[i].mtu + SBX_FRAME_L2_OVERHEAD - SBX_FRAME_MIN;
		wk->txq[i] = (struct sbx_queue){ .port = i, .port_id = ps->port_id, .queue = sbx_fwd_txq(id) };
		if (cfg->ports[i].kind == SBX_PORT_PCAP_FILE) {
			wk->txq[i].ring = rte_ring_lookup(ps->tx_ring[wk->txq[i].queue]);
			if (wk->txq[i].ring == NULL) {
				snprintf(err, errlen, "port %s: ring %s not found", cfg->ports[i].name,
					 ps->tx_ring[wk->txq[i].queue]);
				return -1;
			}
		} else if (!rte_eth_dev_is_valid_port(ps->port_id)) {
			snprintf(err, errlen, "port %s: DPDK port %u not attached in this process",
				 cfg->ports[i].name, ps->port_id);
			return -1;
		}
	}
	/* online before reading tables_gen: the primary's next grace period waits for us */
	wk->rcu = rte_memzone_lookup(SBX_RCU_MEMZONE_NAME) ? rte_memzone_lookup(SBX_RCU_MEMZONE_NAME)->addr : NULL;
	if (wk->rcu == NULL || rte_rcu_qsbr_thread_register(wk->rcu, id) != 0) {
		snprintf(err, errlen, "memzone %s not found or worker %u not registrable", SBX_RCU_MEMZONE_NAME, id);
		return -1;
	}
	rte_rcu_qsbr_thread_online(wk->rcu, id);
	if (sbx_flows_setup(&wk->flows, shm, id, err, errlen) != 0)
		return -1;
	wk->pdump.gen = UINT64_MAX; /* the first loop takes the captures in progress */
	/* microbursts: windows of the shared TSC, as the primary counts them (microburst.h) */
	sbx_mb_worker_init(&wk->mb, cfg->mb_enabled ? sbx_shm_mb_ring(shm, id, 0) : NULL, cfg->nb_ports,
			   sbx_mb_window_cycles(shm->tsc_hz, cfg->mb_window_us), rte_rdtsc());
	if (tables_take(wk, err, errlen) != 0)
		return -1;
	for (i = 0; i < wk->nb_rxq; i++) {
		const struct sbx_rxq_cfg *rq = &shm->placement[id].rxq[i];
		const struct sbx_port_shm *ps = &shm->ports[rq->port];

		wk->rxq[i] = (struct sbx_queue){ .port = rq->port, .port_id = ps->port_id, .queue = rq->queue };
		if (cfg->ports[rq->port].kind == SBX_PORT_PCAP_FILE) {
			wk->rxq[i].ring = rte_ring_lookup(ps->rx_ring[rq->queue]);
			if (wk->rxq[i].ring == NULL) {
				snprintf(err, errlen, "port %s: ring %s not found", cfg->ports[rq->port].name,
					 ps->rx_ring[rq->queue]);
				return -1;
			}
		}
	}
	return 0;
}

/* True when @m is a frame the worker may pass on: a consistent chain of SBX_FRAME_MIN to
 * SBX_FRAME_MIN + @span bytes (the unsigned difference wraps for a runt: one compare for both). */
static inline bool frame_ok(const struct rte_mbuf *m, uint32_t span)
{
	return sbx_mbuf_chain_ok(m) && m->pkt_len - (uint32_t)SBX_FRAME_MIN <= span;
}

/*
 * Forward one received burst from input port @p in. The burst sits in the worker's slot of the
 * memzone (st->burst, st->held = n) until the first mbuf is freed or handed to a PMD: a worker
 * killed before that point loses nothing, the primary frees the burst (workers.c). After it, a
 * crash leaks at most this burst (it shows as "unexplained" in the pool audit).
 */
static inline void forward_burst(struct sbx_worker *wk, uint16_t in, struct rte_mbuf **pkts, uint16_t n)
{
	struct sbx_worker_stats *st = &wk->slot->stats;
	struct rte_mbuf *sorted[SBX_MAX_BURST], *bad[SBX_MAX_BURST], **good = pkts;
	const uint32_t span = wk->len_span[in];
	uint64_t bytes = 0, rx_bytes, bad_bytes = 0, chain = 0, runt = 0, big = 0;
	uint16_t i, ng = n, nb = 0, sent, ni = 0;
	int16_t out = wk->peer[in];
	struct rte_mbuf *ig_out[SBX_MAX_BURST], *ig_drop[SBX_MAX_BURST];
	uint8_t *fsel[2];
	bool rxm;

	for (i = 0; i < n; i++) {
		bytes += pkts[i]->pkt_len;
		if (unlikely(!frame_ok(pkts[i], span)))
			nb++;
	}
	if (unlikely(nb)) { /* rare: split the burst (no copy of pointers on the common path) */
		good = sorted;
		ng = nb = 0;
		for (i = 0; i < n; i++) {
			struct rte_mbuf *m = pkts[i];

			if (frame_ok(m, span)) {
				good[ng++] = m;
				continue;
			}
			bad[nb++] = m;
			if (!sbx_mbuf_chain_ok(m))
				chain++;
			else if (m->pkt_len < SBX_FRAME_MIN)
				runt++;
			else
				big++;
		}
	}
	rx_bytes = bytes;
	if (unlikely(nb)) {
		for (i = 0; i < nb; i++)
			bad_bytes += bad[i]->pkt_len;
		bytes -= bad_bytes;
	}
	/* the ingress stage (ingress.c): decap, strip, tag, dedup; what it drops is freed below */
	if (unlikely(sbx_ingress_active(&wk->ingress, in)) && ng) {
		ng = sbx_ingress_burst(&wk->ingress, in, good, ng, ig_out, ig_drop, &ni, rte_rdtsc(), &bytes);
		good = ig_out;
	}
	/* flow metering (flows.c): what the tools see, counted into this worker's flow table */
	if (unlikely(sbx_flows_meters(&wk->flows, in)) && ng)
		sbx_flows_burst(&wk->flows, in, good, ng, rte_rdtsc());
	/* flows.sessions (docs/FLOWS.md "Selected by sessions"): the mirror sessions and maps below mark
	 * the frames a selected one took, per direction (a port and direction metered whole by
	 * flows.ports is not marked: no frame metered twice); they are metered once, below */
	fsel[0] = fsel[1] = NULL;
	if (unlikely(sbx_flows_selects(&wk->flows)) && ng) {
		if (!sbx_flows_meters(&wk->flows, in)) {
			fsel[0] = wk->flows_taken[0];
			memset(fsel[0], 0, ng);
		}
		if (out >= 0 && !sbx_flows_meters_tx(&wk->flows, (uint16_t)out)) {
			fsel[1] = wk->flows_taken[1];
			memset(fsel[1], 0, ng);
		}
	}
	/* copies are made while the burst is still recoverable; they only read the frames */
	rxm = unlikely(sbx_mirror_watches(&wk->mirror, in, SBX_DIR_RX)) && ng;
	if (rxm)
		sbx_mirror_prepare_sel(&wk->mirror, in, SBX_DIR_RX, good, ng, wk->flows.mirror_mask, fsel[0]);
	if (unlikely(out >= 0 && sbx_mirror_watches(&wk->mirror, (uint16_t)out, SBX_DIR_TX)) && ng) {
		if (rxm) /* the frames the RX side just hashed (tool groups): hashed once */
			sbx_mirror_same_burst(&wk->mirror);
		sbx_mirror_prepare_sel(&wk->mirror, (uint16_t)out, SBX_DIR_TX, good, ng, wk->flows.mirror_mask, fsel[1]);
	}
	/* maps (maps_stage.c): the frames as they leave the ingress stages, classified, copied per map */
	if (unlikely(sbx_maps_stage_watches(&wk->maps, in, SBX_DIR_RX)) && ng) {
		sbx_maps_stage_burst(&wk->maps, in, SBX_DIR_RX, good, ng, wk->map_sets, &wk->map_any);
		sbx_mirror_prepare_maps(&wk->mirror, in, SBX_DIR_RX, good, ng, wk->map_sets, &wk->map_any,
					&wk->flows.map_mask, fsel[0]);
	}
	if (unlikely(out >= 0 && sbx_maps_stage_watches(&wk->maps, (uint16_t)out, SBX_DIR_TX)) && ng) {
		sbx_maps_stage_burst(&wk->maps, (uint16_t)out, SBX_DIR_TX, good, ng, wk->map_sets, &wk->map_any);
		sbx_mirror_prepare_maps(&wk->mirror, (uint16_t)out, SBX_DIR_TX, good, ng, wk->map_sets, &wk->map_any,
					&wk->flows.map_mask, fsel[1]);
	}
	if (unlikely(fsel[0] != NULL))
		sbx_flows_burst_dir(&wk->flows, in, SBX_FLOW_DIR_RX, good, ng, fsel[0], rte_rdtsc());
	/* flows, TX side: the frames about to be sent on out (metered before the PMD owns them; a
	 * frame the port then refuses is counted in its drop_pkts and was metered) */
	if (unlikely(fsel[1] != NULL))
		sbx_flows_burst_dir(&wk->flows, (uint16_t)out, SBX_FLOW_DIR_TX, good, ng, fsel[1], rte_rdtsc());
	else if (unlikely(out >= 0 && sbx_flows_meters_tx(&wk->flows, (uint16_t)out)) && ng)
		sbx_flows_burst_dir(&wk->flows, (uint16_t)out, SBX_FLOW_DIR_TX, good, ng, NULL, rte_rdtsc());
	/* from here on mbufs leave the burst: the primary must no longer free it after a crash */
	__atomic_store_n(&st->held, 0, __ATOMIC_RELEASE);
	st->port[in].rx_pkts += n;
	st->port[in].rx_bytes += rx_bytes;
	sbx_mb_add(&wk->mb, in, SBX_MB_RX, rx_bytes);
	if (unlikely(nb)) {
		st->bad_pkts += chain;
		st->port[in].runt += runt;
		st->port[in].oversize += big;
		st->port[in].drop_pkts += nb;
		st->port[in].drop_bytes += bad_bytes;
		rte_pktmbuf_free_bulk(bad, nb);
	}
	if (unlikely(ni)) /* counted by the stage */
		rte_pktmbuf_free_bulk(ig_drop, ni);
	if (ng == 0)
		return;
	if (unlikely(out < 0)) {
		st->port[in].drop_pkts += ng;
		st->port[in].drop_bytes += bytes;
		rte_pktmbuf_free_bulk(good, ng);
		return;
	}
	sent = sbx_q_tx_wait(&wk->txq[out], good, ng, wk->file_wait_cycles);
	if (unlikely(sbx_mirror_watches(&wk->mirror, (uint16_t)out, SBX_DIR_TX) ||
		     sbx_maps_stage_watches(&wk->maps, (uint16_t)out, SBX_DIR_TX)))
		sbx_mirror_commit_tx(&wk->mirror, (uint16_t)out, sent); /* refused frames: no copies */
	if (unlikely(sent < ng)) {
		uint64_t lost = 0;

		for (i = sent; i < ng; i++)
			lost += good[i]->pkt_len;
		st->port[out].drop_pkts += ng - sent;
		st->port[out].drop_bytes += lost;
		bytes -= lost;
		rte_pktmbuf_free_bulk(good + sent, ng - sent);
	}
	st->port[out].tx_pkts += sent;
	st->port[out].tx_bytes += bytes;
	sbx_mb_add(&wk->mb, (uint16_t)out, SBX_MB_TX, bytes);
}

bool sbx_primary_alive(const struct sbx_shm *shm)
{
	return __atomic_load_n(&shm->running, __ATOMIC_ACQUIRE) && (kill(shm->primary_pid, 0) == 0 || errno != ESRCH);
}

int sbx_worker_run(struct sbx_worker *wk)
{
	const struct sbx_config *cfg = &wk->shm->cfg;
	struct sbx_worker_stats *st = &wk->slot->stats;
	struct rte_mbuf **pkts = st->burst; /* in the memzone: recoverable by the primary */
	uint16_t burst = cfg->burst > SBX_MAX_BURST ? SBX_MAX_BURST : cfg->burst;
	struct timespec nap = { .tv_sec = cfg->idle_sleep_us / 1000000,
				.tv_nsec = (long)(cfg->idle_sleep_us % 1000000) * 1000 };
	/* heartbeat and primary check by time, not by loop count: a loop can take long under load */
	const uint64_t hb_cycles = rte_get_tsc_hz() / 100, check_cycles = rte_get_tsc_hz() / 10;
	uint64_t next_hb = 0, next_check = 0;
	uint32_t idle = 0;
	uint64_t loops = 0, t_prev, t_now;
	uint16_t i;

	st->heartbeat_ns = sbx_now_ns();
	wk->slot->state = SBX_W_RUNNING;
	t_prev = rte_rdtsc();
	while (!*wk->quit && !wk->slot->stop) {
		uint64_t got = 0;

		/* runtime tables: one load of a read-mostly line per loop, BEFORE any RX: after a nap
		 * offline the buffer our pointers lead into may have been rewritten (two changes) */
		/* captures of dpdk-dumpcap / dpdk-pdump (pdump.c): same line, same rule; first, before
		 * tables_retake() flushes mirror copies: no TX after our last quiescent state may run a
		 * callback of a capture whose client was told it ended */
		if (unlikely(__atomic_load_n(&wk->shm->pdump_gen, __ATOMIC_ACQUIRE) != wk->pdump.gen))
			sbx_pdump_sync(&wk->pdump, wk->shm);
		if (unlikely(__atomic_load_n(&wk->shm->tables_gen, __ATOMIC_ACQUIRE) != wk->gen))
			tables_retake(wk);

		for (i = 0; i < wk->nb_rxq; i++) {
			uint16_t n = sbx_q_rx(&wk->rxq[i], pkts, burst);

			if (n == 0)
				continue;
			__atomic_store_n(&st->held, n, __ATOMIC_RELEASE); /* see forward_burst() */
			if (unlikely(st->first_rx_ns == 0))
				st->first_rx_ns = sbx_realtime_ns();
			forward_burst(wk, wk->rxq[i].port, pkts, n);
			if (wk->mirror.nb)
				sbx_mirror_flush(&wk->mirror);
			got += n;
		}
		loops++;
		/* between two loops we hold no pointer we may not drop: a quiescent state */
		rte_rcu_qsbr_quiescent(wk->rcu, wk->id);
		/* one TSC read per loop (it costs ~1 cycle per frame at burst 32): a loop that received
		 * frames counts as busy since the end of the previous loop */
		t_now = rte_rdtsc();
		if (got) {
			st->busy_cycles += t_now - t_prev;
			st->busy_pkts += got;
			st->busy_loops++; /* (same cache line) */
		}
		t_prev = t_now;
		sbx_mb_tick(&wk->mb, t_now); /* a microburst window that ended is published */
		if (unlikely(wk->flows.ft != NULL))
			sbx_flows_loop(&wk->flows, t_now); /* idle flows leave without metered traffic too */
		if (unlikely(t_now >= next_hb)) {
			if (unlikely(wk->test_hang != NULL && *wk->test_hang))
				while (!*wk->quit)
					rte_pause(); /* hung: no heartbeat any more, CPU time advancing */
			next_hb = t_now + hb_cycles;
			/* outer fragments that waited too long, traffic or not (ingress.c) */
			sbx_ingress_tick(&wk->ingress, t_now);
			st->loops = loops;
			sbx_flows_publish(&wk->flows);
			st->heartbeat_ns = sbx_now_ns();
			if (t_now >= next_check) {
				next_check = t_now + check_cycles;
				sbx_ingress_age(&wk->ingress, sbx_realtime_ns()); /* idle tunnel senders */
				if (!sbx_primary_alive(wk->shm)) {
					sbx_pdump_teardown(&wk->pdump);
					rte_rcu_qsbr_thread_offline(wk->rcu, wk->id);
					return 1;
				}
			}
		}
		if (got) {
			idle = 0;
		} else if (++idle >= cfg->idle_polls && !cfg->busy_poll) {
			st->loops = loops;
			st->heartbeat_ns = sbx_now_ns();
			st->idle_sleeps++;
			/* asleep we read no tables: offline, so a change does not wait for our nap (the
			 * next loop checks the generation before it touches a frame) */
			rte_rcu_qsbr_thread_offline(wk->rcu, wk->id);
			nanosleep(&nap, NULL);
			rte_rcu_qsbr_thread_online(wk->rcu, wk->id);
			t_prev = rte_rdtsc(); /* the sleep is not busy time */
			sbx_mb_tick(&wk->mb, t_prev); /* the next frames are of the window after the nap */
		}
	}
	st->loops = loops;
	/* draining: RX stopped; forward TX is synchronous, mirror copies are flushed after each burst */
	wk->slot->state = SBX_W_DRAINING;
	/* our last quiescent state is behind us: the last copies are sent uncaptured, so no callback
	 * runs for a capture the primary may already have answered as ended */
	sbx_pdump_teardown(&wk->pdump);
	sbx_mirror_flush(&wk->mirror);
	sbx_mb_roll(&wk->mb, rte_rdtsc()); /* the last window's bytes */
	rte_rcu_qsbr_thread_offline(wk->rcu, wk->id);
	return 0;
}
