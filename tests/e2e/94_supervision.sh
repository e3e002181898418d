#!/usr/bin/env bash
# Supervision as an operator sees it (issue #24, items 3 and 11):
#  A. a worker that crash-loops into "failed" is a health problem: /health degraded, naming the
#     worker and the RX queues nobody polls (also in /status warnings), metrics an alert can fire
#     on (spanbox_health_problems, spanbox_port_rx_queues_unpolled); the parked standby does not
#     take a failed slot (it would run the same binary into the same crash) and stays parked;
#  B. a worker that is not scheduled (SIGSTOP: its polling thread's CPU time stands still, as a
#     CPU-starved one's) for 3 x hang_timeout_ms is not killed: same pid afterwards, starvations +1,
#     hangs unchanged, a worker_starved event;
#  C. stopped for longer than 5 x hang_timeout_ms it is replaced all the same (hangs +1);
#  D. a hung worker (test hook SBX_TEST_HANG_WORKER: on SIGUSR2 its loop spins without heartbeats,
#     CPU time advancing) is killed after hang_timeout_ms as before, and not counted as starved.
#
# Own instance: file prefix sbxsup, lcores 100-104, API port 18294, net_null ports, database under
# $TMP. No traffic leaves the process.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
set -o pipefail

API=http://127.0.0.1:18294/api/v1
CFG="$TMP/sup.json"
HANG_MS=500 STARVE_FACTOR=5 # primary/workers.c SBX_STARVE_FACTOR

cleanup() {
	inst_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT

get() { curl -fsS --max-time 5 "$1"; }
now_ms() { echo $(( ${EPOCHREALTIME/./} / 1000 )); }
# replaced_after LABEL SIG MIN_MS: once worker 0 runs, read its pid, hangs and starvations (into
# pid, hangs, starv), send SIG to it and check that another process runs as worker 0 after MIN_MS
# or later, within + 1500 ms as this script sees it (curl + jq per look, on a loaded machine: late
# by up to a second or so; the primary's own measure is in its event, checked after)
replaced_after() {
	local label=$1 sig=$2 min=$3 t0 t replaced_ms=""
	wait_for 50 running0
	read -r pid hangs starv < <(get "$API/workers/0" | jq -r '"\(.pid) \(.hangs) \(.starvations)"')
	t0=$(now_ms)
	kill -"$sig" "$pid"
	for ((t = 0; t < 500; t++)); do
		get "$API/workers/0" | jq -e --argjson old "$pid" '.pid != $old and .pid > 0 and .state == "running"' >/dev/null &&
			{ replaced_ms=$(( $(now_ms) - t0 )); break; }
		sleep 0.02
		[ $(( $(now_ms) - t0 )) -gt $((min + 3000)) ] && break
	done
	echo "# worker 0 (pid $pid) SIG$sig: replaced after ${replaced_ms:-never} ms"
	check "$label: replaced at $min ms or later, within + 1500 ms (${replaced_ms:-never})" \
		cond "[ -n '$replaced_ms' ] && [ '$replaced_ms' -ge $min ] && [ '$replaced_ms' -le $((min + 1500)) ]"
}

cat >"$CFG" <<JSON
{
  "eal": {"file_prefix": "sbxsup", "socket_mem_mb": 256, "primary_lcore": 100, "mgmt_lcore": 101},
  "ports": [ {"name": "p0", "devargs": "net_null0"}, {"name": "p1", "devargs": "net_null1"} ],
  "workers": {"count": 2, "lcores": [102, 103], "standby": 1, "standby_lcores": [104],
              "crash_limit": 3, "crash_window_s": 30, "hang_timeout_ms": $HANG_MS},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mgmt": {"port": 18294, "database": "$TMP/sup.db"}
}
JSON
# worker 1 aborts right after attaching, every time (so does a standby given its role); worker 0
# spins without heartbeats once it gets SIGUSR2
sbx_start_primary "$BUILD/primary/spanbox-primary" "$CFG" "$TMP/sup.ready" "$TMP/sup-primary.log" \
	SBX_TEST_CRASH_WORKER=1 SBX_TEST_HANG_WORKER=0
INST_PRIMARY=$SBX_PID
INST_PIDS+=("$INST_PRIMARY")
sbx_wait_ready "$INST_PRIMARY" "$TMP/sup.ready" 300
check "primary ready (worker 1 crash-loops: SBX_TEST_CRASH_WORKER=1)" [ -f "$TMP/sup.ready" ] ||
	{ tail -20 "$TMP/sup-primary.log" | sed 's/^/# /'; exit 1; }
inst_start_mgmt sup "$CFG" "$API"
check "mgmt up on port 18294" [ $? -eq 0 ] || exit 1

# ---------------------------------------------------------------------------------------------
# A. a failed worker
failed() { get "$API/workers/1" | jq -e '.state == "failed" and .pid == 0' >/dev/null; }
check "A: worker 1 ends in state failed (crash_limit 3, within 15 s)" wait_for 150 failed
get "$API/workers/1" >"$TMP/w1.json"
jq -c '{id, state, crashes, restarts, queues}' "$TMP/w1.json" | sed 's/^/# worker 1: /'
check "A: worker 1 has RX queues (the ones nobody polls now)" jq -e '(.queues | length) > 0' "$TMP/w1.json"
get "$API/health" >"$TMP/health.json"
jq -c . "$TMP/health.json" | sed 's/^/# health: /'
check "A: /health status degraded" jq -e '.status == "degraded"' "$TMP/health.json"
# the problem names the worker, says failed, and lists each of its queues as PORT/QUEUE
check "A: /health has a problem of kind worker for worker 1 (failed), with its queues, each named in the message" \
	jq -e --slurpfile w "$TMP/w1.json" '[.problems[] | select(.kind == "worker" and .worker == 1)] as $p
		| ($p | length) == 1 and ($p[0].message | test("worker 1 .*failed"))
		and ($p[0].queues == [$w[0].queues[] | {port, queue}])
		and all($w[0].queues[]; . as $q | $p[0].message | contains("\($q.port)/\($q.queue)"))' "$TMP/health.json"
check "A: ... and says that the parked standby does not take it, and how to revive it" \
	jq -e '[.problems[] | select(.worker == 1)][0].message | test("standby") and test("POST /api/v1/workers/1/restart")' \
	"$TMP/health.json"
check "A: /status warnings carry the same problem" \
	bash -c "curl -fsS $API/status | jq -e 'any(.warnings[]; .kind == \"worker\" and .worker == 1 and (.message | test(\"failed\")))' >/dev/null"
get "http://127.0.0.1:18294/metrics" >"$TMP/metrics.txt"
grep -E '^spanbox_(health_problems|port_rx_queues_unpolled)' "$TMP/metrics.txt" | sed 's/^/# /'
n0=$(jq '[.queues[] | select(.port == "p0")] | length' "$TMP/w1.json")
n1=$(jq '[.queues[] | select(.port == "p1")] | length' "$TMP/w1.json")
check "A: /metrics spanbox_health_problems{kind=\"worker\"} 1" grep -qx 'spanbox_health_problems{kind="worker"} 1' "$TMP/metrics.txt"
check "A: /metrics spanbox_port_rx_queues_unpolled: p0 $n0, p1 $n1 (worker 1's queues)" \
	cond "grep -qx 'spanbox_port_rx_queues_unpolled{port=\"p0\"} $n0' '$TMP/metrics.txt' &&
	      grep -qx 'spanbox_port_rx_queues_unpolled{port=\"p1\"} $n1' '$TMP/metrics.txt'"
# the decision: a failed slot is not given to a standby (it would crash the same way)
parked() { get "$API/standbys" | jq -e 'any(.[]; .state == "parked" and .pid > 0)' >/dev/null; }
wait_for 50 parked
r1=$(jq '.restarts' "$TMP/w1.json")
sleep 1.5
check "A: 1.5 s later the standby is parked, worker 1 still failed with restarts $r1 (a failed slot is not taken over)" \
	cond "parked && get '$API/workers/1' | jq -e '.state == \"failed\" and .restarts == $r1' >/dev/null"

# ---------------------------------------------------------------------------------------------
# B. worker 0 not scheduled for 3 x hang_timeout_ms: starved, not hung
w0() { get "$API/workers/0"; }
running0() { w0 | jq -e '.state == "running" and .pid > 0 and .heartbeat_age_ms < 100' >/dev/null; }
wait_for 50 running0
read -r pid hangs starv < <(w0 | jq -r '"\(.pid) \(.hangs) \(.starvations // 0)"')
kill -STOP "$pid"
sleep $(awk -v m=$HANG_MS 'BEGIN { print 3 * m / 1000 }')
starved_now=$(w0 | jq -c '{pid, state, starved, starvations, hangs, heartbeat_age_ms}')
kill -CONT "$pid"
echo "# worker 0 (pid $pid) stopped for $((3 * HANG_MS)) ms; while stopped: $starved_now"
sleep 0.3
w0 >"$TMP/w0.json"
jq -c '{pid, state, starved, starvations, hangs}' "$TMP/w0.json" | sed 's/^/# after SIGCONT: /'
check "B: while not scheduled for 3 x hang_timeout_ms worker 0 was shown starved" \
	jq -e --argjson p "$pid" '.pid == $p and .starved == true' <<<"$starved_now"
check "B: worker 0 not killed: same pid $pid, running, hangs still $hangs" \
	jq -e --argjson p "$pid" --argjson h "$hangs" '.pid == $p and .state == "running" and .hangs == $h' "$TMP/w0.json"
check "B: starvations of worker 0 went $starv -> $((starv + 1)), starved false again" \
	jq -e --argjson s "$starv" '.starvations == $s + 1 and .starved == false' "$TMP/w0.json"
sleep 0.2 # events are imported every 100 ms
get "$API/events?limit=50" >"$TMP/events.json"
check "B: a worker_starved event for pid $pid (CPU time not advancing), then worker_resumed" \
	jq -e --argjson p "$pid" 'any(.[]; .kind == "worker_starved" and .worker == 0 and .pid == $p)
		and any(.[]; .kind == "worker_resumed" and .worker == 0 and .pid == $p)' "$TMP/events.json"
get "http://127.0.0.1:18294/metrics" >"$TMP/metrics2.txt"
check "B: /metrics spanbox_worker_starvations_total{worker=\"0\"} $((starv + 1))" \
	grep -qx "spanbox_worker_starvations_total{worker=\"0\"} $((starv + 1))" "$TMP/metrics2.txt"

# ---------------------------------------------------------------------------------------------
# C. stopped for good: replaced after STARVE_FACTOR x hang_timeout_ms
LIMIT=$((STARVE_FACTOR * HANG_MS))
replaced_after "C: stopped for good (SIGSTOP): $STARVE_FACTOR x hang_timeout_ms" STOP $LIMIT
check "C: hangs +1 and starvations +1 for the slot" \
	bash -c "curl -fsS $API/workers/0 | jq -e '.hangs == $((hangs + 1)) and .starvations == $((starv + 1))' >/dev/null"
check "C: the stopped process was killed and reaped" wait_for 30 bash -c "[ ! -e /proc/$pid ]"
sleep 0.2
# as the primary measured it when it killed (its event: "not scheduled for N ms")
ms=$(get "$API/events?limit=50" | jq -r --argjson p "$pid" \
	'[.[] | select(.kind == "worker_hang" and .pid == $p) | .detail | capture("not scheduled for (?<ms>[0-9]+) ms").ms][0] // empty')
check "C: a worker_hang event for pid $pid: not scheduled for $LIMIT..$((LIMIT + 200)) ms (${ms:-none})" \
	cond "[ -n '$ms' ] && [ '$ms' -ge $LIMIT ] && [ '$ms' -le $((LIMIT + 200)) ]"

# ---------------------------------------------------------------------------------------------
# D. hung: the loop spins without heartbeats (its CPU time advances): killed after hang_timeout_ms
replaced_after "D: hung (SIGUSR2 to the hook): hang_timeout_ms" USR2 $HANG_MS
check "D: hangs +1, starvations unchanged ($starv)" \
	bash -c "curl -fsS $API/workers/0 | jq -e '.hangs == $((hangs + 1)) and .starvations == $starv' >/dev/null"
sleep 0.2
# the primary's own measure: "no heartbeat for N ms, its thread ran C ms of CPU ...: hung"; N at most
# 1.5 x hang_timeout_ms (a primary that was not scheduled itself looks half a timeout longer)
read -r ms cpu < <(get "$API/events?limit=50" | jq -r --argjson p "$pid" '[.[] | select(.kind == "worker_hang" and .pid == $p)
	| .detail | capture("no heartbeat for (?<ms>[0-9]+) ms, its thread ran (?<cpu>[0-9]+) ms of CPU.*hung") | "\(.ms) \(.cpu)"][0] // empty')
check "D: a worker_hang event for pid $pid: hung, CPU time advancing (${cpu:-?} ms), no heartbeat for $HANG_MS..$((HANG_MS * 3 / 2 + 100)) ms (${ms:-none})" \
	cond "[ -n '$ms' ] && [ '$cpu' -ge 20 ] && [ '$ms' -ge $HANG_MS ] && [ '$ms' -le $((HANG_MS * 3 / 2 + 100)) ]"
get "$API/events?limit=50" | jq -c '.[] | select(.worker == 0) | [.kind, .pid, .detail]' | sed 's/^/# event: /'

inst_cleanup
check "no process of prefix sbxsup left" bash -c "[ -z \"\$(ps -eo args= | grep -- '--file-prefix=sbxsup ' | grep -v grep)\" ]"
