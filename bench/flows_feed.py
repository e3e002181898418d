#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Frames of N flows as a pcap stream, for bench/flows.sh (issue #28).

  flows_feed.py OUT N [PASSES] [SEED] [CACHE]

Writes a pcap (microsecond, Ethernet) to OUT: N 64-byte IPv4/UDP frames (64 bytes on the wire
less the FCS), each of its own flow (source address 10.0.0.0 + i, source port 1024 + i % 60000,
destination 192.0.2.1:4789), in a random order (SEED, default 1) that is the same on every pass,
PASSES times (default 1; 0: until the reader goes away). OUT may be a FIFO: spanbox's pcap file
port (docs/PCAP_SECONDARY.md) reads it like a file, so a reader that keeps a port busy with N
flows needs no file of passes x N frames. A reader that closes the FIFO ends the feed (exit 0),
and so does one that opens and closes it before the real reader: the FIFO is opened again, the
stream starts over, at most 3 times. CACHE: a file of the records of a pass of the same N and SEED
written by an earlier run (OUT of PASSES 1 less its 24-byte pcap header), read instead of
building them again (a pass of 1,000,000 flows takes Python 2-3 s to build).
"""
import os
import random
import stat
import struct
import sys


def frames(n, seed):
    """The records (16-byte pcap header + 64-byte frame) of the n flows, in a random order."""
    eth = bytes.fromhex("020000000002" "020000000001" "0800")
    ip_len, udp_len = 50, 30
    # IPv4 header with source 0: its checksum, then each source added (one's complement)
    def csum(words):
        s = sum(words)
        while s >> 16:
            s = (s & 0xffff) + (s >> 16)
        return s
    dst = (192 << 24) | (0 << 16) | (2 << 8) | 1
    base = csum([0x4500, ip_len, 0, 0x4000, (64 << 8) | 17, dst >> 16, dst & 0xffff])
    order = list(range(n))
    random.Random(seed).shuffle(order)
    rec_hdr = struct.pack("<IIII", 0, 0, 64, 64)
    payload = bytes(udp_len - 8)
    out = []
    for i in order:
        src = (10 << 24) + i
        c = 0xffff - csum([base, src >> 16, src & 0xffff])
        ip = struct.pack("!BBHHHBBHII", 0x45, 0, ip_len, 0, 0x4000, 64, 17, c, src, dst)
        udp = struct.pack("!HHHH", 1024 + i % 60000, 4789, udp_len, 0)
        out.append(rec_hdr + eth + ip + udp + payload)  # 14 + 50 = 64 bytes
    return b"".join(out)


def feed(path, blob, passes):
    """Write the stream; the bytes written (less than a pass when the reader went away early)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    done = 0
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            try:
                import fcntl
                fcntl.fcntl(fd, 1031, 1 << 20)  # F_SETPIPE_SZ: 1 MiB, fewer wake-ups
            except OSError:
                pass
        done += os.write(fd, struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        view = memoryview(blob)
        p = 0
        while passes == 0 or p < passes:
            off = 0
            while off < len(view):
                w = os.write(fd, view[off:off + (1 << 20)])
                off += w
                done += w
            p += 1
    except BrokenPipeError:
        pass
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
    return done


def main():
    path, n = sys.argv[1], int(sys.argv[2])
    passes = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    cache = sys.argv[5] if len(sys.argv) > 5 else None
    if cache and os.path.exists(cache):
        with open(cache, "rb") as f:
            blob = f.read()[24:]
    else:
        blob = frames(n, seed)
    fifo = stat.S_ISFIFO(os.stat(path).st_mode) if os.path.exists(path) else False
    for _ in range(3 if fifo else 1):
        if feed(path, blob, passes) > len(blob):
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
