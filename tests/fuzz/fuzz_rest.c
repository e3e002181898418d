/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: every check a writing REST route makes of its body (mgmt/validate.c,
 * mgmt_validate_write(): the same functions the routes call, then sbx_config_parse() of the
 * resulting document as change() does), against the running config SBX_FUZZ_RUNNING
 * (tests/configs/good/mirrors.json), or for the map routes (POST /maps, PUT /maps/{id}, POST
 * /maps/{id}/rules: their rules parsed by the same sbx_config_parse) SBX_FUZZ_RUNNING_MAPS
 * (tests/configs/good/maps.json: that config plus three maps with rules of every field).
 * Input: byte 0 = the route (enum mgmt_write_route, modulo MGMT_W_COUNT; PUT /tool_groups/{name}: the
 * {name} comes from byte 1, validate.h), byte 1 = the {id} of
 * PUT /mirrors/{id} and of the map routes (an index into the running sessions or maps, else the
 * byte's value; for PUT /ports/{name}/ingress the port's index, modulo 8), then the body.
 * A refusal must be one of the statuses the routes document and say why.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

/* A running config and the ids of its sessions of one kind. */
struct running {
	char *text;
	long ids[SBX_MIRROR_ID_MAX];
	int nb_ids;
};
static struct running mirrors, maps;

/* Read @p path into @p r, with the ids of its array @p key; exits on an error. */
static void load(struct running *r, const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	cJSON *doc, *m;
	long n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    (r->text = calloc(1, (size_t)n + 1)) == NULL || fread(r->text, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "fuzz_rest: cannot read the running config %s\n", path);
		exit(2);
	}
	fclose(f);
	doc = cJSON_Parse(r->text);
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(doc, key))
		if (r->nb_ids < SBX_MIRROR_ID_MAX)
			r->ids[r->nb_ids++] = (long)cJSON_GetObjectItemCaseSensitive(m, "id")->valuedouble;
	cJSON_Delete(doc);
	if (r->nb_ids == 0) {
		fprintf(stderr, "fuzz_rest: %s has no %s\n", path, key);
		exit(2);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	load(&mirrors, SBX_FUZZ_RUNNING, "mirrors");
	load(&maps, SBX_FUZZ_RUNNING_MAPS, "maps");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct mgmt_verdict v;
	unsigned int code;
	char *body;
	long id;

	const enum mgmt_write_route route = (enum mgmt_write_route)(data[0] % MGMT_W_COUNT);
	const struct running *run;

	if (len < 2)
		return 0;
	run = route == MGMT_W_POST_MAP || route == MGMT_W_PUT_MAP || route == MGMT_W_POST_RULE ? &maps : &mirrors;
	if (route == MGMT_W_PUT_INGRESS)
		id = data[1] % 8; /* a port index (the running config has fewer: 404 beyond) */
	else
		id = data[1] < run->nb_ids ? run->ids[data[1]] : (long)data[1] * 4;
	body = malloc(len - 1);
	if (body == NULL)
		return 0;
	memcpy(body, data + 2, len - 2);
	body[len - 2] = '\0';
	code = mgmt_validate_write(route, body, len - 2, run->text, id, "<redacted>", &v);
	if (code != 0 && ((code != 400 && code != 404 && code != 409 && code != 422) || v.msg[0] == '\0'))
		abort(); /* 500 (out of memory, unparsable running config) never happens here */
	free(body);
	return 0;
}
