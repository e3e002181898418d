/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Route: GET /metrics (Prometheus text exposition format 0.0.4). The counter families come from
 * the lists of include/spanbox/counters.h; the port routes are in api_ports.c.
 *
 * /metrics reads the memzone like /status does, through the same helpers of status.c, so a number
 * shown by both is the same number. Families are written one after the other, every sample of a
 * family together (the format requires it), each with its # HELP and # TYPE lines. Counters are
 * uint64 printed as integers (exact, unlike JSON doubles).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mempool.h>

#include "spanbox/decap.h"

#include "api.h"
#include "http.h"
#include "attach.h"
#include "db.h"
#include "ingress_view.h"
#include "pool_audit.h"
#include "status.h"
#include "watch.h"

#ifndef SBX_VERSION
#define SBX_VERSION "0.0.0"
#endif

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* ------------------------------------------------------------------------------------------- */
/* A growing text buffer. */

/** The exposition text being built. On allocation failure @c oom is set and appends are ignored. */
struct pbuf {
	char *s;     /**< NUL-terminated, malloc'd; the caller frees */
	size_t len;  /**< bytes used, NUL excluded */
	size_t cap;  /**< bytes allocated */
	bool oom;
};

static void pb_printf(struct pbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void pb_printf(struct pbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->s != NULL && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t cap = b->cap ? b->cap : 16384;
			char *p;

			while (cap < b->len + (size_t)n + 1)
				cap *= 2;
			p = realloc(b->s, cap);
			if (p == NULL) {
				b->oom = true;
				return;
			}
			b->s = p;
			b->cap = cap;
		}
	}
}

/*
 * Append label @p key with value @p val (at most @p vlen bytes, stops at a NUL) to the label set
 * @p out (size @p outlen), escaped as the format wants: backslash, double quote and newline. A comma
 * goes first when @p out is not empty. A label that does not fit whole is left out (never cut).
 */
static void label(char *out, size_t outlen, const char *key, const char *val, size_t vlen)
{
	size_t n = strlen(out), k = strlen(key), i, need = n + (n ? 1 : 0) + k + 3; /* , key = "" */
	char *p;

	for (i = 0; i < vlen && val[i] != '\0'; i++)
		need += (val[i] == '\\' || val[i] == '"' || val[i] == '\n') ? 2 : 1;
	if (need + 1 > outlen)
		return;
	p = out + n;
	if (n)
		*p++ = ',';
	memcpy(p, key, k);
	p += k;
	*p++ = '=';
	*p++ = '"';
	for (i = 0; i < vlen && val[i] != '\0'; i++) {
		if (val[i] == '\\' || val[i] == '"') {
			*p++ = '\\';
			*p++ = val[i];
		} else if (val[i] == '\n') {
			*p++ = '\\';
			*p++ = 'n';
		} else {
			*p++ = val[i];
		}
	}
	*p++ = '"';
	*p = '\0';
}

/* Copy label set @p a, then a comma and label set @p b when both are non-empty, into @p out. */
static void labels_join(char *out, size_t outlen, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	out[0] = '\0';
	if (la + 1 + lb + 1 > outlen)
		return; /* cannot happen with the sizes below */
	memcpy(out, a, la);
	if (la && lb)
		out[la++] = ',';
	memcpy(out + la, b, lb + 1);
}

/* label() for a NUL-terminated value. */
static void label_s(char *out, size_t outlen, const char *key, const char *val)
{
	label(out, outlen, key, val, strlen(val));
}

/* label() for an unsigned number. */
static void label_u(char *out, size_t outlen, const char *key, unsigned long long v)
{
	char num[24];

	snprintf(num, sizeof(num), "%llu", v);
	label_s(out, outlen, key, num);
}

/* label() for a signed number. */
static void label_i(char *out, size_t outlen, const char *key, long long v)
{
	char num[24];

	snprintf(num, sizeof(num), "%lld", v);
	label_s(out, outlen, key, num);
}

/* # HELP and # TYPE of one family. @p help holds no backslash or newline (constants below). */
static void family(struct pbuf *b, const char *name, const char *type, const char *help)
{
	pb_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void sample_u(struct pbuf *b, const char *name, const char *labels, uint64_t v)
{
	pb_printf(b, labels[0] ? "%s{%s} %" PRIu64 "\n" : "%s%s %" PRIu64 "\n", name, labels, v);
}

static void sample_d(struct pbuf *b, const char *name, const char *labels, double v)
{
	pb_printf(b, labels[0] ? "%s{%s} %.17g\n" : "%s%s %.17g\n", name, labels, v);
}

/* ------------------------------------------------------------------------------------------- */
/* Families. */

#define LBL 160 /* bytes of one sample's label set */

/** A uint64 field of a struct, read at @c off. */
struct fam {
	const char *name, *type, *help;
	size_t off;
};

#define U64_AT(base, off) (*(const uint64_t *)((const char *)(base) + (off)))

#define ETHDEV_FAM(field, key, prom, unit, hist, help) { prom, "counter", help, offsetof(struct sbx_port_shm, field) },
static const struct fam port_fams[] = { SBX_FOREACH_ETHDEV_COUNTER(ETHDEV_FAM) };

/* the counter families of counters.h: one family per counter, in list order */
#define PORT_FAM(field, json, prom, unit, hist, help) { prom, "counter", help, offsetof(struct sbx_port_counters, field) },
#define WORKER_FAM(field, json, prom, unit, hist, help) { prom, "counter", help, offsetof(struct sbx_worker_stats, field) },

static const struct fam worker_port_fams[] = { SBX_FOREACH_PORT_COUNTER(PORT_FAM) };

static const struct fam worker_fams[] = { SBX_FOREACH_WORKER_COUNTER(WORKER_FAM) };

/** A mirror counter: a family of its own (reason NULL) or one label value of a shared family. */
struct mirror_fam {
	struct fam f;
	const char *reason;
};

#define MIRROR_FAM(field, json, replay, prom, reason, unit, hist, help)                                \
	{ { prom, "counter", help, offsetof(struct sbx_mirror_counters, field) }, reason },

static const struct mirror_fam mirror_fams[] = { SBX_FOREACH_MIRROR_COUNTER(MIRROR_FAM) };

/* The run-time problems of /health (watch.h), counted by kind: 0 samples too, for alerts. */
static void health_metrics(struct pbuf *b, const struct sbx_shm *shm)
{
	static const char *const kinds[] = { "worker", "pool" };
	cJSON *p = mgmt_watch_problems(shm), *it;
	size_t k;

	family(b, "spanbox_health_problems", "gauge",
	       "Run-time problems GET /api/v1/health lists now (degraded while any), by kind.");
	for (k = 0; k < RTE_DIM(kinds); k++) {
		char l[LBL] = "";
		uint64_t n = 0;

		cJSON_ArrayForEach(it, p) {
			const cJSON *kind = cJSON_GetObjectItemCaseSensitive(it, "kind");

			n += cJSON_IsString(kind) && strcmp(kind->valuestring, kinds[k]) == 0;
		}
		label_s(l, sizeof(l), "kind", kinds[k]);
		sample_u(b, "spanbox_health_problems", l, n);
	}
	cJSON_Delete(p);
}

/* Per-port families (ethdev counters refreshed by the primary every 100 ms, link). */
static void port_metrics(struct pbuf *b, const struct sbx_shm *shm, char (*plbl)[LBL])
{
	uint16_t nb = mgmt_nb_ports(shm), i;
	int16_t peer[SBX_MAX_PORTS];
	size_t f;

	for (f = 0; f < RTE_DIM(port_fams); f++) {
		family(b, port_fams[f].name, port_fams[f].type, port_fams[f].help);
		for (i = 0; i < nb; i++)
			sample_u(b, port_fams[f].name, plbl[i], U64_AT(&shm->ports[i], port_fams[f].off));
	}
	family(b, "spanbox_port_link_up", "gauge", "1 when the port's link is up, else 0.");
	for (i = 0; i < nb; i++)
		sample_u(b, "spanbox_port_link_up", plbl[i], shm->ports[i].link_up != 0);
	/* a worker in state failed is not restarted until asked: what arrives on its queues is lost */
	family(b, "spanbox_port_rx_queues_unpolled", "gauge",
	       "RX queues of the port whose worker is failed (crash_limit): nobody polls them until it is restarted.");
	for (i = 0; i < nb; i++) {
		uint16_t w, q, n = 0;

		for (w = 0; w < mgmt_nb_workers(shm); w++)
			for (q = 0; sbx_shm_worker(shm, w)->state == SBX_W_FAILED && q < shm->placement[w].nb_rxq &&
				    q < SBX_MAX_RXQ_PER_WORKER; q++)
				n += shm->placement[w].rxq[q].port == i;
		sample_u(b, "spanbox_port_rx_queues_unpolled", plbl[i], n);
	}
	family(b, "spanbox_port_link_speed_bytes", "gauge", "Link speed in bytes per second (0 when unknown).");
	for (i = 0; i < nb; i++)
		sample_u(b, "spanbox_port_link_speed_bytes", plbl[i], (uint64_t)shm->ports[i].link_speed * 125000);
	family(b, "spanbox_port_info", "gauge", "Always 1: the port's kind (ethdev or bridged), peer and DPDK port id.");
	sbx_config_peer_map(sbx_shm_cfg(shm), peer); /* as the active tables forward */
	for (i = 0; i < nb; i++) {
		const struct sbx_port_shm *ps = &shm->ports[i];
		char l[2 * LBL];

		labels_join(l, sizeof(l), plbl[i], "");
		label_s(l, sizeof(l), "kind", shm->cfg.ports[i].kind == SBX_PORT_PCAP_FILE ? "bridged" : "ethdev");
		if (peer[i] >= 0 && peer[i] < nb)
			label(l, sizeof(l), "peer", shm->cfg.ports[peer[i]].name, sizeof(shm->cfg.ports[0].name));
		else
			label_s(l, sizeof(l), "peer", "");
		label_u(l, sizeof(l), "port_id", ps->port_id);
		sample_u(b, "spanbox_port_info", l, 1);
	}
}

/* Microburst windows per port and direction (shm->microburst[], primary/microburst.c; docs/MGMT.md
 * "Microbursts"): the histogram of the windows' utilisation, the last second's peak, the bursts and
 * what was not counted. Absent when microburst.enabled is false. */
static void microburst_metrics(struct pbuf *b, const struct sbx_shm *shm, char (*plbl)[LBL])
{
	static const char *const dir[2] = {"rx", "tx"};
	static const char *const hist = "spanbox_port_window_utilisation_ratio";
	uint16_t nb = mgmt_nb_ports(shm), i;
	char l[2 * LBL], n[96];
	unsigned int d, k;

	if (!shm->cfg.mb_enabled)
		return;
	family(b, hist, "histogram", "Utilisation of the port's speed in each window of microburst.window_us "
	       "(windows of ports with a known speed only).");
	for (i = 0; i < nb; i++)
		for (d = 0; d < 2; d++) {
			const struct sbx_mb_port_shm *m = &shm->microburst[i];
			uint64_t cum = 0;

			for (k = 0; k < SBX_MB_BUCKETS; k++) {
				cum += m->hist[d][k];
				labels_join(l, sizeof(l), plbl[i], "");
				label_s(l, sizeof(l), "direction", dir[d]);
				label_s(l, sizeof(l), "le", sbx_mb_bucket_le(k));
				snprintf(n, sizeof(n), "%s_bucket", hist);
				sample_u(b, n, l, cum);
			}
			labels_join(l, sizeof(l), plbl[i], "");
			label_s(l, sizeof(l), "direction", dir[d]);
			snprintf(n, sizeof(n), "%s_sum", hist);
			sample_d(b, n, l, m->sum_ppm[d] / 1e6);
			snprintf(n, sizeof(n), "%s_count", hist);
			sample_u(b, n, l, cum);
		}
	family(b, "spanbox_port_window_peak_utilisation_ratio", "gauge",
	       "Utilisation of the busiest window of the last whole second (absent without a known speed).");
	for (i = 0; i < nb; i++)
		for (d = 0; d < 2 && shm->microburst[i].speed_mbps && shm->microburst[i].second; d++) {
			labels_join(l, sizeof(l), plbl[i], "");
			label_s(l, sizeof(l), "direction", dir[d]);
			sample_d(b, "spanbox_port_window_peak_utilisation_ratio", l, shm->microburst[i].peak_ppm[d] / 1e6);
		}
	family(b, "spanbox_port_microbursts_total", "counter",
	       "Bursts: runs of windows at or above microburst.threshold_pct of the port's speed.");
	for (i = 0; i < nb; i++)
		for (d = 0; d < 2; d++) {
			labels_join(l, sizeof(l), plbl[i], "");
			label_s(l, sizeof(l), "direction", dir[d]);
			sample_u(b, "spanbox_port_microbursts_total", l, shm->microburst[i].bursts[d]);
		}
	family(b, "spanbox_port_microburst_events_suppressed_total", "counter",
	       "Bursts not written as a microburst event (one per port and second at most).");
	for (i = 0; i < nb; i++)
		sample_u(b, "spanbox_port_microburst_events_suppressed_total", plbl[i],
			 shm->microburst[i].events_suppressed);
	family(b, "spanbox_port_microburst_windows_dropped_total", "counter",
	       "Worker windows not counted: late (published after the window was final) or overrun (ring full).");
	for (i = 0; i < nb; i++)
		for (d = 0; d < 2; d++) {
			labels_join(l, sizeof(l), plbl[i], "");
			label_s(l, sizeof(l), "reason", d ? "overrun" : "late");
			sample_u(b, "spanbox_port_microburst_windows_dropped_total", l,
				 d ? shm->microburst[i].lost_windows : shm->microburst[i].late_windows);
		}
}

/* Counters of a worker slot the primary writes (struct sbx_worker_shm), one family each. */
static const struct slot_fam {
	const char *name, *help;
	size_t off, size; /**< of the field: 4 or 8 bytes */
} slot_fams[] = {
	{ "spanbox_worker_restarts_total", "Times the primary started this worker slot again.",
	  offsetof(struct sbx_worker_shm, restarts), sizeof(uint32_t) },
	{ "spanbox_worker_crashes_total", "Exits of the worker on a signal or a non-zero status, hangs included.",
	  offsetof(struct sbx_worker_shm, crashes), sizeof(uint32_t) },
	{ "spanbox_worker_hangs_total", "Times the primary killed the worker for a stale heartbeat.",
	  offsetof(struct sbx_worker_shm, hangs), sizeof(uint32_t) },
	{ "spanbox_worker_starvations_total",
	  "Stale heartbeats of the worker while its thread got no CPU time: not scheduled, not hung (not killed).",
	  offsetof(struct sbx_worker_shm, starvations), sizeof(uint32_t) },
	{ "spanbox_worker_recovered_mbufs_total", "Mbufs of the worker's burst the primary freed after it died.",
	  offsetof(struct sbx_worker_shm, recovered_mbufs), sizeof(uint64_t) },
	{ "spanbox_worker_takeovers_total", "Times a hot standby took this worker slot over.",
	  offsetof(struct sbx_worker_shm, takeovers), sizeof(uint32_t) },
};
_Static_assert(sizeof(((struct sbx_worker_shm *)0)->restarts) == 4 && sizeof(((struct sbx_worker_shm *)0)->crashes) == 4 &&
		       sizeof(((struct sbx_worker_shm *)0)->hangs) == 4 && sizeof(((struct sbx_worker_shm *)0)->takeovers) == 4 &&
		       sizeof(((struct sbx_worker_shm *)0)->recovered_mbufs) == 8 &&
		       sizeof(((struct sbx_worker_shm *)0)->starvations) == 4,
	       "slot_fams sizes");

/* The value of slot counter @p f of @p ws. */
static uint64_t slot_counter(const struct sbx_worker_shm *ws, const struct slot_fam *f)
{
	uint32_t v32;
	uint64_t v64;

	if (f->size == sizeof(v32)) {
		memcpy(&v32, (const char *)ws + f->off, sizeof(v32));
		return v32;
	}
	memcpy(&v64, (const char *)ws + f->off, sizeof(v64));
	return v64;
}

/* Hot standbys: one info sample per standby slot (pid, lcore, state, binary). */
static void standby_metrics(struct pbuf *b, const struct sbx_shm *shm)
{
	uint32_t s;

	family(b, "spanbox_standby_info", "gauge",
	       "Always 1: a hot-standby slot, its process, lcore id, state and binary.");
	for (s = 0; s < shm->nb_standbys && s < SBX_MAX_STANDBYS; s++) {
		const struct sbx_standby_shm *sb = &shm->standbys[s];
		char l[4 * LBL + SBX_PATH_LEN], bin[SBX_PATH_LEN];

		l[0] = '\0';
		snprintf(bin, sizeof(bin), "%.*s", SBX_PATH_LEN - 1, sb->binary);
		label_u(l, sizeof(l), "slot", s);
		label_i(l, sizeof(l), "pid", sb->pid);
		label_u(l, sizeof(l), "lcore", sb->lcore_id);
		label_s(l, sizeof(l), "state", sbx_standby_state_name(sb->state));
		label_s(l, sizeof(l), "binary", bin);
		sample_u(b, "spanbox_standby_info", l, 1);
	}
}

/* Per-worker families, and the per worker and port traffic counters. */
static void worker_metrics(struct pbuf *b, const struct sbx_shm *shm, char (*plbl)[LBL])
{
	uint16_t nb_w = mgmt_nb_workers(shm), nb_p = mgmt_nb_ports(shm), w, i;
	uint64_t now = sbx_now_ns();
	char wl[SBX_MAX_WORKERS][LBL];
	size_t f;
	uint32_t s;

	for (w = 0; w < nb_w; w++) {
		wl[w][0] = '\0';
		label_u(wl[w], LBL, "worker", w);
	}
	for (f = 0; f < RTE_DIM(worker_port_fams); f++) {
		family(b, worker_port_fams[f].name, worker_port_fams[f].type, worker_port_fams[f].help);
		for (w = 0; w < nb_w; w++) {
			for (i = 0; i < nb_p; i++) {
				char l[2 * LBL];

				labels_join(l, sizeof(l), wl[w], plbl[i]);
				sample_u(b, worker_port_fams[f].name, l,
					 U64_AT(&sbx_shm_worker(shm, w)->stats.port[i], worker_port_fams[f].off));
			}
		}
	}
	for (f = 0; f < RTE_DIM(worker_fams); f++) {
		family(b, worker_fams[f].name, worker_fams[f].type, worker_fams[f].help);
		for (w = 0; w < nb_w; w++)
			sample_u(b, worker_fams[f].name, wl[w], U64_AT(&sbx_shm_worker(shm, w)->stats, worker_fams[f].off));
	}
	for (f = 0; f < RTE_DIM(slot_fams); f++) {
		family(b, slot_fams[f].name, "counter", slot_fams[f].help);
		for (w = 0; w < nb_w; w++)
			sample_u(b, slot_fams[f].name, wl[w], slot_counter(sbx_shm_worker(shm, w), &slot_fams[f]));
	}
	family(b, "spanbox_worker_takeover_gap_seconds", "gauge",
	       "Last takeover: from the predecessor's death (or release) to the successor's first frame.");
	for (w = 0; w < nb_w; w++)
		if (sbx_shm_worker(shm, w)->takeovers && sbx_shm_worker(shm, w)->takeover_gap_ns)
			sample_d(b, "spanbox_worker_takeover_gap_seconds", wl[w], sbx_shm_worker(shm, w)->takeover_gap_ns / 1e9);
	family(b, "spanbox_worker_state", "gauge", "1 for the worker's current state, 0 for the others.");
	for (w = 0; w < nb_w; w++) {
		for (s = SBX_W_STARTING; s <= SBX_W_FAILED; s++) {
			char l[2 * LBL];

			labels_join(l, sizeof(l), wl[w], "");
			label_s(l, sizeof(l), "state", sbx_worker_state_name(s));
			sample_u(b, "spanbox_worker_state", l, sbx_shm_worker(shm, w)->state == s);
		}
	}
	family(b, "spanbox_worker_starved", "gauge",
	       "1 while the worker's heartbeat is stale and its thread gets no CPU time (not scheduled), else 0.");
	for (w = 0; w < nb_w; w++)
		sample_u(b, "spanbox_worker_starved", wl[w], sbx_shm_worker(shm, w)->starved != 0);
	family(b, "spanbox_worker_cycles_per_packet", "gauge",
	       "TSC cycles per frame in busy loops (busy cycles / busy packets); absent before the first frame.");
	for (w = 0; w < nb_w; w++) {
		double cpp;

		if (mgmt_cycles_per_packet(sbx_shm_worker(shm, w), &cpp))
			sample_d(b, "spanbox_worker_cycles_per_packet", wl[w], cpp);
	}
	family(b, "spanbox_worker_heartbeat_age_seconds", "gauge",
	       "Seconds since the worker's last loop; absent if it never ran one.");
	for (w = 0; w < nb_w; w++) {
		uint64_t hb = sbx_shm_worker(shm, w)->stats.heartbeat_ns;

		if (hb)
			sample_d(b, "spanbox_worker_heartbeat_age_seconds", wl[w], now > hb ? (double)(now - hb) / 1e9 : 0);
	}
	family(b, "spanbox_worker_start_time_seconds", "gauge",
	       "Unix time of the worker's last start; absent if it never started.");
	for (w = 0; w < nb_w; w++)
		if (sbx_shm_worker(shm, w)->start_ns)
			sample_d(b, "spanbox_worker_start_time_seconds", wl[w], (double)sbx_shm_worker(shm, w)->start_ns / 1e9);
	family(b, "spanbox_worker_info", "gauge", "Always 1: the EAL lcore id the worker runs as.");
	for (w = 0; w < nb_w; w++) {
		char l[2 * LBL];

		labels_join(l, sizeof(l), wl[w], "");
		label_u(l, sizeof(l), "lcore", sbx_shm_worker(shm, w)->lcore_id);
		sample_u(b, "spanbox_worker_info", l, 1);
	}
	standby_metrics(b, shm);
}

/* Per mirror session families, counters summed over workers (as /status mirrors[].counters). */
static void mirror_metrics(struct pbuf *b, const struct sbx_shm *shm)
{
	const struct sbx_config *cfg = sbx_shm_cfg(shm); /* the active runtime tables, taken once */
	uint16_t nb_m = mgmt_nb_mirrors(shm), nb_w = mgmt_nb_workers(shm), m;
	struct sbx_mirror_counters sum[SBX_MAX_MIRRORS];
	char ml[SBX_MAX_MIRRORS][LBL];
	size_t f, r;

	for (m = 0; m < nb_m; m++) {
		ml[m][0] = '\0';
		label_u(ml[m], LBL, "session", cfg->mirrors[m].id);
		label(ml[m], LBL, "name", cfg->mirrors[m].name, sizeof(cfg->mirrors[m].name));
		mgmt_mirror_sum(shm, m, nb_w, &sum[m]);
	}
	/* the counters with a family of their own, then each shared family (its counters as label
	 * "reason", in list order); SBX_MIRROR_DROPPED_HELP is the help of the one shared family */
	for (f = 0; f < RTE_DIM(mirror_fams); f++) {
		const struct fam *mf = &mirror_fams[f].f;

		if (mirror_fams[f].reason != NULL)
			continue;
		family(b, mf->name, mf->type, mf->help);
		for (m = 0; m < nb_m; m++)
			sample_u(b, mf->name, ml[m], U64_AT(&sum[m], mf->off));
	}
	for (f = 0; f < RTE_DIM(mirror_fams); f++) {
		const char *name = mirror_fams[f].f.name;
		size_t g;

		if (mirror_fams[f].reason == NULL)
			continue;
		for (g = 0; g < f; g++)
			if (mirror_fams[g].reason != NULL && strcmp(mirror_fams[g].f.name, name) == 0)
				break;
		if (g < f)
			continue; /* written with its first counter */
		family(b, name, "counter", SBX_MIRROR_DROPPED_HELP);
		for (m = 0; m < nb_m; m++) {
			for (r = f; r < RTE_DIM(mirror_fams); r++) {
				char l[2 * LBL];

				if (mirror_fams[r].reason == NULL || strcmp(mirror_fams[r].f.name, name) != 0)
					continue;
				labels_join(l, sizeof(l), ml[m], "");
				label_s(l, sizeof(l), "reason", mirror_fams[r].reason);
				sample_u(b, name, l, U64_AT(&sum[m], mirror_fams[r].f.off));
			}
		}
	}
}

/* ---- maps (issue #27): per map families of SBX_FOREACH_MAP_COUNTER, labels map (id) and name,
 * summed over workers; no per-rule family (label cardinality) ---- */
#define MAP_FAM(field, json, prom, unit, help) { prom, "counter", help, offsetof(struct sbx_map_counters, field) },

static const struct fam map_fams[] = { SBX_FOREACH_MAP_COUNTER(MAP_FAM) };

static void map_metrics(struct pbuf *b, const struct sbx_shm *shm)
{
	const struct sbx_tables *t = sbx_shm_tables(shm); /* maps are live: the active tables, taken once */
	const struct sbx_config *cfg = &t->cfg;
	uint16_t nb_w = mgmt_nb_workers(shm), nb = cfg->nb_maps < SBX_MAX_MAPS ? cfg->nb_maps : SBX_MAX_MAPS;

	for (size_t f = 0; f < RTE_DIM(map_fams) && nb; f++) {
		family(b, map_fams[f].name, map_fams[f].type, map_fams[f].help);
		for (uint16_t m = 0; m < nb; m++) {
			char l[LBL] = "";
			uint64_t v = 0;

			label_u(l, LBL, "map", cfg->maps[m].s.id);
			label(l, LBL, "name", cfg->maps[m].s.name, sizeof(cfg->maps[m].s.name));
			for (uint16_t w = 0; w < nb_w; w++) /* the map's counter set */
				v += U64_AT(&sbx_shm_worker(shm, w)->stats.map[t->mcset[m] % SBX_MAP_COUNTER_SETS],
					    map_fams[f].off);
			sample_u(b, map_fams[f].name, l, v);
		}
	}
}

#define GROUP_MEMBER_FAM(field, json, prom, reason, unit, help)                                        \
	{ { prom, "counter", help, offsetof(struct sbx_group_member_counters, field) }, reason },

static const struct mirror_fam group_member_fams[] = { SBX_FOREACH_GROUP_MEMBER_COUNTER(GROUP_MEMBER_FAM) };

/* Per tool group and member families (as /status tool_groups[]): member counters summed over
 * workers (labels group, port; the drop_* ones as reason of one family), buckets and up gauges,
 * and the group's no_member counter. */
static void group_metrics(struct pbuf *b, const struct sbx_shm *shm)
{
	const struct sbx_config *cfg = sbx_shm_cfg(shm);
	uint16_t nb_g = mgmt_nb_tool_groups(shm), nb_w = mgmt_nb_workers(shm), g, k;
	/* on the heap: at the limits (64 groups of 64 members) the labels alone are 1.3 MB */
	struct sbx_group_member_counters(*sum)[SBX_MAX_GROUP_MEMBERS];
	char(*gl)[LBL], (*ml)[SBX_MAX_GROUP_MEMBERS][2 * LBL];
	uint8_t nbm[SBX_MAX_TOOL_GROUPS];
	bool shared_done = false;
	size_t f;

	if (nb_g == 0)
		return;
	sum = calloc(nb_g, sizeof(*sum));
	gl = calloc(nb_g, sizeof(*gl));
	ml = calloc(nb_g, sizeof(*ml));
	if (sum == NULL || gl == NULL || ml == NULL) {
		free(sum);
		free(gl);
		free(ml);
		return;
	}
	for (g = 0; g < nb_g; g++) {
		const struct sbx_tool_group_cfg *gc = &cfg->tool_groups[g];

		gl[g][0] = '\0';
		label(gl[g], LBL, "group", gc->name, sizeof(gc->name));
		nbm[g] = (uint8_t)RTE_MIN(gc->nb_members, shm->layout.group_members); /* the slot's capacity */
		for (k = 0; k < nbm[g]; k++) {
			labels_join(ml[g][k], sizeof(ml[g][k]), gl[g], "");
			label(ml[g][k], sizeof(ml[g][k]), "port", shm->cfg.ports[gc->members[k] % SBX_MAX_PORTS].name,
			      SBX_NAME_LEN);
			mgmt_group_member_sum(shm, mgmt_group_slot(shm, g), k, nb_w, &sum[g][k]);
		}
	}
	for (f = 0; f < RTE_DIM(group_member_fams); f++) {
		const struct fam *mf = &group_member_fams[f].f;

		if (group_member_fams[f].reason != NULL && shared_done)
			continue;
		family(b, mf->name, mf->type, group_member_fams[f].reason ? SBX_GROUP_MEMBER_DROPPED_HELP : mf->help);
		for (g = 0; g < nb_g; g++) {
			for (k = 0; k < nbm[g]; k++) {
				size_t r;

				if (group_member_fams[f].reason == NULL) {
					sample_u(b, mf->name, ml[g][k], U64_AT(&sum[g][k], mf->off));
					continue;
				}
				for (r = f; r < RTE_DIM(group_member_fams); r++) {
					char l[3 * LBL];

					if (group_member_fams[r].reason == NULL)
						continue;
					labels_join(l, sizeof(l), ml[g][k], "");
					label_s(l, sizeof(l), "reason", group_member_fams[r].reason);
					sample_u(b, mf->name, l, U64_AT(&sum[g][k], group_member_fams[r].f.off));
				}
			}
		}
		if (group_member_fams[f].reason != NULL)
			shared_done = true;
	}
	family(b, "spanbox_tool_group_member_buckets", "gauge", "Buckets of the group (of 4096) the member holds now.");
	for (g = 0; g < nb_g; g++)
		for (k = 0; k < nbm[g]; k++)
			sample_u(b, "spanbox_tool_group_member_buckets", ml[g][k],
				 sbx_shm_group(shm, mgmt_group_slot(shm, g))->m[k].buckets);
	family(b, "spanbox_tool_group_member_up", "gauge", "1 while the member is up (holds its buckets), else 0.");
	for (g = 0; g < nb_g; g++)
		for (k = 0; k < nbm[g]; k++)
			sample_u(b, "spanbox_tool_group_member_up", ml[g][k],
				 sbx_shm_group(shm, mgmt_group_slot(shm, g))->m[k].state == SBX_MEMBER_UP);
#define GROUP_FAM_(field, json, prom, unit, help)                                                          \
	family(b, prom, "counter", help);                                                                  \
	for (g = 0; g < nb_g; g++) {                                                                       \
		struct sbx_group_counters gs;                                                              \
		mgmt_group_sum(shm, mgmt_group_slot(shm, g), nb_w, &gs);                                   \
		sample_u(b, prom, gl[g], gs.field);                                                        \
	}
	SBX_FOREACH_GROUP_COUNTER(GROUP_FAM_)
#undef GROUP_FAM_
	free(sum);
	free(gl);
	free(ml);
}

/* Per pool families. */
static void pool_metrics(struct pbuf *b, const struct sbx_shm *shm)
{
	uint32_t nb = shm->nb_pools < SBX_MAX_POOLS ? shm->nb_pools : SBX_MAX_POOLS, i;
	char pl[SBX_MAX_POOLS][LBL];

	for (i = 0; i < nb; i++) {
		pl[i][0] = '\0';
		label(pl[i], LBL, "pool", shm->pools[i].name, sizeof(shm->pools[i].name));
		label_i(pl[i], LBL, "socket", shm->pools[i].socket_id);
	}
	/* one family, a sample per pool for which @p cond holds */
#define POOL_FAM_IF(fam, help, cond, expr)                                 \
	do {                                                               \
		family(b, fam, "gauge", help);                             \
		for (i = 0; i < nb; i++)                                   \
			if (cond)                                          \
				sample_u(b, fam, pl[i], (uint64_t)(expr)); \
	} while (0)
#define POOL_FAM(fam, help, expr) POOL_FAM_IF(fam, help, true, expr)
	POOL_FAM("spanbox_pool_size_mbufs", "Mbufs in the pool.", shm->pools[i].size);
	POOL_FAM("spanbox_pool_in_use_mbufs", "Mbufs taken from the pool (refreshed by the primary every 100 ms).",
		 shm->pools[i].in_use);
	POOL_FAM("spanbox_pool_available_mbufs", "Mbufs free in the pool, lcore caches included.",
		 shm->pools[i].avail);
	POOL_FAM("spanbox_pool_cache_size_mbufs", "Size of each lcore's cache of the pool.", shm->pools[i].cache_size);
	POOL_FAM("spanbox_pool_memory_bytes", "Memory holding the pool's objects.", shm->pools[i].bytes);
	family(b, "spanbox_pool_cached_mbufs", "gauge", "Mbufs sitting in the pool's lcore caches now.");
	for (i = 0; i < nb; i++) {
		const struct rte_mempool *mp = rte_mempool_lookup(shm->pools[i].name);

		if (mp != NULL)
			sample_u(b, "spanbox_pool_cached_mbufs", pl[i], mgmt_mempool_cached(mp));
	}
	family(b, "spanbox_pool_populate_seconds", "gauge", "Time rte_pktmbuf_pool_create took for the pool.");
	for (i = 0; i < nb; i++)
		sample_d(b, "spanbox_pool_populate_seconds", pl[i], (double)shm->pools[i].populate_ns / 1e9);
	/* the indirect-mbuf pool beside each pool (shared mirror copies), labelled by the main pool */
#define IND_FAM(fam, help, expr) POOL_FAM_IF(fam, help, shm->pools[i].indirect.name[0] != '\0', expr)
	IND_FAM("spanbox_pool_indirect_size_mbufs", "Indirect mbufs (no data room) for shared mirror copies beside the pool.",
		shm->pools[i].indirect.size);
	IND_FAM("spanbox_pool_indirect_in_use_mbufs",
		"Indirect mbufs taken: shares in flight (refreshed by the primary every 100 ms).",
		shm->pools[i].indirect.in_use);
	IND_FAM("spanbox_pool_indirect_available_mbufs", "Indirect mbufs free, lcore caches included.",
		shm->pools[i].indirect.avail);
#undef IND_FAM
#undef POOL_FAM
#undef POOL_FAM_IF
}

/*
 * The ingress senders and decap rules of every port, from the same sums /status shows
 * (mgmt_ingress_senders, mgmt_ingress_rules): spanbox_ingress_tunnel_* {port, kind, source, id}
 * and spanbox_ingress_rule_packets_total {port, rule, type}. Families with no sample are still
 * declared.
 */
static void ingress_metrics(struct pbuf *b, const struct sbx_shm *shm, char (*plbl)[LBL])
{
#define TUN_FAM(field, help) { "spanbox_ingress_tunnel_" #field "_total", offsetof(struct sbx_tunnel_source, field), help }
	static const struct {
		const char *name;
		size_t off;
		const char *help;
	} tf[] = {
		TUN_FAM(packets, "Frames decapsulated of one tunnel sender."),
		TUN_FAM(bytes, "Inner bytes delivered of one tunnel sender."),
		/* a counter never goes down: the losses final (seq.lost_final), not /status seq_lost, which a
		 * late frame within the window takes back */
		{ "spanbox_ingress_tunnel_seq_lost_total", offsetof(struct sbx_tunnel_source, seq.lost_final),
		  "Frames of the sender's GRE sequence that never came: numbers skipped by a jump forward and not "
		  "seen within the 1024 numbers after." },
		TUN_FAM(seq_reordered, "Frames of the sender that came late: numbered behind the expected sequence number "
				       "within 1024, not seen before."),
		TUN_FAM(seq_duplicates, "Frames of the sender whose GRE sequence number was seen already (within 1024)."),
		TUN_FAM(truncated, "Frames of the sender with the ERSPAN T bit."),
	};
#undef TUN_FAM
	const struct sbx_config *cfg = sbx_shm_cfg(shm);
	uint16_t nb_p = mgmt_nb_ports(shm), nb_w = mgmt_nb_workers(shm), i;
	struct sbx_tunnel_source *sum = malloc(sizeof(*sum) * MGMT_INGRESS_SENDERS_MAX);
	char (*tl)[2 * LBL] = malloc(sizeof(*tl) * MGMT_INGRESS_SENDERS_MAX);
	uint64_t pkts[SBX_MAX_DECAP_RULES], bytes[SBX_MAX_DECAP_RULES], untracked;
	unsigned int n, k;
	size_t f;

	for (f = 0; f < sizeof(tf) / sizeof(tf[0]); f++)
		family(b, tf[f].name, "counter", tf[f].help);
	family(b, "spanbox_ingress_rule_packets_total", "counter", "Frames a decap rule of the port terminated.");
	if (sum == NULL || tl == NULL)
		goto out;
	for (i = 0; i < nb_p; i++) {
		if (sbx_ingress_cfg_empty(&cfg->ports[i].ingress))
			continue;
		mgmt_ingress_rules(shm, i, nb_w, pkts, bytes);
		for (k = 0; k < cfg->ports[i].ingress.nb_decap && k < SBX_MAX_DECAP_RULES; k++) {
			char l[2 * LBL];

			snprintf(l, sizeof(l), "%.*s", LBL - 1, plbl[i]);
			label_i(l, sizeof(l), "rule", k);
			label_s(l, sizeof(l), "type", sbx_decap_type_name(cfg->ports[i].ingress.decap[k].type));
			sample_u(b, "spanbox_ingress_rule_packets_total", l, pkts[k]);
		}
		n = mgmt_ingress_senders(shm, i, nb_w, sum, &untracked);
		for (k = 0; k < n; k++) {
			char addr[INET6_ADDRSTRLEN];

			mgmt_tunnel_source_text(&sum[k], addr, sizeof(addr));
			snprintf(tl[k], sizeof(tl[k]), "%.*s", LBL - 1, plbl[i]);
			label_s(tl[k], sizeof(tl[k]), "kind", sbx_tunnel_kind_name(sum[k].kind));
			label_s(tl[k], sizeof(tl[k]), "source", addr);
			label_u(tl[k], sizeof(tl[k]), "id", sum[k].id);
		}
		for (f = 0; f < sizeof(tf) / sizeof(tf[0]); f++)
			for (k = 0; k < n; k++)
				sample_u(b, tf[f].name, tl[k], U64_AT(&sum[k], tf[f].off));
	}
out:
	free(tl);
	free(sum);
}

/*
 * Timestamps in (ingress.timestamp, docs/INGRESS.md): per port with the stage, the clock offset of
 * its sender (their time minus ours, ns; mgmt_ingress_ts: the workers' views merged), the gauge
 * spanbox_ingress_timestamp_offset_ns {port, stat = last | min | max}.
 */
static void ts_in_metrics(struct pbuf *b, const struct sbx_shm *shm, char (*plbl)[LBL])
{
	const struct sbx_config *cfg = sbx_shm_cfg(shm);
	uint16_t nb_p = mgmt_nb_ports(shm), i;

	family(b, "spanbox_ingress_timestamp_offset_ns", "gauge",
	       "Clock offset of the timestamps a port's frames carry: their time minus ours, nanoseconds (stat last, min, max).");
	for (i = 0; i < nb_p; i++) {
		static const char *const stat[] = { "last", "min", "max" };
		struct sbx_ts_in_offset o;
		int64_t v[3];
		unsigned int k;

		if (cfg->ports[i].ingress.ts_format == SBX_TS_IN_NONE)
			continue;
		mgmt_ingress_ts(shm, i, mgmt_nb_workers(shm), &o);
		if (o.frames == 0)
			continue;
		v[0] = o.last_ns;
		v[1] = o.min_ns;
		v[2] = o.max_ns;
		for (k = 0; k < 3; k++) {
			char l[2 * LBL];

			snprintf(l, sizeof(l), "%.*s", LBL - 1, plbl[i]);
			label_s(l, sizeof(l), "stat", stat[k]);
			pb_printf(b, "spanbox_ingress_timestamp_offset_ns{%s} %" PRId64 "\n", l, v[k]);
		}
	}
}

/* ---- flows: the IPFIX exporter's collectors (docs/FLOWS.md) ---- */

#define IPFIX_FAM(field, json, prom, unit, help) { prom, "counter", help, offsetof(struct sbx_ipfix_stats, field) },
static const struct fam ipfix_fams[] = { SBX_FOREACH_IPFIX_COUNTER(IPFIX_FAM) };

/* One family per counter of SBX_FOREACH_IPFIX_COUNTER: a sample per collector the exporter sends
 * to (collector="i", address, port, transport) and one of the collectors live changes closed
 * (collector="retired"); spanbox_flows_collector_up. Nothing while the exporter does not run. */
static void flows_metrics(struct pbuf *b, const struct sbx_shm *shm)
{
	const struct sbx_flows_shm *fs = &shm->flows;
	uint32_t nc = fs->nb_collectors < SBX_MAX_FLOW_COLLECTORS ? fs->nb_collectors : SBX_MAX_FLOW_COLLECTORS, c;
	char cl[SBX_MAX_FLOW_COLLECTORS][LBL], rl[LBL] = "";
	size_t f;

	if (!fs->running)
		return;
	for (c = 0; c < nc; c++) {
		struct sbx_flow_collector_cfg kc, *k = &kc; /* under the exporter's sequence lock */

		sbx_flows_collector_cfg(fs, c, &kc);
		cl[c][0] = '\0';
		label_u(cl[c], LBL, "collector", c);
		label(cl[c], LBL, "address", k->address, sizeof(k->address));
		label_u(cl[c], LBL, "port", k->port);
		label_s(cl[c], LBL, "transport", k->transport ? "tcp" : "udp");
	}
	label_s(rl, sizeof(rl), "collector", "retired");
	for (f = 0; f < RTE_DIM(ipfix_fams); f++) {
		family(b, ipfix_fams[f].name, ipfix_fams[f].type, ipfix_fams[f].help);
		for (c = 0; c < nc; c++)
			sample_u(b, ipfix_fams[f].name, cl[c], U64_AT(&fs->collectors[c].x, ipfix_fams[f].off));
		sample_u(b, ipfix_fams[f].name, rl, U64_AT(&fs->retired, ipfix_fams[f].off));
	}
	family(b, "spanbox_flows_collector_up", "gauge",
	       "1 while the collector takes the records, 0 when records were lost for it in the last 100 ms.");
	for (c = 0; c < nc; c++)
		sample_u(b, "spanbox_flows_collector_up", cl[c], __atomic_load_n(&fs->collectors[c].up, __ATOMIC_RELAXED));
}

/* Build the whole exposition; @p shm NULL when the appliance is down. */
static void metrics_text(struct pbuf *b, const struct sbx_shm *shm, const struct mgmt_db *db)
{
	char l[4 * LBL] = "";

	family(b, "spanbox_up", "gauge", "1 when the appliance (primary) runs and mgmt is attached to it, else 0.");
	sample_u(b, "spanbox_up", "", shm != NULL);
	family(b, "spanbox_mgmt_info", "gauge", "Always 1: the version of spanbox-mgmt and the database it uses.");
	label_s(l, sizeof(l), "version", SBX_VERSION);
	label_s(l, sizeof(l), "database", db->path);
	sample_u(b, "spanbox_mgmt_info", l, 1);
	family(b, "spanbox_database_size_bytes", "gauge", "Bytes the database uses on disk (main file plus WAL).");
	sample_u(b, "spanbox_database_size_bytes", "", mgmt_db_size(db));
	family(b, "spanbox_database_schema_version", "gauge", "Highest schema migration applied to the database.");
	sample_u(b, "spanbox_database_schema_version", "", (uint64_t)(db->schema_version > 0 ? db->schema_version : 0));
	{
		struct mgmt_http_closes hc;
		const struct { const char *reason; const uint64_t *v; } closes[] = {
			{ "deadline_waiting", &hc.deadline_waiting }, { "deadline_answering", &hc.deadline_answering },
			{ "evicted", &hc.evicted }, { "stale", &hc.stale },
		};
		size_t k;

		mgmt_http_closes(&hc);
		family(b, "spanbox_mgmt_http_closed_total", "counter",
		       "HTTP connections mgmt closed without waiting for the client, by reason: no complete request "
		       "within the request deadline, answer not sent within the answer deadline (worth an alert), "
		       "evicted at the connection limits, stale table entries.");
		for (k = 0; k < sizeof(closes) / sizeof(closes[0]); k++) {
			l[0] = '\0';
			label_s(l, sizeof(l), "reason", closes[k].reason);
			sample_u(b, "spanbox_mgmt_http_closed_total", l, *closes[k].v);
		}
	}
	if (shm == NULL)
		return;

	{
		uint16_t nb_p = mgmt_nb_ports(shm), i;
		char plbl[SBX_MAX_PORTS][LBL];

		family(b, "spanbox_start_time_seconds", "gauge", "Unix time the primary started.");
		sample_d(b, "spanbox_start_time_seconds", "", (double)shm->start_realtime_ns / 1e9);
		family(b, "spanbox_appliance_info", "gauge", "Always 1: the appliance's EAL file prefix and primary pid.");
		l[0] = '\0';
		label(l, sizeof(l), "file_prefix", shm->cfg.file_prefix, sizeof(shm->cfg.file_prefix));
		label_i(l, sizeof(l), "primary_pid", shm->primary_pid);
		sample_u(b, "spanbox_appliance_info", l, 1);
		family(b, "spanbox_tsc_hertz", "gauge", "TSC frequency: divide cycles by it to get seconds.");
		sample_u(b, "spanbox_tsc_hertz", "", shm->tsc_hz);
		for (i = 0; i < nb_p; i++) {
			plbl[i][0] = '\0';
			label(plbl[i], LBL, "port", shm->cfg.ports[i].name, sizeof(shm->cfg.ports[i].name));
		}
		health_metrics(b, shm);
		port_metrics(b, shm, plbl);
		microburst_metrics(b, shm, plbl);
		worker_metrics(b, shm, plbl);
		mirror_metrics(b, shm);
		map_metrics(b, shm); /* maps (issue #27) */
		group_metrics(b, shm);
		ingress_metrics(b, shm, plbl);
		ts_in_metrics(b, shm, plbl);
		pool_metrics(b, shm);
		flows_metrics(b, shm);
	}
}

char *mgmt_metrics_text(const struct sbx_shm *shm, const struct mgmt_db *db)
{
	struct pbuf b = { 0 };

	metrics_text(&b, shm, db);
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

/* GET /metrics: always 200 (spanbox_up 0 and the mgmt families when the appliance is down). */
static unsigned int get_metrics(struct req *r, cJSON **body)
{
	char why[256];
	char *text = mgmt_metrics_text(mgmt_live_shm(r->ctx, why, sizeof(why)), r->ctx->db);

	if (text == NULL) {
		*body = mgmt_error(MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
		return MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
	*body = cJSON_CreateString(text);
	free(text);
	r->content_type = PROM_CONTENT_TYPE;
	return MHD_HTTP_OK;
}

const struct mgmt_route mgmt_routes_metrics[] = {
	{ "GET", "/metrics", get_metrics },
	{ NULL, NULL, NULL },
};
