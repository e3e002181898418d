/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of shared/hostinfo.c: CPU list parsing and formatting (pure), and the sysfs readers
 * checked against this machine's own files. Prints TAP; exits 1 when a case failed.
 * Usage: test_hostinfo <repo-root>
 */
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spanbox/hostinfo.h"
#include "tap.h"


static void test_cpulist(void)
{
	static const struct {
		const char *in, *out;
		int n;
	} cases[] = {
		{"0", "0", 1},           {"0-1", "0-1", 2},         {"3,1,2", "1-3", 3},
		{"0-3,8,10-11", "0-3,8,10-11", 7}, {"5,5", "5", 1}, {"0-1023", "0-1023", 1024},
		{"", "", 0},             {"7\n", "7", 1} /* as read from sysfs */,            {"1-1", "1", 1},
		{"a", NULL, -1},         {"1-", NULL, -1},           {"3-1", NULL, -1},
		{"1,", NULL, -1},        {"1024", NULL, -1},         {"-1", NULL, -1},
		{"1 2", NULL, -1},       {"1,,2", NULL, -1},
	};
	struct sbx_cpuset set;
	char buf[64], small[4];
	size_t i;
	int n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = sbx_cpulist_parse(cases[i].in, &set);
		if (cases[i].out == NULL) {
			check(n == -1, "cpulist \"%s\" refused (%d)", cases[i].in, n);
			continue;
		}
		sbx_cpulist_format(&set, buf, sizeof(buf));
		check(n == cases[i].n && !strcmp(buf, cases[i].out), "cpulist \"%.*s\": %d CPUs, \"%s\"",
		      (int)strcspn(cases[i].in, "\n"), cases[i].in, n, buf);
	}
	sbx_cpulist_parse("0-3,8,10-11", &set);
	check(sbx_cpuset_has(&set, 8) && !sbx_cpuset_has(&set, 9) && !sbx_cpuset_has(&set, 5000),
	      "cpuset_has");
	sbx_cpulist_format(&set, small, sizeof(small));
	check(strlen(small) == 3, "format truncates to the buffer (\"%s\")", small);
}

/* The sysfs readers against what a shell sees in the same files. */
static void test_sysfs(void)
{
	int nodes[SBX_MAX_NODES], n = sbx_numa_nodes(nodes, SBX_MAX_NODES), s, i;
	struct sbx_hugepages h[64];
	struct sbx_hugetlbfs m[8];
	struct sbx_cpuset set;
	char cpus[256], list[64];
	glob_t g;
	int ng = 0;

	if (glob("/sys/devices/system/node/node[0-9]*", GLOB_ONLYDIR, NULL, &g) == 0) {
		ng = (int)g.gl_pathc;
		globfree(&g);
	}
	check(n == ng && (n == 0 || nodes[0] >= 0), "%d NUMA nodes, as many as sysfs directories", n);
	if (n > 0 && check(sbx_numa_node_cpus(nodes[0], cpus, sizeof(cpus)) == 0 &&
				   sbx_cpulist_parse(cpus, &set) > 0,
			   "node %d cpulist \"%s\" parses", nodes[0], cpus)) {
		s = sbx_cpuset_socket(&set, list, sizeof(list));
		check(s == nodes[0], "the CPUs of node %d are on socket %d (nodes \"%s\")", nodes[0], s, list);
		for (i = 0; i < SBX_MAX_CPUS && !sbx_cpuset_has(&set, (unsigned int)i); i++)
			;
		check(sbx_cpu_node((unsigned int)i) == nodes[0], "cpu%d is on node %d", i, nodes[0]);
	}
	check(sbx_cpu_node(SBX_MAX_CPUS + 5) == -1, "a CPU that does not exist has no node");
	sbx_cpulist_parse("", &set);
	check(sbx_cpuset_socket(&set, list, sizeof(list)) == SBX_SOCKET_UNKNOWN && list[0] == '\0',
	      "empty set: socket unknown");
	n = sbx_hugepages_read(h, 64);
	check(n >= 1 && h[0].node == -1 && h[0].page_size >= 4096, "%d hugepage entries, machine-wide first", n);
	for (i = 0; i < n; i++)
		if (h[i].node == -1 && h[i].page_size == sbx_default_hugepage_size())
			check(h[i].free <= h[i].nr + h[i].surplus,
			      "default size %llu kB: nr %llu, free %llu, resv %llu",
			      (unsigned long long)(h[i].page_size >> 10), (unsigned long long)h[i].nr,
			      (unsigned long long)h[i].free, (unsigned long long)h[i].resv);
	n = sbx_hugetlbfs_mounts(m, 8);
	for (i = 0; i < n; i++)
		check(m[i].page_size >= 4096 && access(m[i].path, F_OK) == 0, "hugetlbfs %s, page size %llu kB",
		      m[i].path, (unsigned long long)(m[i].page_size >> 10));
}

/* The memset probe on 2 pages, when 2 are free; a size of 3 bytes is rounded up to a page. */
static void test_memset(void)
{
	uint64_t ps = sbx_default_hugepage_size();
	struct sbx_memset_result r;
	char err[256] = "";
	int rc;

	if (ps == 0 || sbx_hugepages_available(ps, 0) < 4) {
		printf("# skipped memset probe: fewer than 4 free hugepages\n");
		return;
	}
	rc = sbx_memset_probe(3, 0, 0, &r, err, sizeof(err));

	check(rc == 0 && r.bytes == 3 && r.page_size == ps && r.ns > 0,
	      "memset probe of 3 bytes on one page (%llu B in %llu ns) %s", (unsigned long long)r.bytes,
	      (unsigned long long)r.ns, err);
	rc = sbx_memset_probe(1ULL << 50, 0, 0, &r, err, sizeof(err));
	check(rc == -1 && strstr(err, "mmap of") != NULL,
	      "memset probe of 1 PiB fails cleanly: %s", err);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	test_cpulist();
	test_sysfs();
	test_memset();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
