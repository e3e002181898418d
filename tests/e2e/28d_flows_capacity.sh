#!/usr/bin/env bash
# The flow tables in the capacity plan (issue #28, docs/FLOWS.md "Memory"): the hugepage check of
# the pools' socket counts the workers' flow tables (flows_per_worker each, sbx_flowtable_mem: what
# the flow lines, keys and signatures take, checked against rte_malloc's count by tests/unit/test_flowtable.c)
# and the record rings. EAL with --legacy-mem: the heap is eal.socket_mem_mb, it cannot grow, so
# what the plan says fits is all there is.
#  1. 1,000,000 flows per worker in 256 MiB: the plan line (a table of ~189 MiB + a 2 MiB ring),
#     GET /api/v1/pools hugepage_check.flows_bytes as logged and inside need_bytes, and the worker
#     runs with its table (it was created in what the plan showed).
#  2. 2,000,000 flows per worker in the same 256 MiB: refused at start (exit 2) by the hugepage
#     check, which names what is needed, before any pool or table is created.
# Resources: file prefix sbxfb, lcores 111 (primary) 112 (mgmt) 114 (worker), API port 19040,
# collector UDP 19041 (nobody listens: nothing is metered).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
trap 'inst_cleanup; rm -rf "$TMP"' EXIT
PORT=19040 API=http://127.0.0.1:19040/api/v1

# mkcfg NAME FLOWS_PER_WORKER
mkcfg() {
	jq -n --argjson n "$2" --arg in "net_pcap0,rx_pcap=$TMP/in.pcap" --arg db "$TMP/$1.db" '
	{ eal: {file_prefix: "sbxfb", socket_mem_mb: 256, primary_lcore: 111, mgmt_lcore: 112,
	        extra_args: ["--legacy-mem"]},
	  ports: [{name: "in", devargs: $in}, {name: "out", devargs: "net_null0"}],
	  workers: {count: 1, lcores: [114], standby: 0, queues: [[{port: "in", queue: 0}]]},
	  forwarding: {xconnects: [["in", "out"]]},
	  flows: {ports: [{port: "in", direction: "rx"}], flows_per_worker: $n,
	          collectors: [{address: "127.0.0.1", port: 19041}]},
	  mgmt: {port: 19040, database: $db, token: "sbxfb-capacity-token-0123456789"} }' >"$TMP/$1.json"
}
python3 "$ROOT/bench/flows_feed.py" "$TMP/in.pcap" 10 1 >/dev/null

### 1. a million flows per worker fits in what the plan shows
mkcfg fits 1000000
inst_start_primary fits "$TMP/fits.json"
check "1,000,000 flows per worker in 256 MiB (--legacy-mem): the primary starts" [ -f "$TMP/fits.ready" ] ||
	tail -20 "$TMP/fits-primary.log" | sed 's/^/# /'
line=$(grep -m1 'flows plan (socket 0)' "$TMP/fits-primary.log")
echo "# $line"
check "the plan line: 1 worker x a table of 1000000 flows (188.8 MiB) + 1 ring of 16384 records" \
	grep -qE 'flows plan \(socket 0\): 1 workers x a table of 1000000 flows \(keys 91\.6 \+ signatures 5\.7 \+ flow states 91\.6 \+ 0\.0 = 188\.8 MiB\) \+ 1 rings of 16384 records 2\.0 MiB = 190\.8 MiB' \
	<<<"$line"
inst_start_mgmt fits "$TMP/fits.json" "$API"
pools=$(curl -fsS -m 5 "$API/pools")
echo "# hugepage_check: $(jq -c '.[0].hugepage_check' <<<"$pools")"
check "GET /api/v1/pools: hugepage_check.flows_bytes 190.8 MiB, inside need_bytes with the pools'" \
	jq -e '.[0].hugepage_check | (.flows_bytes / 1048576 * 10 | round) == 1908 and .need_bytes > .flows_bytes' <<<"$pools"
ok=0
for ((i = 0; i < 100; i++)); do
	curl -fsS -m 5 "$API/flows" | jq -e '.enabled and .workers[0].flows_created >= 10' >/dev/null 2>&1 && { ok=1; break; }
	sleep 0.1
done
check "the worker runs with its table of 1,000,000 flows: it metered the input's 10 flows" [ $ok = 1 ]
inst_cleanup

### 2. two million do not: refused at start by the hugepage check, before any pool is created
mkcfg big 2000000
"$BUILD/primary/spanbox-primary" -c "$TMP/big.json" >"$TMP/big.log" 2>&1
rc=$?
check "2,000,000 flows per worker in 256 MiB: exit 2 ($rc)" [ "$rc" = 2 ]
check "... the plan names the table (2000000 flows) and the check what the pools and tables need" \
	bash -c "grep -q 'flows plan (socket 0): 1 workers x a table of 2000000 flows' '$TMP/big.log' &&
		grep -qE 'hugepages: the pools need [0-9]+ MiB on socket 0, EAL can get [0-9]+ MiB there' '$TMP/big.log'"
check "... and no pool was created" bash -c "! grep -q 'created in' '$TMP/big.log'"
