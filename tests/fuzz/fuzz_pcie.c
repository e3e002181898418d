/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the PCIe config-space decoder sbx_pcie_decode_buf() (shared/pcie.c) on any
 * bytes, as one device, and (from 128 bytes on) its second half as the bridge above it; then the
 * chain warnings and the name helpers on what decoded, and the BDF parsers on the input as text.
 * Input: config space as in tests/fixtures/pcie/\*.bin.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spanbox/pcie.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct sbx_pcie_info chain[2];
	static char warn[8][SBX_PCIE_WARN_LEN];
	char err[256], s[32], bdf[SBX_PCIE_BDF_LEN], *text;
	int n = 0, i, w;

	memset(chain, 0, sizeof(chain));
	if (sbx_pcie_decode_buf(data, len, &chain[n], err, sizeof(err)) == 0)
		snprintf(chain[n++].name, SBX_PCIE_NAME_LEN, "device");
	if (len >= 128 && sbx_pcie_decode_buf(data + len / 2, len - len / 2, &chain[n], err, sizeof(err)) == 0)
		snprintf(chain[n++].name, SBX_PCIE_NAME_LEN, "bridge");
	w = sbx_pcie_warnings(chain, n, warn, 8);
	if (w < 0 || w > 8)
		abort();
	for (i = 0; i < n; i++) {
		if (sbx_pcie_port_type_name(chain[i].port_type) == NULL)
			abort();
		sbx_pcie_speed_str(chain[i].link_speed, s, sizeof(s));
	}
	text = malloc(len + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, len);
	text[len] = '\0';
	sbx_pcie_bdf_valid(text);
	sbx_pcie_devargs_bdf(text, bdf);
	free(text);
	return 0;
}
