#!/usr/bin/env bash
# Live changes of what flows meter (issue #28 "live changes through the API"; docs/FLOWS.md "Live
# changes", "Biflows", "Directions", "Selected by sessions"), in the running product with nfdump's
# nfcapd as the collector. One worker meters the frames of a net_tap port p0 (cross-connected to a
# net_null port p1); the test sends known UDP conversations into p0 with scapy and changes the
# section with PUT /api/v1/flows/config between them:
#  1. biflow off: a conversation of 5 frames one way and 3 back is two records (5 and 3 packets),
#     neither with a reverse count;
#  2. biflow switched on at run time: the next conversation (5 + 3) is one record, 5 packets forward
#     and 3 reverse (nfdump %opkt, PEN 29305);
#  3. switched off again: the next one is two records again;
#  4. the direction changed at run time from p0 rx to p1 tx: a one-way flow of 4 frames is one
#     record of egressInterface 1, flowDirection egress (nfdump %out 1, %dir E), and no record of
#     p0's RX;
#  5. flows.sessions [7] (mirror session 7 watches p0): DELETE /mirrors/7 is refused, a 4xx JSON
#     error naming flows.sessions, and the session is still there; with flows.sessions [] it goes.
# Resources: file prefix sbxfg<pid>, lcores 113 (primary) 114 (mgmt) 115 (worker), API 19190,
# collector UDP 19191, tap sbxfg0.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/flows.sh"

PREFIX=sbxfg$$ PORT=19190 API=http://127.0.0.1:19190/api/v1 NF=19191 IF=sbxfg0
TOKEN=sbxfg-token-0123456789abcdef
AUTH="Authorization: Bearer $TOKEN"
CFG="$TMP/fg.json"
trap 'flows_cleanup; ip link del "$IF" 2>/dev/null' EXIT
PY=
for p in python3 /usr/bin/python3; do "$p" -c 'import scapy.all' 2>/dev/null && { PY=$p; break; }; done
[ -n "$PY" ] || { ok "live flow switches need scapy (python3-scapy, ./spanbox install-deps) # SKIP"; exit 0; }
for t in nfcapd nfdump jq curl; do
	command -v $t >/dev/null || { not_ok "$t not installed (./spanbox install-deps)"; exit 1; }
done
ip link del "$IF" 2>/dev/null
ip tuntap add dev "$IF" mode tap multi_queue || { not_ok "tap $IF"; exit 1; }
sysctl -qw "net.ipv6.conf.$IF.disable_ipv6=1" # no router solicitations of the kernel's: no flows of its own

cat >"$CFG" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 113, "mgmt_lcore": 114},
  "ports": [
    {"name": "p0", "devargs": "net_tap0,iface=$IF"},
    {"name": "p1", "devargs": "net_null1,no-rx=1"},
    {"name": "m", "devargs": "net_null2,no-rx=1"}
  ],
  "workers": {"count": 1, "lcores": [115], "standby": 0},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mirrors": [{"id": 7, "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "m"}}],
  "flows": {"ports": [{"port": "p0", "direction": "rx"}], "idle_timeout_s": 1, "template_period_s": 1,
            "collectors": [{"address": "127.0.0.1", "port": $NF, "transport": "udp"}]},
  "mgmt": {"port": $PORT, "database": "$TMP/fg.db", "token": "$TOKEN"}
}
JSON
inst_start_both fg "$CFG" "$API" || exit 1
ip link set "$IF" up

# send SPORT N_FWD N_REV: N_FWD UDP frames 10.29.0.1:SPORT -> 10.29.1.1:4000, then N_REV back
# (10 ms apart, far below the idle timeout)
send() {
	"$PY" - "$IF" "$@" <<'EOF'
import sys, time
from scapy.all import IP, UDP, Ether, Raw, conf
iface, sport, nf, nr = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = conf.L2socket(iface=iface)
a, b = ("10.29.0.1", sport), ("10.29.1.1", 4000)
for (src, dst), n in (((a, b), nf), ((b, a), nr)):
    for _ in range(n):
        s.send(Ether(src="02:00:00:00:29:01", dst="02:00:00:00:29:02") /
               IP(src=src[0], dst=dst[0]) / UDP(sport=src[1], dport=dst[1]) / Raw(b"\x29" * 72))
        time.sleep(0.01)
s.close()
EOF
}
# records DIR: "in out dir | src sport dst dport packets rpackets" of our records, sorted
records() {
	nfdump -R "$1" -q -N -o "fmt:%in|%out|%dir|%sa|%sp|%da|%dp|%pkt|%opkt" 'net 10.29.0.0/16' 2>/dev/null |
		tr -d ' ' | awk -F'|' 'NF >= 9 { print $1, $2, $3, "|", $4, $5, $6, $7, $8, $9 }' | sort
}
sent() { curl -fsS --max-time 5 "$API/flows" | jq '[.collectors[].records_sent] | add // 0'; }
# phase N SPORT N_FWD N_REV RECORDS: a collector of its own for the phase; the records of SPORT once
# the exporter sent RECORDS more (idle timeout 1 s: about 2.5 s after the frames; at most 20 s)
phase() {
	local n=$1 before
	nfstart "$TMP/nf$n" "$NF"
	sleep 1.5 # a template reaches the new collector (template_period_s 1)
	before=$(sent)
	send "$2" "$3" "$4"
	wait_for 200 cond "[ \$(sent) -ge $((before + $5)) ]" || echo "# phase $n: $(($(sent) - before)) records sent of $5 in 20 s"
	sleep 0.5 # UDP on loopback: in nfcapd's socket by then
	nfstop
	records "$TMP/nf$n" | grep -E " $2 | $2 10.29" >"$TMP/r$n.txt"
	sed "s/^/# phase $n: /" "$TMP/r$n.txt"
}
flows_put() { # JQ expression on the running section: the HTTP status, the answer in $TMP/put.json
	curl -fsS --max-time 10 -H "$AUTH" "$API/flows/config" | jq -c "$1" >"$TMP/section.json"
	curl -sS --max-time 30 -o "$TMP/put.json" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: application/json' \
		-X PUT --data-binary @"$TMP/section.json" "$API/flows/config"
}

# 1. biflow off (the file's)
phase 1 3001 5 3 2
check "1: biflow off: a conversation of 5 + 3 frames is two records of p0's RX, 5 and 3 packets, no reverse count" \
	[ "$(cat "$TMP/r1.txt" | tr '\n' ';')" = "0 0 I | 10.29.0.1 3001 10.29.1.1 4000 5 0;0 0 I | 10.29.1.1 4000 10.29.0.1 3001 3 0;" ]

# 2. switched on at run time
code=$(flows_put '.biflow = true')
check "2: PUT /flows/config with biflow true: 200 ($code), GET says biflow true" \
	cond "[ $code = 200 ] && curl -fsS --max-time 5 '$API/flows' | jq -e '.biflow == true' >/dev/null"
phase 2 3002 5 3 1
check "2: biflow switched on live: the next conversation is one record, 5 packets forward and 3 reverse" \
	[ "$(cat "$TMP/r2.txt" | tr '\n' ';')" = "0 0 I | 10.29.0.1 3002 10.29.1.1 4000 5 3;" ]

# 3. and off again
code=$(flows_put '.biflow = false')
check "3: PUT /flows/config with biflow false: 200 ($code)" [ "$code" = 200 ]
phase 3 3003 5 3 2
check "3: biflow switched off live: two records again (5 and 3 packets, no reverse)" \
	[ "$(cat "$TMP/r3.txt" | tr '\n' ';')" = "0 0 I | 10.29.0.1 3003 10.29.1.1 4000 5 0;0 0 I | 10.29.1.1 4000 10.29.0.1 3003 3 0;" ]

# 4. the direction: p1's TX instead of p0's RX
code=$(flows_put '.ports = [{"port": "p1", "direction": "tx"}]')
check "4: PUT /flows/config with ports [p1 tx]: 200 ($code), GET /flows tx_ports [p1], ports []" \
	cond "[ $code = 200 ] && curl -fsS --max-time 5 '$API/flows' | jq -e '.tx_ports == [\"p1\"] and .ports == []' >/dev/null"
phase 4 3004 4 0 1
check "4: metered on p1's TX from the change on: one record, egressInterface 1, direction E, 4 packets; none of p0's RX" \
	[ "$(cat "$TMP/r4.txt" | tr '\n' ';')" = "0 1 E | 10.29.0.1 3004 10.29.1.1 4000 4 0;" ]

# 5. a session listed in flows.sessions cannot be deleted
code=$(flows_put '.ports = [] | .sessions = [7]')
check "5: PUT /flows/config with sessions [7]: 200 ($code)" [ "$code" = 200 ]
code=$(curl -sS --max-time 10 -o "$TMP/del.json" -w '%{http_code}' -H "$AUTH" -X DELETE "$API/mirrors/7")
echo "# DELETE /mirrors/7: $code $(head -c 300 "$TMP/del.json")"
check "5: DELETE /mirrors/7 while flows.sessions lists it: 4xx naming flows.sessions ($code), session 7 still there" \
	cond "[ $code -ge 400 ] && [ $code -lt 500 ] && jq -e '.error.field | test(\"^flows.sessions\")' '$TMP/del.json' >/dev/null &&
	      [ \"\$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 '$API/mirrors/7')\" = 200 ]"
code=$(flows_put '.sessions = []')
code2=$(curl -sS --max-time 10 -o "$TMP/del2.json" -w '%{http_code}' -H "$AUTH" -X DELETE "$API/mirrors/7")
check "5: once flows.sessions no longer lists it, DELETE /mirrors/7: 200 ($code, $code2)" [ "$code" = 200 -a "$code2" = 200 ]
exit 0
