/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file static.h
 * Static files of the web page (docs/MGMT.md "Static files"): regular files under the web
 * root only, no directory listing, no way out of the root (neither "..", nor symlinks).
 */
#ifndef SBX_MGMT_STATIC_H
#define SBX_MGMT_STATIC_H

#include <stddef.h>

#include <microhttpd.h>

#include "spanbox/config.h"

/**
 * The web root as an absolute path with no symlinks (realpath) into @p out: config
 * `mgmt.web_root` when set, else `<dir of this binary>/../../web` (the source tree of a build
 * directory), else /usr/share/spanbox/web.
 * @return 0, or -1 when the chosen directory does not exist (message in @p err; then static files
 *         are not served: every such request gets 404).
 */
int mgmt_static_root(const struct sbx_config *cfg, char *out, size_t outlen, char *err, size_t errlen);

/**
 * The file for a GET or HEAD of @p url under @p root ("/" and any path ending in "/" mean its
 * index.html), as a response (Content-Type by extension, X-Content-Type-Options: nosniff,
 * Cache-Control: no-cache) built with MHD_create_response_from_fd (it owns the fd).
 * @param root  from mgmt_static_root(), "" when there is none.
 * @return the response (caller queues and destroys it), or NULL when there is no such file
 *         (or it is refused, or out of memory): the caller answers 404.
 */
struct MHD_Response *mgmt_static_response(const char *root, const char *url);

#endif
