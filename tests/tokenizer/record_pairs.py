#!/usr/bin/env python3
"""Text-pair reference data for the WordPiece and byte-level BPE tokenizers, from `tokenizers`.

Writes tests/tokenizer/pairs-expected.json: for the sentence pairs (and cross-pairs up to 50),
Tokenizer.encode(a, b) ids and type_ids without truncation, with longest_first at max_length 12
and 20, and only_second at 24 (an entry {"error": ...} where the library refuses), for:
  wordpiece  all-MiniLM-L6-v2's tokenizer.json (BertProcessing-style [CLS] a [SEP] b [SEP],
             type ids 0 then 1), given as MINILM_DIR;
  bpe        tests/tokenizer/bpe/tokenizer.json (RobertaProcessing: <s> a </s></s> b </s>);
  variant    tests/tokenizer/bpe/tokenizer-variant.json (TemplateProcessing).
The Unigram files' pairs are in unigram/expected.json (record_unigram.py), same layout.

Usage (a venv with `tokenizers`): python tests/tokenizer/record_pairs.py MINILM_DIR
"""
import json
import os
import sys

import tokenizers
from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
PAIRS = os.path.join(os.path.dirname(HERE), "reference", "sentence-pairs.tsv")
CASES = [(None, None), ("longest_first", 12), ("longest_first", 20), ("only_second", 24)]


def sentence_pairs():
    out = []
    with open(PAIRS, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.strip() and not line.startswith("#"):
                cols = line.split("\t")
                out.append((cols[1], cols[2]))
    out += [(out[i][0], out[(i + 7) % len(out)][1]) for i in range(50 - len(out))]
    # Edge cases: an empty side, special tokens in the text, a long second text.
    out += [("", "hello"), ("hello", ""), ("<mask> [SEP] a", "[CLS] </s> b"),
            ("short", " ".join(["word"] * 40)), (" ".join(["word"] * 40), "short")]
    return out


def encode(tok, a, b, strategy, max_len):
    if strategy is None:
        tok.no_truncation()
    else:
        tok.enable_truncation(max_len, strategy=strategy)
    try:
        e = tok.encode(a, b)
    except Exception as err:  # the library's truncation errors
        return {"error": str(err)}
    return {"ids": e.ids, "type_ids": e.type_ids}


def main():
    files = {"wordpiece": os.path.join(sys.argv[1], "tokenizer.json"),
             "bpe": os.path.join(HERE, "bpe", "tokenizer.json"),
             "variant": os.path.join(HERE, "bpe", "tokenizer-variant.json")}
    toks = {k: Tokenizer.from_file(v) for k, v in files.items()}
    for t in toks.values():
        t.no_padding()
    entries = []
    for a, b in sentence_pairs():
        for strategy, max_len in CASES:
            e = {"a": a, "b": b, "strategy": strategy, "max_len": max_len}
            for k, t in toks.items():
                e[k] = encode(t, a, b, strategy, max_len)
            entries.append(e)
    out = {"generator": "tests/tokenizer/record_pairs.py", "tokenizers": tokenizers.__version__,
           "files": {"wordpiece": "all-MiniLM-L6-v2/tokenizer.json", "bpe": "bpe/tokenizer.json",
                     "variant": "bpe/tokenizer-variant.json"},
           "pairs": entries}
    with open(os.path.join(HERE, "pairs-expected.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    errors = sum(1 for e in entries for k in toks if "error" in e[k])
    print(f"{len(entries)} pair encodings x {len(toks)} tokenizers ({errors} refused)")


if __name__ == "__main__":
    main()
