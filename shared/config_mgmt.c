/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The section "mgmt" (listen, tokens and roles, TLS, captures; docs/CONFIG.md).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config_int.h"

static const char *const mgmt_keys[] = {"listen", "port", "database", "token", "token_file",
					"history_interval_s", "web_root", "tokens", "tls", "insecure", "captures", NULL};

static const char *const mgmt_tokens_keys[] = {"admin", "admin_file", "viewer", "viewer_file", NULL};

static const char *const mgmt_tls_keys[] = {"cert", "key", NULL};

static const char *const captures_keys[] = {"directory", "quota_mb", NULL};

/*
 * Parse "mgmt.tokens" (roles) and "mgmt.tls" (after the rest of "mgmt"): tokens.admin and
 * tokens.admin_file are the same as mgmt.token and mgmt.token_file (one of each name at most);
 * tls needs both files (whether they are a certificate and a key: spanbox-mgmt checks at start).
 */
static int parse_mgmt_roles(struct cfg_ctx *c, const cJSON *o, struct sbx_config *cfg)
{
	const cJSON *t = NULL, *tls = NULL;

	if (o == NULL)
		return 0;
	if (cfg_get_object(c, o, "mgmt", "tokens", "mgmt.tokens", mgmt_tokens_keys, &t) ||
	    cfg_get_object(c, o, "mgmt", "tls", "mgmt.tls", mgmt_tls_keys, &tls) ||
	    cfg_get_bool(c, o, "mgmt", "insecure", false, &cfg->mgmt_insecure))
		return -1;
	if (t != NULL) {
		if (cfg_member(t, "admin") && cfg_member(o, "token"))
			return cfg_fail(c, "mgmt.tokens", "admin", "mgmt.token is set already (the same token: give one)");
		if (cfg_member(t, "admin_file") && cfg_member(o, "token_file"))
			return cfg_fail(c, "mgmt.tokens", "admin_file", "mgmt.token_file is set already (give one)");
		if ((cfg_member(t, "admin") &&
		     cfg_get_string(c, t, "mgmt.tokens", "admin", cfg->mgmt_token, sizeof(cfg->mgmt_token), true,
				cfg_token_chars, "")) ||
		    (cfg_member(t, "admin_file") &&
		     cfg_get_string(c, t, "mgmt.tokens", "admin_file", cfg->mgmt_token_file, sizeof(cfg->mgmt_token_file),
				true, NULL, "")) ||
		    cfg_get_string(c, t, "mgmt.tokens", "viewer", cfg->mgmt_viewer_token, sizeof(cfg->mgmt_viewer_token),
			       false, cfg_token_chars, "") ||
		    cfg_get_string(c, t, "mgmt.tokens", "viewer_file", cfg->mgmt_viewer_token_file,
			       sizeof(cfg->mgmt_viewer_token_file), false, NULL, ""))
			return -1;
		if (cfg_member(t, "admin") && strlen(cfg->mgmt_token) < 16)
			return cfg_fail(c, "mgmt.tokens", "admin", "at least 16 characters (got %zu)", strlen(cfg->mgmt_token));
		if (cfg->mgmt_viewer_token[0] != '\0' && strlen(cfg->mgmt_viewer_token) < 16)
			return cfg_fail(c, "mgmt.tokens", "viewer", "at least 16 characters (got %zu)",
				    strlen(cfg->mgmt_viewer_token));
		if (cfg->mgmt_viewer_token[0] != '\0' && cfg->mgmt_viewer_token_file[0] != '\0')
			return cfg_fail(c, "mgmt.tokens", "viewer_file", "mgmt.tokens.viewer is set already (give one)");
		if (cfg->mgmt_viewer_token[0] != '\0' && strcmp(cfg->mgmt_viewer_token, cfg->mgmt_token) == 0)
			return cfg_fail(c, "mgmt.tokens", "viewer", "the same as the admin token");
	}
	if (tls != NULL) {
		if (cfg_need(c, tls, "mgmt.tls", "cert") || cfg_need(c, tls, "mgmt.tls", "key") ||
		    cfg_get_string(c, tls, "mgmt.tls", "cert", cfg->mgmt_tls_cert, sizeof(cfg->mgmt_tls_cert), true, NULL, "") ||
		    cfg_get_string(c, tls, "mgmt.tls", "key", cfg->mgmt_tls_key, sizeof(cfg->mgmt_tls_key), true, NULL, ""))
			return -1;
	}
	return 0;
}

/* Parse "mgmt.captures": where capture files go and how much they may take (docs/CONFIG.md). */
static int parse_mgmt_captures(struct cfg_ctx *c, const cJSON *o, struct sbx_config *cfg)
{
	const cJSON *cap = NULL;

	if (o != NULL && cfg_get_object(c, o, "mgmt", "captures", "mgmt.captures", captures_keys, &cap))
		return -1;
	if (cfg_get_string(c, cap, "mgmt.captures", "directory", cfg->capture_dir, sizeof(cfg->capture_dir) - 32, true,
		       NULL, "/var/lib/spanbox/captures") ||
	    cfg_get_u32(c, cap, "mgmt.captures", "quota_mb", 1, 1048576, 1024, &cfg->capture_quota_mb))
		return -1;
	if (cfg->capture_dir[0] != '/')
		return cfg_fail(c, "mgmt.captures", "directory", "\"%s\" is not an absolute path", cfg->capture_dir);
	return 0;
}

/* Parse "mgmt": listen address, TCP port, SQLite database path, tokens and TLS files. */
int cfg_parse_mgmt(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	unsigned char addr[sizeof(struct in6_addr)];
	const cJSON *o;

	if (cfg_get_section(c, root, "mgmt", mgmt_keys, &o) ||
	    cfg_get_string(c, o, "mgmt", "listen", cfg->mgmt_listen, sizeof(cfg->mgmt_listen), true,
		       NULL, "127.0.0.1") ||
	    cfg_get_u16(c, o, "mgmt", "port", 1, 65535, 8080, &cfg->mgmt_port) ||
	    cfg_get_string(c, o, "mgmt", "database", cfg->mgmt_database, sizeof(cfg->mgmt_database),
		       true, NULL, "/var/lib/spanbox/spanbox.db") ||
	    cfg_get_string(c, o, "mgmt", "token", cfg->mgmt_token, sizeof(cfg->mgmt_token), false, cfg_token_chars, "") ||
	    cfg_get_string(c, o, "mgmt", "token_file", cfg->mgmt_token_file, sizeof(cfg->mgmt_token_file), false,
		       NULL, "") ||
	    cfg_get_u16(c, o, "mgmt", "history_interval_s", 1, 60, 1, &cfg->mgmt_history_interval_s) ||
	    cfg_get_string(c, o, "mgmt", "web_root", cfg->mgmt_web_root, sizeof(cfg->mgmt_web_root), false, NULL, ""))
		return -1;
	if (cfg->mgmt_token[0] != '\0' && strlen(cfg->mgmt_token) < 16)
		return cfg_fail(c, "mgmt", "token", "at least 16 characters (got %zu)", strlen(cfg->mgmt_token));
	if (parse_mgmt_roles(c, o, cfg) || parse_mgmt_captures(c, o, cfg))
		return -1;
	if (cfg->mgmt_token_file[0] == '\0' &&
	    snprintf(cfg->mgmt_token_file, sizeof(cfg->mgmt_token_file), "%s.token", cfg->mgmt_database) >=
		    (int)sizeof(cfg->mgmt_token_file))
		return cfg_fail(c, "mgmt", "database", "too long to derive token_file from it");
	if (inet_pton(AF_INET, cfg->mgmt_listen, addr) != 1 &&
	    inet_pton(AF_INET6, cfg->mgmt_listen, addr) != 1)
		return cfg_fail(c, "mgmt", "listen", "\"%s\" is not an IPv4 or IPv6 address",
			    cfg->mgmt_listen);
	return 0;
}

bool sbx_config_mgmt_local(const char *listen)
{
	struct in_addr a;

	return inet_pton(AF_INET, listen, &a) == 1 && a.s_addr == htonl(INADDR_LOOPBACK);
}

/* Whether the file @p path is readable and its first 64 KiB hold "-----BEGIN " ... @p label. */
static int pem_file(const char *field, const char *path, const char *label, char *err, size_t errlen)
{
	char buf[65536];
	FILE *f = fopen(path, "re");
	size_t n;
	const char *b;

	if (f == NULL) {
		snprintf(err, errlen, "%s: %s: cannot read: %s", field, path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (b = strstr(buf, "-----BEGIN "); b != NULL; b = strstr(b + 1, "-----BEGIN ")) {
		const char *e = strstr(b, "-----\n") ? strstr(b, "-----\n") : strstr(b, "-----\r");

		if (e != NULL && (size_t)(e - b) > strlen(label) && strncmp(e - strlen(label), label, strlen(label)) == 0)
			return 0;
	}
	snprintf(err, errlen, "%s: %s: no PEM %s in it", field, path, label);
	return -1;
}

int sbx_config_mgmt_check(const struct sbx_config *cfg, bool files, char *err, size_t errlen)
{
	if (!sbx_config_mgmt_local(cfg->mgmt_listen) && cfg->mgmt_tls_cert[0] == '\0' && !cfg->mgmt_insecure) {
		snprintf(err, errlen, "mgmt.tls: required when mgmt.listen is not 127.0.0.1 (it is %s): give "
			 "{\"cert\": PATH, \"key\": PATH}, or set mgmt.insecure to true to serve plain HTTP there",
			 cfg->mgmt_listen);
		return -1;
	}
	if (!files || cfg->mgmt_tls_cert[0] == '\0')
		return 0;
	if (pem_file("mgmt.tls.cert", cfg->mgmt_tls_cert, "CERTIFICATE", err, errlen) < 0 ||
	    pem_file("mgmt.tls.key", cfg->mgmt_tls_key, "PRIVATE KEY", err, errlen) < 0)
		return -1;
	return 0;
}
