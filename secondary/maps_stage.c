/* SPDX-License-Identifier: BSD-3-Clause */
/* The maps stage of a worker (maps_stage.h, docs/MAPS.md). */
#include <stdio.h>
#include <string.h>

#include <rte_prefetch.h>

#include "maps_stage.h"

/* No map watches anything: what a failed setup leaves. */
static void stage_clear(struct sbx_maps_stage *ms)
{
	memset(ms->acl, 0, sizeof(ms->acl));
	memset(ms->watches, 0, sizeof(ms->watches));
	memset(ms->watch, 0, sizeof(ms->watch));
	memset(ms->collect, 0, sizeof(ms->collect));
	memset(ms->colmask, 0, sizeof(ms->colmask));
	memset(ms->counts, 0, sizeof(ms->counts));
}

int sbx_maps_stage_setup(struct sbx_maps_stage *ms, const struct sbx_tables *t, struct sbx_worker_stats *st,
			 unsigned int worker, char *err, size_t errlen)
{
	const struct sbx_config *cfg = &t->cfg;
	const struct sbx_rule_ctrs *ctr = t->maps.ctr;

	stage_clear(ms);
	memset(ms->col, 0, sizeof(ms->col));
	ms->classified = &st->maps_classified;
	for (uint16_t j = 0; j < cfg->nb_maps && j < SBX_MAX_MAPS; j++) {
		const struct sbx_map_cfg *m = &cfg->maps[j];

		for (uint16_t k = 0; k < m->s.nb_sources; k++)
			for (int d = 0; d < 2; d++)
				if (m->s.sources[k].direction & (d ? SBX_DIR_TX : SBX_DIR_RX)) {
					sbx_mapset_set(&ms->watch[m->s.sources[k].port][d], j);
					ms->watches[m->s.sources[k].port][d] = true;
					if (m->collector)
						sbx_mapset_set(&ms->collect[m->s.sources[k].port][d], j);
				}
	}
	for (uint16_t p = 0; p < cfg->nb_ports; p++) {
		ms->acl[p] = t->maps.acl[p];
		ms->nb_cols[p] = t->maps.nb_cols[p] <= SBX_MAX_MAPS ? t->maps.nb_cols[p] : SBX_MAX_MAPS;
		memcpy(ms->cols[p], t->maps.cols[p], sizeof(ms->cols[p]));
		/* this worker's row: the spare index (>= nb_rows) counts nowhere */
		for (uint16_t c = 0; ctr != NULL && worker < ctr->nb_rows && c < ms->nb_cols[p]; c++) {
			const uint16_t j = ms->cols[p][c];

			ms->col[p][c] = sbx_rule_ctrs_map(ctr, worker, j);
			if (ms->col[p][c] == NULL)
				continue;
			for (int d = 0; d < 2; d++)
				if (sbx_mapset_test(&ms->watch[p][d], j)) {
					sbx_mapset_set(&ms->colmask[p][d], c);
					ms->counts[p][d] = true;
				}
		}
		if ((ms->acl[p] != NULL && sbx_mapacl_check_shared(ms->acl[p], err, errlen) != 0) ||
		    (ms->acl[p] == NULL && ms->nb_cols[p] != 0 &&
		     snprintf(err, errlen, "maps: port %s has maps but no classifier", cfg->ports[p].name) > 0)) {
			/* never classify with what this process cannot find: no map watches anything */
			stage_clear(ms);
			return -1;
		}
	}
	return 0;
}

void sbx_maps_stage_burst(struct sbx_maps_stage *ms, uint16_t port, uint8_t dir, struct rte_mbuf **pkts, uint16_t n,
			  struct sbx_mapset *sets, struct sbx_mapset *any)
{
	const int d = dir == SBX_DIR_TX;
	const struct sbx_mapset *watch = &ms->watch[port][d], *collect = &ms->collect[port][d];
	const bool collects = !sbx_mapset_empty(collect);
	const struct sbx_mapacl *a = ms->acl[port];
	struct sbx_mapset u = { { 0 } };
	uint16_t i;

	if (a == NULL) { /* collectors alone: they take every frame */
		for (i = 0; i < n; i++)
			sets[i] = *collect;
		*any = n != 0 ? *collect : u;
		return;
	}
	/* The frames' first lines, all at once: written by another core (the NIC's DMA, a pcap or
	 * ring port's producer), so each is a miss, and the extraction below would take them one
	 * after the other (docs/BENCHMARKS.md "Maps in the running product": what this moved) */
	for (i = 0; i < n; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], const void *));
	for (i = 0; i < n; i++) { /* the frame as the tools receive it, its first 256 bytes at most */
		uint8_t buf[256];
		uint32_t len = RTE_MIN(pkts[i]->pkt_len, (uint32_t)sizeof(buf));
		const uint8_t *f = rte_pktmbuf_read(pkts[i], 0, len, buf);

		sbx_map_key_extract(f, f != NULL ? len : 0, &ms->keys[i]);
		ms->len[i] = pkts[i]->pkt_len;
	}
	sbx_mapacl_classify(a, ms->keys, n, ms->results);
	*ms->classified += n;
	{
		const uint32_t stride = sbx_mapacl_stride(a), nc = ms->nb_cols[port];
		const uint16_t *cols = ms->cols[port];

		if (ms->counts[port][d])
			sbx_rule_ctrs_count(ms->col[port], nc, &ms->colmask[port][d], ms->results, stride, ms->len, n);

		for (i = 0; i < n; i++) {
			const uint32_t *r = &ms->results[i * stride];

			if (sbx_mapacl_frame_set(r, nc, cols, watch, collect, collects, &sets[i]))
				sbx_mapset_or(&u, &sets[i]);
		}
	}
	*any = u;
}
