/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spanbox's own commands on DPDK's telemetry socket (dpdk-telemetry.py -f PREFIX, the
 * dpdk-telemetry-exporter, telegraf's DPDK plugin), beside DPDK's /ethdev/... ones: the
 * appliance's state from the memzone (docs/CAPTURE.md "Telemetry"). The EAL's telemetry thread
 * calls them; they only read the memzone (values of one refresh may mix, as in mgmt's /status).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_telemetry.h>

#include "spanbox/counters.h"
#include "spanbox/pdump_stats.h"
#include "primary.h"

#ifndef SBX_VERSION
#define SBX_VERSION "0.0.0"
#endif

static struct sbx_primary *tp;

/* A new dict container, NULL when out of memory. */
static struct rte_tel_data *dict(void)
{
	struct rte_tel_data *d = rte_tel_data_alloc();

	if (d != NULL)
		rte_tel_data_start_dict(d);
	return d;
}

static void add_container(struct rte_tel_data *to, const char *name, struct rte_tel_data *c)
{
	if (c != NULL && rte_tel_data_add_dict_container(to, name, c, 0) != 0)
		rte_tel_data_free(c);
}

/* Sum of every worker's per-port counters of port @p i. */
static void port_sum(uint16_t i, struct sbx_port_counters *sum)
{
	unsigned int w;

	memset(sum, 0, sizeof(*sum));
	for (w = 0; w < tp->cfg->nb_workers; w++)
		sbx_port_counters_add(sum, &sbx_shm_worker(tp->shm, w)->stats.port[i]);
}

/* One port's sums of librte_pdump's statistics memzone (spanbox/pdump_stats.h). */
static void pdump_sum(uint16_t port_id, struct rte_pdump_stats *sum)
{
	const struct sbx_pdump_stats_mz *st = sbx_pdump_stats_lookup();
	unsigned int q;

	memset(sum, 0, sizeof(*sum));
	if (st == NULL || port_id >= RTE_MAX_ETHPORTS)
		return;
	for (q = 0; q < RTE_MAX_QUEUES_PER_PORT; q++) {
		const struct rte_pdump_stats *a = &st->rx[port_id][q], *b = &st->tx[port_id][q];

		sum->accepted += __atomic_load_n(&a->accepted, __ATOMIC_RELAXED) + __atomic_load_n(&b->accepted, __ATOMIC_RELAXED);
		sum->filtered += __atomic_load_n(&a->filtered, __ATOMIC_RELAXED) + __atomic_load_n(&b->filtered, __ATOMIC_RELAXED);
		sum->nombuf += __atomic_load_n(&a->nombuf, __ATOMIC_RELAXED) + __atomic_load_n(&b->nombuf, __ATOMIC_RELAXED);
		sum->ringfull += __atomic_load_n(&a->ringfull, __ATOMIC_RELAXED) + __atomic_load_n(&b->ringfull, __ATOMIC_RELAXED);
	}
}

static int cmd_status(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct sbx_shm *shm = tp->shm;
	uint64_t up_ns = sbx_realtime_ns() - shm->start_realtime_ns;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "version", SBX_VERSION);
	rte_tel_data_add_dict_string(d, "file_prefix", tp->cfg->file_prefix);
	rte_tel_data_add_dict_int(d, "primary_pid", shm->primary_pid);
	rte_tel_data_add_dict_int(d, "running", (int)__atomic_load_n(&shm->running, __ATOMIC_ACQUIRE));
	rte_tel_data_add_dict_u64(d, "uptime_s", up_ns / 1000000000ULL);
	rte_tel_data_add_dict_int(d, "ports", tp->cfg->nb_ports);
	rte_tel_data_add_dict_int(d, "workers", (int)tp->cfg->nb_workers);
	rte_tel_data_add_dict_int(d, "workers_running", (int)sbx_workers_count(tp, SBX_W_RUNNING));
	rte_tel_data_add_dict_int(d, "pools", (int)shm->nb_pools);
	rte_tel_data_add_dict_int(d, "mirrors", sbx_shm_cfg(shm)->nb_mirrors);
	rte_tel_data_add_dict_u64(d, "tables_gen", __atomic_load_n(&shm->tables_gen, __ATOMIC_ACQUIRE));
	rte_tel_data_add_dict_int(d, "warnings", (int)shm->nb_warnings);
	rte_tel_data_add_dict_int(d, "pdump_captures", (int)sbx_pdump_active(shm));
	rte_tel_data_add_dict_u64(d, "pdump_enables", shm->pdump_stats.enables);
	rte_tel_data_add_dict_u64(d, "pdump_disables", shm->pdump_stats.disables);
	rte_tel_data_add_dict_u64(d, "pdump_refused", shm->pdump_stats.refused);
	rte_tel_data_add_dict_u64(d, "pdump_reaped", shm->pdump_stats.reaped);
	return 0;
}

static int cmd_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint16_t i;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (i = 0; i < tp->cfg->nb_ports; i++) {
		const struct sbx_port_cfg *pc = &tp->cfg->ports[i];
		const struct sbx_port_shm *ps = &tp->shm->ports[i];
		struct rte_tel_data *c = dict();
		struct sbx_port_counters sum;

		if (c == NULL)
			return -1;
		rte_tel_data_add_dict_string(c, "devargs", pc->devargs);
		rte_tel_data_add_dict_string(c, "kind", pc->kind == SBX_PORT_PCAP_FILE ? "bridged" : "ethdev");
		/* the DPDK port id dpdk-dumpcap -i and /ethdev/stats,N take (-1: no ethdev) */
		rte_tel_data_add_dict_int(c, "port_id", pc->kind == SBX_PORT_PCAP_FILE ? -1 : ps->port_id);
		rte_tel_data_add_dict_int(c, "link_up", (int)ps->link_up);
		rte_tel_data_add_dict_u64(c, "link_speed", ps->link_speed);
#define ETH_(field, json, ...) rte_tel_data_add_dict_u64(c, "port_" #field, ps->field);
		SBX_FOREACH_ETHDEV_COUNTER(ETH_)
#undef ETH_
		if (pc->kind != SBX_PORT_PCAP_FILE) { /* copies for DPDK's capture tools (reset at each enable) */
			struct rte_pdump_stats ps_sum;

			pdump_sum(ps->port_id, &ps_sum);
			rte_tel_data_add_dict_u64(c, "pdump_accepted", ps_sum.accepted);
			rte_tel_data_add_dict_u64(c, "pdump_filtered", ps_sum.filtered);
			rte_tel_data_add_dict_u64(c, "pdump_nombuf", ps_sum.nombuf);
			rte_tel_data_add_dict_u64(c, "pdump_ringfull", ps_sum.ringfull);
		}
		port_sum(i, &sum);
#define WRK_(field, json, ...) rte_tel_data_add_dict_u64(c, "workers_" json, sum.field);
		SBX_FOREACH_PORT_COUNTER(WRK_)
#undef WRK_
		add_container(d, pc->name, c);
	}
	return 0;
}

static int cmd_workers(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned int w;
	uint64_t now = sbx_now_ns();

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (w = 0; w < tp->cfg->nb_workers; w++) {
		const struct sbx_worker_shm *ws = sbx_shm_worker(tp->shm, w);
		struct rte_tel_data *c = dict();
		struct sbx_port_counters sum;
		char key[16];
		uint16_t i;

		if (c == NULL)
			return -1;
		memset(&sum, 0, sizeof(sum));
		for (i = 0; i < tp->cfg->nb_ports; i++)
			sbx_port_counters_add(&sum, &ws->stats.port[i]);
		rte_tel_data_add_dict_string(c, "state", sbx_worker_state_name(ws->state));
		rte_tel_data_add_dict_int(c, "pid", ws->pid);
		rte_tel_data_add_dict_int(c, "lcore", (int)ws->lcore_id);
		rte_tel_data_add_dict_int(c, "restarts", (int)ws->restarts);
		rte_tel_data_add_dict_int(c, "crashes", (int)ws->crashes);
		rte_tel_data_add_dict_u64(c, "heartbeat_age_ms",
					  ws->stats.heartbeat_ns && now > ws->stats.heartbeat_ns ?
						  (now - ws->stats.heartbeat_ns) / 1000000ULL : 0);
		rte_tel_data_add_dict_u64(c, "tables_gen", ws->stats.tables_gen);
#define WC_(field, json, ...) rte_tel_data_add_dict_u64(c, json, ws->stats.field);
		SBX_FOREACH_WORKER_COUNTER(WC_)
#undef WC_
#define PC_(field, json, ...) rte_tel_data_add_dict_u64(c, json, sum.field);
		SBX_FOREACH_PORT_COUNTER(PC_)
#undef PC_
		snprintf(key, sizeof(key), "%u", w);
		add_container(d, key, c);
	}
	return 0;
}

static int cmd_mirrors(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct sbx_tables *t = sbx_shm_tables(tp->shm);
	uint16_t i;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (i = 0; i < t->cfg.nb_mirrors && i < SBX_MAX_MIRRORS; i++) {
		const struct sbx_mirror_cfg *m = &t->cfg.mirrors[i];
		struct rte_tel_data *c = dict();
		struct sbx_mirror_counters sum;
		unsigned int w;
		char key[16];

		if (c == NULL)
			return -1;
		memset(&sum, 0, sizeof(sum));
		for (w = 0; w < tp->cfg->nb_workers; w++)
			sbx_mirror_counters_add(&sum, &sbx_shm_worker(tp->shm, w)->stats.mirror[t->cset[i]]);
		rte_tel_data_add_dict_string(c, "name", m->name);
		if (m->dst_kind == SBX_DST_GROUP && m->dst_group < t->cfg.nb_tool_groups)
			rte_tel_data_add_dict_string(c, "destination_group", t->cfg.tool_groups[m->dst_group].name);
		else if (m->dst_kind == SBX_DST_RECORDER)
			rte_tel_data_add_dict_string(c, "destination", "recorder");
		else
			rte_tel_data_add_dict_string(c, "destination",
						     m->dst_port < t->cfg.nb_ports ? t->cfg.ports[m->dst_port].name : "");
		rte_tel_data_add_dict_string(c, "filter", m->filter);
		rte_tel_data_add_dict_u64(c, "snaplen", m->snaplen);
		rte_tel_data_add_dict_u64(c, "sample", m->sample);
#define MC_(field, json, ...) rte_tel_data_add_dict_u64(c, json, sum.field);
		SBX_FOREACH_MIRROR_COUNTER(MC_)
#undef MC_
		snprintf(key, sizeof(key), "%u", m->id);
		add_container(d, key, c);
	}
	return 0;
}

static int cmd_pools(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint32_t i;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (i = 0; i < tp->shm->nb_pools && i < SBX_MAX_POOLS; i++) {
		const struct sbx_pool_shm *ps = &tp->shm->pools[i];
		struct rte_tel_data *c = dict();

		if (c == NULL)
			return -1;
		rte_tel_data_add_dict_int(c, "socket", ps->socket_id);
		rte_tel_data_add_dict_u64(c, "size", ps->size);
		rte_tel_data_add_dict_u64(c, "in_use", ps->in_use);
		rte_tel_data_add_dict_u64(c, "available", ps->avail);
		rte_tel_data_add_dict_u64(c, "rx_held", ps->rx_held);
		rte_tel_data_add_dict_u64(c, "cache_size", ps->cache_size);
		rte_tel_data_add_dict_u64(c, "data_room", ps->data_room);
		rte_tel_data_add_dict_u64(c, "bytes", ps->bytes);
		if (ps->indirect.name[0]) { /* its indirect-mbuf pool (shared mirror copies) */
			rte_tel_data_add_dict_string(c, "indirect_name", ps->indirect.name);
			rte_tel_data_add_dict_u64(c, "indirect_size", ps->indirect.size);
			rte_tel_data_add_dict_u64(c, "indirect_in_use", ps->indirect.in_use);
			rte_tel_data_add_dict_u64(c, "indirect_available", ps->indirect.avail);
		}
		add_container(d, ps->name, c);
	}
	return 0;
}

static int cmd_pdump(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct sbx_pdump_table *t = &tp->shm->pdump[__atomic_load_n(&tp->shm->pdump_gen, __ATOMIC_ACQUIRE) & 1];
	uint32_t i;

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (i = 0; i < t->nb && i < SBX_PDUMP_MAX; i++) {
		const struct sbx_pdump_entry *e = &t->e[i];
		struct rte_tel_data *c = dict();
		char key[24];

		if (c == NULL)
			return -1;
		rte_tel_data_add_dict_string(c, "port", tp->cfg->ports[e->port].name);
		rte_tel_data_add_dict_int(c, "port_id", e->port_id);
		rte_tel_data_add_dict_int(c, "queue", e->queue == SBX_PDUMP_ALL_QUEUES ? -1 : e->queue);
		rte_tel_data_add_dict_string(c, "direction", e->rx ? "rx" : "tx");
		rte_tel_data_add_dict_string(c, "format", e->pcapng ? "pcapng" : "pcap");
		rte_tel_data_add_dict_u64(c, "snaplen", e->snaplen);
		rte_tel_data_add_dict_int(c, "filter", e->prm != NULL);
		rte_tel_data_add_dict_int(c, "client_pid", e->client_pid);
		snprintf(key, sizeof(key), "%llu", (unsigned long long)e->id);
		add_container(d, key, c);
	}
	return 0;
}

int sbx_telemetry_init(struct sbx_primary *p)
{
	static const struct {
		const char *name;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{ "/spanbox/status", cmd_status, "spanbox: appliance state. Takes no parameters" },
		{ "/spanbox/ports", cmd_ports, "spanbox: ports by name, ethdev and worker counters. Takes no parameters" },
		{ "/spanbox/workers", cmd_workers, "spanbox: workers by id: state, pid, lcore, counters. Takes no parameters" },
		{ "/spanbox/mirrors", cmd_mirrors, "spanbox: mirror sessions by id and their counters. Takes no parameters" },
		{ "/spanbox/pools", cmd_pools, "spanbox: mbuf pools by name. Takes no parameters" },
		{ "/spanbox/pdump", cmd_pdump, "spanbox: captures of dpdk-dumpcap/dpdk-pdump in progress. Takes no parameters" },
	};
	size_t i;

	tp = p;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (rte_telemetry_register_cmd(cmds[i].name, cmds[i].fn, cmds[i].help) != 0) {
			fprintf(stderr, "spanbox-primary: cannot register telemetry command %s\n", cmds[i].name);
			return -1;
		}
	return 0;
}
