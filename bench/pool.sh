#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# bench/pool.sh - pool creation time against its memory bound (NOTES section 4).
#
# For each size of $SIZES (default 256 K, 1 M and 2 M mbufs of the default size: 2176 B data
# room, 2368 B per object), build/tools/spanbox-pooltime times rte_pktmbuf_pool_create() and a
# first-touch memset of the same number of bytes on fresh 2 MiB hugepages, $RUNS times each
# (median; after one untimed warm-up memset of the largest size), in two EAL memory modes:
#   fresh     EAL maps hugepages as the pool asks for them: creation includes their first touch,
#             like the memset (the like-for-like comparison);
#   prefault  EAL reserved the memory at init (-m, what spanbox-primary does with
#             eal.socket_mem_mb): creation runs on pages the kernel already cleared.
# and prints both times and their ratio (creation / memset), then a markdown table and
#   TARGET MET / TARGET MISSED (creation <= $TARGET x memset in fresh mode, every size)
# The exit status is 0 in both cases; 1 only when the benchmark cannot run.
#
# 2 M mbufs take ~4.7 GiB of hugepages, twice that in prefault mode (EAL's reservation plus the
# memset's fresh pages). When fewer 2 MiB pages are free, the script raises
# /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages for the run and puts the old value back
# at exit (also on Ctrl-C). Pages other processes hold are never touched; if the kernel cannot
# give enough pages, the script says so and exits 1.
#
# Run as root from anywhere: bench/pool.sh            (about 30 s with the defaults)
#
# Environment (defaults in brackets):
#   SIZES [256K,1M,2M]   mbuf counts (K and M suffixes)
#   RUNS [5]             measurements per size and mode, median reported
#   CACHE [256]          per-lcore mempool cache
#   MODES [fresh prefault]
#   TARGET [2]           maximum creation / memset ratio (fresh mode)
#   BUILD [repo/build]   spanbox build directory
set -u

SIZES=${SIZES:-256K,1M,2M}
RUNS=${RUNS:-5}
CACHE=${CACHE:-256}
MODES=${MODES:-fresh prefault}
TARGET=${TARGET:-2}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
POOLTIME=$BUILD/tools/spanbox-pooltime
NR=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
FREE=/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages
OBJ_BYTES=2368       # bytes per mbuf object (header + struct rte_mbuf + 2176 B data room)
TMP=$(mktemp -d /tmp/sbx-pool-bench.XXXXXX)
NR_ORIG=

die() { echo "bench/pool.sh: $*" >&2; exit 1; }

restore() {
	if [ -n "$NR_ORIG" ]; then
		echo "$NR_ORIG" >"$NR" 2>/dev/null
		echo "# nr_hugepages put back to $NR_ORIG (now $(cat "$NR"))"
		NR_ORIG=
	fi
	rm -rf "$TMP"
}
trap restore EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || die "run as root (hugepages)"
[ -x "$POOLTIME" ] || die "$POOLTIME not built (ninja -C $BUILD)"
command -v jq >/dev/null || die "jq is needed"

# mbufs of the largest size
max=0
for s in ${SIZES//,/ }; do
	case $s in *K|*k) n=$(( ${s%?} * 1024 )) ;; *M|*m) n=$(( ${s%?} * 1048576 )) ;; *) n=$s ;; esac
	[ "$n" -gt "$max" ] && max=$n
done
# pages for the largest pool (objects + ring + EAL's own) twice (prefault: EAL's -m plus the
# memset's fresh pages), plus 1 GiB of slack: other processes may take pages meanwhile
pool_pages=$(( (max * (OBJ_BYTES + 16) + 2097151) / 2097152 + 64 ))
need=$(( 2 * pool_pages + 512 ))
[[ " $MODES " == *" prefault "* ]] || need=$(( pool_pages + 512 ))
free=$(cat "$FREE")
if [ "$free" -lt "$need" ]; then
	NR_ORIG=$(cat "$NR")
	want=$(( NR_ORIG + need - free ))
	echo "# $free free 2 MiB hugepages, $need needed: nr_hugepages $NR_ORIG -> $want for this run"
	echo "$want" >"$NR"
	free=$(cat "$FREE")
	[ "$free" -ge "$need" ] || die "the kernel gave only $free free 2 MiB pages (nr_hugepages $(cat "$NR")), $need needed"
fi

echo "# $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo); kernel $(uname -r); DPDK $(pkg-config --modversion libdpdk 2>/dev/null)"
echo "# spanbox-pooltime --mbufs $SIZES --cache $CACHE --runs $RUNS (median of $RUNS); $(cat "$FREE") free 2 MiB hugepages"
for mode in $MODES; do
	args=(--mbufs "$SIZES" --cache "$CACHE" --runs "$RUNS" --json)
	[ "$mode" = prefault ] && args+=(--prefault)
	"$POOLTIME" "${args[@]}" >"$TMP/$mode.json" 2>"$TMP/$mode.err" || { cat "$TMP/$mode.err" >&2; die "spanbox-pooltime ($mode) failed"; }
	echo "## mode $mode"
	jq -r '"warm-up: first-touch memset of \(.warmup_memset_bytes / 1048576 | floor) MiB in \(.warmup_memset_ms | round) ms (not in the results; in a VM the first touch of guest memory also makes the host back it)"' "$TMP/$mode.json"
	jq -r '.results[] | "mbufs \(.mbufs): pool \(.pool_bytes / 1048576 | floor) MiB on \(.page_size_kb) KiB pages (\(.fresh_bytes / 1048576 | floor) MiB mapped fresh during creation): create \(.create_ms * 10 | round / 10) ms, memset \(.memset_ms * 10 | round / 10) ms, ratio \(.ratio * 100 | round / 100)  [create runs \(.create_ms_runs | map(. * 10 | round / 10)); memset runs \(.memset_ms_runs | map(. * 10 | round / 10))]"' "$TMP/$mode.json"
done

echo
echo "| mbufs | pool MiB | mode | create ms | first-touch memset ms | memset GB/s | create / memset |"
echo "|---|---|---|---|---|---|---|"
for mode in $MODES; do
	jq -r --arg m "$mode" '.results[] | "| \(.mbufs) | \(.pool_bytes / 1048576 * 10 | round / 10) | \($m) | \(.create_ms * 10 | round / 10) | \(.memset_ms * 10 | round / 10) | \(.memset_bytes / .memset_ms / 1e6 * 100 | round / 100) | \(.ratio * 100 | round / 100) |"' "$TMP/$mode.json"
done
echo
if [[ " $MODES " == *" fresh "* ]]; then
	worst=$(jq '[.results[].ratio] | max' "$TMP/fresh.json")
	if jq -e --argjson t "$TARGET" '[.results[].ratio] | max <= $t' "$TMP/fresh.json" >/dev/null; then
		echo "TARGET MET (fresh pages: creation at most $(printf '%.2f' "$worst") x the memset bound, target $TARGET x)"
	else
		echo "TARGET MISSED (fresh pages: creation up to $(printf '%.2f' "$worst") x the memset bound, target $TARGET x)"
	fi
fi
