#!/usr/bin/env bash
# Flow metering at its edges in the running product (issue #28, docs/FLOWS.md "Tests"):
#  1. A terminated VXLAN capture: three real VXLAN captures of ../shared/captures (SSH and DNS, ICMP
#     and ARP, a jumbo HTTP exchange) concatenated and replayed (spanbox-primary --replay) through a
#     pcap port whose ports[].ingress.decap terminates VXLAN, flows metering that port: nfcapd
#     receives the INNER flows, each equal (key, packets, bytes) to tests/lib/flows_ref.py's
#     --decap-vxlan (scapy takes the inner frames), none of the outer tunnel's; the output port's
#     capture (what the tools see) metered without decap gives the same flows.
#  2. A full flow table: flows_per_worker 1024 (the minimum) and 5,000 generated UDP flows of 2
#     frames (first frames of all, then the second frames: the newest 512 still in the table, the
#     next 512 each after a new flow that pushes it out in the same burst, then the rest):
#     every frame forwarded; GET /api/v1/flows shows flows_evicted_full = the reference's
#     evictions, active = the capacity; the records that left are early ones (end reason
#     "resources" in GET /api/v1/flows/top, timeouts far away); nfcapd's records equal
#     flows_ref.py --capacity 1024's (each flow split where the table pushed it out), the pushed-out
#     ones with flowEndReason 5 (lack of resources), the rest 4 (the stop's flush), and their
#     packets and bytes add up to exactly the frames and IP octets metered.
# Resources: file prefix sbxfx<pid>, lcores 76 (worker) 77 (primary) 78 (mgmt), API 19060,
# collector UDP 19061 (nfcapd, 1), 19062 (nfcapd, 2).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/flows.sh"
PREFIX=sbxfx$$
REF="/usr/bin/python3 $ROOT/tests/lib/flows_ref.py --active 1e9 --idle 1e9" # scapy: Debian's python
PORT=19060 API=http://127.0.0.1:19060/api/v1
NF1_PORT=19061 NF2_PORT=19062
CAP=1024
for t in nfcapd nfdump mergecap capinfos jq curl; do
	command -v $t >/dev/null || { not_ok "$t not installed (./spanbox install-deps)"; exit 1; }
done
/usr/bin/python3 -c 'import scapy.all' 2>/dev/null || { ok "VXLAN decap and full table need scapy (python3-scapy) # SKIP"; exit 0; }

# mkcfg TAG IN_PCAP COLLECTOR_PORT INGRESS FLOWS_MORE [MGMT]
mkcfg() {
	local mgmt=""
	[ -n "${6:-}" ] && mgmt=", \"mgmt\": {\"port\": $PORT, \"database\": \"$TMP/$1.db\", \"token\": \"fx28e-token-0123456789abcdef\"}"
	cat >"$TMP/$1.json" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 77, "mgmt_lcore": 78},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$2", "mtu": 9600$4},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$TMP/$1_p1.pcap", "mtu": 9600}
  ],
  "workers": {"count": 1, "lcores": [76], "standby": 0},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "flows": {"ports": [{"port": "p0", "direction": "rx"}], "observation_domain_id": 28$5,
            "collectors": [{"address": "127.0.0.1", "port": $3, "transport": "udp"}]}$mgmt
}
JSON
}

# --- 1. a terminated VXLAN capture -----------------------------------------------------------------
CAPS=()
for n in vxlan_suricata_100pkts vxlan_tcpdump jumbo_zeek_vxlan-http-9100; do CAPS+=("$CAPTURES/$n.pcap"); done
mergecap -a -F pcap -w "$TMP/vx.pcap" "${CAPS[@]}" || { not_ok "mergecap"; exit 1; }
NFRAMES=$(capinfos -Mc "$TMP/vx.pcap" | awk '/Number of packets/ {print $NF}')
$REF --decap-vxlan 4789 "$TMP/vx.pcap" >"$TMP/inner.tsv"
$REF "$TMP/vx.pcap" >"$TMP/outer.tsv"
refflows "$TMP/inner.tsv" >"$TMP/inner.flows"
refflows "$TMP/outer.tsv" >"$TMP/outer.flows"
NREF=$(wc -l <"$TMP/inner.tsv")
REF_FRAMES=$(awk '{s += $10} END {print s}' "$TMP/inner.tsv")
check "reference: the $NFRAMES frames hold $NREF inner flows ($REF_FRAMES IP frames inside), no flow of the outer tunnel's among them" \
	cond "[ $NREF -gt 10 ] && ! grep -q ' 4789 ' '$TMP/inner.flows' && [ -z \"\$(comm -12 '$TMP/inner.flows' '$TMP/outer.flows')\" ]"
nfstart "$TMP/nf1" $NF1_PORT
mkcfg vx "$TMP/vx.pcap" $NF1_PORT ', "ingress": {"decap": [{"type": "vxlan"}]}' ""
replay vx
sleep 0.3
nfstop
nfflows "$TMP/nf1" >"$TMP/nf1.flows"
check "decap: p0 terminated every frame as VXLAN (decap_packets $(pctr "$TMP/vx.log" p0 decap_packets) of $NFRAMES)" \
	[ "$(pctr "$TMP/vx.log" p0 decap_packets)" = "$NFRAMES" ]
check "decap: the worker metered the inner IP frames ($(kv vx worker0_frames), the reference's $REF_FRAMES)" \
	[ "$(kv vx worker0_frames)" = "$REF_FRAMES" ]
check "decap: $(kv vx records_in) records exported, as many as the inner flows ($NREF), none lost (ring $(kv vx worker0_lost_ring), collector $(kv vx collector0_lost))" \
	cond "[ '$(kv vx collector0_sent)' = $NREF ] && [ '$(kv vx collector0_lost)' = 0 ] && [ '$(kv vx worker0_lost_ring)' = 0 ]"
check "decap: nfdump prints $(wc -l <"$TMP/nf1.flows") flows, each an inner flow of the reference (protocol, addresses, ports, VLAN, port, packets, bytes); $(diff "$TMP/inner.flows" "$TMP/nf1.flows" | grep -c '^[<>]') differ" \
	cmp -s "$TMP/nf1.flows" "$TMP/inner.flows"
diff "$TMP/inner.flows" "$TMP/nf1.flows" | head -5 | sed 's/^/# ref<>nfdump: /'
check "decap: nfcapd saw no sequence failure or bad packet" cond "! grep -Eq 'Sequence Errors: [1-9]|Bad Packets: [1-9]' '$TMP/nf1.log'"
$REF "$TMP/vx_p1.pcap" >"$TMP/p1.tsv" 2>/dev/null
refflows "$TMP/p1.tsv" >"$TMP/p1.flows"
check "decap: p1 got every frame decapsulated ($(pctr "$TMP/vx.log" p1 tx_packets) of $NFRAMES); its capture metered as it is gives the same flows (what the tools see is what is counted)" \
	cond "[ '$(pctr "$TMP/vx.log" p1 tx_packets)' = $NFRAMES ] && cmp -s '$TMP/p1.flows' '$TMP/inner.flows'"

# --- 2. a full flow table --------------------------------------------------------------------------
N=5000
/usr/bin/python3 - "$TMP/full.pcap" $N $CAP <<'EOF' || { not_ok "scapy: the frames of 5,000 flows"; exit 1; }
import sys
from scapy.all import Ether, IP, UDP, Raw, wrpcap
out, n, cap = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def frame(i, second):
    return (Ether(src="02:00:00:00:28:0e", dst="02:00:00:00:28:0f") /
            IP(src="10.28.%d.%d" % (i // 256, i % 256), dst="192.0.2.%d" % (1 + i % 7)) /
            UDP(sport=1024 + i, dport=9000 + i % 11) / Raw(b"x" * (10 + i % 300 + second)))
half = cap // 2
# after the first frames the table holds the newest cap flows, n - cap .. n - 1
order = [(i, 0) for i in range(n)]
order += [(i, 1) for i in range(n - 1, n - 1 - half, -1)]  # still in the table: counted on it
for k in range(half):  # a new flow pushes out the oldest, whose frame follows in the same burst
    order += [(k, 1), (n - cap + k, 1)]
order += [(i, 1) for i in range(half, n - cap)]
assert sorted(order) == sorted((i, s) for i in range(n) for s in (0, 1))
wrpcap(out, [frame(i, s) for i, s in order])
EOF
FFRAMES=$((2 * N))
$REF --capacity $CAP "$TMP/full.pcap" >"$TMP/full.tsv"
$REF "$TMP/full.pcap" >"$TMP/whole.tsv"
refflows "$TMP/full.tsv" >"$TMP/full.flows"
NFULL=$(wc -l <"$TMP/full.tsv")
FBYTES=$(awk '{s += $11} END {print s}' "$TMP/full.tsv")
EVICT=$((NFULL - CAP))
check "reference: $N flows in a table of $CAP make $NFULL records ($EVICT pushed out; $(awk '$10 == 2' "$TMP/full.tsv" | wc -l) with both frames), where an unbounded table makes $(wc -l <"$TMP/whole.tsv")" \
	cond "[ $NFULL -gt $N ] && [ \$(awk '{s += \$10} END {print s}' '$TMP/full.tsv') = $FFRAMES ] && [ \$(awk '{s += \$11} END {print s}' '$TMP/whole.tsv') = $FBYTES ] && [ \$(wc -l <'$TMP/whole.tsv') = $N ]"
nfstart "$TMP/nf2" $NF2_PORT
mkcfg full "$TMP/full.pcap" $NF2_PORT "" ", \"flows_per_worker\": $CAP, \"active_timeout_s\": 86400, \"idle_timeout_s\": 3600" mgmt
inst_start_primary full "$TMP/full.json"
check "full: primary ready" [ -f "$TMP/full.ready" ] || { tail -20 "$TMP/full-primary.log" | sed 's/^/# /'; exit 1; }
inst_start_mgmt full "$TMP/full.json" "$API"
check "full: mgmt up" [ $? -eq 0 ] || exit 1
flows() { curl -fsS --max-time 5 "$API/flows"; }
wait_for 100 cond "[ \$(flows | jq '.workers[0].flows_metered_frames') = $FFRAMES ]"
wait_for 30 cond "[ \$(flows | jq '.collectors[0].records_sent') = $EVICT ]"
f=$(flows)
w() { jq ".workers[0].$1" <<<"$f"; }
check "full: every frame metered ($(w flows_metered_frames) of $FFRAMES), none refused (non_ip $(w flows_non_ip))" \
	cond "[ '$(w flows_metered_frames)' = $FFRAMES ] && [ '$(w flows_non_ip)' = 0 ]"
check "full: GET /flows: flows_per_worker $CAP, active $(w active) (= the capacity), flows_evicted_full $(w flows_evicted_full) (the reference's $EVICT), created $(w flows_created) ($NFULL)" \
	cond "jq -e '.flows_per_worker == $CAP and .workers[0].active == $CAP and .workers[0].flows_evicted_full == $EVICT and .workers[0].flows_created == $NFULL' <<<'$f' >/dev/null"
check "full: no flow ended by a timeout or TCP (idle $(w flows_expired_idle), active $(w flows_expired_active), end $(w flows_expired_end), forced $(w flows_expired_forced))" \
	cond "jq -e '.workers[0] | .flows_expired_idle + .flows_expired_active + .flows_expired_end + .flows_expired_forced == 0' <<<'$f' >/dev/null"
check "full: the exporter sent the $EVICT records pushed out, lost none ($(jq '.collectors[0].records_lost' <<<"$f"))" \
	cond "jq -e '.records_in == $EVICT and .collectors[0].records_sent == $EVICT and .collectors[0].records_lost == 0 and .workers[0].flows_records_lost_ring == 0' <<<'$f' >/dev/null"
sleep 1.2 # the exporter rewrites the top talkers every second
curl -fsS --max-time 5 "$API/flows/top" >"$TMP/top.json"
check "full: GET /flows/top: the largest records are early ends, reason \"resources\" ($(jq -c '[.flows[].end_reason] | unique' "$TMP/top.json"))" \
	cond "jq -e '(.flows | length) == 20 and all(.flows[]; .end_reason == \"resources\")' '$TMP/top.json' >/dev/null"
curl -fsS --max-time 5 "$API/status" >"$TMP/status.json"
tx=$(jq '.ports[] | select(.name == "p1") | .workers.tx_packets' "$TMP/status.json")
check "full: forwarding unchanged, p1 sent every frame ($tx of $FFRAMES)" [ "$tx" = $FFRAMES ]
inst_cleanup
sleep 0.3
nfstop
nfflows "$TMP/nf2" >"$TMP/nf2.flows"
read -r npk nby < <(awk '{p += $8; b += $9} END {print p + 0, b + 0}' "$TMP/nf2.flows")
check "full: nfcapd holds $(wc -l <"$TMP/nf2.flows") records ($NFULL: the pushed-out ones and the $CAP the stop flushed) of $npk packets and $nby bytes: exactly the $FFRAMES frames and $FBYTES IP octets metered" \
	cond "[ \$(wc -l <'$TMP/nf2.flows') = $NFULL ] && [ $npk = $FFRAMES ] && [ $nby = $FBYTES ]"
check "full: each record equals the reference's with a table of $CAP (key, packets, bytes); $(diff "$TMP/full.flows" "$TMP/nf2.flows" | grep -c '^[<>]') differ" \
	cmp -s "$TMP/nf2.flows" "$TMP/full.flows"
diff "$TMP/full.flows" "$TMP/nf2.flows" | head -5 | sed 's/^/# ref<>nfdump: /'
nfdump -R "$TMP/nf2" -o raw 2>/dev/null | sed -n 's/^ *end reason *= *0x0*\([0-9]\).*/\1/p' | sort | uniq -c >"$TMP/reasons"
check "full: at nfcapd the $EVICT records pushed out end with reason 5 (lack of resources), the $CAP flushed at the stop with 4 (forced end): $(tr -s ' \n' ' ' <"$TMP/reasons")" \
	cond "[ \"\$(awk '{printf \"%s:%s \", \$2, \$1}' '$TMP/reasons')\" = '4:$CAP 5:$EVICT ' ]"
check "full: nfcapd saw no sequence failure or bad packet" cond "! grep -Eq 'Sequence Errors: [1-9]|Bad Packets: [1-9]' '$TMP/nf2.log'"
