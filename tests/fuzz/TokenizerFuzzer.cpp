//===- TokenizerFuzzer.cpp - libFuzzer target: the WordPiece tokenizer ----===//
//
// Input: one option byte (lowercase, strip accents, split CJK, a small
// max_input_chars_per_word, the truncation length) then the text, any bytes
// (invalid UTF-8 included). A small fixed vocabulary with continuations,
// specials and non-ASCII pieces. Besides crashes and sanitizer reports it
// checks what must hold for every text: encode() is [CLS] ... [SEP], at most
// maxLen ids, every id in the vocabulary, and its inner ids are tokenize()'s
// pieces mapped through the vocabulary (so the two paths agree).
//
//===----------------------------------------------------------------------===//
#include "tokenizer.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::vector<std::string> vocabulary() {
  std::vector<std::string> v = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (const char *w : {"the", "a", "an", "hello", "world", "un", "##able", "##s", "##ing",
                        "##ed", "play", "##er", "x", "##x", "caf", "##é", "café", "naïve",
                        "中", "文", "日本", "##語", "ü", "##ü", "é", "e", "##e", ",", ".", "!",
                        "?", "'", "\"", "(", ")", "-", "##-", "1", "2", "##1", "##2", "42",
                        "emoji", "😀", "##😀", "ß", "ss", "Ω", "ω", "i̇"})
    v.push_back(w);
  for (char c = 'a'; c <= 'z'; ++c) {
    v.push_back(std::string(1, c));
    v.push_back(std::string("##") + c);
  }
  return v;
}

[[noreturn]] void violated(const char *what) {
  std::fprintf(stderr, "tokenizer invariant violated: %s\n", what);
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  static const std::vector<std::string> vocab = vocabulary();
  const uint8_t flags = data[0];
  encrt::WordPieceOptions o;
  o.lowercase = flags & 1;
  o.stripAccents = flags & 2;
  o.splitChinese = flags & 4;
  o.maxCharsPerWord = flags & 8 ? 5 : 100;
  o.unkId = 1, o.clsId = 2, o.sepId = 3, o.padId = 0;
  const int32_t maxLen = 2 + (flags >> 4) * 3; // 2..47
  // Constructed per input (options vary); the vocabulary is small.
  encrt::WordPieceTokenizer tok(vocab, o);
  std::string_view text(reinterpret_cast<const char *>(data + 1), size - 1);

  std::vector<std::string> pieces = tok.tokenize(text);
  std::vector<int32_t> ids = tok.encode(text, maxLen);
  if (ids.size() < 2 || ids.size() > static_cast<size_t>(maxLen))
    violated("encode length outside [2, maxLen]");
  if (ids.front() != o.clsId || ids.back() != o.sepId)
    violated("encode is not [CLS] ... [SEP]");
  const size_t inner = ids.size() - 2;
  if (inner != std::min(pieces.size(), static_cast<size_t>(maxLen - 2)))
    violated("encode and tokenize disagree on the number of pieces");
  for (size_t i = 0; i < inner; ++i) {
    const int32_t id = ids[i + 1];
    if (id < 0 || static_cast<size_t>(id) >= vocab.size())
      violated("id outside the vocabulary");
    if (vocab[id] != pieces[i])
      violated("encode's id is not tokenize's piece");
  }
  return 0;
}
