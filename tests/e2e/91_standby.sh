#!/usr/bin/env bash
# Hot-standby workers (issue 16): a killed, hung or restarted worker is taken over by a standby
# that had already started; a new standby is started each time.
#  5. a standby lcore id that collides with another process's is refused at start, the field named;
#  1. a standby started by hand (wrong nonce) is refused; KILLS (20) kill -9 of worker 0 under UDP
#     traffic through taps: every one taken over by the
#     standby parked before it (its pid becomes worker 0's), a new standby parks each time, the
#     other worker never stalls, the pool audit's unexplained count stays within one burst;
#     a parked standby costs almost no CPU;
#  2. worker 1 hangs (hook SBX_TEST_HANG_WORKER, SIGUSR2: its loop spins without heartbeats):
#     detected within hang_timeout_ms, taken over by the standby;
#  3. RESTARTS (20) graceful restarts (POST /workers/0/restart) during a paced pcap replay: each a
#     hand-over to the standby, and the output equals the input frame for frame.
#
# Own instances: file prefixes sbxsb / sbxsg, lcores 3-8, API ports 18300 / 18301, taps and
# namespaces sbxsb-*, databases under $TMP. Traffic only inside the namespaces made here.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
set -o pipefail # a check that reads the API through a pipe fails when the API does not answer
source "$ROOT/tests/lib/traffic.sh"

KILLS=${KILLS:-20} RESTARTS=${RESTARTS:-20}
API1=http://127.0.0.1:18300/api/v1 API2=http://127.0.0.1:18301/api/v1
CFG1="$TMP/live.json" CFG2="$TMP/pcap.json"
IN="$CAPTURES/bulk_zeek_ftp-8317-small.pcap"

cleanup() {
	local p
	traffic_stop
	inst_cleanup
	sbx_net_down "$TMP/netns.owned"
	rm -rf "$TMP"
}
trap cleanup EXIT

get() { curl -fsS --max-time 5 "$1"; }
jqt() { [ -s "${@: -1}" ] && jq -e "$@" >/dev/null; } # jqt FILTER... FILE: an empty FILE (API down) fails
wrx() { get "$1/workers/$2" | jq -e '[.ports[].rx_packets] | add'; }
unexplained() {
	local v=() i
	for i in 1 2 3; do v+=("$(get "$1/pools/sbx_pool_s0" | jq -e '.audit.unexplained')") || return 1; sleep 0.05; done
	printf '%s\n' "${v[@]}" | sort -n | sed -n 2p
}
now_ms() { echo $(( ${EPOCHREALTIME/./} / 1000 )); }
# parked_pid API [NOT]: the pid of a parked standby (not NOT), or fail
parked_pid() {
	get "$1/standbys" | jq -e --argjson not "${2:-0}" \
		'[.[] | select(.state == "parked" and .pid > 0 and .pid != $not and .heartbeat_age_ms != null)][0].pid'
}
# cpu_ns PID: ns of CPU every thread of PID has run (schedstat's first field, exact to the ns).
# /proc/PID/stat's utime + stime are tick samples: a process that wakes 20-100 times a second for
# tens of microseconds is charged a whole 10 ms tick whenever a tick lands while it runs, and on a
# loaded machine one CI run read 11 ticks (2.2 %) for a standby that runs 0.3 %.
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d", s }'; }

# ---------------------------------------------------------------------------------------------
# 5. a standby lcore id that another process has is refused at start, naming the field
jq -n '{eal: {file_prefix: "sbxsx", socket_mem_mb: 64, primary_lcore: 3, mgmt_lcore: 4},
	ports: [{name: "p0", devargs: "net_null0"}, {name: "p1", devargs: "net_null1"}],
	workers: {count: 2, lcores: [5, 6], standby: 1, standby_lcores: [6]},
	mgmt: {port: 18302, database: "'"$TMP"'/x.db"}}' >"$TMP/collide.json"
for v in 6 3 4; do
	jq --argjson v "$v" '.workers.standby_lcores = [$v]' "$TMP/collide.json" >"$TMP/c$v.json"
	out=$(timeout 20 "$BUILD/primary/spanbox-primary" -c "$TMP/c$v.json" 2>&1)
	rc=$?
	who=$([ "$v" = 6 ] && echo "used by worker 1" || { [ "$v" = 3 ] && echo "eal.primary_lcore" || echo "eal.mgmt_lcore"; })
	echo "# standby_lcores [$v]: rc $rc: $(head -c 200 <<<"$out")"
	check "5: standby_lcores [$v] (already $who) refused at start: exit 2, 'workers.standby_lcores[0]: lcore $v is already $who'" \
		cond "[ $rc -eq 2 ] && grep -qF 'workers.standby_lcores[0]: lcore $v is already $who' <<<\"\$out\""
done
check "5: the refused starts left no process of prefix sbxsx" \
	cond "[ -z \"\$(ps -eo args= | grep -- '--file-prefix=sbxsx' | grep -v grep)\" ]"

# ---------------------------------------------------------------------------------------------
# 1. kill -9 worker 0, KILLS times, under iperf3 UDP traffic from sbxsb-a to sbxsb-b
jq --arg db "$TMP/live.db" '.eal.file_prefix = "sbxsb" | .eal.primary_lcore = 3 | .eal.mgmt_lcore = 4
	| .mgmt.port = 18300 | .mgmt.database = $db
	| .ports[0].devargs = "net_tap0,iface=sbxsb-p0" | .ports[0].netns = "sbxsb-a"
	| .ports[1].devargs = "net_tap1,iface=sbxsb-p1" | .ports[1].netns = "sbxsb-b"
	| .ports[2].devargs = "net_tap2,iface=sbxsb-m"
	| .workers.lcores = [5, 6] | .workers.standby = 1 | .workers.standby_lcores = [7]
	| .workers.crash_limit = 100 | .workers.crash_window_s = 1 | .workers.hang_timeout_ms = 500' \
	"$ROOT/config/default.json" >"$CFG1"
inst_start_primary live "$CFG1" SBX_TEST_HANG_WORKER=1
check "1: primary of the live config (taps, standby 1 on lcore 7) ready" [ $? -eq 0 ]
sbx_net_up "$CFG1" "$TMP/netns.owned"
check "1: taps moved into sbxsb-a / sbxsb-b" [ $? -eq 0 ]
inst_start_mgmt live "$CFG1" "$API1"
check "1: mgmt up on port 18300" [ $? -eq 0 ]
check "1: a standby parks (within 10 s)" wait_for 100 parked_pid "$API1"
get "$API1/standbys" | jq -c . | sed 's/^/# standbys: /'
sb=$(parked_pid "$API1")
if [ -n "$sb" ]; then
	t0=$(cpu_ns "$sb"); sleep 5; t1=$(cpu_ns "$sb")
	ms=$(( (t1 - t0) / 1000000 ))
	echo "# parked standby pid $sb: $((t1 - t0)) ns of CPU (schedstat, every thread) in 5 s"
	check "1: a parked standby uses under 1 % of one CPU (at most 50 ms of CPU in 5 s: $ms ms)" \
		[ "$t1" -gt 0 -a $((t1 - t0)) -le 50000000 ]
else
	check "1: a parked standby uses under 1 % of one CPU (no standby parked)" false
fi
# a standby started by hand (lcore 8 is free) with a wrong nonce is refused before it parks
timeout 15 "$BUILD/secondary/spanbox-worker" --file-prefix=sbxsb "--lcores=8@(0-1)" --main-lcore=8 --proc-type=secondary \
	--no-pci --single-file-segments --log-level=lib.eal:notice -- --standby 0 --nonce 1234 </dev/null >"$TMP/imp.out" 2>&1
rc=$?
sed 's/^/#   impostor: /' "$TMP/imp.out" | tail -n 3
check "1: a standby started by hand with a wrong --nonce is refused (exit 1, naming the nonce), the real one still parked" \
	cond "[ $rc -eq 1 ] && grep -q 'is not the nonce the primary' '$TMP/imp.out' && [ \"\$(parked_pid '$API1')\" = '$sb' ]"
check "1: /status lists the standby (slot 0, lcore 7, parked, the worker binary)" \
	bash -o pipefail -c "curl -fsS $API1/status | jq -e '.standbys | length == 1 and .[0].slot == 0 and .[0].lcore == 7 and .[0].state == \"parked\" and (.[0].binary | endswith(\"spanbox-worker\"))' >/dev/null"
# (read whole first: "curl | grep -q" under pipefail fails when grep exits before curl wrote a
# /metrics larger than the pipe's buffer, curl's error 23)
check "1: /metrics has spanbox_standby_info and spanbox_worker_takeovers_total" \
	bash -c "curl -fsS ${API1%/api/v1}/metrics >'$TMP/metrics.txt' &&
		grep -q '^spanbox_standby_info{slot=\"0\",pid=\"$sb\",lcore=\"7\",state=\"parked\"' '$TMP/metrics.txt' &&
		grep -q '^spanbox_worker_takeovers_total{worker=\"0\"} 0' '$TMP/metrics.txt'"

traffic_to_both "$API1" sbxsb-a sbxsb-b 5301
check "1: traffic reaches both workers" both_rise "$API1"
base_unexp=$(unexplained "$API1")
echo "# pool audit unexplained before the kills: $base_unexp"

series=() stalls=() api_misses=() nottaken=() nonew=() noresume=() gaps=()
for ((k = 1; k <= KILLS; k++)); do
	old=$(get "$API1/workers/0" | jq -e 'select(.state == "running") | .pid') || { nottaken+=("$k:not-running"); continue; }
	sb=$(parked_pid "$API1") || { nottaken+=("$k:no-standby"); continue; }
	kill -9 "$old"
	keeps_rising "$API1" 1 5 "kill $k"
	# worker 0 is the standby now (its pid), running; counters rise
	taken=""
	for ((t = 0; t < 30; t++)); do
		taken=$(get "$API1/workers/0" | jq -e --argjson sb "$sb" 'select(.pid == $sb and .state == "running") | .pid') && break
		taken=""; sleep 0.1
	done
	[ -n "$taken" ] || nottaken+=("$k")
	r0=$(wrx "$API1" 0); resumed=no
	for ((t = 0; t < 30; t++)); do
		sleep 0.1
		[ "$(wrx "$API1" 0)" -gt "${r0:-0}" ] 2>/dev/null && { resumed=yes; break; }
	done
	[ $resumed = yes ] || noresume+=("$k")
	gap=$(get "$API1/workers/0" | jq -r '.takeover_gap_us // "null"')
	gaps+=("$gap")
	# a new standby parks (another pid), within 10 s
	newsb=""
	for ((t = 0; t < 100; t++)); do newsb=$(parked_pid "$API1" "$sb") && break; newsb=""; sleep 0.1; done
	[ -n "$newsb" ] || nonew+=("$k")
	u=$(unexplained "$API1")
	series+=("${u:-?}")
	echo "# kill $k: worker 0 pid $old -> ${taken:-none} (standby $sb), gap ${gap} us; new standby ${newsb:-none}; worker 1: $samples; unexplained $u"
	sleep 0.3 # with the wait for the new standby: > crash_window_s (1 s) between kills, no back-off
done
traffic_stop
echo "# takeover gaps (us): ${gaps[*]}"
echo "# pool audit unexplained: before $base_unexp, after each kill: ${series[*]}"
check "1: each of the $KILLS kills taken over by the standby parked before it (its pid runs worker 0 within 3 s)" \
	[ ${#nottaken[@]} -eq 0 ]
[ ${#nottaken[@]} -eq 0 ] || echo "# not taken over: ${nottaken[*]}"
check "1: worker 0 forwarding again after each kill (its rx counters rise within 3 s)" \
	cond "[ ${#noresume[@]} -eq 0 ] && [ ${#series[@]} -eq $KILLS ]"
check "1: a new standby parked after each of the $KILLS takeovers (within 10 s)" \
	cond "[ ${#nonew[@]} -eq 0 ] && [ ${#series[@]} -eq $KILLS ]"
[ ${#nonew[@]} -eq 0 ] || echo "# no new standby after: ${nonew[*]}"
check "1: worker 1 kept forwarding through all $KILLS kills (every 100 ms sample larger than the previous)" \
	cond "[ ${#stalls[@]} -eq 0 ] && [ ${#series[@]} -eq $KILLS ]"
[ ${#stalls[@]} -eq 0 ] || echo "# stalls: ${stalls[*]}"
[ ${#api_misses[@]} -eq 0 ] || echo "# worker samples the API did not answer the first time (read again): ${api_misses[*]}"
check "1: every takeover has a gap (death to first frame) in /workers" \
	cond "[ ${#gaps[@]} -eq $KILLS ] && ! printf '%s\n' ${gaps[*]} | grep -qv '^[0-9][0-9]*$'"
max_unexp=$(printf '%s\n' "${series[@]}" | sort -n | tail -1)
check "1: pool audit unexplained did not grow across the $KILLS kills beyond one burst (max $max_unexp, before $base_unexp)" \
	cond "[ ${#series[@]} -eq $KILLS ] && [ -n '$base_unexp' ] && [ '$max_unexp' -le \$(( $base_unexp + 32 )) ]"
check "1: worker 0: restarts = takeovers = crashes = $KILLS; worker 1: restarts 0" \
	bash -o pipefail -c "curl -fsS $API1/workers | jq -e '.[0].restarts == $KILLS and .[0].takeovers == $KILLS and .[0].crashes == $KILLS and .[1].restarts == 0' >/dev/null"
# the life lock (spanbox/life.h): a kill is seen as the kernel ends the thread, before the reap.
# Without the life lock the count is 0: that is what this checks. How many of the 20 win is a
# matter of scheduling, not of correctness: the reap wins when the primary's watcher thread gets
# no CPU for the ~6 ms of the teardown. Quiet machine: 20 of 20; a CI run (other tests' load, and
# the watcher's real-time priority perhaps refused: its log line below): 8 of 20 once, which failed
# an older 'at least half' here. The share is a figure of docs/BENCHMARKS.md, not a pass mark.
early=$(get "$API1/workers/0" | jq -e '.takeovers_before_reap') || early=0
echo "# takeovers made before the reap (life lock): $early of $KILLS"
grep -h "life watch threads" "$TMP/live-primary.log" 2>/dev/null | head -1 | sed 's/^/# /' || true
check "1: worker 0: takeovers made before the dead worker was reaped, from its life lock (1 to $KILLS: $early)" \
	cond "[ '$early' -ge 1 ] && [ '$early' -le $KILLS ]"
sleep 0.3
get "$API1/events?limit=1000" >"$TMP/events1.json"
check "1: events: $KILLS worker_takeover and $KILLS takeover_rx of worker 0, $((KILLS + 1)) standby_start or more" \
	jqt --argjson k "$KILLS" '([.[] | select(.kind == "worker_takeover" and .worker == 0)] | length) == $k and
		([.[] | select(.kind == "takeover_rx" and .worker == 0)] | length) == $k and
		([.[] | select(.kind == "standby_start")] | length) >= $k + 1' "$TMP/events1.json"
check "1: events: a worker_crash (signal 9) of worker 0 per kill, written when it is reaped (with the signal)" \
	jqt --argjson k "$KILLS" '([.[] | select(.kind == "worker_crash" and .worker == 0 and (.detail | test("signal 9")))] | length) == $k' \
	"$TMP/events1.json"

# ---------------------------------------------------------------------------------------------
# 2. worker 1 hangs (SIGUSR2 to the hook): detected within hang_timeout_ms, taken over by the standby
HANG_MS=$(jq '.workers.hang_timeout_ms' "$CFG1")
wait_for 100 parked_pid "$API1"
sb=$(parked_pid "$API1")
old=$(get "$API1/workers/1" | jq -e '.pid')
hangs0=$(get "$API1/workers/1" | jq -e '.hangs')
t0=$(now_ms)
kill -USR2 "$old"
taken_ms=""
for ((t = 0; t < 150; t++)); do
	get "$API1/workers/1" | jq -e --argjson sb "${sb:-0}" '.pid == $sb and .state == "running"' >/dev/null &&
		{ taken_ms=$(( $(now_ms) - t0 )); break; }
	sleep 0.02
done
echo "# worker 1 (pid $old) hung; standby $sb running as worker 1 after ${taken_ms:-never} ms (hang_timeout_ms $HANG_MS)"
check "2: the hung worker 1 taken over by the parked standby (pid $sb)" [ -n "$taken_ms" ]
check "2: ... at hang_timeout_ms or later, within hang_timeout_ms + 500 ms (${taken_ms:-never})" \
	cond "[ -n '$taken_ms' ] && [ '$taken_ms' -ge $HANG_MS ] && [ '$taken_ms' -le $((HANG_MS + 500)) ]"
check "2: hangs of worker 1 went up by 1, takeovers 1" \
	bash -o pipefail -c "curl -fsS $API1/workers/1 | jq -e '.hangs == $((hangs0 + 1)) and .takeovers == 1' >/dev/null"
echo "# worker 1's takeover made before the reap: $(get "$API1/workers/1" | jq '.takeovers_before_reap') of 1"
check "2: the hung process was reaped" wait_for 20 bash -c "[ ! -e /proc/$old ]"
ip netns exec sbxsb-a ping -c 5 -i 0.1 -W 2 198.18.0.2 >"$TMP/ping2.txt" 2>&1
check "2: forwarding after the takeover (ping sbxsb-a -> sbxsb-b, 0% loss)" grep -q ' 0% packet loss' "$TMP/ping2.txt"
ids=$(ps -eo args= | awk '$1 ~ /spanbox-worker$/ && $2 == "--file-prefix=sbxsb"' | sed -n 's/.* --lcores=\([0-9]*\)@.*/\1/p' | sort -n | tr '\n' ' ')
echo "# lcores of the live workers and standbys of prefix sbxsb: $ids"
check "2: the workers and the standby run on distinct lcore ids of 5, 6, 7 ($ids)" cond "[ '$ids' = '5 6 7 ' ]"
inst_cleanup
sbx_net_down "$TMP/netns.owned"
check "1: no process of prefix sbxsb left after the stop" \
	cond "[ -z \"\$(ps -eo args= | grep -- '--file-prefix=sbxsb ' | grep -v grep)\" ]"

# ---------------------------------------------------------------------------------------------
# 3. graceful restarts during a paced pcap replay: each a hand-over, not a frame lost
PPS=${PPS:-400}
standby_pcap_start 3 pcap "$CFG2" sbxsg 18301 "$TMP/pcap.db" "$TMP/out3.pcap" "$PPS" "$API2"
PRIMARY2=$INST_PRIMARY AUTH2=$AUTH
p0_in() { get "$API2/status" | jq -e '.ports[] | select(.name == "p0") | .stats.ipackets'; }
p1_out() { get "$API2/status" | jq -e '.ports[] | select(.name == "p1") | .stats.opackets'; }
handed=0 during=0 bad=()
for ((r = 1; r <= RESTARTS; r++)); do
	sb=""
	for ((t = 0; t < 100; t++)); do sb=$(parked_pid "$API2") && break; sb=""; sleep 0.1; done
	[ -n "$sb" ] || { bad+=("$r:no-standby"); continue; }
	code=$(curl -sS --max-time 5 -o "$TMP/post$r.json" -w '%{http_code}' -H "$AUTH2" -X POST "$API2/workers/0/restart")
	in_at=$(p0_in)
	ok=""
	for ((t = 0; t < 30; t++)); do
		ok=$(get "$API2/workers/0" | jq -e --argjson sb "$sb" 'select(.pid == $sb and .state == "running") | .pid') && break
		ok=""; sleep 0.1
	done
	[ "$code" = 202 ] && [ -n "$ok" ] && handed=$((handed + 1)) || bad+=("$r:HTTP$code:${ok:-not-taken}")
	[ "${in_at:-$N}" -lt "$N" ] && during=$((during + 1))
	echo "# restart $r: HTTP $code, standby $sb -> worker 0 ${ok:-no}; gap $(get "$API2/workers/0" | jq -r '.takeover_gap_us'); input read $in_at of $N"
done
check "3: $RESTARTS POST /workers/0/restart answered 202, each handed worker 0 to the parked standby within 3 s ($handed)" \
	[ "$handed" -eq "$RESTARTS" ]
[ ${#bad[@]} -eq 0 ] || echo "# failed restarts: ${bad[*]}"
check "3: every restart happened while the input was still being read ($during of $RESTARTS)" [ "$during" -eq "$RESTARTS" ]
all_out() { [ "$(p1_out)" = "$N" ]; }
wait_for 400 all_out
check "3: p1 wrote all $N input frames (opackets, within 40 s)" all_out
check "3: hand-overs are not crashes (worker 0: crashes 0, takeovers $RESTARTS)" \
	bash -o pipefail -c "curl -fsS $API2/workers/0 | jq -e '.crashes == 0 and .takeovers == $RESTARTS' >/dev/null"
sleep 0.3
get "$API2/events?limit=1000" >"$TMP/events3.json"
check "3: events: a graceful hand-over request and a worker_takeover per restart; no worker_crash" \
	jqt --argjson k "$RESTARTS" '([.[] | select(.kind == "worker_restart" and (.detail | test("hand-over")))] | length) == $k and
		([.[] | select(.kind == "worker_takeover" and .worker == 0)] | length) == $k and
		([.[] | select(.kind == "worker_crash")] | length) == 0' "$TMP/events3.json"
inst_stop_pid "$INST_MGMT"
inst_stop_pid "$PRIMARY2"
check "3: output pcap equals the input frame for frame (no frame lost or doubled across $RESTARTS hand-overs)" \
	python3 "$ROOT/tests/lib/pcap_equal.py" "$IN" "$TMP/out3.pcap"
