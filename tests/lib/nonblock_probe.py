#!/usr/bin/env python3
"""nonblock_probe.py: timed GETs while slow requests are in flight (tests/e2e/54_api_nonblocking.sh).

  nonblock_probe.py --port N --token T --slow METHOD PATH BODY [--slow ...] [--gets 100]
                    [--get-path /api/v1/status] [--delay-ms 150] [--timeout 10]

Starts every --slow request in a thread of its own (fresh connection, bearer token, JSON body;
BODY "-" for none), waits --delay-ms, then sends --gets GET requests one after the other, each on
a fresh connection, timing each from connect to the last byte of the answer. Prints one JSON
object: {"gets": [{"status": S, "ms": T}...], "slow": [{"method":..., "path":..., "status": S,
"ms": T, "start_ms": T0, "end_ms": T1, "body": "..."}...], "gets_end_ms": T} (times in ms from
the start of the first slow request). Bounded: every request has a --timeout s timeout, and the
slow threads are joined with that timeout.
"""
import argparse
import http.client
import json
import threading
import time


def request(port, method, path, body, token, timeout):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {}
    if token:
        headers["Authorization"] = "Bearer " + token
    if body is not None:
        headers["Content-Type"] = "application/json"
    try:
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        data = r.read()
        return r.status, data.decode("utf-8", "replace")
    except Exception as e:  # a timeout or a reset is a result too
        return 0, "error: %s" % e
    finally:
        c.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--token", default="")
    ap.add_argument("--slow", nargs=3, action="append", default=[], metavar=("METHOD", "PATH", "BODY"))
    ap.add_argument("--gets", type=int, default=100)
    ap.add_argument("--get-path", default="/api/v1/status")
    ap.add_argument("--delay-ms", type=int, default=150)
    ap.add_argument("--timeout", type=float, default=10.0)
    a = ap.parse_args()
    t0 = time.monotonic()
    ms = lambda: (time.monotonic() - t0) * 1000.0
    slow = []

    def run(entry):
        entry["start_ms"] = ms()
        st, body = request(a.port, entry["method"], entry["path"], entry["_body"], a.token, a.timeout)
        entry["end_ms"] = ms()
        entry["status"], entry["body"] = st, body[:300]
        entry["ms"] = entry["end_ms"] - entry["start_ms"]

    threads = []
    for m, p, b in a.slow:
        e = {"method": m, "path": p, "_body": None if b == "-" else b}
        slow.append(e)
        t = threading.Thread(target=run, args=(e,), daemon=True)
        t.start()
        threads.append(t)
        time.sleep(0.02)  # in this order on the server
    time.sleep(a.delay_ms / 1000.0)
    gets = []
    for _ in range(min(a.gets, 1000)):
        s = ms()
        st, _body = request(a.port, "GET", a.get_path, None, "", a.timeout)
        gets.append({"status": st, "ms": round(ms() - s, 2)})
    gets_end = ms()
    for t in threads:
        t.join(a.timeout + 1)
    for e in slow:
        e.pop("_body", None)
        for k in ("start_ms", "end_ms", "ms"):
            if k in e:
                e[k] = round(e[k], 1)
    print(json.dumps({"gets": gets, "slow": slow, "gets_end_ms": round(gets_end, 1)}))


if __name__ == "__main__":
    main()
