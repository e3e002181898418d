/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spanbox-worker: a DPDK secondary process started by the primary. It attaches to the pools and
 * ports the primary created, finds its queues in the memzone and forwards until asked to stop.
 * usage: spanbox-worker <EAL args> -- --id N --nonce HEX   (as the primary starts it: workers.c)
 *        spanbox-worker <EAL args> -- --standby S --nonce HEX   (a hot standby: parks until the
 *        primary gives it a worker's role, then runs as that worker)
 *        spanbox-worker --calibrate [ITERATIONS]   (copy vs share cost, recommended copy.threshold)
 *        spanbox-worker --calibrate --cross-core [FRAMES]   (a share released on another core)
 *        spanbox-worker --calibrate --timestamps [COPIES]   (what a timestamp adds to a copy)
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include "spanbox/abi.h"
#include "spanbox/life.h"
#include "spanbox/lcore_lock.h"
#include "spanbox/shm.h"
#include "calibrate.h"
#include "worker.h"

/* A parked standby wakes every hang_timeout_ms / SBX_STANDBY_BEATS_PER_TIMEOUT, clamped to
 * [SBX_STANDBY_POLL_MIN_US, SBX_STANDBY_POLL_MAX_US]: it reads its role word and writes its heartbeat
 * then. The primary wakes it at once with a signal when it gives it a role, so the interval only
 * sets how stale a heartbeat can be (a tenth of the timeout) and what a parked standby costs: 20
 * wake-ups per second at the default 500 ms, 3-5 ms of CPU in 5 s (it was 100, 15 ms in 5 s). */
#define SBX_STANDBY_BEATS_PER_TIMEOUT 10
#define SBX_STANDBY_POLL_MIN_US 10000
#define SBX_STANDBY_POLL_MAX_US 50000

static volatile sig_atomic_t quit, test_hang;

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static void on_test_hang(int sig)
{
	(void)sig;
	test_hang = 1;
}

/* Return the mbufs in this lcore's cache of pool @p name ("": none) to the pool. */
static void flush_cache(const char *name)
{
	struct rte_mempool *mp = name[0] ? rte_mempool_lookup(name) : NULL;
	struct rte_mempool_cache *c = mp ? rte_mempool_default_cache(mp, rte_lcore_id()) : NULL;

	if (c != NULL)
		rte_mempool_cache_flush(c, mp);
}

/* Return the mbufs in this lcore's mempool caches to the pools (and their indirect-mbuf pools)
 * before the lcore id is reused. */
static void flush_caches(const struct sbx_shm *shm)
{
	uint32_t i;

	for (i = 0; i < shm->nb_pools; i++) {
		flush_cache(shm->pools[i].name);
		flush_cache(shm->pools[i].indirect.name);
	}
}

/* The value of EAL option @p opt in argv before "--" ("--opt=V" or "--opt V"), NULL if absent. */
static const char *eal_opt(int argc, char **argv, const char *opt)
{
	size_t n = strlen(opt);
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strncmp(argv[i], opt, n) == 0 && argv[i][n] == '=')
			return argv[i] + n + 1;
		if (strcmp(argv[i], opt) == 0 && i + 1 < argc)
			return argv[i + 1];
	}
	return NULL;
}

/*
 * The main lcore id the EAL will give this process, from the command line, before rte_eal_init():
 * --main-lcore, else the lowest lcore id of --lcores / -l ("1@(0-1)", "3,5", "(2,3)@0", "4-6").
 * @return the id, or -1 when the command line says it in another way (checked after the EAL).
 */
static long main_lcore_from_args(int argc, char **argv)
{
	const char *s = eal_opt(argc, argv, "--main-lcore"), *p;
	long best = -1, v;
	char *end;
	int i;

	if (s != NULL) {
		errno = 0;
		v = strtol(s, &end, 10);
		return *s && *end == '\0' && errno == 0 && v >= 0 ? v : -1;
	}
	s = eal_opt(argc, argv, "--lcores");
	for (i = 1; s == NULL && i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strncmp(argv[i], "-l", 2) == 0)
			s = argv[i][2] ? argv[i] + 2 : (i + 1 < argc ? argv[i + 1] : NULL);
	if (s == NULL)
		return -1;
	for (p = s; *p;) {
		if (*p == '@') { /* the CPU set: "@5", "@(0-1)" */
			p++;
			if (*p == '(')
				while (*p && *p != ')')
					p++;
			else
				while (*p && *p != ',')
					p++;
			if (*p)
				p++;
			continue;
		}
		if (*p >= '0' && *p <= '9') {
			errno = 0;
			v = strtol(p, &end, 10);
			if (errno != 0) /* out of range: not an lcore id (the EAL refuses it) */
				return -1;
			if (best < 0 || v < best)
				best = v;
			p = end;
			continue;
		}
		p++;
	}
	return best;
}

/* The arguments after "--": --id N or --standby S, and --nonce HEX (as the primary passes them,
 * workers.c). */
static void app_args(int argc, char **argv, long *id, long *standby, const char **nonce)
{
	int i = 1;

	while (i < argc && strcmp(argv[i], "--") != 0)
		i++;
	for (i++; i < argc; i++) {
		if (strcmp(argv[i], "--id") == 0 && i + 1 < argc) {
			char *end;

			errno = 0;
			*id = strtol(argv[++i], &end, 10);
			if (*argv[i] == '\0' || *end != '\0' || errno != 0)
				*id = -1;
		} else if (strcmp(argv[i], "--standby") == 0 && i + 1 < argc) {
			char *end;

			errno = 0;
			*standby = strtol(argv[++i], &end, 10);
			if (*argv[i] == '\0' || *end != '\0' || errno != 0 || *standby < 0)
				*standby = -2;
		} else if (strcmp(argv[i], "--nonce") == 0 && i + 1 < argc) {
			*nonce = argv[++i];
		}
	}
}

/*
 * Is this process the one the primary started for slot @p id? The slot's nonce (written by the
 * primary before the fork, passed as --nonce) and pid (written right after the fork: waited for up
 * to 2 s) must both be ours, and so must the lcore id. Reads the memzone only.
 * @return 0, or -1 with the reason in @p err.
 */
static int check_slot(const struct sbx_shm *shm, long id, const char *nonce_arg, char *err, size_t errlen)
{
	const struct sbx_worker_shm *ws = sbx_shm_worker(shm, id);
	uint64_t nonce, deadline = sbx_now_ns() + 2000000000ULL;
	char *end = NULL;
	int32_t pid;

	if (nonce_arg == NULL) {
		snprintf(err, errlen, "no --nonce: a worker is started by spanbox-primary (pid %d) only, with the "
			 "nonce of its slot; refusing to touch worker %ld's queues and pools", shm->primary_pid, id);
		return -1;
	}
	nonce = strtoull(nonce_arg, &end, 16);
	if (*nonce_arg == '\0' || *end != '\0' || nonce == 0 || nonce != __atomic_load_n(&ws->nonce, __ATOMIC_ACQUIRE)) {
		snprintf(err, errlen, "--nonce %s is not the nonce the primary (pid %d) gave the current start of "
			 "worker %ld: refusing to touch its queues and pools", nonce_arg, shm->primary_pid, id);
		return -1;
	}
	while ((pid = __atomic_load_n(&ws->pid, __ATOMIC_ACQUIRE)) == 0 && sbx_now_ns() < deadline)
		usleep(1000);
	if (pid != getpid()) {
		snprintf(err, errlen, "worker %ld's slot belongs to pid %d, the process the primary (pid %d) started "
			 "for it, not to this one (pid %d): refusing to touch its queues and pools", id, (int)pid,
			 shm->primary_pid, (int)getpid());
		return -1;
	}
	if (ws->lcore_id != rte_lcore_id()) {
		snprintf(err, errlen, "worker %ld runs on lcore %u, this process is on lcore %u", id, ws->lcore_id,
			 rte_lcore_id());
		return -1;
	}
	return 0;
}

/*
 * Is this process the one the primary started for standby slot @p s? As check_slot(): the nonce,
 * the pid (waited for up to 2 s) and the lcore id must be ours. @return 0, or -1 with @p err.
 */
static int check_standby(const struct sbx_shm *shm, long s, const char *nonce_arg, char *err, size_t errlen)
{
	const struct sbx_standby_shm *sb = &shm->standbys[s];
	uint64_t nonce, deadline = sbx_now_ns() + 2000000000ULL;
	char *end = NULL;
	int32_t pid;

	if (nonce_arg == NULL || (nonce = strtoull(nonce_arg, &end, 16)) == 0 || *end != '\0' ||
	    nonce != __atomic_load_n(&sb->nonce, __ATOMIC_ACQUIRE)) {
		snprintf(err, errlen, "--nonce %s is not the nonce the primary (pid %d) gave standby %ld: refusing "
			 "to touch queues and pools", nonce_arg ? nonce_arg : "(none)", shm->primary_pid, s);
		return -1;
	}
	while ((pid = __atomic_load_n(&sb->pid, __ATOMIC_ACQUIRE)) == 0 && sbx_now_ns() < deadline)
		usleep(1000);
	if (pid != getpid()) {
		snprintf(err, errlen, "standby %ld's slot belongs to pid %d, not to this one (pid %d): refusing to "
			 "touch queues and pools", s, (int)pid, (int)getpid());
		return -1;
	}
	if (sb->lcore_id != rte_lcore_id()) {
		snprintf(err, errlen, "standby %ld runs on lcore %u, this process is on lcore %u", s, sb->lcore_id,
			 rte_lcore_id());
		return -1;
	}
	return 0;
}

static void on_wake(int sig)
{
	(void)sig; /* only ends the standby's ppoll() */
}

/*
 * A standby that took worker slot's role moves its polling thread (this one, the lcore's) from
 * the housekeeping CPUs it parked on to the worker's own CPU (workers.cpus): the successor runs
 * where its predecessor ran (docs/CONFIG.md "Placement"). @return 0, or -1 with why in @p err.
 */
static int take_worker_cpu(int cpu, char *err, size_t errlen)
{
	rte_cpuset_t set;
	int rc;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	rc = rte_thread_set_affinity(&set);
	if (rc != 0) {
		snprintf(err, errlen, "cannot move to the worker's CPU %d (%s): polling from the housekeeping CPUs",
			 cpu, strerror(-rc > 0 ? -rc : errno));
		return -1;
	}
	printf("spanbox-worker: standby took the worker's CPU %d\n", cpu);
	return 0;
}

/*
 * A standby, ready: look the pools up (their memory is mapped), then park. Parked it waits in
 * ppoll() with SBX_STANDBY_WAKE_SIGNAL blocked except during the wait, at most the interval above
 * each time: the primary sends that signal right after it wrote the role word,
 * which ends the wait at once (no futex, no lost wake-up: a signal sent while we are not waiting
 * stays pending until the next ppoll), and the timeout reads the word anyway. Heartbeat at each
 * wake-up, the primary checked every 100 ms.
 * @return the worker id the primary gave it (the slot is then ours: pid and nonce checked), or -1
 * when asked to quit, the primary is gone, or the slot it was given is not ours (@p err says why).
 */
static long standby_park(struct sbx_shm *shm, long s, char *err, size_t errlen)
{
	struct sbx_standby_shm *sb = &shm->standbys[s];
	uint64_t poll_us = (uint64_t)shm->cfg.hang_timeout_ms * 1000ULL / SBX_STANDBY_BEATS_PER_TIMEOUT;
	struct timespec wait = { .tv_sec = 0 };
	uint64_t next_hb = 0, next_check = 0, now;
	sigset_t block, during;
	uint32_t i;
	int32_t role;
	long rc = -1;

	for (i = 0; i < shm->nb_pools; i++)
		if (rte_mempool_lookup(shm->pools[i].name) == NULL ||
		    (shm->pools[i].indirect.name[0] && rte_mempool_lookup(shm->pools[i].indirect.name) == NULL)) {
			snprintf(err, errlen, "pool %s or %s not found", shm->pools[i].name, shm->pools[i].indirect.name);
			return -1;
		}
	poll_us = RTE_MAX(RTE_MIN(poll_us, (uint64_t)SBX_STANDBY_POLL_MAX_US), (uint64_t)SBX_STANDBY_POLL_MIN_US);
	wait.tv_nsec = (long)(poll_us * 1000ULL);
	signal(SBX_STANDBY_WAKE_SIGNAL, on_wake);
	sigemptyset(&block);
	sigaddset(&block, SBX_STANDBY_WAKE_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &block, &during);
	sigdelset(&during, SBX_STANDBY_WAKE_SIGNAL);
	sb->heartbeat_ns = sbx_now_ns();
	sb->parked_ns = sbx_realtime_ns();
	__atomic_store_n(&sb->state, SBX_SB_PARKED, __ATOMIC_RELEASE);
	printf("spanbox-worker: standby %ld parked on lcore %u\n", s, rte_lcore_id());
	snprintf(err, errlen, "standby %ld: asked to quit", s);
	while (!quit) {
		role = __atomic_load_n(&sb->role, __ATOMIC_ACQUIRE);
		if (role >= 0) {
			const struct sbx_worker_shm *ws = sbx_shm_worker(shm, role);

			if (role >= shm->cfg.nb_workers || __atomic_load_n(&ws->pid, __ATOMIC_ACQUIRE) != getpid() ||
			    ws->nonce != sb->nonce || ws->lcore_id != rte_lcore_id()) {
				snprintf(err, errlen, "standby %ld: role %d given, but that worker slot is not ours", s,
					 (int)role);
				break;
			}
			__atomic_store_n(&sb->state, SBX_SB_TAKEN, __ATOMIC_RELEASE);
			rc = role;
			break;
		}
		now = sbx_now_ns();
		if (now >= next_hb) {
			__atomic_store_n(&sb->heartbeat_ns, now, __ATOMIC_RELEASE);
			next_hb = now + poll_us * 1000ULL - poll_us * 100ULL; /* each wake-up, a timer's slack aside */
		}
		if (now >= next_check) {
			if (!sbx_primary_alive(shm)) {
				snprintf(err, errlen, "standby %ld: primary gone, exiting", s);
				break;
			}
			next_check = now + 100000000ULL;
		}
		ppoll(NULL, 0, &wait, &during);
	}
	pthread_sigmask(SIG_UNBLOCK, &block, NULL);
	return rc;
}

/*
 * The slot is ours: hold its life lock (spanbox/life.h) from here until the queues are released,
 * so that the primary learns of our death as soon as the kernel ends this thread, before waitpid()
 * could (the thread that polls holds it: main() runs the loop). @return 0, or -1 (@p err).
 */
static int hold_life(struct sbx_shm *shm, long id, char *err, size_t errlen)
{
	struct sbx_worker_shm *ws = sbx_shm_worker(shm, id);
	int rc = sbx_life_hold(&ws->life, &ws->life_pid, 2000);

	if (rc != 0)
		snprintf(err, errlen, "worker slot %ld's life lock: %s", id, strerror(rc));
	return rc == 0 ? 0 : -1;
}

/*
 * Test hook (tests/e2e/42_impostor.sh): SBX_TEST_LEAK_MBUFS="W:N" makes the first process of worker
 * W (restarts 0) take N mbufs of the first pool and keep them until it exits cleanly: a pool that
 * drains with no explanation; "W:N:indirect" the same of its indirect-mbuf pool
 * (tests/e2e/93_indirect_pool.sh); any other value is ignored, said on stdout.
 * @return the mbufs taken (malloc'd array in *@p out, count in *@p n).
 */
static void test_leak(const struct sbx_shm *shm, long id, struct rte_mbuf ***out, unsigned int *n)
{
	const char *s = getenv("SBX_TEST_LEAK_MBUFS"), *name = shm->pools[0].name;
	struct rte_mempool *mp;
	unsigned long w, want;
	char *end;

	*out = NULL;
	*n = 0;
	if (s == NULL)
		return;
	errno = 0;
	w = strtoul(s, &end, 10);
	if (end == s || *end != ':' || errno != 0)
		goto bad;
	s = end + 1;
	want = strtoul(s, &end, 10);
	if (end != s && strcmp(end, ":indirect") == 0) {
		name = shm->pools[0].indirect.name;
		end += strlen(end);
	}
	if (end == s || *end != '\0' || errno != 0 || *s == '-' || want > UINT_MAX)
		goto bad;
	if ((long)w != id || sbx_shm_worker(shm, id)->restarts != 0)
		return;
	mp = rte_mempool_lookup(name);
	*out = mp && want ? calloc(want, sizeof(**out)) : NULL;
	while (*out != NULL && *n < want && ((*out)[*n] = rte_pktmbuf_alloc(mp)) != NULL)
		(*n)++;
	printf("spanbox-worker %ld: test hook SBX_TEST_LEAK_MBUFS: keeping %u mbufs of %s\n", id, *n, name);
	return;
bad:
	printf("spanbox-worker %ld: test hook SBX_TEST_LEAK_MBUFS='%s' ignored: expected W:N or W:N:indirect (decimal)\n", id,
	       getenv("SBX_TEST_LEAK_MBUFS"));
}

int main(int argc, char **argv)
{
	static struct sbx_worker wk;
	struct sbx_shm *shm;
	struct rte_mbuf **leaked;
	const char *nonce = NULL, *prefix;
	unsigned int nb_leaked;
	char err[512], role[32];
	long id = -1, lcore, standby = -1;
	int n, rc, lock_fd = -1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 2 && strcmp(argv[1], "--calibrate") == 0) {
		bool cross = argc >= 3 && strcmp(argv[2], "--cross-core") == 0;
		bool ts = argc >= 3 && strcmp(argv[2], "--timestamps") == 0;
		int a = cross || ts ? 3 : 2;
		unsigned long iters = cross ? 2000000 : 20000;

		if (argc > a + 1) {
			fprintf(stderr, "spanbox-worker: --calibrate [--cross-core | --timestamps] [COUNT]: too many "
				"arguments\n");
			return 2;
		}
		if (argc == a + 1) {
			char *end;

			errno = 0;
			iters = strtoul(argv[a], &end, 10);
			if (end == argv[a] || *end != '\0' || errno != 0 || argv[a][0] == '-' || iters == 0 ||
			    iters > UINT_MAX) {
				fprintf(stderr, "spanbox-worker: --calibrate %s: expected a count of %s 1..%u\n",
					argv[a], cross ? "frames" : "copies", UINT_MAX);
				return 2;
			}
		}
		if (ts)
			return sbx_calibrate_timestamps(argv[0], (unsigned int)iters);
		return cross ? sbx_calibrate_cross_core(argv[0], (unsigned int)iters)
			     : sbx_calibrate(argv[0], (unsigned int)iters);
	}
	app_args(argc, argv, &id, &standby, &nonce);
	if (standby == -2 || standby >= SBX_MAX_STANDBYS) {
		fprintf(stderr, "spanbox-worker: --standby: expected a standby slot 0..%d\n", SBX_MAX_STANDBYS - 1);
		return 1;
	}
	if (id < 0 && standby < 0) {
		fprintf(stderr, "spanbox-worker: missing --id N (or --standby S) after --\n");
		return 1;
	}
	/* before the EAL: a second process on a live lcore id of this prefix corrupts its mempool
	 * caches; refused here, naming the holder (spanbox/lcore_lock.h) */
	prefix = eal_opt(argc, argv, "--file-prefix");
	if (prefix == NULL)
		prefix = "rte"; /* EAL's default */
	if (standby >= 0)
		snprintf(role, sizeof(role), "standby %ld", standby);
	else
		snprintf(role, sizeof(role), "worker %ld", id);
	lcore = main_lcore_from_args(argc, argv);
	if (lcore >= 0 && (lock_fd = sbx_lcore_lock(prefix, (unsigned int)lcore, role, err, sizeof(err))) < 0) {
		fprintf(stderr, "spanbox-worker %s: %s\n", standby >= 0 ? role : role + 7, err);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "spanbox-worker: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	/* the command line said its lcore in a way we did not read: lock the one the EAL chose */
	if ((long)rte_lcore_id() != lcore) {
		if (lock_fd >= 0)
			close(lock_fd);
		lock_fd = sbx_lcore_lock(prefix, rte_lcore_id(), role, err, sizeof(err));
		if (lock_fd < 0) {
			fprintf(stderr, "spanbox-worker %s: %s\n", standby >= 0 ? role : role + 7, err);
			rte_eal_cleanup();
			return 1;
		}
	}
	/* the layout version and mempool drivers the primary published (abi.h): before anything is
	 * looked up in the memzone, and before any pool */
	shm = sbx_abi_check(SBX_SHM_VERSION, err, sizeof(err)) == 0 ? sbx_shm_attach(err, sizeof(err)) : NULL;
	if (shm != NULL && standby >= 0) {
		/* a standby: checked like a worker, then parked until it is given a worker's role */
		if (standby >= shm->nb_standbys) {
			snprintf(err, sizeof(err), "standby %ld: the config has %u standbys", standby, shm->nb_standbys);
			shm = NULL;
		} else if (check_standby(shm, standby, nonce, err, sizeof(err)) != 0 ||
			   (id = standby_park(shm, standby, err, sizeof(err))) < 0) {
			fprintf(stderr, "spanbox-worker: %s\n", err);
			rte_eal_cleanup();
			return quit ? 0 : 1;
		}
	}
	if (shm != NULL && standby >= 0 && id < shm->cfg.nb_workers && shm->cfg.workers[id].cpu >= 0 &&
	    take_worker_cpu(shm->cfg.workers[id].cpu, err, sizeof(err)) != 0)
		fprintf(stderr, "spanbox-worker %ld: %s\n", id, err); /* polls on, from the housekeeping CPUs */
	if (shm != NULL && id >= shm->cfg.nb_workers) {
		snprintf(err, sizeof(err), "worker id %ld: the config has %u workers", id, shm->cfg.nb_workers);
		shm = NULL;
	}
	/* before any queue, ring or pool: is this the process the primary started for the slot? (a
	 * standby's slot was checked in standby_park) */
	if (shm == NULL || (standby < 0 && check_slot(shm, id, nonce, err, sizeof(err)) != 0) ||
	    hold_life(shm, id, err, sizeof(err)) != 0 ||
	    sbx_worker_setup(&wk, shm, (unsigned int)id, err, sizeof(err)) != 0) {
		fprintf(stderr, "spanbox-worker %ld: %s\n", id, err);
		rte_eal_cleanup();
		return 1;
	}
	wk.quit = &quit;
	/* test hook (tests/e2e/94_supervision.sh): SBX_TEST_HANG_WORKER=ID: on SIGUSR2 this worker's
	 * loop spins without heartbeats, its CPU time advancing (a hung worker, not a starved one) */
	if (getenv("SBX_TEST_HANG_WORKER") != NULL && atol(getenv("SBX_TEST_HANG_WORKER")) == id) {
		wk.test_hang = &test_hang;
		signal(SIGUSR2, on_test_hang);
	}
	/* test hook (tests/e2e/90_worker_lifecycle.sh): this worker crashes right after attaching */
	if (getenv("SBX_TEST_CRASH_WORKER") != NULL && atol(getenv("SBX_TEST_CRASH_WORKER")) == id)
		abort();
	test_leak(shm, id, &leaked, &nb_leaked);
	rc = sbx_worker_run(&wk);
	/* a graceful stop exports every flow (forced end) while the primary's exporter still runs */
	sbx_flows_stop(&wk.flows, rc == 0);
	/* while the slot is ours: the fragments the reassembly tables hold are freed and counted as
	 * dropped (a replay's end, a restart), the dedup table freed */
	sbx_ingress_teardown(&wk.ingress);
	if (rc == 0) {
		/* stopped at a burst boundary, TX flushed: a standby may take the queues from here on (the
		 * slot is not ours to write after released: the primary gives it to the successor) */
		wk.slot->state = SBX_W_STOPPED;
		sbx_life_release(&wk.slot->life); /* a clean end, not a death, for the primary's watcher */
		wk.slot->released_ns = sbx_realtime_ns();
		__atomic_store_n(&wk.slot->released, 1, __ATOMIC_RELEASE);
	}
	sbx_mirror_teardown(&wk.mirror);
	if (nb_leaked)
		rte_pktmbuf_free_bulk(leaked, nb_leaked);
	free(leaked);
	flush_caches(shm);
	if (rc != 0)
		fprintf(stderr, "spanbox-worker %ld: primary gone, exiting\n", id);
	rte_eal_cleanup();
	(void)lock_fd; /* held until exit: the successor takes it once we are gone */
	return 0;
}
