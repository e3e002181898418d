/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Lookups in a parsed config (include/spanbox/config.h): the sections' parsers and the processes
 * call them; they call nothing of the parser.
 */
#include <string.h>

#include "spanbox/config.h"

int sbx_config_port_index(const struct sbx_config *cfg, const char *name)
{
	uint16_t i;

	for (i = 0; name && i < cfg->nb_ports; i++)
		if (!strcmp(cfg->ports[i].name, name))
			return i;
	return -1;
}

uint16_t sbx_config_port_nb_rxq(const struct sbx_config *cfg, uint16_t port)
{
	uint16_t n = 1, w, i;

	for (w = 0; w < cfg->nb_workers; w++)
		for (i = 0; i < cfg->workers[w].nb_rxq; i++)
			if (cfg->workers[w].rxq[i].port == port && cfg->workers[w].rxq[i].queue >= n)
				n = cfg->workers[w].rxq[i].queue + 1;
	return n;
}

bool sbx_config_has_pci(const struct sbx_config *cfg)
{
	uint16_t i;

	for (i = 0; i < cfg->nb_ports; i++)
		if (cfg->ports[i].is_pci)
			return true;
	return false;
}
