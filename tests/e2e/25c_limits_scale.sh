#!/usr/bin/env bash
# Limits at scale (issue #25 "Limits"): 64 ports and 32 workers on this 2-CPU machine, idle
# back-off on (no busy polling). Worker w polls queue 0 of two ports: in<w>, a pcap file port that
# replays the same capture once, and out<w>, a net_null port without RX (no-rx=1), cross-connected
# with it (32 cross-connects, the new limit). Checked: the appliance starts; every worker forwards
# its queues (its own counters: rx on in<w> and tx on out<w> = the capture's frames); a worker
# killed with SIGKILL is replaced; the pool audit is exact (nothing unexplained) at rest before
# and after the kill; the memzone is sized by the config (GET /api/v1/system); /status, /metrics
# and the page answer within a bound measured against a small config (2 workers, 4 ports) started
# in the same test: the times of both are printed (the page itself polls /api/v1/status, web/app.js).
# (net_ring cannot take part: its PMD has at most 16 TX queues, spanbox needs 2 per worker.)
# Own file prefix (sbxlim), lcore ids 0..33, API port 19100; every wait is bounded.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
PORT=19100
API=http://127.0.0.1:$PORT/api/v1
IN="$CAPTURES/plain_tcpreplay_test.pcap"
N=$(capinfos -Mc "$IN" | awk '/Number of packets/ {print $NF}')
W=32 # workers of the big config (2 ports each: 64 ports)

cleanup() { inst_cleanup; rm -rf "$TMP"; }
trap cleanup EXIT
get() { curl -fsS --max-time 10 "$1"; }

# config FILE WORKERS: worker w polls in<w> (pcap) and out<w> (net_null no-rx), cross-connected
config() {
	python3 - "$1" "$2" "$IN" "$TMP" "$PORT" <<'EOF'
import json, sys
path, nw, pcap, tmp, port = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
ports, queues, xc = [], [], []
for w in range(nw):
    ports.append({"name": f"in{w}", "devargs": f"net_pcap{w},rx_pcap={pcap}", "rx_desc": 64, "tx_desc": 64})
    ports.append({"name": f"out{w}", "devargs": f"net_null{w},no-rx=1", "rx_desc": 64, "tx_desc": 64})
    queues.append([{"port": f"in{w}", "queue": 0}, {"port": f"out{w}", "queue": 0}])
    xc.append([f"in{w}", f"out{w}"])
cfg = {"eal": {"file_prefix": "sbxlim", "socket_mem_mb": 512, "primary_lcore": 0, "mgmt_lcore": 1},
       "pool": {"mbufs": 32767, "force": True, "cache": 32},
       "ports": ports,
       "workers": {"count": nw, "lcores": list(range(2, 2 + nw)), "queues": queues,
                   "idle_sleep_us": 1000, "hang_timeout_ms": 5000},
       "forwarding": {"xconnects": xc},
       "mgmt": {"port": port, "database": f"{tmp}/db-{nw}.sqlite"}}
json.dump(cfg, open(path, "w"), indent=1)
EOF
}

# times NAME: median times of /status, /metrics and the page into T_<NAME>_{status,metrics,page}
times() {
	local s m p
	s=$(median_time "$API/status") m=$(median_time "http://127.0.0.1:$PORT/metrics")
	p=$(median_time "http://127.0.0.1:$PORT/")
	printf -v "T_$1_status" '%s' "$s"; printf -v "T_$1_metrics" '%s' "$m"; printf -v "T_$1_page" '%s' "$p"
	echo "# $1: /api/v1/status ${s} s ($(get "$API/status" | wc -c) B), /metrics ${m} s ($(get "http://127.0.0.1:$PORT/metrics" | wc -c) B), page ${p} s"
}
# all_forwarded NB: every worker w received the N frames on in<w> and sent them out of out<w>
all_forwarded() {
	get "$API/workers" | jq -e --argjson n "$N" --argjson nb "$1" \
		'length == $nb and all(.[]; .ports["in\(.id)"].rx_packets == $n and .ports["out\(.id)"].tx_packets == $n)' >/dev/null
}
unexplained() { get "$API/pools" | jq -r '.[0].name' | { read -r pool; get "$API/pools/$pool" | jq -e '.audit.unexplained'; }; }
audit_exact() { [ "$(unexplained)" = 0 ]; }

### 1. the small config: 2 workers, 4 ports (what every config used to be sized like)
config "$TMP/small.json" 2
inst_start_both small "$TMP/small.json" "$API" || exit 1
wait_for 300 all_forwarded 2
check "small: both workers forwarded the $N frames of their pcap port" all_forwarded 2
times small
SMALL_MZ=$(get "$API/system" | jq -e '.memzone.bytes')
inst_cleanup

### 2. 64 ports, 32 workers
config "$TMP/big.json" $W
t0=$(date +%s.%N)
inst_start_both big "$TMP/big.json" "$API" || exit 1
echo "# big: primary ready and mgmt up in $(echo "$(date +%s.%N) - $t0" | bc) s"
grep '^spanbox-primary: memzone' "$TMP/big-primary.log" | sed 's/^/# /'
get "$API/system" >"$TMP/system.json"
BIG_MZ=$(jq -e '.memzone.bytes' "$TMP/system.json")
MAX_MZ=$(jq -e '.memzone.bytes_at_maximum' "$TMP/system.json")
echo "# memzone: 2 workers 4 ports $SMALL_MZ B, $W workers 64 ports $BIG_MZ B, at the limits $MAX_MZ B"
check "big: 64 ports and $W workers running" \
	bash -c "curl -fsS --max-time 10 '$API/status' | jq -e '(.ports | length) == 64 and ([.workers[] | select(.state == \"running\")] | length) == $W' >/dev/null"
TOOL_MZ=$("$BUILD/tools/spanbox-shm-sizes" | awk '/^memzone 32 workers 64 ports /{print $NF}')
check "big: the memzone is sized by the config: small $SMALL_MZ < big $BIG_MZ = spanbox-shm-sizes' $TOOL_MZ <= at the limits $MAX_MZ" \
	cond "[ '$SMALL_MZ' -lt '$BIG_MZ' ] && [ '$BIG_MZ' = '$TOOL_MZ' ] && [ '$BIG_MZ' -le '$MAX_MZ' ]"
wait_for 600 all_forwarded $W
check "big: every worker forwarded its queues: rx on in<w> = tx on out<w> = $N, all $W workers" all_forwarded $W
wait_for 50 audit_exact
check "big: pool audit exact at rest (unexplained $(unexplained))" audit_exact
times big

### 3. a worker killed and replaced
V=17
old=$(get "$API/workers/$V" | jq -e '.pid')
kill -9 "$old"
replaced() { get "$API/workers/$V" | jq -e --argjson old "$old" '.pid != $old and .pid > 0 and .state == "running" and .restarts >= 1' >/dev/null; }
wait_for 300 replaced
check "big: worker $V (pid $old) killed with SIGKILL is replaced and running" replaced
check "big: the other $((W - 1)) workers kept running (no restart)" \
	bash -c "curl -fsS --max-time 10 '$API/workers' | jq -e --argjson v $V '[.[] | select(.id != \$v and (.restarts > 0 or .state != \"running\"))] | length == 0' >/dev/null"
wait_for 50 audit_exact
check "big: pool audit exact after the kill (unexplained $(unexplained))" audit_exact

### 4. the API and the page at scale, against the small config's times
# bound: 10 x the small config's median, at least 0.5 s (this machine is shared: medians of 5)
for ep in status metrics page; do
	s=T_small_$ep b=T_big_$ep
	bound=$(echo "x = ${!s} * 10; if (x < 0.5) x = 0.5; x" | bc -l)
	check "big: $ep answers in ${!b} s (small config ${!s} s, bound $bound s)" \
		cond "[ \"\$(echo '${!b} <= $bound' | bc -l)\" = 1 ]"
done
check "big: /metrics has the samples of all 64 ports and $W workers" \
	bash -c "curl -fsS --max-time 10 'http://127.0.0.1:$PORT/metrics' | grep -c '^spanbox_worker_heartbeat_age_seconds' | grep -qx $W"
