#!/usr/bin/env python3
"""Records the `tokenizers` library's BERT ids for the tokenizer test (tests/tokenizer/expected.json).

The reference is the fast tokenizer sentence-transformers and transformers use:
the `tokenizers` library on all-MiniLM-L6-v2's tokenizer.json. Run in a venv
with `tokenizers` (the version is recorded):
  ENCC_MINILM_DIR=... python tests/tokenizer/record_expected.py
Inputs: both sentences of every row of tests/reference/sentence-pairs.tsv (or
$ENCC_SENTENCE_PAIRS), the edge cases below, and a sweep of single code points
("a" + c + "b"): every 97th scalar value plus the ones where Python's slow
BertTokenizer (Unicode 14 tables) and the library disagree (sweep_extra.txt).
"""
import json
import os
import sys

from tokenizers import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))
PAIRS = os.environ.get("ENCC_SENTENCE_PAIRS",
                       os.path.join(os.path.dirname(HERE), "reference", "sentence-pairs.tsv"))

EDGE_CASES = [
    ("empty", ""),
    ("only_spaces", "     "),
    ("only_whitespace_mix", "\t\n\r \t\u00a0\u3000"),
    ("hello_world", "Hello, World!"),
    ("creme_brulee", "Crème Brûlée"),
    ("naive_cafe", "naïve café"),
    ("german_sharp_s", "Die Straße ist groß. GROSSE STRAẞE"),
    ("german_umlauts", "Ärger Öl Übermut über schön"),
    ("greek", "Καλημέρα κόσμε! ΟΔΥΣΣΕΥΣ Ἀθῆναι"),
    ("cyrillic", "Привет, мир! ЁЖИК Йод ёлка"),
    ("chinese", "我喜欢自然语言处理，你呢？"),
    ("japanese", "東京は日本の首都です。がっこう カタカナ"),
    ("korean_hangul", "안녕하세요 세계"),
    ("emoji", "I love 🍕 and 🎉!! 👍🏽"),
    ("punct_run", "hello!!!world...?"),
    ("url", "https://example.com/path?query=1&x=y#frag"),
    ("email", "user.name+tag@example.co.uk"),
    ("numbers", "3.14 1,000,000 -42 1e-9 2024-01-31"),
    ("long_word_150", "a" * 150),
    ("word_100_chars", "b" * 100),
    ("word_101_chars", "x " + "c" * 101 + " y"),
    ("long_accented_word", "é" * 100 + " " + "É" * 101),
    ("control_chars", "a\x00b\x01c\x7fd\u200be\ufeffg\ufffdh\x0bi\x0cj\x85k"),
    ("tabs_newlines", "line1\nline2\tcol\r\nend\n\n"),
    ("repeated_whitespace", "  multiple    spaces   here  "),
    ("cls_literal", "[CLS]"),
    ("special_literals", "hello [SEP] world [MASK] x[UNK]y [PAD]"),
    ("special_lowercase", "[cls] [Sep]"),
    ("special_interrupted", "[CL\u200bS] [SE\x00P]"),
    ("unknown_symbols", "\u2603 snowman \U0001d518\U0001d52b\U0001d526 \ue000 \U000e0001 end"),
    ("mixed_punct", "¿Qué? ¡Sí! «quotes» „German“ — dash … ellipsis"),
    ("unicode_spaces", "a\u00a0b\u2003c\u3000d\u2028e\u2029f"),
    ("decomposed_accents", "e\u0301 cafe\u0301 \u0301abc \u0308"),
    ("turkish", "İstanbul ıi IŞIK"),
    ("vietnamese", "Tiếng Việt có dấu"),
    ("arabic_hebrew", "مرحبا بالعالم שלום"),
    ("hindi", "नमस्ते दुनिया"),
    ("fullwidth", "ＡＢＣ１２３ ｈｅｌｌｏ"),
    ("ligature", "ﬁnance ﬂow"),
    ("wordpieces", "UnAfFaBlE unaffable tokenization"),
    ("symbols", "$100 + 50% = €150 © ® ™ ° ± ^_^ `x` |y| ~z"),
    ("greek_punct_like", "τι\u037e αβ\u0387γ \u1fefx \u1fc1y"),
    ("letterlike", "\u2126 \u212b \u212a K"),
    ("apostrophes", "don't it's rock'n'roll ’quoted’"),
    ("cjk_compat_and_ext", "\uf900\u4e00\U00020000 \u3400x"),
]


def sweep_code_points():
    cps = set(range(0, 0x110000, 97))
    with open(os.path.join(HERE, "sweep_extra.txt")) as f:
        cps |= {int(x, 16) for x in f.read().split()}
    return sorted(cp for cp in cps if not 0xD800 <= cp <= 0xDFFF)


def main():
    model_dir = os.environ.get("ENCC_MINILM_DIR")
    if not model_dir or not os.path.isfile(os.path.join(model_dir, "tokenizer.json")):
        sys.exit("error: set ENCC_MINILM_DIR to the all-MiniLM-L6-v2 directory (with tokenizer.json)")
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()

    cases = []
    with open(PAIRS, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.startswith("#") or not line.strip():
                continue
            cols = line.rstrip("\n").split("\t")
            for col, text in (("a", cols[1]), ("b", cols[2])):
                cases.append(("pairs_l%d_%s" % (lineno, col), text))
    cases += EDGE_CASES

    out = []
    for name, text in cases:
        enc = tok.encode(text)
        out.append({"name": name, "text": text, "ids": enc.ids, "tokens": enc.tokens})
    cps = sweep_code_points()
    sweep = [tok.encode("a" + chr(cp) + "b").ids for cp in cps]

    import tokenizers
    doc = {
        "generator": "tests/tokenizer/record_expected.py",
        "reference": "tokenizers %s on all-MiniLM-L6-v2 tokenizer.json" % tokenizers.__version__,
        "cases": out,
        "sweep": {"text": "a + chr(cp) + b", "code_points": cps, "ids": sweep},
    }
    path = os.path.join(HERE, "expected.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=None, separators=(",", ":"))
        f.write("\n")
    print("wrote %d cases and %d sweep code points to %s" % (len(out), len(cps), path))


if __name__ == "__main__":
    main()
