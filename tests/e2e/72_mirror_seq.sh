#!/usr/bin/env bash
# GRE sequence numbers of an ERSPAN session fed by two workers, across 20 worker restarts (issue
# #10, section 6): the numbers a collector sees form one contiguous range but for the copies
# counted as dropped (drop_txfull), none is repeated. They used to be taken in blocks of 256 per
# worker: gaps at every restart, jumps back and forth between workers.
# Also (section 5): a live appliance whose pcap mirror destination falls behind (the primary's
# pcap bridge paused by a test hook) forwards at full rate; the copies it cannot take are counted.
# Own prefix, taps, namespaces, API port and database; iperf3 UDP inside the test's namespaces.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/traffic.sh"
API=http://127.0.0.1:18112/api/v1
CFG="$TMP/seq.json" DB="$TMP/seq.db" MPCAP="$TMP/mirror.pcap" PAUSE="$TMP/pause"
RESTARTS=${RESTARTS:-20}
cleanup() {
	traffic_stop
	rm -f "$PAUSE"
	"$ROOT/spanbox" stop "$CFG" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
jq --arg db "$DB" --arg m "net_pcap0,tx_pcap=$MPCAP" '.eal.file_prefix = "sbxseq" | .eal.primary_lcore = 44
	| .eal.mgmt_lcore = 45 | .workers.lcores = [46, 47] | .mgmt.port = 18112 | .mgmt.database = $db
	| .ports[0].devargs = "net_tap0,iface=sbxsq-p0" | .ports[0].netns = "sbxsq-a"
	| .ports[1].devargs = "net_tap1,iface=sbxsq-p1" | .ports[1].netns = "sbxsq-b"
	| .ports[2].devargs = $m
	| .mirrors = [{"id": 77, "sources": [{"port": "p0"}, {"port": "p1"}], "destination": {"port": "mirror"},
	   "encap": {"type": "erspan2", "src_ip": "192.0.2.1", "dst_ip": "192.0.2.2", "dst_mac": "02:00:00:00:00:02"}}]' \
	"$ROOT/config/default.json" >"$CFG"

get() { curl -fsS --max-time 5 "$API$1"; }
wrx() { get "/workers/$2" | jq -e '.ports.p0.rx_packets + .ports.p1.rx_packets'; } # wrx API W (traffic.sh)
ptx() { get /status | jq -e '[.ports[] | select(.name == "p1")][0].workers.tx_packets'; }
mctr() { get /mirrors/77 | jq -e ".counters.$1"; }

SBX_TEST_BRIDGE_PAUSE_FILE="$PAUSE" timeout 180 "$ROOT/spanbox" start "$CFG" >"$TMP/start.log" 2>&1
check "appliance starts: 2 workers, ERSPAN II session 77 of p0 and p1 to a pcap file" [ $? -eq 0 ] ||
	{ tail "$TMP/start.log" | sed 's/^/# /'; exit 1; }
TOKEN=$(cat "$DB.token")

# iperf3 UDP, 8 streams of 2 Mbit/s (tests/lib/traffic.sh), until both workers get some of it
traffic_to_both "$API" sbxsq-a sbxsq-b 5201 2
check "traffic reaches both workers" both_rise "$API"

# --- section 5: the pcap destination falls behind, forwarding does not -------------------------
f0=$(ptx); sleep 1; f1=$(ptx)
d0=$(mctr drop_txfull)
touch "$PAUSE"
sleep 1.5 # the mirror rings fill within this
g0=$(ptx); sleep 1; g1=$(ptx)
rm -f "$PAUSE"
d1=$(mctr drop_txfull)
sleep 1 # the primary empties the rings; numbers handed out from here on are in arrival order
resumed=$(( $(mctr mirrored_packets) + $(mctr drop_txfull) ))
echo "# p1 tx: $((f1 - f0)) frames/s before, $((g1 - g0)) frames/s while the mirror destination is stalled; copies dropped $((d1 - d0))"
check "live: while the pcap mirror destination is stalled, forwarding goes on at >= 90 % of its rate" \
	[ $((g1 - g0)) -gt 0 -a $(( (g1 - g0) * 100 )) -ge $(( (f1 - f0) * 90 )) ]
check "live: the copies it could not take are counted (drop_txfull +$((d1 - d0)))" [ $((d1 - d0)) -gt 0 ]

# --- section 6: 20 graceful restarts, alternating workers ------------------------------------
bad=0
for ((k = 0; k < RESTARTS; k++)); do
	w=$((k % 2))
	r0=$(get "/workers/$w" | jq '.restarts')
	code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" "$API/workers/$w/restart")
	[ "$code" = 202 ] || bad=$((bad + 1))
	wait_for 50 bash -c "curl -fsS $API/workers/$w | jq -e '.state == \"running\" and .restarts > $r0' >/dev/null" ||
		bad=$((bad + 1))
	sleep 0.2
done
check "$RESTARTS graceful worker restarts, each running again ($bad failed)" [ $bad -eq 0 ]
sleep 0.5
traffic_stop
# the namespaces send more than iperf3: its TCP control connection's FIN/RST, ARP and IPv6 neighbour
# discovery; a frame let in between the counter read and the stop is a copy in the file the
# counters did not see (it failed 1 run in ~5: 2 copies). Take the kernel side of the taps down,
# then read the counters once they stand still.
ip -n sbxsq-a link set sbxsq-p0 down 2>/dev/null
ip -n sbxsq-b link set sbxsq-p1 down 2>/dev/null
mirrored=-1
for ((k = 0; k < 20; k++)); do
	sleep 0.3
	m=$(mctr mirrored_packets) && dropped=$(mctr drop_txfull) || continue
	[ "$m" = "$mirrored" ] && break
	mirrored=$m
done
"$ROOT/spanbox" stop "$CFG" >/dev/null 2>&1 # the primary writes what its rings hold, closes the file
tshark -r "$MPCAP" -Y 'gre' -T fields -e gre.sequence_number 2>/dev/null >"$TMP/seq.txt"
python3 - "$TMP/seq.txt" "$mirrored" "$dropped" "$resumed" >"$TMP/seq.res" <<'PY'
import sys
seqs = [int(x) for x in open(sys.argv[1]) if x.strip()]
mirrored, dropped, resumed = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
u = sorted(set(seqs))
gaps = (u[-1] - u[0] + 1 - len(u)) if u else -1
back = 0  # how far a number comes after a larger one (reordering between workers)
hi = -1
for s in (x for x in seqs if x > resumed):  # after the stall: rings drained in turn
    if s < hi:
        back = max(back, hi - s)
    hi = max(hi, s)
print(len(seqs), len(u), u[0] if u else -1, gaps, back, mirrored, dropped)
PY
read -r n nu first gaps back mirrored dropped <"$TMP/seq.res"
echo "# collector: $n ERSPAN frames, $nu distinct numbers from $first, $gaps missing, reordered by at most $back;" \
	"appliance: mirrored $mirrored, dropped (txfull) $dropped"
check "the collector sees every copy the appliance counted as mirrored ($n = $mirrored)" [ "$n" -eq "$mirrored" -a "$n" -gt 1000 ]
check "no sequence number is used twice ($n frames, $nu numbers)" [ "$n" -eq "$nu" ]
check "numbers start at 0" [ "$first" -eq 0 ]
check "the numbers are contiguous but for the copies counted as dropped ($gaps missing, $dropped dropped)" \
	[ "$gaps" -eq "$dropped" ]
# Each worker numbers its copies per RX burst (32 at most) and sends them on its own ring; the
# primary writes the pcap file taking up to 64 frames of each worker's ring in turn, so the file
# interleaves the workers by about 2 x 64 + 2 x 32 (137-171 seen; more when the primary is
# descheduled under load). Blocks of 256 numbers per worker reordered by 600+ (641 seen on 94f511d).
check "after the stall, copies of the two workers interleave by a few bursts (reordered by $back <= 256)" \
	[ "$back" -le 256 ]
exit 0
