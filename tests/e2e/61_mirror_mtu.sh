#!/usr/bin/env bash
# Copies fit their destination's MTU (docs/MIRRORING.md "Copies and the destination's MTU"): a
# replay of 100, 1464 and 1514 B frames through sessions to tool ports of MTU 1400 and 1500, the
# copies decoded by tshark (independent decoder): frame lengths, the ERSPAN T bit, the inner frames'
# first bytes; the session counters tx_oversize and truncated of the replay's table.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
MC="$ROOT/tests/lib/mirror_check.py"
trap 'rm -rf "$TMP"' EXIT
PREFIX=sbxmtutest$$
ENC='"src_ip": "192.0.2.1", "dst_ip": "198.51.100.7", "dst_mac": "02:00:5e:10:00:01"'

# three frames of each length: 100 B fits everywhere; 1464 B fits ERSPAN II at MTU 1500 exactly
python3 "$MC" mkpcap "$TMP/in.pcap" 100 1464 1514 100 1464 1514 100 1464 1514
port() { # port NAME N MTU: a pcap port writing $TMP/NAME.pcap
	echo "{\"name\": \"$1\", \"devargs\": \"net_pcap$2,tx_pcap=$TMP/$1.pcap\", \"mtu\": $3}"
}
cat >"$TMP/mtu.json" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 101, "mgmt_lcore": 102},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$TMP/in.pcap", "mtu": 1500},
    $(port p1 1 1500), $(port t14 2 1400), $(port t14d 3 1400), $(port t15 4 1500), $(port v14 5 1400),
    $(port s15 6 1500)
  ],
  "workers": {"count": 1, "lcores": [103]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mirrors": [
    {"id": 501, "name": "e2cut", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "t14"},
     "encap": {"type": "erspan2", $ENC}},
    {"id": 502, "name": "e3drop", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "t14d"},
     "oversize": "drop", "encap": {"type": "erspan3", $ENC}},
    {"id": 503, "name": "e2fit", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "t15"},
     "encap": {"type": "erspan2", $ENC}, "copy": {"strategy": "copy"}},
    {"id": 504, "name": "vx", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "v14"},
     "encap": {"type": "vxlan", $ENC}},
    {"id": 505, "name": "rs", "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "s15"},
     "encap": {"type": "rspan", "vlan": 42}}
  ]
}
JSON
replay mtu
L="$TMP/mtu.log"

# fields FILE FIELD...: tshark's values, one line per frame, fields joined by ","
fields() {
	local f=$1 a=() x
	shift
	for x in "$@"; do a+=(-e "$x"); done
	tshark -r "$TMP/$f.pcap" -T fields -E separator=, "${a[@]}" 2>/dev/null | tr '\n' ' ' | sed 's/ $//'
}
eq() { if [ "$2" = "$3" ]; then ok "$1 ($2)"; else not_ok "$1 (got '$2', expected '$3')"; fi; }

# ERSPAN II at MTU 1400: at most 1414 B; the 1464 and 1514 B frames cut to 1364 B, T bit set
eq "ERSPAN II, MTU 1400: copy lengths and T bit (tshark frame.len,erspan.truncated)" \
	"$(fields t14 frame.len erspan.truncated)" \
	"150,0 1414,1 1414,1 150,0 1414,1 1414,1 150,0 1414,1 1414,1"
eq "ERSPAN II, MTU 1400: outer IPv4 total length of the cut copies is the MTU (ip.len)" \
	"$(fields t14 ip.len | tr ' ' '\n' | sort -u | tr '\n' ' ')" "136 1400 "
eq "ERSPAN II, MTU 1400: tx_oversize 6, truncated 6, mirrored 9" \
	"$(mctr "$L" e2cut tx_oversize),$(mctr "$L" e2cut truncated),$(mctr "$L" e2cut mirrored)" "6,6,9"
# the inner frames: their first 1364 B, byte for byte (the frames' byte pattern)
python3 - "$TMP/in.pcap" "$TMP/t14.pcap" <<'PY' >"$TMP/inner.out" 2>&1
import struct, sys
def frames(p):
    d = open(p, 'rb').read(); o = 24; out = []
    while o + 16 <= len(d):
        n = struct.unpack_from('<I', d, o + 8)[0]; out.append(d[o + 16:o + 16 + n]); o += 16 + n
    return out
src, cp = frames(sys.argv[1]), frames(sys.argv[2])
good = sum(1 for a, b in zip(src, cp) if b[50:] == a[:len(b) - 50])
print(good, len(cp))
sys.exit(0 if good == len(src) == len(cp) else 1)
PY
check "ERSPAN II, MTU 1400: each copy carries its frame's first bytes ($(cat "$TMP/inner.out"))" \
	[ "$(cat "$TMP/inner.out")" = "9 9" ]

# ERSPAN III (54 B header) at MTU 1400 with oversize drop: only the 100 B frames' copies
eq "ERSPAN III, MTU 1400, oversize drop: only the 100 B frames (frame.len,erspan.truncated)" \
	"$(fields t14d frame.len erspan.truncated)" "154,0 154,0 154,0"
eq "ERSPAN III, oversize drop: tx_oversize 6, truncated 0, mirrored 3" \
	"$(mctr "$L" e3drop tx_oversize),$(mctr "$L" e3drop truncated),$(mctr "$L" e3drop mirrored)" "6,0,3"

# ERSPAN II at MTU 1500, strategy copy: 1464 B fits exactly (1514 B), 1514 B is cut
eq "ERSPAN II, MTU 1500, copy: lengths and T bit" "$(fields t15 frame.len erspan.truncated)" \
	"150,0 1514,0 1514,1 150,0 1514,0 1514,1 150,0 1514,0 1514,1"

# VXLAN at MTU 1400: 1414 B at most (no T bit: shorter, counted)
eq "VXLAN, MTU 1400: copy lengths (frame.len, inner eth length)" "$(fields v14 frame.len)" \
	"150 1414 1414 150 1414 1414 150 1414 1414"
eq "VXLAN: tx_oversize 6" "$(mctr "$L" vx tx_oversize)" "6"

# RSPAN at MTU 1500: the tag is not part of the MTU: 1514 B frames go whole (1518 B with the tag)
eq "RSPAN, MTU 1500: copies 4 B longer, none cut (frame.len,vlan.id)" "$(fields s15 frame.len vlan.id)" \
	"104,42 1468,42 1518,42 104,42 1468,42 1518,42 104,42 1468,42 1518,42"
eq "RSPAN: tx_oversize 0" "$(mctr "$L" rs tx_oversize)" "0"

# a bad value is refused, naming the field
sed 's/"oversize": "drop"/"oversize": "shrink"/' "$TMP/mtu.json" >"$TMP/bad.json"
out=$("$BUILD/primary/spanbox-primary" -c "$TMP/bad.json" --check 2>&1)
refused() { grep -q 'mirrors\[1\]\.oversize: "shrink" is not one of "truncate", "drop"' <<<"$out"; }
check "oversize \"shrink\" refused, naming the field: $(grep -o 'mirrors\[1\]\.oversize.*' <<<"$out" | head -1)" refused
