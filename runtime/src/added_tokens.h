//===- added_tokens.h - Splitting text on a tokenizer's added tokens ------===//
//
// The `tokenizers` library's AddedVocabulary: before pre-tokenisation, the
// text is cut at every occurrence of an added token (<s>, <mask>, user-added
// words), found leftmost-longest, in two passes: first the tokens matched on
// the raw text (normalized: false), then, in the plain segments left over and
// after the normalizer, the tokens matched on normalised text (normalized:
// true). A normalized token is matched as the normalizer leaves its content
// (the library normalises it when it builds its matcher: "COVID19" under a
// lowercasing normalizer is found as "covid19"; one the normalizer erases is
// never found). lstrip / rstrip make a token swallow the whitespace (Unicode
// White_Space) on its left / right. single_word tokens are not supported (the
// frontend refuses them).
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_ADDED_TOKENS_H
#define ENCRT_ADDED_TOKENS_H

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace encrt {

struct AddedToken {
  std::string content; ///< non-empty UTF-8
  int32_t id = 0;
  bool special = true;     ///< informational (decoding skips special tokens)
  bool lstrip = false;     ///< swallow the whitespace on its left
  bool rstrip = false;     ///< swallow the whitespace on its right
  bool normalized = false; ///< matched on normalised text (second pass)
};

/// A run of the text: an added token (id >= 0) or a plain segment (id -1).
struct TextPiece {
  std::string_view text;
  int32_t id = -1;
};

class AddedTokenSplitter {
public:
  /// The tokenizer's normalizer: `text` (valid UTF-8) normalised into `out`
  /// (replaced). Empty for a tokenizer without one.
  using Normalizer = std::function<void(std::string_view text, std::string &out)>;

  /// The normalized tokens are matched as `normalize` leaves their content.
  /// Throws std::invalid_argument for an empty, over-long (> 256 bytes) or
  /// invalid UTF-8 content or a negative id.
  AddedTokenSplitter(const std::vector<AddedToken> &tokens, const Normalizer &normalize);

  /// Cuts `text` (valid UTF-8) at the tokens of one pass (normalized: false
  /// or true) and appends the pieces, which cover `text` in order; empty plain
  /// segments are left out.
  void split(std::string_view text, bool normalizedPass, std::vector<TextPiece> &out) const;

  /// The tokens, as given.
  const std::vector<AddedToken> &tokens() const { return tokens_; }

  /// Both passes, for a tokenizer without a normalizer: the plain pieces of
  /// the first pass are cut again at the normalized tokens.
  void split(std::string_view text, std::vector<TextPiece> &out) const;

private:
  /// A byte trie: node 0 is the root; terminal[node] indexes tokens_ or is -1.
  struct Trie {
    std::unordered_map<uint64_t, uint32_t> edges; ///< (node << 8 | byte) -> child
    std::vector<int32_t> terminal = {-1};
    bool firstByte[256] = {}; ///< bytes a token starts with (most positions skip the walk)
  };
  std::vector<AddedToken> tokens_;
  Trie tries_[2];
};

} // namespace encrt

#endif // ENCRT_ADDED_TOKENS_H
