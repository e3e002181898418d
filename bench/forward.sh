#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/forward.sh - forwarding rate of spanbox against dpdk-testpmd --forward-mode=io.
#
# Both forward between two net_null ports (64 B frames, burst 32) with one forwarding core on
# CPU $CPU, alone there: everything else on CPU $HK_CPU (testpmd: its main lcore; spanbox by
# default, SBX_LAYOUT=pinned: workers.cpus [$CPU] and eal.housekeeping_cpus "$HK_CPU", i.e. the
# primary, mgmt and EAL's control threads of every process; checked on the kernel's
# Cpus_allowed_list of every thread before each run is measured). The tools run in pairs, $RUNS
# pairs, the order alternating (spanbox first in odd
# pairs, testpmd first in even ones, so that a drift of the machine's speed during a pair does not
# favour one tool). Each run prints Mpps (frames forwarded, both directions together) and cycles
# per packet = tsc_hz / pps; the forwarding core busy-polls, so this is the CPU cost of one
# forwarded frame. The end is a markdown table, the ratio spanbox/testpmd of each pair, and the
# lines
#   spanbox median X Mpps, testpmd median Y Mpps, ratio of medians Z
#   median of N paired ratios R (min A, max B), pairs with a run below 95 % of its CPU left out
# followed by "TARGET MET" or "TARGET MISSED" (target: R >= $TARGET) when $MIN_PAIRS or more pairs
# are clean, else by "INCONCLUSIVE" (on the 2-CPU VM of docs/BENCHMARKS.md 3-6 pairs gave paired
# medians of 0.85-0.99 and single pairs 0.74-1.03: fewer pairs do not resolve a few %). The exit
# status is 0 in all these cases; it is 1 only when the benchmark itself cannot run (not root, no hugepages, a
# tool that does not start, ...).
#
# Run as root from anywhere, under the machine's DPDK lock when others share it:
#   flock /tmp/sbx-e2e.lock bench/forward.sh        (about 2 x RUNS x (DURATION + 5) s: 5 min)
#
# Environment (defaults in brackets):
#   DURATION [10]        seconds measured per run, after WARMUP
#   WARMUP [2]           seconds of forwarding before the measurement starts
#   RUNS [10]            pairs of runs (one run of each tool per pair)
#   MIN_PAIRS [10]       clean pairs needed to judge the target
#   BURST [32]           RX/TX burst, both tools
#   PKT_SIZE [64]        net_null frame size (devargs size=)
#   CPU [1]              CPU of the forwarding core, both tools
#   HK_CPU [0]           CPU of testpmd's main (stats) lcore and, by default, of spanbox's
#                        housekeeping (eal.housekeeping_cpus)
#   MEM_MB [128]         hugepage memory each tool reserves (--socket-mem / eal.socket_mem_mb)
#   MBUFS [8191]         mbufs in testpmd's pool (spanbox sizes its own: 8191 for this config)
#   MGMT_PORT [18090]    TCP port of the spanbox API (127.0.0.1)
#   SBX_LAYOUT [pinned]  pinned: the worker alone on $CPU (workers.cpus), the rest on $HK_CPU;
#                        shared: the layout before issue #25, every spanbox process (primary,
#                        mgmt, worker) floats on eal.cpus = SBX_CPUS, no workers.cpus
#   SBX_CPUS [$CPU]      eal.cpus of SBX_LAYOUT=shared (the default puts every spanbox thread on
#                        the forwarding CPU, where the primary and mgmt sleep beside the worker)
#   SBX_BUSY_POLL [true] spanbox workers.busy_poll
#   BUILD [repo/build]   spanbox build directory
#   TESTPMD [/usr/bin/dpdk-testpmd]
#   KEEP_TMP [0]         1: keep the temp dir with configs and logs
#   TARGET [0.95]        minimum spanbox/testpmd ratio (issue 15)
set -u

DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
RUNS=${RUNS:-10}
MIN_PAIRS=${MIN_PAIRS:-10}
BURST=${BURST:-32}
PKT_SIZE=${PKT_SIZE:-64}
CPU=${CPU:-1}
HK_CPU=${HK_CPU:-0}
MEM_MB=${MEM_MB:-128}
MBUFS=${MBUFS:-8191}
MGMT_PORT=${MGMT_PORT:-18090}
SBX_LAYOUT=${SBX_LAYOUT:-pinned}
SBX_CPUS=${SBX_CPUS:-$CPU}
SBX_BUSY_POLL=${SBX_BUSY_POLL:-true}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
TESTPMD=${TESTPMD:-/usr/bin/dpdk-testpmd}
KEEP_TMP=${KEEP_TMP:-0}
TARGET=${TARGET:-0.95}

SBX_PREFIX=sbxbench
PMD_PREFIX=sbxbenchpmd
# shared helpers (lib.sh): die log alive stop_pid stop_ours stop_worker remove_prefix_files nap cpu_ticks fmt median ...
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
spanbox_bins # PRIMARY MGMT WORKER API CLK_TCK


# ---------------------------------------------------------------- process bookkeeping, cleanup
OURS=() # pids this script started (the worker is the primary's child: stopped through it)
WORKER_PID=""
NAP_PID=""
STARTED=0 # 1 once this script started a DPDK process: only then are the prefix files ours
TMP=""




cleanup() {
	trap - EXIT INT TERM HUP
	stop_ours
	stop_worker "$WORKER_PID" 5
	alive "$NAP_PID" && kill "$NAP_PID" 2>/dev/null
	if [ "$STARTED" = 1 ]; then
		remove_prefix_files "$SBX_PREFIX"
		remove_prefix_files "$PMD_PREFIX"
	fi
	if [ -n "$TMP" ] && [ -d "$TMP" ]; then
		if [ "$KEEP_TMP" = 1 ]; then echo "# logs kept in $TMP"; else rm -rf "$TMP"; fi
	fi
}
on_signal() { echo; echo "forward.sh: interrupted, cleaning up" >&2; cleanup; exit 130; }
trap cleanup EXIT
trap on_signal INT TERM HUP



# cpu_snap CPU: "busy steal" clock ticks of one CPU (busy: user nice system irq softirq)
cpu_snap() { awk -v c="cpu$1" '$1 == c { print $2 + $3 + $4 + $7 + $8, $9 }' /proc/stat; }

# pct TICKS SECONDS: ticks as a percentage of SECONDS of one CPU
pct() { awk -v d="$1" -v t="$2" -v k="$CLK_TCK" 'BEGIN { printf "%.0f", d / k / t * 100 }'; }

# cpu_report S1 S2 THREAD_TICKS SECONDS: what else ran on the forwarding CPU, and steal
cpu_report() {
	local b1 s1 b2 s2
	read -r b1 s1 <<<"$1"
	read -r b2 s2 <<<"$2"
	echo "other threads on CPU $CPU $(pct $(( b2 - b1 - $3 < 0 ? 0 : b2 - b1 - $3 )) "$4") %, steal $(pct $(( s2 - s1 )) "$4") %"
}

# tid of the thread of PID whose comm is NAME (testpmd's forwarding lcore), or empty
tid_by_comm() {
	local t
	for t in /proc/"$1"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = "$2" ] && { basename "$t"; return; }
	done
}


# ---------------------------------------------------------------- preflight
need_spanbox_bins curl jq awk top
[ -x "$TESTPMD" ] || die "$TESTPMD missing (Debian package dpdk)"
[ -z "${SBX_HOUSEKEEPING_CPU:-}" ] ||
	die "SBX_HOUSEKEEPING_CPU is gone: the default layout (SBX_LAYOUT=pinned) puts the primary and mgmt on HK_CPU with eal.housekeeping_cpus"
case "$SBX_LAYOUT" in pinned | shared) ;; *) die "SBX_LAYOUT=$SBX_LAYOUT: expected pinned or shared" ;; esac
for v in DURATION WARMUP RUNS MIN_PAIRS BURST PKT_SIZE CPU HK_CPU MEM_MB MBUFS MGMT_PORT; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v=${!v}: expected a whole number"
done
[ "$DURATION" -ge 1 ] && [ "$RUNS" -ge 1 ] || die "DURATION and RUNS must be >= 1"
ncpu=$(nproc --all)
[ "$CPU" -lt "$ncpu" ] && [ "$HK_CPU" -lt "$ncpu" ] || die "CPU=$CPU / HK_CPU=$HK_CPU: this machine has CPUs 0..$((ncpu - 1))"
[ "$CPU" -ne "$HK_CPU" ] || die "CPU and HK_CPU must differ (testpmd needs a main lcore besides the forwarding one)"
if pgrep -f -- "--file-prefix[= ]($SBX_PREFIX|$PMD_PREFIX)( |$)" >/dev/null; then
	die "a process with file prefix $SBX_PREFIX or $PMD_PREFIX runs already (another forward.sh?)"
fi
if ss -Hltn "sport = :$MGMT_PORT" 2>/dev/null | grep -q .; then
	die "TCP port $MGMT_PORT is in use: set MGMT_PORT"
fi

# Hugepages: the tools run one at a time, each reserving MEM_MB (+ margin for EAL metadata).
need_hugepages "$MEM_MB"
# Other busy processes disturb the measurement: say so (the numbers stay comparable only if the
# disturbance is the same for both tools, which alternating runs make more likely).
warn_busy

TMP=$(mktemp -d /tmp/sbxbench.XXXXXX)
copy_spanbox_bins

# ---------------------------------------------------------------- spanbox
# the layout: eal.cpus, and the workers.cpus / eal.housekeeping_cpus of SBX_LAYOUT=pinned
if [ "$SBX_LAYOUT" = pinned ]; then
	EAL_CPUS=$(cpulist "$HK_CPU,$CPU") PIN_JSON=", \"cpus\": [$CPU]" HK_JSON=", \"housekeeping_cpus\": \"$HK_CPU\""
	LAYOUT_LINE="spanbox's worker alone on CPU $CPU (workers.cpus), primary, mgmt and EAL control threads on $HK_CPU (eal.housekeeping_cpus)"
else
	EAL_CPUS=$SBX_CPUS PIN_JSON="" HK_JSON=""
	LAYOUT_LINE="every spanbox process floats on eal.cpus \"$SBX_CPUS\" (SBX_LAYOUT=shared, no workers.cpus)"
fi
write_config() {
	cat >"$TMP/spanbox.json" <<EOF
{
  "eal": { "file_prefix": "$SBX_PREFIX", "socket_mem_mb": $MEM_MB, "primary_lcore": 0, "mgmt_lcore": 100,
           "cpus": "$EAL_CPUS"$HK_JSON },
  "pool": { "mbufs": 0, "cache": 256 },
  "ports": [
    { "name": "p0", "devargs": "net_null0,size=$PKT_SIZE", "rx_desc": 1024, "tx_desc": 1024 },
    { "name": "p1", "devargs": "net_null1,size=$PKT_SIZE", "rx_desc": 1024, "tx_desc": 1024 }
  ],
  "workers": { "count": 1, "lcores": [1], "burst": $BURST, "busy_poll": $SBX_BUSY_POLL$PIN_JSON },
  "forwarding": { "xconnects": [["p0", "p1"]] },
  "mgmt": { "listen": "127.0.0.1", "port": $MGMT_PORT, "database": "$TMP/spanbox.db" }
}
EOF
}

TSC_HZ=""
RESULT_RUN=() RESULT_TOOL=() RESULT_MPPS=() RESULT_CPP=() RESULT_API=() RESULT_CPU=()

# record RUN TOOL MPPS CPP API_CPP CPU%
record() {
	RESULT_RUN+=("$1") RESULT_TOOL+=("$2") RESULT_MPPS+=("$3") RESULT_CPP+=("$4") RESULT_API+=("$5") RESULT_CPU+=("$6")
	echo "# => $2 run $1: $3 Mpps, $4 cycles/pkt (API $5), forwarding thread $6 % CPU"
}

# sum of TX packets of every worker on every port (= frames forwarded, both directions)
sbx_tx() { jq '[.workers[].ports[].tx_packets] | add' "$1"; }

run_spanbox() {
	local n=$1 log="$TMP/spanbox.$1" ppid mpid i t1 t2 c1 c2 pc1 pc2 st1 st2 pk dt pps cpp api cpu
	start_spanbox "$TMP/spanbox.json" "$log" '.appliance.state == "up" and .workers[0].state == "running"' || return 1
	WORKER_PID=$(jq '.workers[0].pid' "$log.s0.json")
	TSC_HZ=$(jq '.appliance.tsc_hz' "$log.s0.json")
	if [ "$SBX_LAYOUT" = pinned ] && ! check_pinned "$CPU" "$HK_CPU" "$ppid" "$mpid" "$WORKER_PID"; then
		echo "forward.sh: spanbox run $n: not the pinned layout (above): run dropped" >&2
		stop_ours; stop_worker "$WORKER_PID" 5; WORKER_PID=""; KEEP_TMP=1
		return 1
	fi
	[ "$n" -eq 1 ] && log "spanbox: worker pid $WORKER_PID on $(proc_cpus "$WORKER_PID")," \
		"primary $(proc_cpus "$ppid"), mgmt $(proc_cpus "$mpid")"

	nap "$WARMUP"
	c1=$(cpu_ticks "$WORKER_PID" "$WORKER_PID"); st1=$(cpu_snap "$CPU")
	pc1=$(cpu_ticks "$ppid" "$ppid")
	curl -fsS -m 5 "$API/status" -o "$log.s1.json" >&2; t1=$(date +%s.%N)
	nap "$DURATION"
	curl -fsS -m 5 "$API/status" -o "$log.s2.json" >&2; t2=$(date +%s.%N)
	c2=$(cpu_ticks "$WORKER_PID" "$WORKER_PID"); st2=$(cpu_snap "$CPU")
	pc2=$(cpu_ticks "$ppid" "$ppid")

	stop_pid "$mpid" 10
	stop_pid "$ppid" 15
	alive "$WORKER_PID" && stop_pid "$WORKER_PID" 5
	WORKER_PID=""
	OURS=()

	if ! jq -e '.workers' "$log.s1.json" >/dev/null 2>&1 || ! jq -e '.workers' "$log.s2.json" >/dev/null 2>&1; then
		echo "forward.sh: spanbox run $n: GET $API/status failed during the measurement; logs in $TMP" >&2
		KEEP_TMP=1
		return 1
	fi
	pk=$(( $(sbx_tx "$log.s2.json") - $(sbx_tx "$log.s1.json") ))
	dt=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')
	pps=$(awk -v p="$pk" -v t="$dt" 'BEGIN { print p / t }')
	cpp=$(awk -v h="$TSC_HZ" -v r="$pps" 'BEGIN { print (r > 0 ? h / r : 0) }')
	api=$(jq '.workers[0].cycles_per_packet_total' "$log.s2.json") # cumulative, as BENCHMARKS.md reports it
	cpu=$(awk -v a="$c1" -v b="$c2" -v t="$dt" -v k="$CLK_TCK" 'BEGIN { printf "%.0f", (b - a) / k / t * 100 }')
	log "spanbox run $n: $pk frames in $(fmt "$dt" 3) s; worker $cpu % CPU," \
	    "primary $(pct $(( pc2 - pc1 )) "$dt") % CPU; $(cpu_report "$st1" "$st2" $(( c2 - c1 )) "$dt")"
	[ "$pk" -gt 0 ] || { echo "forward.sh: spanbox forwarded nothing" >&2; return 1; }
	record "$n" spanbox "$(fmt "$pps / 1e6" 2)" "$(fmt "$cpp" 1)" "$api" "$cpu"
}

# ---------------------------------------------------------------- testpmd
run_testpmd() {
	local n=$1 log="$TMP/testpmd.$1.log" pid i tid t1 t2 dt c1 c2 st1 st2 pps cpp cpu hz skip
	# main lcore HK_CPU (prints stats, sleeps), forwarding lcore CPU; pool and descriptors as spanbox
	STARTED=1
	"$TESTPMD" --no-pci --file-prefix "$PMD_PREFIX" -l "$HK_CPU,$CPU" --main-lcore "$HK_CPU" \
		--socket-mem "$MEM_MB" --log-level=lib.eal:notice \
		--vdev "net_null0,size=$PKT_SIZE" --vdev "net_null1,size=$PKT_SIZE" -- \
		--forward-mode=io --burst="$BURST" --nb-cores=1 --auto-start --stats-period=1 \
		--rxd=1024 --txd=1024 --mbcache=256 --total-num-mbufs="$MBUFS" </dev/null >"$log" 2>&1 &
	pid=$!
	OURS+=("$pid")
	for (( i = 0; i < 300; i++ )); do
		grep -saq 'start packet forwarding' "$log" && break
		alive "$pid" || break
		nap 0.1
	done
	if ! grep -saq 'start packet forwarding' "$log" || ! alive "$pid"; then
		echo "forward.sh: dpdk-testpmd did not start forwarding in 30 s; its log:" >&2; tail -20 "$log" >&2
		stop_pid "$pid" 10; OURS=(); return 1
	fi
	tid=$(tid_by_comm "$pid" "rte-worker-$CPU")
	[ "$n" -eq 1 ] && log "testpmd: forwarding thread ${tid:-?} on CPU $( [ -n "$tid" ] && thread_cpus "$pid" "$tid"), main lcore and the rest on $(proc_cpus "$pid")"
	# stats periods: the first prints 0; then WARMUP periods of warm-up; then DURATION measured
	nap "$(( WARMUP + 1 ))"
	c1=$(cpu_ticks "$pid" "${tid:-$pid}"); st1=$(cpu_snap "$CPU"); t1=$(date +%s.%N)
	nap "$DURATION"
	c2=$(cpu_ticks "$pid" "${tid:-$pid}"); st2=$(cpu_snap "$CPU"); t2=$(date +%s.%N)
	nap 1.2
	stop_pid "$pid" 15
	OURS=()

	# Tx-pps lines come per port, port 0 then port 1, once per stats period
	skip=$(( WARMUP + 1 ))
	pps=$(grep -a 'Tx-pps:' "$log" | awk -v skip="$skip" -v take="$DURATION" '
		{ v[NR] = $2 }
		END {
			periods = int(NR / 2)
			for (p = skip + 1; p <= periods && used < take; p++) { s += v[2 * p - 1] + v[2 * p]; used++ }
			print used ? s / used : 0
		}')
	hz=${TSC_HZ:-$(awk '/^cpu MHz/ { print $4 * 1e6; exit }' /proc/cpuinfo)}
	cpp=$(awk -v h="$hz" -v r="$pps" 'BEGIN { print (r > 0 ? h / r : 0) }')
	dt=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')
	cpu=$(awk -v a="$c1" -v b="$c2" -v t="$dt" -v k="$CLK_TCK" 'BEGIN { printf "%.0f", (b - a) / k / t * 100 }')
	log "testpmd run $n: forwarding thread $cpu % CPU; $(cpu_report "$st1" "$st2" $(( c2 - c1 )) "$dt")"
	awk -v r="$pps" 'BEGIN { exit !(r > 0) }' || { echo "forward.sh: no Tx-pps figures in $log" >&2; return 1; }
	record "$n" testpmd "$(fmt "$pps / 1e6" 2)" "$(fmt "$cpp" 1)" "-" "$cpu"
}

# ---------------------------------------------------------------- main
write_config
"$PRIMARY" -c "$TMP/spanbox.json" --check >/dev/null || die "the generated spanbox config is refused: $TMP/spanbox.json"
case "$BUILD" in
"$ROOT"/*) src="built from $ROOT at $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?')" ;;
*) src="built outside $ROOT" ;;
esac
log "spanbox binaries: $BUILD ($src); sha256 $(sha256sum "$PRIMARY" "$WORKER" | cut -c1-12 | tr '\n' ' ')(primary, worker)"
log "$(lscpu | sed -n 's/^Model name: *//p'), $ncpu CPUs; forwarding CPU $CPU;" \
    "$LAYOUT_LINE, busy_poll $SBX_BUSY_POLL;" \
    "testpmd -l $HK_CPU,$CPU; $PKT_SIZE B, burst $BURST; $RUNS runs x ${DURATION} s each (+${WARMUP} s warm-up)"
failed=0
for (( r = 1; r <= RUNS; r++ )); do
	if (( r % 2 )); then
		run_spanbox "$r" || failed=$((failed + 1))
		run_testpmd "$r" || failed=$((failed + 1))
	else
		run_testpmd "$r" || failed=$((failed + 1))
		run_spanbox "$r" || failed=$((failed + 1))
	fi
done

echo
echo "| run | tool | Mpps | cycles/pkt | cycles/pkt (API, cumulative busy) | fwd thread CPU % |"
echo "|---|---|---|---|---|---|"
sbx=() pmd=()
for (( i = 0; i < ${#RESULT_TOOL[@]}; i++ )); do
	echo "| ${RESULT_RUN[i]} | ${RESULT_TOOL[i]} | ${RESULT_MPPS[i]} | ${RESULT_CPP[i]} | ${RESULT_API[i]} | ${RESULT_CPU[i]} |"
	if [ "${RESULT_TOOL[i]}" = spanbox ]; then sbx+=("${RESULT_MPPS[i]}"); else pmd+=("${RESULT_MPPS[i]}"); fi
done
echo
if [ ${#sbx[@]} -eq 0 ] || [ ${#pmd[@]} -eq 0 ]; then
	echo "forward.sh: no successful run of $([ ${#sbx[@]} -eq 0 ] && echo spanbox || echo testpmd); $failed runs failed" >&2
	exit 1
fi
[ "$failed" -gt 0 ] && echo "# WARNING: $failed runs failed and are left out of the medians"
ms=$(median "${sbx[@]}") mp=$(median "${pmd[@]}")
ratio=$(fmt "$ms / $mp" 3)
# ratio of the spanbox run to the testpmd run of the same pair: less sensitive to load that comes
# and goes during the benchmark than the ratio of medians; pairs with a flagged run left out
pairs=() clean=() slow=()
for (( i = 0; i < ${#RESULT_TOOL[@]}; i++ )); do
	[ "${RESULT_CPU[i]}" -lt 95 ] && slow+=("${RESULT_TOOL[i]} run ${RESULT_RUN[i]} (${RESULT_CPU[i]} %)")
	[ "${RESULT_TOOL[i]}" = spanbox ] || continue
	for (( j = 0; j < ${#RESULT_TOOL[@]}; j++ )); do
		[ "${RESULT_TOOL[j]}" = testpmd ] && [ "${RESULT_RUN[j]}" = "${RESULT_RUN[i]}" ] || continue
		q=$(fmt "${RESULT_MPPS[i]} / ${RESULT_MPPS[j]}" 3)
		pairs+=("$q")
		[ "${RESULT_CPU[i]}" -ge 95 ] && [ "${RESULT_CPU[j]}" -ge 95 ] && clean+=("$q")
	done
done
[ ${#pairs[@]} -gt 0 ] && echo "# paired ratios spanbox/testpmd (run order alternating): ${pairs[*]}"
[ ${#slow[@]} -gt 0 ] && echo "# forwarding thread below 95 % of its CPU in: ${slow[*]} (see the log lines above for what else ran); its pair is left out"
echo "spanbox median $(fmt "$ms" 2) Mpps, testpmd median $(fmt "$mp" 2) Mpps, ratio of medians $ratio"
judged=$ratio
if [ ${#clean[@]} -gt 0 ]; then
	judged=$(median "${clean[@]}")
	lo=$(printf '%s\n' "${clean[@]}" | sort -g | head -1) hi=$(printf '%s\n' "${clean[@]}" | sort -g | tail -1)
	echo "median of ${#clean[@]} paired ratios $judged (min $lo, max $hi)"
fi
if [ ${#clean[@]} -lt "$MIN_PAIRS" ]; then
	echo "INCONCLUSIVE: ${#clean[@]} clean pairs, the target ($TARGET) is judged on $MIN_PAIRS or more (RUNS=$MIN_PAIRS or more; ratio $judged)"
elif awk -v r="$judged" -v t="$TARGET" 'BEGIN { exit !(r >= t) }'; then
	echo "TARGET MET (ratio $judged >= $TARGET)"
else
	echo "TARGET MISSED (ratio $judged < $TARGET)"
fi
exit 0
