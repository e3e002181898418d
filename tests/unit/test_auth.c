/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of mgmt/auth.c's roles (issue 17): which role a header carries, which listen address
 * keeps reads open, the HTTPS policy, and the failure counter that slows a client guessing tokens
 * (past MGMT_AUTH_FAIL_MAX within MGMT_AUTH_FAIL_WINDOW_S, per address). TAP on stdout.
 */
#include <stdio.h>
#include <string.h>

#include "../../mgmt/auth.h"

static int n, failed;

static void check(int cond, const char *what)
{
	n++;
	printf("%s %d - %s\n", cond ? "ok" : "not ok", n, what);
	failed += !cond;
}

int main(void)
{
	const char *admin = "admin-0123456789abcdef", *viewer = "viewer-0123456789abcdef";
	struct sbx_config cfg;
	char err[512];
	unsigned char a[17] = { 2, 10, 0, 0, 1 }, b[17] = { 2, 10, 0, 0, 2 };
	const uint64_t s = 1000000000ULL, t0 = 5 * s;
	bool first, slow;
	int i, firsts = 0;

	check(mgmt_auth_role("Bearer admin-0123456789abcdef", admin, viewer) == MGMT_ROLE_ADMIN, "admin token: admin");
	check(mgmt_auth_role("bearer   viewer-0123456789abcdef ", admin, viewer) == MGMT_ROLE_VIEWER, "viewer token: viewer");
	check(mgmt_auth_role("Bearer viewer-0123456789abcdeF", admin, viewer) == MGMT_ROLE_NONE, "a wrong token: none");
	check(mgmt_auth_role(NULL, admin, viewer) == MGMT_ROLE_NONE, "no header: none");
	check(mgmt_auth_role("Bearer viewer-0123456789abcdef", admin, "") == MGMT_ROLE_NONE, "no viewer role: the old viewer token is none");
	check(!strcmp(mgmt_role_name(MGMT_ROLE_ADMIN), "admin") && !strcmp(mgmt_role_name(MGMT_ROLE_VIEWER), "viewer") &&
		      !strcmp(mgmt_role_name(MGMT_ROLE_NONE), "none"), "role names");

	check(mgmt_reads_open("127.0.0.1"), "127.0.0.1: reads open");
	check(!mgmt_reads_open("127.0.0.2") && !mgmt_reads_open("::1") && !mgmt_reads_open("0.0.0.0") &&
		      !mgmt_reads_open("::ffff:127.0.0.1"), "127.0.0.2, ::1, 0.0.0.0, ::ffff:127.0.0.1: reads need a token");
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.mgmt_listen, sizeof(cfg.mgmt_listen), "127.0.0.1");
	check(mgmt_auth_policy(&cfg, err, sizeof(err)) == 0, "127.0.0.1 without tls: allowed");
	snprintf(cfg.mgmt_listen, sizeof(cfg.mgmt_listen), "::1");
	check(mgmt_auth_policy(&cfg, err, sizeof(err)) == -1 && !strncmp(err, "mgmt.tls: required", 18),
	      "::1 without tls: refused naming mgmt.tls");
	cfg.mgmt_insecure = true;
	check(mgmt_auth_policy(&cfg, err, sizeof(err)) == 0, "::1 with mgmt.insecure: allowed");
	cfg.mgmt_insecure = false;
	snprintf(cfg.mgmt_tls_cert, sizeof(cfg.mgmt_tls_cert), "/c.pem");
	check(mgmt_auth_policy(&cfg, err, sizeof(err)) == 0, "::1 with tls: allowed");

	for (i = 1; i <= MGMT_AUTH_FAIL_MAX; i++) {
		slow = mgmt_auth_fail(a, sizeof(a), t0 + (uint64_t)i * s, &first);
		firsts += first;
		if (slow)
			break;
	}
	check(i == MGMT_AUTH_FAIL_MAX + 1 && firsts == 0, "the first 10 failures of an address within a minute: not slowed");
	slow = mgmt_auth_fail(a, sizeof(a), t0 + 20 * s, &first);
	check(slow && first, "the 11th: slowed, and the first slowed one (logged once)");
	slow = mgmt_auth_fail(a, sizeof(a), t0 + 21 * s, &first);
	check(slow && !first, "the 12th: slowed, not logged again");
	check(!mgmt_auth_fail(b, sizeof(b), t0 + 21 * s, NULL), "another address: its own count");
	check(!mgmt_auth_fail(a, sizeof(a), t0 + 1 * s + 60 * s, NULL), "a minute after its window began: counted anew");
	for (i = 0; i <= MGMT_AUTH_FAIL_MAX; i++) /* a slowed again, in a window from t0 + 200 s */
		slow = mgmt_auth_fail(a, sizeof(a), t0 + 200 * s + (uint64_t)i, NULL);
	check(slow, "a slowed again in a new window");
	for (i = 0; i < MGMT_AUTH_FAIL_SLOTS; i++) { /* as many other addresses as slots, after a's */
		unsigned char k[17] = { 10, (unsigned char)(i >> 8), (unsigned char)i };

		mgmt_auth_fail(k, sizeof(k), t0 + 201 * s + (uint64_t)i, NULL);
	}
	check(!mgmt_auth_fail(a, sizeof(a), t0 + 202 * s, NULL),
	      "past the table's size the least recent address is forgotten (a counts from 1 again)");
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}
