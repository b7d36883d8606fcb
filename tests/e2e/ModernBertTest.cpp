//===- ModernBertTest.cpp - ModernBERT end to end vs transformers --------===//
//
// tests/reference/modernbert/modernbert.json (record_modernbert.py beside it):
// transformers 5.x in float64 on ModernBERT folders.
//  - Four tiny folders (models/): the hub's legacy config keys and 5.x's
//    layer_types / rope_parameters, biases off and on, erf and tanh GeGLU, odd
//    windows and shapes, a mean+normalize and a cls embedder, a one-label
//    mean-pooled reranker and a three-label cls classifier. The fp32 build's
//    valid hidden rows, pooled outputs and logits: max |err| / max |ref|
//    <= 1e-5 on a batch of lengths 37, 5, 20, 1, 30 (local windows 4 and 5
//    cross the longer ones).
//  - The ModernBERT-base shape (22 layers, hidden 768, window 128, thetas
//    160000 / 10000), weights encc::randomWeights(config, 7) written as
//    model.safetensors (the recorder ports RandomWeights.cpp): a mixed batch
//    (517, 130, 64) and one sequence of 8192 tokens, fp32 within 1e-5
//    relative on rows around the window edges, the middle and the ends; int8 and bf16 builds on the
//    mixed batch vs the fp32 build with MiniLM's gates (int8: mean token
//    cosine >= 0.99, min >= 0.98; bf16: min >= 0.9999 -- see the measured
//    values in the test output).
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

const json &findCase(const std::string &name) { return recordedCase("modernbert/modernbert.json", name); }

struct Batch {
  std::vector<int32_t> ids, lengths;
  int64_t seq = 0;
};

Batch batchOf(const json &c) {
  Batch b;
  for (const json &row : c["ids"]) {
    b.seq = static_cast<int64_t>(row.size());
    for (const json &v : row)
      b.ids.push_back(v.get<int32_t>());
  }
  for (const json &n : c["lengths"])
    b.lengths.push_back(n.get<int32_t>());
  return b;
}

/// Flattened valid hidden rows of a run [B, S, H] and of the record.
void validRows(const Batch &b, const std::vector<float> &hidden, const json &want, int64_t H,
               std::vector<double> &got, std::vector<double> &ref) {
  for (size_t i = 0; i < b.lengths.size(); ++i)
    for (int32_t s = 0; s < b.lengths[i]; ++s) {
      const float *row = hidden.data() + (i * b.seq + s) * H;
      got.insert(got.end(), row, row + H);
      for (const json &v : want[i][s])
        ref.push_back(v.get<double>());
    }
}

std::vector<double> flat(const json &rows) {
  std::vector<double> out;
  for (const json &r : rows)
    for (const json &v : r)
      out.push_back(v.get<double>());
  return out;
}

class ModernBertTiny : public ::testing::TestWithParam<const char *> {};

TEST_P(ModernBertTiny, MatchesTransformers) {
  const json &c = findCase(GetParam());
  const std::string dir = referenceDataDir() + "/modernbert/" + c["dir"].get<std::string>();
  TempDir tmp;
  const std::string artifact = tmp.path() + "/m.encm";
  ASSERT_EQ(compile(dir, artifact), "");
  encrt::Model m(artifact);
  encrt::Session session(m);
  const Batch b = batchOf(c);
  const encrt::RunResult r = session.run(b.ids, b.lengths, b.seq);
  const int64_t H = m.info().hidden_size;
  if (c.contains("hidden")) {
    std::vector<double> got, ref;
    validRows(b, r.hidden, c["hidden"], H, got, ref);
    const double hiddenErr = maxRelativeError(got, ref);
    const std::vector<double> pooled(r.pooled.begin(), r.pooled.end());
    const double pooledErr = maxRelativeError(pooled, flat(c["pooled"]));
    std::printf("[ measured ] %s: hidden %.2e, pooled %.2e (max |err| / max |ref|)\n", GetParam(), hiddenErr,
                pooledErr);
    EXPECT_LE(hiddenErr, kTolerance);
    EXPECT_LE(pooledErr, kTolerance);
  } else {
    const std::vector<double> logits(r.pooled.begin(), r.pooled.end());
    const double err = maxRelativeError(logits, flat(c["logits"]));
    std::printf("[ measured ] %s: logits %.2e (max |err| / max |ref|)\n", GetParam(), err);
    EXPECT_EQ(m.info().num_labels, static_cast<int64_t>(c["logits"][0].size()));
    // What sentence-transformers' CrossEncoder applies to the logits.
    EXPECT_STREQ(m.info().score_activation, c["logits"][0].size() == 1 ? "sigmoid" : "identity");
    EXPECT_LE(err, kTolerance);
  }
}

// legacy_mean carries a GPT-NeoX-style tokenizer.json (NFC, byte-level BPE,
// [CLS] $A [SEP]): the runtime's ids are the `tokenizers` library's and the
// embeddings of texts transformers' on them.
TEST(ModernBertText, TokenizerAndTextEmbeddingsMatchTheLibraries) {
  const json &c = findCase("legacy_mean");
  const json &t = c["texts"];
  TempDir tmp;
  const std::string artifact = tmp.path() + "/m.encm";
  ASSERT_EQ(compile(referenceDataDir() + "/modernbert/" + c["dir"].get<std::string>(), artifact), "");
  encrt::Model m(artifact);
  expectRecordedTexts(m, t, kTolerance, "legacy_mean");
}

INSTANTIATE_TEST_SUITE_P(Recorded, ModernBertTiny,
                         ::testing::Values("legacy_mean", "biases_cls", "reranker_mean", "classifier_cls3"));

/// The ModernBERT-base-shaped folder: tests/reference/modernbert/base's
/// config.json with encc::randomWeights(config, the recorded seed) as its
/// model.safetensors (the weights the recorder gave transformers), written
/// once per process.
const std::string &baseModelDir() {
  static TempDir tmp;
  static const std::string dir = [] {
    const std::string d = tmp.path() + "/modernbert-base";
    writeRandomWeightsFolder(referenceDataDir() + "/modernbert/base/config.json",
                             findCase("base_mixed")["seed"].get<uint64_t>(), d);
    return d;
  }();
  return dir;
}

std::string compileBase(const TempDir &tmp, const std::string &name, const std::string &quantize, int64_t maxSeq) {
  encc::CompileOptions o;
  o.modelDir = baseModelDir();
  o.output = tmp.path() + "/" + name + ".encm";
  o.quantize = quantize;
  o.maxSeq = maxSeq;
  const std::string err = compile(o);
  return err.empty() ? o.output : "error: " + err;
}

/// The recorded rows (c["rows"][b]) of a run's hidden states and the record.
void recordedRows(const json &c, const Batch &b, const std::vector<float> &hidden, int64_t H,
                  std::vector<double> &got, std::vector<double> &ref) {
  for (size_t i = 0; i < b.lengths.size(); ++i)
    for (size_t k = 0; k < c["rows"][i].size(); ++k) {
      const float *row = hidden.data() + (i * b.seq + c["rows"][i][k].get<int64_t>()) * H;
      got.insert(got.end(), row, row + H);
      for (const json &v : c["hidden_rows"][i][k])
        ref.push_back(v.get<double>());
    }
}

/// max |err| / max |ref| of a run's recorded rows and of its pooled output
/// against the case.
std::pair<double, double> errorsVsRecord(const json &c, const Batch &b, const encrt::RunResult &r, int64_t H) {
  std::vector<double> got, ref;
  recordedRows(c, b, r.hidden, H, got, ref);
  const std::vector<double> pooled(r.pooled.begin(), r.pooled.end());
  return {maxRelativeError(got, ref), maxRelativeError(pooled, flat(c["pooled"]))};
}

TEST(ModernBertBase, MixedBatchMatchesTransformersAndQuantizedBuildsMeetTheGates) {
  const json &c = findCase("base_mixed");
  TempDir tmp;
  const std::string fp32 = compileBase(tmp, "fp32", "none", 1024);
  ASSERT_EQ(fp32.rfind("error: ", 0), std::string::npos) << fp32;
  const Batch b = batchOf(c);
  encrt::Model m(fp32);
  const int64_t H = m.info().hidden_size;
  encrt::RunResult rf = encrt::Session(m).run(b.ids, b.lengths, b.seq);
  const auto [err, pooledErr] = errorsVsRecord(c, b, rf, H);
  std::printf("[ measured ] base 22x768, lengths 517/130/64: hidden %.2e, pooled %.2e\n", err, pooledErr);
  EXPECT_LE(err, kTolerance);
  EXPECT_LE(pooledErr, kTolerance);

  for (const char *quantize : {"int8", "bf16"}) {
    const std::string path = compileBase(tmp, quantize, quantize, 1024);
    ASSERT_EQ(path.rfind("error: ", 0), std::string::npos) << path;
    encrt::Model mq(path);
    encrt::RunResult rq = encrt::Session(mq).run(b.ids, b.lengths, b.seq);
    const TokenCosines cs = tokenCosines(rq.hidden, rf.hidden, b.lengths, b.seq, H);
    std::printf("[ measured ] %s (%s) vs fp32: mean token cosine %.6f, min %.6f\n", quantize, mq.info().cpu_target,
                cs.mean, cs.min);
    if (std::string(quantize) == "int8") {
      EXPECT_GE(cs.mean, 0.99);
      EXPECT_GE(cs.min, 0.98);
    } else {
      EXPECT_GE(cs.min, 0.9999);
    }
  }
}

TEST(ModernBertBase, Sequence8192MatchesTransformers) {
  const json &c = findCase("base_8192");
  TempDir tmp;
  const std::string fp32 = compileBase(tmp, "long", "none", 8192);
  ASSERT_EQ(fp32.rfind("error: ", 0), std::string::npos) << fp32;
  const Batch b = batchOf(c);
  ASSERT_EQ(b.seq, 8192);
  encrt::Model m(fp32);
  const int64_t H = m.info().hidden_size;
  encrt::RunResult r = encrt::Session(m).run(b.ids, b.lengths, b.seq);
  const auto [err, pooledErr] = errorsVsRecord(c, b, r, H);
  std::printf("[ measured ] base 22x768, 8192 tokens: hidden (%zu rows) %.2e, pooled %.2e\n", c["rows"][0].size(),
              err, pooledErr);
  EXPECT_LE(err, kTolerance);
  EXPECT_LE(pooledErr, kTolerance);
}

} // namespace
