#!/usr/bin/env bash
# Maps (docs/MAPS.md): the classifier on real rte_acl contexts (build/tests/sbx-map-classify: the
# parser and key extractor of shared/maprules.c, the contexts of shared/mapacl.c) against a plain
# Python reference model (tests/lib/map_model.py: its own frame parser, first match per map).
# Random rule sets (seeded: MAP_SEED) of MAP_RULES rules (1,024) over 16 maps with overlapping
# prefixes, port and VLAN ranges, IPv4 and IPv6, VLAN and QinQ, MACs, DSCP, TCP flags, fragments;
# MAP_FRAMES frames (200,000) built to hit every rule (IPv6 extension-header chains, IPv4 options,
# first and later fragments, ARP/MPLS/LLDP); every frame's results for every map must equal the
# model's: 0 differ. scapy decodes a sample as a third, independent parser of the same frames.
# Then 20 maps (past 16 maps: two context sets), one of them empty.
# The longer runs (16,384 and 65,536 rules): docs/TESTING.md.
# Own EAL: --no-huge --no-shconf --no-pci, lcore 118, file prefix sbxmapc<pid>; no port, no root.
set -uo pipefail
source "$(dirname "$0")/../lib/common.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TOOL=${SBX_BUILD:-$ROOT/build}/tests/sbx-map-classify
MODEL="$ROOT/tests/lib/map_model.py"
SEED=${MAP_SEED:-$(date +%s)} RULES=${MAP_RULES:-1024} FRAMES=${MAP_FRAMES:-200000}
TMP=$(mktemp -d /tmp/sbx-map-model.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

[ -x "$TOOL" ] || { not_ok "no $TOOL (build first)"; exit 1; }
echo "# seed $SEED, $RULES rules in 16 maps, $FRAMES frames"
check "the generator writes $RULES rules and $FRAMES frames" python3 "$MODEL" gen "$SEED" "$RULES" 16 "$FRAMES" "$TMP"
start=$SECONDS
check "sbx-map-classify builds the contexts and classifies every frame" \
	cond '"$TOOL" ${MAP_MEM_MB:+--eal -m --eal "$MAP_MEM_MB"} "$TMP/rules.json" "$TMP/frames.pcap" >"$TMP/ours.txt" 2>"$TMP/ours.err"'
grep -v '^# shadowed: ' "$TMP/ours.err" | sed 's/^/# /'
echo "# classified in $((SECONDS - start)) s"
shadowed=$(sed -n 's/^# shadowed rules: //p' "$TMP/ours.err")
python3 "$MODEL" compare "$TMP" "$TMP/ours.txt" >"$TMP/cmp.txt"; rc=$?
sed 's/^/# /' "$TMP/cmp.txt"
read -r frames differ hit unhit < <(sed -n 's/^frames \([0-9]*\) differ \([0-9]*\) rules [0-9]* hit \([0-9]*\) unhit \([0-9]*\).*/\1 \2 \3 \4/p' "$TMP/cmp.txt")
check "every frame's results for every map equal the model's ($frames frames, ${differ:-?} differ)" \
	cond '[ "$rc" -eq 0 ] && [ "${frames:-0}" -eq "$FRAMES" ] && [ "${differ:-1}" -eq 0 ]'
# a rule decides no frame when an earlier rule covers it (the shadowed ones) or when earlier rules
# together cover the points drawn for it: at most 2 % of the rules beyond the shadowed ones at
# 1,024 rules, 3 % in the longer runs (more rules a map: more that earlier ones cover together;
# 2.06 % at 16,384)
PCT=$((RULES > 1024 ? 3 : 2))
check "every rule decides frames but the shadowed ones and at most $PCT % more ($hit decide, $unhit do not, $shadowed shadowed)" \
	cond '[ -n "$unhit" ] && [ -n "$shadowed" ] && [ "$unhit" -ge "$shadowed" ] && [ $((unhit - shadowed)) -le $((RULES * PCT / 100)) ]'
# negative control: one result changed in our output must be reported
sed '7s/^[^ ]*/p65535/' "$TMP/ours.txt" >"$TMP/bad.txt"
check "negative control: one changed result is reported as 1 frame differing" \
	cond '{ python3 "$MODEL" compare "$TMP" "$TMP/bad.txt" || true; } | grep -q "differ 1 "'
# the python3 that has scapy (Debian's python3-scapy is /usr/bin/python3's; PATH may name another)
SCAPY_PY=$(for p in python3 /usr/bin/python3; do "$p" -c 'import scapy' 2>/dev/null && { echo "$p"; break; }; done)
if [ -n "$SCAPY_PY" ]; then
	check "scapy decodes 3,000 frames with the model's fields (tags, addresses, protocol, DSCP, fragment, ports)" \
		cond '{ "$SCAPY_PY" "$MODEL" scapy "$TMP" 3000 >"$TMP/scapy.txt"; sed "s/^/# /" "$TMP/scapy.txt" | tail -n 6; grep -qE "fields [1-9][0-9]{3,} differ 0$" "$TMP/scapy.txt"; }'
else
	ok "scapy decodes a sample # SKIP python3-scapy is not installed (./spanbox deps)"
fi
# past 16 maps: 20 maps (two context sets, results gathered from both), one of them empty
M2="$TMP/m20"
python3 "$MODEL" gen "$((SEED + 1))" 400 20 20000 "$M2" >/dev/null &&
python3 - "$M2" <<'PY'
import json, sys
d = sys.argv[1]
j = json.load(open(d + "/rules.json"))
j["maps"][17]["rules"] = []
json.dump(j, open(d + "/rules.json", "w"))
PY
"$TOOL" "$M2/rules.json" "$M2/frames.pcap" >"$M2/ours.txt" 2>"$M2/ours.err"
grep '^# maps' "$M2/ours.err" | sed 's/^/# /'
python3 "$MODEL" compare "$M2" "$M2/ours.txt" >"$M2/cmp.txt"; rc=$?
sed -n '$p' "$M2/cmp.txt" | sed 's/^/# /'
check "20 maps (past 16: two context sets), map 17 empty: 0 of 20,000 frames differ, 20 results a frame" \
	cond '[ "$rc" -eq 0 ] && grep -q " differ 0 " "$M2/cmp.txt" && [ "$(awk "{print NF}" "$M2/ours.txt" | sort -u)" = 20 ] && ! cut -d" " -f18 "$M2/ours.txt" | grep -qv "^-$"'
# one map of 1,024 of the model's rules (every field drawn: MACs, VLANs, ranges on both ports):
# rte_acl cannot build them into one context even at its largest node limit, so the map is built
# in parts (halves of its rules, docs/MAPS.md "Design"); first match must hold across the parts.
# The 16,384-rule long run (16 such maps) returned no result at all before the parts existed.
M3="$TMP/m1"
python3 "$MODEL" gen "$((SEED + 2))" 1024 1 20000 "$M3" >/dev/null
"$TOOL" "$M3/rules.json" "$M3/frames.pcap" >"$M3/ours.txt" 2>"$M3/ours.err"
grep '^# maps' "$M3/ours.err" | sed 's/^/# /'
parts=$(sed -n 's/^# maps .* parts \([0-9]*\)$/\1/p' "$M3/ours.err")
python3 "$MODEL" compare "$M3" "$M3/ours.txt" >"$M3/cmp.txt"; rc=$?
sed -n '$p' "$M3/cmp.txt" | sed 's/^/# /'
check "one map of 1,024 rules of every field: built in parts (${parts:-?} splits of its rules), 0 of 20,000 frames differ" \
	cond '[ "$rc" -eq 0 ] && grep -q " differ 0 " "$M3/cmp.txt" && [ "${parts:-0}" -ge 1 ]'
# a bad rule is refused, naming it, and nothing is classified
python3 - "$TMP" <<'PY'
import json, sys
d = sys.argv[1]
j = json.load(open(d + "/rules.json"))
j["maps"][2]["rules"][5] = {"action": "pass", "dst_port": 70000}
json.dump(j, open(d + "/bad.json", "w"))
PY
"$TOOL" "$TMP/bad.json" "$TMP/frames.pcap" >"$TMP/bad.out" 2>"$TMP/bad.err"; rc=$?
check "a bad rule is refused: exit 2, \"maps[2].rules[5].dst_port: 70000 is not a port\", no output" \
	cond '[ "$rc" -eq 2 ] && grep -qx "maps\[2\].rules\[5\].dst_port: 70000 is not a port" "$TMP/bad.err" && [ ! -s "$TMP/bad.out" ]'
