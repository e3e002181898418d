#!/usr/bin/env bash
# spanbox-worker checks the numbers on its command line (issue 11, section 6): `--calibrate N`
# with N that is not a count of copies 1..UINT_MAX ("abc", "12x", "", "0", "-5", one past
# UINT_MAX) exits 2 naming the argument, before any EAL starts (it used to run the measurement
# with strtoul's partial or wrapped value: 0 copies gave averages of 0/0, -5 about 4.3e9 copies).
# No instance runs; a refused count starts no EAL. `--calibrate --cross-core [FRAMES]` (issue 15):
# the same check for FRAMES, no second argument, exit 1 with a single CPU, and its table.
source "$(dirname "$0")/../lib/common.sh"
WORKER="$BUILD/secondary/spanbox-worker"
trap 'rm -rf "$TMP"' EXIT
echo "1..21"

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

# --calibrate --cross-core: a count of frames, nothing after it, two CPUs
out=$(timeout 10 "$WORKER" --calibrate --cross-core abc 2>&1); rc=$?
check "--calibrate --cross-core abc: exits 2 ($rc)" [ "$rc" -eq 2 ]
check "--calibrate --cross-core abc: says a count of frames 1..4294967295 is expected" \
	grep -qF -- "--calibrate abc: expected a count of frames 1..4294967295" <<<"$out"
out=$(timeout 10 "$WORKER" --calibrate --cross-core 10 20 2>&1); rc=$?
good=0; [ "$rc" -eq 2 ] && grep -q "too many arguments" <<<"$out" && good=1
check "--calibrate --cross-core 10 20: exits 2, too many arguments ($rc)" [ "$good" -eq 1 ]
out=$(timeout 10 "$WORKER" --calibrate 10 --cross-core 2>&1); rc=$?
check "--calibrate 10 --cross-core: exits 2 ($rc)" [ "$rc" -eq 2 ]
if [ "$(nproc)" -ge 2 ]; then
	out=$(timeout 20 taskset -c 0 "$WORKER" --calibrate --cross-core 64 2>&1); rc=$?
	good=0; [ "$rc" -eq 1 ] && grep -q "needs two CPUs" <<<"$out" && good=1
	check "--calibrate --cross-core on one CPU: exits 1, needs two CPUs ($rc)" [ "$good" -eq 1 ]
	out=$(timeout 60 "$WORKER" --calibrate --cross-core 6400 2>&1); rc=$?
	echo "$out" | sed 's/^/# /'
	check "--calibrate --cross-core 6400 on two CPUs: exits 0 ($rc)" [ "$rc" -eq 0 ]
	check "its table has the four items, each with four figures" \
		[ "$(grep -cE '^(refcount|attach|share|copy) .* [0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$' <<<"$out")" -eq 4 ]
else
	for i in 1 2 3; do echo "ok - --calibrate --cross-core on two CPUs # SKIP one CPU"; done
fi

# --calibrate --timestamps [COPIES] (issue #26): a row per size, encapsulation and strategy
out=$(timeout 60 "$WORKER" --calibrate --timestamps 640 2>&1); rc=$?
echo "$out" | sed 's/^/# /'
check "--calibrate --timestamps 640: exits 0 ($rc)" [ "$rc" -eq 0 ]
check "its table: 12 rows (64/512/1518 B x span/erspan2 x copy/share), none, arista64, metamako and the two differences" \
	[ "$(grep -cE '^ +(64|512|1518) +(span|erspan2) +(copy|share)( +[-+]?[0-9.]+){5}$' <<<"$out")" -eq 12 ]
