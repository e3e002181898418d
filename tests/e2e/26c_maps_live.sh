#!/usr/bin/env bash
# Maps changed at run time (issue #27, docs/MAPS.md "Live changes", docs/RUNTIME_TABLES.md "Maps"),
# on a real appliance with mgmt on loopback and a real SQLite file:
#  - REST: create, get, replace, delete a map; its rules paged (their fields as sent, beside index,
#    packets and bytes), one appended, one deleted; the
#    shadowed rules said as warnings; bad input (a bad rule deep in a table, a malformed prefix, a
#    reversed range, an unknown field, 65,537 rules, a 50 MB body, bad paging) each a 4xx naming
#    the field, with the map, its rules and the store unchanged; the other routes keep their 64 KiB
#    body limit; 65,536 rules replaced in one PUT: 2xx and live within 10 s, stored in one row.
#  - Traffic (tap port sbxmla, frames sent with scapy, the forwarded output and the map's tool port
#    written by net_pcap, decoded by tshark): a live replacement of 16,384 rules under traffic:
#    every frame forwarded once, in order; every frame the tool port got exactly once, and the
#    frames classified by the old table then by the new one, never by anything else (one cut);
#    a worker killed with -9 during a replacement: the change is applied, the restarted worker
#    classifies with the new table; a restart of the primary runs the stored tables (the file's
#    own take no frame); ./spanbox reset-config's --forget-stored-config forgets them.
# Own resources: file prefix sbxml, lcores 80 (primary), 81 (mgmt), 82 (worker), 83 (standby),
# API port 19130, tap sbxmla.
set -uo pipefail
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
GEN="$ROOT/tests/lib/maps_live_gen.py"
API=http://127.0.0.1:19130/api/v1
TOKEN=sbxml-token-0123456789abcdef
AUTH="Authorization: Bearer $TOKEN"
trap 'inst_cleanup; [ -n "${SBX_KEEP:-}" ] || rm -rf "$TMP"' EXIT

cat >"$TMP/live.json" <<JSON
{
  "eal": {"file_prefix": "sbxml", "socket_mem_mb": 512, "primary_lcore": 80, "mgmt_lcore": 81},
  "ports": [{"name": "a", "devargs": "net_tap0,iface=sbxmla"},
            {"name": "b", "devargs": "net_pcap0,tx_pcap=$TMP/fwd.pcap"},
            {"name": "t", "devargs": "net_pcap1,tx_pcap=$TMP/t.pcap"},
            {"name": "u", "devargs": "net_null0"}],
  "workers": {"count": 1, "lcores": [82], "standby_lcores": [83]},
  "forwarding": {"xconnects": [["a", "b"]]},
  "mgmt": {"listen": "127.0.0.1", "port": 19130, "database": "$TMP/live.db", "token": "$TOKEN"},
  "maps": [
    {"id": 40, "name": "udp", "sources": [{"port": "a", "direction": "rx"}], "destination": {"port": "t"},
     "rules": [{"action": "pass", "ip_proto": 6}]}
  ]
}
JSON

# req METHOD PATH [BODY-FILE]: the status code; the answer in $TMP/out
req() {
	curl -sS -o "$TMP/out" -w '%{http_code}' -X "$1" -H "$AUTH" -H 'Content-Type: application/json' \
		${3:+--data-binary @"$3"} "$API$2"
}
# mapjson ID RULES-FILE OUT [PORT]: a map object of id ID to tool port t, with the rules of RULES-FILE
mapjson() {
	jq --argjson id "$1" --arg p "${4:-a}" '{id: $id, name: ("m" + ($id | tostring)),
		sources: [{port: $p, direction: "rx"}], destination: {port: "t"}, rules: .}' "$2" >"$3"
}
digest() { curl -fsS "$API/config" | jq -r ".maps[] | select(.id == $1) | .rules.digest"; }
rules_total() { curl -fsS "$API/maps/$1/rules?limit=0" | jq .total; }
stored_rules() { sqlite3 "$TMP/live.db" "SELECT count(*) || '/' || coalesce(sum(count), 0) FROM map_rules"; }
# seqs PCAP PHASE: the sequence numbers of the phase's frames in PCAP, in order (tshark decodes)
seqs() {
	tshark -r "$1" -Y 'udp && ip.src == 192.0.2.1' -T fields -e udp.payload 2>/dev/null | "$PY" "$GEN" seqs "$2"
}

for k in all even none; do "$PY" "$GEN" rules $k 16384 "$TMP/r_$k.json"; done
"$PY" "$GEN" frames 1 30000 "$TMP/ph1.pcap"
"$PY" "$GEN" frames 2 2000 "$TMP/ph2.pcap"
"$PY" "$GEN" frames 3 1000 "$TMP/ph3.pcap"
inst_start_both live "$TMP/live.json" "$API" || exit 0
tap_up() { # no frames of the kernel's own; one FIFO queue: the frames reach the port in the order sent
	sysctl -qw net.ipv6.conf.sbxmla.disable_ipv6=1 2>/dev/null
	tc qdisc replace dev sbxmla root pfifo limit 100000
	ip link set sbxmla up
}
tap_up

# ---- REST ----
mapjson 40 "$TMP/r_all.json" "$TMP/m40.json"
code=$(req PUT /maps/40 "$TMP/m40.json")
check "PUT /maps/40 with 16,384 rules: 200, rule_count 16384 ($code)" \
	cond '[ "$code" = 200 ] && [ "$(jq .rule_count "$TMP/out")" = 16384 ] && [ "$(rules_total 40)" = 16384 ]'
cat >"$TMP/m41.json" <<'JSON'
{"id": 41, "name": "m41", "sources": [{"port": "u", "direction": "rx"}], "destination": {"port": "t"},
 "rules": [{"action": "pass", "dst": "198.51.100.0/24"}, {"action": "drop", "dst": "198.51.100.7"},
           {"action": "pass", "vlan": "100-199"}]}
JSON
code=$(req POST /maps "$TMP/m41.json")
check "POST /maps: 201, 3 rules, the shadowed rule 1 said as a warning ($code: $(jq -c .warnings "$TMP/out"))" \
	cond '[ "$code" = 201 ] && [ "$(jq .rule_count "$TMP/out")" = 3 ] && [ "$(jq .shadowed_rules "$TMP/out")" = 1 ] &&
	      jq -e ".warnings[0] | startswith(\"maps[1].rules[1]:\")" "$TMP/out" >/dev/null'
check "GET /maps/41: id, name, rule_count 3, counters; GET /maps lists both" \
	cond '[ "$(curl -fsS "$API/maps/41" | jq -c "[.id, .name, .rule_count, (.counters | type)]")" = "[41,\"m41\",3,\"object\"]" ] &&
	      [ "$(curl -fsS "$API/maps" | jq -c "[.maps[].id]")" = "[40,41]" ]'
code=$(req POST /maps "$TMP/m41.json")
check "POST /maps with an id in use: 409 naming id ($code)" cond '[ "$code" = 409 ] && [ "$(jq -r .error.field "$TMP/out")" = id ]'
# maps, mirror sessions and captures share one id space: a POST without an id takes the lowest id
# none of them holds (POST /mirrors searched the mirrors only: it gave map 1's id, then 422)
echo '{"name": "noid", "sources": [{"port": "u", "direction": "rx"}], "destination": {"port": "t"},
       "rules": [{"action": "pass", "ip_proto": 17}]}' >"$TMP/mnoid.json"
code=$(req POST /maps "$TMP/mnoid.json")
check "POST /maps without an id: 201, given the lowest free session id, 1 ($code)" \
	cond '[ "$code" = 201 ] && [ "$(curl -fsS "$API/maps" | jq -c "[.maps[].id] | sort")" = "[1,40,41]" ]'
echo '{"name": "snoid", "sources": [{"port": "u", "direction": "rx"}], "destination": {"port": "t"}}' >"$TMP/snoid.json"
code=$(req POST /mirrors "$TMP/snoid.json")
check "POST /mirrors without an id while map 1 holds id 1: 201 with id 2, the next free one ($code, $(jq -c .id "$TMP/out" 2>/dev/null))" \
	cond '[ "$code" = 201 ] && [ "$(jq .id "$TMP/out")" = 2 ]'
code=$(req POST /mirrors <(jq '.id = 41' "$TMP/snoid.json"))
check "POST /mirrors with map 41's id: 409 naming id, the map unchanged ($code: $(jq -r .error.message "$TMP/out" 2>/dev/null))" \
	cond '[ "$code" = 409 ] && [ "$(jq -r .error.field "$TMP/out")" = id ] && [ "$(curl -fsS "$API/maps/41" | jq -r .name)" = m41 ]'
code=$(req POST /maps <(jq '.id = 2' "$TMP/mnoid.json"))
check "POST /maps with mirror session 2's id: 409 naming id ($code)" cond '[ "$code" = 409 ] && [ "$(jq -r .error.field "$TMP/out")" = id ]'
code=$(req DELETE /mirrors/2); code2=$(req DELETE /maps/1)
check "mirror 2 and map 1 deleted again: 200 200 ($code $code2)" \
	cond '[ "$code" = 200 ] && [ "$code2" = 200 ] && [ "$(curl -fsS "$API/maps" | jq -c "[.maps[].id]")" = "[40,41]" ]'
"$PY" "$GEN" rules none 2000 "$TMP/r2000.json"
mapjson 41 "$TMP/r2000.json" "$TMP/m41b.json" u
code=$(req PUT /maps/41 "$TMP/m41b.json")
check "PUT /maps/41 with 2,000 rules: 200 ($code)" cond '[ "$code" = 200 ] && [ "$(jq .rule_count "$TMP/out")" = 2000 ]'
curl -fsS "$API/maps/41/rules?offset=1000&limit=10" >"$TMP/page.json"
check "GET /maps/41/rules?offset=1000&limit=10: total 2000, rules 1000..1009 as sent" \
	cond '[ "$(jq -c "[.total, .offset, .limit, [.rules[].index]]" "$TMP/page.json")" = "[2000,1000,10,[1000,1001,1002,1003,1004,1005,1006,1007,1008,1009]]" ] &&
	      [ "$(jq -c "[.rules[] | del(.index, .packets, .bytes)]" "$TMP/page.json")" = "$(jq -c ".[1000:1010]" "$TMP/r2000.json")" ]'
echo '{"action": "drop", "src": "203.0.113.0/24", "dst_port": "1-1023"}' >"$TMP/one.json"
code=$(req POST /maps/41/rules "$TMP/one.json")
check "POST /maps/41/rules: 201, index 2000, 2001 rules ($code)" \
	cond '[ "$code" = 201 ] && [ "$(jq -c "[.index, .rule_count]" "$TMP/out")" = "[2000,2001]" ] &&
	      [ "$(curl -fsS "$API/maps/41/rules?offset=2000" | jq -c ".rules[0] | del(.index, .packets, .bytes)")" = "$(jq -c . "$TMP/one.json")" ]'
code=$(req DELETE /maps/41/rules/0)
check "DELETE /maps/41/rules/0: 200, 2000 rules, the first is the former second ($code)" \
	cond '[ "$code" = 200 ] && [ "$(rules_total 41)" = 2000 ] &&
	      [ "$(curl -fsS "$API/maps/41/rules?limit=1" | jq -c ".rules[0] | del(.index, .packets, .bytes)")" = "$(jq -c ".[1]" "$TMP/r2000.json")" ]'
code=$(req DELETE /maps/41/rules/2000)
check "DELETE /maps/41/rules/2000 (there are 2000): 404 ($code)" cond '[ "$code" = 404 ]'

# bad input: each a 4xx naming the field; map 41, its rules and the store unchanged
d41=$(digest 41); s41=$(stored_rules)
bad() { # bad TAG METHOD PATH BODY-FILE CODE FIELD [MESSAGE]
	local code want=$5 field=$6 msg=${7:-}
	code=$(req "$2" "$3" "$4")
	check "$1: $code naming $field ($(jq -c .error "$TMP/out" 2>/dev/null | cut -c1-160)); nothing changed" \
		cond '[ "$code" = "$want" ] && [ "$(jq -r .error.field "$TMP/out")" = "$field" ] &&
		      { [ -z "$msg" ] || jq -e --arg m "$msg" ".error.message | startswith(\$m)" "$TMP/out" >/dev/null; } &&
		      [ "$(digest 41)" = "$d41" ] && [ "$(rules_total 41)" = 2000 ] && [ "$(stored_rules)" = "$s41" ]'
}
"$PY" "$GEN" rules bad:1041:dst_port:70000 2000 "$TMP/rb.json"; mapjson 41 "$TMP/rb.json" "$TMP/b1.json" u
bad "a port out of range at rule 1041" PUT /maps/41 "$TMP/b1.json" 422 "maps[1].rules[1041].dst_port" \
	"maps[1].rules[1041].dst_port: 70000 is not a port"
"$PY" "$GEN" rules 'bad:7:dst:"10.0.0/8"' 2000 "$TMP/rb.json"; mapjson 41 "$TMP/rb.json" "$TMP/b2.json" u
bad "a malformed prefix" PUT /maps/41 "$TMP/b2.json" 422 "maps[1].rules[7].dst"
"$PY" "$GEN" rules 'bad:3:src_port:"1023-1"' 2000 "$TMP/rb.json"; mapjson 41 "$TMP/rb.json" "$TMP/b3.json" u
bad "a reversed range" PUT /maps/41 "$TMP/b3.json" 422 "maps[1].rules[3].src_port" 'maps[1].rules[3].src_port: "1023-1" is a reversed range'
"$PY" "$GEN" rules 'bad:5:colour:"red"' 2000 "$TMP/rb.json"; mapjson 41 "$TMP/rb.json" "$TMP/b4.json" u
bad "an unknown field" PUT /maps/41 "$TMP/b4.json" 422 "maps[1].rules[5].colour" "maps[1].rules[5].colour: unknown key"
echo '{"action": "pass", "vlan": 4096}' >"$TMP/b5.json"
bad "POST of one bad rule" POST /maps/41/rules "$TMP/b5.json" 422 "maps[1].rules[2000].vlan"
"$PY" "$GEN" rules none 65537 "$TMP/r65537.json"; mapjson 41 "$TMP/r65537.json" "$TMP/b6.json" u
bad "65,537 rules" PUT /maps/41 "$TMP/b6.json" 422 "maps[1].rules" "maps[1].rules: 65537 rules, at most 65536"
head -c 50000000 /dev/zero | tr '\0' ' ' >"$TMP/b7.json"
bad "a 50 MB body" PUT /maps/41 "$TMP/b7.json" 413 null
bad "a map without sources" PUT /maps/41 <(jq 'del(.sources)' "$TMP/m41b.json") 422 "maps[1].sources"
# the checks of mgmt/validate.c that tests/fuzz/fuzz_rest.c also runs (an id no long holds was cast
# before it was checked: undefined behaviour)
bad "PUT whose body names another id" PUT /maps/41 <(jq '.id = 42' "$TMP/m41b.json") 422 id "id: the body's id is not 41"
bad "PUT whose rules are an object" PUT /maps/41 <(jq '.rules = {"action": "pass"}' "$TMP/m41b.json") 422 rules "rules: not an array"
bad "POST of a map that is an array" POST /maps <(echo '[1, 2]') 422 null "expected a map object"
bad "POST of a map whose id is 1e300" POST /maps <(jq '.id = 1e300' "$TMP/m41.json") 422 "maps[2].id"
code=$(curl -sS -o "$TMP/out" -w '%{http_code}' "$API/maps/41/rules?offset=x")
check "GET rules?offset=x: 400 naming offset ($code)" cond '[ "$code" = 400 ] && [ "$(jq -r .error.field "$TMP/out")" = offset ]'
head -c 100000 /dev/zero | tr '\0' ' ' >"$TMP/b8.json"
code=$(req POST /mirrors "$TMP/b8.json")
check "the other routes keep their 64 KiB body limit: 100 kB to POST /mirrors is 413 ($code)" cond '[ "$code" = 413 ]'

code=$(req DELETE /maps/41)
check "DELETE /maps/41: 200; GET /maps/41 404; its rules no longer stored ($code)" \
	cond '[ "$code" = 200 ] && [ "$(curl -sS -o /dev/null -w "%{http_code}" "$API/maps/41")" = 404 ] &&
	      [ "$(stored_rules)" = "1/16384" ]'

# 65,536 rules (the most an appliance holds) in one PUT: 2xx and live within 10 s end to end,
# stored in one row; then map 40's 16,384 again
"$PY" "$GEN" rules none 65536 "$TMP/r65536.json"; mapjson 40 "$TMP/r65536.json" "$TMP/m40c.json"
builds0=$(curl -fsS "$API/system" | jq '.maps.builds // -1')
t0=$(date +%s%N); code=$(req PUT /maps/40 "$TMP/m40c.json"); ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "# 65,536 rules ($(stat -c %s "$TMP/m40c.json") bytes): PUT answered $code in $ms ms; $(curl -fsS "$API/maps" | jq -c '{build_ms, contexts, memory_bytes}')"
[ "$code" = 200 ] || jq -c . "$TMP/out" | sed 's/^/# /'
check "PUT of 65,536 rules: 200 within 10 s ($ms ms), live (rule count of the running tables) and stored in one row" \
	cond '[ "$code" = 200 ] && [ "$ms" -lt 10000 ] && [ "$(rules_total 40)" = 65536 ] &&
	      [ "$(curl -fsS "$API/maps/40" | jq .rule_count)" = 65536 ] &&
	      [ "$(sqlite3 "$TMP/live.db" "SELECT count(*) FROM map_rules WHERE count = 65536")" = 1 ]'
# what the rule tables take (GET /api/v1/system "maps"): port a's classifier holds map 40's 65,536
# rules; its memory and build time are those of the build the PUT made (one more build)
curl -fsS "$API/system" | jq -c .maps | sed 's/^/# system maps: /'
check "GET /system maps: one more build (after $builds0), port a's classifier with 65,536 rules or more, its memory and build time, built_at RFC 3339" \
	cond '[ "$builds0" -ge 1 ] && curl -fsS "$API/system" | jq -e --argjson b "$builds0" ".maps.builds == \$b + 1 and
		(.maps.classifiers | map(select(.port == \"a\" and .rules >= 65536 and .memory_bytes > 0 and .build_ms > 0)) | length == 1)
		and .maps.memory_bytes >= ([.maps.classifiers[].memory_bytes] | add) and .maps.rule_counters_bytes >= 65536 * 16 * 2 and (.maps.built_at | test(\"^20[0-9-]{8}T\"))" >/dev/null'
code=$(req PUT /maps/40 "$TMP/m40.json")
check "map 40 back to its 16,384 rules (all): 200; the 65,536-rule table no longer stored ($code)" \
	cond '[ "$code" = 200 ] && [ "$(stored_rules)" = "1/16384" ]'

# ---- a live replacement of 16,384 rules under traffic ----
# table "all" passes every frame, "even" the even sequence numbers: each frame is classified by
# one of the two, the old one up to a cut, the new one after it
# 3,000 frames a second: 30,000 span 10 s, so that the change (5.3 s in a loaded rehearsal, the
# primary's rte_acl build sharing 2 CPUs with the worker, mgmt, this sender and the bridge of the
# pcap ports) lands inside the traffic; at 6,000 a second it came after it there
timeout 120 "$PY" "$GEN" send "$TMP/ph1.pcap" sbxmla "$TMP/started" 3000 &
sender=$!
wait_for 300 test -f "$TMP/started"
sleep 0.3
mapjson 40 "$TMP/r_even.json" "$TMP/m40e.json"
t0=$(date +%s%N); code=$(req PUT /maps/40 "$TMP/m40e.json"); ms=$(( ($(date +%s%N) - t0) / 1000000 ))
sender_alive=$(kill -0 $sender 2>/dev/null && echo yes || echo no)
wait $sender
echo "# 16,384 rules replaced under traffic: $code in $ms ms (sender still sending when it answered: $sender_alive)"
# where frames went (a loss shows here: the tap's imissed, the bridged pcap port's oerrors)
curl -fsS "$API/ports" | jq -c '(.ports // .) | map({name, s: (.stats | {ipackets, opackets, imissed, oerrors})})' | sed 's/^/# ports after phase 1: /'
curl -fsS "$API/status" | jq -c '[.workers[] | {drop_pkts: (.counters.drop_pkts // .drop_pkts)}]' 2>/dev/null | sed 's/^/# workers: /'
check "the replacement under traffic: 200, answered while the frames were being sent ($code)" \
	cond '[ "$code" = 200 ] && [ "$sender_alive" = yes ]'

# ---- a worker killed during a replacement ----
sleep 0.5
wpid=$(curl -fsS "$API/status" | jq '.workers[0].pid')
mapjson 40 "$TMP/r_all.json" "$TMP/m40a.json"
req PUT /maps/40 "$TMP/m40a.json" >"$TMP/kcode" &
putter=$!
sleep 0.3
kill -9 "$wpid"
wait $putter
code=$(cat "$TMP/kcode")
wait_for 100 cond '[ "$(curl -fsS "$API/status" | jq -r ".workers[0].state")" = running ] && [ "$(curl -fsS "$API/status" | jq ".workers[0].pid")" != "$wpid" ]'
echo "# worker $wpid killed during the PUT: $code; now $(curl -fsS "$API/status" | jq -c '.workers[0] | {pid, state, restarts, crashes}')"
check "a worker killed (-9) during a replacement: the change answers 200 or 503 (then it is made again), a new worker runs" \
	cond '{ [ "$code" = 200 ] || { [ "$code" = 503 ] && [ "$(req PUT /maps/40 "$TMP/m40a.json")" = 200 ]; }; } &&
	      [ "$(curl -fsS "$API/status" | jq ".workers[0].pid")" != "$wpid" ] && [ "$(digest 40)" != "" ]'
sleep 1
timeout 60 "$PY" "$GEN" send "$TMP/ph2.pcap" sbxmla
sleep 1
# counters follow the map, not its index: map 43 (index 1) keeps its own when map 40 (index 0,
# tens of thousands of frames passed) is deleted and made again
jq '.id = 43 | .name = "m43" | .destination.port = "u" | .rules = [{"action": "pass", "ip_proto": 6}]' "$TMP/m40a.json" >"$TMP/m43.json"
code=$(req POST /maps "$TMP/m43.json")
p40=$(curl -fsS "$API/maps/40" | jq .counters.passed); p43=$(curl -fsS "$API/maps/43" | jq -c '.counters | [.passed, .mirrored_packets]')
code2=$(req DELETE /maps/40); code3=$(req POST /maps "$TMP/m40a.json")
check "map 43 keeps its counters ($p43) when map 40 before it ($p40 passed) is deleted, and map 40 made again starts at 0 ($code $code2 $code3)" \
	cond '[ "$code$code2$code3" = 201200201 ] && [ "$p40" -gt 10000 ] &&
	      [ "$(curl -fsS "$API/maps/43" | jq -c ".counters | [.passed, .mirrored_packets]")" = "$p43" ] &&
	      [ "$(curl -fsS "$API/maps/40" | jq .counters.passed)" -lt "$p40" ]'
d40=$(digest 40)
inst_cleanup
cp "$TMP/fwd.pcap" "$TMP/fwd1.pcap"; cp "$TMP/t.pcap" "$TMP/t1.pcap"

seqs "$TMP/fwd1.pcap" 1 >"$TMP/f1.txt"; seqs "$TMP/t1.pcap" 1 >"$TMP/t1.txt"
seqs "$TMP/fwd1.pcap" 2 >"$TMP/f2.txt"; seqs "$TMP/t1.pcap" 2 >"$TMP/t2.txt"
# the cut: the first frame the old table would have passed and the new one did not
read -r cut dups order bad < <(awk '{n[$1]++; if (NR > 1 && $1 <= last) o++; last = $1}
	END {for (s in n) if (n[s] > 1) d++; print 0, d + 0, o + 0, 0}' "$TMP/t1.txt")
cut=$(awk 'BEGIN {e = 0} {while (e < $1) {if (e % 2 == 1) {print e; exit} e++} e = $1 + 1}' "$TMP/t1.txt")
bad=$(awk -v c="${cut:-0}" '($1 < c) {want = 1} ($1 >= c) {want = ($1 % 2 == 0)} !want {b++} END {print b + 0}' "$TMP/t1.txt")
missing=$(awk -v c="${cut:-0}" '{seen[$1] = 1} END {for (s = 0; s < 30000; s++) if ((s < c || s % 2 == 0) && !seen[s]) m++; print m + 0}' "$TMP/t1.txt")
echo "# phase 1 forwarded: $(sort -n "$TMP/f1.txt" | uniq | wc -l) distinct, first $(head -3 "$TMP/f1.txt" | tr '\n' ' '), last $(tail -2 "$TMP/f1.txt" | tr '\n' ' ')"
echo "# phase 1: forwarded $(wc -l <"$TMP/f1.txt") of 30000, tool port $(wc -l <"$TMP/t1.txt"); cut at frame ${cut:-none}; $dups duplicates, $missing missing, $bad not the table's"
check "under the replacement every frame was forwarded once, in order (30000, tshark decodes them)" \
	cond '[ "$(wc -l <"$TMP/f1.txt")" = 30000 ] && [ "$(seq 0 29999 | cmp - "$TMP/f1.txt" >/dev/null && echo same)" = same ]'
check "the tool port: every frame at most once, in order; the old table up to frame $cut, the new one after (inside the traffic): 0 missing, 0 of another table" \
	cond '[ -n "$cut" ] && [ "$cut" -gt 1000 ] && [ "$cut" -lt 29000 ] && [ "$dups" = 0 ] && [ "$order" = 0 ] && [ "$missing" = 0 ] && [ "$bad" = 0 ]'
check "after the worker was killed during a replacement: the 2000 later frames forwarded and all taken by the new table (all)" \
	cond '[ "$(wc -l <"$TMP/f2.txt")" = 2000 ] && [ "$(seq 0 1999 | cmp - "$TMP/t2.txt" >/dev/null && echo same)" = same ]'

# ---- a restart of the primary on the stored tables ----
inst_start_both live2 "$TMP/live.json" "$API" || exit 0
tap_up
check "after a restart: map 40 runs the stored table (16384 rules, the same digest), its rules as stored" \
	cond '[ "$(digest 40)" = "$d40" ] && [ "$(rules_total 40)" = 16384 ] &&
	      [ "$(curl -fsS "$API/maps/40/rules?offset=16383" | jq -c ".rules[0] | del(.index, .packets, .bytes)")" = "$(jq -c ".[16383]" "$TMP/r_all.json")" ] &&
	      grep -q "maps: the ones changed through the API" "$TMP/live2-primary.log"'
sleep 0.5
timeout 60 "$PY" "$GEN" send "$TMP/ph3.pcap" sbxmla
sleep 1
inst_cleanup
seqs "$TMP/t.pcap" 3 >"$TMP/t3.txt"
check "the restarted primary classifies with the stored table: 1000 of 1000 frames to the tool port (the file's rule passes none)" \
	cond '[ "$(seq 0 999 | cmp - "$TMP/t3.txt" >/dev/null && echo same)" = same ]'
out=$("$BUILD/primary/spanbox-primary" -c "$TMP/live.json" --forget-stored-config 2>&1)
check "--forget-stored-config (./spanbox reset-config) forgets the stored maps and their rules ($(echo $out | cut -c1-80))" \
	cond '[ "$(stored_rules)" = "0/0" ] && [ "$(sqlite3 "$TMP/live.db" "SELECT count(*) FROM config_store")" = 0 ]'
exit 0
