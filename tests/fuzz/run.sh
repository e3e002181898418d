#!/usr/bin/env bash
# Build the libFuzzer harnesses (build-fuzz, clang-14) and run each of them; TAP lines.
#   tests/fuzz/run.sh [SECONDS]   SECONDS per harness (default $FUZZ_SECONDS, else 30)
# For each harness: first every file of tests/fuzz/regressions/<harness>/ is replayed (one TAP line:
# a regression that crashes again fails), then the harness runs SECONDS from the seed corpus
# (seeds.py: the test files) plus the corpus kept in out/fuzz/corpus/<harness>/. A crash, leak,
# timeout or out-of-memory input is copied to tests/fuzz/regressions/<harness>/ (commit it with the
# fix) and the harness's line is "not ok" with libFuzzer's report. Logs: out/fuzz/<harness>.log.
# FUZZ_BUILD: the build dir (default build-fuzz). Used by ./spanbox fuzz and tests/e2e/97_fuzz.sh.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SECONDS_EACH=${1:-${FUZZ_SECONDS:-30}}
FB=${FUZZ_BUILD:-$ROOT/build-fuzz}
OUT=$ROOT/out/fuzz
HARNESSES=(fuzz_config fuzz_rest fuzz_erspan fuzz_pcie fuzz_ingress fuzz_decap fuzz_maprules fuzz_mask fuzz_ts_in)
[[ "$SECONDS_EACH" =~ ^[1-9][0-9]*$ ]] || { echo "usage: tests/fuzz/run.sh [SECONDS] (a whole number >= 1)" >&2; exit 2; }

echo "1..$((${#HARNESSES[@]} * 2 + 1))"
mkdir -p "$OUT"
# meson reconfigures and ninja rebuilds only what changed: a second run costs nothing
if { [ -f "$FB/build.ninja" ] || CC=clang-14 meson setup "$FB" "$ROOT" -Dfuzz=true >"$OUT/setup.log" 2>&1; } &&
	ninja -C "$FB" >"$OUT/build.log" 2>&1; then
	echo "ok - fuzz build $FB (clang-14, -fsanitize=fuzzer,address,undefined)"
else
	echo "not ok - fuzz build $FB failed (clang-14 and libclang-rt-14-dev installed?)"
	tail -n 20 "$OUT/setup.log" "$OUT/build.log" 2>/dev/null | sed 's/^/# /'
	for h in "${HARNESSES[@]}"; do
		echo "not ok - $h: regressions not replayed (no build)"
		echo "not ok - $h: not run (no build)"
	done
	exit 1
fi
rm -rf "$OUT/seeds"
python3 "$ROOT/tests/fuzz/seeds.py" "$OUT/seeds" || echo "# seeds.py failed: the harnesses start from an empty corpus"

# the sanitizers abort with a report (stack trace) on the first error; libFuzzer keeps the input
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=0
for h in "${HARNESSES[@]}"; do
	bin=$FB/tests/fuzz/$h reg=$ROOT/tests/fuzz/regressions/$h log=$OUT/$h.log art=$OUT/artifacts/$h
	regs=()
	[ -d "$reg" ] && mapfile -t regs < <(find "$reg" -type f | sort)
	if [ ${#regs[@]} -eq 0 ]; then
		echo "ok - $h: no regression file to replay"
	elif "$bin" -runs=1 "${regs[@]}" >"$OUT/$h.replay.log" 2>&1; then
		echo "ok - $h: ${#regs[@]} regression file(s) of tests/fuzz/regressions/$h replayed, none crashes"
	else
		echo "not ok - $h: a regression file crashes again (log: $OUT/$h.replay.log)"
		grep -E 'ERROR|runtime error|SUMMARY|Running:' "$OUT/$h.replay.log" | head -n 10 | sed 's/^/# /'
		failed=1
	fi
	rm -rf "$art"
	mkdir -p "$art" "$OUT/corpus/$h"
	start=$(date +%s)
	# -timeout: one input taking 10 s is a hang; -rss_limit_mb: the machine is shared
	timeout -k 10 $((SECONDS_EACH + 120)) "$bin" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=1536 \
		-print_final_stats=1 -artifact_prefix="$art/" "$OUT/corpus/$h" "$OUT/seeds/$h" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	found=$(find "$art" -type f | wc -l)
	if [ "$rc" -eq 0 ] && [ "$found" -eq 0 ]; then
		echo "ok - $h: ${runs:-?} inputs in $(( $(date +%s) - start )) s, no crash"
	else
		mkdir -p "$reg"
		cp "$art"/* "$reg"/ 2>/dev/null
		echo "not ok - $h: exit status $rc, input(s) kept in tests/fuzz/regressions/$h: $(cd "$art" && ls | tr '\n' ' ') (log: $log)"
		grep -E 'ERROR|runtime error|SUMMARY|#[0-9]+ 0x' "$log" | head -n 12 | sed 's/^/# /'
		failed=1
	fi
done
exit "$failed"
