#!/usr/bin/env python3
"""Record FlagEmbedding's BGE-M3 outputs (dense, lexical weights, ColBERT vectors) for encc's tests (issue 42, item 2).

Run with a venv holding torch 2.x, transformers, sentence-transformers and FlagEmbedding (>= 1.3; pip install
FlagEmbedding datasets):

    PYTHON tests/reference/bge_m3/record_bge_m3.py

Writes, beside this script:
  models/<case>/  a tiny random XLMRobertaModel (safetensors) with the XLM-R Unigram tokenizer of
                  tests/tokenizer/unigram, the sentence-transformers files of BAAI/bge-m3 (Transformer, CLS
                  Pooling, Normalize) and its two heads as FlagEmbedding saves them (colbert_linear.pt,
                  sparse_linear.pt: nn.Linear state dicts) and as safetensors (what encc reads)
  bge_m3.json     per case: texts, the tokenizer's ids, and BGEM3FlagModel.encode's dense_vecs, lexical_weights and
                  colbert_vecs, computed by FlagEmbedding's own code with the model cast to float64 (its CPU path
                  casts to float32 first; that cast is skipped here)
"""
import json
import os
import shutil
import sys
import warnings

import numpy as np
import safetensors.torch
import torch
import transformers
from transformers import XLMRobertaConfig, XLMRobertaModel, XLMRobertaTokenizerFast

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from random_init import randomize_  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
TOKENIZER = os.path.join(ROOT, "tests", "tokenizer", "unigram", "tokenizer.json")
TEXTS = ["The cat sat on the mat.", "the the the cat", "Ein Hund läuft im Park", "", "mat, mat; mat!",
         "What is BGE M3? A model for dense, sparse and multi-vector retrieval.", "x"]


CASES = [
    dict(name="xlmr_m3", seed=7, colbert_dim=24, max_seq=40,
         config=dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
                     max_position_embeddings=66, hidden_act="gelu", type_vocab_size=1, pad_token_id=1,
                     bos_token_id=0, eos_token_id=2)),
]


def write_folder(case, d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    tok = XLMRobertaTokenizerFast(tokenizer_file=TOKENIZER)
    tok.save_pretrained(d)
    gen = torch.Generator().manual_seed(case["seed"])
    model = XLMRobertaModel(XLMRobertaConfig(vocab_size=len(tok), **case["config"]), add_pooling_layer=False).double()
    randomize_(model, gen)
    with torch.no_grad():  # token identity stronger than position: the heads then see tokens that differ
        model.embeddings.word_embeddings.weight.mul_(4.0)
    model.float().save_pretrained(d)
    hidden = case["config"]["hidden_size"]
    # The random encoder's tokens end up close to one another: the sparse head's bias is set to the median of
    # its product over the texts' tokens, so that about half the weights are positive (relu keeps them).
    with torch.no_grad():  # eval(): without dropout, so the recording is the same on every run
        enc = tok(TEXTS, padding=True, return_tensors="pt")
        states = model.eval()(**enc).last_hidden_state.double()[enc["attention_mask"].bool()]
    for name, out in (("colbert_linear", case["colbert_dim"]), ("sparse_linear", 1)):
        lin = torch.nn.Linear(hidden, out).double()
        randomize_(lin, gen)
        if name == "sparse_linear":
            with torch.no_grad():
                lin.bias.copy_(-(states @ lin.weight.T).median())
        state = {k: v.float().contiguous() for k, v in lin.state_dict().items()}
        torch.save(state, os.path.join(d, name + ".pt"))
        safetensors.torch.save_file(state, os.path.join(d, name + ".safetensors"))
    json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}],
              open(os.path.join(d, "modules.json"), "w"), indent=2)
    os.makedirs(os.path.join(d, "1_Pooling"))
    json.dump({"word_embedding_dimension": hidden, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False,
               "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False},
              open(os.path.join(d, "1_Pooling", "config.json"), "w"), indent=2)
    os.makedirs(os.path.join(d, "2_Normalize"))
    json.dump({"max_seq_length": case["max_seq"], "do_lower_case": False},
              open(os.path.join(d, "sentence_bert_config.json"), "w"), indent=2)


def record(case):
    from FlagEmbedding import BGEM3FlagModel

    d = os.path.join(HERE, "models", case["name"])
    write_folder(case, d)
    m3 = BGEM3FlagModel(d, use_fp16=False, devices="cpu", colbert_dim=case["colbert_dim"], normalize_embeddings=True)
    m3.model.double()
    m3.model.float = lambda: m3.model  # keep float64: encode_single_device casts to float32 on the CPU
    out = m3.encode(TEXTS, batch_size=3, max_length=case["max_seq"], return_dense=True, return_sparse=True,
                    return_colbert_vecs=True)
    assert out["dense_vecs"].dtype == np.float64 and out["colbert_vecs"][0].dtype == np.float64
    tok = XLMRobertaTokenizerFast.from_pretrained(d)
    entries = []
    for i, text in enumerate(TEXTS):
        lexical = sorted((int(k), float(v)) for k, v in out["lexical_weights"][i].items())
        entries.append({"text": text,
                        "ids": tok(text, truncation=True, max_length=case["max_seq"])["input_ids"],
                        "dense": [float(x) for x in out["dense_vecs"][i]],
                        "lexical": [[k, v] for k, v in lexical],
                        "colbert": [[float(x) for x in row] for row in out["colbert_vecs"][i]]})
    return {"name": case["name"], "colbert_dim": case["colbert_dim"], "max_seq": case["max_seq"],
            "texts": entries}


def main():
    import FlagEmbedding
    cases = [record(c) for c in CASES]
    versions = {"torch": torch.__version__, "transformers": transformers.__version__,
                "FlagEmbedding": getattr(FlagEmbedding, "__version__", "1.4.2")}
    with open(os.path.join(HERE, "bge_m3.json"), "w") as f:
        json.dump({"versions": versions, "cases": cases}, f, indent=1)
    print("wrote", os.path.join(HERE, "bge_m3.json"))


if __name__ == "__main__":
    main()
