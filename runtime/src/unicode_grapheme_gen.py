#!/usr/bin/env python3
"""Generates runtime/src/unicode_grapheme_tables.cpp from the Python `regex` module.

graphemes.cpp segments text into extended grapheme clusters (UAX #29) the way
the Rust crate unicode-segmentation does for the `tokenizers` library's
Precompiled normalizer. It needs, per code point, the properties that the
rules GB3..GB999 ask about:
  Grapheme_Cluster_Break   CR, LF, Control, Extend, ZWJ, Regional_Indicator,
                           Prepend, SpacingMark, L, V, T, LV, LVT (else Other)
  Extended_Pictographic    (GB11)
  Indic_Conjunct_Break     Consonant, Extend, Linker (GB9c)
They are read off `regex` (its \\p{...} classes), whose Unicode version is
identified by its count of assigned characters. Like unicode-segmentation's
own tables, one category per code point: Extended_Pictographic and
InCB=Consonant only occur on Grapheme_Cluster_Break=Other (checked here), so
they become categories of their own; InCB=Extend / Linker only occur on
Extend and ZWJ (checked), so they are two flag bits beside the category.

Output: kGraphemeBreaks, sorted (start << 6) | value for each run of equal
values, value = GraphemeCat | InCB flag << 4 (enum values in graphemes.cpp);
kGraphemeBlockIndex, where to start searching it for a code point below
U+20000. lookup() in graphemes.cpp answers below U+0300 and for the Hangul
syllables (LV or LVT) without the table, as checked here; the table has the
syllables as one LV run.

Usage (system python3 with `regex`):
  python3 unicode_grapheme_gen.py > unicode_grapheme_tables.cpp
"""
import sys

import regex

# Must match enum GraphemeCat in graphemes.cpp.
CATS = ["Other", "CR", "LF", "Control", "Extend", "ZWJ", "Regional_Indicator", "Prepend", "SpacingMark",
        "L", "V", "T", "LV", "LVT", "Extended_Pictographic", "InCB_Consonant"]
GCB_VALUES = CATS[1:14]
INCB_EXTEND, INCB_LINKER = 1, 2  # flag values, << 4
INCB_SHIFT, VALUE_BITS = 4, 6

# Characters (assigned, less private use and controls) per Unicode version, as
# the Unicode Consortium counts them: identifies the version `regex` implements.
CHARACTER_COUNTS = {149186: "15.0.0", 149813: "15.1.0", 154998: "16.0.0", 159801: "17.0.0"}

SURROGATES = range(0xD800, 0xE000)
HANGUL_SYLLABLES = range(0xAC00, 0xD7A4)
BLOCK_BITS, INDEXED_BLOCKS = 8, 0x20000 >> 8  # kGraphemeBlockIndex: the BMP and the SMP


def all_code_points():
    """Every code point but the surrogates, as one string, and its index -> cp."""
    text = "".join(chr(cp) for cp in range(0x110000) if cp not in SURROGATES)
    return text, lambda i: i if i < 0xD800 else i + 0x800


def ranges(text, to_cp, prop):
    """The sorted code point ranges [first, last] of \\p{prop}."""
    out = []
    for m in regex.finditer(r"\p{%s}+" % prop, text):
        first, last = to_cp(m.start()), to_cp(m.end() - 1)
        if first <= 0xD7FF < last:  # a run across the surrogates: split it
            out += [(first, 0xD7FF), (0xE000, last)]
        else:
            out.append((first, last))
    return out


def count(text, prop):
    return sum(m.end() - m.start() for m in regex.finditer(r"\p{%s}+" % prop, text))


def main():
    text, to_cp = all_code_points()
    characters = count(text, "Assigned") - count(text, "Co") - count(text, "Cc")
    version = CHARACTER_COUNTS.get(characters)
    if version is None:
        sys.exit(f"regex {regex.__version__}: {characters} characters is no known Unicode version; "
                 "add it to CHARACTER_COUNTS")

    value = bytearray(0x110000)  # category | InCB flags << 4; Other = 0
    gcb = bytearray(0x110000)  # which Grapheme_Cluster_Break values claimed a code point
    for cat in GCB_VALUES:
        for first, last in ranges(text, to_cp, f"Grapheme_Cluster_Break={cat}"):
            for cp in range(first, last + 1):
                if gcb[cp]:
                    sys.exit(f"U+{cp:04X}: both {CATS[gcb[cp]]} and {cat}")
                gcb[cp] = value[cp] = CATS.index(cat)
    for cat, prop in (("Extended_Pictographic", "Extended_Pictographic"),
                      ("InCB_Consonant", "Indic_Conjunct_Break=Consonant")):
        for first, last in ranges(text, to_cp, prop):
            for cp in range(first, last + 1):
                if value[cp]:
                    sys.exit(f"U+{cp:04X}: {prop} on {CATS[value[cp]]}, not on Other")
                value[cp] = CATS.index(cat)
    for flag, prop in ((INCB_EXTEND, "Indic_Conjunct_Break=Extend"), (INCB_LINKER, "Indic_Conjunct_Break=Linker")):
        for first, last in ranges(text, to_cp, prop):
            for cp in range(first, last + 1):
                if CATS[value[cp]] not in ("Extend", "ZWJ"):
                    sys.exit(f"U+{cp:04X}: {prop} on {CATS[value[cp]]}, not on Extend or ZWJ")
                value[cp] |= flag << INCB_SHIFT
    for cp in SURROGATES:  # never decoded from valid UTF-8; Control as in GraphemeBreakProperty.txt
        value[cp] = CATS.index("Control")
    for cp in range(0x300):  # lookup() in graphemes.cpp answers these without the table
        if cp < 0x20 or 0x7F <= cp <= 0x9F or cp == 0xAD:
            want = "CR" if cp == 0xD else "LF" if cp == 0xA else "Control"
        else:
            want = "Extended_Pictographic" if cp in (0xA9, 0xAE) else "Other"
        if value[cp] != CATS.index(want):
            sys.exit(f"U+{cp:04X} is {CATS[value[cp] & 15]}, not {want}: update lookup() in graphemes.cpp")

    counts = {}
    for cp in range(0x110000):
        v = value[cp]
        if cp not in SURROGATES:
            name = CATS[v & 15]
            counts[name] = counts.get(name, 0) + 1
            if v >> INCB_SHIFT:
                flag = "InCB_Extend" if v >> INCB_SHIFT == INCB_EXTEND else "InCB_Linker"
                counts[flag] = counts.get(flag, 0) + 1
    for cp in HANGUL_SYLLABLES:  # lookup() computes these: LV every 28th, else LVT
        want = "LVT" if (cp - HANGUL_SYLLABLES.start) % 28 else "LV"
        if value[cp] != CATS.index(want):
            sys.exit(f"U+{cp:04X} is {CATS[value[cp] & 15]}, not {want}: update lookup() in graphemes.cpp")
        value[cp] = CATS.index("LV")  # one run in the table instead of 798

    breaks, prev = [], None
    for cp in range(0x110000):
        v = value[cp]
        if v != prev:
            breaks.append((cp, v))
            prev = v

    source = f"Unicode {version} (Python regex {regex.__version__})"
    w = sys.stdout.write
    w("//===- unicode_grapheme_tables.cpp - generated grapheme break tables ----===//\n//\n")
    w(f"// GENERATED by unicode_grapheme_gen.py from the Python regex module {regex.__version__},\n")
    w(f"// which implements Unicode {version}; do not edit.\n")
    w("// Code points: " + ", ".join(f"{counts.get(c, 0)} {c}" for c in CATS) + ";\n")
    w(f"// {counts.get('InCB_Extend', 0)} InCB_Extend, {counts.get('InCB_Linker', 0)} InCB_Linker.\n")
    w("//\n//===----------------------------------------------------------------------===//\n")
    w("#include <cstddef>\n#include <cstdint>\n\nnamespace encrt::unicode::detail {\n\n")
    w(f'extern const char kGraphemeTablesSource[] = "{source}";\n\n')
    w(f"/// Sorted (start << {VALUE_BITS}) | value for each run of code points of equal value.\n")
    w("extern const uint32_t kGraphemeBreaks[] = {\n")
    vals = [f"0x{(cp << VALUE_BITS) | v:x}" for cp, v in breaks]
    for i in range(0, len(vals), 8):
        w("    " + ", ".join(vals[i:i + 8]) + ",\n")
    w("};\nextern const size_t kNumGraphemeBreaks = sizeof(kGraphemeBreaks) / sizeof(kGraphemeBreaks[0]);\n\n")
    index, i = [], 0
    for block in range(INDEXED_BLOCKS + 1):
        while i + 1 < len(breaks) and breaks[i + 1][0] <= block << BLOCK_BITS:
            i += 1
        index.append(i)
    w(f"/// [b]: the last entry of kGraphemeBreaks starting at or before b << {BLOCK_BITS}, b <= {INDEXED_BLOCKS:#x}.\n")
    w("extern const uint16_t kGraphemeBlockIndex[] = {\n")
    for j in range(0, len(index), 12):
        w("    " + ", ".join(str(x) for x in index[j:j + 12]) + ",\n")
    w("};\n\n")
    w("} // namespace encrt::unicode::detail\n")


if __name__ == "__main__":
    main()
