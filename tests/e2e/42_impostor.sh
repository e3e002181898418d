#!/usr/bin/env bash
# A second process on a worker's id or lcore (issue 10, section 2), and what /health says when
# something is wrong at run time; cycles per packet over a window (section 7).
#
# Started by hand next to a live appliance with ping traffic between two namespaces:
#  - a worker on a running worker's lcore id (mempool caches are per lcore id: two processes on one
#    id corrupt them and drain the pool): refused before its EAL starts, naming the lcore and the
#    holder's pid; the appliance keeps forwarding, its pool stays as it was;
#  - a worker on a free lcore with the id of a running worker: refused (no nonce, a wrong nonce, or
#    the real worker's nonce from /proc but not the pid the primary started for the slot);
#  - a worker on mgmt's lcore, a second mgmt and a second primary on the same prefix: refused, and
#    the running ones are untouched (the second primary leaves the attachable marker alone);
#  - the lcore lock goes to the successor of a restarted or killed worker;
#  - a SIGSTOPped worker (hang_timeout_ms 20000: the primary does not kill it yet) makes /health
#    "degraded" with a problem naming it, and /status warnings; SIGCONT clears it;
#  - a worker that keeps nearly every mbuf of the pool (test hook SBX_TEST_LEAK_MBUFS) makes /health
#    "degraded" with a pool problem; its graceful restart returns them and the problem clears;
#  - cycles_per_packet: null at ping rates (fewer than 1000 frames in its window), a number with
#    its window and frames under iperf3 load; the cumulative value stays in cycles_per_packet_total.
#
# Private resources: file prefix t10a-imp, lcores 110-114, API ports 18471 (18472 for the refused
# second mgmt), namespaces t10a-A/t10a-B, taps t10a-p0/t10a-p1/t10a-m, databases under $TMP.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"

PFX=t10a-imp PORT=18471 PORT2=18472 NSA=t10a-A NSB=t10a-B
PL=110 ML=111 WL0=112 WL1=113 FREE=114
API=http://127.0.0.1:$PORT/api/v1
CFG="$TMP/imp.json"
RUNDIR=/var/run/dpdk/$PFX
TOKEN="t10a-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
AUTH="Authorization: Bearer $TOKEN"
WORKER="$BUILD/secondary/spanbox-worker"

cleanup() {
	stop_pidfile iperf_c
	stop_pidfile iperf_s
	demo_stop
	rm -rf "$TMP"
}
trap cleanup EXIT

get() { curl -fsS --max-time 5 "$API$1"; }
jqt() { jq -e "$@" >/dev/null; } # jqt FILTER [FILE]: the filter holds
cond() { eval "$1"; }
up() { curl -fsS --max-time 2 "$API/health" 2>/dev/null | grep -q '"appliance":"up"'; }
wpid() { get "/workers/$1" | jq -e '.pid'; }
# the pool audit's "unexplained", median of 3 reads 50 ms apart (they race with live traffic)
unexplained() {
	local v=() i
	for i in 1 2 3; do v+=("$(get /pools/sbx_pool_s0 | jq -e '.audit.unexplained')") || return 1; sleep 0.05; done
	printf '%s\n' "${v[@]}" | sort -n | sed -n 2p
}
# impostor NAME LCORE WORKER-ARGS...: spanbox-worker started by hand on prefix $PFX (15 s at most);
# its exit status in $TMP/NAME.rc, its output in $TMP/NAME.out
impostor() {
	local name=$1 lcore=$2; shift 2
	timeout 15 "$WORKER" --file-prefix=$PFX "--lcores=$lcore@(0-1)" --main-lcore=$lcore --proc-type=secondary \
		--no-pci --single-file-segments --log-level=lib.eal:notice -- "$@" </dev/null >"$TMP/$name.out" 2>&1
	echo $? >"$TMP/$name.rc"
	sed 's/^/#   '"$name"': /' "$TMP/$name.out" | tail -n 5
}
refused() { # refused NAME: exited on its own (not the timeout, not a signal) with a non-zero status
	local rc; rc=$(cat "$TMP/$1.rc")
	[ "$rc" -ne 0 ] && [ "$rc" -lt 124 ]
}

# no hot standby (docs/CONFIG.md workers.standby): it would hold lcore $FREE, which the impostors use
jq --arg db "$TMP/imp.db" --arg tok "$TOKEN" --arg pfx "$PFX" --argjson port "$PORT" \
	--argjson pl $PL --argjson ml $ML --argjson w0 $WL0 --argjson w1 $WL1 \
	'.eal.file_prefix = $pfx | .eal.socket_mem_mb = 256 | .eal.primary_lcore = $pl | .eal.mgmt_lcore = $ml
	| .workers.lcores = [$w0, $w1] | .workers.hang_timeout_ms = 20000
	| .workers.standby = 0
	| .mgmt.port = $port | .mgmt.database = $db | .mgmt.token = $tok
	| .ports[0].devargs = "net_tap0,iface=t10a-p0" | .ports[0].netns = "t10a-A"
	| .ports[1].devargs = "net_tap1,iface=t10a-p1" | .ports[1].netns = "t10a-B"
	| .ports[2].devargs = "net_tap2,iface=t10a-m"' \
	"$ROOT/config/default.json" >"$CFG"

forwards() { ip netns exec "$NSA" ping -c 5 -i 0.1 -W 2 -q 198.18.0.2 >"$TMP/fwd.txt" 2>&1 && grep -q ' 0% packet loss' "$TMP/fwd.txt"; }

# ---------------------------------------------------------------------------------------------
# 1. the appliance, with ping traffic
demo_start_primary
check "1: primary of prefix $PFX ready, taps in $NSA and $NSB" test -f "$TMP/ready" || exit 1
demo_start_mgmt
check "1: mgmt answers on port $PORT, appliance up" up || { tail -n 20 "$TMP/mgmt.log"; exit 1; }
check "1: ping from $NSA crosses the appliance to $NSB" forwards
PRIMARY=$(cat "$TMP/primary.pid") MGMT=$(cat "$TMP/mgmt.pid")
W0=$(wpid 0) W1=$(wpid 1)
sleep 1
base_unexp=$(unexplained)
base_use=$(get /pools/sbx_pool_s0 | jq -e '.in_use')
base_avail=$(get /pools/sbx_pool_s0 | jq -e '.available')
echo "# workers 0 and 1: pids $W0 $W1 on lcores $WL0 $WL1; pool in use $base_use, available $base_avail, unexplained $base_unexp"
check "1: /health is ok and has no problems while all is well" \
	bash -c "curl -fsS $API/health | jq -e '.status == \"ok\" and .problems == []' >/dev/null"

# ---------------------------------------------------------------------------------------------
# 2. an impostor worker on a running worker's lcore, with that worker's id
impostor live $WL0 --id 0
check "2: a worker started by hand on worker 0's lcore $WL0 with --id 0 exits non-zero by itself" refused live
check "2: ... saying that lcore $WL0 is in use by worker 0's pid $W0" \
	grep -qE "lcore $WL0 of file prefix '$PFX' is in use by pid $W0\b" "$TMP/live.out"
check "2: ... before its EAL started (no EAL line in its output)" bash -c "! grep -q 'EAL:' '$TMP/live.out'"
impostor onmgmt $ML --id 1
check "2: a worker on mgmt's lcore $ML is refused too, naming mgmt's pid $MGMT" \
	cond "refused onmgmt && grep -qE 'lcore $ML of file prefix .$PFX. is in use by pid $MGMT\b' '$TMP/onmgmt.out'"

# 3. impostors on a free lcore with the id of a running worker: the nonce and pid of the slot
impostor nonone $FREE --id 0
check "3: a worker on free lcore $FREE with --id 0 and no nonce is refused, naming the nonce" \
	cond "refused nonone && grep -qi 'nonce' '$TMP/nonone.out'"
impostor wrong $FREE --id 0 --nonce 0123456789abcdef
check "3: ... with a wrong --nonce: refused, naming the nonce" \
	cond "refused wrong && grep -qi 'nonce' '$TMP/wrong.out'"
NONCE=$(tr '\0' '\n' </proc/$W0/cmdline | sed -n '/^--nonce$/{n;p}')
echo "# worker 0's nonce (from /proc/$W0/cmdline): ${NONCE:-none}"
check "3: the primary gave worker 0 a nonce on its command line (--nonce, 16 hex digits)" \
	cond "[[ '$NONCE' =~ ^[0-9a-f]{16}$ ]]"
impostor copied $FREE --id 0 --nonce "${NONCE:-x}"
check "3: ... with worker 0's own nonce but another pid: refused, naming the slot's pid $W0" \
	cond "refused copied && grep -q 'pid $W0' '$TMP/copied.out'"

check "2+3: workers 0 and 1 still run with their pids, no restart, no crash" \
	bash -c "curl -fsS $API/workers | jq -e '[.[] | [.pid, .state, .restarts, .crashes]] == [[$W0, \"running\", 0, 0], [$W1, \"running\", 0, 0]]' >/dev/null"
check "2+3: the appliance still forwards (ping, 0% loss)" forwards
u=$(unexplained)
use=$(get /pools/sbx_pool_s0 | jq -e '.in_use')
echo "# pool after the impostors: in use $use (before $base_use), unexplained $u (before $base_unexp)"
check "2+3: pool use stays normal (unexplained $u <= $base_unexp + 32, in use $use <= $base_use + 64)" \
	cond "[ -n '$u' ] && [ '$u' -le $((base_unexp + 32)) ] && [ '$use' -le $((base_use + 64)) ]"

# ---------------------------------------------------------------------------------------------
# 4. a second mgmt and a second primary on the same prefix and lcores
timeout 15 "$BUILD/mgmt/spanbox-mgmt" -c "$CFG" --port $PORT2 --db "$TMP/second.db" </dev/null >"$TMP/mgmt2.out" 2>&1
echo $? >"$TMP/mgmt2.rc"
sed 's/^/#   mgmt2: /' "$TMP/mgmt2.out" | tail -n 3
check "4: a second mgmt on prefix $PFX (other port and database) exits non-zero by itself" refused mgmt2
check "4: ... naming lcore $ML and the running mgmt's pid $MGMT" \
	grep -qE "lcore $ML of file prefix '$PFX' is in use by pid $MGMT\b" "$TMP/mgmt2.out"
check "4: ... it never listened on port $PORT2, and the first mgmt still answers" \
	cond "! curl -sS -m 2 http://127.0.0.1:$PORT2/api/v1/health >/dev/null 2>&1 && up"
timeout 30 "$BUILD/primary/spanbox-primary" -c "$CFG" </dev/null >"$TMP/primary2.out" 2>&1
echo $? >"$TMP/primary2.rc"
sed 's/^/#   primary2: /' "$TMP/primary2.out" | tail -n 3
check "4: a second primary of the same config exits non-zero by itself" refused primary2
check "4: ... saying that an appliance of prefix $PFX runs, naming its primary's pid $PRIMARY" \
	grep -qE "an appliance of file prefix '$PFX' is running \(primary pid $PRIMARY\b" "$TMP/primary2.out"
check "4: ... and leaves the running primary's attachable marker alone (it names pid $PRIMARY)" \
	cond "[ \"\$(cat $RUNDIR/spanbox_attachable 2>/dev/null)\" = '$PRIMARY' ]"

# ---------------------------------------------------------------------------------------------
# 5. cycles per packet over a window: ping rates (10 frames/s per direction) give too few frames
# (mgmt keeps a sample a second: wait until the window spans 9 s or more, at most 15 s)
full_window() { get /workers >"$TMP/cpp_ping.json" && jqt 'all(.[]; .cycles_per_packet_window_s >= 9)' "$TMP/cpp_ping.json"; }
wait_for 150 full_window
echo "# at ping rates: $(jq -c '[.[] | {id, cycles_per_packet, cycles_per_packet_window_s, cycles_per_packet_frames, cycles_per_packet_total}]' "$TMP/cpp_ping.json")"
check "5: at ping rates cycles_per_packet is null for both workers (fewer than 1000 frames in its window)" \
	jqt 'length == 2 and all(.[]; .cycles_per_packet == null and .cycles_per_packet_frames < 1000
		and .cycles_per_packet_window_s >= 9 and .cycles_per_packet_window_s <= 11)' "$TMP/cpp_ping.json"
check "5: ... and the cumulative value is still there (cycles_per_packet_total, a number for a worker that forwarded)" \
	jqt 'any(.[]; (.cycles_per_packet_total | type) == "number" and .cycles_per_packet_total > 0)' "$TMP/cpp_ping.json"
ip netns exec "$NSB" timeout 30 iperf3 -s -1 -p 5201 >"$TMP/iperf_s.txt" 2>&1 &
echo $! >"$TMP/iperf_s.pid"
sleep 0.5
ip netns exec "$NSA" timeout 30 iperf3 -u -c 198.18.0.2 -p 5201 -l 200 -b 4M -t 5 >"$TMP/iperf_c.txt" 2>&1 &
echo $! >"$TMP/iperf_c.pid"
sleep 4
get /workers >"$TMP/cpp_load.json"
echo "# under iperf3 load: $(jq -c '[.[] | {id, cycles_per_packet, cycles_per_packet_window_s, cycles_per_packet_frames}]' "$TMP/cpp_load.json")"
check "5: under load a worker shows cycles_per_packet, a number over a window of 1..11 s with >= 1000 frames" \
	jqt 'any(.[]; (.cycles_per_packet | type) == "number" and .cycles_per_packet > 0 and .cycles_per_packet_frames >= 1000
		and .cycles_per_packet_window_s >= 1 and .cycles_per_packet_window_s <= 11)' "$TMP/cpp_load.json"
wait "$(cat "$TMP/iperf_c.pid")" 2>/dev/null
stop_pidfile iperf_c
stop_pidfile iperf_s

# ---------------------------------------------------------------------------------------------
# 6. a stalled worker: SIGSTOP (the primary kills it only after hang_timeout_ms 20000)
problem() { # problem KIND REGEX: /health is degraded with such a problem, /status warnings have it
	curl -fsS --max-time 2 "$API/health" >"$TMP/h.json" 2>/dev/null && curl -fsS --max-time 2 "$API/status" >"$TMP/s.json" 2>/dev/null &&
		jqt --arg k "$1" --arg re "$2" '.status == "degraded" and any(.problems[]; .kind == $k and (.message | test($re)))' "$TMP/h.json" &&
		jqt --arg k "$1" --arg re "$2" 'any(.warnings[]; .kind == $k and (.message | test($re)))' "$TMP/s.json"
}
healthy() { curl -fsS --max-time 2 "$API/health" 2>/dev/null | jq -e '.status == "ok" and .problems == []' >/dev/null; }
kill -STOP "$W1"
check "6: worker 1 SIGSTOPped: within 3 s /health is degraded and names worker 1 (kind worker), so do /status warnings" \
	wait_for 30 problem worker "worker 1\\b"
jq -c '.problems' "$TMP/h.json" | sed 's/^/#   health problems: /'
check "6: ... while its state is still running with the same pid (the primary has not killed it)" \
	bash -c "curl -fsS $API/workers/1 | jq -e '.state == \"running\" and .pid == $W1 and .hangs == 0' >/dev/null"
kill -CONT "$W1"
check "6: SIGCONT: /health is ok again within 3 s" wait_for 30 healthy

# ---------------------------------------------------------------------------------------------
# 7. the lcore lock goes to the successor: graceful restart of worker 0, kill -9 of worker 1
code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' -H "$AUTH" -X POST "$API/workers/0/restart")
restarted() { get "/workers/$1" | jq -e --argjson o "$2" '.state == "running" and .pid > 0 and .pid != $o' >/dev/null; }
check "7: worker 0 restarted through the API (202) runs again with a new pid on lcore $WL0 within 5 s" \
	cond "[ '$code' = 202 ] && wait_for 50 restarted 0 $W0"
kill -9 "$W1"
check "7: worker 1 killed with -9 runs again with a new pid within 5 s" wait_for 50 restarted 1 $W1
check "7: no worker was refused its lcore (primary log)" bash -c "! grep -q 'is in use by pid' '$TMP/primary.log'"
check "7: the appliance forwards after both restarts" wait_for 30 forwards

# ---------------------------------------------------------------------------------------------
# 8. a pool drained without explanation: the first worker 0 keeps all but 100 mbufs of the pool
# (mgmt stays: it sees the primary go, re-executes itself and re-attaches to the next one)
LEAK=$((base_avail - 100))
stop_pidfile primary
down() { curl -fsS --max-time 2 "$API/health" 2>/dev/null | jq -e '.appliance == "down"' >/dev/null; }
check "8: primary stopped: mgmt (pid $MGMT) says the appliance is down" wait_for 50 down
demo_start_primary SBX_TEST_LEAK_MBUFS="0:$LEAK"
check "8: primary started again with worker 0 keeping $LEAK mbufs (SBX_TEST_LEAK_MBUFS)" test -f "$TMP/ready"
check "8: the same mgmt re-attached (appliance up within 10 s)" cond "wait_for 100 up && kill -0 $MGMT"
timeout 15 "$BUILD/mgmt/spanbox-mgmt" -c "$CFG" --port $PORT2 --db "$TMP/second.db" </dev/null >"$TMP/mgmt3.out" 2>&1
echo $? >"$TMP/mgmt3.rc"
check "8: mgmt kept its lcore across its re-executions: a second mgmt is still refused, naming pid $MGMT" \
	cond "refused mgmt3 && grep -qE 'lcore $ML of file prefix .$PFX. is in use by pid $MGMT\b' '$TMP/mgmt3.out'"
check "8: within 8 s /health is degraded with a pool problem naming sbx_pool_s0, and /status warnings have it" \
	wait_for 80 problem pool 'sbx_pool_s0.*unexplained'
jq -c '.problems' "$TMP/h.json" | sed 's/^/#   health problems: /'
W0=$(wpid 0)
code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' -H "$AUTH" -X POST "$API/workers/0/restart")
check "8: a graceful restart of worker 0 (202) returns them: /health ok again within 8 s" \
	cond "[ '$code' = 202 ] && wait_for 50 restarted 0 $W0 && wait_for 80 healthy"
echo "# pool now: $(get /pools/sbx_pool_s0 | jq -c '{in_use, available, unexplained: .audit.unexplained}')"
exit 0
