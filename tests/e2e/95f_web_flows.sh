#!/usr/bin/env bash
# Top talkers (issue #28 "by bytes (and by packets), in the API and on the page") with the running
# product: flows metered on a net_tap port (idle timeout 2 s; its tap sbxfp0 is made here, with
# IPv6 off before DPDK brings it up, so that no frame of the kernel's is metered: the router
# solicitations and MLD reports of a fresh tap would be flows of their own), IPFIX to a UDP port nobody listens on
# (the ranking does not depend on a collector). tests/lib/web_flows_send.py sends four UDP/TCP flows
# of known sizes whose order by bytes differs from their order by packets; once they expired:
#  - GET /api/v1/flows/top (default by bytes) and ?by=packets list them in those orders with their
#    packets and bytes; ?by=nonsense is a 400 JSON error naming "by";
#  - tests/web/flows.test.mjs in headless Chromium: the "Top talkers" section says nothing was
#    metered before the traffic (and that metering is off when /flows says so), then lists the flows
#    in both orders (the by-bytes / by-packets switch), and shows a later flow at the top without a
#    reload (the page's refresh loop). Screenshot out/tests/web/flows.png.
# Private resources: file prefix sbxfp, lcores 101 (primary) 102 (mgmt) 103 (worker), API port
# 19020, collector UDP 19021 (nobody), tap sbxfp0.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/web.sh"

PORT=19020 API=http://127.0.0.1:19020/api/v1 IF=sbxfp0
CFG="$TMP/fp.json"
cleanup() { inst_cleanup; ip link del "$IF" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT
PY=
for p in python3 /usr/bin/python3; do "$p" -c 'import scapy.all' 2>/dev/null && { PY=$p; break; }; done
[ -n "$PY" ] || { ok "top talkers need scapy (python3-scapy, ./spanbox install-deps) # SKIP"; exit 0; }
for t in jq curl; do command -v $t >/dev/null || { not_ok "$t not installed (./spanbox install-deps)"; exit 1; }; done
web_deps || exit 0
ip link del "$IF" 2>/dev/null
ip tuntap add dev "$IF" mode tap multi_queue || { not_ok "tap $IF"; exit 1; }
sysctl -qw "net.ipv6.conf.$IF.disable_ipv6=1"

cat >"$CFG" <<JSON
{
  "eal": {"file_prefix": "sbxfp", "socket_mem_mb": 256, "primary_lcore": 101, "mgmt_lcore": 102},
  "ports": [
    {"name": "p0", "devargs": "net_tap0,iface=$IF"},
    {"name": "p1", "devargs": "net_null1,no-rx=1"}
  ],
  "workers": {"count": 1, "lcores": [103], "standby": 0},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "flows": {"ports": [{"port": "p0", "direction": "rx"}], "idle_timeout_s": 2,
            "collectors": [{"address": "127.0.0.1", "port": 19021, "transport": "udp"}]},
  "mgmt": {"port": $PORT, "database": "$TMP/fp.db", "token": "fp95-token-0123456789abcdef"}
}
JSON
inst_start_both fp "$CFG" "$API" || exit 1
# the browser test sends each batch through this script (its JSON: the flows sent)
printf '#!/bin/sh\n%q %q %q "$1" | tee %q/sent"$1".json\n' "$PY" "$ROOT/tests/lib/web_flows_send.py" "$IF" "$TMP" >"$TMP/send.sh"
chmod +x "$TMP/send.sh"
top() { curl -sS --max-time 5 "$API/flows/top${1:-}"; }
# "src:sport>dst:dport proto vlan packets bytes" of the flows of 10.28.0.0/16 in the answer, in order
ours() { jq -r '.flows[] | select(.src | startswith("10.28.")) | "\(.src):\(.src_port)>\(.dst):\(.dst_port) \(.protocol) \(.vlan) \(.packets) \(.bytes)"' | tr '\n' ' '; }

SBX_MGMT_URL="http://127.0.0.1:$PORT" SBX_SEND="$TMP/send.sh" SBX_OUT="$ROOT/out/tests/web" \
	timeout 120 node "$ROOT/tests/web/flows.test.mjs"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || not_ok "flows.test.mjs ended with status $rc (timeout or crash)"

# the API, once the page test sent both batches: the five flows in both orders
sent=$(jq -s add "$TMP/sent1.json" "$TMP/sent2.json")
check "both batches were sent (5 flows)" [ "$(jq length <<<"$sent")" = 5 ]
want_b=$(jq -r 'sort_by(-.bytes)[] | "\(.src):\(.sport)>\(.dst):\(.dport) \(.proto) \(.vlan) \(.packets) \(.bytes)"' <<<"$sent" | tr '\n' ' ')
want_p=$(jq -r 'sort_by(-.packets)[] | "\(.src):\(.sport)>\(.dst):\(.dport) \(.proto) \(.vlan) \(.packets) \(.bytes)"' <<<"$sent" | tr '\n' ' ')
wait_for 100 cond "[ \"\$(top | ours)\" = '$want_b' ]"
check "GET /flows/top: the flows by bytes, largest first ($(top | ours))" [ "$(top | ours)" = "$want_b" ]
check "GET /flows/top?by=bytes: the same, and says by bytes" \
	cond "[ \"\$(top '?by=bytes' | ours)\" = '$want_b' ] && top '?by=bytes' | jq -e '.by == \"bytes\"' >/dev/null"
check "GET /flows/top?by=packets: the flows by packets, most first ($(top '?by=packets' | ours))" \
	cond "[ \"\$(top '?by=packets' | ours)\" = '$want_p' ] && top '?by=packets' | jq -e '.by == \"packets\" and .window_s == 60' >/dev/null"
check "the two orders differ (the test can tell them apart)" [ "$want_b" != "$want_p" ]
code=$(curl -sS --max-time 5 -o "$TMP/bad.json" -w '%{http_code}' "$API/flows/top?by=nonsense")
check "GET /flows/top?by=nonsense: 400, a JSON error naming by ($(cat "$TMP/bad.json"))" \
	cond "[ $code = 400 ] && jq -e '.error.field == \"by\" and (.error.message | test(\"packets\"))' '$TMP/bad.json' >/dev/null"
exit 0
