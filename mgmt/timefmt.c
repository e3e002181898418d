/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <time.h>

#include "timefmt.h"

void mgmt_rfc3339(uint64_t realtime_ns, char *buf, size_t len)
{
	time_t t = (time_t)(realtime_ns / 1000000000ULL);
	struct tm tm;
	char s[24];

	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03uZ", s, (unsigned int)(realtime_ns / 1000000ULL % 1000));
}
