#!/usr/bin/env python3
"""Record transformers' Llama, Mistral and Qwen2 outputs for encc's tests (families/Llama.cpp).

Run with a venv holding torch 2.x and transformers 5.x (tests/reference/modernbert/versions.txt):

    PYTHON tests/reference/llama/record_llama.py

Writes, beside this script:
  models/<case>/  tiny random folders (config.json, model.safetensors in float32 as the model class saves it,
                  the sentence-transformers files), O(1) random weights (record_qwen3.randomize_)
  llama.json      per case: the ids, lengths, and transformers' LlamaModel / MistralModel / Qwen2Model outputs
                  in float64 on the float32 weights (sdpa, the masks as shipped): hidden (the valid rows of a
                  right-padded batch) and pooled (the case's sentence-transformers pooling, then Normalize
                  where the case has it); the text case also the library's ids and pooled outputs of TEXTS
"""
import json
import os
import sys
import warnings

import numpy as np
import torch
import transformers
from transformers import LlamaConfig, LlamaModel, MistralConfig, MistralModel, Qwen2Config, Qwen2Model

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "qwen3"))
from record_qwen3 import record  # noqa: E402  (the folder, the batch, the texts: as Qwen3's cases)

warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()
MODELS = os.path.join(HERE, "models")
MISTRAL_TOKENIZER = os.path.join(HERE, "..", "..", "tokenizer", "spbpe", "tokenizer-mistral.json")
COMMON = dict(vocab_size=300, max_position_embeddings=128, rms_norm_eps=1e-6, hidden_act="silu",
              tie_word_embeddings=False, pad_token_id=0, bos_token_id=1, eos_token_id=2)

CASES = [
    # Llama: 4 query heads over 2 key/value heads of head_dim 24 on hidden 64, q/k/v/o biases
    # (attention_bias), last-token pooling + Normalize.
    dict(name="llama_gqa_bias_last", seed=31, cls=LlamaModel, pooling="last", normalize=True,
         config=LlamaConfig(**COMMON, hidden_size=64, intermediate_size=80, num_hidden_layers=3,
                            num_attention_heads=4, num_key_value_heads=2, head_dim=24, attention_bias=True,
                            rope_parameters={"rope_type": "default", "rope_theta": 500000.0})),
    # Mistral: a sliding window of 7 on every layer, one key/value head for six query heads of head_dim 8,
    # mean pooling without Normalize.
    dict(name="mistral_sliding_mean", seed=32, cls=MistralModel, pooling="mean", normalize=False,
         config=MistralConfig(**COMMON, hidden_size=48, intermediate_size=56, num_hidden_layers=2,
                              num_attention_heads=6, num_key_value_heads=1, head_dim=8, sliding_window=7,
                              rope_parameters={"rope_type": "default", "rope_theta": 10000.0})),
    # Qwen2: q/k/v biases (o without), sliding-window layers from layer 1 on (window 9), 3 query heads over
    # 1 key/value head, last-token pooling + Normalize.
    dict(name="qwen2_bias_sliding_last", seed=33, cls=Qwen2Model, pooling="last", normalize=True,
         config=Qwen2Config(**COMMON, hidden_size=48, intermediate_size=40, num_hidden_layers=3,
                            num_attention_heads=3, num_key_value_heads=1, use_sliding_window=True,
                            sliding_window=9, max_window_layers=1,
                            rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})),
    # Text in: Mistral with the non-legacy Llama / Mistral tokenizer.json (no normalizer, Metaspace
    # prepending first, <bos> $A; tests/tokenizer/spbpe/tokenizer-mistral.json), mean pooling + Normalize.
    dict(name="mistral_text", seed=34, cls=MistralModel, pooling="mean", normalize=True,
         tokenizer=MISTRAL_TOKENIZER, record_prompts=False,
         config=MistralConfig(**dict(COMMON, vocab_size=2261), hidden_size=32, intermediate_size=48,
                              num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                              sliding_window=None, rope_parameters={"rope_type": "default", "rope_theta": 10000.0})),
]


def main():
    cases = [record(c, MODELS) for c in CASES]
    out = dict(versions=dict(torch=torch.__version__, transformers=transformers.__version__, numpy=np.__version__),
               notes="transformers LlamaModel / MistralModel / Qwen2Model float64 (sdpa, causal or sliding masks as "
                     "shipped, RoPE cos/sin in float32) on float32 weights, right padding; hidden: valid rows "
                     "[b][s < lengths[b]][H]; pooled: the case's sentence-transformers pooling (lasttoken: row "
                     "lengths[b] - 1) and Normalize",
               cases=cases)
    with open(os.path.join(HERE, "llama.json"), "w") as f:
        json.dump(out, f)
    for c in cases:
        print(c["name"], "recorded")


if __name__ == "__main__":
    main()
