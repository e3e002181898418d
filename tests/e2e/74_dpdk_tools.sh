#!/usr/bin/env bash
# DPDK's own tools against a running spanbox (issue 14, section 1; docs/CAPTURE.md "DPDK's own
# tools"), on a copy of the demo's layout (ping between two namespaces through p0 and p1, a SPAN
# session of p0 to the mirror port) under names of its own:
#  - dpdk-dumpcap -i <port> captures the workers' traffic: the ping's requests inbound and replies
#    outbound on p0 (and the other way round on p1), the mirror copies outbound on the mirror port
#    (the workers' mirror TX queue); -f (filter) and -s (snaplen, original length kept) honoured;
#    two dumpcaps on two ports at once (DPDK 22.11's dumpcap keeps only the last of several -i);
#  - a worker killed during a capture is replaced and its successor captures too (captures in
#    progress are picked up by a worker started later);
#  - a dumpcap killed with SIGKILL (it never disables) has its captures removed by the primary;
#  - 50 dumpcap start / SIGINT cycles under ping traffic at 100 frames/s: every dumpcap exits 0
#    with a readable file, the appliance never crashes, the capture counters stop moving after the
#    last stop (no stale callback), and forwarding never stalls > 100 ms (largest gap between
#    ping replies, timestamps of ping -D);
#  - a 9000 B frame, an mbuf chain (read from a pcap file port into 2 KiB mbufs), captured on the
#    tap it is sent to: a truncated record with its original length at the default snaplen, the
#    whole frame with -s 9100; the appliance forwards on;
#  - dpdk-proc-info --stats and dpdk-telemetry.py (/ethdev/list, /ethdev/stats,N and spanbox's
#    /spanbox/status, /spanbox/ports, /spanbox/workers, /spanbox/mirrors, /spanbox/pools,
#    /spanbox/pdump) answer while traffic runs.
# dpdk-dumpcap takes no EAL options (no --no-pci): it runs in a mount namespace of its own where
# /sys/bus/pci/devices is an empty tmpfs, so its EAL never sees the machine's NIC.
#
# Private resources: file prefixes dc-cap and dc-jumbo, lcores 59 and 63-69, mgmt ports
# 18350-18351 (mgmt is not started), namespaces dc-A/dc-B, taps dc-p0/dc-p1/dc-m/dc-j, files
# under $TMP.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
source "$ROOT/tests/lib/dumpcap.sh" # dumpcap*, fields, tel, telq, dc_*_checks

PFX=dc-cap JPFX=dc-jumbo NSA=dc-A NSB=dc-B
CFG="$TMP/cap.json" JCFG="$TMP/jumbo.json"
CYCLES=${DC_CYCLES:-50}

cleanup() {
	stop_pidfile fastping
	for f in "$TMP"/dumpcap-*.pid; do [ -f "$f" ] && stop_pidfile "$(basename "$f" .pid)"; done
	demo_stop
	inst_cleanup
	[ -n "${DC_KEEP:-}" ] && echo "# kept $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT

jq --arg db "$TMP/cap.db" --arg pfx "$PFX" \
	'.eal.file_prefix = $pfx | .eal.socket_mem_mb = 256 | .eal.primary_lcore = 59 | .eal.mgmt_lcore = 63
	| .workers.lcores = [64, 65] | .mgmt.port = 18350 | .mgmt.database = $db
	| .ports[0].devargs = "net_tap0,iface=dc-p0" | .ports[0].netns = "dc-A"
	| .ports[1].devargs = "net_tap1,iface=dc-p1" | .ports[1].netns = "dc-B"
	| .ports[2].devargs = "net_tap2,iface=dc-m"
	| .mirrors = [{"id": 74, "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "mirror"}}]' \
	"$ROOT/config/default.json" >"$CFG"

alive() { kill -0 "$(cat "$TMP/primary.pid")" 2>/dev/null; }
worker_pids() { tel /spanbox/workers | jq -r '[."/spanbox/workers"[] | .pid] | join(" ")'; }
accepted() { tel /spanbox/ports | jq -e '."/spanbox/ports".p0.pdump_accepted'; }

# ---------------------------------------------------------------------------------------------
# 1. the appliance, ping between dc-A and dc-B (10 a second)
demo_start_primary
check "1: primary of prefix $PFX ready, taps in $NSA and $NSB" test -f "$TMP/ready" || exit 1
check "1: the ping crosses the appliance" ip netns exec "$NSA" ping -c 3 -i 0.2 -W 2 -q 198.18.0.2

# ---------------------------------------------------------------------------------------------
# 2. dumpcap on p0 (net_tap0): the demo ping, both directions
dc_ping_checks 2 net_tap0 3

dumpcap_fg -i net_tap1 -w "$TMP/p1.pcapng" -a duration:2 -q >"$TMP/p1.out" 2>&1
fields "$TMP/p1.pcapng" icmp.type frame.packet_flags_direction >"$TMP/p1.txt"
check "2: on p1 (net_tap1) the other way round: requests outbound, replies inbound" \
	cond "grep -q '^8	0x00000002' '$TMP/p1.txt' && grep -q '^0	0x00000001' '$TMP/p1.txt' && ! grep -qE '^8	0x00000001|^0	0x00000002' '$TMP/p1.txt'"

dumpcap_fg -i net_tap2 -w "$TMP/mirror.pcapng" -a duration:2 -q >"$TMP/mirror.out" 2>&1
fields "$TMP/mirror.pcapng" icmp.type frame.packet_flags_direction >"$TMP/mirror.txt"
check "2: on the mirror port the SPAN copies of p0's requests, outbound (the workers' mirror TX queue)" \
	cond "[ \$(grep -c '^8	0x00000002' '$TMP/mirror.txt') -ge 10 ]"

# ---------------------------------------------------------------------------------------------
# 3. filter and snaplen
dc_filter_snaplen_checks 3 net_tap0 3

# several interfaces: DPDK 22.11's dumpcap keeps the last -i; two dumpcaps run side by side
dumpcap_fg -i net_tap0 -i net_tap1 -w "$TMP/two.pcapng" -a duration:2 -q >"$TMP/two.out" 2>&1
echo "# -i net_tap0 -i net_tap1: interfaces of the records: $(fields "$TMP/two.pcapng" frame.interface_id | sort | uniq -c | tr '\n' ';') ($(grep Capturing "$TMP/two.out"))"
dumpcap_bg both0 -i net_tap0 -w "$TMP/both0.pcapng" -q
dumpcap_bg both1 -i net_tap1 -w "$TMP/both1.pcapng" -q
check "3: two dumpcaps at once (p0 and p1): four captures in /spanbox/pdump, rx and tx of each" \
	telq /spanbox/pdump '[."/spanbox/pdump"[] | [.port, .direction]] | sort == [["p0", "rx"], ["p0", "tx"], ["p1", "rx"], ["p1", "tx"]]'
sleep 2
dumpcap_stop both0; r0=$?
dumpcap_stop both1; r1=$?
check "3: ... both exit 0 on SIGINT, each file holds its own port's ping in both directions" \
	cond "[ $r0 -eq 0 ] && [ $r1 -eq 0 ] &&
	      [ \$(fields '$TMP/both0.pcapng' frame.interface_id icmp.type | sort -u | grep -c '^0	[08]$') -eq 2 ] &&
	      [ \$(fields '$TMP/both1.pcapng' frame.interface_id icmp.type | sort -u | grep -c '^1	[08]$') -eq 2 ]"

# ---------------------------------------------------------------------------------------------
# 4. a worker started later takes the captures in progress; a killed client's captures go
dumpcap_bg late -i net_tap0 -w "$TMP/late.pcapng" -q
old=$(worker_pids)
for pid in $old; do kill -KILL "$pid"; done
restarted() { # both workers run, neither with an old pid
	local now p; now=$(worker_pids)
	tel /spanbox/workers | jq -e '[."/spanbox/workers"[] | .state] == ["running", "running"]' >/dev/null || return 1
	for p in $now; do [[ " $old " == *" $p "* ]] && return 1; done
	[ -n "$now" ]
}
wait_for 150 restarted
t_restart=$(date +%s.%N)
echo "# workers $old killed; now $(worker_pids)"
sleep 2
dumpcap_stop late
after=$(fields "$TMP/late.pcapng" frame.time_epoch icmp.type | awk -v t="$t_restart" '$1 > t + 0.2 && $2 == 8' | wc -l)
check "4: after both workers were killed and replaced, the capture goes on: $after requests after the restart" \
	test "$after" -ge 10

dumpcap_bg killed -i net_tap0 -w "$TMP/killed.pcapng" -q
kill -KILL "$(cat "$TMP/dumpcap-killed.pid")"; wait "$(cat "$TMP/dumpcap-killed.pid")" 2>/dev/null; rm -f "$TMP/dumpcap-killed.pid"
check "4: a dumpcap killed with SIGKILL: the primary removes its captures within 2 s" \
	wait_for 20 telq /spanbox/pdump '."/spanbox/pdump" == {}'
dumpcap_fg -i net_tap0 -w "$TMP/again.pcapng" -a duration:1 -q >"$TMP/again.out" 2>&1
check "4: ... and the port can be captured again" test $? -eq 0

# ---------------------------------------------------------------------------------------------
# 5. start / SIGINT cycles under traffic
ip netns exec "$NSA" timeout 600 ping -D -i 0.01 198.18.0.2 >"$TMP/fastping.log" 2>&1 &
echo $! >"$TMP/fastping.pid"
sleep 1
bad=0 t0=$SECONDS
for ((i = 1; i <= CYCLES && SECONDS - t0 < 400; i++)); do
	rm -f "$TMP/cyc.pcapng"
	if ! dumpcap_bg cyc -i net_tap0 -w "$TMP/cyc.pcapng" -q; then bad=$((bad + 1)); echo "# cycle $i: its capture never listed"; fi
	sleep "0.$((RANDOM % 3 + 1))"
	if ! dumpcap_stop cyc; then bad=$((bad + 1)); echo "# cycle $i: dumpcap did not exit 0"; tail -n 3 "$TMP/cyc.out" | sed 's/^/#   /'; fi
	capinfos "$TMP/cyc.pcapng" >/dev/null 2>&1 || { bad=$((bad + 1)); echo "# cycle $i: file not readable"; }
	alive || break
done
done_cycles=$((i - 1))
echo "# $done_cycles cycles in $((SECONDS - t0)) s, $bad bad"
check "5: $CYCLES dumpcap start / SIGINT cycles under traffic: all done, each exits 0 with a readable file" \
	cond "[ $done_cycles -eq $CYCLES ] && [ $bad -eq 0 ]"
check "5: the primary is alive and both workers run without a crash or restart since section 4" \
	cond "alive && tel /spanbox/workers | jq -e '[.\"/spanbox/workers\"[] | [.state, .restarts, .crashes]] == [[\"running\", 1, 1], [\"running\", 1, 1]]' >/dev/null"
check "5: no capture is left (/spanbox/pdump empty, status pdump_captures 0)" \
	cond "telq /spanbox/pdump '.\"/spanbox/pdump\" == {}' && telq /spanbox/status '.\"/spanbox/status\".pdump_captures == 0'"
a1=$(accepted); sleep 1; a2=$(accepted)
check "5: no stale callback: p0's capture counter stays at $a1 over 1 s of traffic after the last stop ($a2)" \
	cond "[ -n '$a1' ] && [ '$a1' = '$a2' ] && [ '$a1' -gt 0 ]"
stop_pidfile fastping
gap=$(grep -o '^\[[0-9.]*\] [0-9]* bytes from' "$TMP/fastping.log" | tr -d '[]' | awk 'NR > 1 { g = $1 - p; if (g > m) m = g } { p = $1 } END { printf "%d", m * 1000 }')
replies=$(grep -c 'bytes from' "$TMP/fastping.log")
echo "# ping every 10 ms during the cycles: $replies replies, largest gap between two replies $gap ms"
check "5: forwarding never stalled > 100 ms during the cycles (largest gap between ping replies: $gap ms)" \
	cond "[ '$replies' -gt 1000 ] && [ '$gap' -le 100 ]"

# ---------------------------------------------------------------------------------------------
# 6. proc-info and telemetry while traffic runs (the 10/s ping goes on)
timeout 20 dpdk-proc-info --file-prefix "$PFX" --no-pci -- --stats >"$TMP/procinfo.txt" 2>&1
rc=$?
rx=$(awk '/NIC statistics for port 0/ { f = 1 } f && /RX-packets:/ { print $2; exit }' "$TMP/procinfo.txt")
check "6: dpdk-proc-info --file-prefix $PFX -- --stats shows p0's counters (RX-packets $rx)" \
	cond "[ $rc -eq 0 ] && [ -n '$rx' ] && [ '$rx' -gt 0 ] && grep -q 'NIC statistics for port 2' '$TMP/procinfo.txt'"
check "6: dpdk-telemetry.py /ethdev/list lists the three ports" telq /ethdev/list '."/ethdev/list" == [0, 1, 2]'
s1=$(tel /ethdev/stats,0 | jq -e '."/ethdev/stats".ipackets'); sleep 1; s2=$(tel /ethdev/stats,0 | jq -e '."/ethdev/stats".ipackets')
check "6: /ethdev/stats,0 counts p0's traffic as it runs ($s1 then $s2)" cond "[ -n '$s1' ] && [ '$s2' -gt '$s1' ]"
check "6: /spanbox/status: running, 2 of 2 workers, 3 ports, 1 pool, 1 mirror session" \
	telq /spanbox/status '."/spanbox/status" | .running == 1 and .workers == 2 and .workers_running == 2 and .ports == 3 and .pools == 1 and .mirrors == 1 and .file_prefix == "dc-cap"'
check "6: /spanbox/ports: p0 is DPDK port 0 with its ethdev and worker counters moving" \
	telq /spanbox/ports '."/spanbox/ports".p0 | .port_id == 0 and .port_ipackets > 0 and .workers_rx_packets > 0 and .workers_tx_packets > 0 and .kind == "ethdev"'
# (section 4's kill -9 handed both workers to hot standbys: their lcores are the standbys', of this
# instance's 64-69, two different ones)
check "6: /spanbox/workers: two running workers on two lcores of this instance (64-69)" \
	telq /spanbox/workers '[."/spanbox/workers"[] | select(.state == "running") | .lcore] | length == 2 and (unique | length) == 2 and all(. >= 64 and . <= 69)'
check "6: /spanbox/mirrors: session 74 to the mirror port, its copies counted" \
	telq /spanbox/mirrors '."/spanbox/mirrors"."74" | .destination == "mirror" and .mirrored_packets > 0'
check "6: /spanbox/pools: the socket-0 pool with its size and use" \
	telq /spanbox/pools '."/spanbox/pools".sbx_pool_s0 | .size > 0 and .in_use >= 0 and .available > 0'
check "6: the spanbox commands are listed by the telemetry socket (/)" \
	telq / '."/" | any(.[]; . == "/spanbox/status") and any(.[]; . == "/spanbox/pdump")'

# ---------------------------------------------------------------------------------------------
# 7. a 9000 B frame, an mbuf chain: a pcap file port (2 KiB mbufs) forwards it to a tap
python3 - "$TMP/jumbo.pcap" <<'EOF'
import struct, sys
# 300 Ethernet frames of 9000 B (IPv4/UDP to 198.51.100.2), numbered in the payload
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(300):
        eth = bytes.fromhex("020000000002" "020000000001" "0800")
        ip_len = 9000 - 14
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, ip_len, i, 0, 64, 17, 0, bytes([198, 51, 100, 1]), bytes([198, 51, 100, 2]))
        udp = struct.pack("!HHHH", 7400, 7400, ip_len - 20, 0)
        payload = struct.pack("!I", i) + bytes((i + k) & 0xff for k in range(ip_len - 28 - 4))
        frame = eth + ip + udp + payload
        f.write(struct.pack("<IIII", i, 0, len(frame), len(frame)) + frame)
EOF
jq --arg db "$TMP/jumbo.db" --arg pfx "$JPFX" --arg in "$TMP/jumbo.pcap" \
	'.eal.file_prefix = $pfx | .eal.socket_mem_mb = 256 | .eal.primary_lcore = 66 | .eal.mgmt_lcore = 69
	| .workers.count = 1 | .workers.lcores = [67] | .mgmt.port = 18351 | .mgmt.database = $db
	| .ports = [{"name": "in", "devargs": ("net_pcap0,rx_pcap=" + $in + ",pps=20"), "mtu": 9000},
	            {"name": "j", "devargs": "net_tap3,iface=dc-j"}]
	| .forwarding.xconnects = [["in", "j"]] | .mirrors = []' "$ROOT/config/default.json" >"$JCFG"
inst_start_primary jumbo "$JCFG"
check "7: the jumbo appliance ($JPFX: pcap file port of mtu 9000 -> tap dc-j) is ready" test -f "$TMP/jumbo.ready" ||
	{ tail -n 20 "$TMP/jumbo-primary.log" | sed 's/^/#   /'; exit 1; }
DC_PREFIX=$JPFX dumpcap_fg -i net_tap3 -w "$TMP/j-default.pcapng" -a duration:3 -q >"$TMP/j-default.out" 2>&1
rc1=$?
DC_PREFIX=$JPFX dumpcap_fg -i net_tap3 -s 9100 -w "$TMP/j-whole.pcapng" -a duration:3 -q >"$TMP/j-whole.out" 2>&1
rc2=$?
fields "$TMP/j-default.pcapng" frame.len frame.cap_len udp.port >"$TMP/j-default.txt"
fields "$TMP/j-whole.pcapng" frame.len frame.cap_len udp.port >"$TMP/j-whole.txt"
echo "# default snaplen: $(grep 7400 "$TMP/j-default.txt" | cut -f1,2 | sort | uniq -c | tr '\n' ';') -s 9100: $(grep 7400 "$TMP/j-whole.txt" | cut -f1,2 | sort | uniq -c | tr '\n' ';')"
tel "$JPFX" /spanbox/ports | jq -c '."/spanbox/ports".j | {pdump_accepted, pdump_nombuf, pdump_ringfull, workers_tx_packets}' | sed 's/^/# j: /'
check "7: dumpcap on the tap at its default snaplen: truncated records of 2176 B with their original length 9000" \
	cond "[ $rc1 -eq 0 ] && [ \$(grep -c '^9000	2176	' '$TMP/j-default.txt') -ge 20 ] && ! grep '7400' '$TMP/j-default.txt' | grep -vq '^9000	2176	'"
check "7: with -s 9100: whole records of 9000 B" \
	cond "[ $rc2 -eq 0 ] && [ \$(grep -c '^9000	9000	' '$TMP/j-whole.txt') -ge 20 ] && ! grep '7400' '$TMP/j-whole.txt' | grep -vq '^9000	9000	'"
# (the tap refuses frames over its 1500 B MTU after the TX callback saw them: drops on j, expected)
check "7: the jumbo appliance runs on: its worker running without a crash, still reading its input" \
	cond "kill -0 $INST_PRIMARY && tel $JPFX /spanbox/workers | jq -e '.\"/spanbox/workers\".\"0\" | .state == \"running\" and .crashes == 0 and .rx_packets >= 60' >/dev/null"
check "7: the demo appliance ($PFX) still forwards" cond "alive && ip netns exec $NSA ping -c 3 -i 0.2 -W 2 -q 198.18.0.2 >/dev/null"
