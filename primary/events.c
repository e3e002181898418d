/* SPDX-License-Identifier: BSD-3-Clause */
/* The primary's event log: a ring in the memzone, read by mgmt, and stdout with timestamps. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_atomic.h>

#include "primary.h"

/* the main loop and the IPC thread (runtime tables, tables.c) both record events */
static pthread_mutex_t event_lock = PTHREAD_MUTEX_INITIALIZER;

void sbx_event(struct sbx_primary *p, const char *kind, int worker, int pid, const char *fmt, ...)
{
	uint64_t now = sbx_realtime_ns(), seq;
	struct sbx_event *e;
	char when[32];
	struct tm tm;
	time_t t = (time_t)(now / 1000000000ULL);
	va_list ap;

	pthread_mutex_lock(&event_lock);
	seq = p->shm->event_seq + 1;
	e = &p->shm->events[(seq - 1) % SBX_EVENTS];
	e->seq = 0; /* readers skip the entry while it is rewritten */
	rte_smp_wmb();
	e->time_ns = now;
	e->worker = worker;
	e->pid = pid;
	snprintf(e->kind, sizeof(e->kind), "%s", kind);
	va_start(ap, fmt);
	vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
	va_end(ap);
	rte_smp_wmb();
	e->seq = seq;
	p->shm->event_seq = seq;

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	if (worker >= 0)
		printf("spanbox-primary: %s.%03u %s worker %d pid %d: %s\n", when,
		       (unsigned int)(now / 1000000 % 1000), kind, worker, pid, e->detail);
	else
		printf("spanbox-primary: %s.%03u %s: %s\n", when, (unsigned int)(now / 1000000 % 1000), kind, e->detail);
	pthread_mutex_unlock(&event_lock);
}
