#!/usr/bin/env bash
# Diagnostics tools (docs/DIAGNOSTICS.md):
#  - spanbox-pcie decodes every PCI device of this machine read-only (a PCI Express capability or
#    "no PCI Express capability", both fine), agrees with lspci on the fixtures and on which devices
#    have a PCI Express capability, and keeps its exit codes (1: unreadable, names it; 2: bad argument);
#  - spanbox-memprobe --size 64 --runs 3 --json: every figure in (0.1, 1000) GB/s, thread slices on
#    2 MiB boundaries; the defaults finish in under 20 s.
source "$(dirname "$0")/../lib/common.sh"
trap 'rm -rf "$TMP"' EXIT
PCIE="$BUILD/tools/spanbox-pcie"
PROBE="$BUILD/tools/spanbox-memprobe"
FIX="$ROOT/tests/fixtures/pcie"
jqt() { jq -e "$@" >/dev/null; } # jqt ARGS...: jq -e, quiet (true when the filter is true)

for b in "$PCIE" "$PROBE"; do
	[ -x "$b" ] || { not_ok "$b is built (ninja -C build)"; exit 1; }
done

# --- spanbox-pcie on this machine's devices ----------------------------------------------------
# Beyond the 64-byte header, sysfs config space is readable by root only.
if [ "$(id -u)" -ne 0 ]; then
	ok "# SKIP this machine's PCI devices: not root (sysfs returns only the 64-byte header)"
else
	n=0
	for dev in /sys/bus/pci/devices/*; do
		[ -e "$dev" ] || continue
		bdf=$(basename "$dev")
		if [ ! -r "$dev/config" ]; then
			ok "# SKIP $bdf: config not readable"
			continue
		fi
		n=$((n + 1))
		out=$("$PCIE" --json "$bdf" 2>"$TMP/err"); rc=$?
		desc="spanbox-pcie $bdf decodes read-only"
		if [ $rc -ne 0 ]; then
			not_ok "$desc (exit $rc: $(cat "$TMP/err"))"
			continue
		fi
		pcie=$(jq -r '.devices[0].chain[0].pcie' <<<"$out")
		if [ "$pcie" = true ]; then
			summary=$(jq -r '.devices[0].chain[0] | "PCIe \(.port_type_name), MPS \(.mps_bytes) B, MRRS \(.mrrs_bytes) B" +
				(if .has_link then ", link \(.link.speed) x\(.link.width)" else "" end)' <<<"$out")
			check "$desc: $summary" jqt '.devices[0].chain[0].mps_bytes >= 128' <<<"$out"
		elif [ "$pcie" = false ]; then
			check "$desc: no PCI Express capability (warned)" \
				jqt '.devices[0].warnings | any(test("no PCI Express capability"))' <<<"$out"
		else
			not_ok "$desc: JSON has chain[0].pcie"
		fi
		# the chain is the device then the PCI bridges of its sysfs path, nearest first
		want=$(readlink -f "$dev" | tr '/' '\n' | grep -E '^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$' | tac | tr '\n' ' ')
		got=$(jq -r '[.devices[0].chain[].bdf] | join(" ")' <<<"$out")
		check "spanbox-pcie $bdf: chain is the sysfs path ($got)" [ "$got " = "$want" ]
		if command -v lspci >/dev/null; then
			lspci -s "$bdf" -vv 2>/dev/null | grep -q 'Capabilities: \[[0-9a-f]*\] Express' && l=true || l=false
			check "spanbox-pcie $bdf: PCI Express capability present = $pcie, as lspci says ($l)" [ "$pcie" = "$l" ]
		fi
	done
	check "this machine has PCI devices to decode ($n)" [ "$n" -gt 0 ]
	first=$(ls /sys/bus/pci/devices | head -n 1)
	echo "# spanbox-pcie $first:"
	"$PCIE" "$first" 2>&1 | sed 's/^/#   /'
	check "spanbox-pcie --all exits 0" "$PCIE" --all >"$TMP/all.txt"
fi

# --- spanbox-pcie on fixtures, exit codes --------------------------------------------------------
out=$("$PCIE" "$FIX/mps128.bin"); rc=$?
check "fixture mps128.bin: exit 0, warns MPS is 128 B" bash -c '[ '$rc' -eq 0 ] && grep -q "MPS is 128 B" <<<"$1"' _ "$out"
out=$("$PCIE" "$FIX/link_degraded.bin")
check "fixture link_degraded.bin: warns x4 of x8 and 8 GT/s of 16 GT/s" \
	bash -c 'grep -q "link trained at x4 of x8" <<<"$1" && grep -q "link trained at 8 GT/s of 16 GT/s" <<<"$1"' _ "$out"
out=$("$PCIE" "$FIX/mps256.bin" "$FIX/loop.bin" 2>&1 >/dev/null); rc=$?
echo "# $out"
check "a looped capability list: exit 1, the message names the file" \
	bash -c '[ '$rc' -eq 1 ] && grep -q "loop.bin: capability list loops" <<<"$1"' _ "$out"
"$PCIE" 0000:00:1f.7 >/dev/null 2>"$TMP/err"; rc=$?
[ -e /sys/bus/pci/devices/0000:00:1f.7 ] && ok "# SKIP 0000:00:1f.7 exists here" ||
	check "a missing device: exit 1 naming it" bash -c '[ '$rc' -eq 1 ] && grep -q "0000:00:1f.7" "$1"' _ "$TMP/err"
# a BDF is validated strictly; anything else must be a path (with a '/')
for bad in "00:01.0" "0000:00:20.0" "0000:00:01.0:" "0000:00:1.0" "--size"; do
	"$PCIE" "$bad" >/dev/null 2>&1; rc=$?
	check "spanbox-pcie '$bad': exit 2" [ $rc -eq 2 ]
done
"$PCIE" >/dev/null 2>&1; rc=$?
check "spanbox-pcie without arguments: exit 2" [ $rc -eq 2 ]

# Parity with lspci (an independent decoder) on the fixtures: MPS, MRRS, link status and capability.
if command -v lspci >/dev/null; then
	for f in mps128 mps256 mps512 link_degraded bridge; do
		python3 - "$FIX/$f.bin" >"$TMP/$f.dump" <<-'EOF'
		import sys
		b = open(sys.argv[1], 'rb').read()
		print('01:00.0 fixture')
		for o in range(0, len(b), 16):
		    print('%03x: ' % o + ' '.join('%02x' % x for x in b[o:o + 16]))
		EOF
		l=$(lspci -F "$TMP/$f.dump" -vv 2>/dev/null)
		lmps=$(grep -oP '^\s+MaxPayload \K[0-9]+(?= bytes, MaxReadReq)' <<<"$l")
		lmrrs=$(grep -oP 'MaxReadReq \K[0-9]+' <<<"$l")
		lcap=$(grep -oP '^\s+DevCap:\s+MaxPayload \K[0-9]+' <<<"$l")
		lsta=$(grep -oP 'LnkSta:\s+Speed \K[0-9.]+GT/s.*?Width x[0-9]+' <<<"$l" | sed -E 's/ \(downgraded\)//g; s/GT\/s,? Width / /')
		lcapl=$(grep -oP 'LnkCap:.*Speed \K[0-9.]+GT/s, Width x[0-9]+' <<<"$l" | sed -E 's/GT\/s, Width / /')
		j=$("$PCIE" --json "$FIX/$f.bin")
		ours=$(jq -r '.devices[0].chain[0] | "\(.mps_bytes) \(.mrrs_bytes) \(.mps_supported_bytes) \(.link.speed | sub(" GT/s";"")) x\(.link.width) \(.link.max_speed | sub(" GT/s";"")) x\(.link.max_width)"' <<<"$j")
		theirs="$lmps $lmrrs $lcap ${lsta/GT\/s/} ${lcapl/GT\/s/}"
		check "fixture $f.bin: same MPS, MRRS, MPS supported, link status and capability as lspci ($ours | $theirs)" [ "$ours" = "$theirs" ]
	done
else
	ok "# SKIP parity with lspci: lspci (pciutils) not installed"
fi

# --- spanbox-memprobe ------------------------------------------------------------------------------
start=$SECONDS
"$PROBE" --size 64 --runs 3 --json >"$TMP/probe.json" 2>"$TMP/probe.err"; rc=$?
sed 's/^/# /' "$TMP/probe.err"
check "spanbox-memprobe --size 64 --runs 3 --json exits 0 ($((SECONDS - start)) s)" [ $rc -eq 0 ]
jq -r '"# \(.size_mib) MiB, hugepages \(.hugepages), \(.threads) threads, \(.simd)",
	(.results[] | "#   \(.test) (\(.method)) x\(.threads): \(.gbps * 100 | round / 100) GB/s")' "$TMP/probe.json"
ncpu=$(jq -r '.threads' "$TMP/probe.json")
nres=$([ "$ncpu" -gt 1 ] && echo 8 || echo 4)
check "memprobe: copy, nt-copy, read, write, each with 1 and $ncpu threads ($nres figures)" \
	jqt --argjson n "$nres" '[.results[].test] | length == $n and (unique == ["copy","nt-copy","read","write"])' "$TMP/probe.json"
check "memprobe: every figure (median and each run) is > 0.1 and < 1000 GB/s" \
	jqt '[.results[] | .gbps, .runs_gbps[]] | all(. > 0.1 and . < 1000)' "$TMP/probe.json"
check "memprobe: every figure is the median of 3 runs" \
	jqt '.runs == 3 and ([.results[] | (.runs_gbps | length == 3) and (.gbps == (.runs_gbps | sort | .[1]))] | all)' "$TMP/probe.json"
check "memprobe: thread slices start and end on 2 MiB boundaries and cover the buffer" \
	jqt '.split_aligned_2mib and ([.split[] | (.offset % 2097152 == 0) and (.bytes % 2097152 == 0) and .bytes > 0] | all)
		and ([.split[].bytes] | add) == .size_bytes and (.split | length) == .threads' "$TMP/probe.json"
check "memprobe: 64 MiB buffers" jqt '.size_bytes == 67108864' "$TMP/probe.json"
for bad in "--size 0" "--runs x" "--threads 0" "extra"; do
	# shellcheck disable=SC2086
	"$PROBE" $bad >/dev/null 2>&1; rc=$?
	check "spanbox-memprobe $bad: exit 2" [ $rc -eq 2 ]
done
start=$EPOCHREALTIME
"$PROBE" >"$TMP/default.txt" 2>&1; rc=$?
el=$(python3 -c "print(round($EPOCHREALTIME - $start, 1))")
sed 's/^/# /' "$TMP/default.txt"
check "spanbox-memprobe with defaults exits 0 in under 20 s (${el} s)" \
	python3 -c "import sys; sys.exit(0 if $rc == 0 and $el < 20 else 1)"
