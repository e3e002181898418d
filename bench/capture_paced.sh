#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/capture_paced.sh - the highest rate a capture records WITHOUT LOSS into tmpfs, for
# spanbox's recorder (POST /api/v1/captures) and for dpdk-dumpcap, on the same paced traffic, and
# what forwarding costs meanwhile (docs/BENCHMARKS.md "Lossless capture rate").
#
# Traffic: a pcap file of N frames of SIZE bytes (made here, in tmpfs) is the input of a pcap file
# port "in" (spanbox's own, docs/PCAP_SECONDARY.md) read at pps=RATE; the worker forwards it to
# "out" (net_null1,no-rx=1: it sends and never invents frames). The pacer is the primary's main
# thread (pcap_next_ex, a copy into an mbuf, an enqueue to the worker's ring); with
# SBX_TEST_BRIDGE_IDLE_US=20 it sleeps 20 us (plus the kernel's timer slack) between two reads, so
# the frames arrive in bursts of tens, not of a millisecond's worth (the default nap: 1000 us).
# CPUs: the worker (busy_poll) alone on CPU $CPU_FWD; the primary (pacer and recorder thread),
# mgmt and dumpcap on CPU $CPU_CAP. The pacer's CPU time is taken from the writer's CPU: the
# "pacer %" column says how much; it is the same for both tools at the same rate.
#
# A trial (TOOL, SIZE, RATE): a fresh appliance, the capture of out tx started (recorder: one
# file, stop.packets N; dumpcap: -i net_null1 -c N), then the input released. It passes when the
# file holds N frames and the counters agree: recorder captured = N, dropped = 0; dumpcap's
# copies (/spanbox/ports out pdump_accepted) = N, ringfull = nombuf = 0; the worker sent N.
# Per size and run: bisection of RATE between LO and HI (geometric, STEPS trials after HI failed),
# then a trial without capture at the rate found (forwarding's own cycles per frame).
#
# Run as root: bench/capture_paced.sh   (about SIZES x RUNS x 2 tools x (STEPS + 2) x 10 s)
# Environment: SIZES [64 1518], RUNS [2], RUN_FIRST [1] (number of the first run), TOOLS [recorder dumpcap], STEPS [5],
#   N64 [2000000], N1518 [500000] (frames a trial offers), LO64 [250000] HI64 [8000000],
#   LO1518 [50000] HI1518 [2000000] (frames/s), CPU_FWD [1], CPU_CAP [0], MGMT_PORT [18351],
#   DIR [/dev/shm/cp-bench], IDLE_US [20] (SBX_TEST_BRIDGE_IDLE_US; 1000 is the primary's default),
#   BUILD [repo/build], KEEP_TMP [0]
# Lcores 59 (primary), 63 (mgmt), 64 (worker); EAL file prefix cpbench.
set -u
SIZES=${SIZES:-64 1518}
RUNS=${RUNS:-2}
RUN_FIRST=${RUN_FIRST:-1}
TOOLS=${TOOLS:-recorder dumpcap}
STEPS=${STEPS:-5}
CPU_FWD=${CPU_FWD:-1}
CPU_CAP=${CPU_CAP:-0}
MGMT_PORT=${MGMT_PORT:-18351}
DIR=${DIR:-/dev/shm/cp-bench}
SBX_PREFIX=cpbench TOKEN=cpbench-token-0123456789abcdef
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
source "$ROOT/bench/lib.sh"
spanbox_bins
OURS=() NAP_PID="" STARTED=0 DC="" TMP=$(mktemp -d /tmp/spanbox-cpbench.XXXXXX)
cleanup() { # a dumpcap still running first: it disables its capture with the primary alive
	trap - EXIT INT TERM HUP
	[ -n "$DC" ] && alive "$DC" && kill -INT "$DC" 2>/dev/null && sleep 1
	bench_cleanup "$DIR"
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM HUP
need_root_and_build
mkdir -p "$DIR"

export SBX_TEST_BRIDGE_PAUSE_FILE="$TMP/pause" SBX_TEST_BRIDGE_IDLE_US=${IDLE_US:-20}
tel() { printf '%s\n' "$@" | timeout 10 dpdk-telemetry.py -f "$SBX_PREFIX" 2>/dev/null | grep '^{"/'; }
# busy cycles and frames of the worker: "cycles packets"
busy() { curl -fsS --max-time 5 "$API/status" | jq -r '.workers[0] | "\(.busy_cycles) \(.busy_packets)"'; }
out_tx() { curl -fsS --max-time 5 "$API/status" | jq -r '.workers[0].ports.out.tx_packets // 0'; }
# dpdk-dumpcap with the PCI bus hidden (EAL must not probe the machine's NIC), on CPU_CAP; exec:
# the background job's pid is dumpcap's own, so its SIGINT reaches it
dumpcap() {
	exec taskset -c "$CPU_CAP" unshare -m sh -c 'mount -t tmpfs none /sys/bus/pci/devices && exec dpdk-dumpcap "$@"' \
		dumpcap --file-prefix "$SBX_PREFIX" "$@"
}
# capinfos FILE: "frames packets_per_second" (0 0 when unreadable)
file_info() {
	capinfos -M -c -x "$1" 2>/dev/null | awk -F': *' '/Number of packets/ {n = $2} /Average packet rate/ {r = $2 + 0}
		END { printf "%s %.0f\n", (n == "" ? 0 : n), r }'
}

# make_input SIZE N: $DIR/in-SIZE.pcap, N UDP frames of SIZE bytes (each its own sequence number)
make_input() {
	python3 - "$1" "$2" "$DIR/in-$1.pcap" <<'PY'
import struct, sys
size, n, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
eth = bytes.fromhex('020000000002020000000001') + b'\x08\x00'
ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, size - 14, 0, 0, 64, 17, 0, bytes([198, 18, 0, 1]), bytes([198, 18, 0, 2]))
udp = struct.pack('!HHHH', 1024, 4789, size - 34, 0)
head, pad = eth + ip + udp, b'\0' * (size - 42 - 8)
with open(path, 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    rec = struct.pack('<IIII', 0, 0, size, size)
    for c in range(0, n, 10000):
        f.write(b''.join(rec + head + struct.pack('<Q', i) + pad for i in range(c, min(n, c + 10000))))
PY
}

# trial TOOL SIZE RATE: one line "verdict offered file_frames recorded lost sent file_pps cyc_per_frame pacer%"
trial() {
	local tool=$1 s=$2 rate=$3 n=$4 cfg="$TMP/c.json" ppid mpid wpid b0 b1 k0 k1 i sent=0 last=-1 same=0
	local rec=0 lost=0 file info fr fpps verdict
	rm -rf "$DIR/caps" "$DIR/dc.pcapng"
	touch "$TMP/pause"
	capture_bench_config "$cfg" "59 63 64" 32767 "[{\"name\": \"in\", \"devargs\": \"net_pcap0,rx_pcap=$DIR/in-$s.pcap,pps=$rate\", \"mtu\": 1500},
		{\"name\": \"out\", \"devargs\": \"net_null1,no-rx=1\", \"mtu\": 1500}]" "$DIR/caps" 8192
	start_spanbox "$cfg" "$TMP/$tool-$s-$rate" '.workers[0].state == "running"' || { echo "error"; return 1; }
	wpid=$(curl -fsS "$API/status" | jq -r '.workers[0].pid')
	taskset -a -pc "$CPU_CAP" "$ppid" >/dev/null 2>&1
	taskset -a -pc "$CPU_CAP" "$mpid" >/dev/null 2>&1
	taskset -pc "$CPU_FWD" "$wpid" >/dev/null 2>&1
	case $tool in
	recorder)
		curl -fsS --max-time 15 -o /dev/null -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
			-d "{\"sources\": [{\"port\": \"out\", \"direction\": \"tx\"}], \"stop\": {\"packets\": $n}}" "$API/captures" ||
			{ log "POST /captures failed"; stop_ours; echo "error"; return 1; } ;;
	dumpcap)
		(dumpcap -i net_null1 -w "$DIR/dc.pcapng" -q -c "$n") >"$TMP/dc.out" 2>&1 &
		DC=$!
		for ((i = 0; i < 100; i++)); do # capturing once the primary lists it (and so the worker)
			tel /spanbox/pdump | jq -e "any(.\"/spanbox/pdump\"[]; .client_pid == $DC)" >/dev/null && break
			sleep 0.1
		done ;;
	esac
	read -r b0 k0 <<<"$(busy)"
	local p0; p0=$(cpu_ticks "$ppid")
	rm -f "$TMP/pause"
	local ta; ta=$(date +%s.%N)
	nap "$(fmt "$n / $rate" 2)"
	# the input's end: the worker sent every frame (net_null TX never refuses), or nothing moves for 2 s
	for ((i = 0; i < 300 && sent < n && same < 20; i++)); do
		sent=$(out_tx); [ "$sent" = "$last" ] && same=$((same + 1)) || same=0
		last=$sent; sleep 0.1
	done
	local p1; p1=$(cpu_ticks "$ppid")
	local wall; wall=$(fmt "$(date +%s.%N) - $ta" 3)
	read -r b1 k1 <<<"$(busy)"
	case $tool in
	recorder)
		for ((i = 0; i < 50; i++)); do # the recorder ends the capture at N frames written
			curl -fsS "$API/captures/1" >"$TMP/cap.json" 2>/dev/null && jq -e '.state | startswith("ended")' "$TMP/cap.json" >/dev/null && break
			sleep 0.1
		done
		rec=$(jq -r '.counters.captured // 0' "$TMP/cap.json") lost=$(jq -r '.counters.dropped // 0' "$TMP/cap.json")
		file=$(ls "$DIR/caps/1/"*.pcapng 2>/dev/null | head -1) ;;
	dumpcap)
		for ((i = 0; i < 30 && $(alive "$DC" && echo 1 || echo 0); i++)); do sleep 0.1; done # -c N: it ends
		alive "$DC" && kill -INT "$DC"
		wait "$DC" 2>/dev/null; DC=""
		read -r acc rf nb <<<"$(tel /spanbox/ports | jq -r '."/spanbox/ports".out | "\(.pdump_accepted) \(.pdump_ringfull) \(.pdump_nombuf)"')"
		rec=$((acc - rf)) lost=$((rf + nb))
		file="$DIR/dc.pcapng" ;;
	none) rec=0 lost=0 file="" ;;
	esac
	info=$( [ -n "$file" ] && file_info "$file" || echo "0 0")
	read -r fr fpps <<<"$info"
	stop_ours
	rm -rf "$DIR/caps" "$DIR/dc.pcapng"
	verdict=pass
	if [ "$tool" = none ]; then
		[ "$sent" = "$n" ] || verdict=fail
	elif [ "$fr" != "$n" ] || [ "$rec" != "$n" ] || [ "$lost" != 0 ] || [ "$sent" != "$n" ]; then
		verdict=fail
	fi
	echo "$verdict $n $fr $rec $lost $sent $fpps $(awk -v a="$b0" -v b="$b1" -v x="$k0" -v y="$k1" 'BEGIN { printf "%.1f", (y - x > 0) ? (b - a) / (y - x) : 0 }') $(awk -v t=$((p1 - p0)) -v hz="$CLK_TCK" -v w="$wall" 'BEGIN { printf "%.0f", 100 * t / hz / w }')"
}

log "spanbox $(spanbox_rev); $(machine_line); $(dpdk-dumpcap -v 2>/dev/null | head -1); DIR $DIR ($(df --output=fstype "$DIR" | tail -1))"
echo "| size B | run | tool | rate offered/s | verdict | frames offered | frames in file | recorded (counters) | lost (counters) | sent by the worker | rate in the file /s | worker cycles/frame | pacer+primary CPU % |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
row() { # row SIZE RUN TOOL RATE: one trial, one table line; the verdict in VERDICT
	local out
	out=$(trial "$3" "$1" "$4" "$N")
	VERDICT=${out%% *}
	echo "| $1 | $2 | $3 | $4 | ${out// / | } |" | sed 's/| \(pass\|fail\|error\) | /| \1 | /'
}
for s in $SIZES; do
	eval "N=\${N$s:-\$([ $s -le 256 ] && echo 2000000 || echo 500000)}"
	eval "LO=\${LO$s:-\$([ $s -le 256 ] && echo 250000 || echo 50000)}"
	eval "HI=\${HI$s:-\$([ $s -le 256 ] && echo 8000000 || echo 2000000)}"
	make_input "$s" "$N"
	for ((r = RUN_FIRST; r < RUN_FIRST + RUNS; r++)); do
		for tool in $TOOLS; do
			lo=$LO hi=$HI
			row "$s" "$r" "$tool" "$hi"
			if [ "$VERDICT" = pass ]; then
				log "size $s run $r $tool: lossless at HI $hi (raise HI)"; lo=$hi
			else
				for ((k = 0; k < STEPS; k++)); do
					mid=$(awk -v a="$lo" -v b="$hi" 'BEGIN { printf "%.0f", sqrt(a * b) }')
					row "$s" "$r" "$tool" "$mid"
					if [ "$VERDICT" = pass ]; then lo=$mid; else hi=$mid; fi
				done
				[ "$lo" = "$LO" ] && { row "$s" "$r" "$tool" "$lo"; [ "$VERDICT" = pass ] || lo=0; }
			fi
			log "size $s run $r $tool: highest lossless rate $lo frames/s (lowest lossy $hi)"
			[ "$lo" -gt 0 ] && row "$s" "$r" none "$lo"
		done
	done
	rm -f "$DIR/in-$s.pcap"
done
