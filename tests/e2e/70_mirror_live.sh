#!/usr/bin/env bash
# Live mirroring on the default config plus an ERSPAN II session of p0 (both directions) to the
# mirror tap: tshark on sbx-mirror sees the ping as ERSPAN; a destination that cannot send loses
# mirror copies only, never forwarded traffic.
source "$(dirname "$0")/../lib/common.sh"
API=http://127.0.0.1:8080/api/v1
trap '"$ROOT/spanbox" stop "$TMP/live.json" >/dev/null 2>&1; rm -rf "$TMP"' EXIT
jq --arg db "$TMP/live.db" '.mgmt.database = $db | .mirrors = [{"id": 865, "name": "p0-erspan", "sources": [{"port": "p0", "direction": "both"}],
  "destination": {"port": "mirror"},
  "encap": {"type": "erspan2", "src_ip": "192.0.2.1", "dst_ip": "192.0.2.2", "dst_mac": "02:00:00:00:00:02"}}]' \
	"$ROOT/config/default.json" >"$TMP/live.json"
kstat() { ip -n "$1" -s -j link show "$2" | jq ".[0].stats64.$3.packets"; }
mstat() { curl -fsS "$API/status" | jq ".mirrors[0].counters.$1"; }

timeout 180 "$ROOT/spanbox" start "$TMP/live.json" >/dev/null 2>&1
check "appliance with an erspan2 session starts" [ $? -eq 0 ]
timeout 15 tshark -i sbx-mirror -f 'ip proto 47' -a duration:6 -w "$TMP/live.pcap" >/dev/null 2>&1 &
cap=$!
sleep 2 # tshark needs a moment before it captures
ip netns exec sbx-a ping -c 5 -i 0.2 -W 2 198.18.0.2 >/dev/null
wait $cap
tshark -r "$TMP/live.pcap" -Y 'erspan && icmp' -T fields -e erspan.version -e erspan.spanid -e icmp.type \
	-e ip.src 2>/dev/null >"$TMP/decoded.txt"
echo "# $(wc -l <"$TMP/decoded.txt") ERSPAN frames carrying ICMP seen on sbx-mirror"
check "tshark on sbx-mirror decodes the pings as ERSPAN type II session 865" \
	[ "$(awk '$1 == 1 && $2 == 865' "$TMP/decoded.txt" | wc -l)" -ge 10 ]
check "echo requests (p0 rx) are mirrored: 5" [ "$(awk '$3 == 8 && $4 ~ /198.18.0.1$/' "$TMP/decoded.txt" | wc -l)" -eq 5 ]
check "echo replies (p0 tx) are mirrored: 5" [ "$(awk '$3 == 0 && $4 ~ /198.18.0.2$/' "$TMP/decoded.txt" | wc -l)" -eq 5 ]

# The destination cannot send (its tap is down): mirror copies are dropped and counted,
# forwarding is untouched.
ip link set sbx-mirror down
b_rx0=$(kstat sbx-b sbx-p1 rx); drops0=$(mstat drop_txfull)
ip netns exec sbx-a ping -c 20 -i 0.05 -W 2 198.18.0.2 >"$TMP/ping.txt"
check "forwarding with the mirror destination down: 0% loss" grep -q ' 0% packet loss' "$TMP/ping.txt"
sleep 0.3
b_rx=$(( $(kstat sbx-b sbx-p1 rx) - b_rx0 )); drops=$(( $(mstat drop_txfull) - drops0 ))
echo "# sbx-b received $b_rx frames, mirror drops counted: $drops"
check "sbx-b received every echo request (>= 20)" [ "$b_rx" -ge 20 ]
check "mirror copies that could not be sent are counted (>= 40: requests and replies)" [ "$drops" -ge 40 ]
ip link set sbx-mirror up
