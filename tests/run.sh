#!/usr/bin/env bash
# Runs every test of spanbox and prints "N passed, N failed, N skipped" as its last line.
# TAP: "ok - ... # SKIP why" counts as skipped, never as passed; a test that prints a plan
# ("1..N") must print N results; a test that prints no result, or exits non-zero without a
# "not ok", fails; no unit test found (no build) fails.
#   tests/run.sh [PATTERN]   only tests whose file name contains PATTERN
# Unit tests are build/tests/test_* (TAP); end-to-end tests are tests/e2e/*.sh (TAP lines
# "ok - ..." / "not ok - ..."). Each test's full output goes to out/tests/<name>.log.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT="$ROOT/out/tests"
PATTERN=${1:-}
mkdir -p "$OUT"
passed=0 failed=0 skipped=0

run_one() { # run_one NAME CMD...
	local name=$1 log="$OUT/$1.log" rc p f s plan total
	shift
	[ -z "$PATTERN" ] || [[ "$name" == *"$PATTERN"* ]] || return 0
	echo "# $name"
	local start=$SECONDS
	"$@" >"$log" 2>&1
	rc=$?
	# TAP: "ok ... # SKIP reason" is a skip, not a pass; a plan "1..N" must match the results
	s=$(grep -ciE '^ok( |$).*#[[:space:]]*skip' "$log")
	p=$(( $(grep -cE '^ok( |$)' "$log") - s ))
	f=$(grep -cE '^not ok( |$)' "$log")
	grep -E '^(not )?ok( |$)' "$log" | sed 's/^/  /'
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$log" | tail -n 1)
	total=$((p + f + s))
	if [ -n "$plan" ] && [ "$plan" -ne "$total" ]; then
		echo "  not ok - $name: its plan says 1..$plan, it printed $total results (log: $log)"
		f=$((f + 1))
	fi
	if [ "$total" -eq 0 ] && [ "$rc" -eq 0 ]; then
		echo "  not ok - $name printed no result (log: $log)"; tail -n 15 "$log" | sed 's/^/  | /'
		f=$((f + 1))
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "  not ok - $name exited with status $rc (log: $log)"; tail -n 15 "$log" | sed 's/^/  | /'
		f=1
	elif [ "$f" -gt 0 ]; then
		echo "  (log: $log)"
	fi
	echo "  $name: $p passed, $f failed, $s skipped in $((SECONDS - start)) s"
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
}

units=0
for t in "${SBX_BUILD:-$ROOT/build}"/tests/test_*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	units=$((units + 1))
	run_one "$(basename "$t")" "$t" "$ROOT"
done
if [ "$units" -eq 0 ] && { [ -z "$PATTERN" ] || [[ "test_" == *"$PATTERN"* ]]; }; then
	echo "  not ok - no unit test found in ${SBX_BUILD:-$ROOT/build}/tests (is the build there?)"
	failed=$((failed + 1))
fi
for t in "${SBX_E2E_DIR:-$ROOT/tests/e2e}"/*.sh; do # SBX_E2E_DIR: the runner's own test
	run_one "$(basename "$t" .sh)" bash "$t"
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
