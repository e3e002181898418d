#!/usr/bin/env python3
"""Frames and checks for tests/e2e/61b_mirror_mask.sh (masking of mirror copies, issue #26).

  mask_check.py gen OUT.pcap
      the input frames (scapy): IPv4/TCP, IPv6/UDP, VLAN IPv4/TCP, QinQ IPv6/TCP, VXLAN (UDP 4789)
      carrying Ether/IPv4/TCP, a 64 B IPv4/TCP frame (shorter than the regions), ARP (no L3/L4),
      IPv6 with a hop-by-hop header / TCP, a later IPv4 fragment (offset 24 B)
  mask_check.py check IN.pcap COPIES.pcap ENCAP FROM OFFSET LENGTH PATTERN
      the copies of a session (one per input frame, in order) against the input: tshark (the
      independent decoder) gives each copy's bytes and where the mirrored frame starts in it
      (ERSPAN, VXLAN: its second Ethernet header; RSPAN: the 802.1Q tag at 12 removed, VLAN 42);
      scapy gives each input frame's anchor (l2 0, l3 the first IP header, l4 the first
      TCP/UDP header, a later fragment's payload less its offset, inner_*: the last IP / TCP/UDP
      header, i.e. that of the frame a tunnel carries). Expected: the pattern over
      [anchor + OFFSET, anchor + OFFSET + LENGTH) cut to the frame, every other byte the input's,
      except the checksum field of an IPv4 header the region touches without covering that field
      (it must verify: tshark ip.checksum.status). Prints one line per frame, exits 1 on a mismatch.
"""
import json
import subprocess
import sys

from scapy.all import (ARP, IP, TCP, UDP, VXLAN, Dot1AD, Dot1Q, Ether, IPv6, IPv6ExtHdrHopByHop, Raw,
                       rdpcap, wrpcap)

MAC = dict(src="02:00:00:00:00:0a", dst="02:00:00:00:00:0b")


def pay(n, seed):
    return Raw(bytes((seed + 7 * k) & 0xff for k in range(n)))


def frames():
    a4 = dict(src="192.0.2.1", dst="198.51.100.7")
    a6 = dict(src="2001:db8::1", dst="2001:db8::2")
    return [
        Ether(**MAC) / IP(**a4) / TCP(sport=40000, dport=443, flags="PA") / pay(200, 1),
        Ether(**MAC) / IPv6(**a6) / UDP(sport=5000, dport=7000) / pay(150, 2),
        Ether(**MAC) / Dot1Q(vlan=100) / IP(**a4) / TCP(sport=40001, dport=80) / pay(120, 3),
        Ether(**MAC, type=0x88a8) / Dot1AD(vlan=10) / Dot1Q(vlan=20) / IPv6(**a6) / TCP(sport=40002, dport=22) /
        pay(120, 4),
        Ether(**MAC) / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=50000, dport=4789) / VXLAN(vni=77) /
        Ether(src="02:00:00:00:01:0a", dst="02:00:00:00:01:0b") / IP(src="172.16.0.1", dst="172.16.0.2") /
        TCP(sport=40003, dport=8443) / pay(150, 5),
        Ether(**MAC) / IP(**a4) / TCP(sport=40004, dport=443) / pay(10, 6),
        Ether(**MAC, type=0x0806) / ARP(psrc="192.0.2.1", pdst="192.0.2.2"),
        Ether(**MAC) / IPv6(**a6) / IPv6ExtHdrHopByHop() / TCP(sport=40005, dport=443) / pay(100, 7),
        Ether(**MAC) / IP(**a4, proto=6, frag=3) / pay(100, 8),
    ]


def offset(p, layer, nb=1):
    lay = p.getlayer(layer, nb)
    return None if lay is None else len(bytes(p)) - len(bytes(lay))


def layers(p, kinds):
    """Offsets of every layer of @kinds in @p, outermost first."""
    out = []
    for k in kinds:
        nb = 1
        while p.getlayer(k, nb) is not None:
            out.append(offset(p, k, nb))
            nb += 1
    return sorted(out)


def anchor(p, frm):
    """(anchor, lower bound) of the region in @p, or None without the header."""
    if frm == "l2":
        return 0, 0
    l3 = layers(p, (IP, IPv6))
    l4 = layers(p, (TCP, UDP))
    if not l3:
        return None
    if frm in ("l3", "inner_l3"):
        a = l3[-1] if frm == "inner_l3" else l3[0]
        return a, a
    if IP in p and p[IP].frag:  # a later fragment: its payload is L4 bytes from frag * 8 on
        pl = l3[0] + p[IP].ihl * 4
        return pl - p[IP].frag * 8, pl
    if not l4:
        return None
    a = l4[-1] if frm == "inner_l4" else l4[0]
    return a, a


def tshark_json(path):
    out = subprocess.run(["tshark", "-r", path, "-T", "json", "-x", "-o", "ip.check_checksum:TRUE"],
                         capture_output=True, check=True).stdout
    return json.loads(out, object_pairs_hook=lambda kv: kv)  # keep repeated keys (inner layers)


def raw_of(pairs, key):
    return [v for k, v in pairs if k == key]


def walk(pairs, key, acc):
    """Every value of @key anywhere in the key/value pair lists @pairs, in document order."""
    for k, v in pairs:
        if k == key:
            acc.append(v)
        if isinstance(v, list) and v and isinstance(v[0], tuple):
            walk(v, key, acc)
    return acc


def check(argv):
    inp, cop, encap, frm, off, length, pat = argv[0], argv[1], argv[2], argv[3], int(argv[4]), int(argv[5]), int(argv[6])
    src = [bytes(p) for p in rdpcap(inp)]
    gen = [Ether(b) for b in src]  # scapy decodes the input as read back
    docs = tshark_json(cop)
    bad = 0
    if len(docs) != len(src):
        print(f"# {len(docs)} copies, {len(src)} frames")
        return 1
    for i, (doc, orig) in enumerate(zip(docs, src)):
        lay = dict(doc)["_source"]
        lay = dict(lay)["layers"]
        raw = bytes.fromhex(raw_of(lay, "frame_raw")[0][0])
        if encap in ("erspan2", "vxlan"):
            eths = walk(lay, "eth_raw", [])
            start = eths[1][1] if len(eths) > 1 else -1  # the mirrored frame: the 2nd Ethernet header
            frame = raw[start:] if start >= 0 else b""
        elif encap == "rspan":
            frame = raw[:12] + raw[16:] if raw[12:16] == bytes([0x81, 0, 0, 42]) else b""
        else:
            frame = raw
        exp = bytearray(orig)
        skip = set()
        a = anchor(gen[i], frm)
        if a is not None:
            s = max(a[0] + off, a[1])
            e = max(a[0] + off + length, s)
            for k in range(s, min(e, len(exp))):
                exp[k] = pat
            for ip in layers(gen[i], (IP,)):
                hl = (orig[ip] & 0xf) * 4
                if s < e and s < ip + hl and e > ip and not (s < ip + 12 and e > ip + 10):
                    skip |= {ip + 10, ip + 11}  # recomputed: verified by tshark below
        diff = [k for k in range(max(len(frame), len(exp))) if k not in skip and
                (k >= len(frame) or k >= len(exp) or frame[k] != exp[k])]
        sums = [v for v in walk(lay, "ip.checksum.status", [])]
        okc = all(v == "1" for v in sums)
        what = "no anchor" if a is None else f"[{max(a[0] + off, a[1])}, {a[0] + off + length})"
        if diff or not okc:
            bad += 1
            print(f"# frame {i}: {len(frame)} B, region {what}: differs at {diff[:8]}, ip checksums {sums}")
        else:
            print(f"# frame {i}: {len(frame)} B, region {what}: as expected, ip checksums {sums}")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "gen":
        wrpcap(sys.argv[2], frames())
        sys.exit(0)
    if len(sys.argv) == 9 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2:]))
    sys.exit(__doc__)
