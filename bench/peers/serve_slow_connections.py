#!/usr/bin/env python3
"""A normal request's latency on an idle encc-serve, then beside N slow connections (issue 38, slowloris).

    python3 bench/peers/serve_slow_connections.py PORT [N=2000] [SECONDS=30]

PORT: a running encc-serve on 127.0.0.1. N connections each send half a request head and then one
header line every 2 s (a slow client); one the server closes (its header time is up) is opened again,
so that N are held for SECONDS. Meanwhile one client sends POST /embed (one short text) on a fresh
connection, one after another. Prints the idle and loaded latencies (median, p99), their ratio, and
how the slow connections fared. Standard library only.
"""
import http.client
import json
import resource
import selectors
import socket
import statistics
import sys
import threading
import time

port = int(sys.argv[1])
count = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 30.0

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 1024), hard))

body = json.dumps({"inputs": "a man is riding a horse in the park"})


def one_request():
    t0 = time.perf_counter()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        c.request("POST", "/embed", body=body, headers={"Content-Type": "application/json"})
        r = c.getresponse()
        r.read()
        status = r.status
    except OSError as e:
        status = type(e).__name__
    finally:
        c.close()
    return time.perf_counter() - t0, status


def latencies(duration, until=None):
    out, failures = [], {}
    end = time.time() + duration
    while time.time() < end and (until is None or not until.is_set()):
        s, status = one_request()
        if status == 200:
            out.append(s)
        else:
            failures[status] = failures.get(status, 0) + 1
    return out, failures


def summary(xs):
    xs = sorted(xs) or [float("nan")]
    return statistics.median(xs), xs[min(len(xs) - 1, int(0.99 * len(xs)))]


stats = {"opened": 0, "refused_or_closed": 0, "answers": {}}
stop = threading.Event()
held = threading.Event()


def slow_clients():
    sel = selectors.DefaultSelector()
    conns = {}

    def open_one():
        s = socket.socket()
        s.setblocking(True)
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(b"POST /embed HTTP/1.1\r\nHost: x\r\n")
        except OSError:
            s.close()
            stats["refused_or_closed"] += 1
            return
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        conns[s] = time.time()
        stats["opened"] += 1

    for _ in range(count):
        open_one()
    held.set()
    next_trickle = time.time() + 2
    while not stop.is_set():
        for key, _ in sel.select(timeout=0.2):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if data:
                code = data.split(b" ", 2)[1].decode(errors="replace") if data.startswith(b"HTTP/") else "?"
                stats["answers"][code] = stats["answers"].get(code, 0) + 1
            sel.unregister(s)
            s.close()
            del conns[s]
            stats["refused_or_closed"] += 1
            open_one()
        if time.time() >= next_trickle:
            next_trickle = time.time() + 2
            for s in list(conns):
                try:
                    s.send(b"X-Slow: 1\r\n")
                except OSError:
                    pass
    for s in list(conns):
        s.close()


one_request()  # warm
idle, idle_failed = latencies(10)
t = threading.Thread(target=slow_clients)
t.start()
held.wait()
t_loaded = time.time()
loaded, loaded_failed = latencies(seconds)
stop.set()
t.join()
mi, pi = summary(idle)
ml, pl = summary(loaded)
print(f"idle:   {len(idle)} requests, median {mi*1e3:.2f} ms, p99 {pi*1e3:.2f} ms, failed {idle_failed}")
print(f"loaded: {len(loaded)} requests beside {count} slow connections for {time.time()-t_loaded:.0f} s, "
      f"median {ml*1e3:.2f} ms, p99 {pl*1e3:.2f} ms, failed {loaded_failed}")
print(f"ratio loaded/idle: median {ml/mi:.2f}, p99 {pl/pi:.2f}")
print(f"slow connections: opened {stats['opened']}, closed by the server or refused {stats['refused_or_closed']}, "
      f"answers to them {stats['answers']}")
