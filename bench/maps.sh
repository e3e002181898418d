#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/maps.sh - what mirroring by maps (docs/MAPS.md, issue #27) costs a worker of the running
# product per frame, at 0 to 65,536 rules, against the same appliance forwarding only, mirroring
# without rules, and mirroring with 16 sessions whose tcpdump filters stand for the maps' rules.
#
# One worker (busy poll, CPU $CPU alone; the primary, mgmt and the generator on $HK_CPU) forwards
# 64-byte frames from a net_ring input to a net_null port that receives nothing; every mirror copy
# goes to a second net_null port ("tool"). The input is kept full by build/tests/sbx-ringgen (a DPDK
# secondary: docs/BENCHMARKS.md "An input faster than the worker") with the frames of a pcap file,
# so the worker's bursts are full (burst about 32) and its cycles per frame are its own.
# Rules and frames: build/tests/sbx-map-classify --bench --profile $PROFILE --rules N --maps 16
# --seed $SEED --write-rules --write-pcap: ClassBench-like rule sets spread round-robin over 16
# maps (profile acl1 by default: the distributions of ClassBench's acl1 seed, IPv4 only, so every
# frame is 64 bytes on the wire; "mixed" is the harder random set of bench/maps_micro.sh, 1 in 8
# rules IPv6) and max(65,536, 2 N) frames, 7 in 8 built to hit a rule (every rule hit), the rest
# random (maps-0, fwd and mirror16 take the frames of the largest set). Configurations, each a fresh spanbox, alternating (the order reversed every other round),
# RUNS each, measured over DURATION s after WARMUP s of traffic:
#   fwd          forwarding only (no session)
#   mirror16     16 mirror sessions on the input, no filter, no rules ("mirroring without rules":
#                16 copies of every frame)
#   maps-N       16 maps on the input at N rules in all, for each N of SIZES (the frames of N)
#   bpf-N        16 mirror sessions whose tcpdump filter is the OR of the pass rules of map i at N
#                rules (a drop rule's frames are not copied by the map either; first-match order
#                is not kept: an over-approximation), for each N of BPF_SIZES. A session's filter
#                holds at most 255 characters (docs/CONFIG.md "filter"): a set whose filters are
#                longer is refused by `spanbox-primary --check`, which is printed, and not run;
#   bpf-fit      then, instead: filters of the first pass rules of each map that fit 255
#   maps-fit     characters (K rules per session), and 16 maps of exactly those rules: the two
#                paths on the same rules, at the largest size the filter field allows.
#   drop-N       the classification alone, measured rather than estimated: maps-N's maps with
#                every rule's action "drop" (every frame classified and counted, nothing copied),
#                for each N of DROP_SIZES; drop-N - maps-0 is what the maps stage's work on a
#                frame costs in the product (reading the frame, the key, the lookups, the per-rule
#                counters, the frame's set of maps)
#   drop-N-few   the same on the first FEW frames of N's pcap only (editcap): the same tries, but
#                a few thousand paths walked again and again (in cache), where drop-N walks all of
#                them: drop-N - drop-N-few is what the tries' cache misses cost
#   miss         16 maps of one rule that no frame matches (vlan 4094; the frames are untagged):
#                the frame read, the key and a lookup of a trie of one rule for every frame, no
#                rule's counter, nothing copied (MISS=0 leaves it out): the floor of drop-N
# Per run: the worker's busy_cycles / busy_packets (/status, counters.h: the TSC cycles of the loops
# that received frames, over their frames) = cycles per frame of the whole worker; Mpps; copies per
# frame (the tool port's opackets over the worker's frames); burst (busy_packets / busy_loops: the
# mean burst of the loops that received frames; 32 when the input keeps up); the share of the
# window the worker and the generator waited for their CPU (/proc schedstat: others' work on the
# CPU; while the generator waits, the worker empties the ring and polls it empty). Prints a TSV line per run, a markdown table of the
# medians with the differences against mirror16 and maps-0 and the classification's estimate, and
# TARGET MET / MISSED lines for the issue's targets. mirror16 copies every frame 16 times, a map
# only the frames its rules pass (about 0.7 per frame here), so maps-N - mirror16 says little about
# the rules; the estimate is maps-N - maps-0 (the maps stage without rules) - maps-N's copies per
# frame x the cost of a copy ((mirror16 - fwd) / 16). Targets: the estimate at most 60 cycles per
# frame at 65,536 rules; the estimate at 65,536 rules at most 1.5 x that at 1,024; maps faster
# than the 16-filter BPF path (maps-fit against bpf-fit, maps-N against bpf-N when run).
# Exit 0 unless the benchmark cannot run.
#
# Run as root from anywhere, under the machine's DPDK lock when others share it:
#   flock /tmp/sbx-e2e.lock bench/maps.sh      (9 configurations x 3 runs x ~15 s, + the builds of
#                                               65,536 rules: about 10 min)
#   RUNS=1 DURATION=2 SIZES="0 1024" flock /tmp/sbx-e2e.lock bench/maps.sh       (a quick check)
#
# Environment (defaults in brackets): SIZES [0 100 1024 16384 65536], BPF_SIZES [100 1024],
# DROP_SIZES [1024 65536], FEW [2048], MISS [1], DEMOTE [0] (1: sbx-ringgen --demote, the frames
# left in the last-level cache as a NIC's DMA with DDIO leaves them, not Modified in the
# generator core's L2: the worker's first read of a frame then costs what it would behind a NIC),
# RUNS [3], DURATION [5] s, WARMUP [2] s, CPU [1], HK_CPU [0], PROFILE [acl1], SEED [1],
# MEM_MB [1024], READY_S [180] (start of a spanbox, the maps' build included), KEEP_TMP [0],
# BUILD [repo/build]. Resources: file prefix sbxmapbench, lcores 116 (primary) 117 (mgmt)
# 118 (worker) 119 (sbx-ringgen), API port 19210.
set -u
SIZES=${SIZES-0 100 1024 16384 65536}
BPF_SIZES=${BPF_SIZES-100 1024}
DROP_SIZES=${DROP_SIZES-1024 65536}
FEW=${FEW:-2048}
MISS=${MISS:-1}
RUNS=${RUNS:-3}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-2}
CPU=${CPU:-1}
HK_CPU=${HK_CPU:-0}
PROFILE=${PROFILE:-acl1}
SEED=${SEED:-1}
MEM_MB=${MEM_MB:-1024}
READY_S=${READY_S:-180}
KEEP_TMP=${KEEP_TMP:-0}
MGMT_PORT=19210
SBX_PREFIX=sbxmapbench
TOKEN=sbxmapbench-token-0123456789
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
source "$ROOT/bench/lib.sh"
spanbox_bins
need_spanbox_bins jq curl
RINGGEN="$BUILD/tests/sbx-ringgen" CLASSIFY="$BUILD/tests/sbx-map-classify"
for b in "$RINGGEN" "$CLASSIFY"; do [ -x "$b" ] || die "$b missing: build first (ninja -C $BUILD)"; done
need_hugepages "$MEM_MB"
workers_bench_init
GEN_PID=""
# the generator is ours too: stopped before the rest (workers_bench_cleanup)
trap '[ -n "$GEN_PID" ] && alive "$GEN_PID" && kill "$GEN_PID"; workers_bench_cleanup' EXIT
TMP=$(mktemp -d /tmp/sbx-maps-bench.XXXXXX)
copy_spanbox_bins
cp "$RINGGEN" "$CLASSIFY" "$TMP/bin/" || die "cannot copy the tools"
RINGGEN="$TMP/bin/sbx-ringgen" CLASSIFY="$TMP/bin/sbx-map-classify"

# config FILE MIRRORS_FILE MAPS_FILE: one worker on $CPU polling the input's queue only; the input
# forwarded to "out" (a net_null port that receives nothing: sbx-ringgen is the ring's only
# producer); "tool" the destination of every session; MIRRORS_FILE and MAPS_FILE JSON arrays of
# sessions and maps ([] for none)
config() {
	jq -n --arg pfx "$SBX_PREFIX" --argjson mem "$MEM_MB" --arg hk "$HK_CPU" --argjson cpu "$CPU" \
		--argjson port "$MGMT_PORT" --arg db "$TMP/db" --arg token "$TOKEN" \
		--slurpfile mirrors "$2" --slurpfile maps "$3" '
		{ eal: {file_prefix: $pfx, socket_mem_mb: $mem, primary_lcore: 116, mgmt_lcore: 117,
		        cpus: "0-1", housekeeping_cpus: $hk},
		  ports: [{name: "in", devargs: "net_ring0"}, {name: "out", devargs: "net_null0,size=64,no-rx=1"},
		          {name: "tool", devargs: "net_null1,size=64,no-rx=1"}],
		  workers: {count: 1, lcores: [118], cpus: [$cpu], busy_poll: true, standby: 0,
		            queues: [[{port: "in", queue: 0}]]},
		  forwarding: {xconnects: [["in", "out"]]},
		  mgmt: {port: $port, database: $db, token: $token} }
		+ (if ($mirrors[0] | length) > 0 then {mirrors: $mirrors[0]} else {} end)
		+ (if ($maps[0] | length) > 0 then {maps: $maps[0]} else {} end)' >"$1"
}

# The sessions' JSON. maps_of RULES: 16 maps of a --write-rules file, ids 100.., on the input's rx
plain_sessions() { jq -n '[range(16) | {id: (. + 1), name: "s\(.)", sources: [{port: "in", direction: "rx"}], destination: {port: "tool"}}]'; }
maps_of() {
	jq '[.maps | to_entries[] | {id: (100 + .key), name: "m\(.key)", sources: [{port: "in", direction: "rx"}],
	     destination: {port: "tool"}, rules: .value.rules}]' "$1"
}
# bpf_sessions RULES FIT: 16 mirror sessions, session i's filter the OR of the pass rules of map i
# (FIT=1: only the first that fit 255 characters); bpf_fit_maps RULES: the maps of exactly those
# rules. The terms: src/dst prefix (a /32 as a host), protocol, source/destination port or range.
BPF_JQ='
def addr(p): if (p | endswith("/32")) then (p | rtrimstr("/32")) else "net " + p end;
def port(p): (p | tostring) as $s | if ($s | contains("-")) then "portrange " + $s else "port " + $s end;
def proto(n): ({"6": "tcp", "17": "udp", "1": "icmp"}[n | tostring]) // "ip proto \(n)";
def term: if (keys - ["action", "src", "dst", "ip_proto", "src_port", "dst_port"] | length) > 0
	then error("rule field not translated to a filter: \(keys)") else . end |
	[ (if .src then "src " + addr(.src) else empty end), (if .dst then "dst " + addr(.dst) else empty end),
	  (if .ip_proto then proto(.ip_proto) else empty end),
	  (if .src_port then "src " + port(.src_port) else empty end),
	  (if .dst_port then "dst " + port(.dst_port) else empty end) ] |
	if length == 0 then "(ether[0] = ether[0])" else "(" + join(" and ") + ")" end;
# fit(rules; fit): {filter, rules: the pass rules it stands for}
def fit(rules; fit): [rules[] | select(.action == "pass")] |
	reduce .[] as $r ({filter: "", rules: [], done: false};
		if .done then . else
		(if .filter == "" then ($r | term) else .filter + " or " + ($r | term) end) as $c |
		if fit and ($c | length) > 255 then .done = true else .filter = $c | .rules += [$r] end end) |
	if .filter == "" then .filter = "ether proto 0" else . end;'
bpf_sessions() {
	jq --argjson fit "$2" "$BPF_JQ"'[.maps | to_entries[] | fit(.value.rules; $fit == 1) as $f |
		{id: (.key + 1), name: "b\(.key)", sources: [{port: "in", direction: "rx"}], destination: {port: "tool"},
		 filter: $f.filter}]' "$1"
}
bpf_fit_maps() {
	jq "$BPF_JQ"'[.maps | to_entries[] | {id: (100 + .key), name: "m\(.key)", sources: [{port: "in", direction: "rx"}],
		destination: {port: "tool"}, rules: fit(.value.rules; true).rules}]' "$1"
}

st() { curl -fsS -m 5 "$API/status"; }

# run NAME CONFIG PCAP: one measured run; prints its TSV line (see the header below)
run() {
	local name=$1 cfg=$2 pcap=$3 log="$TMP/run" s1 s2 d1 d2 wpid gw
	rm -f "$TMP/db"*
	start_spanbox "$cfg" "$log" '.appliance.state == "up" and ([.workers[].state] | all(. == "running"))' || return 1
	# bounded: the window and a margin; stopped below
	"$RINGGEN" --prefix "$SBX_PREFIX" --lcore 119 --cpu "$HK_CPU" --dev net_ring0 --pcap "$pcap" $(demote_arg) \
		--seconds $((WARMUP + DURATION + 60)) >"$log.gen.out" 2>"$log.gen.err" &
	GEN_PID=$!
	nap "$WARMUP"
	st >"$log.s1.json"; s1=$(date +%s.%N)
	wpid=$(jq '.workers[0].pid' "$log.s1.json")
	d1=$(run_delay "$wpid")
	nap "$DURATION"
	st >"$log.s2.json"; s2=$(date +%s.%N)
	d2=$(run_delay "$wpid")
	kill "$GEN_PID" 2>/dev/null; wait "$GEN_PID" 2>/dev/null; GEN_PID=""
	stop_ours
	gw=$(sed -n 's/.*waited \([0-9]*\) %.*/\1/p' "$log.gen.out")
	[ -n "$gw" ] || { echo "$BENCH: $name: the generator said nothing:" >&2; cat "$log.gen.err" >&2; }
	jq -r -n --slurpfile a "$log.s1.json" --slurpfile b "$log.s2.json" --arg name "$name" \
		--arg t "$(awk -v a="$s1" -v b="$s2" 'BEGIN {print b - a}')" --arg gw "${gw:--}" \
		--arg wait "$(awk -v a="$d1" -v b="$d2" -v s="$s1" -v e="$s2" 'BEGIN {printf "%.0f", (b - a) / 1e9 / (e - s) * 100}')" '
		$a[0].workers[0] as $A | $b[0].workers[0] as $B |
		($B.busy_cycles - $A.busy_cycles) as $c | ($B.busy_packets - $A.busy_packets) as $p |
		($B.busy_loops - $A.busy_loops) as $l |
		([$b[0].ports[] | select(.name == "tool") | .stats.opackets] | add) as $k2 |
		([$a[0].ports[] | select(.name == "tool") | .stats.opackets] | add) as $k1 | ($k2 - $k1) as $k |
		[$name, (if $p > 0 then ($c / $p * 10 | round) / 10 else "-" end),
		 ($p / ($t | tonumber) / 1e6 * 100 | round) / 100, $p,
		 (if $p > 0 then ($k / $p * 100 | round) / 100 else "-" end),
		 (if $l > 0 then ($p / $l * 10 | round) / 10 else "-" end), $wait, $gw] | map(tostring) | join("\t")'
}

log "spanbox $(spanbox_rev); $(machine_line); TSC $(( $(grep -m1 -o 'constant_tsc' /proc/cpuinfo | wc -l) )) constant"
warn_busy
log "sizes: $SIZES; BPF sizes: $BPF_SIZES; drop sizes: $DROP_SIZES; generator $([ "${DEMOTE:-0}" = 1 ] && echo "with" || echo "without") --demote; profile $PROFILE, seed $SEED, 16 maps; $RUNS runs each, alternating; $DURATION s measured after $WARMUP s"

# the rule sets and their frames; the largest set's frames for fwd and mirror16
max=0
for n in $SIZES $BPF_SIZES $DROP_SIZES; do
	[ -f "$TMP/rules-$n.json" ] && continue
	f=$(( 2 * n > 65536 ? 2 * n : 65536 ))
	out=$("$CLASSIFY" --bench --profile "$PROFILE" --rules "$n" --maps 16 --seed "$SEED" \
		--write-rules "$TMP/rules-$n.json" --write-pcap "$TMP/frames-$n.pcap" --pcap-frames "$f") ||
		die "sbx-map-classify could not write the set of $n rules"
	log "set of $n rules: $(cut -f2 <<<"$out") frames, $(cut -f3 <<<"$out") of them IPv4 (64 B)"
	[ "$n" -ge "$max" ] && max=$n
done
echo '[]' >"$TMP/none.json"
plain_sessions >"$TMP/plain.json"
CONFIGS=() # "name config pcap"
config "$TMP/fwd.json" "$TMP/none.json" "$TMP/none.json"; CONFIGS+=("fwd $TMP/fwd.json $TMP/frames-$max.pcap")
config "$TMP/mirror16.json" "$TMP/plain.json" "$TMP/none.json"; CONFIGS+=("mirror16 $TMP/mirror16.json $TMP/frames-$max.pcap")
for n in $SIZES; do
	maps_of "$TMP/rules-$n.json" >"$TMP/maps-$n.maps"
	config "$TMP/maps-$n.json" "$TMP/none.json" "$TMP/maps-$n.maps"
	f=$TMP/frames-$n.pcap
	[ "$n" = 0 ] && f=$TMP/frames-$max.pcap # no rule to hit: the same frames as fwd and mirror16
	CONFIGS+=("maps-$n $TMP/maps-$n.json $f")
done
if [ "$MISS" = 1 ]; then
	jq -n '[range(16) | {id: (100 + .), name: "m\(.)", sources: [{port: "in", direction: "rx"}],
	        destination: {port: "tool"}, rules: [{action: "pass", vlan: 4094}]}]' >"$TMP/miss.maps"
	config "$TMP/miss.json" "$TMP/none.json" "$TMP/miss.maps"
	CONFIGS+=("miss $TMP/miss.json $TMP/frames-$max.pcap")
fi
for n in $DROP_SIZES; do
	maps_of "$TMP/rules-$n.json" | jq 'map(.rules |= map(.action = "drop"))' >"$TMP/drop-$n.maps"
	config "$TMP/drop-$n.json" "$TMP/none.json" "$TMP/drop-$n.maps"
	CONFIGS+=("drop-$n $TMP/drop-$n.json $TMP/frames-$n.pcap")
	if command -v editcap >/dev/null && editcap -r "$TMP/frames-$n.pcap" "$TMP/few-$n.pcap" "1-$FEW" 2>/dev/null; then
		CONFIGS+=("drop-$n-few $TMP/drop-$n.json $TMP/few-$n.pcap")
	else
		log "drop-$n-few: not run (no editcap, or it could not cut $TMP/frames-$n.pcap)"
	fi
done
fit_done=0
for n in $BPF_SIZES; do
	bpf_sessions "$TMP/rules-$n.json" 0 >"$TMP/bpf-$n.mirrors" || die "no filters of the set of $n rules"
	config "$TMP/bpf-$n.json" "$TMP/bpf-$n.mirrors" "$TMP/none.json"
	if "$PRIMARY" -c "$TMP/bpf-$n.json" --check >"$TMP/check.out" 2>&1; then
		CONFIGS+=("bpf-$n $TMP/bpf-$n.json $TMP/frames-$n.pcap")
	else
		log "bpf-$n (filters of $(jq '[.[].filter | length] | min' "$TMP/bpf-$n.mirrors")-$(jq '[.[].filter | length] | max' "$TMP/bpf-$n.mirrors") characters) refused by spanbox-primary --check: $(grep -v '^#' "$TMP/check.out" | head -3 | tr '\n' ' ' | cut -c1-300)"
		[ "$fit_done" = 1 ] && continue
		fit_done=1
		bpf_sessions "$TMP/rules-$n.json" 1 >"$TMP/bpf-fit.mirrors"
		bpf_fit_maps "$TMP/rules-$n.json" >"$TMP/maps-fit.maps"
		config "$TMP/bpf-fit.json" "$TMP/bpf-fit.mirrors" "$TMP/none.json"
		config "$TMP/maps-fit.json" "$TMP/none.json" "$TMP/maps-fit.maps"
		"$PRIMARY" -c "$TMP/bpf-fit.json" --check >"$TMP/check.out" 2>&1 ||
			die "the fitted filters are refused too: $(head -3 "$TMP/check.out")"
		log "bpf-fit / maps-fit: the first pass rules of each map of the set of $n that fit a 255-character filter:" \
			"$(jq -c '[.[].rules | length]' "$TMP/maps-fit.maps") rules per map ($(jq '[.[].rules | length] | add' "$TMP/maps-fit.maps") in all)"
		log "e.g. session 1's filter: $(jq -r '.[0].filter' "$TMP/bpf-fit.mirrors")"
		CONFIGS+=("bpf-fit $TMP/bpf-fit.json $TMP/frames-$n.pcap" "maps-fit $TMP/maps-fit.json $TMP/frames-$n.pcap")
	fi
done

printf 'config\tcycles_per_frame\tMpps\tframes\tcopies_per_frame\tburst\tworker_waited_pct\tgen_waited_pct\n'
declare -A cpp mpps copies fpl
for ((r = 1; r <= RUNS; r++)); do
	order=("${CONFIGS[@]}")
	if [ $((r % 2)) = 0 ]; then # reversed every other round
		order=(); for ((i = ${#CONFIGS[@]} - 1; i >= 0; i--)); do order+=("${CONFIGS[i]}"); done
	fi
	for c in "${order[@]}"; do
		set -- $c
		line=$(run "$1" "$2" "$3") || { echo "$BENCH: $1: did not run" >&2; continue; }
		echo "$line"
		IFS=$'\t' read -r _ cy mp _ co fl _ _ <<<"$line"
		cpp[$1]="${cpp[$1]:-} $cy" mpps[$1]="${mpps[$1]:-} $mp" copies[$1]="${copies[$1]:-} $co" fpl[$1]="${fpl[$1]:-} $fl"
	done
done

med() { median ${1:-}; }
diff_of() { [ -n "$1" ] && [ -n "$2" ] && fmt "$1 - $2" 1 || echo "-"; }
b=$(med "${cpp[mirror16]:-}") m0=$(med "${cpp[maps-0]:-}") fw=$(med "${cpp[fwd]:-}") b16=$(med "${copies[mirror16]:-}")
# what one copy costs: (mirror16 - fwd) / its copies per frame; a map's copies are the same copies
per_copy=""
[ -n "$b" ] && [ -n "$fw" ] && [ -n "$b16" ] && awk -v c="$b16" 'BEGIN {exit !(c > 0)}' && per_copy=$(fmt "($b - $fw) / $b16" 1)
# classification NAME: cycles per frame the rules add, estimated: NAME - maps-0 - its copies x per_copy
classification() {
	local v c
	v=$(med "${cpp[$1]:-}") c=$(med "${copies[$1]:-}")
	[ -n "$v" ] && [ -n "$m0" ] && [ -n "$c" ] && [ -n "$per_copy" ] && fmt "$v - $m0 - $c * $per_copy" 1 || echo "-"
}
echo
echo "| configuration | cycles/frame (median) | - mirror16 | - maps-0 | classification (est.) | Mpps | copies/frame | burst | runs |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
for c in "${CONFIGS[@]}"; do
	set -- $c
	v=$(med "${cpp[$1]:-}") cl=-
	case $1 in maps-*) cl=$(classification "$1") ;; esac
	echo "| $1 | ${v:--} | $(diff_of "$v" "$b") | $(diff_of "$v" "$m0") | $cl | $(med "${mpps[$1]:-}") | $(med "${copies[$1]:-}") | $(med "${fpl[$1]:-}") |${cpp[$1]:-} |"
done
echo
echo "# a copy costs ${per_copy:--} cycles ((mirror16 - fwd) / mirror16's copies per frame); classification (est.) ="
echo "# maps-N - maps-0 - maps-N's copies per frame x that: what the rules' lookups add (maps-0 has the maps stage without rules)"
if [ -n "$DROP_SIZES" ]; then
	echo
	echo "| measured (no copies) | drop-N - maps-0: the maps stage's work | drop-N - miss: what the rules add over a trie of one rule | drop-N - drop-N-few: the tries' cache misses |"
	echo "|---|---:|---:|---:|"
	mi=$(med "${cpp[miss]:-}")
	[ -n "$mi" ] && echo "| miss | $(diff_of "$mi" "$m0") | 0 | - |"
	for n in $DROP_SIZES; do
		dv=$(med "${cpp[drop-$n]:-}") fv=$(med "${cpp[drop-$n-few]:-}")
		echo "| drop-$n | $(diff_of "$dv" "$m0") | $(diff_of "$dv" "$mi") | $(diff_of "$dv" "$fv") |"
	done
fi
target() { # target NAME VALUE LIMIT TEXT: TARGET MET when VALUE <= LIMIT
	if [ -z "$2" ] || [ "$2" = - ]; then echo "TARGET NOT MEASURED: $1 ($4)"; return; fi
	awk -v a="$2" -v l="$3" 'BEGIN {exit !(a <= l)}' && echo "TARGET MET: $1: $2 <= $3 ($4)" || echo "TARGET MISSED: $1: $2 > $3 ($4)"
}
v65=$(med "${cpp[maps-65536]:-}") c65=$(classification maps-65536) c1k=$(classification maps-1024)
target "classification adds at most 60 cycles/frame at 65,536 rules" "$c65" 60 \
	"the estimate above; maps-65536 - mirror16 (16 copies of every frame against the maps' $(med "${copies[maps-65536]:-}")): $(diff_of "$v65" "$b"), - maps-0: $(diff_of "$v65" "$m0")"
ratio=$(ratio_of "$c65" "$c1k")
target "65,536 rules cost at most 1.5 x 1,024" "$ratio" 1.5 \
	"classification (est.) $c65 at 65,536, $c1k at 1,024; whole worker ${v65:--} / $(med "${cpp[maps-1024]:-}")"
d65=$(diff_of "$(med "${cpp[drop-65536]:-}")" "$m0") d1k=$(diff_of "$(med "${cpp[drop-1024]:-}")" "$m0")
if [ "$d65" != - ]; then
	target "classification adds at most 60 cycles/frame at 65,536 rules, measured" "$d65" 60 "drop-65536 - maps-0: no copies"
	ratio=$(ratio_of "$d65" "$d1k")
	target "65,536 rules cost at most 1.5 x 1,024, measured" "$ratio" 1.5 "drop-65536 - maps-0: $d65, drop-1024 - maps-0: $d1k"
fi
for p in fit $BPF_SIZES; do
	bv=$(med "${cpp[bpf-$p]:-}") mv=$(med "${cpp[maps-$p]:-}")
	[ -n "$bv" ] || continue
	if [ -n "$mv" ]; then
		awk -v m="$mv" -v b="$bv" 'BEGIN {exit !(m < b)}' && echo "TARGET MET: maps faster than the 16-filter BPF path at $p: $mv < $bv cycles/frame" ||
			echo "TARGET MISSED: maps not faster than the 16-filter BPF path at $p: $mv >= $bv cycles/frame"
	fi
done
