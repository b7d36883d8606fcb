//===- bpe_tokenizer.cpp - Byte-level BPE tokenizer (GPT-2, RoBERTa) ------===//
//
// Follows the `tokenizers` library (0.23): pre_tokenizers/byte_level.rs (the
// GPT-2 regex, written out below as a scanner over code points; the classes
// come from unicode_gpt2_tables.cpp, generated from the library itself), the
// Split pre-tokenizer on Qwen2's and cl100k's regexes (another scanner),
// models/bpe/model.rs merge_word and word.rs merge_all (a min-heap on (rank,
// position), stale entries skipped), processors (a template of ids).
//
//===----------------------------------------------------------------------===//
#include "bpe_tokenizer.h"

#include <deque>

#include "unicode.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace encrt {
using unicode::Gpt2Class;

namespace {

[[noreturn]] void invalid(const std::string &what) { throw std::invalid_argument("BytePairTokenizer: " + what); }

/// `s` (valid UTF-8) as code points, with the byte offset of each and of the end.
void decodeAll(std::string_view s, std::vector<char32_t> &cps, std::vector<size_t> &offsets) {
  cps.clear();
  offsets.clear();
  for (size_t pos = 0; pos < s.size();) {
    offsets.push_back(pos);
    char32_t cp;
    unicode::decodeUtf8(s, pos, cp);
    cps.push_back(cp);
  }
  offsets.push_back(s.size());
}

/// Calls emit(beginByte, endByte) for each piece of the GPT-2 regex
///   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
/// over `s` (valid UTF-8), until emit returns false.
template <typename Emit> void splitGpt2(std::string_view s, std::vector<char32_t> &cps,
                                        std::vector<size_t> &offsets, Emit emit) {
  decodeAll(s, cps, offsets);
  const size_t n = cps.size();
  auto cls = [&](size_t i) { return unicode::gpt2Class(cps[i]); };
  for (size_t i = 0; i < n;) {
    size_t j = 0;
    if (cps[i] == '\'' && i + 1 < n) {
      const char32_t a = cps[i + 1], b = i + 2 < n ? cps[i + 2] : 0;
      if (a == 's' || a == 't' || a == 'm' || a == 'd')
        j = i + 2;
      else if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
        j = i + 3;
    }
    if (j == 0) {
      size_t runStart = i;
      if (cps[i] == ' ' && i + 1 < n && cls(i + 1) != Gpt2Class::Space)
        runStart = i + 1; // " ?X+" with the optional space
      const Gpt2Class target = cls(runStart);
      if (target != Gpt2Class::Space) {
        j = runStart + 1;
        while (j < n && cls(j) == target)
          ++j;
      } else {
        size_t k = i;
        while (k < n && cls(k) == Gpt2Class::Space)
          ++k;
        // \s+(?!\S) leaves the last space for a following " ?X+"; a single
        // space before a non-space is \s+ alone.
        j = k == n ? n : k - i >= 2 ? k - 1 : k;
      }
    }
    if (!emit(offsets[i], offsets[j]))
      return;
    i = j;
  }
}

/// Calls emit(beginByte, endByte) for each piece of the Split regex
///   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,maxDigits}|
///    ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
/// (Qwen2's with maxDigits 1, cl100k's with 3) over `s`, as Oniguruma matches
/// it (the first alternative that matches at each position, each greedy with
/// backtracking), until emit returns false. Every code point is in some
/// piece (letters, numbers, spaces and the rest each have an alternative),
/// so the Split's Isolated behaviour leaves no gaps.
template <typename Emit> void splitCl100k(std::string_view s, std::vector<char32_t> &cps,
                                          std::vector<size_t> &offsets, size_t maxDigits, Emit emit) {
  decodeAll(s, cps, offsets);
  const size_t n = cps.size();
  auto cls = [&](size_t i) { return unicode::gpt2Class(cps[i]); };
  auto newline = [&](size_t i) { return cps[i] == '\r' || cps[i] == '\n'; };
  // (?i:...) folds case: 's' also matches 'S' and U+017F LONG S.
  auto is = [&](size_t i, char c) {
    if (i >= n)
      return false;
    const char32_t cp = cps[i];
    return cp == char32_t(c) || cp == char32_t(c - 'a' + 'A') || (c == 's' && cp == 0x17F);
  };
  for (size_t i = 0; i < n;) {
    size_t j = 0;
    const Gpt2Class here = cls(i);
    if (cps[i] == '\'') { // (?i:'s|'t|'re|'ve|'m|'ll|'d)
      if (is(i + 1, 's') || is(i + 1, 't') || is(i + 1, 'm') || is(i + 1, 'd'))
        j = i + 2;
      else if ((is(i + 1, 'r') && is(i + 2, 'e')) || (is(i + 1, 'v') && is(i + 2, 'e')) ||
               (is(i + 1, 'l') && is(i + 2, 'l')))
        j = i + 3;
    }
    if (j == 0) {
      size_t letters = n; // where [^\r\n\p{L}\p{N}]?\p{L}+'s letters start, n: no match
      if (here == Gpt2Class::Letter)
        letters = i;
      else if (here != Gpt2Class::Number && !newline(i) && i + 1 < n && cls(i + 1) == Gpt2Class::Letter)
        letters = i + 1;
      if (letters < n) {
        j = letters + 1;
        while (j < n && cls(j) == Gpt2Class::Letter)
          ++j;
      } else if (here == Gpt2Class::Number) { // \p{N}{1,maxDigits}
        j = i + 1;
        while (j < n && j - i < maxDigits && cls(j) == Gpt2Class::Number)
          ++j;
      } else {
        // " ?[^\s\p{L}\p{N}]+[\r\n]*": the optional space, a run of the rest, newlines.
        const size_t other = cps[i] == ' ' && i + 1 < n && cls(i + 1) == Gpt2Class::Other ? i + 1 : i;
        if (cls(other) == Gpt2Class::Other) {
          j = other + 1;
          while (j < n && cls(j) == Gpt2Class::Other)
            ++j;
          while (j < n && newline(j))
            ++j;
        } else {
          // Whitespace from i to k: "\s*[\r\n]+" ends after its last newline;
          // else "\s+(?!\S)" leaves the last space before a non-space, and
          // "\s+" takes a lone one.
          size_t k = i, lastNewline = n;
          for (; k < n && cls(k) == Gpt2Class::Space; ++k)
            if (newline(k))
              lastNewline = k;
          j = lastNewline < n ? lastNewline + 1 : k == n ? n : k - i >= 2 ? k - 1 : k;
        }
      }
    }
    if (!emit(offsets[i], offsets[j]))
      return;
    i = j;
  }
}

/// A split after each space (the library's Split on " ", MergedWithPrevious).
template <typename Emit> void splitAfterSpaces(std::string_view s, Emit emit) {
  size_t from = 0;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] == ' ') {
      if (!emit(from, i + 1))
        return;
      from = i + 1;
    }
  if (from < s.size())
    emit(from, s.size());
}

/// A word before each `marker` (the library's split on it, MergedWithNext).
template <typename Emit> void splitBefore(std::string_view s, std::string_view marker, Emit emit) {
  size_t from = 0;
  for (size_t at = s.find(marker, 1); at != std::string_view::npos; at = s.find(marker, at + marker.size())) {
    if (at > from && !emit(from, at))
      return;
    from = at;
  }
  if (from < s.size())
    emit(from, s.size());
}

/// Calls emit(beginByte, endByte) for each word `split` cuts `s` into.
template <typename Emit> void split(BpeSplit split, const MetaspaceOptions &metaspace, std::string_view s,
                                    std::vector<char32_t> &cps, std::vector<size_t> &offsets, Emit emit) {
  switch (split) {
  case BpeSplit::Gpt2: splitGpt2(s, cps, offsets, emit); break;
  case BpeSplit::Qwen2: splitCl100k(s, cps, offsets, 1, emit); break;
  case BpeSplit::Cl100k: splitCl100k(s, cps, offsets, 3, emit); break;
  case BpeSplit::Whole:
    if (!s.empty())
      emit(0, s.size());
    break;
  case BpeSplit::SpaceMergedWithPrevious: splitAfterSpaces(s, emit); break;
  case BpeSplit::Metaspace:
    if (metaspace.split)
      splitBefore(s, metaspace.replacement, emit);
    else if (!s.empty())
      emit(0, s.size());
    break;
  }
}

struct Symbol {
  int32_t id;
  int32_t prev, next;
  bool alive;
  uint32_t len; ///< bytes of the word it stands for (the library's Word offsets add them up)
};

struct Merge {
  int32_t rank;
  size_t pos;
  int32_t newId;
  bool operator>(const Merge &o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

uint64_t pairKey(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

} // namespace

/// Buffers reused across the words of one run.
struct BytePairTokenizer::Scratch {
  std::vector<Symbol> symbols;
  std::vector<Merge> heap;
  std::string mapped;
};

BytePairTokenizer::BytePairTokenizer(std::vector<std::string> vocab,
                                     const std::vector<std::pair<int32_t, int32_t>> &merges,
                                     std::vector<AddedToken> added, BpeOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)), normalizer_(options_.normalizers),
      added_(added, [this](std::string_view text, std::string &out) { normalizer_.apply(text, out); }) {
  if (vocab_.empty())
    invalid("empty vocabulary");
  const int32_t n = static_cast<int32_t>(vocab_.size());
  ids_.reserve(vocab_.size());
  for (int32_t i = 0; i < n; ++i)
    ids_[vocab_[i]] = i;
  for (unsigned b = 0; b < 256; ++b) {
    unicode::appendUtf8(byteChars_[b], unicode::gpt2ByteChar(b));
    // Bytes: the byte's alphabet character; Chars: its fallback token, "<0x0A>" as Rust's {:#04X} spells it.
    char fallback[8];
    std::snprintf(fallback, sizeof fallback, "<0x%02X>", b);
    auto it = ids_.find(options_.alphabet == BpeAlphabet::Bytes ? byteChars_[b] : std::string(fallback));
    byteIds_[b] = it == ids_.end() ? -1 : it->second;
  }
  if (options_.byteFallback && options_.alphabet != BpeAlphabet::Chars)
    invalid("byte fallback needs the character alphabet");
  const bool charSplit = options_.split == BpeSplit::Whole || options_.split == BpeSplit::SpaceMergedWithPrevious ||
                         options_.split == BpeSplit::Metaspace;
  if (charSplit != (options_.alphabet == BpeAlphabet::Chars))
    invalid("the character alphabet goes with no pre-tokenizer, a split after spaces or Metaspace, and only it");
  if (options_.split == BpeSplit::Metaspace) {
    const std::string &r = options_.metaspace.replacement;
    size_t next = 0;
    char32_t cp;
    if (r.empty() || !unicode::decodeUtf8(r, next, cp) || next != r.size())
      invalid("the Metaspace replacement must be one character");
  }
  merges_.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    auto [a, b] = merges[r];
    if (a < 0 || a >= n || b < 0 || b >= n)
      invalid("merge " + std::to_string(r) + " (" + std::to_string(a) + ", " + std::to_string(b) +
              ") is outside the vocabulary of " + std::to_string(n));
    auto it = ids_.find(vocab_[a] + vocab_[b]);
    if (it == ids_.end())
      invalid("merge " + std::to_string(r) + ": '" + vocab_[a] + vocab_[b] + "' is not in the vocabulary");
    merges_[pairKey(a, b)] = {static_cast<int32_t>(r), it->second}; // a later duplicate wins
  }
  maxId_ = n - 1;
  for (const AddedToken &t : added) {
    // The library's id_to_token: a normalized token's content as the
    // normalizer leaves it (its normalized_cache).
    if (t.normalized && !normalizer_.empty())
      normalizer_.apply(t.content, addedText_[t.id]);
    else
      addedText_[t.id] = t.content;
    maxId_ = std::max(maxId_, t.id);
  }
  if (options_.unkId < -1 || options_.unkId >= n)
    invalid("unk id " + std::to_string(options_.unkId) + " is outside the vocabulary");
  if (std::count(options_.templateIds.begin(), options_.templateIds.end(), BpeOptions::kSequence) != 1)
    invalid("the post-processing template must hold the sequence exactly once");
  maxId_ = std::max(maxId_, checkPairTemplate(options_.pairTemplate, "BytePairTokenizer"));
  for (int32_t id : options_.templateIds) {
    if (id < BpeOptions::kSequence)
      invalid("template id " + std::to_string(id));
    maxId_ = std::max(maxId_, id);
  }
}

void BytePairTokenizer::byteSymbols(std::string_view bytes, Scratch &scratch) const {
  std::vector<Symbol> &symbols = scratch.symbols;
  symbols.clear();
  bool lastWasUnk = false;
  for (unsigned char b : bytes) {
    int32_t id = byteIds_[b];
    if (id < 0) {
      if (options_.unkId < 0)
        continue; // no unk token: the byte is dropped, as in `tokenizers`
      if (options_.fuseUnk && lastWasUnk)
        continue;
      id = options_.unkId;
      lastWasUnk = true;
    } else {
      lastWasUnk = false;
    }
    const int32_t k = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, k - 1, k + 1, true, 1});
  }
  if (!symbols.empty())
    symbols.back().next = -1;
}

void BytePairTokenizer::charSymbols(std::string_view word, Scratch &scratch) const {
  // models/bpe/model.rs merge_word: a character in the vocabulary, else its
  // bytes' <0xXX> tokens when all exist (byte_fallback), else the unknown
  // token, a run of them fused (fuse_unk); a pending unknown is added only
  // when a character of the vocabulary (or the end) comes, after any
  // fallback bytes between them, as the library does.
  std::vector<Symbol> &symbols = scratch.symbols;
  symbols.clear();
  auto add = [&](int32_t id, size_t len) {
    const int32_t k = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, k - 1, k + 1, true, static_cast<uint32_t>(len)});
  };
  size_t unkPending = 0; // bytes of the pending unknown, 0: none
  for (size_t pos = 0; pos < word.size();) {
    const size_t start = pos;
    char32_t cp;
    unicode::decodeUtf8(word, pos, cp);
    scratch.mapped.assign(word.substr(start, pos - start));
    if (auto it = ids_.find(scratch.mapped); it != ids_.end()) {
      if (unkPending)
        add(options_.unkId, unkPending), unkPending = 0;
      add(it->second, pos - start);
      continue;
    }
    if (options_.byteFallback &&
        std::all_of(word.begin() + start, word.begin() + pos, [&](char b) { return byteIds_[uint8_t(b)] >= 0; })) {
      for (size_t b = start; b < pos; ++b)
        add(byteIds_[uint8_t(word[b])], 1);
      continue;
    }
    if (options_.unkId < 0)
      continue; // no unk token: the character is dropped
    if (unkPending && !options_.fuseUnk)
      add(options_.unkId, unkPending), unkPending = 0;
    unkPending += pos - start;
  }
  if (unkPending)
    add(options_.unkId, unkPending);
  if (!symbols.empty())
    symbols.back().next = -1;
}

void BytePairTokenizer::mergeWord(std::string_view bytes, Scratch &scratch, std::vector<int32_t> &ids,
                                  std::vector<TextSpan> *spans) const {
  const bool chars = options_.alphabet == BpeAlphabet::Chars;
  if (options_.ignoreMerges) {
    std::string &mapped = scratch.mapped;
    mapped.clear();
    if (chars)
      mapped.assign(bytes);
    else
      for (unsigned char b : bytes)
        mapped += byteChars_[b];
    if (auto it = ids_.find(mapped); it != ids_.end()) {
      ids.push_back(it->second);
      if (spans)
        spans->push_back({0, static_cast<uint32_t>(bytes.size())});
      return;
    }
  }
  chars ? charSymbols(bytes, scratch) : byteSymbols(bytes, scratch);
  std::vector<Symbol> &symbols = scratch.symbols;
  if (symbols.empty())
    return;

  // A min-heap on (rank, position), as word.rs's merge_all.
  std::vector<Merge> &heap = scratch.heap;
  heap.clear();
  const std::greater<Merge> after;
  auto pushPair = [&](size_t pos) {
    const Symbol &s = symbols[pos];
    if (s.next < 0)
      return;
    auto it = merges_.find(pairKey(s.id, symbols[static_cast<size_t>(s.next)].id));
    if (it == merges_.end())
      return;
    heap.push_back({it->second.first, pos, it->second.second});
    std::push_heap(heap.begin(), heap.end(), after);
  };
  for (size_t i = 0; i + 1 < symbols.size(); ++i)
    pushPair(i);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), after);
    const Merge top = heap.back();
    heap.pop_back();
    Symbol &cur = symbols[top.pos];
    if (!cur.alive || cur.next < 0)
      continue;
    const size_t nextPos = static_cast<size_t>(cur.next);
    auto it = merges_.find(pairKey(cur.id, symbols[nextPos].id));
    if (it == merges_.end() || it->second.second != top.newId)
      continue; // stale: one side has merged since
    cur.id = top.newId;
    cur.len += symbols[nextPos].len;
    symbols[nextPos].alive = false;
    cur.next = symbols[nextPos].next;
    if (cur.next >= 0)
      symbols[static_cast<size_t>(cur.next)].prev = static_cast<int32_t>(top.pos);
    if (cur.prev >= 0)
      pushPair(static_cast<size_t>(cur.prev));
    pushPair(top.pos);
  }
  uint32_t at = 0; // the library's offsets: the lengths added up, a dropped character's left out
  for (const Symbol &s : symbols)
    if (s.alive) {
      ids.push_back(s.id);
      if (spans)
        spans->push_back({at, at + s.len});
      at += s.len;
    }
}

void BytePairTokenizer::metaspaceSegment(std::string_view text, bool atStart, const TextSpan *align,
                                         std::string &segment, std::vector<TextSpan> &segmentAlign) const {
  const MetaspaceOptions &m = options_.metaspace;
  // Metaspace::pre_tokenize: NormalizedString::replace(' ', replacement)
  // (each byte of a replacement aligned as the space it replaced), then
  // prepend, which shares the first character's alignment.
  for (size_t i = 0; i < text.size(); ++i) {
    const bool space = text[i] == ' ';
    if (space)
      segment += m.replacement;
    else
      segment += text[i];
    if (align)
      segmentAlign.insert(segmentAlign.end(), space ? m.replacement.size() : 1, align[i]);
  }
  const bool prepend = !segment.empty() && segment.compare(0, m.replacement.size(), m.replacement) != 0 &&
                       (m.prepend == MetaspacePrepend::Always || (m.prepend == MetaspacePrepend::First && atStart));
  if (prepend) {
    segment.insert(0, m.replacement);
    if (align)
      segmentAlign.insert(segmentAlign.begin(), m.replacement.size(), segmentAlign.front());
  }
}

void BytePairTokenizer::appendPieces(std::string_view text, size_t maxPieces, std::vector<int32_t> &ids,
                                     std::vector<PieceSpan> *spans) const {
  // Invalid bytes are dropped (the library only ever sees valid strings).
  std::string buffer;
  const std::string_view clean = cleanText(text, buffer, "", nullptr);
  const size_t base = ids.size();
  auto full = [&] { return ids.size() - base >= maxPieces; };
  // Each piece of the text between added tokens, with (for spans) where it
  // came from: an added token's bytes, a plain piece's alignments.
  struct Part {
    TextPiece piece;
    TextSpan span;
    const TextSpan *align;
  };
  std::vector<Part> parts;
  std::vector<TextPiece> pieces;
  std::vector<TextSpan> cleanAlign;
  std::deque<std::string> normalized; // what the normalized pass's pieces point into
  std::deque<std::vector<TextSpan>> normalizedAlign;
  auto offsetIn = [](std::string_view of, std::string_view in) { return static_cast<uint32_t>(of.data() - in.data()); };
  if (normalizer_.empty()) {
    added_.split(clean, pieces);
    if (spans)
      characterAlignments(clean, cleanAlign);
    for (const TextPiece &p : pieces) {
      const uint32_t at = offsetIn(p.text, clean);
      parts.push_back({p, {at, at + static_cast<uint32_t>(p.text.size())}, spans ? cleanAlign.data() + at : nullptr});
    }
  } else {
    std::vector<TextPiece> rawPieces;
    added_.split(clean, /*normalizedPass=*/false, rawPieces);
    for (const TextPiece &p : rawPieces) {
      const uint32_t at = offsetIn(p.text, clean);
      if (p.id >= 0) {
        parts.push_back({p, {at, at + static_cast<uint32_t>(p.text.size())}, nullptr});
        continue;
      }
      // Metaspace's prepend_scheme first asks where a normalised piece
      // starts in the text: its alignments then, spans or not.
      const bool aligned = spans || (options_.split == BpeSplit::Metaspace &&
                                     options_.metaspace.prepend == MetaspacePrepend::First);
      std::vector<TextSpan> *align = aligned ? &normalizedAlign.emplace_back() : nullptr;
      normalizer_.apply(p.text, normalized.emplace_back(), align);
      if (align)
        for (TextSpan &a : *align)
          a.start += at, a.end += at;
      pieces.clear();
      added_.split(normalized.back(), /*normalizedPass=*/true, pieces);
      for (const TextPiece &q : pieces) {
        const size_t from = offsetIn(q.text, normalized.back());
        parts.push_back({q, align ? spanOf(*align, from, from + q.text.size()) : TextSpan{},
                         align ? align->data() + from : nullptr});
      }
    }
  }
  std::vector<char32_t> cps;
  std::vector<size_t> offsets;
  std::vector<int32_t> wordIds;
  std::vector<TextSpan> wordSpans, segmentAlign;
  std::string segment;
  Scratch scratch;
  for (const Part &part : parts) {
    const TextPiece &p = part.piece;
    if (full())
      break;
    if (p.id >= 0) {
      ids.push_back(p.id);
      if (spans)
        spans->push_back({part.span, true});
      continue;
    }
    segment.clear();
    segmentAlign.clear();
    if (options_.split == BpeSplit::Metaspace) {
      metaspaceSegment(p.text, part.span.start == 0, spans ? part.align : nullptr, segment, segmentAlign);
    } else {
      if (options_.addPrefixSpace && p.text.front() != ' ') {
        segment = " "; // NormalizedString::prepend: it shares the first character's alignment
        if (spans)
          segmentAlign.push_back(part.align[0]);
      }
      segment.append(p.text);
      if (spans)
        segmentAlign.insert(segmentAlign.end(), part.align, part.align + p.text.size());
    }
    auto piece = [&](size_t from, size_t to) {
      wordIds.clear();
      wordSpans.clear();
      mergeWord(std::string_view(segment).substr(from, to - from), scratch, wordIds, spans ? &wordSpans : nullptr);
      for (size_t i = 0; i < wordIds.size() && !full(); ++i) {
        ids.push_back(wordIds[i]);
        if (spans)
          spans->push_back({spanOf(segmentAlign, from + wordSpans[i].start, from + wordSpans[i].end)});
      }
      return !full();
    };
    split(options_.split, options_.metaspace, segment, cps, offsets, piece);
  }
}

std::vector<std::string> BytePairTokenizer::preTokenize(BpeSplit split, std::string_view text,
                                                        const MetaspaceOptions &metaspace) {
  std::vector<std::string> pieces;
  std::vector<char32_t> cps;
  std::vector<size_t> offsets;
  auto emit = [&](size_t from, size_t to) {
    pieces.emplace_back(text.substr(from, to - from));
    return true;
  };
  encrt::split(split, metaspace, text, cps, offsets, emit);
  return pieces;
}

std::vector<std::string> BytePairTokenizer::tokenize(std::string_view text) const {
  std::vector<int32_t> ids;
  appendPieces(text, std::numeric_limits<size_t>::max(), ids, nullptr);
  return piecesOf(ids, vocab_, addedText_);
}

std::vector<int32_t> BytePairTokenizer::encode(std::string_view text, int32_t maxLen) const {
  return encodeWithTemplate(options_.templateIds, maxLen, text.size(),
                            [&](size_t maxPieces, std::vector<int32_t> &ids) { appendPieces(text, maxPieces, ids, nullptr); });
}

} // namespace encrt
