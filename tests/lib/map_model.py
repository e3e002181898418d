#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Reference model of maps (docs/MAPS.md), written apart from shared/maprules.c and shared/mapacl.c.

  map_model.py gen SEED RULES MAPS FRAMES DIR
      random rule sets (overlapping prefixes, port and VLAN ranges, IPv4 and IPv6, VLAN and QinQ,
      MACs, DSCP, TCP flags, fragments) spread over MAPS maps -> DIR/rules.json, and frames built to
      hit every rule (each rule gets points drawn inside every field it names; the rest random,
      plus background frames) -> DIR/frames.pcap
  map_model.py classify DIR
      the model's result of every frame of DIR/frames.pcap for every map of DIR/rules.json, one
      line per frame as build/tests/sbx-map-classify prints them ("-", "p<i>", "d<i>")
  map_model.py compare DIR OURS
      model against OURS (sbx-map-classify's output): prints "frames N differ D rules R hit H
      shadowed-or-unhit U" and the first differences; exit 1 when any frame differs
  map_model.py scapy DIR N
      scapy as an independent decoder of the first N frames: its fields against the model's
      parser; exit 1 on a difference

The model parses frames with its own code (struct), and matches rules field by field, first match
per map: the semantics of include/spanbox/maprules.h, restated here.
"""
import ipaddress
import json
import os
import random
import struct
import sys

TPIDS = (0x8100, 0x88A8, 0x9100)
PORT_PROTOS = (6, 17, 132)
V4_BASES = ["10.0.0.0", "10.20.0.0", "192.168.0.0", "172.16.0.0"]
V6_BASES = ["2001:db8::", "2001:db8:1::", "fd00::"]


# ---------------------------------------------------------------- frame parser (the model's own)

def parse_frame(b):
    """Fields of one frame (a dict); keys absent when the frame has no such field."""
    f = {"dmac": int.from_bytes(b[0:6].ljust(6, b"\0"), "big"), "smac": int.from_bytes(b[6:12].ljust(6, b"\0"), "big")}
    if len(b) < 14:
        return f
    off, tags = 12, []
    et = struct.unpack_from("!H", b, off)[0]
    while et in TPIDS and len(tags) < 8 and len(b) >= off + 6:
        tags.append(struct.unpack_from("!H", b, off + 2)[0] & 0xFFF)
        off += 4
        et = struct.unpack_from("!H", b, off)[0]
    if tags:
        f["vlan"] = tags[0]
    if len(tags) > 1:
        f["inner_vlan"] = tags[1]
    f["ethertype"] = et
    off += 2
    proto, l4, later = None, None, False
    if et == 0x0800 and len(b) >= off + 20 and b[off] >> 4 == 4 and (b[off] & 15) >= 5 and len(b) >= off + (b[off] & 15) * 4:
        ihl = (b[off] & 15) * 4
        f["family"] = 4
        f["src"] = int.from_bytes(b[off + 12:off + 16], "big")
        f["dst"] = int.from_bytes(b[off + 16:off + 20], "big")
        f["dscp"] = b[off + 1] >> 2
        proto = b[off + 9]
        fo = struct.unpack_from("!H", b, off + 6)[0]
        if fo & 0x1FFF:
            later = True
        elif fo & 0x2000:
            f["fragment"] = "first"
        l4 = off + ihl
    elif et == 0x86DD and len(b) >= off + 40 and b[off] >> 4 == 6:
        f["family"] = 6
        f["src"] = int.from_bytes(b[off + 8:off + 24], "big")
        f["dst"] = int.from_bytes(b[off + 24:off + 40], "big")
        f["dscp"] = (((b[off] & 15) << 4) | (b[off + 1] >> 4)) >> 2
        nh, p = b[off + 6], off + 40
        for _ in range(8):
            if nh in (0, 43, 60, 51):
                if len(b) < p + 2:
                    p = None
                    break
                step = (b[p + 1] + 2) * 4 if nh == 51 else (b[p + 1] + 1) * 8
                nh, p = b[p], p + step
            elif nh == 44:
                if len(b) < p + 8:
                    p = None
                    break
                fo = struct.unpack_from("!H", b, p + 2)[0]
                nh, p = b[p], p + 8
                if fo & 0xFFF8:
                    later = True
                    break
                if fo & 1:
                    f["fragment"] = "first"
            else:
                break
        proto, l4 = nh, p
    if "family" not in f:
        return f
    f["ip_proto"] = proto
    f["fragment"] = "later" if later else f.get("fragment", "none")
    if not later and l4 is not None:
        if proto in PORT_PROTOS and len(b) >= l4 + 4:
            f["src_port"], f["dst_port"] = struct.unpack_from("!HH", b, l4)
        if proto == 6 and len(b) >= l4 + 14:
            f["tcp_flags"] = b[l4 + 13]
    return f


# ---------------------------------------------------------------- rules

def rng_range(v, top):
    if isinstance(v, int):
        return v, v
    s = str(v)
    if "-" in s:
        lo, hi = s.split("-")
        return int(lo, 0), int(hi, 0)
    return int(s, 0), int(s, 0)


def mac_vm(s):
    val, _, mask = s.partition("/")
    v = int(val.replace(":", ""), 16)
    m = int(mask.replace(":", ""), 16) if mask else (1 << 48) - 1
    return v & m, m


FIELDS = ("smac", "dmac", "vlan", "inner_vlan", "ethertype", "family", "src", "dst", "dscp", "ip_proto",
          "fragment", "src_port", "dst_port", "tcp_flags")


def rule_cond(r):
    """One rule (dict of JSON) as a Python condition over the FIELDS as local names (None: absent)."""
    c = []
    for k, v in r.items():
        if k == "action":
            continue
        if k in ("vlan", "inner_vlan", "src_port", "dst_port"):
            lo, hi = rng_range(v, 0)
            c.append("%s is not None and %d <= %s <= %d" % (k, lo, k, hi))
        elif k in ("ethertype", "ip_proto", "dscp"):
            c.append("%s == %d" % (k, int(v, 0) if isinstance(v, str) else v))
        elif k in ("src_mac", "dst_mac"):
            val, m = mac_vm(v)
            c.append("%s & %d == %d" % ("smac" if k == "src_mac" else "dmac", m, val))
        elif k in ("src", "dst"):
            net = ipaddress.ip_network(v)
            c.append("family == %d and %d <= %s <= %d" % (net.version, int(net.network_address), k, int(net.broadcast_address)))
        elif k == "tcp_flags":
            if isinstance(v, str) and "/" in v:
                val, m = (int(x, 0) for x in v.split("/"))
            else:
                val, m = (int(v, 0) if isinstance(v, str) else v), 0xFF
            c.append("tcp_flags is not None and tcp_flags & %d == %d" % (m, val & m))
        elif k == "fragment":
            c.append("fragment == %r" % v)
        else:
            raise ValueError("unknown key " + k)
    return " and ".join("(%s)" % x for x in c) or "True"


def compile_maps(maps):
    """One Python function over a parse_frame() dict: the line of results of every map, first match
    in each (generated source: the model's only speed-up)."""
    # one function per map, a flat run of "if rule: return" (an if/elif chain of thousands of
    # rules nests as deep in Python's syntax tree: RecursionError at 4,096 rules a map)
    args = ", ".join(FIELDS)
    src = []
    for m, rules in enumerate(maps):
        src.append("def map%d(%s):" % (m, args))
        for i, r in enumerate(rules):
            src.append("    if %s: return %r" % (rule_cond(r), ("d" if r["action"] == "drop" else "p") + str(i)))
        src.append("    return '-'")
    src += ["def classify(f):", "    a = tuple(map(f.get, FIELDS))",
            "    return ' '.join((%s))" % "".join("map%d(*a), " % m for m in range(len(maps)))]
    env = {"FIELDS": FIELDS}
    exec("\n".join(src), env)  # noqa: S102 (our own generated source)
    return env["classify"]


def load_maps(d):
    with open(os.path.join(d, "rules.json")) as fh:
        j = json.load(fh)
    return compile_maps([m["rules"] for m in j["maps"]]), j


# ---------------------------------------------------------------- generator

def rand_prefix(rnd, fam):
    if fam == 4:
        base = int(ipaddress.IPv4Address(rnd.choice(V4_BASES))) | rnd.getrandbits(16)
        plen = rnd.choice([8, 12, 16, 20, 24, 28, 30, 32, rnd.randint(0, 32)])
        m = ((1 << 32) - 1) ^ ((1 << (32 - plen)) - 1)
        return "%s/%d" % (ipaddress.IPv4Address(base & m), plen)
    base = int(ipaddress.IPv6Address(rnd.choice(V6_BASES))) | rnd.getrandbits(80)
    plen = rnd.choice([16, 32, 48, 56, 64, 96, 120, 128, rnd.randint(0, 128)])
    m = ((1 << 128) - 1) ^ ((1 << (128 - plen)) - 1)
    return "%s/%d" % (ipaddress.IPv6Address(base & m), plen)


def rand_range(rnd, lo, hi, small):
    c = rnd.random()
    if c < 0.4:
        return rnd.randint(lo, small)
    a = rnd.randint(lo, small)
    b = rnd.randint(a, min(hi, a + rnd.choice([1, 10, 100, 1000, hi])))
    return "%d-%d" % (a, b)


def gen_rule(rnd):
    r = {"action": "drop" if rnd.random() < 0.25 else "pass"}
    fam = rnd.choice([4, 4, 4, 6, 6, 0])
    if fam and rnd.random() < 0.9:
        r["src"] = rand_prefix(rnd, fam)
    if fam and rnd.random() < 0.9:
        r["dst"] = rand_prefix(rnd, fam)
    frag = None
    if rnd.random() < 0.1:
        frag = rnd.choice(["none", "first", "later"])
        r["fragment"] = frag
    proto = rnd.choice([6, 6, 17, 17, 132, 1, None, None])
    if proto is not None:
        r["ip_proto"] = proto
    if frag != "later" and proto in (6, 17, 132, None):
        if rnd.random() < 0.5:
            r["dst_port"] = rand_range(rnd, 0, 65535, 1100)
        if rnd.random() < 0.2:
            r["src_port"] = rand_range(rnd, 0, 65535, 65535)
        if proto in (6, None) and rnd.random() < 0.1:
            m = rnd.choice([0x02, 0x12, 0x10, 0x01, 0x3F])
            r["tcp_flags"] = "0x%02x/0x%02x" % (rnd.getrandbits(8) & m, m)
    if rnd.random() < 0.2:
        r["vlan"] = rand_range(rnd, 0, 4095, 120)
    if rnd.random() < 0.1:
        r["inner_vlan"] = rand_range(rnd, 0, 4095, 120)
    if rnd.random() < 0.05:
        r["dscp"] = rnd.choice([0, 10, 46])
    if rnd.random() < 0.05:
        r["src_mac"] = rnd.choice(["02:00:00:00:00:0a", "02:00:00:00:00:00/ff:ff:ff:00:00:00", "02:00:00:00:00:01/00:00:00:00:00:01"])
    if rnd.random() < 0.03:
        r["dst_mac"] = "02:00:00:00:00:0b"
    if not fam and rnd.random() < 0.05 and proto is None and "dst_port" not in r and "src_port" not in r and frag is None and "tcp_flags" not in r and "dscp" not in r:
        r["ethertype"] = rnd.choice(["0x0806", "0x8847", 2048])
    return r


def pick(rnd, v, lo, hi):
    """A value inside a rule's field (or anything when absent)."""
    if v is None:
        return rnd.randint(lo, hi)
    a, b = rng_range(v, hi)
    return rnd.randint(a, b)


def in_prefix(rnd, p, fam):
    if p is None:
        base = rnd.choice(V4_BASES if fam == 4 else V6_BASES)
        n = ipaddress.ip_network(base + ("/16" if fam == 4 else "/48"))
    else:
        n = ipaddress.ip_network(p)
    return int(n.network_address) | (rnd.getrandbits(n.max_prefixlen - n.prefixlen) if n.prefixlen < n.max_prefixlen else 0)


def mac_in(rnd, v):
    if v is None:
        return rnd.choice([0x02000000000A, 0x02000000000B, 0x020000000001, rnd.getrandbits(48) & ~(1 << 40)])
    val, m = mac_vm(v)
    return val | (rnd.getrandbits(48) & ~m)


def build_frame(rnd, r):
    """Frame bytes inside rule r (a dict; {} = anything)."""
    fam = 4 if "." in r.get("src", r.get("dst", "")) else 6 if ":" in r.get("src", r.get("dst", "")) else rnd.choice([4, 4, 6, 0])
    et = r.get("ethertype")
    if et is not None:
        et = int(et, 0) if isinstance(et, str) else et
        fam = 4 if et == 0x0800 else 0
    if any(k in r for k in ("ip_proto", "src_port", "dst_port", "tcp_flags", "fragment", "dscp")) and fam == 0:
        fam = rnd.choice([4, 6])
    ntags = 2 if "inner_vlan" in r else (max(1, rnd.choice([1, 1, 2, 3])) if "vlan" in r else rnd.choice([0, 0, 1, 2]))
    vids = [pick(rnd, r.get("vlan"), 0, 4095), pick(rnd, r.get("inner_vlan"), 0, 4095)] + [rnd.randint(0, 4095)]
    dmac, smac = mac_in(rnd, r.get("dst_mac")), mac_in(rnd, r.get("src_mac"))
    b = dmac.to_bytes(6, "big") + smac.to_bytes(6, "big")
    for t in range(ntags):
        tpid = rnd.choice(TPIDS) if t == 0 else 0x8100
        b += struct.pack("!HH", tpid, (rnd.randint(0, 7) << 13) | vids[t])
    if fam == 0:
        et = et if et is not None else rnd.choice([0x0806, 0x8847, 0x88CC])
        return b + struct.pack("!H", et) + bytes(rnd.getrandbits(8) for _ in range(46))
    proto = r.get("ip_proto")
    if proto is None:
        proto = rnd.choice([6, 17, 132, 1] if r.get("fragment") == "later" or not any(k in r for k in ("src_port", "dst_port", "tcp_flags")) else ([6] if "tcp_flags" in r else [6, 17, 132]))
    frag = r.get("fragment") or rnd.choice(["none"] * 12 + ["first", "later"])
    dscp = r.get("dscp", rnd.choice([0, 0, 10, 46, rnd.randint(0, 63)]))
    sp, dp = pick(rnd, r.get("src_port"), 0, 65535), pick(rnd, r.get("dst_port"), 0, 65535)
    flags = rnd.getrandbits(8)
    if "tcp_flags" in r:
        a, m = r["tcp_flags"].split("/")
        flags = (int(a, 0) & int(m, 0)) | (flags & ~int(m, 0) & 0xFF)
    if proto in (6,):
        l4 = struct.pack("!HHIIBBHHH", sp, dp, 1, 0, 0x50, flags, 1024, 0, 0)
    elif proto in (17, 132):
        l4 = struct.pack("!HHHH", sp, dp, 8, 0) + bytes(12)
    else:
        l4 = bytes([8, 0, 0, 0]) + bytes(16)
    src, dst = in_prefix(rnd, r.get("src"), fam), in_prefix(rnd, r.get("dst"), fam)
    if fam == 4:
        opts = bytes(4 * rnd.choice([0, 0, 0, 1, 2]))
        ihl = 5 + len(opts) // 4
        fo = {"none": rnd.choice([0, 0x4000]), "first": 0x2000, "later": rnd.choice([185, 0x2000 | 7])}[frag]
        ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, dscp << 2, ihl * 4 + len(l4), 1, fo, 64, proto, 0,
                         src.to_bytes(4, "big"), dst.to_bytes(4, "big")) + opts
        return b + struct.pack("!H", 0x0800) + ip + (l4 if frag != "later" else bytes(20))
    exts = [rnd.choice([0, 60, 43]) for _ in range(rnd.choice([0, 0, 1, 2, 3]))]
    if exts and exts[0] != 0 and 0 in exts:
        exts = [e for e in exts if e != 0]
    if frag != "none" or rnd.random() < 0.05:
        exts.append(44)
    chain = exts + [proto]
    body = b""
    for i, e in enumerate(exts):
        nh = chain[i + 1]
        if e == 44:
            off = {"none": 0, "first": 1, "later": (185 << 3) | rnd.choice([0, 1])}[frag]
            body += struct.pack("!BBHI", nh, 0, off, 7)
        else:
            body += struct.pack("!BB", nh, 0) + bytes(6)
    body += l4 if frag != "later" else bytes(20)
    tc = dscp << 2
    ip = struct.pack("!IHBB", (6 << 28) | (tc << 20), len(body), chain[0], 64) + src.to_bytes(16, "big") + dst.to_bytes(16, "big")
    return b + struct.pack("!H", 0x86DD) + ip + body


def write_pcap(path, frames):
    with open(path, "wb") as fh:
        fh.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            fh.write(struct.pack("<IIII", i // 1000000, i % 1000000, len(fr), len(fr)))
            fh.write(fr)


def read_pcap(path):
    with open(path, "rb") as fh:
        data = fh.read()
    off, out = 24, []
    while off + 16 <= len(data):
        incl = struct.unpack_from("<I", data, off + 8)[0]
        out.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return out


def gen(seed, nrules, nmaps, nframes, d):
    rnd = random.Random(seed)
    maps = [[] for _ in range(nmaps)]
    for i in range(nrules):
        maps[i % nmaps].append(gen_rule(rnd))
    # as operators write them, mostly: the specific rules first (more fields, longer prefixes), so
    # that few rules are shadowed; ties and the random fields still overlap
    for m in maps:
        m.sort(key=lambda r: -(len(r) + sum(int(r[k].split("/")[1]) / 16 for k in ("src", "dst") if k in r) + rnd.random() * 2))
    rules = [r for m in maps for r in m]
    frames = []
    per = max(1, (nframes * 7 // 8) // max(1, len(rules)))
    for r in rules:
        for _ in range(per):
            frames.append(build_frame(rnd, r))
    while len(frames) < nframes:
        frames.append(build_frame(rnd, {}))
    rnd.shuffle(frames)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "rules.json"), "w") as fh:
        json.dump({"maps": [{"rules": m} for m in maps]}, fh)
    write_pcap(os.path.join(d, "frames.pcap"), frames)
    print("generated %d rules in %d maps, %d frames" % (nrules, nmaps, len(frames)))


def main():
    cmd = sys.argv[1]
    if cmd == "gen":
        gen(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
    elif cmd == "classify":
        classify, _ = load_maps(sys.argv[2])
        for fr in read_pcap(os.path.join(sys.argv[2], "frames.pcap")):
            print(classify(parse_frame(fr)))
    elif cmd == "compare":
        classify, j = load_maps(sys.argv[2])
        with open(sys.argv[3]) as fh:
            ours = fh.read().splitlines()
        frames = read_pcap(os.path.join(sys.argv[2], "frames.pcap"))
        hit, differ, shown = set(), 0, 0
        for i, fr in enumerate(frames):
            want = classify(parse_frame(fr))
            got = ours[i] if i < len(ours) else "(missing)"
            for m, w in enumerate(want.split()):
                if w != "-":
                    hit.add((m, int(w[1:])))
            if got != want:
                differ += 1
                if shown < 5:
                    shown += 1
                    print("# frame %d: model %s | ours %s | %s" % (i, want, got, parse_frame(fr)))
        nrules = sum(len(m["rules"]) for m in j["maps"])
        print("frames %d differ %d rules %d hit %d unhit %d lines %d" % (len(frames), differ, nrules, len(hit), nrules - len(hit), len(ours)))
        sys.exit(1 if differ or len(ours) != len(frames) else 0)
    elif cmd == "scapy":
        from scapy.all import Ether, Dot1Q, IP, IPv6, IPv6ExtHdrFragment, TCP, UDP, SCTP  # noqa: F401
        import scapy.layers.l2 as l2
        bad = compared = 0
        frames = read_pcap(os.path.join(sys.argv[2], "frames.pcap"))[:int(sys.argv[3])]
        for i, fr in enumerate(frames):
            p, f = Ether(fr), parse_frame(fr)
            tags = []
            q = p
            while q.haslayer(Dot1Q) or q.haslayer(l2.Dot1AD):
                q = q.payload
                if hasattr(q, "vlan"):
                    tags.append(q.vlan)
                else:
                    break
            s = {}
            if tags:
                s["vlan"] = tags[0]
            if len(tags) > 1:
                s["inner_vlan"] = tags[1]
            if p.haslayer(IP):
                ip = p[IP]
                s.update(family=4, src=int(ipaddress.IPv4Address(ip.src)), dst=int(ipaddress.IPv4Address(ip.dst)), ip_proto=ip.proto, dscp=ip.tos >> 2)
                s["fragment"] = "later" if ip.frag else "first" if ip.flags.MF else "none"
            elif p.haslayer(IPv6):
                ip = p[IPv6]
                s.update(family=6, src=int(ipaddress.IPv6Address(ip.src)), dst=int(ipaddress.IPv6Address(ip.dst)), dscp=ip.tc >> 2)
                fh = p[IPv6ExtHdrFragment] if p.haslayer(IPv6ExtHdrFragment) else None
                s["fragment"] = "later" if fh is not None and fh.offset else "first" if fh is not None and fh.m else "none"
            for L in (TCP, UDP, SCTP):
                if p.haslayer(L) and s.get("fragment") != "later":
                    s["src_port"], s["dst_port"] = p[L].sport, p[L].dport
                    s["ip_proto"] = {TCP: 6, UDP: 17, SCTP: 132}[L]
                    break
            for k, v in s.items():
                compared += 1
                if f.get(k) != v:
                    bad += 1
                    if bad <= 5:
                        print("# frame %d: %s scapy %r model %r" % (i, k, v, f.get(k)))
        print("scapy frames %d fields %d differ %d" % (len(frames), compared, bad))
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
