/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spanbox-memprobe: the host-to-host copy ceiling (docs/DIAGNOSTICS.md, NOTES section 1).
 *
 * Two buffers of --size MiB (default 256) on 2 MiB hugepages (4 KiB pages with a warning when
 * not enough are free, or with --no-hugepages), touched before timing. Measured, each as the median of --runs (default 5) timed
 * runs after one untimed warm-up, in GB/s (1e9 bytes/s; a copy counts its bytes once):
 *   copy      memcpy, in calls of 2 MiB (below glibc's non-temporal threshold: a plain,
 *             cache-allocating copy, as a forwarder copying buffers would do)
 *   nt-copy   16-byte SSE2 (or 32-byte AVX when the CPU has it) loads + non-temporal stores, sfence
 *   read      sum of 64-bit loads
 *   write     memset, in calls of 2 MiB
 * each with 1 thread and with --threads N (default: the CPUs this process may run on), every
 * thread on its own slice, slices split on 2 MiB boundaries (no two threads share a page or a
 * cache line). Plain pthreads and mmap, no DPDK: it runs beside a running appliance (and
 * competes with it for memory bandwidth and cores).
 *
 *   spanbox-memprobe [--size MiB] [--threads N] [--runs N] [--no-hugepages] [--json]
 * Exit status: 0; 1 when memory cannot be had or a copy is wrong; 2 on bad arguments.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif

#define HP (2u << 20)          /* 2 MiB: hugepage size, slice and call granularity */
#define MAX_THREADS 1024
#define MAX_RUNS 1000
#define MAX_SIZE_MIB (1u << 20) /* 1 TiB per buffer */

enum op { OP_COPY, OP_NTCOPY, OP_READ, OP_WRITE, OP_QUIT };

static const char *const op_name[] = {"copy", "nt-copy", "read", "write"};
static const char *const op_method[] = {"memcpy", "non-temporal stores", "64-bit loads", "memset"};

struct worker {
	pthread_t tid;
	int id;
	size_t off, len;  /* this thread's slice when several threads run */
	uint64_t sink;    /* read result, so the loads are not optimised away */
	char pad[64];
};

static struct {
	uint8_t *src, *dst;
	size_t size;      /* bytes per buffer, a multiple of 2 MiB */
	bool huge;
	int nthreads;
	struct worker *w;
	pthread_barrier_t start, done;
	enum op op;
	int active;       /* threads that work in this run (1 or nthreads) */
	uint8_t fill;     /* memset value of this run */
	const char *simd; /* "avx", "sse2" or "none" */
	bool avx;
} P;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#if HAVE_X86
/* len: a multiple of 64; src, dst: 16-byte aligned */
static void nt_copy_sse2(uint8_t *dst, const uint8_t *src, size_t len)
{
	__m128i *d = (__m128i *)dst;
	const __m128i *s = (const __m128i *)src;
	size_t i, n = len / 16;

	for (i = 0; i < n; i += 4) {
		__m128i a = _mm_load_si128(s + i), b = _mm_load_si128(s + i + 1);
		__m128i c = _mm_load_si128(s + i + 2), e = _mm_load_si128(s + i + 3);

		_mm_stream_si128(d + i, a);
		_mm_stream_si128(d + i + 1, b);
		_mm_stream_si128(d + i + 2, c);
		_mm_stream_si128(d + i + 3, e);
	}
	_mm_sfence();
}

/* len: a multiple of 128; src, dst: 32-byte aligned. Only called when the CPU (and OS) has AVX. */
__attribute__((target("avx")))
static void nt_copy_avx(uint8_t *dst, const uint8_t *src, size_t len)
{
	__m256i *d = (__m256i *)dst;
	const __m256i *s = (const __m256i *)src;
	size_t i, n = len / 32;

	for (i = 0; i < n; i += 4) {
		__m256i a = _mm256_load_si256(s + i), b = _mm256_load_si256(s + i + 1);
		__m256i c = _mm256_load_si256(s + i + 2), e = _mm256_load_si256(s + i + 3);

		_mm256_stream_si256(d + i, a);
		_mm256_stream_si256(d + i + 1, b);
		_mm256_stream_si256(d + i + 2, c);
		_mm256_stream_si256(d + i + 3, e);
	}
	_mm_sfence();
}
#endif

static uint64_t read_sum(const uint8_t *buf, size_t len)
{
	const uint64_t *p = (const uint64_t *)buf;
	uint64_t a = 0, b = 0, c = 0, d = 0;
	size_t i, n = len / 8;

	for (i = 0; i < n; i += 4) {
		a += p[i];
		b += p[i + 1];
		c += p[i + 2];
		d += p[i + 3];
	}
	return a + b + c + d;
}

static void work(struct worker *w, size_t off, size_t len)
{
	size_t o;

	switch (P.op) {
	case OP_COPY:
		for (o = off; o < off + len; o += HP)
			memcpy(P.dst + o, P.src + o, HP);
		break;
	case OP_NTCOPY:
#if HAVE_X86
		if (P.avx)
			nt_copy_avx(P.dst + off, P.src + off, len);
		else
			nt_copy_sse2(P.dst + off, P.src + off, len);
#endif
		break;
	case OP_READ:
		w->sink += read_sum(P.src + off, len);
		break;
	case OP_WRITE:
		for (o = off; o < off + len; o += HP)
			memset(P.dst + o, P.fill, HP);
		break;
	case OP_QUIT:
		break;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (;;) {
		pthread_barrier_wait(&P.start);
		if (P.op == OP_QUIT)
			return NULL;
		if (P.active == 1 && w->id == 0)
			work(w, 0, P.size);
		else if (P.active > 1 && w->id < P.active)
			work(w, w->off, w->len);
		pthread_barrier_wait(&P.done);
	}
}

/* One timed pass of @op on @active threads; seconds. */
static double pass(enum op op, int active, uint8_t fill)
{
	double t0, t1;

	P.op = op;
	P.active = active;
	P.fill = fill;
	t0 = now();
	pthread_barrier_wait(&P.start);
	pthread_barrier_wait(&P.done);
	t1 = now();
	return t1 - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[MAX_RUNS];

	memcpy(s, v, sizeof(double) * (size_t)n);
	qsort(s, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* mmap @size bytes, 2 MiB aligned: on 2 MiB hugepages when @huge, else normal pages. */
static uint8_t *map_buf(size_t size, bool huge)
{
	uint8_t *raw, *p;
	size_t head;

	if (huge) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (21 << MAP_HUGE_SHIFT), -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	raw = mmap(NULL, size + HP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	p = (uint8_t *)(((uintptr_t)raw + HP - 1) & ~(uintptr_t)(HP - 1));
	head = (size_t)(p - raw);
	if (head)
		munmap(raw, head);
	if (HP - head)
		munmap(p + size, HP - head);
	madvise(p, size, MADV_NOHUGEPAGE); /* really 4 KiB pages, even with THP "always" */
	return p;
}

/* MemAvailable from /proc/meminfo, bytes; 0 when unknown. */
static uint64_t mem_available(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

static int alloc_buffers(bool want_huge)
{
	uint64_t avail;

	if (want_huge) {
		P.src = map_buf(P.size, true);
		P.dst = P.src ? map_buf(P.size, true) : NULL;
		if (P.src && P.dst) {
			P.huge = true;
			return 0;
		}
		if (P.src)
			munmap(P.src, P.size);
		fprintf(stderr,
			"spanbox-memprobe: warning: not enough free 2 MiB hugepages for 2 x %zu MiB (%s); "
			"using 4 KiB pages, figures will be lower\n",
			P.size >> 20, strerror(errno));
	}
	avail = mem_available();
	if (avail && 2 * (uint64_t)P.size > avail / 10 * 8) {
		fprintf(stderr, "spanbox-memprobe: 2 x %zu MiB is more than 80 %% of the available memory "
				"(%llu MiB): choose a smaller --size\n",
			P.size >> 20, (unsigned long long)(avail >> 20));
		return -1;
	}
	P.src = map_buf(P.size, false);
	P.dst = P.src ? map_buf(P.size, false) : NULL;
	if (!P.src || !P.dst) {
		fprintf(stderr, "spanbox-memprobe: cannot map 2 x %zu MiB: %s\n", P.size >> 20,
			strerror(errno));
		return -1;
	}
	P.huge = false;
	return 0;
}

static int parse_int(const char *opt, const char *s, long lo, long hi, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	if (errno || end == s || *end || *v < lo || *v > hi) {
		fprintf(stderr, "spanbox-memprobe: %s: '%s' is not an integer in %ld..%ld\n", opt, s, lo, hi);
		return -1;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: spanbox-memprobe [--size MiB] [--threads N] [--runs N] [--no-hugepages] [--json]\n"
		"Measure host memory copy, non-temporal copy, read and write bandwidth (GB/s, median of runs)\n"
		"with 1 and N threads, on two buffers of 2 MiB hugepages.\n"
		"  --size MiB    size of each buffer, rounded up to 2 MiB (default 256)\n"
		"  --threads N   threads of the N-thread figures (default: usable CPUs)\n"
		"  --runs N      timed runs per figure, the median is reported (default 5)\n"
		"  --no-hugepages  use 4 KiB pages (to see what hugepages gain)\n"
		"  --json        print JSON\n");
}

struct result {
	enum op op;
	int threads;
	double gbps;
	double runs[MAX_RUNS];
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"size", required_argument, NULL, 's'},
		{"threads", required_argument, NULL, 't'},
		{"runs", required_argument, NULL, 'r'},
		{"json", no_argument, NULL, 'j'},
		{"no-hugepages", no_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static struct result res[8];
	long size_mib = 256, threads = 0, runs = 5;
	bool json = false, clamped = false, want_huge = true;
	int c, i, r, nres = 0, rc = 0, ncpu;
	size_t chunks, base, rem, off;
	cpu_set_t set;
	double t_start = now(), sec;

	while ((c = getopt_long(argc, argv, "s:t:r:jnh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_int("--size", optarg, 1, MAX_SIZE_MIB, &size_mib))
				return 2;
			break;
		case 't':
			if (parse_int("--threads", optarg, 1, MAX_THREADS, &threads))
				return 2;
			break;
		case 'r':
			if (parse_int("--runs", optarg, 1, MAX_RUNS, &runs))
				return 2;
			break;
		case 'j': json = true; break;
		case 'n': want_huge = false; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "spanbox-memprobe: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	ncpu = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
	if (ncpu < 1)
		ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
	if (!threads)
		threads = ncpu > MAX_THREADS ? MAX_THREADS : ncpu;
	P.size = ((size_t)size_mib << 20) + HP - 1;
	P.size -= P.size % HP;
	chunks = P.size / HP;
	if ((size_t)threads > chunks) { /* at least one 2 MiB slice per thread */
		threads = (long)chunks;
		clamped = true;
	}
	P.nthreads = (int)threads;
#if HAVE_X86
	__builtin_cpu_init();
	P.avx = __builtin_cpu_supports("avx");
	P.simd = P.avx ? "avx" : "sse2";
#else
	P.simd = "none";
#endif

	if (alloc_buffers(want_huge) != 0)
		return 1;
	/* first touch, outside any timing: every page is faulted in and holds data */
	memset(P.src, 0x5a, P.size);
	memset(P.dst, 0, P.size);

	P.w = calloc((size_t)P.nthreads, sizeof(*P.w));
	if (!P.w || pthread_barrier_init(&P.start, NULL, (unsigned)P.nthreads + 1) ||
	    pthread_barrier_init(&P.done, NULL, (unsigned)P.nthreads + 1)) {
		fprintf(stderr, "spanbox-memprobe: out of memory\n");
		return 1;
	}
	/* slices: whole 2 MiB chunks, the first (chunks % N) threads get one more */
	base = chunks / (size_t)P.nthreads;
	rem = chunks % (size_t)P.nthreads;
	for (i = 0, off = 0; i < P.nthreads; i++) {
		P.w[i].id = i;
		P.w[i].off = off;
		P.w[i].len = (base + ((size_t)i < rem)) * HP;
		off += P.w[i].len;
		if (pthread_create(&P.w[i].tid, NULL, worker_main, &P.w[i])) {
			fprintf(stderr, "spanbox-memprobe: cannot start thread %d\n", i);
			return 1;
		}
	}

	for (int op = OP_COPY; op <= OP_WRITE; op++) {
		if (op == OP_NTCOPY && !HAVE_X86)
			continue;
		for (int t = 0; t < 2; t++) {
			int nt = t ? P.nthreads : 1;

			if (t && P.nthreads == 1)
				continue;
			res[nres].op = (enum op)op;
			res[nres].threads = nt;
			pass((enum op)op, nt, 0x11); /* warm-up */
			for (r = 0; r < runs; r++) {
				sec = pass((enum op)op, nt, (uint8_t)(r * 2 + 1));
				res[nres].runs[r] = (double)P.size / (sec > 0 ? sec : 1e-9) / 1e9;
			}
			res[nres].gbps = median(res[nres].runs, (int)runs);
			if ((op == OP_COPY || op == OP_NTCOPY) && memcmp(P.src, P.dst, P.size)) {
				fprintf(stderr, "spanbox-memprobe: %s with %d threads: destination differs from source\n",
					op_name[op], nt);
				rc = 1;
			}
			nres++;
		}
	}
	P.op = OP_QUIT;
	pthread_barrier_wait(&P.start);
	for (i = 0; i < P.nthreads; i++)
		pthread_join(P.w[i].tid, NULL);

	if (json) {
		cJSON *root = cJSON_CreateObject(), *a, *o, *rr;
		bool aligned = true;
		char *s;

		cJSON_AddNumberToObject(root, "size_mib", (double)(P.size >> 20));
		cJSON_AddNumberToObject(root, "size_bytes", (double)P.size);
		cJSON_AddBoolToObject(root, "hugepages", P.huge);
		cJSON_AddNumberToObject(root, "page_bytes", P.huge ? HP : (double)sysconf(_SC_PAGESIZE));
		cJSON_AddNumberToObject(root, "runs", (double)runs);
		cJSON_AddNumberToObject(root, "threads", P.nthreads);
		cJSON_AddNumberToObject(root, "cpus", ncpu);
		cJSON_AddBoolToObject(root, "threads_clamped_to_slices", clamped);
		cJSON_AddStringToObject(root, "simd", P.simd);
		cJSON_AddStringToObject(root, "unit", "GB/s (1e9 bytes/s), median of runs");
		a = cJSON_AddArrayToObject(root, "split");
		for (i = 0; i < P.nthreads; i++) {
			o = cJSON_CreateObject();
			cJSON_AddNumberToObject(o, "thread", i);
			cJSON_AddNumberToObject(o, "offset", (double)P.w[i].off);
			cJSON_AddNumberToObject(o, "bytes", (double)P.w[i].len);
			aligned = aligned && P.w[i].off % HP == 0 && P.w[i].len % HP == 0;
			cJSON_AddItemToArray(a, o);
		}
		cJSON_AddBoolToObject(root, "split_aligned_2mib", aligned);
		a = cJSON_AddArrayToObject(root, "results");
		for (i = 0; i < nres; i++) {
			o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "test", op_name[res[i].op]);
			cJSON_AddStringToObject(o, "method", res[i].op == OP_NTCOPY ? P.simd : op_method[res[i].op]);
			cJSON_AddNumberToObject(o, "threads", res[i].threads);
			cJSON_AddNumberToObject(o, "gbps", res[i].gbps);
			rr = cJSON_AddArrayToObject(o, "runs_gbps");
			for (r = 0; r < runs; r++)
				cJSON_AddItemToArray(rr, cJSON_CreateNumber(res[i].runs[r]));
			cJSON_AddItemToArray(a, o);
		}
		cJSON_AddNumberToObject(root, "elapsed_s", now() - t_start);
		s = cJSON_Print(root);
		if (s)
			printf("%s\n", s);
		free(s);
		cJSON_Delete(root);
	} else {
		printf("buffers: 2 x %zu MiB on %s, %d threads (of %d CPUs), %s non-temporal stores, "
		       "median of %ld runs\n",
		       P.size >> 20, P.huge ? "2 MiB hugepages" : "4 KiB pages", P.nthreads, ncpu, P.simd, runs);
		printf("thread slices (2 MiB aligned):");
		for (i = 0; i < P.nthreads && i < 8; i++)
			printf(" %d@%zuMiB+%zuMiB", i, P.w[i].off >> 20, P.w[i].len >> 20);
		printf("%s\n\n", P.nthreads > 8 ? " ..." : "");
		printf("%-8s %-20s %7s %10s %10s %10s\n", "test", "method", "threads", "GB/s", "min", "max");
		for (i = 0; i < nres; i++) {
			double lo = res[i].runs[0], hi = res[i].runs[0];

			for (r = 1; r < runs; r++) {
				lo = res[i].runs[r] < lo ? res[i].runs[r] : lo;
				hi = res[i].runs[r] > hi ? res[i].runs[r] : hi;
			}
			printf("%-8s %-20s %7d %10.2f %10.2f %10.2f\n", op_name[res[i].op],
			       res[i].op == OP_NTCOPY ? P.simd : op_method[res[i].op], res[i].threads,
			       res[i].gbps, lo, hi);
		}
		printf("\n(GB/s = 1e9 bytes/s; copy figures count each byte once; %.1f s)\n", now() - t_start);
	}
	munmap(P.src, P.size);
	munmap(P.dst, P.size);
	pthread_barrier_destroy(&P.start);
	pthread_barrier_destroy(&P.done);
	free(P.w);
	return rc;
}
