#!/usr/bin/env python3
"""Added tokens of every flag and literal special tokens in every position, recorded from `tokenizers`.

Issue 41, item 3: an added token with `normalized: true` is matched as the tokenizer's normalizer leaves
its content (the library normalises the content when it builds its matcher), so "COVID19" added to an
uncased BERT is found in "covid19" and in "COVID19". encc matched the raw content, which a lowercasing,
accent-stripping or NFKC normalizer never produces.

For each base tokenizer (WordPiece uncased: all-MiniLM-L6-v2's file; WordPiece cased: the same with
lowercase and strip_accents off; byte-level BPE without a normalizer, with NFC (GPT-NeoX style) and with
NFC + Qwen2's Split; Unigram with its precompiled NFKC charsmap) this adds the same tokens with every
combination of normalized / special / lstrip / rstrip, their contents chosen so normalizers change them
(case, accents, ligatures, fullwidth forms, CJK, a token the normalizer erases, a token that is a prefix of
another, one already in the vocabulary), and records the ids `Tokenizer.encode` gives (with the base's
special tokens added) for texts that hold those tokens and the base's own special tokens in every
position: alone, first, last, doubled, glued to words, between spaces, in other cases and forms.

added_tokens.json keeps, per base: how the test derives the tokenizer.json (the base file, the option
edits, and for the cased WordPiece a tokenizer_config.json that says so: transformers' BertTokenizerFast,
and encc, take do_lower_case from there), the added tokens as the library serialised them, and the texts with their ids. The test
(tests/e2e/AddedTokensTest.cpp) builds the same tokenizer.json, compiles a tiny model with it through encc
and compares the runtime's ids.

    PYTHON tests/tokenizer/record_added_tokens.py --minilm DIR

PYTHON: a venv with `tokenizers` (tests/reference/modernbert/versions.txt's version).
"""
import argparse
import itertools
import json
import os
import platform
import random
import unicodedata

import tokenizers
from tokenizers import AddedToken, Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))

# Contents the normalizers change or erase, and ones they leave alone.
CONTENTS = ["COVID19", "Hé", "ﬁx", "ＡＢＣ", "中文", "naïve", "XYZ", "\u200b", "Straße", "ab", "abc", "[ACT]",
            "<tag>", "İ", "e\u0301t"]


def bases(minilm):
    minilm_json = os.path.join(minilm, "tokenizer.json")
    return [
        {"name": "wordpiece-uncased", "file": "minilm", "edits": {}, "path": minilm_json, "model_type": "bert"},
        {"name": "wordpiece-cased", "file": "minilm", "edits": {"lowercase": False, "strip_accents": False},
         "tokenizer_config": {"do_lower_case": False, "strip_accents": False}, "path": minilm_json,
         "model_type": "bert"},
        {"name": "bpe", "file": "bpe/tokenizer.json", "edits": {}, "model_type": "roberta"},
        {"name": "bpe-nfc", "file": "bpe/tokenizer-neox.json", "edits": {}, "model_type": "roberta"},
        {"name": "bpe-qwen2", "file": "bpe/tokenizer-qwen2.json", "edits": {}, "model_type": "roberta"},
        {"name": "unigram", "file": "unigram/tokenizer.json", "edits": {}, "model_type": "xlm-roberta"},
    ]


def load(base):
    path = base.get("path") or os.path.join(HERE, base["file"])
    j = json.load(open(path, encoding="utf-8"))
    j["truncation"] = None
    j["padding"] = None
    for k, v in base["edits"].items():
        j["normalizer"][k] = v
    return j


def flag_sets():
    """Every (normalized, special, lstrip, rstrip) combination."""
    return list(itertools.product([False, True], repeat=4))


def add_tokens(tok):
    """CONTENTS, each under one flag combination in turn, plus every combination on one marker word."""
    combos = flag_sets()
    specs = []
    for i, content in enumerate(CONTENTS):
        specs.append((content, combos[(3 * i + 1) % len(combos)]))
    for k, combo in enumerate(combos):
        specs.append((f"Mark{k}x", combo))
    for content, (normalized, special, lstrip, rstrip) in specs:
        t = AddedToken(content, normalized=normalized, special=special, lstrip=lstrip, rstrip=rstrip,
                       single_word=False)
        (tok.add_special_tokens if special else tok.add_tokens)([t])
    return specs


def variants(s):
    out = {s, s.lower(), s.upper(), s.title(), s.casefold(), unicodedata.normalize("NFKC", s),
           unicodedata.normalize("NFD", s), "".join(c for c in unicodedata.normalize("NFD", s)
                                                    if unicodedata.category(c) != "Mn")}
    return sorted(out)


def texts_for(literals, rng):
    """Each literal alone, first, last, in the middle, doubled, glued, between spaces; then random mixes."""
    out = []
    words = ["hello", "world", "the", "a", "fix", "covid", "éte", "東京", "x1", "ok"]
    for lit in literals:
        out += [lit, lit + " world", "hello " + lit, "hello " + lit + " world", lit + lit, lit + " " + lit,
                "x" + lit + "y", "  " + lit + "  ", "\t" + lit + "\n", lit + ".", "(" + lit + ")"]
    for _ in range(400):
        parts = []
        for _ in range(rng.randint(1, 7)):
            parts.append(rng.choice(literals) if rng.random() < 0.5 else rng.choice(words))
            parts.append(rng.choice(["", " ", "  ", "\u3000", "-", "\n"]))
        out.append("".join(parts))
    seen, unique = set(), []
    for t in out:
        if t not in seen:
            seen.add(t)
            unique.append(t)
    return unique


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minilm", required=True, help="the all-MiniLM-L6-v2 folder (its tokenizer.json)")
    args = ap.parse_args()
    rng = random.Random(41)
    cases = []
    for base in bases(args.minilm):
        j = load(base)
        before = {a["content"] for a in j["added_tokens"]}
        base_specials = [a["content"] for a in j["added_tokens"]]
        tok = Tokenizer.from_str(json.dumps(j))
        specs = add_tokens(tok)
        added = [a for a in json.loads(tok.to_str())["added_tokens"] if a["content"] not in before]
        literals = sorted({v for content, _ in specs for v in variants(content)} |
                          {v for s in base_specials for v in variants(s)} | {" <mask>", " [MASK]"})
        texts = texts_for(literals, rng)
        ids = [e.ids for e in tok.encode_batch(texts)]
        cases.append({"name": base["name"], "file": base["file"], "edits": base["edits"],
                      "tokenizer_config": base.get("tokenizer_config"),
                      "model_type": base["model_type"], "added_tokens": added, "texts": texts, "ids": ids})
        print(f"{base['name']}: {len(added)} added tokens, {len(texts)} texts")
    out = {"versions": {"python": platform.python_version(), "tokenizers": tokenizers.__version__},
           "notes": "file 'minilm' is $ENCC_MINILM_DIR/tokenizer.json; edits go into its normalizer; truncation "
                    "and padding off; added_tokens appended to the file's; ids: Tokenizer.encode(text) with the "
                    "base's special tokens",
           "cases": cases}
    with open(os.path.join(HERE, "added_tokens.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
