/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Worker supervision: fork/exec of spanbox-worker as a DPDK secondary with its own lcore id;
 * reaping, hang detection (stale heartbeat), restart with exponential back-off, a crash-loop limit,
 * and graceful restarts. The pools and ports stay up across all of it.
 *
 * Before a dead worker's lcore id is given to its successor, the primary returns that lcore's
 * mempool caches to the pools (the caches live in the pool, in shared memory, indexed by lcore id).
 * A worker receives into an array in its memzone slot and says how many of those mbufs are still
 * untouched (held); the primary frees them after a crash. What a worker had already started to
 * free or send when it died is lost (at most one burst) and shows as "unexplained" in the audit.
 *
 * Only the process forked here may run as a slot: it gets the slot's nonce on its command line and
 * checks it and the slot's pid before it touches a queue or a pool; every process of the prefix
 * holds the lock of its lcore id (spanbox/lcore_lock.h), released by the kernel when it dies, so
 * the successor of a reaped worker gets the same id at once.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_mempool.h>

#include "spanbox/eal_args.h"
#include "primary.h"

#define SBX_BACKOFF_BASE_NS (100ULL * 1000 * 1000) /* second crash in the window: 100 ms, then x2 */
#define SBX_BACKOFF_MAX_NS (5ULL * 1000 * 1000 * 1000)
#define SBX_START_TIMEOUT_NS (15ULL * 1000 * 1000 * 1000) /* EAL attach must finish by then */

int sbx_worker_spawn(struct sbx_primary *p, unsigned int w)
{
	struct sbx_worker_shm *ws = &p->shm->workers[w];
	struct sbx_eal_args a;
	char idbuf[16], noncebuf[24];
	uint64_t nonce = 0;
	pid_t pid;

	if (sbx_eal_args_build(&a, p->cfg, SBX_ROLE_WORKER, p->worker_bin, p->cfg->workers[w].lcore_id) != 0 ||
	    a.argc + 5 > SBX_EAL_MAX_ARGS)
		return -1;
	/* a new nonce per start: only the process forked here can show it (docs: a worker started
	 * by hand for a slot is refused before it touches a queue or a pool) */
	while (nonce == 0)
		if (getrandom(&nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce)) {
			perror("spanbox-primary: getrandom");
			return -1;
		}
	snprintf(idbuf, sizeof(idbuf), "%u", w);
	snprintf(noncebuf, sizeof(noncebuf), "%016llx", (unsigned long long)nonce);
	a.argv[a.argc++] = "--";
	a.argv[a.argc++] = "--id";
	a.argv[a.argc++] = idbuf;
	a.argv[a.argc++] = "--nonce";
	a.argv[a.argc++] = noncebuf;
	a.argv[a.argc] = NULL;

	ws->pid = 0;
	ws->nonce = nonce;
	ws->stats.heartbeat_ns = 0;
	ws->stats.held = 0;
	ws->stats.first_rx_ns = 0;
	ws->stop = 0;
	ws->lcore_id = p->cfg->workers[w].lcore_id;
	ws->state = SBX_W_STARTING;
	ws->start_ns = sbx_realtime_ns();
	p->worker_spawn_ns[w] = sbx_now_ns();
	p->kill_sent[w] = false;
	pid = fork();
	if (pid < 0) {
		perror("spanbox-primary: fork");
		ws->nonce = 0;
		return -1;
	}
	if (pid == 0) {
		/* a worker must not outlive the primary that owns its pools */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			_exit(1);
		execv(p->worker_bin, a.argv);
		fprintf(stderr, "spanbox-primary: exec %s: %s\n", p->worker_bin, strerror(errno));
		_exit(127);
	}
	ws->pid = pid;
	sbx_event(p, "worker_start", (int)w, pid, "lcore %u, restarts %u", ws->lcore_id, ws->restarts);
	return 0;
}

/* Slot of the worker with this pid, or -1. */
static int slot_of(struct sbx_primary *p, pid_t pid)
{
	unsigned int w;

	for (w = 0; w < p->cfg->nb_workers; w++)
		if (p->shm->workers[w].pid == pid)
			return (int)w;
	return -1;
}

/* Return the mbufs cached for @p lcore_id to every pool (the dead process cannot). */
static void flush_lcore_caches(struct sbx_primary *p, unsigned int lcore_id)
{
	uint32_t i;

	for (i = 0; i < p->shm->nb_pools; i++) {
		struct rte_mempool_cache *c = rte_mempool_default_cache(p->pools[i], lcore_id);

		if (c != NULL && c->len)
			rte_mempool_cache_flush(c, p->pools[i]);
	}
}

/* Crashes of worker w within the window, after recording one at @p now. */
static unsigned int record_crash(struct sbx_primary *p, unsigned int w, uint64_t now)
{
	uint64_t window = (uint64_t)p->cfg->crash_window_s * 1000000000ULL;
	unsigned int i, n = 0;

	p->crash_ns[w][p->crash_next[w]++ % SBX_CRASH_HISTORY] = now;
	for (i = 0; i < SBX_CRASH_HISTORY; i++)
		if (p->crash_ns[w][i] && now - p->crash_ns[w][i] <= window)
			n++;
	return n;
}

/* A worker process ended: decide what happens to its slot. */
static void worker_ended(struct sbx_primary *p, unsigned int s, pid_t pid, int status, bool restart)
{
	struct sbx_worker_shm *ws = &p->shm->workers[s];
	uint64_t now = sbx_now_ns();
	bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	unsigned int crashes;

	ws->exit_status = (uint32_t)status;
	ws->pid = 0;
	ws->nonce = 0; /* nobody may start as this process any more */
	sbx_tables_worker_gone(s); /* a dead worker holds no grace period open */
	if (clean) {
		ws->state = SBX_W_STOPPED;
		sbx_event(p, "worker_exit", (int)s, pid, "exited with status 0");
	} else {
		uint64_t held = __atomic_load_n(&ws->stats.held, __ATOMIC_ACQUIRE);

		ws->state = SBX_W_DEAD;
		ws->crashes++;
		/* the burst it had received but not yet freed or sent: ours to free now */
		if (held > 0 && held <= RTE_DIM(ws->stats.burst)) {
			rte_pktmbuf_free_bulk(ws->stats.burst, (unsigned int)held);
			ws->recovered_mbufs += held;
		}
		if (WIFSIGNALED(status))
			sbx_event(p, "worker_crash", (int)s, pid, "killed by signal %d (%s), %llu mbufs recovered",
				  WTERMSIG(status), strsignal(WTERMSIG(status)), (unsigned long long)held);
		else
			sbx_event(p, "worker_crash", (int)s, pid, "exited with status %d, %llu mbufs recovered",
				  WEXITSTATUS(status), (unsigned long long)held);
	}
	ws->stats.held = 0;
	flush_lcore_caches(p, ws->lcore_id);
	if (!restart)
		return;
	if (clean && ws->stop && !p->restart_requested[s])
		return; /* asked to stop, not to restart */
	if (clean) {
		/* graceful restart: start the successor at once */
		p->restart_requested[s] = false;
		ws->state = SBX_W_RESTARTING;
		p->worker_next_start_ns[s] = now;
		return;
	}
	crashes = record_crash(p, s, now);
	if (crashes >= p->cfg->crash_limit) {
		ws->state = SBX_W_FAILED;
		sbx_event(p, "worker_failed", (int)s, pid, "%u crashes within %u s: not restarted until asked",
			  crashes, p->cfg->crash_window_s);
		return;
	}
	/* exponential back-off: first crash in the window restarts at once, then 100 ms, 200 ms, ... */
	ws->state = SBX_W_RESTARTING;
	p->worker_next_start_ns[s] = now + (crashes <= 1 ? 0 :
		RTE_MIN(SBX_BACKOFF_BASE_NS << (crashes - 2), SBX_BACKOFF_MAX_NS));
}

/* Kill workers whose heartbeat is stale (hung, or stopped with SIGSTOP) or whose start stalls. */
static void check_hangs(struct sbx_primary *p, uint64_t now)
{
	uint64_t timeout = (uint64_t)p->cfg->hang_timeout_ms * 1000000ULL;
	unsigned int w;

	for (w = 0; w < p->cfg->nb_workers; w++) {
		struct sbx_worker_shm *ws = &p->shm->workers[w];
		uint64_t hb = ws->stats.heartbeat_ns;

		if (ws->pid <= 0 || p->kill_sent[w])
			continue;
		if ((ws->state == SBX_W_RUNNING && hb && now > hb + timeout) ||
		    (ws->state == SBX_W_STARTING && now > p->worker_spawn_ns[w] + SBX_START_TIMEOUT_NS)) {
			ws->hangs++;
			sbx_event(p, "worker_hang", (int)w, ws->pid, "no heartbeat for %llu ms: SIGKILL",
				  (unsigned long long)((now - (hb ? hb : p->worker_spawn_ns[w])) / 1000000ULL));
			kill(ws->pid, SIGKILL); /* also ends a SIGSTOPped process; reaped below */
			p->kill_sent[w] = true;
		}
	}
}

void sbx_workers_supervise(struct sbx_primary *p, bool restart)
{
	uint64_t now = sbx_now_ns();
	unsigned int w;
	int status;
	pid_t pid;

	if (restart)
		check_hangs(p, now);
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		int s = slot_of(p, pid);

		if (s >= 0)
			worker_ended(p, (unsigned int)s, pid, status, restart);
	}
	if (!restart)
		return;
	for (w = 0; w < p->cfg->nb_workers; w++) {
		struct sbx_worker_shm *ws = &p->shm->workers[w];

		/* a requested restart: drain the running worker, or revive a failed one */
		if (__atomic_exchange_n(&p->restart_flag[w], 0, __ATOMIC_ACQ_REL)) {
			if (ws->pid > 0) {
				p->restart_requested[w] = true;
				ws->stop = 1;
				sbx_event(p, "worker_restart", (int)w, ws->pid, "graceful restart requested");
			} else if (ws->state == SBX_W_FAILED || ws->state == SBX_W_STOPPED || ws->state == SBX_W_DEAD) {
				sbx_event(p, "worker_restart", (int)w, 0, "restart of a %s worker requested",
					  sbx_worker_state_name(ws->state));
				memset(p->crash_ns[w], 0, sizeof(p->crash_ns[w]));
				ws->state = SBX_W_RESTARTING;
				p->worker_next_start_ns[w] = now;
			}
		}
		if (ws->state == SBX_W_RESTARTING && ws->pid == 0 && now >= p->worker_next_start_ns[w]) {
			ws->restarts++;
			if (sbx_worker_spawn(p, w) != 0)
				p->worker_next_start_ns[w] = now + SBX_BACKOFF_BASE_NS;
		}
	}
}

unsigned int sbx_workers_count(struct sbx_primary *p, enum sbx_worker_state state)
{
	unsigned int w, n = 0;

	for (w = 0; w < p->cfg->nb_workers; w++)
		n += p->shm->workers[w].state == state;
	return n;
}

bool sbx_workers_settled(struct sbx_primary *p)
{
	unsigned int running = sbx_workers_count(p, SBX_W_RUNNING);

	return running > 0 && running + sbx_workers_count(p, SBX_W_FAILED) == p->cfg->nb_workers;
}

void sbx_workers_stop(struct sbx_primary *p, unsigned int timeout_ms)
{
	uint64_t deadline = sbx_now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	unsigned int w, alive;

	for (w = 0; w < p->cfg->nb_workers; w++) {
		p->shm->workers[w].stop = 1;
		if (p->shm->workers[w].pid > 0)
			kill(p->shm->workers[w].pid, SIGTERM);
	}
	do {
		sbx_workers_supervise(p, false);
		alive = 0;
		for (w = 0; w < p->cfg->nb_workers; w++)
			alive += p->shm->workers[w].pid > 0;
		if (alive)
			usleep(10000);
	} while (alive && sbx_now_ns() < deadline);
	for (w = 0; w < p->cfg->nb_workers; w++) {
		if (p->shm->workers[w].pid > 0) {
			fprintf(stderr, "spanbox-primary: worker %u did not stop in %u ms: SIGKILL\n", w, timeout_ms);
			kill(p->shm->workers[w].pid, SIGKILL);
			waitpid(p->shm->workers[w].pid, NULL, 0);
			p->shm->workers[w].pid = 0;
			p->shm->workers[w].nonce = 0;
			sbx_tables_worker_gone(w);
			p->shm->workers[w].state = SBX_W_DEAD;
		}
	}
}
