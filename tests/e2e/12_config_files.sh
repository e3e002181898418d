#!/usr/bin/env bash
# Output files never destroy input files (issue 10, section 3), and what --check says about devargs
# keys and EAL arguments is what a start would find (section 7):
#  - two ports with one tx_pcap, a tx_pcap that is an rx_pcap (also spelled differently: "..", a
#    symbolic link), a tx_pcap that is the database, the token file or the config itself: --check
#    exits 2 naming ports[N].devargs; a replay of the config exits 2 too and the input capture is
#    untouched, byte for byte (sha256), and still a valid capture (capinfos);
#  - a misspelled or unsupported devargs key (net_pcap infinite_rx, net_tap ifname): exit 2 naming
#    the port's devargs and the key;
#  - an EAL argument spanbox sets itself (--file-prefix=other in eal.extra_args): exit 2 naming
#    eal.extra_args[N], at once, and no DPDK runtime directory of either prefix is left.
# No instance runs: every config here must be refused before EAL starts (prefix t10b-files).
source "$(dirname "$0")/../lib/common.sh"
PRIMARY="$BUILD/primary/spanbox-primary"
trap 'rm -rf "$TMP"' EXIT
IN_SRC="$CAPTURES/plain_tcpreplay_test.pcap"

# refused NAME CONFIG FIELD TEXT: --check exits 2 with "FIELD: ...TEXT..."
refused() {
	local out rc
	out=$("$PRIMARY" -c "$2" --check 2>&1)
	rc=$?
	echo "# $1: rc $rc: $out"
	if [ $rc -eq 2 ] && grep -qF -- "$3: " <<<"$out" && grep -qF -- "$4" <<<"$out"; then
		ok "$1: --check exits 2 naming $3"
	else
		not_ok "$1: --check exits 2 naming $3 with \"$4\" (rc $rc)"
	fi
}

# mkcfg FILE PORTS_JSON [MGMT_JSON]: a replay config of prefix t10b-files
mkcfg() {
	local mgmt=${3:-}
	[ -n "$mgmt" ] || mgmt="{\"database\": \"$TMP/db/s.db\"}"
	cat >"$1" <<JSON
{
  "eal": {"file_prefix": "t10b-files", "socket_mem_mb": 128, "primary_lcore": 110, "mgmt_lcore": 113},
  "ports": [ $2 ],
  "workers": {"count": 1, "lcores": [111]},
  "mgmt": $mgmt
}
JSON
}

# untouched NAME: the input is still the corpus capture, byte for byte, and capinfos reads it whole
untouched() {
	local want got
	want=$(sha256sum <"$IN_SRC")
	got=$(sha256sum <"$TMP/in.pcap")
	check "$1: the input capture is unchanged (sha256, $(stat -c %s "$TMP/in.pcap") B)" [ "$want" = "$got" ]
	check "$1: capinfos reads the input without error" bash -c "capinfos -c '$TMP/in.pcap' >/dev/null 2>&1"
}

mkdir -p "$TMP/db" "$TMP/d"
cp "$IN_SRC" "$TMP/in.pcap"
ln -s "$TMP/in.pcap" "$TMP/link.pcap"

# 1. tx_pcap = another port's rx_pcap (written three ways), and = the port's own rx_pcap
for spelling in "$TMP/in.pcap" "$TMP/d/../in.pcap" "$TMP/link.pcap"; do
	cp "$IN_SRC" "$TMP/in.pcap"
	mkcfg "$TMP/c.json" "{\"name\": \"p0\", \"devargs\": \"net_pcap0,rx_pcap=$TMP/in.pcap\"},
    {\"name\": \"p1\", \"devargs\": \"net_pcap1,tx_pcap=$spelling\"}"
	refused "tx_pcap $spelling = ports[0].rx_pcap" "$TMP/c.json" "ports[1].devargs" "is the rx_pcap of ports[0]"
	out=$(timeout 60 "$PRIMARY" -c "$TMP/c.json" --replay 2>&1); rc=$?
	echo "# replay: rc $rc: $(grep devargs <<<"$out")"
	check "tx_pcap $spelling = ports[0].rx_pcap: replay exits 2" [ $rc -eq 2 ]
	untouched "tx_pcap $spelling = ports[0].rx_pcap"
done
mkcfg "$TMP/c.json" "{\"name\": \"p0\", \"devargs\": \"net_pcap0,rx_pcap=$TMP/in.pcap,tx_pcap=$TMP/in.pcap\"}"
cp "$IN_SRC" "$TMP/in.pcap"
refused "a port writing its own rx_pcap" "$TMP/c.json" "ports[0].devargs" "is the rx_pcap of ports[0]"
timeout 60 "$PRIMARY" -c "$TMP/c.json" --replay >/dev/null 2>&1
untouched "a port writing its own rx_pcap, after a replay attempt"
# relative paths are relative to the working directory, as the primary opens them
mkcfg "$TMP/c.json" "{\"name\": \"p0\", \"devargs\": \"net_pcap0,rx_pcap=in.pcap\"},
    {\"name\": \"p1\", \"devargs\": \"net_pcap1,tx_pcap=$TMP/in.pcap\"}"
(cd "$TMP" && refused "relative rx_pcap, absolute tx_pcap" "$TMP/c.json" "ports[1].devargs" "is the rx_pcap of ports[0]")

# 2. two ports writing one file (it does not exist yet: compared by its directory's realpath)
mkcfg "$TMP/c.json" "{\"name\": \"p0\", \"devargs\": \"net_pcap0,rx_pcap=$TMP/in.pcap\"},
    {\"name\": \"p1\", \"devargs\": \"net_pcap1,tx_pcap=$TMP/out.pcap\"},
    {\"name\": \"p2\", \"devargs\": \"net_pcap2,tx_pcap=$TMP/d/../out.pcap\"}"
refused "two ports with one tx_pcap" "$TMP/c.json" "ports[2].devargs" "is also the tx_pcap of ports[1]"
check "two ports with one tx_pcap: no output file was created" [ ! -e "$TMP/out.pcap" ]
# the same config with two outputs is valid: the refusal is the shared file, nothing else
mkcfg "$TMP/ok.json" "{\"name\": \"p0\", \"devargs\": \"net_pcap0,rx_pcap=$TMP/in.pcap\"},
    {\"name\": \"p1\", \"devargs\": \"net_pcap1,tx_pcap=$TMP/out.pcap\"},
    {\"name\": \"p2\", \"devargs\": \"net_pcap2,tx_pcap=$TMP/out2.pcap\"}"
check "the same ports with two output files: --check says valid" "$PRIMARY" -c "$TMP/ok.json" --check

# 3. the database, the token file, the config itself
mkcfg "$TMP/c.json" "{\"name\": \"p0\", \"devargs\": \"net_pcap0,rx_pcap=$TMP/in.pcap\"},
    {\"name\": \"p1\", \"devargs\": \"net_pcap1,tx_pcap=$TMP/db/s.db\"}"
refused "tx_pcap = mgmt.database" "$TMP/c.json" "ports[1].devargs" "is mgmt.database"
mkcfg "$TMP/c.json" "{\"name\": \"p0\", \"devargs\": \"net_pcap0,rx_pcap=$TMP/in.pcap\"},
    {\"name\": \"p1\", \"devargs\": \"net_pcap1,tx_pcap=$TMP/db/s.db.token\"}"
refused "tx_pcap = the default token file (database + .token)" "$TMP/c.json" "ports[1].devargs" "is mgmt.token_file"
mkcfg "$TMP/self.json" "{\"name\": \"p0\", \"devargs\": \"net_pcap0,rx_pcap=$TMP/in.pcap\"},
    {\"name\": \"p1\", \"devargs\": \"net_pcap1,tx_pcap=$TMP/d/../self.json\"}"
cp "$TMP/self.json" "$TMP/self.copy"
refused "tx_pcap = the config file" "$TMP/self.json" "ports[1].devargs" "is the config file itself"
timeout 60 "$PRIMARY" -c "$TMP/self.json" --replay >/dev/null 2>&1
check "tx_pcap = the config file: the config is unchanged after a replay attempt" cmp -s "$TMP/self.json" "$TMP/self.copy"

# 4. devargs keys DPDK or spanbox would ignore
mkcfg "$TMP/c.json" "{\"name\": \"p0\", \"devargs\": \"net_pcap0,rx_pcap=$TMP/in.pcap,infinite_rx=1\"},
    {\"name\": \"p1\", \"devargs\": \"net_pcap1,tx_pcap=$TMP/out.pcap\"}"
refused "net_pcap infinite_rx" "$TMP/c.json" "ports[0].devargs" "net_pcap key \"infinite_rx\" is not supported"
mkcfg "$TMP/c.json" "{\"name\": \"p0\", \"devargs\": \"net_pcap0,rx_iface=lo\"}"
refused "net_pcap rx_iface" "$TMP/c.json" "ports[0].devargs" "net_pcap key \"rx_iface\""
mkcfg "$TMP/c.json" "{\"name\": \"p0\", \"devargs\": \"net_null0\"}, {\"name\": \"p1\", \"devargs\": \"net_tap0,ifname=t10b-x\"}"
refused "net_tap ifname (misspelled iface)" "$TMP/c.json" "ports[1].devargs" "unknown net_tap key \"ifname\""

# 5. an EAL argument spanbox sets: refused before EAL runs, no runtime directory left
rundir() { if [ "$(id -u)" = 0 ]; then echo "/var/run/dpdk/$1"; else echo "${XDG_RUNTIME_DIR:-/tmp}/dpdk/$1"; fi; }
rm -rf "$(rundir t10b-other)"
mkcfg "$TMP/c.json" "{\"name\": \"p0\", \"devargs\": \"net_null0\"}, {\"name\": \"p1\", \"devargs\": \"net_null1\"}"
jq '.eal.extra_args = ["--log-level=pmd.net.null:info", "--file-prefix=t10b-other"]' "$TMP/c.json" >"$TMP/x.json"
refused "extra_args --file-prefix" "$TMP/x.json" "eal.extra_args[1]" "spanbox sets --file-prefix itself"
t0=$(date +%s%N)
out=$(timeout 60 "$PRIMARY" -c "$TMP/x.json" 2>&1); rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
echo "# start: rc $rc in $ms ms: $out"
check "extra_args --file-prefix: the primary refuses it with exit 2 (in $ms ms, before EAL)" \
	bash -c "[ $rc -eq 2 ] && [ $ms -lt 5000 ] && ! grep -q '^EAL' <<<\"\$1\"" _ "$out"
check "extra_args --file-prefix: no runtime directory of t10b-other" [ ! -e "$(rundir t10b-other)" ]
check "extra_args --file-prefix: no runtime directory of t10b-files" [ ! -e "$(rundir t10b-files)" ]
jq '.eal.extra_args = ["-l", "0-1"]' "$TMP/c.json" >"$TMP/x.json"
refused "extra_args -l 0-1" "$TMP/x.json" "eal.extra_args[0]" "spanbox sets --lcores and --main-lcore itself"
jq '.eal.extra_args = ["--log-level", "lib.eal:debug"]' "$TMP/c.json" >"$TMP/x.json"
check "extra_args --log-level lib.eal:debug: --check says valid" "$PRIMARY" -c "$TMP/x.json" --check
