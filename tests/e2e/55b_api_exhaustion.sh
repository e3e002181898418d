#!/usr/bin/env bash
# Idle and slow connections cannot lock the API out (issue 10, section 4). Before: each of the
# 64 connections libmicrohttpd allowed was held until the 10 s idle timeout, in turn, so 200 idle
# connections delayed a GET by 29 s, and 64 clients sending one header byte a second held the
# whole connection limit forever.
# Now: 200 idle + 200 slow connections, and floods above the connection limit from one address,
# from two others, and from the normal client's own address, while a GET of /api/v1/health and
# /api/v1/status answers in under 1 s; the idle connections, slow headers and slow bodies are
# closed by the request deadline (10 s), slow readers of a big file by the answer deadline;
# keep-alive connections of a normal client from another address survive the floods; mgmt's open
# fds never exceed its limit and come back to their count once the attackers close. The attack
# and the measures: tests/lib/api_flood.py (bounded python3).
#
# Own instance: file prefix t10cx, lcores 113-115, API port 18363, database under $TMP, net_null
# ports without RX.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"

PORT=18363
API=http://127.0.0.1:$PORT/api/v1
CFG="$TMP/c.json" OUT="$TMP/flood.json"
trap 'inst_cleanup; rm -rf "$TMP"' EXIT
cond() { eval "$1"; }
j() { jq -e "$1" "$OUT" >/dev/null; } # j FILTER: FILTER holds on the measures

cat >"$CFG" <<EOF
{ "eal": {"file_prefix": "t10cx", "socket_mem_mb": 128, "primary_lcore": 113, "mgmt_lcore": 114},
  "ports": [ {"name": "p0", "devargs": "net_null0,no-rx=1"}, {"name": "p1", "devargs": "net_null1,no-rx=1"} ],
  "workers": {"count": 1, "lcores": [115], "busy_poll": false},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mgmt": {"port": $PORT, "database": "$TMP/c.db", "web_root": "$TMP/www"} }
EOF
mkdir -p "$TMP/www"
truncate -s 64M "$TMP/www/big.bin" # what the slow readers ask for (sparse)

inst_start_primary c "$CFG"
check "primary (prefix t10cx, net_null ports) ready" [ $? -eq 0 ] || { tail -n 20 "$TMP/c-primary.log"; exit 1; }
inst_start_mgmt c "$CFG" "$API"
check "mgmt up on port $PORT" [ $? -eq 0 ] || { cat "$TMP/c-mgmt.log"; exit 1; }
sed 's/^/# mgmt log: /' "$TMP/c-mgmt.log"

# "http: at most L connections; above H, or above P from one address, a new connection closes
# the oldest idle one; ..."
LIMITS=$(sed -nE 's/.*http: at most ([0-9]+) connections; above ([0-9]+), or above ([0-9]+) from one address,.*/\1 \2 \3/p' "$TMP/c-mgmt.log")
check "mgmt logs its connection limits (at most L, above H or P from one address: close the oldest idle)" [ -n "$LIMITS" ]
read -r L H P <<<"${LIMITS:-1024 960 768}"
echo "# limits: at most $L connections, eviction above $H in all or above $P from one address"
check "... at least 256 connections, a reserve above H, one address at most 3/4 of them" \
	cond "[ $L -ge 256 ] && [ $H -lt $L ] && [ $P -le $((L * 3 / 4)) ] && [ $P -lt $H ]"

timeout 240 python3 "$ROOT/tests/lib/api_flood.py" --port "$PORT" --pid "$INST_MGMT" \
	--limit "$L" --high "$H" --share "$P" >"$OUT" 2>"$TMP/flood.err"
rc=$?
sed 's/^/# /' "$TMP/flood.err" | head -n 20
check "the attack script ran to its end (exit 0 within 240 s)" [ "$rc" = 0 ] || { cat "$OUT"; exit 1; }
jq -c '.' "$OUT" | head -c 4000 | sed 's/^/# measures: /'; echo
jq -r '[.a_gets[], .b1_gets[], .b2_gets[], .b3_gets[], .c_gets[]][] | "# GET \(.path) during \(.phase): \(.status) in \(.ms) ms \(.error // "")"' "$OUT"

# every GET of a phase: 200 and a JSON object, within 1 s
fast() { j "[.$1[] | .status == 200 and .json and .ms < 1000] | length > 0 and all"; }
check "A: 200 idle and 200 slow connections opened" j '.a_idle_connected == 200 and .a_slow_connected == 200'
check "A: while they are open, GET /api/v1/health and /api/v1/status answer 200 JSON in under 1 s (3 times, 1-7 s into it)" fast a_gets
check "A: mgmt holds all of them (open fds before + 440 + 20 files, within 10)" \
	j '.a_fds_peak >= .fds_before + 450 and .a_fds_peak <= .fds_before + .limit'
check "A: 20 slow bodies and 20 slow readers opened, the readers' answers started" \
	j '.a_body_connected == 20 and .a_reader_connected == 20 and .a_reader_started == 20'
check "A: the server closes every idle connection, 9-13 s after it opened (request deadline 10 s)" \
	j '.a_idle_closed == 200 and .a_idle_closed_min_s >= 9 and .a_idle_closed_max_s <= 13'
check "A: ... every slow one (one header byte a second), 9-13 s after it opened" \
	j '.a_slow_closed == 200 and .a_slow_closed_min_s >= 9 and .a_slow_closed_max_s <= 13'
check "A: ... every slow body (POST headers, then one body byte a second), 9-13 s after it opened" \
	j '.a_body_closed == 20 and .a_body_closed_min_s >= 9 and .a_body_closed_max_s <= 13'
check "A: ... and every slow reader of a 64 MiB file (1 KiB a second; answer deadline 10 s): mgmt's fds back to the count before A" \
	j '.a_fds_end <= .fds_before and .a_reader_max_bytes < 1048576'
check "B1: 20 keep-alive connections of a normal client (127.0.0.1), then $((L + 100)) idle ones from 127.0.0.2" \
	j '.b_keepalive == 20 and .b1_flood_connected == .limit + 100'
check "B1: a fresh GET of health and status answers 200 JSON in under 1 s" fast b1_gets
check "B1: all 20 keep-alive connections still answer (the flood evicted its own oldest)" j '.b1_keepalive_ok == 20'
check "B1: 127.0.0.2 keeps at most $P connections open (its share)" j '.b1_flood_open <= .share and .b1_flood_open >= .share - 10'
check "B1: mgmt's open fds stay within its limit (before + $L)" j '.b1_fds_peak <= .fds_before + .limit'
check "B2: $((L * 7 / 10)) idle connections each from 127.0.0.2 and 127.0.0.3 (together above the limit)" \
	j '.b2_flood_connected == 2 * (.limit * 7 / 10 | floor)'
check "B2: a fresh GET of health and status answers 200 JSON in under 1 s" fast b2_gets
check "B2: all 20 keep-alive connections of 127.0.0.1 still answer (the biggest address is evicted)" j '.b2_keepalive_ok == 20'
check "B2: the two floods together keep at most $H - 20 connections open" j '.b2_flood_open <= .high - 20'
check "B2: mgmt's open fds stay within its limit" j '.b2_fds_peak <= .fds_before + .limit'
check "B3: $((L + 100)) idle connections from 127.0.0.1 itself" j '.b3_flood_connected == .limit + 100'
check "B3: a fresh GET from 127.0.0.1 answers 200 JSON in under 1 s" fast b3_gets
check "B3: mgmt's open fds stay within its limit" j '.b3_fds_peak <= .fds_before + .limit'
check "C: once the attackers closed, mgmt's open fds are back to their count before ($(jq .fds_before "$OUT")), within 12 s (in $(jq .c_wait_s "$OUT") s)" \
	j '.fds_after <= .fds_before'
check "C: a normal GET of health and status still answers 200 JSON in under 1 s" fast c_gets
code=$(curl -sS --max-time 5 -o "$TMP/h.body" -w '%{http_code}' "$API/health")
check "C: curl GET /api/v1/health: 200, appliance up" \
	cond "[ '$code' = 200 ] && jq -e '.appliance == \"up\"' '$TMP/h.body' >/dev/null"
check "mgmt logged that it closed idle connections to make room (at most one line per 10 s)" \
	grep -qE 'http: connection limits reached: closed [0-9]+ idle connections to make room for new ones' "$TMP/c-mgmt.log"
grep 'connection limits reached' "$TMP/c-mgmt.log" | sed 's/^/# mgmt log: /'
check "mgmt is still the same process" kill -0 "$INST_MGMT"
inst_cleanup
