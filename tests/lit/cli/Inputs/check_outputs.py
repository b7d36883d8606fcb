"""Value checks on encc's JSON outputs (tests/lit/cli/values.test).

  check_outputs.py same RUN_A.json RUN_B.json [TOL]      hidden and pooled agree within TOL
  check_outputs.py cosine EMBED.json                     cosine matrix from the embeddings
  check_outputs.py pooled RUN.json MODE NORMALIZED       pooled = MODE pooling of hidden
  check_outputs.py report REPORT.json BATCH SEQ INT8     report.json's schema and numbers
  check_outputs.py texts EXPECTED.json OUT.txt          write the texts `encc tokenize --file` can take
  check_outputs.py tokenize OUT.json EXPECTED.json MAXLEN
                                                        encc tokenize ids = the recorded ones, truncated
  check_outputs.py pairtexts EXPECTED.json KEY STRATEGY MAXLEN OUT.txt
                                                        the recorded pairs (a line each) the library cut
  check_outputs.py pairs OUT.json EXPECTED.json KEY STRATEGY MAXLEN
                                                        encc tokenize --pair = the recorded ids, type ids
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


REPORT_KEYS = {"model": str, "batch": int, "seq": int, "lengths": list, "runs": int, "threads": int,
               "cpu": str, "rows": list}
ROW_KEYS = {"name": str, "cpu_target": str, "median_ms": float, "p10_ms": float, "p90_ms": float,
            "speedup_vs_baseline": float, "speedup_vs_previous": float, "max_abs_error": float,
            "mean_cosine": float, "nonfinite_outputs": int, "ops": int, "kernel_launches": int,
            "arena_bytes": int, "weight_bytes": int, "artifact_bytes": int}


def check_keys(obj, keys, what):
    if set(obj) != set(keys):
        sys.exit(f"{what}: keys {sorted(obj)}, expected {sorted(keys)}")
    for k, t in keys.items():
        v = obj[k]
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) if t is float else \
            isinstance(v, t) and not isinstance(v, bool)
        if not ok or (t is float and not math.isfinite(v)):
            sys.exit(f"{what}: {k} = {v!r} is not a finite {t.__name__}")


def check_report(d, batch, seq, int8):
    """Schema (every key, its type), then the numbers: the baseline is exact,
    each fp32 row within 1e-5 of it (mean token cosine >= 0.999999), the int8
    row measurably different but close, timings ordered and the speedups the
    ratios of the medians."""
    check_keys(d, REPORT_KEYS, "report")
    if d["batch"] != batch or d["seq"] != seq or len(d["lengths"]) != batch:
        sys.exit(f"report: batch {d['batch']} seq {d['seq']} lengths {d['lengths']}, expected {batch} x {seq}")
    if max(d["lengths"]) != seq or min(d["lengths"]) < 1:
        sys.exit(f"report: lengths {d['lengths']} should span 1..{seq} and reach {seq}")
    rows = d["rows"]
    if not rows or rows[0]["name"] != "baseline (unfused)":
        sys.exit("report: the first row must be the baseline")
    if rows[-1]["name"].startswith("+quantize-linear-int8") != int8:
        sys.exit(f"report: last row {rows[-1]['name']!r}, int8 row expected: {int8}")
    base = rows[0]
    for i, r in enumerate(rows):
        what = f"row {i} ({r.get('name')})"
        check_keys(r, ROW_KEYS, what)
        if r["nonfinite_outputs"] != 0:
            sys.exit(f"{what}: {r['nonfinite_outputs']} non-finite outputs")
        if not 0 < r["p10_ms"] <= r["median_ms"] <= r["p90_ms"]:
            sys.exit(f"{what}: p10 {r['p10_ms']} median {r['median_ms']} p90 {r['p90_ms']} not ordered")
        prev = rows[i - 1] if i else r
        close([r["speedup_vs_baseline"], r["speedup_vs_previous"]],
              [base["median_ms"] / r["median_ms"], prev["median_ms"] / r["median_ms"]], 1e-9, f"{what}: speedups")
        if not 1 <= r["kernel_launches"] <= r["ops"]:
            sys.exit(f"{what}: {r['kernel_launches']} launches for {r['ops']} ops")
        if not 0 < r["weight_bytes"] < r["artifact_bytes"] or r["arena_bytes"] <= 0:
            sys.exit(f"{what}: weight {r['weight_bytes']}, artifact {r['artifact_bytes']}, arena {r['arena_bytes']} bytes")
        quantized = int8 and i == len(rows) - 1
        if i == 0:
            if r["max_abs_error"] != 0 or abs(r["mean_cosine"] - 1) > 1e-12:
                sys.exit(f"{what}: error {r['max_abs_error']} cosine {r['mean_cosine']} against itself")
        elif quantized:
            if not (1e-6 < r["max_abs_error"] < 0.1 and 0.999 <= r["mean_cosine"] < 1):
                sys.exit(f"{what}: int8 error {r['max_abs_error']} cosine {r['mean_cosine']} outside (1e-6, 0.1) / [0.999, 1)")
            if not r["weight_bytes"] < base["weight_bytes"] / 2:
                sys.exit(f"{what}: int8 weights {r['weight_bytes']} bytes, fp32 {base['weight_bytes']}")
        elif not (r["max_abs_error"] <= 1e-5 and r["mean_cosine"] >= 0.999999):
            sys.exit(f"{what}: fp32 error {r['max_abs_error']} cosine {r['mean_cosine']} (gates 1e-5, 0.999999)")
    fused = rows[-2] if int8 else rows[-1]
    if any(r["name"] == "+fuse-attention" for r in rows) and not fused["kernel_launches"] < base["kernel_launches"]:
        sys.exit(f"report: fused launches {fused['kernel_launches']} not below the baseline's {base['kernel_launches']}")


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
    elif cmd in ("pairtexts", "pairs"):
        exp_path, key, strategy, max_len = (sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])) \
            if cmd == "pairtexts" else (sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]))
        cases = [e for e in load(exp_path)["pairs"] if e["strategy"] == strategy and e["max_len"] == max_len
                 and "error" not in e[key] and all(t and "\n" not in t for t in (e["a"], e["b"]))]
        if cmd == "pairtexts":
            with open(sys.argv[6], "w", encoding="utf-8", newline="") as f:
                f.write("".join(e["a"] + "\n" + e["b"] + "\n" for e in cases))
        else:
            got = load(sys.argv[2])
            if len(got["ids"]) != len(cases) or not cases:
                sys.exit(f"pairs: {len(got['ids'])} results for {len(cases)} recorded pairs")
            for e, ids, types in zip(cases, got["ids"], got["type_ids"]):
                if ids != e[key]["ids"] or types != e[key]["type_ids"]:
                    sys.exit(f"{e['a']!r} / {e['b']!r}: encc {ids} {types}, tokenizers {e[key]}")
            print(f"{len(cases)} pairs match")
    elif cmd == "texts":
        # One per line: no newlines, not empty (--file skips empty lines).
        texts = [t for t in load(sys.argv[2])["texts"] if t and "\n" not in t]
        with open(sys.argv[3], "w", encoding="utf-8", newline="") as f:
            f.write("".join(t + "\n" for t in texts))
    elif cmd == "tokenize":
        got, exp, max_len = load(sys.argv[2]), load(sys.argv[3]), int(sys.argv[4])
        want = dict(zip(exp["texts"], exp["tokenizers_files"][0]["ids"]))
        if not got["texts"]:
            sys.exit("no texts")
        for text, ids in zip(got["texts"], got["ids"]):
            full = want[text]
            # RobertaProcessing: <s> pieces </s>, the pieces truncated first.
            expected = full if len(full) <= max_len else full[:max_len - 1] + full[-1:]
            if ids != expected:
                sys.exit(f"{text!r}: encc {ids}, tokenizers {expected}")
        print(f"{len(got['texts'])} texts match")
    elif cmd == "report":
        check_report(load(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1")
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
