#!/usr/bin/env bash
# The ingress tunnel parser (shared/decap.c) on the real captures of ../shared/captures, against
# tshark as the independent decoder: build/tests/sbx-decap-pcap parses every frame (inner frames to
# a pcap, a TSV line per frame) and tests/lib/decap_tshark.py compares, per capture, which frames are
# tunnels, their kind, the inner frames byte for byte, session ids / VNIs / keys, VLAN, COS, T and
# GRE sequence numbers. Then the facts the issue names, the malformed captures (never a crash, never
# "ok"), and a negative control (a one-byte change in our output must be reported).
# No EAL, no port, no root: nothing collides with a running spanbox.
#
# What tshark says and what we say, where they differ for a reason:
#  - gre_teb_zeek_keyed: 55 frames are outer IPv4 fragments of GRE (MF or an offset). With IP
#    reassembly off, tshark decodes the 16 first fragments as GRE-TEB with a partial inner frame;
#    the parser says "fragment" for all 55 (one frame tells nothing of the datagram; the worker's
#    stage reassembles them: tests/e2e/63b_ingress_fragments.sh). The script accepts a tunnel frame
#    of tshark's that we do not decode only when tshark sees a fragment.
#  - gre_suricata_gre-sample (GRE carrying IPv4), gre_suricata_vlan-gre-udp (VLAN, GRE carrying
#    IPv4), gre_tcpdump_various (GRE keepalives, CDP, Cisco metadata 0x8909): tshark decodes GRE
#    but no inner Ethernet frame; we say not_tunnel (not a tunnel spanbox terminates).
#  - erspan3_tcpdump_iii-pb-1_malformed: a raw-IP capture (linktype 7); IPv6 with a Destination
#    Options header in front of GRE/ERSPAN III. tshark walks the extension header; we do not walk
#    IPv6 extension headers (decap.h): not_tunnel. sbx-decap-pcap gives raw IP a synthetic
#    Ethernet header. The frame is 79 of 188109 bytes captured; its GRE flags are 0x1d00 (S plus the
#    strict source route and recursion bits), which we would call gre_unsupported if we walked there.
#  - gre_tcpdump_heapoverflow-1_malformed: frame 1 Ethernet with an unknown EtherType, frame 2 an
#    IPv4 EtherType with version 0 ("Bogus IPv4 version" in tshark): not_tunnel both.
#  - bad_suricata_ipv4-totlen-65028: IPv4 UDP, total length 65028 in a 1530-byte frame (tshark:
#    "IPv4 total length exceeds packet length"): length_mismatch.
#  - bad_suricata_udp-len-invalid: UDP length 5 (tshark: "Bad length value 5 < 8"): length_mismatch
#    (kind VXLAN: any UDP datagram is a candidate; the stage counts it only on a VXLAN rule's port).
#  - bad_tcpdump_udp-length-heapoverflow: 38 of 262144 bytes captured, IPv4 length 12336:
#    length_mismatch (the parser sees the captured bytes, as net_pcap delivers them).
#  - bad_zeek_ipv4-broken-header (tshark "Bogus IP length"), bad_suricata_too-many-layers (MPLS
#    pseudowires), trunc_*: no GRE/UDP header to claim a tunnel: not_tunnel.
source "$(dirname "$0")/../lib/common.sh"
trap 'rm -rf "$TMP"' EXIT
BIN=${DECAP_PCAP_BIN:-$BUILD/tests/sbx-decap-pcap}
TUNNELS=(erspan1_suricata_typeI-02 erspan1_tcpdump_i-1 erspan1_zeek erspan2_suricata_bug5437-60pkts
	erspan2_suricata_typeII-01 erspan2_tcpdump_ii-1 erspan2_tcpdump_ii-2 erspan2_zeek erspan3_tcpdump_iii-ft-0
	erspan3_zeek gre_suricata_gre-sample gre_suricata_vlan-gre-udp gre_tcpdump_various gre_teb_zeek_keyed
	jumbo_zeek_vxlan-http-9100 vxlan_suricata_100pkts vxlan_tcpdump)
# malformed captures: NAME=the result of every frame, in order
MALFORMED=(erspan3_tcpdump_iii-pb-1_malformed=not_tunnel gre_tcpdump_heapoverflow-1_malformed=not_tunnel,not_tunnel
	bad_suricata_ipv4-totlen-65028=length_mismatch bad_suricata_too-many-layers=not_tunnel
	bad_suricata_udp-len-invalid=length_mismatch bad_tcpdump_udp-length-heapoverflow=length_mismatch
	bad_zeek_ipv4-broken-header=not_tunnel trunc_tcpdump_tcp_rst_data=not_tunnel trunc_zeek_eth-hdr=not_tunnel
	trunc_zeek_icmp-payload=not_tunnel,not_tunnel,not_tunnel,not_tunnel trunc_zeek_ip4-trunc=not_tunnel
	trunc_zeek_ip6-trunc=not_tunnel)

if ! command -v tshark >/dev/null; then not_ok "tshark is installed"; exit 1; fi
if [ ! -x "$BIN" ]; then not_ok "$BIN is built (ninja -C build)"; exit 1; fi

# run NAME: sbx-decap-pcap on CAPTURES/NAME.pcap into TMP/NAME.{tsv,pcap}; exit status in TMP/NAME.rc
run() {
	"$BIN" "$CAPTURES/$1.pcap" "$TMP/$1.pcap" >"$TMP/$1.tsv" 2>"$TMP/$1.err"
	echo $? >"$TMP/$1.rc"
}

for n in "${TUNNELS[@]}"; do
	if [ ! -r "$CAPTURES/$n.pcap" ]; then not_ok "$n.pcap is readable in $CAPTURES"; continue; fi
	run "$n"
	check "$n: sbx-decap-pcap exits 0" [ "$(cat "$TMP/$n.rc")" = 0 ] || sed 's/^/# /' "$TMP/$n.err"
	python3 "$ROOT/tests/lib/decap_tshark.py" "$CAPTURES/$n.pcap" "$TMP/$n.tsv" "$TMP/$n.pcap" --facts \
		>"$TMP/$n.cmp" 2>"$TMP/$n.cmp.err" || { not_ok "$n: tshark comparison ran"; sed 's/^/# /' "$TMP/$n.cmp.err"; }
	grep -v '^# facts' "$TMP/$n.cmp"
done

# TSV columns: 1 index 2 result 3 kind 4 id 5 seq 6 seq_present 7 vlan 8 cos 9 truncated 10 inner_off 11 inner_len
f=$TMP/erspan2_tcpdump_ii-1.tsv
check "erspan2_tcpdump_ii-1: our one frame is ERSPAN II, session 666, VLAN 342, COS 6 (tshark: $(grep -o 'ids=[^ ]* vlans=[^ ]* coss=[^ ]*' "$TMP/erspan2_tcpdump_ii-1.cmp"))" \
	[ "$(cut -f2,3,4,7,8 "$f" 2>/dev/null | tr '\t' ' ')" = "ok 2 666 342 6" ]
want=$(grep -o 'ids=666 vlans=342 coss=6' "$TMP/erspan2_tcpdump_ii-1.cmp")
check "erspan2_tcpdump_ii-1: tshark reads session 666, VLAN 342, COS 6 too" [ -n "$want" ]
n_dst=$(python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read(); off = 24; n = 0
while off + 16 <= len(b):
    incl = struct.unpack("<I", b[off + 8:off + 12])[0]
    n += b[off + 16:off + 22] == bytes.fromhex("a683e70c9064"); off += 16 + incl
print(n)' "$TMP/erspan1_zeek.pcap" 2>/dev/null)
check "erspan1_zeek: ERSPAN type I, inner destination a6:83:e7:0c:90:64 in ${n_dst:-0} of our inner frames (all frames ERSPAN I)" \
	cond '[ "${n_dst:-0}" -gt 0 ] && [ "$(cut -f2,3 "$TMP/erspan1_zeek.tsv" | sort -u | tr "\t" " ")" = "ok 1" ]'
f=$TMP/erspan2_suricata_bug5437-60pkts.tsv
sessions=$(cut -f4 "$f" 2>/dev/null | sort -nu | tr '\n' ' ')
check "erspan2_suricata_bug5437-60pkts: 60 ERSPAN II frames, four sessions ($sessions), every sequence number present and 0 (not maintained)" \
	cond '[ "$(cut -f2,3 "$f" | sort | uniq -c | tr -s " ")" = " 60 ok	2" ] && [ "$(cut -f4 "$f" | sort -u | wc -l)" -eq 4 ] && [ "$(cut -f5,6 "$f" | sort -u | tr "\t" " ")" = "0 1" ]'
f=$TMP/gre_teb_zeek_keyed.tsv
check "gre_teb_zeek_keyed: 232 GRE-TEB frames ok, 55 outer IP fragments (fragment: for the stage to reassemble)" \
	cond '[ "$(cut -f2 "$f" | grep -c "^ok$")" -eq 232 ] && [ "$(cut -f2 "$f" | grep -c "^fragment$")" -eq 55 ]'

for m in "${MALFORMED[@]}"; do
	n=${m%%=*} want=${m#*=}
	if [ ! -r "$CAPTURES/$n.pcap" ]; then not_ok "$n.pcap is readable in $CAPTURES"; continue; fi
	run "$n"
	got=$(cut -f2 "$TMP/$n.tsv" | paste -sd, -)
	frames=$(tshark -r "$CAPTURES/$n.pcap" -T fields -e frame.number 2>/dev/null | wc -l)
	check "$n: no crash, $frames frame(s), each malformed or not a tunnel: $got" \
		cond '[ "$(cat "$TMP/$n.rc")" = 0 ] && [ "$got" = "$want" ] && [ "$(wc -l <"$TMP/$n.tsv")" -eq "$frames" ]'
done

# negative control: one byte of one inner frame changed, one session id changed: both reported
n=erspan2_zeek
cp "$TMP/$n.pcap" "$TMP/bad.pcap"
printf '\xff' | dd of="$TMP/bad.pcap" bs=1 seek=$((24 + 16 + 20)) conv=notrunc 2>/dev/null
python3 "$ROOT/tests/lib/decap_tshark.py" "$CAPTURES/$n.pcap" "$TMP/$n.tsv" "$TMP/bad.pcap" >"$TMP/neg1" 2>&1
awk -F'\t' 'BEGIN { OFS = "\t" } NR == 2 { $4 = $4 + 1 } { print }' "$TMP/$n.tsv" >"$TMP/bad.tsv"
python3 "$ROOT/tests/lib/decap_tshark.py" "$CAPTURES/$n.pcap" "$TMP/bad.tsv" "$TMP/$n.pcap" >"$TMP/neg2" 2>&1
check "negative control: a changed inner byte and a changed session id are both reported (not ok)" \
	cond 'grep -q "^not ok - .*byte for byte" "$TMP/neg1" && grep -q "^not ok - .*session" "$TMP/neg2"'
