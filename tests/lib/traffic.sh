# UDP traffic through the appliance for the tests with two workers (72, 90, 91, 93): iperf3 from
# one of the test's namespaces to 198.18.0.2 in the other, 8 streams of MBIT (3) Mbit/s each
# (about 2000 frames/s at 3), bounded to 100 s. Sourced after common.sh; the caller defines
# wrx API W (worker W's rx count).
#   traffic_start NS_SRC NS_DST PORT [MBIT]  server in NS_DST, client in NS_SRC (pids in
#                                      IPERF_PIDS, the client's in IPERF_CLIENT; output in
#                                      $TMP/iperf_*.txt)
#   traffic_stop                       kill them
#   both_rise API                      0 when the rx counters of workers 0 and 1 both rise over 1 s,
#                                      by 100 frames or more each (a stray ARP or neighbour frame on
#                                      a worker's queue is not traffic: a worker whose queues got
#                                      none of the 8 streams rises by ~2)
#   traffic_to_both API NS_SRC NS_DST PORT [MBIT]   traffic_start until both workers get some
#                                      (the tap spreads the flows over its queues by hash; 3 attempts)
#   keeps_rising API W N LABEL         N samples of worker W's rx 100 ms apart all rising (stalls)
IPERF_PIDS=()

traffic_start() {
	ip netns exec "$2" timeout 110 iperf3 -s -1 -p "$3" >"$TMP/iperf_s.txt" 2>&1 &
	IPERF_PIDS+=($!)
	sleep 0.5
	ip netns exec "$1" timeout 110 iperf3 -u -c 198.18.0.2 -p "$3" -P 8 -b "${4:-3}M" -t 100 >"$TMP/iperf_c.txt" 2>&1 &
	IPERF_CLIENT=$!
	IPERF_PIDS+=($!)
}
traffic_stop() { local p; for p in "${IPERF_PIDS[@]}"; do kill "$p" 2>/dev/null; done; IPERF_PIDS=(); }
both_rise() {
	local a0 a1 b0 b1
	a0=$(wrx "$1" 0) && a1=$(wrx "$1" 1) || return 1
	sleep 1
	b0=$(wrx "$1" 0) && b1=$(wrx "$1" 1) || return 1
	echo "# rx over 1 s: worker 0 +$((b0 - a0)), worker 1 +$((b1 - a1))"
	[ $((b0 - a0)) -ge 100 ] && [ $((b1 - a1)) -ge 100 ]
}
traffic_to_both() {
	local attempt
	for attempt in 1 2 3; do
		traffic_start "$2" "$3" "$4" "${5:-3}"
		sleep 1
		both_rise "$1" && return 0
		echo "# attempt $attempt: the flows did not reach both workers' queues; new iperf3 run"
		traffic_stop
		sleep 0.5
	done
	return 1
}
# keeps_rising API W N LABEL: N samples of worker W's rx, 100 ms apart, into $samples; each one not
# larger than the one before appends "LABEL sample I" to the caller's array stalls. A sample the
# API did not answer is read once more at once and the miss appended to the caller's array
# api_misses (it measures the worker, not mgmt: mgmt's rare "Empty reply from server", still open,
# is checked by 58; the callers print the misses)
keeps_rising() {
	local s cur prev
	prev=$(wrx "$1" "$2")
	[ -n "$prev" ] || { api_misses+=("$4 sample 0"); prev=$(wrx "$1" "$2"); }
	samples="$prev"
	for ((s = 0; s < $3; s++)); do
		sleep 0.1
		cur=$(wrx "$1" "$2")
		[ -n "$cur" ] || { api_misses+=("$4 sample $((s + 1))"); cur=$(wrx "$1" "$2"); }
		samples+=" $cur"
		[ -n "$cur" ] && [ -n "$prev" ] && [ "$cur" -gt "$prev" ] || stalls+=("$4 sample $((s + 1))")
		prev=$cur
	done
}
