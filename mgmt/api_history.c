/* SPDX-License-Identifier: BSD-3-Clause */
/* Routes: the stats history: GET /stats/history. */
#include "api.h"

const struct mgmt_route mgmt_routes_history[] = {
	{ NULL, NULL, NULL },
};
