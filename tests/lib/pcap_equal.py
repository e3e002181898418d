#!/usr/bin/env python3
"""pcap_equal.py A B: exit 0 when two classic pcap files hold the same frames, byte for byte, in
order (timestamps are ignored); otherwise print the first difference and exit 1."""
import struct
import sys


def frames(path):
    with open(path, 'rb') as f:
        hdr = f.read(24)
        magic = hdr[:4]
        if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
            end = '<'
        elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
            end = '>'
        else:
            raise SystemExit(f'{path}: not a classic pcap file')
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            _, _, caplen, origlen = struct.unpack(end + 'IIII', rec)
            yield caplen, origlen, f.read(caplen)


def main():
    a, b = list(frames(sys.argv[1])), list(frames(sys.argv[2]))
    for i, (fa, fb) in enumerate(zip(a, b)):
        if fa[2] != fb[2]:
            print(f'frame {i + 1} differs: {len(fa[2])} B vs {len(fb[2])} B')
            return 1
    if len(a) != len(b):
        print(f'{len(a)} frames vs {len(b)} frames')
        return 1
    print(f'{len(a)} frames identical')
    return 0


sys.exit(main())
