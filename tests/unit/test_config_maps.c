/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests (TAP) of the config section "maps" (shared/config_maps.c, issue #27): a map parses as
 * a mirror session plus its rule count, digest and collector flag; the document the primary keeps
 * in the memzone (sbx_config_maps_take: each map's rules replaced by {"count", "digest"}) parses to
 * the same config (sbx_config_static_diff: equal), a change of one rule is a change of the static
 * section "maps"; bad maps are refused naming the field; a file over 64 KiB by its rules fits.
 * usage: test_config_maps
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spanbox/config.h"
#include "spanbox/config_maps.h"
#include "spanbox/shm.h" /* SBX_TABLES_JSON_MAX */
#include "tap.h"

#define HEAD "{\"ports\": [{\"name\": \"a\", \"devargs\": \"net_null0\"}, {\"name\": \"b\", \"devargs\": \"net_null1\"}," \
	     " {\"name\": \"t\", \"devargs\": \"net_null2\"}, {\"name\": \"u\", \"devargs\": \"net_null3\"}]," \
	     " \"forwarding\": {\"xconnects\": [[\"a\", \"b\"]]},"
#define MAP0 "{\"id\": 40, \"name\": \"ids\", \"sources\": [{\"port\": \"a\"}, {\"port\": \"b\", \"direction\": \"rx\"}]," \
	     " \"destination\": {\"port\": \"t\"}, \"encap\": {\"type\": \"rspan\", \"vlan\": 7}, \"filter\": \"ip\"," \
	     " \"rules\": [{\"action\": \"drop\", \"ip_proto\": 6, \"dst_port\": \"873\"}, {\"action\": \"pass\", \"vlan\": \"100-199\"}," \
	     " {\"action\": \"pass\", \"src\": \"10.20.0.0/16\", \"dst_port\": \"1-1023\"}]}"
#define MAP1 "{\"id\": 41, \"name\": \"rest\", \"sources\": [{\"port\": \"a\"}], \"destination\": {\"port\": \"u\"}, \"collector\": true}"

static void good(void)
{
	struct sbx_config a, b;
	struct sbx_map_rules t[SBX_MAX_MAPS];
	char err[512] = "", *doc;
	uint16_t nb = 0;
	const char *text = HEAD "\"maps\": [" MAP0 ", " MAP1 "]}";

	check(sbx_config_parse(text, &a, err, sizeof(err)) == 0, "two maps parse (%s)", err);
	check(a.nb_maps == 2 && a.maps[0].s.id == 40 && !strcmp(a.maps[0].s.name, "ids") && a.maps[0].nb_rules == 3 &&
		      !a.maps[0].collector && a.maps[0].s.nb_sources == 2 && a.maps[0].s.dst_port == 2 &&
		      a.maps[0].s.encap == SBX_ENCAP_RSPAN && a.maps[0].s.vlan == 7 && !strcmp(a.maps[0].s.filter, "ip"),
	      "maps[0]: the session keys of a mirror, 3 rules");
	check(a.maps[1].collector && a.maps[1].nb_rules == 0 && a.maps[1].s.dst_port == 3, "maps[1]: a collector");
	doc = sbx_config_maps_take(text, t, &nb, err, sizeof(err));
	check(doc != NULL && nb == 2 && t[0].n == 3 && t[1].n == 0 && t[0].rule[0].action == SBX_MAP_DROP,
	      "take: the rule tables out (%s)", err);
	check(doc != NULL && strstr(doc, "873") == NULL && strstr(doc, "\"count\":") != NULL, "take: the document keeps no rule, a count");
	check(doc != NULL && sbx_config_parse(doc, &b, err, sizeof(err)) == 0 && sbx_config_static_diff(&a, &b) == NULL &&
		      b.maps[0].nb_rules == 3 && b.maps[0].rules_digest == a.maps[0].rules_digest,
	      "the document without rules parses to the same config (static_diff equal) (%s)", err);
	free(doc);
	sbx_map_rules_free(&t[0]);
	sbx_map_rules_free(&t[1]);
	{ /* one rule changed: another digest; maps are live (issue #27), not a static section */
		char *t2 = strdup(text), *p = strstr(t2, "\"873\"");

		p[3] = '4';
		check(sbx_config_parse(t2, &b, err, sizeof(err)) == 0 && sbx_config_static_diff(&a, &b) == NULL &&
			      a.maps[0].rules_digest != b.maps[0].rules_digest,
		      "one rule changed (873 -> 874): another digest, and static_diff says nothing (maps are live)");
		free(t2);
	}
	check(sbx_config_parse(HEAD "\"maps\": []}", &b, err, sizeof(err)) == 0 && b.nb_maps == 0, "no map");
}

static void bad(void)
{
	static const struct { const char *maps, *err; } cases[] = {
		{ "[{\"id\": 40, \"sources\": [{\"port\": \"a\"}], \"destination\": {\"port\": \"t\"}, \"rules\": "
		  "[{\"action\": \"pass\"}, {\"action\": \"pass\"}, {\"action\": \"pass\"}, {\"action\": \"pass\", \"dst_port\": 70000}]}]",
		  "maps[0].rules[3].dst_port: 70000 is not a port" },
		{ "[{\"id\": 40, \"sources\": [{\"port\": \"a\"}], \"destination\": {\"port\": \"t\"}, \"colour\": 1}]",
		  "maps[0].colour: unknown key" },
		{ "[{\"id\": 40, \"sources\": [{\"port\": \"a\"}], \"destination\": {\"port\": \"t\"}, \"collector\": true, "
		  "\"rules\": [{\"action\": \"pass\"}]}]",
		  "maps[0].rules: a collector takes the frames no other map passed: it has no rules" },
		{ "[{\"id\": 40, \"sources\": [{\"port\": \"a\"}], \"destination\": {\"port\": \"t\"}}, "
		  "{\"id\": 40, \"sources\": [{\"port\": \"a\"}], \"destination\": {\"port\": \"u\"}}]",
		  "maps[1].id: duplicate session id 40 (see maps[0])" },
		{ "[{\"id\": 40, \"sources\": [{\"port\": \"a\"}], \"destination\": {\"recorder\": {}}}]",
		  "maps[0].destination.recorder: not for a map (a port or a group)" },
		{ "[{\"id\": 40, \"sources\": [{\"port\": \"z\"}], \"destination\": {\"port\": \"t\"}}]",
		  "maps[0].sources[0].port" },
		{ "[{\"id\": 40, \"sources\": [{\"port\": \"a\"}], \"destination\": {\"port\": \"t\"}, \"collector\": 1}]",
		  "maps[0].collector: expected true or false" },
		{ "[{\"id\": 40, \"sources\": [{\"port\": \"a\"}], \"destination\": {\"port\": \"t\"}, \"rules\": {\"count\": 2}}]",
		  "maps[0].rules.digest: 16 lowercase hex digits" },
		{ "{}", "maps: expected an array" },
	};
	struct sbx_config c;
	char text[2048], err[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), HEAD "\"maps\": %s}", cases[i].maps);
		err[0] = '\0';
		check(sbx_config_parse(text, &c, err, sizeof(err)) == -1 && strstr(err, cases[i].err) == err,
		      "refused naming the field: %s (got: %s)", cases[i].err, err);
	}
}

/* A file whose rules make it larger than 64 KiB fits the memzone without them; one padded with
 * spaces does not. */
static void sizes(void)
{
	size_t cap = 200000, n;
	char *t = malloc(cap), *pad = malloc(80000);

	n = (size_t)snprintf(t, cap, HEAD "\"maps\": [{\"id\": 40, \"sources\": [{\"port\": \"a\"}], \"destination\": {\"port\": \"t\"}, \"rules\": [");
	for (int i = 0; i < 3000; i++)
		n += (size_t)snprintf(t + n, cap - n, "%s{\"action\": \"pass\", \"dst_port\": %d}", i ? ", " : "", i);
	snprintf(t + n, cap - n, "]}]}");
	check(strlen(t) > 65536 && sbx_config_maps_fits(t, 65535), "a %zu-byte document fits 64 KiB without its rules", strlen(t));
	memset(pad, ' ', 79999);
	pad[79999] = '\0';
	snprintf(t, cap, HEAD "\"maps\": [] %s}", pad);
	check(!sbx_config_maps_fits(t, 65535), "a document of spaces and no rule array does not");
	{ /* the memzone stores each map's rules as their summary: the size that counts is with it */
		struct sbx_map_rules tables[SBX_MAX_MAPS];
		uint16_t nb = 0;
		char err[256] = "", *stored;
		size_t len;

		snprintf(t, cap, HEAD "\"maps\": [{\"id\": 40, \"sources\": [{\"port\": \"a\"}], "
			 "\"destination\": {\"port\": \"t\"}, \"rules\": [{\"action\": \"pass\"}]}]}");
		stored = sbx_config_maps_take(t, tables, &nb, err, sizeof(err));
		len = stored ? strlen(stored) : 0;
		check(stored != NULL && sbx_config_maps_fits(t, len) && !sbx_config_maps_fits(t, len - 1),
		      "fits measures the document as the memzone stores it (%zu bytes, rules summarised) (%s)", len, err);
		while (nb > 0)
			sbx_map_rules_free(&tables[--nb]);
		free(stored);
	}
	free(t);
	free(pad);
}

/* @p nb maps (issue #27 "Scale"), map k: 2 sources (a both ways, b rx), destination t or u, one rule
 * passing UDP destination port 10000 + k, a name; into @p t (malloc'd). @return its length */
static size_t many_maps(char *t, size_t cap, int nb)
{
	size_t n = (size_t)snprintf(t, cap, HEAD "\"maps\": [");

	for (int k = 0; k < nb && n < cap; k++)
		n += (size_t)snprintf(t + n, cap - n,
				      "%s{\"id\": %d, \"name\": \"map-%03d\", \"sources\": [{\"port\": \"a\"}, "
				      "{\"port\": \"b\", \"direction\": \"rx\"}], \"destination\": {\"port\": \"%s\"}, "
				      "\"rules\": [{\"action\": \"pass\", \"ip_proto\": 17, \"dst_port\": %d}]}",
				      k ? ", " : "", 100 + k, k, k % 2 ? "u" : "t", 10000 + k);
	if (n < cap)
		n += (size_t)snprintf(t + n, cap - n, "]}");
	return n;
}

/* 256 maps are accepted, each with its sources, destination and rule; 257 are refused naming
 * "maps"; the document the memzone keeps of 256 maps (rules summarised) fits SBX_TABLES_JSON_MAX. */
static void scale(void)
{
	static struct sbx_config c;
	static struct sbx_map_rules tables[SBX_MAX_MAPS];
	size_t cap = 1 << 20;
	char *t = malloc(cap), err[512] = "", *stored;
	uint16_t nb = 0;
	bool each = true;

	check(SBX_MAX_MAPS == 256, "SBX_MAX_MAPS is 256 (%d)", SBX_MAX_MAPS);
	many_maps(t, cap, 256);
	check(sbx_config_parse(t, &c, err, sizeof(err)) == 0 && c.nb_maps == 256, "256 maps are accepted (%s)", err);
	for (int k = 0; k < 256 && c.nb_maps == 256; k++)
		each = each && c.maps[k].s.id == 100 + k && c.maps[k].nb_rules == 1 && c.maps[k].s.nb_sources == 2 &&
		       c.maps[k].s.dst_port == (k % 2 ? 3 : 2);
	check(c.nb_maps == 256 && each, "each of the 256 maps: its id, 2 sources, its destination, 1 rule");
	stored = sbx_config_maps_take(t, tables, &nb, err, sizeof(err));
	check(stored != NULL && nb == 256 && tables[255].n == 1 && tables[255].rule[0].f[SBX_MF_DPORT].value == 10255,
	      "take: 256 rule tables, map 255's rule passes port 10255 (%s)", err);
	check(stored != NULL && strlen(stored) + 1 <= SBX_TABLES_JSON_MAX,
	      "the memzone's document of 256 maps (2 sources, a destination, rules summarised): %zu bytes, "
	      "fits SBX_TABLES_JSON_MAX (%d)", stored ? strlen(stored) : 0, SBX_TABLES_JSON_MAX);
	while (nb > 0)
		sbx_map_rules_free(&tables[--nb]);
	free(stored);
	many_maps(t, cap, 257);
	err[0] = '\0';
	check(sbx_config_parse(t, &c, err, sizeof(err)) == -1 && strncmp(err, "maps:", 5) == 0 &&
		      strstr(err, "257") != NULL && strstr(err, "256") != NULL,
	      "257 maps are refused naming maps (%s)", err);
	free(t);
}

int main(void)
{
	good();
	bad();
	sizes();
	scale();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
