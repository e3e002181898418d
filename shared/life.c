/* SPDX-License-Identifier: BSD-3-Clause */
/* The life lock of a worker slot (spanbox/life.h). */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "spanbox/life.h"

int sbx_life_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	int rc;

	if ((rc = pthread_mutexattr_init(&a)) != 0)
		return rc;
	if ((rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED)) == 0 &&
	    (rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST)) == 0)
		rc = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return rc;
}

int sbx_life_timedlock(pthread_mutex_t *m, unsigned int timeout_ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until); /* pthread_mutex_timedlock's clock */
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	return pthread_mutex_timedlock(m, &until);
}

int sbx_life_hold(pthread_mutex_t *m, int32_t *owner_pid, unsigned int timeout_ms)
{
	int rc = sbx_life_timedlock(m, timeout_ms);

	if (rc == EOWNERDEAD)
		rc = pthread_mutex_consistent(m);
	if (rc == 0)
		__atomic_store_n(owner_pid, (int32_t)getpid(), __ATOMIC_RELEASE);
	return rc;
}

int sbx_life_release(pthread_mutex_t *m)
{
	return pthread_mutex_unlock(m);
}
