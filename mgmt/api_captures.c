/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Routes: captures into pcapng files (docs/CAPTURE.md "Recording through the API").
 *
 * A capture is a mirror session whose destination is the primary's recorder (primary/recorder.c):
 * POST adds such a session to the running document and applies it as every runtime-table change
 * is (mgmt_tables_change: validated by sbx_config_parse, which compiles the filter and names the
 * field; the primary starts the recorder's slot before it publishes), DELETE removes it and then
 * its files. A capture is never stored (sbx_live_extract leaves it out): it ends with the mgmt
 * that started it (its owner_pid) and with the primary.
 *
 * Files: <mgmt.captures.directory>/<id>/<n>.pcapng, and <id>/state, which the recorder writes
 * ("running", "ended: <reason>"); a directory no running session owns is a capture of an earlier
 * run (a "running" state there: the primary that ran it is gone). The routes build every path from
 * the directory of the config and numbers only: ids and n are plain decimals, never names, so no
 * request reads or writes outside the capture directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "shmview.h"
#include "timefmt.h"
#include "validate.h"

#define MAX_FILE_NO 999999999L

/* The capture directory of the running config ("" when down). */
static const char *cap_dir(const struct sbx_shm *shm)
{
	return shm != NULL ? shm->cfg.capture_dir : "";
}

/* Path of capture @p id's directory, or of its file @p n (n > 0), or of its state file (n = 0
 * with @p state). */
static void cap_path(const struct sbx_shm *shm, long id, long n, bool state, char *buf, size_t len)
{
	if (n > 0)
		snprintf(buf, len, "%s/%ld/%ld.pcapng", cap_dir(shm), id, n);
	else if (state)
		snprintf(buf, len, "%s/%ld/state", cap_dir(shm), id);
	else
		snprintf(buf, len, "%s/%ld", cap_dir(shm), id);
}

/* @return the number of a "<n>.pcapng" name, -1 for any other name. */
static long file_no(const char *name)
{
	size_t d = strspn(name, "0123456789");
	char num[16];

	if (d == 0 || d > 9 || name[0] == '0' || strcmp(name + d, ".pcapng") != 0)
		return -1;
	memcpy(num, name, d);
	num[d] = '\0';
	return strtol(num, NULL, 10);
}

/* @return the id a directory name "<id>" stands for, -1 for any other name. */
static long dir_id(const char *name)
{
	long v = mgmt_decimal_param(name, 4);

	return v >= SBX_MIRROR_ID_MIN && v <= SBX_MIRROR_ID_MAX ? v : -1;
}

/* Bytes of the capture files of capture @p id (numbered files only). */
static uint64_t cap_bytes(const struct sbx_shm *shm, long id)
{
	char path[SBX_PATH_LEN + 64];
	struct dirent *e;
	uint64_t sum = 0;
	DIR *d;

	cap_path(shm, id, 0, false, path, sizeof(path));
	d = opendir(path);
	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		long n = file_no(e->d_name);
		struct stat st;

		if (n > 0 && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	}
	closedir(d);
	return sum;
}

/* true when no files of an older capture are kept under id @p id (@p shm: the memzone). */
static bool id_free(const void *shm, long id)
{
	char path[SBX_PATH_LEN + 64];
	struct stat st;

	cap_path(shm, id, 0, false, path, sizeof(path));
	return stat(path, &st) != 0;
}


/* What the capture directory holds and what running captures may still write. */
static void cap_room(const struct sbx_shm *shm, struct mgmt_capture_room *room)
{
	const struct sbx_config *cfg = sbx_shm_cfg(shm);
	struct dirent *e;
	DIR *d = opendir(cap_dir(shm));
	uint16_t i;

	memset(room, 0, sizeof(*room));
	room->quota = (uint64_t)shm->cfg.capture_quota_mb * 1024 * 1024;
	room->pid = (long)getpid();
	for (i = 0; i < shm->cfg.nb_ports && i < SBX_MAX_PORTS; i++)
		if ((uint64_t)shm->cfg.ports[i].mtu + SBX_FRAME_L2_OVERHEAD > room->max_frame)
			room->max_frame = (uint64_t)shm->cfg.ports[i].mtu + SBX_FRAME_L2_OVERHEAD;
	while (d != NULL && (e = readdir(d)) != NULL)
		if (dir_id(e->d_name) > 0)
			room->used += cap_bytes(shm, dir_id(e->d_name));
	if (d != NULL)
		closedir(d);
	for (i = 0; i < cfg->nb_mirrors; i++) {
		const struct sbx_capture_shm *cs = cfg->mirrors[i].dst_kind == SBX_DST_RECORDER
							   ? mgmt_capture_slot(shm, cfg->mirrors[i].id) : NULL;

		if (cs != NULL && cs->state == SBX_CAP_RUNNING && cfg->mirrors[i].rec.max_bytes > cs->disk_bytes)
			room->reserved += cfg->mirrors[i].rec.max_bytes - cs->disk_bytes;
	}
}

/* The state of a capture whose directory no running session owns: what its recorder said last. */
static void old_state(const struct sbx_shm *shm, long id, char *buf, size_t len)
{
	char path[SBX_PATH_LEN + 64], line[128] = "";
	FILE *f;

	cap_path(shm, id, 0, true, path, sizeof(path));
	f = fopen(path, "r");
	if (f != NULL) {
		if (fgets(line, sizeof(line), f) == NULL)
			line[0] = '\0';
		fclose(f);
	}
	line[strcspn(line, "\n")] = '\0';
	if (strncmp(line, "ended: ", 7) == 0)
		snprintf(buf, len, "%s", line);
	else /* "running" (or nothing): the primary that ran it stopped without ending it */
		snprintf(buf, len, "ended: primary restarted");
}

/* The files of capture @p id on disk, oldest first: [{"n", "bytes", "href"}]. */
static cJSON *files_json(const struct sbx_shm *shm, long id)
{
	char path[SBX_PATH_LEN + 64], href[96];
	cJSON *a = cJSON_CreateArray();
	long lo = MAX_FILE_NO + 1, hi = 0, n;
	struct dirent *e;
	DIR *d;

	cap_path(shm, id, 0, false, path, sizeof(path));
	d = opendir(path);
	while (d != NULL && (e = readdir(d)) != NULL) {
		n = file_no(e->d_name);
		if (n > 0) {
			lo = n < lo ? n : lo;
			hi = n > hi ? n : hi;
		}
	}
	if (d != NULL)
		closedir(d);
	for (n = lo; n <= hi && hi - lo < 100000; n++) {
		struct stat st;
		cJSON *f;

		cap_path(shm, id, n, false, path, sizeof(path));
		if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		f = cJSON_CreateObject();
		cJSON_AddNumberToObject(f, "n", (double)n);
		cJSON_AddNumberToObject(f, "bytes", (double)st.st_size);
		snprintf(href, sizeof(href), "/api/v1/captures/%ld/files/%ld", id, n);
		cJSON_AddStringToObject(f, "href", href);
		cJSON_AddItemToArray(a, f);
	}
	return a;
}

/* One capture as GET shows it: its config (session @p m, NULL for one of an earlier run), state,
 * counters and files. */
static cJSON *capture_json(const struct sbx_shm *shm, long id, const struct sbx_mirror_cfg *m, uint16_t idx)
{
	const struct sbx_capture_shm *cs = m != NULL ? mgmt_capture_slot(shm, id) : NULL;
	cJSON *o = cJSON_CreateObject(), *c;
	char state[160], when[32];

	cJSON_AddNumberToObject(o, "id", (double)id);
	if (m == NULL)
		old_state(shm, id, state, sizeof(state));
	else if (cs == NULL)
		snprintf(state, sizeof(state), "ended: not started");
	else if (cs->state == SBX_CAP_RUNNING)
		snprintf(state, sizeof(state), "running");
	else
		snprintf(state, sizeof(state), "ended: %.120s", cs->reason);
	cJSON_AddStringToObject(o, "state", state);
	if (m != NULL) {
		struct sbx_mirror_counters sum;
		cJSON *a = cJSON_AddArrayToObject(o, "sources"), *f;
		uint16_t k;

		cJSON_AddStringToObject(o, "name", m->name);
		for (k = 0; k < m->nb_sources && k < SBX_MAX_MIRROR_SOURCES; k++) {
			cJSON *src = cJSON_CreateObject();

			cJSON_AddStringToObject(src, "port", shm->cfg.ports[m->sources[k].port % SBX_MAX_PORTS].name);
			cJSON_AddStringToObject(src, "direction", sbx_direction_name(m->sources[k].direction));
			cJSON_AddItemToArray(a, src);
		}
		cJSON_AddStringToObject(o, "filter", m->filter);
		cJSON_AddNumberToObject(o, "snaplen", m->snaplen);
		f = cJSON_AddObjectToObject(o, "files");
		cJSON_AddNumberToObject(f, "count", m->rec.file_count);
		cJSON_AddNumberToObject(f, "mb", m->rec.file_mb);
		cJSON_AddNumberToObject(f, "seconds", m->rec.file_seconds);
		f = cJSON_AddObjectToObject(o, "stop");
		cJSON_AddNumberToObject(f, "packets", (double)m->rec.stop_packets);
		cJSON_AddNumberToObject(f, "bytes", (double)m->rec.stop_bytes);
		cJSON_AddNumberToObject(f, "seconds", m->rec.stop_seconds);
		cJSON_AddNumberToObject(o, "max_bytes", (double)m->rec.max_bytes);
		mgmt_mirror_sum(shm, idx, (uint16_t)(shm->cfg.nb_workers < SBX_MAX_WORKERS ? shm->cfg.nb_workers
										 : SBX_MAX_WORKERS), &sum);
		c = cJSON_AddObjectToObject(o, "counters");
		cJSON_AddNumberToObject(c, "captured", cs ? (double)cs->frames : 0);
		cJSON_AddNumberToObject(c, "bytes", cs ? (double)cs->bytes : 0);
		cJSON_AddNumberToObject(c, "filtered_out", (double)sum.filtered_out);
		cJSON_AddNumberToObject(c, "truncated", (double)sum.truncated);
		cJSON_AddNumberToObject(c, "dropped", (double)(sum.drop_txfull + sum.drop_nombuf + (cs ? cs->drop_disk : 0)));
		cJSON_AddNumberToObject(c, "dropped_ring_full", (double)sum.drop_txfull);
		cJSON_AddNumberToObject(c, "dropped_no_mbuf", (double)sum.drop_nombuf);
		cJSON_AddNumberToObject(c, "dropped_disk", cs ? (double)cs->drop_disk : 0);
		if (cs != NULL) {
			mgmt_rfc3339(cs->start_ns, when, sizeof(when));
			cJSON_AddStringToObject(o, "started", when);
			if (cs->end_ns) {
				mgmt_rfc3339(cs->end_ns, when, sizeof(when));
				cJSON_AddStringToObject(o, "ended", when);
			}
		}
	}
	cJSON_AddItemToObject(o, "downloads", files_json(shm, id));
	return o;
}

/* Path parameter {id}: 1..1023, else -1. */
/* 400 for a parameter that is not a plain number (a name, "..", a path): nothing is looked up. */
static unsigned int not_a_number(cJSON **body, const char *what, const char *s)
{
	*body = mgmt_error(MHD_HTTP_BAD_REQUEST, what, "%s: \"%.64s\" is not a capture %s (a plain decimal number)",
			   what, s, strcmp(what, "id") == 0 ? "id" : "file number");
	return MHD_HTTP_BAD_REQUEST;
}

static unsigned int get_captures(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm = mgmt_need_shm(r, body, &code);
	const struct sbx_config *cfg;
	struct dirent *e;
	DIR *d;
	uint16_t i;

	if (shm == NULL)
		return code;
	cfg = sbx_shm_cfg(shm);
	*body = cJSON_CreateArray();
	for (i = 0; i < cfg->nb_mirrors; i++)
		if (cfg->mirrors[i].dst_kind == SBX_DST_RECORDER)
			cJSON_AddItemToArray(*body, capture_json(shm, cfg->mirrors[i].id, &cfg->mirrors[i], i));
	d = opendir(cap_dir(shm));
	while (d != NULL && (e = readdir(d)) != NULL) {
		long id = dir_id(e->d_name);

		if (id > 0 && mgmt_capture_session(shm, id, NULL) == NULL)
			cJSON_AddItemToArray(*body, capture_json(shm, id, NULL, 0));
	}
	if (d != NULL)
		closedir(d);
	return code;
}

static unsigned int get_capture(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	long id = mgmt_mirror_id_param(r->params[0]);
	const struct sbx_shm *shm;
	const struct sbx_mirror_cfg *m;
	uint16_t idx = 0;

	if (id < 0)
		return not_a_number(body, "id", r->params[0]);
	shm = mgmt_need_shm(r, body, &code);
	if (shm == NULL)
		return code;
	m = mgmt_capture_session(shm, id, &idx);
	if (m == NULL && id_free(shm, id)) {
		*body = mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "no capture %ld", id);
		return MHD_HTTP_NOT_FOUND;
	}
	*body = capture_json(shm, id, m, idx);
	return code;
}

/* GET /captures/{id}/files/{n}: the file's bytes (application/octet-stream). */
static unsigned int get_capture_file(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	long id = mgmt_mirror_id_param(r->params[0]), n = mgmt_decimal_param(r->params[1], 9);
	char path[SBX_PATH_LEN + 64];
	const struct sbx_shm *shm;
	struct stat st;
	int fd;

	if (id < 0)
		return not_a_number(body, "id", r->params[0]);
	if (n < 1)
		return not_a_number(body, "n", r->params[1]);
	shm = mgmt_need_shm(r, body, &code);
	if (shm == NULL)
		return code;
	cap_path(shm, id, n, false, path, sizeof(path));
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		*body = mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "capture %ld has no file %ld", id, n);
		return MHD_HTTP_NOT_FOUND;
	}
	r->file_set = true;
	r->file_fd = fd;
	r->file_size = (uint64_t)st.st_size;
	snprintf(r->file_name, sizeof(r->file_name), "capture-%ld-%ld.pcapng", id, n);
	return MHD_HTTP_OK;
}

static unsigned int post_capture(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_CREATED;
	struct mgmt_capture_room room;
	struct mgmt_verdict v;
	char detail[160], prefix[32], evicted[64];
	const struct sbx_shm *shm;
	cJSON *in, *doc, *ok;
	long id = 0;

	if (mgmt_run_on(r, MGMT_LANE_CHANGES)) /* one change at a time; it waits for the primary */
		return 0;
	in = mgmt_parse_body(r, body, &code);
	if (in == NULL)
		return code;
	shm = mgmt_need_shm(r, body, &code);
	doc = shm != NULL ? mgmt_running_doc(r, body, &code) : NULL;
	if (doc == NULL) {
		cJSON_Delete(in);
		return code;
	}
	cap_room(shm, &room);
	mgmt_tables_evict_ended_captures(shm, doc, evicted, sizeof(evicted));
	if (mgmt_merge_post_capture(in, doc, &room, id_free, shm, &id, prefix, sizeof(prefix), &v) != 0) {
		*body = mgmt_error(v.code, v.field, "%s", v.msg);
		cJSON_Delete(in);
		cJSON_Delete(doc);
		return v.code;
	}
	cJSON_Delete(in);
	ok = cJSON_CreateObject();
	cJSON_AddNumberToObject(ok, "id", (double)id);
	snprintf(detail, sizeof(detail), "/api/v1/captures/%ld", id);
	cJSON_AddStringToObject(ok, "href", detail);
	snprintf(detail, sizeof(detail), "POST /api/v1/captures: capture %ld started%s%.80s", id,
		 evicted[0] ? "; ended captures out of the sessions:" : "", evicted);
	return mgmt_tables_change(r, body, doc, "capture_start", detail, MHD_HTTP_CREATED, ok, prefix);
}

/* Remove capture @p id's files and directory (numbered files and state only). */
static void cap_remove(const struct sbx_shm *shm, long id)
{
	char path[SBX_PATH_LEN + 64];
	struct dirent *e;
	DIR *d;

	cap_path(shm, id, 0, false, path, sizeof(path));
	d = opendir(path);
	while (d != NULL && (e = readdir(d)) != NULL)
		if (file_no(e->d_name) > 0 || strcmp(e->d_name, "state") == 0)
			unlinkat(dirfd(d), e->d_name, 0);
	if (d != NULL)
		closedir(d);
	rmdir(path);
}

/* DELETE /captures/{id}: end it (the session removed), then remove its files. */
static unsigned int delete_capture(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	long id = mgmt_mirror_id_param(r->params[0]);
	const struct sbx_shm *shm;
	char detail[160];
	cJSON *doc, *ok;
	int idx = -1;

	if (id < 0)
		return not_a_number(body, "id", r->params[0]);
	if (mgmt_run_on(r, MGMT_LANE_CHANGES))
		return 0;
	shm = mgmt_need_shm(r, body, &code);
	if (shm == NULL)
		return code;
	if (mgmt_capture_session(shm, id, NULL) != NULL) {
		doc = mgmt_running_doc(r, body, &code);
		if (doc == NULL)
			return code;
		if (mgmt_find_mirror(doc, id, &idx) == NULL) {
			cJSON_Delete(doc);
			*body = mgmt_error(MHD_HTTP_CONFLICT, NULL, "capture %ld: changed meanwhile, try again", id);
			return MHD_HTTP_CONFLICT;
		}
		cJSON_DeleteItemFromArray(mgmt_doc_array(doc, "mirrors"), idx);
		snprintf(detail, sizeof(detail), "DELETE /api/v1/captures/%ld: capture removed", id);
		ok = cJSON_CreateObject();
		cJSON_AddNumberToObject(ok, "id", (double)id);
		cJSON_AddBoolToObject(ok, "deleted", true);
		code = mgmt_tables_change(r, body, doc, "capture_delete", detail, MHD_HTTP_OK, ok, NULL);
		if (code != MHD_HTTP_OK)
			return code;
		/* the recorder closes the files after the change's grace period: wait for its slot */
		for (int i = 0; i < 300 && mgmt_capture_slot(shm, id) != NULL; i++) {
			struct timespec nap = { 0, 10000000 };

			nanosleep(&nap, NULL);
		}
	} else if (id_free(shm, id)) {
		*body = mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "no capture %ld", id);
		return MHD_HTTP_NOT_FOUND;
	} else {
		*body = cJSON_CreateObject();
		cJSON_AddNumberToObject(*body, "id", (double)id);
		cJSON_AddBoolToObject(*body, "deleted", true);
	}
	cap_remove(shm, id);
	return MHD_HTTP_OK;
}

const struct mgmt_route mgmt_routes_captures[] = {
	{ "GET", "/api/v1/captures", get_captures },
	{ "POST", "/api/v1/captures", post_capture },
	{ "GET", "/api/v1/captures/{id}", get_capture },
	{ "DELETE", "/api/v1/captures/{id}", delete_capture },
	{ "GET", "/api/v1/captures/{id}/files/{n}", get_capture_file },
	{ NULL, NULL, NULL },
};
