/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Routes: GET /metrics (Prometheus text exposition format 0.0.4), GET /api/v1/ports/{name}/stats
 * and PUT /api/v1/ports/{name}/link.
 *
 * /metrics reads the memzone like /status does, through the same helpers of status.c, so a number
 * shown by both is the same number. Families are written one after the other, every sample of a
 * family together (the format requires it), each with its # HELP and # TYPE lines. Counters are
 * uint64 printed as integers (exact, unlike JSON doubles).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "api.h"
#include "attach.h"
#include "db.h"
#include "status.h"

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

static const struct fam port_fams[] = {
	{ "spanbox_port_rx_packets_total", "counter",
	  "Frames the port received (ethdev ipackets; pcap port: frames read from its file).",
	  offsetof(struct sbx_port_shm, ipackets) },
	{ "spanbox_port_tx_packets_total", "counter",
	  "Frames the port sent (ethdev opackets; pcap port: frames written to its file).",
	  offsetof(struct sbx_port_shm, opackets) },
	{ "spanbox_port_rx_bytes_total", "counter", "Bytes the port received (ethdev ibytes).",
	  offsetof(struct sbx_port_shm, ibytes) },
	{ "spanbox_port_tx_bytes_total", "counter", "Bytes the port sent (ethdev obytes).",
	  offsetof(struct sbx_port_shm, obytes) },
	{ "spanbox_port_rx_missed_packets_total", "counter",
	  "Frames the port dropped because its RX queues were full (ethdev imissed).",
	  offsetof(struct sbx_port_shm, imissed) },
	{ "spanbox_port_rx_errors_total", "counter", "Erroneous frames received (ethdev ierrors).",
	  offsetof(struct sbx_port_shm, ierrors) },
	{ "spanbox_port_tx_errors_total", "counter", "Frames the port failed to send (ethdev oerrors).",
	  offsetof(struct sbx_port_shm, oerrors) },
	{ "spanbox_port_rx_nombuf_total", "counter",
	  "RX mbuf allocation failures: the pool was empty (ethdev rx_nombuf).",
	  offsetof(struct sbx_port_shm, rx_nombuf) },
};

static const struct fam worker_port_fams[] = {
	{ "spanbox_worker_rx_packets_total", "counter", "Frames the worker received on the port.",
	  offsetof(struct sbx_port_counters, rx_pkts) },
	{ "spanbox_worker_rx_bytes_total", "counter", "Bytes the worker received on the port.",
	  offsetof(struct sbx_port_counters, rx_bytes) },
	{ "spanbox_worker_tx_packets_total", "counter", "Frames the port's TX queue accepted from the worker.",
	  offsetof(struct sbx_port_counters, tx_pkts) },
	{ "spanbox_worker_tx_bytes_total", "counter", "Bytes the port's TX queue accepted from the worker.",
	  offsetof(struct sbx_port_counters, tx_bytes) },
	{ "spanbox_worker_drop_packets_total", "counter",
	  "Frames the worker freed instead of sending on the port (TX queue full, no route; on the input port a bad mbuf chain, a runt, an oversize frame).",
	  offsetof(struct sbx_port_counters, drop_pkts) },
	{ "spanbox_worker_drop_bytes_total", "counter", "Bytes of those dropped frames.",
	  offsetof(struct sbx_port_counters, drop_bytes) },
	{ "spanbox_worker_runt_packets_total", "counter",
	  "Frames received on the port shorter than an Ethernet header (14 B), dropped (part of drop_packets).",
	  offsetof(struct sbx_port_counters, runt) },
	{ "spanbox_worker_oversize_packets_total", "counter",
	  "Frames received on the port longer than its mtu + 22 B, dropped (part of drop_packets).",
	  offsetof(struct sbx_port_counters, oversize) },
};

static const struct fam worker_fams[] = {
	{ "spanbox_worker_loops_total", "counter", "Poll loops the worker ran.",
	  offsetof(struct sbx_worker_stats, loops) },
	{ "spanbox_worker_idle_sleeps_total", "counter", "Idle back-off sleeps of the worker.",
	  offsetof(struct sbx_worker_stats, idle_sleeps) },
	{ "spanbox_worker_busy_cycles_total", "counter", "TSC cycles the worker spent in loops that received frames.",
	  offsetof(struct sbx_worker_stats, busy_cycles) },
	{ "spanbox_worker_busy_packets_total", "counter", "Frames handled in those loops.",
	  offsetof(struct sbx_worker_stats, busy_pkts) },
	{ "spanbox_worker_bad_packets_total", "counter", "Mbufs dropped because their chain was inconsistent.",
	  offsetof(struct sbx_worker_stats, bad_pkts) },
};

static const struct fam mirror_fams[] = {
	{ "spanbox_mirror_packets_total", "counter", "Mirror frames the destination TX queue accepted.",
	  offsetof(struct sbx_mirror_counters, mirrored_pkts) },
	{ "spanbox_mirror_bytes_total", "counter", "Bytes of those mirror frames, encapsulation included.",
	  offsetof(struct sbx_mirror_counters, mirrored_bytes) },
	{ "spanbox_mirror_copied_packets_total", "counter", "Mirror copies made by deep copy.",
	  offsetof(struct sbx_mirror_counters, copied) },
	{ "spanbox_mirror_shared_packets_total", "counter",
	  "Mirror copies made by sharing the frame (indirect mbuf plus header mbuf).",
	  offsetof(struct sbx_mirror_counters, shared) },
	{ "spanbox_mirror_filtered_out_packets_total", "counter", "Source frames the session's filter rejected.",
	  offsetof(struct sbx_mirror_counters, filtered_out) },
	{ "spanbox_mirror_sampled_out_packets_total", "counter", "Source frames skipped by 1-in-N sampling.",
	  offsetof(struct sbx_mirror_counters, sampled_out) },
	{ "spanbox_mirror_truncated_packets_total", "counter", "Mirror copies cut at the snaplen.",
	  offsetof(struct sbx_mirror_counters, truncated) },
};

/* Per-port families (ethdev counters refreshed by the primary every 100 ms, link). */
static void port_metrics(struct pbuf *b, const struct sbx_shm *shm, char (*plbl)[LBL])
{
	uint16_t nb = mgmt_nb_ports(shm), i;
	size_t f;

	for (f = 0; f < RTE_DIM(port_fams); f++) {
		family(b, port_fams[f].name, port_fams[f].type, port_fams[f].help);
		for (i = 0; i < nb; i++)
			sample_u(b, port_fams[f].name, plbl[i], U64_AT(&shm->ports[i], port_fams[f].off));
	}
	family(b, "spanbox_port_link_up", "gauge", "1 when the port's link is up, else 0.");
	for (i = 0; i < nb; i++)
		sample_u(b, "spanbox_port_link_up", plbl[i], shm->ports[i].link_up != 0);
	family(b, "spanbox_port_link_speed_bytes", "gauge", "Link speed in bytes per second (0 when unknown).");
	for (i = 0; i < nb; i++)
		sample_u(b, "spanbox_port_link_speed_bytes", plbl[i], (uint64_t)shm->ports[i].link_speed * 125000);
	family(b, "spanbox_port_info", "gauge", "Always 1: the port's kind (ethdev or bridged), peer and DPDK port id.");
	for (i = 0; i < nb; i++) {
		const struct sbx_port_shm *ps = &shm->ports[i];
		char l[2 * LBL];

		labels_join(l, sizeof(l), plbl[i], "");
		label_s(l, sizeof(l), "kind", shm->cfg.ports[i].kind == SBX_PORT_BRIDGED ? "bridged" : "ethdev");
		if (ps->peer >= 0 && ps->peer < nb)
			label(l, sizeof(l), "peer", shm->cfg.ports[ps->peer].name, sizeof(shm->cfg.ports[0].name));
		else
			label_s(l, sizeof(l), "peer", "");
		label_u(l, sizeof(l), "port_id", ps->port_id);
		sample_u(b, "spanbox_port_info", l, 1);
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
					 U64_AT(&shm->workers[w].stats.port[i], worker_port_fams[f].off));
			}
		}
	}
	for (f = 0; f < RTE_DIM(worker_fams); f++) {
		family(b, worker_fams[f].name, worker_fams[f].type, worker_fams[f].help);
		for (w = 0; w < nb_w; w++)
			sample_u(b, worker_fams[f].name, wl[w], U64_AT(&shm->workers[w].stats, worker_fams[f].off));
	}
	family(b, "spanbox_worker_restarts_total", "counter", "Times the primary started this worker slot again.");
	for (w = 0; w < nb_w; w++)
		sample_u(b, "spanbox_worker_restarts_total", wl[w], shm->workers[w].restarts);
	family(b, "spanbox_worker_crashes_total", "counter",
	       "Exits of the worker on a signal or a non-zero status, hangs included.");
	for (w = 0; w < nb_w; w++)
		sample_u(b, "spanbox_worker_crashes_total", wl[w], shm->workers[w].crashes);
	family(b, "spanbox_worker_hangs_total", "counter", "Times the primary killed the worker for a stale heartbeat.");
	for (w = 0; w < nb_w; w++)
		sample_u(b, "spanbox_worker_hangs_total", wl[w], shm->workers[w].hangs);
	family(b, "spanbox_worker_recovered_mbufs_total", "counter",
	       "Mbufs of the worker's burst the primary freed after it died.");
	for (w = 0; w < nb_w; w++)
		sample_u(b, "spanbox_worker_recovered_mbufs_total", wl[w], shm->workers[w].recovered_mbufs);
	family(b, "spanbox_worker_state", "gauge", "1 for the worker's current state, 0 for the others.");
	for (w = 0; w < nb_w; w++) {
		for (s = SBX_W_STARTING; s <= SBX_W_FAILED; s++) {
			char l[2 * LBL];

			labels_join(l, sizeof(l), wl[w], "");
			label_s(l, sizeof(l), "state", sbx_worker_state_name(s));
			sample_u(b, "spanbox_worker_state", l, shm->workers[w].state == s);
		}
	}
	family(b, "spanbox_worker_cycles_per_packet", "gauge",
	       "TSC cycles per frame in busy loops (busy cycles / busy packets); absent before the first frame.");
	for (w = 0; w < nb_w; w++) {
		double cpp;

		if (mgmt_cycles_per_packet(&shm->workers[w], &cpp))
			sample_d(b, "spanbox_worker_cycles_per_packet", wl[w], cpp);
	}
	family(b, "spanbox_worker_heartbeat_age_seconds", "gauge",
	       "Seconds since the worker's last loop; absent if it never ran one.");
	for (w = 0; w < nb_w; w++) {
		uint64_t hb = shm->workers[w].stats.heartbeat_ns;

		if (hb)
			sample_d(b, "spanbox_worker_heartbeat_age_seconds", wl[w], now > hb ? (double)(now - hb) / 1e9 : 0);
	}
	family(b, "spanbox_worker_start_time_seconds", "gauge",
	       "Unix time of the worker's last start; absent if it never started.");
	for (w = 0; w < nb_w; w++)
		if (shm->workers[w].start_ns)
			sample_d(b, "spanbox_worker_start_time_seconds", wl[w], (double)shm->workers[w].start_ns / 1e9);
	family(b, "spanbox_worker_info", "gauge", "Always 1: the EAL lcore id the worker runs as.");
	for (w = 0; w < nb_w; w++) {
		char l[2 * LBL];

		labels_join(l, sizeof(l), wl[w], "");
		label_u(l, sizeof(l), "lcore", shm->workers[w].lcore_id);
		sample_u(b, "spanbox_worker_info", l, 1);
	}
}

/* Per mirror session families, counters summed over workers (as /status mirrors[].counters). */
static void mirror_metrics(struct pbuf *b, const struct sbx_shm *shm)
{
	static const char *const reasons[] = { "txfull", "nombuf", "malformed" };
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
	for (f = 0; f < RTE_DIM(mirror_fams); f++) {
		family(b, mirror_fams[f].name, mirror_fams[f].type, mirror_fams[f].help);
		for (m = 0; m < nb_m; m++)
			sample_u(b, mirror_fams[f].name, ml[m], U64_AT(&sum[m], mirror_fams[f].off));
	}
	family(b, "spanbox_mirror_dropped_packets_total", "counter",
	       "Mirror copies lost, by reason: txfull (destination TX queue refused it), nombuf (pool empty), "
	       "malformed (the frame cannot carry the encapsulation).");
	for (m = 0; m < nb_m; m++) {
		const uint64_t v[] = { sum[m].drop_txfull, sum[m].drop_nombuf, sum[m].drop_malformed };

		for (r = 0; r < RTE_DIM(reasons); r++) {
			char l[2 * LBL];

			labels_join(l, sizeof(l), ml[m], "");
			label_s(l, sizeof(l), "reason", reasons[r]);
			sample_u(b, "spanbox_mirror_dropped_packets_total", l, v[r]);
		}
	}
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
#define POOL_FAM(name, help, expr)                                 \
	do {                                                      \
		family(b, name, "gauge", help);                   \
		for (i = 0; i < nb; i++)                          \
			sample_u(b, name, pl[i], (uint64_t)(expr)); \
	} while (0)
	POOL_FAM("spanbox_pool_size_mbufs", "Mbufs in the pool.", shm->pools[i].size);
	POOL_FAM("spanbox_pool_in_use_mbufs", "Mbufs taken from the pool (refreshed by the primary every 100 ms).",
		 shm->pools[i].in_use);
	POOL_FAM("spanbox_pool_available_mbufs", "Mbufs free in the pool, lcore caches included.",
		 shm->pools[i].avail);
	POOL_FAM("spanbox_pool_cache_size_mbufs", "Size of each lcore's cache of the pool.", shm->pools[i].cache_size);
	POOL_FAM("spanbox_pool_memory_bytes", "Memory holding the pool's objects.", shm->pools[i].bytes);
#undef POOL_FAM
	family(b, "spanbox_pool_cached_mbufs", "gauge", "Mbufs sitting in the pool's lcore caches now.");
	for (i = 0; i < nb; i++) {
		const struct rte_mempool *mp = rte_mempool_lookup(shm->pools[i].name);

		if (mp != NULL)
			sample_u(b, "spanbox_pool_cached_mbufs", pl[i], mgmt_mempool_cached(mp));
	}
	family(b, "spanbox_pool_populate_seconds", "gauge", "Time rte_pktmbuf_pool_create took for the pool.");
	for (i = 0; i < nb; i++)
		sample_d(b, "spanbox_pool_populate_seconds", pl[i], (double)shm->pools[i].populate_ns / 1e9);
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
		port_metrics(b, shm, plbl);
		worker_metrics(b, shm, plbl);
		mirror_metrics(b, shm);
		pool_metrics(b, shm);
	}
}

/* GET /metrics: always 200 (spanbox_up 0 and the mgmt families when the appliance is down). */
static unsigned int get_metrics(struct req *r, cJSON **body)
{
	char why[256];
	struct pbuf b = { 0 };

	metrics_text(&b, mgmt_live_shm(r->ctx, why, sizeof(why)), r->ctx->db);
	if (b.oom || b.s == NULL) {
		free(b.s);
		*body = mgmt_error(MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
		return MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
	*body = cJSON_CreateString(b.s);
	free(b.s);
	r->content_type = PROM_CONTENT_TYPE;
	return MHD_HTTP_OK;
}

/* ------------------------------------------------------------------------------------------- */
/* Port stats and link. */

/* The live memzone and the port of path parameter {name}; -1 with the 503 or 404 answer set. */
static int find_port(struct req *r, cJSON **body, unsigned int *code, const struct sbx_shm **shm)
{
	int i;

	*shm = mgmt_need_shm(r, body, code);
	if (*shm == NULL)
		return -1;
	i = mgmt_port_index(*shm, r->params[0]);
	if (i < 0) {
		*body = mgmt_error(MHD_HTTP_NOT_FOUND, NULL, "no port %s", r->params[0]);
		*code = MHD_HTTP_NOT_FOUND;
	}
	return i;
}

/*
 * The port's extended stats, read here (mgmt is a secondary). For vdevs (net_tap, net_null,
 * net_ring...) the secondary attaches to the primary's shared rte_eth_dev_data and its PMD ops read
 * counters kept in the port's shared private data, which is what DPDK made secondaries able to do
 * (release 18.05, "procinfo on eth vdev"). A port this process did not attach, or whose PMD does
 * not answer, gives null and the reason in "xstats_error" instead.
 */
static void xstats_json(cJSON *o, uint16_t pid)
{
	struct rte_eth_xstat_name *names = NULL;
	struct rte_eth_xstat *vals = NULL;
	cJSON *x;
	int n, m, k;

	n = rte_eth_xstats_get_names(pid, NULL, 0);
	if (n < 0)
		goto fail;
	names = calloc((size_t)n + 1, sizeof(*names));
	vals = calloc((size_t)n + 1, sizeof(*vals));
	if (names == NULL || vals == NULL) {
		n = -ENOMEM;
		goto fail;
	}
	m = rte_eth_xstats_get_names(pid, names, (unsigned int)n);
	k = rte_eth_xstats_get(pid, vals, (unsigned int)n);
	if (m < 0 || k < 0) {
		n = m < 0 ? m : k;
		goto fail;
	}
	if (m > n || k > n) { /* the port grew queues meanwhile: ask again next time */
		n = -EAGAIN;
		goto fail;
	}
	x = cJSON_AddObjectToObject(o, "xstats");
	for (k = 0; k < m && k < n; k++)
		if (vals[k].id < (uint64_t)m)
			cJSON_AddNumberToObject(x, names[vals[k].id].name, (double)vals[k].value);
	free(names);
	free(vals);
	return;
fail:
	free(names);
	free(vals);
	cJSON_AddNullToObject(o, "xstats");
	cJSON_AddStringToObject(o, "xstats_error", n == -ENOTSUP ? "the driver has no xstats in this process"
						  : rte_strerror(-n));
}

/* GET /api/v1/ports/{name}/stats */
static unsigned int get_port_stats(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm;
	int i = find_port(r, body, &code, &shm);
	const struct sbx_port_shm *ps;
	struct sbx_port_counters sum;
	struct rte_eth_stats st;
	char ethname[RTE_ETH_NAME_MAX_LEN] = "";
	bool live = false;
	cJSON *o, *s;
	uint16_t w;

	if (i < 0)
		return code;
	ps = &shm->ports[i];
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "port", r->params[0]);
	cJSON_AddNumberToObject(o, "port_id", ps->port_id);
	cJSON_AddStringToObject(o, "kind", shm->cfg.ports[i].kind == SBX_PORT_BRIDGED ? "bridged" : "ethdev");
	/* bridged (pcap) ports are driven by the primary alone (docs/PCAP_SECONDARY.md): its numbers */
	if (shm->cfg.ports[i].kind != SBX_PORT_BRIDGED && rte_eth_dev_is_valid_port(ps->port_id)) {
		rte_eth_dev_get_name_by_port(ps->port_id, ethname);
		live = rte_eth_stats_get(ps->port_id, &st) == 0;
	}
	if (!live) {
		memset(&st, 0, sizeof(st));
		st.ipackets = ps->ipackets;
		st.opackets = ps->opackets;
		st.ibytes = ps->ibytes;
		st.obytes = ps->obytes;
		st.imissed = ps->imissed;
		st.ierrors = ps->ierrors;
		st.oerrors = ps->oerrors;
		st.rx_nombuf = ps->rx_nombuf;
	}
	if (ethname[0])
		cJSON_AddStringToObject(o, "ethdev", ethname);
	else
		cJSON_AddNullToObject(o, "ethdev");
	cJSON_AddStringToObject(o, "stats_source", live ? "ethdev" : "primary");
	s = cJSON_AddObjectToObject(o, "stats");
	cJSON_AddNumberToObject(s, "rx_packets", (double)st.ipackets);
	cJSON_AddNumberToObject(s, "tx_packets", (double)st.opackets);
	cJSON_AddNumberToObject(s, "rx_bytes", (double)st.ibytes);
	cJSON_AddNumberToObject(s, "tx_bytes", (double)st.obytes);
	cJSON_AddNumberToObject(s, "rx_errors", (double)st.ierrors);
	cJSON_AddNumberToObject(s, "tx_errors", (double)st.oerrors);
	cJSON_AddNumberToObject(s, "rx_missed", (double)st.imissed);
	cJSON_AddNumberToObject(s, "rx_nombuf", (double)st.rx_nombuf);
	if (live) {
		xstats_json(o, ps->port_id);
	} else {
		cJSON_AddNullToObject(o, "xstats");
		cJSON_AddStringToObject(o, "xstats_error",
					shm->cfg.ports[i].kind == SBX_PORT_BRIDGED
						? "pcap port: read and written by the primary, not an ethdev of mgmt"
						: "port not attached in mgmt (secondary process)");
	}
	mgmt_port_worker_sum(shm, (uint16_t)i, mgmt_nb_workers(shm), &sum);
	s = cJSON_AddObjectToObject(o, "workers");
	cJSON_AddNumberToObject(s, "rx_packets", (double)sum.rx_pkts);
	cJSON_AddNumberToObject(s, "rx_bytes", (double)sum.rx_bytes);
	cJSON_AddNumberToObject(s, "tx_packets", (double)sum.tx_pkts);
	cJSON_AddNumberToObject(s, "tx_bytes", (double)sum.tx_bytes);
	cJSON_AddNumberToObject(s, "drop_packets", (double)sum.drop_pkts);
	cJSON_AddNumberToObject(s, "drop_bytes", (double)sum.drop_bytes);
	cJSON_AddNumberToObject(s, "runt", (double)sum.runt);
	cJSON_AddNumberToObject(s, "oversize", (double)sum.oversize);
	s = cJSON_AddArrayToObject(o, "per_worker");
	for (w = 0; w < mgmt_nb_workers(shm); w++) {
		const struct sbx_port_counters *c = &shm->workers[w].stats.port[i];
		cJSON *wo = cJSON_CreateObject();

		cJSON_AddNumberToObject(wo, "worker", w);
		cJSON_AddNumberToObject(wo, "rx_packets", (double)c->rx_pkts);
		cJSON_AddNumberToObject(wo, "rx_bytes", (double)c->rx_bytes);
		cJSON_AddNumberToObject(wo, "tx_packets", (double)c->tx_pkts);
		cJSON_AddNumberToObject(wo, "tx_bytes", (double)c->tx_bytes);
		cJSON_AddNumberToObject(wo, "drop_packets", (double)c->drop_pkts);
		cJSON_AddNumberToObject(wo, "drop_bytes", (double)c->drop_bytes);
		cJSON_AddNumberToObject(wo, "runt", (double)c->runt);
		cJSON_AddNumberToObject(wo, "oversize", (double)c->oversize);
		cJSON_AddItemToArray(s, wo);
	}
	*body = o;
	return code;
}

/* PUT /api/v1/ports/{name}/link {"up": bool}: done by the primary (control.c), recorded as an event. */
static unsigned int put_port_link(struct req *r, cJSON **body)
{
	unsigned int code = MHD_HTTP_OK;
	const struct sbx_shm *shm;
	int i = find_port(r, body, &code, &shm);
	struct sbx_ctl_reply rep;
	uint32_t res;
	char detail[384];
	cJSON *doc, *up, *it;
	bool want;

	if (i < 0)
		return code;
	if (mgmt_run_on(r, MGMT_LANE_CONTROL)) /* it waits for the primary */
		return 0;
	doc = mgmt_parse_body(r, body, &code);
	if (doc == NULL)
		return code;
	up = cJSON_IsObject(doc) ? cJSON_GetObjectItemCaseSensitive(doc, "up") : NULL;
	if (!cJSON_IsBool(up)) {
		cJSON_Delete(doc);
		*body = mgmt_error(MHD_HTTP_UNPROCESSABLE_CONTENT, "up", "up: expected true or false");
		return MHD_HTTP_UNPROCESSABLE_CONTENT;
	}
	cJSON_ArrayForEach(it, doc) {
		if (it->string != NULL && strcmp(it->string, "up") != 0) {
			*body = mgmt_error(MHD_HTTP_UNPROCESSABLE_CONTENT, it->string, "%.64s: unknown member (only \"up\")",
					   it->string);
			cJSON_Delete(doc);
			return MHD_HTTP_UNPROCESSABLE_CONTENT;
		}
	}
	want = cJSON_IsTrue(up);
	cJSON_Delete(doc);
	res = mgmt_control(SBX_CTL_LINK_SET, (uint32_t)i, want ? 1 : 0, &rep); /* control lane: may wait */
	if (res == SBX_CTL_NONE || res == SBX_CTL_BUSY) {
		snprintf(r->retry_after, sizeof(r->retry_after), "1");
		*body = mgmt_error(MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "primary did not set the link: %s", rep.error);
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	if (res != SBX_CTL_OK) {
		snprintf(detail, sizeof(detail), "port %s link %s requested by %s refused: %s", r->params[0],
			 want ? "up" : "down", r->client, rep.error[0] ? rep.error : sbx_ctl_result_name(res));
		mgmt_db_event(r->ctx->db, "port_link", detail);
		*body = mgmt_error(MHD_HTTP_CONFLICT, NULL, "port %s: %s", r->params[0],
				   rep.error[0] ? rep.error : sbx_ctl_result_name(res));
		return MHD_HTTP_CONFLICT;
	}
	snprintf(detail, sizeof(detail), "port %s link set %s by %s: now %s", r->params[0], want ? "up" : "down",
		 r->client, rep.link_up ? "up" : "down");
	mgmt_db_event(r->ctx->db, "port_link", detail);
	*body = cJSON_CreateObject();
	cJSON_AddStringToObject(*body, "port", r->params[0]);
	cJSON_AddBoolToObject(*body, "requested_up", want);
	it = cJSON_AddObjectToObject(*body, "link");
	cJSON_AddBoolToObject(it, "up", rep.link_up != 0);
	cJSON_AddNumberToObject(it, "speed_mbps", shm->ports[i].link_speed);
	return code;
}

const struct mgmt_route mgmt_routes_metrics[] = {
	{ "GET", "/metrics", get_metrics },
	{ "GET", "/api/v1/ports/{name}/stats", get_port_stats },
	{ "PUT", "/api/v1/ports/{name}/link", put_port_link },
	{ NULL, NULL, NULL },
};
