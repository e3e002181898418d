#!/usr/bin/env bash
# docs/openapi.yaml against the server (issue 5, "docs/openapi.yaml"):
#  - the spec parses (PyYAML) and is sound: OpenAPI 3.0.x, every $ref resolves, path parameters
#    declared, every error answer the shared Error schema, bearerAuth + 401 on every mutating
#    operation (tests/lib/openapi_check.py lint);
#  - `spanbox-mgmt --routes` (the route tables the server matches, plus the static files) equals
#    the spec's paths and methods, both ways: a route missing from the spec fails, a spec operation
#    the server does not register fails, each difference printed. The comparison is first run on
#    a doctored copy of the spec (one route removed, one invented) and must report both;
#  - --routes needs no config, EAL or database;
#  - live, on its own instance: every GET route of --routes is routed (never "no route"); the
#    answers of /health, /status, /workers, /workers/{id}, /pools, /pools/{name}, /ports,
#    /ports/{name}/stats, /mirrors, /mirrors/{id}, /forwarding/xconnects, /config, /events,
#    /system and /stats/history match their response schema (required fields, types, enums),
#    and so do answers of POST/DELETE /mirrors, 401, 404, 405 (+ Allow), 409, 415, 400, 422.
#
# Own instance: file prefix sbxe, lcores 90-93, API port 18250, database under $TMP, net_null
# ports without RX (no traffic, idle workers).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"

PORT=18250
BASE=http://127.0.0.1:$PORT API=http://127.0.0.1:$PORT/api/v1
SPEC="$ROOT/docs/openapi.yaml"
CFG="$TMP/e.json"
TOKEN=sbxe-token-0123456789abcdef
AUTH="Authorization: Bearer $TOKEN"
JSON="Content-Type: application/json"
trap 'inst_cleanup; rm -rf "$TMP"' EXIT

# PyYAML: Debian's python3-yaml is for /usr/bin/python3; another python3 first in PATH may lack it
PY=python3
python3 -c 'import yaml' 2>/dev/null || PY=/usr/bin/python3
OAC() { "$PY" "$ROOT/tests/lib/openapi_check.py" "$@"; }
# req NAME CURL-ARGS...: body in $TMP/NAME.body, headers in $TMP/NAME.hdr; prints the status
req() { local n=$1; shift; curl -sS --max-time 10 -o "$TMP/$n.body" -D "$TMP/$n.hdr" -w '%{http_code}' "$@"; }
hdr() { awk -v h="$(tr '[:upper:]' '[:lower:]' <<<"$2"):" \
	'tolower($1) == h { sub(/^[^:]*:[ \t]*/, ""); sub(/\r$/, ""); v = $0 } END { print v }' "$TMP/$1.hdr"; }
# parity SPECFILE: compare --routes with the spec both ways; prints every difference, 0 if none
parity() {
	local spec=$1 rc=0 l
	OAC "$spec" routes >"$TMP/spec.routes" || return 1
	while read -r l; do echo "# route not in $(basename "$spec"): $l"; rc=1; done \
		< <(comm -23 "$TMP/server.routes" "$TMP/spec.routes")
	while read -r l; do echo "# in $(basename "$spec") but not registered by the server: $l"; rc=1; done \
		< <(comm -13 "$TMP/server.routes" "$TMP/spec.routes")
	return $rc
}
# conforms NAME METHOD PATH STATUS: the answer NAME (req) has STATUS and matches the spec's schema
conforms() {
	local n=$1 m=$2 p=$3 s=$4 got
	got=$(cat "$TMP/$n.code")
	[ "$got" = "$s" ] || { echo "# $n: HTTP $got, expected $s: $(head -c 300 "$TMP/$n.body")"; return 1; }
	OAC "$SPEC" validate "$m" "$p" "$s" "$TMP/$n.body" | sed "s/^/# $n: /"
	return "${PIPESTATUS[0]}"
}
# call NAME STATUS METHOD SPECPATH URLPATH [CURL-ARGS...]: request + conforms, one check line
call() {
	local n=$1 s=$2 m=$3 p=$4 u=$5; shift 5
	req "$n" -X "$m" "$@" "$BASE$u" >"$TMP/$n.code"
	check "4: $m $u: $s, the answer matches the spec's schema for $m $p $s" conforms "$n" "$m" "$p" "$s"
}

# ---------------------------------------------------------------------------------------------
# 1. the spec parses and is sound
check "1: $PY has PyYAML (Debian python3-yaml)" "$PY" -c 'import yaml' || exit 1
OAC "$SPEC" lint >"$TMP/lint.out"
rc=$?
sed 's/^/# lint: /' "$TMP/lint.out"
check "1: docs/openapi.yaml: OpenAPI 3.0.x, refs resolve, errors use Error, bearerAuth on mutating routes" \
	cond "[ $rc -eq 0 ] && [ ! -s '$TMP/lint.out' ]"

# ---------------------------------------------------------------------------------------------
# 2. --routes: no config, no EAL, no database
rm -rf /var/run/dpdk/sbxe
timeout 10 "$BUILD/mgmt/spanbox-mgmt" --routes >"$TMP/routes.raw" 2>"$TMP/routes.err"
rc=$?
sed 's/^/# --routes: /' "$TMP/routes.raw"
check "2: spanbox-mgmt --routes exits 0 without a config, nothing on stderr" \
	cond "[ $rc -eq 0 ] && [ ! -s '$TMP/routes.err' ]"
check "2: ... every line is 'METHOD PATH', no line twice" \
	cond "grep -cvE '^(GET|POST|PUT|DELETE|PATCH) /[^ ]*\$' '$TMP/routes.raw' | grep -qx 0 && [ -z \"\$(sort '$TMP/routes.raw' | uniq -d)\" ]"
check "2: ... at least 25 routes, /api/v1/status, /metrics and / among them" \
	cond "[ \$(wc -l <'$TMP/routes.raw') -ge 25 ] && grep -qx 'GET /api/v1/status' '$TMP/routes.raw' && grep -qx 'GET /metrics' '$TMP/routes.raw' && grep -qx 'GET /' '$TMP/routes.raw'"
timeout 10 "$BUILD/mgmt/spanbox-mgmt" --routes --db "$TMP/never.db" >/dev/null 2>&1
check "2: ... touches neither the database (--db) nor the EAL runtime dir" \
	cond "[ ! -e '$TMP/never.db' ] && [ ! -e /var/run/dpdk/sbxe ]"
sort "$TMP/routes.raw" >"$TMP/server.routes"

# ---------------------------------------------------------------------------------------------
# 3. parity, both ways; first prove the comparison sees a difference either way
"$PY" - "$SPEC" "$TMP/doctored.yaml" <<'EOF'
import sys, yaml
spec = yaml.safe_load(open(sys.argv[1]))
del spec["paths"]["/api/v1/pools/{name}"]["get"]      # a route the server has
spec["paths"]["/api/v1/nope"] = {"get": {"operationId": "nope", "responses": {"200": {"description": "x"}}}}
yaml.safe_dump(spec, open(sys.argv[2], "w"))
EOF
parity "$TMP/doctored.yaml" >"$TMP/doctored.out"
rc=$?
cat "$TMP/doctored.out"
check "3: self-test: a spec without GET /api/v1/pools/{name} fails, naming that route" \
	cond "[ $rc -ne 0 ] && grep -qF 'route not in doctored.yaml: GET /api/v1/pools/{name}' '$TMP/doctored.out'"
check "3: self-test: a spec with GET /api/v1/nope fails, naming that path" \
	cond "grep -qF 'but not registered by the server: GET /api/v1/nope' '$TMP/doctored.out'"
check "3: every route of --routes is in docs/openapi.yaml and every spec operation is a route" parity "$SPEC"

# ---------------------------------------------------------------------------------------------
# 4. live answers against the spec
cat >"$CFG" <<EOF
{ "eal": {"file_prefix": "sbxe", "socket_mem_mb": 128, "primary_lcore": 90, "mgmt_lcore": 91},
  "ports": [ {"name": "p0", "devargs": "net_null0,no-rx=1"}, {"name": "p1", "devargs": "net_null1,no-rx=1"},
             {"name": "m", "devargs": "net_null2,no-rx=1"} ],
  "workers": {"count": 2, "lcores": [92, 93], "busy_poll": false},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mirrors": [ {"id": 5, "name": "s5", "sources": [{"port": "p0"}], "destination": {"port": "m"}} ],
  "mgmt": {"port": $PORT, "database": "$TMP/e.db", "token": "$TOKEN"} }
EOF
inst_start_primary e "$CFG"
check "4: primary (prefix sbxe, net_null ports) ready" [ $? -eq 0 ] || { tail -n 20 "$TMP/e-primary.log"; exit 1; }
inst_start_mgmt e "$CFG" "$API"
check "4: mgmt up on port $PORT" [ $? -eq 0 ] || { cat "$TMP/e-mgmt.log"; exit 1; }

# every GET route is routed: never the router's "no route" (params: real names of this instance)
norute=""
while read -r m p; do
	[ "$m" = GET ] || continue
	u=$(sed -e 's#/workers/{id}#/workers/0#; s#/pools/{name}#/pools/sbx_pool_s0#; s#/ports/{name}#/ports/p0#' \
		-e 's#/mirrors/{id}#/mirrors/5#; s#/pci/{bdf}#/pci/0000:00:00.0#; s#/{file}#/app.js#' <<<"$p")
	[[ $p == */stats/history ]] && u="$u?metric=rx_packets&port=p0"
	c=$(req route "$BASE$u")
	echo "# GET $u: $c"
	if [ "$c" = 404 ] && grep -q '"no route' "$TMP/route.body"; then norute="$norute $u"; fi
done <"$TMP/server.routes"
check "4: every GET route of --routes is routed by the live server (none answers 'no route')" cond "[ -z '$norute' ]"

call health 200 GET /api/v1/health /api/v1/health
check "4: ... /health says the appliance is up" jq -e '.appliance == "up"' "$TMP/health.body"
call status 200 GET /api/v1/status /api/v1/status
check "4: ... /status has 3 ports, 2 workers, mirror session 5" \
	jq -e '(.ports | length) == 3 and (.workers | length) == 2 and .mirrors[0].id == 5' "$TMP/status.body"
call workers 200 GET /api/v1/workers /api/v1/workers
call worker0 200 GET '/api/v1/workers/{id}' /api/v1/workers/0
call pools 200 GET /api/v1/pools /api/v1/pools
call pool 200 GET '/api/v1/pools/{name}' /api/v1/pools/sbx_pool_s0
call ports 200 GET /api/v1/ports /api/v1/ports
call pstats 200 GET '/api/v1/ports/{name}/stats' /api/v1/ports/p0/stats
call mirrors 200 GET /api/v1/mirrors /api/v1/mirrors
call mirror5 200 GET '/api/v1/mirrors/{id}' /api/v1/mirrors/5
call xcs 200 GET /api/v1/forwarding/xconnects /api/v1/forwarding/xconnects
call config 200 GET /api/v1/config /api/v1/config
call events 200 GET /api/v1/events '/api/v1/events?limit=5'
call system 200 GET /api/v1/system /api/v1/system
call hist 200 GET /api/v1/stats/history '/api/v1/stats/history?metric=rx_packets&port=p0&step=60'
c=$(req metrics "$BASE/metrics")
check "4: GET /metrics: 200 text/plain version 0.0.4 with spanbox_up 1 (as the spec says)" \
	cond "[ '$c' = 200 ] && [[ \"\$(hdr metrics Content-Type)\" == 'text/plain; version=0.0.4'* ]] && grep -qx 'spanbox_up 1' '$TMP/metrics.body'"

# changes and errors
call addm 201 POST /api/v1/mirrors /api/v1/mirrors -H "$AUTH" -H "$JSON" \
	--data-binary '{"id": 7, "sources": [{"port": "p1", "direction": "rx"}], "destination": {"port": "m"}}'
call delm 200 DELETE '/api/v1/mirrors/{id}' /api/v1/mirrors/7 -H "$AUTH"
check "4: ... and session 7 is gone again" cond "[ \"\$(curl -s '$API/mirrors' | jq -c '[.[].id]')\" = '[5]' ]"
call noauth 401 POST '/api/v1/workers/{id}/restart' /api/v1/workers/0/restart
call nowk 404 GET '/api/v1/workers/{id}' /api/v1/workers/9
req nomth -X DELETE -H "$AUTH" "$API/health" >"$TMP/nomth.code" # the spec's 405 of the path (GET's entry)
check "4: DELETE /api/v1/health (with the token): 405 matching the spec's 405 of /api/v1/health" \
	conforms nomth GET /api/v1/health 405
check "4: ... 405 carries Allow: GET, HEAD" cond "[ \"\$(hdr nomth Allow)\" = 'GET, HEAD' ]"
call dupid 409 POST /api/v1/mirrors /api/v1/mirrors -H "$AUTH" -H "$JSON" \
	--data-binary '{"id": 5, "sources": [{"port": "p1"}], "destination": {"port": "m"}}'
call link 409 PUT '/api/v1/ports/{name}/link' /api/v1/ports/p0/link -H "$AUTH" -H "$JSON" --data-binary '{"up": false}'
call ctype 415 POST /api/v1/mirrors /api/v1/mirrors -H "$AUTH" -H 'Content-Type: text/plain' --data-binary '{}'
call badjs 400 POST /api/v1/mirrors /api/v1/mirrors -H "$AUTH" -H "$JSON" --data-binary '{"id": '
call badpt 422 POST /api/v1/mirrors /api/v1/mirrors -H "$AUTH" -H "$JSON" \
	--data-binary '{"sources": [{"port": "p9"}], "destination": {"port": "m"}}'
check "4: ... 422 names the field" jq -e '.error.field == "sources[0].port"' "$TMP/badpt.body"
call hbad 400 GET /api/v1/stats/history '/api/v1/stats/history?metric=nope&port=p0'
check "4: after the refusals the sessions are still [5]" cond "[ \"\$(curl -s '$API/mirrors' | jq -c '[.[].id]')\" = '[5]' ]"
