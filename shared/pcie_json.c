/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON and text of decoded PCIe devices (pcie_json.h). */
#include <stdio.h>

#include "spanbox/pcie_json.h"

static const char *hexid(char *buf, size_t len, unsigned int v, int digits)
{
	snprintf(buf, len, "0x%0*x", digits, v);
	return buf;
}

/* Names of the capability IDs most often seen (PCI Code and ID Assignment Specification). */
static const char *cap_name(uint8_t id)
{
	switch (id) {
	case 0x01: return "PM";
	case 0x05: return "MSI";
	case 0x09: return "vendor";
	case 0x0d: return "SSID";
	case 0x10: return "PCIe";
	case 0x11: return "MSI-X";
	case 0x12: return "SATA";
	case 0x13: return "AF";
	default: return "cap";
	}
}

void sbx_pcie_print(FILE *f, const char *prefix, const struct sbx_pcie_info *d, bool bridge)
{
	const char *in = bridge ? "  " : "";
	char s1[24], s2[24];
	int i;

	fprintf(f, "%s%s%s  [%04x:%04x] header type %u", prefix, bridge ? "  bridge " : "", d->name,
		d->vendor_id, d->device_id, d->header_type);
	if (!d->has_pcie) {
		fprintf(f, ", no PCI Express capability\n");
		fprintf(f, "%s%s    capabilities:", prefix, in);
		if (!d->nb_caps)
			fprintf(f, " none");
		for (i = 0; i < d->nb_caps; i++)
			fprintf(f, " %s(0x%02x)@0x%02x", cap_name(d->cap_ids[i]), d->cap_ids[i], d->cap_offsets[i]);
		fprintf(f, "\n");
		return;
	}
	fprintf(f, ", PCIe v%u %s (capability at 0x%02x)\n", d->pcie_version,
		sbx_pcie_port_type_name(d->port_type), d->pcie_cap);
	fprintf(f, "%s%s    MPS   %u B in use, %u B supported\n", prefix, in, d->mps, d->mps_supported);
	fprintf(f, "%s%s    MRRS  %u B\n", prefix, in, d->mrrs);
	if (!d->has_link)
		fprintf(f, "%s%s    link  none (integrated in the root complex)\n", prefix, in);
	else if (!d->link_width)
		fprintf(f, "%s%s    link  down (max %s x%u)\n", prefix, in,
			sbx_pcie_speed_str(d->link_speed_max, s2, sizeof(s2)), d->link_width_max);
	else
		fprintf(f, "%s%s    link  %s x%u (max %s x%u)\n", prefix, in,
			sbx_pcie_speed_str(d->link_speed, s1, sizeof(s1)), d->link_width,
			sbx_pcie_speed_str(d->link_speed_max, s2, sizeof(s2)), d->link_width_max);
}

cJSON *sbx_pcie_info_json(const struct sbx_pcie_info *d, bool bridge)
{
	cJSON *o = cJSON_CreateObject(), *caps, *c;
	char buf[24];
	int i;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "name", d->name);
	if (d->bdf[0])
		cJSON_AddStringToObject(o, "bdf", d->bdf);
	else
		cJSON_AddNullToObject(o, "bdf");
	cJSON_AddStringToObject(o, "role", bridge ? "bridge" : "device");
	cJSON_AddStringToObject(o, "vendor_id", hexid(buf, sizeof(buf), d->vendor_id, 4));
	cJSON_AddStringToObject(o, "device_id", hexid(buf, sizeof(buf), d->device_id, 4));
	cJSON_AddNumberToObject(o, "header_type", d->header_type);
	cJSON_AddNumberToObject(o, "config_bytes", d->cfg_len);
	caps = cJSON_AddArrayToObject(o, "capabilities");
	for (i = 0; i < d->nb_caps; i++) {
		c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "id", hexid(buf, sizeof(buf), d->cap_ids[i], 2));
		cJSON_AddStringToObject(c, "offset", hexid(buf, sizeof(buf), d->cap_offsets[i], 2));
		cJSON_AddItemToArray(caps, c);
	}
	cJSON_AddBoolToObject(o, "pcie", d->has_pcie);
	if (!d->has_pcie)
		return o;
	cJSON_AddStringToObject(o, "pcie_cap_offset", hexid(buf, sizeof(buf), d->pcie_cap, 2));
	cJSON_AddNumberToObject(o, "pcie_version", d->pcie_version);
	cJSON_AddNumberToObject(o, "port_type", d->port_type);
	cJSON_AddStringToObject(o, "port_type_name", sbx_pcie_port_type_name(d->port_type));
	cJSON_AddNumberToObject(o, "mps_bytes", d->mps);
	cJSON_AddNumberToObject(o, "mps_supported_bytes", d->mps_supported);
	cJSON_AddNumberToObject(o, "mrrs_bytes", d->mrrs);
	cJSON_AddBoolToObject(o, "has_link", d->has_link);
	if (!d->has_link)
		return o;
	c = cJSON_AddObjectToObject(o, "link");
	cJSON_AddNumberToObject(c, "speed_gts10", d->link_speed);
	cJSON_AddStringToObject(c, "speed", sbx_pcie_speed_str(d->link_speed, buf, sizeof(buf)));
	cJSON_AddNumberToObject(c, "width", d->link_width);
	cJSON_AddNumberToObject(c, "max_speed_gts10", d->link_speed_max);
	cJSON_AddStringToObject(c, "max_speed", sbx_pcie_speed_str(d->link_speed_max, buf, sizeof(buf)));
	cJSON_AddNumberToObject(c, "max_width", d->link_width_max);
	cJSON_AddBoolToObject(c, "up", d->link_width != 0);
	return o;
}

cJSON *sbx_pcie_chain_json(const char *query, const struct sbx_pcie_info chain[], int n,
			   char warn[][SBX_PCIE_WARN_LEN], int nw)
{
	cJSON *o = cJSON_CreateObject(), *a;
	int i;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "query", query);
	a = cJSON_AddArrayToObject(o, "chain");
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, sbx_pcie_info_json(&chain[i], i > 0));
	a = cJSON_AddArrayToObject(o, "warnings");
	for (i = 0; i < nw; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(warn[i]));
	return o;
}
