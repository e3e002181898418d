# Helpers of the tests that run DPDK's own tools against an appliance (tests/e2e/74_dpdk_tools.sh on
# an instance of its own, tests/e2e/30_default_live.sh on the default appliance; docs/CAPTURE.md
# "DPDK's own tools"), sourced after common.sh. Need TMP, and PFX (the appliance's EAL file prefix).
#   dumpcap ARGS...          exec dpdk-dumpcap --file-prefix ${DC_PREFIX:-$PFX} ARGS (in a subshell)
#   dumpcap_fg ARGS...       dpdk-dumpcap in the foreground; its exit status
#   dumpcap_bg NAME ARGS...  dpdk-dumpcap in the background (pid in $TMP/dumpcap-NAME.pid, output in
#                            $TMP/NAME.out); 0 once the primary lists its captures, 10 s at most
#   dumpcap_stop NAME        SIGINT (Ctrl-C) to dumpcap NAME; 0 when it exits 0 within 10 s
#   fields FILE FIELDS...    tshark's fields of every record, tab separated
#   tel [PREFIX] CMD...      dpdk-telemetry.py's answers (one JSON line each), prefix $PFX by default
#   telq CMD FILTER          the telemetry answer to CMD makes the jq FILTER true
#   dc_ping_checks TAG IFACE SECONDS
#                            the demo's ping (198.18.0.1 -> .2, running at 10/s) in a dumpcap file of
#                            IFACE (p0's tap): echo requests inbound, replies outbound; TAP lines
#                            prefixed "TAG: "
#   dc_filter_snaplen_checks TAG IFACE SECONDS
#                            dumpcap -f 'icmp and ip[20] == 8' -s 60 on IFACE: only echo requests,
#                            cut at 60 B with their original length (98) kept, counted as filtered
# dpdk-dumpcap takes no EAL options (no --no-pci): it runs in a mount namespace of its own where
# /sys/bus/pci/devices is an empty tmpfs, so its EAL never sees the machine's NIC.

# unshare and sh exec, so the process is dpdk-dumpcap itself (SIGINT reaches it)
dumpcap() {
	exec unshare -m sh -c 'mount -t tmpfs none /sys/bus/pci/devices && exec dpdk-dumpcap "$@"' dumpcap \
		--file-prefix "${DC_PREFIX:-$PFX}" "$@"
}
dumpcap_fg() { (dumpcap "$@"); }
# (dumpcap's own "Capturing on" goes to a buffered stdout: seen only at its end, so the primary's
# list of captures, /spanbox/pdump, says when it captures)
dumpcap_bg() {
	local name=$1 pid; shift
	(dumpcap "$@") >"$TMP/$name.out" 2>&1 &
	pid=$!
	echo $pid >"$TMP/dumpcap-$name.pid"
	wait_for 50 telq /spanbox/pdump "any(.\"/spanbox/pdump\"[]; .client_pid == $pid)"
}
dumpcap_stop() {
	local pid rc i
	pid=$(cat "$TMP/dumpcap-$1.pid")
	# the pid is the subshell's, which exec'd unshare, sh, then dpdk-dumpcap: the same process
	kill -INT "$pid" 2>/dev/null
	for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; wait "$pid" 2>/dev/null; rm -f "$TMP/dumpcap-$1.pid"; return 1; fi
	wait "$pid"; rc=$?
	rm -f "$TMP/dumpcap-$1.pid"
	return $rc
}
fields() { local f=$1; shift; tshark -r "$f" -T fields $(printf -- '-e %s ' "$@") 2>/dev/null; }
tel() { local p=$PFX; [ "${1:0:1}" != / ] && { p=$1; shift; }; printf '%s\n' "$@" | timeout 10 dpdk-telemetry.py -f "$p" 2>/dev/null | grep '^{"/'; }
telq() { tel "$1" | jq -e "$2" >/dev/null; }

dc_ping_checks() {
	local tag=$1 ifc=$2 secs=$3 rc req rep min=$(($3 * 5)) f="$TMP/dc-${1//[^A-Za-z0-9]/_}"
	dumpcap_fg -i "$ifc" -w "$f-ping.pcapng" -a "duration:$secs" -q >"$f-ping.out" 2>&1
	rc=$?
	sed 's/^/#   /' "$f-ping.out" | tail -n 4
	check "$tag: dpdk-dumpcap -i $ifc -a duration:$secs exits 0" test "$rc" -eq 0
	fields "$f-ping.pcapng" icmp.type frame.packet_flags_direction ip.src >"$f-ping.txt"
	req=$(grep -c '^8	0x00000001	198.18.0.1' "$f-ping.txt") rep=$(grep -c '^0	0x00000002	198.18.0.2' "$f-ping.txt")
	echo "# $ifc: $(wc -l <"$f-ping.txt") records, $req echo requests inbound, $rep replies outbound"
	check "$tag: the file holds the ping's echo requests, inbound (received by the workers on $ifc): $req >= $min" test "$req" -ge "$min"
	check "$tag: ... and its replies, outbound (sent by the workers on $ifc): $rep >= $min" test "$rep" -ge "$min"
	check "$tag: no request outbound, no reply inbound on $ifc" \
		cond "[ -s '$f-ping.txt' ] && ! grep -qE '^8	0x00000002|^0	0x00000001' '$f-ping.txt'"
	check "$tag: tshark and capinfos read it without a warning" \
		cond "tshark -r '$f-ping.pcapng' 2>&1 >/dev/null | grep -v 'Running as user' | { ! grep -q .; } && capinfos '$f-ping.pcapng' >/dev/null 2>&1"
}

dc_filter_snaplen_checks() {
	local tag=$1 ifc=$2 secs=$3 rc min=$(($3 * 5)) port f="$TMP/dc-${1//[^A-Za-z0-9]/_}"
	dumpcap_fg -i "$ifc" -f 'icmp and ip[20] == 8' -s 60 -w "$f-fs.pcapng" -a "duration:$secs" -q >"$f-fs.out" 2>&1
	rc=$?
	fields "$f-fs.pcapng" icmp.type frame.len frame.cap_len >"$f-fs.txt"
	echo "# -f/-s: $(sort "$f-fs.txt" | uniq -c | tr '\n' ';')"
	check "$tag: dumpcap -i $ifc -f 'icmp and ip[20] == 8' -s 60 exits 0 with echo requests" \
		cond "[ $rc -eq 0 ] && [ \$(grep -c '^8	' '$f-fs.txt') -ge $min ]"
	check "$tag: the filter is honoured: nothing but echo requests (no reply, no IPv6)" \
		cond "[ -s '$f-fs.txt' ] && ! grep -vq '^8	' '$f-fs.txt'"
	check "$tag: the snaplen is honoured: 60 bytes kept, the original length (98) recorded" \
		cond "[ -s '$f-fs.txt' ] && ! grep -vq '^8	98	60$' '$f-fs.txt'"
	port=$(tel /spanbox/ports | jq -r --arg d "$ifc" '."/spanbox/ports" | to_entries[] | select(.value.devargs | startswith($d + ",") or . == $d) | .key')
	check "$tag: the filtered frames are counted (/spanbox/ports ${port:-?} pdump_filtered > 0)" \
		telq /spanbox/ports ".\"/spanbox/ports\".\"${port:-?}\".pdump_filtered > 0"
}
