/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The primary's watch on the workers' life locks (spanbox/life.h): one thread per worker slot,
 * parked in pthread_mutex_timedlock() on the slot's lock while a process holds it. A death
 * (EOWNERDEAD) is posted for the main loop (sbx_lifewatch_take), which takes the slot back and
 * hands it to a standby without waiting for waitpid(); the process is reaped later as usual.
 */
#ifndef SPANBOX_LIFEWATCH_H
#define SPANBOX_LIFEWATCH_H

#include "primary.h"

/**
 * Initialise every worker slot's life lock in the memzone (before any worker starts) and start
 * the watcher threads, one per configured worker (signals blocked: SIGCHLD and the others are
 * the main loop's). @return 0, or -1 with the reason printed.
 */
int sbx_lifewatch_start(struct sbx_primary *p);

/**
 * Stop and join the watcher threads (each wakes at least every 100 ms). Before the memzone goes.
 */
void sbx_lifewatch_stop(struct sbx_primary *p);

/**
 * The pid of a process that died holding worker slot @p w's life lock since the last call, or 0.
 * Main loop only (an atomic exchange with the watcher's post).
 */
int sbx_lifewatch_take(struct sbx_primary *p, unsigned int w);

#endif
