#!/usr/bin/env bash
# GENEVE and GTP-U termination (issue #26), through the real worker (spanbox-primary --replay):
# captures built with scapy (tests/lib/geneve_gtpu_gen.py: IPv4 and IPv6 outer, GENEVE options,
# GTP-U extension headers, 802.1Q outer tags, inner IPv4 and IPv6), checked first by tshark as an
# independent decoder, then fed to a port with a geneve rule of VNI 100 or a gtpu rule of TEID 7:
#  - the output equals the inner frames of those VNIs / TEIDs, frame for frame, byte for byte
#    (GTP-U: the inner IP packet behind an Ethernet header of the outer MACs and its EtherType);
#  - frames of other VNIs / TEIDs and GTP-U signalling go by non_tunnel (dropped here, counted);
#  - malformed ones are counted by reason and dropped; nothing else comes out.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
PEQ="$ROOT/tests/lib/pcap_equal.py"
PRIMARY="$BUILD/primary/spanbox-primary"
trap '[ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
PREFIX=sbxgg$$
npkts() { capinfos -Mc "$1" | awk '/Number of packets/ {print $NF}'; }
eq() { if [ "$2" = "$3" ]; then ok "$1 ($2)"; else not_ok "$1 (got $2, expected $3)"; fi; }
peq() { python3 "$PEQ" "$1" "$2" | sed "s/^/# /"; return "${PIPESTATUS[0]}"; }
PY=python3
for p in python3 /usr/bin/python3; do "$p" -c 'import scapy.contrib.gtp' 2>/dev/null && { PY=$p; break; }; done

mkcfg() { # mkcfg TAG INPUT INGRESS_JSON
	cat >"$TMP/$1.json" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 81, "mgmt_lcore": 83},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$2", "mtu": 9000, "ingress": $3},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$TMP/$1_p1.pcap", "mtu": 9000}
  ],
  "workers": {"count": 1, "lcores": [82]},
  "forwarding": {"xconnects": [["p0", "p1"]]}
}
JSON
}

"$PY" "$ROOT/tests/lib/geneve_gtpu_gen.py" "$TMP" >"$TMP/gen.out" 2>&1
check "scapy built the captures ($(cat "$TMP/gen.out" | tail -n 1))" [ -s "$TMP/gtpu_inner.pcap" ] || { cat "$TMP/gen.out"; exit 1; }

# tshark first: the captures are what they claim to be
eq "tshark: 40 GENEVE frames, VNIs 100 and 200" \
	"$(tshark -r "$TMP/geneve.pcap" -Y 'geneve.vni == 100 or geneve.vni == 200' 2>/dev/null | wc -l)" 40
eq "tshark: 40 GTP-U G-PDUs (TEIDs 7 and 8), one echo request" \
	"$(tshark -r "$TMP/gtpu.pcap" -Y '(gtp.teid == 7 or gtp.teid == 8) and gtp.message == 255' 2>/dev/null | wc -l)+$(tshark -r "$TMP/gtpu.pcap" -Y 'gtp.message == 1' 2>/dev/null | wc -l)" "40+1"
eq "tshark: 14 GTP-U frames carry the PDU session container extension header" \
	"$(tshark -r "$TMP/gtpu.pcap" -Y 'gtp.ext_hdr.pdu_ses_con.qos_flow_id == 9' 2>/dev/null | wc -l)" 14

# GENEVE, VNI 100
mkcfg gen "$TMP/geneve.pcap" '{"decap": [{"type": "geneve", "vnis": [100]}], "non_tunnel": "drop"}'
replay gen
eq "geneve: decap_packets = the frames of VNI 100" "$(pctr "$TMP/gen.log" p0 decap_packets)" "$(npkts "$TMP/geneve_inner.pcap")"
eq "geneve: the VNI 200 frames go by non_tunnel (dropped)" "$(pctr "$TMP/gen.log" p0 non_tunnel_dropped)" 10
check "geneve: the output is the inner frames of VNI 100, frame for frame, byte for byte" peq "$TMP/geneve_inner.pcap" "$TMP/gen_p1.pcap"
eq "geneve: the tunnel table lists VNI 100 with its frames" "$(tctr "$TMP/gen.log" p0 100 packets)" "$(npkts "$TMP/geneve_inner.pcap")"

# GTP-U, TEID 7
mkcfg gtp "$TMP/gtpu.pcap" '{"decap": [{"type": "gtpu", "teids": [7]}], "non_tunnel": "drop"}'
replay gtp
eq "gtpu: decap_packets = the G-PDUs of TEID 7" "$(pctr "$TMP/gtp.log" p0 decap_packets)" "$(npkts "$TMP/gtpu_inner.pcap")"
eq "gtpu: each behind a synthesised Ethernet header (decap_ip_frames)" "$(pctr "$TMP/gtp.log" p0 decap_ip_frames)" "$(npkts "$TMP/gtpu_inner.pcap")"
eq "gtpu: TEID 8 and the echo request go by non_tunnel (dropped)" "$(pctr "$TMP/gtp.log" p0 non_tunnel_dropped)" 11
check "gtpu: the output is the inner IP packets behind the outer MACs and their EtherType, byte for byte" \
	peq "$TMP/gtpu_inner.pcap" "$TMP/gtp_p1.pcap"
eq "gtpu: tshark reads the output as 20 IPv4 and 10 IPv6 DNS datagrams" \
	"$(tshark -r "$TMP/gtp_p1.pcap" -Y 'ip and udp.dstport == 53' 2>/dev/null | wc -l)+$(tshark -r "$TMP/gtp_p1.pcap" -Y 'ipv6 and udp.dstport == 53' 2>/dev/null | wc -l)" "20+10"

# malformed: counted by reason, dropped, nothing out
mkcfg bad "$TMP/bad.pcap" '{"decap": [{"type": "geneve"}, {"type": "gtpu"}], "non_tunnel": "pass"}'
replay bad
eq "malformed: GENEVE version 1 and GENEVE carrying IPv4 counted as geneve_header" "$(pctr "$TMP/bad.log" p0 decap_malformed_geneve_header)" 2
eq "malformed: GTP-U version 2 and a payload that is no IP packet counted as gtpu_header" "$(pctr "$TMP/bad.log" p0 decap_malformed_gtpu_header)" 2
eq "malformed: nothing forwarded" "$(pctr "$TMP/bad.log" p1 tx_packets)" 0
