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
# stopped, 1. Logs: LOG.primary.log, LOG.mgmt.log. READY_S (default 30): how long the primary may
# take to be ready (maps of 65,536 rules are built before it is).
start_spanbox() {
	local cfg=$1 log=$2 ready=$3
	STARTED=1
	sbx_start_primary "$PRIMARY" "$cfg" "$TMP/ready" "$log.primary.log"
	ppid=$SBX_PID
	OURS+=("$ppid")
	if ! sbx_wait_ready "$ppid" "$TMP/ready" $((${READY_S:-30} * 10)); then
		echo "$BENCH: spanbox-primary not ready in ${READY_S:-30} s; its log:" >&2; tail -20 "$log.primary.log" >&2
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

# run_delay PID: ns the main thread of PID has waited for a CPU while runnable (schedstat field 2):
# a busy-polling worker never sleeps, so over a window this is the time others took its CPU, and
# that time lands in the loops that find frames when it gets the CPU back (busy_cycles)
run_delay() { awk '{print $2}' "/proc/$1/task/$1/schedstat" 2>/dev/null || echo 0; }

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

# demote_arg: sbx-ringgen's --demote when DEMOTE=1 (bench/maps.sh, bench/flows.sh: the frames left in
# the last-level cache as a NIC's DMA with DDIO leaves them; tests/tools/sbx-ringgen.c); else nothing
demote_arg() { [ "${DEMOTE:-0}" = 1 ] && echo --demote; }
# ratio_of A B: A / B to 2 decimals, "-" when either is "-" or B is not above 0
ratio_of() { [ "$1" != - ] && [ "$2" != - ] && awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}' || echo -; }
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

# ---------------------------------------------------------------- the DPDK benches (forward.sh, mirror.sh, placement.sh)
# need_spanbox_bins TOOL...: die unless run as root with the three binaries built and TOOLs on PATH
need_spanbox_bins() {
	local b t
	[ "$(id -u)" -eq 0 ] || die "run as root (DPDK needs hugepages and /var/run/dpdk)"
	for b in "$PRIMARY" "$MGMT" "$WORKER"; do
		[ -x "$b" ] || die "$b missing: build first (ninja -C $BUILD)"
	done
	for t in "$@"; do command -v "$t" >/dev/null || die "$t not found"; done
}

# need_hugepages MB: die (saying how to fix it) unless MB MiB + 32 MiB of EAL margin are free in hugepages
need_hugepages() {
	local kb free total pages
	kb=$(awk '/^Hugepagesize:/ { print $2 }' /proc/meminfo)
	free=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	total=$(awk '/^HugePages_Total:/ { print $2 }' /proc/meminfo)
	pages=$(( ($1 + 32) * 1024 / ${kb:-2048} ))
	if [ -z "$free" ] || [ "$free" -lt "$pages" ]; then
		echo "$BENCH: NOT ENOUGH HUGEPAGES: need $pages free pages of $((kb / 1024)) MiB ($(($1 + 32)) MiB)," \
		     "HugePages_Free is ${free:-?} of ${total:-?}." >&2
		echo "  Other DPDK processes may hold them (ls /dev/hugepages), or raise the pool:" \
		     "echo $((total + pages)) > /proc/sys/vm/nr_hugepages; or lower MEM_MB." >&2
		exit 1
	fi
	log "hugepages: $free of $total pages of $((kb / 1024)) MiB free, $pages needed: ok"
}

# warn_busy: the load average and the processes above 20 % of a CPU, as a "# WARNING" line when
# there are any (other work disturbs the figures; alternating runs only make it hit both sides alike)
warn_busy() {
	local busy
	busy=$(top -b -n 2 -d 0.5 -w 200 2>/dev/null | awk '/^ *PID/ { n++; next } n == 2 && $9 + 0 >= 20 { printf "%s(pid %s, %s%%) ", $12, $1, $9 }')
	log "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc --all) CPUs"
	[ -n "$busy" ] && log "WARNING: busy processes before the benchmark, results may be disturbed: $busy"
	return 0
}

# copy_spanbox_bins: copies of the three binaries under $TMP/bin (PRIMARY, WORKER, MGMT then name
# them), so that a rebuild of $BUILD during the benchmark does not change them. The primary finds
# the worker as ../secondary/spanbox-worker beside itself.
copy_spanbox_bins() {
	mkdir -p "$TMP/bin/primary" "$TMP/bin/secondary" "$TMP/bin/mgmt"
	cp "$PRIMARY" "$TMP/bin/primary/" && cp "$WORKER" "$TMP/bin/secondary/" && cp "$MGMT" "$TMP/bin/mgmt/" ||
		die "cannot copy the spanbox binaries from $BUILD"
	PRIMARY="$TMP/bin/primary/spanbox-primary" WORKER="$TMP/bin/secondary/spanbox-worker" MGMT="$TMP/bin/mgmt/spanbox-mgmt"
}

# bench_mirrors COPY_JSON: the "mirrors" array of the mirror benches: session 1, ERSPAN type II
# over IPv4, sources p0 rx and p1 rx (every forwarded frame mirrored once), destination port
# "mirror", copy COPY_JSON (e.g. {"strategy": "adaptive", "threshold": 512})
bench_mirrors() {
	jq -cn --argjson copy "$1" '[{ id: 1, name: "bench",
		sources: [{ port: "p0", direction: "rx" }, { port: "p1", direction: "rx" }],
		destination: { port: "mirror" },
		encap: { type: "erspan2", src_ip: "192.0.2.1", dst_ip: "192.0.2.2", dst_mac: "02:00:00:00:00:02" },
		copy: $copy }]'
}

# bench_queues NW: workers.queues of NW workers on p0 and p1: worker w polls queue w of both (the
# mirror port's RX queue is never polled: net_null would invent frames there at full rate)
bench_queues() {
	jq -cn --argjson n "$1" '[range(0; $n) as $w | [{ port: "p0", queue: $w }, { port: "p1", queue: $w }]]'
}

# worker_deltas S1 S2: per worker, the deltas between two /status snapshots, one line per worker:
# w fwd rx_pkts rx_bytes mirrored mirrored_bytes copied shared drop_txfull drop_nombuf pid api_cpp
# (fwd = tx_packets of the worker, all ports; the mirror figures are session 1's, 0 without one)
worker_deltas() {
	jq -r -n --slurpfile a "$1" --slurpfile b "$2" '
		def m(s; w; f): (s.mirrors[0].workers[w] // {}) | (f // 0);
		$a[0] as $A | $b[0] as $B |
		range(0; $B.workers | length) as $w |
		[ $w,
		  ([$B.workers[$w].ports[] | .tx_packets] | add) - ([$A.workers[$w].ports[] | .tx_packets] | add),
		  ([$B.workers[$w].ports[] | .rx_packets] | add) - ([$A.workers[$w].ports[] | .rx_packets] | add),
		  ([$B.workers[$w].ports[] | .rx_bytes] | add) - ([$A.workers[$w].ports[] | .rx_bytes] | add),
		  m($B; $w; .mirrored_packets) - m($A; $w; .mirrored_packets),
		  m($B; $w; .mirrored_bytes) - m($A; $w; .mirrored_bytes),
		  m($B; $w; .copied) - m($A; $w; .copied),
		  m($B; $w; .shared) - m($A; $w; .shared),
		  m($B; $w; .drop_txfull) - m($A; $w; .drop_txfull),
		  m($B; $w; .drop_nombuf) - m($A; $w; .drop_nombuf),
		  $B.workers[$w].pid,
		  ($B.workers[$w].cycles_per_packet_total // "-")
		] | map(tostring) | join(" ")'
}

# measure_window WPID LOG: WARMUP s, then GET /status twice DURATION s apart (LOG.s1.json,
# LOG.s2.json); M_T1 M_T2: when the two answers came (date +%s.%N), M_C1 M_C2: the CPU ticks of
# worker WPID just before the first and after the second
measure_window() {
	nap "$WARMUP"
	M_C1=$(cpu_ticks "$1")
	curl -fsS -m 5 "$API/status" -o "$2.s1.json"; M_T1=$(date +%s.%N)
	nap "$DURATION"
	curl -fsS -m 5 "$API/status" -o "$2.s2.json"; M_T2=$(date +%s.%N)
	M_C2=$(cpu_ticks "$1")
}

# thread_cpus PID [TID]: the CPUs one thread may run on (Cpus_allowed_list; default the main thread)
thread_cpus() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/task/${2:-$1}/status" 2>/dev/null; }

# proc_cpus PID: the distinct CPU sets of every thread of PID, e.g. "0" or "1 (main), 0 (4 others)"
proc_cpus() {
	local main t others
	main=$(thread_cpus "$1")
	others=$(for t in /proc/"$1"/task/*; do [ "${t##*/}" = "$1" ] || thread_cpus "$1" "${t##*/}"; done | sort | uniq -c |
		awk '{ printf "%s%s (%d)", (NR > 1 ? ", " : ""), $2, $1 }')
	if [ -z "$others" ]; then echo "$main"
	elif [ "$others" = "$main ($(( $(ls /proc/"$1"/task | wc -l) - 1 )))" ]; then echo "$main (every thread)"
	else echo "$main (main), others $others"; fi
}

# cpus_of CPULIST: the CPU numbers of a kernel CPU list ("0-2,5"), one a line
cpus_of() { tr ',' '\n' <<<"$1" | awk -F- 'NF { for (c = $1; c <= (NF > 1 ? $2 : $1); c++) print c }'; }

# cpulist CPUS: a kernel CPU list ("0-2,5") in the kernel's own notation, from the CPU numbers
cpulist() {
	cpus_of "$1" | sort -n | uniq |
		awk 'NR == 1 { s = p = $1; next } $1 == p + 1 { p = $1; next }
		     { o = o (o ? "," : "") (s == p ? s : s "-" p); s = p = $1 }
		     END { if (NR) print o (o ? "," : "") (s == p ? s : s "-" p) }'
}

# all_threads_on PID CPUS: 0 when every thread of PID may run on CPUS exactly (kernel notation)
all_threads_on() {
	local t
	for t in /proc/"$1"/task/*; do [ "$(thread_cpus "$1" "${t##*/}")" = "$2" ] || return 1; done
}

# check_pinned WORKER_CPUS HK_CPUS PRIMARY_PID MGMT_PID WORKER_PID...: 0 when worker i's main
# thread (its lcore) runs on CPU i of WORKER_CPUS (a list of numbers) alone, its other threads
# (EAL's) and every thread of the primary and mgmt on HK_CPUS; else what is wrong on stderr, 1
check_pinned() {
	local wc=($1) hk i=0 p t bad=0 pp=$3 mp=$4
	hk=$(cpulist "$2")
	shift 4
	for p in "$@"; do
		[ "$(thread_cpus "$p")" = "${wc[i]}" ] ||
			{ echo "$BENCH: worker $i (pid $p) runs on $(thread_cpus "$p"), expected CPU ${wc[i]}" >&2; bad=1; }
		for t in /proc/"$p"/task/*; do
			[ "${t##*/}" = "$p" ] || [ "$(thread_cpus "$p" "${t##*/}")" = "$hk" ] ||
				{ echo "$BENCH: worker $i (pid $p) thread ${t##*/} runs on $(thread_cpus "$p" "${t##*/}"), expected $hk" >&2; bad=1; }
		done
		i=$((i + 1))
	done
	for p in "$pp" "$mp"; do
		all_threads_on "$p" "$hk" ||
			{ echo "$BENCH: pid $p ($(cat /proc/"$p"/comm 2>/dev/null)) runs on $(proc_cpus "$p"), expected $hk" >&2; bad=1; }
	done
	return "$bad"
}

# sched_counts PID: "migrations involuntary_switches" of PID's main thread so far (migrations
# from /proc/PID/sched: "-" without CONFIG_SCHED_DEBUG)
sched_counts() {
	local m s
	m=$(awk '$1 == "se.nr_migrations" { print $3 }' "/proc/$1/task/$1/sched" 2>/dev/null)
	s=$(awk '$1 == "nonvoluntary_ctxt_switches:" { print $2 }' "/proc/$1/task/$1/status" 2>/dev/null)
	echo "${m:--} ${s:-0}"
}

# stop_workers: stop every pid of the array WORKER_PIDS that still is a spanbox-worker (pids get
# reused), 1 s each, and empty it
stop_workers() {
	local pid
	for pid in "${WORKER_PIDS[@]}"; do stop_worker "$pid" 1; done
	WORKER_PIDS=()
}

# workers_bench_cleanup: the cleanup of mirror.sh and placement.sh on EXIT, and on INT TERM HUP
# ("interrupted", exit 130): stop_ours, stop_workers, the nap (NAP_PID), our prefix's hugepage
# files once started (STARTED=1, SBX_PREFIX), $TMP (kept with KEEP_TMP=1)
workers_bench_cleanup() {
	trap - EXIT INT TERM HUP
	stop_ours
	stop_workers
	alive "$NAP_PID" && kill "$NAP_PID" 2>/dev/null
	[ "$STARTED" = 1 ] && remove_prefix_files "$SBX_PREFIX"
	if [ -n "$TMP" ] && [ -d "$TMP" ]; then
		if [ "$KEEP_TMP" = 1 ]; then echo "# logs kept in $TMP"; else rm -rf "$TMP"; fi
	fi
}
# workers_bench_init: the bookkeeping of mirror.sh and placement.sh, empty (OURS: pids the script
# started, the workers being the primary's children stopped through it; WORKER_PIDS: the running
# workers' pids, only to make sure they are gone; STARTED=1 once a DPDK process ran: only then are
# the prefix files ours; NAP_PID; TMP), and the traps of workers_bench_cleanup
workers_bench_init() {
	OURS=() WORKER_PIDS=() NAP_PID="" STARTED=0 TMP=""
	trap workers_bench_cleanup EXIT
	trap 'echo; echo "$BENCH: interrupted, cleaning up" >&2; workers_bench_cleanup; exit 130' INT TERM HUP
}
