#!/usr/bin/env bash
# Ingress stages on replayed captures (issue #12), through the real worker (spanbox-primary --replay):
#  1. round trip: spanbox's own ERSPAN II, ERSPAN III and ERSPAN III with the platform subheader
#     of the plain, VLAN, QinQ, jumbo and 14-byte captures, fed back into a port with an erspan
#     decap rule: the output equals the original input frame for frame, byte for byte; the
#     tunnel table has the session id and sequence numbers without a gap;
#  2. non_tunnel pass / drop, decap rules that do not match (session ids, local_ip);
#  3. strip (VLAN, QinQ, MPLS), tag, and the counters of each;
#  4. dedup: every frame twice in a row (the second with another TTL): dropped within the
#     window, kept with dedup off or when the TTL is not ignored.
# Every count is checked on the replay's tables (tests/lib/replay.sh) and on the output pcap.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
PEQ="$ROOT/tests/lib/pcap_equal.py"
PRIMARY="$BUILD/primary/spanbox-primary"
trap '[ -n "$KEEP" ] || rm -rf "$TMP"' EXIT
PREFIX=sbxingr$$
ENC='"src_ip": "192.0.2.1", "dst_ip": "198.51.100.7", "dst_mac": "02:00:5e:10:00:01"'

npkts() { capinfos -Mc "$1" | awk '/Number of packets/ {print $NF}'; }
eq() { if [ "$2" = "$3" ]; then ok "$1 ($2)"; else not_ok "$1 (got $2, expected $3)"; fi; }
peq() { python3 "$PEQ" "$1" "$2" | sed "s/^/# /"; return "${PIPESTATUS[0]}"; }

# mkcfg FILE INPUT MTU INGRESS_JSON [MIRRORS_JSON [PORT...]]: p0 reads INPUT with the ingress object
# INGRESS_JSON ("" = none), p1 writes $TMP/<tag>_p1.pcap, each extra PORT $TMP/<tag>_<PORT>.pcap.
# The extra ports are mirror destinations: 100 B more MTU (at most 9600), room for an ERSPAN
# encapsulation, since a copy longer than its destination's MTU is cut (docs/MIRRORING.md) and the
# round trip wants every frame whole.
mkcfg() {
	local file=$1 in=$2 mtu=$3 ing=$4 mirrors=${5:-} tag ports p n=2 mmtu
	tag=$(basename "$file" .json)
	shift 4; [ $# -gt 0 ] && shift
	mmtu=$((mtu + 100 > 9600 ? 9600 : mtu + 100))
	ports="{\"name\": \"p0\", \"devargs\": \"net_pcap0,rx_pcap=$in\", \"mtu\": $mtu${ing:+, \"ingress\": $ing}},
    {\"name\": \"p1\", \"devargs\": \"net_pcap1,tx_pcap=$TMP/${tag}_p1.pcap\", \"mtu\": $mtu}"
	for p in "$@"; do
		ports+=",
    {\"name\": \"$p\", \"devargs\": \"net_pcap$n,tx_pcap=$TMP/${tag}_$p.pcap\", \"mtu\": $mmtu}"
		n=$((n + 1))
	done
	cat >"$file" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 56, "mgmt_lcore": 58},
  "ports": [
    $ports
  ],
  "workers": {"count": 1, "lcores": [57]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mirrors": [ $mirrors ]
}
JSON
}

# ---------------------------------------------------------------------------------------------
# 0. every tunnel capture through the worker, decap rules of the three types, non-tunnels dropped:
# the output pcap holds exactly the inner frames tshark decodes (tests/lib/decap_tshark.py, check
# 4, given the worker's output; the parser's own per-frame TSV supplies which frames are tunnels,
# and 18_decap_captures has checked that TSV against tshark). Tunnel table: the session ids tshark
# reads.
DECAP_ALL='{"decap": [{"type": "erspan"}, {"type": "vxlan"}, {"type": "gre"}], "non_tunnel": "drop"}'
for n in erspan1_suricata_typeI-02 erspan1_tcpdump_i-1 erspan1_zeek erspan2_suricata_bug5437-60pkts \
	erspan2_suricata_typeII-01 erspan2_tcpdump_ii-1 erspan2_tcpdump_ii-2 erspan2_zeek erspan3_tcpdump_iii-ft-0 \
	erspan3_zeek gre_teb_zeek_keyed jumbo_zeek_vxlan-http-9100 vxlan_suricata_100pkts vxlan_tcpdump; do
	IN="$CAPTURES/$n.pcap"
	[ -r "$IN" ] || { not_ok "$n.pcap is readable in $CAPTURES"; continue; }
	if [ "$(capinfos -E "$IN" | awk -F': *' '/encapsulation/ {print $2}')" != Ethernet ]; then
		ok "$n: not an Ethernet capture (a pcap port cannot replay it) # SKIP"; continue
	fi
	tag=cap_$(echo "$n" | tr -c 'a-zA-Z0-9\n' _)
	# outer fragments are reassembled by the stage, not by the parser (tests/e2e/63b_ingress_fragments.sh
	# checks them): the frame-by-frame comparison takes the capture without them
	if [ "$n" = gre_teb_zeek_keyed ]; then
		tshark -r "$IN" -o ip.defragment:FALSE -Y '!(ip.flags.mf == 1 || ip.frag_offset > 0)' -F pcap -w "$TMP/$tag.nofrag.pcap" 2>/dev/null
		IN=$TMP/$tag.nofrag.pcap
	fi
	"$BUILD/tests/sbx-decap-pcap" "$IN" "$TMP/$tag.parser.pcap" >"$TMP/$tag.tsv" 2>/dev/null
	mkcfg "$TMP/$tag.json" "$IN" 9600 "$DECAP_ALL"
	replay "$tag"
	L=$TMP/$tag.log
	ntun=$(awk -F'\t' '$2 == "ok"' "$TMP/$tag.tsv" | wc -l)
	eq "$n: decap_packets = the frames the parser calls tunnels" "$(pctr "$L" p0 decap_packets)" "$ntun"
	python3 "$ROOT/tests/lib/decap_tshark.py" "$IN" "$TMP/$tag.tsv" "$TMP/${tag}_p1.pcap" >"$TMP/$tag.cmp" 2>&1
	check "$n: the worker's output holds exactly the inner frames tshark decodes, byte for byte" \
		grep -q '^ok .*inner frames' "$TMP/$tag.cmp" || grep 'inner frames' "$TMP/$tag.cmp" | sed 's/^/# /'
	ids=$(tshark -r "$IN" -T fields -e erspan.spanid -e vxlan.vni 2>/dev/null | tr '\t' '\n' | grep -v '^$' | sort -un | tr '\n' ' ')
	got=$(awk '$1 == "tunnel" && $2 == "worker" {h = 1; next} $1 == "session" {h = 0} h && $1 == "p0" {print $5}' "$L" |
		sort -un | tr '\n' ' ')
	[ -n "$ids" ] && eq "$n: tunnel table ids = the session ids / VNIs tshark reads" "$got" "$ids"
done
eq "erspan2_suricata_bug5437-60pkts: four senders' sequence 'not_maintained', zero gaps" \
	"$(awk '$1 == "tunnel" && $2 == "worker" {h = 1; next} h && $1 == "p0" {print $11 "/" $8}' \
		"$TMP/cap_erspan2_suricata_bug5437_60pkts.log" | sort | uniq -c | awk '{print $1, $2}')" "4 not_maintained/0"

# ---------------------------------------------------------------------------------------------
# 1. round trip of our own ERSPAN output
MIRRORS="
  {\"id\": 301, \"name\": \"e2\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_e2\"}, \"encap\": {\"type\": \"erspan2\", $ENC}},
  {\"id\": 503, \"name\": \"e3\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_e3\"}, \"encap\": {\"type\": \"erspan3\", $ENC}},
  {\"id\": 604, \"name\": \"e3sub\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_e3sub\"}, \"encap\": {\"type\": \"erspan3\", \"src_ip\": \"2001:db8::1\",
   \"dst_ip\": \"2001:db8::2\", \"dst_mac\": \"02:00:5e:10:00:01\", \"platform_subheader\": true}}"
for cap in plain_tcpreplay_test.pcap vlan_zeek_http-vlan-0.pcap vlan_tcpdump_802.1ad_QinQ.pcap \
	jumbo_zeek_vxlan-http-9100.pcap tiny_suricata_eth-only-14B.pcap; do
	IN="$CAPTURES/$cap"
	tag=rt_${cap%%_*}
	mtu=1500 dmtu=1600 # the decap port receives the ERSPAN frames: up to 70 B more than the input
	[[ $cap == jumbo_* ]] && mtu=9600 dmtu=9600
	N=$(npkts "$IN")
	mkcfg "$TMP/$tag.json" "$IN" $mtu "" "$MIRRORS" m_e2 m_e3 m_e3sub
	replay "$tag"
	for s in e2:301 e3:503 e3sub:604; do
		name=${s%%:*} id=${s##*:}
		enc="$TMP/${tag}_m_$name.pcap"
		dtag=${tag}_d$name
		# the decap side: an erspan rule for this session only; its output must be the input
		mkcfg "$TMP/$dtag.json" "$enc" $dmtu "{\"decap\": [{\"type\": \"erspan\", \"sessions\": [$id]}], \"non_tunnel\": \"drop\"}"
		replay "$dtag"
		L=$TMP/$dtag.log
		eq "$dtag: p0 decap_packets = $N" "$(pctr "$L" p0 decap_packets)" "$N"
		eq "$dtag: p1 tx_packets = $N" "$(pctr "$L" p1 tx_packets)" "$N"
		check "$dtag: decapsulated output equals $cap, frame for frame" peq "$IN" "$TMP/${dtag}_p1.pcap"
		eq "$dtag: one tunnel sender on p0" "$(tcount "$L" p0)" 1
		eq "$dtag: sender with session $id: packets" "$(tctr "$L" p0 $id packets)" "$N"
		eq "$dtag: ... no sequence gap (spanbox numbers every copy)" "$(tctr "$L" p0 $id seq_gaps)" 0
		eq "$dtag: ... nothing malformed" "$(pctr "$L" p0 decap_malformed_short_outer)" 0
	done
done

# ---------------------------------------------------------------------------------------------
# 2. what the rules do not match
IN="$CAPTURES/plain_tcpreplay_test.pcap"
N=$(npkts "$IN")
ENCAP="$TMP/rt_plain_m_e2.pcap" # session 301, outer 192.0.2.1 -> 198.51.100.7
mkcfg "$TMP/nt_pass.json" "$IN" 1500 '{"decap": [{"type": "erspan"}], "non_tunnel": "pass"}'
replay nt_pass
eq "non_tunnel pass: plain frames pass unchanged (non_tunnel_passed = $N)" "$(pctr "$TMP/nt_pass.log" p0 non_tunnel_passed)" "$N"
check "non_tunnel pass: output equals the input" peq "$IN" "$TMP/nt_pass_p1.pcap"
mkcfg "$TMP/nt_drop.json" "$IN" 1500 '{"decap": [{"type": "erspan"}], "non_tunnel": "drop"}'
replay nt_drop
eq "non_tunnel drop: non_tunnel_dropped = $N" "$(pctr "$TMP/nt_drop.log" p0 non_tunnel_dropped)" "$N"
eq "non_tunnel drop: ... counted in drop_packets" "$(pctr "$TMP/nt_drop.log" p0 drop_packets)" "$N"
eq "non_tunnel drop: p1 sent nothing" "$(pctr "$TMP/nt_drop.log" p1 tx_packets)" 0
for rule in '{"type": "erspan", "sessions": [302]}' '{"type": "erspan", "local_ip": "198.51.100.8"}' \
	'{"type": "vxlan"}' '{"type": "gre"}'; do
	mkcfg "$TMP/nomatch.json" "$ENCAP" 1600 "{\"decap\": [$rule], \"non_tunnel\": \"pass\"}"
	replay nomatch
	eq "rule $rule does not match session 301 to 198.51.100.7: passed as it is" \
		"$(pctr "$TMP/nomatch.log" p0 non_tunnel_passed)/$(pctr "$TMP/nomatch.log" p0 decap_packets)" "$N/0"
done
mkcfg "$TMP/match2.json" "$ENCAP" 1600 '{"decap": [{"type": "vxlan"}, {"type": "erspan", "sessions": [300, 301], "local_ip": "198.51.100.7"}]}'
replay match2
eq "second rule (sessions 300/301, local_ip 198.51.100.7) matches: decap_packets" "$(pctr "$TMP/match2.log" p0 decap_packets)" "$N"
check "... output equals the original" peq "$IN" "$TMP/match2_p1.pcap"

# ---------------------------------------------------------------------------------------------
# 3. strip and tag (tshark reads the output: the independent decoder)
tags_of() { tshark -r "$1" -T fields -e vlan.id 2>/dev/null | sort | uniq -c | awk '{printf "%s:%s ", $2, $1}'; }
for cap in vlan_tcpdump_802.1ad_QinQ.pcap vlan_zeek_mpls-in-vlan.pcap; do
	IN="$CAPTURES/$cap"
	N=$(npkts "$IN")
	tag=strip_${cap%%.pcap}; tag=${tag//[.-]/_}
	mkcfg "$TMP/$tag.json" "$IN" 1500 '{"strip": ["vlan", "mpls"], "tag": {"vlan": 101}}'
	replay "$tag"
	L=$TMP/$tag.log
	out="$TMP/${tag}_p1.pcap"
	eq "$tag: every frame forwarded" "$(pctr "$L" p1 tx_packets)" "$N"
	eq "$tag: every frame tagged (tagged_packets)" "$(pctr "$L" p0 tagged_packets)" "$N"
	eq "$tag: tshark: one VLAN tag per frame, VLAN 101" "$(tags_of "$out")" "101:$N "
	eq "$tag: tshark: no MPLS label left" "$(tshark -r "$out" -Y mpls 2>/dev/null | wc -l)" 0
	want=$(tshark -r "$IN" -T fields -E separator=, -e ieee8021ad.id -e vlan.id 2>/dev/null |
		awk -F, '{for (i = 1; i <= NF; i++) if ($i != "") n++} END {print n + 0}')
	eq "$tag: vlan_tags_stripped = the tags tshark counts in the input" "$(pctr "$L" p0 vlan_tags_stripped)" "$want"
	want=$(tshark -r "$IN" -T fields -e mpls.label 2>/dev/null | awk -F, '$0 != "" {n += NF} END {print n + 0}')
	eq "$tag: mpls_labels_stripped = the labels tshark counts in the input" "$(pctr "$L" p0 mpls_labels_stripped)" "$want"
	# the IP payload is untouched: same IP packets as in the input
	a=$(tshark -r "$IN" -T fields -e ip.id -e ip.len -e ip.checksum 2>/dev/null | md5sum)
	b=$(tshark -r "$out" -T fields -e ip.id -e ip.len -e ip.checksum 2>/dev/null | md5sum)
	check "$tag: the IP headers are those of the input (tshark)" [ "$a" = "$b" ]
done

# ---------------------------------------------------------------------------------------------
# 4. dedup: each frame of the capture twice in a row, the copy with TTL - 1 (its checksum fixed)
IN="$CAPTURES/plain_tcpreplay_test.pcap"
N=$(npkts "$IN")
python3 - "$IN" "$TMP/twice.pcap" <<'PY'
import struct, sys
src, dst = sys.argv[1], sys.argv[2]
with open(src, 'rb') as f:
    hdr = f.read(24)
    end = '<' if hdr[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    out = [hdr]
    while True:
        rec = f.read(16)
        if len(rec) < 16:
            break
        ts, us, cap, orig = struct.unpack(end + 'IIII', rec)
        data = f.read(cap)
        out += [rec, data]
        d = bytearray(data)
        if len(d) >= 34 and d[12:14] == b'\x08\x00' and d[22] > 1:  # IPv4 behind no tag: TTL - 1
            d[22] -= 1
            d[24:26] = b'\0\0'
            ihl = (d[14] & 15) * 4
            s = sum(struct.unpack('!%dH' % (ihl // 2), bytes(d[14:14 + ihl])))
            while s >> 16:
                s = (s & 0xffff) + (s >> 16)
            d[24:26] = struct.pack('!H', ~s & 0xffff)
        out += [struct.pack(end + 'IIII', ts, us + 1, cap, orig), bytes(d)]
with open(dst, 'wb') as f:
    f.write(b''.join(out))
PY
check "dedup: the doubled capture has 2 x $N frames" [ "$(npkts "$TMP/twice.pcap")" = $((2 * N)) ]
# the model: a replay takes far less than the 1 s window, so a frame is a duplicate when an earlier
# frame of the file is equal to it (TTL and IPv4 checksum masked with "ttl"); what is kept, in order
# (the capture itself may hold repeated frames: those go too)
python3 - "$TMP/twice.pcap" "$TMP" <<'PY'
import struct, sys
src, out = sys.argv[1], sys.argv[2]
with open(src, 'rb') as f:
    hdr = f.read(24)
    end = '<' if hdr[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    recs = []
    while True:
        rec = f.read(16)
        if len(rec) < 16:
            break
        data = f.read(struct.unpack(end + 'IIII', rec)[2])
        recs.append((rec, data))
def mask(d):
    d = bytearray(d)
    if len(d) >= 34 and d[12:14] == b'\x08\x00':
        d[22] = 0
        d[24:26] = b'\0\0'
    return bytes(d)
for name, key in (('ttl', mask), ('strict', lambda d: d)):
    seen, kept, dups = set(), [], 0
    for rec, d in recs:
        k = key(d)
        if k in seen:
            dups += 1
            continue
        seen.add(k)
        kept += [rec, d]
    open('%s/dd_%s.want' % (out, name), 'w').write('%d\n' % dups)
    open('%s/dd_%s_want.pcap' % (out, name), 'wb').write(hdr + b''.join(kept))
PY
mkcfg "$TMP/dd_ttl.json" "$TMP/twice.pcap" 1500 '{"dedup": {"window_us": 1000000, "ignore": ["ttl"]}}'
replay dd_ttl
eq "dedup ignore ttl: dedup_duplicates = the model's (every copy, and the capture's own repeats)" \
	"$(pctr "$TMP/dd_ttl.log" p0 dedup_duplicates)" "$(cat "$TMP/dd_ttl.want")"
check "dedup ignore ttl: at least one duplicate per original frame (the copies)" [ "$(cat "$TMP/dd_ttl.want")" -ge "$N" ]
eq "dedup ignore ttl: dedup_unique + dedup_duplicates = frames" \
	$(( $(pctr "$TMP/dd_ttl.log" p0 dedup_unique) + $(pctr "$TMP/dd_ttl.log" p0 dedup_duplicates) )) $((2 * N))
check "dedup ignore ttl: the output is the model's, frame for frame" peq "$TMP/dd_ttl_want.pcap" "$TMP/dd_ttl_p1.pcap"
mkcfg "$TMP/dd_strict.json" "$TMP/twice.pcap" 1500 '{"dedup": {"window_us": 1000000}}'
replay dd_strict
eq "dedup without ignore: only frames equal byte for byte are duplicates (the model's count)" \
	"$(pctr "$TMP/dd_strict.log" p0 dedup_duplicates)" "$(cat "$TMP/dd_strict.want")"
check "dedup without ignore: the output is the model's, frame for frame" peq "$TMP/dd_strict_want.pcap" "$TMP/dd_strict_p1.pcap"
mkcfg "$TMP/dd_off.json" "$TMP/twice.pcap" 1500 ''
replay dd_off
eq "no dedup: every frame forwarded" "$(pctr "$TMP/dd_off.log" p1 tx_packets)" $((2 * N))

# 5. dedup action count (issue #26): the doubled capture passes whole, the duplicates are counted
mkcfg "$TMP/dd_count.json" "$TMP/twice.pcap" 1500 '{"dedup": {"window_us": 1000000, "ignore": ["ttl"], "action": "count"}}'
replay dd_count
eq "dedup action count: dedup_duplicates_passed = the model's duplicates" \
	"$(pctr "$TMP/dd_count.log" p0 dedup_duplicates_passed)" "$(cat "$TMP/dd_ttl.want")"
eq "dedup action count: nothing dropped as a duplicate" "$(pctr "$TMP/dd_count.log" p0 dedup_duplicates)" 0
check "dedup action count: the output is the input, frame for frame" peq "$TMP/twice.pcap" "$TMP/dd_count_p1.pcap"

# 6. dedup ignore vlan (issue #26): each frame, then the same frame re-tagged on VLAN 200 (an 802.1Q
# tag inserted, or an existing outer tag's VLAN id changed): one packet seen on two VLANs of a trunk
python3 - "$IN" "$TMP/retag.pcap" "$TMP" <<'PY'
import struct, sys
src, dst, out = sys.argv[1], sys.argv[2], sys.argv[3]
with open(src, 'rb') as f:
    hdr = f.read(24)
    end = '<' if hdr[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    recs = []
    while True:
        rec = f.read(16)
        if len(rec) < 16:
            break
        ts, us, cap, orig = struct.unpack(end + 'IIII', rec)
        recs.append((ts, us, f.read(cap)))
TAGS = (b'\x81\x00', b'\x88\xa8', b'\x91\x00')
def retag(d):
    if d[12:14] in TAGS:
        return d[:14] + bytes([(d[14] & 0xf0) | 0x00, 200]) + d[16:]
    return d[:12] + b'\x81\x00\x00\xc8' + d[12:]
def key_vlan(d):  # from the first EtherType that is not a VLAN tag's on (at most 8 tags)
    p = 12
    while p + 6 <= len(d) and d[p:p + 2] in TAGS and p < 12 + 8 * 4:
        p += 4
    return d[p:] if p < len(d) else d
frames = []
for ts, us, d in recs:
    frames += [(ts, us, d), (ts, us + 1, retag(d))]
with open(dst, 'wb') as f:
    f.write(hdr)
    for ts, us, d in frames:
        f.write(struct.pack(end + 'IIII', ts, us, len(d), len(d)) + d)
for name, key in (('vlan', key_vlan), ('novlan', lambda d: d)):
    seen, kept, dups = set(), [], 0
    for ts, us, d in frames:
        k = key(d)
        if k in seen:
            dups += 1
            continue
        seen.add(k)
        kept.append(struct.pack(end + 'IIII', ts, us, len(d), len(d)) + d)
    open('%s/dd_%s.want' % (out, name), 'w').write('%d\n' % dups)
    open('%s/dd_%s_want.pcap' % (out, name), 'wb').write(hdr + b''.join(kept))
PY
mkcfg "$TMP/dd_vlan.json" "$TMP/retag.pcap" 1500 '{"dedup": {"window_us": 1000000, "ignore": ["vlan"]}}'
replay dd_vlan
eq "dedup ignore vlan: the re-tagged copies are duplicates (the model's count)" \
	"$(pctr "$TMP/dd_vlan.log" p0 dedup_duplicates)" "$(cat "$TMP/dd_vlan.want")"
check "dedup ignore vlan: at least one duplicate per original frame" [ "$(cat "$TMP/dd_vlan.want")" -ge "$N" ]
check "dedup ignore vlan: the output is the model's, frame for frame" peq "$TMP/dd_vlan_want.pcap" "$TMP/dd_vlan_p1.pcap"
mkcfg "$TMP/dd_novlan.json" "$TMP/retag.pcap" 1500 '{"dedup": {"window_us": 1000000}}'
replay dd_novlan
eq "dedup without ignore vlan: the re-tagged copies are not duplicates (the model's count)" \
	"$(pctr "$TMP/dd_novlan.log" p0 dedup_duplicates)" "$(cat "$TMP/dd_novlan.want")"

# 7. strip vntag / etag (issue #26): the capture's frames with a Cisco VN-Tag (0x8926) or an IEEE
# 802.1BR E-Tag (0x893F) after the MAC addresses, alternately; stripped they are the capture again
python3 - "$IN" "$TMP/fabric.pcap" <<'PY'
import struct, sys
src, dst = sys.argv[1], sys.argv[2]
with open(src, 'rb') as f:
    hdr = f.read(24)
    end = '<' if hdr[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    out = [hdr]
    i = 0
    while True:
        rec = f.read(16)
        if len(rec) < 16:
            break
        ts, us, cap, orig = struct.unpack(end + 'IIII', rec)
        d = f.read(cap)
        tag = b'\x89\x26\x80\x05\x00\x07' if i % 2 == 0 else b'\x89\x3f\x00\x00\x10\x09\x00\x00'
        d = d[:12] + tag + d[12:]
        out += [struct.pack(end + 'IIII', ts, us, len(d), len(d)), d]
        i += 1
with open(dst, 'wb') as f:
    f.write(b''.join(out))
PY
nv=$(tshark -r "$TMP/fabric.pcap" -Y vntag 2>/dev/null | wc -l) ne=$(tshark -r "$TMP/fabric.pcap" -Y etag 2>/dev/null | wc -l)
check "strip vntag/etag: tshark decodes the input's $nv VN-Tags and $ne E-Tags" cond "[ $((nv + ne)) = $N ] && [ $nv -gt 0 ] && [ $ne -gt 0 ]"
mkcfg "$TMP/fab.json" "$TMP/fabric.pcap" 1500 '{"strip": ["vntag", "etag"]}'
replay fab
eq "strip vntag/etag: vntags_stripped = the VN-Tags" "$(pctr "$TMP/fab.log" p0 vntags_stripped)" "$nv"
eq "strip vntag/etag: etags_stripped = the E-Tags" "$(pctr "$TMP/fab.log" p0 etags_stripped)" "$ne"
check "strip vntag/etag: the output is the capture without them, frame for frame" peq "$IN" "$TMP/fab_p1.pcap"
check "strip vntag/etag: tshark finds no VN-Tag or E-Tag in the output" \
	cond "[ \"\$(tshark -r '$TMP/fab_p1.pcap' -Y 'vntag or etag' 2>/dev/null | wc -l)\" = 0 ]"
exit 0
