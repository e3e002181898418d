#!/usr/bin/env bash
# A file prefix belongs to one appliance (issue #24, items 2, 7, 9):
#  - a second primary of a running prefix (another primary_lcore, so its lcore lock is free) is
#    refused at once, naming the running one's pid, and changes nothing of it (its attach marker
#    stays: a mgmt started afterwards still attaches);
#  - a stopped primary (SIGSTOP) never makes an API request wait: /health and /status answer at
#    once from mgmt's own view (down, degraded: primary not responding), also from a mgmt started
#    meanwhile, and up again on SIGCONT;
#  - ./spanbox stop after the primary was killed with -9 removes the prefix's hugepage files and
#    runtime directory once no process of the prefix lives.
source "$(dirname "$0")/../lib/common.sh"
PFX=sbxguard RUNDIR=/var/run/dpdk/sbxguard PORT=18417
API=http://127.0.0.1:$PORT/api/v1
A="$TMP/a.json" B="$TMP/b.json"
trap '"$ROOT/spanbox" stop "$A" >/dev/null 2>&1; rm -rf "$TMP"' EXIT
cat >"$A" <<JSON
{
  "eal": {"file_prefix": "$PFX", "socket_mem_mb": 128, "primary_lcore": 101, "mgmt_lcore": 102},
  "ports": [ {"name": "p0", "devargs": "net_null0"}, {"name": "p1", "devargs": "net_null1"} ],
  "workers": {"count": 1, "lcores": [103], "standby": 0},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mgmt": {"port": $PORT, "database": "$TMP/guard.db"}
}
JSON
jq '.eal.primary_lcore = 104' "$A" >"$B"
health() { curl -fsS --max-time 3 "$API/health" 2>/dev/null; }
health_is() { health | jq -e ".appliance == \"$1\"" >/dev/null; }
# (functions, not bash -c: pgrep -f would match the bash -c command line itself)
no_workers() { ! pgrep -f "spanbox-worker --file-prefix=$PFX " >/dev/null; }
no_process() { ! pgrep -f "spanbox-(primary|worker|mgmt).*($PFX|$A)" >/dev/null; }
marker() { cat "$RUNDIR/spanbox_attachable" 2>/dev/null; }

timeout 120 "$ROOT/spanbox" start "$A" >"$TMP/start.log" 2>&1
check "appliance A starts (prefix $PFX)" [ $? -eq 0 ] || sed 's/^/# /' "$TMP/start.log"
PP=$(cat /run/spanbox/$PFX.primary.pid 2>/dev/null)
MP=$(cat /run/spanbox/$PFX.mgmt.pid 2>/dev/null)
check "its attach marker names its primary (pid $PP)" [ "$(marker)" = "$PP" ]

# --- item 7: a stopped primary
check "the API says up before the primary is stopped" wait_for 100 health_is up
kill -STOP "$PP"
worst=0 answers=0 bad=0
for i in $(seq 1 24); do # 24 polls within about 12 s: covers mgmt noticing and re-attaching
	for route in health status; do
		t0=$(date +%s%N)
		body=$(curl -sS --max-time 10 "$API/$route" 2>/dev/null)
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		[ $ms -gt $worst ] && worst=$ms
		if [ "$route" = health ]; then
			jq -e '.appliance == "down" or .status == "degraded" or .appliance == "up"' >/dev/null 2>&1 <<<"$body" \
				&& answers=$((answers + 1)) || bad=$((bad + 1))
			last=$body
		fi
	done
	sleep 0.5
done
echo "# last health while stopped: $last"
check "while the primary is stopped, /health and /status answer within 1 s (worst $worst ms)" [ $worst -lt 1000 ]
check "every /health answer is JSON ($answers answers, $bad bad)" [ $bad -eq 0 ]
last_says() { jq -e '.appliance == "down" and .status == "degraded" and (.problems | tostring | test("not responding"))' \
	>/dev/null <<<"$last"; }
check "the last one says down, degraded: primary not responding" last_says
# a mgmt started while the primary is stopped: it must not attach (its EAL would wait on the
# primary's answers) but serve at once
kill -TERM "$MP"; wait_for 50 bash -c "! kill -0 $MP 2>/dev/null"
setsid "$BUILD/mgmt/spanbox-mgmt" -c "$A" </dev/null >"$TMP/mgmt1.log" 2>&1 &
MP=$!
echo "$MP" >/run/spanbox/$PFX.mgmt.pid
wait_for 50 bash -c "curl -s -o /dev/null --max-time 10 $API/health"
worst=0 downs=0
for i in $(seq 1 8); do # 8 polls within about 5 s: past mgmt's retry (2 s)
	t0=$(date +%s%N)
	curl -sS --max-time 10 "$API/health" 2>/dev/null | jq -e '.appliance == "down"' >/dev/null && downs=$((downs + 1))
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	[ $ms -gt $worst ] && worst=$ms
	sleep 0.5
done
check "a mgmt started while the primary is stopped answers /health within 1 s (worst $worst ms), down ($downs of 8)" \
	cond "[ $worst -lt 1000 ] && [ $downs -eq 8 ]"
kill -CONT "$PP"
check "up again once the primary resumes (SIGCONT)" wait_for 150 bash -c "$(declare -f health health_is); API=$API health_is up"

# --- item 2: a second primary of the running prefix
t0=$(date +%s%N)
timeout 60 "$BUILD/primary/spanbox-primary" -c "$B" </dev/null >"$TMP/b.log" 2>&1
rc=$? ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "# second primary: exit $rc after $ms ms: $(grep -v '^EAL' "$TMP/b.log" | tail -n 1)"
check "a second primary of the running prefix exits 1 at once (rc $rc, $ms ms < 2000)" cond "[ $rc -eq 1 ] && [ $ms -lt 2000 ]"
check "saying that an appliance of prefix $PFX runs, with its pid $PP" \
	grep -q "an appliance of file prefix '$PFX' is running (primary pid $PP" "$TMP/b.log"
check "and not telling to stop a process of a previous primary" bash -c "! grep -q 'previous primary' '$TMP/b.log'"
check "the running one's attach marker is untouched" [ "$(marker)" = "$PP" ]
check "no hugepage file of the running one went" bash -c "ls /dev/hugepages/${PFX}map_* >/dev/null 2>&1"
kill -TERM "$MP"; wait_for 50 bash -c "! kill -0 $MP 2>/dev/null"
setsid "$BUILD/mgmt/spanbox-mgmt" -c "$A" </dev/null >"$TMP/mgmt2.log" 2>&1 &
MP=$!
echo "$MP" >/run/spanbox/$PFX.mgmt.pid
check "a mgmt started afterwards attaches (health up)" wait_for 100 health_is up
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$API/status")
check "and /status answers 200 (got $code)" [ "$code" = 200 ]

# --- item 9: a primary killed with -9, then ./spanbox stop
check "(the primary still runs)" kill -0 "$PP"
kill -9 "$PP"
check "its workers exit" wait_for 30 no_workers
"$ROOT/spanbox" stop "$A" >"$TMP/stop.log" 2>&1
check "./spanbox stop after kill -9 exits 0" [ $? -eq 0 ]
sed 's/^/# stop: /' "$TMP/stop.log"
check "no hugepage file of prefix $PFX left" bash -c "! ls /dev/hugepages/${PFX}map_* >/dev/null 2>&1"
check "no runtime directory $RUNDIR left" [ ! -e "$RUNDIR" ]
check "no process of prefix $PFX left" no_process
