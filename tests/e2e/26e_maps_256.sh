#!/usr/bin/env bash
# 256 maps in the running product (issue #27 "Scale": "256 maps", docs/MAPS.md "Limits"), on a real
# appliance with mgmt on loopback: tests/lib/maps256_gen.py builds the config and the frames (scapy).
# p0 (net_pcap rx file) carries 241 maps with rules (0..239 and 255: 16 rte_acl context sets, 16
# lookups per frame), p2 14 more (240..253: one set), map 254 is a collector on both; map k passes
# UDP destination port 10000 + k, maps 0, 63, 64, 127, 128 and 255 (both ends of each of the four
# 64-bit words of a set of maps) also port 20000; map k copies to tool port t(k % 4) (net_pcap tx).
#  - the config of 256 maps starts; the primary built 16 context sets' contexts for p0;
#  - GET /api/v1/maps: 256 maps; each map's counters.passed and counters.mirrored_packets equal
#    the frames sent to it, exactly (1-3 frames each; 5 frames taken by six maps at once; the
#    collector only the frames no map on their port passed: no-map frames, frames of p2's maps
#    sent into p0, frames of map 0 sent into p2); every frame classified once;
#  - the tool ports' pcaps (tshark, after the appliance stopped): exactly the copies expected, per
#    UDP destination port; the forwarded outputs hold every frame;
#  - printed, not checked: GET /maps and /metrics times (curl time_total), mgmt's CPU over 10 s.
# Own resources: file prefix sbxm256, lcores 97 (primary), 98 (mgmt), 99 (worker), API port 19156.
set -uo pipefail
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
API=http://127.0.0.1:19156/api/v1
TOKEN=sbxm256-token-0123456789abcdef
trap 'inst_cleanup; [ -n "${SBX_KEEP:-}" ] || rm -rf "$TMP"' EXIT

check "the generator writes 256 maps and their frames" \
	cond '"$PY" "$ROOT/tests/lib/maps256_gen.py" "$TMP" sbxm256 97,98,99 19156 "$TOKEN" &&
	      [ "$(jq ".maps | length" "$TMP/maps256.json")" = 256 ]'
nf0=$(jq .frames.p0 "$TMP/want.json") nf2=$(jq .frames.p2 "$TMP/want.json")
t0=$SECONDS
inst_start_both m256 "$TMP/maps256.json" "$API" || exit 0
echo "# started in $((SECONDS - t0)) s; $(grep -m1 'maps: 256 maps' "$TMP/m256-primary.log")"
classified() { curl -fsS "$API/maps" | jq .classified_frames; }
wait_for 150 cond '[ "$(classified)" -ge $((nf0 + nf2)) ]'
sleep 0.5 # the last copies leave the tool ports' queues
curl -fsS "$API/maps" >"$TMP/maps.json"
curl -fsS "$API/system" >"$TMP/system.json"
check "GET /api/v1/maps: 256 maps; every frame ($nf0 + $nf2) classified once ($(jq .classified_frames "$TMP/maps.json"))" \
	cond '[ "$(jq ".maps | length" "$TMP/maps.json")" = 256 ] && [ "$(jq .classified_frames "$TMP/maps.json")" = $((nf0 + nf2)) ]'
check "the primary built p0's classifier: 241 maps, 16 context sets (at least 16 contexts: $(jq -c '.maps' "$TMP/system.json" | head -c 300))" \
	cond 'jq -e "[.. | objects | select(.maps? == 241 and (.contexts? // 0) >= 16)] | length >= 1" "$TMP/system.json" >/dev/null'
# each map: passed and mirrored_packets against the generator's count
jq -c '[.maps[] | {key: (.id | tostring), value: [.counters.passed, .counters.mirrored_packets]}] | from_entries' "$TMP/maps.json" >"$TMP/got.json"
bad=$(jq -n --slurpfile g "$TMP/got.json" --slurpfile w "$TMP/want.json" \
	'[$w[0].passed | to_entries[] | select($g[0][.key] != [.value, .value]) | "\(.key): want \(.value) got \($g[0][.key])"]')
check "each of the 256 maps: counters.passed = counters.mirrored_packets = the frames sent to it ($(jq length <<<"$bad") wrong: $(jq -c '.[:6]' <<<"$bad"))" \
	cond '[ "$(jq length <<<"$bad")" = 0 ]'
for k in 0 63 64 127 128 255; do
	check "map $k (word $((k / 64)), bit $((k % 64))): 1 + $k % 3 frames of its own and the 5 of port 20000: $(jq -c ".[\"$((100 + k))\"]" "$TMP/got.json")" \
		cond '[ "$(jq -c ".[\"$((100 + k))\"]" "$TMP/got.json")" = "[$((1 + k % 3 + 5)),$((1 + k % 3 + 5))]" ]'
done
check "the collector (map 254): only the 28 frames no map on their port passed: $(jq -c '.["354"]' "$TMP/got.json")" \
	cond '[ "$(jq -c ".[\"354\"]" "$TMP/got.json")" = "[28,28]" ]'
check "negative control: map 1's count is not map 0's (2 against 6)" \
	cond '[ "$(jq -c ".[\"101\"]" "$TMP/got.json")" = "[2,2]" ] && [ "$(jq -c ".[\"101\"]" "$TMP/got.json")" != "$(jq -c ".[\"100\"]" "$TMP/got.json")" ]'

# mgmt with 256 maps (printed): GET times, then its CPU over 10 s (utime + stime of /proc/PID/stat)
for path in maps metrics; do
	tt=$(for i in 1 2 3 4 5; do curl -fsS -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $TOKEN" "$API/../../$([ $path = metrics ] && echo metrics || echo api/v1/maps)"; done | sort -n | sed -n 3p)
	echo "# GET /${path}: median of 5 $tt s ($(curl -fsS -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:19156/$([ $path = metrics ] && echo metrics || echo api/v1/maps)" | wc -c) bytes)"
done
check "/metrics has a per-map series of map 255 and of the collector" \
	cond 'curl -fsS -H "Authorization: Bearer $TOKEN" http://127.0.0.1:19156/metrics | grep -q "name=\"m255\"" &&
	      curl -fsS -H "Authorization: Bearer $TOKEN" http://127.0.0.1:19156/metrics | grep -q "name=\"m254\""'
if [ "${M256_CPU:-1}" = 1 ]; then
	hz=$(getconf CLK_TCK)
	c0=$(awk '{print $14 + $15}' "/proc/$INST_MGMT/stat")
	sleep 10
	c1=$(awk '{print $14 + $15}' "/proc/$INST_MGMT/stat")
	echo "# mgmt CPU over 10 s with 256 maps (history sampling, no requests): $(( (c1 - c0) * 1000 / hz )) ms"
fi

# the tool ports' pcaps, complete once the appliance stopped
inst_cleanup
for i in 0 1 2 3; do
	tshark -r "$TMP/t$i.pcap" -T fields -e udp.dstport 2>/dev/null | sort | uniq -c |
		awk '{printf "%s\"%s\": %s", n++ ? ", " : "{", $2, $1} END {print n ? "}" : "{}"}' >"$TMP/t$i.got"
	wantt=$(jq -c --arg t "t$i" '.tools[$t] | to_entries | sort_by(.key) | from_entries' "$TMP/want.json")
	gott=$(jq -c 'to_entries | sort_by(.key) | from_entries' "$TMP/t$i.got")
	check "tool port t$i (maps k % 4 = $i): the copies per UDP destination port are the expected ($(jq '[.[]] | add' <<<"$wantt") copies; got $(jq '[.[]] | add' <<<"$gott"))" \
		cond '[ -n "$gott" ] && [ "$gott" = "$wantt" ]'
done
check "t0 holds 3 copies of each of the 5 frames to port 20000 (maps 0, 64, 128), t3 3 (63, 127, 255); t2 the collector's 28" \
	cond '[ "$(jq ".[\"20000\"]" "$TMP/t0.got")" = 15 ] && [ "$(jq ".[\"20000\"]" "$TMP/t3.got")" = 15 ] &&
	      [ "$(jq "[.[\"9999\"], .[\"10000\"], ([to_entries[] | select(.key | tonumber | . >= 10240 and . <= 10253) | .value] | add)] | add" "$TMP/t2.got")" -ge 28 ]'
check "the forwarded outputs hold every frame: p1 $nf0, p3 $nf2" \
	cond '[ "$(tshark -r "$TMP/fwd0.pcap" 2>/dev/null | wc -l)" = "$nf0" ] && [ "$(tshark -r "$TMP/fwd2.pcap" 2>/dev/null | wc -l)" = "$nf2" ]'
