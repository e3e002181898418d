#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/timestamps.sh - what a timestamp costs per mirror copy (issue #26, docs/CONFIG.md
# "mirrors" `timestamp`): the same forwarder and session with and without timestamp.format,
# side by side.
#
# The setup of bench/mirror.sh: ports p0 and p1 (net_null,size=S: a frame of S bytes for every
# mbuf, freed on TX) cross-connected, and "mirror" (net_null2, never refuses); one busy-polling
# worker alone on CPU $CPU1 (housekeeping on $HK_CPU); one session, sources p0 rx + p1 rx, so
# that every forwarded frame is mirrored exactly once, copy strategy adaptive 512 (the default:
# 64 B copied, 1518 B shared). Configurations, for each size S in $SIZES:
#   none                 no session: plain forwarding
#   E                    session with encapsulation E (span or erspan2), no timestamp
#   E+arista64           the same with "timestamp": {"format": "arista64"}
#   E+metamako           the same with "timestamp": {"format": "metamako"}
# for E in $ENCAPS. The RUNS repetitions of a size go round-robin over the configurations (load
# that comes and goes hits them alike); a cell is the median. cycles/pkt = tsc_hz * CPU seconds
# the worker got / frames forwarded (busy_poll, net_null never runs dry: the worker spends all
# its CPU time forwarding; by CPU time, not wall time, as on a shared machine the worker does not
# get its whole CPU), i.e. the cost of one forwarded frame with its copy; the cost of a timestamp
# per copy is the difference of E+format and E. The detail also gives cycles/pkt by wall time. Output: the detail of every run, a markdown table, the checks that every copy of
# a timestamped session was stamped (timestamped = mirrored) and of the copy sizes (S + 14 for
# arista64, + 16 for metamako, + 50 for erspan2).
#
# Run as root: bench/timestamps.sh     (defaults: 2 sizes x 7 configs x RUNS 2 x ~7 s = ~3.5 min)
# Environment [defaults]: DURATION [3] s measured after WARMUP [1] s; RUNS [2]; SIZES ["64 1518"];
#   ENCAPS ["span erspan2"]; FORMATS ["arista64 metamako"] ("": the sessions without timestamp only,
#   which a build without timestamps runs too: the same figures of two builds); CPU1 [1]; HK_CPU [0]; MGMT_PORT [18911]; BUILD [repo/build];
#   KEEP_TMP [0]. Lcores 36 (primary), 37 (mgmt), 38 (worker); file prefix sbxtobench.
set -u
DURATION=${DURATION:-3}
WARMUP=${WARMUP:-1}
RUNS=${RUNS:-2}
SIZES=${SIZES:-64 1518}
ENCAPS=${ENCAPS:-span erspan2}
FORMATS=${FORMATS-arista64 metamako}
CPU1=${CPU1:-1}
HK_CPU=${HK_CPU:-0}
MGMT_PORT=${MGMT_PORT:-18911}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
[ -d "$BUILD" ] && BUILD=$(cd "$BUILD" && pwd)
KEEP_TMP=${KEEP_TMP:-0}
SBX_PREFIX=sbxtobench
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
spanbox_bins
workers_bench_init

need_spanbox_bins curl jq awk
for v in DURATION WARMUP RUNS CPU1 HK_CPU MGMT_PORT; do [[ ${!v} =~ ^[0-9]+$ ]] || die "$v=${!v}: expected a whole number"; done
for s in $SIZES; do [[ $s =~ ^[0-9]+$ ]] && [ "$s" -ge 60 ] && [ "$s" -le 1518 ] || die "SIZES: $s: expected 60..1518"; done
for e in $ENCAPS; do case "$e" in span | erspan2) ;; *) die "ENCAPS: $e: expected span or erspan2" ;; esac; done
for f in $FORMATS; do case "$f" in arista64 | metamako) ;; *) die "FORMATS: $f: expected arista64 or metamako" ;; esac; done
[ "$CPU1" != "$HK_CPU" ] || die "CPU1 and HK_CPU must differ"
ss -Hltn "sport = :$MGMT_PORT" 2>/dev/null | grep -q . && die "TCP port $MGMT_PORT is in use: set MGMT_PORT"
need_hugepages 256
warn_busy
TMP=$(mktemp -d /tmp/sbxtsbench.XXXXXX)
copy_spanbox_bins
log "binaries of $BUILD (script at $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo "?")); $(machine_line)"

CONFIGS=(none)
for e in $ENCAPS; do CONFIGS+=("$e"); for f in $FORMATS; do CONFIGS+=("$e+$f"); done; done
# write_config FILE SIZE CONFIG
write_config() {
	local enc=${3%%+*} ts= mirrors=
	[[ $3 == *+* ]] && ts=${3#*+}
	if [ "$3" != none ]; then
		mirrors=$(jq -cn --arg enc "$enc" --arg ts "$ts" '[{ id: 1, name: "bench",
			sources: [{ port: "p0", direction: "rx" }, { port: "p1", direction: "rx" }],
			destination: { port: "mirror" },
			encap: (if $enc == "span" then { type: "span" } else { type: "erspan2", src_ip: "192.0.2.1",
				dst_ip: "192.0.2.2", dst_mac: "02:00:00:00:00:02" } end) }
			+ (if $ts == "" then {} else { timestamp: { format: $ts } } end)]')
	fi
	jq -n --arg pfx "$SBX_PREFIX" --argjson size "$2" --arg db "$TMP/db" --argjson port "$MGMT_PORT" \
		--arg cpus "$(cpulist "$HK_CPU,$CPU1")" --arg hk "$HK_CPU" --argjson w "$CPU1" \
		--argjson mirrors "${mirrors:-[]}" '
		{ eal: { file_prefix: $pfx, socket_mem_mb: 256, primary_lcore: 36, mgmt_lcore: 37, cpus: $cpus,
		         housekeeping_cpus: $hk },
		  pool: { mbufs: 0, cache: 256 },
		  ports: [ { name: "p0", devargs: "net_null0,size=\($size)", rx_desc: 1024, tx_desc: 1024 },
		           { name: "p1", devargs: "net_null1,size=\($size)", rx_desc: 1024, tx_desc: 1024 },
		           { name: "mirror", devargs: "net_null2", mtu: 1600, rx_desc: 1024, tx_desc: 1024 } ],
		  workers: { count: 1, lcores: [38], burst: 32, busy_poll: true, cpus: [$w],
		             queues: [[{ port: "p0", queue: 0 }, { port: "p1", queue: 0 }]] },
		  forwarding: { xconnects: [["p0", "p1"]] },
		  mgmt: { listen: "127.0.0.1", port: $port, database: $db },
		  mirrors: $mirrors }' >"$1"
	"$PRIMARY" -c "$1" --check >"$1.check" 2>&1 || { cat "$1.check" >&2; die "config refused: $1"; }
}
hdr() { case "$1" in none) echo 0 ;; *) local n=0; [[ $1 == erspan2* ]] && n=50
	[[ $1 == *arista64 ]] && n=$((n + 14)); [[ $1 == *metamako ]] && n=$((n + 16)); echo $n ;; esac; }

declare -A CPP
BAD=()
run_one() { # run_one SIZE CONFIG RUN
	local size=$1 c=$2 r=$3 cfg="$TMP/$1-$2.json" log="$TMP/run.$1-$2-$3" ppid mpid t1 t2 dt
	local w fwd rx rxb mir mirb cp sh txf nomb pid api ts0 ts1 cpu c1 c2
	rm -f "$TMP/db"*
	start_spanbox "$cfg" "$log" '.appliance.state == "up" and ([.workers[].state] | all(. == "running"))' ||
		{ KEEP_TMP=1; return 1; }
	mapfile -t WORKER_PIDS < <(jq '.workers[].pid' "$log.s0.json")
	TSC_HZ=$(jq '.appliance.tsc_hz' "$log.s0.json")
	check_pinned "$CPU1" "$HK_CPU" "$ppid" "$mpid" "${WORKER_PIDS[@]}" || { stop_ours; stop_workers; KEEP_TMP=1; return 1; }
	measure_window "${WORKER_PIDS[0]}" "$log"
	c1=$M_C1 c2=$M_C2 t1=$M_T1 t2=$M_T2
	stop_pid "$mpid" 10; stop_pid "$ppid" 15; stop_workers; OURS=()
	dt=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')
	read -r w fwd rx rxb mir mirb cp sh txf nomb pid api < <(worker_deltas "$log.s1.json" "$log.s2.json")
	[ "${fwd:-0}" -gt 0 ] || { echo "$BENCH: $size $c run $r: nothing forwarded" >&2; KEEP_TMP=1; return 1; }
	ts0=$(jq '.mirrors[0].workers[0].timestamped // 0' "$log.s1.json"); ts1=$(jq '.mirrors[0].workers[0].timestamped // 0' "$log.s2.json")
	cpu=$(awk -v a="$c1" -v b="$c2" -v t="$dt" -v k="$CLK_TCK" 'BEGIN { printf "%.0f", (b - a) / k / t * 100 }')
	CPP["$size,$c,$r"]=$(fmt "$TSC_HZ * ($c2 - $c1) / $CLK_TCK / $fwd" 1)
	if [ "$c" != none ]; then
		[ "$(fmt "$mirb / ($mir > 0 ? $mir : 1)" 1)" = "$((size + $(hdr "$c"))).0" ] ||
			BAD+=("$size $c run $r: mirrored_bytes/mirrored = $(fmt "$mirb / ($mir > 0 ? $mir : 1)" 1), expected $((size + $(hdr "$c")))")
		# a snapshot reads the counters while the worker writes them, and copies are counted when
		# made, mirrored when sent: equal within 256
		if [[ $c == *+* ]] && ! [ $((ts1 - ts0 - cp - sh)) -le 256 -a $((cp + sh - ts1 + ts0)) -le 256 ]; then
			BAD+=("$size $c run $r: timestamped $((ts1 - ts0)) != copied + shared $((cp + sh))")
		fi
		[ $((cp + sh - mir)) -le 256 ] && [ $((mir - cp - sh)) -le 256 ] ||
			BAD+=("$size $c run $r: copied + shared $((cp + sh)), mirrored $mir")
	fi
	echo "| $size | $c | $r | $(fmt "$fwd / $dt / 1e6" 2) | ${CPP[$size,$c,$r]} | $(fmt "$TSC_HZ * $dt / $fwd" 1) | $cp | $sh | $((ts1 - ts0)) | $((txf + nomb)) | $cpu |"
}

# the cost of one copy outside the forwarder (the worker's own copy code in a loop on one core):
# less disturbed by other load than the forwarder's rate below
if [ -n "$FORMATS" ]; then
	"$WORKER" --calibrate --timestamps 2>&1 | sed 's/^/# /'
	echo
fi
log "one worker on CPU $CPU1, housekeeping on $HK_CPU; net_null frames; adaptive 512; ${DURATION} s after ${WARMUP} s per run; RUNS=$RUNS"
echo "| size | config | run | Mpps fwd | cycles/pkt (CPU time) | cycles/pkt (wall) | copied | shared | timestamped | dropped | CPU % |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for size in $SIZES; do
	for c in "${CONFIGS[@]}"; do write_config "$TMP/$size-$c.json" "$size" "$c"; done
	for (( r = 1; r <= RUNS; r++ )); do
		for c in "${CONFIGS[@]}"; do run_one "$size" "$c" "$r"; done
	done
done
echo
echo "cycles per forwarded frame (each mirrored once), median of $RUNS; the timestamp's cost per copy in brackets:"
echo
printf '| size | none |'; for e in $ENCAPS; do printf ' %s |' "$e"; for f in $FORMATS; do printf ' %s |' "$e+$f"; done; done; echo
printf '|---|---|'; for e in $ENCAPS; do printf -- '---|'; for f in $FORMATS; do printf -- '---|'; done; done; echo
med() { local a=() r; for (( r = 1; r <= RUNS; r++ )); do [ -n "${CPP[$1,$2,$r]:-}" ] && a+=("${CPP[$1,$2,$r]}"); done; median "${a[@]}"; }
for size in $SIZES; do
	printf '| %s | %s |' "$size" "$(med "$size" none)"
	for e in $ENCAPS; do
		b=$(med "$size" "$e")
		printf ' %s |' "$b"
		for f in $FORMATS; do
			m=$(med "$size" "$e+$f")
			printf ' %s (%+.1f) |' "$m" "$(awk -v a="$m" -v b="$b" 'BEGIN { print a - b }')"
		done
	done
	echo
done
echo
if [ ${#BAD[@]} -eq 0 ]; then
	log "checks: copy sizes (+14 arista64, +16 metamako, +50 erspan2) and timestamped = mirrored: ok"
else
	printf '# CHECK FAILED: %s\n' "${BAD[@]}"
fi
