#!/usr/bin/env python3
"""A/B of encc artifacts in interleaved rounds (this project's machines are shared and noisy: only numbers
taken side by side compare). Per round, thread count and shape, every artifact runs `encc run ART --runs N`
(roofline.py's full-length ids, clamped into each artifact's vocabulary), the order reversed every other round;
prints per artifact the median of the rounds' medians, its speed against the first artifact, and each round's
median.

    python3 bench/kernel_ab/artifact_ab.py --rounds 6 --runs 30 --threads 2,1 --shapes 1x8,1x16 OLD.encm NEW.encm
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from roofline import full_length_ids  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("artifacts", nargs="+", help="the first is the baseline of the ratios")
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    ap.add_argument("--encc", default=os.path.normpath(os.path.join(root, "build", "bin", "encc")))
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--runs", type=int, default=20, help="timed runs per artifact, shape and round")
    ap.add_argument("--threads", default="2", help="comma-separated thread counts")
    ap.add_argument("--shapes", default="1x16,1x128", help="comma-separated BATCHxSEQ (every sequence full length)")
    args = ap.parse_args()
    if not os.access(args.encc, os.X_OK):
        sys.exit(f"artifact_ab: no encc at {args.encc} (build first, or --encc PATH)")
    vocab = {}
    for art in args.artifacts:
        out = subprocess.run([args.encc, "inspect", art, "--format=json"], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"artifact_ab: {out.stderr.strip()}")
        vocab[art] = json.loads(out.stdout)["metadata"]["vocab_size"]
    res = {}
    for r in range(args.rounds):
        for t in args.threads.split(","):
            for shape in args.shapes.split(","):
                batch, seq = (int(v) for v in shape.split("x"))
                if batch < 1 or seq < 2:
                    sys.exit(f"artifact_ab: bad shape {shape!r} (BATCHxSEQ, SEQ >= 2)")
                for art in args.artifacts if r % 2 == 0 else args.artifacts[::-1]:
                    cmd = [args.encc, "run", art, "--threads", t, "--runs", str(args.runs)]
                    for _ in range(batch):
                        cmd += ["--ids", full_length_ids(seq, vocab[art])]
                    out = subprocess.run(cmd, capture_output=True, text=True)
                    m = re.search(r"\(([0-9.]+) ms: median", out.stdout)
                    if not m:
                        sys.exit(f"artifact_ab: {' '.join(cmd[:3])} failed:\n{out.stderr}")
                    res.setdefault((t, shape), {}).setdefault(art, []).append(float(m.group(1)))
    for (t, shape), per in res.items():
        base = statistics.median(per[args.artifacts[0]])
        print(f"threads {t}, {shape}:")
        for art, v in per.items():
            med = statistics.median(v)
            ratio = f"{base / med:5.3f}x" if med > 0 else "    -"  # below encc run's 0.01 ms resolution
            print(f"  {art:40s} {med:9.3f} ms  {ratio}  [{' '.join(f'{x:.2f}' for x in v)}]")


if __name__ == "__main__":
    main()
