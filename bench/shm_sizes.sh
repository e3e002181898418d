#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/shm_sizes.sh - the shared memzone's and one worker slot's size at today's limits and at
# the limits issue #25 asks for (ports 64, workers 32, tool groups 64 x 64 members, cross-connects
# 32, sources per session 64, decap rules per port 16), part by part.
#
# tools/shm_sizes.c is compiled twice: against include/spanbox as it is, and against a copy of it
# whose SBX_MAX_* limits are replaced by the values above (nothing else changed), so the second
# column is what raising the constants alone would cost every config with today's static layout.
# Sizes only: nothing runs, no DPDK runtime, no hugepages (a few seconds, any user).
#
# Run from anywhere: bench/shm_sizes.sh
# Environment: CC [cc]; MAX_PORTS [64] MAX_WORKERS [32] MAX_GROUPS [64] MAX_MEMBERS [64]
#   MAX_XCONNECTS [32] MAX_SOURCES [64] MAX_DECAP_RULES [16]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CC=${CC:-cc}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CFLAGS=$(pkg-config --cflags libdpdk) || { echo "shm_sizes: pkg-config libdpdk failed" >&2; exit 1; }

cp -r "$ROOT/include/spanbox" "$TMP/spanbox-max"
mkdir -p "$TMP/max" && mv "$TMP/spanbox-max" "$TMP/max/spanbox"
set_limit() { # name value: replace the value of '#define name N' in config.h, fail if absent
	grep -qE "^#define $1 [0-9]+" "$TMP/max/spanbox/config.h" || { echo "shm_sizes: $1 not found" >&2; exit 1; }
	sed -i -E "s/^#define $1 [0-9]+/#define $1 $2/" "$TMP/max/spanbox/config.h"
}
set_limit SBX_MAX_PORTS "${MAX_PORTS:-64}"
set_limit SBX_MAX_WORKERS "${MAX_WORKERS:-32}"
set_limit SBX_MAX_TOOL_GROUPS "${MAX_GROUPS:-64}"
set_limit SBX_MAX_GROUP_MEMBERS "${MAX_MEMBERS:-64}"
set_limit SBX_MAX_XCONNECTS "${MAX_XCONNECTS:-32}"
set_limit SBX_MAX_MIRROR_SOURCES "${MAX_SOURCES:-64}"
set_limit SBX_MAX_DECAP_RULES "${MAX_DECAP_RULES:-16}"

# shellcheck disable=SC2086
$CC -O0 $CFLAGS -I"$ROOT/include" -o "$TMP/today" "$ROOT/tools/shm_sizes.c"
# shellcheck disable=SC2086
$CC -O0 $CFLAGS -I"$TMP/max" -o "$TMP/max_sizes" "$ROOT/tools/shm_sizes.c"
echo "# commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
"$TMP/today" | grep '^# limits' | sed 's/^# limits/# today:  limits/'
"$TMP/max_sizes" | grep '^# limits' | sed 's/^# limits/# maximum: limits/'
printf '%-44s %12s %12s %7s\n' "part" "today B" "maximum B" "ratio"
paste <("$TMP/today" | grep -v '^#') <("$TMP/max_sizes" | grep -v '^#' | awk '{print $NF}') |
	awk -F'\t' '{ n = split($1, a, " "); v = a[n]; name = substr($1, 1, 44);
		     printf "%-44s %12d %12d %7.1f\n", name, v, $2, v ? $2 / v : 0 }'
