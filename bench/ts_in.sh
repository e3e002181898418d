#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/ts_in.sh - what the timestamps-in stage (ingress.timestamp, docs/INGRESS.md "Timestamps in")
# costs the worker per frame: the same frames through a port without an ingress object and with
# ingress.timestamp, side by side. Frames: the good frames of tests/lib/ts_in_gen.py (60 AVSP frames of
# every version, 50 Metamako frames, 7 with an extension; 74..250 B) repeated to FRAMES frames in a
# pcap file port (read by the primary as fast as it can, handed to the worker through rings),
# cross-connected to a pcap output. Four configurations, run in turn RUNS times, each a fresh spanbox:
#   arista_off  AVSP frames, no ingress (they go out with their header)
#   arista_on   the same, ingress.timestamp arista (header removed, time kept, offset counted)
#   mm_off      Metamako frames, no ingress
#   mm_on       the same, ingress.timestamp metamako
# The figure is the worker's cycles_per_packet_total (/status: busy_cycles / busy_packets, the cycles
# of the loops that received frames, since the start): the worker's whole per-frame cost (ring
# dequeue, checks, the stage, ring enqueue to the output), so the difference on/off is the stage's.
# Prints a TSV line per run, then the medians and their differences.
#   bench/ts_in.sh              FRAMES=300000 RUNS=3 (several minutes on a loaded 2-CPU machine)
#   E2E=0 bench/ts_in.sh        only the parsers alone (build/tests/sbx-ts-in-bench, printed first)
# Needs root and the build. Uses file prefix sbxti, lcores 63-65, API port 18931 (tests/e2e/63d's
# resources: do not run both at once; under the tests' lock: flock /tmp/sbx-e2e.lock bench/ts_in.sh).
source "$(dirname "$0")/../tests/lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/replay.sh" # ingress_xconnect_json
FRAMES=${FRAMES:-300000} RUNS=${RUNS:-3}
# first the parsers alone (build/tests/sbx-ts-in-bench: no EAL, the quickest of 64 rounds), 3 times
echo "# the parsers alone: cycles per frame without / with them (tests/tools/sbx-ts-in-bench.c)"
for ((r = 1; r <= 3; r++)); do "$BUILD/tests/sbx-ts-in-bench" | sed "1s/^/# /"; done
[ "${E2E:-1}" = 1 ] || exit 0
PORT=18931 API=http://127.0.0.1:18931/api/v1
trap 'inst_cleanup; rm -rf "$TMP"' EXIT
/usr/bin/python3 "$ROOT/tests/lib/ts_in_gen.py" "$TMP" "$(date +%s)" >/dev/null || { echo "ts_in_gen.py failed" >&2; exit 1; }
python3 - "$TMP" "$FRAMES" <<'PY'
import struct, sys
d, n = sys.argv[1], int(sys.argv[2])
for name in ("arista_good", "metamako_good"):
    raw = open("%s/%s.pcap" % (d, name), "rb").read()
    recs, off = [], 24
    while off + 16 <= len(raw):
        cap = struct.unpack_from("<I", raw, off + 8)[0]
        recs.append(raw[off:off + 16 + cap])
        off += 16 + cap
    with open("%s/%s_big.pcap" % (d, name), "wb") as f:
        f.write(raw[:24])
        for i in range(n):
            f.write(recs[i % len(recs)])
PY

cfg() { # cfg INPUT INGRESS_JSON
	ingress_xconnect_json "$TMP/b.json" sbxti "$1" "$2" "$TMP/out.pcap" \
		"\"mgmt\": {\"port\": $PORT, \"database\": \"$TMP/b.db\", \"token\": \"sbxti-bench-token-0123456789\"}"
}
done_rx() { [ "$(curl -fsS --max-time 2 "$API/status" | jq '.ports[] | select(.name == "p0") | .workers.rx_packets')" = "$FRAMES" ]; }

declare -A cpp
echo "# spanbox $(git -C "$ROOT" rev-parse --short HEAD); $(lscpu | awk -F': *' '/^Model name/ {print $2}'), $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $FRAMES frames per run, $RUNS runs of each configuration"
printf 'run\tconfig\tframes_out\tcycles_per_packet\n'
for ((r = 1; r <= RUNS; r++)); do
	for c in arista_off arista_on mm_off mm_on; do
		case $c in
		arista_off) cfg "$TMP/arista_good_big.pcap" '{}' ;;
		arista_on) cfg "$TMP/arista_good_big.pcap" '{"timestamp": {"format": "arista"}}' ;;
		mm_off) cfg "$TMP/metamako_good_big.pcap" '{}' ;;
		mm_on) cfg "$TMP/metamako_good_big.pcap" '{"timestamp": {"format": "metamako"}}' ;;
		esac
		rm -f "$TMP/out.pcap" "$TMP/b.db"*
		inst_start_primary b "$TMP/b.json" >/dev/null
		inst_start_mgmt b "$TMP/b.json" "$API" >/dev/null
		wait_for 1200 done_rx
		sleep 1
		st=$(curl -fsS "$API/status")
		v=$(jq '.workers[0].cycles_per_packet_total' <<<"$st")
		o=$(jq '.ports[] | select(.name == "p1") | .workers.tx_packets' <<<"$st")
		printf '%d\t%s\t%s\t%s\n' "$r" "$c" "$o" "$v"
		cpp[$c]="${cpp[$c]:-} $v"
		inst_cleanup
	done
done
med() { printf '%s\n' $1 | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
for f in arista mm; do
	off=$(med "${cpp[${f}_off]}") on=$(med "${cpp[${f}_on]}")
	echo "# $f: median cycles/frame without the stage $off, with it $on: $(awk -v a="$on" -v b="$off" 'BEGIN {printf "%+.1f", a - b}') cycles/frame"
done
