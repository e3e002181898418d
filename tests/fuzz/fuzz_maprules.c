/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: map rules (shared/maprules.c, docs/MAPS.md). Byte 0 even: the rest is the JSON
 * text of a rules array for sbx_map_rules_parse() (a refusal must name "rules..."; a table taken
 * goes through the shadow check, whose reports must point to an earlier covering rule). Byte 0 odd:
 * the rest is a frame, read by sbx_map_key_extract() from a heap copy of exactly its length; the
 * key's flags must be consistent (ports and TCP flags only on IP that is not a later fragment,
 * IPv6 only with IP, an inner tag only with an outer one) and, against a fixed table, a rule that
 * covers another must match every key the other matches (sbx_map_rule_covers vs
 * sbx_map_rule_match). Seeds: tests/fuzz/seeds.py (the unit test's rules, the captures' frames).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <cjson/cJSON.h>

#include <spanbox/maprules.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

static const char fixed[] =
	"[{\"action\":\"pass\",\"src\":\"10.0.0.0/8\"},{\"action\":\"drop\",\"src\":\"10.1.0.0/16\",\"dst_port\":\"80-90\"},"
	"{\"action\":\"pass\",\"dst_port\":\"1-1023\"},{\"action\":\"pass\",\"dst_port\":22,\"ip_proto\":6},"
	"{\"action\":\"pass\",\"src\":\"2001:db8::/32\",\"fragment\":\"first\"},{\"action\":\"pass\",\"ip_proto\":17},"
	"{\"action\":\"pass\",\"vlan\":\"10-20\"},{\"action\":\"pass\",\"vlan\":15,\"inner_vlan\":\"0-4095\"},"
	"{\"action\":\"pass\",\"tcp_flags\":\"0x02/0x12\"},{\"action\":\"pass\",\"src_mac\":\"02:00:00:00:00:00/ff:00:00:00:00:00\"},"
	"{\"action\":\"pass\",\"ethertype\":\"0x0806\"},{\"action\":\"pass\",\"dscp\":46,\"fragment\":\"none\"}]";

static void frame(const uint8_t *data, size_t len)
{
	static struct sbx_map_rules rules;
	struct sbx_map_key k;
	uint8_t *f = malloc(len ? len : 1);
	char err[256];
	uint32_t i, j;

	if (rules.n == 0) {
		cJSON *j = cJSON_Parse(fixed);

		if (sbx_map_rules_parse(j, "rules", &rules, err, sizeof(err)) != 0)
			abort();
		cJSON_Delete(j);
	}
	if (f == NULL)
		return;
	memcpy(f, data, len);
	sbx_map_key_extract(f, (uint32_t)len, &k);
	free(f);
	if (((k.flags & (SBX_MAPK_PORTS | SBX_MAPK_TCPF | SBX_MAPK_IP6 | SBX_MAPK_FRAG_FIRST | SBX_MAPK_FRAG_LATER)) &&
	     !(k.flags & SBX_MAPK_IP)) ||
	    ((k.flags & SBX_MAPK_FRAG_LATER) && (k.flags & (SBX_MAPK_PORTS | SBX_MAPK_TCPF | SBX_MAPK_FRAG_FIRST))) ||
	    ((k.flags & SBX_MAPK_IVLAN) && !(k.flags & SBX_MAPK_VLAN)) || k.dscp > 63 || ntohs(k.tcp_flags) > 255 ||
	    ntohs(k.outer_vlan) > 4095 || ntohs(k.inner_vlan) > 4095 || (!(k.flags & SBX_MAPK_IP) && k.proto != 0))
		abort();
	for (i = 0; i < rules.n; i++)
		for (j = 0; j < rules.n; j++)
			if (sbx_map_rule_covers(&rules.rule[i], &rules.rule[j]) && sbx_map_rule_match(&rules.rule[j], &k) &&
			    !sbx_map_rule_match(&rules.rule[i], &k))
				abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct sbx_map_shadow sh[16];
	struct sbx_map_rules r;
	char err[256] = "", *text;
	cJSON *j;
	size_t n, i;

	if (len == 0)
		return 0;
	if (data[0] & 1) {
		frame(data + 1, len - 1);
		return 0;
	}
	text = malloc(len);
	if (text == NULL)
		return 0;
	memcpy(text, data + 1, len - 1);
	text[len - 1] = '\0';
	j = cJSON_Parse(text);
	free(text);
	if (j == NULL)
		return 0;
	if (sbx_map_rules_parse(j, "rules", &r, err, sizeof(err)) != 0) {
		if (strncmp(err, "rules", 5) != 0 || r.rule != NULL || r.n != 0)
			abort();
	} else {
		n = sbx_map_rules_shadowed(&r, sh, 16);
		for (i = 0; i < n && i < 16; i++)
			if (sh[i].by >= sh[i].rule || sh[i].rule >= r.n ||
			    !sbx_map_rule_covers(&r.rule[sh[i].by], &r.rule[sh[i].rule]))
				abort();
		sbx_map_rules_free(&r);
	}
	cJSON_Delete(j);
	return 0;
}
