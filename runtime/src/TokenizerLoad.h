//===- TokenizerLoad.h - The artifact's tokenizer table -> a Tokenizer ----===//
//
// Builds the runtime tokenizer an artifact describes (WordPiece or byte-level
// BPE), checking every id it can produce against the model's vocab_size (the
// embedding table a produced id indexes) and the data's consistency (merges
// that name vocabulary entries, a template with the text exactly once).
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_TOKENIZERLOAD_H
#define ENCRT_TOKENIZERLOAD_H

#include "token_decoder.h"
#include "tokenizer.h"

#include "encrt/artifact_generated.h"

#include <memory>
#include <string>

namespace encrt::rt {

/// Null when the artifact carries no tokenizer (none, or an empty vocabulary:
/// the model runs on token ids only). Fails with ENCRT_INVALID_ARTIFACT,
/// naming `path`, on anything inconsistent.
std::unique_ptr<Tokenizer> loadTokenizer(const encm::Tokenizer *table, int32_t modelVocab,
                                         const std::string &path);

/// The tokenizer's decoder (its table's steps, the tokenizer's special added
/// tokens); null with `why` set when decoding cannot be done: an artifact
/// older than schema 9.6 (no steps recorded) or a decoder encrt does not
/// implement. Fails with ENCRT_INVALID_ARTIFACT on an unknown or malformed
/// step.
std::unique_ptr<TokenDecoder> loadDecoder(const encm::Tokenizer &table, const Tokenizer &tokenizer,
                                          const std::string &path, std::string &why);

} // namespace encrt::rt

#endif // ENCRT_TOKENIZERLOAD_H
