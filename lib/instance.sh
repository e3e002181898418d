# SPDX-License-Identifier: BSD-3-Clause
# Start, wait for, poll and stop one spanbox instance: the one sequence the launcher (./spanbox),
# the tests (tests/lib/instance.sh) and the benchmarks (bench/*.sh) use. Sourced; needs only bash,
# curl and jq; sets no traps, prints nothing unless asked, and works under `set -euo pipefail` (call
# the functions that may return non-zero in a condition, e.g. `sbx_wait_ready ... || rc=$?`).
#
#   sbx_start_primary BIN CONFIG READY LOG [ENV=VALUE...]
#       spanbox-primary -c CONFIG --ready-file READY in the background, in a session of its own
#       (setsid: a Ctrl-C of the caller's terminal does not reach it), no core files, stdin from
#       /dev/null, stdout and stderr appended to LOG. READY is removed first. Pid in SBX_PID.
#   sbx_wait_ready PID READY TENTHS
#       0 once READY exists; 2 when PID ended first (its exit status in SBX_EXIT when PID is a child
#       of this shell, else empty); 1 after TENTHS tenths of a second.
#   sbx_start_mgmt BIN CONFIG LOG [ARGS...]
#       spanbox-mgmt -c CONFIG ARGS in the background, the same way. Pid in SBX_PID.
#   sbx_wait_api PID URL TENTHS [JQ] [OUT]
#       Poll URL (GET, 2 s per request) until its JSON answer makes JQ true (default: the appliance
#       is up, as /api/v1/health and /api/v1/status both say it) - 0; 2 when PID ended first; 1
#       after TENTHS tenths of a second. The last answer is left in OUT when given.
#   sbx_stop_pid PID SECONDS
#       SIGTERM, wait up to SECONDS, then SIGKILL; reaps PID when it is a child of this shell.
#       0 when it stopped on SIGTERM (or was not running), 1 when it had to be killed.
#   sbx_alive PID   0 while PID runs.

SBX_UP_JQ='(.appliance == "up") or (.appliance.state == "up")'

sbx_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

sbx_start_primary() {
	local bin=$1 cfg=$2 ready=$3 log=$4
	shift 4
	rm -f "$ready"
	( ulimit -c 0; exec env "$@" setsid "$bin" -c "$cfg" --ready-file "$ready" </dev/null >>"$log" 2>&1 ) &
	SBX_PID=$!
}

sbx_start_mgmt() {
	local bin=$1 cfg=$2 log=$3
	shift 3
	( ulimit -c 0; exec setsid "$bin" -c "$cfg" "$@" </dev/null >>"$log" 2>&1 ) &
	SBX_PID=$!
}

sbx_wait_ready() {
	local pid=$1 ready=$2 tenths=$3 i
	SBX_EXIT=
	for ((i = 0; i < tenths; i++)); do
		[ -f "$ready" ] && return 0
		if ! sbx_alive "$pid"; then
			[ -f "$ready" ] && return 0
			wait "$pid" 2>/dev/null && SBX_EXIT=0 || SBX_EXIT=$?
			[ "$SBX_EXIT" = 127 ] && SBX_EXIT= # not our child: the status is unknown
			return 2
		fi
		sleep 0.1
	done
	[ -f "$ready" ] && return 0
	return 1
}

sbx_wait_api() {
	local pid=$1 url=$2 tenths=$3 expr=${4:-$SBX_UP_JQ} out=${5:-} i body
	for ((i = 0; i < tenths; i++)); do
		sbx_alive "$pid" || return 2
		if body=$(curl -fsS --max-time 2 "$url" 2>/dev/null) && jq -e "$expr" >/dev/null 2>&1 <<<"$body"; then
			[ -n "$out" ] && printf '%s\n' "$body" >"$out"
			return 0
		fi
		[ -n "$out" ] && printf '%s\n' "$body" >"$out"
		sleep 0.1
	done
	return 1
}

sbx_stop_pid() {
	local pid=$1 tenths=$(( ${2:-10} * 10 )) i rc=0
	if sbx_alive "$pid"; then
		kill -TERM "$pid" 2>/dev/null
		for ((i = 0; i < tenths; i++)); do sbx_alive "$pid" || break; sleep 0.1; done
		if sbx_alive "$pid"; then
			kill -KILL "$pid" 2>/dev/null
			rc=1
		fi
	fi
	wait "$pid" 2>/dev/null || true
	return $rc
}

# sbx_net_up CONFIG OWNED
#   The demo network of CONFIG, as ./spanbox start makes it once the primary is ready: each tap
#   (or tun) port's interface moves into its ports[].netns (created when missing; its name is
#   appended to the file OWNED, so that sbx_net_down deletes only what was made here) and gets its
#   ports[].address; an interface without netns is set up where it is. 0, or 1 with the reason on
#   stderr.
# sbx_net_down OWNED
#   Delete the namespaces listed in OWNED, then OWNED.
sbx_net_up() {
	local cfg=$1 owned=$2 i devargs ns addr iface
	while IFS=$'\t' read -r i devargs ns addr; do
		case "$devargs" in net_tap*|net_tun*) ;; *) continue ;; esac
		iface=$(sed -n 's/.*iface=\([^,]*\).*/\1/p' <<<"$devargs")
		[ -n "$iface" ] || continue
		if [ -n "$ns" ]; then
			if ! ip netns list | grep -qw "^$ns"; then
				ip netns add "$ns" || return 1
				echo "$ns" >>"$owned"
			fi
			ip link set "$iface" netns "$ns" || { echo "ports[$i]: cannot move $iface into netns $ns" >&2; return 1; }
			ip -n "$ns" link set lo up
			ip -n "$ns" link set "$iface" up || return 1
			if [ -n "$addr" ]; then ip -n "$ns" addr replace "$addr" dev "$iface" || return 1; fi
		else
			ip link set "$iface" up || { echo "ports[$i]: no interface $iface" >&2; return 1; }
			if [ -n "$addr" ]; then ip addr replace "$addr" dev "$iface" || return 1; fi
		fi
	done < <(jq -r '.ports | to_entries[] | [.key, .value.devargs, .value.netns // "", .value.address // ""] | @tsv' "$cfg")
}

sbx_net_down() {
	local ns
	[ -f "$1" ] || return 0
	while read -r ns; do
		[ -n "$ns" ] && ip netns del "$ns" 2>/dev/null
	done <"$1"
	rm -f "$1"
}
