//===- TokenizerLoad.cpp - The artifact's tokenizer table -> a Tokenizer --===//
#include "TokenizerLoad.h"

#include "Failure.h"
#include "bpe_tokenizer.h"
#include "tokenizer_components.h"
#include "unigram_tokenizer.h"

#include "encrt/schema_version.h"

#include <stdexcept>

namespace encrt::rt {
namespace {

std::vector<AddedToken> addedTokens(const encm::Tokenizer &t);
UnigramOptions::Prepend prependScheme(encm::PrependScheme p);
PairTemplate pairTemplate(const encm::Tokenizer &t);
OffsetTrim offsetTrim(const encm::Tokenizer &t, OffsetTrim unrecorded);

std::unique_ptr<WordPieceTokenizer> wordPiece(const encm::Tokenizer &t, std::vector<std::string> vocab) {
  WordPieceOptions o;
  o.lowercase = t.do_lower_case();
  o.stripAccents = t.strip_accents();
  o.splitChinese = t.tokenize_chinese_chars();
  o.unkId = t.unk_id();
  o.clsId = t.cls_id();
  o.sepId = t.sep_id();
  o.padId = t.pad_id();
  o.maxCharsPerWord = t.max_input_chars_per_word();
  // No added tokens listed: the built-in [PAD] [UNK] [CLS] [SEP] [MASK] (a vocab.txt).
  std::vector<AddedToken> added = addedTokens(t);
  return std::make_unique<WordPieceTokenizer>(
      std::move(vocab), o,
      WordPieceSpecials{added.empty() ? std::nullopt : std::optional(std::move(added)), pairTemplate(t),
                        offsetTrim(t, OffsetTrim::None)});
}

std::vector<AddedToken> addedTokens(const encm::Tokenizer &t) {
  std::vector<AddedToken> added;
  if (t.added_tokens())
    for (const encm::AddedToken *a : *t.added_tokens())
      added.push_back({a->content() ? a->content()->str() : std::string(), a->id(), a->special(), a->lstrip(),
                       a->rstrip(), a->normalized()});
  return added;
}

std::vector<int32_t> templateIds(const encm::Tokenizer &t) {
  return t.template_ids() ? std::vector<int32_t>(t.template_ids()->begin(), t.template_ids()->end())
                          : std::vector<int32_t>();
}

PairTemplate pairTemplate(const encm::Tokenizer &t) {
  PairTemplate p;
  if (t.pair_template_ids())
    p.ids.assign(t.pair_template_ids()->begin(), t.pair_template_ids()->end());
  if (t.pair_type_ids())
    p.typeIds.assign(t.pair_type_ids()->begin(), t.pair_type_ids()->end());
  return p;
}

/// The post-processor's offset trimming; an artifact older than 9.6 did not
/// record it: `unrecorded` (WordPiece: None, as BertProcessing and
/// TemplateProcessing leave offsets alone and a WordPiece piece has no
/// spaces to trim; BPE, Unigram: Unknown, so that offsets are refused).
OffsetTrim offsetTrim(const encm::Tokenizer &t, OffsetTrim unrecorded) {
  switch (t.offset_trim()) {
  case encm::OffsetTrim::Unrecorded: return unrecorded;
  case encm::OffsetTrim::None: return OffsetTrim::None;
  case encm::OffsetTrim::Trim: return OffsetTrim::Trim;
  case encm::OffsetTrim::TrimKeepPrefixSpace: return OffsetTrim::TrimKeepPrefixSpace;
  default: throw std::invalid_argument("unknown offset trim " + std::to_string(int(t.offset_trim())));
  }
}

/// The normalizer sequence (Unigram's; BPE's NFC), each kind through an
/// exhaustive switch: a value this runtime does not know is an error.
std::vector<NormalizerStep> normalizers(const encm::Tokenizer &t) {
  std::vector<NormalizerStep> steps;
  if (!t.normalizers())
    return steps;
  for (const encm::NormalizerStep *n : *t.normalizers()) {
    NormalizerStep s;
    switch (n->kind()) {
    case encm::NormalizerKind::Precompiled: s.kind = NormalizerStep::Kind::Precompiled; break;
    case encm::NormalizerKind::Replace: s.kind = NormalizerStep::Kind::Replace; break;
    case encm::NormalizerKind::Strip: s.kind = NormalizerStep::Kind::Strip; break;
    case encm::NormalizerKind::Nfc: s.kind = NormalizerStep::Kind::Nfc; break;
    case encm::NormalizerKind::Prepend: s.kind = NormalizerStep::Kind::Prepend; break;
    default: throw std::invalid_argument("unknown normalizer kind " + std::to_string(int(n->kind())));
    }
    if (n->charsmap())
      s.charsmap.assign(reinterpret_cast<const char *>(n->charsmap()->data()), n->charsmap()->size());
    s.pattern = n->pattern() ? n->pattern()->str() : std::string();
    s.minRepeat = n->min_repeat();
    s.content = n->content() ? n->content()->str() : std::string();
    s.stripLeft = n->strip_left();
    s.stripRight = n->strip_right();
    s.stripSpacesOnly = n->strip_spaces_only();
    steps.push_back(std::move(s));
  }
  return steps;
}

std::unique_ptr<BytePairTokenizer> bytePair(const encm::Tokenizer &t, std::vector<std::string> vocab) {
  std::vector<std::pair<int32_t, int32_t>> merges;
  if (t.merges()) {
    merges.reserve(t.merges()->size());
    for (const encm::MergePair *m : *t.merges())
      merges.emplace_back(m->left(), m->right());
  }
  BpeOptions o;
  switch (t.bpe_split()) {
  case encm::BpeSplit::Gpt2: o.split = BpeSplit::Gpt2; break;
  case encm::BpeSplit::Qwen2: o.split = BpeSplit::Qwen2; break;
  case encm::BpeSplit::Cl100k: o.split = BpeSplit::Cl100k; break;
  case encm::BpeSplit::Whole: o.split = BpeSplit::Whole; break;
  case encm::BpeSplit::SpaceMergedWithPrevious: o.split = BpeSplit::SpaceMergedWithPrevious; break;
  default: throw std::invalid_argument("unknown BPE split " + std::to_string(int(t.bpe_split())));
  }
  switch (t.bpe_alphabet()) {
  case encm::BpeAlphabet::Bytes: o.alphabet = BpeAlphabet::Bytes; break;
  case encm::BpeAlphabet::Chars: o.alphabet = BpeAlphabet::Chars; break;
  default: throw std::invalid_argument("unknown BPE alphabet " + std::to_string(int(t.bpe_alphabet())));
  }
  o.byteFallback = t.byte_fallback();
  o.addPrefixSpace = t.add_prefix_space();
  o.ignoreMerges = t.ignore_merges();
  o.fuseUnk = t.fuse_unk();
  o.unkId = t.unk_id();
  o.templateIds = templateIds(t);
  o.pairTemplate = pairTemplate(t);
  o.normalizers = normalizers(t);
  o.offsetTrim = offsetTrim(t, OffsetTrim::Unknown);
  return std::make_unique<BytePairTokenizer>(std::move(vocab), merges, addedTokens(t), std::move(o));
}

std::unique_ptr<UnigramTokenizer> unigram(const encm::Tokenizer &t, std::vector<std::string> vocab) {
  std::vector<double> scores;
  if (t.scores())
    scores.assign(t.scores()->begin(), t.scores()->end());
  UnigramOptions o;
  o.unkId = t.unk_id();
  o.byteFallback = t.byte_fallback();
  o.normalizers = normalizers(t);
  o.whitespaceSplit = t.whitespace_split();
  if (t.metaspace_replacement())
    o.replacement = t.metaspace_replacement()->str();
  o.prepend = prependScheme(t.metaspace_prepend());
  o.split = t.metaspace_split();
  o.templateIds = templateIds(t);
  o.pairTemplate = pairTemplate(t);
  o.offsetTrim = offsetTrim(t, OffsetTrim::Unknown);
  return std::make_unique<UnigramTokenizer>(std::move(vocab), std::move(scores), addedTokens(t), std::move(o));
}

// ---- Schema 9.9: Tokenizer.pipeline, read into components. Every union
// type is read through an exhaustive switch: NONE or a value this runtime
// does not know is an error, never skipped.

std::string str(const flatbuffers::String *s) { return s ? s->str() : std::string(); }

std::vector<std::string> strings(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>> *v) {
  std::vector<std::string> out;
  if (v) {
    out.reserve(v->size());
    for (const flatbuffers::String *s : *v)
      out.push_back(str(s));
  }
  return out;
}

template <typename T> std::vector<T> values(const flatbuffers::Vector<T> *v) {
  return v ? std::vector<T>(v->begin(), v->end()) : std::vector<T>();
}

UnigramOptions::Prepend prependScheme(encm::PrependScheme p) {
  switch (p) {
  case encm::PrependScheme::Always: return UnigramOptions::Prepend::Always;
  case encm::PrependScheme::First: return UnigramOptions::Prepend::First;
  case encm::PrependScheme::Never: return UnigramOptions::Prepend::Never;
  }
  throw std::invalid_argument("unknown Metaspace prepend scheme " + std::to_string(int(p)));
}

OffsetTrim offsetTrim(encm::OffsetTrim t) {
  switch (t) {
  case encm::OffsetTrim::None: return OffsetTrim::None;
  case encm::OffsetTrim::Trim: return OffsetTrim::Trim;
  case encm::OffsetTrim::TrimKeepPrefixSpace: return OffsetTrim::TrimKeepPrefixSpace;
  case encm::OffsetTrim::Unrecorded: break; // only an artifact before 9.6 leaves it unrecorded
  }
  throw std::invalid_argument("offset trim " + std::to_string(int(t)) + " in a post-processor");
}

Normalizer normalizer(encm::Normalizer type, const void *table) {
  NormalizerStep s;
  switch (type) {
  case encm::Normalizer::BertNormalizer: {
    const auto *n = static_cast<const encm::BertNormalizer *>(table);
    return BertNormalizer{n->clean_text(), n->handle_chinese_chars(), n->strip_accents(), n->lowercase()};
  }
  case encm::Normalizer::PrecompiledNormalizer: {
    const auto *n = static_cast<const encm::PrecompiledNormalizer *>(table);
    s.kind = NormalizerStep::Kind::Precompiled;
    if (n->charsmap())
      s.charsmap.assign(reinterpret_cast<const char *>(n->charsmap()->data()), n->charsmap()->size());
    return s;
  }
  case encm::Normalizer::ReplaceNormalizer: {
    const auto *n = static_cast<const encm::ReplaceNormalizer *>(table);
    s.kind = NormalizerStep::Kind::Replace;
    s.pattern = str(n->pattern());
    s.minRepeat = n->min_repeat();
    s.content = str(n->content());
    return s;
  }
  case encm::Normalizer::StripNormalizer: {
    const auto *n = static_cast<const encm::StripNormalizer *>(table);
    s.kind = NormalizerStep::Kind::Strip;
    s.stripLeft = n->left();
    s.stripRight = n->right();
    s.stripSpacesOnly = n->spaces_only();
    return s;
  }
  case encm::Normalizer::NfcNormalizer: s.kind = NormalizerStep::Kind::Nfc; return s;
  case encm::Normalizer::PrependNormalizer:
    s.kind = NormalizerStep::Kind::Prepend;
    s.content = str(static_cast<const encm::PrependNormalizer *>(table)->content());
    return s;
  case encm::Normalizer::NONE: break;
  }
  throw std::invalid_argument("unknown normalizer type " + std::to_string(int(type)));
}

PreTokenizer preTokenizer(encm::PreTokenizer type, const void *table) {
  switch (type) {
  case encm::PreTokenizer::BertPreTokenizer: return BertPreTokenizer{};
  case encm::PreTokenizer::ByteLevelPreTokenizer: {
    const auto *p = static_cast<const encm::ByteLevelPreTokenizer *>(table);
    return ByteLevelPreTokenizer{p->add_prefix_space(), p->use_regex()};
  }
  case encm::PreTokenizer::SplitPreTokenizer:
    switch (static_cast<const encm::SplitPreTokenizer *>(table)->pattern()) {
    case encm::SplitPattern::Qwen2: return SplitPreTokenizer{SplitPreTokenizer::Pattern::Qwen2};
    case encm::SplitPattern::Cl100k: return SplitPreTokenizer{SplitPreTokenizer::Pattern::Cl100k};
    case encm::SplitPattern::SpaceMergedWithPrevious:
      return SplitPreTokenizer{SplitPreTokenizer::Pattern::SpaceMergedWithPrevious};
    }
    throw std::invalid_argument(
        "unknown Split pattern " +
        std::to_string(int(static_cast<const encm::SplitPreTokenizer *>(table)->pattern())));
  case encm::PreTokenizer::MetaspacePreTokenizer: {
    const auto *p = static_cast<const encm::MetaspacePreTokenizer *>(table);
    return MetaspacePreTokenizer{str(p->replacement()), prependScheme(p->prepend_scheme()), p->split()};
  }
  case encm::PreTokenizer::WhitespaceSplitPreTokenizer: return WhitespaceSplitPreTokenizer{};
  case encm::PreTokenizer::NONE: break;
  }
  throw std::invalid_argument("unknown pre-tokenizer type " + std::to_string(int(type)));
}

TokenizerModel tokenizerModel(const encm::TokenizerPipeline &p) {
  switch (p.model_type()) {
  case encm::TokenizerModel::WordPieceModel: {
    const encm::WordPieceModel *m = p.model_as_WordPieceModel();
    return WordPieceModel{strings(m->vocab()), m->unk_id(), m->max_input_chars_per_word()};
  }
  case encm::TokenizerModel::BpeModel: {
    const encm::BpeModel *m = p.model_as_BpeModel();
    BpeModel b{strings(m->vocab()), {}, m->unk_id(), m->byte_fallback(), m->ignore_merges(), m->fuse_unk()};
    if (m->merges()) {
      b.merges.reserve(m->merges()->size());
      for (const encm::MergePair *pair : *m->merges())
        b.merges.emplace_back(pair->left(), pair->right());
    }
    return b;
  }
  case encm::TokenizerModel::UnigramModel: {
    const encm::UnigramModel *m = p.model_as_UnigramModel();
    return UnigramModel{strings(m->vocab()), values(m->scores()), m->unk_id(), m->byte_fallback()};
  }
  case encm::TokenizerModel::NONE: break;
  }
  throw std::invalid_argument("unknown model type " + std::to_string(int(p.model_type())));
}

TemplatePostProcessor postProcessor(const encm::TokenizerPipeline &p) {
  switch (p.post_processor_type()) {
  case encm::PostProcessor::TemplatePostProcessor: {
    const encm::TemplatePostProcessor *t = p.post_processor_as_TemplatePostProcessor();
    return TemplatePostProcessor{values(t->single()), PairTemplate{values(t->pair()), values(t->pair_type_ids())},
                                 offsetTrim(t->offset_trim())};
  }
  case encm::PostProcessor::NONE: break;
  }
  throw std::invalid_argument("unknown post-processor type " + std::to_string(int(p.post_processor_type())));
}

/// The pipeline's components (the flatbuffers verifier has checked that each
/// union's table matches its type and that type and value vectors agree).
TokenizerComponents components(const encm::TokenizerPipeline &p) {
  TokenizerComponents c;
  const auto *nTypes = p.normalizers_type();
  const auto *pTypes = p.pre_tokenizers_type();
  if ((nTypes && nTypes->size() > ENCM_MAX_TOKENIZER_STEPS) || (pTypes && pTypes->size() > ENCM_MAX_TOKENIZER_STEPS))
    throw std::invalid_argument("more than " + std::to_string(ENCM_MAX_TOKENIZER_STEPS) +
                                " normalizers or pre-tokenizers");
  if (nTypes)
    for (flatbuffers::uoffset_t i = 0; i < nTypes->size(); ++i)
      c.normalizers.push_back(normalizer(nTypes->GetEnum<encm::Normalizer>(i), p.normalizers()->Get(i)));
  if (pTypes)
    for (flatbuffers::uoffset_t i = 0; i < pTypes->size(); ++i)
      c.preTokenizers.push_back(preTokenizer(pTypes->GetEnum<encm::PreTokenizer>(i), p.pre_tokenizers()->Get(i)));
  c.model = tokenizerModel(p);
  c.postProcessor = postProcessor(p);
  if (p.added_tokens())
    for (const encm::AddedToken *a : *p.added_tokens())
      c.addedTokens.push_back({str(a->content()), a->id(), a->special(), a->lstrip(), a->rstrip(), a->normalized()});
  return c;
}

/// A tokenizer that checks its own tables, if its ids fit the model.
template <typename T>
std::unique_ptr<Tokenizer> fitting(std::unique_ptr<T> tok, int32_t modelVocab, const std::string &path) {
  if (tok->maxId() >= modelVocab)
    fail(ENCRT_INVALID_ARTIFACT, path, ": the tokenizer produces id ", tok->maxId(), ", the model's vocab_size is ",
         modelVocab);
  return tok;
}

} // namespace

std::unique_ptr<TokenDecoder> loadDecoder(const encm::Tokenizer &table, const Tokenizer &tokenizer,
                                          const std::string &path, std::string &why) {
  if (!table.decoders()) {
    why = "the artifact does not record its tokenizer's decoder (compiled before schema 9.6): compile the model "
          "again to decode";
    return nullptr;
  }
  std::vector<DecoderStep> steps;
  for (const encm::DecoderStep *d : *table.decoders()) {
    DecoderStep s;
    switch (d->kind()) {
    case encm::DecoderKind::WordPiece: s.kind = DecoderStep::Kind::WordPiece; break;
    case encm::DecoderKind::ByteLevel: s.kind = DecoderStep::Kind::ByteLevel; break;
    case encm::DecoderKind::Metaspace: s.kind = DecoderStep::Kind::Metaspace; break;
    case encm::DecoderKind::Replace: s.kind = DecoderStep::Kind::Replace; break;
    case encm::DecoderKind::ByteFallback: s.kind = DecoderStep::Kind::ByteFallback; break;
    case encm::DecoderKind::Fuse: s.kind = DecoderStep::Kind::Fuse; break;
    case encm::DecoderKind::Strip: s.kind = DecoderStep::Kind::Strip; break;
    case encm::DecoderKind::Bpe: s.kind = DecoderStep::Kind::Bpe; break;
    case encm::DecoderKind::Unsupported:
      why = "the tokenizer's decoder " + (d->text() ? d->text()->str().substr(0, 100) : std::string("(unnamed)")) +
            " is not implemented by encrt";
      return nullptr;
    default: fail(ENCRT_INVALID_ARTIFACT, path, ": unknown decoder kind ", static_cast<int>(d->kind()));
    }
    s.text = d->text() ? d->text()->str() : std::string();
    s.content = d->content() ? d->content()->str() : std::string();
    s.cleanup = d->cleanup();
    s.prepend = d->prepend();
    s.start = d->start();
    s.stop = d->stop();
    steps.push_back(std::move(s));
  }
  std::unordered_set<std::string> specials;
  for (const AddedToken &t : tokenizer.addedTokens())
    if (t.special)
      specials.insert(t.content);
  try {
    return std::make_unique<TokenDecoder>(std::move(steps), std::move(specials));
  } catch (const std::invalid_argument &e) {
    fail(ENCRT_INVALID_ARTIFACT, path, ": tokenizer ", e.what());
  }
}

std::unique_ptr<Tokenizer> loadTokenizer(const encm::Tokenizer *table, int32_t modelVocab,
                                         const std::string &path) {
  if (table && table->pipeline()) {
    std::pair<std::unique_ptr<Tokenizer>, int32_t> composed;
    try {
      composed = composeTokenizer(components(*table->pipeline()));
    } catch (const std::invalid_argument &e) {
      fail(ENCRT_INVALID_ARTIFACT, path, ": tokenizer: ", e.what());
    }
    if (composed.second >= modelVocab)
      fail(ENCRT_INVALID_ARTIFACT, path, ": the tokenizer produces id ", composed.second,
           ", the model's vocab_size is ", modelVocab);
    return std::move(composed.first);
  }
  // Before 9.9: one flat table per kind.
  if (!table || !table->vocab() || table->vocab()->size() == 0)
    return nullptr;
  std::vector<std::string> vocab;
  vocab.reserve(table->vocab()->size());
  for (const auto *token : *table->vocab())
    vocab.push_back(token->str());
  try {
    switch (table->kind()) {
    case encm::TokenizerKind::WordPiece:
      return fitting(wordPiece(*table, std::move(vocab)), modelVocab, path);
    case encm::TokenizerKind::ByteLevelBPE:
      return fitting(bytePair(*table, std::move(vocab)), modelVocab, path);
    case encm::TokenizerKind::Unigram:
      return fitting(unigram(*table, std::move(vocab)), modelVocab, path);
    }
  } catch (const std::invalid_argument &e) {
    fail(ENCRT_INVALID_ARTIFACT, path, ": tokenizer: ", e.what());
  }
  fail(ENCRT_INVALID_ARTIFACT, path, ": unknown tokenizer kind ", static_cast<int>(table->kind()));
}

} // namespace encrt::rt
