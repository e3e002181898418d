#!/usr/bin/env bash
# Tunnel termination against an encapsulator nobody here wrote (issue #12, test 3): the Linux
# kernel's VXLAN device. Hosts A and B (network namespaces sbxvx-a, sbxvx-b) talk through a kernel
# VXLAN tunnel (VNI 5001, UDP 4789) over a veth underlay; tc mirred on A's underlay interface sends a
# copy of every underlay frame, both directions, to spanbox's tap p0 (a SPAN of the underlay, as a
# switch would deliver it). spanbox decapsulates on p0 (an ingress rule set at run time through
# PUT /api/v1/ports/p0/ingress, no restart) and forwards to the tool port p1, a tap in namespace
# sbxvx-t where tcpdump records what a tool would see (iperf3 runs UDP: a TCP run leaves GSO
# super-frames on the veth that tcpdump sees whole and the tap receives segmented):
#  - before the rule: VXLAN frames reach the tool as they are;
#  - with the rule: the tool sees A's and B's ping and iperf3 frames as plain Ethernet frames, no
#    VXLAN left, and they are exactly the inner frames of the VXLAN frames tcpdump saw on A's
#    underlay (byte for byte, as multisets); decap_packets = those frames; /status shows both
#    senders (10.99.0.1 and 10.99.0.2, VNI 5001);
#  - DELETE /api/v1/ports/p0/ingress: VXLAN frames again.
# Private resources: prefix sbxvx, lcores 60-63, API port 18260, namespaces sbxvx-{a,b,t}.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"

PFX=sbxvx PORT=18260 NSA=sbxvx-a NSB=sbxvx-b NST=sbxvx-t
API=http://127.0.0.1:$PORT/api/v1
CFG="$TMP/vx.json"
TOKEN="vx-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
AUTH="Authorization: Bearer $TOKEN"
PIDS=()

cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	inst_cleanup
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	ip netns del "$NST" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
get() { curl -fsS --max-time 5 "$API$1"; }
put_ingress() { curl -sS --max-time 10 -o "$TMP/put.json" -w '%{http_code}' -H "$AUTH" -X "$1" \
	-H 'Content-Type: application/json' ${2:+--data-binary "$2"} "$API/ports/p0/ingress"; }

for ns in "$NSA" "$NSB" "$NST"; do
	ip netns del "$ns" 2>/dev/null
	ip netns add "$ns" && ip -n "$ns" link set lo up
	# no IPv6 chatter (neighbour discovery, MLD) over the tunnel or the taps: only the test's frames
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
ip link add sbxvx-va netns "$NSA" type veth peer name sbxvx-vb netns "$NSB"
ip -n "$NSA" addr add 10.99.0.1/24 dev sbxvx-va && ip -n "$NSA" link set sbxvx-va up
ip -n "$NSB" addr add 10.99.0.2/24 dev sbxvx-vb && ip -n "$NSB" link set sbxvx-vb up
ip -n "$NSA" link add vx0 type vxlan id 5001 remote 10.99.0.2 local 10.99.0.1 dstport 4789 dev sbxvx-va
ip -n "$NSB" link add vx0 type vxlan id 5001 remote 10.99.0.1 local 10.99.0.2 dstport 4789 dev sbxvx-vb
ip -n "$NSA" addr add 192.168.77.1/24 dev vx0 && ip -n "$NSA" link set vx0 up
ip -n "$NSB" addr add 192.168.77.2/24 dev vx0 && ip -n "$NSB" link set vx0 up
check "the kernel VXLAN tunnel works: A pings B over VNI 5001" \
	ip netns exec "$NSA" ping -c 2 -W 2 -q 192.168.77.2 >/dev/null || exit 0

cat >"$CFG" <<JSON
{
  "eal": {"file_prefix": "$PFX", "socket_mem_mb": 256, "primary_lcore": 60, "mgmt_lcore": 61},
  "ports": [ {"name": "p0", "devargs": "net_tap0,iface=sbxvx-p0"},
             {"name": "p1", "devargs": "net_tap1,iface=sbxvx-t"} ],
  "workers": {"count": 1, "lcores": [62]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mgmt": {"port": $PORT, "database": "$TMP/vx.db", "token": "$TOKEN"}
}
JSON
inst_start_primary vx "$CFG"
check "primary ready" [ -f "$TMP/vx.ready" ] || { tail -20 "$TMP/vx-primary.log"; exit 0; }
inst_start_mgmt vx "$CFG" "$API"
check "mgmt up" [ $? -eq 0 ] || exit 0
# p0's tap in A (the mirror target), p1's in the tool namespace; no IPv6 chatter from either
ip link set sbxvx-p0 netns "$NSA" && ip link set sbxvx-t netns "$NST"
ip netns exec "$NSA" sysctl -qw net.ipv6.conf.sbxvx-p0.disable_ipv6=1
ip netns exec "$NST" sysctl -qw net.ipv6.conf.sbxvx-t.disable_ipv6=1
ip -n "$NSA" link set sbxvx-p0 up && ip -n "$NST" link set sbxvx-t up
ip netns exec "$NSA" tc qdisc add dev sbxvx-va clsact
# u32 "match everything" (this kernel has no matchall or flower classifier)
for dir in egress ingress; do
	ip netns exec "$NSA" tc filter add dev sbxvx-va "$dir" protocol all u32 match u32 0 0 \
		action mirred egress mirror dev sbxvx-p0
done
check "tc mirred copies A's underlay (both directions) to spanbox's tap p0" \
	bash -c "ip netns exec $NSA tc filter show dev sbxvx-va ingress | grep -q mirred &&
		ip netns exec $NSA tc filter show dev sbxvx-va egress | grep -q mirred" || exit 0

# run_traffic TAG: tcpdump on A's underlay and on the tool port, 20 pings and a 2 s iperf3 run
# A -> B over the tunnel, captures stopped after the appliance drained (bounded: 60 s)
run_traffic() {
	local tag=$1 p1 p2 sp
	ip netns exec "$NSA" timeout 60 tcpdump -i sbxvx-va -B 8192 -U -s 0 -w "$TMP/$tag-under.pcap" 'udp port 4789' 2>/dev/null &
	p1=$!
	ip netns exec "$NST" timeout 60 tcpdump -i sbxvx-t -B 8192 -U -s 0 -w "$TMP/$tag-tool.pcap" 2>/dev/null &
	p2=$!
	PIDS+=("$p1" "$p2")
	sleep 1.5
	get /status >"$TMP/$tag-s0.json" # the counters once both captures run
	ip netns exec "$NSB" timeout 20 iperf3 -s -1 -B 192.168.77.2 >/dev/null 2>&1 &
	sp=$!
	PIDS+=("$sp")
	ip netns exec "$NSA" ping -c 20 -i 0.05 -W 2 -q 192.168.77.2 >"$TMP/$tag-ping.txt" 2>&1
	sleep 0.3
	# UDP (-u), 1200 B datagrams: no GSO super-frame on the underlay (tcpdump on the veth would see
	# one 64 KB TCP frame where the tap receives it segmented)
	ip netns exec "$NSA" timeout 15 iperf3 -u -c 192.168.77.2 -t 2 -b 10M -l 1200 >"$TMP/$tag-iperf.txt" 2>&1
	wait "$sp" 2>/dev/null
	sleep 1.5
	get /status >"$TMP/$tag-s1.json" # the counters while both captures still run
	kill -INT "$p1" "$p2" 2>/dev/null
	wait "$p1" "$p2" 2>/dev/null
}
nframes() { capinfos -Mc "$1" 2>/dev/null | awk '/Number of packets/ {print $NF}'; }

# 1. no ingress rule: the tool gets the VXLAN frames themselves
run_traffic before
check "before: ping over the tunnel: 0% loss" grep -q ' 0% packet loss' "$TMP/before-ping.txt"
n=$(tshark -r "$TMP/before-tool.pcap" -Y vxlan 2>/dev/null | wc -l)
check "before: without a rule the tool port sees VXLAN frames ($n)" [ "$n" -gt 20 ]

# 2. PUT the rule at run time
code=$(put_ingress PUT '{"decap": [{"type": "vxlan", "vnis": [5001]}], "non_tunnel": "drop"}')
check "PUT /api/v1/ports/p0/ingress (vxlan, VNI 5001, non_tunnel drop): 200" [ "$code" = 200 ] ||
	{ cat "$TMP/put.json"; tail -n 20 "$TMP/vx-mgmt.log" | sed 's/^/# mgmt: /'; tail -n 20 "$TMP/vx-primary.log" | sed 's/^/# primary: /'; }
check "GET /api/v1/ports/p0/ingress shows the rule" \
	bash -c "curl -fsS $API/ports/p0/ingress | jq -e '.ingress.decap[0].type == \"vxlan\" and .ingress.decap[0].vnis == [5001]' >/dev/null"
run_traffic after
check "after: ping over the tunnel: 0% loss" grep -q ' 0% packet loss' "$TMP/after-ping.txt"
check "after: iperf3 ran" grep -q 'receiver' "$TMP/after-iperf.txt"
under=$(nframes "$TMP/after-under.pcap") tool=$(nframes "$TMP/after-tool.pcap")
echo "# after: $under VXLAN frames on A's underlay, $tool frames on the tool port"
check "after: no VXLAN frame reaches the tool" [ "$(tshark -r "$TMP/after-tool.pcap" -Y 'vxlan || udp.port == 4789' 2>/dev/null | wc -l)" = 0 ]
icmp=$(tshark -r "$TMP/after-tool.pcap" -Y 'icmp && ip.addr == 192.168.77.1 && ip.addr == 192.168.77.2' 2>/dev/null | wc -l)
check "after: the tool sees the 20 echo requests and 20 replies as plain frames ($icmp ICMP)" [ "$icmp" = 40 ]
udp=$(tshark -r "$TMP/after-tool.pcap" -Y 'udp.port == 5201 && ip.addr == 192.168.77.2' 2>/dev/null | wc -l)
check "after: the tool sees the iperf3 run as plain UDP frames ($udp)" [ "$udp" -gt 1000 ]
bad=$(tshark -r "$TMP/after-tool.pcap" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE -o tcp.check_checksum:TRUE \
	-Y 'ip.checksum.status == "Bad" || udp.checksum.status == "Bad" || tcp.checksum.status == "Bad"' 2>/dev/null | wc -l)
check "after: tshark finds no bad IP, UDP or TCP checksum in the tool's frames ($bad bad)" [ "$bad" = 0 ]
check "after: the tool's frames are exactly the inner frames of the underlay's VXLAN frames (byte for byte but the TCP/UDP checksums)" \
	python3 - "$TMP/after-under.pcap" "$TMP/after-tool.pcap" <<'PY'
import struct, sys
def frames(p):
    out = []
    with open(p, 'rb') as f:
        h = f.read(24)
        e = '<' if h[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
        while True:
            r = f.read(16)
            if len(r) < 16:
                return out
            cap = struct.unpack(e + 'IIII', r)[2]
            out.append(f.read(cap))
def l4sum_masked(fr):
    # tcpdump on the veth sees the inner TCP/UDP checksum before the kernel completes it (checksum
    # offload: the pseudo-header sum only); the copy mirred hands the tap has it complete. The
    # checksums are compared apart (tshark validates the tool's), the rest byte for byte.
    d = bytearray(fr)
    if len(d) >= 34 and d[12:14] == b'\x08\x00':
        l4 = 14 + (d[14] & 15) * 4
        off = {6: 16, 17: 6}.get(d[23])
        if off is not None and len(d) >= l4 + off + 2:
            d[l4 + off:l4 + off + 2] = b'\0\0'
    return bytes(d)
under = [l4sum_masked(fr[14 + 20 + 8 + 8:]) for fr in frames(sys.argv[1])]  # outer Ethernet, IPv4, UDP, VXLAN
tool = [l4sum_masked(fr) for fr in frames(sys.argv[2])]
a, b = sorted(under), sorted(tool)
if a != b:
    print('# inner frames of the underlay %d, tool frames %d; first difference:' % (len(a), len(b)))
    for x, y in zip(a, b):
        if x != y:
            print('#  under', x[:40].hex(), '\n#  tool ', y[:40].hex())
            break
    sys.exit(1)
PY
d0=$(jq '.ports[0].workers.decap_packets' "$TMP/after-s0.json")
d1=$(jq '.ports[0].workers.decap_packets' "$TMP/after-s1.json")
cp "$TMP/after-s1.json" "$TMP/s1.json"
check "after: decap_packets grew by the VXLAN frames of the underlay ($((d1 - d0)) = $under)" [ $((d1 - d0)) = "$under" ]
jq -c '.ports[0].ingress' "$TMP/s1.json" | sed 's/^/# ingress: /'
check "after: /status names both senders (10.99.0.1 and 10.99.0.2, vxlan VNI 5001)" \
	jq -e '[.ports[0].ingress.tunnels[] | select(.kind == "vxlan" and .id == 5001) | .source] | sort == ["10.99.0.1", "10.99.0.2"]' "$TMP/s1.json"
check "after: /metrics has both senders (spanbox_ingress_tunnel_packets_total, kind vxlan, id 5001)" \
	bash -c "curl -fsS http://127.0.0.1:$PORT/metrics | grep '^spanbox_ingress_tunnel_packets_total{' | grep 'kind=\"vxlan\"' | grep 'id=\"5001\"' | grep -c 'source=\"10.99.0.[12]\"' | grep -qx 2"
check "after: /metrics has the decap counter of p0" \
	bash -c "curl -fsS http://127.0.0.1:$PORT/metrics | grep -q '^spanbox_worker_decap_packets_total{.*port=\"p0\".*} [1-9]'"

# 3. DELETE: back to forwarding the tunnel frames as they are
code=$(put_ingress DELETE)
check "DELETE /api/v1/ports/p0/ingress: 200" [ "$code" = 200 ]
run_traffic deleted
n=$(tshark -r "$TMP/deleted-tool.pcap" -Y vxlan 2>/dev/null | wc -l)
check "deleted: the tool sees VXLAN frames again ($n)" [ "$n" -gt 20 ]
check "the primary is still the same process" kill -0 "$INST_PRIMARY"

# 4. stored: PUT the rule again, restart the primary on the same file: it starts with the stored
# rule (SQLite config_store, as mirrors), not the file's port without ingress
code=$(put_ingress PUT '{"decap": [{"type": "vxlan", "vnis": [5001, 5002]}]}')
check "PUT the rule again (VNIs 5001, 5002): 200" [ "$code" = 200 ]
stored=$(sqlite3 "$TMP/vx.db" "SELECT json FROM config_store ORDER BY id DESC LIMIT 1")
check "config_store's newest row holds p0's ingress object" \
	jq -e '.ingress.p0.decap[0].vnis == [5001, 5002]' <<<"$stored" >/dev/null
inst_stop_pid "$INST_PRIMARY"
inst_start_primary vx2 "$CFG"
check "primary started again on the same config file" [ -f "$TMP/vx2.ready" ]
check "... it says it runs the ingress changed through the API" grep -q 'ingress stages, tool groups, flows and maps: the ones changed through the API' "$TMP/vx2-primary.log"
stored_ok() { curl -fsS --max-time 2 "$API/ports/p0/ingress" | jq -e '.ingress.decap[0].vnis == [5001, 5002]' >/dev/null; }
check "... GET /api/v1/ports/p0/ingress shows the stored rule (mgmt re-attached)" wait_for 100 stored_ok
check "... /status shows p0's ingress stage" bash -c "curl -fsS $API/status | jq -e '.ports[0].ingress.decap[0].type == \"vxlan\"' >/dev/null"
exit 0
