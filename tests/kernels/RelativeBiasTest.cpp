//===- RelativeBiasTest.cpp - MPNet's relative position bias kernels ------===//
//
// relativePositionBucket against the buckets transformers 4.40.2's
// MPNetEncoder.relative_position_bucket gives on torch 1.13 (recorded below
// as the first distance of each bucket, for |rel| < 1024), and the bias in
// the unfused relativePositionBias and in the fused attention (padded and
// packed layouts, several key tiles, 1 and 3 tasks) against double loops;
// ALiBi's slopes against the values JinaBERT's recipe gives (computed in
// Python: _get_alibi_head_slopes of jina-bert-implementation, as
// text-embeddings-inference's alibi.rs writes it) and the fused attention
// with ALiBi against double loops.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "enc_attention.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace enc_kernels;
using namespace kernel_test;

namespace {

struct RecordedBuckets {
  int numBuckets, maxDistance;
  /// starts[b]: the smallest distance |rel| in bucket b (keys before the
  /// query; keys after it add numBuckets / 2).
  std::vector<int64_t> starts;
};

const RecordedBuckets kRecorded[] = {
    {32, 128, {0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 23, 32, 46, 64, 91}}, // MPNet's
    {16, 64, {0, 1, 2, 3, 4, 8, 16, 32}},
    {64, 256, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20, 23, 27, 32, 39, 46, 54, 64, 77, 91,
               108, 128, 153, 182, 216}},
    {8, 20, {0, 1, 2, 7}},
};

int recordedBucket(const RecordedBuckets &r, int64_t rel) {
  const int64_t n = rel < 0 ? -rel : rel;
  int b = 0;
  while (b + 1 < int(r.starts.size()) && n >= r.starts[b + 1])
    ++b;
  return (rel > 0 ? r.numBuckets / 2 : 0) + b;
}

TEST(RelativeBias, BucketsMatchTransformers) {
  for (const RecordedBuckets &r : kRecorded)
    for (int64_t rel = -1023; rel <= 1023; ++rel)
      ASSERT_EQ(relativePositionBucket(rel, r.numBuckets, r.maxDistance), recordedBucket(r, rel))
          << "rel " << rel << ", " << r.numBuckets << " buckets, max distance " << r.maxDistance;
}

/// A [32, NH] table of biases of a few units (comparable to the scores).
std::vector<float> biasTable(int NH, uint32_t seed) { return randomVec(32 * NH, seed, -3, 3); }

TEST(RelativeBias, UnfusedAddsTheBucketsBias) {
  const int64_t B = 2, NH = 3;
  for (int64_t S : {1, 9, 140}) {
    SCOPED_TRACE("S=" + std::to_string(S));
    auto x = randomVec(B * NH * S * S, 700 + S, -5, 5);
    auto table = biasTable(NH, 701);
    std::vector<double> ref(x.size());
    for (int64_t r = 0; r < B * NH * S; ++r) {
      const int64_t h = (r / S) % NH, i = r % S;
      for (int64_t j = 0; j < S; ++j)
        ref[r * S + j] = double(x[r * S + j]) + table[recordedBucket(kRecorded[0], j - i) * NH + h];
    }
    checkKernel(ref, [&](float *y, int32_t t, int32_t n) {
      relativePositionBias(x.data(), table.data(), y, B, NH, S, 32, 128, t, n);
    }, 1e-6, 1e-6);
  }
}

/// ALiBi slopes per head count, as JinaBERT's recipe gives them.
const std::vector<double> &recordedAlibiSlopes(int NH) {
  static const std::vector<double> two = {0.0625, 0.00390625}, three = {0.0625, 0.00390625, 0.25},
                                   twelve = {0.5,        0.25,       0.125,      0.0625,
                                             0.03125,    0.015625,   0.0078125,  0.00390625,
                                             0.7071067811865476, 0.35355339059327384, 0.17677669529663692,
                                             0.08838834764831849};
  return NH == 2 ? two : NH == 3 ? three : twelve;
}

TEST(Alibi, SlopesMatchJinaBert) {
  for (int NH : {2, 3, 12}) {
    const std::vector<double> &want = recordedAlibiSlopes(NH);
    for (int h = 0; h < NH; ++h)
      EXPECT_DOUBLE_EQ(alibiSlope(h, NH), want[h]) << "head " << h << " of " << NH;
  }
  // Powers of two: 2^(-8 (h + 1) / NH).
  for (int h = 0; h < 16; ++h)
    EXPECT_DOUBLE_EQ(alibiSlope(h, 16), std::exp2(-0.5 * (h + 1)));
}

/// `alibi`: ALiBi instead of MPNet's table.
template <int NH, int D> void testAttentionWithBias(int64_t S, uint32_t seed, bool alibi = false) {
  SCOPED_TRACE(std::string(alibi ? "attention with ALiBi" : "attention with bias") + " S=" + std::to_string(S) +
               " NH=" + std::to_string(NH) + " D=" + std::to_string(D));
  constexpr int64_t H = int64_t(NH) * D;
  const float scale = 1.0f / std::sqrt(float(D));
  // Lengths 1, S and between: queries and keys up to S apart.
  const std::vector<int32_t> lengths = {int32_t(S), 1, int32_t((S + 1) / 2), int32_t(std::max<int64_t>(S - 3, 1))};
  const int64_t B = lengths.size();
  auto qkv = randomVec(B * S * 3 * H, seed, -1, 1);
  auto table = biasTable(NH, seed + 1);
  auto bias = [&](int h, int64_t i, int64_t j) {
    if (alibi)
      return -recordedAlibiSlopes(NH)[h] * double(i > j ? i - j : j - i);
    return double(table[recordedBucket(kRecorded[0], j - i) * NH + h]);
  };
  const RelativeBias rb = alibi ? RelativeBias{nullptr, 0, 0, true} : RelativeBias{table.data(), 32, 128};

  // Padded [B, S, 3H]: every query row against the valid keys.
  std::vector<double> ref(B * S * H, 0.0);
  for (int64_t b = 0; b < B; ++b)
    refAttendSequence(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, b * S, S, lengths[b], NH, D, scale,
                      ref.data() + b * S * H, bias);
  checkKernel(ref, [&](float *y, int32_t t, int32_t n) {
    attention<NH, D>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, lengths.data(), y, B, S, scale, t, n,
                     rb);
  }, 1e-5, 1e-5);

  // Packed: the valid rows only, back to back.
  const std::vector<int32_t> off = offsetsOf(lengths);
  std::vector<float> packed(size_t(off.back()) * 3 * H);
  std::vector<double> refPacked(size_t(off.back()) * H);
  for (int64_t b = 0; b < B; ++b) {
    std::copy(qkv.begin() + b * S * 3 * H, qkv.begin() + (b * S + lengths[b]) * 3 * H,
              packed.begin() + int64_t(off[b]) * 3 * H);
    std::copy(ref.begin() + b * S * H, ref.begin() + (b * S + lengths[b]) * H,
              refPacked.begin() + int64_t(off[b]) * H);
  }
  checkKernel(refPacked, [&](float *y, int32_t t, int32_t n) {
    attentionPacked<NH, D>(packed.data(), packed.data() + H, packed.data() + 2 * H, 3 * H, off.data(), nullptr, y, B, scale,
                           t, n, rb);
  }, 1e-5, 1e-5);

  // Without the bias the result differs: the test sees the bias.
  std::vector<float> plain(B * S * H);
  attention<NH, D>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, lengths.data(), plain.data(), B, S, scale,
                   0, 1);
  double diff = 0;
  for (size_t i = 0; i < plain.size(); ++i)
    diff = std::max(diff, std::fabs(plain[i] - ref[i]));
  if (S > 1)
    EXPECT_GT(diff, 1e-2);
}

TEST(RelativeBias, AttentionHeadDim64) {
  // 140 and 300 keys: more than one key tile (128), distances past every
  // bucket boundary in both directions.
  for (int64_t S : {1, 7, 33, 140, 300})
    testAttentionWithBias<2, 64>(S, 800 + uint32_t(S));
}

TEST(RelativeBias, AttentionOddHeadDim) {
  for (int64_t S : {5, 70})
    testAttentionWithBias<3, 12>(S, 900 + uint32_t(S));
}

} // namespace

namespace {

TEST(Alibi, AttentionTwoAndThreeHeads) {
  // Up to 300 keys: several key tiles, distances where the steepest slope
  // (0.25) leaves keys far away with no weight.
  for (int64_t S : {1, 9, 140, 300})
    testAttentionWithBias<2, 16>(S, 950 + uint32_t(S), /*alibi=*/true);
  for (int64_t S : {5, 70})
    testAttentionWithBias<3, 12>(S, 960 + uint32_t(S), /*alibi=*/true);
}

TEST(Alibi, AttentionTwelveHeadsOfBertBase) {
  testAttentionWithBias<12, 64>(130, 970, /*alibi=*/true);
}

} // namespace
