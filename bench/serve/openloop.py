"""Open-loop load: requests sent at a fixed rate whatever the answers (wrk keeps
one request per connection in flight, so a slow server slows its own load and
is never overloaded). Standard library only.

  python3 openloop.py --port 8080 --rate 1200 --seconds 60 [--sentences FILE]
      [--max-connections 2048] [--timeout 10]

Each request is one text (TEI /embed, truncate on) on a keep-alive connection
from a pool (a new connection when all are busy, up to --max-connections; past
that a request is counted as "not sent"). Prints one JSON line: sent, answers
by status, socket errors, timeouts, not sent, and p50/p99 latency of the 200s.
"""
import argparse
import asyncio
import json
import random
import time


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--rate", type=float, required=True)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--sentences", default="bench/serve/sentences.txt")
    p.add_argument("--max-connections", type=int, default=2048)
    p.add_argument("--timeout", type=float, default=10)
    a = p.parse_args()

    lines = [l.rstrip("\n") for l in open(a.sentences) if l.strip()]
    bodies = [json.dumps({"inputs": l, "truncate": True}).encode() for l in lines]
    requests = [b"POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(b)).encode() + b"\r\n\r\n" + b for b in bodies]
    idle, opened = [], 0
    statuses, latencies = {}, []
    errors = timeouts = not_sent = sent = 0
    rng = random.Random(1)

    async def one(req):
        nonlocal opened, errors, timeouts
        # A reused keep-alive connection the server has closed fails before
        # any answer: then the request goes once more on a new connection (as
        # HTTP clients do for a stale connection).
        for attempt in range(2):
            conn = idle.pop() if idle and attempt == 0 else None
            reused = conn is not None
            if conn is None:
                opened += 1
                try:
                    conn = await asyncio.open_connection("127.0.0.1", a.port)
                except OSError:
                    errors += 1
                    opened -= 1
                    return
            reader, writer = conn
            start = time.perf_counter()
            head = b""
            try:
                writer.write(req)
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), a.timeout)
                status = int(head.split(b" ", 2)[1])
                length = 0
                for h in head.split(b"\r\n"):
                    if h.lower().startswith(b"content-length:"):
                        length = int(h.split(b":")[1])
                await asyncio.wait_for(reader.readexactly(length), a.timeout)
                statuses[status] = statuses.get(status, 0) + 1
                if status == 200:
                    latencies.append(time.perf_counter() - start)
                if b"connection: close" in head.lower():
                    writer.close()
                    opened -= 1
                else:
                    idle.append(conn)
                return
            except asyncio.TimeoutError:
                timeouts += 1
                writer.close()
                opened -= 1
                return
            except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
                writer.close()
                opened -= 1
                if reused and not head:
                    continue
                errors += 1
                return

    tasks = set()
    t0 = time.perf_counter()
    n = int(a.rate * a.seconds)
    for i in range(n):
        delay = t0 + i / a.rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        if not idle and opened >= a.max_connections:
            not_sent += 1
            continue
        sent += 1
        t = asyncio.create_task(one(rng.choice(requests)))
        tasks.add(t)
        t.add_done_callback(tasks.discard)
    offered_seconds = time.perf_counter() - t0
    await asyncio.gather(*tasks)
    latencies.sort()
    q = lambda f: 1000 * latencies[min(len(latencies) - 1, int(f * len(latencies)))] if latencies else 0
    print(json.dumps({"rate": a.rate, "seconds": round(offered_seconds, 2), "sent": sent,
                      "statuses": {str(k): v for k, v in sorted(statuses.items())}, "socket_errors": errors,
                      "timeouts": timeouts, "not_sent": not_sent, "connections": opened,
                      "p50_ms": round(q(0.5), 1), "p99_ms": round(q(0.99), 1)}), flush=True)


asyncio.run(main())
