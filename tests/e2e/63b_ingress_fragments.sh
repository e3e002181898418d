#!/usr/bin/env bash
# Outer IP fragments on a port with decap rules (issue #24 item 4), through the real worker:
#  1. ordinary fragmented traffic (IPv6 DNS with Fragment headers, IPv4 DNS, an IPv4 TCP segment)
#     on a port with an erspan rule and non_tunnel pass: every frame passes as it is (before: the
#     UDP fragments were dropped as ip_fragment);
#  2. fragmented VXLAN (IPv4 in order and reversed, IPv6) and ERSPAN II (IPv4, IPv6) interleaved,
#     on a port with a vxlan and an erspan rule: reassembled (rte_ip_frag) and decapsulated, the
#     inner frames byte for byte; DNS fragments there (UDP: could be VXLAN) reassembled and passed
#     whole; TCP fragments passed as they are; a datagram missing a fragment dropped and counted;
#     tshark (IP reassembly on) is the independent decoder of which datagrams are tunnels;
#  3. gre_teb_zeek_keyed: its 55 outer fragments make 16 datagrams tshark decodes as GRE-TEB;
#  4. live, with mgmt: the incomplete datagram's fragments are dropped by the timeout while the
#     worker runs, and the pool audit explains every mbuf (none held, none unexplained); the pool
#     plan counts the reassembly table's mbufs.
# Captures built by tests/lib/frags_gen.py (scapy). Own prefix sbxfrag, lcores 106-108, API 18463.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
source "$ROOT/tests/lib/instance.sh"
PEQ="$ROOT/tests/lib/pcap_equal.py"
PREFIX=sbxfrag API=http://127.0.0.1:18463/api/v1
cleanup() { inst_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT

eq() { if [ "$2" = "$3" ]; then ok "$1 ($2)"; else not_ok "$1 (got $2, expected $3)"; fi; }
peq() { python3 "$PEQ" "$1" "$2" | sed "s/^/# /"; return "${PIPESTATUS[0]}"; }
npkts() { capinfos -Mc "$1" | awk '/Number of packets/ {print $NF}'; }

if ! /usr/bin/python3 "$ROOT/tests/lib/frags_gen.py" "$TMP" 2>"$TMP/gen.err"; then
	sed 's/^/# /' "$TMP/gen.err" | tail -3
	ok "captures of fragments need scapy (python3-scapy, ./spanbox install-deps) # SKIP"
	exit 0
fi
source "$TMP/facts"

# mkcfg TAG INPUT INGRESS_JSON [EXTRA]: p0 reads INPUT, p1 writes $TMP/TAG_p1.pcap
mkcfg() {
	cat >"$TMP/$1.json" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 106, "mgmt_lcore": 108},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$2", "mtu": 9600, "ingress": $3},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$TMP/$1_p1.pcap", "mtu": 9600}
  ],
  "workers": {"count": 1, "lcores": [107]},
  "forwarding": {"xconnects": [["p0", "p1"]]}${4:-}
}
JSON
}

# 1. ordinary fragments pass
mkcfg plain "$TMP/plain.pcap" '{"decap": [{"type": "erspan"}], "non_tunnel": "pass"}'
replay plain
L=$TMP/plain.log
eq "1: erspan rule, non_tunnel pass: every frame of $PLAIN_FRAMES passed (non_tunnel_passed)" \
	"$(pctr "$L" p0 non_tunnel_passed)" "$PLAIN_FRAMES"
eq "1: ... none dropped (drop_packets / decap_malformed_ip_fragment)" \
	"$(pctr "$L" p0 drop_packets)/$(pctr "$L" p0 decap_malformed_ip_fragment)" "0/0"
eq "1: ... no UDP fragment held for reassembly on a port without a vxlan rule" "$(pctr "$L" p0 reassembly_fragments)" 0
check "1: the output equals the input, frame for frame (IPv6 and IPv4 DNS fragments, TCP fragments)" \
	peq "$TMP/plain.pcap" "$TMP/plain_p1.pcap"

# 2. tunnels in fragments
mkcfg tun "$TMP/tun.pcap" '{"decap": [{"type": "vxlan"}, {"type": "erspan"}], "non_tunnel": "pass"}'
replay tun
L=$TMP/tun.log
tshark_tun=$(tshark -n -r "$TMP/tun.pcap" -o ip.defragment:TRUE -o ipv6.defragment:TRUE -Y 'vxlan || erspan' \
	-T fields -e frame.number 2>/dev/null | wc -l)
eq "2: tshark (reassembly on) decodes $TUN_DECAP tunnel frames in the capture (the generator's count)" "$tshark_tun" "$TUN_DECAP"
eq "2: decap_packets = tshark's tunnels" "$(pctr "$L" p0 decap_packets)" "$tshark_tun"
eq "2: reassembly_fragments = the outer GRE/UDP fragments ($TUN_FRAGMENTS)" "$(pctr "$L" p0 reassembly_fragments)" "$TUN_FRAGMENTS"
eq "2: reassembly_datagrams = the datagrams whole ($TUN_DATAGRAMS)" "$(pctr "$L" p0 reassembly_datagrams)" "$TUN_DATAGRAMS"
eq "2: the fragments of the datagram missing one dropped (decap_malformed_ip_fragment = drop_packets = $TUN_LOST)" \
	"$(pctr "$L" p0 decap_malformed_ip_fragment)/$(pctr "$L" p0 drop_packets)" "$TUN_LOST/$TUN_LOST"
eq "2: passed: 2 DNS datagrams reassembled, 2 TCP fragments as they are (non_tunnel_passed)" \
	"$(pctr "$L" p0 non_tunnel_passed)" "$TUN_PASSED"
eq "2: p1 sent $TUN_EXPECTED frames" "$(pctr "$L" p1 tx_packets)" "$TUN_EXPECTED"
check "2: the output is the inner frames and the whole datagrams, in the order their last fragment came" \
	peq "$TMP/tun_expected.pcap" "$TMP/tun_p1.pcap"
eq "2: tshark reads the reassembled IPv4 DNS answer whole (7 TXT strings, checksum good)" \
	"$(tshark -n -r "$TMP/tun_p1.pcap" -o ip.check_checksum:TRUE -Y 'dns.id == 7 && ip.checksum.status == 1' \
		-T fields -e dns.count.answers 2>/dev/null)" 1
for id in 41 42 43; do
	eq "2: tunnel table: VXLAN VNI $id, one frame" "$(tctr "$L" p0 $id packets)" 1
done
eq "2: tunnel table: ERSPAN sessions 301, 302 one frame each" "$(tctr "$L" p0 301 packets)/$(tctr "$L" p0 302 packets)" "1/1"

# 3. a public capture: GRE-TEB with fragmented outer datagrams
IN="$CAPTURES/gre_teb_zeek_keyed.pcap"
if [ -r "$IN" ]; then
	mkcfg zeek "$IN" '{"decap": [{"type": "gre"}], "non_tunnel": "drop"}'
	replay zeek
	L=$TMP/zeek.log
	want=$(tshark -n -r "$IN" -o ip.defragment:TRUE -Y 'gre && eth.type' -T fields -e frame.number 2>/dev/null | wc -l)
	eq "3: gre_teb_zeek_keyed: decap_packets = the GRE-TEB frames tshark decodes with reassembly ($want)" \
		"$(pctr "$L" p0 decap_packets)" "$want"
	eq "3: ... its 55 outer fragments made 16 datagrams, none dropped" \
		"$(pctr "$L" p0 reassembly_fragments)/$(pctr "$L" p0 reassembly_datagrams)/$(pctr "$L" p0 decap_malformed_ip_fragment)" "55/16/0"
	eq "3: ... p1 sent every inner frame" "$(pctr "$L" p1 tx_packets)" "$want"
else
	ok "3: gre_teb_zeek_keyed.pcap not readable in $CAPTURES # SKIP"
fi

# 4. live: the timeout drops what never completes; the pool audit explains every mbuf
TOKEN=sbxfrag-token-0123456789abcdef
mkcfg live "$TMP/tun.pcap" '{"decap": [{"type": "vxlan"}, {"type": "erspan"}], "non_tunnel": "pass"}' \
	", \"mgmt\": {\"port\": 18463, \"database\": \"$TMP/live.db\", \"token\": \"$TOKEN\"}"
inst_start_both live "$TMP/live.json" "$API" || exit 0
p0() { curl -fsS --max-time 5 "$API/status" | jq -r ".ports[] | select(.name == \"p0\") | .workers.$1"; }
wait_for 100 bash -c "[ \"\$(curl -fsS --max-time 5 '$API/status' | jq -r '.ports[] | select(.name == \"p0\") | .workers.rx_packets')\" = $TUN_FRAMES ]"
check "4: p0 received the $TUN_FRAMES frames" [ "$(p0 rx_packets)" = "$TUN_FRAMES" ]
# the timeout is 1 s: dropped by the worker's tick, not at its end
wait_for 50 bash -c "[ \"\$(curl -fsS --max-time 5 '$API/status' | jq -r '.ports[] | select(.name == \"p0\") | .workers.decap_malformed_ip_fragment')\" = $TUN_LOST ]"
eq "4: the $TUN_LOST fragments of the incomplete datagram dropped by the timeout while the worker runs" \
	"$(p0 decap_malformed_ip_fragment)" "$TUN_LOST"
pool=$(curl -fsS --max-time 5 "$API/pools" | jq -r '.[0].name')
check "4: the pool plan holds what p0's reassembly table may: 1 worker x 256 datagrams x 8 fragments" \
	bash -c "curl -fsS --max-time 5 '$API/pools/$pool' | jq -e '.plan.reassembly == 2048' >/dev/null"
audit() { curl -fsS --max-time 5 "$API/pools/$pool" | jq -c '.audit | del(.note)'; }
audit_ok() { audit | jq -e '.held_by_reassembly == 0 and .unexplained == 0' >/dev/null; }
wait_for 30 audit_ok
echo "# audit of $pool: $(audit)"
check "4: pool audit: no mbuf held by reassembly, none unexplained (no mbuf leaked)" audit_ok
inst_cleanup
check "4: the instance stopped" bash -c "! kill -0 $INST_PRIMARY 2>/dev/null"
