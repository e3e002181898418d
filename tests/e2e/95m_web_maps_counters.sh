#!/usr/bin/env bash
# The web page's map rules with per-rule hits, sort by hits and search (issue #27) in headless
# Chromium: tests/web/maps_counters.test.mjs serves web/ from a node http server of its own with
# canned /api/v1 answers modelled on the rules route (packets and bytes per rule, sort=hits,
# search=, field=&value=, matched), so that the hits are not all 0 as on an appliance without
# traffic; 95m_web_maps.sh runs the same page against the real appliance's route. Checks the hits cells, the order by hits over two pages, a delete from the sorted view
# (the rule's own index), a search by field and by text with the "N matching" range, and an mgmt
# without maps routes (section hidden); 32 maps: one GET /api/v1/maps a refresh, none per map.
# Private resources: none of the appliance's; the server
# listens on an ephemeral port of 127.0.0.1. Screenshot: out/tests/web/maps-hits.png.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/web.sh"
trap 'rm -rf "$TMP"' EXIT

web_deps || exit 1
SBX_OUT="$ROOT/out/tests/web" timeout 120 node "$ROOT/tests/web/maps_counters.test.mjs"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || not_ok "maps_counters.test.mjs ended with status $rc (timeout or crash)"
exit 0
