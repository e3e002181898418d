/* SPDX-License-Identifier: BSD-3-Clause */
/* RSS fields, keys and redirection tables (rss.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "spanbox/rss.h"

void sbx_rss_symmetric_key(uint8_t *key, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		key[i] = (i & 1) ? 0x5a : 0x6d;
}

bool sbx_rss_key_is_symmetric(const uint8_t *key, size_t len)
{
	size_t i;

	if (len < 2)
		return false;
	for (i = 2; i < len; i++)
		if (key[i] != key[i - 2])
			return false;
	return true;
}

int sbx_rss_key_parse(const char *hex, uint8_t key[SBX_RSS_KEY_MAX])
{
	int n = 0;

	while (*hex != '\0') {
		unsigned int v;

		if (*hex == ':') {
			hex++;
			continue;
		}
		if (!isxdigit((unsigned char)hex[0]) || !isxdigit((unsigned char)hex[1]) || n == SBX_RSS_KEY_MAX)
			return -1;
		if (sscanf(hex, "%2x", &v) != 1)
			return -1;
		key[n++] = (uint8_t)v;
		hex += 2;
	}
	return n > 0 ? n : -1;
}

void sbx_rss_key_format(const uint8_t *key, size_t len, char *buf, size_t size)
{
	size_t i;

	if (size == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < len && 2 * i + 2 < size; i++)
		snprintf(buf + 2 * i, size - 2 * i, "%02x", key[i]);
}

uint64_t sbx_rss_hf(uint8_t fields)
{
	uint64_t hf = 0;

	if (fields & SBX_RSS_F_IPV4) {
		hf |= RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_FRAG_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_OTHER;
		if (fields & SBX_RSS_F_TCP)
			hf |= RTE_ETH_RSS_NONFRAG_IPV4_TCP;
		if (fields & SBX_RSS_F_UDP)
			hf |= RTE_ETH_RSS_NONFRAG_IPV4_UDP;
	}
	if (fields & SBX_RSS_F_IPV6) {
		hf |= RTE_ETH_RSS_IPV6 | RTE_ETH_RSS_FRAG_IPV6 | RTE_ETH_RSS_NONFRAG_IPV6_OTHER;
		if (fields & SBX_RSS_F_TCP)
			hf |= RTE_ETH_RSS_NONFRAG_IPV6_TCP;
		if (fields & SBX_RSS_F_UDP)
			hf |= RTE_ETH_RSS_NONFRAG_IPV6_UDP;
	}
	return hf;
}

uint8_t sbx_rss_fields_of_hf(uint64_t hf)
{
	uint8_t f = 0;

	if (hf & (RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_FRAG_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_OTHER |
		  RTE_ETH_RSS_NONFRAG_IPV4_TCP | RTE_ETH_RSS_NONFRAG_IPV4_UDP))
		f |= SBX_RSS_F_IPV4;
	if (hf & (RTE_ETH_RSS_IPV6 | RTE_ETH_RSS_FRAG_IPV6 | RTE_ETH_RSS_NONFRAG_IPV6_OTHER |
		  RTE_ETH_RSS_NONFRAG_IPV6_TCP | RTE_ETH_RSS_NONFRAG_IPV6_UDP))
		f |= SBX_RSS_F_IPV6;
	if (hf & (RTE_ETH_RSS_NONFRAG_IPV4_TCP | RTE_ETH_RSS_NONFRAG_IPV6_TCP))
		f |= SBX_RSS_F_TCP;
	if (hf & (RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_NONFRAG_IPV6_UDP))
		f |= SBX_RSS_F_UDP;
	return f;
}

const char *sbx_rss_field_name(uint8_t bit)
{
	switch (bit) {
	case SBX_RSS_F_IPV4: return "ipv4";
	case SBX_RSS_F_IPV6: return "ipv6";
	case SBX_RSS_F_TCP: return "tcp";
	case SBX_RSS_F_UDP: return "udp";
	default: return NULL;
	}
}

void sbx_rss_reta_spread(uint16_t *reta, uint16_t size, uint16_t nb_queues)
{
	uint16_t i;

	for (i = 0; i < size; i++)
		reta[i] = nb_queues > 0 ? (uint16_t)(i % nb_queues) : 0;
}
