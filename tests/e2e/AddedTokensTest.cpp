//===- AddedTokensTest.cpp - Added tokens of every flag, through encc -----===//
//
// Issue 41, item 3: an added token with normalized: true is matched as the
// tokenizer's normalizer leaves its content ("COVID19" added to an uncased
// BERT is found in "covid19" and "COVID19"; the `tokenizers` library
// normalises the content when it builds its matcher); encc matched the raw
// content, which a lowercasing, accent-stripping or NFKC normalizer never
// produces: 44 of 3 407 WordPiece and 43 of 3 491 Unigram strings differed.
// The sweep: six base tokenizers (WordPiece uncased and cased, byte-level BPE
// plain, with NFC, with NFC + Qwen2's Split, Unigram with an NFKC charsmap),
// each with the same added tokens under every combination of normalized /
// special / lstrip / rstrip, their contents ones the normalizers change or
// erase, and ~1 800 texts holding those and the base's special tokens in
// every position; the tokenizer.json is compiled by encc into a tiny model's
// artifact and the runtime's ids must equal the library's
// (tests/tokenizer/added_tokens.json, record_added_tokens.py).
//
//===----------------------------------------------------------------------===//
#include "tests/e2e/E2ETest.h"
#include "tests/e2e/TokenizerJsonModel.h"
#include "tests/support/RecordedReference.h"

#include <nlohmann/json.hpp>

#include <cstdio>

using namespace encc::testing;
using nlohmann::json;

namespace {

/// The recorded case's tokenizer.json: the base file with its edits, no
/// truncation or padding, the recorded added tokens appended.
json tokenizerJson(const json &c) {
  const std::string file = c["file"];
  json j = readJsonFile(file == "minilm" ? minilmDir() + "/tokenizer.json"
                                         : referenceDataDir() + "/../tokenizer/" + file);
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  for (const auto &[key, value] : c["edits"].items())
    j["normalizer"][key] = value;
  for (const json &a : c["added_tokens"])
    j["added_tokens"].push_back(a);
  return j;
}

TEST(AddedTokens, EveryFlagInEveryPositionMatchesTheTokenizersLibrary) {
  const json rec = readJsonFile(referenceDataDir() + "/../tokenizer/added_tokens.json");
  ASSERT_EQ(rec["cases"].size(), 6u);
  for (const json &c : rec["cases"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    TempDir dir;
    // The cased WordPiece: transformers and encc read do_lower_case from tokenizer_config.json.
    const std::string artifact = compileWithTokenizerJson(dir.path(), tokenizerJson(c), c["model_type"],
                                                          c["tokenizer_config"]);
    ASSERT_NE(artifact, "");
    encrt::Model m(artifact);
    std::printf("[ measured ] %s: %zu added tokens\n", name.c_str(), c["added_tokens"].size());
    EXPECT_EQ(expectRecordedIds(m, c["texts"], c["ids"], name), 0u);
  }
}

} // namespace
