/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bearer token of the REST API: loading (config or token file), generating the token file, and
 * checking an Authorization header in constant time.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "db.h"

static const char TOKEN_CHARS[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.~+/=";

bool mgmt_auth_needed(const char *method)
{
	return strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0;
}

bool mgmt_auth_check(const char *header, const char *token)
{
	size_t tlen = strlen(token), clen, i;
	const char *cand;
	volatile unsigned char diff;

	if (header == NULL || tlen == 0 || strncasecmp(header, "Bearer ", 7) != 0)
		return false;
	cand = header + 7;
	while (*cand == ' ')
		cand++;
	clen = strcspn(cand, " \t");
	if (cand[clen + strspn(cand + clen, " \t")] != '\0')
		return false; /* something after the token */
	/* time depends on tlen only: every byte of the token is compared, the candidate's length
	 * difference folded into the result */
	diff = clen != tlen;
	for (i = 0; i < tlen; i++)
		diff |= (unsigned char)token[i] ^ (unsigned char)(i < clen ? cand[i] : 0);
	return diff == 0;
}

const char *mgmt_role_name(enum mgmt_role role)
{
	return role == MGMT_ROLE_ADMIN ? "admin" : role == MGMT_ROLE_VIEWER ? "viewer" : "none";
}

enum mgmt_role mgmt_auth_role(const char *header, const char *admin, const char *viewer)
{
	/* both compared, whatever the first says: the time does not tell which role matched */
	bool a = admin != NULL && mgmt_auth_check(header, admin);
	bool v = viewer != NULL && viewer[0] != '\0' && mgmt_auth_check(header, viewer);

	return a ? MGMT_ROLE_ADMIN : v ? MGMT_ROLE_VIEWER : MGMT_ROLE_NONE;
}

bool mgmt_reads_open(const char *listen)
{
	return sbx_config_mgmt_local(listen);
}

int mgmt_auth_policy(const struct sbx_config *cfg, char *err, size_t errlen)
{
	return sbx_config_mgmt_check(cfg, false, err, errlen);
}

/* Failed token attempts per client address (the HTTP thread only). */
static struct fail_slot {
	unsigned char key[17];
	size_t len;
	uint64_t since_ns; /* start of its window; 0 = slot unused */
	unsigned int n;    /* failures in the window */
} fails[MGMT_AUTH_FAIL_SLOTS];

bool mgmt_auth_fail(const void *key, size_t len, uint64_t now_ns, bool *first_slow)
{
	struct fail_slot *f = NULL, *oldest = &fails[0];
	unsigned int i;

	if (first_slow != NULL)
		*first_slow = false;
	if (len > sizeof(fails[0].key))
		len = sizeof(fails[0].key);
	for (i = 0; i < MGMT_AUTH_FAIL_SLOTS && f == NULL; i++) {
		if (fails[i].since_ns != 0 && fails[i].len == len && memcmp(fails[i].key, key, len) == 0)
			f = &fails[i];
		else if (fails[i].since_ns < oldest->since_ns)
			oldest = &fails[i];
	}
	if (f == NULL || now_ns - f->since_ns >= MGMT_AUTH_FAIL_WINDOW_S * 1000000000ULL) {
		if (f == NULL)
			f = oldest;
		memcpy(f->key, key, len);
		f->len = len;
		f->since_ns = now_ns != 0 ? now_ns : 1;
		f->n = 0;
	}
	f->n++;
	if (first_slow != NULL)
		*first_slow = f->n == MGMT_AUTH_FAIL_MAX + 1;
	return f->n > MGMT_AUTH_FAIL_MAX;
}

/* Read and check the existing token file @p path. @return 0, -1 with err set, -2 if missing. */
static int read_token_file(const char *path, char token[MGMT_TOKEN_MAX + 1], char *err, size_t errlen)
{
	char buf[MGMT_TOKEN_MAX + 3];
	struct stat st;
	ssize_t n;
	size_t len;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENOENT)
			return -2;
		snprintf(err, errlen, "token file %s: cannot open: %s%s", path, strerror(errno),
			 errno == ELOOP ? " (a symlink: refused)" : "");
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "token file %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "token file %s: not a regular file: refused", path);
		close(fd);
		return -1;
	}
	if (st.st_mode & 077) {
		snprintf(err, errlen, "token file %s: mode %04o lets group or other access it: refused "
			 "(chmod 600 it, or delete it to have a new one generated)", path,
			 (unsigned int)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(err, errlen, "token file %s: owned by uid %u, neither root nor uid %u: refused", path,
			 (unsigned int)st.st_uid, (unsigned int)geteuid());
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "token file %s: cannot read: %s", path, strerror(errno));
		return -1;
	}
	buf[n] = '\0';
	len = (size_t)n;
	if (len > 0 && buf[len - 1] == '\n')
		buf[--len] = '\0';
	if (len == 0) {
		snprintf(err, errlen, "token file %s: empty: refused (delete it to have a new one generated)", path);
		return -1;
	}
	if (len < MGMT_TOKEN_MIN || len > MGMT_TOKEN_MAX || strspn(buf, TOKEN_CHARS) != len) {
		snprintf(err, errlen, "token file %s: expected one line of %d..%d characters of "
			 "A-Z a-z 0-9 _ - . ~ + / =: refused", path, MGMT_TOKEN_MIN, MGMT_TOKEN_MAX);
		return -1;
	}
	memcpy(token, buf, len + 1);
	return 0;
}

/* Write a new random token to @p path. @return 0 (created), 1 (someone else created it first), -1. */
static int create_token_file(const char *path, char *err, size_t errlen)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char rnd[32];
	char tmp[PATH_MAX], text[sizeof(rnd) * 2 + 2];
	size_t i, got = 0;
	int fd, rc;

	while (got < sizeof(rnd)) {
		ssize_t n = getrandom(rnd + got, sizeof(rnd) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "token file %s: getrandom: %s", path, strerror(errno));
			return -1;
		}
		got += (size_t)n;
	}
	for (i = 0; i < sizeof(rnd); i++) {
		text[2 * i] = hex[rnd[i] >> 4];
		text[2 * i + 1] = hex[rnd[i] & 15];
	}
	text[2 * sizeof(rnd)] = '\n';
	text[2 * sizeof(rnd) + 1] = '\0';
	explicit_bzero(rnd, sizeof(rnd));

	if (mgmt_make_parent(path) < 0) {
		snprintf(err, errlen, "token file %s: cannot create its directory: %s", path, strerror(errno));
		return -1;
	}
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "token file %s: path too long", path);
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST && unlink(tmp) == 0) /* left by a dead process with our pid */
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "token file %s: cannot create %s: %s", path, tmp, strerror(errno));
		return -1;
	}
	/* 0600 whatever the umask; root-owned when we run as root (the file was created by us) */
	if (fchmod(fd, 0600) < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || fsync(fd) < 0) {
		snprintf(err, errlen, "token file %s: cannot write %s: %s", path, tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	explicit_bzero(text, sizeof(text));
	close(fd);
	/* link(), not rename(): never replaces a token file another process created meanwhile */
	rc = link(tmp, path);
	if (rc < 0 && errno == EEXIST) {
		unlink(tmp);
		return 1;
	}
	if (rc < 0 && (errno == EPERM || errno == EOPNOTSUPP)) /* no hard links on this file system */
		rc = rename(tmp, path);
	if (rc < 0) {
		snprintf(err, errlen, "token file %s: cannot move %s into place: %s", path, tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	unlink(tmp);
	return 0;
}

/* The token @p inline_token, else the content of the token file @p path (@p field names it when
 * empty), generated when missing and @p create. */
static int load_token(const char *inline_token, const char *path, const char *field, bool create,
		      char token[MGMT_TOKEN_MAX + 1], bool *created, char *err, size_t errlen)
{
	int rc;

	if (created != NULL)
		*created = false;
	if (inline_token[0] != '\0') {
		snprintf(token, MGMT_TOKEN_MAX + 1, "%s", inline_token);
		return 0;
	}
	if (path[0] == '\0') {
		snprintf(err, errlen, "%s: empty", field);
		return -1;
	}
	rc = read_token_file(path, token, err, errlen);
	if (rc != -2)
		return rc;
	if (!create) {
		snprintf(err, errlen, "token file %s: does not exist yet (spanbox-mgmt generates it at start)", path);
		return -1;
	}
	rc = create_token_file(path, err, errlen);
	if (rc < 0)
		return -1;
	if (created != NULL)
		*created = rc == 0;
	rc = read_token_file(path, token, err, errlen);
	if (rc == -2)
		snprintf(err, errlen, "token file %s: vanished right after it was created", path);
	return rc == 0 ? 0 : -1;
}

int mgmt_auth_load(const struct sbx_config *cfg, bool create, char token[MGMT_TOKEN_MAX + 1],
		   bool *created, char *err, size_t errlen)
{
	return load_token(cfg->mgmt_token, cfg->mgmt_token_file, "mgmt.token_file", create, token, created,
			  err, errlen);
}

int mgmt_auth_load_viewer(const struct sbx_config *cfg, bool create, char token[MGMT_TOKEN_MAX + 1],
			  bool *created, char *err, size_t errlen)
{
	token[0] = '\0';
	if (created != NULL)
		*created = false;
	if (cfg->mgmt_viewer_token[0] == '\0' && cfg->mgmt_viewer_token_file[0] == '\0')
		return 0; /* no viewer role */
	return load_token(cfg->mgmt_viewer_token, cfg->mgmt_viewer_token_file, "mgmt.tokens.viewer_file", create,
			  token, created, err, errlen);
}
