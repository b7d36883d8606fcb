//===- tokenizer.h - The runtime's tokenizers: interface and WordPiece ----===//
//
// Tokenizer: text (or a text pair) -> ids with the model's special tokens,
// truncated to the compiled maximum. Implementations: WordPieceTokenizer
// (here: BERT basic tokenisation, i.e. clean text, optional lowercasing and
// accent stripping, punctuation and CJK splitting, then greedy longest-match
// WordPiece with "##" continuations, as the `tokenizers` library's BERT
// tokenizer does), BytePairTokenizer (bpe_tokenizer.h) and UnigramTokenizer
// (unigram_tokenizer.h). Immutable after construction; thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_TOKENIZER_H
#define ENCRT_TOKENIZER_H

#include "added_tokens.h"
#include "text_span.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace encrt {

struct WordPieceOptions {
  bool lowercase = true;
  bool stripAccents = true;
  bool splitChinese = true;
  int32_t unkId = 100;
  int32_t clsId = 101;
  int32_t sepId = 102;
  int32_t padId = 0;
  int32_t maxCharsPerWord = 100;
};

/// When a Metaspace pre-tokenizer puts its replacement before a piece that
/// does not start with it: always, only before the piece at the start of the
/// text, never.
enum class MetaspacePrepend { Always, First, Never };

/// How a text pair longer than the maximum is cut (the `tokenizers` library's
/// TruncationStrategy): LongestFirst shortens the longer text first (both to
/// about half when both are long); OnlyFirst / OnlySecond cut one text only.
enum class PairTruncation { LongestFirst = 0, OnlyFirst = 1, OnlySecond = 2 };

/// A post-processor's template for a text pair: ids with kFirst and kSecond
/// where the two texts' pieces go (each exactly once), and the token type id
/// of each entry (the pieces take their marker's).
struct PairTemplate {
  static constexpr int32_t kFirst = -1, kSecond = -2;
  std::vector<int32_t> ids, typeIds;
};

/// A text pair's ids and token type ids, one each per token.
struct PairEncoding {
  std::vector<int32_t> ids, typeIds;
};

/// What a post-processor does to the pieces' offsets (processors/roberta.rs
/// and byte_level.rs with trim_offsets): None; Trim moves a piece's start past
/// its leading spaces and its end before its trailing ones (counted in the
/// token's characters: "\u0120" or whitespace); TrimKeepPrefixSpace does so
/// except for the one space add_prefix_space put before the first piece.
/// Unknown: not recorded (an old artifact): encodeTokens refuses.
enum class OffsetTrim { None, Trim, TrimKeepPrefixSpace, Unknown };

/// Where a piece came from: the bytes of the (clean) text it covers, and
/// whether it is an added token cut out of the text (its token string, for
/// the offsets' trimming, is the text it matched, the whitespace lstrip /
/// rstrip swallowed included, as the library's).
struct PieceSpan {
  TextSpan span;
  bool added = false;
};

/// One token of Tokenizer::encodeTokens: its id, the bytes of the text it
/// covers, and whether the post-processor added it (the library's
/// special_tokens_mask: a special token written in the text is 0; the
/// template's have the span (0, 0)).
struct EncodedToken {
  int32_t id = 0;
  TextSpan span;
  bool special = false;
};

class Tokenizer {
public:
  virtual ~Tokenizer() = default;

  /// The pieces of `text` as vocabulary strings, without the special tokens
  /// the model adds around a text; invalid UTF-8 bytes are dropped.
  virtual std::vector<std::string> tokenize(std::string_view text) const = 0;

  /// The string of token `id` as the library's id_to_token gives it: an added
  /// token's content, else its vocabulary entry; null when nothing has that id.
  virtual const std::string *token(int32_t id) const = 0;

  /// The tokens cut out of the text before the model (WordPiece without a
  /// tokenizer.json: [PAD] [UNK] [CLS] [SEP] [MASK]).
  virtual const std::vector<AddedToken> &addedTokens() const = 0;

  /// The ids the model runs on: the text's pieces inside the model's special
  /// tokens ([CLS] ... [SEP], <s> ... </s>), the pieces truncated so that the
  /// result has at most maxLen ids (maxLen >= the number of special tokens).
  virtual std::vector<int32_t> encode(std::string_view text, int32_t maxLen) const = 0;

  /// The pair (a, b) in the model's pair template ([CLS] a [SEP] b [SEP],
  /// <s> a </s></s> b </s>, ...), the pieces cut by `strategy` as the library
  /// cuts them so that the result has at most maxLen ids (never fewer than the
  /// template's own). Throws std::length_error when OnlyFirst / OnlySecond
  /// cannot cut enough from their text (the library's "Sequence to truncate
  /// too short to respect the provided max_length"), std::logic_error when
  /// the tokenizer has no pair template.
  PairEncoding encodePair(std::string_view a, std::string_view b, int32_t maxLen, PairTruncation strategy) const;

  /// The tokens of `text` with their offsets, as the library's Encoding has
  /// them (get_ids, get_offsets in bytes, get_special_tokens_mask): inside
  /// the one-text template with addSpecialTokens, else the pieces alone; the
  /// pieces cut so that the result has at most maxLen tokens (0: all of
  /// them; never fewer than the template's own); the offsets trimmed as the
  /// post-processor trims them. Offsets are into `text` as given (an invalid
  /// UTF-8 byte the tokenizer replaced or dropped is never inside a token's).
  /// Throws std::length_error for a text of 4 GiB or more, std::logic_error
  /// when the trimming is Unknown.
  std::vector<EncodedToken> encodeTokens(std::string_view text, size_t maxLen, bool addSpecialTokens) const;

protected:
  /// Appends the ids of `text`'s pieces (no special tokens), at most
  /// maxPieces; with `spans`, also where each came from (valid UTF-8 `text`:
  /// a text with invalid bytes is cleaned first, and the spans are then
  /// into the clean text).
  virtual void appendPieces(std::string_view text, size_t maxPieces, std::vector<int32_t> &ids,
                            std::vector<PieceSpan> *spans) const = 0;
  /// What replaces an invalid UTF-8 byte before tokenisation ("": dropped).
  virtual std::string_view invalidByteReplacement() const { return {}; }
  /// The pair template; empty ids: none.
  virtual const PairTemplate &pairTemplate() const = 0;
  /// The one-text template: ids with -1 where the pieces go (once).
  virtual const std::vector<int32_t> &singleTemplate() const = 0;
  /// What the post-processor does to offsets.
  virtual OffsetTrim offsetTrim() const { return OffsetTrim::None; }
};

/// The text a tokenizer works on: `text` with each invalid UTF-8 byte
/// replaced by `replacement` (possibly empty: dropped), and, with `raw`,
/// each byte's offset in `text` (every byte of a replacement has its
/// invalid byte's) when any byte was replaced.
std::string_view cleanText(std::string_view text, std::string &buffer, std::string_view replacement,
                           std::vector<uint32_t> *raw);



/// Checks a pair template (each text once, type ids one per entry and >= 0,
/// special ids >= 0) and returns its largest special id (-1 if none); throws
/// std::invalid_argument naming `who`.
int32_t checkPairTemplate(const PairTemplate &t, const char *who);

/// A post-processing template around one text: `templateIds` with the text's
/// pieces where -1 stands (once), the pieces truncated so that the result has
/// at most maxLen ids (never fewer than the template's own). run(maxPieces,
/// ids) appends the pieces; sizeHint bounds the reservation.
template <typename Run>
std::vector<int32_t> encodeWithTemplate(const std::vector<int32_t> &templateIds, int32_t maxLen, size_t sizeHint,
                                        Run run) {
  const size_t specials = templateIds.empty() ? 0 : templateIds.size() - 1;
  const size_t cap = std::max<size_t>(static_cast<size_t>(std::max<int32_t>(maxLen, 0)), specials);
  std::vector<int32_t> ids;
  ids.reserve(std::min<size_t>(cap, sizeHint + specials + 1));
  for (int32_t id : templateIds)
    if (id == -1)
      run(cap - specials, ids);
    else
      ids.push_back(id);
  return ids;
}

/// The string of `id`: its content in `added`, else its `vocab` entry; null
/// when it has neither.
const std::string *tokenOf(int32_t id, const std::vector<std::string> &vocab,
                           const std::unordered_map<int32_t, std::string> &added);

/// The strings of `ids`: an added token's content, else its vocabulary entry
/// (every id is one or the other).
std::vector<std::string> piecesOf(const std::vector<int32_t> &ids, const std::vector<std::string> &vocab,
                                  const std::unordered_map<int32_t, std::string> &added);

/// What a WordPiece model's tokenizer.json adds to its vocabulary and
/// options (MPNet: <mask> with lstrip, <unk> matched on normalised text, the
/// pair as <s> a </s></s> b </s>).
struct WordPieceSpecials {
  /// The added tokens, cut out before normalisation (normalized: false) or
  /// from the normalised text (normalized: true); none given: the [PAD],
  /// [UNK], [CLS], [SEP] of the options' ids and [MASK], cut out verbatim
  /// (a vocab.txt in an artifact before schema 9.9).
  std::optional<std::vector<AddedToken>> addedTokens;
  /// The pair template; empty ids: [CLS] a [SEP] b [SEP], types 0 0 0 1 1.
  PairTemplate pairTemplate;
  /// What the post-processor does to offsets (MPNet's RobertaProcessing trims).
  OffsetTrim offsetTrim = OffsetTrim::None;
};

class WordPieceTokenizer : public Tokenizer {
public:
  /// Throws std::invalid_argument for ids outside the vocabulary (the
  /// options' special ids) or a malformed pair template.
  WordPieceTokenizer(std::vector<std::string> vocab, WordPieceOptions options, WordPieceSpecials specials = {});

  /// Word pieces of `text` (no [CLS]/[SEP] added); invalid UTF-8 bytes are
  /// dropped. Special tokens written literally in `text` ([CLS], [SEP],
  /// [PAD], [UNK], [MASK]; exactly, case-sensitive; or the added tokens of
  /// WordPieceSpecials) stay whole, as in HF.
  std::vector<std::string> tokenize(std::string_view text) const override;
  const std::string *token(int32_t id) const override { return tokenOf(id, vocab_, addedContent_); }
  const std::vector<AddedToken> &addedTokens() const override { return specials_.tokens(); }

  /// The largest id this tokenizer produces (vocabulary, added tokens, pair
  /// template).
  int32_t maxId() const { return maxId_; }

  /// [CLS] ids... [SEP], truncated so the result has at most maxLen ids (>= 2).
  std::vector<int32_t> encode(std::string_view text, int32_t maxLen) const override;

  const std::vector<std::string> &vocab() const { return vocab_; }
  const WordPieceOptions &options() const { return options_; }

protected:
  void appendPieces(std::string_view text, size_t maxPieces, std::vector<int32_t> &ids,
                    std::vector<PieceSpan> *spans) const override {
    run(text, maxPieces, &ids, nullptr, spans);
  }
  /// U+FFFD, as Python's errors="replace" would give the library (BERT's
  /// cleaning then drops it).
  std::string_view invalidByteReplacement() const override { return "\xef\xbf\xbd"; }
  /// [CLS] a [SEP] b [SEP], token types 0 0 0 1 1 (BertProcessing), or
  /// WordPieceSpecials' template.
  const PairTemplate &pairTemplate() const override { return pair_; }
  /// [CLS] text [SEP].
  const std::vector<int32_t> &singleTemplate() const override { return single_; }
  OffsetTrim offsetTrim() const override { return offsetTrim_; }

private:
  /// Tokenises `text`, appending at most `maxPieces` ids, pieces and/or spans.
  void run(std::string_view text, size_t maxPieces, std::vector<int32_t> *ids, std::vector<std::string> *pieces,
           std::vector<PieceSpan> *spans) const;

  std::vector<std::string> vocab_;
  std::unordered_map<std::string, int32_t> ids_;
  WordPieceOptions options_;
  /// Special tokens cut out of the input, as the library does.
  AddedTokenSplitter specials_;
  /// Some added token is matched on normalised text: plain segments are
  /// normalised first, cut at those, then pre-tokenised.
  bool normalizedSpecials_ = false;
  /// Each added token's string as the library's id_to_token gives it (its
  /// content, normalised for a normalized token).
  std::unordered_map<int32_t, std::string> addedContent_;
  /// Longest vocabulary entry in bytes; longer candidates are not looked up.
  size_t maxPieceBytes_ = 0;
  PairTemplate pair_;
  std::vector<int32_t> single_;
  OffsetTrim offsetTrim_ = OffsetTrim::None;
  int32_t maxId_ = 0;
};

} // namespace encrt

#endif // ENCRT_TOKENIZER_H
