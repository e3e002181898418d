#!/usr/bin/env python3
"""api_flood.py: connection exhaustion of the mgmt API, measured (tests/e2e/55b_api_exhaustion.sh).

  api_flood.py --port N --pid MGMT_PID --limit L --high H --share P [--host 127.0.0.1]

Runs these phases against the API on HOST:N and prints one JSON object of what it measured (the
shell test checks it). Every loop is bounded in time and count; every socket is closed at the end.

  A  200 idle connections (connect, send nothing), 200 slow ones (one byte of a request header
     a second), 20 slow bodies (complete headers of a POST, then one byte of its body a second)
     and 20 slow readers (GET --big with a 4 KiB receive buffer, then 1 KiB read a second), all
     from 127.0.0.1; meanwhile a normal client times GET /api/v1/health and /api/v1/status on
     fresh connections (5 s timeout each); then watches when the server closes each kind of
     connection (up to 15 s after they opened).
  B1 20 keep-alive connections of a normal client (127.0.0.1, one request each), then a flood of
     L + 100 idle connections from 127.0.0.2: a fresh GET, and one more request on each of the 20
     keep-alive connections; how many flood connections the server left open.
  B2 two floods of 0.7 L idle connections each, from 127.0.0.2 and 127.0.0.3: the same measures.
  B3 a flood of L + 100 idle connections from 127.0.0.1 itself: a fresh GET from 127.0.0.1.
  C  everything closed: mgmt's open fds back to the count before A (12 s at most: the request
     deadline and a margin), a final GET.

mgmt's open fds (/proc/PID/fd) are counted before A, at the peak of each phase and after C.
"""
import argparse
import errno
import json
import os
import resource
import select
import socket
import sys
import time

SLOW_REQUEST = b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
# complete headers at once, then a body of 1000 bytes one byte a second
SLOW_BODY_HEAD = (b"POST /api/v1/mirrors HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 1000\r\n\r\n")
SLOW_BODY = SLOW_BODY_HEAD + b" " * 1000


def now():
    return time.monotonic()


def fd_count(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


def fd_kinds(pid):
    """What mgmt's fds are: {"socket": n, "/path": n, ...} (for the log when a count is off)."""
    kinds = {}
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                k = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            k = k.split(":")[0] if k.startswith(("socket:", "anon_inode:", "pipe:")) else k
            kinds[k] = kinds.get(k, 0) + 1
    except OSError:
        pass
    return kinds


class Flood:
    """Many client sockets from one source address, opened without blocking."""

    def __init__(self, host, port, src, request=SLOW_REQUEST, head=0):
        """dribble() sends request: its first head bytes at once, then one byte a call."""
        self.host, self.port, self.src = host, port, src
        self.request, self.head = request, head
        self.socks = []       # socket objects, in the order they were opened
        self.t_open = {}      # fileno -> time connect() was called
        self.t_closed = {}    # fileno -> time the server closed it (EOF, reset, broken pipe)
        self.sent = {}        # fileno -> bytes of the request sent
        self.got = {}         # fileno -> bytes read (read_slowly)

    def open(self, n, budget, rcvbuf=0):
        """Start n connects (rcvbuf: SO_RCVBUF, 0 = the default); wait (at most budget s) until
        each has connected or failed. Returns how many connected."""
        pending = {}
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if rcvbuf:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            s.setblocking(False)
            try:
                s.bind((self.src, 0))
                rc = s.connect_ex((self.host, self.port))
            except OSError as e:
                s.close()
                print(f"# {self.src}: socket/connect failed after {len(self.socks)}: {e}", file=sys.stderr)
                break
            self.socks.append(s)
            self.t_open[s.fileno()] = now()
            if rc == 0:
                continue
            if rc != errno.EINPROGRESS:
                self.t_closed[s.fileno()] = now()
                continue
            pending[s.fileno()] = s
        end = now() + budget
        p = select.poll()
        for fd in pending:
            p.register(fd, select.POLLOUT)
        while pending and now() < end:
            for fd, _ in p.poll(max(1, int((end - now()) * 1000))):
                s = pending.pop(fd, None)
                p.unregister(fd)
                if s is not None and s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                    self.t_closed[fd] = now()
        return len(self.socks) - len(pending) - len(self.t_closed)

    def open_count(self):
        return len([s for s in self.socks if s.fileno() not in self.t_closed])

    def watch(self, timeout):
        """Note the sockets the server closed; wait at most timeout s for the first event."""
        p = select.poll()
        live = {s.fileno(): s for s in self.socks if s.fileno() not in self.t_closed}
        for fd in live:
            p.register(fd, select.POLLIN)
        for fd, _ in p.poll(int(timeout * 1000)):
            try:
                data = live[fd].recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                self.t_closed[fd] = now()

    def dribble(self):
        """The next byte of the request (its head at the first call) on every open socket."""
        for s in self.socks:
            fd = s.fileno()
            if fd in self.t_closed:
                continue
            i = self.sent.get(fd, 0)
            j = max(i + 1, self.head) if i < len(self.request) else i
            try:
                if j > i:
                    self.sent[fd] = i + s.send(self.request[i:j])
            except BlockingIOError:
                pass
            except OSError:
                self.t_closed[fd] = now()

    def read_slowly(self, n):
        """Read at most n bytes from every open socket (a client that reads slowly); a socket
        whose server closed it is noted. Returns the bytes read in all."""
        total = 0
        for s in self.socks:
            fd = s.fileno()
            if fd in self.t_closed:
                continue
            try:
                data = s.recv(n)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                self.t_closed[fd] = now()
            self.got[fd] = self.got.get(fd, 0) + len(data)
            total += len(data)
        return total

    def closed_after(self):
        """Seconds from open to the server's close, for every socket the server closed."""
        return [self.t_closed[fd] - self.t_open[fd] for fd in self.t_closed if fd in self.t_open]

    def close(self):
        for s in self.socks:
            s.close()
        self.socks = []


def read_response(s, deadline):
    """One HTTP/1.1 response from s (Content-Length bodies). (status, body) or (None, reason)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        if now() >= deadline:
            return None, "timeout (headers)"
        s.settimeout(max(0.01, deadline - now()))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return None, "timeout (headers)"
        except OSError as e:
            return None, str(e)
        if not chunk:
            return None, "closed before an answer"
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == "content-length":
            length = int(v.strip())
    while len(body) < length:
        if now() >= deadline:
            return None, "timeout (body)"
        s.settimeout(max(0.01, deadline - now()))
        try:
            chunk = s.recv(65536)
        except (socket.timeout, OSError) as e:
            return None, f"body: {e}"
        if not chunk:
            return None, "closed in the body"
        body += chunk
    return status, body[:length]


def request(s, path, deadline, close):
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: {'close' if close else 'keep-alive'}\r\n\r\n".encode())
    return read_response(s, deadline)


def timed_get(host, port, path, src="127.0.0.1", timeout=5.0):
    """GET path on a fresh connection: {path, status, ms, json, error}."""
    t0 = now()
    res = {"path": path, "status": None, "json": False, "error": None}
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.settimeout(timeout)
        s.bind((src, 0))
        s.connect((host, port))
        status, body = request(s, path, t0 + timeout, True)
        res["status"] = status
        if status is None:
            res["error"] = body
        else:
            try:
                res["json"] = isinstance(json.loads(body), dict)
            except ValueError:
                pass
    except OSError as e:
        res["error"] = str(e)
    finally:
        s.close()
    res["ms"] = round((now() - t0) * 1000, 1)
    return res


class KeepAlive:
    """n keep-alive connections of a normal client, each with one request answered."""

    def __init__(self, host, port, n):
        self.socks = []
        for _ in range(n):
            s = socket.create_connection((host, port), timeout=5)
            status, _ = request(s, "/api/v1/health", now() + 5, False)
            if status == 200:
                self.socks.append(s)
            else:
                s.close()

    def again(self):
        """One more GET on each; the number answered 200 within 2 s."""
        ok = 0
        for s in self.socks:
            try:
                status, _ = request(s, "/api/v1/health", now() + 2, False)
            except OSError:
                status = None
            ok += status == 200
        return ok

    def close(self):
        for s in self.socks:
            s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--limit", type=int, required=True)
    ap.add_argument("--high", type=int, required=True)
    ap.add_argument("--share", type=int, required=True)
    ap.add_argument("--big", default="/big.bin", help="a static file far bigger than 1 MB")
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 3 * a.limit + 512
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, want), hard))
    out = {"limit": a.limit, "high": a.high, "share": a.share}
    gets = lambda tag, src="127.0.0.1": [dict(timed_get(a.host, a.port, p, src), phase=tag)
                                         for p in ("/api/v1/health", "/api/v1/status")]
    floods = []
    try:
        timed_get(a.host, a.port, "/api/v1/health")
        time.sleep(0.3)
        out["fds_before"] = fd_count(a.pid)
        out["fds_before_kinds"] = fd_kinds(a.pid)

        # A: 200 idle + 200 slow, 20 slow bodies, 20 slow readers of a big file
        idle, slow = Flood(a.host, a.port, "127.0.0.1"), Flood(a.host, a.port, "127.0.0.1")
        body = Flood(a.host, a.port, "127.0.0.1", SLOW_BODY, len(SLOW_BODY_HEAD))
        big = f"GET {a.big} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        reader = Flood(a.host, a.port, "127.0.0.1", big, len(big))
        floods += [idle, slow, body, reader]
        t_a = now()
        out["a_idle_connected"] = idle.open(200, 3)
        out["a_slow_connected"] = slow.open(200, 3)
        out["a_body_connected"] = body.open(20, 3)
        out["a_reader_connected"] = reader.open(20, 3, rcvbuf=4096)
        reader.dribble()  # the whole request at once; then 1 KiB a second is read
        out["a_gets"] = []
        all_ = (idle, slow, body, reader)
        next_byte, next_get, k = now(), t_a + 1.0, 0
        # until the idle, slow and body connections are closed, and the readers read for 12.5 s
        while now() - t_a < 15 and (now() - t_a < 12.5 or any(f.open_count() for f in (idle, slow, body))):
            if now() >= next_byte:
                slow.dribble()
                body.dribble()
                reader.read_slowly(1024)
                next_byte += 1.0
            if k < 3 and now() >= next_get:  # GETs at about 1, 4 and 7 s into the attack
                if k == 0:
                    out["a_fds_peak"] = fd_count(a.pid)
                out["a_gets"] += gets(f"A{k}")
                k += 1
                next_get = t_a + 1.0 + 3 * k
            idle.watch(0.1)
            slow.watch(0.0)
            body.watch(0.0)
        for f, name in ((idle, "idle"), (slow, "slow"), (body, "body")):
            c = f.closed_after()
            out[f"a_{name}_closed"] = len(c)
            out[f"a_{name}_closed_min_s"] = round(min(c), 2) if c else None
            out[f"a_{name}_closed_max_s"] = round(max(c), 2) if c else None
        # the slow readers: mgmt closed them when its fds are back to the count before A (their
        # FIN waits behind what mgmt's socket buffer holds, so the client may not see it yet)
        out["a_reader_started"] = len([n for n in reader.got.values() if n > 0])
        out["a_reader_max_bytes"] = max(reader.got.values(), default=0)
        end = now() + 1
        while now() < end and fd_count(a.pid) > out["fds_before"]:
            time.sleep(0.1)
        out["a_fds_end"] = fd_count(a.pid)
        out["a_end_s"] = round(now() - t_a, 2)
        for f in all_:
            f.close()

        # B1: keep-alive clients, then a flood from another address
        ka = KeepAlive(a.host, a.port, 20)
        out["b_keepalive"] = len(ka.socks)
        f2 = Flood(a.host, a.port, "127.0.0.2")
        floods.append(f2)
        out["b1_flood_connected"] = f2.open(a.limit + 100, 5)
        out["b1_gets"] = gets("B1")
        out["b1_keepalive_ok"] = ka.again()
        f2.watch(0.5)
        f2.watch(0.0)
        out["b1_flood_open"] = f2.open_count()
        out["b1_fds_peak"] = fd_count(a.pid)
        f2.close()
        time.sleep(0.5)

        # B2: two floods from two more addresses, together above the limit
        f2, f3 = Flood(a.host, a.port, "127.0.0.2"), Flood(a.host, a.port, "127.0.0.3")
        floods += [f2, f3]
        n = a.limit * 7 // 10
        out["b2_flood_connected"] = f2.open(n, 5) + f3.open(n, 5)
        out["b2_gets"] = gets("B2")
        out["b2_keepalive_ok"] = ka.again()
        for f in (f2, f3, f2, f3):
            f.watch(0.25)
        out["b2_flood_open"] = f2.open_count() + f3.open_count()
        out["b2_fds_peak"] = fd_count(a.pid)
        f2.close()
        f3.close()
        ka.close()
        time.sleep(0.5)

        # B3: a flood from the normal client's own address
        f1 = Flood(a.host, a.port, "127.0.0.1")
        floods.append(f1)
        out["b3_flood_connected"] = f1.open(a.limit + 100, 5)
        out["b3_gets"] = gets("B3")
        f1.watch(0.5)
        f1.watch(0.0)
        out["b3_flood_open"] = f1.open_count()
        out["b3_fds_peak"] = fd_count(a.pid)
        f1.close()

        # C: all closed. Usually back at once; a connection whose client end never saw the
        # handshake complete (a SYN still unanswered when the flood closed) is only closed by the
        # server's deadline: wait for it, 12 s at most
        t_c = now()
        while now() - t_c < 12 and fd_count(a.pid) > out["fds_before"]:
            time.sleep(0.1)
        out["fds_after"] = fd_count(a.pid)
        out["c_wait_s"] = round(now() - t_c, 2)
        if out["fds_after"] > out["fds_before"]:
            out["fds_after_kinds"] = fd_kinds(a.pid)
        out["c_gets"] = gets("C")
    finally:
        for f in floods:
            f.close()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
