#!/usr/bin/env bash
# Timestamps on mirror copies (issue #26, docs/CONFIG.md "mirrors" `timestamp`): a replay of 100
# IPv4/UDP frames (60, 200, 600 and 1514 B) through sessions with an Arista AVSP header (SPAN,
# SPAN to a tool port of MTU 1500, ERSPAN II, RSPAN) or a Metamako trailer (SPAN copied, SPAN
# shared, VXLAN over IPv6), and one without. tshark (Wireshark's packet-avsp.c and
# packet-metamako.c, the heuristic metamako_eth switched on) decodes every copy; the copies are
# the frames with exactly the header inserted after the source MAC or the trailer appended; the
# times are monotonic (one worker) and inside the wall-clock interval of the replay, and within
# 50 ms of net_pcap's own (coarser) time of each copy. Then a live instance (net_null ports, no traffic):
# REST refuses a bad timestamp naming the field and changes nothing, GET shows a good one.
# Own resources: file prefix sbxto*, lcores 36-38, API port 18910.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
source "$ROOT/tests/lib/instance.sh"
trap 'inst_cleanup; rm -rf "$TMP"' EXIT
ENC4='"src_ip": "192.0.2.1", "dst_ip": "198.51.100.7", "dst_mac": "02:00:5e:10:00:01"'
ENC6='"src_ip": "2001:db8::1", "dst_ip": "2001:db8::2", "dst_mac": "02:00:5e:10:00:01"'

# 100 frames: IPv4/UDP 10.0.0.1 -> 10.0.0.2, port 5000 + i, lengths 60 (IP 40 B: 6 B of padding,
# an Ethernet trailer of its own), 200, 600 (shared by adaptive), 1514
python3 - "$TMP/in.pcap" <<'PY'
import struct, sys
def csum(b):
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(100):
        n = [60, 200, 600, 1514][i % 4]
        ipl = 40 if n == 60 else n - 14
        pay = bytes((i + k * 7) & 0xff for k in range(ipl - 28))
        udp = struct.pack('!HHHH', 40000, 5000 + i, ipl - 20, 0) + pay
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, ipl, i, 0, 64, 17, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
        ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
        fr = bytes.fromhex('020000000002020000000001') + b'\x08\x00' + ip + udp
        fr += bytes(n - len(fr))
        f.write(struct.pack('<IIII', 1700000000 + i, 0, len(fr), len(fr)) + fr)
PY
port() { # port NAME N MTU: a pcap port writing $TMP/NAME.pcap
	echo "{\"name\": \"$1\", \"devargs\": \"net_pcap$2,tx_pcap=$TMP/$1.pcap\", \"mtu\": $3}"
}
src='"sources": [{"port": "p0", "direction": "rx"}]'
# ports: p1 first, so that p0 is port index 1 (the Metamako trailer's default source port)
cat >"$TMP/ts.json" <<JSON
{
  "eal": {"file_prefix": "sbxto$$", "socket_mem_mb": 256, "primary_lcore": 36, "mgmt_lcore": 37},
  "ports": [
    $(port p1 0 1500), {"name": "p0", "devargs": "net_pcap1,rx_pcap=$TMP/in.pcap", "mtu": 1500},
    $(port ta 2 1600), $(port tc 3 1500), $(port tm 4 1600), $(port tms 5 1600), $(port te 6 1600),
    $(port tv 7 1600), $(port tr 8 1600), $(port tp 9 1600)
  ],
  "workers": {"count": 1, "lcores": [38]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mirrors": [
    {"id": 601, "name": "ar", $src, "destination": {"port": "ta"}, "timestamp": {"format": "arista64"}},
    {"id": 602, "name": "arcut", $src, "destination": {"port": "tc"}, "timestamp": {"format": "arista64"}},
    {"id": 603, "name": "mm", $src, "destination": {"port": "tm"}, "copy": {"strategy": "copy"},
     "timestamp": {"format": "metamako", "device_id": 4660, "port": 7}},
    {"id": 604, "name": "mms", $src, "destination": {"port": "tms"}, "copy": {"strategy": "share"},
     "timestamp": {"format": "metamako"}},
    {"id": 605, "name": "er", $src, "destination": {"port": "te"}, "encap": {"type": "erspan2", $ENC4},
     "timestamp": {"format": "arista64"}},
    {"id": 606, "name": "vx6", $src, "destination": {"port": "tv"}, "encap": {"type": "vxlan", $ENC6},
     "timestamp": {"format": "metamako", "device_id": 9}},
    {"id": 607, "name": "rs", $src, "destination": {"port": "tr"}, "encap": {"type": "rspan", "vlan": 42},
     "timestamp": {"format": "arista64"}},
    {"id": 608, "name": "plain", $src, "destination": {"port": "tp"}}
  ]
}
JSON
t0=$(date +%s%N)
replay ts
t1=$(date +%s%N)
L="$TMP/ts.log"
eq() { if [ "$2" = "$3" ]; then ok "$1 ($2)"; else not_ok "$1 (got '$2', expected '$3')"; fi; }

# byte for byte against the input frames, and the times (python reads the pcaps itself)
python3 - "$TMP" "$t0" "$t1" <<'PY'
import struct, sys
tmp, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def frames(p):
    d = open(p, 'rb').read(); o = 24; out = []
    while o + 16 <= len(d):
        s, us, n = struct.unpack_from('<III', d, o); out.append((d[o + 16:o + 16 + n], s * 10**9 + us * 1000)); o += 16 + n
    return out
def avsp(h):  # 14 B AVSP header -> ns, or None
    if h[:6] != bytes.fromhex('d28b00010110'): return None
    s, ns = struct.unpack('!II', h[6:14]); return s * 10**9 + ns
def mm(t):  # 16 B Metamako trailer -> (ns, flags, device, port)
    fcs, s, ns, fl, dev, port = struct.unpack('!IIIBHB', t); return (s * 10**9 + ns, fl, dev, port) if fcs == 0 else None
src = [f for f, _ in frames(tmp + '/in.pcap')]
fail = False
def tap(ok, msg):
    global fail
    fail |= not ok
    print(('ok' if ok else 'not ok') + ' - ' + msg)
def check(name, what, split):
    cp = frames(tmp + '/' + name + '.pcap')
    good, times, lag = 0, [], []
    for (c, pt), f in zip(cp, src):
        r = split(c, f)
        if r is not None:
            good += 1; times.append(r); lag.append(pt - r)
    tap(good == len(src) == len(cp), f'{name}: {what}: {good} of {len(cp)} copies ({len(src)} frames)')
    mono = all(b >= a for a, b in zip(times, times[1:]))
    tap(bool(times) and mono, f'{name}: times never go back (one worker)')
    inside = times and t0 <= min(times) and max(times) <= t1
    tap(bool(inside), f'{name}: times inside the replay\'s wall clock [{t0}, {t1}] '
        f'({(min(times) - t0) / 1e6 if times else 0:.3f} ms after its start .. {(t1 - max(times)) / 1e6 if times else 0:.3f} ms before its end)')
    # net_pcap stamps each copy when it writes it, from its own TSC conversion (DPDK's nominal
    # rate, up to 0.25 % off since the port started: milliseconds): close, not exact
    tap(bool(lag) and -5 * 10**7 < min(lag) and max(lag) < 5 * 10**7,
        f'{name}: net_pcap\'s record time - our timestamp within 50 ms ({min(lag) / 1e3 if lag else 0:.1f} .. {max(lag) / 1e3 if lag else 0:.1f} us)')
def ins(pre_len, cut=None):  # copy = outer[pre_len] + MACs + AVSP + rest of the frame (cut)
    def f(c, fr):
        fr = fr[:cut] if cut else fr
        t = avsp(c[pre_len + 12:pre_len + 26])
        return t if t is not None and c[pre_len:pre_len + 12] == fr[:12] and c[pre_len + 26:] == fr[12:] else None
    return f
def trailer(pre_len, dev, port):
    def f(c, fr):
        t = mm(c[-16:])
        return t[0] if t and t[1:] == (0, dev, port) and c[pre_len:-16] == fr else None
    return f
check('ta', 'frame with the 14 B AVSP header after its source MAC', ins(0))
check('tc', 'MTU 1500: 1514 B frames cut to 1500 B, AVSP header inserted (1514 B)',
      lambda c, f: ins(0, 1500 if len(f) > 1500 else None)(c, f) if len(c) <= 1514 else None)
check('tm', 'frame + Metamako trailer (device 4660, port 7)', trailer(0, 4660, 7))
check('tms', 'shared frame + Metamako trailer (device 0, port 1: p0\'s index)', trailer(0, 0, 1))
check('te', 'ERSPAN II (50 B) + frame with the AVSP header', ins(50))
check('tv', 'VXLAN over IPv6 (70 B) + frame + Metamako trailer (device 9, port 1)', trailer(70, 9, 1))
def rspan(c, f):
    t = avsp(c[16:30])
    return t if t is not None and c[:12] == f[:12] and c[12:16] == bytes.fromhex('8100002a') and c[30:] == f[12:] else None
check('tr', 'RSPAN tag outermost, then the AVSP header', rspan)
plain = [c for c, _ in frames(tmp + '/tp.pcap')]
tap(plain == src, f'tp: the session without timestamp copies the frames unchanged ({len(plain)})')
sys.exit(1 if fail else 0)
PY

# tshark as the independent decoder
tf() { # tf FILE [tshark args...] -- fields: the distinct lines of these fields
	local f=$1; shift
	tshark -r "$TMP/$f.pcap" "$@" 2>/dev/null | sort | uniq -c | awk '{$1 = $1; print}' | tr '\n' ';'
}
eq "ta: tshark: AVSP version 0x0110 (64-bit UTC), then IPv4/UDP 10.0.0.1 -> 10.0.0.2, all 100" \
	"$(tf ta -T fields -e avsp.ver -e ip.src -e ip.dst -e udp.srcport)" "100 0x0110 10.0.0.1 10.0.0.2 40000;"
# our times against tshark's reading of the same bytes
ours=$(tshark -r "$TMP/ta.pcap" -T fields -e avsp.64sec -e avsp.64ns 2>/dev/null | awk '{printf "%d%09d\n", $1, $2}' | head -3 | tr '\n' ' ')
echo "# ta: first AVSP times as tshark reads them (ns): $ours"
check "ta: tshark's AVSP seconds are this year's (within a day of the replay)" \
	bash -c "tshark -r '$TMP/ta.pcap' -T fields -e avsp.64sec 2>/dev/null | awk -v t=$((t0 / 1000000000)) '\$1 < t - 86400 || \$1 > t + 86400 {b++} END {exit b > 0 || NR != 100}'"
eq "te: tshark: ERSPAN II session 605, inner AVSP 0x0110, inner IPv4" \
	"$(tf te -T fields -e erspan.spanid -e avsp.ver -e ip.src)" "100 605 0x0110 192.0.2.1,10.0.0.1;"
eq "tr: tshark: VLAN 42, AVSP 0x0110, IPv4" "$(tf tr -T fields -e vlan.id -e avsp.ver -e ip.src)" "100 42 0x0110 10.0.0.1;"
eq "tc: tshark: frame lengths with the AVSP header in an MTU of 1500 (74, 214, 614, 1514 cut)" \
	"$(tf tc -T fields -e frame.len -e avsp.ver)" "25 1514 0x0110;25 214 0x0110;25 614 0x0110;25 74 0x0110;"
MM=(--enable-heuristic metamako_eth -T fields -e metamako.srcdevice -e metamako.srcport -e metamako.flags)
eq "tm: tshark (heuristic metamako_eth): trailer device 4660, port 7, flags 0, all 100" "$(tf tm "${MM[@]}")" "100 4660 7 0x00;"
eq "tms: tshark: trailer of the shared copies, device 0, port 1" "$(tf tms "${MM[@]}")" "100 0 1 0x00;"
# udp.checksum.status: outer UDP 1 (good: over the frame and the trailer), inner 3 (the frame's 0: none)
eq "tv: tshark: VXLAN over IPv6, inner trailer device 9, port 1; outer UDP checksum good" \
	"$(tf tv -o udp.check_checksum:TRUE "${MM[@]}" -e udp.checksum.status)" "100 9 1 0x00 1,3;"
eq "tm: without the heuristic tshark sees no trailer (the check above is the heuristic's)" \
	"$(tf tm -T fields -e metamako.srcdevice)" "100;"
# tshark's difference of the trailer's time to the capture's (net_pcap's) time: under 50 ms (net_pcap's clock: above)
check "tm: tshark's metamako.tdiff (trailer - capture time) within 50 ms for all 100" \
	bash -c "tshark -r '$TMP/tm.pcap' --enable-heuristic metamako_eth -T fields -e metamako.tdiff 2>/dev/null |
		awk '{d = \$1 < 0 ? -\$1 : \$1} d < 0.05 {n++} END {print \"# tdiff samples\", NR; exit n != 100}'"

# counters of the replay's session table
eq "ar: timestamped 100, copied + shared 100" "$(mctr "$L" ar timestamped),$(( $(mctr "$L" ar copied) + $(mctr "$L" ar shared) ))" "100,100"
eq "mms: shared 100 (the trailer in an mbuf of its own)" "$(mctr "$L" mms shared),$(mctr "$L" mms timestamped)" "100,100"
eq "arcut: tx_oversize 25, truncated 25 (the 1514 B frames)" "$(mctr "$L" arcut tx_oversize),$(mctr "$L" arcut truncated)" "25,25"
eq "plain: timestamped 0" "$(mctr "$L" plain timestamped)" "0"

# a bad timestamp refused at start, naming the field
sed 's/"device_id": 4660/"device_id": 65536/' "$TMP/ts.json" >"$TMP/bad.json"
out=$("$BUILD/primary/spanbox-primary" -c "$TMP/bad.json" --check 2>&1)
check "config: device_id 65536 refused naming mirrors[2].timestamp.device_id" \
	grep -q 'mirrors\[2\]\.timestamp\.device_id: 65536 out of range 0..65535' <<<"$out"

# REST: a live instance (net_null ports without RX: no traffic)
API=http://127.0.0.1:18910/api/v1
cat >"$TMP/live.json" <<JSON
{
  "eal": {"file_prefix": "sbxtol$$", "socket_mem_mb": 256, "primary_lcore": 36, "mgmt_lcore": 37},
  "ports": [{"name": "a", "devargs": "net_null0,no-rx=1"}, {"name": "b", "devargs": "net_null1,no-rx=1"}],
  "workers": {"count": 1, "lcores": [38]},
  "mgmt": {"port": 18910, "database": "$TMP/live.db"},
  "mirrors": [{"id": 1, "sources": [{"port": "a"}], "destination": {"port": "b"}}]
}
JSON
if inst_start_both live "$TMP/live.json" "$API"; then
	TOKEN=$(inst_token "$TMP/live.json")
	req() { # req METHOD PATH [BODY]: the HTTP status; the body in $TMP/body
		curl -sS --max-time 30 -o "$TMP/body" -w '%{http_code}' -X "$1" -H "Authorization: Bearer $TOKEN" \
			-H 'Content-Type: application/json' ${3:+--data-binary "$3"} "$API$2"
	}
	before=$(curl -sS "$API/mirrors" | jq -c '[.[] | {id, timestamp}]')
	code=$(req POST /mirrors '{"id": 2, "sources": [{"port": "a"}], "destination": {"port": "b"}, "timestamp": {"format": "arista48"}}')
	eq "REST: POST with format arista48: 422 naming timestamp.format" "$code $(jq -r .error.field "$TMP/body")" "422 timestamp.format"
	code=$(req PUT /mirrors/1 '{"sources": [{"port": "a"}], "destination": {"port": "b"}, "timestamp": {"format": "arista64", "port": 3}}')
	eq "REST: PUT with port for arista64: 422 naming timestamp.port" "$code $(jq -r .error.field "$TMP/body")" "422 timestamp.port"
	eq "REST: nothing changed by the refusals" "$(curl -sS "$API/mirrors" | jq -c '[.[] | {id, timestamp}]')" "$before"
	code=$(req PUT /mirrors/1 '{"sources": [{"port": "a"}], "destination": {"port": "b"}, "timestamp": {"format": "metamako", "device_id": 77}}')
	eq "REST: PUT with a metamako timestamp: 200" "$code" "200"
	check "REST: /status shows it: {format metamako, device_id 77, port source}" bash -c "for i in \$(seq 50); do
		curl -sS $API/status | jq -e '.mirrors[0].timestamp == {\"format\": \"metamako\", \"device_id\": 77, \"port\": \"source\"}' >/dev/null && exit 0; sleep 0.1; done; exit 1"
	eq "REST: GET /mirrors/1 has the timestamp as given" "$(curl -sS "$API/mirrors/1" | jq -c .timestamp)" '{"format":"metamako","device_id":77}'
	check "REST: /metrics has spanbox_mirror_timestamped_packets_total" \
		bash -c "curl -sS ${API%/api/v1}/metrics | grep -q '^spanbox_mirror_timestamped_packets_total{'"
fi
inst_cleanup
