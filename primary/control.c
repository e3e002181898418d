/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control requests from mgmt, over DPDK's multi-process channel (rte_mp, action "sbx_ctl").
 * The handler runs in the EAL IPC thread: it only validates and raises a flag; the main loop acts
 * (workers.c), so supervision stays single-threaded.
 *   request "restart-worker <id>"  ->  reply "ok" | "error: <why>"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>

#include "primary.h"

#define SBX_CTL_ACTION "sbx_ctl"

static struct sbx_primary *ctl_p;

/* Answer one request. */
static int on_request(const struct rte_mp_msg *msg, const void *peer)
{
	struct rte_mp_msg reply;
	char req[RTE_MP_MAX_PARAM_LEN + 1];
	const char *answer = "ok";
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
