/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file lcore_lock.h
 * One process per lcore id and file prefix.
 *
 * The mempool caches live in the pool (shared memory), one per lcore id, and are used without
 * locks: two processes of one DPDK instance (file prefix) on the same lcore id corrupt them, and
 * the pool drains with nothing to show for it. So the primary, mgmt and every worker take an
 * exclusive flock on "spanbox_lcore_<id>.lock" in the prefix's DPDK runtime directory
 * (sbx_runtime_dir()) before rte_eal_init(), and keep it for their life; a second taker is refused
 * with a message naming the lcore and the holder's pid. The kernel drops the lock when the holder
 * dies, so a worker's successor gets it as soon as the dead one is gone.
 */
#ifndef SPANBOX_LCORE_LOCK_H
#define SPANBOX_LCORE_LOCK_H

#include <stddef.h>
#include <sys/types.h>

/** How long a taker retries while the lock is held, ms (a primary's clean-up holds it for µs). */
#define SBX_LCORE_LOCK_WAIT_MS 200

/** Path of the lock file of @p lcore_id of file prefix @p prefix, into @p buf. */
void sbx_lcore_lock_path(const char *prefix, unsigned int lcore_id, char *buf, size_t len);

/**
 * Take the lock of @p lcore_id for file prefix @p prefix (creating the runtime directory if
 * needed) and write "PID ROLE" into it. Retries for SBX_LCORE_LOCK_WAIT_MS while another process
 * holds it.
 * @param role  who takes it ("primary", "mgmt", "worker 0"), recorded for the next taker's message.
 * @param err   on failure: "lcore 2 of file prefix 'spanbox' is in use by pid 123 (spanbox-worker,
 *              worker 0): ..." or the system error.
 * @return the fd holding the lock (O_CLOEXEC; the caller keeps it open for the process's life),
 *         -1 when another live process holds it, -2 on another error (errno-based message).
 */
int sbx_lcore_lock(const char *prefix, unsigned int lcore_id, const char *role, char *err, size_t errlen);

/**
 * Check that the inherited descriptor @p fd (across exec) still holds the lock of @p lcore_id of
 * @p prefix: the same file as the path names, and locked by this open file description.
 * @return 0 when it does, -1 otherwise (the caller closes it and takes the lock anew).
 */
int sbx_lcore_lock_adopt(int fd, const char *prefix, unsigned int lcore_id);

/**
 * Give up the lock @p fd of sbx_lcore_lock() at a clean exit: remove the lock file, close @p fd,
 * and remove the prefix's runtime directory if that left it empty (a mgmt that ran while the
 * appliance was down leaves nothing behind). -1 is ignored.
 */
void sbx_lcore_unlock(int fd, const char *prefix, unsigned int lcore_id);

/**
 * @return true when @p name (a file name, no directory) is an lcore lock file; used by the
 *         primary's clean-up of the runtime directory, which leaves held ones in place.
 */
int sbx_lcore_lock_is_name(const char *name);

/** File name of the prefix lock in the prefix's runtime directory (sbx_prefix_lock()). */
#define SBX_PREFIX_LOCK_NAME "spanbox_primary.lock"

/** Path of the prefix lock of file prefix @p prefix, into @p buf. */
void sbx_prefix_lock_path(const char *prefix, char *buf, size_t len);

/**
 * One appliance per file prefix: the primary takes an exclusive flock on SBX_PREFIX_LOCK_NAME in
 * the prefix's runtime directory first, before it touches anything of the prefix (its attach
 * marker, its runtime files, its hugepages), and keeps it for its life; `spanbox-primary
 * --clean-prefix` takes it while it removes a dead appliance's files. Retries for
 * SBX_LCORE_LOCK_WAIT_MS while held, as sbx_lcore_lock().
 * @param role    recorded in the file for the next taker's message ("primary", "clean-up").
 * @param holder  set to the holder's pid when another process holds it (0 when unknown).
 * @param err     on failure: "an appliance of file prefix 'P' is running (primary pid N (comm,
 *                role)): ..." or the system error.
 * @return the fd holding the lock (O_CLOEXEC: workers do not inherit it), -1 when another live
 *         process holds it, -2 on another error.
 */
int sbx_prefix_lock(const char *prefix, const char *role, int *holder, char *err, size_t errlen);

/** Give up the prefix lock @p fd at exit: remove its file, close @p fd, and remove the runtime
 *  directory if that left it empty. -1 is ignored. */
void sbx_prefix_unlock(int fd, const char *prefix);

/** @return the pid holding a flock on inode @p ino (from /proc/locks), 0 when none is found. */
int sbx_flock_holder(ino_t ino);

#endif
