#!/usr/bin/env python3
"""Live traffic for the tool group tests (tests/e2e/69_toolgroup_live.sh): AF_PACKET, no scapy.

  send IFACE FLOWS PPS SECONDS [LOG]   UDP flows over IPv4, both directions in turn, paced at PPS
                                       frames a second for at most SECONDS; each frame carries
                                       MAGIC, flow, direction, sequence and send time (CLOCK_REALTIME);
                                       LOG gets "flow dir seq time" per frame
  send1 IFACE FLOWS PPS SECONDS        the same, one direction only (client to server: each flow
                                       is one 5-tuple, on one RX queue of a multi-queue tap)
  recv OUT SECONDS IFACE...            every tagged frame seen on the IFACEs: "member flow dir seq
                                       sent received" lines in OUT (member = index of IFACE)
  failover SENT RECV DOWN UP HOLD_MS MEMBER   TAP lines of issue 13 test 2 (see the test)
"""
import os
import select
import socket
import struct
import sys
import time

MAGIC = b"TGRP"
PAY = struct.Struct("!4sIBId")


def frame(flow, d, seq, now):
    ma = bytes([2, 0, 0, 0, flow >> 8 & 255, flow & 255])
    mb = bytes([2, 1, 0, 0, flow >> 8 & 255, flow & 255])
    ia = bytes([10, 60, flow >> 8 & 255, flow & 255])
    ib = bytes([10, 61, flow >> 8 & 255, flow & 255])
    pa, pb = 1024 + flow, 5001
    if d:
        ma, mb, ia, ib, pa, pb = mb, ma, ib, ia, pb, pa
    body = PAY.pack(MAGIC, flow, d, seq, now)
    udp = struct.pack("!HHHH", pa, pb, 8 + len(body), 0) + body
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), seq & 0xFFFF, 0, 64, 17, 0, ia, ib) + udp
    return mb + ma + b"\x08\x00" + ip


def send(iface, flows, pps, seconds, log=None, dirs=2):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    out = open(log, "w") if log else None
    t0 = time.monotonic()
    n = 0
    seq = 0
    while True:
        el = time.monotonic() - t0
        if el >= seconds:
            break
        due = int(el * pps) + 1
        while n < due:
            flow, d = (n // dirs) % flows, n % dirs
            if flow == 0 and d == 0:
                seq += 1
            now = time.time()
            try:
                s.send(frame(flow, d, seq, now))
            except OSError:
                pass
            if out:
                out.write("%d %d %d %.6f\n" % (flow, d, seq, now))
            n += 1
        time.sleep(0.001)
    if out:
        out.close()


def recv(outp, seconds, ifaces):
    socks = []
    for i, name in enumerate(ifaces):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
        s.bind((name, 0))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        socks.append((s, i))
    end = time.monotonic() + seconds
    with open(outp, "w") as out:
        while time.monotonic() < end:
            r, _, _ = select.select([s for s, _ in socks], [], [], 0.2)
            for s in r:
                i = [j for t, j in socks if t is s][0]
                while True:
                    try:
                        fr = s.recv(2048, socket.MSG_DONTWAIT)
                    except BlockingIOError:
                        break
                    except OSError:  # ENETDOWN once when the link went down: go on
                        break
                    k = fr.find(MAGIC)
                    if k < 0 or len(fr) < k + PAY.size:
                        continue
                    _, flow, d, seq, sent = PAY.unpack(fr[k:k + PAY.size])
                    out.write("%d %d %d %d %.6f %.6f\n" % (i, flow, d, seq, sent, time.time()))
            out.flush()


def tap(good, text):
    print("%s - %s" % ("ok" if good else "not ok", text))


def failover(sent_log, recv_log, down, up, hold_ms, member):
    """Phase A (before DOWN): the mapping. Phase B (DOWN + 0.1 s .. UP): no frame on MEMBER, the
    other flows keep their member, MEMBER's flows on the others, none lost. Phase C (UP + hold +
    0.2 s .. end): exactly the mapping of phase A."""
    down, up, hold = float(down), float(up), int(hold_ms) / 1000.0
    member = int(member)
    sent = [l.split() for l in open(sent_log)]
    rec = [l.split() for l in open(recv_log)]
    got = {}
    for m, f, d, q, ts, _ in rec:
        got.setdefault((int(f), int(d), int(q)), []).append((int(m), float(ts)))
    t_first = float(sent[0][3]) if sent else 0
    a, b, c = {}, {}, {}
    for m, f, d, q, ts, _ in rec:
        ts, m, f = float(ts), int(m), int(f)
        if t_first + 0.5 <= ts < down:
            a.setdefault(f, set()).add(m)
        elif down + 0.1 <= ts < up:
            b.setdefault(f, set()).add(m)
        elif ts >= up + hold + 0.2:
            c.setdefault(f, set()).add(m)
    flows = sorted(a)
    one = [f for f in flows if len(a[f]) == 1]
    tap(len(flows) > 0 and len(one) == len(flows),
        "before: every flow (both directions) on one member (%d flows, %d on more than one)" % (len(flows), len(flows) - len(one)))
    m0 = {f: next(iter(a[f])) for f in one}
    mine = [f for f in m0 if m0[f] == member]
    others = [f for f in m0 if m0[f] != member]
    print("# before: member %d had %d flows, the others %d" % (member, len(mine), len(others)))
    moved = [f for f in others if f in b and b[f] != {m0[f]}]
    tap(len(others) > 0 and not moved and all(f in b for f in others),
        "link down: no flow of the other members changed member (%d flows, %d changed, %d not seen)" %
        (len(others), len(moved), len([f for f in others if f not in b])))
    on_t = sum(1 for f in b if member in b[f])
    tap(on_t == 0, "link down: no frame sent 100 ms after it reached the downed member (%d flows did)" % on_t)
    arrived = [f for f in mine if f in b and member not in b[f]]
    spread = sorted({m for f in arrived for m in b[f]})
    tap(len(mine) > 0 and len(arrived) == len(mine),
        "link down: every flow of the downed member arrives at the others (%d of %d, on members %s)" %
        (len(arrived), len(mine), spread))
    # loss: frames of the downed member's flows sent from DOWN + 0.1 s to UP that never arrived
    lost = late = 0
    last_bad = down
    for f, d, q, ts in sent:
        ts, key = float(ts), (int(f), int(d), int(q))
        if int(f) not in m0 or m0[int(f)] != member or not (down <= ts < up):
            continue
        r = got.get(key)
        if not r or any(m == member for m, _ in r):
            last_bad = max(last_bad, ts)
            if ts >= down + 0.1:
                lost += 1
    tap(lost == 0, "link down: the downed member's flows lose no frame sent 100 ms after the PUT (%d lost)" % lost)
    gone = [(float(ts) - down, m0.get(int(f), -1)) for f, d, q, ts in sent if (int(f), int(d), int(q)) not in got]
    print("# frames lost over the whole run: %d (s after the PUT, member before: %s)" %
          (len(gone), " ".join("%.3f/%d" % g for g in gone[:20])))
    print("# failover: the last frame of its flows lost or sent to the downed member left %.1f ms after the PUT"
          % ((last_bad - down) * 1000))
    early = sum(1 for m, f, d, q, ts, _ in rec if int(m) == member and up <= float(ts) < up + hold - 0.1)
    tap(early == 0, "link up: nothing reaches it during the hold-down of %d ms (%d frames did)" % (hold * 1000, early))
    back = [f for f in m0 if f in c and c[f] == {m0[f]}]
    tap(len(back) == len(m0) and len(c) >= len(m0),
        "after the hold-down: exactly the old mapping (%d of %d flows on their old member)" % (len(back), len(m0)))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "send":
        send(args[0], int(args[1]), float(args[2]), float(args[3]), args[4] if len(args) > 4 else None)
    elif cmd == "send1":
        send(args[0], int(args[1]), float(args[2]), float(args[3]), None, 1)
    elif cmd == "recv":
        recv(args[0], float(args[1]), args[2:])
    elif cmd == "failover":
        failover(*args)
    else:
        sys.exit("unknown command " + cmd)
