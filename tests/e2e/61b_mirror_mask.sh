#!/usr/bin/env bash
# Masking of mirror copies (issue #26, docs/CONFIG.md "mask"):
#  1. a replay of scapy-built frames (IPv4/TCP, IPv6/UDP, VLAN, QinQ/IPv6, VXLAN carrying
#     Ether/IPv4/TCP, a 64 B frame shorter than the regions, ARP, IPv6 with a hop-by-hop header, a
#     later IPv4 fragment) through five masked sessions (l4 under SPAN, inner_l4 under SPAN with
#     strategy share, l3 under ERSPAN II with strategy share, l2 under RSPAN, inner_l3 under VXLAN)
#     and one unmasked shared session: tshark decodes every copy, the pattern is exactly over the
#     region (anchors from scapy's own decoding of the input), every other byte is the frame's, the
#     IPv4 header checksums verify (tshark); the forwarded output is the input byte for byte; the
#     counters masked, mask_short, mask_no_anchor; a masked session never shares;
#  2. a bad mask is refused by --check naming the field;
#  3. REST on a running instance: POST/PUT of bad masks 422 naming the field, nothing changed; a
#     good one is stored, GET shows it, /status shows it with its defaults and the counters,
#     /metrics the counter families.
# Own resources: file prefix sbxmk<pid> / sbxmkl<pid>, lcores 31-34, API port 18900, net_pcap and
# net_null ports only (no tap, no namespace).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
source "$ROOT/tests/lib/instance.sh"
PY=python3
for p in python3 /usr/bin/python3; do "$p" -c 'import scapy.all' 2>/dev/null && { PY=$p; break; }; done
MK="$ROOT/tests/lib/mask_check.py"
PRIMARY="$BUILD/primary/spanbox-primary"
cleanup() { inst_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT
ENC='"src_ip": "192.0.2.1", "dst_ip": "198.51.100.7", "dst_mac": "02:00:5e:10:00:01"'

"$PY" "$MK" gen "$TMP/in.pcap"
check "9 input frames built with scapy" [ "$(capinfos -Mc "$TMP/in.pcap" 2>/dev/null | awk '/Number of packets/ {print $NF}')" = 9 ]
port() { echo "{\"name\": \"$1\", \"devargs\": \"net_pcap$2,tx_pcap=$TMP/$1.pcap\"}"; }
src='"sources": [{"port": "p0", "direction": "rx"}]'
cat >"$TMP/mask.json" <<JSON
{
  "eal": {"file_prefix": "sbxmk$$", "socket_mem_mb": 256, "primary_lcore": 31, "mgmt_lcore": 32},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$TMP/in.pcap"},
    $(port p1 1), $(port ta 2), $(port tb 3), $(port tc 4), $(port td 5), $(port te 6), $(port tf 7)
  ],
  "workers": {"count": 1, "lcores": [33], "standby_lcores": [34]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mirrors": [
    {"id": 101, "name": "ml4", $src, "destination": {"port": "ta"},
     "mask": {"from": "l4", "offset": 20, "length": 64, "pattern": 90}},
    {"id": 102, "name": "min4", $src, "destination": {"port": "tb"}, "copy": {"strategy": "share"},
     "mask": {"from": "inner_l4", "offset": 20, "length": 64, "pattern": 238}},
    {"id": 103, "name": "ml3", $src, "destination": {"port": "tc"}, "copy": {"strategy": "share"},
     "encap": {"type": "erspan2", $ENC}, "mask": {"from": "l3", "offset": 12, "length": 8}},
    {"id": 104, "name": "ml2", $src, "destination": {"port": "td"}, "encap": {"type": "rspan", "vlan": 42},
     "mask": {"from": "l2", "length": 6, "pattern": 255}},
    {"id": 105, "name": "min3", $src, "destination": {"port": "te"}, "encap": {"type": "vxlan", $ENC},
     "mask": {"from": "inner_l3", "offset": 12, "length": 8, "pattern": 17}},
    {"id": 106, "name": "plain", $src, "destination": {"port": "tf"}, "copy": {"strategy": "share"}}
  ]
}
JSON
replay mask
L="$TMP/mask.log"

# --- 1. the copies, decoded by tshark ---
# session SESSION FILE ENCAP FROM OFFSET LENGTH PATTERN
session() {
	"$PY" "$MK" check "$TMP/in.pcap" "$TMP/$2.pcap" "$3" "$4" "$5" "$6" "$7" >"$TMP/$1.out" 2>&1
	local rc=$?
	sed "s/^/# $1: /" "$TMP/$1.out"
	check "$1 ($3, mask $4 +$5 len $6, pattern $7): tshark finds the pattern exactly over the region of each copy, the frame's bytes elsewhere, valid IPv4 checksums" [ $rc -eq 0 ]
}
session ml4 ta span l4 20 64 90
session min4 tb span inner_l4 20 64 238
session ml3 tc erspan2 l3 12 8 0
session ml2 td rspan l2 0 6 255
session min3 te vxlan inner_l3 12 8 17
session plain tf span l2 0 0 0 # no mask: every copy the frame as it is

cmp_frames() { # cmp_frames A B: the frames of two pcaps are equal, byte for byte
	"$PY" -c 'import sys; from scapy.all import rdpcap; a, b = ([bytes(p) for p in rdpcap(f)] for f in sys.argv[1:]); sys.exit(0 if a == b and len(a) == 9 else 1)' "$1" "$2"
}
check "forwarded output p1: the 9 input frames, byte for byte (no mask wrote into them)" cmp_frames "$TMP/in.pcap" "$TMP/p1.pcap"

# counters: ARP has no L3 (no anchor but for l2), the 64 B frame ends inside the l4 regions
ctrs() { echo "$(mctr "$L" "$1" masked),$(mctr "$L" "$1" mask_short),$(mctr "$L" "$1" mask_no_anchor),$(mctr "$L" "$1" copied),$(mctr "$L" "$1" shared)"; }
eq() { if [ "$2" = "$3" ]; then ok "$1 ($2)"; else not_ok "$1 (got '$2', expected '$3')"; fi; }
eq "ml4: masked 8, mask_short 1, no anchor 1 (ARP), copied 9" "$(ctrs ml4)" "8,1,1,9,0"
eq "min4 (strategy share): masked 8, short 1, no anchor 1, copied 9, shared 0" "$(ctrs min4)" "8,1,1,9,0"
eq "ml3 (ERSPAN II, strategy share): masked 8, short 0, no anchor 1, copied 9, shared 0" "$(ctrs ml3)" "8,0,1,9,0"
eq "ml2 (RSPAN, l2): masked 9, short 0, no anchor 0" "$(ctrs ml2)" "9,0,0,9,0"
eq "min3 (VXLAN, inner_l3): masked 8, short 0, no anchor 1" "$(ctrs min3)" "8,0,1,9,0"
eq "plain (no mask, strategy share): nothing masked, every copy shared" "$(ctrs plain)" "0,0,0,0,9"

# --- 2. a bad mask refused at start, naming the field ---
bad() { # bad NAME SED FIELD
	sed "$2" "$TMP/mask.json" >"$TMP/bad.json"
	local out rc
	out=$("$PRIMARY" -c "$TMP/bad.json" --check 2>&1)
	rc=$?
	echo "# $1: rc $rc: $(grep -o 'mirrors\[.*' <<<"$out" | head -1)"
	check "config $1: refused (exit 2) naming $3" bash -c '[ "$1" = 2 ] && grep -qF -- "$2: " <<<"$3"' _ "$rc" "$3" "$out"
}
bad "mask.from l7" 's/"from": "l4"/"from": "l7"/' "mirrors[0].mask.from"
bad "mask.length 9601" 's/"length": 64, "pattern": 90/"length": 9601, "pattern": 90/' "mirrors[0].mask.length"
bad "mask.pattern 256" 's/"pattern": 238/"pattern": 256/' "mirrors[1].mask.pattern"
bad "mask without length" 's/"length": 6, //' "mirrors[3].mask.length"

# --- 3. REST ---
PORT=18900 API=http://127.0.0.1:18900/api/v1
TOKEN=sbxmk-token-0123456789abcdef
AUTH="Authorization: Bearer $TOKEN"
cat >"$TMP/live.json" <<JSON
{
  "eal": {"file_prefix": "sbxmkl$$", "socket_mem_mb": 256, "primary_lcore": 31, "mgmt_lcore": 32},
  "ports": [ {"name": "p0", "devargs": "net_null0,no-rx=1"}, {"name": "p1", "devargs": "net_null1,no-rx=1"},
             {"name": "t0", "devargs": "net_null2,no-rx=1"} ],
  "workers": {"count": 1, "lcores": [33], "standby_lcores": [34]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mgmt": {"port": $PORT, "database": "$TMP/mk.db", "token": "$TOKEN"}
}
JSON
inst_start_both live "$TMP/live.json" "$API" || exit 0
get() { curl -fsS --max-time 5 "$API$1"; }
req() { curl -sS --max-time 10 -o "$TMP/r.json" -w '%{http_code}' -H "$AUTH" -X "$1" -H 'Content-Type: application/json' \
	${3:+--data-binary "$3"} "$API$2"; }
state() { get /config | jq -cS '.mirrors'; }
S='"sources": [{"port": "p0"}], "destination": {"port": "t0"}'
before=$(state)
api_refused() { # api_refused NAME METHOD PATH BODY FIELD
	local code field
	code=$(req "$2" "$3" "$4")
	field=$(jq -r '.error.field // .field // empty' "$TMP/r.json" 2>/dev/null)
	echo "# $1: $code $(head -c 300 "$TMP/r.json")"
	check "API $1: 422 naming $5, nothing changed (got $code, field '$field')" [ "$code" = 422 -a "$field" = "$5" -a "$(state)" = "$before" ]
}
api_refused "POST mask.from l7" POST /mirrors "{\"id\": 7, $S, \"mask\": {\"from\": \"l7\", \"length\": 4}}" mask.from
api_refused "POST mask.length 0" POST /mirrors "{\"id\": 7, $S, \"mask\": {\"from\": \"l4\", \"length\": 0}}" mask.length
api_refused "POST mask.offset 9601" POST /mirrors "{\"id\": 7, $S, \"mask\": {\"from\": \"l4\", \"offset\": 9601, \"length\": 4}}" mask.offset
api_refused "POST an unknown mask key" POST /mirrors "{\"id\": 7, $S, \"mask\": {\"from\": \"l4\", \"length\": 4, \"regions\": 2}}" mask.regions
code=$(req POST /mirrors "{\"id\": 7, $S, \"mask\": {\"from\": \"inner_l4\", \"length\": 16}}")
check "POST a session with mask {inner_l4, length 16}: 201 ($code)" [ "$code" = 201 ] || cat "$TMP/r.json"
check "GET /mirrors/7: the mask as given" [ "$(get /mirrors/7 | jq -c .mask)" = '{"from":"inner_l4","length":16}' ]
wait_for 50 cond '[ "$(get /status | jq -c ".mirrors[] | select(.id == 7) | .mask")" != "" ]'
st=$(get /status | jq -c '.mirrors[] | select(.id == 7)')
check "/status: the mask with its defaults ($(jq -c .mask <<<"$st"))" \
	[ "$(jq -c .mask <<<"$st")" = '{"from":"inner_l4","offset":0,"length":16,"pattern":0}' ]
check "/status: counters masked, mask_short, mask_no_anchor" \
	[ "$(jq -c '.counters | [.masked, .mask_short, .mask_no_anchor]' <<<"$st")" = '[0,0,0]' ]
before=$(state)
api_refused "PUT mask.pattern -1" PUT /mirrors/7 "{$S, \"mask\": {\"from\": \"l2\", \"length\": 4, \"pattern\": -1}}" mask.pattern
code=$(req PUT /mirrors/7 "{$S, \"mask\": {\"from\": \"l3\", \"offset\": 12, \"length\": 8, \"pattern\": 255}}")
check "PUT /mirrors/7 with another mask: 200 ($code)" [ "$code" = 200 ] || cat "$TMP/r.json"
wait_for 50 cond '[ "$(get /status | jq -r ".mirrors[] | select(.id == 7) | .mask.from")" = l3 ]'
check "/status: the new mask runs" \
	[ "$(get /status | jq -c '.mirrors[] | select(.id == 7) | .mask')" = '{"from":"l3","offset":12,"length":8,"pattern":255}' ]
m=$(curl -fsS --max-time 5 "http://127.0.0.1:$PORT/metrics")
check "/metrics: spanbox_mirror_masked_packets_total, ..._mask_short_..., ..._mask_no_anchor_... of session 7" bash -c '
	grep -q "^spanbox_mirror_masked_packets_total{session=\"7\"" <<<"$1" &&
	grep -q "^spanbox_mirror_mask_short_packets_total{session=\"7\"" <<<"$1" &&
	grep -q "^spanbox_mirror_mask_no_anchor_packets_total{session=\"7\"" <<<"$1"' _ "$m"
