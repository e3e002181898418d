/* SPDX-License-Identifier: BSD-3-Clause */
/* One process per lcore id and file prefix: a flock per lcore id in DPDK's runtime directory. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "spanbox/lcore_lock.h"
#include "spanbox/shm.h"

#define LOCK_PREFIX "spanbox_lcore_"
#define LOCK_SUFFIX ".lock"

void sbx_lcore_lock_path(const char *prefix, unsigned int lcore_id, char *buf, size_t len)
{
	char dir[SBX_PATH_LEN + 64];

	sbx_runtime_dir(prefix, dir, sizeof(dir));
	snprintf(buf, len, "%s/" LOCK_PREFIX "%u" LOCK_SUFFIX, dir, lcore_id);
}

int sbx_lcore_lock_is_name(const char *name)
{
	size_t n = strlen(name), p = strlen(LOCK_PREFIX), s = strlen(LOCK_SUFFIX);

	return n > p + s && strncmp(name, LOCK_PREFIX, p) == 0 && strcmp(name + n - s, LOCK_SUFFIX) == 0 &&
	       strspn(name + p, "0123456789") == n - p - s;
}

int sbx_flock_holder(ino_t ino)
{
	char line[256];
	FILE *f = fopen("/proc/locks", "re");
	int pid = 0;

	while (f != NULL && pid == 0 && fgets(line, sizeof(line), f) != NULL) {
		unsigned int maj, min;
		unsigned long long i;
		int p;

		/* "1: FLOCK  ADVISORY  WRITE 1797 fe:00:1089602 0 EOF" */
		if (strstr(line, "FLOCK") != NULL &&
		    sscanf(line, "%*d: %*s %*s %*s %d %x:%x:%llu", &p, &maj, &min, &i) == 4 && i == ino)
			pid = p;
	}
	if (f != NULL)
		fclose(f);
	return pid;
}

/* mkdir -p of the directory part of @p path, mode 0700 (as DPDK creates its runtime directory). */
static int make_parent(const char *path)
{
	char buf[SBX_PATH_LEN + 128];
	char *s;

	snprintf(buf, sizeof(buf), "%s", path);
	s = strrchr(buf, '/');
	if (s == NULL || s == buf)
		return 0;
	*s = '\0';
	for (s = buf + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return mkdir(buf, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

static bool alive(int pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* Who holds the lock of @p fd's file: "pid N (comm, role)" into @p buf; returns the pid or 0. */
static int describe_holder(int fd, char *buf, size_t len)
{
	char content[96] = "", role[64] = "", comm[64] = "", path[64];
	struct stat st;
	ssize_t n = pread(fd, content, sizeof(content) - 1, 0);
	int pid = 0;
	FILE *f;

	if (n > 0) {
		content[n] = '\0';
		if (sscanf(content, "%d %63[^\n]", &pid, role) < 1 || !alive(pid))
			pid = 0, role[0] = '\0';
	}
	if (pid == 0 && fstat(fd, &st) == 0)
		pid = sbx_flock_holder(st.st_ino);
	if (pid <= 0) {
		snprintf(buf, len, "another process");
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (f == NULL || fgets(comm, sizeof(comm), f) == NULL)
		snprintf(comm, sizeof(comm), "?");
	comm[strcspn(comm, "\n")] = '\0';
	if (f != NULL)
		fclose(f);
	if (role[0])
		snprintf(buf, len, "pid %d (%s, %s)", pid, comm, role);
	else
		snprintf(buf, len, "pid %d (%s)", pid, comm);
	return pid;
}

/*
 * Take an exclusive flock on @p path (created, with its directory) and write "PID ROLE" into it,
 * retrying for SBX_LCORE_LOCK_WAIT_MS while another process holds it. @p what names the lock in a
 * system error. @return the fd; -1 when another process holds it (*@p holder its pid, 0 unknown,
 * and @p who "pid N (comm, role)"); -2 on another error (@p err says which).
 */
static int take_lock(const char *path, const char *what, const char *role, int *holder, char *who, size_t wholen,
		     char *err, size_t errlen)
{
	const struct timespec nap = { 0, 20 * 1000 * 1000 };
	unsigned int waited = 0;
	struct stat a, b;
	char me[96];
	int fd, n;

	if (make_parent(path) < 0) {
		snprintf(err, errlen, "%s: cannot create the runtime directory of %s: %s", what, path, strerror(errno));
		return -2;
	}
	for (;;) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0 && errno == ENOENT && waited < SBX_LCORE_LOCK_WAIT_MS && make_parent(path) == 0) {
			waited += 1; /* the directory went away (a last process's clean-up): once more */
			continue;
		}
		if (fd < 0) {
			snprintf(err, errlen, "%s: %s: %s", what, path, strerror(errno));
			return -2;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			/* the file may have been removed (a primary's clean-up) between open and flock:
			 * a lock on a file nobody else can find is no lock */
			if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
				break;
			close(fd);
			continue;
		}
		if (errno != EWOULDBLOCK) {
			snprintf(err, errlen, "%s: flock %s: %s", what, path, strerror(errno));
			close(fd);
			return -2;
		}
		if (waited >= SBX_LCORE_LOCK_WAIT_MS) {
			*holder = describe_holder(fd, who, wholen);
			close(fd);
			return -1;
		}
		close(fd);
		nanosleep(&nap, NULL);
		waited += 20;
	}
	n = snprintf(me, sizeof(me), "%d %s\n", (int)getpid(), role);
	if (ftruncate(fd, 0) < 0 || pwrite(fd, me, (size_t)n, 0) != n) {
		/* the lock is what matters; the text only names the holder in a refusal */
	}
	return fd;
}

/* Give up the lock @p fd on @p path: remove the file while still holding it, close, and remove
 * its directory if that left it empty. */
static void unlock_file(int fd, char *path)
{
	struct stat a, b;
	char *slash;

	if (fd < 0)
		return;
	/* still holding it: nobody else can have it, and a taker that opened this file meanwhile
	 * finds it unlinked and makes a new one (take_lock) */
	if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
		unlink(path);
	close(fd);
	slash = strrchr(path, '/');
	if (slash != NULL) {
		*slash = '\0';
		rmdir(path); /* only when empty: no primary (nor anything else) uses the prefix */
	}
}

int sbx_lcore_lock(const char *prefix, unsigned int lcore_id, const char *role, char *err, size_t errlen)
{
	char path[SBX_PATH_LEN + 128], who[192] = "another process", what[32];
	int fd, holder;

	sbx_lcore_lock_path(prefix, lcore_id, path, sizeof(path));
	snprintf(what, sizeof(what), "lcore %u", lcore_id);
	fd = take_lock(path, what, role, &holder, who, sizeof(who), err, errlen);
	if (fd == -1)
		snprintf(err, errlen,
			 "lcore %u of file prefix '%s' is in use by %s: every process of a prefix needs its own "
			 "lcore id (mempool caches are per lcore id), refusing to start", lcore_id, prefix, who);
	return fd;
}

void sbx_prefix_lock_path(const char *prefix, char *buf, size_t len)
{
	char dir[SBX_PATH_LEN + 64];

	sbx_runtime_dir(prefix, dir, sizeof(dir));
	snprintf(buf, len, "%s/" SBX_PREFIX_LOCK_NAME, dir);
}

int sbx_prefix_lock(const char *prefix, const char *role, int *holder, char *err, size_t errlen)
{
	char path[SBX_PATH_LEN + 128], who[192] = "another process";
	int fd;

	sbx_prefix_lock_path(prefix, path, sizeof(path));
	*holder = 0;
	fd = take_lock(path, "prefix lock", role, holder, who, sizeof(who), err, errlen);
	if (fd == -1)
		snprintf(err, errlen, "an appliance of file prefix '%s' is running (primary %s): stop it first, or "
			 "use another eal.file_prefix; nothing of it was touched", prefix, who);
	return fd;
}

void sbx_prefix_unlock(int fd, const char *prefix)
{
	char path[SBX_PATH_LEN + 128];

	sbx_prefix_lock_path(prefix, path, sizeof(path));
	unlock_file(fd, path);
}

int sbx_lcore_lock_adopt(int fd, const char *prefix, unsigned int lcore_id)
{
	char path[SBX_PATH_LEN + 128];
	struct stat a, b;

	sbx_lcore_lock_path(prefix, lcore_id, path, sizeof(path));
	if (fd < 0 || fstat(fd, &a) < 0 || stat(path, &b) < 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev)
		return -1;
	/* on the open file description that holds it, flock succeeds at once; on any other it fails */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return -1;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	return 0;
}

void sbx_lcore_unlock(int fd, const char *prefix, unsigned int lcore_id)
{
	char path[SBX_PATH_LEN + 128];

	sbx_lcore_lock_path(prefix, lcore_id, path, sizeof(path));
	unlock_file(fd, path);
}
