//===- RandomWeightsTest.cpp - Artifacts with weights generated at load ---===//
//
// Model.weights_fill: the file stores no weight bytes and the runtime fills
// every Weight value from (seed, weight_offset). Checked: the generator's
// value ranges and bit patterns per dtype, that it is counter-based (any
// sub-range fills alike), that a random-weights artifact loads and runs
// deterministically and differently per seed, that damaged ones fail with one
// line, and that a CUDA-only artifact (empty CPU plan) passes verification.
//
//===----------------------------------------------------------------------===//
#include "Artifact.h"
#include "Failure.h"
#include "CudaTestPlan.h"
#include "TestUtil.h"
#include "encrt/float16.h"

#include <cmath>
#include <cstring>

using namespace encrt::test;
using encrt::rt::Artifact;
using encrt::rt::fillRandomWeights;
using K = encm::ValueKind;
using D = encm::DType;

namespace {

std::vector<uint8_t> filled(D dtype, uint64_t bytes, uint64_t seed = 3, uint64_t offset = 128) {
  std::vector<uint8_t> buf(bytes, 0);
  fillRandomWeights(buf.data(), 0, bytes, dtype, seed, offset);
  return buf;
}

/// The runtime test model with its weights generated from `seed`.
ArtifactSpec randomSpec(const std::vector<uint8_t> &kernels, uint64_t seed) {
  ArtifactSpec s = TestModel::spec(kernels);
  s.weightsFillSeed = seed;
  return s;
}

/// Runs ids {4, 5, 6} and returns the hidden state.
std::vector<float> runOnce(encrt_model *m) {
  std::vector<int32_t> ids = {4, 5, 6}, lengths = {3};
  std::vector<float> hidden(3 * TestModel::kHidden);
  encrt_session *s = nullptr;
  EXPECT_EQ(encrt_session_create(m, nullptr, &s), nullptr);
  encrt_status *st = encrt_session_run(s, ids.data(), lengths.data(), 1, 3, hidden.data(), nullptr);
  EXPECT_EQ(st, nullptr) << encrt_status_message(st);
  encrt_status_free(st);
  encrt_session_release(s);
  return hidden;
}

} // namespace

TEST(FillRandomWeights, F32RangeAndSpread) {
  auto buf = filled(D::F32, 4096 * 4);
  const float *f = reinterpret_cast<const float *>(buf.data());
  double sum = 0, sq = 0;
  for (int i = 0; i < 4096; ++i) {
    ASSERT_TRUE(std::isfinite(f[i]));
    ASSERT_LE(std::fabs(f[i]), 0.05f);
    sum += f[i];
    sq += double(f[i]) * f[i];
  }
  // Uniform on [-0.05, 0.05]: mean 0, std 0.0289.
  EXPECT_NEAR(sum / 4096, 0.0, 0.003);
  EXPECT_NEAR(std::sqrt(sq / 4096), 0.0289, 0.002);
}

TEST(FillRandomWeights, HalfAndBFloatBitPatterns) {
  auto h = filled(D::F16, 8192);
  auto bf = filled(D::BF16, 8192);
  int nonzero = 0;
  for (int i = 0; i < 4096; ++i) {
    uint16_t hb, bb;
    std::memcpy(&hb, h.data() + 2 * i, 2);
    std::memcpy(&bb, bf.data() + 2 * i, 2);
    float hv = encm_f16_to_f32(hb);
    uint32_t fb = uint32_t(bb) << 16;
    float bv;
    std::memcpy(&bv, &fb, 4);
    ASSERT_TRUE(std::isfinite(hv) && std::fabs(hv) <= 0.05f) << hb;
    ASSERT_TRUE(std::isfinite(bv) && std::fabs(bv) <= 0.05f) << bb;
    nonzero += hv != 0;
  }
  EXPECT_GT(nonzero, 4000);
}

TEST(FillRandomWeights, IntegerRanges) {
  auto i8 = filled(D::I8, 65536);
  int hist[256] = {};
  for (uint8_t b : i8)
    hist[b]++;
  EXPECT_EQ(hist[0x80], 0) << "-128 must not occur";
  EXPECT_GT(hist[0x7F], 0);
  EXPECT_GT(hist[0x81], 0);
  auto i32 = filled(D::I32, 4096 * 4);
  const int32_t *v = reinterpret_cast<const int32_t *>(i32.data());
  for (int i = 0; i < 4096; ++i)
    ASSERT_TRUE(v[i] >= -128 && v[i] <= 127) << v[i];
}

TEST(FillRandomWeights, CounterBasedAndKeyed) {
  const uint64_t n = 1000; // not a multiple of 8: the tail is written too
  auto whole = filled(D::U8, n);
  std::vector<uint8_t> parts(n, 0);
  fillRandomWeights(parts.data(), 0, 512, D::U8, 3, 128);
  fillRandomWeights(parts.data(), 512, n, D::U8, 3, 128);
  EXPECT_EQ(whole, parts);
  EXPECT_NE(whole, filled(D::U8, n, /*seed=*/4));
  EXPECT_NE(whole, filled(D::U8, n, 3, /*offset=*/192));
  EXPECT_NE(whole[n - 1] | whole[n - 2] | whole[n - 3], 0);
}

TEST_F(RuntimeTest, RandomWeightsLoadRunDeterministic) {
  const auto regular = writeArtifact(TestModel::spec(kernels()));
  const auto file = writeArtifact(randomSpec(kernels(), 11));
  const uint64_t weightBytes = TestModel::spec(kernels()).weights.size();
  EXPECT_LE(file.size() + weightBytes - 64, regular.size()) << "weights must not be stored";

  encrt_model *a = load(file);
  ASSERT_NE(a, nullptr);
  encrt_model_info info;
  encrt_model_get_info(a, &info, sizeof info);
  EXPECT_EQ(info.weight_bytes, weightBytes);
  std::vector<float> h1 = runOnce(a);
  encrt_model_release(a);
  encrt_model *b = load(file);
  ASSERT_NE(b, nullptr);
  std::vector<float> h2 = runOnce(b);
  encrt_model_release(b);
  EXPECT_EQ(h1, h2) << "same artifact, same weights";
  // hidden = 1.5 * (table + bias), table in [-0.05, 0.05], bias 0.01 * h.
  for (size_t i = 0; i < h1.size(); ++i) {
    ASSERT_TRUE(std::isfinite(h1[i]));
    ASSERT_LE(std::fabs(h1[i]), 1.5f * (0.05f + 0.01f * TestModel::kHidden));
  }
  encrt_model *c = load(writeArtifact(randomSpec(kernels(), 12)));
  ASSERT_NE(c, nullptr);
  EXPECT_NE(runOnce(c), h1) << "another seed, other weights";
  encrt_model_release(c);

  auto art = Artifact::open(write(file, "again.encm"));
  EXPECT_TRUE(art->randomWeights());
  EXPECT_EQ(art->randomWeightsSeed(), 11u);
  EXPECT_TRUE(art->hasCpuPlan());
  auto plain = Artifact::open(write(regular, "plain.encm"));
  EXPECT_FALSE(plain->randomWeights());
}

TEST_F(RuntimeTest, RandomWeightsDamage) {
  const ArtifactSpec base = randomSpec(kernels(), 5);
  struct Case {
    const char *name;
    void (*mutate)(ArtifactSpec &);
    std::string fragment;
  };
  const Case cases[] = {
      {"value past the region", [](ArtifactSpec &s) { s.values[3].weightOffset = 1 << 20; },
       "weight value 3 [1048576, +128) lies outside the weights region"},
      {"huge region", [](ArtifactSpec &s) { s.weightsSize = uint64_t(1) << 50; },
       "of generated weights exceeds the limit"},
      {"offset past the end", [](ArtifactSpec &s) { s.weightsOffset = uint64_t(1) << 30; },
       "weights_offset 1073741824 lies past the end of the data"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    ArtifactSpec s = base;
    c.mutate(s);
    expectLoadError(writeArtifact(s), ENCRT_INVALID_ARTIFACT, c.fragment);
  }
  // Any flipped byte or truncation is caught by the checksum.
  auto file = writeArtifact(base);
  auto flipped = file;
  flipped[file.size() / 2] ^= 0x20;
  expectLoadError(flipped, ENCRT_INVALID_ARTIFACT, "checksum mismatch");
  expectLoadError(std::vector<uint8_t>(file.begin(), file.end() - 40), ENCRT_INVALID_ARTIFACT, "");
}

TEST_F(RuntimeTest, CudaOnlyArtifactVerifies) {
  ArtifactSpec s = TestModel::spec(kernels());
  s.codes.clear();
  addCudaPlan(s);
  dropCpuPlan(s);
  s.cuda->values[2].dtype = D::F16; // the table as F16: half the bytes
  s.cuda->values[2].weightBytes /= 2;
  s.weightsFillSeed = 9;
  auto art = Artifact::open(write(writeArtifact(s)));
  EXPECT_FALSE(art->hasCpuPlan());
  EXPECT_TRUE(art->randomWeights());
  // The CUDA plan's weights are generated: the F16 table is finite and small.
  const encm::Value &table = *art->model().cuda()->values()->Get(2);
  const auto *h = static_cast<const uint16_t *>(art->weightData(table));
  for (int i = 0; i < TestModel::kVocab * TestModel::kHidden; ++i)
    ASSERT_LE(std::fabs(encm_f16_to_f32(h[i])), 0.05f);

  // A CUDA plan weight outside the region, and a code_object that is not cuda.
  ArtifactSpec bad = s;
  bad.cuda->values[3].weightOffset = 1 << 20;
  EXPECT_THROW(
      {
        try {
          Artifact::open(write(writeArtifact(bad), "bad1.encm"));
        } catch (const encrt::rt::Failure &f) {
          EXPECT_NE(std::string(f.what()).find("weight value 3 [1048576, +"), std::string::npos) << f.what();
          EXPECT_NE(std::string(f.what()).find("lies outside the weights region"),
                    std::string::npos)
              << f.what();
          throw;
        }
      },
      encrt::rt::Failure);
  bad = s;
  bad.codes[0].target = "cpu-x86-64-v2";
  EXPECT_THROW(Artifact::open(write(writeArtifact(bad), "bad2.encm")), encrt::rt::Failure);
  // Without a CUDA plan an empty CPU plan is still an error.
  bad = s;
  bad.cuda.reset();
  EXPECT_THROW(Artifact::open(write(writeArtifact(bad), "bad3.encm")), encrt::rt::Failure);
}
