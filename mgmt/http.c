/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Routes of the REST API. Every response is JSON, errors included:
 * {"error":{"code":N,"message":"..."}}.
 *
 * Threading: MHD_USE_INTERNAL_POLLING_THREAD (+ epoll where available), i.e. a single thread runs
 * every handler. Requests are short reads of shared memory that never block, so one thread keeps
 * up, and handlers never race each other. The SQLite connection is also used by the main thread
 * (event import), so it is opened SQLITE_OPEN_FULLMUTEX (db.c). A restart request waits up to 1 s
 * for the primary's answer over rte_mp: the only handler that can block.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "attach.h"
#include "db.h"
#include "http.h"
#include "status.h"
#include "system.h"

#define MAX_BODY 4096 /* bytes of request body kept; a longer body is refused (413) */

/** Per connection: the request body, and whether it waits for the copy probe. */
struct conn_state {
	char body[MAX_BODY + 1];
	size_t len;
	bool too_big;      /**< the body was longer than MAX_BODY */
	bool suspended;    /**< waiting for the copy probe; the next call answers with its result */
};

/** What a handler gets: the path parameters ({id}, {name}) and the connection (query args). */
struct req {
	const struct mgmt_ctx *ctx;
	struct MHD_Connection *conn;
	char params[2][64];
	int nparams;
	const char *body;       /**< request body (NUL-terminated), "" when none */
	size_t body_len;
	bool suspend;           /**< set by a handler: suspend the connection, answer later */
	char retry_after[16];   /**< set by a handler: Retry-After header value */
};

/** A route handler: returns the HTTP status and sets *body (NULL when out of memory). */
typedef unsigned int (*route_fn)(struct req *r, cJSON **body);

static cJSON *error_json(unsigned int code, const char *fmt, const char *a, const char *b)
{
	cJSON *o = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(o, "error");
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, a, b);
	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", msg);
	return o;
}

/* The memzone if the primary is alive right now, else NULL with the reason in @p why. */
static const struct sbx_shm *live_shm(const struct mgmt_ctx *ctx, char *why, size_t len)
{
	if (ctx->shm == NULL) {
		snprintf(why, len, "%s", ctx->down_reason);
		return NULL;
	}
	return mgmt_primary_alive(ctx->shm, why, len) ? ctx->shm : NULL;
}

/* live_shm() or a 503 body. */
static const struct sbx_shm *need_shm(struct req *r, cJSON **body, unsigned int *code)
{
	char why[256];
	const struct sbx_shm *shm = live_shm(r->ctx, why, sizeof(why));

	if (shm == NULL) {
		*body = error_json(MHD_HTTP_SERVICE_UNAVAILABLE, "appliance down: %s%s", why, "");
		*code = MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	return shm;
}

/*
 * The live memzone and the worker named by path parameter {id} (digits, 0..nb_workers-1).
 * @return the worker id, or -1 with the 503 or 404 answer already set in *body and *code.
 */
static int find_worker(struct req *r, cJSON **body, unsigned int *code, const struct sbx_shm **shm)
{
	const char *s = r->params[0];
	char *end;
	long v;

	*shm = need_shm(r, body, code);
	if (*shm == NULL)
		return -1;
	v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v < 0 || v >= (*shm)->cfg.nb_workers || strlen(s) > 3) {
		*body = error_json(MHD_HTTP_NOT_FOUND, "no worker %s%s", s, "");
		*code = MHD_HTTP_NOT_FOUND;
		return -1;
	}
	return (int)v;
}

static unsigned int get_health(struct req *r, cJSON **body)
{
	char why[256];

	*body = mgmt_health_json(live_shm(r->ctx, why, sizeof(why)));
	return MHD_HTTP_OK;
}

static unsigned int get_status(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = need_shm(r, body, &code);

	if (shm != NULL)
		*body = mgmt_status_json(shm, r->ctx->db);
	return code;
}

static unsigned int get_workers(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = need_shm(r, body, &code);
	uint16_t w;

	if (shm == NULL)
		return code;
	*body = cJSON_CreateArray();
	for (w = 0; w < shm->cfg.nb_workers && w < SBX_MAX_WORKERS; w++)
		cJSON_AddItemToArray(*body, mgmt_worker_json(shm, w));
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

/* POST /workers/{id}/restart: graceful restart (drain, exit, start again) or revive a failed one. */
static unsigned int post_worker_restart(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_ACCEPTED;
	const struct sbx_shm *shm;
	char answer[128], req[32];
	int w = find_worker(r, body, &code, &shm);

	if (w < 0)
		return code;
	snprintf(req, sizeof(req), "restart-worker %d", w);
	if (mgmt_control(req, answer, sizeof(answer)) != 0 || strcmp(answer, "ok") != 0) {
		*body = error_json(MHD_HTTP_SERVICE_UNAVAILABLE, "primary did not accept the restart: %s%s",
				   answer, "");
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	*body = cJSON_CreateObject();
	cJSON_AddNumberToObject(*body, "worker", w);
	cJSON_AddStringToObject(*body, "status", "restart requested");
	cJSON_AddNumberToObject(*body, "restarts_before", shm->workers[w].restarts);
	return code;
}

static unsigned int get_pools(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = need_shm(r, body, &code);
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
	const struct sbx_shm *shm = need_shm(r, body, &code);
	uint32_t i;

	if (shm == NULL)
		return code;
	for (i = 0; i < shm->nb_pools && i < SBX_MAX_POOLS; i++) {
		if (strncmp(shm->pools[i].name, r->params[0], sizeof(shm->pools[i].name)) == 0) {
			*body = mgmt_pool_audit_json(shm, i);
			return *body ? code : MHD_HTTP_INTERNAL_SERVER_ERROR;
		}
	}
	*body = error_json(MHD_HTTP_NOT_FOUND, "no pool %s%s", r->params[0], "");
	return MHD_HTTP_NOT_FOUND;
}

/* GET /events?limit=N (default 100, at most 1000), newest first. */
static unsigned int get_events(struct req *r, cJSON **body)
{
	const char *l = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "limit");
	char *end = NULL;
	long limit = l ? strtol(l, &end, 10) : 100;

	if (l != NULL && (*l == '\0' || *end != '\0' || limit < 1 || limit > 1000)) {
		*body = error_json(MHD_HTTP_BAD_REQUEST, "limit: %s is not an integer in 1..1000%s", l, "");
		return MHD_HTTP_BAD_REQUEST;
	}
	*body = mgmt_db_events_json(r->ctx->db, (int)limit);
	if (*body == NULL) {
		*body = error_json(MHD_HTTP_SERVICE_UNAVAILABLE, "database: cannot read events%s%s", "", "");
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	return MHD_HTTP_OK;
}

/* GET /system: sockets, lcores, hugepages, placement warnings (host facts even when down). */
static unsigned int get_system(struct req *r, cJSON **body)
{
	char why[256];

	*body = mgmt_system_json(live_shm(r->ctx, why, sizeof(why)));
	return MHD_HTTP_OK;
}

/* GET /system/pci/{bdf}: 400 bad BDF, 404 no such device. */
static unsigned int get_system_pci(struct req *r, cJSON **body)
{
	char err[512];
	unsigned int code = mgmt_pci_json(r->params[0], body, err, sizeof(err));

	if (code != MHD_HTTP_OK)
		*body = error_json(code, "%s%s", err, "");
	return code;
}

/* Index of port @p name in the running config, or -1. */
static int port_index(const struct sbx_shm *shm, const char *name)
{
	uint16_t i;

	for (i = 0; i < shm->cfg.nb_ports && i < SBX_MAX_PORTS; i++)
		if (strncmp(shm->cfg.ports[i].name, name, sizeof(shm->cfg.ports[i].name)) == 0)
			return i;
	return -1;
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
	const struct sbx_shm *shm = need_shm(r, body, &code);
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
	const struct sbx_shm *shm = need_shm(r, body, &code);
	int i;

	if (shm == NULL)
		return code;
	i = port_index(shm, r->params[0]);
	if (i < 0) {
		*body = error_json(MHD_HTTP_NOT_FOUND, "no port %s%s", r->params[0], "");
		return MHD_HTTP_NOT_FOUND;
	}
	*body = port_full_json(shm, (uint16_t)i);
	return code;
}

/* POST /system/memprobe: accepted runs suspend the connection (answered by resume_probe()). */
static unsigned int post_memprobe(struct req *r, cJSON **body)
{
	unsigned int retry = 0, code;
	char err[512];

	code = mgmt_memprobe_accept(r->body, r->body_len, &retry, err, sizeof(err));
	if (code == MHD_HTTP_TOO_MANY_REQUESTS)
		snprintf(r->retry_after, sizeof(r->retry_after), "%u", retry);
	if (code != 0) {
		*body = error_json(code, "%s%s", err, "");
		return code;
	}
	r->suspend = true;
	return 0;
}

/* Called by the probe's thread when its result is ready. */
static void resume_probe(void *conn)
{
	MHD_resume_connection(conn);
}

static const struct route {
	const char *method; /* HEAD is served wherever GET is */
	const char *path;   /* "{x}" matches one path segment, passed to the handler */
	route_fn fn;
} routes[] = {
	{ "GET", "/api/v1/health", get_health },
	{ "GET", "/api/v1/status", get_status },
	{ "GET", "/api/v1/workers", get_workers },
	{ "GET", "/api/v1/workers/{id}", get_worker },
	{ "POST", "/api/v1/workers/{id}/restart", post_worker_restart },
	{ "GET", "/api/v1/pools", get_pools },
	{ "GET", "/api/v1/pools/{name}", get_pool },
	{ "GET", "/api/v1/events", get_events },
	{ "GET", "/api/v1/ports", get_ports },
	{ "GET", "/api/v1/ports/{name}", get_port },
	{ "GET", "/api/v1/system", get_system },
	{ "GET", "/api/v1/system/pci/{bdf}", get_system_pci },
	{ "POST", "/api/v1/system/memprobe", post_memprobe },
};

/* Match @p url against a route template, collecting "{x}" segments. */
static bool match(const char *tmpl, const char *url, struct req *r)
{
	r->nparams = 0;
	while (*tmpl && *url) {
		if (*tmpl == '{') {
			size_t n = strcspn(url, "/");

			if (n == 0 || n >= sizeof(r->params[0]) || r->nparams == 2)
				return false;
			memcpy(r->params[r->nparams], url, n);
			r->params[r->nparams++][n] = '\0';
			url += n;
			tmpl = strchr(tmpl, '}') + 1;
			continue;
		}
		if (*tmpl++ != *url++)
			return false;
	}
	return *tmpl == '\0' && *url == '\0';
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, cJSON *body,
			     const char *hname, const char *hvalue)
{
	static const char oom[] = "{\"error\":{\"code\":500,\"message\":\"out of memory\"}}";
	char *text = body ? cJSON_PrintUnformatted(body) : NULL;
	struct MHD_Response *r;
	enum MHD_Result ret;

	cJSON_Delete(body);
	if (text != NULL) {
		r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	} else {
		code = MHD_HTTP_INTERNAL_SERVER_ERROR;
		r = MHD_create_response_from_buffer(strlen(oom), (void *)oom, MHD_RESPMEM_PERSISTENT);
	}
	if (r == NULL) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (hname != NULL && hvalue != NULL && hvalue[0])
		MHD_add_response_header(r, hname, hvalue);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	const struct mgmt_ctx *ctx = cls;
	const char *m = strcmp(method, "HEAD") == 0 ? "GET" : method;
	struct conn_state *st = *con_cls;
	char allow[64] = "", err[512];
	size_t i;

	(void)version;
	/* Answer once the whole request is read: replying from the first call would make MHD close
	 * the connection instead of keeping it alive. The body is kept (up to MAX_BODY bytes). */
	if (st == NULL) {
		st = calloc(1, sizeof(*st));
		if (st == NULL)
			return MHD_NO;
		*con_cls = st;
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		if (st->len + *upload_data_size > MAX_BODY) {
			st->too_big = true;
		} else {
			memcpy(st->body + st->len, upload_data, *upload_data_size);
			st->len += *upload_data_size;
			st->body[st->len] = '\0';
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (st->suspended) { /* resumed by the copy probe's thread */
		cJSON *body = NULL;
		unsigned int code;

		st->suspended = false;
		code = mgmt_memprobe_result(&body, err, sizeof(err));
		if (body == NULL)
			body = error_json(code, "%s%s", err, "");
		return reply(c, code, body, NULL, NULL);
	}
	if (st->too_big)
		return reply(c, MHD_HTTP_CONTENT_TOO_LARGE,
			     error_json(MHD_HTTP_CONTENT_TOO_LARGE, "request body longer than %s bytes%s", "4096", ""),
			     NULL, NULL);
	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		struct req r = { .ctx = ctx, .conn = c, .body = st->body, .body_len = st->len };

		if (!match(routes[i].path, url, &r))
			continue;
		if (strcmp(routes[i].method, m) == 0) {
			cJSON *body = NULL;
			unsigned int code = routes[i].fn(&r, &body);

			if (r.suspend) {
				/* suspend first, then start the work that resumes it: never the other way */
				st->suspended = true;
				MHD_suspend_connection(c);
				if (mgmt_memprobe_launch(resume_probe, c) != 0) {
					st->suspended = false;
					MHD_resume_connection(c);
					return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
						     error_json(MHD_HTTP_INTERNAL_SERVER_ERROR,
								"cannot start the copy probe%s%s", "", ""),
						     NULL, NULL);
				}
				return MHD_YES;
			}
			return reply(c, code, body, MHD_HTTP_HEADER_RETRY_AFTER, r.retry_after);
		}
		snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow), "%s%s",
			 allow[0] ? ", " : "", routes[i].method);
		if (strcmp(routes[i].method, "GET") == 0)
			snprintf(allow + strlen(allow), sizeof(allow) - strlen(allow), ", HEAD");
	}
	if (allow[0])
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED,
			     error_json(MHD_HTTP_METHOD_NOT_ALLOWED, "method %s not allowed on %s",
					method, url),
			     MHD_HTTP_HEADER_ALLOW, allow);
	return reply(c, MHD_HTTP_NOT_FOUND,
		     error_json(MHD_HTTP_NOT_FOUND, "no route %s %s", method, url), NULL, NULL);
}

/* The request is over (answered, or the client went away): free its state. */
static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)c;
	(void)toe;
	free(*con_cls);
	*con_cls = NULL;
}

struct MHD_Daemon *mgmt_http_start(int listen_fd, const struct mgmt_ctx *ctx, char *err,
				   size_t errlen)
{
	/* See the top of the file for why one internal polling thread. ITC: MHD_quiesce_daemon. */
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG |
			     MHD_ALLOW_SUSPEND_RESUME;
	struct MHD_Daemon *d;

	flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL
									  : MHD_USE_POLL;
	d = MHD_start_daemon(flags, 0, NULL, NULL, handle, (void *)ctx,
			     MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)64,
			     MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
			     MHD_OPTION_END);
	if (d == NULL)
		snprintf(err, errlen, "MHD_start_daemon failed");
	return d;
}

int mgmt_http_stop(struct MHD_Daemon *d)
{
	MHD_socket fd;

	mgmt_memprobe_shutdown(); /* its thread resumes a connection of this daemon */
	fd = MHD_quiesce_daemon(d);

	MHD_stop_daemon(d);
	return fd == MHD_INVALID_SOCKET ? -1 : (int)fd;
}
