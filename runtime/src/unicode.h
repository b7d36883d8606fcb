//===- unicode.h - UTF-8 decoding and the Unicode queries of the tokenizer
//-===//
//
// Just what BERT basic tokenisation needs, with HF BertTokenizer semantics:
// strict UTF-8 decoding, character classes (control / whitespace /
// punctuation / nonspacing mark), CJK ideographs, full lowercasing and accent
// stripping (NFD, then Mn marks dropped). Table data: unicode_tables.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_UNICODE_H
#define ENCRT_UNICODE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace encrt::unicode {

enum class CharClass : uint8_t {
  Other = 0,
  Control = 1, ///< Any category C* except \t \n \r.
  Space = 2,   ///< ' ', \t, \n, \r, Zs, U+2028, U+2029.
  Punct = 3,   ///< ASCII 33-47, 58-64, 91-96, 123-126 and category P*.
  Mark = 4,    ///< Category Mn (dropped by accent stripping).
};

/// Decodes the code point at `pos` and advances `pos` past it. On an invalid,
/// overlong, surrogate or truncated sequence returns false and advances `pos`
/// by one byte. Requires pos < s.size().
bool decodeUtf8(std::string_view s, size_t &pos, char32_t &cp);

/// Appends the UTF-8 encoding of `cp` (a valid scalar value).
void appendUtf8(std::string &out, char32_t cp);

CharClass charClass(char32_t cp);

/// HF's _is_chinese_char: the CJK Unified Ideographs blocks and extensions
/// A-E, plus the CJK Compatibility Ideographs (and supplement).
inline bool isChineseChar(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

/// Python's str.lower() of one code point; writes 1 or 2 code points to
/// `out` and returns how many.
int toLower(char32_t cp, char32_t out[2]);

/// The classes of the GPT-2 byte-level pre-tokenizer's regex, exactly as the
/// `tokenizers` library's Oniguruma tables have them (unicode_gpt2_gen.py):
/// \p{L}, \p{N}, \s (Unicode White_Space, also what added tokens' lstrip
/// and rstrip strip), and everything else.
enum class Gpt2Class : uint8_t { Other = 0, Letter = 1, Number = 2, Space = 3 };

Gpt2Class gpt2Class(char32_t cp);

/// NFD of `cp` with Mn marks dropped; writes 0 to 3 code points to `out` and
/// returns how many.
int stripAccents(char32_t cp, char32_t out[3]);

} // namespace encrt::unicode

#endif // ENCRT_UNICODE_H
