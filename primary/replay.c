/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replay: run a config whose inputs are finite pcap files until every input is at EOF (exact:
 * libpcap says so, pcap_port.c) and every ring and worker has drained.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "primary.h"
#include "spanbox/decap.h"

/* Every worker has forwarded or dropped all it received. A fragment handed to reassembly counts as
 * done (decap_malformed_ip_fragment counts those dropped, a datagram goes on as one frame of its
 * fragments): those still held wait for the rest of their datagram, which a finished input will
 * not bring; the worker's end drops and counts them (sbx_ingress_teardown). */
static bool workers_drained(struct sbx_primary *p)
{
	unsigned int w, i;

	for (w = 0; w < p->cfg->nb_workers; w++) {
		const struct sbx_worker_stats *st = &sbx_shm_worker(p->shm, w)->stats;
		uint64_t rx = 0, out = 0;

		for (i = 0; i < p->cfg->nb_ports; i++) {
			rx += st->port[i].rx_pkts;
			out += st->port[i].tx_pkts + st->port[i].drop_pkts + st->port[i].reasm_fragments -
			       st->port[i].reasm_datagrams - st->port[i].decap_bad_ip_fragment;
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

/* The tunnel senders the ingress stages followed (struct sbx_ingress_stats), one line per worker
 * and sender: port, kind, outer source, session id / VNI / key, frames, sequence numbers. */
static void print_tunnels(struct sbx_primary *p)
{
	bool head = false;
	unsigned int w, i;

	for (w = 0; w < p->cfg->nb_workers; w++) {
		const struct sbx_tunnel_source *src = sbx_shm_senders(p->shm, w);

		for (i = 0; i < p->shm->layout.senders_per_worker; i++) {
			const struct sbx_tunnel_source *e = &src[i];
			char addr[INET6_ADDRSTRLEN];

			if (!e->used)
				continue;
			if (!head) {
				printf("%-10s %6s %-8s %-39s %10s %12s %14s %10s %12s %10s %13s %10s %10s\n", "tunnel", "worker",
				       "kind", "source", "id", "packets", "bytes", "seq_gaps", "seq_lost", "reordered",
				       "sequence", "truncated", "duplicates");
				head = true;
			}
			if (inet_ntop(e->af == 6 ? AF_INET6 : AF_INET, e->src, addr, sizeof(addr)) == NULL)
				snprintf(addr, sizeof(addr), "?");
			printf("%-10s %6u %-8s %-39s %10u %12" PRIu64 " %14" PRIu64 " %10" PRIu64 " %12" PRIu64 " %10" PRIu64
			       " %13s %10" PRIu64 " %10" PRIu64 "\n",
			       p->cfg->ports[e->port % SBX_MAX_PORTS].name, w, sbx_tunnel_kind_name(e->kind), addr, e->id,
			       e->packets, e->bytes, e->seq_gaps, e->seq.lost, e->seq_reordered,
			       sbx_tunnel_sequence_name(e),
			       e->truncated, e->seq_duplicates);
		}
	}
}

#define GROUP_HEAD(field, json, ...) printf(" %*s", col_width(json), json);
#define GROUP_HEAD_DASH(field, json, ...) printf(" %*s", col_width(json), "-");
#define GROUP_VAL(field, json, ...) printf(" %*" PRIu64, col_width(json), sum.field);

/* The tool groups' members (summed over workers): one line "GROUP/MEMBER" each, and one
 * "GROUP/-" line with the copies no member took (no_member). */
static void print_groups(struct sbx_primary *p)
{
	const struct sbx_tables *t = sbx_shm_tables(p->shm);
	unsigned int w;
	uint16_t i, k;

	if (t->cfg.nb_tool_groups == 0)
		return;
	printf("%-24s %8s %8s", "tool_group/member", "buckets", "state");
	SBX_FOREACH_GROUP_MEMBER_COUNTER(GROUP_HEAD)
	printf(" %12s\n", "no_member");
	for (i = 0; i < t->cfg.nb_tool_groups && i < SBX_MAX_TOOL_GROUPS; i++) {
		const struct sbx_tool_group_cfg *g = &t->cfg.tool_groups[i];
		unsigned int slot = t->gslot[i] % SBX_GROUP_SLOTS;
		const struct sbx_group_shm *gs = sbx_shm_group(p->shm, slot);
		uint64_t none = 0;
		char name[2 * SBX_NAME_LEN + 2];

		for (k = 0; k < g->nb_members && k < SBX_MAX_GROUP_MEMBERS; k++) {
			struct sbx_group_member_counters sum = { 0 };

			for (w = 0; w < p->cfg->nb_workers; w++)
				sbx_group_member_counters_add(&sum, sbx_shm_group_member(p->shm, w, slot, k));
			snprintf(name, sizeof(name), "%s/%s", g->name, p->cfg->ports[g->members[k]].name);
			printf("%-24s %8u %8s", name, gs->m[k].buckets, sbx_member_state_name(gs->m[k].state));
			SBX_FOREACH_GROUP_MEMBER_COUNTER(GROUP_VAL)
			printf(" %12s\n", "-");
		}
		for (w = 0; w < p->cfg->nb_workers; w++)
			none += sbx_shm_group_ctr(p->shm, w, slot)->no_member;
		snprintf(name, sizeof(name), "%s/-", g->name);
		printf("%-24s %8s %8s", name, "-", "-");
		SBX_FOREACH_GROUP_MEMBER_COUNTER(GROUP_HEAD_DASH)
		printf(" %12" PRIu64 "\n", none);
	}
}

/* The maps (issue #27): a session table of their own (mctr reads it as the mirrors'), one more
 * column "passed" (frames the map's rules passed), and the frames the maps stage classified. */
static void print_maps(struct sbx_primary *p)
{
	uint64_t classified = 0;
	uint16_t i;
	unsigned int w;

	if (p->cfg->nb_maps == 0)
		return;
	for (w = 0; w < p->cfg->nb_workers; w++)
		classified += sbx_shm_worker(p->shm, w)->stats.maps_classified;
	printf("maps: %" PRIu64 " frames classified\n", classified);
	printf("%-16s %6s", "session", "worker");
	SBX_FOREACH_MIRROR_COUNTER(MIRROR_HEAD)
	printf(" %12s\n", "passed");
	for (i = 0; i < p->cfg->nb_maps; i++)
		for (w = 0; w < p->cfg->nb_workers; w++) {
			const uint16_t cs = sbx_shm_tables(p->shm)->mcset[i] % SBX_MAP_COUNTER_SETS; /* its counter set */
			const struct sbx_mirror_counters *m = &sbx_shm_worker(p->shm, w)->stats.map_mirror[cs];

			printf("%-16s %6u", p->cfg->maps[i].s.name, w);
			SBX_FOREACH_MIRROR_COUNTER(MIRROR_VAL)
			printf(" %12" PRIu64 "\n", sbx_shm_worker(p->shm, w)->stats.map[cs].passed);
		}
}

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
			sbx_port_counters_add(&sum, &sbx_shm_worker(p->shm, w)->stats.port[i]);
		printf("%-10s", p->cfg->ports[i].name);
		SBX_FOREACH_PORT_COUNTER(PORT_VAL)
		printf(" %12" PRIu64 "\n", p->shm->ports[i].opackets);
	}
	print_tunnels(p);
	print_maps(p);
	if (p->cfg->nb_mirrors == 0)
		return;
	print_groups(p);
	printf("%-16s %6s", "session", "worker");
	SBX_FOREACH_MIRROR_COUNTER(MIRROR_HEAD)
	printf("\n");
	for (i = 0; i < p->cfg->nb_mirrors; i++) {
		for (w = 0; w < p->cfg->nb_workers; w++) {
			const struct sbx_mirror_counters *m =
				&sbx_shm_worker(p->shm, w)->stats.mirror[sbx_shm_tables(p->shm)->cset[i] % SBX_MIRROR_COUNTER_SETS];

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
