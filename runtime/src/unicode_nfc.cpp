//===- unicode_nfc.cpp - Unicode canonical composition (NFC) --------------===//
#include "unicode_nfc.h"
#include "unicode.h"

#include <algorithm>

namespace encrt::unicode {

namespace {

using namespace detail;

// Hangul syllables (Unicode 3.12): S = SBase + (L * VCount + V) * TCount + T.
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kSCount = kLCount * kVCount * kTCount;

uint8_t cccOf(char32_t cp) {
  if (cp < 0x300)
    return 0;
  const NfcClass *end = kCombiningClass + kCombiningClassCount;
  const NfcClass *it = std::lower_bound(kCombiningClass, end, cp, [](const NfcClass &c, char32_t v) { return c.cp < v; });
  return it != end && it->cp == cp ? it->cls : 0;
}

const NfcDecomposition *decomposition(char32_t cp) {
  if (cp < 0xC0)
    return nullptr;
  const NfcDecomposition *end = kDecompositions + kDecompositionCount;
  const NfcDecomposition *it =
      std::lower_bound(kDecompositions, end, cp, [](const NfcDecomposition &d, char32_t v) { return d.cp < v; });
  return it != end && it->cp == cp ? it : nullptr;
}

/// The primary composite of (first, second), or 0.
char32_t compose(char32_t first, char32_t second) {
  if (first >= kLBase && first < kLBase + kLCount && second >= kVBase && second < kVBase + kVCount)
    return kSBase + ((first - kLBase) * kVCount + (second - kVBase)) * kTCount;
  if (first >= kSBase && first < kSBase + kSCount && (first - kSBase) % kTCount == 0 && second > kTBase &&
      second < kTBase + kTCount)
    return first + (second - kTBase);
  const NfcComposition *end = kCompositions + kCompositionCount;
  const NfcComposition *it = std::lower_bound(kCompositions, end, std::make_pair(first, second),
                                              [](const NfcComposition &c, std::pair<char32_t, char32_t> v) {
                                                return c.first != v.first ? c.first < v.first : c.second < v.second;
                                              });
  return it != end && it->first == first && it->second == second ? it->composite : 0;
}

/// A character on its way through, with the library's change count
/// (unicode-normalization-alignments: 0 replaces the next input character,
/// 1 is inserted, -n replaces it and removes n more).
struct Char {
  char32_t cp;
  int32_t change;
  uint8_t cls;
};

} // namespace

uint8_t combiningClass(char32_t cp) { return cccOf(cp); }

void nfc(std::string_view text, std::string &out, std::vector<TextSpan> *origin) {
  // Below U+0300 nothing decomposes, combines or composes (U+00C0.. are
  // composites already): most text is its own NFC.
  bool simple = true;
  for (unsigned char c : text)
    if (c >= 0xCC) { // a lead byte of U+0300 or above
      simple = false;
      break;
    }
  if (simple) {
    out.assign(text);
    return;
  }
  std::vector<Char> chars;
  chars.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    char32_t cp = 0;
    if (!decodeUtf8(text, pos, cp))
      continue; // callers pass valid UTF-8; a stray byte is dropped as validUtf8 drops it
    // A decomposition's first character replaces the input one, the rest are inserted.
    if (cp >= kSBase && cp < kSBase + kSCount) {
      const char32_t s = cp - kSBase;
      chars.push_back({kLBase + s / (kVCount * kTCount), 0, 0});
      chars.push_back({kVBase + (s % (kVCount * kTCount)) / kTCount, 1, 0});
      if (s % kTCount)
        chars.push_back({kTBase + s % kTCount, 1, 0});
    } else if (const NfcDecomposition *d = decomposition(cp)) {
      for (uint32_t i = 0; i < d->length; ++i) {
        const char32_t part = kDecompositionData[d->offset + i];
        chars.push_back({part, i == 0 ? 0 : 1, cccOf(part)});
      }
    } else {
      chars.push_back({cp, 0, cccOf(cp)});
    }
  }
  // Canonical ordering: each run of non-starters sorted by class, stably.
  for (size_t i = 0; i < chars.size();) {
    if (chars[i].cls == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < chars.size() && chars[j].cls != 0)
      ++j;
    std::stable_sort(chars.begin() + i, chars.begin() + j, [](const Char &a, const Char &b) { return a.cls < b.cls; });
    i = j;
  }
  // Canonical composition: a character joins the last starter unless a
  // character between them has class 0 or a class >= its own (blocked).
  std::vector<Char> composed;
  composed.reserve(chars.size());
  size_t starter = SIZE_MAX;
  for (const Char &c : chars) {
    if (starter != SIZE_MAX) {
      const bool adjacent = composed.size() == starter + 1;
      const uint8_t last = composed.back().cls;
      if (adjacent || (last != 0 && last < c.cls))
        if (char32_t comp = compose(composed[starter].cp, c.cp)) {
          composed[starter].cp = comp;
          composed[starter].change += c.change - 1; // the crate's k.1 + change - 1
          continue;
        }
    }
    if (c.cls == 0)
      starter = composed.size();
    composed.push_back(c);
  }
  out.clear();
  for (const Char &c : composed)
    appendUtf8(out, c.cp);
  if (!origin)
    return;
  // The alignments as NormalizedString::transform replays the changes: a
  // replacing character takes the next input character's, an inserted one
  // its predecessor's ((0, 0) at the start); reordered characters keep
  // their changes, so alignments stay with positions.
  const std::vector<TextSpan> in = std::move(*origin);
  origin->clear();
  origin->reserve(out.size());
  size_t at = 0; // the next input byte
  auto skipChar = [&] {
    size_t pos = at;
    char32_t cp;
    decodeUtf8(text, pos, cp);
    at = pos > at ? pos : at + 1;
  };
  for (const Char &c : composed) {
    TextSpan a;
    if (c.change > 0) {
      a = at == 0 ? TextSpan{} : in[at - 1];
    } else {
      a = at < in.size() ? in[at] : TextSpan{};
      for (int32_t k = 0; k <= -c.change && at < text.size(); ++k)
        skipChar();
    }
    const size_t bytes = c.cp < 0x80 ? 1 : c.cp < 0x800 ? 2 : c.cp < 0x10000 ? 3 : 4;
    origin->insert(origin->end(), bytes, a);
  }
}

} // namespace encrt::unicode
