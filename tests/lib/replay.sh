# Readers of the counter tables `spanbox-primary --replay` prints (sourced after common.sh).
#   pctr LOG PORT COLUMN      a column of the port table ("none" when absent)
#   mctr LOG SESSION COLUMN   a column of the session table (session name), summed over workers
#   tctr LOG PORT ID COLUMN   a column of the tunnel table (ingress senders of PORT with session id /
#                             VNI / key ID), summed over workers and outer sources; "none" when absent
#   tcount LOG PORT           tunnel senders (lines) of PORT in the tunnel table
#   replay TAG                run spanbox-primary --replay on $TMP/TAG.json (log $TMP/TAG.log, its
#                             tables as comments), TAP lines for its exit and for no worker killed
pctr() {
	awk -v p="$2" -v c="$3" '$1 == "port" && $2 == "rx_packets" {for (i = 1; i <= NF; i++) col[$i] = i; h = 1; next}
		$1 == "session" || $1 == "tunnel" {h = 0} h && $1 == p && (c in col) {v = $(col[c]); f = 1}
		END {print f ? v : "none"}' "$1"
}
mctr() {
	awk -v s="$2" -v c="$3" '$1 == "session" && $2 == "worker" {for (i = 1; i <= NF; i++) col[$i] = i; h = 1; next}
		h && $1 == s && (c in col) {v += $(col[c]); f = 1}
		END {print f ? v : "none"}' "$1"
}
tctr() {
	awk -v p="$2" -v id="$3" -v c="$4" '$1 == "tunnel" && $2 == "worker" {for (i = 1; i <= NF; i++) col[$i] = i; h = 1; next}
		$1 == "session" {h = 0} h && $1 == p && $(col["id"]) == id && (c in col) {v += $(col[c]); f = 1}
		END {print f ? v : "none"}' "$1"
}
tcount() {
	awk -v p="$2" '$1 == "tunnel" && $2 == "worker" {h = 1; next} $1 == "session" {h = 0} h && $1 == p {n++}
		END {print n + 0}' "$1"
}

# replay TAG: run $TMP/TAG.json to completion; log in $TMP/TAG.log; counter tables as comments.
# A worker killed by a signal can leave the replay waiting forever for its lost frames: 5 s after
# the primary logs one, the replay is stopped (SIGTERM through timeout) and counts as failed.
replay() {
	local tag=$1 rc pid t0=$SECONDS aborted=0 i
	: >"$TMP/$tag.log"
	timeout 120 "$BUILD/primary/spanbox-primary" -c "$TMP/$tag.json" --replay >"$TMP/$tag.log" 2>&1 &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		if grep -q 'killed by signal' "$TMP/$tag.log"; then
			for ((i = 0; i < 50; i++)); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
			kill -0 $pid 2>/dev/null && { kill -TERM $pid; aborted=1; }
			break
		fi
		sleep 0.1
	done
	wait $pid
	rc=$?
	awk '$1 == "port" && $2 == "rx_packets" {p = 1} /spanbox-primary: stopped/ {p = 0} p' "$TMP/$tag.log" |
		cut -c1-240 | sed "s/^/# $tag | /"
	grep -E 'killed by signal|exited with status [1-9]' "$TMP/$tag.log" | sed "s/^/# $tag: /"
	echo "# $tag: replay took $((SECONDS - t0)) s"
	if [ $aborted = 1 ]; then
		not_ok "$tag: replay completes (stopped: it still ran 5 s after a worker crash)"
	else
		check "$tag: replay exits 0 (rc $rc)" [ $rc -eq 0 ]
	fi
	check "$tag: no worker killed by a signal (primary log)" bash -c "! grep -q 'killed by signal' '$TMP/$tag.log'"
	[ $rc -eq 0 ] || tail -n 5 "$TMP/$tag.log" | sed 's/^/# log: /'
}

# ingress_xconnect_json FILE PREFIX RX_PCAP INGRESS_JSON TX_PCAP [EXTRA]: write the config of one
# worker cross-connecting a net_pcap input p0 (its ports[].ingress = INGRESS_JSON) to a net_pcap
# output p1 (TX_PCAP); lcores 63 (primary), 64 (worker), 65 (mgmt), file prefix PREFIX; EXTRA: more
# top-level members, e.g. '"mgmt": {...}'. For 63d_ingress_timestamps and bench/ts_in.sh.
ingress_xconnect_json() {
	cat >"$1" <<JSON
{
  "eal": {"file_prefix": "$2", "socket_mem_mb": 256, "primary_lcore": 63, "mgmt_lcore": 65},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$3", "ingress": $4},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$5"}
  ],
  "workers": {"count": 1, "lcores": [64]},
  "forwarding": {"xconnects": [["p0", "p1"]]}${6:+,
  $6}
}
JSON
}
