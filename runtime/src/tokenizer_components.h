//===- tokenizer_components.h - A tokenizer as the library's components ---===//
//
// The `tokenizers` library's pipeline, as an artifact stores it (schema 9.9,
// Tokenizer.pipeline): normalizers in order, pre-tokenizers in order, a
// model, a post-processor, the added tokens. composeTokenizer builds the
// runtime tokenizer that runs such a pipeline: WordPieceTokenizer,
// BytePairTokenizer or UnigramTokenizer, each of which implements the
// compositions listed at composeTokenizer. A composition outside them is
// refused, naming what was asked for and what is implemented; nothing falls
// back to a default.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_TOKENIZER_COMPONENTS_H
#define ENCRT_TOKENIZER_COMPONENTS_H

#include "added_tokens.h"
#include "text_normalizer.h"
#include "tokenizer.h"
#include "unigram_tokenizer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace encrt {

/// The library's BertNormalizer.
struct BertNormalizer {
  bool cleanText = true, handleChineseChars = true, stripAccents = true, lowercase = true;
};
/// A normalizer: BERT's, or one of text_normalizer.h's steps (Precompiled,
/// Replace, Strip, NFC, Prepend).
using Normalizer = std::variant<BertNormalizer, NormalizerStep>;

struct BertPreTokenizer {};
struct ByteLevelPreTokenizer {
  bool addPrefixSpace = false, useRegex = true;
};
/// A Split pre-tokenizer on a pattern encrt scans by code.
struct SplitPreTokenizer {
  enum class Pattern { Qwen2, Cl100k, SpaceMergedWithPrevious } pattern = Pattern::Qwen2;
};
struct MetaspacePreTokenizer {
  std::string replacement = "\xE2\x96\x81"; ///< one character
  MetaspacePrepend prepend = MetaspacePrepend::Always;
  bool split = true;
};
struct WhitespaceSplitPreTokenizer {};
using PreTokenizer = std::variant<BertPreTokenizer, ByteLevelPreTokenizer, SplitPreTokenizer, MetaspacePreTokenizer,
                                  WhitespaceSplitPreTokenizer>;

struct WordPieceModel {
  std::vector<std::string> vocab;
  int32_t unkId = 0;
  int32_t maxCharsPerWord = 100;
};
struct BpeModel {
  std::vector<std::string> vocab;
  std::vector<std::pair<int32_t, int32_t>> merges; ///< vocabulary ids, in rank order
  int32_t unkId = -1;                              ///< -1: none
  bool byteFallback = false, ignoreMerges = false, fuseUnk = false;
};
struct UnigramModel {
  std::vector<std::string> vocab;
  std::vector<double> scores;
  int32_t unkId = 0;
  bool byteFallback = false;
};
using TokenizerModel = std::variant<WordPieceModel, BpeModel, UnigramModel>;

/// TemplateProcessing: the one-text template (-1 where the text goes), the
/// pair's (empty ids: none), the offsets' trim.
struct TemplatePostProcessor {
  std::vector<int32_t> single;
  PairTemplate pair;
  OffsetTrim offsetTrim = OffsetTrim::None;
};

struct TokenizerComponents {
  std::vector<Normalizer> normalizers;
  std::vector<PreTokenizer> preTokenizers;
  TokenizerModel model;
  TemplatePostProcessor postProcessor;
  std::vector<AddedToken> addedTokens;
};

/// The tokenizer that runs `c`, and the largest id it produces (for the
/// caller's check against the model's embedding rows). Implemented:
///  - WordPiece: normalizers [Bert with clean_text], pre-tokenizers [Bert],
///    a single template [A, text, B];
///  - BPE: normalizers of text_normalizer.h's kinds; pre-tokenizers
///    [ByteLevel with its regex], [Split Qwen2 / Cl100k, ByteLevel without
///    its regex or prefix space] (the model sees bytes; no byte fallback),
///    [], [Split after spaces] or [Metaspace] (the model sees characters);
///  - Unigram: normalizers of text_normalizer.h's kinds; pre-tokenizers
///    [Metaspace] or [WhitespaceSplit, Metaspace].
/// Throws std::invalid_argument naming the component otherwise, or on
/// inconsistent data (the implementations' own checks).
std::pair<std::unique_ptr<Tokenizer>, int32_t> composeTokenizer(TokenizerComponents c);

/// A component's name as tokenizer.json spells its type ("BertNormalizer",
/// "ByteLevel", "BPE", ...), for messages.
const char *componentName(const Normalizer &n);
const char *componentName(const PreTokenizer &p);
const char *componentName(const TokenizerModel &m);

} // namespace encrt

#endif // ENCRT_TOKENIZER_COMPONENTS_H
