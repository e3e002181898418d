#!/usr/bin/env bash
# End to end on the embedded default config: taps in namespaces sbx-a and sbx-b, two workers, mgmt.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/dumpcap.sh" # dc_*_checks: dpdk-dumpcap against the appliance (as test 74)
API=http://127.0.0.1:8080/api/v1
PFX=spanbox # the default config's EAL file prefix, what dpdk-dumpcap and dpdk-telemetry.py take
trap '"$ROOT/spanbox" stop "$ROOT/config/default.json" >/dev/null 2>&1; rm -rf "$TMP"' EXIT

timeout 180 "$ROOT/spanbox" start
check "./spanbox start returns 0 with the default config" [ $? -eq 0 ]
curl -fsS "$API/status" >"$TMP/status0.json"
check "status: appliance up" jq -e '.appliance.state == "up"' "$TMP/status0.json"
check "status: 3 ports p0 p1 mirror" jq -e '[.ports[].name] == ["p0","p1","mirror"]' "$TMP/status0.json"
sleep 0.3 # link state is refreshed every 100 ms
check "status: links of p0 and p1 (taps inside sbx-a/sbx-b) and mirror are up" \
	bash -c "curl -fsS $API/status | jq -e '[.ports[].link.up] == [true, true, true]'"
check "status: 2 workers running on distinct lcores" \
	jq -e '[.workers[] | select(.state == "running")] | length == 2 and (map(.lcore) | unique | length == 2)' "$TMP/status0.json"
check "status: one pool with mbufs in use (port RX rings are filled)" \
	jq -e '(.pools | length) == 1 and .pools[0].in_use > 0 and .pools[0].size > .pools[0].in_use' "$TMP/status0.json"

# kernel counters of an iface inside a namespace: kstat NS IFACE rx|tx
kstat() { ip -n "$1" -s -j link show "$2" | jq ".[0].stats64.$3.packets"; }
# appliance counters summed over workers: astat PORT rx_packets|tx_packets
astat() { curl -fsS "$API/status" | jq ".ports[] | select(.name == \"$1\") | .workers.$2"; }

a_tx0=$(kstat sbx-a sbx-p0 tx); b_rx0=$(kstat sbx-b sbx-p1 rx); p0_rx0=$(astat p0 rx_packets); p1_tx0=$(astat p1 tx_packets)
ip netns exec sbx-a ping -c 20 -i 0.1 -W 2 198.18.0.2 >"$TMP/ping_ab.txt"
check "ping -c 20 sbx-a -> sbx-b: 0% loss" grep -q ' 0% packet loss' "$TMP/ping_ab.txt"
ip netns exec sbx-b ping -c 20 -i 0.1 -W 2 198.18.0.1 >"$TMP/ping_ba.txt"
check "ping -c 20 sbx-b -> sbx-a: 0% loss" grep -q ' 0% packet loss' "$TMP/ping_ba.txt"
sleep 0.3
a_tx=$(( $(kstat sbx-a sbx-p0 tx) - a_tx0 )); b_rx=$(( $(kstat sbx-b sbx-p1 rx) - b_rx0 ))
p0_rx=$(( $(astat p0 rx_packets) - p0_rx0 )); p1_tx=$(( $(astat p1 tx_packets) - p1_tx0 ))
echo "# sbx-a sent $a_tx, p0 received $p0_rx; p1 sent $p1_tx, sbx-b received $b_rx"
check "p0 rx counter matches what sbx-a sent (>= 40 frames, within 4)" \
	[ "$a_tx" -ge 40 ] && [ $((a_tx - p0_rx)) -le 4 ] && [ $((p0_rx - a_tx)) -le 4 ]
check "p1 tx counter matches what sbx-b received (within 4)" \
	[ "$b_rx" -ge 40 ] && [ $((b_rx - p1_tx)) -le 4 ] && [ $((p1_tx - b_rx)) -le 4 ]

ip netns exec sbx-b timeout 30 iperf3 -s -1 -p 5201 >"$TMP/iperf_s.txt" 2>&1 &
sleep 0.5
ip netns exec sbx-a timeout 30 iperf3 -c 198.18.0.2 -p 5201 -t 5 -J >"$TMP/iperf.json" 2>&1
rc=$?
wait
check "iperf3 TCP 5 s sbx-a -> sbx-b completes" [ $rc -eq 0 ]
echo "# iperf3 rate: $(jq -r '.end.sum_received.bits_per_second / 1e6 | floor' "$TMP/iperf.json" 2>/dev/null) Mbit/s"
check "iperf3 moved data" jq -e '.end.sum_received.bytes > 1000000' "$TMP/iperf.json"

# dpdk-dumpcap on the default appliance (issue 14, test 3; docs/CAPTURE.md "DPDK's own tools"):
# the demo's ping between sbx-a and sbx-b in the file of p0 (net_tap0), requests inbound and
# replies outbound; a filter and a snaplen honoured. The 50 start / Ctrl-C cycles, several
# dumpcaps, workers replaced during a capture and jumbo frames are test 74's (an instance of its own).
ip netns exec sbx-a timeout 30 ping -q -i 0.1 198.18.0.2 >"$TMP/dc-ping.log" 2>&1 &
dc_ping=$!
dc_ping_checks "dumpcap ping" net_tap0 2
dc_filter_snaplen_checks "dumpcap -f -s" net_tap0 2
kill "$dc_ping" 2>/dev/null; wait "$dc_ping" 2>/dev/null
check "dumpcap: no capture left after both (/spanbox/pdump empty)" telq /spanbox/pdump '."/spanbox/pdump" == {}'

# A worker that dies is taken over by the default's hot standby (workers.standby 1, its own lcore
# 3: docs/CONFIG.md), a new standby starts on the freed lcore 1; the pools stay, forwarding resumes.
old=$(curl -fsS "$API/status" | jq '.workers[0].pid')
kill -9 "$old"
restarted() { curl -fsS "$API/status" | jq -e ".workers[0] | .state == \"running\" and .takeovers == 1 and .pid != $old and .lcore == 3" >/dev/null; }
for _ in $(seq 50); do restarted && break; sleep 0.1; done
check "worker 0 killed with -9 is taken over within 5 s by the standby of lcore 3" restarted
newsb() { curl -fsS "$API/status" | jq -e '[.standbys[] | select(.lcore == 1 and .state == "parked")] | length == 1' >/dev/null; }
for _ in $(seq 100); do newsb && break; sleep 0.1; done
check "a new standby parks on the freed lcore 1 within 10 s" newsb
restarted || echo "# workers: $(curl -sS "$API/status" | jq -c '[.workers[] | {id, pid, state, restarts, lcore}]')"
check "pool unchanged across the worker restart" \
	bash -c "curl -fsS $API/status | jq -e '.pools[0].size == $(jq '.pools[0].size' "$TMP/status0.json")'"
ip netns exec sbx-a ping -c 10 -i 0.1 -W 2 198.18.0.2 >"$TMP/ping_after.txt"
check "ping after the worker restart: 0% loss" grep -q ' 0% packet loss' "$TMP/ping_after.txt"

"$ROOT/spanbox" stop "$ROOT/config/default.json"
check "./spanbox stop returns 0" [ $? -eq 0 ]
no_spanbox_process() { ! pgrep -f 'spanbox-(primary|worker|mgmt).*(file-prefix=spanbox( |$)|config/default.json)' >/dev/null; }
check "no spanbox process of prefix spanbox left" no_spanbox_process
check "no hugepage file of prefix spanbox left" bash -c "! ls /dev/hugepages/spanboxmap_* >/dev/null 2>&1"
check "demo namespaces removed" bash -c "! ip netns list | grep -qE '^sbx-(a|b)( |$)'"
