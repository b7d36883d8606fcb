//===- TokenizerJsonModel.cpp - A tiny model carrying a given tokenizer.json ===//
#include "tests/e2e/TokenizerJsonModel.h"
#include "tests/e2e/E2ETest.h"
#include "tests/support/TinyModel.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

using nlohmann::json;

json encc::testing::readJsonFile(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  return json::parse(in);
}

namespace {

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

} // namespace

std::string encc::testing::compileWithTokenizerJson(const std::string &dir, const json &tokenizerJson,
                                                    const std::string &modelType, const json &tokenizerConfig) {
  const std::string model = dir + "/m";
  TinyModelSpec spec = tinyModelSpecFromFlags({"--model-type", modelType, "--hidden", "8", "--heads", "2",
                                               "--intermediate", "16", "--layers", "1", "--max-positions", "520",
                                               "--vocab", std::to_string(vocabularySize(tokenizerJson))});
  writeTinyModel(model, spec);
  std::filesystem::remove(model + "/vocab.txt");
  std::ofstream(model + "/tokenizer.json") << tokenizerJson.dump();
  if (!tokenizerConfig.is_null())
    std::ofstream(model + "/tokenizer_config.json") << tokenizerConfig.dump();
  const std::string artifact = dir + "/m.encm";
  const std::string error = compile(model, artifact, 512);
  EXPECT_EQ(error, "");
  return error.empty() ? artifact : "";
}

size_t encc::testing::expectRecordedIds(encrt::Model &model, const json &texts, const json &ids,
                                        const std::string &name) {
  size_t differ = 0, count = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string text = texts[i];
    const std::vector<int32_t> want = ids[i].get<std::vector<int32_t>>();
    const std::vector<int32_t> got = model.tokenize(text);
    count += want.size();
    if (got != want && ++differ <= 3)
      ADD_FAILURE() << name << ": " << json(text).dump() << "\n  encrt      " << json(got).dump()
                    << "\n  tokenizers " << json(want).dump();
  }
  std::printf("[ measured ] %s: %zu texts, %zu ids, %zu differ\n", name.c_str(), texts.size(), count, differ);
  return differ;
}
