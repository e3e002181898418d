#!/usr/bin/env bash
# Capacity planner, populate timing, NUMA placement, PCIe, copy probe and hugepages, as the
# primary's log and the API show them (docs/DIAGNOSTICS.md "The appliance's own view").
# Own file prefix (sbxt85), taps (sbx85-*) and API port (18085); every wait is bounded.
source "$(dirname "$0")/../lib/common.sh"
PREFIX=sbxt85
PORT=18085
API=http://127.0.0.1:$PORT/api/v1
PRIMARY="$BUILD/primary/spanbox-primary"
MGMT="$BUILD/mgmt/spanbox-mgmt"
PRIMARY_PID= MGMT_PID=
jqt() { jq -e "$@" >/dev/null; } # jq -e, quiet

stop_all() {
	local pid i
	for pid in $MGMT_PID $PRIMARY_PID; do
		kill -TERM "$pid" 2>/dev/null || continue
		for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	MGMT_PID= PRIMARY_PID=
}
trap 'stop_all; rm -rf "$TMP"' EXIT

# config NAME JQ-FILTER: the base config below, changed by the filter, written to $TMP/NAME.json
config() {
	jq "$2" >"$TMP/$1.json" <<EOF
{ "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 64},
  "pool": {"cache": 128, "headroom": 1000, "measure_memset": true},
  "ports": [ {"name": "p0", "devargs": "net_tap0,iface=sbx85-p0", "rx_desc": 512, "tx_desc": 256},
             {"name": "p1", "devargs": "net_tap1,iface=sbx85-p1", "rx_desc": 256, "tx_desc": 512},
             {"name": "m", "devargs": "net_tap2,iface=sbx85-m", "tx_desc": 128} ],
  "workers": {"count": 2, "burst": 16},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mirrors": [{"id": 9, "sources": [{"port": "p0"}], "destination": {"port": "m"}}],
  "mgmt": {"port": $PORT, "database": "$TMP/db.sqlite"} }
EOF
}

# start NAME [ENV=VALUE...]: primary on $TMP/NAME.json (log $TMP/NAME.log); 0 once ready (20 s max)
start() {
	local name=$1 i
	shift
	rm -f "$TMP/ready"
	env "$@" "$PRIMARY" -c "$TMP/$name.json" --ready-file "$TMP/ready" >"$TMP/$name.log" 2>&1 &
	PRIMARY_PID=$!
	for ((i = 0; i < 200; i++)); do
		[ -f "$TMP/ready" ] && return 0
		kill -0 "$PRIMARY_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# start_mgmt NAME: mgmt on the same config; 0 once the API says the appliance is up (10 s max)
start_mgmt() {
	local i
	"$MGMT" -c "$TMP/$1.json" >"$TMP/mgmt.log" 2>&1 &
	MGMT_PID=$!
	for ((i = 0; i < 100; i++)); do
		curl -fsS "$API/health" 2>/dev/null | jq -e '.appliance == "up"' >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# refused NAME [ENV=VALUE...]: run the primary to its end (30 s max); prints its exit status
refused() {
	local name=$1
	shift
	env "$@" timeout 30 "$PRIMARY" -c "$TMP/$name.json" >"$TMP/$name.log" 2>&1
	echo $?
}

### 1. a live appliance with p1 pretended on socket 1 (test hook) and the memset bound measured
config base '.'
start base SBX_TEST_PORT_SOCKET=p1=1
check "primary starts with the NUMA test hook and pool.measure_memset" [ $? -eq 0 ]
start_mgmt base
check "mgmt attaches" [ $? -eq 0 ]
curl -fsS "$API/pools" >"$TMP/pools.json"
curl -fsS "$API/status" >"$TMP/status.json"
curl -fsS "$API/system" >"$TMP/system.json"
echo "# plan: $(jq -c '.[0].plan' "$TMP/pools.json")"

check "one pool, sbx_pool_s0, serving the 3 ports" \
	jqt 'length == 1 and .[0].name == "sbx_pool_s0" and .[0].plan.ports == 3' "$TMP/pools.json"
check "plan terms add up to the total" \
	jqt '.[0].plan | .rx_desc + .tx_desc + .mirror_tx + .lcore_caches + .bursts + .rings + .reassembly + .headroom == .total' "$TMP/pools.json"
# the terms recomputed from the config and the queue counts the API shows
exp_rx=$(jq '[.ports[] | .rx_queues * (if .name == "p0" then 512 elif .name == "p1" then 256 else 1024 end)] | add' "$TMP/status.json")
exp_tx=$(jq '[.ports[] | ([.tx_queues, 2] | min) * (if .name == "p0" then 256 elif .name == "p1" then 512 else 128 end)] | add' "$TMP/status.json")
# every port has its mirror TX queues (a session may be added at run time), each x its tx_desc
exp_mirror=$(jq '[.ports[] | (.tx_queues - 2) * (if .name == "p0" then 256 elif .name == "p1" then 512 else 128 end)] | add + 2 * 16 * 1' "$TMP/status.json")
exp_bursts=$(jq '[.workers[].queues | length] | add * 16' "$TMP/status.json")
echo "# expected from the config: rx_desc $exp_rx, tx_desc $exp_tx, mirror_tx $exp_mirror, bursts $exp_bursts"
check "rx_desc = sum of RX queues x rx_desc (512, 256, 1024)" jqt ".[0].plan.rx_desc == $exp_rx and $exp_rx > 0" "$TMP/pools.json"
check "tx_desc = sum of forwarding TX queues x tx_desc (256, 512, 128)" jqt ".[0].plan.tx_desc == $exp_tx and $exp_tx > 0" "$TMP/pools.json"
check "mirror_tx = mirror TX queues of every port x its tx_desc + 2 workers x burst 16 x 1 session" \
	jqt ".[0].plan.mirror_tx == $exp_mirror" "$TMP/pools.json"
check "lcore_caches = 2 workers x 1.5 x cache 128" jqt '.[0].plan.lcore_caches == 384 and .[0].plan.workers == 2' "$TMP/pools.json"
check "bursts = burst 16 x queues polled" jqt ".[0].plan.bursts == $exp_bursts and $exp_bursts > 0" "$TMP/pools.json"
check "headroom = pool.headroom 1000, no bridge rings" jqt '.[0].plan.headroom == 1000 and .[0].plan.rings == 0' "$TMP/pools.json"
check "size: the plan rounded up to 2^k - 1" \
	jqt '.[0] | .size_source == "plan" and .size >= .plan.total and .size < 2 * .plan.total + 1024 and ((.size + 1) | log2 | . == floor)' "$TMP/pools.json"
total=$(jq '.[0].plan.total' "$TMP/pools.json")
check "the start-up log prints the same plan" \
	grep -q "pool plan sbx_pool_s0 (socket 0, 3 ports, 2 workers): rx_desc $exp_rx + tx_desc $exp_tx + mirror_tx $exp_mirror + lcore_caches 384 + bursts $exp_bursts + rings 0 + reassembly 0 + headroom 1000 = $total mbufs" "$TMP/base.log"
check "GET /pools/sbx_pool_s0 has the plan too" \
	bash -c "curl -fsS $API/pools/sbx_pool_s0 | jq -e '.plan.total == $total and .audit.populated > 0' >/dev/null"

echo "# populate: $(jq -c '.[0] | {populate_ms, bytes, hugepage_size_kb, fresh_hugepage_bytes, memset}' "$TMP/pools.json")"
check "populate time, bytes and hugepage size of the pool" \
	jqt '.[0] | .populate_ms > 0 and .bytes >= .size * 2304 and .hugepage_size_kb >= 2048' "$TMP/pools.json"
check "memset bound measured on the same bytes (within 1 %), ratio = populate / memset" \
	jqt '.[0] | .memset.memset_ms > 0 and (.memset.bytes - .bytes | fabs) < .bytes / 100 and
		((.memset.ratio - .populate_ms / .memset.memset_ms) | fabs) < 0.01 + .memset.ratio / 50' "$TMP/pools.json"
check "the log shows the memset and the ratio" \
	grep -qE "pool sbx_pool_s0: .* created in [0-9.]+ ms; first-touch memset bound [0-9.]+ ms, creation / memset [0-9.]+" "$TMP/base.log"

# NUMA placement with p1 pretended on socket 1 (this machine has one node)
W1="port p1 (socket 1) polled by worker 0 on lcore 1 (socket 0)"
W2="pool sbx_pool_s0 (socket 0) serves port p1 (socket 1)"
check "log: warning naming port p1 and worker 0 on lcore 1" grep -qF "warning: $W1" "$TMP/base.log"
check "log: warning naming pool sbx_pool_s0 and port p1" grep -qF "warning: $W2" "$TMP/base.log"
check "/system warnings name both ends" \
	jqt --arg a "$W1" --arg b "$W2" '[.warnings[].message] | (map(. == $a) | any) and (map(startswith($b)) | any)' "$TMP/system.json"
check "/status warnings has them too (kind numa)" \
	jqt --arg a "$W1" '[.warnings[] | select(.kind == "numa") | .message] | index($a) != null' "$TMP/status.json"
check "no warning about p0 or m (they are where their pool and workers are)" \
	jqt '[.warnings[].message | select(test("port (p0|m)[ :]"))] | length == 0' "$TMP/system.json"
curl -fsS "$API/ports/p1" >"$TMP/p1.json"
check "/ports/p1: socket 1 from the test hook, device socket 0, pool on socket 0, its warnings" \
	jqt '.socket == 1 and .device_socket == 0 and (.socket_source | test("test hook")) and .pool.socket == 0 and
		(.warnings | length) >= 2 and (.polled_by | length) >= 1 and .pci == null and .name == "p1"' "$TMP/p1.json"
check "/ports/p0: socket 0 from the device, no warning" \
	bash -c "curl -fsS $API/ports/p0 | jq -e '.socket == 0 and (.socket_source | test(\"device\")) and .warnings == []' >/dev/null"
check "/ports/nope: 404" [ "$(curl -sS -o /dev/null -w '%{http_code}' "$API/ports/nope")" = 404 ]

# hugepages, lcores, sockets
nr=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)
curl -fsS "$API/system" >"$TMP/system.json" # right after reading nr_hugepages (a bench may change it)
nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)
files=$(ls /dev/hugepages/${PREFIX}map_* 2>/dev/null | wc -l)
check "/system sockets: one per NUMA node ($nodes), with their CPUs" \
	jqt --argjson n "$nodes" '(.sockets | length) == $n and (.sockets[0].cpus | length) > 0' "$TMP/system.json"
check "/system hugepages: 2 MiB pages, total = nr_hugepages ($nr), per socket, pages spanbox holds" \
	jqt --argjson nr "$nr" '.hugepages.sizes[] | select(.page_size_kb == 2048) | .total == $nr and .free <= .total and
		(.sockets | length) >= 1 and ([.sockets[].spanbox_pages] | add) >= 32' "$TMP/system.json"
check "/system hugepages: mount /dev/hugepages and the $files files of prefix $PREFIX" \
	jqt --argjson f "$files" '(.hugepages.mounts | map(.path) | index("/dev/hugepages")) != null and
		.hugepages.spanbox.file_prefix == "sbxt85" and .hugepages.spanbox.files == $f and $f > 0' "$TMP/system.json"
check "/system lcores: primary 0, mgmt 100, workers 1 and 2 on CPUs 0-1, socket 0" \
	jqt '[.lcores[] | "\(.role):\(.id):\(.cpus):\(.socket)"] == ["primary:0:0-1:0", "mgmt:100:0-1:0", "worker:1:0-1:0", "worker:2:0-1:0"]' "$TMP/system.json"
# the memzone's size (issue #25): what the primary logged and mgmt reports equal what
# spanbox-shm-sizes computes from the headers alone, for this config (2 workers, 3 ports) and at
# the limits; sized by the config, it is smaller than at the limits
MZ=$("$BUILD/tools/spanbox-shm-sizes" | awk '/^memzone 2 workers 3 ports /{print $NF}')
MZMAX=$("$BUILD/tools/spanbox-shm-sizes" | awk '/^memzone \(at the limits\) /{print $NF}')
SLOT=$("$BUILD/tools/spanbox-shm-sizes" | awk '/^worker slot /{print $NF}')
check "/system memzone: bytes $MZ, bytes_at_maximum $MZMAX (spanbox-shm-sizes), worker slot $SLOT B" \
	jqt --argjson mz "${MZ:-0}" --argjson max "${MZMAX:-0}" --argjson slot "${SLOT:-0}" \
	'$mz > 0 and $mz < $max and .memzone.bytes == $mz and .memzone.bytes_at_maximum == $max and
	 .memzone.worker_slot_bytes == $slot' "$TMP/system.json"
check "primary log: the memzone's size, at the maximum and the worker slot's" \
	grep -q "^spanbox-primary: memzone spanbox_shm: $MZ B (.* MiB; at the maximum $MZMAX B), worker slot $SLOT B\$" "$TMP/base.log"

# PCIe: one of this machine's devices, a bad BDF, a missing one
bdf=$(ls /sys/bus/pci/devices | head -1)
vendor=$(cat "/sys/bus/pci/devices/$bdf/vendor")
code=$(curl -sS -o "$TMP/pci.json" -w '%{http_code}' "$API/system/pci/$bdf")
pci_ok() {
	[ "$code" = 200 ] && jqt --arg b "$bdf" --arg v "$vendor" '.bdf == $b and .device.bdf == $b and
		.device.vendor_id == $v and (.bridges | type) == "array" and (.warnings | type) == "array"' "$TMP/pci.json"
}
check "/system/pci/$bdf: 200, the device (vendor $vendor), its bridges and warnings" pci_ok
check "/system/pci/$bdf agrees with spanbox-pcie --json" \
	bash -c "[ \"\$(jq -c .device '$TMP/pci.json')\" = \"\$('$BUILD/tools/spanbox-pcie' --json '$bdf' | jq -c '.devices[0].chain[0]')\" ]"
check "/system/pci/zz: 400" [ "$(curl -sS -o /dev/null -w '%{http_code}' "$API/system/pci/zz")" = 400 ]
check "/system/pci/0000:00:00.8 (function 8): 400" [ "$(curl -sS -o /dev/null -w '%{http_code}' "$API/system/pci/0000:00:00.8")" = 400 ]
missing=0000:7f:1f.7
[ ! -e "/sys/bus/pci/devices/$missing" ] || missing=0000:7e:1e.6
check "/system/pci/$missing (no such device): 404" \
	[ "$(curl -sS -o /dev/null -w '%{http_code}' "$API/system/pci/$missing")" = 404 ]

# the copy probe: a bad body is refused without using up its run; one run; the next at once is 429
# (POST needs the bearer token: mgmt generated $TMP/db.sqlite.token at start)
AUTH="Authorization: Bearer $("$MGMT" -c "$TMP/base.json" --print-token)"
JSON="Content-Type: application/json"
check "memprobe with a bad body: 400" \
	[ "$(curl -sS -o /dev/null -w '%{http_code}' -H "$AUTH" -H "$JSON" -X POST -d '{"size_mb": 0}' "$API/system/memprobe")" = 400 ]
code=$(curl -sS -m 30 -o "$TMP/probe.json" -w '%{http_code}' -H "$AUTH" -H "$JSON" -X POST -d '{"size_mb": 64, "runs": 3}' "$API/system/memprobe")
echo "# memprobe: $code $(jq -c '[.results[]? | {test, threads, gbps: (.gbps * 100 | round / 100)}]' "$TMP/probe.json" 2>/dev/null)"
check "memprobe runs once: 200 and spanbox-memprobe's JSON (64 MiB, 3 runs)" \
	bash -c "[ $code = 200 ] && jq -e '.size_mib == 64 and .runs == 3 and (.results | length) >= 4 and ([.results[].gbps] | min) > 0' '$TMP/probe.json' >/dev/null"
curl -sS -D "$TMP/h429" -o "$TMP/b429.json" -H "$AUTH" -X POST "$API/system/memprobe"
check "memprobe called again at once: 429 with Retry-After (1..30 s)" \
	bash -c "head -1 '$TMP/h429' | grep -q ' 429' && awk 'tolower(\$1) == \"retry-after:\" { exit !(\$2 + 0 >= 1 && \$2 + 0 <= 30) }' '$TMP/h429' && grep -qi '^retry-after:' '$TMP/h429'"
stop_all

### 2. pool.mbufs below the plan: refused with the plan printed (exit 2), or started with pool.force
config small ".pool.mbufs = $((total - 1))"
rc=$(refused small)
check "pool.mbufs $((total - 1)) (plan $total - 1): exit 2" [ "$rc" = 2 ]
check "... with the plan printed and the reason" \
	bash -c "grep -q 'pool plan sbx_pool_s0 (socket 0, 3 ports, 2 workers): rx_desc $exp_rx .* = $total mbufs' '$TMP/small.log' &&
		grep -q 'pool.mbufs $((total - 1)) is below the plan of $total mbufs: refused' '$TMP/small.log'"
check "... and no pool was created (no 'created in')" bash -c "! grep -q 'created in' '$TMP/small.log'"
config forced ".pool.mbufs = $((total - 1)) | .pool.force = true"
start forced
check "pool.force: true with the same size starts" [ $? -eq 0 ]
start_mgmt forced
check "... with a pool warning in the log" grep -qF "warning: pool sbx_pool_s0: pool.mbufs $((total - 1)) is below the plan of $total mbufs (pool.force)" "$TMP/forced.log"
check "... and in the API: size as given, size_source forced, /status warning of kind pool" \
	bash -c "curl -fsS $API/pools | jq -e '.[0].size == $((total - 1)) and (.[0].size_source | test(\"force\"))' >/dev/null &&
		curl -fsS $API/status | jq -e '[.warnings[] | select(.kind == \"pool\")] | length == 1' >/dev/null"
stop_all

### 3. hugepages: a pool that cannot fit is refused before any pool is created
config huge '.pool.mbufs = 16777216'
rc=$(refused huge)
check "pool.mbufs 16777216 (~38 GiB): exit 2" [ "$rc" = 2 ]
check "... naming what the pools need, what is free, and the nr_hugepages file" \
	bash -c "grep -qE 'hugepages: the pools need [0-9]+ MiB on socket 0, EAL can get [0-9]+ MiB there: .* free in its heap .* pages free' '$TMP/huge.log' &&
		grep -q 'raise /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages by at least' '$TMP/huge.log'"
check "... and no pool was created" bash -c "! grep -q 'created in' '$TMP/huge.log'"
check "no hugepage file of prefix $PREFIX left" bash -c "! ls /dev/hugepages/${PREFIX}map_* >/dev/null 2>&1"

### 4. a malformed test hook is refused
config base '.'
rc=$(refused base SBX_TEST_PORT_SOCKET=nope=1)
check "SBX_TEST_PORT_SOCKET naming no port: exit 2" bash -c "[ $rc = 2 ] && grep -q 'SBX_TEST_PORT_SOCKET: no port \"nope\"' '$TMP/base.log'"

### 5. the PCIe path of a PCI port is logged at start (a device of this machine that no DPDK
### driver takes, never a network device: EAL then does not probe it and the start fails, exit 1)
pci=
for d in /sys/bus/pci/devices/*; do
	case $(cat "$d/class") in 0x02*) continue ;; esac
	pci=$(basename "$d")
	break
done
config pci ".ports = [{\"name\": \"pp\", \"devargs\": \"$pci\"}] | del(.forwarding, .mirrors)"
rc=$(refused pci)
"$BUILD/tools/spanbox-pcie" "$pci" 2>/dev/null | sed -n '/^  warning: /!{/^$/!p}' >"$TMP/pcie_tool.txt"
sed -n 's/^spanbox-primary: pcie: port pp: //p' "$TMP/pci.log" >"$TMP/pcie_log.txt"
echo "# PCI port on $pci (class $(cat "/sys/bus/pci/devices/$pci/class")): exit $rc; $(head -1 "$TMP/pcie_log.txt")"
check "PCI port $pci: the log shows its decoded path, as spanbox-pcie prints it" \
	bash -c "[ -s '$TMP/pcie_tool.txt' ] && cmp -s '$TMP/pcie_tool.txt' '$TMP/pcie_log.txt'"
check "... and each warning of the path, naming the port" \
	bash -c "[ \"\$('$BUILD/tools/spanbox-pcie' '$pci' | grep -c '^  warning: ')\" = \"\$(grep -c '^spanbox-primary: warning: port pp: $pci' '$TMP/pci.log')\" ]"
check "... then the start fails (no DPDK driver for it): exit 1, not probed" \
	bash -c "[ $rc = 1 ] && grep -q 'device $pci was not probed by EAL' '$TMP/pci.log'"
