#!/usr/bin/env python3
"""A/B of Google Benchmark binaries (e.g. two builds of qgemm_bench with different kernel headers) in
interleaved rounds, the order reversed every other round; prints per benchmark and binary the median of the
rounds' times, its speed against the first binary, and each round's time.

    python3 bench/kernel_ab/gbench_ab.py --filter 'BM_QLinear<768, 768, true>/M:(128|1024)$' --rounds 6 OLD NEW
"""
import argparse
import json
import statistics
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binaries", nargs="+", help="the first is the baseline of the ratios")
    ap.add_argument("--filter", required=True, help="--benchmark_filter of every binary")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--min-time", default="0.2", help="--benchmark_min_time (seconds)")
    args = ap.parse_args()
    res = {}
    for r in range(args.rounds):
        for b in args.binaries if r % 2 == 0 else args.binaries[::-1]:
            out = subprocess.run([b, f"--benchmark_filter={args.filter}", f"--benchmark_min_time={args.min_time}",
                                  "--benchmark_format=json"], capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"gbench_ab: {b} failed:\n{out.stderr}")
            for bm in json.loads(out.stdout)["benchmarks"]:
                res.setdefault(bm["name"], {}).setdefault(b, []).append((bm["real_time"], bm["time_unit"]))
    for name, per in res.items():
        base = statistics.median(t for t, _ in per[args.binaries[0]])
        print(name)
        for b, v in per.items():
            med = statistics.median(t for t, _ in v)
            print(f"  {b:32s} {med:10.1f} {v[0][1]}  {base / med:5.3f}x  [{' '.join(f'{t:.0f}' for t, _ in v)}]")


if __name__ == "__main__":
    main()
