//===- UnigramTokenizerJson.h - tokenizer.json (Unigram) -> TokenizerData -===//
#ifndef ENCC_FRONTENDS_HF_UNIGRAMTOKENIZERJSON_H
#define ENCC_FRONTENDS_HF_UNIGRAMTOKENIZERJSON_H

#include "frontends/ModelDescription.h"

#include "llvm/Support/Error.h"
#include <nlohmann/json.hpp>

#include <string>

namespace encc {

/// tokenizer.json `j` (read from `path`) whose model.type is "Unigram". When
/// the runtime implements everything the file asks for (normalizers
/// Precompiled / Replace / Strip, in a Sequence or alone; pre-tokenizer
/// Metaspace, optionally after WhitespaceSplit; an unk_id; the
/// post-processors of BPE), fills `tok` (kind Unigram); otherwise leaves
/// tok.vocab empty and says in tok.note what is not supported (the model then
/// runs on token ids only). Errors name the field of a malformed file.
llvm::Error readUnigram(const nlohmann::json &j, const std::string &path, TokenizerData &tok);

} // namespace encc

#endif // ENCC_FRONTENDS_HF_UNIGRAMTOKENIZERJSON_H
