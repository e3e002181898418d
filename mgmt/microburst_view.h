/* SPDX-License-Identifier: BSD-3-Clause */
/* A port's microburst windows as /status shows them (docs/MGMT.md "Microbursts", issue #26). */
#ifndef SBX_MGMT_MICROBURST_VIEW_H
#define SBX_MGMT_MICROBURST_VIEW_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "spanbox/shm.h"

/**
 * /status ports[].microburst of port @p i: the window, threshold and speed, the last whole second's
 * peak and average per direction, the counters; a JSON null when microburst.enabled is false.
 * The caller owns the result.
 */
cJSON *mgmt_microburst_json(const struct sbx_shm *shm, uint16_t i);

/** Utilisation of @p ppm (parts per million) as a percentage with two decimals. */
double mgmt_microburst_pct(uint32_t ppm);

#endif
