//===- TokenizerLoad.cpp - The artifact's tokenizer table -> a Tokenizer --===//
#include "TokenizerLoad.h"

#include "Failure.h"
#include "bpe_tokenizer.h"
#include "unigram_tokenizer.h"

#include <stdexcept>

namespace encrt::rt {
namespace {

std::vector<AddedToken> addedTokens(const encm::Tokenizer &t);
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
  return std::make_unique<WordPieceTokenizer>(std::move(vocab), o,
                                              WordPieceSpecials{addedTokens(t), pairTemplate(t),
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
  switch (t.metaspace_prepend()) {
  case encm::PrependScheme::Always: o.prepend = UnigramOptions::Prepend::Always; break;
  case encm::PrependScheme::First: o.prepend = UnigramOptions::Prepend::First; break;
  case encm::PrependScheme::Never: o.prepend = UnigramOptions::Prepend::Never; break;
  default: throw std::invalid_argument("unknown Metaspace prepend scheme " + std::to_string(int(t.metaspace_prepend())));
  }
  o.split = t.metaspace_split();
  o.templateIds = templateIds(t);
  o.pairTemplate = pairTemplate(t);
  o.offsetTrim = offsetTrim(t, OffsetTrim::Unknown);
  return std::make_unique<UnigramTokenizer>(std::move(vocab), std::move(scores), addedTokens(t), std::move(o));
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
