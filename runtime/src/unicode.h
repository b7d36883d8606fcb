//===- unicode.h - UTF-8 and the Unicode queries of the tokenizers --------===//
//
// Strict UTF-8 decoding, and just what the tokenizers ask of Unicode, with the
// `tokenizers` library's semantics and Unicode data (the tables are generated
// by asking the library about every code point): BERT normalisation and
// pre-tokenisation classes with accent stripping and lowercasing
// (unicode_bert_tables.cpp), the GPT-2 pre-tokenizer's classes
// (unicode_gpt2_tables.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_UNICODE_H
#define ENCRT_UNICODE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace encrt::unicode {

/// Decodes the code point at `pos` and advances `pos` past it. On an invalid,
/// overlong, surrogate or truncated sequence returns false and advances `pos`
/// by one byte. Requires pos < s.size().
bool decodeUtf8(std::string_view s, size_t &pos, char32_t &cp);

/// `text` itself when it is valid UTF-8; else `text` with each invalid byte
/// replaced by `replacement` (empty: dropped), written to `buffer`.
std::string_view validUtf8(std::string_view text, std::string &buffer, std::string_view replacement);

/// Appends the UTF-8 encoding of `cp` (a valid scalar value).
void appendUtf8(std::string &out, char32_t cp);

/// What the `tokenizers` library's BertNormalizer (clean_text,
/// handle_chinese_chars) and BertPreTokenizer do with a code point
/// (unicode_bert_gen.py reads it off the library).
enum class BertClass : uint8_t {
  Other = 0,
  Removed = 1, ///< clean_text drops it: controls, format, unassigned, NUL, U+FFFD
  Space = 2,   ///< clean_text makes it " "; words end there
  Punct = 3,   ///< the pre-tokenizer makes it a word of its own
  Chinese = 4, ///< handle_chinese_chars puts spaces around it
};

BertClass bertClass(char32_t cp);

constexpr int kMaxBertExpansion = 3;

/// The BertNormalizer's strip_accents (NFD, Mn dropped) and/or lowercase of
/// one code point: writes 0..kMaxBertExpansion code points to `out`, returns
/// how many.
int bertNormalize(char32_t cp, bool stripAccents, bool lowercase, char32_t out[kMaxBertExpansion]);

/// The classes of the GPT-2 byte-level pre-tokenizer's regex, exactly as the
/// `tokenizers` library's Oniguruma tables have them (unicode_gpt2_gen.py):
/// \p{L}, \p{N}, \s (Unicode White_Space, also what added tokens' lstrip
/// and rstrip strip), and everything else.
/// GPT-2's bytes_to_unicode (byte-level BPE's alphabet): printable Latin-1
/// bytes map to themselves, the others to U+0100 + n in byte order.
char32_t gpt2ByteChar(unsigned byte);

enum class Gpt2Class : uint8_t { Other = 0, Letter = 1, Number = 2, Space = 3 };

Gpt2Class gpt2Class(char32_t cp);

} // namespace encrt::unicode

#endif // ENCRT_UNICODE_H
