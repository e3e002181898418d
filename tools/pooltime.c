/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spanbox-pooltime: how long rte_pktmbuf_pool_create() of N mbufs takes, beside the memory bound
 * of the same work: a first-touch memset of the pool's object bytes on fresh hugepages (NOTES
 * section 4: populating a pool is the first touch of every page plus per-object init).
 *
 *   spanbox-pooltime [--mbufs N[,N...]] [--cache N] [--runs N] [--prefault] [--json]
 *
 * Its own EAL (--in-memory: no hugepage files, no other process can attach; --no-pci; main lcore
 * floating on the CPUs this process may use). For each N, --runs times (median reported):
 *   1. memset: mmap MAP_HUGETLB of the estimated object bytes, memset, munmap (shared/hostinfo.c);
 *   2. create: rte_pktmbuf_pool_create(N, cache, 0, RTE_MBUF_DEFAULT_BUF_SIZE) timed, then freed.
 * Before the runs, one untimed warm-up memset of the largest size (reported): in a virtual machine
 * the very first touch of guest memory also makes the host back it, which costs several times more
 * than anything measured here and would land on whichever measurement comes first.
 * Without --prefault EAL maps hugepages as the pool asks for them, so creation includes their
 * first touch (the kernel clears each page on its first fault) like the memset does; with
 * --prefault EAL reserves enough memory at init (-m), as spanbox-primary does with
 * eal.socket_mem_mb, and creation runs on pages already cleared.
 *
 * Exit status: 0; 1 when EAL or a pool cannot be had; 2 on bad arguments.
 */
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "spanbox/hostinfo.h"
#include "spanbox/poolsize.h"
#include "spanbox/pool_mem.h"
#include "spanbox/shm.h"

#define MAX_SIZES 16
#define MAX_RUNS 50

static void usage(FILE *f)
{
	fprintf(f,
		"usage: spanbox-pooltime [--mbufs N[,N...]] [--cache N] [--runs N] [--prefault] [--json]\n"
		"Time rte_pktmbuf_pool_create() of N mbufs (default size) against a first-touch memset of\n"
		"the same bytes on fresh hugepages.\n"
		"  --mbufs LIST  mbuf counts, comma separated, K and M suffixes (default 262144,1048576,2097152)\n"
		"  --cache N     per-lcore cache (default 256)\n"
		"  --runs N      measurements per size, the median is reported (default 3)\n"
		"  --prefault    EAL reserves the memory at init (-m): creation on pages already cleared\n"
		"  --json        print JSON\n");
}

/* "256K,1M,2097152" into @p v. @return count, -1 on error. */
static int parse_sizes(const char *s, uint32_t v[], int max)
{
	int n = 0;

	while (*s) {
		char *end;
		unsigned long long x = strtoull(s, &end, 10);

		if (end == s || n == max)
			return -1;
		if (*end == 'K' || *end == 'k')
			x <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			x <<= 20, end++;
		if (x < 1 || x > (1ULL << 28) || (*end != ',' && *end != '\0'))
			return -1;
		v[n++] = (uint32_t)x;
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median of @p n values (not reordered). */
static uint64_t median(const uint64_t *v, int n)
{
	uint64_t s[MAX_RUNS];

	memcpy(s, v, (size_t)n * sizeof(*v));
	qsort(s, (size_t)n, sizeof(*s), cmp_u64);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}


int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mbufs", required_argument, NULL, 'n' }, { "cache", required_argument, NULL, 'c' },
		{ "runs", required_argument, NULL, 'r' },  { "prefault", no_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },        { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t sizes[MAX_SIZES] = { 262144, 1048576, 2097152 }, cache = 256;
	int nsizes = 3, runs = 3, c, i, r, socket;
	bool prefault = false, json = false;
	char prefix[64], lcores[300], cpus[256], mem[32], *eal_argv[16];
	uint64_t page_sz = sbx_default_hugepage_size(), biggest = 0, warm_bytes = 0, warm_ns = 0;
	struct sbx_cpuset set;
	cpu_set_t aff;
	cJSON *root = NULL, *results = NULL;
	int eal_argc = 0;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			nsizes = parse_sizes(optarg, sizes, MAX_SIZES);
			if (nsizes <= 0) {
				fprintf(stderr, "spanbox-pooltime: --mbufs: expected N[,N...] (1..268435456, K/M suffixes)\n");
				return 2;
			}
			break;
		case 'c':
			cache = (uint32_t)atoi(optarg);
			if (cache > RTE_MEMPOOL_CACHE_MAX_SIZE) {
				fprintf(stderr, "spanbox-pooltime: --cache: 0..%d\n", RTE_MEMPOOL_CACHE_MAX_SIZE);
				return 2;
			}
			break;
		case 'r':
			runs = atoi(optarg);
			if (runs < 1 || runs > MAX_RUNS) {
				fprintf(stderr, "spanbox-pooltime: --runs: 1..%d\n", MAX_RUNS);
				return 2;
			}
			break;
		case 'p': prefault = true; break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || page_sz == 0) {
		usage(stderr);
		return 2;
	}

	/* EAL: private, in memory, on the CPUs we may use */
	memset(&set, 0, sizeof(set));
	if (sched_getaffinity(0, sizeof(aff), &aff) == 0)
		for (i = 0; i < CPU_SETSIZE && i < SBX_MAX_CPUS; i++)
			if (CPU_ISSET(i, &aff))
				set.bits[i / 64] |= 1ULL << (i % 64);
	sbx_cpulist_format(&set, cpus, sizeof(cpus));
	snprintf(prefix, sizeof(prefix), "--file-prefix=pooltime%d", (int)getpid());
	snprintf(lcores, sizeof(lcores), "--lcores=0@(%s)", cpus);
	eal_argv[eal_argc++] = argv[0];
	eal_argv[eal_argc++] = prefix;
	eal_argv[eal_argc++] = "--in-memory";
	eal_argv[eal_argc++] = "--no-pci";
	eal_argv[eal_argc++] = "--no-telemetry";
	eal_argv[eal_argc++] = lcores;
	eal_argv[eal_argc++] = "--log-level=lib.eal:notice";
	if (prefault) {
		struct sbx_pool_estimate e;

		for (i = 0; i < nsizes; i++) {
			sbx_pool_estimate(sizes[i], cache, RTE_MBUF_DEFAULT_BUF_SIZE, page_sz, &e);
			biggest = RTE_MAX(biggest, e.total);
		}
		snprintf(mem, sizeof(mem), "-m%llu", (unsigned long long)((biggest >> 20) + 64));
		eal_argv[eal_argc++] = mem;
	}
	eal_argv[eal_argc] = NULL;
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		fprintf(stderr, "spanbox-pooltime: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	socket = (int)rte_socket_id();
	if (socket < 0 || socket >= RTE_MAX_NUMA_NODES)
		socket = 0;
	/* warm-up: touch (then release) as many fresh hugepages as the largest memset takes */
	{
		struct sbx_memset_result wr = { 0, 0, 0 };
		struct sbx_pool_estimate e;
		uint64_t most = 0;
		char err[256];

		for (i = 0; i < nsizes; i++) {
			sbx_pool_estimate(sizes[i], cache, RTE_MBUF_DEFAULT_BUF_SIZE, page_sz, &e);
			most = RTE_MAX(most, e.obj_bytes);
		}
		if (sbx_memset_probe(most, page_sz, socket, &wr, err, sizeof(err)) != 0) {
			fprintf(stderr, "spanbox-pooltime: warm-up memset: %s\n", err);
			return 1;
		}
		warm_bytes = wr.bytes;
		warm_ns = wr.ns;
	}
	if (json) {
		root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "mode", prefault ? "prefault" : "fresh");
		cJSON_AddNumberToObject(root, "cache", cache);
		cJSON_AddNumberToObject(root, "runs", runs);
		cJSON_AddNumberToObject(root, "data_room", RTE_MBUF_DEFAULT_BUF_SIZE);
		cJSON_AddNumberToObject(root, "warmup_memset_bytes", (double)warm_bytes);
		cJSON_AddNumberToObject(root, "warmup_memset_ms", warm_ns / 1e6);
		results = cJSON_AddArrayToObject(root, "results");
	} else {
		printf("# EAL --in-memory, %s; mbufs of %u B data room, cache %u; median of %d runs; CPUs %s\n",
		       prefault ? "memory reserved at init (-m): creation on pages already cleared"
				: "memory mapped on demand: creation includes the first touch of its pages",
		       RTE_MBUF_DEFAULT_BUF_SIZE, cache, runs, cpus);
		printf("# warm-up (untimed in the results): first-touch memset of %.1f MiB: %.1f ms\n",
		       warm_bytes / 1048576.0, warm_ns / 1e6);
		printf("%10s %10s %10s %12s %10s %12s %12s %8s\n", "mbufs", "obj B", "pool MiB", "fresh MiB",
		       "page KiB", "create ms", "memset ms", "ratio");
	}
	for (i = 0; i < nsizes; i++) {
		uint64_t create[MAX_RUNS], set_ns[MAX_RUNS], fresh = 0, cm, mm;
		struct sbx_pool_estimate e;
		struct sbx_pool_mem mem_sum = { 0, 0 };
		char err[256], name[RTE_MEMPOOL_NAMESIZE];

		sbx_pool_estimate(sizes[i], cache, RTE_MBUF_DEFAULT_BUF_SIZE, page_sz, &e);
		for (r = 0; r < runs; r++) {
			struct sbx_memset_result mr;
			struct rte_mempool *mp;
			uint64_t t0, h0;

			if (sbx_memset_probe(e.obj_bytes, page_sz, socket, &mr, err, sizeof(err)) != 0) {
				fprintf(stderr, "spanbox-pooltime: %u mbufs: memset: %s\n", sizes[i], err);
				return 1;
			}
			set_ns[r] = mr.ns;
			snprintf(name, sizeof(name), "pt_%u_%d", sizes[i], r);
			h0 = sbx_heap_total_bytes(socket);
			t0 = sbx_now_ns();
			mp = rte_pktmbuf_pool_create(name, sizes[i], cache, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
			create[r] = sbx_now_ns() - t0;
			if (mp == NULL) {
				fprintf(stderr, "spanbox-pooltime: %u mbufs: pool: %s\n", sizes[i], rte_strerror(rte_errno));
				return 1;
			}
			fresh = sbx_heap_total_bytes(socket) - h0;
			mem_sum = sbx_pool_mem(mp);
			rte_mempool_free(mp);
		}
		cm = median(create, runs);
		mm = median(set_ns, runs);
		if (json) {
			cJSON *o = cJSON_CreateObject(), *a, *b;

			cJSON_AddNumberToObject(o, "mbufs", sizes[i]);
			cJSON_AddNumberToObject(o, "obj_size", (double)e.obj_size);
			cJSON_AddNumberToObject(o, "pool_bytes", (double)mem_sum.bytes);
			cJSON_AddNumberToObject(o, "memset_bytes", (double)e.obj_bytes);
			cJSON_AddNumberToObject(o, "fresh_bytes", (double)fresh);
			cJSON_AddNumberToObject(o, "page_size_kb", (double)(mem_sum.page_sz >> 10));
			cJSON_AddNumberToObject(o, "create_ms", cm / 1e6);
			cJSON_AddNumberToObject(o, "memset_ms", mm / 1e6);
			cJSON_AddNumberToObject(o, "ratio", mm ? (double)cm / (double)mm : 0);
			a = cJSON_AddArrayToObject(o, "create_ms_runs");
			b = cJSON_AddArrayToObject(o, "memset_ms_runs");
			for (r = 0; r < runs; r++) {
				cJSON_AddItemToArray(a, cJSON_CreateNumber(create[r] / 1e6));
				cJSON_AddItemToArray(b, cJSON_CreateNumber(set_ns[r] / 1e6));
			}
			cJSON_AddItemToArray(results, o);
		} else {
			printf("%10u %10llu %10.1f %12.1f %10llu %12.1f %12.1f %8.2f\n", sizes[i],
			       (unsigned long long)e.obj_size, mem_sum.bytes / 1048576.0, fresh / 1048576.0,
			       (unsigned long long)(mem_sum.page_sz >> 10), cm / 1e6, mm / 1e6,
			       mm ? (double)cm / (double)mm : 0);
		}
	}
	if (json) {
		char *s = cJSON_Print(root);

		if (s != NULL)
			printf("%s\n", s);
		free(s);
		cJSON_Delete(root);
	}
	rte_eal_cleanup();
	{ /* EAL leaves the (empty) runtime directory of our private prefix behind */
		char dir[64];

		snprintf(dir, sizeof(dir), "/var/run/dpdk/pooltime%d", (int)getpid());
		rmdir(dir);
	}
	return 0;
}
