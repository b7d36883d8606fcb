//===- precompiled_charsmap.cpp - SentencePiece's precompiled normaliser --===//
//
// The double array is darts-clone's: unit bits 0-7 the label, bit 8 "has a
// leaf", bits 10-31 the offset to the children (shifted by 8 when bit 9 is
// set); a leaf unit's low 31 bits are the value, here a byte offset into the
// replacement strings.
//
//===----------------------------------------------------------------------===//
#include "precompiled_charsmap.h"

#include "graphemes.h"
#include "unicode.h"

#include <stdexcept>

namespace encrt {
namespace {

bool hasLeaf(uint32_t unit) { return (unit >> 8) & 1; }
uint32_t value(uint32_t unit) { return unit & ((1u << 31) - 1); }
uint32_t label(uint32_t unit) { return unit & ((1u << 31) | 0xFF); }
uint32_t offset(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

/// Whether `pos` starts a code point in valid UTF-8 `s` (or is its end).
bool atCharBoundary(std::string_view s, size_t pos) {
  return pos == s.size() || (static_cast<unsigned char>(s[pos]) & 0xC0) != 0x80;
}

/// Byte length of the first code point of (valid UTF-8) `s`.
size_t firstCharLength(std::string_view s) {
  size_t pos = 0;
  char32_t cp;
  unicode::decodeUtf8(s, pos, cp);
  return pos;
}

} // namespace

PrecompiledCharsmap::PrecompiledCharsmap(std::string_view bytes) {
  if (bytes.size() < 4)
    throw std::invalid_argument("precompiled charsmap: shorter than its 4-byte header");
  const auto *b = reinterpret_cast<const unsigned char *>(bytes.data());
  const uint32_t trieBytes = uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
  if (trieBytes % 4 != 0 || trieBytes == 0 || trieBytes > bytes.size() - 4)
    throw std::invalid_argument("precompiled charsmap: trie size " + std::to_string(trieBytes) +
                                " is not a positive multiple of 4 within the map's " +
                                std::to_string(bytes.size()) + " bytes");
  units_.resize(trieBytes / 4);
  for (size_t i = 0; i < units_.size(); ++i) {
    const unsigned char *u = b + 4 + 4 * i;
    units_[i] = uint32_t(u[0]) | uint32_t(u[1]) << 8 | uint32_t(u[2]) << 16 | uint32_t(u[3]) << 24;
  }
  const std::string_view rest = bytes.substr(4 + trieBytes);
  std::string check;
  if (unicode::validUtf8(rest, check, "").size() != rest.size())
    throw std::invalid_argument("precompiled charsmap: the replacement strings are not valid UTF-8");
  replacements_.assign(rest);
}

bool PrecompiledCharsmap::transform(std::string_view chunk, std::string_view &replacement) const {
  const size_t n = units_.size();
  size_t node = offset(units_[0]);
  for (unsigned char c : chunk) {
    if (c == 0)
      break;
    node ^= c;
    if (node >= n || label(units_[node]) != c)
      return false;
    const uint32_t unit = units_[node];
    node ^= offset(unit);
    if (hasLeaf(unit)) {
      if (node >= n)
        return false;
      // The first (shortest) match decides, as in the library.
      const size_t from = value(units_[node]);
      if (from > replacements_.size() || !atCharBoundary(replacements_, from))
        return false; // a damaged map: no rule rather than a cut character
      size_t to = replacements_.find('\0', from);
      if (to == std::string::npos)
        to = replacements_.size();
      replacement = std::string_view(replacements_).substr(from, to - from);
      return true;
    }
  }
  return false;
}

void PrecompiledCharsmap::normalize(std::string_view text, std::string &out, std::vector<Part> *parts) const {
  std::string_view rep;
  auto emit = [&](std::string_view old, std::string_view now) {
    out += now;
    if (parts) {
      uint32_t chars = 0;
      for (unsigned char c : old)
        chars += (c & 0xC0) != 0x80;
      parts->push_back({chars, uint32_t(now.size())});
    }
  };
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = unicode::graphemeEnd(text, pos);
    const std::string_view cluster = text.substr(pos, end - pos);
    const bool whole = cluster.size() < 6 && transform(cluster, rep);
    if (whole || firstCharLength(cluster) == cluster.size()) {
      emit(cluster, whole ? rep : cluster); // a one-character cluster has just been looked up
    } else {
      for (size_t c = 0; c < cluster.size();) {
        size_t next = c;
        char32_t cp;
        unicode::decodeUtf8(cluster, next, cp);
        const std::string_view part = cluster.substr(c, next - c);
        emit(part, transform(part, rep) ? rep : part);
        c = next;
      }
    }
    pos = end;
  }
}

} // namespace encrt
