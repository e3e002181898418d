/* SPDX-License-Identifier: BSD-3-Clause */
/* The primary's watch on the workers' life locks (lifewatch.h). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "spanbox/life.h"
#include "lifewatch.h"

#define SBX_LIFEWATCH_WAIT_MS 100 /* a watcher re-checks its stop flag at least this often */
#define SBX_LIFEWATCH_IDLE_NS 2000000L /* between two owners: look for the next one this often */

/* Process-local: what each watcher thread posts for the main loop. */
static struct {
	pthread_t tid[SBX_MAX_WORKERS];
	bool started[SBX_MAX_WORKERS];
	int died[SBX_MAX_WORKERS]; /* pid posted by the watcher (atomic), 0 none */
	int stop;                  /* atomic */
	struct sbx_shm *shm;
} lw;

/*
 * Watch slot @p arg: wait for an owner we have not seen end yet (life_pid), then on the lock.
 * EOWNERDEAD: it died holding the lock: post its pid. 0: it let go (a graceful stop): nothing to
 * post. Either way the lock is given back at once, for the next owner.
 */
static void *watch(void *arg)
{
	unsigned int w = (unsigned int)(uintptr_t)arg;
	struct sbx_worker_shm *ws = sbx_shm_worker(lw.shm, w);
	const struct timespec idle = { .tv_sec = 0, .tv_nsec = SBX_LIFEWATCH_IDLE_NS };
	int32_t seen = 0; /* the last owner whose end we saw */

	while (!__atomic_load_n(&lw.stop, __ATOMIC_ACQUIRE)) {
		int32_t owner = __atomic_load_n(&ws->life_pid, __ATOMIC_ACQUIRE);
		int rc;

		if (owner == 0 || owner == seen) {
			nanosleep(&idle, NULL);
			continue;
		}
		rc = sbx_life_timedlock(&ws->life, SBX_LIFEWATCH_WAIT_MS);
		if (rc == ETIMEDOUT)
			continue; /* it lives */
		/* whoever held it last published itself after it took it: that is who ended */
		owner = __atomic_load_n(&ws->life_pid, __ATOMIC_ACQUIRE);
		if (rc == EOWNERDEAD) {
			pthread_mutex_consistent(&ws->life);
			pthread_mutex_unlock(&ws->life);
			if (owner != seen)
				__atomic_store_n(&lw.died[w], owner, __ATOMIC_RELEASE);
			seen = owner;
		} else if (rc == 0) {
			pthread_mutex_unlock(&ws->life);
			seen = owner;
		} else {
			fprintf(stderr, "spanbox-primary: worker %u's life lock: %s; deaths are seen by waitpid only\n",
				w, strerror(rc));
			return NULL;
		}
	}
	return NULL;
}

int sbx_lifewatch_start(struct sbx_primary *p)
{
	sigset_t all, old;
	unsigned int w;
	int rc;

	lw.shm = p->shm;
	__atomic_store_n(&lw.stop, 0, __ATOMIC_RELEASE);
	for (w = 0; w < p->shm->layout.nb_worker_slots; w++)
		if ((rc = sbx_life_init(&sbx_shm_worker(p->shm, w)->life)) != 0) {
			fprintf(stderr, "spanbox-primary: worker %u's life lock: %s\n", w, strerror(rc));
			return -1;
		}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (w = 0; w < p->cfg->nb_workers; w++) {
		char name[16];

		rc = pthread_create(&lw.tid[w], NULL, watch, (void *)(uintptr_t)w);
		if (rc != 0) {
			fprintf(stderr, "spanbox-primary: life watch thread of worker %u: %s\n", w, strerror(rc));
			break;
		}
		lw.started[w] = true;
		snprintf(name, sizeof(name), "sbx-life-%u", w);
		pthread_setname_np(lw.tid[w], name);
		/* it must run the moment the kernel wakes it: the reap follows ~6 ms later, and on a
		 * loaded machine a normal thread may wait longer than that for a CPU. It sleeps but
		 * for microseconds a wake-up (or every 2 ms between two owners), so real-time priority
		 * 1 costs nothing; without CAP_SYS_NICE it stays a normal thread */
		rc = pthread_setschedparam(lw.tid[w], SCHED_FIFO, &(struct sched_param){ .sched_priority = 1 });
		if (rc != 0 && w == 0)
			fprintf(stderr, "spanbox-primary: life watch threads: no real-time priority (%s): a death may "
				"be seen at the reap instead\n", strerror(rc));
		rc = 0;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc == 0 ? 0 : -1;
}

void sbx_lifewatch_stop(struct sbx_primary *p)
{
	unsigned int w;

	(void)p;
	__atomic_store_n(&lw.stop, 1, __ATOMIC_RELEASE);
	for (w = 0; w < SBX_MAX_WORKERS; w++)
		if (lw.started[w]) {
			pthread_join(lw.tid[w], NULL);
			lw.started[w] = false;
		}
}

int sbx_lifewatch_take(struct sbx_primary *p, unsigned int w)
{
	(void)p;
	return w < SBX_MAX_WORKERS ? __atomic_exchange_n(&lw.died[w], 0, __ATOMIC_ACQ_REL) : 0;
}
