# Helpers for end-to-end tests (sourced). TAP lines: ok/not ok.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD="${SBX_BUILD:-$ROOT/build}" # SBX_BUILD: another build directory (parallel development)
CAPTURES=$(cd "$ROOT/../shared/captures" 2>/dev/null && pwd || echo "$ROOT/../shared/captures")
TMP=$(mktemp -d /tmp/spanbox-test.XXXXXX)

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; }
# check DESCRIPTION CMD...: ok when CMD succeeds
check() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; return 1; fi; }
# check DESC cond 'A && B': every part of the condition decides (in "check D [ A ] && B", B does
# not: its failure prints no "not ok")
cond() { eval "$1"; }
# median_time URL: the median of 5 GETs' total time, seconds (curl's time_total)
median_time() {
	local i
	for i in 1 2 3 4 5; do curl -fsS --max-time 10 -o /dev/null -w '%{time_total}\n' "$1" || echo 99; done |
		sort -g | sed -n 3p
}
wait_for() { # wait_for TENTHS CMD...: poll CMD every 0.1 s, at most TENTHS times
	local n=$1 i; shift
	for ((i = 0; i < n; i++)); do "$@" && return 0; sleep 0.1; done
	return 1
}
