#!/usr/bin/env bash
# member_rate_limit with two workers (issue #24 item 5): the limit is shared out by demand
# (docs/CONFIG.md "Rate limits with several workers"), so the member gets what was configured
# however the flows spread over the workers:
#  1. one UDP flow (one 5-tuple, one RX queue of the tap: one worker) at 3000 frames/s to a group
#     whose member has pps 1000: the member gets 1000/s +-5 % over 10 s (an even split over the
#     two workers gave it about 500/s);
#  2. 64 flows (both workers) at 3000 frames/s: 1000/s +-5 % over 10 s again.
# Every copy is sent or counted in drop_rate_limit. Own instance: file prefix tg69b-<pid>, lcores
# 104-107, API port 18313, tap tg69bp0 (gone with the primary).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
PREFIX=tg69b-$$
PORT=18313 API=http://127.0.0.1:18313/api/v1
TT="$ROOT/tests/lib/tg_traffic.py"
CFG=$TMP/tg69b.json
PIDS=()
cleanup() { local p; for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; inst_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT
[ "$(id -u)" = 0 ] || { ok "rate limits on live traffic need root (tap, AF_PACKET) # SKIP not root"; exit 0; }

cat >"$CFG" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 104, "mgmt_lcore": 105},
  "ports": [ {"name": "p0", "devargs": "net_tap0,iface=tg69bp0"},
             {"name": "p1", "devargs": "net_null1,no-rx=1"},
             {"name": "r0", "devargs": "net_null2,no-rx=1"} ],
  "workers": {"count": 2, "lcores": [106, 107]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "tool_groups": [ {"name": "rl", "members": ["r0"], "member_rate_limit": {"pps": 1000}} ],
  "mirrors": [
    {"id": 8, "name": "torl", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"group": "rl"}} ],
  "mgmt": {"port": $PORT, "database": "$TMP/tg69b.db"}
}
JSON
inst_start_primary tg69b "$CFG"
check "primary ready" [ -f "$TMP/tg69b.ready" ] || { tail -20 "$TMP/tg69b-primary.log" | sed 's/^/# /'; exit 0; }
inst_start_mgmt tg69b "$CFG" "$API"
check "mgmt up" [ $? -eq 0 ] || exit 0
sysctl -qw net.ipv6.conf.tg69bp0.disable_ipv6=1 2>/dev/null # no neighbour discovery of the host on it
ip link set tg69bp0 up

get() { curl -fsS --max-time 5 "$API$1"; }
now() { date +%s.%N; }

# measure MODE FLOWS WHAT: MODE (send1 | send) FLOWS at 3000 frames/s for 13 s; the member's rate
# from 2 s to 12 s; TAP lines
measure() {
	local mode=$1 flows=$2 what=$3 s1 s2 t1 t2 dt rl in w0 w1 st
	python3 "$TT" "$mode" tg69bp0 "$flows" 3000 13 &
	SENDER=$!
	PIDS+=($SENDER)
	sleep 2
	s1=$(get /status) t1=$(now)
	sleep 10
	s2=$(get /status) t2=$(now)
	wait $SENDER
	dt=$(echo "$t2 - $t1" | bc -l)
	rl=$(jq -n --argjson a "$s1" --argjson b "$s2" "(\$b.tool_groups[0].members[0].packets - \$a.tool_groups[0].members[0].packets) / $dt")
	in=$(jq -n --argjson a "$s1" --argjson b "$s2" "([\$b.ports[] | select(.name == \"p0\") | .workers.rx_packets][0] - [\$a.ports[] | select(.name == \"p0\") | .workers.rx_packets][0]) / $dt")
	# frames each worker received from p0 in the window
	w0=$(jq -n --argjson a "$s1" --argjson b "$s2" '$b.workers[0].ports.p0.rx_packets - $a.workers[0].ports.p0.rx_packets')
	w1=$(jq -n --argjson a "$s1" --argjson b "$s2" '$b.workers[1].ports.p0.rx_packets - $a.workers[1].ports.p0.rx_packets')
	echo "# $what: p0 received $in frames/s (worker 0: $w0, worker 1: $w1 frames), r0 got $rl/s over $dt s"
	check "$what: the input ran at 2000 frames/s or more ($in)" awk -v r="$in" 'BEGIN {exit !(r >= 2000)}'
	if [ "$mode" = send1 ]; then
		check "$what: one worker received the flow (worker 0: $w0, worker 1: $w1)" \
			awk -v a="$w0" -v b="$w1" 'BEGIN {exit !((a == 0) != (b == 0))}'
	else
		check "$what: both workers received flows (worker 0: $w0, worker 1: $w1)" \
			awk -v a="$w0" -v b="$w1" 'BEGIN {exit !(a > 2000 && b > 2000)}'
	fi
	check "$what: r0 got 1000/s +-5 % over 10 s ($rl)" awk -v r="$rl" 'BEGIN {exit !(r >= 950 && r <= 1050)}'
	st=$(get /status)
	check "$what: every copy for r0 sent or counted in drop_rate_limit" \
		[ "$(jq '.tool_groups[0] | .packets + .drop_rate_limit' <<<"$st")" = "$(jq '[.ports[] | select(.name == "p0") | .workers.rx_packets][0]' <<<"$st")" ]
}
measure send1 1 "one flow, one worker"
sleep 1
measure send 64 "64 flows, both workers"
