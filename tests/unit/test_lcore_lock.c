/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of shared/lcore_lock.c: one process per lcore id and file prefix. Real flocks in the
 * prefix's runtime directory (its own prefix, t10a-unit-<pid>), real child processes. Prints TAP;
 * exits 1 when a case failed.
 * Usage: test_lcore_lock [<repo-root>]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spanbox/lcore_lock.h"
#include "spanbox/shm.h"
#include "tap.h"

static char prefix[64];

/* In a child: try to take @p lcore; exit 0 when refused with a message naming @p want, 1 when it
 * got the lock, 2 when refused for another reason. The message goes to @p msgfile. */
static int child_try(unsigned int lcore, const char *want, const char *msgfile)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		char err[512];
		int fd = sbx_lcore_lock(prefix, lcore, "child", err, sizeof(err));
		FILE *f = fopen(msgfile, "w");

		if (f != NULL) {
			fprintf(f, "%s\n", fd >= 0 ? "(locked)" : err);
			fclose(f);
		}
		_exit(fd >= 0 ? 1 : (fd == -1 && strstr(err, want) != NULL ? 0 : 2));
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static void show(const char *msgfile)
{
	char line[600];
	FILE *f = fopen(msgfile, "r");

	if (f != NULL && fgets(line, sizeof(line), f) != NULL)
		printf("# %s", line);
	if (f != NULL)
		fclose(f);
}

int main(void)
{
	char err[512], want[160], path[512], dir[512], msg[128];
	struct stat st;
	int fd, fd2, other;

	snprintf(prefix, sizeof(prefix), "t10a-unit-%d", (int)getpid());
	snprintf(msg, sizeof(msg), "/tmp/test_lcore_lock.%d.msg", (int)getpid());
	sbx_runtime_dir(prefix, dir, sizeof(dir));
	sbx_lcore_lock_path(prefix, 7, path, sizeof(path));

	check(sbx_lcore_lock_is_name("spanbox_lcore_7.lock") && sbx_lcore_lock_is_name("spanbox_lcore_127.lock") &&
	      !sbx_lcore_lock_is_name("spanbox_lcore_.lock") && !sbx_lcore_lock_is_name("spanbox_lcore_7x.lock") &&
	      !sbx_lcore_lock_is_name("fbarray_memzone") && !sbx_lcore_lock_is_name("spanbox_attachable"),
	      "lock file names: spanbox_lcore_<digits>.lock only");

	fd = sbx_lcore_lock(prefix, 7, "unit test", err, sizeof(err));
	check(fd >= 0 && stat(path, &st) == 0, "lcore 7 of a new prefix: locked, %s created (with its directory)", path);

	snprintf(want, sizeof(want), "lcore 7 of file prefix '%s' is in use by pid %d (", prefix, (int)getpid());
	check(child_try(7, want, msg) == 0, "a second process asking for lcore 7 is refused, naming the lcore and our pid");
	show(msg);
	check(child_try(7, "unit test)", msg) == 0, "... and the holder's role ('unit test')");
	check(child_try(8, "", msg) == 1, "another lcore id (8) of the same prefix is free");

	fd2 = open(path, O_RDWR | O_CLOEXEC);
	check(sbx_lcore_lock_adopt(fd, prefix, 7) == 0, "adopt: the holding descriptor is recognised (as after mgmt's re-exec)");
	check(fd2 >= 0 && sbx_lcore_lock_adopt(fd2, prefix, 7) != 0,
	      "adopt: another open of the same file is not the lock");
	check(sbx_lcore_lock_adopt(fd, prefix, 9) != 0, "adopt: the holding descriptor is not the lock of lcore 9");
	if (fd2 >= 0)
		close(fd2);

	/* the holder dies: its successor gets the lcore at once */
	close(fd);
	other = fork();
	if (other == 0) {
		int cfd = sbx_lcore_lock(prefix, 7, "short-lived", err, sizeof(err));

		_exit(cfd >= 0 ? 0 : 1);
	}
	check(other > 0 && waitpid(other, NULL, 0) == other, "a child took lcore 7 and died holding it");
	fd = sbx_lcore_lock(prefix, 7, "unit test", err, sizeof(err));
	check(fd >= 0, "its successor gets lcore 7 at once (the kernel dropped the dead one's lock)");

	/* the lock file removed under a waiting taker: it must not end up with a lock nobody sees */
	unlink(path);
	fd2 = sbx_lcore_lock(prefix, 7, "second", err, sizeof(err));
	check(fd2 >= 0 && stat(path, &st) == 0, "lock file removed while held: a new taker makes a new one (%s)",
	      fd2 >= 0 ? "locked" : err);
	check(child_try(7, "second)", msg) == 0, "... and a third is refused by that one");
	close(fd);

	sbx_lcore_lock_path(prefix, 8, want, sizeof(want)); /* the lcore 8 child's, released */
	unlink(want);
	sbx_lcore_unlock(fd2, prefix, 7);
	check(stat(path, &st) < 0 && errno == ENOENT, "unlock: the lock file is removed");
	check(stat(dir, &st) < 0 && errno == ENOENT, "unlock: the prefix's runtime directory, empty now, too");

	/* one appliance per prefix: the prefix lock, whatever the lcore ids */
	fd = sbx_prefix_lock(prefix, "primary", &other, err, sizeof(err));
	sbx_prefix_lock_path(prefix, path, sizeof(path));
	check(fd >= 0 && stat(path, &st) == 0, "prefix lock of a new prefix: locked, %s created", path);
	other = fork();
	if (other == 0) {
		int holder = 0, cfd = sbx_prefix_lock(prefix, "primary", &holder, err, sizeof(err));
		FILE *f = fopen(msg, "w");

		if (f != NULL) {
			fprintf(f, "%s\n", cfd >= 0 ? "(locked)" : err);
			fclose(f);
		}
		snprintf(want, sizeof(want), "an appliance of file prefix '%s' is running (primary pid %d (", prefix,
			 (int)getppid());
		_exit(cfd == -1 && holder == getppid() && strstr(err, want) != NULL ? 0 : 1);
	}
	check(other > 0 && waitpid(other, &fd2, 0) == other && WIFEXITED(fd2) && WEXITSTATUS(fd2) == 0,
	      "a second taker of the prefix lock is refused, naming the running appliance's pid");
	show(msg);
	sbx_prefix_unlock(fd, prefix);
	check(stat(path, &st) < 0 && errno == ENOENT && stat(dir, &st) < 0 && errno == ENOENT,
	      "prefix unlock: the lock file and the empty runtime directory are removed");
	unlink(msg);
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
