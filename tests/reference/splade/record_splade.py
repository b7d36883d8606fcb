#!/usr/bin/env python3
"""Record sentence-transformers' SparseEncoder (SPLADE) outputs for encc's tests (issue 42, item 1).

Run with a venv holding torch 2.x and sentence-transformers >= 5 (the throughput bench's venv-stb has them):

    PYTHON tests/reference/splade/record_splade.py

Writes, beside this script:
  models/<case>/  a tiny random BertForMaskedLM saved by transformers (safetensors; the decoder tied to the word
                  embeddings, so only its bias is stored), wrapped as sentence-transformers saves a SparseEncoder:
                  MLMTransformer + SpladePooling (max of log(1 + relu(logits)) over the tokens), vocab.txt
  splade.json     per case: texts, the tokenizer's ids, and SparseEncoder.encode's vectors in float64 (the float32
                  weights, the model cast to float64) as (index, value) lists of the non-zero entries
"""
import json
import os
import shutil
import sys
import warnings

import numpy as np
import torch
import transformers
from sentence_transformers import SparseEncoder
from sentence_transformers.sparse_encoder.models import MLMTransformer, SpladePooling
from transformers import BertConfig, BertForMaskedLM

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from random_init import randomize_  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TEXTS = ["The cat sat on the mat.", "A dog runs in the park", "cats and dogs", "PARK", "mat, mat; mat!", ""]
WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "runs", "in", "park", "and", "##s", ".", ",", ";", "!"]


def vocabulary(size):
    toks = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS
    return toks + [f"w{i}" for i in range(size - len(toks))]


CASES = [
    dict(name="bert_mlm", seed=5, config=dict(vocab_size=120, hidden_size=32, num_hidden_layers=2,
                                               num_attention_heads=2, intermediate_size=37,
                                               max_position_embeddings=64, hidden_act="gelu")),
]


def record(case):
    d = os.path.join(HERE, "models", case["name"])
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        f.write("\n".join(vocabulary(case["config"]["vocab_size"])) + "\n")
    torch.manual_seed(case["seed"])
    mlm = BertForMaskedLM(BertConfig(**case["config"])).double()
    randomize_(mlm, case["seed"])
    hf = os.path.join(d, "hf")
    mlm.float().save_pretrained(hf)
    tok = transformers.BertTokenizerFast(os.path.join(d, "vocab.txt"), do_lower_case=True)
    tok.save_pretrained(hf)
    st = SparseEncoder(modules=[MLMTransformer(hf), SpladePooling(pooling_strategy="max")], device="cpu")
    shutil.rmtree(d)
    st.save(d)
    st = SparseEncoder(d, device="cpu")
    st.to(torch.float64)
    ids = [st.tokenize([t])["input_ids"][0].tolist() for t in TEXTS]
    with torch.no_grad():
        emb = st.encode(TEXTS, convert_to_tensor=True, convert_to_sparse_tensor=False, batch_size=len(TEXTS))
    emb = emb.to(torch.float64).numpy()
    sparse = [[[int(i), float(v[i])] for i in np.nonzero(v)[0]] for v in emb]
    return dict(name=case["name"], dir="models/" + case["name"], vocab_size=case["config"]["vocab_size"],
                texts=TEXTS, ids=ids, sparse=sparse)


def main():
    import sentence_transformers
    out = dict(versions=dict(torch=torch.__version__, transformers=transformers.__version__,
                             sentence_transformers=sentence_transformers.__version__),
               cases=[record(c) for c in CASES])
    with open(os.path.join(HERE, "splade.json"), "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
