/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file api.h
 * What every REST route handler sees. Routes live in tables, one per concern (api_*.c); the
 * server (http.c) matches the method and path, checks authentication for mutating routes, reads
 * the body and calls the handler. Every answer is JSON, errors as
 * {"error":{"code":N,"message":"...","field":"..."?}}.
 *
 * The HTTP thread never waits: a handler that must wait (for the primary, for the copy probe)
 * runs on a lane (enum mgmt_lane), a thread of http.c that runs its jobs one after the other
 * while the connection is suspended; the lane resumes it with the answer. Two ways: a handler
 * moves itself to a lane (mgmt_run_on(): it runs again there, whole, on a copy of the request),
 * or it defers part of its work with mgmt_defer().
 */
#ifndef SBX_MGMT_API_H
#define SBX_MGMT_API_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>
#include <microhttpd.h>

#include "http.h"
#include "spanbox/config.h"

/**
 * Threads of http.c that run what may block, each its jobs one at a time in order of arrival.
 * MGMT_LANE_INLINE is the HTTP thread itself (handlers that only read memory or the database).
 */
enum mgmt_lane {
	MGMT_LANE_INLINE = 0, /**< run on the HTTP thread: must not wait */
	MGMT_LANE_CHANGES,    /**< runtime-table changes (api_tables.c): one change at a time, each read,
			           validated, stored and applied before the next one starts */
	MGMT_LANE_CONTROL,    /**< worker restarts and link changes (SBX_IPC_CTL: one pending request at
			           a time, and never behind a change) */
	MGMT_LANE_PROBE,      /**< the copy probe (seconds) */
	MGMT_LANE_SLOW,       /**< slowed 401 answers (auth.h MGMT_AUTH_SLOW_MS each, in order) */
	MGMT_LANES
};

/** The answer of deferred work, filled by the work function on its lane. */
struct mgmt_answer {
	unsigned int code;    /**< HTTP status (preset 500) */
	cJSON *body;          /**< JSON body, owned by the answer (NULL: answered 500 "out of memory") */
	char retry_after[16]; /**< Retry-After header value, "" for none */
	const char *www_authenticate; /**< WWW-Authenticate header value (static), NULL for none */
};

/** One request as a handler sees it. */
struct req {
	const struct mgmt_ctx *ctx;
	struct MHD_Connection *conn;
	char params[2][64];     /**< path parameters ({id}, {name}), in order */
	int nparams;
	const char *method;     /**< "GET", "POST", ... (HEAD is served as GET) */
	const char *url;
	const char *body;       /**< request body (NUL-terminated), "" when none */
	size_t body_len;        /**< bytes */
	const char *client;     /**< the client's address ("127.0.0.1:43210"), for event texts */
	const char *who;        /**< the client's address and role ("127.0.0.1:43210 (admin)"): the
				     client of audit events (mgmt_db_audit) */
	const char *content_type_in; /**< the request's Content-Type header, NULL when none */
	void (*work)(void *arg, struct mgmt_answer *a); /**< set by mgmt_defer(): answer later */
	void *work_arg;         /**< set by mgmt_defer() */
	unsigned int work_lane; /**< set by mgmt_defer(): enum mgmt_lane */
	unsigned int lane;      /**< the lane this handler runs on (MGMT_LANE_INLINE: the HTTP thread) */
	unsigned int rerun_lane; /**< set by mgmt_run_on(): run the handler again on this lane */
	char retry_after[16];   /**< set by a handler: Retry-After header value */
	const char *content_type; /**< set by a handler for a non-JSON answer (then *body is a cJSON string) */
	int file_fd;            /**< set by a handler on the HTTP thread (with file_set): answer 200 with
				     the file_size bytes of this open file (http.c closes it) */
	bool file_set;          /**< file_fd / file_size / file_name hold the answer */
	uint64_t file_size;     /**< bytes of file_fd to send */
	char file_name[64];     /**< Content-Disposition file name of the download */
};

/** A route handler: returns the HTTP status and sets *body (NULL when out of memory). */
typedef unsigned int (*mgmt_route_fn)(struct req *r, cJSON **body);

/** One route. A table of routes ends with an entry whose method is NULL. */
struct mgmt_route {
	const char *method;  /**< HEAD is served wherever GET is */
	const char *path;    /**< "{x}" matches one path segment, passed in req.params */
	mgmt_route_fn fn;
};

/**
 * First line of a handler that waits (for the primary): run it on @p lane.
 * @return true on the HTTP thread: the handler returns at once (its return value is ignored) and
 *         http.c runs it again on @p lane's thread, on a copy of the request (conn NULL: it may
 *         read ctx, params, method, url, body, content_type_in and client, and set retry_after),
 *         answering with what it returns then; false when it runs on @p lane already: go on.
 */
bool mgmt_run_on(struct req *r, enum mgmt_lane lane);

/**
 * From a handler on the HTTP thread: answer later. http.c suspends the connection and runs
 * @p work(@p arg, answer) on @p lane's thread; when it returns, the connection is resumed and
 * answered with what it put into the answer (the handler's own return value and body are
 * ignored: leave *body NULL). @p work owns @p arg (frees it). It runs even when the client has
 * gone away meanwhile, and before mgmt_http_stop() returns. Called with answer code 0 (out of
 * memory before it could be queued: nothing is answered), it only frees @p arg.
 */
void mgmt_defer(struct req *r, enum mgmt_lane lane, void (*work)(void *arg, struct mgmt_answer *a), void *arg);

/* The route tables, one per file. */
extern const struct mgmt_route mgmt_routes_core[];    /* api_core.c: health, status, workers, pools, ports, events, system */
extern const struct mgmt_route mgmt_routes_tables[];  /* api_tables.c: mirrors, xconnects, config */
extern const struct mgmt_route mgmt_routes_history[]; /* api_history.c: stats history */
extern const struct mgmt_route mgmt_routes_metrics[]; /* api_metrics.c: /metrics */
extern const struct mgmt_route mgmt_routes_ports[];   /* api_ports.c: port stats and link */
extern const struct mgmt_route mgmt_routes_captures[]; /* api_captures.c: captures into pcapng files */
extern const struct mgmt_route mgmt_routes_flows[];    /* api_flows.c: flow metering and IPFIX export */
extern const struct mgmt_route mgmt_routes_maps[];     /* api_maps.c: maps (issue #27): list, create, replace, delete, rules */
extern const struct mgmt_route mgmt_routes_flows_config[]; /* api_flows_config.c: the live flows section */

/**
 * Make room for one more session in @p doc (the running document, about to get it): while its
 * mirrors hold SBX_MAX_MIRRORS sessions, remove the capture session that ended first (its
 * recorder slot in @p shm ended; running captures and mirror sessions are never removed). Such a
 * capture stays listed by GET /captures with its files and last state (an earlier capture) until
 * DELETE (docs/CAPTURE.md). @p ids gets " id id ..." of those removed ("" none).
 * @return how many were removed.
 */
int mgmt_tables_evict_ended_captures(const struct sbx_shm *shm, cJSON *doc, char *ids, size_t len);

/**
 * The running config document (the active tables' json), or NULL with a 503/500 in *body and
 * *code (api_tables.c). The caller frees it.
 */
cJSON *mgmt_running_doc(struct req *r, cJSON **body, unsigned int *code);

/**
 * The preamble of a route that changes the running document (api_tables.c): the request moved to
 * the changes lane (mgmt_run_on: one change at a time), then, when @p in is not NULL, its body
 * parsed by @p parse (NULL: mgmt_parse_body) into *@p in, then the running document
 * (mgmt_running_doc) into *@p doc; on an error what was taken is freed.
 * @return true when the route goes on with *@p in and *@p doc (the caller owns and frees both);
 * false when it returns *@p code at once: 0 when the request was moved to the lane (it runs again
 * there), else the HTTP status with the error in *@p body. *@p code is written only then.
 */
bool mgmt_change_begin(struct req *r, cJSON **body, unsigned int *code,
		       cJSON *(*parse)(struct req *r, cJSON **body, unsigned int *code), cJSON **in, cJSON **doc);

/**
 * Validate, store and apply the whole config document @p doc (consumed) as every runtime-table
 * change is (api_tables.c, docs/RUNTIME_TABLES.md), on the changes lane: audit event @p kind with
 * @p detail; on success *body = @p ok_body (consumed) and the answer is @p ok_code, on failure the
 * error (a validation error's field said without @p field_prefix, e.g. "mirrors[3].").
 */
unsigned int mgmt_tables_change(struct req *r, cJSON **body, cJSON *doc, const char *kind, const char *detail,
				unsigned int ok_code, cJSON *ok_body, const char *field_prefix);

/**
 * The body of GET /metrics (api_metrics.c): the Prometheus text of @p shm (NULL when the appliance
 * is down: then the mgmt families and spanbox_up 0 only) and of database @p db.
 * @return a NUL-terminated malloc'd string the caller frees, NULL when out of memory.
 */
char *mgmt_metrics_text(const struct sbx_shm *shm, const struct mgmt_db *db);

/**
 * A new error body {"error":{"code":@p code,"message":...,"field":@p field}} (field left out when
 * NULL). The message is printf-formatted.
 */
cJSON *mgmt_error(unsigned int code, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** The memzone if the primary is alive right now, else NULL with the reason in @p why. */
const struct sbx_shm *mgmt_live_shm(const struct mgmt_ctx *ctx, char *why, size_t len);

/** mgmt_live_shm() or NULL with a 503 error already in *body and *code. */
const struct sbx_shm *mgmt_need_shm(struct req *r, cJSON **body, unsigned int *code);

/**
 * Parse the request body as a JSON document. The Content-Type must be application/json.
 * @return the document (caller frees), or NULL with the error set: 415 (wrong Content-Type),
 *         400 (empty body, or not JSON: the message names the byte offset).
 */
cJSON *mgmt_parse_body(struct req *r, cJSON **body, unsigned int *code);

/**
 * A path parameter that must be a plain decimal number: digits only, no sign, no space, no
 * leading zero (so "+7", "007" and " 7" name nothing), at most @p max_digits digits.
 * @return its value, or -1.
 */
long mgmt_decimal_param(const char *s, size_t max_digits);

/** A mirror session (or capture) id path parameter: SBX_MIRROR_ID_MIN..SBX_MIRROR_ID_MAX as a plain
 *  decimal number (mgmt_decimal_param), else -1. */
static inline long mgmt_mirror_id_param(const char *s)
{
	long v = mgmt_decimal_param(s, 4);

	return v >= SBX_MIRROR_ID_MIN && v <= SBX_MIRROR_ID_MAX ? v : -1;
}

#endif
