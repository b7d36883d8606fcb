//===- tokenizer.cpp - BERT WordPiece tokenizer ---------------------------===//
//
// Mirrors HF BertTokenizer (transformers 4.40): special tokens are split off
// the raw text first; the rest is cleaned (C* dropped, whitespace -> space),
// CJK ideographs isolated, split on whitespace; each word is lowercased,
// accent-stripped, split on punctuation, then WordPiece'd (greedy longest
// match, "##" continuations, [UNK] for a word over maxCharsPerWord or with
// no match). HF's NFC step is omitted: it cannot change the result when
// accents are stripped (NFD follows).
//
//===----------------------------------------------------------------------===//
#include "tokenizer.h"

#include "unicode.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace encrt {
using unicode::CharClass;

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> vocab,
                                       WordPieceOptions options)
    : vocab_(std::move(vocab)), options_(options) {
  const auto check = [&](int32_t id, const char *field) {
    if (id < 0 || static_cast<size_t>(id) >= vocab_.size())
      throw std::invalid_argument(std::string("WordPieceTokenizer: options.") +
                                  field + " = " + std::to_string(id) +
                                  " is outside the vocabulary of " +
                                  std::to_string(vocab_.size()) + " tokens");
  };
  check(options_.unkId, "unkId");
  check(options_.clsId, "clsId");
  check(options_.sepId, "sepId");
  check(options_.padId, "padId");
  if (options_.maxCharsPerWord < 1)
    throw std::invalid_argument(
        "WordPieceTokenizer: options.maxCharsPerWord must be >= 1");
  ids_.reserve(vocab_.size());
  for (size_t i = 0; i < vocab_.size(); ++i) {
    ids_[vocab_[i]] =
        static_cast<int32_t>(i); // Later duplicates win, as in HF.
    maxPieceBytes_ = std::max(maxPieceBytes_, vocab_[i].size());
  }
  for (const std::string &s :
       {vocab_[options_.padId], vocab_[options_.unkId], vocab_[options_.clsId],
        vocab_[options_.sepId], std::string("[MASK]")})
    if (!s.empty() && ids_.count(s) &&
        std::find(specials_.begin(), specials_.end(), s) == specials_.end())
      specials_.push_back(s);
}

namespace {

/// One tokenisation: the reusable buffers and the output sink.
struct Run {
  const std::unordered_map<std::string, int32_t> &ids;
  const std::vector<std::string> &vocab;
  const WordPieceOptions &opt;
  const std::vector<std::string> &specials;
  size_t maxPieceBytes;
  size_t maxPieces;
  std::vector<int32_t> *outIds;
  std::vector<std::string> *outPieces;

  size_t emitted = 0;
  std::vector<char32_t> word;  // Cleaned code points of one whitespace word.
  std::vector<char32_t> norm;  // The word lowercased / accent-stripped.
  std::string bytes;           // UTF-8 of one punctuation-split segment.
  std::vector<size_t> offsets; // Byte offset of each code point in `bytes`.
  std::string key;             // Lookup key ("##" + substring).
  std::vector<int32_t> subIds; // Pieces of the current segment.

  Run(const std::unordered_map<std::string, int32_t> &ids,
      const std::vector<std::string> &vocab, const WordPieceOptions &opt,
      const std::vector<std::string> &specials, size_t maxPieceBytes,
      size_t maxPieces, std::vector<int32_t> *outIds,
      std::vector<std::string> *outPieces)
      : ids(ids), vocab(vocab), opt(opt), specials(specials),
        maxPieceBytes(maxPieceBytes), maxPieces(maxPieces), outIds(outIds),
        outPieces(outPieces) {}

  bool full() const { return emitted >= maxPieces; }

  void emit(int32_t id) {
    if (full())
      return;
    ++emitted;
    if (outIds)
      outIds->push_back(id);
    if (outPieces)
      outPieces->push_back(vocab[static_cast<size_t>(id)]);
  }

  /// The special token starting at text[pos], or nullptr.
  const std::string *specialAt(std::string_view text, size_t pos) const {
    for (const std::string &s : specials)
      if (text.compare(pos, s.size(), s) == 0)
        return &s;
    return nullptr;
  }

  void wordPiece(size_t begin, size_t end) {
    const size_t n = end - begin;
    if (n > static_cast<size_t>(opt.maxCharsPerWord)) {
      emit(opt.unkId);
      return;
    }
    bytes.clear();
    offsets.clear();
    for (size_t i = begin; i < end; ++i) {
      offsets.push_back(bytes.size());
      unicode::appendUtf8(bytes, norm[i]);
    }
    offsets.push_back(bytes.size());
    subIds.clear();
    size_t start = 0;
    while (start < n) {
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

  /// Normalises and emits the pending whitespace word.
  void flush() {
    if (word.empty())
      return;
    norm.clear();
    for (char32_t c : word) {
      char32_t low[2] = {c, 0};
      int n = opt.lowercase ? unicode::toLower(c, low) : 1;
      norm.insert(norm.end(), low, low + n);
    }
    word.clear();
    // HF passes its special tokens as never_split: a (lowercased) word equal
    // to one is kept whole.
    if (norm[0] == '[' && norm.size() <= 16) {
      bytes.clear();
      for (char32_t c : norm)
        unicode::appendUtf8(bytes, c);
      for (const std::string &s : specials)
        if (bytes == s) {
          emit(ids.at(s));
          return;
        }
    }
    if (opt.stripAccents) {
      for (char32_t c : norm) {
        char32_t st[3];
        int n = unicode::stripAccents(c, st);
        word.insert(word.end(), st, st + n);
      }
      norm.swap(word);
      word.clear();
    }
    // Punctuation split: every punctuation character is its own segment.
    size_t segStart = 0;
    for (size_t i = 0; i < norm.size() && !full(); ++i) {
      if (unicode::charClass(norm[i]) != CharClass::Punct)
        continue;
      if (i > segStart)
        wordPiece(segStart, i);
      wordPiece(i, i + 1);
      segStart = i + 1;
    }
    if (segStart < norm.size() && !full())
      wordPiece(segStart, norm.size());
  }

  void operator()(std::string_view text) {
    size_t pos = 0;
    while (pos < text.size() && !full()) {
      if (text[pos] == '[') {
        if (const std::string *s = specialAt(text, pos)) {
          flush();
          emit(ids.at(*s));
          pos += s->size();
          continue;
        }
      }
      char32_t cp;
      if (!unicode::decodeUtf8(text, pos, cp))
        continue; // Invalid bytes are dropped.
      CharClass cls = unicode::charClass(cp);
      if (cp == 0 || cp == 0xFFFD || cls == CharClass::Control)
        continue;
      if (cls == CharClass::Space) {
        flush();
      } else if (opt.splitChinese && unicode::isChineseChar(cp)) {
        flush();
        word.push_back(cp);
        flush();
      } else {
        word.push_back(cp);
      }
    }
    flush();
  }
};

} // namespace

void WordPieceTokenizer::run(std::string_view text, size_t maxPieces,
                             std::vector<int32_t> *ids,
                             std::vector<std::string> *pieces) const {
  Run r(ids_, vocab_, options_, specials_, maxPieceBytes_, maxPieces, ids,
        pieces);
  r(text);
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

} // namespace encrt
