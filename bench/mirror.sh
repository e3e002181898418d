#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/mirror.sh - what mirroring costs the forwarder: every forwarded frame mirrored with
# ERSPAN type II, per frame size, copy strategy and number of workers.
#
# Ports: p0 (net_null0,size=S) and p1 (net_null1,size=S), cross-connected, and "mirror"
# (net_null2: a destination that frees whatever it is given, never refuses). net_null invents a
# frame of S bytes (pkt_len = data_len = S, contents whatever the mbuf held) for every mbuf it
# allocates on RX, and frees every mbuf on TX, so each worker busy-polls at the rate of its CPU.
#
# One session (id 1, erspan2 over IPv4) with sources p0 rx and p1 rx: every frame a worker
# receives on p0 or p1 is forwarded to the other port and mirrored exactly once. ("p0 both"
# would mirror the same set, but half of it through the tx path, which makes copies before
# rte_eth_tx_burst() and frees again those of refused frames; "rx" on both ports runs one code
# path, the same on both ports and workers. "p0 both" + "p1 both" would mirror every frame twice.)
# Worker w polls queue w of p0 and of p1 only (workers.queues): the mirror port's RX queue is
# never polled (by default workers would poll net_null2 too, which would invent frames at full
# rate that are then dropped).
#
# For every worker count W in $WORKERS and size S in $SIZES, one run per strategy in
# $STRATEGIES, each a fresh spanbox (primary + workers + mgmt), DURATION s measured after WARMUP:
#   none           no mirror session (same ports, same queues): plain forwarding
#   copy, share    copy.strategy fixed
#   adaptive       copy.strategy "adaptive", threshold $THRESHOLD (512, the default)
#   adaptive-cal   "adaptive" with the threshold `spanbox-worker --calibrate` recommends on this
#                  machine (printed at start; CAL_THRESHOLD=N overrides). At a size where it makes
#                  the same decision as "adaptive" (both copy or both share) it is the same
#                  configuration: the "adaptive" run is reused, marked "=" (CAL_RERUN=1 runs it).
# Layout (SBX_LAYOUT=pinned, the default; checked on the kernel's Cpus_allowed_list of every
# thread before each run is measured), as bench/forward.sh:
# W=1: the worker alone on CPU $CPU1 (workers.cpus), the primary, mgmt and EAL's control threads
#      on $HK_CPU (eal.housekeeping_cpus).
# W=2: with 3 CPUs or more the same: the workers on the first two CPUs other than $HK_CPU. With
#      2 CPUs there is no CPU left for housekeeping (spanbox refuses workers.cpus [0, 1]): eal.cpus
#      "0-1", worker w moved to CPU w by taskset once it runs, the primary and mgmt float on both
#      CPUs, i.e. share them with the workers (they sleep; mgmt answers the two GETs of a run).
# SBX_LAYOUT=shared: the layout before issue #25: W=1 everything (primary, mgmt, worker) on CPU
#      $CPU1 (eal.cpus); W=2 as with 2 CPUs above.
#
# Per worker and run, from two GET /api/v1/status DURATION s apart (deltas):
#   fwd       frames forwarded = tx_packets of the worker, all ports
#   cycles/pkt = tsc_hz * dt / fwd: the worker busy-polls (busy_poll, net_null never runs dry),
#             so its core is 100 % busy and this is the cost of one forwarded frame, mirror copy
#             included. Per run (several workers): W * tsc_hz * dt / sum(fwd).
#   mirrored pps, copied, shared, drop_txfull, drop_nombuf (mirrors[0].workers[w])
#   frame B  = rx_bytes / rx_packets (checks net_null's size=: must be S), and the mirrored packet
#             size = mirrored_bytes / mirrored_packets (must be S + 50: Ethernet 14 + IPv4 20 +
#             GRE with sequence number 8 + ERSPAN II 8)
#   CPU %     CPU time of the worker's main thread (/proc); below 95 % something else ran on its
#             CPU and the run is flagged "*"; the detail table (and a flagged cell, in brackets)
#             also gives cycles/pkt by CPU time = tsc_hz * CPU seconds the worker got / fwd.
# Output: a detail table of every run and worker, then per worker count a markdown table
# size x {none, copy, share, adaptive-T, adaptive-Tcal} cycles/pkt, and the checks:
#   - adaptive (both thresholds) within 5 % of the better of copy and share, at every size,
#     judged on medians and only with RUNS >= 3 (with fewer runs the figures are printed as
#     info); run r of adaptive against run r of the fixed strategy (they ran next to each other)
#     is printed beside it;
#   - mirroring 64 B frames (adaptive, the default strategy) costs at most $COPY_RATIO (2.5) x the
#     cycles per packet of plain forwarding;
#   - the share strategy costs at most $SHARE_MAX (130) cycles per packet at every size >= 1024 B.
# A miss prints "TARGET MISSED: ..."; the exit status is 0 anyway. It is 1 only when the benchmark
# cannot run (not root, no hugepages, binaries missing, a config refused, no run succeeded).
#
# Run as root from anywhere: bench/mirror.sh      (the estimate of its run time is printed first;
# defaults: about 58 runs x (DURATION + WARMUP + ~2) s = 9 minutes)
#
# Environment (defaults in brackets):
#   DURATION [5]         seconds measured per run, after WARMUP
#   WARMUP [2]           seconds of forwarding before the measurement starts
#   RUNS [1]             runs per configuration; a table cell is the median (the detail table
#                        lists every run). Two runs of the same code path differ by up to ~10 %
#                        on the VM of docs/BENCHMARKS.md even when quiet: RUNS=3 for the 5 % check.
#   SIZES ["64 128 256 512 1024 1518 9000"]  net_null frame sizes (devargs size=, pkt_len, no FCS);
#                        for sizes over 1500 + 18 the ports get "mtu": S, so that the pool's data
#                        room holds a frame in one mbuf
#   WORKERS ["1 2"]      worker counts (1 or 2)
#   STRATEGIES ["none copy share adaptive adaptive-cal"]
#   THRESHOLD [512]      copy.threshold of "adaptive"
#   CAL_THRESHOLD [from spanbox-worker --calibrate]  copy.threshold of "adaptive-cal"
#   CAL_RERUN [0]        1: run adaptive-cal also where it decides like adaptive
#   CAL_RUNS [3]         runs of --calibrate; adaptive-cal takes the median recommendation
#   CROSS_CORE [1]       1: print the spanbox-worker --calibrate --cross-core table first (~20 s,
#                        CPUs 0 and 1)
#   COPY_RATIO [2.5]     target: 64 B adaptive / plain forwarding, cycles per packet
#   SHARE_MAX [130]      target: share cycles per packet at sizes >= 1024 B
#   BURST [32]           workers.burst
#   CPU1 [1]             CPU of the worker with one worker
#   HK_CPU [0]           housekeeping CPU (eal.housekeeping_cpus) of SBX_LAYOUT=pinned
#   SBX_LAYOUT [pinned]  pinned or shared (above)
#   MEM_MB [auto]        eal.socket_mem_mb (auto: 256, or 640 for frames over 1518 B)
#   MGMT_PORT [18091]    TCP port of the spanbox API (127.0.0.1)
#   BUILD [repo/build]   spanbox build directory (binaries are copied before the first run)
#   KEEP_TMP [0]         1: keep the temp dir with configs, logs and status snapshots
set -u

DURATION=${DURATION:-5}
WARMUP=${WARMUP:-2}
RUNS=${RUNS:-1}
SIZES=${SIZES:-64 128 256 512 1024 1518 9000}
WORKERS=${WORKERS:-1 2}
STRATEGIES=${STRATEGIES:-none copy share adaptive adaptive-cal}
THRESHOLD=${THRESHOLD:-512}
CAL_THRESHOLD=${CAL_THRESHOLD:-}
CAL_RERUN=${CAL_RERUN:-0}
CAL_RUNS=${CAL_RUNS:-3}
BURST=${BURST:-32}
COPY_RATIO=${COPY_RATIO:-2.5}
CROSS_CORE=${CROSS_CORE:-1}
SHARE_MAX=${SHARE_MAX:-130}
CPU1=${CPU1:-1}
HK_CPU=${HK_CPU:-0}
SBX_LAYOUT=${SBX_LAYOUT:-pinned}
MEM_MB=${MEM_MB:-auto}
MGMT_PORT=${MGMT_PORT:-18091}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
[ -d "$BUILD" ] && BUILD=$(cd "$BUILD" && pwd)
KEEP_TMP=${KEEP_TMP:-0}

SBX_PREFIX=sbxmirbench
# shared helpers: die log alive stop_pid stop_ours stop_worker remove_prefix_files nap cpu_ticks fmt median
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
spanbox_bins # PRIMARY MGMT WORKER API CLK_TCK
ERSPAN2_V4_HDR=50 # Ethernet 14 + IPv4 20 + GRE with sequence number 8 + ERSPAN type II 8
FLAG_CPU=95       # a worker with less CPU than this (%) during the window: run flagged


# process bookkeeping (OURS, WORKER_PIDS, STARTED, TMP ...) and the cleanup traps
workers_bench_init


# steal ticks of all CPUs
steal_ticks() { awk '$1 == "cpu" { print $9; exit }' /proc/stat; }
is_true() { awk "BEGIN { exit !($1) }"; }

# strategy name -> copy.strategy and threshold; decision copy|share for a frame of S bytes
strat_json() {
	case "$1" in
	copy | share) echo "{ \"strategy\": \"$1\" }" ;;
	adaptive) echo "{ \"strategy\": \"adaptive\", \"threshold\": $THRESHOLD }" ;;
	adaptive-cal) echo "{ \"strategy\": \"adaptive\", \"threshold\": $CAL_THRESHOLD }" ;;
	esac
}
decision() { # decision STRATEGY SIZE
	case "$1" in
	copy | share) echo "$1" ;;
	adaptive) [ "$2" -le "$THRESHOLD" ] && echo copy || echo share ;;
	adaptive-cal) [ "$2" -le "$CAL_THRESHOLD" ] && echo copy || echo share ;;
	none) echo none ;;
	esac
}
label() {
	case "$1" in
	none) echo "no mirror" ;;
	adaptive) echo "adaptive-$THRESHOLD" ;;
	adaptive-cal) echo "adaptive-$CAL_THRESHOLD (calibrated)" ;;
	*) echo "$1" ;;
	esac
}
mem_mb() { # mem_mb SIZE WORKERS
	if [ "$MEM_MB" != auto ]; then echo "$MEM_MB"
	elif [ "$1" -gt 1518 ]; then echo 640 # up to 32767 mbufs of ~9.4 KB (2 workers) + EAL
	else echo 256; fi
}

# ---------------------------------------------------------------- preflight
need_spanbox_bins curl jq awk taskset top
case "$SBX_LAYOUT" in pinned | shared) ;; *) die "SBX_LAYOUT=$SBX_LAYOUT: expected pinned or shared" ;; esac
for v in DURATION WARMUP RUNS THRESHOLD BURST CPU1 HK_CPU MGMT_PORT CAL_RERUN CAL_RUNS; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v=${!v}: expected a whole number"
done
[ -z "$CAL_THRESHOLD" ] || [[ $CAL_THRESHOLD =~ ^[0-9]+$ ]] || die "CAL_THRESHOLD=$CAL_THRESHOLD: expected a whole number"
[ "$MEM_MB" = auto ] || [[ $MEM_MB =~ ^[0-9]+$ ]] || die "MEM_MB=$MEM_MB: expected auto or a whole number"
[ "$DURATION" -ge 1 ] && [ "$RUNS" -ge 1 ] && [ "$CAL_RUNS" -ge 1 ] || die "DURATION, RUNS and CAL_RUNS must be >= 1"
for s in $SIZES; do
	[[ $s =~ ^[0-9]+$ ]] && [ "$s" -ge 60 ] && [ "$s" -le 9000 ] || die "SIZES: $s: expected 60..9000"
done
for w in $WORKERS; do
	[ "$w" = 1 ] || [ "$w" = 2 ] || die "WORKERS: $w: expected 1 or 2"
done
for s in $STRATEGIES; do
	case "$s" in none | copy | share | adaptive | adaptive-cal) ;;
	*) die "STRATEGIES: $s: expected none, copy, share, adaptive or adaptive-cal" ;;
	esac
done
[ -n "$SIZES" ] && [ -n "$WORKERS" ] && [ -n "$STRATEGIES" ] || die "SIZES, WORKERS and STRATEGIES must not be empty"
ncpu=$(nproc --all)
[ "$CPU1" -lt "$ncpu" ] && [ "$HK_CPU" -lt "$ncpu" ] || die "CPU1=$CPU1 / HK_CPU=$HK_CPU: this machine has CPUs 0..$((ncpu - 1))"
[ "$SBX_LAYOUT" = shared ] || [ "$CPU1" != "$HK_CPU" ] || die "CPU1 and HK_CPU must differ (SBX_LAYOUT=pinned)"
# per worker count: the workers' CPUs when pinned (W_CPUS, "" when not), eal.cpus, layout text
declare -A W_CPUS EAL_CPUS LAYOUT
if [ "$SBX_LAYOUT" = pinned ]; then
	W_CPUS[1]=$CPU1 EAL_CPUS[1]=$(cpulist "$HK_CPU,$CPU1")
	LAYOUT[1]="the worker alone on CPU $CPU1, housekeeping on $HK_CPU"
else
	W_CPUS[1]="" EAL_CPUS[1]=$CPU1 LAYOUT[1]="everything on CPU $CPU1"
fi
if [ "$SBX_LAYOUT" = pinned ] && [ "$ncpu" -ge 3 ]; then
	W_CPUS[2]=$(seq 0 $((ncpu - 1)) | grep -vx "$HK_CPU" | head -2 | paste -sd' ')
	EAL_CPUS[2]=$(cpulist "$HK_CPU,${W_CPUS[2]/ /,}")
	LAYOUT[2]="worker w alone on CPU $(tr ' ' / <<<"${W_CPUS[2]}"), housekeeping on $HK_CPU"
else
	W_CPUS[2]="" EAL_CPUS[2]="0-1"
	LAYOUT[2]="worker w moved to CPU w (taskset), primary and mgmt float on CPUs 0-1 (shared with the workers)"
fi
case " $WORKERS " in *" 2 "*) [ "$ncpu" -ge 2 ] || die "2 workers need CPUs 0 and 1" ;; esac
if pgrep -f -- "--file-prefix[= ]$SBX_PREFIX( |$)" >/dev/null; then
	die "a process with file prefix $SBX_PREFIX runs already (another mirror.sh?)"
fi
if ss -Hltn "sport = :$MGMT_PORT" 2>/dev/null | grep -q .; then
	die "TCP port $MGMT_PORT is in use: set MGMT_PORT"
fi
hp_kb=$(awk '/^Hugepagesize:/ { print $2 }' /proc/meminfo)
hp_free() { awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo; }

warn_busy

TMP=$(mktemp -d /tmp/sbxmirror.XXXXXX)
mkdir -p "$TMP/cfg"
copy_spanbox_bins
case "$BUILD" in
"$ROOT"/*) src="built from $ROOT at $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?')" ;;
*) src="built outside $ROOT" ;;
esac
log "spanbox binaries: $BUILD ($src); sha256 $(sha256sum "$PRIMARY" "$WORKER" "$MGMT" | cut -c1-12 | tr '\n' ' ')(primary, worker, mgmt)"

# ---------------------------------------------------------------- calibration
# --calibrate takes 0.3 s; its recommendation moves between runs where copy and share cost about
# the same (768-1518 B on the machine of docs/BENCHMARKS.md): run it CAL_RUNS times, use the median.
log "spanbox-worker --calibrate x $CAL_RUNS (copy vs share cost of one mirror copy, outside the forwarder):"
cals=()
for (( i = 1; i <= CAL_RUNS; i++ )); do
	"$WORKER" --calibrate >"$TMP/calibrate.$i.txt" 2>&1 || { cat "$TMP/calibrate.$i.txt" >&2; die "spanbox-worker --calibrate failed"; }
	sed "s/^/#   [$i] /" "$TMP/calibrate.$i.txt"
	c=$(sed -n 's/^recommended copy.threshold: \([0-9]*\)$/\1/p' "$TMP/calibrate.$i.txt")
	[ -n "$c" ] || die "no 'recommended copy.threshold' in the --calibrate output ($TMP/calibrate.$i.txt)"
	cals+=("$c")
done
# the evidence for the design (docs/MIRRORING.md): a share released on another core than the one
# that made it, against one core, and the copy beside it (uses CPUs 0 and 1 for ~20 s)
if [ "$CROSS_CORE" = 1 ]; then
	log "spanbox-worker --calibrate --cross-core (refcount line moving between the two CPUs):"
	if "$WORKER" --calibrate --cross-core >"$TMP/crosscore.txt" 2>&1; then
		sed 's/^/#   /' "$TMP/crosscore.txt"
	else
		log "WARNING: spanbox-worker --calibrate --cross-core failed: $(tail -1 "$TMP/crosscore.txt")"
	fi
fi
cal=$(printf '%s\n' "${cals[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
if [ -z "$CAL_THRESHOLD" ]; then
	CAL_THRESHOLD=$cal
	log "adaptive-cal uses threshold $CAL_THRESHOLD (median of the --calibrate recommendations: ${cals[*]})"
else
	log "adaptive-cal uses threshold $CAL_THRESHOLD (CAL_THRESHOLD; --calibrate recommends ${cals[*]})"
fi

# ---------------------------------------------------------------- configs and plan
# write_config FILE WORKERS SIZE STRATEGY
write_config() {
	local f=$1 nw=$2 size=$3 strat=$4 mtu mirrors hk="" pin=""
	mtu=1500
	[ "$size" -gt 1518 ] && mtu=$size
	if [ -n "${W_CPUS[$nw]}" ]; then
		hk=", \"housekeeping_cpus\": \"$HK_CPU\"" pin=", \"cpus\": [${W_CPUS[$nw]/ /, }]"
	fi
	mirrors=""
	[ "$strat" != none ] && mirrors=",
  \"mirrors\": $(bench_mirrors "$(strat_json "$strat")")"
	cat >"$f" <<EOF
{
  "eal": { "file_prefix": "$SBX_PREFIX", "socket_mem_mb": $(mem_mb "$size" "$nw"), "primary_lcore": 0, "mgmt_lcore": 100,
           "cpus": "${EAL_CPUS[$nw]}"$hk },
  "pool": { "mbufs": 0, "cache": 256 },
  "ports": [
    { "name": "p0", "devargs": "net_null0,size=$size", "mtu": $mtu, "rx_desc": 1024, "tx_desc": 1024 },
    { "name": "p1", "devargs": "net_null1,size=$size", "mtu": $mtu, "rx_desc": 1024, "tx_desc": 1024 },
    { "name": "mirror", "devargs": "net_null2", "mtu": $mtu, "rx_desc": 1024, "tx_desc": 1024 }
  ],
  "workers": { "count": $nw, "lcores": [$( [ "$nw" = 1 ] && echo 1 || echo 1, 2)], "burst": $BURST, "busy_poll": true,
               "queues": $(bench_queues "$nw")$pin },
  "forwarding": { "xconnects": [["p0", "p1"]] },
  "mgmt": { "listen": "127.0.0.1", "port": $MGMT_PORT, "database": "$TMP/spanbox.db" }$mirrors
}
EOF
}

# The plan: PLAN = the runs, in order (workers,size,strategy,run); REUSE[cell] = the cell whose
# figures an adaptive-cal cell takes.
PLAN=()
declare -A REUSE=()
has_strat() { case " $STRATEGIES " in *" $1 "*) return 0 ;; esac; return 1; }
CONFIGS=() # nw,size,strategy of every measured configuration, in order
for nw in $WORKERS; do
	for size in $SIZES; do
		for strat in $STRATEGIES; do
			if [ "$strat" = adaptive-cal ] && [ "$CAL_RERUN" = 0 ] && has_strat adaptive &&
			   [ "$(decision adaptive-cal "$size")" = "$(decision adaptive "$size")" ]; then
				REUSE["$nw,$size,adaptive-cal"]="$nw,$size,adaptive"
				continue
			fi
			CONFIGS+=("$nw,$size,$strat")
			write_config "$TMP/cfg/$nw-$size-$strat.json" "$nw" "$size" "$strat"
			"$PRIMARY" -c "$TMP/cfg/$nw-$size-$strat.json" --check >"$TMP/cfg/$nw-$size-$strat.check" 2>&1 ||
				{ cat "$TMP/cfg/$nw-$size-$strat.check" >&2; die "the generated config is refused: $TMP/cfg/$nw-$size-$strat.json"; }
		done
		# the RUNS repetitions of one size run round-robin over the strategies: load that comes and
		# goes hits them alike
		for (( r = 1; r <= RUNS; r++ )); do
			for strat in $STRATEGIES; do
				[ -n "${REUSE[$nw,$size,$strat]:-}" ] || PLAN+=("$nw,$size,$strat,$r")
			done
		done
	done
done
est=$(( ${#PLAN[@]} * (DURATION + WARMUP + 2) )) # + ~2 s per run to start and stop spanbox
log "$(lscpu | sed -n 's/^Model name: *//p'), $ncpu CPUs; SBX_LAYOUT=$SBX_LAYOUT: 1 worker: ${LAYOUT[1]}; 2 workers: ${LAYOUT[2]}"
log "erspan2/IPv4 session, sources p0 rx + p1 rx (every forwarded frame mirrored once), destination net_null2;" \
    "burst $BURST, busy_poll; ${DURATION} s measured after ${WARMUP} s warm-up per run"
log "plan: workers {$WORKERS} x sizes {$SIZES} x {$STRATEGIES} x $RUNS = ${#PLAN[@]} runs" \
    "(${#REUSE[@]} adaptive-cal cells reuse the adaptive run: same decision at that size);" \
    "estimated $((est / 60)) min $((est % 60)) s"
T_BEGIN=$(date +%s)

# ---------------------------------------------------------------- one run
declare -A R_CPP R_CCPP R_MPPS R_MIRR R_FLAG R_DETAIL R_SPREAD
TSC_HZ=""
SIZE_BAD=() # size check failures

# run_one KEY: one run of a configuration; KEY = workers,size,strategy,run
run_one() {
	local key=$1 nw size strat r cfg log ppid mpid i w t1 t2 dt need
	local -a c1 c2
	IFS=, read -r nw size strat r <<<"$key"
	cfg="$TMP/cfg/$nw-$size-$strat.json"
	log="$TMP/run.$nw-$size-$strat-$r"
	need=$(( ($(mem_mb "$size" "$nw") + 32) * 1024 / ${hp_kb:-2048} ))
	if [ "$(hp_free)" -lt "$need" ]; then
		echo "mirror.sh: $key: only $(hp_free) hugepages free, $need needed (others hold them?): run skipped" >&2
		return 1
	fi
	rm -f "$TMP/spanbox.db"*
	if ! start_spanbox "$cfg" "$log" '.appliance.state == "up" and ([.workers[].state] | all(. == "running"))'; then
		echo "mirror.sh: run $key failed to start" >&2
		stop_workers; KEEP_TMP=1; return 1
	fi
	mapfile -t WORKER_PIDS < <(jq '.workers[].pid' "$log.s0.json")
	TSC_HZ=$(jq '.appliance.tsc_hz' "$log.s0.json")
	if [ -n "${W_CPUS[$nw]}" ]; then
		if ! check_pinned "${W_CPUS[$nw]}" "$HK_CPU" "$ppid" "$mpid" "${WORKER_PIDS[@]}"; then
			echo "mirror.sh: run $key: not the pinned layout (above): run dropped" >&2
			stop_ours; stop_workers; KEEP_TMP=1; return 1
		fi
	elif [ "$nw" = 2 ]; then
		for (( w = 0; w < nw; w++ )); do taskset -a -p -c "$w" "${WORKER_PIDS[w]}" >/dev/null; done
	fi
	local aff="primary $(proc_cpus "$ppid"), mgmt $(proc_cpus "$mpid")" pool
	for (( w = 0; w < nw; w++ )); do aff+=", w$w $(proc_cpus "${WORKER_PIDS[w]}")"; done
	pool=$(jq -r '.pools[0] | "\(.size) mbufs, data room \(.data_room)"' "$log.s0.json")

	nap "$WARMUP"
	for (( w = 0; w < nw; w++ )); do c1[w]=$(cpu_ticks "${WORKER_PIDS[w]}"); done
	local st1 st2
	st1=$(steal_ticks)
	curl -fsS -m 5 "$API/status" -o "$log.s1.json" >&2; t1=$(date +%s.%N)
	nap "$DURATION"
	curl -fsS -m 5 "$API/status" -o "$log.s2.json" >&2; t2=$(date +%s.%N)
	for (( w = 0; w < nw; w++ )); do c2[w]=$(cpu_ticks "${WORKER_PIDS[w]}"); done
	st2=$(steal_ticks)

	stop_pid "$mpid" 10
	stop_pid "$ppid" 15
	stop_workers
	OURS=()

	if ! jq -e '.workers' "$log.s1.json" >/dev/null 2>&1 || ! jq -e '.workers' "$log.s2.json" >/dev/null 2>&1; then
		echo "mirror.sh: $key: GET $API/status failed during the measurement; logs in $TMP" >&2
		KEEP_TMP=1
		return 1
	fi
	dt=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')
	local tot_fwd=0 tot_mir=0 tot_ticks=0 flag="" wfwd wrx wrxb wmir wmirb wcp wsh wtxf wnomb _wpid wapi cpu cpp ccpp fb mb
	local restarted
	restarted=$(jq -n --slurpfile a "$log.s1.json" --slurpfile b "$log.s2.json" \
		'[range(0; $b[0].workers | length) as $w | select($a[0].workers[$w].pid != $b[0].workers[$w].pid)] | length')
	[ "$restarted" -gt 0 ] && { echo "mirror.sh: $key: a worker restarted during the window: run dropped" >&2; KEEP_TMP=1; return 1; }
	while read -r w wfwd wrx wrxb wmir wmirb wcp wsh wtxf wnomb _wpid wapi; do
		cpu=$(awk -v a="${c1[w]}" -v b="${c2[w]}" -v t="$dt" -v k="$CLK_TCK" 'BEGIN { printf "%.0f", (b - a) / k / t * 100 }')
		[ "$wfwd" -gt 0 ] || { echo "mirror.sh: $key: worker $w forwarded nothing" >&2; KEEP_TMP=1; return 1; }
		cpp=$(fmt "$TSC_HZ * $dt / $wfwd" 1)
		ccpp=$(fmt "$TSC_HZ * (${c2[w]} - ${c1[w]}) / $CLK_TCK / $wfwd" 1)
		fb=$( [ "$wrx" -gt 0 ] && fmt "$wrxb / $wrx" 1 || echo -)
		mb=$( [ "$wmir" -gt 0 ] && fmt "$wmirb / $wmir" 1 || echo -)
		[ "$fb" = "$size.0" ] || SIZE_BAD+=("$key worker $w: rx_bytes/rx_packets = $fb, expected $size")
		if [ "$strat" != none ] && [ "$mb" != "$((size + ERSPAN2_V4_HDR)).0" ]; then
			SIZE_BAD+=("$key worker $w: mirrored_bytes/mirrored_packets = $mb, expected $((size + ERSPAN2_V4_HDR))")
		fi
		[ "$cpu" -lt "$FLAG_CPU" ] && flag="*"
		tot_fwd=$((tot_fwd + wfwd)) tot_mir=$((tot_mir + wmir)) tot_ticks=$((tot_ticks + c2[w] - c1[w]))
		R_DETAIL["$key"]+="| $nw | $size | $(label "$strat") | $r | $w | $(fmt "$wfwd / $dt / 1e6" 2) | $cpp | $ccpp | $wapi |"
		R_DETAIL["$key"]+=" $( [ "$strat" = none ] && echo - || fmt "$wmir / $dt / 1e6" 2) | $( [ "$strat" = none ] && echo - || fmt "100 * $wmir / $wfwd" 1) |"
		R_DETAIL["$key"]+=" $wcp | $wsh | $wtxf | $wnomb | $fb | $mb | $cpu |"$'\n'
	done < <(worker_deltas "$log.s1.json" "$log.s2.json")
	R_CPP["$key"]=$(fmt "$nw * $TSC_HZ * $dt / $tot_fwd" 1)
	R_CCPP["$key"]=$(fmt "$TSC_HZ * $tot_ticks / $CLK_TCK / $tot_fwd" 1)
	R_MPPS["$key"]=$(fmt "$tot_fwd / $dt / 1e6" 2)
	R_MIRR["$key"]=$(fmt "$tot_mir / $dt / 1e6" 2)
	R_FLAG["$key"]=$flag
	log "run $key: $(fmt "$dt" 3) s; ${R_MPPS[$key]} Mpps forwarded, ${R_MIRR[$key]} Mpps mirrored, ${R_CPP[$key]} cycles/pkt;" \
	    "pool $pool; affinity $aff; steal $(awk -v d="$((st2 - st1))" -v t="$dt" -v k="$CLK_TCK" -v n="$ncpu" 'BEGIN { printf "%.0f", d / k / t / n * 100 }') %${flag:+; FLAGGED: a worker had < $FLAG_CPU % of its CPU}"
}

# ---------------------------------------------------------------- main
failed=0 ok=0
for key in "${PLAN[@]}"; do
	if run_one "$key"; then ok=$((ok + 1)); else failed=$((failed + 1)); fi
done
T_END=$(date +%s)
[ "$ok" -gt 0 ] || die "no run succeeded ($failed failed)"
# per configuration: the median of its runs; flagged when one of them was
for cfgkey in "${CONFIGS[@]}"; do
	cpps=() ccpps=() mppss=() mirrs=() flag=""
	for (( r = 1; r <= RUNS; r++ )); do
		k="$cfgkey,$r"
		[ -n "${R_CPP[$k]:-}" ] || continue
		cpps+=("${R_CPP[$k]}") ccpps+=("${R_CCPP[$k]}") mppss+=("${R_MPPS[$k]}") mirrs+=("${R_MIRR[$k]}")
		[ -n "${R_FLAG[$k]}" ] && flag="*"
	done
	[ ${#cpps[@]} -gt 0 ] || continue
	R_CPP["$cfgkey"]=$(fmt "$(median "${cpps[@]}")" 1) R_CCPP["$cfgkey"]=$(fmt "$(median "${ccpps[@]}")" 1)
	R_MPPS["$cfgkey"]=$(fmt "$(median "${mppss[@]}")" 2) R_MIRR["$cfgkey"]=$(fmt "$(median "${mirrs[@]}")" 2) R_FLAG["$cfgkey"]=$flag
	[ ${#cpps[@]} -gt 1 ] && R_SPREAD["$cfgkey"]="$(printf '%s\n' "${cpps[@]}" | sort -g | head -1)-$(printf '%s\n' "${cpps[@]}" | sort -g | tail -1)"
done
for k in "${!REUSE[@]}"; do
	src=${REUSE[$k]}
	[ -n "${R_CPP[$src]:-}" ] && R_CPP["$k"]=${R_CPP[$src]} R_CCPP["$k"]=${R_CCPP[$src]} R_FLAG["$k"]="${R_FLAG[$src]}="
done

echo
log "$ok runs in $(( (T_END - T_BEGIN) / 60 )) min $(( (T_END - T_BEGIN) % 60 )) s$( [ "$failed" -gt 0 ] && echo ", $failed failed")"
echo
echo "Every run and worker (Mpps forwarded by the worker; cycles/pkt = tsc_hz x dt / forwarded; (CPU time) = tsc_hz x CPU time the worker got / forwarded;"
echo "API = the worker's cumulative cycles_per_packet_total (since it started, warm-up included);"
echo "mirrored Mpps, % of forwarded; counters are deltas over the window; frame B = rx_bytes / rx_packets; mirrored B = mirrored_bytes / mirrored_packets):"
echo
echo "| workers | size B | strategy | run | worker | Mpps | cycles/pkt | cycles/pkt (CPU time) | API cycles/pkt | mirrored Mpps | mirrored % | copied | shared | drop_txfull | drop_nombuf | frame B | mirrored B | CPU % |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for key in "${PLAN[@]}"; do printf '%s' "${R_DETAIL[$key]:-}"; done

missed=() met=()
spread() { [ -n "${R_SPREAD[$1]:-}" ] && echo " (runs ${R_SPREAD[$1]})"; }
cell() { # cell KEY: cycles/pkt with its flags, or "fail" / "-"
	local k=$1 s=${1##*,}
	if ! has_strat "$s"; then echo "-"
	elif [ -n "${R_CPP[$k]:-}" ]; then
		case "${R_FLAG[$k]:-}" in
		"*"*) echo "${R_CPP[$k]}${R_FLAG[$k]} (${R_CCPP[$k]})" ;;
		*) echo "${R_CPP[$k]}${R_FLAG[$k]:-}" ;;
		esac
	else echo "fail"; fi
}
for nw in $WORKERS; do
	echo
	echo "### $nw worker$( [ "$nw" = 2 ] && echo s): cycles per forwarded packet$( [ "$nw" = 2 ] && echo " (2 x tsc_hz x dt / frames forwarded by both)")$( [ "$RUNS" -gt 1 ] && echo ", median of $RUNS runs")"
	echo
	hdr="| size B |" sep="|---|"
	for s in none copy share adaptive adaptive-cal; do has_strat "$s" && hdr+=" $(label "$s") |" && sep+="---|"; done
	hdr+=" Mpps no mirror / adaptive |" sep+="---|"
	echo "$hdr"; echo "$sep"
	for size in $SIZES; do
		row="| $size |"
		for s in none copy share adaptive adaptive-cal; do has_strat "$s" && row+=" $(cell "$nw,$size,$s") |"; done
		row+=" ${R_MPPS[$nw,$size,none]:--} / ${R_MPPS[$nw,$size,adaptive]:--} |"
		echo "$row"
	done
	# checks
	for size in $SIZES; do
		c=${R_CPP[$nw,$size,copy]:-} s=${R_CPP[$nw,$size,share]:-}
		[ -n "$c" ] && [ -n "$s" ] || continue
		if is_true "$c <= $s"; then best=$c bname=copy; else best=$s bname=share; fi
		for a in adaptive adaptive-cal; do
			# the same threshold twice: one check
			[ "$a" = adaptive-cal ] && [ "$CAL_THRESHOLD" = "$THRESHOLD" ] && has_strat adaptive && continue
			v=${R_CPP[$nw,$size,$a]:-}
			[ -n "$v" ] || continue
			ak=$nw,$size,$a
			[ -n "${REUSE[$ak]:-}" ] && ak=${REUSE[$ak]}
			# judged on the ratio of the medians; beside it run r of adaptive against run r of
			# the fixed strategy (they ran next to each other, round-robin): a drift between runs
			# shows there as pairs that agree, one disturbed run as one outlier
			pr=()
			for (( r = 1; r <= RUNS; r++ )); do
				[ -n "${R_CPP[$ak,$r]:-}" ] && [ -n "${R_CPP[$nw,$size,$bname,$r]:-}" ] &&
					pr+=("$(fmt "(${R_CPP[$ak,$r]} / ${R_CPP[$nw,$size,$bname,$r]} - 1) * 100" 1)")
			done
			d=$(fmt "($v / $best - 1) * 100" 1)
			msg="$nw worker(s), $size B: $(label "$a") $v$(spread "$ak") cycles/pkt vs better fixed ($bname) $best$(spread "$nw,$size,$bname"): ${d} % (run by run: ${pr[*]} %)"
			if [ "$(decision "$a" "$size")" = "$bname" ]; then
				msg+=" (at this size it takes the $bname path itself: the difference is run-to-run variation)"
			else
				msg+=" (at this size it takes the $(decision "$a" "$size") path)"
			fi
			case "${R_FLAG[$ak]:-}${R_FLAG[$nw,$size,$bname]:-}" in *"*"*) msg+=" [disturbed runs]" ;; esac
			if [ "$RUNS" -lt 3 ]; then
				# one or two runs per cell: the check would judge run-to-run noise
				met+=("(info, not judged: RUNS=$RUNS, the 5 % check needs medians of 3 or more) $msg")
			elif is_true "$d <= 5"; then met+=("$msg"); else missed+=("$msg > 5 %"); fi
		done
	done
	n=${R_CPP[$nw,64,none]:-}
	if [ -n "$n" ]; then
		for a in adaptive copy share adaptive-cal; do
			[ "$a" = adaptive-cal ] && [ "$CAL_THRESHOLD" = "$THRESHOLD" ] && has_strat adaptive && continue
			v=${R_CPP[$nw,64,$a]:-}
			[ -n "$v" ] || continue
			r=$(fmt "$v / $n" 2)
			msg="$nw worker(s), 64 B: $(label "$a") $v cycles/pkt = ${r} x plain forwarding ($n)"
			case "${R_FLAG[$nw,64,$a]:-}${R_FLAG[$nw,64,none]:-}" in *"*"*) msg+=" [disturbed runs]" ;; esac
			if [ "$a" = adaptive ]; then
				if is_true "$r <= $COPY_RATIO"; then met+=("$msg (target <= $COPY_RATIO x)"); else missed+=("$msg > $COPY_RATIO x"); fi
			else
				met+=("(info) $msg")
			fi
		done
	fi
	# the share path costs about the same at every size (nothing is copied): at most SHARE_MAX
	for size in $SIZES; do
		[ "$size" -ge 1024 ] || continue
		v=${R_CPP[$nw,$size,share]:-}
		[ -n "$v" ] || continue
		msg="$nw worker(s), $size B: share $v$(spread "$nw,$size,share") cycles/pkt"
		case "${R_FLAG[$nw,$size,share]:-}" in *"*"*) msg+=" [disturbed runs]" ;; esac
		if is_true "$v <= $SHARE_MAX"; then met+=("$msg (target <= $SHARE_MAX)"); else missed+=("$msg > $SHARE_MAX"); fi
	done
done
echo
echo "\"*\": a worker had less than $FLAG_CPU % of its CPU during the window (something else ran there), in brackets the cycles/pkt by the CPU time it got;"
echo "\"=\": the adaptive-$THRESHOLD run (same decision at this size)."
echo
[ "$failed" -gt 0 ] && echo "# WARNING: $failed runs failed (see the messages above); their cells say fail"
if [ ${#SIZE_BAD[@]} -gt 0 ]; then
	printf 'SIZE CHECK FAILED: %s\n' "${SIZE_BAD[@]}"
else
	echo "size check: rx_bytes / rx_packets = S and mirrored_bytes / mirrored_packets = S + $ERSPAN2_V4_HDR in every run and worker"
fi
for m in "${met[@]}"; do echo "ok: $m"; done
for m in "${missed[@]}"; do echo "TARGET MISSED: $m"; done
[ ${#missed[@]} -eq 0 ] && echo "TARGETS MET"
exit 0
