/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control requests from mgmt, over DPDK's multi-process channel (rte_mp, action "sbx_ctl").
 * The handler runs in the EAL IPC thread: it only validates and raises a flag; the main loop acts
 * (workers.c), so supervision stays single-threaded.
 *   request "restart-worker <id>"  ->  reply "ok" | "error: <why>"
 *   request "link <port index> up|down"  ->  reply "ok up" | "ok down" (the state read back after
 *       the change) | "error: <why>". The IPC thread posts it to the main loop (sbx_control_poll,
 *       about every ms) and waits for its answer, up to LINK_WAIT_MS (mgmt waits 1 s).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <unistd.h>

#include "primary.h"

#define SBX_CTL_ACTION "sbx_ctl"
#define LINK_WAIT_MS 900 /* the IPC thread waits this long for the main loop; mgmt waits 1 s */

static struct sbx_primary *ctl_p;

/*
 * "link <port> up|down": post it to the main loop and wait for its answer. A request the main loop
 * has not taken within LINK_WAIT_MS is withdrawn (nothing done); one it took is always awaited.
 */
static void link_request(const char *args, char *answer, size_t len)
{
	uint32_t st = SBX_LINK_REQ_IDLE;
	char *end;
	long port = strtol(args, &end, 10);
	bool up;
	int ms;

	if (end == args || *end != ' ' || port < 0 || port >= ctl_p->cfg->nb_ports) {
		snprintf(answer, len, "error: no such port");
		return;
	}
	if (strcmp(end + 1, "up") == 0) {
		up = true;
	} else if (strcmp(end + 1, "down") == 0) {
		up = false;
	} else {
		snprintf(answer, len, "error: expected up or down");
		return;
	}
	ctl_p->link_req_port = (uint16_t)port;
	ctl_p->link_req_up = up;
	/* the IPC thread handles one message at a time: the slot is idle here */
	if (!__atomic_compare_exchange_n(&ctl_p->link_req_state, &st, SBX_LINK_REQ_POSTED, false,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
		snprintf(answer, len, "error: another link request is in progress");
		return;
	}
	for (ms = 0;; ms++) {
		st = __atomic_load_n(&ctl_p->link_req_state, __ATOMIC_ACQUIRE);
		if (st == SBX_LINK_REQ_DONE)
			break;
		if (st == SBX_LINK_REQ_POSTED && ms >= LINK_WAIT_MS &&
		    __atomic_compare_exchange_n(&ctl_p->link_req_state, &st, SBX_LINK_REQ_IDLE, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			snprintf(answer, len, "error: the primary's main loop is busy (nothing changed)");
			return;
		}
		usleep(1000);
	}
	snprintf(answer, len, "%s", ctl_p->link_req_answer);
	__atomic_store_n(&ctl_p->link_req_state, SBX_LINK_REQ_IDLE, __ATOMIC_RELEASE);
}

void sbx_control_poll(struct sbx_primary *p)
{
	uint32_t st = SBX_LINK_REQ_POSTED;

	if (__atomic_load_n(&p->link_req_state, __ATOMIC_RELAXED) != SBX_LINK_REQ_POSTED ||
	    !__atomic_compare_exchange_n(&p->link_req_state, &st, SBX_LINK_REQ_TAKEN, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	/* mgmt records the change in its audit log (with the client's address) */
	sbx_ports_set_link(p, p->link_req_port, p->link_req_up, p->link_req_answer, sizeof(p->link_req_answer));
	__atomic_store_n(&p->link_req_state, SBX_LINK_REQ_DONE, __ATOMIC_RELEASE);
}

/* Answer one request. */
static int on_request(const struct rte_mp_msg *msg, const void *peer)
{
	struct rte_mp_msg reply;
	char req[RTE_MP_MAX_PARAM_LEN + 1];
	const char *answer = "ok";
	char link_answer[64];
	char *end;
	long id;

	memset(&reply, 0, sizeof(reply));
	snprintf(reply.name, sizeof(reply.name), "%s", SBX_CTL_ACTION);
	memcpy(req, msg->param, (size_t)msg->len_param < sizeof(req) - 1 ? (size_t)msg->len_param : sizeof(req) - 1);
	req[msg->len_param < (int)sizeof(req) - 1 ? msg->len_param : (int)sizeof(req) - 1] = '\0';
	if (strncmp(req, "restart-worker ", 15) == 0) {
		id = strtol(req + 15, &end, 10);
		if (end == req + 15 || *end != '\0' || id < 0 || id >= ctl_p->cfg->nb_workers)
			answer = "error: no such worker";
		else
			__atomic_store_n(&ctl_p->restart_flag[id], 1, __ATOMIC_RELEASE);
	} else if (strncmp(req, "link ", 5) == 0) {
		link_request(req + 5, link_answer, sizeof(link_answer));
		answer = link_answer;
	} else {
		answer = "error: unknown request";
	}
	reply.len_param = (int)strlen(answer);
	memcpy(reply.param, answer, (size_t)reply.len_param);
	return rte_mp_reply(&reply, peer);
}

int sbx_control_init(struct sbx_primary *p)
{
	ctl_p = p;
	if (rte_mp_action_register(SBX_CTL_ACTION, on_request) != 0) {
		fprintf(stderr, "spanbox-primary: cannot register IPC action %s\n", SBX_CTL_ACTION);
		return -1;
	}
	return 0;
}

void sbx_control_fini(void)
{
	rte_mp_action_unregister(SBX_CTL_ACTION);
}
