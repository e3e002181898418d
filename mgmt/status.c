/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * JSON of the memzone. Counters are read while workers and the primary write them: each 64-bit
 * value is whole, but one response may mix values of neighbouring loops. uint64 counters go out
 * as JSON numbers (doubles: exact up to 2^53). The counter families and their sums: shmview.c.
 * Status embeds the history's summary (history.h); the history never includes this file.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>


#include "db.h"
#include "history.h"
#include "ingress_view.h"

#include "status.h"
#include "microburst_view.h"
#include "system.h"
#include "pool_audit.h"
#include "timefmt.h"
#include "watch.h"

#ifndef SBX_VERSION
#define SBX_VERSION "0.0.0"
#endif

#define MIN(a, b) ((a) < (b) ? (a) : (b))

static void num(cJSON *o, const char *key, double v)
{
	cJSON_AddNumberToObject(o, key, v);
}

/* A string from a fixed-size char array of the memzone, even if it lacks its NUL. */
static void fixed_str(cJSON *o, const char *key, const char *s, size_t size)
{
	char buf[SBX_DEVARGS_LEN];

	snprintf(buf, sizeof(buf), "%.*s", (int)MIN(size, sizeof(buf) - 1), s);
	cJSON_AddStringToObject(o, key, buf);
}
#define FIXED_STR(o, key, arr) fixed_str(o, key, arr, sizeof(arr))

uint64_t mgmt_uptime_s(const struct sbx_shm *shm)
{
	uint64_t now = sbx_realtime_ns(), start = shm->start_realtime_ns;

	return now > start ? (now - start) / 1000000000ULL : 0;
}

cJSON *mgmt_health_json(const struct sbx_shm *shm)
{
	cJSON *o = cJSON_CreateObject(), *problems = mgmt_watch_problems(shm);

	cJSON_AddStringToObject(o, "status", cJSON_GetArraySize(problems) > 0 ? "degraded" : "ok");
	cJSON_AddStringToObject(o, "appliance", shm ? "up" : "down");
	cJSON_AddStringToObject(o, "version", SBX_VERSION);
	num(o, "uptime_s", shm ? (double)mgmt_uptime_s(shm) : 0);
	cJSON_AddItemToObject(o, "problems", problems ? problems : cJSON_CreateArray());
	return o;
}

/* A port's RSS as its device reported it once started (null: no ports[].rss): the hash fields,
 * the key (hex) and whether it is symmetric, the redirection table. */
static cJSON *rss_json(const struct sbx_port_shm *ps)
{
	cJSON *o, *a;
	char key[2 * SBX_RSS_KEY_MAX + 1], hf[24];
	uint8_t fields, bit;
	uint16_t k, size = MIN(ps->rss_reta_size, SBX_RSS_RETA_MAX);

	if (!ps->rss_on)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	fields = sbx_rss_fields_of_hf(ps->rss_hf);
	a = cJSON_AddArrayToObject(o, "fields");
	for (bit = 1; bit <= SBX_RSS_F_UDP; bit <<= 1)
		if (fields & bit)
			cJSON_AddItemToArray(a, cJSON_CreateString(sbx_rss_field_name(bit)));
	snprintf(hf, sizeof(hf), "0x%" PRIx64, ps->rss_hf);
	cJSON_AddStringToObject(o, "hash_functions", hf);
	sbx_rss_key_format(ps->rss_key, MIN(ps->rss_key_len, SBX_RSS_KEY_MAX), key, sizeof(key));
	cJSON_AddStringToObject(o, "key", key);
	cJSON_AddBoolToObject(o, "symmetric", sbx_rss_key_is_symmetric(ps->rss_key, MIN(ps->rss_key_len, SBX_RSS_KEY_MAX)));
	num(o, "reta_size", size);
	a = cJSON_AddArrayToObject(o, "reta");
	for (k = 0; k < size; k++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(ps->rss_reta[k]));
	return o;
}

static cJSON *port_json(const struct sbx_shm *shm, uint16_t i, uint16_t nb_ports, uint16_t nb_w)
{
	const struct sbx_port_cfg *pc = &shm->cfg.ports[i];
	const struct sbx_port_shm *ps = &shm->ports[i];
	struct sbx_port_counters sum;
	cJSON *o = cJSON_CreateObject(), *link, *st, *ing;
	char mac[18];
	int16_t peer;

	FIXED_STR(o, "name", pc->name);
	num(o, "port_id", ps->port_id);
	FIXED_STR(o, "devargs", pc->devargs);
	cJSON_AddStringToObject(o, "kind", pc->kind == SBX_PORT_PCAP_FILE ? "bridged" : "ethdev");
	num(o, "socket", ps->socket_id);
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", ps->mac[0], ps->mac[1],
		 ps->mac[2], ps->mac[3], ps->mac[4], ps->mac[5]);
	cJSON_AddStringToObject(o, "mac", mac);
	link = cJSON_AddObjectToObject(o, "link");
	cJSON_AddBoolToObject(link, "up", ps->link_up != 0);
	num(link, "speed_mbps", ps->link_speed);
	num(o, "rx_queues", ps->nb_rxq);
	num(o, "tx_queues", ps->nb_txq);
	peer = sbx_config_peer(sbx_shm_cfg(shm), i); /* as the active tables forward */
	if (peer >= 0 && peer < nb_ports)
		FIXED_STR(o, "peer", shm->cfg.ports[peer].name);
	else
		cJSON_AddNullToObject(o, "peer");
	st = cJSON_AddObjectToObject(o, "stats");
	mgmt_ethdev_counters_json(st, ps);
	mgmt_port_worker_sum(shm, i, nb_w, &sum);
	mgmt_port_counters_json(cJSON_AddObjectToObject(o, "workers"), &sum);
	ing = mgmt_ingress_json(shm, i, nb_w); /* null: no ingress stage */
	cJSON_AddItemToObject(o, "ingress", ing ? ing : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "rss", rss_json(ps));
	cJSON_AddItemToObject(o, "microburst", mgmt_microburst_json(shm, i)); /* microburst_view.c */
	return o;
}

cJSON *mgmt_port_json(const struct sbx_shm *shm, uint16_t i)
{
	return port_json(shm, i, MIN(shm->cfg.nb_ports, SBX_MAX_PORTS), MIN(shm->cfg.nb_workers, SBX_MAX_WORKERS));
}

/* @p key: the RFC 3339 UTC time of CLOCK_REALTIME @p ns, or null when @p ns is 0. */
static void time_or_null(cJSON *o, const char *key, uint64_t ns)
{
	char ts[40];

	if (ns) {
		mgmt_rfc3339(ns, ts, sizeof(ts));
		cJSON_AddStringToObject(o, key, ts);
	} else {
		cJSON_AddNullToObject(o, key);
	}
}

/* A worker's JSON; @p per_port: its counters per port ("ports"), else their sum ("ports_total"). */
static cJSON *worker_json(const struct sbx_shm *shm, uint16_t w, bool per_port)
{
	uint16_t nb_ports = MIN(shm->cfg.nb_ports, SBX_MAX_PORTS);
	const struct sbx_worker_shm *ws = sbx_shm_worker(shm, w);
	const struct sbx_worker_rxqs *wq = &shm->placement[w]; /* configured + added RX queues */
	uint64_t hb = ws->stats.heartbeat_ns, now = sbx_now_ns();
	cJSON *o = cJSON_CreateObject(), *qs, *ports;
	struct mgmt_cpp_window win;
	double cpp;
	uint16_t i;

	num(o, "id", w);
	num(o, "pid", ws->pid);
	num(o, "lcore", ws->lcore_id);
	cJSON_AddStringToObject(o, "state", sbx_worker_state_name(ws->state));
	num(o, "restarts", ws->restarts);
	num(o, "crashes", ws->crashes);
	num(o, "hangs", ws->hangs);
	/* stale heartbeats while its thread got no CPU: not scheduled, not hung (primary/workers.c) */
	num(o, "starvations", ws->starvations);
	cJSON_AddBoolToObject(o, "starved", ws->starved != 0);
	num(o, "recovered_mbufs", (double)ws->recovered_mbufs);
	/* CLOCK_REALTIME ns of this process's first received burst (restart gap), 0 = none yet */
	num(o, "first_rx_ns", (double)ws->stats.first_rx_ns);
	num(o, "start_ns", (double)ws->start_ns);
	num(o, "held_mbufs", (double)ws->stats.held);
	/* hot standbys: how often one took this slot over, and the last one's gap */
	FIXED_STR(o, "binary", ws->binary);
	num(o, "takeovers", ws->takeovers);
	num(o, "takeovers_before_reap", ws->takeovers_before_reap);
	if (ws->takeovers && ws->takeover_gap_ns)
		num(o, "takeover_gap_us", (double)(ws->takeover_gap_ns / 1000));
	else
		cJSON_AddNullToObject(o, "takeover_gap_us");
	if (ws->takeovers)
		num(o, "takeover_from_pid", ws->takeover_from);
	else
		cJSON_AddNullToObject(o, "takeover_from_pid");
	time_or_null(o, "start_time", ws->start_ns);
	if (hb)
		num(o, "heartbeat_age_ms", (double)(now > hb ? (now - hb) / 1000000ULL : 0));
	else
		cJSON_AddNullToObject(o, "heartbeat_age_ms");
	qs = cJSON_AddArrayToObject(o, "queues");
	for (i = 0; i < MIN(wq->nb_rxq, SBX_MAX_RXQ_PER_WORKER); i++) {
		cJSON *q = cJSON_CreateObject();

		if (wq->rxq[i].port < nb_ports)
			FIXED_STR(q, "port", shm->cfg.ports[wq->rxq[i].port].name);
		else
			cJSON_AddNullToObject(q, "port");
		num(q, "queue", wq->rxq[i].queue);
		cJSON_AddItemToArray(qs, q);
	}
	/* over the recent window (watch.h), null below MGMT_CPP_MIN_FRAMES frames; one decimal */
	mgmt_watch_cpp(shm, w, &win);
	if (win.valid)
		num(o, "cycles_per_packet", (double)(uint64_t)(win.cpp * 10 + 0.5) / 10);
	else
		cJSON_AddNullToObject(o, "cycles_per_packet");
	if (win.have_window) {
		num(o, "cycles_per_packet_window_s", (double)(uint64_t)(win.window_s * 10 + 0.5) / 10);
		num(o, "cycles_per_packet_frames", (double)win.frames);
	} else {
		cJSON_AddNullToObject(o, "cycles_per_packet_window_s");
		cJSON_AddNullToObject(o, "cycles_per_packet_frames");
	}
	if (mgmt_cycles_per_packet(ws, &cpp)) /* since the appliance started */
		num(o, "cycles_per_packet_total", (double)(uint64_t)(cpp * 10 + 0.5) / 10);
	else
		cJSON_AddNullToObject(o, "cycles_per_packet_total");
	mgmt_worker_counters_json(o, &ws->stats); /* loops, idle_sleeps, bad_packets... (counters.h) */
	if (!per_port) { /* /status?view=page: one object instead of one per port */
		struct sbx_port_counters tot = { 0 };

		for (i = 0; i < nb_ports; i++)
			sbx_port_counters_add(&tot, &ws->stats.port[i]);
		mgmt_port_counters_json(cJSON_AddObjectToObject(o, "ports_total"), &tot);
		return o;
	}
	ports = cJSON_AddObjectToObject(o, "ports");
	for (i = 0; i < nb_ports; i++) {
		char name[SBX_NAME_LEN];

		snprintf(name, sizeof(name), "%.*s", SBX_NAME_LEN - 1, shm->cfg.ports[i].name);
		mgmt_port_counters_json(cJSON_AddObjectToObject(ports, name), &ws->stats.port[i]);
	}
	return o;
}

cJSON *mgmt_worker_json(const struct sbx_shm *shm, uint16_t w)
{
	return worker_json(shm, w, true);
}

/* One mirror session: its config and its counters, summed and per worker. */
void mgmt_session_json(cJSON *o, const struct sbx_shm *shm, const struct sbx_mirror_cfg *m)
{
	cJSON *a;
	uint16_t k;

	num(o, "id", m->id);
	FIXED_STR(o, "name", m->name);
	a = cJSON_AddArrayToObject(o, "sources");
	for (k = 0; k < MIN(m->nb_sources, SBX_MAX_MIRROR_SOURCES); k++) {
		cJSON *src = cJSON_CreateObject();

		FIXED_STR(src, "port", shm->cfg.ports[m->sources[k].port % SBX_MAX_PORTS].name);
		cJSON_AddStringToObject(src, "direction", sbx_direction_name(m->sources[k].direction));
		cJSON_AddItemToArray(a, src);
	}
	if (m->dst_kind == SBX_DST_GROUP && m->dst_group < sbx_shm_cfg(shm)->nb_tool_groups) {
		const char *g = sbx_shm_cfg(shm)->tool_groups[m->dst_group % SBX_MAX_TOOL_GROUPS].name;
		const size_t gl = sizeof(sbx_shm_cfg(shm)->tool_groups[0].name); /* (FIXED_STR of a pointer: 8 bytes) */

		fixed_str(cJSON_AddObjectToObject(o, "destination"), "group", g, gl);
		fixed_str(o, "destination_group", g, gl);
	} else if (m->dst_kind == SBX_DST_RECORDER) { /* a capture: GET /api/v1/captures/{id} */
		cJSON_AddObjectToObject(cJSON_AddObjectToObject(o, "destination"), "recorder");
		cJSON_AddNullToObject(o, "destination_group");
	} else {
		FIXED_STR(cJSON_AddObjectToObject(o, "destination"), "port",
			  shm->cfg.ports[m->dst_port % SBX_MAX_PORTS].name);
		cJSON_AddNullToObject(o, "destination_group");
	}
	FIXED_STR(o, "filter", m->filter);
}

static cJSON *mirror_json(const struct sbx_shm *shm, uint16_t i, uint16_t nb_w)
{
	static const char *const encaps[] = { "span", "rspan", "erspan2", "erspan3", "vxlan" };
	static const char *const strategies[] = { "adaptive", "copy", "share" };
	const struct sbx_mirror_cfg *m = &sbx_shm_cfg(shm)->mirrors[i];
	struct sbx_mirror_counters sum;
	cJSON *o = cJSON_CreateObject(), *e, *per;
	uint16_t k;

	mgmt_session_json(o, shm, m);
	num(o, "snaplen", m->snaplen);
	num(o, "sample", m->sample);
	cJSON_AddStringToObject(o, "oversize", m->oversize == SBX_OVERSIZE_DROP ? "drop" : "truncate");
	e = cJSON_AddObjectToObject(o, "encap");
	cJSON_AddStringToObject(e, "type", m->encap < sizeof(encaps) / sizeof(encaps[0]) ? encaps[m->encap] : "unknown");
	if (m->encap == SBX_ENCAP_RSPAN)
		num(e, "vlan", m->vlan);
	if (m->encap == SBX_ENCAP_VXLAN) {
		num(e, "vni", m->vni);
		num(e, "udp_port", m->udp_port);
	}
	e = cJSON_AddObjectToObject(o, "copy");
	cJSON_AddStringToObject(e, "strategy", strategies[m->copy_strategy % 3]);
	num(e, "threshold", m->copy_threshold);
	if (m->mask.from != SBX_MASK_OFF) { /* issue #26: every key, defaults filled in */
		e = cJSON_AddObjectToObject(o, "mask");
		cJSON_AddStringToObject(e, "from", sbx_mask_from_name(m->mask.from));
		num(e, "offset", m->mask.offset);
		num(e, "length", m->mask.length);
		num(e, "pattern", m->mask.pattern);
	} else {
		cJSON_AddNullToObject(o, "mask");
	}
	if (m->ts_format == SBX_TS_NONE) { /* mirrors[].timestamp (issue #26) */
		cJSON_AddNullToObject(o, "timestamp");
	} else {
		e = cJSON_AddObjectToObject(o, "timestamp");
		cJSON_AddStringToObject(e, "format", m->ts_format == SBX_TS_ARISTA64 ? "arista64" : "metamako");
		if (m->ts_format == SBX_TS_METAMAKO) {
			num(e, "device_id", m->ts_device);
			if (m->ts_port_set)
				num(e, "port", m->ts_port);
			else
				cJSON_AddStringToObject(e, "port", "source");
		}
	}
	per = cJSON_CreateArray();
	for (k = 0; k < nb_w; k++) {
		cJSON *w = cJSON_CreateObject();

		num(w, "worker", k);
		mgmt_mirror_counters_json(w, &sbx_shm_worker(shm, k)->stats.mirror[mgmt_mirror_cset(shm, i)]);
		cJSON_AddItemToArray(per, w);
	}
	mgmt_mirror_sum(shm, i, nb_w, &sum);
	mgmt_mirror_counters_json(cJSON_AddObjectToObject(o, "counters"), &sum);
	cJSON_AddItemToObject(o, "workers", per);
	return o;
}

cJSON *mgmt_tool_group_json(const struct sbx_shm *shm, uint16_t i, bool with_config)
{
	const struct sbx_config *cfg = sbx_shm_cfg(shm);
	const struct sbx_tool_group_cfg *g = &cfg->tool_groups[i % SBX_MAX_TOOL_GROUPS];
	uint8_t slot = mgmt_group_slot(shm, i);
	const struct sbx_group_shm *gs = sbx_shm_group(shm, slot);
	uint16_t nb_w = MIN(shm->cfg.nb_workers, SBX_MAX_WORKERS), k;
	struct sbx_group_member_counters tot = { 0 }, c;
	struct sbx_group_counters gc;
	cJSON *o = cJSON_CreateObject(), *a, *f;

	FIXED_STR(o, "name", g->name);
	cJSON_AddStringToObject(o, "hash", g->hash == SBX_GROUP_HASH_2TUPLE ? "2tuple" : "5tuple");
	num(o, "buckets", SBX_GROUP_BUCKETS);
	num(o, "members_up", gs->members_up);
	a = cJSON_CreateArray();
	for (k = 0; k < MIN(g->nb_members, shm->layout.group_members); k++) { /* the slot's capacity */
		const struct sbx_group_member_shm *m = &gs->m[k];
		cJSON *mo = cJSON_CreateObject();

		FIXED_STR(mo, "port", shm->cfg.ports[g->members[k] % SBX_MAX_PORTS].name);
		cJSON_AddStringToObject(mo, "state", sbx_member_state_name(m->state));
		cJSON_AddStringToObject(mo, "reason", m->state == SBX_MEMBER_UP ? "" : sbx_member_reason_name(m->reason));
		num(mo, "buckets", m->buckets);
		num(mo, "share", (double)m->buckets / SBX_GROUP_BUCKETS);
		num(mo, "transitions", m->transitions);
		mgmt_group_member_sum(shm, slot, k, nb_w, &c);
		sbx_group_member_counters_add(&tot, &c);
		mgmt_group_member_counters_json(mo, &c);
		cJSON_AddItemToArray(a, mo);
	}
	mgmt_group_sum(shm, slot, nb_w, &gc);
	mgmt_group_member_counters_json(o, &tot); /* packets, bytes, drop_rate_limit, drop_txfull */
	num(o, "no_member", (double)gc.no_member);
	cJSON_AddItemToObject(o, "members", a);
	if (with_config) {
		f = cJSON_AddObjectToObject(o, "failover");
		num(f, "hold_down_ms", g->hold_down_ms);
		num(f, "tx_refused_percent", g->tx_refused_percent);
		num(f, "tx_refused_window_ms", g->tx_refused_window_ms);
		f = cJSON_AddObjectToObject(o, "member_rate_limit");
		num(f, "pps", (double)g->rate_pps);
		num(f, "bps", (double)g->rate_bps);
	}
	return o;
}

cJSON *mgmt_mirror_json(const struct sbx_shm *shm, uint16_t i)
{
	return mirror_json(shm, i, MIN(shm->cfg.nb_workers, SBX_MAX_WORKERS));
}

cJSON *mgmt_pool_json(const struct sbx_shm *shm, uint32_t i)
{
	const struct sbx_pool_shm *p = &shm->pools[i];
	cJSON *po = cJSON_CreateObject();

	FIXED_STR(po, "name", p->name);
	num(po, "socket", p->socket_id);
	num(po, "size", p->size);
	num(po, "cache_size", p->cache_size);
	num(po, "elt_size", p->elt_size);
	num(po, "data_room", p->data_room);
	num(po, "in_use", p->in_use);
	num(po, "available", p->avail);
	num(po, "populate_ms", (double)(p->populate_ns / 1000) / 1000.0);
	mgmt_pool_details_json(po, shm, i); /* plan, bytes, hugepage size, memset bound */
	if (p->indirect.name[0]) {
		cJSON *io = cJSON_AddObjectToObject(po, "indirect");

		FIXED_STR(io, "name", p->indirect.name);
		num(io, "size", p->indirect.size);
		num(io, "cache_size", p->indirect.cache_size);
		num(io, "elt_size", p->indirect.elt_size);
		num(io, "in_use", p->indirect.in_use);
		num(io, "available", p->indirect.avail);
		num(io, "plan_total", (double)p->indirect.plan_total);
		num(io, "bytes", (double)p->indirect.bytes);
		num(io, "populate_ms", (double)(p->indirect.populate_ns / 1000) / 1000.0);
	}
	return po;
}

/* The audit's first three figures, the same for a pool and its indirect pool, into @p a. */
static void free_json(cJSON *a, uint64_t populated, uint64_t in_ring, uint64_t in_caches)
{
	num(a, "populated", (double)populated);
	num(a, "available_in_ring", (double)in_ring);
	num(a, "in_lcore_caches", (double)in_caches);
}

cJSON *mgmt_pool_audit_json(const struct sbx_shm *shm, uint32_t i)
{
	struct mgmt_ind_pool_audit ia;
	struct mgmt_pool_audit au;
	cJSON *o, *a;

	if (mgmt_pool_audit(shm, i, &au) != 0)
		return NULL;
	o = mgmt_pool_json(shm, i);
	a = cJSON_AddObjectToObject(o, "audit");
	free_json(a, au.populated, au.in_ring, au.in_caches);
	num(a, "held_by_rx_rings", (double)au.rx_held);
	num(a, "in_flight_in_rings", (double)au.in_rings);
	num(a, "held_by_workers", (double)au.in_workers);
	num(a, "held_by_reassembly", (double)au.in_reasm);
	num(a, "recovered_after_crashes", (double)au.recovered);
	num(a, "unexplained", (double)au.unexplained);
	cJSON_AddStringToObject(a, "note",
		"unexplained = populated - ring - lcore caches - RX rings (measured at start) - bridge rings"
		" - bursts held by workers - fragments held by their reassembly tables; includes mbufs lost in worker crashes (at most one burst each)"
		" and any held by TX descriptors or in the primary's pcap read buffer at this instant");
	if (mgmt_ind_pool_audit(shm, i, &ia) == 0 && cJSON_GetObjectItem(o, "indirect") != NULL) {
		a = cJSON_AddObjectToObject(cJSON_GetObjectItem(o, "indirect"), "audit");
		free_json(a, ia.populated, ia.in_ring, ia.in_caches);
		num(a, "in_flight", (double)ia.in_flight);
		cJSON_AddStringToObject(a, "note",
			"in_flight = populated - ring - lcore caches: shares on mirror TX queues and in the"
			" workers' copy buffers at this instant, and any lost in worker crashes");
	}
	return o;
}

cJSON *mgmt_standby_json(const struct sbx_shm *shm, uint32_t s)
{
	const struct sbx_standby_shm *sb = &shm->standbys[s];
	uint64_t hb = sb->heartbeat_ns, now = sbx_now_ns();
	cJSON *o = cJSON_CreateObject();

	num(o, "slot", s);
	num(o, "pid", sb->pid);
	num(o, "lcore", sb->lcore_id);
	cJSON_AddStringToObject(o, "state", sbx_standby_state_name(sb->state));
	FIXED_STR(o, "binary", sb->binary);
	num(o, "starts", sb->starts);
	if (sb->state == SBX_SB_PARKED && hb)
		num(o, "heartbeat_age_ms", (double)(now > hb ? (now - hb) / 1000000ULL : 0));
	else
		cJSON_AddNullToObject(o, "heartbeat_age_ms");
	time_or_null(o, "parked_since", sb->state == SBX_SB_PARKED ? sb->parked_ns : 0);
	return o;
}

cJSON *mgmt_upgrade_json(const struct sbx_shm *shm)
{
	const struct sbx_upgrade_shm *u = &shm->upgrade;
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "state", sbx_upgrade_state_name(__atomic_load_n(&u->state, __ATOMIC_ACQUIRE)));
	if (u->state == SBX_UPG_NONE) {
		cJSON_AddNullToObject(o, "binary");
		cJSON_AddNullToObject(o, "from");
	} else {
		FIXED_STR(o, "binary", u->binary);
		FIXED_STR(o, "from", u->from);
	}
	num(o, "workers_done", u->workers_done);
	num(o, "workers", MIN(shm->cfg.nb_workers, SBX_MAX_WORKERS));
	time_or_null(o, "started", u->started_ns);
	time_or_null(o, "finished", u->finished_ns);
	if (u->state == SBX_UPG_REFUSED)
		FIXED_STR(o, "error", u->error);
	else
		cJSON_AddNullToObject(o, "error");
	return o;
}

cJSON *mgmt_standbys_json(const struct sbx_shm *shm)
{
	cJSON *arr = cJSON_CreateArray();
	uint32_t s;

	for (s = 0; s < MIN(shm->nb_standbys, SBX_MAX_STANDBYS); s++)
		cJSON_AddItemToArray(arr, mgmt_standby_json(shm, s));
	return arr;
}

/* /status; @p page: the page's view (mgmt_status_view_json()). */
static cJSON *status_json(const struct sbx_shm *shm, const struct mgmt_db *db, bool page)
{
	uint16_t nb_ports = MIN(shm->cfg.nb_ports, SBX_MAX_PORTS);
	uint16_t nb_w = MIN(shm->cfg.nb_workers, SBX_MAX_WORKERS);
	cJSON *o = cJSON_CreateObject(), *a, *arr, *d;

	uint32_t i;

	a = cJSON_AddObjectToObject(o, "appliance");
	cJSON_AddStringToObject(a, "state", "up");
	num(a, "primary_pid", shm->primary_pid);
	num(a, "uptime_s", (double)mgmt_uptime_s(shm));
	FIXED_STR(a, "file_prefix", shm->cfg.file_prefix);
	num(a, "tsc_hz", (double)shm->tsc_hz);

	arr = cJSON_AddArrayToObject(o, "ports");
	for (i = 0; i < nb_ports; i++) {
		cJSON *p = port_json(shm, (uint16_t)i, nb_ports, nb_w);

		if (page) /* the page does not show the redirection table (up to 512 entries) */
			cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "rss"), "reta");
		cJSON_AddItemToArray(arr, p);
	}

	arr = cJSON_AddArrayToObject(o, "workers");
	for (i = 0; i < nb_w; i++)
		cJSON_AddItemToArray(arr, worker_json(shm, (uint16_t)i, !page));

	cJSON_AddItemToObject(o, "standbys", mgmt_standbys_json(shm));

	arr = cJSON_AddArrayToObject(o, "mirrors");
	for (i = 0; i < mgmt_nb_mirrors(shm); i++) {
		cJSON *m = mirror_json(shm, (uint16_t)i, nb_w);

		if (page) /* the sum ("counters") stays; the per-worker split goes */
			cJSON_DeleteItemFromObjectCaseSensitive(m, "workers");
		cJSON_AddItemToArray(arr, m);
	}

	arr = cJSON_AddArrayToObject(o, "tool_groups");
	for (i = 0; i < mgmt_nb_tool_groups(shm); i++)
		cJSON_AddItemToArray(arr, mgmt_tool_group_json(shm, (uint16_t)i, false));
	{ /* what the primary's health check of the members costs (primary/toolgroups.c) */
		cJSON *gc = cJSON_AddObjectToObject(o, "tool_group_check");
		const uint64_t ticks = shm->group_check.ticks;

		cJSON_AddNumberToObject(gc, "ticks", (double)ticks);
		cJSON_AddNumberToObject(gc, "mean_us", ticks ? (double)(shm->group_check.ns_total / ticks) / 1e3 : 0);
		cJSON_AddNumberToObject(gc, "max_us", (double)shm->group_check.ns_max / 1e3);
		cJSON_AddNumberToObject(gc, "last_us", (double)shm->group_check.ns_last / 1e3);
	}

	arr = cJSON_AddArrayToObject(o, "pools");
	for (i = 0; i < MIN(shm->nb_pools, SBX_MAX_POOLS); i++)
		cJSON_AddItemToArray(arr, mgmt_pool_json(shm, i));

	/* the start-up warnings, then the run-time problems of /health (watch.h) */
	arr = mgmt_warnings_json(shm);
	if (arr != NULL) {
		cJSON *p = mgmt_watch_problems(shm), *it;

		while (p != NULL && (it = cJSON_DetachItemFromArray(p, 0)) != NULL)
			cJSON_AddItemToArray(arr, it);
		cJSON_Delete(p);
	}
	cJSON_AddItemToObject(o, "warnings", arr);

	d = cJSON_AddObjectToObject(o, "database");
	cJSON_AddStringToObject(d, "path", db->path);
	num(d, "size_bytes", (double)mgmt_db_size(db));
	num(d, "schema_version", db->schema_version);
	if (db->history != NULL) /* samples, oldest, newest, writable (history.c) */
		mgmt_history_status_json(db->history, d);
	return o;
}

cJSON *mgmt_status_json(const struct sbx_shm *shm, const struct mgmt_db *db)
{
	return status_json(shm, db, false);
}

cJSON *mgmt_status_view_json(const struct sbx_shm *shm, const struct mgmt_db *db, enum mgmt_status_view view)
{
	return status_json(shm, db, view == MGMT_STATUS_VIEW_PAGE);
}
