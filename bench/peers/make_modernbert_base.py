#!/usr/bin/env python3
"""A ModernBERT-base-shaped model folder with real weights for the peer benchmark, and its ONNX export.

    PYTHON bench/peers/make_modernbert_base.py OUT_DIR

PYTHON: a venv with torch 2.x, transformers 5.x, onnx and onnxscript (the one tests/reference/modernbert
records with, plus `pip install onnx onnxscript`). Writes OUT_DIR/config.json (bench/models/
modernbert-base-shaped's: 22 layers, hidden 768, window 128, thetas 160000 / 10000), OUT_DIR/model.safetensors
(encc's --weights=random:7 generator, ported in tests/reference/modernbert/record_modernbert.py: the same
weights the tests compare with transformers) and OUT_DIR/model.onnx (torch.onnx.export of ModernBertModel, eager
attention, TorchScript exporter, opset 17, dynamic batch and sequence; inputs input_ids and attention_mask, output
last_hidden_state). The export is traced on a padded batch longer than the window, and then checked: ONNX
Runtime's output against transformers' on a padded batch of lengths 300 and 40, and on one sequence of 1000.
"""
import json
import os
import shutil
import sys

import numpy as np
import torch
from safetensors.numpy import save_file
from transformers import ModernBertConfig, ModernBertModel

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "reference", "modernbert"))
from record_modernbert import BASE_SEED, random_tensor  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
shutil.copy(os.path.join(here, "..", "models", "modernbert-base-shaped", "config.json"), out)
with open(os.path.join(out, "config.json")) as f:
    cfg = json.load(f)
model = ModernBertModel(ModernBertConfig(**cfg)).eval()
weights = {n: random_tensor(n, tuple(p.shape), BASE_SEED) for n, p in model.state_dict().items()}
save_file(weights, os.path.join(out, "model.safetensors"))
model = ModernBertModel.from_pretrained(out, attn_implementation="eager").eval()


def inputs(lengths):
    S = max(lengths)
    ids = torch.full((len(lengths), S), 50283, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for b, n in enumerate(lengths):
        ids[b, :n] = torch.arange(n) * 7919 % 20000 + 1000
        mask[b, :n] = 1
    return ids, mask


onnx_path = os.path.join(out, "model.onnx")
torch.onnx.export(model, inputs([300, 200]), onnx_path + ".partial", input_names=["input_ids", "attention_mask"],
                  output_names=["last_hidden_state"],
                  dynamic_axes={"input_ids": {0: "b", 1: "s"}, "attention_mask": {0: "b", 1: "s"},
                                "last_hidden_state": {0: "b", 1: "s"}},
                  opset_version=17, dynamo=False)
os.replace(onnx_path + ".partial", onnx_path)

import onnxruntime as ort  # noqa: E402

sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
for lengths in ([300, 40], [1000]):
    ids, mask = inputs(lengths)
    with torch.no_grad():
        want = model(input_ids=ids, attention_mask=mask).last_hidden_state.numpy()
    got = sess.run(None, {"input_ids": ids.numpy(), "attention_mask": mask.numpy()})[0]
    valid = mask.numpy().astype(bool)
    err = np.abs(got[valid] - want[valid]).max() / np.abs(want[valid]).max()
    print(f"ONNX Runtime vs transformers, lengths {lengths}: max |err| / max |ref| = {err:.2e}")
    if not err < 1e-4:
        sys.exit(f"the ONNX export computes something else (error {err:.2e})")
print(f"wrote {out}/config.json, model.safetensors, model.onnx (torch {torch.__version__})")
