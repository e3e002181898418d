#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/api.sh - throughput and latency of the REST API (spanbox-mgmt), issue 5 "Benchmark".
#
# Starts its own appliance (primary + mgmt from $BUILD): three net_null ports without RX (no
# traffic: workers idle with back-off), two workers, one cross-connect and one mirror session, so
# /status has the shape of a small real appliance. Then:
#
#   status    wrk -t$THREADS -c$CONNS -d${DURATION}s --latency on GET /api/v1/status
#   metrics   the same on GET /metrics
#   history   24 h of synthetic rows written into the history tables with the sqlite3 CLI (every
#             series mgmt samples: 10 s rows for the last 24 h - 1 h, 1 s rows for the last hour,
#             as compaction leaves them), then GET /api/v1/stats/history?metric=rx_packets&port=p0
#             &from=<now-24h>&to=<now>&step=10 timed with curl -w '%{time_total}': one warm-up,
#             then $HIST_RUNS runs, median
#
# Reported: requests/s, p50/p99 latency (wrk's latency distribution), non-2xx answers, the CPU
# time mgmt (all its threads) used during each wrk run, the load average and the busiest processes
# before the runs; history median/min/max, points and non-null points. Targets: p99 of status
# under $TARGET_STATUS_P99_MS ms, history query under $TARGET_HISTORY_MS ms. The end is a markdown
# table and "TARGET MET" / "TARGET MISSED"; exit 0 in both cases, 1 when the benchmark cannot run.
#
# Run as root from anywhere: bench/api.sh    (about 40 s)
# Everything it starts (primary, workers, mgmt) is stopped at exit, also on Ctrl-C; its files are
# in $WORKDIR (removed at exit unless KEEP_TMP=1).
#
# Environment (defaults in brackets):
#   BUILD [repo/build]       spanbox build directory (SBX_BUILD is taken when BUILD is not set)
#   PREFIX [sbxe]            EAL file prefix       LCORES [90,91,92,93]  primary, mgmt, 2 workers
#   MGMT_PORT [18250]        API port (127.0.0.1)
#   WORKDIR [/tmp/sbxe-bench]  work dir: database, config, logs (created; refused if it exists; removed)
#   THREADS [2]  CONNS [8]  DURATION [10]   wrk -t -c -d
#   HIST_RUNS [10]           timed history queries
#   KEEP_TMP [0]             1: keep the database, config and logs
#   SPANBOX_REV [git]        what to print as the spanbox revision outside a git checkout
#   TARGET_STATUS_P99_MS [5]  TARGET_HISTORY_MS [50]
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-${SBX_BUILD:-$ROOT/build}}
PREFIX=${PREFIX:-sbxe}
LCORES=${LCORES:-90,91,92,93}
MGMT_PORT=${MGMT_PORT:-18250}
TMP=${WORKDIR:-/tmp/sbxe-bench}
THREADS=${THREADS:-2}
CONNS=${CONNS:-8}
DURATION=${DURATION:-10}
HIST_RUNS=${HIST_RUNS:-10}
KEEP_TMP=${KEEP_TMP:-0}
TARGET_STATUS_P99_MS=${TARGET_STATUS_P99_MS:-5}
TARGET_HISTORY_MS=${TARGET_HISTORY_MS:-50}
BASE="http://127.0.0.1:$MGMT_PORT"
# shared helpers: die log alive stop_pid remove_prefix_files nap cpu_ticks fmt median
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# ---------------------------------------------------------------- bookkeeping, cleanup
PRIMARY_PID="" MGMT_PID="" WRK_PID="" MADE_TMP=0
cleanup() {
	trap - EXIT INT TERM HUP
	[ -n "$WRK_PID" ] && stop_pid "$WRK_PID" 2
	[ -n "$MGMT_PID" ] && stop_pid "$MGMT_PID" 10
	[ -n "$PRIMARY_PID" ] && stop_pid "$PRIMARY_PID" 20
	[ -n "$PRIMARY_PID" ] && remove_prefix_files "$PREFIX"
	if [ "$MADE_TMP" = 1 ]; then
		if [ "$KEEP_TMP" = 1 ]; then echo "# files kept in $TMP"; else rm -rf "$TMP"; fi
	fi
}
on_signal() { echo; echo "api.sh: interrupted, cleaning up" >&2; cleanup; exit 130; }
trap cleanup EXIT
trap on_signal INT TERM HUP

# to_ms VALUE: wrk's "1.23ms" / "850.00us" / "1.02s" in ms
to_ms() { awk -v v="$1" 'BEGIN { u = v; sub(/^[0-9.]+/, "", u); n = v + 0;
	if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000; printf "%.3f", n }'; }

# run_wrk NAME URL: wrk with --latency; sets RPS P50 P99 NON2XX CPU (mgmt CPU % of one core)
run_wrk() {
	local name=$1 url=$2 t0 t1 c0 c1 out="$TMP/wrk-$1.txt"
	c0=$(cpu_ticks "$MGMT_PID" ""); t0=${EPOCHREALTIME/./}
	wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" --latency "$url" >"$out" 2>&1 &
	WRK_PID=$!
	wait "$WRK_PID" || die "wrk failed on $url: $(tail -5 "$out")"
	WRK_PID=""
	c1=$(cpu_ticks "$MGMT_PID" ""); t1=${EPOCHREALTIME/./}
	sed 's/^/# wrk '"$name"': /' "$out"
	RPS=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
	P50=$(to_ms "$(awk '$1 == "50%" { print $2 }' "$out")")
	P99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out")")
	NON2XX=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$out")
	NON2XX=${NON2XX:-0}
	CPU=$(awk -v d=$((c1 - c0)) -v hz="$(getconf CLK_TCK)" -v us=$((t1 - t0)) 'BEGIN { printf "%.0f", 100 * d / hz / (us / 1e6) }')
	[ -n "$RPS" ] && [ -n "$P99" ] || die "cannot read wrk's output ($out)"
}

# ---------------------------------------------------------------- preflight
[ "$(id -u)" -eq 0 ] || die "run as root (DPDK hugepages)"
for t in wrk curl jq sqlite3 awk; do command -v "$t" >/dev/null || die "$t not found (./spanbox installs wrk, sqlite3, jq, curl)"; done
[ -n "${EPOCHREALTIME:-}" ] || die "bash 5 needed (EPOCHREALTIME)"
for v in THREADS CONNS DURATION HIST_RUNS MGMT_PORT; do
	[[ ${!v} =~ ^[0-9]+$ ]] && [ "${!v}" -gt 0 ] || die "$v=${!v}: expected a whole number > 0"
done
[[ $LCORES =~ ^[0-9]+,[0-9]+,[0-9]+,[0-9]+$ ]] || die "LCORES=$LCORES: expected four lcore ids a,b,c,d"
IFS=, read -r L_PRI L_MGMT L_W0 L_W1 <<<"$LCORES"
PRIMARY="$BUILD/primary/spanbox-primary" MGMT="$BUILD/mgmt/spanbox-mgmt"
for b in "$PRIMARY" "$MGMT"; do [ -x "$b" ] || die "$b missing: build first (ninja -C $BUILD)"; done
pgrep -f -- "--file-prefix=$PREFIX( |$)" >/dev/null && die "a process with file prefix $PREFIX runs already"
ss -Hltn "sport = :$MGMT_PORT" 2>/dev/null | grep -q . && die "TCP port $MGMT_PORT is in use: set MGMT_PORT"
[ -e "$TMP" ] && die "$TMP exists: remove it or set WORKDIR"
mkdir -p "$TMP" && MADE_TMP=1 || die "cannot create $TMP"

rev=$(spanbox_rev)
log "$(machine_line); spanbox $rev, binaries in $BUILD"
log "wrk $(wrk --version 2>&1 | head -1 | awk '{print $2}'), curl $(curl --version | awk 'NR == 1 {print $2}'), sqlite3 $(sqlite3 --version | awk '{print $1}')"

# ---------------------------------------------------------------- the appliance
CFG="$TMP/api.json" DB="$TMP/api.db" TOKEN=sbxe-bench-token-0123456789
cat >"$CFG" <<EOF
{ "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 128, "primary_lcore": $L_PRI, "mgmt_lcore": $L_MGMT},
  "ports": [ {"name": "p0", "devargs": "net_null0,no-rx=1"}, {"name": "p1", "devargs": "net_null1,no-rx=1"},
             {"name": "m", "devargs": "net_null2,no-rx=1"} ],
  "workers": {"count": 2, "lcores": [$L_W0, $L_W1], "busy_poll": false},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mirrors": [ {"id": 5, "name": "s5", "sources": [{"port": "p0"}], "destination": {"port": "m"}} ],
  "mgmt": {"port": $MGMT_PORT, "database": "$DB", "token": "$TOKEN"} }
EOF
sbx_start_primary "$PRIMARY" "$CFG" "$TMP/ready" "$TMP/primary.log"
PRIMARY_PID=$SBX_PID
sbx_wait_ready "$PRIMARY_PID" "$TMP/ready" 300 || { tail -20 "$TMP/primary.log" >&2; die "spanbox-primary not ready in 30 s"; }
sbx_start_mgmt "$MGMT" "$CFG" "$TMP/mgmt.log"
MGMT_PID=$SBX_PID
sbx_wait_api "$MGMT_PID" "$BASE/api/v1/health" 100 || { cat "$TMP/mgmt.log" >&2; die "spanbox-mgmt not up in 10 s"; }
log "appliance: prefix $PREFIX, lcores $LCORES, 3 net_null ports (no RX), 2 idle workers, 1 mirror session; API $BASE"
log "answer sizes: /api/v1/status $(curl -s "$BASE/api/v1/status" | wc -c) B, /metrics $(curl -s "$BASE/metrics" | wc -c) B"

# ---------------------------------------------------------------- history: 24 h of rows
# wait for the first sample: every series mgmt keeps then exists in history_series
for ((i = 0; i < 50; i++)); do
	n=$(sqlite3 -cmd ".timeout 5000" "$DB" "SELECT count(*) FROM history_series" 2>/dev/null)
	[ "${n:-0}" -gt 0 ] && break
	sleep 0.2
done
[ "${n:-0}" -gt 0 ] || die "no history series in $DB after 10 s (is the stats history built in?)"
NOW=$(date +%s)
T10=$(( (NOW - 86400) / 10 * 10 )) CUT=$(( NOW - 3600 ))
t0=${EPOCHREALTIME/./}
# cumulative counters: v = (t - T10) * (1000 + series id), so every series has its own constant rate
sqlite3 -cmd ".timeout 10000" "$DB" >/dev/null <<EOF || die "cannot write the synthetic history"
BEGIN IMMEDIATE;
WITH RECURSIVE s(t) AS (SELECT $T10 UNION ALL SELECT t + 10 FROM s WHERE t + 10 < $CUT)
INSERT OR IGNORE INTO history_10s(series, t, v) SELECT h.id, s.t, (s.t - $T10) * (1000 + h.id) FROM history_series h, s;
WITH RECURSIVE s(t) AS (SELECT $CUT UNION ALL SELECT t + 1 FROM s WHERE t + 1 < $NOW - 5)
INSERT OR IGNORE INTO history_1s(series, t, v) SELECT h.id, s.t, (s.t - $T10) * (1000 + h.id) FROM history_series h, s;
COMMIT;
EOF
t1=${EPOCHREALTIME/./}
rows=$(sqlite3 -cmd ".timeout 5000" "$DB" "SELECT (SELECT count(*) FROM history_1s) || ' 1s rows, ' || (SELECT count(*) FROM history_10s) || ' 10s rows, ' || (SELECT count(*) FROM history_series) || ' series'")
log "synthetic history: $rows in the database ($(( (t1 - t0) / 1000 )) ms to write); file $(( $(stat -c %s "$DB") / 1024 )) KiB + WAL $(( $(stat -c %s "$DB-wal" 2>/dev/null || echo 0) / 1024 )) KiB"

# ---------------------------------------------------------------- load before the runs
log "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
log "busiest processes (ps %CPU = lifetime average):"
ps -eo pcpu=,pid=,comm= --sort=-pcpu | head -6 | sed 's/^/#     /'

# ---------------------------------------------------------------- wrk
run_wrk status "$BASE/api/v1/status"
S_RPS=$RPS S_P50=$P50 S_P99=$P99 S_NON=$NON2XX S_CPU=$CPU
run_wrk metrics "$BASE/metrics"
M_RPS=$RPS M_P50=$P50 M_P99=$P99 M_NON=$NON2XX M_CPU=$CPU
log "load average after wrk: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---------------------------------------------------------------- history query
hist_url() { local now; now=$(date +%s); echo "$BASE/api/v1/stats/history?metric=rx_packets&port=p0&from=$((now - 86400))&to=$now&step=10"; }
curl -fsS --max-time 10 "$(hist_url)" -o "$TMP/history.json" || die "history query failed: $(cat "$TMP/history.json" 2>/dev/null)"
read -r H_POINTS H_NONNULL H_RES H_RATE < <(jq -r '[(.points | length), ([.points[] | select(.[1] != null)] | length), .resolution_s, ([.points[] | .[1] | select(. != null)] | (add / length))] | @tsv' "$TMP/history.json")
log "history answer: $(wc -c <"$TMP/history.json") B, $H_POINTS points, $H_NONNULL not null, resolution_s $H_RES, mean rate $(fmt "$H_RATE" 1) packets/s"
HT=()
for ((i = 0; i < HIST_RUNS; i++)); do
	t=$(curl -fsS --max-time 10 -o /dev/null -w '%{time_total}' "$(hist_url)") || die "history query $i failed"
	HT+=("$(awk -v t="$t" 'BEGIN { printf "%.2f", t * 1000 }')")
done
log "history query times (ms): ${HT[*]}"
H_MED=$(median "${HT[@]}")
H_MIN=$(printf '%s\n' "${HT[@]}" | sort -g | head -1) H_MAX=$(printf '%s\n' "${HT[@]}" | sort -g | tail -1)
log "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---------------------------------------------------------------- report
echo
echo "| request | tool | requests/s | p50 ms | p99 ms | non-2xx | mgmt CPU % (of one core) |"
echo "|---|---|---|---|---|---|---|"
echo "| GET /api/v1/status | wrk -t$THREADS -c$CONNS -d${DURATION}s | $(fmt "$S_RPS" 0) | $S_P50 | $S_P99 | $S_NON | $S_CPU |"
echo "| GET /metrics | wrk -t$THREADS -c$CONNS -d${DURATION}s | $(fmt "$M_RPS" 0) | $M_P50 | $M_P99 | $M_NON | $M_CPU |"
echo
echo "| request | runs | median ms | min ms | max ms | points (not null) |"
echo "|---|---|---|---|---|---|"
echo "| GET /api/v1/stats/history 24 h, step 10 | $HIST_RUNS | $H_MED | $H_MIN | $H_MAX | $H_POINTS ($H_NONNULL) |"
echo
if awk -v p="$S_P99" -v h="$H_MED" -v tp="$TARGET_STATUS_P99_MS" -v th="$TARGET_HISTORY_MS" -v n="$S_NON" \
	'BEGIN { exit !(p < tp && h < th && n == 0) }'; then
	echo "TARGET MET (status p99 $S_P99 ms < $TARGET_STATUS_P99_MS ms, history median $H_MED ms < $TARGET_HISTORY_MS ms)"
else
	echo "TARGET MISSED (status p99 $S_P99 ms, target < $TARGET_STATUS_P99_MS ms; history median $H_MED ms, target < $TARGET_HISTORY_MS ms; status non-2xx $S_NON)"
fi
exit 0
