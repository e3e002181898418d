/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spanbox-worker: a DPDK secondary process started by the primary. It attaches to the pools and
 * ports the primary created, finds its queues in the memzone and forwards until asked to stop.
 * usage: spanbox-worker <EAL args> -- --id N
 *        spanbox-worker --calibrate [ITERATIONS]   (copy vs share cost, recommended copy.threshold)
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include "calibrate.h"
#include "worker.h"

static volatile sig_atomic_t quit;

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

/* Return the mbufs in this lcore's mempool caches to the pools before the lcore id is reused. */
static void flush_caches(const struct sbx_shm *shm)
{
	uint32_t i;

	for (i = 0; i < shm->nb_pools; i++) {
		struct rte_mempool *mp = rte_mempool_lookup(shm->pools[i].name);
		struct rte_mempool_cache *c = mp ? rte_mempool_default_cache(mp, rte_lcore_id()) : NULL;

		if (c != NULL)
			rte_mempool_cache_flush(c, mp);
	}
}

int main(int argc, char **argv)
{
	static struct sbx_worker wk;
	struct sbx_shm *shm;
	char err[256];
	long id = -1;
	int n, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && strcmp(argv[1], "--calibrate") == 0)
		return sbx_calibrate(argv[0], argc >= 3 ? (unsigned int)strtoul(argv[2], NULL, 10) : 20000);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "spanbox-worker: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= n;
	argv += n;
	for (n = 1; n < argc; n++)
		if (strcmp(argv[n], "--id") == 0 && n + 1 < argc)
			id = strtol(argv[++n], NULL, 10);
	shm = sbx_shm_attach(err, sizeof(err));
	if (shm == NULL || id < 0 || sbx_worker_setup(&wk, shm, (unsigned int)id, err, sizeof(err)) != 0) {
		fprintf(stderr, "spanbox-worker %ld: %s\n", id, id < 0 ? "missing --id" : err);
		rte_eal_cleanup();
		return 1;
	}
	wk.quit = &quit;
	/* test hook (tests/e2e/90_worker_lifecycle.sh): this worker crashes right after attaching */
	if (getenv("SBX_TEST_CRASH_WORKER") != NULL && atol(getenv("SBX_TEST_CRASH_WORKER")) == id)
		abort();
	rc = sbx_worker_run(&wk);
	sbx_mirror_teardown(&wk.mirror);
	flush_caches(shm);
	if (rc == 0)
		wk.slot->state = SBX_W_STOPPED;
	else
		fprintf(stderr, "spanbox-worker %ld: primary gone, exiting\n", id);
	rte_eal_cleanup();
	return 0;
}
