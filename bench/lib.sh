# SPDX-License-Identifier: BSD-3-Clause
# Helpers shared by the bench/ scripts (sourced). BENCH is the script's name for messages.
BENCH=${BENCH:-${0##*/}}

# start / wait-ready / poll-API / stop: the sequence the launcher and the tests use (sbx_*)
source "$(dirname "${BASH_SOURCE[0]}")/../lib/instance.sh"

die() { echo "$BENCH: $*" >&2; exit 1; }
log() { echo "# $*"; }
alive() { sbx_alive "$1"; }

# stop_pid PID SECONDS: SIGTERM, wait at most SECONDS, then SIGKILL (said on stderr). Only our own pids.
stop_pid() { sbx_stop_pid "$1" "$2" || echo "$BENCH: pid $1 did not stop in $2 s: SIGKILL" >&2; return 0; }

# spanbox_bins: PRIMARY, MGMT, WORKER (the binaries in $BUILD), API (mgmt on $MGMT_PORT), CLK_TCK
spanbox_bins() {
	PRIMARY="$BUILD/primary/spanbox-primary"
	MGMT="$BUILD/mgmt/spanbox-mgmt"
	WORKER="$BUILD/secondary/spanbox-worker"
	API="http://127.0.0.1:$MGMT_PORT/api/v1"
	CLK_TCK=$(getconf CLK_TCK)
}

# stop_ours: stop every pid in the array OURS, newest first (mgmt before the primary: mgmt
# re-attaches when the primary goes away), and empty it
stop_ours() {
	local i
	for (( i = ${#OURS[@]} - 1; i >= 0; i-- )); do alive "${OURS[i]}" && stop_pid "${OURS[i]}" 10; done
	OURS=()
}

# stop_worker PID SECONDS: stop a worker pid only while it still is a spanbox-worker (pids get reused)
stop_worker() {
	if alive "$1" && [ "$(cat /proc/"$1"/comm 2>/dev/null)" = spanbox-worker ]; then stop_pid "$1" "$2"; fi
	return 0
}

# start_spanbox CONFIG LOG READY_JQ: the primary of CONFIG (ready file $TMP/ready) and its mgmt, in
# the background, their pids in ppid and mpid (the caller's locals) and in OURS; 0 once mgmt's
# /status makes READY_JQ true (that answer in LOG.s0.json). Else the log's tail on stderr, both
# stopped, 1. Logs: LOG.primary.log, LOG.mgmt.log.
start_spanbox() {
	local cfg=$1 log=$2 ready=$3
	STARTED=1
	sbx_start_primary "$PRIMARY" "$cfg" "$TMP/ready" "$log.primary.log"
	ppid=$SBX_PID
	OURS+=("$ppid")
	if ! sbx_wait_ready "$ppid" "$TMP/ready" 300; then
		echo "$BENCH: spanbox-primary not ready in 30 s; its log:" >&2; tail -20 "$log.primary.log" >&2
		stop_ours; return 1
	fi
	sbx_start_mgmt "$MGMT" "$cfg" "$log.mgmt.log"
	mpid=$SBX_PID
	OURS+=("$mpid")
	if ! sbx_wait_api "$mpid" "$API/status" 200 "$ready" "$log.s0.json"; then
		echo "$BENCH: spanbox API not answering on port $MGMT_PORT in 20 s; mgmt log:" >&2
		tail -20 "$log.mgmt.log" >&2
		stop_ours; return 1
	fi
}

# Hugepage files and runtime dir of one of OUR prefixes (never another instance's).
remove_prefix_files() {
	local prefix=$1 mnt
	while read -r _ mnt type _; do
		[ "$type" = hugetlbfs ] && rm -f "$mnt/${prefix}map_"*
	done </proc/mounts
	rm -rf "/var/run/dpdk/$prefix"
}

# nap SECONDS: a sleep that a signal handler can cut short (NAP_PID)
nap() { sleep "$1" & NAP_PID=$!; wait "$NAP_PID"; NAP_PID=""; }

# cpu_ticks PID [TID]: utime+stime of one thread (default: the main thread; TID "" = every thread of
# the process), in clock ticks
cpu_ticks() {
	local s f="/proc/$1/task/${2-$1}/stat"
	[ -z "${2-x}" ] && f="/proc/$1/stat"
	s=$(cat "$f" 2>/dev/null) || { echo 0; return; }
	s=${s##*) }
	set -- $s
	echo $(( ${12} + ${13} ))
}

# spanbox_rev: the commit the binaries were built from, "+ uncommitted changes" when the C sources
# differ from it (SPANBOX_REV outside a git checkout)
spanbox_rev() {
	local rev
	if rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null); then
		git -C "$ROOT" diff --quiet HEAD -- primary secondary shared include mgmt || rev="$rev + uncommitted changes"
	else
		rev="${SPANBOX_REV:-unknown (not a git checkout; set SPANBOX_REV)}"
	fi
	echo "$rev"
}
# machine_line: CPU model, CPU count, kernel
machine_line() { echo "$(lscpu | awk -F': *' '/^Model name/ {print $2}'), $(nproc) CPUs; kernel $(uname -r)"; }

fmt() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

# capture_bench_config FILE "P M W" MBUFS PORTS DIR QUOTA_MB: the config of a capture bench
# (capture.sh, capture_paced.sh) into FILE: EAL prefix $SBX_PREFIX on CPUs 0-1, lcores P (primary),
# M (mgmt), W (one busy-polling worker), a pool of MBUFS, PORTS (a JSON array of two ports)
# cross-connected, mgmt on $MGMT_PORT with $TOKEN and database $TMP/db, captures into DIR within
# QUOTA_MB MiB
capture_bench_config() {
	local l=($2)
	jq -n --arg pfx "$SBX_PREFIX" --argjson p "${l[0]}" --argjson m "${l[1]}" --argjson w "${l[2]}" \
		--argjson mbufs "$3" --argjson ports "$4" --argjson port "$MGMT_PORT" --arg db "$TMP/db" \
		--arg token "$TOKEN" --arg dir "$5" --argjson quota "$6" '
		{ "eal": {"file_prefix": $pfx, "socket_mem_mb": 512, "primary_lcore": $p, "mgmt_lcore": $m, "cpus": "0-1"},
		  "pool": {"mbufs": $mbufs},
		  "ports": $ports,
		  "workers": {"count": 1, "lcores": [$w], "busy_poll": true},
		  "forwarding": {"xconnects": [[$ports[0].name, $ports[1].name]]},
		  "mgmt": {"port": $port, "database": $db, "token": $token,
		           "captures": {"directory": $dir, "quota_mb": $quota}} }' >"$1"
}

# bench_cleanup DIR: what the EXIT trap of capture.sh and capture_paced.sh does after its own:
# stop_ours, our prefix's hugepage files (once started), DIR, and $TMP (kept with KEEP_TMP=1)
bench_cleanup() {
	stop_ours
	[ "$STARTED" = 1 ] && remove_prefix_files "$SBX_PREFIX"
	rm -rf "$1"
	if [ "${KEEP_TMP:-0}" = 1 ]; then echo "# logs kept in $TMP"; else rm -rf "$TMP"; fi
}
# need_root_and_build: die unless run as root with the primary built
need_root_and_build() {
	[ "$(id -u)" = 0 ] || die "run as root"
	[ -x "$PRIMARY" ] || die "build first (ninja -C build)"
}
