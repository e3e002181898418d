/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Static files of the web page. A request path is refused (NULL: the caller answers 404) when a
 * segment starts with "." (".", "..", hidden files) or is empty, or holds a control character;
 * the file's realpath must lie under the web root's realpath (a symlink that leads out is
 * refused), and the file must be a regular file (no directory listing, no devices or FIFOs).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "static.h"

#define SYSTEM_WEB_ROOT "/usr/share/spanbox/web"

int mgmt_static_root(const struct sbx_config *cfg, char *out, size_t outlen, char *err, size_t errlen)
{
	char self[PATH_MAX], cand[PATH_MAX + 16], res[PATH_MAX];
	ssize_t n;
	char *slash;

	out[0] = '\0';
	if (cfg->mgmt_web_root[0] != '\0') {
		snprintf(cand, sizeof(cand), "%s", cfg->mgmt_web_root);
	} else {
		/* <build>/mgmt/spanbox-mgmt -> <build>/mgmt/../../web: the source tree's web/ */
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		cand[0] = '\0';
		if (n > 0) {
			self[n] = '\0';
			slash = strrchr(self, '/');
			if (slash != NULL) {
				*slash = '\0';
				snprintf(cand, sizeof(cand), "%s/../../web", self);
			}
		}
		if (cand[0] == '\0' || realpath(cand, res) == NULL)
			snprintf(cand, sizeof(cand), "%s", SYSTEM_WEB_ROOT);
	}
	if (realpath(cand, res) == NULL) {
		snprintf(err, errlen, "web root %s: %s", cand, strerror(errno));
		return -1;
	}
	if (strlen(res) >= outlen) {
		snprintf(err, errlen, "web root %s: path too long", res);
		return -1;
	}
	snprintf(out, outlen, "%s", res);
	return 0;
}

/* Content-Type of @p path by its extension. */
static const char *content_type(const char *path)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{ "html", "text/html; charset=utf-8" },      { "htm", "text/html; charset=utf-8" },
		{ "js", "text/javascript; charset=utf-8" },  { "mjs", "text/javascript; charset=utf-8" },
		{ "css", "text/css; charset=utf-8" },        { "svg", "image/svg+xml" },
		{ "png", "image/png" },                      { "json", "application/json" },
		{ "ico", "image/vnd.microsoft.icon" },       { "txt", "text/plain; charset=utf-8" },
	};
	const char *base = strrchr(path, '/'), *dot;
	size_t i;

	dot = strrchr(base ? base : path, '.');
	if (dot != NULL)
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (strcasecmp(dot + 1, types[i].ext) == 0)
				return types[i].type;
	return "application/octet-stream";
}

/* Whether @p url is an acceptable request path (see the top of the file). */
static bool url_ok(const char *url)
{
	const char *seg, *p;

	if (url[0] != '/')
		return false;
	for (p = url; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '\\')
			return false;
	for (seg = url + 1; *seg; seg = p + 1) {
		p = strchrnul(seg, '/');
		if (p == seg && *p != '\0')
			return false; /* "//" */
		if (*seg == '.')
			return false; /* ".", "..", ".hidden" */
		if (*p == '\0')
			break;
	}
	return true;
}

struct MHD_Response *mgmt_static_response(const char *root, const char *url)
{
	char path[PATH_MAX + 16], res[PATH_MAX];
	size_t rlen = strlen(root), ulen = strlen(url);
	struct MHD_Response *r;
	struct stat st;
	int fd;

	if (rlen == 0 || !url_ok(url) || rlen + ulen + sizeof("index.html") > sizeof(path))
		return NULL;
	snprintf(path, sizeof(path), "%s%s%s", root, url, url[ulen - 1] == '/' ? "index.html" : "");
	/* the file itself, every symlink resolved, must lie under the root */
	if (realpath(path, res) == NULL || strncmp(res, root, rlen) != 0 || res[rlen] != '/')
		return NULL;
	/* O_NONBLOCK: opening a FIFO must not block the HTTP thread; O_NOFOLLOW: res has no symlinks,
	 * a symlink there now was put there since realpath() */
	fd = open(res, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	r = MHD_create_response_from_fd((size_t)st.st_size, fd); /* owns fd from here on */
	if (r == NULL) { /* it does not close fd when it fails */
		close(fd);
		return NULL;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type(res));
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	return r;
}
