//===- FusedKernelsTest.cpp - Fused CPU kernels vs double-precision loops -===//
//
// scale_mask_softmax, attention (three inputs and packed qkv, head dims 32,
// 64 and an odd one), add_layernorm, split and div against plain double
// loops, at sequence lengths 1, 7, 33, 128 and 512 with per-sequence lengths
// including 1 and S, each as 1 and 3 tasks (every element written once).
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "enc_kernels.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace enc_kernels;
using namespace kernel_test;

namespace {

TEST(KernelMath, FastExp8MatchesFastExp) {
  for (float x0 = -100.0f; x0 <= 100.0f; x0 += 8 * 0.0137f) {
    alignas(32) float in[8], out[8];
    for (int l = 0; l < 8; ++l)
      in[l] = x0 + l * 0.0137f;
    store8(out, fastExp8(load8(in)));
    for (int l = 0; l < 8; ++l) {
      const float ref = fastExp(in[l]);
      if (std::isinf(ref)) {
        EXPECT_EQ(out[l], ref) << in[l];
        continue;
      }
      EXPECT_NEAR(out[l], ref, 2e-7 * ref) << in[l];
    }
  }
  alignas(32) float in[8] = {-INFINITY, INFINITY, NAN, 0.0f, -87.5f, 88.5f,
                             1.0f, -1.0f};
  alignas(32) float out[8];
  store8(out, fastExp8(load8(in)));
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], INFINITY);
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[3], 1.0f);
  EXPECT_EQ(out[4], 0.0f);
  EXPECT_EQ(out[5], INFINITY);
  EXPECT_NEAR(out[6], std::exp(1.0), 3e-7 * std::exp(1.0));
  EXPECT_NEAR(out[7], std::exp(-1.0), 3e-7 * std::exp(-1.0));
}

/// Lengths of a batch of 3: 1, about half, and all of S.
std::vector<int32_t> mixedLengths(int64_t S) {
  return {1, static_cast<int32_t>((S + 1) / 2), static_cast<int32_t>(S)};
}

TEST(KernelFused, ScaleMaskSoftmax) {
  const int64_t B = 3, NH = 2;
  for (int64_t S : {1, 7, 33, 128, 512}) {
    SCOPED_TRACE("S=" + std::to_string(S));
    const std::vector<int32_t> lengths = mixedLengths(S);
    const int64_t rows = B * NH * S;
    auto x = randomVec(rows * S, 100 + S, -30, 30);
    for (float scale : {0.17677669f, 1.0f, -0.5f}) {
      std::vector<double> ref(rows * S);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t b = r / (NH * S), len = lengths[b];
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < len; ++j)
          mx = std::max(mx, double(scale) * x[r * S + j]);
        for (int64_t j = 0; j < len; ++j)
          sum += std::exp(double(scale) * x[r * S + j] - mx);
        for (int64_t j = 0; j < S; ++j)
          ref[r * S + j] =
              j < len ? std::exp(double(scale) * x[r * S + j] - mx) / sum : 0.0;
      }
      // Padded keys must be exactly 0 (atol 0 when ref is 0).
      checkKernel(ref, [&](float *y, int32_t t, int32_t n) {
        scaleMaskSoftmax(x.data(), lengths.data(), y, B, NH * S, S, scale, t, n);
      }, 1e-7, 1e-5);
      std::vector<float> y(rows * S, 1.0f);
      scaleMaskSoftmax(x.data(), lengths.data(), y.data(), B, NH * S, S, scale,
                       0, 1);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = lengths[r / (NH * S)]; j < S; ++j)
          ASSERT_EQ(y[r * S + j], 0.0f) << "padded key " << j << " of row " << r;
    }
  }
  // A zero length (clamped) and an all -inf row give zeros, not NaN.
  std::vector<float> x(2 * 4, -INFINITY), y(8, 1.0f);
  const int32_t lens[2] = {0, 4};
  scaleMaskSoftmax(x.data(), lens, y.data(), 2, 1, 4, 0.5f, 0, 1);
  for (float v : y)
    EXPECT_EQ(v, 0.0f);
}

/// out[b,s,h*D+d] = sum_{j<len} softmax_j(scale <q[b,s,h], k[b,j,h]>) v[b,j,h,d]
/// over q/k/v rows `ld` apart; output [B, S, NH*D].
std::vector<double> attentionRef(const float *q, const float *k,
                                 const float *v, int64_t ld,
                                 const std::vector<int32_t> &lengths,
                                 int64_t S, int NH, int D, float scale) {
  const int64_t B = lengths.size(), H = int64_t(NH) * D;
  std::vector<double> out(B * S * H, 0.0);
  for (int64_t b = 0; b < B; ++b) // every query row, keys j < lengths[b]
    refAttendSequence(q, k, v, ld, b * S, S, lengths[b], NH, D, scale,
                      out.data() + b * S * H);
  return out;
}

template <int NH, int D>
void testAttention(int64_t S, float inputRange, float scale, double atol,
                   uint32_t seed) {
  SCOPED_TRACE("attention S=" + std::to_string(S) + " NH=" +
               std::to_string(NH) + " D=" + std::to_string(D) +
               " range=" + std::to_string(inputRange));
  constexpr int64_t H = int64_t(NH) * D;
  const std::vector<int32_t> lengths = mixedLengths(S);
  const int64_t B = lengths.size();
  // Three separate [B, S, H] inputs.
  auto q = randomVec(B * S * H, seed, -inputRange, inputRange),
       k = randomVec(B * S * H, seed + 1, -inputRange, inputRange),
       v = randomVec(B * S * H, seed + 2);
  std::vector<double> ref =
      attentionRef(q.data(), k.data(), v.data(), H, lengths, S, NH, D, scale);
  checkKernel(ref, [&](float *y, int32_t t, int32_t n) {
    attention<NH, D>(q.data(), k.data(), v.data(), H, lengths.data(), y, B, S,
                     scale, t, n);
  }, atol, 1e-5);
  // Packed [B, S, 3H]: the same numbers read in place with ld = 3H.
  std::vector<float> qkv(B * S * 3 * H);
  for (int64_t row = 0; row < B * S; ++row)
    for (int64_t c = 0; c < H; ++c) {
      qkv[row * 3 * H + c] = q[row * H + c];
      qkv[row * 3 * H + H + c] = k[row * H + c];
      qkv[row * 3 * H + 2 * H + c] = v[row * H + c];
    }
  checkKernel(ref, [&](float *y, int32_t t, int32_t n) {
    attention<NH, D>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H,
                     lengths.data(), y, B, S, scale, t, n);
  }, atol, 1e-5);
}

TEST(KernelFused, AttentionHeadDim32) {
  for (int64_t S : {1, 7, 33, 128, 512})
    testAttention<2, 32>(S, 1.0f, 0.17677669f, 1e-5, 200 + S);
}

TEST(KernelFused, AttentionHeadDim64) {
  for (int64_t S : {1, 7, 33, 128, 512})
    testAttention<3, 64>(S, 1.0f, 0.125f, 1e-5, 300 + S);
}

TEST(KernelFused, AttentionOddHeadDimAndLargeScores) {
  // D not a multiple of 8 takes the scalar accumulation path.
  for (int64_t S : {1, 7, 33, 70})
    testAttention<3, 12>(S, 1.0f, 0.3f, 1e-5, 400 + S);
  // Scores spanning +-100: the running max changes across key tiles.
  for (int64_t S : {33, 128, 200})
    testAttention<1, 32>(S, 3.0f, 1.0f, 1e-4, 500 + S);
}

TEST(KernelFused, AttentionZeroLengthGivesZeros) {
  constexpr int NH = 2, D = 32, H = NH * D;
  const int64_t B = 2, S = 9;
  auto q = randomVec(B * S * H, 1), k = randomVec(B * S * H, 2),
       v = randomVec(B * S * H, 3);
  const int32_t lengths[B] = {0, 9};
  std::vector<float> y(B * S * H, 1.0f);
  attention<NH, D>(q.data(), k.data(), v.data(), H, lengths, y.data(), B, S,
                   0.2f, 0, 1);
  for (int64_t i = 0; i < S * H; ++i)
    ASSERT_EQ(y[i], 0.0f) << i;
  for (int64_t i = S * H; i < B * S * H; ++i)
    ASSERT_TRUE(std::isfinite(y[i])) << i;
}

template <int H> void testAddLayerNorm(int64_t rows) {
  SCOPED_TRACE("H=" + std::to_string(H) + " rows=" + std::to_string(rows));
  auto x = randomVec(rows * H, 600, -3, 5), res = randomVec(rows * H, 601, -2, 2),
       g = randomVec(H, 602), bt = randomVec(H, 603);
  std::vector<double> ref(rows * H);
  const float eps = 1e-12f;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> s(H);
    double mean = 0, var = 0;
    for (int h = 0; h < H; ++h) {
      s[h] = double(x[r * H + h]) + res[r * H + h];
      mean += s[h];
    }
    mean /= H;
    for (int h = 0; h < H; ++h)
      var += (s[h] - mean) * (s[h] - mean);
    var /= H;
    for (int h = 0; h < H; ++h)
      ref[r * H + h] = (s[h] - mean) / std::sqrt(var + eps) * g[h] + bt[h];
  }
  checkKernel(ref, [&](float *y, int32_t t, int32_t k) {
    addLayerNorm<H>(x.data(), res.data(), g.data(), bt.data(), y, rows, eps, t,
                    k);
  }, 1e-5, 1e-5);
}

TEST(KernelFused, AddLayerNorm) {
  for (int64_t rows : {1, 2, 17}) {
    testAddLayerNorm<1>(rows);
    testAddLayerNorm<7>(rows);
    testAddLayerNorm<384>(rows);
  }
}

/// layerNormBf16 / addLayerNormBf16 (an enc.to_bf16 fused into the
/// layernorm): the fp32 result is layerNorm's / addLayerNorm's bit for bit
/// (tested above), the bf16 one each of its values rounded by toBf16Bits.
template <int H> void testLayerNormBf16(int64_t rows, int32_t tasks) {
  SCOPED_TRACE("H=" + std::to_string(H) + " rows=" + std::to_string(rows) + " tasks=" + std::to_string(tasks));
  auto x = randomVec(rows * H, 910, -3, 3), res = randomVec(rows * H, 911);
  auto g = randomVec(H, 912, 0.5f, 1.5f), bt = randomVec(H, 913);
  for (bool add : {false, true}) {
    std::vector<float> want(rows * H), y(rows * H);
    std::vector<uint16_t> yb(rows * H, 0xdead);
    for (int32_t t = 0; t < tasks; ++t) {
      if (add) {
        addLayerNorm<H>(x.data(), res.data(), g.data(), bt.data(), want.data(), rows, 1e-12f, t, tasks);
        addLayerNormBf16<H>(x.data(), res.data(), g.data(), bt.data(), y.data(), yb.data(), rows, 1e-12f, t, tasks);
      } else {
        layerNorm<H>(x.data(), g.data(), bt.data(), want.data(), rows, 1e-12f, t, tasks);
        layerNormBf16<H>(x.data(), g.data(), bt.data(), y.data(), yb.data(), rows, 1e-12f, t, tasks);
      }
    }
    for (int64_t i = 0; i < rows * H; ++i) {
      ASSERT_EQ(y[i], want[i]) << (add ? "add_layernorm " : "layernorm ") << i;
      ASSERT_EQ(yb[i], toBf16Bits(want[i])) << (add ? "add_layernorm " : "layernorm ") << i;
    }
  }
}

TEST(KernelFused, LayerNormBf16) {
  for (int64_t rows : {1, 17})
    for (int32_t tasks : {1, 3}) {
      testLayerNormBf16<7>(rows, tasks);
      testLayerNormBf16<384>(rows, tasks);
    }
}

template <int N> void testSplit(int64_t rows) {
  SCOPED_TRACE("N=" + std::to_string(N) + " rows=" + std::to_string(rows));
  auto x = randomVec(rows * 3 * N, 700);
  // The three results laid end to end in one checked buffer.
  std::vector<double> ref(3 * rows * N);
  for (int p = 0; p < 3; ++p)
    for (int64_t r = 0; r < rows; ++r)
      for (int n = 0; n < N; ++n)
        ref[(p * rows + r) * N + n] = x[(r * 3 + p) * N + n];
  checkKernel(ref, [&](float *y, int32_t t, int32_t k) {
    float *ys[3] = {y, y + rows * N, y + 2 * rows * N};
    split<N, 3>(x.data(), ys, rows, t, k);
  }, 0, 0);
}

TEST(KernelFused, SplitThreeParts) {
  for (int64_t rows : {1, 5, 67}) {
    testSplit<1>(rows);
    testSplit<7>(rows);
    testSplit<384>(rows);
  }
}

TEST(KernelFused, Divide) {
  for (int64_t n : {1, 7, 4099}) {
    auto x = randomVec(n, 800, -50, 50);
    const float divisor = 5.656854f;
    std::vector<double> ref(n);
    for (int64_t i = 0; i < n; ++i)
      ref[i] = double(x[i]) / double(divisor);
    checkKernel(ref, [&](float *y, int32_t t, int32_t k) {
      divide(x.data(), y, n, divisor, t, k);
    }, 0, 1e-7); // correctly rounded: within half an ulp
  }
}

} // namespace
