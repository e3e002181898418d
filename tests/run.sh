#!/usr/bin/env bash
# Runs every test of spanbox and prints "N passed, N failed" as its last line.
#   tests/run.sh [PATTERN]   only tests whose file name contains PATTERN
# Unit tests are build/tests/test_* (TAP); end-to-end tests are tests/e2e/*.sh (TAP lines
# "ok - ..." / "not ok - ..."). Each test's full output goes to out/tests/<name>.log.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT="$ROOT/out/tests"
PATTERN=${1:-}
mkdir -p "$OUT"
passed=0 failed=0

run_one() { # run_one NAME CMD...
	local name=$1 log="$OUT/$1.log" rc p f
	shift
	[ -z "$PATTERN" ] || [[ "$name" == *"$PATTERN"* ]] || return 0
	echo "# $name"
	local start=$SECONDS
	"$@" >"$log" 2>&1
	rc=$?
	p=$(grep -cE '^ok( |$)' "$log")
	f=$(grep -cE '^not ok( |$)' "$log")
	grep -E '^(not )?ok( |$)' "$log" | sed 's/^/  /'
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "  not ok - $name exited with status $rc (log: $log)"; tail -n 15 "$log" | sed 's/^/  | /'
		f=1
	elif [ "$f" -gt 0 ]; then
		echo "  (log: $log)"
	fi
	echo "  $name: $p passed, $f failed in $((SECONDS - start)) s"
	passed=$((passed + p)); failed=$((failed + f))
}

for t in "${SBX_BUILD:-$ROOT/build}"/tests/test_*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	run_one "$(basename "$t")" "$t" "$ROOT"
done
for t in "$ROOT"/tests/e2e/*.sh; do
	run_one "$(basename "$t" .sh)" bash "$t"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
