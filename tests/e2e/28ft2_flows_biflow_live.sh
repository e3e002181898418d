#!/usr/bin/env bash
# Biflows (RFC 5103, flows.biflow) in the running product (docs/FLOWS.md "Biflows"): the worker's
# flow stage (secondary/flows.c) with a table that meters biflows, its ring, the primary's exporter.
#  1. A pcap input port replays 10 real captures of ../shared/captures concatenated
#     (spanbox-primary --replay, flows on p0 with "biflow": true): nfcapd on 127.0.0.1 receives the
#     IPFIX over UDP and every record nfdump prints (protocol, addresses, ports, VLAN, ingress port,
#     packets, bytes, and the reverse packets and bytes it reads from PEN 29305) equals
#     tests/lib/flows_ref.py --biflow's from the same file (timeouts that never fire: the worker's
#     clock is not the capture's); nothing lost; many records carry a reverse direction.
#  2. The same replay without "biflow": twice as many records for the two-way flows, none with a
#     reverse count (the option is what makes the difference).
# Resources: file prefix sbxft<pid>, lcores 116 (worker) 117 (primary), collector UDP 19122.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/flows.sh"
PREFIX=sbxft$$
REF="python3 $ROOT/tests/lib/flows_ref.py"
NF_PORT=19122
for t in nfcapd nfdump mergecap capinfos; do
	command -v $t >/dev/null || { not_ok "$t not installed (./spanbox install-deps)"; exit 1; }
done
NAMES=(plain_tcpdump_dns_udp plain_tcpreplay_test bulk_zeek_ftp-8317-small vlan_zeek_http-vlan-0
	vlan_zeek_http-qinq-0 frag_suricata_vlan-ipv6-frag frag_zeek_ipv4-frag-4 fmt_zeek_nanosecond
	fmt_tcpdump_bigendian jumbo_zeek_smtp-8754)
CAPS=()
for n in "${NAMES[@]}"; do CAPS+=("$CAPTURES/$n.pcap"); done
mergecap -a -F pcap -w "$TMP/in.pcap" "${CAPS[@]}" || { not_ok "mergecap"; exit 1; }
NFRAMES=$(capinfos -Mc "$TMP/in.pcap" | awk '/Number of packets/ {print $NF}')
$REF --biflow --active 1e9 --idle 1e9 "$TMP/in.pcap" >"$TMP/ref.tsv"
$REF --active 1e9 --idle 1e9 "$TMP/in.pcap" >"$TMP/ref_uni.tsv"
NREF=$(wc -l <"$TMP/ref.tsv")
NREV=$(awk -F'\t' '$15 > 0' "$TMP/ref.tsv" | wc -l)
NUNI=$(wc -l <"$TMP/ref_uni.tsv")

# mkcfg TAG BIFLOW(true|false)
mkcfg() {
	cat >"$TMP/$1.json" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 117, "mgmt_lcore": 118},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$TMP/in.pcap", "mtu": 9000},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$TMP/$1_p1.pcap", "mtu": 9000}
  ],
  "workers": {"count": 1, "lcores": [116], "standby": 0},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "flows": {"ports": [{"port": "p0", "direction": "rx"}], "observation_domain_id": 29, "biflow": $2,
            "collectors": [{"address": "127.0.0.1", "port": $NF_PORT, "transport": "udp"}]}
}
JSON
}
# biflows as comparable lines: proto src dst sport dport vlan port packets bytes rev_packets rev_bytes
nfbiflows() { nflines "$1" "%pr|%sa|%da|%sp|%dp|%svln|%in|%pkt|%byt|%opkt|%obyt"; }
refbiflows() { refcols "$1" "3 1 2 4 5 6 8 9 10 14 15"; }
refbiflows "$TMP/ref.tsv" >"$TMP/ref.flows"

# --- 1. biflow on ------------------------------------------------------------------------------------
nfstart "$TMP/nf" $NF_PORT
mkcfg bi true
replay bi
sleep 0.3
nfstop
nfbiflows "$TMP/nf" >"$TMP/nf.flows"
check "biflow: the worker metered every IP frame ($(kv bi worker0_frames) of $NFRAMES frames)" \
	[ "$(kv bi worker0_frames)" = "$(awk -F'\t' '{s += $10 + $15} END {print s}' "$TMP/ref.tsv")" ]
check "biflow: $(kv bi records_in) records exported, as many as the reference's biflows ($NREF, $NREV with a reverse direction), none lost (ring $(kv bi worker0_lost_ring), collector $(kv bi collector0_lost))" \
	cond "[ '$(kv bi collector0_sent)' = $NREF ] && [ '$(kv bi collector0_lost)' = 0 ] && [ '$(kv bi worker0_lost_ring)' = 0 ] && [ $NREV -gt 20 ]"
check "biflow: nfdump prints $(wc -l <"$TMP/nf.flows") records, each equal to a reference biflow (key in the first frame's direction, packets, bytes, reverse packets and bytes)" \
	cmp -s "$TMP/nf.flows" "$TMP/ref.flows"
diff "$TMP/ref.flows" "$TMP/nf.flows" | head -5 | sed 's/^/# ref<>nfdump: /'
check "biflow: forwarding unchanged, p1 got every frame ($(pctr "$TMP/bi.log" p1 tx_packets) of $NFRAMES)" \
	[ "$(pctr "$TMP/bi.log" p1 tx_packets)" = "$NFRAMES" ]

# --- 2. biflow off: unidirectional records ------------------------------------------------------------
rm -rf "$TMP/nf2"
nfstart "$TMP/nf2" $NF_PORT
mkcfg uni false
replay uni
sleep 0.3
nfstop
nrev=$(nfbiflows "$TMP/nf2" | awk '$10 > 0 || $11 > 0' | wc -l)
check "without biflow: $(kv uni collector0_sent) records (the reference's unidirectional $NUNI, more than $NREF biflows), none with a reverse count ($nrev)" \
	cond "[ '$(kv uni collector0_sent)' = $NUNI ] && [ $NUNI -gt $NREF ] && [ $nrev = 0 ]"
exit 0
