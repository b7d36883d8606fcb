"""Value checks on encc's JSON outputs (tests/lit/cli/values.test).

  check_outputs.py same RUN_A.json RUN_B.json [TOL]      hidden and pooled agree within TOL
  check_outputs.py cosine EMBED.json                     cosine matrix from the embeddings
  check_outputs.py pooled RUN.json MODE NORMALIZED       pooled = MODE pooling of hidden
Exits non-zero with a message naming the first difference; NaN never passes.
"""
import json
import math
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def flat(x):
    if isinstance(x, list):
        for y in x:
            yield from flat(y)
    else:
        yield x


def close(a, b, tol, what):
    a, b = list(flat(a)), list(flat(b))
    if len(a) != len(b):
        sys.exit(f"{what}: {len(a)} vs {len(b)} values")
    for i, (x, y) in enumerate(zip(a, b)):
        if not (math.isfinite(x) and math.isfinite(y)) or abs(x - y) > tol * max(1.0, abs(y)):
            sys.exit(f"{what}: value {i}: {x} vs {y} (tolerance {tol})")


def main():
    cmd = sys.argv[1]
    if cmd == "same":
        a, b = load(sys.argv[2]), load(sys.argv[3])
        tol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-6
        close(a["hidden"], b["hidden"], tol, "hidden")
        close(a.get("pooled", []), b.get("pooled", []), tol, "pooled")
    elif cmd == "cosine":
        d = load(sys.argv[2])
        e = d["embeddings"]
        for i in range(len(e)):
            for j in range(len(e)):
                dot = sum(x * y for x, y in zip(e[i], e[j]))
                n = math.sqrt(sum(x * x for x in e[i]) * sum(y * y for y in e[j]))
                close([d["cosine"][i][j]], [dot / n], 1e-5, f"cosine[{i}][{j}]")
        if len(e) > 1 and abs(d["cosine"][0][1]) > 0.9999:
            sys.exit("cosine[0][1] is 1: different texts gave the same embedding")
    elif cmd == "pooled":
        d, mode, normalized = load(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
        for b, length in enumerate(d["lengths"]):
            rows = d["hidden"][b][:length]
            want = rows[0] if mode == "cls" else [sum(c) / length for c in zip(*rows)]
            if normalized:
                n = math.sqrt(sum(x * x for x in want))
                want = [x / n for x in want]
            close(d["pooled"][b], want, 1e-5, f"pooled[{b}] ({mode})")
            norm = math.sqrt(sum(x * x for x in d["pooled"][b]))
            if normalized != (abs(norm - 1) < 1e-4):
                sys.exit(f"pooled[{b}] has norm {norm}, normalized={normalized}")
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
