#!/usr/bin/env bash
# Field layout parity: for every frame of the ERSPAN type II and III reference captures, our encoder
# (shared/erspan.c), given the inner frame and tshark's decode of the session fields, writes the same
# GRE+ERSPAN bytes and the same outer IP header (tests/unit/test_erspan_parity.c says how).
#   PARITY_BIN=path  use another build of the checker (e.g. one linked with a broken encoder copy)
source "$(dirname "$0")/../lib/common.sh"
trap 'rm -rf "$TMP"' EXIT
BIN=${PARITY_BIN:-$BUILD/tests/erspan_parity}
REFS=(erspan2_suricata_bug5437-60pkts.pcap erspan2_suricata_typeII-01.pcap erspan2_tcpdump_ii-1.pcap
	erspan2_tcpdump_ii-2.pcap erspan2_zeek.pcap erspan3_tcpdump_iii-ft-0.pcap
	erspan3_tcpdump_iii-pb-1_malformed.pcap erspan3_zeek.pcap)

if ! command -v tshark >/dev/null; then not_ok "tshark is installed"; exit 1; fi
if [ ! -x "$BIN" ]; then not_ok "$BIN is built (ninja -C build)"; exit 1; fi
paths=()
for f in "${REFS[@]}"; do
	if [ -r "$CAPTURES/$f" ]; then paths+=("$CAPTURES/$f"); else not_ok "reference $f is readable in $CAPTURES"; fi
done
[ ${#paths[@]} -gt 0 ] || exit 1

# The records, then the checker.
python3 "$ROOT/tests/lib/erspan_ref.py" "${paths[@]}" >"$TMP/records" 2>"$TMP/ref.err"
rc=$?
[ $rc -eq 0 ] || { not_ok "tshark decode of the references (exit $rc)"; sed 's/^/# /' "$TMP/ref.err"; }
"$BIN" <"$TMP/records"
rc=$?
check "erspan_parity: every reference frame matches (checker exit status $rc)" [ $rc -eq 0 ]

# Negative control: the checker must report a difference. Flip one bit of the expected ERSPAN
# session id in one record of erspan2_zeek.pcap (we must then get "not ok") and one bit of an
# expected outer IPv4 TTL.
awk '$1 == "file" && $2 == "erspan2_zeek.pcap" {on = 1; print; next}
     $1 == "file" {on = 0}
     on && $1 == "hdr" && !done_h { sub(/expect=100088be00000704101708640/, "expect=100088be00000704101708650"); done_h = 1 }
     on && $1 == "outer" && !done_o { sub(/4000fe2f/, "4000ff2f"); done_o = 1 }
     on' "$TMP/records" >"$TMP/broken"
if ! grep -q 'expect=100088be00000704101708650' "$TMP/broken" || ! grep -q '4000ff2f' "$TMP/broken"; then
	not_ok "negative control: could not build a corrupted record of erspan2_zeek.pcap"
else
	"$BIN" <"$TMP/broken" >"$TMP/broken.out"
	check "negative control: a flipped bit in the expected ERSPAN header is reported (not ok, byte 11)" \
		grep -q '^# erspan2_zeek.pcap frame 1: GRE+ERSPAN: first difference at byte 11 (ERSPAN COS/En/T/Session ID): expected 0x65, got 0x64 ' "$TMP/broken.out"
	check "negative control: a flipped bit in the expected outer TTL is reported (not ok, byte 8)" \
		grep -q '^# erspan2_zeek.pcap frame 1: outer IPv4: first difference at byte 8 (TTL): expected 0xff, got 0xfe ' "$TMP/broken.out"
	check "negative control: the checker fails on them" \
		grep -q '^not ok - erspan2_zeek.pcap: 3/4 frames identical GRE+ERSPAN bytes' "$TMP/broken.out"
fi
exit 0
