#!/usr/bin/env python3
"""Records HF BertTokenizer's ids for the tokenizer test (tests/tokenizer/expected.json).

Run with the reference Python (transformers 4.40.2):
  ENCC_MINILM_DIR=... /opt/encc-ref/bin/python tests/tokenizer/record_expected.py
Inputs: both sentences of every row of /work/shared/data/sentence-pairs.tsv
(or $ENCC_SENTENCE_PAIRS) plus the edge cases below. The slow BertTokenizer is
the reference; the fast one is compared too and any disagreement is printed
(and recorded in the case as "fast_differs").
"""
import json
import os
import sys

from transformers import BertTokenizer, BertTokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))
PAIRS = os.environ.get("ENCC_SENTENCE_PAIRS", "/work/shared/data/sentence-pairs.tsv")

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


def main():
    model_dir = os.environ.get("ENCC_MINILM_DIR")
    if not model_dir or not os.path.isfile(os.path.join(model_dir, "vocab.txt")):
        sys.exit("error: set ENCC_MINILM_DIR to the all-MiniLM-L6-v2 directory (with vocab.txt)")
    with open(os.path.join(model_dir, "tokenizer_config.json")) as f:
        cfg = json.load(f)
    lower = bool(cfg.get("do_lower_case", True))
    slow = BertTokenizer.from_pretrained(model_dir, do_lower_case=lower)
    fast = BertTokenizerFast.from_pretrained(model_dir, do_lower_case=lower)

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
        ids = slow(text, add_special_tokens=True, truncation=False)["input_ids"]
        case = {"name": name, "text": text, "ids": ids,
                "tokens": slow.convert_ids_to_tokens(ids)}
        fids = fast(text, add_special_tokens=True, truncation=False)["input_ids"]
        if fids != ids:
            print("note: fast tokenizer differs on %s: %s vs %s" % (name, fids, ids), file=sys.stderr)
            case["fast_differs"] = fids
        out.append(case)

    doc = {
        "generator": "tests/tokenizer/record_expected.py",
        "reference": "transformers %s BertTokenizer (slow)" % __import__("transformers").__version__,
        "model": cfg.get("name_or_path", ""),
        "do_lower_case": lower,
        "cases": out,
    }
    path = os.path.join(HERE, "expected.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote %d cases to %s" % (len(out), path))


if __name__ == "__main__":
    main()
