#!/usr/bin/env bash
# Per-rule counters of the maps (issue #27, docs/MAPS.md "Per-rule counters", docs/MGMT.md "Maps"),
# on a real appliance with mgmt on loopback: frames built with scapy (tests/lib/rule_counters.py),
# sent through a tap port (sbxrca) to the real worker, which classifies them with the primary's
# rte_acl contexts and counts each frame on the rule that decided it (pass or drop), per map.
#  - GET /api/v1/maps/{id}/rules: packets and bytes of every rule equal the Python model's
#    (tests/lib/map_model.py's first match over the same pcap), exactly, for two maps at once;
#  - the worker killed with -9 between two phases of traffic: after the restart the counts are
#    those of before (not reset), and after the second phase the model's of both phases (not doubled);
#  - sort=hits (packets descending, then index), search=TEXT, field=NAME&value=TEXT, `matched` and
#    `total`, paging after the search; a bad sort, an unknown field, a field without value: 400
#    naming it;
#  - a rule appended: the unchanged rules keep their counts, the new one starts at 0 and counts the
#    third phase exactly; a rule deleted: the rules after it keep theirs one index lower;
#  - a page of 50 rules of a 65,536-rule map: the time of the first GET and of the next ones
#    (the parsed tables are kept per version of the primary's file; printed, not checked).
# Own resources: file prefix sbxrc, lcores 24 (primary), 25 (mgmt), 26 (worker), 27 (standby),
# API port 19150, tap sbxrca.
set -uo pipefail
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
RC="$ROOT/tests/lib/rule_counters.py"
GEN="$ROOT/tests/lib/maps_live_gen.py"
API=http://127.0.0.1:19150/api/v1
TOKEN=sbxrc-token-0123456789abcdef
AUTH="Authorization: Bearer $TOKEN"
SEED=${RC_SEED:-$(date +%s)}
trap 'inst_cleanup; [ -n "${SBX_KEEP:-}" ] || rm -rf "$TMP"' EXIT
echo "# seed $SEED"

cat >"$TMP/rules.json" <<'JSON'
{"maps": [
 {"id": 40, "rules": [{"action": "drop", "src": "192.0.2.10", "ip_proto": 17},
                      {"action": "pass", "src": "192.0.2.0/24", "dst_port": "1000-1999"},
                      {"action": "pass", "src": "192.0.2.0/24", "ip_proto": 6},
                      {"action": "pass", "src": "192.0.2.0/24", "dst": "198.51.100.0/24"},
                      {"action": "pass", "src": "198.18.99.0/24"},
                      {"action": "pass", "src": "192.0.2.0/24", "dscp": 46}]},
 {"id": 41, "rules": [{"action": "pass", "ip_proto": 17, "dst_port": "1000-1499"},
                      {"action": "drop", "src": "192.0.2.0/24"}]}]}
JSON
jq --arg tmp "$TMP" '{
  eal: {file_prefix: "sbxrc", socket_mem_mb: 512, primary_lcore: 24, mgmt_lcore: 25},
  ports: [{name: "a", devargs: "net_tap0,iface=sbxrca"}, {name: "b", devargs: ("net_pcap0,tx_pcap=" + $tmp + "/fwd.pcap")},
          {name: "t", devargs: "net_null0"}, {name: "u", devargs: "net_null1"}],
  workers: {count: 1, lcores: [26], standby_lcores: [27]},
  forwarding: {xconnects: [["a", "b"]]},
  mgmt: {listen: "127.0.0.1", port: 19150, database: ($tmp + "/live.db"), token: "sbxrc-token-0123456789abcdef"},
  maps: [.maps[] | {id, name: ("m" + (.id | tostring)), sources: [{port: "a", direction: "rx"}],
                    destination: {port: "t"}, rules}]}' "$TMP/rules.json" >"$TMP/live.json"

req() { # req METHOD PATH [BODY-FILE]: the status code; the answer in $TMP/out
	curl -sS -o "$TMP/out" -w '%{http_code}' -X "$1" -H "$AUTH" -H 'Content-Type: application/json' \
		${3:+--data-binary @"$3"} "$API$2"
}
# counts ID: the API's [[packets, bytes], ...] of map ID in rule order
counts() { curl -fsS "$API/maps/$1/rules?limit=10000" | jq -c '[.rules[] | [.packets, .bytes]]'; }
# want ID PCAP...: the model's counts of map ID after the frames of the PCAPs (rules of $TMP/rules.json)
want() { local id=$1; shift; "$PY" "$RC" model "$TMP/rules.json" "$@" | jq -c --arg id "$id" '.[$id]'; }
classified() { curl -fsS "$API/maps" | jq .classified_frames; }
# settle N: wait (10 s at most) until the worker classified N frames and nothing more arrives
settle() {
	# (the count is expanded here: inside cond's eval, "$1" was cond's own argument, the string,
	# and the wait never succeeded: a fixed 10 s)
	wait_for 100 cond "[ \"\$(classified)\" -ge $1 ]" || echo "# settle: $(classified) frames classified after 10 s, $1 awaited"
	sleep 0.5
}
send() { timeout 60 "$PY" "$GEN" send "$1" sbxrca 2>/dev/null; }

"$PY" "$RC" frames "$SEED" 3000 "$TMP/ph1.pcap"
"$PY" "$RC" frames "$((SEED + 1))" 2000 "$TMP/ph2.pcap"
"$PY" "$RC" frames "$((SEED + 2))" 1000 "$TMP/ph3.pcap"
inst_start_both live "$TMP/live.json" "$API" || exit 0
sysctl -qw net.ipv6.conf.sbxrca.disable_ipv6=1 2>/dev/null
ip link set sbxrca up

# ---- phase 1: the model's counts, exactly ----
send "$TMP/ph1.pcap"; settle 3000
got40=$(counts 40) got41=$(counts 41) w40=$(want 40 "$TMP/ph1.pcap") w41=$(want 41 "$TMP/ph1.pcap")
echo "# phase 1 (3000 frames, $(classified) classified): map 40 $got40; map 41 $got41"
check "after 3000 frames: every rule's packets and bytes are the model's, map 40 ($w40) and map 41 ($w41)" \
	cond '[ "$got40" = "$w40" ] && [ "$got41" = "$w41" ] && [ "$(jq ".[4][0]" <<<"$got40")" = 0 ] &&
	      [ "$(jq "[.[][0]] | add" <<<"$got40")" -gt 2000 ]'
check "negative control: the counts of the model over no frames differ from the API's" \
	cond '[ "$(want 40)" != "$got40" ]'
check "every rule carries index, packets and bytes beside its fields" \
	cond 'curl -fsS "$API/maps/40/rules" | jq -e "[.rules[] | (.index | type) == \"number\" and (.packets | type) == \"number\" and (.bytes | type) == \"number\" and .action != null] | all" >/dev/null'

# ---- a worker killed with -9 between two phases ----
wpid=$(curl -fsS "$API/status" | jq '.workers[0].pid')
kill -9 "$wpid"
wait_for 100 cond 'p=$(curl -fsS "$API/status" | jq -r ".workers[0] | select(.state == \"running\") | .pid"); [ -n "$p" ] && [ "$p" != "$wpid" ]'
echo "# worker $wpid killed; now $(curl -fsS "$API/status" | jq -c '.workers[0] | {pid, state, restarts, crashes}')"
check "after the worker was killed (-9) and replaced: the counts are those of before (not reset)" \
	cond '[ "$(counts 40)" = "$got40" ] && [ "$(counts 41)" = "$got41" ]'
send "$TMP/ph2.pcap"; settle 5000
got40=$(counts 40) w40=$(want 40 "$TMP/ph1.pcap" "$TMP/ph2.pcap") w41=$(want 41 "$TMP/ph1.pcap" "$TMP/ph2.pcap")
echo "# phase 2 (2000 more, $(classified) classified): map 40 $got40"
check "after 2000 more frames through the new worker: the model's counts of both phases (grown on, not doubled)" \
	cond '[ "$got40" = "$w40" ] && [ "$(counts 41)" = "$w41" ]'

# ---- sort, search, field/value ----
curl -fsS "$API/maps/40/rules?sort=hits" >"$TMP/hits.json"
wantord=$(jq -c '[to_entries[] | {i: .key, p: .value[0]}] | sort_by(-.p, .i) | [.[].i]' <<<"$w40")
check "sort=hits: the rules by packets descending, then index ($wantord); packets non-increasing" \
	cond '[ "$(jq -c "[.rules[].index]" "$TMP/hits.json")" = "$wantord" ] && [ "$(jq -r .sort "$TMP/hits.json")" = hits ] &&
	      jq -e "[.rules[].packets] as \$p | [range(1; \$p | length) | \$p[. - 1] >= \$p[.]] | all" "$TMP/hits.json" >/dev/null'
check "sort=hits&offset=1&limit=2: the 2nd and 3rd of that order" \
	cond '[ "$(curl -fsS "$API/maps/40/rules?sort=hits&offset=1&limit=2" | jq -c "[.rules[].index]")" = "$(jq -c ".[1:3]" <<<"$wantord")" ]'
curl -fsS "$API/maps/40/rules?search=198.51" >"$TMP/s1.json"
check "search=198.51: rule 3 alone (dst 198.51.100.0/24), matched 1, total 6, with its counts" \
	cond '[ "$(jq -c "[.total, .matched, [.rules[].index], .rules[0].packets]" "$TMP/s1.json")" = "[6,1,[3],$(jq ".[3][0]" <<<"$w40")]" ]'
check "search=PASS (case-insensitive, any field): the 5 pass rules" \
	cond '[ "$(curl -fsS "$API/maps/40/rules?search=PASS" | jq -c "[.matched, [.rules[].index]]")" = "[5,[1,2,3,4,5]]" ]'
check "search=17 matches the number ip_proto 17 (rule 0); search=192.0.2 all but rule 4; search=nothing-here none" \
	cond '[ "$(curl -fsS "$API/maps/40/rules?search=17" | jq -c "[.rules[].index]")" = "[0]" ] &&
	      [ "$(curl -fsS "$API/maps/40/rules?search=192.0.2" | jq -c "[.matched, [.rules[].index]]")" = "[5,[0,1,2,3,5]]" ] &&
	      [ "$(curl -fsS "$API/maps/40/rules?search=nothing-here" | jq -c "[.total, .matched, .rules]")" = "[6,0,[]]" ]'
check "field=src&value=192.0.2.0: rules 1, 2, 3, 5; field=dst_port&value=1000: rule 1; field=dscp&value=46: rule 5" \
	cond '[ "$(curl -fsS "$API/maps/40/rules?field=src&value=192.0.2.0" | jq -c "[.rules[].index]")" = "[1,2,3,5]" ] &&
	      [ "$(curl -fsS "$API/maps/40/rules?field=dst_port&value=1000" | jq -c "[.rules[].index]")" = "[1]" ] &&
	      [ "$(curl -fsS "$API/maps/40/rules?field=dscp&value=46" | jq -c "[.rules[].index]")" = "[5]" ]'
check "search and field together, sorted by hits, paged: search=pass&field=src&value=192.0.2.0&sort=hits&limit=1 is the busiest of 1, 2, 3, 5" \
	cond '[ "$(curl -fsS "$API/maps/40/rules?search=pass&field=src&value=192.0.2.0&sort=hits&limit=1" | jq -c "[.matched, .rules[0].index]")" = "[4,$(jq -c "[to_entries[] | select(.key == 1 or .key == 2 or .key == 3 or .key == 5) | {i: .key, p: .value[0]}] | sort_by(-.p, .i) | .[0].i" <<<"$w40")]" ]'
for q in "sort=bogus:sort" "sort=hits&field=colour&value=x:field" "field=src:value" "value=x:field" "sort=:sort"; do
	code=$(curl -sS -o "$TMP/bad.json" -w '%{http_code}' "$API/maps/40/rules?${q%:*}")
	check "GET .../rules?${q%:*}: 400 JSON naming ${q##*:} ($code: $(jq -c .error "$TMP/bad.json" 2>/dev/null))" \
		cond '[ "$code" = 400 ] && [ "$(jq -r .error.field "$TMP/bad.json")" = "${q##*:}" ]'
done
check "sort=index is the rules' order" \
	cond '[ "$(curl -fsS "$API/maps/40/rules?sort=index" | jq -c "[.rules[].index]")" = "[0,1,2,3,4,5]" ]'

# ---- a rule appended: the unchanged rules keep their counts ----
before=$(counts 40)
echo '{"action": "pass", "ip_proto": 17}' >"$TMP/one.json"
code=$(req POST /maps/40/rules "$TMP/one.json")
after=$(counts 40)
[ "$code" = 201 ] || echo "# POST: $code $(jq -c . "$TMP/out")"
check "POST /maps/40/rules: 201; rules 0-5 keep their counts, the new rule 6 starts at 0 ($after)" \
	cond '[ "$code" = 201 ] && [ "$after" = "$(jq -c ". + [[0, 0]]" <<<"$before")" ]'
jq '.maps[0].rules += [{"action": "pass", "ip_proto": 17}]' "$TMP/rules.json" >"$TMP/r2.json" && mv "$TMP/r2.json" "$TMP/rules.json"
# the model of phase 3 alone (7 rules) added to phases 1 and 2 (6 rules then, rule 6 at 0)
send "$TMP/ph3.pcap"; settle 6000
w3=$(want 40 "$TMP/ph3.pcap")
wsum=$(jq -c --argjson b "$(jq -c ". + [[0, 0]]" <<<"$w40")" '[to_entries[] | [.value[0] + $b[.key][0], .value[1] + $b[.key][1]]]' <<<"$w3")
got=$(counts 40)
check "after 1000 more frames: every rule counts on from its kept count, the appended rule 6 the model's of phase 3 ($got)" \
	cond '[ "$got" = "$wsum" ] && [ "$(jq ".[6][0]" <<<"$got")" -gt 0 ]'

# ---- a rule deleted: the rules after it keep theirs, one index lower ----
code=$(req DELETE /maps/40/rules/0)
check "DELETE /maps/40/rules/0: 200; the former rules 1-6 keep their counts as rules 0-5" \
	cond '[ "$code" = 200 ] && [ "$(counts 40)" = "$(jq -c ".[1:]" <<<"$got")" ]'
check "map 41 (unchanged by the changes of map 40) keeps its counts" cond '[ "$(counts 41)" = "$(want 41 "$TMP/ph1.pcap" "$TMP/ph2.pcap" "$TMP/ph3.pcap")" ]'

# ---- a page of a 65,536-rule map (timing, printed): the appliance's whole rule budget ----
"$PY" "$GEN" rules none 65536 "$TMP/r65536.json"
jq '{id: 42, name: "big", sources: [{port: "u", direction: "rx"}], destination: {port: "t"}, rules: .}' "$TMP/r65536.json" >"$TMP/m42.json"
code=$(req DELETE /maps/41)$(req DELETE /maps/40)$(req POST /maps "$TMP/m42.json")
[ "$code" = 200200201 ] || echo "# DELETE, DELETE, POST: $code $(jq -c . "$TMP/out")"
t=()
for i in 1 2 3 4; do t+=("$(curl -fsS -o "$TMP/page.json" -w '%{time_total}' "$API/maps/42/rules?offset=30000&limit=50")"); done
echo "# a page of 50 of 65,536 rules: GET in ${t[*]} s (the first parses the primary's file, the others use it)"
check "POST of a 65,536-rule map ($code); a page of 50 rules at offset 30000: total 65536, indexes 30000..30049, counters 0" \
	cond '[ "$code" = 200200201 ] && [ "$(jq -c "[.total, .matched, .rules[0].index, .rules[49].index, ([.rules[].packets] | add)]" "$TMP/page.json")" = "[65536,65536,30000,30049,0]" ]'
inst_cleanup
exit 0
