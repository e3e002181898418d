#!/usr/bin/env bash
# VXLAN as a mirror encapsulation (issue 13, test 5), checked by a decapsulator nobody here wrote: the
# Linux kernel's VXLAN devices. spanbox mirrors what its port p0 receives to the tap m0, which sits
# in the namespace vxm-k with 10.98.0.2/24 and fd00:98::2/64 and two kernel VXLAN devices:
#   vx4: VNI 42 (the default: the session id), UDP 4789 (the default), local 10.98.0.2 - session 42
#        from the config file, outer IPv4, copy strategy "copy";
#   vx6: VNI 7777, UDP 8472, local fd00:98::2 - session 43, outer IPv6, copy strategy "share", added
#        at run time through POST /api/v1/mirrors (a VXLAN session with a bad vni is refused: 422).
# The input: 30 hand-built frames (IPv4 UDP/TCP and IPv6 UDP flows both ways, an 802.1Q-tagged frame,
# ARP; 60..1400 B, tests/lib/vxlan_frames.py) sent from namespace vxm-s into p0, 3 ms apart (no GRO
# merges two). tcpdump on vx4 and vx6 must see exactly the input frames, byte for byte and in order
# (the kernel accepted every copy: IPv4 header checksum, and over IPv6 the UDP checksum, which the
# kernel verifies); tshark must decode every outer frame on m0 as VXLAN with the session's VNI; the
# outer headers are checked by hand too (checksums, flags, source ports 49152..65535, one per flow,
# the same in both directions); /status shows each session's encap with vni and udp_port.
# Private resources: EAL prefix vxmir, lcores 20-22, API port 18320, namespaces vxm-s and vxm-k,
# taps vxm-p0, vxm-p1, vxm-m0, database under $TMP.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"

PORT=18320 NSS=vxm-s NSK=vxm-k
API=http://127.0.0.1:$PORT/api/v1
CFG="$TMP/vxm.json"
FR="$ROOT/tests/lib/vxlan_frames.py"
TOKEN="vxm-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
AUTH="Authorization: Bearer $TOKEN"
KMAC=02:00:00:00:98:02
PIDS=()

cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	inst_cleanup
	ip netns del "$NSS" 2>/dev/null
	ip netns del "$NSK" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
get() { curl -fsS --max-time 5 "$API$1"; }
post() { curl -sS --max-time 10 -o "$TMP/post.json" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: application/json' \
	-X POST --data-binary "$1" "$API/mirrors"; }

for t in ip tcpdump tshark jq curl python3; do
	command -v "$t" >/dev/null || { echo "ok - VXLAN mirror test # SKIP $t missing"; exit 0; }
done
for ns in "$NSS" "$NSK"; do
	ip netns del "$ns" 2>/dev/null
	ip netns add "$ns" && ip -n "$ns" link set lo up
done
# no IPv6 chatter (router solicitations, MLD) from the source side: the mirror must see only our frames
ip netns exec "$NSS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
check "the kernel has VXLAN devices (a test device in $NSK)" \
	ip -n "$NSK" link add vxm-probe type vxlan id 1 dstport 4789 nolearning || exit 0
ip -n "$NSK" link del vxm-probe

# refused before anything starts: a VXLAN vni beyond 24 bits, exit 2, the field named
cat >"$TMP/bad.json" <<JSON
{ "ports": [{"name": "p0", "devargs": "net_null0"}, {"name": "m0", "devargs": "net_null1"}],
  "mirrors": [{"id": 1, "sources": [{"port": "p0"}], "destination": {"port": "m0"},
    "encap": {"type": "vxlan", "src_ip": "10.98.0.1", "dst_ip": "10.98.0.2", "dst_mac": "$KMAC", "vni": 16777216}}] }
JSON
out=$("$BUILD/primary/spanbox-primary" -c "$TMP/bad.json" --check 2>&1); rc=$?
check "a config with vni 16777216: exit 2 naming mirrors[0].encap.vni ($out)" \
	cond '[ $rc -eq 2 ] && grep -qF "mirrors[0].encap.vni: 16777216 out of range 0..16777215" <<<"$out"'

cat >"$CFG" <<JSON
{
  "eal": {"file_prefix": "vxmir", "socket_mem_mb": 256, "primary_lcore": 20, "mgmt_lcore": 21},
  "ports": [ {"name": "p0", "devargs": "net_tap0,iface=vxm-p0"},
             {"name": "p1", "devargs": "net_tap1,iface=vxm-p1"},
             {"name": "m0", "devargs": "net_tap2,iface=vxm-m0"} ],
  "workers": {"count": 1, "lcores": [22]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mirrors": [ {"id": 42, "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "m0"},
                "encap": {"type": "vxlan", "src_ip": "10.98.0.1", "dst_ip": "10.98.0.2", "dst_mac": "$KMAC"},
                "copy": {"strategy": "copy"}} ],
  "mgmt": {"port": $PORT, "database": "$TMP/vxm.db", "token": "$TOKEN"}
}
JSON
inst_start_both vxm "$CFG" "$API" || exit 0

# the source taps in vxm-s (no address, no IPv6); the mirror tap in vxm-k: the VTEP's MAC and addresses
ip link set vxm-p0 netns "$NSS" && ip link set vxm-p1 netns "$NSS" && ip link set vxm-m0 netns "$NSK"
for d in vxm-p0 vxm-p1; do
	ip netns exec "$NSS" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1" # moved in: the default did not apply
	ip -n "$NSS" link set "$d" up
done
ip -n "$NSK" link set vxm-m0 address "$KMAC"
ip -n "$NSK" addr add 10.98.0.2/24 dev vxm-m0
ip -n "$NSK" addr add fd00:98::2/64 dev vxm-m0 nodad
ip -n "$NSK" link set vxm-m0 up
ip -n "$NSK" link add vx4 type vxlan id 42 dstport 4789 local 10.98.0.2 nolearning
ip -n "$NSK" link add vx6 type vxlan id 7777 dstport 8472 local fd00:98::2 nolearning
for d in vx4 vx6; do
	ip netns exec "$NSK" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1" # nothing of their own on them
	ip -n "$NSK" link set "$d" up
done
check "$NSK: vx4 (VNI 42, UDP 4789, IPv4) and vx6 (VNI 7777, UDP 8472, IPv6) are up" \
	bash -c "ip -d -n $NSK link show vx4 | grep -q 'vxlan id 42 .*dstport 4789' &&
		ip -d -n $NSK link show vx6 | grep -q 'vxlan id 7777 .*dstport 8472'"

# run-time sessions: a bad vni is refused with the field named, the IPv6 session is added
bad='{"id": 43, "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "m0"},
  "encap": {"type": "vxlan", "src_ip": "fd00:98::1", "dst_ip": "fd00:98::2", "dst_mac": "'$KMAC'", "vni": 16777216}}'
code=$(post "$bad")
check "POST /api/v1/mirrors with a vxlan vni of 16777216: 422 naming encap.vni ($(jq -c . "$TMP/post.json" 2>/dev/null))" \
	cond '[ "$code" = 422 ] && grep -q "encap.vni" "$TMP/post.json"'
code=$(post '{"id": 43, "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "m0"},
  "encap": {"type": "vxlan", "src_ip": "fd00:98::1", "dst_ip": "fd00:98::2", "dst_mac": "'$KMAC'",
            "vni": 7777, "udp_port": 8472}, "copy": {"strategy": "share"}}')
check "POST /api/v1/mirrors: VXLAN session 43 (IPv6 outer, VNI 7777, UDP 8472, share) added ($code)" [ "$code" = 201 ]
both_run() { get /status | jq -e '[.mirrors[] | select(.id == 42 or .id == 43)] | length == 2' >/dev/null; }
check "both sessions run (in /status)" wait_for 100 both_run
get /status >"$TMP/s0.json"
check "/status: session 42 encap vxlan, vni 42 (the session id), udp_port 4789" \
	jq -e '.mirrors[] | select(.id == 42) | .encap == {"type": "vxlan", "vni": 42, "udp_port": 4789}' "$TMP/s0.json"
check "/status: session 43 encap vxlan, vni 7777, udp_port 8472" \
	jq -e '.mirrors[] | select(.id == 43) | .encap.type == "vxlan" and .encap.vni == 7777 and .encap.udp_port == 8472' "$TMP/s0.json"

python3 "$FR" make "$TMP/in.pcap" "$TMP/flows.json"
N=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$TMP/flows.json")
ip netns exec "$NSK" timeout 60 tcpdump -i vxm-m0 -Q in -B 8192 -U -s 0 -w "$TMP/outer.pcap" udp 2>/dev/null &
PIDS+=($!)
ip netns exec "$NSK" timeout 60 tcpdump -i vx4 -Q in -B 8192 -U -s 0 -w "$TMP/in4.pcap" 2>/dev/null &
PIDS+=($!)
ip netns exec "$NSK" timeout 60 tcpdump -i vx6 -Q in -B 8192 -U -s 0 -w "$TMP/in6.pcap" 2>/dev/null &
PIDS+=($!)
sleep 1.5
get /status >"$TMP/s0.json" # the counters before the frames (the taps' own frames before they moved count too)
check "$N frames sent into p0 from $NSS, 3 ms apart" ip netns exec "$NSS" timeout 30 python3 "$FR" send vxm-p0 "$TMP/in.pcap" 3
# counter C of session S grown since s0.json
ctr0() { jq ".mirrors[] | select(.id == $1) | .counters.$2" "$TMP/s0.json"; }
grown() { echo $(($(jq ".mirrors[] | select(.id == $1) | .counters.$2" "$3") - $(ctr0 "$1" "$2"))); }
mirrored() {
	get /status >"$TMP/s1.json" && [ "$(grown 42 mirrored_packets "$TMP/s1.json")" = "$N" ] &&
		[ "$(grown 43 mirrored_packets "$TMP/s1.json")" = "$N" ]
}
wait_for 100 mirrored
sleep 1
get /status >"$TMP/s1.json"
kill -INT "${PIDS[@]}" 2>/dev/null
wait "${PIDS[@]}" 2>/dev/null
PIDS=()
jq -c '.mirrors[] | {id, counters}' "$TMP/s1.json" | sed 's/^/# /'
m42=$(grown 42 mirrored_packets "$TMP/s1.json") m43=$(grown 43 mirrored_packets "$TMP/s1.json")
drops=$(jq '[.mirrors[] | select(.id == 42 or .id == 43) | .counters | .drop_txfull + .drop_nombuf + .drop_malformed] | add' "$TMP/s1.json")
check "both sessions mirrored the $N frames (mirrored_packets +$m42, +$m43), nothing dropped ($drops)" \
	cond '[ "$m42" = "$N" ] && [ "$m43" = "$N" ] && [ "$drops" = 0 ]'
c42=$(grown 42 copied "$TMP/s1.json") s43=$(grown 43 shared "$TMP/s1.json")
check "session 42 copied every frame (+$c42), session 43 shared every frame (+$s43)" cond '[ "$c42" = "$N" ] && [ "$s43" = "$N" ]'

# tshark: every outer frame is VXLAN with the session's VNI (8472 is not tshark's VXLAN port: told so)
TS=(tshark -r "$TMP/outer.pcap" -d udp.port==8472,vxlan -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE)
"${TS[@]}" -T fields -e ip.version -e ipv6.version -e udp.dstport -e vxlan.vni -e vxlan.flags -e udp.checksum.status \
	-e ip.checksum.status 2>/dev/null | awk -F'\t' '{print $1 $2, $3, $4, $5, $6, $7}' | sort | uniq -c | head -n 8 | sed 's/^/# tshark: /'
# (#1: the outer layer; the inner frames have IP and UDP headers of their own)
VX='vxlan.flag_i == 1 && vxlan.flag_g == 0 && vxlan.flags_reserved == 0'
n4=$("${TS[@]}" -Y "ip#1 && udp.dstport#1 == 4789 && vxlan.vni == 42 && $VX && ip.checksum.status#1 == \"Good\" && udp.checksum#1 == 0" 2>/dev/null | wc -l)
n6=$("${TS[@]}" -Y "ipv6#1 && udp.dstport#1 == 8472 && vxlan.vni == 7777 && $VX && udp.checksum.status#1 == \"Good\"" 2>/dev/null | wc -l)
all=$("${TS[@]}" 2>/dev/null | wc -l) vx=$("${TS[@]}" -Y vxlan 2>/dev/null | wc -l)
check "tshark decodes all $all outer frames as VXLAN ($vx): $n4 over IPv4 (port 4789, VNI 42, flags I, IP checksum good, UDP checksum 0), $n6 over IPv6 (port 8472, VNI 7777, UDP checksum good); $N each expected" \
	cond '[ "$all" = $((2 * N)) ] && [ "$vx" = "$all" ] && [ "$n4" = "$N" ] && [ "$n6" = "$N" ]'
python3 "$FR" check "$TMP/in.pcap" "$TMP/outer.pcap" "$TMP/in4.pcap" "$TMP/in6.pcap" "$TMP/flows.json" 4789 42 8472 7777
check "the primary is still the same process" kill -0 "$INST_PRIMARY"
exit 0
