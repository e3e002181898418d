/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file hostinfo.h
 * What the host really has, read from sysfs and procfs (no DPDK): CPU lists, the NUMA node of
 * each CPU, hugepages per size and node, hugetlbfs mount points, the hugepage files of an EAL
 * file prefix, and a first-touch memset timed on fresh hugepages.
 *
 * Used by spanbox-primary (NUMA placement, hugepage check before the pools), spanbox-mgmt
 * (GET /api/v1/system) and tools/pooltime. Every function reads; none writes to sysfs.
 *
 * Sources: Documentation/admin-guide/mm/hugetlbpage.rst (nr_hugepages, free_hugepages,
 * resv_hugepages, surplus_hugepages; per node in /sys/devices/system/node/nodeN/hugepages),
 * Documentation/ABI/stable/sysfs-devices-node (nodeN/cpulist), sysfs-devices-system-cpu (the
 * cpuN/nodeM link), proc(5) (/proc/mounts, /proc/meminfo Hugepagesize).
 */
#ifndef SPANBOX_HOSTINFO_H
#define SPANBOX_HOSTINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SBX_MAX_CPUS 1024        /**< CPUs a cpu set can name (0..1023) */
#define SBX_MAX_NODES 64         /**< NUMA nodes looked at (0..63) */
#define SBX_SOCKET_UNKNOWN (-1)  /**< no CPU of the set has a known node */
#define SBX_SOCKET_MIXED (-2)    /**< the CPUs of the set are on more than one node */
#define SBX_MAX_HUGE_SIZES 4     /**< hugepage sizes looked at */

/** A set of CPU numbers. */
struct sbx_cpuset {
	uint64_t bits[SBX_MAX_CPUS / 64];
};

/**
 * Parse a CPU list as the kernel and EAL write it: "0-3,8,10-11" (no spaces, ascending or not).
 * @param s    NUL-terminated list; "" is an empty set.
 * @param set  receives the CPUs (cleared first).
 * @return number of CPUs in the set, or -1 on a syntax error or a CPU >= SBX_MAX_CPUS.
 */
int sbx_cpulist_parse(const char *s, struct sbx_cpuset *set);

/** @return true when @p cpu is in @p set. */
bool sbx_cpuset_has(const struct sbx_cpuset *set, unsigned int cpu);

/**
 * Write @p set as a canonical CPU list ("0-3,8"; "" when empty) into @p buf (always
 * NUL-terminated; truncated when @p len is too small).
 */
void sbx_cpulist_format(const struct sbx_cpuset *set, char *buf, size_t len);

/**
 * The CPUs the kernel has online (/sys/devices/system/cpu/online; test hook: the environment's
 * SBX_TEST_ONLINE_CPUS, a CPU list, stands in for that file).
 * @return the number of CPUs in @p set, or -1 when the file is unreadable or not a CPU list.
 */
int sbx_cpus_online(struct sbx_cpuset *set);

/**
 * The value of kernel parameter @p key ("isolcpus", "nohz_full", "rcu_nocbs") in the kernel
 * command line @p cmdline (/proc/cmdline's text): the last "key=value" word wins, as in the
 * kernel. @return 0 with the value in @p out, -1 when the key is absent (out is "").
 */
int sbx_cmdline_param(const char *cmdline, const char *key, char *out, size_t len);

/**
 * NUMA node of a CPU: the nodeM link in /sys/devices/system/cpu/cpuN/.
 * @return M, or -1 when the CPU does not exist or the kernel has no NUMA information.
 */
int sbx_cpu_node(unsigned int cpu);

/**
 * The NUMA socket a set of CPUs is on.
 * @param set    the CPUs (e.g. those of eal.cpus, where an lcore floats).
 * @param nodes  if not NULL, receives the nodes met as a list ("0", "0,1"; "" when none).
 * @return the node when every CPU with a known node is on it; SBX_SOCKET_MIXED when they span
 *         several; SBX_SOCKET_UNKNOWN when no CPU has a known node (then a machine without NUMA
 *         information: callers treat it as socket 0).
 */
int sbx_cpuset_socket(const struct sbx_cpuset *set, char *nodes, size_t len);

/**
 * NUMA nodes of the machine (/sys/devices/system/node/nodeN), ascending.
 * @return number written to @p ids (at most @p max); 0 when the directory is missing.
 */
int sbx_numa_nodes(int ids[], int max);

/** CPUs of node @p node (its cpulist file) into @p buf. @return 0, or -1 when unreadable. */
int sbx_numa_node_cpus(int node, char *buf, size_t len);

/** Hugepages of one size, on one node (node -1: the whole machine, /sys/kernel/mm/hugepages). */
struct sbx_hugepages {
	uint64_t page_size; /**< bytes */
	int node;           /**< NUMA node, -1 for the machine-wide counters */
	uint64_t nr;        /**< nr_hugepages: the pool of this size */
	uint64_t free;      /**< free_hugepages: not handed out (includes reserved ones) */
	uint64_t resv;      /**< resv_hugepages: promised to mappings, not yet faulted (machine-wide only; 0 per node) */
	uint64_t surplus;   /**< surplus_hugepages */
};

/**
 * Hugepage counters: one entry per size machine-wide (node -1) and one per size and node.
 * @return entries written to @p out (at most @p max), sizes ascending, machine-wide first per size.
 */
int sbx_hugepages_read(struct sbx_hugepages out[], int max);

/**
 * Free hugepages of @p page_size that a new mapping on @p node can still get: free minus reserved
 * (the reservation is machine-wide, so it is taken off every node: conservative).
 * @param node  NUMA node, or -1 for the machine.
 * @return pages; 0 when the size or node does not exist.
 */
uint64_t sbx_hugepages_available(uint64_t page_size, int node);

/** A mounted hugetlbfs. */
struct sbx_hugetlbfs {
	char path[256];     /**< mount point */
	uint64_t page_size; /**< bytes (the pagesize= option, else the default hugepage size) */
};

/** hugetlbfs mounts of /proc/mounts. @return entries written to @p out (at most @p max). */
int sbx_hugetlbfs_mounts(struct sbx_hugetlbfs out[], int max);

/** The default hugepage size (/proc/meminfo Hugepagesize), bytes; 0 when unknown. */
uint64_t sbx_default_hugepage_size(void);

/**
 * Hugepage files of an EAL file prefix in one hugetlbfs mount: "<mount>/<prefix>map_*".
 * @param files  receives how many there are.
 * @param bytes  receives the memory they hold (st_blocks x 512: a sparse file counts its pages).
 * @return 0, or -1 when the mount point cannot be read.
 */
int sbx_prefix_hugefiles(const char *mount, const char *prefix, uint64_t *files, uint64_t *bytes);

/** What sbx_memset_probe() measured. */
struct sbx_memset_result {
	uint64_t bytes;     /**< bytes set (the request; the mapping is rounded up to whole pages, and
				 the kernel clears every page it hands out, the last one whole) */
	uint64_t page_size; /**< hugepage size used, bytes */
	uint64_t ns;        /**< time of the memset alone (first touch: page faults + the kernel's
				 clearing of each new page + the stores), CLOCK_MONOTONIC ns */
};

/**
 * Time a first-touch memset of @p bytes on fresh hugepages: mmap(MAP_ANONYMOUS | MAP_HUGETLB of
 * @p page_size, rounded up to whole pages), bound to @p node (mbind MPOL_BIND) when the machine has more than one node,
 * memset the whole area, munmap it. No page is touched before the timed memset. The pages are
 * returned at once; this needs @p bytes of free hugepages for the duration.
 * @param page_size  0 for the default hugepage size.
 * @param node       NUMA node for the pages, -1 for no binding.
 * @return 0, or -1 with the reason in @p err (no such page size, not enough free hugepages).
 */
int sbx_memset_probe(uint64_t bytes, uint64_t page_size, int node, struct sbx_memset_result *r,
		     char *err, size_t errlen);

#endif
