"""Load benchmark of encc-serve against a peer server, in one run (issue 16).

  python3 bench/serve/load.py --artifact minilm.encm --onnx minilm.onnx \
      --model-dir MODEL_DIR --peer-python VENV/bin/python [--seconds 20]
      [--concurrency 1,16,64,256] [--overload 60] [--soak 600]

Both servers run side by side (idle when not loaded); each concurrency level
loads encc-serve, then the peer (bench/serve/peer_fastapi_ort.py), with wrk
(Debian's `wrk`, bench/serve/embed.lua: one realistic text per request drawn from
bench/serve/sentences.txt, 6..335 tokens, median 37). Prints a Markdown table:
embeddings/s, p50 and p99 latency, and the throughput ratio.
--overload S: an open-loop load (bench/serve/openloop.py: requests at a fixed
rate whatever the answers) at 3x encc-serve's best measured throughput for S
seconds: counts of 200 / 429 / other / socket errors / timeouts, and the
server's own request counters. --soak S: load at 64
connections for S seconds: RSS and p99 over the first and the last 30 s.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def wait_healthy(port, proc, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"server on port {port} exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"server on port {port} did not become healthy")


def wrk(port, connections, seconds, api="tei"):
    env = dict(os.environ, SENTENCES=os.path.join(HERE, "sentences.txt"), API=api)
    threads = 1 if connections == 1 else 2
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s",
                          "-s", os.path.join(HERE, "embed.lua"), f"http://127.0.0.1:{port}"],
                         env=env, capture_output=True, text=True, check=True).stdout
    line = [l for l in out.splitlines() if l.startswith("{")][-1]
    r = json.loads(line)
    r["rate"] = r["ok"] / r["seconds"]
    return r


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def metrics(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("encc_requests_total"):
            name, value = line.rsplit(" ", 1)
            out[name] = int(float(value))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--artifact", required=True)
    p.add_argument("--onnx", required=True)
    p.add_argument("--model-dir", required=True, help="the HF folder (tokenizer.json) for the peer")
    p.add_argument("--peer-python", default=sys.executable, help="a Python with fastapi, uvicorn, onnxruntime, tokenizers")
    p.add_argument("--serve", default=os.path.join(ROOT, "build", "bin", "encc-serve"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seconds", type=int, default=20)
    p.add_argument("--concurrency", default="1,16,64,256")
    p.add_argument("--overload", type=int, default=0)
    p.add_argument("--soak", type=int, default=0)
    p.add_argument("--serve-args", default="", help="extra encc-serve arguments")
    a = p.parse_args()

    encc_port, peer_port = 18080, 18081
    encc = subprocess.Popen([a.serve, a.artifact, "--port", str(encc_port), "--threads", str(a.threads)]
                            + a.serve_args.split(), stdout=subprocess.DEVNULL)
    peer = subprocess.Popen([a.peer_python, os.path.join(HERE, "peer_fastapi_ort.py"), a.onnx, a.model_dir,
                             "--port", str(peer_port), "--threads", str(a.threads)])
    try:
        wait_healthy(encc_port, encc)
        wait_healthy(peer_port, peer)
        for port in (encc_port, peer_port):
            wrk(port, 16, 3)  # warm-up
        levels = [int(c) for c in a.concurrency.split(",")]
        rows = []
        for c in levels:
            e = wrk(encc_port, c, a.seconds)
            q = wrk(peer_port, c, a.seconds)
            rows.append((c, e, q))
            print(json.dumps({"concurrency": c, "encc": e, "peer": q}), flush=True)
        print("\n| connections | encc-serve emb/s | p50 ms | p99 ms | FastAPI+ORT emb/s | p50 ms | p99 ms | encc / peer |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for c, e, q in rows:
            print(f"| {c} | {e['rate']:.0f} | {e['p50_ms']:.1f} | {e['p99_ms']:.1f} | {q['rate']:.0f} | "
                  f"{q['p50_ms']:.1f} | {q['p99_ms']:.1f} | {e['rate'] / max(q['rate'], 1e-9):.2f}x |")
        for c, e, q in rows:
            errs = {k: e[k] for k in ("other", "connect_errors", "read_errors", "write_errors", "timeouts") if e[k]}
            if errs or e["overloaded"]:
                print(f"encc-serve at {c}: {e['overloaded']} overloaded, {errs}")
        sys.stdout.flush()

        if a.overload:
            capacity = max(e["rate"] for _, e, _ in rows)
            before = metrics(encc_port)
            out = subprocess.run([sys.executable, os.path.join(HERE, "openloop.py"), "--port", str(encc_port),
                                  "--rate", str(round(3 * capacity)), "--seconds", str(a.overload),
                                  "--sentences", os.path.join(HERE, "sentences.txt")],
                                 capture_output=True, text=True, check=True).stdout
            time.sleep(1)
            after = metrics(encc_port)
            served = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
            print(f"\noverload: open loop at 3 x {capacity:.0f}/s (encc-serve's best above) for {a.overload} s")
            print(json.dumps({"client": json.loads(out), "server_counts": served}), flush=True)

        if a.soak:
            window = 30
            first = wrk(encc_port, 64, window)
            rss0 = rss_mib(encc.pid)
            middle = a.soak - 2 * window
            if middle > 0:
                wrk(encc_port, 64, middle)
            last = wrk(encc_port, 64, window)
            rss1 = rss_mib(encc.pid)
            print(f"\nsoak {a.soak} s at 64 connections: RSS {rss0:.1f} -> {rss1:.1f} MiB "
                  f"({100 * (rss1 - rss0) / rss0:+.1f} %), p99 {first['p99_ms']:.1f} -> {last['p99_ms']:.1f} ms, "
                  f"{first['rate']:.0f} -> {last['rate']:.0f} emb/s; errors "
                  f"{sum(last[k] for k in ('other', 'connect_errors', 'read_errors', 'write_errors', 'timeouts'))}",
                  flush=True)
    finally:
        for proc in (encc, peer):
            proc.send_signal(signal.SIGTERM)
        for proc in (encc, peer):
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        print(f"encc-serve exit status {encc.returncode}")


if __name__ == "__main__":
    main()
