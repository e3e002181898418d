#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Frames and the reference counts of tests/e2e/26d_map_rule_counters.sh (docs/MAPS.md "Per-rule
counters").

  frames SEED N OUT.pcap           N scapy-built frames (IPv4 from 192.0.2.0/24: the kernel sends
                                   none of those on the test's tap), of six kinds, each hitting a
                                   known rule of the test's maps (or none), 60 to 460 bytes
  model RULES.json PCAP...         the per-rule counts the frames of the PCAPs make: for each map of
                                   RULES.json ({"maps": [{"id", "rules"}]}) the packets and bytes of
                                   the frames whose decision each rule made (first match, pass or
                                   drop: tests/lib/map_model.py, the reference classifier), as JSON
                                   {"<id>": [[packets, bytes], ...]}
"""
import importlib.util
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("map_model", os.path.join(HERE, "map_model.py"))
mm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mm)


def frames(seed, n, out):
    from scapy.all import IP, TCP, UDP, Ether, Raw, wrpcap
    rnd = random.Random(seed)
    kinds = [  # (src, dst, proto, dport, tos)
        ("192.0.2.10", "203.0.113.9", "udp", 7, 0),        # map 40 rule 0 (drop)
        ("192.0.2.20", "203.0.113.9", "udp", 1200, 0),     # rule 1 (map 41 rule 0 too)
        ("192.0.2.30", "203.0.113.9", "tcp", 80, 0),       # rule 2
        ("192.0.2.40", "198.51.100.5", "udp", 5000, 0),    # rule 3
        ("192.0.2.50", "203.0.113.9", "udp", 5000, 184),   # rule 5 (DSCP 46)
        ("192.0.2.60", "203.0.113.9", "udp", 5000, 0),     # no rule of map 40 (until one is appended)
    ]
    pk = []
    for _ in range(n):
        src, dst, proto, dport, tos = kinds[rnd.choice([0, 1, 1, 1, 2, 2, 3, 4, 5, 5])]
        l4 = TCP(sport=rnd.randint(1024, 65535), dport=dport, flags="A") if proto == "tcp" else \
            UDP(sport=rnd.randint(1024, 65535), dport=dport)
        pk.append(Ether(src="02:00:00:00:0d:01", dst="02:00:00:00:0d:02") / IP(src=src, dst=dst, tos=tos) / l4 /
                  Raw(b"\x00" * rnd.randint(18, 418)))
    wrpcap(out, pk)


def model(rules_path, pcaps):
    with open(rules_path) as fh:
        j = json.load(fh)
    classify = mm.compile_maps([m["rules"] for m in j["maps"]])
    out = {str(m["id"]): [[0, 0] for _ in m["rules"]] for m in j["maps"]}
    for p in pcaps:
        for fr in mm.read_pcap(p):
            for m, r in zip(j["maps"], classify(mm.parse_frame(fr)).split()):
                if r != "-":
                    c = out[str(m["id"])][int(r[1:])]
                    c[0] += 1
                    c[1] += len(fr)
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    if sys.argv[1] == "frames":
        frames(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "model":
        model(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
