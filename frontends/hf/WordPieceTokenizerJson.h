//===- WordPieceTokenizerJson.h - tokenizer.json (WordPiece) extras -------===//
#ifndef ENCC_FRONTENDS_HF_WORDPIECETOKENIZERJSON_H
#define ENCC_FRONTENDS_HF_WORDPIECETOKENIZERJSON_H

#include "frontends/ModelDescription.h"

#include "llvm/Support/Error.h"
#include <nlohmann/json.hpp>

#include <string>

namespace encc {

/// tokenizer.json `j` (read from `path`; model.type "WordPiece") beside the
/// WordPiece vocabulary and special ids already in `tok`: its added_tokens
/// and its post-processor's text-pair template, which the library applies
/// and the built-in ones may not match (MPNet: <mask> swallowing the space
/// before it, <unk> matched on the lowercased text, a pair as
/// <s> a </s></s> b </s> with every type 0). When the file asks for what
/// encrt's WordPiece tokenizer does not do (single_word added tokens, a
/// single-text template other than cls text sep), `tok` keeps the built-in
/// ones and `note` says why. Errors name the field of a malformed file.
llvm::Error readWordPieceSpecials(const nlohmann::json &j, const std::string &path, TokenizerData &tok,
                                  std::string &note);

} // namespace encc

#endif // ENCC_FRONTENDS_HF_WORDPIECETOKENIZERJSON_H
