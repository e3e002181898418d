/* SPDX-License-Identifier: BSD-3-Clause */
/* TAP output for the unit tests: "ok N - ..." / "not ok N - ...", then "1..N" (tests/run.sh counts them). */
#ifndef SPANBOX_TAP_H
#define SPANBOX_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int tests, failures;

/* Record one TAP result; returns @p cond. */
__attribute__((format(printf, 2, 3), unused))
static bool check(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures += !cond;
	return cond;
}

#endif
