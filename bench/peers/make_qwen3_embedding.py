#!/usr/bin/env python3
"""A Qwen3-Embedding-0.6B-shaped model folder with weights for the peer benchmark, and its ONNX export.

    PYTHON bench/peers/make_qwen3_embedding.py OUT_DIR

PYTHON: a venv with torch 2.x, transformers 5.x, onnx and onnxscript (tests/reference/qwen3's). Writes
OUT_DIR/config.json (bench/models/qwen3-embedding-0.6b-shaped's), OUT_DIR/model.safetensors (encc's
random-weights generator, ported in tests/reference/modernbert/record_modernbert.py, seed 9: the generator
the tests compare with transformers; gate_up_proj generated whole and split), the sentence-transformers files
(last-token pooling, Normalize) and OUT_DIR/model.onnx + model.onnx.data (torch.onnx.export of Qwen3Model,
eager attention, opset 17, dynamic batch and sequence; inputs input_ids and attention_mask, output
last_hidden_state, external data: the weights pass ONNX's 2 GB limit). The export is checked: ONNX Runtime's
output against transformers' on a padded batch of lengths 100 and 17.
"""
import json
import os
import re
import shutil
import sys

import numpy as np
import torch
from safetensors.numpy import save_file
from transformers import Qwen3Config, Qwen3Model

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "reference", "modernbert"))
from record_modernbert import random_tensor  # noqa: E402

SEED = 9
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
shutil.copy(os.path.join(here, "..", "models", "qwen3-embedding-0.6b-shaped", "config.json"), out)
with open(os.path.join(out, "config.json")) as f:
    cfg = json.load(f)
with open(os.path.join(out, "modules.json"), "w") as f:
    json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}], f)
os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
with open(os.path.join(out, "1_Pooling", "config.json"), "w") as f:
    json.dump({"word_embedding_dimension": 1024, "pooling_mode_lasttoken": True}, f)

if not os.path.exists(os.path.join(out, "model.safetensors")):
    model = Qwen3Model(Qwen3Config(**cfg)).eval()
    I, weights = cfg["intermediate_size"], {}
    for name, p in model.state_dict().items():
        if ".mlp.gate_proj." in name or ".mlp.up_proj." in name:
            t = random_tensor(re.sub(r"\.(gate|up)_proj\.", ".gate_up_proj.", name), (2 * I, p.shape[1]), SEED)
            weights[name] = np.ascontiguousarray(t[:I] if ".gate_proj." in name else t[I:])
        else:
            weights[name] = random_tensor(name, tuple(p.shape), SEED)
    del model
    save_file(weights, os.path.join(out, "model.safetensors"))
    del weights
model = Qwen3Model.from_pretrained(out, attn_implementation="eager").eval()


def inputs(lengths):
    S = max(lengths)
    ids = torch.zeros((len(lengths), S), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for b, n in enumerate(lengths):
        ids[b, :n] = torch.arange(n) * 7919 % 20000 + 1000
        mask[b, :n] = 1
    return ids, mask


class Encoder(torch.nn.Module):
    """Qwen3Model's last hidden state, without a cache (the tracer's view of the model's arguments)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask):
        return self.m(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state


onnx_path = os.path.join(out, "model.onnx")
if not os.path.exists(onnx_path):
    torch.onnx.export(Encoder(model), inputs([40, 23]), onnx_path, input_names=["input_ids", "attention_mask"],
                      output_names=["last_hidden_state"],
                      dynamic_axes={"input_ids": {0: "b", 1: "s"}, "attention_mask": {0: "b", 1: "s"},
                                    "last_hidden_state": {0: "b", 1: "s"}},
                      opset_version=17, dynamo=False, external_data=True)

import onnxruntime as ort  # noqa: E402

sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
ids, mask = inputs([100, 17])
with torch.no_grad():
    want = model(input_ids=ids, attention_mask=mask).last_hidden_state.numpy()
got = sess.run(None, {"input_ids": ids.numpy(), "attention_mask": mask.numpy()})[0]
valid = mask.numpy().astype(bool)
err = np.abs(got[valid] - want[valid]).max() / np.abs(want[valid]).max()
print(f"ONNX Runtime vs transformers, lengths [100, 17]: max |err| / max |ref| = {err:.2e}")
if not err < 1e-4:
    sys.exit(f"the ONNX export computes something else (error {err:.2e})")
print(f"wrote {out}/config.json, model.safetensors, model.onnx (torch {torch.__version__})")
