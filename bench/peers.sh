#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/peers.sh - spanbox side by side with Open vSwitch with DPDK (issue #27, docs/BENCHMARKS.md
# "Open vSwitch with DPDK as the peer").
#
# Both run on the same net_null ports (64 B frames, burst 32), their one polling thread on CPU
# $CPU alone (spanbox: workers.cpus; OVS: pmd-cpu-mask), everything else on $HK_CPU (spanbox:
# eal.housekeeping_cpus; OVS: dpdk-lcore-mask, its main thread and the ovsdb-server). OVS is the
# Debian package openvswitch-switch-dpdk (ovs-vswitchd-dpdk, DPDK 22.11 as spanbox), started by
# this script with its own ovsdb-server and database in a temp dir, EAL --no-pci --in-memory: it
# touches no system OVS and no NIC. Scenarios (SCENARIOS):
#   forward   a cross-connect p0 <-> p1 (OVS: two OpenFlow flows in_port=p0,actions=p1 and back)
#   mirror    the same, and every frame received on p0 and p1 mirrored unchanged to a third port
#             "tool" (spanbox: a SPAN session, sources p0 rx and p1 rx; OVS: a Mirror with
#             select-src-port=p0,p1 output-port=tool, created in the same transaction as the
#             ports: OVS applies a Mirror only to flows translated after it exists); the tool port
#             is net_null with no-rx=1 in both (no frames invented there to poll)
#   rulesN    (e.g. rules1024, rules16384) the cross-connect, and every frame mirrored to "tool" by
#             a rule table of N rules: N - 1 specific ones (an IPv4 /32 source, a /24 destination,
#             TCP, one destination port: none matches net_null's zeroed frames) and a last rule
#             that takes every frame. spanbox: one map (sources p0 rx and p1 rx, rte_acl); OVS:
#             the same rules as OpenFlow flows, in priority order, each output to the tool port
#             plus the peer port (2 N flows: one per input port). Both walk their whole rule set
#             for a frame; OVS's caches (EMC, megaflows) then serve net_null's identical frames,
#             rte_acl classifies every frame.
# Each scenario runs RUNS pairs (spanbox first in odd pairs, OVS first in even ones); each run
# measures the frames forwarded per second (tx of p0 + p1) over DURATION s after WARMUP s, and
# the tool port's tx. Prints a table, the paired ratios spanbox/OVS and their median per scenario,
# and the issue's target for it (forward >= 2.5, mirror >= 4, rules >= 3).
#
# Run as root, under the machine's DPDK lock when others share it:
#   flock /tmp/sbx-e2e.lock bench/peers.sh       (about 2 x RUNS x scenarios x (DURATION + 8) s)
# Environment (defaults in brackets): DURATION [8], WARMUP [2], RUNS [2], SCENARIOS [forward mirror
#   rules1024 rules16384],
#   PKT_SIZE [64], BURST [32], CPU [1], HK_CPU [0], MEM_MB [256], MGMT_PORT [18094], BUILD
#   [repo/build], OVS_VSWITCHD [/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk], KEEP_TMP [0].
# Needs: apt-get install openvswitch-switch-dpdk (the script installs nothing; the system
# openvswitch-switch service it brings along is not used, and stays as it was).
set -u
DURATION=${DURATION:-8}
WARMUP=${WARMUP:-2}
RUNS=${RUNS:-2}
SCENARIOS=${SCENARIOS:-forward mirror rules1024 rules16384}
PKT_SIZE=${PKT_SIZE:-64}
BURST=${BURST:-32}
CPU=${CPU:-1}
HK_CPU=${HK_CPU:-0}
MEM_MB=${MEM_MB:-256}
MGMT_PORT=${MGMT_PORT:-18094}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
[ -d "$BUILD" ] && BUILD=$(cd "$BUILD" && pwd)
OVS_VSWITCHD=${OVS_VSWITCHD:-/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk}
KEEP_TMP=${KEEP_TMP:-0}
SBX_PREFIX=sbxpeers
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
spanbox_bins
workers_bench_init

need_spanbox_bins curl jq awk ovsdb-tool ovsdb-server ovs-vsctl ovs-ofctl
[ -x "$OVS_VSWITCHD" ] || die "$OVS_VSWITCHD missing: apt-get install openvswitch-switch-dpdk"
for v in DURATION WARMUP RUNS PKT_SIZE BURST CPU HK_CPU MEM_MB MGMT_PORT; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v=${!v}: expected a whole number"
done
for s in $SCENARIOS; do
	case "$s" in forward | mirror) ;; rules[0-9]*) [ "${s#rules}" -ge 1 ] && [ "${s#rules}" -le 65536 ] || die "SCENARIOS: $s: 1..65536 rules" ;;
	*) die "SCENARIOS: $s: expected forward, mirror or rulesN" ;; esac
done
[ "$CPU" != "$HK_CPU" ] || die "CPU and HK_CPU must differ"
ss -Hltn "sport = :$MGMT_PORT" 2>/dev/null | grep -q . && die "TCP port $MGMT_PORT is in use: set MGMT_PORT"
need_hugepages "$MEM_MB"
warn_busy
TMP=$(mktemp -d /tmp/sbxpeers.XXXXXX)
copy_spanbox_bins
declare -A TARGET=([forward]=2.5 [mirror]=4)
target() { case "$1" in rules*) echo 3 ;; *) echo "${TARGET[$1]}" ;; esac; }

# rule I of N (I < N - 1: a specific one; N - 1: every frame) as "src dst port" of the same numbers
# both tools get: source 10.(i>>8).(i&255).1/32, destination 172.16.(i&255).0/24, TCP port 1024 + i % 60000
rules_spec() { awk -v n="$1" 'BEGIN { for (i = 0; i < n - 1; i++) printf "10.%d.%d.1 172.16.%d.0 %d\n", int(i / 256) % 256, i % 256, i % 256, 1024 + i % 60000 }'; }

# ---------------------------------------------------------------- spanbox
# sbx_config SCENARIO: $TMP/spanbox.json, the pinned layout of bench/forward.sh
sbx_config() {
	local mirrors='[]'
	echo '[]' >"$TMP/maps.json"
	case "$1" in rules*)
		rules_spec "${1#rules}" | jq -R -s -c 'split("\n") | map(select(length > 0) | split(" ") |
			{ action: "pass", src: "\(.[0])/32", dst: "\(.[1])/24", ip_proto: 6, dst_port: (.[2] | tonumber) })
			+ [{ action: "pass" }] | [{ id: 1, name: "rules", sources: [{ port: "p0", direction: "rx" },
			{ port: "p1", direction: "rx" }], destination: { port: "tool" }, encap: { type: "span" }, rules: . }]' >"$TMP/maps.json" ;;
	esac
	[ "$1" = mirror ] && mirrors='[{"id": 1, "name": "span", "sources": [{"port": "p0", "direction": "rx"},
		{"port": "p1", "direction": "rx"}], "destination": {"port": "tool"}, "encap": {"type": "span"}}]'
	jq -n --arg prefix "$SBX_PREFIX" --argjson mem "$MEM_MB" --arg cpus "$(cpulist "$HK_CPU,$CPU")" \
		--arg hk "$HK_CPU" --argjson cpu "$CPU" --argjson size "$PKT_SIZE" --argjson burst "$BURST" \
		--argjson port "$MGMT_PORT" --arg db "$TMP/spanbox.db" --argjson mirrors "$mirrors" --slurpfile maps "$TMP/maps.json" --arg scen "$1" '
	{ eal: { file_prefix: $prefix, socket_mem_mb: $mem, primary_lcore: 0, mgmt_lcore: 100, cpus: $cpus,
		 housekeeping_cpus: $hk },
	  pool: { mbufs: 0, cache: 256 },
	  ports: ([{ name: "p0", devargs: "net_null0,size=\($size)", rx_desc: 1024, tx_desc: 1024 },
		   { name: "p1", devargs: "net_null1,size=\($size)", rx_desc: 1024, tx_desc: 1024 }] +
		  (if $scen != "forward" then [{ name: "tool", devargs: "net_null2,size=\($size),no-rx=1" }] else [] end)),
	  workers: ({ count: 1, lcores: [1], burst: $burst, busy_poll: true, cpus: [$cpu] } +
		    (if $scen != "forward" then { queues: [[{ port: "p0", queue: 0 }, { port: "p1", queue: 0 }]] } else {} end)),
	  forwarding: { xconnects: [["p0", "p1"]] },
	  mirrors: $mirrors,
	  maps: $maps[0],
	  mgmt: { listen: "127.0.0.1", port: $port, database: $db } }' >"$TMP/spanbox.json"
}

# port_tx FILE NAME: the ethdev's opackets of port NAME in a /status answer (as OVS's dump-ports)
port_tx() { jq --arg n "$2" '[.ports[] | select(.name == $n) | .stats.opackets] | add // 0' "$1"; }

run_spanbox() { # run_spanbox SCENARIO RUN
	local log="$TMP/sbx.$1.$2" ppid mpid wpid fwd tool dt
	sbx_config "$1"
	"$PRIMARY" -c "$TMP/spanbox.json" --check >/dev/null || die "the generated spanbox config is refused: $TMP/spanbox.json"
	start_spanbox "$TMP/spanbox.json" "$log" '.appliance.state == "up" and .workers[0].state == "running"' || return 1
	wpid=$(jq '.workers[0].pid' "$log.s0.json")
	WORKER_PIDS=("$wpid")
	check_pinned "$CPU" "$HK_CPU" "$ppid" "$mpid" "$wpid" || { stop_ours; stop_workers; return 1; }
	measure_window "$wpid" "$log"
	stop_ours
	stop_workers
	dt=$(fmt "$M_T2 - $M_T1" 6)
	fwd=$(( $(port_tx "$log.s2.json" p0) + $(port_tx "$log.s2.json" p1) - $(port_tx "$log.s1.json" p0) - $(port_tx "$log.s1.json" p1) ))
	tool=$(( $(port_tx "$log.s2.json" tool) - $(port_tx "$log.s1.json" tool) ))
	record "$1" "$2" spanbox "$fwd" "$tool" "$dt" "$(fmt "($M_C2 - $M_C1) / $CLK_TCK / $dt * 100" 0)"
}

# ---------------------------------------------------------------- Open vSwitch with DPDK
OVS_DIR="" VSCTL=()
ovs_start() { # ovs_start SCENARIO: ovsdb-server and ovs-vswitchd-dpdk of our own, the bridge, flows
	local s=$1 i mirror=() tool=()
	OVS_DIR="$TMP/ovs.$s"
	rm -rf "$OVS_DIR"; mkdir -p "$OVS_DIR"
	export OVS_RUNDIR=$OVS_DIR OVS_DBDIR=$OVS_DIR OVS_LOGDIR=$OVS_DIR OVS_SYSCONFDIR=$OVS_DIR
	VSCTL=(ovs-vsctl "--db=unix:$OVS_DIR/db.sock" --timeout=20)
	ovsdb-tool create "$OVS_DIR/conf.db" /usr/share/openvswitch/vswitch.ovsschema || return 1
	taskset -c "$HK_CPU" ovsdb-server "$OVS_DIR/conf.db" "--remote=punix:$OVS_DIR/db.sock" \
		"--log-file=$OVS_DIR/ovsdb.log" --pidfile="$OVS_DIR/ovsdb.pid" >/dev/null 2>&1 &
	OURS+=("$!")
	for (( i = 0; i < 100; i++ )); do [ -S "$OVS_DIR/db.sock" ] && break; nap 0.1; done
	"${VSCTL[@]}" --no-wait init &&
		"${VSCTL[@]}" --no-wait set Open_vSwitch . other_config:dpdk-init=true \
			"other_config:dpdk-extra=--no-pci --in-memory" "other_config:dpdk-lcore-mask=$(printf 0x%x $((1 << HK_CPU)))" \
			"other_config:pmd-cpu-mask=$(printf 0x%x $((1 << CPU)))" "other_config:dpdk-socket-mem=$MEM_MB" || return 1
	STARTED=1
	taskset -c "$HK_CPU" "$OVS_VSWITCHD" "unix:$OVS_DIR/db.sock" "--log-file=$OVS_DIR/vswitchd.log" \
		--pidfile="$OVS_DIR/vswitchd.pid" >/dev/null 2>&1 &
	OURS+=("$!")
	# the ports (and the Mirror in the same transaction: it applies to flows translated after it)
	[ "$s" != forward ] && tool=(-- add-port br0 tool -- set Interface tool type=dpdk "options:dpdk-devargs=net_null2,size=$PKT_SIZE,no-rx=1")
	[ "$s" = mirror ] && mirror=(
		-- --id=@p0 get Port p0 -- --id=@p1 get Port p1 -- --id=@t get Port tool
		-- --id=@m create Mirror name=span select-src-port=@p0,@p1 output-port=@t -- set Bridge br0 mirrors=@m)
	"${VSCTL[@]}" add-br br0 -- set Bridge br0 datapath_type=netdev \
		-- add-port br0 p0 -- set Interface p0 type=dpdk "options:dpdk-devargs=net_null0,size=$PKT_SIZE" "options:n_rxq_desc=1024" "options:n_txq_desc=1024" \
		-- add-port br0 p1 -- set Interface p1 type=dpdk "options:dpdk-devargs=net_null1,size=$PKT_SIZE" "options:n_rxq_desc=1024" "options:n_txq_desc=1024" \
		"${tool[@]}" "${mirror[@]}" >"$OVS_DIR/vsctl.log" 2>&1 || { cat "$OVS_DIR/vsctl.log" >&2; return 1; }
	ovs-ofctl del-flows br0 || return 1
	case "$s" in
	rules*) # rule i at priority N + 1 - i (the first rule wins), the last one takes every frame
		rules_spec "${s#rules}" | awk -v n="${s#rules}" '{
			for (p = 0; p < 2; p++)
				printf "priority=%d,tcp,in_port=p%d,nw_src=%s/32,nw_dst=%s/24,tp_dst=%s,actions=output:tool,output:p%d\n",
					n + 1 - NR, p, $1, $2, $3, 1 - p }
			END { print "priority=1,in_port=p0,actions=output:tool,output:p1"; print "priority=1,in_port=p1,actions=output:tool,output:p0" }' \
			>"$OVS_DIR/flows.txt"
		ovs-ofctl add-flows br0 "$OVS_DIR/flows.txt" || return 1
		;;
	*)
		ovs-ofctl add-flow br0 in_port=p0,actions=output:p1 &&
			ovs-ofctl add-flow br0 in_port=p1,actions=output:p0 || return 1
		;;
	esac
}

# ovs_tx NAME: tx packets of port NAME now (ovs-ofctl dump-ports: the datapath's own counters)
ovs_tx() {
	local ofp
	ofp=$("${VSCTL[@]}" get Interface "$1" ofport)
	ovs-ofctl dump-ports br0 "$ofp" | awk '/tx pkts=/ { sub(/.*tx pkts=/, ""); sub(/,.*/, ""); print; exit }'
}

# pmd_tid: the OVS PMD thread polling on $CPU (comm pmd-c<CPU>/id:...)
pmd_tid() {
	local t
	for t in /proc/"${OURS[-1]}"/task/*; do
		case "$(cat "$t/comm" 2>/dev/null)" in pmd-c0"$CPU"* | pmd-c"$CPU"/*) echo "${t##*/}"; return ;; esac
	done
}

run_ovs() { # run_ovs SCENARIO RUN
	local p0a p1a ta p0b p1b tb t1 t2 c1 c2 tid dt tool=0
	ovs_start "$1" || { echo "$BENCH: Open vSwitch did not start; logs in $OVS_DIR" >&2; KEEP_TMP=1; stop_ours; return 1; }
	nap "$WARMUP"
	tid=$(pmd_tid)
	[ "$2" = 1 ] && log "OVS $1: PMD thread ${tid:-?} on CPU $( [ -n "$tid" ] && thread_cpus "${OURS[-1]}" "$tid"), main thread on $(thread_cpus "${OURS[-1]}")"
	c1=$(cpu_ticks "${OURS[-1]}" "${tid:-${OURS[-1]}}")
	p0a=$(ovs_tx p0) p1a=$(ovs_tx p1); [ "$1" != forward ] && ta=$(ovs_tx tool); t1=$(date +%s.%N)
	nap "$DURATION"
	p0b=$(ovs_tx p0) p1b=$(ovs_tx p1); [ "$1" != forward ] && tb=$(ovs_tx tool); t2=$(date +%s.%N)
	c2=$(cpu_ticks "${OURS[-1]}" "${tid:-${OURS[-1]}}")
	stop_ours
	[ -n "$p0a" ] && [ -n "$p0b" ] || { echo "$BENCH: no OVS port counters; logs in $OVS_DIR" >&2; KEEP_TMP=1; return 1; }
	[ "$1" != forward ] && tool=$(( tb - ta ))
	dt=$(fmt "$t2 - $t1" 6)
	record "$1" "$2" ovs $(( p0b + p1b - p0a - p1a )) "$tool" "$dt" "$(fmt "($c2 - $c1) / $CLK_TCK / $dt * 100" 0)"
}

# ---------------------------------------------------------------- runs
R_SCEN=() R_RUN=() R_TOOL=() R_MPPS=() R_TOOLMPPS=() R_CPU=()
record() { # record SCENARIO RUN TOOL FORWARDED TOOL_TX SECONDS CPU%
	R_SCEN+=("$1") R_RUN+=("$2") R_TOOL+=("$3") R_MPPS+=("$(fmt "$4 / $6 / 1e6" 2)") R_TOOLMPPS+=("$(fmt "$5 / $6 / 1e6" 2)") R_CPU+=("$7")
	log "=> $1 run $2 $3: ${R_MPPS[-1]} Mpps forwarded, ${R_TOOLMPPS[-1]} Mpps to the tool port, polling thread $7 % CPU"
}

log "spanbox $(spanbox_rev) ($BUILD); $("$OVS_VSWITCHD" --version | head -1); $(machine_line)"
log "polling thread on CPU $CPU, the rest on $HK_CPU; $PKT_SIZE B frames, burst $BURST; $RUNS pairs x $DURATION s (+$WARMUP s warm-up)"
for s in $SCENARIOS; do
	for (( r = 1; r <= RUNS; r++ )); do
		if (( r % 2 )); then run_spanbox "$s" "$r"; run_ovs "$s" "$r"; else run_ovs "$s" "$r"; run_spanbox "$s" "$r"; fi
	done
done

echo
echo "| scenario | run | tool | Mpps forwarded | Mpps to the tool port | polling thread CPU % |"
echo "|---|---|---|---|---|---|"
for (( i = 0; i < ${#R_TOOL[@]}; i++ )); do
	echo "| ${R_SCEN[i]} | ${R_RUN[i]} | ${R_TOOL[i]} | ${R_MPPS[i]} | ${R_TOOLMPPS[i]} | ${R_CPU[i]} |"
done
echo
for s in $SCENARIOS; do
	q=()
	for (( i = 0; i < ${#R_TOOL[@]}; i++ )); do
		[ "${R_SCEN[i]}" = "$s" ] && [ "${R_TOOL[i]}" = spanbox ] || continue
		for (( j = 0; j < ${#R_TOOL[@]}; j++ )); do
			[ "${R_SCEN[j]}" = "$s" ] && [ "${R_TOOL[j]}" = ovs ] && [ "${R_RUN[j]}" = "${R_RUN[i]}" ] &&
				awk -v b="${R_MPPS[j]}" 'BEGIN { exit !(b > 0) }' && q+=("$(fmt "${R_MPPS[i]} / ${R_MPPS[j]}" 2)")
		done
	done
	if [ ${#q[@]} -eq 0 ]; then echo "$s: no pair ran"; continue; fi
	m=$(median "${q[@]}")
	verdict=$(awk -v m="$m" -v t="$(target "$s")" 'BEGIN { print (m >= t ? "TARGET MET" : "TARGET MISSED") }')
	echo "$s: spanbox/OVS paired ratios ${q[*]}, median $m ($verdict: >= $(target "$s"))"
done
exit 0
