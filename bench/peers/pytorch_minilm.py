"""Times all-MiniLM-L6-v2 in PyTorch (fp32, eager, transformers BertModel) on the
shapes encc_bench uses: batch 1 and 8 of full-length sequences of 128 tokens.

usage: python pytorch_minilm.py MODEL_DIR [--threads N] [--runs N]
Needs torch + transformers (e.g. Debian's python3-torch and transformers from PyPI).
"""
import argparse
import statistics
import time

import torch
from transformers import BertModel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model = BertModel.from_pretrained(args.model_dir).eval()
    print(f"torch {torch.__version__}, {args.threads} threads, median of {args.runs} runs")
    for batch, seq in [(1, 128), (8, 128)]:
        # The same ids as bench/e2e_bench.cpp.
        ids = [[1000 + ((b * seq + i) * 7919) % 20000 for i in range(seq)] for b in range(batch)]
        for row in ids:
            row[0], row[-1] = 101, 102
        ids = torch.tensor(ids)
        mask = torch.ones_like(ids)
        with torch.inference_mode():
            for _ in range(3):
                model(input_ids=ids, attention_mask=mask)
            times = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                model(input_ids=ids, attention_mask=mask)
                times.append((time.perf_counter() - t0) * 1e3)
        print(f"pytorch batch {batch} seq {seq}: median {statistics.median(times):.2f} ms "
              f"(min {min(times):.2f}, max {max(times):.2f})")


if __name__ == "__main__":
    main()
