#!/usr/bin/env python3
"""ColBERT query and document encoding: encc artifacts against PyLate's own ColBERT.encode (torch, fp32) on the same
texts, end to end from text (tokenisation included), the same thread count, rounds interleaved (the machine is
shared: compare within a run). Issue 42, item 3.

    PYTHONPATH=ST530 PYTHON bench/peers/colbert_peers.py DIR --artifact fp32.encm --artifact int8.encm ...

DIR: a PyLate ColBERT folder (tests/reference/colbert/check_real_shape.py --make makes colbertv2.0's shape).
PYTHON: torch, pylate 1.6 (ST530: sentence-transformers 5.3.0 by pip --target) and the encc wheel. The texts: words
of a fixed list, documents of 8 to 170 words, queries of 3 to 20; each engine encodes them in batches of 32 (PyLate:
batch_size, encc: Model.encode's). Prints texts/s per engine and role, and each encc artifact's ratio to PyLate.
"""
import argparse
import os
import random
import statistics
import time

import torch

WORDS = ("late interaction retrieval keeps a vector for every token of the document and scores a query by the "
         "best match of each of its vectors which costs more memory than one vector per text but ranks better "
         "on long tail questions where exact terms matter").split()


def texts(n, lo, hi, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi))) + "." for _ in range(n)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--artifact", action="append", default=[])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--docs", type=int, default=64)
    p.add_argument("--queries", type=int, default=128)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    import encc
    from pylate import models
    pylate = models.ColBERT(model_name_or_path=a.dir, device="cpu")
    engines = {"PyLate (torch fp32)": lambda t, q: pylate.encode(t, is_query=q, batch_size=32)}
    for path in a.artifact:
        m = encc.Model(path, threads=a.threads)
        engines[os.path.basename(path)] = (lambda m: lambda t, q: m.encode(t, is_query=q, batch_size=32))(m)
    work = {"documents": (texts(a.docs, 8, 170, 1), False), "queries": (texts(a.queries, 3, 20, 2), True)}
    for fn in engines.values():  # warm-up
        for t, q in work.values():
            fn(t[:8], q)
    times = {(e, w): [] for e in engines for w in work}
    for r in range(a.rounds):
        for w, (t, q) in work.items():
            for e, fn in engines.items():
                t0 = time.perf_counter()
                fn(t, q)
                times[(e, w)].append(time.perf_counter() - t0)
        print(f"round {r + 1}: " + ", ".join(f"{e} {w} {times[(e, w)][-1] * 1e3:.0f} ms" for w in work for e in engines),
              flush=True)
    print(f"\n{a.threads} threads, medians of {a.rounds} rounds:")
    for w, (t, _) in work.items():
        base = statistics.median(times[(next(iter(engines)), w)])
        for e in engines:
            s = statistics.median(times[(e, w)])
            print(f"  {w:<9} {e:<28} {len(t) / s:8.1f} texts/s   vs PyLate: {base / s:.2f}x")


if __name__ == "__main__":
    main()
