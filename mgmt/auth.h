/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file auth.h
 * Bearer-token authentication of mutating REST requests (docs/MGMT.md "Authentication").
 * The token is config `mgmt.token` when set, else the content of `mgmt.token_file`, which
 * spanbox-mgmt generates at start when it does not exist.
 */
#ifndef SBX_MGMT_AUTH_H
#define SBX_MGMT_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spanbox/config.h"

/** Longest token accepted, in characters (config.h: mgmt_token[129]). */
#define MGMT_TOKEN_MAX 128
/** Shortest token accepted, in characters (same rule as config `mgmt.token`). */
#define MGMT_TOKEN_MIN 16

/**
 * The effective token of @p cfg into @p token (NUL-terminated, at most MGMT_TOKEN_MAX chars).
 * Config `mgmt.token` wins; otherwise `mgmt.token_file` is read. A missing token file is
 * generated when @p create is true (32 bytes of getrandom() as 64 hex characters, mode 0600,
 * written under a temporary name opened O_EXCL, then linked into place, so a reader never sees
 * a partial file and two racing creators agree on one token); its parent directory is created
 * (0755) if missing.
 * An existing token file is refused when it is not a regular file, is readable or writable by
 * group or other, is owned by another user than root or the caller, is empty, or holds anything
 * but one token of 16..128 characters of `A-Z a-z 0-9 _ - . ~ + / =` (a final newline is allowed).
 * @param created  set to true when this call generated the file (may be NULL).
 * @param err      receives a message naming the file and the reason on failure.
 * @return 0, or -1 on failure (missing file with @p create false, refused file, I/O error).
 */
int mgmt_auth_load(const struct sbx_config *cfg, bool create, char token[MGMT_TOKEN_MAX + 1],
		   bool *created, char *err, size_t errlen);

/**
 * Whether an Authorization header value carries @p token: scheme "Bearer" (any case), one or
 * more spaces, the token, optional trailing spaces. The token comparison takes a time that
 * depends only on strlen(@p token), never on where the candidate differs.
 * @param header  the header value, NULL when absent (then false).
 */
bool mgmt_auth_check(const char *header, const char *token);

/** Whether @p method changes something and so needs the token: every method but GET and HEAD. */
bool mgmt_auth_needed(const char *method);

/** Who a request is, by its bearer token. */
enum mgmt_role {
	MGMT_ROLE_NONE = 0, /**< no token, or not a token of any role */
	MGMT_ROLE_VIEWER,   /**< the viewer token: GET and HEAD */
	MGMT_ROLE_ADMIN,    /**< the admin token: everything */
};

/** "none", "viewer" or "admin" (a static string). */
const char *mgmt_role_name(enum mgmt_role role);

/**
 * The role whose token the Authorization header value @p header carries (mgmt_auth_check() of
 * each: constant time per token, both tokens always compared).
 * @param admin   the admin token (never empty while mgmt runs).
 * @param viewer  the viewer token, "" or NULL when there is no viewer role.
 * @return MGMT_ROLE_NONE when @p header is NULL or carries neither token.
 */
enum mgmt_role mgmt_auth_role(const char *header, const char *admin, const char *viewer);

/**
 * The viewer token of @p cfg into @p token: `mgmt.tokens.viewer`, else the content of
 * `mgmt.tokens.viewer_file` (read, checked and generated when missing and @p create, exactly as
 * the admin token file: see mgmt_auth_load()), else "" (no viewer role).
 * @return 0 (also with no viewer role), or -1 with @p err naming the file and the reason.
 */
int mgmt_auth_load_viewer(const struct sbx_config *cfg, bool create, char token[MGMT_TOKEN_MAX + 1],
			  bool *created, char *err, size_t errlen);

/**
 * Whether reads (GET/HEAD) need no token: mgmt listens on exactly 127.0.0.1 (as before roles).
 * Any other address, 127.0.0.2 and ::1 included, needs a token of a role for every request.
 * @param listen  the listen address of the config ("[v6]" accepted); a bad literal: false.
 */
bool mgmt_reads_open(const char *listen);

/**
 * Whether @p cfg may be served: on any address but 127.0.0.1 `mgmt.tls` is required unless
 * `mgmt.insecure` is true.
 * @return 0, or -1 with @p err saying why and naming the field ("mgmt.tls: ...").
 */
int mgmt_auth_policy(const struct sbx_config *cfg, char *err, size_t errlen);

#define MGMT_AUTH_FAIL_MAX 10      /**< failed token attempts of one client address a window
				        before its answers are slowed */
#define MGMT_AUTH_FAIL_WINDOW_S 60 /**< s: the window (fixed, from the first failure in it) */
#define MGMT_AUTH_SLOW_MS 1000     /**< ms a slowed 401 waits (on a lane, never the HTTP thread) */
#define MGMT_AUTH_FAIL_SLOTS 256   /**< client addresses tracked; the least recent one is forgotten */

/**
 * Count one failed token attempt (a wrong token sent) of the client address @p key (@p len bytes,
 * the port left out) at @p now_ns (CLOCK_MONOTONIC). Not thread-safe: the HTTP thread only.
 * @param first_slow  set to true when this attempt is the first slowed one of its window (to log
 *                    it once; may be NULL).
 * @return true when the attempt is past MGMT_AUTH_FAIL_MAX in its window: answer it slowly.
 */
bool mgmt_auth_fail(const void *key, size_t len, uint64_t now_ns, bool *first_slow);

#endif
