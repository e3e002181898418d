# nfcapd as the IPFIX collector of flow tests, and flows as comparable lines (sourced after
# common.sh and instance.sh; tests 28b, 28e). Needs nfcapd and nfdump (./spanbox install-deps).
# Sourcing it sets TZ=UTC and the EXIT trap flows_cleanup: nfcapd and the instances stopped, $TMP
# removed (kept with KEEP=1).
#   nfstart DIR PORT   nfcapd on 127.0.0.1:PORT writing into DIR (log DIR.log), pid in $NFPID
#   nfstop             stop it (its files are complete then)
#   nfflows DIR        the flows nfdump prints from DIR, one line each, sorted:
#                      proto src dst sport dport vlan port packets bytes
#   refflows TSV       the same columns from tests/lib/flows_ref.py's output
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
nfflows() {
	nfdump -R "$1" -q -N -6 -o "fmt:%pr|%sa|%da|%sp|%dp|%svln|%in|%pkt|%byt" 2>/dev/null | tr -d ' ' |
		python3 -c '
import ipaddress, sys
for l in sys.stdin:
    f = l.strip().split("|")
    if len(f) < 9:
        continue
    if "." in f[4]:  # ICMP: nfdump prints type.code where the key has 0
        t, c = f[4].split(".")
        f[4] = str(int(t) * 256 + int(c))
    print(" ".join([f[0], str(ipaddress.ip_address(f[1])), str(ipaddress.ip_address(f[2]))] + f[3:9]))' | sort
}
refflows() {
	python3 -c '
import ipaddress, sys
for l in open(sys.argv[1]):
    v = l.rstrip("\n").split("\t")
    print(" ".join([v[3], str(ipaddress.ip_address(v[1])), str(ipaddress.ip_address(v[2])), v[4], v[5], v[6], v[8], v[9], v[10]]))' "$1" | sort
}
kv() { sed -n "s/.*flows: records_in=/records_in=/p" "$TMP/$1.log" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
