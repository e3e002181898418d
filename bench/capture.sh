#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/capture.sh - what a capture (docs/CAPTURE.md "Recording through the API") records per
# second into a tmpfs directory, and what it costs forwarding, per frame size.
#
# Ports p0 (net_null0,size=S) and p1 (net_null1,size=S), cross-connected; one worker busy-polls
# p0 and p1 (pinned to CPU $CPU1 with taskset once it runs); the primary (and its recorder
# thread) and mgmt float on eal.cpus "0-1", so the recorder mostly gets the other CPU. net_null
# invents a frame for every RX mbuf, so the worker forwards at the rate of its CPU and the capture
# (p0 rx: half of the forwarded frames) is offered more than a recorder can write: this measures
# the recorder at saturation. Per size, two runs, DURATION s measured after WARMUP:
#   none     no capture: forwarding alone
#   capture  POST /api/v1/captures {p0 rx, a ring of 4 x 256 MiB files} into $DIR (tmpfs)
# From two GET /api/v1/status (and /captures/1) DURATION s apart: forwarded Mpps (worker
# tx_packets), cycles/pkt = tsc_hz * dt / forwarded, recorded frames/s (counters.captured),
# lost frames/s (counters.dropped: ring full, no mbuf, disk), MB/s written.
# The lossless rate of a capture is at most "recorded/s" here (the recorder is the bottleneck);
# bench/capture_paced.sh bisects it with a paced source, beside dpdk-dumpcap's.
#
# Run as root: bench/capture.sh  (2 sizes x 2 runs x (WARMUP + DURATION + ~4) s, about 1 min)
# Environment: DURATION [5], WARMUP [2], SIZES ["64 1518"], CPU1 [1], MGMT_PORT [18373],
#   DIR [/dev/shm/spanbox-capture-bench], BUILD [repo/build], KEEP_TMP [0]
set -u
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-2}
SIZES=${SIZES:-64 1518}
CPU1=${CPU1:-1}
MGMT_PORT=${MGMT_PORT:-18373}
DIR=${DIR:-/dev/shm/spanbox-capture-bench}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
KEEP_TMP=${KEEP_TMP:-0}
SBX_PREFIX=rcbench
TOKEN=rcbench-token-0123456789abcdef
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
spanbox_bins
OURS=() NAP_PID="" STARTED=0
TMP=$(mktemp -d /tmp/spanbox-capbench.XXXXXX)
cleanup() { trap - EXIT INT TERM HUP; bench_cleanup "$DIR"; }
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM HUP
need_root_and_build

status() { curl -fsS --max-time 5 "$API/status"; }
run() { # run SIZE KIND: one line of results
	local s=$1 kind=$2 cfg="$TMP/c.json" ppid mpid s0 s1 c0 c1 t0 t1 wpid
	capture_bench_config "$cfg" "73 78 74" 16383 "[{\"name\": \"p0\", \"devargs\": \"net_null0,size=$s\", \"mtu\": 1500},
		{\"name\": \"p1\", \"devargs\": \"net_null1,size=$s\", \"mtu\": 1500}]" "$DIR" 4096
	rm -rf "$DIR"
	start_spanbox "$cfg" "$TMP/$s-$kind" '.workers[0].state == "running"' || return 1
	wpid=$(status | jq -r '.workers[0].pid')
	taskset -pc "$CPU1" "$wpid" >/dev/null 2>&1
	if [ "$kind" = capture ]; then
		curl -fsS --max-time 15 -o /dev/null -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
			-d '{"sources": [{"port": "p0", "direction": "rx"}], "files": {"count": 4, "mb": 256}}' "$API/captures" ||
			{ log "POST /captures failed"; stop_ours; return 1; }
	fi
	nap "$WARMUP"
	t0=$(date +%s.%N); s0=$(status); c0=$(curl -fsS "$API/captures/1" 2>/dev/null || echo '{}')
	nap "$DURATION"
	t1=$(date +%s.%N); s1=$(status); c1=$(curl -fsS "$API/captures/1" 2>/dev/null || echo '{}')
	stop_ours
	jq -rn --argjson a "$s0" --argjson b "$s1" --argjson ca "$c0" --argjson cb "$c1" --arg dt "$(fmt "$t1 - $t0" 3)" \
		--arg s "$s" --arg k "$kind" '
		def tx(x): [x.workers[0].ports[] | .tx_packets] | add;
		($dt | tonumber) as $dt | ((tx($b) - tx($a)) / $dt) as $fwd |
		((($cb.counters.captured // 0) - ($ca.counters.captured // 0)) / $dt) as $rec |
		((($cb.counters.dropped // 0) - ($ca.counters.dropped // 0)) / $dt) as $lost |
		((($cb.counters.bytes // 0) - ($ca.counters.bytes // 0)) / $dt) as $by |
		(($b.appliance.tsc_hz // 0) / $fwd | round) as $cpp |
		"| \($s) | \($k) | \($fwd / 1000 | round / 1000) | \($cpp) | \($rec / 1000 | round / 1000) | \($lost / 1000 | round / 1000) | \($by / 1e6 | round) |"'
}
log "spanbox $(spanbox_rev); $(machine_line); DIR $DIR ($(df -h --output=fstype "$(dirname "$DIR")" | tail -1))"
echo "| frame B | run | forwarded Mpps | cycles/pkt | recorded Mpps | lost Mpps | MB/s written |"
echo "|---|---|---|---|---|---|---|"
for s in $SIZES; do
	run "$s" none
	run "$s" capture
done
