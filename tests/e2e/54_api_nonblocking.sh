#!/usr/bin/env bash
# The API thread never blocks (issue #11, section 5): while the primary holds a change for 2.5 s
# (test hook SBX_TEST_APPLY_DELAY_MS=2500,0: before its decision to publish), 100 GET
# /api/v1/status on fresh connections all answer within 50 ms each, and the change itself still
# answers true: 201 and live when mgmt waits long enough, 503 "nothing was changed" (and not
# live) when it waits only 1 s (SBX_TEST_APPLY_TIMEOUT_MS=1000), as 58_mirror_counter_sets expects. A
# worker restart and a link change sent while a change is held answer at once (the primary's EAL
# IPC thread no longer waits for the apply, and mgmt runs them on a lane of their own), and a
# second change waits for the first (one change at a time: both live afterwards). The control
# messages are typed (issue #11, section 1, include/spanbox/ipc.h): build/tests/ipc_send sends
# requests of another size (the old "restart-worker 0" string), version or verb, and targets that
# do not exist, straight to the primary: each is refused with a named error and does nothing.
#
# Own instance: file prefix sbxnb, lcores 125-127 (140-147 are past RTE_MAX_LCORE, 128), API port 18700, database under $TMP, net_null
# ports without RX (no traffic).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"

PORT=18700
API=http://127.0.0.1:$PORT/api/v1
CFG="$TMP/nb.json"
trap 'inst_cleanup; rm -rf "$TMP"' EXIT

cat >"$CFG" <<JSON
{ "eal": {"file_prefix": "sbxnb", "socket_mem_mb": 128, "primary_lcore": 125, "mgmt_lcore": 126},
  "ports": [ {"name": "p0", "devargs": "net_null0,no-rx=1"}, {"name": "p1", "devargs": "net_null1,no-rx=1"},
             {"name": "m", "devargs": "net_null2,no-rx=1"} ],
  "workers": {"count": 1, "lcores": [127], "busy_poll": false},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mgmt": {"port": $PORT, "database": "$TMP/nb.db"} }
JSON
session() { echo "{\"id\": $1, \"sources\": [{\"port\": \"p0\"}], \"destination\": {\"port\": \"m\"}}"; }
mirror_ids() { curl -sS --max-time 5 "$API/mirrors" | jq -c '[.[].id] | sort'; }
probe() { python3 "$ROOT/tests/lib/nonblock_probe.py" --port "$PORT" --token "$TOKEN" "$@"; }
# gets_ok JSON LABEL: the checks on the timed GETs of one probe run
gets_ok() {
	local j=$1 l=$2 max n slow
	n=$(jq '.gets | length' <<<"$j")
	max=$(jq '[.gets[].ms] | max' <<<"$j")
	slow=$(jq '[.gets[] | select(.status != 200 or .ms >= 50)] | length' <<<"$j")
	echo "# $l: $n GETs, slowest $max ms, $slow not 200 within 50 ms"
	check "$l: 100 GET /api/v1/status answered 200 within 50 ms each (slowest $max ms)" \
		cond "[ '$n' = 100 ] && [ '$slow' = 0 ]"
	# the GETs ran while the change was held: they all ended before it answered
	check "$l: ... all while the change was held (GETs done at $(jq .gets_end_ms <<<"$j") ms, change answered at $(jq '.slow[0].end_ms' <<<"$j") ms)" \
		jq -e '.gets_end_ms < .slow[0].end_ms' <<<"$j"
}

inst_start_primary nb "$CFG" SBX_TEST_APPLY_DELAY_MS=2500,0
check "primary (prefix sbxnb, apply held 2.5 s before its decision) ready" [ $? -eq 0 ] ||
	{ tail -n 20 "$TMP/nb-primary.log"; exit 1; }
inst_start_mgmt nb "$CFG" "$API"
check "mgmt up on port $PORT" [ $? -eq 0 ] || { cat "$TMP/nb-mgmt.log"; exit 1; }
TOKEN=$(inst_token "$CFG") # generated at mgmt's first start

# --- 1. a held change: GETs go on, the change answers 201 ----------------------------------
j=$(probe --slow POST /api/v1/mirrors "$(session 5)")
echo "# 1: $(jq -c '.slow' <<<"$j")"
gets_ok "$j" "1"
check "1: the held change answers 201 after the hold ($(jq '.slow[0] | [.status, .ms]' -c <<<"$j"))" \
	jq -e '.slow[0].status == 201 and .slow[0].ms >= 2000' <<<"$j"
check "1: ... and it is live" [ "$(mirror_ids)" = "[5]" ]

# --- 2. a restart and a link change while a change is held; a second change waits its turn -----
j=$(probe --gets 0 --delay-ms 0 --slow POST /api/v1/mirrors "$(session 6)" \
	--slow POST /api/v1/mirrors "$(session 7)" \
	--slow POST /api/v1/workers/0/restart - --slow PUT /api/v1/ports/p0/link '{"up": true}')
echo "# 2: $(jq -c '.slow' <<<"$j")"
check "2: a worker restart sent during the held change: 202 within 500 ms ($(jq -c '.slow[2] | [.status, .ms]' <<<"$j"))" \
	jq -e '.slow[2].status == 202 and .slow[2].ms < 500' <<<"$j"
check "2: a link change sent during the held change: answered (200 or 409) within 1000 ms ($(jq -c '.slow[3] | [.status, .ms]' <<<"$j"))" \
	jq -e '(.slow[3].status == 200 or .slow[3].status == 409) and .slow[3].ms < 1000' <<<"$j"
check "2: the first change answers 201 ($(jq -c '.slow[0] | [.status, .ms]' <<<"$j"))" jq -e '.slow[0].status == 201' <<<"$j"
check "2: the second change waited for the first, then answered 201 ($(jq -c '.slow[1] | [.status, .end_ms]' <<<"$j"))" \
	jq -e '.slow[1].status == 201 and .slow[1].end_ms >= .slow[0].end_ms + 2000' <<<"$j"
check "2: ... both are live" [ "$(mirror_ids)" = "[5,6,7]" ]
# the restart's audit event, queued while the change held the database's write lock, is written
check "2: the restart's audit event (worker_restart_request) is recorded after the changes" bash -c \
	"for i in \$(seq 30); do curl -sS --max-time 5 '$API/events?limit=50' | jq -e 'any(.[]; .kind == \"worker_restart_request\")' >/dev/null && exit 0; sleep 0.1; done; exit 1"

# --- 3. mgmt waits only 1 s: 503 "nothing was changed", true, and GETs still go on -----------
inst_stop_pid "$INST_MGMT"
SBX_TEST_APPLY_TIMEOUT_MS=1000 inst_start_mgmt nb2 "$CFG" "$API"
check "3: mgmt restarted with a 1 s apply timeout" [ $? -eq 0 ] || { cat "$TMP/nb2-mgmt.log"; exit 1; }
j=$(probe --gets 100 --delay-ms 100 --slow POST /api/v1/mirrors "$(session 8)")
echo "# 3: $(jq -c '.slow' <<<"$j")"
check "3: the change mgmt gave up on: 503 'nothing was changed' ($(jq -c '.slow[0] | [.status, .ms]' <<<"$j"))" \
	jq -e '.slow[0].status == 503 and (.slow[0].body | test("nothing was changed"))' <<<"$j"
n=$(jq '.gets | length' <<<"$j")
slow=$(jq '[.gets[] | select(.status != 200 or .ms >= 50)] | length' <<<"$j")
check "3: 100 GETs meanwhile, each 200 within 50 ms (slowest $(jq '[.gets[].ms] | max' <<<"$j") ms)" \
	cond "[ '$n' = 100 ] && [ '$slow' = 0 ]"
sleep 2 # the primary's held decision comes, and finds the change abandoned
check "3: ... and it is not live, now that the primary is done with it" [ "$(mirror_ids)" = "[5,6,7]" ]

# --- 4. the control messages are typed (ipc.h): a request of another size, version or verb is
# refused with a named error and does nothing; the old string request is not misread ----------
ipc() { timeout 20 "$BUILD/tests/ipc_send" sbxnb 124 "$@" 2>>"$TMP/ipc.err"; }
restarts0() { curl -sS --max-time 5 "$API/workers/0" | jq '.restarts'; }
r0=$(restarts0)
j=$(ipc raw sbx_ctl "restart-worker 0"); echo "# 4: old string request: $j"
check "4: the old string request 'restart-worker 0': answered 'bad message' naming its size" \
	jq -e '.len > 0 and .result == 2 and (.error | test("bytes"))' <<<"$j"
j=$(ipc ctl 99 1 0 0); echo "# 4: version 99: $j"
check "4: a request of version 99: 'bad message' naming the version, its request id echoed" \
	jq -e '.result == 2 and (.error | test("version 99")) and .request_id == 4242' <<<"$j"
j=$(ipc ctl 1 77 0 0); echo "# 4: verb 77: $j"
check "4: verb 77: 'bad message' naming the verb" jq -e '.result == 2 and (.error | test("verb 77"))' <<<"$j"
j=$(ipc ctl 1 1 9 0); echo "# 4: restart worker 9: $j"
check "4: restart of worker 9 (one worker): 'no such worker'" jq -e '.result == 3' <<<"$j"
j=$(ipc ctl 1 2 7 1); echo "# 4: link of port 7: $j"
check "4: link of port 7 (three ports): 'no such port'" jq -e '.result == 4' <<<"$j"
j=$(ipc ctl 1 2 0 5); echo "# 4: link up=5: $j"
check "4: link with up = 5: 'bad message'" jq -e '.result == 2' <<<"$j"
j=$(ipc ctl 1 2 0 1); echo "# 4: link of p0 up (net_null): $j"
check "4: link of p0 up, answered by the main loop: 'failed' (net_null cannot set its link)" \
	jq -e '.result == 6 and (.error | length) > 0' <<<"$j"
sleep 1
check "4: none of them restarted worker 0 (restarts $r0 -> $(restarts0))" [ "$(restarts0)" = "$r0" ]
exit 0
