//===- EscapedText.h - Texts printable in test failure messages -----------===//
#ifndef ENCC_TESTS_TOKENIZER_ESCAPEDTEXT_H
#define ENCC_TESTS_TOKENIZER_ESCAPEDTEXT_H

#include <cstdio>
#include <string>

namespace encc::testing {

/// `s` with control bytes written as \xNN.
inline std::string escape(const std::string &s) {
  std::string out;
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  return out;
}

} // namespace encc::testing

#endif // ENCC_TESTS_TOKENIZER_ESCAPEDTEXT_H
