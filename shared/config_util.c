/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The typed getters every section's parser uses (config_int.h): each refuses a bad value with
 * "<path>.<key>: why" in the caller's error buffer.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"

const char cfg_name_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const char cfg_cpu_chars[] = "0123456789,-";
const char cfg_token_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.~+/=";

/* The name of @p value among @p choices, "unknown" when none has it. */
const char *cfg_choice_name(const struct cfg_choice *choices, uint8_t value)
{
	const struct cfg_choice *c;

	for (c = choices; c->name != NULL; c++)
		if (c->value == value)
			return c->name;
	return "unknown";
}

const struct cfg_choice cfg_direction_choices[] = {
	{"rx", SBX_DIR_RX}, {"tx", SBX_DIR_TX}, {"both", SBX_DIR_BOTH}, {NULL, 0}};

const char *sbx_direction_name(uint8_t d)
{
	return cfg_choice_name(cfg_direction_choices, d);
}

/* Write "<path>[.<key>]: <message>" to the error buffer; always returns -1. */
int cfg_fail(struct cfg_ctx *c, const char *path, const char *key, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->err == NULL || c->errlen == 0)
		return -1;
	n = snprintf(c->err, c->errlen, "%s%s%s: ", path, (*path && key) ? "." : "",
		     key ? key : "");
	if (n >= 0 && (size_t)n < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Member @key of @obj, or NULL when @obj is NULL or has no such member. */
const cJSON *cfg_member(const cJSON *obj, const char *key)
{
	return obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

/* Refuse members of object @obj that are not in @allowed (NULL-terminated) or appear twice. */
int cfg_check_keys(struct cfg_ctx *c, const cJSON *obj, const char *path,
		   const char *const allowed[])
{
	const cJSON *it, *prev;
	size_t i;

	cJSON_ArrayForEach(it, obj) {
		for (i = 0; allowed[i] && strcmp(allowed[i], it->string); i++)
			;
		if (!allowed[i])
			return cfg_fail(c, path, it->string, "unknown key");
		for (prev = obj->child; prev != it; prev = prev->next)
			if (!strcmp(prev->string, it->string))
				return cfg_fail(c, path, it->string, "duplicate key");
	}
	return 0;
}

/* Refuse an absent member @key of @obj. */
int cfg_need(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key)
{
	return cfg_member(obj, key) ? 0 : cfg_fail(c, path, key, "missing required key");
}

/* Fetch the object member @key of @obj into *out (NULL when absent) and check its keys;
 * @opath is the path of the object itself. */
int cfg_get_object(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		   const char *opath, const char *const allowed[], const cJSON **out)
{
	const cJSON *it = cfg_member(obj, key);

	*out = NULL;
	if (!it)
		return 0;
	if (!cJSON_IsObject(it))
		return cfg_fail(c, path, key, "expected an object");
	*out = it;
	return cfg_check_keys(c, it, opath, allowed);
}

/* Fetch the top-level object @key into *out (NULL when absent) and check its keys. */
int cfg_get_section(struct cfg_ctx *c, const cJSON *root, const char *key,
		    const char *const allowed[], const cJSON **out)
{
	return cfg_get_object(c, root, "", key, key, allowed, out);
}

/* Fetch the array member @key of @obj into *out (NULL when absent); at most @max entries. */
int cfg_get_array(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		  int max, const cJSON **out)
{
	const cJSON *it = cfg_member(obj, key);
	int n;

	*out = NULL;
	if (!it)
		return 0;
	if (!cJSON_IsArray(it))
		return cfg_fail(c, path, key, "expected an array");
	n = cJSON_GetArraySize(it);
	if (n > max)
		return cfg_fail(c, path, key, "%d entries, at most %d", n, max);
	*out = it;
	return 0;
}

/* Read the whole number @it into *out; refuse other types, fractions and values outside min..max. */
int cfg_to_int(struct cfg_ctx *c, const cJSON *it, const char *path, const char *key,
	       long long min, long long max, long long *out)
{
	double v;

	if (!cJSON_IsNumber(it))
		return cfg_fail(c, path, key, "expected an integer");
	v = it->valuedouble;
	/* beyond +-9e15 every double is whole (and out of any range here) */
	if (v > -9e15 && v < 9e15 && v != (double)(long long)v)
		return cfg_fail(c, path, key, "expected an integer");
	if (v < (double)min || v > (double)max)
		return cfg_fail(c, path, key, "%.15g out of range %lld..%lld", v, min, max);
	*out = (long long)v;
	return 0;
}

/* Integer member @key of @obj into *out, @def when absent (see to_int). */
int cfg_get_int(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		long long min, long long max, long long def, long long *out)
{
	const cJSON *it = cfg_member(obj, key);

	*out = def;
	return it ? cfg_to_int(c, it, path, key, min, max, out) : 0;
}

/* cfg_get_int() into a uint8_t. */
int cfg_get_u8(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
	       long long min, long long max, long long def, uint8_t *out)
{
	long long v;

	if (cfg_get_int(c, obj, path, key, min, max, def, &v))
		return -1;
	*out = (uint8_t)v;
	return 0;
}

/* cfg_get_int() into a uint16_t. */
int cfg_get_u16(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		long long min, long long max, long long def, uint16_t *out)
{
	long long v;

	if (cfg_get_int(c, obj, path, key, min, max, def, &v))
		return -1;
	*out = (uint16_t)v;
	return 0;
}

/* cfg_get_int() into a uint32_t. */
int cfg_get_u32(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		long long min, long long max, long long def, uint32_t *out)
{
	long long v;

	if (cfg_get_int(c, obj, path, key, min, max, def, &v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* Copy string @it into @dst[size]; refuse non-strings, too long, "" if @nonempty, bytes not in @chars. */
int cfg_to_string(struct cfg_ctx *c, const cJSON *it, const char *path, const char *key,
		  char *dst, size_t size, bool nonempty, const char *chars)
{
	const char *s;
	size_t len;

	if (!cJSON_IsString(it))
		return cfg_fail(c, path, key, "expected a string");
	s = it->valuestring;
	len = strlen(s);
	if (nonempty && len == 0)
		return cfg_fail(c, path, key, "must not be empty");
	if (len >= size)
		return cfg_fail(c, path, key, "longer than %zu characters", size - 1);
	if (chars && strspn(s, chars) != len)
		return cfg_fail(c, path, key, "\"%s\" has characters outside %s", s,
			    chars == cfg_name_chars ? "[A-Za-z0-9_-]" : "[0-9,-]");
	memcpy(dst, s, len + 1);
	return 0;
}

/* String member @key of @obj into @dst, @def when absent (see to_string). */
int cfg_get_string(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		   char *dst, size_t size, bool nonempty, const char *chars, const char *def)
{
	const cJSON *it = cfg_member(obj, key);

	if (it)
		return cfg_to_string(c, it, path, key, dst, size, nonempty, chars);
	snprintf(dst, size, "%s", def);
	return 0;
}

/* Boolean member @key of @obj into *out, @def when absent. */
int cfg_get_bool(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key, bool def,
		 bool *out)
{
	const cJSON *it = cfg_member(obj, key);

	*out = def;
	if (!it)
		return 0;
	if (!cJSON_IsBool(it))
		return cfg_fail(c, path, key, "expected true or false");
	*out = cJSON_IsTrue(it);
	return 0;
}

/* String @it, one of the names of @choices, into *out as its value. */
int cfg_to_choice(struct cfg_ctx *c, const cJSON *it, const char *path, const char *key,
		  const struct cfg_choice *choices, uint8_t *out)
{
	char list[128] = "";
	size_t i, n = 0;

	if (!cJSON_IsString(it))
		return cfg_fail(c, path, key, "expected a string");
	for (i = 0; choices[i].name; i++) {
		if (!strcmp(choices[i].name, it->valuestring)) {
			*out = choices[i].value;
			return 0;
		}
		if (n < sizeof(list))
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s\"%s\"", i ? ", " : "",
					      choices[i].name);
	}
	return cfg_fail(c, path, key, "\"%s\" is not one of %s", it->valuestring, list);
}

/* String member @key of @obj, one of the names of @choices, into *out as its value; @def when absent. */
int cfg_get_choice(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		   const struct cfg_choice *choices, uint8_t def, uint8_t *out)
{
	const cJSON *it = cfg_member(obj, key);

	*out = def;
	return it ? cfg_to_choice(c, it, path, key, choices, out) : 0;
}

/* Array member @key of @obj of names of @choices (each once) into *out as the OR of their values
 * (bits); 0 when absent. */
int cfg_get_flags(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		  const struct cfg_choice *choices, uint8_t *out)
{
	const cJSON *arr, *it;
	char epath[144];
	uint8_t v;
	int i = 0;

	*out = 0;
	if (cfg_get_array(c, obj, path, key, 16, &arr))
		return -1;
	cJSON_ArrayForEach(it, arr) {
		snprintf(epath, sizeof(epath), "%s.%s[%d]", path, key, i);
		if (cfg_to_choice(c, it, epath, NULL, choices, &v))
			return -1;
		if (*out & v)
			return cfg_fail(c, epath, NULL, "\"%s\" given twice", it->valuestring);
		*out |= v;
		i++;
	}
	return 0;
}

/* True when @s is a MAC address "aa:bb:cc:dd:ee:ff" (hex digits of either case); stored in @mac. */
bool cfg_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int i, k, v;

	if (strlen(s) != 17)
		return false;
	for (i = 0; i < 6; i++, s += 3) {
		if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]) ||
		    (i < 5 && s[2] != ':'))
			return false;
		for (v = 0, k = 0; k < 2; k++)
			v = v * 16 + (unsigned int)(isdigit((unsigned char)s[k])
							    ? s[k] - '0'
							    : tolower((unsigned char)s[k]) - 'a' + 10);
		mac[i] = (uint8_t)v;
	}
	return true;
}

/* True when @s starts with @pat ('h' = a hex digit, anything else literal) then ends or has ','. */
bool cfg_match_pci(const char *s, const char *pat)
{
	for (; *pat; pat++, s++)
		if (*pat == 'h' ? !isxdigit((unsigned char)*s) : *s != *pat)
			return false;
	return *s == '\0' || *s == ',';
}

/* True when @s is "a.b.c.d/len" with a valid IPv4 address and len 0..32. */
bool cfg_is_ipv4_cidr(const char *s)
{
	const char *slash = strchr(s, '/');
	char ip[INET_ADDRSTRLEN];
	struct in_addr a;
	size_t n;

	if (!slash || (size_t)(slash - s) >= sizeof(ip))
		return false;
	memcpy(ip, s, (size_t)(slash - s));
	ip[slash - s] = '\0';
	if (inet_pton(AF_INET, ip, &a) != 1)
		return false;
	n = strlen(++slash);
	return n >= 1 && n <= 2 && strspn(slash, "0123456789") == n && atoi(slash) <= 32;
}

/* Parse the required port name member "port" of @obj (at @path) into its index *out. */
int cfg_get_port(struct cfg_ctx *c, const struct sbx_config *cfg, const cJSON *obj,
		 const char *path, int *out)
{
	char name[SBX_NAME_LEN];

	if (cfg_need(c, obj, path, "port") ||
	    cfg_get_string(c, obj, path, "port", name, sizeof(name), true, NULL, ""))
		return -1;
	*out = sbx_config_port_index(cfg, name);
	return *out < 0 ? cfg_fail(c, path, "port", "unknown port \"%s\"", name) : 0;
}

/* Parse the IPv4 or IPv6 literal member @key of @obj into @ip (network order); *version = 4 or 6. */
int cfg_get_ip(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
	       uint8_t ip[16], uint8_t *version, char *text, size_t size)
{
	if (cfg_get_string(c, obj, path, key, text, size, true, NULL, ""))
		return -1;
	if (inet_pton(AF_INET, text, ip) == 1)
		*version = 4;
	else if (inet_pton(AF_INET6, text, ip) == 1)
		*version = 6;
	else
		return cfg_fail(c, path, key, "\"%s\" is not an IPv4 or IPv6 address", text);
	return 0;
}

/* Parse the MAC address member @key of @obj into @mac. */
int cfg_get_mac(struct cfg_ctx *c, const cJSON *obj, const char *path, const char *key,
		uint8_t mac[6])
{
	char text[SBX_NAME_LEN];

	if (cfg_get_string(c, obj, path, key, text, sizeof(text), true, NULL, ""))
		return -1;
	if (!cfg_parse_mac(text, mac))
		return cfg_fail(c, path, key, "\"%s\" is not a MAC address like aa:bb:cc:dd:ee:ff", text);
	return 0;
}
