#!/usr/bin/env python3
"""bge-m3's three outputs at its real shape (XLM-R large: hidden 1024, 24 layers, vocab 250002) against a float64
PyTorch computation of FlagEmbedding's BGEM3 formulas (issue 42). Not in the suite: it needs torch and a 2.3 GB
folder.

    PYTHON bench/peers/bge_m3_peers.py --make DIR              # random weights, bge-m3's config and heads
    encc compile DIR -o fp32.encm; encc compile DIR --quantize int8 -o int8.encm; ... bf16
    PYTHON tests/reference/bge_m3/check_real_shape.py DIR fp32.encm [int8.encm bf16.encm]

PYTHON: a venv with torch, transformers, safetensors and the encc wheel. The reference (float64): the [CLS] state
L2-normalised; relu(sparse_linear(h)) per token, the largest per id with ids 0-3 (<s>, <pad>, </s>, <unk>) left
out and only positive weights kept; colbert_linear(h[1:]) L2-normalised (what record_bge_m3.py checks against
FlagEmbedding's own code on a small model). Prints, per artifact, max |err| / max |ref| and the worst cosine of
each output over the texts.
"""
import sys

import numpy as np
import safetensors.torch
import torch
from transformers import XLMRobertaModel

import encc

TEXTS = ["The cat sat on the mat.", "What is BGE M3? A model for dense, sparse and multi-vector retrieval.",
         "Ein Hund läuft im Park, und die Katze schläft auf dem Sofa.", "x",
         " ".join(["retrieval with dense and sparse vectors over a large index"] * 30)]


def reference(d, ids_list):
    model = XLMRobertaModel.from_pretrained(d, add_pooling_layer=False).double().eval()
    heads = {n: {k: v.double() for k, v in safetensors.torch.load_file(f"{d}/{n}.safetensors").items()}
             for n in ("sparse_linear", "colbert_linear")}
    out = []
    with torch.no_grad():
        for ids in ids_list:
            h = model(input_ids=torch.tensor([ids])).last_hidden_state[0]
            dense = torch.nn.functional.normalize(h[0], dim=-1).numpy()
            w = torch.relu(h @ heads["sparse_linear"]["weight"].T + heads["sparse_linear"]["bias"])[:, 0].numpy()
            lexical = {}
            for i, x in zip(ids, w):
                if i not in (0, 1, 2, 3) and x > 0 and x > lexical.get(i, 0):
                    lexical[i] = float(x)
            c = h[1:] @ heads["colbert_linear"]["weight"].T + heads["colbert_linear"]["bias"]
            out.append((dense, lexical, torch.nn.functional.normalize(c, dim=-1).numpy()))
    return out


def compare(want, got):
    if want.size == 0:
        return (0.0, 1.0) if got.size == 0 else (float("inf"), 0.0)
    err = max(np.abs(got - want).max() / np.abs(want).max(), 0.0)
    cos = float((got * want).sum() / max(np.linalg.norm(got) * np.linalg.norm(want), 1e-30))
    return err, cos


def main():
    d, artifacts = sys.argv[1], sys.argv[2:]
    ids, lengths = encc.Model(artifacts[0]).tokenize(TEXTS)
    ids_list = [ids[k, :lengths[k]].tolist() for k in range(len(TEXTS))]
    ref = reference(d, ids_list)
    for path in artifacts:
        m = encc.Model(path, threads=2)
        got = m.encode_outputs(TEXTS, batch_size=8)
        worst = {"dense": [0, 1], "lexical": [0, 1], "colbert": [0, 1]}
        same_ids = True
        for k, (dense, lexical, colbert) in enumerate(ref):
            for name, (w, g) in {"dense": (dense, got["dense"][k]), "colbert": (colbert, got["multi_vector"][k])}.items():
                e, c = compare(np.asarray(w), np.asarray(g, dtype=np.float64))
                worst[name] = [max(worst[name][0], e), min(worst[name][1], c)]
            ids, weights = got["sparse"][k]
            same_ids &= sorted(ids.tolist()) == sorted(lexical)
            keys = sorted(set(lexical) | set(ids.tolist()))
            g = dict(zip(ids.tolist(), weights.tolist()))
            e, c = compare(np.array([lexical.get(i, 0.0) for i in keys]), np.array([g.get(i, 0.0) for i in keys]))
            worst["lexical"] = [max(worst["lexical"][0], e), min(worst["lexical"][1], c)]
        print(f"{path} ({m.info['precision']}, {len(TEXTS)} texts of {min(map(len, ids_list))}-"
              f"{max(map(len, ids_list))} tokens): " +
              ", ".join(f"{n} {e:.2e} / cosine {c:.6f}" for n, (e, c) in worst.items()) +
              f"; lexical ids {'the same' if same_ids else 'DIFFER'}")


if __name__ == "__main__":
    main()
