#!/usr/bin/env bash
# The web page's tool groups (issue 13) in headless Chromium: tests/web/groups.test.mjs serves web/
# from a node http server of its own with canned /api/v1 answers (a /status with 2 tool groups, one
# member down; the appliance does not serve tool_groups yet) and checks the "Tool groups" table and
# the topology drawing (group and member nodes, the down member marked, the edges and their rates),
# the mirror form with a tool group as destination (the POST body it sends), then a port link-down,
# an empty tool_groups ("none", the form back on a port) and none at all (section hidden).
#
# Private resources: none of the appliance's (no EAL, no tap, no mgmt); the server listens on an
# ephemeral port of 127.0.0.1. Screenshot: out/tests/web/topology-groups.png.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/web.sh"
trap 'rm -rf "$TMP"' EXIT

web_deps || exit 1
SBX_OUT="$ROOT/out/tests/web" timeout 120 node "$ROOT/tests/web/groups.test.mjs"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || not_ok "groups.test.mjs ended with status $rc (timeout or crash)"
exit 0
