//===- TokenizerText.h - An artifact's tokenizer, described for inspect ---===//
//
// What `encc inspect` says of an artifact's tokenizer table, in either of its
// forms: the components of schema 9.9 (Tokenizer.pipeline) or an older
// artifact's flat table. Reads a table the flatbuffers verifier has checked;
// a kind it does not know is named as unknown, never guessed.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_COMPILER_DRIVER_TOKENIZERTEXT_H
#define ENCC_COMPILER_DRIVER_TOKENIZERTEXT_H

#include "encrt/artifact_generated.h"

#include <cstddef>
#include <string>
#include <vector>

namespace encc {

struct TokenizerText {
  size_t vocabTokens = 0;    ///< 0: no tokenizer (the model runs on ids)
  std::string kind = "none"; ///< "wordpiece", "byte-level-bpe", "bpe", "unigram" or "unknown"
  std::string summary;       ///< "WordPiece, 30522 tokens, lowercase, 5 added tokens"
  /// The components (9.9; empty before): normalizers, pre-tokenizers.
  std::vector<std::string> normalizers, preTokenizers;
  bool components = false;
};

TokenizerText describeTokenizer(const encm::Tokenizer *table);

} // namespace encc

#endif // ENCC_COMPILER_DRIVER_TOKENIZERTEXT_H
