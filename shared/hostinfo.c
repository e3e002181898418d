/* SPDX-License-Identifier: BSD-3-Clause */
/* Host facts from sysfs and procfs: CPUs, NUMA nodes, hugepages, hugetlbfs (hostinfo.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "spanbox/hostinfo.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#define SBX_MPOL_PREFERRED 1 /* <linux/mempolicy.h>: prefer the node, fall back to others */

static const char NODE_DIR[] = "/sys/devices/system/node";
static const char CPU_DIR[] = "/sys/devices/system/cpu";

int sbx_cpulist_parse(const char *s, struct sbx_cpuset *set)
{
	int n = 0;

	memset(set, 0, sizeof(*set));
	while (*s) {
		char *end;
		unsigned long a, b, c;

		if (!isdigit((unsigned char)*s))
			return -1;
		a = strtoul(s, &end, 10);
		b = a;
		s = end;
		if (*s == '-') {
			if (!isdigit((unsigned char)s[1]))
				return -1;
			b = strtoul(s + 1, &end, 10);
			s = end;
		}
		if (a > b || b >= SBX_MAX_CPUS)
			return -1;
		for (c = a; c <= b; c++) {
			if (!(set->bits[c / 64] & (1ULL << (c % 64))))
				n++;
			set->bits[c / 64] |= 1ULL << (c % 64);
		}
		if (*s == ',') {
			s++;
			if (*s == '\0')
				return -1;
		} else if (*s != '\0' && *s != '\n') {
			return -1;
		} else if (*s == '\n') {
			break;
		}
	}
	return n;
}

bool sbx_cpuset_has(const struct sbx_cpuset *set, unsigned int cpu)
{
	return cpu < SBX_MAX_CPUS && (set->bits[cpu / 64] & (1ULL << (cpu % 64)));
}

void sbx_cpulist_format(const struct sbx_cpuset *set, char *buf, size_t len)
{
	size_t used = 0;
	unsigned int c = 0, first;

	if (len == 0)
		return;
	buf[0] = '\0';
	while (c < SBX_MAX_CPUS) {
		if (!sbx_cpuset_has(set, c)) {
			c++;
			continue;
		}
		first = c;
		while (c + 1 < SBX_MAX_CPUS && sbx_cpuset_has(set, c + 1))
			c++;
		if (used < len) {
			int n = first == c ? snprintf(buf + used, len - used, "%s%u", used ? "," : "", c)
					   : snprintf(buf + used, len - used, "%s%u-%u", used ? "," : "", first, c);
			used += n > 0 ? (size_t)n : 0;
		}
		c++;
	}
}

int sbx_cpu_node(unsigned int cpu)
{
	char path[128];
	struct dirent *e;
	DIR *d;
	int node = -1;

	snprintf(path, sizeof(path), "%s/cpu%u", CPU_DIR, cpu);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "node", 4) == 0 && isdigit((unsigned char)e->d_name[4])) {
			node = atoi(e->d_name + 4);
			break;
		}
	}
	closedir(d);
	return node;
}

int sbx_cpuset_socket(const struct sbx_cpuset *set, char *nodes, size_t len)
{
	uint64_t seen = 0;
	unsigned int c;
	int node, first = SBX_SOCKET_UNKNOWN, count = 0;

	for (c = 0; c < SBX_MAX_CPUS; c++) {
		if (!sbx_cpuset_has(set, c))
			continue;
		node = sbx_cpu_node(c);
		if (node < 0 || node >= SBX_MAX_NODES)
			continue;
		if (!(seen & (1ULL << node)))
			count++;
		seen |= 1ULL << node;
		if (first == SBX_SOCKET_UNKNOWN)
			first = node;
	}
	if (nodes != NULL && len > 0) {
		size_t used = 0;

		nodes[0] = '\0';
		for (node = 0; node < SBX_MAX_NODES; node++) {
			if (!(seen & (1ULL << node)) || used >= len)
				continue;
			int n = snprintf(nodes + used, len - used, "%s%d", used ? "," : "", node);
			used += n > 0 ? (size_t)n : 0;
		}
	}
	return count > 1 ? SBX_SOCKET_MIXED : first;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int sbx_numa_nodes(int ids[], int max)
{
	DIR *d = opendir(NODE_DIR);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL && n < max) {
		const char *s = e->d_name;

		if (strncmp(s, "node", 4) != 0 || !isdigit((unsigned char)s[4]) ||
		    strspn(s + 4, "0123456789") != strlen(s + 4))
			continue;
		ids[n++] = atoi(s + 4);
	}
	closedir(d);
	qsort(ids, (size_t)n, sizeof(ids[0]), cmp_int);
	return n;
}

/* The first line of @p path into @p buf without its newline. @return 0 or -1. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	bool ok;

	if (f == NULL)
		return -1;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* An unsigned number from the file @p dir/@p name; 0 when unreadable. */
static uint64_t read_u64(const char *dir, const char *name)
{
	char path[512], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return read_line(path, buf, sizeof(buf)) == 0 ? strtoull(buf, NULL, 10) : 0;
}

int sbx_cpus_online(struct sbx_cpuset *set)
{
	char buf[4096];
	const char *hook = getenv("SBX_TEST_ONLINE_CPUS");

	if (hook != NULL)
		snprintf(buf, sizeof(buf), "%s", hook);
	else if (read_line("/sys/devices/system/cpu/online", buf, sizeof(buf)) != 0)
		return -1;
	return sbx_cpulist_parse(buf, set);
}

int sbx_cmdline_param(const char *cmdline, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key);
	const char *p = cmdline;
	int found = -1;

	if (len > 0)
		out[0] = '\0';
	while (p != NULL && *p != '\0') {
		size_t n;

		p += strspn(p, " \t\n");
		n = strcspn(p, " \t\n");
		if (n > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
			snprintf(out, len, "%.*s", (int)(n - klen - 1), p + klen + 1);
			found = 0;
		}
		p += n;
	}
	return found;
}

int sbx_numa_node_cpus(int node, char *buf, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/node%d/cpulist", NODE_DIR, node);
	return read_line(path, buf, len);
}

/* Page sizes in bytes of the "hugepages-<N>kB" entries of @p dir, ascending. @return count. */
static int huge_sizes(const char *dir, uint64_t sizes[], int max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0, i, j;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL && n < max) {
		unsigned long long kb;
		char unit[4];

		if (sscanf(e->d_name, "hugepages-%llu%3s", &kb, unit) == 2 && strcmp(unit, "kB") == 0)
			sizes[n++] = (uint64_t)kb * 1024;
	}
	closedir(d);
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && sizes[j - 1] > sizes[j]; j--) {
			uint64_t t = sizes[j];
			sizes[j] = sizes[j - 1];
			sizes[j - 1] = t;
		}
	return n;
}

int sbx_hugepages_read(struct sbx_hugepages out[], int max)
{
	uint64_t sizes[SBX_MAX_HUGE_SIZES];
	int nodes[SBX_MAX_NODES];
	int ns = huge_sizes("/sys/kernel/mm/hugepages", sizes, SBX_MAX_HUGE_SIZES);
	int nn = sbx_numa_nodes(nodes, SBX_MAX_NODES), n = 0, i, k;
	char dir[256];

	for (i = 0; i < ns; i++) {
		for (k = -1; k < nn && n < max; k++) {
			struct sbx_hugepages *h = &out[n];

			if (k < 0)
				snprintf(dir, sizeof(dir), "/sys/kernel/mm/hugepages/hugepages-%llukB",
					 (unsigned long long)(sizes[i] / 1024));
			else
				snprintf(dir, sizeof(dir), "%s/node%d/hugepages/hugepages-%llukB", NODE_DIR,
					 nodes[k], (unsigned long long)(sizes[i] / 1024));
			if (access(dir, R_OK) != 0)
				continue;
			memset(h, 0, sizeof(*h));
			h->page_size = sizes[i];
			h->node = k < 0 ? -1 : nodes[k];
			h->nr = read_u64(dir, "nr_hugepages");
			h->free = read_u64(dir, "free_hugepages");
			h->surplus = read_u64(dir, "surplus_hugepages");
			h->resv = k < 0 ? read_u64(dir, "resv_hugepages") : 0;
			n++;
		}
	}
	return n;
}

uint64_t sbx_hugepages_available(uint64_t page_size, int node)
{
	struct sbx_hugepages h[SBX_MAX_HUGE_SIZES * (SBX_MAX_NODES + 1)];
	int n = sbx_hugepages_read(h, (int)(sizeof(h) / sizeof(h[0]))), i;
	uint64_t resv = 0, free = 0;
	bool found = false;

	for (i = 0; i < n; i++) {
		if (h[i].page_size != page_size)
			continue;
		if (h[i].node == -1)
			resv = h[i].resv;
		if (h[i].node == node) {
			free = h[i].free;
			found = true;
		}
	}
	/* a machine without node directories: node 0 is the machine */
	if (!found && node == 0)
		for (i = 0; i < n; i++)
			if (h[i].page_size == page_size && h[i].node == -1)
				free = h[i].free;
	return free > resv ? free - resv : 0;
}

uint64_t sbx_default_hugepage_size(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Hugepagesize: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

/* Parse a pagesize= mount option ("2M", "1G", "2048k"). @return bytes, 0 when absent. */
static uint64_t mount_pagesize(const char *opts)
{
	const char *p = strstr(opts, "pagesize=");
	char *end;
	uint64_t v;

	if (p == NULL)
		return 0;
	v = strtoull(p + 9, &end, 10);
	switch (toupper((unsigned char)*end)) {
	case 'K': return v << 10;
	case 'M': return v << 20;
	case 'G': return v << 30;
	default: return v;
	}
}

int sbx_hugetlbfs_mounts(struct sbx_hugetlbfs out[], int max)
{
	FILE *m = fopen("/proc/mounts", "r");
	char line[1024], dev[256], mnt[256], type[64], opts[512];
	int n = 0;

	if (m == NULL)
		return 0;
	while (n < max && fgets(line, sizeof(line), m) != NULL) {
		if (sscanf(line, "%255s %255s %63s %511s", dev, mnt, type, opts) != 4 ||
		    strcmp(type, "hugetlbfs") != 0)
			continue;
		snprintf(out[n].path, sizeof(out[n].path), "%s", mnt);
		out[n].page_size = mount_pagesize(opts);
		if (out[n].page_size == 0)
			out[n].page_size = sbx_default_hugepage_size();
		n++;
	}
	fclose(m);
	return n;
}

int sbx_prefix_hugefiles(const char *mount, const char *prefix, uint64_t *files, uint64_t *bytes)
{
	DIR *d = opendir(mount);
	struct dirent *e;
	size_t plen = strlen(prefix);
	char path[768];
	struct stat st;

	*files = 0;
	*bytes = 0;
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		/* EAL names them <prefix>map_<n> (eal_get_hugefile_path) */
		if (strncmp(e->d_name, prefix, plen) != 0 || strncmp(e->d_name + plen, "map_", 4) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", mount, e->d_name);
		if (stat(path, &st) != 0)
			continue;
		(*files)++;
		*bytes += (uint64_t)st.st_blocks * 512;
	}
	closedir(d);
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int sbx_memset_probe(uint64_t bytes, uint64_t page_size, int node, struct sbx_memset_result *r,
		     char *err, size_t errlen)
{
	int nodes[SBX_MAX_NODES], shift = 0, flags;
	uint64_t t0, map_len;
	void *p;

	memset(r, 0, sizeof(*r));
	if (page_size == 0)
		page_size = sbx_default_hugepage_size();
	if (page_size == 0 || (page_size & (page_size - 1)) != 0) {
		snprintf(err, errlen, "no hugepage size known");
		return -1;
	}
	while ((1ULL << shift) < page_size)
		shift++;
	r->page_size = page_size;
	r->bytes = bytes ? bytes : 1;
	map_len = (r->bytes + page_size - 1) / page_size * page_size;
	flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (shift << MAP_HUGE_SHIFT);
	/* hugetlb reserves every page at mmap time: ENOMEM here, never SIGBUS on touch */
	p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "mmap of %llu MiB on %llu KiB hugepages: %s (free pages of that size: %llu)",
			 (unsigned long long)(map_len >> 20), (unsigned long long)(page_size >> 10),
			 strerror(errno),
			 (unsigned long long)sbx_hugepages_available(page_size, node < 0 ? 0 : node));
		return -1;
	}
	if (node >= 0 && node < 64 && sbx_numa_nodes(nodes, SBX_MAX_NODES) > 1) {
		unsigned long mask = 1UL << node;

		/* preferred, not bound: a node short of pages must not turn into SIGBUS */
		syscall(SYS_mbind, p, (unsigned long)map_len, SBX_MPOL_PREFERRED, &mask, 64UL, 0U);
	}
	t0 = mono_ns();
	memset(p, 0x5a, r->bytes);
	r->ns = mono_ns() - t0;
	munmap(p, map_len);
	return 0;
}
