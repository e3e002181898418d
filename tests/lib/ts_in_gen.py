#!/usr/bin/env python3
"""Timestamps-in captures for tests/e2e/63d_ingress_timestamps.sh (scapy builds the plain frames,
the AVSP header and the Metamako trailer are put in as Wireshark's packet-avsp.c and
packet-metamako.c read them).

  ts_in_gen.py OUTDIR NOW_S

NOW_S: the test's clock (UTC seconds); every good frame's time is NOW_S - 1000 s + i ms + i ns.
Writes (classic pcap, microsecond records at the frame's time):
  arista.pcap          AVSP timestamp headers after the source MAC: 64-bit UTC (0x0110), 64-bit TAI
                       (0x0010, TAI = UTC + 37 s), 48-bit UTC (0x0120), 48-bit TAI (0x0020), and the
                       J2 versions 0x0111 / 0x0021; 3 frames without a header (passed as they are);
                       malformed: a header cut short, subtype 3, version 0x0030, nanoseconds 10^9
  arista_out.pcap      what must come out of arista.pcap: the good frames without their header and
                       the 3 plain ones, in order
  arista_good.pcap     only the good frames (the recorder part), arista_good.times their UTC times
                       (ns), one a line
  metamako.pcap        frames with a 16-byte Metamako trailer (some with a trailer extension TLV);
                       malformed: nanoseconds 10^9, seconds 40 days off, a 20-byte frame
  metamako_out.pcap    the good frames without their trailer
  metamako_good.pcap   only the good frames, metamako_good.times their times (ns)
  fcs.pcap, fcs_out.pcap  Metamako trailers followed by a 4-byte FCS (ingress.timestamp.fcs)
Prints the counts.
"""
import struct
import sys

from scapy.all import Ether, IP, IPv6, UDP, TCP, Raw, wrpcap
from scapy.utils import PcapWriter

out, now_s = sys.argv[1], int(sys.argv[2])
T0 = (now_s - 1000) * 10**9


def plain(i):
    """A plain frame, IPv4/UDP, IPv6/TCP or IPv4/TCP, 60..200 bytes, its own EtherType after the MACs."""
    e = Ether(src="02:00:00:00:00:%02x" % (i % 250 + 1), dst="02:00:00:00:01:02")
    k = i % 3
    if k == 0:
        f = e / IP(src="192.0.2.1", dst="198.51.100.%d" % (i % 200 + 1)) / UDP(sport=1000 + i, dport=53) / Raw(b"q" * (20 + i % 90))
    elif k == 1:
        f = e / IPv6(src="2001:db8::1", dst="2001:db8::%x" % (i + 2)) / TCP(sport=2000 + i, dport=443) / Raw(b"t" * (10 + i % 70))
    else:
        f = e / IP(src="192.0.2.7", dst="198.51.100.7") / TCP(sport=3000 + i, dport=80, flags="A") / Raw(b"h" * (i % 40))
    return bytes(f)


def avsp(frame, version, ns, subtype=1, nsfield=None):
    """@frame with an AVSP header after its MACs: 64-bit (seconds 32, ns 32) or 48-bit (seconds' low 16, ns 32)."""
    secs, sub = divmod(ns, 10**9)
    if nsfield is not None:
        sub = nsfield
    if not version & 0x0100:  # TAI
        secs += 37
    if (version & 0xf0) == 0x20:
        ts = struct.pack("!HI", secs & 0xffff, sub)
    else:
        ts = struct.pack("!II", secs, sub)
    return frame[:12] + struct.pack("!HHH", 0xD28B, subtype, version) + ts + frame[12:]


def metamako(frame, ns, ext=b"", nsfield=None, device=0x0102, port=3, fcs=False):
    """@frame + original FCS + extensions + seconds + ns + flags + device + port (+ FCS)."""
    secs, sub = divmod(ns, 10**9)
    if nsfield is not None:
        sub = nsfield
    flags = 0x01 | (0x02 if ext else 0)
    t = frame + struct.pack("!I", 0x11223344) + ext + struct.pack("!IIBHB", secs, sub, flags, device, port)
    return t + (struct.pack("!I", 0xaabbccdd) if fcs else b"")


def write(name, frames):
    """frames: [(bytes, ns)] -> a pcap with microsecond records at each ns."""
    w = PcapWriter(out + "/" + name, linktype=1, sync=True)
    for b, ns in frames:
        p = Ether(b)
        p.time = ns / 1e9
        w.write(p)
    w.close()


VERSIONS = [0x0110, 0x0010, 0x0120, 0x0020, 0x0111, 0x0021]
a_in, a_out, a_good, a_times = [], [], [], []
for i in range(60):
    ns = T0 + i * 10**6 + i
    f = plain(i)
    h = avsp(f, VERSIONS[i % len(VERSIONS)], ns)
    a_in.append((h, ns))
    a_out.append((f, ns))
    a_good.append((h, ns))
    a_times.append(ns)
    if i % 20 == 5:  # a frame without a header now and then
        a_in.append((plain(100 + i), ns))
        a_out.append((plain(100 + i), ns))
bad = T0 + 500 * 10**6
a_in.append((avsp(plain(1), 0x0110, bad)[:22], bad))                 # cut short: 22 bytes
a_in.append((avsp(plain(2), 0x0020, bad, subtype=3), bad))           # subtype 3 (GRE TAP)
a_in.append((avsp(plain(3), 0x0030, bad), bad))                      # version 0x0030
a_in.append((avsp(plain(4), 0x0110, bad, nsfield=10**9), bad))       # nanoseconds 10^9
write("arista.pcap", a_in)
write("arista_out.pcap", a_out)
write("arista_good.pcap", a_good)
open(out + "/arista_good.times", "w").write("".join("%d\n" % t for t in a_times))

ext = struct.pack("!II", 0x00000005, 1 << 6 | 1 << 5 | 0)  # one TLV (sequence number tag 0), one data word, last
m_in, m_out, m_good, m_times = [], [], [], []
for i in range(50):
    ns = T0 + 7 * 10**8 + i * 10**6 + 3 * i
    f = plain(200 + i)
    t = metamako(f, ns, ext if i % 7 == 3 else b"", device=0x0100 + i % 2)
    m_in.append((t, ns))
    m_out.append((f, ns))
    m_good.append((t, ns))
    m_times.append(ns)
m_in.append((metamako(plain(5), bad, nsfield=10**9), bad))             # nanoseconds 10^9
m_in.append((metamako(plain(6), bad + 40 * 86400 * 10**9), bad))        # 40 days ahead of our clock
m_in.append((metamako(plain(7), bad)[-20:], bad))                       # 20 bytes: no room for a frame
write("metamako.pcap", m_in)
write("metamako_out.pcap", m_out)
write("metamako_good.pcap", m_good)
open(out + "/metamako_good.times", "w").write("".join("%d\n" % t for t in m_times))

f_in, f_out = [], []
for i in range(10):
    ns = T0 + 9 * 10**8 + i * 10**6
    f = plain(300 + i)
    f_in.append((metamako(f, ns, fcs=True), ns))
    f_out.append((f, ns))
write("fcs.pcap", f_in)
write("fcs_out.pcap", f_out)
print("arista %d frames (%d good), metamako %d (%d good), fcs %d" % (len(a_in), len(a_good), len(m_in), len(m_good), len(f_in)))
