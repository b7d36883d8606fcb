//===- added_tokens.cpp - Splitting text on a tokenizer's added tokens ----===//
//
// Follows tokenizers' AddedVocabulary::find_matches (tokenizers 0.23):
// non-overlapping leftmost-longest matches over the original text; for each,
// lstrip moves its start left over whitespace (never before the end of the
// previous match), rstrip moves its end right over whitespace.
//
//===----------------------------------------------------------------------===//
#include "added_tokens.h"

#include "unicode.h"
#include "encrt/schema_version.h"

#include <stdexcept>

namespace encrt {
namespace {

constexpr size_t kMaxContentBytes = ENCM_MAX_ADDED_TOKEN_BYTES;

/// Start of the code point that ends at `end` (text is valid UTF-8, end > 0).
size_t previousCodePoint(std::string_view text, size_t end) {
  size_t p = end - 1;
  while (p > 0 && (static_cast<unsigned char>(text[p]) & 0xC0) == 0x80)
    --p;
  return p;
}

bool isSpaceAt(std::string_view text, size_t pos, size_t &next) {
  char32_t cp;
  next = pos;
  return unicode::decodeUtf8(text, next, cp) && unicode::gpt2Class(cp) == unicode::Gpt2Class::Space;
}

} // namespace

AddedTokenSplitter::AddedTokenSplitter(const std::vector<AddedToken> &tokens, const Normalizer &normalize)
    : tokens_(tokens) {
  std::string normalized;
  for (size_t t = 0; t < tokens_.size(); ++t) {
    const AddedToken &tok = tokens_[t];
    if (tok.content.empty() || tok.content.size() > kMaxContentBytes || tok.id < 0)
      throw std::invalid_argument("added token " + std::to_string(t) + ": content of " +
                                  std::to_string(tok.content.size()) + " bytes (1.." +
                                  std::to_string(kMaxContentBytes) + ") with id " + std::to_string(tok.id));
    if (unicode::validUtf8(tok.content, normalized, "").size() != tok.content.size())
      throw std::invalid_argument("added token " + std::to_string(t) + " (id " + std::to_string(tok.id) +
                                  "): its content is not valid UTF-8");
    std::string_view key = tok.content;
    if (tok.normalized && normalize) {
      normalize(key, normalized);
      key = normalized;
      if (key.empty()) // erased by the normalizer: the library's matcher never finds it
        continue;
    }
    Trie &trie = tries_[tok.normalized];
    trie.firstByte[static_cast<unsigned char>(key[0])] = true;
    uint32_t node = 0;
    for (unsigned char b : key) {
      auto [it, inserted] = trie.edges.try_emplace((uint64_t(node) << 8) | b, uint32_t(trie.terminal.size()));
      if (inserted)
        trie.terminal.push_back(-1);
      node = it->second;
    }
    trie.terminal[node] = static_cast<int32_t>(t); // a later duplicate wins
  }
}

void AddedTokenSplitter::split(std::string_view text, bool normalizedPass, std::vector<TextPiece> &out) const {
  const Trie &trie = tries_[normalizedPass];
  auto plain = [&](size_t from, size_t to) {
    if (from < to)
      out.push_back({text.substr(from, to - from), -1});
  };
  size_t startOffset = 0;
  for (size_t s = 0; s < text.size();) {
    if (!trie.firstByte[static_cast<unsigned char>(text[s])]) {
      ++s;
      continue;
    }
    // The longest token starting at s.
    int32_t found = -1;
    size_t foundEnd = 0;
    uint32_t node = 0;
    for (size_t p = s; p < text.size(); ++p) {
      auto it = trie.edges.find((uint64_t(node) << 8) | static_cast<unsigned char>(text[p]));
      if (it == trie.edges.end())
        break;
      node = it->second;
      if (trie.terminal[node] >= 0)
        found = trie.terminal[node], foundEnd = p + 1;
    }
    if (found < 0) {
      ++s;
      continue;
    }
    const AddedToken &tok = tokens_[static_cast<size_t>(found)];
    size_t start = s, stop = foundEnd, next;
    if (tok.lstrip) {
      size_t left = start;
      while (left > 0) {
        size_t prev = previousCodePoint(text, left);
        if (!isSpaceAt(text, prev, next))
          break;
        left = prev;
      }
      start = std::max(left, startOffset);
    }
    if (tok.rstrip)
      while (stop < text.size() && isSpaceAt(text, stop, next))
        stop = next;
    if (startOffset < start)
      plain(startOffset, start);
    out.push_back({text.substr(std::min(start, text.size()), stop - std::min(start, stop)), tok.id});
    startOffset = stop;
    s = foundEnd; // matches do not overlap in the original text
  }
  plain(startOffset, text.size());
}

void AddedTokenSplitter::split(std::string_view text, std::vector<TextPiece> &out) const {
  if (tries_[true].terminal.size() <= 1) { // no normalized tokens
    split(text, false, out);
    return;
  }
  std::vector<TextPiece> raw;
  split(text, false, raw);
  for (const TextPiece &p : raw)
    if (p.id >= 0)
      out.push_back(p);
    else
      split(p.text, true, out);
}

} // namespace encrt
