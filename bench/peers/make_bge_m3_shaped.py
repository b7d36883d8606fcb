#!/usr/bin/env python3
"""A bge-m3-shaped folder for timing its three outputs (issue 42): BAAI/bge-m3's config (XLM-R large: hidden
1024, 24 layers, 8194 positions, vocab 250002; bench/models/bge-m3-shaped), its sentence-transformers files
(CLS pooling, Normalize), random sparse_linear / colbert_linear heads as safetensors, and the XLM-R Unigram
tokenizer of tests/tokenizer/unigram (4 002 pieces: the texts' ids stay inside the model's vocabulary).

    python3 bench/peers/make_bge_m3_shaped.py OUT
    encc compile OUT --weights=random:1 -o bge-m3.encm                     # dense + sparse + ColBERT
    encc compile OUT --weights=random:1 --no-token-heads -o bge-m3-dense.encm

The encoder's weights are generated (the artifacts store none); the outputs are meaningless.
Needs numpy only.
"""
import json
import os
import shutil
import struct
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def save_linear(path, out_features, in_features, rng):
    """An nn.Linear's state dict (weight, bias) as a safetensors file."""
    tensors = {"weight": rng.standard_normal((out_features, in_features), dtype=np.float32) * 0.03,
               "bias": rng.standard_normal(out_features, dtype=np.float32) * 0.03}
    header, data, at = {}, b"", 0
    for name, t in tensors.items():
        raw = t.astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [at, at + len(raw)]}
        data += raw
        at += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    shutil.copy(os.path.join(ROOT, "bench", "models", "bge-m3-shaped", "config.json"), out)
    shutil.copy(os.path.join(ROOT, "tests", "tokenizer", "unigram", "tokenizer.json"), out)
    hidden = json.load(open(os.path.join(out, "config.json")))["hidden_size"]
    rng = np.random.default_rng(1)
    save_linear(os.path.join(out, "sparse_linear.safetensors"), 1, hidden, rng)
    save_linear(os.path.join(out, "colbert_linear.safetensors"), hidden, hidden, rng)
    json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}],
              open(os.path.join(out, "modules.json"), "w"), indent=2)
    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
    json.dump({"word_embedding_dimension": hidden, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False},
              open(os.path.join(out, "1_Pooling", "config.json"), "w"), indent=2)
    json.dump({"max_seq_length": 8192, "do_lower_case": False},
              open(os.path.join(out, "sentence_bert_config.json"), "w"), indent=2)
    print("wrote", out)


if __name__ == "__main__":
    main()
