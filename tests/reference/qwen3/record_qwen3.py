#!/usr/bin/env python3
"""Record transformers' Qwen3 outputs for encc's tests (issue 37: Qwen3-Embedding).

Run with a venv holding torch 2.x and transformers 5.x (tests/reference/modernbert/versions.txt):

    PYTHON tests/reference/qwen3/record_qwen3.py

Writes, beside this script:
  models/<case>/  tiny random Qwen3 folders (config.json, model.safetensors in float32 as Qwen3Model saves
                  it, the sentence-transformers files), O(1) random weights (randomize_ below)
  base/config.json  Qwen3-Embedding-0.6B's dims (hidden 1024, 16 query heads over 8 key/value heads of 128,
                  intermediate 3072) with 4 layers and a 4096-token vocabulary, the hub's legacy keys; its weights
                  are encc::randomWeights(config, BASE_SEED) (RandomWeights.cpp, ported in
                  ../modernbert/record_modernbert.py; gate_up_proj generated whole and split), which the test
                  writes as model.safetensors
  qwen3.json      per case: the ids, lengths, and transformers' Qwen3Model outputs in float64 on the
                  float32 weights (sdpa, causal masks as shipped, RoPE's cos/sin in float32): hidden (the
                  valid rows of a right-padded batch) and pooled (sentence-transformers' Pooling of the
                  case: lasttoken = the row at lengths[b] - 1, or mean; then Normalize where the case has it)
"""
import json
import math
import os
import re
import shutil
import sys
import warnings

import numpy as np
import torch
import transformers
from transformers import Qwen3Config, Qwen3Model

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")
LENGTHS = [37, 5, 20, 1, 30]
QWEN2_TOKENIZER = os.path.join(HERE, "..", "..", "tokenizer", "bpe", "tokenizer-qwen2.json")
TEXTS = ["What is the capital of France?", "The capital of France is Paris.", "it's 2026-12-04\n\n  x'Sam",
         "cafe\u0301 \u4e2d\u6587 <|im_start|>", "a", ""]


def randomize_(model, seed):
    """Every parameter O(1)-ish random so that every term matters (norm gammas around 1)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=gen, dtype=torch.float64))
            elif name.endswith("bias"):
                p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=torch.float64))
            else:
                p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * (1.5 / math.sqrt(p.shape[-1])))


def write_sentence_transformers(d, pooling, normalize):
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
        os.makedirs(os.path.join(d, "2_Normalize"), exist_ok=True)
    with open(os.path.join(d, "modules.json"), "w") as f:
        json.dump(modules, f, indent=2)
    os.makedirs(os.path.join(d, "1_Pooling"), exist_ok=True)
    with open(os.path.join(d, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": 0, "pooling_mode_cls_token": False,
                   "pooling_mode_mean_tokens": pooling == "mean", "pooling_mode_max_tokens": False,
                   "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_lasttoken": pooling == "last"}, f,
                  indent=2)
    with open(os.path.join(d, "sentence_bert_config.json"), "w") as f:
        json.dump({"max_seq_length": 64, "do_lower_case": False}, f, indent=2)


def to_legacy_keys(path):
    """The hub's Qwen3-Embedding config style (transformers 4.51): rope_theta, rope_scaling null,
    use_sliding_window / max_window_layers, no layer_types / rope_parameters."""
    with open(path) as f:
        cfg = json.load(f)
    theta = cfg.pop("rope_parameters")["rope_theta"]
    cfg.pop("layer_types", None)
    cfg["rope_theta"], cfg["rope_scaling"] = theta, None
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2)


def tiny_config(**kw):
    d = dict(vocab_size=300, hidden_size=64, intermediate_size=80, num_hidden_layers=3, num_attention_heads=4,
             num_key_value_heads=2, head_dim=24, max_position_embeddings=128, rms_norm_eps=1e-6,
             rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}, hidden_act="silu",
             tie_word_embeddings=True, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    d.update(kw)
    return Qwen3Config(**d)


CASES = [
    # Qwen3-Embedding's structure at a small odd shape: 4 query heads over 2 key/value heads of head_dim 24
    # (heads x head_dim = 96 != hidden 64), 5.x config keys, last-token pooling + Normalize.
    dict(name="gqa_last", seed=21, pooling="last", normalize=True, config=tiny_config()),
    # The hub's legacy keys, q/k/v/o biases (attention_bias), one key/value head per query head with
    # head_dim hidden / heads (48 / 3), another theta and eps; mean pooling without Normalize.
    dict(name="legacy_bias_mean", seed=22, pooling="mean", normalize=False, legacy=True, config=tiny_config(
        hidden_size=48, num_attention_heads=3, num_key_value_heads=3, head_dim=16, intermediate_size=56,
        num_hidden_layers=2, attention_bias=True, rms_norm_eps=1e-5,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0})),
    # Sliding-window layers (use_sliding_window, sliding_window 7, from layer 1 on: layers 1 and 2) with one
    # key/value head for six query heads of head_dim 8 (multi-query); 5.x writes layer_types.
    dict(name="sliding_mqa", seed=23, pooling="last", normalize=True, config=tiny_config(
        hidden_size=40, num_attention_heads=6, num_key_value_heads=1, head_dim=8, intermediate_size=36,
        use_sliding_window=True, sliding_window=7, max_window_layers=1)),
    # Text in: a Qwen2-style tokenizer.json (NFC, the Split regex, $A <|endoftext|>:
    # tests/tokenizer/bpe/tokenizer-qwen2.json) on a 2048-token vocabulary.
    dict(name="text_last", seed=24, pooling="last", normalize=True, tokenizer=QWEN2_TOKENIZER,
         config=tiny_config(vocab_size=2048)),
]


def batch(vocab, seed):
    rng = np.random.default_rng(seed)
    ids = np.zeros((len(LENGTHS), max(LENGTHS)), dtype=np.int64)
    for b, n in enumerate(LENGTHS):
        ids[b, :n] = rng.integers(3, vocab, size=n)
        ids[b, n - 1] = 2  # the eos the tokenizer's post-processor appends
    return ids


def record(case, models=MODELS):
    """One case's folder under `models` and its record; case["cls"] is the model class (Qwen3Model unless
    given: record_llama.py's cases name theirs), case["record_prompts"] (default True) whether a case with a
    tokenizer also records sentence-transformers' prompts."""
    cls = case.get("cls", Qwen3Model)
    d = os.path.join(models, case["name"])
    shutil.rmtree(d, ignore_errors=True)
    torch.manual_seed(case["seed"])
    model = cls(case["config"]).double()
    randomize_(model, case["seed"])
    model.float().save_pretrained(d)
    if case.get("legacy"):
        to_legacy_keys(os.path.join(d, "config.json"))
    write_sentence_transformers(d, case["pooling"], case["normalize"])
    m = cls.from_pretrained(d, attn_implementation="sdpa", dtype=torch.float64).eval()
    ids = batch(case["config"].vocab_size, case["seed"] + 100)
    h = hidden_states(m, ids, LENGTHS)
    rec = dict(name=case["name"], dir="models/" + case["name"], ids=ids.tolist(), lengths=LENGTHS,
               hidden=[h[b, :n].tolist() for b, n in enumerate(LENGTHS)],
               pooled=pool(h, LENGTHS, case["pooling"], case["normalize"]).tolist())
    if "tokenizer" in case:
        from tokenizers import Tokenizer
        shutil.copy(case["tokenizer"], os.path.join(d, "tokenizer.json"))
        enc = [Tokenizer.from_file(case["tokenizer"]).encode(t).ids for t in TEXTS]
        lens = [len(e) for e in enc]
        ids_t = np.zeros((len(enc), max(lens)), dtype=np.int64)
        for b, e in enumerate(enc):
            ids_t[b, :len(e)] = e
        ht = hidden_states(m, ids_t, lens)
        rec["texts"] = dict(texts=TEXTS, ids=enc, pooled=pool(ht, lens, case["pooling"], case["normalize"]).tolist())
        if case.get("record_prompts", True):
            rec["prompts"] = record_prompts(d, case)
    return rec


# Qwen3-Embedding's config_sentence_transformers.json (its query instruction; documents as they are).
PROMPTS = {"query": "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:",
           "document": ""}


def record_prompts(d, case):
    """sentence-transformers' own encode() of TEXTS with each prompt and with none: the folder gets
    config_sentence_transformers.json (PROMPTS) and a tokenizer_config.json naming the fast tokenizer."""
    with open(os.path.join(d, "config_sentence_transformers.json"), "w") as f:
        json.dump({"prompts": PROMPTS, "default_prompt_name": None, "similarity_fn_name": "cosine"}, f, indent=2)
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|endoftext|>",
                   "pad_token": "<|endoftext|>", "model_max_length": 64}, f, indent=2)
    from sentence_transformers import SentenceTransformer
    st = SentenceTransformer(d, device="cpu", model_kwargs={"dtype": torch.float64, "attn_implementation": "sdpa"})
    out = {}
    for name in [None] + list(PROMPTS):
        emb = st.encode(TEXTS, prompt_name=name, batch_size=len(TEXTS), convert_to_numpy=True)
        out[name or ""] = np.asarray(emb, dtype=np.float64).tolist()
    return dict(prompts=PROMPTS, encode=out)


def hidden_states(m, ids, lengths):
    am = (np.arange(ids.shape[1])[None, :] < np.asarray(lengths)[:, None]).astype(np.int64)
    with torch.no_grad():
        return m(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(am)).last_hidden_state.numpy()


def pool(h, lengths, pooling, normalize):
    out = []
    for b, n in enumerate(lengths):
        v = h[b, n - 1] if pooling == "last" else h[b, :n].mean(0)
        out.append(v / np.linalg.norm(v) if normalize else v)
    return np.stack(out)


BASE_SEED = 9


def base_config():
    return dict(architectures=["Qwen3ForCausalLM"], model_type="qwen3", vocab_size=4096, hidden_size=1024,
                intermediate_size=3072, num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=8,
                head_dim=128, hidden_act="silu", max_position_embeddings=32768, rms_norm_eps=1e-6,
                rope_theta=1000000, rope_scaling=None, use_sliding_window=False, sliding_window=None,
                max_window_layers=28, attention_bias=False, tie_word_embeddings=True, bos_token_id=1,
                eos_token_id=2, torch_dtype="float32")


def record_base():
    sys.path.insert(0, os.path.join(HERE, "..", "modernbert"))
    from record_modernbert import random_tensor  # noqa: E402  (encc's RandomWeights.cpp)
    d = os.path.join(HERE, "base")
    os.makedirs(d, exist_ok=True)
    cfg = base_config()
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    model = Qwen3Model(Qwen3Config(**cfg)).double().eval()
    state, I = {}, cfg["intermediate_size"]
    for name, p in model.state_dict().items():
        if ".mlp.gate_proj." in name or ".mlp.up_proj." in name:
            whole = re.sub(r"\.(gate|up)_proj\.", ".gate_up_proj.", name)
            t = random_tensor(whole, (2 * I, p.shape[1]), BASE_SEED)
            t = t[:I] if ".gate_proj." in name else t[I:]
        else:
            t = random_tensor(name, tuple(p.shape), BASE_SEED)
        state[name] = torch.from_numpy(t.astype(np.float64))
    model.load_state_dict(state)
    model.config._attn_implementation = "sdpa"
    lengths = [300, 77, 12]
    rows = [[0, 1, 2, 31, 32, 33, 150, 298, 299], [0, 1, 40, 75, 76], [0, 5, 11]]
    rng = np.random.default_rng(BASE_SEED)
    ids = np.zeros((len(lengths), max(lengths)), dtype=np.int64)
    for b, n in enumerate(lengths):
        ids[b, :n] = rng.integers(3, cfg["vocab_size"], size=n)
        ids[b, n - 1] = 2
    am = (np.arange(ids.shape[1])[None, :] < np.asarray(lengths)[:, None]).astype(np.int64)
    with torch.no_grad():
        h = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(am)).last_hidden_state.numpy()
    last = np.stack([h[b, n - 1] for b, n in enumerate(lengths)])
    return dict(name="base_mixed", dir="base", seed=BASE_SEED, ids=ids.tolist(), lengths=lengths, rows=rows,
                hidden_rows=[[h[b, r].tolist() for r in rs] for b, rs in enumerate(rows)],
                pooled=(last / np.linalg.norm(last, axis=1, keepdims=True)).tolist())


def main():
    cases = [record(c) for c in CASES]
    cases.append(record_base())
    out = dict(versions=dict(torch=torch.__version__, transformers=transformers.__version__, numpy=np.__version__),
               notes="transformers Qwen3Model float64 (sdpa, causal, RoPE cos/sin in float32 as shipped) on float32 "
                     "weights, right padding; hidden: valid rows [b][s < lengths[b]][H] (base: hidden_rows[b] at "
                     "rows[b]); pooled: the case's sentence-transformers pooling (lasttoken: row lengths[b] - 1) "
                     "and Normalize (base: last token, normalised)",
               cases=cases)
    with open(os.path.join(HERE, "qwen3.json"), "w") as f:
        json.dump(out, f)
    for c in cases:
        print(c["name"], "recorded")


if __name__ == "__main__":
    main()
