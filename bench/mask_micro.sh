#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/mask_micro.sh - what masking a mirror copy costs (issue #26, docs/CONFIG.md "mask"), side by
# side with the same mirror path unmasked: build/tests/sbx-mask-bench runs the worker's own
# sbx_mirror_copy_burst() (ERSPAN II over IPv4, bursts of 32, each burst freed as a destination's
# TX completion frees it) on one Ethernet/IPv4/TCP frame per size, five sessions interleaved round
# by round: strategy copy without a mask, with a mask {from l4, offset 20, length 64} (the first
# 64 B of the TCP payload) and with length 9600 (the whole payload), strategy adaptive (threshold
# 512: bigger frames shared) without and with the 64 B mask (a masked session never shares).
# Prints a markdown table: TSC cycles per copy, minimum of ROUNDS rounds (the least disturbed;
# median in parentheses). No appliance, no hugepages, no root needed.
#   bench/mask_micro.sh [ITERATIONS]     (copies per round and session, default 200000; ~20 s)
# CPU: the process is pinned to the last CPU of its affinity (CPU=N to choose).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${SBX_BUILD:-$ROOT/build}/tests/sbx-mask-bench
[ -x "$BIN" ] || { echo "mask_micro: $BIN missing (ninja -C build)" >&2; exit 1; }
CPU=${CPU:-$(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' | tail -1 | sed 's/.*-//')}
echo "# $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null), CPU $CPU:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), load $(cut -d' ' -f1-3 /proc/loadavg)"
exec taskset -c "$CPU" "$BIN" "${1:-200000}"
