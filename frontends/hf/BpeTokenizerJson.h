//===- BpeTokenizerJson.h - tokenizer.json (BPE) -> TokenizerData ---------===//
#ifndef ENCC_FRONTENDS_HF_BPETOKENIZERJSON_H
#define ENCC_FRONTENDS_HF_BPETOKENIZERJSON_H

#include "frontends/ModelDescription.h"

#include "llvm/Support/Error.h"
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace encc {

/// tokenizer.json `j` (read from `path`) whose model.type is "BPE". When the
/// runtime implements everything the file asks for (byte-level BPE: no
/// normalizer, the ByteLevel pre-tokenizer with its regex, RobertaProcessing /
/// BertProcessing / TemplateProcessing / ByteLevel post-processing, added
/// tokens without single_word), fills `tok` (kind ByteLevelBPE); otherwise
/// leaves tok.vocab empty and says in tok.note what is not supported (the
/// model then runs on token ids only). Errors name the field of a malformed
/// file (wrong types, merges of unknown tokens, ids out of range).
llvm::Error readByteLevelBpe(const nlohmann::json &j, const std::string &path, TokenizerData &tok);

} // namespace encc

#endif // ENCC_FRONTENDS_HF_BPETOKENIZERJSON_H
