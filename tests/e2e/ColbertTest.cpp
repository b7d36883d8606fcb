//===- ColbertTest.cpp - PyLate ColBERT checkpoints: queries and documents -===//
//
// tests/reference/colbert/colbert.json (record_colbert.py beside it): PyLate
// 1.6's ColBERT.encode (is_query True and False) in float64 on tiny random
// BERTs and a ModernBERT saved by PyLate (and a BERT written as Stanford
// colbert-ai saves its checkpoints, which PyLate loads): a per-token Dense projection, [Q] / [D]
// markers (added tokens, or [unused0] / [unused1] from the vocabulary), queries
// expanded with [MASK] to query_length (not attended to, or attended to),
// documents cut to document_length without their skiplist's tokens. fp32:
// every text's vectors (as many as PyLate's) within 1e-5 of the reference
// (max |err| / max |ref|), on the plan the compiler picks and on the padded
// one. int8 and bf16: the worst row cosine (measured and gated per case,
// below).
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

const char *const kCases[] = {"bert_colbert", "bert_colbert_attend", "modernbert_colbert", "bert_colbert_stanford"};
const char *const kRoles[] = {"query", "document"};

const json &reference(const std::string &name) { return recordedCase("colbert/colbert.json", name); }

std::string compileColbert(const TempDir &tmp, const std::string &name, const std::string &quantize,
                           bool packed = true) {
  encc::CompileOptions o;
  o.modelDir = referenceDataDir() + "/colbert/models/" + name;
  o.output = tmp.path() + "/" + name + "-" + quantize + (packed ? "" : "-padded") + ".encm";
  o.quantize = quantize;
  o.allowPackedPlan = packed;
  const std::string err = compile(o);
  return err.empty() ? o.output : "error: " + err;
}

std::vector<std::string> texts(const json &c) { return c["texts"].get<std::vector<std::string>>(); }

/// Worst row cosine and worst max |err| / max |ref| of a case's vectors
/// against PyLate's, both roles.
struct Agreement {
  double cosine = 1, relative = 0;
  bool sameRows = true;
};

Agreement measure(const std::string &artifact, const json &c) {
  encrt::Model m(artifact);
  EXPECT_EQ(m.roles(), (std::vector<std::string>{"query", "document"}));
  EXPECT_EQ(m.info().multivector_dim, c["dim"].get<int32_t>());
  EXPECT_EQ(m.info().embedding_dim, 0) << "no pooled output";
  encrt::Session session(m);
  const std::vector<std::string> t = texts(c);
  const size_t dim = size_t(c["dim"].get<int32_t>());
  Agreement r;
  for (const char *role : kRoles) {
    const encrt::Session::Encoded got = session.encode(t, false, 0, true, 0.0f, nullptr, role);
    for (size_t i = 0; i < t.size(); ++i) {
      SCOPED_TRACE(std::string(role) + ": " + t[i]);
      const json &rows = c[role]["vectors"][i];
      r.sameRows = r.sameRows && got.vectors[i].size() == rows.size() * dim;
      EXPECT_EQ(got.vectors[i].size() / dim, rows.size()) << "vectors";
      for (size_t row = 0; row < rows.size() && (row + 1) * dim <= got.vectors[i].size(); ++row) {
        const std::vector<double> want = rows[row].get<std::vector<double>>();
        const float *g = got.vectors[i].data() + row * dim;
        double dot = 0, a = 0, b = 0, err = 0, scale = 0;
        for (size_t k = 0; k < dim; ++k) {
          dot += want[k] * g[k], a += want[k] * want[k], b += double(g[k]) * g[k];
          err = std::max(err, std::abs(want[k] - g[k]));
          scale = std::max(scale, std::abs(want[k]));
        }
        r.cosine = std::min(r.cosine, dot / std::sqrt(a * b));
        r.relative = std::max(r.relative, err / scale);
      }
    }
  }
  return r;
}

// Both cases on the plan the compiler picks (padded where the expansion is
// not attended to, packed otherwise) and on the padded plan.
TEST(Colbert, MatchesPyLateQueriesAndDocuments) {
  TempDir tmp;
  for (const char *name : kCases)
    for (bool packed : {true, false}) {
      SCOPED_TRACE(std::string(name) + (packed ? "" : " (padded plan)"));
      const std::string artifact = compileColbert(tmp, name, "none", packed);
      ASSERT_EQ(artifact.rfind("error: ", 0), std::string::npos) << artifact;
      const Agreement r = measure(artifact, reference(name));
      std::printf("[ measured ] %s fp32%s: max |err| / max |ref| %.2e\n", name, packed ? "" : " padded", r.relative);
      EXPECT_TRUE(r.sameRows);
      EXPECT_LE(r.relative, 1e-5);
    }
}

TEST(Colbert, Int8AndBf16AgainstPyLate) {
  TempDir tmp;
  for (const char *name : kCases)
    for (const char *tier : {"int8", "bf16"}) {
      SCOPED_TRACE(std::string(name) + " " + tier);
      const std::string artifact = compileColbert(tmp, name, tier);
      ASSERT_EQ(artifact.rfind("error: ", 0), std::string::npos) << artifact;
      const Agreement r = measure(artifact, reference(name));
      std::printf("[ measured ] %s %s: worst row cosine %.5f\n", name, tier, r.cosine);
      EXPECT_TRUE(r.sameRows);
      // Measured: the BERTs 0.9992-0.9998 / 0.99990-0.99997; the ModernBERT (O(1) random weights through 4
      // pre-norm layers, 12-wide rows) 0.98896 / 0.99888, gated as ModernBertTest gates int8 tokens.
      const bool modern = std::string(name).rfind("modernbert", 0) == 0;
      EXPECT_GE(r.cosine, std::string(tier) == "int8" ? (modern ? 0.98 : 0.998) : (modern ? 0.998 : 0.9998));
    }
}

std::string message(encrt_status *st) {
  std::string text = st ? encrt_status_message(st) : "<ok>";
  encrt_status_free(st);
  return text;
}

// A model with roles needs one, by a name it has; the dense output and embed
// are refused by name; token ids of a role run as its texts do.
TEST(Colbert, RolesAreNamedAndWhatTheModelLacksIsRefused) {
  TempDir tmp;
  const std::string artifact = compileColbert(tmp, "bert_colbert", "none");
  ASSERT_EQ(artifact.rfind("error: ", 0), std::string::npos) << artifact;
  encrt::Model m(artifact);
  EXPECT_EQ(encrt_model_role_count(m.get()), 2);
  const char *name = nullptr;
  EXPECT_NE(message(encrt_model_get_role(m.get(), 2, &name)).find("role index 2 is out of range"), std::string::npos);
  encrt_session *s = nullptr;
  ASSERT_EQ(encrt_session_create(m.get(), nullptr, &s), nullptr);
  const encrt_text texts[2] = {{"the cat", 7}, {"a dog runs.", 11}};
  encrt_encode_outputs o;
  encrt_encode_outputs_initialize(&o);
  int64_t counts[2] = {-1, -1};
  o.vector_counts = counts;
  const std::string none = message(encrt_session_encode(s, nullptr, texts, 2, &o));
  EXPECT_NE(none.find("encodes a text as one of its roles ('query', 'document')"), std::string::npos) << none;
  o.role = "passage";
  EXPECT_NE(message(encrt_session_encode(s, nullptr, texts, 2, &o)).find("no role named 'passage'"), std::string::npos);
  o.role = "query";
  EXPECT_EQ(message(encrt_session_encode(s, nullptr, texts, 2, &o)), "<ok>");
  EXPECT_EQ(counts[0], 12) << "every query expanded to query_length";
  EXPECT_EQ(counts[1], 12);
  o.role = "document";
  EXPECT_EQ(message(encrt_session_encode(s, nullptr, texts, 2, &o)), "<ok>");
  EXPECT_EQ(counts[0], 5) << "[CLS] [D] the cat [SEP]";
  EXPECT_EQ(counts[1], 6) << "[CLS] [D] a dog runs [SEP], the '.' skipped";
  float dense[2 * 32];
  o.dense = dense;
  EXPECT_NE(message(encrt_session_encode(s, nullptr, texts, 2, &o)).find("no dense output"), std::string::npos);
  o.dense = nullptr;
  float embeddings[2 * 32];
  EXPECT_NE(message(encrt_session_embed_texts(s, texts, 2, embeddings)).find("no pooled output"), std::string::npos);
  // Token ids as a role gives them (encrt_model_tokenize_role), run by
  // encrt_session_encode_ids: the same vectors; the unattended expansion
  // needs attended_lengths.
  for (const char *role : kRoles) {
    SCOPED_TRACE(role);
    std::vector<int32_t> ids(32);
    int64_t count = 0;
    int32_t attended = 0;
    ASSERT_EQ(message(encrt_model_tokenize_role(m.get(), role, texts[1], ids.data(), int64_t(ids.size()), &count,
                                                &attended)),
              "<ok>");
    ids.resize(size_t(count));
    const int32_t length = int32_t(count);
    EXPECT_EQ(length, std::string(role) == "query" ? 12 : 7) << "[CLS] marker a dog runs . [SEP] (+ [MASK]s)";
    EXPECT_EQ(attended, 7);
    EXPECT_EQ(ids[1], std::string(role) == "query" ? 96 : 97) << "the marker after [CLS]";
    encrt_encode_outputs_initialize(&o);
    o.role = role;
    int64_t rows = 0;
    std::vector<float> vectors(size_t(length) * 16);
    o.vector_counts = &rows, o.vectors = vectors.data(), o.vectors_capacity = length;
    if (std::string(role) == "query") {
      const std::string refused = message(encrt_session_encode_ids(s, ids.data(), &length, 1, length, &o));
      EXPECT_NE(refused.find("role 'query' leaves its expansion tokens unattended: pass attended_lengths"),
                std::string::npos)
          << refused;
    }
    o.attended_lengths = &attended;
    ASSERT_EQ(message(encrt_session_encode_ids(s, ids.data(), &length, 1, length, &o)), "<ok>");
    const encrt::Session::Encoded byText =
        encrt::Session(m).encode({std::string(texts[1].data, size_t(texts[1].size))}, false, 0, true, 0.0f, nullptr, role);
    vectors.resize(size_t(rows) * 16);
    EXPECT_EQ(vectors, byText.vectors[0]);
    const int32_t tooMany = length + 1;
    o.attended_lengths = &tooMany;
    EXPECT_NE(message(encrt_session_encode_ids(s, ids.data(), &length, 1, length, &o)).find("attended_lengths[0] is"),
              std::string::npos);
  }
  encrt_encode_outputs_initialize(&o);
  const int32_t one = 1;
  o.attended_lengths = &one;
  o.role = "document";
  o.vector_counts = counts;
  EXPECT_NE(message(encrt_session_encode(s, nullptr, texts, 2, &o)).find("attended_lengths applies to token ids"),
            std::string::npos);
  encrt_session_release(s);
}

} // namespace
