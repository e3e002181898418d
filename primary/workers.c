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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_mempool.h>

#include "spanbox/abi.h"
#include "spanbox/eal_args.h"
#include "lifewatch.h"
#include "primary.h"

#define SBX_BACKOFF_BASE_NS (100ULL * 1000 * 1000) /* second crash in the window: 100 ms, then x2 */
#define SBX_BACKOFF_MAX_NS (5ULL * 1000 * 1000 * 1000)
#define SBX_START_TIMEOUT_NS (15ULL * 1000 * 1000 * 1000) /* EAL attach must finish by then */
#define SBX_STANDBY_FAILURES 3 /* standby exits in a row before it was ready: given up */
#define SBX_STATUS_DYING (-1) /* worker_ended(): died holding its life lock, not reaped yet (no wait status) */
#define SBX_RETIRE_TIMEOUT_NS (3ULL * 1000 * 1000 * 1000) /* a handed-over worker must exit by then */
#define SBX_UPGRADE_STALL_NS (30ULL * 1000 * 1000 * 1000) /* an upgrade that makes no progress that long ends */
/* CPU time a worker's polling thread may get with a stale heartbeat before it is hung: it writes one
 * in its first loop after it runs again (µs); 2 clock ticks of the stat fallback (check_stale) */
#define SBX_HUNG_CPU_NS (20ULL * 1000 * 1000)

/*
 * Fork/exec @p bin as a secondary on @p lcore_id with "-- OPT IDX --nonce HEX". A fresh random
 * nonce is stored in *@p nonce before the fork (0 again if the fork fails): only the process
 * forked here can show it. @return the child's pid, or -1.
 */
static pid_t spawn_secondary(struct sbx_primary *p, const char *bin, unsigned int lcore_id, int cpu, const char *opt,
			     unsigned int idx, uint64_t *nonce)
{
	struct sbx_eal_args a;
	char idbuf[16], noncebuf[24];
	uint64_t n = 0;
	pid_t pid;

	if (sbx_eal_args_build(&a, p->cfg, SBX_ROLE_WORKER, bin, lcore_id, cpu) != 0 || a.argc + 5 > SBX_EAL_MAX_ARGS)
		return -1;
	while (n == 0)
		if (getrandom(&n, sizeof(n), 0) != (ssize_t)sizeof(n)) {
			perror("spanbox-primary: getrandom");
			return -1;
		}
	snprintf(idbuf, sizeof(idbuf), "%u", idx);
	snprintf(noncebuf, sizeof(noncebuf), "%016llx", (unsigned long long)n);
	a.argv[a.argc++] = "--";
	a.argv[a.argc++] = (char *)opt;
	a.argv[a.argc++] = idbuf;
	a.argv[a.argc++] = "--nonce";
	a.argv[a.argc++] = noncebuf;
	a.argv[a.argc] = NULL;
	*nonce = n;
	pid = fork();
	if (pid < 0) {
		perror("spanbox-primary: fork");
		*nonce = 0;
		return -1;
	}
	if (pid == 0) {
		/* a worker must not outlive the primary that owns its pools */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			_exit(1);
		execv(bin, a.argv);
		fprintf(stderr, "spanbox-primary: exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	return pid;
}

int sbx_worker_spawn(struct sbx_primary *p, unsigned int w)
{
	struct sbx_worker_shm *ws = sbx_shm_worker(p->shm, w);
	pid_t pid;

	/* a new nonce per start (docs: a worker started by hand for a slot is refused before it
	 * touches a queue or a pool) */
	ws->pid = 0;
	ws->stats.heartbeat_ns = 0;
	ws->stats.held = 0;
	ws->stats.reasm_held = 0; /* a new process holds no fragment (a dead one's are lost) */
	ws->stats.first_rx_ns = 0;
	ws->stop = 0;
	ws->released = 0;
	ws->state = SBX_W_STARTING;
	ws->start_ns = sbx_realtime_ns();
	ws->starved = 0;
	p->cpu_pid[w] = 0;
	snprintf(ws->binary, sizeof(ws->binary), "%s", p->worker_bin);
	p->worker_spawn_ns[w] = sbx_now_ns();
	p->kill_sent[w] = false;
	p->takeover_pending[w] = false;
	pid = spawn_secondary(p, p->worker_bin, ws->lcore_id, p->cfg->workers[w].cpu, "--id", w, &ws->nonce);
	if (pid < 0)
		return -1;
	ws->pid = pid;
	sbx_event(p, "worker_start", (int)w, pid, "lcore %u, restarts %u", ws->lcore_id, ws->restarts);
	return 0;
}

int sbx_standby_spawn(struct sbx_primary *p, unsigned int s, unsigned int lcore_id)
{
	struct sbx_standby_shm *sb = &p->shm->standbys[s];
	pid_t pid;

	sb->pid = 0;
	sb->role = -1;
	sb->heartbeat_ns = 0;
	sb->parked_ns = 0;
	sb->lcore_id = lcore_id;
	snprintf(sb->binary, sizeof(sb->binary), "%s", p->standby_bin);
	sb->state = SBX_SB_STARTING;
	sb->start_ns = sbx_realtime_ns();
	p->standby_spawn_ns[s] = sbx_now_ns();
	p->standby_kill_sent[s] = false;
	pid = spawn_secondary(p, p->standby_bin, lcore_id, -1, "--standby", s, &sb->nonce);
	if (pid < 0) {
		sb->state = SBX_SB_NONE;
		return -1;
	}
	sb->pid = pid;
	sb->starts++;
	sbx_event(p, "standby_start", -1, pid, "standby %u, lcore %u, %s", s, lcore_id, p->standby_bin);
	return 0;
}

unsigned int sbx_standbys_count(struct sbx_primary *p, uint32_t state)
{
	unsigned int s, n = 0;

	for (s = 0; s < p->cfg->nb_standby; s++)
		n += p->shm->standbys[s].state == state;
	return n;
}

/* A parked standby that can take a role now (alive, heartbeat fresh, running @p bin unless NULL),
 * or -1. */
static int pick_standby_of(struct sbx_primary *p, uint64_t now, const char *bin)
{
	uint64_t timeout = (uint64_t)p->cfg->hang_timeout_ms * 1000000ULL;
	unsigned int s;

	for (s = 0; s < p->cfg->nb_standby; s++) {
		const struct sbx_standby_shm *sb = &p->shm->standbys[s];
		uint64_t hb = __atomic_load_n(&sb->heartbeat_ns, __ATOMIC_ACQUIRE);

		if (__atomic_load_n(&sb->state, __ATOMIC_ACQUIRE) == SBX_SB_PARKED && sb->pid > 0 &&
		    !p->standby_kill_sent[s] && hb && now <= hb + timeout &&
		    (bin == NULL || strcmp(sb->binary, bin) == 0))
			return (int)s;
	}
	return -1;
}

/* A parked standby of the binary new standbys run (during an upgrade: the new one), or -1. */
static int pick_standby(struct sbx_primary *p, uint64_t now)
{
	return pick_standby_of(p, now, p->shm->upgrade.state == SBX_UPG_RUNNING ? p->standby_bin : NULL);
}

/*
 * Hand worker slot @p w to parked standby @p s: the slot (its stats, so counters continue) gets
 * the standby's pid, nonce and lcore, then the standby's role word gets @p w (release: the standby
 * reads the slot after it). The standby starts polling at once. @p death_rt: CLOCK_REALTIME the
 * predecessor @p old_pid was gone (or let go of the queues).
 */
static void handover(struct sbx_primary *p, unsigned int w, unsigned int s, uint64_t death_rt, int old_pid)
{
	struct sbx_worker_shm *ws = sbx_shm_worker(p->shm, w);
	struct sbx_standby_shm *sb = &p->shm->standbys[s];

	ws->nonce = sb->nonce;
	ws->lcore_id = sb->lcore_id;
	memcpy(ws->binary, sb->binary, sizeof(ws->binary));
	ws->stats.heartbeat_ns = 0;
	ws->stats.held = 0;
	ws->stats.reasm_held = 0; /* a new process holds no fragment (a dead one's are lost) */
	ws->stats.first_rx_ns = 0;
	ws->stop = 0;
	ws->released = 0;
	ws->released_ns = 0;
	ws->state = SBX_W_STARTING;
	ws->start_ns = sbx_realtime_ns();
	ws->starved = 0;
	p->cpu_pid[w] = 0;
	ws->restarts++;
	ws->takeovers++;
	ws->takeovers_before_reap += old_pid > 0 && p->dying_pid[w] == old_pid; /* its life lock said so */
	ws->takeover_from = (uint32_t)old_pid;
	ws->takeover_death_ns = death_rt;
	ws->takeover_gap_ns = 0;
	p->worker_spawn_ns[w] = sbx_now_ns();
	p->kill_sent[w] = false;
	p->takeover_pending[w] = true;
	__atomic_store_n(&ws->pid, sb->pid, __ATOMIC_RELEASE);
	__atomic_store_n(&sb->state, SBX_SB_ASSIGNED, __ATOMIC_RELEASE);
	__atomic_store_n(&sb->role, (int32_t)w, __ATOMIC_RELEASE);
	/* to its main thread (tid = pid), the one that waits: a process-directed signal may go to an
	 * EAL thread. Ends the wait now; it would read the word within 10 ms anyway */
	syscall(SYS_tgkill, sb->pid, sb->pid, SBX_STANDBY_WAKE_SIGNAL);
	sbx_event(p, "worker_takeover", (int)w, sb->pid, "standby %u (lcore %u) replaces pid %d, restarts %u", s,
		  sb->lcore_id, old_pid, ws->restarts);
}

/* Slot of the worker with this pid, or -1. */
static int slot_of(struct sbx_primary *p, pid_t pid)
{
	unsigned int w;

	for (w = 0; w < p->cfg->nb_workers; w++)
		if (sbx_shm_worker(p->shm, w)->pid == pid)
			return (int)w;
	return -1;
}

/* Standby slot of the process with this pid, or -1. */
static int standby_of(struct sbx_primary *p, pid_t pid)
{
	unsigned int s;

	for (s = 0; s < p->cfg->nb_standby; s++)
		if (p->shm->standbys[s].pid == pid)
			return (int)s;
	return -1;
}

/* The worker slot w whose @p pids[w] is @p pid, or -1. */
static int slot_with_pid(const struct sbx_primary *p, const int *pids, pid_t pid)
{
	unsigned int w;

	for (w = 0; w < p->cfg->nb_workers; w++)
		if (pids[w] == pid)
			return (int)w;
	return -1;
}

/* Worker slot whose retired predecessor (graceful hand-over) has this pid, or -1. */
static int retired_of(struct sbx_primary *p, pid_t pid)
{
	return slot_with_pid(p, p->retired_pid, pid);
}

/*
 * An lcore id of the appliance's worker set (workers.lcores and workers.standby_lcores) that no
 * process holds or will hold: not a worker slot's (whatever its state), not a live standby's, not
 * a retired predecessor's that is not reaped yet. @return it, or -1.
 */
static int free_lcore(struct sbx_primary *p)
{
	unsigned int i, j, n = p->cfg->nb_workers + p->cfg->nb_standby;

	for (i = 0; i < n; i++) {
		unsigned int id = i < p->cfg->nb_workers ? p->cfg->workers[i].lcore_id
							 : p->cfg->standby_lcores[i - p->cfg->nb_workers];
		bool taken = false;

		for (j = 0; j < p->cfg->nb_workers && !taken; j++)
			taken = sbx_shm_worker(p->shm, j)->lcore_id == id || (p->retired_pid[j] && p->retired_lcore[j] == id) ||
				(p->dying_pid[j] && p->dying_lcore[j] == id);
		for (j = 0; j < p->cfg->nb_standby && !taken; j++)
			taken = p->shm->standbys[j].state != SBX_SB_NONE && p->shm->standbys[j].state != SBX_SB_FAILED &&
				p->shm->standbys[j].lcore_id == id;
		if (!taken)
			return (int)id;
	}
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
		c = p->ind_pools[i] ? rte_mempool_default_cache(p->ind_pools[i], lcore_id) : NULL;
		if (c != NULL && c->len)
			rte_mempool_cache_flush(c, p->ind_pools[i]);
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

/* The worker_crash event of worker @p s's process @p pid, ended with wait status @p status. */
static void crash_event(struct sbx_primary *p, unsigned int s, pid_t pid, int status, uint64_t held)
{
	if (WIFSIGNALED(status))
		sbx_event(p, "worker_crash", (int)s, pid, "killed by signal %d (%s), %llu mbufs recovered",
			  WTERMSIG(status), strsignal(WTERMSIG(status)), (unsigned long long)held);
	else
		sbx_event(p, "worker_crash", (int)s, pid, "exited with status %d, %llu mbufs recovered",
			  WEXITSTATUS(status), (unsigned long long)held);
}

/*
 * A worker process ended (@p status as from waitpid), or is ending: SBX_STATUS_DYING when it died
 * holding its life lock and is not reaped yet (worker_died): a crash whose event waits for the
 * reap (dying_ended), which knows the signal. Decide what happens to its slot.
 */
static void worker_ended(struct sbx_primary *p, unsigned int s, pid_t pid, int status, bool restart)
{
	struct sbx_worker_shm *ws = sbx_shm_worker(p->shm, s);
	uint64_t now = sbx_now_ns();
	bool dying = status == SBX_STATUS_DYING;
	bool clean = !dying && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	unsigned int crashes, b;
	int sb;

	if (!dying)
		ws->exit_status = (uint32_t)status;
	ws->pid = 0;
	ws->nonce = 0; /* nobody may start as this process any more */
	ws->starved = 0;
	p->cpu_pid[s] = 0;
	p->death_rt_ns[s] = sbx_realtime_ns();
	p->dead_pid[s] = pid;
	p->takeover_pending[s] = false;
	sbx_tables_worker_gone(s); /* a dead worker holds no grace period open */
	/* a standby that died before it read the role it was given: its standby slot is free */
	for (b = 0; b < p->cfg->nb_standby; b++)
		if (p->shm->standbys[b].pid == pid) {
			p->shm->standbys[b].pid = 0;
			p->shm->standbys[b].state = SBX_SB_NONE;
		}
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
		if (dying)
			p->dying_held[s] = held;
		else
			crash_event(p, s, pid, status, held);
		/* the fragments its reassembly tables held died with it: lost ("unexplained" in the
		 * audit from now on), held by no one */
		ws->stats.reasm_held = 0;
	}
	ws->stats.held = 0;
	flush_lcore_caches(p, ws->lcore_id);
	if (!restart) {
		p->handover_wait[s] = false;
		return;
	}
	if (clean && p->handover_wait[s]) {
		/* a graceful hand-over whose worker exited before the loop saw it let go: hand over now */
		p->handover_wait[s] = false;
		sb = pick_standby(p, now);
		if (sb >= 0) {
			handover(p, s, (unsigned int)sb, ws->released_ns ? ws->released_ns : p->death_rt_ns[s], pid);
			return;
		}
		p->restart_requested[s] = true; /* the standby went away meanwhile: today's restart */
	}
	p->handover_wait[s] = false;
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
	/* exponential back-off: first crash in the window restarts at once, then 100 ms, 200 ms, ...
	 * (a parked standby takes the slot over when it is due, else a new process starts) */
	ws->state = SBX_W_RESTARTING;
	p->worker_next_start_ns[s] = now + (crashes <= 1 ? 0 :
		RTE_MIN(SBX_BACKOFF_BASE_NS << (crashes - 2), SBX_BACKOFF_MAX_NS));
}

/* The upgrade ends refused (@p why); new standbys run the old binary again, nothing else changes. */
static void upgrade_refuse(struct sbx_primary *p, const char *why)
{
	struct sbx_upgrade_shm *u = &p->shm->upgrade;

	snprintf(u->error, sizeof(u->error), "%s", why);
	snprintf(p->standby_bin, sizeof(p->standby_bin), "%s", p->worker_bin);
	u->finished_ns = sbx_realtime_ns();
	__atomic_store_n(&u->state, SBX_UPG_REFUSED, __ATOMIC_RELEASE);
	sbx_event(p, "upgrade_refused", -1, 0, "%s", why);
}

/*
 * Standby @p sb (pid @p pid) of the upgrade's new binary exited before it was ready: before any
 * worker was handed over, that refuses the upgrade, with the reason it wrote into the ABI memzone
 * (layout version or mempool drivers, both values). @return true when it did.
 */
static bool upgrade_standby_failed(struct sbx_primary *p, struct sbx_standby_shm *sb, pid_t pid, int status)
{
	struct sbx_upgrade_shm *u = &p->shm->upgrade;
	const struct sbx_abi_shm *a = sbx_abi_lookup();
	char why[sizeof(u->error)];

	if (u->state != SBX_UPG_RUNNING || u->workers_done > 0 || strcmp(sb->binary, u->binary) != 0)
		return false;
	if (a != NULL && __atomic_load_n(&a->refusal_pid, __ATOMIC_ACQUIRE) == pid)
		snprintf(why, sizeof(why), "%.*s refused to attach: %.*s", 300, u->binary, 700, a->refusal);
	else
		snprintf(why, sizeof(why), "a standby of %.*s exited before it was ready (%s %d): see the primary's log",
			 300, u->binary, WIFSIGNALED(status) ? "signal" : "status",
			 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	sb->failures = 0;
	upgrade_refuse(p, why);
	return true;
}

/* Start the posted upgrade: new standbys run the new binary; the parked ones of the old go. */
static void upgrade_start(struct sbx_primary *p, uint64_t now)
{
	struct sbx_upgrade_shm *u = &p->shm->upgrade;
	unsigned int s;

	memset(u->error, 0, sizeof(u->error));
	snprintf(u->binary, sizeof(u->binary), "%s", p->upgrade_req);
	snprintf(u->from, sizeof(u->from), "%s", p->worker_bin);
	u->workers_done = 0;
	u->started_ns = sbx_realtime_ns();
	u->finished_ns = 0;
	snprintf(p->standby_bin, sizeof(p->standby_bin), "%s", u->binary);
	p->upgrade_deadline_ns = now + SBX_UPGRADE_STALL_NS;
	__atomic_store_n(&u->state, SBX_UPG_RUNNING, __ATOMIC_RELEASE);
	sbx_event(p, "upgrade_start", -1, 0, "workers to %.*s", 90, u->binary);
	for (s = 0; s < p->cfg->nb_standby; s++) {
		struct sbx_standby_shm *sb = &p->shm->standbys[s];

		if (sb->pid > 0 && !p->standby_kill_sent[s] && strcmp(sb->binary, u->binary) != 0 &&
		    (sb->state == SBX_SB_PARKED || sb->state == SBX_SB_STARTING)) {
			kill(sb->pid, SIGTERM); /* replaced by one of the new binary once reaped */
			p->standby_kill_sent[s] = true;
		}
	}
}

/* One step of a running upgrade: hand the next worker of the old binary to a parked standby of
 * the new one, one worker at a time; done when every worker runs the new binary. */
static void upgrade_step(struct sbx_primary *p, uint64_t now)
{
	struct sbx_upgrade_shm *u = &p->shm->upgrade;
	unsigned int w, done = 0, next = UINT32_MAX, busy = 0;
	int sb;

	if (u->state != SBX_UPG_RUNNING)
		return;
	for (w = 0; w < p->cfg->nb_workers; w++) {
		struct sbx_worker_shm *ws = sbx_shm_worker(p->shm, w);

		busy += p->handover_wait[w] || ws->state == SBX_W_STARTING || ws->state == SBX_W_RESTARTING;
		if (strcmp(ws->binary, u->binary) == 0 || ws->state == SBX_W_FAILED)
			done++;
		else if (next == UINT32_MAX && ws->state == SBX_W_RUNNING && ws->pid > 0)
			next = w;
	}
	if (done > u->workers_done)
		p->upgrade_deadline_ns = now + SBX_UPGRADE_STALL_NS; /* progress */
	u->workers_done = done;
	if (busy)
		return;
	if (done == p->cfg->nb_workers) {
		snprintf(p->worker_bin, sizeof(p->worker_bin), "%s", u->binary); /* restarts use it too */
		u->finished_ns = sbx_realtime_ns();
		__atomic_store_n(&u->state, SBX_UPG_DONE, __ATOMIC_RELEASE);
		sbx_event(p, "upgrade_done", -1, 0, "%u workers run %.*s", done, 80, u->binary);
		return;
	}
	if (next != UINT32_MAX && (sb = pick_standby_of(p, now, u->binary)) >= 0) {
		p->handover_wait[next] = true;
		sbx_shm_worker(p->shm, next)->stop = 1;
		sbx_event(p, "worker_restart", (int)next, sbx_shm_worker(p->shm, next)->pid, "upgrade: hand-over to standby %d",
			  sb);
		return;
	}
	if (now > p->upgrade_deadline_ns) {
		char why[sizeof(u->error)];

		snprintf(why, sizeof(why), "no standby of %.*s parked within %llu s (%u of %u workers handed over)", 300,
			 u->binary, (unsigned long long)(SBX_UPGRADE_STALL_NS / 1000000000ULL), done, p->cfg->nb_workers);
		upgrade_refuse(p, why);
	}
}

/* A standby process ended (never given a role): free its slot; start another, with back-off when
 * it died before it was ready (SBX_STANDBY_FAILURES in a row: failed, not started again). */
static void standby_ended(struct sbx_primary *p, unsigned int s, pid_t pid, int status, bool restart)
{
	struct sbx_standby_shm *sb = &p->shm->standbys[s];
	bool was_ready = sb->state == SBX_SB_PARKED;
	uint64_t now = sbx_now_ns();

	sb->pid = 0;
	sb->nonce = 0;
	sb->role = -1;
	flush_lcore_caches(p, sb->lcore_id);
	sb->state = SBX_SB_NONE;
	if (!restart)
		return;
	if (WIFSIGNALED(status))
		sbx_event(p, "standby_exit", -1, pid, "standby %u (%s) killed by signal %d", s,
			  was_ready ? "parked" : "starting", WTERMSIG(status));
	else
		sbx_event(p, "standby_exit", -1, pid, "standby %u (%s) exited with status %d", s,
			  was_ready ? "parked" : "starting", WEXITSTATUS(status));
	if (!was_ready && upgrade_standby_failed(p, sb, pid, status)) {
		p->standby_next_start_ns[s] = now; /* again, of the old binary */
		return;
	}
	sb->failures = was_ready ? 0 : sb->failures + 1;
	if (sb->failures >= SBX_STANDBY_FAILURES) {
		sb->state = SBX_SB_FAILED;
		sbx_event(p, "standby_failed", -1, pid, "standby %u: %u exits in a row before it was ready: not "
			  "started again (workers restart as without standbys)", s, sb->failures);
		return;
	}
	p->standby_next_start_ns[s] = now + (sb->failures ? SBX_BACKOFF_BASE_NS << (sb->failures - 1) : 0);
}

/* The predecessor of a graceful hand-over ended: its lcore's caches go back, its lcore is free. */
static void retired_ended(struct sbx_primary *p, unsigned int w, pid_t pid, int status)
{
	flush_lcore_caches(p, p->retired_lcore[w]);
	p->retired_pid[w] = 0;
	sbx_event(p, "worker_exit", (int)w, pid, "handed over, exited with status %d",
		  WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/* Worker slot whose dead process (taken back before it was reaped: worker_died) has this pid. */
static int dying_of(struct sbx_primary *p, pid_t pid)
{
	return slot_with_pid(p, p->dying_pid, pid);
}

/* The process worker_died() took slot @p w from is reaped: its crash event (now that the signal
 * is known), its lcore id free again. */
static void dying_ended(struct sbx_primary *p, unsigned int w, pid_t pid, int status)
{
	sbx_shm_worker(p->shm, w)->exit_status = (uint32_t)status;
	p->dying_pid[w] = 0; /* its caches went back when it died (worker_ended) */
	crash_event(p, w, pid, status, p->dying_held[w]);
}

/*
 * Process @p pid died holding worker slot @p w's life lock (lifewatch.c): it is in the kernel's
 * exit, runs no code any more, and waitpid() will see it only once its memory is torn down. With
 * a parked standby at hand, take the slot back now as for a crash (burst, caches, crash count) and
 * let the standby go on; the reap comes later (dying_ended). Without one, nothing: a new process
 * needs the slot's lcore id, which the dying one holds until it is reaped.
 */
static void worker_died(struct sbx_primary *p, unsigned int w, pid_t pid, bool restart, uint64_t now)
{
	struct sbx_worker_shm *ws = sbx_shm_worker(p->shm, w);

	if (!restart || pid <= 0 || ws->pid != pid || p->dying_pid[w] != 0 ||
	    __atomic_load_n(&ws->released, __ATOMIC_ACQUIRE) || pick_standby(p, now) < 0)
		return;
	p->dying_pid[w] = pid;
	p->dying_lcore[w] = ws->lcore_id;
	p->dying_held[w] = 0;
	worker_ended(p, w, pid, SBX_STATUS_DYING, restart);
}

/*
 * CPU time of thread @p tid of process @p pid so far, in *@p ns: the first field of
 * /proc/PID/task/TID/schedstat (ns on a CPU; Linux with CONFIG_SCHED_INFO), else utime + stime of
 * .../stat (clock ticks, proc(5)). *@p state: the thread's state letter of .../stat (R running or
 * waiting for a CPU, S sleeping, D uninterruptible, T stopped...), '?' when unread.
 * @return 0, or -1 (no such thread: it ended).
 */
static int thread_cpu_ns(pid_t pid, pid_t tid, uint64_t *ns, char *state)
{
	unsigned long long utime, stime, run;
	char path[64], buf[512], *r;
	FILE *f;
	size_t n;

	*state = '?';
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "PID (COMM) S PPID ..." where COMM may hold ')' and spaces: fields 3.. follow the last ')' */
	r = strrchr(buf, ')');
	if (r == NULL || sscanf(r + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu", state, &utime,
				&stime) != 3)
		return -1;
	*ns = (utime + stime) * (1000000000ULL / (unsigned long long)sysconf(_SC_CLK_TCK));
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (f != NULL) {
		if (fscanf(f, "%llu", &run) == 1)
			*ns = run;
		fclose(f);
	}
	return 0;
}

/* A starvation of worker @p w ended (its heartbeat is fresh again, or the process is gone). */
static void starve_end(struct sbx_primary *p, unsigned int w, uint64_t hb)
{
	struct sbx_worker_shm *ws = sbx_shm_worker(p->shm, w);

	p->cpu_pid[w] = 0;
	if (!ws->starved)
		return;
	ws->starved = 0;
	if (hb > p->starved_hb_ns[w] && ws->pid > 0)
		sbx_event(p, "worker_resumed", (int)w, ws->pid, "scheduled again after %llu ms without a heartbeat",
			  (unsigned long long)((hb - p->starved_hb_ns[w]) / 1000000ULL));
}

/*
 * A running worker whose heartbeat is older than hang_timeout_ms: hung, or not scheduled? Its
 * polling thread (main(): tid = pid) writes the heartbeat in its first loop once it runs (every
 * 10 ms of its time), so CPU time it got since the heartbeat went half stale without writing one
 * (SBX_HUNG_CPU_NS or more) means hung: killed. CPU time that stood still over at least half the
 * timeout means it was not scheduled (CPU-starved, or SIGSTOPped): counted as a starvation, not
 * killed, unless the heartbeat gets SBX_STARVE_FACTOR x hang_timeout_ms old. The CPU time is read
 * only while the heartbeat is more than half stale.
 */
static void check_stale(struct sbx_primary *p, unsigned int w, uint64_t now, uint64_t timeout)
{
	struct sbx_worker_shm *ws = sbx_shm_worker(p->shm, w);
	uint64_t hb = __atomic_load_n(&ws->stats.heartbeat_ns, __ATOMIC_ACQUIRE), age, cpu, ran, window;
	pid_t pid = ws->pid;
	char st;

	age = now > hb ? now - hb : 0;
	if (age <= timeout / 2) {
		starve_end(p, w, hb);
		return;
	}
	if (thread_cpu_ns(pid, pid, &cpu, &st) != 0)
		return; /* it ended: the reap (or its life lock) tells */
	if (p->cpu_pid[w] != pid) { /* the first look at this stale heartbeat */
		p->cpu_pid[w] = pid;
		p->cpu_ns[w] = cpu;
		p->cpu_at_ns[w] = now;
		return;
	}
	/* read after its CPU time: a heartbeat written meanwhile means it runs */
	if (age <= timeout || __atomic_load_n(&ws->stats.heartbeat_ns, __ATOMIC_ACQUIRE) != hb)
		return;
	ran = cpu > p->cpu_ns[w] ? cpu - p->cpu_ns[w] : 0;
	window = now - p->cpu_at_ns[w];
	if (ran >= SBX_HUNG_CPU_NS) {
		sbx_event(p, "worker_hang", (int)w, pid, "no heartbeat for %llu ms, its thread ran %llu ms of CPU in "
			  "%llu ms (state %c): hung: SIGKILL", (unsigned long long)(age / 1000000ULL),
			  (unsigned long long)(ran / 1000000ULL), (unsigned long long)(window / 1000000ULL), st);
	} else if (window < timeout / 2) {
		return; /* too short a look to tell (the primary itself was not scheduled): look on */
	} else if (age > SBX_STARVE_FACTOR * timeout) {
		sbx_event(p, "worker_hang", (int)w, pid, "not scheduled for %llu ms (%llu ms of CPU in %llu ms, state %c), "
			  "over %u x hang_timeout_ms: SIGKILL", (unsigned long long)(age / 1000000ULL), (unsigned long long)(ran / 1000000ULL),
			  (unsigned long long)(window / 1000000ULL), st, SBX_STARVE_FACTOR);
	} else {
		if (!ws->starved) {
			ws->starved = 1;
			ws->starvations++;
			p->starved_hb_ns[w] = hb;
			sbx_event(p, "worker_starved", (int)w, pid, "no heartbeat for %llu ms, not scheduled (%llu ms of CPU "
				  "in %llu ms, state %c): starved, not killed", (unsigned long long)(age / 1000000ULL),
				  (unsigned long long)(ran / 1000000ULL), (unsigned long long)(window / 1000000ULL), st);
		}
		return;
	}
	ws->hangs++;
	kill(pid, SIGKILL); /* also ends a SIGSTOPped process; reaped below */
	p->kill_sent[w] = true;
}

/* Kill workers that hang (check_stale) or whose start stalls. */
static void check_hangs(struct sbx_primary *p, uint64_t now)
{
	uint64_t timeout = (uint64_t)p->cfg->hang_timeout_ms * 1000000ULL;
	unsigned int w;

	for (w = 0; w < p->cfg->nb_workers; w++) {
		struct sbx_worker_shm *ws = sbx_shm_worker(p->shm, w);

		if (ws->pid <= 0 || p->kill_sent[w])
			continue;
		if (ws->state == SBX_W_RUNNING && ws->stats.heartbeat_ns) {
			check_stale(p, w, now, timeout);
		} else if (ws->state == SBX_W_STARTING && now > p->worker_spawn_ns[w] + SBX_START_TIMEOUT_NS) {
			ws->hangs++;
			sbx_event(p, "worker_hang", (int)w, ws->pid, "not running %llu ms after its start: SIGKILL",
				  (unsigned long long)((now - p->worker_spawn_ns[w]) / 1000000ULL));
			kill(ws->pid, SIGKILL);
			p->kill_sent[w] = true;
		}
	}
}

/* Kill standbys whose heartbeat is stale (parked) or whose start stalls; and handed-over
 * predecessors that do not exit. */
static void check_standby_hangs(struct sbx_primary *p, uint64_t now)
{
	uint64_t timeout = (uint64_t)p->cfg->hang_timeout_ms * 1000000ULL;
	unsigned int s, w;

	for (s = 0; s < p->cfg->nb_standby; s++) {
		struct sbx_standby_shm *sb = &p->shm->standbys[s];
		uint64_t hb = sb->heartbeat_ns;

		if (sb->pid <= 0 || p->standby_kill_sent[s])
			continue;
		if ((sb->state == SBX_SB_PARKED && hb && now > hb + timeout) ||
		    (sb->state == SBX_SB_STARTING && now > p->standby_spawn_ns[s] + SBX_START_TIMEOUT_NS)) {
			sbx_event(p, "standby_hang", -1, sb->pid, "standby %u: no heartbeat for %llu ms: SIGKILL", s,
				  (unsigned long long)((now - (hb ? hb : p->standby_spawn_ns[s])) / 1000000ULL));
			kill(sb->pid, SIGKILL);
			p->standby_kill_sent[s] = true;
		}
	}
	for (w = 0; w < p->cfg->nb_workers; w++)
		if (p->retired_pid[w] > 0 && p->retired_ns[w] && now > p->retired_ns[w] + SBX_RETIRE_TIMEOUT_NS) {
			kill(p->retired_pid[w], SIGKILL);
			p->retired_ns[w] = 0; /* once */
		}
}

void sbx_workers_supervise(struct sbx_primary *p, bool restart)
{
	uint64_t now = sbx_now_ns();
	unsigned int w, s;
	int status, sb;
	pid_t pid;

	if (restart) {
		check_hangs(p, now);
		check_standby_hangs(p, now);
	}
	for (w = 0; w < p->cfg->nb_workers; w++)
		if ((pid = sbx_lifewatch_take(p, w)) > 0)
			worker_died(p, w, pid, restart, now);
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		int k = slot_of(p, pid);

		if (k >= 0)
			worker_ended(p, (unsigned int)k, pid, status, restart);
		else if ((k = dying_of(p, pid)) >= 0)
			dying_ended(p, (unsigned int)k, pid, status);
		else if ((k = standby_of(p, pid)) >= 0)
			standby_ended(p, (unsigned int)k, pid, status, restart);
		else if ((k = retired_of(p, pid)) >= 0)
			retired_ended(p, (unsigned int)k, pid, status);
	}
	if (!restart)
		return;
	if (__atomic_exchange_n(&p->upgrade_flag, 0, __ATOMIC_ACQ_REL))
		upgrade_start(p, now);
	upgrade_step(p, now);
	/* a standby that took its role is a worker now: its standby slot is free */
	for (s = 0; s < p->cfg->nb_standby; s++)
		if (__atomic_load_n(&p->shm->standbys[s].state, __ATOMIC_ACQUIRE) == SBX_SB_TAKEN) {
			p->shm->standbys[s].pid = 0;
			p->shm->standbys[s].state = SBX_SB_NONE;
			p->shm->standbys[s].failures = 0;
			p->standby_next_start_ns[s] = now;
		}
	for (w = 0; w < p->cfg->nb_workers; w++) {
		struct sbx_worker_shm *ws = sbx_shm_worker(p->shm, w);

		/* a requested restart: hand the running worker over to a standby, or drain it and
		 * start it again, or revive a failed one */
		if (__atomic_exchange_n(&p->restart_flag[w], 0, __ATOMIC_ACQ_REL)) {
			if (ws->pid > 0 && (p->handover_wait[w] || p->restart_requested[w])) {
				/* already stopping */
			} else if (ws->pid > 0 && ws->state == SBX_W_RUNNING && pick_standby(p, now) >= 0) {
				p->handover_wait[w] = true;
				ws->stop = 1;
				sbx_event(p, "worker_restart", (int)w, ws->pid, "graceful hand-over to a standby requested");
			} else if (ws->pid > 0) {
				p->restart_requested[w] = true;
				ws->stop = 1;
				sbx_event(p, "worker_restart", (int)w, ws->pid, "graceful restart requested");
			} else if (ws->state == SBX_W_FAILED || ws->state == SBX_W_STOPPED || ws->state == SBX_W_DEAD) {
				sbx_event(p, "worker_restart", (int)w, 0, "restart of a %s worker requested",
					  sbx_worker_state_name(ws->state));
				memset(p->crash_ns[w], 0, sizeof(p->crash_ns[w]));
				p->death_rt_ns[w] = sbx_realtime_ns(); /* a takeover's gap counts from the request */
				ws->state = SBX_W_RESTARTING;
				p->worker_next_start_ns[w] = now;
			}
		}
		/* graceful hand-over: the worker stopped polling and flushed; the standby goes on */
		if (p->handover_wait[w] && ws->pid > 0 && __atomic_load_n(&ws->released, __ATOMIC_ACQUIRE)) {
			p->handover_wait[w] = false;
			sb = pick_standby(p, now);
			if (sb >= 0) {
				int old = ws->pid;

				p->retired_pid[w] = old;
				p->retired_lcore[w] = ws->lcore_id;
				p->retired_ns[w] = now;
				handover(p, w, (unsigned int)sb, ws->released_ns, old);
			} else {
				p->restart_requested[w] = true; /* the standby went away: start a new process */
			}
		}
		if (p->takeover_pending[w] && ws->pid > 0) {
			uint64_t first = __atomic_load_n(&ws->stats.first_rx_ns, __ATOMIC_ACQUIRE);

			if (first) {
				p->takeover_pending[w] = false;
				ws->takeover_gap_ns = first > ws->takeover_death_ns ? first - ws->takeover_death_ns : 0;
				sbx_event(p, "takeover_rx", (int)w, ws->pid, "first frame %llu us after pid %u was gone",
					  (unsigned long long)(ws->takeover_gap_ns / 1000), ws->takeover_from);
			}
		}
		if (ws->state == SBX_W_RESTARTING && ws->pid == 0 && now >= p->worker_next_start_ns[w]) {
			sb = pick_standby(p, now);
			if (sb >= 0) {
				handover(p, w, (unsigned int)sb, p->death_rt_ns[w], p->dead_pid[w]);
			} else if (p->dying_pid[w] == 0) { /* else its lcore id is not free before the reap */
				ws->restarts++;
				if (sbx_worker_spawn(p, w) != 0)
					p->worker_next_start_ns[w] = now + SBX_BACKOFF_BASE_NS;
			}
		}
	}
	/* keep the standbys up: each on an lcore id of the set no other process holds */
	for (s = 0; s < p->cfg->nb_standby; s++) {
		struct sbx_standby_shm *b = &p->shm->standbys[s];
		int lc;

		if (b->state != SBX_SB_NONE || b->pid != 0 || now < p->standby_next_start_ns[s])
			continue;
		lc = free_lcore(p);
		if (lc < 0)
			continue;
		if (sbx_standby_spawn(p, s, (unsigned int)lc) != 0)
			p->standby_next_start_ns[s] = now + SBX_BACKOFF_BASE_NS;
	}
}

unsigned int sbx_workers_count(struct sbx_primary *p, enum sbx_worker_state state)
{
	unsigned int w, n = 0;

	for (w = 0; w < p->cfg->nb_workers; w++)
		n += sbx_shm_worker(p->shm, w)->state == state;
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
	unsigned int w, s, alive;

	for (w = 0; w < p->cfg->nb_workers; w++) {
		sbx_shm_worker(p->shm, w)->stop = 1;
		if (sbx_shm_worker(p->shm, w)->pid > 0)
			kill(sbx_shm_worker(p->shm, w)->pid, SIGTERM);
		if (p->retired_pid[w] > 0)
			kill(p->retired_pid[w], SIGTERM);
	}
	for (s = 0; s < p->cfg->nb_standby; s++)
		if (p->shm->standbys[s].pid > 0)
			kill(p->shm->standbys[s].pid, SIGTERM);
	do {
		sbx_workers_supervise(p, false);
		alive = 0;
		for (w = 0; w < p->cfg->nb_workers; w++)
			alive += (sbx_shm_worker(p->shm, w)->pid > 0) + (p->retired_pid[w] > 0) + (p->dying_pid[w] > 0);
		for (s = 0; s < p->cfg->nb_standby; s++)
			alive += p->shm->standbys[s].pid > 0;
		if (alive)
			usleep(10000);
	} while (alive && sbx_now_ns() < deadline);
	for (w = 0; w < p->cfg->nb_workers; w++) {
		if (sbx_shm_worker(p->shm, w)->pid > 0) {
			fprintf(stderr, "spanbox-primary: worker %u did not stop in %u ms: SIGKILL\n", w, timeout_ms);
			kill(sbx_shm_worker(p->shm, w)->pid, SIGKILL);
			waitpid(sbx_shm_worker(p->shm, w)->pid, NULL, 0);
			sbx_shm_worker(p->shm, w)->pid = 0;
			sbx_shm_worker(p->shm, w)->nonce = 0;
			sbx_tables_worker_gone(w);
			sbx_shm_worker(p->shm, w)->state = SBX_W_DEAD;
		}
		if (p->retired_pid[w] > 0) {
			kill(p->retired_pid[w], SIGKILL);
			waitpid(p->retired_pid[w], NULL, 0);
			p->retired_pid[w] = 0;
		}
		if (p->dying_pid[w] > 0) { /* dead already: only its reap is due */
			waitpid(p->dying_pid[w], NULL, 0);
			p->dying_pid[w] = 0;
		}
	}
	for (s = 0; s < p->cfg->nb_standby; s++) {
		struct sbx_standby_shm *sb = &p->shm->standbys[s];

		if (sb->pid > 0) {
			fprintf(stderr, "spanbox-primary: standby %u did not stop in %u ms: SIGKILL\n", s, timeout_ms);
			kill(sb->pid, SIGKILL);
			waitpid(sb->pid, NULL, 0);
			sb->pid = 0;
			sb->nonce = 0;
			sb->state = SBX_SB_NONE;
		}
	}
}
