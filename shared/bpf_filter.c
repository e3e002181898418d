/* SPDX-License-Identifier: BSD-3-Clause */
/* tcpdump filter -> classic BPF (libpcap) -> eBPF (rte_bpf_convert) -> loaded rte_bpf. */
#include <pcap/pcap.h>
#include <stdio.h>

#include <rte_errno.h>
#include <rte_malloc.h>

#include "spanbox/bpf_filter.h"
#include "spanbox/config.h"

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

int sbx_filters_check(const struct sbx_config *cfg, char *err, size_t errlen)
{
	char why[512];
	uint16_t i;

	for (i = 0; i < cfg->nb_mirrors; i++) {
		struct rte_bpf *bpf;

		if (cfg->mirrors[i].filter[0] == '\0')
			continue;
		bpf = sbx_filter_load(cfg->mirrors[i].filter, why, sizeof(why));
		if (bpf == NULL) {
			snprintf(err, errlen, "mirrors[%u].filter: %s", i, why);
			return -1;
		}
		rte_bpf_destroy(bpf);
	}
	return 0;
}
