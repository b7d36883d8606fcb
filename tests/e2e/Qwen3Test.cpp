//===- Qwen3Test.cpp - Qwen3 (Qwen3-Embedding) end to end vs transformers -===//
//
// tests/reference/qwen3/qwen3.json (record_qwen3.py beside it): transformers
// 5.x's Qwen3Model in float64 on three tiny random folders (models/):
// grouped key/value heads with head_dim independent of hidden / heads
// (4 over 2 heads of 24 on hidden 64), the hub's legacy config keys with
// q/k/v/o biases and one key/value head per query head, sliding-window
// layers (window 7, causal) with one key/value head for six query heads;
// last-token pooling + Normalize and mean pooling. Every layer is causal with
// per-head q/k RMSNorms, rotary positions and a SwiGLU feed-forward. The
// padded and the packed plan's valid hidden rows and pooled outputs: max
// |err| / max |ref| <= 1e-5 on a batch of lengths 37, 5, 20, 1, 30 (the
// packed plan's last-token pooling reads each sequence's own last row).
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/support/RecordedReference.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

using namespace encc::testing;
using nlohmann::json;

namespace {

constexpr double kTolerance = 1e-5;

const json &findCase(const std::string &name) {
  static const json j = [] {
    std::ifstream in(referenceDataDir() + "/qwen3/qwen3.json");
    return json::parse(in);
  }();
  for (const json &c : j["cases"])
    if (c["name"] == name)
      return c;
  throw std::runtime_error("qwen3.json has no case " + name);
}

class Qwen3Tiny : public ::testing::TestWithParam<const char *> {};

TEST_P(Qwen3Tiny, MatchesTransformersPaddedAndPacked) {
  const json &c = findCase(GetParam());
  std::vector<int32_t> ids, lengths = c["lengths"].get<std::vector<int32_t>>();
  int64_t seq = 0;
  for (const json &row : c["ids"]) {
    seq = static_cast<int64_t>(row.size());
    for (const json &v : row)
      ids.push_back(v.get<int32_t>());
  }
  std::vector<double> wantHidden, wantPooled;
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int32_t s = 0; s < lengths[b]; ++s)
      for (const json &v : c["hidden"][b][s])
        wantHidden.push_back(v.get<double>());
  for (const json &row : c["pooled"])
    for (const json &v : row)
      wantPooled.push_back(v.get<double>());
  TempDir dir;
  for (bool packed : {true, false}) {
    encc::CompileOptions o;
    o.modelDir = referenceDataDir() + "/qwen3/" + c["dir"].get<std::string>();
    o.output = dir.path() + (packed ? "/packed.encm" : "/padded.encm");
    o.allowPackedPlan = packed;
    ASSERT_EQ(compile(o), "");
    encrt::Model m(o.output);
    const int64_t H = m.info().hidden_size;
    const encrt::RunResult r = encrt::Session(m).run(ids, lengths, seq);
    std::vector<double> hidden;
    for (size_t b = 0; b < lengths.size(); ++b)
      hidden.insert(hidden.end(), r.hidden.begin() + b * seq * H, r.hidden.begin() + (b * seq + lengths[b]) * H);
    const double hiddenErr = maxRelativeError(hidden, wantHidden);
    const double pooledErr = maxRelativeError(std::vector<double>(r.pooled.begin(), r.pooled.end()), wantPooled);
    std::printf("[ measured ] %s (%s plan): hidden %.2e, pooled %.2e (max |err| / max |ref|)\n", GetParam(),
                packed ? "packed" : "padded", hiddenErr, pooledErr);
    EXPECT_LE(hiddenErr, kTolerance);
    EXPECT_LE(pooledErr, kTolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(Recorded, Qwen3Tiny, ::testing::Values("gqa_last", "legacy_bias_mean", "sliding_mqa"));

} // namespace
