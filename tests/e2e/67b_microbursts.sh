#!/usr/bin/env bash
# Microbursts (issue #26): a pcap port paced in bursts (pps=400, pps_burst=200: 200 frames of
# 1514 B at once every 500 ms, 0.5 % of 1 Gb/s on average, ~240 % of a 1 ms window at 1 Gb/s)
# shows its bursts: /status ports[].microburst peaks >= 80 % beside an average of ~1 %,
# `microburst` events whose start times fall on the 500 ms grid of the bursts (one per port and
# second, the rest counted), the bursts counted on p0 rx, p1 tx (forwarded) and m tx (mirror
# copies), the +Inf bucket of the /metrics histogram. The same frames at the same average rate,
# steady (pps=400), show none of it (a window reaches 80 % only if the primary stalls for 166 ms). A pcap port without speed_mbps has no utilisation
# (speed_source "none"); bad microburst keys are refused naming the field.
# Own instance: file prefix sbxmb, lcores 44-46, API port 18920, database under $TMP.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/instance.sh"
PRIMARY="$BUILD/primary/spanbox-primary"
PORT=18920 API=http://127.0.0.1:18920/api/v1
IN="$TMP/in.pcap" FRAMES=2000 PPS=400 BURST=200
trap 'inst_cleanup; rm -rf "$TMP"' EXIT
get() { curl -fsS --max-time 5 "$API$1"; }

# FRAMES UDP frames of 1514 B (pcap, written directly)
python3 - "$IN" "$FRAMES" <<'PY'
import struct, sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i in range(n):
        payload = bytes(1514 - 42)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 1500, i & 0xffff, 0, 64, 17, 0,
                         bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
        udp = struct.pack("!HHHH", 1024, 2048, 1480, 0)
        fr = bytes.fromhex("020000000002020000000001") + b"\x08\x00" + ip + udp + payload
        f.write(struct.pack("<IIII", i // 1000, (i % 1000) * 1000, len(fr), len(fr)) + fr)
PY

# mkcfg FILE DEVARGS_EXTRA: p0 reads IN paced, forwarded to p1; m gets copies of p0 rx; z idle
mkcfg() {
	cat >"$1" <<JSON
{
  "eal": {"file_prefix": "sbxmb", "socket_mem_mb": 256, "primary_lcore": 44, "mgmt_lcore": 45},
  "ports": [
    {"name": "p0", "devargs": "net_pcap0,rx_pcap=$IN,$2", "speed_mbps": 1000},
    {"name": "p1", "devargs": "net_pcap1,tx_pcap=$TMP/p1.pcap", "speed_mbps": 1000},
    {"name": "m", "devargs": "net_pcap2,tx_pcap=$TMP/m.pcap", "speed_mbps": 1000},
    {"name": "z", "devargs": "net_pcap3,tx_pcap=$TMP/z.pcap"}
  ],
  "workers": {"count": 1, "lcores": [46]},
  "forwarding": {"xconnects": [["p0", "p1"]]},
  "mirrors": [{"id": 1, "sources": [{"port": "p0", "direction": "rx"}], "destination": {"port": "m"}}],
  "microburst": {"window_us": 1000, "threshold_pct": 80},
  "mgmt": {"port": $PORT, "database": "${1%.json}.db"}
}
JSON
}

# --- refusals ---------------------------------------------------------------------------------
mkcfg "$TMP/bad.json" "pps=$PPS"
for bad in '.microburst.window_us = 50|microburst.window_us' '.microburst.threshold_pct = 0|microburst.threshold_pct' \
	'.microburst.windw_us = 1|windw_us' '.ports[0].speed_mbps = -1|ports[0].speed_mbps'; do
	jq "${bad%%|*}" "$TMP/bad.json" >"$TMP/bad2.json"
	out=$("$PRIMARY" -c "$TMP/bad2.json" --check 2>&1); rc=$?
	check "refused, naming ${bad##*|}: $out" cond "[ $rc -ne 0 ] && grep -qF -- '${bad##*|}' <<<\"\$out\""
done

# run NAME DEVARGS_EXTRA: start with the pcap bridge paused (test hook: frames read before the
# worker runs would wait in the ring and leave it as one burst), go once mgmt is up; follow /status
# every 0.2 s until p0 received every frame (+1.5 s: the last windows and second are final), keep
# the highest peaks seen in $TMP/NAME.peaks
run() {
	local name=$1 i
	mkcfg "$TMP/$name.json" "$2"
	touch "$TMP/pause"
	inst_start_primary "$name" "$TMP/$name.json" SBX_TEST_BRIDGE_PAUSE_FILE="$TMP/pause"
	check "$name: primary ready" [ -f "$TMP/$name.ready" ] || { tail -20 "$TMP/$name-primary.log" | sed 's/^/# /'; return 1; }
	inst_start_mgmt "$name" "$TMP/$name.json" "$API"
	check "$name: mgmt up" [ $? -eq 0 ] || return 1
	rm -f "$TMP/pause"
	: >"$TMP/$name.peaks"
	for ((i = 0; i < 150; i++)); do
		get /status >"$TMP/$name.st" || break
		jq -r '.ports[] | select(.microburst.second != null) |
			"\(.name) \(.microburst.rx.peak_pct) \(.microburst.rx.avg_pct) \(.microburst.tx.peak_pct) \(.microburst.tx.avg_pct)"' \
			"$TMP/$name.st" >>"$TMP/$name.peaks"
		[ "$(jq '.ports[0].workers.rx_packets' "$TMP/$name.st")" -ge $FRAMES ] && break
		sleep 0.2
	done
	sleep 1.5
	get /status >"$TMP/$name.st"
	sleep 0.5 # mgmt copies events every 100 ms
	get "/events?kind=microburst&limit=1000" >"$TMP/$name.ev"
	curl -fsS --max-time 5 "http://127.0.0.1:$PORT/metrics" >"$TMP/$name.metrics"
	inst_cleanup
}
# maxof NAME COLUMN PORT: the highest value of a column of $TMP/NAME.peaks for PORT (0 when none)
maxof() { awk -v p="$3" -v c="$2" '$1 == p && $c != "null" && $c > m { m = $c } END { print m + 0 }' "$TMP/$1.peaks"; }
mb() { jq -r "[.ports[] | select(.name == \"$2\")][0].microburst.$3" "$TMP/$1.st"; }
# starts NAME PORT DIR: the start times (s, with decimals) of NAME's events of PORT DIR, oldest first
starts() {
	jq -r --arg p "$2" --arg d "$3" '.[] | .detail | select(startswith($p + " " + $d + " ")) |
		capture("start (?<t>[^ ]+)Z") | .t' "$TMP/$1.ev" |
		while read -r t; do echo "$(date -ud "${t%.*}" +%s).${t#*.}"; done | sort -n
}

# --- bursts -----------------------------------------------------------------------------------
run bursts "pps=$PPS,pps_burst=$BURST"
check "bursts: p0 received all $FRAMES frames" [ "$(jq '.ports[0].workers.rx_packets' "$TMP/bursts.st")" -eq $FRAMES ]
echo "# highest peaks seen (port rx_peak rx_avg tx_peak tx_avg):"
for p in p0 p1 m; do grep "^$p " "$TMP/bursts.peaks" | sort -k2 -n | tail -1 | sed 's/^/#   /'; done
pk0=$(maxof bursts 2 p0) pk1=$(maxof bursts 4 p1) pkm=$(maxof bursts 4 m) av0=$(maxof bursts 3 p0)
check "bursts: p0 rx peaks at $pk0 % (>= 80) while its average stays at $av0 % (<= 5)" \
	awk -v p="$pk0" -v a="$av0" 'BEGIN { exit !(p >= 80 && a > 0 && a <= 5) }'
check "bursts: p1 tx (forwarded) peaks at $pk1 %, m tx (mirror copies) at $pkm % (>= 80)" \
	awk -v p="$pk1" -v m="$pkm" 'BEGIN { exit !(p >= 80 && m >= 80) }'
b0=$(mb bursts p0 rx.bursts) b1=$(mb bursts p1 tx.bursts) bt=$(mb bursts p0 tx.bursts)
n=$((FRAMES / BURST))
echo "# p0: late windows $(mb bursts p0 late_windows), lost $(mb bursts p0 lost_windows); windows $(mb bursts p0 windows)"
check "bursts: $n bursts sent, counted on p0 rx $b0, p1 tx $b1 (each $((n * 3 / 4))..$((n * 2))), none on p0 tx ($bt)" \
	cond "[ $b0 -ge $((n * 3 / 4)) -a $b0 -le $((n * 2)) -a $b1 -ge $((n * 3 / 4)) -a $b1 -le $((n * 2)) -a $bt -eq 0 ]"
ev=$(jq '[.[] | select(.detail | startswith("p0 rx "))] | length' "$TMP/bursts.ev")
sup=$(mb bursts p0 events_suppressed) evs=$(mb bursts p0 events)
check "bursts: p0's events: $ev rx events over ~$((FRAMES / PPS)) s (3..7) = /status events $evs; its $b0 bursts = $evs events + $sup suppressed (>= 1)" \
	cond "[ $ev -ge 3 -a $ev -le 7 -a $evs -eq $ev -a $sup -ge 1 -a $((evs + sup)) -eq $b0 ]"
starts bursts p0 rx >"$TMP/t0"
sed 's/^/# p0 rx event start /' "$TMP/t0"
check "bursts: p0's event starts lie on the 500 ms grid of the bursts (+-30 ms), one per second at most" \
	awk 'NR == 1 { t0 = $1 } NR > 1 { d = $1 - t0; r = (d * 1000) % 500; if (r > 30 && r < 470) bad++;
		if (int($1) == int(prev)) bad++ } { prev = $1 } END { exit !(NR >= 3 && bad == 0) }' "$TMP/t0"
first=$(jq -r '[.[] | select(.kind == "microburst")] | length' "$TMP/bursts.ev")
check "bursts: every event names its port, direction, start, peak and windows ($first events)" \
	jq -e 'length > 0 and all(.[]; .kind == "microburst" and
		(.detail | test("^(p0 rx|p1 tx|m tx) start 20[0-9-]+T[0-9:]+\\.[0-9]{6}Z peak [0-9.]+% windows [0-9]+$")))' \
	"$TMP/bursts.ev"
inf=$(awk '/^spanbox_port_window_utilisation_ratio_bucket\{port="p0",direction="rx",le="\+Inf"\}/ {print $2}' "$TMP/bursts.metrics")
le1=$(awk '/^spanbox_port_window_utilisation_ratio_bucket\{port="p0",direction="rx",le="1"\}/ {print $2}' "$TMP/bursts.metrics")
check "bursts: /metrics histogram of p0 rx: $((inf - le1)) windows above 100 % (>= $((n / 2)))" \
	cond "[ -n '$inf' -a -n '$le1' ] && [ $((inf - le1)) -ge $((n / 2)) ]"
check "bursts: /metrics counts the bursts (spanbox_port_microbursts_total p0 rx = $b0)" \
	grep -qx "spanbox_port_microbursts_total{port=\"p0\",direction=\"rx\"} $b0" "$TMP/bursts.metrics"
if command -v promtool >/dev/null; then
	check "bursts: /metrics passes promtool check metrics" cond "promtool check metrics <'$TMP/bursts.metrics' >'$TMP/prom.out' 2>&1 && [ ! -s '$TMP/prom.out' ]" ||
		sed 's/^/# /' "$TMP/prom.out" | head
else
	echo "ok - bursts: promtool check metrics # SKIP promtool not installed"
fi
check "bursts: pcap port z without speed_mbps: speed_source none, peak null" \
	cond "[ '$(mb bursts z speed_source)' = none -a '$(mb bursts z rx.peak_pct)' = null -a '$(mb bursts z speed_mbps)' = null ]"
check "bursts: p0 speed_mbps 1000 from the config" \
	cond "[ '$(mb bursts p0 speed_mbps)' = 1000 -a '$(mb bursts p0 speed_source)' = config ]"

# --- the same average, steady --------------------------------------------------------------------
run steady "pps=$PPS"
check "steady: p0 received all $FRAMES frames" [ "$(jq '.ports[0].workers.rx_packets' "$TMP/steady.st")" -eq $FRAMES ]
pk0=$(maxof steady 2 p0) av0=$(maxof steady 3 p0) pk1=$(maxof steady 4 p1)
echo "# steady: highest peaks p0 rx $pk0 %, p1 tx $pk1 %, average p0 rx $av0 %"
check "steady: p0 rx peaks at $pk0 %, p1 tx at $pk1 % (< 80), average $av0 % (<= 5)" \
	awk -v p="$pk0" -v q="$pk1" -v a="$av0" 'BEGIN { exit !(p < 80 && q < 80 && a > 0 && a <= 5) }'
check "steady: no burst counted, no microburst event" \
	cond "[ '$(mb steady p0 rx.bursts)' = 0 -a '$(mb steady p1 tx.bursts)' = 0 -a '$(jq length "$TMP/steady.ev")' = 0 ]"
inf=$(awk '/^spanbox_port_window_utilisation_ratio_bucket\{port="p0",direction="rx",le="0.8"\}/ {print $2}' "$TMP/steady.metrics")
cnt=$(awk '/^spanbox_port_window_utilisation_ratio_count\{port="p0",direction="rx"\}/ {print $2}' "$TMP/steady.metrics")
check "steady: every p0 rx window ($cnt) in the histogram's le 0.8 bucket ($inf)" \
	cond "[ -n '$cnt' ] && [ '$cnt' -gt 1000 -a '$cnt' = '$inf' ]"
