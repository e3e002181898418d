/* SPDX-License-Identifier: BSD-3-Clause */
/* Time formats of the JSON answers and the database (no memzone, no SQLite: anyone may include it). */
#ifndef SBX_MGMT_TIMEFMT_H
#define SBX_MGMT_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

/**
 * Format a CLOCK_REALTIME time as RFC 3339 UTC with milliseconds ("2026-11-30T01:37:58.123Z").
 * @param realtime_ns  ns since the Unix epoch.
 * @param buf          receives the text (NUL-terminated, cut to @p len); 25 bytes are enough.
 */
void mgmt_rfc3339(uint64_t realtime_ns, char *buf, size_t len);

#endif
