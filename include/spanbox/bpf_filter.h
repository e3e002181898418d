/* SPDX-License-Identifier: BSD-3-Clause */
/* tcpdump-syntax filters for mirror sessions, run by DPDK's BPF library. */
#ifndef SPANBOX_BPF_FILTER_H
#define SPANBOX_BPF_FILTER_H

#include <stddef.h>

#include <rte_bpf.h>

/**
 * Compile @p filter (tcpdump syntax, Ethernet link type) with libpcap's pcap_compile(), convert the
 * classic BPF to eBPF with rte_bpf_convert() and load it with rte_bpf_load() (JIT where available).
 * Needs an initialized EAL (rte_bpf_convert allocates with rte_malloc). Some filters libpcap accepts
 * use packet metadata rte_bpf_convert cannot express (e.g. "inbound", "ifindex"): they fail here.
 * @return the program (free with rte_bpf_destroy), or NULL with "\"<filter>\": <reason>" in @p err.
 */
struct rte_bpf *sbx_filter_load(const char *filter, char *err, size_t errlen);

struct sbx_config;

/**
 * Load (then drop) every mirror filter of @p cfg with sbx_filter_load(): what a worker will do,
 * checked once before the config runs (at start, and for each change at run time).
 * @return 0, or -1 with "mirrors[i].filter: \"<filter>\": <reason>" in @p err.
 */
int sbx_filters_check(const struct sbx_config *cfg, char *err, size_t errlen);

#endif
