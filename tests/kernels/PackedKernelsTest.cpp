//===- PackedKernelsTest.cpp - Packed-layout kernels vs double loops ------===//
//
// The kernels of packed plans (kernel_abi.h: sequence b at rows
// [offsets[b], offsets[b+1]) of a [tokens, ...] value): attentionPacked (three
// inputs and fused qkv), embeddingPacked (f32 and bf16 word tables) / embeddingQ8Packed and poolPacked
// against plain double loops written on the packed layout, with lengths
// including 1, the maximum and an empty sequence, as 1 and 3 tasks (every
// element written by exactly one task). Tolerances as in the padded tests.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "enc_kernels.h"
#include "enc_quant.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace enc_kernels;
using namespace kernel_test;

namespace {

TEST(KernelPacked, SequenceOfRow) {
  const std::vector<int32_t> lengths = {3, 1, 0, 5, 2};
  const std::vector<int32_t> off = offsetsOf(lengths);
  const int64_t B = lengths.size();
  int64_t want = 0;
  for (int64_t row = 0; row < off[B]; ++row) {
    while (row >= off[want + 1])
      ++want;
    int64_t b = sequenceOfRow(off.data(), B, row);
    // An empty sequence may be reported before the one holding the row;
    // forEachPackedRow skips it. The row must be in [off[b], off[b+1]] then.
    EXPECT_LE(off[b], row);
    std::vector<int64_t> seen;
    forEachPackedRow(off.data(), B, row, row + 1,
                     [&](int64_t r, int64_t bb, int64_t s) {
                       EXPECT_EQ(r, row);
                       EXPECT_EQ(bb, want);
                       EXPECT_EQ(s, row - off[want]);
                       seen.push_back(r);
                     });
    EXPECT_EQ(seen.size(), 1u);
  }
}

/// y[off[b]+i, h*D+d] = sum_{j<len_b} softmax_j(scale <q_i, k_j>) v_j[d],
/// rows of q/k/v `ld` apart, sequence b at rows off[b]...
std::vector<double> packedAttentionRef(const float *q, const float *k,
                                       const float *v, int64_t ld,
                                       const std::vector<int32_t> &off, int NH,
                                       int D, float scale) {
  const int64_t B = off.size() - 1, T = off[B], H = int64_t(NH) * D;
  std::vector<double> out(T * H, 0.0);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t len = off[b + 1] - off[b];
    refAttendSequence(q, k, v, ld, off[b], len, len, NH, D, scale,
                      out.data() + off[b] * H);
  }
  return out;
}

template <int NH, int D>
void testPackedAttention(const std::vector<int32_t> &lengths, float range,
                         float scale, double atol, uint32_t seed) {
  std::string trace = "attentionPacked NH=" + std::to_string(NH) +
                      " D=" + std::to_string(D) + " lengths";
  for (int32_t l : lengths)
    trace += " " + std::to_string(l);
  SCOPED_TRACE(trace);
  constexpr int64_t H = int64_t(NH) * D;
  const std::vector<int32_t> off = offsetsOf(lengths);
  const int64_t B = lengths.size(), T = off[B];
  auto q = randomVec(T * H, seed, -range, range),
       k = randomVec(T * H, seed + 1, -range, range),
       v = randomVec(T * H, seed + 2);
  const std::vector<double> ref =
      packedAttentionRef(q.data(), k.data(), v.data(), H, off, NH, D, scale);
  checkKernel(ref, [&](float *y, int32_t t, int32_t n) {
    attentionPacked<NH, D>(q.data(), k.data(), v.data(), H, off.data(), nullptr, y, B,
                           scale, t, n);
  }, atol, 1e-5);
  // Fused qkv [T, 3H], read in place with ld = 3H.
  std::vector<float> qkv(T * 3 * H);
  for (int64_t row = 0; row < T; ++row)
    for (int64_t c = 0; c < H; ++c) {
      qkv[row * 3 * H + c] = q[row * H + c];
      qkv[row * 3 * H + H + c] = k[row * H + c];
      qkv[row * 3 * H + 2 * H + c] = v[row * H + c];
    }
  checkKernel(ref, [&](float *y, int32_t t, int32_t n) {
    attentionPacked<NH, D>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H,
                           3 * H, off.data(), nullptr, y, B, scale, t, n);
  }, atol, 1e-5);
}

// Keys fewer than rows (the enc.attention's lengths operand below the row
// count: tokens that attend but are not attended to, ColBERT's query
// expansion): every row of a sequence attends to its first keys[b] rows.
TEST(KernelPacked, AttentionKeysFewerThanRows) {
  constexpr int NH = 2, D = 32;
  constexpr int64_t H = int64_t(NH) * D;
  const std::vector<int32_t> rows = {12, 5, 40, 1, 33}, keys = {5, 5, 7, 1, 0};
  const std::vector<int32_t> off = offsetsOf(rows);
  const int64_t B = rows.size(), T = off[B];
  auto q = randomVec(T * H, 70, -1.0f, 1.0f), k = randomVec(T * H, 71, -1.0f, 1.0f), v = randomVec(T * H, 72);
  std::vector<double> ref(T * H, 0.0);
  for (int64_t b = 0; b < B; ++b)
    refAttendSequence(q.data(), k.data(), v.data(), H, off[b], rows[b], keys[b], NH, D, 0.2f, ref.data() + off[b] * H);
  checkKernel(ref, [&](float *y, int32_t t, int32_t n) {
    attentionPacked<NH, D>(q.data(), k.data(), v.data(), H, off.data(), keys.data(), y, B, 0.2f, t, n);
  }, 1e-5, 1e-5);
}

TEST(KernelPacked, AttentionMixedLengths) {
  testPackedAttention<2, 32>({1}, 1.0f, 0.17677669f, 1e-5, 10);
  testPackedAttention<2, 32>({7, 1, 3, 6}, 1.0f, 0.17677669f, 1e-5, 20);
  testPackedAttention<2, 32>({128, 1, 3, 127, 64, 65, 16, 17}, 1.0f,
                             0.17677669f, 1e-5, 30);
  testPackedAttention<3, 64>({33, 1, 3, 32}, 1.0f, 0.125f, 1e-5, 40);
  // D not a multiple of 8 (scalar accumulation), an empty sequence, and
  // large scores (running max changes across key tiles).
  testPackedAttention<3, 12>({70, 0, 1, 9}, 1.0f, 0.3f, 1e-5, 50);
  testPackedAttention<1, 32>({200, 1, 129}, 3.0f, 1.0f, 1e-4, 60);
}

/// enc.attention {window = w} / {causal}: query i sees only keys
/// i - left <= j <= i + right (AttnBand). Against the double loop with -inf
/// outside the band, on sequences longer than one key tile (128) and one
/// query tile (32): windows from 0 to wider than the sequence, causal, and
/// causal with a window; packed and padded (valid rows; padded rows stay
/// finite, even those whose band lies wholly past the valid keys).
TEST(KernelPacked, BandedAttention) {
  constexpr int NH = 2, D = 32, H = NH * D;
  const std::vector<int32_t> lengths = {300, 1, 0, 77, 129};
  const std::vector<int32_t> off = offsetsOf(lengths);
  const int64_t B = lengths.size(), T = off[B], S = 300;
  auto qkv = randomVec(T * 3 * H, 91, -1.5f, 1.5f);
  const AttnBand bands[] = {{0, 0}, {5, 5}, {64, 64}, {127, 127}, {400, 400}, {-1, 0}, {40, 0}, {3, 0}};
  for (const AttnBand &band : bands) {
    SCOPED_TRACE("band " + std::to_string(band.left) + " " + std::to_string(band.right));
    std::vector<double> ref(T * H, 0.0);
    auto visible = [band](int, int64_t i, int64_t j) {
      const bool ok = (band.left < 0 || i - j <= band.left) && (band.right < 0 || j - i <= band.right);
      return ok ? 0.0 : -INFINITY;
    };
    for (int64_t b = 0; b < B; ++b)
      refAttendSequence(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, off[b], lengths[b], lengths[b], NH,
                        D, 0.2f, ref.data() + off[b] * H, visible);
    checkKernel(ref, [&](float *y, int32_t t, int32_t n) {
      attentionPacked<NH, D>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, off.data(), nullptr, y, B, 0.2f, t, n,
                             RelativeBias{}, band);
    }, 1e-5, 1e-5);
    // Padded [B, S, 3H]: the same rows, then garbage-free padding rows.
    std::vector<float> padded(B * S * 3 * H, 0.5f);
    for (int64_t b = 0; b < B; ++b)
      std::memcpy(padded.data() + b * S * 3 * H, qkv.data() + off[b] * 3 * H, sizeof(float) * lengths[b] * 3 * H);
    std::vector<float> y(B * S * H);
    for (int32_t tasks : {1, 3})
      for (int32_t t = 0; t < tasks; ++t)
        attention<NH, D>(padded.data(), padded.data() + H, padded.data() + 2 * H, 3 * H, lengths.data(), y.data(),
                         B, S, 0.2f, t, tasks, RelativeBias{}, band);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < S * H; ++i) {
        const float got = y[b * S * H + i];
        ASSERT_TRUE(std::isfinite(got)) << "b " << b << " element " << i;
        if (i < lengths[b] * H)
          ASSERT_NEAR(got, ref[off[b] * H + i], 1e-5 + 1e-5 * std::fabs(ref[off[b] * H + i])) << b << " " << i;
      }
  }
}

/// enc.attention {num_kv_heads}: query head h attends with key/value head
/// h / group, k and v in their own [tokens, KVH * D] buffers (Qwen3's GQA,
/// multi-query for one head), with and without the causal band, packed and
/// padded, 1 and 3 tasks, vs the double loop; head dim 24 (not a multiple of
/// the 16-lane vectors).
template <int NH, int KVH, int D> void checkGroupedKvAttention(const AttnBand &band) {
  constexpr int H = NH * D, HKV = KVH * D;
  SCOPED_TRACE("heads " + std::to_string(NH) + " over " + std::to_string(KVH) + ", band " +
               std::to_string(band.left) + " " + std::to_string(band.right));
  const std::vector<int32_t> lengths = {70, 1, 0, 33};
  const std::vector<int32_t> off = offsetsOf(lengths);
  const int64_t B = lengths.size(), T = off[B], S = 70;
  const auto q = randomVec(T * H, 5, -1.5f, 1.5f), k = randomVec(T * HKV, 6, -1.5f, 1.5f),
             v = randomVec(T * HKV, 7, -1.5f, 1.5f);
  const AttnKv kv{HKV, NH / KVH};
  auto visible = [band](int, int64_t i, int64_t j) {
    const bool ok = (band.left < 0 || i - j <= band.left) && (band.right < 0 || j - i <= band.right);
    return ok ? 0.0 : -INFINITY;
  };
  std::vector<double> ref(T * H, 0.0);
  for (int64_t b = 0; b < B; ++b)
    refAttendSequence(q.data(), k.data(), v.data(), H, off[b], lengths[b], lengths[b], NH, D, 0.2f,
                      ref.data() + off[b] * H, visible, HKV, NH / KVH);
  checkKernel(ref, [&](float *y, int32_t t, int32_t n) {
    attentionPacked<NH, D>(q.data(), k.data(), v.data(), H, off.data(), nullptr, y, B, 0.2f, t, n, RelativeBias{}, band, kv);
  }, 1e-5, 1e-5);
  // Padded: each sequence's rows at b * S, padding rows 0.5.
  std::vector<float> qp(B * S * H, 0.5f), kp(B * S * HKV, 0.5f), vp(B * S * HKV, 0.5f);
  for (int64_t b = 0; b < B; ++b) {
    std::memcpy(qp.data() + b * S * H, q.data() + off[b] * H, sizeof(float) * lengths[b] * H);
    std::memcpy(kp.data() + b * S * HKV, k.data() + off[b] * HKV, sizeof(float) * lengths[b] * HKV);
    std::memcpy(vp.data() + b * S * HKV, v.data() + off[b] * HKV, sizeof(float) * lengths[b] * HKV);
  }
  for (int32_t tasks : {1, 3}) {
    std::vector<float> y(B * S * H, NAN);
    for (int32_t t = 0; t < tasks; ++t)
      attention<NH, D>(qp.data(), kp.data(), vp.data(), H, lengths.data(), y.data(), B, S, 0.2f, t, tasks,
                       RelativeBias{}, band, kv);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < lengths[b] * H; ++i)
        ASSERT_NEAR(y[b * S * H + i], ref[off[b] * H + i], 1e-5 + 1e-5 * std::fabs(ref[off[b] * H + i]))
            << "tasks " << tasks << " b " << b << " element " << i;
  }
}

TEST(KernelPacked, GroupedKeyValueHeads) {
  for (const AttnBand &band : {AttnBand{}, AttnBand{-1, 0}, AttnBand{6, 0}}) {
    checkGroupedKvAttention<4, 2, 24>(band);
    checkGroupedKvAttention<6, 1, 24>(band);
    checkGroupedKvAttention<3, 3, 24>(band); // one key/value head per query head, k and v apart from q
  }
}

/// The packed kernel equals the padded one on every valid row (bitwise: the
/// same tile code runs on the same numbers).
TEST(KernelPacked, AttentionEqualsPaddedOnValidRows) {
  constexpr int NH = 2, D = 32, H = NH * D;
  const std::vector<int32_t> lengths = {40, 1, 3, 39};
  const int64_t B = lengths.size(), S = 40;
  const std::vector<int32_t> off = offsetsOf(lengths);
  auto padded = randomVec(B * S * 3 * H, 77);
  std::vector<float> packed(off[B] * 3 * H);
  for (int64_t b = 0; b < B; ++b)
    std::memcpy(packed.data() + off[b] * 3 * H, padded.data() + b * S * 3 * H,
                sizeof(float) * lengths[b] * 3 * H);
  std::vector<float> yPad(B * S * H), yPack(off[B] * H);
  attention<NH, D>(padded.data(), padded.data() + H, padded.data() + 2 * H,
                   3 * H, lengths.data(), yPad.data(), B, S, 0.2f, 0, 1);
  attentionPacked<NH, D>(packed.data(), packed.data() + H,
                         packed.data() + 2 * H, 3 * H, off.data(), nullptr,
                         yPack.data(), B, 0.2f, 0, 1);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < lengths[b] * H; ++i)
      ASSERT_EQ(yPack[off[b] * H + i], yPad[b * S * H + i]) << b << " " << i;
}

/// With an enc.to_bf16 of its result fused in (a uint16_t output), both
/// layouts write each output rounded from the fp32 kernel's value (bitwise),
/// as 1 and 3 tasks.
TEST(KernelPacked, AttentionBf16OutputIsTheRoundedFp32Output) {
  constexpr int NH = 2, D = 32, H = NH * D;
  const std::vector<int32_t> lengths = {70, 1, 0, 33};
  const int64_t B = lengths.size(), S = 70;
  const std::vector<int32_t> off = offsetsOf(lengths);
  auto qkv = randomVec(B * S * 3 * H, 91);
  for (int32_t tasks : {1, 3}) {
    std::vector<float> yPad(B * S * H), yPack(off[B] * H);
    std::vector<uint16_t> bPad(B * S * H, 0xdead), bPack(off[B] * H, 0xdead);
    for (int32_t t = 0; t < tasks; ++t) {
      attention<NH, D>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, lengths.data(), yPad.data(), B, S,
                       0.2f, t, tasks);
      attention<NH, D>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, lengths.data(), bPad.data(), B, S,
                       0.2f, t, tasks);
      attentionPacked<NH, D>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, off.data(), nullptr, yPack.data(), B,
                             0.2f, t, tasks);
      attentionPacked<NH, D>(qkv.data(), qkv.data() + H, qkv.data() + 2 * H, 3 * H, off.data(), nullptr, bPack.data(), B,
                             0.2f, t, tasks);
    }
    for (size_t i = 0; i < yPad.size(); ++i)
      ASSERT_EQ(bPad[i], toBf16Bits(yPad[i])) << "padded " << i << " tasks " << tasks;
    for (size_t i = 0; i < yPack.size(); ++i)
      ASSERT_EQ(bPack[i], toBf16Bits(yPack[i])) << "packed " << i << " tasks " << tasks;
  }
}

TEST(KernelPacked, EmbeddingRowsAndPositions) {
  constexpr int H = 7;
  const int64_t V = 11, P = 40, S = 33, T = 2, offset = 2;
  const std::vector<int32_t> lengths = {1, 33, 3, 32, 0, 5};
  const int64_t B = lengths.size();
  const std::vector<int32_t> off = offsetsOf(lengths);
  std::vector<int32_t> ids(B * S, -1), typeIds(B * S, -1); // padding is never read
  std::mt19937 rng(5);
  for (int64_t b = 0; b < B; ++b)
    for (int32_t s = 0; s < lengths[b]; ++s) {
      ids[b * S + s] = std::uniform_int_distribution<int32_t>(-2, V + 1)(rng);
      typeIds[b * S + s] = std::uniform_int_distribution<int32_t>(-1, T)(rng);
    }
  auto word = randomVec(V * H, 70), pos = randomVec(P * H, 71),
       type = randomVec(T * H, 72);
  std::vector<int8_t> wordQ(V * H);
  std::vector<float> wordScale(V);
  for (int64_t i = 0; i < V * H; ++i)
    wordQ[i] = int8_t(int(i * 37 % 255) - 127);
  for (int64_t i = 0; i < V; ++i)
    wordScale[i] = 0.01f * float(i + 1);
  // A bf16 word table (bits, as convert-linear-bf16 writes it): the gather
  // widens its values exactly, so the reference takes the rounded values.
  std::vector<uint16_t> wordBf16(V * H);
  for (int64_t i = 0; i < V * H; ++i)
    wordBf16[i] = toBf16Bits(word[i]);
  // padId 3 (RoBERTa's positions, position_pad_id): a literal pad id inside a
  // sequence takes position 3 and the tokens after it count on from the
  // last non-pad one, as transformers' create_position_ids_from_input_ids.
  for (const int64_t padId : {int64_t(-1), int64_t(3)})
  for (const int32_t *types : {static_cast<const int32_t *>(nullptr), static_cast<const int32_t *>(typeIds.data())}) {
    std::vector<double> ref(off[B] * H), refQ(off[B] * H), refBf16(off[B] * H);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0, nonPad = 0; s < lengths[b]; ++s) {
        const int64_t id = std::min<int64_t>(std::max(ids[b * S + s], 0), V - 1);
        nonPad += ids[b * S + s] != padId;
        const int64_t position = padId < 0 ? s + offset : ids[b * S + s] == padId ? padId : padId + nonPad;
        const int64_t p = std::min<int64_t>(position, P - 1);
        const int64_t t = types ? std::min<int64_t>(std::max(types[b * S + s], 0), T - 1) : 0;
        for (int h = 0; h < H; ++h) {
          ref[(off[b] + s) * H + h] =
              double(word[id * H + h]) + pos[p * H + h] + type[t * H + h];
          refQ[(off[b] + s) * H + h] = double(wordQ[id * H + h]) * wordScale[id] +
                                       pos[p * H + h] + type[t * H + h];
          refBf16[(off[b] + s) * H + h] =
              double(bf16ToFloat(wordBf16[id * H + h])) + pos[p * H + h] + type[t * H + h];
        }
      }
    checkKernel(ref, [&](float *y, int32_t t, int32_t n) {
      embeddingPacked<H>(ids.data(), types, word.data(), V, pos.data(), P,
                         type.data(), T, y, off.data(), B, S, offset, padId, t, n);
    }, 1e-6, 1e-6);
    checkKernel(refQ, [&](float *y, int32_t t, int32_t n) {
      embeddingQ8Packed<H>(ids.data(), types, wordQ.data(), wordScale.data(), V,
                           pos.data(), P, type.data(), T, y, off.data(), B, S,
                           offset, padId, t, n);
    }, 1e-6, 1e-6);
    checkKernel(refBf16, [&](float *y, int32_t t, int32_t n) {
      embeddingPacked<H>(ids.data(), types, wordBf16.data(), V, pos.data(), P,
                         type.data(), T, y, off.data(), B, S, offset, padId, t, n);
    }, 1e-6, 1e-6);
  }
}

TEST(KernelPacked, PoolClsAndMean) {
  constexpr int H = 6;
  const std::vector<int32_t> lengths = {1, 9, 5, 8, 0};
  const int64_t B = lengths.size();
  const std::vector<int32_t> off = offsetsOf(lengths);
  auto x = randomVec(off[B] * H, 60);
  std::vector<double> rCls(B * H, 0.0), rMean(B * H, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      if (lengths[b] > 0)
        rCls[b * H + h] = x[off[b] * H + h];
      for (int64_t s = 0; s < lengths[b]; ++s)
        rMean[b * H + h] += x[(off[b] + s) * H + h] / double(lengths[b]);
    }
  checkKernel(rCls, [&](float *y, int32_t t, int32_t k) {
    poolPacked<H, kPoolCls>(x.data(), off.data(), y, B, t, k);
  }, 0, 0);
  checkKernel(rMean, [&](float *y, int32_t t, int32_t k) {
    poolPacked<H, kPoolMean>(x.data(), off.data(), y, B, t, k);
  }, 1e-6, 1e-6);
  // SPLADE: log(1 + relu) of each row's maximum over its own rows (an empty sequence: zeros).
  std::vector<double> rSplade(B * H, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int64_t s = 0; s < lengths[b]; ++s)
        rSplade[b * H + h] = std::max(rSplade[b * H + h], std::log1p(std::max(0.0, double(x[(off[b] + s) * H + h]))));
  checkKernel(rSplade, [&](float *y, int32_t t, int32_t k) {
    poolPacked<H, kPoolSplade>(x.data(), off.data(), y, B, t, k);
  }, 1e-6, 1e-6);
}

} // namespace
