#!/usr/bin/env python3
"""A ColBERT checkpoint at colbertv2.0's real shape (BERT-base: hidden 768, 12 layers, a 128-wide projection, query
length 32, document length 180) against PyLate's own ColBERT.encode in float64 (issue 42, item 3). Not in the suite:
it needs torch, PyLate and a 440 MB folder.

    PYTHONPATH=ST530 PYTHON tests/reference/colbert/check_real_shape.py --make DIR --tokenizer MINILM_DIR
    encc compile DIR -o fp32.encm; encc compile DIR --quantize int8 -o int8.encm; ... bf16
    PYTHONPATH=ST530 PYTHON tests/reference/colbert/check_real_shape.py DIR fp32.encm [int8.encm bf16.encm]

PYTHON: a venv with torch, transformers, pylate 1.6 (ST530: sentence-transformers 5.3.0, which PyLate pins, installed
with pip --target) and the encc wheel. --make: a random-weight BertModel of bert-base-uncased's config with
bert-base-uncased's WordPiece vocabulary (all-MiniLM-L6-v2's tokenizer files, the same vocabulary), wrapped by
pylate.models.ColBERT (PyLate's defaults: [Q] / [D] added tokens, [MASK] expansion not attended to,
string.punctuation skipped in documents) and saved by PyLate. Prints, per artifact and role, max |err| / max |ref|
and the worst row cosine over the texts, and whether every text has as many vectors as PyLate gives.
"""
import argparse
import os
import shutil

import numpy as np
import torch
import transformers

TEXTS = ["The cat sat on the mat.", "What is ColBERT? Late interaction: a vector per token, scored by MaxSim!",
         "Where do dogs run (and why)?", "x",
         " ".join(["late interaction retrieval keeps a vector for every token of the document"] * 20)]


def make(d, tokenizer):
    from pylate import models
    hf = d + ".hf"
    shutil.rmtree(hf, ignore_errors=True)
    torch.manual_seed(0)
    bert = transformers.BertModel(transformers.BertConfig(), add_pooling_layer=False)
    bert.save_pretrained(hf)
    for f in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(os.path.join(tokenizer, f), hf)
    cb = models.ColBERT(model_name_or_path=hf, embedding_size=128, query_length=32, document_length=180, device="cpu")
    shutil.rmtree(d, ignore_errors=True)
    cb.save(d)
    shutil.rmtree(hf)


def check(d, artifacts):
    import encc
    from pylate import models
    cb = models.ColBERT(model_name_or_path=d, device="cpu")
    cb.to(torch.float64)
    ref = {}
    with torch.no_grad():
        for role, is_query in (("query", True), ("document", False)):
            ref[role] = [e.to(torch.float64).numpy() for e in
                         cb.encode(TEXTS, is_query=is_query, batch_size=8, convert_to_numpy=False)]
    for path in artifacts:
        m = encc.Model(path, threads=2)
        for role in ("query", "document"):
            got = m.encode(TEXTS, is_query=role == "query", batch_size=8)
            err, cos, rows = 0.0, 1.0, True
            for want, g in zip(ref[role], got):
                rows &= want.shape == g.shape
                if want.shape != g.shape:
                    continue
                g = g.astype(np.float64)
                err = max(err, float(np.abs(g - want).max() / np.abs(want).max()))
                c = (g * want).sum(1) / np.maximum(np.linalg.norm(g, axis=1) * np.linalg.norm(want, axis=1), 1e-30)
                cos = min(cos, float(c.min()))
            print(f"{path} ({m.info['precision']}) {'queries' if role == 'query' else 'documents'} ({', '.join(str(len(w)) for w in ref[role])} vectors): "
                  f"max |err| / max |ref| {err:.2e}, worst row cosine {cos:.6f}; "
                  f"vector counts {'as PyLate' if rows else 'DIFFER'}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("artifacts", nargs="*")
    p.add_argument("--make", action="store_true")
    p.add_argument("--tokenizer", help="a folder with bert-base-uncased's tokenizer files (--make)")
    a = p.parse_args()
    if a.make:
        make(a.dir, a.tokenizer)
    else:
        check(a.dir, a.artifacts)


if __name__ == "__main__":
    main()
