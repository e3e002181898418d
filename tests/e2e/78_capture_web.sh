#!/usr/bin/env bash
# The status page's Captures section (docs/CAPTURE.md "Recording through the API") in headless
# Chromium (tests/web/captures.test.mjs, playwright-core of tests/web): start a capture on a port
# from the form (direction, filter, stop condition), see it running, then ended on its stop
# condition, download its file from the link, delete it.
# Own instance: file prefix rc78, lcores 97 (primary), 98 (worker), 99 (mgmt), API port 18374;
# in0 replays plain_tcpreplay_test.pcap (held until the capture runs).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/capture.sh"

PORT=18374 API=http://127.0.0.1:18374/api/v1
CFG="$TMP/rc78.json" PAUSE="$TMP/pause"
TOKEN=rc78-token-0123456789abcdef
IN="$CAPTURES/plain_tcpreplay_test.pcap"
cleanup() { inst_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT
[ -r "$IN" ] || { ok "plain_tcpreplay_test.pcap not readable in $CAPTURES # SKIP"; exit 0; }
if ! [ -x /usr/bin/chromium ] || ! command -v node >/dev/null; then
	not_ok "chromium (/usr/bin/chromium) and node are installed (./spanbox setup installs them)"
	exit 0
fi
if [ ! -d "$ROOT/tests/web/node_modules/playwright-core" ]; then
	(cd "$ROOT/tests/web" && npm ci --no-audit --no-fund) >"$TMP/npm.log" 2>&1 ||
		{ not_ok "npm ci in tests/web (playwright-core from the lockfile)"; cat "$TMP/npm.log"; exit 0; }
fi
N=$(tshark -r "$IN" -T fields -e frame.number 2>/dev/null | wc -l)
cap_config rc78 "97 98 99" 64 "[{\"name\": \"in0\", \"devargs\": \"net_pcap0,rx_pcap=$IN,pps=500\"},
                             {\"name\": \"null1\", \"devargs\": \"net_null1,no-rx=1\"}]"
cap_start rc78 "$PAUSE" || exit 0
SBX_MGMT_URL="http://127.0.0.1:$PORT" SBX_TOKEN="$TOKEN" SBX_PAUSE="$PAUSE" SBX_FRAMES="$N" \
	timeout 120 node "$ROOT/tests/web/captures.test.mjs"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || not_ok "captures.test.mjs ended with status $rc (timeout or crash)"
exit 0
