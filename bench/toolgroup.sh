#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/toolgroup.sh - what a tool group adds to mirroring (issue 13): the flow hash and the bucket
# lookup of every copy, and sending to 4 member queues instead of 1.
#
# Like bench/mirror.sh: p0 and p1 (net_null0/1,size=64) cross-connected, one worker busy-polling
# queue 0 of p0 and p1 on CPU $CPU1 (everything else floats there too), one SPAN session with
# sources p0 rx and p1 rx: every forwarded frame is mirrored once. Two configurations:
#   port     destination {"port": "m0"}             (net_null2: frees what it is given)
#   group4   destination {"group": "g"}, members m0..m3 (four net_null ports; MEMBERS=1 keeps m0
#            only: the hash and the bucket lookup without the spread over four TX queues)
# run in RUNS pairs (port then group4, group4 then port, ...: ABBA, so that a drift within a pair
# favours neither), each run a fresh spanbox, DURATION s measured after WARMUP s. Per run, from two GET /api/v1/status: cycles/pkt = tsc_hz * dt / fwd
# (the worker busy-polls, so its core is busy all the time) and, beside it, cycles/pkt by the CPU
# time the worker got (tsc_hz * CPU s / fwd: less disturbed when something else ran on its CPU).
# The result: the medians, their difference, the difference of each pair and the median of those
# (the cost of the group per mirrored frame, what the 10-cycle target is checked against, by CPU
# time: the machine's speed drifts between series by as much as the difference, a pair's two runs
# are close in time), and the group's spread (member packets).
#
# Run as root: bench/toolgroup.sh   (defaults: 2 x 5 runs x ~10 s = about 2 minutes)
# Environment: DURATION [5], WARMUP [2], RUNS [5], MEMBERS [4] (1..4), SIZE [64], BURST [32], CPU1 [1],
#   MGMT_PORT [18319], BUILD [repo/build], KEEP_TMP [0]
set -u
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-2}
RUNS=${RUNS:-5}
MEMBERS=${MEMBERS:-4}
SIZE=${SIZE:-64}
BURST=${BURST:-32}
CPU1=${CPU1:-1}
MGMT_PORT=${MGMT_PORT:-18319}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
KEEP_TMP=${KEEP_TMP:-0}
SBX_PREFIX=tgbench
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
spanbox_bins
OURS=()
NAP_PID=""
STARTED=0
TMP=$(mktemp -d /tmp/spanbox-tgbench.XXXXXX)
cleanup() {
	[ -n "$NAP_PID" ] && kill "$NAP_PID" 2>/dev/null
	stop_ours
	[ "$STARTED" = 1 ] && remove_prefix_files "$SBX_PREFIX"
	[ "$KEEP_TMP" = 1 ] && echo "# kept $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
[ "$(id -u)" = 0 ] || die "run as root"
[[ "$MEMBERS" =~ ^[1-4]$ ]] || die "MEMBERS must be 1..4"
[ -x "$PRIMARY" ] && [ -x "$MGMT" ] || die "build first (ninja -C $BUILD)"

# write_config FILE port|group4
write_config() {
	local dest='{ "port": "m0" }' groups=""
	if [ "$2" = group4 ]; then
		dest='{ "group": "g" }'
		groups="\"tool_groups\": [{ \"name\": \"g\", \"members\": $(jq -cn --argjson n "$MEMBERS" '[range($n)] | map("m\(.)")') }],"
	fi
	cat >"$1" <<JSON
{
  "eal": { "file_prefix": "$SBX_PREFIX", "socket_mem_mb": 256, "primary_lcore": 10, "mgmt_lcore": 12, "cpus": "$CPU1" },
  "pool": { "mbufs": 0, "cache": 256 },
  "ports": [
    { "name": "p0", "devargs": "net_null0,size=$SIZE", "rx_desc": 1024, "tx_desc": 1024 },
    { "name": "p1", "devargs": "net_null1,size=$SIZE", "rx_desc": 1024, "tx_desc": 1024 },
    { "name": "m0", "devargs": "net_null2", "rx_desc": 1024, "tx_desc": 1024 },
    { "name": "m1", "devargs": "net_null3", "rx_desc": 1024, "tx_desc": 1024 },
    { "name": "m2", "devargs": "net_null4", "rx_desc": 1024, "tx_desc": 1024 },
    { "name": "m3", "devargs": "net_null5", "rx_desc": 1024, "tx_desc": 1024 }
  ],
  "workers": { "count": 1, "lcores": [11], "burst": $BURST, "busy_poll": true,
               "queues": [[{ "port": "p0", "queue": 0 }, { "port": "p1", "queue": 0 }]] },
  "forwarding": { "xconnects": [["p0", "p1"]] },
  $groups
  "mirrors": [{ "id": 1, "name": "bench", "sources": [{ "port": "p0", "direction": "rx" }, { "port": "p1", "direction": "rx" }],
                "destination": $dest, "copy": { "strategy": "copy" } }],
  "mgmt": { "listen": "127.0.0.1", "port": $MGMT_PORT, "database": "$TMP/spanbox.db" }
}
JSON
}

declare -A CPP CCPP
run_one() { # run_one KIND RUN
	local kind=$1 r=$2 log="$TMP/run.$1.$2" ppid mpid wpid t1 t2 c1 c2 fwd mir tsc dt
	rm -f "$TMP/spanbox.db"*
	start_spanbox "$TMP/$kind.json" "$log" '.appliance.state == "up" and ([.workers[].state] | all(. == "running"))' ||
		return 1
	wpid=$(jq '.workers[0].pid' "$log.s0.json")
	tsc=$(jq '.appliance.tsc_hz' "$log.s0.json")
	measure_window "$wpid" "$log"
	c1=$M_C1 c2=$M_C2 t1=$M_T1 t2=$M_T2
	stop_pid "$mpid" 10
	stop_pid "$ppid" 15
	OURS=()
	dt=$(awk -v a="$t1" -v b="$t2" 'BEGIN { print b - a }')
	fwd=$(jq -n --slurpfile a "$log.s1.json" --slurpfile b "$log.s2.json" '[$b[0].ports[].workers.tx_packets] | add - ([$a[0].ports[] | select(.name == "p0" or .name == "p1") | .workers.tx_packets] | add) - ([$b[0].ports[] | select(.name != "p0" and .name != "p1") | .workers.tx_packets] | add)')
	mir=$(jq -n --slurpfile a "$log.s1.json" --slurpfile b "$log.s2.json" '$b[0].mirrors[0].counters.mirrored_packets - $a[0].mirrors[0].counters.mirrored_packets')
	[ "$fwd" -gt 0 ] || { echo "toolgroup.sh: $kind run $r forwarded nothing" >&2; return 1; }
	CPP[$kind,$r]=$(fmt "$tsc * $dt / $fwd" 1)
	CCPP[$kind,$r]=$(fmt "$tsc * ($c2 - $c1) / $CLK_TCK / $fwd" 1)
	local spread=""
	[ "$kind" = group4 ] && spread=$(jq -c '[.tool_groups[0].members[].packets]' "$log.s2.json")
	echo "| $kind | $r | $(fmt "$fwd / $dt / 1e6" 2) | $(fmt "$mir / $dt / 1e6" 2) | ${CPP[$kind,$r]} | ${CCPP[$kind,$r]} | $(fmt "100 * ($c2 - $c1) / $CLK_TCK / $dt" 0) | $spread |"
}

write_config "$TMP/port.json" port
write_config "$TMP/group4.json" group4
echo "# spanbox $(spanbox_rev); $(machine_line)"
echo "# $SIZE B frames, 1 worker on CPU $CPU1, burst $BURST, busy_poll, SPAN copy; ${DURATION} s after ${WARMUP} s per run, $RUNS runs each"
echo "| destination | run | forwarded Mpps | mirrored Mpps | cycles/pkt | cycles/pkt by CPU time | worker CPU % | member packets |"
echo "|---|---|---|---|---|---|---|---|"
for (( r = 1; r <= RUNS; r++ )); do
	# pair r: port and group back to back, in the order port-group then group-port (ABBA), so
	# that a drift of the machine's speed within a pair does not favour one kind
	if (( r % 2 )); then
		run_one port "$r"
		run_one group4 "$r"
	else
		run_one group4 "$r"
		run_one port "$r"
	fi
done
p=() g=() pc=() gc=() d=() dc=()
for (( r = 1; r <= RUNS; r++ )); do
	[ -n "${CPP[port,$r]:-}" ] && p+=("${CPP[port,$r]}") pc+=("${CCPP[port,$r]}")
	[ -n "${CPP[group4,$r]:-}" ] && g+=("${CPP[group4,$r]}") gc+=("${CCPP[group4,$r]}")
	if [ -n "${CPP[port,$r]:-}" ] && [ -n "${CPP[group4,$r]:-}" ]; then
		d+=("$(fmt "${CPP[group4,$r]} - ${CPP[port,$r]}" 1)")
		dc+=("$(fmt "${CCPP[group4,$r]} - ${CCPP[port,$r]}" 1)")
	fi
done
[ ${#d[@]} -gt 0 ] || die "no pair of runs succeeded"
mp=$(median "${p[@]}") mg=$(median "${g[@]}") mpc=$(median "${pc[@]}") mgc=$(median "${gc[@]}")
md=$(median "${d[@]}") mdc=$(median "${dc[@]}")
echo
echo "median cycles/pkt: port $mp, group of $MEMBERS $mg: the group adds $(fmt "$mg - $mp" 1) cycles per mirrored frame"
echo "median cycles/pkt by CPU time: port $mpc, group of $MEMBERS $mgc: $(fmt "$mgc - $mpc" 1)"
echo "paired differences (group - port, run by run): ${d[*]}; by CPU time: ${dc[*]}"
echo "median of the paired differences: $md cycles per mirrored frame; by CPU time: $mdc"
awk -v d="$mdc" 'BEGIN { exit !(d > 10) }' && echo "TARGET MISSED: the group adds more than 10 cycles per mirrored frame"
exit 0
