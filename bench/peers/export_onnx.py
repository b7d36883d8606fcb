#!/usr/bin/env python3
"""Exports a BERT-family (or MPNet, any AutoModel encoder) model folder to ONNX as compare.py does (inputs input_ids and
attention_mask, output last_hidden_state, dynamic batch and sequence, opset 14, eager
attention), for precision_peers.py.   export_onnx.py MODEL_DIR OUT.onnx
Needs torch and transformers (e.g. the venv tests/reference records with)."""
import os
import sys

import torch
from transformers import AutoModel

model_dir, out = sys.argv[1], sys.argv[2]
model = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()


class LastHiddenState(torch.nn.Module):
    """The encoder called with keywords (transformers 5's forward takes more positional
    arguments than 4.x's), returning last_hidden_state alone."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, input_ids, attention_mask):
        return self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


ids = torch.ones(2, 16, dtype=torch.long)
kwargs = {"dynamo": False} if "dynamo" in torch.onnx.export.__code__.co_varnames else {}
torch.onnx.export(LastHiddenState(model), (ids, torch.ones_like(ids)), out + ".partial",
                  input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
                  dynamic_axes={"input_ids": {0: "b", 1: "s"}, "attention_mask": {0: "b", 1: "s"},
                                "last_hidden_state": {0: "b", 1: "s"}},
                  opset_version=14, **kwargs)
os.replace(out + ".partial", out)
print(f"wrote {out} (torch {torch.__version__})")
