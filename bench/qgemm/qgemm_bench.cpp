//===- qgemm_bench.cpp - int8 qlinear vs fp32 linear, and the core's peak -===//
//
// Single thread. GOP/s counts 2*M*N*K (one multiply + one add per MAC) for
// both the int8 and the fp32 kernels. The Peak* benchmarks run register-
// resident loops of one instruction kind (12 independent accumulators) and
// give this core's ceiling; main() also measures the best int8 and fp32 peak
// once and reports each GEMM's share of it ("of_peak").
// The micro-kernel that ran is in the context ("q8_path") and each label.
// BM_QLinearThen*: a qlinear with its consumer in one step vs separate steps.
//
//===----------------------------------------------------------------------===//
#include "enc_sgemm.h"
#include "AmxPermission.h"
#include "enc_qgemm.h"
#include "enc_quant.h"
#if defined(__AMX_TILE__)
#include "../amx_tile_peak.h"
#endif

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

using namespace enc_kernels;

namespace {

double gPeakInt8 = 0.0, gPeakFp32 = 0.0; // GOP/s, measured in main()

std::vector<float> randomFloats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

template <class T> T *alignedAlloc(size_t n) {
  return static_cast<T *>(std::aligned_alloc(64, (n * sizeof(T) + 63) & ~63));
}

/// The micro-kernel as a number: 0 scalar, 1 avx2, 2 avxvnni, 3 avx512vnni.
double q8PathId() {
  const std::string p = q8PathName();
  return p == "avx512vnni" ? 3 : p == "avxvnni" ? 2 : p == "avx2" ? 1 : 0;
}

void setGemmCounters(benchmark::State &state, int64_t M, int64_t N, int64_t K,
                     double peak) {
  const double ops = 2.0 * M * N * K;
  state.counters["GOP/s"] = benchmark::Counter(
      ops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  if (peak > 0.0)
    state.counters["of_peak"] = benchmark::Counter(
        ops / 1e9 / peak, benchmark::Counter::kIsIterationInvariantRate);
}

//===----------------------------------------------------------------------===//
// GEMMs
//===----------------------------------------------------------------------===//

/// int8 qlinear with float input (per-row quantisation included) or, with
/// prequant, on already-quantised rows (the fused-producer case). Epi and
/// Residual pick the epilogue as the model's Linears use it (the FFN up
/// projection: GELU; the output projections: + residual).
template <int K, int N, bool Prequant, int Epi = kQ8EpiNone,
          bool Residual = false>
void BM_QLinear(benchmark::State &state) {
  const int64_t M = state.range(0);
  const std::vector<float> x = randomFloats(size_t(M) * K, 1, -2.0f, 2.0f);
  const std::vector<float> w = randomFloats(size_t(N) * K, 2, -0.1f, 0.1f);
  const std::vector<float> b = randomFloats(N, 3, -0.1f, 0.1f);
  std::vector<int8_t> wq(static_cast<size_t>(N) * K);
  std::vector<float> ws(N);
  quantizeWeightsQ8(w.data(), N, K, wq.data(), ws.data());
  unsigned char *packed =
      alignedAlloc<unsigned char>(packedWeightsQ8Bytes(N, K));
  packWeightsQ8(wq.data(), N, K, packed);
  unsigned char *scratch =
      alignedAlloc<unsigned char>(qlinearQ8ScratchBytes(K));
  const int64_t ldq = q8RowStride(K);
  uint8_t *xq = alignedAlloc<uint8_t>(size_t(M) * ldq);
  std::vector<float> xs(M);
  for (int64_t m = 0; m < M; ++m)
    quantizeRowQ8(x.data() + m * K, K, xq + m * ldq, &xs[m]);
  float *y = alignedAlloc<float>(size_t(M) * size_t(N));
  const std::vector<float> res =
      randomFloats(Residual ? size_t(M) * N : 0, 4, -1.0f, 1.0f);
  const float *residual = Residual ? res.data() : nullptr;
  const float *bias = b.data();
  // Run-time pointers, as the model code gets them from its plan (a known
  // null residual would let the compiler drop the residual path).
  asm volatile("" : "+r"(residual), "+r"(bias));
  for (auto _ : state) {
    if (Prequant)
      qlinearQ8Quantized<Epi>(xq, ldq, xs.data(), M, K, N, packed, ws.data(),
                              bias, residual, y, 0, 1);
    else
      qlinearQ8<Epi>(x.data(), M, K, N, packed, ws.data(), bias, residual, y,
                     scratch, 0, 1);
    benchmark::DoNotOptimize(y);
    benchmark::ClobberMemory();
  }
  setGemmCounters(state, M, N, K, gPeakInt8);
  state.SetLabel(std::string("int8 ") + q8PathName());
  state.counters["path"] = q8PathId();
  std::free(packed);
  std::free(scratch);
  std::free(xq);
  std::free(y);
}

template <int K, int N> void BM_Fp32Linear(benchmark::State &state) {
  const int64_t M = state.range(0);
  const std::vector<float> x = randomFloats(size_t(M) * K, 1, -2.0f, 2.0f);
  const std::vector<float> w = randomFloats(size_t(N) * K, 2, -0.1f, 0.1f);
  const std::vector<float> b = randomFloats(N, 3, -0.1f, 0.1f);
  std::vector<float> packed(packedWeightsF32Floats(N, K)); // as encc packs it
  packWeightsF32(w.data(), N, K, packed.data());
  float *y = alignedAlloc<float>(size_t(M) * size_t(N));
  for (auto _ : state) {
    linear<K, N, kEpiNone>(x.data(), packed.data(), b.data(), y, M, 0, 1);
    benchmark::DoNotOptimize(y);
    benchmark::ClobberMemory();
  }
  setGemmCounters(state, M, N, K, gPeakFp32);
  state.SetLabel("fp32");
  std::free(y);
}

#define ENC_GEMM_BENCHES(K, N)                                                 \
  BENCHMARK_TEMPLATE(BM_QLinear, K, N, false)                                  \
      ->ArgName("M")                                                           \
      ->Arg(1)                                                                 \
      ->Arg(128)                                                               \
      ->Arg(1024)                                                              \
      ->Unit(benchmark::kMicrosecond);                                         \
  BENCHMARK_TEMPLATE(BM_QLinear, K, N, true)                                   \
      ->ArgName("M")                                                           \
      ->Arg(1)                                                                 \
      ->Arg(128)                                                               \
      ->Arg(1024)                                                              \
      ->Unit(benchmark::kMicrosecond);                                         \
  BENCHMARK_TEMPLATE(BM_Fp32Linear, K, N)                                      \
      ->ArgName("M")                                                           \
      ->Arg(1)                                                                 \
      ->Arg(128)                                                               \
      ->Arg(1024)                                                              \
      ->Unit(benchmark::kMicrosecond);

// MiniLM (hidden 384, FFN 1536).
ENC_GEMM_BENCHES(384, 384)
ENC_GEMM_BENCHES(384, 1536)
ENC_GEMM_BENCHES(1536, 384)
// BERT-base (hidden 768, FFN 3072).
ENC_GEMM_BENCHES(768, 768)
ENC_GEMM_BENCHES(768, 2304)
ENC_GEMM_BENCHES(768, 3072)
ENC_GEMM_BENCHES(3072, 768)

// The epilogues the models use, M = 128: GELU on the FFN up projection,
// + residual on the down projection (a slow epilogue shows up here against
// the plain rows above; a masked-load regression once doubled the first).
BENCHMARK_TEMPLATE(BM_QLinear, 384, 1536, true, kQ8EpiGelu)
    ->ArgName("M")->Arg(128)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_QLinear, 768, 3072, true, kQ8EpiGelu)
    ->ArgName("M")->Arg(128)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_QLinear, 3072, 768, true, kQ8EpiNone, true)
    ->ArgName("M")->Arg(128)->Unit(benchmark::kMicrosecond);

//===----------------------------------------------------------------------===//
// A qlinear with its consumer in one step (enc_quant.h) vs the separate
// steps the plan had before: the GELU Linear + the quantisation of its output
// (Fused: qlinearQuantize), a Linear + the residual LayerNorm + its
// quantisation (Fused: qlinearAddLayerNorm). Same inputs, same outputs (the
// kernel tests check the bits); GOP/s counts the GEMM only.
//===----------------------------------------------------------------------===//

/// A qlinear's operands as the plan holds them: rows of x quantised (and
/// their scales), the weight quantised and packed, a bias; room for the
/// float rows and the quantised output (values and scales).
template <int K, int N> struct Q8Operands {
  const int64_t M, ldx = q8RowStride(K), ldq = q8RowStride(N);
  std::vector<float> b = randomFloats(N, 3, -0.1f, 0.1f), ws = std::vector<float>(N), xs, qs, y;
  std::vector<unsigned char> packed = std::vector<unsigned char>(packedWeightsQ8Bytes(N, K));
  std::vector<uint8_t> xq, q;
  explicit Q8Operands(int64_t M)
      : M(M), xs(M), qs(M), y(size_t(M) * N), xq(size_t(M) * ldx), q(size_t(M) * ldq) {
    const std::vector<float> x = randomFloats(size_t(M) * K, 1, -2.0f, 2.0f);
    const std::vector<float> w = randomFloats(size_t(N) * K, 2, -0.1f, 0.1f);
    std::vector<int8_t> wq(w.size());
    quantizeWeightsQ8(w.data(), N, K, wq.data(), ws.data());
    packWeightsQ8(wq.data(), N, K, packed.data());
    for (int64_t m = 0; m < M; ++m)
      quantizeRowQ8(x.data() + m * K, K, xq.data() + m * ldx, &xs[m]);
  }
};

template <int K, int N, bool Fused> void BM_QLinearThenQuantize(benchmark::State &state) {
  Q8Operands<K, N> o(state.range(0));
  for (auto _ : state) {
    if (Fused) {
      qlinearQuantize<K, N, kQ8EpiGelu>(o.xq.data(), o.xs.data(), o.packed.data(), o.ws.data(), o.b.data(),
                                        o.y.data(), o.q.data(), o.qs.data(), o.M, 0, 1);
    } else {
      qlinear<K, N, kQ8EpiGelu>(o.xq.data(), o.xs.data(), o.packed.data(), o.ws.data(), o.b.data(), o.y.data(), o.M,
                                0, 1);
      quantizeRows<N>(o.y.data(), o.q.data(), o.qs.data(), o.M, 0.0f, 0, 1);
    }
    benchmark::DoNotOptimize(o.q.data());
    benchmark::ClobberMemory();
  }
  setGemmCounters(state, o.M, N, K, gPeakInt8);
  state.SetLabel(std::string(Fused ? "fused " : "separate ") + q8PathName());
}

template <int K, int N, bool Fused> void BM_QLinearThenAddLayerNorm(benchmark::State &state) {
  Q8Operands<K, N> o(state.range(0));
  const std::vector<float> gamma = randomFloats(N, 4, 0.5f, 1.5f), res = randomFloats(o.y.size(), 5, -1.0f, 1.0f);
  std::vector<float> lin(o.y.size());
  for (auto _ : state) {
    if (Fused) {
      qlinearAddLayerNorm<K, N, kQ8EpiNone>(o.xq.data(), o.xs.data(), o.packed.data(), o.ws.data(), o.b.data(),
                                            res.data(), gamma.data(), o.b.data(), o.y.data(), o.q.data(),
                                            o.qs.data(), o.M, 1e-12f, 0, 1);
    } else {
      qlinear<K, N, kQ8EpiNone>(o.xq.data(), o.xs.data(), o.packed.data(), o.ws.data(), o.b.data(), lin.data(), o.M,
                                0, 1);
      for (int64_t m = 0; m < o.M; ++m) {
        addLayerNormRow<N>(lin.data() + m * N, res.data() + m * N, gamma.data(), o.b.data(), o.y.data() + m * N,
                           1e-12f);
        quantizeRowTo<N>(o.y.data() + m * N, o.q.data() + m * o.ldq, &o.qs[m], 0.0f);
      }
    }
    benchmark::DoNotOptimize(o.q.data());
    benchmark::ClobberMemory();
  }
  setGemmCounters(state, o.M, N, K, gPeakInt8);
  state.SetLabel(std::string(Fused ? "fused " : "separate ") + q8PathName());
}

// MiniLM's FFN (384 -> 1536 GELU, 1536 -> 384 + residual LayerNorm) and
// attention output (384 -> 384 + residual LayerNorm), M = 128 and 1024.
BENCHMARK_TEMPLATE(BM_QLinearThenQuantize, 384, 1536, false)->ArgName("M")->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_QLinearThenQuantize, 384, 1536, true)->ArgName("M")->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_QLinearThenAddLayerNorm, 1536, 384, false)->ArgName("M")->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_QLinearThenAddLayerNorm, 1536, 384, true)->ArgName("M")->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_QLinearThenAddLayerNorm, 384, 384, false)->ArgName("M")->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_QLinearThenAddLayerNorm, 384, 384, true)->ArgName("M")->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond);
// BERT-base's (768 -> 3072 GELU, 3072 -> 768 and 768 -> 768 + residual
// LayerNorm): weights of 2.4 MB do not fit this core's L2 beside the rows.
BENCHMARK_TEMPLATE(BM_QLinearThenQuantize, 768, 3072, true)->ArgName("M")->Arg(128)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_QLinearThenAddLayerNorm, 3072, 768, true)->ArgName("M")->Arg(128)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_QLinearThenAddLayerNorm, 768, 768, true)->ArgName("M")->Arg(128)->Arg(512)->Unit(benchmark::kMicrosecond);

//===----------------------------------------------------------------------===//
// Peaks: 12 independent register-resident accumulators; kOps per instruction
// group counts multiplies and adds.
//===----------------------------------------------------------------------===//

constexpr int kAcc = 12;
constexpr int64_t kInner = 256;

template <class V, class Step>
double runPeak(int64_t iters, V a, V b, Step step, double opsPerStep) {
  V acc[kAcc];
  for (int i = 0; i < kAcc; ++i)
    acc[i] = a;
  for (int64_t it = 0; it < iters; ++it) {
    for (int64_t j = 0; j < kInner; ++j) {
#pragma GCC unroll 12
      for (int i = 0; i < kAcc; ++i)
        acc[i] = step(acc[i], a, b);
    }
    // Keeps the accumulators in registers yet observable.
    for (int i = 0; i < kAcc; ++i)
      asm volatile("" : "+x"(acc[i]));
  }
  for (int i = 0; i < kAcc; ++i)
    benchmark::DoNotOptimize(acc[i]);
  return double(iters) * kInner * kAcc * opsPerStep;
}

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
double peakDpbusdZmm(int64_t iters) {
  return runPeak(
      iters, _mm512_set1_epi8(3), _mm512_set1_epi8(-5),
      [](__m512i c, __m512i a, __m512i b) {
        return _mm512_dpbusd_epi32(c, a, b);
      },
      2.0 * 64);
}
#endif
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
double peakDpbusdYmm(int64_t iters) {
  return runPeak(
      iters, _mm256_set1_epi8(3), _mm256_set1_epi8(-5),
      [](__m256i c, __m256i a, __m256i b) {
        return _mm256_dpbusd_epi32(c, a, b);
      },
      2.0 * 32);
}
#elif defined(__AVXVNNI__)
double peakDpbusdYmm(int64_t iters) {
  return runPeak(
      iters, _mm256_set1_epi8(3), _mm256_set1_epi8(-5),
      [](__m256i c, __m256i a, __m256i b) {
        return _mm256_dpbusd_avx_epi32(c, a, b);
      },
      2.0 * 32);
}
#endif
#if defined(__AVX2__)
/// The 7-bit-weight AVX2 inner step: vpmaddubsw + vpmaddwd(1) + vpaddd.
/// (Inline asm: with loop-invariant operands the compiler would hoist the
/// multiplies out of the loop.)
double peakMaddubsYmm(int64_t iters) {
  const __m256i ones = _mm256_set1_epi16(1);
  return runPeak(
      iters, _mm256_set1_epi8(3), _mm256_set1_epi8(-5),
      [ones](__m256i c, __m256i a, __m256i b) {
        __m256i t;
        asm("vpmaddubsw %3, %2, %1\n\t"
            "vpmaddwd %4, %1, %1\n\t"
            "vpaddd %1, %0, %0"
            : "+x"(c), "=&x"(t)
            : "x"(a), "x"(b), "x"(ones));
        return c;
      },
      2.0 * 32);
}
/// The exact AVX2 inner step: vpmaddwd + vpaddd on widened int16 (the
/// widening of the weights is shared by the tile's rows and not counted).
double peakMaddwdYmm(int64_t iters) {
  return runPeak(
      iters, _mm256_set1_epi16(3), _mm256_set1_epi16(-5),
      [](__m256i c, __m256i a, __m256i b) {
        __m256i t;
        asm("vpmaddwd %3, %2, %1\n\t"
            "vpaddd %1, %0, %0"
            : "+x"(c), "=&x"(t)
            : "x"(a), "x"(b));
        return c;
      },
      2.0 * 16);
}
double peakFmaYmm(int64_t iters) {
  return runPeak(
      iters, _mm256_set1_ps(0.999f), _mm256_set1_ps(1e-3f),
      [](__m256 c, __m256 a, __m256 b) { return _mm256_fmadd_ps(c, a, b); },
      2.0 * 8);
}
#endif
#if defined(__AVX512F__)
double peakFmaZmm(int64_t iters) {
  return runPeak(
      iters, _mm512_set1_ps(0.999f), _mm512_set1_ps(1e-3f),
      [](__m512 c, __m512 a, __m512 b) { return _mm512_fmadd_ps(c, a, b); },
      2.0 * 16);
}
#endif
#if defined(__AVX512BF16__)
/// The bf16 tier's peak where there are no tiles (Zen 4, Cooper Lake): 32
/// bf16 multiply-adds into 16 fp32 sums per instruction.
double peakDpbf16Zmm(int64_t iters) {
  return runPeak(
      iters, _mm512_set1_ps(0.999f), _mm512_set1_ps(1e-3f),
      [](__m512 c, __m512 a, __m512 b) {
        return _mm512_dpbf16_ps(c, (__m512bh)a, (__m512bh)b);
      },
      2.0 * 32);
}
#endif

#if defined(__AMX_TILE__)
/// The tile units' peak (amx_tile_peak.h): 64 rounds of four tile products per iteration.
template <bool Int8> double peakAmx(int64_t iters) { return amxTileProducts<Int8>(iters * 64); }
#endif

template <double (*Fn)(int64_t)> void BM_Peak(benchmark::State &state) {
  double ops = 0.0;
  for (auto _ : state)
    ops += Fn(64);
  state.counters["GOP/s"] =
      benchmark::Counter(ops / 1e9, benchmark::Counter::kIsRate);
}

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
BENCHMARK_TEMPLATE(BM_Peak, peakDpbusdZmm)->Name("Peak/int8_vpdpbusd_zmm");
#endif
#if (defined(__AVX512VNNI__) && defined(__AVX512VL__)) || defined(__AVXVNNI__)
BENCHMARK_TEMPLATE(BM_Peak, peakDpbusdYmm)->Name("Peak/int8_vpdpbusd_ymm");
#endif
#if defined(__AVX2__)
BENCHMARK_TEMPLATE(BM_Peak, peakMaddubsYmm)
    ->Name("Peak/int8_vpmaddubsw_7bit_ymm");
BENCHMARK_TEMPLATE(BM_Peak, peakMaddwdYmm)
    ->Name("Peak/int16_vpmaddwd_exact_ymm");
BENCHMARK_TEMPLATE(BM_Peak, peakFmaYmm)->Name("Peak/fp32_fma_ymm");
#endif
#if defined(__AVX512F__)
BENCHMARK_TEMPLATE(BM_Peak, peakFmaZmm)->Name("Peak/fp32_fma_zmm");
#endif
#if defined(__AVX512BF16__)
BENCHMARK_TEMPLATE(BM_Peak, peakDpbf16Zmm)->Name("Peak/bf16_vdpbf16ps_zmm");
#endif
#if defined(__AMX_INT8__)
BENCHMARK_TEMPLATE(BM_Peak, peakAmx<true>)->Name("Peak/int8_tdpbusd_amx");
#endif
#if defined(__AMX_BF16__)
BENCHMARK_TEMPLATE(BM_Peak, peakAmx<false>)->Name("Peak/bf16_tdpbf16ps_amx");
#endif

#if defined(__AVX2__)
/// One core's read bandwidth out of a buffer of `Bytes` (1 GiB: beyond any
/// cache; 32 MiB: a weight set the size of MiniLM's, in the shared L3 where it
/// has one; 512 KiB: the core's L2): 32-byte loads summed into four accumulators, every
/// byte read once per pass. What the memory-bound steps (weight streaming at
/// small M, LayerNorm, GELU, quantisation) are judged against
/// (bench/roofline.py).
template <int64_t Bytes> void BM_ReadPeak(benchmark::State &state) {
  static std::vector<int32_t> buf(Bytes / sizeof(int32_t), 1);
  const __m256i *p = reinterpret_cast<const __m256i *>(buf.data());
  const int64_t n = Bytes / 32;
  double bytes = 0.0;
  for (auto _ : state) {
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t i = 0; i + 4 <= n; i += 4) {
      a0 = _mm256_add_epi32(a0, _mm256_loadu_si256(p + i));
      a1 = _mm256_add_epi32(a1, _mm256_loadu_si256(p + i + 1));
      a2 = _mm256_add_epi32(a2, _mm256_loadu_si256(p + i + 2));
      a3 = _mm256_add_epi32(a3, _mm256_loadu_si256(p + i + 3));
    }
    benchmark::DoNotOptimize(_mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)));
    bytes += double(Bytes);
  }
  state.counters["GB/s"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK_TEMPLATE(BM_ReadPeak, int64_t(1) << 30)->Name("Peak/read_1GiB");
BENCHMARK_TEMPLATE(BM_ReadPeak, int64_t(32) << 20)->Name("Peak/read_32MiB");
BENCHMARK_TEMPLATE(BM_ReadPeak, int64_t(512) << 10)->Name("Peak/read_512KiB");
#endif

double threadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

/// Best GOP/s of `fn` over a few 20 ms runs, per CPU second (like the
/// benchmarks' counters; the machine is shared).
double measurePeak(double (*fn)(int64_t)) {
  double best = 0.0;
  for (int rep = 0; rep < 5; ++rep) {
    const double t0 = threadCpuSeconds();
    double ops = 0.0, s = 0.0;
    while ((s = threadCpuSeconds() - t0) < 0.02)
      ops += fn(64);
    best = std::max(best, ops / s / 1e9);
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  if (!q8CpuSupported()) {
    std::fprintf(stderr, "qgemm_bench: this CPU lacks the ISA of path %s\n",
                 q8PathName());
    return 1;
  }
#if defined(__AMX_INT8__)
  // -march=native on an AMX CPU builds the AMX path: without Linux's
  // tile-data permission its first tile instruction raises SIGILL.
  if (!kernel_test::amxUsable(25)) {
    std::fprintf(stderr, "qgemm_bench: the kernel did not grant the AMX tile-data permission\n");
    return 1;
  }
#endif
  // The peak of the instruction the int8 path uses, and of fp32 FMA.
  std::string int8Peak = "none", fp32Peak = "none";
#if defined(ENC_Q8_PATH_AMX)
  gPeakInt8 = measurePeak(peakAmx<true>);
  int8Peak = "tdpbusd";
#elif defined(ENC_Q8_PATH_VNNI512)
  gPeakInt8 = measurePeak(peakDpbusdZmm);
  int8Peak = "vpdpbusd zmm";
#elif defined(ENC_Q8_PATH_AVXVNNI)
  gPeakInt8 = measurePeak(peakDpbusdYmm);
  int8Peak = "vpdpbusd ymm";
#elif defined(ENC_Q8_PATH_AVX2)
  gPeakInt8 = measurePeak(peakMaddwdYmm);
  int8Peak = "vpmaddwd+vpaddd ymm";
#endif
#if defined(__AVX512F__)
  gPeakFp32 = std::max(measurePeak(peakFmaZmm), measurePeak(peakFmaYmm));
  fp32Peak = "fma zmm/ymm";
#elif defined(__AVX2__)
  gPeakFp32 = measurePeak(peakFmaYmm);
  fp32Peak = "fma ymm";
#endif
#if defined(__AMX_BF16__)
  benchmark::AddCustomContext("peak_bf16_amx_GFLOPs", std::to_string(measurePeak(peakAmx<false>)) + " (tdpbf16ps)");
#endif
  benchmark::AddCustomContext("q8_path", q8PathName());
  benchmark::AddCustomContext("peak_int8_GOPs", std::to_string(gPeakInt8) +
                                                    " (" + int8Peak + ")");
  benchmark::AddCustomContext("peak_fp32_GFLOPs", std::to_string(gPeakFp32) +
                                                      " (" + fp32Peak + ")");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
