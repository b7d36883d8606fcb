#!/usr/bin/env python3
"""PyTorch (transformers' AutoModel, eager, on the CPU) against encc artifacts of the same folder, interleaved in one
process: the last hidden state of fixed-shape batches.

    PYTHON bench/peers/torch_peer.py --model-dir DIR --encc LABEL=ART.encm [--encc ...] [--dtype bf16|fp32]
        [--shapes b1_s512,b16_s128] [--threads 2] [--rounds 3] [--runs 2] [--warmup 1]

PYTHON: a venv with torch 2.x, transformers and the encc wheel. torch runs `torch.set_num_threads(threads)` and
`torch.inference_mode()` with the model in --dtype (bf16: torch.bfloat16, its oneDNN/AMX matmuls on CPUs that have
them); encc runs each artifact with `threads` runtime threads through encc.Model.run. Ids: every sequence full
(`(i * 7919) % 20000 + 1000`), the same for every engine. Per round each engine runs `warmup` untimed and `runs` timed
batches per shape; the table is the median of all timed runs, in ms, with each engine's min token cosine against the
first encc artifact (the reference) on the last batch.
"""
import argparse
import statistics
import time

import numpy as np
import torch
from transformers import AutoModel

import encc


def ids_for(batch, seq):
    return (np.arange(batch * seq, dtype=np.int64).reshape(batch, seq) * 7919) % 20000 + 1000


def min_token_cosine(a, b):
    a = a.reshape(-1, a.shape[-1]).astype(np.float64)
    b = b.reshape(-1, b.shape[-1]).astype(np.float64)
    return float(np.min((a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-30)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--encc", action="append", required=True, metavar="LABEL=PATH")
    ap.add_argument("--dtype", choices=["bf16", "fp32"], default="bf16")
    ap.add_argument("--shapes", default="b1_s512,b16_s128")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=1)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    model = AutoModel.from_pretrained(args.model_dir, dtype=dtype, attn_implementation="eager").eval()
    engines = {}
    for spec in args.encc:
        label, path = spec.split("=", 1)
        m = encc.Model(path, threads=args.threads)
        engines[f"encc {label}"] = lambda ids, m=m: m.run(ids.astype(np.int32))
    reference = next(iter(engines))

    def run_torch(ids):
        with torch.inference_mode():
            out = model(input_ids=torch.from_numpy(ids), attention_mask=torch.ones_like(torch.from_numpy(ids)))
        return out.last_hidden_state.float().numpy()

    engines[f"PyTorch {args.dtype}"] = run_torch
    shapes = [(int(s.split("_")[0][1:]), int(s.split("_")[1][1:])) for s in args.shapes.split(",")]
    times = {(e, s): [] for e in engines for s in shapes}
    last = {}
    for _ in range(args.rounds):
        for shape in shapes:
            ids = ids_for(*shape)
            for name, run in engines.items():
                for _ in range(args.warmup):
                    run(ids)
                for _ in range(args.runs):
                    t0 = time.perf_counter()
                    out = run(ids)
                    times[(name, shape)].append((time.perf_counter() - t0) * 1e3)
                last[(name, shape)] = out
    print(f"torch {torch.__version__}, {args.threads} threads, {args.rounds} rounds x {args.runs} runs; "
          f"median ms (min token cosine vs {reference})")
    print("| shape | " + " | ".join(engines) + " |")
    print("| --- |" + " --- |" * len(engines))
    for shape in shapes:
        cells = []
        for name in engines:
            cos = min_token_cosine(last[(name, shape)], last[(reference, shape)])
            cells.append(f"{statistics.median(times[(name, shape)]):.1f} ({cos:.5f})")
        print(f"| {shape[0]} x {shape[1]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
