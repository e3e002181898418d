# SPDX-License-Identifier: BSD-3-Clause
# Helpers shared by the bench/ scripts (sourced). BENCH is the script's name for messages.
BENCH=${BENCH:-${0##*/}}

die() { echo "$BENCH: $*" >&2; exit 1; }
log() { echo "# $*"; }
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

# stop_pid PID SECONDS: SIGTERM, wait at most SECONDS, then SIGKILL. Only for our own pids.
stop_pid() {
	local pid=$1 limit=$(( $2 * 10 )) i=0
	alive "$pid" || { wait "$pid" 2>/dev/null; return 0; }
	kill -TERM "$pid" 2>/dev/null
	while alive "$pid" && [ $i -lt $limit ]; do sleep 0.1; i=$((i + 1)); done
	if alive "$pid"; then
		echo "$BENCH: pid $pid did not stop in $2 s: SIGKILL" >&2
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
	return 0
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

# cpu_ticks PID [TID]: utime+stime of one thread (default: the main thread), in clock ticks
cpu_ticks() {
	local s
	s=$(cat "/proc/$1/task/${2:-$1}/stat" 2>/dev/null) || { echo 0; return; }
	s=${s##*) }
	set -- $s
	echo $(( ${12} + ${13} ))
}

fmt() { awk "BEGIN { printf \"%.${2:-2}f\", $1 }"; }
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
