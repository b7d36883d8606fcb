//===- SpecialIdsTest.cpp - Literal special ids inside texts, every family -===//
//
// Issue 41, item 2 and its sweep: a text can hold a special token literally
// ("hello <pad> world"), and families number positions differently around
// its id. RoBERTa, XLM-R, CamemBERT and MPNet skip pad ids (transformers'
// create_position_ids_from_input_ids); encc numbered them in sequence (0.942
// cosine on all-mpnet-base-v2). Every family (BERT, DistilBERT, RoBERTa,
// XLM-R, CamemBERT, MPNet, ModernBERT, Qwen3, Gemma 3; causal and sliding
// variants) on a batch whose rows hold each of its special ids first, in the
// middle, last and doubled, against transformers' hidden states
// (tests/reference/special_ids.json, record_special_ids.py): max |err| /
// max |ref| <= 1e-5, the packed and the padded plan.
//
//===----------------------------------------------------------------------===//
#include "tests/e2e/E2ETest.h"
#include "tests/e2e/RecordedBatch.h"
#include "tests/support/RecordedReference.h"
#include "tests/support/TinyModel.h"

#include <nlohmann/json.hpp>

#include <fstream>

using namespace encc::testing;

namespace {

TEST(SpecialIds, InsideTextsMatchTransformersInEveryFamily) {
  std::ifstream in(referenceDataDir() + "/special_ids.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j["cases"].size(), 12u);
  for (const nlohmann::json &c : j["cases"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    TempDir dir;
    std::string modelDir;
    if (c.contains("flags")) {
      modelDir = dir.path() + "/m";
      writeTinyModel(modelDir, tinyModelSpecFromFlags(c["flags"]));
      if (c.contains("model_type")) { // CamemBERT: RoBERTa's layout under its own model type
        nlohmann::json config = nlohmann::json::parse(std::ifstream(modelDir + "/config.json"));
        config["model_type"] = c["model_type"];
        std::ofstream(modelDir + "/config.json") << config.dump();
      }
    } else {
      modelDir = referenceDataDir() + "/" + c["dir"].get<std::string>();
    }
    expectMatchesRecordedBatch(c, modelDir, 1e-5, name);
  }
}

} // namespace
