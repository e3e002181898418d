#!/usr/bin/env python3
"""Rule tables and frames of tests/e2e/26c_maps_live.sh (issue #27, maps changed at run time).

  rules KIND N OUT     a JSON array of N rules: N - 1 fillers that never match the test's frames
                       (sources in 10.0.0.0/8, each a distinct /32 with a port; KIND picks the
                       filler set, so that two kinds give two different tables) and a last rule:
                         all   pass every UDP frame
                         even  pass UDP frames from 02:00:00:00:0a:01 (those of even sequence numbers)
                         none  a filler like the others
                       "bad:<index>:<key>:<json value>" as KIND: rule <index> gets that field
  frames PHASE N OUT   N UDP frames 192.0.2.1:5000 -> 192.0.2.2:1000 (pcap), payload "SBXML" + phase
                       byte + sequence number (4 bytes): even ones from 02:00:00:00:0a:01, odd ones
                       from 02:00:00:00:0a:03 (one flow: the kernel keeps them in order)
  send PCAP IFACE [STARTED [FPS]]  send the frames of PCAP on IFACE (a scapy L2 socket), FPS (RATE) a second;
                       touch STARTED when the first is about to go
  seqs PHASE           read "<udp payload hex>" lines (tshark) on stdin, print the sequence numbers
                       of that phase in order
"""
import json
import struct
import sys

RATE = 6000  # frames a second sent (send): 30,000 frames span 5 s, a change of 16,384 rules


def filler(kind, i):
    b = (i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff
    r = {"action": "pass", "src": "10.%d.%d.%d/32" % b, "ip_proto": 17, "dst_port": (i * 7 + kind) % 65536}
    return r


def rules(kind, n):
    bad = None
    if kind.startswith("bad:"):
        _, idx, key, val = kind.split(":", 3)
        bad = (int(idx), key, json.loads(val))
        kind = "all"
    base = {"all": 1, "even": 2, "none": 3}[kind]
    out = [filler(base, i) for i in range(n - 1)]
    if kind == "all":
        out.append({"action": "pass", "ip_proto": 17})
    elif kind == "even":
        out.append({"action": "pass", "ip_proto": 17, "src_mac": "02:00:00:00:0a:01"})
    else:
        out.append(filler(base, n - 1))
    if bad is not None:
        out[bad[0]][bad[1]] = bad[2]
    return out


def frames(phase, n, path):
    from scapy.all import Ether, IP, UDP, Raw, wrpcap
    pk = []
    for s in range(n):
        # one flow (the kernel keeps its frames in order); the parity in the source MAC
        pk.append(Ether(src="02:00:00:00:0a:01" if s % 2 == 0 else "02:00:00:00:0a:03", dst="02:00:00:00:0a:02") /
                  IP(src="192.0.2.1", dst="192.0.2.2") / UDP(sport=5000, dport=1000) /
                  Raw(b"SBXML" + bytes([phase]) + struct.pack(">I", s) + b"\0" * 8))
    wrpcap(path, pk)


def send(path, iface, started=None, rate=None):
    import time
    from scapy.all import conf, rdpcap
    frames = [bytes(p) for p in rdpcap(path)]
    s = conf.L2socket(iface=iface)
    if started:
        open(started, "w").close()
    rate = rate or RATE
    t0 = time.time()
    for i, f in enumerate(frames):  # rate frames a second: the traffic spans a change
        if i % 100 == 0:
            ahead = t0 + i / rate - time.time()
            if ahead > 0:
                time.sleep(ahead)
        s.send(f)
    s.close()
    print("# sent %d frames in %.2f s" % (len(frames), time.time() - t0), file=sys.stderr)


def seqs(phase):
    for line in sys.stdin:
        h = line.strip().split(",")[0].replace(":", "")
        try:
            b = bytes.fromhex(h)
        except ValueError:
            continue
        if len(b) >= 10 and b[:5] == b"SBXML" and b[5] == phase:
            print(struct.unpack(">I", b[6:10])[0])


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "rules":
        json.dump(rules(sys.argv[2], int(sys.argv[3])), open(sys.argv[4], "w"))
    elif cmd == "frames":
        frames(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif cmd == "send":
        send(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None, int(sys.argv[5]) if len(sys.argv) > 5 else None)
    elif cmd == "seqs":
        seqs(int(sys.argv[2]))
