#!/usr/bin/env bash
# Worker life cycle (issue 4): 20 kill -9 in a row under traffic (the other worker never stops, the
# pool audit stays bounded, every crash and start is an event), graceful restarts through the API
# with zero frames lost on a pcap input, a hung worker (test hook SBX_TEST_HANG_WORKER: its loop spins
# without heartbeats on SIGUSR2) detected, replaced and reaped (a SIGSTOPped one is not scheduled,
# not hung: tests/e2e/94_supervision.sh),
# a crash loop ending in "failed", and lcore ids that never collide.
#
# Every instance here has its own file prefix, API port, database, tap names and namespaces, so the
# test does not touch an appliance started from config/default.json. Traffic only flows inside the
# namespaces the test creates (sbxwl-a -> sbxwl-b) and through pcap files / net_null ports.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/traffic.sh"

KILLS=${KILLS:-20}
P1=sbxwl P2=sbxlife P4=sbxcl                       # file prefixes of the three instances
API1=http://127.0.0.1:18190/api/v1 API2=http://127.0.0.1:18191/api/v1 API4=http://127.0.0.1:18192/api/v1
CFG1="$TMP/live.json" CFG2="$TMP/pcap.json" CFG4="$TMP/crashloop.json"
IN="$CAPTURES/bulk_zeek_ftp-8317-small.pcap"

cleanup() {
	local p i
	traffic_stop
	inst_cleanup # the primaries and mgmt processes of instances 2 and 4
	[ -f "$CFG1" ] && "$ROOT/spanbox" stop "$CFG1" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

get() { curl -fsS --max-time 5 "$1"; }
jqt() { jq -e "$@" >/dev/null; } # jqt FILTER [FILE]: the filter holds
# rx of worker W on p0 + p1: wrx API W
wrx() { get "$1/workers/$2" | jq -e '.ports.p0.rx_packets + .ports.p1.rx_packets'; }
# pool audit "unexplained", median of 3 reads 50 ms apart (the reads race with live traffic)
unexplained() {
	local v=() i
	for i in 1 2 3; do v+=("$(get "$1/pools/sbx_pool_s0" | jq -e '.audit.unexplained')") || return 1; sleep 0.05; done
	printf '%s\n' "${v[@]}" | sort -n | sed -n 2p
}
now_ms() { echo $(( ${EPOCHREALTIME/./} / 1000 )); }
# lcore ids of the live workers of prefix P, one per line, from their command lines
worker_lcores() { ps -eo args= | awk -v p="--file-prefix=$1" '$1 ~ /spanbox-worker$/ && $2 == p' |
	sed -n 's/.* --lcores=\([0-9]*\)@.*/\1/p'; }
# lcore_checks LABEL API PREFIX NB_WORKERS PRIMARY_LCORE MGMT_LCORE
lcore_checks() {
	local label=$1 api=$2 pfx=$3 nb=$4 pl=$5 ml=$6 ids dup
	get "$api/workers" >"$TMP/lc.json"
	echo "# $label: workers $(jq -c '[.[] | {id, pid, lcore, state, restarts}]' "$TMP/lc.json")"
	check "$label: API: the $nb workers' lcores are distinct and differ from primary_lcore $pl and mgmt_lcore $ml" \
		jqt --argjson pl "$pl" --argjson ml "$ml" --argjson nb "$nb" \
		'length == $nb and ([.[].lcore] | unique | length) == $nb and all(.[]; .lcore != $pl and .lcore != $ml)' "$TMP/lc.json"
	ids=$(worker_lcores "$pfx")
	echo "# $label: ps: live workers of prefix $pfx on lcores: $(echo $ids)"
	dup=$(printf '%s\n' $ids "$pl" "$ml" | sort -n | uniq -d | tr '\n' ' ')
	check "$label: ps: no two live processes of prefix $pfx share an lcore id (primary $pl, mgmt $ml, workers${dup:+; duplicated: $dup})" \
		cond "[ -n '$ids' ] && [ -z '$dup' ]"
}
# ---------------------------------------------------------------------------------------------
# 1. kill -9 worker 0, 20 times, under iperf3 UDP traffic (8 streams) from sbxwl-a to sbxwl-b
jq --arg db "$TMP/live.db" '.eal.file_prefix = "sbxwl" | .mgmt.port = 18190 | .mgmt.database = $db
	| .ports[0].devargs = "net_tap0,iface=sbxwl-p0" | .ports[0].netns = "sbxwl-a"
	| .ports[1].devargs = "net_tap1,iface=sbxwl-p1" | .ports[1].netns = "sbxwl-b"
	| .ports[2].devargs = "net_tap2,iface=sbxwl-m"
	| .workers.crash_limit = 100 | .workers.crash_window_s = 1 | .workers.hang_timeout_ms = 500' \
	"$ROOT/config/default.json" >"$CFG1"
SBX_TEST_HANG_WORKER=1 timeout 180 "$ROOT/spanbox" start "$CFG1" >"$TMP/start1.log" 2>&1
check "1: ./spanbox start of the default config (crash_limit 100, crash_window_s 1, hang_timeout_ms 500) returns 0" [ $? -eq 0 ]
PL1=$(jq '.eal.primary_lcore' "$CFG1") ML1=$(jq '.eal.mgmt_lcore' "$CFG1")

traffic_to_both "$API1" sbxwl-a sbxwl-b 5201
check "1: traffic reaches both workers (rx counters of worker 0 and worker 1 rise)" both_rise "$API1"
base_unexp=$(unexplained "$API1")
echo "# pool audit unexplained before the kills: $base_unexp"

series=() stalls=() api_misses=() norestart=() noresume=() overbound=() killed=() newpids=()
for ((k = 1; k <= KILLS; k++)); do
	old=$(get "$API1/workers/0" | jq -e '.pid') || { norestart+=("$k:no-pid"); continue; }
	rx0_before=$(wrx "$API1" 0)
	kill -9 "$old"
	killed+=("$old")
	# the other worker keeps forwarding: 10 samples 100 ms apart, each larger than the previous
	keeps_rising "$API1" 1 10 "kill $k"
	# worker 0 runs again with a new pid...
	new=""
	for ((t = 0; t < 50; t++)); do
		new=$(get "$API1/workers/0" | jq -e --argjson old "$old" 'select(.state == "running" and .pid != $old and .pid > 0) | .pid') && break
		new=""; sleep 0.1
	done
	[ -n "$new" ] || norestart+=("$k")
	newpids+=("${new:-0}")
	# ...and forwards again (its counters rise)
	r0=$(wrx "$API1" 0); resumed=no
	for ((t = 0; t < 30; t++)); do
		sleep 0.1
		[ "$(wrx "$API1" 0)" -gt "${r0:-0}" ] 2>/dev/null && { resumed=yes; break; }
	done
	[ $resumed = yes ] || noresume+=("$k")
	u=$(unexplained "$API1")
	series+=("${u:-?}")
	[ -n "$u" ] && [ "$u" -le $((32 * k)) ] || overbound+=("kill $k: $u > $((32 * k))")
	echo "# kill $k: pid $old -> ${new:-none}; worker 1 rx samples: $samples; worker 0 resumed: $resumed; unexplained $u"
	sleep 0.2 # > crash_window_s (1 s) between kills: no back-off
done
echo "# pool audit unexplained: before $base_unexp, after each kill: ${series[*]}"
get "$API1/pools/sbx_pool_s0" | jq -c '.audit | del(.note)' | sed 's/^/# final audit: /'
check "1: worker 1 kept forwarding through all $KILLS kills of worker 0 (every 100 ms sample larger than the previous)" \
	[ ${#stalls[@]} -eq 0 ]
[ ${#stalls[@]} -eq 0 ] || echo "# stalls: ${stalls[*]}"
[ ${#api_misses[@]} -eq 0 ] || echo "# worker samples the API did not answer the first time (read again): ${api_misses[*]}"
check "1: worker 0 running again with a new pid after each of the $KILLS kills (within 5 s)" [ ${#norestart[@]} -eq 0 ]
[ ${#norestart[@]} -eq 0 ] || echo "# not restarted after kill(s): ${norestart[*]}"
check "1: worker 0 forwarding again after each kill (its rx counters rise within 3 s)" [ ${#noresume[@]} -eq 0 ]
[ ${#noresume[@]} -eq 0 ] || echo "# no forwarding after kill(s): ${noresume[*]}"
check "1: pool audit unexplained <= 32 x crashes so far after every kill" [ ${#overbound[@]} -eq 0 ]
[ ${#overbound[@]} -eq 0 ] || echo "# over the bound: ${overbound[*]}"
max_unexp=$(printf '%s\n' "${series[@]}" | sort -n | tail -1)
# "Does not grow": the primary frees a dead worker's burst itself (primary/workers.c), so crashes
# must not add up a burst each. A kill that lands while the tap PMD is already sending or freeing a
# burst loses those few mbufs for good (seen: 0 -> 2 at one kill of 20, in 1 of 6 runs): the total
# over all 20 crashes must stay within one burst (32) of the value before the first kill.
check "1: pool audit unexplained did not grow across the $KILLS crashes (max $max_unexp, before the first $base_unexp, allowed +32 in all)" \
	cond "[ ${#series[@]} -eq $KILLS ] && [ -n '$base_unexp' ] && [ '$max_unexp' -le \$(( $base_unexp + 32 )) ]"
get "$API1/events?limit=1000" >"$TMP/events1.json"
crash_ok=0 start_ok=0
for ((i = 0; i < ${#killed[@]}; i++)); do
	jq -e --argjson p "${killed[$i]}" 'any(.[]; .kind == "worker_crash" and .worker == 0 and .pid == $p and (.detail | test("signal 9")))' \
		"$TMP/events1.json" >/dev/null && crash_ok=$((crash_ok + 1))
	jq -e --argjson p "${newpids[$i]}" 'any(.[]; (.kind == "worker_start" or .kind == "worker_takeover") and .worker == 0 and .pid == $p)' \
		"$TMP/events1.json" >/dev/null && start_ok=$((start_ok + 1))
done
check "1: events: a worker_crash (signal 9) of worker 0 for each of the $KILLS killed pids ($crash_ok found)" [ "$crash_ok" -eq "$KILLS" ]
check "1: events: a worker_start (or, by a standby, worker_takeover) of worker 0 for each of the $KILLS new pids ($start_ok found)" [ "$start_ok" -eq "$KILLS" ]
check "1: worker 0 restarts = $KILLS, crashes = $KILLS; worker 1 restarts = 0" \
	bash -c "curl -fsS $API1/workers | jq -e '.[0].restarts == $KILLS and .[0].crashes == $KILLS and .[1].restarts == 0' >/dev/null"
traffic_stop

# ---------------------------------------------------------------------------------------------
# 3. worker 1 hangs (SIGUSR2: the hook makes its loop spin without heartbeats, its CPU time
#    advancing): detected within hang_timeout_ms (+ margin), replaced, and reaped
HANG_MS=$(jq '.workers.hang_timeout_ms' "$CFG1")
old=$(get "$API1/workers/1" | jq -e '.pid')
hangs0=$(get "$API1/workers/1" | jq -e '.hangs')
t0=$(now_ms)
kill -USR2 "$old"
replaced() { get "$API1/workers/1" | jq -e --argjson old "$old" '.pid != $old and .pid > 0 and .state == "running"' >/dev/null; }
replaced_ms=""
for ((t = 0; t < 150; t++)); do replaced && { replaced_ms=$(( $(now_ms) - t0 )); break; }; sleep 0.02; done
echo "# worker 1 (pid $old) hung; replaced and running after ${replaced_ms:-never} ms (hang_timeout_ms $HANG_MS)"
check "3: hung worker replaced (new pid, running)" [ -n "$replaced_ms" ]
check "3: ... within hang_timeout_ms + 500 ms (${replaced_ms:-never} <= $((HANG_MS + 500)))" \
	cond "[ -n '$replaced_ms' ] && [ '$replaced_ms' -le $((HANG_MS + 500)) ]"
check "3: ... and not before hang_timeout_ms (${replaced_ms:-never} >= $HANG_MS)" \
	cond "[ -n '$replaced_ms' ] && [ '$replaced_ms' -ge $HANG_MS ]"
check "3: hangs counter of worker 1 went up by 1" \
	bash -c "curl -fsS $API1/workers/1 | jq -e '.hangs == $((hangs0 + 1))' >/dev/null"
sleep 0.3 # events are imported every 100 ms
check "3: a worker_hang event for worker 1 pid $old" \
	bash -c "curl -fsS '$API1/events?limit=50' | jq -e 'any(.[]; .kind == \"worker_hang\" and .worker == 1 and .pid == $old)' >/dev/null"
check "3: the hung process was reaped (pid $old gone, not even a zombie)" bash -c "[ ! -e /proc/$old ]"
check "3: no zombie child of the primary" \
	bash -c "! ps -o stat= --ppid $(cat /run/spanbox/$P1.primary.pid) | grep -q Z"
ip netns exec sbxwl-a ping -c 5 -i 0.1 -W 2 198.18.0.2 >"$TMP/ping3.txt" 2>&1
check "3: forwarding after the hang restart (ping sbxwl-a -> sbxwl-b, 0% loss)" grep -q ' 0% packet loss' "$TMP/ping3.txt"

# 5. lcores after all these restarts
lcore_checks "5 (after $KILLS kills and a hang)" "$API1" "$P1" 2 "$PL1" "$ML1"
"$ROOT/spanbox" stop "$CFG1" >/dev/null 2>&1
check "1: ./spanbox stop leaves no worker of prefix $P1" bash -c "[ -z \"\$(ps -eo args= | grep -- '--file-prefix=$P1 ' | grep -v grep)\" ]"

# ---------------------------------------------------------------------------------------------
# 2. graceful restarts through the API while a paced pcap input flows: zero frames lost
N=$(capinfos -Mc "$IN" | awk '/Number of packets/ {print $NF}')
cat >"$CFG2" <<JSON
{
  "eal": {"file_prefix": "$P2", "socket_mem_mb": 256, "primary_lcore": 40, "mgmt_lcore": 41},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$IN,pps=3000"},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$TMP/out2.pcap"}
  ],
  "workers": {"count": 2, "lcores": [42, 43]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mgmt": {"port": 18191, "database": "$TMP/pcap.db"}
}
JSON
inst_start_primary pcap "$CFG2"
check "2: primary with the pcap config ready" [ -f "$TMP/pcap.ready" ]
PRIMARY2=$INST_PRIMARY
inst_start_mgmt pcap "$CFG2" "$API2"
check "2: mgmt up on port 18191" [ $? -eq 0 ]
# POST needs the bearer token: mgmt generated $TMP/pcap.db.token at start
AUTH2="Authorization: Bearer $("$BUILD/mgmt/spanbox-mgmt" -c "$CFG2" --print-token)"
p0_in() { get "$API2/status" | jq -e '.ports[] | select(.name == "p0") | .stats.ipackets'; }
p1_out() { get "$API2/status" | jq -e '.ports[] | select(.name == "p1") | .stats.opackets'; }
restart_ok=0
for r in 1 2; do
	sleep $([ $r = 1 ] && echo 0.4 || echo 1)
	before=$(get "$API2/workers/0" | jq -e '.restarts')
	oldpid=$(get "$API2/workers/0" | jq -e '.pid')
	code=$(curl -sS --max-time 5 -o "$TMP/post$r.json" -w '%{http_code}' -H "$AUTH2" -X POST "$API2/workers/0/restart")
	in_at_post=$(p0_in)
	echo "# POST restart $r: HTTP $code $(cat "$TMP/post$r.json"); input frames read so far $in_at_post of $N"
	check "2: POST /workers/0/restart #$r answers 202 with restarts_before $before" \
		bash -c "[ '$code' = 202 ] && jq -e '.worker == 0 and .restarts_before == $before' '$TMP/post$r.json' >/dev/null"
	restarted() { get "$API2/workers/0" | jq -e --argjson b "$before" --argjson o "$oldpid" \
		'.restarts == $b + 1 and .state == "running" and .pid != $o' >/dev/null; }
	check "2: restart #$r: worker 0 restarts goes $before -> $((before + 1)), new pid, running (within 3 s)" wait_for 30 restarted
	check "2: restart #$r happened while the input was still being read ($in_at_post < $N)" [ "${in_at_post:-$N}" -lt "$N" ]
done
all_out() { [ "$(p1_out)" = "$N" ]; }
wait_for 150 all_out
check "2: p1 wrote all $N input frames (opackets, within 15 s)" all_out
echo "# p1 opackets $(p1_out), p0 ipackets $(p0_in); events: $(get "$API2/events?limit=20" | jq -c '[.[] | select(.worker == 0) | .kind]')"
check "2: graceful restarts are not crashes (worker 0 crashes 0)" \
	bash -c "curl -fsS $API2/workers/0 | jq -e '.crashes == 0' >/dev/null"
lcore_checks "5 (pcap, after 2 graceful restarts)" "$API2" "$P2" 2 40 41
inst_stop_pid "$INST_MGMT"
inst_stop_pid "$PRIMARY2"
check "2: primary exits on SIGTERM" bash -c "! kill -0 $PRIMARY2 2>/dev/null"
check "2: output pcap equals the input byte for byte, in order (no frame lost across graceful restarts)" \
	python3 "$ROOT/tests/lib/pcap_equal.py" "$IN" "$TMP/out2.pcap"

# ---------------------------------------------------------------------------------------------
# 4. crash loop: worker 1 aborts right after attaching, every time; crash_limit 3 in 30 s
cat >"$CFG4" <<JSON
{
  "eal": {"file_prefix": "$P4", "socket_mem_mb": 256, "primary_lcore": 50, "mgmt_lcore": 51},
  "ports": [ {"name": "p0", "devargs": "net_null0"}, {"name": "p1", "devargs": "net_null1"} ],
  "workers": {"count": 2, "lcores": [52, 53], "crash_limit": 3, "crash_window_s": 30},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mgmt": {"port": 18192, "database": "$TMP/crashloop.db"}
}
JSON
t_start4=$SECONDS
# not inst_start_primary: whether the primary says ready before worker 1's crashes is not the point
sbx_start_primary "$BUILD/primary/spanbox-primary" "$CFG4" "$TMP/crashloop.ready" "$TMP/crashloop-primary.log" \
	SBX_TEST_CRASH_WORKER=1
PRIMARY4=$SBX_PID
INST_PIDS+=("$PRIMARY4")
wait_for 100 grep -q 'appliance_start' "$TMP/crashloop-primary.log"
inst_start_mgmt crashloop "$CFG4" "$API4"
check "4: mgmt up on port 18192 (primary started with SBX_TEST_CRASH_WORKER=1)" [ $? -eq 0 ]
failed() { get "$API4/workers/1" | jq -e '.state == "failed" and .pid == 0' >/dev/null; }
check "4: worker 1 ends in state failed (within 10 s)" wait_for 100 failed
get "$API4/workers" | jq -c '[.[] | {id, pid, state, restarts, crashes}]' | sed 's/^/# workers: /'
check "4: worker 1 failed after exactly 3 crashes (crash_limit 3)" \
	bash -c "curl -fsS $API4/workers/1 | jq -e '.crashes == 3' >/dev/null"
sleep 0.3
get "$API4/events?limit=50" >"$TMP/events4.json"
jq -c '.[] | select(.worker == 1) | [.kind, .pid, .detail]' "$TMP/events4.json" | sed 's/^/# event: /'
check "4: events: 3 worker_crash of worker 1 (SIGABRT) and one worker_failed" \
	jqt '([.[] | select(.worker == 1 and .kind == "worker_crash" and (.detail | test("signal 6")))] | length) == 3
	       and ([.[] | select(.worker == 1 and .kind == "worker_failed")] | length) == 1' "$TMP/events4.json"
r1=$(get "$API4/workers/1" | jq '.restarts')
sleep 1
check "4: a failed worker is not restarted (1 s later: still failed, restarts still $r1)" \
	bash -c "curl -fsS $API4/workers/1 | jq -e '.state == \"failed\" and .restarts == $r1 and .pid == 0' >/dev/null"
w0rise() {
	local a b
	a=$(get "$API4/workers/0" | jq -e 'select(.state == "running" and .restarts == 0) | .ports.p0.rx_packets + .ports.p1.rx_packets') || return 1
	sleep 0.5
	b=$(get "$API4/workers/0" | jq -e 'select(.state == "running" and .restarts == 0) | .ports.p0.rx_packets + .ports.p1.rx_packets') || return 1
	[ "$b" -gt "$a" ]
}
check "4: worker 0 keeps running with restarts 0 and its counters rise" w0rise
lcore_checks "5 (crash loop)" "$API4" "$P4" 2 50 51
# the appliance must stay up with a failed worker (it waits for POST /workers/1/restart): look
# again after the primary's 20 s start-up timeout (primary/main.c SBX_READY_TIMEOUT_NS)
while [ $((SECONDS - t_start4)) -lt 23 ]; do sleep 0.5; done
check "4: 23 s after start, with worker 1 failed, the primary is still up and worker 0 still forwards" \
	cond "kill -0 $PRIMARY4 2>/dev/null && w0rise"
grep -h 'did not all start' "$TMP/crashloop-primary.log" | sed 's/^/# primary log: /'
inst_stop_pid "$INST_MGMT"
inst_stop_pid "$PRIMARY4"
check "4: no worker of prefix $P4 left" bash -c "[ -z \"\$(ps -eo args= | grep -- '--file-prefix=$P4 ' | grep -v grep)\" ]"
