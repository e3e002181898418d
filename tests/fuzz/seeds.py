#!/usr/bin/env python3
"""Seed corpora of the libFuzzer harnesses (tests/fuzz/*.c) from the test files.

    seeds.py OUT   writes OUT/fuzz_config, OUT/fuzz_rest, OUT/fuzz_erspan, OUT/fuzz_pcie, OUT/fuzz_ingress, OUT/fuzz_decap, OUT/fuzz_maprules, OUT/fuzz_mask,
                   OUT/fuzz_ts_in

fuzz_config: every tests/configs/{good,bad}/*.json. fuzz_rest: byte 0 = route, byte 1 = session
index (fuzz_rest.c), then a body: each mirror session of the good configs (POST and PUT), each
cross-connect as {"ports": [...]}, each whole config (PUT /config), two memprobe bodies, each
port's ingress object (PUT /ports/{name}/ingress, byte 1 = the port's index), each config's
tool_groups (PUT /tool_groups) and each group (PUT /tool_groups/{name}), each map (POST /maps, PUT
/maps/{id}) and each of its rules (POST /maps/{id}/rules).
fuzz_erspan: the first 16 frames of every capture in ../shared/captures (pcap or pcapng), cut to
128 bytes (the decoder reads at most 58). fuzz_pcie: tests/fixtures/pcie/*.bin. fuzz_ingress: byte 0 =
strip and dedup-ignore bits, bytes 1-2 = segment cuts (fuzz_ingress.c), then the first 8 frames of
every capture (whole, at most 2048 bytes), each with every strip/ignore combination of a few.
fuzz_decap: the first 16 frames of every capture, whole (the parser checks lengths against the
frame), behind byte 0 = 0 (avail = len, fuzz_decap.c), and each frame once more with byte 0 = 128 + 64 (64 readable bytes).
fuzz_maprules: byte 0 = 0 + two rules arrays (every field), byte 0 = 1 + the first 8 frames of every capture (at most 512 B).
fuzz_mask: the first 8 frames of every capture (at most 2048 B) behind a 7-byte header (fuzz_mask.c): mask l4 +20
length 64, and inner_l3 +0 length 20 with 64 readable bytes.
fuzz_ts_in: the first 2 frames of 8 captures with an AVSP header of each version or a Metamako trailer (with an
extension, with an FCS), behind byte 0 (options) and 8 bytes of clock (fuzz_ts_in.c).
"""
import glob, json, os, struct, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = sys.argv[1]
ROUTES = {"post_mirror": 0, "put_mirror": 1, "post_xconnect": 2, "put_config": 3, "memprobe": 4, "put_ingress": 5,
          "put_groups": 6, "put_group": 7, "post_capture": 8, "put_flows": 9, "post_map": 10, "put_map": 11, "post_rule": 12}


def put(harness, name, data):
    d = os.path.join(OUT, harness)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def frames(path):
    """Frames of a pcap or pcapng file (nothing for anything else)."""
    b = open(path, "rb").read()
    if b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        e = "<" if b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
        off = 24
        while off + 16 <= len(b):
            incl = struct.unpack(e + "I", b[off + 8:off + 12])[0]
            yield b[off + 16:off + 16 + incl]
            off += 16 + incl
    elif b[:4] == b"\x0a\x0d\x0d\x0a" and len(b) >= 12:
        e = "<" if b[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
        off = 0
        while off + 12 <= len(b):
            btype, blen = struct.unpack(e + "II", b[off:off + 8])
            if blen < 12:
                return
            if btype == 6 and off + 28 <= len(b):  # enhanced packet block
                cap = struct.unpack(e + "I", b[off + 20:off + 24])[0]
                yield b[off + 28:off + 28 + cap]
            off += blen


for p in sorted(glob.glob(os.path.join(ROOT, "tests/configs/*/*.json"))):
    put("fuzz_config", os.path.basename(os.path.dirname(p)) + "_" + os.path.basename(p), open(p, "rb").read())

for p in sorted(glob.glob(os.path.join(ROOT, "tests/configs/good/*.json"))):
    name = os.path.basename(p)[:-5]
    text = open(p, "rb").read()
    put("fuzz_rest", "put_config_" + name, bytes([ROUTES["put_config"], 0]) + text)
    doc = json.loads(text)
    for i, m in enumerate(doc.get("mirrors", [])):
        body = json.dumps(m).encode()
        put("fuzz_rest", "post_mirror_%s_%d" % (name, i), bytes([ROUTES["post_mirror"], 0]) + body)
        put("fuzz_rest", "put_mirror_%s_%d" % (name, i), bytes([ROUTES["put_mirror"], i % 3]) + body)
    for i, p in enumerate(doc.get("ports", [])):
        if "ingress" in p:
            put("fuzz_rest", "put_ingress_%s_%d" % (name, i),
                bytes([ROUTES["put_ingress"], i]) + json.dumps(p["ingress"]).encode())
    for i, x in enumerate(doc.get("forwarding", {}).get("xconnects", [])):
        put("fuzz_rest", "post_xconnect_%s_%d" % (name, i),
            bytes([ROUTES["post_xconnect"], 0]) + json.dumps({"ports": x}).encode())
    if "tool_groups" in doc:
        put("fuzz_rest", "put_groups_" + name,
            bytes([ROUTES["put_groups"], 0]) + json.dumps({"tool_groups": doc["tool_groups"]}).encode())
        for i, g in enumerate(doc["tool_groups"]):
            put("fuzz_rest", "put_group_%s_%d" % (name, i), bytes([ROUTES["put_group"], i]) + json.dumps(g).encode())
    for i, m in enumerate(doc.get("maps", [])):  # byte 1 = the map's index in maps.json (fuzz_rest.c)
        body = json.dumps(m).encode()
        put("fuzz_rest", "post_map_%s_%d" % (name, i), bytes([ROUTES["post_map"], 0]) + body)
        put("fuzz_rest", "put_map_%s_%d" % (name, i), bytes([ROUTES["put_map"], i % 3]) + body)
        for k, rule in enumerate(m.get("rules", [])):
            put("fuzz_rest", "post_rule_%s_%d_%d" % (name, i, k), bytes([ROUTES["post_rule"], i % 3]) + json.dumps(rule).encode())
    if "flows" in doc:  # PUT /api/v1/flows/config: the whole section
        put("fuzz_rest", "put_flows_" + name, bytes([ROUTES["put_flows"], 0]) + json.dumps(doc["flows"]).encode())
put("fuzz_rest", "put_flows_mirrors", bytes([ROUTES["put_flows"], 0]) + json.dumps(
    {"ports": [{"port": json.load(open(os.path.join(ROOT, "tests/configs/good/mirrors.json")))["ports"][0]["name"],
                "direction": "rx"}], "active_timeout_s": 30, "idle_timeout_s": 5, "observation_domain_id": 7,
     "template_period_s": 10, "collectors": [{"address": "192.0.2.10", "port": 4739, "transport": "udp"},
                                              {"address": "2001:db8::1", "transport": "tcp"}]}).encode())
put("fuzz_rest", "memprobe_empty", bytes([ROUTES["memprobe"], 0]))
put("fuzz_rest", "memprobe_body", bytes([ROUTES["memprobe"], 0]) + b'{"size_mb": 64, "runs": 3}')

for p in sorted(glob.glob(os.path.join(ROOT, "..", "shared", "captures", "*"))):
    for i, fr in enumerate(frames(p)):
        if i >= 16:
            break
        put("fuzz_erspan", "%s_%d" % (os.path.basename(p), i), fr[:128])

for p in sorted(glob.glob(os.path.join(ROOT, "..", "shared", "captures", "*"))):
    for i, fr in enumerate(frames(p)):
        if i < 8:
            for mode in (0x03, 0x1f, 0x01 | 0x04, 0x02 | 0x10):
                put("fuzz_ingress", "%s_%d_%02x" % (os.path.basename(p), i, mode), bytes([mode, 20, 30]) + fr[:2048])
        if i >= 16:
            break
        put("fuzz_decap", "%s_%d" % (os.path.basename(p), i), b"\x00" + fr[:16384])
        put("fuzz_decap", "%s_%d_avail64" % (os.path.basename(p), i), bytes([128 + 64]) + fr[:16384])

for p in sorted(glob.glob(os.path.join(ROOT, "tests/fixtures/pcie/*.bin"))):
    put("fuzz_pcie", os.path.basename(p), open(p, "rb").read())

# fuzz_maprules: byte 0 even + a rules array (the example, every field), byte 0 odd + a
# frame (the first 8 frames of every capture, at most 512 B)
MAP_RULES = [
    [{"action": "drop", "ip_proto": 6, "dst_port": "873"}, {"action": "pass", "vlan": "100-199"},
     {"action": "pass", "src": "10.20.0.0/16", "dst_port": "1-1023"}, {"action": "pass", "dst": "2001:db8::/32", "ip_proto": 17}],
    [{"action": "pass", "inner_vlan": 7, "ethertype": "0x0800", "src_mac": "02:00:00:00:00:00/ff:00:00:00:00:00",
      "dst_mac": "02:00:00:00:00:0b", "dscp": 46, "tcp_flags": "0x02/0x12", "fragment": "first", "src_port": "1024-65535"},
     {"action": "pass", "fragment": "later", "ip_proto": 17}, {"action": "pass", "src": "10.0.0.0/8"}, {"action": "drop", "src": "10.1.0.0/16"}],
]
for i, rules in enumerate(MAP_RULES):
    put("fuzz_maprules", "rules_%d" % i, b"\x00" + json.dumps(rules).encode())
for p in sorted(glob.glob(os.path.join(ROOT, "..", "shared", "captures", "*"))):
    for i, fr in enumerate(frames(p)):
        if i >= 8:
            break
        put("fuzz_maprules", "%s_%d" % (os.path.basename(p), i), b"\x01" + fr[:512])

# fuzz_mask: anchor, offset, length, pattern, avail (fuzz_mask.c), then a frame
for p in sorted(glob.glob(os.path.join(ROOT, "..", "shared", "captures", "*"))):
    for i, fr in enumerate(frames(p)):
        if i >= 8:
            break
        put("fuzz_mask", "%s_%d_l4" % (os.path.basename(p), i), bytes([3, 0, 20, 0, 64, 0x5a, 0]) + fr[:2048])
        put("fuzz_mask", "%s_%d_inner" % (os.path.basename(p), i), bytes([4, 0, 0, 0, 20, 0, 128 + 64]) + fr[:2048])
# fuzz_ts_in: byte 0 = options (fuzz_ts_in.c), bytes 1..8 our clock (ns, little endian), then a frame of
# the captures with an AVSP header of each version after its MACs, or with a Metamako trailer (and an
# extension TLV, and an FCS), the clock 5 s after its time
TS_NOW = 1764650000 * 10**9 + 123456789
for p in sorted(glob.glob(os.path.join(ROOT, "..", "shared", "captures", "*")))[:8]:
    for i, fr in enumerate(frames(p)):
        if i >= 2 or len(fr) < 14:
            break
        fr = fr[:512]
        clock = struct.pack("<Q", TS_NOW + 5 * 10**9)
        for v in (0x0010, 0x0110, 0x0020, 0x0120, 0x0111):
            ts = struct.pack("!HI", 1764650000 & 0xffff, 7) if v & 0xf0 == 0x20 else struct.pack("!II", 1764650000, 7)
            put("fuzz_ts_in", "%s_%d_avsp_%04x" % (os.path.basename(p), i, v),
                b"\x00" + clock + fr[:12] + struct.pack("!HHH", 0xD28B, 1, v) + ts + fr[12:])
        tr = struct.pack("!IIIBHB", 0x11223344, 1764650000, 9, 1, 0x0102, 3)
        put("fuzz_ts_in", "%s_%d_metamako" % (os.path.basename(p), i), b"\x00" + clock + fr + tr)
        ext = struct.pack("!IIIIIBHB", 0x11223344, 5, 1 << 6 | 1 << 5, 1764650000, 9, 3, 0x0102, 3)
        put("fuzz_ts_in", "%s_%d_metamako_ext" % (os.path.basename(p), i), b"\x00" + clock + fr + ext)
        put("fuzz_ts_in", "%s_%d_metamako_fcs" % (os.path.basename(p), i), b"\x40" + clock + fr + tr + b"\xaa\xbb\xcc\xdd")
