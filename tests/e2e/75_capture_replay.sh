#!/usr/bin/env bash
# Capture test 1 (issue 14, docs/CAPTURE.md "Recording through the API"): a known capture replayed
# through a pcap input with captures running, recorded into pcapng by the primary's recorder:
#  - capture A (in0 rx + out1 tx): the frames of in0 are exactly the input's, in order, byte for
#    byte, with the inbound flag; those of out1 (the cross-connect's output) the same with the
#    outbound flag; the file names spanbox in its section header, one interface per port by its
#    name, link type Ethernet; its statistics block counts the frames;
#  - capture B (in0 rx, snaplen 64): every frame cut at 64 B with its original length kept;
#  - tshark and capinfos read both files without a warning.
# Traffic waits (SBX_TEST_BRIDGE_PAUSE_FILE) until both captures run. Own instance: file prefix
# rc75, lcores 73 (primary), 74 (worker), 78 (mgmt), API port 18370, database and captures under $TMP.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/capture.sh"

PORT=18370 API=http://127.0.0.1:18370/api/v1
CFG="$TMP/rc75.json" PAUSE="$TMP/pause"
TOKEN=rc75-token-0123456789abcdef
AUTH="Authorization: Bearer $TOKEN"
IN="$CAPTURES/plain_tcpreplay_test.pcap"
cleanup() { inst_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT
[ -r "$IN" ] || { ok "plain_tcpreplay_test.pcap not readable in $CAPTURES # SKIP"; exit 0; }
N=$(tshark -r "$IN" -T fields -e frame.number 2>/dev/null | wc -l)

cap_config rc75 "73 74 78" 64 "[{\"name\": \"in0\", \"devargs\": \"net_pcap0,rx_pcap=$IN,pps=2000\"},
                              {\"name\": \"out1\", \"devargs\": \"net_pcap1,tx_pcap=$TMP/out.pcap\"}]"
cap_start rc75 "$PAUSE" || exit 0

code=$(cap_post "{\"sources\": [{\"port\": \"in0\", \"direction\": \"rx\"}, {\"port\": \"out1\", \"direction\": \"tx\"}],
                  \"stop\": {\"packets\": $((2 * N))}}")
A=$(jq -r .id "$TMP/post.json")
check "POST /captures (in0 rx, out1 tx): 201 with an id ($code, id $A)" [ "$code" = 201 -a "$A" -ge 1 ] ||
	{ sed 's/^/# /' "$TMP/post.json"; exit 0; }
code=$(cap_post "{\"sources\": [{\"port\": \"in0\", \"direction\": \"rx\"}], \"snaplen\": 64, \"stop\": {\"packets\": $N}}")
B=$(jq -r .id "$TMP/post.json")
check "POST /captures (in0 rx, snaplen 64): 201 ($code, id $B)" [ "$code" = 201 -a "$B" != "$A" ]
check "GET /captures/$A: running" [ "$(cap_state "$A")" = running ]
rm -f "$PAUSE"
cap_wait_ended "$A" 600
cap_wait_ended "$B" 100
check "capture $A ended on its stop condition ($(cap_state "$A"))" [ "$(cap_state "$A")" = "ended: stop.packets" ]
check "capture $B ended on its stop condition ($(cap_state "$B"))" [ "$(cap_state "$B")" = "ended: stop.packets" ]
cap_get "/captures/$A" >"$TMP/a.json"
check "capture $A counted $((2 * N)) frames captured, none dropped ($(jq -c .counters "$TMP/a.json"))" \
	[ "$(jq -r '.counters.captured' "$TMP/a.json")/$(jq -r '.counters.dropped' "$TMP/a.json")" = "$((2 * N))/0" ]
check "capture $A offers one file" [ "$(jq -r '.downloads | length' "$TMP/a.json")" = 1 ]
check "download of capture $A's file 1: 200" [ "$(cap_download "$A" 1 "$TMP/a.pcapng")" = 200 ]
check "download of capture $B's file 1: 200" [ "$(cap_download "$B" 1 "$TMP/b.pcapng")" = 200 ]
pcapng_json "$TMP/a.pcapng" >"$TMP/a.parsed" && pcapng_json "$TMP/b.pcapng" >"$TMP/b.parsed"
tshark -r "$IN" -T fields -e frame.len >"$TMP/in.len" 2>/dev/null
python3 - "$IN" "$TMP/a.parsed" "$TMP/b.parsed" <<'PY' >"$TMP/verdict"
import json, struct, sys
raw = open(sys.argv[1], 'rb').read()
le = raw[:4] == b'\xd4\xc3\xb2\xa1'
off, frames = 24, []
while off + 16 <= len(raw):
    _, _, cap, orig = struct.unpack_from('<IIII' if le else '>IIII', raw, off)
    frames.append(raw[off + 16:off + 16 + cap].hex())
    off += 16 + cap
a, b = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
names = [i["name"] for i in a["idb"]]
def chk(desc, cond): print(("ok - " if cond else "not ok - ") + desc)
chk("file A: section header names spanbox (%s)" % a["shb"].get("4"), a["shb"].get("4", "").startswith("spanbox "))
chk("file A: one interface per port by name, Ethernet (%s)" % names,
    names == ["in0", "out1"] and all(i["linktype"] == 1 for i in a["idb"]))
chk("files A and B: every block well formed (%s)" % (a["errors"] + b["errors"]), not a["errors"] and not b["errors"])
inb = [e for e in a["epb"] if e["if"] == 0]
outb = [e for e in a["epb"] if e["if"] == 1]
chk("file A: in0 holds the %d input frames in order, byte for byte (%d)" % (len(frames), len(inb)),
    [e["data"] for e in inb] == frames)
chk("file A: every in0 frame inbound, whole (caplen = origlen)",
    all(e["flags"] is not None and e["flags"] & 3 == 1 and e["caplen"] == e["origlen"] for e in inb))
chk("file A: out1 holds the same frames in order (%d)" % len(outb), [e["data"] for e in outb] == frames)
chk("file A: every out1 frame outbound", all(e["flags"] is not None and e["flags"] & 3 == 2 for e in outb))
recv = {s["if"]: s.get("ifrecv") for s in a["isb"]}
chk("file A: statistics blocks count %d frames on each interface (%s)" % (len(frames), recv),
    recv.get(0) == len(frames) and recv.get(1) == len(frames))
bb = b["epb"]
chk("file B: %d frames, each cut at 64 B with its original length (%d)" % (len(frames), len(bb)),
    len(bb) == len(frames) and all(e["caplen"] == min(64, len(f) // 2) and e["origlen"] == len(f) // 2
                                  and e["data"] == f[:128] for e, f in zip(bb, frames)))
chk("file B: interface snaplen 64", all(i["snaplen"] == 64 for i in b["idb"]))
PY
cat "$TMP/verdict"
for f in a b; do
	tshark -r "$TMP/$f.pcapng" 2>&1 >/dev/null | grep -v 'Running as user "root"' >"$TMP/$f.tshark"
	rc=${PIPESTATUS[0]}
	check "tshark reads file $f without a warning ($(head -c 200 "$TMP/$f.tshark"))" [ "$rc" = 0 -a ! -s "$TMP/$f.tshark" ]
	capinfos "$TMP/$f.pcapng" >"$TMP/$f.capinfos" 2>"$TMP/$f.capinfos.err"
	rc=$?
	check "capinfos reads file $f without a warning ($(head -c 200 "$TMP/$f.capinfos.err"))" [ $rc -eq 0 -a ! -s "$TMP/$f.capinfos.err" ]
done
check "tshark sees the snaplen and the original length (frame 1 of B: cap_len 64)" \
	[ "$(tshark -r "$TMP/b.pcapng" -c 1 -T fields -e frame.cap_len 2>/dev/null)" = "$(( $(head -1 "$TMP/in.len") < 64 ? $(head -1 "$TMP/in.len") : 64 ))" ]
check "tshark sees the direction: in0 frames inbound in file A" \
	[ "$(tshark -r "$TMP/a.pcapng" -Y 'frame.interface_id == 0 && frame.packet_flags_direction == 1' 2>/dev/null | wc -l)" = "$N" ]
