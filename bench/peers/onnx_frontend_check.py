#!/usr/bin/env python3
"""Checks encc's ONNX frontend on real exports against ONNX Runtime on the same files.

For each ONNX file: `encc compile FILE` (the tokenizer and pooling from --model-dir), then
the last hidden state of a right-padded batch of the 64 reference sentences' ids
(tests/reference/minilm_embeddings.json) from `encc run --format json` and from ONNX Runtime
(CPU, default optimisations) on the same file, and the embeddings of the same artifact vs the
artifact compiled from the Hugging Face folder (`encc embed --format json`).

  python onnx_frontend_check.py --encc build/bin/encc --model-dir MINILM FILE.onnx...
Needs numpy and onnxruntime (any venv with them)."""
import argparse
import json
import os
import subprocess
import tempfile

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))


def encc_json(encc, *args):
    out = subprocess.run([encc, *args, "--format", "json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--encc", required=True)
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--batch", type=int, default=16, help="sentences per batch (of the 64)")
    ap.add_argument("onnx", nargs="+")
    a = ap.parse_args()
    ref = json.load(open(os.path.join(HERE, "..", "..", "tests", "reference", "minilm_embeddings.json")))
    sentences = ref["sentences"][:a.batch]
    seqs = [s["ids"] for s in sentences]
    texts = [s["text"] for s in sentences]
    seq = max(map(len, seqs))
    ids = np.zeros((len(seqs), seq), np.int64)
    mask = np.zeros_like(ids)
    for b, s in enumerate(seqs):
        ids[b, :len(s)] = s
        mask[b, :len(s)] = 1
    with tempfile.TemporaryDirectory() as tmp:
        hf = os.path.join(tmp, "hf.encm")
        subprocess.run([a.encc, "compile", a.model_dir, "-o", hf, "-q"], check=True)
        hf_emb = np.array(encc_json(a.encc, "embed", hf, *texts)["embeddings"], np.float64)
        for path in a.onnx:
            art = os.path.join(tmp, "onnx.encm")
            subprocess.run([a.encc, "compile", path, "--tokenizer", a.model_dir, "-o", art, "-q"], check=True)
            run_args = ["run", art]
            for s in seqs:
                run_args += ["--ids", " ".join(map(str, s))]
            got = encc_json(a.encc, *run_args)["hidden"]
            sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            names = [i.name for i in sess.get_inputs()]
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            want = sess.run(["last_hidden_state"], {k: v for k, v in feeds.items() if k in names})[0]
            g = np.concatenate([np.array(got[b], np.float64)[:len(s)] for b, s in enumerate(seqs)])
            w = np.concatenate([want[b, :len(s)].astype(np.float64) for b, s in enumerate(seqs)])
            rel = np.abs(g - w).max() / np.abs(w).max()
            emb = np.array(encc_json(a.encc, "embed", art, *texts)["embeddings"], np.float64)
            cos = (emb * hf_emb).sum(1) / np.linalg.norm(emb, axis=1) / np.linalg.norm(hf_emb, axis=1)
            print(f"{os.path.basename(path)}: hidden vs ONNX Runtime max|err|/max|ref| {rel:.2e}; "
                  f"embeddings vs the HF folder's artifact: min cosine 1 - {1 - cos.min():.1e}, "
                  f"max |diff| {np.abs(emb - hf_emb).max():.1e}")


if __name__ == "__main__":
    main()
