#!/usr/bin/env python3
"""Positions of a literal pad id inside a text (issue 41, item 2), recorded from transformers.

RoBERTa, XLM-R, CamemBERT and MPNet number positions with create_position_ids_from_input_ids: a pad id
takes position pad_token_id and the tokens after it count only the non-pad ones. Tiny random models
written by make-tiny-model (flags in each case) run through transformers' AutoModel in float64 on a
right-padded batch whose texts hold pad ids (1) among their tokens; pad_positions.json keeps the ids,
lengths and the last hidden state of the valid rows.

    PYTHON tests/reference/record_pad_positions.py --make-tiny-model BUILD/bin/make-tiny-model

PYTHON: a venv with torch and transformers (tests/reference/modernbert/versions.txt's).
"""
import argparse
import json
import os
import platform
import subprocess
import tempfile

import torch
import transformers
from transformers import AutoModel

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = [
    {"name": "roberta", "flags": ["--model-type", "roberta", "--hidden", "32", "--heads", "2", "--layers", "2",
                                  "--intermediate", "40", "--max-positions", "40", "--seed", "41",
                                  "--pooling", "none"]},
    {"name": "xlm-roberta", "flags": ["--model-type", "xlm-roberta", "--hidden", "24", "--heads", "3", "--layers",
                                      "1", "--intermediate", "36", "--max-positions", "40", "--seed", "42",
                                      "--pooling", "none"]},
    {"name": "mpnet", "flags": ["--model-type", "mpnet", "--hidden", "32", "--heads", "4", "--layers", "2",
                                "--intermediate", "48", "--max-positions", "40", "--seed", "43",
                                "--pooling", "none"]},
]
# <s>=0, <pad>=1, </s>=2 in make-tiny-model's RoBERTa layout: pads inside texts, at the start, doubled.
IDS = [[0, 40, 1, 55, 66, 2, 1, 1], [0, 1, 1, 70, 71, 72, 2, 1], [0, 30, 31, 2, 1, 1, 1, 1], [0, 44, 1, 2, 1, 1, 1, 1]]
LENGTHS = [6, 7, 4, 4]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--make-tiny-model", required=True)
    args = ap.parse_args()
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in CASES:
            d = os.path.join(tmp, c["name"])
            subprocess.run([args.make_tiny_model, d] + c["flags"], check=True)
            model = AutoModel.from_pretrained(d, attn_implementation="eager", dtype=torch.float64).eval()
            ids = torch.tensor(IDS)
            mask = (torch.arange(ids.shape[1])[None, :] < torch.tensor(LENGTHS)[:, None]).long()
            with torch.no_grad():
                h = model(input_ids=ids, attention_mask=mask).last_hidden_state
            cases.append({"name": c["name"], "flags": c["flags"], "ids": IDS, "lengths": LENGTHS,
                          "hidden": [h[b, :n].tolist() for b, n in enumerate(LENGTHS)]})
    out = {"versions": {"python": platform.python_version(), "torch": torch.__version__,
                        "transformers": transformers.__version__},
           "notes": "AutoModel (eager attention) in float64; hidden: valid rows [b][s < lengths[b]][H]",
           "cases": cases}
    with open(os.path.join(HERE, "pad_positions.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
