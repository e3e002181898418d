/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The config document: JSON text or a file -> struct sbx_config (include/spanbox/config.h). The
 * one entry point of every caller (primary, workers, mgmt, tests, fuzzers): it parses the text and
 * runs the sections in order, each in its own file (shared/config.c: eal .. flows; shared/
 * config_maps.c: maps, whose rules may make a file larger than the memzone's 64 KiB document),
 * then the checks across them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "spanbox/config.h"
#include "spanbox/config_maps.h"
#include "spanbox/shm.h" /* SBX_TABLES_JSON_MAX */

/* bytes of a config without the maps' rules: it must fit the memzone's runtime tables (NUL included) */
#define MAX_FILE_SIZE (SBX_TABLES_JSON_MAX - 1)

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (err == NULL || errlen == 0)
		return -1;
	n = snprintf(err, errlen, "config: ");
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* sbx_config_parse(), and when @config_path is known, refuse a tx_pcap that is that file. */
static int parse_text(const char *text, struct sbx_config *cfg, char *err, size_t errlen, const char *config_path)
{
	const char *end = NULL, *s;
	unsigned int line = 1, col = 1;
	cJSON *root;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (text == NULL || cfg == NULL)
		return fail(err, errlen, "no text or no config to fill");
	memset(cfg, 0, sizeof(*cfg));
	root = cJSON_ParseWithOpts(text, &end, true);
	if (root == NULL) {
		for (s = text; end && s < end && *s; s++) {
			col = *s == '\n' ? 1 : col + 1;
			line += *s == '\n';
		}
		return fail(err, errlen, "JSON syntax error at line %u column %u", line, col);
	}
	rc = sbx_config_sections_parse(root, cfg, err, errlen) ||
			     sbx_config_maps_parse(root, cfg, config_path != NULL, err, errlen) ||
			     sbx_config_flows_resolve(cfg, err, errlen) ||
			     sbx_config_files_check(cfg, config_path, err, errlen)
		     ? -1
		     : 0;
	cJSON_Delete(root);
	return rc;
}

int sbx_config_parse(const char *text, struct sbx_config *cfg, char *err, size_t errlen)
{
	return parse_text(text, cfg, err, errlen, NULL);
}

int sbx_config_load(const char *path, struct sbx_config *cfg, char *err, size_t errlen)
{
	size_t len = 0, cap = 0, n;
	char *buf = NULL, *nbuf;
	FILE *f;
	int rc, e;

	if (path == NULL)
		return fail(err, errlen, "no file name");
	f = fopen(path, "r");
	if (f == NULL)
		return fail(err, errlen, "%s: %s", path, strerror(errno));
	do {
		if (len + 1 >= cap) {
			cap = cap ? cap * 2 : 4096;
			nbuf = cap > SBX_CONFIG_FILE_MAX + 1 ? NULL : realloc(buf, cap); /* maps' rules: config_maps.h */
			if (nbuf == NULL) {
				free(buf);
				fclose(f);
				if (cap > SBX_CONFIG_FILE_MAX + 1)
					return fail(err, errlen, "%s: larger than %d KiB", path, (SBX_CONFIG_FILE_MAX + 1) / 1024);
				return fail(err, errlen, "%s: %s", path, strerror(ENOMEM));
			}
			buf = nbuf;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n > 0);
	e = ferror(f) ? (errno ? errno : EIO) : 0;
	fclose(f);
	buf[len] = '\0';
	if (e || strlen(buf) != len) {
		free(buf);
		return fail(err, errlen, "%s: %s", path, e ? strerror(e) : "contains a NUL byte");
	}
	if (len > MAX_FILE_SIZE && !sbx_config_maps_fits(buf, MAX_FILE_SIZE)) { /* only rules may exceed it */
		free(buf);
		return fail(err, errlen, "%s: larger than %d KiB (without the maps' rules)", path,
			    (MAX_FILE_SIZE + 1) / 1024);
	}
	rc = parse_text(buf, cfg, err, errlen, path);
	free(buf);
	return rc;
}
