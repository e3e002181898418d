/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Routes that show the appliance: health, status, workers (and their restart), pools, ports,
 * events, system facts and the copy probe. Each reads the memzone (never blocks) or the database;
 * a restart and the copy probe, which wait, run on lanes of http.c (api.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "attach.h"
#include "db.h"
#include "status.h"
#include "system.h"

/*
 * The live memzone and the worker named by path parameter {id} (digits, 0..nb_workers-1).
 * @return the worker id, or -1 with the 503 or 404 answer already set in *body and *code.
 */
static int find_worker(struct req *r, cJSON **body, unsigned int *code, const struct sbx_shm **shm)
{
	const char *s = r->params[0];
	long v;

	*shm = mgmt_need_shm(r, body, code);
	if (*shm == NULL)
		return -1;
	v = mgmt_decimal_param(s, 3);
	if (v < 0 || v >= (*shm)->cfg.nb_workers) {
		*body = mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "no worker %s", s);
		*code = MHD_HTTP_NOT_FOUND;
		return -1;
	}
	return (int)v;
}

/* GET /api/v1/health: from the memzone and /proc alone, never a request to the primary (it answers
 * at once whatever the primary does). An attached primary that does not answer (mgmt_primary_state)
 * is down, and degraded with a problem of kind "primary" saying why. */
static unsigned int get_health(struct req *r, cJSON **body)
{
	const struct sbx_shm *attached = __atomic_load_n(&r->ctx->shm, __ATOMIC_ACQUIRE);
	char why[256];

	*body = mgmt_health_json(mgmt_live_shm(r->ctx, why, sizeof(why)));
	if (attached != NULL && mgmt_primary_state(attached, why, sizeof(why)) == MGMT_PRIMARY_NOT_RESPONDING) {
		cJSON *p = cJSON_CreateObject();

		cJSON_AddStringToObject(p, "kind", "primary");
		cJSON_AddStringToObject(p, "message", why);
		cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(*body, "problems"), p);
		cJSON_ReplaceItemInObjectCaseSensitive(*body, "status", cJSON_CreateString("degraded"));
	}
	return MHD_HTTP_OK;
}

/* GET /status[?view=full|page]: the page's view leaves out what web/ does not show (status.h). */
static unsigned int get_status(struct req *r, cJSON **body)
{
	const char *v = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "view");
	enum mgmt_status_view view = MGMT_STATUS_VIEW_FULL;
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm;

	if (v != NULL && strcmp(v, "page") == 0) {
		view = MGMT_STATUS_VIEW_PAGE;
	} else if (v != NULL && strcmp(v, "full") != 0) {
		*body = mgmt_error(MHD_HTTP_BAD_REQUEST, "view", "view: '%.32s' is not a view of /status (full, page)", v);
		return MHD_HTTP_BAD_REQUEST;
	}
	shm = mgmt_need_shm(r, body, &code);
	if (shm != NULL)
		*body = mgmt_status_view_json(shm, r->ctx->db, view);
	if (shm != NULL && r->ctx->insecure) { /* mgmt's own: plain HTTP where TLS is due (auth.h) */
		cJSON *w = cJSON_CreateObject();

		cJSON_AddStringToObject(w, "kind", "mgmt_insecure");
		cJSON_AddStringToObject(w, "message", "mgmt.insecure: the API is plain HTTP on an address other "
				       "than 127.0.0.1: tokens and answers cross the network unencrypted");
		cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(*body, "warnings"), w);
	}
	return code;
}

static unsigned int get_workers(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = mgmt_need_shm(r, body, &code);
	uint16_t w;

	if (shm == NULL)
		return code;
	*body = cJSON_CreateArray();
	for (w = 0; w < shm->cfg.nb_workers && w < SBX_MAX_WORKERS; w++)
		cJSON_AddItemToArray(*body, mgmt_worker_json(shm, w));
	return code;
}

/* GET /workers/upgrade: the last upgrade of the workers (shm->upgrade). */
static unsigned int get_upgrade(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = mgmt_need_shm(r, body, &code);

	if (shm == NULL)
		return code;
	*body = mgmt_upgrade_json(shm);
	return code;
}

/* POST /workers/upgrade {"binary": PATH}: hand every worker over to standbys of PATH. The primary
 * checks the path and answers at once (control lane); the standbys of PATH check the layout
 * version and mempool drivers themselves (abi.h): GET /workers/upgrade says how it ends. */
static unsigned int post_upgrade(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_ACCEPTED;
	const struct sbx_shm *shm;
	struct sbx_ctl_reply rep;
	const cJSON *bin, *it;
	cJSON *in;
	uint32_t res;

	if (mgmt_run_on(r, MGMT_LANE_CONTROL))
		return 0;
	shm = mgmt_need_shm(r, body, &code);
	if (shm == NULL)
		return code;
	in = mgmt_parse_body(r, body, &code);
	if (in == NULL)
		return code;
	cJSON_ArrayForEach(it, in)
		if (it->string == NULL || strcmp(it->string, "binary") != 0) {
			*body = mgmt_error(422, it->string ? it->string : "", "unknown key");
			cJSON_Delete(in);
			return 422;
		}
	bin = cJSON_GetObjectItemCaseSensitive(in, "binary");
	if (!cJSON_IsString(bin) || bin->valuestring[0] != '/' || strlen(bin->valuestring) >= SBX_PATH_LEN) {
		*body = mgmt_error(422, "binary", "expected the absolute path of a spanbox-worker binary (< %d bytes)",
				   SBX_PATH_LEN);
		cJSON_Delete(in);
		return 422;
	}
	/* the one field of the memzone mgmt writes for the primary here: read while it handles the request */
	snprintf(((struct sbx_shm *)shm)->upgrade_path, SBX_PATH_LEN, "%s", bin->valuestring);
	res = mgmt_control(SBX_CTL_UPGRADE_WORKERS, 0, 0, &rep);
	if (res != SBX_CTL_OK) {
		code = res == SBX_CTL_FAILED ? MHD_HTTP_CONFLICT : MHD_HTTP_SERVICE_UNAVAILABLE;
		*body = mgmt_error(code, res == SBX_CTL_FAILED ? "binary" : NULL, "upgrade not started: %s",
				   rep.error[0] ? rep.error : sbx_ctl_result_name(res));
		cJSON_Delete(in);
		return code;
	}
	mgmt_db_audit(r->ctx->db, "workers_upgrade_request", bin->valuestring, r->who);
	*body = cJSON_CreateObject();
	cJSON_AddStringToObject(*body, "status", "upgrade started");
	cJSON_AddStringToObject(*body, "binary", bin->valuestring);
	cJSON_Delete(in);
	return MHD_HTTP_ACCEPTED;
}

static unsigned int get_standbys(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = mgmt_need_shm(r, body, &code);

	if (shm == NULL)
		return code;
	*body = mgmt_standbys_json(shm);
	return code;
}

static unsigned int get_worker(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm;
	int w = find_worker(r, body, &code, &shm);

	if (w < 0)
		return code;
	*body = mgmt_worker_json(shm, (uint16_t)w);
	return code;
}

/* POST /workers/{id}/restart: graceful restart (drain, exit, start again) or revive a failed one.
 * Runs on the control lane (it waits for the primary's answer). */
static unsigned int post_worker_restart(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_ACCEPTED;
	const struct sbx_shm *shm;
	struct sbx_ctl_reply rep;
	uint32_t before;
	char req[32];
	int w;

	if (mgmt_run_on(r, MGMT_LANE_CONTROL))
		return 0;
	w = find_worker(r, body, &code, &shm);
	if (w < 0)
		return code;
	/* read before the request: a hand-over to a standby counts the restart within a millisecond */
	before = sbx_shm_worker(shm, w)->restarts;
	if (mgmt_control(SBX_CTL_RESTART_WORKER, (uint32_t)w, 0, &rep) != SBX_CTL_OK) {
		*body = mgmt_error(MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "primary did not accept the restart: %s",
				   rep.error[0] ? rep.error : sbx_ctl_result_name(rep.result));
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	snprintf(req, sizeof(req), "worker %d", w);
	mgmt_db_audit(r->ctx->db, "worker_restart_request", req, r->who);
	*body = cJSON_CreateObject();
	cJSON_AddNumberToObject(*body, "worker", w);
	cJSON_AddStringToObject(*body, "status", "restart requested");
	cJSON_AddNumberToObject(*body, "restarts_before", before);
	return code;
}

static unsigned int get_pools(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = mgmt_need_shm(r, body, &code);
	uint32_t i;

	if (shm == NULL)
		return code;
	*body = cJSON_CreateArray();
	for (i = 0; i < shm->nb_pools && i < SBX_MAX_POOLS; i++)
		cJSON_AddItemToArray(*body, mgmt_pool_json(shm, i));
	return code;
}

/* GET /pools/{name}: the pool with its audit, computed on demand. */
static unsigned int get_pool(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = mgmt_need_shm(r, body, &code);
	uint32_t i;

	if (shm == NULL)
		return code;
	for (i = 0; i < shm->nb_pools && i < SBX_MAX_POOLS; i++) {
		if (strncmp(shm->pools[i].name, r->params[0], sizeof(shm->pools[i].name)) == 0) {
			*body = mgmt_pool_audit_json(shm, i);
			return *body ? code : MHD_HTTP_INTERNAL_SERVER_ERROR;
		}
	}
	*body = mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "no pool %s", r->params[0]);
	return MHD_HTTP_NOT_FOUND;
}

/* GET /events?limit=N (default 100, at most 1000)&kind=K (only that kind), newest first. */
static unsigned int get_events(struct req *r, cJSON **body)
{
	const char *l = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "limit");
	const char *kind = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "kind");
	char *end = NULL;
	long limit = l ? strtol(l, &end, 10) : 100;

	if (l != NULL && (*l == '\0' || *end != '\0' || limit < 1 || limit > 1000)) {
		*body = mgmt_error(MHD_HTTP_BAD_REQUEST, "limit", "limit: %s is not an integer in 1..1000", l);
		return MHD_HTTP_BAD_REQUEST;
	}
	if (kind != NULL && (kind[0] == '\0' || strlen(kind) > 64 || strspn(kind, "abcdefghijklmnopqrstuvwxyz_") != strlen(kind))) {
		*body = mgmt_error(MHD_HTTP_BAD_REQUEST, "kind", "kind: \"%.64s\" is not an event kind (a-z and _, at most 64)", kind);
		return MHD_HTTP_BAD_REQUEST;
	}
	*body = mgmt_db_events_json(r->ctx->db, (int)limit, kind);
	if (*body == NULL) {
		*body = mgmt_error(MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "database: cannot read events");
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	return MHD_HTTP_OK;
}

/* GET /system: sockets, lcores, hugepages, placement warnings (host facts even when down). */
static unsigned int get_system(struct req *r, cJSON **body)
{
	char why[256];

	*body = mgmt_system_json(mgmt_live_shm(r->ctx, why, sizeof(why)));
	return MHD_HTTP_OK;
}

/* GET /system/pci/{bdf}: 400 bad BDF, 404 no such device. */
static unsigned int get_system_pci(struct req *r, cJSON **body)
{
	char err[512];
	unsigned int code = mgmt_pci_json(r->params[0], body, err, sizeof(err));

	if (code != MHD_HTTP_OK)
		*body = mgmt_error(code, NULL, "%s", err);
	return code;
}

/* One port: what /status shows of it, plus its placement (socket, pool, pollers, PCIe). */
static cJSON *port_full_json(const struct sbx_shm *shm, uint16_t i)
{
	cJSON *o = mgmt_port_json(shm, i);

	if (o != NULL)
		mgmt_port_placement_json(o, shm, i);
	return o;
}

static unsigned int get_ports(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = mgmt_need_shm(r, body, &code);
	uint16_t i;

	if (shm == NULL)
		return code;
	*body = cJSON_CreateArray();
	for (i = 0; i < shm->cfg.nb_ports && i < SBX_MAX_PORTS; i++)
		cJSON_AddItemToArray(*body, port_full_json(shm, i));
	return code;
}

static unsigned int get_port(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = mgmt_need_shm(r, body, &code);
	int i;

	if (shm == NULL)
		return code;
	i = mgmt_port_index(shm, r->params[0]);
	if (i < 0) {
		*body = mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "no port %s", r->params[0]);
		return MHD_HTTP_NOT_FOUND;
	}
	*body = port_full_json(shm, (uint16_t)i);
	return code;
}

/* The copy probe's run, waited for on the probe lane. */
struct probe_wait {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
};

/* Called by the probe's thread when its result is ready. */
static void probe_done(void *arg)
{
	struct probe_wait *w = arg;

	pthread_mutex_lock(&w->lock);
	w->done = true;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* Probe lane: run the accepted probe and answer with its result. */
static void probe_work(void *arg, struct mgmt_answer *a)
{
	struct probe_wait w = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	char err[512];

	(void)arg;
	if (a->code == 0)
		return;
	if (mgmt_memprobe_launch(probe_done, &w) != 0) {
		a->code = MHD_HTTP_INTERNAL_SERVER_ERROR;
		a->body = mgmt_error(a->code, NULL, "cannot start the copy probe");
		return;
	}
	pthread_mutex_lock(&w.lock);
	while (!w.done)
		pthread_cond_wait(&w.cond, &w.lock);
	pthread_mutex_unlock(&w.lock);
	a->code = mgmt_memprobe_result(&a->body, err, sizeof(err));
	if (a->body == NULL)
		a->body = mgmt_error(a->code, NULL, "%s", err);
}

/*
 * POST /system/memprobe: an accepted run is deferred to the probe lane (probe_work). The
 * body is optional; when there is one it goes through mgmt_parse_body() first (415 unless
 * application/json, 400 with the byte offset when it is not JSON).
 */
static unsigned int post_memprobe(struct req *r, cJSON **body)
{
	unsigned int retry = 0, code;
	char err[512];

	if (r->body_len > 0 && r->body[strspn(r->body, " \t\r\n")] != '\0') {
		cJSON *doc = mgmt_parse_body(r, body, &code);

		if (doc == NULL)
			return code;
		cJSON_Delete(doc);
	}
	code = mgmt_memprobe_accept(r->body, r->body_len, &retry, err, sizeof(err));
	if (code == MHD_HTTP_TOO_MANY_REQUESTS)
		snprintf(r->retry_after, sizeof(r->retry_after), "%u", retry);
	if (code != 0) {
		*body = mgmt_error(code, NULL, "%s", err);
		return code;
	}
	mgmt_defer(r, MGMT_LANE_PROBE, probe_work, NULL);
	return 0;
}

const struct mgmt_route mgmt_routes_core[] = {
	{ "GET", "/api/v1/health", get_health },
	{ "GET", "/api/v1/status", get_status },
	{ "GET", "/api/v1/workers", get_workers },
	{ "GET", "/api/v1/workers/upgrade", get_upgrade },
	{ "POST", "/api/v1/workers/upgrade", post_upgrade },
	{ "GET", "/api/v1/workers/{id}", get_worker },
	{ "POST", "/api/v1/workers/{id}/restart", post_worker_restart },
	{ "GET", "/api/v1/standbys", get_standbys },
	{ "GET", "/api/v1/pools", get_pools },
	{ "GET", "/api/v1/pools/{name}", get_pool },
	{ "GET", "/api/v1/events", get_events },
	{ "GET", "/api/v1/ports", get_ports },
	{ "GET", "/api/v1/ports/{name}", get_port },
	{ "GET", "/api/v1/system", get_system },
	{ "GET", "/api/v1/system/pci/{bdf}", get_system_pci },
	{ "POST", "/api/v1/system/memprobe", post_memprobe },
	{ NULL, NULL, NULL },
};
