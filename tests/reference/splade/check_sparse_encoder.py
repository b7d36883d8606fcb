#!/usr/bin/env python3
"""encc.SparseEncoder against sentence-transformers' own SparseEncoder on the recorded SPLADE folder, live.

    PYTHON tests/reference/splade/check_sparse_encoder.py ARTIFACT.encm

PYTHON: a venv with torch, sentence-transformers >= 5 and the encc wheel (not ./scripts/test's: the suite's Python
venv has no torch; it checks the dense form against splade.json instead). ARTIFACT: `encc compile
tests/reference/splade/models/bert_mlm -o ARTIFACT.encm`. Compares, for a list, one text and convert_to_tensor=False,
with and without max_active_dims: result types and shapes, values (max |err| / max |ref|, at most 1e-5), the
non-zero counts, the similarity matrices, and decode(top_k=5)'s tokens. Exits 1 on a difference.
"""
import json
import os
import sys

import numpy as np
import torch
from sentence_transformers import SparseEncoder

import encc

here = os.path.dirname(os.path.abspath(__file__))
case = json.load(open(os.path.join(here, "splade.json"), encoding="utf-8"))["cases"][0]
texts = case["texts"]
ref = SparseEncoder(os.path.join(here, case["dir"]), device="cpu")
ours = encc.SparseEncoder(sys.argv[1], threads=2)
failures = []


def check(what, a, b):
    if type(a) is not type(b) or tuple(a.shape) != tuple(b.shape) or a.is_sparse != b.is_sparse:
        failures.append(f"{what}: {type(a).__name__} {tuple(a.shape)} vs {type(b).__name__} {tuple(b.shape)}")
        return
    ad, bd = a.to_dense().numpy(), b.to_dense().numpy()
    err = float(np.abs(ad - bd).max() / max(np.abs(ad).max(), 1e-30))
    nz = (int((ad != 0).sum()), int((bd != 0).sum()))
    print(f"{what}: {tuple(a.shape)}, max relative error {err:.2e}, non-zero {nz[0]} / {nz[1]}")
    if err > 1e-5 or nz[0] != nz[1]:
        failures.append(what)


for kw in ({}, {"max_active_dims": 4}):
    check(f"encode(texts, {kw})", ref.encode(texts, **kw), ours.encode(texts, **kw))
check("encode(one text)", ref.encode(texts[0]), ours.encode(texts[0]))
a, b = ref.encode(texts[:2], convert_to_tensor=False), ours.encode(texts[:2], convert_to_tensor=False)
if not (isinstance(a, list) and isinstance(b, list) and len(a) == len(b) == 2):
    failures.append("convert_to_tensor=False: a list of two")
else:
    for i in range(2):
        check(f"convert_to_tensor=False [{i}]", a[i], b[i])
sa = ref.similarity(ref.encode(texts[:3]), ref.encode(texts[:3]))
sb = ours.similarity(ours.encode(texts[:3]), ours.encode(texts[:3]))
err = float((sa - sb).abs().max() / sa.abs().max())
print(f"similarity: max relative error {err:.2e}")
if err > 1e-5:
    failures.append("similarity")
da, db = ref.decode(ref.encode(texts), top_k=5), ours.decode(ours.encode(texts), top_k=5)
tokens_equal = [[t for t, _ in x] for x in da] == [[t for t, _ in x] for x in db]
weights_err = max(abs(wa - wb) for xa, xb in zip(da, db) for (_, wa), (_, wb) in zip(xa, xb))
print(f"decode(top_k=5): tokens {'equal' if tokens_equal else 'DIFFERENT'}, weights within {weights_err:.1e}")
if not tokens_equal or weights_err > 1e-4:
    failures.append("decode")
print("sentence-transformers", __import__("sentence_transformers").__version__, "torch", torch.__version__)
if failures:
    print("DIFFERENT:", ", ".join(failures))
    sys.exit(1)
print("same")
