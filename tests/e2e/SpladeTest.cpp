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

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

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

// encrt_session_embed_sparse: each text's heaviest entries as sentence-transformers'
// max_active_dims keeps them (top k by weight), and those above a threshold; the
// arguments' errors.
TEST(Splade, SparseOutputKeepsTheHeaviestEntries) {
  const json &c = splade();
  const json ref = denseReference(c);
  const size_t V = c["vocab_size"].get<size_t>();
  TempDir tmp;
  const std::string artifact = compileSplade(tmp, "none");
  ASSERT_EQ(artifact.rfind("error: ", 0), std::string::npos) << artifact;
  encrt::Model m(artifact);
  encrt::Session session(m);
  std::vector<std::string> texts;
  for (const json &s : c["texts"])
    texts.push_back(s.get<std::string>());
  const std::vector<float> dense = session.embed(texts);
  constexpr int32_t kTop = 6;
  const std::vector<encrt::SparseEmbedding> top = session.embedSparse(texts, kTop);
  ASSERT_EQ(top.size(), texts.size());
  size_t comparedWithReference = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    SCOPED_TRACE(texts[i]);
    // The reference's order: weight descending (float64).
    std::vector<size_t> order;
    for (size_t k = 0; k < V; ++k)
      if (ref[i][k].get<double>() > 0)
        order.push_back(k);
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return ref[i][a].get<double>() > ref[i][b].get<double>(); });
    const size_t want = std::min<size_t>(kTop, order.size());
    ASSERT_EQ(top[i].ids.size(), want);
    for (size_t r = 0; r < want; ++r) {
      const int32_t id = top[i].ids[r];
      EXPECT_EQ(top[i].weights[r], dense[i * V + size_t(id)]) << "rank " << r << ": the weight embed gives";
      if (r > 0)
        EXPECT_GE(top[i].weights[r - 1], top[i].weights[r]) << "heaviest first";
      EXPECT_NEAR(top[i].weights[r], ref[i][size_t(id)].get<double>(), 1e-5 * ref[i][order[0]].get<double>());
    }
    // The same ids as the reference's top k, unless k-th and next weights are
    // closer than the fp32 error (then either order is right).
    const bool clearCut = want == order.size() ||
                          ref[i][order[want - 1]].get<double>() - ref[i][order[want]].get<double>() >
                              1e-4 * ref[i][order[0]].get<double>();
    if (clearCut) {
      std::vector<int32_t> got = top[i].ids, wantIds(order.begin(), order.begin() + want);
      std::sort(got.begin(), got.end());
      std::sort(wantIds.begin(), wantIds.end());
      EXPECT_EQ(got, wantIds);
      ++comparedWithReference;
    }
    // A threshold keeps exactly the entries above it.
    const float threshold = top[i].weights[want / 2];
    const encrt::SparseEmbedding above = session.embedSparse({texts[i]}, int32_t(V), threshold)[0];
    size_t expected = 0;
    for (size_t k = 0; k < V; ++k)
      expected += dense[i * V + k] > threshold;
    EXPECT_EQ(above.ids.size(), expected);
  }
  EXPECT_GE(comparedWithReference, texts.size() / 2);

  // The entries' token strings (encrt_model_get_token) are the folder's vocab.txt lines.
  std::ifstream vocabFile(referenceDataDir() + "/splade/" + c["dir"].get<std::string>() + "/vocab.txt");
  std::vector<std::string> vocab;
  for (std::string line; std::getline(vocabFile, line);)
    vocab.push_back(line);
  ASSERT_EQ(vocab.size(), V);
  for (int32_t id : top[0].ids)
    EXPECT_EQ(m.token(id), vocab[size_t(id)]);

  // Every non-zero entry with top_k = the vocabulary: as many as embed's.
  const encrt::SparseEmbedding all = session.embedSparse({texts[0]}, int32_t(V))[0];
  size_t nonZero = 0;
  for (size_t k = 0; k < V; ++k)
    nonZero += dense[k] != 0.0f;
  EXPECT_EQ(all.ids.size(), nonZero);

  auto error = [&](int32_t k, float threshold) {
    try {
      session.embedSparse(texts, k, threshold);
    } catch (const std::exception &e) {
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  EXPECT_NE(error(0, 0).find("top_k is 0 (expected 1 to " + std::to_string(V)), std::string::npos) << error(0, 0);
  EXPECT_NE(error(int32_t(V) + 1, 0).find("top_k is"), std::string::npos);
  EXPECT_NE(error(3, -1).find("threshold is -1"), std::string::npos) << error(3, -1);
  EXPECT_NE(error(3, NAN).find("threshold is"), std::string::npos);
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
