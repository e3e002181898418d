#!/usr/bin/env bash
# The Debian package and its systemd units (issue 17, "Package and units"; docs/PACKAGE.md):
#  - ./spanbox package builds out/spanbox_<meson version>_amd64.deb; dpkg-deb shows the files
#    (binaries in /usr/bin, the web page in /usr/share/spanbox/web, the units, the config), the
#    conffiles, and a Depends with Debian's runtime packages and no -dev package;
#  - the installed config is config/default.json with the units' changes (no netns, web_root);
#  - dpkg -i installs it on this machine; dpkg -L lists the files; systemd-analyze verify passes on
#    every unit (the templates as an instance);
#  - the installed spanbox-primary and spanbox-mgmt, started as the units' ExecStart lines say (the
#    test checks the lines) but on a copy of the installed config with this test's names, run the
#    workers (the installed /usr/bin/spanbox-worker, found beside the primary with no --worker-bin),
#    answer the API and serve the web page from /usr/share/spanbox/web; the binaries log to
#    stdout/stderr only;
#  - dpkg -r leaves /etc/spanbox and /var/lib/spanbox; dpkg -P removes /etc/spanbox and leaves what
#    /var/lib/spanbox held (the database is the operator's).
# The package is purged at exit, whatever happened. PID 1 is not systemd here: no unit is started.
# Private resources: file prefix t46pkg, lcores 80-83, API port 18480, taps t46-p0/t46-p1/t46-m
# (no netns), database under $TMP. Skipped when a spanbox package or /etc/spanbox is already here.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/lib/instance.sh"

PFX=t46pkg PORT=18480
API=http://127.0.0.1:$PORT/api/v1
CFG="$TMP/pkg.json"
UNITS=/lib/systemd/system
VARLIB_BEFORE=$(ls -A /var/lib/spanbox 2>/dev/null; [ -d /var/lib/spanbox ] && echo "(dir)")
PRIMARY= MGMT=

installed() { dpkg-query -W -f='${Status}' spanbox 2>/dev/null | grep -qv 'not-installed'; }
# dpkg ARGS with up to 60 s of retries while another dpkg or apt holds the lock
dpkg_retry() {
	local i out
	for ((i = 0; i < 30; i++)); do
		out=$(dpkg "$@" 2>&1) && { echo "$out" | grep '^spanbox:'; echo "$out" | tail -n 3 | sed 's/^/#   /'; return 0; }
		grep -qi 'lock' <<<"$out" || { echo "$out" | tail -n 10 | sed 's/^/#   /'; return 1; }
		sleep 2
	done
	return 1
}
cleanup() {
	[ -n "$MGMT" ] && sbx_stop_pid "$MGMT" 5
	[ -n "$PRIMARY" ] && sbx_stop_pid "$PRIMARY" 15
	if installed; then dpkg_retry -P spanbox >/dev/null || echo "# cleanup: dpkg -P spanbox failed"; fi
	# /var/lib/spanbox as it was: created here (and empty) goes
	[ -z "$VARLIB_BEFORE" ] && rmdir /var/lib/spanbox 2>/dev/null
	[ "$VARLIB_BEFORE" = "(dir)" ] && mkdir -p /var/lib/spanbox
	rm -rf "$TMP"
}

if installed || [ -e /etc/spanbox ] || [ -e /usr/bin/spanbox-primary ]; then
	ok "package test # SKIP a spanbox package, /etc/spanbox or /usr/bin/spanbox-primary is already on this machine"
	rm -rf "$TMP"
	exit 0
fi
trap cleanup EXIT

VER=$(sed -n "s/^ *version *: *'\([^']*\)'.*/\1/p" "$ROOT/meson.build" | head -n 1)
DEB="$ROOT/out/spanbox_${VER}_amd64.deb"

# ---------------------------------------------------------------------------------------------
# build and inspect
rm -f "$DEB"
start=$SECONDS
"$ROOT/spanbox" package >"$TMP/package.out" 2>&1
rc=$?
sed 's/^/#   /' "$TMP/package.out" | tail -n 5
check "./spanbox package: exit 0, $(basename "$DEB") built ($((SECONDS - start)) s)" cond "[ $rc -eq 0 ] && [ -s '$DEB' ]" || exit 0

dpkg-deb --info "$DEB" >"$TMP/info.txt" 2>&1
dpkg-deb --contents "$DEB" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' >"$TMP/contents.txt"
dpkg-deb --field "$DEB" Depends >"$TMP/depends.txt"
dpkg-deb --ctrl-tarfile "$DEB" | tar -xOf - ./conffiles >"$TMP/conffiles.txt" 2>/dev/null
echo "# Depends: $(cat "$TMP/depends.txt")"
check "dpkg-deb --info: package spanbox, version $VER, amd64" \
	cond "[ \"\$(dpkg-deb --field '$DEB' Package Version Architecture | tr '\n' ' ')\" = 'Package: spanbox Version: $VER Architecture: amd64 ' ]"
check "Depends: no -dev package" cond "! tr ',|' '\n\n' <'$TMP/depends.txt' | awk '{print \$1}' | grep -q -- '-dev\$'"
check "Depends: Debian's DPDK (dpdk, librte-*), libmicrohttpd12, libcjson1, libsqlite3-0, libpcap0.8" \
	cond "for dep in dpdk librte-eal23 libmicrohttpd12 libcjson1 libsqlite3-0 libpcap0.8; do grep -qE \"(^|[ ,])\$dep( |,|\\\$)\" '$TMP/depends.txt' || { echo \"# missing \$dep\"; return 1; }; done"
missing=
for f in /usr/bin/spanbox-primary /usr/bin/spanbox-mgmt /usr/bin/spanbox-worker /etc/spanbox/spanbox.json \
	/etc/default/spanbox /usr/lib/spanbox/spanbox-unit /usr/share/doc/spanbox/PACKAGE.md \
	$UNITS/spanbox.service $UNITS/spanbox-mgmt.service $UNITS/spanbox@.service $UNITS/spanbox-mgmt@.service; do
	grep -qxF "$f" "$TMP/contents.txt" || missing+=" $f"
done
for f in "$ROOT"/web/*; do
	[ "$(basename "$f")" = README.md ] && continue
	grep -qxF "/usr/share/spanbox/web/$(basename "$f")" "$TMP/contents.txt" || missing+=" /usr/share/spanbox/web/$(basename "$f")"
done
check "dpkg-deb --contents: binaries in /usr/bin, every file of web/ in /usr/share/spanbox/web, config, units${missing:+ (missing:$missing)}" [ -z "$missing" ]
check "nothing of the tests or the build tree in the package" cond "! grep -qE '(test_|/tests?/|ipc_send|erspan_parity|obj-)' '$TMP/contents.txt'"
check "conffiles: /etc/spanbox/spanbox.json and /etc/default/spanbox" \
	cond "grep -qx /etc/spanbox/spanbox.json '$TMP/conffiles.txt' && grep -qx /etc/default/spanbox '$TMP/conffiles.txt'"
check "packaging/spanbox.json is config/default.json without netns/address, with web_root /usr/share/spanbox/web" \
	cond "diff <(jq -S . '$ROOT/packaging/spanbox.json') <(jq -S '.ports |= map(del(.netns, .address)) | .mgmt.web_root = \"/usr/share/spanbox/web\"' '$ROOT/config/default.json')"

# ---------------------------------------------------------------------------------------------
# install
out=$(dpkg_retry -i "$DEB" 2>&1) || { echo "$out"; apt-get -f install -y -qq >/dev/null 2>&1; }
echo "$out" | grep "^spanbox:" | sed "s/^/# postinst: /"
check "dpkg -i: installed" installed || exit 0
dpkg -L spanbox >"$TMP/list.txt"
check "dpkg -L: lists the binaries, the web page, the units and the config" \
	cond "for lf in /usr/bin/spanbox-primary /usr/bin/spanbox-worker /usr/bin/spanbox-mgmt /usr/share/spanbox/web/index.html $UNITS/spanbox.service /etc/spanbox/spanbox.json; do grep -qxF \$lf '$TMP/list.txt' && [ -e \$lf ] || return 1; done"
check "/var/lib/spanbox exists after the installation" [ -d /var/lib/spanbox ]
fp=$(openssl x509 -in /etc/spanbox/tls/mgmt.crt -noout -fingerprint -sha256 2>/dev/null | sed 's/.*=//')
check "postinst made a self-signed certificate in /etc/spanbox/tls and printed its fingerprint ($fp)" \
	cond "[ -n '$fp' ] && grep -qF '$fp' <<<\"\$out\" && [ \"\$(stat -c %a /etc/spanbox/tls/mgmt.key)\" = 600 ]"
check "the key in /etc/spanbox/tls is the certificate's (openssl)" \
	cond "[ \"\$(openssl x509 -in /etc/spanbox/tls/mgmt.crt -noout -pubkey | md5sum)\" = \"\$(openssl pkey -in /etc/spanbox/tls/mgmt.key -pubout | md5sum)\" ]"
check "the installation started nothing (the units are enabled, not started)" cond "! pgrep -f '^/usr/bin/spanbox-' >/dev/null"

# systemd-analyze verify: the two units, and each template as an instance (in a directory of
# copies named spanbox@t46.service, spanbox-mgmt@t46.service)
mkdir -p "$TMP/units"
cp $UNITS/spanbox@.service "$TMP/units/spanbox@t46.service"
cp $UNITS/spanbox-mgmt@.service "$TMP/units/spanbox-mgmt@t46.service"
for u in $UNITS/spanbox.service $UNITS/spanbox-mgmt.service "$TMP/units/spanbox@t46.service" "$TMP/units/spanbox-mgmt@t46.service"; do
	vout=$(SYSTEMD_UNIT_PATH="$TMP/units:" systemd-analyze verify "$u" 2>&1)
	vrc=$?
	[ -n "$vout" ] && sed 's/^/#   /' <<<"$vout" | head -n 8
	check "systemd-analyze verify $(basename "$u"): exit 0, nothing said about a spanbox unit" \
		cond "[ $vrc -eq 0 ] && ! grep -qi spanbox <<<\"\$vout\""
done

# the ExecStart lines the test runs below
x_primary=$(sed -n 's/^ExecStart=//p' $UNITS/spanbox.service)
x_mgmt=$(sed -n 's/^ExecStart=//p' $UNITS/spanbox-mgmt.service)
check "spanbox.service: ExecStart=/usr/bin/spanbox-primary -c /etc/spanbox/spanbox.json --ready-file /run/spanbox/unit-spanbox/ready" \
	[ "$x_primary" = "/usr/bin/spanbox-primary -c /etc/spanbox/spanbox.json --ready-file /run/spanbox/unit-spanbox/ready" ]
check "spanbox-mgmt.service: ExecStart=/usr/bin/spanbox-mgmt -c /etc/spanbox/spanbox.json" \
	[ "$x_mgmt" = "/usr/bin/spanbox-mgmt -c /etc/spanbox/spanbox.json" ]
check "spanbox.service: hugepages before the start, Restart=on-failure with a start limit, SIGTERM to the primary alone" \
	cond "grep -qx 'ExecStartPre=/usr/lib/spanbox/spanbox-unit hugepages' $UNITS/spanbox.service && grep -qx Restart=on-failure $UNITS/spanbox.service && grep -q '^StartLimitBurst=' $UNITS/spanbox.service && grep -qx KillMode=mixed $UNITS/spanbox.service"
check "spanbox-mgmt.service: BindsTo=spanbox.service, and the primary does not depend on mgmt's restarts (Wants=, not Requires=)" \
	cond "grep -qx BindsTo=spanbox.service $UNITS/spanbox-mgmt.service && ! grep -qE '^(Requires|BindsTo|PartOf)=.*spanbox-mgmt' $UNITS/spanbox.service"

# ExecStartPre: the hugepage helper with the count there is, and with fewer: never shrinks
nr=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
cur=$(cat $nr)
h1=$(SPANBOX_HUGEPAGES=$cur /usr/lib/spanbox/spanbox-unit hugepages 2>&1); r1=$?
h2=$(SPANBOX_HUGEPAGES=1 /usr/lib/spanbox/spanbox-unit hugepages 2>&1); r2=$?
echo "# spanbox-unit hugepages: $h1 / $h2"
check "spanbox-unit hugepages: exit 0 with $cur pages, and never fewer pages than there were" \
	cond "[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ \$(cat $nr) -ge $cur ]"

# ---------------------------------------------------------------------------------------------
# run the installed binaries as the units do, on a copy of the installed config with our names
jq --arg db "$TMP/pkg.db" --arg pfx "$PFX" --argjson port "$PORT" \
	'.eal.file_prefix = $pfx | .eal.socket_mem_mb = 256 | .eal.primary_lcore = 80 | .eal.mgmt_lcore = 81
	| .workers.lcores = [82, 83] | .mgmt.port = $port | .mgmt.database = $db
	| .ports[0].devargs = "net_tap0,iface=t46-p0" | .ports[1].devargs = "net_tap1,iface=t46-p1"
	| .ports[2].devargs = "net_tap2,iface=t46-m"' /etc/spanbox/spanbox.json >"$CFG"
check "the copy of the installed config has no netns and web_root /usr/share/spanbox/web" \
	cond "[ -s '$CFG' ] && jq -e '([.ports[] | select(.netns)] | length == 0) and .mgmt.web_root == \"/usr/share/spanbox/web\"' '$CFG' >/dev/null"
# the unit's environment: /etc/default/spanbox, as EnvironmentFile= reads it
sbx_start_primary /usr/bin/spanbox-primary "$CFG" "$TMP/ready" "$TMP/primary.log"
PRIMARY=$SBX_PID
rc=0; sbx_wait_ready "$PRIMARY" "$TMP/ready" 300 || rc=$?
[ $rc -eq 0 ] || tail -n 15 "$TMP/primary.log" | sed 's/^/#   /'
check "installed spanbox-primary (no --worker-bin): ready, its workers running" [ $rc -eq 0 ]
sbx_start_mgmt /usr/bin/spanbox-mgmt "$CFG" "$TMP/mgmt.log"
MGMT=$SBX_PID
rc=0; sbx_wait_api "$MGMT" "$API/health" 150 || rc=$?
[ $rc -eq 0 ] || tail -n 15 "$TMP/mgmt.log" | sed 's/^/#   /'
check "installed spanbox-mgmt: /api/v1/health says the appliance is up" [ $rc -eq 0 ]
curl -fsS --max-time 5 "$API/status" >"$TMP/status.json" 2>/dev/null
check "/api/v1/status: 2 workers running, 3 ports" \
	cond "[ -s '$TMP/status.json' ] && jq -e '([.workers[] | select(.state == \"running\")] | length) == 2 and (.ports | length) == 3' '$TMP/status.json' >/dev/null"
wexe=$(for p in $(jq -r '.workers[].pid' "$TMP/status.json" 2>/dev/null); do readlink "/proc/$p/exe"; done | sort -u)
check "the workers run the installed /usr/bin/spanbox-worker (found beside the primary)" [ "$wexe" = /usr/bin/spanbox-worker ]
curl -fsS --max-time 5 "http://127.0.0.1:$PORT/" -o "$TMP/index.html" 2>/dev/null
curl -fsS --max-time 5 "http://127.0.0.1:$PORT/app.js" -o "$TMP/app.js" 2>/dev/null
check "the web page (/ and /app.js) is the installed /usr/share/spanbox/web" \
	cond "cmp -s '$TMP/index.html' /usr/share/spanbox/web/index.html && cmp -s '$TMP/app.js' /usr/share/spanbox/web/app.js && grep -q 'static files from /usr/share/spanbox/web' '$TMP/mgmt.log'"
check "the binaries log to stdout/stderr (the journal under systemd): both logs written, no log file of their own" \
	cond "grep -q 'spanbox-primary' '$TMP/primary.log' && grep -q 'spanbox-mgmt' '$TMP/mgmt.log' && ! grep -ql '/var/log' /usr/bin/spanbox-primary /usr/bin/spanbox-worker /usr/bin/spanbox-mgmt"

# stop as the units do: SIGTERM to the primary (it stops its workers), then mgmt
rc=0; sbx_stop_pid "$PRIMARY" 15 || rc=$?
PRIMARY=
rc2=0; sbx_stop_pid "$MGMT" 5 || rc2=$?
MGMT=
check "SIGTERM stops the primary (workers first) and then mgmt, neither killed" cond "[ $rc -eq 0 ] && [ $rc2 -eq 0 ]"

# ---------------------------------------------------------------------------------------------
# remove, purge
dpkg_retry -r spanbox
check "dpkg -r: the binaries are gone, /etc/spanbox/spanbox.json and /var/lib/spanbox stay" \
	cond "[ ! -e /usr/bin/spanbox-primary ] && [ -f /etc/spanbox/spanbox.json ] && [ -d /var/lib/spanbox ]"
dpkg_retry -P spanbox
check "dpkg -P: /etc/spanbox, /etc/default/spanbox and the units' enablement links are gone" \
	cond "[ ! -e /etc/spanbox ] && [ ! -e /etc/default/spanbox ] && ! installed && [ -z \"\$(find /etc/systemd/system -name 'spanbox*' 2>/dev/null)\" ]"
after=$(ls -A /var/lib/spanbox 2>/dev/null; [ -d /var/lib/spanbox ] && echo "(dir)")
if [ -n "$VARLIB_BEFORE" ]; then
	check "dpkg -P: what /var/lib/spanbox held before the test is still there ($(echo $VARLIB_BEFORE))" \
		cond "[ \"\$(comm -23 <(echo '$VARLIB_BEFORE' | sort) <(echo '$after' | sort))\" = '' ]"
else
	check "dpkg -P: /var/lib/spanbox, created by the installation and left empty, is gone" [ -z "$after" ]
fi
