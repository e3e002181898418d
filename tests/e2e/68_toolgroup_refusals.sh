#!/usr/bin/env bash
# Tool groups, issue 13 test 6 (bad input) and the API around it:
#  1. config (spanbox-primary --check): a group with no members, a member that is also a forwarding
#     port, a member named twice, an unknown port, a session pointing at an unknown group (and port
#     and group together): each exits 2 naming the field.
#  2. REST on a running instance: the same five as PUT /api/v1/tool_groups/{name} or POST
#     /api/v1/mirrors, and DELETE of a group a session uses: each 422 naming the field, and nothing
#     changed (GET /api/v1/tool_groups, the stored row and the running document are as before).
#     Then what works: PUT a new group (201), replace it (200), GET it, /status tool_groups[] with
#     the keys the web page uses and mirrors[].destination_group, /metrics families, DELETE (200).
# Own instance: file prefix tg68-<pid>, lcores 13-15, API port 18311, database under $TMP; pcap and
# net_null ports only (no tap, no namespace).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
inst_test tg68 18311 # PRIMARY, PREFIX, PORT, API, TOKEN, AUTH, the EXIT trap

# cfg FILE GROUPS_JSON MIRRORS_JSON
cfg() {
	cat >"$1" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 13, "mgmt_lcore": 15},
  "ports": [ {"name": "p0", "devargs": "net_pcap0,rx_pcap=$TMP/in.pcap,pps=100"},
             {"name": "p1", "devargs": "net_null1,no-rx=1"},
             {"name": "t0", "devargs": "net_null2,no-rx=1"}, {"name": "t1", "devargs": "net_null3,no-rx=1"},
             {"name": "t2", "devargs": "net_null4,no-rx=1"}, {"name": "t3", "devargs": "net_null5,no-rx=1"} ],
  "workers": {"count": 1, "lcores": [14]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "tool_groups": [ $2 ],
  "mirrors": [ $3 ],
  "mgmt": {"port": $PORT, "database": "$TMP/tg.db", "token": "$TOKEN"}
}
JSON
}
GOOD='{"name": "ids", "members": ["t0", "t1", "t2", "t3"], "hash": "5tuple", "failover": {"hold_down_ms": 500}}'
SESSION='{"id": 5, "sources": [{"port": "p0", "direction": "rx"}], "destination": {"group": "ids"}}'

# refused NAME GROUPS MIRRORS FIELD
refused() {
	local out rc
	cfg "$TMP/bad.json" "$2" "$3"
	out=$("$PRIMARY" -c "$TMP/bad.json" --check 2>&1)
	rc=$?
	echo "# $1: rc $rc: $(grep -F ': ' <<<"$out" | tail -1)"
	if [ $rc -eq 2 ] && grep -qF -- "$4: " <<<"$out"; then ok "config $1: exit 2 naming $4"; else not_ok "config $1: exit 2 naming $4 (rc $rc)"; fi
}

python3 "$ROOT/tests/lib/flows_gen.py" "$TMP/in.pcap" 50 --frames 1
cfg "$TMP/good.json" "$GOOD" "$SESSION"
out=$("$PRIMARY" -c "$TMP/good.json" --check 2>&1)
check "config: a group of 4 and a session to it pass --check (rc $?)" [ $? -eq 0 ] || echo "$out" | sed 's/^/# /'

refused "no members" '{"name": "ids", "members": []}' "" "tool_groups[0].members"
refused "a member that forwards" '{"name": "ids", "members": ["t0", "p1"]}' "" "tool_groups[0].members[1]"
refused "a member named twice" '{"name": "ids", "members": ["t0", "t1", "t0"]}' "" "tool_groups[0].members[2]"
refused "an unknown port" '{"name": "ids", "members": ["t0", "t9"]}' "" "tool_groups[0].members[1]"
refused "a session to an unknown group" "$GOOD" \
	'{"id": 5, "sources": [{"port": "p0"}], "destination": {"group": "nope"}}' "mirrors[0].destination.group"
refused "port and group together" "$GOOD" \
	'{"id": 5, "sources": [{"port": "p0"}], "destination": {"group": "ids", "port": "t0"}}' "mirrors[0].destination.group"
refused "a source that is a member" "$GOOD" \
	'{"id": 5, "sources": [{"port": "t1"}], "destination": {"group": "ids"}}' "mirrors[0].destination.group"
refused "two groups of one name" "$GOOD, $GOOD" "" "tool_groups[1].name"
refused "a bad hash" '{"name": "ids", "members": ["t0"], "hash": "7tuple"}' "" "tool_groups[0].hash"

# --- 2. the API ---
inst_start_primary tg "$TMP/good.json"
check "primary ready" [ -f "$TMP/tg.ready" ] || { tail -20 "$TMP/tg-primary.log" | sed 's/^/# /'; exit 0; }
inst_start_mgmt tg "$TMP/good.json" "$API"
check "mgmt up" [ $? -eq 0 ] || exit 0

get() { curl -fsS --max-time 5 "$API$1"; }
# req METHOD PATH [BODY]: the status code; the body in $TMP/r.json
req() { curl -sS --max-time 10 -o "$TMP/r.json" -w '%{http_code}' -H "$AUTH" -X "$1" -H 'Content-Type: application/json' \
	${3:+--data-binary "$3"} "$API$2"; }
state() { echo "$(get /config | jq -cS '{tool_groups, mirrors}')|$(sqlite3 "$TMP/tg.db" 'SELECT count(*) FROM config_store' 2>/dev/null)"; }
before=$(state)
# api_refused NAME METHOD PATH BODY FIELD
api_refused() {
	local code field
	code=$(req "$2" "$3" "$4")
	field=$(jq -r '.error.field // .field // empty' "$TMP/r.json" 2>/dev/null)
	echo "# $1: $code $(head -c 300 "$TMP/r.json")"
	check "API $1: 422 naming $5 (got $code, field '$field')" [ "$code" = 422 -a "$field" = "$5" ]
	check "API $1: nothing changed (running document, stored rows)" [ "$(state)" = "$before" ]
}
api_refused "no members" PUT /tool_groups/g2 '{"members": []}' members
api_refused "a member that forwards" PUT /tool_groups/g2 '{"members": ["t0", "p1"]}' "members[1]"
api_refused "a member named twice" PUT /tool_groups/g2 '{"members": ["t0", "t0"]}' "members[1]"
api_refused "an unknown port" PUT /tool_groups/g2 '{"members": ["t9"]}' "members[0]"
api_refused "a session to an unknown group" POST /mirrors \
	'{"id": 6, "sources": [{"port": "p0"}], "destination": {"group": "nope"}}' destination.group
api_refused "deleting a group a session uses" DELETE /tool_groups/ids "" "mirrors[0].destination.group"
api_refused "deleting every group while one is used" DELETE /tool_groups "" "mirrors[0].destination.group"
api_refused "PUT /tool_groups without the used group" PUT /tool_groups '{"tool_groups": []}' "mirrors[0].destination.group"
code=$(req DELETE /tool_groups/nope)
check "DELETE an unknown group: 404 ($code)" [ "$code" = 404 ]

# what works
code=$(req PUT /tool_groups/g2 '{"members": ["t0", "t1"], "hash": "2tuple", "member_rate_limit": {"pps": 1000}}')
check "PUT a new group g2: 201 ($code)" [ "$code" = 201 ] || cat "$TMP/r.json"
code=$(req PUT /tool_groups/g2 '{"members": ["t0", "t1", "t2"]}')
check "PUT g2 again (3 members): 200 ($code)" [ "$code" = 200 ]
g2=$(get /tool_groups/g2)
check "GET /tool_groups/g2: 3 members, 5tuple, no rate limit" \
	[ "$(jq -c '[(.members | length), .hash, .member_rate_limit.pps]' <<<"$g2")" = '[3,"5tuple",0]' ]
check "g2's buckets: 1366 + 1365 + 1365 = 4096" [ "$(jq -c '[.members[].buckets]' <<<"$g2")" = '[1366,1365,1365]' ]
check "GET /tool_groups lists ids and g2 with their config keys" \
	[ "$(get /tool_groups | jq -c '[.tool_groups[] | [.name, .failover.hold_down_ms]]')" = '[["ids",500],["g2",2000]]' ]
check "the stored row holds g2" [ "$(sqlite3 "$TMP/tg.db" 'SELECT json FROM config_store ORDER BY id DESC LIMIT 1' | jq -r '[.tool_groups[].name] | join(",")')" = "ids,g2" ]
st=$(get /status)
keys=$(jq -c '.tool_groups[0] | [has("name","hash","buckets","members_up","packets","bytes","no_member","drop_rate_limit","members")] | all' <<<"$st")
mkeys=$(jq -c '.tool_groups[0].members[0] | [has("port","state","reason","buckets","share","packets","bytes","drop_rate_limit","drop_txfull")] | all' <<<"$st")
check "/status tool_groups[]: the group keys ($keys) and member keys ($mkeys)" [ "$keys/$mkeys" = true/true ]
check "/status tool_groups[ids]: 4 members up, each state up, share 0.25" \
	[ "$(jq -c '.tool_groups[0] | [.members_up, ([.members[].state] | unique), ([.members[].share] | unique)]' <<<"$st")" = '[4,["up"],[0.25]]' ]
check "/status mirrors[0].destination_group = ids" [ "$(jq -r '.mirrors[0].destination_group' <<<"$st")" = ids ]
wait_for 100 cond '[ "$(get /status | jq ".tool_groups[0].packets")" -ge 100 ]'
st=$(get /status)
check "ids counted the 100 mirrored frames (50 flows, both ways) over its members ($(jq -c '[.tool_groups[0].members[].packets]' <<<"$st"))" \
	[ "$(jq '.tool_groups[0].packets' <<<"$st")" = 100 -a "$(jq '[.tool_groups[0].members[].packets] | add' <<<"$st")" = 100 ]
m=$(curl -fsS --max-time 5 "http://127.0.0.1:$PORT/metrics")
check "/metrics: member packets, buckets, up, dropped by reason, no_member" bash -c '
	grep -q "^spanbox_tool_group_member_packets_total{group=\"ids\",port=\"t0\"}" <<<"$1" &&
	grep -q "^spanbox_tool_group_member_buckets{group=\"g2\",port=\"t2\"} 1365" <<<"$1" &&
	grep -q "^spanbox_tool_group_member_up{group=\"ids\",port=\"t3\"} 1" <<<"$1" &&
	grep -q "^spanbox_tool_group_member_dropped_packets_total{group=\"ids\",port=\"t1\",reason=\"rate_limit\"} 0" <<<"$1" &&
	grep -q "^spanbox_tool_group_no_member_packets_total{group=\"ids\"} 0" <<<"$1"' _ "$m"
if command -v promtool >/dev/null; then
	echo "$m" >"$TMP/metrics.txt"
	promtool check metrics <"$TMP/metrics.txt" >"$TMP/promtool.out" 2>&1
	rc=$?
	sed 's/^/# promtool: /' "$TMP/promtool.out"
	check "/metrics with tool groups passes promtool check metrics (rc $rc, no output)" [ $rc -eq 0 -a ! -s "$TMP/promtool.out" ]
else
	ok "/metrics with tool groups passes promtool check metrics # SKIP no promtool"
fi
code=$(req DELETE /tool_groups/g2)
check "DELETE /tool_groups/g2 (unused): 200 ($code)" [ "$code" = 200 ]
check "GET /tool_groups/g2 then: 404" [ "$(curl -s -o /dev/null -w '%{http_code}' "$API/tool_groups/g2")" = 404 ]
check "events: the audit of the changes" bash -c "curl -fsS '$API/events?limit=200' | grep -q 'tool_groups/g2'"
