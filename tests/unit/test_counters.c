/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test: every counter is declared once (include/spanbox/counters.h). Walks the X-macro
 * lists (port, mirror, worker, ethdev, tool group member, IPFIX exporter: /metrics only), gives every counter of a fake memzone a value of its own, and checks that each one
 * appears, with that value, under its JSON key in the real /status encoder (mgmt_status_json:
 * ports[].stats, ports[].workers, workers[].ports, workers[], mirrors[].counters, mirrors[].workers[], tool_groups[].members[]) and under
 * its Prometheus name in the real /metrics encoder (mgmt_metrics_text). A counter added to a list
 * is checked without this file changing. Also: the JSON keys and Prometheus names users and tests
 * rely on are all still there (never renamed), and no name is listed twice. No EAL needed.
 * Prints TAP; exits 1 when a case failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../mgmt/api.h"
#include "../../mgmt/db.h"
#include "../../mgmt/status.h"
#include "spanbox/counters.h"
#include "spanbox/shm.h"
#include "tap.h"

#define PORT_BASE 1000
#define MIRROR_BASE 2000
#define WORKER_BASE 3000
#define ETHDEV_BASE 4000
#define CSET 3 /* the session's counter set: not 0, so a reader that ignores it reads zeros */
#define GROUP_BASE 5000
#define GSLOT 5 /* the tool group's slot: not 0, for the same reason */
#define IPFIX_BASE 6000   /* the IPFIX exporter's counters of collector 0 */
#define RETIRED_BASE 7000 /* ... of the collectors live changes closed */

/* One counter of a list, as the test walks it. */
struct ctr {
	const char *json, *prom, *reason, *help;
};

#define PORT_CTR(field, json, prom, unit, hist, help) { json, prom, NULL, help },
#define WORKER_CTR(field, json, prom, unit, hist, help) { json, prom, NULL, help },
#define MIRROR_CTR(field, json, replay, prom, reason, unit, hist, help) { json, prom, reason, help },
static const struct ctr port_ctrs[] = { SBX_FOREACH_PORT_COUNTER(PORT_CTR) };
static const struct ctr worker_ctrs[] = { SBX_FOREACH_WORKER_COUNTER(WORKER_CTR) };
static const struct ctr mirror_ctrs[] = { SBX_FOREACH_MIRROR_COUNTER(MIRROR_CTR) };
#define GROUP_CTR(field, json, prom, reason, unit, help) { json, prom, reason, help },
static const struct ctr group_ctrs[] = { SBX_FOREACH_GROUP_MEMBER_COUNTER(GROUP_CTR) };
/* the ethdev list: /status ports[].stats names them by field */
#define ETHDEV_CTR(field, key, prom, unit, hist, help) { #field, prom, NULL, help },
static const struct ctr ethdev_ctrs[] = { SBX_FOREACH_ETHDEV_COUNTER(ETHDEV_CTR) };
#define IPFIX_CTR(field, json, prom, unit, help) { json, prom, NULL, help },
static const struct ctr ipfix_ctrs[] = { SBX_FOREACH_IPFIX_COUNTER(IPFIX_CTR) };
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* The names of the API before the lists existed (docs/openapi.yaml, tests/e2e/56_metrics.sh). */
static const char *const kept_json[] = {
	"rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "drop_packets", "drop_bytes", "runt", "oversize",
	"loops", "idle_sleeps", "bad_packets",
	"mirrored_packets", "mirrored_bytes", "copied", "shared", "filtered_out", "sampled_out", "drop_txfull",
	"drop_nombuf", "drop_malformed", "truncated",
	"ipackets", "opackets", "ibytes", "obytes", "imissed", "ierrors", "oerrors", "rx_nombuf",
};
static const char *const kept_prom[] = {
	"spanbox_worker_rx_packets_total", "spanbox_worker_rx_bytes_total", "spanbox_worker_tx_packets_total",
	"spanbox_worker_tx_bytes_total", "spanbox_worker_drop_packets_total", "spanbox_worker_drop_bytes_total",
	"spanbox_worker_runt_packets_total", "spanbox_worker_oversize_packets_total", "spanbox_worker_loops_total",
	"spanbox_worker_idle_sleeps_total", "spanbox_worker_busy_cycles_total", "spanbox_worker_busy_packets_total",
	"spanbox_worker_bad_packets_total", "spanbox_mirror_packets_total", "spanbox_mirror_bytes_total",
	"spanbox_mirror_copied_packets_total", "spanbox_mirror_shared_packets_total",
	"spanbox_mirror_filtered_out_packets_total", "spanbox_mirror_sampled_out_packets_total",
	"spanbox_mirror_truncated_packets_total", "spanbox_mirror_dropped_packets_total",
	"spanbox_port_rx_packets_total", "spanbox_port_tx_packets_total", "spanbox_port_rx_bytes_total",
	"spanbox_port_tx_bytes_total", "spanbox_port_rx_missed_packets_total", "spanbox_port_rx_errors_total",
	"spanbox_port_tx_errors_total", "spanbox_port_rx_nombuf_total",
};

static bool listed(const char *name, bool prom)
{
	const struct ctr *lists[] = { port_ctrs, worker_ctrs, mirror_ctrs, ethdev_ctrs };
	const size_t lens[] = { N(port_ctrs), N(worker_ctrs), N(mirror_ctrs), N(ethdev_ctrs) };
	size_t l, i;

	for (l = 0; l < N(lists); l++)
		for (i = 0; i < lens[l]; i++)
			if (strcmp(prom ? lists[l][i].prom : lists[l][i].json, name) == 0)
				return true;
	return false;
}

/* Every name of @p names (the API before the lists) is still a listed JSON key / Prometheus family. */
static void check_kept(const char *what, const char *const *names, size_t n, bool prom)
{
	bool ok = true;
	size_t k;

	for (k = 0; k < n; k++)
		if (!listed(names[k], prom)) {
			printf("# %s %s is not listed any more\n", what, names[k]);
			ok = false;
		}
	check(ok, "every %s of the API before the lists is still listed", what);
}

/* @return the number member @p key of @p o equals @p want. */
static bool has_num(const cJSON *o, const char *key, double want)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) && v->valuedouble == want;
}

/* @return the exposition @p text has the line "@p name{@p labels} @p v". */
static bool has_sample(const char *text, const char *name, const char *labels, unsigned long long v)
{
	char line[512];

	snprintf(line, sizeof(line), "\n%s{%s} %llu\n", name, labels, v);
	return strstr(text, line) != NULL;
}

/* @return the exposition has "# HELP @p name @p help" and "# TYPE @p name counter". */
static bool has_family(const char *text, const char *name, const char *help)
{
	char line[1024];

	snprintf(line, sizeof(line), "# HELP %s %s\n# TYPE %s counter\n", name, help, name);
	return strstr(text, line) != NULL;
}

/* Names of one list appear once each (a shared Prometheus family is one name on purpose). */
static void check_unique(const char *what, const struct ctr *c, size_t n)
{
	size_t i, j;
	bool ok = true;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (strcmp(c[i].json, c[j].json) == 0 ||
			    (strcmp(c[i].prom, c[j].prom) == 0 && (c[i].reason == NULL || c[j].reason == NULL))) {
				printf("# %s: %s / %s twice\n", what, c[i].json, c[i].prom);
				ok = false;
			}
	check(ok, "%s: every JSON key and Prometheus family once", what);
}

/* The microburst rings: a row per worker when microburst is on, one spare ring when it is off
 * (issue #25: 12.7 MB of rings at 32 workers x 64 ports were reserved with microburst off), and
 * sbx_shm_mb_ring() of any index stays inside the ring region either way. */
static void check_mb_rings(void)
{
	struct sbx_shm_layout on, off;
	struct sbx_shm hdr;

	sbx_shm_layout(32, 64, SBX_TUNNEL_SENDERS_DEFAULT, 8, 8, &on);
	sbx_shm_layout(32, 0, SBX_TUNNEL_SENDERS_DEFAULT, 8, 8, &off);
	check(on.mb_nb_rows == 32 && on.mb_nb_ports == 64 && off.mb_nb_rows == 1 && off.mb_nb_ports == 1 &&
		      on.total_size - off.total_size >= (32ULL * 64 - 1) * sizeof(struct sbx_mb_ring) &&
		      on.total_size - off.total_size < (32ULL * 64 - 1) * sizeof(struct sbx_mb_ring) + 2 * RTE_CACHE_LINE_SIZE,
	      "microburst rings: 32 x 64 with microburst on, 1 without (%llu B less: %.1f MB)",
	      (unsigned long long)(on.total_size - off.total_size), (on.total_size - off.total_size) / 1e6);
	memset(&hdr, 0, sizeof(hdr));
	hdr.layout = off;
	check((const char *)sbx_shm_mb_ring(&hdr, 31, 63) == (const char *)&hdr + off.mb_rings_off &&
		      (const char *)sbx_shm_mb_ring(&hdr, 0, 0) == (const char *)&hdr + off.mb_rings_off,
	      "microburst off: every (worker, port) index reaches the one spare ring");
	hdr.layout = on;
	check((const char *)sbx_shm_mb_ring(&hdr, 99, 99) ==
		      (const char *)&hdr + on.mb_rings_off + (32ULL * 64 - 1) * sizeof(struct sbx_mb_ring),
	      "microburst on: an index past the workers and ports is clamped to the last ring");
}

int main(void)
{
	check_mb_rings();
	struct sbx_shm_layout lay;
	struct sbx_shm *shm;
	struct mgmt_db db = { .path = "/nonexistent/test_counters.db", .schema_version = 1 };
	struct sbx_config *tc;
	const cJSON *port, *worker, *mirror, *x;
	cJSON *st;
	char *text;
	size_t k;

	sbx_shm_layout(SBX_MAX_WORKERS, SBX_MAX_PORTS, SBX_MAX_TUNNEL_SOURCES, SBX_MAX_TOOL_GROUPS,
		       SBX_MAX_GROUP_MEMBERS, &lay); /* the memzone with its regions */
	shm = calloc(1, lay.total_size);
	if (shm != NULL)
		shm->layout = lay;
	if (shm == NULL)
		return 1;
	/* one port p0, one worker, one mirror session 9 ("m9") in counter set CSET */
	shm->cfg.nb_ports = 1;
	snprintf(shm->cfg.ports[0].name, sizeof(shm->cfg.ports[0].name), "p0");
	shm->cfg.nb_workers = 1;
	shm->nb_pools = 0;
	tc = &shm->tables[0].cfg;
	*tc = shm->cfg;
	tc->nb_mirrors = 1;
	tc->mirrors[0].id = 9;
	snprintf(tc->mirrors[0].name, sizeof(tc->mirrors[0].name), "m9");
	shm->tables[0].cset[0] = CSET;
	/* one tool group "g" of one member, p0, in slot GSLOT */
	tc->nb_tool_groups = 1;
	snprintf(tc->tool_groups[0].name, sizeof(tc->tool_groups[0].name), "g");
	tc->tool_groups[0].nb_members = 1;
	tc->tool_groups[0].members[0] = 0;
	shm->tables[0].gslot[0] = GSLOT;
	sbx_shm_group_ctr(shm, 0, GSLOT)->no_member = 77;
	/* every counter a value of its own, by walking the lists */
	k = 0;
#define SET_PORT(field, ...) sbx_shm_worker(shm, 0)->stats.port[0].field = PORT_BASE + k++;
	SBX_FOREACH_PORT_COUNTER(SET_PORT)
	k = 0;
#define SET_MIRROR(field, ...) sbx_shm_worker(shm, 0)->stats.mirror[CSET].field = MIRROR_BASE + k++;
	SBX_FOREACH_MIRROR_COUNTER(SET_MIRROR)
	k = 0;
#define SET_GROUP(field, ...) sbx_shm_group_member(shm, 0, GSLOT, 0)->field = GROUP_BASE + k++;
	SBX_FOREACH_GROUP_MEMBER_COUNTER(SET_GROUP)
	k = 0;
#define SET_WORKER(field, ...) sbx_shm_worker(shm, 0)->stats.field = WORKER_BASE + k++;
	SBX_FOREACH_WORKER_COUNTER(SET_WORKER)
	k = 0;
#define SET_ETHDEV(field, ...) shm->ports[0].field = ETHDEV_BASE + k++;
	SBX_FOREACH_ETHDEV_COUNTER(SET_ETHDEV)
	/* the flow exporter: one collector 127.0.0.1:4739 (udp), and the retired ones */
	shm->flows.running = 1;
	shm->flows.nb_collectors = 1;
	snprintf(shm->flows.collectors[0].cfg.address, sizeof(shm->flows.collectors[0].cfg.address), "127.0.0.1");
	shm->flows.collectors[0].cfg.port = 4739;
	k = 0;
#define SET_IPFIX(field, ...) shm->flows.collectors[0].x.field = IPFIX_BASE + k; shm->flows.retired.field = RETIRED_BASE + k++;
	SBX_FOREACH_IPFIX_COUNTER(SET_IPFIX)

	check(N(port_ctrs) == SBX_NB_PORT_COUNTERS && N(mirror_ctrs) == SBX_NB_MIRROR_COUNTERS &&
	      N(worker_ctrs) == SBX_NB_WORKER_COUNTERS && N(ethdev_ctrs) == SBX_NB_ETHDEV_COUNTERS,
	      "the lists have %zu port, %zu mirror, %zu worker counters",
	      N(port_ctrs), N(mirror_ctrs), N(worker_ctrs));
	check(sizeof(struct sbx_port_counters) == SBX_NB_PORT_COUNTERS * sizeof(uint64_t) &&
	      sizeof(struct sbx_mirror_counters) == SBX_NB_MIRROR_COUNTERS * sizeof(uint64_t),
	      "the port and mirror counter structs hold exactly the listed counters");
	check_unique("port counters", port_ctrs, N(port_ctrs));
	check_unique("mirror counters", mirror_ctrs, N(mirror_ctrs));
	check(sizeof(struct sbx_group_member_counters) == N(group_ctrs) * sizeof(uint64_t),
	      "the tool group member counter struct holds exactly the listed counters");
	check_unique("worker counters", worker_ctrs, N(worker_ctrs));
	check_unique("ethdev counters", ethdev_ctrs, N(ethdev_ctrs));
	check(sizeof(struct sbx_ipfix_stats) == N(ipfix_ctrs) * sizeof(uint64_t),
	      "the IPFIX exporter's counter struct holds exactly the listed counters");
	check_unique("IPFIX exporter counters", ipfix_ctrs, N(ipfix_ctrs));
	check_kept("JSON key", kept_json, N(kept_json), false);
	check_kept("Prometheus family", kept_prom, N(kept_prom), true);

	/* /status */
	st = mgmt_status_json(shm, &db);
	port = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(st, "ports"), 0);
	worker = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(st, "workers"), 0);
	mirror = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(st, "mirrors"), 0);
	check(port != NULL && worker != NULL && mirror != NULL, "/status has the port, the worker and the session");
	for (k = 0; k < N(port_ctrs); k++) {
		x = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(worker, "ports"), "p0");
		check(has_num(cJSON_GetObjectItemCaseSensitive(port, "workers"), port_ctrs[k].json, PORT_BASE + k) &&
		      has_num(x, port_ctrs[k].json, PORT_BASE + k),
		      "/status ports[0].workers.%s and workers[0].ports.p0.%s = %zu", port_ctrs[k].json,
		      port_ctrs[k].json, PORT_BASE + k);
	}
	for (k = 0; k < N(ethdev_ctrs); k++)
		check(has_num(cJSON_GetObjectItemCaseSensitive(port, "stats"), ethdev_ctrs[k].json, ETHDEV_BASE + k),
		      "/status ports[0].stats.%s = %zu", ethdev_ctrs[k].json, ETHDEV_BASE + k);
	for (k = 0; k < N(worker_ctrs); k++)
		check(has_num(worker, worker_ctrs[k].json, WORKER_BASE + k), "/status workers[0].%s = %zu",
		      worker_ctrs[k].json, WORKER_BASE + k);
	for (k = 0; k < N(mirror_ctrs); k++) {
		x = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(mirror, "workers"), 0);
		check(has_num(cJSON_GetObjectItemCaseSensitive(mirror, "counters"), mirror_ctrs[k].json, MIRROR_BASE + k) &&
		      has_num(x, mirror_ctrs[k].json, MIRROR_BASE + k),
		      "/status mirrors[0].counters.%s and mirrors[0].workers[0].%s = %zu (counter set %d)",
		      mirror_ctrs[k].json, mirror_ctrs[k].json, MIRROR_BASE + k, CSET);
	}
	x = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(st, "tool_groups"), 0);
	for (k = 0; k < N(group_ctrs); k++)
		check(has_num(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(x, "members"), 0), group_ctrs[k].json,
			      GROUP_BASE + k) && has_num(x, group_ctrs[k].json, GROUP_BASE + k),
		      "/status tool_groups[0].members[0].%s and tool_groups[0].%s = %zu (slot %d)", group_ctrs[k].json,
		      group_ctrs[k].json, GROUP_BASE + k, GSLOT);
	check(has_num(x, "no_member", 77), "/status tool_groups[0].no_member = 77 (slot %d)", GSLOT);
	cJSON_Delete(st);

	/* /metrics */
	text = mgmt_metrics_text(shm, &db);
	check(text != NULL, "/metrics text built");
	if (text == NULL)
		return 1;
	for (k = 0; k < N(port_ctrs); k++)
		check(has_family(text, port_ctrs[k].prom, port_ctrs[k].help) &&
		      has_sample(text, port_ctrs[k].prom, "worker=\"0\",port=\"p0\"", PORT_BASE + k),
		      "/metrics %s{worker=\"0\",port=\"p0\"} %zu with its help", port_ctrs[k].prom, PORT_BASE + k);
	for (k = 0; k < N(ethdev_ctrs); k++)
		check(has_family(text, ethdev_ctrs[k].prom, ethdev_ctrs[k].help) &&
		      has_sample(text, ethdev_ctrs[k].prom, "port=\"p0\"", ETHDEV_BASE + k),
		      "/metrics %s{port=\"p0\"} %zu with its help", ethdev_ctrs[k].prom, ETHDEV_BASE + k);
	for (k = 0; k < N(worker_ctrs); k++)
		check(has_family(text, worker_ctrs[k].prom, worker_ctrs[k].help) &&
		      has_sample(text, worker_ctrs[k].prom, "worker=\"0\"", WORKER_BASE + k),
		      "/metrics %s{worker=\"0\"} %zu with its help", worker_ctrs[k].prom, WORKER_BASE + k);
	for (k = 0; k < N(mirror_ctrs); k++) {
		char l[128];

		if (mirror_ctrs[k].reason != NULL)
			snprintf(l, sizeof(l), "session=\"9\",name=\"m9\",reason=\"%s\"", mirror_ctrs[k].reason);
		else
			snprintf(l, sizeof(l), "session=\"9\",name=\"m9\"");
		check(has_family(text, mirror_ctrs[k].prom,
				 mirror_ctrs[k].reason != NULL ? SBX_MIRROR_DROPPED_HELP : mirror_ctrs[k].help) &&
		      has_sample(text, mirror_ctrs[k].prom, l, MIRROR_BASE + k),
		      "/metrics %s{%s} %zu with its help", mirror_ctrs[k].prom, l, MIRROR_BASE + k);
	}
	for (k = 0; k < N(group_ctrs); k++) {
		char l[128];

		if (group_ctrs[k].reason != NULL)
			snprintf(l, sizeof(l), "group=\"g\",port=\"p0\",reason=\"%s\"", group_ctrs[k].reason);
		else
			snprintf(l, sizeof(l), "group=\"g\",port=\"p0\"");
		check(has_family(text, group_ctrs[k].prom,
				 group_ctrs[k].reason != NULL ? SBX_GROUP_MEMBER_DROPPED_HELP : group_ctrs[k].help) &&
		      has_sample(text, group_ctrs[k].prom, l, GROUP_BASE + k),
		      "/metrics %s{%s} %zu with its help", group_ctrs[k].prom, l, GROUP_BASE + k);
	}
	check(has_sample(text, "spanbox_tool_group_no_member_packets_total", "group=\"g\"", 77),
	      "/metrics spanbox_tool_group_no_member_packets_total{group=\"g\"} 77");
	for (k = 0; k < N(ipfix_ctrs); k++)
		check(has_family(text, ipfix_ctrs[k].prom, ipfix_ctrs[k].help) &&
		      has_sample(text, ipfix_ctrs[k].prom,
				 "collector=\"0\",address=\"127.0.0.1\",port=\"4739\",transport=\"udp\"", IPFIX_BASE + k) &&
		      has_sample(text, ipfix_ctrs[k].prom, "collector=\"retired\"", RETIRED_BASE + k),
		      "/metrics %s of collector 0 (%zu) and of the retired ones (%zu) with its help", ipfix_ctrs[k].prom,
		      IPFIX_BASE + k, RETIRED_BASE + k);
	free(text);
	free(shm);
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
