#!/usr/bin/env python3
"""Generates runtime/src/unicode_nfc_tables.cpp: the data of Unicode canonical composition (NFC).

From Python's unicodedata (its Unicode version is printed into the file):
  kCombiningClass    (code point, canonical combining class) for every class other than 0
  kDecompositions    (code point, offset, length) into kDecompositionData: the full canonical
                     decomposition (NFD of the code point) of every code point that has one, Hangul
                     syllables left out (they decompose arithmetically)
  kCompositions      (first, second, composite) for every primary composite: a code point whose
                     canonical decomposition mapping is two code points and which NFC recomposes
                     (not a composition exclusion, singleton or non-starter decomposition)

With --tokenizers (needs the `tokenizers` wheel, whose Unicode data is what encrt must match): each
code point alone, after "a", and before U+0301 goes through the `tokenizers` library's NFC normalizer
and through Python's; for the code points on which they differ, the combining class is the one the
library's canonical ordering shows (against one mark of each class), and they are listed on stderr.
The file records which source it was made from.

Usage:
  python3 unicode_nfc_gen.py [--tokenizers] > unicode_nfc_tables.cpp
"""
import sys
import unicodedata

HANGUL = range(0xAC00, 0xD7A4)


def tokenizers_classes(classes, source):
    """Every code point's combining class as the `tokenizers` library's canonical ordering shows it:
    a mark of class c moves before a code point of a higher class, one of a lower class moves before it.
    Reports the code points where unicodedata says otherwise, and those whose NFC still differs."""
    import tokenizers
    from tokenizers import normalizers
    nfc, nfd = normalizers.NFC(), normalizers.NFD()
    def before(x, y, t):  # x precedes y in t = "a" + two code points (x may be "a")
        return t.index(x, 1) < t.index(y, 1)

    # One mark per class whose class the library agrees with: it moves before U+0301 (230) exactly when
    # its class is lower, and U+0334 (class 1) moves before it exactly when its class is higher.
    acute, tilde_overlay = "\u0301", "\u0334"
    reps = {1: tilde_overlay, 230: acute}
    for cp, k in sorted(classes.items()):
        c = chr(cp)
        if k in reps or nfd.normalize_str(c) != c:
            continue
        if (before(c, acute, nfd.normalize_str("a" + acute + c)) == (k < 230) and
                before(tilde_overlay, c, nfd.normalize_str("a" + c + tilde_overlay)) == (k > 1)):
            reps[k] = c
    top, one = reps[max(reps)], reps[min(reps)]

    out = {}
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        c = chr(cp)
        if c in (top, one) or nfd.normalize_str(c) != c:  # decomposed first: its class is never read
            if cp in classes:
                out[cp] = classes[cp]
            continue
        low = before(c, top, nfd.normalize_str("a" + top + c))     # 0 < class < max
        high = before(one, c, nfd.normalize_str("a" + c + one))    # class > min
        if low:
            after = [k for k, m in reps.items() if m != c and before(m, c, nfd.normalize_str("a" + c + m))]
            out[cp] = min(k for k in reps if k > max(after, default=0))
        elif high:
            out[cp] = max(reps)
    for cp in sorted(set(out) | set(classes)):
        if out.get(cp, 0) != classes.get(cp, 0):
            print(f"U+{cp:04X}: class {classes.get(cp, 0)} in unicodedata, {out.get(cp, 0)} in tokenizers",
                  file=sys.stderr)
    bad = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000 and
           any(nfc.normalize_str(t) != unicodedata.normalize("NFC", t)
               for t in (chr(cp), "a" + chr(cp), chr(cp) + "\u0301"))]
    print(f"{len(bad)} code points whose NFC alone, after 'a' or before U+0301 differs: "
          + " ".join(f"U+{cp:04X}" for cp in bad[:32]), file=sys.stderr)
    return out, source + f", combining classes as tokenizers {tokenizers.__version__} orders them"


def main():
    classes = {cp: unicodedata.combining(chr(cp)) for cp in range(0x110000) if unicodedata.combining(chr(cp))}
    source = f"Python's unicodedata (Unicode {unicodedata.unidata_version})"
    if "--tokenizers" in sys.argv:
        classes, source = tokenizers_classes(classes, source)
    ccc = sorted(classes.items())
    decomp, data = [], []
    for cp in range(0x110000):
        if cp in HANGUL or 0xD800 <= cp < 0xE000:
            continue
        d = unicodedata.normalize("NFD", chr(cp))
        if d != chr(cp):
            decomp.append((cp, len(data), len(d)))
            data.extend(ord(c) for c in d)
    comp = []
    for cp in range(0x110000):
        if cp in HANGUL or 0xD800 <= cp < 0xE000:
            continue
        m = unicodedata.decomposition(chr(cp))
        if not m or m.startswith("<"):
            continue
        parts = [int(x, 16) for x in m.split()]
        if len(parts) == 2 and unicodedata.normalize("NFC", chr(parts[0]) + chr(parts[1])) == chr(cp):
            comp.append((parts[0], parts[1], cp))
    comp.sort()

    out = sys.stdout
    out.write("//===- unicode_nfc_tables.cpp - generated canonical composition data -----===//\n")
    out.write("//\n")
    out.write(f"// GENERATED by unicode_nfc_gen.py from {source};\n")
    out.write(f"// do not edit. {len(ccc)} combining classes, {len(decomp)} decompositions, {len(comp)} primary "
              "composites.\n")
    out.write("//\n//===----------------------------------------------------------------------===//\n")
    out.write('#include "unicode_nfc.h"\n\nnamespace encrt::unicode::detail {\n\n')
    out.write(f'const char kNfcTablesSource[] = "{source}";\n\n')

    def table(decl, rows, fmt, per_line):
        out.write(f"{decl} = {{\n")
        for i in range(0, len(rows), per_line):
            out.write("    " + " ".join(fmt(r) for r in rows[i:i + per_line]) + "\n")
        out.write("};\n")

    table(f"const NfcClass kCombiningClass[{len(ccc)}]", ccc, lambda r: f"{{0x{r[0]:x}, {r[1]}}},", 6)
    out.write(f"const size_t kCombiningClassCount = {len(ccc)};\n\n")
    table(f"const NfcDecomposition kDecompositions[{len(decomp)}]", decomp,
          lambda r: f"{{0x{r[0]:x}, {r[1]}, {r[2]}}},", 5)
    out.write(f"const size_t kDecompositionCount = {len(decomp)};\n")
    table(f"const char32_t kDecompositionData[{len(data)}]", data, lambda v: f"0x{v:x},", 10)
    out.write("\n")
    table(f"const NfcComposition kCompositions[{len(comp)}]", comp,
          lambda r: f"{{0x{r[0]:x}, 0x{r[1]:x}, 0x{r[2]:x}}},", 4)
    out.write(f"const size_t kCompositionCount = {len(comp)};\n\n")
    out.write("} // namespace encrt::unicode::detail\n")


if __name__ == "__main__":
    main()
