#!/usr/bin/env bash
# Stats history in SQLite (issue 5 "SQLite", GET /api/v1/stats/history):
#  - a sample every second (consecutive 1 s rows, /status database.newest follows the clock);
#  - the rx_packets rate equals the stored counter's delta, and the /status counter's delta over
#    the same window; a paced pcap input (pps=100) reads as ~100 packets/s; mirror, worker, pool, map;
#  - step=10 over a range gives one point per multiple of 10; the default step keeps <= 1000 points;
#    from/to as RFC 3339 equal the same instants in unix seconds;
#  - compaction (synthetic old rows written with the sqlite3 CLI while mgmt runs): 1 s rows older
#    than 1 h are gone, the 10 s table holds the last value of each bucket at its own time, 10 s rows
#    older than 1 day become 1 min rows, 1 min rows older than 30 days are deleted, a counter reset
#    reads as a reset; the file (page_count) does not grow over repeated rounds;
#  - a second process holding an exclusive lock: /status and the history keep answering, sampling
#    pauses (writable false, one log line), and resumes after the unlock;
#  - 400 naming error.field for every bad parameter, 404 for unknown objects (nothing created);
#  - with the primary stopped, the history still answers from the database.
#
# Own instance: file prefix sbxb, lcores 75-77, API port 18220, database under $TMP, pcap ports only
# (no namespaces); compaction every 2 s (test hook SBX_TEST_HISTORY_COMPACT_S).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"

PORT=18220
API=http://127.0.0.1:$PORT/api/v1
CFG="$TMP/b.json" DB="$TMP/hist.db"
IN="$CAPTURES/bulk_zeek_ftp-8317-small.pcap"
LOCKER=
cleanup() {
	[ -n "$LOCKER" ] && kill "$LOCKER" 2>/dev/null
	inst_cleanup
	rm -rf "$TMP"
}
trap cleanup EXIT

get() { curl -fsS --max-time 5 "$1"; }
jqt() { jq -e "$@" >/dev/null; }
sq() { sqlite3 -cmd ".timeout 5000" "$DB" "$@"; }
sid() { sq "SELECT id FROM history_series WHERE kind='$1' AND name='$2' AND metric='$3'"; }
hist() { get "$API/stats/history?$1"; }
# req NAME QUERY: body in $TMP/NAME.json, prints the HTTP status
req() { curl -sS --max-time 5 -o "$TMP/$1.json" -w '%{http_code}' "$API/stats/history?$2"; }
now_s() { date +%s; }

cat >"$CFG" <<JSON
{
  "eal": {"file_prefix": "sbxb", "socket_mem_mb": 256, "primary_lcore": 75, "mgmt_lcore": 76},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$IN,pps=100"},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$TMP/out.pcap"},
    {"name": "m", "devargs": "net_pcap2,tx_pcap=$TMP/mirror.pcap"}
  ],
  "workers": {"count": 1, "lcores": [77]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mirrors": [{"id": 7, "sources": [{"port": "p0"}], "destination": {"port": "m"}}],
  "maps": [{"id": 40, "name": "tcp", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "m"},
            "rules": [{"action": "pass", "ip_proto": 6}]}],
  "mgmt": {"port": $PORT, "database": "$DB", "history_interval_s": 1}
}
JSON
export SBX_TEST_HISTORY_COMPACT_S=2
inst_start_primary b "$CFG"
check "primary (pcap input at 100 frames/s) ready" [ $? -eq 0 ] || exit 1
inst_start_mgmt b "$CFG" "$API"
check "mgmt up on port $PORT" [ $? -eq 0 ] || exit 1
T_START=$(now_s)

# ---------------------------------------------------------------------------------------------
# 1. a sample every second
sleep 6
P0RX=$(sid port p0 rx_packets)
echo "# series: $(sq "SELECT count(*) FROM history_series") (p0 rx_packets id $P0RX)"
check "migration 3 applied, auto_vacuum incremental (2), WAL" \
	cond "[ \"$(sq 'SELECT count(*) FROM schema_version WHERE version = 3')\" = 1 ] && [ \"$(sq 'PRAGMA auto_vacuum')\" = 2 ] && [ \"$(sq 'PRAGMA journal_mode')\" = wal ]"
check "one series per port metric (3 ports x 5), worker (3), mirror 7 (3), map 40 (4), pool (1): 26" \
	cond "[ \"$(sq "SELECT count(*) FROM history_series")\" = 26 ]"
ts=$(sq "SELECT group_concat(t) FROM (SELECT t FROM history_1s WHERE series = $P0RX ORDER BY t DESC LIMIT 5)")
echo "# last 5 sample times of p0 rx_packets: $ts (now $(now_s))"
check "the last 5 samples are 1 s apart, the newest at most 2 s old" \
	python3 -c "import sys,time; t=[int(x) for x in '$ts'.split(',')]; sys.exit(not (len(t)==5 and all(t[i]-t[i+1]==1 for i in range(4)) and time.time()-t[0] <= 2.5))"
get "$API/status" >"$TMP/st.json"
jq -c '.database' "$TMP/st.json" | sed 's/^/# status database: /'
check "/status database: path, size_bytes > 0, samples = rows stored, oldest/newest RFC 3339, writable" \
	jqt --arg db "$DB" --argjson rows "$(sq 'SELECT count(*) FROM history_1s')" \
	'.database | .path == $db and .size_bytes > 0 and (.samples - $rows | fabs) <= 26 and (.oldest | test("Z$"))
	 and (.newest | test("^20..-..-..T..:..:..\\.000Z$")) and .writable == true' "$TMP/st.json"

# ---------------------------------------------------------------------------------------------
# 2. rates: the stored counter, /status, the pacing
ipa=$(jq '.ports[] | select(.name == "p0") | .stats.ipackets' "$TMP/st.json"); ta=$EPOCHREALTIME
sleep 10
ipb=$(get "$API/status" | jq '.ports[] | select(.name == "p0") | .stats.ipackets'); tb=$EPOCHREALTIME
a=$(python3 -c "import math; print(math.ceil($ta))") b=$(python3 -c "import math; print(math.floor($tb))")
sleep 1.2 # the sample of second b is stored
hist "metric=rx_packets&port=p0&from=$((a + 1))&to=$b&step=1" >"$TMP/r1.json"
va=$(sq "SELECT v FROM history_1s WHERE series = $P0RX AND t = $a") vb=$(sq "SELECT v FROM history_1s WHERE series = $P0RX AND t = $b")
sum=$(jq '[.points[][1] // 0] | add' "$TMP/r1.json")
status_rate=$(python3 -c "print(round(($ipb - $ipa) / ($tb - $ta), 2))")
hist_rate=$(python3 -c "print(round($sum / ($b - $a), 2))")
echo "# stored p0 rx at $a: $va, at $b: $vb; sum of 1 s rates $sum; /status: $ipa -> $ipb over $(python3 -c "print(round($tb - $ta, 2))") s = $status_rate/s; history $hist_rate/s"
check "step=1: $((b - a)) points, unit packets/s, object {port, p0}" \
	jqt --argjson n $((b - a)) '(.points | length) == $n and .unit == "packets/s" and .object == {"kind": "port", "name": "p0"} and .step == 1' "$TMP/r1.json"
check "the sum of the 1 s rates over ($a, $b] equals the stored counter delta ($vb - $va)" \
	python3 -c "import sys; sys.exit(abs($sum - ($vb - $va)) > 0.01 * max(1, $vb - $va))"
check "the history rate ($hist_rate/s) matches the /status counter delta over the window ($status_rate/s) within 10 %" \
	python3 -c "import sys; sys.exit(not abs($hist_rate - $status_rate) <= 0.1 * $status_rate)"
check "the pcap input paced at 100 frames/s reads as 90..110 packets/s" \
	python3 -c "import sys; sys.exit(not 90 <= $hist_rate <= 110)"
hist "metric=mirrored_packets&mirror=7&from=$((a + 1))&to=$b&step=$((b - a))" >"$TMP/m.json"
hist "metric=packets&worker=0&from=$((a + 1))&to=$b&step=$((b - a))" >"$TMP/w.json"
hist "metric=passed&map=40&from=$((a + 1))&to=$b&step=$((b - a))" >"$TMP/map.json"
hist "metric=mirrored_packets&map=40&from=$((a + 1))&to=$b&step=$((b - a))" >"$TMP/mapm.json"
# step 3: a window of 9-10 s holds two whole 3 s buckets however it falls (with 5 s buckets it
# held one when the window started just after a multiple of 5: flaky)
hist "metric=in_use&pool=sbx_pool_s0&from=$((a + 1))&to=$b&step=3" >"$TMP/p.json"
echo "# mirror 7: $(jq -c '.points' "$TMP/m.json"); worker 0: $(jq -c '.points' "$TMP/w.json"); pool in_use: $(jq -c '.points' "$TMP/p.json")"
check "mirror 7 mirrored_packets and worker 0 packets: ~100/s too (every p0 frame is mirrored, one worker)" \
	cond "jqt '.unit == \"packets/s\" and ([.points[][1]] | all(. != null and . >= 85 and . <= 115))' '$TMP/m.json' &&
	      jqt '[.points[][1]] | all(. != null and . >= 85 and . <= 115)' '$TMP/w.json'"
echo "# map 40: passed $(jq -c '.points' "$TMP/map.json"), mirrored_packets $(jq -c '.points' "$TMP/mapm.json")"
check "map 40 (every TCP frame of p0 passes) passed and mirrored_packets: ~100/s too, object {map, 40}" \
	cond "jqt '.unit == \"packets/s\" and .object == {\"kind\": \"map\", \"name\": \"40\"} and ([.points[][1]] | all(. != null and . >= 85 and . <= 115))' '$TMP/map.json' &&
	      jqt '[.points[][1]] | all(. != null and . >= 85 and . <= 115)' '$TMP/mapm.json'"
check "pool in_use is a gauge (unit mbufs, whole values)" \
	jqt '.unit == "mbufs" and (.points | length) >= 2 and ([.points[][1]] | all(. != null and . == floor and . >= 0))' "$TMP/p.json"

# ---------------------------------------------------------------------------------------------
# 3. compaction, on synthetic series written with the sqlite3 CLI while mgmt runs
NOW=$(now_s)
T0=$((NOW - 7200))
# port "synth": 2 h of 1 s rows up to now-1, 10 packets/s, reset to 0 at T0+5000 (in the 1 s part)
sq "INSERT INTO history_series(kind, name, metric) VALUES('port', 'synth', 'rx_packets');
    WITH RECURSIVE s(t) AS (SELECT $T0 UNION ALL SELECT t + 1 FROM s WHERE t < $NOW - 1)
    INSERT INTO history_1s(series, t, v) SELECT (SELECT id FROM history_series WHERE name = 'synth'), t, (t - $T0) % 5000 * 10 FROM s;"
# port "synth10": 10 s rows 2 days old for 1 h (t % 10 = 9), 7 packets/s
B10=$(( (NOW - 2 * 86400) / 60 * 60 ))
sq "INSERT INTO history_series(kind, name, metric) VALUES('port', 'synth10', 'rx_packets');
    WITH RECURSIVE s(t) AS (SELECT $B10 + 9 UNION ALL SELECT t + 10 FROM s WHERE t < $B10 + 3590)
    INSERT INTO history_10s(series, t, v) SELECT (SELECT id FROM history_series WHERE name = 'synth10'), t, (t - $B10) * 7 FROM s;"
# port "synth1m": 1 min rows 31 days old (deleted) and 29 days old (kept), 60 of each
sq "INSERT INTO history_series(kind, name, metric) VALUES('port', 'synth1m', 'rx_packets');
    WITH RECURSIVE s(t) AS (SELECT $NOW - 31 * 86400 UNION ALL SELECT t + 60 FROM s WHERE t < $NOW - 31 * 86400 + 3540)
    INSERT INTO history_1m(series, t, v) SELECT (SELECT id FROM history_series WHERE name = 'synth1m'), t, 1 FROM s;
    WITH RECURSIVE s(t) AS (SELECT $NOW - 29 * 86400 UNION ALL SELECT t + 60 FROM s WHERE t < $NOW - 29 * 86400 + 3540)
    INSERT INTO history_1m(series, t, v) SELECT (SELECT id FROM history_series WHERE name = 'synth1m'), t, 2 FROM s;"
S1=$(sid port synth rx_packets) S10=$(sid port synth10 rx_packets) S1M=$(sid port synth1m rx_packets)
compacted() {
	[ "$(sq "SELECT count(*) FROM history_1s WHERE series = $S1 AND t < $(now_s) - 3610")" = 0 ] &&
	[ "$(sq "SELECT count(*) FROM history_10s WHERE series = $S10")" = 0 ] &&
	[ "$(sq "SELECT count(*) FROM history_1m WHERE series = $S1M AND v = 1")" = 0 ]
}
check "compaction ran within 10 s (1 s rows older than 1 h, 10 s rows older than 1 day, 1 min rows older than 30 days: none left)" \
	wait_for 100 compacted
sq "SELECT 'synth 1s: ' || count(*) || ' rows, ' || (min(t) - $NOW) || '..' || (max(t) - $NOW) FROM history_1s WHERE series = $S1;
    SELECT 'synth 10s: ' || count(*) || ' rows, ' || (min(t) - $NOW) || '..' || (max(t) - $NOW) FROM history_10s WHERE series = $S1;
    SELECT 'synth10 1m: ' || count(*) || ' rows' FROM history_1m WHERE series = $S10;
    SELECT 'synth1m 1m: ' || count(*) || ' rows' FROM history_1m WHERE series = $S1M;" | sed 's/^/# /'
c1min=$(sq "SELECT min(t) FROM history_1s WHERE series = $S1") c10max=$(sq "SELECT max(t) FROM history_10s WHERE series = $S1")
c10n=$(sq "SELECT count(*) FROM history_10s WHERE series = $S1")
check "10 s table: one row per bucket, at the bucket's last second (t % 10 = 9), holding that second's value" \
	cond "[ \"$(sq "SELECT count(*) FROM history_10s WHERE series = $S1 AND (t % 10 != 9 OR v != (t - $T0) % 5000 * 10)")\" = 0 ] &&
	      [ \"$(sq "SELECT count(DISTINCT t / 10) FROM history_10s WHERE series = $S1")\" = $c10n ] && [ $c10n -ge 355 ] && [ $c10n -le 362 ]"
check "the 10 s rows end where the 1 s rows begin (last 10 s row $((c10max - NOW)), first 1 s row $((c1min - NOW)): no gap, no overlap), 1 s rows kept for 1 h" \
	cond "[ $((c1min - c10max)) = 1 ] && [ $((NOW - c1min)) -ge 3590 ] && [ $((NOW - c1min)) -le 3620 ]"
check "1 min table: the 10 s rows of 2 days ago as 60 rows at t % 60 = 59 with the bucket's last value" \
	cond "[ \"$(sq "SELECT count(*) FROM history_1m WHERE series = $S10 AND t % 60 = 59 AND v = (t - $B10) * 7")\" = 60 ] &&
	      [ \"$(sq "SELECT count(*) FROM history_1m WHERE series = $S10")\" = 60 ]"
check "1 min rows 29 days old are kept (60), those 31 days old deleted" \
	cond "[ \"$(sq "SELECT count(*) FROM history_1m WHERE series = $S1M AND v = 2")\" = 60 ]"
hist "metric=rx_packets&port=synth&from=$T0&to=$((NOW - 1))&step=600" >"$TMP/s.json"
echo "# synth over 2 h, step 600: $(jq -c '[.points[][1]]' "$TMP/s.json")"
check "history of the compacted series: 10/s across the 10 s and 1 s parts; the reset window 9.98..10, not negative" \
	jqt '.resolution_s == 10 and ([.points[][1] | select(. != null)] | length) >= 11
	     and ([.points[][1] | select(. != null and . != 10)] | length) <= 1
	     and ([.points[][1] | select(. != null)] | all(. >= 9.98 and . <= 10))' "$TMP/s.json"
hist "metric=rx_packets&port=synth10&from=$((B10 - 60))&to=$((B10 + 3600))&step=300" >"$TMP/s10.json"
check "history 2 days back (1 min rows): 7/s" \
	jqt '.resolution_s == 60 and ([.points[][1] | select(. != null)] | length) >= 10 and ([.points[][1] | select(. != null)] | all(. == 7))' "$TMP/s10.json"

# the size bound: rounds of 2 h of 1 s rows 31 days old, all deleted by the next compaction
pages=()
for round in 1 2 3 4 5; do
	R0=$(( $(now_s) - 31 * 86400 ))
	sq "INSERT OR IGNORE INTO history_series(kind, name, metric) VALUES('port', 'synthgc', 'rx_packets');
	    WITH RECURSIVE s(t) AS (SELECT $R0 UNION ALL SELECT t + 1 FROM s WHERE t < $R0 + 7199)
	    INSERT OR REPLACE INTO history_1s(series, t, v) SELECT (SELECT id FROM history_series WHERE name = 'synthgc'), t, t FROM s;"
	gone() { [ "$(sq "SELECT count(*) FROM history_1s WHERE series = (SELECT id FROM history_series WHERE name = 'synthgc')")" = 0 ] &&
		 [ "$(sq "SELECT count(*) FROM history_1m WHERE series = (SELECT id FROM history_series WHERE name = 'synthgc')")" = 0 ]; }
	wait_for 100 gone || echo "# round $round: rows not deleted within 10 s"
	sleep 2.5 # one more compaction: the vacuum after the delete
	pages+=("$(sq 'PRAGMA page_count')/$(sq 'PRAGMA freelist_count')")
done
echo "# page_count/freelist_count after each round: ${pages[*]}; files: $(stat -c '%n %s' "$DB" "$DB-wal" | tr '\n' ' ')"
first=${pages[0]%/*} last=${pages[4]%/*}
check "5 rounds of 7200 rows written and compacted away: page_count does not grow ($first -> $last, at most +8)" \
	cond "[ $last -le $((first + 8)) ]"
check "database file + WAL stay under 8 MiB" cond "[ $(( $(stat -c %s "$DB") + $(stat -c %s "$DB-wal" 2>/dev/null || echo 0) )) -lt 8388608 ]"

# ---------------------------------------------------------------------------------------------
# 4. step and time formats
S=$(( (T_START + 12 + 9) / 10 * 10 )) # a whole window of samples before S, traffic until E
E=$((S + 30))
while [ "$(now_s)" -lt $((E + 2)) ]; do sleep 0.5; done
hist "metric=rx_packets&port=p0&from=$S&to=$E&step=10" >"$TMP/s10p.json"
echo "# p0 step 10 over [$S, $E]: $(jq -c '.points' "$TMP/s10p.json")"
check "step=10 over 30 s: 4 points at $S, $((S + 10)) ... $E, each 90..110/s" \
	jqt --argjson s "$S" '(.points | length) == 4 and ([.points[][0]] == [range(0; 4) | $s + . * 10])
	     and ([.points[][1]] | all(. != null and . >= 90 and . <= 110))' "$TMP/s10p.json"
rfc() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
hist "metric=rx_packets&port=p0&from=$(rfc $S)&to=$(rfc $E)&step=10" >"$TMP/rfc.json"
check "from/to in RFC 3339 ($(rfc $S)) give the same answer as unix seconds" \
	cond "[ \"$(jq -c . "$TMP/rfc.json")\" = \"$(jq -c . "$TMP/s10p.json")\" ]"
hist "metric=rx_packets&port=p0&from=$(date -u -d "@$S" +%Y-%m-%dT%H:%M:%S.250+02:00 | sed 's/+/%2B/')&to=$E&step=10" >"$TMP/off.json"
check "an RFC 3339 offset (+02:00) shifts from by 2 h" jqt --argjson f $((S - 7200)) '.from == $f' "$TMP/off.json"
hist "metric=rx_packets&port=p0" >"$TMP/dflt.json"
check "defaults: the last hour, step 5 (<= 1000 points), a point per multiple of 5" \
	jqt '.to - .from == 3600 and .step == 5 and (.points | length) == ((.to / 5 | floor) - (.from / 5 | ceil) + 1)
	     and ([.points[][0]] | all(. % 5 == 0))' "$TMP/dflt.json"
hist "metric=rx_packets&port=p0&from=$(( $(now_s) - 2 * 86400 ))" >"$TMP/d2.json"
check "2 days: resolution 60 s, step 300 (577 points)" jqt '.resolution_s == 60 and .step == 300 and (.points | length) <= 1000' "$TMP/d2.json"

# ---------------------------------------------------------------------------------------------
# 5. a locked database: reads answer, sampling pauses, then resumes
fails0=$(get "$API/status" | jq '.database.history.failed_samples')
python3 -c '
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=5)
c.execute("BEGIN EXCLUSIVE")
open(sys.argv[2], "w").write(str(int(time.time())))
time.sleep(6)
c.execute("ROLLBACK")' "$DB" "$TMP/locked" &
LOCKER=$!
wait_for 50 test -s "$TMP/locked"
L0=$(cat "$TMP/locked")
sleep 2.5
t0=$EPOCHREALTIME
code=$(curl -sS --max-time 5 -o "$TMP/lst.json" -w '%{http_code}' "$API/status")
t1=$EPOCHREALTIME
hcode=$(req lh "metric=rx_packets&port=p0&from=$((L0 - 30))&step=10")
ecode=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "$API/events?limit=5")
echo "# during the lock: /status $code in $(python3 -c "print(round($t1 - $t0, 3))") s, database $(jq -c '.database | {samples, newest, writable, history}' "$TMP/lst.json"); history $hcode; events $ecode"
check "locked: /status answers 200 within 0.5 s, database.writable false, failed samples counted" \
	cond "[ $code = 200 ] && python3 -c 'import sys; sys.exit(not $t1 - $t0 < 0.5)' && jqt --argjson f0 $fails0 '.database.writable == false and .database.history.failed_samples > \$f0 and .database.history.outages == 1' '$TMP/lst.json'"
check "locked: /stats/history answers 200 with points; /events answers 200" \
	cond "[ $hcode = 200 ] && [ $ecode = 200 ] && jqt '(.points | length) >= 3' '$TMP/lh.json'"
wait "$LOCKER"; LOCKER=
L1=$(now_s)
resumed() { get "$API/status" | jq -e --argjson l "$L1" '.database.writable == true and (.database.newest | sub("\\.000Z$"; "Z") | fromdate) > $l' >/dev/null; }
check "after the unlock: sampling resumes within 3 s (writable true, newest sample after the unlock)" wait_for 30 resumed
inlock=$(sq "SELECT count(*) FROM history_1s WHERE series = $P0RX AND t > $L0 + 1 AND t < $L1 - 1")
check "no sample was stored while the lock was held ($inlock rows in ($((L0 + 1)), $((L1 - 1))))" [ "$inlock" = 0 ]
check "new samples after the unlock" cond "[ \"$(sq "SELECT count(*) FROM history_1s WHERE series = $P0RX AND t >= $L1")\" -ge 1 ]"
nlog=$(grep -c 'samples are lost until' "$TMP/b-mgmt.log")
check "the outage is logged once (and its end once)" cond "[ $nlog = 1 ] && [ \$(grep -c 'writable again' '$TMP/b-mgmt.log') = 1 ]"

# ---------------------------------------------------------------------------------------------
# 6. errors: 400 naming the field, 404 for unknown objects
nseries=$(sq "SELECT count(*) FROM history_series")
bad() { # bad DESC QUERY CODE FIELD
	local c
	c=$(req err "$2")
	check "$1 -> $3 (field ${4:-none})" \
		cond "[ $c = $3 ] && jqt --arg f '$4' --argjson c $3 '.error.code == \$c and (.error.field // \"\") == \$f and (.error.message | length) > 0' '$TMP/err.json'" ||
		cat "$TMP/err.json"
}
bad "unknown parameter" "metric=rx_packets&port=p0&colour=red" 400 colour
bad "no object selector" "metric=rx_packets" 400 port
bad "two object selectors" "metric=rx_packets&port=p0&worker=0" 400 worker
bad "no metric" "port=p0" 400 metric
bad "unknown metric" "metric=rx_furlongs&port=p0" 400 metric
bad "a pool metric on a port" "metric=in_use&port=p0" 400 metric
bad "from not a time" "metric=rx_packets&port=p0&from=yesterday" 400 from
bad "to not a time" "metric=rx_packets&port=p0&to=2026-13-01T00:00:00Z" 400 to
bad "from after to" "metric=rx_packets&port=p0&from=2000&to=1000" 400 from
bad "step 0" "metric=rx_packets&port=p0&step=0" 400 step
bad "step not a number" "metric=rx_packets&port=p0&step=ten" 400 step
bad "step 1 over 30 days (too many points)" "metric=rx_packets&port=p0&from=$(( $(now_s) - 30 * 86400 ))&step=1" 400 step
bad "the same selector twice (a breaker session: the first was taken silently)" "metric=rx_packets&port=p0&port=p1" 400 port
bad "a port name cut by %00 names no port" "metric=rx_packets&port=p0%00x" 404 port
bad "unknown port" "metric=rx_packets&port=nope" 404 port
bad "unknown worker" "metric=packets&worker=9" 404 worker
bad "unknown mirror session" "metric=mirrored_packets&mirror=999" 404 mirror
bad "unknown pool" "metric=in_use&pool=nope" 404 pool
bad "unknown map" "metric=passed&map=999" 404 map
bad "a map metric of a mirror" "metric=passed&mirror=7" 400 metric
check "no series was created by the refused requests ($nseries)" \
	cond "[ \"$(sq "SELECT count(*) FROM history_series")\" = $nseries ] && [ \"$(sq "SELECT count(*) FROM history_series WHERE name IN ('nope', '9', '999')")\" = 0 ]"

# ---------------------------------------------------------------------------------------------
# 7. appliance down: the history answers from the database
# (mgmt is stopped first: a mgmt that watches the primary exit can read its memzone while the
# primary frees it, see the report of this change; a mgmt started while the appliance is down
# serves the same database)
inst_stop_pid "$INST_MGMT"
inst_stop_pid "$INST_PRIMARY"
setsid "$BUILD/mgmt/spanbox-mgmt" -c "$CFG" </dev/null >"$TMP/b2-mgmt.log" 2>&1 &
INST_PIDS+=("$!")
down() { get "$API/health" | jq -e '.appliance == "down"' >/dev/null; }
wait_for 100 down
hcode=$(req down "metric=rx_packets&port=p0&from=$T_START&step=10")
check "appliance down: /stats/history still 200 with the stored points (rates of p0)" \
	cond "[ $hcode = 200 ] && jqt '([.points[][1] | select(. != null and . > 50)] | length) >= 3' '$TMP/down.json'"
scode=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "$API/status")
check "appliance down: /status is 503 (no live state), the history route is not" [ "$scode" = 503 ]
