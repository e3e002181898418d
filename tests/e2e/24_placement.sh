#!/usr/bin/env bash
# Placement (issue #25, pinning): with workers.cpus each worker's polling thread runs on its own
# CPU and everything else (the primary's and mgmt's threads, EAL's control threads of every
# process, a parked standby) on the housekeeping CPUs; a standby that takes a worker's place
# moves to that worker's CPU. Checked on what the kernel says of every thread
# (/proc/PID/task/TID/status Cpus_allowed_list), not on what spanbox says. Refusals at start name
# the field. Without workers.cpus, today's layout: every thread floats on eal.cpus.
# This machine has 2 CPUs: housekeeping CPU 0, one worker on CPU 1.
#
# Own instances: file prefix t25pl, lcores 107-110, API port 18725, net_null ports (no RX).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"

PORT=18725
API=http://127.0.0.1:$PORT/api/v1
trap 'inst_cleanup; rm -rf "$TMP"' EXIT
NCPU=$(nproc --all)
if [ "$NCPU" -lt 2 ]; then
	echo "ok - placement # SKIP this machine has $NCPU CPU: pinning needs 2"
	exit 0
fi

base() { # base EXTRA_JQ: the config with EXTRA_JQ applied
	jq -n '{eal: {file_prefix: "t25pl", socket_mem_mb: 128, primary_lcore: 107, mgmt_lcore: 108, cpus: "0-1"},
		ports: [{name: "p0", devargs: "net_null0,no-rx=1"}, {name: "p1", devargs: "net_null1,no-rx=1"}],
		workers: {count: 1, lcores: [109], standby: 1, standby_lcores: [110], busy_poll: false},
		forwarding: {xconnects: [["p0", "p1"]]},
		mgmt: {port: '"$PORT"', database: "'"$TMP"'/pl.db"}}' | jq "$1"
}
# threads PID: "TID NAME CPUS" for every thread of PID
threads() {
	local t
	for t in /proc/"$1"/task/*; do
		echo "${t##*/} $(tr ' ' _ <"$t/comm") $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status")"
	done
}
# all_on PID CPUS [EXCEPT_TID]: every thread of PID (but EXCEPT_TID) may run on CPUS exactly
all_on() {
	threads "$1" | awk -v c="$2" -v x="${3:-0}" '$1 != x && $3 != c { bad = 1; print "# thread " $0 " not on " c } END { exit bad }'
}
main_on() { # main_on PID CPUS: the process's main thread (its lcore) may run on CPUS exactly
	[ "$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/task/$1/status")" = "$2" ]
}
get() { curl -sS --max-time 5 "$1"; }
worker_pid() { get "$API/workers/0" | jq -e 'select(.state == "running") | .pid'; }
parked_pid() { get "$API/standbys" | jq -e '[.[] | select(.state == "parked" and .pid > 0)][0].pid'; }

# --- 1. refusals, each naming its field ------------------------------------------------------
refuse() { # refuse DESC JQ FIELD_TEXT [ENV=V]
	base "$2" >"$TMP/bad.json"
	out=$(env ${4:-X=1} timeout 20 "$BUILD/primary/spanbox-primary" -c "$TMP/bad.json" --check 2>&1); rc=$?
	check "1: $1: refused (exit 2) naming $3 ($(head -n 1 <<<"$out" | head -c 200))" \
		cond "[ $rc = 2 ] && grep -qF '$3' <<<\"\$out\""
}
refuse "a CPU this machine does not have" '.workers.cpus = [999]' "workers.cpus[0]: CPU 999 does not exist or is offline"
refuse "an offline CPU (SBX_TEST_ONLINE_CPUS=0)" '.workers.cpus = [1]' "workers.cpus[0]: CPU 1 does not exist or is offline" SBX_TEST_ONLINE_CPUS=0
refuse "two workers on one CPU" '.workers.count = 2 | .workers.lcores = [109, 111] | .workers.cpus = [1, 1]' \
	"workers.cpus[1]: CPU 1 is already the CPU of worker 0"
refuse "a worker on a housekeeping CPU" '.workers.cpus = [1] | .eal.housekeeping_cpus = "0-1"' \
	"workers.cpus[0]: CPU 1 is in eal.housekeeping_cpus"
refuse "fewer CPUs than workers" '.workers.count = 2 | .workers.lcores = [109, 111] | .workers.cpus = [1]' \
	"workers.cpus: 1 entries, expected workers.count = 2"
refuse "no CPU left for housekeeping" '.eal.cpus = "1" | .workers.cpus = [1]' "eal.housekeeping_cpus: eal.cpus (1) less workers.cpus leaves no CPU"
refuse "an offline housekeeping CPU" '.workers.cpus = [1] | .eal.housekeeping_cpus = "0,5"' "eal.housekeeping_cpus: CPU 5 does not exist or is offline"
refuse "not a CPU list" '.eal.housekeeping_cpus = "1-"' "eal.housekeeping_cpus"

# --- 2. pinned: worker 0 on CPU 1, everything else on CPU 0 ----------------------------------
base '.workers.cpus = [1]' >"$TMP/pin.json"
inst_start_both pl "$TMP/pin.json" "$API" || exit 1
grep 'lcores:' "$TMP/pl-primary.log" | sed 's/^/# /'
wait_for 100 worker_pid >/dev/null; wp=$(worker_pid)
wait_for 100 parked_pid >/dev/null; sp=$(parked_pid)
threads "$wp" | sed 's/^/# worker: /'
check "2: worker 0 (pid $wp): its lcore's thread runs on CPU 1 only" main_on "$wp" 1
check "2: ... its other threads (EAL's control threads) on the housekeeping CPU 0" all_on "$wp" 0 "$wp"
check "2: the primary's threads (pid $INST_PRIMARY: $(ls /proc/$INST_PRIMARY/task | wc -l)) all on CPU 0" all_on "$INST_PRIMARY" 0
check "2: mgmt's threads (pid $INST_MGMT: $(ls /proc/$INST_MGMT/task | wc -l)) all on CPU 0" all_on "$INST_MGMT" 0
check "2: the parked standby's threads (pid $sp) all on CPU 0" all_on "$sp" 0
sys=$(get "$API/system")
check "2: /system placement: pinned, housekeeping CPUs 0 ($(jq -c .placement <<<"$sys"))" \
	jq -e '.placement.pinned == true and .placement.housekeeping_cpus == "0"' <<<"$sys"
iso=$(cat /sys/devices/system/cpu/isolated 2>/dev/null)
check "2: /system kernel: isolcpus as /proc/cmdline says ($(jq -c .kernel <<<"$sys"))" \
	jq -e --arg iso "$iso" --arg want "$(tr ' ' '\n' </proc/cmdline | sed -n 's/^isolcpus=//p' | tail -n 1)" \
	'.kernel.isolated_cpus == $iso and (.kernel.isolcpus // "") == $want' <<<"$sys"
if [ -z "$iso" ]; then
	check "2: /system names worker 0's CPU 1 as not isolated (no isolcpus here)" \
		jq -e '.placement.workers_not_isolated == [{"worker": 0, "cpu": 1}]' <<<"$sys"
else
	echo "ok - 2: workers_not_isolated # SKIP the kernel isolates CPUs $iso here"
fi
check "2: /system lcores: the worker's lcore 109 on CPU 1, the primary's on 0" \
	jq -e '(.lcores[] | select(.id == 109) | .cpus) == "1" and (.lcores[] | select(.id == 107) | .cpus) == "0"' <<<"$sys"

# --- 3. kill -9 of worker 0: the standby takes its place and its CPU -------------------------
kill -9 "$wp"
took() { local p; p=$(worker_pid) && [ "$p" != "$wp" ] && [ "$p" = "$sp" ]; }
check "3: the parked standby (pid $sp) took worker 0's place" wait_for 100 took
threads "$sp" | sed 's/^/# successor: /'
check "3: ... its lcore's thread now runs on worker 0's CPU 1" wait_for 20 main_on "$sp" 1
check "3: ... its other threads stay on CPU 0" all_on "$sp" 0 "$sp"
wait_for 100 parked_pid >/dev/null; np=$(parked_pid)
check "3: a new standby parks on CPU 0 (pid $np)" all_on "$np" 0
inst_cleanup

# --- 4. without workers.cpus: today's layout, every thread floats on eal.cpus -----------------
base '.' >"$TMP/float.json"
inst_start_both pl2 "$TMP/float.json" "$API" || exit 1
wait_for 100 worker_pid >/dev/null; wp=$(worker_pid)
check "4: no workers.cpus: the worker's threads all float on 0-1" all_on "$wp" 0-1
check "4: ... and the primary's" all_on "$INST_PRIMARY" 0-1
check "4: /system placement: not pinned" bash -c "curl -sS --max-time 5 '$API/system' | jq -e '.placement.pinned == false' >/dev/null"
