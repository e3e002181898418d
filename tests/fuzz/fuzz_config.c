/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: sbx_config_parse() (shared/config.c) on any text. The input is the config
 * document (made NUL-terminated); a parse must either fill the config or say why in err.
 * Seeds: tests/configs/good and bad (tests/fuzz/seeds.py).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <spanbox/config.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	static struct sbx_config cfg;
	char *text = malloc(len + 1), err[512];

	if (text == NULL)
		return 0;
	memcpy(text, data, len);
	text[len] = '\0';
	if (sbx_config_parse(text, &cfg, err, sizeof(err)) != 0 && err[0] == '\0')
		abort(); /* a refusal always says why */
	free(text);
	return 0;
}
