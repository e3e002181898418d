#!/usr/bin/env bash
# Maps on the web page (issue #27 "Operating it": the maps with sources, destination, rule count
# and hits; a map's rules paged with search and hits, add / delete a rule, upload a rule table;
# maps in the topology) with the running product: an appliance of net_null and pcap ports (no
# traffic: the page reads, pages and changes the rule tables through the real REST API on loopback,
# stored in a real SQLite file), three maps of the config: 40 to a tool group, 41 with 1,000 rules,
# 42 a collector. tests/web/maps.test.mjs in headless Chromium checks the section, paging over the
# 1,000 rules, the search (where the route searches), adding and deleting a rule, uploading a JSON
# file of 300 rules, a bad upload (the API's error text shown, nothing changed), and a node per map
# in the topology, every change checked through GET. Screenshot out/tests/web/maps.png.
# The page is this tree's web/ (mgmt.web_root), also with another build (SBX_BUILD: e.g. one whose
# rules route counts, sorts and searches, where the checks marked # SKIP here run).
# Private resources: file prefix sbxwm, lcores 73 (primary) 74 (mgmt) 79 (worker), API port 19160.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/web.sh"

PORT=19160 API=http://127.0.0.1:19160/api/v1 TOKEN=sbxwm-token-0123456789abcdef
CFG="$TMP/wm.json"
trap 'inst_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
for t in jq curl; do command -v $t >/dev/null || { not_ok "$t not installed (./spanbox install-deps)"; exit 1; }; done
web_deps || exit 0

# map 41's 1,000 rules: TCP to destination port 1..1000, every tenth a drop (no rule covers another)
jq -n '[range(0; 1000) | {action: (if . % 10 == 9 then "drop" else "pass" end), ip_proto: 6, dst_port: ((. + 1) | tostring)}]' \
	>"$TMP/r1000.json"
jq --arg tmp "$TMP" --arg web "$ROOT/web" --argjson port "$PORT" --arg token "$TOKEN" --slurpfile r "$TMP/r1000.json" -n '{
  eal: {file_prefix: "sbxwm", socket_mem_mb: 256, primary_lcore: 73, mgmt_lcore: 74},
  ports: [
    {name: "p0", devargs: "net_null0,no-rx=1"}, {name: "p1", devargs: "net_null1,no-rx=1"},
    {name: "t", devargs: "net_null2,no-rx=1"}, {name: "g0", devargs: "net_null3,no-rx=1"},
    {name: "g1", devargs: "net_null4,no-rx=1"}, {name: "rec", devargs: ("net_pcap0,tx_pcap=" + $tmp + "/rec.pcap")}],
  workers: {count: 1, lcores: [79], standby: 0},
  forwarding: {xconnects: [["p0", "p1"]]},
  tool_groups: [{name: "ids", members: ["g0", "g1"]}],
  maps: [
    {id: 40, name: "ids-east", sources: [{port: "p0"}, {port: "p1", direction: "rx"}], destination: {group: "ids"},
     rules: [{action: "drop", ip_proto: 6, dst_port: "873"}, {action: "pass", vlan: "100-199"},
             {action: "pass", src: "10.20.0.0/16", dst_port: "1-1023"}]},
    {id: 41, name: "big", sources: [{port: "p0", direction: "rx"}], destination: {port: "t"}, rules: $r[0]},
    {id: 42, name: "recorder", sources: [{port: "p0"}], destination: {port: "rec"}, collector: true}],
  mgmt: {port: $port, database: ($tmp + "/wm.db"), token: $token, web_root: $web}
}' >"$CFG" || { not_ok "config written"; exit 1; }
inst_start_both wm "$CFG" "$API" || exit 0
check "GET /maps: the 3 maps of the config, map 41 with 1,000 rules" \
	cond "curl -fsS '$API/maps' | jq -e '[.maps[].id] == [40, 41, 42] and (.maps[1].rule_count == 1000)' >/dev/null"

SBX_MGMT_URL="http://127.0.0.1:$PORT" SBX_TOKEN="$TOKEN" SBX_OUT="$ROOT/out/tests/web" \
	timeout 240 node "$ROOT/tests/web/maps.test.mjs"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || not_ok "maps.test.mjs ended with status $rc (timeout or crash)"

# the store after the page's changes: map 41's table of 300 rules is the one SQLite holds
check "after the page's changes: GET /maps/41 rule_count 300, the other maps unchanged" \
	cond "curl -fsS '$API/maps' | jq -e '[.maps[].rule_count] == [3, 300, 0]' >/dev/null"
exit 0
