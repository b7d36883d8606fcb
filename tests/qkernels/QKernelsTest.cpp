//===- QKernelsTest.cpp - int8 GEMM kernels vs integer/double references --===//
//
// Built once per ISA variant (see CMakeLists.txt); ENC_Q8_EXPECTED_PATH names
// the micro-kernel the flags must select. Variants the CPU cannot run skip.
// - int32 accumulators: bit-exact vs a plain integer loop, odd shapes, with
//   junk in the activation row padding, as 1 and 3 tasks (every output
//   written by exactly one task);
// - adversarial all-255 x +-127 inputs: no int16 saturation;
// - float outputs (dequantise + bias + GELU + residual) vs a double
//   evaluation of the same quantised math, to 1e-5 of the magnitude of the
//   summed terms;
// - qlinear with the quantisation of its output, or the residual LayerNorm
//   (+ its quantisation) of it, fused in: bit-identical to the ops one after
//   the other, every row written by one task, for 1-3 tasks;
// - the quantisers vs their defining formulas.
//
//===----------------------------------------------------------------------===//
#include "AmxPermission.h"
#include "enc_qgemm.h"
#include "enc_quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#ifndef ENC_Q8_EXPECTED_PATH
#error "ENC_Q8_EXPECTED_PATH must name the expected micro-kernel"
#endif

using namespace enc_kernels;

namespace {

#if defined(__AMX_INT8__)
// The tile-data permission as well (the runtime asks for it at load).
#define ENC_Q8_CPU_OK() (q8CpuSupported() && kernel_test::amxUsable(25))
#else
#define ENC_Q8_CPU_OK() q8CpuSupported()
#endif
#define REQUIRE_Q8_CPU()                                                       \
  do {                                                                         \
    if (!ENC_Q8_CPU_OK())                                                      \
      GTEST_SKIP() << "CPU lacks the ISA of path " << q8PathName();            \
  } while (0)

//===----------------------------------------------------------------------===//
// References
//===----------------------------------------------------------------------===//

/// The defining formula: q = clamp(rne(w * (127 / amax)), -127, 127).
void refQuantizeWeights(const std::vector<float> &w, int N, int K,
                        std::vector<int8_t> &q, std::vector<float> &s) {
  q.assign(size_t(N) * K, 0);
  s.assign(N, 0.0f);
  for (int n = 0; n < N; ++n) {
    float amax = 0.0f;
    for (int k = 0; k < K; ++k)
      amax = std::max(amax, std::fabs(w[size_t(n) * K + k]));
    s[n] = amax / 127.0f;
    const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
    for (int k = 0; k < K; ++k) {
      volatile float t = w[size_t(n) * K + k] * inv;
      long v = std::lrint(double(t)); // current mode: half to even
      q[size_t(n) * K + k] = int8_t(std::min(127L, std::max(-127L, v)));
    }
  }
}

void refQuantizeRow(const float *x, int K, uint8_t *q, float *scale) {
  float amax = 0.0f;
  for (int k = 0; k < K; ++k)
    amax = std::max(amax, std::fabs(x[k]));
  *scale = amax / 127.0f;
  const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
  for (int k = 0; k < K; ++k) {
    volatile float t = x[k] * inv;
    long v = std::lrint(double(t)) + 128;
    q[k] = uint8_t(std::min(255L, std::max(0L, v)));
  }
}

/// Plain integer loop: sum_k xq[m][k] * w[n][k] (minus 128 colsum_n).
std::vector<int32_t> refGemm(const std::vector<uint8_t> &xq, int64_t ldx, int M,
                             const std::vector<int8_t> &w, int N, int K,
                             bool subtractZeroPoint) {
  std::vector<int32_t> y(size_t(M) * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      int64_t s = 0;
      for (int k = 0; k < K; ++k)
        s += int64_t(int(xq[m * ldx + k]) - (subtractZeroPoint ? 128 : 0)) *
             w[size_t(n) * K + k];
      y[size_t(m) * N + n] = int32_t(s);
    }
  return y;
}

double geluRef(double x, bool tanhForm) {
  if (tanhForm)
    return 0.5 * x *
           (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

std::vector<float> randomFloats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

std::vector<int8_t> randomWeights(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-127, 127);
  std::vector<int8_t> v(n);
  for (int8_t &x : v)
    x = int8_t(d(rng));
  return v;
}

std::vector<uint8_t> randomActs(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, 255);
  std::vector<uint8_t> v(n);
  for (uint8_t &x : v)
    x = uint8_t(d(rng));
  return v;
}

std::vector<unsigned char> pack(const std::vector<int8_t> &w, int N, int K) {
  std::vector<unsigned char> p(packedWeightsQ8Bytes(N, K) + 64);
  // Offset by 4 bytes: the kernels must not need alignment.
  packWeightsQ8(w.data(), N, K, p.data() + 4);
  return p;
}

constexpr uint32_t kSentinel = 0x7fc12345u; // a NaN as float; huge as int32

/// Runs fn(out, task, numTasks) for every task into its own sentinel-filled
/// buffer; checks every element is written by exactly one task; merges.
template <class T>
std::vector<T> runTasks(size_t n, int numTasks,
                        const std::function<void(T *, int, int)> &fn) {
  static_assert(sizeof(T) == 4, "4-byte elements");
  T sentinel;
  std::memcpy(&sentinel, &kSentinel, 4);
  auto isSentinel = [](const T &v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    return u == kSentinel;
  };
  std::vector<T> merged(n, sentinel);
  std::vector<int> writers(n, 0);
  for (int t = 0; t < numTasks; ++t) {
    std::vector<T> out(n, sentinel);
    fn(out.data(), t, numTasks);
    for (size_t i = 0; i < n; ++i)
      if (!isSentinel(out[i])) {
        ++writers[i];
        merged[i] = out[i];
      }
  }
  for (size_t i = 0; i < n; ++i)
    if (writers[i] != 1) {
      ADD_FAILURE() << "element " << i << " written by " << writers[i]
                    << " tasks (numTasks=" << numTasks << ")";
      break;
    }
  return merged;
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

TEST(QKernels, PathMatchesFlags) {
  EXPECT_STREQ(q8PathName(), ENC_Q8_EXPECTED_PATH);
}

TEST(QKernels, WeightQuantiserMatchesFormula) {
  const int N = 7, K = 37;
  std::vector<float> w = randomFloats(size_t(N) * K, 11, -2.0f, 2.0f);
  for (int k = 0; k < K; ++k) // an all-zero channel
    w[size_t(3) * K + k] = 0.0f;
  // Exact halves: amax 127 makes the factor 1.
  w[size_t(5) * K + 0] = 127.0f;
  w[size_t(5) * K + 1] = 2.5f;
  w[size_t(5) * K + 2] = -3.5f;
  std::vector<int8_t> q(size_t(N) * K), qr;
  std::vector<float> s(N), sr;
  quantizeWeightsQ8(w.data(), N, K, q.data(), s.data());
  refQuantizeWeights(w, N, K, qr, sr);
  EXPECT_EQ(q, qr);
  EXPECT_EQ(s, sr);
  EXPECT_EQ(q[size_t(5) * K + 1], 2);
  EXPECT_EQ(q[size_t(5) * K + 2], -4);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      EXPECT_LE(std::fabs(q[size_t(n) * K + k] * s[n] - w[size_t(n) * K + k]),
                0.5001f * s[n] + 1e-7f);
}

TEST(QKernels, RowQuantiserMatchesFormula) {
  REQUIRE_Q8_CPU();
  for (int K : {1, 5, 8, 9, 16, 17, 24, 31, 33, 384, 1536}) {
    SCOPED_TRACE("K=" + std::to_string(K));
    std::vector<float> x = randomFloats(K, 100 + K, -3.0f, 5.0f);
    if (K >= 9) { // exact halves in the SIMD body and in the tail
      x[0] = -127.0f;
      x[1] = 2.5f;
      x[2] = 3.5f;
      x[3] = -0.5f;
      x[K - 1] = 4.5f;
    }
    std::vector<uint8_t> q(K), qr(K);
    float s = -1.0f, sr = -2.0f;
    quantizeRowQ8(x.data(), K, q.data(), &s);
    refQuantizeRow(x.data(), K, qr.data(), &sr);
    EXPECT_EQ(s, sr);
    EXPECT_EQ(q, qr);
    for (int k = 0; k < K; ++k)
      EXPECT_LE(std::fabs((int(q[k]) - 128) * s - x[k]), 0.5001f * s + 1e-7f);
    if (K >= 9) {
      EXPECT_EQ(q[0], 1);
      EXPECT_EQ(q[1], 130);
      EXPECT_EQ(q[2], 132);
      EXPECT_EQ(q[3], 128);
      EXPECT_EQ(q[K - 1], 132);
    }
  }
  std::vector<float> zeros(19, 0.0f);
  std::vector<uint8_t> q(19, 7);
  float s = -1.0f;
  quantizeRowQ8(zeros.data(), 19, q.data(), &s);
  EXPECT_EQ(s, 0.0f);
  for (uint8_t v : q)
    EXPECT_EQ(v, 128);
}

TEST(QKernels, PackedLayout) {
  const int N = 19, K = 6;
  std::vector<int8_t> w = randomWeights(size_t(N) * K, 5);
  EXPECT_EQ(packedWeightsQ8Bytes(N, K), size_t(32) * (4 + 8));
  std::vector<unsigned char> p(packedWeightsQ8Bytes(N, K));
  packWeightsQ8(w.data(), N, K, p.data());
  const int32_t *cs = packedColSumsQ8(p.data());
  const int8_t *blocks = packedBlocksQ8(p.data(), N);
  for (int n = 0; n < 32; ++n) {
    int32_t sum = 0;
    for (int k = 0; k < 8; ++k) {
      const int8_t v = (n < N && k < K) ? w[size_t(n) * K + k] : 0;
      sum += v;
      EXPECT_EQ(blocks[(n / 16) * 16 * 8 + (k / 4) * 64 + (n % 16) * 4 + k % 4],
                v)
          << n << "," << k;
    }
    EXPECT_EQ(cs[n], sum) << n;
  }
}

void checkInt32(int M, int N, int K, uint32_t seed) {
  SCOPED_TRACE("M=" + std::to_string(M) + " N=" + std::to_string(N) +
               " K=" + std::to_string(K));
  const int64_t ldx = q8RowStride(K) + 3; // any stride >= q8RowStride works
  // Random bytes everywhere, padding included: padding must not matter.
  const std::vector<uint8_t> xq = randomActs(size_t(M) * ldx, seed);
  const std::vector<int8_t> w = randomWeights(size_t(N) * K, seed + 1);
  const std::vector<unsigned char> p = pack(w, N, K);
  for (bool sub : {false, true}) {
    const std::vector<int32_t> ref = refGemm(xq, ldx, M, w, N, K, sub);
    for (int tasks : {1, 3}) {
      const std::vector<int32_t> got = runTasks<int32_t>(
          size_t(M) * N, tasks, [&](int32_t *y, int t, int nt) {
            qgemmS32Q8(xq.data(), ldx, M, K, N, p.data() + 4, y, sub, t, nt);
          });
      size_t bad = 0;
      for (size_t i = 0; i < ref.size(); ++i)
        if (got[i] != ref[i] && bad++ < 5)
          ADD_FAILURE() << "sub=" << sub << " tasks=" << tasks << " [" << i / N
                        << "," << i % N << "] " << got[i] << " != " << ref[i];
      EXPECT_EQ(bad, 0u);
    }
  }
}

TEST(QKernels, Int32BitExactOddShapes) {
  REQUIRE_Q8_CPU();
  uint32_t seed = 1;
  for (int M : {1, 3, 17})
    for (int N : {1, 15, 33, 384})
      for (int K : {1, 5, 384, 1536})
        checkInt32(M, N, K, seed += 7);
  // Several row chunks, all tile remainders; 128 rows (batch 1 x 128).
  checkInt32(130, 50, 37, 999);
  checkInt32(67, 129, 12, 1000);
  checkInt32(128, 40, 20, 1001);
}

TEST(QKernels, AdversarialNoSaturation) {
  REQUIRE_Q8_CPU();
  const int M = 5, N = 33;
  for (int K : {1536, int(kQ8MaxK)}) {
    std::vector<uint8_t> xq(size_t(M) * q8RowStride(K), 255);
    std::vector<int8_t> w(size_t(N) * K);
    // Channel patterns: all +127, all -127, alternating in k, in pairs.
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k) {
        int8_t v = 127;
        switch (n % 4) {
        case 1:
          v = -127;
          break;
        case 2:
          v = k % 2 ? -127 : 127;
          break;
        case 3:
          v = (k / 2) % 2 ? -127 : 127;
          break;
        }
        w[size_t(n) * K + k] = v;
      }
    const std::vector<unsigned char> p = pack(w, N, K);
    std::vector<int32_t> raw(size_t(M) * N), signedDot(size_t(M) * N);
    qgemmS32Q8(xq.data(), q8RowStride(K), M, K, N, p.data() + 4, raw.data(),
               false, 0, 1);
    qgemmS32Q8(xq.data(), q8RowStride(K), M, K, N, p.data() + 4,
               signedDot.data(), true, 0, 1);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        int64_t sumW = 0;
        for (int k = 0; k < K; ++k)
          sumW += w[size_t(n) * K + k];
        ASSERT_EQ(raw[size_t(m) * N + n], int64_t(255) * sumW)
            << "K=" << K << " m=" << m << " n=" << n;
        ASSERT_EQ(signedDot[size_t(m) * N + n], int64_t(127) * sumW)
            << "K=" << K << " m=" << m << " n=" << n;
      }
    // The extreme sum really is at the int32 limit's scale for kQ8MaxK.
    if (K == kQ8MaxK) {
      EXPECT_GT(int64_t(raw[0]), int64_t(2147000000));
    }
  }
}

template <int Epi>
void checkFloat(int M, int N, int K, bool withBias, bool withResidual,
                uint32_t seed) {
  SCOPED_TRACE("Epi=" + std::to_string(Epi) + " M=" + std::to_string(M) +
               " N=" + std::to_string(N) + " K=" + std::to_string(K) +
               " bias=" + std::to_string(withBias) +
               " residual=" + std::to_string(withResidual));
  const std::vector<float> x = randomFloats(size_t(M) * K, seed, -2.0f, 3.0f);
  const std::vector<float> wf =
      randomFloats(size_t(N) * K, seed + 1, -0.2f, 0.2f);
  const std::vector<float> b = randomFloats(N, seed + 2, -1.0f, 1.0f);
  const std::vector<float> r = randomFloats(size_t(M) * N, seed + 3, -1, 1);
  std::vector<int8_t> wq(size_t(N) * K);
  std::vector<float> ws(N);
  quantizeWeightsQ8(wf.data(), N, K, wq.data(), ws.data());
  const std::vector<unsigned char> p = pack(wq, N, K);
  const float *bias = withBias ? b.data() : nullptr;
  const float *res = withResidual ? r.data() : nullptr;

  // Double evaluation of the same quantised math.
  const int64_t ldq = q8RowStride(K);
  std::vector<uint8_t> xq(size_t(M) * ldq, 128);
  std::vector<float> xs(M);
  for (int m = 0; m < M; ++m)
    refQuantizeRow(x.data() + size_t(m) * K, K, xq.data() + m * ldq, &xs[m]);
  const std::vector<int32_t> dot = refGemm(xq, ldq, M, wq, N, K, true);
  std::vector<double> ref(size_t(M) * N), mag(size_t(M) * N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      const size_t i = size_t(m) * N + n;
      double d = double(xs[m]) * ws[n] * dot[i];
      double v = d + (bias ? bias[n] : 0.0);
      mag[i] = std::fabs(d) + (bias ? std::fabs(bias[n]) : 0.0);
      if (Epi == kQ8EpiGelu || Epi == kQ8EpiGeluTanh)
        v = geluRef(v, Epi == kQ8EpiGeluTanh);
      if (res) {
        v += res[i];
        mag[i] += std::fabs(res[i]);
      }
      ref[i] = v;
    }

  std::vector<unsigned char> scratch(3 * qlinearQ8ScratchBytes(K) + 64);
  for (int tasks : {1, 3}) {
    const std::vector<float> got =
        runTasks<float>(size_t(M) * N, tasks, [&](float *y, int t, int nt) {
          void *s = scratch.data() + t * qlinearQ8ScratchBytes(K);
          qlinearQ8<Epi>(x.data(), M, K, N, p.data() + 4, ws.data(), bias, res,
                         y, s, t, nt);
        });
    const std::vector<float> got2 =
        runTasks<float>(size_t(M) * N, tasks, [&](float *y, int t, int nt) {
          qlinearQ8Quantized<Epi>(xq.data(), ldq, xs.data(), M, K, N,
                                  p.data() + 4, ws.data(), bias, res, y, t, nt);
        });
    size_t bad = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      const double tol = 1e-5 * mag[i] + 1e-7;
      if (!(std::fabs(got[i] - ref[i]) <= tol) && bad++ < 5)
        ADD_FAILURE() << "tasks=" << tasks << " [" << i / N << "," << i % N
                      << "] " << got[i] << " vs " << ref[i];
      // Same quantised input, same arithmetic: identical bits.
      if (std::memcmp(&got[i], &got2[i], 4) != 0 && bad++ < 5)
        ADD_FAILURE() << "quantised entry differs at " << i;
    }
    EXPECT_EQ(bad, 0u) << "tasks=" << tasks;
  }
}

TEST(QKernels, FloatEpilogues) {
  REQUIRE_Q8_CPU();
  checkFloat<kQ8EpiNone>(1, 1, 1, true, false, 1);
  checkFloat<kQ8EpiNone>(3, 15, 5, false, false, 2);
  checkFloat<kQ8EpiNone>(17, 33, 384, true, true, 3);
  checkFloat<kQ8EpiGelu>(17, 384, 384, true, false, 4);
  checkFloat<kQ8EpiGelu>(1, 1536 / 4 + 1, 384, false, true, 5);
  checkFloat<kQ8EpiGeluTanh>(3, 33, 1536, true, false, 6);
  checkFloat<kQ8EpiGeluTanh>(130, 40, 21, true, true, 7);
  checkFloat<kQ8EpiNone>(130, 384, 1536, true, true, 8);
  // A weight over 1 MiB: on AMX the units are walked column chunk first
  // (q8ColumnsFirst); three row chunks, a partial last column block.
  checkFloat<kQ8EpiGelu>(130, 769, 1536, true, true, 9);
}

/// qlinearQuantize (the GELU qlinear + its dynamic quantize in one step) is
/// qlinear followed by quantizeRows, bit for bit: the same epilogue on the
/// same int32 sums, the same row quantiser on the same floats. Each task
/// writes its own rows of values and scales (tasks past one per
/// kQ8MinTaskRows rows write none); `stage` is scratch.
template <int K, int N, int Epi> void checkQLinearQuantize(int M, uint32_t seed) {
  SCOPED_TRACE("M=" + std::to_string(M) + " K=" + std::to_string(K) + " N=" + std::to_string(N));
  const int64_t ldx = q8RowStride(K), ldq = q8RowStride(N);
  const std::vector<float> x = randomFloats(size_t(M) * K, seed, -2.0f, 2.0f);
  std::vector<uint8_t> xq(size_t(M) * ldx, 77); // junk in the padding
  std::vector<float> xs(M);
  for (int m = 0; m < M; ++m)
    quantizeRowQ8(x.data() + size_t(m) * K, K, xq.data() + m * ldx, &xs[m]);
  const std::vector<float> w = randomFloats(size_t(N) * K, seed + 1, -0.2f, 0.2f);
  const std::vector<float> bias = randomFloats(N, seed + 2, -0.5f, 0.5f);
  std::vector<int8_t> wq(static_cast<size_t>(N) * K);
  std::vector<float> ws(N);
  quantizeWeightsQ8(w.data(), N, K, wq.data(), ws.data());
  const std::vector<unsigned char> p = pack(wq, N, K);
  std::vector<float> y(size_t(M) * N);
  qlinear<K, N, Epi>(xq.data(), xs.data(), p.data() + 4, ws.data(), bias.data(), y.data(), M, 0, 1);
  std::vector<uint8_t> ref(size_t(M) * ldq);
  std::vector<float> refScale(M);
  quantizeRows<N>(y.data(), ref.data(), refScale.data(), M, 0.0f, 0, 1);
  for (int tasks : {1, 2, 3, 8}) { // 8: more tasks than M / kQ8MinTaskRows for the smaller M
    std::vector<uint8_t> q(size_t(M) * ldq, 0);
    std::vector<int> writers(M, 0);
    std::vector<float> scale(M, -1.0f), stage(size_t(M) * N);
    for (int t = 0; t < tasks; ++t) {
      std::vector<float> mine(M, -1.0f);
      qlinearQuantize<K, N, Epi>(xq.data(), xs.data(), p.data() + 4, ws.data(), bias.data(), stage.data(), q.data(),
                                 mine.data(), M, t, tasks);
      for (int m = 0; m < M; ++m)
        if (mine[m] != -1.0f) {
          ++writers[m];
          scale[m] = mine[m];
        }
    }
    EXPECT_EQ(writers, std::vector<int>(M, 1)) << "tasks=" << tasks;
    EXPECT_EQ(scale, refScale) << "tasks=" << tasks;
    EXPECT_EQ(q, ref) << "tasks=" << tasks;
  }
}

/// qlinearAddLayerNorm (a qlinear + the residual LayerNorm of its result +
/// that one's quantisation) is qlinear, then addLayerNormRow and
/// quantizeRowTo per row, bit for bit; each task writes its own rows.
template <int K, int N> void checkQLinearAddLayerNorm(int M, bool quantized, uint32_t seed) {
  SCOPED_TRACE("M=" + std::to_string(M) + " K=" + std::to_string(K) + " N=" + std::to_string(N) +
               (quantized ? " quantized" : ""));
  const int64_t ldx = q8RowStride(K), ldq = q8RowStride(N);
  const std::vector<float> x = randomFloats(size_t(M) * K, seed, -2.0f, 2.0f);
  std::vector<uint8_t> xq(size_t(M) * ldx, 77);
  std::vector<float> xs(M);
  for (int m = 0; m < M; ++m)
    quantizeRowQ8(x.data() + size_t(m) * K, K, xq.data() + m * ldx, &xs[m]);
  const std::vector<float> w = randomFloats(static_cast<size_t>(N) * K, seed + 1, -0.2f, 0.2f);
  const std::vector<float> bias = randomFloats(N, seed + 2, -0.5f, 0.5f);
  const std::vector<float> residual = randomFloats(size_t(M) * N, seed + 3, -3.0f, 3.0f);
  const std::vector<float> gamma = randomFloats(N, seed + 4, 0.5f, 1.5f), beta = randomFloats(N, seed + 5, -0.3f, 0.3f);
  std::vector<int8_t> wq(static_cast<size_t>(N) * K);
  std::vector<float> ws(N);
  quantizeWeightsQ8(w.data(), N, K, wq.data(), ws.data());
  const std::vector<unsigned char> p = pack(wq, N, K);
  std::vector<float> lin(size_t(M) * N), ref(size_t(M) * N);
  qlinear<K, N, kQ8EpiNone>(xq.data(), xs.data(), p.data() + 4, ws.data(), bias.data(), lin.data(), M, 0, 1);
  std::vector<uint8_t> refQ(size_t(M) * ldq);
  std::vector<float> refScale(M);
  for (int m = 0; m < M; ++m) {
    addLayerNormRow<N>(lin.data() + size_t(m) * N, residual.data() + size_t(m) * N, gamma.data(), beta.data(),
                       ref.data() + size_t(m) * N, 1e-12f);
    quantizeRowTo<N>(ref.data() + size_t(m) * N, refQ.data() + m * ldq, &refScale[m], 0.0f);
  }
  for (int tasks : {1, 2, 3, 8}) { // 8: more tasks than M / kQ8MinTaskRows for the smaller M
    const std::vector<float> y = runTasks<float>(size_t(M) * N, tasks, [&](float *out, int t, int n) {
      qlinearAddLayerNorm<K, N, kQ8EpiNone>(xq.data(), xs.data(), p.data() + 4, ws.data(), bias.data(),
                                            residual.data(), gamma.data(), beta.data(), out, nullptr, nullptr, M,
                                            1e-12f, t, n);
    });
    EXPECT_EQ(y, ref) << "tasks=" << tasks;
    if (!quantized)
      continue;
    std::vector<uint8_t> q(size_t(M) * ldq, 0);
    std::vector<float> scale(M, -1.0f), yy(size_t(M) * N);
    for (int t = 0; t < tasks; ++t)
      qlinearAddLayerNorm<K, N, kQ8EpiNone>(xq.data(), xs.data(), p.data() + 4, ws.data(), bias.data(),
                                            residual.data(), gamma.data(), beta.data(), yy.data(), q.data(),
                                            scale.data(), M, 1e-12f, t, tasks);
    EXPECT_EQ(yy, ref) << "tasks=" << tasks;
    EXPECT_EQ(scale, refScale) << "tasks=" << tasks;
    EXPECT_EQ(q, refQ) << "tasks=" << tasks;
  }
}

TEST(QKernels, QLinearWithResidualLayerNorm) {
  REQUIRE_Q8_CPU();
  for (int M : {1, 5, 16, 31, 64, 97}) {
    checkQLinearAddLayerNorm<36, 40>(M, true, 50 + M);
    checkQLinearAddLayerNorm<64, 48>(M, false, 60 + M);
    checkQLinearAddLayerNorm<1536, 384>(M, true, 70 + M);
  }
}

TEST(QKernels, QLinearWithQuantizedOutput) {
  REQUIRE_Q8_CPU();
  for (int M : {1, 5, 16, 31, 64, 97}) {
    checkQLinearQuantize<36, 40, kQ8EpiGelu>(M, 20 + M);
    checkQLinearQuantize<64, 48, kQ8EpiNone>(M, 30 + M); // K % 64 == 0: AMX tiles where they run
    checkQLinearQuantize<384, 1536, kQ8EpiGeluTanh>(M, 40 + M);
  }
}

/// The int8 result approximates the float linear it replaces.
TEST(QKernels, CloseToFloatLinear) {
  REQUIRE_Q8_CPU();
  const int M = 16, N = 64, K = 384;
  const std::vector<float> x = randomFloats(size_t(M) * K, 42, -1.0f, 1.0f);
  const std::vector<float> w = randomFloats(size_t(N) * K, 43, -0.1f, 0.1f);
  std::vector<int8_t> wq(size_t(N) * K);
  std::vector<float> ws(N);
  quantizeWeightsQ8(w.data(), N, K, wq.data(), ws.data());
  const std::vector<unsigned char> p = pack(wq, N, K);
  std::vector<unsigned char> scratch(qlinearQ8ScratchBytes(K));
  std::vector<float> y(size_t(M) * N);
  qlinearQ8<kQ8EpiNone>(x.data(), M, K, N, p.data() + 4, ws.data(), nullptr,
                        nullptr, y.data(), scratch.data(), 0, 1);
  double err2 = 0.0, ref2 = 0.0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double s = 0.0;
      for (int k = 0; k < K; ++k)
        s += double(x[size_t(m) * K + k]) * w[size_t(n) * K + k];
      err2 += (y[size_t(m) * N + n] - s) * (y[size_t(m) * N + n] - s);
      ref2 += s * s;
    }
  // Two 8-bit roundings of uniform data: ~1% relative RMS error.
  EXPECT_LT(std::sqrt(err2 / ref2), 0.02);
}

} // namespace
