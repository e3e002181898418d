/* SPDX-License-Identifier: BSD-3-Clause */
/* Routes: mirrors, cross-connects and the whole config: changes published to the workers (docs/RUNTIME_TABLES.md) and stored in SQLite. */
#include "api.h"

const struct mgmt_route mgmt_routes_tables[] = {
	{ NULL, NULL, NULL },
};
