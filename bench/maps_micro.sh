#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Micro-benchmark of map classification (docs/MAPS.md, docs/BENCHMARKS.md "Maps"): for each rule
# count, ClassBench-like random rules over MAPS maps (prefixes of every length cut from a few base
# networks so that they nest and overlap, 1 in 8 IPv6, TCP/UDP/any, exact destination ports and port
# ranges, source port ranges), built into rte_acl contexts by shared/mapacl.c, and 2,048 frames built
# to hit random rules, classified in bursts of 32 as a worker would (key extraction, then one lookup
# per context set). Prints one TSV row per size: parse ms (with making the JSON), shadow-check ms,
# build ms, context MiB (rte_malloc), extract and classify cycles per frame (the quickest of 64
# rounds: preemption on a shared machine only adds), frames of VERIFY whose results differ from the
# reference match, shadowed rules, context sets, contexts, the cycles per frame the per-rule counters
# add (count_cyc: sbx_rule_ctrs_count after each burst's lookup, as the maps stage does), the cycles
# per frame of each frame's set of maps and the burst's union (sets_cyc: sbx_mapacl_frame_set, the
# maps stage's code; a tool built before it prints no such column; sets64_cyc: the same with the
# 64-bit set of before, up to 64 maps, -1 past them); then the
# issue's targets.
#   bench/maps_micro.sh                      sizes 0 100 1024 16384 65536, 16 maps, max_size 0
#   PROFILE=acl1 bench/maps_micro.sh         rules drawn as ClassBench's acl1 seed draws them
#                                            (an ACL: /31-/32 sources, a few servers, exact ports)
#   RULES_FILE=r.json bench/maps_micro.sh    one row for the rules of a file (bench/classbench2json.py
#                                            turns a ClassBench filter file into one)
#   BENCH_FRAMES=131072 bench/maps_micro.sh  131,072 distinct frames instead of 2,048 (a multiple of 32): the
#                                            lookups walk every path of the tries, and the frames (16 MiB)
#                                            leave the caches, as in the running product (bench/maps.sh)
#   SIZES="1024 16384" MAX_SIZE=$((512<<20)) MAPS=16 SINGLE=1 TIMEOUT=900 VERIFY=512 bench/maps_micro.sh
# Needs the build (build/tests/sbx-map-classify: EAL without hugepages, lcore 118; no port).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TOOL=${SBX_BUILD:-$ROOT/build}/tests/sbx-map-classify
SIZES=${SIZES:-0 100 1024 16384 65536} MAPS=${MAPS:-16} MAX_SIZE=${MAX_SIZE:-0} TIMEOUT=${TIMEOUT:-900}
VERIFY=${VERIFY:-512} SEED=${SEED:-1} PROFILE=${PROFILE:-mixed} BENCH_FRAMES=${BENCH_FRAMES:-2048}
[ -x "$TOOL" ] || { echo "maps_micro.sh: no $TOOL (build first)" >&2; exit 1; }
args=(--bench --maps "$MAPS" --max-size "$MAX_SIZE" --seed "$SEED" --verify "$VERIFY" --bench-frames "$BENCH_FRAMES")
[ "${SINGLE:-0}" = 1 ] && args+=(--single)
args+=(--profile "$PROFILE")
if [ -n "${RULES_FILE:-}" ]; then
	args+=(--rules-file "$RULES_FILE")
	SIZES=file
fi
echo "# spanbox $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# maps $MAPS, max_size $MAX_SIZE, single ${SINGLE:-0}, seed $SEED, profile $PROFILE, frames $BENCH_FRAMES${RULES_FILE:+, rules of $RULES_FILE}"
printf 'rules\tmaps\tparse_ms\tshadow_ms\tbuild_ms\tMiB\textract_cyc\tclassify_cyc\tdiffer\tshadowed\tsets\tcontexts\tcount_cyc\tsets_cyc\tsets64_cyc\tpeak_RSS_MiB\n'
declare -A cyc build mib cnt
for n in $SIZES; do
	out=$(timeout "$TIMEOUT" /usr/bin/time -f 'RSS %M' "$TOOL" "${args[@]}" --rules "${n/file/0}" 2>&1); rc=$?
	row=$(grep -P '^\d+\t' <<<"$out" | tail -n 1)
	rss=$(sed -n 's/^RSS //p' <<<"$out")
	if [ -z "$row" ]; then
		echo -e "$n\t(failed: exit $rc$( [ "$rc" = 124 ] && echo ", over $TIMEOUT s"); $(grep -v '^RSS' <<<"$out" | tail -n 1))"
		continue
	fi
	echo -e "$row\t$((rss / 1024))"
	IFS=$'\t' read -r _ _ _ _ b m _ c _ _ _ _ k _ <<<"$row"
	cyc[$n]=$c build[$n]=$b mib[$n]=$m cnt[$n]=$k
done
if [ -n "${cyc[65536]:-}" ] && [ -n "${cyc[1024]:-}" ] && [ -n "${cyc[0]:-}" ]; then
	awk -v c0="${cyc[0]}" -v c1k="${cyc[1024]}" -v c64k="${cyc[65536]}" -v b="${build[65536]}" -v m="${mib[65536]}" 'BEGIN {
		printf "# 65,536 rules: %.1f cycles/frame added (target <= 60): %s\n", c64k - c0, c64k - c0 <= 60 ? "met" : "MISSED"
		printf "# 65,536 rules: %.2f x the 1,024-rule cost (target <= 1.5): %s\n", c64k / c1k, c64k / c1k <= 1.5 ? "met" : "MISSED"
		printf "# 65,536 rules: built in %.1f s (target <= 5), %.0f MiB (target <= 512): %s\n", b / 1000, m,
		       b <= 5000 && m <= 512 ? "met" : "MISSED" }'
fi
for n in $SIZES; do
	[ -n "${cnt[$n]:-}" ] && awk -v n="$n" -v k="${cnt[$n]}" 'BEGIN {
		printf "# %s rules: the per-rule counters add %.1f cycles/frame (target <= 60 at 65,536): %s\n", n, k,
		       k <= 60 ? "met" : "MISSED" }'
done
exit 0
