/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: every check a writing REST route makes of its body (mgmt/validate.c,
 * mgmt_validate_write(): the same functions the routes call, then sbx_config_parse() of the
 * resulting document as change() does), against the running config SBX_FUZZ_RUNNING
 * (tests/configs/good/mirrors.json).
 * Input: byte 0 = the route (enum mgmt_write_route, modulo MGMT_W_COUNT; PUT /tool_groups/{name}: the
 * {name} comes from byte 1, validate.h), byte 1 = the {id} of
 * PUT /mirrors/{id} (an index into the running sessions, else the byte's value; for PUT
 * /ports/{name}/ingress the port's index, modulo 8), then the body.
 * A refusal must be one of the statuses the routes document and say why.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

static char *running;
static long ids[SBX_MIRROR_ID_MAX];
static int nb_ids;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *f = fopen(SBX_FUZZ_RUNNING, "r");
	cJSON *doc, *m;
	long n;

	(void)argc;
	(void)argv;
	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    (running = calloc(1, (size_t)n + 1)) == NULL || fread(running, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "fuzz_rest: cannot read the running config %s\n", SBX_FUZZ_RUNNING);
		exit(2);
	}
	fclose(f);
	doc = cJSON_Parse(running);
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(doc, "mirrors"))
		if (nb_ids < SBX_MIRROR_ID_MAX)
			ids[nb_ids++] = (long)cJSON_GetObjectItemCaseSensitive(m, "id")->valuedouble;
	cJSON_Delete(doc);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct mgmt_verdict v;
	unsigned int code;
	char *body;
	long id;

	if (len < 2)
		return 0;
	if (data[0] % MGMT_W_COUNT == MGMT_W_PUT_INGRESS)
		id = data[1] % 8; /* a port index (the running config has fewer: 404 beyond) */
	else
		id = data[1] < nb_ids ? ids[data[1]] : (long)data[1] * 4;
	body = malloc(len - 1);
	if (body == NULL)
		return 0;
	memcpy(body, data + 2, len - 2);
	body[len - 2] = '\0';
	code = mgmt_validate_write((enum mgmt_write_route)(data[0] % MGMT_W_COUNT), body, len - 2, running, id,
				   "<redacted>", &v);
	if (code != 0 && ((code != 400 && code != 404 && code != 409 && code != 422) || v.msg[0] == '\0'))
		abort(); /* 500 (out of memory, unparsable running config) never happens here */
	free(body);
	return 0;
}
