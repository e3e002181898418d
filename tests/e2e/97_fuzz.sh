#!/usr/bin/env bash
# Fuzzing in CI: builds build-fuzz (clang-14, -Dfuzz=true) and, for each libFuzzer harness of
# tests/fuzz (config parser, REST body checks, ERSPAN field decoder, PCIe decoder, tunnel parser, mask), replays every
# file of tests/fuzz/regressions/<harness>/ and then fuzzes it for FUZZ_SECONDS (default 30) s.
# One TAP line for the build, two per harness; a crash keeps its input under
# tests/fuzz/regressions/<harness>/ (tests/fuzz/run.sh, docs/TESTING.md). No EAL, no root needed.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
exec "$ROOT/tests/fuzz/run.sh" "${FUZZ_SECONDS:-30}"
