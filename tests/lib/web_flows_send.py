#!/usr/bin/env python3
"""Known flows for the page's top talkers (tests/e2e/95f_web_flows.sh, tests/web/flows.test.mjs).

usage: web_flows_send.py IFACE BATCH     (run with the python3 that has scapy)

Sends the flows of BATCH (1 or 2) on IFACE (the kernel side of a net_tap port) through one
AF_PACKET socket, each flow's frames spread evenly over SPREAD_S (so that a record lasts about that
long and its average rate means something; gaps far below the test's 2 s idle timeout), and prints them as one JSON line: a list of
{src, sport, dst, dport, proto, vlan, packets, bytes} where bytes are IP octets (IPv4 total length,
as IPFIX octetDeltaCount and the flow table count them). Batch 1 has four flows whose order by bytes
(big, mid, small, tcp) differs from their order by packets (small, mid, big, tcp): many small frames
against few big ones. Batch 2 is one flow larger than all of them in both orders (the refresh).
"""
import json
import sys
import time

from scapy.all import IP, TCP, UDP, Dot1Q, Ether, Raw, conf

# name, src, dst, proto, sport, dport, vlan, frames, IP length of each
BATCHES = {
    "1": [("big", "10.28.0.1", "10.28.1.1", 17, 1001, 2001, 0, 30, 1400),
          ("mid", "10.28.0.3", "10.28.1.3", 17, 1003, 2003, 0, 100, 250),
          ("small", "10.28.0.2", "10.28.1.2", 17, 1002, 2002, 0, 300, 60),
          ("tcp", "10.28.0.4", "10.28.1.4", 6, 1004, 80, 28, 20, 600)],
    "2": [("new", "10.28.0.5", "10.28.1.5", 17, 1005, 2005, 0, 400, 1000)],
}
SPREAD_S = 0.6


def frame(src, dst, proto, sport, dport, vlan, iplen):
    l4 = UDP(sport=sport, dport=dport) if proto == 17 else TCP(sport=sport, dport=dport, flags="A")
    hdr = 20 + (8 if proto == 17 else 20)
    p = IP(src=src, dst=dst) / l4 / Raw(b"\x5a" * (iplen - hdr))
    eth = Ether(src="02:00:00:00:28:01", dst="02:00:00:00:28:02")
    return bytes(eth / Dot1Q(vlan=vlan) / p if vlan else eth / p)


def main():
    iface, batch = sys.argv[1], BATCHES[sys.argv[2]]
    # (when, frame): flow f's k-th frame at k / frames of SPREAD_S
    sched = sorted((k * SPREAD_S / f[7], n, frame(*f[1:7], f[8])) for n, f in enumerate(batch) for k in range(f[7]))
    s = conf.L2socket(iface=iface)
    t0 = time.monotonic()
    for when, _, fr in sched:
        late = t0 + when - time.monotonic()
        if late > 0:
            time.sleep(late)
        s.send(fr)
    s.close()
    print(json.dumps([{"name": f[0], "src": f[1], "dst": f[2], "proto": f[3], "sport": f[4], "dport": f[5],
                       "vlan": f[6], "packets": f[7], "bytes": f[7] * f[8]} for f in batch]))


if __name__ == "__main__":
    main()
