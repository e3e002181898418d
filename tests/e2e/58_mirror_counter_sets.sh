#!/usr/bin/env bash
# Mirror session counter sets (issue #10, section 1): changes whose kept + removed + added
# sessions exceed 16 used to write counter set 16, past the end of the shared arrays (a worker's
# burst pointers, the event counter): the primary then freed garbage after a worker restart.
# Every sequence of the bug report, then 1,000 random changes checked against a model; and every
# answer true: a change reported as "nothing was changed" is never applied later, a change the
# primary applied is never reported as refused (apply delayed with a test hook).
# Own prefix, taps, namespaces, API port and database; ping traffic inside the test's namespaces.
source "$(dirname "$0")/../lib/common.sh"
API=http://127.0.0.1:18110/api/v1
CFG="$TMP/csets.json" DB="$TMP/csets.db"
STEPS=${STEPS:-1000}
PING=
cleanup() {
	[ -n "$PING" ] && kill "$PING" 2>/dev/null
	"$ROOT/spanbox" stop "$CFG" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
jq --arg db "$DB" '.eal.file_prefix = "sbxcset" | .eal.primary_lcore = 40 | .eal.mgmt_lcore = 41
	| .workers.lcores = [42, 43] | .mgmt.port = 18110 | .mgmt.database = $db
	| .ports[0].devargs = "net_tap0,iface=sbxcs-p0" | .ports[0].netns = "sbxcs-a"
	| .ports[1].devargs = "net_tap1,iface=sbxcs-p1" | .ports[1].netns = "sbxcs-b"
	| .ports[2].devargs = "net_tap2,iface=sbxcs-m"
	| .mirrors = [{"id": 1, "sources": [{"port": "p0"}], "destination": {"port": "mirror"}}]' \
	"$ROOT/config/default.json" >"$CFG"

get() { curl -sS --max-time 10 "$API$1"; }
# req METHOD PATH [BODY]: prints the HTTP status, the body goes to $TMP/body
req() {
	local m=$1 p=$2; shift 2
	curl -sS --max-time 30 -o "$TMP/body" -w '%{http_code}' -X "$m" -H "Authorization: Bearer $TOKEN" \
		-H 'Content-Type: application/json' ${1:+--data-binary "$1"} "$API$p"
}
mirror_ids() { get /mirrors | jq -c '[.[].id] | sort'; }
stored_ids() {
	sqlite3 "$DB" "SELECT json FROM config_store WHERE config_path = '$(realpath "$CFG")' ORDER BY id DESC LIMIT 1" |
		jq -c '[.mirrors[].id] | sort'
}
session() { echo "{\"id\": $1, \"sources\": [{\"port\": \"p0\"}], \"destination\": {\"port\": \"mirror\"}}"; }
sessions() { local i s=; for i in "$@"; do s+="${s:+,}$(session "$i")"; done; echo "[$s]"; }
seq_ids() { seq -s, "$1" "$2" | sed 's/^/[/; s/$/]/'; }
put_config() { # put_config IDS...: PUT /config with these sessions
	get /config | jq --argjson m "$(sessions "$@")" '.mirrors = $m' >"$TMP/doc.json"
	req PUT /config "$(cat "$TMP/doc.json")"
}
workers_sig() { get /workers | jq -c '[.[] | [.id, .pid, .restarts, .state]]'; }
unexplained() { get /pools/sbx_pool_s0 | jq '.audit.unexplained'; }
# after a change: every worker runs, none restarted, and a graceful restart of worker 0 works
# (it segfaulted in a loop once counter set 16 had overwritten its burst pointers)
healthy_after() {
	local label=$1 before=$2 after
	after=$(workers_sig)
	check "$label: no worker restarted or died ($after)" [ "$after" = "$before" ]
	check "$label: graceful restart of worker 0 is accepted" bash -c "[ \$(curl -sS -o /dev/null -w '%{http_code}' \
		-X POST -H 'Authorization: Bearer $TOKEN' $API/workers/0/restart) = 202 ]"
	check "$label: worker 0 runs again after its restart (restarts +1)" bash -c "for i in \$(seq 50); do
		curl -sS $API/workers/0 | jq -e '.state == \"running\" and .restarts >= 1' >/dev/null && exit 0; sleep 0.2; done; exit 1"
	check "$label: the primary runs (no segfault freeing a recovered burst)" \
		bash -c "get() { curl -sS --max-time 5 $API\$1; }; get /health | jq -e '.appliance == \"up\"' >/dev/null"
	check "$label: pool audit: at most one burst unexplained ($(unexplained))" [ "$(unexplained)" -le 64 ]
}
restart_fresh() { # restart_fresh [ENV=VALUE...]: a new start on the file alone (nothing stored)
	"$ROOT/spanbox" stop "$CFG" >/dev/null 2>&1
	rm -f "$DB" "$DB-wal" "$DB-shm"
	[ -n "$PING" ] && kill "$PING" 2>/dev/null
	env "$@" timeout 180 "$ROOT/spanbox" start "$CFG" >"$TMP/start.log" 2>&1 || { tail "$TMP/start.log"; return 1; }
	TOKEN=$(cat "$DB.token")
	# traffic for the counters: a ping inside the namespaces this start made (bounded: 600 s)
	ip netns exec sbxcs-a ping -q -i 0.05 -w 600 198.18.0.2 >/dev/null 2>&1 &
	PING=$!
}

restart_fresh
check "appliance starts with session 1 from its file" [ $? -eq 0 -a "$(mirror_ids)" = "[1]" ] || exit 1

# --- 1. file with session 1, then PUT /config with 16 other sessions (100..115) ---------------
sig=$(workers_sig)
code=$(put_config $(seq 100 115))
check "1: PUT /config with sessions 100..115 (1 removed, 16 added): 200" [ "$code" = 200 ]
check "1: the 16 sessions are live" [ "$(mirror_ids)" = "$(seq_ids 100 115)" ]
check "1: ... and stored in SQLite" [ "$(stored_ids)" = "$(seq_ids 100 115)" ]
sleep 1
check "1: the new sessions count the ping (session 115 mirrored > 0)" \
	bash -c "curl -sS $API/mirrors/115 | jq -e '.counters.mirrored_packets > 0' >/dev/null"
healthy_after "1" "$sig"

# --- 2. DELETE 1, POST 100..115 one by one, then ./spanbox reset-config -------------------------
restart_fresh
sig=$(workers_sig)
code=$(req DELETE /mirrors/1)
check "2: DELETE /mirrors/1: 200" [ "$code" = 200 ]
codes=
for i in $(seq 100 115); do codes+=" $(req POST /mirrors "$(session "$i")")"; done
check "2: POST of 100..115: 201 each ($codes)" [ "$(echo $codes | tr ' ' '\n' | sort -u)" = 201 ]
code=$(req POST /mirrors "$(session 116)")
check "2: a 17th session: 422 naming the limit" \
	cond '[ "$code" = 422 ] && grep -q "at most 16" "$TMP/body"'
"$ROOT/spanbox" reset-config "$CFG" >"$TMP/reset.log" 2>&1
check "2: ./spanbox reset-config (16 removed, 1 added) succeeds" [ $? -eq 0 ]
check "2: session 1 alone is live again" [ "$(mirror_ids)" = "[1]" ]
check "2: nothing is stored for the file" [ -z "$(sqlite3 "$DB" "SELECT count(*) FROM config_store WHERE json IS NOT NULL" | grep -v '^0$')" ]
healthy_after "2" "$sig"

# --- 3. 16 live, replace one by another in one PUT --------------------------------------------
sig=$(workers_sig)
code=$(put_config $(seq 100 115))
check "3: 16 sessions live (PUT /config 100..115): 200" [ "$code" = 200 ]
sleep 0.5
c100=$(get /mirrors/100 | jq '.counters.mirrored_packets')
code=$(put_config $(seq 100 114) 200)
check "3: PUT /config replacing 115 by 200 (15 kept, 1 removed, 1 added): 200" [ "$code" = 200 ]
check "3: 100..114 and 200 are live" [ "$(mirror_ids)" = "$(seq_ids 100 114 | sed 's/]$/,200]/')" ]
check "3: ... and stored" [ "$(stored_ids)" = "$(seq_ids 100 114 | sed 's/]$/,200]/')" ]
sleep 0.5
check "3: the kept session 100 counts on ($c100 -> $(get /mirrors/100 | jq '.counters.mirrored_packets'))" \
	[ "$(get /mirrors/100 | jq '.counters.mirrored_packets')" -gt "$c100" ]
check "3: the new session 200 counts" \
	bash -c "curl -sS $API/mirrors/200 | jq -e '.counters.mirrored_packets > 0' >/dev/null"
healthy_after "3" "$sig"

# --- 4. 1,000 random changes against a model -----------------------------------------------------
sig=$(workers_sig)
python3 "$ROOT/tests/lib/mirror_model.py" "$API" "$TOKEN" "$CFG" "$DB" "$STEPS" "${SEED:-$RANDOM}" 100
healthy_after "4" "$sig"

# --- 5. every answer is true: an apply slower than mgmt's wait -----------------------------------
# The primary's decision comes 2.5 s after the request (hook SBX_TEST_APPLY_DELAY_MS=before,after)
# and mgmt waits 1 s (SBX_TEST_APPLY_TIMEOUT_MS): mgmt says "nothing was changed", and it is true.
restart_fresh SBX_TEST_APPLY_DELAY_MS=2500,0 SBX_TEST_APPLY_TIMEOUT_MS=1000
check "5: appliance starts with the apply-delay hooks" [ $? -eq 0 ] || exit 1
t0=$(date +%s%N); code=$(req POST /mirrors "$(session 300)"); t1=$(date +%s%N)
echo "# POST 300: $code in $(( (t1 - t0) / 1000000 )) ms: $(cat "$TMP/body")"
check "5: a change the primary decides after mgmt gave up: 503 'nothing was changed'" \
	cond '[ "$code" = 503 ] && grep -q "nothing was changed" "$TMP/body"'
sleep 3
check "5: ... and 3 s later it is still not live (the primary did not apply it late)" [ "$(mirror_ids)" = "[1]" ]
check "5: ... nor stored" [ -z "$(stored_ids 2>/dev/null)" ]
code=$(req DELETE /mirrors/1)
check "5: a second change (DELETE 1) as slow: 503 too, and session 1 stays" \
	[ "$code" = 503 -a "$(mirror_ids)" = "[1]" ]
# published 2 s after the decision, mgmt waits 1 s for the answer: the change is live, so mgmt
# must say so (201) and store it
restart_fresh SBX_TEST_APPLY_DELAY_MS=0,2000 SBX_TEST_APPLY_TIMEOUT_MS=1000
check "5: appliance starts with the publish-delay hooks" [ $? -eq 0 ] || exit 1
code=$(req POST /mirrors "$(session 301)")
check "5: a change the primary decided to apply but answered late: 201, not 'nothing was changed' ($code)" [ "$code" = 201 ]
check "5: ... it is live" [ "$(mirror_ids)" = "[1,301]" ]
check "5: ... and stored" [ "$(stored_ids)" = "[1,301]" ]
exit 0
