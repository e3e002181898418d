#!/usr/bin/env bash
# GET /metrics (Prometheus text format 0.0.4), GET /api/v1/ports/{name}/stats and
# PUT /api/v1/ports/{name}/link (issue 5).
#  - /metrics passes `promtool check metrics` (parser and linter: no output, exit 0), up and down;
#  - its counters equal the numbers of /api/v1/status for every port and worker, and rise with traffic;
#  - the mirror session of the config appears with its id and name labels, and counts the ping;
#  - label values are escaped (the database path holds a double quote and a backslash);
#  - the port stats route equals /status, with xstats for a net_tap and a net_null port;
#  - the link of a tap in a namespace goes down and up (`ip -n NS link show`), the change is an
#    event with the client's address; a bad body is 422 naming "up", and then nothing changed;
#  - with the primary stopped, /metrics still answers 200 with spanbox_up 0.
#
# Own instance: file prefix sbxc, lcores 80-83, API port 18230, database under $TMP, taps sbxCp0
# and sbxCp1 moved into namespaces sbxC-a and sbxC-b (IPv6 off: no unsolicited frames), a net_null
# mirror destination, and tap sbxCh left in the host namespace (link set by the tap driver itself).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"

PORT=18230
BASE=http://127.0.0.1:$PORT API=http://127.0.0.1:$PORT/api/v1
CFG="$TMP/c.json"
DBDIR="$TMP/d\"b\\q" # a double quote and a backslash: label escaping
DB="$DBDIR/sbxc.db"
TOKEN=sbxc-token-0123456789abcdef
NS_A=sbxC-a NS_B=sbxC-b TAP_A=sbxCp0 TAP_B=sbxCp1
cleanup() {
	inst_cleanup
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

get() { curl -fsS --max-time 5 "$1"; }
# req NAME CURL-ARGS...: body in $TMP/NAME.body, headers in $TMP/NAME.hdr; prints the status
req() { local n=$1; shift; curl -sS --max-time 10 -o "$TMP/$n.body" -D "$TMP/$n.hdr" -w '%{http_code}' "$@"; }
hdr() { awk -v h="$(tr '[:upper:]' '[:lower:]' <<<"$2"):" \
	'tolower($1) == h { sub(/^[^:]*:[ \t]*/, ""); sub(/\r$/, ""); v = $0 } END { print v }' "$TMP/$1.hdr"; }
AUTH="Authorization: Bearer $TOKEN"
JSON="Content-Type: application/json"
link() { req "$1" -H "$AUTH" -H "$JSON" -X PUT --data-binary "$3" "$API/ports/$2/link"; } # link NAME PORT BODY
ns_up() { ip -n "$1" -o link show "$2" | grep -q '<[^>]*\bUP\b'; } # ns_up NS IFACE: IFF_UP is set
port_up() { get "$API/ports/$1" | jq -e ".link.up == $2" >/dev/null; } # port_up PORT true|false
nevents() { get "$API/events?limit=1000" | jq '[.[] | select(.kind == "port_link")] | length'; }
# metric NAME LABELS: the value of the sample NAME{LABELS} in $TMP/m.txt (LABELS as printed)
metric() { awk -v k="$1{$2}" '$1 == k { print $2 }' "$TMP/m.txt"; }
# promcheck FILE: promtool check metrics prints nothing and exits 0
promcheck() {
	promtool check metrics <"$1" >"$TMP/promtool.out" 2>&1
	local rc=$?
	sed 's/^/# promtool: /' "$TMP/promtool.out"
	[ $rc -eq 0 ] && [ ! -s "$TMP/promtool.out" ]
}

# Compare /metrics ($1) with /status ($2): every port's ethdev counters and link, every worker's
# per-port counters, restarts, crashes, state; the mirror sessions' counters. Prints mismatches.
cat >"$TMP/cmp.py" <<'EOF'
import json, re, sys
samples = {}
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$', line.rstrip("\n"))
    if not m:
        print("unparsed:", line.rstrip()); sys.exit(1)
    samples[(m.group(1), m.group(2) or "")] = float(m.group(3))
st = json.load(open(sys.argv[2]))
bad = []
def eq(name, labels, want):
    got = samples.get((name, labels))
    if got is None or got != float(want):
        bad.append(f"{name}{labels}: metrics {got} status {want}")
for p in st["ports"]:
    l = '{port="%s"}' % p["name"]
    s = p["stats"]
    for f, k in [("rx_packets", "ipackets"), ("tx_packets", "opackets"), ("rx_bytes", "ibytes"),
                 ("tx_bytes", "obytes"), ("rx_missed_packets", "imissed"), ("rx_errors", "ierrors"),
                 ("tx_errors", "oerrors"), ("rx_nombuf", "rx_nombuf")]:
        eq(f"spanbox_port_{f}_total", l, s[k])
    eq("spanbox_port_link_up", l, 1 if p["link"]["up"] else 0)
for w in st["workers"]:
    wl = 'worker="%d"' % w["id"]
    for pn, c in w["ports"].items():
        for k in ["rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "drop_packets", "drop_bytes"]:
            eq(f"spanbox_worker_{k}_total", '{%s,port="%s"}' % (wl, pn), c[k])
    for k in ["restarts", "crashes", "hangs", "loops", "idle_sleeps", "bad_packets"]:
        if k in ("loops", "idle_sleeps"):
            continue  # live counters of an idle worker: they move between the two reads
        eq(f"spanbox_worker_{k}_total", "{%s}" % wl, w[k])
    eq("spanbox_worker_state", '{%s,state="%s"}' % (wl, w["state"]), 1)
for m in st["mirrors"]:
    ml = 'session="%d",name="%s"' % (m["id"], m["name"])
    c = m["counters"]
    for f, k in [("packets", "mirrored_packets"), ("bytes", "mirrored_bytes"), ("copied_packets", "copied"),
                 ("shared_packets", "shared"), ("filtered_out_packets", "filtered_out"),
                 ("sampled_out_packets", "sampled_out"), ("truncated_packets", "truncated")]:
        eq(f"spanbox_mirror_{f}_total", "{%s}" % ml, c[k])
    for r in ["txfull", "nombuf", "malformed"]:
        eq("spanbox_mirror_dropped_packets_total", '{%s,reason="%s"}' % (ml, r), c["drop_" + r])
for p in st["pools"]:
    pl = '{pool="%s",socket="%d"}' % (p["name"], p["socket"])
    eq("spanbox_pool_size_mbufs", pl, p["size"])
    eq("spanbox_pool_cache_size_mbufs", pl, p["cache_size"])
for b in bad:
    print(b)
print("compared %d ports, %d workers, %d mirror sessions, %d pools" %
      (len(st["ports"]), len(st["workers"]), len(st["mirrors"]), len(st["pools"])))
sys.exit(1 if bad else 0)
EOF
# same_as_status: /metrics and /status read back to back agree (5 tries: the primary refreshes
# port counters every 100 ms, so a pair of reads may straddle a refresh)
same_as_status() {
	local i
	for i in 1 2 3 4 5; do
		curl -fsS --max-time 5 "$BASE/metrics" >"$TMP/m.txt" && get "$API/status" >"$TMP/s.json" || continue
		python3 "$TMP/cmp.py" "$TMP/m.txt" "$TMP/s.json" >"$TMP/cmp.out" && { sed 's/^/# /' "$TMP/cmp.out"; return 0; }
		sleep 0.3
	done
	sed 's/^/# mismatch: /' "$TMP/cmp.out"
	return 1
}

jq -n --arg db "$DB" --arg tok "$TOKEN" '{
  eal: {file_prefix: "sbxc", socket_mem_mb: 256, primary_lcore: 80, mgmt_lcore: 81},
  ports: [
    {name: "p0", devargs: "net_tap0,iface=sbxCp0", netns: "sbxC-a"},
    {name: "p1", devargs: "net_tap1,iface=sbxCp1", netns: "sbxC-b"},
    {name: "m", devargs: "net_null0,no-rx=1"},
    {name: "h", devargs: "net_tap2,iface=sbxCh"}],
  workers: {count: 2, lcores: [82, 83], busy_poll: false},
  forwarding: {xconnects: [["p0", "p1"]]},
  mirrors: [{id: 56, name: "mon-56", sources: [{port: "p0"}], destination: {port: "m"},
             encap: {type: "span"}}],
  mgmt: {port: 18230, database: $db, token: $tok}}' >"$CFG"

# ---------------------------------------------------------------------------------------------
# 0. the instance: primary, taps moved into the test's namespaces (as the launcher does), mgmt
for ns in "$NS_A" "$NS_B"; do ip netns del "$ns" 2>/dev/null; done
inst_start_primary c "$CFG"
check "0: primary (prefix sbxc, taps sbxCp0/sbxCp1, net_null mirror destination) ready" [ $? -eq 0 ] ||
	{ tail -n 20 "$TMP/c-primary.log"; exit 1; }
net_ok=0
for x in "$NS_A $TAP_A 198.18.56.1/24" "$NS_B $TAP_B 198.18.56.2/24"; do
	set -- $x
	ip netns add "$1" && ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 &&
		ip link set "$2" netns "$1" && ip -n "$1" addr add "$3" dev "$2" && ip -n "$1" link set "$2" up &&
		ip -n "$1" link set lo up || net_ok=1
done
check "0: taps moved into $NS_A and $NS_B, addressed and up" [ $net_ok -eq 0 ] || exit 1
sysctl -qw net.ipv6.conf.sbxCh.disable_ipv6=1 # tap sbxCh stays in the host namespace: no IPv6 chatter
inst_start_mgmt c "$CFG" "$API"
check "0: mgmt up on port $PORT" [ $? -eq 0 ] || { cat "$TMP/c-mgmt.log"; exit 1; }
check "0: ping crosses the appliance ($NS_A -> $NS_B)" ip netns exec "$NS_A" ping -c 3 -i 0.2 -W 2 -q 198.18.56.2
sleep 0.5

# ---------------------------------------------------------------------------------------------
# 1. the exposition: format, lint, families
code=$(req m1 "$BASE/metrics")
cp "$TMP/m1.body" "$TMP/m.txt"
echo "# /metrics: HTTP $code, $(wc -l <"$TMP/m.txt") lines, $(grep -c '^# TYPE' "$TMP/m.txt") families"
check "1: GET /metrics: 200, Content-Type text/plain; version=0.0.4; charset=utf-8" \
	cond "[ '$code' = 200 ] && [ \"\$(hdr m1 Content-Type)\" = 'text/plain; version=0.0.4; charset=utf-8' ]"
check "1: promtool check metrics: no output (no parse error, no lint problem), exit 0" promcheck "$TMP/m.txt"
check "1: every family has a # HELP and a # TYPE line, and every counter ends in _total" cond \
	"[ \"\$(grep -c '^# HELP ' '$TMP/m.txt')\" = \"\$(grep -c '^# TYPE ' '$TMP/m.txt')\" ] &&
	 ! grep -E '^# TYPE [a-z_]+ counter$' '$TMP/m.txt' | grep -vE '_total counter$' | grep -q ."
check "1: spanbox_up 1" grep -qx 'spanbox_up 1' "$TMP/m.txt"
esc_db=$(sed 's/\\/\\\\/g; s/"/\\"/g' <<<"$DB")
check "1: spanbox_mgmt_info's database label is the path with its quote and backslash escaped" \
	grep -qF "database=\"$esc_db\"} 1" "$TMP/m.txt"
fams="spanbox_port_rx_packets_total spanbox_port_tx_bytes_total spanbox_port_rx_missed_packets_total
	spanbox_port_rx_errors_total spanbox_port_link_up spanbox_worker_rx_packets_total
	spanbox_worker_busy_cycles_total spanbox_worker_restarts_total spanbox_worker_crashes_total
	spanbox_worker_state spanbox_worker_cycles_per_packet spanbox_mirror_packets_total
	spanbox_mirror_copied_packets_total spanbox_mirror_shared_packets_total
	spanbox_mirror_filtered_out_packets_total spanbox_mirror_dropped_packets_total spanbox_pool_size_mbufs
	spanbox_pool_in_use_mbufs spanbox_pool_cached_mbufs spanbox_pool_cache_size_mbufs
	spanbox_database_size_bytes spanbox_mgmt_info"
missing=$(for f in $fams; do grep -q "^$f[{ ]" "$TMP/m.txt" || echo "$f"; done | tr '\n' ' ')
check "1: the families of ports, workers, mirror sessions, pools, mgmt and database all have samples${missing:+ (missing: $missing)}" \
	[ -z "$missing" ]
check "1: mirror session 56 appears with its id and name labels" \
	grep -q '^spanbox_mirror_packets_total{session="56",name="mon-56"} ' "$TMP/m.txt"
check "1: worker 0's state is a state set: running 1, the six other states 0" cond \
	"[ \"\$(grep -c '^spanbox_worker_state{worker=\"0\",' '$TMP/m.txt')\" = 7 ] &&
	 grep -qx 'spanbox_worker_state{worker=\"0\",state=\"running\"} 1' '$TMP/m.txt' &&
	 [ \"\$(grep '^spanbox_worker_state{worker=\"0\",' '$TMP/m.txt' | awk '{ s += \$2 } END { print s }')\" = 1 ]"
db_size=$(get "$API/status" | jq '.database.size_bytes')
m_size=$(get "$BASE/metrics" | awk '$1 == "spanbox_database_size_bytes" { print $2 }')
check "1: spanbox_database_size_bytes ($m_size) equals /status database.size_bytes ($db_size)" [ "$m_size" = "$db_size" ]

# ---------------------------------------------------------------------------------------------
# 2. the same numbers as /status, and they rise with traffic
check "2: with no traffic, /metrics equals /status: every port counter and link, every worker's per-port counters, restarts, crashes, state, mirror and pool numbers" \
	same_as_status
cp "$TMP/m.txt" "$TMP/before.txt"
rx_p0=$(metric spanbox_port_rx_packets_total 'port="p0"' <"$TMP/before.txt")
wrx() { awk '/^spanbox_worker_rx_packets_total\{worker="[0-9]+",port="p0"\} / { s += $2 } END { print s + 0 }' "$1"; }
mir() { awk '/^spanbox_mirror_packets_total\{session="56",name="mon-56"\} / { print $2 }' "$1"; }
w_before=$(wrx "$TMP/before.txt") mir_before=$(mir "$TMP/before.txt")
ip netns exec "$NS_A" ping -c 20 -i 0.02 -W 2 -q 198.18.56.2 >/dev/null
sleep 0.4 # one port refresh of the primary (100 ms) and then some
get "$BASE/metrics" >"$TMP/after.txt"
cp "$TMP/after.txt" "$TMP/m.txt"
rx_p0b=$(metric spanbox_port_rx_packets_total 'port="p0"') w_after=$(wrx "$TMP/after.txt") mir_after=$(mir "$TMP/after.txt")
echo "# 20 pings: port p0 rx $rx_p0 -> $rx_p0b, workers' rx on p0 $w_before -> $w_after, mirror 56 $mir_before -> $mir_after"
check "2: 20 pings: spanbox_port_rx_packets_total{port=p0} rose by at least 20" cond "[ $((rx_p0b - rx_p0)) -ge 20 ]"
check "2: ... the workers' spanbox_worker_rx_packets_total on p0 rose by at least 20" cond "[ $((w_after - w_before)) -ge 20 ]"
check "2: ... mirror session 56 (p0 -> m) mirrored at least 20 more frames" cond "[ $((mir_after - mir_before)) -ge 20 ]"
check "2: after the traffic, /metrics equals /status again" same_as_status

# ---------------------------------------------------------------------------------------------
# 3. GET /api/v1/ports/{name}/stats
stats_eq() { # stats_eq PORT: the route equals /status (5 tries, see same_as_status)
	local i
	for i in 1 2 3 4 5; do
		get "$API/ports/$1/stats" >"$TMP/ps.json" && get "$API/status" >"$TMP/s.json" || continue
		jq -e --arg p "$1" --slurpfile s "$TMP/s.json" '($s[0].ports[] | select(.name == $p)) as $q |
			.stats == {rx_packets: $q.stats.ipackets, tx_packets: $q.stats.opackets, rx_bytes: $q.stats.ibytes,
			           tx_bytes: $q.stats.obytes, rx_errors: $q.stats.ierrors, tx_errors: $q.stats.oerrors,
			           rx_missed: $q.stats.imissed, rx_nombuf: $q.stats.rx_nombuf}
			and .workers == $q.workers' "$TMP/ps.json" >/dev/null && return 0
		sleep 0.3
	done
	echo "# $1/stats: $(jq -c '{stats, workers}' "$TMP/ps.json")"
	return 1
}
for p in p0 m; do
	check "3: GET /ports/$p/stats equals /status ports[$p]: stats (rx/tx packets, bytes, errors, missed, nombuf) and workers" stats_eq "$p"
	echo "# $p xstats: $(jq -c '{ethdev, stats_source, n: (.xstats | length), some: (.xstats // {} | to_entries[:4] | from_entries), xstats_error}' "$TMP/ps.json")"
	check "3: ... read from the ethdev by mgmt, with a non-empty xstats object" \
		jq -e '.stats_source == "ethdev" and (.xstats | type) == "object" and (.xstats | length) > 0' "$TMP/ps.json"
done
check "3: ... p0's xstats count its received frames (rx_good_packets equals stats.rx_packets)" \
	cond "get '$API/ports/p0/stats' | jq -e '.xstats.rx_good_packets == .stats.rx_packets' >/dev/null"
check "3: ... per_worker lists each worker, and they add up to workers" \
	cond "get '$API/ports/p0/stats' | jq -e '(.per_worker | length) == 2 and ([.per_worker[].rx_packets] | add) == .workers.rx_packets' >/dev/null"
code=$(req nostats "$API/ports/nope/stats")
check "3: GET /ports/nope/stats: 404 with a JSON error" cond "[ '$code' = 404 ] && jq -e '.error.code == 404' '$TMP/nostats.body' >/dev/null"

# ---------------------------------------------------------------------------------------------
# 4. PUT /api/v1/ports/{name}/link
ev0=$(nevents)
for body in '{"up": "no"}' '{"up": 0}' '{"up": null}' '{}' '[true]' '{"up": false, "speed": 10}'; do
	code=$(link bad p0 "$body")
	echo "# PUT p0/link $body: HTTP $code $(cat "$TMP/bad.body")"
	field=up; [[ "$body" == *speed* ]] && field=speed
	check "4: PUT /ports/p0/link $body: 422 with error.field \"$field\"" \
		cond "[ '$code' = 422 ] && jq -e --arg f '$field' '.error.code == 422 and .error.field == \$f' '$TMP/bad.body' >/dev/null"
done
code=$(link badjson p0 '{"up": tru}')
check "4: PUT /ports/p0/link with bad JSON: 400" [ "$code" = 400 ]
code=$(link nope nope '{"up": false}')
check "4: PUT /ports/nope/link: 404" cond "[ '$code' = 404 ] && jq -e '.error.code == 404' '$TMP/nope.body' >/dev/null"
sleep 0.3
check "4: after the refused requests nothing changed: $TAP_A still UP in $NS_A, /ports/p0 link up, no port_link event" \
	cond "ns_up $NS_A $TAP_A && port_up p0 true && [ \"\$(nevents)\" = '$ev0' ]"

code=$(link down p0 '{"up": false}')
echo "# PUT p0/link down: HTTP $code $(cat "$TMP/down.body")"
check "4: PUT /ports/p0/link {\"up\": false}: 200, the new state link.up false" \
	cond "[ '$code' = 200 ] && jq -e '.port == \"p0\" and .link.up == false' '$TMP/down.body' >/dev/null"
echo "# $(ip -n "$NS_A" -o link show "$TAP_A")"
check "4: ... ip -n $NS_A link show $TAP_A: no longer UP" cond "! ns_up $NS_A $TAP_A"
check "4: ... /ports/p0 and /metrics say link down" \
	cond "port_up p0 false && get '$BASE/metrics' | grep -qx 'spanbox_port_link_up{port=\"p0\"} 0'"
check "4: ... ping through p0 fails now" cond "! ip netns exec $NS_A ping -c 2 -i 0.2 -W 1 -q 198.18.56.2 >/dev/null 2>&1"
get "$API/events?limit=20" >"$TMP/ev.json"
# newest first by time: the primary's events (appliance start, links) are stored when mgmt reads
# them, after mgmt's own; by id alone mgmt_start came before the primary's earlier ones
check "4: ... GET /events lists newest first by time ($(jq -r 'map(.time) | .[-1] + " .. " + .[0]' "$TMP/ev.json"))" \
	jq -e 'length >= 3 and (map(.time) == (map(.time) | sort | reverse))' "$TMP/ev.json"
echo "# event: $(jq -c '[.[] | select(.kind == "port_link")][0]' "$TMP/ev.json")"
check "4: ... an event port_link names the port, the change and the client address 127.0.0.1" \
	jq -e '[.[] | select(.kind == "port_link")][0].detail | test("port p0 link set down by 127\\.0\\.0\\.1:[0-9]+: now down")' "$TMP/ev.json"
code=$(link up p0 '{"up": true}')
echo "# PUT p0/link up: HTTP $code $(cat "$TMP/up.body")"
check "4: PUT /ports/p0/link {\"up\": true}: 200, link.up true; $TAP_A UP again in $NS_A" \
	cond "[ '$code' = 200 ] && jq -e '.link.up == true' '$TMP/up.body' >/dev/null && ns_up $NS_A $TAP_A"
check "4: ... ping crosses the appliance again" ip netns exec "$NS_A" ping -c 3 -i 0.2 -W 2 -q 198.18.56.2
check "4: ... two port_link events in all" cond "[ \"\$(nevents)\" = $((ev0 + 2)) ]"
code=$(link ndown m '{"up": false}')
echo "# PUT m/link down: HTTP $code $(cat "$TMP/ndown.body")"
check "4: PUT /ports/m/link down on the net_null port (DPDK 22.11's null PMD cannot set its link): 409 saying so" \
	cond "[ '$code' = 409 ] && jq -e '.error.message | test(\"driver cannot set the link\")' '$TMP/ndown.body' >/dev/null"
check "4: ... and nothing changed: /ports/m link still up" port_up m true

host_up() { ip -o link show sbxCh | grep -q '<[^>]*\bUP\b'; }
check "4: tap sbxCh (host namespace) is UP before" host_up
code=$(link hdown h '{"up": false}')
echo "# PUT h/link down: HTTP $code $(cat "$TMP/hdown.body"); $(ip -o link show sbxCh)"
check "4: PUT /ports/h/link down (tap in the host namespace, rte_eth_dev_set_link_down): 200, link.up false, sbxCh no longer UP" \
	cond "[ '$code' = 200 ] && jq -e '.link.up == false' '$TMP/hdown.body' >/dev/null && ! host_up && port_up h false"
code=$(link hup h '{"up": true}')
check "4: ... and up again: 200, link.up true, sbxCh UP" \
	cond "[ '$code' = 200 ] && jq -e '.link.up == true' '$TMP/hup.body' >/dev/null && host_up && port_up h true"

# ---------------------------------------------------------------------------------------------
# 5. appliance down: /metrics still answers
inst_stop_pid "$INST_PRIMARY"
down() { get "$API/health" | jq -e '.appliance == "down"' >/dev/null; }
check "5: primary stopped: /health says down" wait_for 50 down
code=$(req mdown "$BASE/metrics")
cp "$TMP/mdown.body" "$TMP/m.txt"
sed 's/^/# down: /' "$TMP/m.txt" | grep -v '^# down: # '
check "5: GET /metrics: 200 with spanbox_up 0, spanbox_mgmt_info and spanbox_database_size_bytes" \
	cond "[ '$code' = 200 ] && grep -qx 'spanbox_up 0' '$TMP/m.txt' && grep -q '^spanbox_mgmt_info{' '$TMP/m.txt' &&
	      grep -q '^spanbox_database_size_bytes ' '$TMP/m.txt'"
check "5: ... no appliance family (ports, workers, mirrors, pools)" \
	cond "! grep -qE '^spanbox_(port|worker|mirror|pool)_' '$TMP/m.txt'"
check "5: ... promtool check metrics: no output, exit 0" promcheck "$TMP/m.txt"
code=$(req sdown "$API/ports/p0/stats")
check "5: GET /ports/p0/stats: 503" [ "$code" = 503 ]
