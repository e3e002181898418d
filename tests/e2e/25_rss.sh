#!/usr/bin/env bash
# RSS of a port (issue #25): ports[].rss on net_null (which implements DPDK's RSS configuration
# calls): the key, the hash fields and the redirection table that the DEVICE reports once the
# port runs (rte_eth_dev_rss_hash_conf_get, rte_eth_dev_rss_reta_query, shown in /status) equal
# the config: the symmetric key 0x6d5a repeated over the device's 40 bytes, an explicit key as
# given, the RETA spread over the port's 4 RX queues. Refusals at start name the port: a driver
# without RSS (net_ring), a bridged pcap port, a key of the wrong length, bad fields. A port with
# several RX queues, dedup and no symmetric RSS gets a warning. (The symmetric key's property,
# equal hashes both ways, is tests/unit/test_rss.c with rte_softrss.)
#
# Own instance: file prefix t25rs, lcores 116-119, API port 18726, net_null ports (no RX).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"

PORT=18726
API=http://127.0.0.1:$PORT/api/v1
trap 'inst_cleanup; rm -rf "$TMP"' EXIT
MS=6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa
SYM=$(printf '6d5a%.0s' $(seq 20))

base() { # base JQ: 2 workers polling queues 0-1 and 2-3 of p0 (4 RX queues), p1 plain
	jq -n '{eal: {file_prefix: "t25rs", socket_mem_mb: 128, primary_lcore: 116, mgmt_lcore: 117},
		ports: [{name: "p0", devargs: "net_null0,no-rx=1", rss: {}}, {name: "p1", devargs: "net_null1,no-rx=1"},
			{name: "p2", devargs: "net_null2,no-rx=1", rss: {fields: ["ipv4", "udp"], key: "'"$MS"'"}}],
		workers: {count: 2, lcores: [118, 119], standby: 0, busy_poll: false,
			queues: [[{port: "p0", queue: 0}, {port: "p0", queue: 1}, {port: "p2", queue: 0}],
				 [{port: "p0", queue: 2}, {port: "p0", queue: 3}, {port: "p2", queue: 1}, {port: "p1", queue: 0}]]},
		mgmt: {port: '"$PORT"', database: "'"$TMP"'/rs.db"}}' | jq "$1"
}
refused() { # refused DESC JQ TEXT: the primary refuses to start, naming TEXT
	base "$2" >"$TMP/bad.json"
	out=$(timeout 60 "$BUILD/primary/spanbox-primary" -c "$TMP/bad.json" 2>&1); rc=$?
	check "$1: refused (exit $rc) naming $3 ($(grep -F "$3" <<<"$out" | head -n 1 | head -c 220))" \
		cond "[ $rc != 0 ] && grep -qF -- '$3' <<<\"\$out\""
}

# --- 1. read back on net_null --------------------------------------------------------------
base '.' >"$TMP/rs.json"
inst_start_both rs "$TMP/rs.json" "$API" || exit 1
st=$(curl -sS --max-time 5 "$API/status")
jq -c '.ports[] | {name, rx_queues, rss: (.rss | if . then {fields, key, symmetric, reta_size, reta: .reta[0:8]} else . end)}' <<<"$st" | sed 's/^/# /'
check "1: p0 (rss {}): the device reports the symmetric key, 40 bytes of 0x6d5a" \
	jq -e --arg k "$SYM" '.ports[0].rss.key == $k and .ports[0].rss.symmetric == true' <<<"$st"
check "1: ... the default fields ipv4, ipv6, tcp, udp" jq -e '.ports[0].rss.fields == ["ipv4", "ipv6", "tcp", "udp"]' <<<"$st"
check "1: ... and a RETA spread over its 4 RX queues (0,1,2,3,0,...)" \
	jq -e '.ports[0].rx_queues == 4 and .ports[0].rss.reta_size > 0 and
		([.ports[0].rss.reta | to_entries[] | select(.value != (.key % 4))] | length == 0)' <<<"$st"
check "1: p2: the explicit key as given, not symmetric, fields ipv4 + udp, RETA over its 2 queues" \
	jq -e --arg k "$MS" '.ports[2].rss | .key == $k and .symmetric == false and .fields == ["ipv4", "udp"] and
		([.reta | to_entries[] | select(.value != (.key % 2))] | length == 0)' <<<"$st"
check "1: p1 without rss: null" jq -e '.ports[1].rss == null' <<<"$st"
check "1: no rss warning (no port with dedup or decap)" jq -e '[.warnings[] | select(.kind == "rss")] | length == 0' <<<"$st"
inst_cleanup

# --- 2. the warning: 4 RX queues, dedup, no RSS ---------------------------------------------
base 'del(.ports[0].rss) | .ports[0].ingress = {dedup: {window_us: 1000}}' >"$TMP/rw.json"
inst_start_both rw "$TMP/rw.json" "$API" || exit 1
st=$(curl -sS --max-time 5 "$API/status")
check "2: p0 with 4 RX queues, dedup and no rss: a warning of kind rss naming it ($(jq -c '[.warnings[] | select(.kind == "rss") | .message]' <<<"$st" | head -c 200))" \
	jq -e '[.warnings[] | select(.kind == "rss" and (.message | test("port p0 has 4 RX queues and no RSS")))] | length == 1' <<<"$st"
inst_cleanup

# --- 3. refusals ------------------------------------------------------------------------------
refused "3: rss on net_ring (no RSS in the driver)" \
	'.ports[1] = {name: "p1", devargs: "net_ring0", rss: {}}' "ports[1].rss (p1): driver net_ring has no RSS"
refused "3: a 4-byte key on a 40-byte device" '.ports[0].rss.key = "6d5a6d5a"' "ports[0].rss.key (p0): 4 bytes, driver net_null takes 40"
refused "3: an unknown field" '.ports[0].rss.fields = ["ipv4", "sctp"]' 'ports[0].rss.fields[1]: "sctp": expected one of'
refused "3: ports without an IP version" '.ports[0].rss.fields = ["tcp"]' "ports[0].rss.fields: names no IP version"
refused "3: a key that is not hex" '.ports[0].rss.key = "6d5x"' 'ports[0].rss.key: "6d5x": expected "symmetric" or the key as hex bytes'
refused "3: an unknown key in rss" '.ports[0].rss.hash = 1' "ports[0].rss.hash: unknown key"
