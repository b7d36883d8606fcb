"""Times all-MiniLM-L6-v2 in ONNX Runtime (fp32, CPU) on the shapes encc_bench uses.

usage: python onnxruntime_minilm.py MODEL_DIR [--threads N] [--runs N] [--onnx FILE]
Exports MODEL_DIR to ONNX once with torch + transformers (cached in --onnx), then
runs it with onnxruntime (graph optimisations: all) on batch 1 and 8 of
full-length 128-token sequences with the same ids as bench/e2e_bench.cpp.
"""
import argparse
import os
import statistics
import time

import numpy as np
import onnxruntime as ort


def export(model_dir, path):
    import torch
    from transformers import BertModel

    model = BertModel.from_pretrained(model_dir).eval()
    ids = torch.ones(2, 16, dtype=torch.long)
    torch.onnx.export(
        model, (ids, torch.ones_like(ids)), path,
        input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
        dynamic_axes={"input_ids": {0: "b", 1: "s"}, "attention_mask": {0: "b", 1: "s"},
                      "last_hidden_state": {0: "b", 1: "s"}},
        opset_version=14)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--onnx", default=os.path.expanduser("~/.cache/encc/peers/all-MiniLM-L6-v2.onnx"))
    args = ap.parse_args()
    if not os.path.exists(args.onnx):
        os.makedirs(os.path.dirname(args.onnx), exist_ok=True)
        export(args.model_dir, args.onnx)
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(args.onnx, so, providers=["CPUExecutionProvider"])
    print(f"onnxruntime {ort.__version__}, {args.threads} threads, median of {args.runs} runs")
    for batch, seq in [(1, 128), (8, 128)]:
        ids = np.array([[1000 + ((b * seq + i) * 7919) % 20000 for i in range(seq)] for b in range(batch)],
                       dtype=np.int64)
        ids[:, 0], ids[:, -1] = 101, 102
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        names = {i.name for i in sess.get_inputs()}
        feeds = {k: v for k, v in feeds.items() if k in names}
        for _ in range(3):
            sess.run(None, feeds)
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            sess.run(None, feeds)
            times.append((time.perf_counter() - t0) * 1e3)
        print(f"onnxruntime batch {batch} seq {seq}: median {statistics.median(times):.2f} ms "
              f"(min {min(times):.2f}, max {max(times):.2f})")


if __name__ == "__main__":
    main()
