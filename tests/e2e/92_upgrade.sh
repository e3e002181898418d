#!/usr/bin/env bash
# Upgrade of the data plane without a primary restart (issue 16, test 4): during a paced pcap
# replay, POST /api/v1/workers/upgrade {"binary": a copy of spanbox-worker} starts standbys of the
# copy and hands every worker over to them in turn (the primary, pools and ports never stop, the
# output equals the input frame for frame); then ./spanbox upgrade-workers with a worker built for
# another memzone layout version (build/secondary/spanbox-worker-layout-test, SBX_SHM_VERSION 9999)
# is refused before it touches a pool, both versions in the error, and nothing changes; so is one
# whose mempool ops table differs (build/secondary/spanbox-worker-ops-test: one more mempool
# driver, DPDK bug 1073), both tables in the error.
#
# Own instance: file prefix sbxsu, lcores 3-7, API port 18303, database under $TMP, pcap files.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
# the layout version of this build (include/spanbox/shm.h), named in the refusal
SHMV=$(sed -n 's/^#define SBX_SHM_VERSION \([0-9][0-9]*\)$/\1/p' "$ROOT/include/spanbox/shm.h")
set -o pipefail # a check that reads the API through a pipe fails when the API does not answer

API=http://127.0.0.1:18303/api/v1
CFG="$TMP/upg.json"
IN="$CAPTURES/bulk_zeek_ftp-8317-small.pcap"
V2="$TMP/bin/spanbox-worker-v2"
BAD="$BUILD/secondary/spanbox-worker-layout-test"
OPS="$BUILD/secondary/spanbox-worker-ops-test" # one more mempool driver: another ops table
trap 'inst_cleanup; rm -rf "$TMP"' EXIT

get() { curl -fsS --max-time 5 "$1"; }
jqt() { [ -s "${@: -1}" ] && jq -e "$@" >/dev/null; } # jqt FILTER... FILE: an empty FILE (API down) fails
parked() { get "$API/standbys" | jq -e --arg b "$1" 'any(.[]; .state == "parked" and .binary == $b)' >/dev/null; }
# upgrade_ended BEFORE: the upgrade begun after BEFORE (its "started") is done or refused
upgrade_ended() {
	get "$API/workers/upgrade" | jq -e --arg b "$1" '.started != $b and (.state == "done" or .state == "refused")' >/dev/null
}

mkdir -p "$TMP/bin" && cp "$BUILD/secondary/spanbox-worker" "$V2"
check "the test builds of another layout and another mempool driver table exist ($BAD, $OPS)" [ -x "$BAD" -a -x "$OPS" ]
PPS=${PPS:-1000}
standby_pcap_start "" upg "$CFG" sbxsu 18303 "$TMP/upg.db" "$TMP/out.pcap" "$PPS" "$API"
PRIMARY=$INST_PRIMARY
OLD=$(get "$API/workers/0" | jq -r .binary)
check "a standby of the build's worker binary parks" wait_for 100 parked "$OLD"
check "GET /workers/upgrade: state none before any upgrade" \
	bash -o pipefail -c "curl -fsS $API/workers/upgrade | jq -e '.state == \"none\" and .binary == null and .error == null' >/dev/null"
p0_in() { get "$API/status" | jq -e '.ports[] | select(.name == "p0") | .stats.ipackets'; }
p1_out() { get "$API/status" | jq -e '.ports[] | select(.name == "p1") | .stats.opackets'; }
pids0=$(get "$API/workers" | jq -c '[.[].pid]')

# 1. upgrade to the copy during the replay
before=$(get "$API/workers/upgrade" | jq -r .started)
code=$(curl -sS --max-time 5 -o "$TMP/post.json" -w '%{http_code}' -H "$AUTH" -H 'Content-Type: application/json' \
	-X POST --data "{\"binary\": \"$V2\"}" "$API/workers/upgrade")
in_at=$(p0_in)
echo "# POST /workers/upgrade: HTTP $code $(cat "$TMP/post.json"); input read $in_at of $N"
check "1: POST /workers/upgrade {binary: the copy} answers 202 'upgrade started'" \
	cond "[ '$code' = 202 ] && jq -e '.status == \"upgrade started\"' '$TMP/post.json' >/dev/null"
check "1: the upgrade is done within 30 s" wait_for 300 upgrade_ended "$before"
get "$API/workers/upgrade" | jq -c . | sed 's/^/# upgrade: /'
get "$API/workers" | jq -c '[.[] | {id, pid, state, binary, takeovers}]' | sed 's/^/# workers: /'
check "1: state done, 2 of 2 workers handed over, from the build's binary to the copy" \
	bash -o pipefail -c "curl -fsS $API/workers/upgrade | jq -e --arg b '$V2' --arg o '$OLD' '.state == \"done\" and .workers_done == 2 and .workers == 2 and .binary == \$b and .from == \$o and .error == null' >/dev/null"
check "1: every worker runs the copy, each taken over once by a standby (new pids, running)" \
	bash -o pipefail -c "curl -fsS $API/workers | jq -e --arg b '$V2' --argjson old '$pids0' 'all(.[]; .binary == \$b and .takeovers == 1 and .state == \"running\") and ([.[].pid] | . != \$old and all(.[]; . > 0))' >/dev/null"
check "1: the upgrade happened while the input was still being read ($in_at < $N)" [ "${in_at:-$N}" -lt "$N" ]
check "1: a standby of the copy parks afterwards" wait_for 100 parked "$V2"
check "1: the primary never stopped (same pid, appliance up)" \
	bash -c "kill -0 $PRIMARY && curl -fsS $API/status | jq -e '.appliance.primary_pid == $PRIMARY' >/dev/null"

# refused_upgrade TAG BINARY WHAT ERROR_RE: ./spanbox upgrade-workers BINARY exits 1, refused;
# GET /workers/upgrade says refused with an error matching ERROR_RE (jq test), 0 handed over;
# nothing changed (same pids, running the copy); a standby of the copy parks again. $out: its output.
refused_upgrade() {
	local tag=$1 bin=$2 what=$3 re=$4 pids rc
	pids=$(get "$API/workers" | jq -c '[.[].pid]')
	out=$(SBX_BUILD="$BUILD" timeout 60 "$ROOT/spanbox" upgrade-workers "$bin" "$CFG" 2>&1)
	rc=$?
	echo "# ./spanbox upgrade-workers $bin: rc $rc: $out"
	check "$tag: ./spanbox upgrade-workers ($what) exits 1, refused" \
		cond "[ $rc -eq 1 ] && grep -q 'upgrade refused' <<<\"\$out\""
	check "$tag: GET /workers/upgrade: refused, with that error, 0 workers handed over" \
		bash -o pipefail -c "curl -fsS $API/workers/upgrade | jq -e --arg re '$re' '.state == \"refused\" and .workers_done == 0 and (.error | test(\$re))' >/dev/null"
	check "$tag: nothing changed: the same worker pids, running the copy" \
		bash -o pipefail -c "curl -fsS $API/workers | jq -e --arg b '$V2' --argjson p '$pids' '[.[].pid] == \$p and all(.[]; .binary == \$b and .state == \"running\")' >/dev/null"
	check "$tag: a standby of the copy (not the refused build) parks again" wait_for 100 parked "$V2"
}

# 2. an upgrade to a binary of another layout version is refused; nothing changes
refused_upgrade 2 "$BAD" "layout test build" "primary $SHMV, this binary 9999"
check "2: the refusal names both layout versions (primary $SHMV, this binary 9999)" \
	cond "grep -qF 'memzone layout version: primary $SHMV, this binary 9999' <<<\"\$out\""
# 2b. a binary whose mempool ops table differs (one more driver, registered by a constructor as
# DPDK's drivers are: the order differs between binaries linked differently, DPDK bug 1073)
refused_upgrade 2b "$OPS" "a build with another mempool driver table" "DPDK bug 1073"
ndrv=$(( $(sed -n 's/.*primary \([0-9][0-9]*\) drivers, this binary \([0-9][0-9]*\);.*/\2 - \1/p' <<<"$out") ))
check "2b: the refusal names both tables' sizes (this binary's one more: $ndrv) and the first entry that differs" \
	cond "[ '$ndrv' = 1 ] && grep -qE 'DPDK bug 1073\\): primary [0-9]+ drivers, this binary [0-9]+; entry [0-9]+ is [a-z0-9_()]+ in the primary, [a-z0-9_()]+ in this binary' <<<\"\$out\""
check "2: an upgrade to a path that is no executable answers 409 naming binary" \
	bash -o pipefail -c "[ \"\$(curl -sS -o '$TMP/e.json' -w '%{http_code}' -H '$AUTH' -H 'Content-Type: application/json' -X POST --data '{\"binary\": \"/nonexistent/w\"}' $API/workers/upgrade)\" = 409 ] && jq -e '.error.field == \"binary\"' '$TMP/e.json' >/dev/null"
sleep 0.3
get "$API/events?limit=200" >"$TMP/events.json"
check "events: upgrade_start 3 times, upgrade_done once, upgrade_refused twice" \
	jqt '([.[] | select(.kind == "upgrade_start")] | length) == 3 and ([.[] | select(.kind == "upgrade_done")] | length) == 1 and
		([.[] | select(.kind == "upgrade_refused")] | length) == 2' "$TMP/events.json"
all_out() { [ "$(p1_out)" = "$N" ]; }
wait_for 300 all_out
check "p1 wrote all $N input frames (within 30 s)" all_out
inst_stop_pid "$INST_MGMT"
inst_stop_pid "$PRIMARY"
check "output pcap equals the input frame for frame across the upgrade and the refused one" \
	python3 "$ROOT/tests/lib/pcap_equal.py" "$IN" "$TMP/out.pcap"
