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

std::string_view validUtf8(std::string_view text, std::string &buffer, std::string_view replacement) {
  char32_t cp;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t from = pos;
    if (!decodeUtf8(text, pos, cp)) {
      pos = from;
      break;
    }
  }
  if (pos == text.size())
    return text;
  buffer.assign(text.substr(0, pos));
  while (pos < text.size()) {
    const size_t from = pos;
    if (decodeUtf8(text, pos, cp))
      buffer.append(text, from, pos - from);
    else
      buffer.append(replacement);
  }
  return buffer;
}

char32_t gpt2ByteChar(unsigned b) {
  auto printable = [](unsigned x) { return (x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE); };
  if (printable(b))
    return b;
  char32_t n = 0;
  for (unsigned x = 0; x < b; ++x)
    n += !printable(x);
  return 0x100 + n;
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

namespace {

/// A class table: sorted (start << Shift) | class entries, the first at 0;
/// the ASCII range looked up once, the rest by binary search.
template <unsigned Shift> class ClassTable {
public:
  ClassTable(const uint32_t *breaks, size_t n) : breaks_(breaks), end_(breaks + n) {
    for (uint32_t cp = 0; cp < 128; ++cp)
      ascii_[cp] = search(cp);
  }
  uint8_t operator()(char32_t cp) const { return cp < 128 ? ascii_[cp] : search(cp); }

private:
  uint8_t search(char32_t cp) const {
    const uint32_t key = (static_cast<uint32_t>(cp) << Shift) | ((1u << Shift) - 1);
    const uint32_t *it = std::upper_bound(breaks_, end_, key);
    return static_cast<uint8_t>(it[-1] & ((1u << Shift) - 1));
  }
  const uint32_t *breaks_, *end_;
  uint8_t ascii_[128];
};

} // namespace

BertClass bertClass(char32_t cp) {
  static const ClassTable<3> table(kBertClassBreaks, kNumBertClassBreaks);
  return cp > 0x10FFFF ? BertClass::Removed : static_cast<BertClass>(table(cp));
}

static_assert(kMaxBertExpansion == kBertMapMaxLength);

int bertNormalize(char32_t cp, bool stripAccents, bool lowercase, char32_t out[kMaxBertExpansion]) {
  out[0] = cp;
  if (cp < 128) { // no accents to strip; the tables lowercase A-Z only
    if (lowercase && cp >= 'A' && cp <= 'Z')
      out[0] = cp + 32;
    return 1;
  }
  if (!stripAccents && !lowercase)
    return 1;
  constexpr char32_t SBase = 0xAC00, SLast = 0xD7A3;
  if (cp >= SBase && cp <= SLast) { // Hangul syllables: algorithmic NFD
    if (!stripAccents)
      return 1;
    const char32_t s = cp - SBase;
    out[0] = 0x1100 + s / 588;
    out[1] = 0x1161 + (s % 588) / 28;
    out[2] = 0x11A7 + s % 28;
    return s % 28 ? 3 : 2;
  }
  const BertMapping *table = stripAccents ? (lowercase ? kBertStripLower : kBertStrip) : kBertLower;
  const size_t n = stripAccents ? (lowercase ? kNumBertStripLower : kNumBertStrip) : kNumBertLower;
  const BertMapping *it = std::lower_bound(table, table + n, static_cast<uint32_t>(cp),
                                           [](const BertMapping &m, uint32_t c) { return m.cp < c; });
  if (it == table + n || it->cp != cp)
    return 1;
  std::copy(kBertMapPool + it->start, kBertMapPool + it->start + it->count, out);
  return it->count;
}

Gpt2Class gpt2Class(char32_t cp) {
  static const ClassTable<2> table(kGpt2ClassBreaks, kNumGpt2ClassBreaks);
  return cp > 0x10FFFF ? Gpt2Class::Other : static_cast<Gpt2Class>(table(cp));
}

} // namespace encrt::unicode
