/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sections "ports" (devargs, rss, ingress: decap, strip, tag, dedup, timestamp) and
 * "microburst" (docs/CONFIG.md).
 */
#include <stdio.h>
#include <string.h>

#include "config_int.h"

static const char *const port_keys[] = {
	"name", "devargs", "mtu", "rx_desc", "tx_desc", "netns", "address", "ingress", "rss", "speed_mbps", NULL};

static const char *const microburst_keys[] = {"enabled", "window_us", "threshold_pct", NULL};

static const char *const rss_keys[] = {"fields", "key", NULL};

static const char *const ingress_keys[] = {"decap", "non_tunnel", "strip", "tag", "dedup", "timestamp", NULL};

static const char *const ts_in_keys[] = {"format", "fcs", "tai_offset_s", "window_s", NULL};

static const char *const decap_keys[] = {"type", "sessions", "vnis", "keys", "teids", "udp_port", "local_ip", "strip_fcs",
	NULL};

static const char *const tag_keys[] = {"vlan", NULL};

static const char *const dedup_keys[] = {"window_us", "ignore", "entries", "action", NULL};

static const struct cfg_choice decap_choices[] = {
	{"erspan", SBX_DECAP_ERSPAN}, {"vxlan", SBX_DECAP_VXLAN}, {"gre", SBX_DECAP_GRE}, {"geneve", SBX_DECAP_GENEVE},
	{"gtpu", SBX_DECAP_GTPU}, {NULL, 0}};

const char *sbx_decap_type_name(uint8_t type)
{
	return cfg_choice_name(decap_choices, type);
}

static const struct cfg_choice non_tunnel_choices[] = {
	{"pass", SBX_NON_TUNNEL_PASS}, {"drop", SBX_NON_TUNNEL_DROP}, {NULL, 0}};

static const struct cfg_choice strip_choices[] = {
	{"vlan", SBX_STRIP_VLAN}, {"mpls", SBX_STRIP_MPLS}, {"vntag", SBX_STRIP_VNTAG}, {"etag", SBX_STRIP_ETAG},
	{NULL, 0}};

static const struct cfg_choice ignore_choices[] = {
	{"ttl", SBX_DEDUP_IGNORE_TTL}, {"ip_checksum", SBX_DEDUP_IGNORE_IP_CHECKSUM},
	{"dscp", SBX_DEDUP_IGNORE_DSCP}, {"vlan", SBX_DEDUP_IGNORE_VLAN}, {NULL, 0}};

static const struct cfg_choice ts_in_format_choices[] = {
	{"arista", SBX_TS_IN_ARISTA}, {"metamako", SBX_TS_IN_METAMAKO}, {NULL, 0}};

static const struct cfg_choice dedup_action_choices[] = {
	{"drop", SBX_DEDUP_DROP}, {"count", SBX_DEDUP_COUNT}, {NULL, 0}};

/* One "key[=value]" item of a devargs string, after the device name. */
struct devarg {
	const char *key;
	size_t klen;
	const char *val; /* NULL when the item has no "=" */
	size_t vlen;
};

/* The next item of @devargs from *pos (commas inside [...] belong to the value, as for DPDK's
 * kvargs). @return false when there is none. */
static bool next_devarg(const char *devargs, size_t *pos, struct devarg *d)
{
	const char *s = devargs + *pos, *eq;
	size_t n = 0;
	int depth = 0;

	if (*s == '\0')
		return false;
	if (*s == ',')
		s++;
	while (s[n] && (s[n] != ',' || depth > 0)) {
		depth += s[n] == '[' ? 1 : s[n] == ']' ? -1 : 0;
		n++;
	}
	eq = memchr(s, '=', n);
	d->key = s;
	d->klen = eq ? (size_t)(eq - s) : n;
	d->val = eq ? eq + 1 : NULL;
	d->vlen = eq ? n - d->klen - 1 : 0;
	*pos = (size_t)(s + n - devargs);
	return true;
}

/*
 * The devargs keys DPDK 22.11's drivers accept (RTE_PMD_REGISTER_PARAM_STRING of each, as
 * `strings librte_net_<driver>.so` shows them) for the drivers spanbox supports; a driver matches
 * a device name that starts with its name or alias, like DPDK's vdev bus. net_pcap is spanbox's
 * own pcap file port (primary/pcap_port.c): rx_pcap, tx_pcap, pps and pps_burst only.
 */
static const struct {
	const char *name, *alias;
	const char *const keys[10];
} drivers[] = {
	{"net_pcap", "eth_pcap", {"rx_pcap", "tx_pcap", "pps", "pps_burst", NULL}},
	{"net_tap", NULL, {"iface", "mac", "remote", "persist", NULL}},
	{"net_ring", "eth_ring", {"nodeaction", NULL}},
	{"net_null", "eth_null", {"size", "copy", "no-rx", NULL}},
	{"net_memif", NULL,
	 {"id", "role", "bsize", "rsize", "socket", "socket-abstract", "mac", "zero-copy", "secret", NULL}},
};

/* Keys of DPDK's net_pcap PMD that spanbox's pcap file ports do not implement. */
static const char *const pcap_pmd_only[] = {"rx_iface", "rx_iface_in", "tx_iface", "iface", "phy_mac",
					    "infinite_rx", NULL};

/* True when string @list (NULL-terminated) holds the @n bytes of @key. */
static bool key_in(const char *const *list, const char *key, size_t n)
{
	for (; *list; list++)
		if (strlen(*list) == n && !strncmp(*list, key, n))
			return true;
	return false;
}

/*
 * Check the keys of port @path's @devargs against the table of its driver (a driver spanbox has no
 * table for, or a PCI device, is left to DPDK). For a pcap port, also copy the values of rx_pcap
 * and tx_pcap into @rx and @tx ("" when absent), each key at most once.
 */
int cfg_check_devargs(struct cfg_ctx *c, const char *path, const char *devargs, char rx[SBX_DEVARGS_LEN],
		      char tx[SBX_DEVARGS_LEN])
{
	size_t pos = strcspn(devargs, ","), d, k;
	const size_t nd = sizeof(drivers) / sizeof(drivers[0]);
	const char *const *keys;
	unsigned int seen = 0;
	char list[160] = "";
	struct devarg a;

	rx[0] = tx[0] = '\0';
	for (d = 0; d < nd; d++)
		if (!strncmp(devargs, drivers[d].name, strlen(drivers[d].name)) ||
		    (drivers[d].alias && !strncmp(devargs, drivers[d].alias, strlen(drivers[d].alias))))
			break;
	if (d == nd)
		return 0;
	keys = drivers[d].keys;
	for (k = 0; keys[k]; k++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", k ? ", " : "", keys[k]);
	while (next_devarg(devargs, &pos, &a)) {
		if (a.klen == 0)
			return cfg_fail(c, path, "devargs", "empty key in \"%s\"", devargs);
		if (d == 0 && key_in(pcap_pmd_only, a.key, a.klen))
			return cfg_fail(c, path, "devargs",
				    "net_pcap key \"%.*s\" is not supported by spanbox's pcap file ports (they read "
				    "and write files with libpcap, docs/PCAP_SECONDARY.md; valid: %s)",
				    (int)a.klen, a.key, list);
		for (k = 0; keys[k] && (strlen(keys[k]) != a.klen || strncmp(keys[k], a.key, a.klen)); k++)
			;
		if (!keys[k])
			return cfg_fail(c, path, "devargs", "unknown %s key \"%.*s\" (valid: %s)", drivers[d].name,
				    (int)a.klen, a.key, list);
		if (d != 0)
			continue;
		/* pcap file ports: each key once, with a value (pcap_port.c would take the first one) */
		if (seen & (1u << k))
			return cfg_fail(c, path, "devargs", "key \"%s\" given twice", keys[k]);
		seen |= 1u << k;
		if (a.val == NULL || a.vlen == 0)
			return cfg_fail(c, path, "devargs", "%s needs a value (%s=...)", keys[k], keys[k]);
		if (k <= 1)
			snprintf(k == 0 ? rx : tx, SBX_DEVARGS_LEN, "%.*s", (int)a.vlen, a.val);
	}
	return 0;
}

static int parse_ingress(struct cfg_ctx *c, const cJSON *port, const char *path, struct sbx_port_cfg *p);

/*
 * Parse ports[i].rss: {"fields": ["ipv4", "ipv6", "tcp", "udp"] (default all four), "key":
 * "symmetric" (default) or hex bytes}. Whether the device can do it is checked at start, when
 * the primary configures the port (primary/ports.c).
 */
static int parse_rss(struct cfg_ctx *c, const cJSON *port, const char *ppath, struct sbx_port_cfg *p)
{
	const cJSON *o, *arr, *it;
	char path[80], key[2 * SBX_RSS_KEY_MAX + SBX_RSS_KEY_MAX + 8];
	int k = 0, n;

	snprintf(path, sizeof(path), "%s.rss", ppath);
	memset(&p->rss, 0, sizeof(p->rss));
	if (cfg_get_object(c, port, ppath, "rss", path, rss_keys, &o))
		return -1;
	if (o == NULL)
		return 0;
	p->rss.enabled = true;
	p->rss.fields = SBX_RSS_F_IPV4 | SBX_RSS_F_IPV6 | SBX_RSS_F_TCP | SBX_RSS_F_UDP;
	if (cfg_get_array(c, o, path, "fields", 4, &arr))
		return -1;
	if (arr != NULL) {
		p->rss.fields = 0;
		cJSON_ArrayForEach(it, arr) {
			char fpath[112];
			uint8_t bit;

			snprintf(fpath, sizeof(fpath), "%s.fields[%d]", path, k++);
			if (!cJSON_IsString(it))
				return cfg_fail(c, fpath, NULL, "expected one of \"ipv4\", \"ipv6\", \"tcp\", \"udp\"");
			for (bit = 1; bit <= SBX_RSS_F_UDP; bit <<= 1)
				if (strcmp(it->valuestring, sbx_rss_field_name(bit)) == 0)
					break;
			if (bit > SBX_RSS_F_UDP)
				return cfg_fail(c, fpath, NULL, "\"%s\": expected one of \"ipv4\", \"ipv6\", \"tcp\", \"udp\"",
					    it->valuestring);
			if (p->rss.fields & bit)
				return cfg_fail(c, fpath, NULL, "\"%s\" twice", it->valuestring);
			p->rss.fields |= bit;
		}
		if (!(p->rss.fields & (SBX_RSS_F_IPV4 | SBX_RSS_F_IPV6)))
			return cfg_fail(c, path, "fields", "names no IP version: add \"ipv4\" and/or \"ipv6\" (ports are "
				    "hashed with the addresses of an IP version)");
	}
	if (cfg_get_string(c, o, path, "key", key, sizeof(key), false, NULL, "symmetric"))
		return -1;
	if (strcmp(key, "symmetric") == 0) {
		p->rss.symmetric = true;
		return 0;
	}
	n = sbx_rss_key_parse(key, p->rss.key);
	if (n < 0)
		return cfg_fail(c, path, "key", "\"%s\": expected \"symmetric\" or the key as hex bytes (40 or 52 "
			    "bytes for most NICs, at most %d)", key, SBX_RSS_KEY_MAX);
	p->rss.key_len = (uint8_t)n;
	p->rss.symmetric = sbx_rss_key_is_symmetric(p->rss.key, (size_t)n);
	return 0;
}

/* Parse the required "ports" array and derive each port's kind and PCI-ness. */
int cfg_parse_ports(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	char path[64], rx[SBX_DEVARGS_LEN], tx[SBX_DEVARGS_LEN];
	const cJSON *arr, *it;
	int i = 0, j, nb_ethdev = 0;

	if (cfg_need(c, root, "", "ports") || cfg_get_array(c, root, "", "ports", SBX_MAX_PORTS, &arr))
		return -1;
	if (cJSON_GetArraySize(arr) == 0)
		return cfg_fail(c, "", "ports", "at least one port is required");
	cJSON_ArrayForEach(it, arr) {
		struct sbx_port_cfg *p = &cfg->ports[i];

		snprintf(path, sizeof(path), "ports[%d]", i);
		if (!cJSON_IsObject(it))
			return cfg_fail(c, path, NULL, "expected an object");
		if (cfg_check_keys(c, it, path, port_keys) || cfg_need(c, it, path, "name") ||
		    cfg_get_string(c, it, path, "name", p->name, sizeof(p->name), true, cfg_name_chars, ""))
			return -1;
		for (j = 0; j < i; j++)
			if (!strcmp(cfg->ports[j].name, p->name))
				return cfg_fail(c, path, "name", "duplicate port name \"%s\" (see ports[%d])",
					    p->name, j);
		if (cfg_need(c, it, path, "devargs") ||
		    cfg_get_string(c, it, path, "devargs", p->devargs, sizeof(p->devargs), true, NULL, "") ||
		    cfg_get_u16(c, it, path, "mtu", 68, 9600, 1500, &p->mtu) ||
		    cfg_get_u16(c, it, path, "rx_desc", 64, 16384, 1024, &p->rx_desc) ||
		    cfg_get_u16(c, it, path, "tx_desc", 64, 16384, 1024, &p->tx_desc) ||
		    cfg_get_string(c, it, path, "netns", p->netns, sizeof(p->netns), false, cfg_name_chars, "") ||
		    cfg_get_string(c, it, path, "address", p->address, sizeof(p->address), false, NULL, "") ||
		    cfg_get_u32(c, it, path, "speed_mbps", 0, 400000, 0, &p->speed_mbps))
			return -1;
		if (p->address[0] && !cfg_is_ipv4_cidr(p->address))
			return cfg_fail(c, path, "address", "\"%s\" is not an IPv4 CIDR like 198.18.0.1/24",
				    p->address);
		p->kind = (!strncmp(p->devargs, "net_pcap", 8) || !strncmp(p->devargs, "eth_pcap", 8))
				  ? SBX_PORT_PCAP_FILE : SBX_PORT_ETHDEV;
		p->is_pci = cfg_match_pci(p->devargs, "hhhh:hh:hh.h") || cfg_match_pci(p->devargs, "hh:hh.h");
		if ((!p->is_pci && cfg_check_devargs(c, path, p->devargs, rx, tx)) || parse_ingress(c, it, path, p) ||
		    parse_rss(c, it, path, p))
			return -1;
		i++;
#ifdef RTE_MAX_ETHPORTS
		/* every port but the pcap file ports is a DPDK ethdev: DPDK's build caps their number
		 * (Debian's 22.11: RTE_MAX_ETHPORTS 32), below spanbox's SBX_MAX_PORTS */
		if (p->kind == SBX_PORT_ETHDEV && ++nb_ethdev > RTE_MAX_ETHPORTS)
			return cfg_fail(c, path, "devargs", "more than %d DPDK ports: this DPDK was built with "
				    "RTE_MAX_ETHPORTS %d (pcap file ports do not count: docs/CONFIG.md \"ports\")",
				    RTE_MAX_ETHPORTS, RTE_MAX_ETHPORTS);
#endif
	}
	cfg->nb_ports = (uint16_t)i;
	return 0;
}

/* Parse "microburst": per-window byte accounting of every port (docs/CONFIG.md "microburst"). */
int cfg_parse_microburst(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	const cJSON *o;

	return cfg_get_section(c, root, "microburst", microburst_keys, &o) ||
	       cfg_get_bool(c, o, "microburst", "enabled", true, &cfg->mb_enabled) ||
	       cfg_get_u32(c, o, "microburst", "window_us", 100, 100000, 1000, &cfg->mb_window_us) ||
	       cfg_get_u32(c, o, "microburst", "threshold_pct", 1, 1000, 80, &cfg->mb_threshold_pct) ? -1 : 0;
}

/* The decap types (bit mask of 1 << enum sbx_decap_type) each decap key other than "type" applies to. */
static const struct {
	const char *key;
	unsigned int types;
	const char *only;
} decap_scope[] = {
	{"sessions", 1u << SBX_DECAP_ERSPAN, "erspan"},
	{"vnis", 1u << SBX_DECAP_VXLAN | 1u << SBX_DECAP_GENEVE, "vxlan and geneve"},
	{"keys", 1u << SBX_DECAP_GRE, "gre"},
	{"teids", 1u << SBX_DECAP_GTPU, "gtpu"},
	{"udp_port", 1u << SBX_DECAP_VXLAN | 1u << SBX_DECAP_GENEVE | 1u << SBX_DECAP_GTPU, "vxlan, geneve and gtpu"},
	{"strip_fcs", 1u << SBX_DECAP_ERSPAN | 1u << SBX_DECAP_VXLAN | 1u << SBX_DECAP_GRE | 1u << SBX_DECAP_GENEVE,
	 "erspan, vxlan, gre and geneve (gtpu carries IP packets)"},
};

/* Parse the ids list @key ("sessions" 0..1023, "vnis" 0..16777215 or "keys" 0..2^32-1) of rule @r at @path: 1..8
 * entries, each once. Absent: every id (nb_ids 0). */
static int parse_decap_ids(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
			   long long max, struct sbx_decap_rule *r)
{
	const cJSON *arr, *it;
	char epath[144];
	long long v;
	int k = 0, j;

	if (cfg_get_array(c, obj, path, key, SBX_MAX_DECAP_IDS, &arr))
		return -1;
	if (arr && cJSON_GetArraySize(arr) == 0)
		return cfg_fail(c, path, key, "at least one id (leave %s out to take every one)", key);
	cJSON_ArrayForEach(it, arr) {
		snprintf(epath, sizeof(epath), "%s.%s[%d]", path, key, k);
		if (cfg_to_int(c, it, epath, NULL, 0, max, &v))
			return -1;
		for (j = 0; j < k; j++)
			if (r->ids[j] == v)
				return cfg_fail(c, epath, NULL, "%lld given twice (see %s[%d])", v, key, j);
		r->ids[k++] = (uint32_t)v;
	}
	r->nb_ids = (uint8_t)k;
	return 0;
}

/* True when rule @a takes every frame with outer destination of rule @b: same type (and UDP port),
 * and @a has no local_ip or @b's. */
static bool decap_same_tunnels(const struct sbx_decap_rule *a, const struct sbx_decap_rule *b)
{
	return a->type == b->type && (!sbx_decap_type_udp(a->type) || a->udp_port == b->udp_port) &&
	       (a->local_af == 0 ||
		(a->local_af == b->local_af && !memcmp(a->local_ip, b->local_ip, a->local_af == 4 ? 4 : 16)));
}

/* Parse decap rule @obj, @p's ingress.decap[@i] at @path; rules 0..i-1 are already parsed. A rule
 * (or one of its ids) that an earlier rule always takes first is refused: it could never match. */
static int parse_decap_rule(struct cfg_ctx *c, const cJSON *obj, const char *path, int i, struct sbx_ingress_cfg *in)
{
	struct sbx_decap_rule *r = &in->decap[i];
	const char *ids_key;
	char text[48], epath[144];
	const cJSON *it;
	size_t k;
	int j, m, n;

	if (!cJSON_IsObject(obj))
		return cfg_fail(c, path, NULL, "expected an object");
	if (cfg_check_keys(c, obj, path, decap_keys) || cfg_need(c, obj, path, "type") ||
	    cfg_get_choice(c, obj, path, "type", decap_choices, 0, &r->type))
		return -1;
	cJSON_ArrayForEach(it, obj) {
		for (k = 0; k < sizeof(decap_scope) / sizeof(decap_scope[0]); k++)
			if (!strcmp(decap_scope[k].key, it->string) && !(decap_scope[k].types & (1u << r->type)))
				return cfg_fail(c, path, it->string, "only for %s", decap_scope[k].only);
	}
	ids_key = r->type == SBX_DECAP_ERSPAN ? "sessions"
		  : r->type == SBX_DECAP_VXLAN || r->type == SBX_DECAP_GENEVE ? "vnis"
		  : r->type == SBX_DECAP_GTPU ? "teids" : "keys";
	if (parse_decap_ids(c, obj, path, ids_key,
			    r->type == SBX_DECAP_ERSPAN ? 1023
			    : r->type == SBX_DECAP_VXLAN || r->type == SBX_DECAP_GENEVE ? 16777215 : 4294967295LL, r) ||
	    cfg_get_u16(c, obj, path, "udp_port", 1, 65535,
		    r->type == SBX_DECAP_VXLAN ? SBX_VXLAN_PORT : r->type == SBX_DECAP_GENEVE ? SBX_GENEVE_PORT
		    : r->type == SBX_DECAP_GTPU ? SBX_GTPU_PORT : 0, &r->udp_port) ||
	    cfg_get_bool(c, obj, path, "strip_fcs", false, &r->strip_fcs) ||
	    (cfg_member(obj, "local_ip") && cfg_get_ip(c, obj, path, "local_ip", r->local_ip, &r->local_af, text, sizeof(text))))
		return -1;
	for (j = 0; j < i; j++) {
		const struct sbx_decap_rule *e = &in->decap[j];

		/* one UDP port, one tunnel type: the parser reads a datagram by its destination port */
		if (sbx_decap_type_udp(r->type) && sbx_decap_type_udp(e->type) && r->type != e->type &&
		    r->udp_port == e->udp_port)
			return cfg_fail(c, path, "udp_port", "%u is already the %s port of ingress.decap[%d]", r->udp_port,
				    sbx_decap_type_name(e->type), j);
		if (!decap_same_tunnels(e, r))
			continue;
		if (e->nb_ids == 0)
			return cfg_fail(c, path, NULL, "never matches: ingress.decap[%d] takes every frame it would (first match wins)",
				    j);
		for (m = 0; m < r->nb_ids; m++)
			for (n = 0; n < e->nb_ids; n++)
				if (r->ids[m] == e->ids[n]) {
					snprintf(epath, sizeof(epath), "%s.%s[%d]", path, ids_key, m);
					return cfg_fail(c, epath, NULL,
						    "%u never matches: ingress.decap[%d] takes it first (first match wins)",
						    r->ids[m], j);
				}
	}
	return 0;
}

/* Parse the optional "timestamp" object of ingress object @o (at @ipath) into @in: timestamps in
 * (include/spanbox/ts_in.h). Keys of the other format are refused. */
static int parse_ts_in(struct cfg_ctx *c, const cJSON *o, const char *ipath, struct sbx_ingress_cfg *in)
{
	static const char *const arista_only[] = {"tai_offset_s", NULL}, *const metamako_only[] = {"fcs", "window_s", NULL};
	const char *const *other;
	char tpath[112];
	const cJSON *x;
	int k;

	snprintf(tpath, sizeof(tpath), "%s.timestamp", ipath);
	if (cfg_get_object(c, o, ipath, "timestamp", tpath, ts_in_keys, &x))
		return -1;
	if (!x)
		return 0;
	if (cfg_need(c, x, tpath, "format") ||
	    cfg_get_choice(c, x, tpath, "format", ts_in_format_choices, SBX_TS_IN_NONE, &in->ts_format))
		return -1;
	other = in->ts_format == SBX_TS_IN_ARISTA ? metamako_only : arista_only;
	for (k = 0; other[k]; k++)
		if (cfg_member(x, other[k]))
			return cfg_fail(c, tpath, other[k], "only for format %s",
				    in->ts_format == SBX_TS_IN_ARISTA ? "metamako" : "arista");
	return cfg_get_bool(c, x, tpath, "fcs", false, &in->ts_fcs) ||
	       cfg_get_u8(c, x, tpath, "tai_offset_s", 0, 255, SBX_TAI_UTC_OFFSET_DEFAULT, &in->ts_tai_offset_s) ||
	       cfg_get_u32(c, x, tpath, "window_s", 1, 315360000, SBX_TS_IN_WINDOW_DEFAULT, &in->ts_window_s);
}

/* Parse the optional "ingress" object of port @p (at @path): decap, non_tunnel, strip, tag, dedup. */
static int parse_ingress(struct cfg_ctx *c, const cJSON *port, const char *path, struct sbx_port_cfg *p)
{
	struct sbx_ingress_cfg *in = &p->ingress;
	char ipath[80], rpath[112];
	const cJSON *o, *arr, *it, *x;
	int i = 0;

	snprintf(ipath, sizeof(ipath), "%s.ingress", path);
	if (cfg_get_object(c, port, path, "ingress", ipath, ingress_keys, &o))
		return -1;
	if (o == NULL)
		return 0; /* no ingress stage */
	if (cfg_get_array(c, o, ipath, "decap", SBX_MAX_DECAP_RULES, &arr))
		return -1;
	cJSON_ArrayForEach(it, arr) {
		snprintf(rpath, sizeof(rpath), "%s.decap[%d]", ipath, i);
		if (parse_decap_rule(c, it, rpath, i, in))
			return -1;
		i++;
	}
	in->nb_decap = (uint8_t)i;
	if (cfg_member(o, "non_tunnel") && in->nb_decap == 0)
		return cfg_fail(c, ipath, "non_tunnel",
			    "only with ingress.decap rules (it says what happens to frames none of them matches)");
	if (cfg_get_choice(c, o, ipath, "non_tunnel", non_tunnel_choices, SBX_NON_TUNNEL_PASS, &in->non_tunnel) ||
	    cfg_get_flags(c, o, ipath, "strip", strip_choices, &in->strip))
		return -1;
	snprintf(rpath, sizeof(rpath), "%s.tag", ipath);
	if (cfg_get_object(c, o, ipath, "tag", rpath, tag_keys, &x) ||
	    (x && (cfg_need(c, x, rpath, "vlan") || cfg_get_u16(c, x, rpath, "vlan", 1, 4094, 0, &in->tag_vlan))))
		return -1;
	if (parse_ts_in(c, o, ipath, in))
		return -1;
	snprintf(rpath, sizeof(rpath), "%s.dedup", ipath);
	if (cfg_get_object(c, o, ipath, "dedup", rpath, dedup_keys, &x))
		return -1;
	if (!x)
		return 0;
	if (cfg_need(c, x, rpath, "window_us") ||
	    cfg_get_u32(c, x, rpath, "window_us", 1, 1000000, 0, &in->dedup_window_us) ||
	    cfg_get_flags(c, x, rpath, "ignore", ignore_choices, &in->dedup_ignore) ||
	    cfg_get_choice(c, x, rpath, "action", dedup_action_choices, SBX_DEDUP_DROP, &in->dedup_action) ||
	    cfg_get_u32(c, x, rpath, "entries", SBX_DEDUP_ENTRIES_MIN, SBX_DEDUP_ENTRIES_MAX, SBX_DEDUP_ENTRIES_DEFAULT,
		    &in->dedup_entries))
		return -1;
	if (in->dedup_entries & (in->dedup_entries - 1))
		return cfg_fail(c, rpath, "entries", "%u is not a power of two", in->dedup_entries);
	return 0;
}
