#!/usr/bin/env python3
"""Byte-level BPE reference data for the tokenizer tests, from the `tokenizers` library.

Writes tests/tokenizer/bpe/:
  tokenizer.json          RoBERTa-style byte-level BPE (no normalizer, ByteLevel
                          pre-tokenizer without prefix space, RobertaProcessing
                          <s> ... </s>, <mask> with lstrip), trained here by
                          `tokenizers` on /usr/share/common-licenses and the
                          sentence pairs (2000 tokens). Only with --train: the file
                          is committed, so re-recording keeps the same vocabulary.
  tokenizer-variant.json  the same vocabulary and merges with the other options
                          encrt implements: add_prefix_space, ignore_merges, an
                          unk token, TemplateProcessing, a non-special
                          (normalized) added token with rstrip and a special one
                          with rstrip.
  tokenizer-neox.json     the same vocabulary and merges as GPT-NeoX / OLMo / ModernBERT
                          tokenizer.json files have them: an NFC normalizer, the
                          ByteLevel pre-tokenizer without prefix space, [UNK] [CLS]
                          [SEP] [PAD] [MASK] added after the vocabulary ([MASK] with
                          lstrip), TemplateProcessing [CLS] $A [SEP].
  tokenizer-qwen2.json    the same vocabulary and merges as Qwen2 / Qwen3(-Embedding) tokenizer.json
                          files have them: NFC, a Split pre-tokenizer on Qwen2's regex (Isolated)
                          before a ByteLevel one without its regex, <|endoftext|> <|im_start|>
                          <|im_end|> added, TemplateProcessing $A <|endoftext|>.
  tokenizer-cl100k.json   the same with cl100k's regex (GPT-4, Llama 3: digits in runs of up to 3),
                          no normalizer, a ByteLevel post-processor only.
  expected.json           ids from Tokenizer.encode(text).ids (post-processor
                          applied, no truncation) for both files, on the sentence
                          pairs, hand-written edge cases and 600 seeded random
                          strings over all of Unicode (weighted towards the
                          scripts, spaces and punctuation that stress the
                          pre-tokenizer); plus truncated encodings.

Usage (a venv with `tokenizers`; the version is recorded in expected.json):
  python tests/tokenizer/record_bpe.py [--train]
"""
import argparse
import glob
import json
import os
import random
import sys

import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "reference"))
from sentence_pairs import sentences  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "bpe")


def train():
    lines = []
    for path in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                lines += f.read().splitlines()
    lines += sentences()
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=2000, min_frequency=2, show_progress=False,
                                  special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(lines, trainer)
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False, special=True)])
    tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")),
                                                      ("<s>", tok.token_to_id("<s>")))
    tok.save(os.path.join(OUT, "tokenizer.json"))


def variant():
    with open(os.path.join(OUT, "tokenizer.json"), encoding="utf-8") as f:
        j = json.load(f)
    j["model"]["unk_token"] = "<unk>"
    j["model"]["ignore_merges"] = True
    j["pre_tokenizer"]["add_prefix_space"] = True
    tok = Tokenizer.from_str(json.dumps(j))
    tok.add_tokens([AddedToken("hello world", rstrip=True, normalized=True, special=False)])
    tok.add_special_tokens([AddedToken("[SEP2]", rstrip=True, normalized=False, special=True)])
    s, e = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> <s> $A </s>", pair="<s> $A </s> $B </s>", special_tokens=[("<s>", s), ("</s>", e)])
    tok.save(os.path.join(OUT, "tokenizer-variant.json"))


def neox():
    with open(os.path.join(OUT, "tokenizer.json"), encoding="utf-8") as f:
        j = json.load(f)
    j["added_tokens"] = []
    j["normalizer"] = {"type": "NFC"}
    j["post_processor"] = None
    tok = Tokenizer.from_str(json.dumps(j))
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in ("[UNK]", "[CLS]", "[SEP]", "[PAD]")])
    tok.add_special_tokens([AddedToken("[MASK]", lstrip=True, normalized=False, special=True)])
    c, e = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", c), ("[SEP]", e)])
    tok.save(os.path.join(OUT, "tokenizer-neox.json"))


QWEN2_REGEX = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
               r"""\s*[\r\n]+|\s+(?!\S)|\s+""")
CL100K_REGEX = QWEN2_REGEX.replace(r"\p{N}|", r"\p{N}{1,3}|")


def split_variant(name, regex, nfc, template):
    with open(os.path.join(OUT, "tokenizer.json"), encoding="utf-8") as f:
        j = json.load(f)
    j["added_tokens"] = []
    j["normalizer"] = {"type": "NFC"} if nfc else None
    j["post_processor"] = None
    tok = Tokenizer.from_str(json.dumps(j))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(regex), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True)
                            for t in ("<|endoftext|>", "<|im_start|>", "<|im_end|>")])
    if template:
        e = tok.token_to_id("<|endoftext|>")
        tok.post_processor = processors.TemplateProcessing(
            single="$A <|endoftext|>", pair="$A <|endoftext|> $B:1 <|endoftext|>:1",
            special_tokens=[("<|endoftext|>", e)])
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.save(os.path.join(OUT, name))


# What the Split regexes tell apart: case-insensitive contractions (and U+017F, which folds to s), a
# non-letter before letters, digit runs, newline runs with spaces and tabs around them, punctuation with
# trailing newlines, lone spaces before digits and symbols.
SPLIT_CASES = [
    "it's IT'S It'Ll she'D we'VE they'Re I'M it'ſ 'ſ 'x a'b ''s", "'Sam 'ſam 'LLama 'Dog 'Reed 'VEry 'tea 'mom x'sake X'SAKE a'\u017fam b'Sam c'LLama", "  hello\n\n  world  ",
    "a 123 4567 89012 3.14159 1,000,000", "(hello) .\n\nx [tag]: {value}", "x \t\n y", "\t\tab \t 1",
    "ab  \n", " \r\n\r\n  z", "\u00a0word \u3000\u4e2d\u6587", "a'x b\n'y", "line1\nline2\r\nline3\r\rend",
    "x!!!\n\ny ...\r\n", "  \n", "\n", " ", "end  ", "$$$ 100%%% #1", "\u0661\u0662\u0663\u0664 \u00bd\u00bd",
    "<|endoftext|>x<|im_start|> <|im_end|>\n", "def f(x):\n    return x ** 2\n\n\n", "\u0300abc \u0301 \u0302",
]


# Texts whose NFC differs from themselves: decomposed accents and Hangul, marks out of
# canonical order, singletons and composition exclusions, blocked and unblocked marks.
NFC_CASES = [
    "cafe\u0301 nai\u0308ve Cre\u0300me Bru\u0302le\u0301e", "Ti\u00ea\u0301ng Vie\u0323\u0302t",
    "Tie\u0302\u0301ng Vie\u0302\u0323t", "e\u0301\u0327 e\u0327\u0301 \u0229\u0301", "a\u0305\u0301 a\u0301\u0305",
    "\u212b \u2126 \u212a \u0340\u0341 \u0958 \u2adc \ufb1d", "\u1100\u1161\u11a8 \u1112\u1161\u11ab\u1100\u1173\u11af",
    "\uac00\u11a8 \u1100\u1161 \u1100\u0301\u1161", "\u0915\u093c \u0928\u093c\u093f",
    "\u0b47\u0b3e \u0b47\u0b57 \u0dd9\u0dcf\u0dca", "o\u031b\u0323 \u01a1\u0323 \u1ee3",
    "\u0041\u030a\u0301 \u00c5\u0301 \u01fa", "\u0301start and end\u0301", "x\u0308\u0308\u0308",
    "[MASK]e\u0301 a [MASK]  \u00e9 [CLS]x", "\u03b1\u0313\u0342\u0345 \u1f86",
]


EDGE_CASES = [
    "", " ", "  ", "a", " a", "a ", "  a", "a  b", "a   b  ", "\ta", "a\t\tb", "\n\nx\n", "\r\n",
    "Hello, World!", "hello world", "Hello world hello world!", "I'm you're we've she'll he'd it's 'S 'LL",
    "don't DON'T isn't ''s '''", "123 4567 89,000.5 ٣٤٥ ½ Ⅻ ²", "$100 -> 50% @user #tag",
    "naïve café Crème Brûlée", "Die Straße ist groß", "Привет, мир!", "Καλημέρα κόσμε",
    "你好世界，今天天气很好。", "日本語のテキスト", "한국어 텍스트입니다", "مرحبا بالعالم", "שלום עולם",
    "नमस्ते दुनिया", "สวัสดีชาวโลก", "e\u0301 a\u0308 combining", "emoji 😀👍🏽 👨‍👩‍👧 🇩🇪",
    "\u00a0nbsp\u00a0 \u3000ideographic\u2028line\u2029para\u2009thin\u200bzwsp",
    "<s>", "</s>", "<mask>", "a <mask> b", "a   <mask>", "<mask><mask>", "x<s>y</s>z", "<s> <pad> <unk>",
    "hello world", "say hello world  now", "[SEP2]  tail", "<mas", "mask>",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "Thisisaverylongwordwithoutanyspacesatallthatgoesonandon", "GNU General Public License version 3",
    "\x00\x01\x7f control \x1b[0m", "\ufeffBOM", "tab\tsep\tvalues", "x" * 3 + " " * 5 + "y",
    "Mixed123Numbers456and789", "snake_case_name camelCaseName kebab-case-name",
    "http://example.com/path?q=1&r=2", "e-mail: someone@example.org", "😀" * 5, "\U0010ffff\U000e0001",
]


def random_strings(n, seed):
    rng = random.Random(seed)
    pools = [
        (8, [chr(c) for c in range(0x20, 0x7f)]),
        (3, list(" \t\n\r\u00a0\u2000\u3000\u2028\u0085")),
        (2, [chr(c) for c in range(0xa0, 0x250)]),
        (2, [chr(c) for c in range(0x370, 0x530)]),
        (1, [chr(c) for c in range(0x600, 0x700)] + [chr(c) for c in range(0x900, 0x980)]),
        (2, [chr(c) for c in range(0x4e00, 0x4e80)] + [chr(c) for c in range(0x3040, 0x3100)]),
        (1, [chr(c) for c in range(0x300, 0x370)]),
        (1, [chr(c) for c in range(0x1f300, 0x1f680)]),
        (1, ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "<mask>", "<s>", "</s>", " <mask>", "hello world",
             "[SEP2]", "'"]),
        (2, None),  # any scalar value
    ]
    weights = [w for w, _ in pools]
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 40)):
            _, pool = rng.choices(pools, weights)[0]
            if pool is None:
                cp = rng.randrange(0x110000)
                while 0xD800 <= cp <= 0xDFFF:
                    cp = rng.randrange(0x110000)
                parts.append(chr(cp))
            else:
                parts.append(rng.choice(pool))
        out.append("".join(parts))
    return out


def nfc_strings(n, seed):
    """Letters, Hangul jamo and syllables, and combining marks in any order."""
    rng = random.Random(seed)
    pool = (list("aeiouAEIOUcnsyzkg ") + [chr(c) for c in range(0x300, 0x370)] + [chr(c) for c in range(0x1100, 0x1200)]
            + [chr(c) for c in range(0xac00, 0xac40)] + [chr(c) for c in range(0x1dc0, 0x1e00)] +
            [chr(c) for c in range(0x900, 0x980)] + [chr(c) for c in range(0x5b0, 0x5d0)] + list("\u0345\u0313\u0342"))
    return ["".join(rng.choice(pool) for _ in range(rng.randint(1, 30))) for _ in range(n)]


def record(name, tok, texts):
    return {"file": name, "ids": [tok.encode(t).ids for t in texts]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", action="store_true", help="train tokenizer.json again (changes the vocabulary)")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    if args.train:
        train()
    variant()
    neox()
    split_variant("tokenizer-qwen2.json", QWEN2_REGEX, nfc=True, template=True)
    split_variant("tokenizer-cl100k.json", CL100K_REGEX, nfc=False, template=False)
    texts = (sentences() + EDGE_CASES + random_strings(600, 20261201) + NFC_CASES + nfc_strings(300, 20261204) +
             SPLIT_CASES)
    base = Tokenizer.from_file(os.path.join(OUT, "tokenizer.json"))
    var = Tokenizer.from_file(os.path.join(OUT, "tokenizer-variant.json"))
    neo = Tokenizer.from_file(os.path.join(OUT, "tokenizer-neox.json"))
    qwen = Tokenizer.from_file(os.path.join(OUT, "tokenizer-qwen2.json"))
    cl100k = Tokenizer.from_file(os.path.join(OUT, "tokenizer-cl100k.json"))
    truncated = []
    for max_len in (2, 3, 8):
        base.enable_truncation(max_len)
        var.enable_truncation(max_len)
        for t in texts[:40:3] + EDGE_CASES[::4]:
            truncated.append({"text": t, "max_len": max_len, "base": base.encode(t).ids,
                              "variant": var.encode(t).ids})
    base.no_truncation()
    var.no_truncation()
    data = {
        "generator": "tests/tokenizer/record_bpe.py",
        "tokenizers": tokenizers.__version__,
        "texts": texts,
        "tokenizers_files": [record("tokenizer.json", base, texts), record("tokenizer-variant.json", var, texts),
                             record("tokenizer-neox.json", neo, texts), record("tokenizer-qwen2.json", qwen, texts),
                             record("tokenizer-cl100k.json", cl100k, texts)],
        "truncated": truncated,
        # The Split pre-tokenizers' pieces (pre_tokenize_str) of each text, where the ids could hide a
        # different cut (no merge across it).
        "split_pieces": {name: [[p for p, _ in sp.pre_tokenize_str(t)] for t in texts]
                         for name, sp in (("qwen2", pre_tokenizers.Split(Regex(QWEN2_REGEX), "isolated")),
                                          ("cl100k", pre_tokenizers.Split(Regex(CL100K_REGEX), "isolated")))},
    }
    with open(os.path.join(OUT, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=True, separators=(",", ":"))
        f.write("\n")
    print(f"{len(texts)} texts, {sum(len(i) for i in data['tokenizers_files'][0]['ids'])} ids "
          f"(tokenizers {tokenizers.__version__})")


if __name__ == "__main__":
    main()
