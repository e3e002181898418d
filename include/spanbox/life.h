/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The life lock of a worker slot (sbx_worker_shm.life): how the primary learns that a worker
 * process died before the kernel has finished tearing it down.
 *
 * The process that runs a slot holds a process-shared robust mutex (pthread_mutexattr_setrobust(3))
 * from the moment the slot is its own until it lets go of the queues (a graceful stop unlocks it).
 * When it dies holding it, the kernel walks the dead thread's robust list in exit_mm(), before it
 * unmaps the process's memory and long before the process becomes a zombie that waitpid() reaps
 * (Documentation/locking/robust-futexes.rst; measured here: ~6 ms of teardown for a DPDK
 * secondary, docs/BENCHMARKS.md "With hot standbys"), and wakes the waiter with EOWNERDEAD. The
 * waiter is a thread of the primary (primary/lifewatch.c). At that point the dead thread runs no
 * user code any more: its burst and its mempool caches may be taken back, and a standby may take
 * the queues over.
 */
#ifndef SPANBOX_LIFE_H
#define SPANBOX_LIFE_H

#include <pthread.h>
#include <stdint.h>

/**
 * Make @p m a process-shared, robust mutex, unlocked (the primary, on the memzone it creates).
 * @return 0, or an errno value of pthread_mutexattr_* / pthread_mutex_init.
 */
int sbx_life_init(pthread_mutex_t *m);

/**
 * pthread_mutex_timedlock() of @p m for at most @p timeout_ms from now (the deadline on
 * CLOCK_REALTIME, the clock it takes). @return its result: 0, EOWNERDEAD (held, the previous owner
 * died holding it: not made consistent), ETIMEDOUT, ...
 */
int sbx_life_timedlock(pthread_mutex_t *m, unsigned int timeout_ms);

/**
 * Hold @p m for this process (the worker's thread that polls: the one whose death matters), and
 * publish its pid in @p owner_pid after it holds it (release store). A previous owner that died
 * holding it (the primary's watcher did not take its death yet) leaves it EOWNERDEAD: made
 * consistent and held all the same. Waits at most @p timeout_ms (the watcher holds it for
 * microseconds only).
 * @return 0, or an errno value (ETIMEDOUT, ENOTRECOVERABLE, ...): the slot is then not to be run.
 */
int sbx_life_hold(pthread_mutex_t *m, int32_t *owner_pid, unsigned int timeout_ms);

/**
 * Let go of @p m (a graceful stop: after the last TX, before the slot is marked released): the
 * watcher sees a clean end, not a death. @return 0 or an errno value of pthread_mutex_unlock.
 */
int sbx_life_release(pthread_mutex_t *m);

#endif
