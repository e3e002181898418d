#!/usr/bin/env bash
# The benches' ring generator (tests/tools/sbx-ringgen.c, docs/BENCHMARKS.md "An input faster than
# the worker"): a DPDK secondary of a running appliance that enqueues a pcap file's frames, as mbufs
# of the appliance's pool, into the RX ring of its net_ring port.
#  - an appliance with a net_ring input cross-connected to a pcap tx port; the generator sends
#    --count 1000 frames of a known pcap (1000 frames of 60-1514 B, each different);
#  - the tx pcap holds exactly those frames, byte for byte, in order (tests/lib/pcap_equal.py), the
#    generator's line says 1000 enqueued, the worker's rx_packets on the input and tx_packets on the output 1000;
#  - the pool's in_use back to what it was before (the worker's TX freed every mbuf it was given);
#  - a second generator on the first one's lcore id is refused naming the lcore (lcore_lock.h),
#    a --dev without such a ring names the ring, and SIGTERM stops a --seconds 30 run at once with
#    its line.
# Own resources: file prefix t79ring, lcores 115 (primary) 116 (mgmt) 117 (worker) 119 (generator),
# API port 18790.
set -uo pipefail
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
GEN="$BUILD/tests/sbx-ringgen"
PFX=t79ring
API=http://127.0.0.1:18790/api/v1
GEN_PID=""
trap '[ -n "$GEN_PID" ] && kill "$GEN_PID" 2>/dev/null; inst_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
[ -x "$GEN" ] || { not_ok "$GEN built"; exit 1; }

# 1000 Ethernet/IPv4/UDP frames, lengths 60..1514 and payloads that differ in every frame
"$PY" - "$TMP/in.pcap" <<'PY'
import struct, sys
out = open(sys.argv[1], 'wb')
out.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
for i in range(1000):
    n = 60 + (i * 37) % 1455
    eth = bytes.fromhex('020000000002' '020000000001' '0800')
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, n - 14, i, 0, 64, 17, 0, bytes([10, 0, i >> 8, i & 255]),
                     bytes([10, 1, 0, 1]))
    udp = struct.pack('!HHHH', 1024 + i, 4789, n - 34, 0)
    body = bytes((i * 7 + k) & 255 for k in range(n - 42))
    f = eth + ip + udp + body
    out.write(struct.pack('<IIII', 1000 + i, 0, len(f), len(f)) + f)
PY

jq -n --arg tmp "$TMP" --arg pfx "$PFX" '{
  eal: {file_prefix: $pfx, socket_mem_mb: 256, primary_lcore: 115, mgmt_lcore: 116},
  ports: [{name: "in", devargs: "net_ring0"}, {name: "out", devargs: ("net_pcap0,tx_pcap=" + $tmp + "/out.pcap")}],
  workers: {count: 1, lcores: [117], standby: 0, queues: [[{port: "in", queue: 0}]]},
  forwarding: {xconnects: [["in", "out"]]},
  mgmt: {listen: "127.0.0.1", port: 18790, database: ($tmp + "/db"), token: "t79ring-token-0123456789abcdef"}}' >"$TMP/cfg.json"
inst_start_both ring "$TMP/cfg.json" "$API" || exit 0
st() { curl -fsS -m 5 "$API/status"; }
wait_for 100 cond '[ "$(st | jq -r ".workers[0].state")" = running ]'
in_use() { st | jq '[.pools[].in_use] | add'; }
sleep 0.3
before=$(in_use)

start=$(date +%s.%N)
timeout 30 "$GEN" --prefix "$PFX" --lcore 119 --cpu 0 --dev net_ring0 --pcap "$TMP/in.pcap" --count 1000 \
	>"$TMP/gen.out" 2>"$TMP/gen.err"
rc=$?
echo "# $(cat "$TMP/gen.out") (exit $rc, $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}') s with EAL)"
sed 's/^/# stderr: /' "$TMP/gen.err" | head -5
check "the generator exits 0 and says it enqueued 1000 frames" \
	cond '[ $rc = 0 ] && grep -q "^sbx-ringgen: enqueued 1000 frames in " "$TMP/gen.out"'
tx() { st | jq '.workers[0].ports.out.tx_packets // 0'; }
wait_for 100 cond '[ "$(tx)" -ge 1000 ]'
sleep 0.5 # anything beyond 1000 would show now
s=$(st)
rx_in=$(jq '[.workers[0].ports.in.rx_packets] | add // 0' <<<"$s")
tx_out=$(jq '.workers[0].ports.out.tx_packets // 0' <<<"$s")
echo "# worker: in rx_packets $rx_in, out tx_packets $tx_out"
check "1000 frames in and 1000 out (the worker's rx_packets on in, tx_packets on out)" cond '[ "$rx_in" = 1000 ] && [ "$tx_out" = 1000 ]'
sleep 0.3
after=$(in_use)
cp "$TMP/out.pcap" "$TMP/out1.pcap" # flushed every 100 ms; the next generators add frames to out.pcap
check "the pool's in_use back to before ($before -> $after): the worker's TX freed what the generator allocated" \
	[ "$after" = "$before" ]

# errors: the lcore id of a running generator; a net_ring device that does not exist; SIGTERM
"$GEN" --prefix "$PFX" --lcore 119 --cpu 0 --dev net_ring0 --pcap "$TMP/in.pcap" --seconds 30 >"$TMP/g1.out" 2>"$TMP/g1.err" &
GEN_PID=$!
wait_for 50 cond '[ -f /var/run/dpdk/$PFX/spanbox_lcore_119.lock ]' && sleep 1
"$GEN" --prefix "$PFX" --lcore 119 --cpu 0 --dev net_ring0 --pcap "$TMP/in.pcap" --count 10 >/dev/null 2>"$TMP/g2.err"
rc2=$?
check "a second generator on lcore 119 is refused naming the lcore (exit $rc2: $(head -c 160 "$TMP/g2.err"))" \
	cond '[ $rc2 = 1 ] && grep -q "lcore 119" "$TMP/g2.err"'
t0=$(date +%s.%N)
kill -TERM "$GEN_PID"; wait "$GEN_PID"; rc1=$?; GEN_PID=""
dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.2f", b - a}')
echo "# $(cat "$TMP/g1.out")"
check "SIGTERM stops a --seconds 30 run in ${dt} s (< 5) with exit 0 and its line" \
	cond '[ $rc1 = 0 ] && awk -v d="$dt" "BEGIN {exit !(d < 5)}" && grep -q "^sbx-ringgen: enqueued [0-9]* frames" "$TMP/g1.out"'
"$GEN" --prefix "$PFX" --lcore 119 --cpu 0 --dev net_ring9 --pcap "$TMP/in.pcap" --count 10 >/dev/null 2>"$TMP/g3.err"
rc3=$?
check "a --dev without a ring is refused naming ETH_RXTX0_net_ring9 (exit $rc3)" \
	cond '[ $rc3 = 1 ] && grep -q "ETH_RXTX0_net_ring9" "$TMP/g3.err"'

check "out.pcap (as it was after the 1000 frames) holds the frames of in.pcap, byte for byte, in order" \
	"$PY" "$ROOT/tests/lib/pcap_equal.py" "$TMP/in.pcap" "$TMP/out1.pcap"
