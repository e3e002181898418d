/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Routes: the stats history: GET /stats/history (docs/MGMT.md "Stats history").
 * Reads SQLite only (history.c, its own read-only connection): it answers while the appliance is
 * down and while another process holds the database's write lock.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "db.h"
#include "history.h"

/** A metric the history answers, and how. */
struct metric {
	const char *kind;   /**< object kind: the query parameter that selects it */
	const char *name;
	const char *unit;
	bool counter;       /**< counter: answered as a rate per second; else a gauge: the value */
};

/* the counters of counters.h marked SERIES, as history.c samples them */
#define PORT_METRIC(field, key, prom, unit, hist, help) SBX_IF_SERIES(hist, { "port", key, unit "/s", true },)
#define WORKER_METRIC(field, json, prom, unit, hist, help) SBX_IF_SERIES(hist, { "worker", json, unit "/s", true },)
#define MIRROR_METRIC(field, json, replay, prom, reason, unit, hist, help)                             \
	SBX_IF_SERIES(hist, { "mirror", json, unit "/s", true },)
#define MAP_METRIC(field, json, replay, prom, reason, unit, hist, help)                                \
	SBX_IF_SERIES(hist, { "map", json, unit "/s", true },)

static const struct metric metrics[] = {
	SBX_FOREACH_ETHDEV_COUNTER(PORT_METRIC)
	{ "port", "drops", "packets/s", true },         { "worker", "packets", "packets/s", true },
	SBX_FOREACH_WORKER_COUNTER(WORKER_METRIC)
	{ "worker", "restarts", "restarts", false },
	SBX_FOREACH_MIRROR_COUNTER(MIRROR_METRIC)
	{ "mirror", "drops", "packets/s", true },
	{ "map", "passed", "packets/s", true },
	SBX_FOREACH_MIRROR_COUNTER(MAP_METRIC)
	{ "map", "drops", "packets/s", true },
	{ "pool", "in_use", "mbufs", false },
};

static const char *const params[] = { "metric", "port", "worker", "mirror", "map", "pool", "from", "to", "step" };
static const char *const kinds[] = { "port", "worker", "mirror", "map", "pool" };

/* default steps: the first one giving at most ~1000 points (and a multiple of the resolution) */
static const int64_t nice_steps[] = { 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
				      7200, 10800, 21600, 43200, 86400 };

/* MHD iterator: remember the first parameter that is not one of params[]. */
/* What the query-argument scan found wrong: an unknown parameter, or a known one given twice. */
struct param_scan {
	const char *bad;
	bool twice;
	unsigned int seen[sizeof(params) / sizeof(params[0])];
};

static enum MHD_Result unknown_param(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct param_scan *ps = cls;
	size_t i;

	(void)kind;
	(void)value;
	for (i = 0; i < sizeof(params) / sizeof(params[0]); i++)
		if (strcmp(key, params[i]) == 0) {
			if (++ps->seen[i] == 1)
				return MHD_YES;
			ps->twice = true; /* MHD's lookup would silently take the first */
			break;
		}
	ps->bad = key;
	return MHD_NO;
}

/* "DD" digits at s into *v. @return 0 or -1. */
static int digits(const char *s, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

/*
 * A time: unix seconds ("1764475200") or RFC 3339 ("2026-11-30T04:00:00Z", fraction and a
 * numeric offset allowed; the '+' of an offset may arrive as a space, as URL-decoding makes it).
 * @return 0, -1 when malformed.
 */
static int parse_time(const char *s, int64_t *out)
{
	struct tm tm = { 0 };
	int y, mo, d, h, mi, sec, oh, om, sign;
	const char *p;
	char *end;

	if (*s != '\0' && strspn(s, "0123456789") == strlen(s)) {
		if (strlen(s) > 12)
			return -1;
		*out = strtoll(s, &end, 10);
		return 0;
	}
	if (strlen(s) < 20 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) || s[7] != '-' ||
	    digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
	    digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' ||
	    digits(s + 17, 2, &sec))
		return -1;
	if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -1;
	p = s + 19;
	if (*p == '.') { /* fraction: dropped (the history has 1 s resolution) */
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p))
			p++;
	}
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	*out = (int64_t)timegm(&tm);
	if ((*p == 'Z' || *p == 'z') && p[1] == '\0')
		return 0;
	if ((*p != '+' && *p != '-' && *p != ' ') || strlen(p) != 6 || digits(p + 1, 2, &oh) ||
	    p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 || om > 59)
		return -1;
	sign = *p == '-' ? -1 : 1;
	*out -= sign * (int64_t)(oh * 3600 + om * 60);
	return 0;
}

/* Is object (@p kind, @p name) configured in the running appliance? */
static bool configured(const struct sbx_shm *shm, const char *kind, const char *name)
{
	const struct sbx_config *cfg;
	unsigned int i;
	char *end;
	long v;

	if (shm == NULL)
		return false;
	if (strcmp(kind, "port") == 0) {
		for (i = 0; i < shm->cfg.nb_ports && i < SBX_MAX_PORTS; i++)
			if (strncmp(shm->cfg.ports[i].name, name, SBX_NAME_LEN) == 0)
				return true;
		return false;
	}
	if (strcmp(kind, "pool") == 0) {
		for (i = 0; i < shm->nb_pools && i < SBX_MAX_POOLS; i++)
			if (strncmp(shm->pools[i].name, name, SBX_NAME_LEN) == 0)
				return true;
		return false;
	}
	if (!isdigit((unsigned char)name[0]) || strlen(name) > 6)
		return false;
	v = strtol(name, &end, 10);
	if (*end != '\0')
		return false;
	if (strcmp(kind, "worker") == 0)
		return v < shm->cfg.nb_workers && v < SBX_MAX_WORKERS;
	cfg = sbx_shm_cfg(shm); /* mgmt attaches only once the tables are published */
	if (strcmp(kind, "map") == 0) {
		for (i = 0; i < cfg->nb_maps && i < SBX_MAX_MAPS; i++)
			if (cfg->maps[i].s.id == v)
				return true;
		return false;
	}
	for (i = 0; i < cfg->nb_mirrors && i < SBX_MAX_MIRRORS; i++)
		if (cfg->mirrors[i].id == v)
			return true;
	return false;
}

#define BAD(field, ...)                                                                            \
	do {                                                                                       \
		*body = mgmt_error(MHD_HTTP_BAD_REQUEST, (field), __VA_ARGS__);                    \
		return MHD_HTTP_BAD_REQUEST;                                                       \
	} while (0)

/* GET /stats/history?metric=M&(port|worker|mirror|pool)=NAME[&from=T][&to=T][&step=S] */
static unsigned int get_history(struct req *r, cJSON **body)
{
	struct mgmt_history *h = r->ctx->db ? r->ctx->db->history : NULL;
	const char *bad = NULL, *kind = NULL, *name = NULL, *ms, *fs, *ts, *ss;
	const struct metric *m = NULL;
	int64_t now = time(NULL), from, to, step = 0, res, npoints;
	const struct sbx_shm *shm;
	char why[256], *end;
	cJSON *o, *obj, *pts;
	size_t i;

	struct param_scan scan = { 0 };

	MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, unknown_param, &scan);
	bad = scan.bad;
	if (bad != NULL && scan.twice)
		BAD(bad, "parameter '%s' given more than once", bad);
	if (bad != NULL)
		BAD(bad, "unknown parameter '%s' (known: metric, port, worker, mirror, map, pool, from, to, step)", bad);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const char *v = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, kinds[i]);

		if (v == NULL)
			continue;
		if (kind != NULL)
			BAD(kinds[i], "exactly one of port, worker, mirror, map, pool is required: got %s and %s", kind, kinds[i]);
		if (*v == '\0' || strlen(v) >= SBX_NAME_LEN)
			BAD(kinds[i], "%s: expected a name of 1..%d characters", kinds[i], SBX_NAME_LEN - 1);
		kind = kinds[i];
		name = v;
	}
	if (kind == NULL)
		BAD("port", "exactly one of port, worker, mirror, map, pool is required");
	ms = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "metric");
	if (ms == NULL || *ms == '\0')
		BAD("metric", "metric is required");
	for (i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
		if (strcmp(metrics[i].kind, kind) == 0 && strcmp(metrics[i].name, ms) == 0)
			m = &metrics[i];
	if (m == NULL) {
		char list[512] = "";

		for (i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
			if (strcmp(metrics[i].kind, kind) == 0)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 list[0] ? ", " : "", metrics[i].name);
		BAD("metric", "unknown metric '%.64s' for a %s (known: %s)", ms, kind, list);
	}
	ts = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "to");
	fs = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "from");
	to = now;
	if (ts != NULL && parse_time(ts, &to) < 0)
		BAD("to", "to: '%.64s' is not RFC 3339 (2026-11-30T04:00:00Z) nor unix seconds", ts);
	from = to - 3600;
	if (fs != NULL && parse_time(fs, &from) < 0)
		BAD("from", "from: '%.64s' is not RFC 3339 (2026-11-30T04:00:00Z) nor unix seconds", fs);
	if (from > to)
		BAD("from", "from (%lld) is after to (%lld)", (long long)from, (long long)to);
	/* resolution of the finest table that still covers from */
	res = now - from <= MGMT_HISTORY_KEEP_1S ? (h ? h->interval_s : 1)
	      : now - from <= MGMT_HISTORY_KEEP_10S ? 10 : 60;
	ss = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, "step");
	if (ss != NULL) {
		step = strtoll(ss, &end, 10);
		if (*ss == '\0' || *end != '\0' || !isdigit((unsigned char)*ss) || step < 1 || step > 86400 * 30)
			BAD("step", "step: '%.32s' is not an integer number of seconds in 1..2592000", ss);
	} else {
		int64_t want = (to - from + 999) / 1000;

		for (i = 0; i < sizeof(nice_steps) / sizeof(nice_steps[0]); i++)
			if (nice_steps[i] >= want && nice_steps[i] >= res && nice_steps[i] % res == 0)
				break;
		step = i < sizeof(nice_steps) / sizeof(nice_steps[0]) ? nice_steps[i]
								       : (want + 86399) / 86400 * 86400;
		if (step > 86400 * 30) /* the documented range of step: a wider range gets fewer points */
			step = 86400 * 30;
	}
	npoints = to / step - (from + step - 1) / step + 1;
	if (npoints > MGMT_HISTORY_MAX_POINTS)
		BAD("step", "step %lld over %lld s gives %lld points, more than %d", (long long)step,
		    (long long)(to - from), (long long)npoints, MGMT_HISTORY_MAX_POINTS);
	if (h == NULL) {
		*body = mgmt_error(MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "the stats history is not available");
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	shm = mgmt_live_shm(r->ctx, why, sizeof(why));
	if (!configured(shm, kind, name) && !mgmt_history_known(h, kind, name)) {
		*body = mgmt_error(MHD_HTTP_NOT_FOUND, kind, "no %s %s (neither running nor in the history)", kind, name);
		return MHD_HTTP_NOT_FOUND;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "metric", m->name);
	obj = cJSON_AddObjectToObject(o, "object");
	cJSON_AddStringToObject(obj, "kind", kind);
	cJSON_AddStringToObject(obj, "name", name);
	cJSON_AddStringToObject(o, "unit", m->unit);
	cJSON_AddNumberToObject(o, "step", (double)step);
	cJSON_AddNumberToObject(o, "from", (double)from);
	cJSON_AddNumberToObject(o, "to", (double)to);
	cJSON_AddNumberToObject(o, "resolution_s", (double)res);
	pts = cJSON_AddArrayToObject(o, "points");
	if (mgmt_history_query(h, kind, name, m->name, m->counter, from, to, step, pts) < 0) {
		cJSON_Delete(o);
		*body = mgmt_error(MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "the stats history cannot be read now");
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	*body = o;
	return MHD_HTTP_OK;
}

const struct mgmt_route mgmt_routes_history[] = {
	{ "GET", "/api/v1/stats/history", get_history },
	{ NULL, NULL, NULL },
};
