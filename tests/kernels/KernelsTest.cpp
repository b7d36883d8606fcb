//===- KernelsTest.cpp - CPU kernels vs double-precision loops ------------===//
//
// Every kernel runs on random data with odd sizes, once as a single task and
// once split into 3 tasks; in the split run each task writes into its own
// sentinel-filled copy of the output, and every element must be written by
// exactly one task (the shares partition the work).
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "enc_kernels.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
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

//===----------------------------------------------------------------------===//
// Math helpers
//===----------------------------------------------------------------------===//

TEST(KernelMath, FastExpMatchesExp) {
  for (float x = -100.0f; x <= 100.0f; x += 0.0137f) {
    const double ref = std::exp(double(x));
    const float y = fastExp(x);
    if (ref > 1e38) { // saturating to +inf a little early is fine
      EXPECT_TRUE(std::isinf(y) || y > 1e38f) << x;
      continue;
    }
    if (ref < 1e-37) { // (near-)denormal range: flushing to zero is fine
      EXPECT_LE(y, 1e-37f) << x;
      continue;
    }
    EXPECT_NEAR(y, ref, 3e-7 * ref) << x;
  }
  EXPECT_EQ(fastExp(-INFINITY), 0.0f);
  EXPECT_EQ(fastExp(0.0f), 1.0f);
  EXPECT_TRUE(std::isnan(fastExp(NAN)));
}

TEST(KernelMath, FastErfAndGelu) {
  for (float x = -8.0f; x <= 8.0f; x += 0.001f) {
    EXPECT_NEAR(fastErf(x), std::erf(double(x)), 5e-7) << x; // ~8 ulp at 1
    EXPECT_NEAR(gelu<kGeluErf>(x), geluRef(x, false),
                1e-6 + 1e-6 * std::fabs(x))
        << x;
    EXPECT_NEAR(gelu<kGeluTanh>(x), geluRef(x, true),
                1e-6 + 1e-6 * std::fabs(x))
        << x;
  }
}

//===----------------------------------------------------------------------===//
// GEMMs
//===----------------------------------------------------------------------===//

template <int KS>
void testMatmulNT(int64_t nb, int64_t M, int64_t N, int64_t K, uint32_t seed) {
  SCOPED_TRACE("matmulNT nb=" + std::to_string(nb) + " M=" +
               std::to_string(M) + " N=" + std::to_string(N) +
               " K=" + std::to_string(K));
  auto a = randomVec(nb * M * K, seed), b = randomVec(nb * N * K, seed + 1);
  std::vector<double> ref(nb * M * N), scale(nb * M * N);
  for (int64_t q = 0; q < nb; ++q)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0, sa = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double p = double(a[(q * M + i) * K + k]) * b[(q * N + j) * K + k];
          s += p;
          sa += std::fabs(p);
        }
        ref[(q * M + i) * N + j] = s;
        scale[(q * M + i) * N + j] = sa;
      }
  checkKernel(
      ref,
      [&](float *y, int32_t t, int32_t n) {
        matmulNT<KS>(a.data(), b.data(), y, nb, M, N, K, t, n);
      },
      1e-6, 1e-5, &scale);
}

template <int NS>
void testMatmulNN(int64_t nb, int64_t M, int64_t N, int64_t K, uint32_t seed) {
  SCOPED_TRACE("matmulNN nb=" + std::to_string(nb) + " M=" +
               std::to_string(M) + " N=" + std::to_string(N) +
               " K=" + std::to_string(K));
  auto a = randomVec(nb * M * K, seed), b = randomVec(nb * K * N, seed + 1);
  std::vector<double> ref(nb * M * N), scale(nb * M * N);
  for (int64_t q = 0; q < nb; ++q)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0, sa = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double p = double(a[(q * M + i) * K + k]) * b[(q * K + k) * N + j];
          s += p;
          sa += std::fabs(p);
        }
        ref[(q * M + i) * N + j] = s;
        scale[(q * M + i) * N + j] = sa;
      }
  checkKernel(
      ref,
      [&](float *y, int32_t t, int32_t n) {
        matmulNN<NS>(a.data(), b.data(), y, nb, M, N, K, t, n);
      },
      1e-6, 1e-5, &scale);
}

TEST(KernelMatmul, AttentionShapes) {
  for (int64_t S : {1, 2, 5, 13, 64}) {
    testMatmulNT<32>(6, S, S, 32, 10);   // scores: q · kᵀ, D = 32
    testMatmulNN<32>(6, S, 32, S, 11);   // context: p · v
  }
  testMatmulNT<0>(2, 7, 9, 11, 12); // dynamic K
  testMatmulNT<0>(1, 1, 1, 1, 13);
  testMatmulNN<0>(2, 7, 9, 11, 14); // dynamic N
  testMatmulNN<5>(3, 4, 5, 1, 15);
}

//===----------------------------------------------------------------------===//
// Elementwise, normalisation, attention helpers
//===----------------------------------------------------------------------===//

TEST(KernelElementwise, AddScaleGelu) {
  for (int64_t n : {1, 7, 1000, 4099}) {
    auto a = randomVec(n, 20, -6, 6), b = randomVec(n, 21);
    std::vector<double> rAdd(n), rScale(n), rGelu(n), rGeluT(n);
    for (int64_t i = 0; i < n; ++i) {
      rAdd[i] = double(a[i]) + b[i];
      rScale[i] = double(a[i]) * double(0.125f);
      rGelu[i] = geluRef(a[i], false);
      rGeluT[i] = geluRef(a[i], true);
    }
    checkKernel(rAdd, [&](float *y, int32_t t, int32_t k) {
      add(a.data(), b.data(), y, n, t, k);
    }, 1e-6, 1e-6);
    checkKernel(rScale, [&](float *y, int32_t t, int32_t k) {
      scale(a.data(), y, n, 0.125f, t, k);
    }, 0, 1e-7);
    checkKernel(rGelu, [&](float *y, int32_t t, int32_t k) {
      geluAct<kGeluErf>(a.data(), y, n, t, k);
    }, 1e-6, 1e-6);
    checkKernel(rGeluT, [&](float *y, int32_t t, int32_t k) {
      geluAct<kGeluTanh>(a.data(), y, n, t, k);
    }, 1e-6, 1e-6);
  }
}

TEST(KernelElementwise, GatedLinearUnits) {
  // enc.glu: act(first half) * second half, per row, for each kind. The
  // activations' absolute error (1e-6, as the GELU test's) is scaled by the
  // gate, here up to 7: atol 1e-5.
  for (int64_t rows : {1, 5, 67}) {
    constexpr int I = 37; // odd: no vector-width assumption
    auto x = randomVec(rows * 2 * I, 22, -7, 7);
    std::vector<double> rGeglu(rows * I), rTanh(rows * I), rSilu(rows * I);
    for (int64_t r = 0; r < rows; ++r)
      for (int i = 0; i < I; ++i) {
        const double a = x[r * 2 * I + i], g = x[r * 2 * I + I + i];
        rGeglu[r * I + i] = geluRef(a, false) * g;
        rTanh[r * I + i] = geluRef(a, true) * g;
        rSilu[r * I + i] = a / (1.0 + std::exp(-a)) * g;
      }
    checkKernel(rGeglu, [&](float *y, int32_t t, int32_t k) { glu<I, kGeglu>(x.data(), y, rows, I, t, k); },
                1e-5, 1e-6);
    checkKernel(rTanh, [&](float *y, int32_t t, int32_t k) { glu<I, kGegluTanh>(x.data(), y, rows, I, t, k); },
                1e-5, 1e-6);
    checkKernel(rSilu, [&](float *y, int32_t t, int32_t k) { glu<I, kSwiglu>(x.data(), y, rows, I, t, k); },
                1e-5, 1e-6);
    // The run-time width (template argument 0) gives the same.
    checkKernel(rSilu, [&](float *y, int32_t t, int32_t k) { glu<0, kSwiglu>(x.data(), y, rows, I, t, k); },
                1e-5, 1e-6);
  }
}

/// enc.rms_norm: each group of G floats of a row normalised on its own with
/// gamma [G], vs float64; groups of a whole row (G = the last dim) and of a
/// head (G = 24 in rows of 96: Qwen3's q/k norms), odd G, one element.
template <int G> void checkRmsNorm(int64_t rows, int64_t width, float eps) {
  SCOPED_TRACE("G " + std::to_string(G) + " width " + std::to_string(width) + " rows " + std::to_string(rows));
  const int64_t groups = rows * (width / G);
  auto x = randomVec(groups * G, 31, -3, 3);
  auto gamma = randomVec(G, 32, 0.5f, 1.5f);
  std::vector<double> ref(groups * G);
  for (int64_t g = 0; g < groups; ++g) {
    double ss = 0;
    for (int i = 0; i < G; ++i)
      ss += double(x[g * G + i]) * x[g * G + i];
    const double inv = 1.0 / std::sqrt(ss / G + eps);
    for (int i = 0; i < G; ++i)
      ref[g * G + i] = x[g * G + i] * inv * gamma[i];
  }
  checkKernel(ref, [&](float *y, int32_t t, int32_t k) { rmsNorm<G>(x.data(), gamma.data(), y, groups, eps, t, k); },
              1e-6, 1e-6);
}

TEST(KernelNorm, RmsNormOverRowsAndHeads) {
  checkRmsNorm<64>(9, 64, 1e-6f);
  checkRmsNorm<24>(7, 96, 1e-6f);
  checkRmsNorm<37>(5, 37, 1e-5f);
  checkRmsNorm<1>(3, 8, 1e-6f);
  // A zero row: x / sqrt(eps), zeros.
  std::vector<float> zero(16, 0.0f), gamma(16, 1.0f), y(16, NAN);
  rmsNorm<16>(zero.data(), gamma.data(), y.data(), 1, 1e-6f, 0, 1);
  for (float v : y)
    EXPECT_EQ(v, 0.0f);
}

/// enc.rotary in float64 with exact angles: x [rows, N*D], row r at pos[r].
template <int N, int D, int R>
std::vector<double> rotaryRef(const std::vector<float> &x, const std::vector<int64_t> &pos, double theta,
                              bool interleaved) {
  std::vector<double> y(x.begin(), x.end());
  for (size_t r = 0; r < pos.size(); ++r)
    for (int h = 0; h < N; ++h)
      for (int f = 0; f < R / 2; ++f) {
        const double angle = double(pos[r]) * std::pow(theta, -2.0 * f / R);
        const size_t base = r * N * D + h * D, i = base + (interleaved ? 2 * f : f),
                     j = base + (interleaved ? 2 * f + 1 : f + R / 2);
        y[i] = double(x[i]) * std::cos(angle) - double(x[j]) * std::sin(angle);
        y[j] = double(x[j]) * std::cos(angle) + double(x[i]) * std::sin(angle);
      }
  return y;
}

TEST(KernelRotary, PaddedAndPackedMatchExactAngles) {
  // Positions up to 40: the f32 angles (as transformers computes them) are
  // within 40 * 2^-24 rad of the exact ones, so 1e-5 holds.
  constexpr int N = 3, D = 10, R = 8; // partial rotary: dims 8, 9 pass through
  const int64_t B = 2, S = 41;
  auto x = randomVec(B * S * N * D, 23, -2, 2);
  std::vector<int64_t> pos(B * S);
  for (int64_t t = 0; t < B * S; ++t)
    pos[t] = t % S;
  for (bool inter : {false, true}) {
    const auto ref = rotaryRef<N, D, R>(x, pos, 160000.0, inter);
    checkKernel(ref, [&](float *y, int32_t t, int32_t k) {
      if (inter)
        rotary<N, D, R, kRotaryInterleaved>(x.data(), y, B, S, 160000.0f, t, k);
      else
        rotary<N, D, R, kRotaryHalf>(x.data(), y, B, S, 160000.0f, t, k);
    }, 1e-5, 1e-5);
  }
  // Packed: sequences of 41 and 7 tokens (and an empty one), positions from 0 each.
  const int32_t offsets[4] = {0, 41, 41, 48};
  std::vector<float> xp(x.begin(), x.begin() + 48 * N * D);
  std::vector<int64_t> ppos(48);
  for (int64_t t = 0; t < 48; ++t)
    ppos[t] = t < 41 ? t : t - 41;
  const auto pref = rotaryRef<N, D, R>(xp, ppos, 10000.0, false);
  checkKernel(pref, [&](float *y, int32_t t, int32_t k) {
    rotaryPacked<N, D, R, kRotaryHalf>(xp.data(), y, offsets, 3, 10000.0f, t, k);
  }, 1e-5, 1e-5);
}

TEST(KernelAttention, MaskThenSoftmax) {
  const int64_t B = 3, NH = 2;
  for (int64_t S : {1, 6, 33}) {
    const int32_t lengths[B] = {1, int32_t((S + 1) / 2), int32_t(S)};
    auto x = randomVec(B * NH * S * S, 30, -8, 8);
    const int64_t rows = B * NH * S;
    std::vector<double> rMask(rows * S), rSoft(rows * S);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t b = r / (NH * S);
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < S; ++j) {
        rMask[r * S + j] = j < lengths[b] ? x[r * S + j] : -INFINITY;
        mx = std::max(mx, rMask[r * S + j]);
      }
      for (int64_t j = 0; j < S; ++j)
        sum += std::exp(rMask[r * S + j] - mx);
      for (int64_t j = 0; j < S; ++j)
        rSoft[r * S + j] = std::exp(rMask[r * S + j] - mx) / sum;
    }
    checkKernel(rMask, [&](float *y, int32_t t, int32_t k) {
      mask(x.data(), lengths, y, B, NH * S, S, t, k);
    }, 0, 0);
    std::vector<float> masked(rMask.begin(), rMask.end());
    checkKernel(rSoft, [&](float *y, int32_t t, int32_t k) {
      softmax<0>(masked.data(), y, rows, S, t, k);
    }, 1e-7, 1e-5);
  }
  // Static width and an all -inf row (-> zeros, not NaN).
  std::vector<float> x = randomVec(3 * 5, 31, -80, 80);
  for (int j = 0; j < 5; ++j)
    x[5 + j] = -INFINITY;
  std::vector<double> ref(15);
  for (int r = 0; r < 3; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < 5; ++j)
      mx = std::max(mx, double(x[r * 5 + j]));
    for (int j = 0; j < 5; ++j)
      sum += r == 1 ? 0 : std::exp(x[r * 5 + j] - mx);
    for (int j = 0; j < 5; ++j)
      ref[r * 5 + j] = r == 1 ? 0.0 : std::exp(x[r * 5 + j] - mx) / sum;
  }
  checkKernel(ref, [&](float *y, int32_t t, int32_t k) {
    softmax<5>(x.data(), y, 3, 0, t, k);
  }, 1e-7, 1e-5);
}

template <int H> void testLayerNormL2(int64_t rows) {
  SCOPED_TRACE("H=" + std::to_string(H) + " rows=" + std::to_string(rows));
  auto x = randomVec(rows * H, 40, -3, 5), g = randomVec(H, 41),
       bt = randomVec(H, 42);
  std::vector<double> rLn(rows * H), rL2(rows * H);
  const float eps = 1e-12f;
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0, sq = 0;
    for (int h = 0; h < H; ++h)
      mean += x[r * H + h];
    mean /= H;
    for (int h = 0; h < H; ++h) {
      var += (x[r * H + h] - mean) * (x[r * H + h] - mean);
      sq += double(x[r * H + h]) * x[r * H + h];
    }
    var /= H;
    for (int h = 0; h < H; ++h) {
      rLn[r * H + h] = (x[r * H + h] - mean) / std::sqrt(var + eps) * g[h] + bt[h];
      rL2[r * H + h] = x[r * H + h] / std::max(std::sqrt(sq), 1e-12);
    }
  }
  checkKernel(rLn, [&](float *y, int32_t t, int32_t k) {
    layerNorm<H>(x.data(), g.data(), bt.data(), y, rows, eps, t, k);
  }, 1e-5, 1e-5);
  checkKernel(rL2, [&](float *y, int32_t t, int32_t k) {
    l2Norm<H>(x.data(), y, rows, t, k);
  }, 1e-7, 1e-5);
}

TEST(KernelNorm, LayerNormAndL2Norm) {
  for (int64_t rows : {1, 2, 17}) {
    testLayerNormL2<1>(rows);
    testLayerNormL2<7>(rows);
    testLayerNormL2<384>(rows);
  }
  // A zero row stays zero under l2norm (no division by zero).
  std::vector<float> z(8, 0.0f), y(8, 1.0f);
  l2Norm<8>(z.data(), y.data(), 1, 0, 1);
  for (float v : y)
    EXPECT_EQ(v, 0.0f);
}

TEST(KernelLayout, SplitAndMergeHeads) {
  constexpr int NH = 3, D = 5;
  for (int64_t S : {1, 4, 9}) {
    const int64_t B = 2, n = B * S * NH * D;
    auto x = randomVec(n, 50);
    std::vector<double> rSplit(n);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s)
        for (int64_t h = 0; h < NH; ++h)
          for (int64_t d = 0; d < D; ++d)
            rSplit[((b * NH + h) * S + s) * D + d] =
                x[(b * S + s) * NH * D + h * D + d];
    checkKernel(rSplit, [&](float *y, int32_t t, int32_t k) {
      splitHeads<NH, D>(x.data(), y, B, S, t, k);
    }, 0, 0);
    std::vector<float> split(rSplit.begin(), rSplit.end());
    std::vector<double> rMerge(x.begin(), x.end());
    checkKernel(rMerge, [&](float *y, int32_t t, int32_t k) {
      mergeHeads<NH, D>(split.data(), y, B, S, t, k);
    }, 0, 0);
  }
}

TEST(KernelPool, ClsAndMean) {
  constexpr int H = 6;
  for (int64_t S : {1, 5}) {
    const int64_t B = 4;
    const int32_t lengths[B] = {1, int32_t(S), int32_t((S + 1) / 2), int32_t(S)};
    auto x = randomVec(B * S * H, 60);
    std::vector<double> rCls(B * H), rMean(B * H, 0.0);
    for (int64_t b = 0; b < B; ++b)
      for (int h = 0; h < H; ++h) {
        rCls[b * H + h] = x[b * S * H + h];
        for (int64_t s = 0; s < lengths[b]; ++s)
          rMean[b * H + h] += x[(b * S + s) * H + h] / double(lengths[b]);
      }
    checkKernel(rCls, [&](float *y, int32_t t, int32_t k) {
      pool<H, kPoolCls>(x.data(), lengths, y, B, S, t, k);
    }, 0, 0);
    checkKernel(rMean, [&](float *y, int32_t t, int32_t k) {
      pool<H, kPoolMean>(x.data(), lengths, y, B, S, t, k);
    }, 1e-6, 1e-6);
  }
}

// SPLADE: max over the valid tokens of log(1 + relu(x)), per token then the
// maximum (sentence-transformers' order); padded keys never count, a row whose
// valid tokens are all negative is 0.
TEST(KernelPool, Splade) {
  constexpr int H = 7;
  const int64_t B = 4, S = 6;
  const int32_t lengths[B] = {1, 6, 3, 0};
  auto x = randomVec(B * S * H, 61, -3, 2);
  x[(1 * S + 5) * H + 2] = 40.0f; // the last valid token of sequence 1 wins column 2
  x[(2 * S + 4) * H + 0] = 50.0f; // a padded token of sequence 2: must not count
  std::vector<double> ref(B * H, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int64_t s = 0; s < lengths[b]; ++s)
        ref[b * H + h] = std::max(ref[b * H + h], std::log1p(std::max(0.0, double(x[(b * S + s) * H + h]))));
  EXPECT_NEAR(ref[1 * H + 2], std::log1p(40.0), 1e-12);
  checkKernel(ref, [&](float *y, int32_t t, int32_t k) {
    pool<H, kPoolSplade>(x.data(), lengths, y, B, S, t, k);
  }, 1e-6, 1e-6);
}

TEST(KernelEmbedding, LookupWithClamping) {
  constexpr int H = 7;
  const int64_t V = 11, P = 6, B = 2, S = 5, T = 3, offset = 2;
  auto word = randomVec(V * H, 70), pos = randomVec(P * H, 71),
       type = randomVec(T * H, 72);
  // Out-of-range ids, type ids and positions are clamped into the tables.
  const int32_t ids[B * S] = {0, 3, 10, -5, 99, 7, 1, 2, 2, 11};
  const int32_t typeIds[B * S] = {0, 1, 2, 1, 0, 3, -1, 1, 0, 9};
  // padId 2 (position_pad_id): the literal 2s take position 2, the tokens
  // after them count only the non-pad ones (transformers' RoBERTa positions).
  for (const int64_t padId : {int64_t(-1), int64_t(2)})
  for (const int32_t *types : {static_cast<const int32_t *>(nullptr), typeIds}) {
    std::vector<double> ref(B * S * H);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0, nonPad = 0; s < S; ++s) {
        const int64_t id = std::min<int64_t>(std::max(ids[b * S + s], 0), V - 1);
        nonPad += ids[b * S + s] != padId;
        const int64_t position = padId < 0 ? s + offset : ids[b * S + s] == padId ? padId : padId + nonPad;
        const int64_t p = std::min<int64_t>(position, P - 1);
        const int64_t t = types ? std::min<int64_t>(std::max(types[b * S + s], 0), T - 1) : 0;
        for (int h = 0; h < H; ++h)
          ref[(b * S + s) * H + h] =
              double(word[id * H + h]) + pos[p * H + h] + type[t * H + h];
      }
    checkKernel(ref, [&](float *y, int32_t t, int32_t k) {
      embedding<H>(ids, types, word.data(), V, pos.data(), P, type.data(), T, y,
                   B, S, offset, padId, t, k);
    }, 1e-6, 1e-6);
  }
}

} // namespace
