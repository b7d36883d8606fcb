#!/usr/bin/env python3
"""SPLADE at BERT-base's shape: encc against ONNX Runtime driven directly (issue 42).

FastEmbed would fetch its SPLADE model from the hub, which is not reachable here; ONNX Runtime runs the same
BertForMaskedLM exported by torch.onnx, and the SPLADE pooling (log(1 + relu(logits)), masked, max over the
tokens) in NumPy after it, as FastEmbed does (the maximum taken first: the same numbers, less work). encc runs its artifact of the same SparseEncoder folder
(`encc run --runs`: the forward pass with the pooling, median latency). Same ids (random, [CLS] ... [SEP]), same
thread count, rounds interleaved (the machine is shared: compare within a round).

    PYTHON bench/peers/splade_peers.py --make DIR            # BERT-base-shaped SparseEncoder folder + model.onnx
    encc compile DIR -o splade.encm [--quantize int8]
    PYTHON bench/peers/splade_peers.py --model DIR --artifact splade.encm [--artifact int8.encm] \
        --encc build/bin/encc --batch 8 --seq 128 --threads 2 --rounds 5

PYTHON: a venv with torch, transformers, sentence-transformers >= 5 and onnxruntime (venv-stb).
"""
import argparse
import os

import numpy as np

from interleaved import add_round_arguments, ort_sessions, run_rounds


def make(d, seed):
    import torch
    import transformers
    from sentence_transformers import SparseEncoder
    from sentence_transformers.sparse_encoder.models import MLMTransformer, SpladePooling
    from transformers import BertConfig, BertForMaskedLM

    os.makedirs(d, exist_ok=True)
    cfg = BertConfig()  # bert-base-uncased's shape: 12 x 768, vocab 30522
    vocab = ["[PAD]"] + [f"[unused{i}]" for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab += [f"w{i}" for i in range(cfg.vocab_size - len(vocab))]
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        f.write("\n".join(vocab) + "\n")
    torch.manual_seed(seed)
    mlm = BertForMaskedLM(cfg).eval()
    hf = os.path.join(d, "hf")
    mlm.save_pretrained(hf)
    transformers.BertTokenizerFast(os.path.join(d, "vocab.txt")).save_pretrained(hf)
    st = SparseEncoder(modules=[MLMTransformer(hf), SpladePooling(pooling_strategy="max")], device="cpu")
    st.save(d)
    ids = torch.ones(2, 16, dtype=torch.long)
    torch.onnx.export(mlm, (ids, torch.ones_like(ids), torch.zeros_like(ids)), os.path.join(d, "model.onnx"),
                      input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                      dynamic_axes={n: {0: "batch", 1: "seq"} for n in ["input_ids", "attention_mask",
                                                                        "token_type_ids", "logits"]},
                      opset_version=17, dynamo=False)
    print(f"wrote {d} (SparseEncoder folder) and {d}/model.onnx")


def batch(b, s, seed):
    rng = np.random.default_rng(seed)
    ids = rng.integers(1000, 30000, size=(b, s), dtype=np.int64)
    ids[:, 0], ids[:, -1] = 101, 102
    return ids


def ort_splade(sess, ids):
    mask = np.ones_like(ids)
    logits = sess.run(["logits"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    # log(1 + relu) is monotonic: the masked maximum first, then the function on [B, V] (cheaper than
    # FastEmbed's order, the same numbers), so that ONNX Runtime is timed on its session essentially.
    masked = np.where(mask[:, :, None] > 0, logits, -np.inf)
    return np.log1p(np.maximum(masked.max(axis=1), 0.0))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--make", help="write a BERT-base-shaped SparseEncoder folder and its ONNX export here")
    ap.add_argument("--seed", type=int, default=3)
    add_round_arguments(ap, runs=5)
    a = ap.parse_args()
    if a.make:
        return make(a.make, a.seed)
    sessions = ort_sessions(a, os.path.join(a.model, "model.onnx"), os.path.join(a.model, "model-int8.onnx"))
    run_rounds(sessions, ort_splade, a, batch(a.batch, a.seq, a.seed))


if __name__ == "__main__":
    main()
