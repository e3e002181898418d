/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file tls.h
 * The HTTPS certificate and key of mgmt (config `mgmt.tls`, docs/MGMT.md "HTTPS"): read once at
 * start and checked with GnuTLS (the library libmicrohttpd serves TLS with), so that a bad file is
 * refused with its field named before mgmt listens.
 */
#ifndef SBX_MGMT_TLS_H
#define SBX_MGMT_TLS_H

#include <stddef.h>

#include "spanbox/config.h"

/** TLS versions mgmt accepts (libmicrohttpd's MHD_OPTION_HTTPS_PRIORITIES, GnuTLS syntax). */
#define MGMT_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/** The PEM texts of `mgmt.tls`, NUL-terminated, malloc'd (mgmt_tls_free()). */
struct mgmt_tls {
	char *cert; /**< certificate (chain) */
	char *key;  /**< private key */
	char fingerprint[96]; /**< SHA-256 of the (first) certificate, "AB:CD:...", for the log */
};

/**
 * Read `mgmt.tls.cert` and `mgmt.tls.key` of @p cfg into @p t and check them: each readable, at
 * most 1 MiB, the certificate a PEM X.509 certificate, the key a PEM private key, and the key the
 * certificate's (gnutls_certificate_set_x509_key_mem2).
 * @param err  receives "mgmt.tls.cert: PATH: why" (or .key) on failure.
 * @return 0 (@p t filled; also when @p cfg has no tls: then t->cert is NULL), or -1.
 */
int mgmt_tls_load(const struct sbx_config *cfg, struct mgmt_tls *t, char *err, size_t errlen);

/** Wipe and free what mgmt_tls_load() read. */
void mgmt_tls_free(struct mgmt_tls *t);

#endif
