#!/usr/bin/env bash
# The connection guard of mgmt/http.c never closes a connection that is within its deadlines, and
# mgmt's stop leaves no connection without an answer (issue #24 item 1).
# 1. The sweep read the clock before it took the table's lock: a connection accepted (or moved
#    to a new phase) in between had a stamp after the clock read, the unsigned difference wrapped
#    and the fresh connection was shut down before its request: "Empty reply from server", about
#    one full test run in five. The test hook SBX_TEST_SWEEP_DELAY_MS=30 widens that window (each
#    sweep waits 30 ms before its lock); 100 fresh connections that wait 0-150 ms before they send
#    must all be answered, and no deadline close is counted. On the code before the fix 17 of 100
#    got nothing.
# 2. A change still running when mgmt stops (the primary's apply held 12 s with
#    SBX_TEST_APPLY_DELAY_MS, mgmt's wait for it 20 s with SBX_TEST_APPLY_TIMEOUT_MS, mgmt's wait
#    for a change in flight at a stop is 6 s, the lanes' drain cut to 1 s with
#    SBX_TEST_DEFER_DRAIN_S=1): its client gets a 503 JSON answer that says the outcome is
#    unknown, a second change queued behind it gets 503 "not run" and is never applied, and mgmt
#    exits 0. Before: libmicrohttpd aborted on the suspended
#    connections (MHD_stop_daemon() with suspended connections), the clients got nothing.
#
# Own instance: file prefix t24hg, lcores 104-106, API port 18724, net_null ports without RX.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"

PORT=18724
API=http://127.0.0.1:$PORT/api/v1
CFG="$TMP/hg.json"
trap 'inst_cleanup; rm -rf "$TMP"' EXIT

cat >"$CFG" <<JSON
{ "eal": {"file_prefix": "t24hg", "socket_mem_mb": 128, "primary_lcore": 104, "mgmt_lcore": 105},
  "ports": [ {"name": "p0", "devargs": "net_null0,no-rx=1"}, {"name": "p1", "devargs": "net_null1,no-rx=1"},
             {"name": "m", "devargs": "net_null2,no-rx=1"} ],
  "workers": {"count": 1, "lcores": [106], "busy_poll": false},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mgmt": {"port": $PORT, "database": "$TMP/hg.db"} }
JSON
session() { echo "{\"id\": $1, \"sources\": [{\"port\": \"p0\"}], \"destination\": {\"port\": \"m\"}}"; }
closed() { # closed REASON: spanbox_mgmt_http_closed_total{reason=REASON}
	curl -sS --max-time 5 "http://127.0.0.1:$PORT/metrics" |
		sed -nE "s/^spanbox_mgmt_http_closed_total\\{reason=\"$1\"\\} ([0-9]+)$/\\1/p"
}

inst_start_primary hg "$CFG" SBX_TEST_APPLY_DELAY_MS=12000,0
check "primary (prefix t24hg, apply held 12 s) ready" [ $? -eq 0 ] || { tail -n 20 "$TMP/hg-primary.log"; exit 1; }

# --- 1. fresh connections while the sweep is slow to take its lock ---------------------------
SBX_TEST_SWEEP_DELAY_MS=30 inst_start_mgmt hg "$CFG" "$API"
check "mgmt up on port $PORT (sweep delayed 30 ms before its lock)" [ $? -eq 0 ] || { cat "$TMP/hg-mgmt.log"; exit 1; }
j=$(timeout 90 python3 "$ROOT/tests/lib/fresh_conns.py" --port "$PORT" -n 100 --wait-ms 150 --max-s 60)
echo "# fresh connections: $j"
check "1: 100 fresh connections that wait 0-150 ms before GET /api/v1/health: every one answered ($j)" \
	jq -e '.n == 100 and .answered == 100 and .empty == 0 and .errors == 0' <<<"$j"
check "1: ... all 200" jq -e '.statuses["200"] == 100' <<<"$j"
w=$(closed deadline_waiting) a=$(closed deadline_answering)
check "1: /metrics counts no deadline close (waiting $w, answering $a)" cond "[ '$w' = 0 ] && [ '$a' = 0 ]"
check "1: mgmt logged no deadline close" bash -c "! grep -q 'deadline: closed' '$TMP/hg-mgmt.log'"

# --- 3. what the HTTP layer answers for escaped slashes and long requests (item 12) -----------
http() { # http OUT CURL_ARGS...: the status; headers and body in OUT.h / OUT
	curl -sS --path-as-is --max-time 10 -D "$1.h" -o "$1" -w '%{http_code}' "${@:2}"
}
json_err() { # json_err OUT CODE: a JSON error body with that code, served as application/json
	jq -e --argjson c "$2" '.error.code == $c' "$1" >/dev/null && grep -qi '^content-type: application/json' "$1.h"
}
code=$(http "$TMP/s" "http://127.0.0.1:$PORT/api/v1%2fhealth")
check "3: GET /api/v1%2fhealth (an escaped '/'): 404 JSON, not /api/v1/health ($code: $(head -c 150 "$TMP/s"))" \
	cond "[ '$code' = 404 ] && json_err '$TMP/s' 404"
code=$(http "$TMP/s" "http://127.0.0.1:$PORT/api/v1/mirrors/5%2F..%2F..%2Fhealth")
check "3: an escaped '/' inside a segment: 404 JSON ($code)" cond "[ '$code' = 404 ] && json_err '$TMP/s' 404"
long=$(head -c 20000 /dev/zero | tr '\0' a)
code=$(http "$TMP/s" "$API/health?x=$long")
check "3: a 20 kB URL: 414 in the API's JSON ($code: $(head -c 150 "$TMP/s"))" cond "[ '$code' = 414 ] && json_err '$TMP/s' 414"
big=$(head -c 40000 /dev/zero | tr '\0' b)
code=$(http "$TMP/s" -H "X-Big: $big" "$API/health")
check "3: 40 kB of header fields: 431 in the API's JSON ($code: $(head -c 150 "$TMP/s"))" cond "[ '$code' = 431 ] && json_err '$TMP/s' 431"
code=$(http "$TMP/s" "$API/health")
check "3: and the next request answers 200 ($code)" [ "$code" = 200 ]
inst_stop_pid "$INST_MGMT"

# --- 2. a stop while a change runs and another waits for the lane ----------------------------
TOKEN=
SBX_TEST_DEFER_DRAIN_S=1 SBX_TEST_APPLY_TIMEOUT_MS=20000 inst_start_mgmt hg2 "$CFG" "$API"
check "2: mgmt restarted (drain 1 s)" [ $? -eq 0 ] || { cat "$TMP/hg2-mgmt.log"; exit 1; }
TOKEN=$(inst_token "$CFG")
post() { # post ID OUT: POST a mirror session, status and body to OUT
	curl -sS --max-time 40 -o "$2.body" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
		-H 'Content-Type: application/json' -d "$(session "$1")" "$API/mirrors" >"$2" 2>"$2.err"
}
post 5 "$TMP/a" & pa=$!
sleep 0.5
post 6 "$TMP/b" & pb=$!
sleep 0.5
kill -TERM "$INST_MGMT"
for i in $(seq 300); do kill -0 "$INST_MGMT" 2>/dev/null || break; sleep 0.1; done
wait "$INST_MGMT" 2>/dev/null; rc=$?
wait "$pa" "$pb"
echo "# running change: $(cat "$TMP/a") $(cat "$TMP/a.body" "$TMP/a.err" 2>/dev/null | head -c 300)"
echo "# queued change:  $(cat "$TMP/b") $(cat "$TMP/b.body" "$TMP/b.err" 2>/dev/null | head -c 300)"
check "2: mgmt stopped by SIGTERM exits 0 (it aborted: libmicrohttpd stopped with suspended connections) (rc $rc)" [ "$rc" = 0 ]
check "2: the change still running gets a 503 JSON answer: outcome unknown" \
	cond "[ \"\$(cat $TMP/a)\" = 503 ] && jq -e '.error.code == 503 and (.error.message | test(\"outcome is unknown\"))' $TMP/a.body >/dev/null"
check "2: the change queued behind it gets a 503 JSON answer: not run" \
	cond "[ \"\$(cat $TMP/b)\" = 503 ] && jq -e '.error.code == 503 and (.error.message | test(\"not run\"))' $TMP/b.body >/dev/null"
check "2: mgmt logged the 503s of the stop" grep -q 'answered 503' "$TMP/hg2-mgmt.log"
grep -iE 'panic|fatal|abort' "$TMP/hg2-mgmt.log" | sed 's/^/# mgmt: /'
inst_start_mgmt hg3 "$CFG" "$API"
check "2: mgmt started again" [ $? -eq 0 ] || { cat "$TMP/hg3-mgmt.log"; exit 1; }
ids=$(curl -sS --max-time 5 "$API/mirrors" | jq -c '[.[].id]')
check "2: the queued change (session 6) was never applied (mirrors: $ids)" jq -e 'index(6) == null' <<<"$ids"
