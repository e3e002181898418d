#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Micro-benchmark of the ingress tunnel parser (shared/decap.c, docs/CONFIG.md "decap"): for each
# tunnel kind a capture of N frames (bench/decap_frames.py, scapy; every frame its own inner flow,
# 64-byte inner frames), sbx_decap_parse_map() with the default UDP ports run over the whole
# capture ROUNDS times (build/tests/sbx-decap-pcap --bench); cycles per frame of the quickest round.
# `plain` is a frame that is no tunnel: what every other frame of a port with decap rules costs,
# and the baseline the tunnel kinds are set against (a port without decap rules does not call the
# parser at all: 0). The rest of the stage (the mbuf adjusted to the inner frame, the sender table,
# the counters) is not in these figures.
#   bench/decap_micro.sh                    N=1024 ROUNDS=500 PASSES=5
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TOOL=${SBX_BUILD:-$ROOT/build}/tests/sbx-decap-pcap
N=${N:-1024} ROUNDS=${ROUNDS:-500}
[ -x "$TOOL" ] || { echo "decap_micro.sh: no $TOOL (build first)" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 "$ROOT/bench/decap_frames.py" "$TMP" "$N"
echo "# spanbox $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# frames $N per kind, rounds $ROUNDS"
printf 'kind\tframes\tresult\tcycles_per_frame\tover_plain\n'
KINDS="plain plain_vlan vxlan vxlan6 geneve gtpu gre_teb erspan2 erspan3"
declare -A best res frames
# PASSES passes over every kind, interleaved, the quickest of each kept: the machine's load moves
# between kinds measured one after another otherwise
for pass in $(seq "${PASSES:-5}"); do
	for k in $KINDS; do
		IFS=$'\t' read -r n r cyc < <("$TOOL" --bench "$ROUNDS" "$TMP/$k.pcap")
		frames[$k]=$n res[$k]=$r
		if [ -z "${best[$k]:-}" ] || [ "$(echo "$cyc < ${best[$k]}" | bc -l)" = 1 ]; then best[$k]=$cyc; fi
	done
done
for k in $KINDS; do
	printf '%s\t%s\t%s\t%s\t%+.1f\n' "$k" "${frames[$k]}" "${res[$k]}" "${best[$k]}" "$(echo "${best[$k]} - ${best[plain]}" | bc -l)"
done
