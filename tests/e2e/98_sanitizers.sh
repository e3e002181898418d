#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer in CI: builds build-asan (meson
# -Db_sanitize=address,undefined, clang-14) and runs in it every unit test and the replay and mirror
# end-to-end tests (20_replay, 60_mirror_replay, 62_mirror_replay_lossless, with SBX_BUILD=build-asan:
# the primary and its workers, DPDK secondaries, are instrumented; DPDK's own libraries are not), and
# 18_decap_captures (the tunnel parser on every capture, no EAL).
# One TAP line per test: ok when it passes and no process wrote a sanitizer report; the report (or
# the failed results) follow as "# " lines. Every process writes its reports to its own file
# (log_path), so a worker's report is seen even when the primary survives it. docs/TESTING.md says
# which sanitizer options are set and why.
#   SBX_ASAN_BUILD   the build dir (default build-asan)
#   SBX_SAN_E2E      the end-to-end tests to run (names under tests/e2e, without .sh)
source "$(dirname "$0")/../lib/common.sh"
AB=${SBX_ASAN_BUILD:-$ROOT/build-asan}
E2E=${SBX_SAN_E2E:-20_replay 60_mirror_replay 62_mirror_replay_lossless 18_decap_captures}
LOGS=$TMP/san
trap 'rm -rf "$TMP"' EXIT
n=0
tap() { n=$((n + 1)); echo "$@"; }

start=$SECONDS
if { [ -f "$AB/build.ninja" ] ||
	CC=clang-14 meson setup "$AB" "$ROOT" -Db_sanitize=address,undefined -Db_lundef=false \
		-Dbuildtype=debugoptimized >"$TMP/setup.log" 2>&1; } &&
	ninja -C "$AB" >"$TMP/build.log" 2>&1; then
	tap "ok - sanitizer build $AB (clang-14 -fsanitize=address,undefined) in $((SECONDS - start)) s"
else
	tap "not ok - sanitizer build $AB failed"
	tail -n 20 "$TMP/setup.log" "$TMP/build.log" 2>/dev/null | sed 's/^/# /'
	echo "1..$n"
	exit 1
fi

# halt_on_error / abort_on_error: the first error stops the process (UBSan would go on by default);
# detect_leaks stays on (LeakSanitizer at exit: nothing of our own leaks, and the EAL's allocations
# are in hugepages or still referenced, so no suppression is needed); log_path: one file per pid,
# the same for both. clang, not gcc: gcc 12's UBSan ignores log_path (its reports go to stderr, which
# the tests keep in their own temporary dirs and delete), clang's honours it.
# Nothing is needed for the DPDK secondaries: ASan's shadow (0x7fff8000..0x10007fff7fff) is the same
# in every instrumented process, so the workers map the hugepages at the primary's addresses.
san_env() { # san_env DIR: the sanitizer options of one test, reports under DIR
	mkdir -p "$1"
	export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:disable_coredump=1:log_path=$1/san"
	export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$1/san"
}
# verdict NAME RC LOG DIR: one TAP line for a test run in the sanitizer build
verdict() {
	local name=$1 rc=$2 log=$3 dir=$4 reports oks noks
	reports=$(grep -lE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error|SUMMARY: ' "$dir"/* 2>/dev/null)
	oks=$(grep -cE '^ok( |$)' "$log") noks=$(grep -cE '^not ok( |$)' "$log")
	if [ "$rc" -eq 0 ] && [ "$noks" -eq 0 ] && [ "$oks" -gt 0 ] && [ -z "$reports" ]; then
		tap "ok - $name under ASan+UBSan: $oks results ok, no sanitizer report"
		return
	fi
	tap "not ok - $name under ASan+UBSan: exit status $rc, $noks not ok of $((oks + noks)), $(wc -w <<<"$reports") sanitizer report(s)"
	grep -E '^not ok' "$log" | head -n 10 | sed 's/^/# /'
	for f in $(head -n 3 <<<"$reports"); do # the first three reports (each process stops at its first)
		echo "# --- $f:"
		grep -E 'ERROR|runtime error|SUMMARY|^ *#[0-9]+ |located|allocated|freed' "$f" | head -n 30 | sed 's/^/# /'
	done
	[ -n "$reports" ] || tail -n 15 "$log" | sed 's/^/# | /'
}

for t in "$AB"/tests/test_*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	name=$(basename "$t")
	san_env "$LOGS/$name"
	start=$SECONDS
	( ulimit -c 0; exec timeout -k 10 300 "$t" "$ROOT" ) >"$LOGS/$name.log" 2>&1
	verdict "$name ($((SECONDS - start)) s)" $? "$LOGS/$name.log" "$LOGS/$name"
done
for e in $E2E; do
	san_env "$LOGS/$e"
	start=$SECONDS
	( ulimit -c 0; SBX_BUILD="$AB" exec timeout -k 10 900 bash "$ROOT/tests/e2e/$e.sh" ) >"$LOGS/$e.log" 2>&1
	verdict "$e ($((SECONDS - start)) s)" $? "$LOGS/$e.log" "$LOGS/$e"
done
unset ASAN_OPTIONS UBSAN_OPTIONS
echo "1..$n"
