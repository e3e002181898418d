/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Worker supervision: fork/exec of spanbox-worker as a DPDK secondary with its own lcore id, reaping
 * and restarting. The pools and ports stay up across worker restarts.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spanbox/eal_args.h"
#include "primary.h"

#define SBX_RESTART_DELAY_NS (100ULL * 1000 * 1000) /* back-off before restarting a worker */

int sbx_worker_spawn(struct sbx_primary *p, unsigned int w)
{
	struct sbx_worker_shm *ws = &p->shm->workers[w];
	struct sbx_eal_args a;
	char idbuf[16];
	pid_t pid;

	if (sbx_eal_args_build(&a, p->cfg, SBX_ROLE_WORKER, p->worker_bin, p->cfg->workers[w].lcore_id) != 0)
		return -1;
	snprintf(idbuf, sizeof(idbuf), "%u", w);
	a.argv[a.argc++] = "--";
	a.argv[a.argc++] = "--id";
	a.argv[a.argc++] = idbuf;
	a.argv[a.argc] = NULL;

	memset(&ws->stats.heartbeat_ns, 0, sizeof(ws->stats.heartbeat_ns));
	ws->stop = 0;
	ws->lcore_id = p->cfg->workers[w].lcore_id;
	ws->state = SBX_W_STARTING;
	ws->start_ns = sbx_realtime_ns();
	pid = fork();
	if (pid < 0) {
		perror("spanbox-primary: fork");
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
	printf("spanbox-primary: worker %u started: pid %d, lcore %u\n", w, (int)pid, ws->lcore_id);
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

void sbx_workers_supervise(struct sbx_primary *p, bool restart)
{
	uint64_t now = sbx_now_ns();
	unsigned int w;
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		int s = slot_of(p, pid);
		struct sbx_worker_shm *ws;

		if (s < 0)
			continue;
		ws = &p->shm->workers[s];
		ws->exit_status = (uint32_t)status;
		ws->pid = 0;
		if (WIFSIGNALED(status))
			printf("spanbox-primary: worker %d (pid %d) killed by signal %d\n", s, (int)pid, WTERMSIG(status));
		else
			printf("spanbox-primary: worker %d (pid %d) exited with status %d\n", s, (int)pid, WEXITSTATUS(status));
		ws->state = (WIFEXITED(status) && WEXITSTATUS(status) == 0) ? SBX_W_STOPPED : SBX_W_DEAD;
		if (restart && !ws->stop) {
			ws->state = SBX_W_RESTARTING;
			p->worker_next_start_ns[s] = now + SBX_RESTART_DELAY_NS;
		}
	}
	if (!restart)
		return;
	for (w = 0; w < p->cfg->nb_workers; w++) {
		struct sbx_worker_shm *ws = &p->shm->workers[w];

		if (ws->state == SBX_W_RESTARTING && ws->pid == 0 && now >= p->worker_next_start_ns[w]) {
			ws->restarts++;
			if (sbx_worker_spawn(p, w) != 0)
				p->worker_next_start_ns[w] = now + SBX_RESTART_DELAY_NS;
		}
	}
}

bool sbx_workers_all_running(struct sbx_primary *p)
{
	unsigned int w;

	for (w = 0; w < p->cfg->nb_workers; w++)
		if (p->shm->workers[w].state != SBX_W_RUNNING)
			return false;
	return true;
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
			p->shm->workers[w].state = SBX_W_DEAD;
		}
	}
}
