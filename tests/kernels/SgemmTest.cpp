//===- SgemmTest.cpp - fp32 linear over packed weights vs double loops ----===//
//
// enc_sgemm.h on odd and model shapes (every M x N x K of M in {1, 5, 7, 13,
// 128}, N in {1, 17, 384, 1536}, K in {1, 9, 384, 1536}), every epilogue,
// with and without bias, as 1 task and split into 3 (each element written by
// exactly one task). Built twice: -march=x86-64-v3 (the AVX2 6x16 kernel)
// and -march=x86-64-v4 (the AVX-512 8x32 kernel, skipped without avx512f).
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "enc_sgemm.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace enc_kernels;
using namespace kernel_test;

namespace {

double geluRef(double x, bool tanhForm) {
  if (tanhForm)
    return 0.5 * x *
           (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

bool cpuCanRun() {
#if defined(__AVX512F__)
  return __builtin_cpu_supports("avx512f");
#else
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
}

void testLinear(int64_t M, int64_t N, int64_t K, int epi, bool withBias,
                uint32_t seed) {
  SCOPED_TRACE(std::string(sgemmPathName()) + " M=" + std::to_string(M) +
               " N=" + std::to_string(N) + " K=" + std::to_string(K) +
               " epi=" + std::to_string(epi) +
               " bias=" + std::to_string(withBias));
  auto x = randomVec(M * K, seed), w = randomVec(N * K, seed + 1),
       b = randomVec(N, seed + 2);
  std::vector<float> packed(packedWeightsF32Floats(N, K), -1.0f);
  packWeightsF32(w.data(), N, K, packed.data());
  std::vector<double> ref(M * N), scale(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = withBias ? b[j] : 0.0, a = withBias ? std::fabs(b[j]) : 0.0;
      for (int64_t k = 0; k < K; ++k) {
        const double p = double(x[i * K + k]) * w[j * K + k];
        s += p;
        a += std::fabs(p);
      }
      ref[i * N + j] = epi == kEpiNone ? s : geluRef(s, epi == kEpiGeluTanh);
      scale[i * N + j] = a; // |gelu'| <= 1.13, covered by the 2e-5 below
    }
  const float *bias = withBias ? b.data() : nullptr;
  // fp32 accumulation: error relative to sum |x_k w_k|.
  checkKernel(
      ref,
      [&](float *y, int32_t t, int32_t n) {
        if (epi == kEpiGelu)
          sgemmLinearRun<kEpiGelu>(x.data(), packed.data(), bias, y, M, K, N,
                                   t, n);
        else if (epi == kEpiGeluTanh)
          sgemmLinearRun<kEpiGeluTanh>(x.data(), packed.data(), bias, y, M, K,
                                       N, t, n);
        else
          sgemmLinearRun<kEpiNone>(x.data(), packed.data(), bias, y, M, K, N,
                                   t, n);
      },
      1e-6, 2e-5, &scale);
}

TEST(KernelSgemm, PackLayout) {
  const int64_t N = 17, K = 3;
  std::vector<float> w(N * K);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = float(i + 1);
  std::vector<float> p(packedWeightsF32Floats(N, K), -1.0f);
  ASSERT_EQ(p.size(), size_t(2 * K * 16));
  packWeightsF32(w.data(), N, K, p.data());
  for (int64_t n = 0; n < 32; ++n)
    for (int64_t k = 0; k < K; ++k)
      EXPECT_EQ(p[((n / 16) * K + k) * 16 + n % 16], n < N ? w[n * K + k] : 0.0f)
          << "n=" << n << " k=" << k;
}

TEST(KernelSgemm, AllShapesAndEpilogues) {
  if (!cpuCanRun())
    GTEST_SKIP() << "this CPU cannot run the " << sgemmPathName() << " kernel";
  uint32_t seed = 1;
  int combo = 0;
  for (int64_t M : {1, 5, 7, 13, 128})
    for (int64_t N : {1, 17, 384, 1536})
      for (int64_t K : {1, 9, 384, 1536}) {
        testLinear(M, N, K, combo % 3, combo % 2 == 0, seed);
        seed += 3;
        ++combo;
        if (HasFatalFailure())
          return;
      }
}

TEST(KernelSgemm, EveryEpilogueOnModelShapes) {
  if (!cpuCanRun())
    GTEST_SKIP() << "this CPU cannot run the " << sgemmPathName() << " kernel";
  for (int epi : {kEpiNone, kEpiGelu, kEpiGeluTanh})
    for (bool bias : {false, true}) {
      testLinear(13, 1536, 384, epi, bias, 100 + epi);
      testLinear(7, 384, 1536, epi, bias, 200 + epi);
      testLinear(5, 33, 17, epi, bias, 300 + epi);
    }
}

// K past the largest chunk (kSgemmKCMax): the tiles are reloaded and
// accumulated across chunks, equal (3072) and uneven (1700, 4700) ones, with
// the epilogue applied only after the last.
TEST(KernelSgemm, SeveralKChunks) {
  if (!cpuCanRun())
    GTEST_SKIP() << "this CPU cannot run the " << sgemmPathName() << " kernel";
  uint32_t seed = 400;
  for (int64_t K : {kSgemmKCMax + 1, int64_t(1700), int64_t(3072), int64_t(4700)})
    for (int64_t M : {1, 7, 130})
      for (int epi : {kEpiNone, kEpiGelu}) {
        testLinear(M, 50, K, epi, epi == kEpiGelu, seed++);
        if (HasFatalFailure())
          return;
      }
}

TEST(KernelSgemm, LinearWrapperMatchesRun) {
  if (!cpuCanRun())
    GTEST_SKIP() << "this CPU cannot run the " << sgemmPathName() << " kernel";
  constexpr int K = 40, N = 50;
  const int64_t M = 9;
  auto x = randomVec(M * K, 7), w = randomVec(N * K, 8), b = randomVec(N, 9);
  std::vector<float> packed(packedWeightsF32Floats(N, K));
  packWeightsF32(w.data(), N, K, packed.data());
  std::vector<float> a(M * N), c(M * N);
  linear<K, N, kEpiGelu>(x.data(), packed.data(), b.data(), a.data(), M, 0, 1);
  sgemmLinearRun<kEpiGelu>(x.data(), packed.data(), b.data(), c.data(), M, K,
                           N, 0, 1);
  EXPECT_EQ(a, c);
}

} // namespace
