#!/usr/bin/env bash
# A bad config is refused at start with the field named and exit code 2; nothing is started.
source "$(dirname "$0")/../lib/common.sh"
PRIMARY="$BUILD/primary/spanbox-primary"

expect_refused() { # expect_refused FILE FIELD
	local out rc
	out=$("$PRIMARY" -c "$1" --check 2>&1)
	rc=$?
	echo "# $(basename "$1"): $out"
	[ $rc -eq 2 ] && grep -qF -- "$2" <<<"$out"
}
check "config/default.json is valid" "$PRIMARY" -c "$ROOT/config/default.json" --check
check "missing file: exit 2 naming the path" expect_refused "$TMP/nope.json" "config: $TMP/nope.json: No such file"
check "empty devargs: exit 2 naming ports[1].devargs" expect_refused "$ROOT/tests/configs/bad/empty_devargs.json" "ports[1].devargs:"
check "duplicate port name: exit 2 naming the field" expect_refused "$ROOT/tests/configs/bad/dup_port_name.json" "ports[1].name:"
check "unknown key: exit 2 naming it" expect_refused "$ROOT/tests/configs/bad/unknown_nested_key.json" "ports[0].speed: unknown key"
check "mtu out of range: exit 2 naming it" expect_refused "$ROOT/tests/configs/bad/mtu_range.json" "ports[0].mtu:"

# A pcap file port whose input file does not exist: a refusal (exit 2) naming the field
cat >"$TMP/nofile.json" <<JSON
{
  "eal": {"file_prefix": "sbxnofile", "socket_mem_mb": 128, "primary_lcore": 90, "mgmt_lcore": 93},
  "ports": [{"name": "p0", "devargs": "net_pcap0,rx_pcap=$TMP/none.pcap"},
            {"name": "p1", "devargs": "net_pcap1,tx_pcap=$TMP/out.pcap"}],
  "workers": {"count": 1, "lcores": [91]},
  "forwarding": {"xconnects": [["p0", "p1"]]}
}
JSON
out=$("$BUILD/primary/spanbox-primary" -c "$TMP/nofile.json" --replay 2>&1); rc=$?
echo "# missing rx_pcap: $(grep devargs <<<"$out")"
check "a missing rx_pcap file: exit 2 naming ports[0].devargs" \
	bash -c "[ $rc -eq 2 ] && grep -q 'ports\[0\].devargs: rx_pcap' <<<'$out'"
check "and no hugepage file is left" bash -c "! ls /dev/hugepages/sbxnofilemap_* >/dev/null 2>&1"

# Through the launcher: refused before anything starts (no process, no hugepage file, no netns).
jq '.ports[1].name = "p0" | .eal.file_prefix = "sbxbadcfg"' "$ROOT/config/default.json" >"$TMP/bad.json"
out=$("$ROOT/spanbox" start "$TMP/bad.json" 2>&1); rc=$?
echo "# ./spanbox start bad.json: $out"
check "./spanbox start with a duplicate port name exits 2" [ $rc -eq 2 ]
check "./spanbox start names ports[1].name" grep -qF 'ports[1].name' <<<"$out"
check "nothing started: no hugepage file of the prefix" bash -c "! ls /dev/hugepages/sbxbadcfgmap_* >/dev/null 2>&1"
check "nothing started: no demo namespace" bash -c "! ip netns list | grep -qE '^sbx-(a|b)( |$)'"
no_primary() { ! pgrep -f "spanbox-primary -c $TMP/bad.json" >/dev/null; }
check "nothing started: no primary running" no_primary
# a config must fit the memzone's runtime tables whole (64 KiB): a bigger one is refused by name
{ head -c -2 "$ROOT/config/default.json"; printf '%*s}\n' 70000 ''; } >"$TMP/big.json"
out=$("$PRIMARY" -c "$TMP/big.json" --check 2>&1); rc=$?
check "a 70 kB config: exit 2, 'larger than 64 KiB'" bash -c "[ $rc -eq 2 ] && grep -q 'larger than 64 KiB' <<<\"\$1\"" _ "$out"
rm -rf "$TMP"
