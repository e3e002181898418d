#!/usr/bin/env python3
"""A minimal IPFIX-over-TCP collector for the tests (RFC 7011 message, set and template layout,
written from the RFC, no spanbox code): accepts connections one after the other on 127.0.0.1:PORT,
decodes every message and prints a JSON summary when it ends (after --seconds, or SIGTERM).

usage: ipfix_collect.py PORT --seconds S [--close-after BYTES] [--ready FILE] [--udp] [--rcvbuf BYTES]

--close-after: the first connection is closed by us once BYTES have been read (a collector that
goes away); the next ones are read to their end. Summary: {"connections": [{"bytes", "messages",
"records", "templates", "data_before_template", "bad", "seq_errors", "domains"}]}: records are
data records of sets whose template came earlier on that connection (--udp: one "connection",
every datagram a message; "template_messages" counts the datagrams that carried templates;
"first_data_s", "last_data_s": when the first and the last datagram with data records came, in
time.monotonic() seconds, for a rate); seq_errors counts messages
whose sequence number is not the previous one's plus its data records (RFC 7011 section 3.1).
"""
import argparse
import json
import signal
import socket
import struct
import sys
import time


def decode(buf, st):
    """Decode whole messages from the front of buf; returns the bytes left."""
    while len(buf) >= 16:
        ver, length, _, seq, dom = struct.unpack_from("!HHIII", buf, 0)
        if ver != 10 or length < 16:
            st["bad"] += 1
            return b""
        if len(buf) < length:
            break
        msg, buf = buf[:length], buf[length:]
        st["messages"] += 1
        st["domains"] = sorted(set(st["domains"]) | {dom})
        if st["next_seq"] is not None and seq != st["next_seq"]:
            st["seq_errors"] += 1
        n, off, had_tmpl = 0, 16, False
        while off + 4 <= len(msg):
            sid, slen = struct.unpack_from("!HH", msg, off)
            if slen < 4 or off + slen > len(msg):
                st["bad"] += 1
                break
            body = msg[off + 4:off + slen]
            if sid == 2:
                had_tmpl = True
                p = 0
                while p + 4 <= len(body):
                    tid, cnt = struct.unpack_from("!HH", body, p)
                    p += 4
                    rlen = 0
                    for _ in range(cnt):
                        ie, flen = struct.unpack_from("!HH", body, p)
                        p += 8 if ie & 0x8000 else 4
                        rlen += flen
                    st["tmpl"][tid] = rlen
                    st["templates"] += 1
            elif sid >= 256:
                rlen = st["tmpl"].get(sid)
                if not rlen:
                    st["data_before_template"] += 1
                else:
                    n += len(body) // rlen
            off += slen
        st["records"] += n
        st["template_messages"] += had_tmpl
        st["next_seq"] = (seq + n) & 0xFFFFFFFF
    return buf


def new_state():
    return {"bytes": 0, "messages": 0, "records": 0, "templates": 0, "template_messages": 0,
            "data_before_template": 0, "bad": 0, "seq_errors": 0, "domains": [], "tmpl": {}, "next_seq": None}


def udp(a, stop):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    if a.rcvbuf:  # beyond net.core.rmem_max: SO_RCVBUFFORCE (root), so that a slow reader loses nothing
        s.setsockopt(socket.SOL_SOCKET, 33, a.rcvbuf)  # SO_RCVBUFFORCE
    s.bind(("127.0.0.1", a.port))
    s.settimeout(0.1)
    if a.ready:
        open(a.ready, "w").write("ready\n")
    st, end = new_state(), time.monotonic() + a.seconds
    while not stop[0] and time.monotonic() < end:
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        st["bytes"] += len(d)
        before = st["records"]
        decode(d, st)
        if st["records"] > before:  # the first and last datagram with data records (monotonic s)
            st["last_data_s"] = time.monotonic()
            st.setdefault("first_data_s", st["last_data_s"])
    del st["tmpl"], st["next_seq"]
    print(json.dumps({"connections": [st]}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--close-after", type=int, default=0)
    ap.add_argument("--ready")
    ap.add_argument("--udp", action="store_true")
    ap.add_argument("--rcvbuf", type=int, default=0, help="UDP socket buffer, bytes (SO_RCVBUFFORCE, root)")
    a = ap.parse_args()
    stop = [False]
    signal.signal(signal.SIGTERM, lambda *_: stop.__setitem__(0, True))
    if a.udp:
        return udp(a, stop)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", a.port))
    ls.listen(4)
    ls.settimeout(0.1)
    if a.ready:
        open(a.ready, "w").write("ready\n")
    conns, end = [], time.monotonic() + a.seconds
    while not stop[0] and time.monotonic() < end:
        try:
            c, _ = ls.accept()
        except socket.timeout:
            continue
        st = new_state()
        conns.append(st)
        c.settimeout(0.1)
        buf = b""
        while not stop[0] and time.monotonic() < end:
            try:
                d = c.recv(65536)
            except socket.timeout:
                continue
            if not d:
                break
            st["bytes"] += len(d)
            buf = decode(buf + d, st)
            if a.close_after and len(conns) == 1 and st["bytes"] >= a.close_after:
                break
        c.close()
    for st in conns:
        del st["tmpl"], st["next_seq"]
    print(json.dumps({"connections": conns}))


if __name__ == "__main__":
    sys.exit(main())
