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

/* A runtime file of @p dir someone else holds a lock on; 0 when none, else the holder's pid
 * (-1 when the holder cannot be named) and the file in @p held. */
static int locked_runtime_file(const char *dir, char *held, size_t len)
{
	char pattern[SBX_PATH_LEN + 128];
	glob_t g;
	size_t k;
	int holder = 0;

	snprintf(pattern, sizeof(pattern), "%s/fbarray_*", dir);
	if (glob(pattern, 0, NULL, &g) != 0)
		return 0;
	for (k = 0; k < g.gl_pathc && holder == 0; k++) {
		struct stat st;
		int fd = open(g.gl_pathv[k], O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
			holder = fstat(fd, &st) == 0 ? sbx_flock_holder(st.st_ino) : 0;
			if (holder == 0)
				holder = -1;
			snprintf(held, len, "%s", g.gl_pathv[k]);
		}
		close(fd); /* drops our lock, if we got it */
	}
	globfree(&g);
	return holder;
}

int sbx_runtime_dir_wait_free(const char *prefix, unsigned int timeout_ms)
{
	char dir[SBX_PATH_LEN + 64], held[SBX_PATH_LEN + 96], comm[64] = "?", path[64];
	struct timespec ts = { 0, 50 * 1000000L };
	unsigned int waited = 0;
	bool said = false;
	int pid;

	sbx_runtime_dir(prefix, dir, sizeof(dir));
	while ((pid = locked_runtime_file(dir, held, sizeof(held))) != 0) {
		if (pid > 0) {
			FILE *f;

			snprintf(path, sizeof(path), "/proc/%d/comm", pid);
			f = fopen(path, "r");
			if (f == NULL || fgets(comm, sizeof(comm), f) == NULL)
				snprintf(comm, sizeof(comm), "?");
			comm[strcspn(comm, "\n")] = '\0';
			if (f != NULL)
				fclose(f);
		}
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
	char line[512], pattern[SBX_PATH_LEN + 128], dir[SBX_PATH_LEN + 64];
	FILE *m = fopen("/proc/mounts", "r");
	glob_t g;
	size_t k;

	while (m != NULL && fgets(line, sizeof(line), m) != NULL) {
		char dev[128], mnt[256], type[64];

		if (sscanf(line, "%127s %255s %63s", dev, mnt, type) != 3 || strcmp(type, "hugetlbfs") != 0)
			continue;
		snprintf(pattern, sizeof(pattern), "%s/%smap_*", mnt, prefix);
		if (glob(pattern, 0, NULL, &g) == 0) {
			for (k = 0; k < g.gl_pathc; k++)
				unlink(g.gl_pathv[k]);
			globfree(&g);
		}
	}
	if (m != NULL)
		fclose(m);
	sbx_runtime_dir(prefix, dir, sizeof(dir));
	snprintf(pattern, sizeof(pattern), "%s/*", dir);
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (k = 0; k < g.gl_pathc; k++) {
			const char *base = strrchr(g.gl_pathv[k], '/');

			if (base != NULL && sbx_lcore_lock_is_name(base + 1)) {
				/* an lcore lock someone still holds (mgmt outlives the primary) stays: removing
				 * it would let a second process take the same lcore id on a new file */
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
