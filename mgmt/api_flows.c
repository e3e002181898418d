/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Route GET /api/v1/flows (issue #28, docs/FLOWS.md, docs/MGMT.md): the flows section as it runs,
 * the exporter's collectors (state, records sent and lost: primary/flowexport.c) and each worker's
 * flow table (active flows and the flows_* counters of counters.h, the same as /status shows).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "shmview.h"
#include "spanbox/shm.h"
#include "timefmt.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define NUM(o, k, v) cJSON_AddNumberToObject((o), (k), (double)(v))

/* The counters of an IPFIX exporter into @p o (SBX_FOREACH_IPFIX_COUNTER of counters.h). */
static void ipfix_stats_json(cJSON *o, const struct sbx_ipfix_stats *x)
{
#define IPFIX_NUM(field, json, ...) NUM(o, json, x->field);
	SBX_FOREACH_IPFIX_COUNTER(IPFIX_NUM)
#undef IPFIX_NUM
}

/* One collector: its config and what the exporter counted. */
static cJSON *collector_json(const struct sbx_flow_collector_cfg *k, const struct sbx_flow_collector_shm *s,
			     bool running)
{
	cJSON *o = cJSON_CreateObject();
	char t[40];

	cJSON_AddStringToObject(o, "address", k->address);
	NUM(o, "port", k->port);
	cJSON_AddStringToObject(o, "transport", k->transport ? "tcp" : "udp");
	cJSON_AddStringToObject(o, "state", !running ? "stopped" : __atomic_load_n(&s->up, __ATOMIC_RELAXED) ? "up" : "down");
	mgmt_rfc3339(s->since_ns, t, sizeof(t));
	cJSON_AddStringToObject(o, "since", t);
	NUM(o, "transitions", s->transitions);
	ipfix_stats_json(o, &s->x);
	return o;
}

static unsigned int get_flows(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = mgmt_need_shm(r, body, &code);
	const struct sbx_flows_cfg *f;
	cJSON *o, *a;
	uint16_t i;
	uint32_t c;

	if (shm == NULL)
		return code;
	f = &sbx_shm_cfg(shm)->flows; /* the active tables': flows is live */
	*body = o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "enabled", sbx_flows_cfg_meters(f));
	a = cJSON_AddArrayToObject(o, "ports"); /* RX metered */
	for (i = 0; i < MIN(shm->cfg.nb_ports, SBX_MAX_PORTS); i++)
		if (f->port_mask & (1ull << i))
			cJSON_AddItemToArray(a, cJSON_CreateString(shm->cfg.ports[i].name));
	a = cJSON_AddArrayToObject(o, "tx_ports"); /* TX metered (docs/FLOWS.md "Directions") */
	for (i = 0; i < MIN(shm->cfg.nb_ports, SBX_MAX_PORTS); i++)
		if ((f->tx_mask >> i) & 1)
			cJSON_AddItemToArray(a, cJSON_CreateString(shm->cfg.ports[i].name));
	a = cJSON_AddArrayToObject(o, "sessions"); /* maps and mirror sessions whose frames are metered */
	for (i = 0; i < f->nb_sessions && i < SBX_MAX_MAPS + SBX_MAX_MIRRORS; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(f->session_ids[i]));
	NUM(o, "active_timeout_s", f->active_s);
	NUM(o, "idle_timeout_s", f->idle_s);
	NUM(o, "flows_per_worker", f->capacity);
	NUM(o, "observation_domain_id", f->domain);
	NUM(o, "template_period_s", f->template_period_s);
	cJSON_AddBoolToObject(o, "biflow", f->biflow);
	cJSON_AddBoolToObject(o, "exporter_running", shm->flows.running != 0);
	NUM(o, "records_in", shm->flows.records_in);
	a = cJSON_AddArrayToObject(o, "collectors");
	/* running: the collectors the exporter sends to (it takes a live change within a round) */
	for (c = 0; c < MIN(shm->flows.running ? shm->flows.nb_collectors : f->nb_collectors,
			    (uint32_t)SBX_MAX_FLOW_COLLECTORS); c++) {
		struct sbx_flow_collector_cfg kc; /* the exporter's, under its sequence lock (a live change) */
		cJSON *k;

		if (shm->flows.running)
			sbx_flows_collector_cfg(&shm->flows, c, &kc);
		k = collector_json(shm->flows.running ? &kc : &f->collectors[c], &shm->flows.collectors[c],
				   shm->flows.running != 0);
		NUM(k, "open_failures", shm->flows.open_failures[c]);
		cJSON_AddItemToArray(a, k);
	}
	/* collectors closed by live changes: their counters summed (docs/RUNTIME_TABLES.md "Flows") */
	ipfix_stats_json(cJSON_AddObjectToObject(o, "retired"), &shm->flows.retired);
	NUM(o, "reconfigurations", shm->flows.reconfigs);
	NUM(o, "records_no_collector", shm->flows.records_no_collector);
	a = cJSON_AddArrayToObject(o, "workers");
	for (i = 0; i < MIN(shm->cfg.nb_workers, SBX_MAX_WORKERS); i++) {
		const struct sbx_worker_stats *st = &sbx_shm_worker(shm, i)->stats;
		cJSON *w = cJSON_CreateObject();

		NUM(w, "worker", i);
		NUM(w, "active", st->flows_active);
#define FLOW_NUM(field, json, ...) NUM(w, json, st->field);
		SBX_FOREACH_WORKER_FLOW_COUNTER(FLOW_NUM)
#undef FLOW_NUM
		cJSON_AddItemToArray(a, w);
	}
	return code;
}

/* One record as JSON (the IPFIX record's fields, times RFC 3339). */
static cJSON *record_json(const struct sbx_shm *shm, const struct sbx_flow_record *r)
{
	cJSON *o = cJSON_CreateObject();
	char a[INET6_ADDRSTRLEN], t[40];
	int af = r->key.ipver == 6 ? AF_INET6 : AF_INET;
	const char *reason = sbx_flow_end_reason_name(r->end_reason);

	NUM(o, "ip_version", r->key.ipver);
	cJSON_AddStringToObject(o, "src", inet_ntop(af, r->key.src, a, sizeof(a)) ? a : "");
	cJSON_AddStringToObject(o, "dst", inet_ntop(af, r->key.dst, a, sizeof(a)) ? a : "");
	NUM(o, "protocol", r->key.proto);
	NUM(o, "src_port", r->key.sport);
	NUM(o, "dst_port", r->key.dport);
	NUM(o, "vlan", r->key.vlan);
	NUM(o, "inner_vlan", r->key.inner_vlan);
	cJSON_AddStringToObject(o, "port", r->key.port < MIN(shm->cfg.nb_ports, SBX_MAX_PORTS) ?
				shm->cfg.ports[r->key.port].name : "");
	cJSON_AddStringToObject(o, "direction", r->key.dir == SBX_FLOW_DIR_TX ? "tx" : "rx"); /* of port */
	NUM(o, "packets", r->packets);
	NUM(o, "bytes", r->bytes);
	mgmt_rfc3339(r->first_ns, t, sizeof(t));
	cJSON_AddStringToObject(o, "first", t);
	mgmt_rfc3339(r->last_ns, t, sizeof(t));
	cJSON_AddStringToObject(o, "last", t);
	NUM(o, "tcp_flags", r->tcp_flags);
	cJSON_AddStringToObject(o, "end_reason", reason ? reason : "");
	return o;
}

/* ---- top talkers by bytes or by packets (?by=, issue #28) ---- */
/* The ?by= of GET /flows/top: 0 bytes (also when absent), 1 packets, -1 anything else. */
static int flows_top_by(struct req *r)
{
	const char *by = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "by");

	if (by == NULL || strcmp(by, "bytes") == 0)
		return 0;
	return strcmp(by, "packets") == 0 ? 1 : -1;
}

/* GET /api/v1/flows/top[?by=bytes|packets]: the largest flow records (bytes, or packets) exported
 * in the last minute; a bad by is a 400 naming it. */
static unsigned int get_flows_top(struct req *r, cJSON **body)
{
	static struct sbx_flow_record top[SBX_FLOWS_TOP];
	unsigned int code = MHD_HTTP_OK, n = 0, i, tries;
	const struct sbx_shm *shm;
	const struct sbx_flows_shm *fs;
	int by = flows_top_by(r);
	uint64_t at = 0;
	cJSON *a;
	char t[40];

	if (by < 0) {
		*body = mgmt_error(MHD_HTTP_BAD_REQUEST, "by", "by: \"%.32s\" is not bytes or packets",
				   MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "by"));
		return MHD_HTTP_BAD_REQUEST;
	}
	shm = mgmt_need_shm(r, body, &code);
	if (shm == NULL)
		return code;
	fs = &shm->flows;
	for (tries = 0; tries < 100; tries++) { /* the exporter rewrites it once a second, in microseconds */
		uint32_t seq = __atomic_load_n(&fs->top_seq, __ATOMIC_ACQUIRE);

		if (seq & 1)
			continue;
		n = MIN(by ? fs->nb_top_packets : fs->nb_top, (uint32_t)SBX_FLOWS_TOP);
		memcpy(top, by ? fs->top_packets : fs->top, n * sizeof(top[0]));
		at = fs->top_ns;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&fs->top_seq, __ATOMIC_RELAXED) == seq)
			break;
	}
	*body = cJSON_CreateObject();
	NUM(*body, "window_s", SBX_FLOWS_TOP_WINDOW_S);
	cJSON_AddStringToObject(*body, "by", by ? "packets" : "bytes");
	if (at) {
		mgmt_rfc3339(at, t, sizeof(t));
		cJSON_AddStringToObject(*body, "updated", t);
	} else {
		cJSON_AddNullToObject(*body, "updated");
	}
	a = cJSON_AddArrayToObject(*body, "flows");
	for (i = 0; tries < 100 && i < n; i++)
		cJSON_AddItemToArray(a, record_json(shm, &top[i]));
	return code;
}

const struct mgmt_route mgmt_routes_flows[] = {
	{ "GET", "/api/v1/flows", get_flows },
	{ "GET", "/api/v1/flows/top", get_flows_top },
	{ NULL, NULL, NULL },
};
