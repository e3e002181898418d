#!/usr/bin/env bash
# Tool groups, issue 13 test 1: 10,000 generated flows (tests/lib/flows_gen.py: IPv4 and IPv6, TCP,
# UDP, SCTP, 802.1Q tags, IPv4 fragments, non-IP frames; both directions) replayed from p0 through a
# cross-connect, mirrored (rx of p0) to a group of 4 pcap tool ports. tests/lib/flows_check.py reads
# the flow number each frame carries: every frame of the input on exactly one member, every flow
# (both directions) on one member, each member 0.8..1.2 x the mean number of flows. The replay's
# tool group table (buckets, counters) agrees with the captures. A second replay with "2tuple" and
# an ERSPAN encapsulation spreads the same way. Replay only (prefix tg67-<pid>, lcores 10-11).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
trap 'rm -rf "$TMP"' EXIT
PREFIX=tg67-$$
N=10000

npkts() { capinfos -Mc "$1" | awk '/Number of packets/ {print $NF}'; }
eq() { if [ "$2" = "$3" ]; then ok "$1 ($2)"; else not_ok "$1 (got $2, expected $3)"; fi; }
# gctr LOG GROUP/MEMBER COLUMN: a column of the replay's tool group table
gctr() {
	awk -v r="$2" -v c="$3" '$1 == "tool_group/member" {for (i = 1; i <= NF; i++) col[$i] = i; h = 1; next}
		h && $1 == r && (c in col) {v = $(col[c]); f = 1} END {print f ? v : "none"}' "$1"
}

# mkcfg TAG HASH ENCAP_JSON
mkcfg() {
	local tag=$1 hash=$2 encap=$3
	cat >"$TMP/$tag.json" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 10, "mgmt_lcore": 12},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$TMP/flows.pcap"},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$TMP/${tag}_p1.pcap"},
    {"name": "t0", "devargs": "net_pcap2,tx_pcap=$TMP/${tag}_t0.pcap"},
    {"name": "t1", "devargs": "net_pcap3,tx_pcap=$TMP/${tag}_t1.pcap"},
    {"name": "t2", "devargs": "net_pcap4,tx_pcap=$TMP/${tag}_t2.pcap"},
    {"name": "t3", "devargs": "net_pcap5,tx_pcap=$TMP/${tag}_t3.pcap"}
  ],
  "workers": {"count": 1, "lcores": [11]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "tool_groups": [ {"name": "ids", "members": ["t0", "t1", "t2", "t3"], "hash": "$hash"} ],
  "mirrors": [ {"id": 5, "name": "toids", "sources": [{"port": "p0", "direction": "rx"}],
                "destination": {"group": "ids"} $encap} ]
}
JSON
}

python3 "$ROOT/tests/lib/flows_gen.py" "$TMP/flows.pcap" $N --frames 2
IN=$(npkts "$TMP/flows.pcap")
echo "# input: $N flows, $IN frames"

mkcfg span 5tuple ""
replay span
L=$TMP/span.log
eq "span: p1 forwarded every frame" "$(pctr "$L" p1 tx_packets)" "$IN"
eq "span: session mirrored every frame" "$(mctr "$L" toids mirrored)" "$IN"
python3 "$ROOT/tests/lib/flows_check.py" "$TMP/flows.pcap" "span 5tuple" "$TMP"/span_t{0,1,2,3}.pcap
sum=0 bsum=0
for t in t0 t1 t2 t3; do
	sum=$((sum + $(gctr "$L" ids/$t packets)))
	bsum=$((bsum + $(gctr "$L" ids/$t buckets)))
	eq "span: ids/$t packets counter = frames in its capture" "$(gctr "$L" ids/$t packets)" "$(npkts "$TMP/span_$t.pcap")"
	eq "span: ids/$t holds 1024 buckets" "$(gctr "$L" ids/$t buckets)" 1024
done
eq "span: members' packets sum to the input" "$sum" "$IN"
eq "span: no copy without a member" "$(gctr "$L" ids/- no_member)" 0

# issue #24 item 6: UDP flows whose datagrams are whole or fragmented in turn stay on one member
# with the default 5tuple (before: most of them were split, the later fragments having no ports)
python3 "$ROOT/tests/lib/flows_gen.py" "$TMP/udpmix.pcap" 1000 --frames 6 --udp-mixed
sed "s|$TMP/flows.pcap|$TMP/udpmix.pcap|" "$TMP/span.json" >"$TMP/udpmix.json"
sed -i "s|${TMP}/span_|${TMP}/udpmix_|g" "$TMP/udpmix.json"
replay udpmix
eq "udp-mixed: session mirrored every frame" "$(mctr "$TMP/udpmix.log" toids mirrored)" "$(npkts "$TMP/udpmix.pcap")"
python3 "$ROOT/tests/lib/flows_check.py" "$TMP/udpmix.pcap" "udp-mixed 5tuple" "$TMP"/udpmix_t{0,1,2,3}.pcap

# the same flows with the 2-tuple hash and ERSPAN II copies (the hash is of the frame, not the copy)
mkcfg e2 2tuple ', "encap": {"type": "erspan2", "src_ip": "192.0.2.1", "dst_ip": "198.51.100.7", "dst_mac": "02:00:5e:10:00:01"}'
replay e2
L=$TMP/e2.log
eq "erspan2: session mirrored every frame" "$(mctr "$L" toids mirrored)" "$IN"
python3 "$ROOT/tests/lib/flows_check.py" "$TMP/flows.pcap" "erspan2 2tuple" "$TMP"/e2_t{0,1,2,3}.pcap
check "erspan2: tshark decodes the member captures as ERSPAN" \
	bash -c "[ \$(tshark -r '$TMP/e2_t0.pcap' -Y erspan 2>/dev/null | wc -l) -eq \$(capinfos -Mc '$TMP/e2_t0.pcap' | awk '/Number of packets/ {print \$NF}') ]"
