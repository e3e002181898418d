#!/usr/bin/env bash
# Biflows (RFC 5103, flows.biflow, docs/FLOWS.md "Biflows"): the flow table (shared/flowtable.c)
# and the exporter (shared/ipfix.c, libfixbuf) in build/tests/sbx-flows-pcap --biflow on real
# captures of ../shared/captures, pcap timestamps as time, default (60 s / 15 s) and short (2 s /
# 0.5 s) timeouts.
#  1. The tool's records equal tests/lib/flows_ref.py --biflow (plain Python, the same rules): one
#     record per flow for both directions, forward = the first frame's direction, the reverse
#     direction's packets, bytes and TCP flags; many records have a reverse direction.
#  2. nfdump's nfcapd collects the IPFIX over UDP on 127.0.0.1: nfdump maps the reverse elements
#     (PEN 29305) reverseOctetDeltaCount / reversePacketDeltaCount to its output counters
#     (src/netflow/ipfix.c ipfixReverseMap): every flow, with its forward and reverse packets and
#     bytes (%pkt %byt %opkt %obyt), equals the reference.
#  3. tshark decodes the datagrams (captured on lo with tcpdump) as IPFIX (cflow): no malformed
#     field or expert warning, the biflow templates 260 / 261 with the reverse elements, and the
#     reverse packet counts it decodes add up to the reference's.
# Ports: UDP 19121 (nfcapd). sbx-flows-pcap: EAL without huge pages, its own prefix per pid.
source "$(dirname "$0")/../lib/common.sh"
NFPID= TDPID=
cleanup() {
	[ -n "$NFPID" ] && kill "$NFPID" 2>/dev/null
	[ -n "$TDPID" ] && kill "$TDPID" 2>/dev/null
	[ -n "$KEEP" ] || rm -rf "$TMP"
}
trap cleanup EXIT
export TZ=UTC
BIN=$BUILD/tests/sbx-flows-pcap
REF="python3 $ROOT/tests/lib/flows_ref.py --biflow"
UDP_PORT=19121
# TCP both ways (FTP, HTTP, a replayed mix), DNS, VLAN, QinQ, IPv6 fragments, big-endian, nanoseconds
NAMES=(plain_tcpdump_dns_udp plain_tcpreplay_test bulk_zeek_ftp-8317-small vlan_zeek_http-vlan-0
	vlan_zeek_http-qinq-0 frag_suricata_vlan-ipv6-frag frag_zeek_ipv4-frag-4 fmt_zeek_nanosecond
	fmt_tcpdump_bigendian jumbo_zeek_smtp-8754)
CAPS=()
for n in "${NAMES[@]}"; do CAPS+=("$CAPTURES/$n.pcap"); done
for c in "${CAPS[@]}"; do [ -r "$c" ] || { not_ok "capture $c missing"; exit 1; }; done
for t in nfcapd nfdump tshark tcpdump; do
	command -v $t >/dev/null || { not_ok "$t not installed (./spanbox install-deps)"; exit 1; }
done

mkdir -p "$TMP/nf"
nfcapd -b 127.0.0.1 -p $UDP_PORT -w "$TMP/nf" -t 3600 -B 4000000 >"$TMP/nfcapd.log" 2>&1 &
NFPID=$!
tcpdump -i lo --immediate-mode -U -B 16384 -s 0 -w "$TMP/ipfix.pcap" "udp and dst port $UDP_PORT" >"$TMP/tcpdump.log" 2>&1 &
TDPID=$!
wait_for 50 grep -q "listening on lo" "$TMP/tcpdump.log"
sleep 0.3
: >"$TMP/ref.tsv"
: >"$TMP/tool.tsv"
rc=0
for t in "60 15 1" "2 0.5 2"; do
	set -- $t
	"$BIN" --biflow --collector 127.0.0.1:$UDP_PORT --domain "$3" --active "$1" --idle "$2" \
		--records "$TMP/tool$3.tsv" "${CAPS[@]}" >"$TMP/out$3.txt" 2>"$TMP/err$3.txt" || rc=1
	$REF --active "$1" --idle "$2" "${CAPS[@]}" >>"$TMP/ref.tsv" || rc=1
	cat "$TMP/tool$3.tsv" >>"$TMP/tool.tsv"
done
check "sbx-flows-pcap --biflow and flows_ref.py --biflow ran on ${#CAPS[@]} captures" [ $rc -eq 0 ]
kv() { sed -n "s/^$2=//p" "$TMP/$1"; }
nref=$(wc -l <"$TMP/ref.tsv")
nrev=$(awk -F'\t' '$15 > 0' "$TMP/ref.tsv" | wc -l)
sent=$(( $(kv out1.txt records_sent) + $(kv out2.txt records_sent) ))
lost=$(( $(kv out1.txt records_lost) + $(kv out2.txt records_lost) ))
check "the tool exported $sent records, none lost ($lost), as many as the reference's biflows ($nref, $nrev with a reverse direction)" \
	cond "[ $sent -eq $nref ] && [ $lost -eq 0 ] && [ $nref -gt 200 ] && [ $nrev -gt 100 ]"
# the tool's line: 14 fields, the reason, then the 3 reverse fields
cut -f1-14,16-18 "$TMP/tool.tsv" | sort >"$TMP/tool.sorted"
sort "$TMP/ref.tsv" >"$TMP/ref.sorted"
check "the tool's biflow records equal the reference's, every field (key in the first frame's direction, forward and reverse packets, bytes, flags, times)" \
	cmp -s "$TMP/tool.sorted" "$TMP/ref.sorted"
diff "$TMP/tool.sorted" "$TMP/ref.sorted" | head -6 | sed 's/^/# /'

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

# --- 2. nfdump: forward and reverse counts -------------------------------------------------------------
nfdump -R "$TMP/nf" -q -N -6 -o "fmt:%pr|%sa|%da|%sp|%dp|%svln|%in|%tfs|%te|%pkt|%byt|%opkt|%obyt" \
	2>"$TMP/nfdump.err" | tr -d ' ' >"$TMP/nfdump.txt"
python3 - "$TMP/ref.tsv" "$TMP/nfdump.txt" >"$TMP/nfcmp.txt" <<'EOF'
import collections, datetime, ipaddress, sys
def ms(s):  # nfdump %tfs: 2013-03-0721:42:06.869 once blanks are removed
    d = datetime.datetime.strptime(s[:10] + " " + s[10:], "%Y-%m-%d %H:%M:%S.%f")
    return int(d.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000 + 0.5)
ref = collections.Counter()
for l in open(sys.argv[1]):
    v = l.rstrip("\n").split("\t")
    ref[(v[3], str(ipaddress.ip_address(v[1])), str(ipaddress.ip_address(v[2])),
         v[4], v[5], v[6], v[8], int(v[11]), int(v[12]), v[9], v[10], v[14], v[15])] += 1
got = collections.Counter()
for l in open(sys.argv[2]):
    if not l.strip():
        continue
    f = l.strip().split("|")
    if "." in f[4]:  # ICMP: nfdump prints type.code where the reference has the port 0
        t, c = f[4].split(".")
        f[4] = str(int(t) * 256 + int(c))
    got[(f[0], str(ipaddress.ip_address(f[1])), str(ipaddress.ip_address(f[2])), f[3], f[4], f[5], f[6],
         ms(f[7]), ms(f[8]), f[9], f[10], f[11], f[12])] += 1
print("reference %d nfdump %d" % (sum(ref.values()), sum(got.values())))
for k in list((ref - got).elements())[:5]:
    print("only in the reference:", k)
for k in list((got - ref).elements())[:5]:
    print("only in nfdump:", k)
sys.exit(0 if ref == got else 1)
EOF
check "nfdump prints every biflow of the reference, with forward and reverse (RFC 5103) packets and bytes ($(head -1 "$TMP/nfcmp.txt"))" \
	cond "[ \$(sed -n 1p '$TMP/nfcmp.txt' | awk '{print \$2}') -gt 200 ] && ! grep -q only '$TMP/nfcmp.txt'"
grep only "$TMP/nfcmp.txt" | sed 's/^/# /'
check "nfcapd: no sequence failure or bad packet" \
	cond "! grep -Eq 'Sequence Errors: [1-9]|Bad Packets: [1-9]' '$TMP/nfcapd.log'"

# --- 3. tshark ---------------------------------------------------------------------------------------
TS=(tshark -n -r "$TMP/ipfix.pcap" -d "udp.port==$UDP_PORT,cflow")
bad=$("${TS[@]}" -Y "_ws.malformed || _ws.expert.severity >= warning" 2>/dev/null | wc -l)
dgrams=$("${TS[@]}" 2>/dev/null | wc -l)
check "tshark (cflow) decodes $dgrams datagrams with no malformed field or expert warning ($bad)" \
	cond "[ $dgrams -gt 10 ] && [ $bad -eq 0 ]"
tmpl=$("${TS[@]}" -T fields -e cflow.template_id 2>/dev/null | tr ',' '\n' | sort -u | tr '\n' ' ')
check "tshark sees the biflow templates 260 (IPv4) and 261 (IPv6) ($tmpl)" cond "[[ '$tmpl' == *260*261* ]]"
# tshark shows a reverse element (PEN 29305) as its forward field, "(Reverse Type 2 PKTS)" after it
"${TS[@]}" -V 2>/dev/null >"$TMP/ts.txt"
trev=$(grep -E '^\s+Packets: [0-9]+ \(Reverse Type 2 PKTS\)' "$TMP/ts.txt" | awk '{n++; s += $2} END {print n + 0, s + 0}')
tro=$(grep -E '^\s+Octets: [0-9]+ \(Reverse Type 1 BYTES\)' "$TMP/ts.txt" | awk '{s += $2} END {print s + 0}')
rrev=$(awk -F'\t' '{s += $15} END {print NR, s}' "$TMP/ref.tsv")
rro=$(awk -F'\t' '{s += $16} END {print s + 0}' "$TMP/ref.tsv")
check "tshark decodes the reverse counts of every record and they add up (records, reverse packets: tshark $trev, reference $rrev; reverse octets: tshark $tro, reference $rro)" \
	cond "[ '$trev' = '$rrev' ] && [ '$tro' = '$rro' ]"
exit 0
