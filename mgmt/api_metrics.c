/* SPDX-License-Identifier: BSD-3-Clause */
/* Routes: GET /metrics (Prometheus text format 0.0.4), port stats and link. */
#include "api.h"

const struct mgmt_route mgmt_routes_metrics[] = {
	{ NULL, NULL, NULL },
};
