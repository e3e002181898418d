#!/usr/bin/env bash
# Which traffic flows meter (issue #28 "ports and directions, or maps / mirror sessions"; docs/FLOWS.md
# "Directions" and "Selected by maps", "Live changes"), with nfdump's nfcapd as the collector and
# tests/lib/flows_ref.py as the reference.
#  1. Directions on a cross-connect p0 <-> p1, both pcap ports reading the same 6 real captures:
#     flows.ports p1 "both" and p0 "tx". nfcapd receives three copies of the reference's flows: p1's
#     RX (ingressInterface 1, nfdump dir I), p1's TX (what p0 received, sent on p1:
#     egressInterface 1, flowDirection 1 = E) and p0's TX (egressInterface 0): each equal to the
#     reference (protocol, addresses, ports, VLAN, packets, bytes). The RX and TX flows of p1 are the
#     same 5-tuples: the key keeps them apart. Nothing of p0's RX. The double count is visible: every
#     frame p1 forwarded is in an RX record of p1... and a TX record of p0 (docs/FLOWS.md).
#  2. Selected by sessions: maps 40 (rules: dst_port 53 passes) and 41 (ip_proto 17 passes), mirror
#     sessions 7 (filter "icmp") and 8 (filter "tcp") watch p0's RX; flows.sessions [40, 7], no
#     ports: nfcapd receives exactly the reference's flows to port 53 (TCP, UDP) and its ICMP flows,
#     once each, none of map 41's other UDP flows nor of mirror 8's TCP flows.
#  3. Run-time tables that cannot fit: a config with flows off and flows_per_worker 2,000,000 starts in
#     256 MiB of --legacy-mem (nothing to plan); PUT /api/v1/flows/config turning metering on answers
#     a 4xx JSON error naming flows.flows_per_worker, GET /api/v1/flows/config is unchanged (off),
#     nothing stored in SQLite, no worker tables error, forwarding goes on. (Before: 200 and nothing
#     metered, the worker's failure only in tables_errors.)
#  4. A collector that cannot be opened at run time (PUT to 255.255.255.255: EACCES) is retried with
#     back-off (1 s, doubled: 3 tries in 3.6 s), counted (open_failures), logged, down, an event; one
#     whose open fails for a while (the test hook SBX_TEST_FLOWS_OPEN_FAIL_FILE) is opened again by
#     the retry, without a config change: up, an event, records sent again. (Before: never retried
#     until the next change of the config.)
# (The refusals of a bad section: tests/unit/test_config.c test_flows.)
# Resources: file prefix sbxfd<pid>, lcores 110 (worker) 111 (primary) 112 (mgmt), API 19110,
# collectors UDP 19111, 19112, 19113 (nobody), 19114.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/flows.sh"
PREFIX=sbxfd$$
REF="python3 $ROOT/tests/lib/flows_ref.py"
PORT=19110 API=http://127.0.0.1:19110/api/v1 NF1=19111 NF2=19112 NOBODY=19113 NF3=19114
TOKEN=sbxfd-token-0123456789abcdef
for t in nfcapd nfdump mergecap jq curl sqlite3 tcpdump tshark; do
	command -v $t >/dev/null || { not_ok "$t not installed (./spanbox install-deps)"; exit 1; }
done
NAMES=(plain_tcpdump_dns_udp plain_tcpreplay_test bulk_zeek_ftp-8317-small vlan_zeek_http-vlan-0
	frag_suricata_vlan-ipv6-frag fmt_zeek_nanosecond)
CAPS=()
for n in "${NAMES[@]}"; do CAPS+=("$CAPTURES/$n.pcap"); done
mergecap -a -F pcap -w "$TMP/in0.pcap" "${CAPS[@]}" || { not_ok "mergecap"; exit 1; }
cp "$TMP/in0.pcap" "$TMP/in1.pcap"
NFRAMES=$(capinfos -Mc "$TMP/in0.pcap" | awk '/Number of packets/ {print $NF}')
$REF --active 1e9 --idle 1e9 "$TMP/in0.pcap" >"$TMP/ref.tsv"
NREF=$(wc -l <"$TMP/ref.tsv")
REF_FRAMES=$(awk '{s += $10} END {print s}' "$TMP/ref.tsv")

# dirflows DIR: "in out dir proto src dst sport dport vlan packets bytes" of every record, sorted
dirflows() { nflines "$1" "%in|%out|%dir|%pr|%sa|%da|%sp|%dp|%svln|%pkt|%byt"; }
# reflines TSV IN OUT DIR [PYTHON CONDITION on v]: the reference's flows in dirflows' form
reflines() { refcols "$1" "3 1 2 4 5 6 9 10" "${5:-True}" "$2 $3 $4"; }

# --- 1. directions --------------------------------------------------------------------------------
cat >"$TMP/dir.json" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 111, "mgmt_lcore": 112},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$TMP/in0.pcap,tx_pcap=$TMP/p0_out.pcap", "mtu": 9000},
    {"name": "p1", "devargs": "net_pcap1,rx_pcap=$TMP/in1.pcap,tx_pcap=$TMP/p1_out.pcap", "mtu": 9000}
  ],
  "workers": {"count": 1, "lcores": [110], "standby": 0},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "flows": {"ports": [{"port": "p1", "direction": "both"}, {"port": "p0", "direction": "tx"}],
            "observation_domain_id": 28, "collectors": [{"address": "127.0.0.1", "port": $NF1}]}
}
JSON
nfstart "$TMP/nf1" $NF1
tcpdump -i lo --immediate-mode -U -B 16384 -s 0 -w "$TMP/ipfix.pcap" "udp and dst port $NF1" >"$TMP/tcpdump.log" 2>&1 &
TDPID=$!
wait_for 50 grep -q "listening on lo" "$TMP/tcpdump.log"
replay dir
sleep 0.5
kill -INT $TDPID
wait $TDPID 2>/dev/null
nfstop
dirflows "$TMP/nf1" >"$TMP/nf1.flows"
{
	reflines "$TMP/ref.tsv" 1 0 I
	reflines "$TMP/ref.tsv" 0 1 E
	reflines "$TMP/ref.tsv" 0 0 E
} | sort >"$TMP/ref1.flows"
echo "# $(grep -c . "$TMP/nf1.flows") records at nfcapd, the reference: 3 x $NREF flows"
check "p1 RX: every reference flow with ingressInterface 1, direction ingress ($(grep -c '^1 0 I' "$TMP/nf1.flows") of $NREF)" \
	cmp -s <(grep '^1 0 I' "$TMP/nf1.flows") <(reflines "$TMP/ref.tsv" 1 0 I)
check "p1 TX: every reference flow with egressInterface 1, flowDirection egress (nfdump: E), apart from p1's RX flows of the same 5-tuples ($(grep -c '^0 1 E' "$TMP/nf1.flows") of $NREF)" \
	cmp -s <(grep '^0 1 E' "$TMP/nf1.flows") <(reflines "$TMP/ref.tsv" 0 1 E)
check "p0 TX: every reference flow with egressInterface 0, direction egress; p0's RX not metered (nothing else at nfcapd)" \
	cmp -s "$TMP/nf1.flows" "$TMP/ref1.flows"
diff "$TMP/ref1.flows" "$TMP/nf1.flows" | head -5 | sed 's/^/# ref<>nfdump: /'
TS=(tshark -n -r "$TMP/ipfix.pcap" -d "udp.port==$NF1,cflow")
bad=$("${TS[@]}" -Y "_ws.malformed || _ws.expert.severity >= warning" 2>/dev/null | wc -l)
tmpl=$("${TS[@]}" -T fields -e cflow.template_id 2>/dev/null | tr ',' '\n' | sort -u | tr '\n' ' ')
ndir=$("${TS[@]}" -T fields -e cflow.direction 2>/dev/null | tr ',' '\n' | grep -c '^1$')
nout=$("${TS[@]}" -T fields -e cflow.outputint 2>/dev/null | tr ',' '\n' | grep -c .)
check "tshark (cflow) decodes the datagrams without a malformed field ($bad), templates 256-259 ($tmpl), $ndir records with flowDirection 1 and $nout with egressInterface: the $((2 * NREF)) TX records" \
	cond "[ $bad = 0 ] && [[ '$tmpl' == *256*257*258*259* ]] && [ $ndir = $((2 * NREF)) ] && [ $nout = $((2 * NREF)) ]"
check "the double count of a metered pair: $(kv dir worker0_frames) frames metered = 3 x the $REF_FRAMES IP frames of the input (p1 RX, p1 TX, p0 TX), every frame forwarded ($(pctr "$TMP/dir.log" p0 tx_packets) + $(pctr "$TMP/dir.log" p1 tx_packets) sent), nothing lost" \
	cond "[ '$(kv dir worker0_frames)' = $((3 * REF_FRAMES)) ] && [ '$(kv dir collector0_lost)' = 0 ] && [ '$(kv dir worker0_lost_ring)' = 0 ] && [ '$(pctr "$TMP/dir.log" p1 tx_packets)' = $NFRAMES ] && [ '$(pctr "$TMP/dir.log" p0 tx_packets)' = $NFRAMES ]"

# --- 2. selected by a map -------------------------------------------------------------------------
cat >"$TMP/map.json" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 111, "mgmt_lcore": 112},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$TMP/in0.pcap", "mtu": 9000},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$TMP/m_p1.pcap", "mtu": 9000},
    {"name": "t", "devargs": "net_pcap2,tx_pcap=$TMP/m_t.pcap", "mtu": 9000}
  ],
  "workers": {"count": 1, "lcores": [110], "standby": 0},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mirrors": [
    {"id": 7, "name": "icmp", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "t"},
     "filter": "icmp"},
    {"id": 8, "name": "tcp", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "t"},
     "filter": "tcp"}
  ],
  "maps": [
    {"id": 40, "name": "dns", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "t"},
     "rules": [{"action": "pass", "dst_port": 53}]},
    {"id": 41, "name": "udp", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "t"},
     "rules": [{"action": "pass", "ip_proto": 17}]}
  ],
  "flows": {"sessions": [40, 7], "observation_domain_id": 28, "collectors": [{"address": "127.0.0.1", "port": $NF2}]}
}
JSON
nfstart "$TMP/nf2" $NF2
replay map
sleep 0.3
nfstop
dirflows "$TMP/nf2" >"$TMP/nf2.flows"
# map 40's rules: TCP/UDP/SCTP to port 53; mirror 7's BPF filter "icmp": the frames libpcap's own
# filter takes (tcpdump: no VLAN tag, no MPLS label), through the reference
tcpdump -r "$TMP/in0.pcap" -w "$TMP/icmp.pcap" icmp 2>/dev/null
$REF --active 1e9 --idle 1e9 "$TMP/icmp.pcap" >"$TMP/ref_icmp.tsv"
{
	reflines "$TMP/ref.tsv" 0 0 I 'v[5] == "53" and v[3] in ("6", "17", "132")'
	reflines "$TMP/ref_icmp.tsv" 0 0 I
} | sort >"$TMP/ref2.flows"
NDNS=$(reflines "$TMP/ref.tsv" 0 0 I 'v[5] == "53" and v[3] in ("6", "17", "132")' | wc -l)
NICMP=$(wc -l <"$TMP/ref_icmp.tsv")
NUDP=$(awk -F'\t' '$4 == 17' "$TMP/ref.tsv" | wc -l)
NTCP=$(awk -F'\t' '$4 == 6' "$TMP/ref.tsv" | wc -l)
check "flows.sessions [40, 7]: nfdump prints $(wc -l <"$TMP/nf2.flows") flows, exactly the reference's $NDNS flows to port 53 (map 40) and $NICMP ICMP flows (mirror 7), each once; not map 41's $NUDP UDP flows nor mirror 8's $NTCP TCP flows, not the rest of $NREF" \
	cond "[ $NDNS -gt 3 ] && [ $NICMP -gt 1 ] && [ $NUDP -gt $NDNS ] && cmp -s '$TMP/nf2.flows' '$TMP/ref2.flows'"
diff "$TMP/ref2.flows" "$TMP/nf2.flows" | head -5 | sed 's/^/# ref<>nfdump: /'
check "forwarding unchanged: p1 got every frame ($(pctr "$TMP/map.log" p1 tx_packets) of $NFRAMES)" \
	[ "$(pctr "$TMP/map.log" p1 tx_packets)" = "$NFRAMES" ]

# --- 3. run-time tables that do not fit -----------------------------------------------------------
python3 "$ROOT/bench/flows_feed.py" "$TMP/feed.pcap" 10 500 >/dev/null
jq -n --arg in "net_pcap0,rx_pcap=$TMP/feed.pcap,pps=50" --arg db "$TMP/rt.db" --arg pf "$PREFIX" --argjson nb $NOBODY \
	--argjson port $PORT --arg tok "$TOKEN" '
	{ eal: {file_prefix: $pf, socket_mem_mb: 256, primary_lcore: 111, mgmt_lcore: 112, extra_args: ["--legacy-mem"]},
	  ports: [{name: "in", devargs: $in}, {name: "out", devargs: "net_null0"}],
	  workers: {count: 1, lcores: [110], standby: 0},
	  forwarding: {xconnects: [["in", "out"]]},
	  flows: {enabled: false, flows_per_worker: 2000000, collectors: [{address: "127.0.0.1", port: $nb}]},
	  mgmt: {port: $port, database: $db, token: $tok} }' >"$TMP/rt.json"
get() { curl -fsS --max-time 5 "$API$1"; }
# jqe EXPR [ARGS...] <INPUT: jq -e that fails on an empty input too (jq 1.6 exits 0 on none)
jqe() { local in; in=$(cat); [ -n "$in" ] && jq -e "$@" <<<"$in" >/dev/null; }
req() {
	curl -sS --max-time 15 -o "$TMP/body" -w '%{http_code}' -X "$1" -H "Authorization: Bearer $TOKEN" \
		-H 'Content-Type: application/json' --data-binary "$3" "$API$2"
}
inst_start_both rt "$TMP/rt.json" "$API" || exit 1
before=$(get /flows/config)
out0=$(get /ports/out/stats | jq '.workers.tx_packets')
code=$(req PUT /flows/config "{\"ports\": [{\"port\": \"in\"}], \"collectors\": [{\"address\": \"127.0.0.1\", \"port\": $NOBODY}]}")
echo "# PUT -> $code $(jq -c . "$TMP/body" 2>/dev/null | cut -c1-400)"
check "PUT turning metering on with 2,000,000 flows per worker in 256 MiB (--legacy-mem): a 4xx/5xx JSON error naming flows.flows_per_worker (got $code)" \
	cond "[ '$code' -ge 400 ] && [ \"\$(jq -r .error.field '$TMP/body')\" = flows.flows_per_worker ]"
check "GET /api/v1/flows/config unchanged (metering off)" \
	cond "[ '$(get /flows/config | jq -cS .)' = '$(jq -cS . <<<"$before")' ] && get /flows/config | jq -e '.enabled == false' >/dev/null"
check "nothing stored in SQLite (config_store empty)" \
	[ "$(sqlite3 "$TMP/rt.db" 'SELECT count(*) FROM config_store' 2>/dev/null || echo 0)" = 0 ]
sleep 0.5
check "no worker tried a table (tables_errors 0, no flow table), forwarding goes on ($out0 -> $(get /ports/out/stats | jq '.workers.tx_packets') frames)" \
	cond "get /flows | jq -e '(.enabled | not) and ([.workers[].flows_metered_frames // 0] | add // 0) == 0' >/dev/null && [ \$(get /ports/out/stats | jq '.workers.tx_packets') -gt $out0 ] && ! grep -q 'flows: a table of' '$TMP/rt-primary.log'"
inst_cleanup

# --- 4. a collector that cannot be opened at run time: retried with back-off, counted, events ------
# (a UDP socket cannot connect to 255.255.255.255 without SO_BROADCAST: EACCES, a real failure; then
# the test hook SBX_TEST_FLOWS_OPEN_FAIL_FILE fails every open while its file exists)
jq --argjson nf $NF3 '.flows = {ports: [{port: "in"}], active_timeout_s: 1, flows_per_worker: 4096,
	collectors: [{address: "127.0.0.1", port: $nf}]} | .mgmt.database += ".2" | del(.eal.extra_args)' "$TMP/rt.json" >"$TMP/rt2.json"
HOOK=$TMP/open.fail
nfstart "$TMP/nf3" $NF3
inst_start_primary rt2 "$TMP/rt2.json" SBX_TEST_FLOWS_OPEN_FAIL_FILE="$HOOK"
inst_start_mgmt rt2 "$TMP/rt2.json" "$API"
wait_for 100 cond "get /flows | jq -e '.collectors[0].records_sent >= 2' >/dev/null"
code=$(req PUT /flows/config "{\"ports\": [{\"port\": \"in\"}], \"active_timeout_s\": 1, \"collectors\": [{\"address\": \"255.255.255.255\", \"port\": $NF3}]}")
sleep 3.6 # tries at 0, 1 and 3 s (1 s, doubled)
f=$(get /flows)
echo "# $(jq -c '.collectors[0] | {address, state, open_failures, records_lost, records_sent}' <<<"$f")"
check "PUT to 255.255.255.255 (got $code): it cannot be opened (EACCES), retried with back-off: 3 tries in 3.6 s, state down, records counted lost" \
	cond "[ '$code' = 200 ] && jqe '.collectors[0] | .address == \"255.255.255.255\" and .state == \"down\" and .open_failures == 3 and .records_lost > 0' <<<'$f'"
check "... logged with the next try, and an event collector_down" \
	cond "grep -q 'flows.collectors\[0\]: address: UDP socket to 255.255.255.255: Permission denied (retried in 4000 ms)' '$TMP/rt2-primary.log' && grep -q 'collector_down: flows.collectors\[0\] 255.255.255.255:$NF3' '$TMP/rt2-primary.log'"
touch "$HOOK"
code=$(req PUT /flows/config "{\"ports\": [{\"port\": \"in\"}], \"active_timeout_s\": 1, \"collectors\": [{\"address\": \"127.0.0.1\", \"port\": $NF3}]}")
sleep 1.5
f=$(get /flows)
sent0=$(jq '.collectors[0].records_sent' <<<"$f")
check "back to 127.0.0.1 while opens fail (test hook, got $code): down, failures counted ($(jq -c '.collectors[0] | {state, open_failures, records_sent}' <<<"$f"))" \
	cond "[ '$code' = 200 ] && jqe '.collectors[0] | .address == \"127.0.0.1\" and .state == \"down\" and .open_failures >= 4' <<<'$f'"
rm -f "$HOOK"
wait_for 100 cond "get /flows | jq -e '.collectors[0].state == \"up\" and .collectors[0].records_sent > $sent0' >/dev/null"
f=$(get /flows)
check "the open works again: retried without a config change, up, records sent again ($(jq -c '.collectors[0] | {state, open_failures, records_sent, records_lost}' <<<"$f"))" \
	cond "jqe '.collectors[0] | .state == \"up\" and .records_sent > $sent0' <<<'$f' && grep -q 'flows: collector 127.0.0.1:$NF3 (udp) opened after' '$TMP/rt2-primary.log'"
wait_for 10 cond "grep -q 'collector_up: flows.collectors\[0\] 127.0.0.1:$NF3' '$TMP/rt2-primary.log'"
check "... and an event collector_up" grep -q "collector_up: flows.collectors\[0\] 127.0.0.1:$NF3" "$TMP/rt2-primary.log"
inst_cleanup
