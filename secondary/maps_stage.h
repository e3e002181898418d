/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file maps_stage.h
 * The maps stage of a worker (issue #27, docs/MAPS.md): a burst of frames as they leave the
 * ingress stages in, each frame's set of maps out (struct sbx_mapset, mapset.h: map j in it =
 * cfg.maps[j] takes it), from one rte_acl lookup per frame and per set of 16 maps on the port
 * (SBX_MAPACL_MAPS_PER_CTX: 240 maps on one port are 15 lookups) in the classifier the primary
 * built for the port (shm->maps, primary/maps.c): the first rule of a map that matches decides (pass or drop); a collector map
 * takes the frames no other map watching that port and direction passed. The frames are only
 * read (the forward path stays copy-free); the mirror engine makes the copies
 * (sbx_mirror_prepare_maps). Static: set up once, from the config as parsed at start.
 */
#ifndef SPANBOX_MAPS_STAGE_H
#define SPANBOX_MAPS_STAGE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "spanbox/mapacl.h"
#include "spanbox/maprulectr.h"
#include "spanbox/mapset.h"
#include "spanbox/shm.h"

/** Results of one classification: frames x categories (a set of up to 16 maps takes 16 columns). */
#define SBX_MAPS_STAGE_RESULTS (SBX_MAX_BURST * (SBX_MAX_MAPS + SBX_MAPACL_MAPS_PER_CTX))

/** One worker's maps stage. */
struct sbx_maps_stage {
	const struct sbx_mapacl *acl[SBX_MAX_PORTS]; /**< tables' maps.acl[p]: NULL, no map with rules on p */
	uint16_t nb_cols[SBX_MAX_PORTS];
	uint16_t cols[SBX_MAX_PORTS][SBX_MAX_MAPS];  /**< category c of acl[p] -> map index */
	bool watches[SBX_MAX_PORTS][2];              /**< a map watches RX [0] / TX [1] of p (watch not empty) */
	struct sbx_mapset watch[SBX_MAX_PORTS][2];   /**< maps watching RX [0] / TX [1] of p */
	struct sbx_mapset collect[SBX_MAX_PORTS][2]; /**< the collectors among them */
	uint64_t *classified;                        /**< the worker's maps_classified counter (shm) */
	struct sbx_map_key keys[SBX_MAX_BURST];
	uint32_t results[SBX_MAPS_STAGE_RESULTS];
	/* per-rule counters (maprulectr.h): this worker's row of the tables' block */
	struct sbx_rule_ctr *col[SBX_MAX_PORTS][SBX_MAX_MAPS]; /**< category c of acl[p]: its map's rule 0 */
	struct sbx_mapset colmask[SBX_MAX_PORTS][2]; /**< categories of acl[p] (bit c: category c) whose map
							  watches RX [0] / TX [1] */
	bool counts[SBX_MAX_PORTS][2];               /**< colmask[p][d] not empty */
	uint32_t len[SBX_MAX_BURST];                 /**< the burst's frame lengths (bytes counted) */
};

/**
 * Set up @p ms from the maps of the runtime tables @p t (cfg.maps, maps), counting into @p st and
 * into row @p worker (the worker's slot) of the tables' per-rule counters (maps.ctr); called
 * at start and at every change of the tables, between two bursts (docs/RUNTIME_TABLES.md "Maps"). Checks
 * that each port's classifier is the primary's (sbx_mapacl_check_shared: its contexts found by
 * name in DPDK's RTE_ACL tailq from this process).
 * @return 0, or -1 with "maps: why" in @p err
 */
int sbx_maps_stage_setup(struct sbx_maps_stage *ms, const struct sbx_tables *t, struct sbx_worker_stats *st,
			 unsigned int worker, char *err, size_t errlen);

/** @return true when a map watches @p dir (SBX_DIR_RX / SBX_DIR_TX) of @p port. */
static inline bool sbx_maps_stage_watches(const struct sbx_maps_stage *ms, uint16_t port, uint8_t dir)
{
	return ms->watches[port][dir == SBX_DIR_TX];
}

/**
 * The maps of each of the @p n frames @p pkts (n <= SBX_MAX_BURST; only read) seen on @p dir of
 * @p port: map j in @p sets[i] when map j watches that port and direction and its rules pass
 * frame i, or when map j is a collector there and no other map passed it; @p any, the union of
 * the n sets (the maps that take a frame of the burst: sbx_mirror_prepare_maps visits only
 * those). The rule that decided (pass or drop) for each map watching there counts the frame
 * (packets, bytes of pkt_len).
 */
void sbx_maps_stage_burst(struct sbx_maps_stage *ms, uint16_t port, uint8_t dir, struct rte_mbuf **pkts, uint16_t n,
			  struct sbx_mapset *sets, struct sbx_mapset *any);

#endif
