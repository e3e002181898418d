#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/placement.sh - what pinning a busy-polling worker to a CPU of its own buys (issue #25):
# spanbox with workers.cpus against spanbox without, and the scaling of pinned workers.
#
# 1. Comparison, for each workload in $WORKLOADS (64 B frames, net_null ports p0 <-> p1):
#      forward   plain forwarding
#      mirror    + every forwarded frame mirrored once (ERSPAN II, sources p0 rx + p1 rx,
#                destination net_null2, copy "adaptive" 512: a copy at 64 B), as bench/mirror.sh
#    two layouts of one worker, both with eal.cpus "$FLOAT_CPUS":
#      floating  today's layout without workers.cpus: every thread of every process (primary,
#                mgmt, the worker, EAL's control threads) floats on eal.cpus
#      pinned    workers.cpus [$CPU]: the worker's polling thread runs on CPU $CPU alone, everything
#                else on eal.housekeeping_cpus (default: eal.cpus less $CPU) - checked on the
#                kernel's Cpus_allowed_list of every thread before each run is measured
#    $RUNS pairs per workload, the order alternating (floating first in odd pairs). Per run:
#      Mpps       frames forwarded (tx_packets of the worker, all ports) per second, from two
#                 GET /api/v1/status DURATION s apart
#      cycles/frame  tsc_hz * dt / frames: the worker busy-polls, so this is the cost of a frame
#                 on a CPU it has to itself; (cpu) = tsc_hz * CPU time the worker got / frames
#      CPU %      CPU time of the worker's polling thread; below 95 % something else ran on its
#                 CPU: the run is flagged "*" and its pair left out of the judged median
#      migr, invol  the polling thread's CPU migrations (/proc/PID/sched se.nr_migrations) and
#                 involuntary context switches during the window
#    and per pair the ratio pinned Mpps / floating Mpps (= floating cycles / pinned cycles; > 1:
#    pinning is faster). The lines per workload:
#      floating median X Mpps (C cycles/frame), pinned median Y Mpps (D cycles/frame)
#      median of N paired ratios pinned/floating R (min A, max B)
#    and "INCONCLUSIVE" with fewer than $MIN_PAIRS clean pairs (single pairs on the 2-CPU VM of
#    docs/BENCHMARKS.md move by +-15 %: fewer pairs do not separate a few % from noise).
# 2. Scaling (SCALE=1): N pinned workers on N CPUs, N = 1 .. (the CPUs of $SCALE_CPUS, at most
#    SBX_MAX_WORKERS = 32 of them), the housekeeping on $HK_CPU, forwarding 64 B; worker w polls
#    queue w of p0 and p1. Prints per worker Mpps and CPU %, the total and total / (N x the
#    one-worker figure). On a 2-CPU machine that is N = 1 only; the same command shows the
#    scaling of a 16-core server (N = 1 .. 8).
#
# No target: the exit status is 0 whatever the figures; 1 only when the benchmark cannot run (not
# root, no hugepages, a config refused, no run succeeded).
#
# Run as root, under the machine's DPDK lock when others share it:
#   flock /tmp/sbx-e2e.lock bench/placement.sh
# (defaults: 10 pairs x 2 layouts x 2 workloads x (DURATION + WARMUP + ~3) s ~ 7 min, + scaling)
#
# Environment (defaults in brackets):
#   DURATION [5]         seconds measured per run, after WARMUP
#   WARMUP [2]           seconds of forwarding before the measurement starts
#   RUNS [10]            pairs per workload (one floating and one pinned run per pair)
#   MIN_PAIRS [10]       clean pairs needed to read a paired median as a result
#   WORKLOADS ["forward mirror"]
#   PKT_SIZE [64]        net_null frame size (devargs size=)
#   BURST [32]           workers.burst
#   CPU [1]              the pinned worker's CPU in the comparison
#   FLOAT_CPUS [0-1]     eal.cpus of both layouts of the comparison (must contain CPU)
#   SCALE [1]            1: run the scaling part
#   HK_CPU [0]           housekeeping CPU of the scaling part
#   SCALE_CPUS [all CPUs but HK_CPU]  the workers' CPUs of the scaling part, in order: N workers
#                        take the first N (on an SMT server, list one thread per core first)
#   SCALE_RUNS [1]       runs per N (the table shows the median of the totals)
#   MEM_MB [auto]        eal.socket_mem_mb (auto: 256 + 64 per worker after the first)
#   MGMT_PORT [18092]    TCP port of the spanbox API (127.0.0.1)
#   BUILD [repo/build]   spanbox build directory (binaries are copied before the first run)
#   KEEP_TMP [0]         1: keep the temp dir with configs, logs and status snapshots
set -u

DURATION=${DURATION:-5}
WARMUP=${WARMUP:-2}
RUNS=${RUNS:-10}
MIN_PAIRS=${MIN_PAIRS:-10}
WORKLOADS=${WORKLOADS:-forward mirror}
PKT_SIZE=${PKT_SIZE:-64}
BURST=${BURST:-32}
CPU=${CPU:-1}
FLOAT_CPUS=${FLOAT_CPUS:-0-1}
SCALE=${SCALE:-1}
HK_CPU=${HK_CPU:-0}
SCALE_CPUS=${SCALE_CPUS:-}
SCALE_RUNS=${SCALE_RUNS:-1}
MEM_MB=${MEM_MB:-auto}
MGMT_PORT=${MGMT_PORT:-18092}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
[ -d "$BUILD" ] && BUILD=$(cd "$BUILD" && pwd)
KEEP_TMP=${KEEP_TMP:-0}

SBX_PREFIX=sbxplbench
FLAG_CPU=95 # a worker with less CPU than this (%) during the window: run flagged
# shared helpers (lib.sh): die log stop_pid stop_ours stop_worker start_spanbox nap cpu_ticks fmt median ...
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
spanbox_bins # PRIMARY MGMT WORKER API CLK_TCK

# process bookkeeping (OURS, WORKER_PIDS, STARTED, TMP ...) and the cleanup traps
workers_bench_init

# ---------------------------------------------------------------- preflight
need_spanbox_bins curl jq awk top
for v in DURATION WARMUP RUNS MIN_PAIRS PKT_SIZE BURST CPU SCALE HK_CPU SCALE_RUNS MGMT_PORT; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v=${!v}: expected a whole number"
done
[ "$MEM_MB" = auto ] || [[ $MEM_MB =~ ^[0-9]+$ ]] || die "MEM_MB=$MEM_MB: expected auto or a whole number"
[ "$DURATION" -ge 1 ] && [ "$SCALE_RUNS" -ge 1 ] || die "DURATION and SCALE_RUNS must be >= 1"
[ "$PKT_SIZE" -ge 60 ] && [ "$PKT_SIZE" -le 1518 ] || die "PKT_SIZE=$PKT_SIZE: expected 60..1518"
for w in $WORKLOADS; do
	case "$w" in forward | mirror) ;; *) die "WORKLOADS: $w: expected forward or mirror" ;; esac
done
[ "$RUNS" -eq 0 ] || [ -n "$WORKLOADS" ] || die "WORKLOADS must not be empty (or RUNS=0)"
[ "$RUNS" -ge 1 ] || [ "$SCALE" = 1 ] || die "nothing to do: RUNS=0 and SCALE=0"
ncpu=$(nproc --all)
[ "$ncpu" -ge 2 ] || die "this machine has $ncpu CPU: pinning a worker needs 2"
FLOAT_CPUS=$(cpulist "$FLOAT_CPUS")
[ -n "$FLOAT_CPUS" ] || die "FLOAT_CPUS: expected a CPU list such as 0-1"
cpus_of "$FLOAT_CPUS" | grep -qx "$CPU" || die "CPU=$CPU is not in FLOAT_CPUS=$FLOAT_CPUS"
PIN_HK=$(cpulist "$(cpus_of "$FLOAT_CPUS" | grep -vx "$CPU" | paste -sd,)") # eal.housekeeping_cpus' default
[ -n "$PIN_HK" ] || die "FLOAT_CPUS=$FLOAT_CPUS leaves no housekeeping CPU beside CPU=$CPU"
[ -n "$SCALE_CPUS" ] || SCALE_CPUS=$(seq 0 $((ncpu - 1)) | grep -vx "$HK_CPU" | tr '\n' ' ')
for c in $SCALE_CPUS; do
	[[ $c =~ ^[0-9]+$ ]] && [ "$c" -lt "$ncpu" ] && [ "$c" != "$HK_CPU" ] ||
		die "SCALE_CPUS: $c: expected CPUs of 0..$((ncpu - 1)) other than HK_CPU=$HK_CPU"
done
SCALE_CPUS=($SCALE_CPUS)
# spanbox runs at most SBX_MAX_WORKERS workers (include/spanbox/config.h)
MAX_WORKERS=$(awk '$1 == "#define" && $2 == "SBX_MAX_WORKERS" { print $3 }' "$ROOT/include/spanbox/config.h" 2>/dev/null)
MAX_WORKERS=${MAX_WORKERS:-8}
if [ ${#SCALE_CPUS[@]} -gt "$MAX_WORKERS" ]; then
	log "scaling: ${#SCALE_CPUS[@]} CPUs for workers, spanbox runs at most $MAX_WORKERS (SBX_MAX_WORKERS): N = 1 .. $MAX_WORKERS"
	SCALE_CPUS=("${SCALE_CPUS[@]:0:MAX_WORKERS}")
fi
if pgrep -f -- "--file-prefix[= ]$SBX_PREFIX( |$)" >/dev/null; then
	die "a process with file prefix $SBX_PREFIX runs already (another placement.sh?)"
fi
if ss -Hltn "sport = :$MGMT_PORT" 2>/dev/null | grep -q .; then
	die "TCP port $MGMT_PORT is in use: set MGMT_PORT"
fi
mem_mb() { if [ "$MEM_MB" != auto ]; then echo "$MEM_MB"; else echo $(( 256 + 64 * ($1 - 1) )); fi; }
maxw=1
[ "$SCALE" = 1 ] && maxw=${#SCALE_CPUS[@]}
need_hugepages "$(mem_mb "$maxw")"
warn_busy

TMP=$(mktemp -d /tmp/sbxplace.XXXXXX)
mkdir -p "$TMP/cfg"
copy_spanbox_bins
log "spanbox $(spanbox_rev), binaries of $BUILD; sha256 $(sha256sum "$PRIMARY" "$WORKER" | cut -c1-12 | tr '\n' ' ')(primary, worker)"
log "$(machine_line); isolated CPUs: $(cat /sys/devices/system/cpu/isolated 2>/dev/null | grep . || echo none)"

# ---------------------------------------------------------------- configs
# write_config FILE WORKLOAD EAL_CPUS WORKER_CPUS: WORKER_CPUS a list of CPU numbers (one worker
# per CPU, pinned: workers.cpus) or "float:N" (N workers without workers.cpus)
write_config() {
	local f=$1 wl=$2 ecpus=$3 wc=$4 nw pin mirrors
	if [ "${wc%%:*}" = float ]; then nw=${wc#float:} pin=null
	else
		pin=$(printf '%s\n' $wc | jq -cs .)
		nw=$(jq length <<<"$pin")
	fi
	mirrors='[]'
	[ "$wl" = mirror ] && mirrors=$(bench_mirrors '{"strategy": "adaptive", "threshold": 512}')
	jq -n --arg pfx "$SBX_PREFIX" --argjson mem "$(mem_mb "$nw")" --arg cpus "$ecpus" --argjson nw "$nw" \
		--argjson pin "$pin" --argjson size "$PKT_SIZE" --argjson burst "$BURST" \
		--argjson queues "$(bench_queues "$nw")" --argjson mirrors "$mirrors" --argjson port "$MGMT_PORT" \
		--arg db "$TMP/spanbox.db" '
		def port(n; d): { name: n, devargs: d, mtu: 1500, rx_desc: 1024, tx_desc: 1024 };
		{ eal: { file_prefix: $pfx, socket_mem_mb: $mem, primary_lcore: 0, mgmt_lcore: 100, cpus: $cpus },
		  pool: { mbufs: 0, cache: 256 },
		  ports: ([port("p0"; "net_null0,size=\($size)"), port("p1"; "net_null1,size=\($size)")]
		          + (if ($mirrors | length) > 0 then [port("mirror"; "net_null2")] else [] end)),
		  workers: ({ count: $nw, lcores: [range(1; $nw + 1)], burst: $burst, busy_poll: true, queues: $queues }
		            + (if $pin == null then {} else { cpus: $pin } end)),
		  forwarding: { xconnects: [["p0", "p1"]] },
		  mgmt: { listen: "127.0.0.1", port: $port, database: $db } }
		+ (if ($mirrors | length) > 0 then { mirrors: $mirrors } else {} end)' >"$f"
	"$PRIMARY" -c "$f" --check >"$f.check" 2>&1 || { cat "$f.check" >&2; die "the generated config is refused: $f"; }
}

# ---------------------------------------------------------------- one run
# run_one KEY CONFIG PINNED_CPUS HK_CPUS: one fresh spanbox, DURATION s measured. PINNED_CPUS:
# the workers' CPUs when pinned, "" when floating; HK_CPUS: the housekeeping CPUs when pinned, the
# CPUs everything floats on when not (the layout is checked before the measurement).
# Sets R_MPPS R_CPP R_CCPP R_CPU R_MIGR R_INVOL R_FLAG [KEY] (per run), R_WMPPS R_WCPU [KEY,w].
declare -A R_MPPS R_CPP R_CCPP R_CPU R_MIGR R_INVOL R_FLAG R_WMPPS R_WCPU
TSC_HZ=""
run_one() {
	local key=$1 cfg=$2 pinned=$3 hk=${4:-} log="$TMP/run.$1" ppid mpid w nw t1 t2 dt flag=""
	local -a c1 c2 s1 s2
	rm -f "$TMP/spanbox.db"*
	if ! start_spanbox "$cfg" "$log" '.appliance.state == "up" and ([.workers[].state] | all(. == "running"))'; then
		echo "placement.sh: run $key failed to start" >&2
		stop_workers; KEEP_TMP=1; return 1
	fi
	mapfile -t WORKER_PIDS < <(jq '.workers[].pid' "$log.s0.json")
	nw=${#WORKER_PIDS[@]}
	TSC_HZ=$(jq '.appliance.tsc_hz' "$log.s0.json")
	local p lay_ok=1
	if [ -n "$pinned" ]; then
		check_pinned "$pinned" "$hk" "$ppid" "$mpid" "${WORKER_PIDS[@]}" || lay_ok=0
	else
		for p in "$ppid" "$mpid" "${WORKER_PIDS[@]}"; do
			all_threads_on "$p" "$hk" || { echo "placement.sh: pid $p runs on $(proc_cpus "$p"), expected $hk" >&2; lay_ok=0; }
		done
	fi
	if [ "$lay_ok" = 0 ]; then
		echo "placement.sh: run $key: not the $( [ -n "$pinned" ] && echo pinned || echo floating) layout (above): run dropped" >&2
		stop_ours; stop_workers; KEEP_TMP=1; return 1
	fi
	local aff="primary $(proc_cpus "$ppid"); mgmt $(proc_cpus "$mpid")"
	for (( w = 0; w < nw; w++ )); do aff+="; worker $w $(proc_cpus "${WORKER_PIDS[w]}")"; done

	nap "$WARMUP"
	for (( w = 0; w < nw; w++ )); do c1[w]=$(cpu_ticks "${WORKER_PIDS[w]}"); s1[w]=$(sched_counts "${WORKER_PIDS[w]}"); done
	curl -fsS -m 5 "$API/status" -o "$log.s1.json" >&2; t1=$(date +%s.%N)
	nap "$DURATION"
	curl -fsS -m 5 "$API/status" -o "$log.s2.json" >&2; t2=$(date +%s.%N)
	for (( w = 0; w < nw; w++ )); do c2[w]=$(cpu_ticks "${WORKER_PIDS[w]}"); s2[w]=$(sched_counts "${WORKER_PIDS[w]}"); done

	stop_pid "$mpid" 10
	stop_pid "$ppid" 15
	stop_workers
	OURS=()

	if ! jq -e '.workers' "$log.s1.json" >/dev/null 2>&1 || ! jq -e '.workers' "$log.s2.json" >/dev/null 2>&1; then
		echo "placement.sh: $key: GET $API/status failed during the measurement; logs in $TMP" >&2
		KEEP_TMP=1; return 1
	fi
	if [ "$(jq -n --slurpfile a "$log.s1.json" --slurpfile b "$log.s2.json" '[$a[0].workers[].pid] == [$b[0].workers[].pid]')" != true ]; then
		echo "placement.sh: $key: a worker restarted during the window: run dropped" >&2
		KEEP_TMP=1; return 1
	fi
	dt=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')
	local tot=0 ticks=0 migr=0 invol=0 fwd cpu m1 i1 m2 i2
	while read -r w fwd _; do
		[ "$fwd" -gt 0 ] || { echo "placement.sh: $key: worker $w forwarded nothing" >&2; KEEP_TMP=1; return 1; }
		cpu=$(awk -v a="${c1[w]}" -v b="${c2[w]}" -v t="$dt" -v k="$CLK_TCK" 'BEGIN { printf "%.0f", (b - a) / k / t * 100 }')
		read -r m1 i1 <<<"${s1[w]}"
		read -r m2 i2 <<<"${s2[w]}"
		[ "$m1" = - ] || [ "$migr" = - ] && migr=- || migr=$(( migr + m2 - m1 ))
		invol=$(( invol + i2 - i1 ))
		[ "$cpu" -lt "$FLAG_CPU" ] && flag="*"
		tot=$(( tot + fwd )) ticks=$(( ticks + c2[w] - c1[w] ))
		R_WMPPS["$key,$w"]=$(fmt "$fwd / $dt / 1e6" 2) R_WCPU["$key,$w"]=$cpu
	done < <(worker_deltas "$log.s1.json" "$log.s2.json")
	R_MPPS["$key"]=$(fmt "$tot / $dt / 1e6" 2)
	R_CPP["$key"]=$(fmt "$nw * $TSC_HZ * $dt / $tot" 1)
	R_CCPP["$key"]=$(fmt "$TSC_HZ * $ticks / $CLK_TCK / $tot" 1)
	R_CPU["$key"]=$(fmt "$ticks / $CLK_TCK / $dt / $nw * 100" 0)
	R_MIGR["$key"]=$migr R_INVOL["$key"]=$invol R_FLAG["$key"]=$flag
	log "run $key: $(fmt "$dt" 3) s, ${R_MPPS[$key]} Mpps, ${R_CPP[$key]} cycles/frame (cpu ${R_CCPP[$key]}), worker CPU ${R_CPU[$key]} %," \
	    "migrations $migr, involuntary switches $invol; affinity: $aff${flag:+; FLAGGED: a worker had < $FLAG_CPU % of its CPU}"
}

# ---------------------------------------------------------------- 1. comparison
failed=0 ok=0
if [ "$RUNS" -ge 1 ]; then
	for wl in $WORKLOADS; do
		write_config "$TMP/cfg/$wl-floating.json" "$wl" "$FLOAT_CPUS" float:1
		write_config "$TMP/cfg/$wl-pinned.json" "$wl" "$FLOAT_CPUS" "$CPU"
	done
	log "comparison: $PKT_SIZE B, burst $BURST, busy_poll, eal.cpus \"$FLOAT_CPUS\"; floating: no workers.cpus;" \
	    "pinned: workers.cpus [$CPU], housekeeping (eal.cpus less the worker's) $PIN_HK;" \
	    "workloads {$WORKLOADS}, $RUNS pairs each, ${DURATION} s measured after ${WARMUP} s per run"
	nwl=$(wc -w <<<"$WORKLOADS") nscale=$(( SCALE == 1 ? ${#SCALE_CPUS[@]} * SCALE_RUNS : 0 ))
	est=$(( (2 * RUNS * nwl + nscale) * (DURATION + WARMUP + 3) )) # + ~3 s per run to start and stop spanbox
	log "plan: $((2 * RUNS * nwl)) comparison runs + $nscale scaling runs, estimated $((est / 60)) min $((est % 60)) s"
	for (( r = 1; r <= RUNS; r++ )); do
		for wl in $WORKLOADS; do
			if (( r % 2 )); then order="floating pinned"; else order="pinned floating"; fi
			for lay in $order; do
				if [ "$lay" = pinned ]; then pin=$CPU hk=$PIN_HK; else pin="" hk=$FLOAT_CPUS; fi
				if run_one "$wl-$lay-$r" "$TMP/cfg/$wl-$lay.json" "$pin" "$hk"; then ok=$((ok + 1)); else failed=$((failed + 1)); fi
			done
		done
	done
fi

# ---------------------------------------------------------------- 2. scaling
if [ "$SCALE" = 1 ]; then
	log "scaling: N pinned workers on CPUs ${SCALE_CPUS[*]} (the first N), housekeeping CPU $HK_CPU, forwarding $PKT_SIZE B," \
	    "$SCALE_RUNS run(s) per N"
	for (( n = 1; n <= ${#SCALE_CPUS[@]}; n++ )); do
		wc="${SCALE_CPUS[*]:0:n}"
		write_config "$TMP/cfg/scale-$n.json" forward "$(cpulist "$HK_CPU,$(tr ' ' ',' <<<"$wc")")" "$wc"
		for (( r = 1; r <= SCALE_RUNS; r++ )); do
			if run_one "scale-$n-$r" "$TMP/cfg/scale-$n.json" "$wc" "$HK_CPU"; then ok=$((ok + 1)); else failed=$((failed + 1)); fi
		done
	done
fi
[ "$ok" -gt 0 ] || die "no run succeeded ($failed failed)"

# ---------------------------------------------------------------- report
echo
[ "$failed" -gt 0 ] && echo "# WARNING: $failed runs failed (see the messages above) and are left out"
for wl in $( [ "$RUNS" -ge 1 ] && echo "$WORKLOADS"); do
	echo
	echo "### $wl, $PKT_SIZE B: floating (every thread on eal.cpus \"$FLOAT_CPUS\") vs pinned (worker alone on CPU $CPU)"
	echo
	echo "| pair | first | floating Mpps | cycles/frame (cpu) | CPU % | migr / invol | pinned Mpps | cycles/frame (cpu) | CPU % | migr / invol | pinned / floating |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	fm=() pm=() fc=() pc=() pairs=() clean=()
	for (( r = 1; r <= RUNS; r++ )); do
		f="$wl-floating-$r" p="$wl-pinned-$r"
		row="| $r | $( (( r % 2 )) && echo floating || echo pinned ) |"
		for k in "$f" "$p"; do
			if [ -n "${R_MPPS[$k]:-}" ]; then
				row+=" ${R_MPPS[$k]}${R_FLAG[$k]} | ${R_CPP[$k]} (${R_CCPP[$k]}) | ${R_CPU[$k]} | ${R_MIGR[$k]} / ${R_INVOL[$k]} |"
			else row+=" fail | | | |"; fi
		done
		[ -n "${R_MPPS[$f]:-}" ] && fm+=("${R_MPPS[$f]}") fc+=("${R_CPP[$f]}")
		[ -n "${R_MPPS[$p]:-}" ] && pm+=("${R_MPPS[$p]}") pc+=("${R_CPP[$p]}")
		q=-
		if [ -n "${R_MPPS[$f]:-}" ] && [ -n "${R_MPPS[$p]:-}" ]; then
			q=$(fmt "${R_MPPS[$p]} / ${R_MPPS[$f]}" 3)
			pairs+=("$q")
			[ -z "${R_FLAG[$f]}${R_FLAG[$p]}" ] && clean+=("$q")
		fi
		echo "$row $q |"
	done
	echo
	[ ${#fm[@]} -gt 0 ] && [ ${#pm[@]} -gt 0 ] || { echo "$wl: no successful run of a layout"; continue; }
	echo "$wl: floating median $(fmt "$(median "${fm[@]}")" 2) Mpps ($(fmt "$(median "${fc[@]}")" 1) cycles/frame)," \
	     "pinned median $(fmt "$(median "${pm[@]}")" 2) Mpps ($(fmt "$(median "${pc[@]}")" 1) cycles/frame)"
	[ ${#pairs[@]} -gt 0 ] && echo "$wl: paired ratios pinned/floating: ${pairs[*]}"
	if [ ${#clean[@]} -gt 0 ]; then
		lo=$(printf '%s\n' "${clean[@]}" | sort -g | head -1) hi=$(printf '%s\n' "${clean[@]}" | sort -g | tail -1)
		echo "$wl: median of ${#clean[@]} paired ratios pinned/floating $(fmt "$(median "${clean[@]}")" 3) (min $lo, max $hi), flagged pairs left out"
	fi
	[ ${#clean[@]} -lt "$MIN_PAIRS" ] &&
		echo "$wl: INCONCLUSIVE: ${#clean[@]} clean pairs, $MIN_PAIRS needed before the median says more than the noise (RUNS=$MIN_PAIRS or more)"
done

if [ "$SCALE" = 1 ]; then
	echo
	echo "### scaling: N pinned workers, housekeeping CPU $HK_CPU, forwarding $PKT_SIZE B$( [ "$SCALE_RUNS" -gt 1 ] && echo ", the run with the median total of $SCALE_RUNS")"
	echo
	echo "| N | workers' CPUs | per worker Mpps (CPU %) | total Mpps | cycles/frame per worker | total / (N x N=1) |"
	echo "|---|---|---|---|---|---|"
	one=""
	for (( n = 1; n <= ${#SCALE_CPUS[@]}; n++ )); do
		# the run whose total is the median (the lower middle one with an even count)
		best=$(for (( r = 1; r <= SCALE_RUNS; r++ )); do [ -n "${R_MPPS[scale-$n-$r]:-}" ] && echo "${R_MPPS[scale-$n-$r]} $r"; done |
			sort -g | awk '{ a[NR] = $2 } END { if (NR) print a[int((NR + 1) / 2)] }')
		if [ -z "$best" ]; then echo "| $n | ${SCALE_CPUS[*]:0:n} | fail | | | |"; continue; fi
		k="scale-$n-$best" per=""
		for (( w = 0; w < n; w++ )); do per+="${per:+, }w$w ${R_WMPPS[$k,$w]} (${R_WCPU[$k,$w]})"; done
		[ "$n" = 1 ] && one=${R_MPPS[$k]}
		eff=-
		[ -n "$one" ] && eff=$(fmt "${R_MPPS[$k]} / ($n * $one)" 3)
		echo "| $n | ${SCALE_CPUS[*]:0:n} | $per | ${R_MPPS[$k]}${R_FLAG[$k]} | ${R_CPP[$k]} | $eff |"
	done
	[ ${#SCALE_CPUS[@]} -eq 1 ] && echo && echo "# $ncpu CPUs here: one housekeeping CPU and N = 1 only; on a machine of C CPUs the same command prints N = 1 .. min(C - 1, $MAX_WORKERS)"
fi
echo
echo "\"*\": a worker had less than $FLAG_CPU % of its CPU during the window; cycles/frame = N x tsc_hz x dt / frames,"
echo "(cpu) = tsc_hz x CPU time the workers got / frames; migr / invol: CPU migrations / involuntary switches of the polling thread(s) in the window"
exit 0
