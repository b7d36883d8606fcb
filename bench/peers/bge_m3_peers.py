#!/usr/bin/env python3
"""bge-m3 at its real shape: encc's one pass for the dense, sparse and ColBERT outputs against ONNX Runtime
driven directly (issue 42).

FastEmbed has no bge-m3 with its three heads (and would fetch its models from the hub, which is not reachable
here); ONNX Runtime runs a torch.onnx export of XLMRobertaModel with bge-m3's heads on top, as FlagEmbedding's
BGEM3 model computes them: the [CLS] state L2-normalised, relu(sparse_linear(h)) per token, and
colbert_linear(h[:, 1:]) L2-normalised, all three outputs of one session run. encc runs its artifact of the same
folder (`encc run --runs`: the whole plan, both heads included, median latency; what the runtime does after it,
copying the heads' rows out and taking each id's largest weight, is measured by encc_bench's BM_Encode). Same
ids (random, <s> ... </s>), same thread count, rounds interleaved (the machine is shared: compare within a
round). Random weights (torch's init, seed 0); the outputs are not compared here (e2e BgeM3.* does that against
FlagEmbedding on a small model).

    PYTHON bench/peers/bge_m3_peers.py --make DIR     # bge-m3-shaped folder (2.3 GB of safetensors) + model.onnx
    encc compile DIR -o m3.encm [--quantize int8]
    PYTHON bench/peers/bge_m3_peers.py --model DIR --artifact m3.encm [--artifact m3-int8.encm] \
        --encc build/bin/encc --batch 8 --seq 128 --threads 2 --rounds 5 [--ort-int8]

PYTHON: a venv with torch, transformers, safetensors and onnxruntime (venv-stb).
"""
import argparse
import json
import os
import shutil

import numpy as np

from interleaved import add_round_arguments, ort_sessions, run_rounds

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make(d, seed):
    import safetensors.torch
    import torch
    from transformers import XLMRobertaConfig, XLMRobertaModel

    os.makedirs(d, exist_ok=True)
    cfg = json.load(open(os.path.join(ROOT, "bench", "models", "bge-m3-shaped", "config.json")))
    torch.manual_seed(seed)
    model = XLMRobertaModel(XLMRobertaConfig(**cfg), add_pooling_layer=False).eval()
    model.save_pretrained(d)
    shutil.copy(os.path.join(ROOT, "bench", "models", "bge-m3-shaped", "config.json"), d)
    shutil.copy(os.path.join(ROOT, "tests", "tokenizer", "unigram", "tokenizer.json"), d)
    hidden = cfg["hidden_size"]
    colbert, sparse = torch.nn.Linear(hidden, hidden), torch.nn.Linear(hidden, 1)
    for name, lin in (("colbert_linear", colbert), ("sparse_linear", sparse)):
        safetensors.torch.save_file({k: v.contiguous() for k, v in lin.state_dict().items()},
                                    os.path.join(d, name + ".safetensors"))
    json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}],
              open(os.path.join(d, "modules.json"), "w"), indent=2)
    os.makedirs(os.path.join(d, "1_Pooling"), exist_ok=True)
    json.dump({"word_embedding_dimension": hidden, "pooling_mode_cls_token": True},
              open(os.path.join(d, "1_Pooling", "config.json"), "w"), indent=2)
    json.dump({"max_seq_length": 8192, "do_lower_case": False},
              open(os.path.join(d, "sentence_bert_config.json"), "w"), indent=2)

    class M3(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model, self.colbert, self.sparse = model, colbert, sparse

        def forward(self, input_ids, attention_mask):
            h = self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            dense = torch.nn.functional.normalize(h[:, 0], dim=-1)
            weights = torch.relu(self.sparse(h)).squeeze(-1)
            vecs = self.colbert(h[:, 1:]) * attention_mask[:, 1:, None].float()
            return dense, weights, torch.nn.functional.normalize(vecs, dim=-1)

    ids = torch.ones(2, 16, dtype=torch.long)
    onnx_dir = os.path.join(d, "onnx")
    os.makedirs(onnx_dir, exist_ok=True)
    torch.onnx.export(M3().eval(), (ids, torch.ones_like(ids)), os.path.join(onnx_dir, "model.onnx"),
                      input_names=["input_ids", "attention_mask"],
                      output_names=["dense_vecs", "sparse_weights", "colbert_vecs"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                                    "dense_vecs": {0: "batch"}, "sparse_weights": {0: "batch", 1: "seq"},
                                    "colbert_vecs": {0: "batch", 1: "seq1"}},
                      opset_version=17, dynamo=False)
    print(f"wrote {d} (bge-m3-shaped folder with its heads) and {onnx_dir}/model.onnx")


def batch(b, s, seed):
    rng = np.random.default_rng(seed)
    ids = rng.integers(5, 4000, size=(b, s), dtype=np.int64)
    ids[:, 0], ids[:, -1] = 0, 2
    return ids


def ort_m3(sess, ids):
    return sess.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--make", help="write a bge-m3-shaped folder with its heads and its ONNX export here")
    ap.add_argument("--seed", type=int, default=0)
    add_round_arguments(ap, runs=3)
    a = ap.parse_args()
    if a.make:
        return make(a.make, a.seed)
    sessions = ort_sessions(a, os.path.join(a.model, "onnx", "model.onnx"), os.path.join(a.model, "onnx-int8", "model.onnx"), external_data=True)
    run_rounds(sessions, ort_m3, a, batch(a.batch, a.seq, a.seed))


if __name__ == "__main__":
    main()
