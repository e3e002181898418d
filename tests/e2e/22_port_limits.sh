#!/usr/bin/env bash
# Frame length limits and pcap file ports (issue 10, section 7):
#  - a frame shorter than an Ethernet header (14 B; the corpus' 1 B trunc_zeek_eth-hdr.pcap and a
#    13 B one) is neither forwarded nor mirrored: dropped and counted as `runt` on its input port;
#  - a frame longer than the input port's mtu + 22 (Ethernet header + two VLAN tags) is neither
#    forwarded nor mirrored, on a pcap file port as on any other: `oversize`; mtu + 22 passes;
#  - runt and oversize are part of drop_packets, and are shown in the replay summary, in
#    /api/v1/status port entries, /api/v1/workers, /api/v1/ports/{name}/stats, /metrics, and in the
#    port's `drops` history;
#  - a tx_pcap file holds whole records while the appliance runs (flushed at least once a second);
#  - a replay whose input ends on a read error (not at end of file) exits non-zero, naming the port;
#  - a record whose capture length is below its wire length comes out with the capture length as
#    its wire length, and its ERSPAN copy has the T bit 0 (documented in docs/PCAP_SECONDARY.md).
# Own instances: file prefix t10b-lim, lcores 120-122, API port 18652, database under $TMP.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
source "$ROOT/tests/lib/instance.sh"
PRIMARY="$BUILD/primary/spanbox-primary"
MC="$ROOT/tests/lib/mirror_check.py"
PORT=18652
API=http://127.0.0.1:$PORT/api/v1
ENC='"src_ip": "192.0.2.1", "dst_ip": "198.51.100.7", "dst_mac": "02:00:5e:10:00:01"'
trap 'inst_cleanup; rm -rf "$TMP"' EXIT

mc() { python3 "$MC" "$@"; }
peq() { python3 "$ROOT/tests/lib/pcap_equal.py" "$1" "$2" | sed "s/^/# /"; return "${PIPESTATUS[0]}"; }
eq() { if [ "$2" = "$3" ]; then ok "$1 ($2)"; else not_ok "$1 (got $2, expected $3)"; fi; }
npkts() { capinfos -Mc "$1" 2>/dev/null | awk '/Number of packets/ {print $NF}'; }

# mkcfg FILE INPUT MTU TAG [MGMT]: p0 reads INPUT (mtu MTU), p1 writes TAG_out.pcap, m gets an
# ERSPAN II copy of p0 RX (TAG_m.pcap), s a SPAN copy of p1 TX (TAG_s.pcap); other ports mtu 9600
mkcfg() {
	cat >"$1" <<JSON
{
  "eal": {"file_prefix": "t10b-lim", "socket_mem_mb": 256, "primary_lcore": 120, "mgmt_lcore": 122},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$2", "mtu": $3},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$TMP/$4_out.pcap", "mtu": 9600},
    {"name": "m", "devargs": "net_pcap2,tx_pcap=$TMP/$4_m.pcap", "mtu": 9600},
    {"name": "s", "devargs": "net_pcap3,tx_pcap=$TMP/$4_s.pcap", "mtu": 9600}
  ],
  "workers": {"count": 1, "lcores": [121]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mirrors": [
    {"id": 21, "name": "e2", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "m"},
     "encap": {"type": "erspan2", $ENC}},
    {"id": 22, "name": "sp", "sources": [{"port": "p1", "direction": "tx"}], "destination": {"port": "s"}}
  ],
  "mgmt": {"port": $PORT, "database": "$TMP/lim.db"${5:+, $5}}
}
JSON
}
replay() { # replay TAG: run $TMP/TAG.json to the end, log in $TMP/TAG.log; prints the exit code
	local rc
	timeout 120 "$PRIMARY" -c "$TMP/$1.json" --replay >"$TMP/$1.log" 2>&1
	rc=$?
	awk '$1 == "port" && $2 == "rx_packets" {p = 1} /spanbox-primary: stopped/ {p = 0} p' "$TMP/$1.log" | sed "s/^/# $1 | /" >&2
	echo $rc
}

# ---------------------------------------------------------------------------------------------
# 1. Replay, mtu 1500: 1 B (corpus) and 13 B runts, 14 and 60 B, 1522 B (= 1500 + 22) pass,
# 1523 B and a 9100 B chained jumbo are oversize
mc mkpcap "$TMP/sized.pcap" 13 14 60 1522 1523 9100
mergecap -a -F pcap -w "$TMP/in.pcap" "$CAPTURES/trunc_zeek_eth-hdr.pcap" "$TMP/sized.pcap"
mc mkpcap "$TMP/want.pcap" 14 60 1522
echo "# input: $(tshark -r "$TMP/in.pcap" -T fields -e frame.cap_len | tr '\n' ' ')B"
mkcfg "$TMP/r1.json" "$TMP/in.pcap" 1500 r1
rc=$(replay r1)
L=$TMP/r1.log
check "r1: replay exits 0 (rc $rc)" [ "$rc" = 0 ]
eq "r1: p0 rx_packets = 7 frames read" "$(pctr "$L" p0 rx_packets)" 7
eq "r1: p0 runt = 2 (1 B, 13 B)" "$(pctr "$L" p0 runt)" 2
eq "r1: p0 oversize = 2 (1523 B, 9100 B at mtu 1500)" "$(pctr "$L" p0 oversize)" 2
eq "r1: p0 drop_packets = 4 (runt + oversize are drops)" "$(pctr "$L" p0 drop_packets)" 4
eq "r1: p1 tx_packets = 3" "$(pctr "$L" p1 tx_packets)" 3
check "r1: p1 output is the 14, 60 and 1522 B frames, byte for byte" peq "$TMP/want.pcap" "$TMP/r1_out.pcap"
eq "r1: session e2 (p0 rx) mirrored 3" "$(mctr "$L" e2 mirrored)" 3
mc erspan "r1: ERSPAN copies of p0 RX are the 3 frames in range" "$TMP/r1_m.pcap" "$TMP/in.pcap" \
	--expect "$TMP/want.pcap" --version 1 --session 21
mc span "r1: SPAN copies of p1 TX are the 3 frames in range" "$TMP/r1_s.pcap" "$TMP/in.pcap" --expect "$TMP/want.pcap"

# 2. mtu 68 (the minimum): 90 B = 68 + 22 passes, 91 B is oversize
mc mkpcap "$TMP/in2.pcap" 13 14 90 91
mc mkpcap "$TMP/want2.pcap" 14 90
mkcfg "$TMP/r2.json" "$TMP/in2.pcap" 68 r2
rc=$(replay r2)
check "r2: replay exits 0 (rc $rc)" [ "$rc" = 0 ]
eq "r2: mtu 68: p0 runt/oversize/drop_packets" "$(pctr "$TMP/r2.log" p0 runt)/$(pctr "$TMP/r2.log" p0 oversize)/$(pctr "$TMP/r2.log" p0 drop_packets)" 1/1/2
check "r2: mtu 68: p1 output is the 14 and 90 B frames" peq "$TMP/want2.pcap" "$TMP/r2_out.pcap"

# ---------------------------------------------------------------------------------------------
# 3. The same input live, with mgmt: the counters in every view; the output files readable while
# the appliance runs
mkcfg "$TMP/live.json" "$TMP/in.pcap" 1500 live '"token": "t10b-lim-token-0123456789"'
inst_start_primary lim "$TMP/live.json"
check "live: primary ready" [ $? -eq 0 ] || exit 1
inst_start_mgmt lim "$TMP/live.json" "$API"
check "live: mgmt up on port $PORT" [ $? -eq 0 ] || exit 1
settled() {
	curl -fsS --max-time 2 "$API/status" >"$TMP/st.json" 2>/dev/null &&
		jq -e '(.ports[] | select(.name == "p0") | .workers.rx_packets == 7) and
		       (.ports[] | select(.name == "p1") | .stats.opackets == 3)' "$TMP/st.json" >/dev/null
}
wait_for 100 settled
check "live: p0 received 7 frames and p1 sent 3 (/api/v1/status)" settled
jq -c '.ports[] | {name, workers}' "$TMP/st.json" | sed 's/^/# status: /'
check "live: /status p0 workers: runt 2, oversize 2, drop_packets 4" \
	jq -e '.ports[] | select(.name == "p0") | .workers | .runt == 2 and .oversize == 2 and .drop_packets == 4' "$TMP/st.json"
check "live: /status p1 workers: runt 0, oversize 0" \
	jq -e '.ports[] | select(.name == "p1") | .workers | .runt == 0 and .oversize == 0' "$TMP/st.json"
curl -fsS --max-time 5 "$API/workers" >"$TMP/w.json"
check "live: /workers: worker 0's p0 counters runt 2, oversize 2" \
	jq -e '.[] | select(.id == 0) | .ports.p0 | .runt == 2 and .oversize == 2' "$TMP/w.json"
curl -fsS --max-time 5 "$API/ports/p0/stats" >"$TMP/ps.json"
check "live: /ports/p0/stats: workers and per_worker[0] runt 2, oversize 2" \
	jq -e '(.workers | .runt == 2 and .oversize == 2) and (.per_worker[0] | .worker == 0 and .runt == 2 and .oversize == 2)' "$TMP/ps.json"
curl -fsS --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics.txt"
grep -E '^spanbox_worker_(runt|oversize)_packets_total' "$TMP/metrics.txt" | sed 's/^/# /'
check "live: /metrics spanbox_worker_runt_packets_total{worker=0, port=p0} 2" \
	grep -Eq '^spanbox_worker_runt_packets_total\{(worker="0",port="p0"|port="p0",worker="0")\} 2$' "$TMP/metrics.txt"
check "live: /metrics spanbox_worker_oversize_packets_total{worker=0, port=p0} 2" \
	grep -Eq '^spanbox_worker_oversize_packets_total\{(worker="0",port="p0"|port="p0",worker="0")\} 2$' "$TMP/metrics.txt"
check "live: /metrics has HELP and TYPE counter for both" \
	bash -c "grep -q '^# TYPE spanbox_worker_runt_packets_total counter' '$TMP/metrics.txt' && grep -q '^# TYPE spanbox_worker_oversize_packets_total counter' '$TMP/metrics.txt' && grep -q '^# HELP spanbox_worker_runt_packets_total ' '$TMP/metrics.txt'"
# the drops history of p0 counts them (the newest sample of the counter behind the rate)
sleep 2.2
drops=$(sqlite3 -cmd ".timeout 5000" "$TMP/lim.db" "SELECT h.v FROM history_1s h JOIN history_series s ON s.id = h.series
	WHERE s.kind = 'port' AND s.name = 'p0' AND s.metric = 'drops' ORDER BY h.t DESC LIMIT 1")
eq "live: the newest p0 drops sample of the history = 4" "$drops" 4
# while running, more than a second after the last frame: whole records in every output file
for f in out m s; do
	n=$(npkts "$TMP/live_$f.pcap")
	capinfos "$TMP/live_$f.pcap" >"$TMP/ci.txt" 2>&1; crc=$?
	echo "# live_$f.pcap while running: $(stat -c %s "$TMP/live_$f.pcap") B, capinfos rc $crc, $n frames$(grep -i -m1 'error\|cut short\|damaged' "$TMP/ci.txt" | sed 's/^/: /')"
	check "live: tx_pcap live_$f.pcap holds 3 whole records while the appliance runs" [ "$crc" = 0 -a "$n" = 3 ]
done
check "live: the forwarded output equals the 3 frames in range, while running" peq "$TMP/want.pcap" "$TMP/live_out.pcap"
inst_cleanup
check "live: after the stop, the output still holds the 3 frames" peq "$TMP/want.pcap" "$TMP/live_out.pcap"

# ---------------------------------------------------------------------------------------------
# 4. An input that ends on a read error: the replay says so and exits non-zero
for cap in file_suricata_fuzz-caplen-1.4G.pcap file_pcapfix_test_damaged.pcap; do
	mkcfg "$TMP/bad.json" "$CAPTURES/$cap" 1500 bad
	rc=$(replay bad)
	grep -E 'read error|did not reach' "$TMP/bad.log" | sed 's/^/# /'
	check "$cap: replay exits non-zero (rc $rc)" [ "$rc" != 0 -a "$rc" != 124 ]
	check "$cap: the error names ports[0] (p0) and says the input did not reach its end" \
		grep -Eq 'replay: ports\[0\] \(p0\): rx_pcap .* did not reach its end' "$TMP/bad.log"
	eq "$cap: the frame read before the error was forwarded (p1 tx_packets)" "$(pctr "$TMP/bad.log" p1 tx_packets)" 1
done

# ---------------------------------------------------------------------------------------------
# 5. A record cut by its capture's snaplen (caplen < wire length): written with the capture
# length as wire length; its ERSPAN copy is not marked truncated (T bit 0)
IN="$CAPTURES/trunc_zeek_ip4-trunc.pcap"
cut=$(tshark -r "$IN" -T fields -e frame.cap_len -e frame.len | awk '$1 < $2' | wc -l)
N=$(npkts "$IN")
echo "# $IN: $N frames, $cut with caplen < wire length"
check "trunc: the input has frames with caplen < wire length" [ "$cut" -gt 0 ]
mkcfg "$TMP/tr.json" "$IN" 1500 tr
rc=$(replay tr)
check "trunc: replay exits 0 (rc $rc)" [ "$rc" = 0 ]
check "trunc: p1 output equals the input's captured bytes" peq "$IN" "$TMP/tr_out.pcap"
check "trunc: every output record has wire length = capture length" \
	bash -c "[ \"\$(tshark -r '$TMP/tr_out.pcap' -T fields -e frame.cap_len -e frame.len | awk '\$1 != \$2' | wc -l)\" = 0 ] && [ \"\$(npkts() { capinfos -Mc \"\$1\" | awk '/Number of packets/ {print \$NF}'; }; npkts '$TMP/tr_out.pcap')\" = $N ]"
mc erspan "trunc: ERSPAN copies, T bit 0 on every frame (no snaplen)" "$TMP/tr_m.pcap" "$IN" --version 1 --session 21
