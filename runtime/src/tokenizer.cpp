//===- tokenizer.cpp - BERT WordPiece tokenizer ---------------------------===//
//
// Mirrors the `tokenizers` library's BERT pipeline (the fast tokenizer that
// sentence-transformers and transformers use): the special tokens are cut out
// of the raw text first (added_tokens.h: [PAD] [UNK] [CLS] [SEP] [MASK], exact
// and case-sensitive); BertNormalizer then drops controls, format and
// unassigned code points, turns whitespace into spaces, puts spaces around CJK
// ideographs, strips accents (NFD, Mn dropped) and lowercases, each per code
// point; BertPreTokenizer splits on whitespace and isolates punctuation; each
// word is WordPiece'd (greedy longest match, "##" continuations, [UNK] for a
// word over maxCharsPerWord or with no match). The Unicode data is the
// library's own (unicode_bert_tables.cpp).
//
//===----------------------------------------------------------------------===//
#include "tokenizer.h"

#include "unicode.h"
#include "unicode_nfc.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace encrt {
using unicode::BertClass;

namespace {

std::vector<AddedToken> specialTokens(const std::vector<std::string> &vocab, const WordPieceOptions &o) {
  std::vector<AddedToken> specials;
  auto add = [&](const std::string &content, int32_t id) {
    if (!content.empty())
      specials.push_back({content, id, true, false, false, false});
  };
  for (int32_t id : {o.padId, o.unkId, o.clsId, o.sepId})
    add(vocab[static_cast<size_t>(id)], id);
  for (size_t i = 0; i < vocab.size(); ++i)
    if (vocab[i] == "[MASK]")
      add(vocab[i], static_cast<int32_t>(i));
  return specials;
}

/// `text` (valid UTF-8) as the library's BertNormalizer leaves it, one code
/// point at a time into `sink(cp, origin)`: control characters dropped,
/// whitespace as ' ', CJK ideographs between spaces (splitChinese), then
/// lowercased / accents stripped; `origin` is the bytes of the character it
/// came from, `base` + its offset in `text` (the library aligns every
/// character a transformation makes with the one it replaced). Stops early
/// once `full()`.
template <typename Sink, typename Full>
void bertNormalize(const WordPieceOptions &opt, std::string_view text, uint32_t base, Sink &&sink, Full &&full) {
  char32_t norm[unicode::kMaxBertExpansion];
  // Accent stripping is the library's NFD, whose canonical ordering sorts
  // each run of non-starters by combining class; the alignments stay with
  // the positions (unicode-normalization-alignments moves the characters,
  // not their places), so a mark the filter keeps takes the origin of the
  // place it is sorted to.
  struct Mark {
    char32_t cp;
    TextSpan origin;
    uint8_t ccc;
  };
  std::vector<Mark> run, sorted;
  auto emit = [&](char32_t cp, TextSpan origin) {
    const int n = unicode::bertNormalize(cp, opt.stripAccents, opt.lowercase, norm);
    for (int i = 0; i < n; ++i)
      sink(norm[i], origin);
  };
  auto flush = [&] {
    if (run.empty())
      return;
    sorted = run;
    std::stable_sort(sorted.begin(), sorted.end(), [](const Mark &a, const Mark &b) { return a.ccc < b.ccc; });
    for (size_t i = 0; i < sorted.size(); ++i)
      emit(sorted[i].cp, run[i].origin);
    run.clear();
  };
  for (size_t pos = 0; pos < text.size() && !full();) {
    const size_t from = pos;
    char32_t cp;
    unicode::decodeUtf8(text, pos, cp);
    const TextSpan origin{base + static_cast<uint32_t>(from), base + static_cast<uint32_t>(pos)};
    const BertClass cls = unicode::bertClass(cp);
    if (cls == BertClass::Removed)
      continue;
    if (opt.stripAccents && cls != BertClass::Space)
      if (const uint8_t ccc = cp < 0x300 ? 0 : unicode::combiningClass(cp)) { // none below U+0300
        run.push_back({cp, origin, ccc});
        continue;
      }
    flush();
    if (cls == BertClass::Space) {
      sink(U' ', origin);
      continue;
    }
    const bool isolate = cls == BertClass::Chinese && opt.splitChinese;
    if (isolate)
      sink(U' ', origin);
    emit(cp, origin);
    if (isolate)
      sink(U' ', origin);
  }
  flush();
}

/// The normalised text as UTF-8 (the added tokens matched on it, and their
/// own content); with `alignments`, each of its bytes' origin.
void bertNormalizeUtf8(const WordPieceOptions &opt, std::string_view text, std::string &out, uint32_t base = 0,
                       std::vector<TextSpan> *alignments = nullptr) {
  out.clear();
  if (alignments)
    alignments->clear();
  bertNormalize(
      opt, text, base,
      [&](char32_t c, TextSpan origin) {
        const size_t before = out.size();
        unicode::appendUtf8(out, c);
        if (alignments)
          alignments->insert(alignments->end(), out.size() - before, origin);
      },
      [] { return false; });
}

const WordPieceOptions &checked(const std::vector<std::string> &vocab, const WordPieceOptions &o) {
  const auto check = [&](int32_t id, const char *field) {
    if (id < 0 || static_cast<size_t>(id) >= vocab.size())
      throw std::invalid_argument(std::string("WordPieceTokenizer: options.") + field + " = " + std::to_string(id) +
                                  " is outside the vocabulary of " + std::to_string(vocab.size()) + " tokens");
  };
  check(o.unkId, "unkId");
  check(o.clsId, "clsId");
  check(o.sepId, "sepId");
  check(o.padId, "padId");
  if (o.maxCharsPerWord < 1)
    throw std::invalid_argument("WordPieceTokenizer: options.maxCharsPerWord must be >= 1");
  return o;
}

} // namespace

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> vocab, WordPieceOptions options,
                                       WordPieceSpecials specials)
    : vocab_(std::move(vocab)), options_(checked(vocab_, options)),
      specials_(specials.addedTokens ? *specials.addedTokens : specialTokens(vocab_, options_),
                [this](std::string_view text, std::string &out) { bertNormalizeUtf8(options_, text, out); }) {
  pair_ = specials.pairTemplate.ids.empty()
              ? PairTemplate{{options_.clsId, PairTemplate::kFirst, options_.sepId, PairTemplate::kSecond,
                              options_.sepId},
                             {0, 0, 0, 1, 1}}
              : std::move(specials.pairTemplate);
  single_ = {options_.clsId, -1, options_.sepId};
  offsetTrim_ = specials.offsetTrim;
  maxId_ = std::max(static_cast<int32_t>(vocab_.size()) - 1, checkPairTemplate(pair_, "WordPieceTokenizer"));
  for (const AddedToken &t : specials_.tokens()) {
    normalizedSpecials_ |= t.normalized;
    maxId_ = std::max(maxId_, t.id);
    // The library's id_to_token: an added token's content, normalised for a
    // normalized one (its normalized_cache), whatever the vocabulary says.
    std::string normalized;
    if (t.normalized)
      bertNormalizeUtf8(options_, t.content, normalized);
    addedContent_[t.id] = t.normalized ? normalized : t.content;
  }
  ids_.reserve(vocab_.size());
  for (size_t i = 0; i < vocab_.size(); ++i) {
    ids_[vocab_[i]] = static_cast<int32_t>(i); // Later duplicates win, as in HF.
    maxPieceBytes_ = std::max(maxPieceBytes_, vocab_[i].size());
  }
}

namespace {

/// One tokenisation: the reusable buffers and the output sink.
struct Run {
  const std::unordered_map<std::string, int32_t> &ids;
  const std::vector<std::string> &vocab;
  const std::unordered_map<int32_t, std::string> &addedContent;
  const WordPieceOptions &opt;
  size_t maxPieceBytes;
  size_t maxPieces;
  std::vector<int32_t> *outIds;
  std::vector<std::string> *outPieces;
  std::vector<PieceSpan> *outSpans;

  size_t emitted = 0;
  std::vector<char32_t> word;      // Normalised code points of one word.
  std::vector<TextSpan> wordSpans; // The origin of each.
  std::string bytes;               // UTF-8 of the word.
  std::vector<size_t> offsets;     // Byte offset of each code point in `bytes`.
  std::string key;                 // Lookup key ("##" + substring).
  std::vector<int32_t> subIds;     // Pieces of the current word,
  std::vector<size_t> subEnds;     // and the code point each ends before.

  bool full() const { return emitted >= maxPieces; }

  void emit(int32_t id, TextSpan span, bool added = false) {
    if (full())
      return;
    ++emitted;
    if (outIds)
      outIds->push_back(id);
    if (outSpans)
      outSpans->push_back({span, added});
    if (outPieces)
      outPieces->push_back(static_cast<size_t>(id) < vocab.size() ? vocab[static_cast<size_t>(id)]
                                                                   : addedContent.at(id));
  }

  /// WordPiece of the pending word, then starts a new one.
  void endWord() {
    const size_t n = word.size();
    if (n == 0)
      return;
    // The spans are kept only when asked for (tokenisation's hot path).
    const TextSpan whole = outSpans ? TextSpan{wordSpans.front().start, wordSpans.back().end} : TextSpan{};
    if (n > static_cast<size_t>(opt.maxCharsPerWord)) {
      word.clear(), wordSpans.clear();
      emit(opt.unkId, whole);
      return;
    }
    bytes.clear();
    offsets.clear();
    for (char32_t c : word) {
      offsets.push_back(bytes.size());
      unicode::appendUtf8(bytes, c);
    }
    offsets.push_back(bytes.size());
    word.clear();
    subIds.clear();
    subEnds.clear();
    for (size_t start = 0; start < n;) {
      const size_t prefix = start > 0 ? 2 : 0;
      int32_t found = -1;
      size_t stop = n;
      for (; stop > start; --stop) {
        size_t len = offsets[stop] - offsets[start];
        if (len + prefix > maxPieceBytes)
          continue;
        key.assign(start > 0 ? "##" : "");
        key.append(bytes, offsets[start], len);
        auto it = ids.find(key);
        if (it != ids.end()) {
          found = it->second;
          break;
        }
      }
      if (found < 0) {
        wordSpans.clear();
        emit(opt.unkId, whole);
        return;
      }
      subIds.push_back(found);
      if (outSpans)
        subEnds.push_back(stop);
      start = stop;
    }
    if (!outSpans) {
      for (int32_t id : subIds)
        emit(id, {});
      return;
    }
    for (size_t i = 0, from = 0; i < subIds.size(); from = subEnds[i++])
      emit(subIds[i], {wordSpans[from].start, wordSpans[subEnds[i] - 1].end});
    wordSpans.clear();
  }

  void push(char32_t c, TextSpan origin) {
    word.push_back(c);
    if (outSpans)
      wordSpans.push_back(origin);
  }

  /// A normalised code point into the pre-tokenizer: whitespace ends the
  /// word, punctuation is a word of its own.
  void preTokenize(char32_t c, TextSpan origin) {
    switch (unicode::bertClass(c)) {
    case BertClass::Space:
      endWord();
      return;
    case BertClass::Punct:
      endWord();
      push(c, origin);
      endWord();
      return;
    default:
      push(c, origin);
    }
  }

  /// A segment of normalize()'s output through the pre-tokenizer; `origin`
  /// its bytes' alignments (null: no spans asked for).
  void segmentNormalized(std::string_view text, const TextSpan *origin) {
    for (size_t pos = 0; pos < text.size() && !full();) {
      const size_t at = pos;
      char32_t cp;
      unicode::decodeUtf8(text, pos, cp);
      preTokenize(cp, origin ? origin[at] : TextSpan{});
    }
    endWord();
  }

  /// A plain segment (no special tokens) of valid UTF-8 at `base` in the
  /// text, normalised and pre-tokenised in one pass.
  void segment(std::string_view text, uint32_t base) {
    bertNormalize(opt, text, base, [&](char32_t c, TextSpan origin) { preTokenize(c, origin); },
                  [&] { return full(); });
    endWord();
  }
};

} // namespace

void WordPieceTokenizer::run(std::string_view text, size_t maxPieces, std::vector<int32_t> *ids,
                             std::vector<std::string> *pieces, std::vector<PieceSpan> *spans) const {
  // Each invalid UTF-8 byte becomes U+FFFD, as Python's errors="replace"
  // decoding would give the library; the normalizer then drops it (so a
  // special token broken by one is not special, "[CL\xffS]" is not [CLS]).
  std::string buffer;
  const std::string_view clean = cleanText(text, buffer, invalidByteReplacement(), nullptr);
  Run r{ids_, vocab_, addedContent_, options_, maxPieceBytes_, maxPieces, ids, pieces, spans};
  std::vector<TextPiece> parts, normalizedParts;
  std::string normalized;
  std::vector<TextSpan> alignments;
  specials_.split(clean, /*normalizedPass=*/false, parts);
  for (const TextPiece &p : parts) {
    if (r.full())
      break;
    const uint32_t at = static_cast<uint32_t>(p.text.data() - clean.data());
    if (p.id >= 0) {
      r.emit(p.id, {at, at + static_cast<uint32_t>(p.text.size())}, true);
    } else if (!normalizedSpecials_) {
      r.segment(p.text, at);
    } else { // the library's second pass: added tokens in the normalised text
      bertNormalizeUtf8(options_, p.text, normalized, at, spans ? &alignments : nullptr);
      normalizedParts.clear();
      specials_.split(normalized, /*normalizedPass=*/true, normalizedParts);
      for (const TextPiece &q : normalizedParts) {
        if (r.full())
          break;
        const size_t from = size_t(q.text.data() - normalized.data());
        if (q.id >= 0)
          r.emit(q.id, spans ? spanOf(alignments, from, from + q.text.size()) : TextSpan{}, true);
        else
          r.segmentNormalized(q.text, spans ? alignments.data() + from : nullptr);
      }
    }
  }
}

std::vector<std::string>
WordPieceTokenizer::tokenize(std::string_view text) const {
  std::vector<std::string> pieces;
  run(text, std::numeric_limits<size_t>::max(), nullptr, &pieces, nullptr);
  return pieces;
}

std::vector<int32_t> WordPieceTokenizer::encode(std::string_view text,
                                                int32_t maxLen) const {
  const size_t cap = static_cast<size_t>(std::max<int32_t>(maxLen, 2));
  std::vector<int32_t> ids;
  ids.reserve(std::min<size_t>(cap, text.size() + 2));
  ids.push_back(options_.clsId);
  run(text, cap - 2, &ids, nullptr, nullptr);
  ids.push_back(options_.sepId);
  return ids;
}

const std::string *tokenOf(int32_t id, const std::vector<std::string> &vocab,
                           const std::unordered_map<int32_t, std::string> &added) {
  if (auto it = added.find(id); it != added.end())
    return &it->second;
  return id >= 0 && static_cast<size_t>(id) < vocab.size() ? &vocab[static_cast<size_t>(id)] : nullptr;
}

std::vector<std::string> piecesOf(const std::vector<int32_t> &ids, const std::vector<std::string> &vocab,
                                  const std::unordered_map<int32_t, std::string> &added) {
  std::vector<std::string> pieces;
  pieces.reserve(ids.size());
  for (int32_t id : ids)
    pieces.push_back(*tokenOf(id, vocab, added)); // every id the tokenizer produces has a string
  return pieces;
}

int32_t checkPairTemplate(const PairTemplate &t, const char *who) {
  auto bad = [&](const std::string &what) { throw std::invalid_argument(std::string(who) + ": pair template " + what); };
  if (t.ids.empty())
    return -1;
  if (t.typeIds.size() != t.ids.size())
    bad("has " + std::to_string(t.typeIds.size()) + " type ids for " + std::to_string(t.ids.size()) + " entries");
  if (std::count(t.ids.begin(), t.ids.end(), PairTemplate::kFirst) != 1 ||
      std::count(t.ids.begin(), t.ids.end(), PairTemplate::kSecond) != 1)
    bad("must hold each text exactly once");
  int32_t maxId = -1;
  for (size_t i = 0; i < t.ids.size(); ++i) {
    if (t.ids[i] < PairTemplate::kSecond || t.typeIds[i] < 0)
      bad("entry " + std::to_string(i) + " (" + std::to_string(t.ids[i]) + ", type " + std::to_string(t.typeIds[i]) +
          ") is invalid");
    maxId = std::max(maxId, t.ids[i]);
  }
  return maxId;
}

PairEncoding Tokenizer::encodePair(std::string_view a, std::string_view b, int32_t maxLen,
                                   PairTruncation strategy) const {
  const PairTemplate &t = pairTemplate();
  if (t.ids.empty())
    throw std::logic_error("this tokenizer has no template for text pairs");
  const size_t specials = t.ids.size() - 2;
  const size_t budget = maxLen > 0 && size_t(maxLen) > specials ? size_t(maxLen) - specials : 0;
  std::vector<int32_t> first, second;
  appendPieces(a, std::numeric_limits<size_t>::max(), first, nullptr);
  appendPieces(b, std::numeric_limits<size_t>::max(), second, nullptr);
  // utils/truncation.rs truncate_encodings, with max_length = budget.
  const size_t total = first.size() + second.size();
  if (total > budget) {
    if (budget == 0) {
      first.clear(), second.clear();
    } else if (strategy == PairTruncation::LongestFirst) {
      size_t n1 = first.size(), n2 = second.size();
      const bool swapped = n1 > n2;
      if (swapped)
        std::swap(n1, n2);
      n2 = n1 > budget ? n1 : std::max(n1, budget - n1);
      if (n1 + n2 > budget) {
        n1 = budget / 2;
        n2 = n1 + budget % 2;
      }
      if (swapped)
        std::swap(n1, n2);
      first.resize(std::min(first.size(), n1));
      second.resize(std::min(second.size(), n2));
    } else {
      std::vector<int32_t> &target = strategy == PairTruncation::OnlyFirst ? first : second;
      const size_t toRemove = total - budget;
      if (target.size() <= toRemove)
        throw std::length_error("the " + std::string(strategy == PairTruncation::OnlyFirst ? "first" : "second") +
                                " text is too short to cut the pair to " + std::to_string(maxLen) + " tokens (" +
                                std::to_string(first.size()) + " + " + std::to_string(second.size()) +
                                " pieces and " + std::to_string(specials) + " special tokens)");
      target.resize(target.size() - toRemove);
    }
  }
  PairEncoding out;
  for (size_t i = 0; i < t.ids.size(); ++i) {
    const int32_t id = t.ids[i];
    const std::vector<int32_t> *text = id == PairTemplate::kFirst ? &first : id == PairTemplate::kSecond ? &second : nullptr;
    if (text) {
      out.ids.insert(out.ids.end(), text->begin(), text->end());
      out.typeIds.insert(out.typeIds.end(), text->size(), t.typeIds[i]);
    } else {
      out.ids.push_back(id);
      out.typeIds.push_back(t.typeIds[i]);
    }
  }
  return out;
}

std::string_view cleanText(std::string_view text, std::string &buffer, std::string_view replacement,
                           std::vector<uint32_t> *raw) {
  const std::string_view clean = unicode::validUtf8(text, buffer, replacement);
  if (!raw)
    return clean;
  raw->clear();
  if (clean.data() == text.data())
    return clean;
  raw->reserve(clean.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t from = pos;
    char32_t cp;
    if (unicode::decodeUtf8(text, pos, cp))
      for (size_t b = from; b < pos; ++b)
        raw->push_back(static_cast<uint32_t>(b));
    else
      raw->insert(raw->end(), replacement.size(), static_cast<uint32_t>(from));
  }
  return clean;
}

namespace {

/// processors/roberta.rs / byte_level.rs process_offsets, as the library
/// applies it to character offsets (its Python API's; in bytes its Rust API
/// adds the count of characters to byte offsets, which lands inside a
/// multi-byte space): a piece's span moved past the leading and trailing
/// spaces of its token string ("\u0120", the byte alphabet's space, or any
/// White_Space), that many characters of `clean`.
void trimOffsets(const Tokenizer &tokenizer, OffsetTrim trim, std::string_view clean,
                 const std::vector<PieceSpan> &from, std::vector<EncodedToken> &pieces) {
  std::vector<char32_t> cps;
  auto space = [](char32_t c) { return c == 0x120 || unicode::gpt2Class(c) == unicode::Gpt2Class::Space; };
  for (size_t i = 0; i < pieces.size(); ++i) {
    EncodedToken &t = pieces[i];
    // An added token's string is the text it matched (lstrip / rstrip whitespace included).
    const std::string *token = tokenizer.token(t.id);
    const std::string_view value =
        from[i].added ? clean.substr(t.span.start, t.span.end - t.span.start) : token ? std::string_view(*token) : "";
    cps.clear();
    for (size_t pos = 0; pos < value.size();) {
      char32_t cp;
      if (unicode::decodeUtf8(value, pos, cp))
        cps.push_back(cp);
    }
    size_t leading = 0, trailing = 0;
    while (leading < cps.size() && space(cps[leading]))
      ++leading;
    while (trailing < cps.size() && space(cps[cps.size() - 1 - trailing]))
      ++trailing;
    auto nextChar = [&](uint32_t at) {
      size_t pos = at;
      char32_t cp;
      unicode::decodeUtf8(clean, pos, cp);
      return static_cast<uint32_t>(pos);
    };
    auto previousChar = [&](uint32_t at) {
      while (at > 0 && (static_cast<unsigned char>(clean[--at]) & 0xC0) == 0x80) {
      }
      return at;
    };
    if (leading > 0) {
      const bool first = i == 0 || t.span.start == 0;
      if (!(first && trim == OffsetTrim::TrimKeepPrefixSpace && leading == 1))
        for (size_t k = 0; k < leading && t.span.start < t.span.end; ++k) // min(start + leading, end)
          t.span.start = nextChar(t.span.start);
    }
    if (trailing > 0) { // if end >= trailing (in characters): max(end - trailing, start)
      uint32_t end = t.span.end;
      size_t k = 0;
      for (; k < trailing && end > 0; ++k)
        end = previousChar(end);
      if (k == trailing)
        t.span.end = std::max(end, t.span.start);
    }
  }
}

} // namespace

std::vector<EncodedToken> Tokenizer::encodeTokens(std::string_view text, size_t maxLen, bool addSpecialTokens) const {
  if (text.size() >= std::numeric_limits<uint32_t>::max())
    throw std::length_error("a text of " + std::to_string(text.size()) + " bytes is too long for offsets");
  if (offsetTrim() == OffsetTrim::Unknown)
    throw std::logic_error("the artifact does not record how its tokenizer's post-processor trims offsets "
                           "(compiled before schema 9.6): compile the model again for offsets");
  static const std::vector<int32_t> kAlone = {-1};
  const std::vector<int32_t> &tmpl = addSpecialTokens ? singleTemplate() : kAlone;
  const size_t specials = tmpl.size() - 1;
  const size_t maxPieces = maxLen == 0 ? std::numeric_limits<size_t>::max() : maxLen > specials ? maxLen - specials : 0;
  // The pieces' spans are into the clean text; trimmed there (in its
  // characters), then taken back to the bytes of `text`.
  std::string buffer;
  std::vector<uint32_t> raw;
  const std::string_view clean = cleanText(text, buffer, invalidByteReplacement(), &raw);
  std::vector<int32_t> ids;
  std::vector<PieceSpan> spans;
  appendPieces(clean, maxPieces, ids, &spans);
  std::vector<EncodedToken> pieces(ids.size());
  for (size_t i = 0; i < ids.size(); ++i)
    pieces[i] = {ids[i], spans[i].span, false};
  if (offsetTrim() == OffsetTrim::Trim || offsetTrim() == OffsetTrim::TrimKeepPrefixSpace)
    trimOffsets(*this, offsetTrim(), clean, spans, pieces);
  if (!raw.empty()) // every byte of a span came from some byte of the text (an empty span: the next one's)
    for (EncodedToken &t : pieces) {
      const uint32_t start = t.span.start < raw.size() ? raw[t.span.start] : static_cast<uint32_t>(text.size());
      t.span = {start, t.span.start < t.span.end ? raw[t.span.end - 1] + 1 : start};
    }
  std::vector<EncodedToken> out;
  out.reserve(pieces.size() + specials);
  for (int32_t id : tmpl)
    if (id == -1)
      out.insert(out.end(), pieces.begin(), pieces.end());
    else
      out.push_back({id, {}, true});
  return out;
}

} // namespace encrt
