//===- token_decoder.h - Token strings back to text (tokenizer.json decoder) -===//
//
// The `tokenizers` library's Tokenizer::decode: the ids' token strings (an
// added token's content, else its vocabulary entry), the special added
// tokens left out when asked, through the tokenizer.json decoder's steps
// (decoders/*.rs, each a function from token strings to token strings),
// joined; without a decoder the strings joined by spaces.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_TOKEN_DECODER_H
#define ENCRT_TOKEN_DECODER_H

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace encrt {

class Tokenizer;

struct DecoderStep {
  enum class Kind {
    WordPiece,    ///< continuations lose `text` ("##"), other tokens but the first get a space; `cleanup`
    ByteLevel,    ///< GPT-2's byte alphabet back to bytes, all tokens into one string (invalid UTF-8 as U+FFFD)
    Metaspace,    ///< `text` (one character, "▁") as a space, dropped in the first token when `prepend`
    Replace,      ///< each occurrence of `text` (a literal) by `content`
    ByteFallback, ///< runs of <0xXX> tokens as their UTF-8 (U+FFFD each when invalid)
    Fuse,         ///< all tokens into one
    Strip,        ///< up to `start` / `stop` of `text` (one character) off each token's ends
    Bpe,          ///< `text` (a suffix, "</w>") as a space, the last token's as nothing
  } kind = Kind::Fuse;
  std::string text, content;
  bool cleanup = false, prepend = true;
  int32_t start = 0, stop = 0;
};

class TokenDecoder {
public:
  /// `steps` in order (empty: join with spaces); `specials` the contents of
  /// the special added tokens (skipped by skipSpecialTokens, as strings: a
  /// vocabulary entry spelled the same is skipped too, as in the library).
  /// Throws std::invalid_argument on a malformed step.
  TokenDecoder(std::vector<DecoderStep> steps, std::unordered_set<std::string> specials);

  /// The text of `ids` by `tokenizer`'s token strings; throws
  /// std::out_of_range naming the first id it has no string for.
  std::string decode(const Tokenizer &tokenizer, const int32_t *ids, size_t count, bool skipSpecialTokens) const;

private:
  std::vector<DecoderStep> steps_;
  std::unordered_set<std::string> specials_;
  std::vector<char32_t> metaspace_; ///< each Metaspace / Strip step's character
};

} // namespace encrt

#endif // ENCRT_TOKEN_DECODER_H
