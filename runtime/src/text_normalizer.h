//===- text_normalizer.h - A tokenizer.json normalizer sequence -----------===//
//
// The `tokenizers` library's normalizers that SentencePiece-style tokenizers
// use, applied in order: Precompiled (precompiled_charsmap.h), Replace (a
// literal pattern, or runs of one repeated pattern such as the converters'
// Regex(" {2,}")), Strip (Unicode White_Space, or only spaces as the
// converters' Regex("\A +| +\z"), at either end), NFC (unicode_nfc.h: GPT-NeoX's byte-level BPE
// tokenizers, ModernBERT's).
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_TEXT_NORMALIZER_H
#define ENCRT_TEXT_NORMALIZER_H

#include "precompiled_charsmap.h"
#include "text_span.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace encrt {

struct NormalizerStep {
  enum class Kind { Precompiled, Replace, Strip, Nfc, Prepend } kind = Kind::Replace;
  std::string charsmap; ///< Precompiled: the serialised map
  std::string pattern;  ///< Replace: non-empty UTF-8
  /// Replace: 0 replaces each occurrence of `pattern`; n >= 1 replaces each
  /// run of n or more consecutive `pattern`s (the run as a whole).
  int32_t minRepeat = 0;
  std::string content;  ///< Replace: the replacement; Prepend: what goes before a non-empty text
  bool stripLeft = false, stripRight = false; ///< Strip
  bool stripSpacesOnly = false; ///< Strip: only U+0020 (Regex "\\A +| +\\z"), not all White_Space
};

class TextNormalizer {
public:
  /// Throws std::invalid_argument on a malformed step (an empty pattern, a
  /// negative repeat, a damaged charsmap).
  explicit TextNormalizer(const std::vector<NormalizerStep> &steps);

  bool empty() const { return steps_.empty(); }

  /// `text` (valid UTF-8) after every step, in `out` (replaced). With
  /// `origin`, also the library's alignment of the result to `text`: for
  /// each byte of `out`, the bytes of `text` of the character it came from
  /// (a token's offsets; Metaspace's prepend_scheme "first" asks whether a
  /// piece starts at 0). It follows the library's bookkeeping, quirks
  /// included: inserted characters share their predecessor's origin ((0, 0)
  /// at the start), a replacement takes the origin of the last character it
  /// replaced, and the precompiled charsmap deleting a leading character
  /// shifts the origins of what follows onto the deleted one.
  void apply(std::string_view text, std::string &out, std::vector<TextSpan> *origin = nullptr) const;

private:
  struct Step {
    NormalizerStep spec;
    std::shared_ptr<const PrecompiledCharsmap> charsmap;
  };
  std::vector<Step> steps_;
};

} // namespace encrt

#endif // ENCRT_TEXT_NORMALIZER_H
