#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Frames and config of tests/e2e/26e_maps_256.sh (issue #27 "Scale": 256 maps).

usage: maps256_gen.py DIR PREFIX LCORES(p,m,w) API_PORT TOKEN

Maps: 0..239 and 255 watch RX of p0 (241 maps with rules: 16 rte_acl context sets on p0), 240..253
watch RX of p2 (14 maps: one set), 254 is a collector watching RX of both. Map k (k != 254) has the
rule "pass UDP destination port 10000 + k"; maps 0, 63, 64, 127, 128, 255 (both ends of every
64-bit word of a struct sbx_mapset) also "pass UDP destination port 20000". Map k copies to tool
port t(k % 4) (net_pcap tx files, span: the frame unchanged).
Frames (scapy), UDP from 192.0.2.1:5000 to 198.51.100.1:
  p0: 1 + k % 3 frames to port 10000 + k for each map k of p0; 5 to port 20000 (the six maps at
      once); 7 to port 9999 (no map); 1 to each port 10240..10253 (maps of p2, not of p0): the
      collector's 7 + 14;
  p2: 1 + k % 3 frames to port 10000 + k for k in 240..253; 3 to port 10000 (map 0 is not on p2)
      and 4 to port 9999: the collector's 7.
Writes DIR/p0.pcap, DIR/p2.pcap, DIR/maps256.json (the config) and DIR/want.json: "passed"
{map id: frames}, "tools" {t0..t3: {UDP dst port: copies}}, "frames" {p0, p2}.
Map k has id 100 + k and name m<k>.
"""
import json
import sys

from scapy.all import IP, UDP, Ether, Raw, wrpcap

d, prefix, lcores, api_port, token = sys.argv[1:6]
lp, lm, lw = (int(x) for x in lcores.split(","))
TOGETHER = (0, 63, 64, 127, 128, 255)
COLLECTOR = 254
P0 = list(range(240)) + [255]
P2 = list(range(240, 254))


def frame(dport, n):
    return Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src="192.0.2.1", dst="198.51.100.1") / \
        UDP(sport=5000, dport=dport) / Raw(b"m256-%05d" % n)


want_passed = {k: 0 for k in range(256)}
tools = {"t%d" % i: {} for i in range(4)}
frames = {"p0": [], "p2": []}


def send(port, dport, maps):
    frames[port].append(frame(dport, len(frames[port])))
    for k in maps:
        want_passed[k] += 1
        t = tools["t%d" % (k % 4)]
        t[str(dport)] = t.get(str(dport), 0) + 1


for k in P0:
    for _ in range(1 + k % 3):
        send("p0", 10000 + k, [k])
for _ in range(5):
    send("p0", 20000, TOGETHER)
for _ in range(7):
    send("p0", 9999, [COLLECTOR])
for k in P2:
    send("p0", 10000 + k, [COLLECTOR])
for k in P2:
    for _ in range(1 + k % 3):
        send("p2", 10000 + k, [k])
for _ in range(3):
    send("p2", 10000, [COLLECTOR])
for _ in range(4):
    send("p2", 9999, [COLLECTOR])
wrpcap(d + "/p0.pcap", frames["p0"])
wrpcap(d + "/p2.pcap", frames["p2"])

maps = []
for k in range(256):
    m = {"id": 100 + k, "name": "m%d" % k, "destination": {"port": "t%d" % (k % 4)}, "encap": {"type": "span"}}
    if k == COLLECTOR:
        m["sources"] = [{"port": "p0", "direction": "rx"}, {"port": "p2", "direction": "rx"}]
        m["collector"] = True
    else:
        m["sources"] = [{"port": "p0" if k in P0 else "p2", "direction": "rx"}]
        m["rules"] = [{"action": "pass", "ip_proto": 17, "dst_port": 10000 + k}]
        if k in TOGETHER:
            m["rules"].append({"action": "pass", "ip_proto": 17, "dst_port": 20000})
    maps.append(m)
ports = [{"name": "p0", "devargs": "net_pcap0,rx_pcap=%s/p0.pcap" % d},
         {"name": "p1", "devargs": "net_pcap1,tx_pcap=%s/fwd0.pcap" % d},
         {"name": "p2", "devargs": "net_pcap2,rx_pcap=%s/p2.pcap" % d},
         {"name": "p3", "devargs": "net_pcap3,tx_pcap=%s/fwd2.pcap" % d}]
ports += [{"name": "t%d" % i, "devargs": "net_pcap%d,tx_pcap=%s/t%d.pcap" % (4 + i, d, i)} for i in range(4)]
cfg = {"eal": {"file_prefix": prefix, "socket_mem_mb": 512, "primary_lcore": lp, "mgmt_lcore": lm},
       "ports": ports, "workers": {"count": 1, "lcores": [lw]},
       "forwarding": {"xconnects": [["p0", "p1"], ["p2", "p3"]]},
       "mgmt": {"listen": "127.0.0.1", "port": int(api_port), "database": d + "/m256.db", "token": token},
       "maps": maps}
json.dump(cfg, open(d + "/maps256.json", "w"), indent=1)
json.dump({"passed": {str(100 + k): v for k, v in want_passed.items()}, "tools": tools,
           "frames": {p: len(f) for p, f in frames.items()}}, open(d + "/want.json", "w"), indent=1, sort_keys=True)
