#!/usr/bin/env python3
"""GENEVE and GTP-U captures for tests/e2e/63c_ingress_geneve_gtpu.sh (scapy builds them).

  geneve_gtpu_gen.py OUTDIR

Writes:
  geneve.pcap       GENEVE frames: IPv4 and IPv6 outer, with and without options (TLVs), an
                    802.1Q outer tag on some, VNIs 100 and 200; each carries an inner Ethernet frame
  geneve_inner.pcap the inner frames of geneve.pcap with VNI 100, in order (what a rule of VNI 100
                    must deliver)
  gtpu.pcap         GTP-U G-PDUs: IPv4 and IPv6 outer, inner IPv4 and IPv6, some with the PDU
                    session container extension header, TEIDs 7 and 8; plus an echo request
  gtpu_inner.pcap   the G-PDUs' inner IP packets behind an Ethernet header made of the outer
                    frame's MAC addresses and the inner IP version's EtherType (what the stage
                    synthesises), in order
  bad.pcap          malformed ones: GENEVE version 1, GENEVE carrying IPv4, GTP-U version 2,
                    GTP-U whose payload is no IP packet (counted by reason, dropped)
"""
import os
import sys

from scapy.all import Ether, Dot1Q, IP, IPv6, UDP, TCP, Raw, wrpcap
from scapy.contrib.geneve import GENEVE
from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer, GTPEchoRequest

out = sys.argv[1]
OUTER = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def inner_eth(i):
    return (Ether(src="02:aa:00:00:00:%02x" % (i % 256), dst="02:bb:00:00:00:01") /
            IP(src="10.0.0.%d" % (1 + i % 200), dst="10.0.1.1") / TCP(sport=1000 + i, dport=80) /
            Raw(bytes([i % 256]) * (10 + i % 50)))


def outer(i, v6, vlan):
    e = Ether(**OUTER)
    if vlan:
        e = e / Dot1Q(vlan=30)
    if v6:
        return e / IPv6(src="2001:db8::1", dst="2001:db8::2")
    return e / IP(src="192.0.2.1", dst="192.0.2.2")


geneve, geneve_inner = [], []
for i in range(40):
    vni = 100 if i % 4 != 3 else 200
    g = GENEVE(vni=vni, proto=0x6558)
    if i % 2:  # 8 bytes of options: class 0x0102, type 0x03, length 1 word
        g = GENEVE(vni=vni, proto=0x6558, optionlen=2, options=b"\x01\x02\x03\x01\xde\xad\xbe\xef")
    inner = inner_eth(i)
    geneve.append(outer(i, i % 3 == 0, i % 5 == 0) / UDP(sport=40000 + i, dport=6081) / g / inner)
    if vni == 100:
        geneve_inner.append(inner)

gtpu, gtpu_inner = [], []
for i in range(40):
    teid = 7 if i % 4 != 3 else 8
    if i % 2:
        ip = IPv6(src="2001:db8:1::%x" % (i + 1), dst="2001:db8:2::1") / UDP(sport=2000 + i, dport=53) / Raw(b"q" * (20 + i))
    else:
        ip = IP(src="172.16.0.%d" % (i + 1), dst="172.16.1.1") / UDP(sport=2000 + i, dport=53) / Raw(b"q" * (20 + i))
    if i % 3 == 0:
        h = GTP_U_Header(teid=teid, gtp_type=255, E=1, next_ex=0x85) / GTPPDUSessionContainer(type=1, QFI=9)
    else:
        h = GTP_U_Header(teid=teid, gtp_type=255)
    o = outer(i, i % 4 == 1, i % 6 == 0) / UDP(sport=2152, dport=2152) / h / ip
    gtpu.append(o)
    if teid == 7:
        et = 0x86DD if i % 2 else 0x0800
        gtpu_inner.append(Ether(src=OUTER["src"], dst=OUTER["dst"], type=et) / ip)
gtpu.append(outer(99, False, False) / UDP(sport=2152, dport=2152) / GTP_U_Header(teid=0, gtp_type=1) / GTPEchoRequest())

bad = [
    outer(1, False, False) / UDP(sport=1, dport=6081) / GENEVE(version=1, vni=100, proto=0x6558) / inner_eth(1),
    outer(2, False, False) / UDP(sport=1, dport=6081) / GENEVE(vni=100, proto=0x0800) / IP(dst="10.9.9.9") / Raw(b"x" * 30),
    outer(3, False, False) / UDP(sport=2152, dport=2152) / GTP_U_Header(version=2, teid=7, gtp_type=255) / IP() / Raw(b"x" * 30),
    outer(4, False, False) / UDP(sport=2152, dport=2152) / GTP_U_Header(teid=7, gtp_type=255) / Raw(b"\x00" * 40),
]

for name, pkts in (("geneve", geneve), ("geneve_inner", geneve_inner), ("gtpu", gtpu),
                   ("gtpu_inner", gtpu_inner), ("bad", bad)):
    wrpcap(os.path.join(out, name + ".pcap"), pkts)
print(len(geneve), len(geneve_inner), len(gtpu), len(gtpu_inner), len(bad))
