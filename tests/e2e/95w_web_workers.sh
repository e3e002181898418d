#!/usr/bin/env bash
# How the status page shows supervision (issue #24 items 3, 11) in headless Chromium:
# tests/web/workers.test.mjs serves web/ with canned /api/v1 answers (worker 1 failed, worker 0
# not scheduled) and checks the red banner naming the failed worker and its unpolled queues, the
# workers table's states, and the banner back to "up" once the worker runs again.
#
# Private resources: none of the appliance's (no EAL, no tap, no mgmt); the server listens on an
# ephemeral port of 127.0.0.1.
source "$(dirname "$0")/../lib/common.sh"
source "$ROOT/tests/lib/web.sh"
trap 'rm -rf "$TMP"' EXIT

web_deps || exit 1
timeout 60 node "$ROOT/tests/web/workers.test.mjs"
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || not_ok "workers.test.mjs ended with status $rc (timeout or crash)"
exit 0
