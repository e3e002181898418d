# Helpers of the capture tests (tests/e2e/75_capture_*.sh, docs/CAPTURE.md "Recording through the
# API"), sourced after common.sh and instance.sh. Need API and AUTH.
#   cap_post BODY            POST /captures; the answer in $TMP/post.json, prints the status code
#   cap_get PATH             GET PATH of the API (fails on an HTTP error)
#   cap_state ID             the capture's state ("running", "ended: ...")
#   cap_wait_ended ID TENTHS wait until the capture ended (0) or TENTHS tenths of a second (1)
#   cap_download ID N FILE   GET /captures/ID/files/N into FILE; prints the status code
#   pcapng_json FILE         tests/lib/pcapng_read.py FILE
cap_post() { curl -sS --max-time 15 -o "$TMP/post.json" -w '%{http_code}' -H "$AUTH" -X POST \
	-H 'Content-Type: application/json' --data-binary "$1" "$API/captures"; }
cap_get() { curl -fsS --max-time 5 "$API$1"; }
cap_state() { cap_get "/captures/$1" | jq -r .state; }
cap_ended() { [ "$(cap_state "$1" | cut -c1-6)" = "ended:" ]; }
cap_wait_ended() { wait_for "$2" cap_ended "$1"; }
cap_download() { curl -sS --max-time 10 -o "$3" -w '%{http_code}' "$API/captures/$1/files/$2"; }
pcapng_json() { python3 "$ROOT/tests/lib/pcapng_read.py" "$1"; }
#   cap_config NAME LCORES QUOTA_MB PORTS   write $CFG: file prefix NAME, lcores "P W M" (primary,
#                            worker, mgmt), mgmt on $PORT with $TOKEN, database $TMP/NAME.db,
#                            captures in $TMP/captures (QUOTA_MB), PORTS (a JSON array of two
#                            ports) cross-connected
#   cap_start NAME [PAUSE]   primary (traffic held while the file PAUSE exists) and mgmt of $CFG,
#                            each checked ("primary ready", "mgmt up"); 1 when either failed
cap_config() {
	local l=($2)
	cat >"$CFG" <<JSON
{
  "eal": {"file_prefix": "$1", "socket_mem_mb": 256, "primary_lcore": ${l[0]}, "mgmt_lcore": ${l[2]}},
  "ports": $4,
  "workers": {"count": 1, "lcores": [${l[1]}]},
  "forwarding": {"xconnects": [[$(jq -c '.[0].name' <<<"$4"), $(jq -c '.[1].name' <<<"$4")]]},
  "mgmt": {"port": $PORT, "database": "$TMP/$1.db", "token": "$TOKEN",
           "captures": {"directory": "$TMP/captures", "quota_mb": $3}}
}
JSON
}
cap_start() {
	[ -z "${2:-}" ] || touch "$2"
	SBX_TEST_BRIDGE_PAUSE_FILE="${2:-}" inst_start_primary "$1" "$CFG"
	check "primary ready" [ -f "$TMP/$1.ready" ] || { tail -20 "$TMP/$1-primary.log" | sed 's/^/# /'; return 1; }
	inst_start_mgmt "$1" "$CFG" "$API"
	check "mgmt up" [ $? -eq 0 ]
}
