#!/usr/bin/env python3
"""Records extended grapheme clusters for GraphemeTest (tests/tokenizer/grapheme/expected.json).

The reference is the Python `regex` module's \\X (extended grapheme clusters,
UAX #29 with GB9c), whose Unicode version is recorded and must be the one of
runtime/src/unicode_grapheme_tables.cpp (generated from the same module). It
agrees with the Rust crate unicode-segmentation of that Unicode version (the
`tokenizers` library's segmentation) on the official GraphemeBreakTest.txt and
on these strings. Inputs: the edge cases below and 2000 seeded random strings
of 1-8 code points drawn mostly from the classes the rules are about
(combining marks, ZWJ, emoji, regional indicators, Hangul jamo and syllables,
Indic consonants / viramas / nukta, CR / LF / controls, Prepend,
SpacingMark), code points as hex. Run with system python3 and `regex`:
  python3 tests/tokenizer/grapheme/record_graphemes.py
"""
import json
import os
import random

import regex

HERE = os.path.dirname(os.path.abspath(__file__))

# Characters (assigned, less private use and controls) per Unicode version, as
# the Unicode Consortium counts them (as in runtime/src/unicode_grapheme_gen.py).
CHARACTER_COUNTS = {149186: "15.0.0", 149813: "15.1.0", 154998: "16.0.0", 159801: "17.0.0"}

EDGE_CASES = [
    "\r\n", "\r\r\n", "\n\r", "\r\n\r\n", "a\r\nb", "\r\u0301", "a\u0301\r", "\x00\u0301", "\x7f\u0308a",
    "e\u0301", "e\u0301\u0302\u0303x", "\u0301", "\u0301\u0301a", "a\u0903", "\u0903a",
    # Prepend (GB9b), but not before a control (GB5)
    "\u0600a", "\u0600\u0600a", "\u0600\r", "\u0600\n", "\u0600\u0301", " \u0600 ", "\u0600\U0001F1E6\U0001F1E6",
    "\u0600\u0915\u094d\u0924", "\u06dd\U0001F600",
    # Hangul (GB6-8)
    "\u1100\u1161\u11a8", "\u1100\u1100\u1161\u1161\u11a8\u11a8", "\uac00\u11a8", "\uac01\u11a8\u11a8",
    "\uac00\u1161", "\uac01\u1161", "\u11a8\u1100", "\u1161\u1100", "\uac00\uac00", "\u1100\uac00\u11a8",
    "\u1100\u0301\u1161", "\ud55c\uad6d\uc5b4",
    # Regional indicators (GB12, GB13)
    "\U0001F1E6", "\U0001F1E6\U0001F1E8", "\U0001F1E6\U0001F1E8\U0001F1E9", "\U0001F1FA\U0001F1F8\U0001F1EB\U0001F1F7",
    "\U0001F1E6\U0001F1E8\U0001F1E9\U0001F1EA\U0001F1EB", "a\U0001F1E6\U0001F1E8\U0001F1E9",
    "\U0001F1E6\u0301\U0001F1E8", "\U0001F1E6\u200d\U0001F1E8", "\U0001F1E6\U0001F1E8\u0301\U0001F1E9\U0001F1EA",
    # Emoji ZWJ sequences (GB11)
    "\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466", "\U0001F44D\U0001F3FD", "\U0001F3F3\ufe0f\u200d\U0001F308",
    "\u2764\ufe0f\u200d\U0001F525", "1\ufe0f\u20e3", "\U0001F600\u200d", "\u200d\U0001F600", "a\u200d\U0001F600",
    "\U0001F600\u200d\u200d\U0001F600", "\U0001F600\u0301\u0301\u200d\U0001F600", "\U0001F600\U0001F3FB\u200d\u2764",
    "\U0001F600\u200d\u0301\U0001F600", "\u00a9\u200d\u00ae", "\U0001F600\U0001F600", "\U0001F938\U0001F3FE\U0001F3FE",
    "\U0001F469\u200d\u2764\ufe0f\u200d\U0001F48B\u200d\U0001F468",
    # Indic conjuncts (GB9c): Consonant [Extend Linker]* Linker [Extend Linker]* x Consonant
    "\u0915\u094d\u0937", "\u0915\u094d\u0937\u093f", "\u0928\u092e\u0938\u094d\u0924\u0947",
    "\u0915\u093c\u094d\u0924", "\u0915\u094d\u093c\u0924", "\u0915\u094d\u200d\u0924", "\u0915\u200d\u094d\u0924",
    "\u0915\u094d\u094d\u0924", "\u0915\u094d\u0924\u094d\u0930", "\u0915\u0924", "\u094d\u0924", "a\u094d\u0924",
    "\u0915\u093f\u094d\u0924", "\u0915\u0903\u094d\u0924", "\u0915\u094d\u0301\u0924", "\u0915\u094d\u200c\u0924",
    "\u0995\u09cd\u09b7", "\u0a95\u0acd\u0ab7", "\u0b15\u0b4d\u0b37", "\u0c15\u0c4d\u0c37", "\u0d15\u0d4d\u0d37",
    "\u0915\u09cd\u0924", "\u1000\u1039\u1001", "\u1780\u17d2\u1780", "\U00011A00\U00011A47\U00011A0B",
    "\u0915\u094d\u0600\u0924", "\u0e01\u0e33", "\u0e33",
    # Controls and format characters
    "\x00\x01", "a\x00", "\u00ad\u0301", "a\u00ad", "\u200b\u0301", "\ufeffa", "\u2028\u0301", "\U000E0001\U000E0020",
    "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F",
    # Other scripts, unassigned and private use
    "\u0627\u0644\u0639\u0631\u0628\u064a\u0629", "\u05e9\u05c1\u05b8", "\u4f60\u597d", "\u0378\u0301", "\ue000\u0301",
    "\U0010FFFF\u0301", "abc", "a b\tc",
]

WEIGHTED = [  # (weight, property or list of code points)
    (6, r"\p{Grapheme_Cluster_Break=Extend}"),
    (3, [0x0300, 0x0301, 0x0308, 0x093C, 0x094D, 0x09CD, 0x1039, 0x200C, 0xFE0F, 0x1F3FB, 0x1F3FF, 0x20E3]),
    (4, [0x200D]),
    (5, r"\p{Extended_Pictographic}"),
    (3, [0x1F600, 0x1F468, 0x1F469, 0x1F467, 0x2764, 0x1F3F3, 0x1F308, 0x00A9]),
    (5, r"\p{Grapheme_Cluster_Break=Regional_Indicator}"),
    (2, r"\p{Grapheme_Cluster_Break=L}"),
    (2, r"\p{Grapheme_Cluster_Break=V}"),
    (2, r"\p{Grapheme_Cluster_Break=T}"),
    (2, r"\p{Grapheme_Cluster_Break=LV}"),
    (2, r"\p{Grapheme_Cluster_Break=LVT}"),
    (5, r"\p{Indic_Conjunct_Break=Consonant}"),
    (4, [0x0915, 0x0924, 0x0937, 0x0930, 0x0995, 0x1000]),
    (4, r"\p{Indic_Conjunct_Break=Linker}"),
    (3, r"\p{Indic_Conjunct_Break=Extend}"),
    (3, [0x0D, 0x0A]),
    (2, r"\p{Grapheme_Cluster_Break=Control}"),
    (3, r"\p{Grapheme_Cluster_Break=Prepend}"),
    (3, r"\p{Grapheme_Cluster_Break=SpacingMark}"),
    (4, [0x61, 0x20, 0x41, 0x31]),
    (3, "any"),
]


def unicode_version():
    text = "".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF)
    n = sum(len(regex.findall(r"\p{%s}" % p, text)) * s for p, s in (("Assigned", 1), ("Co", -1), ("Cc", -1)))
    return CHARACTER_COUNTS[n], text


def ends(text):
    out, pos = [], 0
    for g in regex.findall(r"\X", text):
        pos += len(g.encode("utf-8"))
        out.append(pos)
    return out


def main():
    version, every = unicode_version()
    pools = []
    for weight, what in WEIGHTED:
        if what == "any":
            pool = None
        elif isinstance(what, list):
            pool = what
        else:
            pool = [ord(c) for c in regex.findall(what, every)]
        pools.append((weight, pool))
    rnd = random.Random(29)
    randoms = []
    for _ in range(2000):
        cps = []
        for _ in range(rnd.randint(1, 8)):
            pool = rnd.choices([p for _, p in pools], weights=[w for w, _ in pools])[0]
            cp = rnd.choice(pool) if pool else rnd.randrange(0x110000)
            cps.append(cp if not 0xD800 <= cp <= 0xDFFF else 0xFFFD)
        randoms.append("".join(map(chr, cps)))
    cases = [{"cps": " ".join("%X" % ord(c) for c in text), "ends": ends(text)} for text in EDGE_CASES + randoms]
    head = {"reference": "Python regex %s \\X" % regex.__version__, "unicode": version}
    with open(os.path.join(HERE, "expected.json"), "w") as f:  # one case a line
        f.write(json.dumps(head)[:-1] + ', "cases": [\n')
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
        f.write("\n]}\n")


if __name__ == "__main__":
    main()
