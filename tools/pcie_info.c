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
#include "spanbox/pcie_json.h"

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

/* Decode one argument (chain for a BDF, a single entry for a file); 0 or 1 (could not read). */
static int one(const char *arg, bool json, cJSON *devices)
{
	static struct sbx_pcie_info chain[SBX_PCIE_MAX_CHAIN];
	char warn[MAX_WARN][SBX_PCIE_WARN_LEN], err[512];
	cJSON *o;
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
		cJSON_AddItemToArray(devices, sbx_pcie_chain_json(arg, chain, n, warn, nw));
		return 0;
	}
	for (i = 0; i < n; i++)
		sbx_pcie_print(stdout, "", &chain[i], i > 0);
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
