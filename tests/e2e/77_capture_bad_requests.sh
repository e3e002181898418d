#!/usr/bin/env bash
# Capture test 5 (issue 14, docs/CAPTURE.md "Recording through the API"): bad requests get the
# right 4xx naming the field, start nothing, and read or write nothing outside the capture
# directory: an unknown port, a filter that does not compile, a snaplen out of range, an unknown
# key, a capture the quota (2 MiB) cannot hold, the download of a file or a capture that does not
# exist, ids and file numbers that are not numbers, paths with "..". Then one good capture is
# started and deleted: its files go with it. Then captures survive nothing: one ends with a mgmt
# restart, another with a primary restart, and GET says so for both.
# Own instance: file prefix rc77, lcores 89 (primary), 95 (worker), 96 (mgmt), API port 18372.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/capture.sh"

PORT=18372 API=http://127.0.0.1:18372/api/v1
CFG="$TMP/rc77.json"
TOKEN=rc77-token-0123456789abcdef
AUTH="Authorization: Bearer $TOKEN"
IN="$CAPTURES/plain_tcpreplay_test.pcap"
cleanup() { inst_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT
[ -r "$IN" ] || { ok "plain_tcpreplay_test.pcap not readable in $CAPTURES # SKIP"; exit 0; }

mkdir -p "$TMP/captures" "$TMP/out"
echo SECRET-OUTSIDE >"$TMP/secret.pcapng"
echo SECRET-OUTSIDE >"$TMP/1.pcapng"
cap_config rc77 "89 95 96" 2 "[{\"name\": \"in0\", \"devargs\": \"net_pcap0,rx_pcap=$IN,pps=100\"},
                             {\"name\": \"null1\", \"devargs\": \"net_null1,no-rx=1\"}]"
cap_start rc77 "$TMP/pause" || exit 0 # the input waits for the good capture at the end
find "$TMP" -type f ! -name '*.log' ! -name 'rc77.db*' ! -name post.json ! -name pause | sort >"$TMP/out/files.before"

# bad DESC EXPECTED_CODE EXPECTED_FIELD BODY
bad() {
	local code field
	code=$(cap_post "$4")
	field=$(jq -r '.error.field // ""' "$TMP/post.json" 2>/dev/null)
	check "$1: $2 naming $3 (got $code, $(jq -r '.error.field // "no field"' "$TMP/post.json" 2>/dev/null): $(jq -r .error.message "$TMP/post.json" 2>/dev/null | head -c 160))" \
		[ "$code" = "$2" -a "$field" = "$3" ]
}
bad "unknown port" 422 "sources[0].port" '{"sources": [{"port": "nosuch"}]}'
bad "a filter that does not compile" 422 filter '{"sources": [{"port": "in0"}], "filter": "tcp and and"}'
bad "snaplen 5" 422 snaplen '{"sources": [{"port": "in0"}], "snaplen": 5}'
bad "an unknown key" 422 id '{"sources": [{"port": "in0"}], "destination": {"port": "null1"}}'
bad "no sources" 422 sources '{"filter": "tcp"}'
bad "a ring of 3 x 1 MiB over a 2 MiB quota" 422 quota_mb '{"sources": [{"port": "in0"}], "files": {"count": 3, "mb": 1}}'
bad "stop.bytes 5 MiB over a 2 MiB quota" 422 quota_mb '{"sources": [{"port": "in0"}], "stop": {"bytes": 5242880}}'
bad "a ring without a size or time per file" 422 "destination.recorder.files.count" '{"sources": [{"port": "in0"}], "files": {"count": 3}, "stop": {"packets": 10}}'
check "nothing started: GET /captures is []" [ "$(cap_get /captures | jq -c .)" = "[]" ]
check "nothing started: the capture directory is empty ($(ls "$TMP/captures" | tr '\n' ' '))" [ -z "$(ls -A "$TMP/captures")" ]

# get DESC EXPECTED_CODE PATH (sent as is: no normalisation of "..")
get() {
	local code
	code=$(curl -sS --path-as-is --max-time 5 -o "$TMP/out/get" -w '%{http_code}' "$API$3")
	check "$1 ($3): $2 (got $code), nothing of the file outside" \
		[ "$code" = "$2" ] && ! grep -q SECRET-OUTSIDE "$TMP/out/get"
}
get "a file of a capture that does not exist" 404 /captures/1/files/1
get "a capture that does not exist" 404 /captures/7
get "file number 0" 400 /captures/1/files/0
get "a file number that is a name" 400 /captures/1/files/secret.pcapng
get "'..' as the file number" 400 /captures/1/files/..
get "'..' escaped as the file number (no route: more segments once unescaped)" 404 '/captures/1/files/..%2F..%2F1.pcapng'
get "'..' as the id" 400 '/captures/../files/1'
get "'%2e%2e' as the id" 400 '/captures/%2e%2e/files/1'
get "'..' segments through the file route" 404 '/captures/1/files/../../../secret.pcapng'
get "a capture id out of range" 400 /captures/5000
code=$(curl -sS --path-as-is --max-time 5 -o "$TMP/out/del" -w '%{http_code}' -H "$AUTH" -X DELETE "$API/captures/..")
check "DELETE /captures/..: 400 ($code)" [ "$code" = 400 ]
code=$(curl -sS --max-time 5 -o "$TMP/out/del" -w '%{http_code}' -H "$AUTH" -X DELETE "$API/captures/9")
check "DELETE of a capture that does not exist: 404 ($code)" [ "$code" = 404 ]
find "$TMP" -type f ! -name '*.log' ! -name 'rc77.db*' ! -name post.json ! -name pause ! -path "$TMP/out/*" | sort >"$TMP/out/files.after"
grep -v "^$TMP/out/" "$TMP/out/files.before" >"$TMP/out/files.before2"
check "no file written outside the capture directory ($(comm -13 "$TMP/out/files.before2" "$TMP/out/files.after" | tr '\n' ' '))" \
	cmp -s "$TMP/out/files.before2" "$TMP/out/files.after"
check "the files outside are untouched" [ "$(cat "$TMP/secret.pcapng" "$TMP/1.pcapng")" = "SECRET-OUTSIDE
SECRET-OUTSIDE" ]

# a good one, then DELETE: ended, its files gone
code=$(cap_post '{"sources": [{"port": "in0"}], "stop": {"packets": 1000}}')
ID=$(jq -r .id "$TMP/post.json")
check "a good capture: 201 ($code, id $ID)" [ "$code" = 201 ]
rm -f "$TMP/pause"
wait_for 50 cond '[ "$(cap_get /captures/'"$ID"' | jq -r ".counters.captured")" -gt 0 ]'
check "it records ($(cap_get "/captures/$ID" | jq -c .counters))" [ "$(cap_get "/captures/$ID" | jq -r .counters.captured)" -gt 0 ]
check "its file is in the capture directory" [ -s "$TMP/captures/$ID/1.pcapng" ]
code=$(curl -sS --max-time 15 -o "$TMP/out/del" -w '%{http_code}' -H "$AUTH" -X DELETE "$API/captures/$ID")
check "DELETE /captures/$ID: 200 ($code)" [ "$code" = 200 ]
check "its files are gone" [ ! -e "$TMP/captures/$ID" ]
code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "$API/captures/$ID")
check "GET /captures/$ID after DELETE: 404 ($code)" [ "$code" = 404 ]
check "GET /mirrors never lists a capture" [ "$(cap_get /mirrors | jq 'length')" = 0 ]

# a capture whose file blocks (the next file of its ring is a FIFO nobody reads: open() waits)
# stalls only itself: another capture starts (a change of the tables) and ends on its stop.seconds
# (a filter no frame matches: it must not end on stop.packets, which bounds its quota share)
t0=$(date +%s%N)
code=$(cap_post '{"sources": [{"port": "in0"}], "filter": "udp port 9", "files": {"seconds": 6}, "stop": {"packets": 100}}')
X=$(jq -r .id "$TMP/post.json")
check "capture $X started ($code in $((($(date +%s%N) - t0) / 1000000)) ms), its next file 2.pcapng made a FIFO before it is due" \
	mkfifo "$TMP/captures/$X/2.pcapng"
wait_for 100 cond "[ \$((\$(date +%s%N) - t0)) -gt 7000000000 ]" # its writer is in open() of file 2 now
stX=$(cap_state "$X")
t0=$(date +%s%N)
code=$(cap_post '{"sources": [{"port": "in0"}], "stop": {"seconds": 1, "packets": 100}}')
Y=$(jq -r .id "$TMP/post.json")
ms=$((($(date +%s%N) - t0) / 1000000))
check "while capture $X ($stX) waits in open() of its FIFO file: POST /captures starts another ($code in $ms ms, id $Y)" \
	[ "$stX" = running -a "$code" = 201 ]
wait_for 50 cap_ended "$Y"
check "and capture $Y ends on its stop.seconds meanwhile ($(cap_state "$Y"))" [ "$(cap_state "$Y")" = "ended: stop.seconds" ]
timeout 20 cat "$TMP/captures/$X/2.pcapng" >/dev/null 2>&1 & # lets it go
for c in $X $Y; do curl -sS --max-time 25 -o /dev/null -H "$AUTH" -X DELETE "$API/captures/$c"; done
wait_for 50 cond "[ \"\$(cap_get /captures | jq length)\" = 0 ]"

# ended captures do not count towards the limits (8 recording at once, 16 sessions): a new session
# evicts the capture that ended first from the sessions; it stays listed with its files until DELETE
ids=""
for i in 1 2 3 4 5 6 7 8; do
	cap_post '{"sources": [{"port": "in0"}], "stop": {"seconds": 1, "packets": 100}}' >/dev/null
	ids="$ids $(jq -r .id "$TMP/post.json")"
done
set -- $ids
first=$1
ended8() { for c in $ids; do cap_ended "$c" || return 1; done; }
wait_for 80 ended8
check "8 captures started and ended on stop.seconds ($(for c in $ids; do cap_state "$c" | cut -c8-; done | sort | uniq -c | tr -s ' \n' ' '))" ended8
code=$(cap_post '{"sources": [{"port": "in0"}], "stop": {"packets": 100}}')
check "a 9th capture with 8 ended ones: 201, all 9 listed ($code: $(jq -c . "$TMP/post.json" | head -c 160))" \
	[ "$code" = 201 -a "$(cap_get /captures | jq length)" = 9 ]
mirror() { curl -sS --max-time 15 -o "$TMP/out/m.json" -w '%{http_code}' -H "$AUTH" -X POST -H 'Content-Type: application/json' \
	--data-binary "{\"id\": $1, \"sources\": [{\"port\": \"in0\", \"direction\": \"rx\"}], \"destination\": {\"port\": \"null1\", \"allow_forwarding\": true}}" "$API/mirrors"; }
for i in 1 2 3 4 5 6 7; do mirror $((200 + i)) >/dev/null; done
check "7 mirror sessions beside the 9 captures: 16 sessions ($(cap_get /status | jq '.mirrors | length'))" [ "$(cap_get /status | jq '.mirrors | length')" = 16 ]
in_tables() { cap_get /status | jq -e ".mirrors[] | select(.id == $1)" >/dev/null; }
code=$(cap_post '{"sources": [{"port": "in0"}], "stop": {"packets": 100}}')
check "one more capture with 16 sessions, 8 of them ended captures: 201 ($code: $(jq -c . "$TMP/post.json" | head -c 160))" [ "$code" = 201 ]
check "capture $first, the first to end, left the sessions for it (16: $(cap_get /status | jq -c '[.mirrors[].id]'))" \
	cond "! in_tables $first && [ \"\$(cap_get /status | jq '.mirrors | length')\" = 16 ]"
check "and is still listed, ended with its reason, its file downloadable ($(cap_get "/captures/$first" | jq -c '[.state, [.downloads[].n]]'))" \
	cond "[ \"\$(cap_state $first)\" = 'ended: stop.seconds' ] && [ \"\$(cap_download $first 1 '$TMP/out/first.pcapng')\" = 200 ]"
code=$(mirror 208)
check "a mirror session with 16 sessions: 201, capture $2 (the next to have ended) left the sessions ($code: $(head -c 160 "$TMP/out/m.json"))" \
	cond "[ $code = 201 ] && ! in_tables $2 && in_tables 208"
for i in 1 2 3 4 5 6 7 8; do curl -sS --max-time 15 -o /dev/null -H "$AUTH" -X DELETE "$API/mirrors/$((200 + i))"; done
for c in $(cap_get /captures | jq -r '.[].id'); do curl -sS --max-time 15 -o /dev/null -H "$AUTH" -X DELETE "$API/captures/$c"; done
check "every capture deleted: GET /captures is [] ($(cap_get /captures | jq -c '[.[].id]'))" [ "$(cap_get /captures | jq length)" = 0 ]

# captures survive nothing: a mgmt restart ends one, a primary restart another; both say so
code=$(cap_post '{"sources": [{"port": "in0"}], "stop": {"packets": 1000}}')
C=$(jq -r .id "$TMP/post.json")
check "capture $C started ($code): $(cap_state "$C")" [ "$code" = 201 -a "$(cap_state "$C")" = running ]
inst_stop_pid "$INST_MGMT"
inst_start_mgmt rc77 "$CFG" "$API"
st=$(cap_state "$C")
check "after a mgmt restart capture $C says it ended ($st)" [ "$st" = "ended: mgmt stopped" -o "$st" = "ended: mgmt restarted" ]
check "its file stays downloadable" [ "$(cap_download "$C" 1 "$TMP/out/c.pcapng")" = 200 ]
code=$(cap_post '{"sources": [{"port": "in0"}], "stop": {"packets": 1000}}')
D=$(jq -r .id "$TMP/post.json")
check "capture $D started by the new mgmt ($code): $(cap_state "$D")" [ "$code" = 201 -a "$(cap_state "$D")" = running ]
inst_stop_pid "$INST_PRIMARY" # mgmt stays: it re-attaches to the next primary
inst_start_primary rc77 "$CFG"
wait_for 150 cond '[ "$(cap_get /health | jq -r .appliance)" = up ]'
st=$(cap_state "$D")
check "after a primary restart capture $D is listed as ended ($st)" [ "$st" = "ended: primary stopped" ]
check "and capture $C still says why it ended ($(cap_state "$C"))" [ "$(cap_state "$C" | cut -c1-11)" = "ended: mgmt" ]
check "nothing of them runs in the new primary: GET /status has no session" [ "$(cap_get /status | jq '.mirrors | length')" = 0 ]
