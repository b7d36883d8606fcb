//===- PassesTest.cpp - Every pass preserves the model's output -----------===//
//
// Compiles the same model unfused (--pipeline=none: the decompose pass
// alone), with decompose + each pass alone (erf GELU) or decompose + each
// cumulative prefix of the default pipeline (tanh GELU), and the default
// pipeline on the frontend's own attention, and checks the hidden states
// (valid tokens) against the unfused build and against the float64 reference:
// max |got - want| / max |want| <= 1e-5 (measured <= 8e-7 on both tiny models,
// printed as "[ measured ]"; the gate leaves about 12x). On
// all-MiniLM-L6-v2: sentence embeddings cosine >= 0.99999 vs the unfused build.
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/support/NanAware.h"
#include "tests/support/RecordedReference.h"
#include "tests/support/ReferenceEncoder.h"
#include "tests/support/TinyModel.h"

#include "llvm/ADT/StringExtras.h"

#include <cstdio>
#include <random>

using namespace encc::testing;

namespace {

constexpr double kTolerance = 1e-5;

struct Batch {
  std::vector<int32_t> ids, lengths;
  int64_t seq;
};

Batch mixedBatch(int vocab, int64_t seq) {
  Batch b{{}, {static_cast<int32_t>(seq), 1, 5, static_cast<int32_t>(seq - 2)}, seq};
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dist(5, vocab - 1);
  b.ids.assign(b.lengths.size() * seq, 0);
  for (size_t i = 0; i < b.lengths.size(); ++i)
    for (int t = 0; t < b.lengths[i]; ++t)
      b.ids[i * seq + t] = dist(rng);
  return b;
}

/// Hidden states of the valid tokens, as doubles.
std::vector<double> runValid(const std::string &artifact, const Batch &b, int hidden, int32_t *steps = nullptr) {
  encrt::Model model(artifact);
  if (steps)
    *steps = model.info().num_steps;
  encrt::Session session(model);
  encrt::RunResult r = session.run(b.ids, b.lengths, b.seq);
  std::vector<double> out;
  for (size_t i = 0; i < b.lengths.size(); ++i)
    out.insert(out.end(), r.hidden.begin() + i * b.seq * hidden,
               r.hidden.begin() + (i * b.seq + b.lengths[i]) * hidden);
  return out;
}

std::string compileWith(const std::string &modelDir, const std::string &out, const std::string &pipeline) {
  encc::CompileOptions opt;
  opt.modelDir = modelDir;
  opt.output = out;
  opt.maxSeq = 20;
  opt.pipeline = pipeline;
  // One code object per build (34 builds here): what a pass changes is the
  // same at every CPU level, and every level is checked in MultiTarget.
  opt.cpuLevels = {"x86-64-v3"};
  return compile(opt);
}

class PassesPreserveOutput : public ::testing::TestWithParam<const char *> {};

TEST_P(PassesPreserveOutput, TinyModel) {
  TinyModelSpec spec;
  spec.hidden = 64;
  spec.heads = 2;
  spec.layers = 2;
  spec.intermediate = 136;
  spec.act = GetParam();
  spec.seed = 99;
  spec.linearGain = 3; // GELU inputs reach |x| 2-4, where erf and tanh differ
  TempDir dir;
  TinyModel model = writeTinyModel(dir.path() + "/m", spec);
  Batch batch = mixedBatch(spec.vocab, 20);

  // The float64 reference for the same batch: every build is compared with it
  // as well as with the unfused build (a bug shared by both builds passes the
  // differential check, not this one).
  std::vector<std::vector<int64_t>> ids(batch.lengths.size());
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i].assign(batch.ids.begin() + i * batch.seq, batch.ids.begin() + (i + 1) * batch.seq);
  ReferenceOutput ref =
      runReferenceEncoder(model, ids, std::vector<int64_t>(batch.lengths.begin(), batch.lengths.end()));
  std::vector<double> expected;
  for (size_t i = 0; i < ids.size(); ++i)
    for (int t = 0; t < batch.lengths[i]; ++t)
      expected.insert(expected.end(), ref.hidden[i][t].begin(), ref.hidden[i][t].end());

  ASSERT_EQ(compileWith(model.dir, dir.path() + "/none.encm", "none"), "");
  int32_t unfusedSteps = 0, fusedSteps = 0;
  std::vector<double> unfused = runValid(dir.path() + "/none.encm", batch, spec.hidden, &unfusedSteps);
  double worstVsUnfused = 0, worstVsReference = maxRelativeError(unfused, expected);
  EXPECT_LE(worstVsReference, kTolerance) << "unfused build vs the float64 reference";

  // Each pass alone with the erf GELU, each prefix of the pipeline with the
  // tanh one (both with both would double the test's ~70 s of compiles).
  const bool singles = spec.act == "gelu";
  const std::vector<std::string> &passes = encc::defaultPassNames();
  for (size_t i = 0; i < passes.size(); ++i) {
    std::vector<std::string> prefix(passes.begin(), passes.begin() + i + 1);
    for (const std::string &pipeline :
         {std::string(encc::kDecomposePass) + "," + (singles ? passes[i] : llvm::join(prefix, ","))}) {
      std::string path = dir.path() + "/p.encm";
      ASSERT_EQ(compileWith(model.dir, path, pipeline), "") << pipeline;
      int32_t steps = 0;
      std::vector<double> fused = runValid(path, batch, spec.hidden, &steps);
      double vsUnfused = maxRelativeError(fused, unfused), vsReference = maxRelativeError(fused, expected);
      EXPECT_LE(vsUnfused, kTolerance) << "pipeline " << pipeline << " vs the unfused build";
      EXPECT_LE(vsReference, kTolerance) << "pipeline " << pipeline << " vs the float64 reference";
      worstVsUnfused = errorMax(worstVsUnfused, vsUnfused);
      worstVsReference = errorMax(worstVsReference, vsReference);
    }
  }
  std::printf("[ measured ] worst max relative error over %zu pipelines: %.2e vs unfused, %.2e vs float64\n",
              passes.size(), worstVsUnfused, worstVsReference);
  ASSERT_EQ(compileWith(model.dir, dir.path() + "/all.encm", ""), "");
  EXPECT_LE(maxRelativeError(runValid(dir.path() + "/all.encm", batch, spec.hidden, &fusedSteps), expected),
            kTolerance)
      << "default pipeline vs the float64 reference";
  EXPECT_LT(fusedSteps, unfusedSteps) << "the full pipeline should launch fewer kernels";
}

INSTANTIATE_TEST_SUITE_P(Activations, PassesPreserveOutput, ::testing::Values("gelu", "gelu_new"));

TEST(PassesPreserveOutputMiniLM, Embeddings) {
  MinilmReference ref = loadMinilmReference();
  TempDir dir;
  encc::CompileOptions opt;
  opt.modelDir = minilmDir();
  opt.output = dir.path() + "/none.encm";
  opt.pipeline = "none";
  ASSERT_EQ(compile(opt), "");
  opt.output = dir.path() + "/all.encm";
  opt.pipeline = "";
  ASSERT_EQ(compile(opt), "");

  std::vector<std::string> texts;
  for (auto &s : ref.sentences)
    texts.push_back(s.text);
  encrt::Model unfusedModel(dir.path() + "/none.encm"), fusedModel(dir.path() + "/all.encm");
  EXPECT_LT(fusedModel.info().num_steps, unfusedModel.info().num_steps);
  encrt::Session unfused(unfusedModel), fused(fusedModel);
  std::vector<float> a = unfused.embed(texts), b = fused.embed(texts);
  const size_t h = 384;
  double worst = 1;
  for (size_t i = 0; i < texts.size(); ++i) {
    double c = cosine(std::vector<double>(a.begin() + i * h, a.begin() + (i + 1) * h),
                      std::vector<double>(b.begin() + i * h, b.begin() + (i + 1) * h));
    worst = std::min(worst, c);
    EXPECT_GE(c, 0.99999) << texts[i];
    EXPECT_GE(cosine(std::vector<double>(b.begin() + i * h, b.begin() + (i + 1) * h), ref.sentences[i].embedding),
              0.9999)
        << texts[i];
  }
  std::cout << "worst cosine fused vs unfused over " << texts.size() << " sentences: " << worst << "\n";

  Batch batch = mixedBatch(30000, 128);
  EXPECT_LE(maxRelativeError(runValid(dir.path() + "/all.encm", batch, h), runValid(dir.path() + "/none.encm", batch, h)),
            kTolerance);
}

} // namespace
