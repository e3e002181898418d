/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file config_maps.h
 * The config section "maps" (issue #27, docs/CONFIG.md "maps", docs/MAPS.md): its parser, one
 * entry point called by sbx_config_parse(), and what keeps the rules out of the config document
 * of the memzone (64 KiB): the primary takes the rule tables out of the document it runs
 * (sbx_config_maps_take), which then holds per map only {"count": N, "digest": "<16 hex>"}; that
 * summary parses to the same struct sbx_map_cfg as the rules it stands for, so a running document
 * still names its tables and a change of them is refused as a change of a static section.
 * Pure: no EAL (cJSON and the rule parser of maprules.h).
 */
#ifndef SPANBOX_CONFIG_MAPS_H
#define SPANBOX_CONFIG_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spanbox/config.h"
#include "spanbox/maprules.h"

struct cJSON;

/** The file of the EAL runtime directory where mgmt puts the rules of the maps a change replaces
 *  ({"request_id": N, "maps": [{"id": .., "rules": [..]}]}), read by the primary's tables thread. */
#define SBX_MAPS_STAGING_FILE "spanbox_maps_staging.json"
/** The file of the EAL runtime directory where the primary keeps the running rule tables, as given
 *  ({"gen": g, "maps": [{"id": .., "rules": [..]}]}, replaced whole by rename), read by mgmt. */
#define SBX_MAPS_RUNNING_FILE "spanbox_maps.json"

/** Largest config file, bytes: its maps' rules may take what the 64 KiB of the rest do not. */
#define SBX_CONFIG_FILE_MAX ((64 << 20) - 1)

/**
 * Parse the optional array "maps" of the config @p root into cfg->maps / cfg->nb_maps (needs
 * ports, tool_groups and mirrors parsed: a map's id and name are unique among mirrors and maps).
 * Each map is a mirror session object (the mirror keys, parsed by the same code) plus "rules" (an
 * array of rules, maprules.h; or the summary {"count", "digest"} of a running document) and
 * "collector" (bool). Refused: a recorder destination, a collector with rules, more than
 * SBX_MAX_MAPS maps or SBX_MAP_MAX_RULES rules in all, any bad rule; with @p file (a config file,
 * not a running document) a summary.
 * @param err  "maps[i].<key>: why", e.g. "maps[0].rules[3].dst_port: 70000 is not a port"
 * @return 0, or -1
 */
int sbx_config_maps_parse(const struct cJSON *root, struct sbx_config *cfg, bool file, char *err, size_t errlen);

/** FNV-1a 64 of the canonical fields of every rule of @p r (0 rules: the FNV offset basis). */
uint64_t sbx_config_maps_digest(const struct sbx_map_rules *r);

/**
 * Whether config text @p text fits @p max bytes as the memzone will store it: printed without
 * whitespace, each map's rules replaced by their summary (sbx_config_maps_take()). false when it is not JSON or has no map with a rule array: such a file is
 * judged by its own size.
 */
bool sbx_config_maps_fits(const char *text, size_t max);

/**
 * Take the rule tables out of config document @p text (valid: sbx_config_parse accepted it):
 * tables[i] = the rules of maps[i] (heap: sbx_map_rules_free each), *nb = the number of maps.
 * @return the document with each map's rules replaced by its summary (malloc'd, the caller
 *         frees), or NULL with @p err: out of memory, or a map given as a summary (the rules
 *         themselves are needed at start: "maps[i].rules: ...")
 */
char *sbx_config_maps_take(const char *text, struct sbx_map_rules tables[SBX_MAX_MAPS], uint16_t *nb, char *err,
			   size_t errlen);

#endif
