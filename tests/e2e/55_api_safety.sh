#!/usr/bin/env bash
# REST API safety (issue 5, "Errors and safety"): bearer token on every mutating request (401
# without it or with a wrong one, and then nothing changed), the token file (0600, generated only
# when missing, refused when group/other can read it or when empty), a token from the config
# wins; the error table (400 with the byte offset, 404, 405 with Allow, 413, 415), every error a
# JSON body whose error.code is the HTTP status; static files from the web root and nothing
# outside it ("..", %2e%2e, symlinks leading out, directories, dot files); /api and /metrics never
# fall through to files.
#
# Own instance: file prefix sbxa, lcores 70-72, API port 18210, database under $TMP, net_null
# ports without RX (no traffic, idle workers).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"

PORT=18210
BASE=http://127.0.0.1:$PORT API=http://127.0.0.1:$PORT/api/v1
CFG="$TMP/a.json" CFGB="$TMP/b.json"
TOKFILE="$TMP/a.db.token"
CFG_TOKEN=cfg-token_0123456789-ABCDEF
trap 'inst_cleanup; rm -rf "$TMP"' EXIT

# req NAME CURL-ARGS...: body in $TMP/NAME.body, headers in $TMP/NAME.hdr; prints the status
req() { local n=$1; shift; curl -sS --max-time 10 -o "$TMP/$n.body" -D "$TMP/$n.hdr" -w '%{http_code}' "$@"; }
# hdr NAME HEADER: the value of HEADER in the response NAME (last one, CR stripped)
hdr() { awk -v h="$(tr '[:upper:]' '[:lower:]' <<<"$2"):" \
	'tolower($1) == h { sub(/^[^:]*:[ \t]*/, ""); sub(/\r$/, ""); v = $0 } END { print v }' "$TMP/$1.hdr"; }
# is_error NAME CODE: Content-Type application/json and {"error":{"code":CODE,"message":"..."}}
is_error() { [ "$(hdr "$1" Content-Type)" = application/json ] &&
	jq -e --argjson c "$2" '.error.code == $c and (.error.message | type) == "string" and (.error.message | length) > 0' \
		"$TMP/$1.body" >/dev/null; }
# expect_err NAME CODE DESCRIPTION CURL-ARGS...: status CODE with a JSON error body of code CODE
expect_err() {
	local n=$1 c=$2 d=$3 got; shift 3
	got=$(req "$n" "$@")
	echo "# $n: HTTP $got $(head -c 300 "$TMP/$n.body")"
	check "$d: $c, JSON error body with error.code $c" cond "[ '$got' = '$c' ] && is_error '$n' '$c'"
}
w0() { curl -fsS --max-time 5 "$API/workers/0" | jq -ce "$1"; } # w0 JQ: a field of worker 0
mgmt_refuses() { # mgmt_refuses NAME: mgmt with config A exits 2 at once; stderr in $TMP/NAME.err
	timeout 10 "$BUILD/mgmt/spanbox-mgmt" -c "$CFG" >/dev/null 2>"$TMP/$1.err"
	echo $?
}
file_id() { stat -c '%i %Y %s' "$1" && sha256sum <"$1"; } # inode, mtime, size, content hash

cat >"$CFG" <<EOF
{ "eal": {"file_prefix": "sbxa", "socket_mem_mb": 128, "primary_lcore": 70, "mgmt_lcore": 71},
  "ports": [ {"name": "p0", "devargs": "net_null0,no-rx=1"}, {"name": "p1", "devargs": "net_null1,no-rx=1"} ],
  "workers": {"count": 1, "lcores": [72], "busy_poll": false},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mgmt": {"port": $PORT, "database": "$TMP/a.db"} }
EOF

# ---------------------------------------------------------------------------------------------
# 1. the token file is generated at the first start
inst_start_primary a "$CFG"
check "1: primary (prefix sbxa, net_null ports) ready" [ $? -eq 0 ] || { tail -n 20 "$TMP/a-primary.log"; exit 1; }
check "1: no token file before mgmt's first start" [ ! -e "$TOKFILE" ]
inst_start_mgmt a "$CFG" "$API"
check "1: mgmt up on port $PORT" [ $? -eq 0 ] || { cat "$TMP/a-mgmt.log"; exit 1; }
sed 's/^/# mgmt log: /' "$TMP/a-mgmt.log"
TOKEN=$(head -n 1 "$TOKFILE" 2>/dev/null)
check "1: token file $TOKFILE generated: mode 0600, owner root, a regular file" \
	cond "[ \"\$(stat -c '%a %u %F' '$TOKFILE')\" = '600 0 regular file' ]"
check "1: ... holding 64 hex characters (32 random bytes) and a newline" \
	cond "[ \"\$(wc -c <'$TOKFILE')\" = 65 ] && grep -qxE '[0-9a-f]{64}' '$TOKFILE'"
check "1: mgmt logs where the token is (generated now)" grep -qF "token: $TOKFILE (generated now)" "$TMP/a-mgmt.log"
check "1: spanbox-mgmt --print-token prints the file's token" cond "[ \"\$(inst_token '$CFG')\" = '$TOKEN' ]"
AUTH="Authorization: Bearer $TOKEN"
JSON="Content-Type: application/json"

# ---------------------------------------------------------------------------------------------
# 2. mutating requests without the right token: 401, the handler never runs
R0=$(w0 .restarts) PID0=$(w0 .pid)
echo "# worker 0 before: restarts $R0 pid $PID0"
expect_err nohdr 401 "2: POST /workers/0/restart without Authorization" -X POST "$API/workers/0/restart"
check "2: ... with 'WWW-Authenticate: Bearer ...'" cond "[[ \"\$(hdr nohdr WWW-Authenticate)\" == Bearer* ]]"
expect_err badtok 401 "2: POST /workers/0/restart with a wrong token" -H "Authorization: Bearer x$TOKEN" -X POST "$API/workers/0/restart"
check "2: ... with 'WWW-Authenticate: Bearer ..., error=\"invalid_token\"'" \
	cond "[[ \"\$(hdr badtok WWW-Authenticate)\" == Bearer*invalid_token* ]]"
expect_err shorttok 401 "2: POST with the token minus its last character" -H "Authorization: Bearer ${TOKEN%?}" -X POST "$API/workers/0/restart"
expect_err basic 401 "2: POST with the token as Basic credentials" -H "Authorization: Basic $TOKEN" -X POST "$API/workers/0/restart"
expect_err twotok 401 "2: POST with the token followed by another word" -H "Authorization: Bearer $TOKEN x" -X POST "$API/workers/0/restart"
expect_err delnone 401 "2: DELETE /api/v1/health without a token (authentication comes before routing)" -X DELETE "$API/health"
expect_err bignone 401 "2: POST with a 70 KB body and no token (401, not 413)" -X POST -H "$JSON" \
	--data-binary @<(head -c 70000 /dev/zero | tr '\0' ' ') "$API/workers/0/restart"
sleep 1.5
check "2: after the refused requests worker 0 was not restarted (restarts still $R0, pid still $PID0)" \
	cond "[ \"\$(w0 '[.restarts, .pid, .state]')\" = '[$R0,$PID0,\"running\"]' ]"
check "2: ... and no worker_restart event was recorded" \
	cond "curl -fsS '$API/events?limit=100' | jq -e 'all(.[]; .kind != \"worker_restart\")' >/dev/null"
check "2: GET and HEAD need no token (GET /workers/0: 200, HEAD /health: 200)" \
	cond "[ \"\$(req g0 '$API/workers/0')\" = 200 ] && [ \"\$(req h0 -I '$API/health')\" = 200 ]"

# 202 with the token (the token's scheme name in any case, extra spaces)
code=$(req post -H "$AUTH" -X POST "$API/workers/0/restart")
echo "# POST with the token: HTTP $code $(cat "$TMP/post.body")"
check "2: POST /workers/0/restart with the token: 202, restarts_before $R0" \
	cond "[ '$code' = 202 ] && jq -e '.worker == 0 and .restarts_before == $R0' '$TMP/post.body' >/dev/null"
restarted() { w0 "select(.restarts == $R0 + 1 and .state == \"running\" and .pid != $PID0)" >/dev/null; }
check "2: ... worker 0 restarted (restarts $R0 -> $((R0 + 1)), new pid, within 5 s)" wait_for 50 restarted
R1=$((R0 + 1))
code=$(req post2 -H "authorization: bearer   $TOKEN" -X POST "$API/workers/0/restart")
check "2: 'authorization: bearer   TOKEN' (case, spaces) is accepted too: 202" [ "$code" = 202 ]
restarted2() { w0 "select(.restarts == $R1 + 1 and .state == \"running\")" >/dev/null; }
wait_for 50 restarted2

# ---------------------------------------------------------------------------------------------
# 3. the error table, with the token: 400 415 413 404 405
expect_err badjson 400 "3: POST /system/memprobe, body '{\"size_mb\": x}'" \
	-H "$AUTH" -H "$JSON" -X POST --data-binary '{"size_mb": x}' "$API/system/memprobe"
check "3: ... the message names the byte offset of the error (12)" \
	jq -e '.error.message | test("byte offset 12$")' "$TMP/badjson.body"
expect_err trunc 400 "3: POST /system/memprobe, body '{\"runs\": 1,' (truncated)" \
	-H "$AUTH" -H "$JSON" -X POST --data-binary '{"runs": 1,' "$API/system/memprobe"
check "3: ... the message names the byte offset (11, the end)" jq -e '.error.message | test("byte offset 11$")' "$TMP/trunc.body"
expect_err form 415 "3: POST /system/memprobe with curl's default Content-Type (form)" \
	-H "$AUTH" -X POST -d '{"size_mb": 1}' "$API/system/memprobe"
expect_err text 415 "3: POST /system/memprobe with Content-Type text/plain" \
	-H "$AUTH" -H "Content-Type: text/plain" -X POST --data-binary '{"size_mb": 1}' "$API/system/memprobe"
check "3: ... the 415 message says what is expected and what came" \
	jq -e '.error.message | test("application/json") and test("text/plain")' "$TMP/text.body"
expect_err big 413 "3: POST /system/memprobe with a 70 KB JSON body" -H "$AUTH" -H "$JSON" -X POST \
	--data-binary @<(printf '{"size_mb": 1, "pad": "%s"}' "$(head -c 70000 /dev/zero | tr '\0' a)") "$API/system/memprobe"
# the refused bodies did not use up the copy probe's run (one run per 30 s): a small run goes through
code=$(req probe -m 60 -H "$AUTH" -H "$JSON" -X POST --data-binary '{"size_mb": 1, "runs": 1}' "$API/system/memprobe")
echo "# memprobe 1 MiB x 1: HTTP $code $(head -c 200 "$TMP/probe.body")"
check "3: after the refused bodies the copy probe still runs: 200, runs 1 (size rounded up to a hugepage), results" \
	cond "[ '$code' = 200 ] && jq -e '.runs == 1 and .size_mib <= 2 and (.results | length) > 0' '$TMP/probe.body' >/dev/null"
expect_err nope 404 "3: GET /api/v1/nope (unknown route)" "$API/nope"
expect_err nopepost 404 "3: POST /api/v1/nope with the token" -H "$AUTH" -X POST "$API/nope"
expect_err w9 404 "3: GET /api/v1/workers/9 (unknown id)" "$API/workers/9"
expect_err w9post 404 "3: POST /api/v1/workers/9/restart with the token (unknown id)" -H "$AUTH" -X POST "$API/workers/9/restart"
expect_err pool 404 "3: GET /api/v1/pools/nope (unknown pool)" "$API/pools/nope"
expect_err del 405 "3: DELETE /api/v1/health with the token" -H "$AUTH" -X DELETE "$API/health"
check "3: ... with 'Allow: GET, HEAD'" cond "[ \"\$(hdr del Allow)\" = 'GET, HEAD' ]"
expect_err put 405 "3: PUT /api/v1/workers/0/restart with the token" -H "$AUTH" -X PUT "$API/workers/0/restart"
check "3: ... with 'Allow: POST'" cond "[ \"\$(hdr put Allow)\" = 'POST' ]"
check "3: worker 0 was restarted exactly twice in all of this (restarts $((R0 + 2)))" \
	cond "[ \"\$(w0 .restarts)\" = $((R0 + 2)) ]"

# ---------------------------------------------------------------------------------------------
# 4. static files from the default web root (web/ of the source tree)
code=$(req root "$BASE/")
check "4: GET / is 200 with web/index.html's bytes" cond "[ '$code' = 200 ] && cmp -s '$TMP/root.body' '$ROOT/web/index.html'"
check "4: ... Content-Type text/html, X-Content-Type-Options: nosniff" \
	cond "[[ \"\$(hdr root Content-Type)\" == text/html* ]] && [ \"\$(hdr root X-Content-Type-Options)\" = nosniff ]"
code=$(req index "$BASE/index.html")
check "4: GET /index.html: the same bytes" cond "[ '$code' = 200 ] && cmp -s '$TMP/index.body' '$ROOT/web/index.html'"
code=$(req head -I "$BASE/index.html")
check "4: HEAD /index.html: 200, Content-Length = the file's size" \
	cond "[ '$code' = 200 ] && [ \"\$(hdr head Content-Length)\" = \"\$(stat -c %s '$ROOT/web/index.html')\" ]"
expect_err dotdot 404 "4: GET /../../etc/passwd (--path-as-is)" --path-as-is "$BASE/../../etc/passwd"
expect_err pct 404 "4: GET /%2e%2e/%2e%2e/etc/passwd" --path-as-is "$BASE/%2e%2e/%2e%2e/etc/passwd"
expect_err pct2 404 "4: GET /%2E%2E%2f%2E%2E%2fetc%2fpasswd" --path-as-is "$BASE/%2E%2E%2f%2E%2E%2fetc%2fpasswd"
expect_err apinope 404 "4: GET /api/v1/nope is the API's JSON 404, not a file"  "$API/nope"
expect_err postroot 401 "4: POST / without a token" -X POST "$BASE/"

# ---------------------------------------------------------------------------------------------
# 5. the token file is kept across restarts, regenerated only when missing, refused when unsafe
before=$(file_id "$TOKFILE")
inst_stop_pid "$INST_MGMT"
inst_start_mgmt a2 "$CFG" "$API"
check "5: mgmt restarted" [ $? -eq 0 ]
check "5: the existing token file is kept as is (same inode, mtime, content)" cond "[ \"\$(file_id '$TOKFILE')\" = '$before' ]"
check "5: ... mgmt logs it as existing" grep -qF "token: $TOKFILE (existing)" "$TMP/a2-mgmt.log"
check "5: ... and the token still works (POST /api/v1/health: 405, not 401)" \
	cond "[ \"\$(req k -H '$AUTH' -X POST '$API/health')\" = 405 ]"
inst_stop_pid "$INST_MGMT"
rm -f "$TOKFILE"
inst_start_mgmt a3 "$CFG" "$API"
check "5: mgmt started with the token file deleted" [ $? -eq 0 ]
NEW=$(head -n 1 "$TOKFILE" 2>/dev/null)
check "5: ... a new token file: mode 0600, 64 hex characters, a different token" \
	cond "[ \"\$(stat -c %a '$TOKFILE')\" = 600 ] && grep -qxE '[0-9a-f]{64}' '$TOKFILE' && [ '$NEW' != '$TOKEN' ]"
check "5: ... the old token is refused now (401), the new one accepted (405 on POST /health)" \
	cond "[ \"\$(req old -H '$AUTH' -X POST '$API/health')\" = 401 ] && [ \"\$(req new -H 'Authorization: Bearer $NEW' -X POST '$API/health')\" = 405 ]"
inst_stop_pid "$INST_MGMT"
check "5: no temporary token files left" cond "[ -z \"\$(ls '$TMP' | grep '\\.token\\.')\" ]"

chmod 0640 "$TOKFILE"
rc=$(mgmt_refuses mode)
sed 's/^/# stderr: /' "$TMP/mode.err"
check "5: token file mode 0640: mgmt refuses to start (exit 2)" [ "$rc" = 2 ]
check "5: ... saying why (the path and 'mode 0640')" grep -qF "token file $TOKFILE: mode 0640" "$TMP/mode.err"
check "5: ... and it never listened (no answer on port $PORT)" cond "! curl -sS -m 2 '$API/health' >/dev/null 2>&1"
chmod 0604 "$TOKFILE"
check "5: token file mode 0604 (other can read): refused too (exit 2)" [ "$(mgmt_refuses mode2)" = 2 ]
: >"$TOKFILE"; chmod 0600 "$TOKFILE"
rc=$(mgmt_refuses empty)
sed 's/^/# stderr: /' "$TMP/empty.err"
check "5: empty token file: mgmt refuses to start (exit 2), saying 'empty'" \
	cond "[ '$rc' = 2 ] && grep -qF 'token file $TOKFILE: empty' '$TMP/empty.err'"
check "5: ... and the empty file was left alone (not regenerated)" [ ! -s "$TOKFILE" ]
check "5: --print-token fails on it too (exit 1)" cond "! inst_token '$CFG' >/dev/null 2>&1"

# ---------------------------------------------------------------------------------------------
# 6. a token from the config wins; a web root of our own with traps in it
W="$TMP/www"
mkdir -p "$W/sub" "$W/api/v1" "$W/emptydir"
printf '<p>temp root</p>\n' >"$W/index.html"
printf 'hello\n' >"$W/ok.txt"
printf 'body{}\n' >"$W/a.css"
printf 'export {};\n' >"$W/sub/f.js"
printf '\0\1\2' >"$W/x.bin"
printf 'hidden\n' >"$W/.hidden"
printf 'FILE-NOT-API\n' >"$W/api/v1/nope"
printf 'FILE-NOT-METRICS\n' >"$W/metrics"
printf 'SECRET\n' >"$TMP/secret.txt"
ln -s /etc/passwd "$W/leak"
ln -s /etc "$W/etc"
ln -s ../secret.txt "$W/up"
ln -s index.html "$W/inside.html"
jq --arg t "$CFG_TOKEN" --arg w "$W" '.mgmt.token = $t | .mgmt.web_root = $w' "$CFG" >"$CFGB"
rm -f "$TOKFILE"
inst_start_mgmt b "$CFGB" "$API"
check "6: mgmt with mgmt.token and mgmt.web_root in the config up" [ $? -eq 0 ]
check "6: ... logs that the token comes from the config, and the web root" \
	cond "grep -qF 'token: from the config (mgmt.token or mgmt.tokens.admin)' '$TMP/b-mgmt.log' && grep -qF 'static files from $W' '$TMP/b-mgmt.log'"
check "6: ... and created no token file" [ ! -e "$TOKFILE" ]
check "6: --print-token prints the config's token" cond "[ \"\$(inst_token '$CFGB')\" = '$CFG_TOKEN' ]"
expect_err cfgold 401 "6: POST /api/v1/health with the earlier file token" -H "Authorization: Bearer $NEW" -X POST "$API/health"
check "6: POST /api/v1/health with the config's token: 405 (authenticated)" \
	cond "[ \"\$(req cfgok -H 'Authorization: Bearer $CFG_TOKEN' -X POST '$API/health')\" = 405 ]"

static_ok() { # static_ok NAME PATH FILE CTYPE-PREFIX: 200, FILE's bytes, Content-Type, nosniff
	local code
	code=$(req "$1" "$BASE$2")
	check "6: GET $2: 200, the bytes of $(basename "$3"), $4" \
		cond "[ '$code' = 200 ] && cmp -s '$TMP/$1.body' '$3' && [[ \"\$(hdr $1 Content-Type)\" == '$4'* ]] && [ \"\$(hdr $1 X-Content-Type-Options)\" = nosniff ]"
}
static_ok s_root / "$W/index.html" text/html
static_ok s_txt /ok.txt "$W/ok.txt" text/plain
static_ok s_css /a.css "$W/a.css" text/css
static_ok s_js /sub/f.js "$W/sub/f.js" text/javascript
static_ok s_bin /x.bin "$W/x.bin" application/octet-stream
static_ok s_in /inside.html "$W/index.html" text/html
expect_err s_leak 404 "6: GET /leak (symlink to /etc/passwd)" "$BASE/leak"
expect_err s_etc 404 "6: GET /etc/passwd (through a symlink to /etc)" "$BASE/etc/passwd"
expect_err s_up 404 "6: GET /up (symlink to ../secret.txt, outside the root)" "$BASE/up"
expect_err s_dd 404 "6: GET /../secret.txt (--path-as-is; the file exists)" --path-as-is "$BASE/../secret.txt"
expect_err s_pct 404 "6: GET /%2e%2e/secret.txt" --path-as-is "$BASE/%2e%2e/secret.txt"
expect_err s_sub 404 "6: GET /sub (a directory: no listing)" "$BASE/sub"
expect_err s_sub2 404 "6: GET /emptydir/ (a directory without index.html)" "$BASE/emptydir/"
expect_err s_hid 404 "6: GET /.hidden (dot file)" "$BASE/.hidden"
expect_err s_api 404 "6: GET /api/v1/nope (a file of that name exists in the web root)" "$API/nope"
check "6: ... the answer is the API's, not the file" cond "! grep -q FILE-NOT-API '$TMP/s_api.body'"
code=$(req s_met "$BASE/metrics")
echo "# GET /metrics: HTTP $code $(hdr s_met Content-Type)"
check "6: GET /metrics (a file 'metrics' exists in the web root) is never that file" \
	cond "! grep -q FILE-NOT-METRICS '$TMP/s_met.body'"
check "6: GET and HEAD only: POST /ok.txt with the config's token is 404 JSON, nothing written" \
	cond "[ \"\$(req s_post -H 'Authorization: Bearer $CFG_TOKEN' -X POST --data-binary x '$BASE/ok.txt')\" = 404 ] && is_error s_post 404 && [ \"\$(cat '$W/ok.txt')\" = hello ]"
inst_cleanup
