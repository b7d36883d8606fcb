//===- sgemm_bench.cpp - fp32 linear: packed micro-kernel vs dot tiles ----===//
//
// Linear shapes of MiniLM (K x N = 384x384 q/k/v/out, 384x1152 fused qkv,
// 384x1536 FFN up, 1536x384 FFN down) and BERT-base (768x768, 768x2304,
// 768x3072, 3072x768) at M = 1, 128, 1024 rows:
//   BM_Sgemm:   enc_sgemm.h's linear over weights packed by packWeightsF32,
//               args M, blk (the blocking, benchBlocking: 0 = the header's,
//               1 = KC 256, 2-4 other KC, 5 = columns first everywhere,
//               6 = rows first everywhere; ratios measured in one run)
//               and thr: 1 = task 0 of 1 (CPU time); 2 = the runtime's
//               min(8, M*N/4096) tasks grabbed by two threads (wall time),
//               cycling through copies of the weights larger than L3 so
//               that they stream from DRAM as in a whole model;
//   BM_DotTile: the previous enc.linear kernel (4x3 dot-product tiles over
//               the [N, K] layout), kept here only as the baseline.
// Counters: GFLOP/s (2*M*N*K per call) and of_peak, the share of ONE core's
// fp32 FMA peak measured once in main() (12 independent ymm and zmm FMA
// chains, the better of the two; CPU time like the benchmarks); main() also
// prints the peak of both cores at once. BM_Bgemm's share is of the bf16
// peak: vdpbf16ps chains (sgemm_bench_v4bf16), or on AMX tdpbf16ps with
// four independent tiles (sgemm_bench_v4amx, where the linears use tiles).
//
//   sgemm_bench [--benchmark_filter='Sgemm<768, 2304>.*thr:2']
//               [--benchmark_repetitions=5]
//
//===----------------------------------------------------------------------===//

#include "enc_gemm.h"
#include "enc_sgemm.h"
#if defined(__AMX_TILE__)
#include "AmxPermission.h"
#include "amx_tile_peak.h"
#endif

#include <benchmark/benchmark.h>

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <cstdio>
#include <functional>
#include <cstdlib>
#include <random>
#include <thread>
#include <type_traits>
#include <vector>

using namespace enc_kernels;

namespace {

double gPeak = 0.0; // GFLOP/s, measured in main()
/// The bf16 linear's peak: vdpbf16ps chains with AVX512-BF16, else gPeak
/// (the fallback widens to fp32 FMAs).
double gBf16Peak = 0.0;

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

void setCounters(benchmark::State &state, int64_t M, int64_t N, int64_t K, double peak = gPeak) {
  const double flops = 2.0 * M * N * K;
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  if (peak > 0.0)
    state.counters["of_peak"] = benchmark::Counter(
        flops / 1e9 / peak, benchmark::Counter::kIsIterationInvariantRate);
}

/// Blockings compared in one process (arg "blk"): 0 = the header's
/// sgemmBlocking (K in equal chunks of <= 1536; bgemmBlocking for bf16); 1 = the previous fixed one
/// (KC 256); 2, 3, 4 = K chunks of <= 384, <= 768, all of K; 5 = blk 0 with
/// column blocks walked column-major and cut before rows.
SgemmBlocking benchBlocking(int v, int64_t M, int64_t K, int64_t N, bool bf16) {
  auto evenKC = [K](int64_t mx) {
    const int64_t chunks = (K + mx - 1) / mx;
    return ((K + chunks - 1) / chunks + 15) / 16 * 16;
  };
  const int64_t mc = 12 * kSgemmMR, nc = 8 * kSgemmPanel * kSgemmNP;
  SgemmBlocking bl = bf16 ? bgemmBlocking(M, K, N) : sgemmBlocking(M, K, N);
  switch (v) {
  case 1:
    return {256, mc, nc};
  case 2:
    return {evenKC(384), mc, nc};
  case 3:
    return {evenKC(768), mc, nc};
  case 4:
    return {K, mc, nc};
  case 5: // columns first, on every shape
    bl.minNc = kSgemmPanel * kSgemmNP;
    bl.colMajor = true;
    return bl;
  case 6: // rows first, on every shape (the header's before its shape rule)
    return {bl.kc, bl.mc, bl.nc};
  default:
    return bl;
  }
}

/// Two threads (the caller and one spinning worker) share `numTasks` tasks,
/// grabbed dynamically like the runtime's pool.
class SpinPair {
public:
  SpinPair() : worker_([this] { loop(); }) {}
  ~SpinPair() {
    stop_.store(true);
    gen_.fetch_add(1);
    worker_.join();
  }
  template <class F> void run(int numTasks, F &&f) {
    fn_ = [&f](int t) { f(t); };
    tasks_ = numTasks;
    next_.store(0);
    done_.store(0);
    const uint64_t g = gen_.fetch_add(1, std::memory_order_release) + 1;
    grab();
    // The worker acknowledges the round only after leaving grab(), so the
    // next round's reset cannot race with it.
    while (done_.load(std::memory_order_acquire) < numTasks ||
           ack_.load(std::memory_order_acquire) != g)
      ;
  }

private:
  void grab() {
    for (int t; (t = next_.fetch_add(1)) < tasks_;) {
      fn_(t);
      done_.fetch_add(1, std::memory_order_release);
    }
  }
  void loop() {
    uint64_t seen = 0;
    for (;;) {
      uint64_t g;
      while ((g = gen_.load(std::memory_order_acquire)) == seen)
        ;
      seen = g;
      if (stop_.load())
        return;
      grab();
      ack_.store(g, std::memory_order_release);
    }
  }
  std::function<void(int)> fn_;
  int tasks_ = 0;
  std::atomic<int> next_{0}, done_{0};
  std::atomic<uint64_t> gen_{0}, ack_{0};
  std::atomic<bool> stop_{false};
  std::thread worker_;
};

/// The packed weights a linear over T reads: fp32 (packWeightsF32) or bf16
/// (packWeightsBf16 of the rounded weights).
template <typename T> struct PackedFor;
template <> struct PackedFor<float> {
  static size_t elems(int64_t N, int64_t K) { return packedWeightsF32Floats(N, K); }
  static void pack(const std::vector<float> &w, int64_t N, int64_t K, float *out) {
    packWeightsF32(w.data(), N, K, out);
  }
  static std::vector<float> activations(const std::vector<float> &x) { return x; }
};
template <> struct PackedFor<uint16_t> {
  static size_t elems(int64_t N, int64_t K) { return packedWeightsBf16Elems(N, K); }
  static void pack(const std::vector<float> &w, int64_t N, int64_t K, uint16_t *out) {
    packWeightsBf16(activations(w).data(), N, K, out);
  }
  static std::vector<uint16_t> activations(const std::vector<float> &x) {
    std::vector<uint16_t> b(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      b[i] = toBf16Bits(x[i]);
    return b;
  }
};

/// Args: M, blk (benchBlocking), threads (1: task 0 of 1; 2: the runtime's
/// min(8, M*N/4096) tasks on two threads, wall time). T: float (BM_Sgemm) or
/// uint16_t, bf16 operands (BM_Bgemm).
template <typename T, int K, int N> void linearBench(benchmark::State &state) {
  const int64_t M = state.range(0);
  const int blk = static_cast<int>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  const auto x = PackedFor<T>::activations(randomFloats(size_t(M) * K, 1, -2.0f, 2.0f));
  const auto w = randomFloats(size_t(N) * K, 2, -0.1f, 0.1f);
  const auto b = randomFloats(N, 3, -0.1f, 0.1f);
  // thr 2 cycles through copies of the weights (>= 96 MiB in all, 3 x L3)
  // so that they come from DRAM as in a whole model.
  const size_t pf = PackedFor<T>::elems(N, K);
  const size_t copies =
      threads == 1 ? 1 : std::max<size_t>(1, (96u << 20) / (pf * sizeof(T)) + 1);
  std::vector<T> packed(pf * copies);
  std::vector<float> y(size_t(M) * N);
  for (size_t c = 0; c < copies; ++c)
    PackedFor<T>::pack(w, N, K, packed.data() + c * pf);
  size_t copy = 0;
  const SgemmBlocking bl = benchBlocking(blk, M, K, N, std::is_same_v<T, uint16_t>);
  if (threads == 1) {
    for (auto _ : state) {
      sgemmLinearRunWith<kEpiNone>(x.data(), packed.data(), b.data(),
                                   y.data(), M, K, N, 0, 1, bl);
      benchmark::ClobberMemory();
    }
  } else {
    const int tasks = static_cast<int>(
        std::max<int64_t>(1, std::min<int64_t>(8, M * N / 4096)));
    SpinPair pair;
    for (auto _ : state) {
      const T *pw = packed.data() + copy * pf;
      copy = (copy + 1) % copies;
      pair.run(tasks, [&](int t) {
        sgemmLinearRunWith<kEpiNone>(x.data(), pw, b.data(), y.data(), M, K,
                                     N, t, tasks, bl);
      });
      benchmark::ClobberMemory();
    }
  }
  setCounters(state, M, N, K, std::is_same_v<T, float> ? gPeak : gBf16Peak);
  state.SetLabel(std::is_same_v<T, float> ? sgemmPathName() : bgemmPathName());
}

template <int K, int N> void BM_Sgemm(benchmark::State &state) {
  linearBench<float, K, N>(state);
}
template <int K, int N> void BM_Bgemm(benchmark::State &state) {
  linearBench<uint16_t, K, N>(state);
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
      ->ArgNames({"M", "blk", "thr"})                                          \
      ->ArgsProduct({{1, 128, 1024}, {0, 1, 2, 3, 4, 5, 6}, {1}})                 \
      ->Unit(benchmark::kMicrosecond);                                         \
  BENCHMARK_TEMPLATE(BM_Sgemm, K, N)                                           \
      ->ArgNames({"M", "blk", "thr"})                                          \
      ->ArgsProduct({{128, 1024}, {0, 1, 2, 3, 4, 5, 6}, {2}})                    \
      ->UseRealTime()                                                          \
      ->Unit(benchmark::kMicrosecond);
#define ENC_BGEMM_BENCHES(K, N)                                                \
  BENCHMARK_TEMPLATE(BM_Bgemm, K, N)                                           \
      ->ArgNames({"M", "blk", "thr"})                                          \
      ->ArgsProduct({{1, 128, 1024}, {0, 1, 2, 3, 4, 5, 6}, {1}})                 \
      ->Unit(benchmark::kMicrosecond);                                         \
  BENCHMARK_TEMPLATE(BM_Bgemm, K, N)                                           \
      ->ArgNames({"M", "blk", "thr"})                                          \
      ->ArgsProduct({{128, 1024}, {0, 5, 6}, {2}})                             \
      ->UseRealTime()                                                          \
      ->Unit(benchmark::kMicrosecond);
#define ENC_DOT_BENCHES(K, N)                                                  \
  BENCHMARK_TEMPLATE(BM_DotTile, K, N)                                         \
      ->ArgName("M")                                                           \
      ->Arg(1)                                                                 \
      ->Arg(128)                                                               \
      ->Arg(1024)                                                              \
      ->Unit(benchmark::kMicrosecond);

// MiniLM (hidden 384, FFN 1536).
ENC_SGEMM_BENCHES(384, 384)
ENC_SGEMM_BENCHES(384, 1152)
ENC_SGEMM_BENCHES(384, 1536)
ENC_SGEMM_BENCHES(1536, 384)
// BERT-base (hidden 768, FFN 3072).
ENC_SGEMM_BENCHES(768, 768)
ENC_SGEMM_BENCHES(768, 2304)
ENC_SGEMM_BENCHES(768, 3072)
ENC_SGEMM_BENCHES(3072, 768)
// bf16 operands (the bf16 tier's linears), MiniLM and BERT-base shapes.
ENC_BGEMM_BENCHES(384, 384)
ENC_BGEMM_BENCHES(384, 1152)
ENC_BGEMM_BENCHES(384, 1536)
ENC_BGEMM_BENCHES(1536, 384)
ENC_BGEMM_BENCHES(768, 2304)
ENC_BGEMM_BENCHES(768, 3072)
ENC_BGEMM_BENCHES(3072, 768)
// The previous kernel, on MiniLM's shapes only.
ENC_DOT_BENCHES(384, 384)
ENC_DOT_BENCHES(384, 1536)
ENC_DOT_BENCHES(1536, 384)

/// CPU time of this thread, like the benchmarks' counters (the machine may
/// be shared, so wall time would understate the peak).
double threadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

constexpr int kFmaPeakAcc = 12;
constexpr int64_t kFmaPeakIters = 200000, kFmaPeakInner = 128;
#if defined(__AVX512F__)
constexpr double kFmaPeakFlops =
    2.0 * 16 * kFmaPeakAcc * double(kFmaPeakIters * kFmaPeakInner);
#else
constexpr double kFmaPeakFlops =
    2.0 * 8 * kFmaPeakAcc * double(kFmaPeakIters * kFmaPeakInner);
#endif

/// GFLOP/s of 12 independent FMA chains on V (2 * lanes flops each).
template <class V, class Fma>
double fmaPeak(V a, V b, Fma fma, int lanes) {
  constexpr int kAcc = kFmaPeakAcc;
  constexpr int64_t kIters = kFmaPeakIters, kInner = kFmaPeakInner;
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

double wallSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double zmmOrYmmPeak() {
#if defined(__AVX512F__)
  return fmaPeak(
      _mm512_set1_ps(0.5f), _mm512_set1_ps(0.999f),
      [](__m512 c, __m512 a, __m512 b) { return _mm512_fmadd_ps(a, b, c); },
      16);
#else
  return fmaPeak(
      _mm256_set1_ps(0.5f), _mm256_set1_ps(0.999f),
      [](__m256 c, __m256 a, __m256 b) { return _mm256_fmadd_ps(a, b, c); },
      8);
#endif
}

#if defined(__AMX_BF16__)
/// GFLOP/s of tdpbf16ps (amx_tile_peak.h), per CPU second like the benchmarks.
double amxBf16Peak() {
  const double t0 = threadCpuSeconds();
  const double flops = amxTileProducts<false>(200000);
  return flops / (threadCpuSeconds() - t0) / 1e9;
}
#endif

} // namespace

int main(int argc, char **argv) {
#if defined(__AMX_TILE__)
  if (!kernel_test::amxUsable(22)) {
    std::fprintf(stderr, "sgemm_bench: this CPU has no AMX-BF16 (or the kernel did not grant the tile-data "
                         "permission): run sgemm_bench_v4bf16\n");
    return 1;
  }
#endif
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
  {
    // Both cores at once (the runtime's case): each thread's CPU-time rate
    // and the pair's wall-time rate (2 x the single-thread FLOPs / wall),
    // which a shared or throttled machine holds below 2 x peak.
    double rates[2] = {0.0, 0.0};
    const double t0 = wallSeconds();
    std::thread other([&] { rates[1] = zmmOrYmmPeak(); });
    rates[0] = zmmOrYmmPeak();
    other.join();
    const double wall = wallSeconds() - t0;
    std::printf("; 2 threads at once: %.1f + %.1f GFLOP/s (wall %.1f)",
                rates[0], rates[1], 2.0 * kFmaPeakFlops / wall / 1e9);
  }
  gBf16Peak = gPeak;
#if defined(__AVX512BF16__)
  // vdpbf16ps: 16 lanes x 2 products, 64 flops per instruction.
  gBf16Peak = fmaPeak(
      _mm512_set1_ps(0.5f), _mm512_set1_ps(0.999f),
      [](__m512 c, __m512 a, __m512 b) {
        return _mm512_dpbf16_ps(c, (__m512bh)_mm512_castps_si512(a),
                                (__m512bh)_mm512_castps_si512(b));
      },
      32);
  std::printf("; bf16 dot-product peak (1 core, vdpbf16ps zmm): %.1f GFLOP/s", gBf16Peak);
#endif
#if defined(__AMX_BF16__)
  // The bf16 linears run on tiles here: their share is of the tile peak.
  gBf16Peak = amxBf16Peak();
  std::printf("; bf16 tile peak (1 core, tdpbf16ps): %.1f GFLOP/s", gBf16Peak);
#endif
  std::printf("; sgemm path %s, bf16 path %s\n", sgemmPathName(), bgemmPathName());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
