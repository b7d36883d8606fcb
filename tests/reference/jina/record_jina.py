#!/usr/bin/env python3
"""Record JinaBERT (jina-embeddings-v2) reference outputs for encc's tests (issue 36: ALiBi).

No library ships JinaBERT: the model is remote code on the hub (jinaai/jina-bert-implementation), which is
not reachable here. The reference is this file's float64 NumPy forward pass, written from the model's
published definition as text-embeddings-inference implements it (backends/candle/src/models/jina.rs and
alibi.rs): BERT's embeddings without a position table, post-LayerNorm layers whose attention adds ALiBi
(-slope_h * |i - j|, the slopes of _get_alibi_head_slopes) to the scaled scores, and a GeGLU feed-forward
(mlp.gated_layers without bias, erf GELU of the first intermediate_size columns times the rest, mlp.wo,
mlp.layernorm of the residual sum). sentence-transformers' mean / cls pooling and Normalize after it.

Run with any Python holding numpy, safetensors and tokenizers (the tokenizer conformance venv has them):

    PYTHON tests/reference/jina/record_jina.py

Writes, beside this script:
  models/<case>/  tiny random JinaBERT folders: config.json as jina-embeddings-v2 writes it (model_type bert,
                  position_embedding_type alibi, feed_forward_type geglu), model.safetensors (float32; one
                  case under the "bert." prefix of the masked-LM checkpoints), vocab.txt, tokenizer_config.json,
                  the sentence-transformers files
  jina.json       per case: ids, lengths, the valid hidden rows of a right-padded batch and the pooled
                  outputs, in float64 on the float32 weights; for the text case also texts, the `tokenizers`
                  library's ids and the embeddings of those ids
"""
import json
import math
import os
import shutil

import numpy as np
from safetensors.numpy import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")
TEXTS = ["The cat sat on the mat.", "A dog runs in the park", "cats and dogs", "PARK", "mat, mat; mat!", ""]
WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "runs", "in", "park", "and", "##s", ".", ",", ";", "!"]


def alibi_slopes(n):
    """_get_alibi_head_slopes of jina-bert-implementation (alibi_head_slopes in TEI's alibi.rs)."""
    def power_of_2(m):
        start = 2 ** (-(2 ** -(math.log2(m) - 3)))
        return [start * start ** i for i in range(m)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    p = 2 ** math.floor(math.log2(n))
    return power_of_2(p) + alibi_slopes(2 * p)[0::2][: n - p]


_erf = np.frompyfunc(math.erf, 1, 1)


def gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))


def layernorm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def forward(W, cfg, ids, lengths):
    """The last hidden state [B, S, H] of a right-padded batch (token type 0), float64."""
    H, NH, I, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["intermediate_size"], cfg["layer_norm_eps"]
    D = H // NH
    B, S = ids.shape
    x = W["embeddings.word_embeddings.weight"][ids] + W["embeddings.token_type_embeddings.weight"][0]
    x = layernorm(x, W["embeddings.LayerNorm.weight"], W["embeddings.LayerNorm.bias"], eps)
    dist = np.abs(np.arange(S)[:, None] - np.arange(S)[None, :]).astype(np.float64)
    alibi = -np.asarray(alibi_slopes(NH))[:, None, None] * dist[None]  # [NH, S, S]
    keymask = np.where(np.arange(S)[None, :] < np.asarray(lengths)[:, None], 0.0, -np.inf)  # [B, S]
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        lin = lambda t, m: t @ W[p + m + ".weight"].T + W[p + m + ".bias"]
        heads = lambda t: t.reshape(B, S, NH, D).transpose(0, 2, 1, 3)
        q, k, v = (heads(lin(x, "attention.self." + m)) for m in ("query", "key", "value"))
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(D) + alibi[None] + keymask[:, None, None, :]
        s = np.exp(s - s.max(-1, keepdims=True))
        ctx = (s / s.sum(-1, keepdims=True)) @ v
        o = lin(ctx.transpose(0, 2, 1, 3).reshape(B, S, H), "attention.output.dense")
        a = layernorm(o + x, W[p + "attention.output.LayerNorm.weight"], W[p + "attention.output.LayerNorm.bias"], eps)
        h = a @ W[p + "mlp.gated_layers.weight"].T
        f = lin(gelu(h[..., :I]) * h[..., I:], "mlp.wo")
        x = layernorm(f + a, W[p + "mlp.layernorm.weight"], W[p + "mlp.layernorm.bias"], eps)
    return x


def pool(h, lengths, pooling, normalize):
    out = []
    for b, n in enumerate(lengths):
        v = h[b, 0] if pooling == "cls" else h[b, :n].mean(0)
        out.append(v / np.linalg.norm(v) if normalize else v)
    return np.stack(out)


def random_weights(cfg, seed):
    """O(1)-ish float32 weights (norm gammas around 1) so that every term matters."""
    rng = np.random.default_rng(seed)
    H, I, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    W = {}

    def dense(name, out, inp, bias=True):
        W[name + ".weight"] = rng.standard_normal((out, inp)) * (1.5 / math.sqrt(inp))
        if bias:
            W[name + ".bias"] = 0.3 * rng.standard_normal(out)

    def norm(name):
        W[name + ".weight"] = 1.0 + 0.3 * rng.standard_normal(H)
        W[name + ".bias"] = 0.3 * rng.standard_normal(H)

    W["embeddings.word_embeddings.weight"] = rng.standard_normal((V, H))
    W["embeddings.token_type_embeddings.weight"] = rng.standard_normal((cfg["type_vocab_size"], H))
    norm("embeddings.LayerNorm")
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        for m in ("query", "key", "value"):
            dense(p + "attention.self." + m, H, H)
        dense(p + "attention.output.dense", H, H)
        norm(p + "attention.output.LayerNorm")
        dense(p + "mlp.gated_layers", 2 * I, H, bias=False)
        dense(p + "mlp.wo", H, I)
        norm(p + "mlp.layernorm")
    # The float32 values the folder holds are the reference's inputs.
    return {k: v.astype(np.float32).astype(np.float64) for k, v in W.items()}


def config(**kw):
    c = dict(_name_or_path="jinaai/jina-bert-implementation", architectures=["JinaBertForMaskedLM"],
             auto_map={"AutoConfig": "jinaai/jina-bert-implementation--configuration_bert.JinaBertConfig",
                       "AutoModel": "jinaai/jina-bert-implementation--modeling_bert.JinaBertModel"},
             model_type="bert", attention_probs_dropout_prob=0.0, attn_implementation="torch", emb_pooler="mean",
             feed_forward_type="geglu", hidden_act="gelu", hidden_dropout_prob=0.1, initializer_range=0.02,
             layer_norm_eps=1e-12, max_position_embeddings=8192, pad_token_id=0, position_embedding_type="alibi",
             type_vocab_size=2, torch_dtype="float32", vocab_size=len(vocabulary(120)))
    c.update(kw)
    return c


def vocabulary(size):
    toks = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS
    return toks + [f"w{i}" for i in range(size - len(toks))]


def write_folder(d, cfg, W, prefix, pooling, normalize):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    save_file({prefix + k: v.astype(np.float32) for k, v in W.items()}, os.path.join(d, "model.safetensors"))
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        f.write("\n".join(vocabulary(cfg["vocab_size"])) + "\n")
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "BertTokenizer", "do_lower_case": True, "model_max_length": 8192}, f, indent=2)
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
        os.makedirs(os.path.join(d, "2_Normalize"))
    with open(os.path.join(d, "modules.json"), "w") as f:
        json.dump(modules, f, indent=2)
    os.makedirs(os.path.join(d, "1_Pooling"))
    with open(os.path.join(d, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": cfg["hidden_size"], "pooling_mode_cls_token": pooling == "cls",
                   "pooling_mode_mean_tokens": pooling == "mean", "pooling_mode_max_tokens": False,
                   "pooling_mode_mean_sqrt_len_tokens": False}, f, indent=2)
    with open(os.path.join(d, "sentence_bert_config.json"), "w") as f:
        json.dump({"max_seq_length": 8192, "do_lower_case": False}, f, indent=2)


def batch(vocab, lengths, seed):
    rng = np.random.default_rng(seed)
    ids = np.zeros((len(lengths), max(lengths)), dtype=np.int64)
    for b, n in enumerate(lengths):
        ids[b, :n] = rng.integers(5, vocab, size=n)
        ids[b, 0], ids[b, n - 1] = 2, 3  # [CLS] ... [SEP]
    return ids


CASES = [
    # Three heads (ALiBi's slopes for a head count that is not a power of two), intermediate 40.
    dict(name="heads3_mean", seed=1, prefix="", pooling="mean", normalize=True, lengths=[37, 5, 20, 1, 30],
         config=config(hidden_size=48, num_attention_heads=3, num_hidden_layers=2, intermediate_size=40),
         texts=True),
    # The masked-LM checkpoint's "bert." prefix, four heads, cls pooling, a 300-token sequence (several
    # key tiles; distant keys weigh nothing under the steepest slope).
    dict(name="heads4_cls_prefixed", seed=2, prefix="bert.", pooling="cls", normalize=False,
         lengths=[300, 17, 129],
         config=config(hidden_size=64, num_attention_heads=4, num_hidden_layers=3, intermediate_size=72,
                       layer_norm_eps=1e-5)),
]


def record(case):
    d = os.path.join(MODELS, case["name"])
    cfg = case["config"]
    W = random_weights(cfg, case["seed"])
    write_folder(d, cfg, W, case["prefix"], case["pooling"], case["normalize"])
    lengths = case["lengths"]
    ids = batch(cfg["vocab_size"], lengths, case["seed"] + 100)
    h = forward(W, cfg, ids, lengths)
    rec = dict(name=case["name"], dir="models/" + case["name"], ids=ids.tolist(), lengths=lengths,
               hidden=[h[b, :n].tolist() for b, n in enumerate(lengths)],
               pooled=pool(h, lengths, case["pooling"], case["normalize"]).tolist())
    if case.get("texts"):
        from tokenizers import BertWordPieceTokenizer
        tok = BertWordPieceTokenizer(os.path.join(d, "vocab.txt"), lowercase=True)
        enc = [tok.encode(t).ids for t in TEXTS]
        lens = [len(e) for e in enc]
        ids_t = np.zeros((len(enc), max(lens)), dtype=np.int64)
        for b, e in enumerate(enc):
            ids_t[b, :len(e)] = e
        ht = forward(W, cfg, ids_t, lens)
        rec["texts"] = dict(texts=TEXTS, ids=enc, pooled=pool(ht, lens, case["pooling"], case["normalize"]).tolist())
    return rec


def main():
    import tokenizers
    out = dict(versions=dict(numpy=np.__version__, tokenizers=tokenizers.__version__),
               notes="float64 NumPy JinaBERT (this script's forward) on float32 weights; see the docstring",
               cases=[record(c) for c in CASES])
    with open(os.path.join(HERE, "jina.json"), "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
