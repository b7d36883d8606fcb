#!/usr/bin/env python3
"""Record transformers' Gemma3TextModel outputs for encc's tests (issue 37: EmbeddingGemma).

Run with a venv holding torch 2.x and transformers 5.x (tests/reference/modernbert/versions.txt):

    PYTHON tests/reference/gemma3/record_gemma3.py

Writes, beside this script:
  models/<case>/  tiny random Gemma 3 folders (config.json, model.safetensors in float32, the
                  sentence-transformers files), O(1) random weights (randomize_ below; RMSNorm weights
                  around 0: Gemma's norms scale by 1 + weight)
  gemma3.json     per case: the ids, lengths, and transformers' Gemma3TextModel outputs in float64 on the
                  float32 weights (sdpa, masks as shipped: bidirectional with EmbeddingGemma's sliding
                  windows, or causal), right padding: hidden (the valid rows) and pooled (the case's
                  pooling: mean of the valid rows or the row at lengths[b] - 1, then normalised)
"""
import json
import math
import os
import shutil
import warnings

import numpy as np
import torch
import transformers
from transformers import Gemma3TextConfig, Gemma3TextModel

from sentence_transformers.models import Dense  # noqa: E402

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")
LENGTHS = [37, 5, 20, 1, 30]
GEMMA_TOKENIZER = os.path.join(HERE, "..", "..", "tokenizer", "spbpe", "tokenizer-gemma.json")
TEXTS = ["What is the capital of France?", "The capital of France is Paris.", "caf\u00e9 \u4e2d\u6587 \U0001f600",
         "  two  spaces\tand a tab\n", "<bos> literal specials <eos>", "a", ""]


def randomize_(model, seed):
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=torch.float64))
            elif name.endswith("bias"):
                p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=torch.float64))
            elif "embed_tokens" in name:  # scaled by sqrt(hidden) in the model
                p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) / math.sqrt(p.shape[-1]))
            else:
                p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * (1.5 / math.sqrt(p.shape[-1])))


def write_sentence_transformers(d, pooling, dense):
    """modules.json: Transformer, Pooling, the Dense modules `dense` (saved by sentence-transformers into
    N_Dense/), Normalize."""
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    for i, layer in enumerate(dense):
        sub = f"{i + 2}_Dense"
        os.makedirs(os.path.join(d, sub), exist_ok=True)
        layer.save(os.path.join(d, sub))
        modules.append({"idx": i + 2, "name": str(i + 2), "path": sub, "type": "sentence_transformers.models.Dense"})
    n = len(modules)
    modules.append({"idx": n, "name": str(n), "path": f"{n}_Normalize",
                    "type": "sentence_transformers.models.Normalize"})
    with open(os.path.join(d, "modules.json"), "w") as f:
        json.dump(modules, f, indent=2)
    os.makedirs(os.path.join(d, "1_Pooling"), exist_ok=True)
    with open(os.path.join(d, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": 0, "pooling_mode_mean_tokens": pooling == "mean",
                   "pooling_mode_lasttoken": pooling == "last"}, f, indent=2)
    with open(os.path.join(d, "sentence_bert_config.json"), "w") as f:
        json.dump({"max_seq_length": 64, "do_lower_case": False}, f, indent=2)


def to_legacy_keys(path):
    """The hub's Gemma 3 config style (transformers 4.5x): rope_theta and rope_local_base_freq, rope_scaling
    null, no rope_parameters."""
    with open(path) as f:
        cfg = json.load(f)
    params = cfg.pop("rope_parameters")
    cfg["rope_theta"] = params["full_attention"]["rope_theta"]
    cfg["rope_local_base_freq"] = params["sliding_attention"]["rope_theta"]
    cfg["rope_scaling"] = None
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2)


def tiny_config(**kw):
    d = dict(vocab_size=300, hidden_size=64, intermediate_size=96, num_hidden_layers=4, num_attention_heads=4,
             num_key_value_heads=1, head_dim=32, max_position_embeddings=128, rms_norm_eps=1e-6,
             hidden_activation="gelu_pytorch_tanh", query_pre_attn_scalar=24, sliding_window=10,
             layer_types=["sliding_attention", "sliding_attention", "full_attention", "sliding_attention"],
             rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
                              "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
             use_bidirectional_attention=True, pad_token_id=0, bos_token_id=2, eos_token_id=1)
    d.update(kw)
    return Gemma3TextConfig(**d)


CASES = [
    # EmbeddingGemma's structure at a small odd shape: bidirectional attention, sliding layers seeing keys
    # within sliding_window // 2 (10 -> 5) either side, 4 query heads over 1 key/value head of 32 (128 wide on
    # hidden 64), query_pre_attn_scalar 24 (not head_dim), mean pooling, two Dense modules (as EmbeddingGemma's
    # 768 -> 3072 -> 768; here 64 -> 96 with a bias and Tanh, LaBSE's kind, then 96 -> 64 without, Identity),
    # Normalize; 5.x config keys.
    dict(name="bidirectional_mean", seed=31, pooling="mean", dense=[(64, 96, True, "tanh"), (96, 64, False, None)],
         config=tiny_config()),
    # A causal Gemma 3 (use_bidirectional_attention false: sliding layers see the 7 most recent keys), the
    # hub's legacy rope keys, q/k/v/o biases, erf GELU, another head layout, last-token pooling.
    dict(name="causal_last", seed=32, pooling="last", legacy=True, config=tiny_config(
        use_bidirectional_attention=False, sliding_window=7, attention_bias=True, hidden_activation="gelu",
        hidden_size=48, num_attention_heads=2, num_key_value_heads=2, head_dim=20, intermediate_size=40,
        num_hidden_layers=3, layer_types=["sliding_attention", "full_attention", "sliding_attention"],
        query_pre_attn_scalar=20, rms_norm_eps=1e-5)),
    # EmbeddingGemma with its kind of tokenizer (issue 37, item 4): SentencePiece BPE on characters with
    # byte fallback, Replace " " -> "▁", a Split after spaces, <bos> $A <eos> (tests/tokenizer/spbpe,
    # Gemma's layout: <pad> 0, <eos> 1, <bos> 2); text in, mean + Dense + Normalize out.
    dict(name="text_mean", seed=33, pooling="mean", dense=[(64, 64, False, None)], tokenizer=GEMMA_TOKENIZER,
         config=tiny_config(vocab_size=2261)),
]


def record(case):
    d = os.path.join(MODELS, case["name"])
    shutil.rmtree(d, ignore_errors=True)
    torch.manual_seed(case["seed"])
    model = Gemma3TextModel(case["config"]).double()
    randomize_(model, case["seed"])
    model.float().save_pretrained(d)
    if case.get("legacy"):
        to_legacy_keys(os.path.join(d, "config.json"))
    dense = []
    for i, (fin, fout, bias, act) in enumerate(case.get("dense", [])):
        torch.manual_seed(case["seed"] + 10 + i)
        layer = Dense(fin, fout, bias=bias, activation_function=torch.nn.Tanh() if act == "tanh" else
                      torch.nn.Identity())
        randomize_(layer, case["seed"] + 10 + i)
        dense.append(layer)
    write_sentence_transformers(d, case["pooling"], dense)
    m = Gemma3TextModel.from_pretrained(d, attn_implementation="sdpa", dtype=torch.float64).eval()
    rng = np.random.default_rng(case["seed"] + 100)
    ids = np.zeros((len(LENGTHS), max(LENGTHS)), dtype=np.int64)
    for b, n in enumerate(LENGTHS):
        ids[b, :n] = rng.integers(3, case["config"].vocab_size, size=n)
        ids[b, 0] = 2  # <bos>
    am = (np.arange(ids.shape[1])[None, :] < np.asarray(LENGTHS)[:, None]).astype(np.int64)
    with torch.no_grad():
        h = m(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(am)).last_hidden_state.numpy()
    rec = dict(name=case["name"], dir="models/" + case["name"], ids=ids.tolist(), lengths=LENGTHS,
               hidden=[h[b, :n].tolist() for b, n in enumerate(LENGTHS)],
               pooled=pool(h, LENGTHS, case["pooling"], dense).tolist())
    if "tokenizer" in case:  # the texts: the library's ids, then the same forward pass and pooling
        from tokenizers import Tokenizer
        shutil.copy(case["tokenizer"], os.path.join(d, "tokenizer.json"))
        enc = [Tokenizer.from_file(case["tokenizer"]).encode(t).ids for t in TEXTS]
        lens = [len(e) for e in enc]
        ids_t = np.zeros((len(enc), max(lens)), dtype=np.int64)
        for b, e in enumerate(enc):
            ids_t[b, :len(e)] = e
        am_t = (np.arange(ids_t.shape[1])[None, :] < np.asarray(lens)[:, None]).astype(np.int64)
        with torch.no_grad():
            ht = m(input_ids=torch.from_numpy(ids_t), attention_mask=torch.from_numpy(am_t)).last_hidden_state.numpy()
        rec["texts"] = dict(texts=TEXTS, ids=enc, pooled=pool(ht, lens, case["pooling"], dense).tolist())
    return rec


def pool(h, lengths, pooling, dense):
    """The valid rows pooled (mean, or the row at lengths[b] - 1), the Dense modules, normalised."""
    pooled = []
    for b, n in enumerate(lengths):
        v = torch.from_numpy(h[b, n - 1] if pooling == "last" else h[b, :n].mean(0))[None]
        with torch.no_grad():  # sentence-transformers' own Dense modules, in float64
            for layer in dense:
                v = layer.double()({"sentence_embedding": v})["sentence_embedding"]
        v = v[0].numpy()
        pooled.append(v / np.linalg.norm(v))
    return np.stack(pooled)


def main():
    cases = [record(c) for c in CASES]
    out = dict(versions=dict(torch=torch.__version__, transformers=transformers.__version__, numpy=np.__version__),
               notes="transformers Gemma3TextModel float64 (sdpa, masks as shipped, RoPE cos/sin in float32) on "
                     "float32 weights, right padding; hidden: valid rows [b][s < lengths[b]][H]; pooled: the case's "
                     "pooling, normalised",
               cases=cases)
    with open(os.path.join(HERE, "gemma3.json"), "w") as f:
        json.dump(out, f)
    for c in cases:
        print(c["name"], "recorded")


if __name__ == "__main__":
    main()
