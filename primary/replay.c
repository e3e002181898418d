/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replay: run a config whose inputs are finite pcap files until every input is at EOF and every
 * queue has drained. The pcap PMD gives no EOF signal (rx_burst just returns 0), so the number of
 * records is counted beforehand with libpcap; a file whose frames the PMD cannot all deliver (e.g.
 * a record over the PMD's snap length) is declared done after SBX_REPLAY_STALL_NS without progress.
 */
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include "primary.h"

#define SBX_REPLAY_STALL_NS (2ULL * 1000 * 1000 * 1000)

/* Copy the value of key "rx_pcap=" from devargs into buf. @return 0 when found. */
static int rx_pcap_path(const char *devargs, char *buf, size_t len)
{
	const char *s = strstr(devargs, "rx_pcap=");
	size_t n;

	if (s == NULL)
		return -1;
	s += strlen("rx_pcap=");
	n = strcspn(s, ",");
	if (n >= len)
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

int sbx_replay_prepare(struct sbx_primary *p)
{
	char errbuf[PCAP_ERRBUF_SIZE], path[SBX_DEVARGS_LEN];
	uint16_t i;

	for (i = 0; i < p->cfg->nb_ports; i++) {
		struct pcap_pkthdr *h;
		const u_char *data;
		pcap_t *pc;
		uint64_t n = 0;

		if (p->cfg->ports[i].kind != SBX_PORT_BRIDGED ||
		    rx_pcap_path(p->cfg->ports[i].devargs, path, sizeof(path)) != 0)
			continue;
		pc = pcap_open_offline(path, errbuf);
		if (pc == NULL) {
			fprintf(stderr, "spanbox-primary: ports[%u].devargs: %s\n", i, errbuf);
			return -1;
		}
		while (pcap_next_ex(pc, &h, &data) == 1)
			n++;
		pcap_close(pc);
		p->replay_expect[i] = n;
		printf("spanbox-primary: replay: %s holds %" PRIu64 " frames\n", path, n);
	}
	return 0;
}

/* Every worker has forwarded or dropped all it received. */
static bool workers_drained(struct sbx_primary *p)
{
	unsigned int w, i;

	for (w = 0; w < p->cfg->nb_workers; w++) {
		const struct sbx_worker_stats *st = &p->shm->workers[w].stats;
		uint64_t rx = 0, out = 0;

		for (i = 0; i < p->cfg->nb_ports; i++) {
			rx += st->port[i].rx_pkts;
			out += st->port[i].tx_pkts + st->port[i].drop_pkts;
		}
		if (rx != out)
			return false;
	}
	return true;
}

bool sbx_replay_done(struct sbx_primary *p, uint64_t now_ns)
{
	static uint64_t last_rx_total, last_progress_ns;
	uint64_t rx_total = 0;
	bool inputs_done = true;
	uint16_t i;

	for (i = 0; i < p->cfg->nb_ports; i++) {
		rx_total += p->bridge_rx[i];
		if (p->replay_expect[i] && p->bridge_rx[i] < p->replay_expect[i])
			inputs_done = false;
	}
	if (rx_total != last_rx_total || last_progress_ns == 0) {
		last_rx_total = rx_total;
		last_progress_ns = now_ns;
	}
	if (!inputs_done && now_ns - last_progress_ns > SBX_REPLAY_STALL_NS) {
		fprintf(stderr, "spanbox-primary: replay: no input progress for 2 s, treating inputs as at EOF\n");
		for (i = 0; i < p->cfg->nb_ports; i++)
			p->replay_expect[i] = p->bridge_rx[i] < p->replay_expect[i] ? p->bridge_rx[i] : p->replay_expect[i];
		inputs_done = true;
	}
	return inputs_done && sbx_bridge_idle(p) && workers_drained(p);
}

void sbx_print_counters(struct sbx_primary *p)
{
	uint16_t i;
	unsigned int w;

	printf("%-10s %12s %12s %12s %14s %14s\n", "port", "rx_packets", "tx_packets", "drop_packets",
	       "rx_bytes", "tx_bytes");
	for (i = 0; i < p->cfg->nb_ports; i++) {
		struct sbx_port_counters sum = { 0 };

		for (w = 0; w < p->cfg->nb_workers; w++) {
			const struct sbx_port_counters *c = &p->shm->workers[w].stats.port[i];
			sum.rx_pkts += c->rx_pkts;
			sum.tx_pkts += c->tx_pkts;
			sum.drop_pkts += c->drop_pkts;
			sum.rx_bytes += c->rx_bytes;
			sum.tx_bytes += c->tx_bytes;
		}
		printf("%-10s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %14" PRIu64 " %14" PRIu64 "\n",
		       p->cfg->ports[i].name, sum.rx_pkts, sum.tx_pkts, sum.drop_pkts, sum.rx_bytes, sum.tx_bytes);
	}
}
