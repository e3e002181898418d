/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON config parser and validator (schema: docs/CONFIG.md). */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <rte_config.h> /* RTE_MAX_ETHPORTS */
#include <pcap/pcap.h>

#include "spanbox/config.h"
#include "spanbox/hostinfo.h"
#include "spanbox/erspan.h" /* SBX_VXLAN_PORT, SBX_VXLAN_VNI_MAX */
#include "spanbox/shm.h" /* SBX_TABLES_JSON_MAX */

#define MAX_RXQ_ID 15            /* highest RX queue id a worker may poll */

static const char NAME_CHARS[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
static const char CPU_CHARS[] = "0123456789,-";
static const char TOKEN_CHARS[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.~+/=";

static const char *const root_keys[] = {
	"eal", "pool", "ports", "workers", "forwarding", "mgmt", "mirrors", "tool_groups", "microburst", "flows", "maps", NULL};
static const char *const eal_keys[] = {
	"file_prefix", "socket_mem_mb", "primary_lcore", "mgmt_lcore", "cpus", "housekeeping_cpus", "extra_args",
	NULL};
static const char *const pool_keys[] = {"mbufs", "cache", "headroom", "force", "measure_memset", NULL};
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
static const char *const worker_keys[] = {
	"count", "lcores", "burst", "idle_sleep_us", "idle_polls", "busy_poll", "queues",
	"hang_timeout_ms", "crash_limit", "crash_window_s", "standby", "standby_lcores", "tunnel_senders", "cpus", "tool_group_capacity", NULL};
static const char *const tunnel_senders_keys[] = {"entries", "idle_s", NULL};
static const char *const tg_capacity_keys[] = {"groups", "members", NULL};
static const char *const rxq_keys[] = {"port", "queue", NULL};
static const char *const fwd_keys[] = {"xconnects", NULL};
static const char *const mgmt_keys[] = {"listen", "port", "database", "token", "token_file",
					"history_interval_s", "web_root", "tokens", "tls", "insecure", "captures", NULL};
static const char *const mgmt_tokens_keys[] = {"admin", "admin_file", "viewer", "viewer_file", NULL};
static const char *const mgmt_tls_keys[] = {"cert", "key", NULL};
static const char *const mirror_keys[] = {
	"id", "name", "sources", "filter", "snaplen", "sample", "destination", "encap", "copy", "oversize", "mask",
	"timestamp", NULL};
static const char *const source_keys[] = {"port", "direction", NULL};
static const char *const dest_keys[] = {"port", "group", "allow_forwarding", "recorder", NULL};
static const char *const group_keys[] = {"name", "members", "hash", "failover", "member_rate_limit", NULL};
static const char *const failover_keys[] = {"hold_down_ms", "tx_refused_percent", "tx_refused_window_ms", NULL};
static const char *const rate_keys[] = {"pps", "bps", NULL};
static const char *const recorder_keys[] = {"files", "stop", "max_bytes", "owner_pid", NULL};
static const char *const rec_files_keys[] = {"count", "mb", "seconds", NULL};
static const char *const rec_stop_keys[] = {"packets", "bytes", "seconds", NULL};
static const char *const captures_keys[] = {"directory", "quota_mb", NULL};
static const char *const encap_keys[] = {
	"type", "vlan", "src_ip", "dst_ip", "dst_mac", "src_mac", "ttl", "dscp", "df",
	"granularity", "hw_id", "sgt", "platform_subheader", "vni", "udp_port", NULL};
static const char *const copy_keys[] = {"strategy", "threshold", NULL};
static const char *const mask_keys[] = {"from", "offset", "length", "pattern", NULL};
static const char *const flows_keys[] = {"enabled", "ports", "active_timeout_s", "idle_timeout_s", "flows_per_worker",
					 "observation_domain_id", "template_period_s", "collectors", "biflow", "sessions", NULL};
static const char *const flow_port_keys[] = {"port", "direction", NULL};
static const char *const collector_keys[] = {"address", "port", "transport", NULL};
static const char *const timestamp_keys[] = {"format", "device_id", "port", NULL};

/* One accepted string of an enumerated key and the value it stands for. */
struct choice {
	const char *name;
	uint8_t value;
};

/* The name of @p value among @p choices, "unknown" when none has it. */
static const char *choice_name(const struct choice *choices, uint8_t value)
{
	const struct choice *c;

	for (c = choices; c->name != NULL; c++)
		if (c->value == value)
			return c->name;
	return "unknown";
}

static const struct choice direction_choices[] = {
	{"rx", SBX_DIR_RX}, {"tx", SBX_DIR_TX}, {"both", SBX_DIR_BOTH}, {NULL, 0}};
const char *sbx_direction_name(uint8_t d)
{
	return choice_name(direction_choices, d);
}

static const struct choice encap_choices[] = {
	{"span", SBX_ENCAP_SPAN}, {"rspan", SBX_ENCAP_RSPAN}, {"erspan2", SBX_ENCAP_ERSPAN2},
	{"erspan3", SBX_ENCAP_ERSPAN3}, {"vxlan", SBX_ENCAP_VXLAN}, {NULL, 0}};
static const struct choice gra_choices[] = {
	{"100us", SBX_GRA_100US}, {"100ns", SBX_GRA_100NS}, {"ieee1588", SBX_GRA_IEEE1588},
	{NULL, 0}};
static const struct choice decap_choices[] = {
	{"erspan", SBX_DECAP_ERSPAN}, {"vxlan", SBX_DECAP_VXLAN}, {"gre", SBX_DECAP_GRE}, {"geneve", SBX_DECAP_GENEVE},
	{"gtpu", SBX_DECAP_GTPU}, {NULL, 0}};
const char *sbx_decap_type_name(uint8_t type)
{
	return choice_name(decap_choices, type);
}

static const struct choice non_tunnel_choices[] = {
	{"pass", SBX_NON_TUNNEL_PASS}, {"drop", SBX_NON_TUNNEL_DROP}, {NULL, 0}};
static const struct choice strip_choices[] = {
	{"vlan", SBX_STRIP_VLAN}, {"mpls", SBX_STRIP_MPLS}, {"vntag", SBX_STRIP_VNTAG}, {"etag", SBX_STRIP_ETAG},
	{NULL, 0}};
static const struct choice ignore_choices[] = {
	{"ttl", SBX_DEDUP_IGNORE_TTL}, {"ip_checksum", SBX_DEDUP_IGNORE_IP_CHECKSUM},
	{"dscp", SBX_DEDUP_IGNORE_DSCP}, {"vlan", SBX_DEDUP_IGNORE_VLAN}, {NULL, 0}};
static const struct choice ts_in_format_choices[] = {
	{"arista", SBX_TS_IN_ARISTA}, {"metamako", SBX_TS_IN_METAMAKO}, {NULL, 0}};
static const struct choice dedup_action_choices[] = {
	{"drop", SBX_DEDUP_DROP}, {"count", SBX_DEDUP_COUNT}, {NULL, 0}};
static const struct choice group_hash_choices[] = {
	{"5tuple", SBX_GROUP_HASH_5TUPLE}, {"2tuple", SBX_GROUP_HASH_2TUPLE}, {NULL, 0}};
static const struct choice oversize_choices[] = {
	{"truncate", SBX_OVERSIZE_TRUNCATE}, {"drop", SBX_OVERSIZE_DROP}, {NULL, 0}};
static const struct choice mask_from_choices[] = {
	{"l2", SBX_MASK_L2}, {"l3", SBX_MASK_L3}, {"l4", SBX_MASK_L4}, {"inner_l3", SBX_MASK_INNER_L3},
	{"inner_l4", SBX_MASK_INNER_L4}, {NULL, 0}};
static const struct choice ts_format_choices[] = {
	{"arista64", SBX_TS_ARISTA64}, {"metamako", SBX_TS_METAMAKO}, {NULL, 0}};
static const struct choice strategy_choices[] = {
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

/* Destination of error messages. */
struct ctx {
	char *err;
	size_t errlen;
};

/* Write "<path>[.<key>]: <message>" to the error buffer; always returns -1. */
__attribute__((format(printf, 4, 5)))
static int fail(struct ctx *c, const char *path, const char *key, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->err == NULL || c->errlen == 0)
		return -1;
	n = snprintf(c->err, c->errlen, "%s%s%s: ", path, (*path && key) ? "." : "",
		     key ? key : "");
	if (n >= 0 && (size_t)n < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Member @key of @obj, or NULL when @obj is NULL or has no such member. */
static const cJSON *member(const cJSON *obj, const char *key)
{
	return obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

/* Refuse members of object @obj that are not in @allowed (NULL-terminated) or appear twice. */
static int check_keys(struct ctx *c, const cJSON *obj, const char *path,
		      const char *const allowed[])
{
	const cJSON *it, *prev;
	size_t i;

	cJSON_ArrayForEach(it, obj) {
		for (i = 0; allowed[i] && strcmp(allowed[i], it->string); i++)
			;
		if (!allowed[i])
			return fail(c, path, it->string, "unknown key");
		for (prev = obj->child; prev != it; prev = prev->next)
			if (!strcmp(prev->string, it->string))
				return fail(c, path, it->string, "duplicate key");
	}
	return 0;
}

/* Refuse an absent member @key of @obj. */
static int need(struct ctx *c, const cJSON *obj, const char *path, const char *key)
{
	return member(obj, key) ? 0 : fail(c, path, key, "missing required key");
}

/* Fetch the object member @key of @obj into *out (NULL when absent) and check its keys;
 * @opath is the path of the object itself. */
static int get_object(struct ctx *c, const cJSON *obj, const char *path, const char *key,
		      const char *opath, const char *const allowed[], const cJSON **out)
{
	const cJSON *it = member(obj, key);

	*out = NULL;
	if (!it)
		return 0;
	if (!cJSON_IsObject(it))
		return fail(c, path, key, "expected an object");
	*out = it;
	return check_keys(c, it, opath, allowed);
}

/* Fetch the top-level object @key into *out (NULL when absent) and check its keys. */
static int get_section(struct ctx *c, const cJSON *root, const char *key,
		       const char *const allowed[], const cJSON **out)
{
	return get_object(c, root, "", key, key, allowed, out);
}

/* Fetch the array member @key of @obj into *out (NULL when absent); at most @max entries. */
static int get_array(struct ctx *c, const cJSON *obj, const char *path, const char *key,
		     int max, const cJSON **out)
{
	const cJSON *it = member(obj, key);
	int n;

	*out = NULL;
	if (!it)
		return 0;
	if (!cJSON_IsArray(it))
		return fail(c, path, key, "expected an array");
	n = cJSON_GetArraySize(it);
	if (n > max)
		return fail(c, path, key, "%d entries, at most %d", n, max);
	*out = it;
	return 0;
}

/* Read the whole number @it into *out; refuse other types, fractions and values outside min..max. */
static int to_int(struct ctx *c, const cJSON *it, const char *path, const char *key,
		  long long min, long long max, long long *out)
{
	double v;

	if (!cJSON_IsNumber(it))
		return fail(c, path, key, "expected an integer");
	v = it->valuedouble;
	/* beyond +-9e15 every double is whole (and out of any range here) */
	if (v > -9e15 && v < 9e15 && v != (double)(long long)v)
		return fail(c, path, key, "expected an integer");
	if (v < (double)min || v > (double)max)
		return fail(c, path, key, "%.15g out of range %lld..%lld", v, min, max);
	*out = (long long)v;
	return 0;
}

/* Integer member @key of @obj into *out, @def when absent (see to_int). */
static int get_int(struct ctx *c, const cJSON *obj, const char *path, const char *key,
		   long long min, long long max, long long def, long long *out)
{
	const cJSON *it = member(obj, key);

	*out = def;
	return it ? to_int(c, it, path, key, min, max, out) : 0;
}

/* get_int() into a uint8_t. */
static int get_u8(struct ctx *c, const cJSON *obj, const char *path, const char *key,
		  long long min, long long max, long long def, uint8_t *out)
{
	long long v;

	if (get_int(c, obj, path, key, min, max, def, &v))
		return -1;
	*out = (uint8_t)v;
	return 0;
}

/* get_int() into a uint16_t. */
static int get_u16(struct ctx *c, const cJSON *obj, const char *path, const char *key,
		   long long min, long long max, long long def, uint16_t *out)
{
	long long v;

	if (get_int(c, obj, path, key, min, max, def, &v))
		return -1;
	*out = (uint16_t)v;
	return 0;
}

/* get_int() into a uint32_t. */
static int get_u32(struct ctx *c, const cJSON *obj, const char *path, const char *key,
		   long long min, long long max, long long def, uint32_t *out)
{
	long long v;

	if (get_int(c, obj, path, key, min, max, def, &v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* Copy string @it into @dst[size]; refuse non-strings, too long, "" if @nonempty, bytes not in @chars. */
static int to_string(struct ctx *c, const cJSON *it, const char *path, const char *key,
		     char *dst, size_t size, bool nonempty, const char *chars)
{
	const char *s;
	size_t len;

	if (!cJSON_IsString(it))
		return fail(c, path, key, "expected a string");
	s = it->valuestring;
	len = strlen(s);
	if (nonempty && len == 0)
		return fail(c, path, key, "must not be empty");
	if (len >= size)
		return fail(c, path, key, "longer than %zu characters", size - 1);
	if (chars && strspn(s, chars) != len)
		return fail(c, path, key, "\"%s\" has characters outside %s", s,
			    chars == NAME_CHARS ? "[A-Za-z0-9_-]" : "[0-9,-]");
	memcpy(dst, s, len + 1);
	return 0;
}

/* String member @key of @obj into @dst, @def when absent (see to_string). */
static int get_string(struct ctx *c, const cJSON *obj, const char *path, const char *key,
		      char *dst, size_t size, bool nonempty, const char *chars, const char *def)
{
	const cJSON *it = member(obj, key);

	if (it)
		return to_string(c, it, path, key, dst, size, nonempty, chars);
	snprintf(dst, size, "%s", def);
	return 0;
}

/* Boolean member @key of @obj into *out, @def when absent. */
static int get_bool(struct ctx *c, const cJSON *obj, const char *path, const char *key, bool def,
		    bool *out)
{
	const cJSON *it = member(obj, key);

	*out = def;
	if (!it)
		return 0;
	if (!cJSON_IsBool(it))
		return fail(c, path, key, "expected true or false");
	*out = cJSON_IsTrue(it);
	return 0;
}

/* String @it, one of the names of @choices, into *out as its value. */
static int to_choice(struct ctx *c, const cJSON *it, const char *path, const char *key,
		     const struct choice *choices, uint8_t *out)
{
	char list[128] = "";
	size_t i, n = 0;

	if (!cJSON_IsString(it))
		return fail(c, path, key, "expected a string");
	for (i = 0; choices[i].name; i++) {
		if (!strcmp(choices[i].name, it->valuestring)) {
			*out = choices[i].value;
			return 0;
		}
		if (n < sizeof(list))
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s\"%s\"", i ? ", " : "",
					      choices[i].name);
	}
	return fail(c, path, key, "\"%s\" is not one of %s", it->valuestring, list);
}

/* String member @key of @obj, one of the names of @choices, into *out as its value; @def when absent. */
static int get_choice(struct ctx *c, const cJSON *obj, const char *path, const char *key,
		      const struct choice *choices, uint8_t def, uint8_t *out)
{
	const cJSON *it = member(obj, key);

	*out = def;
	return it ? to_choice(c, it, path, key, choices, out) : 0;
}

/* Array member @key of @obj of names of @choices (each once) into *out as the OR of their values
 * (bits); 0 when absent. */
static int get_flags(struct ctx *c, const cJSON *obj, const char *path, const char *key,
		     const struct choice *choices, uint8_t *out)
{
	const cJSON *arr, *it;
	char epath[144];
	uint8_t v;
	int i = 0;

	*out = 0;
	if (get_array(c, obj, path, key, 16, &arr))
		return -1;
	cJSON_ArrayForEach(it, arr) {
		snprintf(epath, sizeof(epath), "%s.%s[%d]", path, key, i);
		if (to_choice(c, it, epath, NULL, choices, &v))
			return -1;
		if (*out & v)
			return fail(c, epath, NULL, "\"%s\" given twice", it->valuestring);
		*out |= v;
		i++;
	}
	return 0;
}

/* True when @s is a MAC address "aa:bb:cc:dd:ee:ff" (hex digits of either case); stored in @mac. */
static bool parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int i, k, v;

	if (strlen(s) != 17)
		return false;
	for (i = 0; i < 6; i++, s += 3) {
		if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]) ||
		    (i < 5 && s[2] != ':'))
			return false;
		for (v = 0, k = 0; k < 2; k++)
			v = v * 16 + (unsigned int)(isdigit((unsigned char)s[k])
							    ? s[k] - '0'
							    : tolower((unsigned char)s[k]) - 'a' + 10);
		mac[i] = (uint8_t)v;
	}
	return true;
}

/* True when @s starts with @pat ('h' = a hex digit, anything else literal) then ends or has ','. */
static bool match_pci(const char *s, const char *pat)
{
	for (; *pat; pat++, s++)
		if (*pat == 'h' ? !isxdigit((unsigned char)*s) : *s != *pat)
			return false;
	return *s == '\0' || *s == ',';
}

/* True when @s is "a.b.c.d/len" with a valid IPv4 address and len 0..32. */
static bool is_ipv4_cidr(const char *s)
{
	const char *slash = strchr(s, '/');
	char ip[INET_ADDRSTRLEN];
	struct in_addr a;
	size_t n;

	if (!slash || (size_t)(slash - s) >= sizeof(ip))
		return false;
	memcpy(ip, s, (size_t)(slash - s));
	ip[slash - s] = '\0';
	if (inet_pton(AF_INET, ip, &a) != 1)
		return false;
	n = strlen(++slash);
	return n >= 1 && n <= 2 && strspn(slash, "0123456789") == n && atoi(slash) <= 32;
}

/*
 * EAL options spanbox sets itself (shared/eal_args.c) or that conflict with one it sets: an
 * extra argument repeating one would start a process with two prefixes, lcore maps or device
 * lists (EAL takes the last, or refuses at init, long after --check said "valid"). name: a long
 * option without "--", or one short option letter.
 */
static const struct {
	const char *name;
	const char *why;
} eal_refused[] = {
	{"file-prefix", "spanbox sets --file-prefix itself (eal.file_prefix)"},
	{"lcores", "@lcores"}, {"main-lcore", "@lcores"}, {"master-lcore", "@lcores"},
	{"l", "@lcores"}, {"c", "@lcores"},
	{"proc-type", "spanbox sets --proc-type itself (primary, or secondary for the workers and mgmt)"},
	{"socket-mem", "spanbox sets --socket-mem itself (eal.socket_mem_mb)"},
	{"m", "@mem"}, {"no-huge", "@mem"},
	{"vdev", "@dev"}, {"allow", "@dev"}, {"pci-whitelist", "@dev"}, {"block", "@dev"},
	{"pci-blacklist", "@dev"}, {"no-pci", "@dev"}, {"a", "@dev"}, {"b", "@dev"},
	{"single-file-segments",
	 "spanbox sets --single-file-segments itself (every process must agree on the memory layout)"},
};

/* The reasons shared by several options of eal_refused[]. */
static const char *eal_why(const char *why)
{
	if (!strcmp(why, "@lcores"))
		return "spanbox sets --lcores and --main-lcore itself (eal.primary_lcore, eal.mgmt_lcore, "
		       "workers.lcores, eal.cpus)";
	if (!strcmp(why, "@mem"))
		return "conflicts with --socket-mem, which spanbox sets itself (eal.socket_mem_mb)";
	if (!strcmp(why, "@dev"))
		return "spanbox sets the devices itself (ports[].devargs: --vdev for virtual devices, -a for PCI "
		       "ports, --no-pci when there is none)";
	return why;
}

/* Long EAL options (DPDK 22.11) that take their value as the next argument when given without "=". */
static const char *const eal_long_with_value[] = {
	"base-virtaddr", "file-prefix", "huge-dir", "iova-mode", "lcores", "log-level", "trace", "trace-dir",
	"trace-bufsz", "trace-mode", "main-lcore", "master-lcore", "mbuf-pool-ops-name", "proc-type",
	"socket-mem", "socket-limit", "syslog", "vdev", "vfio-intr", "vfio-vf-token", "allow", "block",
	"pci-whitelist", "pci-blacklist", "force-max-simd-bitwidth", NULL};
/* Short EAL options (DPDK 22.11 eal_short_options "a:b:c:s:d:hl:S:m:n:r:v") that take a value. */
static const char EAL_SHORT_WITH_VALUE[] = "abcsdlSmnr";

/*
 * Refuse extra EAL argument @arg (eal.extra_args[@i]) when it is an option of eal_refused[]: a long
 * option by its name before "=" or by an abbreviation getopt_long would take for it, a short one
 * anywhere in a cluster ("-vl1"). *skip_next is set when @arg is an option whose value is the next
 * argument (that argument is a value, not an option).
 */
static int check_extra_arg(struct ctx *c, int i, const char *arg, bool *skip_next)
{
	char path[32];
	size_t k, n;

	*skip_next = false;
	snprintf(path, sizeof(path), "eal.extra_args[%d]", i);
	if (arg[0] != '-' || arg[1] == '\0')
		return 0; /* not an option (EAL refuses stray arguments itself) */
	if (arg[1] == '-') {
		const char *name = arg + 2;

		n = strcspn(name, "=");
		if (n == 0)
			return 0;
		for (k = 0; k < sizeof(eal_refused) / sizeof(eal_refused[0]); k++) {
			const char *full = eal_refused[k].name;

			if (full[1] == '\0' || strlen(full) < n || strncmp(full, name, n))
				continue;
			if (strlen(full) == n)
				return fail(c, path, NULL, "\"%s\": %s", arg, eal_why(eal_refused[k].why));
			return fail(c, path, NULL, "\"%s\": EAL takes it for --%s: %s", arg, full,
				    eal_why(eal_refused[k].why));
		}
		for (k = 0; name[n] == '\0' && eal_long_with_value[k]; k++)
			if (strlen(eal_long_with_value[k]) == n && !strncmp(eal_long_with_value[k], name, n))
				*skip_next = true;
		return 0;
	}
	for (n = 1; arg[n]; n++) {
		for (k = 0; k < sizeof(eal_refused) / sizeof(eal_refused[0]); k++)
			if (eal_refused[k].name[1] == '\0' && eal_refused[k].name[0] == arg[n])
				return fail(c, path, NULL, "\"%s\": %s", arg, eal_why(eal_refused[k].why));
		if (strchr(EAL_SHORT_WITH_VALUE, arg[n])) {
			*skip_next = arg[n + 1] == '\0';
			return 0; /* the rest of the cluster is the option's value */
		}
	}
	return 0;
}

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
static int check_devargs(struct ctx *c, const char *path, const char *devargs, char rx[SBX_DEVARGS_LEN],
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
			return fail(c, path, "devargs", "empty key in \"%s\"", devargs);
		if (d == 0 && key_in(pcap_pmd_only, a.key, a.klen))
			return fail(c, path, "devargs",
				    "net_pcap key \"%.*s\" is not supported by spanbox's pcap file ports (they read "
				    "and write files with libpcap, docs/PCAP_SECONDARY.md; valid: %s)",
				    (int)a.klen, a.key, list);
		for (k = 0; keys[k] && (strlen(keys[k]) != a.klen || strncmp(keys[k], a.key, a.klen)); k++)
			;
		if (!keys[k])
			return fail(c, path, "devargs", "unknown %s key \"%.*s\" (valid: %s)", drivers[d].name,
				    (int)a.klen, a.key, list);
		if (d != 0)
			continue;
		/* pcap file ports: each key once, with a value (pcap_port.c would take the first one) */
		if (seen & (1u << k))
			return fail(c, path, "devargs", "key \"%s\" given twice", keys[k]);
		seen |= 1u << k;
		if (a.val == NULL || a.vlen == 0)
			return fail(c, path, "devargs", "%s needs a value (%s=...)", keys[k], keys[k]);
		if (k <= 1)
			snprintf(k == 0 ? rx : tx, SBX_DEVARGS_LEN, "%.*s", (int)a.vlen, a.val);
	}
	return 0;
}

/* Parse "eal": prefix, hugepage memory, lcore ids of primary and mgmt, cpu set, extra args. */
static int parse_eal(struct ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	const cJSON *o, *arr, *it;
	bool skip = false;
	char path[64];
	int i = 0;

	if (get_section(c, root, "eal", eal_keys, &o) ||
	    get_string(c, o, "eal", "file_prefix", cfg->file_prefix, sizeof(cfg->file_prefix),
		       true, NAME_CHARS, "spanbox") ||
	    get_u32(c, o, "eal", "socket_mem_mb", 64, 65536, 512, &cfg->socket_mem_mb) ||
	    get_u16(c, o, "eal", "primary_lcore", 0, SBX_LCORE_ID_MAX, 0, &cfg->primary_lcore) ||
	    get_u16(c, o, "eal", "mgmt_lcore", 0, SBX_LCORE_ID_MAX, 100, &cfg->mgmt_lcore) ||
	    get_string(c, o, "eal", "cpus", cfg->cpus, sizeof(cfg->cpus), true, CPU_CHARS, "0-1") ||
	    get_string(c, o, "eal", "housekeeping_cpus", cfg->housekeeping_cpus, sizeof(cfg->housekeeping_cpus),
		       false, CPU_CHARS, "") ||
	    get_array(c, o, "eal", "extra_args", SBX_MAX_EXTRA_EAL, &arr))
		return -1;
	if (cfg->mgmt_lcore == cfg->primary_lcore)
		return fail(c, "eal", "mgmt_lcore", "lcore %u is already eal.primary_lcore",
			    cfg->mgmt_lcore);
	{
		struct sbx_cpuset set;

		if (sbx_cpulist_parse(cfg->cpus, &set) <= 0)
			return fail(c, "eal", "cpus", "\"%s\" is not a CPU list (\"0-3,8\", CPUs 0..%d)", cfg->cpus,
				    SBX_MAX_CPUS - 1);
		if (cfg->housekeeping_cpus[0] != '\0' && sbx_cpulist_parse(cfg->housekeeping_cpus, &set) <= 0)
			return fail(c, "eal", "housekeeping_cpus", "\"%s\" is not a CPU list (\"0-3,8\", CPUs 0..%d)",
				    cfg->housekeeping_cpus, SBX_MAX_CPUS - 1);
	}
	cJSON_ArrayForEach(it, arr) {
		snprintf(path, sizeof(path), "eal.extra_args[%d]", i);
		if (to_string(c, it, path, NULL, cfg->extra_eal[i], SBX_DEVARGS_LEN, true, NULL))
			return -1;
		if (skip)
			skip = false; /* the value of the option before */
		else if (check_extra_arg(c, i, cfg->extra_eal[i], &skip))
			return -1;
		i++;
	}
	cfg->nb_extra_eal = (uint16_t)i;
	return 0;
}

/* Parse "pool": mbuf count (0 = let the planner compute it), per-lcore cache, the planner's
 * headroom, whether a count below the plan is allowed, and the start-up memset measurement. */
static int parse_pool(struct ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	const cJSON *o;

	if (get_section(c, root, "pool", pool_keys, &o) ||
	    get_u32(c, o, "pool", "mbufs", 0, 16777216, 0, &cfg->pool_mbufs) ||
	    get_u16(c, o, "pool", "cache", 0, 512, 256, &cfg->pool_cache) ||
	    get_u32(c, o, "pool", "headroom", 0, 1000000, 2048, &cfg->pool_headroom) ||
	    get_bool(c, o, "pool", "force", false, &cfg->pool_force) ||
	    get_bool(c, o, "pool", "measure_memset", false, &cfg->pool_measure_memset))
		return -1;
	if (cfg->pool_mbufs > 0 && cfg->pool_mbufs < 1024)
		return fail(c, "pool", "mbufs", "%u out of range 1024..16777216 (or 0 = computed)",
			    cfg->pool_mbufs);
	return 0;
}

static int parse_ingress(struct ctx *c, const cJSON *port, const char *path, struct sbx_port_cfg *p);

/*
 * Parse ports[i].rss: {"fields": ["ipv4", "ipv6", "tcp", "udp"] (default all four), "key":
 * "symmetric" (default) or hex bytes}. Whether the device can do it is checked at start, when
 * the primary configures the port (primary/ports.c).
 */
static int parse_rss(struct ctx *c, const cJSON *port, const char *ppath, struct sbx_port_cfg *p)
{
	const cJSON *o, *arr, *it;
	char path[80], key[2 * SBX_RSS_KEY_MAX + SBX_RSS_KEY_MAX + 8];
	int k = 0, n;

	snprintf(path, sizeof(path), "%s.rss", ppath);
	memset(&p->rss, 0, sizeof(p->rss));
	if (get_object(c, port, ppath, "rss", path, rss_keys, &o))
		return -1;
	if (o == NULL)
		return 0;
	p->rss.enabled = true;
	p->rss.fields = SBX_RSS_F_IPV4 | SBX_RSS_F_IPV6 | SBX_RSS_F_TCP | SBX_RSS_F_UDP;
	if (get_array(c, o, path, "fields", 4, &arr))
		return -1;
	if (arr != NULL) {
		p->rss.fields = 0;
		cJSON_ArrayForEach(it, arr) {
			char fpath[112];
			uint8_t bit;

			snprintf(fpath, sizeof(fpath), "%s.fields[%d]", path, k++);
			if (!cJSON_IsString(it))
				return fail(c, fpath, NULL, "expected one of \"ipv4\", \"ipv6\", \"tcp\", \"udp\"");
			for (bit = 1; bit <= SBX_RSS_F_UDP; bit <<= 1)
				if (strcmp(it->valuestring, sbx_rss_field_name(bit)) == 0)
					break;
			if (bit > SBX_RSS_F_UDP)
				return fail(c, fpath, NULL, "\"%s\": expected one of \"ipv4\", \"ipv6\", \"tcp\", \"udp\"",
					    it->valuestring);
			if (p->rss.fields & bit)
				return fail(c, fpath, NULL, "\"%s\" twice", it->valuestring);
			p->rss.fields |= bit;
		}
		if (!(p->rss.fields & (SBX_RSS_F_IPV4 | SBX_RSS_F_IPV6)))
			return fail(c, path, "fields", "names no IP version: add \"ipv4\" and/or \"ipv6\" (ports are "
				    "hashed with the addresses of an IP version)");
	}
	if (get_string(c, o, path, "key", key, sizeof(key), false, NULL, "symmetric"))
		return -1;
	if (strcmp(key, "symmetric") == 0) {
		p->rss.symmetric = true;
		return 0;
	}
	n = sbx_rss_key_parse(key, p->rss.key);
	if (n < 0)
		return fail(c, path, "key", "\"%s\": expected \"symmetric\" or the key as hex bytes (40 or 52 "
			    "bytes for most NICs, at most %d)", key, SBX_RSS_KEY_MAX);
	p->rss.key_len = (uint8_t)n;
	p->rss.symmetric = sbx_rss_key_is_symmetric(p->rss.key, (size_t)n);
	return 0;
}

/* Parse the required "ports" array and derive each port's kind and PCI-ness. */
static int parse_ports(struct ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	char path[64], rx[SBX_DEVARGS_LEN], tx[SBX_DEVARGS_LEN];
	const cJSON *arr, *it;
	int i = 0, j, nb_ethdev = 0;

	if (need(c, root, "", "ports") || get_array(c, root, "", "ports", SBX_MAX_PORTS, &arr))
		return -1;
	if (cJSON_GetArraySize(arr) == 0)
		return fail(c, "", "ports", "at least one port is required");
	cJSON_ArrayForEach(it, arr) {
		struct sbx_port_cfg *p = &cfg->ports[i];

		snprintf(path, sizeof(path), "ports[%d]", i);
		if (!cJSON_IsObject(it))
			return fail(c, path, NULL, "expected an object");
		if (check_keys(c, it, path, port_keys) || need(c, it, path, "name") ||
		    get_string(c, it, path, "name", p->name, sizeof(p->name), true, NAME_CHARS, ""))
			return -1;
		for (j = 0; j < i; j++)
			if (!strcmp(cfg->ports[j].name, p->name))
				return fail(c, path, "name", "duplicate port name \"%s\" (see ports[%d])",
					    p->name, j);
		if (need(c, it, path, "devargs") ||
		    get_string(c, it, path, "devargs", p->devargs, sizeof(p->devargs), true, NULL, "") ||
		    get_u16(c, it, path, "mtu", 68, 9600, 1500, &p->mtu) ||
		    get_u16(c, it, path, "rx_desc", 64, 16384, 1024, &p->rx_desc) ||
		    get_u16(c, it, path, "tx_desc", 64, 16384, 1024, &p->tx_desc) ||
		    get_string(c, it, path, "netns", p->netns, sizeof(p->netns), false, NAME_CHARS, "") ||
		    get_string(c, it, path, "address", p->address, sizeof(p->address), false, NULL, "") ||
		    get_u32(c, it, path, "speed_mbps", 0, 400000, 0, &p->speed_mbps))
			return -1;
		if (p->address[0] && !is_ipv4_cidr(p->address))
			return fail(c, path, "address", "\"%s\" is not an IPv4 CIDR like 198.18.0.1/24",
				    p->address);
		p->kind = (!strncmp(p->devargs, "net_pcap", 8) || !strncmp(p->devargs, "eth_pcap", 8))
				  ? SBX_PORT_PCAP_FILE : SBX_PORT_ETHDEV;
		p->is_pci = match_pci(p->devargs, "hhhh:hh:hh.h") || match_pci(p->devargs, "hh:hh.h");
		if ((!p->is_pci && check_devargs(c, path, p->devargs, rx, tx)) || parse_ingress(c, it, path, p) ||
		    parse_rss(c, it, path, p))
			return -1;
		i++;
#ifdef RTE_MAX_ETHPORTS
		/* every port but the pcap file ports is a DPDK ethdev: DPDK's build caps their number
		 * (Debian's 22.11: RTE_MAX_ETHPORTS 32), below spanbox's SBX_MAX_PORTS */
		if (p->kind == SBX_PORT_ETHDEV && ++nb_ethdev > RTE_MAX_ETHPORTS)
			return fail(c, path, "devargs", "more than %d DPDK ports: this DPDK was built with "
				    "RTE_MAX_ETHPORTS %d (pcap file ports do not count: docs/CONFIG.md \"ports\")",
				    RTE_MAX_ETHPORTS, RTE_MAX_ETHPORTS);
#endif
	}
	cfg->nb_ports = (uint16_t)i;
	return 0;
}

/* Parse "microburst": per-window byte accounting of every port (docs/CONFIG.md "microburst"). */
static int parse_microburst(struct ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	const cJSON *o;

	return get_section(c, root, "microburst", microburst_keys, &o) ||
	       get_bool(c, o, "microburst", "enabled", true, &cfg->mb_enabled) ||
	       get_u32(c, o, "microburst", "window_us", 100, 100000, 1000, &cfg->mb_window_us) ||
	       get_u32(c, o, "microburst", "threshold_pct", 1, 1000, 80, &cfg->mb_threshold_pct) ? -1 : 0;
}

/* Parse workers.lcores, or derive it (primary_lcore+1+i, skipping mgmt_lcore); ids unique. */
static int parse_lcores(struct ctx *c, const cJSON *o, struct sbx_config *cfg)
{
	unsigned int next = cfg->primary_lcore + 1u;
	const cJSON *arr;
	char path[64];
	long long v = 0;
	int w, j;

	if (get_array(c, o, "workers", "lcores", SBX_MAX_WORKERS, &arr))
		return -1;
	if (arr && cJSON_GetArraySize(arr) != cfg->nb_workers)
		return fail(c, "workers", "lcores", "%d entries, expected workers.count = %u",
			    cJSON_GetArraySize(arr), cfg->nb_workers);
	for (w = 0; w < cfg->nb_workers; w++) {
		snprintf(path, sizeof(path), "workers.lcores[%d]", w);
		if (arr) {
			if (to_int(c, cJSON_GetArrayItem(arr, w), path, NULL, 0, SBX_LCORE_ID_MAX, &v))
				return -1;
		} else {
			if (next == cfg->mgmt_lcore)
				next++;
			if (next > SBX_LCORE_ID_MAX)
				return fail(c, "workers", "lcores",
					    "default lcore %u of worker %d is above %d: list the lcores",
					    next, w, SBX_LCORE_ID_MAX);
			v = next++;
		}
		if (v == cfg->primary_lcore)
			return fail(c, path, NULL, "lcore %lld is already eal.primary_lcore", v);
		if (v == cfg->mgmt_lcore)
			return fail(c, path, NULL, "lcore %lld is already eal.mgmt_lcore", v);
		for (j = 0; j < w; j++)
			if (cfg->workers[j].lcore_id == v)
				return fail(c, path, NULL, "lcore %lld is already used by worker %d", v, j);
		cfg->workers[w].lcore_id = (uint16_t)v;
	}
	return 0;
}

/* Is lcore @p v taken by the primary, mgmt, a worker or one of the first @p nb_sb standbys? Says
 * which in @p who. */
static bool lcore_taken(const struct sbx_config *cfg, long long v, unsigned int nb_sb, char *who, size_t len)
{
	unsigned int j;

	if (v == cfg->primary_lcore)
		return snprintf(who, len, "eal.primary_lcore"), true;
	if (v == cfg->mgmt_lcore)
		return snprintf(who, len, "eal.mgmt_lcore"), true;
	for (j = 0; j < cfg->nb_workers; j++)
		if (cfg->workers[j].lcore_id == v)
			return snprintf(who, len, "used by worker %u", j), true;
	for (j = 0; j < nb_sb; j++)
		if (cfg->standby_lcores[j] == v)
			return snprintf(who, len, "used by standby %u", j), true;
	return false;
}

/* Parse workers.standby and workers.standby_lcores, or derive them: the next free ids after the
 * highest worker lcore (past 127: the lowest free ones); never an id another process has. */
static int parse_standby(struct ctx *c, const cJSON *o, struct sbx_config *cfg)
{
	unsigned int next = 0, s, w;
	const cJSON *arr;
	char path[64], who[48];
	long long v = 0;

	if (get_u16(c, o, "workers", "standby", 0, SBX_MAX_STANDBYS, 1, &cfg->nb_standby) ||
	    get_array(c, o, "workers", "standby_lcores", SBX_MAX_STANDBYS, &arr))
		return -1;
	if (arr && cJSON_GetArraySize(arr) != cfg->nb_standby)
		return fail(c, "workers", "standby_lcores", "%d entries, expected workers.standby = %u",
			    cJSON_GetArraySize(arr), cfg->nb_standby);
	for (w = 0; w < cfg->nb_workers; w++)
		if (cfg->workers[w].lcore_id >= next)
			next = cfg->workers[w].lcore_id + 1u;
	for (s = 0; s < cfg->nb_standby; s++) {
		snprintf(path, sizeof(path), "workers.standby_lcores[%u]", s);
		if (arr) {
			if (to_int(c, cJSON_GetArrayItem(arr, (int)s), path, NULL, 0, SBX_LCORE_ID_MAX, &v))
				return -1;
			if (lcore_taken(cfg, v, s, who, sizeof(who)))
				return fail(c, path, NULL, "lcore %lld is already %s", v, who);
		} else {
			while (next <= SBX_LCORE_ID_MAX && lcore_taken(cfg, next, s, who, sizeof(who)))
				next++;
			if (next > SBX_LCORE_ID_MAX) /* wrap once: the lowest free id */
				for (next = 0; next <= SBX_LCORE_ID_MAX &&
				     lcore_taken(cfg, next, s, who, sizeof(who)); next++)
					;
			if (next > SBX_LCORE_ID_MAX)
				return fail(c, "workers", "standby_lcores", "no free lcore id for standby %u: list them",
					    s);
			v = next++;
		}
		cfg->standby_lcores[s] = (uint16_t)v;
	}
	return 0;
}

/* Default polling: worker w polls queue w of every ETHDEV port; worker 0 polls BRIDGED ports. */
_Static_assert(SBX_MAX_RXQ_PER_WORKER >= SBX_MAX_PORTS, "a worker's default queues: one of every port");
static void default_queues(struct sbx_config *cfg)
{
	uint16_t w, p;

	for (w = 0; w < cfg->nb_workers; w++) {
		struct sbx_worker_cfg *wk = &cfg->workers[w];

		for (p = 0; p < cfg->nb_ports; p++) {
			if (cfg->ports[p].kind == SBX_PORT_PCAP_FILE && w != 0)
				continue;
			wk->rxq[wk->nb_rxq].port = p;
			wk->rxq[wk->nb_rxq].queue = w;
			wk->nb_rxq++;
		}
	}
}

/* Parse workers.queues, or derive it; each (port, queue) is polled by one worker at most. */
static int parse_queues(struct ctx *c, const cJSON *o, struct sbx_config *cfg)
{
	int owner[SBX_MAX_PORTS][MAX_RXQ_ID + 1];
	const cJSON *arr, *list, *e;
	char path[64], epath[64], name[SBX_NAME_LEN];
	int w = 0, n, p;
	long long q;

	if (get_array(c, o, "workers", "queues", SBX_MAX_WORKERS, &arr))
		return -1;
	if (!arr) {
		default_queues(cfg);
		return 0;
	}
	if (cJSON_GetArraySize(arr) != cfg->nb_workers)
		return fail(c, "workers", "queues", "%d entries, expected workers.count = %u",
			    cJSON_GetArraySize(arr), cfg->nb_workers);
	memset(owner, 0xff, sizeof(owner)); /* -1: nobody */
	cJSON_ArrayForEach(list, arr) {
		struct sbx_worker_cfg *wk = &cfg->workers[w];

		snprintf(path, sizeof(path), "workers.queues[%d]", w);
		if (!cJSON_IsArray(list))
			return fail(c, path, NULL, "expected an array of {\"port\", \"queue\"} objects");
		if (cJSON_GetArraySize(list) > SBX_MAX_RXQ_PER_WORKER)
			return fail(c, path, NULL, "%d entries, at most %d", cJSON_GetArraySize(list),
				    SBX_MAX_RXQ_PER_WORKER);
		n = 0;
		cJSON_ArrayForEach(e, list) {
			snprintf(epath, sizeof(epath), "workers.queues[%d][%d]", w, n);
			if (!cJSON_IsObject(e))
				return fail(c, epath, NULL, "expected an object");
			if (check_keys(c, e, epath, rxq_keys) || need(c, e, epath, "port") ||
			    need(c, e, epath, "queue") ||
			    get_string(c, e, epath, "port", name, sizeof(name), true, NULL, ""))
				return -1;
			p = sbx_config_port_index(cfg, name);
			if (p < 0)
				return fail(c, epath, "port", "unknown port \"%s\"", name);
			if (get_int(c, e, epath, "queue", 0, MAX_RXQ_ID, 0, &q))
				return -1;
			if (cfg->ports[p].kind == SBX_PORT_PCAP_FILE && q >= cfg->nb_workers)
				return fail(c, epath, "queue",
					    "%lld out of range 0..%u (bridged port %s: one queue per worker)",
					    q, cfg->nb_workers - 1u, name);
			if (owner[p][q] >= 0)
				return fail(c, epath, NULL, "%s queue %lld is already polled by worker %d",
					    name, q, owner[p][q]);
			owner[p][q] = w;
			wk->rxq[n].port = (uint16_t)p;
			wk->rxq[n].queue = (uint16_t)q;
			n++;
		}
		wk->nb_rxq = (uint16_t)n;
		w++;
	}
	return 0;
}

/* Parse "workers": count, lcores, polling knobs and queues (needs eal and ports parsed). */
/*
 * Parse workers.cpus (one CPU per worker, none twice, none of eal.housekeeping_cpus) and settle
 * eal.housekeeping_cpus: given, or eal.cpus (no workers.cpus), or eal.cpus less the workers' CPUs.
 * Whether the CPUs exist and are online is checked at start (sbx_config_placement_check()).
 */
static int parse_worker_cpus(struct ctx *c, const cJSON *o, struct sbx_config *cfg)
{
	struct sbx_cpuset hk, workers;
	const cJSON *arr;
	char path[64];
	long long v;
	int w, j;
	bool hk_given = cfg->housekeeping_cpus[0] != '\0';

	if (get_array(c, o, "workers", "cpus", SBX_MAX_WORKERS, &arr))
		return -1;
	if (arr && cJSON_GetArraySize(arr) != cfg->nb_workers)
		return fail(c, "workers", "cpus", "%d entries, expected workers.count = %u (one CPU per worker)",
			    cJSON_GetArraySize(arr), cfg->nb_workers);
	cfg->pinned = arr != NULL;
	memset(&workers, 0, sizeof(workers));
	for (w = 0; w < cfg->nb_workers; w++) {
		cfg->workers[w].cpu = -1;
		if (!arr)
			continue;
		snprintf(path, sizeof(path), "workers.cpus[%d]", w);
		if (to_int(c, cJSON_GetArrayItem(arr, w), path, NULL, 0, SBX_MAX_CPUS - 1, &v))
			return -1;
		for (j = 0; j < w; j++)
			if (cfg->workers[j].cpu == v)
				return fail(c, path, NULL, "CPU %lld is already the CPU of worker %d: two polling workers "
					    "on one CPU take turns (give each its own)", v, j);
		cfg->workers[w].cpu = (int16_t)v;
		workers.bits[v / 64] |= 1ULL << (v % 64);
	}
	if (sbx_cpulist_parse(hk_given ? cfg->housekeeping_cpus : cfg->cpus, &hk) < 0)
		return fail(c, "eal", hk_given ? "housekeeping_cpus" : "cpus", "not a CPU list");
	if (hk_given) {
		for (w = 0; w < cfg->nb_workers; w++)
			if (cfg->workers[w].cpu >= 0 && sbx_cpuset_has(&hk, (unsigned int)cfg->workers[w].cpu)) {
				snprintf(path, sizeof(path), "workers.cpus[%d]", w);
				return fail(c, path, NULL, "CPU %d is in eal.housekeeping_cpus (%s): a worker's CPU "
					    "is its own", cfg->workers[w].cpu, cfg->housekeeping_cpus);
			}
	} else {
		for (j = 0; j < SBX_MAX_CPUS / 64; j++)
			hk.bits[j] &= ~workers.bits[j];
		if (sbx_cpulist_format(&hk, cfg->housekeeping_cpus, sizeof(cfg->housekeeping_cpus)),
		    cfg->housekeeping_cpus[0] == '\0')
			return fail(c, "eal", "housekeeping_cpus", "eal.cpus (%s) less workers.cpus leaves no CPU for the "
				    "primary and mgmt: set eal.housekeeping_cpus", cfg->cpus);
		return 0;
	}
	sbx_cpulist_format(&hk, cfg->housekeeping_cpus, sizeof(cfg->housekeeping_cpus));
	return 0;
}

static int parse_workers(struct ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	const cJSON *o, *ts;

	if (get_section(c, root, "workers", worker_keys, &o) ||
	    get_u16(c, o, "workers", "count", 1, SBX_MAX_WORKERS, 2, &cfg->nb_workers) ||
	    get_u16(c, o, "workers", "burst", 1, SBX_MAX_BURST, 32, &cfg->burst) ||
	    get_u32(c, o, "workers", "idle_sleep_us", 0, 1000000, 100, &cfg->idle_sleep_us) ||
	    get_u32(c, o, "workers", "idle_polls", 1, 1000000, 64, &cfg->idle_polls) ||
	    get_u32(c, o, "workers", "hang_timeout_ms", 50, 60000, 500, &cfg->hang_timeout_ms) ||
	    get_u16(c, o, "workers", "crash_limit", 1, 1000, 5, &cfg->crash_limit) ||
	    get_u16(c, o, "workers", "crash_window_s", 1, 3600, 30, &cfg->crash_window_s))
		return -1;
	if (get_bool(c, o, "workers", "busy_poll", false, &cfg->busy_poll))
		return -1;
	if (get_object(c, o, "workers", "tunnel_senders", "workers.tunnel_senders", tunnel_senders_keys, &ts) ||
	    get_u32(c, ts, "workers.tunnel_senders", "entries", 1, SBX_MAX_TUNNEL_SOURCES, SBX_TUNNEL_SENDERS_DEFAULT,
		    &cfg->tunnel_senders) ||
	    get_u32(c, ts, "workers.tunnel_senders", "idle_s", 1, 86400, SBX_TUNNEL_IDLE_S_DEFAULT, &cfg->tunnel_idle_s))
		return -1;
	if (get_object(c, o, "workers", "tool_group_capacity", "workers.tool_group_capacity", tg_capacity_keys, &ts) ||
	    get_u16(c, ts, "workers.tool_group_capacity", "groups", 1, SBX_MAX_TOOL_GROUPS,
		    SBX_TOOL_GROUP_CAPACITY_DEFAULT, &cfg->tg_cap_groups) ||
	    get_u16(c, ts, "workers.tool_group_capacity", "members", 1, SBX_MAX_GROUP_MEMBERS,
		    SBX_TOOL_GROUP_CAPACITY_DEFAULT, &cfg->tg_cap_members))
		return -1;
	return (parse_lcores(c, o, cfg) || parse_standby(c, o, cfg) || parse_worker_cpus(c, o, cfg) ||
		parse_queues(c, o, cfg)) ? -1 : 0;
}

/* Parse forwarding.xconnects: pairs of two distinct ports, each port in one pair at most. */
static int parse_forwarding(struct ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	int used[SBX_MAX_PORTS], end[2], i = 0, k;
	char path[64], epath[64], name[SBX_NAME_LEN];
	const cJSON *o, *arr, *pair;

	if (get_section(c, root, "forwarding", fwd_keys, &o) ||
	    get_array(c, o, "forwarding", "xconnects", SBX_MAX_XCONNECTS, &arr))
		return -1;
	memset(used, 0xff, sizeof(used)); /* -1: in no xconnect */
	cJSON_ArrayForEach(pair, arr) {
		snprintf(path, sizeof(path), "forwarding.xconnects[%d]", i);
		if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2)
			return fail(c, path, NULL, "expected an array of 2 port names");
		for (k = 0; k < 2; k++) {
			snprintf(epath, sizeof(epath), "forwarding.xconnects[%d][%d]", i, k);
			if (to_string(c, cJSON_GetArrayItem(pair, k), epath, NULL, name, sizeof(name),
				      true, NULL))
				return -1;
			end[k] = sbx_config_port_index(cfg, name);
			if (end[k] < 0)
				return fail(c, epath, NULL, "unknown port \"%s\"", name);
			if (k == 1 && end[1] == end[0])
				return fail(c, epath, NULL, "%s is cross-connected to itself", name);
			if (used[end[k]] >= 0)
				return fail(c, epath, NULL, "%s is already in forwarding.xconnects[%d]",
					    name, used[end[k]]);
			used[end[k]] = i;
		}
		cfg->xconnects[i].a = (uint16_t)end[0];
		cfg->xconnects[i].b = (uint16_t)end[1];
		i++;
	}
	cfg->nb_xconnects = (uint16_t)i;
	return 0;
}

/* Check that @filter (tcpdump syntax) compiles with libpcap for Ethernet frames. */
static int check_filter(struct ctx *c, const char *path, const char *filter)
{
	struct bpf_program prog = {0, NULL};
	pcap_t *p;
	int rc = 0;

	p = pcap_open_dead(DLT_EN10MB, 65535);
	if (p == NULL)
		return fail(c, path, "filter", "\"%s\": cannot open a libpcap handle", filter);
	if (pcap_compile(p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) != 0)
		rc = fail(c, path, "filter", "\"%s\": %s", filter, pcap_geterr(p));
	pcap_freecode(&prog);
	pcap_close(p);
	return rc;
}

/* Parse the required port name member "port" of @obj (at @path) into its index *out. */
static int get_port(struct ctx *c, const struct sbx_config *cfg, const cJSON *obj,
		    const char *path, int *out)
{
	char name[SBX_NAME_LEN];

	if (need(c, obj, path, "port") ||
	    get_string(c, obj, path, "port", name, sizeof(name), true, NULL, ""))
		return -1;
	*out = sbx_config_port_index(cfg, name);
	return *out < 0 ? fail(c, path, "port", "unknown port \"%s\"", name) : 0;
}

/* Parse the required "sources" of session @m at @path: 1..8 distinct ports with a direction. */
static int parse_sources(struct ctx *c, const struct sbx_config *cfg, const cJSON *obj,
			 const char *path, struct sbx_mirror_cfg *m)
{
	const cJSON *arr, *it;
	char spath[64];
	int k = 0, j, p;

	if (need(c, obj, path, "sources") ||
	    get_array(c, obj, path, "sources", SBX_MAX_MIRROR_SOURCES, &arr))
		return -1;
	if (cJSON_GetArraySize(arr) == 0)
		return fail(c, path, "sources", "at least one source is required");
	cJSON_ArrayForEach(it, arr) {
		struct sbx_mirror_source *src = &m->sources[k];

		snprintf(spath, sizeof(spath), "%s.sources[%d]", path, k);
		if (!cJSON_IsObject(it))
			return fail(c, spath, NULL, "expected an object");
		if (check_keys(c, it, spath, source_keys) || get_port(c, cfg, it, spath, &p))
			return -1;
		for (j = 0; j < k; j++)
			if (m->sources[j].port == p)
				return fail(c, spath, "port",
					    "%s is already %s.sources[%d] (one source per port; "
					    "use direction \"both\")",
					    cfg->ports[p].name, path, j);
		src->port = (uint16_t)p;
		if (get_choice(c, it, spath, "direction", direction_choices, SBX_DIR_BOTH,
			       &src->direction))
			return -1;
		k++;
	}
	m->nb_sources = (uint16_t)k;
	return 0;
}

/* Parse the IPv4 or IPv6 literal member @key of @obj into @ip (network order); *version = 4 or 6. */
static int get_ip(struct ctx *c, const cJSON *obj, const char *path, const char *key,
		  uint8_t ip[16], uint8_t *version, char *text, size_t size)
{
	if (get_string(c, obj, path, key, text, size, true, NULL, ""))
		return -1;
	if (inet_pton(AF_INET, text, ip) == 1)
		*version = 4;
	else if (inet_pton(AF_INET6, text, ip) == 1)
		*version = 6;
	else
		return fail(c, path, key, "\"%s\" is not an IPv4 or IPv6 address", text);
	return 0;
}

/* Parse the MAC address member @key of @obj into @mac. */
static int get_mac(struct ctx *c, const cJSON *obj, const char *path, const char *key,
		   uint8_t mac[6])
{
	char text[SBX_NAME_LEN];

	if (get_string(c, obj, path, key, text, sizeof(text), true, NULL, ""))
		return -1;
	if (!parse_mac(text, mac))
		return fail(c, path, key, "\"%s\" is not a MAC address like aa:bb:cc:dd:ee:ff", text);
	return 0;
}

/* Parse the optional "encap" of session @m at @path: type, then the keys that type takes. */
static int parse_encap(struct ctx *c, const cJSON *obj, const char *path, struct sbx_mirror_cfg *m)
{
	char epath[64], src_text[48], dst_text[48];
	uint8_t src_version = 0, dst_version = 0;
	const cJSON *o, *it;
	size_t i;

	snprintf(epath, sizeof(epath), "%s.encap", path);
	if (get_object(c, obj, path, "encap", epath, encap_keys, &o) ||
	    get_choice(c, o, epath, "type", encap_choices, SBX_ENCAP_SPAN, &m->encap))
		return -1;
	cJSON_ArrayForEach(it, o) {
		for (i = 0; i < sizeof(encap_scope) / sizeof(encap_scope[0]); i++)
			if (!strcmp(encap_scope[i].key, it->string) &&
			    !(encap_scope[i].types & (1u << m->encap)))
				return fail(c, epath, it->string, "only for %s", encap_scope[i].only);
	}
	if (m->encap == SBX_ENCAP_RSPAN &&
	    (need(c, o, epath, "vlan") || get_u16(c, o, epath, "vlan", 1, 4094, 0, &m->vlan)))
		return -1;
	/* the keys below are absent unless the type takes them: their defaults are filled anyway */
	if (get_u8(c, o, epath, "ttl", 1, 255, 64, &m->ttl) ||
	    get_u8(c, o, epath, "dscp", 0, 63, 0, &m->dscp) ||
	    get_bool(c, o, epath, "df", true, &m->df) ||
	    get_choice(c, o, epath, "granularity", gra_choices, SBX_GRA_100US, &m->gra) ||
	    get_u8(c, o, epath, "hw_id", 0, 63, 0, &m->hw_id) ||
	    get_u16(c, o, epath, "sgt", 0, 65535, 0, &m->sgt) ||
	    get_bool(c, o, epath, "platform_subheader", false, &m->platform_subheader) ||
	    get_u32(c, o, epath, "vni", 0, SBX_VXLAN_VNI_MAX, m->id, &m->vni) ||
	    get_u16(c, o, epath, "udp_port", 1, 65535, SBX_VXLAN_PORT, &m->udp_port))
		return -1;
	if (!((1u << m->encap) & ENC_OUTER_IP))
		return 0;
	if (need(c, o, epath, "src_ip") || need(c, o, epath, "dst_ip") ||
	    need(c, o, epath, "dst_mac") ||
	    get_ip(c, o, epath, "src_ip", m->src_ip, &src_version, src_text, sizeof(src_text)) ||
	    get_ip(c, o, epath, "dst_ip", m->dst_ip, &dst_version, dst_text, sizeof(dst_text)) ||
	    get_mac(c, o, epath, "dst_mac", m->dst_mac))
		return -1;
	if (dst_version != src_version)
		return fail(c, epath, "dst_ip", "\"%s\" is IPv%u but src_ip \"%s\" is IPv%u", dst_text,
			    dst_version, src_text, src_version);
	m->ip_version = src_version;
	m->src_mac_set = member(o, "src_mac") != NULL;
	return m->src_mac_set ? get_mac(c, o, epath, "src_mac", m->src_mac) : 0;
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
static int parse_decap_ids(struct ctx *c, const cJSON *obj, const char *path, const char *key,
			   long long max, struct sbx_decap_rule *r)
{
	const cJSON *arr, *it;
	char epath[144];
	long long v;
	int k = 0, j;

	if (get_array(c, obj, path, key, SBX_MAX_DECAP_IDS, &arr))
		return -1;
	if (arr && cJSON_GetArraySize(arr) == 0)
		return fail(c, path, key, "at least one id (leave %s out to take every one)", key);
	cJSON_ArrayForEach(it, arr) {
		snprintf(epath, sizeof(epath), "%s.%s[%d]", path, key, k);
		if (to_int(c, it, epath, NULL, 0, max, &v))
			return -1;
		for (j = 0; j < k; j++)
			if (r->ids[j] == v)
				return fail(c, epath, NULL, "%lld given twice (see %s[%d])", v, key, j);
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
static int parse_decap_rule(struct ctx *c, const cJSON *obj, const char *path, int i, struct sbx_ingress_cfg *in)
{
	struct sbx_decap_rule *r = &in->decap[i];
	const char *ids_key;
	char text[48], epath[144];
	const cJSON *it;
	size_t k;
	int j, m, n;

	if (!cJSON_IsObject(obj))
		return fail(c, path, NULL, "expected an object");
	if (check_keys(c, obj, path, decap_keys) || need(c, obj, path, "type") ||
	    get_choice(c, obj, path, "type", decap_choices, 0, &r->type))
		return -1;
	cJSON_ArrayForEach(it, obj) {
		for (k = 0; k < sizeof(decap_scope) / sizeof(decap_scope[0]); k++)
			if (!strcmp(decap_scope[k].key, it->string) && !(decap_scope[k].types & (1u << r->type)))
				return fail(c, path, it->string, "only for %s", decap_scope[k].only);
	}
	ids_key = r->type == SBX_DECAP_ERSPAN ? "sessions"
		  : r->type == SBX_DECAP_VXLAN || r->type == SBX_DECAP_GENEVE ? "vnis"
		  : r->type == SBX_DECAP_GTPU ? "teids" : "keys";
	if (parse_decap_ids(c, obj, path, ids_key,
			    r->type == SBX_DECAP_ERSPAN ? 1023
			    : r->type == SBX_DECAP_VXLAN || r->type == SBX_DECAP_GENEVE ? 16777215 : 4294967295LL, r) ||
	    get_u16(c, obj, path, "udp_port", 1, 65535,
		    r->type == SBX_DECAP_VXLAN ? SBX_VXLAN_PORT : r->type == SBX_DECAP_GENEVE ? SBX_GENEVE_PORT
		    : r->type == SBX_DECAP_GTPU ? SBX_GTPU_PORT : 0, &r->udp_port) ||
	    get_bool(c, obj, path, "strip_fcs", false, &r->strip_fcs) ||
	    (member(obj, "local_ip") && get_ip(c, obj, path, "local_ip", r->local_ip, &r->local_af, text, sizeof(text))))
		return -1;
	for (j = 0; j < i; j++) {
		const struct sbx_decap_rule *e = &in->decap[j];

		/* one UDP port, one tunnel type: the parser reads a datagram by its destination port */
		if (sbx_decap_type_udp(r->type) && sbx_decap_type_udp(e->type) && r->type != e->type &&
		    r->udp_port == e->udp_port)
			return fail(c, path, "udp_port", "%u is already the %s port of ingress.decap[%d]", r->udp_port,
				    sbx_decap_type_name(e->type), j);
		if (!decap_same_tunnels(e, r))
			continue;
		if (e->nb_ids == 0)
			return fail(c, path, NULL, "never matches: ingress.decap[%d] takes every frame it would (first match wins)",
				    j);
		for (m = 0; m < r->nb_ids; m++)
			for (n = 0; n < e->nb_ids; n++)
				if (r->ids[m] == e->ids[n]) {
					snprintf(epath, sizeof(epath), "%s.%s[%d]", path, ids_key, m);
					return fail(c, epath, NULL,
						    "%u never matches: ingress.decap[%d] takes it first (first match wins)",
						    r->ids[m], j);
				}
	}
	return 0;
}

/* Parse the optional "timestamp" object of ingress object @o (at @ipath) into @in: timestamps in
 * (include/spanbox/ts_in.h). Keys of the other format are refused. */
static int parse_ts_in(struct ctx *c, const cJSON *o, const char *ipath, struct sbx_ingress_cfg *in)
{
	static const char *const arista_only[] = {"tai_offset_s", NULL}, *const metamako_only[] = {"fcs", "window_s", NULL};
	const char *const *other;
	char tpath[112];
	const cJSON *x;
	int k;

	snprintf(tpath, sizeof(tpath), "%s.timestamp", ipath);
	if (get_object(c, o, ipath, "timestamp", tpath, ts_in_keys, &x))
		return -1;
	if (!x)
		return 0;
	if (need(c, x, tpath, "format") ||
	    get_choice(c, x, tpath, "format", ts_in_format_choices, SBX_TS_IN_NONE, &in->ts_format))
		return -1;
	other = in->ts_format == SBX_TS_IN_ARISTA ? metamako_only : arista_only;
	for (k = 0; other[k]; k++)
		if (member(x, other[k]))
			return fail(c, tpath, other[k], "only for format %s",
				    in->ts_format == SBX_TS_IN_ARISTA ? "metamako" : "arista");
	return get_bool(c, x, tpath, "fcs", false, &in->ts_fcs) ||
	       get_u8(c, x, tpath, "tai_offset_s", 0, 255, SBX_TAI_UTC_OFFSET_DEFAULT, &in->ts_tai_offset_s) ||
	       get_u32(c, x, tpath, "window_s", 1, 315360000, SBX_TS_IN_WINDOW_DEFAULT, &in->ts_window_s);
}

/* Parse the optional "ingress" object of port @p (at @path): decap, non_tunnel, strip, tag, dedup. */
static int parse_ingress(struct ctx *c, const cJSON *port, const char *path, struct sbx_port_cfg *p)
{
	struct sbx_ingress_cfg *in = &p->ingress;
	char ipath[80], rpath[112];
	const cJSON *o, *arr, *it, *x;
	int i = 0;

	snprintf(ipath, sizeof(ipath), "%s.ingress", path);
	if (get_object(c, port, path, "ingress", ipath, ingress_keys, &o))
		return -1;
	if (o == NULL)
		return 0; /* no ingress stage */
	if (get_array(c, o, ipath, "decap", SBX_MAX_DECAP_RULES, &arr))
		return -1;
	cJSON_ArrayForEach(it, arr) {
		snprintf(rpath, sizeof(rpath), "%s.decap[%d]", ipath, i);
		if (parse_decap_rule(c, it, rpath, i, in))
			return -1;
		i++;
	}
	in->nb_decap = (uint8_t)i;
	if (member(o, "non_tunnel") && in->nb_decap == 0)
		return fail(c, ipath, "non_tunnel",
			    "only with ingress.decap rules (it says what happens to frames none of them matches)");
	if (get_choice(c, o, ipath, "non_tunnel", non_tunnel_choices, SBX_NON_TUNNEL_PASS, &in->non_tunnel) ||
	    get_flags(c, o, ipath, "strip", strip_choices, &in->strip))
		return -1;
	snprintf(rpath, sizeof(rpath), "%s.tag", ipath);
	if (get_object(c, o, ipath, "tag", rpath, tag_keys, &x) ||
	    (x && (need(c, x, rpath, "vlan") || get_u16(c, x, rpath, "vlan", 1, 4094, 0, &in->tag_vlan))))
		return -1;
	if (parse_ts_in(c, o, ipath, in))
		return -1;
	snprintf(rpath, sizeof(rpath), "%s.dedup", ipath);
	if (get_object(c, o, ipath, "dedup", rpath, dedup_keys, &x))
		return -1;
	if (!x)
		return 0;
	if (need(c, x, rpath, "window_us") ||
	    get_u32(c, x, rpath, "window_us", 1, 1000000, 0, &in->dedup_window_us) ||
	    get_flags(c, x, rpath, "ignore", ignore_choices, &in->dedup_ignore) ||
	    get_choice(c, x, rpath, "action", dedup_action_choices, SBX_DEDUP_DROP, &in->dedup_action) ||
	    get_u32(c, x, rpath, "entries", SBX_DEDUP_ENTRIES_MIN, SBX_DEDUP_ENTRIES_MAX, SBX_DEDUP_ENTRIES_DEFAULT,
		    &in->dedup_entries))
		return -1;
	if (in->dedup_entries & (in->dedup_entries - 1))
		return fail(c, rpath, "entries", "%u is not a power of two", in->dedup_entries);
	return 0;
}

/* Parse the optional "copy" of session @m at @path. */
static int parse_copy(struct ctx *c, const cJSON *obj, const char *path, struct sbx_mirror_cfg *m)
{
	char dpath[64];
	const cJSON *o;

	snprintf(dpath, sizeof(dpath), "%s.copy", path);
	return (get_object(c, obj, path, "copy", dpath, copy_keys, &o) ||
		get_choice(c, o, dpath, "strategy", strategy_choices, SBX_COPY_ADAPTIVE,
			   &m->copy_strategy) ||
		get_u32(c, o, dpath, "threshold", 0, 65535, 512, &m->copy_threshold))
		       ? -1 : 0;
}

/*
 * Parse the optional "timestamp" of session @m at @path (docs/CONFIG.md "mirrors", issue #26):
 * "format" required, "device_id" and "port" for metamako only.
 */
static int parse_timestamp(struct ctx *c, const cJSON *obj, const char *path, struct sbx_mirror_cfg *m)
{
	char tpath[64];
	const cJSON *o;
	uint16_t port = 0;

	snprintf(tpath, sizeof(tpath), "%s.timestamp", path);
	if (get_object(c, obj, path, "timestamp", tpath, timestamp_keys, &o))
		return -1;
	m->ts_format = SBX_TS_NONE;
	if (o == NULL)
		return 0;
	if (need(c, o, tpath, "format") || get_choice(c, o, tpath, "format", ts_format_choices, SBX_TS_NONE, &m->ts_format))
		return -1;
	if (m->ts_format != SBX_TS_METAMAKO && member(o, "device_id"))
		return fail(c, tpath, "device_id", "only for metamako");
	if (m->ts_format != SBX_TS_METAMAKO && member(o, "port"))
		return fail(c, tpath, "port", "only for metamako");
	if (get_u16(c, o, tpath, "device_id", 0, 65535, 0, &m->ts_device) ||
	    get_u16(c, o, tpath, "port", 0, 255, 0, &port))
		return -1;
	m->ts_port = (uint8_t)port;
	m->ts_port_set = member(o, "port") != NULL;
	return 0;
}

/*
 * A destination {"group": NAME} at @dpath (object @o) of session @m: a group of tool_groups (parsed
 * before the mirrors), not together with "port"; no source of the session may be a member (a
 * mirror loop). dst_port becomes the group's first member (the copies' source MAC).
 */
static int parse_group_destination(struct ctx *c, const struct sbx_config *cfg, const cJSON *o, const char *dpath,
				   struct sbx_mirror_cfg *m)
{
	char name[SBX_NAME_LEN];
	const struct sbx_tool_group_cfg *g;
	int gi, j, k;

	if (member(o, "port") != NULL || member(o, "recorder") != NULL)
		return fail(c, dpath, "group", "give one of port, group or recorder");
	if (member(o, "allow_forwarding") != NULL)
		return fail(c, dpath, "allow_forwarding", "applies to a port destination only (no tool group member "
			    "may forward)");
	if (get_string(c, o, dpath, "group", name, sizeof(name), true, NULL, ""))
		return -1;
	gi = sbx_config_group_index(cfg, name);
	if (gi < 0)
		return fail(c, dpath, "group", "unknown tool group \"%s\" (not in tool_groups)", name);
	g = &cfg->tool_groups[gi];
	for (j = 0; j < m->nb_sources; j++)
		for (k = 0; k < g->nb_members; k++)
			if (m->sources[j].port == g->members[k])
				return fail(c, dpath, "group", "%s is a member of tool group %s and a source of this "
					    "session (mirror loop)", cfg->ports[g->members[k]].name, g->name);
	m->dst_kind = SBX_DST_GROUP;
	m->dst_group = (uint8_t)gi;
	m->dst_port = g->members[0];
	return 0;
}

int sbx_config_group_index(const struct sbx_config *cfg, const char *name)
{
	for (uint16_t i = 0; i < cfg->nb_tool_groups && i < SBX_MAX_TOOL_GROUPS; i++)
		if (strcmp(cfg->tool_groups[i].name, name) == 0)
			return i;
	return -1;
}

/* Parse tool_groups[@i] (object @obj): name, members, hash, failover, member_rate_limit. */
static int parse_tool_group(struct ctx *c, const cJSON *obj, int i, struct sbx_config *cfg)
{
	struct sbx_tool_group_cfg *g = &cfg->tool_groups[i];
	char path[32], mpath[48], opath[64], name[SBX_NAME_LEN];
	const cJSON *arr, *it, *o;
	long long v;
	int j, k = 0, p;

	snprintf(path, sizeof(path), "tool_groups[%d]", i);
	if (!cJSON_IsObject(obj))
		return fail(c, path, NULL, "expected an object");
	if (check_keys(c, obj, path, group_keys) || need(c, obj, path, "name") ||
	    get_string(c, obj, path, "name", g->name, sizeof(g->name), true, NAME_CHARS, ""))
		return -1;
	for (j = 0; j < i; j++)
		if (strcmp(cfg->tool_groups[j].name, g->name) == 0)
			return fail(c, path, "name", "duplicate tool group name \"%s\" (see tool_groups[%d])", g->name,
				    j);
	if (need(c, obj, path, "members") ||
	    get_array(c, obj, path, "members", INT_MAX, &arr)) /* bounded by the capacity, below */
		return -1;
	if (cJSON_GetArraySize(arr) > cfg->tg_cap_members || cJSON_GetArraySize(arr) > SBX_MAX_GROUP_MEMBERS)
		return fail(c, path, "members", "%d members, over the capacity of %u (workers.tool_group_capacity.members, "
			    "static: at most %d)", cJSON_GetArraySize(arr), cfg->tg_cap_members, SBX_MAX_GROUP_MEMBERS);
	if (cJSON_GetArraySize(arr) == 0)
		return fail(c, path, "members", "at least one member port is required");
	cJSON_ArrayForEach(it, arr) {
		snprintf(mpath, sizeof(mpath), "%s.members[%d]", path, k);
		if (to_string(c, it, mpath, NULL, name, sizeof(name), true, NULL))
			return -1;
		p = sbx_config_port_index(cfg, name);
		if (p < 0)
			return fail(c, mpath, NULL, "unknown port \"%s\"", name);
		for (j = 0; j < k; j++)
			if (g->members[j] == p)
				return fail(c, mpath, NULL, "%s is already %s.members[%d] (a member once)", name, path, j);
		for (j = 0; j < cfg->nb_xconnects; j++)
			if (cfg->xconnects[j].a == p || cfg->xconnects[j].b == p)
				return fail(c, mpath, NULL, "%s forwards traffic (forwarding.xconnects[%d]): a tool "
					    "group member only receives mirror copies", name, j);
		g->members[k++] = (uint16_t)p;
	}
	g->nb_members = (uint8_t)k;
	if (get_choice(c, obj, path, "hash", group_hash_choices, SBX_GROUP_HASH_5TUPLE, &g->hash))
		return -1;
	snprintf(opath, sizeof(opath), "%s.failover", path);
	if (get_object(c, obj, path, "failover", opath, failover_keys, &o) ||
	    get_u32(c, o, opath, "hold_down_ms", 0, 3600000, 2000, &g->hold_down_ms) ||
	    get_u32(c, o, opath, "tx_refused_percent", 1, 100, 50, &g->tx_refused_percent) ||
	    get_u32(c, o, opath, "tx_refused_window_ms", 100, 60000, 1000, &g->tx_refused_window_ms))
		return -1;
	snprintf(opath, sizeof(opath), "%s.member_rate_limit", path);
	if (get_object(c, obj, path, "member_rate_limit", opath, rate_keys, &o) ||
	    get_int(c, o, opath, "pps", 0, 1000000000LL, 0, &v))
		return -1;
	g->rate_pps = (uint64_t)v;
	if (get_int(c, o, opath, "bps", 0, 10000000000000LL, 0, &v))
		return -1;
	g->rate_bps = (uint64_t)v;
	return 0;
}

/* Parse the optional "tool_groups" array (needs ports and forwarding; before mirrors). */
static int parse_tool_groups(struct ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	const cJSON *arr, *it;
	int i = 0;

	if (get_array(c, root, "", "tool_groups", INT_MAX, &arr)) /* bounded by the capacity, below */
		return -1;
	if (cJSON_GetArraySize(arr) > cfg->tg_cap_groups || cJSON_GetArraySize(arr) > SBX_MAX_TOOL_GROUPS)
		return fail(c, "tool_groups", NULL, "%d tool groups, over the capacity of %u "
			    "(workers.tool_group_capacity.groups, static: at most %d)", cJSON_GetArraySize(arr),
			    cfg->tg_cap_groups, SBX_MAX_TOOL_GROUPS);
	cJSON_ArrayForEach(it, arr) {
		if (parse_tool_group(c, it, i, cfg))
			return -1;
		i++;
	}
	cfg->nb_tool_groups = (uint16_t)i;
	return 0;
}

/*
 * Parse destination "recorder" of session @m (object @sess; its destination @dst at @dpath): a capture into pcapng
 * files (docs/CAPTURE.md). The copy is pcapng's own (no encapsulation): "encap" and "copy" must be
 * absent, as must "port".
 */
static int parse_recorder(struct ctx *c, const cJSON *sess, const cJSON *dst, const char *dpath,
			  struct sbx_mirror_cfg *m)
{
	struct sbx_capture_cfg *r = &m->rec;
	const cJSON *o, *f, *st;
	char rpath[96], fpath[112];
	long long v;

	if (member(dst, "port") || member(dst, "allow_forwarding"))
		return fail(c, dpath, member(dst, "port") ? "port" : "allow_forwarding",
			    "not with a recorder destination");
	snprintf(rpath, sizeof(rpath), "%s.recorder", dpath);
	if (get_object(c, dst, dpath, "recorder", rpath, recorder_keys, &o))
		return -1;
	m->dst_kind = SBX_DST_RECORDER;
	m->dst_port = 0;
	snprintf(fpath, sizeof(fpath), "%s.files", rpath);
	if (get_object(c, o, rpath, "files", fpath, rec_files_keys, &f) ||
	    get_u32(c, f, fpath, "count", 0, SBX_CAPTURE_FILES_MAX, 0, &r->file_count) ||
	    get_u32(c, f, fpath, "mb", 0, 4096, 0, &r->file_mb) ||
	    get_u32(c, f, fpath, "seconds", 0, 86400, 0, &r->file_seconds))
		return -1;
	if (r->file_count > 0 && r->file_mb == 0 && r->file_seconds == 0)
		return fail(c, fpath, "count", "a ring of files needs mb or seconds per file");
	snprintf(fpath, sizeof(fpath), "%s.stop", rpath);
	if (get_object(c, o, rpath, "stop", fpath, rec_stop_keys, &st) ||
	    get_int(c, st, fpath, "packets", 0, 1LL << 50, 0, &v))
		return -1;
	r->stop_packets = (uint64_t)v;
	if (get_int(c, st, fpath, "bytes", 0, 1LL << 50, 0, &v))
		return -1;
	r->stop_bytes = (uint64_t)v;
	if (get_u32(c, st, fpath, "seconds", 0, 30 * 86400, 0, &r->stop_seconds) ||
	    get_int(c, o, rpath, "max_bytes", 0, 1LL << 50, 0, &v))
		return -1;
	r->max_bytes = (uint64_t)v;
	if (get_int(c, o, rpath, "owner_pid", 0, INT32_MAX, 0, &v))
		return -1;
	r->owner_pid = (int32_t)v;
	if (member(sess, "encap") || member(sess, "copy") || member(sess, "oversize"))
		return fail(c, dpath, "recorder",
			    "a capture takes no encap, no copy and no oversize (pcapng keeps the frame, no MTU)");
	if (member(sess, "timestamp"))
		return fail(c, dpath, "recorder", "a capture takes no timestamp (pcapng records each frame's time)");
	return 0;
}

/* Parse the optional "mask" of session @m at @path (issue #26, mask.h): from, offset, length, pattern. */
static int parse_mask(struct ctx *c, const cJSON *obj, const char *path, struct sbx_mirror_cfg *m)
{
	struct sbx_mask_cfg *k = &m->mask;
	char mpath[64];
	const cJSON *o;
	long long v;

	snprintf(mpath, sizeof(mpath), "%s.mask", path);
	memset(k, 0, sizeof(*k));
	if (get_object(c, obj, path, "mask", mpath, mask_keys, &o))
		return -1;
	if (o == NULL)
		return 0; /* no mask */
	if (need(c, o, mpath, "from") || need(c, o, mpath, "length") ||
	    get_choice(c, o, mpath, "from", mask_from_choices, SBX_MASK_OFF, &k->from) ||
	    get_u16(c, o, mpath, "offset", 0, SBX_MASK_LEN_MAX, 0, &k->offset) ||
	    get_u16(c, o, mpath, "length", 1, SBX_MASK_LEN_MAX, 1, &k->length) ||
	    get_int(c, o, mpath, "pattern", 0, 255, 0, &v))
		return -1;
	k->pattern = (uint8_t)v;
	if (m->dst_kind == SBX_DST_RECORDER)
		return fail(c, mpath, NULL, "not with a recorder destination (a capture keeps the frame as it is)");
	return 0;
}

/* Parse one session object @obj, mirrors[@i]; sessions 0..i-1 are already parsed. */
/*
 * A session has a mask or a timestamp, not both: the mask's offsets are those of the mirrored
 * frame, which an AVSP header inserted after the source MAC would move (and the timestamped copy
 * path does not mask). -1 with the error naming "timestamp".
 */
static int mask_with_timestamp(struct ctx *c, const char *path, const struct sbx_mirror_cfg *m)
{
	if (m->mask.from != SBX_MASK_OFF && m->ts_format != SBX_TS_NONE)
		return fail(c, path, "timestamp", "a session with a mask cannot have a timestamp too (one or the other)");
	return 0;
}

/* One session object @obj at @path with the keys @keys into @m; mirrors 0..i-1 are already parsed
 * (a map: i = nb_mirrors, every mirror). */
static int parse_session(struct ctx *c, const cJSON *obj, const char *path, const char *const keys[], int i,
			 struct sbx_config *cfg, struct sbx_mirror_cfg *m)
{
	const cJSON *o;
	char dpath[64]; /* any child of "mirrors[<int>]" or "maps[<int>]" fits */
	bool allow = false;
	int j, p;

	if (!cJSON_IsObject(obj))
		return fail(c, path, NULL, "expected an object");
	if (check_keys(c, obj, path, keys) || need(c, obj, path, "id") ||
	    get_u16(c, obj, path, "id", SBX_MIRROR_ID_MIN, SBX_MIRROR_ID_MAX, 0, &m->id))
		return -1;
	for (j = 0; j < i; j++)
		if (cfg->mirrors[j].id == m->id)
			return fail(c, path, "id", "duplicate session id %u (see mirrors[%d])", m->id, j);
	snprintf(m->name, sizeof(m->name), "session-%u", m->id);
	if (member(obj, "name") &&
	    get_string(c, obj, path, "name", m->name, sizeof(m->name), true, NAME_CHARS, ""))
		return -1;
	for (j = 0; j < i; j++)
		if (!strcmp(cfg->mirrors[j].name, m->name))
			return fail(c, path, "name", "duplicate session name \"%s\" (see mirrors[%d])",
				    m->name, j);
	if (parse_sources(c, cfg, obj, path, m) ||
	    get_string(c, obj, path, "filter", m->filter, sizeof(m->filter), false, NULL, "") ||
	    (m->filter[0] && check_filter(c, path, m->filter)) ||
	    get_u32(c, obj, path, "snaplen", 0, 65535, 0, &m->snaplen) ||
	    get_u32(c, obj, path, "sample", 1, 1000000, 1, &m->sample) ||
	    get_choice(c, obj, path, "oversize", oversize_choices, SBX_OVERSIZE_TRUNCATE, &m->oversize))
		return -1;
	if (m->snaplen > 0 && m->snaplen < 14)
		return fail(c, path, "snaplen", "%u out of range 14..65535 (or 0 = whole frame)",
			    m->snaplen);
	snprintf(dpath, sizeof(dpath), "%s.destination", path);
	if (need(c, obj, path, "destination") ||
	    get_object(c, obj, path, "destination", dpath, dest_keys, &o))
		return -1;
	if (member(o, "group") != NULL)
		return parse_group_destination(c, cfg, o, dpath, m) || parse_encap(c, obj, path, m) ||
		       parse_copy(c, obj, path, m) || parse_mask(c, obj, path, m) || parse_timestamp(c, obj, path, m) ||
		       mask_with_timestamp(c, path, m);
	if (member(o, "recorder"))
		return parse_recorder(c, obj, o, dpath, m) || parse_mask(c, obj, path, m);
	if (get_port(c, cfg, o, dpath, &p))
		return -1;
	for (j = 0; j < m->nb_sources; j++)
		if (m->sources[j].port == p)
			return fail(c, dpath, "port", "%s is also a source of this session (mirror loop)",
				    cfg->ports[p].name);
	/* copies into a port that forwards would be mixed into live traffic: only when asked for */
	if (get_bool(c, o, dpath, "allow_forwarding", false, &allow))
		return -1;
	for (j = 0; j < cfg->nb_xconnects && !allow; j++)
		if (cfg->xconnects[j].a == p || cfg->xconnects[j].b == p)
			return fail(c, dpath, "port",
				    "%s forwards traffic (forwarding.xconnects[%d]): mirror copies would be mixed into "
				    "it; set destination.allow_forwarding to true to do that anyway",
				    cfg->ports[p].name, j);
	m->dst_port = (uint16_t)p;
	return parse_encap(c, obj, path, m) || parse_copy(c, obj, path, m) || parse_mask(c, obj, path, m) ||
			       parse_timestamp(c, obj, path, m) || mask_with_timestamp(c, path, m) ? -1 : 0;
}

static int parse_mirror(struct ctx *c, const cJSON *obj, int i, struct sbx_config *cfg)
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
	struct ctx c = {err, errlen};
	size_t n = 0, k;

	for (k = 0; mirror_keys[k] != NULL; k++)
		keys[n++] = mirror_keys[k];
	for (k = 0; extra_keys && extra_keys[k] != NULL && n + 1 < sizeof(keys) / sizeof(keys[0]); k++)
		keys[n++] = extra_keys[k];
	keys[n] = NULL;
	return parse_session(&c, obj, path, keys, cfg->nb_mirrors, cfg, m);
}

/* Parse the optional "mirrors" array: at most 16 sessions, ids and names unique (needs ports). */
static int parse_mirrors(struct ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	const cJSON *arr, *it;
	int i = 0;

	if (get_array(c, root, "", "mirrors", SBX_MAX_MIRRORS, &arr))
		return -1;
	cJSON_ArrayForEach(it, arr) {
		if (parse_mirror(c, it, i, cfg))
			return -1;
		i++;
	}
	cfg->nb_mirrors = (uint16_t)i;
	return 0;
}

/* ---- flows (issue #28, docs/CONFIG.md "flows") ---- */

/* Parse "flows.collectors": 1..SBX_MAX_FLOW_COLLECTORS {address, port, transport}. */
static int parse_flow_collectors(struct ctx *c, const cJSON *o, struct sbx_flows_cfg *f)
{
	static const struct choice transports[] = {{"udp", 0}, {"tcp", 1}, {NULL, 0}};
	const cJSON *arr, *it;
	char path[48];
	uint8_t v4[16], ver;
	int i = 0, j;

	if (get_array(c, o, "flows", "collectors", SBX_MAX_FLOW_COLLECTORS, &arr))
		return -1;
	if (f->enabled && (arr == NULL || cJSON_GetArraySize(arr) == 0))
		return fail(c, "flows", "collectors", "at least one collector {\"address\": IP, \"port\": 4739} "
			    "while flows.enabled is true");
	cJSON_ArrayForEach(it, arr) {
		struct sbx_flow_collector_cfg *k = &f->collectors[i];

		snprintf(path, sizeof(path), "flows.collectors[%d]", i);
		if (!cJSON_IsObject(it))
			return fail(c, path, NULL, "expected an object");
		if (check_keys(c, it, path, collector_keys) || need(c, it, path, "address") ||
		    get_ip(c, it, path, "address", v4, &ver, k->address, sizeof(k->address)) ||
		    get_u16(c, it, path, "port", 1, 65535, 4739, &k->port) ||
		    get_choice(c, it, path, "transport", transports, 0, &k->transport))
			return -1;
		for (j = 0; j < i; j++)
			if (!strcmp(f->collectors[j].address, k->address) && f->collectors[j].port == k->port &&
			    f->collectors[j].transport == k->transport)
				return fail(c, path, NULL, "the same collector as flows.collectors[%d]", j);
		i++;
	}
	f->nb_collectors = (uint16_t)i;
	return 0;
}

/* Parse the optional static section "flows" (needs "ports"). */
/* Parse "flows.sessions": ids of maps whose frames are metered (resolved by sbx_config_flows_resolve
 * once "maps" is parsed). */
static int parse_flow_sessions(struct ctx *c, const cJSON *o, struct sbx_flows_cfg *f)
{
	const cJSON *arr, *it;
	char path[48];
	uint16_t i;
	double v;

	if (get_array(c, o, "flows", "sessions", SBX_MAX_MAPS + SBX_MAX_MIRRORS, &arr))
		return -1;
	cJSON_ArrayForEach(it, arr) {
		snprintf(path, sizeof(path), "flows.sessions[%u]", f->nb_sessions);
		v = cJSON_IsNumber(it) ? it->valuedouble : -1;
		if (!cJSON_IsNumber(it) || v != (double)(long long)v || v < SBX_MIRROR_ID_MIN || v > SBX_MIRROR_ID_MAX)
			return fail(c, path, NULL, "expected a map or mirror session id (an integer %d..%d)", SBX_MIRROR_ID_MIN,
				    SBX_MIRROR_ID_MAX);
		for (i = 0; i < f->nb_sessions; i++)
			if (f->session_ids[i] == (uint16_t)v)
				return fail(c, path, NULL, "%u is listed twice", (unsigned int)v);
		f->session_ids[f->nb_sessions++] = (uint16_t)v;
	}
	return 0;
}

static int parse_flows(struct ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	struct sbx_flows_cfg *f = &cfg->flows;
	const cJSON *o, *arr, *it;
	char path[48];
	uint8_t dir;
	int i = 0, p;

	if (get_section(c, root, "flows", flows_keys, &o))
		return -1;
	if (get_bool(c, o, "flows", "enabled", o != NULL, &f->enabled) ||
	    get_u32(c, o, "flows", "active_timeout_s", 1, 86400, 60, &f->active_s) ||
	    get_u32(c, o, "flows", "idle_timeout_s", 1, 3600, 15, &f->idle_s) ||
	    get_u32(c, o, "flows", "flows_per_worker", 1024, SBX_FLOWS_CAPACITY_MAX, SBX_FLOWS_CAPACITY_DEFAULT,
		    &f->capacity) ||
	    get_u32(c, o, "flows", "observation_domain_id", 0, UINT32_MAX, 0, &f->domain) ||
	    get_u32(c, o, "flows", "template_period_s", 1, 3600, 60, &f->template_period_s) ||
	    get_bool(c, o, "flows", "biflow", false, &f->biflow) ||
	    get_array(c, o, "flows", "ports", SBX_MAX_PORTS, &arr) ||
	    parse_flow_sessions(c, o, f))
		return -1;
	if (arr == NULL && f->enabled && f->nb_sessions == 0) /* neither ports nor sessions: every port's RX */
		f->port_mask = cfg->nb_ports >= 64 ? UINT64_MAX : (1ull << cfg->nb_ports) - 1;
	cJSON_ArrayForEach(it, arr) {
		snprintf(path, sizeof(path), "flows.ports[%d]", i);
		if (!cJSON_IsObject(it))
			return fail(c, path, NULL, "expected an object {\"port\": NAME, \"direction\": \"rx\"}");
		if (check_keys(c, it, path, flow_port_keys) || get_port(c, cfg, it, path, &p) ||
		    get_choice(c, it, path, "direction", direction_choices, SBX_DIR_RX, &dir))
			return -1;
		if ((f->port_mask & (1ull << p)) || (f->tx_mask & (1ull << p)))
			return fail(c, path, "port", "%s is listed twice (one entry per port: direction \"both\")",
				    cfg->ports[p].name);
		if (dir & SBX_DIR_RX)
			f->port_mask |= 1ull << p;
		if (dir & SBX_DIR_TX)
			f->tx_mask |= 1ull << p;
		i++;
	}
	return parse_flow_collectors(c, o, f);
}

int sbx_config_flows_resolve(struct sbx_config *cfg, char *err, size_t errlen)
{
	struct sbx_flows_cfg *f = &cfg->flows;
	struct ctx c = { err, errlen };
	char path[48];
	uint16_t i, j, k;

	sbx_mapset_zero(&f->map_mask);
	f->mirror_mask = 0;
	for (i = 0; i < f->nb_sessions; i++) {
		snprintf(path, sizeof(path), "flows.sessions[%u]", i);
		for (j = 0; j < cfg->nb_maps && cfg->maps[j].s.id != f->session_ids[i]; j++)
			;
		if (j < cfg->nb_maps) {
			sbx_mapset_set(&f->map_mask, j);
			continue;
		}
		for (k = 0; k < cfg->nb_mirrors && cfg->mirrors[k].id != f->session_ids[i]; k++)
			;
		if (k < cfg->nb_mirrors) {
			f->mirror_mask |= 1ull << k;
			continue;
		}
		return fail(&c, path, NULL, "%u is not the id of a map or mirror session", f->session_ids[i]);
	}
	return 0;
}

/*
 * Parse "mgmt.tokens" (roles) and "mgmt.tls" (after the rest of "mgmt"): tokens.admin and
 * tokens.admin_file are the same as mgmt.token and mgmt.token_file (one of each name at most);
 * tls needs both files (whether they are a certificate and a key: spanbox-mgmt checks at start).
 */
static int parse_mgmt_roles(struct ctx *c, const cJSON *o, struct sbx_config *cfg)
{
	const cJSON *t = NULL, *tls = NULL;

	if (o == NULL)
		return 0;
	if (get_object(c, o, "mgmt", "tokens", "mgmt.tokens", mgmt_tokens_keys, &t) ||
	    get_object(c, o, "mgmt", "tls", "mgmt.tls", mgmt_tls_keys, &tls) ||
	    get_bool(c, o, "mgmt", "insecure", false, &cfg->mgmt_insecure))
		return -1;
	if (t != NULL) {
		if (member(t, "admin") && member(o, "token"))
			return fail(c, "mgmt.tokens", "admin", "mgmt.token is set already (the same token: give one)");
		if (member(t, "admin_file") && member(o, "token_file"))
			return fail(c, "mgmt.tokens", "admin_file", "mgmt.token_file is set already (give one)");
		if ((member(t, "admin") &&
		     get_string(c, t, "mgmt.tokens", "admin", cfg->mgmt_token, sizeof(cfg->mgmt_token), true,
				TOKEN_CHARS, "")) ||
		    (member(t, "admin_file") &&
		     get_string(c, t, "mgmt.tokens", "admin_file", cfg->mgmt_token_file, sizeof(cfg->mgmt_token_file),
				true, NULL, "")) ||
		    get_string(c, t, "mgmt.tokens", "viewer", cfg->mgmt_viewer_token, sizeof(cfg->mgmt_viewer_token),
			       false, TOKEN_CHARS, "") ||
		    get_string(c, t, "mgmt.tokens", "viewer_file", cfg->mgmt_viewer_token_file,
			       sizeof(cfg->mgmt_viewer_token_file), false, NULL, ""))
			return -1;
		if (member(t, "admin") && strlen(cfg->mgmt_token) < 16)
			return fail(c, "mgmt.tokens", "admin", "at least 16 characters (got %zu)", strlen(cfg->mgmt_token));
		if (cfg->mgmt_viewer_token[0] != '\0' && strlen(cfg->mgmt_viewer_token) < 16)
			return fail(c, "mgmt.tokens", "viewer", "at least 16 characters (got %zu)",
				    strlen(cfg->mgmt_viewer_token));
		if (cfg->mgmt_viewer_token[0] != '\0' && cfg->mgmt_viewer_token_file[0] != '\0')
			return fail(c, "mgmt.tokens", "viewer_file", "mgmt.tokens.viewer is set already (give one)");
		if (cfg->mgmt_viewer_token[0] != '\0' && strcmp(cfg->mgmt_viewer_token, cfg->mgmt_token) == 0)
			return fail(c, "mgmt.tokens", "viewer", "the same as the admin token");
	}
	if (tls != NULL) {
		if (need(c, tls, "mgmt.tls", "cert") || need(c, tls, "mgmt.tls", "key") ||
		    get_string(c, tls, "mgmt.tls", "cert", cfg->mgmt_tls_cert, sizeof(cfg->mgmt_tls_cert), true, NULL, "") ||
		    get_string(c, tls, "mgmt.tls", "key", cfg->mgmt_tls_key, sizeof(cfg->mgmt_tls_key), true, NULL, ""))
			return -1;
	}
	return 0;
}

/* Parse "mgmt.captures": where capture files go and how much they may take (docs/CONFIG.md). */
static int parse_mgmt_captures(struct ctx *c, const cJSON *o, struct sbx_config *cfg)
{
	const cJSON *cap = NULL;

	if (o != NULL && get_object(c, o, "mgmt", "captures", "mgmt.captures", captures_keys, &cap))
		return -1;
	if (get_string(c, cap, "mgmt.captures", "directory", cfg->capture_dir, sizeof(cfg->capture_dir) - 32, true,
		       NULL, "/var/lib/spanbox/captures") ||
	    get_u32(c, cap, "mgmt.captures", "quota_mb", 1, 1048576, 1024, &cfg->capture_quota_mb))
		return -1;
	if (cfg->capture_dir[0] != '/')
		return fail(c, "mgmt.captures", "directory", "\"%s\" is not an absolute path", cfg->capture_dir);
	return 0;
}

/* Parse "mgmt": listen address, TCP port, SQLite database path, tokens and TLS files. */
static int parse_mgmt(struct ctx *c, const cJSON *root, struct sbx_config *cfg)
{
	unsigned char addr[sizeof(struct in6_addr)];
	const cJSON *o;

	if (get_section(c, root, "mgmt", mgmt_keys, &o) ||
	    get_string(c, o, "mgmt", "listen", cfg->mgmt_listen, sizeof(cfg->mgmt_listen), true,
		       NULL, "127.0.0.1") ||
	    get_u16(c, o, "mgmt", "port", 1, 65535, 8080, &cfg->mgmt_port) ||
	    get_string(c, o, "mgmt", "database", cfg->mgmt_database, sizeof(cfg->mgmt_database),
		       true, NULL, "/var/lib/spanbox/spanbox.db") ||
	    get_string(c, o, "mgmt", "token", cfg->mgmt_token, sizeof(cfg->mgmt_token), false, TOKEN_CHARS, "") ||
	    get_string(c, o, "mgmt", "token_file", cfg->mgmt_token_file, sizeof(cfg->mgmt_token_file), false,
		       NULL, "") ||
	    get_u16(c, o, "mgmt", "history_interval_s", 1, 60, 1, &cfg->mgmt_history_interval_s) ||
	    get_string(c, o, "mgmt", "web_root", cfg->mgmt_web_root, sizeof(cfg->mgmt_web_root), false, NULL, ""))
		return -1;
	if (cfg->mgmt_token[0] != '\0' && strlen(cfg->mgmt_token) < 16)
		return fail(c, "mgmt", "token", "at least 16 characters (got %zu)", strlen(cfg->mgmt_token));
	if (parse_mgmt_roles(c, o, cfg) || parse_mgmt_captures(c, o, cfg))
		return -1;
	if (cfg->mgmt_token_file[0] == '\0' &&
	    snprintf(cfg->mgmt_token_file, sizeof(cfg->mgmt_token_file), "%s.token", cfg->mgmt_database) >=
		    (int)sizeof(cfg->mgmt_token_file))
		return fail(c, "mgmt", "database", "too long to derive token_file from it");
	if (inet_pton(AF_INET, cfg->mgmt_listen, addr) != 1 &&
	    inet_pton(AF_INET6, cfg->mgmt_listen, addr) != 1)
		return fail(c, "mgmt", "listen", "\"%s\" is not an IPv4 or IPv6 address",
			    cfg->mgmt_listen);
	return 0;
}

/*
 * What a file path names, for comparing two of them: the realpath; for a file that does not exist
 * yet, its parent's realpath and its last component; when the parent does not exist either, the
 * path made absolute from the working directory (the primary opens relative paths from there). An
 * existing file also by device and inode, so that two hard links are one file.
 */
struct file_id {
	char path[PATH_MAX + NAME_MAX + 2];
	bool exists;
	dev_t dev;
	ino_t ino;
};

static void file_id(const char *p, struct file_id *f)
{
	char dir[PATH_MAX], *rp;
	const char *slash = strrchr(p, '/'), *base = slash ? slash + 1 : p;
	struct stat st;

	f->exists = stat(p, &st) == 0;
	f->dev = f->exists ? st.st_dev : 0;
	f->ino = f->exists ? st.st_ino : 0;
	rp = realpath(p, NULL);
	if (rp != NULL) {
		snprintf(f->path, sizeof(f->path), "%s", rp);
		free(rp);
		return;
	}
	snprintf(dir, sizeof(dir), "%.*s", slash ? (slash == p ? 1 : (int)(slash - p)) : 1, slash ? p : ".");
	rp = realpath(dir, NULL);
	if (rp != NULL) {
		snprintf(f->path, sizeof(f->path), "%s/%s", strcmp(rp, "/") ? rp : "", base);
		free(rp);
	} else if (p[0] == '/' || getcwd(dir, sizeof(dir)) == NULL) {
		snprintf(f->path, sizeof(f->path), "%s", p);
	} else {
		snprintf(f->path, sizeof(f->path), "%s/%s", dir, p);
	}
}

/* True when @a and @b name the same file. */
static bool same_file(const struct file_id *a, const struct file_id *b)
{
	if (a->exists && b->exists)
		return a->dev == b->dev && a->ino == b->ino;
	return strcmp(a->path, b->path) == 0;
}

/* The files of the pcap file ports and of mgmt, while check_files() compares them. */
struct files {
	char rx[SBX_MAX_PORTS][SBX_DEVARGS_LEN], tx[SBX_MAX_PORTS][SBX_DEVARGS_LEN];
	struct file_id rx_id[SBX_MAX_PORTS], tx_id[SBX_MAX_PORTS];
	struct file_id own[6];
};

/*
 * Output files must not destroy input or state: refuse a tx_pcap written by two ports (the
 * records interleave: a corrupt capture), a tx_pcap that a port reads (opening it for writing
 * truncates the input before it is read), and a tx_pcap that is the database (or its -wal, -shm,
 * -journal file), the token file or the config file @config_path (NULL: not known).
 */
static int check_files(struct ctx *c, const struct sbx_config *cfg, const char *config_path)
{
	static const char *const own_name[] = {"mgmt.database", "mgmt.database's -wal file",
					       "mgmt.database's -shm file", "mgmt.database's -journal file",
					       "mgmt.token_file", "the config file itself"};
	static const char *const db_suffix[] = {"", "-wal", "-shm", "-journal"}; /* SQLite's files */
	char path[32], buf[SBX_PATH_LEN + 16];
	struct files *f = calloc(1, sizeof(*f));
	int i, j, k, rc = 0;
	struct ctx quiet = {NULL, 0};

	if (f == NULL)
		return fail(c, "config", NULL, "out of memory");
	for (i = 0; i < cfg->nb_ports; i++) {
		if (cfg->ports[i].kind != SBX_PORT_PCAP_FILE)
			continue;
		check_devargs(&quiet, "", cfg->ports[i].devargs, f->rx[i], f->tx[i]); /* checked already */
		if (f->rx[i][0])
			file_id(f->rx[i], &f->rx_id[i]);
		if (f->tx[i][0])
			file_id(f->tx[i], &f->tx_id[i]);
	}
	for (k = 0; k < 4; k++) {
		snprintf(buf, sizeof(buf), "%s%s", cfg->mgmt_database, db_suffix[k]);
		file_id(buf, &f->own[k]);
	}
	file_id(cfg->mgmt_token_file, &f->own[4]);
	if (config_path != NULL)
		file_id(config_path, &f->own[5]);
	for (j = 0; j < cfg->nb_ports && rc == 0; j++) {
		snprintf(path, sizeof(path), "ports[%d]", j);
		for (i = 0; i <= j && rc == 0; i++) {
			if (f->tx[j][0] && f->tx[i][0] && i < j && same_file(&f->tx_id[j], &f->tx_id[i]))
				rc = fail(c, path, "devargs",
					  "tx_pcap \"%s\" is also the tx_pcap of ports[%d] (%s): two ports writing one "
					  "file corrupt it",
					  f->tx[j], i, f->tx_id[j].path);
			else if (f->tx[j][0] && f->rx[i][0] && same_file(&f->tx_id[j], &f->rx_id[i]))
				rc = fail(c, path, "devargs",
					  "tx_pcap \"%s\" is the rx_pcap of ports[%d] (%s): writing it would destroy "
					  "that input",
					  f->tx[j], i, f->tx_id[j].path);
			else if (f->rx[j][0] && f->tx[i][0] && i < j && same_file(&f->rx_id[j], &f->tx_id[i]))
				rc = fail(c, path, "devargs",
					  "rx_pcap \"%s\" is the tx_pcap of ports[%d] (%s): writing it would destroy "
					  "this input",
					  f->rx[j], i, f->rx_id[j].path);
		}
		for (k = 0; k < 6 && rc == 0 && f->tx[j][0]; k++)
			if ((k < 5 || config_path != NULL) && same_file(&f->tx_id[j], &f->own[k]))
				rc = fail(c, path, "devargs", "tx_pcap \"%s\" is %s (%s)", f->tx[j], own_name[k],
					  f->tx_id[j].path);
	}
	free(f);
	return rc;
}

int sbx_config_sections_parse(const cJSON *root, struct sbx_config *cfg, char *err, size_t errlen)
{
	struct ctx c = {err, errlen};

	if (!cJSON_IsObject(root))
		return fail(&c, "config", NULL, "expected a JSON object");
	return check_keys(&c, root, "", root_keys) || parse_eal(&c, root, cfg) || parse_pool(&c, root, cfg) ||
			       parse_ports(&c, root, cfg) || parse_workers(&c, root, cfg) ||
			       parse_forwarding(&c, root, cfg) || parse_tool_groups(&c, root, cfg) ||
			       parse_mirrors(&c, root, cfg) || parse_mgmt(&c, root, cfg) || parse_microburst(&c, root, cfg) ||
			       parse_flows(&c, root, cfg)
		       ? -1
		       : 0;
}

int sbx_config_files_check(const struct sbx_config *cfg, const char *config_path, char *err, size_t errlen)
{
	struct ctx c = {err, errlen};

	return check_files(&c, cfg, config_path);
}

int sbx_config_port_index(const struct sbx_config *cfg, const char *name)
{
	uint16_t i;

	for (i = 0; name && i < cfg->nb_ports; i++)
		if (!strcmp(cfg->ports[i].name, name))
			return i;
	return -1;
}

uint16_t sbx_config_port_nb_rxq(const struct sbx_config *cfg, uint16_t port)
{
	uint16_t n = 1, w, i;

	for (w = 0; w < cfg->nb_workers; w++)
		for (i = 0; i < cfg->workers[w].nb_rxq; i++)
			if (cfg->workers[w].rxq[i].port == port && cfg->workers[w].rxq[i].queue >= n)
				n = cfg->workers[w].rxq[i].queue + 1;
	return n;
}

bool sbx_config_has_pci(const struct sbx_config *cfg)
{
	uint16_t i;

	for (i = 0; i < cfg->nb_ports; i++)
		if (cfg->ports[i].is_pci)
			return true;
	return false;
}

const char *sbx_config_static_diff(const struct sbx_config *a, const struct sbx_config *b)
{
	/* sbx_config_parse() zeroes the whole struct first: padding compares equal. "ports" is all of
	 * each port but its ingress object (live: runtime tables): the members before it and after it. */
#define ING_END (offsetof(struct sbx_port_cfg, ingress) + sizeof(struct sbx_ingress_cfg))
	static const struct {
		const char *name;
		size_t from, to;
	} sec[] = {
		{ "eal", offsetof(struct sbx_config, file_prefix), offsetof(struct sbx_config, pool_mbufs) },
		{ "pool", offsetof(struct sbx_config, pool_mbufs), offsetof(struct sbx_config, nb_ports) },
		{ "ports", 0, 0 },
		{ "workers.tool_group_capacity", offsetof(struct sbx_config, tg_cap_groups),
		  offsetof(struct sbx_config, tg_cap_members) + sizeof(uint16_t) },
		{ "workers", offsetof(struct sbx_config, nb_workers), offsetof(struct sbx_config, nb_xconnects) },
		{ "microburst", offsetof(struct sbx_config, mb_enabled), offsetof(struct sbx_config, mgmt_listen) },
		{ "mgmt", offsetof(struct sbx_config, mgmt_listen), offsetof(struct sbx_config, flows) },
		/* flows is live (docs/RUNTIME_TABLES.md "Flows") but for the size of the workers' tables */
		{ "flows.flows_per_worker", offsetof(struct sbx_config, flows.capacity),
		  offsetof(struct sbx_config, flows.capacity) + sizeof(uint32_t) },
		/* maps is live (issue #27, docs/RUNTIME_TABLES.md "Maps"): not compared */
	};
	size_t i, p;

	for (i = 0; i < sizeof(sec) / sizeof(sec[0]); i++) {
		if (sec[i].to == 0) {
			if (a->nb_ports != b->nb_ports)
				return sec[i].name;
			for (p = 0; p < SBX_MAX_PORTS; p++)
				if (memcmp(&a->ports[p], &b->ports[p], offsetof(struct sbx_port_cfg, ingress)) ||
				    memcmp((const char *)&a->ports[p] + ING_END, (const char *)&b->ports[p] + ING_END,
					   sizeof(struct sbx_port_cfg) - ING_END))
					return sec[i].name;
		} else if (memcmp((const char *)a + sec[i].from, (const char *)b + sec[i].from, sec[i].to - sec[i].from)) {
			return sec[i].name;
		}
	}
	return NULL;
#undef ING_END
}

bool sbx_config_mgmt_local(const char *listen)
{
	struct in_addr a;

	return inet_pton(AF_INET, listen, &a) == 1 && a.s_addr == htonl(INADDR_LOOPBACK);
}

/* Whether the file @p path is readable and its first 64 KiB hold "-----BEGIN " ... @p label. */
static int pem_file(const char *field, const char *path, const char *label, char *err, size_t errlen)
{
	char buf[65536];
	FILE *f = fopen(path, "re");
	size_t n;
	const char *b;

	if (f == NULL) {
		snprintf(err, errlen, "%s: %s: cannot read: %s", field, path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (b = strstr(buf, "-----BEGIN "); b != NULL; b = strstr(b + 1, "-----BEGIN ")) {
		const char *e = strstr(b, "-----\n") ? strstr(b, "-----\n") : strstr(b, "-----\r");

		if (e != NULL && (size_t)(e - b) > strlen(label) && strncmp(e - strlen(label), label, strlen(label)) == 0)
			return 0;
	}
	snprintf(err, errlen, "%s: %s: no PEM %s in it", field, path, label);
	return -1;
}

int sbx_config_mgmt_check(const struct sbx_config *cfg, bool files, char *err, size_t errlen)
{
	if (!sbx_config_mgmt_local(cfg->mgmt_listen) && cfg->mgmt_tls_cert[0] == '\0' && !cfg->mgmt_insecure) {
		snprintf(err, errlen, "mgmt.tls: required when mgmt.listen is not 127.0.0.1 (it is %s): give "
			 "{\"cert\": PATH, \"key\": PATH}, or set mgmt.insecure to true to serve plain HTTP there",
			 cfg->mgmt_listen);
		return -1;
	}
	if (!files || cfg->mgmt_tls_cert[0] == '\0')
		return 0;
	if (pem_file("mgmt.tls.cert", cfg->mgmt_tls_cert, "CERTIFICATE", err, errlen) < 0 ||
	    pem_file("mgmt.tls.key", cfg->mgmt_tls_key, "PRIVATE KEY", err, errlen) < 0)
		return -1;
	return 0;
}

/* The first CPU of @p set not in @p online, or -1. */
static int first_offline(const struct sbx_cpuset *set, const struct sbx_cpuset *online)
{
	unsigned int cpu;

	for (cpu = 0; cpu < SBX_MAX_CPUS; cpu++)
		if (sbx_cpuset_has(set, cpu) && !sbx_cpuset_has(online, cpu))
			return (int)cpu;
	return -1;
}

int sbx_config_placement_check(const struct sbx_config *cfg, char *err, size_t errlen)
{
	struct sbx_cpuset online, set;
	char list[256];
	int cpu;
	uint16_t w;

	if (sbx_cpus_online(&online) < 0)
		return 0; /* no sysfs: EAL checks the CPUs itself */
	sbx_cpulist_format(&online, list, sizeof(list));
	for (w = 0; w < cfg->nb_workers; w++)
		if (cfg->workers[w].cpu >= 0 && !sbx_cpuset_has(&online, (unsigned int)cfg->workers[w].cpu)) {
			snprintf(err, errlen, "workers.cpus[%u]: CPU %d does not exist or is offline (online: %s)", w,
				 cfg->workers[w].cpu, list);
			return -1;
		}
	if (sbx_cpulist_parse(cfg->cpus, &set) >= 0 && (cpu = first_offline(&set, &online)) >= 0) {
		snprintf(err, errlen, "eal.cpus: CPU %d does not exist or is offline (online: %s)", cpu, list);
		return -1;
	}
	if (sbx_cpulist_parse(cfg->housekeeping_cpus, &set) >= 0 && (cpu = first_offline(&set, &online)) >= 0) {
		snprintf(err, errlen, "eal.housekeeping_cpus: CPU %d does not exist or is offline (online: %s)", cpu,
			 list);
		return -1;
	}
	return 0;
}
