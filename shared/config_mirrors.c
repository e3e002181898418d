/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The section "mirrors" and the session object that maps share (sbx_config_session_parse:
 * sources, filter, destination, encap, copy, mask, timestamp, recorder; docs/CONFIG.md).
 */
#include <string.h>

#include <pcap/pcap.h>

#include "spanbox/erspan.h" /* SBX_VXLAN_PORT, SBX_VXLAN_VNI_MAX */

#include "config_int.h"

static const char *const mirror_keys[] = {
	"id", "name", "sources", "filter", "snaplen", "sample", "destination", "encap", "copy", "oversize", "mask",
	"timestamp", NULL};

static const char *const source_keys[] = {"port", "direction", NULL};

static const char *const dest_keys[] = {"port", "group", "allow_forwarding", "recorder", NULL};

static const char *const recorder_keys[] = {"files", "stop", "max_bytes", "owner_pid", NULL};

static const char *const rec_files_keys[] = {"count", "mb", "seconds", NULL};

static const char *const rec_stop_keys[] = {"packets", "bytes", "seconds", NULL};

static const char *const encap_keys[] = {
	"type", "vlan", "src_ip", "dst_ip", "dst_mac", "src_mac", "ttl", "dscp", "df",
	"granularity", "hw_id", "sgt", "platform_subheader", "vni", "udp_port", NULL};

static const char *const copy_keys[] = {"strategy", "threshold", NULL};

static const char *const mask_keys[] = {"from", "offset", "length", "pattern", NULL};

static const char *const timestamp_keys[] = {"format", "device_id", "port", NULL};

static const struct cfg_choice encap_choices[] = {
	{"span", SBX_ENCAP_SPAN}, {"rspan", SBX_ENCAP_RSPAN}, {"erspan2", SBX_ENCAP_ERSPAN2},
	{"erspan3", SBX_ENCAP_ERSPAN3}, {"vxlan", SBX_ENCAP_VXLAN}, {NULL, 0}};

static const struct cfg_choice gra_choices[] = {
	{"100us", SBX_GRA_100US}, {"100ns", SBX_GRA_100NS}, {"ieee1588", SBX_GRA_IEEE1588},
	{NULL, 0}};

static const struct cfg_choice oversize_choices[] = {
	{"truncate", SBX_OVERSIZE_TRUNCATE}, {"drop", SBX_OVERSIZE_DROP}, {NULL, 0}};

static const struct cfg_choice mask_from_choices[] = {
	{"l2", SBX_MASK_L2}, {"l3", SBX_MASK_L3}, {"l4", SBX_MASK_L4}, {"inner_l3", SBX_MASK_INNER_L3},
	{"inner_l4", SBX_MASK_INNER_L4}, {NULL, 0}};

static const struct cfg_choice ts_format_choices[] = {
	{"arista64", SBX_TS_ARISTA64}, {"metamako", SBX_TS_METAMAKO}, {NULL, 0}};

static const struct cfg_choice strategy_choices[] = {
	{"adaptive", SBX_COPY_ADAPTIVE}, {"copy", SBX_COPY_COPY}, {"share", SBX_COPY_SHARE},
	{NULL, 0}};

#define ENC_RSPAN (1u << SBX_ENCAP_RSPAN)
#define ENC_ERSPAN ((1u << SBX_ENCAP_ERSPAN2) | (1u << SBX_ENCAP_ERSPAN3))
#define ENC_ERSPAN3 (1u << SBX_ENCAP_ERSPAN3)
#define ENC_VXLAN (1u << SBX_ENCAP_VXLAN)
#define ENC_OUTER_IP (ENC_ERSPAN | ENC_VXLAN) /* the types with an outer Ethernet + IP header */

/* The encap types (bit mask of 1 << enum sbx_encap) each encap key other than "type" applies to. */
static const struct {
	const char *key;
	unsigned int types;
	const char *only;
} encap_scope[] = {
	{"vlan", ENC_RSPAN, "rspan"},
	{"src_ip", ENC_OUTER_IP, "erspan2, erspan3 and vxlan"},
	{"dst_ip", ENC_OUTER_IP, "erspan2, erspan3 and vxlan"},
	{"dst_mac", ENC_OUTER_IP, "erspan2, erspan3 and vxlan"},
	{"src_mac", ENC_OUTER_IP, "erspan2, erspan3 and vxlan"},
	{"ttl", ENC_OUTER_IP, "erspan2, erspan3 and vxlan"},
	{"dscp", ENC_OUTER_IP, "erspan2, erspan3 and vxlan"},
	{"df", ENC_OUTER_IP, "erspan2, erspan3 and vxlan"},
	{"granularity", ENC_ERSPAN3, "erspan3"},
	{"hw_id", ENC_ERSPAN3, "erspan3"},
	{"sgt", ENC_ERSPAN3, "erspan3"},
	{"platform_subheader", ENC_ERSPAN3, "erspan3"},
	{"vni", ENC_VXLAN, "vxlan"},
	{"udp_port", ENC_VXLAN, "vxlan"},
};

/* Check that @filter (tcpdump syntax) compiles with libpcap for Ethernet frames. */
static int check_filter(struct cfg_ctx *c, const char *path, const char *filter)
{
	struct bpf_program prog = {0, NULL};
	pcap_t *p;
	int rc = 0;

	p = pcap_open_dead(DLT_EN10MB, 65535);
	if (p == NULL)
		return cfg_fail(c, path, "filter", "\"%s\": cannot open a libpcap handle", filter);
	if (pcap_compile(p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) != 0)
		rc = cfg_fail(c, path, "filter", "\"%s\": %s", filter, pcap_geterr(p));
	pcap_freecode(&prog);
	pcap_close(p);
	return rc;
}

/* Parse the required "sources" of session @m at @path: 1..8 distinct ports with a direction. */
static int parse_sources(struct cfg_ctx *c, const struct sbx_config *cfg, const cJSON *obj,
			 const char *path, struct sbx_mirror_cfg *m)
{
	const cJSON *arr, *it;
	char spath[64];
	int k = 0, j, p;

	if (cfg_need(c, obj, path, "sources") ||
	    cfg_get_array(c, obj, path, "sources", SBX_MAX_MIRROR_SOURCES, &arr))
		return -1;
	if (cJSON_GetArraySize(arr) == 0)
		return cfg_fail(c, path, "sources", "at least one source is required");
	cJSON_ArrayForEach(it, arr) {
		struct sbx_mirror_source *src = &m->sources[k];

		snprintf(spath, sizeof(spath), "%s.sources[%d]", path, k);
		if (!cJSON_IsObject(it))
			return cfg_fail(c, spath, NULL, "expected an object");
		if (cfg_check_keys(c, it, spath, source_keys) || cfg_get_port(c, cfg, it, spath, &p))
			return -1;
		for (j = 0; j < k; j++)
			if (m->sources[j].port == p)
				return cfg_fail(c, spath, "port",
					    "%s is already %s.sources[%d] (one source per port; "
					    "use direction \"both\")",
					    cfg->ports[p].name, path, j);
		src->port = (uint16_t)p;
		if (cfg_get_choice(c, it, spath, "direction", cfg_direction_choices, SBX_DIR_BOTH,
			       &src->direction))
			return -1;
		k++;
	}
	m->nb_sources = (uint16_t)k;
	return 0;
}

/* Parse the optional "encap" of session @m at @path: type, then the keys that type takes. */
static int parse_encap(struct cfg_ctx *c, const cJSON *obj, const char *path, struct sbx_mirror_cfg *m)
{
	char epath[64], src_text[48], dst_text[48];
	uint8_t src_version = 0, dst_version = 0;
	const cJSON *o, *it;
	size_t i;

	snprintf(epath, sizeof(epath), "%s.encap", path);
	if (cfg_get_object(c, obj, path, "encap", epath, encap_keys, &o) ||
	    cfg_get_choice(c, o, epath, "type", encap_choices, SBX_ENCAP_SPAN, &m->encap))
		return -1;
	cJSON_ArrayForEach(it, o) {
		for (i = 0; i < sizeof(encap_scope) / sizeof(encap_scope[0]); i++)
			if (!strcmp(encap_scope[i].key, it->string) &&
			    !(encap_scope[i].types & (1u << m->encap)))
				return cfg_fail(c, epath, it->string, "only for %s", encap_scope[i].only);
	}
	if (m->encap == SBX_ENCAP_RSPAN &&
	    (cfg_need(c, o, epath, "vlan") || cfg_get_u16(c, o, epath, "vlan", 1, 4094, 0, &m->vlan)))
		return -1;
	/* the keys below are absent unless the type takes them: their defaults are filled anyway */
	if (cfg_get_u8(c, o, epath, "ttl", 1, 255, 64, &m->ttl) ||
	    cfg_get_u8(c, o, epath, "dscp", 0, 63, 0, &m->dscp) ||
	    cfg_get_bool(c, o, epath, "df", true, &m->df) ||
	    cfg_get_choice(c, o, epath, "granularity", gra_choices, SBX_GRA_100US, &m->gra) ||
	    cfg_get_u8(c, o, epath, "hw_id", 0, 63, 0, &m->hw_id) ||
	    cfg_get_u16(c, o, epath, "sgt", 0, 65535, 0, &m->sgt) ||
	    cfg_get_bool(c, o, epath, "platform_subheader", false, &m->platform_subheader) ||
	    cfg_get_u32(c, o, epath, "vni", 0, SBX_VXLAN_VNI_MAX, m->id, &m->vni) ||
	    cfg_get_u16(c, o, epath, "udp_port", 1, 65535, SBX_VXLAN_PORT, &m->udp_port))
		return -1;
	if (!((1u << m->encap) & ENC_OUTER_IP))
		return 0;
	if (cfg_need(c, o, epath, "src_ip") || cfg_need(c, o, epath, "dst_ip") ||
	    cfg_need(c, o, epath, "dst_mac") ||
	    cfg_get_ip(c, o, epath, "src_ip", m->src_ip, &src_version, src_text, sizeof(src_text)) ||
	    cfg_get_ip(c, o, epath, "dst_ip", m->dst_ip, &dst_version, dst_text, sizeof(dst_text)) ||
	    cfg_get_mac(c, o, epath, "dst_mac", m->dst_mac))
		return -1;
	if (dst_version != src_version)
		return cfg_fail(c, epath, "dst_ip", "\"%s\" is IPv%u but src_ip \"%s\" is IPv%u", dst_text,
			    dst_version, src_text, src_version);
	m->ip_version = src_version;
	m->src_mac_set = cfg_member(o, "src_mac") != NULL;
	return m->src_mac_set ? cfg_get_mac(c, o, epath, "src_mac", m->src_mac) : 0;
}

/* Parse the optional "copy" of session @m at @path. */
static int parse_copy(struct cfg_ctx *c, const cJSON *obj, const char *path, struct sbx_mirror_cfg *m)
{
	char dpath[64];
	const cJSON *o;

	snprintf(dpath, sizeof(dpath), "%s.copy", path);
	return (cfg_get_object(c, obj, path, "copy", dpath, copy_keys, &o) ||
		cfg_get_choice(c, o, dpath, "strategy", strategy_choices, SBX_COPY_ADAPTIVE,
			   &m->copy_strategy) ||
		cfg_get_u32(c, o, dpath, "threshold", 0, 65535, 512, &m->copy_threshold))
		       ? -1 : 0;
}

/*
 * Parse the optional "timestamp" of session @m at @path (docs/CONFIG.md "mirrors", issue #26):
 * "format" required, "device_id" and "port" for metamako only.
 */
static int parse_timestamp(struct cfg_ctx *c, const cJSON *obj, const char *path, struct sbx_mirror_cfg *m)
{
	char tpath[64];
	const cJSON *o;
	uint16_t port = 0;

	snprintf(tpath, sizeof(tpath), "%s.timestamp", path);
	if (cfg_get_object(c, obj, path, "timestamp", tpath, timestamp_keys, &o))
		return -1;
	m->ts_format = SBX_TS_NONE;
	if (o == NULL)
		return 0;
	if (cfg_need(c, o, tpath, "format") || cfg_get_choice(c, o, tpath, "format", ts_format_choices, SBX_TS_NONE, &m->ts_format))
		return -1;
	if (m->ts_format != SBX_TS_METAMAKO && cfg_member(o, "device_id"))
		return cfg_fail(c, tpath, "device_id", "only for metamako");
	if (m->ts_format != SBX_TS_METAMAKO && cfg_member(o, "port"))
		return cfg_fail(c, tpath, "port", "only for metamako");
	if (cfg_get_u16(c, o, tpath, "device_id", 0, 65535, 0, &m->ts_device) ||
	    cfg_get_u16(c, o, tpath, "port", 0, 255, 0, &port))
		return -1;
	m->ts_port = (uint8_t)port;
	m->ts_port_set = cfg_member(o, "port") != NULL;
	return 0;
}

/*
 * Parse destination "recorder" of session @m (object @sess; its destination @dst at @dpath): a capture into pcapng
 * files (docs/CAPTURE.md). The copy is pcapng's own (no encapsulation): "encap" and "copy" must be
 * absent, as must "port".
 */
static int parse_recorder(struct cfg_ctx *c, const cJSON *sess, const cJSON *dst, const char *dpath,
			  struct sbx_mirror_cfg *m)
{
	struct sbx_capture_cfg *r = &m->rec;
	const cJSON *o, *f, *st;
	char rpath[96], fpath[112];
	long long v;

	if (cfg_member(dst, "port") || cfg_member(dst, "allow_forwarding"))
		return cfg_fail(c, dpath, cfg_member(dst, "port") ? "port" : "allow_forwarding",
			    "not with a recorder destination");
	snprintf(rpath, sizeof(rpath), "%s.recorder", dpath);
	if (cfg_get_object(c, dst, dpath, "recorder", rpath, recorder_keys, &o))
		return -1;
	m->dst_kind = SBX_DST_RECORDER;
	m->dst_port = 0;
	snprintf(fpath, sizeof(fpath), "%s.files", rpath);
	if (cfg_get_object(c, o, rpath, "files", fpath, rec_files_keys, &f) ||
	    cfg_get_u32(c, f, fpath, "count", 0, SBX_CAPTURE_FILES_MAX, 0, &r->file_count) ||
	    cfg_get_u32(c, f, fpath, "mb", 0, 4096, 0, &r->file_mb) ||
	    cfg_get_u32(c, f, fpath, "seconds", 0, 86400, 0, &r->file_seconds))
		return -1;
	if (r->file_count > 0 && r->file_mb == 0 && r->file_seconds == 0)
		return cfg_fail(c, fpath, "count", "a ring of files needs mb or seconds per file");
	snprintf(fpath, sizeof(fpath), "%s.stop", rpath);
	if (cfg_get_object(c, o, rpath, "stop", fpath, rec_stop_keys, &st) ||
	    cfg_get_int(c, st, fpath, "packets", 0, 1LL << 50, 0, &v))
		return -1;
	r->stop_packets = (uint64_t)v;
	if (cfg_get_int(c, st, fpath, "bytes", 0, 1LL << 50, 0, &v))
		return -1;
	r->stop_bytes = (uint64_t)v;
	if (cfg_get_u32(c, st, fpath, "seconds", 0, 30 * 86400, 0, &r->stop_seconds) ||
	    cfg_get_int(c, o, rpath, "max_bytes", 0, 1LL << 50, 0, &v))
		return -1;
	r->max_bytes = (uint64_t)v;
	if (cfg_get_int(c, o, rpath, "owner_pid", 0, INT32_MAX, 0, &v))
		return -1;
	r->owner_pid = (int32_t)v;
	if (cfg_member(sess, "encap") || cfg_member(sess, "copy") || cfg_member(sess, "oversize"))
		return cfg_fail(c, dpath, "recorder",
			    "a capture takes no encap, no copy and no oversize (pcapng keeps the frame, no MTU)");
	if (cfg_member(sess, "timestamp"))
		return cfg_fail(c, dpath, "recorder", "a capture takes no timestamp (pcapng records each frame's time)");
	return 0;
}

/* Parse the optional "mask" of session @m at @path (issue #26, mask.h): from, offset, length, pattern. */
static int parse_mask(struct cfg_ctx *c, const cJSON *obj, const char *path, struct sbx_mirror_cfg *m)
{
	struct sbx_mask_cfg *k = &m->mask;
	char mpath[64];
	const cJSON *o;
	long long v;

	snprintf(mpath, sizeof(mpath), "%s.mask", path);
	memset(k, 0, sizeof(*k));
	if (cfg_get_object(c, obj, path, "mask", mpath, mask_keys, &o))
		return -1;
	if (o == NULL)
		return 0; /* no mask */
	if (cfg_need(c, o, mpath, "from") || cfg_need(c, o, mpath, "length") ||
	    cfg_get_choice(c, o, mpath, "from", mask_from_choices, SBX_MASK_OFF, &k->from) ||
	    cfg_get_u16(c, o, mpath, "offset", 0, SBX_MASK_LEN_MAX, 0, &k->offset) ||
	    cfg_get_u16(c, o, mpath, "length", 1, SBX_MASK_LEN_MAX, 1, &k->length) ||
	    cfg_get_int(c, o, mpath, "pattern", 0, 255, 0, &v))
		return -1;
	k->pattern = (uint8_t)v;
	if (m->dst_kind == SBX_DST_RECORDER)
		return cfg_fail(c, mpath, NULL, "not with a recorder destination (a capture keeps the frame as it is)");
	return 0;
}

/* Parse one session object @obj, mirrors[@i]; sessions 0..i-1 are already parsed. */
/*
 * A session has a mask or a timestamp, not both: the mask's offsets are those of the mirrored
 * frame, which an AVSP header inserted after the source MAC would move (and the timestamped copy
 * path does not mask). -1 with the error naming "timestamp".
 */
static int mask_with_timestamp(struct cfg_ctx *c, const char *path, const struct sbx_mirror_cfg *m)
{
	if (m->mask.from != SBX_MASK_OFF && m->ts_format != SBX_TS_NONE)
		return cfg_fail(c, path, "timestamp", "a session with a mask cannot have a timestamp too (one or the other)");
	return 0;
}

/* One session object @obj at @path with the keys @keys into @m; mirrors 0..i-1 are already parsed
 * (a map: i = nb_mirrors, every mirror). */
static int parse_session(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *const keys[], int i,
			 struct sbx_config *cfg, struct sbx_mirror_cfg *m)
{
	const cJSON *o;
	char dpath[64]; /* any child of "mirrors[<int>]" or "maps[<int>]" fits */
	bool allow = false;
	int j, p;

	if (!cJSON_IsObject(obj))
		return cfg_fail(c, path, NULL, "expected an object");
	if (cfg_check_keys(c, obj, path, keys) || cfg_need(c, obj, path, "id") ||
	    cfg_get_u16(c, obj, path, "id", SBX_MIRROR_ID_MIN, SBX_MIRROR_ID_MAX, 0, &m->id))
		return -1;
	for (j = 0; j < i; j++)
		if (cfg->mirrors[j].id == m->id)
			return cfg_fail(c, path, "id", "duplicate session id %u (see mirrors[%d])", m->id, j);
	snprintf(m->name, sizeof(m->name), "session-%u", m->id);
	if (cfg_member(obj, "name") &&
	    cfg_get_string(c, obj, path, "name", m->name, sizeof(m->name), true, cfg_name_chars, ""))
		return -1;
	for (j = 0; j < i; j++)
		if (!strcmp(cfg->mirrors[j].name, m->name))
			return cfg_fail(c, path, "name", "duplicate session name \"%s\" (see mirrors[%d])",
				    m->name, j);
	if (parse_sources(c, cfg, obj, path, m) ||
	    cfg_get_string(c, obj, path, "filter", m->filter, sizeof(m->filter), false, NULL, "") ||
	    (m->filter[0] && check_filter(c, path, m->filter)) ||
	    cfg_get_u32(c, obj, path, "snaplen", 0, 65535, 0, &m->snaplen) ||
	    cfg_get_u32(c, obj, path, "sample", 1, 1000000, 1, &m->sample) ||
	    cfg_get_choice(c, obj, path, "oversize", oversize_choices, SBX_OVERSIZE_TRUNCATE, &m->oversize))
		return -1;
	if (m->snaplen > 0 && m->snaplen < 14)
		return cfg_fail(c, path, "snaplen", "%u out of range 14..65535 (or 0 = whole frame)",
			    m->snaplen);
	snprintf(dpath, sizeof(dpath), "%s.destination", path);
	if (cfg_need(c, obj, path, "destination") ||
	    cfg_get_object(c, obj, path, "destination", dpath, dest_keys, &o))
		return -1;
	if (cfg_member(o, "group") != NULL)
		return cfg_parse_group_destination(c, cfg, o, dpath, m) || parse_encap(c, obj, path, m) ||
		       parse_copy(c, obj, path, m) || parse_mask(c, obj, path, m) || parse_timestamp(c, obj, path, m) ||
		       mask_with_timestamp(c, path, m);
	if (cfg_member(o, "recorder"))
		return parse_recorder(c, obj, o, dpath, m) || parse_mask(c, obj, path, m);
	if (cfg_get_port(c, cfg, o, dpath, &p))
		return -1;
	for (j = 0; j < m->nb_sources; j++)
		if (m->sources[j].port == p)
			return cfg_fail(c, dpath, "port", "%s is also a source of this session (mirror loop)",
				    cfg->ports[p].name);
	/* copies into a port that forwards would be mixed into live traffic: only when asked for */
	if (cfg_get_bool(c, o, dpath, "allow_forwarding", false, &allow))
		return -1;
	for (j = 0; j < cfg->nb_xconnects && !allow; j++)
		if (cfg->xconnects[j].a == p || cfg->xconnects[j].b == p)
			return cfg_fail(c, dpath, "port",
				    "%s forwards traffic (forwarding.xconnects[%d]): mirror copies would be mixed into "
				    "it; set destination.allow_forwarding to true to do that anyway",
				    cfg->ports[p].name, j);
	m->dst_port = (uint16_t)p;
	return parse_encap(c, obj, path, m) || parse_copy(c, obj, path, m) || parse_mask(c, obj, path, m) ||
			       parse_timestamp(c, obj, path, m) || mask_with_timestamp(c, path, m) ? -1 : 0;
}

static int parse_mirror(struct cfg_ctx *c, const cJSON *obj, int i, struct sbx_config *cfg)
{
	char path[24]; /* "mirrors[<int>]" */

	snprintf(path, sizeof(path), "mirrors[%d]", i);
	return parse_session(c, obj, path, mirror_keys, i, cfg, &cfg->mirrors[i]);
}

/* maps (shared/config_maps.c): a map's session keys are a mirror's, parsed by the same code */
int sbx_config_session_parse(const cJSON *obj, const char *path, const char *const extra_keys[],
			     struct sbx_config *cfg, struct sbx_mirror_cfg *m, char *err, size_t errlen)
{
	const char *keys[sizeof(mirror_keys) / sizeof(mirror_keys[0]) + 8];
	struct cfg_ctx c = {err, errlen};
	size_t n = 0, k;

	for (k = 0; mirror_keys[k] != NULL; k++)
		keys[n++] = mirror_keys[k];
	for (k = 0; extra_keys && extra_keys[k] != NULL && n + 1 < sizeof(keys) / sizeof(keys[0]); k++)
		keys[n++] = extra_keys[k];
	keys[n] = NULL;
	return parse_session(&c, obj, path, keys, cfg->nb_mirrors, cfg, m);
}

/* Parse the optional "mirrors" array: at most 16 sessions, ids and names unique (needs ports). */
int cfg_parse_mirrors(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	const cJSON *arr, *it;
	int i = 0;

	if (cfg_get_array(c, root, "", "mirrors", SBX_MAX_MIRRORS, &arr))
		return -1;
	cJSON_ArrayForEach(it, arr) {
		if (parse_mirror(c, it, i, cfg))
			return -1;
		i++;
	}
	cfg->nb_mirrors = (uint16_t)i;
	return 0;
}
