#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/restart.sh - the worker restart gap, against a whole primary restart, with hot standbys
# (workers.standby, STANDBY [1]) or without them (STANDBY=0: a new process per restart).
#
# The appliance runs config/default.json (taps in network namespaces) with its own file prefix,
# API port, tap names and namespaces, and workers.crash_window_s 1; iperf3 sends UDP from the
# first namespace to the second, 8 streams, so that both workers' queues carry traffic. Then:
#
#   crash     $KILLS times: kill -9 worker 0; gap = the new worker's first_rx_ns (CLOCK_REALTIME
#             of its first received burst, GET /api/v1/workers/0) - the time of the kill. With
#             standbys each kill waits until a standby is parked (at most 10 s) and the
#             successor is that standby
#   graceful  $GRACEFUL times: POST /api/v1/workers/0/restart; gap = the new worker's
#             first_rx_ns - the time the request was sent (the old worker receives until it
#             sees the stop flag, so this is an upper bound of the time nothing is received);
#             with standbys also the hand-over gap the primary measures (takeover_gap_us: from
#             the moment the old worker let go of its queues to the standby's first burst)
#   primary   $PRIMARY_RESTARTS times: ./spanbox stop CONFIG, then ./spanbox start CONFIG, while
#             pings run one after the other from the first namespace, each entering it by name
#             (the stop deletes the namespaces and the start re-creates them); gap = the first
#             first_rx_ns of any worker of the new primary - the time the stop began. The first
#             frame is a ping or whatever the kernel sends when the tap comes up (IPv6 MLD/ND):
#             either way the moment the data path is back.
#
# Restarts of worker 0 are spaced by $SPACING s (> crash_window_s): no back-off is involved.
# With standbys, the CPU a parked standby uses is measured too (utime + stime over 10 s).
# The end is a markdown table and "TARGET MET" / "TARGET MISSED". Without standbys: median worker
# gap <= $TARGET_MS ms, for crash and graceful, and >= $TARGET_RATIO x smaller than the median
# primary restart. With standbys (issue 16): kill -9 median <= $TARGET_MS (5) ms and max <=
# $TARGET_MAX_MS (20) ms, graceful hand-over median <= $TARGET_GRACE_MS (2) ms, and the kill -9
# median >= $TARGET_RATIO (100) x smaller than the primary restart's. Exit status 0 in both
# cases; 1 when the benchmark itself cannot run.
#
# Run as root from anywhere: bench/restart.sh    (about 1.5 min with the defaults)
# It uses the launcher ./spanbox (so the binaries of build/).
#
# Environment (defaults in brackets):
#   KILLS [20]             kill -9 restarts
#   GRACEFUL [20]          graceful restarts through the API
#   PRIMARY_RESTARTS [5]   primary restarts (./spanbox stop + start)
#   SPACING [1.5]          seconds from one restart of worker 0 to the next (> 1)
#   MGMT_PORT [18195]      TCP port of the API (127.0.0.1)
#   STREAMS [8]  RATE [2M]  LEN [256]   iperf3 -u -P STREAMS -b RATE (per stream) -l LEN
#   KEEP_TMP [0]           1: keep the temp dir with the config, logs and raw samples
#   SPANBOX_REV [git]      what to print as the spanbox revision outside a git checkout
#   SUBREAPER [1]          1: run as a child subreaper (prctl PR_SET_CHILD_SUBREAPER, through
#                          python3), so that the detached primary and mgmt, orphaned when
#                          ./spanbox start returns, are reaped by this script as soon as they
#                          exit. Otherwise the host's init reaps them; an init that reaps late
#                          (this VM's PID 1 does it every ~2 s) makes ./spanbox stop wait for
#                          zombies. 0: measure with whatever the host does.
#   STANDBY [1]            workers.standby of the config (0: no standbys, the restart of before)
#   TARGET_MS [100; 5 with standbys]  TARGET_RATIO [10; 100]  TARGET_MAX_MS [-; 20]  TARGET_GRACE_MS [-; 2]
set -u

KILLS=${KILLS:-20}
GRACEFUL=${GRACEFUL:-20}
PRIMARY_RESTARTS=${PRIMARY_RESTARTS:-5}
SPACING=${SPACING:-1.5}
MGMT_PORT=${MGMT_PORT:-18195}
STREAMS=${STREAMS:-8}
RATE=${RATE:-2M}
LEN=${LEN:-256}
KEEP_TMP=${KEEP_TMP:-0}
STANDBY=${STANDBY:-1}
if [ "$STANDBY" = 0 ]; then
	TARGET_MS=${TARGET_MS:-100} TARGET_RATIO=${TARGET_RATIO:-10}
else
	TARGET_MS=${TARGET_MS:-5} TARGET_RATIO=${TARGET_RATIO:-100} TARGET_MAX_MS=${TARGET_MAX_MS:-20}
	TARGET_GRACE_MS=${TARGET_GRACE_MS:-2}
fi
SUBREAPER=${SUBREAPER:-1}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ "$SUBREAPER" = 1 ] && [ -z "${_RESTART_SH_SUBREAPER:-}" ]; then
	command -v python3 >/dev/null || { echo "restart.sh: python3 not found (or SUBREAPER=0)" >&2; exit 1; }
	# PR_SET_CHILD_SUBREAPER = 36; the attribute survives execve, so bash below is the subreaper
	exec env _RESTART_SH_SUBREAPER=1 python3 -c 'import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
    sys.exit("restart.sh: prctl(PR_SET_CHILD_SUBREAPER) failed")
os.execvp("bash", ["bash"] + sys.argv[1:])' "${BASH_SOURCE[0]}" "$@"
fi
PREFIX=sbxrb NS_A=sbxrb-a NS_B=sbxrb-b
API="http://127.0.0.1:$MGMT_PORT/api/v1"
# shared helpers: die log alive stop_pid remove_prefix_files nap cpu_ticks fmt median
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"


# ---------------------------------------------------------------- bookkeeping, cleanup
TMP="" CFG="" STARTED=0 TRAFFIC=() NAP_PID=""
cleanup() {
	local p
	trap - EXIT INT TERM HUP
	for p in "${TRAFFIC[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "$NAP_PID" ] && kill "$NAP_PID" 2>/dev/null
	[ "$STARTED" = 1 ] && "$ROOT/spanbox" stop "$CFG" >/dev/null 2>&1
	if [ -n "$TMP" ] && [ -d "$TMP" ]; then
		if [ "$KEEP_TMP" = 1 ]; then echo "# logs kept in $TMP"; else rm -rf "$TMP"; fi
	fi
}
on_signal() { echo; echo "restart.sh: interrupted, cleaning up" >&2; cleanup; exit 130; }
trap cleanup EXIT
trap on_signal INT TERM HUP

# ---------------------------------------------------------------- helpers
now_ns() { echo $(( ${EPOCHREALTIME/./} * 1000 )); } # bash 5: no fork, microsecond resolution
get() { curl -fsS --max-time 5 "$API$1"; }
# stats V...: "median max min mean" (awk, 1 decimal)
stats() {
	printf '%s\n' "$@" | grep -E '^-?[0-9.]+$' | sort -g | awk '{ a[NR] = $1; s += $1 } END {
		if (NR == 0) { print "- - - -"; exit }
		m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%.1f %.1f %.1f %.1f\n", m, a[NR], a[1], s / NR }'
}
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (a - b) / 1e6 }'; } # ms A_NS B_NS: (A-B) in ms
iso_ns() { echo $(( $(date -d "$1" +%s%N) )); } # RFC 3339 with ms -> ns

start_iperf() { # iperf3 UDP from NS_A to NS_B, bounded in time
	ip netns exec "$NS_B" timeout 600 iperf3 -s -1 -p 5201 >"$TMP/iperf_s.log" 2>&1 &
	TRAFFIC+=($!)
	sleep 0.5
	ip netns exec "$NS_A" timeout 600 iperf3 -u -c 198.18.0.2 -p 5201 -P "$STREAMS" -b "$RATE" -l "$LEN" -t 580 \
		>"$TMP/iperf_c.log" 2>&1 &
	TRAFFIC+=($!)
}
stop_traffic() { local p; for p in "${TRAFFIC[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; TRAFFIC=(); }
w0_rx() { get /workers/0 | jq '.ports.p0.rx_packets + .ports.p1.rx_packets'; }

# wait_successor OLD_PID: poll worker 0 until a new pid has received; prints "start_ns first_rx_ns".
# The times come from the memzone, not from the polling: wait 300 ms before the first poll and
# poll every 50 ms, so that curl and jq take as little CPU as possible from the starting worker.
wait_successor() {
	local i out
	sleep 0.3
	for ((i = 0; i < 200; i++)); do
		out=$(get /workers/0 | jq -r --argjson old "$1" \
			'select(.pid != $old and .pid > 0 and .first_rx_ns > 0) | "\(.start_ns) \(.first_rx_ns) \(.takeover_gap_us // "-") \(.pid)"' 2>/dev/null)
		[ -n "$out" ] && { echo "$out"; return 0; }
		sleep 0.05
	done
	return 1
}

# parked_standby: the pid of a parked standby, or fail
parked_standby() { get /standbys | jq -e '[.[] | select(.state == "parked" and .pid > 0)][0].pid' 2>/dev/null; }
# wait_parked: with standbys, wait (10 s at most) until one is parked; prints its pid ("-" without)
wait_parked() {
	local i p
	[ "$STANDBY" = 0 ] && { echo -; return 0; }
	for ((i = 0; i < 200; i++)); do p=$(parked_standby) && { echo "$p"; return 0; }; sleep 0.05; done
	return 1
}

# ---------------------------------------------------------------- preflight
[ "$(id -u)" -eq 0 ] || die "run as root (DPDK, taps, namespaces)"
for t in curl jq awk iperf3 ip ping date; do command -v "$t" >/dev/null || die "$t not found"; done
[ -n "${EPOCHREALTIME:-}" ] || die "bash 5 needed (EPOCHREALTIME)"
for v in KILLS GRACEFUL PRIMARY_RESTARTS MGMT_PORT STREAMS STANDBY; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v=${!v}: expected a whole number"
done
awk -v s="$SPACING" 'BEGIN { exit !(s > 1) }' || die "SPACING=$SPACING: must be > 1 (crash_window_s is 1)"
pgrep -f -- "--file-prefix=$PREFIX( |$)" >/dev/null && die "a process with file prefix $PREFIX runs already"
ss -Hltn "sport = :$MGMT_PORT" 2>/dev/null | grep -q . && die "TCP port $MGMT_PORT is in use: set MGMT_PORT"
ip netns list | grep -qE "^($NS_A|$NS_B)( |$)" && die "namespace $NS_A or $NS_B exists already"

TMP=$(mktemp -d /tmp/spanbox-restart.XXXXXX)
CFG="$TMP/restart.json"
jq --arg db "$TMP/restart.db" --argjson port "$MGMT_PORT" --arg pfx "$PREFIX" --arg a "$NS_A" --arg b "$NS_B" '
	.eal.file_prefix = $pfx | .mgmt.port = $port | .mgmt.database = $db
	| .ports[0].devargs = "net_tap0,iface=sbxrb-p0" | .ports[0].netns = $a
	| .ports[1].devargs = "net_tap1,iface=sbxrb-p1" | .ports[1].netns = $b
	| .ports[2].devargs = "net_tap2,iface=sbxrb-m"
	| .workers.crash_window_s = 1 | .workers.standby = '"$STANDBY"'' "$ROOT/config/default.json" >"$CFG"

rev=$(spanbox_rev)
log "$(machine_line); spanbox $rev, binaries in $ROOT/build"
log "config: config/default.json with file_prefix $PREFIX, API port $MGMT_PORT, namespaces $NS_A/$NS_B, workers.crash_window_s 1, workers.standby $STANDBY"
log "process reaping: $([ "$SUBREAPER" = 1 ] && echo "this script is a child subreaper (SUBREAPER=1)" || echo "the host's init (SUBREAPER=0)")"
log "traffic: iperf3 -u -P $STREAMS -b $RATE -l $LEN ($NS_A -> $NS_B); restarts of worker 0 every $SPACING s"
STARTED=1
timeout 180 "$ROOT/spanbox" start "$CFG" >"$TMP/start0.log" 2>&1 || { cat "$TMP/start0.log" >&2; die "./spanbox start failed"; }
# mutating requests carry the bearer token (docs/MGMT.md "Authentication")
TOKEN=$("$ROOT/build/mgmt/spanbox-mgmt" -c "$CFG" --print-token) || die "no API token"

# worker 0 must get some of the flows (the tap spreads them over its queues by hash)
for attempt in 1 2 3; do
	start_iperf
	nap 1
	a=$(w0_rx); nap 1; b=$(w0_rx)
	[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ] && break
	log "attempt $attempt: no flow on worker 0's queues; new iperf3 run"
	stop_traffic
done
[ "$b" -gt "$a" ] || die "worker 0 receives no traffic"
log "worker 0 receives $((b - a)) frames/s, the appliance $(get /status | jq '[.workers[].ports[].rx_packets] | add') frames so far"

# ---------------------------------------------------------------- worker restarts
CRASH_GAP=() CRASH_SPAWN=() CRASH_ATTACH=() GRACE_GAP=() GRACE_SPAWN=() GRACE_ATTACH=()
CRASH_TK=() GRACE_TK=() NOT_STANDBY=0
measure() { # measure crash|graceful N
	local kind=$1 n=$2 i old t out st fr tk np sb
	for ((i = 1; i <= n; i++)); do
		sb=$(wait_parked) || die "$kind $i: no standby parked within 10 s"
		old=$(get /workers/0 | jq -e '.pid') || die "API not answering"
		if [ "$kind" = crash ]; then
			t=$(now_ns); kill -9 "$old"
		else
			t=$(now_ns); curl -fsS --max-time 5 -o /dev/null -H "Authorization: Bearer $TOKEN" -X POST "$API/workers/0/restart" || die "POST restart failed"
		fi
		out=$(wait_successor "$old") || die "$kind $i: worker 0 did not come back within 10 s"
		read -r st fr tk np <<<"$out"
		[ "$sb" != - ] && [ "$np" != "$sb" ] && NOT_STANDBY=$((NOT_STANDBY + 1))
		tk=$([ "$tk" = - ] && echo - || awk -v u="$tk" 'BEGIN { printf "%.1f", u / 1000 }')
		if [ "$kind" = crash ]; then
			CRASH_GAP+=("$(ms "$fr" "$t")"); CRASH_SPAWN+=("$(ms "$st" "$t")"); CRASH_ATTACH+=("$(ms "$fr" "$st")")
			CRASH_TK+=("$tk")
		else
			GRACE_GAP+=("$(ms "$fr" "$t")"); GRACE_SPAWN+=("$(ms "$st" "$t")"); GRACE_ATTACH+=("$(ms "$fr" "$st")")
			GRACE_TK+=("$tk")
		fi
		# next restart SPACING s after this one
		nap "$(awk -v t="$t" -v now="$(now_ns)" -v s="$SPACING" 'BEGIN { d = s - (now - t) / 1e9; print (d > 0 ? d : 0) }')"
	done
}
SB_TICKS=-
if [ "$STANDBY" != 0 ]; then
	sb=$(wait_parked) || die "no standby parked within 10 s"
	t0=$(cpu_ticks "$sb" ""); nap 10; t1=$(cpu_ticks "$sb" "")
	SB_TICKS=$((t1 - t0))
	log "parked standby pid $sb: $SB_TICKS ticks (utime + stime of every thread, $(getconf CLK_TCK)/s) in 10 s:" \
		"$(awk -v t="$SB_TICKS" -v h="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", 100 * t / h / 10 }') % of one CPU"
fi
measure crash "$KILLS"
log "crash gaps (ms): ${CRASH_GAP[*]}"
[ "$STANDBY" != 0 ] && log "  primary's takeover gaps (reaped -> first rx, ms): ${CRASH_TK[*]}"
measure graceful "$GRACEFUL"
log "graceful gaps (ms): ${GRACE_GAP[*]}"
[ "$STANDBY" != 0 ] && log "  hand-over gaps (old worker let go -> standby's first rx, ms): ${GRACE_TK[*]}"
[ "$STANDBY" != 0 ] && log "  restarts whose successor was not the standby parked before: $NOT_STANDBY of $((KILLS + GRACEFUL))"
w=$(get /workers/0)
log "worker 0 after the series: restarts $(jq .restarts <<<"$w"), crashes $(jq .crashes <<<"$w"), state $(jq -r .state <<<"$w");" \
	"pool audit unexplained $(get /pools/sbx_pool_s0 | jq .audit.unexplained)"
stop_traffic

# ---------------------------------------------------------------- primary restarts
# Continuous traffic across a primary restart: one ping at a time, each entering the namespace by
# name, so that the pings go on in the namespace the restart re-creates (at most 30 s).
pinger() {
	local end=$((SECONDS + 30))
	while [ $SECONDS -lt $end ]; do
		ip netns exec "$NS_A" ping -q -n -c 1 -W 0.02 198.18.0.2 >/dev/null 2>&1 || sleep 0.002
	done
}
PRI_GAP=() PRI_STOP=() PRI_START=() PRI_INIT=() PRI_EXEC=() PRI_POP=() PRI_EARLY=0
for ((i = 1; i <= PRIMARY_RESTARTS; i++)); do
	pinger &
	TRAFFIC+=($!)
	nap 0.5
	t0=$(now_ns)
	"$ROOT/spanbox" stop "$CFG" >>"$TMP/stop.log" 2>&1
	t1=$(now_ns)
	timeout 180 "$ROOT/spanbox" start "$CFG" >>"$TMP/start.log" 2>&1 || die "primary restart $i: ./spanbox start failed"
	t2=$(now_ns)
	fr="" k=0
	while [ -z "$fr" ] && [ $((k++)) -lt 500 ]; do
		fr=$(get /workers | jq -e '[.[].first_rx_ns | select(. > 0)] | min // empty' 2>/dev/null) || { fr=""; sleep 0.02; }
	done
	stop_traffic
	[ -n "$fr" ] || die "primary restart $i: nothing forwarded within 10 s"
	# primary's own init: process start (/proc, 10 ms resolution) -> appliance_start event
	ppid=$(cat "/run/spanbox/$PREFIX.primary.pid")
	pstart=$(awk -v tck="$(getconf CLK_TCK)" -v bt="$(awk '/^btime/ {print $2}' /proc/stat)" \
		'{ sub(/.*\) /, ""); printf "%.0f", (bt + $20 / tck) * 1e9 }' "/proc/$ppid/stat")
	ev=$(get "/events?limit=50" | jq -r --argjson p "$ppid" 'first(.[] | select(.kind == "appliance_start" and .pid == $p)) | .time')
	[ "$fr" -lt "$t2" ] && PRI_EARLY=$((PRI_EARLY + 1))
	PRI_GAP+=("$(ms "$fr" "$t0")"); PRI_STOP+=("$(ms "$t1" "$t0")"); PRI_START+=("$(ms "$t2" "$t1")")
	PRI_INIT+=("$( [ -n "$ev" ] && ms "$(iso_ns "$ev")" "$pstart" || echo -)")
	PRI_EXEC+=("$(ms "$fr" "$pstart")")
	PRI_POP+=("$(get /pools | jq '.[0].populate_ms')")
done
log "primary restart gaps (ms): ${PRI_GAP[*]}"
log "  ./spanbox stop (ms): ${PRI_STOP[*]}"
log "  ./spanbox start, until it returns (ms): ${PRI_START[*]}"
log "  primary exec -> appliance_start event (EAL init, ports, pools; ms, +-10): ${PRI_INIT[*]}"
log "  primary exec -> first frame received (ms, +-10): ${PRI_EXEC[*]}"
log "  pool populate_ms: ${PRI_POP[*]}"
log "  first frame received before ./spanbox start returned (it waits for mgmt): $PRI_EARLY of $PRIMARY_RESTARTS"

# ---------------------------------------------------------------- report
read -r cm cx cn ca <<<"$(stats "${CRASH_GAP[@]}")"
read -r gm gx gn ga <<<"$(stats "${GRACE_GAP[@]}")"
read -r pm px pn pa <<<"$(stats "${PRI_GAP[@]}")"
echo
med() { stats "$@" | cut -d' ' -f1; }
echo "| restart | n | gap median ms | gap max ms | gap min ms | where the time goes (medians, ms) |"
echo "|---|---|---|---|---|---|"
if [ "$STANDBY" = 0 ]; then
	echo "| worker 0, kill -9 | ${#CRASH_GAP[@]} | $cm | $cx | $cn | kill -> successor forked $(med "${CRASH_SPAWN[@]}"); forked -> first rx $(med "${CRASH_ATTACH[@]}") |"
	echo "| worker 0, POST .../restart | ${#GRACE_GAP[@]} | $gm | $gx | $gn | POST -> successor forked $(med "${GRACE_SPAWN[@]}"); forked -> first rx $(med "${GRACE_ATTACH[@]}") |"
else
	read -r hm hx hn ha <<<"$(stats "${GRACE_TK[@]}")"
	echo "| worker 0, kill -9, standby | ${#CRASH_GAP[@]} | $cm | $cx | $cn | kill -> slot handed over $(med "${CRASH_SPAWN[@]}"); handed over -> first rx $(med "${CRASH_ATTACH[@]}"); primary's takeover gap (reaped -> first rx) $(med "${CRASH_TK[@]}") |"
	echo "| worker 0, POST .../restart, standby | ${#GRACE_GAP[@]} | $gm | $gx | $gn | POST -> slot handed over $(med "${GRACE_SPAWN[@]}"); handed over -> first rx $(med "${GRACE_ATTACH[@]}") |"
	echo "| worker 0, graceful hand-over gap | ${#GRACE_TK[@]} | $hm | $hx | $hn | old worker let go of its queues -> standby's first rx (takeover_gap_us) |"
fi
echo "| primary, ./spanbox stop + start | ${#PRI_GAP[@]} | $pm | $px | $pn | stop $(med "${PRI_STOP[@]}"); primary exec -> appliance_start $(med "${PRI_INIT[@]}"); primary exec -> first rx $(med "${PRI_EXEC[@]}"); start returns after $(med "${PRI_START[@]}") |"
echo
rc=$(awk -v c="$cm" -v p="$pm" 'BEGIN { printf "%.1f", p / c }')
rg=$(awk -v c="$gm" -v p="$pm" 'BEGIN { printf "%.1f", p / c }')
echo "worker restart gap median: kill -9 $cm ms, graceful $gm ms; primary restart median $pm ms (x$rc, x$rg)"
if [ "$STANDBY" = 0 ]; then
	if awk -v c="$cm" -v g="$gm" -v rc="$rc" -v rg="$rg" -v t="$TARGET_MS" -v r="$TARGET_RATIO" \
		'BEGIN { exit !(c <= t && g <= t && rc >= r && rg >= r) }'; then
		echo "TARGET MET (median gap <= $TARGET_MS ms and >= ${TARGET_RATIO}x below a primary restart)"
	else
		echo "TARGET MISSED (median gap <= $TARGET_MS ms and >= ${TARGET_RATIO}x below a primary restart)"
	fi
else
	echo "parked standby: $SB_TICKS ticks of CPU in 10 s; graceful hand-over gap median $hm ms (max $hx)"
	if awk -v c="$cm" -v x="$cx" -v h="$hm" -v rc="$rc" -v t="$TARGET_MS" -v tx="$TARGET_MAX_MS" -v tg="$TARGET_GRACE_MS" \
		-v r="$TARGET_RATIO" -v ns="$NOT_STANDBY" 'BEGIN { exit !(c <= t && x <= tx && h <= tg && rc >= r && ns == 0) }'; then
		echo "TARGET MET (kill -9 median <= $TARGET_MS ms, max <= $TARGET_MAX_MS ms; hand-over median <= $TARGET_GRACE_MS ms; >= ${TARGET_RATIO}x below a primary restart; every successor the standby)"
	else
		echo "TARGET MISSED (kill -9 median <= $TARGET_MS ms, max <= $TARGET_MAX_MS ms; hand-over median <= $TARGET_GRACE_MS ms; >= ${TARGET_RATIO}x below a primary restart; every successor the standby)"
	fi
fi
exit 0
