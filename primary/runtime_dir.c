/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The primary's housekeeping of its file prefix: DPDK's runtime directory (/var/run/dpdk/PREFIX)
 * and the hugepage files (PREFIXmap_*). Three jobs:
 *  - before rte_eal_init(): wait until no process of a previous primary (a secondary that has not
 *    noticed yet that its primary died) still holds a lock on the runtime files. DPDK 22.11's
 *    rte_fbarray_init() needs an exclusive flock on fbarray_memzone and fbarray_memseg-*; a
 *    secondary holds a shared one as long as it is attached, and the new primary would fail with
 *    "Cannot allocate memzone list" (lib/eal/common/eal_common_fbarray.c).
 *  - the "attachable" marker (spanbox/shm.h) that tells mgmt when it may attach.
 *  - removing the prefix's files at exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "spanbox/lcore_lock.h"
#include "spanbox/shm.h"
#include "primary.h"

/* The name of process @p pid (/proc/PID/comm) into @p buf, "?" when unknown. */
static void proc_comm(int pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = pid > 0 ? fopen(path, "r") : NULL;
	if (f == NULL || fgets(buf, (int)len, f) == NULL)
		snprintf(buf, len, "?");
	buf[strcspn(buf, "\n")] = '\0';
	if (f != NULL)
		fclose(f);
}

/* true for the lock files of spanbox in a runtime directory (lcore locks, the prefix lock). */
static bool is_lock_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base != NULL ? base + 1 : path;
	return sbx_lcore_lock_is_name(base) || strcmp(base, SBX_PREFIX_LOCK_NAME) == 0;
}

/* A file of @p g another process holds a flock on (spanbox's own lock files aside): 0 when none,
 * else the holder's pid (-1 when the holder cannot be named) and the file in @p held. */
static int locked_file(const glob_t *g, char *held, size_t len)
{
	size_t k;
	int holder = 0;

	for (k = 0; k < g->gl_pathc && holder == 0; k++) {
		struct stat st;
		int fd;

		if (is_lock_name(g->gl_pathv[k]) || (fd = open(g->gl_pathv[k], O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
			holder = fstat(fd, &st) == 0 ? sbx_flock_holder(st.st_ino) : 0;
			if (holder == 0)
				holder = -1;
			snprintf(held, len, "%s", g->gl_pathv[k]);
		}
		close(fd); /* drops our lock, if we got it */
	}
	return holder;
}

/* A runtime file of @p dir matching @p name (a glob) someone else holds a lock on: locked_file(). */
static int locked_runtime_file(const char *dir, const char *name, char *held, size_t len)
{
	char pattern[SBX_PATH_LEN + 128];
	glob_t g;
	int holder;

	snprintf(pattern, sizeof(pattern), "%s/%s", dir, name);
	if (glob(pattern, 0, NULL, &g) != 0)
		return 0;
	holder = locked_file(&g, held, len);
	globfree(&g);
	return holder;
}

/* The hugepage files of @p prefix on every hugetlbfs mount into @p g (globfree() it). @return
 * their number. */
static size_t hugepage_files(const char *prefix, glob_t *g)
{
	char line[512], pattern[SBX_PATH_LEN + 128];
	FILE *m = fopen("/proc/mounts", "r");
	int flags = 0;

	memset(g, 0, sizeof(*g));
	while (m != NULL && fgets(line, sizeof(line), m) != NULL) {
		char dev[128], mnt[256], type[64];

		if (sscanf(line, "%127s %255s %63s", dev, mnt, type) != 3 || strcmp(type, "hugetlbfs") != 0)
			continue;
		snprintf(pattern, sizeof(pattern), "%s/%smap_*", mnt, prefix);
		if (glob(pattern, flags, NULL, g) == 0)
			flags = GLOB_APPEND;
	}
	if (m != NULL)
		fclose(m);
	return g->gl_pathc;
}

int sbx_runtime_dir_wait_free(const char *prefix, unsigned int timeout_ms)
{
	char dir[SBX_PATH_LEN + 64], held[SBX_PATH_LEN + 96], comm[64] = "?";
	struct timespec ts = { 0, 50 * 1000000L };
	unsigned int waited = 0;
	bool said = false;
	int pid;

	sbx_runtime_dir(prefix, dir, sizeof(dir));
	while ((pid = locked_runtime_file(dir, "fbarray_*", held, sizeof(held))) != 0) {
		proc_comm(pid, comm, sizeof(comm));
		if (waited >= timeout_ms) {
			fprintf(stderr,
				"spanbox-primary: %s is still held by pid %d (%s) after %u ms: a process of a previous "
				"primary of file prefix '%s' is attached; stop it or use another eal.file_prefix\n",
				held, pid, comm, waited, prefix);
			return -1;
		}
		if (!said) {
			printf("spanbox-primary: waiting for pid %d (%s) to detach from %s (previous primary's "
			       "runtime files)\n", pid, comm, dir);
			said = true;
		}
		nanosleep(&ts, NULL);
		waited += 50;
	}
	if (said)
		printf("spanbox-primary: runtime directory free after %u ms\n", waited);
	return 0;
}

int sbx_prefix_eal_primary(const char *prefix)
{
	char dir[SBX_PATH_LEN + 64], path[SBX_PATH_LEN + 80];
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd, pid = 0;

	sbx_runtime_dir(prefix, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/config", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
		pid = fl.l_pid > 0 ? fl.l_pid : -1;
	close(fd);
	return pid;
}

/* Who of @p prefix still uses its files: the EAL primary, else a process holding a runtime file
 * or a hugepage file (a secondary). @return its pid (-1 unnamed) and the file in @p held, or 0. */
static int prefix_user(const char *prefix, char *held, size_t len)
{
	char dir[SBX_PATH_LEN + 64];
	glob_t g;
	int pid;

	sbx_runtime_dir(prefix, dir, sizeof(dir));
	if ((pid = sbx_prefix_eal_primary(prefix)) != 0) {
		snprintf(held, len, "%s/config", dir);
		return pid;
	}
	if ((pid = locked_runtime_file(dir, "*", held, len)) != 0)
		return pid;
	hugepage_files(prefix, &g);
	pid = locked_file(&g, held, len);
	globfree(&g);
	return pid;
}

int sbx_prefix_clean(const char *prefix, unsigned int timeout_ms)
{
	char dir[SBX_PATH_LEN + 64], held[SBX_PATH_LEN + 96], err[512], comm[64];
	struct timespec ts = { 0, 50 * 1000000L };
	unsigned int waited = 0;
	struct stat st;
	size_t pages;
	bool had_dir;
	glob_t g;
	int fd, pid;

	sbx_runtime_dir(prefix, dir, sizeof(dir));
	had_dir = stat(dir, &st) == 0;
	pages = hugepage_files(prefix, &g);
	globfree(&g);
	if (!had_dir && pages == 0)
		return 0; /* nothing left: the usual case after a clean stop */
	/* held while we look and remove: no primary of the prefix starts meanwhile */
	fd = sbx_prefix_lock(prefix, "clean-up", &pid, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "spanbox-primary: the files of file prefix '%s' stay: %s\n", prefix, err);
		return 1;
	}
	/* a dead primary's workers exit on its death (PR_SET_PDEATHSIG), a mgmt within a second:
	 * give them a moment */
	while ((pid = prefix_user(prefix, held, sizeof(held))) != 0 && waited < timeout_ms) {
		nanosleep(&ts, NULL);
		waited += 50;
	}
	if (pid != 0) {
		proc_comm(pid, comm, sizeof(comm));
		fprintf(stderr, "spanbox-primary: the files of file prefix '%s' stay: %s is held by pid %d (%s), a "
			"process of the prefix\n", prefix, held, pid, comm);
		sbx_prefix_unlock(fd, prefix);
		return 1;
	}
	pages = hugepage_files(prefix, &g);
	globfree(&g);
	sbx_prefix_files_remove(prefix);
	sbx_prefix_unlock(fd, prefix);
	printf("spanbox-primary: removed what a dead appliance of file prefix '%s' left: %zu hugepage file%s and "
	       "%s (no process of the prefix runs)\n", prefix, pages, pages == 1 ? "" : "s", dir);
	return 0;
}

void sbx_marker_remove(const char *prefix)
{
	char path[SBX_PATH_LEN + 64];

	sbx_attach_marker_path(prefix, path, sizeof(path));
	unlink(path);
}

void sbx_marker_write(const char *prefix)
{
	char path[SBX_PATH_LEN + 64], tmp[SBX_PATH_LEN + 96];
	FILE *f;

	sbx_attach_marker_path(prefix, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w"); /* written whole, then renamed: a reader never sees half a pid */
	if (f == NULL) {
		fprintf(stderr, "spanbox-primary: warning: %s: %s (mgmt will not attach)\n", tmp, strerror(errno));
		return;
	}
	fprintf(f, "%d\n", (int)getpid());
	if (fclose(f) != 0 || rename(tmp, path) != 0)
		fprintf(stderr, "spanbox-primary: warning: %s: %s (mgmt will not attach)\n", path, strerror(errno));
}

void sbx_prefix_files_remove(const char *prefix)
{
	char pattern[SBX_PATH_LEN + 128], dir[SBX_PATH_LEN + 64];
	glob_t g;
	size_t k;

	hugepage_files(prefix, &g);
	for (k = 0; k < g.gl_pathc; k++)
		unlink(g.gl_pathv[k]);
	globfree(&g);
	sbx_runtime_dir(prefix, dir, sizeof(dir));
	snprintf(pattern, sizeof(pattern), "%s/*", dir);
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (k = 0; k < g.gl_pathc; k++) {
			if (is_lock_name(g.gl_pathv[k])) {
				/* a lock someone still holds (mgmt outlives the primary; the prefix lock of
				 * the one removing) stays: removing it would let a second process take the
				 * same lcore id, or the same prefix, on a new file */
				int fd = open(g.gl_pathv[k], O_RDONLY | O_CLOEXEC);

				if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
					unlink(g.gl_pathv[k]);
				if (fd >= 0)
					close(fd);
				continue;
			}
			unlink(g.gl_pathv[k]);
		}
		globfree(&g);
	}
	rmdir(dir); /* fails, harmlessly, while a held lock file is left in it */
}
