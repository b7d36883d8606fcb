//===- TokenizerText.cpp - An artifact's tokenizer, described for inspect -===//
#include "compiler/driver/TokenizerText.h"

namespace encc {
namespace {

std::string count(size_t n, const char *what) { return std::to_string(n) + " " + what; }

template <typename V> size_t size(const V *v) { return v ? v->size() : 0; }

std::string prependText(encm::PrependScheme p) {
  switch (p) {
  case encm::PrependScheme::Always: return "prepend always";
  case encm::PrependScheme::First: return "prepend first";
  case encm::PrependScheme::Never: return "prepend never";
  }
  return "unknown prepend scheme " + std::to_string(static_cast<int>(p));
}

std::string normalizerText(encm::Normalizer type, const void *table) {
  switch (type) {
  case encm::Normalizer::BertNormalizer: {
    const auto *n = static_cast<const encm::BertNormalizer *>(table);
    std::string opts = std::string(n->lowercase() ? "lowercase" : "cased") +
                       (n->strip_accents() ? ", strip accents" : "") + (n->handle_chinese_chars() ? ", CJK" : "") +
                       (n->clean_text() ? "" : ", no clean-up");
    return "BertNormalizer (" + opts + ")";
  }
  case encm::Normalizer::PrecompiledNormalizer: return "Precompiled";
  case encm::Normalizer::ReplaceNormalizer: return "Replace";
  case encm::Normalizer::StripNormalizer: return "Strip";
  case encm::Normalizer::NfcNormalizer: return "NFC";
  case encm::Normalizer::PrependNormalizer: return "Prepend";
  case encm::Normalizer::NONE: break;
  }
  return "unknown normalizer " + std::to_string(static_cast<int>(type));
}

std::string preTokenizerText(encm::PreTokenizer type, const void *table) {
  switch (type) {
  case encm::PreTokenizer::BertPreTokenizer: return "BertPreTokenizer";
  case encm::PreTokenizer::ByteLevelPreTokenizer: {
    const auto *p = static_cast<const encm::ByteLevelPreTokenizer *>(table);
    std::string opts = std::string(p->use_regex() ? "GPT-2 regex" : "") +
                       (p->add_prefix_space() ? (p->use_regex() ? ", prefix space" : "prefix space") : "");
    return opts.empty() ? "ByteLevel" : "ByteLevel (" + opts + ")";
  }
  case encm::PreTokenizer::SplitPreTokenizer:
    switch (static_cast<const encm::SplitPreTokenizer *>(table)->pattern()) {
    case encm::SplitPattern::Qwen2: return "Split (Qwen2 regex)";
    case encm::SplitPattern::Cl100k: return "Split (cl100k regex)";
    case encm::SplitPattern::SpaceMergedWithPrevious: return "Split (after spaces)";
    }
    return "Split (unknown pattern)";
  case encm::PreTokenizer::MetaspacePreTokenizer: {
    const auto *p = static_cast<const encm::MetaspacePreTokenizer *>(table);
    return "Metaspace (" + prependText(p->prepend_scheme()) + (p->split() ? ", split" : "") + ")";
  }
  case encm::PreTokenizer::WhitespaceSplitPreTokenizer: return "WhitespaceSplit";
  case encm::PreTokenizer::NONE: break;
  }
  return "unknown pre-tokenizer " + std::to_string(static_cast<int>(type));
}

TokenizerText describePipeline(const encm::TokenizerPipeline &p) {
  TokenizerText t;
  t.components = true;
  if (const auto *types = p.normalizers_type())
    for (flatbuffers::uoffset_t i = 0; i < types->size(); ++i)
      t.normalizers.push_back(normalizerText(types->GetEnum<encm::Normalizer>(i), p.normalizers()->Get(i)));
  bool byteLevel = false;
  if (const auto *types = p.pre_tokenizers_type())
    for (flatbuffers::uoffset_t i = 0; i < types->size(); ++i) {
      const auto type = types->GetEnum<encm::PreTokenizer>(i);
      byteLevel |= type == encm::PreTokenizer::ByteLevelPreTokenizer;
      t.preTokenizers.push_back(preTokenizerText(type, p.pre_tokenizers()->Get(i)));
    }
  const std::string added = count(size(p.added_tokens()), "added tokens");
  switch (p.model_type()) {
  case encm::TokenizerModel::WordPieceModel:
    t.vocabTokens = size(p.model_as_WordPieceModel()->vocab());
    t.kind = "wordpiece";
    t.summary = "WordPiece, " + count(t.vocabTokens, "tokens") + ", " + added;
    break;
  case encm::TokenizerModel::BpeModel: {
    const encm::BpeModel *m = p.model_as_BpeModel();
    t.vocabTokens = size(m->vocab());
    t.kind = byteLevel ? "byte-level-bpe" : "bpe";
    t.summary = std::string(byteLevel                ? "byte-level BPE, "
                            : m->byte_fallback() ? "SentencePiece BPE (characters, byte fallback), "
                                                 : "SentencePiece BPE (characters), ") +
                count(t.vocabTokens, "tokens") + ", " + count(size(m->merges()), "merges") + ", " + added;
    break;
  }
  case encm::TokenizerModel::UnigramModel: {
    const encm::UnigramModel *m = p.model_as_UnigramModel();
    t.vocabTokens = size(m->vocab());
    t.kind = "unigram";
    t.summary = "Unigram (SentencePiece), " + count(t.vocabTokens, "pieces") + ", " + added +
                (m->byte_fallback() ? ", byte fallback" : "");
    break;
  }
  case encm::TokenizerModel::NONE:
    t.kind = "unknown";
    t.summary = "unknown model " + std::to_string(static_cast<int>(p.model_type()));
    break;
  }
  return t;
}

// ---- Before schema 9.9: one flat table per kind.

std::string bpeAlphabetText(encm::BpeAlphabet alphabet, bool byteFallback) {
  switch (alphabet) {
  case encm::BpeAlphabet::Bytes: return "byte-level BPE";
  case encm::BpeAlphabet::Chars:
    return byteFallback ? "SentencePiece BPE (characters, byte fallback)" : "SentencePiece BPE (characters)";
  }
  return "BPE of unknown alphabet " + std::to_string(static_cast<int>(alphabet));
}

std::string bpeSplitText(encm::BpeSplit split) {
  switch (split) {
  case encm::BpeSplit::Gpt2: return "";
  case encm::BpeSplit::Qwen2: return ", Qwen2 split regex";
  case encm::BpeSplit::Cl100k: return ", cl100k split regex";
  case encm::BpeSplit::Whole: return ", no pre-tokenizer";
  case encm::BpeSplit::SpaceMergedWithPrevious: return ", split after spaces";
  }
  return ", unknown split " + std::to_string(static_cast<int>(split));
}

TokenizerText describeFlat(const encm::Tokenizer &tk) {
  TokenizerText t;
  t.vocabTokens = size(tk.vocab());
  const std::string added = count(size(tk.added_tokens()), "added tokens");
  switch (tk.kind()) {
  case encm::TokenizerKind::ByteLevelBPE:
    t.kind = "byte-level-bpe";
    t.summary = bpeAlphabetText(tk.bpe_alphabet(), tk.byte_fallback()) + ", " + count(t.vocabTokens, "tokens") + ", " +
                count(size(tk.merges()), "merges") + ", " + added + (tk.add_prefix_space() ? ", prefix space" : "") +
                bpeSplitText(tk.bpe_split());
    return t;
  case encm::TokenizerKind::Unigram:
    t.kind = "unigram";
    t.summary = "Unigram (SentencePiece), " + count(t.vocabTokens, "pieces") + ", " + added + ", " +
                count(size(tk.normalizers()), "normalizers") + (tk.byte_fallback() ? ", byte fallback" : "");
    return t;
  case encm::TokenizerKind::WordPiece:
    t.kind = "wordpiece";
    t.summary = "WordPiece, " + count(t.vocabTokens, "tokens") + (tk.do_lower_case() ? ", lowercase" : "") +
                (size(tk.added_tokens()) ? ", " + added + " from tokenizer.json" : std::string());
    return t;
  }
  t.kind = "unknown";
  t.summary = "unknown kind " + std::to_string(static_cast<int>(tk.kind()));
  return t;
}

} // namespace

TokenizerText describeTokenizer(const encm::Tokenizer *table) {
  if (table && table->pipeline())
    return describePipeline(*table->pipeline());
  if (!table || size(table->vocab()) == 0)
    return {};
  return describeFlat(*table);
}

} // namespace encc
