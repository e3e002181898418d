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
 *
 * Worker and port control (action SBX_IPC_CTL): struct sbx_ctl_req / sbx_ctl_reply, one verb a
 * message (restart a worker, set a port's link up or down). A request of another version, size or
 * verb is answered SBX_CTL_BAD_MESSAGE and does nothing.
 *
 * Who answers what in the primary (one model, primary/control.c and primary/tables.c): the EAL
 * IPC thread never blocks. It checks each message and either answers at once (a bad message, a
 * restart: a flag for the main loop) or hands it on with a copy of the sender's address, and the
 * thread that finishes the work answers with rte_mp_reply() (DPDK 22.11 eal_common_proc.c: the
 * handler's peer is the sender's socket path, a string; rte_mp_reply() from any thread sends to it
 * on the process's IPC socket, so a later reply from a copy of that path is valid):
 *   - SBX_IPC_TABLES apply: a tables thread of its own (validation, filter compilation and the
 *     grace period take up to seconds; a restart or link request never queues behind it);
 *   - SBX_CTL_LINK_SET: the primary's main loop (it owns the ports; supervision stays
 *     single-threaded), within SBX_CTL_LINK_WAIT_MS or not at all.
 * mgmt sends at most one request per action at a time (DPDK refuses a second pending request of
 * the same name from the same process: EEXIST), and matches replies by request_id.
 */
#ifndef SPANBOX_IPC_H
#define SPANBOX_IPC_H

#include <stdint.h>

#define SBX_IPC_VERSION 1
#define SBX_IPC_TABLES "sbx_tables" /**< action: runtime tables (struct sbx_tables_req / _reply) */
#define SBX_IPC_CTL "sbx_ctl"       /**< action: worker and port control (struct sbx_ctl_req / _reply) */
#define SBX_IPC_PARAM_MAX 256       /**< bytes a request or reply may take (DPDK's RTE_MP_MAX_PARAM_LEN,
				         checked where rte_eal.h is included) */

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

/** Verbs of SBX_IPC_CTL. */
enum sbx_ctl_verb {
	SBX_CTL_RESTART_WORKER = 1, /**< drain worker @c target and start it again (or revive a failed one) */
	SBX_CTL_LINK_SET,           /**< set the link of port @c target (index in cfg.ports) up or down */
	SBX_CTL_UPGRADE_WORKERS,    /**< hand every worker over to standbys of the binary mgmt wrote into
				         shm->upgrade_path (checked, flagged for the main loop, answered at once) */
};

/** Results of SBX_IPC_CTL. */
enum sbx_ctl_result {
	SBX_CTL_NONE = 0,        /**< no result (never sent) */
	SBX_CTL_OK,              /**< done (restart: requested; link: set, state read back in link_up) */
	SBX_CTL_BAD_MESSAGE,     /**< wrong version, size or verb: nothing done */
	SBX_CTL_NO_SUCH_WORKER,  /**< target is not a worker id: nothing done */
	SBX_CTL_NO_SUCH_PORT,    /**< target is not a port index: nothing done */
	SBX_CTL_BUSY,            /**< another link request is in progress, or the main loop did not take
				      it within SBX_CTL_LINK_WAIT_MS: nothing done, try again (503) */
	SBX_CTL_FAILED,          /**< the port refused (error says why: a pcap port, a driver error) (409) */
};

/** ms the primary's main loop has to take a link request; an older one is dropped, undone. mgmt
 * waits SBX_CTL_TIMEOUT_MS for an answer. */
#define SBX_CTL_LINK_WAIT_MS 900
#define SBX_CTL_TIMEOUT_MS 1000

/** ms mgmt waits for the staging area to be free, and again for the primary's answer to an
 * SBX_IPC_TABLES apply (filter compilation + one grace period of at most 2 s, and the previous
 * one); mgmt's shutdown lets a change in flight be answered for about this long. */
#define SBX_TABLES_APPLY_TIMEOUT_MS 5000

/** Request of SBX_IPC_CTL. */
struct sbx_ctl_req {
	uint32_t version;    /**< SBX_IPC_VERSION */
	uint32_t verb;       /**< enum sbx_ctl_verb */
	uint32_t target;     /**< worker id (RESTART_WORKER) or port index (LINK_SET) */
	uint32_t up;         /**< LINK_SET: 1 up, 0 down; else 0 */
	uint64_t request_id; /**< chosen by mgmt, echoed in the reply */
};

/** Reply of SBX_IPC_CTL. */
struct sbx_ctl_reply {
	uint32_t version;    /**< SBX_IPC_VERSION */
	uint32_t result;     /**< enum sbx_ctl_result */
	uint64_t request_id; /**< the request answered */
	uint32_t link_up;    /**< LINK_SET, OK: the link state read back after the change (1 up) */
	uint32_t reserved;   /**< 0 */
	char error[192];     /**< NUL-terminated reason when result is not OK, "" else */
};

_Static_assert(sizeof(struct sbx_ctl_req) <= SBX_IPC_PARAM_MAX, "sbx_ctl_req fits an rte_mp message");
_Static_assert(sizeof(struct sbx_ctl_reply) <= SBX_IPC_PARAM_MAX, "sbx_ctl_reply fits an rte_mp message");
_Static_assert(sizeof(struct sbx_tables_reply) <= SBX_IPC_PARAM_MAX, "sbx_tables_reply fits an rte_mp message");

/** @return a name for @p r ("ok", "busy"...), "unknown" when out of range. */
static inline const char *sbx_ctl_result_name(uint32_t r)
{
	static const char *const names[] = { "none", "ok", "bad message", "no such worker", "no such port",
					     "busy", "failed" };

	return r < sizeof(names) / sizeof(names[0]) ? names[r] : "unknown";
}

/*
 * DPDK's packet capture requests (action SBX_IPC_PDUMP, docs/CAPTURE.md "DPDK's own tools"):
 * dpdk-dumpcap and dpdk-pdump (secondaries) send them to the primary with rte_pdump_enable*() /
 * rte_pdump_disable*(). DPDK 22.11's librte_pdump would register the capture callbacks in the
 * process that answers (the primary, which polls no port); spanbox's primary answers instead
 * (primary/pdump.c): it checks the request, publishes it in the memzone's capture table (struct
 * sbx_pdump_table in shm.h) and answers once every running worker has taken the table (a grace
 * period of the tables' QSBR variable): each worker registers the RX/TX callbacks in its own
 * process (secondary/pdump.c). The structs below are DPDK 22.11's wire format (lib/pdump/rte_pdump.c,
 * private there: struct pdump_request of 112 bytes, checked against librte_pdump's pdump_server,
 * and struct pdump_response); a request of another size or version is answered -EINVAL.
 */
#define SBX_IPC_PDUMP "mp_pdump" /**< action: DPDK's PDUMP_MP (struct sbx_pdump_req / _reply) */
#define SBX_PDUMP_DEV_NAME_LEN 64 /**< RTE_DEV_NAME_MAX_LEN of DPDK 22.11 */

/** Operations of SBX_IPC_PDUMP (DPDK's enum pdump_operation). */
enum sbx_pdump_op {
	SBX_PDUMP_OP_DISABLE = 1, /**< remove the captures of (device, queue, direction) */
	SBX_PDUMP_OP_ENABLE = 2,  /**< capture (device, queue, direction) into ring */
};

/** Request versions (DPDK's enum pdump_version). */
enum sbx_pdump_ver {
	SBX_PDUMP_V1 = 1, /**< dpdk-pdump: plain copies (rte_pktmbuf_copy), no filter */
	SBX_PDUMP_V2 = 2, /**< dpdk-dumpcap: pcapng records (rte_pcapng_copy), filter and snaplen */
};

/** Request of SBX_IPC_PDUMP: DPDK 22.11's struct pdump_request, field for field. The pointers are
 * in DPDK's shared hugepage memory (the client's rte_ring, rte_mempool and rte_bpf_prm), the same
 * address in every process of the prefix. */
struct sbx_pdump_req {
	uint16_t ver;   /**< enum sbx_pdump_ver */
	uint16_t op;    /**< enum sbx_pdump_op */
	uint32_t flags; /**< RTE_PDUMP_FLAG_RX (1), _TX (2), _PCAPNG (4) */
	char device[SBX_PDUMP_DEV_NAME_LEN]; /**< ethdev name (rte_eth_dev_get_name_by_port) */
	uint16_t queue; /**< queue id, or RTE_PDUMP_ALL_QUEUES (0xffff) */
	void *ring;     /**< struct rte_ring * the copies are enqueued to (enable) */
	void *mp;       /**< struct rte_mempool * the copies are allocated from (enable) */
	const void *prm; /**< const struct rte_bpf_prm * filter (rte_bpf_convert), NULL = every frame */
	uint32_t snaplen; /**< bytes kept of each frame (V2), 0 or UINT32_MAX = all */
};

/** Reply of SBX_IPC_PDUMP: DPDK 22.11's struct pdump_response. */
struct sbx_pdump_reply {
	uint16_t ver;      /**< the request's ver */
	uint16_t res_op;   /**< the request's op */
	int32_t err_value; /**< 0 done, else a negative errno (the client sets rte_errno to it):
			        -EINVAL bad request / unknown device / nothing to disable, -EEXIST
			        already captured, -ENOSPC capture table full, -EBUSY try again */
};

_Static_assert(sizeof(struct sbx_pdump_req) == 112, "DPDK 22.11's struct pdump_request is 112 bytes");
_Static_assert(sizeof(struct sbx_pdump_reply) == 8, "DPDK 22.11's struct pdump_response is 8 bytes");

#endif
