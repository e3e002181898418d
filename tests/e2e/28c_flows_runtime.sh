#!/usr/bin/env bash
# The flows section changed at run time (issue #28 "live changes through the API like the other
# runtime tables, stored in SQLite"; docs/RUNTIME_TABLES.md "Flows"): GET/PUT /api/v1/flows/config.
# One long UDP flow is read from a pcap input port at 20 frames/s (pps=20) and cross-connected to p1;
# flows meter p0 with an active timeout of 2 s and export over UDP to nfcapd A.
#  c. Bad PUT bodies: 4xx naming the field (flows.collectors[0].port, flows.active_timeout_s,
#     flows.ports[0].port, flows.collectors, flows.<unknown key>, flows; flows_per_worker, the size
#     of the tables, 409), and a PUT /config changing flows_per_worker: 422 naming it; after each,
#     GET /flows/config unchanged and nothing stored in SQLite.
#  a. PUT: collector A -> collector B (another UDP port) and active timeout 2 s -> 1 s: 200, GET shows
#     it, the exporter sends to B within a second; the worker forwarded frames before and after (none
#     dropped, no restart); every record the exporter took is counted sent or lost at A (retired) or
#     B, and nfcapd A and B hold exactly the records counted sent to them: none vanished silently.
#  b. Active timeout to the second (nfdump's flowStart/End): at A each record of the flow lasts
#     1.5..2 s and the next begins 2..2.5 s after it began; at B (1 s) 0.5..1 s and 1..1.5 s.
#  d. The change is in config_store (SQLite) without flows_per_worker, and survives a restart of mgmt
#     (killed with -9) and of the appliance: GET /flows/config and the exporter's collector are B with 1 s after the restart,
#     and B gets the new run's records.
#  e. A config without flows: PUT turns metering on (the worker creates its table, the primary its
#     rings and exporter thread; records at collector C), then off (nothing more metered, forwarding
#     goes on, the open flow still exported); C holds the records counted sent.
# Resources: file prefix sbxfr, lcores 121 (worker) 122 (primary) 123 (mgmt), API 19010, collectors
# UDP 19011 (A), 19012 (B), 19013 (nobody: refused bodies name it), 19014 (C).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
NFPIDS=()
cleanup() {
	inst_cleanup
	local p
	for p in "${NFPIDS[@]}"; do kill "$p" 2>/dev/null; done
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
export TZ=UTC
PORT=19010 API=http://127.0.0.1:19010/api/v1 A=19011 B=19012 NOBODY=19013 C=19014
TOKEN=sbxfr-token-0123456789abcdef
CFG=$TMP/fr.json DB=$TMP/fr.db PAUSE=$TMP/bridge.pause
for t in nfcapd nfdump jq curl sqlite3 python3; do
	command -v $t >/dev/null || { not_ok "$t not installed (./spanbox install-deps)"; exit 1; }
done

# one UDP flow 10.28.0.1:40000 -> 10.28.0.2:4739, 600 frames (30 s at 20/s)
python3 - "$TMP/in.pcap" <<'PY'
import struct, sys
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff); s += s >> 16
    return ~s & 0xffff
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(600):
        payload = struct.pack("!I", i) + bytes(56)
        udp = struct.pack("!HHHH", 40000, 4739, 8 + len(payload), 0) + payload
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), i & 0xffff, 0, 64, 17, 0,
                         bytes([10, 28, 0, 1]), bytes([10, 28, 0, 2]))
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        fr = bytes.fromhex("02000000000202000000000108 00".replace(" ", "")) + ip + udp
        f.write(struct.pack("<IIII", 1700000000 + i // 20, (i % 20) * 50000, len(fr), len(fr)) + fr)
PY
cat >"$CFG" <<JSON
{
  "eal": {"file_prefix": "sbxfr", "socket_mem_mb": 256, "primary_lcore": 122, "mgmt_lcore": 123},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$TMP/in.pcap,pps=20"},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$TMP/out.pcap"}
  ],
  "workers": {"count": 1, "lcores": [121], "standby": 0},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "flows": {"ports": [{"port": "p0", "direction": "rx"}], "active_timeout_s": 2, "idle_timeout_s": 15,
            "flows_per_worker": 4096, "observation_domain_id": 28,
            "collectors": [{"address": "127.0.0.1", "port": $A, "transport": "udp"}]},
  "mgmt": {"port": $PORT, "database": "$DB", "token": "$TOKEN"}
}
JSON

nfstart() { # nfstart DIR PORT
	mkdir -p "$1"
	nfcapd -b 127.0.0.1 -p "$2" -w "$1" -t 3600 -B 4000000 >"$1.log" 2>&1 &
	NFPIDS+=($!)
	eval "NF_$(basename "$1")=$!"
}
nfstop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
# nfrecs DIR: "start_ms end_ms packets" of the records of our flow, by start
nfrecs() {
	nfdump -R "$1" -q -N -o 'fmt:%ts|%te|%pkt' 'src ip 10.28.0.1 and dst port 4739' 2>/dev/null | python3 -c '
import datetime, sys
ms = lambda s: int(datetime.datetime.strptime(s.strip(), "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc).timestamp() * 1000 + 0.5)
for l in sys.stdin:
    f = l.split("|")
    if len(f) == 3:
        print(ms(f[0]), ms(f[1]), f[2].strip())' | sort -n
}
# spans FILE ACTIVE_S: checks the records of FILE but the last (it may have ended otherwise)
spans() {
	python3 - "$1" "$2" <<'PY'
import sys
r = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
act = float(sys.argv[2]) * 1000
bad = []
for i, (s, e, p) in enumerate(r[:-1]):
    if not (act - 500 <= e - s <= act):
        bad.append("record %d lasts %d ms" % (i, e - s))
    if not (act <= r[i + 1][0] - s <= act + 500):
        bad.append("record %d begins %d ms after %d" % (i + 1, r[i + 1][0] - s, i))
print("; ".join(bad) if bad else "%d records" % len(r))
sys.exit(1 if bad or len(r) < 3 else 0)
PY
}
get() { curl -fsS --max-time 5 "$API$1"; }
# req METHOD PATH BODY: prints the HTTP status, the body goes to $TMP/body
req() {
	curl -sS --max-time 15 -o "$TMP/body" -w '%{http_code}' -X "$1" -H "Authorization: Bearer $TOKEN" \
		-H 'Content-Type: application/json' --data-binary "$3" "$API$2"
}
field() { jq -r '.error.field' "$TMP/body"; }
# jqe EXPR [ARGS...] <INPUT: jq -e that fails on an empty input too (jq 1.6 exits 0 on none)
jqe() { local in; in=$(cat); [ -n "$in" ] && jq -e "$@" <<<"$in" >/dev/null; }
stored_rows() { sqlite3 "$DB" "SELECT count(*) FROM config_store" 2>/dev/null || echo 0; }
wstat() { get "/ports/$1/stats" | jq ".workers.$2"; } # wstat PORT COUNTER: the workers' counter of PORT

nfstart "$TMP/A" $A
nfstart "$TMP/B" $B
sleep 0.5
inst_start_primary r1 "$CFG" SBX_TEST_BRIDGE_PAUSE_FILE="$PAUSE"
check "primary ready" [ -f "$TMP/r1.ready" ] || { tail -20 "$TMP/r1-primary.log" | sed 's/^/# /'; exit 1; }
inst_start_mgmt r1 "$CFG" "$API"
check "mgmt up" [ $? -eq 0 ] || exit 1
# the routes exist (the old code answered 404)
code=$(curl -sS -o "$TMP/g0" -w '%{http_code}' --max-time 5 "$API/flows/config")
check "GET /flows/config: 200 with the file's section (p0, 2 s / 15 s, 4096 flows, domain 28, collector A)" \
	cond "[ $code = 200 ] && jqe '.enabled and .ports == [{\"port\": \"p0\", \"direction\": \"rx\"}] and .active_timeout_s == 2 and .idle_timeout_s == 15 and .flows_per_worker == 4096 and .observation_domain_id == 28 and .collectors == [{\"address\": \"127.0.0.1\", \"port\": $A, \"transport\": \"udp\"}]' <'$TMP/g0'"

# --- c. bad bodies: 4xx naming the field, nothing changed ------------------------------------------
COL="\"collectors\": [{\"address\": \"127.0.0.1\", \"port\": $NOBODY}]"
bad() { # bad CODE FIELD BODY
	local code
	code=$(req PUT /flows/config "$3")
	check "PUT /flows/config $3: $1 naming $2 (got $code $(field)), GET unchanged, nothing stored" \
		cond "[ '$code' = $1 ] && [ '$(field)' = '$2' ] && get /flows/config | jqe --slurpfile g '$TMP/g0' '. == \$g[0]' && [ \$(stored_rows) = 0 ]"
}
bad 422 "flows.collectors[0].port" '{"collectors": [{"address": "127.0.0.1", "port": 70000}]}'
bad 422 "flows.collectors[0].address" '{"collectors": [{"address": "collector.example"}]}'
bad 422 "flows.active_timeout_s" "{\"active_timeout_s\": 0, $COL}"
bad 422 "flows.ports[0].port" "{\"ports\": [{\"port\": \"nope\"}], $COL}"
bad 422 "flows.collectors" '{"enabled": true}'
bad 422 "flows.timeout" "{\"timeout\": 5, $COL}"
bad 422 "flows" '[1, 2]'
bad 409 "flows.flows_per_worker" "{\"flows_per_worker\": 8192, $COL}"
code=$(req PUT /config "$(get /config | jq '.flows.flows_per_worker = 8192 | .flows.collectors[0].port = '$NOBODY)")
check "PUT /config with flows.flows_per_worker changed: 422 naming it (got $code $(field)), nothing changed" \
	cond "[ '$code' = 422 ] && [ '$(field)' = flows.flows_per_worker ] && get /flows/config | jqe --slurpfile g '$TMP/g0' '. == \$g[0]' && [ \$(stored_rows) = 0 ]"

# --- a + b. collector A -> B, active 2 s -> 1 s, while the flow runs ------------------------------
wait_for 150 cond "[ \$(get /flows | jq '.collectors[0].records_sent') -ge 3 ]"
check "collector A receives the flow's active-timeout records ($(get /flows | jq '.collectors[0].records_sent') sent)" \
	cond "[ \$(get /flows | jq '.collectors[0].records_sent') -ge 3 ]"
tx0=$(wstat p1 tx_packets)
NEW="{\"ports\": [{\"port\": \"p0\"}], \"active_timeout_s\": 1, \"idle_timeout_s\": 15, \"observation_domain_id\": 28, \"collectors\": [{\"address\": \"127.0.0.1\", \"port\": $B}]}"
code=$(req PUT /flows/config "$NEW")
check "PUT /flows/config (collector B, active 1 s): 200 with the new section, flows_per_worker kept (got $code)" \
	cond "[ '$code' = 200 ] && jqe '.active_timeout_s == 1 and .flows_per_worker == 4096 and .collectors == [{\"address\": \"127.0.0.1\", \"port\": $B, \"transport\": \"udp\"}]' <'$TMP/body'"
code=$(req PUT /tool_groups '{"tool_groups": []}') # a change of other tables: the exporter is not touched
wait_for 20 cond "get /flows | jqe '.collectors[0].port == $B'"
check "GET /flows: the exporter sends to B within 2 s, A's counters retired; one reconfiguration (a tool_groups change, $code, is none)" \
	cond "[ '$code' = 200 ] && get /flows | jqe '.collectors[0].port == $B and .reconfigurations == 1 and .retired.records_sent >= 3'"
wait_for 150 cond "get /flows | jqe '.collectors[0].port == $B and .collectors[0].records_sent >= 5'"
check "records resume at collector B ($(get /flows | jq -c '.collectors[0] | [.port, .records_sent]'))" \
	cond "get /flows | jqe '.collectors[0].port == $B and .collectors[0].records_sent >= 5'"
tx1=$(wstat p1 tx_packets)
touch "$PAUSE" # the input stops: the open flow leaves at its active timeout, then nothing more
sleep 2.5
f=$(get /flows)
echo "$f" | jq -c '{records_in, retired: .retired | {records_sent, records_lost}, b: .collectors[0] | {records_sent, records_lost}, w: .workers[0] | {flows_records_queued, flows_records_lost_ring}}' | sed 's/^/# /'
rx=$(wstat p0 rx_packets) tx=$(wstat p1 tx_packets) drops=$(( $(wstat p0 drop_packets) + $(wstat p1 drop_packets) ))
check "the worker forwarded before ($tx0) and after ($tx1) the change, every frame received ($rx = $tx), none dropped ($drops), never restarted" \
	cond "[ '$tx0' -gt 0 ] && [ '$tx1' -gt '$tx0' ] && [ '$rx' = '$tx' ] && [ '$drops' = 0 ] && get /workers | jqe '[.[].restarts] == [0]'"
check "no record vanished: records taken ($(jq .records_in <<<"$f")) = sent + lost at A (retired) + at B; the worker queued them all, lost none" \
	cond "jqe '.records_in > 6 and .records_in == .retired.records_sent + .retired.records_lost + .collectors[0].records_sent + .collectors[0].records_lost and .workers[0].flows_records_queued == .records_in and .workers[0].flows_records_lost_ring == 0' <<<'$f'"
A_SENT=$(jq .retired.records_sent <<<"$f") B_SENT1=$(jq '.collectors[0].records_sent' <<<"$f")
curl -fsS --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics.txt"
grep '^spanbox_flows_collector_records_sent_total' "$TMP/metrics.txt" | sed 's/^/# /'
check "/metrics: spanbox_flows_collector_records_sent_total of B ($B_SENT1) and of the retired A ($A_SENT), collector_up of B" \
	cond "grep -qx 'spanbox_flows_collector_records_sent_total{collector=\"0\",address=\"127.0.0.1\",port=\"$B\",transport=\"udp\"} $B_SENT1' '$TMP/metrics.txt' && grep -qx 'spanbox_flows_collector_records_sent_total{collector=\"retired\"} $A_SENT' '$TMP/metrics.txt' && grep -qx 'spanbox_flows_collector_up{collector=\"0\",address=\"127.0.0.1\",port=\"$B\",transport=\"udp\"} 1' '$TMP/metrics.txt'"

# --- d. stored in SQLite, survives a restart -------------------------------------------------------
kill -9 "$INST_MGMT"
inst_start_mgmt r1 "$CFG" "$API"
check "mgmt killed with -9 and started again: GET /flows/config is the changed section" \
	cond "get /flows/config | jqe '.active_timeout_s == 1 and .collectors == [{\"address\": \"127.0.0.1\", \"port\": $B, \"transport\": \"udp\"}]'"
st=$(sqlite3 "$DB" "SELECT json FROM config_store ORDER BY id DESC LIMIT 1" | jq -c .flows)
check "config_store holds the new flows section, without the static flows_per_worker ($st)" \
	cond "jqe '.active_timeout_s == 1 and .collectors[0].port == $B and (has(\"flows_per_worker\") | not)' <<<'$st'"
inst_cleanup
nfstop "$NF_A"
nfrecs "$TMP/A" >"$TMP/A.recs"
check "nfcapd A holds exactly the $A_SENT records counted sent to it ($(wc -l <"$TMP/A.recs"))" \
	[ "$(wc -l <"$TMP/A.recs")" = "$A_SENT" ]
r=$(spans "$TMP/A.recs" 2)
check "active timeout 2 s at A: each record lasts 1.5..2 s, the next begins 2..2.5 s later ($r)" \
	cond "spans '$TMP/A.recs' 2 >/dev/null"
rm -f "$PAUSE"
inst_start_both r2 "$CFG" "$API" || exit 1
check "after a restart GET /flows/config is the stored section (collector B, 1 s, 4096 flows)" \
	cond "get /flows/config | jqe '.active_timeout_s == 1 and .flows_per_worker == 4096 and .collectors == [{\"address\": \"127.0.0.1\", \"port\": $B, \"transport\": \"udp\"}]'"
check "the primary said the stored config wins" grep -q "changed through the API for" "$TMP/r2-primary.log"
wait_for 100 cond "[ \$(get /flows | jq '.collectors[0].records_sent') -ge 4 ]"
check "after the restart the exporter sends to B ($(get /flows | jq -c '.collectors[0] | [.port, .records_sent]'))" \
	cond "get /flows | jqe '.collectors[0].port == $B and .collectors[0].records_sent >= 4'"
inst_cleanup
B_SENT2=$(sed -n 's/.*flows: records_in=.* collector0_sent=\([0-9]*\) .*/\1/p' "$TMP/r2-primary.log" | tail -1)
B_SENT1F=$(sed -n 's/.*flows: records_in=.* collector0_sent=\([0-9]*\) .*/\1/p' "$TMP/r1-primary.log" | tail -1)
nfstop "$NF_B"
nfrecs "$TMP/B" >"$TMP/B.recs"
check "nfcapd B holds exactly the records counted sent to it in both runs ($B_SENT1F + $B_SENT2 = $(wc -l <"$TMP/B.recs"); $B_SENT1 at the pause)" \
	cond "[ -n '$B_SENT2' ] && [ '$B_SENT1F' = '$B_SENT1' ] && [ \$(wc -l <'$TMP/B.recs') = \$(( $B_SENT1F + $B_SENT2 )) ]"
# the first record at B is of the flow open at the change (begun under 2 s, closed at 1 s): not checked
head -$B_SENT1 "$TMP/B.recs" | tail -n +2 >"$TMP/B1.recs"
r=$(spans "$TMP/B1.recs" 1)
check "active timeout 1 s at B (changed live): each record lasts 0.5..1 s, the next begins 1..1.5 s later ($r)" \
	cond "spans '$TMP/B1.recs' 1 >/dev/null"
tail -n +$((B_SENT1 + 1)) "$TMP/B.recs" | head -n -1 >"$TMP/B2.recs"
r=$(spans "$TMP/B2.recs" 1)
check "active timeout 1 s after the restart too ($r)" cond "spans '$TMP/B2.recs' 1 >/dev/null"

# --- e. flows off at start (no section), turned on and off at run time -----------------------------
jq 'del(.flows)' "$CFG" >"$TMP/off.json" # another file: nothing stored for it
nfstart "$TMP/C" $C
inst_start_primary r3 "$TMP/off.json"
inst_start_mgmt r3 "$TMP/off.json" "$API"
check "no flows section: off, no exporter" \
	cond "get /flows | jqe '(.enabled | not) and (.exporter_running | not)' && get /flows/config | jqe '(.enabled | not) and .ports == [] and .collectors == []'"
ON="{\"ports\": [{\"port\": \"p0\"}], \"active_timeout_s\": 1, \"collectors\": [{\"address\": \"127.0.0.1\", \"port\": $C}]}"
code=$(req PUT /flows/config "$ON")
wait_for 60 cond "get /flows | jqe '.exporter_running and .collectors[0].records_sent >= 2'"
check "turned on at run time (got $code): the worker makes its table and meters, the exporter starts and sends to C ($(get /flows | jq -c '[.workers[0].flows_metered_frames, .collectors[0].records_sent]'))" \
	cond "[ '$code' = 200 ] && get /flows | jqe '.enabled and .exporter_running and .workers[0].flows_metered_frames > 20 and .collectors[0].port == $C and .collectors[0].records_sent >= 2'"
code=$(req PUT /flows/config "{\"enabled\": false, \"active_timeout_s\": 1, \"collectors\": [{\"address\": \"127.0.0.1\", \"port\": $C}]}")
sleep 1.5 # the open flow leaves at its active timeout (1 s) and is exported
m1=$(get /flows | jq '.workers[0].flows_metered_frames') t1=$(wstat p1 tx_packets)
sleep 1
f=$(get /flows)
check "turned off (got $code): nothing more metered ($m1 frames), forwarding goes on ($t1 -> $(wstat p1 tx_packets)), the table empty, every record sent" \
	cond "[ '$code' = 200 ] && jqe '(.enabled | not) and .workers[0].flows_metered_frames == $m1 and .workers[0].active == 0 and .records_in == .collectors[0].records_sent and .collectors[0].records_lost == 0 and .workers[0].flows_records_queued == .records_in' <<<'$f' && [ \$(wstat p1 tx_packets) -gt $t1 ]"
echo "$f" | jq -c "{enabled, records_in, c: .collectors[0] | {records_sent, records_lost}, w: .workers[0] | {active, flows_metered_frames, flows_records_queued, flows_expired_active, flows_expired_idle}}" | sed "s/^/# /"
C_SENT=$(jq '.collectors[0].records_sent' <<<"$f")
inst_cleanup
nfstop "$NF_C"
check "nfcapd C holds the $C_SENT records counted sent to it ($(nfrecs "$TMP/C" | wc -l))" [ "$(nfrecs "$TMP/C" | wc -l)" = "$C_SENT" ]
