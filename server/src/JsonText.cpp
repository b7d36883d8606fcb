//===- JsonText.cpp - What encc-serve writes and checks as JSON text ------===//
#include "JsonText.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace encc::serve {

void appendFloat(std::string &out, float v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, ec == std::errc() ? size_t(end - buf) : 0);
}

void appendFloatArray(std::string &out, const float *v, size_t n) {
  out += '[';
  for (size_t i = 0; i < n; ++i) {
    if (i)
      out += ',';
    appendFloat(out, v[i]);
  }
  out += ']';
}

void appendBase64(std::string &out, const void *data, size_t n) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto *p = static_cast<const uint8_t *>(data);
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    const uint32_t w = uint32_t(p[i]) << 16 | uint32_t(p[i + 1]) << 8 | p[i + 2];
    out += kAlphabet[w >> 18];
    out += kAlphabet[(w >> 12) & 63];
    out += kAlphabet[(w >> 6) & 63];
    out += kAlphabet[w & 63];
  }
  if (i < n) {
    const uint32_t w = uint32_t(p[i]) << 16 | (i + 1 < n ? uint32_t(p[i + 1]) << 8 : 0);
    out += kAlphabet[w >> 18];
    out += kAlphabet[(w >> 12) & 63];
    out += i + 1 < n ? kAlphabet[(w >> 6) & 63] : '=';
    out += '=';
  }
}

void appendJsonString(std::string &out, std::string_view s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += char(c);
      }
    }
  }
  out += '"';
}

int jsonNestingDepth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest && (deepest = depth) > limit)
        return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

} // namespace encc::serve
