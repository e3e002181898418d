#!/usr/bin/env python3
"""mirror_check.py: check the mirror output of a spanbox replay against its input, frame by frame.

tshark decodes the mirror output (the independent decoder of every header field); this script
reads both pcap files itself to compare bytes. Each subcommand prints TAP lines ("ok - LABEL: ..."
/ "not ok - LABEL: ...") and "# ..." comments, and exits 1 when any check failed.

  mirror_check.py erspan LABEL MON IN --version 1|2 --session ID [options]
      every MON frame is Eth/IPv4/GRE(S bit)/ERSPAN type II (version 1) or III (version 2) with the
      session id; GRE sequence numbers strictly increase; the inner frame equals the expected input
      frame (its first --snaplen bytes) in order; T bit exactly on frames cut by snaplen; VLAN/En
      (type II), BSO (type III), COS from the inner frame; outer IPv4 length and checksum.
  mirror_check.py rspan LABEL MON IN --vlan V [--expect PCAP] [--sample N]
      every MON frame has an outer 802.1Q tag (TPID 0x8100, VID V) right after the MACs; without
      those 4 bytes it is the expected input frame (frames under 12 B may be left out).
  mirror_check.py span LABEL MON IN [--expect PCAP] [--sample N]
      MON frames equal the expected input frames, byte for byte, in order.
  mirror_check.py inner-equal LABEL MON_A MON_B --version 1|2
      the inner frames of two ERSPAN outputs are identical, in order.
  mirror_check.py subseq LABEL OUT IN COUNT
      OUT holds COUNT frames and is IN in order with some frames left out (frames dropped and counted).
  mirror_check.py mkpcap OUT LEN...
      writes a pcap of frames of the given lengths (MACs, EtherType 0x0800, a byte pattern).
  mirror_check.py sizes IN THRESHOLD
      prints "<frames <= THRESHOLD> <frames > THRESHOLD>" (caplen, what the replay reads).

The expected input frames are the frames of IN (caplen bytes: what the replay reads), or those of
--expect PCAP (e.g. what tcpdump selects with a filter), thinned by --sample N (frames 1, N+1, ...).
"""
import argparse
import os
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcap_equal import frames  # noqa: E402  (one pcap reader for the test helpers)

FAILED = False


def tap(ok, label, msg):
    global FAILED
    if not ok:
        FAILED = True
    print(f"{'ok' if ok else 'not ok'} - {label}: {msg}")


def comment(msg):
    print(f"# {msg}")


def expected(args):
    src = args.expect if getattr(args, 'expect', None) else args.inp
    exp = [d for d, _ in frames(src)]
    if getattr(args, 'sample', 1) > 1:
        exp = exp[::args.sample]
    return exp


TSHARK_FIELDS = [
    'frame.number', 'frame.len', 'frame.protocols', 'eth.dst', 'eth.type', 'ip.src', 'ip.dst', 'ip.len',
    'ip.ttl', 'ip.flags.df', 'ip.proto', 'ip.checksum.status', 'gre.flags.sequence_number', 'gre.proto',
    'gre.sequence_number', 'erspan.version', 'erspan.spanid', 'erspan.vlan', 'erspan.cos', 'erspan.encap',
    'erspan.bso', 'erspan.truncated', 'erspan.index', 'erspan.timestamp', 'erspan.sgt', 'erspan.p',
    'erspan.ft', 'erspan.hw', 'erspan.direction', 'erspan.gra', 'erspan.o', 'erspan.platid',
    'erspan.pid3.port_index', 'erspan.pid3.timestamp', 'vlan.id', 'vlan.etype', 'ip.dsfield.dscp',
    'ipv6.plen', 'ipv6.nxt', 'ipv6.hlim', 'ipv6.tclass.dscp', 'ipv6.src', 'ipv6.dst',
]


def tshark(path):
    """One dict per frame: the first occurrence of every field (the outer header's)."""
    cmd = ['tshark', '-n', '-r', path, '-o', 'ip.check_checksum:TRUE', '-T', 'fields', '-E', 'occurrence=f',
           '-E', 'separator=\t']
    for f in TSHARK_FIELDS:
        cmd += ['-e', f]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
    if p.returncode != 0:
        raise RuntimeError(f'tshark failed ({p.returncode}): {p.stderr.strip()[:300]}')
    rows = []
    for line in p.stdout.splitlines():
        vals = line.split('\t')
        vals += [''] * (len(TSHARK_FIELDS) - len(vals))
        rows.append(dict(zip(TSHARK_FIELDS, vals)))
    return rows


def num(v):
    """tshark value to int ('' -> None; True/False -> 1/0; hex or decimal)."""
    if v is None or v == '':
        return None
    if v in ('True', 'False'):
        return 1 if v == 'True' else 0
    return int(v, 0)


def locate(got, exp):
    """' (it is input frame K)' when a mirror frame's content is another expected frame."""
    for k, e in enumerate(exp):
        if got == e:
            return f' (it is expected frame {k + 1})'
    return ''


def first_mismatch(pairs):
    """pairs: [(index, ok, detail)] -> (count of bad, first detail)."""
    bad = [(i, d) for i, ok, d in pairs if not ok]
    return len(bad), (f'first at mon frame {bad[0][0] + 1}: {bad[0][1]}' if bad else '')


def frame_tags(fr):
    """(VID of the outer tag or None, IP precedence of the first IP header behind <= 2 tags)."""
    vid, off, tags = None, 12, 0
    if len(fr) < 14:
        return None, 0
    et = fr[12] << 8 | fr[13]
    while et in (0x8100, 0x88a8) and tags < 2 and off + 6 <= len(fr):
        if tags == 0:
            vid = (fr[off + 2] << 8 | fr[off + 3]) & 0xfff
        off += 4
        tags += 1
        et = fr[off] << 8 | fr[off + 1]
    off += 2
    cos = 0
    if et == 0x0800 and off + 2 <= len(fr):
        cos = fr[off + 1] >> 5
    elif et == 0x86dd and off + 2 <= len(fr):
        cos = (((fr[off] & 0x0f) << 4) | (fr[off + 1] >> 4)) >> 5
    return vid, cos


def cmd_erspan(args):
    label = args.label
    mon = [d for d, _ in frames(args.mon)]
    exp = expected(args)
    rows = tshark(args.mon)
    v = args.version
    tname = 'II' if v == 1 else 'III'
    comment(f'{label}: {len(mon)} mirror frames, {len(exp)} expected')
    tap(len(mon) == len(exp) and len(rows) == len(mon), label,
        f'{len(mon)} mirror frames for {len(exp)} expected input frames')
    n = min(len(mon), len(exp), len(rows))
    sub = 8 if (v == 2 and args.subheader) else 0
    hlen = 14 + (40 if args.ipv6 else 20) + 8 + (8 if v == 1 else 12) + sub
    ipname = 'IPv6' if args.ipv6 else 'IPv4'

    # decoding: Eth/IPv4/GRE/ERSPAN with the right version, session id, GRE S bit
    chk = []
    for i, r in enumerate(rows):
        ok = (r['frame.protocols'].startswith('eth:ethertype:ipv6:gre:erspan' if args.ipv6 else
                                              'eth:ethertype:ip:gre:erspan') and num(r['erspan.version']) == v
              and num(r['erspan.spanid']) == args.session and num(r['gre.flags.sequence_number']) == 1
              and num(r['gre.proto']) == (0x88be if v == 1 else 0x22eb))
        chk.append((i, ok, f"protocols={r['frame.protocols']} version={r['erspan.version']} "
                           f"spanid={r['erspan.spanid']} S={r['gre.flags.sequence_number']} gre.proto={r['gre.proto']}"))
    nbad, first = first_mismatch(chk)
    tap(rows and nbad == 0, label, f'tshark decodes every frame as GRE/ERSPAN type {tname} (version {v}), '
        f'session {args.session}' + (f' ({nbad} bad, {first})' if nbad else ''))

    # GRE sequence numbers strictly increase
    seqs = [num(r['gre.sequence_number']) for r in rows]
    bad = [i for i in range(1, len(seqs)) if seqs[i] is None or seqs[i - 1] is None or seqs[i] <= seqs[i - 1]]
    if seqs:
        comment(f'{label}: GRE sequence {seqs[0]}..{seqs[-1]}')
    tap(seqs and seqs[0] is not None and not bad, label, 'GRE sequence numbers strictly increase' +
        (f' (first break at frame {bad[0] + 1}: {seqs[bad[0] - 1]} then {seqs[bad[0]]})' if bad else ''))

    # inner frames, byte for byte
    chk = []
    for i in range(n):
        want = exp[i][:args.snaplen] if args.snaplen else exp[i]
        got = mon[i][hlen:]
        detail = ''
        if got != want:
            detail = f'inner {len(got)} B vs input frame {i + 1} {len(want)} B'
            if len(got) == len(want):
                detail += f', first differing byte {next(j for j in range(len(got)) if got[j] != want[j])}'
            detail += locate(got, [e[:args.snaplen] if args.snaplen else e for e in exp])
        chk.append((i, got == want, detail))
    nbad, first = first_mismatch(chk)
    what = f'the first {args.snaplen} bytes of the input frame' if args.snaplen else \
        'the input frame (same length: no FCS appended)'
    tap(n > 0 and n == len(exp) == len(mon) and nbad == 0, label,
        f'inner frame (after {hlen} B of headers) equals {what}, in order ({n} compared' +
        (f', {nbad} differ, {first})' if nbad else ')'))

    # T bit exactly on the frames longer than snaplen
    chk = []
    for i in range(n):
        cut = bool(args.snaplen) and len(exp[i]) > args.snaplen
        t = num(rows[i]['erspan.truncated'])
        chk.append((i, t == (1 if cut else 0), f'T={t} for a {len(exp[i])} B frame, snaplen {args.snaplen}'))
    nbad, first = first_mismatch(chk)
    ncut = sum(1 for i in range(n) if args.snaplen and len(exp[i]) > args.snaplen)
    tap(n > 0 and nbad == 0, label, f'T bit set exactly on the {ncut} frames longer than snaplen {args.snaplen}' +
        (f' ({nbad} wrong, {first})' if nbad else ''))

    # VLAN / En (II) or BSO (III), COS
    chk = []
    for i in range(n):
        r = rows[i]
        vid, cos = frame_tags(exp[i])
        want_vlan = vid if vid is not None else 0
        detail = f"vlan={r['erspan.vlan']} cos={r['erspan.cos']}"
        ok = num(r['erspan.vlan']) == want_vlan and num(r['erspan.cos']) == cos
        if v == 1:
            want_en = 3 if vid is not None else 0
            ok = ok and num(r['erspan.encap']) == want_en
            detail += f" En={r['erspan.encap']}; expected vlan={want_vlan} cos={cos} En={want_en}"
        else:
            # BSO (Bad/Short/Oversized): 3 = bad frame (CRC/alignment error) is never right for a good
            # frame; 1 (short) only under 60 B, 2 (oversized) only over 1514 B (+4 per tag), 0 always
            bso = num(r['erspan.bso'])
            big = 1514 + (4 if vid is not None else 0)
            ok = ok and (bso == 0 or (bso == 1 and len(exp[i]) < 60) or (bso == 2 and len(exp[i]) > big))
            detail += f" BSO={bso} for a {len(exp[i])} B {'tagged' if vid is not None else 'untagged'} frame;" \
                      f' expected vlan={want_vlan} cos={cos} BSO 0 (or 1 short / 2 oversized, never 3)'
        chk.append((i, ok, detail))
    nbad, first = first_mismatch(chk)
    ntag = sum(1 for i in range(n) if frame_tags(exp[i])[0] is not None)
    if v == 1:
        what = f'En = 3 and VLAN = tag VID on the {ntag} tagged frames, En = 0 VLAN = 0 on the {n - ntag} untagged'
    else:
        what = f'BSO is not "bad frame" (3) and VLAN = tag VID ({ntag} tagged, {n - ntag} untagged)'
    tap(n > 0 and nbad == 0, label, f'{what}; COS = IP precedence' + (f' ({nbad} wrong, {first})' if nbad else ''))

    # outer IPv4/IPv6: length, checksum (tshark verifies it), GRE protocol, addresses, TTL, DSCP, DF
    chk = []
    for i, r in enumerate(rows):
        if args.ipv6:
            ok = (num(r['ipv6.plen']) == num(r['frame.len']) - 54 and num(r['ipv6.nxt']) == 47
                  and r['ipv6.src'] == args.src_ip and r['ipv6.dst'] == args.dst_ip and r['eth.dst'] == args.dst_mac
                  and num(r['ipv6.hlim']) == args.ttl and num(r['ipv6.tclass.dscp']) == args.dscp)
            detail = (f"ipv6.plen={r['ipv6.plen']} frame.len={r['frame.len']} nxt={r['ipv6.nxt']} "
                      f"src={r['ipv6.src']} dst={r['ipv6.dst']} eth.dst={r['eth.dst']} hlim={r['ipv6.hlim']} "
                      f"dscp={r['ipv6.tclass.dscp']}")
        else:
            ok = (num(r['ip.len']) == num(r['frame.len']) - 14 and num(r['ip.checksum.status']) == 1
                  and num(r['ip.proto']) == 47 and r['ip.src'] == args.src_ip and r['ip.dst'] == args.dst_ip
                  and r['eth.dst'] == args.dst_mac and num(r['ip.ttl']) == args.ttl
                  and num(r['ip.flags.df']) == args.df and num(r['ip.dsfield.dscp']) == args.dscp)
            detail = (f"ip.len={r['ip.len']} frame.len={r['frame.len']} cksum_status={r['ip.checksum.status']} "
                      f"src={r['ip.src']} dst={r['ip.dst']} eth.dst={r['eth.dst']} ttl={r['ip.ttl']} "
                      f"df={r['ip.flags.df']} dscp={r['ip.dsfield.dscp']}")
        chk.append((i, ok, detail))
    nbad, first = first_mismatch(chk)
    if args.ipv6:
        what = (f'outer Ethernet/IPv6: dst MAC, addresses, hop limit {args.ttl}, DSCP {args.dscp}, next header 47, '
                'payload length = frame - 54')
    else:
        what = (f'outer Ethernet/IPv4: dst MAC, addresses, TTL {args.ttl}, DSCP {args.dscp}, DF {args.df}, '
                'protocol 47, total length = frame - 14, header checksum good')
    tap(rows and nbad == 0, label, what + (f' ({nbad} bad, {first})' if nbad else ''))

    if v == 1:
        idx = [num(r['erspan.index']) for r in rows]
        tap(rows and all(x == args.port_index for x in idx), label,
            f'ERSPAN II index = source port index {args.port_index} (got {sorted(set(idx), key=str)[:5]})')
        return
    # type III: D, timestamps, P/FT/HW/SGT/Gra, subheader
    dirs = [num(r['erspan.direction']) for r in rows]
    tap(rows and all(d == args.dir for d in dirs), label,
        f"D bit = {args.dir} ({'tx' if args.dir else 'rx'} source) on every frame (got {sorted(set(dirs), key=str)})")
    ts = [num(r['erspan.timestamp']) for r in rows]
    bad = [i for i in range(1, len(ts)) if ts[i] is None or ts[i - 1] is None or ts[i] < ts[i - 1]]
    if ts:
        comment(f'{label}: timestamps {ts[0]}..{ts[-1]}')
    tap(ts and ts[0] is not None and not bad, label, 'ERSPAN III timestamps never decrease' +
        (f' (frame {bad[0] + 1}: {ts[bad[0] - 1]} then {ts[bad[0]]})' if bad else ''))
    # plausibility against the wall clock of this check (the replay ran seconds ago)
    now = time.time_ns()
    unit = {0: 100000, 1: 100}.get(args.gra)
    if ts and ts[0] is not None and unit:
        if args.subheader:
            upper = num(rows[0]['erspan.pid3.timestamp']) or 0
            t_ns = ((upper << 32) | ts[0]) * unit
            age = (now - t_ns) / 1e9
            what = f'64-bit timestamp (subheader upper word {upper}) x {unit} ns'
        else:
            low_now = (now // unit) & 0xffffffff
            age = ((low_now - ts[0]) & 0xffffffff) * unit / 1e9
            if age > 2 ** 31 * unit / 1e9:
                age -= 2 ** 32 * unit / 1e9
            what = f'32-bit timestamp x {unit} ns (mod 2^32)'
        tap(-5 <= age <= 600, label, f'{what} is the wall clock of the replay (first frame {age:.1f} s ago)')
    fields = [(num(r['erspan.p']), num(r['erspan.ft']), num(r['erspan.hw']), num(r['erspan.sgt']),
               num(r['erspan.gra']), num(r['erspan.o'])) for r in rows]
    want = (1, 0, args.hw_id, args.sgt, args.gra, 1 if args.subheader else 0)
    tap(rows and all(f == want for f in fields), label,
        f'P=1 FT=0 HW={args.hw_id} SGT={args.sgt} Gra={args.gra} O={want[5]} on every frame'
        f' (got {sorted(set(fields), key=str)[:3]})')
    if args.subheader:
        sh = [(num(r['erspan.platid']), num(r['erspan.pid3.port_index'])) for r in rows]
        tap(rows and all(s == (3, args.port_index) for s in sh), label,
            f'tshark decodes the platform subheader: platform id 3, port index {args.port_index}'
            f' (got {sorted(set(sh), key=str)[:3]})')


def untag(m):
    """The mirror frame without the 4 bytes behind the MACs (the RSPAN tag)."""
    return m[:12] + m[16:] if len(m) >= 16 else None


def cmd_rspan(args):
    label = args.label
    mon = [d for d, _ in frames(args.mon)]
    exp = expected(args)
    rows = tshark(args.mon)
    # A frame shorter than the two MAC addresses (12 B) cannot carry a tag behind them: its copy is
    # optional (it must then be counted; the caller checks the counters). Any copy of a >= 12 B frame
    # is >= 16 B, so a shorter mirror frame is taken as the runt's copy and not checked further.
    pairs, j, skipped = [], 0, 0
    for e in exp:
        if len(e) < 12 and (j >= len(mon) or len(mon[j]) >= 16):
            skipped += 1
            continue
        if j < len(mon):
            pairs.append((j, e))
        j += 1
    want = len(exp) - skipped
    comment(f'{label}: {len(mon)} mirror frames, {len(exp)} expected' +
            (f' ({skipped} frames < 12 B not mirrored)' if skipped else ''))
    tap(len(mon) == want and len(rows) == len(mon), label,
        f'{len(mon)} mirror frames for {want} expected input frames')
    chk = []
    for j, e in pairs:
        m, r = mon[j], rows[j]
        if len(e) < 12:
            continue
        tpid = m[12] << 8 | m[13] if len(m) >= 16 else None
        vid = (m[14] << 8 | m[15]) & 0xfff if len(m) >= 16 else None
        ok = tpid == 0x8100 and vid == args.vlan and num(r['vlan.id']) == args.vlan and \
            r['frame.protocols'].startswith('eth:ethertype:vlan')
        chk.append((j, ok, f"TPID={tpid:#06x} VID={vid} tshark vlan.id={r['vlan.id']} "
                           f"protocols={r['frame.protocols']}" if tpid is not None else f'{len(m)} B frame'))
    nbad, first = first_mismatch(chk)
    tap(chk and nbad == 0, label, f'every frame has an outer 802.1Q tag (TPID 0x8100) with VLAN id {args.vlan} '
        '(tshark and bytes)' + (f' ({nbad} bad, {first})' if nbad else ''))
    chk = [(j, untag(mon[j]) == e if len(e) >= 12 else True,
            f'{len(mon[j])} B frame minus tag vs input {len(e)} B' + locate(mon[j][:12] + mon[j][16:], exp))
           for j, e in pairs]
    nbad, first = first_mismatch(chk)
    tap(chk and len(pairs) == want == len(mon) and nbad == 0, label,
        f'removing the 4 tag bytes after the MACs gives the input frame, in order ({len(chk)} compared' +
        (f', {nbad} differ, {first})' if nbad else ')'))


def cmd_subseq(args):
    inp = [d for d, _ in frames(args.inp)]
    out = [d for d, _ in frames(args.mon)]
    j = 0
    for d in out:
        while j < len(inp) and inp[j] != d:
            j += 1
        if j == len(inp):
            break
        j += 1
    else:
        j = -1
    tap(j == -1 and len(out) == args.count, args.label,
        f'output ({len(out)} frames, counter says {args.count}) is the input ({len(inp)} frames) in order, '
        f'minus the frames counted as dropped' + ('' if j == -1 else ' (an output frame is not in the input order)'))


def cmd_span(args):
    label = args.label
    mon = [d for d, _ in frames(args.mon)]
    exp = expected(args)
    comment(f'{label}: {len(mon)} mirror frames, {len(exp)} expected')
    n = min(len(mon), len(exp))
    diff = [i for i in range(n) if mon[i] != exp[i]]
    tap(len(mon) == len(exp) and n > 0 and not diff, label,
        f'mirror output equals the input byte for byte, in order ({len(mon)} vs {len(exp)} frames' +
        (f', {len(diff)} differ, first at frame {diff[0] + 1}: {len(mon[diff[0]])} B vs {len(exp[diff[0]])} B'
         f'{locate(mon[diff[0]], exp)})' if diff else ')'))


def inner(path, version, subheader=False):
    hlen = 14 + 20 + 8 + (8 if version == 1 else 12) + (8 if subheader else 0)
    return [d[hlen:] for d, _ in frames(path)]


def cmd_inner_equal(args):
    a, b = inner(args.mon_a, args.version), inner(args.mon_b, args.version)
    n = min(len(a), len(b))
    diff = [i for i in range(n) if a[i] != b[i]]
    tap(len(a) == len(b) and n > 0 and not diff, args.label,
        f'inner frames identical, in order ({len(a)} vs {len(b)} frames' +
        (f', {len(diff)} differ, first at {diff[0] + 1})' if diff else ')'))


def cmd_mkpcap(args):
    """Frames of the given lengths: two MACs, EtherType IPv4, then a byte pattern (no valid IP)."""
    pattern = bytes((k * 7 + (k >> 8)) & 0xff for k in range(max(args.lengths)))
    base = bytes.fromhex('020000000001020000000002') + b'\x08\x00' + pattern
    with open(args.out, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
        for i, n in enumerate(args.lengths):
            f.write(struct.pack('<IIII', 1700000000 + i, 0, n, n))
            f.write(base[:n])


def cmd_sizes(args):
    fr = frames(args.inp)
    print(sum(1 for d, _ in fr if len(d) <= args.threshold), sum(1 for d, _ in fr if len(d) > args.threshold))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sp = ap.add_subparsers(dest='cmd', required=True)

    def common(p, mon=True):
        p.add_argument('label')
        p.add_argument('mon')
        p.add_argument('inp')
        p.add_argument('--expect', help='pcap of the expected input frames (default: IN)')
        p.add_argument('--sample', type=int, default=1)

    p = sp.add_parser('erspan')
    common(p)
    p.add_argument('--version', type=int, choices=(1, 2), required=True)
    p.add_argument('--session', type=int, required=True)
    p.add_argument('--snaplen', type=int, default=0)
    p.add_argument('--dir', type=int, default=0)
    p.add_argument('--subheader', action='store_true')
    p.add_argument('--port-index', type=int, default=0)
    p.add_argument('--gra', type=int, default=0)
    p.add_argument('--hw-id', type=int, default=0)
    p.add_argument('--sgt', type=int, default=0)
    p.add_argument('--src-ip', default='192.0.2.1')
    p.add_argument('--dst-ip', default='198.51.100.7')
    p.add_argument('--dst-mac', default='02:00:5e:10:00:01')
    p.add_argument('--ipv6', action='store_true', help='outer header is IPv6')
    p.add_argument('--ttl', type=int, default=64)
    p.add_argument('--dscp', type=int, default=0)
    p.add_argument('--df', type=int, default=1)
    p.set_defaults(fn=cmd_erspan)
    p = sp.add_parser('rspan')
    common(p)
    p.add_argument('--vlan', type=int, required=True)
    p.set_defaults(fn=cmd_rspan)
    p = sp.add_parser('span')
    common(p)
    p.set_defaults(fn=cmd_span)
    p = sp.add_parser('inner-equal')
    p.add_argument('label')
    p.add_argument('mon_a')
    p.add_argument('mon_b')
    p.add_argument('--version', type=int, choices=(1, 2), required=True)
    p.set_defaults(fn=cmd_inner_equal)
    p = sp.add_parser('subseq')
    p.add_argument('label')
    p.add_argument('mon')
    p.add_argument('inp')
    p.add_argument('count', type=int)
    p.set_defaults(fn=cmd_subseq)
    p = sp.add_parser('mkpcap')
    p.add_argument('out')
    p.add_argument('lengths', type=int, nargs='+')
    p.set_defaults(fn=cmd_mkpcap)
    p = sp.add_parser('sizes')
    p.add_argument('inp')
    p.add_argument('threshold', type=int)
    p.set_defaults(fn=cmd_sizes)
    args = ap.parse_args()
    try:
        args.fn(args)
    except Exception as e:  # a crash must show as a failed check, never as silence
        tap(False, getattr(args, 'label', args.cmd), f'{type(e).__name__}: {e}')
    return 1 if FAILED else 0


if __name__ == '__main__':
    sys.exit(main())
