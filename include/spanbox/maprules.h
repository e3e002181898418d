/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Map rules (docs/MAPS.md): the rule table of a map, parsed from JSON, checked for shadowed rules,
 * and the flat key extracted from a frame that the rules are matched against (shared/mapacl.c
 * builds rte_acl contexts from the rules and classifies keys). Pure: no EAL, no mbuf; unit tests,
 * the reference model (tests/lib/map_model.py) and fuzzers call it on byte arrays and cJSON trees.
 *
 * A rule is a conjunction of fields (absent = any), each stored the way rte_acl takes it (host byte
 * order; RANGE fields lo/hi, MASK fields value/prefix length, BITMASK fields value/mask), so that a
 * rule is copied into an rte_acl rule as it is and the shadow check compares the same numbers the
 * classifier matches. The key (struct sbx_map_key) holds the frame's fields in network byte order
 * (rte_acl reads its input most significant byte first).
 *
 * Frame fields (sbx_map_key_extract, the reference for docs/MAPS.md):
 *   - up to 8 VLAN tags (802.1Q 0x8100, 802.1ad 0x88a8, the old 0x9100): the first is the outer
 *     VLAN, the second the inner one; the EtherType is the one after the last tag;
 *   - IPv4 (RFC 791: DSCP = TOS >> 2; fragment: offset != 0 "later", MF set "first", else "none") and
 *     IPv6 (RFC 8200: DSCP = traffic class >> 2; hop-by-hop, routing, destination options, AH
 *     (RFC 4302) and fragment extension headers walked, at most 8, as shared/flowhash.c does; a
 *     fragment header with offset != 0 is "later" (also after a first one), with M set "first", an
 *     atomic one (RFC 6946) "none"); any other EtherType (ARP, MPLS 0x8847, PPPoE 0x8864, ...) is not IP: only its L2
 *     fields match;
 *   - ports of TCP (6), UDP (17), SCTP (132) when the first 4 bytes of the transport header are in
 *     the frame and the packet is not a later fragment; TCP flags (byte 13 of the TCP header) when
 *     14 bytes of it are there and it is not a later fragment. A rule naming ports (or TCP flags)
 *     never matches a frame without them: a non-first fragment never matches a rule naming ports.
 */
#ifndef SPANBOX_MAPRULES_H
#define SPANBOX_MAPRULES_H

#include <stddef.h>
#include <stdint.h>

struct cJSON;

/** Most rules in one map, and in one appliance (the parser refuses more). */
#define SBX_MAP_MAX_RULES 65536u

/** The key's flags byte (struct sbx_map_key.flags): what the frame has. */
enum sbx_map_key_flag {
	SBX_MAPK_IP = 0x01,         /**< IPv4 or IPv6 header whole */
	SBX_MAPK_IP6 = 0x02,        /**< IPv6 (with SBX_MAPK_IP) */
	SBX_MAPK_PORTS = 0x04,      /**< src_port / dst_port hold the transport ports */
	SBX_MAPK_FRAG_FIRST = 0x08, /**< the first fragment of a datagram (offset 0, more fragments) */
	SBX_MAPK_FRAG_LATER = 0x10, /**< a fragment with offset != 0: no transport header */
	SBX_MAPK_TCPF = 0x20,       /**< tcp_flags holds the TCP flags byte */
	SBX_MAPK_VLAN = 0x40,       /**< at least one VLAN tag (outer_vlan) */
	SBX_MAPK_IVLAN = 0x80,      /**< at least two VLAN tags (inner_vlan) */
};

/**
 * The flat key of one frame, 64 bytes, laid out for rte_acl: the first field is one byte (rte_acl
 * wants that), every further group of fields fills 4 consecutive bytes (one rte_acl input index).
 * Multi-byte fields in network byte order. IPv4 addresses sit in the first 4 bytes of src / dst,
 * the other 12 are zero. Fields the frame does not have are zero (and its flags say so).
 */
struct sbx_map_key {
	uint8_t proto;        /**<  0: IP protocol (IPv6: the last next header of the walk); 0 if not IP */
	uint8_t pad0[3];      /**<  1: zero */
	uint8_t flags;        /**<  4: enum sbx_map_key_flag */
	uint8_t dscp;         /**<  5: DSCP, 0..63 */
	uint16_t tcp_flags;   /**<  6: TCP flags byte (CWR..FIN), 0..255 */
	uint16_t outer_vlan;  /**<  8: VLAN id of the first tag */
	uint16_t inner_vlan;  /**< 10: VLAN id of the second tag */
	uint32_t ethertype;   /**< 12: EtherType after the tags, 0..0xffff */
	uint32_t src_mac_hi;  /**< 16: source MAC bytes 0-3 */
	uint32_t dst_mac_hi;  /**< 20: destination MAC bytes 0-3 */
	uint16_t src_mac_lo;  /**< 24: source MAC bytes 4-5 */
	uint16_t dst_mac_lo;  /**< 26: destination MAC bytes 4-5 */
	uint16_t src_port;    /**< 28 */
	uint16_t dst_port;    /**< 30 */
	uint8_t src[16];      /**< 32: source address */
	uint8_t dst[16];      /**< 48: destination address */
};

/**
 * The canonical fields of a rule and of the key, in the order of struct sbx_map_key. Each has an
 * rte_acl type (sbx_map_field_defs); the address words are 32-bit MASK fields with a prefix length.
 */
enum sbx_map_field {
	SBX_MF_PROTO, SBX_MF_FLAGS, SBX_MF_DSCP, SBX_MF_TCPF, SBX_MF_VLAN, SBX_MF_IVLAN, SBX_MF_ETYPE,
	SBX_MF_SMAC_HI, SBX_MF_DMAC_HI, SBX_MF_SMAC_LO, SBX_MF_DMAC_LO, SBX_MF_SPORT, SBX_MF_DPORT,
	SBX_MF_SRC0, SBX_MF_SRC1, SBX_MF_SRC2, SBX_MF_SRC3, SBX_MF_DST0, SBX_MF_DST1, SBX_MF_DST2,
	SBX_MF_DST3,
	SBX_MF_COUNT
};

/** rte_acl field types, the same numbers as RTE_ACL_FIELD_TYPE_* (rte_acl.h). */
enum sbx_map_field_type { SBX_MFT_MASK = 0, SBX_MFT_RANGE = 1, SBX_MFT_BITMASK = 2 };

/** One canonical field's place in the key and its type. */
struct sbx_map_field_def {
	uint8_t type;    /**< enum sbx_map_field_type */
	uint8_t size;    /**< bytes: 1, 2 or 4 */
	uint8_t offset;  /**< in struct sbx_map_key */
	uint8_t group;   /**< fields of one group share an rte_acl input index (4 bytes) */
	const char *name;
};

/** The field definitions, indexed by enum sbx_map_field. */
extern const struct sbx_map_field_def sbx_map_field_defs[SBX_MF_COUNT];

/** The keys of a rule object, in the order docs/MAPS.md lists them ("action" first): the parser
 *  refuses any other key; the REST API's field= of GET /maps/{id}/rules takes these. */
#define SBX_MAP_RULE_KEYS 14
extern const char *const sbx_map_rule_keys[SBX_MAP_RULE_KEYS];

/** sbx_map_rule_keys joined by ", " into @p buf (@p len bytes, truncated if short); @return @p buf. */
char *sbx_map_rule_keys_text(char *buf, size_t len);

/** A rule's action. */
enum sbx_map_action { SBX_MAP_PASS = 0, SBX_MAP_DROP = 1 };

/** One field of a rule: RANGE lo..hi; MASK value / prefix length; BITMASK value / mask. */
struct sbx_map_rule_field {
	uint32_t value;
	uint32_t mask_range;
};

/** One parsed rule: the canonical fields (wildcards where the JSON said nothing). */
struct sbx_map_rule {
	uint8_t action;   /**< enum sbx_map_action */
	uint8_t family;   /**< 0 (no address), 4 or 6: the family of src / dst */
	uint32_t used;    /**< bit per enum sbx_map_field that is not a wildcard */
	struct sbx_map_rule_field f[SBX_MF_COUNT];
};

/** A map's rule table (heap, sbx_map_rules_free). */
struct sbx_map_rules {
	struct sbx_map_rule *rule;
	uint32_t n;
};

/**
 * Parse a JSON array of rules (docs/MAPS.md "Rule fields").
 * @param rules  the array (NULL: no rules)
 * @param path   the array's name in error messages, e.g. "rules" or "maps[2].rules"
 * @param out    the table; on success rule is a heap array (sbx_map_rules_free), on error it is
 *               left empty (nothing to free)
 * @param err    on error: "<path>[<i>].<field>: <what>" e.g. "rules[1041].dst_port: 70000 is not a port"
 * @return 0, or -1 (err set): not an array, more than SBX_MAP_MAX_RULES rules, a rule that is not
 *         an object, an unknown key, a missing or unknown action, a value of the wrong type or out
 *         of range, a reversed range, a malformed prefix / MAC, IPv4 and IPv6 in one rule, a rule
 *         that can never match (ports or TCP flags with fragment "later", ports with a protocol
 *         without ports, TCP flags with a protocol other than 6)
 */
int sbx_map_rules_parse(const struct cJSON *rules, const char *path, struct sbx_map_rules *out,
			char *err, size_t errlen);

/** Free a table's rules (a zeroed table is fine). */
void sbx_map_rules_free(struct sbx_map_rules *r);

/** true when every frame @p b matches also matches @p a (a covers b), field by field. */
int sbx_map_rule_covers(const struct sbx_map_rule *a, const struct sbx_map_rule *b);

/** A shadowed rule: rule index @c rule can never decide, the earlier rule @c by covers it. */
struct sbx_map_shadow {
	uint32_t rule;
	uint32_t by;
};

/**
 * Find the shadowed rules of one map (each reported once, with the first earlier rule that covers
 * it). Indexed: rules grouped by the fields they name, each group sorted on its most selective
 * address prefix, so a rule is checked against the earlier rules that can cover it, not all of
 * them (docs/MAPS.md gives the time at 65,536 rules); the plain double loop when the index's
 * memory (about 24 bytes per rule) cannot be had.
 * @param out  room for @p max reports (may be NULL with max 0)
 * @return the number of shadowed rules (may exceed @p max: only max are written)
 */
size_t sbx_map_rules_shadowed(const struct sbx_map_rules *r, struct sbx_map_shadow *out, size_t max);

/**
 * Fill @p k from the frame (field rules: the top of this file).
 * @param frame  the frame from its Ethernet header (as the tools receive it)
 * @param len    bytes readable at @p frame; nothing past it is read
 * Never fails: a frame too short for a header has the fields before it (a frame shorter than 14
 * bytes: its MAC addresses as far as they go, nothing else).
 */
void sbx_map_key_extract(const uint8_t *frame, uint32_t len, struct sbx_map_key *k);

/** true when the rule matches the key: the reference semantics, field by field (tests). */
int sbx_map_rule_match(const struct sbx_map_rule *r, const struct sbx_map_key *k);

/** The key's value of a canonical field, in host byte order. */
uint32_t sbx_map_key_field(const struct sbx_map_key *k, enum sbx_map_field f);

#endif
