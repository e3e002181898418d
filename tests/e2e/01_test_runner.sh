#!/usr/bin/env bash
# The test runner cannot lie (issue #11, section 7): a skip is counted as skipped, never as passed;
# a plan that does not match the results, a test that prints nothing, one that exits non-zero
# after only "ok" lines, and a missing build each count as a failure. Runs tests/run.sh on fake
# tests in a directory of its own.
source "$(dirname "$0")/../lib/common.sh"
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/e2e" "$TMP/build/tests" "$TMP/out"
fake() { printf '#!/usr/bin/env bash\n%s\n' "$2" >"$TMP/e2e/$1.sh"; }
# run_fake PATTERN: the runner's last line for the fake tests matching PATTERN
run_fake() {
	SBX_BUILD="$TMP/build" SBX_E2E_DIR="$TMP/e2e" bash "$ROOT/tests/run.sh" "$1" 2>&1 | tail -n 1
}
printf '#!/usr/bin/env bash\necho "ok 1 - a"; echo "ok 2 - b"; echo "1..2"\n' >"$TMP/build/tests/test_fake"
chmod +x "$TMP/build/tests/test_fake"
fake a_pass 'echo "ok - one"; echo "ok - two"'
fake b_skip 'echo "ok - one"; echo "ok - # SKIP no tool"; echo "ok - three # skip not here"'
fake c_plan 'echo "1..3"; echo "ok 1 - one"; echo "ok 2 - two"'
fake d_silent 'echo "nothing to say"; exit 0'
fake e_exit 'echo "ok - one"; exit 3'
fake f_fail 'echo "ok - one"; echo "not ok - two"'

check "two passes: '2 passed, 0 failed, 0 skipped'" [ "$(run_fake a_pass)" = "2 passed, 0 failed, 0 skipped" ]
check "SKIP lines count as skipped, not passed: '1 passed, 0 failed, 2 skipped'" \
	[ "$(run_fake b_skip)" = "1 passed, 0 failed, 2 skipped" ]
check "a plan of 3 with 2 results fails: '2 passed, 1 failed, 0 skipped'" \
	[ "$(run_fake c_plan)" = "2 passed, 1 failed, 0 skipped" ]
check "a test that prints no result fails: '0 passed, 1 failed, 0 skipped'" \
	[ "$(run_fake d_silent)" = "0 passed, 1 failed, 0 skipped" ]
check "a non-zero exit after only ok lines fails: '1 passed, 1 failed, 0 skipped'" \
	[ "$(run_fake e_exit)" = "1 passed, 1 failed, 0 skipped" ]
check "a not ok fails: '1 passed, 1 failed, 0 skipped'" [ "$(run_fake f_fail)" = "1 passed, 1 failed, 0 skipped" ]
check "a unit test with a matching plan passes: '2 passed, 0 failed, 0 skipped'" \
	[ "$(run_fake test_fake)" = "2 passed, 0 failed, 0 skipped" ]
rm -f "$TMP/build/tests/test_fake"
check "no unit test in the build fails: '0 passed, 1 failed, 0 skipped'" \
	[ "$(run_fake test_)" = "0 passed, 1 failed, 0 skipped" ]
