/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal to the config parser (shared/config*.c, one file per section of docs/CONFIG.md): the
 * error context, the typed getters every section's parser uses (config_util.c), and each section's
 * entry point, which sbx_config_sections_parse() (config.c) calls in the document's order. Not an
 * API of the processes: include/spanbox/config.h is.
 */
#ifndef SBX_CONFIG_INT_H
#define SBX_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "spanbox/config.h"

/* The characters of names, CPU lists and tokens (config_util.c; cfg_to_string() names the set
 * in its message by comparing the pointer with these). */
extern const char cfg_name_chars[], cfg_cpu_chars[], cfg_token_chars[];

/* One accepted string of an enumerated key and the value it stands for. */
struct cfg_choice {
	const char *name;
	uint8_t value;
};

/* Destination of error messages. */
struct cfg_ctx {
	char *err;
	size_t errlen;
};

/* "rx", "tx", "both": a source's or a flow port's direction. */
extern const struct cfg_choice cfg_direction_choices[];

/* The name of @p value among @p choices, "unknown" when none has it. */
const char *cfg_choice_name(const struct cfg_choice *choices, uint8_t value);

/* Write "<path>[.<key>]: <message>" to the error buffer; always returns -1. */
__attribute__((format(printf, 4, 5)))
int cfg_fail(struct cfg_ctx *c, const char *path, const char *key, const char *fmt, ...);

/* Member @key of @obj, or NULL when @obj is NULL or has no such member. */
const cJSON *cfg_member(const cJSON *obj, const char *key);

/* Refuse members of object @obj that are not in @allowed (NULL-terminated) or appear twice. */
int cfg_check_keys(struct cfg_ctx *c, const cJSON *obj, const char *path,
		   const char *const allowed[]);

/* Refuse an absent member @key of @obj. */
int cfg_need(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key);

/* Fetch the object member @key of @obj into *out (NULL when absent) and check its keys;
 * @opath is the path of the object itself. */
int cfg_get_object(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		   const char *opath, const char *const allowed[], const cJSON **out);

/* Fetch the top-level object @key into *out (NULL when absent) and check its keys. */
int cfg_get_section(struct cfg_ctx *c, const cJSON *root, const char *key,
		    const char *const allowed[], const cJSON **out);

/* Fetch the array member @key of @obj into *out (NULL when absent); at most @max entries. */
int cfg_get_array(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		  int max, const cJSON **out);

/* Read the whole number @it into *out; refuse other types, fractions and values outside min..max. */
int cfg_to_int(struct cfg_ctx *c, const cJSON *it, const char *path, const char *key,
	       long long min, long long max, long long *out);

/* Integer member @key of @obj into *out, @def when absent (see to_int). */
int cfg_get_int(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		long long min, long long max, long long def, long long *out);

/* cfg_get_int() into a uint8_t. */
int cfg_get_u8(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
	       long long min, long long max, long long def, uint8_t *out);

/* cfg_get_int() into a uint16_t. */
int cfg_get_u16(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		long long min, long long max, long long def, uint16_t *out);

/* cfg_get_int() into a uint32_t. */
int cfg_get_u32(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		long long min, long long max, long long def, uint32_t *out);

/* Copy string @it into @dst[size]; refuse non-strings, too long, "" if @nonempty, bytes not in @chars. */
int cfg_to_string(struct cfg_ctx *c, const cJSON *it, const char *path, const char *key,
		  char *dst, size_t size, bool nonempty, const char *chars);

/* String member @key of @obj into @dst, @def when absent (see to_string). */
int cfg_get_string(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		   char *dst, size_t size, bool nonempty, const char *chars, const char *def);

/* Boolean member @key of @obj into *out, @def when absent. */
int cfg_get_bool(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key, bool def,
		 bool *out);

/* String @it, one of the names of @choices, into *out as its value. */
int cfg_to_choice(struct cfg_ctx *c, const cJSON *it, const char *path, const char *key,
		  const struct cfg_choice *choices, uint8_t *out);

/* String member @key of @obj, one of the names of @choices, into *out as its value; @def when absent. */
int cfg_get_choice(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		   const struct cfg_choice *choices, uint8_t def, uint8_t *out);

/* Array member @key of @obj of names of @choices (each once) into *out as the OR of their values
 * (bits); 0 when absent. */
int cfg_get_flags(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		  const struct cfg_choice *choices, uint8_t *out);

/* True when @s is a MAC address "aa:bb:cc:dd:ee:ff" (hex digits of either case); stored in @mac. */
bool cfg_parse_mac(const char *s, uint8_t mac[6]);

/* True when @s starts with @pat ('h' = a hex digit, anything else literal) then ends or has ','. */
bool cfg_match_pci(const char *s, const char *pat);

/* True when @s is "a.b.c.d/len" with a valid IPv4 address and len 0..32. */
bool cfg_is_ipv4_cidr(const char *s);

/* Parse the required port name member "port" of @obj (at @path) into its index *out. */
int cfg_get_port(struct cfg_ctx *c, const struct sbx_config *cfg, const cJSON *obj,
		 const char *path, int *out);

/* Parse the IPv4 or IPv6 literal member @key of @obj into @ip (network order); *version = 4 or 6. */
int cfg_get_ip(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
	       uint8_t ip[16], uint8_t *version, char *text, size_t size);

/* Parse the MAC address member @key of @obj into @mac. */
int cfg_get_mac(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		uint8_t mac[6]);

/* ---- each section's entry point: 0, or -1 with "<section>...: why" in c->err ---- */
/* Parse "eal": prefix, hugepage memory, lcore ids of primary and mgmt, cpu set, extra args. */
int cfg_parse_eal(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg);

/* Parse "pool": mbuf count (0 = let the planner compute it), per-lcore cache, the planner's
 * headroom, whether a count below the plan is allowed, and the start-up memset measurement. */
int cfg_parse_pool(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg);

/*
 * Check the keys of port @path's @devargs against the table of its driver (a driver spanbox has no
 * table for, or a PCI device, is left to DPDK). For a pcap port, also copy the values of rx_pcap
 * and tx_pcap into @rx and @tx ("" when absent), each key at most once.
 */
int cfg_check_devargs(struct cfg_ctx *c, const char *path, const char *devargs, char rx[SBX_DEVARGS_LEN],
		      char tx[SBX_DEVARGS_LEN]);

/* Parse the required "ports" array and derive each port's kind and PCI-ness. */
int cfg_parse_ports(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg);

/* Parse "microburst": per-window byte accounting of every port (docs/CONFIG.md "microburst"). */
int cfg_parse_microburst(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg);

int cfg_parse_workers(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg);

/* Parse forwarding.xconnects: pairs of two distinct ports, each port in one pair at most. */
int cfg_parse_forwarding(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg);

/* Parse "mgmt": listen address, TCP port, SQLite database path, tokens and TLS files. */
int cfg_parse_mgmt(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg);

/* Parse the optional "mirrors" array: at most 16 sessions, ids and names unique (needs ports). */
int cfg_parse_mirrors(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg);

/*
 * A destination {"group": NAME} at @dpath (object @o) of session @m: a group of tool_groups (parsed
 * before the mirrors), not together with "port"; no source of the session may be a cfg_member (a
 * mirror loop). dst_port becomes the group's first cfg_member (the copies' source MAC).
 */
int cfg_parse_group_destination(struct cfg_ctx *c, const struct sbx_config *cfg, const cJSON *o, const char *dpath,
				struct sbx_mirror_cfg *m);

/* Parse the optional "tool_groups" array (needs ports and forwarding; before mirrors). */
int cfg_parse_tool_groups(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg);

int cfg_parse_flows(struct cfg_ctx *c, const cJSON *root, struct sbx_config *cfg);

#endif
