//===- bpe_tokenizer.h - BPE tokenizers (GPT-2, RoBERTa, Qwen, Gemma) -----===//
//
// The `tokenizers` library's BPE, id for id: added tokens split off first
// (added_tokens.h: the raw ones, then, after the normalizer if there is one,
// the normalized ones); each remaining segment optionally gets a leading space
// (add_prefix_space), is cut into words (BpeSplit: the GPT-2 pre-tokenizer
// regex, a Split pre-tokenizer's: Qwen2's, cl100k's, after each space, or not
// at all), whose symbols (BpeAlphabet: each byte mapped to the GPT-2 byte
// alphabet, or each character itself with <0xXX> byte fallback) are merged by
// rank (lowest first, then leftmost); a template (RobertaProcessing,
// TemplateProcessing) puts the special tokens around the pieces. Immutable
// after construction; thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_BPE_TOKENIZER_H
#define ENCRT_BPE_TOKENIZER_H

#include "added_tokens.h"
#include "text_normalizer.h"
#include "tokenizer.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace encrt {

/// The regex that cuts a segment into pre-tokens.
enum class BpeSplit {
  /// The ByteLevel pre-tokenizer's (GPT-2, RoBERTa, GPT-NeoX):
  /// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  Gpt2,
  /// A Split pre-tokenizer's (Qwen2 / Qwen3; Cl100k: GPT-4, Llama 3, digits
  /// in runs of up to three instead of one) before a ByteLevel one without
  /// its regex: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|
  ///  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  Qwen2,
  Cl100k,
  /// No pre-tokenizer: each segment is one word (Llama 2, Mistral).
  Whole,
  /// A Split on " " with behavior MergedWithPrevious: a word ends after each
  /// space (Gemma, whose normalizer has already turned spaces into "▁").
  SpaceMergedWithPrevious,
  /// A Metaspace pre-tokenizer (BpeOptions::metaspace; transformers'
  /// non-legacy Llama / Mistral files): each segment's spaces become the
  /// replacement, which is prepended as its scheme says, and a word starts
  /// at each replacement (split) or the segment is one word.
  Metaspace,
};

/// A Metaspace pre-tokenizer's options.
struct MetaspaceOptions {
  std::string replacement = "\xE2\x96\x81"; ///< one character, U+2581 "▁"
  MetaspacePrepend prepend = MetaspacePrepend::Always;
  bool split = true;
};

/// A word's initial symbols.
enum class BpeAlphabet {
  /// Each byte as its GPT-2 byte-alphabet character (byte-level BPE).
  Bytes,
  /// Each character as itself; one missing from the vocabulary becomes its
  /// UTF-8 bytes' <0xXX> tokens (byteFallback, when all are present), else
  /// the unknown token (SentencePiece BPE: Gemma, Llama 2, Mistral).
  Chars,
};

struct BpeOptions {
  BpeSplit split = BpeSplit::Gpt2;
  MetaspaceOptions metaspace; ///< split Metaspace
  BpeAlphabet alphabet = BpeAlphabet::Bytes;
  bool byteFallback = false;   ///< Chars: <0xXX> tokens for characters outside the vocabulary
  bool addPrefixSpace = false; ///< ByteLevel pre-tokenizer: " " before each segment
  bool ignoreMerges = false;   ///< a pre-token that is a vocabulary entry is taken whole
  bool fuseUnk = false;        ///< consecutive unknown symbols become one unk
  int32_t unkId = -1;          ///< for bytes missing from the vocabulary; -1: dropped
  /// One sequence's post-processing: these ids, with kSequence where the
  /// text's pieces go (exactly once).
  std::vector<int32_t> templateIds;
  static constexpr int32_t kSequence = -1;
  /// The text-pair post-processing (empty ids: none).
  PairTemplate pairTemplate;
  /// What the post-processor does to the offsets.
  OffsetTrim offsetTrim = OffsetTrim::None;
  /// tokenizer.json's normalizer (NFC for GPT-NeoX's; Replace " " -> "▁",
  /// Prepend "▁" for SentencePiece BPE), applied to the text
  /// between the raw added tokens; empty: none.
  std::vector<NormalizerStep> normalizers;
};

class BytePairTokenizer : public Tokenizer {
public:
  /// vocab: id -> byte-level string ("Ġthe"); merges in rank order, each a pair
  /// of vocabulary ids whose concatenation must be in the vocabulary; added
  /// tokens' ids may lie past the vocabulary (the model's embedding table
  /// bounds them, checked by the caller). Throws std::invalid_argument on
  /// anything inconsistent.
  BytePairTokenizer(std::vector<std::string> vocab, const std::vector<std::pair<int32_t, int32_t>> &merges,
                    std::vector<AddedToken> added, BpeOptions options);

  std::vector<std::string> tokenize(std::string_view text) const override;
  const std::string *token(int32_t id) const override { return tokenOf(id, vocab_, addedText_); }
  const std::vector<AddedToken> &addedTokens() const override { return added_.tokens(); }
  std::vector<int32_t> encode(std::string_view text, int32_t maxLen) const override;

  /// The largest id this tokenizer can produce.
  int32_t maxId() const { return maxId_; }

  /// The pre-tokens `split` cuts valid UTF-8 `text` into (before the bytes
  /// are mapped): what the `tokenizers` library's pre_tokenize_str gives
  /// (Metaspace: the words of text whose spaces are already replacements).
  static std::vector<std::string> preTokenize(BpeSplit split, std::string_view text,
                                              const MetaspaceOptions &metaspace = {});

protected:
  /// Appends the ids of `text`'s pieces, at most `maxPieces` in all.
  void appendPieces(std::string_view text, size_t maxPieces, std::vector<int32_t> &ids,
                    std::vector<PieceSpan> *spans) const override;
  const PairTemplate &pairTemplate() const override { return options_.pairTemplate; }
  const std::vector<int32_t> &singleTemplate() const override { return options_.templateIds; }
  OffsetTrim offsetTrim() const override { return options_.offsetTrim; }

private:
  struct Scratch;
  /// A segment between added tokens as the Metaspace pre-tokenizer leaves
  /// it, into `segment` (and with `align`, the text's alignments, into
  /// segmentAlign); `atStart`: the segment starts the text (offset 0 of
  /// what the normalizer was given), where prepend_scheme first prepends.
  void metaspaceSegment(std::string_view text, bool atStart, const TextSpan *align, std::string &segment,
                        std::vector<TextSpan> &segmentAlign) const;
  /// BPE of one pre-token (raw bytes), appending ids, and with `spans` the
  /// bytes of `bytes` each stands for (the library's offsets: the symbols'
  /// lengths added up, so a dropped character shifts what follows).
  void mergeWord(std::string_view bytes, Scratch &scratch, std::vector<int32_t> &ids,
                 std::vector<TextSpan> *spans) const;
  /// The word's initial symbols into scratch.symbols: Bytes (the byte
  /// alphabet) or Chars (characters, byte fallback, fused unknowns).
  void byteSymbols(std::string_view bytes, Scratch &scratch) const;
  void charSymbols(std::string_view word, Scratch &scratch) const;

  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int32_t> ids_;
  /// (left << 32 | right) -> (rank, merged id).
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;
  int32_t byteIds_[256];          ///< Bytes: id of each byte's alphabet symbol; Chars: of <0xXX>; -1 if none
  std::string byteChars_[256];    ///< UTF-8 of each byte's alphabet symbol
  BpeOptions options_;
  TextNormalizer normalizer_;
  AddedTokenSplitter added_; ///< after normalizer_: it normalises the normalized tokens
  std::unordered_map<int32_t, std::string> addedText_; ///< id -> content, for tokenize()
  int32_t maxId_ = 0;
};

} // namespace encrt

#endif // ENCRT_BPE_TOKENIZER_H
