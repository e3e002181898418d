#!/usr/bin/env python3
"""Randomised mirror-session changes checked against a model (issue #10, section 1).

    mirror_model.py API TOKEN CONFIG DB STEPS SEED [RESET_EVERY]

Runs STEPS random changes through the REST API of a running appliance (POST /mirrors, PUT
/mirrors/{id}, DELETE /mirrors/{id}, PUT /config with a random set of up to 16 sessions) and, every
RESET_EVERY steps, `./spanbox reset-config CONFIG` (the file's sessions). After every change it
compares the answer with the model's; every 25 steps and at the end it checks:
  live sessions (GET /mirrors) = stored sessions (SQLite config_store, or the file's when no row)
  = the model; no worker restarted (pids and restarts unchanged); the counters of every session
  that existed without a break since the previous check did not go back.
Prints TAP lines (ok / not ok) and comment lines; bounded by STEPS and a 180 s deadline.
"""
import http.client
import json
import os
import random
import sqlite3
import subprocess
import sys
import time

MAX = 16  # SBX_MAX_MIRRORS


def main():
    api, token, cfg_path, db_path, steps, seed = sys.argv[1:7]
    reset_every = int(sys.argv[7]) if len(sys.argv) > 7 else 0
    steps, seed = int(steps), int(seed)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    host, port = api.split("//")[1].split("/")[0].split(":")
    rnd = random.Random(seed)
    conn = http.client.HTTPConnection(host, int(port), timeout=15)
    with open(cfg_path) as f:
        file_doc = json.load(f)
    file_ids = sorted(m["id"] for m in file_doc.get("mirrors", []))
    src = file_doc["ports"][0]["name"]
    dst = file_doc["ports"][2]["name"]

    def call(method, path, body=None):
        nonlocal conn
        h = {"Authorization": "Bearer " + token}
        data = None
        if body is not None:
            data = json.dumps(body)
            h["Content-Type"] = "application/json"
        for attempt in range(2):
            try:
                conn.request(method, "/api/v1" + path, body=data, headers=h)
                r = conn.getresponse()
                raw = r.read()
                return r.status, (json.loads(raw) if raw else None)
            except (http.client.HTTPException, OSError):
                conn.close()
                conn = http.client.HTTPConnection(host, int(port), timeout=15)
                if attempt:
                    raise
        return None, None

    def session(i):
        s = {"id": i, "sources": [{"port": src}], "destination": {"port": dst}}
        if rnd.random() < 0.3:
            s["sample"] = rnd.randint(1, 4)
        return s

    def live():
        st, body = call("GET", "/mirrors")
        return st, {m["id"]: m["counters"]["mirrored_packets"] for m in (body or [])}

    def stored():
        db = sqlite3.connect("file:%s?mode=ro" % db_path, uri=True, timeout=5)
        try:
            row = db.execute("SELECT json FROM config_store WHERE config_path = ? ORDER BY id DESC LIMIT 1",
                             (os.path.realpath(cfg_path),)).fetchone()
        finally:
            db.close()
        if row is None:
            return file_ids
        return sorted(m["id"] for m in json.loads(row[0]).get("mirrors", []))

    def workers():
        st, body = call("GET", "/workers")
        return [(w["id"], w["pid"], w["restarts"], w["state"]) for w in body]

    model = set(live()[1])  # what runs now
    ids = list(range(1, 41)) + [100, 114, 115, 200]  # a small id space: collisions, re-use of ids and counter sets
    w0 = workers()
    print("# workers at start: %s" % w0)
    _, counters = live()
    continuous = set(model)  # sessions that existed without a break since the last check
    bad_answers, bad_checks, counter_back, restarted = [], [], [], []
    t0 = time.monotonic()
    done = 0
    kinds = {}

    def full_check(step):
        nonlocal counters, continuous
        st, now = live()
        s = stored()
        if st != 200 or sorted(now) != sorted(model) or s != sorted(model):
            bad_checks.append("step %d: live %s stored %s model %s" % (step, sorted(now), s, sorted(model)))
        for i in continuous:
            if i in now and i in counters and now[i] < counters[i]:
                counter_back.append("step %d: session %d %d -> %d" % (step, i, counters[i], now[i]))
        w = workers()
        if [(a, b, c) for a, b, c, _ in w] != [(a, b, c) for a, b, c, _ in w0] or any(x[3] != "running" for x in w):
            restarted.append("step %d: %s" % (step, w))
        counters = now
        continuous = set(model)

    for step in range(1, steps + 1):
        if time.monotonic() - t0 > 180:
            break
        r = rnd.random()
        if reset_every and step % reset_every == 0:
            kind = "reset-config"
            p = subprocess.run([os.path.join(root, "spanbox"), "reset-config", cfg_path], capture_output=True,
                               text=True, timeout=60)
            ok = p.returncode == 0
            if ok:
                model = set(file_ids)
            else:
                bad_answers.append("step %d reset-config: rc %d %s" % (step, p.returncode, p.stderr[-300:]))
            continuous &= model
        elif r < 0.35:
            kind = "POST"
            i = rnd.choice(ids)
            st, body = call("POST", "/mirrors", session(i))
            want = 409 if i in model else (422 if len(model) >= MAX else 201)
            if st != want:
                bad_answers.append("step %d POST %d: %s (model %d) %s" % (step, i, st, want, body))
            if st == 201:
                model.add(i)
        elif r < 0.55:
            kind = "DELETE"
            i = rnd.choice(sorted(model)) if model and rnd.random() < 0.8 else rnd.choice(ids)
            st, body = call("DELETE", "/mirrors/%d" % i)
            want = 200 if i in model else 404
            if st != want:
                bad_answers.append("step %d DELETE %d: %s (model %d) %s" % (step, i, st, want, body))
            if st == 200:
                model.discard(i)
                continuous.discard(i)
        elif r < 0.7:
            kind = "PUT /mirrors"
            i = rnd.choice(sorted(model)) if model and rnd.random() < 0.8 else rnd.choice(ids)
            st, body = call("PUT", "/mirrors/%d" % i, session(i))
            want = 200 if i in model else 404
            if st != want:
                bad_answers.append("step %d PUT %d: %s (model %d) %s" % (step, i, st, want, body))
        else:
            kind = "PUT /config"
            # mostly near the limit: kept + removed + added above 16 is what overflowed
            n = rnd.choice([MAX, MAX, MAX - 1, rnd.randint(0, MAX)])
            keep = [i for i in sorted(model) if rnd.random() < 0.5][:n]
            new = keep + rnd.sample([i for i in ids if i not in keep], n - len(keep))
            st0, doc = call("GET", "/config")
            doc["mirrors"] = [session(i) for i in new]
            st, body = call("PUT", "/config", doc)
            if st != 200:
                bad_answers.append("step %d PUT /config %s: %s %s" % (step, sorted(new), st, body))
            else:
                model = set(new)
                continuous &= model
        kinds[kind] = kinds.get(kind, 0) + 1
        done = step
        if step % 25 == 0:
            full_check(step)
    full_check(done)
    elapsed = time.monotonic() - t0
    print("# %d changes in %.1f s (seed %d): %s" % (done, elapsed, seed, kinds))
    for name, lst in (("answers", bad_answers), ("checks", bad_checks), ("counters", counter_back),
                      ("workers", restarted)):
        for line in lst[:10]:
            print("# %s: %s" % (name, line))
    print(("ok" if done == steps else "not ok") + " - random sequence: all %d changes run within 180 s (%d)" % (steps, done))
    print(("ok" if not bad_answers else "not ok") +
          " - every answer is the model's (201/409/422 POST, 200/404 PUT and DELETE, 200 PUT /config): %d differ" %
          len(bad_answers))
    print(("ok" if not bad_checks else "not ok") +
          " - live sessions = stored sessions = the model at every check: %d differ" % len(bad_checks))
    print(("ok" if not counter_back else "not ok") +
          " - counters of kept sessions never go back: %d did" % len(counter_back))
    print(("ok" if not restarted else "not ok") + " - no worker restarted or stopped: %d checks saw one" % len(restarted))


if __name__ == "__main__":
    main()
