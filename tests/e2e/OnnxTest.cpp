//===- OnnxTest.cpp - ONNX exports compiled end to end ---------------------===//
//
// The fourteen ONNX files of tests/reference/onnx compiled with the real driver:
// four BERT torch.onnx.export files (opset 14 with LayerNorm decomposed, opset
// 17 with LayerNormalization; erf GELU, HF gelu_new's tanh form with pow,
// torch's tanh GELU with x*x*x; token types as an input and as torch's
// buffered zeros) and two of them after ONNX Runtime's transformer optimiser
// (com.microsoft EmbedLayerNormalization, Attention, SkipLayerNormalization,
// BiasGelu / FastGelu); RoBERTa (positions computed from the ids) as exported
// and ORT-optimised (the mask index a ReduceSum), and XLM-R at opset 17; one
// by torch's dynamo exporter (opset 18, weights in an external-data file), two
// by its default export of torch 2.15 (dynamo, opset 20: the ai.onnx Gelu
// operator, erf and tanh; issue 41, item 5, refused before); and
// DistilBERT (Q scaled before the product, the mask through Where) as exported
// and ORT-optimised (K projected before Q); two sequence-classification heads
// (BERT's pooler with one label, RoBERTa's head with three after ORT's
// optimiser: output logits through a [CLS] Gather, Gemm, Tanh, Gemm):
//  - the last hidden state (or the logits) of a mixed-length batch equals
//    ONNX Runtime's on the same file (recorded by record_onnx.py):
//    max |err| / max |ref| <= 1e-5;
//  - the fused IR is the one the Hugging Face frontend builds for the folder
//    the export was made from (make-tiny-model with the recorded flags): the
//    same ops in the same order, and the same outputs (1e-5).
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/support/RecordedReference.h"
#include "tests/support/TinyModel.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>
#include <sstream>

using namespace encc::testing;

namespace {

constexpr double kTolerance = 1e-5;
/// One code object (the frontend is under test here, not the levels): CI time.
const std::vector<std::string> kLevels = {"x86-64-v3"};

struct OnnxCase {
  std::string name, file;
  std::vector<std::string> flags;
  std::vector<std::vector<int32_t>> ids, typeIds;
  std::vector<std::vector<std::vector<double>>> hidden; ///< empty for a classification head
  std::vector<std::vector<double>> scores;               ///< a classification head's logits
};

std::vector<OnnxCase> loadCases() {
  std::ifstream in(referenceDataDir() + "/onnx_outputs.json");
  if (!in)
    throw std::runtime_error("cannot open " + referenceDataDir() + "/onnx_outputs.json");
  nlohmann::json j = nlohmann::json::parse(in);
  std::vector<OnnxCase> cases;
  for (const auto &c : j.at("cases")) {
    OnnxCase k;
    k.name = c.at("name");
    k.file = referenceDataDir() + "/" + c.at("file").get<std::string>();
    k.flags = c.at("flags").get<std::vector<std::string>>();
    k.ids = c.at("ids").get<std::vector<std::vector<int32_t>>>();
    k.typeIds = c.at("type_ids").get<std::vector<std::vector<int32_t>>>();
    if (c.contains("scores"))
      k.scores = c.at("scores").get<std::vector<std::vector<double>>>();
    else
      k.hidden = c.at("hidden").get<std::vector<std::vector<std::vector<double>>>>();
    cases.push_back(std::move(k));
  }
  return cases;
}

/// The enc op names of `mlir`, in order (weights left out: their names differ).
std::vector<std::string> opSequence(const std::string &mlir) {
  std::vector<std::string> ops;
  std::regex op(R"(= (enc\.[a-z_0-9]+))");
  for (std::sregex_iterator it(mlir.begin(), mlir.end(), op), end; it != end; ++it)
    if ((*it)[1] != "enc.weight")
      ops.push_back((*it)[1]);
  return ops;
}

std::string emitMlir(const std::string &model) {
  encc::CompileOptions o;
  o.modelDir = model;
  o.emit = "mlir";
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto err = encc::compileModel(o, os, [](const std::string &) {}))
    return "error: " + llvm::toString(std::move(err));
  return text;
}

/// The outputs of `artifact` on the case's batch: the valid rows of the
/// hidden state, and a classification head's logits (else empty).
struct CaseOutputs {
  std::vector<std::vector<std::vector<double>>> hidden;
  std::vector<std::vector<double>> scores;
};

CaseOutputs runCase(const std::string &artifact, const OnnxCase &c) {
  encrt::Model m(artifact);
  encrt::Session session(m);
  int64_t seq = 0;
  for (const auto &s : c.ids)
    seq = std::max<int64_t>(seq, int64_t(s.size()));
  std::vector<int32_t> ids, types, lengths;
  for (size_t b = 0; b < c.ids.size(); ++b) {
    for (int64_t t = 0; t < seq; ++t) {
      ids.push_back(t < int64_t(c.ids[b].size()) ? c.ids[b][size_t(t)] : 0);
      if (!c.typeIds.empty())
        types.push_back(t < int64_t(c.typeIds[b].size()) ? c.typeIds[b][size_t(t)] : 0);
    }
    lengths.push_back(int32_t(c.ids[b].size()));
  }
  const encrt::RunResult r = session.runTyped(ids, types, lengths, seq);
  const int64_t h = int64_t(r.hidden.size()) / (int64_t(c.ids.size()) * seq);
  CaseOutputs out;
  out.hidden.resize(c.ids.size());
  for (size_t b = 0; b < c.ids.size(); ++b)
    for (int64_t t = 0; t < lengths[b]; ++t)
      out.hidden[b].emplace_back(r.hidden.begin() + (int64_t(b) * seq + t) * h,
                                 r.hidden.begin() + (int64_t(b) * seq + t + 1) * h);
  const int64_t labels = m.info().num_labels;
  if (labels > 0)
    for (size_t b = 0; b < c.ids.size(); ++b)
      out.scores.emplace_back(r.pooled.begin() + int64_t(b) * labels, r.pooled.begin() + int64_t(b + 1) * labels);
  return out;
}

double relErr(const std::vector<std::vector<double>> &got, const std::vector<std::vector<double>> &want) {
  std::vector<double> a, b;
  for (size_t i = 0; i < want.size(); ++i) {
    if (i >= got.size() || got[i].size() != want[i].size())
      return INFINITY;
    a.insert(a.end(), got[i].begin(), got[i].end());
    b.insert(b.end(), want[i].begin(), want[i].end());
  }
  return maxRelativeError(a, b);
}

double relErr(const std::vector<std::vector<std::vector<double>>> &got,
              const std::vector<std::vector<std::vector<double>>> &want) {
  std::vector<std::vector<double>> a, b;
  for (size_t i = 0; i < want.size(); ++i)
    for (size_t t = 0; t < want[i].size(); ++t) {
      if (i >= got.size() || t >= got[i].size())
        return INFINITY;
      a.push_back(got[i][t]);
      b.push_back(want[i][t]);
    }
  return relErr(a, b);
}

class OnnxExport : public ::testing::TestWithParam<int> {};

TEST_P(OnnxExport, MatchesOnnxRuntimeAndTheHuggingFaceFrontend) {
  const std::vector<OnnxCase> cases = loadCases();
  ASSERT_LT(size_t(GetParam()), cases.size());
  const OnnxCase &c = cases[size_t(GetParam())];
  SCOPED_TRACE(c.name);
  TempDir dir;

  const std::string onnxArtifact = dir.path() + "/onnx.encm";
  ASSERT_EQ(compile(c.file, onnxArtifact, 0, "", kLevels), "");
  const CaseOutputs onnxOut = runCase(onnxArtifact, c);
  if (c.scores.empty())
    EXPECT_LE(relErr(onnxOut.hidden, c.hidden), kTolerance) << "vs ONNX Runtime";
  else
    EXPECT_LE(relErr(onnxOut.scores, c.scores), kTolerance) << "logits vs ONNX Runtime";

  // The metadata read off the graph is the folder's.
  const TinyModelSpec spec = tinyModelSpecFromFlags(c.flags);
  const encrt_model_info info = encrt::Model(onnxArtifact).info();
  EXPECT_EQ(info.hidden_size, spec.hidden);
  EXPECT_EQ(info.num_layers, spec.layers);
  EXPECT_EQ(info.num_heads, spec.heads);
  EXPECT_EQ(info.vocab_size, spec.vocab);
  EXPECT_EQ(info.max_seq, spec.maxPositions - spec.positionOffset());
  EXPECT_EQ(info.num_labels, spec.numLabels);
  if (spec.numLabels > 0)
    EXPECT_EQ(std::string(info.score_activation), spec.numLabels == 1 ? "sigmoid" : "identity");

  TinyModel hf = writeTinyModel(dir.path() + "/hf", spec);
  const std::string onnxIr = emitMlir(c.file), hfIr = emitMlir(hf.dir);
  ASSERT_EQ(onnxIr.rfind("error: ", 0), std::string::npos) << onnxIr;
  ASSERT_EQ(hfIr.rfind("error: ", 0), std::string::npos) << hfIr;
  const auto onnxOps = opSequence(onnxIr), hfOps = opSequence(hfIr);
  EXPECT_EQ(onnxOps, hfOps);
  EXPECT_GE(onnxOps.size(), 14u); // embedding, layernorm, 2 x 6, pool, l2norm at least

  const std::string hfArtifact = dir.path() + "/hf.encm";
  ASSERT_EQ(compile(hf.dir, hfArtifact, 0, "", kLevels), "");
  const CaseOutputs hfOut = runCase(hfArtifact, c);
  EXPECT_LE(relErr(onnxOut.hidden, hfOut.hidden), kTolerance) << "vs the HF folder's artifact";
  EXPECT_EQ(onnxOut.scores.size(), hfOut.scores.size());
  EXPECT_LE(relErr(onnxOut.scores, hfOut.scores), kTolerance) << "logits vs the HF folder's artifact";
}

/// The test names of the recorded cases, in onnx_outputs.json's order.
constexpr const char *kCaseNames[] = {
    "BertGeluOpset14",        "BertGeluOpset17",           "BertGeluNewOpset14",
    "BertGeluTanhOpset17",    "BertGeluOpset17OrtOptimised", "BertGeluNewOpset14OrtOptimised",
    "RobertaOpset14",         "BertGeluDynamoOpset18",     "DistilbertOpset14",
    "RobertaOpset14OrtOptimised", "XlmRobertaOpset17",     "DistilbertOpset17OrtOptimised",
    "BertCrossEncoderOpset14", "RobertaClassifierOpset17OrtOptimised", "BertGeluDynamoOpset20",
    "BertGeluTanhDynamoOpset20", "BertDefaultExportT5", "BertTypesDefaultExportT5", "RobertaDefaultExportT5",
    "XlmRobertaDefaultExportT5", "DistilbertDefaultExportT5"};
constexpr int kCases = static_cast<int>(std::size(kCaseNames));

std::string caseName(const ::testing::TestParamInfo<int> &i) { return kCaseNames[i.param]; }

INSTANTIATE_TEST_SUITE_P(Recorded, OnnxExport, ::testing::Range(0, kCases), caseName);

TEST(OnnxExportCases, EveryRecordedCaseRuns) { EXPECT_EQ(loadCases().size(), size_t(kCases)); }

} // namespace
