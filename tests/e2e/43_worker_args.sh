#!/usr/bin/env bash
# spanbox-worker checks the numbers on its command line (issue 11, section 6): `--calibrate N`
# with N that is not a count of copies 1..UINT_MAX ("abc", "12x", "", "0", "-5", one past
# UINT_MAX) exits 2 naming the argument, before any EAL starts (it used to run the measurement
# with strtoul's partial or wrapped value: 0 copies gave averages of 0/0, -5 about 4.3e9 copies).
# No instance runs; a refused count starts no EAL.
source "$(dirname "$0")/../lib/common.sh"
WORKER="$BUILD/secondary/spanbox-worker"
trap 'rm -rf "$TMP"' EXIT
echo "1..12"

# refused ARG: --calibrate ARG exits 2 at once with the expected message
refused() {
	local out rc
	out=$(timeout 10 "$WORKER" --calibrate "$1" 2>&1)
	rc=$?
	echo "# --calibrate '$1': rc $rc: $(head -c 300 <<<"$out")"
	check "--calibrate '$1': exits 2" [ "$rc" -eq 2 ]
	check "--calibrate '$1': says a count of copies 1..4294967295 is expected" \
		grep -qF -- "--calibrate $1: expected a count of copies 1..4294967295" <<<"$out"
}

for a in abc 12x "" 0 -5 4294967296; do
	refused "$a"
done
