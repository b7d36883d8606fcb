//===- LlamaTest.cpp - Llama, Mistral and Qwen2 end to end vs transformers -===//
//
// tests/reference/llama/llama.json (record_llama.py beside it): transformers
// 5.x's LlamaModel, MistralModel and Qwen2Model in float64 on tiny random
// folders (models/): Llama with grouped key/value heads of head_dim 24 on
// hidden 64 and q/k/v/o biases; Mistral with a sliding window of 7 on every
// layer and one key/value head for six query heads; Qwen2 with q/k/v biases
// (none on o) and sliding-window layers from layer 1 on; last-token pooling
// + Normalize and mean pooling. The padded and the packed plan's valid
// hidden rows and pooled outputs: max |err| / max |ref| <= 1e-5 on a batch of
// lengths 37, 5, 20, 1, 30. A fourth, Mistral with the non-legacy Llama /
// Mistral tokenizer.json (Metaspace as the pre-tokenizer): the runtime's ids
// are the `tokenizers` library's, and the texts' embeddings transformers'.
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/e2e/RecordedBatch.h"
#include "tests/support/RecordedReference.h"

#include <nlohmann/json.hpp>

using namespace encc::testing;
using nlohmann::json;

namespace {

constexpr double kTolerance = 1e-5;

const json &findCase(const std::string &name) { return recordedCase("llama/llama.json", name); }

class LlamaStyleTiny : public ::testing::TestWithParam<const char *> {};

TEST_P(LlamaStyleTiny, MatchesTransformersPaddedAndPacked) {
  const json &c = findCase(GetParam());
  expectMatchesRecordedBatch(c, referenceDataDir() + "/llama/" + c["dir"].get<std::string>(), kTolerance, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Recorded, LlamaStyleTiny,
                         ::testing::Values("llama_gqa_bias_last", "mistral_sliding_mean", "qwen2_bias_sliding_last",
                                           "mistral_text"));

TEST(MistralText, TokenizerAndTextEmbeddingsMatchTheLibraries) {
  const json &c = findCase("mistral_text");
  TempDir tmp;
  const std::string artifact = tmp.path() + "/m.encm";
  ASSERT_EQ(compile(referenceDataDir() + "/llama/" + c["dir"].get<std::string>(), artifact), "");
  encrt::Model m(artifact);
  expectRecordedTexts(m, c["texts"], kTolerance, "mistral_text");
}

} // namespace
