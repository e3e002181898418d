/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The queue limits of the virtual drivers spanbox runs on, checked from the config alone (issue
 * #25): spanbox sets up 2 TX queues per worker on every port (sbx_config_port_nb_txq(): forward
 * and mirror) and the RX queues the workers poll (sbx_config_port_nb_rxq()); a driver that takes
 * fewer fails rte_eth_dev_configure at start. Knowing the vdev drivers' limits here lets --check
 * refuse the config as the start would, naming the port. PCI NICs are checked at start against
 * rte_eth_dev_info_get (primary/ports.c), which this table mirrors for the vdevs.
 */
#include <stdio.h>
#include <string.h>

#include "spanbox/config.h"

/* Read with `dpdk-testpmd --no-pci --vdev ... -- -i`, `show port info all` ("Max possible RX/TX
 * queues"), DPDK 22.11 (Debian 12); the constants are the drivers' own. net_null takes 1024
 * (RTE_MAX_QUEUES_PER_PORT): more than SBX_MAX_WORKERS ever needs. */
static const struct {
	const char *driver; /* the vdev driver: devargs start with it (EAL's vdev bus matches the prefix) */
	uint16_t max_rxq, max_txq;
} vdev_limits[] = {
	{ "net_tap", 16, 16 },   /* RTE_PMD_TAP_MAX_QUEUES, drivers/net/tap/rte_eth_tap.h */
	{ "net_ring", 16, 16 },  /* RTE_PMD_RING_MAX_RX_RINGS / _TX_RINGS, drivers/net/ring/rte_eth_ring.h */
	{ "net_memif", 255, 255 }, /* ETH_MEMIF_MAX_NUM_Q_PAIRS, drivers/net/memif/rte_eth_memif.h */
};

int sbx_config_queue_check(const struct sbx_config *cfg, char *err, size_t errlen)
{
	for (uint16_t i = 0; i < cfg->nb_ports; i++) {
		const struct sbx_port_cfg *pc = &cfg->ports[i];
		uint16_t rxq, txq;

		if (pc->kind == SBX_PORT_PCAP_FILE || pc->is_pci)
			continue;
		rxq = sbx_config_port_nb_rxq(cfg, i);
		txq = sbx_config_port_nb_txq(cfg, i);
		for (size_t d = 0; d < sizeof(vdev_limits) / sizeof(vdev_limits[0]); d++) {
			const size_t len = strlen(vdev_limits[d].driver);

			if (strncmp(pc->devargs, vdev_limits[d].driver, len) != 0)
				continue;
			if (txq > vdev_limits[d].max_txq) {
				snprintf(err, errlen, "ports[%u].devargs: %s takes at most %u TX queues and spanbox needs %u "
					 "on every port (2 per worker, forward and mirror: workers.count %u); with a %s "
					 "port at most %u workers", i, vdev_limits[d].driver, vdev_limits[d].max_txq, txq,
					 cfg->nb_workers, vdev_limits[d].driver, vdev_limits[d].max_txq / 2u);
				return -1;
			}
			if (rxq > vdev_limits[d].max_rxq) {
				snprintf(err, errlen, "ports[%u].devargs: %s takes at most %u RX queues and workers.queues "
					 "polls queue %u of port %s", i, vdev_limits[d].driver, vdev_limits[d].max_rxq,
					 rxq - 1u, pc->name);
				return -1;
			}
			break;
		}
	}
	return 0;
}
