//===- BgeM3Test.cpp - bge-m3's three outputs from one pass ---------------===//
//
// tests/reference/bge_m3/bge_m3.json (record_bge_m3.py beside it):
// FlagEmbedding 1.4's BGEM3FlagModel.encode (dense_vecs, lexical_weights,
// colbert_vecs) in float64 on a tiny random XLM-R with bge-m3's folder
// layout (CLS pooling + Normalize, sparse_linear and colbert_linear heads,
// the ColBERT head narrower than the hidden size). fp32: the runtime's ids
// equal the recorded tokenizer's; the dense vectors, each text's lexical
// weights (the same ids) and its ColBERT rows (as many, [CLS] dropped)
// within 1e-5 of the reference (max |err| / max |ref| per output). int8 and
// bf16 (the sparse head kept in float): cosine of each output to the
// reference (measured, gated).
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/e2e/RecordedBatch.h"
#include "tests/support/RecordedReference.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace encc::testing;
using nlohmann::json;

namespace {

const json &m3() { return recordedCase("bge_m3/bge_m3.json", "xlmr_m3"); }

std::string modelDir() { return referenceDataDir() + "/bge_m3/models/xlmr_m3"; }

std::string compileM3(const TempDir &tmp, const std::string &quantize, bool heads = true, bool packed = true) {
  encc::CompileOptions o;
  o.modelDir = modelDir();
  o.output = tmp.path() + "/" + quantize + (heads ? "" : "-dense") + (packed ? "" : "-padded") + ".encm";
  o.quantize = quantize;
  o.tokenHeads = heads;
  o.allowPackedPlan = packed;
  const std::string err = compile(o);
  return err.empty() ? o.output : "error: " + err;
}

std::vector<std::string> texts() {
  std::vector<std::string> t;
  for (const json &e : m3()["texts"])
    t.push_back(e["text"].get<std::string>());
  return t;
}

/// Worst cosine and worst max |err| / max |ref| of `got` against `want` over the rows.
struct Agreement {
  double cosine = 1, relative = 0;
  void add(const std::vector<double> &want, const float *got) {
    double dot = 0, a = 0, b = 0, err = 0, scale = 0;
    for (size_t k = 0; k < want.size(); ++k) {
      dot += want[k] * got[k], a += want[k] * want[k], b += double(got[k]) * got[k];
      err = std::max(err, std::abs(want[k] - got[k]));
      scale = std::max(scale, std::abs(want[k]));
    }
    cosine = std::min(cosine, a == 0 && b == 0 ? 1.0 : dot / std::sqrt(a * b));
    relative = std::max(relative, scale == 0 ? err : err / scale);
  }
};

struct Measured {
  Agreement dense, lexical, colbert;
  bool sameLexicalIds = true;
};

/// The three outputs of `artifact` against FlagEmbedding's.
Measured measure(const std::string &artifact) {
  const json &c = m3();
  encrt::Model m(artifact);
  EXPECT_EQ(m.info().sparse, 1);
  EXPECT_EQ(m.info().multivector_dim, c["colbert_dim"].get<int32_t>());
  encrt::Session session(m);
  const std::vector<std::string> t = texts();
  const int32_t vocab = m.info().vocab_size;
  const encrt::Session::Encoded got = session.encode(t, true, vocab, true);
  const size_t dim = size_t(m.info().embedding_dim), cdim = size_t(m.info().multivector_dim);
  Measured r;
  for (size_t i = 0; i < t.size(); ++i) {
    SCOPED_TRACE(t[i]);
    const json &e = c["texts"][i];
    r.dense.add(e["dense"].get<std::vector<double>>(), got.dense.data() + i * dim);
    // Lexical weights as a vector over the union of ids.
    std::vector<int32_t> ids;
    std::vector<double> want;
    for (const json &p : e["lexical"])
      ids.push_back(p[0].get<int32_t>()), want.push_back(p[1].get<double>());
    std::vector<int32_t> gotIds = got.sparse[i].ids;
    std::sort(gotIds.begin(), gotIds.end());
    r.sameLexicalIds = r.sameLexicalIds && gotIds == ids;
    std::vector<float> gotWeights(ids.size(), 0.0f);
    for (size_t k = 0; k < got.sparse[i].ids.size(); ++k) {
      auto at = std::find(ids.begin(), ids.end(), got.sparse[i].ids[k]);
      if (at != ids.end())
        gotWeights[size_t(at - ids.begin())] = got.sparse[i].weights[k];
    }
    r.lexical.add(want, gotWeights.data());
    const json &rows = e["colbert"];
    EXPECT_EQ(got.vectors[i].size(), rows.size() * cdim) << "ColBERT rows";
    for (size_t row = 0; row < rows.size() && (row + 1) * cdim <= got.vectors[i].size(); ++row)
      r.colbert.add(rows[row].get<std::vector<double>>(), got.vectors[i].data() + row * cdim);
  }
  return r;
}

// The packed plan (heads' rows [tokens, W]) and the padded one ([B, S, W], each
// text's valid rows gathered by the runtime) both.
TEST(BgeM3, MatchesFlagEmbeddingOnTexts) {
  TempDir tmp;
  for (bool packed : {true, false}) {
    SCOPED_TRACE(packed ? "packed plan" : "padded plan");
    const std::string artifact = compileM3(tmp, "none", true, packed);
    ASSERT_EQ(artifact.rfind("error: ", 0), std::string::npos) << artifact;
    {
      encrt::Model m(artifact);
      EXPECT_STREQ(m.info().pooling, "cls");
      for (const json &e : m3()["texts"])
        EXPECT_EQ(m.tokenize(e["text"].get<std::string>()), e["ids"].get<std::vector<int32_t>>()) << e["text"];
    }
    const Measured r = measure(artifact);
    std::printf("[ measured ] bge-m3 fp32 %s: dense %.2e, lexical %.2e, colbert %.2e (max |err| / max |ref|)\n",
                packed ? "packed" : "padded", r.dense.relative, r.lexical.relative, r.colbert.relative);
    EXPECT_TRUE(r.sameLexicalIds) << "the lexical weights' ids differ from FlagEmbedding's";
    EXPECT_LE(r.dense.relative, 1e-5);
    EXPECT_LE(r.lexical.relative, 1e-5);
    EXPECT_LE(r.colbert.relative, 1e-5);
  }
}

// One pass's outputs equal the separate calls': the dense one encrt_session_embed's,
// the sparse one encrt_session_embed_sparse's (top k and threshold as there).
TEST(BgeM3, OutputsOfOnePassEqualTheSingleCalls) {
  TempDir tmp;
  const std::string artifact = compileM3(tmp, "none");
  ASSERT_EQ(artifact.rfind("error: ", 0), std::string::npos) << artifact;
  encrt::Model m(artifact);
  encrt::Session session(m);
  const std::vector<std::string> t = texts();
  const encrt::Session::Encoded all = session.encode(t, true, 3, true);
  EXPECT_EQ(all.dense, session.embed(t));
  const std::vector<encrt::SparseEmbedding> top = session.embedSparse(t, 3);
  const encrt::Session::Encoded vectorsOnly = session.encode(t, false, 0, true);
  for (size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(all.sparse[i].ids, top[i].ids) << t[i];
    EXPECT_EQ(all.sparse[i].weights, top[i].weights) << t[i];
    EXPECT_LE(all.sparse[i].ids.size(), 3u);
    for (size_t k = 1; k < all.sparse[i].weights.size(); ++k)
      EXPECT_GE(all.sparse[i].weights[k - 1], all.sparse[i].weights[k]) << "heaviest first";
    EXPECT_EQ(all.vectors[i], vectorsOnly.vectors[i]) << t[i];
  }
  // encrt_session_encode_ids on the same ids, padded as encode pads them: the same outputs.
  int64_t seq = 0;
  std::vector<std::vector<int32_t>> tokenized;
  for (const std::string &text : t) {
    tokenized.push_back(m.tokenize(text));
    seq = std::max<int64_t>(seq, int64_t(tokenized.back().size()));
  }
  std::vector<int32_t> ids(t.size() * size_t(seq), 0), lengths;
  for (size_t i = 0; i < t.size(); ++i) {
    std::copy(tokenized[i].begin(), tokenized[i].end(), ids.begin() + i * size_t(seq));
    lengths.push_back(int32_t(tokenized[i].size()));
  }
  const size_t n = t.size(), dim = size_t(m.info().embedding_dim), cdim = size_t(m.info().multivector_dim);
  std::vector<float> denseIds(n * dim), vectors(n * size_t(seq) * cdim), weights(n * 3);
  std::vector<int32_t> counts(n), sparseIds(n * 3);
  std::vector<int64_t> rows(n);
  encrt_encode_outputs o;
  encrt_encode_outputs_initialize(&o);
  o.dense = denseIds.data();
  o.sparse_top_k = 3, o.sparse_counts = counts.data(), o.sparse_ids = sparseIds.data(), o.sparse_weights = weights.data();
  o.vectors = vectors.data(), o.vectors_capacity = int64_t(n) * seq, o.vector_counts = rows.data();
  encrt_session *raw = nullptr;
  ASSERT_EQ(encrt_session_create(m.get(), nullptr, &raw), nullptr);
  encrt_status *st = encrt_session_encode_ids(raw, ids.data(), lengths.data(), int64_t(n), seq, &o);
  ASSERT_EQ(st, nullptr) << encrt_status_message(st);
  EXPECT_EQ(denseIds, all.dense);
  size_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(std::vector<int32_t>(sparseIds.begin() + i * 3, sparseIds.begin() + i * 3 + counts[i]), all.sparse[i].ids);
    EXPECT_EQ(rows[i], int64_t(lengths[i]) - 1);
    EXPECT_EQ(std::vector<float>(vectors.begin() + at * cdim, vectors.begin() + (at + size_t(rows[i])) * cdim),
              all.vectors[i]);
    at += size_t(rows[i]);
  }
  lengths[0] = int32_t(seq) + 1; // checked as encrt_session_run checks it
  st = encrt_session_encode_ids(raw, ids.data(), lengths.data(), int64_t(n), seq, &o);
  ASSERT_NE(st, nullptr);
  EXPECT_NE(std::string(encrt_status_message(st)).find("lengths[0]"), std::string::npos) << encrt_status_message(st);
  encrt_status_free(st);
  encrt_session_release(raw);

  // The dense-only artifact (--no-token-heads) gives the same dense vectors.
  const std::string dense = compileM3(tmp, "none", false);
  ASSERT_EQ(dense.rfind("error: ", 0), std::string::npos) << dense;
  encrt::Model d(dense);
  EXPECT_EQ(d.info().sparse, 0);
  EXPECT_EQ(d.info().multivector_dim, 0);
  EXPECT_EQ(encrt::Session(d).embed(t), all.dense);
}

TEST(BgeM3, EncodeRefusesWhatTheModelLacksAndShortBuffers) {
  TempDir tmp;
  const std::string artifact = compileM3(tmp, "none");
  ASSERT_EQ(artifact.rfind("error: ", 0), std::string::npos) << artifact;
  encrt::Model m(artifact);
  encrt_session *s = nullptr;
  ASSERT_EQ(encrt_session_create(m.get(), nullptr, &s), nullptr);
  const encrt_text texts[2] = {{"the cat", 7}, {"a dog runs", 10}};
  auto message = [](encrt_status *st) {
    std::string text = st ? encrt_status_message(st) : "<ok>";
    encrt_status_free(st);
    return text;
  };
  encrt_encode_outputs o;
  encrt_encode_outputs_initialize(&o);
  int64_t counts[2] = {-1, -1};
  float rows[4 * 24];
  o.vectors = rows;
  o.vectors_capacity = 4;
  o.vector_counts = counts;
  const std::string shortBuffer = message(encrt_session_encode(s, nullptr, texts, 2, &o));
  EXPECT_NE(shortBuffer.find("vectors_capacity is 4 rows; these texts have"), std::string::npos) << shortBuffer;
  EXPECT_GT(counts[0], 0);
  EXPECT_EQ(counts[0], m.tokenize("the cat").size() - 1) << "every token but [CLS]";
  o.vectors = nullptr;
  o.vector_counts = nullptr;
  o.sparse_top_k = 0;
  int32_t sc[2], si[2];
  float sw[2];
  o.sparse_counts = sc, o.sparse_ids = si, o.sparse_weights = sw;
  EXPECT_NE(message(encrt_session_encode(s, nullptr, texts, 2, &o)).find("top_k is 0"), std::string::npos);
  o.sparse_top_k = 1;
  o.sparse_weights = nullptr;
  EXPECT_NE(message(encrt_session_encode(s, nullptr, texts, 2, &o)).find("sparse_weights is NULL"), std::string::npos);
  encrt_encode_outputs old = o;
  old.struct_size = 3;
  EXPECT_NE(message(encrt_session_encode(s, nullptr, texts, 2, &old)).find("struct_size is 3"), std::string::npos);
  encrt_session_release(s);

  // A model without the heads: the outputs it lacks are refused by name.
  const std::string dense = compileM3(tmp, "none", false);
  ASSERT_EQ(dense.rfind("error: ", 0), std::string::npos) << dense;
  encrt::Model d(dense);
  ASSERT_EQ(encrt_session_create(d.get(), nullptr, &s), nullptr);
  encrt_encode_outputs_initialize(&o);
  o.vector_counts = counts;
  EXPECT_NE(message(encrt_session_encode(s, nullptr, texts, 2, &o)).find("no multi-vector output"), std::string::npos);
  encrt_encode_outputs_initialize(&o);
  o.sparse_top_k = 1, o.sparse_counts = sc, o.sparse_ids = si, o.sparse_weights = sw;
  EXPECT_NE(message(encrt_session_encode(s, nullptr, texts, 2, &o)).find("no sparse output"), std::string::npos);
  encrt_session_release(s);
}

TEST(BgeM3, Int8AndBf16AgainstFlagEmbedding) {
  TempDir tmp;
  for (const char *quantize : {"int8", "bf16"}) {
    const std::string artifact = compileM3(tmp, quantize);
    ASSERT_EQ(artifact.rfind("error: ", 0), std::string::npos) << artifact;
    const Measured r = measure(artifact);
    std::printf("[ measured ] bge-m3 %s: worst cosine dense %.6f, lexical %.6f, colbert %.6f\n", quantize,
                r.dense.cosine, r.lexical.cosine, r.colbert.cosine);
    // Measured (AMX Xeon): int8 0.99987 / 0.99707 / 0.99966, bf16 0.99999 / 0.99991 / 0.99997 (the recording of session 28; the
    // one before drew the sparse bias with dropout on, 0.99871 / 0.99996). The lexical
    // weights are a difference of near values (the head's bias against its product), which magnifies the
    // encoder's rounding: their int8 gate is looser.
    const bool int8 = std::string(quantize) == "int8";
    EXPECT_GE(r.dense.cosine, int8 ? 0.999 : 0.9999) << quantize;
    EXPECT_GE(r.lexical.cosine, int8 ? 0.995 : 0.9999) << quantize;
    EXPECT_GE(r.colbert.cosine, int8 ? 0.999 : 0.9999) << quantize;
  }
}

} // namespace
