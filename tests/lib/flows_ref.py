#!/usr/bin/env python3
"""Plain reference of the flow metering of docs/FLOWS.md (no DPDK, no spanbox code): aggregate the
frames of classic pcap files into unidirectional flows with the same key and timing rules as
shared/flowtable.c, written from the text of include/spanbox/flowtable.h.

usage: flows_ref.py --active S --idle S [--capacity N] [--decap-vxlan PORT] [--biflow] CAPTURE...

Capture i is ingress port i. Key: IP version, source, destination, protocol, ports (TCP/UDP/SCTP,
not for later fragments), outer and inner VLAN id, port. Counts IP octets (IPv4 total length, IPv6
40 + payload length). A frame whose flow is idle >= idle or began >= active before it closes that
flow first; a TCP FIN or RST closes its flow after counting. At the end of each capture every flow
closes. --capacity N: at most N flows at once; a new flow first pushes out the oldest one (in
creation order: a flow split by a timeout is a new one), as a full table does. --decap-vxlan: a
frame that scapy decodes as VXLAN to UDP destination port PORT (4789: IANA's) counts as its inner
Ethernet frame, as behind a port whose ingress terminates VXLAN (needs scapy: /usr/bin/python3).
--biflow: biflows (RFC 5103): both directions of a flow in one record, forward the direction of its
first frame; a biflow ends on a TCP RST, or once each direction has sent a FIN (the frame counted).
Prints one TSV line per flow, as sbx-flows-pcap --records does (without the reason):
  ipver src dst proto sport dport vlan inner_vlan port packets bytes first_ms last_ms tcp_flags
and with --biflow: ... tcp_flags rev_packets rev_bytes rev_tcp_flags
"""
import argparse
import ipaddress
import struct
import sys

TAGS = (0x8100, 0x88A8, 0x9100)


def pcap_frames(path):
    """(time ns, bytes) of every frame of a classic pcap (either byte order, us or ns)."""
    data = open(path, "rb").read()
    magic = data[:4]
    table = {b"\xd4\xc3\xb2\xa1": ("<", 1000), b"\xa1\xb2\xc3\xd4": (">", 1000),
             b"\x4d\x3c\xb2\xa1": ("<", 1), b"\xa1\xb2\x3c\x4d": (">", 1)}
    if magic not in table:
        raise SystemExit("flows_ref.py: %s: not a classic pcap" % path)
    end, mult = table[magic]
    linktype = struct.unpack(end + "I", data[20:24])[0]
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack(end + "IIII", data[off:off + 16])
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if linktype in (12, 14, 101) and frame:  # raw IP: an Ethernet header, as the tool does
            frame = b"\0" * 12 + (b"\x86\xdd" if frame[0] >> 4 == 6 else b"\x08\x00") + frame
        elif linktype != 1:
            frame = b""
        yield sec * 1000000000 + frac * mult, frame


def parse(f, port):
    """(key, ip octets, tcp flags) or None when not metered."""
    if len(f) < 14:
        return None
    off, vlans = 12, []
    et = struct.unpack_from("!H", f, 12)[0]
    while et in TAGS:
        if len(vlans) == 8 or len(f) < off + 6:
            return None
        vlans.append(struct.unpack_from("!H", f, off + 2)[0] & 0xFFF)
        off += 4
        et = struct.unpack_from("!H", f, off)[0]
    off += 2
    if et in (0x8847, 0x8848):
        for _ in range(8):
            if len(f) < off + 4:
                break
            off += 4
            if f[off - 2] & 1:
                break
        if len(f) <= off:
            return None
        et = {4: 0x0800, 6: 0x86DD}.get(f[off] >> 4, 0)
    vlan = vlans[0] if vlans else 0
    inner = vlans[1] if len(vlans) > 1 else 0
    sport = dport = flags = 0
    if et == 0x0800:
        if len(f) < off + 20 or f[off] >> 4 != 4:
            return None
        ihl = (f[off] & 15) * 4
        tot = struct.unpack_from("!H", f, off + 2)[0]
        if ihl < 20 or len(f) < off + ihl or tot < ihl:
            return None
        proto = f[off + 9]
        src, dst = f[off + 12:off + 16], f[off + 16:off + 20]
        l4 = off + ihl if struct.unpack_from("!H", f, off + 6)[0] & 0x1FFF == 0 else None
        ver, octets = 4, tot
    elif et == 0x86DD:
        if len(f) < off + 40 or f[off] >> 4 != 6:
            return None
        plen = struct.unpack_from("!H", f, off + 4)[0]
        octets = 40 + plen if plen else len(f) - off
        src, dst = f[off + 8:off + 24], f[off + 24:off + 40]
        nh, p, l4 = f[off + 6], off + 40, None
        for _ in range(8):
            if nh in (0, 43, 60, 51):
                if len(f) < p + 2:
                    break
                hlen = (f[p + 1] + 2) * 4 if nh == 51 else (f[p + 1] + 1) * 8
                nh, p = f[p], p + hlen
            elif nh == 44:
                if len(f) < p + 8:
                    break
                later = struct.unpack_from("!H", f, p + 2)[0] & 0xFFF8
                nh = f[p]
                if later:
                    p = None
                    break
                p += 8
            else:
                break
        proto, l4, ver = nh, p, 6
    else:
        return None
    if l4 is not None and proto in (6, 17, 132) and len(f) >= l4 + 4:
        sport, dport = struct.unpack_from("!HH", f, l4)
        if proto == 6 and len(f) >= l4 + 14:
            flags = f[l4 + 13]
    return (ver, bytes(src), bytes(dst), proto, sport, dport, vlan, inner, port), octets, flags


def vxlan_inner(frames, udp_port):
    """The frames of @frames with each VXLAN datagram (scapy's decoding) replaced by its payload."""
    from scapy.layers.l2 import Ether
    from scapy.layers.inet import UDP
    from scapy.layers.vxlan import VXLAN
    for now, f in frames:
        p = Ether(f)
        if UDP in p and p[UDP].dport == udp_port and VXLAN in p:
            f = bytes(p[VXLAN].payload)
        yield now, f


def meter(paths, active, idle, capacity=0, decap_port=0, biflow=False):
    out = []
    for port, path in enumerate(paths):
        flows, now = {}, 0
        frames = pcap_frames(path)
        if decap_port:
            frames = vxlan_inner(frames, decap_port)
        for now, f in frames:
            p = parse(f, port)
            if p is None:
                continue
            key, octets, flags = p
            turned = False
            if biflow:  # one entry for both directions: the smaller (address, port) end first
                a, b = (key[1], key[4]), (key[2], key[5])
                turned = a > b
                if turned:
                    key = (key[0], key[2], key[1], key[3], key[5], key[4]) + key[6:]
            fl = flows.get(key)
            if fl and now > fl[1] and now - fl[1] >= idle or fl and now > fl[0] and now - fl[0] >= active:
                out.append((key, fl))
                fl = None
            if fl is None:
                flows.pop(key, None)  # a new flow: last in creation order
                if capacity and len(flows) >= capacity:
                    oldest = next(iter(flows))
                    out.append((oldest, flows.pop(oldest)))
                # first, last, packets, octets, flags, reverse packets, octets, flags, turned, FINs
                fl = flows[key] = [now, now, 0, 0, 0, 0, 0, 0, turned, 0]
            fl[1] = max(fl[1], now)
            fwd = turned == fl[8]
            i = 2 if fwd else 5
            fl[i] += 1
            fl[i + 1] += octets
            fl[i + 2] |= flags
            if key[3] == 6 and flags & 0x05:
                if biflow and not flags & 0x04:  # a biflow ends on a RST or FINs both ways
                    fl[9] |= 1 if fwd else 2
                    if fl[9] != 3:
                        continue
                out.append((key, flows.pop(key)))
        out.extend(flows.items())
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--active", type=float, default=60)
    ap.add_argument("--idle", type=float, default=15)
    ap.add_argument("--capacity", type=int, default=0)
    ap.add_argument("--decap-vxlan", type=int, default=0, metavar="PORT")
    ap.add_argument("--biflow", action="store_true")
    ap.add_argument("captures", nargs="+")
    a = ap.parse_args()
    for key, fl in meter(a.captures, int(a.active * 1e9), int(a.idle * 1e9), a.capacity, a.decap_vxlan,
                         a.biflow):
        if fl[8]:  # the first frame's direction is forward
            key = (key[0], key[2], key[1], key[3], key[5], key[4]) + key[6:]
        ver, src, dst = key[0], key[1], key[2]
        addr = ipaddress.IPv4Address if ver == 4 else ipaddress.IPv6Address
        rev = (fl[5], fl[6], fl[7]) if a.biflow else ()
        print("\t".join(str(v) for v in (ver, addr(src), addr(dst)) + key[3:] +
                        (fl[2], fl[3], fl[0] // 1000000, fl[1] // 1000000, fl[4]) + rev))


if __name__ == "__main__":
    sys.exit(main())
