/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control requests from mgmt, over DPDK's multi-process channel (rte_mp, action SBX_IPC_CTL,
 * struct sbx_ctl_req / sbx_ctl_reply of include/spanbox/ipc.h, which also states the one
 * concurrency model of the primary's requests). The handler runs in the EAL IPC thread and never
 * blocks there:
 *   - SBX_CTL_RESTART_WORKER: validated, flagged for the main loop (workers.c), answered at once;
 *   - SBX_CTL_LINK_SET: validated and posted, with a copy of the sender's address, to the main
 *     loop (sbx_control_poll, about every ms), which sets the link and answers itself with
 *     rte_mp_reply(). One link request at a time (another is answered BUSY). A request the main
 *     loop takes later than SBX_CTL_LINK_WAIT_MS after it was posted is answered BUSY undone
 *     (mgmt stopped waiting at SBX_CTL_TIMEOUT_MS), so nothing is done after mgmt said 503.
 * Why the main loop: it owns the ports and supervision (restarts, link refresh) stays
 * single-threaded; why not the IPC thread: a wait there delayed every other request (a tables
 * apply) behind it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <rte_eal.h>
#include <unistd.h>

#include "spanbox/ipc.h"
#include "primary.h"

_Static_assert(SBX_IPC_PARAM_MAX == RTE_MP_MAX_PARAM_LEN, "ipc.h names DPDK's message size");

static struct sbx_primary *ctl_p;

int sbx_ipc_reply(const char *action, const void *rep, size_t len, const char *peer)
{
	struct rte_mp_msg reply;

	if (len > sizeof(reply.param))
		return -1;
	memset(&reply, 0, sizeof(reply));
	snprintf(reply.name, sizeof(reply.name), "%s", action);
	reply.len_param = (int)len;
	memcpy(reply.param, rep, len);
	return rte_mp_reply(&reply, peer);
}

/* Send @p rep to @p peer (a socket path, as the EAL handed it to on_request). */
static int send_reply(const struct sbx_ctl_reply *rep, const char *peer)
{
	return sbx_ipc_reply(SBX_IPC_CTL, rep, sizeof(*rep), peer);
}

void sbx_control_poll(struct sbx_primary *p)
{
	uint32_t st = SBX_LINK_REQ_POSTED;
	struct sbx_ctl_reply rep = { .version = SBX_IPC_VERSION, .result = SBX_CTL_OK };
	char answer[sizeof(rep.error) + 8];

	if (__atomic_load_n(&p->link_req_state, __ATOMIC_RELAXED) != SBX_LINK_REQ_POSTED ||
	    !__atomic_compare_exchange_n(&p->link_req_state, &st, SBX_LINK_REQ_TAKEN, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	rep.request_id = p->link_req_id;
	if (sbx_now_ns() - p->link_req_posted_ns > (uint64_t)SBX_CTL_LINK_WAIT_MS * 1000000ULL) {
		rep.result = SBX_CTL_BUSY;
		snprintf(rep.error, sizeof(rep.error), "the primary's main loop was busy (nothing changed)");
	} else if (sbx_ports_set_link(p, p->link_req_port, p->link_req_up, answer, sizeof(answer)) != 0) {
		/* mgmt records the change in its audit log (with the client's address) */
		rep.result = SBX_CTL_FAILED;
		snprintf(rep.error, sizeof(rep.error), "%.*s", (int)sizeof(rep.error) - 1,
			 strncmp(answer, "error: ", 7) == 0 ? answer + 7 : answer);
	} else {
		rep.link_up = p->shm->ports[p->link_req_port].link_up ? 1 : 0;
	}
	send_reply(&rep, p->link_req_peer);
	__atomic_store_n(&p->link_req_state, SBX_LINK_REQ_IDLE, __ATOMIC_RELEASE);
}

/* Check one request; answer it, or hand a link request to the main loop (which answers it). */
static int on_request(const struct rte_mp_msg *msg, const void *peer)
{
	struct sbx_ctl_reply rep = { .version = SBX_IPC_VERSION, .result = SBX_CTL_BAD_MESSAGE };
	struct sbx_ctl_req req;
	uint32_t st = SBX_LINK_REQ_IDLE;

	if (msg->len_param != (int)sizeof(req)) {
		snprintf(rep.error, sizeof(rep.error), "request of %d bytes, expected %zu", msg->len_param, sizeof(req));
		return send_reply(&rep, peer);
	}
	memcpy(&req, msg->param, sizeof(req));
	rep.request_id = req.request_id;
	if (req.version != SBX_IPC_VERSION) {
		snprintf(rep.error, sizeof(rep.error), "request version %u, expected %u", req.version, SBX_IPC_VERSION);
	} else if (req.verb == SBX_CTL_RESTART_WORKER) {
		if (req.target >= ctl_p->cfg->nb_workers) {
			rep.result = SBX_CTL_NO_SUCH_WORKER;
			snprintf(rep.error, sizeof(rep.error), "no such worker");
		} else {
			__atomic_store_n(&ctl_p->restart_flag[req.target], 1, __ATOMIC_RELEASE);
			rep.result = SBX_CTL_OK;
		}
	} else if (req.verb == SBX_CTL_LINK_SET) {
		if (req.target >= ctl_p->cfg->nb_ports) {
			rep.result = SBX_CTL_NO_SUCH_PORT;
			snprintf(rep.error, sizeof(rep.error), "no such port");
		} else if (req.up > 1) {
			snprintf(rep.error, sizeof(rep.error), "up: expected 0 or 1");
		} else if (__atomic_load_n(&ctl_p->link_req_state, __ATOMIC_ACQUIRE) != SBX_LINK_REQ_IDLE) {
			rep.result = SBX_CTL_BUSY;
			snprintf(rep.error, sizeof(rep.error), "another link request is in progress");
		} else {
			/* the IPC thread is the only one to leave IDLE: the fields are ours until POSTED */
			ctl_p->link_req_port = (uint16_t)req.target;
			ctl_p->link_req_up = req.up == 1;
			ctl_p->link_req_id = req.request_id;
			ctl_p->link_req_posted_ns = sbx_now_ns();
			snprintf(ctl_p->link_req_peer, sizeof(ctl_p->link_req_peer), "%s", (const char *)peer);
			if (__atomic_compare_exchange_n(&ctl_p->link_req_state, &st, SBX_LINK_REQ_POSTED, false,
							__ATOMIC_RELEASE, __ATOMIC_RELAXED))
				return 0; /* the main loop answers */
			rep.result = SBX_CTL_BUSY;
			snprintf(rep.error, sizeof(rep.error), "another link request is in progress");
		}
	} else if (req.verb == SBX_CTL_UPGRADE_WORKERS) {
		char path[SBX_PATH_LEN];

		/* mgmt wrote the path before it sent the request (one at a time: its control lane) */
		memcpy(path, ctl_p->shm->upgrade_path, sizeof(path));
		path[sizeof(path) - 1] = '\0';
		rep.result = SBX_CTL_FAILED;
		if (ctl_p->cfg->nb_standby == 0)
			snprintf(rep.error, sizeof(rep.error), "workers.standby is 0: an upgrade hands over to standbys");
		else if (sbx_upgrade_busy(ctl_p))
			snprintf(rep.error, sizeof(rep.error), "an upgrade is already running");
		else if (path[0] != '/' || access(path, X_OK) != 0)
			snprintf(rep.error, sizeof(rep.error), "binary %.*s: %s", (int)sizeof(rep.error) - 40, path,
				 path[0] != '/' ? "not an absolute path" : strerror(errno));
		else {
			memcpy(ctl_p->upgrade_req, path, sizeof(path));
			__atomic_store_n(&ctl_p->upgrade_flag, 1, __ATOMIC_RELEASE);
			rep.result = SBX_CTL_OK;
		}
	} else {
		snprintf(rep.error, sizeof(rep.error), "unknown verb %u", req.verb);
	}
	return send_reply(&rep, peer);
}

int sbx_control_init(struct sbx_primary *p)
{
	ctl_p = p;
	if (rte_mp_action_register(SBX_IPC_CTL, on_request) != 0) {
		fprintf(stderr, "spanbox-primary: cannot register IPC action %s\n", SBX_IPC_CTL);
		return -1;
	}
	return 0;
}

void sbx_control_fini(void)
{
	rte_mp_action_unregister(SBX_IPC_CTL);
}
