#!/usr/bin/env python3
"""N clients each posting 64 texts to encc-serve's /embed R times (issue 38: parallel indexing on the defaults).

    python3 bench/peers/serve_load64.py PORT ROUNDS   (a running encc-serve on 127.0.0.1:PORT)
"""
import collections
import json
import sys
import threading
import time
import urllib.request

port = int(sys.argv[1]); rounds = int(sys.argv[2])
texts = [f"sentence number {i} about a man riding a horse in the park" for i in range(64)]
stats = collections.Counter(); lock = threading.Lock()
def client(k):
    for _ in range(rounds):
        req = urllib.request.Request(f"http://127.0.0.1:{port}/embed", data=json.dumps({"inputs": texts}).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                code = r.status; body = r.read()
        except urllib.error.HTTPError as e:
            code = e.code
        except Exception as e:
            code = type(e).__name__
        with lock: stats[code] += 1
t0 = time.time()
ts = [threading.Thread(target=client, args=(k,)) for k in range(64)]
[t.start() for t in ts]; [t.join() for t in ts]
print(dict(stats), f"{time.time()-t0:.1f} s", f"{64*64*rounds/(time.time()-t0):.0f} texts/s")
