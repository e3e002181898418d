# Helpers for tests that run their own appliance instance (sourced after common.sh).
# Every instance must use its own file prefix, lcore ids, mgmt port and database (under $TMP).
#   inst_start_primary NAME CONFIG [ENV=VALUE...]  primary in the background; 0 once ready (20 s max)
#   inst_start_mgmt NAME CONFIG API [ARGS...]      mgmt in the background; 0 once /health says up (10 s max)
#   inst_token CONFIG                              the API's bearer token (spanbox-mgmt --print-token)
#   inst_stop_pid PID                              SIGTERM, 10 s, then SIGKILL
#   inst_cleanup                                   stop every process started here (mgmt first)
# Logs: $TMP/NAME-primary.log, $TMP/NAME-mgmt.log. Pids: $INST_PRIMARY, $INST_MGMT.
INST_PIDS=()
INST_PRIMARY= INST_MGMT=


inst_start_primary() {
	local name=$1 cfg=$2; shift 2
	rm -f "$TMP/$name.ready"
	( ulimit -c 0; exec env "$@" setsid "$BUILD/primary/spanbox-primary" -c "$cfg" --ready-file "$TMP/$name.ready" \
		</dev/null >"$TMP/$name-primary.log" 2>&1 ) &
	INST_PRIMARY=$!
	INST_PIDS+=("$INST_PRIMARY")
	wait_for 200 bash -c "[ -f '$TMP/$name.ready' ] || ! kill -0 $INST_PRIMARY 2>/dev/null" &&
		[ -f "$TMP/$name.ready" ]
}

inst_start_mgmt() {
	local name=$1 cfg=$2 api=$3; shift 3
	setsid "$BUILD/mgmt/spanbox-mgmt" -c "$cfg" "$@" </dev/null >"$TMP/$name-mgmt.log" 2>&1 &
	INST_MGMT=$!
	INST_PIDS+=("$INST_MGMT")
	wait_for 100 bash -c "curl -fsS --max-time 2 '$api/health' 2>/dev/null | grep -q '\"appliance\":\"up\"' || ! kill -0 $INST_MGMT 2>/dev/null" &&
		kill -0 "$INST_MGMT" 2>/dev/null
}

inst_token() { "$BUILD/mgmt/spanbox-mgmt" -c "$1" --print-token; }

inst_stop_pid() {
	kill -TERM "$1" 2>/dev/null || return 0
	wait_for 100 bash -c "! kill -0 $1 2>/dev/null" || kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

inst_cleanup() {
	local i
	for ((i = ${#INST_PIDS[@]} - 1; i >= 0; i--)); do inst_stop_pid "${INST_PIDS[i]}"; done
	INST_PIDS=()
}
