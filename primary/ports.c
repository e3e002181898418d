/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ports: every port is probed, configured and started by the primary. Ethdev ports get one RX queue
 * per polling worker and one TX queue per worker (so no TX queue is shared by two cores). pcap
 * ports are "bridged": the primary reads and writes their files (pcap_port.c; the net_pcap PMD
 * cannot be shared with secondaries, docs/PCAP_SECONDARY.md) and exchanges mbuf pointers with the
 * workers through rte_rings (no copy).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_ring.h>

#include "netns_link.h"
#include "primary.h"

/* The ethdev name of a port: devargs up to the first ','. */
static void devname(const struct sbx_port_cfg *pc, char *buf, size_t len)
{
	size_t n = strcspn(pc->devargs, ",");

	if (n >= len)
		n = len - 1;
	memcpy(buf, pc->devargs, n);
	buf[n] = '\0';
}

/*
 * net_tap needs as many RX as TX queues, and a mirror destination has two TX queues per worker:
 * add the missing RX queues and have the workers poll them too (queue q goes to worker q % n),
 * so no frame the kernel puts on an extra queue is stranded. Written into the placement (shm.h
 * struct sbx_worker_rxqs); the config stays as parsed.
 */
static void equalize_rxq(struct sbx_primary *p, uint16_t i)
{
	const struct sbx_config *cfg = p->cfg;
	struct sbx_port_shm *ps = &p->shm->ports[i];
	uint16_t q;

	for (q = ps->nb_rxq; q < ps->nb_txq; q++) {
		struct sbx_worker_rxqs *wc = &p->shm->placement[q % cfg->nb_workers];

		if (wc->nb_rxq < SBX_MAX_RXQ_PER_WORKER)
			wc->rxq[wc->nb_rxq++] = (struct sbx_rxq_cfg){ .port = i, .queue = q };
	}
	ps->nb_rxq = ps->nb_txq;
}

int sbx_ports_lookup(struct sbx_primary *p)
{
	const struct sbx_config *cfg = p->cfg;
	uint16_t i;

	for (i = 0; i < cfg->nb_ports; i++) {
		char name[SBX_DEVARGS_LEN], err[SBX_DEVARGS_LEN + 128];
		struct rte_eth_dev_info info;
		uint16_t pid;

		p->shm->ports[i].nb_rxq = sbx_config_port_nb_rxq(cfg, i);
		p->shm->ports[i].nb_txq = sbx_config_port_nb_txq(cfg, i);
		if (cfg->ports[i].kind == SBX_PORT_PCAP_FILE) {
			p->shm->ports[i].port_id = RTE_MAX_ETHPORTS; /* not an ethdev */
			p->shm->ports[i].socket_id = (int32_t)rte_socket_id();
			if (sbx_pcap_port_open(&p->pcap[i], cfg->ports[i].devargs, err, sizeof(err)) != 0) {
				fprintf(stderr, "spanbox-primary: ports[%u].devargs: %s\n", i, err);
				return -2; /* the config names a file that cannot be used: a refusal */
			}
			continue;
		}
		devname(&cfg->ports[i], name, sizeof(name));
		if (rte_eth_dev_get_port_by_name(name, &pid) != 0) {
			fprintf(stderr, "spanbox-primary: ports[%u] (%s): device %s was not probed by EAL\n",
				i, cfg->ports[i].name, name);
			return -1;
		}
		p->shm->ports[i].port_id = pid;
		p->shm->ports[i].socket_id = rte_eth_dev_socket_id(pid);
		if (rte_eth_dev_info_get(pid, &info) == 0 && strcmp(info.driver_name, "net_tap") == 0 &&
		    p->shm->ports[i].nb_rxq < p->shm->ports[i].nb_txq)
			equalize_rxq(p, i);
	}
	return 0;
}

/* Create the rings of bridged port i: one RX ring per polled queue, one TX ring per worker. */
static int bridge_rings_create(struct sbx_primary *p, uint16_t i, int socket)
{
	struct sbx_port_shm *ps = &p->shm->ports[i];
	uint16_t q;

	for (q = 0; q < ps->nb_rxq; q++) {
		snprintf(ps->rx_ring[q], SBX_NAME_LEN, "sbx_rx_%u_%u", i, q);
		/* single producer (primary), single consumer (the one worker polling queue q) */
		p->rx_ring[i][q] = rte_ring_create(ps->rx_ring[q], SBX_BRIDGE_RING_SIZE, socket,
						   RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (p->rx_ring[i][q] == NULL)
			return -1;
	}
	for (q = 0; q < ps->nb_txq; q++) {
		snprintf(ps->tx_ring[q], SBX_NAME_LEN, "sbx_tx_%u_%u", i, q);
		p->tx_ring[i][q] = rte_ring_create(ps->tx_ring[q], SBX_BRIDGE_RING_SIZE, socket,
						   RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (p->tx_ring[i][q] == NULL)
			return -1;
	}
	return 0;
}

/*
 * ports[i].rss into @p conf (before rte_eth_dev_configure): the hash fields the device can do
 * of those asked (each asked field needs at least one of its bits there), the key (the
 * symmetric one as long as the device's). @return 0, or -1 naming the field (printed).
 */
static int rss_conf(const struct sbx_port_cfg *pc, uint16_t i, const struct rte_eth_dev_info *info,
		    struct rte_eth_conf *conf, uint8_t key[SBX_RSS_KEY_MAX], uint8_t *key_len)
{
	uint64_t hf = sbx_rss_hf(pc->rss.fields) & info->flow_type_rss_offloads;
	uint8_t missing = pc->rss.fields & (uint8_t)~sbx_rss_fields_of_hf(hf), bit;
	size_t dev_len = info->hash_key_size != 0 ? info->hash_key_size : SBX_RSS_KEY_DEFAULT;

	if (info->flow_type_rss_offloads == 0) {
		fprintf(stderr, "spanbox-primary: ports[%u].rss (%s): driver %s has no RSS: remove rss from this port\n",
			i, pc->name, info->driver_name);
		return -1;
	}
	for (bit = 1; missing != 0 && bit <= SBX_RSS_F_UDP; bit <<= 1)
		if (missing & bit) {
			fprintf(stderr, "spanbox-primary: ports[%u].rss.fields (%s): driver %s cannot hash \"%s\" "
				"(its RSS offloads: 0x%" PRIx64 ")\n", i, pc->name, info->driver_name,
				sbx_rss_field_name(bit), info->flow_type_rss_offloads);
			return -1;
		}
	if (dev_len > SBX_RSS_KEY_MAX) {
		fprintf(stderr, "spanbox-primary: ports[%u].rss (%s): driver %s takes a %zu-byte key, spanbox at most %d\n",
			i, pc->name, info->driver_name, dev_len, SBX_RSS_KEY_MAX);
		return -1;
	}
	if (pc->rss.key_len == 0) {
		sbx_rss_symmetric_key(key, dev_len);
		*key_len = (uint8_t)dev_len;
	} else if (pc->rss.key_len != dev_len) {
		fprintf(stderr, "spanbox-primary: ports[%u].rss.key (%s): %u bytes, driver %s takes %zu\n", i,
			pc->name, pc->rss.key_len, info->driver_name, dev_len);
		return -1;
	} else {
		memcpy(key, pc->rss.key, pc->rss.key_len);
		*key_len = pc->rss.key_len;
	}
	conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
	conf->rx_adv_conf.rss_conf = (struct rte_eth_rss_conf){ .rss_key = key, .rss_key_len = *key_len,
								 .rss_hf = hf };
	return 0;
}

/*
 * After the start: the key and fields once more (some drivers take them only here), the RETA
 * spread over the port's RX queues, then what the device says of all three into the memzone.
 * @return 0, or -1 naming the port (printed).
 */
static int rss_apply(const struct sbx_port_cfg *pc, uint16_t i, struct sbx_port_shm *ps,
		     const struct rte_eth_dev_info *info, struct rte_eth_rss_conf *rc)
{
	struct rte_eth_rss_reta_entry64 reta[SBX_RSS_RETA_MAX / RTE_ETH_RETA_GROUP_SIZE];
	uint16_t spread[SBX_RSS_RETA_MAX], size = info->reta_size, k;
	/* the device's key length: drivers copy that many bytes, not all of them update rss_key_len */
	struct rte_eth_rss_conf back = { .rss_key = ps->rss_key,
					 .rss_key_len = info->hash_key_size != 0 ? info->hash_key_size : SBX_RSS_KEY_DEFAULT };
	int rc2;

	if (size == 0 || size > SBX_RSS_RETA_MAX) {
		fprintf(stderr, "spanbox-primary: ports[%u].rss (%s): driver %s has %s redirection table\n", i, pc->name,
			info->driver_name, size == 0 ? "no" : "too large a");
		return -1;
	}
	rc2 = rte_eth_dev_rss_hash_update(ps->port_id, rc);
	if (rc2 != 0 && rc2 != -ENOTSUP) {
		fprintf(stderr, "spanbox-primary: ports[%u].rss (%s): key and fields refused: %s\n", i, pc->name,
			rte_strerror(-rc2));
		return -1;
	}
	sbx_rss_reta_spread(spread, size, ps->nb_rxq);
	memset(reta, 0, sizeof(reta));
	for (k = 0; k < size; k++) {
		reta[k / RTE_ETH_RETA_GROUP_SIZE].mask |= 1ULL << (k % RTE_ETH_RETA_GROUP_SIZE);
		reta[k / RTE_ETH_RETA_GROUP_SIZE].reta[k % RTE_ETH_RETA_GROUP_SIZE] = spread[k];
	}
	rc2 = rte_eth_dev_rss_reta_update(ps->port_id, reta, size);
	if (rc2 != 0) {
		fprintf(stderr, "spanbox-primary: ports[%u].rss (%s): driver %s refuses its redirection table: %s\n", i,
			pc->name, info->driver_name, rte_strerror(-rc2));
		return -1;
	}
	/* read back */
	memset(reta, 0, sizeof(reta));
	for (k = 0; k < size; k++)
		reta[k / RTE_ETH_RETA_GROUP_SIZE].mask |= 1ULL << (k % RTE_ETH_RETA_GROUP_SIZE);
	if (rte_eth_dev_rss_hash_conf_get(ps->port_id, &back) != 0 ||
	    rte_eth_dev_rss_reta_query(ps->port_id, reta, size) != 0) {
		fprintf(stderr, "spanbox-primary: ports[%u].rss (%s): driver %s cannot report its RSS state\n", i,
			pc->name, info->driver_name);
		return -1;
	}
	ps->rss_key_len = back.rss_key_len <= SBX_RSS_KEY_MAX ? (uint8_t)back.rss_key_len : SBX_RSS_KEY_MAX;
	ps->rss_hf = back.rss_hf;
	ps->rss_reta_size = size;
	for (k = 0; k < size; k++)
		ps->rss_reta[k] = reta[k / RTE_ETH_RETA_GROUP_SIZE].reta[k % RTE_ETH_RETA_GROUP_SIZE];
	ps->rss_on = 1;
	return 0;
}

/* Configure and start one port. */
static int port_start(struct sbx_primary *p, uint16_t i)
{
	const struct sbx_port_cfg *pc = &p->cfg->ports[i];
	struct sbx_port_shm *ps = &p->shm->ports[i];
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	struct rte_mempool *mp = sbx_pool_for_socket(p, ps->socket_id);
	uint16_t nb_rxq, nb_txq, q, pid = ps->port_id;
	int rc, socket = ps->socket_id < 0 ? 0 : ps->socket_id;
	uint8_t rss_key[SBX_RSS_KEY_MAX], rss_key_len = 0;

	if (pc->kind == SBX_PORT_PCAP_FILE && pc->rss.enabled) {
		fprintf(stderr, "spanbox-primary: ports[%u].rss (%s): a pcap file port is bridged by the primary, which "
			"spreads its frames itself: it has no RSS\n", i, pc->name);
		return -1;
	}
	if (pc->kind == SBX_PORT_PCAP_FILE) {
		ps->link_up = 1;
		ps->mtu = pc->mtu; /* enforced as a NIC would (CONFIG.md "Frame length") */
		if (bridge_rings_create(p, i, socket) != 0) {
			fprintf(stderr, "spanbox-primary: ports[%u] (%s): cannot create rings: %s\n", i, pc->name,
				rte_strerror(rte_errno));
			return -1;
		}
		printf("spanbox-primary: port %s = %s (pcap file port, %u RX / %u TX rings)\n", pc->name,
		       pc->devargs, ps->nb_rxq, ps->nb_txq);
		return 0;
	}
	rc = rte_eth_dev_info_get(pid, &info);
	if (rc != 0)
		goto fail;
	nb_rxq = ps->nb_rxq; /* planned in sbx_ports_lookup() */
	nb_txq = ps->nb_txq;
	if (nb_rxq > info.max_rx_queues || nb_txq > info.max_tx_queues) {
		fprintf(stderr, "spanbox-primary: ports[%u] (%s): needs %u RX / %u TX queues, device has %u / %u\n",
			i, pc->name, nb_rxq, nb_txq, info.max_rx_queues, info.max_tx_queues);
		return -1;
	}
	memset(&conf, 0, sizeof(conf));
	if (pc->mtu <= info.max_mtu && pc->mtu >= info.min_mtu)
		conf.rxmode.mtu = pc->mtu;
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	if (pc->rss.enabled && rss_conf(pc, i, &info, &conf, rss_key, &rss_key_len) != 0)
		return -1;
	rc = rte_eth_dev_configure(pid, nb_rxq, nb_txq, &conf);
	if (rc != 0)
		goto fail;
	for (q = 0; q < nb_rxq; q++) {
		rc = rte_eth_rx_queue_setup(pid, q, pc->rx_desc, (unsigned int)socket, NULL, mp);
		if (rc != 0)
			goto fail;
	}
	for (q = 0; q < nb_txq; q++) {
		rc = rte_eth_tx_queue_setup(pid, q, pc->tx_desc, (unsigned int)socket, NULL);
		if (rc != 0)
			goto fail;
	}
	rc = rte_eth_dev_start(pid);
	if (rc != 0)
		goto fail;
	if (pc->rss.enabled && rss_apply(pc, i, ps, &info, &conf.rx_adv_conf.rss_conf) != 0)
		return -1;
	/* per-worker state of this port's frames (the dedup table, the tunnel senders' sequence
	 * numbers) is exact only when a flow's frames, both directions, reach one worker */
	if (ps->nb_rxq > 1 && (pc->ingress.dedup_window_us != 0 || pc->ingress.nb_decap != 0) &&
	    (!ps->rss_on || !sbx_rss_key_is_symmetric(ps->rss_key, ps->rss_key_len)))
		sbx_warn(p, "rss", "port %s has %u RX queues %s: its dedup and tunnel sequence state are per worker and "
			 "miss what another worker sees of a flow (set ports[].rss with key \"symmetric\")", pc->name,
			 ps->nb_rxq, ps->rss_on ? "and an RSS key that is not symmetric" : "and no RSS configuration");
	rte_eth_promiscuous_enable(pid); /* not every PMD supports it; a forwarder wants all frames */
	if (rte_eth_macaddr_get(pid, &mac) == 0)
		memcpy(ps->mac, mac.addr_bytes, 6);
	/* what the PMD took (the config's mtu may be out of the device's range): mirror copies sent
	 * there are made to fit it (mirror.c), with a compare per copy, no call */
	if (rte_eth_dev_get_mtu(pid, &ps->mtu) != 0)
		ps->mtu = pc->mtu;
	printf("spanbox-primary: port %s = %s (id %u, socket %d, %u RX / %u TX queues)\n", pc->name,
	       pc->devargs, pid, ps->socket_id, ps->nb_rxq, ps->nb_txq);
	return 0;
fail:
	fprintf(stderr, "spanbox-primary: ports[%u] (%s): setup failed: %s\n", i, pc->name, rte_strerror(-rc));
	return -1;
}

int sbx_ports_start(struct sbx_primary *p)
{
	uint16_t i;

	for (i = 0; i < p->cfg->nb_ports; i++)
		if (port_start(p, i) != 0)
			return -1;
	return 0;
}

/* The interface name of a tap port moved into a namespace (iface= of its devargs), else false. */
static bool netns_iface(const struct sbx_port_cfg *pc, char *name, size_t len)
{
	const char *iface = strstr(pc->devargs, "iface=");

	if (pc->netns[0] == '\0' || iface == NULL)
		return false;
	snprintf(name, len, "%.*s", (int)strcspn(iface + 6, ","), iface + 6);
	return true;
}

/* Link of a tap moved into a namespace, asked inside it; -1 when unknown (see netns_link.c). */
static int netns_link(struct sbx_primary *p, uint16_t i)
{
	char name[32];
	int up;

	if (!netns_iface(&p->cfg->ports[i], name, sizeof(name)))
		return -1;
	if (p->netns_sock[i] <= 0)
		p->netns_sock[i] = sbx_netns_socket(p->cfg->ports[i].netns);
	if (p->netns_sock[i] <= 0)
		return -1;
	up = sbx_netns_link_up(p->netns_sock[i], name);
	if (up < 0) { /* namespace re-created or iface moved: ask again next time */
		close(p->netns_sock[i]);
		p->netns_sock[i] = -1;
	}
	return up;
}

/* Link state and speed of ethdev port i into shm. */
static void link_refresh(struct sbx_primary *p, uint16_t i)
{
	struct sbx_port_shm *ps = &p->shm->ports[i];
	struct rte_eth_link link;

	if (rte_eth_link_get_nowait(ps->port_id, &link) == 0) {
		int ns_up = link.link_status ? -1 : netns_link(p, i);

		ps->link_up = ns_up >= 0 ? (uint32_t)ns_up : link.link_status;
		ps->link_speed = link.link_speed;
	}
}

void sbx_ports_link_refresh(struct sbx_primary *p, uint16_t i)
{
	link_refresh(p, i);
}

int sbx_ports_set_link(struct sbx_primary *p, uint16_t i, bool up, char *answer, size_t len)
{
	const struct sbx_port_cfg *pc = &p->cfg->ports[i];
	struct sbx_port_shm *ps = &p->shm->ports[i];
	char iface[32];
	int rc;

	if (pc->kind == SBX_PORT_PCAP_FILE) {
		snprintf(answer, len, "error: port %s is a pcap file (bridged): it has no link", pc->name);
		return -1;
	}
	if (netns_iface(pc, iface, sizeof(iface))) {
		/* the tap PMD's ioctl runs in our namespace, where the interface no longer is */
		int sock = sbx_netns_socket(pc->netns);

		rc = sock >= 0 ? sbx_netns_set_link(sock, iface, up) : -1;
		if (rc != 0)
			rc = -errno;
		if (sock >= 0)
			close(sock);
	} else {
		rc = up ? rte_eth_dev_set_link_up(ps->port_id) : rte_eth_dev_set_link_down(ps->port_id);
	}
	if (rc != 0) {
		snprintf(answer, len, "error: %s", rc == -ENOTSUP ? "the driver cannot set the link" : strerror(-rc));
		return -1;
	}
	link_refresh(p, i);
	snprintf(answer, len, "ok %s", ps->link_up ? "up" : "down");
	return 0;
}

void sbx_ports_refresh(struct sbx_primary *p)
{
	uint16_t i;

	for (i = 0; i < p->cfg->nb_ports; i++) {
		struct sbx_port_shm *ps = &p->shm->ports[i];
		struct rte_eth_stats st;

		if (p->cfg->ports[i].kind == SBX_PORT_PCAP_FILE) {
			struct sbx_pcap_port *pp = &p->pcap[i];

			/* a reader following the output file sees whole records within 100 ms */
			sbx_pcap_port_flush(pp);
			ps->ipackets = pp->rx_pkts;
			ps->ibytes = pp->rx_bytes;
			ps->opackets = pp->tx_pkts;
			ps->obytes = pp->tx_bytes;
			ps->ierrors = pp->rx_errors;
			ps->rx_nombuf = pp->rx_nombuf;
			ps->oerrors = pp->tx_errors;
			continue;
		}
		link_refresh(p, i);
		if (rte_eth_stats_get(ps->port_id, &st) == 0) {
			ps->ipackets = st.ipackets;
			ps->opackets = st.opackets;
			ps->ibytes = st.ibytes;
			ps->obytes = st.obytes;
			ps->imissed = st.imissed;
			ps->ierrors = st.ierrors;
			ps->oerrors = st.oerrors;
			ps->rx_nombuf = st.rx_nombuf;
		}
	}
}

/* pcap file -> rx rings of bridged port i, round robin over the polled queues, burst by burst.
 * A burst a ring cannot take stays pending: nothing read from a file is ever dropped. */
static unsigned int bridge_rx(struct sbx_primary *p, uint16_t i)
{
	struct sbx_port_shm *ps = &p->shm->ports[i];
	uint16_t *n = &p->rx_pending_n[i], *off = &p->rx_pending_off[i];
	unsigned int k;

	if (*n == 0) {
		if (p->pcap[i].rx_eof)
			return 0;
		*off = 0;
		*n = sbx_pcap_port_rx(&p->pcap[i], sbx_pool_for_socket(p, ps->socket_id), p->rx_pending[i],
				      RTE_MIN(p->cfg->burst, (uint16_t)RTE_DIM(p->rx_pending[i])));
		p->rx_rr[i] = (uint16_t)((p->rx_rr[i] + 1) % ps->nb_rxq);
		if (*n == 0)
			return 0;
	}
	k = rte_ring_enqueue_burst(p->rx_ring[i][p->rx_rr[i]], (void **)&p->rx_pending[i][*off], *n, NULL);
	*off = (uint16_t)(*off + k);
	*n = (uint16_t)(*n - k);
	return k;
}

/* tx rings of bridged port i -> pcap file. */
static unsigned int bridge_tx(struct sbx_primary *p, uint16_t i)
{
	struct rte_mbuf *pkts[64];
	unsigned int moved = 0, n, q;

	for (q = 0; q < p->shm->ports[i].nb_txq; q++) {
		n = rte_ring_dequeue_burst(p->tx_ring[i][q], (void **)pkts, RTE_DIM(pkts), NULL);
		if (n)
			sbx_pcap_port_tx(&p->pcap[i], pkts, (uint16_t)n);
		moved += n;
	}
	return moved;
}

unsigned int sbx_bridge_poll(struct sbx_primary *p)
{
	unsigned int moved = 0;
	uint16_t i;

	for (i = 0; i < p->cfg->nb_ports; i++) {
		if (p->cfg->ports[i].kind != SBX_PORT_PCAP_FILE)
			continue;
		moved += bridge_rx(p, i);
		moved += bridge_tx(p, i);
	}
	return moved;
}

bool sbx_bridge_idle(struct sbx_primary *p)
{
	uint16_t i, q;

	for (i = 0; i < p->cfg->nb_ports; i++) {
		if (p->cfg->ports[i].kind != SBX_PORT_PCAP_FILE)
			continue;
		if (p->rx_pending_n[i])
			return false;
		for (q = 0; q < p->shm->ports[i].nb_rxq; q++)
			if (!rte_ring_empty(p->rx_ring[i][q]))
				return false;
		for (q = 0; q < p->shm->ports[i].nb_txq; q++)
			if (!rte_ring_empty(p->tx_ring[i][q]))
				return false;
	}
	return true;
}

/* Free every mbuf left in a ring, then the ring. */
static void ring_drain_free(struct rte_ring *r)
{
	struct rte_mbuf *pkts[64];
	unsigned int n;

	if (r == NULL)
		return;
	while ((n = rte_ring_dequeue_burst(r, (void **)pkts, RTE_DIM(pkts), NULL)) > 0)
		rte_pktmbuf_free_bulk(pkts, n);
	rte_ring_free(r);
}

void sbx_ports_stop(struct sbx_primary *p)
{
	uint16_t i, q;

	for (i = 0; i < p->cfg->nb_ports; i++) {
		uint16_t pid = p->shm->ports[i].port_id;

		if (p->rx_pending_n[i])
			rte_pktmbuf_free_bulk(&p->rx_pending[i][p->rx_pending_off[i]], p->rx_pending_n[i]);
		p->rx_pending_n[i] = 0;
		for (q = 0; q < RTE_DIM(p->rx_ring[i]); q++) {
			ring_drain_free(p->rx_ring[i][q]);
			p->rx_ring[i][q] = NULL;
		}
		for (q = 0; q < RTE_DIM(p->tx_ring[i]); q++) {
			ring_drain_free(p->tx_ring[i][q]);
			p->tx_ring[i][q] = NULL;
		}
		if (p->netns_sock[i] > 0)
			close(p->netns_sock[i]);
		if (p->cfg->ports[i].kind == SBX_PORT_PCAP_FILE) {
			sbx_pcap_port_close(&p->pcap[i]);
			continue;
		}
		if (rte_eth_dev_stop(pid) != 0)
			fprintf(stderr, "spanbox-primary: port %s: stop failed\n", p->cfg->ports[i].name);
		rte_eth_dev_close(pid);
	}
}
