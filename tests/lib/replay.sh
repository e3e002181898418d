# Readers of the counter tables `spanbox-primary --replay` prints (sourced after common.sh).
#   pctr LOG PORT COLUMN      a column of the port table ("none" when absent)
#   mctr LOG SESSION COLUMN   a column of the session table (session name), summed over workers
#   tctr LOG PORT ID COLUMN   a column of the tunnel table (ingress senders of PORT with session id /
#                             VNI / key ID), summed over workers and outer sources; "none" when absent
#   tcount LOG PORT           tunnel senders (lines) of PORT in the tunnel table
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
