/* SPDX-License-Identifier: BSD-3-Clause */
/* tcpdump filter -> classic BPF (libpcap) -> eBPF (rte_bpf_convert) -> loaded rte_bpf. */
#include <pcap/pcap.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "spanbox/bpf_filter.h"

struct rte_bpf *sbx_filter_load(const char *filter, char *err, size_t errlen)
{
	struct bpf_program prog;
	struct rte_bpf_prm *prm;
	struct rte_bpf *bpf;
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);

	if (p == NULL) {
		snprintf(err, errlen, "\"%s\": out of memory", filter);
		return NULL;
	}
	if (pcap_compile(p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) != 0) {
		snprintf(err, errlen, "\"%s\": %s", filter, pcap_geterr(p));
		pcap_close(p);
		return NULL;
	}
	prm = rte_bpf_convert(&prog);
	pcap_freecode(&prog);
	pcap_close(p);
	if (prm == NULL) {
		snprintf(err, errlen, "\"%s\": rte_bpf_convert cannot express it: %s", filter, rte_strerror(rte_errno));
		return NULL;
	}
	bpf = rte_bpf_load(prm);
	rte_free(prm);
	if (bpf == NULL)
		snprintf(err, errlen, "\"%s\": rte_bpf_load: %s", filter, rte_strerror(rte_errno));
	return bpf;
}
