//===- unicode.cpp - UTF-8 decoding and Unicode queries of the tokenizer
//---===//
#include "unicode.h"

#include "unicode_tables.h"

#include <algorithm>

namespace encrt::unicode {
using namespace detail;

bool decodeUtf8(std::string_view s, size_t &pos, char32_t &cp) {
  const auto at = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  uint8_t b0 = at(pos);
  if (b0 < 0x80) {
    cp = b0;
    ++pos;
    return true;
  }
  size_t len;
  uint8_t lo = 0x80, hi = 0xBF; // Allowed range of the second byte.
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0)
      lo = 0xA0; // Overlong.
    else if (b0 == 0xED)
      hi = 0x9F; // Surrogates.
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0)
      lo = 0x90; // Overlong.
    else if (b0 == 0xF4)
      hi = 0x8F; // Above U+10FFFF.
  } else {
    ++pos; // Continuation byte, C0/C1 (overlong) or F5..FF.
    return false;
  }
  if (s.size() - pos < len || at(pos + 1) < lo || at(pos + 1) > hi) {
    ++pos;
    return false;
  }
  char32_t v = b0 & (0x7F >> len);
  for (size_t i = 1; i < len; ++i) {
    uint8_t b = at(pos + i);
    if ((b & 0xC0) != 0x80) {
      ++pos;
      return false;
    }
    v = (v << 6) | (b & 0x3F);
  }
  cp = v;
  pos += len;
  return true;
}

void appendUtf8(std::string &out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

CharClass charClass(char32_t cp) {
  if (cp < 0x80) {
    if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r')
      return CharClass::Space;
    if (cp < 0x20 || cp == 0x7F)
      return CharClass::Control;
    if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) ||
        (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126))
      return CharClass::Punct;
    return CharClass::Other;
  }
  if (cp > 0x10FFFF)
    return CharClass::Control;
  // The last break at or below cp: entries are (start << 3) | class.
  const uint32_t key = (static_cast<uint32_t>(cp) << 3) | 7;
  const uint32_t *end = kClassBreaks + kNumClassBreaks;
  const uint32_t *it = std::upper_bound(kClassBreaks, end, key);
  if (it == kClassBreaks)
    return CharClass::Other;
  return static_cast<CharClass>(it[-1] & 7);
}

Gpt2Class gpt2Class(char32_t cp) {
  if (cp > 0x10FFFF)
    return Gpt2Class::Other;
  const uint32_t key = (static_cast<uint32_t>(cp) << 2) | 3;
  const uint32_t *end = kGpt2ClassBreaks + kNumGpt2ClassBreaks;
  const uint32_t *it = std::upper_bound(kGpt2ClassBreaks, end, key);
  return it == kGpt2ClassBreaks ? Gpt2Class::Other : static_cast<Gpt2Class>(it[-1] & 3);
}

int toLower(char32_t cp, char32_t out[2]) {
  if (cp < 0x80) {
    out[0] = (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
    return 1;
  }
  if (cp == 0x130) { // LATIN CAPITAL LETTER I WITH DOT ABOVE -> i + U+0307.
    out[0] = 'i';
    out[1] = 0x307;
    return 2;
  }
  out[0] = cp;
  const LowerRun *end = kLowerRuns + kNumLowerRuns;
  const LowerRun *it =
      std::upper_bound(kLowerRuns, end, cp,
                       [](char32_t c, const LowerRun &r) { return c < r.lo; });
  if (it == kLowerRuns)
    return 1;
  const LowerRun &r = it[-1];
  uint32_t off = cp - r.lo;
  if (off % r.stride == 0 && off / r.stride < r.count)
    out[0] = static_cast<char32_t>(static_cast<int64_t>(cp) + r.delta);
  return 1;
}

int stripAccents(char32_t cp, char32_t out[3]) {
  if (cp < 0x80) {
    out[0] = cp;
    return 1;
  }
  if (charClass(cp) == CharClass::Mark)
    return 0;
  // Hangul syllables decompose algorithmically into conjoining jamo (Lo).
  constexpr char32_t SBase = 0xAC00, LBase = 0x1100, VBase = 0x1161,
                     TBase = 0x11A7;
  constexpr char32_t TCount = 28, NCount = 21 * 28, SCount = 19 * NCount;
  if (cp >= SBase && cp < SBase + SCount) {
    char32_t s = cp - SBase;
    out[0] = LBase + s / NCount;
    out[1] = VBase + (s % NCount) / TCount;
    if (s % TCount == 0)
      return 2;
    out[2] = TBase + s % TCount;
    return 3;
  }
  out[0] = cp;
  const StripEntry *end = kStrip + kNumStrip;
  const StripEntry *it =
      std::lower_bound(kStrip, end, cp, [](const StripEntry &e, char32_t c) {
        return e.cp < c;
      });
  if (it != end && it->cp == cp) {
    out[0] = it->to;
    return 1;
  }
  const StripEntry3 *end3 = kStrip3 + kNumStrip3;
  const StripEntry3 *it3 =
      std::lower_bound(kStrip3, end3, cp, [](const StripEntry3 &e, char32_t c) {
        return e.cp < c;
      });
  if (it3 != end3 && it3->cp == cp) {
    int n = 0;
    for (uint32_t c : it3->to)
      if (c)
        out[n++] = c;
    return n;
  }
  return 1;
}

} // namespace encrt::unicode
