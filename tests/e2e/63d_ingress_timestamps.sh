#!/usr/bin/env bash
# Timestamps in (issue #26, docs/INGRESS.md "Timestamps in"): captures built with scapy
# (tests/lib/ts_in_gen.py: Arista AVSP timestamp headers of every version, Metamako trailers with
# and without an extension, with an FCS after them), checked first by tshark as an independent
# decoder, then
#  - replayed (spanbox-primary --replay) through a port with ingress.timestamp: the output is the
#    frames without their header / trailer, byte for byte, in order; frames without a header pass as
#    they are; malformed ones are counted by reason and dropped, nothing else comes out;
#  - live, recorded by a capture (docs/CAPTURE.md): tshark reads the pcapng frame times, and they
#    are the times of the headers / trailers, to the nanosecond; /status and /metrics show the
#    clock offset of each port's sender (their time minus ours: the generator's times are 1000 s
#    behind our clock).
# Own resources: file prefix sbxti, lcores 63 (primary), 64 (worker), 65 (mgmt), API port 18930,
# database and captures under $TMP. Last, a live change of a port's ingress to a timestamp stage (PUT).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/capture.sh"
PEQ="$ROOT/tests/lib/pcap_equal.py"
PORT=18930 API=http://127.0.0.1:18930/api/v1
TOKEN=sbxti-token-0123456789abcdef
AUTH="Authorization: Bearer $TOKEN"
PREFIX=sbxti
cleanup() { inst_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT
npkts() { capinfos -Mc "$1" | awk '/Number of packets/ {print $NF}'; }
eq() { if [ "$2" = "$3" ]; then ok "$1 ($2)"; else not_ok "$1 (got $2, expected $3)"; fi; }
peq() { python3 "$PEQ" "$1" "$2" | sed "s/^/# /"; return "${PIPESTATUS[0]}"; }
jqq() { jq -e "$@" >/dev/null; } # jq -e without printing the result
TSH=(tshark --enable-heuristic metamako_eth) # Wireshark's Metamako trailer heuristic is off by default

mkcfg() { ingress_xconnect_json "$TMP/$1.json" "$PREFIX" "$2" "$3" "$TMP/$1_p1.pcap"; } # mkcfg TAG INPUT INGRESS_JSON

NOW=$(date +%s)
/usr/bin/python3 "$ROOT/tests/lib/ts_in_gen.py" "$TMP" "$NOW" >"$TMP/gen.out" 2>&1
check "scapy built the captures ($(tail -n 1 "$TMP/gen.out"))" [ -s "$TMP/fcs_out.pcap" ] || { cat "$TMP/gen.out"; exit 1; }

# tshark first: the inputs are what they claim to be
eq "tshark: 64 AVSP frames, 42 of the versions tshark 4.0 knows (0x0010, 0x0110, 0x0020, 0x0120; not the J2 ones)" \
	"$(tshark -r "$TMP/arista.pcap" -Y avsp 2>/dev/null | wc -l)+$(tshark -r "$TMP/arista.pcap" -Y 'avsp.ver == 0x10 || avsp.ver == 0x110 || avsp.ver == 0x20 || avsp.ver == 0x120' 2>/dev/null | wc -l)" "64+42"
# tshark's seconds/nanoseconds of the 64-bit UTC headers are the generator's times
tshark -r "$TMP/arista.pcap" -Y 'avsp.ver == 0x110 and avsp.64ns < 1000000000' -T fields -e avsp.64sec -e avsp.64ns 2>/dev/null |
	awk '{printf "%d%09d\n", $1, $2}' >"$TMP/tshark_avsp.times"
awk 'NR % 6 == 1' "$TMP/arista_good.times" >"$TMP/avsp_utc64.times"
check "tshark: the 64-bit UTC headers hold the generator's times ($(wc -l <"$TMP/tshark_avsp.times") frames)" \
	cmp -s "$TMP/tshark_avsp.times" "$TMP/avsp_utc64.times"
"${TSH[@]}" -r "$TMP/metamako_good.pcap" -T fields -e metamako.time 2>/dev/null | python3 -c '
import sys, datetime
for l in sys.stdin:
    d, frac = l.strip().rsplit(".", 1)
    t = datetime.datetime.strptime(d, "%b %d, %Y %H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    print("%d%09d" % (int(t.timestamp()), int(frac.split()[0])))' >"$TMP/tshark_mm.times"
check "tshark: 50 Metamako trailers whose times are the generator's" cmp -s "$TMP/tshark_mm.times" "$TMP/metamako_good.times"
eq "tshark: 7 of them with a trailer extension, the 3 malformed ones no trailer to it" \
	"$("${TSH[@]}" -r "$TMP/metamako.pcap" -Y metamako.ext 2>/dev/null | wc -l)+$("${TSH[@]}" -r "$TMP/metamako.pcap" -Y metamako 2>/dev/null | wc -l)" "7+50"
eq "tshark: 10 trailers followed by an FCS" "$("${TSH[@]}" -r "$TMP/fcs.pcap" -Y metamako 2>/dev/null | wc -l)" 10

# Arista: headers removed, frames without one passed, malformed ones counted and dropped
mkcfg ar "$TMP/arista.pcap" '{"timestamp": {"format": "arista"}}'
replay ar
eq "arista: timestamps_in = the 60 headers" "$(pctr "$TMP/ar.log" p0 timestamps_in)" 60
eq "arista: the 3 frames without a header passed (timestamp_absent)" "$(pctr "$TMP/ar.log" p0 timestamp_absent)" 3
check "arista: the output is the frames without their header (and the plain ones), byte for byte" \
	peq "$TMP/arista_out.pcap" "$TMP/ar_p1.pcap"
eq "arista: malformed short, subtype, version, implausible" \
	"$(for r in short subtype version implausible; do pctr "$TMP/ar.log" p0 timestamp_malformed_$r; done | paste -sd+)" "1+1+1+1"
eq "arista: the 4 malformed frames are the port's drops" "$(pctr "$TMP/ar.log" p0 drop_packets)" 4
eq "arista: tshark finds no AVSP header in the output" "$(tshark -r "$TMP/ar_p1.pcap" -Y avsp 2>/dev/null | wc -l)" 0

# Metamako: trailers cut, malformed ones counted and dropped
mkcfg mm "$TMP/metamako.pcap" '{"timestamp": {"format": "metamako"}}'
replay mm
eq "metamako: timestamps_in = the 50 trailers" "$(pctr "$TMP/mm.log" p0 timestamps_in)" 50
check "metamako: the output is the frames without their trailer (extensions included), byte for byte" \
	peq "$TMP/metamako_out.pcap" "$TMP/mm_p1.pcap"
eq "metamako: implausible (ns 10^9, 40 days off) and short (20 bytes)" \
	"$(pctr "$TMP/mm.log" p0 timestamp_malformed_implausible)+$(pctr "$TMP/mm.log" p0 timestamp_malformed_short)" "2+1"
eq "metamako: tshark finds no trailer in the output" "$("${TSH[@]}" -r "$TMP/mm_p1.pcap" -Y metamako 2>/dev/null | wc -l)" 0
mkcfg fc "$TMP/fcs.pcap" '{"timestamp": {"format": "metamako", "fcs": true}}'
replay fc
check "metamako fcs: trailer and FCS cut, byte for byte" peq "$TMP/fcs_out.pcap" "$TMP/fc_p1.pcap"
mkcfg fn "$TMP/fcs.pcap" '{"timestamp": {"format": "metamako"}}'
replay fn
eq "metamako without fcs on frames with one: implausible, dropped, nothing wrong emitted" \
	"$(pctr "$TMP/fn.log" p0 timestamp_malformed_implausible)+$(pctr "$TMP/fn.log" p1 tx_packets)" "10+0"

# Live: the recorder writes the frames' own times
PAUSE="$TMP/pause"
CFG="$TMP/live.json"
cat >"$CFG" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 63, "mgmt_lcore": 65},
  "ports": [
    {"name": "a0", "devargs": "net_pcap0,rx_pcap=$TMP/arista_good.pcap,pps=500", "ingress": {"timestamp": {"format": "arista"}}},
    {"name": "m0", "devargs": "net_pcap1,rx_pcap=$TMP/metamako_good.pcap,pps=500", "ingress": {"timestamp": {"format": "metamako"}}},
    {"name": "o0", "devargs": "net_pcap2,tx_pcap=$TMP/o0.pcap"},
    {"name": "o1", "devargs": "net_pcap3,tx_pcap=$TMP/o1.pcap"}
  ],
  "workers": {"count": 1, "lcores": [64]},
  "forwarding": {"xconnects": [["a0", "o0"], ["m0", "o1"]]},
  "mgmt": {"port": $PORT, "database": "$TMP/live.db", "token": "$TOKEN",
           "captures": {"directory": "$TMP/captures", "quota_mb": 64}}
}
JSON
cap_start live "$PAUSE" || exit 0
code=$(cap_post '{"sources": [{"port": "a0", "direction": "rx"}, {"port": "m0", "direction": "rx"}, {"port": "o0", "direction": "tx"}], "stop": {"packets": 170}}')
C=$(jq -r .id "$TMP/post.json")
check "POST /captures (a0 rx, m0 rx, o0 tx): 201 ($code, id $C)" [ "$code" = 201 ] || { sed 's/^/# /' "$TMP/post.json"; exit 0; }
rm -f "$PAUSE"
cap_wait_ended "$C" 300
check "capture $C ended on its stop condition ($(cap_state "$C"))" [ "$(cap_state "$C")" = "ended: stop.packets" ]
check "download of capture $C's file 1: 200" [ "$(cap_download "$C" 1 "$TMP/c.pcapng")" = 200 ]
for i in 0 1 2; do
	tshark -r "$TMP/c.pcapng" -Y "frame.interface_id == $i" -T fields -e frame.time_epoch 2>/dev/null | tr -d . | sed 's/^0*//' >"$TMP/if$i.times"
done
check "pcapng: a0's 60 frames carry the times of their AVSP headers (TAI less 37 s, 48-bit completed), to the ns" \
	cmp -s "$TMP/if0.times" "$TMP/arista_good.times"
check "pcapng: m0's 50 frames carry the times of their Metamako trailers, to the ns" \
	cmp -s "$TMP/if1.times" "$TMP/metamako_good.times"
check "pcapng: o0's 60 frames (the cross-connect's output) carry their ingress times too" \
	cmp -s "$TMP/if2.times" "$TMP/arista_good.times"
head -3 "$TMP/if0.times" | paste -sd' ' | sed 's/^/# a0 times: /'
check "pcapng: the recorded frames are plain (tshark finds no AVSP header, no trailer)" \
	[ "$("${TSH[@]}" -r "$TMP/c.pcapng" -Y 'avsp or metamako' 2>/dev/null | wc -l)" = 0 ]
tshark -r "$TMP/c.pcapng" 2>&1 >/dev/null | grep -v 'Running as user "root"' >"$TMP/c.tshark"
check "tshark reads the capture without a warning ($(head -c 200 "$TMP/c.tshark"))" [ ! -s "$TMP/c.tshark" ]
curl -fsS "$API/status" >"$TMP/status.json"
for p in a0 m0; do
	jq -c --arg p "$p" '.ports[] | select(.name == $p) | .ingress.timestamp' "$TMP/status.json" >"$TMP/$p.ts"
	sed "s/^/# $p: /" "$TMP/$p.ts"
	# their clock is 1000 s behind ours (the generator: NOW - 1000 s + less than 1 s), less the seconds
	# the test took to get here (our clock went on)
	check "/status $p: frames, and offsets (their time - ours) between -1300 s and -999 s, min <= last <= max" \
		jqq '.frames > 0 and .offset_ns.min >= -1300e9 and .offset_ns.max <= -999e9 and
		       .offset_ns.min <= .offset_ns.last and .offset_ns.last <= .offset_ns.max' "$TMP/$p.ts"
done
eq "/status a0: format arista, 60 frames" "$(jq -r '.format + " " + (.frames | tostring)' "$TMP/a0.ts")" "arista 60"
curl -fsS "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics.txt"
check "/metrics: spanbox_ingress_timestamp_offset_ns {port=\"m0\", stat=\"last\"} is their time - ours" \
	awk '/^spanbox_ingress_timestamp_offset_ns\{.*port="m0".*stat="last"/ {v = $NF} END {exit !(v != "" && v <= -999e9 && v >= -1300e9)}' "$TMP/metrics.txt"
check "/metrics: the offset family's HELP and TYPE gauge" grep -q '^# TYPE spanbox_ingress_timestamp_offset_ns gauge' "$TMP/metrics.txt"
eq "/status a0: timestamps_in counted on the port" \
	"$(jq '.ports[] | select(.name == "a0") | .workers.timestamps_in' "$TMP/status.json")" 60
# a live change: ingress.timestamp is part of the port's ingress object (PUT /ports/{name}/ingress)
put_ingress() { curl -sS --max-time 10 -o "$TMP/put.json" -w '%{http_code}' -H "$AUTH" -X PUT \
	-H 'Content-Type: application/json' --data-binary "$1" "$API/ports/o1/ingress"; }
code=$(put_ingress '{"timestamp": {"format": "arista", "window_s": 5}}')
check "PUT o1 ingress, arista with window_s: 422 naming timestamp.window_s ($code $(head -c 160 "$TMP/put.json"))" \
	[ "$code" = 422 -a "$(grep -c 'timestamp.window_s' "$TMP/put.json")" = 1 ]
code=$(put_ingress '{"timestamp": {"format": "metamako", "fcs": true}}')
check "PUT o1 ingress {timestamp: metamako, fcs}: 200 ($code)" [ "$code" = 200 ]
check "GET o1 ingress: the timestamp stage as given" \
	jqq '.ingress.timestamp == {"format": "metamako", "fcs": true}' <(curl -fsS "$API/ports/o1/ingress")
check "/status o1: a timestamp object, metamako, no frame yet (null offsets)" \
	wait_for 30 bash -c "curl -fsS '$API/status' | jq -e '.ports[] | select(.name == \"o1\") | .ingress.timestamp |
		.format == \"metamako\" and .frames == 0 and .offset_ns.last == null' >/dev/null"
