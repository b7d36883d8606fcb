//===- PackedTest.cpp - Packed (DIM_TOKENS) plans vs padded plans ---------===//
//
// The default pipeline gives a packed CPU plan (hidden output [-3, H]); the
// unfused --pipeline=none plan stays padded ([-1, -2, H]). The same tiny model,
// after the same passes, built packed and padded (CompileOptions::
// allowPackedPlan) agrees on every valid row of the hidden state and on the pooled
// output: max |packed - padded| / max |padded| <= 1e-5 (the same kernels on the
// same rows; only the layout differs), for fp32 and int8 and for a batch with
// lengths {1, S, 3, S-1}; the padded rows of a packed plan's out_hidden are
// exactly 0. Both layouts are also compared with the float64 reference
// (tests/support/ReferenceEncoder) on the same batch, so a bug they share
// does not pass: fp32 within 1e-5 (measured <= 2.6e-7), int8 within 2e-2
// (measured <= 7.7e-3; the int8 accuracy bounds proper are in PrecisionTest.cpp).
//
// Batch invariance: each sequence of a packed batch gives the same bits (hidden
// rows and pooled output) as when it runs alone, for fp32, int8 and bf16 and on
// every code object this CPU runs; batches whose token counts leave one- and
// two-row GEMM tiles. encc-serve's dynamic batching promises it.
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETest.h"
#include "tests/support/ReferenceEncoder.h"
#include "tests/support/TinyModel.h"

#include "encrt/artifact_generated.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>

using namespace encc::testing;

namespace {

constexpr double kTolerance = 1e-5;
constexpr int kMaxSeq = 20;

TinyModelSpec tinySpec() {
  TinyModelSpec s;
  s.hidden = 64;
  s.heads = 2;
  s.layers = 2;
  s.intermediate = 136;
  s.pooling = "mean";
  s.seed = 4242;
  return s;
}

/// The shape of the artifact's CPU output `index` (0 hidden, 1 pooled).
std::vector<int64_t> outputShape(const std::string &artifact, unsigned index) {
  std::ifstream in(artifact, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GT(bytes.size(), 16u) << artifact;
  if (bytes.size() <= 16)
    return {};
  const encm::Model *m = encm::GetModel(bytes.data());
  EXPECT_TRUE(m->outputs() && m->outputs()->size() > index);
  if (!m->outputs() || m->outputs()->size() <= index)
    return {};
  const auto *shape = m->values()->Get(m->outputs()->Get(index))->shape();
  return std::vector<int64_t>(shape->begin(), shape->end());
}

/// `pipeline` ("" = the default one), plus int8 when asked; allowPacked false:
/// the padded CPU plan even where a packed one is possible.
std::string compileWith(const std::string &modelDir, const std::string &out, const std::string &pipeline,
                        const std::string &quantize = "none", bool allowPacked = true) {
  encc::CompileOptions opt;
  opt.modelDir = modelDir;
  opt.output = out;
  opt.maxSeq = kMaxSeq;
  opt.pipeline = pipeline;
  opt.quantize = quantize;
  opt.allowPackedPlan = allowPacked;
  return compile(opt);
}

struct Batch {
  std::vector<int32_t> ids, lengths;
  int64_t seq;
};

Batch makeBatch(int vocab, std::vector<int32_t> lengths, int64_t seq, uint32_t seed) {
  Batch b{{}, std::move(lengths), seq};
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(5, vocab - 1);
  b.ids.assign(b.lengths.size() * seq, 0);
  for (size_t i = 0; i < b.lengths.size(); ++i)
    for (int t = 0; t < b.lengths[i]; ++t)
      b.ids[i * seq + t] = dist(rng);
  return b;
}

/// Runs `b` on both artifacts' sessions and compares them with each other
/// (kTolerance) and with the float64 reference of `model` (refTolerance).
void comparePackedPadded(encrt::Session &packed, encrt::Session &padded, const Batch &b, const TinyModel &model,
                         double refTolerance) {
  const int hidden = model.spec.hidden;
  std::string lens;
  for (int32_t l : b.lengths)
    lens += " " + std::to_string(l);
  SCOPED_TRACE("lengths" + lens + " at seq " + std::to_string(b.seq));
  // Poison what the packed run must overwrite: padding rows become exactly 0.
  std::vector<float> hidPacked(b.lengths.size() * b.seq * hidden, NAN), poolPacked(b.lengths.size() * hidden);
  encrt::RunResult pad = padded.run(b.ids, b.lengths, b.seq);
  encrt_status *st = encrt_session_run(packed.get(), b.ids.data(), b.lengths.data(), b.lengths.size(), b.seq,
                                       hidPacked.data(), poolPacked.data());
  if (st) {
    std::string msg = encrt_status_message(st);
    encrt_status_free(st);
    FAIL() << msg;
  }
  std::vector<double> got, want;
  for (size_t i = 0; i < b.lengths.size(); ++i)
    for (int64_t t = 0; t < b.seq; ++t)
      for (int k = 0; k < hidden; ++k) {
        const size_t at = (i * b.seq + t) * hidden + k;
        if (t < b.lengths[i]) {
          got.push_back(hidPacked[at]);
          want.push_back(pad.hidden[at]);
        } else {
          ASSERT_EQ(hidPacked[at], 0.0f) << "padding row " << t << " of sequence " << i;
          ASSERT_FALSE(std::signbit(hidPacked[at])) << "padding row " << t << " of sequence " << i;
        }
      }
  EXPECT_LE(maxRelativeError(got, want), kTolerance) << "hidden state, valid rows";

  std::vector<std::vector<int64_t>> ids(b.lengths.size());
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i].assign(b.ids.begin() + i * b.seq, b.ids.begin() + (i + 1) * b.seq);
  ReferenceOutput ref = runReferenceEncoder(model, ids, std::vector<int64_t>(b.lengths.begin(), b.lengths.end()));
  std::vector<double> expected;
  for (size_t i = 0; i < ids.size(); ++i)
    for (int t = 0; t < b.lengths[i]; ++t)
      expected.insert(expected.end(), ref.hidden[i][t].begin(), ref.hidden[i][t].end());
  const double vsReference = maxRelativeError(got, expected);
  std::printf("[ measured ] packed vs float64 reference: %.2e\n", vsReference);
  EXPECT_LE(vsReference, refTolerance) << "packed hidden state vs the float64 reference";

  got.assign(poolPacked.begin(), poolPacked.end());
  want.assign(pad.pooled.begin(), pad.pooled.end());
  EXPECT_LE(maxRelativeError(got, want), kTolerance) << "pooled output";
}

TEST(PackedPlan, DefaultPipelineIsPackedAndUnfusedIsNot) {
  TinyModelSpec s = tinySpec();
  TempDir dir;
  TinyModel model = writeTinyModel(dir.path() + "/m", s);
  const int64_t H = s.hidden;
  const std::string fused = dir.path() + "/fused.encm", none = dir.path() + "/none.encm",
                    int8 = dir.path() + "/int8.encm";
  ASSERT_EQ(compileWith(model.dir, fused, ""), "");
  ASSERT_EQ(compileWith(model.dir, none, "none"), "");
  ASSERT_EQ(compileWith(model.dir, int8, "", "int8"), "");
  EXPECT_EQ(outputShape(fused, 0), (std::vector<int64_t>{encc::kDimTokens, H}));
  EXPECT_EQ(outputShape(fused, 1), (std::vector<int64_t>{encc::kDimBatch, H}));
  EXPECT_EQ(outputShape(int8, 0), (std::vector<int64_t>{encc::kDimTokens, H}));
  EXPECT_EQ(outputShape(none, 0), (std::vector<int64_t>{encc::kDimBatch, encc::kDimSeq, H}));
  EXPECT_EQ(outputShape(none, 1), (std::vector<int64_t>{encc::kDimBatch, H}));
}

class PackedVsPadded : public ::testing::TestWithParam<const char *> {};

TEST_P(PackedVsPadded, AgreeOnValidRowsAndZeroPadding) {
  const std::string quantize = GetParam();
  TinyModelSpec s = tinySpec();
  TempDir dir;
  TinyModel model = writeTinyModel(dir.path() + "/m", s);
  const std::string packedPath = dir.path() + "/packed.encm", paddedPath = dir.path() + "/padded.encm";
  ASSERT_EQ(compileWith(model.dir, packedPath, "", quantize, true), "");
  ASSERT_EQ(compileWith(model.dir, paddedPath, "", quantize, false), "");
  ASSERT_EQ(outputShape(packedPath, 0), (std::vector<int64_t>{encc::kDimTokens, s.hidden}));
  ASSERT_EQ(outputShape(paddedPath, 0), (std::vector<int64_t>{encc::kDimBatch, encc::kDimSeq, s.hidden}));

  encrt::Model packedModel(packedPath), paddedModel(paddedPath);
  encrt::Session packed(packedModel), padded(paddedModel);
  const int S = kMaxSeq;
  const double refTolerance = quantize == "int8" ? 2e-2 : 1e-5;
  // The brief's batch, then shapes that shrink and grow the arena (same
  // batch and seq, fewer tokens; one token; more tokens).
  comparePackedPadded(packed, padded, makeBatch(s.vocab, {1, S, 3, S - 1}, S, 1), model, refTolerance);
  comparePackedPadded(packed, padded, makeBatch(s.vocab, {1, 2, 3, 1}, S, 2), model, refTolerance);
  comparePackedPadded(packed, padded, makeBatch(s.vocab, {1}, 1, 3), model, refTolerance);
  comparePackedPadded(packed, padded, makeBatch(s.vocab, {S, S, 7, S, 1, S - 2, S, 9}, S, 4), model, refTolerance);
}

INSTANTIATE_TEST_SUITE_P(Quantize, PackedVsPadded, ::testing::Values("none", "int8"));

class BatchInvariance : public ::testing::TestWithParam<const char *> {};

TEST_P(BatchInvariance, EachSequenceGivesTheSameBitsAloneAndBatched) {
  const std::string quantize = GetParam();
  TinyModelSpec s = tinySpec();
  TempDir dir;
  TinyModel model = writeTinyModel(dir.path() + "/m", s);
  const std::string path = dir.path() + "/m.encm";
  encc::CompileOptions opt;
  opt.modelDir = model.dir;
  opt.output = path;
  opt.maxSeq = kMaxSeq;
  opt.quantize = quantize;
  opt.cpuLevels = encc::defaultCpuLevels(quantize); // every level, each run below where the CPU can
  ASSERT_EQ(compile(opt), "");
  const int S = kMaxSeq, H = s.hidden;
  // Token totals 74, 115 and 41: GEMM row tails of 2, 3 and 1 rows (8-row tiles).
  const std::vector<Batch> batches = {makeBatch(s.vocab, {1, S, 3, S - 1, 7, 2, S - 3, 1, 4}, S, 7),
                                      makeBatch(s.vocab, {S, S, 7, S, 1, S - 2, S, 9}, S, 8),
                                      makeBatch(s.vocab, {S, 2, S - 1}, S, 9)};
  int ran = 0;
  for (const char *target : {"", "cpu-x86-64-v4-amx", "cpu-x86-64-v4-bf16", "cpu-x86-64-v4-vnni",
                             "cpu-x86-64-v4", "cpu-x86-64-v3", "cpu-x86-64-v2"}) {
    encrt::ModelOptions options;
    options.cpuTarget = target;
    std::unique_ptr<encrt::Model> m;
    try {
      m = std::make_unique<encrt::Model>(path, options);
    } catch (const encrt::Error &err) {
      continue; // not in this artifact, or not on this CPU
    }
    ++ran;
    encrt::Session session(*m);
    for (const Batch &b : batches) {
      SCOPED_TRACE(std::string(m->info().cpu_target) + ", batch of " + std::to_string(b.lengths.size()));
      encrt::RunResult all = session.run(b.ids, b.lengths, b.seq);
      for (size_t i = 0; i < b.lengths.size(); ++i) {
        const int32_t len = b.lengths[i];
        std::vector<int32_t> ids(b.ids.begin() + i * b.seq, b.ids.begin() + i * b.seq + len);
        encrt::RunResult one = session.run(ids, {len}, len);
        for (int t = 0; t < len; ++t)
          for (int k = 0; k < H; ++k)
            ASSERT_EQ(one.hidden[t * H + k], all.hidden[(i * b.seq + t) * H + k])
                << "sequence " << i << " token " << t << " dim " << k;
        for (int k = 0; k < H; ++k)
          ASSERT_EQ(one.pooled[k], all.pooled[i * H + k]) << "sequence " << i << " pooled dim " << k;
      }
    }
  }
  EXPECT_GE(ran, 2) << "the default and at least one forced code object";
}

INSTANTIATE_TEST_SUITE_P(Quantize, BatchInvariance, ::testing::Values("none", "int8", "bf16"));

} // namespace
