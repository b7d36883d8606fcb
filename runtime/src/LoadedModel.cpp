//===- LoadedModel.cpp - Everything a loaded artifact owns ----------------===//
#include "LoadedModel.h"

#include "Failure.h"

namespace encrt::rt {

std::shared_ptr<LoadedModel> LoadedModel::load(const std::string &path,
                                               const LoadOptions &options) {
  std::shared_ptr<LoadedModel> m(new LoadedModel());
  m->artifact_ = Artifact::open(path);
  m->code_ = CodeModule::load(*m->artifact_, options.cpuTarget);
  m->pool_ = std::make_unique<ThreadPool>(options.numThreads);

  const encm::Metadata &md = m->metadata();
  m->architecture_ = md.architecture() ? md.architecture()->str() : "";
  m->pooling_ = md.pooling() ? md.pooling()->str() : "none";

  if (const encm::Tokenizer *t = m->model().tokenizer()) {
    std::vector<std::string> vocab;
    vocab.reserve(t->vocab()->size());
    for (const auto *token : *t->vocab())
      vocab.push_back(token->str());
    WordPieceOptions o;
    o.lowercase = t->do_lower_case();
    o.stripAccents = t->strip_accents();
    o.splitChinese = t->tokenize_chinese_chars();
    o.unkId = t->unk_id();
    o.clsId = t->cls_id();
    o.sepId = t->sep_id();
    o.padId = t->pad_id();
    o.maxCharsPerWord = t->max_input_chars_per_word();
    m->tokenizer_ = std::make_unique<WordPieceTokenizer>(std::move(vocab), o);
  }
  return m;
}

std::vector<int32_t> LoadedModel::encode(std::string_view text) const {
  if (!tokenizer_)
    fail(ENCRT_UNSUPPORTED, artifact_->path(),
         ": the artifact has no tokenizer (pass token ids instead)");
  return tokenizer_->encode(text, metadata().max_seq() < 2 ? 2 : metadata().max_seq());
}

} // namespace encrt::rt
