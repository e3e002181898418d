/* SPDX-License-Identifier: BSD-3-Clause */
/* The worker's timestamps-in stage (ts_in_stage.h, docs/INGRESS.md "Timestamps in"). */
#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "ts_in_stage.h"

int sbx_ts_dyn_off = -1;
uint64_t sbx_ts_dyn_flag;

int sbx_ts_in_dyn_init(void)
{
	if (sbx_ts_dyn_flag != 0)
		return 0;
	if (rte_mbuf_dyn_rx_timestamp_register(&sbx_ts_dyn_off, &sbx_ts_dyn_flag) != 0) {
		sbx_ts_dyn_off = -1;
		sbx_ts_dyn_flag = 0;
		return -1;
	}
	return 0;
}

/* Count malformed result @p r on @p pc. */
static void count_malformed(struct sbx_port_counters *pc, enum sbx_ts_in_result r)
{
	switch (r) {
	case SBX_TS_IN_MALFORMED_subtype: pc->ts_in_bad_subtype++; break;
	case SBX_TS_IN_MALFORMED_version: pc->ts_in_bad_version++; break;
	case SBX_TS_IN_MALFORMED_implausible: pc->ts_in_bad_implausible++; break;
	default: pc->ts_in_bad_short++; break;
	}
}

int sbx_ts_in_frame(const struct sbx_ingress_cfg *c, struct rte_mbuf *m, struct sbx_port_counters *pc,
		    struct sbx_ts_in_offset *off, uint64_t now_ns)
{
	uint8_t buf[SBX_METAMAKO_TAIL_MAX];
	struct sbx_ts_in_info ti;
	enum sbx_ts_in_result r;

	if (c->ts_format == SBX_TS_IN_ARISTA) {
		uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);

		r = sbx_ts_in_avsp(f, m->data_len, c->ts_tai_offset_s, now_ns, &ti);
		if (r == SBX_TS_IN_MALFORMED_short && m->data_len < m->pkt_len) {
			/* the header may go on in the next segment: read it whole to tell */
			uint32_t n = RTE_MIN(m->pkt_len, 32u);
			const uint8_t *h = rte_pktmbuf_read(m, 0, n, buf);

			if (h != NULL && sbx_ts_in_avsp(h, n, c->ts_tai_offset_s, now_ns, &ti) == SBX_TS_IN_OK) {
				pc->ingress_unwritable++; /* a header across segments: not cut in place */
				return 1;
			}
		}
		if (r == SBX_TS_IN_ABSENT) {
			pc->ts_in_absent++;
			return 0;
		}
		if (r != SBX_TS_IN_OK) {
			count_malformed(pc, r);
			return 1;
		}
		sbx_ts_in_cut_front(f, ti.cut_front);
		rte_pktmbuf_adj(m, (uint16_t)ti.cut_front); /* within the first segment: checked by the parse */
	} else {
		uint32_t t = RTE_MIN(m->pkt_len, SBX_METAMAKO_TAIL_MAX);
		const uint8_t *tail = rte_pktmbuf_read(m, m->pkt_len - t, t, buf);

		r = tail ? sbx_ts_in_metamako(tail, t, m->pkt_len, c->ts_fcs, c->ts_window_s, now_ns, &ti)
			 : SBX_TS_IN_MALFORMED_short;
		if (r != SBX_TS_IN_OK) {
			count_malformed(pc, r);
			return 1;
		}
		if (rte_pktmbuf_trim(m, (uint16_t)ti.cut_back) != 0) {
			pc->ingress_unwritable++; /* the trailer spans segments: not cut in place */
			return 1;
		}
	}
	m->packet_type = 0; /* the PMD's classification was of the frame with its header */
	if (sbx_ts_dyn_flag != 0) {
		*RTE_MBUF_DYNFIELD(m, sbx_ts_dyn_off, rte_mbuf_timestamp_t *) = ti.ns;
		m->ol_flags |= sbx_ts_dyn_flag;
	}
	sbx_ts_in_offset_add(off, ti.ns, now_ns);
	pc->ts_in_pkts++;
	return 0;
}
