//===- unigram_tokenizer.cpp - SentencePiece Unigram tokenizer (XLM-R) ----===//
//
// Follows the `tokenizers` library (0.23): tokenizer/added_vocabulary.rs (the
// normalizer runs on each segment between added tokens), pre_tokenizers/
// whitespace.rs (WhitespaceSplit) and metaspace.rs, models/unigram/model.rs
// (encode_optimized, tokenize with byte_fallback), processors (a template of
// ids).
//
//===----------------------------------------------------------------------===//
#include "unigram_tokenizer.h"

#include "unicode.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace encrt {
namespace {

[[noreturn]] void invalid(const std::string &what) { throw std::invalid_argument("UnigramTokenizer: " + what); }

/// The library's K_UNK_PENALTY: an unknown character scores min_score - 10.
constexpr double kUnkPenalty = 10.0;

bool isWhiteSpace(char32_t cp) { return unicode::gpt2Class(cp) == unicode::Gpt2Class::Space; }

/// Byte length of the (valid UTF-8) code point starting at s[pos].
size_t charLength(std::string_view s, size_t pos) {
  size_t next = pos;
  char32_t cp;
  unicode::decodeUtf8(s, next, cp);
  return next - pos;
}

} // namespace

/// Buffers reused across the pieces of one run.
struct UnigramTokenizer::Scratch {
  struct Best {
    double score;
    int32_t start; ///< -1: no path ends here yet
    int32_t id;
  };
  std::vector<Best> best;
  std::vector<std::pair<size_t, int32_t>> path; ///< (start, id) from the end back
  std::string meta;
  std::vector<TextSpan> metaAlign; ///< of `meta`'s bytes
  std::vector<TextSpan> origin;    ///< of the normalised segment's bytes
};

UnigramTokenizer::UnigramTokenizer(std::vector<std::string> vocab, std::vector<double> scores,
                                   std::vector<AddedToken> added, UnigramOptions options)
    : vocab_(std::move(vocab)), scores_(std::move(scores)), normalizer_(options.normalizers),
      added_(added, [this](std::string_view text, std::string &out) { normalizer_.apply(text, out); }),
      options_(std::move(options)) {
  const size_t n = vocab_.size();
  if (n == 0)
    invalid("empty vocabulary");
  if (n > size_t(std::numeric_limits<int32_t>::max()))
    invalid("vocabulary too large");
  if (scores_.size() != n)
    invalid(std::to_string(scores_.size()) + " scores for " + std::to_string(n) + " pieces");
  double minScore = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(scores_[i]))
      invalid("the score of piece " + std::to_string(i) + " is not finite");
    minScore = std::min(minScore, scores_[i]);
  }
  unkScore_ = minScore - kUnkPenalty;
  if (options_.unkId < 0 || size_t(options_.unkId) >= n)
    invalid("unk id " + std::to_string(options_.unkId) + " is outside the vocabulary");
  if (options_.replacement.empty() || charLength(options_.replacement, 0) != options_.replacement.size())
    invalid("the Metaspace replacement must be one character");
  std::string check;
  for (size_t i = 0; i < n; ++i)
    if (unicode::validUtf8(vocab_[i], check, "").size() != vocab_[i].size())
      invalid("piece " + std::to_string(i) + " is not valid UTF-8");

  // The trie, breadth first from the pieces in byte order: each node's
  // children are created together, so they are contiguous.
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return vocab_[a] != vocab_[b] ? vocab_[a] < vocab_[b] : a < b;
  });
  struct Range {
    uint32_t node, lo, hi, depth;
  };
  std::vector<Range> queue = {{0, 0, uint32_t(n), 0}};
  nodes_.emplace_back();
  labels_.push_back(0);
  for (size_t q = 0; q < queue.size(); ++q) {
    const Range r = queue[q];
    uint32_t i = r.lo;
    for (; i < r.hi && vocab_[order[i]].size() == r.depth; ++i)
      if (r.depth > 0) // an empty piece never matches
        nodes_[r.node].id = std::max<int32_t>(nodes_[r.node].id, int32_t(order[i]));
    nodes_[r.node].childBegin = uint32_t(nodes_.size());
    while (i < r.hi) {
      const unsigned char c = static_cast<unsigned char>(vocab_[order[i]][r.depth]);
      uint32_t j = i;
      while (j < r.hi && static_cast<unsigned char>(vocab_[order[j]][r.depth]) == c)
        ++j;
      queue.push_back({uint32_t(nodes_.size()), i, j, r.depth + 1});
      nodes_.emplace_back();
      labels_.push_back(c);
      i = j;
    }
    nodes_[r.node].childEnd = uint32_t(nodes_.size());
  }

  std::fill(std::begin(rootChild_), std::end(rootChild_), -1);
  for (uint32_t c = nodes_[0].childBegin; c < nodes_[0].childEnd; ++c)
    rootChild_[labels_[c]] = int32_t(c);
  for (unsigned b = 0; b < 256; ++b) {
    static const char hex[] = "0123456789ABCDEF";
    const char name[] = {'<', '0', 'x', hex[b >> 4], hex[b & 15], '>'};
    byteIds_[b] = lookup(std::string_view(name, sizeof name));
  }
  maxId_ = int32_t(n) - 1;
  for (const AddedToken &t : added) {
    // The library's id_to_token: a normalized token's content as the
    // normalizer leaves it (its normalized_cache).
    if (t.normalized && !normalizer_.empty())
      normalizer_.apply(t.content, addedText_[t.id]);
    else
      addedText_[t.id] = t.content;
    maxId_ = std::max(maxId_, t.id);
  }
  if (std::count(options_.templateIds.begin(), options_.templateIds.end(), UnigramOptions::kSequence) != 1)
    invalid("the post-processing template must hold the sequence exactly once");
  maxId_ = std::max(maxId_, checkPairTemplate(options_.pairTemplate, "UnigramTokenizer"));
  for (int32_t id : options_.templateIds) {
    if (id < UnigramOptions::kSequence)
      invalid("template id " + std::to_string(id));
    maxId_ = std::max(maxId_, id);
  }
}

int64_t UnigramTokenizer::child(size_t node, unsigned char c) const {
  if (node == 0)
    return rootChild_[c];
  const Node &n = nodes_[node];
  const auto begin = labels_.begin() + n.childBegin, end = labels_.begin() + n.childEnd;
  const auto it = std::lower_bound(begin, end, c);
  return it != end && *it == c ? it - labels_.begin() : -1;
}

int32_t UnigramTokenizer::lookup(std::string_view piece) const {
  size_t node = 0;
  for (unsigned char c : piece) {
    const int64_t next = child(node, c);
    if (next < 0)
      return -1;
    node = size_t(next);
  }
  return piece.empty() ? -1 : nodes_[node].id;
}

void UnigramTokenizer::viterbi(std::string_view piece, const TextSpan *align, Scratch &scratch,
                               std::vector<int32_t> &ids, std::vector<PieceSpan> *spans) const {
  auto push = [&](int32_t id, size_t from, size_t to) {
    ids.push_back(id);
    if (spans)
      spans->push_back({{align[from].start, align[to - 1].end}});
  };
  const size_t n = piece.size();
  auto &best = scratch.best;
  best.assign(n + 1, {0.0, -1, 0});
  for (size_t start = 0; start < n;) {
    const size_t charLen = charLength(piece, start);
    const double base = best[start].score;
    bool single = false;
    auto offer = [&](size_t end, double score, int32_t id) {
      Scratch::Best &b = best[end];
      if (b.start < 0 || score > b.score)
        b = {score, int32_t(start), id};
    };
    size_t node = 0;
    for (size_t k = start; k < n; ++k) {
      const int64_t next = child(node, static_cast<unsigned char>(piece[k]));
      if (next < 0)
        break;
      node = size_t(next);
      if (const int32_t id = nodes_[node].id; id >= 0) {
        offer(k + 1, scores_[size_t(id)] + base, id);
        single |= k + 1 - start == charLen;
      }
    }
    if (!single)
      offer(start + charLen, unkScore_ + base, options_.unkId);
    start += charLen;
  }

  // Back from the end; runs of unknowns fuse into one piece, which is then
  // looked up whole, spelled in bytes, or unknown.
  auto &path = scratch.path;
  path.clear();
  for (size_t end = n; end > 0; end = size_t(best[end].start))
    path.emplace_back(size_t(best[end].start), best[end].id);
  std::reverse(path.begin(), path.end());
  for (size_t i = 0; i < path.size();) {
    if (path[i].second != options_.unkId) {
      push(path[i].second, path[i].first, i + 1 < path.size() ? path[i + 1].first : n);
      ++i;
      continue;
    }
    size_t j = i;
    while (j < path.size() && path[j].second == options_.unkId)
      ++j;
    const size_t from = path[i].first, to = j < path.size() ? path[j].first : n;
    const std::string_view fused = piece.substr(from, to - from);
    i = j;
    if (const int32_t id = lookup(fused); id >= 0) {
      push(id, from, to);
      continue;
    }
    if (options_.byteFallback &&
        std::all_of(fused.begin(), fused.end(), [&](char b) { return byteIds_[static_cast<unsigned char>(b)] >= 0; })) {
      for (char b : fused) // each byte piece has the whole run's offsets, as in the library
        push(byteIds_[static_cast<unsigned char>(b)], from, to);
      continue;
    }
    push(options_.unkId, from, to);
  }
}

void UnigramTokenizer::segment(std::string_view normalized, const TextSpan *align, size_t limit, Scratch &scratch,
                               std::vector<int32_t> &ids, std::vector<PieceSpan> *spans) const {
  const std::string_view rep = options_.replacement;
  auto metaspace = [&](std::string_view word, const TextSpan *wordAlign) {
    std::string &m = scratch.meta;
    std::vector<TextSpan> &mAlign = scratch.metaAlign;
    m.clear();
    mAlign.clear();
    for (size_t i = 0; i < word.size(); ++i) {
      if (word[i] == ' ')
        m.append(rep);
      else
        m.push_back(word[i]);
      if (wordAlign) // the replacement takes the space's alignment
        mAlign.insert(mAlign.end(), word[i] == ' ' ? rep.size() : 1, wordAlign[i]);
    }
    // prepend_scheme "first": only a word that starts the text (offsets_original().0 == 0)
    const bool first = wordAlign && !word.empty() && wordAlign[0].start == 0;
    const bool prepend = options_.prepend == UnigramOptions::Prepend::Always ||
                         (options_.prepend == UnigramOptions::Prepend::First && first);
    if (prepend && std::string_view(m).substr(0, rep.size()) != rep) {
      m.insert(0, rep);
      if (wordAlign && !mAlign.empty()) // NormalizedString::prepend: the first character's alignment
        mAlign.insert(mAlign.begin(), rep.size(), mAlign.front());
    }
    const TextSpan *ma = wordAlign ? mAlign.data() : nullptr;
    if (!options_.split) {
      viterbi(m, ma, scratch, ids, spans);
      return;
    }
    // Cut before each replacement (it starts the next piece).
    const std::string_view text = m;
    size_t from = 0;
    for (size_t at = text.find(rep, rep.size()); at != std::string::npos && ids.size() < limit;
         at = text.find(rep, at + rep.size())) {
      if (at > from)
        viterbi(text.substr(from, at - from), ma ? ma + from : nullptr, scratch, ids, spans);
      from = at;
    }
    if (from < text.size() && ids.size() < limit)
      viterbi(text.substr(from), ma ? ma + from : nullptr, scratch, ids, spans);
  };
  if (!options_.whitespaceSplit) {
    metaspace(normalized, align);
    return;
  }
  size_t wordStart = std::string::npos;
  for (size_t pos = 0; pos <= normalized.size() && ids.size() < limit;) {
    const size_t at = pos;
    bool space = true;
    if (pos < normalized.size()) {
      char32_t cp;
      unicode::decodeUtf8(normalized, pos, cp);
      space = isWhiteSpace(cp);
    } else {
      ++pos;
    }
    if (!space && wordStart == std::string::npos)
      wordStart = at;
    if (space && wordStart != std::string::npos) {
      metaspace(normalized.substr(wordStart, at - wordStart), align ? align + wordStart : nullptr);
      wordStart = std::string::npos;
    }
  }
}

void UnigramTokenizer::appendPieces(std::string_view text, size_t maxPieces, std::vector<int32_t> &ids,
                                    std::vector<PieceSpan> *spans) const {
  // Invalid bytes are dropped (the library only ever sees valid strings).
  std::string buffer;
  const std::string_view clean = cleanText(text, buffer, "", nullptr);
  const size_t base = ids.size(), spansBase = spans ? spans->size() : 0;
  const size_t limit = maxPieces > std::numeric_limits<size_t>::max() - base ? std::numeric_limits<size_t>::max()
                                                                              : base + maxPieces;
  auto full = [&] { return ids.size() - base >= maxPieces; };
  std::vector<TextPiece> rawPieces, normalizedPieces;
  std::string normalized;
  Scratch scratch;
  // The alignments: for the offsets, and for prepend_scheme "first" (which
  // pieces start at the text's start).
  const bool align = spans || options_.prepend == UnigramOptions::Prepend::First;
  added_.split(clean, /*normalizedPass=*/false, rawPieces);
  for (const TextPiece &p : rawPieces) {
    if (full())
      break;
    const uint32_t at = static_cast<uint32_t>(p.text.data() - clean.data());
    if (p.id >= 0) {
      ids.push_back(p.id);
      if (spans)
        spans->push_back({{at, at + static_cast<uint32_t>(p.text.size())}, true});
      continue;
    }
    normalizer_.apply(p.text, normalized, align ? &scratch.origin : nullptr);
    if (align)
      for (TextSpan &a : scratch.origin) // as in the text (a piece's "(0, 0)" is its own start)
        a.start += at, a.end += at;
    normalizedPieces.clear();
    added_.split(normalized, /*normalizedPass=*/true, normalizedPieces);
    for (const TextPiece &q : normalizedPieces) {
      if (full())
        break;
      const size_t offset = size_t(q.text.data() - normalized.data());
      if (q.id >= 0) {
        ids.push_back(q.id);
        if (spans)
          spans->push_back({spanOf(scratch.origin, offset, offset + q.text.size()), true});
        continue;
      }
      segment(q.text, align ? &scratch.origin[offset] : nullptr, limit, scratch, ids, spans);
    }
  }
  if (ids.size() - base > maxPieces) {
    ids.resize(base + maxPieces);
    if (spans)
      spans->resize(spansBase + maxPieces);
  }
}

std::vector<std::string> UnigramTokenizer::tokenize(std::string_view text) const {
  std::vector<int32_t> ids;
  appendPieces(text, std::numeric_limits<size_t>::max(), ids, nullptr);
  return piecesOf(ids, vocab_, addedText_);
}

std::vector<int32_t> UnigramTokenizer::encode(std::string_view text, int32_t maxLen) const {
  return encodeWithTemplate(options_.templateIds, maxLen, text.size(),
                            [&](size_t maxPieces, std::vector<int32_t> &ids) { appendPieces(text, maxPieces, ids, nullptr); });
}

} // namespace encrt
