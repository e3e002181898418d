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
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_config.h>

#include "spanbox/config.h"
#include "tap.h"

static const char *root;

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
	check(cfg.pool_mbufs == 0 && cfg.pool_cache == 256 && cfg.pool_headroom == 2048 &&
		      !cfg.pool_force && !cfg.pool_measure_memset,
	      "default: pool section");
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
	check(cfg.nb_standby == 1 && cfg.standby_lcores[0] == 3,
	      "default: one standby, on lcore 3 (the next free id: not 0, 1, 2 or 100)");
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
	check(cfg.nb_mirrors == 0, "default: no mirror session");
}

/* True when @got holds the @n bytes given as varargs ints, then zeros up to @size. */
static bool bytes(const uint8_t *got, size_t size, size_t n, ...)
{
	bool ok = true;
	va_list ap;
	size_t i;

	va_start(ap, n);
	for (i = 0; i < size; i++)
		ok = ok && got[i] == (i < n ? va_arg(ap, int) : 0);
	va_end(ap);
	return ok;
}

/* tests/configs/good/mirrors.json: one session of each encap kind, every value checked. */
static void test_mirrors(void)
{
	static struct sbx_config cfg;
	const struct sbx_mirror_cfg *m = cfg.mirrors;

	if (!load("tests/configs/good/mirrors.json", &cfg))
		return;
	check(cfg.nb_mirrors == 3, "mirrors: 3 sessions (%u)", cfg.nb_mirrors);

	/* 0: ERSPAN II over IPv4, filter, snaplen, defaults elsewhere */
	check(m[0].id == 10 && !strcmp(m[0].name, "web") && m[0].nb_sources == 1 &&
		      m[0].sources[0].port == 0 && m[0].sources[0].direction == SBX_DIR_BOTH &&
		      !strcmp(m[0].filter, "tcp port 80") && m[0].snaplen == 128 && m[0].sample == 1 &&
		      m[0].dst_port == 4,
	      "mirrors[0]: id, name, source p0 both ways (default), filter, snaplen, sample 1, "
	      "destination");
	check(m[0].encap == SBX_ENCAP_ERSPAN2 && m[0].ip_version == 4 &&
		      bytes(m[0].src_ip, 16, 4, 192, 0, 2, 1) &&
		      bytes(m[0].dst_ip, 16, 4, 198, 51, 100, 7) &&
		      bytes(m[0].dst_mac, 6, 6, 0x02, 0x00, 0x5e, 0x10, 0x00, 0x01) &&
		      !m[0].src_mac_set && bytes(m[0].src_mac, 6, 0),
	      "mirrors[0]: erspan2, IPv4 bytes, dst_mac, no src_mac");
	check(m[0].ttl == 64 && m[0].dscp == 0 && m[0].df && m[0].gra == SBX_GRA_100US &&
		      m[0].hw_id == 0 && m[0].sgt == 0 && !m[0].platform_subheader && m[0].vlan == 0,
	      "mirrors[0]: defaults ttl 64, dscp 0, df true");
	check(m[0].copy_strategy == SBX_COPY_ADAPTIVE && m[0].copy_threshold == 512,
	      "mirrors[0]: default copy adaptive, threshold 512");

	/* 1: ERSPAN III over IPv6, every encap key given */
	check(m[1].id == 1023 && !strcmp(m[1].name, "session-1023") && m[1].nb_sources == 2 &&
		      m[1].sources[0].port == 0 && m[1].sources[0].direction == SBX_DIR_RX &&
		      m[1].sources[1].port == 1 && m[1].sources[1].direction == SBX_DIR_TX &&
		      !m[1].filter[0] && m[1].snaplen == 0 && m[1].sample == 100 && m[1].dst_port == 4,
	      "mirrors[1]: id 1023, default name, sources rx/tx, no filter, whole frame, sample 100");
	check(m[1].encap == SBX_ENCAP_ERSPAN3 && m[1].ip_version == 6 &&
		      bytes(m[1].src_ip, 16, 16, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			    0, 1) &&
		      bytes(m[1].dst_ip, 16, 16, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
			    0xbe, 0xef),
	      "mirrors[1]: erspan3, IPv6 bytes");
	check(bytes(m[1].dst_mac, 6, 6, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff) && m[1].src_mac_set &&
		      bytes(m[1].src_mac, 6, 6, 0x02, 0, 0, 0, 0, 0x2a),
	      "mirrors[1]: mixed-case dst_mac, src_mac set");
	check(m[1].ttl == 10 && m[1].dscp == 46 && !m[1].df && m[1].gra == SBX_GRA_100NS &&
		      m[1].hw_id == 63 && m[1].sgt == 65535 && m[1].platform_subheader,
	      "mirrors[1]: ttl, dscp, df false, granularity 100ns, hw_id, sgt, platform_subheader");
	check(m[1].copy_strategy == SBX_COPY_SHARE && m[1].copy_threshold == 512,
	      "mirrors[1]: copy share, default threshold");

	/* 2: RSPAN */
	check(m[2].id == 1 && !strcmp(m[2].name, "lab_rspan-1") && m[2].nb_sources == 2 &&
		      m[2].sources[0].port == 2 && m[2].sources[0].direction == SBX_DIR_BOTH &&
		      m[2].sources[1].port == 3 && m[2].sources[1].direction == SBX_DIR_RX &&
		      !m[2].filter[0] && m[2].snaplen == 14 && m[2].sample == 1000000 &&
		      m[2].dst_port == 5,
	      "mirrors[2]: sources, empty filter, snaplen 14, sample 1000000, destination trunk");
	check(m[2].encap == SBX_ENCAP_RSPAN && m[2].vlan == 865 && m[2].ip_version == 0 &&
		      bytes(m[2].src_ip, 16, 0) && bytes(m[2].dst_ip, 16, 0) && !m[2].src_mac_set &&
		      m[2].copy_strategy == SBX_COPY_COPY && m[2].copy_threshold == 0,
	      "mirrors[2]: rspan vlan 865, no IP, copy strategy copy, threshold 0");
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
			      !p[0].netns[0] && !p[0].address[0] && p[0].mtu == 1500 &&
			      cfg.nb_mirrors == 0,
		      "minimal: defaults filled in");
		check(polls(&cfg, 0, 1, 0, 0) && polls(&cfg, 1, 1, 0, 1) &&
			      sbx_config_port_nb_rxq(&cfg, 0) == 2,
		      "minimal: default queues");
	}
	if (load("tests/configs/good/maps.json", &cfg)) /* also the running config of fuzz_rest's map routes */
		check(cfg.nb_maps == 3 && cfg.maps[0].s.id == 40 && cfg.maps[0].nb_rules == 7 && cfg.maps[1].nb_rules == 2 &&
			      !strcmp(cfg.maps[1].s.filter, "tcp") && cfg.maps[2].collector && cfg.maps[2].nb_rules == 0,
		      "maps: three maps, their rules, a filter and a collector");
	if (load("tests/configs/good/pcap_replay.json", &cfg)) {
		check(p[0].kind == SBX_PORT_PCAP_FILE && p[1].kind == SBX_PORT_PCAP_FILE &&
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
			      sbx_config_has_pci(&cfg) && p[2].kind == SBX_PORT_PCAP_FILE &&
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
			      cfg.burst == 256 && cfg.idle_sleep_us == 0 && cfg.idle_polls == 1000000 &&
			      cfg.nb_mirrors == 0,
		      "explicit: xconnects, mgmt, polling");
	}
	if (load("tests/configs/good/single_worker.json", &cfg))
		check(cfg.nb_workers == 1 && cfg.workers[0].lcore_id == 100 &&
			      cfg.workers[0].nb_rxq == 0 && sbx_config_port_nb_rxq(&cfg, 1) == 1 &&
			      cfg.nb_mirrors == 0,
		      "single_worker: default lcore skips mgmt_lcore, empty queue list, mirrors []");
	if (load("tests/configs/good/ingress.json", &cfg)) {
		const struct sbx_ingress_cfg *a = &p[0].ingress, *b = &p[1].ingress;
		const struct sbx_decap_rule *r = a->decap;
		static const uint8_t v6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 0x10};

		check(a->nb_decap == 4 && r[0].type == SBX_DECAP_ERSPAN && r[0].nb_ids == 2 && r[0].ids[0] == 865 &&
			      r[0].ids[1] == 866 && r[0].local_af == 4 && !memcmp(r[0].local_ip, "\xc0\x00\x02\x0a", 4) &&
			      !r[0].strip_fcs && r[0].udp_port == 0,
		      "ingress: erspan rule with sessions and an IPv4 local_ip");
		check(r[1].type == SBX_DECAP_VXLAN && r[1].udp_port == 4789 && r[1].nb_ids == 2 &&
			      r[1].ids[1] == 16777215 && r[1].local_af == 0 &&
			      r[2].type == SBX_DECAP_GRE && r[2].local_af == 6 && !memcmp(r[2].local_ip, v6, 16) &&
			      r[2].strip_fcs && r[2].nb_ids == 0 && r[3].type == SBX_DECAP_ERSPAN && r[3].nb_ids == 0,
		      "ingress: vxlan, gre (IPv6 local_ip, strip_fcs) and a catch-all erspan rule after a narrower one");
		check(a->non_tunnel == SBX_NON_TUNNEL_DROP && a->strip == (SBX_STRIP_VLAN | SBX_STRIP_MPLS) &&
			      a->tag_vlan == 101 && a->dedup_window_us == 1000 &&
			      a->dedup_ignore == (SBX_DEDUP_IGNORE_TTL | SBX_DEDUP_IGNORE_IP_CHECKSUM | SBX_DEDUP_IGNORE_DSCP) &&
			      a->dedup_entries == SBX_DEDUP_ENTRIES_DEFAULT,
		      "ingress: non_tunnel, strip, tag, dedup (default entries %u)", a->dedup_entries);
		check(p[1].kind == SBX_PORT_PCAP_FILE && b->nb_decap == 0 && b->non_tunnel == SBX_NON_TUNNEL_PASS &&
			      b->strip == SBX_STRIP_MPLS && b->tag_vlan == 4094 && b->dedup_window_us == 1000000 &&
			      b->dedup_ignore == 0 && b->dedup_entries == 1024,
		      "ingress on a pcap file port (bridged: workers get its frames through rings)");
		check(!memcmp(&p[2].ingress, &(struct sbx_ingress_cfg){0}, sizeof(p[2].ingress)),
		      "a port without ingress has an all-zero ingress");
	}
	if (load("tests/configs/good/mirror_dst_forwards_allowed.json", &cfg))
		check(cfg.nb_mirrors == 1 && cfg.mirrors[0].dst_port == 2,
		      "a destination that forwards is accepted with destination.allow_forwarding");
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
	{"standby_on_worker_lcore.json", "workers.standby_lcores[0]", "lcore 4 is already used by worker 1"},
	{"standby_on_primary_lcore.json", "workers.standby_lcores[0]", "lcore 0 is already eal.primary_lcore"},
	{"standby_on_mgmt_lcore.json", "workers.standby_lcores[0]", "lcore 100 is already eal.mgmt_lcore"},
	{"standby_dup_lcore.json", "workers.standby_lcores[1]", "lcore 5 is already used by standby 0"},
	{"standby_lcores_count.json", "workers.standby_lcores", "1 entries, expected workers.standby = 2"},
	{"standby_range.json", "workers.standby", "5 out of range 0..4"},
	{"queue_twice.json", "workers.queues[1][0]", "p0 queue 0 is already polled by worker 0"},
	{"queue_unknown_port.json", "workers.queues[0][0].port", "unknown port"},
	{"bridged_queue.json", "workers.queues[1][0].queue", "out of range 0..1"},
	{"mirrors_not_array.json", "mirrors", "expected an array"},
	{"mgmt_listen.json", "mgmt.listen", NULL},
	{"mirror_17_sessions.json", "mirrors", "17 entries, at most 16"},
	{"mirror_bad_filter.json", "mirrors[0].filter", "\"tcp prt 80\": "},
	{"mirror_dup_id.json", "mirrors[1].id", "duplicate session id 7 (see mirrors[0])"},
	{"mirror_dup_name.json", "mirrors[1].name", "duplicate session name \"tap\""},
	{"mirror_id_zero.json", "mirrors[0].id", "0 out of range 1..1023"},
	{"mirror_id_1024.json", "mirrors[0].id", "1024 out of range 1..1023"},
	{"mirror_missing_id.json", "mirrors[0].id", "missing required key"},
	{"mirror_unknown_source.json", "mirrors[0].sources[1].port", "unknown port \"p9\""},
	{"mirror_source_twice.json", "mirrors[0].sources[2].port", "p0 is already mirrors[0].sources[0]"},
	{"mirror_no_sources.json", "mirrors[0].sources", "at least one source"},
	{"mirror_dst_is_source.json", "mirrors[0].destination.port",
	 "mon is also a source of this session (mirror loop)"},
	{"mirror_no_destination.json", "mirrors[0].destination", "missing required key"},
	{"mirror_dst_forwards.json", "mirrors[0].destination.port",
	 "p2 forwards traffic (forwarding.xconnects[0]): mirror copies would be mixed into it"},
	{"mirror_erspan2_no_dst_ip.json", "mirrors[0].encap.dst_ip", "missing required key"},
	{"mirror_mixed_ip.json", "mirrors[0].encap.dst_ip", "is IPv6 but src_ip \"192.0.2.1\" is IPv4"},
	{"mirror_bad_ip.json", "mirrors[0].encap.src_ip", "not an IPv4 or IPv6 address"},
	{"mirror_bad_mac.json", "mirrors[0].encap.dst_mac", "not a MAC address"},
	{"mirror_vlan_on_erspan2.json", "mirrors[0].encap.vlan", "only for rspan"},
	{"mirror_rspan_no_vlan.json", "mirrors[0].encap.vlan", "missing required key"},
	{"mirror_vlan_range.json", "mirrors[0].encap.vlan", "4095 out of range 1..4094"},
	{"mirror_sgt_on_erspan2.json", "mirrors[1].encap.sgt", "only for erspan3"},
	{"mirror_ttl_on_span.json", "mirrors[0].encap.ttl", "only for erspan2, erspan3 and vxlan"},
	{"mirror_vxlan_vni_range.json", "mirrors[0].encap.vni", "16777216 out of range 0..16777215"},
	{"mirror_vxlan_udp_port_zero.json", "mirrors[0].encap.udp_port", "0 out of range 1..65535"},
	{"mirror_bad_encap_type.json", "mirrors[0].encap.type", "\"gre\" is not one of"},
	{"mirror_bad_direction.json", "mirrors[0].sources[0].direction",
	 "\"in\" is not one of \"rx\", \"tx\", \"both\""},
	{"mirror_bad_strategy.json", "mirrors[0].copy.strategy", "\"clone\" is not one of"},
	{"mirror_snaplen_small.json", "mirrors[0].snaplen", "13 out of range 14..65535"},
	{"mirror_sample_zero.json", "mirrors[0].sample", "0 out of range 1..1000000"},
	{"mirror_unknown_key.json", "mirrors[0].encap.key", "unknown key"},
	{"pcap_tx_twice.json", "ports[1].devargs",
	 "tx_pcap \"/tmp/../tmp/sbx-bad-out.pcap\" is also the tx_pcap of ports[0]"},
	{"pcap_tx_is_rx.json", "ports[1].devargs", "tx_pcap \"/tmp//sbx-bad-in.pcap\" is the rx_pcap of ports[0]"},
	{"pcap_rx_is_earlier_tx.json", "ports[1].devargs",
	 "rx_pcap \"/tmp/./sbx-bad-loop.pcap\" is the tx_pcap of ports[0]"},
	{"pcap_tx_is_own_rx.json", "ports[0].devargs", "tx_pcap \"/tmp/sbx-bad-self.pcap\" is the rx_pcap of ports[0]"},
	{"pcap_tx_is_database.json", "ports[0].devargs", "tx_pcap \"/tmp/sbx-bad.db\" is mgmt.database"},
	{"pcap_tx_is_token_file.json", "ports[1].devargs", "tx_pcap \"/tmp/sbx-bad.db.token\" is mgmt.token_file"},
	{"devargs_pcap_infinite_rx.json", "ports[0].devargs", "net_pcap key \"infinite_rx\""},
	{"devargs_tap_misspelled.json", "ports[0].devargs", "unknown net_tap key \"ifname\""},
	{"extra_args_file_prefix.json", "eal.extra_args[1]", "\"--file-prefix=other\": spanbox sets --file-prefix itself"},
	{"ingress_sessions_on_vxlan.json", "ports[0].ingress.decap[0].sessions", "only for erspan"},
	{"ingress_vnis_on_erspan.json", "ports[0].ingress.decap[1].vnis", "only for vxlan"},
	{"ingress_too_many_rules.json", "ports[0].ingress.decap", "17 entries, at most 16"},
	{"ingress_session_range.json", "ports[0].ingress.decap[0].sessions[1]", "1024 out of range 0..1023"},
	{"ingress_dup_vni.json", "ports[0].ingress.decap[0].vnis[2]", "7 given twice (see vnis[0])"},
	{"ingress_shadowed_rule.json", "ports[0].ingress.decap[1]", "never matches: ingress.decap[0] takes every frame"},
	{"ingress_unknown_key.json", "ports[0].ingress.decap[0].key", "unknown key"},
	{"ingress_bad_type.json", "ports[0].ingress.decap[0].type", "\"nvgre\" is not one of \"erspan\", \"vxlan\", \"gre\", \"geneve\", \"gtpu\""},
	{"ingress_tag_range.json", "ports[0].ingress.tag.vlan", "4095 out of range 1..4094"},
	{"ingress_dedup_entries.json", "ports[0].ingress.dedup.entries", "3000 is not a power of two"},
	{"ingress_strip_twice.json", "ports[0].ingress.strip[2]", "\"mpls\" given twice"},
	{"ingress_non_tunnel_no_decap.json", "ports[0].ingress.non_tunnel", "only with ingress.decap rules"},
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

/* The bad filter's message carries libpcap's own error text, whatever the libpcap version. */
static void test_bad_filter_text(void)
{
	char path[1024], err[512], want[512] = "(libpcap accepted it)";
	struct bpf_program prog = {0, NULL};
	struct sbx_config cfg;
	pcap_t *p;

	p = pcap_open_dead(DLT_EN10MB, 65535);
	if (!check(p != NULL, "pcap_open_dead"))
		return;
	if (check(pcap_compile(p, &prog, "tcp prt 80", 1, PCAP_NETMASK_UNKNOWN) != 0,
		  "libpcap refuses \"tcp prt 80\""))
		snprintf(want, sizeof(want), "mirrors[0].filter: \"tcp prt 80\": %s", pcap_geterr(p));
	pcap_freecode(&prog);
	pcap_close(p);
	snprintf(path, sizeof(path), "%s/tests/configs/bad/mirror_bad_filter.json", root);
	check(sbx_config_load(path, &cfg, err, sizeof(err)) == -1 && !strcmp(err, want),
	      "bad filter message \"%s\" is \"%s\"", err, want);
}

/* A config with ports a, b, c, d and the mirror sessions @mirrors (JSON array text). */
static int parse_mirrors(const char *mirrors, struct sbx_config *cfg, char *err, size_t errlen)
{
	char text[8192];

	snprintf(text, sizeof(text),
		 "{\"ports\":[{\"name\":\"a\",\"devargs\":\"x0\"},{\"name\":\"b\",\"devargs\":\"x1\"},"
		 "{\"name\":\"c\",\"devargs\":\"x2\"},{\"name\":\"d\",\"devargs\":\"x3\"}],"
		 "\"mirrors\":%s}",
		 mirrors);
	return sbx_config_parse(text, cfg, err, errlen);
}

#define SESSION "\"sources\":[{\"port\":\"a\"}],\"destination\":{\"port\":\"d\"}"

/* sbx_direction_name(): the name of each direction the parser stores is the one it was given
 * (the answers of GET /mirrors, /captures, /maps and /flows/config spell directions with it). */
static void test_direction_names(void)
{
	static const char *const names[] = { "rx", "tx", "both" };
	static struct sbx_config cfg;
	char err[512] = "", text[512];

	for (unsigned int i = 0; i < 3; i++) {
		snprintf(text, sizeof(text),
			 "[{\"id\":1,\"sources\":[{\"port\":\"a\",\"direction\":\"%s\"}],\"destination\":{\"port\":\"d\"}}]",
			 names[i]);
		int rc = parse_mirrors(text, &cfg, err, sizeof(err));
		const char *name = rc == 0 ? sbx_direction_name(cfg.mirrors[0].sources[0].direction) : "(refused)";

		check(rc == 0 && strcmp(name, names[i]) == 0, "direction %s: parsed and named %s (%s)", names[i], name,
		      err);
	}
	check(strcmp(sbx_direction_name(0), "unknown") == 0 && strcmp(sbx_direction_name(4), "unknown") == 0,
	      "direction name of a value out of range: unknown");
}

/* mirrors[].timestamp (issue #26): formats, metamako's device_id and port, refusals naming the key. */
static void test_mirror_timestamp(void)
{
	static struct sbx_config cfg;
	char err[512];

	check(parse_mirrors("[{\"id\":1," SESSION "},{\"id\":2," SESSION ",\"timestamp\":{\"format\":\"arista64\"}},"
			    "{\"id\":3," SESSION ",\"timestamp\":{\"format\":\"metamako\",\"device_id\":65535,"
			    "\"port\":255}},{\"id\":4," SESSION ",\"timestamp\":{\"format\":\"metamako\"}}]",
			    &cfg, err, sizeof(err)) == 0 &&
		      cfg.mirrors[0].ts_format == SBX_TS_NONE && cfg.mirrors[1].ts_format == SBX_TS_ARISTA64 &&
		      cfg.mirrors[2].ts_format == SBX_TS_METAMAKO && cfg.mirrors[2].ts_device == 65535 &&
		      cfg.mirrors[2].ts_port == 255 && cfg.mirrors[2].ts_port_set && cfg.mirrors[3].ts_device == 0 &&
		      !cfg.mirrors[3].ts_port_set,
	      "timestamp: none by default, arista64, metamako with and without device_id/port (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"timestamp\":{\"format\":\"arista48\"}}]", &cfg, err,
			    sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].timestamp.format: \"arista48\" is not one of \"arista64\", \"metamako\""),
	      "timestamp: unknown format refused (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"mask\":{\"from\":\"l4\",\"length\":8},"
			    "\"timestamp\":{\"format\":\"arista64\"}}]", &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].timestamp: a session with a mask cannot have a timestamp too (one or "
			      "the other)"),
	      "timestamp: not with a mask in the same session (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"timestamp\":{}}]", &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].timestamp.format: missing required key"),
	      "timestamp: format required (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"timestamp\":{\"format\":\"arista64\",\"port\":1}}]", &cfg,
			    err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].timestamp.port: only for metamako"),
	      "timestamp: port only for metamako (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"timestamp\":{\"format\":\"metamako\",\"device_id\":65536}}]",
			    &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].timestamp.device_id: 65536 out of range 0..65535"),
	      "timestamp: device_id above 65535 (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"timestamp\":{\"format\":\"metamako\",\"port\":256}}]",
			    &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].timestamp.port: 256 out of range 0..255"),
	      "timestamp: port above 255 (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"timestamp\":{\"format\":\"metamako\",\"tz\":1}}]", &cfg,
			    err, sizeof(err)) == -1 &&
		      strncmp(err, "mirrors[0].timestamp.tz: ", 25) == 0,
	      "timestamp: unknown key refused (%s)", err);
	check(parse_mirrors("[{\"id\":1,\"sources\":[{\"port\":\"a\"}],\"destination\":{\"recorder\":{}},"
			    "\"timestamp\":{\"format\":\"arista64\"}}]", &cfg, err, sizeof(err)) == -1 &&
		      strstr(err, "no timestamp") != NULL,
	      "timestamp: not with a recorder destination (%s)", err);
}

/* Mirror edge cases not worth a file. */
static void test_mirrors_inline(void)
{
	static struct sbx_config cfg;
	char err[512], text[4096], filter[300];
	size_t n;
	int i;

	check(parse_mirrors("[]", &cfg, err, sizeof(err)) == 0 && cfg.nb_mirrors == 0,
	      "mirrors: empty array");
	for (n = 0, i = 1; i <= 16; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s{\"id\":%d," SESSION "}",
				      i > 1 ? "," : "[", i);
	snprintf(text + n, sizeof(text) - n, "]");
	check(parse_mirrors(text, &cfg, err, sizeof(err)) == 0 && cfg.nb_mirrors == 16 &&
		      !strcmp(cfg.mirrors[15].name, "session-16") && cfg.mirrors[15].encap == SBX_ENCAP_SPAN &&
		      cfg.mirrors[15].sample == 1 && cfg.mirrors[15].copy_threshold == 512,
	      "mirrors: 16 sessions accepted, span by default (%s)", err);
	check(parse_mirrors("[{\"id\":1,\"name\":\"session-2\"," SESSION "},{\"id\":2," SESSION "}]",
			    &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[1].name: duplicate session name \"session-2\" (see mirrors[0])"),
	      "mirrors: default name clashing with a given one (%s)", err);
	check(parse_mirrors("[5]", &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0]: expected an object"),
	      "mirrors: session not an object (%s)", err);
	check(parse_mirrors("[{\"id\":1,\"sources\":[\"a\"],\"destination\":{\"port\":\"d\"}}]",
			    &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].sources[0]: expected an object"),
	      "mirrors: source not an object (%s)", err);
	{
		static char many[64 * 20 + 128];
		size_t n = (size_t)snprintf(many, sizeof(many), "[{\"id\":1,\"sources\":[");

		for (int k = 0; k < 65; k++)
			n += (size_t)snprintf(many + n, sizeof(many) - n, "%s{\"port\":\"%c\"}", k ? "," : "", "abc"[k % 3]);
		snprintf(many + n, sizeof(many) - n, "],\"destination\":{\"port\":\"d\"}}]");
		check(parse_mirrors(many, &cfg, err, sizeof(err)) == -1 &&
			      !strcmp(err, "mirrors[0].sources: 65 entries, at most 64"),
		      "mirrors: 65 sources (%s)", err);
	}
	check(parse_mirrors("[{\"id\":1," SESSION ",\"destination\":{\"port\":\"d\"}}]", &cfg, err,
			    sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].destination: duplicate key"),
	      "mirrors: destination twice (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"snaplen\":65536}]", &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].snaplen: 65536 out of range 0..65535"),
	      "mirrors: snaplen above 65535 (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION "},{\"id\":2,\"oversize\":\"drop\"," SESSION "}]", &cfg, err,
			    sizeof(err)) == 0 &&
		      cfg.mirrors[0].oversize == SBX_OVERSIZE_TRUNCATE && cfg.mirrors[1].oversize == SBX_OVERSIZE_DROP,
	      "mirrors: oversize truncate by default, drop when asked (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"oversize\":\"cut\"}]", &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].oversize: \"cut\" is not one of \"truncate\", \"drop\""),
	      "mirrors: oversize \"cut\" refused (%s)", err);
	/* mask (issue #26) */
	check(parse_mirrors("[{\"id\":1," SESSION ",\"mask\":{\"from\":\"inner_l4\",\"offset\":8,\"length\":9600,"
			    "\"pattern\":255}},{\"id\":2," SESSION "}]", &cfg, err, sizeof(err)) == 0 &&
		      cfg.mirrors[0].mask.from == SBX_MASK_INNER_L4 && cfg.mirrors[0].mask.offset == 8 &&
		      cfg.mirrors[0].mask.length == 9600 && cfg.mirrors[0].mask.pattern == 255 &&
		      cfg.mirrors[1].mask.from == SBX_MASK_OFF,
	      "mirrors: mask parsed, none by default (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"mask\":{\"from\":\"l4\",\"length\":4}}]", &cfg, err,
			    sizeof(err)) == 0 && cfg.mirrors[0].mask.offset == 0 && cfg.mirrors[0].mask.pattern == 0,
	      "mirrors: mask offset and pattern default to 0 (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"mask\":{\"from\":\"l5\",\"length\":4}}]", &cfg, err,
			    sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].mask.from: \"l5\" is not one of \"l2\", \"l3\", \"l4\", \"inner_l3\", "
			      "\"inner_l4\""),
	      "mirrors: mask.from l5 refused (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"mask\":{\"from\":\"l2\",\"length\":9601}}]", &cfg, err,
			    sizeof(err)) == -1 && !strcmp(err, "mirrors[0].mask.length: 9601 out of range 1..9600"),
	      "mirrors: mask.length 9601 refused (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"mask\":{\"from\":\"l2\",\"length\":1,\"pattern\":256}}]",
			    &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].mask.pattern: 256 out of range 0..255"),
	      "mirrors: mask.pattern 256 refused (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"mask\":{\"from\":\"l2\"}}]", &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].mask.length: missing required key"),
	      "mirrors: mask without length refused (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"mask\":{\"from\":\"l2\",\"length\":1,\"regions\":2}}]",
			    &cfg, err, sizeof(err)) == -1 && !strcmp(err, "mirrors[0].mask.regions: unknown key"),
	      "mirrors: unknown mask key refused (%s)", err);
	check(parse_mirrors("[{\"id\":1,\"sources\":[{\"port\":\"a\"}],\"destination\":{\"recorder\":{}},"
			    "\"mask\":{\"from\":\"l2\",\"length\":1}}]", &cfg, err, sizeof(err)) == -1 &&
		      !strncmp(err, "mirrors[0].mask: not with a recorder destination", 48),
	      "mirrors: mask with a recorder refused (%s)", err);
	memset(filter, 'x', 256);
	filter[256] = '\0';
	snprintf(text, sizeof(text), "[{\"id\":1," SESSION ",\"filter\":\"%s\"}]", filter);
	check(parse_mirrors(text, &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].filter: longer than 255 characters"),
	      "mirrors: 256-character filter (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"filter\":\"vlan 10 and (udp or icmp6)\"}]", &cfg,
			    err, sizeof(err)) == 0 &&
		      !strcmp(cfg.mirrors[0].filter, "vlan 10 and (udp or icmp6)"),
	      "mirrors: vlan filter compiles (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"encap\":{\"type\":\"rspan\",\"vlan\":4094}},"
			    "{\"id\":2," SESSION ",\"encap\":{\"type\":\"rspan\",\"vlan\":1}}]",
			    &cfg, err, sizeof(err)) == 0 &&
		      cfg.mirrors[0].vlan == 4094 && cfg.mirrors[1].vlan == 1,
	      "mirrors: rspan vlan 1 and 4094 (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"encap\":{\"type\":\"rspan\",\"vlan\":2,"
			    "\"dst_ip\":\"1.2.3.4\"}}]",
			    &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].encap.dst_ip: only for erspan2, erspan3 and vxlan"),
	      "mirrors: dst_ip on rspan (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"encap\":{\"type\":\"erspan2\",\"src_ip\":\"10.0.0.1\","
			    "\"dst_ip\":\"10.0.0.2\",\"dst_mac\":\"00:00:00:00:00:01\",\"granularity\":\"100us\"}}]",
			    &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].encap.granularity: only for erspan3"),
	      "mirrors: granularity on erspan2 (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"encap\":{\"type\":\"erspan3\",\"src_ip\":\"10.0.0.1\","
			    "\"dst_ip\":\"10.0.0.2\",\"dst_mac\":\"00:00:00:00:00:01\","
			    "\"granularity\":\"ieee1588\",\"dscp\":63,\"ttl\":255}}]",
			    &cfg, err, sizeof(err)) == 0 &&
		      cfg.mirrors[0].ip_version == 4 && cfg.mirrors[0].gra == SBX_GRA_IEEE1588 &&
		      cfg.mirrors[0].dscp == 63 && cfg.mirrors[0].ttl == 255 &&
		      !cfg.mirrors[0].platform_subheader,
	      "mirrors: erspan3 over IPv4, ieee1588 (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"encap\":{\"type\":\"erspan3\",\"src_ip\":\"10.0.0.1\","
			    "\"dst_ip\":\"10.0.0.2\",\"dst_mac\":\"00:00:00:00:00:01\",\"ttl\":0}}]",
			    &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].encap.ttl: 0 out of range 1..255"),
	      "mirrors: ttl 0 (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"encap\":{\"type\":\"erspan2\",\"src_ip\":\"10.0.0.1\","
			    "\"dst_ip\":\"10.0.0.2\",\"dst_mac\":\"00:00:00:00:00:01\","
			    "\"src_mac\":\"00-00-00-00-00-02\"}}]",
			    &cfg, err, sizeof(err)) == -1 &&
		      !strncmp(err, "mirrors[0].encap.src_mac: \"00-00-00-00-00-02\" is not a MAC", 55),
	      "mirrors: src_mac with dashes (%s)", err);
	/* vxlan (issue 13): the outer keys of ERSPAN, vni (default the session id) and udp_port */
#define VXLAN_OUTER "\"type\":\"vxlan\",\"src_ip\":\"10.0.0.1\",\"dst_ip\":\"10.0.0.2\",\"dst_mac\":\"00:00:00:00:00:01\""
	check(parse_mirrors("[{\"id\":77," SESSION ",\"encap\":{" VXLAN_OUTER ",\"ttl\":9,\"dscp\":46}},"
			    "{\"id\":78,\"sources\":[{\"port\":\"b\"}],\"destination\":{\"port\":\"d\"},"
			    "\"encap\":{\"type\":\"vxlan\",\"src_ip\":\"2001:db8::1\",\"dst_ip\":\"2001:db8::2\","
			    "\"dst_mac\":\"00:00:00:00:00:02\",\"vni\":16777215,\"udp_port\":8472}}]",
			    &cfg, err, sizeof(err)) == 0 &&
		      cfg.mirrors[0].encap == SBX_ENCAP_VXLAN && cfg.mirrors[0].ip_version == 4 &&
		      cfg.mirrors[0].vni == 77 && cfg.mirrors[0].udp_port == 4789 && cfg.mirrors[0].ttl == 9 &&
		      cfg.mirrors[0].dscp == 46 && cfg.mirrors[0].df && !cfg.mirrors[0].src_mac_set &&
		      cfg.mirrors[1].encap == SBX_ENCAP_VXLAN && cfg.mirrors[1].ip_version == 6 &&
		      cfg.mirrors[1].vni == 16777215 && cfg.mirrors[1].udp_port == 8472,
	      "mirrors: vxlan over IPv4 (vni = session id, port 4789) and IPv6 (vni 16777215, port 8472) (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"encap\":{" VXLAN_OUTER ",\"vni\":16777216}}]", &cfg, err,
			    sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].encap.vni: 16777216 out of range 0..16777215"),
	      "mirrors: vxlan vni above 24 bits refused, the field named (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"encap\":{" VXLAN_OUTER ",\"vni\":-1}}]", &cfg, err,
			    sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].encap.vni: -1 out of range 0..16777215"),
	      "mirrors: vxlan vni -1 refused (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"encap\":{" VXLAN_OUTER ",\"vni\":\"5\"}}]", &cfg, err,
			    sizeof(err)) == -1 &&
		      !strncmp(err, "mirrors[0].encap.vni: ", 22),
	      "mirrors: vxlan vni as a string refused (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"encap\":{" VXLAN_OUTER ",\"udp_port\":0}}]", &cfg, err,
			    sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].encap.udp_port: 0 out of range 1..65535"),
	      "mirrors: vxlan udp_port 0 refused, the field named (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"encap\":{" VXLAN_OUTER ",\"udp_port\":65536}}]", &cfg, err,
			    sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].encap.udp_port: 65536 out of range 1..65535"),
	      "mirrors: vxlan udp_port 65536 refused (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"encap\":{\"type\":\"vxlan\",\"src_ip\":\"10.0.0.1\","
			    "\"dst_mac\":\"00:00:00:00:00:01\"}}]", &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].encap.dst_ip: missing required key"),
	      "mirrors: vxlan without dst_ip refused (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"encap\":{\"type\":\"erspan2\",\"src_ip\":\"10.0.0.1\","
			    "\"dst_ip\":\"10.0.0.2\",\"dst_mac\":\"00:00:00:00:00:01\",\"vni\":5}}]",
			    &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].encap.vni: only for vxlan"),
	      "mirrors: vni on erspan2 refused (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"encap\":{\"type\":\"span\",\"udp_port\":4789}}]", &cfg,
			    err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].encap.udp_port: only for vxlan"),
	      "mirrors: udp_port on span refused (%s)", err);
	check(parse_mirrors("[{\"id\":1," SESSION ",\"encap\":{\"type\":\"vxlan\",\"src_ip\":\"10.0.0.1\","
			    "\"dst_ip\":\"2001:db8::2\",\"dst_mac\":\"00:00:00:00:00:01\"}}]", &cfg, err,
			    sizeof(err)) == -1 &&
		      !strncmp(err, "mirrors[0].encap.dst_ip: \"2001:db8::2\" is IPv6", 45),
	      "mirrors: vxlan with mixed address families refused (%s)", err);
#undef VXLAN_OUTER
	check(parse_mirrors("[{\"id\":1," SESSION ",\"copy\":{\"threshold\":65536}}]", &cfg, err,
			    sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].copy.threshold: 65536 out of range 0..65535"),
	      "mirrors: threshold above 65535 (%s)", err);
	check(parse_mirrors("[{\"id\":1,\"sources\":[{\"port\":\"a\"}],\"destination\":{}}]", &cfg, err,
			    sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].destination.port: missing required key"),
	      "mirrors: destination without port (%s)", err);
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
	check(sbx_config_parse("{\"eal\":{\"primary_lcore\":125},\"ports\":[{\"name\":\"a\",\"devargs\":\"x\"}]}",
			       &cfg, err, sizeof(err)) == 0 && cfg.nb_standby == 1 && cfg.standby_lcores[0] == 0,
	      "standby: past 127 the lowest free lcore id (workers 126 127, primary 125: standby on 0) (%s)", err);
	check(sbx_config_parse("{\"ports\":[{\"name\":\"a\",\"devargs\":\"x\"}],\"workers\":{\"count\":2,"
			       "\"lcores\":[5,3],\"standby\":3}}", &cfg, err, sizeof(err)) == 0 &&
		      cfg.nb_standby == 3 && cfg.standby_lcores[0] == 6 && cfg.standby_lcores[1] == 7 &&
		      cfg.standby_lcores[2] == 8,
	      "standby: 3 on the next free ids after the highest worker lcore (6 7 8) (%s)", err);
	check(sbx_config_parse("{\"ports\":[{\"name\":\"a\",\"devargs\":\"x\"}],\"workers\":{\"standby\":0}}",
			       &cfg, err, sizeof(err)) == 0 && cfg.nb_standby == 0,
	      "standby: 0 disables them (%s)", err);
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

/* A config of @p np ports (net_null, "p0".."p<np-1>"), @p nw workers each polling queue 0 of its
 * own ports (round robin), @p nx cross-connects [p2k, p2k+1], one session with @p ns sources (ports
 * p0..) to the last port and @p nd decap rules on port 0, into @p buf. */
static const char *limits_doc(char *buf, size_t len, int np, int nw, int nx, int ns, int nd)
{
	size_t n = 0;
	int i, w;

#define PUT(...) (n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__))
	PUT("{\"eal\":{\"primary_lcore\":0,\"mgmt_lcore\":1},\"ports\":[");
	for (i = 0; i < np; i++) {
		if (i < 32) /* Debian's DPDK has RTE_MAX_ETHPORTS 32: the others are pcap file ports */
			PUT("%s{\"name\":\"p%d\",\"devargs\":\"net_null%d\"", i ? "," : "", i, i);
		else
			PUT(",{\"name\":\"p%d\",\"devargs\":\"net_pcap%d,tx_pcap=/tmp/sbx-limits-p%d.pcap\"", i, i, i);
		if (i == 0 && nd > 0) {
			PUT(",\"ingress\":{\"decap\":[");
			for (int r = 0; r < nd; r++)
				PUT("%s{\"type\":\"vxlan\",\"udp_port\":%d}", r ? "," : "", 5000 + r);
			PUT("]}");
		}
		PUT("}");
	}
	PUT("],\"workers\":{\"count\":%d,\"lcores\":[", nw);
	for (w = 0; w < nw; w++)
		PUT("%s%d", w ? "," : "", 2 + w);
	PUT("],\"queues\":[");
	for (w = 0; w < nw; w++) {
		PUT("%s[", w ? "," : "");
		for (i = w; i < np; i += nw)
			PUT("%s{\"port\":\"p%d\",\"queue\":0}", i == w ? "" : ",", i);
		PUT("]");
	}
	PUT("]},\"forwarding\":{\"xconnects\":[");
	for (i = 0; i < nx; i++)
		PUT("%s[\"p%d\",\"p%d\"]", i ? "," : "", 2 * i, 2 * i + 1);
	PUT("]}");
	if (ns > 0) {
		PUT(",\"mirrors\":[{\"id\":1,\"sources\":[");
		for (i = 0; i < ns; i++)
			PUT("%s{\"port\":\"p%d\"}", i ? "," : "", i);
		PUT("],\"destination\":{\"port\":\"p%d\",\"allow_forwarding\":true}}]", np - 1);
	}
	PUT("}");
#undef PUT
	return n < len ? buf : "";
}

/* The limits of issue #25: 64 ports, 32 workers, 32 cross-connects, 64 sources of a session, 16
 * decap rules of a port; one more of each is refused, naming the field. */
static void test_limits(void)
{
	static char doc[64 * 1024];
	static struct sbx_config cfg;
	char err[256];

	check(sbx_config_parse(limits_doc(doc, sizeof(doc), 64, 32, 32, 63, 16), &cfg, err, sizeof(err)) == 0 &&
		      cfg.nb_ports == 64 && cfg.nb_workers == 32 && cfg.nb_xconnects == 32 &&
		      cfg.mirrors[0].nb_sources == 63 && cfg.ports[0].ingress.nb_decap == 16 &&
		      cfg.workers[31].lcore_id == 33 && cfg.flows.port_mask == 0,
	      "limits: 64 ports, 32 workers, 32 cross-connects, 63 sources, 16 decap rules accepted (%s)", err);
	check(sbx_config_parse(limits_doc(doc, sizeof(doc), 65, 32, 0, 0, 0), &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "ports: 65 entries, at most 64"),
	      "limits: a 65th port refused (%s)", err);
	{ /* 33 DPDK ports: past this DPDK build's RTE_MAX_ETHPORTS (32 in Debian's 22.11), named */
		size_t n = (size_t)snprintf(doc, sizeof(doc), "{\"ports\":[");

		for (int i = 0; i < RTE_MAX_ETHPORTS + 1; i++)
			n += (size_t)snprintf(doc + n, sizeof(doc) - n, "%s{\"name\":\"p%d\",\"devargs\":\"net_null%d\"}",
					      i ? "," : "", i, i);
		snprintf(doc + n, sizeof(doc) - n, "],\"workers\":{\"count\":1}}");
		check(sbx_config_parse(doc, &cfg, err, sizeof(err)) == -1 &&
			      strstr(err, "devargs: more than") != NULL && strstr(err, "RTE_MAX_ETHPORTS") != NULL &&
			      strncmp(err, "ports[32].", 10) == 0,
		      "limits: a DPDK port past RTE_MAX_ETHPORTS refused, naming it (%s)", err);
	}
	check(sbx_config_parse(limits_doc(doc, sizeof(doc), 64, 33, 0, 0, 0), &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "workers.count: 33 out of range 1..32"),
	      "limits: a 33rd worker refused (%s)", err);
	check(sbx_config_parse(limits_doc(doc, sizeof(doc), 64, 32, 33, 0, 0), &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "forwarding.xconnects: 33 entries, at most 32"),
	      "limits: a 33rd cross-connect refused (%s)", err);
	check(sbx_config_parse(limits_doc(doc, sizeof(doc), 64, 4, 0, 65, 0), &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mirrors[0].sources: 65 entries, at most 64"),
	      "limits: a 65th source refused (%s)", err);
	check(sbx_config_parse(limits_doc(doc, sizeof(doc), 2, 1, 0, 0, 17), &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "ports[0].ingress.decap: 17 entries, at most 16"),
	      "limits: a 17th decap rule refused (%s)", err);
	/* flows over 64 ports: every bit of the 64-bit mask, none past it */
	check(sbx_config_parse(limits_doc(doc, sizeof(doc), 64, 4, 0, 0, 0), &cfg, err, sizeof(err)) == 0,
	      "limits: 64 ports, 4 workers (%s)", err);
	{
		size_t n = strlen(doc);
		snprintf(doc + n - 1, sizeof(doc) - n + 1, ",\"flows\":{\"enabled\":true,\"collectors\":[{\"address\":\"127.0.0.1\",\"port\":4739}]}}");
		check(sbx_config_parse(doc, &cfg, err, sizeof(err)) == 0 && cfg.flows.port_mask == UINT64_MAX,
		      "limits: flows on 64 ports meter all 64 (%s)", err);
		snprintf(doc + n - 1, sizeof(doc) - n + 1,
			 ",\"flows\":{\"enabled\":true,\"collectors\":[{\"address\":\"127.0.0.1\",\"port\":4739}],\"ports\":[{\"port\":\"p63\"},{\"port\":\"p40\"}]}}");
		check(sbx_config_parse(doc, &cfg, err, sizeof(err)) == 0 &&
			      cfg.flows.port_mask == ((1ull << 63) | (1ull << 40)),
		      "limits: flows.ports p63 and p40: bits 63 and 40 (%s)", err);
		snprintf(doc + n - 1, sizeof(doc) - n + 1,
			 ",\"flows\":{\"enabled\":true,\"collectors\":[{\"address\":\"127.0.0.1\",\"port\":4739}],\"ports\":[{\"port\":\"p63\"},{\"port\":\"p63\"}]}}");
		check(sbx_config_parse(doc, &cfg, err, sizeof(err)) == -1 &&
			      !strcmp(err, "flows.ports[1].port: p63 is listed twice (one entry per port: direction \"both\")"),
		      "limits: p63 listed twice in flows.ports (%s)", err);
	}
}

/* A config of 64 net_null ports, one worker, workers.tool_group_capacity {cg, cm} (absent when cg
 * is 0) and @p ng tool groups of @p nm members (group g: ports p(g+k)%64). */
static const char *tg_doc(char *buf, size_t len, int cg, int cm, int ng, int nm)
{
	size_t n = 0;
	int i, g, k;

#define PUT(...) (n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__))
	PUT("{\"eal\":{\"primary_lcore\":0,\"mgmt_lcore\":1},\"ports\":[");
	for (i = 0; i < 64; i++) /* 32 DPDK ports (RTE_MAX_ETHPORTS), 32 pcap file ports */
		if (i < 32)
			PUT("%s{\"name\":\"p%d\",\"devargs\":\"net_null%d\"}", i ? "," : "", i, i);
		else
			PUT(",{\"name\":\"p%d\",\"devargs\":\"net_pcap%d,tx_pcap=/tmp/sbx-limits-p%d.pcap\"}", i, i, i);
	PUT("],\"workers\":{\"count\":1,\"lcores\":[2]");
	if (cg != 0)
		PUT(",\"tool_group_capacity\":{\"groups\":%d,\"members\":%d}", cg, cm);
	PUT("},\"tool_groups\":[");
	for (g = 0; g < ng; g++) {
		PUT("%s{\"name\":\"g%d\",\"members\":[", g ? "," : "", g);
		for (k = 0; k < nm; k++)
			PUT("%s\"p%d\"", k ? "," : "", (g + k) % 64);
		PUT("]}");
	}
	PUT("]}");
#undef PUT
	return n < len ? buf : "";
}

/* workers.tool_group_capacity (issue #25): 8 x 8 by default, up to 64 x 64; a config past the
 * capacity is refused naming the field and the capacity; the capacity is static. */
static void test_tool_group_capacity(void)
{
	static char doc[128 * 1024];
	static struct sbx_config cfg, cfg2;
	char err[256];
	const char *d;

	check(sbx_config_parse(tg_doc(doc, sizeof(doc), 0, 0, 8, 8), &cfg, err, sizeof(err)) == 0 &&
		      cfg.tg_cap_groups == 8 && cfg.tg_cap_members == 8 && cfg.nb_tool_groups == 8 &&
		      cfg.tool_groups[7].nb_members == 8,
	      "tool_group_capacity: 8 x 8 by default, 8 groups of 8 members accepted (%s)", err);
	check(sbx_config_parse(tg_doc(doc, sizeof(doc), 0, 0, 9, 1), &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "tool_groups: 9 tool groups, over the capacity of 8 (workers.tool_group_capacity.groups, "
				   "static: at most 64)"),
	      "tool_group_capacity: a 9th group past the default capacity refused (%s)", err);
	check(sbx_config_parse(tg_doc(doc, sizeof(doc), 0, 0, 1, 9), &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "tool_groups[0].members: 9 members, over the capacity of 8 "
				   "(workers.tool_group_capacity.members, static: at most 64)"),
	      "tool_group_capacity: a 9th member past the default capacity refused (%s)", err);
	check(sbx_config_parse(tg_doc(doc, sizeof(doc), 64, 64, 64, 64), &cfg, err, sizeof(err)) == 0 &&
		      cfg.tg_cap_groups == 64 && cfg.tg_cap_members == 64 && cfg.nb_tool_groups == 64 &&
		      cfg.tool_groups[63].nb_members == 64 && cfg.tool_groups[63].members[63] == 62,
	      "tool_group_capacity: 64 groups of 64 members at capacity 64 x 64 (%s)", err);
	check(sbx_config_parse(tg_doc(doc, sizeof(doc), 64, 64, 65, 1), &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "tool_groups: 65 tool groups, over the capacity of 64 (workers.tool_group_capacity.groups, "
				   "static: at most 64)"),
	      "tool_group_capacity: a 65th group refused (%s)", err);
	check(sbx_config_parse(tg_doc(doc, sizeof(doc), 16, 4, 16, 5), &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "tool_groups[0].members: 5 members, over the capacity of 4 "
				   "(workers.tool_group_capacity.members, static: at most 64)"),
	      "tool_group_capacity: 5 members past a capacity of 4 refused (%s)", err);
	check(sbx_config_parse(tg_doc(doc, sizeof(doc), 65, 8, 0, 0), &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "workers.tool_group_capacity.groups: 65 out of range 1..64"),
	      "tool_group_capacity: groups 65 refused (%s)", err);
	check(sbx_config_parse(tg_doc(doc, sizeof(doc), 8, 65, 0, 0), &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "workers.tool_group_capacity.members: 65 out of range 1..64"),
	      "tool_group_capacity: members 65 refused (%s)", err);
	check(sbx_config_parse(tg_doc(doc, sizeof(doc), 0x7fff, 8, 0, 0), &cfg, err, sizeof(err)) == -1 &&
		      strstr(err, "workers.tool_group_capacity.groups: ") == err,
	      "tool_group_capacity: groups 32767 refused (%s)", err);
	check(sbx_config_parse(tg_doc(doc, sizeof(doc), 8, 0, 0, 0), &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "workers.tool_group_capacity.members: 0 out of range 1..64"),
	      "tool_group_capacity: members 0 refused (%s)", err);
	/* static: a change of the capacity names it, a change of the groups is live */
	sbx_config_parse(tg_doc(doc, sizeof(doc), 8, 8, 2, 2), &cfg, err, sizeof(err));
	sbx_config_parse(tg_doc(doc, sizeof(doc), 16, 8, 2, 2), &cfg2, err, sizeof(err));
	d = sbx_config_static_diff(&cfg, &cfg2);
	check(d != NULL && !strcmp(d, "workers.tool_group_capacity"),
	      "tool_group_capacity: a change of the capacity is static, named (%s)", d ? d : "none");
	sbx_config_parse(tg_doc(doc, sizeof(doc), 8, 8, 3, 4), &cfg2, err, sizeof(err));
	d = sbx_config_static_diff(&cfg, &cfg2);
	check(d == NULL, "tool_group_capacity: other groups at one capacity are a live change (%s)", d ? d : "none");
}

/* mgmt.tokens, mgmt.tls, mgmt.insecure (issue 17: HTTPS and roles). */
static void test_mgmt_roles(void)
{
	struct sbx_config cfg;
	char err[512];
#define MG(x) "{\"ports\":[{\"name\":\"a\",\"devargs\":\"x\"}],\"mgmt\":" x "}"

	check(sbx_config_parse(MG("{\"tokens\":{\"admin\":\"admin-0123456789abc\",\"viewer\":\"viewer-0123456789abc\"},"
				  "\"tls\":{\"cert\":\"/c.pem\",\"key\":\"/k.pem\"},\"insecure\":true}"),
			       &cfg, err, sizeof(err)) == 0 &&
		      !strcmp(cfg.mgmt_token, "admin-0123456789abc") && !strcmp(cfg.mgmt_viewer_token, "viewer-0123456789abc") &&
		      !strcmp(cfg.mgmt_tls_cert, "/c.pem") && !strcmp(cfg.mgmt_tls_key, "/k.pem") && cfg.mgmt_insecure,
	      "mgmt.tokens admin/viewer, tls, insecure parsed (%s)", err);
	check(sbx_config_parse(MG("{\"tokens\":{\"viewer_file\":\"/v.token\",\"admin_file\":\"/a.token\"}}"),
			       &cfg, err, sizeof(err)) == 0 &&
		      !strcmp(cfg.mgmt_viewer_token_file, "/v.token") && !strcmp(cfg.mgmt_token_file, "/a.token") &&
		      cfg.mgmt_token[0] == '\0' && !cfg.mgmt_insecure && cfg.mgmt_tls_cert[0] == '\0',
	      "mgmt.tokens files parsed, no tls, insecure false by default (%s)", err);
	check(sbx_config_parse(MG("{\"tls\":{\"cert\":\"/c.pem\"}}"), &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mgmt.tls.key: missing required key"),
	      "mgmt.tls without key refused (%s)", err);
	check(sbx_config_parse(MG("{\"tls\":{\"cert\":\"\",\"key\":\"/k\"}}"), &cfg, err, sizeof(err)) == -1 &&
		      !strncmp(err, "mgmt.tls.cert: ", 15),
	      "mgmt.tls empty cert refused (%s)", err);
	check(sbx_config_parse(MG("{\"tls\":{\"cert\":\"/c\",\"key\":\"/k\",\"ca\":\"/x\"}}"), &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mgmt.tls.ca: unknown key"),
	      "mgmt.tls unknown key refused (%s)", err);
	check(sbx_config_parse(MG("{\"token\":\"admin-0123456789abc\",\"tokens\":{\"admin\":\"admin-0123456789abd\"}}"),
			       &cfg, err, sizeof(err)) == -1 && !strncmp(err, "mgmt.tokens.admin: ", 19),
	      "mgmt.token and mgmt.tokens.admin both: refused (%s)", err);
	check(sbx_config_parse(MG("{\"tokens\":{\"viewer\":\"short\"}}"), &cfg, err, sizeof(err)) == -1 &&
		      !strncmp(err, "mgmt.tokens.viewer: at least 16", 31),
	      "short viewer token refused (%s)", err);
	check(sbx_config_parse(MG("{\"token\":\"same-0123456789abcdef\",\"tokens\":{\"viewer\":\"same-0123456789abcdef\"}}"),
			       &cfg, err, sizeof(err)) == -1 && !strncmp(err, "mgmt.tokens.viewer: the same", 28),
	      "viewer token equal to the admin's refused (%s)", err);
	check(sbx_config_parse(MG("{\"tokens\":{\"viewer\":\"viewer-0123456789abc\",\"viewer_file\":\"/v\"}}"),
			       &cfg, err, sizeof(err)) == -1 && !strncmp(err, "mgmt.tokens.viewer_file: ", 25),
	      "viewer and viewer_file both: refused (%s)", err);
	check(sbx_config_parse(MG("{\"insecure\":1}"), &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "mgmt.insecure: expected true or false"),
	      "mgmt.insecure not a boolean refused (%s)", err);
#undef MG
}

/* sbx_config_parse() of the config text @fmt with @part in place of its one %s. */
static int parse_fmt(const char *fmt, const char *part, struct sbx_config *cfg, char *err, size_t errlen)
{
	char text[4096];

	snprintf(text, sizeof(text), fmt, part);
	return sbx_config_parse(text, cfg, err, errlen);
}

/* One config part and the error it must give (NULL: accepted). */
struct text_case {
	const char *text, *err;
};

/* Each of the @n cases @cs through @parse (one config part in a fixed config): accepted or refused
 * with exactly its error. */
static void check_cases(int (*parse)(const char *, struct sbx_config *, char *, size_t), const char *what,
			const struct text_case *cs, size_t n)
{
	static struct sbx_config cfg;
	char err[512];
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		strcpy(err, "(no message)");
		rc = parse(cs[i].text, &cfg, err, sizeof(err));
		if (cs[i].err == NULL)
			check(rc == 0, "%s %s accepted (%s)", what, cs[i].text, rc ? err : "ok");
		else
			check(rc == -1 && !strcmp(err, cs[i].err), "%s %s refused: \"%s\" (want \"%s\")", what, cs[i].text,
			      err, cs[i].err);
	}
}

/* A config with one port "a" whose ingress is @ingress (JSON object text). */
static int parse_ingress(const char *ingress, struct sbx_config *cfg, char *err, size_t errlen)
{
	return parse_fmt("{\"ports\":[{\"name\":\"a\",\"devargs\":\"x0\",\"ingress\":%s}]}", ingress, cfg, err, errlen);
}

/* A config with one port "a" and workers.tunnel_senders @ts (JSON text). */
static int parse_senders(const char *ts, struct sbx_config *cfg, char *err, size_t errlen)
{
	return parse_fmt("{\"ports\":[{\"name\":\"a\",\"devargs\":\"x0\"}],\"workers\":{\"count\":1,\"tunnel_senders\":%s}}", ts,
			 cfg, err, errlen);
}

/* workers.tunnel_senders: the size of each worker's tunnel sender table and the idle timeout. */
static void test_tunnel_senders(void)
{
	static const struct text_case cases[] = {
		{"{}", NULL},
		{"{\"entries\":1,\"idle_s\":1}", NULL},
		{"{\"entries\":1024,\"idle_s\":86400}", NULL},
		{"{\"entries\":0}", "workers.tunnel_senders.entries: 0 out of range 1..1024"},
		{"{\"entries\":1025}", "workers.tunnel_senders.entries: 1025 out of range 1..1024"},
		{"{\"idle_s\":0}", "workers.tunnel_senders.idle_s: 0 out of range 1..86400"},
		{"{\"size\":5}", "workers.tunnel_senders.size: unknown key"},
		{"5", "workers.tunnel_senders: expected an object"},
	};
	static struct sbx_config cfg, cfg2;
	char err[512];

	check_cases(parse_senders, "workers.tunnel_senders", cases, sizeof(cases) / sizeof(cases[0]));
	check(parse_senders("{}", &cfg, err, sizeof(err)) == 0 && cfg.tunnel_senders == 256 && cfg.tunnel_idle_s == 300,
	      "workers.tunnel_senders defaults: 256 entries, idle_s 300 (%u, %u)", cfg.tunnel_senders, cfg.tunnel_idle_s);
	check(parse_senders("{\"entries\":8,\"idle_s\":2}", &cfg2, err, sizeof(err)) == 0 && cfg2.tunnel_senders == 8 &&
		      cfg2.tunnel_idle_s == 2,
	      "workers.tunnel_senders: entries 8, idle_s 2");
	check(sbx_config_static_diff(&cfg, &cfg2) != NULL && !strcmp(sbx_config_static_diff(&cfg, &cfg2), "workers"),
	      "workers.tunnel_senders is static (a change needs a restart: section workers)");
}

/* ports[].rss is static like the rest of a port but its ingress: a change of it alone is one the
 * running appliance cannot take (the RETA and key are set when the port starts). */
static void test_rss_static(void)
{
	static struct sbx_config a, b;
	const char *fmt = "{\"ports\":[{\"name\":\"a\",\"devargs\":\"x0\"%s},{\"name\":\"b\",\"devargs\":\"x1\"}],"
			  "\"workers\":{\"count\":1}}";
	char err[512] = "";
	const char *d;

	if (!check(parse_fmt(fmt, "", &a, err, sizeof(err)) == 0 &&
			   parse_fmt(fmt, ",\"rss\":{\"fields\":[\"ipv4\"]}", &b, err, sizeof(err)) == 0,
		   "two configs, without and with ports[0].rss (%s)", err))
		return;
	d = sbx_config_static_diff(&a, &b);
	check(d != NULL && !strcmp(d, "ports"), "a change of ports[].rss alone is a static change of section ports (%s)",
	      d ? d : "none seen");
}

static int parse_flows(const char *fs, struct sbx_config *cfg, char *err, size_t errlen)
{
	return parse_fmt("{\"ports\":[{\"name\":\"a\",\"devargs\":\"x0\"},{\"name\":\"b\",\"devargs\":\"x1\"}],"
			 "\"workers\":{\"count\":1},\"flows\":%s}", fs, cfg, err, errlen);
}

/* flows (issue #28): the (live) section of flow metering and IPFIX export; each refusal names its field. */
static void test_flows(void)
{
#define COL "\"collectors\":[{\"address\":\"127.0.0.1\"}]"
	static const struct text_case cases[] = {
		{"{" COL "}", NULL},
		{"{\"enabled\":false}", NULL},
		{"{\"ports\":[{\"port\":\"b\",\"direction\":\"rx\"}],\"active_timeout_s\":1,\"idle_timeout_s\":1,"
		 "\"flows_per_worker\":1024,\"observation_domain_id\":4294967295,\"template_period_s\":1,"
		 "\"collectors\":[{\"address\":\"::1\",\"port\":1,\"transport\":\"tcp\"},{\"address\":\"::1\"}]}", NULL},
		{"{}", "flows.collectors: at least one collector {\"address\": IP, \"port\": 4739} while flows.enabled is true"},
		{"{\"collectors\":[]}", "flows.collectors: at least one collector {\"address\": IP, \"port\": 4739} while flows.enabled is true"},
		{"{" COL ",\"ports\":[{\"port\":\"z\"}]}", "flows.ports[0].port: unknown port \"z\""},
		{"{" COL ",\"ports\":[{\"port\":\"a\",\"direction\":\"tx\"},{\"port\":\"b\",\"direction\":\"both\"}]}",
		 NULL},
		{"{" COL ",\"ports\":[{\"port\":\"a\",\"direction\":\"out\"}]}",
		 "flows.ports[0].direction: \"out\" is not one of \"rx\", \"tx\", \"both\""},
		{"{" COL ",\"ports\":[{\"port\":\"a\"},{\"port\":\"a\"}]}",
		 "flows.ports[1].port: a is listed twice (one entry per port: direction \"both\")"},
		{"{" COL ",\"ports\":[{\"port\":\"a\",\"direction\":\"tx\"},{\"port\":\"a\",\"direction\":\"rx\"}]}",
		 "flows.ports[1].port: a is listed twice (one entry per port: direction \"both\")"},
		{"{" COL ",\"sessions\":[0]}", "flows.sessions[0]: expected a map or mirror session id (an integer 1..1023)"},
		{"{" COL ",\"sessions\":[\"40\"]}", "flows.sessions[0]: expected a map or mirror session id (an integer 1..1023)"},
		{"{" COL ",\"sessions\":5}", "flows.sessions: expected an array"},
		{"{" COL ",\"sessions\":[40]}", "flows.sessions[0]: 40 is not the id of a map or mirror session"},
		{"{" COL ",\"ports\":[\"a\"]}", "flows.ports[0]: expected an object {\"port\": NAME, \"direction\": \"rx\"}"},
		{"{" COL ",\"idle_timeout_s\":0}", "flows.idle_timeout_s: 0 out of range 1..3600"},
		{"{" COL ",\"active_timeout_s\":86401}", "flows.active_timeout_s: 86401 out of range 1..86400"},
		{"{" COL ",\"flows_per_worker\":1023}", "flows.flows_per_worker: 1023 out of range 1024..4194304"},
		{"{" COL ",\"timeout\":5}", "flows.timeout: unknown key"},
		{"{\"collectors\":[{\"address\":\"collector.example\"}]}",
		 "flows.collectors[0].address: \"collector.example\" is not an IPv4 or IPv6 address"},
		{"{\"collectors\":[{\"address\":\"10.0.0.1\",\"port\":0}]}", "flows.collectors[0].port: 0 out of range 1..65535"},
		{"{\"collectors\":[{\"address\":\"10.0.0.1\"},{\"address\":\"10.0.0.1\",\"port\":4739}]}",
		 "flows.collectors[1]: the same collector as flows.collectors[0]"},
		{"{\"collectors\":[{\"port\":9}]}", "flows.collectors[0].address: missing required key"},
		{"5", "flows: expected an object"},
		{"{" COL ",\"biflow\":true}", NULL},
		{"{" COL ",\"biflow\":1}", "flows.biflow: expected true or false"},
	};
	static struct sbx_config cfg, cfg2;
	char err[512];

	check_cases(parse_flows, "flows", cases, sizeof(cases) / sizeof(cases[0]));
	check(parse_flows("{\"collectors\":[{\"address\":\"10.0.0.1\",\"transport\":\"sctp\"}]}", &cfg, err,
			  sizeof(err)) == -1 && !strncmp(err, "flows.collectors[0].transport: ", 31),
	      "flows: transport sctp refused, the field named (%s)", err);
	check(parse_flows("{" COL "}", &cfg, err, sizeof(err)) == 0 && cfg.flows.enabled && cfg.flows.port_mask == 3 &&
		      cfg.flows.active_s == 60 && cfg.flows.idle_s == 15 && cfg.flows.capacity == 65536 &&
		      cfg.flows.domain == 0 && cfg.flows.template_period_s == 60 && cfg.flows.nb_collectors == 1 &&
		      cfg.flows.collectors[0].port == 4739 && cfg.flows.collectors[0].transport == 0,
	      "flows defaults: enabled, every port, 60 s / 15 s, 65536 flows, domain 0, templates every 60 s, UDP 4739");
	check(!cfg.flows.biflow, "flows.biflow: false by default (unidirectional flows)");
	check(parse_flows("{" COL ",\"biflow\":true}", &cfg2, err, sizeof(err)) == 0 && cfg2.flows.biflow &&
		      sbx_config_static_diff(&cfg, &cfg2) == NULL,
	      "flows.biflow true: biflows, live (not a static difference)");
	check(parse_flows("{\"enabled\":false}", &cfg2, err, sizeof(err)) == 0 && !cfg2.flows.enabled,
	      "flows.enabled false needs no collector");
	check(sbx_config_static_diff(&cfg, &cfg2) == NULL,
	      "flows is live: enabled, ports, timeouts, collectors change at run time (not a static difference)");
	check(parse_flows("{" COL ",\"flows_per_worker\":2048}", &cfg2, err, sizeof(err)) == 0 &&
		      sbx_config_static_diff(&cfg, &cfg2) != NULL &&
		      !strcmp(sbx_config_static_diff(&cfg, &cfg2), "flows.flows_per_worker"),
	      "flows.flows_per_worker is static (the size of the workers' tables: a change needs a restart)");
	check(parse_fmt("{\"ports\":[{\"name\":\"a\",\"devargs\":\"x0\"}],\"workers\":{\"count\":1}%s}", "", &cfg, err,
			sizeof(err)) == 0 && !cfg.flows.enabled && cfg.flows.port_mask == 0,
	      "no flows section: off (%s)", err);
	/* directions (TX: what spanbox sends on the port) and maps selected by id (flows.sessions) */
	check(parse_flows("{" COL ",\"ports\":[{\"port\":\"a\",\"direction\":\"tx\"},{\"port\":\"b\",\"direction\":\"both\"}]}",
			  &cfg, err, sizeof(err)) == 0 && cfg.flows.port_mask == 2 && cfg.flows.tx_mask == 3 &&
		      sbx_flows_cfg_meters(&cfg.flows),
	      "flows.ports direction tx / both: rx mask 0x2, tx mask 0x3 (%s)", err);
#define MAPS_FMT "{\"ports\":[{\"name\":\"a\",\"devargs\":\"x0\"},{\"name\":\"b\",\"devargs\":\"x1\"}," \
	"{\"name\":\"t\",\"devargs\":\"x2\"}],\"workers\":{\"count\":1}," \
	"\"mirrors\":[{\"id\":7,\"name\":\"m7\",\"sources\":[{\"port\":\"a\"}],\"destination\":{\"port\":\"t\"}}]," \
	"\"maps\":[{\"id\":40,\"name\":\"m40\",\"sources\":[{\"port\":\"a\"}],\"destination\":{\"port\":\"t\"}," \
	"\"rules\":[{\"action\":\"pass\",\"dst_port\":53}]},{\"id\":41,\"name\":\"m41\",\"sources\":[{\"port\":\"b\"}]," \
	"\"destination\":{\"port\":\"t\"}}],\"flows\":{" COL ",%s}}"
	check(parse_fmt(MAPS_FMT, "\"sessions\":[41]", &cfg, err, sizeof(err)) == 0 && cfg.flows.map_mask.w[0] == 2 && sbx_mapset_count(&cfg.flows.map_mask) == __builtin_popcount(2) &&
		      cfg.flows.port_mask == 0 && cfg.flows.tx_mask == 0 && cfg.flows.nb_sessions == 1 &&
		      sbx_flows_cfg_meters(&cfg.flows),
	      "flows.sessions [41]: map index 1, no port metered whole (ports left out) (%s)", err);
	check(parse_fmt(MAPS_FMT, "\"sessions\":[41,40],\"ports\":[{\"port\":\"b\"}]", &cfg, err, sizeof(err)) == 0 &&
		      cfg.flows.map_mask.w[0] == 3 && sbx_mapset_count(&cfg.flows.map_mask) == __builtin_popcount(3) && cfg.flows.port_mask == 2,
	      "flows.sessions [41, 40] and ports: maps 0x3, port b (%s)", err);
	check(parse_fmt(MAPS_FMT, "\"sessions\":[7,40]", &cfg, err, sizeof(err)) == 0 && cfg.flows.mirror_mask == 1 &&
		      cfg.flows.map_mask.w[0] == 1 && sbx_mapset_count(&cfg.flows.map_mask) == __builtin_popcount(1) && sbx_flows_cfg_meters(&cfg.flows),
	      "flows.sessions [7, 40]: mirror session m7 (index 0) and map m40 (index 0) (%s)", err);
	check(parse_fmt(MAPS_FMT, "\"sessions\":[40,99]", &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "flows.sessions[1]: 99 is not the id of a map or mirror session"),
	      "flows.sessions: an unknown id refused, the field named (%s)", err);
	check(parse_fmt(MAPS_FMT, "\"sessions\":[40,40]", &cfg, err, sizeof(err)) == -1 &&
		      !strcmp(err, "flows.sessions[1]: 40 is listed twice"),
	      "flows.sessions: an id listed twice refused (%s)", err);
#undef MAPS_FMT
#undef COL
}

/* ingress refusals and edge cases not worth a file: each refusal names its field. */
static void test_ingress_inline(void)
{
	static const struct text_case cases[] = {
		{"{}", NULL},
		{"{\"decap\":[]}", NULL},
		{"5", "ports[0].ingress: expected an object"},
		{"{\"decap\":{}}", "ports[0].ingress.decap: expected an array"},
		{"{\"decap\":[5]}", "ports[0].ingress.decap[0]: expected an object"},
		{"{\"decap\":[{}]}", "ports[0].ingress.decap[0].type: missing required key"},
		{"{\"decap\":[{\"type\":\"gre\",\"sessions\":[1]}]}", "ports[0].ingress.decap[0].sessions: only for erspan"},
		{"{\"decap\":[{\"type\":\"gre\",\"vnis\":[1]}]}", "ports[0].ingress.decap[0].vnis: only for vxlan and geneve"},
		{"{\"decap\":[{\"type\":\"erspan\",\"udp_port\":4789}]}", "ports[0].ingress.decap[0].udp_port: only for vxlan, geneve and gtpu"},
		/* geneve (VNIs, UDP 6081) and gtpu (TEIDs, UDP 2152) rules (issue #26) */
		{"{\"decap\":[{\"type\":\"geneve\",\"vnis\":[0,16777215]},{\"type\":\"gtpu\",\"teids\":[4294967295]}]}", NULL},
		{"{\"decap\":[{\"type\":\"geneve\",\"vnis\":[16777216]}]}", "ports[0].ingress.decap[0].vnis[0]: 16777216 out of range 0..16777215"},
		{"{\"decap\":[{\"type\":\"gtpu\",\"vnis\":[1]}]}", "ports[0].ingress.decap[0].vnis: only for vxlan and geneve"},
		{"{\"decap\":[{\"type\":\"gtpu\",\"strip_fcs\":true}]}", "ports[0].ingress.decap[0].strip_fcs: only for erspan, vxlan, gre and geneve (gtpu carries IP packets)"},
		{"{\"decap\":[{\"type\":\"vxlan\"},{\"type\":\"geneve\",\"udp_port\":4789}]}",
		 "ports[0].ingress.decap[1].udp_port: 4789 is already the vxlan port of ingress.decap[0]"},
		{"{\"decap\":[{\"type\":\"gtpu\"},{\"type\":\"gtpu\",\"teids\":[5]}]}",
		 "ports[0].ingress.decap[1]: never matches: ingress.decap[0] takes every frame it would (first match wins)"},
		/* gre rules select by the GRE key (docs/INGRESS.md): "keys", 0..2^32-1 */
		{"{\"decap\":[{\"type\":\"gre\",\"keys\":[0,7,4294967295]}]}", NULL},
		{"{\"decap\":[{\"type\":\"erspan\",\"keys\":[1]}]}", "ports[0].ingress.decap[0].keys: only for gre"},
		{"{\"decap\":[{\"type\":\"vxlan\",\"keys\":[1]}]}", "ports[0].ingress.decap[0].keys: only for gre"},
		{"{\"decap\":[{\"type\":\"gre\",\"keys\":[4294967296]}]}",
		 "ports[0].ingress.decap[0].keys[0]: 4294967296 out of range 0..4294967295"},
		{"{\"decap\":[{\"type\":\"gre\",\"keys\":[]}]}",
		 "ports[0].ingress.decap[0].keys: at least one id (leave keys out to take every one)"},
		{"{\"decap\":[{\"type\":\"gre\",\"keys\":[3,3]}]}", "ports[0].ingress.decap[0].keys[1]: 3 given twice (see keys[0])"},
		{"{\"decap\":[{\"type\":\"gre\",\"keys\":[5]},{\"type\":\"gre\",\"keys\":[6,5]}]}",
		 "ports[0].ingress.decap[1].keys[1]: 5 never matches: ingress.decap[0] takes it first (first match wins)"},
		{"{\"decap\":[{\"type\":\"gre\",\"keys\":[5]},{\"type\":\"gre\"}]}", NULL},
		{"{\"decap\":[{\"type\":\"vxlan\",\"udp_port\":0}]}", "ports[0].ingress.decap[0].udp_port: 0 out of range 1..65535"},
		{"{\"decap\":[{\"type\":\"vxlan\",\"vnis\":[16777216]}]}",
		 "ports[0].ingress.decap[0].vnis[0]: 16777216 out of range 0..16777215"},
		{"{\"decap\":[{\"type\":\"vxlan\",\"vnis\":[]}]}",
		 "ports[0].ingress.decap[0].vnis: at least one id (leave vnis out to take every one)"},
		{"{\"decap\":[{\"type\":\"erspan\",\"sessions\":[0,1,2,3,4,5,6,7,8]}]}",
		 "ports[0].ingress.decap[0].sessions: 9 entries, at most 8"},
		{"{\"decap\":[{\"type\":\"erspan\",\"sessions\":[0,1,2,3,4,5,6,1023]}]}", NULL},
		{"{\"decap\":[{\"type\":\"erspan\",\"sessions\":[\"5\"]}]}",
		 "ports[0].ingress.decap[0].sessions[0]: expected an integer"},
		{"{\"decap\":[{\"type\":\"gre\",\"local_ip\":\"192.0.2.300\"}]}",
		 "ports[0].ingress.decap[0].local_ip: \"192.0.2.300\" is not an IPv4 or IPv6 address"},
		{"{\"decap\":[{\"type\":\"gre\",\"strip_fcs\":1}]}", "ports[0].ingress.decap[0].strip_fcs: expected true or false"},
		/* duplicates and rules an earlier one always takes first */
		{"{\"decap\":[{\"type\":\"gre\"},{\"type\":\"gre\"}]}",
		 "ports[0].ingress.decap[1]: never matches: ingress.decap[0] takes every frame it would (first match wins)"},
		{"{\"decap\":[{\"type\":\"erspan\",\"sessions\":[5,6]},{\"type\":\"erspan\",\"sessions\":[7,6]}]}",
		 "ports[0].ingress.decap[1].sessions[1]: 6 never matches: ingress.decap[0] takes it first (first match wins)"},
		{"{\"decap\":[{\"type\":\"vxlan\",\"vnis\":[5]},{\"type\":\"vxlan\",\"udp_port\":8472,\"vnis\":[5]}]}", NULL},
		{"{\"decap\":[{\"type\":\"vxlan\",\"local_ip\":\"192.0.2.1\"},{\"type\":\"vxlan\",\"local_ip\":\"192.0.2.2\"},"
		 "{\"type\":\"vxlan\",\"local_ip\":\"::1\"},{\"type\":\"vxlan\"}]}", NULL},
		{"{\"decap\":[{\"type\":\"vxlan\",\"local_ip\":\"::1\"},{\"type\":\"vxlan\",\"local_ip\":\"0::1\"}]}",
		 "ports[0].ingress.decap[1]: never matches: ingress.decap[0] takes every frame it would (first match wins)"},
		{"{\"decap\":[{\"type\":\"erspan\"},{\"type\":\"gre\"},{\"type\":\"vxlan\"}],\"non_tunnel\":\"pass\"}", NULL},
		{"{\"decap\":[{\"type\":\"gre\"}],\"non_tunnel\":\"reject\"}",
		 "ports[0].ingress.non_tunnel: \"reject\" is not one of \"pass\", \"drop\""},
		{"{\"strip\":\"vlan\"}", "ports[0].ingress.strip: expected an array"},
		{"{\"strip\":[\"qinq\"]}", "ports[0].ingress.strip[0]: \"qinq\" is not one of \"vlan\", \"mpls\", \"vntag\", \"etag\""},
		{"{\"strip\":[]}", NULL},
		{"{\"tag\":{}}", "ports[0].ingress.tag.vlan: missing required key"},
		{"{\"tag\":{\"vlan\":0}}", "ports[0].ingress.tag.vlan: 0 out of range 1..4094"},
		{"{\"tag\":{\"vlan\":1,\"pcp\":3}}", "ports[0].ingress.tag.pcp: unknown key"},
		{"{\"dedup\":{}}", "ports[0].ingress.dedup.window_us: missing required key"},
		{"{\"dedup\":{\"window_us\":0}}", "ports[0].ingress.dedup.window_us: 0 out of range 1..1000000"},
		{"{\"dedup\":{\"window_us\":1000001}}", "ports[0].ingress.dedup.window_us: 1000001 out of range 1..1000000"},
		{"{\"dedup\":{\"window_us\":5,\"ignore\":[\"tos\"]}}",
		 "ports[0].ingress.dedup.ignore[0]: \"tos\" is not one of \"ttl\", \"ip_checksum\", \"dscp\", \"vlan\""},
		{"{\"dedup\":{\"window_us\":5,\"ignore\":[\"ttl\",\"ttl\"]}}", "ports[0].ingress.dedup.ignore[1]: \"ttl\" given twice"},
		{"{\"dedup\":{\"window_us\":5,\"entries\":512}}", "ports[0].ingress.dedup.entries: 512 out of range 1024..1048576"},
		{"{\"dedup\":{\"window_us\":5,\"entries\":2097152}}",
		 "ports[0].ingress.dedup.entries: 2097152 out of range 1024..1048576"},
		{"{\"dedup\":{\"window_us\":5,\"entries\":1048576}}", NULL},
		{"{\"dedup\":{\"window_us\":5,\"size\":1}}", "ports[0].ingress.dedup.size: unknown key"},
		{"{\"tag\":{\"vlan\":5},\"tag\":{\"vlan\":6}}", "ports[0].ingress.tag: duplicate key"},
	};
	static struct sbx_config cfg;
	char err[512];

	check_cases(parse_ingress, "ingress", cases, sizeof(cases) / sizeof(cases[0]));
	check(parse_ingress("{\"decap\":[{\"type\":\"vxlan\"}],\"dedup\":{\"window_us\":7}}", &cfg, err, sizeof(err)) == 0 &&
		      cfg.ports[0].ingress.decap[0].udp_port == SBX_VXLAN_PORT && cfg.ports[0].ingress.decap[0].nb_ids == 0 &&
		      cfg.ports[0].ingress.non_tunnel == SBX_NON_TUNNEL_PASS && cfg.ports[0].ingress.dedup_ignore == 0 &&
		      cfg.ports[0].ingress.dedup_entries == 65536,
	      "ingress defaults: udp_port 4789, every VNI, non_tunnel pass, no ignore, 65536 entries");
	check(parse_ingress("{\"decap\":[{\"type\":\"gre\",\"keys\":[7,4294967295]}]}", &cfg, err, sizeof(err)) == 0 &&
		      cfg.ports[0].ingress.decap[0].nb_ids == 2 && cfg.ports[0].ingress.decap[0].ids[0] == 7 &&
		      cfg.ports[0].ingress.decap[0].ids[1] == 4294967295u,
	      "ingress: a gre rule's keys are its ids (7, 4294967295)");
}

/* ingress.timestamp (timestamps in, include/spanbox/ts_in.h): formats, defaults, keys of the other format refused. */
static void test_ts_in_config(void)
{
	static const struct text_case cases[] = {
		{"{\"timestamp\":{\"format\":\"arista\"}}", NULL},
		{"{\"timestamp\":{\"format\":\"metamako\",\"fcs\":true,\"window_s\":60}}", NULL},
		{"{\"timestamp\":{}}", "ports[0].ingress.timestamp.format: missing required key"},
		{"{\"timestamp\":{\"format\":\"ixia\"}}",
		 "ports[0].ingress.timestamp.format: \"ixia\" is not one of \"arista\", \"metamako\""},
		{"{\"timestamp\":{\"format\":\"arista\",\"fcs\":true}}", "ports[0].ingress.timestamp.fcs: only for format metamako"},
		{"{\"timestamp\":{\"format\":\"arista\",\"window_s\":5}}",
		 "ports[0].ingress.timestamp.window_s: only for format metamako"},
		{"{\"timestamp\":{\"format\":\"metamako\",\"tai_offset_s\":37}}",
		 "ports[0].ingress.timestamp.tai_offset_s: only for format arista"},
		{"{\"timestamp\":{\"format\":\"arista\",\"tai_offset_s\":256}}",
		 "ports[0].ingress.timestamp.tai_offset_s: 256 out of range 0..255"},
		{"{\"timestamp\":{\"format\":\"metamako\",\"window_s\":0}}",
		 "ports[0].ingress.timestamp.window_s: 0 out of range 1..315360000"},
		{"{\"timestamp\":{\"format\":\"metamako\",\"fcs\":1}}", "ports[0].ingress.timestamp.fcs: expected true or false"},
		{"{\"timestamp\":{\"format\":\"arista\",\"clock\":1}}", "ports[0].ingress.timestamp.clock: unknown key"},
		{"{\"timestamp\":\"arista\"}", "ports[0].ingress.timestamp: expected an object"},
	};
	static struct sbx_config cfg;
	char err[512];

	check_cases(parse_ingress, "ingress.timestamp", cases, sizeof(cases) / sizeof(cases[0]));
	check(parse_ingress("{\"timestamp\":{\"format\":\"arista\"}}", &cfg, err, sizeof(err)) == 0 &&
		      cfg.ports[0].ingress.ts_format == SBX_TS_IN_ARISTA && cfg.ports[0].ingress.ts_tai_offset_s == 37 &&
		      !sbx_ingress_cfg_empty(&cfg.ports[0].ingress),
	      "ingress.timestamp arista: TAI - UTC 37 s by default; the port has an ingress stage");
	check(parse_ingress("{\"timestamp\":{\"format\":\"metamako\"}}", &cfg, err, sizeof(err)) == 0 &&
		      cfg.ports[0].ingress.ts_format == SBX_TS_IN_METAMAKO && !cfg.ports[0].ingress.ts_fcs &&
		      cfg.ports[0].ingress.ts_window_s == 2592000,
	      "ingress.timestamp metamako: no FCS, a window of 30 days by default");
}

/* A config with one port and the pool section @pool (JSON object text). */
static int parse_pool(const char *pool, struct sbx_config *cfg, char *err, size_t errlen)
{
	return parse_fmt("{\"ports\":[{\"name\":\"a\",\"devargs\":\"x0\"}],\"pool\":%s}", pool, cfg, err, errlen);
}

/* pool.headroom, pool.force and pool.measure_memset: good and bad values. */
static void test_pool_keys(void)
{
	static const struct text_case bad[] = {
		{"{\"headroom\":-1}", "pool.headroom: -1 out of range 0..1000000"},
		{"{\"headroom\":1000001}", "pool.headroom: 1000001 out of range 0..1000000"},
		{"{\"headroom\":1.5}", "pool.headroom: expected an integer"},
		{"{\"headroom\":\"2048\"}", "pool.headroom: expected an integer"},
		{"{\"force\":1}", "pool.force: expected true or false"},
		{"{\"force\":\"true\"}", "pool.force: expected true or false"},
		{"{\"force\":null}", "pool.force: expected true or false"},
		{"{\"measure_memset\":0}", "pool.measure_memset: expected true or false"},
		{"{\"headroom\":0,\"headroom\":1}", "pool.headroom: duplicate key"},
		{"{\"forced\":true}", "pool.forced: unknown key"},
	};
	static struct sbx_config cfg;
	char err[512];

	check(parse_pool("{}", &cfg, err, sizeof(err)) == 0 && cfg.pool_headroom == 2048 &&
		      !cfg.pool_force && !cfg.pool_measure_memset,
	      "pool: defaults headroom 2048, force false, measure_memset false (%s)", err);
	check(parse_pool("{\"headroom\":0,\"force\":true,\"measure_memset\":true,\"mbufs\":1024}",
			 &cfg, err, sizeof(err)) == 0 &&
		      cfg.pool_headroom == 0 && cfg.pool_force && cfg.pool_measure_memset &&
		      cfg.pool_mbufs == 1024,
	      "pool: headroom 0, force and measure_memset true (%s)", err);
	check(parse_pool("{\"headroom\":1000000,\"force\":false,\"measure_memset\":false}", &cfg, err,
			 sizeof(err)) == 0 &&
		      cfg.pool_headroom == 1000000 && !cfg.pool_force && !cfg.pool_measure_memset,
	      "pool: headroom 1000000 (the maximum), explicit false (%s)", err);
	check_cases(parse_pool, "pool", bad, sizeof(bad) / sizeof(bad[0]));
}

/* A config with one port (speed_mbps 100) and the microburst section @mb (JSON object text). */
static int parse_microburst(const char *mb, struct sbx_config *cfg, char *err, size_t errlen)
{
	return parse_fmt("{\"ports\":[{\"name\":\"a\",\"devargs\":\"x0\",\"speed_mbps\":100}],\"microburst\":%s}",
			 mb, cfg, err, errlen);
}

/* microburst and ports[].speed_mbps (issue #26): defaults, limits, refusals naming the field. */
static void test_microburst_keys(void)
{
	static const struct text_case bad[] = {
		{"{\"window_us\":99}", "microburst.window_us: 99 out of range 100..100000"},
		{"{\"window_us\":100001}", "microburst.window_us: 100001 out of range 100..100000"},
		{"{\"threshold_pct\":0}", "microburst.threshold_pct: 0 out of range 1..1000"},
		{"{\"threshold_pct\":1001}", "microburst.threshold_pct: 1001 out of range 1..1000"},
		{"{\"enabled\":1}", "microburst.enabled: expected true or false"},
		{"{\"window\":1000}", "microburst.window: unknown key"},
		{"[]", "microburst: expected an object"},
		{"{\"window_us\":100,\"threshold_pct\":1000,\"enabled\":false}", NULL},
	};
	static struct sbx_config cfg, c2;
	char err[512];

	check(parse_fmt("{\"ports\":[{\"name\":\"a\",\"devargs\":\"x0\"}]%s}", "", &cfg, err, sizeof(err)) == 0 &&
		      cfg.mb_enabled && cfg.mb_window_us == 1000 && cfg.mb_threshold_pct == 80 &&
		      cfg.ports[0].speed_mbps == 0,
	      "microburst: defaults enabled, window 1000 us, threshold 80 %%, speed_mbps 0 (%s)", err);
	check(parse_microburst("{\"enabled\":false,\"window_us\":800,\"threshold_pct\":90}", &cfg, err, sizeof(err)) == 0 &&
		      !cfg.mb_enabled && cfg.mb_window_us == 800 && cfg.mb_threshold_pct == 90 && cfg.ports[0].speed_mbps == 100,
	      "microburst: enabled false, window 800 us, threshold 90 %%, speed_mbps 100 (%s)", err);
	check(parse_fmt("{\"ports\":[{\"name\":\"a\",\"devargs\":\"x0\",\"speed_mbps\":%s}]}", "400001", &cfg, err,
			sizeof(err)) == -1 && !strcmp(err, "ports[0].speed_mbps: 400001 out of range 0..400000"),
	      "ports[0].speed_mbps 400001 refused naming the field (%s)", err);
	parse_microburst("{}", &cfg, err, sizeof(err));
	parse_microburst("{\"window_us\":2000}", &c2, err, sizeof(err));
	check(sbx_config_static_diff(&cfg, &c2) != NULL && !strcmp(sbx_config_static_diff(&cfg, &c2), "microburst"),
	      "a change of microburst.window_us is a static change of section \"microburst\"");
	check_cases(parse_microburst, "microburst", bad, sizeof(bad) / sizeof(bad[0]));
}

/* A config whose ports have the devargs @a and @b (@b NULL: one port) and the mgmt section @mgmt. */
static int parse_two(const char *a, const char *b, const char *mgmt, struct sbx_config *cfg, char *err,
		     size_t errlen)
{
	char text[4096];

	snprintf(text, sizeof(text), "{\"ports\":[{\"name\":\"a\",\"devargs\":\"%s\"}%s%s%s],\"mgmt\":%s}", a,
		 b ? ",{\"name\":\"b\",\"devargs\":\"" : "", b ? b : "", b ? "\"}" : "", mgmt ? mgmt : "{}");
	return sbx_config_parse(text, cfg, err, errlen);
}

/* Write @text to @path. */
static bool put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return false;
	fputs(text, f);
	return fclose(f) == 0;
}

/*
 * Output files never destroy input files: two ports writing one file, a tx_pcap that another (or
 * the same) port reads, a tx_pcap that is the database, its WAL, the token file or the config
 * itself. Files are compared by realpath (symbolic links, "..", relative paths), an existing file
 * also by inode (hard links), a file not there yet by its parent's realpath.
 */
static void test_files(void)
{
	static struct sbx_config cfg;
	char dir[] = "/tmp/sbx-unit-files.XXXXXX", in[128], lnk[128], hard[128], sub[128], a[512], b[512];
	char mgmt[512], conf[128], text[1024], err[512], cwd[1024];
	bool ready;

	ready = mkdtemp(dir) != NULL;
	snprintf(in, sizeof(in), "%s/in.pcap", dir);
	snprintf(lnk, sizeof(lnk), "%s/link.pcap", dir);
	snprintf(hard, sizeof(hard), "%s/hard.pcap", dir);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	ready = ready && put_file(in, "not really a capture") && symlink("in.pcap", lnk) == 0 && link(in, hard) == 0 &&
		symlink(".", sub) == 0 && getcwd(cwd, sizeof(cwd)) != NULL;
	if (!check(ready, "files: temporary directory %s with a file, a symlink, a hard link", dir))
		return;

	snprintf(a, sizeof(a), "net_pcap0,rx_pcap=%s", in);
	snprintf(b, sizeof(b), "net_pcap1,tx_pcap=%s/out.pcap", dir);
	check(parse_two(a, b, NULL, &cfg, err, sizeof(err)) == 0, "files: input and a new output file (%s)", err);
	check(parse_two(a, a, NULL, &cfg, err, sizeof(err)) == 0, "files: two ports reading one file (%s)", err);
	snprintf(b, sizeof(b), "net_pcap1,tx_pcap=%s", lnk);
	check(parse_two(a, b, NULL, &cfg, err, sizeof(err)) == -1 &&
		      !strncmp(err, "ports[1].devargs: tx_pcap \"", 27) && strstr(err, "is the rx_pcap of ports[0]"),
	      "files: tx_pcap a symlink to another port's rx_pcap (%s)", err);
	snprintf(b, sizeof(b), "net_pcap1,tx_pcap=%s", hard);
	check(parse_two(a, b, NULL, &cfg, err, sizeof(err)) == -1 && strstr(err, "is the rx_pcap of ports[0]"),
	      "files: tx_pcap a hard link to another port's rx_pcap (%s)", err);
	snprintf(a, sizeof(a), "net_pcap0,tx_pcap=%s/new.pcap", dir);
	snprintf(b, sizeof(b), "net_pcap1,tx_pcap=%s/new.pcap", sub);
	check(parse_two(a, b, NULL, &cfg, err, sizeof(err)) == -1 &&
		      strstr(err, "ports[1].devargs: tx_pcap") && strstr(err, "is also the tx_pcap of ports[0]"),
	      "files: one file not there yet, written by two ports, through a symlinked directory (%s)", err);
	snprintf(a, sizeof(a), "net_pcap0,tx_pcap=/nonexistent-sbx-dir/x.pcap");
	check(parse_two(a, a, NULL, &cfg, err, sizeof(err)) == -1 && strstr(err, "is also the tx_pcap of ports[0]"),
	      "files: same path in a directory that does not exist (%s)", err);
	snprintf(a, sizeof(a), "net_pcap0,rx_pcap=%s,tx_pcap=%s", in, lnk);
	check(parse_two(a, NULL, NULL, &cfg, err, sizeof(err)) == -1 &&
		      strstr(err, "ports[0].devargs: tx_pcap") && strstr(err, "is the rx_pcap of ports[0]"),
	      "files: a port writing its own input (%s)", err);
	/* relative paths: against the working directory, as the primary opens them */
	if (check(chdir(dir) == 0, "files: chdir %s", dir)) {
		snprintf(b, sizeof(b), "net_pcap1,tx_pcap=%s", in);
		check(parse_two("net_pcap0,rx_pcap=in.pcap", b, NULL, &cfg, err, sizeof(err)) == -1 &&
			      strstr(err, "is the rx_pcap of ports[0]"),
		      "files: relative rx_pcap, absolute tx_pcap of the same file (%s)", err);
		check(parse_two("net_pcap0,rx_pcap=in.pcap", "net_pcap1,tx_pcap=sub/./in.pcap", NULL, &cfg, err,
				sizeof(err)) == -1,
		      "files: relative paths, one through a symlinked directory (%s)", err);
		check(chdir(cwd) == 0, "files: back to %s", cwd);
	}
	/* the database, its WAL and shared-memory files, the token file */
	snprintf(mgmt, sizeof(mgmt), "{\"database\":\"%s/s.db\"}", dir);
	snprintf(a, sizeof(a), "net_pcap0,tx_pcap=%s/s.db", sub);
	check(parse_two(a, NULL, mgmt, &cfg, err, sizeof(err)) == -1 && strstr(err, "is mgmt.database"),
	      "files: tx_pcap the database (%s)", err);
	snprintf(a, sizeof(a), "net_pcap0,tx_pcap=%s/s.db-wal", dir);
	check(parse_two(a, NULL, mgmt, &cfg, err, sizeof(err)) == -1 && strstr(err, "is mgmt.database's -wal file"),
	      "files: tx_pcap the database's WAL (%s)", err);
	snprintf(a, sizeof(a), "net_pcap0,tx_pcap=%s/s.db.token", dir);
	check(parse_two(a, NULL, mgmt, &cfg, err, sizeof(err)) == -1 && strstr(err, "is mgmt.token_file"),
	      "files: tx_pcap the default token file (%s)", err);
	snprintf(mgmt, sizeof(mgmt), "{\"database\":\"%s/s.db\",\"token_file\":\"%s/tok\"}", dir, dir);
	snprintf(a, sizeof(a), "net_pcap0,tx_pcap=%s/tok", dir);
	check(parse_two(a, NULL, mgmt, &cfg, err, sizeof(err)) == -1 && strstr(err, "is mgmt.token_file"),
	      "files: tx_pcap the configured token file (%s)", err);
	snprintf(a, sizeof(a), "net_pcap0,tx_pcap=%s/s.db.token", dir);
	check(parse_two(a, NULL, mgmt, &cfg, err, sizeof(err)) == 0,
	      "files: the default token file's name is free when token_file is elsewhere (%s)", err);
	/* the config file itself (only sbx_config_load knows it) */
	snprintf(conf, sizeof(conf), "%s/c.json", dir);
	snprintf(text, sizeof(text), "{\"ports\":[{\"name\":\"a\",\"devargs\":\"net_pcap0,tx_pcap=%s/c.json\"}]}", sub);
	if (check(put_file(conf, text), "files: write %s", conf))
		check(sbx_config_load(conf, &cfg, err, sizeof(err)) == -1 &&
			      strstr(err, "ports[0].devargs: tx_pcap") && strstr(err, "is the config file itself"),
		      "files: tx_pcap the config file (%s)", err);
	unlink(conf);
	snprintf(text, sizeof(text), "%s/s.db-wal", dir);
	unlink(in);
	unlink(lnk);
	unlink(hard);
	unlink(sub);
	rmdir(dir);
}

/* devargs keys of the drivers spanbox knows, as DPDK 22.11's kvargs would take them at probe. */
static void test_devargs_keys(void)
{
	static const struct {
		const char *devargs, *err; /* err NULL: accepted, else a substring of the error */
	} cases[] = {
		{"net_pcap0,rx_pcap=/tmp/a.pcap,tx_pcap=/tmp/b.pcap,pps=100", NULL},
		{"eth_pcap3,tx_pcap=/tmp/b.pcap", NULL},
		{"net_pcap0", NULL},
		{"net_pcap0,rx_iface=eth0", "net_pcap key \"rx_iface\" is not supported by spanbox's pcap file ports"},
		{"net_pcap0,rx_pcap=/tmp/a.pcap,infinite_rx=1", "net_pcap key \"infinite_rx\""},
		{"net_pcap0,rx_pacp=/tmp/a.pcap", "unknown net_pcap key \"rx_pacp\" (valid: rx_pcap, tx_pcap, pps, pps_burst)"},
		{"net_pcap0,tx_pcap=/tmp/a.pcap,tx_pcap=/tmp/b.pcap", "key \"tx_pcap\" given twice"},
		{"net_pcap0,rx_pcap=", "rx_pcap needs a value"},
		{"net_pcap0,,tx_pcap=/tmp/b.pcap", "empty key"},
		{"net_tap0,iface=x,mac=fixed,remote=eth9,persist", NULL},
		{"net_tap0,ifname=x", "unknown net_tap key \"ifname\" (valid: iface, mac, remote, persist)"},
		{"net_null0,size=64,copy=1,no-rx=1", NULL},
		{"eth_null1,no_rx=1", "unknown net_null key \"no_rx\""},
		{"net_ring0,nodeaction=r0:0:CREATE", NULL},
		{"net_ring0,numa=0", "unknown net_ring key \"numa\""},
		{"net_memif0,id=1,role=client,bsize=2048,rsize=10,socket=/run/m.sock,socket-abstract=no,"
		 "mac=02:00:00:00:00:01,zero-copy=no,secret=abc", NULL},
		{"net_memif0,rol=server", "unknown net_memif key \"rol\""},
		/* drivers spanbox has no table for, and PCI devices: DPDK checks them at start */
		{"net_af_packet0,iface=eth9,qpairs=1", NULL},
		{"0000:01:00.0,rx_low_latency=1", NULL},
	};
	static struct sbx_config cfg;
	char err[512];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strcpy(err, "(no message)");
		rc = parse_two(cases[i].devargs, NULL, NULL, &cfg, err, sizeof(err));
		if (cases[i].err == NULL)
			check(rc == 0, "devargs \"%s\" accepted (%s)", cases[i].devargs, rc ? err : "");
		else
			check(rc == -1 && !strncmp(err, "ports[0].devargs: ", 18) && strstr(err, cases[i].err),
			      "devargs \"%s\" refused: \"%s\" (want \"%s\")", cases[i].devargs, err, cases[i].err);
	}
}

/* eal.extra_args: what spanbox sets itself is refused, naming the entry; anything else passes. */
static void test_extra_args(void)
{
	static const char LC[] = "spanbox sets --lcores and --main-lcore itself (eal.primary_lcore, eal.mgmt_lcore, "
				 "workers.lcores, eal.cpus)";
	static const char DEV[] = "spanbox sets the devices itself (ports[].devargs";
	static const struct {
		const char *args, *err, *text; /* JSON array text; err NULL: accepted, else start + substring */
	} cases[] = {
		{"[\"--log-level=pmd.net.tap:debug\",\"--legacy-mem\",\"--iova-mode=va\",\"--in-memory\"]", NULL, NULL},
		{"[\"--log-level\",\"-l\"]", NULL, NULL}, /* "-l" is the value of --log-level */
		{"[\"-d\",\"-a\"]", NULL, NULL},         /* and "-a" the value of -d */
		{"[\"--file-prefix=other\"]", "eal.extra_args[0]: \"--file-prefix=other\": ",
		 "spanbox sets --file-prefix itself (eal.file_prefix)"},
		{"[\"--file-prefix\",\"other\"]", "eal.extra_args[0]: \"--file-prefix\": ", "eal.file_prefix"},
		{"[\"--file-pre=x\"]", "eal.extra_args[0]: \"--file-pre=x\": ", "EAL takes it for --file-prefix: spanbox sets --file-prefix"},
		{"[\"--huge-dir\",\"/mnt/h\",\"-l1\"]", "eal.extra_args[2]: \"-l1\": ", LC},
		{"[\"-c\",\"0x3\"]", "eal.extra_args[0]: \"-c\": ", LC},
		{"[\"-vl\",\"1\"]", "eal.extra_args[0]: \"-vl\": ", LC},
		{"[\"--lcores=5@(0-1)\"]", "eal.extra_args[0]: \"--lcores=5@(0-1)\": ", LC},
		{"[\"--main-lcore=3\"]", "eal.extra_args[0]: \"--main-lcore=3\": ", LC},
		{"[\"--master-lcore=3\"]", "eal.extra_args[0]: \"--master-lcore=3\": ", LC},
		{"[\"--proc-type=secondary\"]", "eal.extra_args[0]: \"--proc-type=secondary\": ",
		 "spanbox sets --proc-type itself"},
		{"[\"--socket-mem=64\"]", "eal.extra_args[0]: \"--socket-mem=64\": ",
		 "spanbox sets --socket-mem itself (eal.socket_mem_mb)"},
		{"[\"-m\",\"512\"]", "eal.extra_args[0]: \"-m\": ", "conflicts with --socket-mem"},
		{"[\"--no-huge\"]", "eal.extra_args[0]: \"--no-huge\": ", "conflicts with --socket-mem"},
		{"[\"--vdev=net_null9\"]", "eal.extra_args[0]: \"--vdev=net_null9\": ", DEV},
		{"[\"-a\",\"0000:01:00.0\"]", "eal.extra_args[0]: \"-a\": ", DEV},
		{"[\"--allow=0000:01:00.0\"]", "eal.extra_args[0]: \"--allow=0000:01:00.0\": ", DEV},
		{"[\"-b0000:01:00.0\"]", "eal.extra_args[0]: \"-b0000:01:00.0\": ", DEV},
		{"[\"--no-pci\"]", "eal.extra_args[0]: \"--no-pci\": ", DEV},
		{"[\"--single-file-segments\"]", "eal.extra_args[0]: \"--single-file-segments\": ",
		 "spanbox sets --single-file-segments itself"},
	};
	static struct sbx_config cfg;
	char text[1024], err[512];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strcpy(err, "(no message)");
		snprintf(text, sizeof(text), "{\"eal\":{\"extra_args\":%s},\"ports\":[{\"name\":\"a\",\"devargs\":\"x\"}]}",
			 cases[i].args);
		rc = sbx_config_parse(text, &cfg, err, sizeof(err));
		if (cases[i].err == NULL)
			check(rc == 0, "extra_args %s accepted (%s)", cases[i].args, rc ? err : "");
		else
			check(rc == -1 && !strncmp(err, cases[i].err, strlen(cases[i].err)) && strstr(err, cases[i].text),
			      "extra_args %s refused: \"%s\" (want \"%s...%s\")", cases[i].args, err, cases[i].err,
			      cases[i].text);
	}
}

/* A vdev port whose driver takes fewer queues than spanbox sets up on it (2 TX queues per worker
 * on every port) is refused by --check as at start, naming the port's devargs (issue #25: 9 or
 * more workers with a net_tap port passed --check and failed at start). */
static void test_vdev_queue_limits(void)
{
	static struct sbx_config cfg;
	char doc[2048], err[512], lc[256];
	static const struct {
		const char *devargs;
		int workers;
		bool ok;
		const char *want;
	} cases[] = {
		{ "net_tap0,iface=sbxq0", 8, true, NULL },
		{ "net_tap0,iface=sbxq0", 9, false, "ports[1].devargs: net_tap takes at most 16 TX queues" },
		{ "net_ring0", 8, true, NULL },
		{ "net_ring0", 9, false, "ports[1].devargs: net_ring takes at most 16 TX queues" },
		{ "net_memif0,role=server", 32, true, NULL },
		{ "net_null5", 32, true, NULL },
		{ "net_pcap0,tx_pcap=/tmp/sbxq.pcap", 32, true, NULL }, /* a pcap file port: rings, no limit */
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		size_t n = 0;

		for (int w = 0; w < cases[k].workers; w++)
			n += (size_t)snprintf(lc + n, sizeof(lc) - n, "%s%d", w ? "," : "", 2 + w);
		snprintf(doc, sizeof(doc),
			 "{\"eal\":{\"primary_lcore\":0,\"mgmt_lcore\":1},\"ports\":[{\"name\":\"a\",\"devargs\":"
			 "\"net_null0\"},{\"name\":\"b\",\"devargs\":\"%s\"}],\"workers\":{\"count\":%d,\"lcores\":[%s]}}",
			 cases[k].devargs, cases[k].workers, lc);
		err[0] = '\0';
		if (sbx_config_parse(doc, &cfg, err, sizeof(err)) != 0) {
			check(false, "queue limits: %s with %d workers parses: %s", cases[k].devargs, cases[k].workers, err);
			continue;
		}
		err[0] = '\0';
		if (cases[k].ok)
			check(sbx_config_queue_check(&cfg, err, sizeof(err)) == 0,
			      "queue limits: %s with %d workers accepted (%s)", cases[k].devargs, cases[k].workers, err);
		else
			check(sbx_config_queue_check(&cfg, err, sizeof(err)) != 0 && strstr(err, cases[k].want) == err,
			      "queue limits: %s with %d workers refused: '%s' (want '%s...')", cases[k].devargs,
			      cases[k].workers, err, cases[k].want);
	}
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
	test_mgmt_roles();
	test_mirrors();
	test_bad();
	test_bad_filter_text();
	test_inline();
	test_limits();
	test_tool_group_capacity();
	test_mirrors_inline();
	test_mirror_timestamp();
	test_direction_names();
	test_ingress_inline();
	test_ts_in_config();
	test_tunnel_senders();
	test_flows();
	test_pool_keys();
	test_microburst_keys();
	test_files();
	test_rss_static();
	test_devargs_keys();
	test_extra_args();
	test_vdev_queue_limits();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
