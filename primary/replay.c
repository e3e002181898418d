/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replay: run a config whose inputs are finite pcap files until every input is at EOF (exact:
 * libpcap says so, pcap_port.c) and every ring and worker has drained.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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
		if (p->cfg->ports[i].kind == SBX_PORT_PCAP_FILE && !p->pcap[i].rx_eof)
			return false;
	return true;
}

bool sbx_replay_done(struct sbx_primary *p)
{
	return sbx_replay_inputs_at_eof(p) && sbx_bridge_idle(p) && workers_drained(p);
}

/* A column of the summary: at least 8 wide, and as wide as its name. */
static int col_width(const char *name)
{
	int n = (int)strlen(name);

	return n < 8 ? 8 : n;
}

/* The columns come from the lists of counters.h (port: the json keys; sessions: the replay names),
 * so a counter added there is printed too; tests read the columns by name (tests/lib/replay.sh). */
#define PORT_HEAD(field, json, ...) printf(" %*s", col_width(json), json);
#define PORT_VAL(field, json, ...) printf(" %*" PRIu64, col_width(json), sum.field);
#define MIRROR_HEAD(field, json, replay, ...) printf(" %*s", col_width(replay), replay);
#define MIRROR_VAL(field, json, replay, ...) printf(" %*" PRIu64, col_width(replay), m->field);

void sbx_print_counters(struct sbx_primary *p)
{
	uint16_t i;
	unsigned int w;

	/* the workers' counters (rx: received, tx: forwarded, drop...), then port_out: every frame
	 * the port sent, mirror copies included; runt and oversize: the frames of drop_packets
	 * dropped for their length */
	printf("%-10s", "port");
	SBX_FOREACH_PORT_COUNTER(PORT_HEAD)
	printf(" %12s\n", "port_out");
	for (i = 0; i < p->cfg->nb_ports; i++) {
		struct sbx_port_counters sum = { 0 };

		for (w = 0; w < p->cfg->nb_workers; w++)
			sbx_port_counters_add(&sum, &p->shm->workers[w].stats.port[i]);
		printf("%-10s", p->cfg->ports[i].name);
		SBX_FOREACH_PORT_COUNTER(PORT_VAL)
		printf(" %12" PRIu64 "\n", p->shm->ports[i].opackets);
	}
	if (p->cfg->nb_mirrors == 0)
		return;
	printf("%-16s %6s", "session", "worker");
	SBX_FOREACH_MIRROR_COUNTER(MIRROR_HEAD)
	printf("\n");
	for (i = 0; i < p->cfg->nb_mirrors; i++) {
		for (w = 0; w < p->cfg->nb_workers; w++) {
			const struct sbx_mirror_counters *m =
				&p->shm->workers[w].stats.mirror[sbx_shm_tables(p->shm)->cset[i] % SBX_MIRROR_COUNTER_SETS];

			printf("%-16s %6u", p->cfg->mirrors[i].name, w);
			SBX_FOREACH_MIRROR_COUNTER(MIRROR_VAL)
			printf("\n");
		}
	}
}

unsigned int sbx_replay_inputs_failed(struct sbx_primary *p)
{
	unsigned int n = 0;
	uint16_t i;

	for (i = 0; i < p->cfg->nb_ports; i++) {
		const struct sbx_pcap_port *pp = &p->pcap[i];

		if (p->cfg->ports[i].kind != SBX_PORT_PCAP_FILE || !pp->rx_failed)
			continue;
		fprintf(stderr,
			"spanbox-primary: replay: ports[%u] (%s): rx_pcap %s did not reach its end: read error after %"
			PRIu64 " frames: %s\n",
			i, p->cfg->ports[i].name, pp->rx_path, pp->rx_pkts, pp->rx_error);
		n++;
	}
	return n;
}
