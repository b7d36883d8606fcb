#!/opt/encc-ref/bin/python
"""Records PyTorch reference outputs that the C++ tests compare against.

Run (from the repository root, after building make-tiny-model):
  HF_HUB_OFFLINE=1 ENCC_MINILM_DIR=... ENCC_MPNET_DIR=... /opt/encc-ref/bin/python \
      tests/reference/record_minilm.py [--make-tiny-model BUILD/bin/make-tiny-model] \
      [--only minilm|mpnet|tiny]

Writes, next to this script:
  minilm_embeddings.json  all-MiniLM-L6-v2 via sentence-transformers on the 64
  mpnet_embeddings.json   (all-mpnet-base-v2: the same) sentences of
                          /work/shared/data/sentence-pairs.tsv
                          (both columns, '#' lines skipped): token ids, the
                          normalised embedding (7 significant digits) and, for
                          the first 4 sentences, the first 8 values of tokens 0
                          and 1 of the transformer's last hidden state.
  tiny_torch.json         tiny random models written by make-tiny-model, run
                          through transformers in float64 (last hidden state of
                          the valid rows, pooled + normalised), plus
                          sentence-transformers (float32) on the first one.
The product never uses Python; this only produces test data.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
import sentence_transformers  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PAIRS = "/work/shared/data/sentence-pairs.tsv"


def versions():
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "sentence_transformers": sentence_transformers.__version__,
        "numpy": np.__version__,
    }


def g7(x):
    return float(f"{float(x):.7g}")


def read_sentences(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != 3:
                sys.exit(f"{path}: expected 3 tab-separated fields, got {len(fields)}: {line!r}")
            out += [fields[1], fields[2]]
    return out


def record_sentence_model(model_dir, pairs_path, name):
    model = SentenceTransformer(model_dir, device="cpu")
    model.eval()
    sentences = read_sentences(pairs_path)
    # convert_to_tensor: this torch build cannot talk to the installed numpy 2.x.
    emb = model.encode(sentences, batch_size=16, convert_to_tensor=True).tolist()
    transformer = model[0].auto_model
    tok = model.tokenizer
    records = []
    for i, text in enumerate(sentences):
        ids = tok(text)["input_ids"]
        rec = {"text": text, "ids": ids, "embedding": [g7(v) for v in emb[i]]}
        if i < 4:
            with torch.no_grad():
                hs = transformer(input_ids=torch.tensor([ids]),
                                 attention_mask=torch.ones(1, len(ids), dtype=torch.long)
                                 ).last_hidden_state[0]
            rec["hidden_head"] = [[g7(v) for v in hs[t, :8].tolist()] for t in (0, 1)]
        records.append(rec)
    return {
        "model": "sentence-transformers/" + name,
        "source": os.path.basename(pairs_path),
        "versions": versions(),
        "notes": "embedding: SentenceTransformer.encode (float32, normalised, batch 16); "
                 "ids: model tokenizer with its special tokens; hidden_head: last_hidden_state[token][0:8] "
                 "for tokens 0 and 1, unpadded single-sentence run",
        "sentences": records,
    }


# Tiny models: spec keys are make-tiny-model's flags (without '--').
TINY_CASES = [
    {"name": "bert_gelu_mean",
     "spec": {"model-type": "bert", "hidden": 32, "layers": 2, "heads": 4, "intermediate": 64,
              "vocab": 120, "max-positions": 32, "act": "gelu", "seed": 7, "pooling": "mean"},
     "ids": [[2, 45, 77, 9, 101, 3], [2, 60, 33, 3, 0, 0]], "lengths": [6, 4],
     "st_sentences": ["the cat sits on the mat.", "hello world"]},
    {"name": "bert_prefix_gelu_new_cls",
     "spec": {"model-type": "bert", "hidden": 24, "layers": 1, "heads": 2, "intermediate": 48,
              "vocab": 100, "max-positions": 16, "act": "gelu_new", "seed": 3, "pooling": "cls",
              "weight-prefix": "bert."},
     "ids": [[2, 10, 20, 30, 3], [2, 99, 3, 0, 0]], "lengths": [5, 3]},
    # Sequences of 120 and 97 tokens: relative distances past every bucket
    # boundary (8 .. 91) in both directions.
    {"name": "mpnet_gelu_mean",
     "spec": {"model-type": "mpnet", "hidden": 16, "layers": 2, "heads": 2, "intermediate": 32,
              "vocab": 120, "max-positions": 130, "act": "gelu", "seed": 13, "pooling": "mean"},
     "ids": [[0] + [5 + (7 * t) % 115 for t in range(118)] + [2],
             [0] + [5 + (11 * t) % 115 for t in range(95)] + [2] + [1] * 23],
     "lengths": [120, 97]},
    {"name": "roberta_tanh_mean_f16",
     "spec": {"model-type": "roberta", "hidden": 32, "layers": 2, "heads": 2, "intermediate": 64,
              "vocab": 110, "max-positions": 20, "act": "gelu_pytorch_tanh", "seed": 11,
              "pooling": "mean", "dtype": "F16"},
     "ids": [[0, 40, 41, 42, 43, 2], [0, 70, 2, 1, 1, 1]], "lengths": [6, 3]},
]


def spec_args(spec):
    args = []
    for k, v in spec.items():
        args.append(f"--{k}={v}")
    return args


def record_tiny(make_tiny_model):
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in TINY_CASES:
            d = os.path.join(tmp, case["name"])
            subprocess.run([make_tiny_model, d] + spec_args(case["spec"]), check=True)
            model = transformers.AutoModel.from_pretrained(
                d, add_pooling_layer=False, attn_implementation="eager")
            model = model.double().eval()
            ids = torch.tensor(case["ids"])
            lengths = case["lengths"]
            mask = torch.zeros_like(ids)
            for b, n in enumerate(lengths):
                mask[b, :n] = 1
            with torch.no_grad():
                hs = model(input_ids=ids, attention_mask=mask).last_hidden_state
            hidden, pooled = [], []
            for b, n in enumerate(lengths):
                valid = hs[b, :n]
                hidden.append(valid.tolist())
                p = valid[0] if case["spec"]["pooling"] == "cls" else valid.mean(0)
                pooled.append(torch.nn.functional.normalize(p, dim=0).tolist())
            rec = {"name": case["name"], "spec": case["spec"], "ids": case["ids"],
                   "lengths": lengths, "hidden": hidden, "pooled": pooled}
            if "st_sentences" in case:
                st = SentenceTransformer(d, device="cpu")
                tok = st.tokenizer(case["st_sentences"])["input_ids"]
                emb = st.encode(case["st_sentences"], convert_to_tensor=True).tolist()
                rec["st"] = [{"text": t, "ids": i, "embedding": e}
                             for t, i, e in zip(case["st_sentences"], tok, emb)]
            cases.append(rec)
    return {
        "versions": versions(),
        "notes": "transformers AutoModel in float64 (eager attention); hidden: valid rows only "
                 "[b][s < lengths[b]][H]; pooled: cls/mean of valid rows, L2-normalised; "
                 "st: SentenceTransformer (float32) on the written folder",
        "cases": cases,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--make-tiny-model",
                    default=os.path.join(os.environ.get("ENCC_BUILD", "/work/build-ref"),
                                         "bin", "make-tiny-model"))
    ap.add_argument("--minilm-dir", default=os.environ.get("ENCC_MINILM_DIR"))
    ap.add_argument("--mpnet-dir", default=os.environ.get("ENCC_MPNET_DIR"))
    ap.add_argument("--pairs", default=PAIRS)
    ap.add_argument("--only", choices=["minilm", "mpnet", "tiny"])
    args = ap.parse_args()
    torch.manual_seed(0)
    for key, name, model_dir, out in [
            ("minilm", "all-MiniLM-L6-v2", args.minilm_dir, "minilm_embeddings.json"),
            ("mpnet", "all-mpnet-base-v2", args.mpnet_dir, "mpnet_embeddings.json")]:
        if args.only not in (None, key):
            continue
        if not model_dir or not os.path.isfile(os.path.join(model_dir, "model.safetensors")):
            sys.exit(f"ENCC_{key.upper()}_DIR (or --{key}-dir) must point at the {name} folder")
        data = record_sentence_model(model_dir, args.pairs, name)
        with open(os.path.join(HERE, out), "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
            f.write("\n")
    if args.only in (None, "tiny"):
        if not os.access(args.make_tiny_model, os.X_OK):
            sys.exit(f"{args.make_tiny_model}: not executable (build the make-tiny-model target)")
        data = record_tiny(args.make_tiny_model)
        with open(os.path.join(HERE, "tiny_torch.json"), "w", encoding="utf-8") as f:
            json.dump(data, f, separators=(",", ":"))
            f.write("\n")


if __name__ == "__main__":
    main()
