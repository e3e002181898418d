#!/usr/bin/env python3
"""Write a pcap of N bidirectional flows for the tool group tests (no scapy needed).

usage: flows_gen.py OUT.pcap N [--frames K] [--seed S] [--udp-mixed]

Each flow is a random (IPv4 or IPv6; TCP, UDP or SCTP; some behind an 802.1Q tag, some IPv4
fragments, a few non-IP frames by MAC pair) conversation of K frames per direction. The last 4
bytes of every frame are the flow's number (big endian): tests/lib/flows_check.py reads it back
from each tool group member's capture, so the check does not depend on the hash or on a parser.
--udp-mixed: every flow is UDP (IPv4 or IPv6, no tag) whose datagrams are in turn whole, a first
fragment (MF, with ports) and a later fragment (an offset, no ports; IPv6: a Fragment header), as
DNS or NFS over a path with a small MTU (issue #24 item 6: one flow must stay on one member).
"""
import random
import struct
import sys


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4(src, dst, proto, payload, frag=0):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 1, frag, 64, proto, 0, src, dst)
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + payload


def ipv6(src, dst, proto, payload):
    return struct.pack("!IHBB16s16s", 6 << 28, len(payload), proto, 64, src, dst) + payload


def frame(smac, dmac, ethertype, l3, vlan=None):
    eth = dmac + smac
    if vlan is not None:
        eth += struct.pack("!HH", 0x8100, vlan)
    return eth + struct.pack("!H", ethertype) + l3


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    k = 2
    seed = 13
    mixed = False
    args = sys.argv[3:]
    while args:
        a = args.pop(0)
        if a == "--frames":
            k = int(args.pop(0))
        elif a == "--seed":
            seed = int(args.pop(0))
        elif a == "--udp-mixed":
            mixed = True
    rnd = random.Random(seed)
    frames = []
    for fid in range(n):
        tag = struct.pack("!I", fid)
        kind = rnd.random()
        v6 = rnd.random() < 0.25
        vlan = rnd.randrange(1, 4095) if rnd.random() < 0.2 else None
        ma = bytes([2, 0]) + rnd.randbytes(4)
        mb = bytes([2, 1]) + rnd.randbytes(4)
        alen = 16 if v6 else 4
        ia, ib = rnd.randbytes(alen), rnd.randbytes(alen)
        pa, pb = rnd.randrange(1024, 65536), rnd.randrange(1, 65536)
        proto = rnd.choice([6, 17, 132])
        if mixed:
            proto, kind, vlan = 17, 1.0, None
        conv = []
        for i in range(k):
            for d in (0, 1):
                s_mac, d_mac, s_ip, d_ip, sp, dp = (ma, mb, ia, ib, pa, pb) if d == 0 else (mb, ma, ib, ia, pb, pa)
                body = rnd.randbytes(rnd.randrange(0, 64)) + tag
                if kind < 0.03:  # non-IP (local experimental EtherType): by the MAC pair
                    conv.append(frame(s_mac, d_mac, 0x88B5, body.rjust(46, b"\0"), vlan))
                    continue
                if proto == 6:
                    l4 = struct.pack("!HHIIBBHHH", sp, dp, i, 0, 0x50, 0x18, 512, 0, 0) + body
                elif proto == 17:
                    l4 = struct.pack("!HHHH", sp, dp, 8 + len(body), 0) + body
                else:
                    l4 = struct.pack("!HHII", sp, dp, 0, 0) + body
                if mixed and i % 3 != 0:  # a first (i % 3 == 1) or later fragment of a datagram
                    first = i % 3 == 1
                    data = l4 if first else body.rjust(26, b"\0")
                    if v6:
                        fh = struct.pack("!BBHI", 17, 0, 1 if first else 8 << 3, fid)
                        conv.append(frame(s_mac, d_mac, 0x86DD, ipv6(s_ip, d_ip, 44, fh + data), vlan))
                    else:
                        conv.append(frame(s_mac, d_mac, 0x0800, ipv4(s_ip, d_ip, 17, data, 0x2000 if first else 8), vlan))
                elif v6:
                    conv.append(frame(s_mac, d_mac, 0x86DD, ipv6(s_ip, d_ip, proto, l4), vlan))
                elif kind < 0.08:  # fragments of datagrams (first: MF, ports; then offset 64 B): address pair
                    if i % 2 == 0:
                        conv.append(frame(s_mac, d_mac, 0x0800, ipv4(s_ip, d_ip, proto, l4, 0x2000), vlan))
                    else:
                        conv.append(frame(s_mac, d_mac, 0x0800, ipv4(s_ip, d_ip, proto, body.rjust(26, b"\0"), 8), vlan))
                else:
                    conv.append(frame(s_mac, d_mac, 0x0800, ipv4(s_ip, d_ip, proto, l4), vlan))
        frames.append(conv)
    # interleave the conversations: frame i of every flow, then frame i + 1
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        t = 0
        for i in range(2 * k):
            for conv in frames:
                fr = conv[i]
                if len(fr) < 60:
                    fr = fr[:-4].ljust(56, b"\0") + fr[-4:]  # pad before the tag: it stays last
                t += 1
                f.write(struct.pack("<IIII", 1700000000 + t // 1000000, t % 1000000, len(fr), len(fr)))
                f.write(fr)


if __name__ == "__main__":
    main()
