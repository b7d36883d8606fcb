#!/usr/bin/env python3
"""Literal special ids inside texts, for every family, recorded from transformers (issue 41's sweep).

A text can hold a special token literally ("hello <pad> world", "[CLS] inside", "<|endoftext|>"): the
tokenizer gives its id in the middle of the sequence. Families number positions differently around
such ids: RoBERTa, XLM-R, CamemBERT and MPNet skip pad ids (transformers'
create_position_ids_from_input_ids: a pad id takes position pad_token_id, the tokens after it count only
the non-pad ones), BERT and DistilBERT number every token, the rotary families (ModernBERT, Qwen3,
Gemma 3) count 0..S-1. encc numbered RoBERTa's in sequence (issue 41, item 2: 0.942 cosine on
all-mpnet-base-v2 for "hello <pad> world").

For each family a tiny random model (make-tiny-model flags, or a checked-in folder of
tests/reference/{modernbert,qwen3,gemma3}/models) runs through transformers' AutoModel in float64 (eager attention; sdpa for the checked-in folders, as
their own recorders) on a
right-padded batch whose rows hold every special id of the family (pad, unk, cls/bos, sep/eos, mask)
first, in the middle, last and doubled; special_ids.json keeps the ids, lengths and the last hidden
state of the valid rows.

    PYTHON tests/reference/record_special_ids.py --make-tiny-model BUILD/bin/make-tiny-model

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
SMALL = ["--hidden", "32", "--heads", "2", "--layers", "2", "--intermediate", "40", "--max-positions", "40",
         "--pooling", "none"]
# make-tiny-model's layouts: bert [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4; roberta <s>=0 <pad>=1 </s>=2 <unk>=3
# <mask>=4. The rest: (pad id, the special ids) from the folder's config and tokenizer.
CASES = [
    {"name": "bert", "flags": ["--model-type", "bert", "--seed", "51"] + SMALL, "pad": 0, "specials": [2, 3, 0, 4, 1]},
    {"name": "distilbert", "flags": ["--model-type", "distilbert", "--seed", "52"] + SMALL, "pad": 0,
     "specials": [2, 3, 0, 4, 1]},
    {"name": "roberta", "flags": ["--model-type", "roberta", "--seed", "41"] + SMALL, "pad": 1,
     "specials": [0, 2, 1, 4, 3]},
    {"name": "xlm-roberta", "flags": ["--model-type", "xlm-roberta", "--seed", "42"] + SMALL, "pad": 1,
     "specials": [0, 2, 1, 4, 3]},
    # CamemBERT: RoBERTa's layout under its own model type.
    {"name": "camembert", "flags": ["--model-type", "roberta", "--seed", "44"] + SMALL, "model_type": "camembert",
     "pad": 1, "specials": [0, 2, 1, 4, 3]},
    {"name": "mpnet", "flags": ["--model-type", "mpnet", "--seed", "43"] + SMALL, "pad": 1,
     "specials": [0, 2, 1, 4, 3]},
    # ModernBERT: [CLS]=2001 [SEP]=2002 [PAD]=2003 [MASK]=2004 [UNK]=2000 (the GPT-NeoX-style tokenizer).
    {"name": "modernbert", "dir": "modernbert/models/legacy_mean", "pad": 2003,
     "specials": [2001, 2002, 2003, 2004, 2000]},
    # Without a tokenizer: cls 1, sep 2, pad 0 (its config).
    {"name": "modernbert-biases", "dir": "modernbert/models/biases_cls", "pad": 0, "specials": [1, 2, 0]},
    # Qwen3 (causal): pad 0, bos 1, eos 2; Gemma 3: pad 0, eos 1, bos 2.
    {"name": "qwen3", "dir": "qwen3/models/gqa_last", "pad": 0, "specials": [1, 2, 0]},
    {"name": "qwen3-sliding", "dir": "qwen3/models/sliding_mqa", "pad": 0, "specials": [1, 2, 0]},
    {"name": "gemma3", "dir": "gemma3/models/bidirectional_mean", "pad": 0, "specials": [2, 1, 0]},
    {"name": "gemma3-causal", "dir": "gemma3/models/causal_last", "pad": 0, "specials": [2, 1, 0]},
]


def batch(pad, s):
    """Rows holding every special: first, in the middle, last, doubled; right-padded with `pad`."""
    s = (s * 2)[:5]
    rows = [[s[0], 40, s[1], 55, s[2], 66, s[4]], [s[1], s[1], 70, s[2], s[2], 71, s[3], s[4]],
            [s[2], s[3], s[4], s[0], 30], [s[4], 44, s[0]]]
    width = max(map(len, rows))
    return [r + [pad] * (width - len(r)) for r in rows], [len(r) for r in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--make-tiny-model", required=True)
    args = ap.parse_args()
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in CASES:
            if "flags" in c:
                d = os.path.join(tmp, c["name"])
                subprocess.run([args.make_tiny_model, d] + c["flags"], check=True, stdout=subprocess.DEVNULL)
                if "model_type" in c:
                    with open(os.path.join(d, "config.json")) as f:
                        cfg = json.load(f)
                    cfg["model_type"] = c["model_type"]
                    with open(os.path.join(d, "config.json"), "w") as f:
                        json.dump(cfg, f, indent=2)
            else:
                d = os.path.join(HERE, c["dir"])
            # eager for the BERT-like families; sdpa, as their own recorders, for the rotary ones
            # (ModernBERT's eager path turns a padded query row whose window is all padding into NaN,
            # which reaches the valid rows through V: 0 * NaN).
            attn = "eager" if "flags" in c else "sdpa"
            model = AutoModel.from_pretrained(d, attn_implementation=attn, dtype=torch.float64).eval()
            ids, lengths = batch(c["pad"], c["specials"])
            t = torch.tensor(ids)
            mask = (torch.arange(t.shape[1])[None, :] < torch.tensor(lengths)[:, None]).long()
            with torch.no_grad():
                h = model(input_ids=t, attention_mask=mask).last_hidden_state
            rec = {k: c[k] for k in ("name", "flags", "model_type", "dir") if k in c}
            rec.update(ids=ids, lengths=lengths, hidden=[h[b, :n].tolist() for b, n in enumerate(lengths)])
            cases.append(rec)
            print(c["name"], type(model).__name__)
    out = {"versions": {"python": platform.python_version(), "torch": torch.__version__,
                        "transformers": transformers.__version__},
           "notes": "AutoModel (eager attention; sdpa for the dir cases) in float64; hidden: valid rows [b][s < lengths[b]][H]; flags: "
                    "make-tiny-model's (then model_type written into config.json), dir: under tests/reference",
           "cases": cases}
    with open(os.path.join(HERE, "special_ids.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
