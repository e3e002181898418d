/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where the hardware is (NOTES sections 2 and 3): the NUMA socket of every port, lcore and pool,
 * a warning for each pair that is remote, and the decoded PCIe path of every PCI port. All of it
 * runs once at start, before the pools are created, and is kept in the memzone for the API.
 *
 * Test hook: SBX_TEST_PORT_SOCKET="p1=1[,p2=0...]" in the primary's environment makes it pretend
 * that port p1 is on socket 1 (this test machine has one socket). The pretended socket is used for
 * planning and warnings only: queues are still set up where the device really is.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "spanbox/hostinfo.h"
#include "spanbox/pcie.h"
#include "spanbox/pcie_json.h"
#include "primary.h"

#define TEST_HOOK "SBX_TEST_PORT_SOCKET"

void sbx_warn(struct sbx_primary *p, const char *kind, const char *fmt, ...)
{
	struct sbx_shm *shm = p->shm;
	char text[SBX_WARN_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	printf("spanbox-primary: warning: %s\n", text);
	if (shm->nb_warnings >= SBX_MAX_WARNINGS) {
		shm->warnings_dropped++;
		return;
	}
	snprintf(shm->warnings[shm->nb_warnings].kind, sizeof(shm->warnings[0].kind), "%s", kind);
	memcpy(shm->warnings[shm->nb_warnings].text, text, sizeof(text));
	shm->nb_warnings++;
}

/* Apply SBX_TEST_PORT_SOCKET to shm ports[].numa_socket. @return 0 or -2 (message printed). */
static int apply_test_hook(struct sbx_primary *p)
{
	const char *env = getenv(TEST_HOOK);
	char buf[512], *save = NULL, *item;

	if (env == NULL || env[0] == '\0')
		return 0;
	if (strlen(env) >= sizeof(buf)) {
		fprintf(stderr, "spanbox-primary: %s: too long\n", TEST_HOOK);
		return -2;
	}
	snprintf(buf, sizeof(buf), "%s", env);
	for (item = strtok_r(buf, ",", &save); item != NULL; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '='), *end;
		long s;
		int i;

		if (eq == NULL || eq == item || !isdigit((unsigned char)eq[1])) {
			fprintf(stderr, "spanbox-primary: %s: \"%s\" is not PORT=SOCKET\n", TEST_HOOK, item);
			return -2;
		}
		*eq = '\0';
		s = strtol(eq + 1, &end, 10);
		if (*end != '\0' || s < 0 || s >= RTE_MAX_NUMA_NODES) {
			fprintf(stderr, "spanbox-primary: %s: socket \"%s\" of %s is not 0..%d\n", TEST_HOOK, eq + 1,
				item, RTE_MAX_NUMA_NODES - 1);
			return -2;
		}
		i = sbx_config_port_index(p->cfg, item);
		if (i < 0) {
			fprintf(stderr, "spanbox-primary: %s: no port \"%s\"\n", TEST_HOOK, item);
			return -2;
		}
		p->shm->ports[i].numa_socket = (int32_t)s;
		p->shm->ports[i].socket_from_hook = 1;
		printf("spanbox-primary: test hook %s: port %s is taken to be on socket %ld (the device says %d)\n",
		       TEST_HOOK, item, s, p->shm->ports[i].socket_id);
	}
	return 0;
}

/* Text for a socket value of an lcore: "socket 0", "sockets 0,1", "socket unknown". */
static const char *lcore_socket_text(const struct sbx_lcore_shm *l, char *buf, size_t len)
{
	if (l->socket >= 0)
		snprintf(buf, len, "socket %d", l->socket);
	else if (l->socket == SBX_SOCKET_MIXED)
		snprintf(buf, len, "sockets %s", l->nodes);
	else
		snprintf(buf, len, "socket unknown");
	return buf;
}

/* The CPU set (canonical list into @p cpus) and NUMA socket of one lcore on the CPUs @p list;
 * the socket's nodes as a list into @p nodes. */
static int lcore_place(const char *list, char *cpus, size_t cpus_len, char *nodes, size_t nodes_len)
{
	struct sbx_cpuset set;
	int socket;

	if (sbx_cpulist_parse(list, &set) < 0)
		memset(&set, 0, sizeof(set));
	sbx_cpulist_format(&set, cpus, cpus_len);
	socket = sbx_cpuset_socket(&set, nodes, nodes_len);
	if (socket == SBX_SOCKET_UNKNOWN) { /* no NUMA information: one socket */
		socket = 0;
		snprintf(nodes, nodes_len, "0");
	}
	return socket;
}

/*
 * Fill shm lcores[]: primary, mgmt, then every worker. The primary and mgmt on the housekeeping
 * CPUs (eal.housekeeping_cpus: eal.cpus unless workers are pinned), a worker on its own CPU
 * (workers.cpus) or, without workers.cpus, floating on eal.cpus as the others.
 */
static void lcores_setup(struct sbx_primary *p)
{
	const struct sbx_config *cfg = p->cfg;
	struct sbx_shm *shm = p->shm;
	char sbuf[48], one[8];
	uint16_t w;

	shm->nb_lcores = 0;
	for (w = 0; w < cfg->nb_workers + 2 && w < SBX_MAX_LCORES; w++) {
		struct sbx_lcore_shm *l = &shm->lcores[shm->nb_lcores++];
		const char *list = cfg->housekeeping_cpus[0] != '\0' ? cfg->housekeeping_cpus : cfg->cpus;

		l->worker = (int16_t)(w >= 2 ? w - 2 : -1);
		l->lcore_id = w == 0 ? cfg->primary_lcore : w == 1 ? cfg->mgmt_lcore : cfg->workers[w - 2].lcore_id;
		snprintf(l->role, sizeof(l->role), "%s", w == 0 ? "primary" : w == 1 ? "mgmt" : "worker");
		if (w >= 2 && cfg->workers[w - 2].cpu >= 0) {
			snprintf(one, sizeof(one), "%d", cfg->workers[w - 2].cpu);
			list = one;
		} else if (w >= 2) {
			list = cfg->cpus;
		}
		l->socket = lcore_place(list, l->cpus, sizeof(l->cpus), l->nodes, sizeof(l->nodes));
	}
	if (!cfg->pinned) {
		printf("spanbox-primary: lcores: primary %u, mgmt %u, workers", cfg->primary_lcore, cfg->mgmt_lcore);
		for (w = 0; w < cfg->nb_workers; w++)
			printf(" %u", cfg->workers[w].lcore_id);
		printf(": all float on CPUs %s (%s)\n", cfg->cpus, lcore_socket_text(&shm->lcores[0], sbuf, sizeof(sbuf)));
		return;
	}
	printf("spanbox-primary: lcores: primary %u and mgmt %u on housekeeping CPUs %s (%s); workers pinned:",
	       cfg->primary_lcore, cfg->mgmt_lcore, cfg->housekeeping_cpus,
	       lcore_socket_text(&shm->lcores[0], sbuf, sizeof(sbuf)));
	for (w = 0; w < cfg->nb_workers && w + 2 < SBX_MAX_LCORES; w++)
		printf(" %u on CPU %d (socket %d)", cfg->workers[w].lcore_id, cfg->workers[w].cpu, shm->lcores[w + 2].socket);
	printf("\n");
}

/*
 * Can socket @p s hold a pool? EAL's heap has memory there, or the node has hugepages EAL can
 * add. Writes why not into @p why.
 */
static bool socket_has_memory(int s, char *why, size_t len)
{
	struct rte_malloc_socket_stats st;
	struct sbx_hugepages h[SBX_MAX_HUGE_SIZES * (SBX_MAX_NODES + 1)];
	int nodes[SBX_MAX_NODES], nn = sbx_numa_nodes(nodes, SBX_MAX_NODES), n, i;
	bool node_exists = nn == 0 ? s == 0 : false;

	for (i = 0; i < nn; i++)
		node_exists |= nodes[i] == s;
	if (!node_exists) {
		snprintf(why, len, "this machine has no NUMA node %d", s);
		return false;
	}
	if (rte_malloc_get_socket_stats(s, &st) == 0 && st.heap_totalsz_bytes > 0)
		return true;
	n = sbx_hugepages_read(h, (int)RTE_DIM(h));
	for (i = 0; i < n; i++)
		if ((h[i].node == s || (nn == 0 && h[i].node == -1)) && h[i].nr > 0)
			return true;
	snprintf(why, len, "node %d has no hugepages", s);
	return false;
}

/* The worker polling queue(s) of port @p port: bit w set for worker w. */
static uint32_t pollers(const struct sbx_shm *shm, uint16_t port)
{
	uint32_t mask = 0;
	uint16_t w, q;

	for (w = 0; w < shm->cfg.nb_workers; w++)
		for (q = 0; q < shm->placement[w].nb_rxq; q++)
			if (shm->placement[w].rxq[q].port == port)
				mask |= 1u << w;
	return mask;
}

int sbx_numa_setup(struct sbx_primary *p)
{
	const struct sbx_config *cfg = p->cfg;
	struct sbx_shm *shm = p->shm;
	char why[RTE_MAX_NUMA_NODES][96], pool[SBX_NAME_LEN], sbuf[48];
	bool mem_checked[RTE_MAX_NUMA_NODES] = { false }, has_mem[RTE_MAX_NUMA_NODES] = { false };
	uint32_t worker_pools[SBX_MAX_WORKERS] = { 0 }; /* bit s: worker w takes mbufs from pool s */
	uint16_t i, w;
	int rc;

	for (i = 0; i < cfg->nb_ports; i++) {
		shm->ports[i].numa_socket = shm->ports[i].socket_id;
		shm->ports[i].socket_from_hook = 0;
	}
	rc = apply_test_hook(p);
	if (rc != 0)
		return rc;
	lcores_setup(p);
	/* pools for ports on sockets without memory, and for the primary's own allocations */
	p->fallback_socket = shm->lcores[0].socket >= 0 ? shm->lcores[0].socket : 0;
	if (p->fallback_socket >= RTE_MAX_NUMA_NODES)
		p->fallback_socket = 0;
	for (i = 0; i < cfg->nb_ports; i++) {
		struct sbx_port_shm *ps = &shm->ports[i];
		int s = ps->numa_socket >= 0 && ps->numa_socket < RTE_MAX_NUMA_NODES ? ps->numa_socket
										      : p->fallback_socket;

		if (!mem_checked[s]) {
			has_mem[s] = socket_has_memory(s, why[s], sizeof(why[s]));
			mem_checked[s] = true;
		}
		ps->pool_socket = has_mem[s] ? s : p->fallback_socket;
		printf("spanbox-primary: port %s: socket %d%s, pool on socket %d\n", cfg->ports[i].name,
		       ps->numa_socket, ps->numa_socket < 0 ? " (unknown: the device does not say)" :
		       ps->socket_from_hook ? " (test hook)" : "", ps->pool_socket);
	}

	/* remote pairs: port-pool, port-worker, worker-pool */
	for (i = 0; i < cfg->nb_ports; i++) {
		const struct sbx_port_shm *ps = &shm->ports[i];
		uint32_t mask = pollers(p->shm, i);

		sbx_pool_name(ps->pool_socket, pool, sizeof(pool));
		if (ps->numa_socket >= 0 && ps->pool_socket != ps->numa_socket)
			sbx_warn(p, "numa", "pool %s (socket %d) serves port %s (socket %d): %s", pool,
				 ps->pool_socket, cfg->ports[i].name, ps->numa_socket,
				 ps->numa_socket < RTE_MAX_NUMA_NODES && mem_checked[ps->numa_socket]
					 ? why[ps->numa_socket] : "no pool there");
		for (w = 0; w < cfg->nb_workers; w++) {
			const struct sbx_lcore_shm *l = &shm->lcores[w + 2];

			if (!(mask & (1u << w)))
				continue;
			worker_pools[w] |= 1u << ps->pool_socket;
			if (ps->numa_socket >= 0 && l->socket >= 0 && l->socket != ps->numa_socket)
				sbx_warn(p, "numa", "port %s (socket %d) polled by worker %u on lcore %u (socket %d)",
					 cfg->ports[i].name, ps->numa_socket, w, l->lcore_id, l->socket);
		}
	}
	for (w = 0; w < cfg->nb_workers; w++) {
		const struct sbx_lcore_shm *l = &shm->lcores[w + 2];
		int s;

		if (l->socket == SBX_SOCKET_MIXED && shm->placement[w].nb_rxq > 0)
			sbx_warn(p, "numa", "worker %u on lcore %u floats on CPUs %s of %s: its ports and pools are"
				 " remote whenever it runs on the other socket (give eal.cpus one socket's CPUs)",
				 w, l->lcore_id, l->cpus, lcore_socket_text(l, sbuf, sizeof(sbuf)));
		if (l->socket < 0)
			continue;
		for (s = 0; s < RTE_MAX_NUMA_NODES && s < 32; s++) {
			if (!(worker_pools[w] & (1u << s)) || s == l->socket)
				continue;
			sbx_pool_name(s, pool, sizeof(pool));
			sbx_warn(p, "numa", "worker %u on lcore %u (socket %d) takes mbufs from pool %s (socket %d)",
				 w, l->lcore_id, l->socket, pool, s);
		}
	}
	return 0;
}

void sbx_pcie_log(struct sbx_primary *p)
{
	static struct sbx_pcie_info chain[SBX_PCIE_MAX_CHAIN];
	char warn[32][SBX_PCIE_WARN_LEN], err[512], bdf[SBX_PCIE_BDF_LEN], prefix[64];
	uint16_t i;
	int n, nw, k;

	for (i = 0; i < p->cfg->nb_ports; i++) {
		const struct sbx_port_cfg *pc = &p->cfg->ports[i];

		if (!pc->is_pci)
			continue;
		if (!sbx_pcie_devargs_bdf(pc->devargs, bdf)) {
			sbx_warn(p, "pcie", "port %s: %s is not a PCI address spanbox can decode", pc->name, pc->devargs);
			continue;
		}
		n = sbx_pcie_path(bdf, chain, SBX_PCIE_MAX_CHAIN, err, sizeof(err));
		if (n < 0) {
			sbx_warn(p, "pcie", "port %s: PCIe path not decoded: %s", pc->name, err);
			continue;
		}
		snprintf(prefix, sizeof(prefix), "spanbox-primary: pcie: port %s: ", pc->name);
		for (k = 0; k < n; k++)
			sbx_pcie_print(stdout, prefix, &chain[k], k > 0);
		nw = sbx_pcie_warnings(chain, n, warn, (int)RTE_DIM(warn));
		for (k = 0; k < nw; k++)
			sbx_warn(p, "pcie", "port %s: %s", pc->name, warn[k]);
		if (nw == 0)
			printf("%sno warning\n", prefix);
	}
}
