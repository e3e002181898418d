#!/usr/bin/env bash
# Capture test 2 (issue 14, docs/CAPTURE.md "Recording through the API"): a ring of 3 files of
# 1 MiB over 10 MiB of traffic (a pcap input of 11000 frames of 1000 B at 20000 frames/s,
# stop.bytes 10 MiB): the capture ends on stop.bytes, the last 3 files exist (the older ones are
# deleted, on disk too), each is readable (tshark, capinfos, every block well formed), each full
# one within a frame of 1 MiB and none over 1 MiB plus its statistics blocks.
# Own instance: file prefix rc76, lcores 79 (primary), 84 (worker), 85 (mgmt), API port 18371.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/capture.sh"

PORT=18371 API=http://127.0.0.1:18371/api/v1
CFG="$TMP/rc76.json" PAUSE="$TMP/pause"
TOKEN=rc76-token-0123456789abcdef
AUTH="Authorization: Bearer $TOKEN"
MIB=1048576
cleanup() { inst_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT

python3 - "$TMP/in.pcap" <<'PY'
import struct, sys
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(11000):
        pay = struct.pack('!Q', i) * 120
        udp = struct.pack('!HHHH', 1000, 2000, 8 + len(pay), 0) + pay
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), i & 0xffff, 0, 64, 17, 0,
                         bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])) + udp
        fr = (bytes([2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 8, 0]) + ip)[:1000]
        f.write(struct.pack('<IIII', 1 + i // 10000, (i % 10000) * 100, len(fr), len(fr)) + fr)
PY
cap_config rc76 "79 84 85" 16 "[{\"name\": \"in0\", \"devargs\": \"net_pcap0,rx_pcap=$TMP/in.pcap,pps=20000\"},
                              {\"name\": \"null1\", \"devargs\": \"net_null1,no-rx=1\"}]"
cap_start rc76 "$PAUSE" || exit 0

code=$(cap_post "{\"sources\": [{\"port\": \"in0\", \"direction\": \"rx\"}], \"files\": {\"count\": 3, \"mb\": 1},
                  \"stop\": {\"bytes\": $((10 * MIB))}}")
ID=$(jq -r .id "$TMP/post.json")
check "POST /captures (ring of 3 x 1 MiB, stop.bytes 10 MiB): 201 ($code, id $ID)" [ "$code" = 201 ] ||
	{ sed 's/^/# /' "$TMP/post.json"; exit 0; }
rm -f "$PAUSE"
cap_wait_ended "$ID" 600
cap_get "/captures/$ID" >"$TMP/c.json"
check "the capture ended on stop.bytes ($(jq -r .state "$TMP/c.json"))" [ "$(jq -r .state "$TMP/c.json")" = "ended: stop.bytes" ]
bytes=$(jq -r .counters.bytes "$TMP/c.json")
check "it wrote between 10 MiB - 2 frames and 10 MiB ($bytes B), dropped nothing ($(jq -r .counters.dropped "$TMP/c.json"))" \
	[ "$bytes" -le $((10 * MIB)) -a "$bytes" -gt $((10 * MIB - 2100)) -a "$(jq -r .counters.dropped "$TMP/c.json")" = 0 ]
ns=$(jq -r '[.downloads[].n] | map(tostring) | join(" ")' "$TMP/c.json")
set -- $ns
check "it offers 3 files, consecutive, the newest ones ($ns)" [ $# = 3 ] && [ "$2" = $(($1 + 1)) -a "$3" = $(($1 + 2)) -a "$1" -ge 8 ]
on_disk=$(cd "$TMP/captures/$ID" && ls *.pcapng | sed 's/\.pcapng$//' | sort -n | tr '\n' ' ')
check "only those 3 are on disk ($on_disk)" [ "$on_disk" = "$ns " ]
last=$3
for n in $ns; do
	code=$(cap_download "$ID" "$n" "$TMP/$n.pcapng")
	size=$(stat -c %s "$TMP/$n.pcapng")
	pcapng_json "$TMP/$n.pcapng" >"$TMP/$n.json"
	frames=$(jq '.epb | length' "$TMP/$n.json")
	check "file $n: downloaded (200: $code), every block well formed ($(jq -c .errors "$TMP/$n.json")), $frames frames" \
		[ "$code" = 200 -a "$(jq '.errors | length' "$TMP/$n.json")" = 0 -a "$frames" -gt 0 ]
	if [ "$n" != "$last" ]; then
		check "file $n: full, within a frame of 1 MiB ($size B)" [ "$size" -gt $((MIB - 1100)) -a "$size" -le $((MIB + 256)) ]
	else
		check "file $n (the last): at most 1 MiB ($size B)" [ "$size" -le $((MIB + 256)) ]
	fi
	tshark -r "$TMP/$n.pcapng" 2>&1 >/dev/null | grep -v 'Running as user "root"' >"$TMP/$n.tshark"
	rc=${PIPESTATUS[0]}
	capinfos "$TMP/$n.pcapng" >/dev/null 2>"$TMP/$n.capinfos"
	rc2=$?
	check "file $n: tshark and capinfos read it without a warning ($(cat "$TMP/$n.tshark" "$TMP/$n.capinfos" | head -c 200))" \
		[ "$rc" = 0 -a "$rc2" = 0 -a ! -s "$TMP/$n.tshark" -a ! -s "$TMP/$n.capinfos" ]
done
