/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the HTTP connection guard's deadline predicate (mgmt/http.c, mgmt_http_overdue()):
 * issue #24 item 1. The sweep read the clock before it took the table's lock; a connection
 * stamped by the HTTP thread in between had since_ns > now, and the unsigned now - since_ns
 * wrapped to about 2^64: overdue, shut down before its request ("Empty reply from server").
 * The predicate must say "not overdue" for every stamp at or after the clock read, and keep the
 * deadlines exact otherwise. TAP on stdout.
 */
#include <stdint.h>
#include <stdio.h>

#include "../../mgmt/http.h"
#include "tap.h"

int main(void)
{
	const uint64_t s = 1000000000ULL, now = 1000 * s, max = 10 * s;
	struct mgmt_http_closes hc;

	check(!mgmt_http_overdue(now, now + 1, max), "a stamp 1 ns after the clock read is not overdue (it wrapped to 2^64 - 1)");
	check(!mgmt_http_overdue(now, now + 30000000ULL, max), "a stamp 30 ms after the clock read (a preempted sweep) is not overdue");
	check(!mgmt_http_overdue(now, UINT64_MAX, max), "the largest stamp is not overdue");
	check(!mgmt_http_overdue(now, now, max), "a stamp equal to the clock read is not overdue");
	check(!mgmt_http_overdue(now, now - max + 1, max), "1 ns before the deadline: not overdue");
	check(mgmt_http_overdue(now, now - max, max), "exactly at the deadline (10 s): overdue");
	check(mgmt_http_overdue(now, now - max - 1, max), "1 ns past the deadline: overdue");
	check(mgmt_http_overdue(now, 0, max), "a stamp at 0, 1000 s ago: overdue");
	check(!mgmt_http_overdue(5 * s, 0, max), "a stamp at 0, 5 s ago: not overdue");
	mgmt_http_closes(&hc);
	check(hc.deadline_waiting == 0 && hc.deadline_answering == 0 && hc.evicted == 0 && hc.stale == 0,
	      "no daemon: every close count is 0");
	printf("1..%d\n", tests);
	return failures != 0;
}
