# Helpers for tests that run their own appliance instance (sourced after common.sh), on the one
# start / wait / stop sequence of lib/instance.sh (which the launcher and the benchmarks use too).
# Every instance must use its own file prefix, lcore ids, mgmt port and database (under $TMP).
#   inst_start_primary NAME CONFIG [ENV=VALUE...]  primary in the background; 0 once ready (30 s max)
#   inst_start_mgmt NAME CONFIG API [ARGS...]      mgmt in the background; 0 once /health says up (10 s max)
#   inst_start_both NAME CONFIG API                the two above with a TAP line each ("primary ready",
#                                                  "mgmt up"); 1 when either failed (the primary's log tail
#                                                  printed as comments)
#   inst_token CONFIG                              the API's bearer token (spanbox-mgmt --print-token)
#   inst_stop_pid PID                              SIGTERM, 10 s, then SIGKILL
#   inst_cleanup                                   stop every process started here (mgmt first)
#   inst_test NAME PORT                            the setup of a test with an instance of its own:
#                                                  PRIMARY (the binary), PREFIX=NAME-<pid>, PORT,
#                                                  API=http://127.0.0.1:PORT/api/v1,
#                                                  TOKEN=NAME-token-0123456789abcdef, AUTH (its
#                                                  Authorization header) and the EXIT trap
#                                                  inst_test_cleanup (inst_cleanup, then $TMP removed
#                                                  unless KEEP=1)
# Logs (appended): $TMP/NAME-primary.log, $TMP/NAME-mgmt.log. Pids: $INST_PRIMARY, $INST_MGMT.
source "$ROOT/lib/instance.sh"
INST_PIDS=()
INST_PRIMARY= INST_MGMT=

inst_start_primary() {
	local name=$1 cfg=$2; shift 2
	sbx_start_primary "$BUILD/primary/spanbox-primary" "$cfg" "$TMP/$name.ready" "$TMP/$name-primary.log" "$@"
	INST_PRIMARY=$SBX_PID
	INST_PIDS+=("$INST_PRIMARY")
	sbx_wait_ready "$INST_PRIMARY" "$TMP/$name.ready" 300
}

inst_start_mgmt() {
	local name=$1 cfg=$2 api=$3; shift 3
	sbx_start_mgmt "$BUILD/mgmt/spanbox-mgmt" "$cfg" "$TMP/$name-mgmt.log" "$@"
	INST_MGMT=$SBX_PID
	INST_PIDS+=("$INST_MGMT")
	sbx_wait_api "$INST_MGMT" "$api/health" 100
}

inst_start_both() {
	local name=$1 cfg=$2 api=$3
	inst_start_primary "$name" "$cfg"
	check "primary ready" [ -f "$TMP/$name.ready" ] || { tail -20 "$TMP/$name-primary.log" | sed 's/^/# /'; return 1; }
	inst_start_mgmt "$name" "$cfg" "$api"
	check "mgmt up" [ $? -eq 0 ]
}

inst_token() { "$BUILD/mgmt/spanbox-mgmt" -c "$1" --print-token; }

inst_stop_pid() { sbx_stop_pid "$1" 10; return 0; }

inst_cleanup() {
	local i
	for ((i = ${#INST_PIDS[@]} - 1; i >= 0; i--)); do inst_stop_pid "${INST_PIDS[i]}"; done
	INST_PIDS=()
}

inst_test() {
	PRIMARY="$BUILD/primary/spanbox-primary"
	PREFIX=$1-$$
	PORT=$2 API=http://127.0.0.1:$2/api/v1
	TOKEN=$1-token-0123456789abcdef
	AUTH="Authorization: Bearer $TOKEN"
	trap inst_test_cleanup EXIT
}

inst_test_cleanup() { inst_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$TMP"; }

# The demo appliance of config/default.json under other names (tests 42, 95), driven through pid
# files so that scripts of their own (the browser test's) can stop and start it too. Need CFG, TMP,
# API and NSA (the namespace of port p0; p1 answers 198.18.0.2 in its own).
#   demo_start_primary [ENV=VALUE...]  primary ($TMP/primary.pid, log $TMP/primary.log), then the
#                                      demo network (sbx_net_up), then ping from NSA to 198.18.0.2,
#                                      10 a second, at most 5 min ($TMP/ping.pid); 1 when not ready in 30 s
#   demo_start_mgmt                    mgmt ($TMP/mgmt.pid, $TMP/mgmt.log); 0 once /health says up (15 s)
#   stop_pidfile NAME                  SIGCONT, SIGTERM the pid in $TMP/NAME.pid, 10 s, then SIGKILL
#   demo_stop                          ping, mgmt, primary stopped; NSA and NSB deleted
demo_start_primary() {
	sbx_start_primary "$BUILD/primary/spanbox-primary" "$CFG" "$TMP/ready" "$TMP/primary.log" "$@"
	echo "$SBX_PID" >"$TMP/primary.pid"
	sbx_wait_ready "$SBX_PID" "$TMP/ready" 300 || { echo "# primary not ready"; tail -n 20 "$TMP/primary.log"; return 1; }
	sbx_net_up "$CFG" "$TMP/netns.owned" || { echo "# demo network of $CFG failed"; return 1; }
	stop_pidfile ping
	ip netns exec "$NSA" timeout 300 ping -q -i 0.1 198.18.0.2 >>"$TMP/ping.log" 2>&1 &
	echo $! >"$TMP/ping.pid"
}
demo_start_mgmt() {
	sbx_start_mgmt "$BUILD/mgmt/spanbox-mgmt" "$CFG" "$TMP/mgmt.log"
	echo "$SBX_PID" >"$TMP/mgmt.pid"
	sbx_wait_api "$SBX_PID" "$API/health" 150
}
stop_pidfile() {
	local pid
	pid=$(cat "$TMP/$1.pid" 2>/dev/null) || return 0
	kill -CONT "$pid" 2>/dev/null
	sbx_stop_pid "$pid" 10
	rm -f "$TMP/$1.pid"
}
demo_stop() {
	stop_pidfile ping
	stop_pidfile mgmt
	stop_pidfile primary
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	rm -f "$TMP/netns.owned"
}

# standby_pcap_config FILE PREFIX MGMT_PORT DB OUT PPS: the hand-over tests' instance (91, 92): p0
# replays $IN at PPS frames/s into p1, written to OUT, cross-connected; 2 workers on lcores 5, 6,
# one standby on 7, primary 3, mgmt 4.
standby_pcap_config() {
	cat >"$1" <<JSON
{
  "eal": {"file_prefix": "$2", "socket_mem_mb": 256, "primary_lcore": 3, "mgmt_lcore": 4},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$IN,pps=$6"},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$5"}
  ],
  "workers": {"count": 2, "lcores": [5, 6], "standby": 1, "standby_lcores": [7]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mgmt": {"port": $3, "database": "$4"}
}
JSON
}

# standby_pcap_start TAG NAME FILE PREFIX MGMT_PORT DB OUT PPS API: standby_pcap_config, then its
# primary and mgmt with a TAP line each ("TAG: primary with the pcap config ready (N frames at
# PPS/s)", "TAG: mgmt up on port MGMT_PORT"; TAG "" for none). Sets N (frames of $IN), AUTH (the
# admin's header) and INST_PRIMARY / INST_MGMT.
standby_pcap_start() {
	local tag=${1:+$1: } name=$2 cfg=$3 prefix=$4 port=$5 db=$6 out=$7 pps=$8 api=$9
	N=$(capinfos -Mc "$IN" | awk '/Number of packets/ {print $NF}')
	standby_pcap_config "$cfg" "$prefix" "$port" "$db" "$out" "$pps"
	inst_start_primary "$name" "$cfg"
	check "${tag}primary with the pcap config ready ($N frames at $pps/s)" [ $? -eq 0 ]
	inst_start_mgmt "$name" "$cfg" "$api"
	check "${tag}mgmt up on port $port" [ $? -eq 0 ]
	AUTH="Authorization: Bearer $(inst_token "$cfg")"
}
