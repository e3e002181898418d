/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ingress stages of a port as /status shows them (ports[].ingress): the counters of each decap
 * rule and the tunnel senders of every worker summed by (kind, outer source, id). The per-port
 * counters of the stages (decap_packets, dedup_duplicates, ...) are in the port counter list
 * (counters.h) and appear with the others.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spanbox/decap.h"

#include "ingress_view.h"
#include "timefmt.h"


void mgmt_ingress_rules(const struct sbx_shm *shm, uint16_t port, uint16_t nb_w, uint64_t pkts[SBX_MAX_DECAP_RULES],
			uint64_t bytes[SBX_MAX_DECAP_RULES])
{
	unsigned int k, w;

	for (k = 0; k < SBX_MAX_DECAP_RULES; k++) {
		pkts[k] = bytes[k] = 0;
		for (w = 0; w < nb_w; w++) {
			pkts[k] += sbx_shm_worker(shm, w)->stats.ingress.rule_pkts[port][k];
			bytes[k] += sbx_shm_worker(shm, w)->stats.ingress.rule_bytes[port][k];
		}
	}
}

/* Copy slot @p e into @p out when it holds a sender of port @p port, consistently (its gen even and
 * unchanged across the copy: the worker is not taking or freeing it). @return true when copied. */
static bool sender_copy(const struct sbx_tunnel_source *e, uint16_t port, struct sbx_tunnel_source *out)
{
	uint32_t g = __atomic_load_n(&e->gen, __ATOMIC_ACQUIRE);

	if ((g & 1) || !__atomic_load_n(&e->used, __ATOMIC_ACQUIRE) || e->port != port)
		return false;
	memcpy(out, e, sizeof(*out));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&e->gen, __ATOMIC_RELAXED) == g && out->used && out->port == port;
}

unsigned int mgmt_ingress_senders(const struct sbx_shm *shm, uint16_t port, uint16_t nb_w,
				  struct sbx_tunnel_source *sum, uint64_t *untracked)
{
	unsigned int n = 0, i, k, w;
	struct sbx_tunnel_source e;

	*untracked = 0;
	for (w = 0; w < nb_w; w++) {
		const struct sbx_tunnel_source *src = sbx_shm_senders(shm, w);

		*untracked += sbx_shm_worker(shm, w)->stats.port[port].tunnels_untracked;
		for (i = 0; i < shm->layout.senders_per_worker && i < SBX_MAX_TUNNEL_SOURCES; i++) {
			if (!sender_copy(&src[i], port, &e))
				continue;
			for (k = 0; k < n; k++)
				if (sum[k].kind == e.kind && sum[k].id == e.id && sum[k].af == e.af &&
				    memcmp(sum[k].src, e.src, sizeof(e.src)) == 0)
					break;
			if (k == n) {
				sum[n++] = e;
				continue;
			}
			sum[k].packets += e.packets;
			sum[k].bytes += e.bytes;
			sum[k].seq_gaps += e.seq_gaps;
			sum[k].seq.lost += e.seq.lost;
			sum[k].seq.lost_final += e.seq.lost_final;
			sum[k].seq_reordered += e.seq_reordered;
			sum[k].seq_duplicates += e.seq_duplicates;
			sum[k].seq_frames += e.seq_frames;
			sum[k].truncated += e.truncated;
			sum[k].seq_not_maintained |= e.seq_not_maintained;
			if (e.last_seen_ns > sum[k].last_seen_ns)
				sum[k].last_seen_ns = e.last_seen_ns;
		}
	}
	return n;
}

void mgmt_tunnel_source_text(const struct sbx_tunnel_source *e, char *buf, size_t len)
{
	if (inet_ntop(e->af == 6 ? AF_INET6 : AF_INET, e->src, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "?");
}

void mgmt_ingress_ts(const struct sbx_shm *shm, uint16_t port, uint16_t nb_w, struct sbx_ts_in_offset *out)
{
	unsigned int w;

	memset(out, 0, sizeof(*out));
	for (w = 0; w < nb_w; w++) {
		struct sbx_ts_in_offset o = sbx_shm_worker(shm, w)->stats.ingress.ts[port]; /* a copy: the worker writes on */

		sbx_ts_in_offset_merge(out, &o);
	}
}

/* The "timestamp" object of port @p port's ingress (format @p c->ts_format). */
static cJSON *ts_json(const struct sbx_shm *shm, const struct sbx_ingress_cfg *c, uint16_t port, uint16_t nb_w)
{
	cJSON *t = cJSON_CreateObject(), *off;
	struct sbx_ts_in_offset o;
	char ts[40];

	if (t == NULL)
		return NULL;
	mgmt_ingress_ts(shm, port, nb_w, &o);
	cJSON_AddStringToObject(t, "format", c->ts_format == SBX_TS_IN_ARISTA ? "arista" : "metamako");
	cJSON_AddNumberToObject(t, "frames", (double)o.frames);
	off = cJSON_AddObjectToObject(t, "offset_ns");
	if (o.frames == 0) {
		cJSON_AddNullToObject(off, "last");
		cJSON_AddNullToObject(off, "min");
		cJSON_AddNullToObject(off, "max");
		cJSON_AddNullToObject(t, "last_seen");
		return t;
	}
	cJSON_AddNumberToObject(off, "last", (double)o.last_ns);
	cJSON_AddNumberToObject(off, "min", (double)o.min_ns);
	cJSON_AddNumberToObject(off, "max", (double)o.max_ns);
	mgmt_rfc3339(o.seen_ns, ts, sizeof(ts));
	cJSON_AddStringToObject(t, "last_seen", ts);
	return t;
}

cJSON *mgmt_ingress_json(const struct sbx_shm *shm, uint16_t port, uint16_t nb_w)
{
	const struct sbx_ingress_cfg *c = &sbx_shm_cfg(shm)->ports[port].ingress;
	uint64_t pkts[SBX_MAX_DECAP_RULES], bytes[SBX_MAX_DECAP_RULES], untracked;
	struct sbx_tunnel_source *sum;
	cJSON *o, *rules, *tun;
	unsigned int n, k;

	if (sbx_ingress_cfg_empty(c))
		return cJSON_CreateNull();
	sum = malloc(sizeof(*sum) * MGMT_INGRESS_SENDERS_MAX);
	o = cJSON_CreateObject();
	if (sum == NULL || o == NULL) {
		free(sum);
		cJSON_Delete(o);
		return NULL;
	}
	mgmt_ingress_rules(shm, port, nb_w, pkts, bytes);
	rules = cJSON_AddArrayToObject(o, "decap");
	for (k = 0; k < c->nb_decap && k < SBX_MAX_DECAP_RULES; k++) {
		cJSON *r = cJSON_CreateObject();

		cJSON_AddStringToObject(r, "type", sbx_decap_type_name(c->decap[k].type));
		cJSON_AddNumberToObject(r, "packets", (double)pkts[k]);
		cJSON_AddNumberToObject(r, "bytes", (double)bytes[k]);
		cJSON_AddItemToArray(rules, r);
	}
	n = mgmt_ingress_senders(shm, port, nb_w, sum, &untracked);
	tun = cJSON_AddArrayToObject(o, "tunnels");
	for (k = 0; k < n; k++) {
		cJSON *t = cJSON_CreateObject();
		char addr[INET6_ADDRSTRLEN], ts[40];

		mgmt_tunnel_source_text(&sum[k], addr, sizeof(addr));
		cJSON_AddStringToObject(t, "kind", sbx_tunnel_kind_name(sum[k].kind));
		cJSON_AddStringToObject(t, "source", addr);
		cJSON_AddNumberToObject(t, "id", sum[k].id);
		cJSON_AddNumberToObject(t, "packets", (double)sum[k].packets);
		cJSON_AddNumberToObject(t, "bytes", (double)sum[k].bytes);
		cJSON_AddStringToObject(t, "sequence", sbx_tunnel_sequence_name(&sum[k]));
		cJSON_AddNumberToObject(t, "seq_gaps", (double)sum[k].seq_gaps);
		cJSON_AddNumberToObject(t, "seq_lost", (double)sum[k].seq.lost);
		cJSON_AddNumberToObject(t, "seq_reordered", (double)sum[k].seq_reordered);
		cJSON_AddNumberToObject(t, "seq_duplicates", (double)sum[k].seq_duplicates);
		cJSON_AddNumberToObject(t, "truncated", (double)sum[k].truncated);
		mgmt_rfc3339(sum[k].last_seen_ns, ts, sizeof(ts));
		cJSON_AddStringToObject(t, "last_seen", ts);
		cJSON_AddItemToArray(tun, t);
	}
	cJSON_AddNumberToObject(o, "tunnels_untracked", (double)untracked);
	if (c->ts_format != SBX_TS_IN_NONE)
		cJSON_AddItemToObject(o, "timestamp", ts_json(shm, c, port, nb_w));
	free(sum);
	return o;
}
