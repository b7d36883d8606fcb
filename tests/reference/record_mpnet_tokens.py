#!/usr/bin/env python3
"""Records the `tokenizers` library's ids for all-mpnet-base-v2's tokenizer.json (tests/reference/mpnet_tokens.json).

MPNet's fast tokenizer is WordPiece (BertNormalizer, BertPreTokenizer) with added tokens that
differ from BERT's: <mask> swallows the whitespace before it (lstrip), <unk> is matched on the
normalised (lowercased) text, and a pair is <s> a </s></s> b </s> with every token type 0
(RobertaProcessing). Inputs: the texts of tests/tokenizer/expected.json (the WordPiece test's
sentences and edge cases, and its sweep of single code points), the edge cases below around the
added tokens, and the sentence pairs of sentence-pairs.tsv plus edge pairs.

Usage (a venv with `tokenizers`):
  ENCC_MPNET_DIR=... python tests/reference/record_mpnet_tokens.py
"""
import json
import os
import sys

import tokenizers
from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

EDGE_CASES = [
    "<mask>", "a <mask> b", "a<mask>b", "a   <mask>", "a\t<mask>\n", "<MASK>", "< mask >",
    "<unk>", "<UNK>", "x <Unk> y", "[UNK]", "[unk]", "<s>", "</s>", "<S>", "a</s>b <s> c",
    "<pad>", "<PAD> x", "[CLS] [SEP] [MASK]", "<mask><mask>", "<unk><UNK>", "hello <mask>, <UNK>!",
    "Ünïcödé <UNK> café", "日本<unk>語", "emoji 😀 <mask> 👍🏽", "<mask\u00a0>", "\u00a0<mask>",
]


def pairs():
    out = []
    with open(os.path.join(HERE, "sentence-pairs.tsv"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.strip() and not line.startswith("#"):
                cols = line.split("\t")
                out.append((cols[1], cols[2]))
    out += [("", "hello"), ("hello", ""), ("<mask> </s> a", "<UNK> <s> b"), ("a <mask>", "<mask> b")]
    return out


def main():
    model_dir = os.environ.get("ENCC_MPNET_DIR")
    if not model_dir:
        sys.exit("set ENCC_MPNET_DIR to the all-mpnet-base-v2 folder")
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    expected = json.load(open(os.path.join(ROOT, "tests", "tokenizer", "expected.json"), encoding="utf-8"))
    # Every 7th code point of the sweep ("a" + chr(cp) + "b"; no surrogates).
    sweep = ["a" + chr(cp) + "b" for cp in expected["sweep"]["code_points"][::7] if not 0xD800 <= cp < 0xE000]
    texts = [c["text"] for c in expected["cases"]] + sweep + EDGE_CASES
    single = [{"text": t, "ids": tok.encode(t).ids} for t in texts]
    pair = []
    for a, b in pairs():
        e = tok.encode(a, b)
        pair.append({"a": a, "b": b, "ids": e.ids, "type_ids": e.type_ids})
    data = {
        "generator": "tests/reference/record_mpnet_tokens.py",
        "tokenizers": tokenizers.__version__,
        "file": "all-mpnet-base-v2/tokenizer.json",
        "notes": "Tokenizer.encode without truncation or padding; pairs: encode(a, b) ids and type_ids",
        "single": single,
        "pairs": pair,
    }
    with open(os.path.join(HERE, "mpnet_tokens.json"), "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(f"{len(single)} texts, {len(pair)} pairs")


if __name__ == "__main__":
    main()
