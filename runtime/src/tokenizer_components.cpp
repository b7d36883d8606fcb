//===- tokenizer_components.cpp - Components -> a runtime tokenizer -------===//
#include "tokenizer_components.h"

#include "bpe_tokenizer.h"

#include <stdexcept>
#include <type_traits>

namespace encrt {
namespace {

template <typename... F> struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F> Overloaded(F...) -> Overloaded<F...>;

template <typename T, typename V> const T *as(const V &v) { return std::get_if<T>(&v); }

[[noreturn]] void notImplemented(const std::string &what, const char *implemented) {
  throw std::invalid_argument(what + " is not implemented (" + implemented + ")");
}

/// "[A, B]": the components' names, for messages.
template <typename T> std::string names(const std::vector<T> &list) {
  std::string s = "[";
  for (const T &c : list)
    s += (s.size() > 1 ? ", " : "") + std::string(componentName(c));
  return s + "]";
}

/// The normalizers as text_normalizer.h's steps; a BertNormalizer is refused
/// (only WordPiece runs it).
std::vector<NormalizerStep> textSteps(std::vector<Normalizer> &normalizers, const char *model) {
  std::vector<NormalizerStep> steps;
  for (Normalizer &n : normalizers) {
    if (!std::holds_alternative<NormalizerStep>(n))
      notImplemented(std::string("a ") + componentName(n) + " before a " + model + " model",
                     "Precompiled, Replace, Strip, NFC and Prepend are");
    steps.push_back(std::move(std::get<NormalizerStep>(n)));
  }
  return steps;
}

/// The tokenizer and the largest id it produces.
template <typename T> std::pair<std::unique_ptr<Tokenizer>, int32_t> withMaxId(std::unique_ptr<T> tok) {
  const int32_t maxId = tok->maxId();
  return {std::move(tok), maxId};
}

/// The post-processor into BpeOptions / UnigramOptions.
template <typename Options> void takeTemplates(Options &o, TemplatePostProcessor &post) {
  o.templateIds = std::move(post.single);
  o.pairTemplate = std::move(post.pair);
  o.offsetTrim = post.offsetTrim;
}

std::pair<std::unique_ptr<Tokenizer>, int32_t> wordPiece(TokenizerComponents &c, WordPieceModel &m) {
  const BertNormalizer *bert = c.normalizers.size() == 1 ? as<BertNormalizer>(c.normalizers[0]) : nullptr;
  if (!bert || !bert->cleanText)
    notImplemented("WordPiece after normalizers " + names(c.normalizers),
                   "one BertNormalizer with clean_text is");
  if (c.preTokenizers.size() != 1 || !as<BertPreTokenizer>(c.preTokenizers[0]))
    notImplemented("WordPiece after pre-tokenizers " + names(c.preTokenizers), "one BertPreTokenizer is");
  const std::vector<int32_t> &single = c.postProcessor.single;
  if (single.size() != 3 || single[0] < 0 || single[1] != -1 || single[2] < 0)
    notImplemented("WordPiece with a one-text template of " + std::to_string(single.size()) + " entries",
                   "[A] text [B] is");
  if (c.postProcessor.pair.ids.empty())
    notImplemented("WordPiece without a pair template", "a template for text pairs is required");
  WordPieceOptions o;
  o.lowercase = bert->lowercase;
  o.stripAccents = bert->stripAccents;
  o.splitChinese = bert->handleChineseChars;
  o.unkId = m.unkId;
  o.clsId = single[0];
  o.sepId = single[2];
  o.padId = m.unkId; // the built-in added tokens' [PAD]; the components always list theirs
  o.maxCharsPerWord = m.maxCharsPerWord;
  return withMaxId(std::make_unique<WordPieceTokenizer>(
      std::move(m.vocab), o,
      WordPieceSpecials{std::move(c.addedTokens), std::move(c.postProcessor.pair), c.postProcessor.offsetTrim}));
}

std::pair<std::unique_ptr<Tokenizer>, int32_t> bytePair(TokenizerComponents &c, BpeModel &m) {
  BpeOptions o;
  o.normalizers = textSteps(c.normalizers, "BPE");
  const std::vector<PreTokenizer> &pre = c.preTokenizers;
  const auto *split = pre.empty() ? nullptr : as<SplitPreTokenizer>(pre[0]);
  const auto *byteLevel = pre.empty() ? nullptr : as<ByteLevelPreTokenizer>(pre.back());
  using Pattern = SplitPreTokenizer::Pattern;
  if (pre.size() == 1 && byteLevel && byteLevel->useRegex) {
    o.split = BpeSplit::Gpt2;
  } else if (pre.size() == 2 && split && split->pattern != Pattern::SpaceMergedWithPrevious && byteLevel &&
             !byteLevel->useRegex && !byteLevel->addPrefixSpace) {
    o.split = split->pattern == Pattern::Qwen2 ? BpeSplit::Qwen2 : BpeSplit::Cl100k;
  } else if (pre.empty()) {
    o.split = BpeSplit::Whole;
  } else if (pre.size() == 1 && split && split->pattern == Pattern::SpaceMergedWithPrevious) {
    o.split = BpeSplit::SpaceMergedWithPrevious;
  } else if (const auto *metaspace = pre.size() == 1 ? as<MetaspacePreTokenizer>(pre[0]) : nullptr) {
    o.split = BpeSplit::Metaspace;
    o.metaspace = {metaspace->replacement, metaspace->prepend, metaspace->split};
  } else {
    notImplemented("BPE after pre-tokenizers " + names(pre),
                   "[ByteLevel with its regex], [Split on Qwen2's or cl100k's regex, ByteLevel without its regex "
                   "or prefix space], [], [Split after spaces] and [Metaspace] are");
  }
  o.alphabet = byteLevel ? BpeAlphabet::Bytes : BpeAlphabet::Chars;
  if (byteLevel && m.byteFallback)
    notImplemented("BPE byte_fallback after a ByteLevel pre-tokenizer", "byte fallback on characters is");
  o.addPrefixSpace = byteLevel && byteLevel->addPrefixSpace;
  o.byteFallback = m.byteFallback;
  o.ignoreMerges = m.ignoreMerges;
  o.fuseUnk = m.fuseUnk;
  o.unkId = m.unkId;
  takeTemplates(o, c.postProcessor);
  return withMaxId(
      std::make_unique<BytePairTokenizer>(std::move(m.vocab), m.merges, std::move(c.addedTokens), std::move(o)));
}

std::pair<std::unique_ptr<Tokenizer>, int32_t> unigram(TokenizerComponents &c, UnigramModel &m) {
  UnigramOptions o;
  o.normalizers = textSteps(c.normalizers, "Unigram");
  const std::vector<PreTokenizer> &pre = c.preTokenizers;
  const auto *metaspace = pre.empty() ? nullptr : as<MetaspacePreTokenizer>(pre.back());
  o.whitespaceSplit = pre.size() == 2 && as<WhitespaceSplitPreTokenizer>(pre[0]);
  if (!metaspace || pre.size() > 2 || (pre.size() == 2 && !o.whitespaceSplit))
    notImplemented("Unigram after pre-tokenizers " + names(pre), "[Metaspace] and [WhitespaceSplit, Metaspace] are");
  o.replacement = metaspace->replacement;
  o.prepend = metaspace->prepend;
  o.split = metaspace->split;
  o.unkId = m.unkId;
  o.byteFallback = m.byteFallback;
  takeTemplates(o, c.postProcessor);
  return withMaxId(std::make_unique<UnigramTokenizer>(std::move(m.vocab), std::move(m.scores),
                                                      std::move(c.addedTokens), std::move(o)));
}

} // namespace

std::pair<std::unique_ptr<Tokenizer>, int32_t> composeTokenizer(TokenizerComponents c) {
  return std::visit(Overloaded{[&](WordPieceModel &m) { return wordPiece(c, m); },
                               [&](BpeModel &m) { return bytePair(c, m); },
                               [&](UnigramModel &m) { return unigram(c, m); }},
                    c.model);
}

const char *componentName(const Normalizer &n) {
  if (std::holds_alternative<BertNormalizer>(n))
    return "BertNormalizer";
  switch (std::get<NormalizerStep>(n).kind) {
  case NormalizerStep::Kind::Precompiled: return "Precompiled";
  case NormalizerStep::Kind::Replace: return "Replace";
  case NormalizerStep::Kind::Strip: return "Strip";
  case NormalizerStep::Kind::Nfc: return "NFC";
  case NormalizerStep::Kind::Prepend: return "Prepend";
  }
  return "?"; // unreachable (-Werror=switch)
}

const char *componentName(const PreTokenizer &p) {
  return std::visit(Overloaded{[](const BertPreTokenizer &) { return "BertPreTokenizer"; },
                               [](const ByteLevelPreTokenizer &) { return "ByteLevel"; },
                               [](const SplitPreTokenizer &) { return "Split"; },
                               [](const MetaspacePreTokenizer &) { return "Metaspace"; },
                               [](const WhitespaceSplitPreTokenizer &) { return "WhitespaceSplit"; }},
                    p);
}

const char *componentName(const TokenizerModel &m) {
  return std::visit(Overloaded{[](const WordPieceModel &) { return "WordPiece"; },
                               [](const BpeModel &) { return "BPE"; },
                               [](const UnigramModel &) { return "Unigram"; }},
                    m);
}

} // namespace encrt
