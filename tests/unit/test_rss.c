/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of shared/rss.c (issue #25, RSS): the symmetric key gives the same Toeplitz hash for
 * both directions of 10,000 random IPv4 and 10,000 random IPv6 flows, computed with DPDK's own
 * rte_softrss() (rte_thash.h) against the key as configured; the Microsoft key of the RSS
 * specification does not (the check can fail); key parsing and formatting; the hash fields; the
 * RETA spread. No EAL. TAP on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_thash.h>

#include "spanbox/rss.h"
#include "tap.h"

/* The Microsoft RSS verification key (40 bytes), the default of many NICs. */
static const uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static uint32_t rnd(void)
{
	return ((uint32_t)rand() << 16) ^ (uint32_t)rand();
}

/* Flows (of n) whose two directions hash apart with @p key: IPv4 (v6 false) or IPv6 4-tuples. */
static unsigned int asymmetric_flows(const uint8_t *key, bool v6, unsigned int n)
{
	unsigned int i, bad = 0;

	for (i = 0; i < n; i++) {
		if (!v6) {
			struct rte_ipv4_tuple a = { .src_addr = rnd(), .dst_addr = rnd(), .sport = (uint16_t)rnd(),
						    .dport = (uint16_t)rnd() };
			struct rte_ipv4_tuple b = { .src_addr = a.dst_addr, .dst_addr = a.src_addr, .sport = a.dport,
						    .dport = a.sport };

			bad += rte_softrss((uint32_t *)&a, RTE_THASH_V4_L4_LEN, key) !=
			       rte_softrss((uint32_t *)&b, RTE_THASH_V4_L4_LEN, key);
		} else {
			struct rte_ipv6_tuple a, b;
			int k;

			for (k = 0; k < 16; k++) {
				a.src_addr[k] = (uint8_t)rnd();
				a.dst_addr[k] = (uint8_t)rnd();
			}
			a.sport = (uint16_t)rnd();
			a.dport = (uint16_t)rnd();
			memcpy(b.src_addr, a.dst_addr, 16);
			memcpy(b.dst_addr, a.src_addr, 16);
			b.sport = a.dport;
			b.dport = a.sport;
			/* rte_softrss() takes the tuple as host-order 32-bit words */
			{
				uint32_t wa[RTE_THASH_V6_L4_LEN], wb[RTE_THASH_V6_L4_LEN];

				for (k = 0; k < 8; k++) {
					wa[k] = rte_be_to_cpu_32(((const uint32_t *)a.src_addr)[k]);
					wb[k] = rte_be_to_cpu_32(((const uint32_t *)b.src_addr)[k]);
				}
				wa[8] = ((uint32_t)a.sport << 16) | a.dport;
				wb[8] = ((uint32_t)b.sport << 16) | b.dport;
				bad += rte_softrss(wa, RTE_THASH_V6_L4_LEN, key) != rte_softrss(wb, RTE_THASH_V6_L4_LEN, key);
			}
		}
	}
	return bad;
}

int main(void)
{
	uint8_t key[SBX_RSS_KEY_MAX], parsed[SBX_RSS_KEY_MAX];
	char hex[2 * SBX_RSS_KEY_MAX + 8];
	uint16_t reta[128];
	unsigned int bad;
	int n, i, ok;

	srand(25);
	sbx_rss_symmetric_key(key, 52);
	check(key[0] == 0x6d && key[1] == 0x5a && key[38] == 0x6d && key[39] == 0x5a, "the symmetric key is 0x6d5a repeated");
	check(sbx_rss_key_is_symmetric(key, 40) && sbx_rss_key_is_symmetric(key, 52), "... and says so (40 and 52 bytes)");
	check(!sbx_rss_key_is_symmetric(ms_key, 40), "the Microsoft key is not symmetric");
	bad = asymmetric_flows(key, false, 10000);
	check(bad == 0, "symmetric key: 10,000 random IPv4 flows hash alike both ways (rte_softrss): %u differ", bad);
	bad = asymmetric_flows(key, true, 10000);
	check(bad == 0, "symmetric key: 10,000 random IPv6 flows hash alike both ways (rte_softrss): %u differ", bad);
	bad = asymmetric_flows(ms_key, false, 10000);
	check(bad > 9900, "the Microsoft key: the directions of %u of 10,000 IPv4 flows hash apart", bad);

	sbx_rss_key_format(ms_key, 40, hex, sizeof(hex));
	check(strcmp(hex, "6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa") == 0,
	      "key formatted as hex: %s", hex);
	n = sbx_rss_key_parse(hex, parsed);
	check(n == 40 && memcmp(parsed, ms_key, 40) == 0, "... and parsed back (40 bytes)");
	check(sbx_rss_key_parse("6d:5a:6D:5A", parsed) == 4 && parsed[2] == 0x6d, "colons and upper case");
	check(sbx_rss_key_parse("6d5", parsed) < 0 && sbx_rss_key_parse("zz", parsed) < 0 && sbx_rss_key_parse("", parsed) < 0,
	      "half a byte, not hex, empty: refused");
	memset(hex, 'a', 2 * SBX_RSS_KEY_MAX + 2);
	hex[2 * SBX_RSS_KEY_MAX] = '\0';
	check(sbx_rss_key_parse(hex, parsed) == SBX_RSS_KEY_MAX, "%d bytes: taken", SBX_RSS_KEY_MAX);
	hex[2 * SBX_RSS_KEY_MAX] = 'a';
	hex[2 * SBX_RSS_KEY_MAX + 2] = '\0';
	check(sbx_rss_key_parse(hex, parsed) < 0, "%d bytes: refused", SBX_RSS_KEY_MAX + 1);

	check(sbx_rss_hf(SBX_RSS_F_IPV4) == (RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_FRAG_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_OTHER),
	      "ipv4: addresses of every IPv4 frame");
	check(sbx_rss_hf(SBX_RSS_F_IPV4 | SBX_RSS_F_TCP) & RTE_ETH_RSS_NONFRAG_IPV4_TCP &&
	      !(sbx_rss_hf(SBX_RSS_F_IPV4 | SBX_RSS_F_TCP) & RTE_ETH_RSS_NONFRAG_IPV6_TCP), "tcp with ipv4 only: IPv4 TCP ports");
	for (i = 0, ok = 1; i < 16; i++)
		ok &= sbx_rss_fields_of_hf(sbx_rss_hf((uint8_t)i)) == ((i & 3) ? i : 0);
	check(ok, "fields -> rss_hf -> fields round trip (ports only with an IP version)");
	sbx_rss_reta_spread(reta, 128, 3);
	check(reta[0] == 0 && reta[1] == 1 && reta[2] == 2 && reta[3] == 0 && reta[127] == 127 % 3, "RETA spread over 3 queues");
	printf("1..%d\n", tests);
	return failures != 0;
}
