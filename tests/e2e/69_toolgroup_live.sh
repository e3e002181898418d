#!/usr/bin/env bash
# Tool groups on a live appliance, issue 13 tests 2, 3 and 4 (tests/lib/tg_traffic.py sends and
# receives with AF_PACKET; frames carry flow, sequence number and send time):
#  2. failover by link: 256 flows at 2000 frames/s from tap tg69p0, mirrored to group ids (taps
#     tg69t0..3); PUT /api/v1/ports/t1/link down: frames sent from 100 ms after the PUT on reach the
#     other members, none lost, no flow of the other members changes member (counted); link up: no
#     frame reaches t1 during the hold-down (1 s), then exactly the old mapping is back; /status
#     shows t1 down ("link down") and its buckets spread 1365/1365/1366; the events are written.
#  3. a stalled tool: group stall = pcap port s0 (whose bridge the primary stops draining:
#     SBX_TEST_BRIDGE_PAUSE_FILE) + net_null s1, s2: s0 goes down "tx refused" (its buckets on s1
#     and s2), is tried again after its hold-down (2 s) and, the pause over, stays up.
#  4. rate limit: group rl (net_null r0) with member_rate_limit.pps 1000, fed 5000 frames/s: r0
#     gets 1000/s +-5 %, the rest is counted in drop_rate_limit; forwarding p0 -> p1 unchanged.
# Own instance: file prefix tg69-<pid>, lcores 16-18, API port 18312, database under $TMP; taps
# tg69p0, tg69t0..3 in the host namespace (created by the tap PMD, gone with the primary).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
PREFIX=tg69-$$
PORT=18312 API=http://127.0.0.1:18312/api/v1
TOKEN=tg69-token-0123456789abcdef
AUTH="Authorization: Bearer $TOKEN"
TT="$ROOT/tests/lib/tg_traffic.py"
CFG=$TMP/tg69.json
PAUSE=$TMP/bridge.pause
PIDS=()
cleanup() { local p; for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; inst_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT
[ "$(id -u)" = 0 ] || { ok "live tool groups need root (taps, AF_PACKET) # SKIP not root"; exit 0; }

cat >"$CFG" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 16, "mgmt_lcore": 18},
  "ports": [ {"name": "p0", "devargs": "net_tap0,iface=tg69p0"},
             {"name": "p1", "devargs": "net_null1,no-rx=1"},
             {"name": "t0", "devargs": "net_tap2,iface=tg69t0"}, {"name": "t1", "devargs": "net_tap3,iface=tg69t1"},
             {"name": "t2", "devargs": "net_tap4,iface=tg69t2"}, {"name": "t3", "devargs": "net_tap5,iface=tg69t3"},
             {"name": "s0", "devargs": "net_pcap6,tx_pcap=$TMP/s0.pcap"},
             {"name": "s1", "devargs": "net_null7,no-rx=1"}, {"name": "s2", "devargs": "net_null8,no-rx=1"},
             {"name": "r0", "devargs": "net_null9,no-rx=1"} ],
  "workers": {"count": 1, "lcores": [17]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "tool_groups": [
    {"name": "ids", "members": ["t0", "t1", "t2", "t3"], "failover": {"hold_down_ms": 1000}},
    {"name": "stall", "members": ["s0", "s1", "s2"],
     "failover": {"hold_down_ms": 2000, "tx_refused_percent": 50, "tx_refused_window_ms": 200}},
    {"name": "rl", "members": ["r0"], "member_rate_limit": {"pps": 1000}} ],
  "mirrors": [
    {"id": 5, "name": "toids", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"group": "ids"}},
    {"id": 6, "name": "tostall", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"group": "stall"}},
    {"id": 7, "name": "torl", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"group": "rl"}} ],
  "mgmt": {"port": $PORT, "database": "$TMP/tg69.db", "token": "$TOKEN"}
}
JSON
inst_start_primary tg69 "$CFG" SBX_TEST_BRIDGE_PAUSE_FILE="$PAUSE"
check "primary ready" [ -f "$TMP/tg69.ready" ] || { tail -20 "$TMP/tg69-primary.log" | sed 's/^/# /'; exit 0; }
inst_start_mgmt tg69 "$CFG" "$API"
check "mgmt up" [ $? -eq 0 ] || exit 0
for i in tg69p0 tg69t0 tg69t1 tg69t2 tg69t3; do
	sysctl -qw net.ipv6.conf.$i.disable_ipv6=1 2>/dev/null # no neighbour discovery of the host on them
	ip link set $i up
done

get() { curl -fsS --max-time 5 "$API$1"; }
link() { curl -sS --max-time 5 -o "$TMP/link.json" -w '%{http_code}' -H "$AUTH" -X PUT -H 'Content-Type: application/json' \
	--data-binary "{\"up\": $2}" "$API/ports/$1/link"; }
# member GROUP PORT FIELD: /status tool_groups[GROUP].members[PORT].FIELD
member() { get /status | jq -r ".tool_groups[] | select(.name == \"$1\") | .members[] | select(.port == \"$2\") | .$3"; }
now() { date +%s.%N; }

# --- 2. failover by link ---
python3 "$TT" recv "$TMP/recv.log" 12 tg69t0 tg69t1 tg69t2 tg69t3 &
PIDS+=($!)
sleep 0.5
python3 "$TT" send tg69p0 256 2000 10 "$TMP/sent.log" &
SENDER=$!
PIDS+=($SENDER)
sleep 2.5
T_DOWN=$(now)
code=$(link t1 false)
check "PUT /ports/t1/link down: 200 ($code)" [ "$code" = 200 ]
sleep 0.3
st=$(get /status)
check "t1 down, reason \"link down\", 0 buckets; 3 members up" [ "$(jq -c '.tool_groups[0] | [(.members[1] | .state, .reason, .buckets), .members_up]' <<<"$st")" = '["down","link down",0,3]' ]
check "its buckets spread evenly over t0, t2, t3 ($(jq -c '[.tool_groups[0].members[].buckets]' <<<"$st"))" \
	bash -c "jq -e '[.tool_groups[0].members[] | select(.port != \"t1\") | .buckets] | (add == 4096 and max - min <= 1)' <<<'$st' >/dev/null"
sleep 2.2
T_UP=$(now)
code=$(link t1 true)
check "PUT /ports/t1/link up: 200 ($code)" [ "$code" = 200 ]
sleep 0.3
check "t1 in hold-down after link up ($(member ids t1 state))" [ "$(member ids t1 state)" = holddown ]
sleep 1.2
check "t1 up again after the hold-down, 1024 buckets each" [ "$(get /status | jq -c '[.tool_groups[0].members[] | [.state, .buckets]] | unique')" = '[["up",1024]]' ]
wait $SENDER
sleep 0.5
echo "# $(wc -l <"$TMP/sent.log") frames sent, $(wc -l <"$TMP/recv.log") received on the members"
python3 "$TT" failover "$TMP/sent.log" "$TMP/recv.log" "$T_DOWN" "$T_UP" 1000 1
ev=$(get '/events?limit=200')
check "events: t1 down (link down), hold-down, up; kinds member_down, member_holddown, member_up" bash -c '
	grep -q "\"member_down\"" <<<"$1" && grep -q "\"member_holddown\"" <<<"$1" && grep -q "\"member_up\"" <<<"$1" &&
	grep -q "tool group ids: member t1 down (link down)" <<<"$1" && grep -q "member t1 healthy again" <<<"$1" &&
	grep -q "tool group ids: member t1 up after 1000 ms" <<<"$1"' _ "$ev"
check "no copy without a member in ids ($(get /status | jq '.tool_groups[0].no_member'))" [ "$(get /status | jq '.tool_groups[0].no_member')" = 0 ]

# --- 3. a stalled tool: s0's bridge ring stops draining ---
python3 "$TT" send tg69p0 256 2000 12 &
SENDER=$!
PIDS+=($SENDER)
sleep 1
check "stall: s0 up before the stall" [ "$(member stall s0 state)" = up ]
touch "$PAUSE"
wait_for 80 cond '[ "$(member stall s0 state)" = down ]'
check "stall: s0 down when its TX queue refuses ($(member stall s0 state), reason \"$(member stall s0 reason)\", drop_txfull $(member stall s0 drop_txfull))" \
	[ "$(member stall s0 state)/$(member stall s0 reason)" = "down/tx refused" ]
check "stall: s0's buckets on s1 and s2 ($(get /status | jq -c '[.tool_groups[1].members[].buckets]'))" \
	[ "$(get /status | jq -c '[.tool_groups[1].members[].buckets]')" = '[0,2048,2048]' ]
rm -f "$PAUSE"
wait_for 50 cond '[ "$(member stall s0 state)" = up ]'
check "stall: s0 up again once the bridge drains and its 2 s hold-down passed ($(member stall s0 state))" \
	[ "$(member stall s0 state)" = up ]
sleep 1
check "stall: s0 stays up, refusing nothing more ($(member stall s0 state))" [ "$(member stall s0 state)" = up ]
check "stall: events s0 down (tx refused) and up" bash -c "curl -fsS '$API/events?limit=200' | grep -q 'tool group stall: member s0 down (tx refused)' &&
	curl -fsS '$API/events?limit=200' | grep -q 'tool group stall: member s0 up'"
wait $SENDER

# --- 4. rate limit: 1000 pps on r0 fed 5000 pps ---
python3 "$TT" send tg69p0 256 5000 7 &
SENDER=$!
PIDS+=($SENDER)
sleep 1.5
s1=$(get /status) t1=$(now)
sleep 4
s2=$(get /status) t2=$(now)
wait $SENDER
rate() { jq -n --argjson a "$1" --argjson b "$2" --arg t "$3" "($4) / ($t | tonumber)"; }
dt=$(echo "$t2 - $t1" | bc -l)
rl_rate=$(jq -n --argjson a "$s1" --argjson b "$s2" "(\$b.tool_groups[2].members[0].packets - \$a.tool_groups[2].members[0].packets) / $dt")
in_rate=$(jq -n --argjson a "$s1" --argjson b "$s2" "([\$b.ports[] | select(.name == \"p0\") | .workers.rx_packets][0] - [\$a.ports[] | select(.name == \"p0\") | .workers.rx_packets][0]) / $dt")
echo "# rate limit: p0 received $in_rate frames/s, r0 got $rl_rate/s over $dt s"
check "rate limit: the input ran at about 5000 frames/s ($in_rate)" awk -v r="$in_rate" 'BEGIN {exit !(r >= 4000)}'
check "rate limit: r0 got 1000/s +-5 % ($rl_rate)" awk -v r="$rl_rate" 'BEGIN {exit !(r >= 950 && r <= 1050)}'
st=$(get /status)
check "rate limit: every copy for r0 sent or counted in drop_rate_limit (packets + drop_rate_limit = mirrored input)" \
	[ "$(jq '.tool_groups[2] | .packets + .drop_rate_limit' <<<"$st")" = "$(jq '[.ports[] | select(.name == "p0") | .workers.rx_packets][0]' <<<"$st")" ]
check "rate limit: forwarding unchanged (p1 tx = p0 rx, no drop)" \
	[ "$(jq -c '[([.ports[] | select(.name == "p1") | .workers.tx_packets][0]), ([.ports[] | select(.name == "p0") | .workers.rx_packets][0])] | .[0] == .[1]' <<<"$st")" = true ]
