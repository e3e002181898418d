#!/usr/bin/env python3
"""Compare the tunnel parser (build/tests/sbx-decap-pcap) with tshark on one capture; TAP lines.

    python3 tests/lib/decap_tshark.py CAPTURE TSV OUT.pcap [--facts]

CAPTURE: the original; TSV and OUT.pcap: what sbx-decap-pcap wrote for it (one TSV line per frame,
the inner frames of the OK frames). tshark is the independent decoder, with IP reassembly off (each
frame on its own) and TCP reassembly and HTTP decompression off (every position is in the frame): the raw bytes come from its JSON ("frame_raw"), every position and field value
from its PDML. Nothing here parses a header by itself. Per frame, tshark's "inner frame" is:
  start: the position of the second "eth" protocol (the one behind gre/erspan/vxlan);
  end:   the end of the outer IP packet as tshark reads its length (ip: pos + ip.len; ipv6:
         pos + 40 + ipv6.plen), for VXLAN the end of the UDP datagram (udp pos + udp.length) if
         smaller; and no protocol tshark dissected in the inner frame (nor the inner eth's trailer,
         padding or FCS field) may end beyond it.
Checks, one TAP line each:
  1. one TSV line per frame of tshark;
  2. the frames tshark decodes as a tunnel (an inner eth) are exactly our OK frames, except outer
     IP fragments, which tshark decodes (the first fragment's partial inner frame) and the parser
     calls "fragment" (the worker's stage reassembles them first: tests/e2e/63b_ingress_fragments.sh):
     every such frame must be a fragment by tshark's ip.flags.mf / ip.frag_offset;
  3. tunnel kind (tshark's "Type I/II/III" of the erspan protocol, vxlan, gre + eth) equal;
  4. inner frames byte for byte (start and length) equal, and OUT.pcap holds exactly them in order;
  5. session id (erspan.spanid) / VNI (vxlan.vni) / GRE-TEB key (gre.key), erspan.vlan, erspan.cos,
     erspan.truncated, gre.sequence_number (present or not, value) equal.
--facts prints, in addition, the per-file summary the caller asserts on: "# facts k=v ..." lines.
"""
import json
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

cap, tsv_path, out_pcap = sys.argv[1:4]
facts = "--facts" in sys.argv[4:]
name = cap.rsplit("/", 1)[-1]
KINDS = {"Type I": 1, "Type II": 2, "Type III": 3}


def tshark(args):
    r = subprocess.run(["tshark", "-n", "-o", "ip.defragment:FALSE", "-o", "ipv6.defragment:FALSE",
                        "-o", "tcp.desegment_tcp_streams:FALSE", "-o", "http.decompress_body:FALSE", "-r", cap] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if r.returncode != 0:
        raise RuntimeError("tshark: exit %d: %s" % (r.returncode, r.stderr.decode(errors="replace").strip()))
    return r.stdout


def tap(ok, msg):
    print("%sok - %s: %s" % ("" if ok else "not ", name, msg))
    return ok


def first_field(elem, fname):
    for f in elem.iter("field"):
        if f.get("name") == fname:
            return f
    return None


def pcap_frames(path):
    b = open(path, "rb").read()
    e = "<" if b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    off, res = 24, []
    while off + 16 <= len(b):
        incl = struct.unpack(e + "I", b[off + 8:off + 12])[0]
        res.append(b[off + 16:off + 16 + incl])
        off += 16 + incl
    return res


raw = [bytes.fromhex(p["_source"]["layers"]["frame_raw"][0]) for p in json.loads(tshark(["-T", "json", "-x"]))]
packets = ET.fromstring(tshark(["-T", "pdml"])).findall("packet")
ours = [l.rstrip("\n").split("\t") for l in open(tsv_path)]
written = pcap_frames(out_pcap)

tap(len(ours) == len(packets) == len(raw), "one TSV line per frame (%d lines, tshark %d frames)" % (len(ours), len(packets)))
n = min(len(ours), len(packets), len(raw))
mism_set, mism_kind, mism_bytes, mism_fields = [], [], [], []
expect_written = []
ids, seqs, vlans, coss, inner_dst = set(), [], set(), set(), set()
n_tun = n_ok = n_frag = 0
for i in range(n):
    protos = [p for p in packets[i] if p.tag == "proto"]
    names = [p.get("name") for p in protos]
    (idx, result, kind, tid, seq, seq_p, vlan, cos, trunc, ioff, ilen, ft, wr) = ours[i][:13]
    eths = [k for k, nm in enumerate(names) if nm == "eth"]
    tun = None
    if len(eths) >= 2 and any(nm in ("gre", "vxlan", "erspan") for nm in names[eths[0]:eths[1]]):
        tun = eths[1]
    frag = False
    for p in protos:
        if p.get("name") == "ip":
            mf, fo = first_field(p, "ip.flags.mf"), first_field(p, "ip.frag_offset")
            frag = (mf is not None and mf.get("show") in ("1", "True")) or (fo is not None and fo.get("show") != "0")
            break
    if tun is None:
        if result == "ok":
            mism_set.append("%d: we ok, tshark no tunnel" % (i + 1))
        continue
    n_tun += 1
    if result != "ok":
        if result == "fragment" and frag:
            n_frag += 1
        else:
            mism_set.append("%d: tshark tunnel, we %s (tshark fragment: %s)" % (i + 1, result, frag))
        continue
    n_ok += 1
    between = names[eths[0]:tun]
    erspan = next((p for p in protos[eths[0]:tun] if p.get("name") == "erspan"), None)
    gre = next((p for p in protos[eths[0]:tun] if p.get("name") == "gre"), None)
    vx = next((p for p in protos[eths[0]:tun] if p.get("name") == "vxlan"), None)
    if erspan is not None:
        tk = next((v for s, v in sorted(KINDS.items(), key=lambda x: -len(x[0])) if erspan.get("showname", "").endswith(s)), 0)
    elif vx is not None:
        tk = 4
    elif gre is not None:
        tk = 5
    else:
        tk = 0
    if tk != int(kind):
        mism_kind.append("%d: tshark kind %d (%s), we %s" % (i + 1, tk, ":".join(between), kind))
    # tshark's inner frame
    start = int(protos[tun].get("pos"))
    end = None
    for p in protos[eths[0]:tun]:
        if p.get("name") == "ip" and end is None:
            end = int(p.get("pos")) + int(first_field(p, "ip.len").get("show"))
        elif p.get("name") == "ipv6" and end is None:
            end = int(p.get("pos")) + 40 + int(first_field(p, "ipv6.plen").get("show"))
        elif p.get("name") == "udp":
            end = min(end, int(p.get("pos")) + int(first_field(p, "udp.length").get("show")))
    end = min(end, len(raw[i]))
    # protocols tshark placed in the frame behind the inner eth (a protocol at a position before the
    # inner frame lies in another data source: a reassembled or decompressed body), and the inner
    # eth's own trailer/padding/FCS fields
    dissected = max([int(p.get("pos")) + int(p.get("size")) for p in protos[tun:] if p.get("pos") is not None and int(p.get("pos")) >= start] +
                    [int(f.get("pos")) + int(f.get("size")) for f in protos[tun].iter("field")
                     if f.get("name") in ("eth.trailer", "eth.padding", "eth.fcs")])
    want = raw[i][start:end]
    expect_written.append(want)
    if dissected > end or int(ioff) != start or int(ilen) != len(want):
        mism_bytes.append("%d: tshark inner %d..%d (dissected to %d), we %s+%s" % (i + 1, start, end, dissected, ioff, ilen))
    inner_dst.add(want[:6].hex(":"))
    # fields
    exp = {}
    if erspan is not None and tk in (2, 3):
        for k, fn in (("id", "erspan.spanid"), ("vlan", "erspan.vlan"), ("cos", "erspan.cos"), ("trunc", "erspan.truncated")):
            f = first_field(erspan, fn)
            exp[k] = int(f.get("show")) if f is not None else None
    if vx is not None:
        exp["id"] = int(first_field(vx, "vxlan.vni").get("show"))
    if gre is not None:
        sq = first_field(gre, "gre.sequence_number")
        exp["seq_p"] = 1 if sq is not None else 0
        if sq is not None:
            exp["seq"] = int(sq.get("show"))
        key = first_field(gre, "gre.key")
        if tk == 5:
            exp["id"] = int(key.get("show"), 16) if key is not None else 0
    got = {"id": int(tid), "vlan": int(vlan), "cos": int(cos), "trunc": int(trunc), "seq_p": int(seq_p), "seq": int(seq)}
    diff = ["%s tshark %s we %s" % (k, v, got[k]) for k, v in exp.items() if v != got[k]]
    if diff:
        mism_fields.append("%d: %s" % (i + 1, ", ".join(diff)))
    if "id" in exp:
        ids.add(exp["id"])
    if "seq" in exp:
        seqs.append(exp["seq"])
    if "vlan" in exp:
        vlans.add(exp["vlan"])
        coss.add(exp["cos"])

tap(not mism_set, "tshark decodes %d frame(s) as tunnels: %d are ok here, %d outer IP fragments ('fragment' here)%s" %
    (n_tun, n_ok, n_frag, "; differ: " + "; ".join(mism_set[:5]) if mism_set else ""))
tap(not mism_kind, "tunnel kind equal tshark's on %d frame(s)%s" % (n_ok, "; differ: " + "; ".join(mism_kind[:5]) if mism_kind else ""))
tap(not mism_bytes and written == expect_written,
    "inner frames byte for byte equal tshark's (%d written, %d expected)%s" %
    (len(written), len(expect_written), "; differ: " + "; ".join(mism_bytes[:5]) if mism_bytes else
     "" if written == expect_written else "; the written bytes differ"))
tap(not mism_fields, "session/VNI/key, VLAN, COS, T and GRE sequence numbers equal tshark's%s" %
    ("; differ: " + "; ".join(mism_fields[:5]) if mism_fields else ""))
if facts:
    print("# facts ok=%d frag=%d ids=%s vlans=%s coss=%s seqs_distinct=%s inner_dst=%s" %
          (n_ok, n_frag, ",".join(map(str, sorted(ids))), ",".join(map(str, sorted(vlans))),
           ",".join(map(str, sorted(coss))), ",".join(map(str, sorted(set(seqs)))), ",".join(sorted(inner_dst))))
