//===- TokenizerLoad.cpp - The artifact's tokenizer table -> a Tokenizer --===//
#include "TokenizerLoad.h"

#include "Failure.h"
#include "bpe_tokenizer.h"

#include <stdexcept>

namespace encrt::rt {
namespace {

std::unique_ptr<Tokenizer> wordPiece(const encm::Tokenizer &t, std::vector<std::string> vocab) {
  WordPieceOptions o;
  o.lowercase = t.do_lower_case();
  o.stripAccents = t.strip_accents();
  o.splitChinese = t.tokenize_chinese_chars();
  o.unkId = t.unk_id();
  o.clsId = t.cls_id();
  o.sepId = t.sep_id();
  o.padId = t.pad_id();
  o.maxCharsPerWord = t.max_input_chars_per_word();
  return std::make_unique<WordPieceTokenizer>(std::move(vocab), o);
}

std::unique_ptr<BytePairTokenizer> bytePair(const encm::Tokenizer &t, std::vector<std::string> vocab) {
  std::vector<std::pair<int32_t, int32_t>> merges;
  if (t.merges()) {
    merges.reserve(t.merges()->size());
    for (const encm::MergePair *m : *t.merges())
      merges.emplace_back(m->left(), m->right());
  }
  std::vector<AddedToken> added;
  if (t.added_tokens())
    for (const encm::AddedToken *a : *t.added_tokens())
      added.push_back({a->content() ? a->content()->str() : std::string(), a->id(), a->special(), a->lstrip(),
                       a->rstrip(), a->normalized()});
  BpeOptions o;
  o.addPrefixSpace = t.add_prefix_space();
  o.ignoreMerges = t.ignore_merges();
  o.fuseUnk = t.fuse_unk();
  o.unkId = t.unk_id();
  if (t.template_ids())
    o.templateIds.assign(t.template_ids()->begin(), t.template_ids()->end());
  return std::make_unique<BytePairTokenizer>(std::move(vocab), merges, std::move(added), std::move(o));
}

} // namespace

std::unique_ptr<Tokenizer> loadTokenizer(const encm::Tokenizer *table, int32_t modelVocab,
                                         const std::string &path) {
  if (!table || !table->vocab() || table->vocab()->size() == 0)
    return nullptr;
  std::vector<std::string> vocab;
  vocab.reserve(table->vocab()->size());
  for (const auto *token : *table->vocab())
    vocab.push_back(token->str());
  try {
    switch (table->kind()) {
    case encm::TokenizerKind::WordPiece:
      return wordPiece(*table, std::move(vocab));
    case encm::TokenizerKind::ByteLevelBPE: {
      auto bpe = bytePair(*table, std::move(vocab));
      if (bpe->maxId() >= modelVocab)
        fail(ENCRT_INVALID_ARTIFACT, path, ": the tokenizer produces id ", bpe->maxId(),
             ", the model's vocab_size is ", modelVocab);
      return bpe;
    }
    }
  } catch (const std::invalid_argument &e) {
    fail(ENCRT_INVALID_ARTIFACT, path, ": tokenizer: ", e.what());
  }
  fail(ENCRT_INVALID_ARTIFACT, path, ": unknown tokenizer kind ", static_cast<int>(table->kind()));
}

} // namespace encrt::rt
