#!/usr/bin/env bash
# The web status page (issue 6) in headless Chromium (Debian's /usr/bin/chromium, driven by
# playwright-core from tests/web/node_modules): against an instance of its own with ping traffic
# between two namespaces, tests/web/page.test.mjs loads the page, reads the port counters twice,
# draws the topology (ports, cross-connect, session 7, p0's vxlan rule, live rates, port "mirror"
# set link-down through the API drawn down), shows the live tool group "tools" (members t0 and t1,
# taps of the demo fed by session 8 with p0's pings; t1 set link-down: shown down, its buckets on
# t0, then back), restarts worker 0 and adds / deletes a mirror session
# through the page, provokes API errors,
# writes screenshots to out/tests/web/, stops mgmt (the page must say "appliance unreachable")
# and starts it again, then stops the primary ("appliance down") and starts it again: the page
# must recover by itself each time.
#
# Private resources: file prefix sbxd, lcores 85-89, API port 18240, namespaces sbxD-a/sbxD-b,
# taps sbxD-p0/sbxD-p1/sbxD-m/sbxD-t0/sbxD-t1, database under $TMP.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/web.sh"

PFX=sbxd PORT=18240 NSA=sbxD-a NSB=sbxD-b
API=http://127.0.0.1:$PORT/api/v1
CFG="$TMP/web.json"
TOKEN="web-test-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"

cleanup() {
	demo_stop
	rm -rf "$TMP"
}
trap cleanup EXIT

up() { curl -fsS --max-time 2 "$API/health" 2>/dev/null | grep -q '"appliance":"up"'; }

# the browser and its driver
web_deps || exit 1

# 1. the instance: primary, demo network, mgmt
jq --arg db "$TMP/web.db" --arg tok "$TOKEN" --arg pfx "$PFX" --argjson port "$PORT" \
	'.eal.file_prefix = $pfx | .eal.socket_mem_mb = 256 | .eal.primary_lcore = 85 | .eal.mgmt_lcore = 86
	| .workers.lcores = [87, 88] | .mgmt.port = $port | .mgmt.database = $db | .mgmt.token = $tok
	| .ports[0].devargs = "net_tap0,iface=sbxD-p0" | .ports[0].netns = "sbxD-a"
	| .ports[0].ingress = {"decap": [{"type": "vxlan"}], "non_tunnel": "pass"}
	| .ports[1].devargs = "net_tap1,iface=sbxD-p1" | .ports[1].netns = "sbxD-b"
	| .ports[2].devargs = "net_tap2,iface=sbxD-m"
	| .ports += [{"name": "t0", "devargs": "net_tap3,iface=sbxD-t0"}, {"name": "t1", "devargs": "net_tap4,iface=sbxD-t1"}]
	| .tool_groups = [{"name": "tools", "members": ["t0", "t1"], "failover": {"hold_down_ms": 500}}]
	| .mirrors = [{"id": 7, "name": "demo", "sources": [{"port": "p1", "direction": "rx"}],
	               "destination": {"port": "mirror"}, "encap": {"type": "rspan", "vlan": 865}},
	              {"id": 8, "name": "to-tools", "sources": [{"port": "p0", "direction": "rx"}],
	               "destination": {"group": "tools"}}]' \
	"$ROOT/config/default.json" >"$CFG"

# Every process is started and stopped by tests/lib/instance.sh's demo_* functions and stop_pidfile,
# which the browser test also runs (through small scripts) to stop and start mgmt and the primary;
# pids in $TMP/{primary,mgmt,ping}.pid.
demo_start_primary
check "primary of prefix $PFX ready, taps in $NSA and $NSB" test -f "$TMP/ready" || exit 1
demo_start_mgmt
check "mgmt answers on port $PORT, appliance up" up || { tail -n 20 "$TMP/mgmt.log"; exit 1; }
check "ping from $NSA crosses the appliance to $NSB" \
	ip netns exec "$NSA" ping -c 2 -W 2 -q 198.18.0.2

# the browser test: it stops and starts mgmt and the primary through these scripts
{ declare -p TMP CFG BUILD API NSA NSB; printf 'source %q\n' "$ROOT/lib/instance.sh"
	declare -f demo_start_primary demo_start_mgmt stop_pidfile; } >"$TMP/fns.sh"
for action in "stop_pidfile mgmt" "demo_start_mgmt" "stop_pidfile primary" "demo_start_primary"; do
	printf 'source %q\n%s\n' "$TMP/fns.sh" "$action" >"$TMP/${action// /-}.sh"
done
SBX_MGMT_URL="http://127.0.0.1:$PORT" SBX_TOKEN="$TOKEN" SBX_OUT="$ROOT/out/tests/web" \
	SBX_MGMT_STOP="$TMP/stop_pidfile-mgmt.sh" SBX_MGMT_START="$TMP/demo_start_mgmt.sh" \
	SBX_PRIMARY_STOP="$TMP/stop_pidfile-primary.sh" SBX_PRIMARY_START="$TMP/demo_start_primary.sh" \
	timeout 300 node "$ROOT/tests/web/page.test.mjs"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || not_ok "page.test.mjs ended with status $rc (timeout or crash)"
echo "# mgmt log (last lines):"; tail -n 5 "$TMP/mgmt.log" | sed 's/^/#   /'
exit 0
