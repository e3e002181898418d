#!/usr/bin/env python3
"""pcap_equal.py A B: exit 0 when two classic pcap files hold the same frames, byte for byte, in
order (timestamps are ignored); otherwise print the first difference and exit 1."""
import struct
import sys


def frames(path):
    """[(frame bytes, original length)] of a classic pcap file (either byte order, us or ns);
    a record cut short by the end of the file ends the list."""
    out = []
    with open(path, 'rb') as f:
        magic = f.read(24)[:4]
        if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
            end = '<'
        elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
            end = '>'
        else:
            raise ValueError(f'{path}: not a classic pcap file')
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return out
            _, _, caplen, origlen = struct.unpack(end + 'IIII', rec)
            data = f.read(caplen)
            if len(data) < caplen:
                return out
            out.append((data, origlen))


def main():
    a, b = frames(sys.argv[1]), frames(sys.argv[2])
    for i, (fa, fb) in enumerate(zip(a, b)):
        if fa[0] != fb[0]:
            print(f'frame {i + 1} differs: {len(fa[0])} B vs {len(fb[0])} B')
            return 1
    if len(a) != len(b):
        print(f'{len(a)} frames vs {len(b)} frames')
        return 1
    print(f'{len(a)} frames identical')
    return 0


if __name__ == '__main__':
    sys.exit(main())
