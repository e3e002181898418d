/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ipc_send: send one rte_mp request to a running primary and print its reply, for the tests of
 * the control messages (include/spanbox/ipc.h; tests/e2e/54_api_nonblocking.sh). A DPDK
 * secondary of its own (--no-pci, one lcore id the caller picks), attached for one request.
 *
 *   ipc_send PREFIX LCORE ctl VERSION VERB TARGET UP   a struct sbx_ctl_req with these fields
 *   ipc_send PREFIX LCORE raw ACTION TEXT              TEXT's bytes (no NUL) as the request
 *
 * Prints one JSON line: {"answered": bool, "len": N, "version": V, "result": R, "name": "...",
 * "request_id": I, "error": "..."} (the last five only for a reply of sizeof(struct
 * sbx_ctl_reply) bytes to SBX_IPC_CTL). Exit 0 when answered, 1 when not, 2 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>

#include "spanbox/ipc.h"

int main(int argc, char **argv)
{
	char pfx[300], lc[64];
	char *eal[] = { argv[0], "--proc-type=secondary", pfx, lc, "--no-pci", "--log-level=lib.eal:error", NULL };
	struct rte_mp_msg req;
	struct rte_mp_reply rep;
	struct timespec ts = { 1, 0 };
	struct sbx_ctl_reply cr;
	const char *action;

	if (argc < 5 || (strcmp(argv[3], "ctl") == 0 && argc != 8) || (strcmp(argv[3], "raw") == 0 && argc != 6)) {
		fprintf(stderr, "usage: ipc_send PREFIX LCORE ctl VERSION VERB TARGET UP | raw ACTION TEXT\n");
		return 2;
	}
	snprintf(pfx, sizeof(pfx), "--file-prefix=%s", argv[1]);
	snprintf(lc, sizeof(lc), "--lcores=%s@(0-1)", argv[2]);
	if (rte_eal_init(6, eal) < 0) {
		fprintf(stderr, "ipc_send: rte_eal_init failed\n");
		return 2;
	}
	memset(&req, 0, sizeof(req));
	if (strcmp(argv[3], "ctl") == 0) {
		struct sbx_ctl_req c = { .version = (uint32_t)strtoul(argv[4], NULL, 0),
					 .verb = (uint32_t)strtoul(argv[5], NULL, 0),
					 .target = (uint32_t)strtoul(argv[6], NULL, 0),
					 .up = (uint32_t)strtoul(argv[7], NULL, 0), .request_id = 4242 };

		action = SBX_IPC_CTL;
		req.len_param = (int)sizeof(c);
		memcpy(req.param, &c, sizeof(c));
	} else {
		size_t n = strlen(argv[5]);

		action = argv[4];
		if (n > sizeof(req.param))
			n = sizeof(req.param);
		req.len_param = (int)n;
		memcpy(req.param, argv[5], n);
	}
	snprintf(req.name, sizeof(req.name), "%s", action);
	memset(&rep, 0, sizeof(rep));
	if (rte_mp_request_sync(&req, &rep, &ts) != 0 || rep.nb_received != 1) {
		printf("{\"answered\": false}\n");
		free(rep.msgs);
		rte_eal_cleanup();
		return 1;
	}
	printf("{\"answered\": true, \"len\": %d", rep.msgs[0].len_param);
	if (strcmp(action, SBX_IPC_CTL) == 0 && rep.msgs[0].len_param == (int)sizeof(cr)) {
		memcpy(&cr, rep.msgs[0].param, sizeof(cr));
		cr.error[sizeof(cr.error) - 1] = '\0';
		for (char *p = cr.error; *p; p++)
			if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
				*p = ' ';
		printf(", \"version\": %u, \"result\": %u, \"name\": \"%s\", \"request_id\": %llu, \"error\": \"%s\"",
		       cr.version, cr.result, sbx_ctl_result_name(cr.result), (unsigned long long)cr.request_id,
		       cr.error);
	}
	printf("}\n");
	free(rep.msgs);
	rte_eal_cleanup();
	return 0;
}
