#!/usr/bin/env bash
# Flow metering in the running product (issue #28, docs/FLOWS.md): the worker's flow stage
# (secondary/flows.c), its ring to the primary, the primary's IPFIX exporter (primary/flowexport.c),
# the counters and GET /api/v1/flows.
#  1. A pcap input port replays 14 real captures of ../shared/captures (TCP, UDP, ICMP, IPv6, VLAN,
#     QinQ, QinQinQ, MPLS, IPv4 and IPv6 fragments, VXLAN, jumbo frames, big-endian and ns files)
#     concatenated (spanbox-primary --replay, flows on p0): nfcapd on 127.0.0.1 receives our IPFIX
#     over UDP and every flow nfdump prints (protocol, addresses, ports, VLAN, ingress port,
#     packets, bytes) equals tests/lib/flows_ref.py's from the same file (timeouts that never fire:
#     the worker's clock is not the capture's; TCP FIN/RST ends split flows in both); nothing lost.
#  2. The same with nobody listening on the collector port, over UDP and TCP (two collectors):
#     every frame still forwarded, every record counted lost by the exporter (UDP: those the ICMP
#     port unreachable reports), none lost on the workers' ring; logged, and an event.
#  3. Live, with mgmt (idle_timeout_s 2): the frames pass at a known time (the bridge paused until
#     then); /api/v1/flows shows the active flows, they are all gone 2 s (+ <= 2 s) after, not before
#     1.5 s, by idle timeout or TCP end, none forced; /status and /metrics carry the counters;
#     GET /api/v1/flows/top lists the reference's 20 largest flows, largest first.
#  4. A worker killed with flows in its table: the restarted worker counts them lost
#     (flows_records_lost_killed = the active flows before the kill).
# (The refusals of a bad flows section: tests/unit/test_config.c test_flows.)
# Resources: file prefix sbxfw<pid>, lcores 67 (worker) 68 (primary) 69 (mgmt), API 18940,
# collector UDP 18950 (nfcapd), 18951 (nobody), 18952 (nfcapd, live).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/flows.sh"
PREFIX=sbxfw$$
REF="python3 $ROOT/tests/lib/flows_ref.py"
PORT=18940 API=http://127.0.0.1:18940/api/v1
NF_PORT=18950 DEAD_PORT=18951 NF2_PORT=18952
for t in nfcapd nfdump mergecap jq curl; do
	command -v $t >/dev/null || { not_ok "$t not installed (./spanbox install-deps)"; exit 1; }
done
NAMES=(plain_tcpdump_dns_udp plain_tcpreplay_test bulk_zeek_ftp-8317-small vlan_zeek_http-qinq-0
	vlan_zeek_mpls-in-vlan frag_suricata_ipv4frags-1442 frag_suricata_vlan-ipv6-frag jumbo_zeek_smtp-8754
	fmt_tcpdump_bigendian vlan_zeek_qinqinq vxlan_suricata_100pkts frag_zeek_ipv4-frag-4 fmt_zeek_nanosecond
	vlan_tcpdump_802.1ad_QinQ)
CAPS=()
for n in "${NAMES[@]}"; do CAPS+=("$CAPTURES/$n.pcap"); done
mergecap -a -F pcap -w "$TMP/in.pcap" "${CAPS[@]}" || { not_ok "mergecap"; exit 1; }
NFRAMES=$(capinfos -Mc "$TMP/in.pcap" | awk '/Number of packets/ {print $NF}')
$REF --active 1e9 --idle 1e9 "$TMP/in.pcap" >"$TMP/ref.tsv"
NREF=$(wc -l <"$TMP/ref.tsv")
REF_FRAMES=$(awk '{s += $10} END {print s}' "$TMP/ref.tsv")

# mkcfg TAG COLLECTOR_PORT IDLE_S [MGMT]   (COLLECTORS: more collector objects, with a leading comma)
mkcfg() {
	local mgmt="" more=${COLLECTORS:-}
	[ -n "${4:-}" ] && mgmt=", \"mgmt\": {\"port\": $PORT, \"database\": \"$TMP/$1.db\", \"token\": \"fw28b-token-0123456789abcdef\"}"
	cat >"$TMP/$1.json" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 68, "mgmt_lcore": 69},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$TMP/in.pcap", "mtu": 9000},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$TMP/$1_p1.pcap", "mtu": 9000}
  ],
  "workers": {"count": 1, "lcores": [67], "standby": 0},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "flows": {"ports": [{"port": "p0", "direction": "rx"}], "observation_domain_id": 28, "idle_timeout_s": $3,
            "collectors": [{"address": "127.0.0.1", "port": $2, "transport": "udp"}$more]}$mgmt
}
JSON
}
refflows "$TMP/ref.tsv" >"$TMP/ref.flows"

# --- 1. replay to nfcapd ---------------------------------------------------------------------------
nfstart "$TMP/nf" $NF_PORT
mkcfg live $NF_PORT 15
replay live
sleep 0.3
nfstop
nfflows "$TMP/nf" >"$TMP/nf.flows"
check "the worker metered every IP frame ($(kv live worker0_frames) of $NFRAMES frames; the reference's flows hold $REF_FRAMES)" \
	[ "$(kv live worker0_frames)" = "$REF_FRAMES" ]
check "$(kv live records_in) records exported, as many as the reference's flows ($NREF), none lost (ring $(kv live worker0_lost_ring), collector $(kv live collector0_lost))" \
	cond "[ '$(kv live collector0_sent)' = $NREF ] && [ '$(kv live collector0_lost)' = 0 ] && [ '$(kv live worker0_lost_ring)' = 0 ] && [ $NREF -gt 80 ]"
check "the graceful stop flushed the open flows (forced end: $(kv live worker0_forced))" cond "[ '$(kv live worker0_forced)' -gt 0 ]"
check "nfdump prints $(wc -l <"$TMP/nf.flows") flows: each equals a reference flow (protocol, addresses, ports, VLAN, ingress port, packets, bytes)" \
	cmp -s "$TMP/nf.flows" "$TMP/ref.flows"
diff "$TMP/ref.flows" "$TMP/nf.flows" | head -5 | sed 's/^/# ref<>nfdump: /'
check "nfcapd: no sequence failure or bad packet" cond "! grep -Eq 'Sequence Errors: [1-9]|Bad Packets: [1-9]' '$TMP/nf.log'"
check "forwarding unchanged: p1 got every frame ($(pctr "$TMP/live.log" p1 tx_packets) of $NFRAMES)" \
	[ "$(pctr "$TMP/live.log" p1 tx_packets)" = "$NFRAMES" ]

# --- 2. nobody listening ---------------------------------------------------------------------------
COLLECTORS=", {\"address\": \"127.0.0.1\", \"port\": $DEAD_PORT, \"transport\": \"tcp\"}" mkcfg dead $DEAD_PORT 15
replay dead
check "collector down: every frame still forwarded ($(pctr "$TMP/dead.log" p1 tx_packets) of $NFRAMES), none dropped" \
	cond "[ '$(pctr "$TMP/dead.log" p1 tx_packets)' = $NFRAMES ] && [ '$(pctr "$TMP/dead.log" p0 drop_packets)' = 0 ]"
check "collector down: the records are counted lost by the exporter ($(kv dead collector0_lost) of $(kv dead records_in), sent $(kv dead collector0_sent)), none on the ring ($(kv dead worker0_lost_ring))" \
	cond "[ '$(kv dead records_in)' = $NREF ] && [ \$(( $(kv dead collector0_lost) + $(kv dead collector0_sent) )) -eq $NREF ] && [ '$(kv dead collector0_lost)' -gt 0 ] && [ '$(kv dead worker0_lost_ring)' = 0 ]"
check "TCP collector refused: every record counted lost ($(kv dead collector1_lost) of $NREF), none sent" \
	cond "[ '$(kv dead collector1_lost)' = $NREF ] && [ '$(kv dead collector1_sent)' = 0 ]"
check "collector down: logged, and an event collector_down" \
	cond "grep -q 'flows: collector 127.0.0.1:$DEAD_PORT (udp) down' '$TMP/dead.log' && grep -q 'collector_down: flows.collectors\[0\] 127.0.0.1:$DEAD_PORT (udp)' '$TMP/dead.log'"

# --- 3. live: idle expiry, counters in the API -----------------------------------------------------
PAUSE=$TMP/bridge.pause
touch "$PAUSE"
nfstart "$TMP/nf2" $NF2_PORT
mkcfg idle $NF2_PORT 2 mgmt
inst_start_primary idle "$TMP/idle.json" SBX_TEST_BRIDGE_PAUSE_FILE="$PAUSE"
check "idle: primary ready" [ -f "$TMP/idle.ready" ] || { tail -20 "$TMP/idle-primary.log" | sed 's/^/# /'; exit 1; }
inst_start_mgmt idle "$TMP/idle.json" "$API"
check "idle: mgmt up" [ $? -eq 0 ] || exit 1
flows() { curl -fsS --max-time 5 "$API/flows"; }
f0=$(flows)
check "GET /flows: enabled on p0, timeouts 60 s / 2 s, one collector up, nothing metered yet" \
	cond "jq -e '.enabled and .ports == [\"p0\"] and .active_timeout_s == 60 and .idle_timeout_s == 2 and .collectors[0].state == \"up\" and .collectors[0].port == $NF2_PORT and .workers[0].flows_metered_frames == 0' <<<'$f0' >/dev/null"
t0=$(date +%s%N)
rm -f "$PAUSE"
wait_for 50 cond "[ \$(flows | jq '.workers[0].flows_metered_frames') = $REF_FRAMES ]"
sleep 0.5
f1=$(flows)
check "after the frames: $(jq '.workers[0].active' <<<"$f1") flows active, every frame metered" \
	cond "[ \$(jq '.workers[0].active' <<<'$f1') -gt 10 ] && [ \$(jq '.workers[0].flows_metered_frames' <<<'$f1') = $REF_FRAMES ]"
wait_for 60 cond "[ \$(flows | jq '.workers[0].active') = 0 ]"
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
f2=$(flows)
created=$(jq '.workers[0].flows_created' <<<"$f2")
check "idle timeout 2 s: every flow gone ${ms} ms after the frames came (2000..4500)" cond "[ $ms -ge 1900 ] && [ $ms -le 4500 ]"
check "idle: ended by idle timeout ($(jq '.workers[0].flows_expired_idle' <<<"$f2")) or TCP end ($(jq '.workers[0].flows_expired_end' <<<"$f2")), = created ($created) = the reference's flows, none forced" \
	cond "[ \$(jq '.workers[0] | .flows_expired_idle + .flows_expired_end' <<<'$f2') = $created ] && [ $created = $NREF ] && [ \$(jq '.workers[0].flows_expired_forced' <<<'$f2') = 0 ] && [ \$(jq '.workers[0].flows_expired_idle' <<<'$f2') -gt 10 ]"
wait_for 30 cond "[ \$(flows | jq '.collectors[0].records_sent') = $NREF ]"
check "idle: the exporter sent every record ($(flows | jq '.collectors[0].records_sent')), lost none" \
	cond "[ \$(flows | jq '.collectors[0].records_sent') = $NREF ] && [ \$(flows | jq '.collectors[0].records_lost') = 0 ]"
# top talkers: the 20 largest records of the last minute (bytes), as the reference's 20 largest flows
sleep 1.2 # the exporter rewrites the list every second
curl -fsS --max-time 5 "$API/flows/top" >"$TMP/top.json"
want=$(awk '{print $11}' "$TMP/ref.tsv" | sort -rn | head -20 | tr '\n' ' ')
got=$(jq -r '[.flows[].bytes] | map(tostring) | join(" ")' "$TMP/top.json")
check "GET /flows/top: the 20 largest flows by bytes, as the reference's ($got)" [ "$got " = "$want" ]
big=$(sort -t$'\t' -k11,11nr "$TMP/ref.tsv" | head -1 | awk -F'\t' '{print $2, $3, $4, $5, $6, $10}')
first=$(jq -r '.flows[0] | "\(.src) \(.dst) \(.protocol) \(.src_port) \(.dst_port) \(.packets)"' "$TMP/top.json")
check "GET /flows/top: the largest is the reference's ($big), with window_s 60, its port and times" \
	cond "[ '$first' = '$big' ] && jq -e '.window_s == 60 and .updated != null and .flows[0].port == \"p0\" and (.flows[0].first | startswith(\"20\"))' '$TMP/top.json' >/dev/null"
curl -fsS --max-time 5 "$API/status" >"$TMP/status.json"
check "/status workers[0] has the flows_* counters (flows_metered_frames $REF_FRAMES, flows_created $NREF)" \
	cond "jq -e '.workers[0] | .. | objects | select(has(\"flows_metered_frames\")) | .flows_metered_frames == $REF_FRAMES and .flows_created == $NREF' '$TMP/status.json' >/dev/null"
curl -fsS --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics.txt"
check "/metrics: spanbox_worker_flows_metered_frames_total $REF_FRAMES and ..._expired_idle_total" \
	cond "grep -q '^spanbox_worker_flows_metered_frames_total{.*} $REF_FRAMES\$' '$TMP/metrics.txt' && grep -q '^spanbox_worker_flows_expired_idle_total{' '$TMP/metrics.txt'"
grep '^spanbox_worker_flows_metered' "$TMP/metrics.txt" | sed 's/^/# /'
inst_cleanup
nfstop
nfflows "$TMP/nf2" >"$TMP/nf2.flows"
check "idle: nfdump has the same flows as the reference" cmp -s "$TMP/nf2.flows" "$TMP/ref.flows"

# --- 4. a worker killed with flows in its table ----------------------------------------------------
touch "$PAUSE"
mkcfg kill $DEAD_PORT 60 mgmt
inst_start_primary kill "$TMP/kill.json" SBX_TEST_BRIDGE_PAUSE_FILE="$PAUSE"
inst_start_mgmt kill "$TMP/kill.json" "$API"
check "kill: primary and mgmt up" [ $? -eq 0 ] || exit 1
rm -f "$PAUSE"
wait_for 50 cond "[ \$(flows | jq '.workers[0].flows_metered_frames') = $REF_FRAMES ]"
sleep 0.3
k0=$(flows)
active=$(jq '.workers[0].active' <<<"$k0")
wpid=$(curl -fsS --max-time 5 "$API/workers" | jq '.[0].pid // .workers[0].pid')
kill -9 "$wpid"
wait_for 100 cond "[ \$(curl -fsS --max-time 5 '$API/workers' | jq '(.[0] // .workers[0]) | select(.state == \"running\") | .pid') -ne $wpid ] 2>/dev/null"
wait_for 30 cond "[ \$(flows | jq '.workers[0].flows_records_lost_killed') -gt 0 ]"
k1=$(flows)
check "kill: the restarted worker counts the $active flows its predecessor held as lost ($(jq '.workers[0].flows_records_lost_killed' <<<"$k1")), its table is empty" \
	cond "[ $active -gt 10 ] && [ \$(jq '.workers[0].flows_records_lost_killed' <<<'$k1') = $active ] && [ \$(jq '.workers[0].active' <<<'$k1') = 0 ]"
check "kill: its counters go on from the predecessor's (flows_created $(jq '.workers[0].flows_created' <<<"$k1"))" \
	cond "[ \$(jq '.workers[0].flows_created' <<<'$k1') = \$(jq '.workers[0].flows_created' <<<'$k0') ]"
inst_cleanup
