#!/usr/bin/env bash
# Ingress rules changed at run time (issue #12), seen through /status ports[].ingress.decap[i]:
#  - a change that keeps a port's decap rules (a tag added) keeps their counts;
#  - a change of the rules (an erspan rule put in front of the vxlan one) starts every rule of the
#    new list at 0: the old vxlan rule's count is not shown as the erspan rule's (the counters are
#    per rule index).
# Own instance: file prefix sbxilc, lcores 92-94, API port 18492, database under $TMP; p0 replays
# vxlan_suricata_100pkts.pcap at 1000 frames/s (a pcap file port), p1 is net_null (no RX).
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"

PORT=18492 API=http://127.0.0.1:18492/api/v1
CFG="$TMP/ilc.json"
TOKEN=sbxilc-token-0123456789abcdef
AUTH="Authorization: Bearer $TOKEN"
IN="$CAPTURES/vxlan_suricata_100pkts.pcap"
cleanup() { inst_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$TMP"; }
trap cleanup EXIT
[ -r "$IN" ] || { ok "vxlan_suricata_100pkts.pcap not readable in $CAPTURES # SKIP"; exit 0; }

get() { curl -fsS --max-time 5 "$API$1"; }
put_ingress() { curl -sS --max-time 10 -o "$TMP/put.json" -w '%{http_code}' -H "$AUTH" -X PUT \
	-H 'Content-Type: application/json' --data-binary "$1" "$API/ports/p0/ingress"; }
# rule K FIELD: /status ports[p0].ingress.decap[K].FIELD
rule() { get /status | jq -r ".ports[] | select(.name == \"p0\") | .ingress.decap[$1].$2"; }
p0() { get /status | jq -r ".ports[] | select(.name == \"p0\") | .workers.$1"; }

cat >"$CFG" <<JSON
{
  "eal": {"file_prefix": "sbxilc", "socket_mem_mb": 256, "primary_lcore": 92, "mgmt_lcore": 94},
  "ports": [ {"name": "p0", "devargs": "net_pcap0,rx_pcap=$IN,pps=1000", "mtu": 1600,
              "ingress": {"decap": [{"type": "vxlan"}]}},
             {"name": "p1", "devargs": "net_null1,no-rx=1", "mtu": 1600} ],
  "workers": {"count": 1, "lcores": [93]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mgmt": {"port": $PORT, "database": "$TMP/ilc.db", "token": "$TOKEN"}
}
JSON
inst_start_primary ilc "$CFG"
check "primary ready" [ -f "$TMP/ilc.ready" ] || { tail -20 "$TMP/ilc-primary.log" | sed 's/^/# /'; exit 0; }
inst_start_mgmt ilc "$CFG" "$API"
check "mgmt up" [ $? -eq 0 ] || exit 0

wait_for 100 cond '[ "$(p0 rx_packets)" = 100 ]'
check "p0 received the capture's 100 frames ($(p0 rx_packets))" [ "$(p0 rx_packets)" = 100 ]
n=$(p0 decap_packets)
check "the vxlan rule decapsulated frames ($n)" [ "$n" -gt 0 ]
check "decap[0] (vxlan) counts them ($(rule 0 packets))" [ "$(rule 0 packets)" = "$n" ]

code=$(put_ingress '{"decap": [{"type": "vxlan"}], "tag": {"vlan": 5}}')
check "PUT the same rule with a tag: 200 ($code)" [ "$code" = 200 ]
sleep 0.5
check "the rule unchanged: decap[0] keeps its count ($(rule 0 packets), expected $n)" [ "$(rule 0 packets)" = "$n" ]

code=$(put_ingress '{"decap": [{"type": "erspan"}, {"type": "vxlan"}]}')
check "PUT an erspan rule in front of the vxlan one: 200 ($code)" [ "$code" = 200 ]
wait_for 30 cond '[ "$(rule 0 type)/$(rule 0 packets)/$(rule 1 packets)" = erspan/0/0 ]'
check "new rules start at 0: decap[0] erspan $(rule 0 packets), decap[1] vxlan $(rule 1 packets) (the old rule's $n are not the erspan rule's)" \
	[ "$(rule 0 type)/$(rule 0 packets)/$(rule 1 packets)" = erspan/0/0 ]
check "the port counter decap_packets is kept ($(p0 decap_packets))" [ "$(p0 decap_packets)" = "$n" ]
check "no worker restart, no tables error" \
	[ "$(get /status | jq '[.workers[] | .restarts + .crashes + .tables_errors] | add')" = 0 ]
