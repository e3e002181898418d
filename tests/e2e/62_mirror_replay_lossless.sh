#!/usr/bin/env bash
# A replay loses no mirror copy (issue #10, section 5): with every port a pcap file nothing live
# can be delayed, so copies to a pcap destination wait for room in its ring, as forwarded frames
# do. 1, 2 and 4 ERSPAN sessions of p0 to one pcap destination, 5 replays each: the destination
# holds sessions x frames every time, and no copy is counted as dropped. (They used to lose about
# a quarter of the copies as drop_txfull, a different number every run.)
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/replay.sh"
PRIMARY="$BUILD/primary/spanbox-primary"
IN="$CAPTURES/bulk_zeek_ftp-8317-small.pcap"
RUNS=${RUNS:-5}
PREFIX=sbxloss$$
trap 'rm -rf "$TMP"' EXIT
npkts() { capinfos -Mc "$1" | awk '/Number of packets/ {print $NF}'; }
# mkcfg FILE NB_SESSIONS: p0 reads IN, p1 writes OUT_p1, every session goes to the port "m"
mkcfg() {
	local mirrors= i
	for ((i = 1; i <= $2; i++)); do
		mirrors+="${mirrors:+,}{\"id\": $i, \"sources\": [{\"port\": \"p0\"}], \"destination\": {\"port\": \"m\"},
		  \"encap\": {\"type\": \"erspan2\", \"src_ip\": \"192.0.2.1\", \"dst_ip\": \"192.0.2.2\", \"dst_mac\": \"02:00:00:00:00:02\"}}"
	done
	cat >"$1" <<JSON
{
  "eal": {"file_prefix": "$PREFIX", "socket_mem_mb": 256, "primary_lcore": 52, "mgmt_lcore": 53},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$IN", "mtu": 9600},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$TMP/p1.pcap", "mtu": 9600},
    {"name": "m", "devargs": "net_pcap2,tx_pcap=$TMP/m.pcap", "mtu": 9600}
  ],
  "workers": {"count": 1, "lcores": [54]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mirrors": [ $mirrors ]
}
JSON
}

frames=$(npkts "$IN")
echo "# input: $frames frames"
for n in 1 2 4; do
	mkcfg "$TMP/s$n.json" "$n"
	bad=() lost=()
	for ((r = 1; r <= RUNS; r++)); do
		rm -f "$TMP/p1.pcap" "$TMP/m.pcap"
		timeout 120 "$PRIMARY" -c "$TMP/s$n.json" --replay >"$TMP/r.log" 2>&1
		rc=$?
		got=$(npkts "$TMP/m.pcap" 2>/dev/null || echo 0)
		fwd=$(npkts "$TMP/p1.pcap" 2>/dev/null || echo 0)
		drops=0
		for ((i = 1; i <= n; i++)); do drops=$((drops + $(mctr "$TMP/r.log" "session-$i" drop_txfull | sed "s/none/-999999/"))); done
		echo "# $n sessions, run $r: rc $rc, forwarded $fwd, mirror file $got frames, drop_txfull $drops"
		[ "$rc" -eq 0 ] && [ "$fwd" -eq "$frames" ] && [ "$got" -eq $((n * frames)) ] || bad+=("$r")
		[ "$drops" -eq 0 ] || lost+=("$r:$drops")
	done
	check "$n session(s) to one pcap destination: $RUNS replays each write all $((n * frames)) copies and forward all $frames frames (failed runs: ${bad[*]:-none})" \
		[ ${#bad[@]} -eq 0 ]
	check "$n session(s): no copy counted as dropped in any run (${lost[*]:-none})" [ ${#lost[@]} -eq 0 ]
done
exit 0
