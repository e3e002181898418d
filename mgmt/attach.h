/* SPDX-License-Identifier: BSD-3-Clause */
/* Attaching mgmt to the running appliance, noticing when it goes away, and re-executing. */
#ifndef SBX_MGMT_ATTACH_H
#define SBX_MGMT_ATTACH_H

#include <stdbool.h>
#include <stddef.h>

#include "spanbox/config.h"
#include "spanbox/shm.h"

/** Environment variable carrying the listening socket fd across mgmt_reexec(). */
#define MGMT_LISTEN_FD_ENV "SBX_MGMT_LISTEN_FD"
/** Environment variable carrying the fd of mgmt's lcore lock (spanbox/lcore_lock.h) across mgmt_reexec(). */
#define MGMT_LOCK_FD_ENV "SBX_MGMT_LCORE_LOCK_FD"
/** Seconds between two attach attempts while the appliance is down. */
#define MGMT_RETRY_S 2
/** A primary heartbeat older than this means the primary is gone, ns. */
#define MGMT_HEARTBEAT_MAX_NS 1000000000ULL

/**
 * Attach to the primary as a DPDK secondary and look up the memzone.
 *
 * First tests the primary's lock on the EAL runtime config file; when nobody holds it the EAL is
 * not initialised at all (rte_eal_init would fail, or worse map a dead primary's leftover files).
 * Nor when the attach marker's primary is stopped (SIGSTOP): a secondary's rte_eal_init() would
 * wait for its EAL requests to time out (5 s each) while mgmt serves nothing. Otherwise calls
 * rte_eal_init() with sbx_eal_args_build(SBX_ROLE_MGMT), sbx_shm_attach() and
 * mgmt_primary_state(): a primary not responding (but alive) is attached all the same.
 *
 * @param cfg       the loaded config (file_prefix, mgmt_lcore, cpus...).
 * @param prog      argv[0], for the EAL.
 * @param eal_up    set to true once rte_eal_init() succeeded (the caller must then call
 *                  rte_eal_cleanup() before exiting or re-executing), false otherwise.
 * @param err       receives why the appliance is down, on failure.
 * @param errlen    size of @p err in bytes.
 * @return the memzone (read-only for mgmt; valid until rte_eal_cleanup()), or NULL when down.
 *         rte_eal_init() runs at most once per process: after a NULL return, retry by
 *         mgmt_reexec().
 */
const struct sbx_shm *mgmt_attach(const struct sbx_config *cfg, const char *prog, bool *eal_up,
				  char *err, size_t errlen);

/** What mgmt_primary_state() makes of the primary behind the memzone. */
enum mgmt_primary {
	MGMT_PRIMARY_UP,             /**< running, heartbeat at most MGMT_HEARTBEAT_MAX_NS old */
	MGMT_PRIMARY_NOT_RESPONDING, /**< running and its process lives, but its heartbeat is older
				      *   (stopped, hung, starved): mgmt stays attached and answers
				      *   "down" at once; it is up again when the heartbeat resumes */
	MGMT_PRIMARY_GONE,           /**< stopped (shm->running 0), exited, or a zombie: mgmt detaches */
};

/**
 * The state of the primary behind @p shm, from the memzone's running flag and heartbeat and its
 * process (/proc): never asks the primary anything, so it answers at once whatever the primary
 * does. Reads only.
 * @param why  receives the reason when it is not MGMT_PRIMARY_UP (may be NULL).
 */
enum mgmt_primary mgmt_primary_state(const struct sbx_shm *shm, char *why, size_t whylen);

/** @return true when mgmt_primary_state() is MGMT_PRIMARY_UP (@p why as there). */
bool mgmt_primary_alive(const struct sbx_shm *shm, char *why, size_t whylen);

/**
 * Replace this process by a fresh copy of itself (/proc/self/exe, same @p argv) that keeps
 * @p listen_fd open and finds it in MGMT_LISTEN_FD_ENV, so the TCP port never closes, and keeps
 * @p lock_fd (mgmt's lcore lock, -1 for none) in MGMT_LOCK_FD_ENV, so no other process can take
 * mgmt's lcore id in between. Closes every other fd >= 3 first. The caller must have stopped the
 * HTTP daemon, closed the database and cleaned up the EAL.
 * @return only on failure: -1 with errno set.
 */
int mgmt_reexec(int listen_fd, int lock_fd, char *const argv[]);

/**
 * mgmt's lcore lock (spanbox/lcore_lock.h) for eal.mgmt_lcore of @p cfg's file prefix, taken before
 * any rte_eal_init(): the one inherited through MGMT_LOCK_FD_ENV after a re-exec (the variable is
 * then unset), else taken now.
 * @param err  on failure, why (names the lcore and the holder's pid when another process holds it).
 * @return the fd (keep it open for the process's life), or -1.
 */
int mgmt_lcore_lock(const struct sbx_config *cfg, char *err, size_t errlen);

/**
 * The listening socket inherited through MGMT_LISTEN_FD_ENV (the variable is then unset).
 * @return the fd, or -1 when there is none or it is not a listening socket.
 */
int mgmt_inherited_listen_fd(void);

/**
 * Send a control request (struct sbx_ctl_req of spanbox/ipc.h, action SBX_IPC_CTL, answered by
 * primary/control.c) and wait up to SBX_CTL_TIMEOUT_MS for its reply. Blocks: call it from a
 * thread that may wait (the control lane of http.c), one request at a time (DPDK refuses a second
 * pending request of the same action).
 * @param verb    enum sbx_ctl_verb
 * @param target  worker id or port index
 * @param up      SBX_CTL_LINK_SET: 1 up, 0 down
 * @param rep     receives the reply; without one (no answer in time, an answer of another size,
 *                version or request id) its result is SBX_CTL_NONE and error says why.
 * @return rep->result (enum sbx_ctl_result).
 */
uint32_t mgmt_control(uint32_t verb, uint32_t target, uint32_t up, struct sbx_ctl_reply *rep);

/**
 * Send @p req_len bytes of @p request (at most RTE_MP_MAX_PARAM_LEN) to the primary's EAL
 * multi-process action @p action and wait up to @p timeout_ms ms for its answer: up to
 * *@p answer_len bytes are copied into @p answer, and *@p answer_len becomes the answer's size.
 * @return 0 when answered, -1 otherwise (no answer in time, no primary, request too long).
 */
int mgmt_request(const char *action, const void *request, size_t req_len, unsigned int timeout_ms, void *answer,
		 size_t *answer_len);

#endif
