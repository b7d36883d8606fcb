#!/opt/encc-ref/bin/python
"""Records sentence-transformers CrossEncoder scores for tiny cross-encoders.

Run (from the repository root, after building make-tiny-model):
  /opt/encc-ref/bin/python tests/reference/record_cross_encoder.py \
      --make-tiny-model BUILD/bin/make-tiny-model

Writes cross_encoder.json next to this script: per case the make-tiny-model
flags of a BertForSequenceClassification folder (WordPiece vocab.txt, two
token types), the text pairs, what the fast tokenizer gives for each pair
(input_ids, token_type_ids) and CrossEncoder.predict's scores (float32 torch;
sigmoid for one label, identity for more, the CrossEncoder defaults).
The product never uses Python; this only produces test data.
"""
import argparse
import json
import os
import platform
import subprocess
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import sentence_transformers  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from sentence_transformers import CrossEncoder  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

PAIRS = [
    ["how old is the cat", "the cat is two years old"],
    ["hello world", "the man is eating food in the park with a dog and it was a good day"],
    ["what is this", "this"],
    ["the dog sits on the mat", "a cat sits on the mat"],
    ["Playing in the park", "they play in the old park at night, with the new dog"],
    # Longer than the compiled 32 tokens: longest_first truncation cuts the longer text.
    ["is she eating", " ".join(["the food was good and the day was new"] * 6)],
]

CASES = [
    {"name": "bert_1label", "flags": ["--hidden", "64", "--heads", "2", "--layers", "2", "--intermediate", "136",
                                      "--pooling", "none", "--num-labels", "1", "--seed", "31",
                                      "--weight-prefix", "bert."]},
    {"name": "bert_3labels_gelu_new", "flags": ["--hidden", "32", "--heads", "4", "--layers", "2",
                                                "--intermediate", "64", "--pooling", "none", "--num-labels", "3",
                                                "--act", "gelu_new", "--seed", "32", "--weight-prefix", "bert."]},
]
MAX_LENGTH = 32


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--make-tiny-model", required=True)
    args = ap.parse_args()
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in CASES:
            d = os.path.join(tmp, c["name"])
            subprocess.run([args.make_tiny_model, d] + c["flags"], check=True)
            model = CrossEncoder(d, max_length=MAX_LENGTH, device="cpu")
            scores = model.predict(PAIRS, convert_to_numpy=True)
            tok = model.tokenizer(PAIRS, truncation="longest_first", max_length=MAX_LENGTH)
            cases.append({
                "name": c["name"], "flags": c["flags"], "max_length": MAX_LENGTH, "pairs": PAIRS,
                "input_ids": tok["input_ids"], "token_type_ids": tok["token_type_ids"],
                "scores": [[float(v) for v in (row if hasattr(row, "__len__") else [row])] for row in scores],
            })
    out = {
        "versions": {"python": platform.python_version(), "torch": torch.__version__,
                     "transformers": transformers.__version__,
                     "sentence_transformers": sentence_transformers.__version__},
        "notes": "CrossEncoder(folder, max_length).predict(pairs) in float32; input_ids/token_type_ids from its "
                 "fast tokenizer with truncation=longest_first",
        "cases": cases,
    }
    with open(os.path.join(HERE, "cross_encoder.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
