/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spanbox-pcie: decode the PCI Express capability of devices and of the bridges above them
 * (MaxPayloadSize, Max Read Request Size, link speed and width) and warn about what slows DMA.
 * Read-only: config space is read from sysfs (or from a file), never written.
 *
 *   spanbox-pcie [--json] BDF|FILE...    a BDF is DDDD:BB:DD.F; a FILE path contains a '/'
 *   spanbox-pcie [--json] --all          every device of /sys/bus/pci/devices
 *
 * Exit status: 0; 1 when a device or file could not be read or decoded (the message names it);
 * 2 on bad arguments. Output formats: docs/DIAGNOSTICS.md.
 */
#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "spanbox/pcie.h"

#define MAX_WARN 32

static void usage(FILE *f)
{
	fprintf(f,
		"usage: spanbox-pcie [--json] BDF|FILE...\n"
		"       spanbox-pcie [--json] --all\n"
		"Decode MaxPayloadSize, Max Read Request Size, link speed and width of PCI devices\n"
		"(BDF: DDDD:BB:DD.F, read from /sys/bus/pci/devices/BDF/config, with every bridge up to\n"
		"the root port) or of saved config-space files (a path containing '/'). Read-only.\n"
		"  --json   print JSON\n"
		"  --all    every device in /sys/bus/pci/devices\n");
}

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

static void print_text(const struct sbx_pcie_info *d, bool bridge)
{
	char s1[24], s2[24];
	int i;

	printf("%s%s  [%04x:%04x] header type %u", bridge ? "  bridge " : "", d->name, d->vendor_id,
	       d->device_id, d->header_type);
	if (!d->has_pcie) {
		printf(", no PCI Express capability\n");
		printf("%s    capabilities:", bridge ? "  " : "");
		if (!d->nb_caps)
			printf(" none");
		for (i = 0; i < d->nb_caps; i++)
			printf(" %s(0x%02x)@0x%02x", cap_name(d->cap_ids[i]), d->cap_ids[i], d->cap_offsets[i]);
		printf("\n");
		return;
	}
	printf(", PCIe v%u %s (capability at 0x%02x)\n", d->pcie_version,
	       sbx_pcie_port_type_name(d->port_type), d->pcie_cap);
	printf("%s    MPS   %u B in use, %u B supported\n", bridge ? "  " : "", d->mps, d->mps_supported);
	printf("%s    MRRS  %u B\n", bridge ? "  " : "", d->mrrs);
	if (!d->has_link)
		printf("%s    link  none (integrated in the root complex)\n", bridge ? "  " : "");
	else if (!d->link_width)
		printf("%s    link  down (max %s x%u)\n", bridge ? "  " : "",
		       sbx_pcie_speed_str(d->link_speed_max, s2, sizeof(s2)), d->link_width_max);
	else
		printf("%s    link  %s x%u (max %s x%u)\n", bridge ? "  " : "",
		       sbx_pcie_speed_str(d->link_speed, s1, sizeof(s1)), d->link_width,
		       sbx_pcie_speed_str(d->link_speed_max, s2, sizeof(s2)), d->link_width_max);
}

static cJSON *info_json(const struct sbx_pcie_info *d, bool bridge)
{
	cJSON *o = cJSON_CreateObject(), *caps, *c;
	char buf[24];
	int i;

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

/* Decode one argument (chain for a BDF, a single entry for a file); 0 or 1 (could not read). */
static int one(const char *arg, bool json, cJSON *devices)
{
	static struct sbx_pcie_info chain[SBX_PCIE_MAX_CHAIN];
	char warn[MAX_WARN][SBX_PCIE_WARN_LEN], err[512];
	cJSON *o, *a;
	int n, nw, i;

	if (sbx_pcie_bdf_valid(arg))
		n = sbx_pcie_path(arg, chain, SBX_PCIE_MAX_CHAIN, err, sizeof(err));
	else
		n = sbx_pcie_read(arg, &chain[0], err, sizeof(err)) == 0 ? 1 : -1;
	if (n < 0) {
		fprintf(stderr, "spanbox-pcie: %s\n", err);
		if (json) {
			o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "query", arg);
			cJSON_AddStringToObject(o, "error", err);
			cJSON_AddItemToArray(devices, o);
		}
		return 1;
	}
	nw = sbx_pcie_warnings(chain, n, warn, MAX_WARN);
	if (json) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "query", arg);
		a = cJSON_AddArrayToObject(o, "chain");
		for (i = 0; i < n; i++)
			cJSON_AddItemToArray(a, info_json(&chain[i], i > 0));
		a = cJSON_AddArrayToObject(o, "warnings");
		for (i = 0; i < nw; i++)
			cJSON_AddItemToArray(a, cJSON_CreateString(warn[i]));
		cJSON_AddItemToArray(devices, o);
		return 0;
	}
	for (i = 0; i < n; i++)
		print_text(&chain[i], i > 0);
	for (i = 0; i < nw; i++)
		printf("  warning: %s\n", warn[i]);
	printf("\n");
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"all", no_argument, NULL, 'a'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool json = false, all = false;
	char **args = NULL;
	int c, i, nargs = 0, rc = 0;
	cJSON *root = NULL, *devices = NULL;
	char *s;

	while ((c = getopt_long(argc, argv, "jah", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'a': all = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (all == (optind < argc)) {
		fprintf(stderr, "spanbox-pcie: give either --all or at least one BDF or FILE\n");
		usage(stderr);
		return 2;
	}
	for (i = optind; i < argc; i++) {
		if (!sbx_pcie_bdf_valid(argv[i]) && !strchr(argv[i], '/')) {
			fprintf(stderr,
				"spanbox-pcie: %s: not a PCI address DDDD:BB:DD.F (hex) nor a file path (with '/')\n",
				argv[i]);
			return 2;
		}
	}
	if (all) {
		DIR *d = opendir("/sys/bus/pci/devices");
		struct dirent *e;

		if (!d) {
			perror("spanbox-pcie: /sys/bus/pci/devices");
			return 1;
		}
		while ((e = readdir(d))) {
			if (!sbx_pcie_bdf_valid(e->d_name))
				continue;
			args = realloc(args, sizeof(*args) * (size_t)(nargs + 1));
			if (!args || !(s = strdup(e->d_name))) {
				fprintf(stderr, "spanbox-pcie: out of memory\n");
				return 1;
			}
			args[nargs++] = s;
		}
		closedir(d);
		if (nargs)
			qsort(args, (size_t)nargs, sizeof(*args), cmp_str);
	} else {
		args = argv + optind;
		nargs = argc - optind;
	}
	if (json) {
		root = cJSON_CreateObject();
		devices = cJSON_AddArrayToObject(root, "devices");
	}
	for (i = 0; i < nargs; i++)
		rc |= one(args[i], json, devices);
	if (json) {
		s = cJSON_Print(root);
		if (s)
			printf("%s\n", s);
		free(s);
		cJSON_Delete(root);
	}
	if (all) {
		for (i = 0; i < nargs; i++)
			free(args[i]);
		free(args);
	}
	return rc;
}
