/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Routes GET and PUT /api/v1/flows/config (issue #28, docs/FLOWS.md, docs/RUNTIME_TABLES.md
 * "Flows"): the flows section as it runs, and replaced as a whole at run time like every runtime
 * table (mgmt_tables_change: validated by sbx_config_parse, stored in SQLite, applied by the
 * primary; the workers take the new ports and timeouts between two bursts, the exporter re-opens
 * the collectors that changed). flows_per_worker (the size of the workers' tables) is static: a
 * PUT that gives another value is refused (409 naming flows.flows_per_worker), one that leaves it
 * out keeps the running value.
 */
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "shmview.h"
#include "spanbox/shm.h"
#include "validate.h"

#define NUM(o, k, v) cJSON_AddNumberToObject((o), (k), (double)(v))

/* The flows section of @p cfg in the form PUT takes (every key, explicit). */
static cJSON *flows_config_json(const struct sbx_config *cfg)
{
	const struct sbx_flows_cfg *f = &cfg->flows;
	cJSON *o = cJSON_CreateObject(), *a;
	uint16_t i;

	cJSON_AddBoolToObject(o, "enabled", f->enabled);
	a = cJSON_AddArrayToObject(o, "ports");
	for (i = 0; i < cfg->nb_ports && i < SBX_MAX_PORTS; i++) {
		const bool rx = (f->port_mask >> i) & 1, tx = (f->tx_mask >> i) & 1;

		if (rx || tx) {
			cJSON *p = cJSON_CreateObject();

			cJSON_AddStringToObject(p, "port", cfg->ports[i].name);
			cJSON_AddStringToObject(p, "direction",
						sbx_direction_name((rx ? SBX_DIR_RX : 0) | (tx ? SBX_DIR_TX : 0)));
			cJSON_AddItemToArray(a, p);
		}
	}
	a = cJSON_AddArrayToObject(o, "sessions");
	for (i = 0; i < f->nb_sessions && i < SBX_MAX_MAPS + SBX_MAX_MIRRORS; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(f->session_ids[i]));
	NUM(o, "active_timeout_s", f->active_s);
	NUM(o, "idle_timeout_s", f->idle_s);
	NUM(o, "flows_per_worker", f->capacity);
	NUM(o, "observation_domain_id", f->domain);
	NUM(o, "template_period_s", f->template_period_s);
	cJSON_AddBoolToObject(o, "biflow", f->biflow);
	a = cJSON_AddArrayToObject(o, "collectors");
	for (i = 0; i < f->nb_collectors && i < SBX_MAX_FLOW_COLLECTORS; i++) {
		cJSON *k = cJSON_CreateObject();

		cJSON_AddStringToObject(k, "address", f->collectors[i].address);
		NUM(k, "port", f->collectors[i].port);
		cJSON_AddStringToObject(k, "transport", f->collectors[i].transport ? "tcp" : "udp");
		cJSON_AddItemToArray(a, k);
	}
	return o;
}

/* GET /flows/config: the running flows section (the active tables'). */
static unsigned int get_flows_config(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = mgmt_need_shm(r, body, &code);

	if (shm == NULL)
		return code;
	*body = flows_config_json(sbx_shm_cfg(shm));
	return code;
}

/* PUT /flows/config: the whole flows section replaced (live, stored); 200 with the section as GET.
 * The checks of the body: mgmt_merge_put_flows (validate.c, also fuzzed), then sbx_config_parse. */
static unsigned int put_flows_config(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	struct mgmt_verdict v;
	cJSON *in, *doc;

	if (!mgmt_change_begin(r, body, &code, NULL, &in, &doc))
		return code;
	code = mgmt_merge_put_flows(in, doc, &v);
	cJSON_Delete(in);
	if (code != 0) {
		cJSON_Delete(doc);
		*body = mgmt_error(v.code, v.field, "%s", v.msg);
		return v.code;
	}
	code = mgmt_tables_change(r, body, doc, "config_change", "PUT /api/v1/flows/config: flows section replaced",
				  MHD_HTTP_OK, NULL, NULL);
	if (code == MHD_HTTP_OK)
		return get_flows_config(r, body);
	return code;
}

const struct mgmt_route mgmt_routes_flows_config[] = {
	{ "GET", "/api/v1/flows/config", get_flows_config },
	{ "PUT", "/api/v1/flows/config", put_flows_config },
	{ NULL, NULL, NULL },
};
