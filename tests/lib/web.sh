# The browser tests' tools (sourced after common.sh): Debian's headless Chromium, node, and
# playwright-core in tests/web/node_modules (npm ci from the lockfile when missing).
#   web_deps   0 when all are there; else a "not ok" line (and npm's log) and 1
web_deps() {
	if ! [ -x /usr/bin/chromium ] || ! command -v node >/dev/null; then
		not_ok "chromium (/usr/bin/chromium) and node are installed (./spanbox setup installs them)"
		return 1
	fi
	if [ ! -d "$ROOT/tests/web/node_modules/playwright-core" ]; then
		(cd "$ROOT/tests/web" && npm ci --no-audit --no-fund) >"$TMP/npm.log" 2>&1 ||
			{ not_ok "npm ci in tests/web (playwright-core from the lockfile)"; cat "$TMP/npm.log"; return 1; }
	fi
}
