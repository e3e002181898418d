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

#endif
