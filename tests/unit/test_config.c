/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the config parser (shared/config.c). Prints TAP; exits 1 when a case failed.
 * Usage: test_config <repo-root>
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spanbox/config.h"

static int tests, failures;
static const char *root;

/* Record one TAP result; returns @cond. */
__attribute__((format(printf, 2, 3)))
static bool check(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures += !cond;
	return cond;
}

/* Load <root>/<rel> into @cfg; a failure is reported as a failed case. */
static bool load(const char *rel, struct sbx_config *cfg)
{
	char path[1024], err[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (sbx_config_load(path, cfg, err, sizeof(err)) != 0) {
		check(false, "%s parses: %s", rel, err);
		return false;
	}
	return check(true, "%s parses", rel);
}

/* True when worker @w polls exactly the @n (port, queue) pairs given as varargs ints. */
static bool polls(const struct sbx_config *cfg, int w, int n, ...)
{
	const struct sbx_worker_cfg *wk = &cfg->workers[w];
	bool ok = wk->nb_rxq == n;
	va_list ap;
	int i, p, q;

	va_start(ap, n);
	for (i = 0; i < n; i++) {
		p = va_arg(ap, int);
		q = va_arg(ap, int);
		ok = ok && wk->rxq[i].port == p && wk->rxq[i].queue == q;
	}
	va_end(ap);
	return ok;
}

/* config/default.json: the embedded default. */
static void test_default(void)
{
	struct sbx_config cfg;
	const struct sbx_port_cfg *p = cfg.ports;

	if (!load("config/default.json", &cfg))
		return;
	check(!strcmp(cfg.file_prefix, "spanbox") && cfg.socket_mem_mb == 512 &&
		      cfg.primary_lcore == 0 && cfg.mgmt_lcore == 100 && !strcmp(cfg.cpus, "0-1") &&
		      cfg.nb_extra_eal == 0,
	      "default: eal section");
	check(cfg.pool_mbufs == 0 && cfg.pool_cache == 256, "default: pool section");
	check(cfg.nb_ports == 3 && !strcmp(p[0].name, "p0") && !strcmp(p[1].name, "p1") &&
		      !strcmp(p[2].name, "mirror") &&
		      !strcmp(p[0].devargs, "net_tap0,iface=sbx-p0") &&
		      !strcmp(p[1].devargs, "net_tap1,iface=sbx-p1") &&
		      !strcmp(p[2].devargs, "net_tap2,iface=sbx-mirror"),
	      "default: three ports p0, p1, mirror with their devargs");
	check(!strcmp(p[0].netns, "sbx-a") && !strcmp(p[1].netns, "sbx-b") && !p[2].netns[0] &&
		      !strcmp(p[0].address, "198.18.0.1/24") &&
		      !strcmp(p[1].address, "198.18.0.2/24") && !p[2].address[0],
	      "default: netns and addresses");
	check(p[0].kind == SBX_PORT_ETHDEV && p[1].kind == SBX_PORT_ETHDEV &&
		      p[2].kind == SBX_PORT_ETHDEV && !sbx_config_has_pci(&cfg) && p[0].mtu == 1500 &&
		      p[0].rx_desc == 1024 && p[0].tx_desc == 1024,
	      "default: ethdev ports, no PCI, default mtu and descriptors");
	check(cfg.nb_workers == 2 && cfg.workers[0].lcore_id == 1 && cfg.workers[1].lcore_id == 2 &&
		      cfg.burst == 32 && cfg.idle_sleep_us == 100 && cfg.idle_polls == 64 &&
		      !cfg.busy_poll,
	      "default: two workers on lcores 1 and 2");
	check(polls(&cfg, 0, 3, 0, 0, 1, 0, 2, 0) && polls(&cfg, 1, 3, 0, 1, 1, 1, 2, 1) &&
		      sbx_config_port_nb_rxq(&cfg, 0) == 2 && sbx_config_port_nb_rxq(&cfg, 2) == 2,
	      "default: worker w polls queue w of every port, 2 RX queues per port");
	check(cfg.nb_xconnects == 1 && cfg.xconnects[0].a == 0 && cfg.xconnects[0].b == 1,
	      "default: xconnect p0 <-> p1");
	check(!strcmp(cfg.mgmt_listen, "127.0.0.1") && cfg.mgmt_port == 8080 &&
		      !strcmp(cfg.mgmt_database, "/var/lib/spanbox/spanbox.db"),
	      "default: mgmt 127.0.0.1:8080");
	check(sbx_config_port_index(&cfg, "mirror") == 2 && sbx_config_port_index(&cfg, "p9") == -1,
	      "default: sbx_config_port_index");
}

/* The files in tests/configs/good. */
static void test_good(void)
{
	struct sbx_config cfg;
	const struct sbx_port_cfg *p = cfg.ports;

	if (load("tests/configs/good/minimal.json", &cfg)) {
		check(cfg.nb_ports == 1 && !strcmp(cfg.file_prefix, "spanbox") &&
			      cfg.socket_mem_mb == 512 && cfg.nb_workers == 2 &&
			      cfg.workers[0].lcore_id == 1 && cfg.workers[1].lcore_id == 2 &&
			      cfg.nb_xconnects == 0 && cfg.mgmt_port == 8080 && cfg.pool_cache == 256 &&
			      !p[0].netns[0] && !p[0].address[0] && p[0].mtu == 1500,
		      "minimal: defaults filled in");
		check(polls(&cfg, 0, 1, 0, 0) && polls(&cfg, 1, 1, 0, 1) &&
			      sbx_config_port_nb_rxq(&cfg, 0) == 2,
		      "minimal: default queues");
	}
	if (load("tests/configs/good/pcap_replay.json", &cfg)) {
		check(p[0].kind == SBX_PORT_BRIDGED && p[1].kind == SBX_PORT_BRIDGED &&
			      p[2].kind == SBX_PORT_ETHDEV && !sbx_config_has_pci(&cfg),
		      "pcap_replay: net_pcap and eth_pcap ports are bridged");
		check(sbx_config_port_nb_rxq(&cfg, 0) == 1 && sbx_config_port_nb_rxq(&cfg, 1) == 1 &&
			      sbx_config_port_nb_rxq(&cfg, 2) == 3,
		      "pcap_replay: bridged ports get 1 RX queue, the tap one per worker");
		check(polls(&cfg, 0, 3, 0, 0, 1, 0, 2, 0) && polls(&cfg, 1, 1, 2, 1) &&
			      polls(&cfg, 2, 1, 2, 2),
		      "pcap_replay: worker 0 polls the bridged ports");
		check(cfg.busy_poll && cfg.workers[2].lcore_id == 3 && p[2].mtu == 9000 &&
			      p[2].rx_desc == 512 && !strcmp(cfg.cpus, "2-3"),
		      "pcap_replay: explicit values");
	}
	if (load("tests/configs/good/explicit.json", &cfg)) {
		check(!strcmp(cfg.file_prefix, "sbx_lab-1") && cfg.socket_mem_mb == 2048 &&
			      cfg.primary_lcore == 4 && cfg.mgmt_lcore == 5 &&
			      !strcmp(cfg.cpus, "4-7,12") && cfg.nb_extra_eal == 2 &&
			      !strcmp(cfg.extra_eal[1], "--in-memory") && cfg.pool_mbufs == 65536 &&
			      cfg.pool_cache == 0,
		      "explicit: eal and pool");
		check(p[0].is_pci && p[1].is_pci && !p[2].is_pci && !p[3].is_pci &&
			      sbx_config_has_pci(&cfg) && p[2].kind == SBX_PORT_BRIDGED &&
			      p[0].mtu == 9600 && p[0].rx_desc == 4096 && p[0].tx_desc == 64,
		      "explicit: PCI ports detected");
		check(cfg.workers[0].lcore_id == 6 && cfg.workers[1].lcore_id == 3 &&
			      polls(&cfg, 0, 3, 0, 0, 1, 3, 2, 1) && polls(&cfg, 1, 2, 0, 1, 2, 0),
		      "explicit: lcores and queues");
		check(sbx_config_port_nb_rxq(&cfg, 0) == 2 && sbx_config_port_nb_rxq(&cfg, 1) == 4 &&
			      sbx_config_port_nb_rxq(&cfg, 2) == 2 && sbx_config_port_nb_rxq(&cfg, 3) == 1,
		      "explicit: nb_rxq is max queue + 1, at least 1");
		check(cfg.nb_xconnects == 2 && cfg.xconnects[1].a == 3 && cfg.xconnects[1].b == 2 &&
			      !strcmp(cfg.mgmt_listen, "::1") && cfg.mgmt_port == 65535 &&
			      cfg.burst == 256 && cfg.idle_sleep_us == 0 && cfg.idle_polls == 1000000,
		      "explicit: xconnects, mgmt, polling");
	}
	if (load("tests/configs/good/single_worker.json", &cfg))
		check(cfg.nb_workers == 1 && cfg.workers[0].lcore_id == 100 &&
			      cfg.workers[0].nb_rxq == 0 && sbx_config_port_nb_rxq(&cfg, 1) == 1,
		      "single_worker: default lcore skips mgmt_lcore, empty queue list");
}

/* Each bad file, the field its error must start with, and an optional substring of it. */
static const struct {
	const char *file, *field, *text;
} bad[] = {
	{"syntax.json", "config", "JSON syntax error at line 3 column 20"},
	{"trailing_garbage.json", "config", "JSON syntax error at line 4 column 1"},
	{"not_object.json", "config", "expected a JSON object"},
	{"unknown_top_key.json", "colour", "unknown key"},
	{"unknown_nested_key.json", "ports[0].speed", "unknown key"},
	{"duplicate_key.json", "ports[0].mtu", "duplicate key"},
	{"wrong_type.json", "workers.count", "expected an integer"},
	{"non_integer.json", "workers.count", "expected an integer"},
	{"busy_poll_type.json", "workers.busy_poll", "expected true or false"},
	{"mtu_range.json", "ports[0].mtu", "70000 out of range 68..9600"},
	{"pool_mbufs.json", "pool.mbufs", "out of range 1024..16777216"},
	{"empty_devargs.json", "ports[1].devargs", "must not be empty"},
	{"missing_name.json", "ports[0].name", "missing required key"},
	{"long_name.json", "ports[0].name", "longer than 31 characters"},
	{"bad_name_chars.json", "ports[0].name", "outside [A-Za-z0-9_-]"},
	{"dup_port_name.json", "ports[1].name", "duplicate port name"},
	{"missing_ports.json", "ports", "missing required key"},
	{"empty_ports.json", "ports", NULL},
	{"bad_address.json", "ports[0].address", "IPv4 CIDR"},
	{"bad_prefix.json", "ports[0].address", "IPv4 CIDR"},
	{"too_many_extra_args.json", "eal.extra_args", "9 entries, at most 8"},
	{"xconnect_unknown.json", "forwarding.xconnects[0][1]", "unknown port \"p9\""},
	{"xconnect_self.json", "forwarding.xconnects[0][1]", "itself"},
	{"xconnect_twice.json", "forwarding.xconnects[1][0]", "already in forwarding.xconnects[0]"},
	{"mgmt_is_primary.json", "eal.mgmt_lcore", NULL},
	{"dup_lcore.json", "workers.lcores[1]", "already used by worker 0"},
	{"worker_on_mgmt_lcore.json", "workers.lcores[1]", "eal.mgmt_lcore"},
	{"lcores_count.json", "workers.lcores", "expected workers.count = 3"},
	{"queue_twice.json", "workers.queues[1][0]", "p0 queue 0 is already polled by worker 0"},
	{"queue_unknown_port.json", "workers.queues[0][0].port", "unknown port"},
	{"bridged_queue.json", "workers.queues[1][0].queue", "out of range 0..1"},
	{"mirrors_not_array.json", "mirrors", "expected an array"},
	{"mgmt_listen.json", "mgmt.listen", NULL},
	{"does_not_exist.json", "config", "does_not_exist.json: No such file or directory"},
};

/* The files in tests/configs/bad: each fails with rc -1 and an error naming the expected field. */
static void test_bad(void)
{
	char path[1024], err[512];
	struct sbx_config cfg;
	struct dirent *d;
	size_t i, n;
	DIR *dir;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(path, sizeof(path), "%s/tests/configs/bad/%s", root, bad[i].file);
		strcpy(err, "(no message)");
		rc = sbx_config_load(path, &cfg, err, sizeof(err));
		n = strlen(bad[i].field);
		check(rc == -1 && !strncmp(err, bad[i].field, n) && err[n] == ':' && err[n + 1] == ' ' &&
			      (!bad[i].text || strstr(err, bad[i].text)),
		      "bad/%s: rc %d, \"%s\"", bad[i].file, rc, err);
	}
	/* every file in bad/ must have an expectation */
	snprintf(path, sizeof(path), "%s/tests/configs/bad", root);
	dir = opendir(path);
	if (!check(dir != NULL, "bad/ directory readable"))
		return;
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] == '.')
			continue;
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]) && strcmp(bad[i].file, d->d_name); i++)
			;
		check(i < sizeof(bad) / sizeof(bad[0]), "bad/%s has an expected error", d->d_name);
	}
	closedir(dir);
}

/* In-memory parsing: defaults of "{ports}" and small edge cases not worth a file. */
static void test_inline(void)
{
	struct sbx_config cfg;
	char err[256];
	char small[24];

	check(sbx_config_parse("", &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "config: JSON syntax error at line 1 column 1"),
	      "empty text is a syntax error at 1:1 (%s)", err);
	check(sbx_config_parse("{\"ports\":[{\"name\":\"a\",\"devargs\":\"x\",\"mtu\":1e30}]}", &cfg,
			       err, sizeof(err)) == -1 &&
		      !strcmp(err, "ports[0].mtu: 1e+30 out of range 68..9600"),
	      "huge number refused (%s)", err);
	check(sbx_config_parse("{\"ports\":[{\"name\":\"a\",\"devargs\":\"x\",\"mtu\":1500.0}]}", &cfg,
			       err, sizeof(err)) == 0 && cfg.ports[0].mtu == 1500,
	      "1500.0 is a whole number");
	check(sbx_config_parse("{\"ports\":[{\"name\":\"a\",\"devargs\":\"x\"}],\"eal\":5}", &cfg,
			       err, sizeof(err)) == -1 &&
		      !strcmp(err, "eal: expected an object"),
	      "section of the wrong type (%s)", err);
	check(sbx_config_parse("{\"ports\":[{\"name\":\"a\",\"devargs\":\"x\"}],"
			       "\"forwarding\":{\"xconnects\":[[\"a\"]]}}",
			       &cfg, err, sizeof(err)) == -1 &&
		      !strncmp(err, "forwarding.xconnects[0]: ", 25),
	      "xconnect with one port (%s)", err);
	check(sbx_config_parse("{\"ports\":[{\"name\":\"a\",\"devargs\":\"x\"}],"
			       "\"workers\":{\"count\":1,\"queues\":[[{\"port\":\"a\",\"queue\":16}]]}}",
			       &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "workers.queues[0][0].queue: 16 out of range 0..15"),
	      "queue id above 15 (%s)", err);
	check(sbx_config_parse("{\"eal\":{\"primary_lcore\":127},\"ports\":[{\"name\":\"a\",\"devargs\":\"x\"}]}",
			       &cfg, err, sizeof(err)) == -1 &&
		      !strncmp(err, "workers.lcores: ", 16),
	      "default worker lcores past 127 (%s)", err);
	check(sbx_config_parse("{\"mgmt\":{\"listen\":\"::\"},\"ports\":[{\"name\":\"a\",\"devargs\":\"x\"}]}",
			       &cfg, err, sizeof(err)) == 0,
	      "IPv6 wildcard listen accepted");
	check(sbx_config_parse("{\"ports\":[{\"name\":\"a\",\"devargs\":\"0000:0g:00.0\"},"
			       "{\"name\":\"b\",\"devargs\":\"00:1f.7,x=1\"}]}",
			       &cfg, err, sizeof(err)) == 0 && !cfg.ports[0].is_pci && cfg.ports[1].is_pci,
	      "PCI address detection");
	check(sbx_config_parse("{\"a_rather_long_unknown_key\":1}", &cfg, small, sizeof(small)) == -1 &&
		      strlen(small) == sizeof(small) - 1,
	      "error message truncated to errlen (%s)", small);
	check(sbx_config_parse("{}", &cfg, NULL, 0) == -1, "NULL error buffer is allowed");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s <repo-root>\n", argv[0]);
		return 2;
	}
	root = argv[1];
	test_default();
	test_good();
	test_bad();
	test_inline();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
