#!/usr/bin/env python3
"""Fresh connections that wait before they send their request (tests/e2e/55d_http_guard.sh).

Opens N connections to 127.0.0.1:PORT, one after the other (at most --max-s seconds in all);
each waits a random 0..WAIT ms after its connect before it sends `GET PATH` (Connection: close),
then reads the answer (5 s at most). Prints one JSON object: how many got an HTTP status line,
how many got nothing ("Empty reply from server": the connection closed before any byte), and
their statuses. Bounded in count and time; traffic only to loopback.
"""
import argparse, json, random, socket, time

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--path", default="/api/v1/health")
ap.add_argument("-n", type=int, default=100)
ap.add_argument("--wait-ms", type=int, default=150)
ap.add_argument("--max-s", type=float, default=60)
ap.add_argument("--seed", type=int, default=24)
a = ap.parse_args()
random.seed(a.seed)
out = {"n": 0, "answered": 0, "empty": 0, "errors": 0, "statuses": {}}
t0 = time.monotonic()
for i in range(a.n):
    if time.monotonic() - t0 > a.max_s:
        break
    out["n"] += 1
    try:
        s = socket.create_connection(("127.0.0.1", a.port), timeout=5)
        time.sleep(random.uniform(0, a.wait_ms / 1000.0))
        s.sendall(f"GET {a.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
    except OSError:
        data = None
    if data is None:
        out["errors"] += 1
    elif data.startswith(b"HTTP/1."):
        out["answered"] += 1
        st = data.split(b" ", 2)[1].decode()
        out["statuses"][st] = out["statuses"].get(st, 0) + 1
    else:
        out["empty"] += 1
print(json.dumps(out))
