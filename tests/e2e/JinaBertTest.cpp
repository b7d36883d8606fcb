//===- JinaBertTest.cpp - JinaBERT (ALiBi, GeGLU) end to end --------------===//
//
// tests/reference/jina/jina.json (record_jina.py beside it): a float64 NumPy
// JinaBERT written from the published model definition (no library ships it)
// on two tiny folders: three heads (ALiBi's slopes for a head count that is
// not a power of two), mean + Normalize; four heads under the masked-LM
// checkpoint's "bert." prefix, cls pooling, a 300-token sequence (several key
// tiles). fp32 packed and padded plans: valid hidden rows and pooled outputs
// within 1e-5 (max |err| / max |ref|); texts through the WordPiece tokenizer
// (ids equal to the `tokenizers` library's) within 1e-5; int8 and bf16 builds
// against the fp32 build (int8: MiniLM's gates; bf16: see below).
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/e2e/RecordedBatch.h"
#include "tests/support/RecordedReference.h"

#include <nlohmann/json.hpp>

#include <cstdio>

using namespace encc::testing;
using nlohmann::json;

namespace {

constexpr double kTolerance = 1e-5;

const json &findCase(const std::string &name) { return recordedCase("jina/jina.json", name); }

std::string folderOf(const json &c) { return referenceDataDir() + "/jina/" + c["dir"].get<std::string>(); }

class JinaBertTiny : public ::testing::TestWithParam<const char *> {};

TEST_P(JinaBertTiny, MatchesTheFloat64ReferencePaddedAndPacked) {
  const json &c = findCase(GetParam());
  expectMatchesRecordedBatch(c, folderOf(c), kTolerance, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Recorded, JinaBertTiny, ::testing::Values("heads3_mean", "heads4_cls_prefixed"));

TEST(JinaBertText, TokenizerAndTextEmbeddingsMatchTheReference) {
  const json &c = findCase("heads3_mean");
  TempDir tmp;
  const std::string artifact = tmp.path() + "/m.encm";
  ASSERT_EQ(compile(folderOf(c), artifact), "");
  encrt::Model m(artifact);
  expectRecordedTexts(m, c["texts"], kTolerance, "heads3_mean");
}

TEST(JinaBertPrecision, Int8AndBf16AgainstFp32) {
  const json &c = findCase("heads4_cls_prefixed");
  std::vector<int32_t> ids, lengths;
  int64_t seq = 0;
  for (const json &row : c["ids"]) {
    seq = static_cast<int64_t>(row.size());
    for (const json &v : row)
      ids.push_back(v.get<int32_t>());
  }
  for (const json &n : c["lengths"])
    lengths.push_back(n.get<int32_t>());
  TempDir tmp;
  std::vector<float> fp32Hidden;
  for (const char *quantize : {"none", "int8", "bf16"}) {
    encc::CompileOptions o;
    o.modelDir = folderOf(c);
    o.output = tmp.path() + "/" + quantize + ".encm";
    o.quantize = quantize;
    ASSERT_EQ(compile(o), "") << quantize;
    encrt::Model m(o.output);
    const encrt::RunResult r = encrt::Session(m).run(ids, lengths, seq);
    if (fp32Hidden.empty()) {
      fp32Hidden = r.hidden;
      continue;
    }
    const TokenCosines cs = tokenCosines(r.hidden, fp32Hidden, lengths, seq, m.info().hidden_size);
    std::printf("[ measured ] %s (%s) vs fp32: mean token cosine %.6f, min %.6f\n", quantize, m.info().cpu_target,
                cs.mean, cs.min);
    if (std::string(quantize) == "int8") {
      EXPECT_GE(cs.mean, 0.99);
      EXPECT_GE(cs.min, 0.98);
    } else {
      // These tiny folders' O(1) random weights amplify bf16's rounding
      // (measured min 0.99953 on the AMX Xeon); trained models meet 0.9999
      // (ModernBertBase, Qwen3Base). The bf16 build with ALiBi left out: min 0.757.
      EXPECT_GE(cs.mean, 0.9999);
      EXPECT_GE(cs.min, 0.999);
    }
  }
}

} // namespace
