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

#include <algorithm>
#include <limits>
#include <stdexcept>

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
/// point at a time into `sink`: control characters dropped, whitespace as
/// ' ', CJK ideographs between spaces (splitChinese), then lowercased /
/// accents stripped. Stops early once `full()`.
template <typename Sink, typename Full>
void bertNormalize(const WordPieceOptions &opt, std::string_view text, Sink &&sink, Full &&full) {
  char32_t norm[unicode::kMaxBertExpansion];
  for (size_t pos = 0; pos < text.size() && !full();) {
    char32_t cp;
    unicode::decodeUtf8(text, pos, cp);
    const BertClass cls = unicode::bertClass(cp);
    if (cls == BertClass::Removed)
      continue;
    if (cls == BertClass::Space) {
      sink(U' ');
      continue;
    }
    const bool isolate = cls == BertClass::Chinese && opt.splitChinese;
    if (isolate)
      sink(U' ');
    const int n = unicode::bertNormalize(cp, opt.stripAccents, opt.lowercase, norm);
    for (int i = 0; i < n; ++i)
      sink(norm[i]);
    if (isolate)
      sink(U' ');
  }
}

/// The normalised text as UTF-8 (the added tokens matched on it, and their
/// own content).
void bertNormalizeUtf8(const WordPieceOptions &opt, std::string_view text, std::string &out) {
  out.clear();
  bertNormalize(opt, text, [&](char32_t c) { unicode::appendUtf8(out, c); }, [] { return false; });
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
      specials_(specials.addedTokens.empty() ? specialTokens(vocab_, options_) : specials.addedTokens,
                [this](std::string_view text, std::string &out) { bertNormalizeUtf8(options_, text, out); }) {
  pair_ = specials.pairTemplate.ids.empty()
              ? PairTemplate{{options_.clsId, PairTemplate::kFirst, options_.sepId, PairTemplate::kSecond,
                              options_.sepId},
                             {0, 0, 0, 1, 1}}
              : std::move(specials.pairTemplate);
  maxId_ = std::max(static_cast<int32_t>(vocab_.size()) - 1, checkPairTemplate(pair_, "WordPieceTokenizer"));
  for (const AddedToken &t : specials.addedTokens) {
    normalizedSpecials_ |= t.normalized;
    maxId_ = std::max(maxId_, t.id);
    if (static_cast<size_t>(t.id) >= vocab_.size())
      addedContent_[t.id] = t.content;
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

  size_t emitted = 0;
  std::vector<char32_t> word;  // Normalised code points of one word.
  std::string bytes;           // UTF-8 of the word.
  std::vector<size_t> offsets; // Byte offset of each code point in `bytes`.
  std::string key;             // Lookup key ("##" + substring).
  std::vector<int32_t> subIds; // Pieces of the current word.

  bool full() const { return emitted >= maxPieces; }

  void emit(int32_t id) {
    if (full())
      return;
    ++emitted;
    if (outIds)
      outIds->push_back(id);
    if (outPieces)
      outPieces->push_back(static_cast<size_t>(id) < vocab.size() ? vocab[static_cast<size_t>(id)]
                                                                   : addedContent.at(id));
  }

  /// WordPiece of the pending word, then starts a new one.
  void endWord() {
    const size_t n = word.size();
    if (n == 0)
      return;
    if (n > static_cast<size_t>(opt.maxCharsPerWord)) {
      word.clear();
      emit(opt.unkId);
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
        emit(opt.unkId);
        return;
      }
      subIds.push_back(found);
      start = stop;
    }
    for (int32_t id : subIds)
      emit(id);
  }

  /// A normalised code point into the pre-tokenizer: whitespace ends the
  /// word, punctuation is a word of its own.
  void preTokenize(char32_t c) {
    switch (unicode::bertClass(c)) {
    case BertClass::Space:
      endWord();
      return;
    case BertClass::Punct:
      endWord();
      word.push_back(c);
      endWord();
      return;
    default:
      word.push_back(c);
    }
  }


  /// A segment of normalize()'s output through the pre-tokenizer.
  void segmentNormalized(std::string_view text) {
    for (size_t pos = 0; pos < text.size() && !full();) {
      char32_t cp;
      unicode::decodeUtf8(text, pos, cp);
      preTokenize(cp);
    }
    endWord();
  }

  /// A plain segment (no special tokens) of valid UTF-8, normalised and
  /// pre-tokenised in one pass.
  void segment(std::string_view text) {
    bertNormalize(opt, text, [&](char32_t c) { preTokenize(c); }, [&] { return full(); });
    endWord();
  }
};

} // namespace

void WordPieceTokenizer::run(std::string_view text, size_t maxPieces,
                             std::vector<int32_t> *ids,
                             std::vector<std::string> *pieces) const {
  // Each invalid UTF-8 byte becomes U+FFFD, as Python's errors="replace"
  // decoding would give the library; the normalizer then drops it (so a
  // special token broken by one is not special, "[CL\xffS]" is not [CLS]).
  std::string buffer;
  const std::string_view clean = unicode::validUtf8(text, buffer, "\xef\xbf\xbd");
  Run r{ids_, vocab_, addedContent_, options_, maxPieceBytes_, maxPieces, ids, pieces, 0, {}, {}, {}, {}, {}};
  std::vector<TextPiece> parts, normalizedParts;
  std::string normalized;
  specials_.split(clean, /*normalizedPass=*/false, parts);
  for (const TextPiece &p : parts) {
    if (r.full())
      break;
    if (p.id >= 0) {
      r.emit(p.id);
    } else if (!normalizedSpecials_) {
      r.segment(p.text);
    } else { // the library's second pass: added tokens in the normalised text
      bertNormalizeUtf8(options_, p.text, normalized);
      normalizedParts.clear();
      specials_.split(normalized, /*normalizedPass=*/true, normalizedParts);
      for (const TextPiece &q : normalizedParts) {
        if (r.full())
          break;
        if (q.id >= 0)
          r.emit(q.id);
        else
          r.segmentNormalized(q.text);
      }
    }
  }
}

std::vector<std::string>
WordPieceTokenizer::tokenize(std::string_view text) const {
  std::vector<std::string> pieces;
  run(text, std::numeric_limits<size_t>::max(), nullptr, &pieces);
  return pieces;
}

std::vector<int32_t> WordPieceTokenizer::encode(std::string_view text,
                                                int32_t maxLen) const {
  const size_t cap = static_cast<size_t>(std::max<int32_t>(maxLen, 2));
  std::vector<int32_t> ids;
  ids.reserve(std::min<size_t>(cap, text.size() + 2));
  ids.push_back(options_.clsId);
  run(text, cap - 2, &ids, nullptr);
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
  appendPieces(a, std::numeric_limits<size_t>::max(), first);
  appendPieces(b, std::numeric_limits<size_t>::max(), second);
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

} // namespace encrt
