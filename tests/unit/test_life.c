/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of shared/life.c, the life lock of a worker slot (spanbox/life.h): real processes on a
 * real process-shared robust mutex in an anonymous shared mapping. A child that dies holding it
 * (SIGKILL) wakes the waiter with EOWNERDEAD and its pid is published; one that lets go wakes it
 * with 0; a successor holds it after a death nobody took. Prints TAP; exits 1 when a case failed.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spanbox/life.h"
#include "tap.h"

struct slot {
	pthread_mutex_t life;
	int32_t life_pid;
	int32_t held; /* the child holds it (after its hold returned) */
};

/* A child that holds @p s's lock, says so, then sleeps (to be killed) or lets go after @p ms. */
static pid_t child(struct slot *s, int release_after_ms)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (sbx_life_hold(&s->life, &s->life_pid, 2000) != 0)
			_exit(3);
		__atomic_store_n(&s->held, 1, __ATOMIC_RELEASE);
		if (release_after_ms < 0)
			for (;;)
				pause();
		usleep((useconds_t)release_after_ms * 1000);
		sbx_life_release(&s->life);
		_exit(0);
	}
	while (pid > 0 && !__atomic_load_n(&s->held, __ATOMIC_ACQUIRE))
		usleep(1000);
	return pid;
}

/* Lock as the primary's watcher does, at most @p ms. @return its result, the lock given back. */
static int watch_once(struct slot *s, int ms)
{
	int rc = sbx_life_timedlock(&s->life, (unsigned int)ms);

	if (rc == EOWNERDEAD)
		pthread_mutex_consistent(&s->life);
	if (rc == 0 || rc == EOWNERDEAD)
		pthread_mutex_unlock(&s->life);
	return rc;
}

int main(void)
{
	struct slot *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid;
	int rc, st;

	if (s == MAP_FAILED)
		return 1;
	memset(s, 0, sizeof(*s));
	check(sbx_life_init(&s->life) == 0, "sbx_life_init: a process-shared robust mutex");
	check(watch_once(s, 10) == 0, "nobody holds a new life lock (the watcher takes and gives it back)");

	/* death: kill -9 while it holds the lock */
	pid = child(s, -1);
	check(pid > 0 && __atomic_load_n(&s->life_pid, __ATOMIC_ACQUIRE) == pid,
	      "a holder publishes its pid after it holds the lock (%d)", (int)s->life_pid);
	check(watch_once(s, 20) == ETIMEDOUT, "while it lives, the watcher waits (ETIMEDOUT)");
	kill(pid, SIGKILL);
	rc = watch_once(s, 2000);
	check(rc == EOWNERDEAD, "kill -9 of the holder wakes the watcher with EOWNERDEAD (got %d)", rc);
	check(s->life_pid == pid, "... and life_pid names the dead holder");
	check(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "it is reaped afterwards");
	check(watch_once(s, 10) == 0, "made consistent by the watcher: free again, not ENOTRECOVERABLE");

	/* a clean end: released, not dead */
	__atomic_store_n(&s->held, 0, __ATOMIC_RELEASE);
	pid = child(s, 50);
	rc = watch_once(s, 2000);
	check(rc == 0, "a holder that lets go wakes the watcher with 0, not EOWNERDEAD (got %d)", rc);
	check(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0, "it exits 0");

	/* a death nobody took: the successor holds it all the same */
	__atomic_store_n(&s->held, 0, __ATOMIC_RELEASE);
	pid = child(s, -1);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	rc = sbx_life_hold(&s->life, &s->life_pid, 1000);
	check(rc == 0 && s->life_pid == getpid(), "a successor holds a lock whose last owner died unseen (rc %d)", rc);
	check(sbx_life_release(&s->life) == 0, "... and lets go of it");

	/* a hold that cannot be had in time */
	__atomic_store_n(&s->held, 0, __ATOMIC_RELEASE);
	pid = child(s, -1);
	rc = sbx_life_hold(&s->life, &s->life_pid, 50);
	check(rc == ETIMEDOUT, "a hold while another process holds it times out (ETIMEDOUT, got %d)", rc);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
