//===- ByteLevelVocab.h - Small byte-level BPE vocabularies for tests ------===//
//
// <s>, </s>, the 256 symbols of the GPT-2 byte alphabet, then for each word
// the merges that spell it left to right (and the vocabulary entries they
// make), so that a test or fuzzer can build a BytePairTokenizer whose pieces
// show exactly where the pre-tokenizer cut.
//
//===----------------------------------------------------------------------===//
#ifndef ENCC_TESTS_TOKENIZER_BYTELEVELVOCAB_H
#define ENCC_TESTS_TOKENIZER_BYTELEVELVOCAB_H

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace encc::testing {

struct ByteLevelVocab {
  std::vector<std::string> vocab = {"<s>", "</s>"};
  std::vector<std::pair<int32_t, int32_t>> merges;
};

/// The GPT-2 byte alphabet's symbol for byte b, as UTF-8.
inline std::string byteSymbol(unsigned b) {
  auto printable = [](unsigned x) { return (x >= '!' && x <= '~') || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE; };
  unsigned n = 0;
  for (unsigned x = 0; x < b; ++x)
    n += !printable(x);
  const char32_t cp = printable(b) ? b : 0x100 + n;
  if (cp < 0x80)
    return std::string(1, static_cast<char>(cp));
  return {static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))};
}

/// Merges spelling each of `words` (raw bytes; a leading space becomes the
/// space's symbol), in order: the earlier words' merges rank first.
inline ByteLevelVocab byteLevelVocab(const std::vector<std::string> &words) {
  ByteLevelVocab d;
  std::unordered_map<std::string, int32_t> ids;
  auto add = [&](const std::string &t) {
    auto [it, inserted] = ids.emplace(t, static_cast<int32_t>(d.vocab.size()));
    if (inserted)
      d.vocab.push_back(t);
    return it->second;
  };
  for (unsigned b = 0; b < 256; ++b)
    add(byteSymbol(b));
  for (const std::string &word : words) {
    std::string prefix;
    for (unsigned char c : word) {
      const std::string sym = byteSymbol(c);
      if (!prefix.empty()) {
        d.merges.emplace_back(ids.at(prefix), ids.at(sym));
        add(prefix + sym);
      }
      prefix += sym;
    }
  }
  return d;
}

} // namespace encc::testing

#endif // ENCC_TESTS_TOKENIZER_BYTELEVELVOCAB_H
