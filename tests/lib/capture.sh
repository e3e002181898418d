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
