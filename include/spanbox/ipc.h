/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file ipc.h
 * The control messages between mgmt and the primary (DPDK rte_mp, "Multi-process Support" in the
 * DPDK programmer's guide): every action name, every request and reply as a typed struct. Both
 * sides use only this header; a message of another version or size is refused, never misread.
 *
 * Runtime tables (action SBX_IPC_TABLES): the config document itself is too large for an rte_mp
 * message (RTE_MP_MAX_PARAM_LEN bytes); it travels through the memzone's staging area (struct
 * sbx_tables_staging in shm.h), whose hand-over between mgmt and the primary is the state machine
 * below. It makes every answer true: a change mgmt reports as "nothing was changed" is never
 * applied later, and a change the primary applied is never reported as refused.
 *
 *   mgmt:    waits for FREE, writes json + request_id, stores PENDING, sends the request
 *   primary: PENDING -> WORKING (CAS; else the request is stale), validates;
 *            WORKING -> APPLYING (CAS) just before it publishes; else mgmt gave up: nothing done;
 *            then writes result + done_id and stores FREE
 *   mgmt, when no reply came in time: PENDING -> FREE (the primary never saw it: nothing changed),
 *            or WORKING -> ABANDONED (the primary will not publish it: nothing changed; it stores
 *            FREE when it is done), or else (APPLYING/FREE) it waits for FREE and reads result.
 */
#ifndef SPANBOX_IPC_H
#define SPANBOX_IPC_H

#include <stdint.h>

#define SBX_IPC_VERSION 1
#define SBX_IPC_TABLES "sbx_tables" /**< action: runtime tables (struct sbx_tables_req / _reply) */

/** Hand-over state of the staging area (sbx_tables_staging.state). */
enum sbx_staging_state {
	SBX_STAGING_FREE = 0,  /**< the primary does not read the staging area: mgmt may write it */
	SBX_STAGING_PENDING,   /**< mgmt wrote a request, the primary has not taken it yet */
	SBX_STAGING_WORKING,   /**< the primary validates it */
	SBX_STAGING_APPLYING,  /**< the primary publishes it: it will be live */
	SBX_STAGING_ABANDONED, /**< mgmt stopped waiting: the primary must not publish it */
};

/** Verbs of SBX_IPC_TABLES. */
enum sbx_tables_verb {
	SBX_TABLES_APPLY = 1, /**< validate and publish the staged document */
};

/** Results of SBX_IPC_TABLES (also kept in sbx_tables_staging.result). */
enum sbx_tables_result {
	SBX_TABLES_NONE = 0,      /**< no result yet */
	SBX_TABLES_APPLIED,       /**< published: live in generation gen */
	SBX_TABLES_REFUSED,       /**< invalid: staging.error / error_field say why (HTTP 422) */
	SBX_TABLES_BUSY,          /**< not applied now (a worker is late, mgmt gave up): try again (503) */
	SBX_TABLES_BAD_MESSAGE,   /**< wrong version, size or verb */
	SBX_TABLES_STALE,         /**< request_id is not the staged request: nothing done */
};

/** Request of SBX_IPC_TABLES. */
struct sbx_tables_req {
	uint32_t version;    /**< SBX_IPC_VERSION */
	uint32_t verb;       /**< enum sbx_tables_verb */
	uint64_t request_id; /**< sbx_tables_staging.request_id of the staged document */
};

/** Reply of SBX_IPC_TABLES. */
struct sbx_tables_reply {
	uint32_t version;    /**< SBX_IPC_VERSION */
	uint32_t result;     /**< enum sbx_tables_result */
	uint64_t request_id; /**< the request answered */
	uint64_t gen;        /**< tables generation after the request */
};

/** @return a name for @p r ("applied", "refused"...), "unknown" when out of range. */
static inline const char *sbx_tables_result_name(uint32_t r)
{
	static const char *const names[] = { "none", "applied", "refused", "busy", "bad message", "stale" };

	return r < sizeof(names) / sizeof(names[0]) ? names[r] : "unknown";
}

#endif
