//===- graphemes.cpp - extended grapheme clusters (UAX #29) ---------------===//
#include "graphemes.h"

#include "unicode.h"

#include <algorithm>
#include <cstdint>

namespace encrt::unicode {

namespace detail {
/// unicode_grapheme_tables.cpp (unicode_grapheme_gen.py, from the Python
/// `regex` module): sorted (start << kValueBits) | value for each run of code
/// points of equal value, value = Cat | InCB flag << 4; [b] of the block
/// index is the last entry starting at or before b << kBlockBits.
extern const char kGraphemeTablesSource[];
extern const uint32_t kGraphemeBreaks[];
extern const size_t kNumGraphemeBreaks;
extern const uint16_t kGraphemeBlockIndex[];
} // namespace detail

namespace {

/// Grapheme_Cluster_Break, with Extended_Pictographic and InCB=Consonant as
/// values of their own (both only occur on Other). Must match CATS in
/// unicode_grapheme_gen.py.
enum Cat : uint8_t {
  Other,
  CR,
  LF,
  Control,
  Extend,
  ZWJ,
  RegionalIndicator,
  Prepend,
  SpacingMark,
  L,
  V,
  T,
  LV,
  LVT,
  ExtPict,
  InCBConsonant,
};
constexpr int kValueBits = 6;
constexpr int kBlockBits = 8;
constexpr char32_t kIndexedBelow = 0x20000; // the block index covers the BMP and the SMP
constexpr uint8_t kCatMask = 0x0F;
/// InCB=Extend and InCB=Linker, on Extend and ZWJ only.
constexpr uint8_t kInCBExtend = 1 << 4, kInCBLinker = 2 << 4;

constexpr uint32_t bit(Cat c) { return 1u << c; }

/// The table value (Cat | InCB flag) of a code point.
inline uint8_t lookup(char32_t cp) {
  if (cp < 0x300) { // Below the combining marks: Control, CR, LF, ExtPict (©, ®) or Other
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xAD) // (the generator checks this)
      return cp == '\r' ? CR : cp == '\n' ? LF : Control;
    return cp == 0xA9 || cp == 0xAE ? ExtPict : Other;
  }
  if (cp - 0xAC00 < 11172) // Hangul syllables: LV every 28th, else LVT (the generator checks this)
    return (cp - 0xAC00) % 28 ? LVT : LV;
  using detail::kGraphemeBlockIndex;
  using detail::kGraphemeBreaks;
  // The entry is the last one starting at or before cp: binary search between
  // the entries of cp's block start and the next block's.
  const uint32_t *first, *last;
  if (cp < kIndexedBelow) {
    first = kGraphemeBreaks + kGraphemeBlockIndex[cp >> kBlockBits];
    last = kGraphemeBreaks + kGraphemeBlockIndex[(cp >> kBlockBits) + 1] + 1;
  } else {
    first = kGraphemeBreaks + kGraphemeBlockIndex[kIndexedBelow >> kBlockBits];
    last = kGraphemeBreaks + detail::kNumGraphemeBreaks;
  }
  const uint32_t key = (static_cast<uint32_t>(cp) << kValueBits) | ((1u << kValueBits) - 1);
  const uint32_t *it = std::upper_bound(first + 1, last, key); // *first starts at or before cp
  return static_cast<uint8_t>(it[-1] & ((1u << kValueBits) - 1));
}

} // namespace

size_t graphemeEnd(std::string_view s, size_t pos) {
  const size_t n = s.size();
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  // ASCII is Other, Control, CR or LF: an ASCII code point followed by another
  // is a boundary (GB4, GB5, GB999) but for CR LF (GB3).
  if (byte(pos) < 0x80 && (pos + 1 == n || byte(pos + 1) < 0x80))
    return pos + 1 + (pos + 1 < n && byte(pos) == '\r' && byte(pos + 1) == '\n');

  size_t p = pos;
  char32_t cp;
  if (!decodeUtf8(s, p, cp))
    return p;
  uint8_t value = lookup(cp);
  Cat prev = static_cast<Cat>(value & kCatMask);
  // The context of GB9c, GB11 and GB12/13, all inside the cluster (graphemes.h),
  // ending at prev: RIs in a row; ExtPict Extend* (ZWJ); InCB Consonant
  // [Extend Linker]* (with a Linker among them).
  size_t riRun = prev == RegionalIndicator;
  enum { NoPict, Pict, PictZwj } emoji = prev == ExtPict ? Pict : NoPict;
  enum { NoConsonant, Consonant, ConsonantLinker } incb = prev == InCBConsonant ? Consonant : NoConsonant;

  constexpr uint32_t kControls = bit(CR) | bit(LF) | bit(Control);
  while (p < n) {
    size_t next = p;
    if (!decodeUtf8(s, next, cp))
      return p;
    value = lookup(cp);
    const Cat cat = static_cast<Cat>(value & kCatMask);
    bool join;
    if (prev == CR && cat == LF)
      join = true; // GB3
    else if ((bit(prev) | bit(cat)) & kControls)
      join = false; // GB4, GB5
    else if (prev == L && (bit(cat) & (bit(L) | bit(V) | bit(LV) | bit(LVT))))
      join = true; // GB6
    else if ((prev == LV || prev == V) && (cat == V || cat == T))
      join = true; // GB7
    else if ((prev == LVT || prev == T) && cat == T)
      join = true; // GB8
    else if (bit(cat) & (bit(Extend) | bit(ZWJ) | bit(SpacingMark)))
      join = true; // GB9, GB9a
    else if (prev == Prepend)
      join = true; // GB9b
    else if (cat == InCBConsonant)
      join = incb == ConsonantLinker; // GB9c
    else if (cat == ExtPict)
      join = prev == ZWJ && emoji == PictZwj; // GB11
    else if (cat == RegionalIndicator)
      join = prev == RegionalIndicator && riRun % 2 == 1; // GB12, GB13
    else
      join = false; // GB999
    if (!join)
      return p;

    riRun = cat == RegionalIndicator ? riRun + 1 : 0;
    if (cat == ExtPict)
      emoji = Pict;
    else if (emoji == Pict && (cat == Extend || cat == ZWJ))
      emoji = cat == ZWJ ? PictZwj : Pict;
    else
      emoji = NoPict;
    if (cat == InCBConsonant)
      incb = Consonant;
    else if (incb != NoConsonant && (value & kInCBLinker))
      incb = ConsonantLinker;
    else if (!(incb != NoConsonant && (value & kInCBExtend)))
      incb = NoConsonant;
    prev = cat;
    p = next;
  }
  return n;
}

} // namespace encrt::unicode
