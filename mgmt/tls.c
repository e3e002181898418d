/* SPDX-License-Identifier: BSD-3-Clause */
/* The HTTPS certificate and key: read and checked with GnuTLS at start (tls.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "tls.h"

#define PEM_MAX (1024 * 1024) /* bytes a certificate or key file may have */

/* The whole of @p path, NUL-terminated, into *out. -1 with err naming @p field. */
static int read_pem(const char *field, const char *path, char **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;

	*out = NULL;
	if (f == NULL) {
		snprintf(err, errlen, "%s: %s: cannot read: %s", field, path, strerror(errno));
		return -1;
	}
	buf = malloc(PEM_MAX + 1);
	if (buf == NULL) {
		fclose(f);
		snprintf(err, errlen, "%s: out of memory", field);
		return -1;
	}
	n = fread(buf, 1, PEM_MAX + 1, f);
	if (ferror(f) || n > PEM_MAX || n == 0) {
		snprintf(err, errlen, "%s: %s: %s", field, path,
			 ferror(f) ? "cannot read (a directory?)" : n == 0 ? "empty" : "longer than 1 MiB");
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	buf[n] = '\0';
	*out = buf;
	return 0;
}

int mgmt_tls_load(const struct sbx_config *cfg, struct mgmt_tls *t, char *err, size_t errlen)
{
	gnutls_certificate_credentials_t cred = NULL;
	gnutls_x509_crt_t crt = NULL;
	gnutls_x509_privkey_t key = NULL;
	gnutls_datum_t cd, kd;
	unsigned char fp[32];
	size_t fplen = sizeof(fp), i;
	int rc;

	memset(t, 0, sizeof(*t));
	if (cfg->mgmt_tls_cert[0] == '\0')
		return 0;
	if (read_pem("mgmt.tls.cert", cfg->mgmt_tls_cert, &t->cert, err, errlen) < 0 ||
	    read_pem("mgmt.tls.key", cfg->mgmt_tls_key, &t->key, err, errlen) < 0)
		goto fail;
	cd = (gnutls_datum_t){ (unsigned char *)t->cert, (unsigned int)strlen(t->cert) };
	kd = (gnutls_datum_t){ (unsigned char *)t->key, (unsigned int)strlen(t->key) };
	if (gnutls_x509_crt_init(&crt) < 0 || gnutls_x509_privkey_init(&key) < 0 ||
	    gnutls_certificate_allocate_credentials(&cred) < 0) {
		snprintf(err, errlen, "mgmt.tls: out of memory");
		goto fail;
	}
	rc = gnutls_x509_crt_import(crt, &cd, GNUTLS_X509_FMT_PEM);
	if (rc < 0) {
		snprintf(err, errlen, "mgmt.tls.cert: %s: not a PEM certificate (%s)", cfg->mgmt_tls_cert,
			 gnutls_strerror(rc));
		goto fail;
	}
	rc = gnutls_x509_privkey_import2(key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (rc < 0) {
		snprintf(err, errlen, "mgmt.tls.key: %s: not a PEM private key without a passphrase (%s)",
			 cfg->mgmt_tls_key, gnutls_strerror(rc));
		goto fail;
	}
	rc = gnutls_certificate_set_x509_key_mem2(cred, &cd, &kd, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (rc < 0) {
		snprintf(err, errlen, "mgmt.tls.key: %s: %s (the certificate %s)", cfg->mgmt_tls_key,
			 gnutls_strerror(rc), cfg->mgmt_tls_cert);
		goto fail;
	}
	if (gnutls_x509_crt_get_fingerprint(crt, GNUTLS_DIG_SHA256, fp, &fplen) == 0 && fplen == sizeof(fp)) {
		char *p = t->fingerprint; /* 32 * "XX" + 31 ":" + NUL = 96 */

		for (i = 0; i < fplen; i++)
			p += sprintf(p, "%s%02X", i ? ":" : "", fp[i]);
	}
	gnutls_certificate_free_credentials(cred);
	gnutls_x509_privkey_deinit(key);
	gnutls_x509_crt_deinit(crt);
	return 0;
fail:
	if (cred != NULL)
		gnutls_certificate_free_credentials(cred);
	if (key != NULL)
		gnutls_x509_privkey_deinit(key);
	if (crt != NULL)
		gnutls_x509_crt_deinit(crt);
	mgmt_tls_free(t);
	return -1;
}

void mgmt_tls_free(struct mgmt_tls *t)
{
	if (t->key != NULL) {
		explicit_bzero(t->key, strlen(t->key));
		free(t->key);
	}
	free(t->cert);
	t->cert = NULL;
	t->key = NULL;
}
