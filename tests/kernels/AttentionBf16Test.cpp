//===- AttentionBf16Test.cpp - enc.attention {bf16_pv} vs double ----------===//
//
// attention / attentionPacked of enc_attention.h with PVBf16 (p·v as a bf16
// dot product, vdpbf16ps or its fp32 emulation; q·kᵀ in fp32). The reference
// is a double loop whose values and softmax weights are rounded to bf16
// before p·v (the kernel's promise: exact bf16 products, fp32 sums,
// probabilities rounded to bf16, normalised by the fp32 sum of the unrounded
// ones). Within one key tile (<= 128 keys) the kernel rounds
// the same weights as the reference, up to a rare weight on the other side of
// a rounding tie (its fp32 exponential vs the reference's double one: one
// bf16 ulp of that weight, ~1e-4 of an output here), so the tolerance is
// 2e-4 for outputs of scale 1; past one tile the weights are rounded relative
// to the tile's running maximum, so it is a few bf16 ulps (2e-3). A value
// pair out of order, a key dropped or a weight of the wrong key is O(0.1).
// The AMX object (v4amx) also takes q·kᵀ on tiles, as three bf16 products
// (scores within ~2^-17 of |q||k|, fp32's ~2^-24): a weight near a rounding
// tie rounds the other way more often, each such weight moving its output by
// one bf16 ulp of the weight (at most 2^-8 of it: 3.9e-3 for values <= 1),
// so its tolerance is 4e-3 (a scan of 120 random cases: 5 beyond 1e-3, 1
// beyond 2e-3; the vector kernels' 0 and 0).
// Built with the bf16 linear tests (v3: AVX2 emulation, v4: AVX-512F
// emulation, v4bf16: vdpbf16ps, v4amx: tdpbf16ps tiles for heads of a
// multiple of 16 columns, vdpbf16ps for the others).
//
//===----------------------------------------------------------------------===//
#include "AmxPermission.h"
#include "KernelTestUtil.h"
#include "enc_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace enc_kernels;
using namespace kernel_test;

namespace {

float roundBf16(float x) { return bf16ToFloat(toBf16Bits(x)); }

/// The tolerances of outputs of scale 1, within one key tile and past it.
constexpr double kOneTileAtol = ENC_ATTN_AMX ? 4e-3 : 2e-4;
constexpr double kTilesAtol = ENC_ATTN_AMX ? 4e-3 : 2e-3;

/// The AMX object runs tile instructions: skip where this process may not.
#if ENC_ATTN_AMX
#define REQUIRE_KERNEL_CPU()                                                                                          \
  if (!amxUsable(22))                                                                                                 \
  GTEST_SKIP() << "AMX-BF16 not usable here"
#else
#define REQUIRE_KERNEL_CPU() (void)0
#endif

/// Attention of sequence rows [row0, row0+len) in double (rows of q, k, v
/// `ld` apart), values and weights rounded to bf16: out rows NH*D apart.
void refBf16PVSequence(const float *q, const float *k, const float *v, int64_t ld, int64_t row0, int64_t len,
                       int NH, int D, float scale, double *out) {
  const int64_t H = int64_t(NH) * D;
  std::vector<double> s(len);
  for (int h = 0; h < NH; ++h)
    for (int64_t i = 0; i < len; ++i) {
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < len; ++j) {
        double dot = 0;
        for (int d = 0; d < D; ++d)
          dot += double(q[(row0 + i) * ld + h * D + d]) * k[(row0 + j) * ld + h * D + d];
        s[j] = double(scale) * dot;
        mx = std::max(mx, s[j]);
      }
      for (int64_t j = 0; j < len; ++j) {
        s[j] = std::exp(s[j] - mx);
        sum += s[j];
      }
      for (int64_t j = 0; j < len; ++j) {
        const double p = roundBf16(float(s[j]));
        for (int d = 0; d < D; ++d)
          out[i * H + h * D + d] += p / sum * roundBf16(v[(row0 + j) * ld + h * D + d]);
      }
    }
}

/// Packed qkv [T, 3H] and padded qkv [B, S, 3H] inputs, both layouts, 1 and 3
/// tasks, against the reference.
template <int NH, int D>
void testBf16Attention(const std::vector<int32_t> &lengths, float range, float scale, double atol,
                       uint32_t seed) {
  std::string trace = "bf16 attention NH=" + std::to_string(NH) + " D=" + std::to_string(D) + " lengths";
  for (int32_t l : lengths)
    trace += " " + std::to_string(l);
  SCOPED_TRACE(trace);
  constexpr int64_t H = int64_t(NH) * D;
  const std::vector<int32_t> off = offsetsOf(lengths);
  const int64_t B = lengths.size(), T = off[B];
  int64_t S = 1;
  for (int32_t l : lengths)
    S = std::max<int64_t>(S, l);
  std::vector<float> qkv = randomVec(T * 3 * H, seed, -range, range);
  for (int64_t row = 0; row < T; ++row) // v in [-1, 1] whatever the score range
    for (int64_t c = 2 * H; c < 3 * H; ++c)
      qkv[row * 3 * H + c] /= range;
  std::vector<double> ref(T * H, 0.0);
  for (int64_t b = 0; b < B; ++b)
    refBf16PVSequence(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, off[b], lengths[b], NH, D, scale,
                      ref.data() + off[b] * H);
  checkKernel(ref, [&](float *y, int32_t t, int32_t n) {
    attentionPacked<NH, D, true>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, off.data(), nullptr, y, B, scale,
                                 t, n);
  }, atol, 0.0);

  std::vector<float> padded(B * S * 3 * H, NAN); // padding rows: never read
  for (int64_t b = 0; b < B; ++b)
    std::memcpy(padded.data() + b * S * 3 * H, qkv.data() + off[b] * 3 * H, sizeof(float) * lengths[b] * 3 * H);
  std::vector<float> yPad(B * S * H), yPack(T * H);
  attention<NH, D, true>(padded.data(), padded.data() + H, padded.data() + 2 * H, 3 * H, lengths.data(),
                         yPad.data(), B, S, scale, 0, 1);
  attentionPacked<NH, D, true>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, off.data(), nullptr, yPack.data(),
                               B, scale, 0, 1);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < lengths[b] * H; ++i)
      ASSERT_EQ(yPack[off[b] * H + i], yPad[b * S * H + i]) << "padded vs packed, sequence " << b << " " << i;
}

TEST(AttentionBf16, OneKeyTile) {
  REQUIRE_KERNEL_CPU();
  testBf16Attention<2, 32>({1}, 1.0f, 0.17677669f, kOneTileAtol, 10);
  testBf16Attention<2, 32>({7, 1, 3, 6, 0}, 1.0f, 0.17677669f, kOneTileAtol, 20);
  testBf16Attention<2, 32>({128, 1, 3, 127, 64, 65, 16, 17}, 2.0f, 0.17677669f, kOneTileAtol, 30);
  testBf16Attention<3, 64>({33, 1, 3, 32}, 1.0f, 0.125f, kOneTileAtol, 40);
  // D not a multiple of the lanes (scalar p·v), odd lengths.
  testBf16Attention<3, 12>({70, 0, 1, 9}, 1.0f, 0.3f, 2e-4, 50);
}

TEST(AttentionBf16, SeveralKeyTiles) {
  REQUIRE_KERNEL_CPU();
  // Large scores: the running maximum changes across key tiles.
  testBf16Attention<1, 32>({200, 1, 129}, 3.0f, 1.0f, kTilesAtol, 60);
  testBf16Attention<2, 64>({300, 257}, 1.0f, 0.125f, kTilesAtol, 70);
  // Heads of 48 columns on AMX: p·v on tiles, q·kᵀ in fp32 (48 is not a multiple of 32).
  testBf16Attention<2, 48>({40, 3, 17}, 1.0f, 0.14433757f, 2e-4, 80);
}

/// enc.attention {bf16_amx} (the int8 tier's): on AMX tiles q·kᵀ and p·v
/// as three bf16 products each of split operands, within ~2^-16 of f32:
/// against the double reference without any rounding, 1e-4 for outputs of
/// scale 1 (scores of up to ~17 here, which 2^-17 of |q||k| moves by ~2e-4;
/// measured 3.8e-5; bf16 p·v without the low parts fails it). Elsewhere the
/// codegen's instantiation is the f32 kernel (1e-5 here).
template <int NH, int D>
void testSplitAttention(const std::vector<int32_t> &lengths, float range, float scale, uint32_t seed) {
  constexpr bool amx = ENC_ATTN_AMX != 0;
  constexpr int64_t H = int64_t(NH) * D;
  const std::vector<int32_t> off = offsetsOf(lengths);
  const int64_t B = lengths.size(), T = off[B];
  std::vector<float> qkv = randomVec(T * 3 * H, seed, -range, range);
  std::vector<double> ref(T * H, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int h = 0; h < NH; ++h)
      for (int64_t i = 0; i < lengths[b]; ++i) {
        std::vector<double> sc(lengths[b]);
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < lengths[b]; ++j) {
          double dot = 0;
          for (int d = 0; d < D; ++d)
            dot += double(qkv[(off[b] + i) * 3 * H + h * D + d]) * qkv[(off[b] + j) * 3 * H + H + h * D + d];
          sc[j] = scale * dot;
          mx = std::max(mx, sc[j]);
        }
        for (double &x : sc)
          sum += (x = std::exp(x - mx));
        for (int64_t j = 0; j < lengths[b]; ++j)
          for (int d = 0; d < D; ++d)
            ref[(off[b] + i) * H + h * D + d] += sc[j] / sum * qkv[(off[b] + j) * 3 * H + 2 * H + h * D + d];
      }
  checkKernel(ref, [&](float *y, int32_t t, int32_t n) {
    attentionPacked<NH, D, amx, amx>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, off.data(), nullptr, y, B, scale,
                                     t, n);
  }, amx ? 1e-4 : 1e-5, 0.0);
}

TEST(AttentionBf16, SplitOnTilesIsWithinF32sReach) {
  REQUIRE_KERNEL_CPU();
  testSplitAttention<2, 64>({128, 1, 3, 127, 64, 17}, 2.0f, 0.125f, 90);
  testSplitAttention<2, 32>({300, 129, 2}, 3.0f, 0.17677669f, 91);
  testSplitAttention<3, 16>({40, 7}, 1.0f, 0.25f, 92); // p·v split on tiles, q·kᵀ f32 (16 < 32 columns)
}

/// The bf16 result (an enc.to_bf16 fused in) is the rounded fp32 result.
TEST(AttentionBf16, Bf16OutputIsTheRoundedFp32Output) {
  REQUIRE_KERNEL_CPU();
  constexpr int NH = 2, D = 32, H = NH * D;
  const std::vector<int32_t> lengths = {70, 1, 0, 33};
  const std::vector<int32_t> off = offsetsOf(lengths);
  const int64_t B = lengths.size();
  const std::vector<float> qkv = randomVec(off[B] * 3 * H, 91);
  std::vector<float> y(off[B] * H);
  std::vector<uint16_t> yb(off[B] * H, 0xdead);
  for (int32_t t = 0; t < 3; ++t) {
    attentionPacked<NH, D, true>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, off.data(), nullptr, y.data(), B,
                                 0.2f, t, 3);
    attentionPacked<NH, D, true>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, off.data(), nullptr, yb.data(), B,
                                 0.2f, t, 3);
  }
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_EQ(yb[i], toBf16Bits(y[i])) << i;
}

/// NaN in a key or a value propagates to every query of its sequence and
/// head (it is not lost in the rounding to bf16), and no further.
TEST(AttentionBf16, NanPropagates) {
  REQUIRE_KERNEL_CPU();
  constexpr int NH = 1, D = 32, H = NH * D;
  const std::vector<int32_t> lengths = {5, 4};
  const std::vector<int32_t> off = offsetsOf(lengths);
  for (int64_t at : {int64_t(2 * 3 * H + H + 7), int64_t(3 * 3 * H + 2 * H + 7)}) { // key row 2 / value row 3
    std::vector<float> qkv = randomVec(off[2] * 3 * H, 5);
    qkv[at] = NAN;
    std::vector<float> y(off[2] * H);
    attentionPacked<NH, D, true>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, off.data(), nullptr, y.data(), 2,
                                 0.2f, 0, 1);
    for (int64_t i = 0; i < off[2] * H; ++i)
      EXPECT_EQ(std::isnan(y[i]), i < lengths[0] * H ? (at < 3 * 3 * H || i % D == 7) : false) << at << " " << i;
  }
}

} // namespace
