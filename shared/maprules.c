/* SPDX-License-Identifier: BSD-3-Clause */
/* Map rules: parser, shadow check, key extractor, reference match (include/spanbox/maprules.h).
 * Every frame read is preceded by a bound check against len. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "spanbox/bytes.h"
#include "spanbox/ip6walk.h"
#include "spanbox/maprules.h"

#define ET_IPV4 0x0800
#define ET_IPV6 0x86dd
#define ET_VLAN 0x8100
#define ET_QINQ 0x88a8
#define ET_QINQ_OLD 0x9100
#define MAX_TAGS 8
#define MAX_EXT_HDRS 8
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_SCTP 132
#define IP6_FRAG 44

/* groups: 0 the first byte, 1 meta, 2 VLANs, 3 EtherType, 4-6 MACs, 7 ports, 8 src word 0, 9 src
 * words 1-3 (IPv6 only), 10 dst word 0, 11 dst words 1-3 */
const struct sbx_map_field_def sbx_map_field_defs[SBX_MF_COUNT] = {
	[SBX_MF_PROTO] = { SBX_MFT_BITMASK, 1, 0, 0, "ip_proto" },
	[SBX_MF_FLAGS] = { SBX_MFT_BITMASK, 1, 4, 1, "flags" },
	[SBX_MF_DSCP] = { SBX_MFT_BITMASK, 1, 5, 1, "dscp" },
	[SBX_MF_TCPF] = { SBX_MFT_BITMASK, 2, 6, 1, "tcp_flags" },
	[SBX_MF_VLAN] = { SBX_MFT_RANGE, 2, 8, 2, "vlan" },
	[SBX_MF_IVLAN] = { SBX_MFT_RANGE, 2, 10, 2, "inner_vlan" },
	[SBX_MF_ETYPE] = { SBX_MFT_BITMASK, 4, 12, 3, "ethertype" },
	[SBX_MF_SMAC_HI] = { SBX_MFT_BITMASK, 4, 16, 4, "src_mac" },
	[SBX_MF_DMAC_HI] = { SBX_MFT_BITMASK, 4, 20, 5, "dst_mac" },
	[SBX_MF_SMAC_LO] = { SBX_MFT_BITMASK, 2, 24, 6, "src_mac" },
	[SBX_MF_DMAC_LO] = { SBX_MFT_BITMASK, 2, 26, 6, "dst_mac" },
	[SBX_MF_SPORT] = { SBX_MFT_RANGE, 2, 28, 7, "src_port" },
	[SBX_MF_DPORT] = { SBX_MFT_RANGE, 2, 30, 7, "dst_port" },
	[SBX_MF_SRC0] = { SBX_MFT_MASK, 4, 32, 8, "src" },
	[SBX_MF_SRC1] = { SBX_MFT_MASK, 4, 36, 9, "src" },
	[SBX_MF_SRC2] = { SBX_MFT_MASK, 4, 40, 9, "src" },
	[SBX_MF_SRC3] = { SBX_MFT_MASK, 4, 44, 9, "src" },
	[SBX_MF_DST0] = { SBX_MFT_MASK, 4, 48, 10, "dst" },
	[SBX_MF_DST1] = { SBX_MFT_MASK, 4, 52, 11, "dst" },
	[SBX_MF_DST2] = { SBX_MFT_MASK, 4, 56, 11, "dst" },
	[SBX_MF_DST3] = { SBX_MFT_MASK, 4, 60, 11, "dst" },
};

const char *const sbx_map_rule_keys[SBX_MAP_RULE_KEYS] = { "action", "vlan", "inner_vlan", "ethertype", "src_mac",
							     "dst_mac", "src", "dst", "ip_proto", "dscp", "src_port",
							     "dst_port", "tcp_flags", "fragment" };

char *sbx_map_rule_keys_text(char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t k = 0; k < SBX_MAP_RULE_KEYS; k++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", k ? ", " : "", sbx_map_rule_keys[k]);
	return buf;
}

_Static_assert(sizeof(struct sbx_map_key) == 64, "the key is one cache line");

static uint32_t field_max(enum sbx_map_field f)
{
	return sbx_map_field_defs[f].size == 4 ? UINT32_MAX : (1u << (sbx_map_field_defs[f].size * 8)) - 1;
}

static uint32_t prefix_mask(uint32_t len)
{
	return len == 0 ? 0 : UINT32_MAX << (32 - len);
}

/* ---------------------------------------------------------------- parser */

struct ctx {
	const char *path;
	uint32_t i;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 4, 5)))
static int fail(const struct ctx *c, const char *key, const cJSON *v, const char *fmt, ...)
{
	char what[160], *txt = v ? cJSON_PrintUnformatted(v) : NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (txt && strlen(txt) > 64)
		strcpy(txt + 60, "...");
	snprintf(c->err, c->errlen, "%s[%" PRIu32 "]%s%s: %s%s%s", c->path, c->i, key ? "." : "", key ? key : "",
		 txt ? txt : "", txt ? " " : "", what);
	free(txt);
	return -1;
}

/* An unsigned number in a string (decimal or 0x hex), the whole of [s, end). */
static int str_num(const char *s, const char *end, uint32_t max, uint32_t *out)
{
	char buf[24], *e;
	unsigned long long v;

	if (end - s <= 0 || end - s >= (long)sizeof(buf) || !isdigit((unsigned char)*s))
		return -1;
	memcpy(buf, s, (size_t)(end - s));
	buf[end - s] = '\0';
	errno = 0;
	v = strtoull(buf, &e, 0);
	if (errno || *e || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* A JSON integer 0..max, or a string of one ("873", "0x0800"). */
static int json_num(const cJSON *v, uint32_t max, uint32_t *out)
{
	if (cJSON_IsNumber(v)) {
		if (v->valuedouble < 0 || v->valuedouble > max || v->valuedouble != (double)(uint32_t)v->valuedouble)
			return -1;
		*out = (uint32_t)v->valuedouble;
		return 0;
	}
	if (cJSON_IsString(v))
		return str_num(v->valuestring, v->valuestring + strlen(v->valuestring), max, out);
	return -1;
}

/* A value or a range "lo-hi" of 0..max into a RANGE field; @p what names the unit in errors. */
static int parse_range(const struct ctx *c, const char *key, const cJSON *v, uint32_t max, const char *what,
		       struct sbx_map_rule_field *f)
{
	const char *s, *dash;
	uint32_t lo, hi;

	if (cJSON_IsString(v) && (dash = strchr(s = v->valuestring, '-')) != NULL) {
		if (str_num(s, dash, max, &lo) || str_num(dash + 1, s + strlen(s), max, &hi))
			return fail(c, key, v, "is not %s range (lo-hi, 0..%" PRIu32 ")", what, max);
		if (lo > hi)
			return fail(c, key, v, "is a reversed range");
	} else if (json_num(v, max, &lo) == 0) {
		hi = lo;
	} else {
		return fail(c, key, v, "is not %s", what);
	}
	f->value = lo;
	f->mask_range = hi;
	return 0;
}

/* "value" or "value/mask" (or a JSON number: exact) into a BITMASK field of @p max. */
static int parse_bits(const struct ctx *c, const char *key, const cJSON *v, uint32_t max, const char *what,
		      struct sbx_map_rule_field *f)
{
	const char *s, *slash;
	uint32_t val, mask = max;

	if (cJSON_IsString(v) && (slash = strchr(s = v->valuestring, '/')) != NULL) {
		if (str_num(s, slash, max, &val) || str_num(slash + 1, s + strlen(s), max, &mask))
			return fail(c, key, v, "is not %s (value/mask, 0..0x%" PRIx32 ")", what, max);
	} else if (json_num(v, max, &val) != 0) {
		return fail(c, key, v, "is not %s", what);
	}
	f->value = val & mask;
	f->mask_range = mask;
	return 0;
}

static int parse_mac_text(const char *s, const char *end, uint8_t mac[6])
{
	unsigned int b[6];
	char buf[18];
	int n = -1;

	if (end - s != 17)
		return -1;
	memcpy(buf, s, 17);
	buf[17] = '\0';
	if (sscanf(buf, "%2x:%2x:%2x:%2x:%2x:%2x%n", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &n) != 6 || n != 17)
		return -1;
	for (n = 0; n < 6; n++) {
		if (!isxdigit((unsigned char)buf[n * 3]) || !isxdigit((unsigned char)buf[n * 3 + 1]))
			return -1;
		mac[n] = (uint8_t)b[n];
	}
	return 0;
}

/* "aa:bb:cc:dd:ee:ff" or "aa:bb:cc:dd:ee:ff/ff:ff:ff:00:00:00" into the hi/lo BITMASK fields. */
static int parse_mac(const struct ctx *c, const char *key, const cJSON *v, struct sbx_map_rule *r,
		     enum sbx_map_field hi, enum sbx_map_field lo)
{
	uint8_t m[6], k[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	const char *s = cJSON_IsString(v) ? v->valuestring : NULL, *slash;

	if (s == NULL)
		return fail(c, key, v, "is not a MAC address (aa:bb:cc:dd:ee:ff or value/mask)");
	slash = strchr(s, '/');
	if (parse_mac_text(s, slash ? slash : s + strlen(s), m) ||
	    (slash && parse_mac_text(slash + 1, s + strlen(s), k)))
		return fail(c, key, v, "is not a MAC address (aa:bb:cc:dd:ee:ff or value/mask)");
	r->f[hi].mask_range = (uint32_t)k[0] << 24 | (uint32_t)k[1] << 16 | (uint32_t)k[2] << 8 | k[3];
	r->f[hi].value = ((uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 | (uint32_t)m[2] << 8 | m[3]) & r->f[hi].mask_range;
	r->f[lo].mask_range = (uint32_t)k[4] << 8 | k[5];
	r->f[lo].value = ((uint32_t)m[4] << 8 | m[5]) & r->f[lo].mask_range;
	return 0;
}

/* "10.0.0.0/8", "2001:db8::/32", or an address alone (a host): into word 0 (IPv4) or words 0-3. */
static int parse_prefix(const struct ctx *c, const char *key, const cJSON *v, struct sbx_map_rule *r,
			enum sbx_map_field w0)
{
	const char *s = cJSON_IsString(v) ? v->valuestring : NULL, *slash;
	char buf[INET6_ADDRSTRLEN + 1];
	uint8_t a[16] = {0};
	uint32_t len, max, w, word;
	int fam;

	if (s == NULL)
		return fail(c, key, v, "is not an IPv4 or IPv6 prefix (address/length)");
	slash = strchr(s, '/');
	if ((size_t)((slash ? slash : s + strlen(s)) - s) >= sizeof(buf))
		return fail(c, key, v, "is not an IPv4 or IPv6 prefix (address/length)");
	memcpy(buf, s, (size_t)((slash ? slash : s + strlen(s)) - s));
	buf[(slash ? slash : s + strlen(s)) - s] = '\0';
	if (inet_pton(AF_INET, buf, a) == 1)
		fam = 4, max = 32;
	else if (inet_pton(AF_INET6, buf, a) == 1)
		fam = 6, max = 128;
	else
		return fail(c, key, v, "is not an IPv4 or IPv6 prefix (address/length)");
	len = max;
	if (slash && str_num(slash + 1, s + strlen(s), max, &len))
		return fail(c, key, v, "has a bad prefix length (0..%" PRIu32 ")", max);
	if (slash && (slash[1] == '0' && slash[2] != '\0'))
		return fail(c, key, v, "has a bad prefix length (0..%" PRIu32 ")", max);
	if (r->family && r->family != fam)
		return fail(c, key, v, "is IPv%d in a rule with an IPv%d address", fam, r->family);
	r->family = (uint8_t)fam;
	for (w = 0; w < (fam == 4 ? 1u : 4u); w++) {
		uint32_t bits = len > w * 32 ? (len - w * 32 > 32 ? 32 : len - w * 32) : 0;

		word = (uint32_t)a[w * 4] << 24 | (uint32_t)a[w * 4 + 1] << 16 | (uint32_t)a[w * 4 + 2] << 8 | a[w * 4 + 3];
		if (word & ~prefix_mask(bits))
			return fail(c, key, v, "has bits set past its prefix length");
		r->f[w0 + w].value = word;
		r->f[w0 + w].mask_range = bits;
	}
	return 0;
}

static void wildcard(struct sbx_map_rule *r)
{
	int f;

	memset(r, 0, sizeof(*r));
	for (f = 0; f < SBX_MF_COUNT; f++)
		if (sbx_map_field_defs[f].type == SBX_MFT_RANGE)
			r->f[f].mask_range = field_max((enum sbx_map_field)f);
}

/* The flags a rule requires: each named field adds bits to (value, mask) of SBX_MF_FLAGS. */
static void need(struct sbx_map_rule *r, uint32_t value, uint32_t mask)
{
	r->f[SBX_MF_FLAGS].value |= value;
	r->f[SBX_MF_FLAGS].mask_range |= mask;
}

/* An exact 8-bit field of the IP header (protocol, DSCP): 0..max, needs IP. */
static int parse_ip_byte(const struct ctx *c, const char *key, const cJSON *v, uint32_t max, const char *what,
			 struct sbx_map_rule *r, enum sbx_map_field f)
{
	if (json_num(v, max, &r->f[f].value) != 0)
		return fail(c, key, v, "%s", what);
	r->f[f].mask_range = 0xff;
	need(r, SBX_MAPK_IP, SBX_MAPK_IP);
	return 0;
}

static int has_ports(uint32_t proto)
{
	return proto == PROTO_TCP || proto == PROTO_UDP || proto == PROTO_SCTP;
}

static int parse_rule(const struct ctx *c, const cJSON *o, struct sbx_map_rule *r)
{
	const cJSON *v;
	const char *frag = NULL;
	int ports = 0, tcpf = 0;

	wildcard(r);
	if (!cJSON_IsObject(o))
		return fail(c, NULL, NULL, "is not an object");
	if (cJSON_GetObjectItemCaseSensitive(o, "action") == NULL)
		return fail(c, "action", NULL, "missing (\"pass\" or \"drop\")");
	cJSON_ArrayForEach(v, o) {
		const char *k = v->string;
		int rc = 0;

		if (strcmp(k, "action") == 0) {
			if (cJSON_IsString(v) && strcmp(v->valuestring, "pass") == 0)
				r->action = SBX_MAP_PASS;
			else if (cJSON_IsString(v) && strcmp(v->valuestring, "drop") == 0)
				r->action = SBX_MAP_DROP;
			else
				rc = fail(c, k, v, "is not an action (\"pass\" or \"drop\")");
		} else if (strcmp(k, "vlan") == 0 || strcmp(k, "inner_vlan") == 0) {
			int outer = k[0] == 'v';

			rc = parse_range(c, k, v, 4095, "a VLAN id", &r->f[outer ? SBX_MF_VLAN : SBX_MF_IVLAN]);
			need(r, outer ? SBX_MAPK_VLAN : SBX_MAPK_IVLAN, outer ? SBX_MAPK_VLAN : SBX_MAPK_IVLAN);
		} else if (strcmp(k, "ethertype") == 0) {
			rc = parse_bits(c, k, v, 0xffff, "an EtherType", &r->f[SBX_MF_ETYPE]);
			r->f[SBX_MF_ETYPE].mask_range = 0xffff; /* exact */
			if (rc == 0 && cJSON_IsString(v) && strchr(v->valuestring, '/'))
				rc = fail(c, k, v, "is not an EtherType (one value)");
		} else if (strcmp(k, "src_mac") == 0) {
			rc = parse_mac(c, k, v, r, SBX_MF_SMAC_HI, SBX_MF_SMAC_LO);
		} else if (strcmp(k, "dst_mac") == 0) {
			rc = parse_mac(c, k, v, r, SBX_MF_DMAC_HI, SBX_MF_DMAC_LO);
		} else if (strcmp(k, "src") == 0 || strcmp(k, "dst") == 0) {
			rc = parse_prefix(c, k, v, r, k[0] == 's' ? SBX_MF_SRC0 : SBX_MF_DST0);
		} else if (strcmp(k, "ip_proto") == 0) {
			rc = parse_ip_byte(c, k, v, 255, "is not an IP protocol (0..255)", r, SBX_MF_PROTO);
		} else if (strcmp(k, "dscp") == 0) {
			rc = parse_ip_byte(c, k, v, 63, "is not a DSCP value (0..63)", r, SBX_MF_DSCP);
		} else if (strcmp(k, "src_port") == 0 || strcmp(k, "dst_port") == 0) {
			rc = parse_range(c, k, v, 65535, "a port", &r->f[k[0] == 's' ? SBX_MF_SPORT : SBX_MF_DPORT]);
			need(r, SBX_MAPK_PORTS, SBX_MAPK_PORTS);
			ports = 1;
		} else if (strcmp(k, "tcp_flags") == 0) {
			rc = parse_bits(c, k, v, 0xff, "TCP flags (0..0xff, value or value/mask)", &r->f[SBX_MF_TCPF]);
			need(r, SBX_MAPK_TCPF, SBX_MAPK_TCPF);
			tcpf = 1;
		} else if (strcmp(k, "fragment") == 0) {
			frag = cJSON_IsString(v) ? v->valuestring : "";
			if (strcmp(frag, "none") == 0)
				need(r, SBX_MAPK_IP, SBX_MAPK_IP | SBX_MAPK_FRAG_FIRST | SBX_MAPK_FRAG_LATER);
			else if (strcmp(frag, "first") == 0)
				need(r, SBX_MAPK_IP | SBX_MAPK_FRAG_FIRST, SBX_MAPK_IP | SBX_MAPK_FRAG_FIRST | SBX_MAPK_FRAG_LATER);
			else if (strcmp(frag, "later") == 0)
				need(r, SBX_MAPK_IP | SBX_MAPK_FRAG_LATER, SBX_MAPK_IP | SBX_MAPK_FRAG_LATER);
			else
				rc = fail(c, k, v, "is not a fragment state (\"none\", \"first\" or \"later\")");
		} else {
			char keys[200];

			rc = fail(c, k, NULL, "unknown key (a rule takes %s)", sbx_map_rule_keys_text(keys, sizeof(keys)));
		}
		if (rc)
			return rc;
	}
	if (r->family == 4)
		need(r, SBX_MAPK_IP, SBX_MAPK_IP | SBX_MAPK_IP6);
	else if (r->family == 6)
		need(r, SBX_MAPK_IP | SBX_MAPK_IP6, SBX_MAPK_IP | SBX_MAPK_IP6);
	if (frag && strcmp(frag, "later") == 0 && (ports || tcpf))
		return fail(c, "fragment", cJSON_GetObjectItemCaseSensitive(o, "fragment"),
			    "never matches a rule naming %s: a later fragment has no transport header",
			    ports ? "ports" : "TCP flags");
	v = cJSON_GetObjectItemCaseSensitive(o, "ip_proto");
	if (v && ports && !has_ports(r->f[SBX_MF_PROTO].value))
		return fail(c, "ip_proto", v, "has no ports (only 6, 17 and 132 do): the rule names ports");
	if (v && tcpf && r->f[SBX_MF_PROTO].value != PROTO_TCP)
		return fail(c, "ip_proto", v, "is not TCP (6): the rule names tcp_flags");
	for (int f = 0; f < SBX_MF_COUNT; f++) {
		const struct sbx_map_rule_field *x = &r->f[f];
		int wild = sbx_map_field_defs[f].type == SBX_MFT_RANGE ?
			   x->value == 0 && x->mask_range == field_max((enum sbx_map_field)f) : x->mask_range == 0;

		if (!wild)
			r->used |= 1u << f;
	}
	return 0;
}

int sbx_map_rules_parse(const cJSON *rules, const char *path, struct sbx_map_rules *out, char *err, size_t errlen)
{
	struct ctx c = { .path = path ? path : "rules", .err = err, .errlen = errlen };
	const cJSON *o;
	int n;

	out->rule = NULL;
	out->n = 0;
	if (rules == NULL)
		return 0;
	if (!cJSON_IsArray(rules)) {
		snprintf(err, errlen, "%s: not an array of rules", c.path);
		return -1;
	}
	n = cJSON_GetArraySize(rules);
	if ((uint32_t)n > SBX_MAP_MAX_RULES) {
		snprintf(err, errlen, "%s: %d rules, at most %u", c.path, n, SBX_MAP_MAX_RULES);
		return -1;
	}
	if (n == 0)
		return 0;
	out->rule = calloc((size_t)n, sizeof(*out->rule));
	if (out->rule == NULL) {
		snprintf(err, errlen, "%s: out of memory", c.path);
		return -1;
	}
	cJSON_ArrayForEach(o, rules) {
		if (parse_rule(&c, o, &out->rule[c.i]) != 0) {
			free(out->rule);
			out->rule = NULL;
			return -1;
		}
		c.i++;
	}
	out->n = c.i;
	return 0;
}

void sbx_map_rules_free(struct sbx_map_rules *r)
{
	free(r->rule);
	r->rule = NULL;
	r->n = 0;
}

/* ---------------------------------------------------------------- shadow check */

static inline int field_covers(enum sbx_map_field f, const struct sbx_map_rule_field *a,
			       const struct sbx_map_rule_field *b)
{
	switch (sbx_map_field_defs[f].type) {
	case SBX_MFT_RANGE:
		return a->value <= b->value && b->mask_range <= a->mask_range;
	case SBX_MFT_MASK:
		return a->mask_range <= b->mask_range && ((a->value ^ b->value) & prefix_mask(a->mask_range)) == 0;
	default:
		return (a->mask_range & ~b->mask_range) == 0 && ((a->value ^ b->value) & a->mask_range) == 0;
	}
}

int sbx_map_rule_covers(const struct sbx_map_rule *a, const struct sbx_map_rule *b)
{
	uint32_t u = a->used;

	if (u & ~b->used) /* a names a field b leaves open */
		return 0;
	while (u) {
		int f = __builtin_ctz(u);

		if (!field_covers((enum sbx_map_field)f, &a->f[f], &b->f[f]))
			return 0;
		u &= u - 1;
	}
	return 1;
}

/*
 * The shadow check, indexed. Rule i can cover rule j only if every field i names, j names too
 * (used_i is a subset of used_j): the rules are grouped by their set of fields. Within a group, if
 * its fields include an address word (a MASK field), i covers j only if i's prefix is a prefix of
 * j's: the group's rules are sorted by (prefix length, masked value, index) on its most selective
 * address word, and j looks up each prefix length the group has, up to its own, with its value
 * masked to it (a binary search each). Groups without an address word are scanned in rule order.
 * The candidates found are checked with sbx_map_rule_covers() in rule order, so each j gets the
 * first earlier rule that covers it, as the plain double loop would (tests/unit/test_maprules.c
 * compares the two on random sets).
 */
struct shadow_ent {
	uint8_t len;   /* the rule's prefix length on the group's index field */
	uint32_t key;  /* its value masked to it */
	uint32_t rule; /* its index */
};

struct shadow_group {
	uint32_t used;     /* the fields of its rules */
	int field;         /* index field (a MASK field of used), -1: none */
	uint64_t lens;     /* bit l: some rule of the group has prefix length l */
	uint32_t first;    /* its lowest rule index */
	uint32_t n;        /* rules */
	struct shadow_ent *e; /* n entries (sorted by len, key, rule; by rule when field < 0) */
};

static int used_cmp(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct shadow_ent *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->rule < y->rule ? -1 : x->rule > y->rule;
}

/* The group's most selective address word: the MASK field of @p used with the longest prefixes. */
static int index_field(const struct sbx_map_rules *r, const uint64_t *order, uint32_t n, uint32_t used)
{
	uint64_t best = 0, sum;
	int f, pick = -1;

	for (f = 0; f < SBX_MF_COUNT; f++) {
		if (!(used & (1u << f)) || sbx_map_field_defs[f].type != SBX_MFT_MASK)
			continue;
		sum = 0;
		for (uint32_t k = 0; k < n; k++)
			sum += r->rule[(uint32_t)order[k]].f[f].mask_range;
		if (sum > best)
			best = sum, pick = f;
	}
	return pick;
}

/* The first earlier rule (< @p lim) of group @p g that covers rule @p j, or @p lim. */
static uint32_t group_cover(const struct sbx_map_rules *r, const struct shadow_group *g, uint32_t j, uint32_t lim)
{
	const struct sbx_map_rule *rj = &r->rule[j];
	uint32_t k, lo, hi, len, key, best = lim;

	if (g->field < 0) {
		for (k = 0; k < g->n && g->e[k].rule < best; k++)
			if (sbx_map_rule_covers(&r->rule[g->e[k].rule], rj))
				return g->e[k].rule;
		return best;
	}
	for (len = 0; len <= rj->f[g->field].mask_range && len <= 32; len++) {
		if (!(g->lens & (1ull << len)))
			continue;
		key = rj->f[g->field].value & prefix_mask(len);
		lo = 0, hi = g->n; /* the first entry >= (len, key, 0) */
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			const struct shadow_ent *m = &g->e[mid];

			if (m->len < len || (m->len == len && m->key < key))
				lo = mid + 1;
			else
				hi = mid;
		}
		for (k = lo; k < g->n && g->e[k].len == len && g->e[k].key == key && g->e[k].rule < best; k++)
			if (sbx_map_rule_covers(&r->rule[g->e[k].rule], rj)) {
				best = g->e[k].rule;
				break;
			}
	}
	return best;
}

size_t sbx_map_rules_shadowed(const struct sbx_map_rules *r, struct sbx_map_shadow *out, size_t max)
{
	struct shadow_group *g = NULL;
	struct shadow_ent *ents = NULL;
	uint64_t *order = NULL; /* (used << 32 | rule index), sorted: the groups, each in rule order */
	uint32_t ng = 0, i, j, k, start;
	size_t found = 0;

	if (r->n < 2)
		return 0;
	order = malloc(r->n * sizeof(*order));
	ents = malloc(r->n * sizeof(*ents));
	g = calloc(r->n, sizeof(*g));
	if (order == NULL || ents == NULL || g == NULL)
		goto plain;
	for (i = 0; i < r->n; i++)
		order[i] = (uint64_t)r->rule[i].used << 32 | i;
	qsort(order, r->n, sizeof(*order), used_cmp);
	for (start = 0; start < r->n; start = k) {
		struct shadow_group *gr = &g[ng++];

		gr->used = (uint32_t)(order[start] >> 32);
		for (k = start; k < r->n && (uint32_t)(order[k] >> 32) == gr->used; k++)
			;
		gr->n = k - start;
		gr->e = ents + start;
		gr->first = (uint32_t)order[start];
		gr->field = index_field(r, order + start, gr->n, gr->used);
		for (i = 0; i < gr->n; i++) {
			const struct sbx_map_rule *ri = &r->rule[(uint32_t)order[start + i]];
			uint32_t len = gr->field < 0 ? 0 : ri->f[gr->field].mask_range;

			if (len > 32)
				len = 32;
			gr->e[i] = (struct shadow_ent){ (uint8_t)len,
							gr->field < 0 ? 0 : ri->f[gr->field].value & prefix_mask(len),
							(uint32_t)order[start + i] };
			gr->lens |= 1ull << len;
		}
		if (gr->field >= 0)
			qsort(gr->e, gr->n, sizeof(*gr->e), ent_cmp);
	}
	for (j = 1; j < r->n; j++) {
		uint32_t uj = r->rule[j].used, best = j;

		for (k = 0; k < ng; k++)
			if ((g[k].used & ~uj) == 0 && g[k].first < best)
				best = group_cover(r, &g[k], j, best);
		if (best < j) {
			if (found < max)
				out[found] = (struct sbx_map_shadow){ .rule = j, .by = best };
			found++;
		}
	}
	goto done;
plain: /* no memory for the index: the plain double loop */
	for (j = 1; j < r->n; j++)
		for (i = 0; i < j; i++)
			if (sbx_map_rule_covers(&r->rule[i], &r->rule[j])) {
				if (found < max)
					out[found] = (struct sbx_map_shadow){ .rule = j, .by = i };
				found++;
				break;
			}
done:
	free(order);
	free(ents);
	free(g);
	return found;
}

/* ---------------------------------------------------------------- key */

/* The transport fields of protocol @p proto at @p off (not a later fragment). */
static void l4_fields(const uint8_t *f, uint32_t off, uint32_t len, uint8_t proto, struct sbx_map_key *k)
{
	if (has_ports(proto) && len >= off + 4) {
		memcpy(&k->src_port, f + off, 2);
		memcpy(&k->dst_port, f + off + 2, 2);
		k->flags |= SBX_MAPK_PORTS;
	}
	if (proto == PROTO_TCP && len >= off + 14) {
		k->tcp_flags = htons(f[off + 13]);
		k->flags |= SBX_MAPK_TCPF;
	}
}

static void ipv4_fields(const uint8_t *f, uint32_t off, uint32_t len, struct sbx_map_key *k)
{
	const uint8_t *ip = f + off;
	uint32_t ihl;
	uint16_t fo;

	if (len < off + 20 || (ip[0] >> 4) != 4 || (ihl = (uint32_t)(ip[0] & 0x0f) * 4) < 20 || len < off + ihl)
		return;
	k->flags |= SBX_MAPK_IP;
	k->proto = ip[9];
	k->dscp = ip[1] >> 2;
	memcpy(k->src, ip + 12, 4);
	memcpy(k->dst, ip + 16, 4);
	fo = sbx_get16(ip + 6);
	if (fo & 0x1fff) {
		k->flags |= SBX_MAPK_FRAG_LATER;
		return;
	}
	if (fo & 0x2000)
		k->flags |= SBX_MAPK_FRAG_FIRST;
	l4_fields(f, off + ihl, len, ip[9], k);
}

static void ipv6_fields(const uint8_t *f, uint32_t off, uint32_t len, struct sbx_map_key *k)
{
	const uint8_t *ip = f + off;
	uint32_t p = off + 40;
	uint8_t nh;
	int i;

	if (len < off + 40 || (ip[0] >> 4) != 6)
		return;
	k->flags |= SBX_MAPK_IP | SBX_MAPK_IP6;
	k->dscp = (uint8_t)(((ip[0] & 0x0f) << 4 | ip[1] >> 4) >> 2);
	memcpy(k->src, ip + 8, 16);
	memcpy(k->dst, ip + 24, 16);
	nh = ip[6];
	for (i = 0; i < MAX_EXT_HDRS; i++) {
		int r = sbx_ip6_ext_skip(f, len, &nh, &p);

		if (r < 0)
			goto cut;
		if (r > 0)
			continue;
		if (nh == IP6_FRAG) {
			uint16_t fo;

			if (len < p + 8)
				goto cut;
			nh = f[p];
			fo = sbx_get16(f + p + 2);
			p += 8;
			if (fo & 0xfff8) { /* offset != 0: no transport header (later, whatever came before) */
				k->flags = (uint8_t)((k->flags & ~SBX_MAPK_FRAG_FIRST) | SBX_MAPK_FRAG_LATER);
				k->proto = nh;
				return;
			}
			if (fo & 0x0001)
				k->flags |= SBX_MAPK_FRAG_FIRST;
		} else {
			break;
		}
	}
	/* past 8 extension headers: nh is what the 8th named (no ports unless it is TCP/UDP/SCTP) */
	k->proto = nh;
	l4_fields(f, p, len, nh, k);
	return;
cut: /* the chain is cut short: the last next header known, no transport fields */
	k->proto = nh;
}

void sbx_map_key_extract(const uint8_t *f, uint32_t len, struct sbx_map_key *k)
{
	uint32_t off = 12;
	uint16_t et;
	int tags = 0;

	memset(k, 0, sizeof(*k));
	if (len < 14) {
		uint8_t mac[12] = {0};

		memcpy(mac, f, len < 12 ? len : 12);
		memcpy(&k->dst_mac_hi, mac, 4);
		memcpy(&k->dst_mac_lo, mac + 4, 2);
		memcpy(&k->src_mac_hi, mac + 6, 4);
		memcpy(&k->src_mac_lo, mac + 10, 2);
		return;
	}
	memcpy(&k->dst_mac_hi, f, 4);
	memcpy(&k->dst_mac_lo, f + 4, 2);
	memcpy(&k->src_mac_hi, f + 6, 4);
	memcpy(&k->src_mac_lo, f + 10, 2);
	for (;;) {
		et = sbx_get16(f + off);
		if ((et != ET_VLAN && et != ET_QINQ && et != ET_QINQ_OLD) || tags == MAX_TAGS || len < off + 6)
			break;
		if (tags == 0) {
			k->outer_vlan = htons(sbx_get16(f + off + 2) & 0x0fff);
			k->flags |= SBX_MAPK_VLAN;
		} else if (tags == 1) {
			k->inner_vlan = htons(sbx_get16(f + off + 2) & 0x0fff);
			k->flags |= SBX_MAPK_IVLAN;
		}
		tags++;
		off += 4;
	}
	k->ethertype = htonl(et);
	off += 2;
	if (et == ET_IPV4)
		ipv4_fields(f, off, len, k);
	else if (et == ET_IPV6)
		ipv6_fields(f, off, len, k);
}

/* ---------------------------------------------------------------- reference match */

uint32_t sbx_map_key_field(const struct sbx_map_key *k, enum sbx_map_field f)
{
	const uint8_t *p = (const uint8_t *)k + sbx_map_field_defs[f].offset;

	switch (sbx_map_field_defs[f].size) {
	case 1: return p[0];
	case 2: return sbx_get16(p);
	default: return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	}
}

int sbx_map_rule_match(const struct sbx_map_rule *r, const struct sbx_map_key *k)
{
	uint32_t u = r->used;

	while (u) {
		int f = __builtin_ctz(u);
		uint32_t v = sbx_map_key_field(k, (enum sbx_map_field)f);
		const struct sbx_map_rule_field *x = &r->f[f];

		switch (sbx_map_field_defs[f].type) {
		case SBX_MFT_RANGE:
			if (v < x->value || v > x->mask_range)
				return 0;
			break;
		case SBX_MFT_MASK:
			if ((v ^ x->value) & prefix_mask(x->mask_range))
				return 0;
			break;
		default:
			if ((v & x->mask_range) != x->value)
				return 0;
		}
		u &= u - 1;
	}
	return 1;
}
