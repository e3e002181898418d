#!/usr/bin/env bash
# Mirrors and cross-connects changed through the REST API while traffic flows (issue #5):
# CRUD round trips that take effect on traffic (tcpdump/tshark on sbx-mirror), survive a mgmt
# restart and a whole appliance restart, refusals that change nothing, a locked database (503),
# 8 concurrent clients, and no lost frame while sessions come and go.
# The default config with its own database (the stored config of the user's database is not touched).
source "$(dirname "$0")/../lib/common.sh"
API=http://127.0.0.1:8080/api/v1
CFG="$TMP/rt.json" DB="$TMP/rt.db" OUT_DIR="$TMP/clients"
mkdir -p "$OUT_DIR"
trap '"$ROOT/spanbox" stop "$CFG" >/dev/null 2>&1; kill $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT
jq --arg db "$DB" '.mgmt.database = $db' "$ROOT/config/default.json" >"$CFG"

get() { curl -sS "$API$1"; }
# req METHOD PATH [BODY]: prints the HTTP status, the body goes to $TMP/body
req() {
	local m=$1 p=$2; shift 2
	curl -sS -o "$TMP/body" -w '%{http_code}' -X "$m" -H "Authorization: Bearer $TOKEN" \
		-H 'Content-Type: application/json' ${1:+--data-binary "$1"} "$API$p"
}
mirror_ids() { get /mirrors | jq -c '[.[].id] | sort'; }
xconnects() { get /forwarding/xconnects | jq -c '[.[].id]'; }
kstat() { ip -n "$1" -s -j link show "$2" | jq ".[0].stats64.$3.packets"; }
health_up() { get /health 2>/dev/null | jq -e '.appliance == "up"' >/dev/null; }
# icmp_mirrored SECONDS: ICMP frames tcpdump sees on sbx-mirror while sbx-a pings
icmp_mirrored() {
	timeout "$1" tcpdump -nni sbx-mirror -c 4 icmp >"$TMP/td.txt" 2>/dev/null &
	local td=$!
	sleep 1
	ip netns exec sbx-a ping -c 3 -i 0.2 -W 1 198.18.0.2 >/dev/null
	wait $td
	grep -c 'ICMP echo' "$TMP/td.txt"
}

timeout 180 "$ROOT/spanbox" start "$CFG" >"$TMP/start.log" 2>&1
check "appliance starts with its own database" [ $? -eq 0 ] || { tail -n 20 "$TMP/start.log" | sed 's/^/# /'; exit 1; }
TOKEN=$(cat "$DB.token")
check "the start prints the API token" grep -q "$TOKEN" "$TMP/start.log"
check "GET /mirrors of the default config: []" [ "$(mirror_ids)" = "[]" ]
check "GET /forwarding/xconnects: p0-p1" [ "$(xconnects)" = '["p0-p1"]' ]
check "nothing mirrored before a session exists" [ "$(icmp_mirrored 4)" -eq 0 ]

SPAN='{"id": 7, "name": "p0-span", "sources": [{"port": "p0"}], "destination": {"port": "mirror"}}'
code=$(req POST /mirrors "$SPAN")
check "POST /mirrors (SPAN of p0 to mirror) answers 201 with the session" \
	[ "$code" = 201 -a "$(jq -c '[.id, .name]' "$TMP/body")" = '[7,"p0-span"]' ]
check "GET /mirrors shows session 7" [ "$(mirror_ids)" = "[7]" ]
n=$(icmp_mirrored 5)
check "tcpdump on sbx-mirror sees the ping once session 7 exists ($n ICMP frames)" [ "$n" -ge 4 ]
check "GET /mirrors/7 counts mirrored packets" \
	bash -c "curl -fsS $API/mirrors/7 | jq -e '.counters.mirrored_packets >= 3' >/dev/null"

# refusals: each leaves the sessions as they were
code=$(req POST /mirrors "$SPAN")
check "POST of an existing id: 409 naming the id, nothing changed" \
	[ "$code" = 409 -a "$(jq -r .error.field "$TMP/body")" = id -a "$(mirror_ids)" = "[7]" ]
code=$(req POST /mirrors '{"id": 8, "name": "x", "sources": [{"port": "nope"}], "destination": {"port": "mirror"}}')
check "POST with an unknown source port: 422 naming sources[0].port (the field of the body), nothing changed" \
	[ "$code" = 422 -a "$(jq -r .error.field "$TMP/body")" = "sources[0].port" -a "$(mirror_ids)" = "[7]" ]
code=$(req POST /mirrors '{"id": 8, "name": "x", "sources": [{"port": "p0"}], "destination": {"port": "mirror"}, "filter": "tcp port"}')
check "POST with a filter that does not compile: 422 naming filter, nothing changed" \
	[ "$code" = 422 -a "$(jq -r .error.field "$TMP/body")" = "filter" -a "$(mirror_ids)" = "[7]" ]
code=$(req POST /mirrors '{"id": 9, "name": "y", "sources": [{"port": "p0"}], "destination": {"port": "mirror"}, "snaplen": -1}')
check "POST with snaplen -1: 422 naming snaplen" \
	[ "$code" = 422 -a "$(jq -r .error.field "$TMP/body")" = "snaplen" -a "$(mirror_ids)" = "[7]" ]
code=$(req PUT /mirrors/7 '{"id": 8, "name": "z", "sources": [{"port": "p0"}], "destination": {"port": "mirror"}}')
check "PUT /mirrors/7 with id 8 in the body: 422 naming id" [ "$code" = 422 -a "$(jq -r .error.field "$TMP/body")" = id ]
code=$(req DELETE /mirrors/99)
check "DELETE of an unknown session: 404, nothing changed" [ "$code" = 404 -a "$(mirror_ids)" = "[7]" ]
# found by a breaker session: a NUL cut values short and the request was accepted; "+7" or "007"
# or a %00 in the path addressed another object
code=$(req POST /mirrors '{"id": 8, "name": "ab\u0000<x>", "sources": [{"port": "p0"}], "destination": {"port": "mirror"}}')
check "a name holding \\u0000: 400 naming the NUL, nothing changed" \
	cond '[ "$code" = 400 -a "$(mirror_ids)" = "[7]" ] && grep -q NUL "$TMP/body"'
for p in +7 007 %207 7%00; do
	code=$(curl -sS -o /dev/null -w '%{http_code}' "$API/mirrors/$p")
	check "GET /mirrors/$p does not name session 7: 404" [ "$code" = 404 ]
done
code=$(req DELETE /forwarding/xconnects/p0-p1%00x)
check "DELETE /forwarding/xconnects/p0-p1%00x: 404, the cross-connect stays" [ "$code" = 404 -a "$(xconnects)" = '["p0-p1"]' ]
code=$(req POST /forwarding/xconnects '{"ports": ["p0", "p1"], "bogus": 1}')
check "an xconnect body with an unknown key: 422 naming it" [ "$code" = 422 -a "$(jq -r .error.field "$TMP/body")" = bogus ]
code=$(req PUT /mirrors/7 '[]')
check "PUT /mirrors/7 with a non-object body: 422 without blaming a field" [ "$code" = 422 -a "$(jq -r .error.field "$TMP/body")" = null ]
code=$(req POST /mirrors '{"id": 8, "name": "live", "sources": [{"port": "p0"}], "destination": {"port": "p1"}}')
check "a destination that forwards (p1): 422 naming destination.port, nothing changed (a new user saw duplicates on the live link)" \
	[ "$code" = 422 -a "$(jq -r .error.field "$TMP/body")" = "destination.port" -a "$(mirror_ids)" = "[7]" ]
jq '.ports[0].mtu = 9000' "$CFG" >"$TMP/ports.json"
code=$(req PUT /config "$(cat "$TMP/ports.json")")
check "PUT /config changing a port: 422 naming ports (needs a restart), nothing changed" \
	[ "$code" = 422 -a "$(jq -r .error.field "$TMP/body")" = ports -a "$(mirror_ids)" = "[7]" ]
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data-binary '{"id": 10, "name": "t", "sources": [{"port": "p0"}], "destination": {"port": "mirror"}}' "$API/mirrors")
check "POST without the token: 401, nothing changed" [ "$code" = 401 -a "$(mirror_ids)" = "[7]" ]

# PUT: the session becomes ERSPAN II; tshark decodes it
ERSPAN='{"name": "p0-erspan", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "mirror"},
  "encap": {"type": "erspan2", "src_ip": "192.0.2.1", "dst_ip": "192.0.2.2", "dst_mac": "02:00:00:00:00:02"}}'
code=$(req PUT /mirrors/7 "$ERSPAN")
check "PUT /mirrors/7 (now ERSPAN II) answers 200" [ "$code" = 200 ]
timeout 12 tshark -i sbx-mirror -f 'ip proto 47' -a duration:5 -w "$TMP/erspan.pcap" >/dev/null 2>&1 &
cap=$!
sleep 2
ip netns exec sbx-a ping -c 4 -i 0.2 -W 1 198.18.0.2 >/dev/null
wait $cap
n=$(tshark -r "$TMP/erspan.pcap" -Y 'erspan.spanid == 7 && icmp.type == 8' 2>/dev/null | wc -l)
check "tshark decodes the echo requests as ERSPAN type II session 7 ($n)" [ "$n" -eq 4 ]

# cross-connects
code=$(req DELETE /forwarding/xconnects/p0-p1)
check "DELETE /forwarding/xconnects/p0-p1 answers 200" [ "$code" = 200 -a "$(xconnects)" = "[]" ]
check "without the cross-connect the ping does not cross" \
	bash -c "! ip netns exec sbx-a ping -c 2 -i 0.2 -W 1 198.18.0.2 >/dev/null"
code=$(req POST /forwarding/xconnects '{"ports": ["p0", "p1"]}')
check "POST /forwarding/xconnects p0,p1 answers 201" [ "$code" = 201 -a "$(xconnects)" = '["p0-p1"]' ]
check "with it back the ping crosses again (0% loss)" ip netns exec sbx-a ping -c 3 -i 0.2 -W 1 198.18.0.2
code=$(req POST /forwarding/xconnects '{"ports": ["p0", "mirror"]}')
check "a second cross-connect of p0: 422 naming the field, nothing changed" \
	[ "$code" = 422 -a "$(jq -r .error.field "$TMP/body")" = "forwarding.xconnects[1][0]" -a "$(xconnects)" = '["p0-p1"]' ]

# No lost frame while sessions come and go: 20 add/delete cycles under a 100 pps ping.
ip netns exec sbx-a ping -c 600 -i 0.01 -W 1 198.18.0.2 >"$TMP/flood.txt" &
pinger=$!
ok_changes=0
for i in $(seq 20); do
	[ "$(req POST /mirrors '{"id": 20, "name": "churn", "sources": [{"port": "p1", "direction": "both"}], "destination": {"port": "mirror"}, "copy": {"strategy": "share"}}')" = 201 ] && ok_changes=$((ok_changes + 1))
	[ "$(req DELETE /mirrors/20)" = 200 ] && ok_changes=$((ok_changes + 1))
done
wait $pinger
loss=$(grep -o '[0-9.]*% packet loss' "$TMP/flood.txt")
check "40 changes under a 100 pps ping: all applied ($ok_changes/40), $loss" \
	[ "$ok_changes" -eq 40 -a "$loss" = "0% packet loss" ]
check "no worker was restarted by the changes" \
	bash -c "curl -fsS $API/workers | jq -e '[.[].restarts] == [0, 0]' >/dev/null"
check "every change is in the audit log with the client address" \
	bash -c "curl -fsS '$API/events?limit=1000' | jq -e '[.[] | select(.kind == \"config_change\" and (.client // \"\" | startswith(\"127.0.0.1:\")))] | length >= 44' >/dev/null"

# A locked database: writes get 503 and change nothing, reads work, writes work again after.
python3 - "$DB" <<'PY' &
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
open(sys.argv[1] + ".locked", "w").close()
time.sleep(4)
c.execute("ROLLBACK")
PY
locker=$!
wait_for 30 test -f "$DB.locked"
t0=$(date +%s%N)
code=$(req POST /mirrors '{"id": 11, "name": "locked", "sources": [{"port": "p0"}], "destination": {"port": "mirror"}}')
ms=$((($(date +%s%N) - t0) / 1000000))
check "database locked: POST /mirrors answers 503 in $ms ms (< 2 s)" [ "$code" = 503 -a "$ms" -lt 2000 ]
check "and the session was not applied" [ "$(mirror_ids)" = "[7]" ]
check "reads keep working while it is locked (GET /status 200)" \
	[ "$(curl -sS -o /dev/null -w '%{http_code}' "$API/status")" = 200 ]
wait $locker
code=$(req POST /mirrors '{"id": 11, "name": "unlocked", "sources": [{"port": "p0"}], "destination": {"port": "mirror"}}')
check "after the lock goes, the same POST answers 201" [ "$code" = 201 -a "$(mirror_ids)" = "[7,11]" ]

# 8 concurrent clients for 10 s, each adding and deleting its own sessions and reading.
# wreq METHOD PATH [BODY]: req, and a line in $TMP/bad (time, request, code, curl's error, the
# answer) when it is not 2xx: a failure of this section then says what happened (it failed 1 run
# in ~5 with one "Empty reply from server" whose cause is not known yet)
wreq() {
	local c
	c=$(req "$@" 2>"$TMP/curl.err")
	case $c in 2??) ;; *) echo "$(date +%T.%N) $1 $2: $c $(head -c 300 "$TMP/curl.err" "$TMP/body" 2>/dev/null | tr '\n' ' ')" >>"$TMP/bad" ;; esac
	echo "$c"
}
client() { # client N: sessions 100+N*10.., prints "w CODE" per write and "r CODE" per read
	local n=$1 k=0 end=$((SECONDS + 10)) id
	while [ $SECONDS -lt $end ]; do
		id=$((100 + n * 10 + k % 5))
		echo "w $(wreq POST /mirrors "{\"id\": $id, \"name\": \"c$n\", \"sources\": [{\"port\": \"p1\"}], \"destination\": {\"port\": \"mirror\"}}")"
		echo "r $(curl -sS -o /dev/null -w '%{http_code}' "$API/mirrors")"
		echo "w $(wreq DELETE /mirrors/$id)"
		echo "r $(curl -sS -o /dev/null -w '%{http_code}' "$API/status")"
		k=$((k + 1))
	done
	# each client leaves one session
	echo "w $(wreq POST /mirrors "{\"id\": $((100 + n * 10 + 9)), \"name\": \"last$n\", \"sources\": [{\"port\": \"p0\"}], \"destination\": {\"port\": \"mirror\"}}")"
}
ev0=$(sqlite3 "$DB" "SELECT count(*) FROM events WHERE kind = 'config_change'")
for n in $(seq 0 7); do (export TMP=$(mktemp -d); client "$n" >"$TMP/client.txt"; cp "$TMP/client.txt" "$OUT_DIR/client$n.txt"
	[ -f "$TMP/bad" ] && sed "s/^/client $n: /" "$TMP/bad" >"$OUT_DIR/bad$n.txt"; rm -rf "$TMP") & done
wait
cat "$OUT_DIR"/client*.txt >"$TMP/codes.txt"
if compgen -G "$OUT_DIR/bad*.txt" >/dev/null; then # what went wrong, for the log of a failed run
	sort -k3 "$OUT_DIR"/bad*.txt | head -20 | sed 's/^/# /'
	echo "# mgmt's log, last lines:"; tail -n 15 /var/log/spanbox/spanbox-mgmt.log | sed 's/^/#   /'
fi
echo "# $(wc -l <"$TMP/codes.txt") requests: $(sort "$TMP/codes.txt" | uniq -c | tr '\n' ' ')"
check "8 clients x 10 s: no 5xx" bash -c "! grep -q ' 5' '$TMP/codes.txt'"
check "every request succeeded (reads 200, writes 200/201)" bash -c "! grep -qv ' 20[01]$' '$TMP/codes.txt'"
want='[7,11,109,119,129,139,149,159,169,179]'
check "no lost write: exactly the sessions the clients left ($(mirror_ids))" [ "$(mirror_ids)" = "$want" ]
writes=$(grep -c '^w 20[01]$' "$TMP/codes.txt")
ev=$(( $(sqlite3 "$DB" "SELECT count(*) FROM events WHERE kind = 'config_change'") - ev0 ))
check "history consistent: one config_change event in the SQLite file per write ($ev events, $writes writes)" \
	[ "$ev" -eq "$writes" -a "$writes" -gt 16 ]
stored=$(sqlite3 "$DB" "SELECT json FROM config_store ORDER BY id DESC LIMIT 1" | jq -c '[.mirrors[].id] | sort')
check "the newest stored config holds exactly the running sessions ($stored)" [ "$stored" = "$want" ]

# mgmt killed with -9 while traffic flows: forwarding goes on, a new mgmt picks up the state
rx0=$(kstat sbx-b sbx-p1 rx)
kill -9 "$(cat /run/spanbox/spanbox.mgmt.pid)"
ip netns exec sbx-a ping -c 10 -i 0.1 -W 1 198.18.0.2 >"$TMP/ping2.txt"
check "mgmt killed with -9: forwarding goes on (0% loss)" grep -q ' 0% packet loss' "$TMP/ping2.txt"
check "sbx-b counters kept increasing" [ $(($(kstat sbx-b sbx-p1 rx) - rx0)) -ge 10 ]
setsid "$BUILD/mgmt/spanbox-mgmt" -c "$CFG" </dev/null >"$TMP/mgmt2.log" 2>&1 &
echo $! >/run/spanbox/spanbox.mgmt.pid
check "a new mgmt attaches" wait_for 100 health_up
check "it serves the sessions made through the old one" [ "$(mirror_ids)" = "$want" ]

# whole appliance restart: the stored config wins over the file
"$ROOT/spanbox" stop "$CFG" >/dev/null 2>&1
timeout 180 "$ROOT/spanbox" start "$CFG" >"$TMP/start2.log" 2>&1
check "appliance restarted" [ $? -eq 0 ]
check "after the restart the sessions are those stored, not the file's" [ "$(mirror_ids)" = "$want" ]
check "the primary said so" grep -q "changed through the API for $CFG" /var/log/spanbox/spanbox-primary.log
n=$(icmp_mirrored 5)
check "session 11 (SPAN of p0) mirrors the ping after the restart ($n)" [ "$n" -ge 4 ]

# The store is per config file: another file on the same database starts with its own sections
# (a new user once ran the README's ERSPAN example and got the sessions made on the default file).
"$ROOT/spanbox" stop "$CFG" >/dev/null 2>&1
cp "$CFG" "$TMP/other.json"
timeout 180 "$ROOT/spanbox" start "$TMP/other.json" >/dev/null 2>&1
check "another config file, same database: its own (no) sessions, not those stored for $CFG" [ "$(mirror_ids)" = "[]" ]
"$ROOT/spanbox" stop "$TMP/other.json" >/dev/null 2>&1
timeout 180 "$ROOT/spanbox" start "$CFG" >/dev/null 2>&1
check "back on $CFG: its stored sessions again" [ "$(mirror_ids)" = "$want" ]

# PUT /config with the file's content resets to the file
code=$(req PUT /config "$(cat "$CFG")")
check "PUT /config with the file: 200, the file's (no) sessions" [ "$code" = 200 -a "$(mirror_ids)" = "[]" ]
"$ROOT/spanbox" stop "$CFG" >/dev/null 2>&1
timeout 180 "$ROOT/spanbox" start "$CFG" >/dev/null 2>&1
check "and it stays so across a restart" [ "$(mirror_ids)" = "[]" -a "$(xconnects)" = '["p0-p1"]' ]
check "going back to the file's content stored nothing for it (config_reset in the audit)" \
	[ "$(sqlite3 "$DB" "SELECT count(*) FROM config_store WHERE config_path = '$CFG'")" = 0 ] &&
	[ "$(sqlite3 "$DB" "SELECT count(*) FROM events WHERE kind = 'config_reset'")" -ge 1 ]

# Two changes published while the workers are stopped (asleep, so offline for the grace periods):
# on waking they must take the new tables before touching a frame. Found by a breaker session: a
# worker woke, forwarded with pointers into a buffer rewritten meanwhile, and counted a copy in
# the deleted session's counter set (4 rounds in 10). Every mirrored frame must then carry VLAN
# 100 and session 9 must count exactly the copies seen.
valid=0 bad=0
for round in 1 2 3 4 5; do
	jq -c '.mirrors = [{id: 7, name: "base", sources: [{port: "p0", direction: "rx"}], destination: {port: "mirror"}}]' "$CFG" >"$TMP/g0.json"
	req PUT /config "$(cat "$TMP/g0.json")" >/dev/null
	sleep 0.3
	pids=$(get /workers | jq -r '.[].pid')
	timeout 5 tcpdump -nni sbx-mirror -e -c 20 icmp >"$TMP/td.txt" 2>/dev/null &
	td=$!
	sleep 0.8
	kill -STOP $pids
	jq -c '.mirrors = []' "$TMP/g0.json" >"$TMP/g1.json"
	jq -c '.mirrors = [{id: 9, name: "tagged", sources: [{port: "p0", direction: "rx"}], destination: {port: "mirror"}, filter: "icmp", encap: {type: "rspan", vlan: 100}}]' "$TMP/g0.json" >"$TMP/g2.json"
	c1=$(req PUT /config "$(cat "$TMP/g1.json")"); c2=$(req PUT /config "$(cat "$TMP/g2.json")")
	ip netns exec sbx-a ping -c 1 -W 0.1 198.18.0.2 >/dev/null 2>&1 # waits in a stopped worker's RX ring
	kill -CONT $pids
	sleep 0.3
	ip netns exec sbx-a ping -c 2 -i 0.2 -W 1 198.18.0.2 >/dev/null 2>&1
	wait $td
	untagged=$(grep 'ICMP echo request' "$TMP/td.txt" | grep -vc 'vlan 100')
	tagged=$(grep 'ICMP echo request' "$TMP/td.txt" | grep -c 'vlan 100')
	n9=$(get /mirrors/9 | jq .counters.mirrored_packets)
	echo "# round $round: PUTs $c1 $c2 (a 503 means a worker was stopped while online: round not counted); untagged $untagged, vlan 100 $tagged, session 9 counted $n9"
	[ "$c1 $c2" = "200 200" ] || continue
	valid=$((valid + 1))
	[ "$untagged" -eq 0 ] && [ "$n9" = "$tagged" ] && [ "$tagged" -ge 2 ] || bad=$((bad + 1))
done
check "changes published while the workers slept: woken workers use only the new tables ($bad bad of $valid rounds)" \
	[ "$valid" -ge 2 -a "$bad" -eq 0 ]
req PUT /config "$(cat "$CFG")" >/dev/null

# ./spanbox reset-config of a stopped file: what was stored for it is forgotten
req POST /mirrors '{"id": 33, "name": "kept", "sources": [{"port": "p0"}], "destination": {"port": "mirror"}}' >/dev/null
"$ROOT/spanbox" stop "$CFG" >/dev/null 2>&1
"$ROOT/spanbox" reset-config "$CFG" 2>"$TMP/reset.log"
timeout 180 "$ROOT/spanbox" start "$CFG" >/dev/null 2>&1
check "./spanbox reset-config while stopped: the next start runs the file's (no) sessions" \
	cond '[ "$(mirror_ids)" = "[]" ] && grep -q forgot "$TMP/reset.log"'
"$ROOT/spanbox" stop "$CFG" >/dev/null 2>&1
check "no hugepage file left" bash -c "! ls /dev/hugepages/spanboxmap_* >/dev/null 2>&1"
