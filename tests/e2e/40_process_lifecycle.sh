#!/usr/bin/env bash
# Process independence: mgmt stops and starts without touching forwarding; workers and mgmt notice
# a primary killed with -9; the next start works without manual clean-up.
source "$(dirname "$0")/../lib/common.sh"
API=http://127.0.0.1:8080/api/v1
CFG="$ROOT/config/default.json"
trap '"$ROOT/spanbox" stop "$ROOT/config/default.json" >/dev/null 2>&1; rm -rf "$TMP"' EXIT
kstat() { ip -n "$1" -s -j link show "$2" | jq ".[0].stats64.$3.packets"; }
# (a function, not bash -c: pgrep -f would match the bash -c command line itself)
no_workers() { ! pgrep -f 'spanbox-worker --file-prefix=spanbox ' >/dev/null; }
health_is() { curl -fsS "$API/health" 2>/dev/null | jq -e ".appliance == \"$1\"" >/dev/null; }

timeout 180 "$ROOT/spanbox" start >/dev/null 2>&1
check "appliance started" health_is up

kill -TERM "$(cat /run/spanbox/spanbox.mgmt.pid)"
check "mgmt stops on SIGTERM" wait_for 50 bash -c '! curl -fsS http://127.0.0.1:8080/api/v1/health >/dev/null 2>&1'
rx0=$(kstat sbx-b sbx-p1 rx)
ip netns exec sbx-a ping -c 10 -i 0.1 -W 2 198.18.0.2 >"$TMP/ping.txt"
check "forwarding goes on while mgmt is down (0% loss)" grep -q ' 0% packet loss' "$TMP/ping.txt"
check "sbx-b received the pings while mgmt was down" [ $(( $(kstat sbx-b sbx-p1 rx) - rx0 )) -ge 10 ]
setsid "$BUILD/mgmt/spanbox-mgmt" -c "$CFG" </dev/null >"$TMP/mgmt.log" 2>&1 &
echo $! >/run/spanbox/spanbox.mgmt.pid
check "mgmt started again attaches to the running appliance" wait_for 100 health_is up
check "status after mgmt restart shows the pings" \
	bash -c "curl -fsS $API/status | jq -e '.ports[] | select(.name == \"p1\") | .workers.tx_packets >= 10' >/dev/null"
check "workers were not restarted by the mgmt restart" \
	bash -c "curl -fsS $API/status | jq -e '[.workers[].restarts] == [0, 0]' >/dev/null"

kill -9 "$(cat /run/spanbox/spanbox.primary.pid)"
t0=$(date +%s%N)
check "workers exit within 1 s of the primary's death" wait_for 10 no_workers
echo "# workers gone after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
check "mgmt reports the appliance down within 1 s of the primary's death" wait_for 10 health_is down
check "no process left spinning (no worker with file prefix spanbox)" no_workers
check "mgmt keeps serving while the appliance is down (health answers 200)" \
	curl -fsS -o /dev/null "$API/health"

# A new primary on the same prefix, started by hand (stale hugepage files and runtime directory
# of the killed one are still there): the running mgmt re-attaches to it by itself.
setsid "$BUILD/primary/spanbox-primary" -c "$CFG" --ready-file "$TMP/ready" </dev/null >"$TMP/p2.log" 2>&1 &
echo $! >/run/spanbox/spanbox.primary.pid
if ! check "a new primary starts over the killed one's leftovers" wait_for 300 test -f "$TMP/ready"; then
	sed 's/^/# p2: /' "$TMP/p2.log" | tail -40
	sed 's/^/# mgmt: /' /var/log/spanbox/spanbox-mgmt.log | tail -20
fi
check "the same mgmt re-attaches to the new primary (health up within 5 s)" wait_for 50 health_is up
# A primary that stops cleanly frees its pools and memzone: mgmt must have left them first (it
# once faulted on the freed memzone). Three clean stops under the same mgmt, each followed by a start.
MGMT_PID=$(cat /run/spanbox/spanbox.mgmt.pid)
survived=0
for i in 1 2 3; do
	pp=$(cat /run/spanbox/spanbox.primary.pid)
	kill -TERM "$pp"
	wait_for 100 bash -c "! kill -0 $pp 2>/dev/null"
	wait_for 20 health_is down && kill -0 "$MGMT_PID" 2>/dev/null || break
	rm -f "$TMP/ready"
	setsid "$BUILD/primary/spanbox-primary" -c "$CFG" --ready-file "$TMP/ready" </dev/null >"$TMP/p$i.log" 2>&1 &
	echo $! >/run/spanbox/spanbox.primary.pid
	wait_for 300 test -f "$TMP/ready" && wait_for 50 health_is up || break
	survived=$((survived + 1))
done
check "mgmt (pid $MGMT_PID) lives through 3 clean primary stops and re-attaches each time ($survived/3)" \
	cond '[ "$survived" -eq 3 ] && kill -0 "$MGMT_PID"'
check "no primary waited for mgmt to detach in vain" bash -c "! grep -q 'did not detach' $TMP/p*.log"
"$ROOT/spanbox" stop "$ROOT/config/default.json" >/dev/null 2>&1
timeout 180 "$ROOT/spanbox" start >"$TMP/start2.log" 2>&1
check "next ./spanbox start works without manual clean-up" [ $? -eq 0 ]
ip netns exec sbx-a ping -c 5 -i 0.1 -W 2 198.18.0.2 >"$TMP/ping2.txt"
check "forwarding after the restart (0% loss)" grep -q ' 0% packet loss' "$TMP/ping2.txt"
"$ROOT/spanbox" stop "$ROOT/config/default.json" >/dev/null 2>&1
check "no hugepage file of prefix spanbox left" bash -c "! ls /dev/hugepages/spanboxmap_* >/dev/null 2>&1"

# A secondary of a dead primary that has not detached yet holds a shared flock on the runtime
# files; DPDK's primary would fail with "Cannot allocate memzone list" (the race CI once hit when
# the new primary started before mgmt had re-executed). The primary waits for it, naming it, and
# gives up after 10 s with a message naming the holder. flock(1) stands in for that secondary.
PFX=sbxstale RUNDIR=/var/run/dpdk/sbxstale
cat >"$TMP/stale.json" <<JSON
{
  "eal": {"file_prefix": "$PFX", "socket_mem_mb": 128, "primary_lcore": 60, "mgmt_lcore": 61},
  "ports": [ {"name": "p0", "devargs": "net_null0"}, {"name": "p1", "devargs": "net_null1"} ],
  "workers": {"count": 1, "lcores": [62]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mgmt": {"port": 18140, "database": "$TMP/stale.db"}
}
JSON
mkdir -p "$RUNDIR" && : >"$RUNDIR/fbarray_memzone"
flock -s "$RUNDIR/fbarray_memzone" sleep 1.5 &
HOLDER=$!
sleep 0.2
timeout 60 "$BUILD/primary/spanbox-primary" -c "$TMP/stale.json" --ready-file "$TMP/ready3" \
	</dev/null >"$TMP/p3.log" 2>&1 &
P3=$!
check "a primary whose runtime files are held waits for the holder and then starts" wait_for 100 test -f "$TMP/ready3"
check "it said whom it waited for (pid $HOLDER)" \
	grep -q "waiting for pid $HOLDER (flock) to detach from $RUNDIR" "$TMP/p3.log"
kill -TERM $P3; wait $P3
mkdir -p "$RUNDIR" && : >"$RUNDIR/fbarray_memzone"
flock -s "$RUNDIR/fbarray_memzone" sleep 30 &
HOLDER=$!
sleep 0.2
t0=$SECONDS
timeout 60 "$BUILD/primary/spanbox-primary" -c "$TMP/stale.json" </dev/null >"$TMP/p4.log" 2>&1
rc=$?
check "a holder that stays: the primary exits 1 after about 10 s (rc $rc, $((SECONDS - t0)) s)" \
	[ $rc -eq 1 -a $((SECONDS - t0)) -ge 9 -a $((SECONDS - t0)) -le 15 ]
check "and names the held file and the holder's pid" \
	grep -q "$RUNDIR/fbarray_memzone is still held by pid $HOLDER (flock)" "$TMP/p4.log"
kill $HOLDER 2>/dev/null; wait $HOLDER 2>/dev/null
rm -rf "$RUNDIR"
check "no hugepage file of prefix $PFX left" bash -c "! ls /dev/hugepages/${PFX}map_* >/dev/null 2>&1"
