#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Turn a ClassBench filter file into the rule tables of spanbox maps (docs/MAPS.md).

ClassBench (D. E. Taylor, J. S. Turner, "ClassBench: A Packet Classification Benchmark",
INFOCOM 2005) writes one filter a line, as its db_generator prints it:
    @SRC/LEN<tab>DST/LEN<tab>SPLO : SPHI<tab>DPLO : DPHI<tab>PROTO/MASK<tab>FLAGS/MASK
The filters are dealt round-robin over MAPS maps, in order (the first filter of each map first);
every rule passes; /0 and 0 : 65535 are "any"; ports are kept only for TCP, UDP and SCTP (a spanbox
rule with ports must name one of those); the flags field is not a spanbox rule field and is left out.

    bench/classbench2json.py FILTERS MAPS [MAX_RULES] > rules.json
    RULES_FILE=rules.json MAPS=16 bench/maps_micro.sh
"""
import json
import sys


def rule(line):
    f = line[1:].rstrip("\n").split("\t")
    r = {"action": "pass"}
    if not f[0].endswith("/0"):
        r["src"] = f[0]
    if not f[1].endswith("/0"):
        r["dst"] = f[1]
    sp = [int(x) for x in f[2].split(":")]
    dp = [int(x) for x in f[3].split(":")]
    pv, pm = (int(x, 16) for x in f[4].split("/"))
    if pm == 0xFF:
        r["ip_proto"] = pv
    if pm == 0xFF and pv in (6, 17, 132):
        if sp != [0, 65535]:
            r["src_port"] = "%d-%d" % tuple(sp)
        if dp != [0, 65535]:
            r["dst_port"] = "%d-%d" % tuple(dp)
    return r


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    nmaps = int(sys.argv[2])
    limit = int(sys.argv[3]) if len(sys.argv) == 4 else None
    maps = [[] for _ in range(nmaps)]
    k = 0
    with open(sys.argv[1]) as f:
        for line in f:
            if not line.startswith("@") or (limit is not None and k >= limit):
                continue
            maps[k % nmaps].append(rule(line))
            k += 1
    json.dump({"maps": [{"rules": m} for m in maps]}, sys.stdout)


if __name__ == "__main__":
    main()
