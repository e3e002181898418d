#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Captures of one tunnel kind each, for bench/decap_micro.sh (scapy builds them).

  decap_frames.py OUTDIR [N]

Writes N frames (1024) per file, each with its own inner flow (addresses and ports vary, so the
branch predictor does not learn one frame), inner frames of 64 bytes on the wire less the FCS:
  plain.pcap      IPv4/TCP, no tunnel (what every other frame of a decap port costs)
  plain_vlan.pcap the same behind an 802.1Q tag
  vxlan.pcap      VXLAN (RFC 7348, UDP 4789), VNI 100
  geneve.pcap     GENEVE (RFC 8926, UDP 6081), VNI 100, one 8-byte option
  gtpu.pcap       GTP-U G-PDU (3GPP TS 29.281, UDP 2152), TEID 7, a PDU session container
  gre_teb.pcap    GRE (RFC 2784) carrying Ethernet (0x6558), a key
  erspan2.pcap    ERSPAN type II (GRE 0x88BE, draft-foschiano-erspan), session 5
  erspan3.pcap    ERSPAN type III (GRE 0x22EB), session 5
  vxlan6.pcap     VXLAN over IPv6
"""
import os
import sys

from scapy.all import Ether, Dot1Q, IP, IPv6, UDP, TCP, GRE, wrpcap
from scapy.layers.vxlan import VXLAN
from scapy.contrib.geneve import GENEVE, GeneveOptions
from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer
from scapy.contrib.erspan import ERSPAN_II, ERSPAN_III

OUT = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
O = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def inner_ip(i):
    return IP(src="10.%d.%d.1" % (i >> 8 & 255, i & 255), dst="10.200.0.%d" % (1 + i % 250)) / TCP(sport=1024 + i, dport=80)


def inner_eth(i):
    return Ether(src="02:aa:00:00:%02x:%02x" % (i >> 8 & 255, i & 255), dst="02:bb:00:00:00:01") / inner_ip(i)


def outer4(i):
    return Ether(**O) / IP(src="192.0.2.%d" % (1 + i % 200), dst="192.0.2.254")


KINDS = {
    "plain": lambda i: inner_eth(i),
    "plain_vlan": lambda i: Ether(**O) / Dot1Q(vlan=10) / inner_ip(i),
    "vxlan": lambda i: outer4(i) / UDP(sport=49152 + i % 1000, dport=4789) / VXLAN(vni=100) / inner_eth(i),
    "geneve": lambda i: outer4(i) / UDP(sport=49152 + i % 1000, dport=6081) /
    GENEVE(vni=100, proto=0x6558, options=[GeneveOptions(classid=0x0102, type=0x80, data=b"\x00\x00\x00\x01")]) / inner_eth(i),
    "gtpu": lambda i: outer4(i) / UDP(sport=2152, dport=2152) /
    GTP_U_Header(teid=7, E=1, next_ex=0x85) / GTPPDUSessionContainer(type=0, QFI=9) / inner_ip(i),
    "gre_teb": lambda i: outer4(i) / GRE(proto=0x6558, key_present=1, key=100) / inner_eth(i),
    "erspan2": lambda i: outer4(i) / GRE(proto=0x88BE, seqnum_present=1, seqence_number=i) / ERSPAN_II(session_id=5) / inner_eth(i),
    "erspan3": lambda i: outer4(i) / GRE(proto=0x22EB, seqnum_present=1, seqence_number=i) / ERSPAN_III(session_id=5) / inner_eth(i),
    "vxlan6": lambda i: Ether(**O) / IPv6(src="2001:db8::%x" % (1 + i), dst="2001:db8::ffff") /
    UDP(sport=49152 + i % 1000, dport=4789) / VXLAN(vni=100) / inner_eth(i),
}

os.makedirs(OUT, exist_ok=True)
for name, make in KINDS.items():
    wrpcap(os.path.join(OUT, name + ".pcap"), [make(i) for i in range(N)])
