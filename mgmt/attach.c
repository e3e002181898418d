/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mgmt is a DPDK secondary, and the EAL can be initialised only once per process. So when the
 * primary is not there (or goes away) mgmt keeps serving HTTP with "appliance down", and every
 * MGMT_RETRY_S re-executes itself to try again, handing the listening socket to the new image.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "spanbox/eal_args.h"
#include "spanbox/lcore_lock.h"
#include "attach.h"

/* Where the primary of @p prefix keeps its locked config file (DPDK's eal_get_runtime_dir()). */
static void runtime_config_path(const char *prefix, char *buf, size_t len)
{
	char dir[SBX_PATH_LEN + 64];

	sbx_runtime_dir(prefix, dir, sizeof(dir));
	snprintf(buf, len, "%s/config", dir);
}

/* The state letter of process @p pid (/proc/<pid>/stat: R, S, D, T, t, Z, X...), 0 when unknown. */
static char proc_state(int32_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
	return p != NULL && p[1] == ' ' ? p[2] : 0;
}

/* true when process @p pid is gone: no such process, or a zombie (dead, not yet reaped by its
 * parent: a primary killed with -9 stays one until then). */
static bool is_gone(int32_t pid)
{
	char st;

	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH))
		return true;
	st = proc_state(pid);
	return st == 'Z' || st == 'X';
}

const struct sbx_shm *mgmt_attach(const struct sbx_config *cfg, const char *prog, bool *eal_up,
				  char *err, size_t errlen)
{
	struct sbx_eal_args a;
	const struct sbx_shm *shm;
	char path[SBX_PATH_LEN + 80];
	int pid;

	*eal_up = false;
	runtime_config_path(cfg->file_prefix, path, sizeof(path));
	if (!rte_eal_primary_proc_alive(path)) {
		snprintf(err, errlen, "primary not running (no lock on %s)", path);
		return NULL;
	}
	/* never run a secondary EAL against a primary still in its own EAL init (spanbox/shm.h) */
	pid = sbx_attach_marker_pid(cfg->file_prefix);
	if (is_gone(pid)) {
		snprintf(err, errlen, "primary starting (not yet attachable)");
		return NULL;
	}
	/* a stopped primary answers no EAL request: a secondary's rte_eal_init() would wait 5 s for
	 * each (the vdev bus scan's), and mgmt serves nothing meanwhile */
	if (proc_state(pid) == 'T' || proc_state(pid) == 't') {
		snprintf(err, errlen, "primary (pid %d) not responding: stopped (SIGSTOP or a debugger)", pid);
		return NULL;
	}
	if (sbx_eal_args_build(&a, cfg, SBX_ROLE_MGMT, prog, 0, -1) < 0) {
		snprintf(err, errlen, "EAL arguments do not fit");
		return NULL;
	}
	if (rte_eal_init(a.argc, a.argv) < 0) {
		snprintf(err, errlen, "rte_eal_init: %s", rte_strerror(rte_errno));
		return NULL;
	}
	*eal_up = true;
	shm = sbx_shm_attach(err, errlen);
	/* a primary that does not answer (stale heartbeat) but lives: stay attached and watch it */
	if (shm == NULL || mgmt_primary_state(shm, err, errlen) == MGMT_PRIMARY_GONE)
		return NULL;
	return shm;
}

enum mgmt_primary mgmt_primary_state(const struct sbx_shm *shm, char *why, size_t whylen)
{
	uint64_t hb = __atomic_load_n(&shm->primary_heartbeat_ns, __ATOMIC_RELAXED);
	uint64_t now = sbx_now_ns();
	int32_t pid = __atomic_load_n(&shm->primary_pid, __ATOMIC_RELAXED);

	if (__atomic_load_n(&shm->running, __ATOMIC_ACQUIRE) == 0) {
		if (why && pid > 0)
			snprintf(why, whylen, "primary (pid %d) stopped", pid);
		else if (why) /* the primary zeroes the memzone when it frees it */
			snprintf(why, whylen, "primary stopped");
		return MGMT_PRIMARY_GONE;
	}
	if (is_gone(pid)) {
		if (why)
			snprintf(why, whylen, "primary (pid %d) has exited", pid);
		return MGMT_PRIMARY_GONE;
	}
	if (now > hb && now - hb > MGMT_HEARTBEAT_MAX_NS) {
		char st = proc_state(pid);

		if (why)
			snprintf(why, whylen, "primary (pid %d) not responding: heartbeat %llu ms old%s", pid,
				 (unsigned long long)((now - hb) / 1000000),
				 st == 'T' || st == 't' ? " (stopped: SIGSTOP or a debugger)" : "");
		return MGMT_PRIMARY_NOT_RESPONDING;
	}
	return MGMT_PRIMARY_UP;
}

bool mgmt_primary_alive(const struct sbx_shm *shm, char *why, size_t whylen)
{
	return mgmt_primary_state(shm, why, whylen) == MGMT_PRIMARY_UP;
}

/* Keep @p fd open across exec and name it in environment variable @p env. @return 0 or -1. */
static int pass_fd(int fd, const char *env)
{
	char num[16];
	int flags = fcntl(fd, F_GETFD);

	if (flags < 0 || fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) < 0)
		return -1;
	snprintf(num, sizeof(num), "%d", fd);
	return setenv(env, num, 1);
}

int mgmt_reexec(int listen_fd, int lock_fd, char *const argv[])
{
	int lo = listen_fd < lock_fd || lock_fd < 0 ? listen_fd : lock_fd;
	int hi = listen_fd < lock_fd ? lock_fd : listen_fd;

	if (pass_fd(listen_fd, MGMT_LISTEN_FD_ENV) < 0 || (lock_fd >= 0 && pass_fd(lock_fd, MGMT_LOCK_FD_ENV) < 0))
		return -1;
	/* DPDK leaves fds (hugepage files, IPC socket) without O_CLOEXEC: do not leak them. */
	if (lo > 3)
		close_range(3, (unsigned int)lo - 1, 0);
	if (lock_fd >= 0 && hi > lo + 1)
		close_range((unsigned int)lo + 1, (unsigned int)hi - 1, 0);
	close_range((unsigned int)hi + 1, ~0U, 0);
	execv("/proc/self/exe", argv);
	return -1;
}

int mgmt_lcore_lock(const struct sbx_config *cfg, char *err, size_t errlen)
{
	const char *s = getenv(MGMT_LOCK_FD_ENV);
	char *end;
	int fd;

	if (s != NULL) {
		fd = (int)strtol(s, &end, 10);
		unsetenv(MGMT_LOCK_FD_ENV);
		if (*s != '\0' && *end == '\0' && fd >= 3 && sbx_lcore_lock_adopt(fd, cfg->file_prefix, cfg->mgmt_lcore) == 0)
			return fd;
		if (*s != '\0' && *end == '\0' && fd >= 3)
			close(fd); /* not (or no longer) the lock: take it anew */
	}
	fd = sbx_lcore_lock(cfg->file_prefix, cfg->mgmt_lcore, "mgmt", err, errlen);
	return fd >= 0 ? fd : -1;
}

int mgmt_inherited_listen_fd(void)
{
	const char *s = getenv(MGMT_LISTEN_FD_ENV);
	int fd, yes = 0;
	socklen_t len = sizeof(yes);
	char *end;

	if (s == NULL)
		return -1;
	fd = (int)strtol(s, &end, 10);
	unsetenv(MGMT_LISTEN_FD_ENV);
	if (*end != '\0' || fd < 3 ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &yes, &len) < 0 || !yes)
		return -1;
	fcntl(fd, F_SETFD, FD_CLOEXEC); /* nobody else (EAL threads, helpers) inherits it */
	return fd;
}

int mgmt_request(const char *action, const void *request, size_t req_len, unsigned int timeout_ms, void *answer,
		 size_t *answer_len)
{
	struct rte_mp_msg req;
	struct rte_mp_reply rep;
	struct timespec ts = { .tv_sec = timeout_ms / 1000, .tv_nsec = (long)(timeout_ms % 1000) * 1000000L };
	int rc = -1;

	memset(&req, 0, sizeof(req));
	snprintf(req.name, sizeof(req.name), "%s", action);
	if (req_len > RTE_MP_MAX_PARAM_LEN) {
		*answer_len = 0;
		return -1;
	}
	req.len_param = (int)req_len;
	memcpy(req.param, request, req_len);
	memset(&rep, 0, sizeof(rep));
	if (rte_mp_request_sync(&req, &rep, &ts) == 0 && rep.nb_received == 1) {
		size_t n = (size_t)rep.msgs[0].len_param;

		if (n > *answer_len)
			n = *answer_len;
		memcpy(answer, rep.msgs[0].param, n);
		*answer_len = (size_t)rep.msgs[0].len_param;
		rc = 0;
	} else {
		*answer_len = 0;
	}
	free(rep.msgs);
	return rc;
}

uint32_t mgmt_control(uint32_t verb, uint32_t target, uint32_t up, struct sbx_ctl_reply *rep)
{
	static uint64_t next_id; /* one caller at a time (the control lane) */
	struct sbx_ctl_req req = { .version = SBX_IPC_VERSION, .verb = verb, .target = target, .up = up };
	size_t n = sizeof(*rep);

	req.request_id = ++next_id;
	memset(rep, 0, sizeof(*rep));
	if (mgmt_request(SBX_IPC_CTL, &req, sizeof(req), SBX_CTL_TIMEOUT_MS, rep, &n) != 0) {
		memset(rep, 0, sizeof(*rep));
		snprintf(rep->error, sizeof(rep->error), "no answer from the primary within %d ms", SBX_CTL_TIMEOUT_MS);
		return SBX_CTL_NONE;
	}
	if (n != sizeof(*rep) || rep->version != SBX_IPC_VERSION || rep->request_id != req.request_id) {
		memset(rep, 0, sizeof(*rep));
		snprintf(rep->error, sizeof(rep->error), "the primary's answer does not match the request "
			 "(%zu bytes, expected %zu; another version or request)", n, sizeof(*rep));
		return SBX_CTL_NONE;
	}
	rep->error[sizeof(rep->error) - 1] = '\0';
	return rep->result;
}
