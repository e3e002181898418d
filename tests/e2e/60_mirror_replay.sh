#!/usr/bin/env bash
# Mirror sessions on replayed captures: p0 -> cross-connect -> p1 with SPAN, RSPAN, ERSPAN II and
# ERSPAN III copies written to pcap file ports. tshark decodes the mirror output (independent
# decoder); tests/lib/mirror_check.py compares inner frames with the input byte for byte; the
# replay's counter tables (port table, then one row per session per worker) prove the copy path.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
MC="$ROOT/tests/lib/mirror_check.py"
PEQ="$ROOT/tests/lib/pcap_equal.py"
PRIMARY="$BUILD/primary/spanbox-primary"
trap 'rm -rf "$TMP"' EXIT
# a prefix of this run's own: two runs of this test at once (or one left behind) never collide
PREFIX=sbxmirtest$$
ENC='"src_ip": "192.0.2.1", "dst_ip": "198.51.100.7", "dst_mac": "02:00:5e:10:00:01"'

npkts() { capinfos -Mc "$1" | awk '/Number of packets/ {print $NF}'; }

# mkcfg FILE INPUT MTU MIRRORS_JSON PORT...: p0 reads INPUT, p1 writes $TMP/<tag>_p1.pcap, and
# each extra PORT writes $TMP/<tag>_<PORT>.pcap (<tag> = FILE's base name); a PORT named
# "drop*" has no tx_pcap: it discards what it is given. The extra PORTs (mirror destinations)
# have an MTU 100 B larger (at most 9600), room for any encapsulation: copies are cut to fit their
# destination's MTU (61_mirror_mtu.sh tests that), here every frame is expected whole.
mkcfg() {
	local file=$1 in=$2 mtu=$3 mirrors=$4 tag ports p n=2 dmtu
	dmtu=$(($3 + 100 > 9600 ? 9600 : $3 + 100))
	tag=$(basename "$file" .json)
	shift 4
	ports="{\"name\": \"p0\", \"devargs\": \"net_pcap0,rx_pcap=$in\", \"mtu\": $mtu},
    {\"name\": \"p1\", \"devargs\": \"net_pcap1,tx_pcap=$TMP/${tag}_p1.pcap\", \"mtu\": $mtu}"
	for p in "$@"; do
		if [[ $p == drop* ]]; then
			ports+=",
    {\"name\": \"$p\", \"devargs\": \"net_pcap$n\", \"mtu\": $dmtu}"
		else
			ports+=",
    {\"name\": \"$p\", \"devargs\": \"net_pcap$n,tx_pcap=$TMP/${tag}_$p.pcap\", \"mtu\": $dmtu}"
		fi
		n=$((n + 1))
	done
	cat >"$file" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 50, "mgmt_lcore": 55},
  "ports": [
    $ports
  ],
  "workers": {"count": 1, "lcores": [51]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mirrors": [ $mirrors ]
}
JSON
}

# eq DESCRIPTION GOT WANT
eq() { if [ "$2" = "$3" ]; then ok "$1 ($2)"; else not_ok "$1 (got $2, expected $3)"; fi; }
mc() { python3 "$MC" "$@"; }
peq() { python3 "$PEQ" "$1" "$2" | sed "s/^/# /"; return "${PIPESTATUS[0]}"; } # peq A B: same frames, in order


# ---------------------------------------------------------------------------------------------
# 1, 2. Every encapsulation on six captures (untagged, 802.1Q VID 0, 802.1ad QinQ, 9100 B jumbo,
# IPv4 fragments, a frame cut by the capture's snaplen): one replay each, six sessions.
MIRRORS1="
  {\"id\": 301, \"name\": \"e2\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_e2\"}, \"encap\": {\"type\": \"erspan2\", $ENC}},
  {\"id\": 402, \"name\": \"e2s\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}], \"snaplen\": 100,
   \"destination\": {\"port\": \"m_e2s\"}, \"encap\": {\"type\": \"erspan2\", $ENC}},
  {\"id\": 503, \"name\": \"e3\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_e3\"}, \"encap\": {\"type\": \"erspan3\", $ENC}},
  {\"id\": 604, \"name\": \"e3tx\", \"sources\": [{\"port\": \"p1\", \"direction\": \"tx\"}],
   \"destination\": {\"port\": \"m_e3tx\"}, \"encap\": {\"type\": \"erspan3\", $ENC, \"granularity\": \"100ns\",
   \"hw_id\": 37, \"sgt\": 4660, \"platform_subheader\": true}},
  {\"id\": 705, \"name\": \"span\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_span\"}},
  {\"id\": 806, \"name\": \"rspan\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_rspan\"}, \"encap\": {\"type\": \"rspan\", \"vlan\": 865}}"
for cap in plain_tcpreplay_test.pcap vlan_zeek_http-vlan-0.pcap vlan_tcpdump_802.1ad_QinQ.pcap \
	jumbo_zeek_vxlan-http-9100.pcap frag_zeek_ipv4-frag-4.pcap trunc_zeek_ip4-trunc.pcap; do
	IN="$CAPTURES/$cap"
	tag=enc_${cap%%_*}
	mtu=1500
	[[ $cap == jumbo_* ]] && mtu=9600 # the 9100 B frames need mtu >= 9078 (mtu + 22 B)
	N=$(npkts "$IN")
	big=$(python3 "$MC" sizes "$IN" 100 | awk '{print $2}')
	echo "# $cap: $N frames, $big longer than 100 B, mtu $mtu"
	mkcfg "$TMP/$tag.json" "$IN" $mtu "$MIRRORS1" m_e2 m_e2s m_e3 m_e3tx m_span m_rspan
	replay $tag
	L=$TMP/$tag.log
	eq "$tag: p0 rx_packets = frames of $cap" "$(pctr "$L" p0 rx_packets)" "$N"
	eq "$tag: p1 tx_packets" "$(pctr "$L" p1 tx_packets)" "$N"
	check "$tag: forwarded p1 output equals the input, in order" peq "$IN" "$TMP/${tag}_p1.pcap"
	for s in e2 e2s e3 e3tx span rspan; do
		eq "$tag: session $s mirrored = $N" "$(mctr "$L" $s mirrored)" "$N"
	done
	eq "$tag: session e2s (snaplen 100) truncated counter" "$(mctr "$L" e2s truncated)" "$big"
	eq "$tag: session e2 (no snaplen) truncated counter" "$(mctr "$L" e2 truncated)" 0
	mc erspan "$tag erspan2" "$TMP/${tag}_m_e2.pcap" "$IN" --version 1 --session 301
	mc erspan "$tag erspan2 snaplen 100" "$TMP/${tag}_m_e2s.pcap" "$IN" --version 1 --session 402 --snaplen 100
	mc erspan "$tag erspan3 rx" "$TMP/${tag}_m_e3.pcap" "$IN" --version 2 --session 503 --dir 0
	mc erspan "$tag erspan3 tx+subheader" "$TMP/${tag}_m_e3tx.pcap" "$IN" --version 2 --session 604 --dir 1 \
		--subheader --port-index 1 --gra 1 --hw-id 37 --sgt 4660
	mc span "$tag span" "$TMP/${tag}_m_span.pcap" "$IN"
	mc rspan "$tag rspan 865" "$TMP/${tag}_m_rspan.pcap" "$IN" --vlan 865
done

# ---------------------------------------------------------------------------------------------
# 3. Filter and sampling (one worker: the pattern is deterministic).
IN="$CAPTURES/plain_tcpreplay_test.pcap"
N=$(npkts "$IN")
tcpdump -r "$IN" -w "$TMP/http.pcap" 'tcp port 80' 2>/dev/null
H=$(npkts "$TMP/http.pcap")
echo "# filter 'tcp port 80' selects $H of $N frames (tcpdump)"
check "tcpdump selects some but not all frames (the filter check can fail)" [ "$H" -gt 0 -a "$H" -lt "$N" ]
mkcfg "$TMP/filt.json" "$IN" 1500 "
  {\"id\": 11, \"name\": \"http\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}], \"filter\": \"tcp port 80\",
   \"destination\": {\"port\": \"m_http\"}, \"encap\": {\"type\": \"erspan2\", $ENC}},
  {\"id\": 12, \"name\": \"s4\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}], \"sample\": 4,
   \"destination\": {\"port\": \"m_s4\"}, \"encap\": {\"type\": \"erspan2\", $ENC}},
  {\"id\": 13, \"name\": \"http_s3\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}], \"filter\": \"tcp port 80\",
   \"sample\": 3, \"destination\": {\"port\": \"m_hs3\"}, \"encap\": {\"type\": \"span\"}},
  {\"id\": 14, \"name\": \"v6\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}], \"destination\": {\"port\": \"m_v6\"},
   \"encap\": {\"type\": \"erspan3\", \"src_ip\": \"2001:db8::1\", \"dst_ip\": \"2001:db8::2\",
   \"dst_mac\": \"02:00:5e:10:00:01\", \"ttl\": 9, \"dscp\": 46}},
  {\"id\": 15, \"name\": \"v4opt\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}], \"destination\": {\"port\": \"m_v4\"},
   \"encap\": {\"type\": \"erspan2\", $ENC, \"ttl\": 9, \"dscp\": 46, \"df\": false}}" m_http m_s4 m_hs3 m_v6 m_v4
replay filt
L=$TMP/filt.log
mc erspan "filter tcp port 80" "$TMP/filt_m_http.pcap" "$IN" --expect "$TMP/http.pcap" --version 1 --session 11
eq "filter: filtered_out = frames tcpdump rejects" "$(mctr "$L" http filtered_out)" $((N - H))
eq "filter: mirrored = frames tcpdump selects" "$(mctr "$L" http mirrored)" "$H"
mc erspan "sample 4" "$TMP/filt_m_s4.pcap" "$IN" --sample 4 --version 1 --session 12
eq "sample 4: mirrored = frames 1, 5, 9, ..." "$(mctr "$L" s4 mirrored)" $(((N + 3) / 4))
eq "sample 4: sampled_out = the other frames" "$(mctr "$L" s4 sampled_out)" $((N - (N + 3) / 4))
mc span "filter + sample 3 (every 3rd matching frame)" "$TMP/filt_m_hs3.pcap" "$IN" --expect "$TMP/http.pcap" --sample 3
eq "filter + sample 3: filtered_out + sampled_out + mirrored = frames" \
	$(( $(mctr "$L" http_s3 filtered_out) + $(mctr "$L" http_s3 sampled_out) + $(mctr "$L" http_s3 mirrored) )) "$N"
mc erspan "outer IPv6 (erspan3, hop limit 9, DSCP 46)" "$TMP/filt_m_v6.pcap" "$IN" --version 2 --session 14 \
	--ipv6 --src-ip 2001:db8::1 --dst-ip 2001:db8::2 --ttl 9 --dscp 46
mc erspan "outer IPv4 options (TTL 9, DSCP 46, DF off)" "$TMP/filt_m_v4.pcap" "$IN" --version 1 --session 15 \
	--ttl 9 --dscp 46 --df 0
check "forwarding with filters and sampling: p1 output equals the input" peq "$IN" "$TMP/filt_p1.pcap"

# ---------------------------------------------------------------------------------------------
# 4. Copy strategies: copy, share and adaptive (threshold 512) make identical mirror frames, and
# the counters show which path each frame took.
strat_mirrors() { # strat_mirrors EXTRA: three erspan2 sessions (copy / share / adaptive 512) + EXTRA
	local s id=21 out=""
	for s in copy share adaptive; do
		out+="{\"id\": $id, \"name\": \"$s\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_$s\"}, \"encap\": {\"type\": \"erspan2\", $ENC},
   \"copy\": {\"strategy\": \"$s\", \"threshold\": 512}},"
		id=$((id + 1))
	done
	echo "${out}$1"
}
for cap in plain_tcpreplay_test.pcap jumbo_zeek_vxlan-http-9100.pcap; do
	IN="$CAPTURES/$cap"
	tag=strat_${cap%%_*}
	N=$(npkts "$IN")
	read -r small large < <(python3 "$MC" sizes "$IN" 512)
	echo "# $cap: $small frames <= 512 B, $large > 512 B"
	check "$tag: $cap has frames on both sides of 512 B" [ "$small" -gt 0 -a "$large" -gt 0 ]
	# share sessions cut inside, at the end of, and past the first 2048 B mbuf segment of a chained
	# jumbo; on the jumbo capture a filter reading offset 8500 (third segment)
	extra="" ports="m_copy m_share m_adaptive" id=24
	for cut in 100 2048 3000; do
		extra+="{\"id\": $id, \"name\": \"cut$cut\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"snaplen\": $cut, \"destination\": {\"port\": \"m_cut$cut\"}, \"encap\": {\"type\": \"erspan2\", $ENC},
   \"copy\": {\"strategy\": \"share\"}},"
		ports+=" m_cut$cut"
		id=$((id + 1))
	done
	if [[ $cap == jumbo_* ]]; then
		tcpdump -r "$IN" -w "$TMP/deep.pcap" 'ether[8500:2] != 0' 2>/dev/null
		echo "# filter 'ether[8500:2] != 0' selects $(npkts "$TMP/deep.pcap") of $N frames (tcpdump)"
		extra+="{\"id\": 27, \"name\": \"deep\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"filter\": \"ether[8500:2] != 0\", \"destination\": {\"port\": \"m_deep\"}, \"encap\": {\"type\": \"erspan2\", $ENC}},"
		ports+=" m_deep"
	fi
	mkcfg "$TMP/$tag.json" "$IN" 9600 "$(strat_mirrors "${extra%,}")" $ports
	replay $tag
	L=$TMP/$tag.log
	sid=21
	for s in copy share adaptive; do
		mc erspan "$tag $s" "$TMP/${tag}_m_$s.pcap" "$IN" --version 1 --session $sid
		sid=$((sid + 1))
	done
	mc inner-equal "$tag: adaptive vs copy" "$TMP/${tag}_m_adaptive.pcap" "$TMP/${tag}_m_copy.pcap" --version 1
	mc inner-equal "$tag: adaptive vs share" "$TMP/${tag}_m_adaptive.pcap" "$TMP/${tag}_m_share.pcap" --version 1
	id=24
	for cut in 100 2048 3000; do
		mc erspan "$tag share snaplen $cut" "$TMP/${tag}_m_cut$cut.pcap" "$IN" --version 1 --session $id --snaplen $cut
		id=$((id + 1))
	done
	[[ $cap == jumbo_* ]] && mc erspan "$tag filter reading offset 8500" "$TMP/${tag}_m_deep.pcap" "$IN" \
		--expect "$TMP/deep.pcap" --version 1 --session 27
	eq "$tag: copy: copied = all frames" "$(mctr "$L" copy copied)" "$N"
	eq "$tag: copy: shared = 0" "$(mctr "$L" copy shared)" 0
	eq "$tag: share: shared = all frames" "$(mctr "$L" share shared)" "$N"
	eq "$tag: share: copied = 0" "$(mctr "$L" share copied)" 0
	eq "$tag: adaptive: copied = frames <= 512 B" "$(mctr "$L" adaptive copied)" "$small"
	eq "$tag: adaptive: shared = frames > 512 B" "$(mctr "$L" adaptive shared)" "$large"
	check "$tag: forwarded p1 output equals the input" peq "$IN" "$TMP/${tag}_p1.pcap"
done

# ---------------------------------------------------------------------------------------------
# 5. Robustness: runts, a 1 B and a 14 B frame, malformed and cut frames, jumbos, through ERSPAN
# with share and copy (and snaplen 14: the copy ends exactly at the end of a 14 B frame). Frames
# shorter than 14 B (the 1 B one) are dropped on input as runts: neither forwarded nor mirrored.
ROB=(tiny_suricata_too-small.pcap tiny_suricata_eth-only-14B.pcap)
for f in "$CAPTURES"/bad_*.pcap "$CAPTURES"/trunc_*.pcap; do ROB+=("$(basename "$f")"); done
ROB+=(gre_tcpdump_heapoverflow-1_malformed.pcap jumbo_zeek_vxlan-http-9100.pcap jumbo_zeek_smtp-8754.pcap)
mergecap -a -F pcap -w "$TMP/robust.pcap" "${ROB[@]/#/$CAPTURES/}"
IN="$TMP/robust.pcap"
N=$(npkts "$IN")
echo "# robustness input: ${#ROB[@]} captures concatenated, $N frames"
python3 - "$IN" <<'PY' | sed 's/^/# /'
import struct, sys
d = open(sys.argv[1], 'rb').read()
o, sizes = 24, []
while o + 16 <= len(d):
    cl = struct.unpack('<I', d[o + 8:o + 12])[0]
    sizes.append(cl)
    o += 16 + cl
print(f'caplen min {min(sizes)} max {max(sizes)}; < 14 B: {sum(s < 14 for s in sizes)}, '
      f'< 60 B: {sum(s < 60 for s in sizes)}, > 1514 B: {sum(s > 1514 for s in sizes)}')
PY
# what passes the input port: the frames of 14 B or more (tshark selects them)
tshark -r "$IN" -Y 'frame.cap_len >= 14' -F pcap -w "$TMP/robust_fwd.pcap" 2>/dev/null
FWD="$TMP/robust_fwd.pcap"
NF=$(npkts "$FWD")
echo "# robustness: $NF frames of 14 B or more, $((N - NF)) runts"
check "robustness input holds runts and frames that pass" [ "$NF" -gt 0 -a "$NF" -lt "$N" ]
rob_mirrors() { # rob_mirrors STRATEGY
	echo "{\"id\": 31, \"name\": \"r_full\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_full\"}, \"encap\": {\"type\": \"erspan2\", $ENC}, \"copy\": {\"strategy\": \"$1\"}},
  {\"id\": 32, \"name\": \"r_snap14\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}], \"snaplen\": 14,
   \"destination\": {\"port\": \"m_snap14\"}, \"encap\": {\"type\": \"erspan2\", $ENC}, \"copy\": {\"strategy\": \"$1\"}},
  {\"id\": 33, \"name\": \"r_e3\", \"sources\": [{\"port\": \"p1\", \"direction\": \"tx\"}],
   \"destination\": {\"port\": \"m_e3\"}, \"encap\": {\"type\": \"erspan3\", $ENC}, \"copy\": {\"strategy\": \"$1\"}},
  {\"id\": 34, \"name\": \"r_span\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_span\"}, \"copy\": {\"strategy\": \"$1\"}}"
}
for strategy in share copy; do
	tag=rob_$strategy
	mkcfg "$TMP/$tag.json" "$IN" 9600 "$(rob_mirrors $strategy)" m_full m_snap14 m_e3 m_span
	replay $tag
	L=$TMP/$tag.log
	eq "$tag: p0 rx_packets = frames" "$(pctr "$L" p0 rx_packets)" "$N"
	eq "$tag: p0 runt = frames under 14 B" "$(pctr "$L" p0 runt)" $((N - NF))
	check "$tag: forwarded p1 output equals the input without its runts" peq "$FWD" "$TMP/${tag}_p1.pcap"
	for s in r_full r_snap14 r_e3 r_span; do
		acc=$(( $(mctr "$L" $s mirrored) + $(mctr "$L" $s drop_nombuf) + $(mctr "$L" $s drop_txfull) ))
		eq "$tag: $s: every frame past the input port mirrored or counted (mirrored + drop_nombuf + drop_txfull)" "$acc" "$NF"
		col=shared
		[ $strategy = copy ] && col=copied
		eq "$tag: $s: the $strategy path made every copy ($col)" "$(mctr "$L" $s $col)" "$NF"
	done
	mc erspan "$tag erspan2" "$TMP/${tag}_m_full.pcap" "$IN" --expect "$FWD" --version 1 --session 31
	mc erspan "$tag erspan2 snaplen 14" "$TMP/${tag}_m_snap14.pcap" "$IN" --expect "$FWD" --version 1 --session 32 --snaplen 14
	mc erspan "$tag erspan3 tx" "$TMP/${tag}_m_e3.pcap" "$IN" --expect "$FWD" --version 2 --session 33 --dir 1
	mc span "$tag span" "$TMP/${tag}_m_span.pcap" "$IN" --expect "$FWD"
done
# the 14 B Ethernet-only frame alone, snaplen 14, every encapsulation and both copy paths
IN="$CAPTURES/tiny_suricata_eth-only-14B.pcap"
mkcfg "$TMP/eth14.json" "$IN" 1500 "
  {\"id\": 41, \"name\": \"c14\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}], \"snaplen\": 14,
   \"destination\": {\"port\": \"m_c\"}, \"encap\": {\"type\": \"erspan2\", $ENC}, \"copy\": {\"strategy\": \"copy\"}},
  {\"id\": 42, \"name\": \"s14\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}], \"snaplen\": 14,
   \"destination\": {\"port\": \"m_s\"}, \"encap\": {\"type\": \"erspan3\", $ENC}, \"copy\": {\"strategy\": \"share\"}},
  {\"id\": 43, \"name\": \"r14\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}], \"snaplen\": 14,
   \"destination\": {\"port\": \"m_r\"}, \"encap\": {\"type\": \"rspan\", \"vlan\": 865}, \"copy\": {\"strategy\": \"share\"}}" \
	m_c m_s m_r
replay eth14
mc erspan "14 B frame, snaplen 14, copy" "$TMP/eth14_m_c.pcap" "$IN" --version 1 --session 41 --snaplen 14
mc erspan "14 B frame, snaplen 14, share, erspan3" "$TMP/eth14_m_s.pcap" "$IN" --version 2 --session 42 --snaplen 14
mc rspan "14 B frame, snaplen 14, share, rspan" "$TMP/eth14_m_r.pcap" "$IN" --vlan 865
# Frames over 64 KiB (a TSO super-frame as a capture can hold it) are longer than any port's mtu +
# 22 B: dropped on input as oversize, neither forwarded nor mirrored (the 100 B frame passes)
mc mkpcap "$TMP/huge.pcap" 70000 65487 65488 100
mc mkpcap "$TMP/huge_fwd.pcap" 100
IN="$TMP/huge.pcap"
mkcfg "$TMP/huge.json" "$IN" 9600 "
  {\"id\": 71, \"name\": \"hc\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_hc\"}, \"encap\": {\"type\": \"erspan2\", $ENC}, \"copy\": {\"strategy\": \"copy\"}},
  {\"id\": 72, \"name\": \"hs\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_hs\"}, \"encap\": {\"type\": \"erspan3\", $ENC, \"platform_subheader\": true},
   \"copy\": {\"strategy\": \"share\"}},
  {\"id\": 73, \"name\": \"hr\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_hr\"}, \"encap\": {\"type\": \"rspan\", \"vlan\": 865}}" m_hc m_hs m_hr
replay huge
eq "huge: p0 oversize = the 3 frames over 9622 B" "$(pctr "$TMP/huge.log" p0 oversize)" 3
check "huge: forwarded p1 output is the 100 B frame" peq "$TMP/huge_fwd.pcap" "$TMP/huge_p1.pcap"
mc erspan "huge erspan2 copy" "$TMP/huge_m_hc.pcap" "$IN" --expect "$TMP/huge_fwd.pcap" --version 1 --session 71
mc erspan "huge erspan3+subheader share" "$TMP/huge_m_hs.pcap" "$IN" --expect "$TMP/huge_fwd.pcap" --version 2 --session 72 --subheader
mc rspan "huge rspan" "$TMP/huge_m_hr.pcap" "$IN" --expect "$TMP/huge_fwd.pcap" --vlan 865
eq "huge: truncated counter" "$(mctr "$TMP/huge.log" hc truncated)" 0

# Frames of 12..15 B (just the MACs, plus 1..3 B) and 60 B: RSPAN with the copy and the share path
# (the tag goes right behind the MACs), ERSPAN II and SPAN; the 12 and 13 B runts are dropped on
# input (p0 runt), the others mirrored
mc mkpcap "$TMP/runts.pcap" 12 13 14 15 60 12
mc mkpcap "$TMP/runts_fwd.pcap" 14 15 60
IN="$TMP/runts.pcap"
N=3
mkcfg "$TMP/runts.json" "$IN" 1500 "
  {\"id\": 45, \"name\": \"rc\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_rc\"}, \"encap\": {\"type\": \"rspan\", \"vlan\": 865}, \"copy\": {\"strategy\": \"copy\"}},
  {\"id\": 46, \"name\": \"rs\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_rs\"}, \"encap\": {\"type\": \"rspan\", \"vlan\": 865}, \"copy\": {\"strategy\": \"share\"}},
  {\"id\": 47, \"name\": \"ec\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_ec\"}, \"encap\": {\"type\": \"erspan2\", $ENC}, \"copy\": {\"strategy\": \"copy\"}},
  {\"id\": 48, \"name\": \"sp\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_sp\"}, \"copy\": {\"strategy\": \"copy\"}}" m_rc m_rs m_ec m_sp
replay runts
L=$TMP/runts.log
eq "runts: p0 runt (12, 13, 12 B)" "$(pctr "$L" p0 runt)" 3
check "runts: forwarded p1 output equals the input without its runts" peq "$TMP/runts_fwd.pcap" "$TMP/runts_p1.pcap"
mc rspan "runts rspan, copy path" "$TMP/runts_m_rc.pcap" "$IN" --expect "$TMP/runts_fwd.pcap" --vlan 865
mc rspan "runts rspan, share path" "$TMP/runts_m_rs.pcap" "$IN" --expect "$TMP/runts_fwd.pcap" --vlan 865
mc erspan "runts erspan2, copy path" "$TMP/runts_m_ec.pcap" "$IN" --expect "$TMP/runts_fwd.pcap" --version 1 --session 47
mc span "runts span, copy path" "$TMP/runts_m_sp.pcap" "$IN" --expect "$TMP/runts_fwd.pcap"
for s in rc rs ec sp; do
	eq "runts: session $s mirrored every frame of 14 B or more, drop_nombuf 0 (the pool is not empty)" \
		"$(mctr "$L" $s mirrored)/$(mctr "$L" $s drop_nombuf)" "$N/0"
done

# RSPAN on the robustness input: its 1 B frame (trunc_zeek_eth-hdr.pcap, caplen 1), shorter than
# the two MAC addresses RSPAN rewrites in front of its tag, is a runt: dropped before mirroring
IN="$TMP/robust.pcap"
N=$(npkts "$IN")
mkcfg "$TMP/rob_rspan.json" "$IN" 9600 "
  {\"id\": 51, \"name\": \"rr\", \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}],
   \"destination\": {\"port\": \"m_r\"}, \"encap\": {\"type\": \"rspan\", \"vlan\": 865}}" m_r
replay rob_rspan
L=$TMP/rob_rspan.log
eq "rob_rspan: p0 rx_packets = frames" "$(pctr "$L" p0 rx_packets)" "$N"
check "rob_rspan: forwarded p1 output equals the input without its runts" peq "$FWD" "$TMP/rob_rspan_p1.pcap"
mc rspan "rob_rspan rspan 865" "$TMP/rob_rspan_m_r.pcap" "$IN" --expect "$FWD" --vlan 865
acc=$(( $(mctr "$L" rr mirrored) + $(mctr "$L" rr drop_nombuf) + $(mctr "$L" rr drop_txfull) + $(mctr "$L" rr drop_malformed) ))
eq "rob_rspan: every frame past the input port mirrored or counted (mirrored + drop_nombuf + drop_txfull + drop_malformed)" "$acc" "$NF"

# ---------------------------------------------------------------------------------------------
# 6. Mirroring never affects forwarding: the same replay with no session, and with an ERSPAN II
# session (p0 rx and p1 tx) whose destination discards everything (a pcap port without tx_pcap).
# On the 8317-frame capture the destination's ring also overflows (drop_txfull): a destination
# that cannot keep up.
for cap in plain_tcpreplay_test.pcap bulk_zeek_ftp-8317-small.pcap; do
	IN="$CAPTURES/$cap"
	N=$(npkts "$IN")
	tag=fwd_${cap%%_*}
	mkcfg "$TMP/${tag}_off.json" "$IN" 1500 "" drop0
	mkcfg "$TMP/${tag}_on.json" "$IN" 1500 "{\"id\": 61, \"name\": \"todrop\",
   \"sources\": [{\"port\": \"p0\", \"direction\": \"rx\"}, {\"port\": \"p1\", \"direction\": \"tx\"}],
   \"destination\": {\"port\": \"drop0\"}, \"encap\": {\"type\": \"erspan2\", $ENC}, \"copy\": {\"strategy\": \"share\"}}" drop0
	replay ${tag}_off
	replay ${tag}_on
	Loff=$TMP/${tag}_off.log Lon=$TMP/${tag}_on.log
	sent=$(pctr "$Lon" p1 tx_packets)
	[[ $sent =~ ^[0-9]+$ ]] || sent=-1
	eq "$tag: with mirroring, p1 tx_packets + drop_packets = frames" $((sent + $(pctr "$Lon" p1 drop_packets))) "$N"
	mc subseq "$tag: with mirroring, p1 output" "$TMP/${tag}_on_p1.pcap" "$IN" "$sent"
	acc=$(( $(mctr "$Lon" todrop mirrored) + $(mctr "$Lon" todrop drop_txfull) + $(mctr "$Lon" todrop drop_nombuf) ))
	echo "# $tag: session todrop: mirrored $(mctr "$Lon" todrop mirrored), drop_txfull $(mctr "$Lon" todrop drop_txfull)," \
		"drop_nombuf $(mctr "$Lon" todrop drop_nombuf); drop0 port_out $(pctr "$Lon" drop0 port_out)"
	eq "$tag: every p0 rx and p1 tx frame mirrored or counted" "$acc" $((N + sent))
	# a replay must not lose forwarded frames, with or without a mirror session; when the run without
	# mirroring lost frames itself (the bridge, not the mirror), the two runs are not compared
	lost_off=$(pctr "$Loff" p1 drop_packets)
	eq "$tag: without mirroring, no forwarded frame lost at p1 (drop_packets)" "$lost_off" 0
	eq "$tag: with mirroring, no forwarded frame lost at p1 (drop_packets)" "$(pctr "$Lon" p1 drop_packets)" 0
	if [ "$lost_off" != 0 ]; then
		ok "$tag: forwarding identical with and without mirroring # SKIP the run without mirroring lost $lost_off frames"
		continue
	fi
	check "$tag: p1 output with a mirror session equals p1 output without" \
		peq "$TMP/${tag}_off_p1.pcap" "$TMP/${tag}_on_p1.pcap"
	for p in p0 p1; do
		a=$(grep -E "^$p " "$Loff")
		b=$(grep -E "^$p " "$Lon")
		echo "# $tag $p without: $a"
		echo "# $tag $p with:    $b"
		check "$tag: $p counters identical with and without mirroring" [ -n "$a" -a "$a" = "$b" ]
	done
done

check "no hugepage file of prefix $PREFIX left" bash -c "! ls /dev/hugepages/${PREFIX}map_* >/dev/null 2>&1"
