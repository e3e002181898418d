/* SPDX-License-Identifier: BSD-3-Clause */
/* The REST API (libmicrohttpd). */
#ifndef SBX_MGMT_HTTP_H
#define SBX_MGMT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "spanbox/shm.h"

struct MHD_Daemon;
struct mgmt_db;

/** What the handlers read. Fixed while the daemon runs: main stops the daemon before changing it. */
struct mgmt_ctx {
	const struct sbx_shm *shm; /**< memzone, NULL when the appliance is down */
	const char *down_reason;   /**< why it is down (when shm is NULL) */
	struct mgmt_db *db;        /**< used by the HTTP thread and its lanes while the daemon runs
				        (the connection is SQLITE_OPEN_FULLMUTEX) */
	const char *token;         /**< the admin token: every non-GET/HEAD request must carry it (auth.h) */
	const char *viewer_token;  /**< the viewer token (GET/HEAD only), "" = no viewer role */
	bool reads_open;           /**< GET/HEAD need no token (mgmt listens on 127.0.0.1: mgmt_reads_open()) */
	bool insecure;             /**< mgmt.insecure was needed: plain HTTP on another address (/status warns) */
	const char *tls_cert;      /**< PEM certificate: HTTPS only; NULL = plain HTTP (tls.h) */
	const char *tls_key;       /**< PEM private key (with tls_cert) */
	const char *web_root;      /**< realpath of the static files' directory, "" = none (static.h) */
	int *changes_in_flight;    /**< changes waiting for the primary (api_tables.c): main lets them
				        be answered before it stops the daemon */
};

#define MGMT_HTTP_CONN_MAX 1024 /**< connections at most (fewer when RLIMIT_NOFILE is lower) */
#define MGMT_HTTP_REQUEST_S 10  /**< s a connection has to send a complete request in, counted
				     from its accept or from its previous answer (idle included) */
#define MGMT_HTTP_ANSWER_S 10   /**< s an answer has to be sent in (a client that does not read) */

/** The connection limits of the running daemon (sized by mgmt_http_start()). */
struct mgmt_http_limits {
	unsigned int limit;     /**< connections libmicrohttpd holds at most
				     (MHD_OPTION_CONNECTION_LIMIT): min(MGMT_HTTP_CONN_MAX, (fds allowed -
				     fds open at start - 64) / 2) */
	unsigned int high;      /**< above this many in all, a new connection closes the oldest idle
				     one (limit - max(limit / 16, 8): a reserve for new clients) */
	unsigned int share_max; /**< above this many from one client address, likewise
				     (3/4 of limit) */
	unsigned int request_s; /**< MGMT_HTTP_REQUEST_S */
	unsigned int answer_s;  /**< MGMT_HTTP_ANSWER_S */
};

/**
 * Start serving on @p listen_fd (a bound, listening TCP socket) with one internal polling thread;
 * HTTPS only (TLS 1.2 and 1.3, MGMT_TLS_PRIORITIES of tls.h) when ctx->tls_cert is set.
 * @param ctx   must outlive the daemon.
 * @param err   receives the reason on failure.
 * @return the daemon, or NULL on failure (@p listen_fd stays open).
 */
struct MHD_Daemon *mgmt_http_start(int listen_fd, const struct mgmt_ctx *ctx, char *err,
				   size_t errlen);

/** Connections the guard closed, by reason, since mgmt started (monotonic counts). */
struct mgmt_http_closes {
	uint64_t deadline_waiting;   /**< no complete request MGMT_HTTP_REQUEST_S after the connection
					  opened or its previous answer (idle keep-alive, slow client) */
	uint64_t deadline_answering; /**< answer not sent MGMT_HTTP_ANSWER_S after its request (a client
					  that does not read; an answer being made that long is a bug) */
	uint64_t evicted;            /**< waiting connections closed at the connection limits */
	uint64_t stale;              /**< entries whose fd no longer was their connection: marked closed,
					  nothing shut down */
};

/**
 * Copy the guard's close counts into @p out (takes the guard's lock; any thread).
 */
void mgmt_http_closes(struct mgmt_http_closes *out);

/**
 * Whether a connection that entered its phase at @p since_ns is past a deadline of @p max_ns at
 * @p now_ns (all CLOCK_MONOTONIC ns, sbx_now_ns()). A stamp at or after @p now_ns (made by another
 * thread after the clock was read) is never overdue: the unsigned difference would wrap.
 */
bool mgmt_http_overdue(uint64_t now_ns, uint64_t since_ns, uint64_t max_ns);

/**
 * The limits mgmt_http_start() chose (see struct mgmt_http_limits; it raises the soft
 * RLIMIT_NOFILE, up to the hard one, to 2 fds a connection). Valid while the daemon runs.
 */
const struct mgmt_http_limits *mgmt_http_limits(void);

/**
 * Close the connections past a deadline: a request not complete MGMT_HTTP_REQUEST_S after the
 * connection opened or after its previous answer, an answer not sent MGMT_HTTP_ANSWER_S after its
 * request (a connection waiting for a lane has none). Closing is a shutdown(2) of the
 * socket: libmicrohttpd closes the connection on its next turn, without an answer. Logs (stderr,
 * at most once per 10 s) how many connections the limits closed to make room. Call it
 * periodically (mgmt's main loop: every 100 ms) from one thread while the daemon runs; cheap
 * (one pass over the connection table).
 */
void mgmt_http_sweep(void);

/**
 * Print every route the server answers, one "METHOD PATH" a line, in matching order: the route
 * tables of api_*.c ("{x}" = one path segment), then the static files: "GET /" (index.html of the
 * web root) and "GET /{file}" (any other file under it). HEAD is served wherever GET is and is not
 * printed. Needs neither the EAL nor the database (spanbox-mgmt --routes).
 */
void mgmt_http_print_routes(FILE *f);

/**
 * Stop accepting, finish (close) open connections and stop the daemon, but keep the listening
 * socket open: new connections wait in its backlog. A request waiting for a lane is answered
 * first (up to 30 s for its job, 2 s for the answers to go out); the lanes' threads are stopped.
 * @return the listening socket (now owned by the caller), or -1 if it could not be kept.
 */
int mgmt_http_stop(struct MHD_Daemon *d);

/**
 * (api_tables.c) Read the config file the primary of @p shm runs (shm->config_path) once, at
 * attach: a change whose forwarding and mirrors equal the file's stores nothing (back to the
 * file). NULL, or an unreadable file, forgets it (every change is then stored). Call it from main
 * before the daemon starts; the changes lane reads it.
 */
void mgmt_tables_attach(const struct sbx_shm *shm);

#endif
