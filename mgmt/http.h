/* SPDX-License-Identifier: BSD-3-Clause */
/* The REST API (libmicrohttpd). */
#ifndef SBX_MGMT_HTTP_H
#define SBX_MGMT_HTTP_H

#include <stddef.h>
#include <stdio.h>

#include "spanbox/shm.h"

struct MHD_Daemon;
struct mgmt_db;

/** What the handlers read. Fixed while the daemon runs: main stops the daemon before changing it. */
struct mgmt_ctx {
	const struct sbx_shm *shm; /**< memzone, NULL when the appliance is down */
	const char *down_reason;   /**< why it is down (when shm is NULL) */
	struct mgmt_db *db;        /**< used only from the HTTP thread while the daemon runs */
	const char *token;         /**< bearer token every non-GET/HEAD request must carry (auth.h) */
	const char *web_root;      /**< realpath of the static files' directory, "" = none (static.h) */
	int *changes_in_flight;    /**< changes waiting for the primary (api_tables.c): main lets them
				        be answered before it stops the daemon */
};

/**
 * Start serving on @p listen_fd (a bound, listening TCP socket) with one internal polling thread.
 * @param ctx   must outlive the daemon.
 * @param err   receives the reason on failure.
 * @return the daemon, or NULL on failure (@p listen_fd stays open).
 */
struct MHD_Daemon *mgmt_http_start(int listen_fd, const struct mgmt_ctx *ctx, char *err,
				   size_t errlen);

/**
 * Print every route the server answers, one "METHOD PATH" a line, in matching order: the route
 * tables of api_*.c ("{x}" = one path segment), then the static files: "GET /" (index.html of the
 * web root) and "GET /{file}" (any other file under it). HEAD is served wherever GET is and is not
 * printed. Needs neither the EAL nor the database (spanbox-mgmt --routes).
 */
void mgmt_http_print_routes(FILE *f);

/**
 * Stop accepting, finish (close) open connections and stop the daemon, but keep the listening
 * socket open: new connections wait in its backlog.
 * @return the listening socket (now owned by the caller), or -1 if it could not be kept.
 */
int mgmt_http_stop(struct MHD_Daemon *d);

#endif
