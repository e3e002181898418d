#!/usr/bin/env bash
# Flow records as IPFIX (issue #28, docs/FLOWS.md), the foundation without the appliance: the flow
# table (shared/flowtable.c, real rte_hash) and the exporter (shared/ipfix.c, libfixbuf) run in
# build/tests/sbx-flows-pcap on real captures of ../shared/captures, pcap timestamps as time.
# Two modes: unidirectional flows (this test, 28_flows_ipfix) and biflows (--biflow:
# 28ft_flows_biflow runs this script so).
#  1. nfdump's nfcapd collects our IPFIX over UDP on 127.0.0.1; every flow nfdump prints (protocol,
#     addresses, ports, VLAN, ingress interface, first and last ms, packets, bytes) equals what
#     tests/lib/flows_ref.py (plain Python, same rules) computes from the same captures, with the
#     default timeouts (60 s / 15 s) and with short ones (2 s / 0.5 s: the active and idle splits
#     of the long captures); the tool's own records (--records) equal the reference too.
#  2. tshark decodes the datagrams (captured on lo with tcpdump) as IPFIX (cflow): no malformed
#     field or expert warning, every data record decoded, their packet counts add up.
#  3. TCP: a collector (tests/lib/ipfix_collect.py) that closes the connection after 100 kB: the
#     loss is counted, the exporter reconnects, sends the templates first, and every record it
#     counts as sent arrives; sequence numbers continue.
#     UDP with a template period of 1 s: the templates come again every second.
#  4. No collector: UDP (ICMP port unreachable) and TCP (connection refused): losses counted, the
#     tool finishes at once.
# --biflow (RFC 5103, flows.biflow, docs/FLOWS.md "Biflows"): sbx-flows-pcap --biflow against
# flows_ref.py --biflow, parts 1 and 2 only:
#  1. The tool's records equal the reference's: one record per flow for both directions, forward =
#     the first frame's direction, the reverse direction's packets, bytes and TCP flags; many
#     records have a reverse direction. nfdump maps the reverse elements (PEN 29305)
#     reverseOctetDeltaCount / reversePacketDeltaCount to its output counters (src/netflow/ipfix.c
#     ipfixReverseMap): every flow, with its forward and reverse packets and bytes (%pkt %byt
#     %opkt %obyt), equals the reference.
#  2. tshark: no malformed field or expert warning, the biflow templates 260 / 261 with the
#     reverse elements, and the reverse packet counts it decodes add up to the reference's.
# Ports: UDP 24739 (nfcapd), TCP 24740, 24741 (nobody listens); --biflow: UDP 19121 (nfcapd). No
# EAL file prefix is shared (sbx-flows-pcap: no shared config, its own prefix per pid), lcore id 123.
BIFLOW=
[ "${1:-}" = --biflow ] && BIFLOW=1
source "$(dirname "$0")/../lib/common.sh"
NFPID= TDPID=
cleanup() {
	[ -n "$NFPID" ] && kill "$NFPID" 2>/dev/null
	[ -n "$TDPID" ] && kill "$TDPID" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
export TZ=UTC
BIN=$BUILD/tests/sbx-flows-pcap
REF="python3 $ROOT/tests/lib/flows_ref.py"
UDP_PORT=24739 TCP_PORT=24740 DEAD_PORT=24741
# TCP, UDP, IPv6, VLAN, QinQ, MPLS, IPv4 and IPv6 fragments, big-endian and nanosecond files,
# a VXLAN capture (its outer flows: the terminated inner frames come with the ingress stage)
NAMES=(plain_tcpdump_dns_udp plain_tcpreplay_test bulk_zeek_ftp-8317-small vlan_zeek_http-vlan-0
	vlan_zeek_http-qinq-0 vlan_zeek_qinqinq vlan_zeek_mpls-in-vlan vlan_tcpdump_802.1ad_QinQ
	frag_suricata_ipv4frags-1442 frag_zeek_ipv4-frag-4 frag_suricata_vlan-ipv6-frag vxlan_suricata_100pkts
	fmt_zeek_nanosecond fmt_tcpdump_bigendian jumbo_zeek_smtp-8754)
MODE=() # sbx-flows-pcap's mode
if [ -n "$BIFLOW" ]; then
	MODE=(--biflow)
	REF="python3 $ROOT/tests/lib/flows_ref.py --biflow"
	UDP_PORT=19121
	# TCP both ways (FTP, HTTP, a replayed mix), DNS, VLAN, QinQ, IPv6 fragments, big-endian, nanoseconds
	NAMES=(plain_tcpdump_dns_udp plain_tcpreplay_test bulk_zeek_ftp-8317-small vlan_zeek_http-vlan-0
		vlan_zeek_http-qinq-0 frag_suricata_vlan-ipv6-frag frag_zeek_ipv4-frag-4 fmt_zeek_nanosecond
		fmt_tcpdump_bigendian jumbo_zeek_smtp-8754)
fi
CAPS=()
for n in "${NAMES[@]}"; do CAPS+=("$CAPTURES/$n.pcap"); done
for c in "${CAPS[@]}"; do [ -r "$c" ] || { not_ok "capture $c missing"; exit 1; }; done
for t in nfcapd nfdump tshark tcpdump; do
	command -v $t >/dev/null || { not_ok "$t not installed (./spanbox install-deps)"; exit 1; }
done

# --- 1. UDP to nfcapd, both timeout settings -------------------------------------------------------
mkdir -p "$TMP/nf"
nfcapd -b 127.0.0.1 -p $UDP_PORT -w "$TMP/nf" -t 3600 -B 4000000 >"$TMP/nfcapd.log" 2>&1 &
NFPID=$!
# --immediate-mode: each datagram handed to tcpdump at once, not when a kernel block fills or its
# timeout passes (a CI rehearsal once lost 25 of 35 datagrams in a block when tcpdump was stopped)
tcpdump -i lo --immediate-mode -U -B 16384 -s 0 -w "$TMP/ipfix.pcap" "udp and dst port $UDP_PORT" >"$TMP/tcpdump.log" 2>&1 &
TDPID=$!
wait_for 50 grep -q "listening on lo" "$TMP/tcpdump.log"
sleep 0.3
: >"$TMP/ref.tsv"
: >"$TMP/tool.tsv"
rc=0
for t in "60 15 1" "2 0.5 2"; do
	set -- $t
	"$BIN" "${MODE[@]}" --collector 127.0.0.1:$UDP_PORT --domain "$3" --active "$1" --idle "$2" \
		--records "$TMP/tool$3.tsv" "${CAPS[@]}" >"$TMP/out$3.txt" 2>"$TMP/err$3.txt" || rc=1
	$REF --active "$1" --idle "$2" "${CAPS[@]}" >>"$TMP/ref.tsv" || rc=1
	cat "$TMP/tool$3.tsv" >>"$TMP/tool.tsv"
done
kv() { sed -n "s/^$2=//p" "$TMP/$1"; }
nref=$(wc -l <"$TMP/ref.tsv")
sent=$(( $(kv out1.txt records_sent) + $(kv out2.txt records_sent) ))
lost=$(( $(kv out1.txt records_lost) + $(kv out2.txt records_lost) ))
sort "$TMP/ref.tsv" >"$TMP/ref.sorted"
if [ -n "$BIFLOW" ]; then
	check "sbx-flows-pcap --biflow and flows_ref.py --biflow ran on ${#CAPS[@]} captures" [ $rc -eq 0 ]
	nrev=$(awk -F'\t' '$15 > 0' "$TMP/ref.tsv" | wc -l)
	check "the tool exported $sent records, none lost ($lost), as many as the reference's biflows ($nref, $nrev with a reverse direction)" \
		cond "[ $sent -eq $nref ] && [ $lost -eq 0 ] && [ $nref -gt 200 ] && [ $nrev -gt 100 ]"
	# the tool's line: 14 fields, the reason, then the 3 reverse fields
	cut -f1-14,16-18 "$TMP/tool.tsv" | sort >"$TMP/tool.sorted"
	check "the tool's biflow records equal the reference's, every field (key in the first frame's direction, forward and reverse packets, bytes, flags, times)" \
		cmp -s "$TMP/tool.sorted" "$TMP/ref.sorted"
	diff "$TMP/tool.sorted" "$TMP/ref.sorted" | head -6 | sed 's/^/# /'
else
	check "sbx-flows-pcap and flows_ref.py ran on ${#CAPS[@]} captures" [ $rc -eq 0 ]
	check "the tool exported $sent records, none lost ($lost), as many as the reference's flows ($nref)" \
		cond "[ $sent -eq $nref ] && [ $lost -eq 0 ] && [ $nref -gt 500 ]"
	check "split by timeouts: idle and active expiries in the 2 s / 0.5 s run ($(kv out2.txt expired_idle) idle, $(kv out2.txt expired_active) active), TCP ends ($(kv out1.txt expired_end))" \
		cond "[ $(kv out2.txt expired_idle) -gt 50 ] && [ $(kv out2.txt expired_active) -gt 50 ] && [ $(kv out1.txt expired_end) -gt 5 ]"
	cut -f1-14 "$TMP/tool.tsv" | sort >"$TMP/tool.sorted"
	check "the tool's records equal the reference's flows, every field (key, packets, bytes, times, flags)" \
		cmp -s "$TMP/tool.sorted" "$TMP/ref.sorted"
fi
# stop tcpdump once its file stops growing (3 polls of 0.2 s alike, 5 s at most)
size_was=-1 same=0
for ((i = 0; i < 25 && same < 3; i++)); do
	sleep 0.2
	size=$(stat -c %s "$TMP/ipfix.pcap" 2>/dev/null || echo 0)
	if [ "$size" = "$size_was" ]; then same=$((same + 1)); else same=0; fi
	size_was=$size
done
kill -INT "$TDPID"
kill "$NFPID"
wait "$TDPID" "$NFPID" 2>/dev/null
TDPID= NFPID=
sed -n 's/^/# tcpdump: /; /captured\|received\|dropped/p' "$TMP/tcpdump.log"
# nfdump: one line per flow, the fields the reference has (ingress port = input interface); a
# biflow's reverse packets and bytes too (%opkt %obyt: the reverse elements, RFC 5103)
NFFMT="%pr|%sa|%da|%sp|%dp|%svln|%in|%tfs|%te|%pkt|%byt${BIFLOW:+|%opkt|%obyt}"
nfdump -R "$TMP/nf" -q -N -6 -o "fmt:$NFFMT" 2>"$TMP/nfdump.err" | tr -d ' ' >"$TMP/nfdump.txt"
python3 - "$TMP/ref.tsv" "$TMP/nfdump.txt" "${BIFLOW:+biflow}" >"$TMP/nfcmp.txt" <<'EOF'
import collections, datetime, ipaddress, sys
biflow = len(sys.argv) > 3 and sys.argv[3] == "biflow"
def ms(s):  # nfdump %tfs: 2013-03-0721:42:06.869 once blanks are removed
    d = datetime.datetime.strptime(s[:10] + " " + s[10:], "%Y-%m-%d %H:%M:%S.%f")
    return int(d.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000 + 0.5)
ref = collections.Counter()
for l in open(sys.argv[1]):
    v = l.rstrip("\n").split("\t")
    ref[(v[3], str(ipaddress.ip_address(v[1])), str(ipaddress.ip_address(v[2])),
         v[4], v[5], v[6], v[8], int(v[11]), int(v[12]), v[9], v[10]) + ((v[14], v[15]) if biflow else ())] += 1
got = collections.Counter()
for l in open(sys.argv[2]):
    if not l.strip():
        continue
    f = l.strip().split("|")
    if "." in f[4]:  # ICMP: nfdump prints type.code where the reference has the port 0
        t, c = f[4].split(".")
        f[4] = str(int(t) * 256 + int(c))
    got[(f[0], str(ipaddress.ip_address(f[1])), str(ipaddress.ip_address(f[2])), f[3], f[4], f[5], f[6],
         ms(f[7]), ms(f[8]), f[9], f[10]) + ((f[11], f[12]) if biflow else ())] += 1
print("reference %d nfdump %d" % (sum(ref.values()), sum(got.values())))
for k in list((ref - got).elements())[:5]:
    print("only in the reference:", k)
for k in list((got - ref).elements())[:5]:
    print("only in nfdump:", k)
sys.exit(0 if ref == got else 1)
EOF
if [ -n "$BIFLOW" ]; then
	check "nfdump prints every biflow of the reference, with forward and reverse (RFC 5103) packets and bytes ($(head -1 "$TMP/nfcmp.txt"))" \
		cond "[ \$(sed -n 1p '$TMP/nfcmp.txt' | awk '{print \$2}') -gt 200 ] && ! grep -q only '$TMP/nfcmp.txt'"
	grep only "$TMP/nfcmp.txt" | sed 's/^/# /'
	check "nfcapd: no sequence failure or bad packet" \
		cond "! grep -Eq 'Sequence Errors: [1-9]|Bad Packets: [1-9]' '$TMP/nfcapd.log'"
else
	check "nfdump prints every flow of the reference, each with its protocol, addresses, ports, VLAN, ingress, first/last ms, packets and bytes ($(head -1 "$TMP/nfcmp.txt"))" \
		cond "[ \$(sed -n 1p '$TMP/nfcmp.txt' | awk '{print \$2}') -gt 500 ] && ! grep -q only '$TMP/nfcmp.txt'"
	grep only "$TMP/nfcmp.txt" | sed 's/^/# /'
	check "nfcapd: no sequence failure or bad packet (one exporter per domain)" \
		cond "! grep -Eq 'Sequence Errors: [1-9]|Bad Packets: [1-9]' '$TMP/nfcapd.log'"
fi

# --- 2. tshark decodes the IPFIX ------------------------------------------------------------------
TS=(tshark -n -r "$TMP/ipfix.pcap" -d "udp.port==$UDP_PORT,cflow")
bad=$("${TS[@]}" -Y "_ws.malformed || _ws.expert.severity >= warning" 2>/dev/null | wc -l)
dgrams=$("${TS[@]}" 2>/dev/null | wc -l)
check "tshark (cflow) decodes $dgrams datagrams with no malformed field or expert warning ($bad)" \
	cond "[ $dgrams -gt 10 ] && [ $bad -eq 0 ]"
tmpl=$("${TS[@]}" -T fields -e cflow.template_id 2>/dev/null | tr ',' '\n' | sort -u | tr '\n' ' ')
if [ -n "$BIFLOW" ]; then
	check "tshark sees the biflow templates 260 (IPv4) and 261 (IPv6) ($tmpl)" cond "[[ '$tmpl' == *260*261* ]]"
	# tshark shows a reverse element (PEN 29305) as its forward field, "(Reverse Type 2 PKTS)" after it
	"${TS[@]}" -V 2>/dev/null >"$TMP/ts.txt"
	trev=$(grep -E '^\s+Packets: [0-9]+ \(Reverse Type 2 PKTS\)' "$TMP/ts.txt" | awk '{n++; s += $2} END {print n + 0, s + 0}')
	tro=$(grep -E '^\s+Octets: [0-9]+ \(Reverse Type 1 BYTES\)' "$TMP/ts.txt" | awk '{s += $2} END {print s + 0}')
	rrev=$(awk -F'\t' '{s += $15} END {print NR, s}' "$TMP/ref.tsv")
	rro=$(awk -F'\t' '{s += $16} END {print s + 0}' "$TMP/ref.tsv")
	check "tshark decodes the reverse counts of every record and they add up (records, reverse packets: tshark $trev, reference $rrev; reverse octets: tshark $tro, reference $rro)" \
		cond "[ '$trev' = '$rrev' ] && [ '$tro' = '$rro' ]"
	exit 0 # parts 3 and 4 (transports, no collector) do not depend on the mode
fi
tpk=$("${TS[@]}" -T fields -e cflow.packets 2>/dev/null | tr ',' '\n' | awk 'NF {n++; s += $1} END {print n + 0, s + 0}')
rpk=$(awk '{s += $10} END {print NR, s}' "$TMP/ref.tsv")
check "tshark finds every data record and their packets add up (records packets: tshark $tpk, reference $rpk)" \
	[ "$tpk" = "$rpk" ]
check "tshark sees templates 256 (IPv4) and 257 (IPv6) ($tmpl)" cond "[[ '$tmpl' == *256*257* ]]"

# --- 3. TCP collector that closes the connection ---------------------------------------------------
python3 "$ROOT/tests/lib/ipfix_collect.py" $TCP_PORT --seconds 8 --close-after 100000 --ready "$TMP/col.ready" \
	>"$TMP/col.json" 2>"$TMP/col.err" &
COLPID=$!
wait_for 50 test -f "$TMP/col.ready"
"$BIN" --collector 127.0.0.1:$TCP_PORT --transport tcp --domain 9 --retry-ms 100 --bench-export 30000 --rate 20000 \
	>"$TMP/tcp.txt" 2>&1
kill "$COLPID" 2>/dev/null
wait "$COLPID" 2>/dev/null
got=$(jq '[.connections[].records] | add' "$TMP/col.json")
check "TCP: the collector's close is counted (disconnects $(kv tcp.txt disconnects), lost $(kv tcp.txt records_lost)), the exporter reconnects ($(kv tcp.txt connects) connections)" \
	cond "[ $(kv tcp.txt disconnects) -ge 1 ] && [ $(kv tcp.txt records_lost) -gt 0 ] && [ $(kv tcp.txt connects) -ge 2 ]"
check "TCP: every record counted as sent arrived ($(kv tcp.txt records_sent) sent, $got received), sent + lost = 30000" \
	cond "[ '$got' = $(kv tcp.txt records_sent) ] && [ $(( $(kv tcp.txt records_sent) + $(kv tcp.txt records_lost) )) -eq 30000 ]"
check "TCP: each connection starts with the templates, sequence numbers continue, domain 9, nothing malformed" \
	cond "[ \$(jq '[.connections[] | select(.templates < 2 or .data_before_template > 0 or .bad > 0 or .seq_errors > 0 or .domains != [9])] | length' '$TMP/col.json') -eq 0 ] && [ \$(jq '.connections | length' '$TMP/col.json') -ge 2 ]"
second=$(jq '.connections[1].records // 0' "$TMP/col.json")
check "TCP: records resume after the reconnect (second connection: $second records)" [ "$second" -gt 1000 ]

# --- 3b. UDP: templates again every template period ----------------------------------------------
python3 "$ROOT/tests/lib/ipfix_collect.py" $TCP_PORT --udp --seconds 6 --ready "$TMP/colu.ready" \
	>"$TMP/colu.json" 2>"$TMP/colu.err" &
COLPID=$!
wait_for 50 test -f "$TMP/colu.ready"
"$BIN" --collector 127.0.0.1:$TCP_PORT --template-period 1 --bench-export 25000 --rate 10000 >"$TMP/udp.txt" 2>&1
kill "$COLPID" 2>/dev/null
wait "$COLPID" 2>/dev/null
tm=$(jq '.connections[0].template_messages' "$TMP/colu.json")
check "UDP, template period 1 s, 2.5 s of records: the templates sent $(kv udp.txt template_sends) times, received $tm times (3 expected: at 0, 1 and 2 s), every record decoded" \
	cond "[ $(kv udp.txt template_sends) -eq 3 ] && [ '$tm' = 3 ] && [ \$(jq '.connections[0].records' '$TMP/colu.json') -eq 25000 ] && [ \$(jq '.connections[0].data_before_template' '$TMP/colu.json') -eq 0 ]"

# --- 4. nobody listening ---------------------------------------------------------------------------
start=$(date +%s%N)
"$BIN" --collector 127.0.0.1:$DEAD_PORT --transport tcp --active 2 --idle 0.5 "${CAPS[@]}" >"$TMP/dead_tcp.txt" 2>&1
rc1=$?
"$BIN" --collector 127.0.0.1:$DEAD_PORT --transport udp --active 2 --idle 0.5 "${CAPS[@]}" >"$TMP/dead_udp.txt" 2>&1
rc2=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check "no TCP collector: connection refused counted ($(kv dead_tcp.txt connect_failures)), every record lost and counted ($(kv dead_tcp.txt records_lost) of $(kv dead_tcp.txt records))" \
	cond "[ $rc1 -eq 0 ] && [ $(kv dead_tcp.txt connect_failures) -ge 1 ] && [ $(kv dead_tcp.txt records_lost) -eq $(kv dead_tcp.txt records) ] && [ $(kv dead_tcp.txt records_sent) -eq 0 ]"
check "no UDP collector: the port unreachable comes back as send errors ($(kv dead_udp.txt send_errors)), losses counted ($(kv dead_udp.txt records_lost)), sent + lost = records" \
	cond "[ $rc2 -eq 0 ] && [ $(kv dead_udp.txt send_errors) -ge 1 ] && [ $(kv dead_udp.txt records_lost) -gt 0 ] && [ $(( $(kv dead_udp.txt records_sent) + $(kv dead_udp.txt records_lost) )) -eq $(kv dead_udp.txt records) ]"
check "both finish at once (${ms} ms for the two)" [ $ms -lt 10000 ]
