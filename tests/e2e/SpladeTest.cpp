//===- SpladeTest.cpp - SPLADE (splade pooling) end to end ----------------===//
//
// tests/reference/splade/splade.json (record_splade.py beside it):
// sentence-transformers 5.7's SparseEncoder (MLMTransformer + SpladePooling,
// max of log(1 + relu(logits))) in float64 on a tiny random BertForMaskedLM
// saved as a SparseEncoder folder. The fp32 build: the runtime's ids equal
// the recorded tokenizer's, and every text's vocabulary-wide vector within
// 1e-5 (max |err| / max |ref|) of SparseEncoder.encode's, with the same
// non-zero entries; int8 and bf16 builds: cosine to the reference and the
// non-zero entries (measured, gated).
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/e2e/RecordedBatch.h"
#include "tests/support/RecordedReference.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

using namespace encc::testing;
using nlohmann::json;

namespace {

const json &splade() { return recordedCase("splade/splade.json", "bert_mlm"); }

/// The recorded sparse vectors as dense rows of the vocabulary's width.
json denseReference(const json &c) {
  const size_t V = c["vocab_size"].get<size_t>();
  json rows = json::array();
  for (const json &entries : c["sparse"]) {
    std::vector<double> row(V, 0.0);
    for (const json &e : entries)
      row.at(e[0].get<size_t>()) = e[1].get<double>();
    rows.push_back(row);
  }
  return rows;
}

std::string compileSplade(const TempDir &tmp, const std::string &quantize) {
  encc::CompileOptions o;
  o.modelDir = referenceDataDir() + "/splade/" + splade()["dir"].get<std::string>();
  o.output = tmp.path() + "/" + quantize + ".encm";
  o.quantize = quantize;
  const std::string err = compile(o);
  return err.empty() ? o.output : "error: " + err;
}

TEST(Splade, MatchesSparseEncoderOnTexts) {
  const json &c = splade();
  TempDir tmp;
  const std::string artifact = compileSplade(tmp, "none");
  ASSERT_EQ(artifact.rfind("error: ", 0), std::string::npos) << artifact;
  encrt::Model m(artifact);
  EXPECT_STREQ(m.info().pooling, "splade");
  EXPECT_EQ(m.info().embedding_dim, c["vocab_size"].get<int64_t>());
  EXPECT_FALSE(m.info().normalize);
  const json t = {{"texts", c["texts"]}, {"ids", c["ids"]}, {"pooled", denseReference(c)}};
  const std::vector<std::string> texts = expectRecordedTexts(m, t, 1e-5, "bert_mlm");

  // The same entries are non-zero (relu's zeros are exact on both sides).
  const std::vector<float> got = encrt::Session(m).embed(texts);
  const size_t V = c["vocab_size"].get<size_t>();
  for (size_t i = 0; i < texts.size(); ++i) {
    size_t nonZero = 0;
    for (size_t k = 0; k < V; ++k)
      nonZero += got[i * V + k] != 0.0f;
    EXPECT_EQ(nonZero, c["sparse"][i].size()) << texts[i];
    for (const json &e : c["sparse"][i])
      EXPECT_GT(got[i * V + e[0].get<size_t>()], 0.0f) << texts[i] << " entry " << e[0];
  }
}

TEST(Splade, Int8AndBf16AgainstSparseEncoder) {
  const json &c = splade();
  const json ref = denseReference(c);
  const size_t V = c["vocab_size"].get<size_t>();
  TempDir tmp;
  for (const char *quantize : {"int8", "bf16"}) {
    const std::string artifact = compileSplade(tmp, quantize);
    ASSERT_EQ(artifact.rfind("error: ", 0), std::string::npos) << artifact;
    encrt::Model m(artifact);
    std::vector<std::string> texts;
    for (const json &s : c["texts"])
      texts.push_back(s.get<std::string>());
    const std::vector<float> got = encrt::Session(m).embed(texts);
    double worst = 1;
    for (size_t i = 0; i < texts.size(); ++i) {
      double dot = 0, a = 0, b = 0;
      for (size_t k = 0; k < V; ++k) {
        const double r = ref[i][k].get<double>(), g = got[i * V + k];
        dot += r * g, a += r * r, b += g * g;
      }
      worst = std::min(worst, dot / std::sqrt(a * b));
    }
    std::printf("[ measured ] splade %s (%s): worst cosine to SparseEncoder %.6f\n", quantize, m.info().cpu_target,
                worst);
    EXPECT_GE(worst, std::string(quantize) == "int8" ? 0.999 : 0.9999) << quantize;
  }
}

} // namespace
