#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/dumpcap.sh - what dpdk-dumpcap records from a spanbox port, and what forwarding costs
# while it runs (docs/BENCHMARKS.md "dpdk-dumpcap").
#
# One worker (busy_poll, CPU $CPU) forwards net_null0 (frames of SIZE bytes) to net_null1; the
# primary sleeps on the same CPU. dpdk-dumpcap (CPU $DC_CPU, taskset) captures net_null1, i.e. the
# worker's TX callbacks (docs/CAPTURE.md), into a file on tmpfs ($OUTDIR). The source is not paced:
# the worker offers every frame it forwards, dumpcap's ring fills, and what dumpcap writes per
# second is its drain rate at saturation (the rate it records without loss on paced traffic:
# bench/capture_paced.sh). A row whose dumpcap ended before its window (the -a backstops) is
# marked "ended early": its per-second figures are not valid.
# For each size in SIZES, RUNS times: DURATION s of forwarding without a capture (Mpps), then
# dumpcap started, and once the primary lists its capture (/spanbox/pdump) DURATION s measured
# before its SIGINT: the workers' copy counters over that window (/spanbox/ports pdump_*: offered
# = copies made + copies without an mbuf, recorded = copies the ring took, lost = ring full + no
# mbuf), Mpps forwarded meanwhile (the workers' tx_packets on net_null1, telemetry), the worker's
# busy cycles per forwarded frame in both windows, and the records in the file against the copies
# made over the capture's whole life.
#
# Run as root: bench/dumpcap.sh   (about SIZES x RUNS x (2 DURATION + 6) s)
# Environment: SIZES [64 1518], RUNS [3], DURATION [3], CPU [1], DC_CPU [0], OUTDIR [/dev/shm/dc-bench],
#   PFX [dc-bench], lcores 59 (primary), 63 (mgmt, not started), 64 (worker); BUILD [repo/build]
set -u
SIZES=${SIZES:-64 1518}
RUNS=${RUNS:-3}
DURATION=${DURATION:-3}
CPU=${CPU:-1}
DC_CPU=${DC_CPU:-0}
OUTDIR=${OUTDIR:-/dev/shm/dc-bench}
PFX=${PFX:-dc-bench}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
source "$ROOT/lib/instance.sh"

[ "$(id -u)" -eq 0 ] || { echo "dumpcap.sh: run as root" >&2; exit 1; }
TMP=$(mktemp -d /tmp/dc-bench.XXXXXX)
mkdir -p "$OUTDIR"
PID=
cleanup() { [ -n "$PID" ] && sbx_stop_pid "$PID" 10; rm -rf "$TMP" "$OUTDIR"; }
trap cleanup EXIT
trap 'exit 1' INT TERM

tel() { printf '%s\n' "$@" | timeout 10 dpdk-telemetry.py -f "$PFX" 2>/dev/null | grep '^{"/'; }
# out_stats: "tx_packets busy_cycles busy_packets pdump_accepted pdump_ringfull pdump_nombuf"
out_stats() {
	local p w
	p=$(tel /spanbox/ports) w=$(tel /spanbox/workers)
	echo "$(jq -r '."/spanbox/ports".out | "\(.workers_tx_packets) \(.pdump_accepted) \(.pdump_ringfull) \(.pdump_nombuf)"' <<<"$p") $(jq -r '."/spanbox/workers"."0" | "\(.busy_cycles) \(.busy_packets)"' <<<"$w")"
}
# (exec: the background job's pid is dpdk-dumpcap's own, so its SIGINT reaches it)
dumpcap() {
	exec taskset -c "$DC_CPU" unshare -m sh -c 'mount -t tmpfs none /sys/bus/pci/devices && exec dpdk-dumpcap "$@"' \
		dumpcap --file-prefix "$PFX" "$@"
}
ms() { date +%s%N | cut -c1-13; }

echo "# $(lscpu | awk -F': *' '/^Model name/ {print $2}'), $(nproc) CPUs, kernel $(uname -r), spanbox $(git -C "$ROOT" rev-parse --short HEAD)"
echo "| size B | run | fwd Mpps, no capture | fwd Mpps, dumpcap | records/s written | offered/s | lost % | cycles/frame no capture | cycles/frame dumpcap | window ms | records in file of copies made |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for size in $SIZES; do
	jq --arg pfx "$PFX" --arg cpus "$CPU" --arg db "$TMP/b.db" --argjson size "$size" \
		'.eal.file_prefix = $pfx | .eal.cpus = $cpus | .eal.socket_mem_mb = 256 | .eal.primary_lcore = 59 | .eal.mgmt_lcore = 63
		| .workers.count = 1 | .workers.lcores = [64] | .workers.busy_poll = true | .mgmt.port = 18352 | .mgmt.database = $db
		| .ports = [{"name": "in", "devargs": ("net_null0,size=" + ($size | tostring))}, {"name": "out", "devargs": "net_null1"}]
		| .forwarding.xconnects = [["in", "out"]] | .mirrors = []' "$ROOT/config/default.json" >"$TMP/b.json"
	sbx_start_primary "$BUILD/primary/spanbox-primary" "$TMP/b.json" "$TMP/ready" "$TMP/primary.log"
	PID=$SBX_PID
	sbx_wait_ready "$PID" "$TMP/ready" 300 || { tail -20 "$TMP/primary.log" >&2; exit 1; }
	sleep 1
	for ((r = 1; r <= RUNS; r++)); do
		read -r t0 _ _ _ c0 k0 <<<"$(out_stats)"; m0=$(ms)
		sleep "$DURATION"
		read -r t1 _ _ _ c1 k1 <<<"$(out_stats)"; m1=$(ms)
		base=$(awk -v a="$t0" -v b="$t1" -v t=$((m1 - m0)) 'BEGIN { printf "%.2f", (b - a) / t / 1000 }')
		cyc0=$(awk -v a="$c0" -v b="$c1" -v x="$k0" -v y="$k1" 'BEGIN { printf "%.1f", (b - a) / (y - x) }')
		rm -f "$OUTDIR/c.pcapng"
		# a backstop: 1 GiB of file (tmpfs is memory) or DURATION + 10 s, whatever comes first
		(dumpcap -i net_null1 -w "$OUTDIR/c.pcapng" -q -a filesize:1048576 -a "duration:$((DURATION + 10))") >"$TMP/dc.out" 2>&1 &
		dc=$!
		# capturing once the primary lists the capture (dumpcap's "Capturing on" is buffered)
		for ((i = 0; i < 100; i++)); do
			tel /spanbox/pdump | jq -e "any(.\"/spanbox/pdump\"[]; .client_pid == $dc)" >/dev/null && break
			sleep 0.05
		done
		read -r t0 a0 f0 n0 c0 k0 <<<"$(out_stats)"; m0=$(ms)
		sleep "$DURATION"
		read -r t1 a1 f1 n1 c1 k1 <<<"$(out_stats)"; m1=$(ms)
		# a dumpcap that ended before the window did (its backstop) makes the window's rates wrong:
		# the counters stand still after its disable while the window runs on (docs/BENCHMARKS.md)
		early=""; kill -0 "$dc" 2>/dev/null || early=" (dumpcap ended early: rates not valid)"
		kill -INT "$dc" 2>/dev/null; wait "$dc"
		recs=$(capinfos -c -M "$OUTDIR/c.pcapng" 2>/dev/null | awk -F': *' '/Number of packets/ {print $2}')
		read -r _ at _ _ _ _ <<<"$(out_stats)" # the capture's whole life (zeroed at its enable)
		cap=$(awk -v a="$t0" -v b="$t1" -v t=$((m1 - m0)) 'BEGIN { printf "%.2f", (b - a) / t / 1000 }')
		cyc1=$(awk -v a="$c0" -v b="$c1" -v x="$k0" -v y="$k1" 'BEGIN { printf "%.1f", (b - a) / (y - x) }')
		# over the window: offered = copies made + copies that found no mbuf; recorded = copies
		# the ring took (dumpcap writes each); lost = ring full + no mbuf
		win=$((m1 - m0)) off=$(((a1 - a0) + (n1 - n0))) rec=$(((a1 - a0) - (f1 - f0))) lost=$(((f1 - f0) + (n1 - n0)))
		echo "| $size | $r | $base | $cap | $(awk -v n="$rec" -v d="$win" 'BEGIN { printf "%.0f", n * 1000 / d }') | $(awk -v n="$off" -v d="$win" 'BEGIN { printf "%.0f", n * 1000 / d }') | $(awk -v l="$lost" -v o="$off" 'BEGIN { printf "%.1f", o ? 100 * l / o : 0 }') | $cyc0 | $cyc1 | $win | ${recs:-?} of $at$early |"
		rm -f "$OUTDIR/c.pcapng"
	done
	sbx_stop_pid "$PID" 10; PID=
done
