#!/usr/bin/env python3
"""Turn ERSPAN reference captures into records for build/tests/erspan_parity (field layout parity).

    python3 tests/lib/erspan_ref.py FILE.pcap [FILE.pcap ...] | build/tests/erspan_parity

tshark is the independent decoder: every field value and every byte position comes from its PDML
(-T pdml), the raw frame bytes from its JSON (-T json -x, "frame_raw"). Nothing here parses a
header by itself. One record per line, grouped by file:

    file NAME
    hdr NAME FRAME key=value ... tagged=0|1 inner=HEX expect=HEX
        session fields as tshark decodes them, tshark's frame-derived fields (vlan, cos, en), whether
        tshark decoded an 802.1Q/802.1ad tag right behind the inner Ethernet header, the first bytes
        of the inner frame, and the reference bytes from the GRE header start to the inner frame start
    outer NAME FRAME key=value ... expect=HEX
        the outer IP header as tshark decodes it, plus the reference bytes of that header
    skip NAME FRAME hdr|outer|both REASON
    # comment (passed through)
"""
import json
import subprocess
import sys
import xml.etree.ElementTree as ET

INNER_BYTES = 64  # sbx_erspan_fields_from_frame reads at most 58


def tshark(args):
    r = subprocess.run(["tshark", "-n"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if r.returncode != 0:
        raise RuntimeError("tshark %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.decode(errors="replace").strip()))
    return r.stdout


def field(proto, name):
    """First field called name anywhere inside proto (PDML nests bit fields), or None."""
    for f in proto.iter("field"):
        if f.get("name") == name:
            return f
    return None


def num(proto, name, default=None):
    f = field(proto, name) if proto is not None else None
    if f is None:
        if default is None:
            raise KeyError(name)
        return default
    return int(f.get("show"), 0)


def frames(path):
    """Yield (frame number, list of top-level <proto> elements, raw frame bytes)."""
    raw = [bytes.fromhex(p["_source"]["layers"]["frame_raw"][0])
           for p in json.loads(tshark(["-r", path, "-T", "json", "-x", "-j", "frame"]))]
    root = ET.fromstring(tshark(["-r", path, "-T", "pdml", "-o", "ip.check_checksum:TRUE"]))
    for i, pkt in enumerate(root.findall("packet")):
        yield i + 1, pkt.findall("proto"), raw[i]


def index_of(protos, name, start=0):
    for i in range(start, len(protos)):
        if protos[i].get("name") == name:
            return i
    return -1


def one_frame(name, n, protos, raw, out):
    names = [p.get("name") for p in protos]
    flagged = [x for x in names if x in ("_ws.malformed", "_ws.short")]
    if flagged:
        why = "; ".join(p.get("showname", p.get("name")) for p in protos if p.get("name") in flagged)
        g = index_of(protos, "gre")
        if g >= 0:
            why += " (GRE flags 0x%04x)" % num(protos[g], "gre.flags_and_version", -1)
        fr = protos[index_of(protos, "frame")]
        why += " (captured %s of %s bytes)" % (raw and len(raw), num(fr, "frame.len", -1))
        out.append("skip %s %d both tshark flags the frame: %s" % (name, n, why))
        return
    g = index_of(protos, "gre")
    e = index_of(protos, "erspan", g + 1) if g >= 0 else -1
    if g < 0 or e < 0:
        out.append("skip %s %d both tshark decodes no GRE/ERSPAN in it" % (name, n))
        return
    inner = index_of(protos, "eth", e + 1)
    if inner < 0:
        out.append("skip %s %d both tshark decodes no inner Ethernet frame behind ERSPAN" % (name, n))
        return
    gre, er = protos[g], protos[e]
    gre_pos, inner_pos = int(gre.get("pos")), int(protos[inner].get("pos"))

    # --- GRE + ERSPAN header ---
    ver = num(er, "erspan.version")
    rec = {
        "ver": ver,
        "gre_flags": "0x%04x" % num(gre, "gre.flags_and_version"),
        "seq": num(gre, "gre.sequence_number", 0),
        "vlan": num(er, "erspan.vlan"),
        "cos": num(er, "erspan.cos"),
        "en": num(er, "erspan.encap") if ver == 1 else num(er, "erspan.bso"),
        "t": num(er, "erspan.truncated"),
        "sid": num(er, "erspan.spanid"),
    }
    if ver == 1:
        rec["index"] = num(er, "erspan.index")
    elif ver == 2:
        rec.update(ts=num(er, "erspan.timestamp"), sgt=num(er, "erspan.sgt"), p=num(er, "erspan.p"),
                   ft=num(er, "erspan.ft"), hw=num(er, "erspan.hw"), dir=num(er, "erspan.direction"),
                   gra=num(er, "erspan.gra"), o=num(er, "erspan.o"))
        if rec["o"]:
            platid = num(er, "erspan.platid")
            if platid != 3:
                out.append("skip %s %d hdr platform subheader id %d (spanbox writes only id 3)" % (name, n, platid))
                return
            rec.update(port_id=num(er, "erspan.pid3.port_index"), ts_upper=num(er, "erspan.pid3.timestamp"))
    else:
        out.append("skip %s %d hdr ERSPAN version %d is not type II or III" % (name, n, ver))
        return
    # tagged: tshark decoded an 802.1Q/802.1ad tag right behind the inner Ethernet header
    rec["tagged"] = 1 if inner + 1 < len(protos) and protos[inner + 1].get("name") == "vlan" else 0
    rec["inner"] = raw[inner_pos:inner_pos + INNER_BYTES].hex()
    rec["expect"] = raw[gre_pos:inner_pos].hex()
    out.append("hdr %s %d %s" % (name, n, " ".join("%s=%s" % kv for kv in rec.items())))

    # --- outer IP header: the last ip/ipv6 before GRE ---
    o = max(index_of_last(protos, "ip", g), index_of_last(protos, "ipv6", g))
    if o < 0:
        out.append("skip %s %d outer no outer IP header before GRE" % (name, n))
        return
    ip = protos[o]
    pos = int(ip.get("pos"))
    if ip.get("name") == "ipv6":
        if o + 1 != g:
            out.append("skip %s %d outer IPv6 extension headers between IPv6 and GRE" % (name, n))
            return
        rec = {"ipv": 6, "src": field(ip, "ipv6.src").get("show"), "dst": field(ip, "ipv6.dst").get("show"),
               "ttl": num(ip, "ipv6.hlim"), "dscp": num(ip, "ipv6.tclass.dscp"), "ecn": num(ip, "ipv6.tclass.ecn"),
               "flow": num(ip, "ipv6.flow"), "gre_len": num(ip, "ipv6.plen"), "expect": raw[pos:pos + 40].hex()}
    else:
        hl = num(ip, "ip.hdr_len")
        if hl != 20:
            out.append("skip %s %d outer IPv4 header of %d bytes (options; spanbox writes 20)" % (name, n, hl))
            return
        if num(ip, "ip.flags.mf") or num(ip, "ip.frag_offset"):
            out.append("skip %s %d outer IPv4 fragment (spanbox never fragments)" % (name, n))
            return
        status = num(ip, "ip.checksum.status")  # 0 bad, 1 good (checked: ip.check_checksum:TRUE)
        if status not in (0, 1):
            out.append("skip %s %d outer tshark did not verify the IPv4 checksum" % (name, n))
            return
        # cksum: the correct checksum of the reference header: its own when tshark calls it good,
        # tshark's calculated one when bad (then the reference checksum bytes are not compared)
        cksum = num(ip, "ip.checksum") if status == 1 else num(ip, "ip.checksum_calculated")
        rec = {"ipv": 4, "src": field(ip, "ip.src").get("show"), "dst": field(ip, "ip.dst").get("show"),
               "ttl": num(ip, "ip.ttl"), "dscp": num(ip, "ip.dsfield.dscp"), "ecn": num(ip, "ip.dsfield.ecn"),
               "df": num(ip, "ip.flags.df"), "rb": num(ip, "ip.flags.rb"), "id": "0x%04x" % num(ip, "ip.id"),
               "gre_len": num(ip, "ip.len") - hl, "cksum_ok": status, "cksum": "0x%04x" % cksum,
               "expect": raw[pos:pos + 20].hex()}
    out.append("outer %s %d %s" % (name, n, " ".join("%s=%s" % kv for kv in rec.items())))


def index_of_last(protos, name, before):
    for i in range(before - 1, -1, -1):
        if protos[i].get("name") == name:
            return i
    return -1


def main(paths):
    rc = 0
    for path in paths:
        name = path.rsplit("/", 1)[-1]
        out = ["file %s" % name]
        try:
            for n, protos, raw in frames(path):
                try:
                    one_frame(name, n, protos, raw, out)
                except (KeyError, ValueError, TypeError) as exc:
                    out.append("skip %s %d both cannot read tshark field %s" % (name, n, exc))
        except (RuntimeError, OSError, ValueError) as exc:
            out.append("error %s %s" % (name, str(exc).replace("\n", " ")))
            rc = 1
        print("\n".join(out), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
