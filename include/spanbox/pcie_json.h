/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file pcie_json.h
 * Presentation of decoded PCIe devices (pcie.h): JSON (cJSON) and text, shared by the
 * spanbox-pcie tool, spanbox-primary's start-up log and mgmt's GET /api/v1/system/pci/{bdf}, so
 * the three say the same thing. Formats: docs/DIAGNOSTICS.md.
 */
#ifndef SPANBOX_PCIE_JSON_H
#define SPANBOX_PCIE_JSON_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "pcie.h"

/**
 * One chain entry as JSON: name, bdf (null for a file), role ("device" or "bridge"), vendor and
 * device ids, header type, config bytes read, capabilities, and when it has a PCI Express
 * capability its MPS, MRRS, port type and link (sizes in bytes, speeds as "8 GT/s" and GT/s x 10).
 * @return a new object the caller frees with cJSON_Delete(); NULL when out of memory.
 */
cJSON *sbx_pcie_info_json(const struct sbx_pcie_info *d, bool bridge);

/**
 * A decoded chain as {"query": @p query, "chain": [device, bridges...], "warnings": [...]}.
 * @param chain  chain[0] the device, then its bridges nearest first (sbx_pcie_path()).
 * @param warn   @p nw warnings (sbx_pcie_warnings()).
 * @return a new object the caller frees with cJSON_Delete(); NULL when out of memory.
 */
cJSON *sbx_pcie_chain_json(const char *query, const struct sbx_pcie_info chain[], int n,
			   char warn[][SBX_PCIE_WARN_LEN], int nw);

/**
 * Print one chain entry as text (the spanbox-pcie format: a header line, then MPS, MRRS and link
 * lines, or the capability list when there is no PCI Express capability), each line starting with
 * @p prefix ("" for none).
 */
void sbx_pcie_print(FILE *f, const char *prefix, const struct sbx_pcie_info *d, bool bridge);

#endif
