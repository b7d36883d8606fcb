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
#include "tests/support/RecordedReference.h"
#include "tests/support/TinyModel.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace encc::testing;
using nlohmann::json;

namespace {

json readJson(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  return json::parse(in);
}

/// The recorded case's tokenizer.json: the base file with its edits, no
/// truncation or padding, the recorded added tokens appended.
json tokenizerJson(const json &c) {
  const std::string file = c["file"];
  json j = readJson(file == "minilm" ? minilmDir() + "/tokenizer.json"
                                     : referenceDataDir() + "/../tokenizer/" + file);
  j["truncation"] = nullptr;
  j["padding"] = nullptr;
  for (const auto &[key, value] : c["edits"].items())
    j["normalizer"][key] = value;
  for (const json &a : c["added_tokens"])
    j["added_tokens"].push_back(a);
  return j;
}

int64_t vocabularySize(const json &tj) {
  int64_t top = 0;
  if (tj["model"]["vocab"].is_object())
    for (const auto &[piece, id] : tj["model"]["vocab"].items())
      top = std::max<int64_t>(top, id.get<int64_t>());
  else
    top = static_cast<int64_t>(tj["model"]["vocab"].size()) - 1;
  for (const json &a : tj["added_tokens"])
    top = std::max<int64_t>(top, a["id"].get<int64_t>());
  return top + 1;
}

TEST(AddedTokens, EveryFlagInEveryPositionMatchesTheTokenizersLibrary) {
  const json rec = readJson(referenceDataDir() + "/../tokenizer/added_tokens.json");
  ASSERT_EQ(rec["cases"].size(), 6u);
  for (const json &c : rec["cases"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    TempDir dir;
    const json tj = tokenizerJson(c);
    const std::string model = dir.path() + "/m";
    TinyModelSpec spec = tinyModelSpecFromFlags({"--model-type", c["model_type"], "--hidden", "8", "--heads", "2",
                                                 "--intermediate", "16", "--layers", "1", "--max-positions", "520",
                                                 "--vocab", std::to_string(vocabularySize(tj))});
    writeTinyModel(model, spec);
    std::filesystem::remove(model + "/vocab.txt");
    std::ofstream(model + "/tokenizer.json") << tj.dump();
    if (!c["tokenizer_config"].is_null()) // the cased WordPiece: transformers and encc read do_lower_case here
      std::ofstream(model + "/tokenizer_config.json") << c["tokenizer_config"].dump();
    const std::string artifact = dir.path() + "/m.encm";
    ASSERT_EQ(compile(model, artifact, 512), "");
    encrt::Model m(artifact);
    size_t differ = 0, ids = 0;
    for (size_t i = 0; i < c["texts"].size(); ++i) {
      const std::string text = c["texts"][i];
      const std::vector<int32_t> want = c["ids"][i].get<std::vector<int32_t>>();
      const std::vector<int32_t> got = m.tokenize(text);
      ids += want.size();
      if (got != want && ++differ <= 3)
        ADD_FAILURE() << json(text).dump() << "\n  encrt      " << json(got).dump() << "\n  tokenizers "
                      << json(want).dump();
    }
    std::printf("[ measured ] %s: %zu added tokens, %zu texts, %zu ids, %zu differ\n", name.c_str(),
                c["added_tokens"].size(), c["texts"].size(), ids, differ);
    EXPECT_EQ(differ, 0u);
  }
}

} // namespace
