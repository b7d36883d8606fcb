//===- Gemma3Test.cpp - Gemma 3 text models (EmbeddingGemma) vs transformers ===//
//
// tests/reference/gemma3/gemma3.json (record_gemma3.py beside it):
// transformers 5.x's Gemma3TextModel in float64 on two tiny random folders:
// EmbeddingGemma's structure (bidirectional attention, sliding layers seeing
// sliding_window // 2 keys either side, 4 query heads over 1 key/value head
// of 32, query_pre_attn_scalar 24, tanh GeGLU, 5.x rope_parameters, mean
// pooling + Normalize) and a causal Gemma 3 (the hub's legacy rope keys,
// q/k/v/o biases, erf GeGLU, last-token pooling). Every RMSNorm scales by
// 1 + weight, the word embeddings by sqrt(hidden). The padded and the
// packed plan's valid hidden rows and pooled outputs: max |err| / max |ref|
// <= 1e-5 on a batch of lengths 37, 5, 20, 1, 30. A third folder carries a
// Gemma-style tokenizer (Gemma3Text).
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/e2e/RecordedBatch.h"
#include "tests/support/RecordedReference.h"

#include <nlohmann/json.hpp>

#include <fstream>

using namespace encc::testing;
using nlohmann::json;

namespace {

const json &findCase(const std::string &name) { return recordedCase("gemma3/gemma3.json", name); }

class Gemma3Tiny : public ::testing::TestWithParam<const char *> {};

TEST_P(Gemma3Tiny, MatchesTransformersPaddedAndPacked) {
  const json &c = findCase(GetParam());
  expectMatchesRecordedBatch(c, referenceDataDir() + "/gemma3/" + c["dir"].get<std::string>(), 1e-5, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Recorded, Gemma3Tiny, ::testing::Values("bidirectional_mean", "causal_last", "text_mean"));

// text_mean carries EmbeddingGemma's kind of tokenizer.json (issue 37, item
// 4: SentencePiece BPE on characters with byte fallback, Replace " " -> "▁",
// a Split after spaces, <bos> $A <eos>; tests/tokenizer/spbpe): the
// runtime's ids are the `tokenizers` library's, and the texts' embeddings
// (mean, Dense, Normalize) transformers'. Before, encc compiled such a
// folder without a tokenizer (it ran on ids only).
TEST(Gemma3Text, TokenizerAndTextEmbeddingsMatchTheLibraries) {
  const json &c = findCase("text_mean");
  TempDir tmp;
  const std::string artifact = tmp.path() + "/m.encm";
  ASSERT_EQ(compile(referenceDataDir() + "/gemma3/" + c["dir"].get<std::string>(), artifact), "");
  encrt::Model m(artifact);
  expectRecordedTexts(m, c["texts"], 1e-5, "text_mean");
}

} // namespace
