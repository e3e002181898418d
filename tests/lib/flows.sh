# nfcapd as the IPFIX collector of flow tests, and flows as comparable lines (sourced after
# common.sh and instance.sh; tests 28b, 28e, 28f, 28ft2). Needs nfcapd and nfdump (./spanbox install-deps).
# Sourcing it sets TZ=UTC and the EXIT trap flows_cleanup: nfcapd and the instances stopped, $TMP
# removed (kept with KEEP=1).
#   nfstart DIR PORT   nfcapd on 127.0.0.1:PORT writing into DIR (log DIR.log), pid in $NFPID
#   nfstop             stop it (its files are complete then)
#   nflines DIR FMT    the records nfdump prints from DIR in its format FMT (fields split by "|"),
#                      one line each, their fields split by blanks, sorted; addresses (%sa %da) in
#                      Python's form, an ICMP type.code (%dp) as the reference's port (type x 256 + code)
#   nfflows DIR        nflines of: proto src dst sport dport vlan port packets bytes
#   refcols TSV COLS [COND [PREFIX]]
#                      tests/lib/flows_ref.py's flows of TSV, one line each, sorted: the words PREFIX,
#                      then its fields COLS (indexes, e.g. "3 1 2": proto src dst; addresses in
#                      Python's form), of each flow whose fields v satisfy the Python condition COND
#                      (default True)
#   refflows TSV       refcols of nfflows' columns
#   kv TAG KEY         a value of the flows line (records_in=... worker0_frames=...) that
#                      spanbox-primary --replay printed into $TMP/TAG.log (tests/lib/replay.sh)
NFPID=
flows_cleanup() { [ -n "$NFPID" ] && kill "$NFPID" 2>/dev/null; inst_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$TMP"; }
trap flows_cleanup EXIT
export TZ=UTC
nfstart() {
	mkdir -p "$1"
	nfcapd -b 127.0.0.1 -p "$2" -w "$1" -t 3600 -B 4000000 >"$1.log" 2>&1 &
	NFPID=$!
	sleep 0.5
}
nfstop() { kill "$NFPID"; wait "$NFPID" 2>/dev/null; NFPID=; }
nflines() {
	nfdump -R "$1" -q -N -6 -o "fmt:$2" 2>/dev/null | tr -d ' ' |
		python3 -c '
import ipaddress, sys
fmt = sys.argv[1].split("|")
for l in sys.stdin:
    f = l.strip().split("|")
    if len(f) < len(fmt):
        continue
    for i, k in enumerate(fmt):
        if k in ("%sa", "%da"):
            f[i] = str(ipaddress.ip_address(f[i]))
        elif k == "%dp" and "." in f[i]:  # ICMP: nfdump prints type.code where the key has 0
            t, c = f[i].split(".")
            f[i] = str(int(t) * 256 + int(c))
    print(" ".join(f[:len(fmt)]))' "$2" | sort
}
nfflows() { nflines "$1" "%pr|%sa|%da|%sp|%dp|%svln|%in|%pkt|%byt"; }
refcols() {
	python3 -c '
import ipaddress, sys
cols = [int(c) for c in sys.argv[2].split()]
pre = sys.argv[4].split()
for l in open(sys.argv[1]):
    v = l.rstrip("\n").split("\t")
    if not eval(sys.argv[3]):
        continue
    print(" ".join(pre + [str(ipaddress.ip_address(v[c])) if c in (1, 2) else v[c] for c in cols]))' \
		"$1" "$2" "${3:-True}" "${4:-}" | sort
}
refflows() { refcols "$1" "3 1 2 4 5 6 8 9 10"; }
kv() { sed -n "s/.*flows: records_in=/records_in=/p" "$TMP/$1.log" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
