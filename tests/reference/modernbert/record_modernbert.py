#!/usr/bin/env python3
"""Record transformers' ModernBERT outputs for encc's tests (issue 36).

Run with a venv holding the versions in versions.txt (torch 2.x, transformers 5.x):

    PYTHON tests/reference/modernbert/record_modernbert.py     (ENCC_SKIP_BASE=1: the tiny cases only)

Writes, beside this script:
  models/<case>/   tiny random ModernBERT folders (config.json, model.safetensors in float32, and for
                   embedders the sentence-transformers files), made with ModernBertModel /
                   ModernBertForSequenceClassification and O(1) random weights (check_spec.randomize_)
  base/config.json the ModernBERT-base shape (22 layers, hidden 768, the hub's legacy config keys); its
                   weights are encc::randomWeights(config, SEED) (frontends/hf/RandomWeights.cpp, ported
                   below), which the test writes as model.safetensors
  modernbert.json  per case: the ids, lengths, and transformers' outputs in float64 on the float32 weights,
                   sdpa attention as shipped (RoPE's cos/sin in float32, as transformers computes them):
                   hidden (valid rows; for the base shape, hidden_rows at the rows listed in `rows`), pooled
                   (sentence-transformers' pooling of those), logits.
"""
import json
import math
import os
import shutil
import sys
import warnings

import numpy as np
import torch
import transformers
from transformers import ModernBertConfig, ModernBertForSequenceClassification, ModernBertModel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_spec import randomize_  # noqa: E402

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")


NEOX_TOKENIZER = os.path.join(HERE, "..", "..", "tokenizer", "bpe", "tokenizer-neox.json")
TEXTS = ["The cafe\u0301 is open.", "Caf\u00e9 au lait, s'il vous pla\u00eet", "ModernBERT reads 8192 tokens [MASK] now",
         "\ud55c\uad6d\uc5b4 \u1100\u1161\u11a8", "a", ""]


def tiny_config(**kw):
    d = dict(vocab_size=100, hidden_size=48, intermediate_size=40, num_hidden_layers=4, num_attention_heads=3,
             global_attn_every_n_layers=3, local_attention=8, max_position_embeddings=64, pad_token_id=0,
             cls_token_id=1, sep_token_id=2, bos_token_id=1, eos_token_id=2)
    d.update(kw)
    return ModernBertConfig(**d)


def to_legacy_keys(path, global_theta, local_theta):
    """Rewrite config.json as the hub's answerdotai configs are: global_attn_every_n_layers,
    global_rope_theta / local_rope_theta, no layer_types / rope_parameters."""
    with open(path) as f:
        cfg = json.load(f)
    cfg.pop("layer_types", None)
    cfg.pop("rope_parameters", None)
    cfg["global_rope_theta"], cfg["local_rope_theta"] = global_theta, local_theta
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2)


def write_sentence_transformers(d, pooling, normalize):
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize",
                        "type": "sentence_transformers.models.Normalize"})
    with open(os.path.join(d, "modules.json"), "w") as f:
        json.dump(modules, f, indent=2)
    os.makedirs(os.path.join(d, "1_Pooling"), exist_ok=True)
    with open(os.path.join(d, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": 0, "pooling_mode_cls_token": pooling == "cls",
                   "pooling_mode_mean_tokens": pooling == "mean", "pooling_mode_max_tokens": False,
                   "pooling_mode_mean_sqrt_len_tokens": False}, f, indent=2)
    if normalize:
        os.makedirs(os.path.join(d, "2_Normalize"), exist_ok=True)
    with open(os.path.join(d, "sentence_bert_config.json"), "w") as f:
        json.dump({"max_seq_length": 64, "do_lower_case": False}, f, indent=2)


def batch(vocab, lengths, seed, cls_id=1, sep_id=2, pad_id=0):
    rng = np.random.default_rng(seed)
    S = max(lengths)
    ids = np.full((len(lengths), S), pad_id, dtype=np.int64)
    for b, n in enumerate(lengths):
        seq = rng.integers(3, vocab, size=n)
        seq[0], seq[-1] = cls_id, sep_id
        ids[b, :n] = seq
    return ids


def run(d, cls, ids, lengths):
    """transformers float64 (sdpa, as shipped) on the folder's float32 weights."""
    m = cls.from_pretrained(d, attn_implementation="sdpa", dtype=torch.float64).eval()
    am = (np.arange(ids.shape[1])[None, :] < np.asarray(lengths)[:, None]).astype(np.int64)
    with torch.no_grad():
        return m(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(am))


def pooled(hidden, lengths, pooling, normalize):
    out = []
    for b, n in enumerate(lengths):
        v = hidden[b, 0] if pooling == "cls" else hidden[b, :n].mean(0)
        out.append(v / np.linalg.norm(v) if normalize else v)
    return np.stack(out)


def tiny_cases():
    cases = []

    # 1. The hub's config style (legacy keys), defaults: no biases, erf GELU; a mean + normalize embedder with
    #    a GPT-NeoX-style tokenizer.json (NFC, byte-level BPE, [CLS] $A [SEP]: tests/tokenizer/bpe/tokenizer-neox.json)
    cases.append(dict(name="legacy_mean", kind="model", seed=11, pooling="mean", normalize=True,
                      legacy=(160000.0, 10000.0), tokenizer=NEOX_TOKENIZER,
                      config=tiny_config(vocab_size=2048, pad_token_id=2003, cls_token_id=2001, sep_token_id=2002)))
    # 2. Every bias, tanh GELU, an odd window (11 -> 5), layer_types every 2nd global, other thetas and eps;
    #    odd shape (hidden 60, 3 heads of 20); a cls embedder without Normalize.
    cases.append(dict(name="biases_cls", kind="model", seed=12, pooling="cls", normalize=False, config=tiny_config(
        hidden_size=60, intermediate_size=44, num_hidden_layers=5, global_attn_every_n_layers=2, local_attention=11,
        norm_bias=True, attention_bias=True, mlp_bias=True, hidden_activation="gelu_pytorch_tanh", norm_eps=1e-6,
        global_rope_theta=80000.0, local_rope_theta=5000.0, vocab_size=130)))
    # 3. A reranker: one label, mean pooling, classifier_bias (head.dense's bias).
    cases.append(dict(name="reranker_mean", kind="classifier", seed=13, config=tiny_config(
        num_labels=1, classifier_pooling="mean", classifier_bias=True)))
    # 4. Three labels, cls pooling, norm biases, tanh GELU in the head.
    cases.append(dict(name="classifier_cls3", kind="classifier", seed=14, config=tiny_config(
        num_labels=3, classifier_pooling="cls", norm_bias=True, classifier_activation="gelu_new",
        hidden_size=36, num_attention_heads=2, intermediate_size=52, num_hidden_layers=3, local_attention=6)))
    return cases


def record_tiny(case):
    d = os.path.join(MODELS, case["name"])
    shutil.rmtree(d, ignore_errors=True)
    cls = ModernBertModel if case["kind"] == "model" else ModernBertForSequenceClassification
    torch.manual_seed(case["seed"])
    model = cls(case["config"]).double()
    randomize_(model, case["seed"])
    if case["kind"] == "classifier":
        model.config.architectures = ["ModernBertForSequenceClassification"]
    model.float().save_pretrained(d)
    if "legacy" in case:
        to_legacy_keys(os.path.join(d, "config.json"), *case["legacy"])
    if case["kind"] == "model":
        write_sentence_transformers(d, case["pooling"], case["normalize"])
    if "tokenizer" in case:
        shutil.copy(case["tokenizer"], os.path.join(d, "tokenizer.json"))
    lengths = [37, 5, 20, 1, 30]
    ids = batch(case["config"].vocab_size, lengths, case["seed"] + 100)
    out = run(d, cls, ids, lengths)
    rec = dict(name=case["name"], dir="models/" + case["name"], ids=ids.tolist(), lengths=lengths)
    if case["kind"] == "model":
        h = out.last_hidden_state.numpy()
        rec["hidden"] = [h[b, :n].tolist() for b, n in enumerate(lengths)]
        rec["pooled"] = pooled(h, lengths, case["pooling"], case["normalize"]).tolist()
        if "tokenizer" in case:
            from tokenizers import Tokenizer
            tok = Tokenizer.from_file(case["tokenizer"])
            enc = [tok.encode(t).ids for t in TEXTS]
            lens = [len(e) for e in enc]
            ids_t = np.full((len(enc), max(lens)), case["config"].pad_token_id, dtype=np.int64)
            for b, e in enumerate(enc):
                ids_t[b, :len(e)] = e
            ht = run(d, cls, ids_t, lens).last_hidden_state.numpy()
            rec["texts"] = dict(texts=TEXTS, ids=enc,
                                pooled=pooled(ht, lens, case["pooling"], case["normalize"]).tolist())
    else:
        rec["logits"] = out.logits.numpy().tolist()
    return rec


# ----------------------------------------------------------------------------------------------------------
# encc's --weights=random:SEED (frontends/hf/RandomWeights.cpp), for the base-shaped model
# ----------------------------------------------------------------------------------------------------------
M64 = (1 << 64) - 1


def fnv1a(s):
    h = 0xCBF29CE484222325
    for c in s.encode():
        h = ((h ^ c) * 0x100000001B3) & M64
    return h


def random_tensor(name, shape, seed):
    n = int(np.prod(shape))
    if len(shape) == 1:
        return np.zeros(n, np.float32) if name.endswith(".bias") else np.ones(n, np.float32)
    with np.errstate(over="ignore"):
        state0 = np.uint64((seed ^ fnv1a(name)) & M64)
        z = state0 + np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    m = np.uint64(0xFFFF)
    s = ((z & m).astype(np.int64) + ((z >> np.uint64(16)) & m).astype(np.int64) +
         ((z >> np.uint64(32)) & m).astype(np.int64) + (z >> np.uint64(48)).astype(np.int64))
    scale = np.float32(0.02 / (65536.0 / math.sqrt(3.0)))
    return ((s - 2 * 65535).astype(np.float32) * scale).reshape(shape)


BASE_SEED = 7


def base_config():
    # ModernBERT-base's published shape and (legacy) keys.
    return dict(architectures=["ModernBertModel"], model_type="modernbert", vocab_size=50368, hidden_size=768,
                intermediate_size=1152, num_hidden_layers=22, num_attention_heads=12, hidden_activation="gelu",
                max_position_embeddings=8192, norm_eps=1e-5, norm_bias=False, attention_bias=False, mlp_bias=False,
                global_attn_every_n_layers=3, local_attention=128, global_rope_theta=160000.0,
                local_rope_theta=10000.0, pad_token_id=50283, cls_token_id=50281, sep_token_id=50282,
                bos_token_id=50281, eos_token_id=50282, classifier_pooling="mean", torch_dtype="float32")


def record_base():
    d = os.path.join(HERE, "base")
    os.makedirs(d, exist_ok=True)
    cfg = base_config()
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    model = ModernBertModel(ModernBertConfig(**cfg)).double().eval()
    state = {}
    for name, p in model.state_dict().items():
        state[name] = torch.from_numpy(random_tensor(name, tuple(p.shape), BASE_SEED).astype(np.float64))
    model.load_state_dict(state)
    model.config._attn_implementation = "sdpa"
    cases = []
    window_edges = [0, 1, 63, 64, 65, 127, 128, 129]
    for tag, lengths, rows in (("base_mixed", [517, 130, 64], [window_edges + [200, 258, 400, 515, 516],
                                                                 window_edges, [0, 1, 31, 32, 62, 63]]),
                               ("base_8192", [8192], [window_edges + [1000, 4095, 4096, 6000, 8126, 8127, 8128,
                                                                        8190, 8191]])):
        ids = batch(cfg["vocab_size"], lengths, 5 + len(lengths), cls_id=50281, sep_id=50282, pad_id=50283)
        am = (np.arange(ids.shape[1])[None, :] < np.asarray(lengths)[:, None]).astype(np.int64)
        print(f"  {tag}: {lengths} tokens ...", flush=True)
        with torch.no_grad():
            h = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(am)).last_hidden_state.numpy()
        rec = dict(name=tag, dir="base", seed=BASE_SEED, ids=ids.tolist(), lengths=lengths, rows=rows,
                   hidden_rows=[[h[b, r].tolist() for r in rs] for b, rs in enumerate(rows)],
                   pooled=pooled(h, lengths, "mean", True).tolist())
        cases.append(rec)
    return cases


def main():
    torch.set_num_threads(os.cpu_count() or 1)
    cases = []
    for c in tiny_cases():
        print("case", c["name"], flush=True)
        cases.append(record_tiny(c))
    if os.environ.get("ENCC_SKIP_BASE") != "1":
        print("base-shaped model (22 x 768) ...", flush=True)
        cases.extend(record_base())
    else:  # keep the base cases already recorded (their model does not change with the tiny ones)
        with open(os.path.join(HERE, "modernbert.json")) as f:
            cases.extend(c for c in json.load(f)["cases"] if c["dir"] == "base")
    out = dict(versions=dict(torch=torch.__version__, transformers=transformers.__version__,
                             numpy=np.__version__),
               notes="transformers float64 (sdpa, RoPE cos/sin in float32 as shipped) on float32 weights; hidden: "
                     "valid rows [b][s < lengths[b]][H] (base: hidden_rows[b] at rows[b]); pooled: the "
                     "sentence-transformers pooling of the case (base: mean, normalised); logits: the "
                     "classifier's raw outputs",
               cases=cases)
    with open(os.path.join(HERE, "modernbert.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"))
    print("wrote", os.path.join(HERE, "modernbert.json"))


if __name__ == "__main__":
    main()
