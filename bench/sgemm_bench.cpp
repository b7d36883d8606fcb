//===- sgemm_bench.cpp - fp32 linear: packed micro-kernel vs dot tiles ----===//
//
// Single task (task 0 of 1), MiniLM Linear shapes (K x N = 384x384 for
// q/k/v/out, 384x1536 FFN up, 1536x384 FFN down) at M = 1, 128, 1024 rows:
//   BM_Sgemm:   enc_sgemm.h's linear over weights packed by packWeightsF32;
//   BM_DotTile: the previous enc.linear kernel (4x3 dot-product tiles over
//               the [N, K] layout), kept here only as the baseline.
// Counters: GFLOP/s (2*M*N*K per call) and of_peak, the share of this core's
// fp32 FMA peak measured once in main() (12 independent ymm and zmm FMA
// chains, the better of the two; CPU time like the benchmarks).
//
//   sgemm_bench [--benchmark_filter=Sgemm] [--benchmark_repetitions=5]
//
//===----------------------------------------------------------------------===//

#include "enc_gemm.h"
#include "enc_sgemm.h"

#include <benchmark/benchmark.h>

#include <immintrin.h>

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace enc_kernels;

namespace {

double gPeak = 0.0; // GFLOP/s, measured in main()

std::vector<float> randomFloats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

/// The previous enc.linear: K-contiguous dot products, TR x TC tiles.
template <int TR, int TC>
void dotTileLinear(const float *x, const float *w, const float *b, float *y,
                   int64_t M, int64_t K, int64_t N) {
  int64_t i = 0;
  for (; i + TR <= M; i += TR) {
    int64_t j = 0;
    for (; j + TC <= N; j += TC) {
      float t[TR][TC];
      dotTile<TR, TC>(x + i * K, K, w + j * K, K, K, t);
      for (int r = 0; r < TR; ++r)
        for (int c = 0; c < TC; ++c)
          y[(i + r) * N + j + c] = t[r][c] + b[j + c];
    }
    for (; j < N; ++j) {
      float t[TR][1];
      dotTile<TR, 1>(x + i * K, K, w + j * K, K, K, t);
      for (int r = 0; r < TR; ++r)
        y[(i + r) * N + j] = t[r][0] + b[j];
    }
  }
  for (; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float t[1][1];
      dotTile<1, 1>(x + i * K, K, w + j * K, K, K, t);
      y[i * N + j] = t[0][0] + b[j];
    }
}

void setCounters(benchmark::State &state, int64_t M, int64_t N, int64_t K) {
  const double flops = 2.0 * M * N * K;
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  if (gPeak > 0.0)
    state.counters["of_peak"] = benchmark::Counter(
        flops / 1e9 / gPeak, benchmark::Counter::kIsIterationInvariantRate);
}

template <int K, int N> void BM_Sgemm(benchmark::State &state) {
  const int64_t M = state.range(0);
  const auto x = randomFloats(size_t(M) * K, 1, -2.0f, 2.0f);
  const auto w = randomFloats(size_t(N) * K, 2, -0.1f, 0.1f);
  const auto b = randomFloats(N, 3, -0.1f, 0.1f);
  std::vector<float> packed(packedWeightsF32Floats(N, K)), y(size_t(M) * N);
  packWeightsF32(w.data(), N, K, packed.data());
  for (auto _ : state) {
    linear<K, N, kEpiNone>(x.data(), packed.data(), b.data(), y.data(), M, 0,
                           1);
    benchmark::ClobberMemory();
  }
  setCounters(state, M, N, K);
  state.SetLabel(sgemmPathName());
}

template <int K, int N> void BM_DotTile(benchmark::State &state) {
  const int64_t M = state.range(0);
  const auto x = randomFloats(size_t(M) * K, 1, -2.0f, 2.0f);
  const auto w = randomFloats(size_t(N) * K, 2, -0.1f, 0.1f);
  const auto b = randomFloats(N, 3, -0.1f, 0.1f);
  std::vector<float> y(size_t(M) * N);
  for (auto _ : state) {
    dotTileLinear<4, 3>(x.data(), w.data(), b.data(), y.data(), M, K, N);
    benchmark::ClobberMemory();
  }
  setCounters(state, M, N, K);
}

#define ENC_SGEMM_BENCHES(K, N)                                                \
  BENCHMARK_TEMPLATE(BM_Sgemm, K, N)                                           \
      ->ArgName("M")                                                           \
      ->Arg(1)                                                                 \
      ->Arg(128)                                                               \
      ->Arg(1024)                                                              \
      ->Unit(benchmark::kMicrosecond);                                         \
  BENCHMARK_TEMPLATE(BM_DotTile, K, N)                                         \
      ->ArgName("M")                                                           \
      ->Arg(1)                                                                 \
      ->Arg(128)                                                               \
      ->Arg(1024)                                                              \
      ->Unit(benchmark::kMicrosecond);

ENC_SGEMM_BENCHES(384, 384)
ENC_SGEMM_BENCHES(384, 1536)
ENC_SGEMM_BENCHES(1536, 384)

/// CPU time of this thread, like the benchmarks' counters (the machine may
/// be shared, so wall time would understate the peak).
double threadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

/// GFLOP/s of 12 independent FMA chains on V (2 * lanes flops each).
template <class V, class Fma>
double fmaPeak(V a, V b, Fma fma, int lanes) {
  constexpr int kAcc = 12;
  constexpr int64_t kIters = 200000, kInner = 128;
  V acc[kAcc];
  for (int i = 0; i < kAcc; ++i)
    acc[i] = a;
  const double t0 = threadCpuSeconds();
  for (int64_t it = 0; it < kIters; ++it) {
    for (int64_t j = 0; j < kInner; ++j) {
#pragma GCC unroll 12
      for (int i = 0; i < kAcc; ++i)
        acc[i] = fma(acc[i], a, b);
    }
    // Keeps the accumulators in registers yet observable.
#pragma GCC unroll 12
    for (int i = 0; i < kAcc; ++i)
      asm volatile("" : "+x"(acc[i]));
  }
  const double s = threadCpuSeconds() - t0;
  for (int i = 0; i < kAcc; ++i)
    benchmark::DoNotOptimize(acc[i]);
  return 2.0 * lanes * kAcc * double(kIters * kInner) / s / 1e9;
}

} // namespace

int main(int argc, char **argv) {
  const double ymm = fmaPeak(
      _mm256_set1_ps(0.5f), _mm256_set1_ps(0.999f),
      [](__m256 c, __m256 a, __m256 b) { return _mm256_fmadd_ps(a, b, c); }, 8);
  gPeak = ymm;
  std::printf("fp32 FMA peak (1 core): ymm %.1f GFLOP/s", ymm);
#if defined(__AVX512F__)
  const double zmm = fmaPeak(
      _mm512_set1_ps(0.5f), _mm512_set1_ps(0.999f),
      [](__m512 c, __m512 a, __m512 b) { return _mm512_fmadd_ps(a, b, c); },
      16);
  gPeak = std::max(gPeak, zmm);
  std::printf(", zmm %.1f GFLOP/s", zmm);
#endif
  std::printf("; sgemm path %s\n", sgemmPathName());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
