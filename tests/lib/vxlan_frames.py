#!/usr/bin/env python3
"""vxlan_frames.py: frames for tests/e2e/66_mirror_vxlan_kernel.sh (no scapy: hand-built bytes).

  vxlan_frames.py make IN.pcap FLOWS.json
      writes the test's input frames to IN.pcap (classic pcap, Ethernet) and, per frame, its flow
      name (both directions of a flow share one) to FLOWS.json: IPv4 UDP and TCP flows in both
      directions, IPv6 UDP flows, an 802.1Q-tagged frame, an ARP frame; odd and even lengths from
      60 to 1400 bytes.
  vxlan_frames.py send IFACE IN.pcap GAP_MS
      sends every frame of IN.pcap out of IFACE (AF_PACKET, as it is), GAP_MS milliseconds apart
      (so that no GRO on the receiving side merges two of them).
  vxlan_frames.py check IN.pcap OUTER.pcap INNER4.pcap INNER6.pcap FLOWS.json PORT4 VNI4 PORT6 VNI6
      the checks of the test, one TAP line each (see the test).
"""
import json
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcap_equal import frames as pcap_frames  # noqa: E402


def csum(b):
    if len(b) & 1:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def ipv4(src, dst, proto, payload, ident):
    h = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(payload), ident, 0x4000, 64, proto, 0,
                    socket.inet_aton(src), socket.inet_aton(dst))
    h = h[:10] + struct.pack('!H', 0xffff - csum(h)) + h[12:]
    return h, h + payload


def l4(proto, sport, dport, body, pseudo, seq=0):
    if proto == 17:
        hdr = struct.pack('!HHHH', sport, dport, 8 + len(body), 0)
        off = 6
    else:
        hdr = struct.pack('!HHIIBBHHH', sport, dport, seq, 0, 0x50, 0x18, 65535, 0, 0)
        off = 16
    seg = hdr + body
    c = 0xffff - csum(pseudo + seg)
    return seg[:off] + struct.pack('!H', c or 0xffff) + seg[off + 2:]


def eth(dst, src, etype, payload, vlan=None):
    m = bytes.fromhex(dst.replace(':', '')) + bytes.fromhex(src.replace(':', ''))
    if vlan is not None:
        m += struct.pack('!HH', 0x8100, vlan)
    return m + struct.pack('!H', etype) + payload


def body(n, seed):
    return bytes((i * 7 + seed) & 0xff for i in range(n))


def frame4(flow, rev, proto, size, seed, vlan=None):
    (ma, mb, a, b, pa, pb) = flow
    if rev:
        ma, mb, a, b, pa, pb = mb, ma, b, a, pb, pa
    hl = 8 if proto == 17 else 20
    n = size - 14 - (4 if vlan is not None else 0) - 20 - hl
    pseudo = socket.inet_aton(a) + socket.inet_aton(b) + struct.pack('!BBH', 0, proto, hl + n)
    seg = l4(proto, pa, pb, body(n, seed), pseudo, seq=seed * 100000)
    _, pkt = ipv4(a, b, proto, seg, seed)
    return eth(mb, ma, 0x0800, pkt, vlan)


def frame6(flow, rev, size, seed):
    (ma, mb, a, b, pa, pb) = flow
    if rev:
        ma, mb, a, b, pa, pb = mb, ma, b, a, pb, pa
    n = size - 14 - 40 - 8
    sa, sb = socket.inet_pton(socket.AF_INET6, a), socket.inet_pton(socket.AF_INET6, b)
    pseudo = sa + sb + struct.pack('!IxxxB', 8 + n, 17)
    seg = l4(17, pa, pb, body(n, seed), pseudo)
    ip = struct.pack('!IHBB', 6 << 28, len(seg), 17, 64) + sa + sb
    return eth(mb, ma, 0x86dd, ip + seg)


def make(out, flows_out):
    u1 = ('02:00:00:00:aa:01', '02:00:00:00:bb:01', '192.168.10.1', '192.168.20.1', 40001, 53)
    u2 = ('02:00:00:00:aa:02', '02:00:00:00:bb:02', '192.168.10.2', '192.168.20.2', 40002, 5201)
    u3 = ('02:00:00:00:aa:03', '02:00:00:00:bb:03', '192.168.10.3', '192.168.20.3', 33333, 6000)
    t1 = ('02:00:00:00:aa:04', '02:00:00:00:bb:04', '192.168.10.4', '192.168.20.4', 51000, 443)
    t2 = ('02:00:00:00:aa:05', '02:00:00:00:bb:05', '192.168.10.5', '192.168.20.5', 52000, 80)
    v6 = ('02:00:00:00:aa:06', '02:00:00:00:bb:06', '2001:db8:10::6', '2001:db8:20::6', 41000, 123)
    v7 = ('02:00:00:00:aa:07', '02:00:00:00:bb:07', '2001:db8:10::7', '2001:db8:20::7', 41001, 514)
    sizes = [60, 61, 64, 77, 128, 333, 512, 999, 1000, 1400, 1399, 90]
    frames, names = [], []
    seed = 1
    for rnd in range(2):
        for name, fl, kind in (('u1', u1, 17), ('u2', u2, 17), ('u3', u3, 17), ('t1', t1, 6), ('t2', t2, 6),
                               ('v6', v6, 0), ('v7', v7, 0)):
            for rev in (False, True):
                size = sizes[(seed + rnd) % len(sizes)]
                if kind == 0:
                    size = max(size, 62 + 1)
                    frames.append(frame6(fl, rev, size, seed))
                else:
                    frames.append(frame4(fl, rev, kind, max(size, 60), seed))
                names.append(name)
                seed += 1
    frames.append(frame4(u1, False, 17, 301, seed, vlan=100))  # tagged: the flow hash looks through the tag
    names.append('u1')
    arp = struct.pack('!HHBBH', 1, 0x0800, 6, 4, 1) + bytes.fromhex('0200000000aa01'[2:]) + \
        socket.inet_aton('192.168.10.1') + b'\0' * 6 + socket.inet_aton('192.168.10.9')
    frames.append(eth('ff:ff:ff:ff:ff:ff', '02:00:00:00:aa:01', 0x0806, arp + b'\0' * 18))
    names.append('arp')
    with open(out, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack('<IIII', 1700000000 + i, 0, len(fr), len(fr)) + fr)
    with open(flows_out, 'w') as f:
        json.dump(names, f)


def frames(path):
    """The frames of a classic pcap file (tests/lib/pcap_equal.py reads it), bytes only."""
    return [data for data, _ in pcap_frames(path)]


def send(iface, path, gap_ms):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    for fr in frames(path):
        s.send(fr)
        time.sleep(gap_ms / 1000.0)


def tap(ok, what):
    print(('ok - ' if ok else 'not ok - ') + what)
    return ok


def check(inp, outer, in4, in6, flows_path, port4, vni4, port6, vni6):
    src = frames(inp)
    names = json.load(open(flows_path))
    bad = 0
    for fam, path in (('IPv4', in4), ('IPv6', in6)):
        got = frames(path)
        same = got == src
        if not same:
            bad += 1
            print('# %s outer: %d inner frames on the kernel VXLAN device, %d sent' % (fam, len(got), len(src)))
            for i, (a, b) in enumerate(zip(src, got)):
                if a != b:
                    print('#  first difference at frame %d:\n#   sent %s\n#   got  %s' % (i, a[:48].hex(), b[:48].hex()))
                    break
        tap(same, '%s outer: the kernel VXLAN device delivers the %d inner frames, byte for byte and in order, '
            'equal to the replayed input (got %d)' % (fam, len(src), len(got)))
    # the outer frames, parsed by hand (tshark decodes them in the test)
    by = {4: [], 6: []}
    for fr in frames(outer):
        et = struct.unpack('!H', fr[12:14])[0]
        if et == 0x0800 and fr[23] == 17:
            ip, udp, fam = fr[14:34], fr[34:42], 4
            hdr_ok = csum(ip) == 0xffff
            ucs_ok = struct.unpack('!H', udp[6:8])[0] == 0
        elif et == 0x86dd and fr[20] == 17:
            udp, fam = fr[54:62], 6
            ulen = struct.unpack('!H', fr[18:20])[0]
            pseudo = fr[22:54] + struct.pack('!IxxxB', ulen, 17)
            hdr_ok = True
            ucs_ok = struct.unpack('!H', udp[6:8])[0] != 0 and csum(pseudo + fr[54:54 + ulen]) == 0xffff
        else:
            continue
        sp, dp = struct.unpack('!HH', udp[:4])
        vx = fr[42:50] if fam == 4 else fr[62:70]
        by[fam].append(dict(sp=sp, dp=dp, flags=vx[0], vni=int.from_bytes(vx[4:7], 'big'), rsv=vx[1:4] + vx[7:8],
                            hdr=hdr_ok, ucs=ucs_ok, inner=fr[50:] if fam == 4 else fr[70:]))
    for fam, port, vni in ((4, port4, vni4), (6, port6, vni6)):
        o = by[fam]
        tap(len(o) == len(src) and all(x['dp'] == port and x['flags'] == 0x08 and x['rsv'] == b'\0\0\0\0' and
                                       x['vni'] == vni for x in o),
            'IPv%d outer frames (%d): UDP port %d, VXLAN flags 0x08, VNI %d, reserved bits 0' % (fam, len(o), port, vni))
        tap(all(x['hdr'] for x in o) and all(x['ucs'] for x in o),
            'IPv%d outer frames: %s' % (fam, 'IPv4 header checksum right, UDP checksum 0' if fam == 4 else
                                        'UDP checksum present and right (pseudo-header + datagram)'))
        tap([x['inner'] for x in o] == src, 'IPv%d outer frames: each carries its input frame unchanged' % fam)
        ports = {}
        for x, n in zip(o, names):
            ports.setdefault(n, set()).add(x['sp'])
        in_range = all(49152 <= x['sp'] <= 65535 for x in o)
        one_each = all(len(v) == 1 for v in ports.values())
        distinct = len({min(v) for v in ports.values()})
        print('# IPv%d source ports by flow: %s' % (fam, ', '.join('%s %s' % (k, sorted(v)) for k, v in sorted(ports.items()))))
        tap(in_range and one_each and distinct >= len(ports) - 1,
            'IPv%d outer frames: UDP source ports in 49152..65535, one per flow in both directions, %d distinct for '
            '%d flows' % (fam, distinct, len(ports)))
    if by[4] and by[6]:
        tap([x['sp'] for x in by[4]] == [x['sp'] for x in by[6]],
            'the source port depends on the frame only (the same in both sessions)')
    return bad


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'make':
        make(sys.argv[2], sys.argv[3])
    elif cmd == 'send':
        send(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    else:
        a = sys.argv[2:]
        check(a[0], a[1], a[2], a[3], a[4], int(a[5]), int(a[6]), int(a[7]), int(a[8]))
