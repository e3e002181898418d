#!/usr/bin/env bash
# Replay: a pcap through p0 -> cross-connect -> p1 comes out byte for byte, in order.
source "$(dirname "$0")/../lib/common.sh"
IN="$CAPTURES/plain_tcpreplay_test.pcap"
N=$(capinfos -Mc "$IN" | awk '/Number of packets/ {print $NF}')

replay_cfg() { # replay_cfg FILE OUT WORKERS
	local lcores='[31]'
	[ "$3" = 2 ] && lcores='[31, 32]'
	cat >"$1" <<JSON
{
  "eal": {"file_prefix": "sbxreplay", "socket_mem_mb": 256, "primary_lcore": 30, "mgmt_lcore": 35},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$IN"},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$2"}
  ],
  "workers": {"count": $3, "lcores": $lcores},
  "forwarding": {"xconnects": [["p0", "p1"]]}
}
JSON
}

for workers in 1 2; do
	replay_cfg "$TMP/r$workers.json" "$TMP/out$workers.pcap" $workers
	timeout 120 "$ROOT/spanbox" replay "$TMP/r$workers.json" >"$TMP/replay$workers.log" 2>&1
	rc=$?
	cat "$TMP/replay$workers.log"
	check "replay with $workers worker(s) exits 0" [ $rc -eq 0 ]
	check "replay with $workers worker(s): p0 rx_packets = $N" \
		grep -Eq "^p0 +$N +0 +0 " "$TMP/replay$workers.log"
	check "replay with $workers worker(s): p1 tx_packets = $N" \
		grep -Eq "^p1 +0 +$N +0 " "$TMP/replay$workers.log"
	check "replay with $workers worker(s): output frames equal input, in order" \
		python3 "$ROOT/tests/lib/pcap_equal.py" "$IN" "$TMP/out$workers.pcap"
done
# Frames larger than one mbuf (9 KB jumbo, TSO super-frames) travel as mbuf chains, on ports
# whose mtu lets them in (9600 + 22 B; at the default 1500 they are oversize: 22_port_limits.sh).
for cap in jumbo_zeek_vxlan-http-9100.pcap jumbo_tcpdump_tso-2030.pcap; do
	sed "s|$IN|$CAPTURES/$cap|" "$TMP/r1.json" | jq '.ports[].mtu = 9600' >"$TMP/j.json"
	timeout 120 "$BUILD/primary/spanbox-primary" -c "$TMP/j.json" --replay >"$TMP/j.log" 2>&1
	check "replay of $cap exits 0" [ $? -eq 0 ]
	check "replay of $cap: output frames equal input, in order" \
		python3 "$ROOT/tests/lib/pcap_equal.py" "$CAPTURES/$cap" "$TMP/out1.pcap"
done
check "replay leaves no hugepage file of its prefix" \
	bash -c "! ls /dev/hugepages/sbxreplaymap_* >/dev/null 2>&1"
rm -rf "$TMP"
