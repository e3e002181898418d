#!/usr/bin/env python3
"""Check how a tool group spread the flows of tests/lib/flows_gen.py (TAP lines).

usage: flows_check.py [--map FILE] INPUT.pcap NAME MEMBER.pcap...

Reads the flow number (last 4 bytes) of every frame. ok/not ok for: every frame of the input is in
exactly one member output (sum of members = input, no frame lost or duplicated); every flow's
frames, both directions, are on one member; each member holds 0.8..1.2 x the mean number of flows.
Prints "# member FILE: F flows, P frames" and writes "FLOW MEMBER" lines to NAME.map (for the
failover tests' comparisons) to FILE with --map.
"""
import struct
import sys
from collections import Counter, defaultdict


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return
    magic = struct.unpack("<I", data[:4])[0]
    end = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(end + "IIII", data[off:off + 16])
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def fid(fr):
    return struct.unpack("!I", fr[-4:])[0]


def main():
    args = sys.argv[1:]
    mapfile = None
    if args[0] == "--map":
        mapfile = args[1]
        args = args[2:]
    inp, name, members = args[0], args[1], args[2:]
    want = Counter(fid(fr) for fr in frames(inp))
    got = Counter()
    where = defaultdict(set)
    per_member = []
    for i, m in enumerate(members):
        c = Counter(fid(fr) for fr in frames(m))
        got.update(c)
        for f in c:
            where[f].add(i)
        per_member.append(len(c))
        print("# member %s: %d flows, %d frames" % (m, len(c), sum(c.values())))
    total_in, total_out = sum(want.values()), sum(got.values())
    ok = total_in == total_out and got == want
    print("%s - %s: every input frame on exactly one member (input %d frames, members %d)" %
          ("ok" if ok else "not ok", name, total_in, total_out))
    split = [f for f, s in where.items() if len(s) != 1]
    print("%s - %s: every flow (both directions) on one member (%d flows, %d split)" %
          ("ok" if not split and where else "not ok", name, len(where), len(split)))
    mean = len(where) / max(1, len(members))
    spread = all(0.8 * mean <= n <= 1.2 * mean for n in per_member)
    print("%s - %s: each member holds 0.8..1.2 x the mean %.1f flows (%s)" %
          ("ok" if spread and mean > 0 else "not ok", name, mean, " ".join(map(str, per_member))))
    if mapfile is None:
        return
    with open(mapfile, "w") as f:
        for fl in sorted(where):
            f.write("%d %s\n" % (fl, ",".join(str(i) for i in sorted(where[fl]))))


if __name__ == "__main__":
    main()
