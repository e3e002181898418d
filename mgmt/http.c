/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Routes of the REST API. Every response is JSON, errors included:
 * {"error":{"code":N,"message":"..."}}.
 *
 * Threading: MHD_USE_INTERNAL_POLLING_THREAD (+ epoll where available), i.e. a single thread runs
 * every handler. Requests are short reads of shared memory that never block, so one thread
 * keeps up, and it means the SQLite handle is only ever used by one thread: no locking around it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "attach.h"
#include "db.h"
#include "http.h"
#include "status.h"

/** A route handler: returns the HTTP status and sets *body (NULL when out of memory). */
typedef unsigned int (*route_fn)(const struct mgmt_ctx *ctx, cJSON **body);

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

static unsigned int get_health(const struct mgmt_ctx *ctx, cJSON **body)
{
	char why[256];

	*body = mgmt_health_json(live_shm(ctx, why, sizeof(why)));
	return MHD_HTTP_OK;
}

static unsigned int get_status(const struct mgmt_ctx *ctx, cJSON **body)
{
	char why[256];
	const struct sbx_shm *shm = live_shm(ctx, why, sizeof(why));

	if (shm == NULL) {
		*body = error_json(MHD_HTTP_SERVICE_UNAVAILABLE, "appliance down: %s%s", why, "");
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	*body = mgmt_status_json(shm, ctx->db);
	return MHD_HTTP_OK;
}

static const struct route {
	const char *method; /* HEAD is served wherever GET is */
	const char *path;
	route_fn fn;
} routes[] = {
	{ "GET", "/api/v1/health", get_health },
	{ "GET", "/api/v1/status", get_status },
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code, cJSON *body,
			     const char *allow)
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
	if (allow != NULL)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
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
	char allow[64] = "";
	size_t i;

	(void)version;
	(void)upload_data;
	/* Answer once the whole request is read (a request body is ignored): replying from the
	 * first call would make MHD close the connection instead of keeping it alive. */
	if (*con_cls == NULL) {
		*con_cls = (void *)1;
		return MHD_YES;
	}
	if (*upload_data_size != 0) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (strcmp(routes[i].path, url) != 0)
			continue;
		if (strcmp(routes[i].method, m) == 0) {
			cJSON *body = NULL;
			unsigned int code = routes[i].fn(ctx, &body);

			return reply(c, code, body, NULL);
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
			     allow);
	return reply(c, MHD_HTTP_NOT_FOUND,
		     error_json(MHD_HTTP_NOT_FOUND, "no route %s %s", method, url), NULL);
}

struct MHD_Daemon *mgmt_http_start(int listen_fd, const struct mgmt_ctx *ctx, char *err,
				   size_t errlen)
{
	/* See the top of the file for why one internal polling thread. ITC: MHD_quiesce_daemon. */
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	struct MHD_Daemon *d;

	flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL
									  : MHD_USE_POLL;
	d = MHD_start_daemon(flags, 0, NULL, NULL, handle, (void *)ctx,
			     MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)10,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)64,
			     MHD_OPTION_END);
	if (d == NULL)
		snprintf(err, errlen, "MHD_start_daemon failed");
	return d;
}

int mgmt_http_stop(struct MHD_Daemon *d)
{
	MHD_socket fd = MHD_quiesce_daemon(d);

	MHD_stop_daemon(d);
	return fd == MHD_INVALID_SOCKET ? -1 : (int)fd;
}
