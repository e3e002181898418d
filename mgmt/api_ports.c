/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Routes: GET /api/v1/ports/{name}/stats and PUT /api/v1/ports/{name}/link (GET /api/v1/ports and
 * /api/v1/ports/{name} are in api_core.c). The worker counters come from the lists of
 * include/spanbox/counters.h, through shmview.c like /status.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>

#include "api.h"
#include "attach.h"
#include "db.h"
#include "status.h"

/* The live memzone and the port of path parameter {name}; -1 with the 503 or 404 answer set. */
static int find_port(struct req *r, cJSON **body, unsigned int *code, const struct sbx_shm **shm)
{
	int i;

	*shm = mgmt_need_shm(r, body, code);
	if (*shm == NULL)
		return -1;
	i = mgmt_port_index(*shm, r->params[0]);
	if (i < 0) {
		*body = mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "no port %s", r->params[0]);
		*code = MHD_HTTP_NOT_FOUND;
	}
	return i;
}

/*
 * The port's extended stats, read here (mgmt is a secondary). For vdevs (net_tap, net_null,
 * net_ring...) the secondary attaches to the primary's shared rte_eth_dev_data and its PMD ops read
 * counters kept in the port's shared private data, which is what DPDK made secondaries able to do
 * (release 18.05, "procinfo on eth vdev"). A port this process did not attach, or whose PMD does
 * not answer, gives null and the reason in "xstats_error" instead.
 */
static void xstats_json(cJSON *o, uint16_t pid)
{
	struct rte_eth_xstat_name *names = NULL;
	struct rte_eth_xstat *vals = NULL;
	cJSON *x;
	int n, m, k;

	n = rte_eth_xstats_get_names(pid, NULL, 0);
	if (n < 0)
		goto fail;
	names = calloc((size_t)n + 1, sizeof(*names));
	vals = calloc((size_t)n + 1, sizeof(*vals));
	if (names == NULL || vals == NULL) {
		n = -ENOMEM;
		goto fail;
	}
	m = rte_eth_xstats_get_names(pid, names, (unsigned int)n);
	k = rte_eth_xstats_get(pid, vals, (unsigned int)n);
	if (m < 0 || k < 0) {
		n = m < 0 ? m : k;
		goto fail;
	}
	if (m > n || k > n) { /* the port grew queues meanwhile: ask again next time */
		n = -EAGAIN;
		goto fail;
	}
	x = cJSON_AddObjectToObject(o, "xstats");
	for (k = 0; k < m && k < n; k++)
		if (vals[k].id < (uint64_t)m)
			cJSON_AddNumberToObject(x, names[vals[k].id].name, (double)vals[k].value);
	free(names);
	free(vals);
	return;
fail:
	free(names);
	free(vals);
	cJSON_AddNullToObject(o, "xstats");
	cJSON_AddStringToObject(o, "xstats_error", n == -ENOTSUP ? "the driver has no xstats in this process"
						  : rte_strerror(-n));
}

/* GET /api/v1/ports/{name}/stats */
static unsigned int get_port_stats(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm;
	int i = find_port(r, body, &code, &shm);
	const struct sbx_port_shm *ps;
	struct sbx_port_counters sum;
	struct rte_eth_stats st;
	char ethname[RTE_ETH_NAME_MAX_LEN] = "";
	bool live = false;
	cJSON *o, *s;
	uint16_t w;

	if (i < 0)
		return code;
	ps = &shm->ports[i];
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "port", r->params[0]);
	cJSON_AddNumberToObject(o, "port_id", ps->port_id);
	cJSON_AddStringToObject(o, "kind", shm->cfg.ports[i].kind == SBX_PORT_PCAP_FILE ? "bridged" : "ethdev");
	/* bridged (pcap) ports are driven by the primary alone (docs/PCAP_SECONDARY.md): its numbers */
	if (shm->cfg.ports[i].kind != SBX_PORT_PCAP_FILE && rte_eth_dev_is_valid_port(ps->port_id)) {
		rte_eth_dev_get_name_by_port(ps->port_id, ethname);
		live = rte_eth_stats_get(ps->port_id, &st) == 0;
	}
	if (!live) {
		memset(&st, 0, sizeof(st));
#define ETHDEV_COPY(field, ...) st.field = ps->field;
		SBX_FOREACH_ETHDEV_COUNTER(ETHDEV_COPY)
#undef ETHDEV_COPY
	}
	if (ethname[0])
		cJSON_AddStringToObject(o, "ethdev", ethname);
	else
		cJSON_AddNullToObject(o, "ethdev");
	cJSON_AddStringToObject(o, "stats_source", live ? "ethdev" : "primary");
	s = cJSON_AddObjectToObject(o, "stats");
#define ETHDEV_KEY(field, key, ...) cJSON_AddNumberToObject(s, key, (double)st.field);
	SBX_FOREACH_ETHDEV_COUNTER(ETHDEV_KEY) /* rx_packets, ... (counters.h) */
#undef ETHDEV_KEY
	if (live) {
		xstats_json(o, ps->port_id);
	} else {
		cJSON_AddNullToObject(o, "xstats");
		cJSON_AddStringToObject(o, "xstats_error",
					shm->cfg.ports[i].kind == SBX_PORT_PCAP_FILE
						? "pcap port: read and written by the primary, not an ethdev of mgmt"
						: "port not attached in mgmt (secondary process)");
	}
	mgmt_port_worker_sum(shm, (uint16_t)i, mgmt_nb_workers(shm), &sum);
	mgmt_port_counters_json(cJSON_AddObjectToObject(o, "workers"), &sum);
	s = cJSON_AddArrayToObject(o, "per_worker");
	for (w = 0; w < mgmt_nb_workers(shm); w++) {
		cJSON *wo = cJSON_CreateObject();

		cJSON_AddNumberToObject(wo, "worker", w);
		mgmt_port_counters_json(wo, &sbx_shm_worker(shm, w)->stats.port[i]);
		cJSON_AddItemToArray(s, wo);
	}
	*body = o;
	return code;
}

/* PUT /api/v1/ports/{name}/link {"up": bool}: done by the primary (control.c), recorded as an event. */
static unsigned int put_port_link(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm;
	int i = find_port(r, body, &code, &shm);
	struct sbx_ctl_reply rep;
	uint32_t res;
	char detail[384];
	cJSON *doc, *up, *it;
	bool want;

	if (i < 0)
		return code;
	if (mgmt_run_on(r, MGMT_LANE_CONTROL)) /* it waits for the primary */
		return 0;
	doc = mgmt_parse_body(r, body, &code);
	if (doc == NULL)
		return code;
	up = cJSON_IsObject(doc) ? cJSON_GetObjectItemCaseSensitive(doc, "up") : NULL;
	if (!cJSON_IsBool(up)) {
		cJSON_Delete(doc);
		*body = mgmt_error(MHD_HTTP_UNPROCESSABLE_CONTENT, "up", "up: expected true or false");
		return MHD_HTTP_UNPROCESSABLE_CONTENT;
	}
	cJSON_ArrayForEach(it, doc) {
		if (it->string != NULL && strcmp(it->string, "up") != 0) {
			*body = mgmt_error(MHD_HTTP_UNPROCESSABLE_CONTENT, it->string, "%.64s: unknown member (only \"up\")",
					   it->string);
			cJSON_Delete(doc);
			return MHD_HTTP_UNPROCESSABLE_CONTENT;
		}
	}
	want = cJSON_IsTrue(up);
	cJSON_Delete(doc);
	res = mgmt_control(SBX_CTL_LINK_SET, (uint32_t)i, want ? 1 : 0, &rep); /* control lane: may wait */
	if (res == SBX_CTL_NONE || res == SBX_CTL_BUSY) {
		snprintf(r->retry_after, sizeof(r->retry_after), "1");
		*body = mgmt_error(MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "primary did not set the link: %s", rep.error);
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	if (res != SBX_CTL_OK) {
		snprintf(detail, sizeof(detail), "port %s link %s requested by %s refused: %s", r->params[0],
			 want ? "up" : "down", r->client, rep.error[0] ? rep.error : sbx_ctl_result_name(res));
		mgmt_db_audit(r->ctx->db, "port_link", detail, r->who);
		*body = mgmt_error(MHD_HTTP_CONFLICT, NULL, "port %s: %s", r->params[0],
				   rep.error[0] ? rep.error : sbx_ctl_result_name(res));
		return MHD_HTTP_CONFLICT;
	}
	snprintf(detail, sizeof(detail), "port %s link set %s by %s: now %s", r->params[0], want ? "up" : "down",
		 r->client, rep.link_up ? "up" : "down");
	mgmt_db_audit(r->ctx->db, "port_link", detail, r->who);
	*body = cJSON_CreateObject();
	cJSON_AddStringToObject(*body, "port", r->params[0]);
	cJSON_AddBoolToObject(*body, "requested_up", want);
	it = cJSON_AddObjectToObject(*body, "link");
	cJSON_AddBoolToObject(it, "up", rep.link_up != 0);
	cJSON_AddNumberToObject(it, "speed_mbps", shm->ports[i].link_speed);
	return code;
}

const struct mgmt_route mgmt_routes_ports[] = {
	{ "GET", "/api/v1/ports/{name}/stats", get_port_stats },
	{ "PUT", "/api/v1/ports/{name}/link", put_port_link },
	{ NULL, NULL, NULL },
};
