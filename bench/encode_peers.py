#!/usr/bin/env python3
"""encode() on 10 000 sentences: encc's Python package against ONNX Runtime run the way a Python
user runs a sentence embedder (the `tokenizers` fast tokenizer through transformers'
AutoTokenizer, an InferenceSession, mean pooling and L2 normalisation in NumPy, batches of 32
sorted by length, as sentence-transformers' encode does), fp32 and int8, in one process with the
same thread count. Every peer encodes the whole corpus once per round, rounds interleaved; prints
the median seconds, sentences/s, encc's speed-up over the ORT peer of the same precision, and each
output's min cosine vs encc fp32's embeddings.

  python bench/encode_peers.py --model-dir all-MiniLM-L6-v2 --onnx minilm.onnx --fp32 minilm.encm \
      [--int8 minilm-int8.encm] [--threads 2] [--rounds 3] [--sentences 10000] [--batch-size 32]

Needs a venv with `pip install ./python onnxruntime transformers` (and torch for ONNX Runtime's
transformer optimiser the first time: compare.py's preparation makes the optimised fp32 and the
quantize_dynamic int8 files next to the .onnx and reuses them). The corpus: the sentences of
tests/reference/sentence-pairs.tsv, 1 to 4 of them joined per text (seeded), so lengths vary
from a few to about 70 tokens.
"""
import argparse
import os
import random
import statistics
import sys
import time

import numpy as np

import encc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
from compare import prepare_onnx  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def corpus(n, seed=0):
    """n texts of 1-4 reference sentences each."""
    sentences = []
    with open(os.path.join(HERE, "..", "tests", "reference", "sentence-pairs.tsv"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            sentences.extend(line.rstrip("\n").split("\t")[1:3])
    rng = random.Random(seed)
    return [" ".join(rng.choice(sentences) for _ in range(1 + i % 4)) for i in range(n)]


class OrtEncoder:
    """ONNX Runtime as a Python user runs a sentence embedder (see the module docstring)."""

    def __init__(self, onnx_path, tokenizer, threads, max_length):
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = tokenizer
        self.max_length = max_length

    def encode(self, texts, batch_size):
        order = np.argsort([-len(t) for t in texts], kind="stable")
        out = None
        for start in range(0, len(texts), batch_size):
            idx = order[start:start + batch_size]
            enc = self.tokenizer([texts[i] for i in idx], padding=True, truncation=True,
                                 max_length=self.max_length, return_tensors="np")
            feed = {k: enc[k].astype(np.int64) for k in ("input_ids", "attention_mask", "token_type_ids")
                    if k in self.inputs and k in enc}
            hidden = self.session.run(None, feed)[0]
            mask = enc["attention_mask"][..., None].astype(np.float32)
            emb = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
            emb /= np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
            if out is None:
                out = np.empty((len(texts), emb.shape[1]), dtype=np.float32)
            out[idx] = emb
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model-dir", required=True, help="the HF folder (tokenizer, config)")
    ap.add_argument("--onnx", required=True, help="its ONNX export (bench/peers/export_onnx.py)")
    ap.add_argument("--fp32", required=True, help="encc artifact, fp32")
    ap.add_argument("--int8", help="encc artifact, --quantize=int8")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sentences", type=int, default=10000)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--max-length", type=int, default=256, help="ORT's truncation (sentence-transformers' "
                    "max_seq_length for all-MiniLM-L6-v2)")
    args = ap.parse_args()

    from transformers import AutoTokenizer
    import onnxruntime

    texts = corpus(args.sentences)
    tokenizer = AutoTokenizer.from_pretrained(args.model_dir, use_fast=True)
    cache, name = os.path.split(os.path.abspath(args.onnx))
    opt_path, q_path, _ = prepare_onnx(args.model_dir, name[:-len(".onnx")], cache,
                                       lambda m: print(m, file=sys.stderr))
    peers = {"encc fp32": encc.Model(args.fp32, threads=args.threads)}
    peers["ORT fp32 (export)"] = OrtEncoder(args.onnx, tokenizer, args.threads, args.max_length)
    peers["ORT fp32 (optimised)"] = OrtEncoder(opt_path, tokenizer, args.threads, args.max_length)
    if args.int8:
        peers["encc int8"] = encc.Model(args.int8, threads=args.threads)
        peers["ORT int8"] = OrtEncoder(q_path, tokenizer, args.threads, args.max_length)
    tokens = sum(len(ids) for ids in tokenizer(texts)["input_ids"])
    print(f"{len(texts)} texts, {tokens} tokens (mean {tokens / len(texts):.1f}), batch size {args.batch_size}, "
          f"threads {args.threads}, {args.rounds} rounds; encc {encc.__version__}"
          f" onnxruntime {onnxruntime.__version__}")

    for p in peers.values():  # warm-up
        p.encode(texts[:256], batch_size=args.batch_size)
    seconds = {label: [] for label in peers}
    outputs = {}
    for _ in range(args.rounds):
        for label, p in peers.items():
            t0 = time.perf_counter()
            outputs[label] = np.asarray(p.encode(texts, batch_size=args.batch_size), dtype=np.float32)
            seconds[label].append(time.perf_counter() - t0)

    ref = outputs["encc fp32"]
    print("| peer | median s | sentences/s | encc speed-up | min cosine vs encc fp32 |")
    print("| --- | --- | --- | --- | --- |")
    for label in peers:
        med = statistics.median(seconds[label])
        encc_peer = "encc int8" if "int8" in label else "encc fp32"
        ratio = "" if label.startswith("encc") else f"{med / statistics.median(seconds[encc_peer]):.2f}x"
        out = outputs[label]
        cos = np.sum(out * ref, axis=1) / (np.linalg.norm(out, axis=1) * np.linalg.norm(ref, axis=1))
        print(f"| {label} | {med:.2f} | {len(texts) / med:.0f} | {ratio} | {cos.min():.5f} |")


if __name__ == "__main__":
    main()
