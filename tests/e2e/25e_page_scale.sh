#!/usr/bin/env bash
# The status page at scale (issue #25 Tests: "/status, /metrics and the page still answer in the
# time they do today (measure: the page with 64 ports and 32 workers must stay readable and fast)").
# The config of 25c_limits_scale (worker w polls in<w>, a pcap file port replaying a capture once,
# and out<w>, a net_null port without RX, cross-connected), first with 2 workers (4 ports; also
# RSS on out1 and mirror session 1 in0 -> out1: the other parts view=page trims), then
# with 32 workers (64 ports), idle back-off on. For each: GET /api/v1/status (the default answer)
# and ?view=page, their size and median time, and tests/web/scale.test.mjs in headless Chromium
# (load to first full render, main-thread time per refresh). The big config's page must render
# every section, its workers and ports tables must reach all rows through "Show all" (and show a
# failed worker first: worker 20 killed twice with workers.crash_limit 2, then revived), its topology
# wrap and stay legible, and its times stay within the small config's x 2 + 0.7 s (first render) and x 3 + 10 ms (per refresh)
# (scale.test.mjs); /status?view=page must be at most 256 KB at 64 ports / 32 workers (the full
# answer is 2.2 MB) and unknown views are refused naming "view". Screenshots in out/tests/web/
# (scale-small.png, scale-big.png, scale.png: the whole page with every row shown, scale-topology.png).
#
# For the numbers of another page (docs/BENCHMARKS.md "The page at scale": the page before this
# change): SBX_PAGE_WEB_ROOT=DIR (mgmt.web_root: the page of DIR) SBX_MEASURE_ONLY=1 (its browser
# part prints the numbers and checks nothing).
#
# Private resources: file prefix sbxps, lcores 8 (primary), 9 (mgmt), workers 19, 39 and 40..69,
# API port 19170, databases under $TMP; every wait is bounded; the test takes about 90 s.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/web.sh"
PORT=19170
MGMT=http://127.0.0.1:$PORT
API=$MGMT/api/v1
IN="$CAPTURES/plain_tcpreplay_test.pcap"
W=32                   # workers of the big config (2 ports each: 64 ports)
PAGE_MAX_B=$((256 * 1024)) # ?view=page at 64 ports / 32 workers: 175 KB with small counters (BENCHMARKS.md)

cleanup() { inst_cleanup; rm -rf "$TMP"; }
trap cleanup EXIT
get() { curl -fsS --max-time 10 "$1"; }
jqf() { jq -e "$@" >/dev/null; } # jqf FILTER FILE...: a check on JSON files, quiet

web_deps || exit 1

# config FILE WORKERS: worker w polls in<w> (pcap) and out<w> (net_null no-rx), cross-connected
config() {
	python3 - "$1" "$2" "$IN" "$TMP" "$PORT" "${SBX_PAGE_WEB_ROOT:-}" <<'EOF'
import json, sys
path, nw, pcap, tmp, port, web = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]
ports, queues, xc = [], [], []
for w in range(nw):
    ports.append({"name": f"in{w}", "devargs": f"net_pcap{w},rx_pcap={pcap}", "rx_desc": 64, "tx_desc": 64})
    ports.append({"name": f"out{w}", "devargs": f"net_null{w},no-rx=1", "rx_desc": 64, "tx_desc": 64})
    queues.append([{"port": f"in{w}", "queue": 0}, {"port": f"out{w}", "queue": 0}])
    xc.append([f"in{w}", f"out{w}"])
lcores = ([19, 39] + list(range(40, 70)))[:nw]
cfg = {"eal": {"file_prefix": "sbxps", "socket_mem_mb": 512, "primary_lcore": 8, "mgmt_lcore": 9},
       "pool": {"mbufs": 32767, "force": True, "cache": 32},
       "ports": ports,
       "workers": {"count": nw, "lcores": lcores, "queues": queues,
                   "idle_sleep_us": 1000, "hang_timeout_ms": 5000, "crash_limit": 2},
       "forwarding": {"xconnects": xc},
       "mgmt": {"port": port, "database": f"{tmp}/db-{nw}.sqlite", "token": "sbxps-token-0123456789abcdef"}}
if nw == 2:  # the small config also has what view=page trims besides workers[].ports
    ports[3]["rss"] = {"fields": ["ipv4", "udp"], "key": "symmetric"}
    cfg["mirrors"] = [{"id": 1, "sources": [{"port": "in0", "direction": "rx"}], "destination": {"port": "out1", "allow_forwarding": True}}]
if web:
    cfg["mgmt"]["web_root"] = web
json.dump(cfg, open(path, "w"), indent=1)
EOF
}

# measure NAME: sizes and median times of /status and /status?view=page into B_<NAME>_{full,page}
measure() {
	local f p bf bp
	f=$(median_time "$API/status") p=$(median_time "$API/status?view=page")
	bf=$(get "$API/status" | wc -c) bp=$(get "$API/status?view=page" | wc -c)
	printf -v "B_$1_full" '%s' "$bf"; printf -v "B_$1_page" '%s' "$bp"
	echo "# $1: GET /api/v1/status ${f} s ($bf B), ?view=page ${p} s ($bp B)"
}
running() { get "$API/status?view=page" | jq -e --argjson n "$1" '[.workers[] | select(.state == "running")] | length == $n' >/dev/null; }
# page NAME WORKERS: the browser test; its "# perf {json}" line into PERF_<NAME>
page() {
	local log="$TMP/page-$1.log"
	SBX_MGMT_URL=$MGMT SBX_PHASE=$1 SBX_MEASURE_ONLY=${SBX_MEASURE_ONLY:-} SBX_WORKERS=$2 SBX_PORTS=$(($2 * 2)) SBX_SMALL_PERF=${PERF_small:-} SBX_TOKEN=sbxps-token-0123456789abcdef \
		SBX_OUT="$ROOT/out/tests/web" timeout 90 node "$ROOT/tests/web/scale.test.mjs" >"$log" 2>&1
	local rc=$?
	cat "$log"
	[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || not_ok "$1: scale.test.mjs ended with status $rc (timeout or crash)"
	printf -v "PERF_$1" '%s' "$(sed -n 's/^# perf //p' "$log" | tail -n 1)"
}

### 1. the small config: 2 workers, 4 ports
config "$TMP/small.json" 2
inst_start_both small "$TMP/small.json" "$API" || exit 1
wait_for 300 running 2
measure small
get "$API/status" >"$TMP/full.json"
get "$API/status?view=page" >"$TMP/page.json"
check "small: ?view=page: out1's rss without its reta ($(jq -c '.ports[3].rss | del(.key)' "$TMP/page.json")), the default answer with it" \
	cond "jq -e '.ports[3].rss | (.fields | length) > 0 and (has(\"reta\") | not)' '$TMP/page.json' >/dev/null &&
		jq -e '.ports[3].rss.reta | length > 0' '$TMP/full.json' >/dev/null"
check "small: ?view=page: mirror 1 with its counters summed but not split per worker (the default: 2 workers)" \
	cond "jq -e '.mirrors[0] | has(\"counters\") and (has(\"workers\") | not)' '$TMP/page.json' >/dev/null &&
		jq -e '.mirrors[0].workers | length == 2' '$TMP/full.json' >/dev/null"
page small 2
inst_cleanup

### 2. 64 ports, 32 workers
config "$TMP/big.json" $W
inst_start_both big "$TMP/big.json" "$API" || exit 1
check "big: all $W workers running" wait_for 600 running $W
measure big
get "$API/status" >"$TMP/full.json"
get "$API/status?view=page" >"$TMP/page.json"
check "big: /status?view=page is $B_big_page B <= $PAGE_MAX_B B (the default answer: $B_big_full B)" \
	cond "[ '$B_big_page' -le '$PAGE_MAX_B' ] && [ '$B_big_page' -lt '$B_big_full' ]"
check "big: the default /status still carries every worker's counters of all 64 ports, no ports_total" \
	jqf '(.workers | length) == 32 and all(.workers[]; (.ports | length) == 64 and (has("ports_total") | not))' "$TMP/full.json"
check "big: ?view=page: workers carry ports_total = the sum of their ports' counters (rx_packets, tx_packets)" \
	jqf --slurpfile f "$TMP/full.json" '[.workers[] | {id, rx: .ports_total.rx_packets, tx: .ports_total.tx_packets, p: has("ports")}]
		== [$f[0].workers[] | {id, rx: ([.ports[].rx_packets] | add), tx: ([.ports[].tx_packets] | add), p: false}]' "$TMP/page.json"
check "big: ?view=page keeps every other section: the same keys, ports, their stats and worker sums" \
	jqf --slurpfile f "$TMP/full.json" '(keys == ($f[0] | keys)) and ([.ports[] | {name, stats: .stats.ipackets, w: .workers.rx_packets}]
		== [$f[0].ports[] | {name, stats: .stats.ipackets, w: .workers.rx_packets}])' "$TMP/page.json"
check "big: ?view=full is the default answer (same keys, per-port worker counters)" \
	bash -c "curl -fsS --max-time 10 '$API/status?view=full' | jq -e '(.workers[0].ports | length) == 64' >/dev/null"
code=$(curl -sS --max-time 10 -o "$TMP/bad.json" -w '%{http_code}' "$API/status?view=pages")
check "big: ?view=pages is refused: 400 naming the field view ($(cat "$TMP/bad.json"))" \
	cond "[ '$code' = 400 ] && jq -e '.error.field == \"view\"' '$TMP/bad.json' >/dev/null"
page big $W
