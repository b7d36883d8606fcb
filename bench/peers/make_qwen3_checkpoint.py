#!/usr/bin/env python3
"""A Qwen3-Embedding-shaped model folder with random weights in a chosen dtype, written without torch.

    PYTHON bench/peers/make_qwen3_checkpoint.py CONFIG_JSON OUT_DIR [--dtype bf16|f32] [--shard-gb N] [--seed S]

PYTHON: any Python 3 with numpy. For the compiler's memory and size measurements (issue 37, item 1: weights
kept as stored): the tensors Qwen3Model's state dict has (embed_tokens, per layer the four projections, q/k
norms, gate/up/down, two RMSNorms; norm), normal(0, 0.02) matrices and unit norms, written as safetensors in
`--dtype` (bf16: float32 values rounded to nearest even, as torch does), split into shards of at most
`--shard-gb` GB with a model.safetensors.index.json when there is more than one. Also config.json (the given
one, torch_dtype set to match) and the sentence-transformers files (last-token pooling, Normalize), as the
Qwen3-Embedding releases have. The values are for timing and memory only; accuracy is tested elsewhere
(tests/reference/qwen3).
"""
import argparse
import json
import os
import shutil

import numpy as np


def tensor_specs(cfg):
    H, I, L = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    heads, kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    D = cfg.get("head_dim", H // heads)
    yield "embed_tokens.weight", (cfg["vocab_size"], H)
    for i in range(L):
        p = f"layers.{i}."
        yield p + "input_layernorm.weight", (H,)
        yield p + "self_attn.q_proj.weight", (heads * D, H)
        yield p + "self_attn.k_proj.weight", (kv * D, H)
        yield p + "self_attn.v_proj.weight", (kv * D, H)
        yield p + "self_attn.o_proj.weight", (H, heads * D)
        yield p + "self_attn.q_norm.weight", (D,)
        yield p + "self_attn.k_norm.weight", (D,)
        yield p + "post_attention_layernorm.weight", (H,)
        yield p + "mlp.gate_proj.weight", (I, H)
        yield p + "mlp.up_proj.weight", (I, H)
        yield p + "mlp.down_proj.weight", (H, I)
    yield "norm.weight", (H,)


def values(shape, rng, dtype):
    """normal(0, 0.02) for matrices, ones for norms, as the stored dtype's little-endian bytes."""
    x = np.ones(shape, np.float32) if len(shape) == 1 else rng.standard_normal(shape, np.float32) * np.float32(0.02)
    if dtype == "f32":
        return x.tobytes()
    u = x.view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2").tobytes()  # nearest even; no NaNs here


def write_shard(path, entries, dtype):
    """entries: [(name, shape, bytes)] -> one safetensors file."""
    header, offset = {}, 0
    for name, shape, data in entries:
        header[name] = {"dtype": "BF16" if dtype == "bf16" else "F32", "shape": list(shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data section 8-byte aligned, as the safetensors library writes it
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for _, _, data in entries:
            f.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("config")
    ap.add_argument("out")
    ap.add_argument("--dtype", choices=["bf16", "f32"], default="bf16")
    ap.add_argument("--shard-gb", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=9)
    args = ap.parse_args()
    with open(args.config) as f:
        cfg = json.load(f)
    os.makedirs(args.out, exist_ok=True)
    cfg["torch_dtype"] = "bfloat16" if args.dtype == "bf16" else "float32"
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)

    rng = np.random.default_rng(args.seed)
    limit = int(args.shard_gb * 1e9)
    current, size, total = [], 0, 0
    for name, shape in tensor_specs(cfg):
        data = values(shape, rng, args.dtype)
        if current and size + len(data) > limit:  # written as it fills: memory holds one shard at most
            flush(current, args)
            current, size = [], 0
        current.append((name, shape, data))
        size += len(data)
        total += len(data)
    flush(current, args)
    finish(args, total)


written = []  # (file name, [tensor names])


def flush(entries, args):
    name = f"shard-{len(written) + 1:05d}.safetensors"
    write_shard(os.path.join(args.out, name), entries, args.dtype)
    written.append((name, [e[0] for e in entries]))
    print(f"{name}: {len(entries)} tensors, {sum(len(e[2]) for e in entries) / 1e9:.2f} GB", flush=True)


def finish(args, total):
    if len(written) == 1:
        os.replace(os.path.join(args.out, written[0][0]), os.path.join(args.out, "model.safetensors"))
    else:
        n = len(written)
        weight_map = {}
        for i, (name, tensors) in enumerate(written, 1):
            final = f"model-{i:05d}-of-{n:05d}.safetensors"
            os.replace(os.path.join(args.out, name), os.path.join(args.out, final))
            weight_map.update({t: final for t in tensors})
        with open(os.path.join(args.out, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=1)
    with open(os.path.join(args.out, "modules.json"), "w") as f:
        json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                   {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}],
                  f)
    os.makedirs(os.path.join(args.out, "1_Pooling"), exist_ok=True)
    with open(os.path.join(args.out, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": json.load(open(os.path.join(args.out, "config.json")))["hidden_size"],
                   "pooling_mode_lasttoken": True}, f)
    print(f"{args.out}: {total / 1e9:.2f} GB of {args.dtype} weights in {len(written)} file(s)")


if __name__ == "__main__":
    main()
