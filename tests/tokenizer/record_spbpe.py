#!/usr/bin/env python3
"""SentencePiece-style BPE (characters, byte fallback) reference data, from the `tokenizers` library.

Gemma (EmbeddingGemma), Llama 2 and Mistral ship tokenizer.json files whose BPE model works on characters,
not GPT-2's byte alphabet: a character missing from the vocabulary becomes its UTF-8 bytes' <0xXX> tokens
(byte_fallback), spaces are "▁" (a Replace normalizer), and there is no pre-tokenizer (Llama 2: the
normalizer also prepends "▁") or a Split on " " merged with the previous piece (Gemma:
transformers' GemmaConverter / GemmaTokenizer). The hub is not reachable from here, so the files are built
the way those converters build them, on a vocabulary trained here.

Writes tests/tokenizer/spbpe/:
  tokenizer-gemma.json    <pad> <eos> <bos> <unk> <mask> (ids 0-4, added tokens), <0x00>..<0xFF> (5-260, in
                          the vocabulary), then ~1 700 pieces trained by `tokenizers` on
                          /usr/share/common-licenses and the sentence pairs (Metaspace words, so merges stay
                          within words as SentencePiece's do); BPE byte_fallback + fuse_unk, unk <unk>;
                          normalizer Replace " " -> "▁"; pre_tokenizer Split " " MergedWithPrevious;
                          TemplateProcessing <bos> $A <eos>. Only with --train: the file is committed.
  tokenizer-llama.json    the same vocabulary and merges as Llama 2 / Mistral files have them: normalizer
                          Sequence [Prepend "▁", Replace " " -> "▁"], no pre_tokenizer, TemplateProcessing
                          <bos> $A.
  tokenizer-nofallback.json  Llama's options without byte_fallback or fuse_unk: a character outside the
                          vocabulary is one <unk> each.
  tokenizer-mistral.json  the same vocabulary as transformers' non-legacy Llama / Mistral converters write it: no
                          normalizer, pre_tokenizer Metaspace "▁" prepend_scheme first, split false; their decoder
                          (Strip one leading space); TemplateProcessing <bos> $A.
  tokenizer-metaspace-split.json  Metaspace with prepend_scheme always and split true (a word before each "▁"),
                          <bos> $A <eos>.
  expected.json           Tokenizer.encode(text).ids for each file on the sentence pairs, edge cases and
                          600 seeded random strings over all of Unicode.

Usage (a venv with `tokenizers`; the version is recorded in expected.json):
  python tests/tokenizer/record_spbpe.py [--train]
"""
import argparse
import glob
import json
import os
import random
import sys

import tokenizers
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "reference"))
from sentence_pairs import sentences  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "spbpe")
SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>"]
BYTES = [f"<0x{b:02X}>" for b in range(256)]
SPACE = "\u2581"


def train():
    """Gemma's layout: specials, the byte tokens, then the trained pieces, ids in that order."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPACE, prepend_scheme="never")
    trainer = trainers.BpeTrainer(vocab_size=2000, show_progress=False)
    texts = sentences()
    for path in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="ignore") as f:
                texts += f.read().splitlines()
    tok.train_from_iterator(texts, trainer)
    trained = json.loads(tok.to_str())["model"]
    vocab = {}
    for piece in SPECIALS + BYTES + sorted(trained["vocab"], key=trained["vocab"].get):
        vocab.setdefault(piece, len(vocab))
    merges = [" ".join(m) if isinstance(m, list) else m for m in trained["merges"]]
    return vocab, merges


DECODER = [{"type": "Replace", "pattern": {"String": SPACE}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"}]


def metaspace(prepend_scheme, split):
    return {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": prepend_scheme, "split": split}


def build(vocab, merges, normalizer, pre_tokenizer, template, byte_fallback=True, fuse_unk=True, decoder=DECODER):
    added = [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for i, c in enumerate(SPECIALS)]
    single = [{"SpecialToken": {"id": t, "type_id": 0}} if t != "$A" else {"Sequence": {"id": "A", "type_id": 0}}
              for t in template]
    pair = single + [{"Sequence": {"id": "B", "type_id": 1}}]
    special = {t: {"id": t, "ids": [vocab[t]], "tokens": [t]} for t in template if t != "$A"}
    j = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": normalizer,
         "pre_tokenizer": pre_tokenizer,
         "post_processor": {"type": "TemplateProcessing", "single": single, "pair": pair, "special_tokens": special},
         "decoder": {"type": "Sequence", "decoders": decoder},
         "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                   "end_of_word_suffix": None, "fuse_unk": fuse_unk, "byte_fallback": byte_fallback,
                   "ignore_merges": False, "vocab": vocab, "merges": merges}}
    return Tokenizer.from_str(json.dumps(j))  # the library parses it: the file is one it accepts


EDGE = ["", " ", "  ", "a", " a", "a ", "hello world", "Hello  World  ", "\t tab\tand\nnewline\n", "\u00e9t\u00e9",
        "e\u0301", "\u4e2d\u6587\u5b57", "\U0001f600 emoji \U0001f468\u200d\U0001f469\u200d\U0001f467",
        "\u2581 already a metaspace \u2581\u2581", "<0x41> literal byte token", "<bos> <eos> <unk> <pad> <mask>",
        "<bos>inside<eos>", "x<mask>y", "\x00\x01\x7f", "\u0000nul", "caf\u00e9 na\u00efve r\u00e9sum\u00e9",
        "\u0645\u0631\u062d\u0628\u0627", "\u0928\u092e\u0938\u094d\u0924\u0947", "\ud55c\uad6d\uc5b4",
        "the the the the", "supercalifragilisticexpialidocious", "1234567890 3.14159", "a" * 300,
        "\u3000ideographic\u3000space", "\u00a0nbsp\u00a0"]


def random_strings(n, seed):
    rng = random.Random(seed)
    pools = [list(range(0x20, 0x7F)) * 4, list(range(0xA0, 0x250)), list(range(0x370, 0x530)),
             list(range(0x600, 0x700)), list(range(0x900, 0x980)), list(range(0x3040, 0x3100)),
             list(range(0x4E00, 0x4F00)), list(range(0xAC00, 0xAD00)), list(range(0x1F300, 0x1F650)),
             [0x20] * 40 + [0x9, 0xA, 0x3000, 0xA0, 0x2581]]
    out = []
    for _ in range(n):
        chars = []
        for _ in range(rng.randint(1, 40)):
            cp = rng.choice(rng.choice(pools))
            if 0xD800 <= cp <= 0xDFFF:
                continue
            chars.append(chr(cp))
        out.append("".join(chars))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", action="store_true", help="train the vocabulary anew (the files are committed)")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    gemma_path = os.path.join(OUT, "tokenizer-gemma.json")
    if args.train:
        vocab, merges = train()
    else:
        model = json.load(open(gemma_path, encoding="utf-8"))["model"]
        vocab, merges = model["vocab"], model["merges"]
    replace = {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}
    files = {
        "tokenizer-gemma.json": build(vocab, merges, replace,
                                      {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious",
                                       "invert": False}, ["<bos>", "$A", "<eos>"]),
        "tokenizer-llama.json": build(vocab, merges, {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": SPACE}, replace]}, None, ["<bos>", "$A"]),
        "tokenizer-nofallback.json": build(vocab, merges, {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": SPACE}, replace]}, None, ["<bos>", "$A"], byte_fallback=False,
            fuse_unk=False),
        "tokenizer-mistral.json": build(vocab, merges, None, metaspace("first", False), ["<bos>", "$A"],
                                        decoder=DECODER + [{"type": "Strip", "content": " ", "start": 1, "stop": 0}]),
        "tokenizer-metaspace-split.json": build(vocab, merges, None, metaspace("always", True),
                                                ["<bos>", "$A", "<eos>"]),
    }
    texts = sentences() + EDGE + random_strings(600, 7)
    data = {"tokenizers_version": tokenizers.__version__, "texts": texts, "files": []}
    for name, tok in files.items():
        tok.save(os.path.join(OUT, name))
        data["files"].append({"file": name, "ids": [tok.encode(t).ids for t in texts]})
    with open(os.path.join(OUT, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(f"{len(texts)} texts, vocabulary {len(vocab)}, {len(merges)} merges")


if __name__ == "__main__":
    main()
