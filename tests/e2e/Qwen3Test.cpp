//===- Qwen3Test.cpp - Qwen3 (Qwen3-Embedding) end to end vs transformers -===//
//
// tests/reference/qwen3/qwen3.json (record_qwen3.py beside it): transformers
// 5.x's Qwen3Model in float64 on three tiny random folders (models/):
// grouped key/value heads with head_dim independent of hidden / heads
// (4 over 2 heads of 24 on hidden 64), the hub's legacy config keys with
// q/k/v/o biases and one key/value head per query head, sliding-window
// layers (window 7, causal) with one key/value head for six query heads;
// last-token pooling + Normalize and mean pooling; a fourth with a Qwen2-style
// tokenizer.json. Every layer is causal with
// per-head q/k RMSNorms, rotary positions and a SwiGLU feed-forward. The
// padded and the packed plan's valid hidden rows and pooled outputs: max
// |err| / max |ref| <= 1e-5 on a batch of lengths 37, 5, 20, 1, 30 (the
// packed plan's last-token pooling reads each sequence's own last row).
// Qwen3-Embedding-0.6B's dims (hidden 1024, 16 query heads over 8 key/value
// heads of 128, intermediate 3072; 4 of its 28 layers, a 4096-token
// vocabulary) with encc::randomWeights(config, 9) as the weights
// (tests/reference/qwen3/base): fp32 within 1e-5 relative on rows across a
// batch of 300, 77 and 12 tokens and on the last-token pooled output; the
// int8 and bf16 builds against the fp32 build with the gates ModernBERT's
// base test uses (int8: mean token cosine >= 0.99, min >= 0.98; bf16: min
// >= 0.9999) and pooled cosines (int8 >= 0.99, bf16 >= 0.9999).
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/e2e/RandomWeightsFolder.h"
#include "tests/e2e/RecordedBatch.h"
#include "tests/support/RecordedReference.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>

using namespace encc::testing;
using nlohmann::json;

namespace {

constexpr double kTolerance = 1e-5;

const json &findCase(const std::string &name) { return recordedCase("qwen3/qwen3.json", name); }

class Qwen3Tiny : public ::testing::TestWithParam<const char *> {};

TEST_P(Qwen3Tiny, MatchesTransformersPaddedAndPacked) {
  const json &c = findCase(GetParam());
  expectMatchesRecordedBatch(c, referenceDataDir() + "/qwen3/" + c["dir"].get<std::string>(), kTolerance, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Recorded, Qwen3Tiny,
                         ::testing::Values("gqa_last", "legacy_bias_mean", "sliding_mqa", "text_last"));

// text_last carries a Qwen2-style tokenizer.json (NFC, the Split regex before
// a ByteLevel without its own, $A <|endoftext|>): the runtime's ids are the
// `tokenizers` library's, and the last-token embeddings of texts (the
// appended <|endoftext|>'s state) transformers'.
TEST(Qwen3Text, TokenizerAndTextEmbeddingsMatchTheLibraries) {
  const json &c = findCase("text_last");
  const json &t = c["texts"];
  TempDir tmp;
  const std::string artifact = tmp.path() + "/m.encm";
  ASSERT_EQ(compile(referenceDataDir() + "/qwen3/" + c["dir"].get<std::string>(), artifact), "");
  encrt::Model m(artifact);
  const std::vector<std::string> texts = expectRecordedTexts(m, t, kTolerance, "text_last");

  // Prompts (config_sentence_transformers.json: Qwen3-Embedding's query
  // instruction, an empty document prompt, no default): the artifact lists
  // them, and embedding with each equals sentence-transformers' own
  // encode(prompt_name=...) (none: the texts as they are).
  const std::vector<encrt::Model::Prompt> prompts = m.prompts();
  ASSERT_EQ(prompts.size(), 2u);
  EXPECT_EQ(prompts[0].name, "query");
  EXPECT_EQ(prompts[0].text, c["prompts"]["prompts"]["query"].get<std::string>());
  EXPECT_FALSE(prompts[0].isDefault || prompts[1].isDefault);
  encrt::Session session(m);
  for (const char *name : {"", "query", "document"}) {
    const std::vector<float> got = session.embed(texts, name);
    std::vector<double> ref;
    for (const json &row : c["prompts"]["encode"][name])
      for (const json &v : row)
        ref.push_back(v.get<double>());
    const double e = maxRelativeError(std::vector<double>(got.begin(), got.end()), ref);
    std::printf("[ measured ] text_last, prompt '%s': embeddings %.2e vs sentence-transformers\n", name, e);
    EXPECT_LE(e, kTolerance) << name;
  }
  try {
    session.embed(texts, "passage");
    ADD_FAILURE() << "an unknown prompt name was accepted";
  } catch (const encrt::Error &e) {
    EXPECT_NE(std::string(e.what()).find("no prompt named 'passage' (the model's prompts: query, document)"),
              std::string::npos)
        << e.what();
  }
}

/// The cosine of two vectors of n floats.
double cosine(const float *a, const float *b, int64_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < n; ++i)
    ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
  return ab / std::sqrt(aa * bb);
}

TEST(Qwen3Base, MatchesTransformersAndQuantizedBuildsMeetTheGates) {
  const json &c = findCase("base_mixed");
  TempDir tmp;
  const std::string dir = tmp.path() + "/qwen3-base";
  writeRandomWeightsFolder(referenceDataDir() + "/qwen3/base/config.json", c["seed"].get<uint64_t>(), dir);
  const std::vector<int32_t> lengths = c["lengths"].get<std::vector<int32_t>>();
  std::vector<int32_t> ids;
  int64_t seq = 0;
  for (const json &row : c["ids"]) {
    seq = static_cast<int64_t>(row.size());
    for (const json &v : row)
      ids.push_back(v.get<int32_t>());
  }
  auto build = [&](const std::string &quantize) {
    encc::CompileOptions o;
    o.modelDir = dir;
    o.output = tmp.path() + "/" + quantize + ".encm";
    o.quantize = quantize;
    o.maxSeq = 512;
    o.pooling = encc::Pooling::Last;
    EXPECT_EQ(compile(o), "") << quantize;
    return o.output;
  };
  encrt::Model m(build("none"));
  const int64_t H = m.info().hidden_size;
  const encrt::RunResult rf = encrt::Session(m).run(ids, lengths, seq);
  std::vector<double> got, want, wantPooled;
  for (size_t b = 0; b < lengths.size(); ++b)
    for (size_t k = 0; k < c["rows"][b].size(); ++k) {
      const auto row = rf.hidden.begin() + (b * seq + c["rows"][b][k].get<int64_t>()) * H;
      got.insert(got.end(), row, row + H);
      for (const json &v : c["hidden_rows"][b][k])
        want.push_back(v.get<double>());
    }
  for (const json &row : c["pooled"])
    for (const json &v : row)
      wantPooled.push_back(v.get<double>());
  const double err = maxRelativeError(got, want);
  const double pooledErr = maxRelativeError(std::vector<double>(rf.pooled.begin(), rf.pooled.end()), wantPooled);
  std::printf("[ measured ] Qwen3 0.6B dims x 4 layers, lengths 300/77/12: hidden %.2e, pooled %.2e\n", err,
              pooledErr);
  EXPECT_LE(err, kTolerance);
  EXPECT_LE(pooledErr, kTolerance);

  for (const char *quantize : {"int8", "bf16"}) {
    encrt::Model mq(build(quantize));
    const encrt::RunResult rq = encrt::Session(mq).run(ids, lengths, seq);
    const TokenCosines cs = tokenCosines(rq.hidden, rf.hidden, lengths, seq, H);
    double pooledMin = 1;
    for (size_t b = 0; b < lengths.size(); ++b)
      pooledMin = std::min(pooledMin, cosine(rq.pooled.data() + b * H, rf.pooled.data() + b * H, H));
    std::printf("[ measured ] %s (%s) vs fp32: mean token cosine %.6f, min %.6f, pooled min %.6f\n", quantize,
                mq.info().cpu_target, cs.mean, cs.min, pooledMin);
    const bool int8 = std::string(quantize) == "int8";
    EXPECT_GE(cs.mean, int8 ? 0.99 : 0.9999);
    EXPECT_GE(cs.min, int8 ? 0.98 : 0.9999);
    EXPECT_GE(pooledMin, int8 ? 0.99 : 0.9999);
  }
}

} // namespace
