#!/usr/bin/env python3
"""Read a pcapng file (little-endian sections, as spanbox's recorder writes them) into JSON on
stdout: {"shb": {option code: text}, "idb": [{"name", "linktype", "snaplen"}], "epb": [{"if",
"flags", "caplen", "origlen", "data" (hex)}], "isb": [{"if", "ifrecv", "ifdrop"}], "errors": [...]}.
Used by the capture tests (tests/e2e/75..77): independent of DPDK and of spanbox's own writer."""
import json
import struct
import sys


def options(body):
    out, off = [], 0
    while off + 4 <= len(body):
        code, ln = struct.unpack_from('<HH', body, off)
        if code == 0:
            break
        out.append((code, body[off + 4:off + 4 + ln]))
        off += 4 + ((ln + 3) & ~3)
    return out


def main(path):
    data = open(path, 'rb').read()
    res = {"shb": {}, "idb": [], "epb": [], "isb": [], "errors": []}
    off = 0
    while off < len(data):
        if off + 12 > len(data):
            res["errors"].append("trailing %d bytes at %d" % (len(data) - off, off))
            break
        btype, blen = struct.unpack_from('<II', data, off)
        if blen < 12 or blen % 4 or off + blen > len(data):
            res["errors"].append("bad block length %d at %d" % (blen, off))
            break
        if struct.unpack_from('<I', data, off + blen - 4)[0] != blen:
            res["errors"].append("trailing length differs at %d" % off)
        body = data[off + 8:off + blen - 4]
        if btype == 0x0A0D0D0A:
            magic, = struct.unpack_from('<I', body, 0)
            if magic != 0x1A2B3C4D:
                res["errors"].append("byte order magic %x" % magic)
            for c, v in options(body[16:]):
                res["shb"][str(c)] = v.decode(errors='replace')
        elif btype == 1:
            lt, _, snap = struct.unpack_from('<HHI', body, 0)
            name = ''
            for c, v in options(body[8:]):
                if c == 2:
                    name = v.decode(errors='replace')
            res["idb"].append({"name": name, "linktype": lt, "snaplen": snap})
        elif btype == 6:
            ifid, _, _, cap, orig = struct.unpack_from('<IIIII', body, 0)
            pkt = body[20:20 + cap]
            flags = None
            for c, v in options(body[20 + ((cap + 3) & ~3):]):
                if c == 2 and len(v) == 4:
                    flags, = struct.unpack('<I', v)
            res["epb"].append({"if": ifid, "flags": flags, "caplen": cap, "origlen": orig, "data": pkt.hex()})
        elif btype == 5:
            ifid, = struct.unpack_from('<I', body, 0)
            st = {"if": ifid}
            for c, v in options(body[12:]):
                if c == 4:
                    st["ifrecv"], = struct.unpack('<Q', v)
                if c == 5:
                    st["ifdrop"], = struct.unpack('<Q', v)
            res["isb"].append(st)
        off += blen
    json.dump(res, sys.stdout)


if __name__ == '__main__':
    main(sys.argv[1])
