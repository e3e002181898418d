/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file validate.h
 * What mgmt checks of a writing route's body, as pure functions: no libmicrohttpd, no memzone,
 * no database. The routes (api_tables.c, api_core.c, system.c, http.c) call them on the request
 * and the running document; the libFuzzer harness tests/fuzz/fuzz_rest.c calls the same ones
 * through mgmt_validate_write(). Errors come back as a struct mgmt_verdict, which the route turns
 * into its JSON error body with mgmt_error(v.code, v.field, "%s", v.msg).
 */
#ifndef SBX_MGMT_VALIDATE_H
#define SBX_MGMT_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "spanbox/config.h" /* SBX_MIRROR_ID_MIN, SBX_MIRROR_ID_MAX */


/** Why a request is refused. */
struct mgmt_verdict {
	unsigned int code; /**< HTTP status (400, 409, 422, 500), 0 = accepted */
	const char *field; /**< the field at fault, or NULL; points into a literal or into the inputs
			    *   of the call that set it (valid while those live) */
	char msg[1024];    /**< the message (as long as mgmt_error() keeps) */
	char scratch[600]; /**< mgmt_validate_write(): sbx_config_parse()'s message, which field points into */
};

/**
 * The request body as a JSON document: refuses an empty body, a NUL byte or a \\u0000 escape,
 * and what is not JSON (the message names the byte offset). @p body must be NUL-terminated at
 * @p len (its length in bytes).
 * @return the document (caller frees with cJSON_Delete), or NULL with @p v set (400).
 */
cJSON *mgmt_body_json(const char *body, size_t len, struct mgmt_verdict *v);

/** The document's array @p key, created when absent (a non-array member is replaced). */
cJSON *mgmt_doc_array(cJSON *doc, const char *key);

/** The document's forwarding.xconnects array, created (with forwarding) when absent. */
cJSON *mgmt_doc_xconnects(cJSON *doc);

/** The session whose "id" is @p id in @p doc's mirrors (its index in *@p idx when not NULL), or NULL. */
cJSON *mgmt_find_mirror(cJSON *doc, long id, int *idx);

/**
 * What a session id of @p doc names: mirror sessions, captures (both in "mirrors") and maps share
 * one id space (docs/MAPS.md). @return "a mirror session or a capture", "a map", or NULL (free).
 */
const char *mgmt_session_id_owner(cJSON *doc, long id);

/**
 * The lowest session id of SBX_MIRROR_ID_MIN..SBX_MIRROR_ID_MAX that no mirror session, capture or
 * map of @p doc holds and that @p id_free (NULL: every id) allows with @p ctx; the one id search of
 * POST /mirrors, /captures and /maps. @return that id, or SBX_MIRROR_ID_MAX + 1 when none is free
 * (sbx_config_parse() then refuses it naming the id).
 */
long mgmt_free_session_id(cJSON *doc, bool (*id_free)(const void *ctx, long id), const void *ctx);

/** POST /mirrors, before the running document is read: the body must be an object. @return 0 or 422. */
unsigned int mgmt_check_post_mirror_body(const cJSON *in, struct mgmt_verdict *v);

/** What POST /captures needs to know of the capture directory (api_captures.c measures it). */
struct mgmt_capture_room {
	uint64_t quota;    /**< mgmt.captures.quota_mb, bytes */
	uint64_t used;     /**< bytes the files under the capture directory take */
	uint64_t reserved; /**< bytes running captures may still write (their share minus what they hold) */
	long pid;          /**< this mgmt's pid: the capture's owner (it ends when mgmt goes) */
	uint64_t max_frame; /**< bytes of the longest frame a port takes (its mtu + 22) */
};

/** Bytes a capture may exceed its files' sizes by: headers, the next file's header before a ring
 *  deletes its oldest file, the statistics blocks. */
#define MGMT_CAPTURE_SLACK (64 * 1024)

/**
 * POST /captures: turn the capture @p in ({"sources", "filter", "snaplen", "files", "stop",
 * "id", "name"}) into a mirror session whose destination is the recorder, with its share of the
 * quota (@p room: the least of its bounds: the ring's count x mb, stop.bytes, stop.packets x the
 * longest block (snaplen or max_frame, + 64 B); with none, all that is left) and the owner pid, and
 * append it to @p doc's mirrors. Its id (when absent): the lowest free session id for which
 * @p id_free(@p ctx, id) says yes (no files of an older capture of that id on disk).
 * @return 0 (doc changed; *@p id, @p prefix "mirrors[N]."), or 422 (an unknown or mistyped key,
 *         named; the quota: field "quota_mb"), 409 (the id exists) with @p v set.
 */
unsigned int mgmt_merge_post_capture(const cJSON *in, cJSON *doc, const struct mgmt_capture_room *room,
				     bool (*id_free)(const void *ctx, long id), const void *ctx, long *id, char *prefix, size_t prefix_len,
				     struct mgmt_verdict *v);

/**
 * POST /mirrors: give the session @p in (an object) the lowest free id when it has none (added
 * to @p in), refuse an id that exists (409), then append a copy to @p doc's mirrors.
 * @param id      the session's id (0 when "id" is not an integer number) for the audit detail
 * @param prefix  "mirrors[N]." of the new session, for mgmt_validation_verdict()
 * @return 0 (doc changed) or 409 with @p v set (doc unchanged).
 */
unsigned int mgmt_merge_post_mirror(cJSON *in, cJSON *doc, long *id, char *prefix, size_t prefix_len,
				    struct mgmt_verdict *v);

/**
 * PUT /mirrors/{id}: @p in must be an object whose "id", when given, is @p id (422 otherwise);
 * the id is added when absent and a copy replaces the session at index @p idx of @p doc's mirrors.
 * @param prefix "mirrors[idx]." for mgmt_validation_verdict()
 * @return 0 (doc changed) or 422 with @p v set.
 */
unsigned int mgmt_merge_put_mirror(cJSON *in, cJSON *doc, long id, int idx, char *prefix, size_t prefix_len,
				   struct mgmt_verdict *v);

/** The map whose "id" is @p id in @p doc's maps (its index in *@p idx when not NULL), or NULL. */
cJSON *mgmt_find_map(cJSON *doc, long id, int *idx);

/**
 * POST and PUT /maps, before the running document is read: the body must be an object whose
 * "rules", when given, is an array (docs/MAPS.md). @return 0 or 422 with @p v set.
 */
unsigned int mgmt_check_map_body(const cJSON *in, struct mgmt_verdict *v);

/**
 * POST /maps: a copy of @p in appended to @p doc's maps, with the lowest session id no mirror or
 * map of @p doc uses when @p in has none (added to @p in too). *@p id: that id (0 when the given
 * one is not a whole number: sbx_config_parse() names it).
 * @return 0 (doc changed), or 409 (the id is a mirror's or a map's) with @p v set.
 */
unsigned int mgmt_merge_post_map(cJSON *in, cJSON *doc, long *id, struct mgmt_verdict *v);

/**
 * PUT /maps/{id}: @p in's "id", when given, must be @p id (422 otherwise); it is added when
 * absent and a copy replaces the map at index @p idx of @p doc's maps. @return 0 or 422.
 */
unsigned int mgmt_merge_put_map(cJSON *in, cJSON *doc, long id, int idx, struct mgmt_verdict *v);

/**
 * POST /maps/{id}/rules: rule @p in appended to @p rules (the map's whole rule array: the
 * running table's), which then replaces map @p m's "rules". @p rules takes @p in and @p m takes
 * @p rules (the caller frees neither). @return the new rule's index.
 */
long mgmt_merge_post_rule(cJSON *m, cJSON *rules, cJSON *in);

/**
 * POST /forwarding/xconnects: the body must be {"ports": ["a", "b"]} and nothing else.
 * @return its "ports" array (owned by @p in), or NULL with @p v set (422).
 */
const cJSON *mgmt_check_xconnect_body(const cJSON *in, struct mgmt_verdict *v);

/**
 * PUT /ports/{name}/ingress: @p in (the port's new ingress object) replaces ports[@p idx].ingress of
 * @p doc; @p prefix receives "ports[idx].ingress." for the errors of the whole document.
 * @return 0, or 422 (not an object) with @p v set.
 */
unsigned int mgmt_merge_put_ingress(const cJSON *in, cJSON *doc, int idx, char *prefix, size_t prefix_len,
				    struct mgmt_verdict *v);

/** The group whose "name" is @p name in @p doc's tool_groups (its index in *@p idx when not NULL), or NULL. */
cJSON *mgmt_find_group(cJSON *doc, const char *name, int *idx);

/**
 * PUT /tool_groups: the body {"tool_groups": [...]} (or the bare array) replaces @p doc's tool_groups.
 * @return 0 (doc changed) or 422 with @p v set.
 */
unsigned int mgmt_merge_put_groups(const cJSON *in, cJSON *doc, struct mgmt_verdict *v);

/**
 * PUT /tool_groups/{name}: @p in must be an object whose "name", when given, is @p name; the name
 * is added when absent, and a copy replaces the group of that name in @p doc's tool_groups, or is
 * appended (*@p created true). @p prefix receives "tool_groups[i]." for mgmt_validation_verdict().
 * @return 0 (doc changed) or 422 with @p v set.
 */
unsigned int mgmt_merge_put_group(cJSON *in, cJSON *doc, const char *name, bool *created, char *prefix,
				  size_t prefix_len, struct mgmt_verdict *v);

/**
 * DELETE /tool_groups[/{name}]: refuse (422, field "mirrors[i].destination.group", in v->scratch)
 * when a session of @p doc sends to group @p name (NULL: to any group). @return 0 or 422.
 */
unsigned int mgmt_check_group_unused(const cJSON *doc, const char *name, struct mgmt_verdict *v);

/** The index of port @p name in @p doc's ports, -1 when there is none. */
int mgmt_doc_port(const cJSON *doc, const char *name);

/** PUT /config: the body must be an object. @return 0 or 422. */
unsigned int mgmt_check_put_config_body(const cJSON *in, struct mgmt_verdict *v);

/** PUT /config: true when @p in carries the redacted token of GET /config (@p redacted). */
bool mgmt_config_token_redacted(const cJSON *in, const char *redacted);

/** PUT /config: replace @p in's redacted mgmt.token by the running document @p run's token, if it has one. */
void mgmt_config_take_token(cJSON *in, const cJSON *run);

/**
 * A validation error of sbx_config_parse() on the whole document, said in the terms of the
 * request: for a request on one session (@p prefix "mirrors[3]."), "mirrors[3].filter: ..."
 * becomes "filter: ...". Edits @p err in place (v->field points into it). Sets v->code 422.
 */
void mgmt_validation_verdict(char *err, const char *prefix, struct mgmt_verdict *v);

/**
 * POST /system/memprobe's optional body {"size_mb": 1..1024, "runs": 1..20} (trailing blanks
 * ignored; an empty body keeps *@p size_mb and *@p runs).
 * @return 0, or 400 with the reason in @p err.
 */
unsigned int mgmt_memprobe_body(const char *body, size_t len, long *size_mb, long *runs, char *err, size_t errlen);

/**
 * PUT /flows/config: @p in (the whole flows section) replaces @p doc's "flows", with the running
 * flows_per_worker (@p doc's, or the default) when @p in leaves it out.
 * @return 0, or 422 (not an object: field "flows"), 409 (another flows_per_worker: static, field
 *         "flows.flows_per_worker") with @p v set; @p doc unchanged then.
 */
unsigned int mgmt_merge_put_flows(const cJSON *in, cJSON *doc, struct mgmt_verdict *v);

/** The writing routes whose body mgmt_validate_write() checks. */
enum mgmt_write_route {
	MGMT_W_POST_MIRROR,   /**< POST /api/v1/mirrors */
	MGMT_W_PUT_MIRROR,    /**< PUT /api/v1/mirrors/{id} */
	MGMT_W_POST_XCONNECT, /**< POST /api/v1/forwarding/xconnects */
	MGMT_W_PUT_CONFIG,    /**< PUT /api/v1/config */
	MGMT_W_MEMPROBE,      /**< POST /system/memprobe */
	MGMT_W_PUT_INGRESS,   /**< PUT /api/v1/ports/{name}/ingress ({id}: the port's index) */
	MGMT_W_PUT_GROUPS,    /**< PUT /api/v1/tool_groups */
	MGMT_W_PUT_GROUP,     /**< PUT /api/v1/tool_groups/{name} ({name}: "ids" for an even {id}, "g<id>" else) */
	MGMT_W_POST_CAPTURE,  /**< POST /api/v1/captures (a quota of 1 GiB, nothing kept, every id free) */
	MGMT_W_PUT_FLOWS,     /**< PUT /api/v1/flows/config */
	MGMT_W_POST_MAP,      /**< POST /api/v1/maps */
	MGMT_W_PUT_MAP,       /**< PUT /api/v1/maps/{id} ({id}: a map of the running document, else 404) */
	MGMT_W_POST_RULE,     /**< POST /api/v1/maps/{id}/rules (the map's rules: the running document's array) */
	MGMT_W_COUNT
};

/**
 * Every check a writing route makes of its body before it stores or applies anything, in the
 * route's order, from the same functions the route calls, ending (for the table routes) with
 * sbx_config_parse() of the resulting document as change() does.
 * @param body     the body, NUL-terminated at @p len bytes
 * @param running  the running document (the active tables' JSON text); NULL or unparsable gives 500
 * @param id       PUT /mirrors/{id}, PUT /maps/{id}, POST /maps/{id}/rules: the path's id (1..1023;
 *                 a session or map that does not exist gives 404)
 * @param redacted the redacted-token marker of GET /config
 * @return 0 when the route would go on to store and apply, else the HTTP status with @p v set.
 */
unsigned int mgmt_validate_write(enum mgmt_write_route route, const char *body, size_t len, const char *running,
				 long id, const char *redacted, struct mgmt_verdict *v);

#endif
