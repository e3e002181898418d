#!/usr/bin/python3
"""Captures of outer IP fragments for tests/e2e/63b_ingress_fragments.sh (issue #24 item 4), built
with scapy (Debian's python3-scapy: /usr/bin/python3).

usage: frags_gen.py DIR

Writes into DIR:
  plain.pcap    ordinary fragmented traffic, no tunnel: 4 IPv6 DNS responses in 2 fragments each
                (Fragment header), 3 IPv4 DNS responses in 2..3 fragments, an IPv4 TCP segment in 2
                fragments, 2 unfragmented DNS queries. A port with an erspan rule and non_tunnel pass
                must pass every frame as it is.
  tun.pcap      a port with a vxlan and an erspan rule, non_tunnel pass: VXLAN over IPv4 (in order;
                fragments reversed), VXLAN over IPv6, ERSPAN II over IPv4 and IPv6, fragmented and
                interleaved; an unfragmented VXLAN frame; IPv4 and IPv6 DNS fragments (UDP, so
                reassembled on a vxlan port, then passed whole); an IPv4 TCP fragment pair (passed
                as they are); a VXLAN datagram whose middle fragment is missing (dropped).
  tun_expected.pcap  what the port must send, in order: a tunnel's inner frame or a whole datagram
                when its last fragment arrives, a frame passed as it is at once.
  facts         shell assignments of the expected counters (frames, fragments, datagrams, decap,
                passed, dropped fragments).
"""
import os
import struct
import sys

from scapy.all import (DNS, DNSQR, DNSRR, IP, TCP, UDP, VXLAN, Ether, IPv6, IPv6ExtHdrFragment, Raw,
                       fragment, fragment6, wrpcap)

out = sys.argv[1]
MAC_A, MAC_B = "02:00:5e:00:00:0a", "02:00:5e:00:00:0b"


def inner(n, size):
    """An inner Ethernet frame of @size bytes, numbered @n."""
    base = Ether(src="02:00:00:00:01:%02x" % n, dst="02:00:00:00:02:%02x" % n) / \
        IP(src="10.1.0.%d" % n, dst="10.2.0.%d" % n, id=n) / UDP(sport=1000 + n, dport=2000)
    return base / Raw(bytes((n + i) & 0xff for i in range(size - len(base))))


def erspan2(seq, session, frame):
    """GRE (S bit, protocol 0x88BE) + ERSPAN II header (version 1, VLAN 0, session) + frame."""
    return struct.pack("!HHI", 0x1000, 0x88BE, seq) + struct.pack("!HHI", 0x1000, session & 0x3FF, 0) + bytes(frame)


def dns_answer(n, v6):
    """A DNS response large enough to fragment (EDNS0-sized: ~1800 bytes of TXT records)."""
    q = DNS(id=n, qr=1, qd=DNSQR(qname="big%d.example." % n, qtype="TXT"),
            an=DNSRR(rrname="big%d.example." % n, type="TXT", rdata=[b"t" * 250] * 7))
    ip = IPv6(src="2001:db8:53::1", dst="2001:db8:c::%x" % n) if v6 else IP(src="192.0.2.53", dst="198.51.100.%d" % n, id=5300 + n)
    return ip / UDP(sport=53, dport=30000 + n) / q


def eth(p):
    return Ether(src=MAC_A, dst=MAC_B) / p


def frags4(p, size):
    return [eth(f) for f in fragment(p, fragsize=size)]


FRAG6_ID = [0x1000]


def frags6(p, size):
    """@p has the IPv6 header and a payload: fragmented behind a Fragment header (an id of its own)."""
    ip = p.copy()
    payload = ip.payload
    ip.remove_payload()
    ip.nh = 44
    FRAG6_ID[0] += 1
    return [eth(f) for f in fragment6(ip / IPv6ExtHdrFragment(id=FRAG6_ID[0], nh=p.nh) / payload, size)]


def timed(frames):
    """The frames 1 ms apart, in this order (scapy stamps each when it is built)."""
    for k, f in enumerate(frames):
        f.time = 1700000000 + k / 1000
    return frames


def whole6(p):
    return eth(p)


# --- plain.pcap: nothing here is a tunnel
plain = []
for n in range(1, 5):
    plain += frags6(dns_answer(n, True), 1280)
for n in range(1, 4):
    plain += frags4(dns_answer(n, False), 1480 if n != 2 else 600)
plain += frags4(IP(src="192.0.2.80", dst="198.51.100.80", id=8080) / TCP(sport=80, dport=40000, flags="PA") /
                Raw(b"h" * 1200), 800)
for n in range(1, 3):
    plain.append(eth(IP(src="198.51.100.%d" % n, dst="192.0.2.53") / UDP(sport=30000 + n, dport=53) /
                     DNS(id=n, qd=DNSQR(qname="big%d.example." % n, qtype="TXT"))))
wrpcap(os.path.join(out, "plain.pcap"), timed(plain))

# --- tun.pcap: datagrams (name, frames, what the port sends once the datagram is whole, candidate)
O4 = dict(src="192.0.2.1", dst="198.51.100.7")
O6 = dict(src="2001:db8::1", dst="2001:db8::7")
d = {}
i1, i2, i3, i4, i5, i6 = inner(1, 1400), inner(2, 3000), inner(3, 1400), inner(4, 1400), inner(5, 1400), inner(6, 100)
d["vx4"] = (frags4(IP(id=101, **O4) / UDP(sport=40001, dport=4789) / VXLAN(vni=41) / i1, 600), i1)
d["vx4rev"] = (list(reversed(frags4(IP(id=102, **O4) / UDP(sport=40002, dport=4789) / VXLAN(vni=42) / i2, 1200))), i2)
d["vx6"] = (frags6(IPv6(**O6) / UDP(sport=40003, dport=4789) / VXLAN(vni=43) / i3, 700), i3)
d["es4"] = (frags4(IP(id=104, proto=47, **O4) / Raw(erspan2(1, 301, i4)), 800), i4)
d["es6"] = (frags6(IPv6(nh=47, **O6) / Raw(erspan2(2, 302, i5)), 600), i5)
dns4, dns6 = dns_answer(7, False), dns_answer(8, True)
d["dns4"] = (frags4(dns4, 800), eth(dns4))
d["dns6"] = (frags6(dns6, 800), whole6(dns6))
lost = frags4(IP(id=109, **O4) / UDP(sport=40009, dport=4789) / VXLAN(vni=49) / inner(9, 1400), 500)
d["lost"] = ([lost[0], lost[2]], None)
tcp = frags4(IP(id=110, src="192.0.2.80", dst="198.51.100.80") / TCP(sport=80, dport=40000, flags="PA") /
             Raw(b"h" * 1200), 800)
single = eth(IP(**O4) / UDP(sport=40006, dport=4789) / VXLAN(vni=46) / i6)

# the order on the wire: vx6 and es4 interleaved, the others one after the other
order = []  # (frame, datagram name or None, output when passed at once)
order += [(f, "vx4", None) for f in d["vx4"][0]]
order.append((single, None, i6))
order += [(f, "vx4rev", None) for f in d["vx4rev"][0]]
a, b = d["vx6"][0], d["es4"][0]
for k in range(max(len(a), len(b))):
    if k < len(a):
        order.append((a[k], "vx6", None))
    if k < len(b):
        order.append((b[k], "es4", None))
order.append((d["lost"][0][0], "lost", None))
order += [(f, "es6", None) for f in d["es6"][0]]
order += [(f, None, f) for f in tcp]
order += [(f, "dns4", None) for f in d["dns4"][0]]
order.append((d["lost"][0][1], "lost", None))
order += [(f, "dns6", None) for f in d["dns6"][0]]

expected, seen = [], {}
for f, name, now in order:
    if name is None:
        expected.append(now)
        continue
    seen[name] = seen.get(name, 0) + 1
    if seen[name] == len(d[name][0]) and d[name][1] is not None:
        expected.append(d[name][1])
wrpcap(os.path.join(out, "tun.pcap"), timed([f for f, _, _ in order]))
wrpcap(os.path.join(out, "tun_expected.pcap"), timed([f.copy() for f in expected]))
frags = sum(len(v[0]) for v in d.values())
with open(os.path.join(out, "facts"), "w") as fh:
    fh.write("PLAIN_FRAMES=%d\n" % len(plain))
    fh.write("TUN_FRAMES=%d\nTUN_FRAGMENTS=%d\nTUN_DATAGRAMS=%d\n" % (len(order), frags, len(d) - 1))
    fh.write("TUN_DECAP=6\nTUN_PASSED=%d\nTUN_LOST=%d\nTUN_EXPECTED=%d\n" % (2 + len(tcp), len(d["lost"][0]), len(expected)))
