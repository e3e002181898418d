/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file config.h
 * The appliance configuration: what a JSON config file (docs/CONFIG.md) parses into.
 *
 * The struct is plain data with fixed-size arrays and no pointers, so the primary can copy it
 * verbatim into the shared memzone (shm.h) where workers and mgmt read it.
 */
#ifndef SPANBOX_CONFIG_H
#define SPANBOX_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define SBX_MAX_PORTS 16           /**< ports in one config */
#define SBX_MAX_WORKERS 8          /**< worker processes */
#define SBX_MAX_RXQ_PER_WORKER 16  /**< (port, queue) pairs one worker polls */
#define SBX_MAX_XCONNECTS 16       /**< cross-connect pairs */
#define SBX_NAME_LEN 32            /**< port, prefix and netns names, NUL included */
#define SBX_DEVARGS_LEN 256        /**< DPDK devargs string, NUL included */
#define SBX_PATH_LEN 256           /**< file paths, NUL included */
#define SBX_MAX_EXTRA_EAL 8        /**< extra EAL arguments passed to every process */
#define SBX_LCORE_ID_MAX 127       /**< highest lcore id (RTE_MAX_LCORE - 1 in Debian's DPDK 22.11) */

/** How a port is driven. */
enum sbx_port_kind {
	SBX_PORT_ETHDEV = 0, /**< workers call rte_eth_rx_burst/tx_burst on it directly */
	SBX_PORT_BRIDGED = 1, /**< net_pcap: only the primary can poll it (docs/PCAP_SECONDARY.md);
				 workers exchange mbufs with the primary through rte_rings */
};

/** One port: a DPDK device (vdev or PCI) and its host-side demo set-up. */
struct sbx_port_cfg {
	char name[SBX_NAME_LEN];       /**< user name, e.g. "p0"; unique */
	char devargs[SBX_DEVARGS_LEN]; /**< DPDK devargs, e.g. "net_tap0,iface=sbx-p0" or "0000:01:00.0" */
	uint16_t mtu;                  /**< bytes of L3 payload; 68..9600 */
	uint16_t rx_desc;              /**< RX descriptors per queue; 64..16384 */
	uint16_t tx_desc;              /**< TX descriptors per queue; 64..16384 */
	char netns[SBX_NAME_LEN];      /**< launcher moves the tap iface into this netns ("" = stay) */
	char address[48];              /**< launcher gives the iface this CIDR address ("" = none) */
	uint8_t kind;                  /**< enum sbx_port_kind, derived from devargs */
	bool is_pci;                   /**< devargs names a PCI address: EAL runs without --no-pci */
};

/** One (port, queue) a worker polls. */
struct sbx_rxq_cfg {
	uint16_t port;  /**< index into sbx_config.ports */
	uint16_t queue; /**< RX queue id on that port */
};

/** One worker process. */
struct sbx_worker_cfg {
	uint16_t lcore_id;   /**< EAL lcore id; unique across every spanbox process */
	uint16_t nb_rxq;     /**< entries used in rxq[] */
	struct sbx_rxq_cfg rxq[SBX_MAX_RXQ_PER_WORKER];
};

/** A cross-connect: every frame received on a goes out of b and vice versa. */
struct sbx_xconnect_cfg {
	uint16_t a, b; /**< indexes into sbx_config.ports; a != b */
};

/** The whole configuration. */
struct sbx_config {
	/* eal */
	char file_prefix[SBX_NAME_LEN]; /**< EAL --file-prefix shared by all processes */
	uint32_t socket_mem_mb;         /**< hugepage memory the primary reserves on each NUMA socket, MiB */
	uint16_t primary_lcore;         /**< lcore id of the primary */
	uint16_t mgmt_lcore;            /**< lcore id of mgmt */
	char cpus[SBX_NAME_LEN];        /**< CPU set every lcore id floats on, e.g. "0-1" */
	uint16_t nb_extra_eal;
	char extra_eal[SBX_MAX_EXTRA_EAL][SBX_DEVARGS_LEN]; /**< passed verbatim to every EAL */
	/* pool */
	uint32_t pool_mbufs;            /**< mbufs per socket pool; 0 = computed by the planner */
	uint16_t pool_cache;            /**< per-lcore mempool cache, objects; 0..512 */
	/* ports */
	uint16_t nb_ports;
	struct sbx_port_cfg ports[SBX_MAX_PORTS];
	/* workers */
	uint16_t nb_workers;
	uint16_t burst;                 /**< packets per rx/tx burst; 1..256 */
	uint32_t idle_sleep_us;         /**< sleep after idle_polls empty polls, microseconds */
	uint32_t idle_polls;            /**< empty polls in a row before sleeping */
	bool busy_poll;                 /**< never sleep (benchmarks) */
	struct sbx_worker_cfg workers[SBX_MAX_WORKERS];
	/* forwarding */
	uint16_t nb_xconnects;
	struct sbx_xconnect_cfg xconnects[SBX_MAX_XCONNECTS];
	/* mgmt */
	char mgmt_listen[48];           /**< IPv4 or IPv6 literal */
	uint16_t mgmt_port;             /**< TCP port */
	char mgmt_database[SBX_PATH_LEN]; /**< SQLite file */
};

/**
 * Parse and validate a JSON config held in memory.
 *
 * @param text    NUL-terminated JSON text.
 * @param cfg     filled on success; left in an unspecified state on error.
 * @param err     on error, receives "field: message" (e.g. "ports[1].devargs: must not be empty").
 * @param errlen  size of err in bytes.
 * @return 0 on success, -1 on any error (unknown key, wrong type, out of range, duplicate name,
 *         dangling reference).
 */
int sbx_config_parse(const char *text, struct sbx_config *cfg, char *err, size_t errlen);

/**
 * Read a file and parse it with sbx_config_parse().
 * @return 0 on success, -1 on error; a missing or unreadable file gives "config: <path>: <strerror>".
 */
int sbx_config_load(const char *path, struct sbx_config *cfg, char *err, size_t errlen);

/** @return index of the port called @p name, or -1. */
int sbx_config_port_index(const struct sbx_config *cfg, const char *name);

/** @return number of RX queues the primary sets up on port @p port (max queue id polled + 1, >= 1). */
uint16_t sbx_config_port_nb_rxq(const struct sbx_config *cfg, uint16_t port);

/** @return true when any port is a PCI device (EAL must then run without --no-pci). */
bool sbx_config_has_pci(const struct sbx_config *cfg);

#endif
