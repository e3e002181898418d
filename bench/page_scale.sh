#!/usr/bin/env bash
# The status page at scale (issue #25; docs/BENCHMARKS.md "The page at scale"): runs
# tests/e2e/25e_page_scale.sh RUNS times (default 3) and prints, per run and config (2 workers /
# 4 ports, 32 workers / 64 ports), GET /api/v1/status and ?view=page (median of 5 curl times, size)
# and the page in headless Chromium: load to first full render, main-thread time per refresh
# (devtools ScriptDuration + LayoutDuration + RecalcStyleDuration over ~10 s / the /status reads),
# the page's own render measure, the /status URL it reads and that answer's size.
#   flock /tmp/sbx-e2e.lock bench/page_scale.sh [RUNS]
#   SBX_PAGE_WEB_ROOT=DIR SBX_MEASURE_ONLY=1 ...  the page of DIR (e.g. an older tree's web/,
#                                                 exported with git archive) served by this build's mgmt
# Resources: those of 25e_page_scale.sh (file prefix sbxps, lcores 8, 9, 19, 39, 40-69, port 19170).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${1:-3}
printf '%-4s %-6s %-14s %-22s %-14s %8s %8s %9s %-28s %9s\n' run config "status s" "(B)" "view=page s" \
	first_ms tick_ms render_ms "page reads" "bytes"
for ((i = 1; i <= RUNS; i++)); do
	log=$(mktemp /tmp/sbxps-bench.XXXXXX)
	"$ROOT/tests/e2e/25e_page_scale.sh" >"$log" 2>&1
	grep -q '^not ok' "$log" && { echo "# run $i: failures:"; grep '^not ok' "$log" | sed 's/^/#   /'; }
	for c in small big; do
		read -r fs fb ps < <(sed -n "s/^# $c: GET \/api\/v1\/status \([0-9.]*\) s (\([0-9]*\) B), ?view=page \([0-9.]*\) s.*/\1 \2 \3/p" "$log")
		perf=$(sed -n "s/^# perf //p" "$log" | jq -c --arg c "$c" 'select(.phase == $c)')
		printf '%-4s %-6s %-14s %-22s %-14s %8s %8s %9s %-28s %9s\n' "$i" "$c" "${fs:-?}" "${fb:-?}" "${ps:-?}" \
			"$(jq -r '.first_ms' <<<"$perf")" "$(jq -r '.tick_ms' <<<"$perf")" "$(jq -r '.render_ms' <<<"$perf")" \
			"$(jq -r '.status_url' <<<"$perf")" "$(jq -r '.status_bytes' <<<"$perf")"
	done
	rm -f "$log"
done
