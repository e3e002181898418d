#!/usr/bin/env bash
# Maps in the running product (issue #27, docs/MAPS.md): the model's random rule set
# (tests/lib/map_model.py gen: 1,024 rules in 4 maps, overlapping prefixes, ranges, VLANs, IPv4
# and IPv6, fragments) and its 200,000 frames (the issue's model test size, through the worker itself: about 60 s) replayed through the real appliance (spanbox-primary
# --replay: p0 reads the frames from a pcap file, the worker forwards them to p1 and classifies
# them with the rte_acl contexts the primary built in shared memory). Each map's tool port (a
# net_pcap tx file) must hold exactly the frames the model says its rules pass, in order and byte
# for byte (0 differ); a map with the rules of map 0 and the filter "ip" only those of them that
# are untagged IPv4 (the filter runs on the frames its rules passed); the collector exactly the
# frames no map passed; the forwarded output is the input unchanged. The config (its rules) is
# larger than the 64 KiB of the memzone's document: the rules are kept apart. Then bad configs
# are refused at start naming the field.
# Live (net_null ports, mgmt on 19030): GET /api/v1/maps gives the maps with their rule counts and
# counters; the running document keeps a count and digest, not the rules; a live mirror change is
# applied with the maps running; a map's rules changed through PUT /config are applied (live:
# tests/e2e/26c_maps_live.sh tests the maps' own routes).
# Own resources: file prefix sbxmw, lcores 94 (primary), 95 (mgmt), 96 (worker), 93 (standby),
# API port 19030.
set -uo pipefail
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
source "$ROOT/tests/lib/instance.sh"
MODEL="$ROOT/tests/lib/map_model.py"
SEED=${MAP_SEED:-$(date +%s)} RULES=${MAP_RULES:-1024} FRAMES=${MAP_FRAMES:-200000}
trap 'inst_cleanup; [ -n "${SBX_KEEP:-}" ] || rm -rf "$TMP"' EXIT

echo "# seed $SEED, $RULES rules in 4 maps, $FRAMES frames"
# twice the rules over 8 maps, of which the appliance gets the first 4, each behind a first rule
# that drops DSCP 46 (EF): those frames, and the ones built for the rules of the other 4 maps that
# none of the 4 passes, are the collector's
check "the generator writes $((2 * RULES)) rules in 8 maps and $FRAMES frames; the first 4 maps ($RULES rules) kept" \
	cond 'python3 "$MODEL" gen "$SEED" $((2 * RULES)) 8 "$FRAMES" "$TMP" >/dev/null &&
	      python3 -c "import json, sys; j = json.load(open(sys.argv[1])); j[\"maps\"] = [{\"rules\": [{\"action\": \"drop\", \"dscp\": 46}] + m[\"rules\"]} for m in j[\"maps\"][:4]]; json.dump(j, open(sys.argv[1], \"w\"))" "$TMP/rules.json"'
# mkcfg OUT [python statement editing cfg]: the appliance config of the generated maps
mkcfg() {
	python3 - "$TMP" "$1" "${2:-}" <<'PY'
import json, sys
d, out, edit = sys.argv[1], sys.argv[2], sys.argv[3]
j = json.load(open(d + "/rules.json"))
maps = [{"id": 40 + i, "name": "map%d" % i, "sources": [{"port": "p0", "direction": "rx"}],
         "destination": {"port": "t%d" % i}, "encap": {"type": "span"}, "rules": m["rules"]}
        for i, m in enumerate(j["maps"])]
maps.append({"id": 50, "name": "map0ip", "sources": [{"port": "p0"}], "destination": {"port": "t4"},
             "filter": "ip", "rules": j["maps"][0]["rules"]})
maps.append({"id": 60, "name": "rest", "sources": [{"port": "p0"}], "destination": {"port": "c"}, "collector": True})
ports = [{"name": "p0", "devargs": "net_pcap0,rx_pcap=%s/frames.pcap" % d, "mtu": 9600},
         {"name": "p1", "devargs": "net_pcap1,tx_pcap=%s/fwd.pcap" % d, "mtu": 9600}]
ports += [{"name": "t%d" % i, "devargs": "net_pcap%d,tx_pcap=%s/t%d.pcap" % (2 + i, d, i), "mtu": 9600} for i in range(5)]
ports.append({"name": "c", "devargs": "net_pcap7,tx_pcap=%s/c.pcap" % d, "mtu": 9600})
cfg = {"eal": {"file_prefix": "sbxmw", "socket_mem_mb": 256, "primary_lcore": 94, "mgmt_lcore": 95},
       "ports": ports, "workers": {"count": 1, "lcores": [96], "standby_lcores": [93]},
       "forwarding": {"xconnects": [["p0", "p1"]]}, "maps": maps}
exec(edit)
json.dump(cfg, open(out, "w"), indent=1)
PY
}
mkcfg "$TMP/maps.json"
size=$(stat -c %s "$TMP/maps.json")
echo "# config: $size bytes (the memzone's document holds 64 KiB)"
replay maps
# the model's view of each tool port, against what the appliance wrote
python3 - "$TMP" "$MODEL" >"$TMP/cmp.txt" <<'PY'
import importlib.util, os, sys
d = sys.argv[1]
spec = importlib.util.spec_from_file_location("map_model", sys.argv[2])
mm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mm)
classify, j = mm.load_maps(d)
frames = mm.read_pcap(os.path.join(d, "frames.pcap"))
want = {n: [] for n in ("t0", "t1", "t2", "t3", "t4", "c")}
for fr in frames:
    res = classify(mm.parse_frame(fr)).split()
    passed = [r.startswith("p") for r in res]
    for m, p in enumerate(passed):
        if p:
            want["t%d" % m].append(fr)
    if passed[0] and fr[12:14] == b"\x08\x00":  # tcpdump "ip": EtherType IPv4 at byte 12
        want["t4"].append(fr)
    if not any(passed):
        want["c"].append(fr)
want["p1"] = frames
want["neg"] = want["t1"]  # negative control: map 1's frames are not map 0's
for n, w in want.items():
    got = mm.read_pcap(os.path.join(d, ("t0" if n == "neg" else n if n != "p1" else "fwd") + ".pcap")) \
        if os.path.exists(os.path.join(d, ("t0" if n == "neg" else n if n != "p1" else "fwd") + ".pcap")) else []
    differ = sum(1 for a, b in zip(got, w) if a != b) + abs(len(got) - len(w))
    print("%s want %d %d got %d %d differ %d" % (n, len(w), sum(map(len, w)), len(got), sum(map(len, got)), differ))
PY
sed 's/^/# /' "$TMP/cmp.txt"
# port: want frames, want bytes, got frames, got bytes, differ
line() { awk -v n="$1" '$1 == n {print $3, $4, $6, $7, $9}' "$TMP/cmp.txt"; }
for i in 0 1 2 3; do
	read -r wf wb gf gb df < <(line "t$i")
	check "map$i: its tool port holds exactly the $wf frames ($wb bytes) the model says its rules pass: got $gf ($gb bytes), ${df:-?} differ" \
		cond '[ -n "$wf" ] && [ "$wf" -gt 0 ] && [ "$gf" = "$wf" ] && [ "$gb" = "$wb" ] && [ "$df" = 0 ]'
	passed=$(mctr "$TMP/maps.log" "map$i" passed)
	check "map$i: counter passed = $passed, mirrored = $(mctr "$TMP/maps.log" "map$i" mirrored): both $wf" \
		cond '[ "$passed" = "$wf" ] && [ "$(mctr "$TMP/maps.log" "map$i" mirrored)" = "$wf" ]'
done
read -r wf wb gf gb df < <(line t4)
check "map0ip (map0's rules, filter \"ip\"): exactly the $wf untagged IPv4 frames of map0's: got $gf ($gb bytes), ${df:-?} differ; filtered_out = passed - $wf" \
	cond '[ -n "$wf" ] && [ "$wf" -gt 0 ] && [ "$gf" = "$wf" ] && [ "$gb" = "$wb" ] && [ "$df" = 0 ] &&
	      [ "$(mctr "$TMP/maps.log" map0ip filtered_out)" = $(( $(mctr "$TMP/maps.log" map0ip passed) - wf )) ]'
read -r wf wb gf gb df < <(line c)
check "the collector holds exactly the $wf frames no map passed (at least 50): got $gf ($gb bytes), ${df:-?} differ" \
	cond '[ -n "$wf" ] && [ "$wf" -ge 50 ] && [ "$gf" = "$wf" ] && [ "$gb" = "$wb" ] && [ "$df" = 0 ] &&
	      [ "$(mctr "$TMP/maps.log" rest passed)" = "$wf" ]'
read -r wf wb gf gb df < <(line p1)
check "the forwarded output is the input unchanged: $gf of $wf frames, ${df:-?} differ, and no copy in it" \
	cond '[ "$wf" = "$FRAMES" ] && [ "$gf" = "$wf" ] && [ "$gb" = "$wb" ] && [ "$df" = 0 ]'
check "the maps stage classified every frame once: $(sed -n 's/^maps: \([0-9]*\) frames classified/\1/p' "$TMP/maps.log")" \
	cond '[ "$(sed -n "s/^maps: \([0-9]*\) frames classified/\1/p" "$TMP/maps.log")" = "$FRAMES" ]'
check "the $size-byte config ran (over the memzone document's 64 KiB: the rules are kept apart); the contexts were built" \
	cond '[ "$size" -gt 65536 ] && grep -q "maps: 6 maps, $(( (RULES + 4) + (RULES / 4 + 1) )) rules, [0-9]* rte_acl contexts built" "$TMP/maps.log"'
read -r wf wb gf gb df < <(line neg)
check "negative control: map0's tool port compared with map1's frames differs" cond '[ "${df:-0}" -gt 0 ]'

# tunnels terminated by the ingress stage (issue #27: "rules see the frame as it leaves the ingress
# stages (after decap and strip)"): the first VX_FRAMES model frames, every other one in
# VXLAN (outer Ethernet / IPv4 198.51.100.1 -> 198.51.100.2 / UDP 4789 / VNI 100, RFC 7348), p0
# terminating VXLAN; each map's tool port must hold exactly the model's frames of the inner
# frames, as if none had been tunnelled: a rule never sees the outer headers (the outer
# addresses, protocol UDP and port 4789 would match other rules). The port also strips VLAN tags
# ("strip": ["vlan"]): the rules see, and the tools get, the inner frames without their 802.1Q /
# 802.1ad tags (a rule on vlan no longer matches them). The model's IP fragments and
# UDP frames to port 4789 always go in VXLAN: left plain on a port with a vxlan rule, a lone
# UDP fragment waits for reassembly and is dropped (docs/INGRESS.md "Fragments"), and a UDP
# frame to 4789 is parsed as VXLAN.
VX=${VX_FRAMES:-20000}
python3 - "$TMP" "$VX" "$MODEL" >"$TMP/vx.count" <<'PY'
import importlib.util, struct, sys
d, n = sys.argv[1], int(sys.argv[2])
spec = importlib.util.spec_from_file_location("map_model", sys.argv[3])
mm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mm)
def csum(h):
    s = sum(struct.unpack("!%dH" % (len(h) // 2), h))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
out, tunnelled = [], 0
for i, fr in enumerate(mm.read_pcap(d + "/frames.pcap")[:n]):
    pf = mm.parse_frame(fr)
    if i % 2 == 0 or pf.get("fragment", "none") != "none" or (pf.get("ip_proto") == 17 and pf.get("dst_port") == 4789):
        tunnelled += 1
        vx = struct.pack("!BBHI", 0x08, 0, 0, 100 << 8)  # flags I, VNI 100
        udp = struct.pack("!HHHH", 49152 + i % 1000, 4789, 8 + len(vx) + len(fr), 0)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp) + len(vx) + len(fr), i & 0xffff, 0, 64, 17, 0,
                         bytes([198, 51, 100, 1]), bytes([198, 51, 100, 2]))
        ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
        fr = bytes.fromhex("02000000aa0202000000aa01") + b"\x08\x00" + ip + udp + vx + fr
    out.append(fr)
mm.write_pcap(d + "/frames-vx.pcap", out)
print(tunnelled)
PY
mkcfg "$TMP/vx.json" 're = __import__("re")
for p in cfg["ports"]:
    p["devargs"] = re.sub(r"/(t\d|c|fwd)\.pcap", r"/vx-\1.pcap", p["devargs"])
cfg["ports"][0]["devargs"] = "net_pcap0,rx_pcap=%s/frames-vx.pcap" % d
cfg["ports"][0]["ingress"] = {"decap": [{"type": "vxlan"}], "non_tunnel": "pass", "strip": ["vlan"]}'
replay vx
python3 - "$TMP" "$MODEL" "$VX" >"$TMP/vxcmp.txt" <<'PY'
import importlib.util, os, sys
d, n = sys.argv[1], int(sys.argv[3])
spec = importlib.util.spec_from_file_location("map_model", sys.argv[2])
mm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mm)
classify, j = mm.load_maps(d)
def strip_vlan(fr):  # shared/ingress.c sbx_ingress_strip: the whole 802.1Q / ad tags after the MACs
    p = 12
    while len(fr) >= p + 6 and int.from_bytes(fr[p:p + 2], "big") in (0x8100, 0x88A8, 0x9100):
        p += 4
    return fr[:12] + fr[p:], (p - 12) // 4
frames, tags = [], 0
for fr in mm.read_pcap(os.path.join(d, "frames.pcap"))[:n]:
    fr, t = strip_vlan(fr)
    frames.append(fr)
    tags += t
print("tags %d" % tags)
want = {k: [] for k in ("t0", "t1", "t2", "t3", "c")}
for fr in frames:
    passed = [r.startswith("p") for r in classify(mm.parse_frame(fr)).split()]
    for m, p in enumerate(passed):
        if p:
            want["t%d" % m].append(fr)
    if not any(passed):
        want["c"].append(fr)
for k, w in want.items():
    path = os.path.join(d, "vx-%s.pcap" % k)
    got = mm.read_pcap(path) if os.path.exists(path) else []
    differ = sum(1 for a, b in zip(got, w) if a != b) + abs(len(got) - len(w))
    print("%s want %d got %d differ %d" % (k, len(w), len(got), differ))
PY
sed 's/^/# vx: /' "$TMP/vxcmp.txt"
vt=$(pctr "$TMP/vx.log" p0 vlan_tags_stripped) wt=$(awk '$1 == "tags" {print $2}' "$TMP/vxcmp.txt")
check "strip vlan after the decap: p0 stripped the $wt 802.1Q / 802.1ad tags of the (inner) frames (vlan_tags_stripped $vt)" \
	cond '[ -n "$wt" ] && [ "$wt" -gt 100 ] && [ "$vt" = "$wt" ]'
dp=$(pctr "$TMP/vx.log" p0 decap_packets) ntun=$(cat "$TMP/vx.count")
check "VXLAN: p0 terminated the $ntun tunnelled frames of $VX (decap_packets $dp), dropped none ($(pctr "$TMP/vx.log" p0 drop_packets))" \
	cond '[ "$dp" = "$ntun" ] && [ "$ntun" -ge $((VX / 2)) ] && [ "$(pctr "$TMP/vx.log" p0 drop_packets)" = 0 ]'
for k in t0 t1 t2 t3 c; do
	read -r wf gf df < <(awk -v n="$k" '$1 == n {print $3, $5, $7}' "$TMP/vxcmp.txt")
	check "VXLAN terminated and VLAN tags stripped by the ingress stage, $k: exactly the model's $wf frames of the inner frames without their tags: got $gf, ${df:-?} differ" \
		cond '[ -n "$wf" ] && [ "$wf" -gt 0 ] && [ "$gf" = "$wf" ] && [ "$df" = 0 ]'
done

# bad configs: refused at start (--check), naming the field, exit 2
bad() { # bad TAG EDIT EXPECTED
	want=$3
	mkcfg "$TMP/$1.json" "$2"
	out=$("$BUILD/primary/spanbox-primary" -c "$TMP/$1.json" --check 2>&1); rc=$?
	check "$1: refused at start (exit $rc), naming the field: $want" cond '[ "$rc" -eq 2 ] && grep -qF -- "$want" <<<"$out"'
	[ "$rc" -eq 2 ] || echo "$out" | tail -n 3 | sed 's/^/# /'
}
bad badport 'cfg["maps"][0]["rules"][3] = {"action": "pass", "dst_port": 70000}' \
	"maps[0].rules[3].dst_port: 70000 is not a port"
bad badprefix 'cfg["maps"][2]["rules"][7] = {"action": "drop", "src": "10.0.0.1/24"}' \
	'maps[2].rules[7].src: "10.0.0.1/24" has bits set past its prefix length'
bad collrules 'cfg["maps"][5]["rules"] = [{"action": "pass", "vlan": 5}]' \
	"maps[5].rules: a collector takes the frames no other map passed: it has no rules"
bad dupid 'cfg["maps"][1]["id"] = 40' "maps[1].id: duplicate session id 40 (see maps[0])"
bad mapkey 'cfg["maps"][3]["colour"] = "red"' "maps[3].colour: unknown key"
bad summary 'cfg["maps"][1]["rules"] = {"count": 3, "digest": "0123456789abcdef"}' \
	"maps[1].rules: a summary of a running document (count, digest): the config to start from must hold the rules themselves"

# live: net_null frames (60 zero bytes: EtherType 0, not IP) on n0 -> n1; map "zeros" passes
# EtherType 0, map "tcp" passes TCP only (none), the collector of n0's RX takes what no map
# passed there (none; on TX of n0, the frames of n1, it would take them all)
API=http://127.0.0.1:19030/api/v1
cat >"$TMP/live.json" <<JSON
{
  "eal": {"file_prefix": "sbxmw", "socket_mem_mb": 256, "primary_lcore": 94, "mgmt_lcore": 95},
  "ports": [{"name": "n0", "devargs": "net_null0"}, {"name": "n1", "devargs": "net_null1"},
            {"name": "t", "devargs": "net_null2"}, {"name": "u", "devargs": "net_null3"}, {"name": "v", "devargs": "net_null4"}],
  "tool_groups": [{"name": "g", "members": ["v"]}],
  "workers": {"count": 1, "lcores": [96], "standby_lcores": [93]},
  "forwarding": {"xconnects": [["n0", "n1"]]},
  "mgmt": {"listen": "127.0.0.1", "port": 19030, "database": "$TMP/live.db", "token": "sbxmw-token-0123456789abcdef"},
  "maps": [
    {"id": 70, "name": "zeros", "sources": [{"port": "n0", "direction": "rx"}], "destination": {"port": "t"},
     "rules": [{"action": "drop", "ip_proto": 6}, {"action": "pass", "ethertype": 0}]},
    {"id": 71, "name": "tcp", "sources": [{"port": "n0"}], "destination": {"port": "t"},
     "rules": [{"action": "pass", "ip_proto": 6}]},
    {"id": 72, "name": "rest", "sources": [{"port": "n0", "direction": "rx"}], "destination": {"port": "u"}, "collector": true},
    {"id": 73, "name": "grp", "sources": [{"port": "n0", "direction": "rx"}], "destination": {"group": "g"},
     "rules": [{"action": "pass", "ethertype": 0}]}
  ]
}
JSON
AUTH="Authorization: Bearer sbxmw-token-0123456789abcdef"
inst_start_both live "$TMP/live.json" "$API"
sleep 1
curl -fsS "$API/maps" >"$TMP/maps.out"; jq -c '.maps[] | {name, rule_count, passed: .counters.passed, mirrored: .counters.mirrored_packets}' "$TMP/maps.out" | sed 's/^/# /'
check "GET /api/v1/maps: 4 maps, rule counts 2, 1, 0, 1, the collector flagged" \
	cond '[ "$(jq -c "[.maps[] | [.name, .rule_count, .collector]]" "$TMP/maps.out")" = "[[\"zeros\",2,false],[\"tcp\",1,false],[\"rest\",0,true],[\"grp\",1,false]]" ]'
check "a map to a tool group: its copies reach the group's member (map grp mirrored, member v's packets > 0)" \
	cond '[ "$(jq ".maps[3].counters.mirrored_packets" "$TMP/maps.out")" -gt 0 ] &&
	      [ "$(curl -fsS "$API/status" | jq "[.tool_groups[0].members[].packets] | add")" -gt 0 ]'
check "GET /api/v1/maps: zeros passed and mirrored frames, tcp and the collector none; frames classified" \
	cond '[ "$(jq ".maps[0].counters.passed" "$TMP/maps.out")" -gt 0 ] && [ "$(jq ".maps[0].counters.mirrored_packets" "$TMP/maps.out")" -gt 0 ] &&
	      [ "$(jq ".maps[1].counters.passed + .maps[2].counters.passed" "$TMP/maps.out")" = 0 ] && [ "$(jq .classified_frames "$TMP/maps.out")" -gt 0 ]'
curl -fsS "http://127.0.0.1:19030/metrics" | grep '^spanbox_map_passed_packets_total' >"$TMP/metrics.out"
sed 's/^/# /' "$TMP/metrics.out"
check "/metrics: spanbox_map_passed_packets_total per map (labels map, name): zeros > 0, tcp and rest 0" \
	cond 'awk "/map=\"70\",name=\"zeros\"/ && \$2 > 0 {z = 1} /map=\"71\",name=\"tcp\"/ && \$2 == 0 {t = 1} /map=\"72\",name=\"rest\"/ && \$2 == 0 {r = 1} END {exit !(z && t && r)}" "$TMP/metrics.out"'
curl -fsS "$API/config" >"$TMP/config.out"
check "the running document keeps each map's rule count and digest, not its rules" \
	cond '[ "$(jq -c "[.maps[].rules.count]" "$TMP/config.out")" = "[2,1,0,1]" ] && ! grep -q ethertype "$TMP/config.out"'
code=$(curl -sS -o "$TMP/post.out" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: application/json' \
	-d '{"id": 5, "sources": [{"port": "n0"}], "destination": {"port": "u"}}' "$API/mirrors")
check "a live mirror change with the maps running is applied ($code)" cond '[ "$code" = 201 ] || [ "$code" = 200 ]'
[ "$code" = 201 ] || [ "$code" = 200 ] || sed 's/^/# /' "$TMP/post.out"
sleep 0.5
check "the maps run on after the change: zeros still passes frames" \
	cond 'a=$(jq ".maps[0].counters.passed" "$TMP/maps.out"); sleep 0.3; [ "$(curl -fsS "$API/maps" | jq ".maps[0].counters.passed")" -gt "$a" ]'
jq '.maps[0].rules = [{"action": "pass"}]' "$TMP/config.out" >"$TMP/put.json"
code=$(curl -sS -o "$TMP/put.out" -w '%{http_code}' -X PUT -H "$AUTH" -H 'Content-Type: application/json' \
	--data-binary @"$TMP/put.json" "$API/config")
check "PUT /config with a map's rules given as an array: applied live (maps are live since 26c: $code), the map has 1 rule" \
	cond '[ "$code" = 200 ] && [ "$(curl -fsS "$API/maps/70" | jq .rule_count)" = 1 ]'
inst_cleanup
exit 0
