/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replay: run a config whose inputs are finite pcap files until every input is at EOF (exact:
 * libpcap says so, pcap_port.c) and every ring and worker has drained.
 */
#include <inttypes.h>
#include <stdio.h>

#include "primary.h"

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

bool sbx_replay_inputs_at_eof(struct sbx_primary *p)
{
	uint16_t i;

	for (i = 0; i < p->cfg->nb_ports; i++)
		if (p->cfg->ports[i].kind == SBX_PORT_BRIDGED && !p->pcap[i].rx_eof)
			return false;
	return true;
}

bool sbx_replay_done(struct sbx_primary *p)
{
	return sbx_replay_inputs_at_eof(p) && sbx_bridge_idle(p) && workers_drained(p);
}

void sbx_print_counters(struct sbx_primary *p)
{
	uint16_t i;
	unsigned int w;

	/* rx/tx/drop: what the workers forwarded; port_out: every frame the port sent, mirror copies
	 * included; runt and oversize: the frames of drop_packets dropped for their length */
	printf("%-10s %12s %12s %12s %14s %14s %12s %8s %8s\n", "port", "rx_packets", "tx_packets", "drop_packets",
	       "rx_bytes", "tx_bytes", "port_out", "runt", "oversize");
	for (i = 0; i < p->cfg->nb_ports; i++) {
		struct sbx_port_counters sum = { 0 };

		for (w = 0; w < p->cfg->nb_workers; w++) {
			const struct sbx_port_counters *c = &p->shm->workers[w].stats.port[i];
			sum.rx_pkts += c->rx_pkts;
			sum.tx_pkts += c->tx_pkts;
			sum.drop_pkts += c->drop_pkts;
			sum.rx_bytes += c->rx_bytes;
			sum.tx_bytes += c->tx_bytes;
			sum.runt += c->runt;
			sum.oversize += c->oversize;
		}
		printf("%-10s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %14" PRIu64 " %14" PRIu64 " %12" PRIu64 " %8" PRIu64
		       " %8" PRIu64 "\n",
		       p->cfg->ports[i].name, sum.rx_pkts, sum.tx_pkts, sum.drop_pkts, sum.rx_bytes, sum.tx_bytes,
		       p->shm->ports[i].opackets, sum.runt, sum.oversize);
	}
	if (p->cfg->nb_mirrors == 0)
		return;
	printf("%-16s %6s %10s %10s %10s %12s %11s %11s %11s %9s %14s\n", "session", "worker", "mirrored", "copied",
	       "shared", "filtered_out", "sampled_out", "drop_txfull", "drop_nombuf", "truncated", "drop_malformed");
	for (i = 0; i < p->cfg->nb_mirrors; i++) {
		for (w = 0; w < p->cfg->nb_workers; w++) {
			const struct sbx_mirror_counters *m =
				&p->shm->workers[w].stats.mirror[sbx_shm_tables(p->shm)->slot[i] % SBX_MIRROR_SLOTS];

			printf("%-16s %6u %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %12" PRIu64 " %11" PRIu64
			       " %11" PRIu64 " %11" PRIu64 " %9" PRIu64 " %14" PRIu64 "\n",
			       p->cfg->mirrors[i].name, w, m->mirrored_pkts, m->copied, m->shared, m->filtered_out,
			       m->sampled_out, m->drop_txfull, m->drop_nombuf, m->truncated, m->drop_malformed);
		}
	}
}

unsigned int sbx_replay_inputs_failed(struct sbx_primary *p)
{
	unsigned int n = 0;
	uint16_t i;

	for (i = 0; i < p->cfg->nb_ports; i++) {
		const struct sbx_pcap_port *pp = &p->pcap[i];

		if (p->cfg->ports[i].kind != SBX_PORT_BRIDGED || !pp->rx_failed)
			continue;
		fprintf(stderr,
			"spanbox-primary: replay: ports[%u] (%s): rx_pcap %s did not reach its end: read error after %"
			PRIu64 " frames: %s\n",
			i, p->cfg->ports[i].name, pp->rx_path, pp->rx_pkts, pp->rx_error);
		n++;
	}
	return n;
}
