//===- unigram_tokenizer.h - SentencePiece Unigram tokenizer (XLM-R) ------===//
//
// The `tokenizers` library's Unigram tokenizer as XLM-RoBERTa, multilingual-e5
// and paraphrase-multilingual-* models use it, id for id: added tokens split
// off first (added_tokens.h), each remaining segment normalised
// (text_normalizer.h: the precompiled charsmap, Replace, Strip), optionally
// split at whitespace (WhitespaceSplit), then Metaspace (" " -> "▁", a "▁"
// prepended, split before each "▁"), then the Viterbi segmentation of each
// piece into vocabulary pieces by score (models/unigram/model.rs
// encode_optimized: unknown characters cost min_score - 10 and consecutive
// ones fuse into one unknown), unknown pieces spelled as <0xXX> byte pieces
// when byte_fallback is on; a template puts the special tokens around the
// pieces. Immutable after construction; thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_UNIGRAM_TOKENIZER_H
#define ENCRT_UNIGRAM_TOKENIZER_H

#include "added_tokens.h"
#include "text_normalizer.h"
#include "tokenizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace encrt {

struct UnigramOptions {
  int32_t unkId = 0;         ///< required: Viterbi needs an unknown piece
  bool byteFallback = false; ///< unknown pieces as <0xXX> pieces when all exist
  std::vector<NormalizerStep> normalizers;
  bool whitespaceSplit = false; ///< WhitespaceSplit before Metaspace
  std::string replacement = "\xE2\x96\x81"; ///< Metaspace: one character, U+2581 "▁"
  using Prepend = MetaspacePrepend;
  Prepend prepend = Prepend::Always;
  bool split = true; ///< Metaspace: a piece starts at each replacement
  /// One sequence's post-processing: these ids, with kSequence where the
  /// text's pieces go (exactly once).
  std::vector<int32_t> templateIds;
  static constexpr int32_t kSequence = -1;
  /// The text-pair post-processing (empty ids: none).
  PairTemplate pairTemplate;
  /// What the post-processor does to the offsets.
  OffsetTrim offsetTrim = OffsetTrim::None;
};

class UnigramTokenizer : public Tokenizer {
public:
  /// vocab: id -> piece; scores: id -> log probability (finite); added
  /// tokens' ids may lie past the vocabulary (the model's embedding table
  /// bounds them, checked by the caller). Throws std::invalid_argument on
  /// anything inconsistent.
  UnigramTokenizer(std::vector<std::string> vocab, std::vector<double> scores, std::vector<AddedToken> added,
                   UnigramOptions options);

  std::vector<std::string> tokenize(std::string_view text) const override;
  const std::string *token(int32_t id) const override { return tokenOf(id, vocab_, addedText_); }
  const std::vector<AddedToken> &addedTokens() const override { return added_.tokens(); }
  std::vector<int32_t> encode(std::string_view text, int32_t maxLen) const override;

  /// The largest id this tokenizer can produce.
  int32_t maxId() const { return maxId_; }

protected:
  /// Appends the ids of `text`'s pieces, at most `maxPieces` in all.
  void appendPieces(std::string_view text, size_t maxPieces, std::vector<int32_t> &ids,
                    std::vector<PieceSpan> *spans) const override;
  const PairTemplate &pairTemplate() const override { return options_.pairTemplate; }
  const std::vector<int32_t> &singleTemplate() const override { return options_.templateIds; }
  OffsetTrim offsetTrim() const override { return options_.offsetTrim; }

private:
  struct Scratch;
  /// Pre-tokenises and segments one normalised plain segment; `align`: its
  /// bytes' alignments to the text (with prepend_scheme "first" a word
  /// starting at 0 gets the "▁"; with `spans`, the pieces' offsets), or null
  /// when neither is asked for. Stops once `ids` holds `limit` ids.
  void segment(std::string_view normalized, const TextSpan *align, size_t limit, Scratch &scratch,
               std::vector<int32_t> &ids, std::vector<PieceSpan> *spans) const;
  /// Viterbi over one pre-token, appending ids, and with `spans` their
  /// offsets by `align` (the pre-token's bytes' alignments).
  void viterbi(std::string_view piece, const TextSpan *align, Scratch &scratch, std::vector<int32_t> &ids,
               std::vector<PieceSpan> *spans) const;
  /// The id of exactly `piece`, or -1.
  int32_t lookup(std::string_view piece) const;

  /// A byte trie over the vocabulary, children sorted by label: node i's
  /// children are nodes [childBegin, childEnd), labels_[j] the byte into j.
  struct Node {
    uint32_t childBegin = 0, childEnd = 0;
    int32_t id = -1; ///< the piece ending here (the last duplicate, as the library's map)
  };
  /// The child of `node` along byte `c`, or -1.
  int64_t child(size_t node, unsigned char c) const;

  std::vector<std::string> vocab_;
  std::vector<double> scores_;
  std::vector<Node> nodes_;
  std::vector<unsigned char> labels_;
  int32_t rootChild_[256]; ///< the root's children by byte (most lookups start there), -1 if none
  double unkScore_ = 0;
  int32_t byteIds_[256]; ///< ids of <0x00>..<0xFF>, -1 where missing
  TextNormalizer normalizer_;
  AddedTokenSplitter added_; ///< after normalizer_: it normalises the normalized tokens
  std::unordered_map<int32_t, std::string> addedText_; ///< id -> content, for tokenize()
  UnigramOptions options_;
  int32_t maxId_ = 0;
};

} // namespace encrt

#endif // ENCRT_UNIGRAM_TOKENIZER_H
