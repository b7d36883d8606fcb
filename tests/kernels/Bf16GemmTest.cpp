//===- Bf16GemmTest.cpp - bf16 rounding, packing and linear vs double loops ===//
//
// enc_bf16.h / linearBf16 of enc_sgemm.h. The reference is a double loop over
// the bf16-rounded inputs (rounded by a formula of its own), so the kernel is
// checked for what it promises: exact bf16 products summed in fp32 (error
// relative to sum |x_k w_k|, as for the fp32 kernel). Built four times:
// -march=x86-64-v3 (the AVX2 fallback), x86-64-v4 (the AVX-512F fallback),
// x86-64-v4 -mavx512bf16 (vdpbf16ps) and that plus -mamx-tile -mamx-bf16
// (tdpbf16ps where K is a multiple of 32); each skipped on CPUs without it.
//
//===----------------------------------------------------------------------===//
#include "AmxPermission.h"
#include "KernelTestUtil.h"
#include "enc_sgemm.h"

#include <gtest/gtest.h>


#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace enc_kernels;
using namespace kernel_test;

namespace {

bool cpuCanRun() {
#if defined(__AMX_TILE__)
  return __builtin_cpu_supports("avx512bf16") && amxUsable(22);
#elif defined(__AVX512BF16__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
#elif defined(__AVX512F__)
  return __builtin_cpu_supports("avx512f");
#else
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
}

/// bf16 rounding by another route: the nearest of the two bf16 neighbours in
/// double, ties to the even mantissa.
double refBf16(float f) {
  if (std::isnan(f) || std::isinf(f) || f == 0.0f)
    return f;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint32_t down = u & 0xffff0000u, up = down + 0x10000u;
  float lo, hi;
  std::memcpy(&lo, &down, 4);
  std::memcpy(&hi, &up, 4); // may be inf: then the distance decides
  const double dLo = std::fabs(double(f) - lo);
  const double dHi = std::isinf(hi) ? std::ldexp(1.0, 128) - std::fabs(double(f)) : std::fabs(double(hi) - f);
  if (dLo < dHi)
    return lo;
  if (dHi < dLo)
    return hi;
  return ((down >> 16) & 1u) ? hi : lo;
}

TEST(KernelBf16, Rounding) {
  auto bits = [](float f) { return toBf16Bits(f); };
  EXPECT_EQ(bits(1.0f), 0x3f80);
  EXPECT_EQ(bits(-2.0f), 0xc000);
  EXPECT_EQ(bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80); // tie, down to even
  EXPECT_EQ(bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82); // tie, up to even
  EXPECT_EQ(bits(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);
  EXPECT_EQ(bits(std::numeric_limits<float>::max()), 0x7f80); // overflows to inf
  EXPECT_EQ(bits(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(bits(-0.0f), 0x8000);
  const uint16_t nan = bits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(bf16ToFloat(nan)));
  uint32_t sigNanBits = 0x7f800001u; // a payload only in the low half
  float sigNan;
  std::memcpy(&sigNan, &sigNanBits, 4);
  EXPECT_TRUE(std::isnan(bf16ToFloat(bits(sigNan)))) << "must not become inf";
  // A sweep of bit patterns against the independent rounding.
  uint32_t state = 12345;
  for (int i = 0; i < 200000; ++i) {
    state = state * 1664525u + 1013904223u;
    float f;
    std::memcpy(&f, &state, 4);
    if (std::isnan(f))
      continue;
    ASSERT_EQ(double(bf16ToFloat(bits(f))), refBf16(f)) << "bits 0x" << std::hex << state;
  }
}

TEST(KernelBf16, ConvertSplitsIntoTasks) {
  const int64_t n = 1001;
  auto x = randomVec(n, 3);
  std::vector<uint16_t> y(n, 0xdead);
  for (int32_t t = 0; t < 3; ++t)
    toBf16(x.data(), y.data(), n, t, 3);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(double(bf16ToFloat(y[i])), refBf16(x[i])) << i;
}

TEST(KernelBf16, PackLayout) {
  const int64_t N = 17, K = 4;
  std::vector<uint16_t> w(N * K);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = uint16_t(i + 1);
  std::vector<uint16_t> p(packedWeightsBf16Elems(N, K), 0xffff);
  ASSERT_EQ(p.size(), size_t(2 * K * 16));
  packWeightsBf16(w.data(), N, K, p.data());
  for (int64_t n = 0; n < 32; ++n)
    for (int64_t k = 0; k < K; ++k)
      EXPECT_EQ(p[((n / 16) * K + k / 2 * 2) * 16 + (n % 16) * 2 + k % 2], n < N ? w[n * K + k] : 0)
          << "n=" << n << " k=" << k;
}

double geluRef(double x, bool tanhForm) {
  if (tanhForm)
    return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

/// A linear's operands from random fp32 values (seeds seed..seed+2): x [M, K]
/// and w [N, K] rounded by toBf16Bits, w packed, an fp32 bias.
struct Bf16Linear {
  int64_t M, N, K;
  std::vector<float> xf, wf, b;
  std::vector<uint16_t> x, w, packed;
  Bf16Linear(int64_t M, int64_t N, int64_t K, uint32_t seed)
      : M(M), N(N), K(K), xf(randomVec(M * K, seed)), wf(randomVec(N * K, seed + 1)), b(randomVec(N, seed + 2)),
        x(M * K), w(N * K), packed(packedWeightsBf16Elems(N, K), 0xffff) {
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = toBf16Bits(xf[i]);
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = toBf16Bits(wf[i]);
    packWeightsBf16(w.data(), N, K, packed.data());
  }

  /// bgemmLinearRun with epilogue `epi` into y (float or bf16 bits).
  template <typename Y> void run(int epi, const float *bias, Y *y, int32_t t, int32_t n) const {
    if (epi == kEpiGelu)
      bgemmLinearRun<kEpiGelu>(x.data(), packed.data(), bias, y, M, K, N, t, n);
    else if (epi == kEpiGeluTanh)
      bgemmLinearRun<kEpiGeluTanh>(x.data(), packed.data(), bias, y, M, K, N, t, n);
    else
      bgemmLinearRun<kEpiNone>(x.data(), packed.data(), bias, y, M, K, N, t, n);
  }
};

void testLinear(int64_t M, int64_t N, int64_t K, int epi, bool withBias, uint32_t seed) {
  SCOPED_TRACE(std::string(bgemmPathName()) + " M=" + std::to_string(M) + " N=" + std::to_string(N) +
               " K=" + std::to_string(K) + " epi=" + std::to_string(epi) + " bias=" + std::to_string(withBias));
  const Bf16Linear l(M, N, K, seed);
  const std::vector<float> &xf = l.xf, &wf = l.wf, &b = l.b;
  std::vector<double> xr(M * K), wr(N * K), ref(M * N), scale(M * N);
  for (size_t i = 0; i < xr.size(); ++i)
    xr[i] = refBf16(xf[i]);
  for (size_t i = 0; i < wr.size(); ++i)
    wr[i] = refBf16(wf[i]);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = withBias ? b[j] : 0.0, a = withBias ? std::fabs(b[j]) : 0.0;
      for (int64_t k = 0; k < K; ++k) {
        const double p = xr[i * K + k] * wr[j * K + k];
        s += p;
        a += std::fabs(p);
      }
      ref[i * N + j] = epi == kEpiNone ? s : geluRef(s, epi == kEpiGeluTanh);
      scale[i * N + j] = a;
    }
  const float *bias = withBias ? b.data() : nullptr;
  checkKernel(
      ref, [&](float *y, int32_t t, int32_t n) { l.run(epi, bias, y, t, n); }, 1e-6, 2e-5, &scale);
}

TEST(KernelBf16, LinearShapesAndEpilogues) {
  if (!cpuCanRun())
    GTEST_SKIP() << "this CPU cannot run the " << bgemmPathName() << " kernel";
  uint32_t seed = 1;
  int combo = 0;
  for (int64_t M : {1, 5, 7, 13, 29, 128})
    for (int64_t N : {1, 17, 384, 1536})
      for (int64_t K : {2, 10, 384, 1536}) {
        testLinear(M, N, K, combo % 3, combo % 2 == 0, seed);
        seed += 3;
        ++combo;
        if (HasFatalFailure())
          return;
      }
}

// K past the largest chunk: tiles reloaded and accumulated across chunks.
TEST(KernelBf16, SeveralKChunks) {
  if (!cpuCanRun())
    GTEST_SKIP() << "this CPU cannot run the " << bgemmPathName() << " kernel";
  uint32_t seed = 400;
  for (int64_t K : {kSgemmKCMax + 2, int64_t(1700), int64_t(3072)})
    for (int64_t M : {1, 7, 130}) {
      testLinear(M, 50, K, kEpiGelu, true, seed++);
      if (HasFatalFailure())
        return;
    }
}

// An enc.to_bf16 of the result fused into the linear (a uint16_t output):
// every output is the fp32 kernel's (tested above), rounded as toBf16Bits
// rounds it, whatever the task split; K past the largest chunk included (the
// bf16 output takes K in one chunk, the fp32 kernel in two: the same sums).
TEST(KernelBf16, Bf16OutputIsTheRoundedFp32Output) {
  if (!cpuCanRun())
    GTEST_SKIP() << "this CPU cannot run the " << bgemmPathName() << " kernel";
  uint32_t seed = 900;
  int combo = 0;
  for (int64_t M : {1, 7, 13, 130})
    for (int64_t N : {17, 48, 384})
      for (int64_t K : {int64_t(10), int64_t(384), kSgemmKCMax + 64}) {
        SCOPED_TRACE("M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K));
        const Bf16Linear l(M, N, K, seed);
        seed += 3;
        std::vector<float> y(M * N);
        std::vector<uint16_t> yb(M * N, 0xdead);
        const int epi = combo++ % 3;
        l.run(epi, l.b.data(), y.data(), 0, 1);
        for (int32_t t = 0; t < 3; ++t)
          l.run(epi, l.b.data(), yb.data(), t, 3);
        for (int64_t i = 0; i < M * N; ++i)
          ASSERT_EQ(yb[i], toBf16Bits(y[i])) << "output " << i << " (fp32 " << y[i] << ")";
      }
}

TEST(KernelBf16, LinearWrapperMatchesRun) {
  if (!cpuCanRun())
    GTEST_SKIP() << "this CPU cannot run the " << bgemmPathName() << " kernel";
  constexpr int K = 40, N = 50;
  const int64_t M = 9;
  const Bf16Linear l(M, N, K, 7);
  std::vector<float> a(M * N), c(M * N);
  linearBf16<K, N, kEpiGelu>(l.x.data(), l.packed.data(), l.b.data(), a.data(), M, 0, 1);
  l.run(kEpiGelu, l.b.data(), c.data(), 0, 1);
  EXPECT_EQ(a, c);
}

} // namespace
