#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What one page of a map's rules costs through the API (docs/MGMT.md "Maps", docs/BENCHMARKS.md
# "Per-rule counters"): an appliance on net_null ports with mgmt on loopback, one map of 65,536
# rules (tests/lib/maps_live_gen.py, the table 26c uses), then ROUNDS GETs of 50 rules at offset
# 30,000 with curl: the time of each (curl's time_total), the first and the median of the others.
# SBX_BUILD=/other/build bench/maps_rules_page.sh measures another build (e.g. the one before the
# parsed tables were kept). File prefix sbxrp, lcores 28 (primary), 29 (mgmt), 24 (worker), API 19151.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tests/lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
ROUNDS=${ROUNDS:-10}
API=http://127.0.0.1:19151/api/v1
trap 'inst_cleanup; rm -rf "$TMP"' EXIT
cat >"$TMP/cfg.json" <<JSON
{"eal": {"file_prefix": "sbxrp", "socket_mem_mb": 512, "primary_lcore": 28, "mgmt_lcore": 29},
 "ports": [{"name": "n0", "devargs": "net_null0"}, {"name": "n1", "devargs": "net_null1"}, {"name": "t", "devargs": "net_null2"}],
 "workers": {"count": 1, "lcores": [24]}, "forwarding": {"xconnects": [["n0", "n1"]]},
 "mgmt": {"listen": "127.0.0.1", "port": 19151, "database": "$TMP/db", "token": "sbxrp-token-0123456789abcdef"}}
JSON
"$PY" "$ROOT/tests/lib/maps_live_gen.py" rules none 65536 "$TMP/r.json"
jq '{id: 40, name: "big", sources: [{port: "n1", direction: "rx"}], destination: {port: "t"}, rules: .}' "$TMP/r.json" >"$TMP/m.json"
inst_start_both rp "$TMP/cfg.json" "$API" >/dev/null || { echo "maps_rules_page.sh: the appliance did not start" >&2; exit 1; }
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer sbxrp-token-0123456789abcdef" \
	-H 'Content-Type: application/json' --data-binary @"$TMP/m.json" "$API/maps")
[ "$code" = 201 ] || { echo "maps_rules_page.sh: POST of the map: $code" >&2; exit 1; }
echo "# spanbox $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null), build ${SBX_BUILD:-$ROOT/build}; load $(cut -d' ' -f1-3 /proc/loadavg)"
# page WHAT QUERY: ROUNDS GETs of /maps/40/rules?QUERY, one line
page() {
	local i med
	for ((i = 0; i < ROUNDS; i++)); do
		curl -fsS -o /dev/null -w '%{time_total}\n' "$API/maps/40/rules?$2"
	done >"$TMP/t.txt"
	med=$(sort -g "$TMP/t.txt" | awk '{t[NR] = $1} END {printf "%.1f", t[int((NR + 1) / 2)] * 1000}')
	awk -v med="$med" -v what="$1" '{t[NR] = $1 * 1000} END {
		printf "%s: first %.1f ms; the next %d:", what, t[1], NR - 1
		for (i = 2; i <= NR; i++) printf " %.1f", t[i]
		printf "; median of all %s ms\n", med }' "$TMP/t.txt"
}
page "a page of 50 of 65,536 rules" "offset=30000&limit=50"
# the walks of all 65,536 rules: a search in every field's value, one field, and the sort by hits
# (every rule's counters summed over the workers, then sorted)
page "search=10.1 (every rule's every value searched), 50 of the matches" "search=10.1&limit=50"
page "field=dst_port&value=80 (one field of every rule), 50 of the matches" "field=dst_port&value=80&limit=50"
page "sort=hits (65,536 rules sorted by packets), the first 50" "sort=hits&limit=50"
