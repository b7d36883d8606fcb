//===- SentencePieceModel.h - sentencepiece.bpe.model -> TokenizerData -----===//
#ifndef ENCC_FRONTENDS_HF_SENTENCEPIECEMODEL_H
#define ENCC_FRONTENDS_HF_SENTENCEPIECEMODEL_H

#include "frontends/ModelDescription.h"

#include "llvm/Support/Error.h"

#include <string>

namespace encc {

/// An XLM-RoBERTa folder's SentencePiece model (sentencepiece.bpe.model, a
/// serialised sentencepiece ModelProto; a folder without tokenizer.json) as
/// the tokenizer transformers' XLMRobertaConverter makes of it: the fairseq
/// ids (<s> <pad> </s> <unk>, the pieces from the fourth on, <mask> last),
/// the precompiled charsmap then Strip(right) and Replace(" {2,}", "▁"),
/// Metaspace (a "▁" prepended when the model adds a dummy prefix), <s> a </s>
/// and <s> a </s></s> b </s>. A model that is not Unigram leaves tok.vocab
/// empty with a note (ids only). Errors name the file and what is malformed.
llvm::Error readXlmRobertaSentencePiece(const std::string &path, TokenizerData &tok);

/// The same from the file's bytes (`path` names it in errors and notes).
llvm::Error xlmRobertaSentencePiece(llvm::StringRef bytes, const std::string &path, TokenizerData &tok);

} // namespace encc

#endif // ENCC_FRONTENDS_HF_SENTENCEPIECEMODEL_H
