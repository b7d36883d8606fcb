//===- enc_attention.h - Fused attention kernels ------------------*- C++ -*-===//
//
// scaleMaskSoftmax: softmax(scale * s) over the valid keys of each score row
// in one pass per row (padded keys written 0).
//
// attention: softmax(scale * q·kᵀ, keys j < len) · v per (sequence, head),
// reading q/k/v in place from the merged [B, S, ld] layout (head h at columns
// [h*D, (h+1)*D)) and writing the merged [B, S, NH*D] output. A unit of work
// is one (sequence, head, tile of 32 query rows); the rows are the lanes of
// the score vectors (8 lanes, or 16 with AVX-512), so q·kᵀ needs no
// horizontal sums and the softmax is lane-wise. Per key tile of up to 128
// keys (without a band, a head's keys and values are laid out contiguously
// once for all its units; with one, copied per tile): scores by a register-blocked
// q·kᵀ (query tile transposed once per unit), tile max taken on the way, an
// online softmax in base 2 (running max and sum per row, accumulators
// rescaled per tile), then P·V as a register-blocked GEMM into the row
// accumulators. Only keys j < len are read, and the S x S matrix never
// exists. Padded query rows (s >= len) are computed like valid ones (they
// attend to the valid keys), exactly as the unfused ops do. attentionPacked
// is the same on the packed [tokens, ld] layout (kernel_abi.h): only real
// query rows exist, so it does no padded work; both share the tile code, so
// they agree bitwise on the valid rows. With PVBf16 (enc.attention
// {bf16_pv}) the value rows are rounded to bf16 as they are copied (pairs of
// keys interleaved, vdpbf16ps's operand layout) and the probabilities as the
// softmax makes them, and P·V runs as bf16 dot products: half the multiply
// instructions of that half of the work. q·kᵀ stays fp32: bf16 q and k move
// the scores by ~1e-3 relative, which the softmax amplifies (MiniLM's min
// token cosine vs fp32 fell below the gates, 0.99987 bf16 / 0.984 int8).
// In the AMX object (x86-64-v4-amx) PVBf16 runs on tiles: p·v by tdpbf16ps
// (the probabilities transposed into rows of key pairs, the values in the
// same pair layout) for heads of a multiple of 16 columns, and q·kᵀ too for
// multiples of 32, as three tile products of bf16 high and low parts of q
// and k (hi·hi + hi·lo + lo·hi: scores within ~2^-17 of |q||k|, where one
// bf16 product's ~1e-3 failed the gates); without a band a head's split keys
// and paired values are made once for all its units. Split (enc.attention
// {bf16_amx}, the int8 tier's) takes p·v as three products of split
// probabilities and values as well, so the attention is within ~2^-16 of
// f32 (bf16 probabilities and values cost MPNet's int8 min token cosine
// 0.988 -> 0.984, under its gate; split: 0.9875); other objects run the f32
// kernel for it.
// With a RelativeBias (MPNet's enc.attention position_bias, or ALiBi) each task lays
// out a head's bias per relative distance once (AttnHeadBias) and adds it to
// a key tile's scores before the tile's maximum is taken. With a sliding
// band (AttnBand: query i sees keys i - left <= j <= i + right; enc.attention
// {window = w} is left = right = w, {causal} right = 0) a unit reads only the
// keys [i0 - left, i0 + nq - 1 + right] of its rows (local layers cost
// S x window, not S x S) and sets the scores outside each row's band to -inf
// in the tiles that cross a band edge.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_KERNELS_ATTENTION_H
#define ENC_KERNELS_ATTENTION_H

#include "enc_bf16.h"
#include "enc_common.h"

#include <cmath>
#include <type_traits>
#include <vector>

#ifdef __AVX__
#include <immintrin.h>
#endif

// p·v on AMX tiles (tdpbf16ps) where the object has them and a head's width
// is a multiple of 16 columns (one tile).
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
#include "enc_amx.h"
#define ENC_ATTN_AMX 1
#else
#define ENC_ATTN_AMX 0
#endif

namespace enc_kernels {

/// enc.scale_mask_softmax: x viewed as [B, R, Sk]; y = softmax_j(scale * x)
/// over keys j < lengths[b] (clamped to [0, Sk]), 0 for the other keys and
/// for rows without a valid key.
inline void scaleMaskSoftmax(const float *x, const int32_t *lengths, float *y,
                             int64_t B, int64_t R, int64_t Sk, float scale,
                             int32_t task, int32_t numTasks) {
  int64_t r0, r1;
  taskShare(B * R, task, numTasks, r0, r1);
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t b = row / R;
    const int64_t len = std::min<int64_t>(std::max<int64_t>(lengths[b], 0), Sk);
    const float *xr = x + row * Sk;
    float *yr = y + row * Sk;
    // Scale and running max.
    v8f mv = splat8(-INFINITY);
    int64_t j = 0;
    for (; j + 8 <= len; j += 8) {
      const v8f v = load8(xr + j) * scale;
      store8(yr + j, v);
      mv = max8(mv, v);
    }
    float mx = hmax8(mv);
    for (; j < len; ++j) {
      yr[j] = xr[j] * scale;
      mx = std::max(mx, yr[j]);
    }
    if (mx == -INFINITY) { // no valid key (or all -inf): zeros, like softmax
      for (j = 0; j < Sk; ++j)
        yr[j] = 0.0f;
      continue;
    }
    // Exponentials and their sum.
    v8f sv = splat8(0.0f);
    for (j = 0; j + 8 <= len; j += 8) {
      const v8f e = fastExp8(load8(yr + j) - mx);
      store8(yr + j, e);
      sv += e;
    }
    float sum = hsum8(sv);
    for (; j < len; ++j) {
      yr[j] = fastExp(yr[j] - mx);
      sum += yr[j];
    }
    const float inv = 1.0f / sum;
    for (j = 0; j + 8 <= len; j += 8)
      store8(yr + j, load8(yr + j) * inv);
    for (; j < len; ++j)
      yr[j] *= inv;
    for (j = len; j < Sk; ++j)
      yr[j] = 0.0f;
  }
}

/// transformers' MPNet relative_position_bucket(rel = key - query,
/// numBuckets, maxDistance): half the buckets for keys after the query
/// (offset numBuckets / 2), half for keys before; distances below
/// numBuckets / 4 exact, longer ones on a log scale up to maxDistance, the
/// last bucket beyond. The log term in f32 as torch computes it (f32 log,
/// divided by the f32 rounding of the double log(maxDistance / maxExact)),
/// so the buckets agree where the exact value is an integer (16, 32, 64).
inline int relativePositionBucket(int64_t rel, int numBuckets, int maxDistance) {
  const int half = numBuckets / 2, maxExact = half / 2;
  const int ret = rel > 0 ? half : 0;
  const int64_t n = rel > 0 ? rel : -rel;
  if (n < maxExact)
    return ret + static_cast<int>(n);
  const float logRatio = static_cast<float>(std::log(double(maxDistance) / double(maxExact)));
  const float v = std::log(static_cast<float>(n) / static_cast<float>(maxExact)) / logRatio *
                  static_cast<float>(half - maxExact);
  // n is at most a sequence length, so v stays far from int64's range.
  const int64_t large = maxExact + static_cast<int64_t>(v);
  return ret + static_cast<int>(std::min<int64_t>(large, half - 1));
}

/// enc.relative_position_bias: x viewed as [B, NH, S, S];
/// y[b,h,i,j] = x[b,h,i,j] + table[bucket(j - i) * NH + h] (table is the
/// [numBuckets, NH] embedding).
inline void relativePositionBias(const float *x, const float *table, float *y,
                                 int64_t B, int64_t NH, int64_t S, int numBuckets,
                                 int maxDistance, int32_t task, int32_t numTasks) {
  int64_t r0, r1;
  taskShare(B * NH * S, task, numTasks, r0, r1);
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t h = (row / S) % NH, i = row % S;
    const float *xr = x + row * S;
    float *yr = y + row * S;
    for (int64_t j = 0; j < S; ++j)
      yr[j] = xr[j] + table[relativePositionBucket(j - i, numBuckets, maxDistance) * NH + h];
  }
}

/// An enc.attention's position_bias: the [numBuckets, NH] table and its
/// max_distance; table == nullptr: none. alibi (enc.attention {alibi},
/// without a table): head h adds -alibiSlope(h, NH) * |i - j|.
struct RelativeBias {
  const float *table = nullptr;
  int numBuckets = 0, maxDistance = 0;
  bool alibi = false;
  bool any() const { return table != nullptr || alibi; }
};

/// ALiBi's slope of head h of NH: 2^(-8 (h + 1) / P) for the P heads of the
/// largest power of two P <= NH, then the even-indexed slopes of 2P heads,
/// 2^(-8 (2 (h - P) + 1) / 2P), for the rest (Press et al.'s recipe, as
/// JinaBERT computes it).
inline double alibiSlope(int64_t h, int64_t NH) {
  int64_t p = 1;
  while (p * 2 <= NH)
    p *= 2;
  return h < p ? std::exp2(-8.0 * double(h + 1) / double(p)) : std::exp2(-8.0 * double(2 * (h - p) + 1) / double(2 * p));
}

/// The keys a query sees besides the padding mask: query i sees key j iff
/// i - left <= j <= i + right; -1 leaves that side open. {w, w}: a sliding
/// window (enc.attention {window = w}); {-1, 0}: causal; {w, 0}: both.
struct AttnBand {
  int64_t left = -1, right = -1;
  bool any() const { return left >= 0 || right >= 0; }
};

/// Grouped key/value heads (enc.attention {num_kv_heads}): query head h reads
/// key/value head h / group, whose rows are `ld` apart (0: the queries' ld).
/// {}: one key/value head per query head.
struct AttnKv {
  int64_t ld = 0;
  int group = 1;
};

namespace detail {

// The attention vectors: 16 lanes (zmm) where AVX-512 is enabled, else the
// eight of v8f. Query rows are the lanes, so every softmax step is
// lane-wise and a row's result does not depend on the other rows of its
// tile (the packed and padded kernels agree bitwise).
#ifdef __AVX512F__
typedef float attn_vf __attribute__((vector_size(64)));
typedef int32_t attn_vi __attribute__((vector_size(64)));
constexpr int kAttnLanes = 16;
constexpr int kAttnAccumulators = 16; // of 32 registers (24 spill: GCC
                                      // keeps the broadcasts in registers)
#else
typedef v8f attn_vf;
typedef v8i attn_vi;
constexpr int kAttnLanes = 8;
constexpr int kAttnAccumulators = 12; // of 16 vector registers
#endif
constexpr int kAttnRows = 32;     // query rows per unit
constexpr float kLog2e = 1.44269504088896341f; // scores are taken in base 2
constexpr int kAttnKeyTile = 128; // keys per online-softmax step

ENC_INLINE attn_vf attnLoad(const float *p) {
  attn_vf v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
ENC_INLINE void attnStore(float *p, attn_vf v) {
  std::memcpy(p, &v, sizeof(v));
}
ENC_INLINE attn_vf attnSplat(float f) { return attn_vf{} + f; }
ENC_INLINE attn_vf attnMax(attn_vf a, attn_vf b) { return a > b ? a : b; }

/// 2^t for t <= 0 (every exponential of the attention softmax is taken in
/// base 2: the scores are pre-multiplied by log2(e)). Cephes exp2f
/// polynomial on [-0.5, 0.5] (about 1 ulp); t < -125 gives 2^-125, which is
/// 0 next to the row maximum's 1; NaN propagates.
ENC_INLINE attn_vf attnExp2(attn_vf t) {
  const attn_vf lo = attnSplat(-125.0f);
#if defined(__AVX512F__)
  const attn_vf c = _mm512_max_ps(lo, t); // NaN stays NaN (second operand)
#elif defined(__AVX__)
  const attn_vf c = _mm256_max_ps(lo, t);
#else
  const attn_vf c = lo > t ? lo : t;
#endif
  const attn_vf magic = attnSplat(12582912.0f); // 1.5 * 2^23: round to nearest
  const attn_vf big = c + magic;
  const attn_vf f = c - (big - magic); // in [-0.5, 0.5]
  attn_vf p = attnSplat(1.535336188319500e-4f);
  p = p * f + 1.339887440266574e-3f;
  p = p * f + 9.618437357674640e-3f;
  p = p * f + 5.550332471162809e-2f;
  p = p * f + 2.402264791363012e-1f;
  p = p * f + 6.931472028550421e-1f;
  p = p * f + 1.0f;
  // The low mantissa bits of `big` hold round(c) (>= -125): 2^round(c).
  attn_vi bits;
  std::memcpy(&bits, &big, sizeof(bits));
  bits = (bits + 127) << 23;
  attn_vf s;
  std::memcpy(&s, &bits, sizeof(s));
  return p * s;
}

/// qT[d*QT + r] = s * q[r*ld + d] for rows r < nq, 0 for the others.
template <int D, int QT>
ENC_INLINE void attnTransposeQ(const float *q, int64_t ld, int nq, float s,
                               float *qT) {
#ifdef __AVX__
  if constexpr (D % 8 == 0 && QT % 8 == 0) {
    const __m256 sv = _mm256_set1_ps(s);
    for (int r0 = 0; r0 < QT; r0 += 8)
      for (int d0 = 0; d0 < D; d0 += 8) {
        __m256 x[8];
        for (int i = 0; i < 8; ++i)
          x[i] = r0 + i < nq ? _mm256_loadu_ps(q + (r0 + i) * ld + d0)
                             : _mm256_setzero_ps();
        // 8x8 transpose: unpack pairs, then quads, then 128-bit halves.
        __m256 t[8], u[8];
        for (int i = 0; i < 8; i += 2) {
          t[i] = _mm256_unpacklo_ps(x[i], x[i + 1]);
          t[i + 1] = _mm256_unpackhi_ps(x[i], x[i + 1]);
        }
        for (int i = 0; i < 8; i += 4) {
          u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
          u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
          u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
          u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
        }
        for (int i = 0; i < 4; ++i) {
          const __m256 lo = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
          const __m256 hi = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
          _mm256_storeu_ps(qT + (d0 + i) * QT + r0, _mm256_mul_ps(lo, sv));
          _mm256_storeu_ps(qT + (d0 + i + 4) * QT + r0, _mm256_mul_ps(hi, sv));
        }
      }
    return;
  }
#endif
  for (int d = 0; d < D; ++d)
    for (int r = 0; r < QT; ++r)
      qT[d * QT + r] = r < nq ? q[r * ld + d] * s : 0.0f;
}

// bf16 p·v (enc.attention {bf16_pv}): the probabilities and the values are
// rounded to bf16 and p·v is a bf16 dot product (vdpbf16ps with AVX512-BF16:
// one instruction takes two keys' products per fp32 lane); q·kᵀ, the scale,
// the softmax and every sum stay fp32. Without AVX512-BF16 the same products
// are taken with fp32 FMAs on the widened values, in vdpbf16ps's order (odd
// element first), so a fallback object computes the same numbers up to
// denormals (which vdpbf16ps flushes).

typedef uint32_t attn_vu __attribute__((vector_size(sizeof(attn_vf))));

ENC_INLINE attn_vu attnLoadU(const void *p) {
  attn_vu v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
ENC_INLINE void attnStoreU(void *p, attn_vu v) { std::memcpy(p, &v, sizeof(v)); }
ENC_INLINE attn_vu attnSplatU(uint32_t u) { return attn_vu{} + u; }
ENC_INLINE attn_vf attnAsFloat(attn_vu u) {
  attn_vf f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

/// acc + a.odd * b.odd + a.even * b.even per fp32 lane, where a and b hold
/// two bf16 values per 32-bit lane (even element in the low half).
ENC_INLINE attn_vf attnDotBf16(attn_vf acc, attn_vu a, attn_vu b) {
#if defined(__AVX512BF16__)
  return (attn_vf)_mm512_dpbf16_ps((__m512)acc, (__m512bh)a, (__m512bh)b);
#else
  const attn_vu hi = attnSplatU(0xffff0000u);
  acc += attnAsFloat(a & hi) * attnAsFloat(b & hi);
  return acc + attnAsFloat(a << 16) * attnAsFloat(b << 16);
#endif
}

/// toBf16Bits of every lane (in the low 16 bits of its 32-bit lane).
ENC_INLINE attn_vu attnToBf16(attn_vf f) {
  attn_vu u;
  std::memcpy(&u, &f, sizeof(u));
  const attn_vu rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const attn_vu quietNan = (u >> 16) | 0x40u;
  return (u & 0x7fffffffu) > 0x7f800000u ? quietNan : rounded;
}

/// Lane i: bf16(lo[i]) | bf16(hi[i]) << 16, rounded as toBf16Bits (with
/// AVX512-BF16 by vcvtne2ps2bf16, which also flushes denormals to zero).
ENC_INLINE attn_vu attnPackBf16(attn_vf lo, attn_vf hi) {
#if defined(__AVX512BF16__)
  alignas(64) static constexpr uint16_t kInterleave[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,
                                                           21, 6, 22, 7, 23, 8,  24, 9,  25, 10, 26,
                                                           11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
  const __m512i halves = (__m512i)_mm512_cvtne2ps_pbh((__m512)hi, (__m512)lo);
  return (attn_vu)_mm512_permutexvar_epi16(_mm512_load_si512(kInterleave), halves);
#else
  return attnToBf16(lo) | (attnToBf16(hi) << 16);
#endif
}

/// vbuf[(jj/2*D + d)*2 + jj%2] = bf16(v[(j0 + jj)*ld + d]) for jj < nk: the
/// value rows of a key tile rounded into vdpbf16ps's pair layout (the odd
/// slot of a last unpaired row is 0).
template <int D>
ENC_INLINE void attnCopyVBf16(uint16_t *vbuf, const float *v, int64_t ld, int64_t j0, int nk) {
  constexpr int L = kAttnLanes;
  for (int jj = 0; jj < nk; jj += 2) {
    const float *a = v + (j0 + jj) * ld;
    const float *b = jj + 1 < nk ? a + ld : nullptr;
    uint16_t *out = vbuf + jj * D;
    int d = 0;
    for (; d + L <= D; d += L) {
      attnStoreU(out + 2 * d, attnPackBf16(attnLoad(a + d), b ? attnLoad(b + d) : attnSplat(0.0f)));
    }
    for (; d < D; ++d) {
      out[2 * d] = toBf16Bits(a[d]);
      out[2 * d + 1] = b ? toBf16Bits(b[d]) : uint16_t(0);
    }
  }
}

/// attnCopyVBf16's layout holding what its rounding left out of each value:
/// bf16(v - bf16(v)) (the low parts of a split p·v).
template <int D>
ENC_INLINE void attnCopyVBf16Lo(uint16_t *vbuf, const float *v, int64_t ld, int64_t j0, int nk) {
  constexpr int L = kAttnLanes;
  // What attnPackBf16 rounds away from each lane (x - its bf16, widened).
  auto rest = [](attn_vf x) { return x - attnAsFloat(attnToBf16(x) << 16); };
  for (int jj = 0; jj < nk; jj += 2) {
    const float *a = v + (j0 + jj) * ld;
    const float *b = jj + 1 < nk ? a + ld : nullptr;
    uint16_t *out = vbuf + jj * D;
    int d = 0;
    for (; d + L <= D; d += L)
      attnStoreU(out + 2 * d, attnPackBf16(rest(attnLoad(a + d)), b ? rest(attnLoad(b + d)) : attnSplat(0.0f)));
    for (; d < D; ++d) {
      out[2 * d] = toBf16Bits(a[d] - bf16ToFloat(toBf16Bits(a[d])));
      out[2 * d + 1] = b ? toBf16Bits(b[d] - bf16ToFloat(toBf16Bits(b[d]))) : uint16_t(0);
    }
  }
}

/// Per-call working memory of the attention kernels. kbuf/vbuf hold the
/// key/value rows of one key tile, contiguous; when a sequence fits in one
/// tile they are kept for the next unit of the same (sequence, head).
/// With PVBf16, vbuf holds the values as bf16 in attnCopyVBf16's pair
/// layout and pb the probabilities as bf16 pairs of keys 2i, 2i+1.
template <int D, bool PVBf16, bool Split = false> struct AttnScratch {
  static constexpr int QT = kAttnRows, KT = kAttnKeyTile;
  static_assert(!PVBf16 || KT % 2 == 0, "bf16 p·v takes keys in pairs");
  alignas(64) float kbuf[KT * D];
  alignas(64) std::conditional_t<PVBf16, uint16_t, float> vbuf[KT * D];
  alignas(64) float qT[D * QT]; // qT[d*QT + r] = scale * q[r][d]; r >= nq: 0
  alignas(64) float p[KT * QT]; // scores, then probabilities: p[j*QT + r]
  alignas(64) uint32_t pb[PVBf16 ? KT / 2 * QT : 1]; // pb[i*QT + r] = bf16(p[2i][r]), bf16(p[2i+1][r])
  /// AMX p·v: pb transposed, pa[r*KT/2 + i] (query row r's key pairs in a
  /// row, tdpbf16ps's A operand), pairs past the tile's zero.
  static constexpr bool kAmx = ENC_ATTN_AMX && PVBf16 && D % 16 == 0;
  alignas(64) uint32_t pa[kAmx ? QT * KT / 2 : 1];
  /// AMX q·kᵀ (D a multiple of 32, a tile's row of bf16): each of q and k
  /// split into a bf16 high part and the bf16 of the rest, the scores the sum
  /// of three tile products (hi·hi + hi·lo + lo·hi: ~2^-17 of |q||k| from
  /// fp32's). khi/klo: key rows in bf16 (rows past the tile's keys zero, to
  /// the next 16); qhi/qlo: the scaled queries in tdpbf16ps's B layout,
  /// qhi[i*QT + r] = (q[r][2i], q[r][2i+1]).
  static constexpr bool kAmxScores = kAmx && D % 32 == 0;
  /// Split (enc.attention {bf16_amx}): p·v too as three tile products of
  /// bf16 high and low parts (Phi·Vhi + Phi·Vlo + Plo·Vhi), so the whole
  /// attention is within ~2^-16 of f32 (the int8 tier's: its gates did not
  /// survive bf16 probabilities and values). pbLo / paLo, vbufLo / seqVlo:
  /// the low parts, laid out as pb / pa, vbuf / seqV.
  static constexpr bool kSplit = Split && kAmx;
  alignas(64) uint32_t pbLo[kSplit ? KT / 2 * QT : 1], paLo[kSplit ? QT * KT / 2 : 1];
  alignas(64) uint16_t vbufLo[kSplit ? KT * D : 1];
  std::vector<uint16_t> seqVlo;
  alignas(64) uint16_t khi[kAmxScores ? KT * D : 1], klo[kAmxScores ? KT * D : 1];
  alignas(64) uint32_t qhi[kAmxScores ? D / 2 * QT : 1], qlo[kAmxScores ? D / 2 * QT : 1];
  /// Without a band, a whole sequence's keys and values for one head, laid
  /// out once for all its units (they were copied again by every unit when
  /// longer than a key tile): keys as f32 rows (seqKf) or split (seqKhi /
  /// seqKlo, AMX q·kᵀ), values as f32 rows (seqVf) or bf16 pairs (seqV);
  /// zero past the keys to the next 32.
  std::vector<float> seqKf, seqVf;
  std::vector<uint16_t> seqKhi, seqKlo, seqV;
  const float *seqK = nullptr; // k of the head in seq*, if any
  int64_t seqLen = -1;
  int amxLoaded[2] = {-1, -1};
  alignas(64) float acc[QT][D];
  alignas(64) float alpha[QT];
  alignas(64) float tmax[QT]; // the tile's maximum score per query row
};

/// p[j*QT + r] = sum_d qT[d*QT + r] * kt[j*D + d] for keys j < nk: query
/// rows are the lanes of QV vectors, KB keys per step (KB*QV accumulators).
/// tmax[r] = max_j p[j*QT + r] (nk >= 1).
template <int D>
ENC_INLINE void attnScores(const float *qT, const float *kt, float *p,
                           float *tmax, int nk) {
  constexpr int QT = kAttnRows, L = kAttnLanes, QV = QT / L;
  constexpr int KB = std::max(1, kAttnAccumulators / QV);
  attn_vf mx[QV];
  for (int w = 0; w < QV; ++w)
    mx[w] = attnSplat(-INFINITY);
  int j = 0;
  for (; j + KB <= nk; j += KB) {
    const float *k0 = kt + j * D;
    attn_vf s[KB][QV];
    for (int c = 0; c < KB; ++c)
      for (int w = 0; w < QV; ++w)
        s[c][w] = attnSplat(0.0f);
    for (int d = 0; d < D; ++d)
      for (int w = 0; w < QV; ++w) {
        const attn_vf qd = attnLoad(qT + d * QT + L * w);
        for (int c = 0; c < KB; ++c)
          s[c][w] += qd * k0[c * D + d];
      }
    for (int c = 0; c < KB; ++c)
      for (int w = 0; w < QV; ++w) {
        attnStore(p + (j + c) * QT + L * w, s[c][w]);
        mx[w] = attnMax(mx[w], s[c][w]);
      }
  }
  for (; j < nk; ++j) {
    const float *kj = kt + j * D;
    attn_vf s[QV];
    for (int w = 0; w < QV; ++w)
      s[w] = attnSplat(0.0f);
    for (int d = 0; d < D; ++d)
      for (int w = 0; w < QV; ++w)
        s[w] += attnLoad(qT + d * QT + L * w) * kj[d];
    for (int w = 0; w < QV; ++w) {
      attnStore(p + j * QT + L * w, s[w]);
      mx[w] = attnMax(mx[w], s[w]);
    }
  }
  for (int w = 0; w < QV; ++w)
    attnStore(tmax + L * w, mx[w]);
}

/// A head's relative position bias (MPNet's table, or ALiBi's distance
/// times the head's slope) in the attention's base-2 score units,
/// laid out so the bias of query rows i.. against one key is contiguous:
/// at(center - j + i) = log2(e) * table[bucket(j - i), h] for query i and
/// key j of one sequence (center >= every key index; rows up to the last
/// padded query row of a tile are covered).
class AttnHeadBias {
public:
  AttnHeadBias(const RelativeBias &rb, int64_t NH, int64_t maxLen)
      : rb_(rb), nh_(NH), center_(std::max<int64_t>(maxLen, 1) - 1) {
    if (!enabled())
      return;
    const int64_t n = 2 * center_ + 1 + kAttnRows;
    values_.resize(n);
    if (!rb.table)
      return;
    bucket_.resize(n);
    for (int64_t t = 0; t < n; ++t) // t = center - (j - i)
      bucket_[t] = relativePositionBucket(center_ - t, rb.numBuckets, rb.maxDistance);
  }
  bool enabled() const { return rb_.any(); }
  /// Loads head h's values (once per run of units of that head).
  void selectHead(int64_t h) {
    if (!enabled() || h == head_)
      return;
    head_ = h;
    if (rb_.alibi) {
      const double slope = -alibiSlope(h, nh_) * 1.4426950408889634;
      for (size_t t = 0; t < values_.size(); ++t)
        values_[t] = static_cast<float>(slope * double(std::abs(center_ - static_cast<int64_t>(t))));
      return;
    }
    for (size_t t = 0; t < bucket_.size(); ++t)
      values_[t] = rb_.table[bucket_[t] * nh_ + h] * kLog2e;
  }
  /// The bias of query rows i0.. against key j, row r at [r].
  const float *rowsAgainstKey(int64_t i0, int64_t j) const {
    return values_.data() + (center_ - j + i0);
  }

private:
  RelativeBias rb_;
  int64_t nh_, center_, head_ = -1;
  std::vector<int32_t> bucket_;
  std::vector<float> values_;
};

/// p[jj*QT + r] += bias of query row i0 + r against key j0 + jj, for the nk
/// keys of the tile; tmax[r] recomputed over the biased scores.
ENC_INLINE void attnAddBias(const AttnHeadBias &bias, int64_t i0, int64_t j0, float *p,
                            float *tmax, int nk) {
  constexpr int QT = kAttnRows, L = kAttnLanes, QV = QT / L;
  attn_vf mx[QV];
  for (int w = 0; w < QV; ++w)
    mx[w] = attnSplat(-INFINITY);
  for (int jj = 0; jj < nk; ++jj) {
    const float *b = bias.rowsAgainstKey(i0, j0 + jj);
    for (int w = 0; w < QV; ++w) {
      const attn_vf s = attnLoad(p + jj * QT + L * w) + attnLoad(b + L * w);
      attnStore(p + jj * QT + L * w, s);
      mx[w] = attnMax(mx[w], s);
    }
  }
  for (int w = 0; w < QV; ++w)
    attnStore(tmax + L * w, mx[w]);
}

/// 2^(s - m), the unnormalised probability of base-2 score s under the row
/// maximum m; exactly 0 for a key masked out (s = -inf) where `masked`
/// scores exist: attnExp2's floor of 2^-125 times a value is a subnormal,
/// and subnormal FMAs made the windowed kernel 8x slower.
ENC_INLINE attn_vf attnExpScore(attn_vf s, attn_vf m, bool masked) {
  const attn_vf e = attnExp2(s - m);
  return masked ? (s > attnSplat(-INFINITY) ? e : attnSplat(0.0f)) : e;
}

/// Scores of query rows i0 + r against keys j0 + jj outside the band set to
/// -inf (tiles wholly inside every row's band are left alone); tmax[r]
/// recomputed over the tile. Key j's visible rows are one run
/// [j - right - i0, j + left - i0], so only the rows outside it are written.
ENC_INLINE void attnMaskBand(int64_t i0, int nq, int64_t j0, int nk, const AttnBand &band, float *p,
                             float *tmax) {
  constexpr int QT = kAttnRows, L = kAttnLanes, QV = QT / L;
  const bool rightInside = band.right < 0 || j0 + nk - 1 - i0 <= band.right;
  const bool leftInside = band.left < 0 || i0 + nq - 1 - j0 <= band.left;
  if (rightInside && leftInside)
    return;
  attn_vf mx[QV];
  for (int v = 0; v < QV; ++v)
    mx[v] = attnSplat(-INFINITY);
  for (int jj = 0; jj < nk; ++jj) {
    const int64_t j = j0 + jj;
    const int64_t lo = band.right < 0 ? 0 : std::min<int64_t>(std::max<int64_t>(0, j - band.right - i0), QT);
    const int64_t top = band.left < 0 ? QT - 1 : std::min<int64_t>(QT - 1, j + band.left - i0);
    const int64_t hi = std::max<int64_t>(top, lo - 1);
    float *pj = p + jj * QT;
    for (int64_t r = 0; r < lo; ++r)
      pj[r] = -INFINITY;
    for (int64_t r = hi + 1; r < QT; ++r)
      pj[r] = -INFINITY;
    for (int v = 0; v < QV; ++v)
      mx[v] = attnMax(mx[v], attnLoad(pj + L * v));
  }
  for (int v = 0; v < QV; ++v)
    attnStore(tmax + L * v, mx[v]);
}

/// Rows [r0, r0+RB), columns [d0, d0+L*NV) of
/// acc[r] = acc[r] * alpha[r] + sum_{j < nk} p[j*QT + r] * v[j*D + .]:
/// RB x NV accumulators in registers. The arithmetic of a row does not
/// depend on RB.
template <int D, int QT, int RB, int NV>
ENC_INLINE void attnPVBlock(float (&acc)[QT][D], const float *p,
                            const float *alpha, const float *v, int nk,
                            int r0, int d0) {
  constexpr int L = kAttnLanes;
  attn_vf a[RB][NV];
  for (int r = 0; r < RB; ++r)
    for (int i = 0; i < NV; ++i)
      a[r][i] = attnLoad(&acc[r0 + r][d0 + L * i]) * alpha[r0 + r];
  for (int j = 0; j < nk; ++j) {
    const float *vj = v + j * D + d0;
    const float *pj = p + j * QT + r0;
    for (int i = 0; i < NV; ++i) {
      const attn_vf vv = attnLoad(vj + L * i);
      for (int r = 0; r < RB; ++r)
        a[r][i] += pj[r] * vv;
    }
  }
  for (int r = 0; r < RB; ++r)
    for (int i = 0; i < NV; ++i)
      attnStore(&acc[r0 + r][d0 + L * i], a[r][i]);
}

/// attnPVBlock over bf16 pairs (bf16 p·v): rows [r0, r0+RB), columns
/// [d0, d0+L*NV) of acc[r] = acc[r] * alpha[r] + sum_i pb[i*QT + r] . vb
/// pairs i (attnCopyVBf16's layout; `pairs` key pairs).
template <int D, int QT, int RB, int NV>
ENC_INLINE void attnPVBlock(float (&acc)[QT][D], const uint32_t *pb, const float *alpha,
                            const uint16_t *vb, int pairs, int r0, int d0) {
  constexpr int L = kAttnLanes;
  attn_vf a[RB][NV];
  for (int r = 0; r < RB; ++r)
    for (int i = 0; i < NV; ++i)
      a[r][i] = attnLoad(&acc[r0 + r][d0 + L * i]) * alpha[r0 + r];
  for (int jp = 0; jp < pairs; ++jp) {
    const uint16_t *vj = vb + (jp * D + d0) * 2;
    const uint32_t *pj = pb + jp * QT + r0;
    for (int i = 0; i < NV; ++i) {
      const attn_vu vv = attnLoadU(vj + 2 * L * i);
      for (int r = 0; r < RB; ++r)
        a[r][i] = attnDotBf16(a[r][i], attnSplatU(pj[r]), vv);
    }
  }
  for (int r = 0; r < RB; ++r)
    for (int i = 0; i < NV; ++i)
      attnStore(&acc[r0 + r][d0 + L * i], a[r][i]);
}

/// acc[r] = acc[r] * alpha[r] + sum_j p[j*QT + r] * v[j] for rows r < nq:
/// fp32 p and v (rows contiguous, D floats each; n keys), or bf16 pairs
/// (uint32_t pb and uint16_t vb as attnPVBlock's bf16 form; n key pairs).
template <int D, int QT, typename P, typename V>
ENC_INLINE void attnAccumulate(float (&acc)[QT][D], const P *p, const float *alpha, const V *v, int n,
                               int nq) {
  constexpr int L = kAttnLanes;
  if constexpr (D % L == 0) {
    constexpr int DC = D % (4 * L) == 0 ? 4 * L : D % (2 * L) == 0 ? 2 * L : L;
    constexpr int NV = DC / L;
    constexpr int RB = std::max(1, kAttnAccumulators / NV);
    for (int d0 = 0; d0 < D; d0 += DC) {
      int r = 0;
      for (; r + RB <= nq; r += RB)
        attnPVBlock<D, QT, RB, NV>(acc, p, alpha, v, n, r, d0);
      // The last rows in smaller blocks (one row alone would wait on the
      // FMA latency).
      if constexpr (RB > 2)
        for (; r + 2 <= nq; r += 2)
          attnPVBlock<D, QT, 2, NV>(acc, p, alpha, v, n, r, d0);
      for (; r < nq; ++r)
        attnPVBlock<D, QT, 1, NV>(acc, p, alpha, v, n, r, d0);
    }
  } else {
    for (int r = 0; r < nq; ++r)
      for (int d = 0; d < D; ++d) {
        float a = acc[r][d] * alpha[r];
        for (int j = 0; j < n; ++j) {
          if constexpr (std::is_same_v<P, float>) {
            a += p[j * QT + r] * v[j * D + d];
          } else { // odd key first, as vdpbf16ps
            const uint32_t pp = p[j * QT + r];
            a += bf16ToFloat(uint16_t(pp >> 16)) * bf16ToFloat(v[(j * D + d) * 2 + 1]);
            a += bf16ToFloat(uint16_t(pp)) * bf16ToFloat(v[(j * D + d) * 2]);
          }
        }
        acc[r][d] = a;
      }
  }
}

#if ENC_ATTN_AMX
/// acc[r] = acc[r] * alpha[r] + sum_i pa[r*KT/2 + i] . vb pairs i, for the
/// row blocks of 16 holding rows < nq, over `steps` blocks of 16 key pairs
/// (pa and vb zero past the tile's keys) on AMX tiles: tmm0..3 the
/// accumulators of 16 rows x 64 columns (loaded from acc and stored back),
/// tmm4 16 rows x 16 key pairs of probabilities, tmm6 16 key pairs x 16
/// columns of values (attnCopyVBf16's pair layout is tdpbf16ps's B layout).
/// tdpbf16ps sums each pair's two products before adding them (the vector
/// form adds the odd one first): the fp32 results differ by roundings.
/// tmm0..tmm(blocks-1) loaded from (Load) or stored to the 16-column blocks
/// of c, rows ld bytes apart (tile numbers are immediates: a branch each).
template <bool Load>
ENC_INLINE void attnAccTiles(float *c, int blocks, int64_t ld) {
#define ENC_ATTN_ACC_TILE(t)                                                                                          \
  if (blocks > t) {                                                                                                   \
    if constexpr (Load)                                                                                               \
      _tile_loadd(t, c + 16 * t, ld);                                                                                 \
    else                                                                                                              \
      _tile_stored(t, c + 16 * t, ld);                                                                                \
  }
  ENC_ATTN_ACC_TILE(0)
  ENC_ATTN_ACC_TILE(1)
  ENC_ATTN_ACC_TILE(2)
  ENC_ATTN_ACC_TILE(3)
#undef ENC_ATTN_ACC_TILE
}

template <int D, int QT, int KT, bool Split>
void attnAccumulateAmx(float (&acc)[QT][D], const uint32_t *pa, const uint32_t *paLo, const float *alpha,
                       const uint16_t *vb, const uint16_t *vbLo, int steps, int nq, int (&loaded)[2]) {
  constexpr int L = kAttnLanes;
  for (int r = 0; r < nq; ++r)
    for (int d = 0; d < D; d += L)
      attnStore(&acc[r][d], attnLoad(&acc[r][d]) * alpha[r]);
  amxConfigure(16, 16, loaded);
  constexpr int64_t ldAcc = D * sizeof(float), ldA = KT / 2 * sizeof(uint32_t), ldB = D * 2 * sizeof(uint16_t);
  for (int r0 = 0; r0 < nq; r0 += 16) {
    for (int d0 = 0; d0 < D; d0 += 64) {
      const int blocks = std::min(4, (D - d0) / 16);
      float *c = &acc[r0][d0];
      attnAccTiles<true>(c, blocks, ldAcc);
      for (int s = 0; s < steps; ++s) {
        _tile_loadd(4, pa + r0 * (KT / 2) + s * 16, ldA);
        if constexpr (Split)
          _tile_loadd(5, paLo + r0 * (KT / 2) + s * 16, ldA);
        const int64_t at = (s * 16 * D + d0) * 2;
        // Column block t: P·V (Split: Phi·Vhi + Plo·Vhi + Phi·Vlo).
#define ENC_ATTN_PV_BLOCK(t)                                                                                          \
  if (blocks > t) {                                                                                                   \
    _tile_loadd(6, vb + at + 32 * t, ldB);                                                                            \
    _tile_dpbf16ps(t, 4, 6);                                                                                          \
    if constexpr (Split) {                                                                                            \
      _tile_dpbf16ps(t, 5, 6);                                                                                        \
      _tile_loadd(7, vbLo + at + 32 * t, ldB);                                                                        \
      _tile_dpbf16ps(t, 4, 7);                                                                                        \
    }                                                                                                                 \
  }
        ENC_ATTN_PV_BLOCK(0)
        ENC_ATTN_PV_BLOCK(1)
        ENC_ATTN_PV_BLOCK(2)
        ENC_ATTN_PV_BLOCK(3)
#undef ENC_ATTN_PV_BLOCK
      }
      attnAccTiles<false>(c, blocks, ldAcc);
    }
  }
}
#endif

#if ENC_ATTN_AMX
/// The low and high bf16 of each 32-bit lane, widened to fp32.
ENC_INLINE attn_vf attnLowBf16(attn_vu u) { return attnAsFloat(u << 16); }
ENC_INLINE attn_vf attnHighBf16(attn_vu u) { return attnAsFloat(u & attnSplatU(0xffff0000u)); }

/// qhi/qlo (AttnScratch) of the scaled, transposed queries qT.
template <int D, int QT>
ENC_INLINE void attnSplitQ(const float *qT, uint32_t *qhi, uint32_t *qlo) {
  constexpr int L = kAttnLanes;
  for (int i = 0; i < D / 2; ++i)
    for (int r = 0; r < QT; r += L) {
      const attn_vf a = attnLoad(qT + 2 * i * QT + r), b = attnLoad(qT + (2 * i + 1) * QT + r);
      const attn_vu hi = attnPackBf16(a, b);
      attnStoreU(qhi + i * QT + r, hi);
      attnStoreU(qlo + i * QT + r, attnPackBf16(a - attnLowBf16(hi), b - attnHighBf16(hi)));
    }
}

/// Key rows [0, nk) of k (rows `ld` apart) as bf16 high and low parts, D
/// each, rows up to the next multiple of 16 zero.
template <int D>
ENC_INLINE void attnSplitK(const float *k, int64_t ld, int64_t nk, uint16_t *khi, uint16_t *klo) {
  constexpr int L = kAttnLanes; // 16: AVX-512 is part of every AMX object
  for (int64_t j = 0; j < nk; ++j) {
    int d = 0;
    for (; d + L <= D; d += L) {
      const attn_vf x = attnLoad(k + j * ld + d);
      const attn_vu hi = attnToBf16(x);
      const attn_vu lo = attnToBf16(x - attnAsFloat(hi << 16));
      _mm256_storeu_si256(reinterpret_cast<__m256i *>(khi + j * D + d), _mm512_cvtepi32_epi16((__m512i)hi));
      _mm256_storeu_si256(reinterpret_cast<__m256i *>(klo + j * D + d), _mm512_cvtepi32_epi16((__m512i)lo));
    }
    for (; d < D; ++d) {
      const float x = k[j * ld + d];
      const uint16_t hi = toBf16Bits(x);
      khi[j * D + d] = hi;
      klo[j * D + d] = toBf16Bits(x - bf16ToFloat(hi));
    }
  }
  const int64_t padded = (nk + 15) / 16 * 16;
  std::memset(khi + nk * D, 0, sizeof(uint16_t) * (padded - nk) * D);
  std::memset(klo + nk * D, 0, sizeof(uint16_t) * (padded - nk) * D);
}

/// pa[r*KT/2 + i] = pb[i*QT + r] for rows r < rows (a multiple of 16) and
/// key pairs i < steps * 16, 0 for pairs >= pairs: 16 x 16 transposes.
template <int QT, int KT>
ENC_INLINE void attnTransposePairs(const uint32_t *pb, uint32_t *pa, int pairs, int steps, int rows) {
  for (int r0 = 0; r0 < rows; r0 += 16)
    for (int g = 0; g < steps; ++g) {
      __m512i x[16], t[16];
      for (int i = 0; i < 16; ++i)
        x[i] = g * 16 + i < pairs ? _mm512_loadu_si512(pb + (g * 16 + i) * QT + r0) : _mm512_setzero_si512();
      for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(x[i], x[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(x[i], x[i + 1]);
      }
      for (int i = 0; i < 16; i += 4) { // x[i + c], 128-bit lane l: column 4l + c of rows i..i+3
        x[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        x[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        x[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        x[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
      }
      for (int c = 0; c < 4; ++c) {
        t[c] = _mm512_shuffle_i32x4(x[c], x[4 + c], 0x88);
        t[4 + c] = _mm512_shuffle_i32x4(x[c], x[4 + c], 0xdd);
        t[8 + c] = _mm512_shuffle_i32x4(x[8 + c], x[12 + c], 0x88);
        t[12 + c] = _mm512_shuffle_i32x4(x[8 + c], x[12 + c], 0xdd);
      }
      for (int c = 0; c < 4; ++c) {
        x[c] = _mm512_shuffle_i32x4(t[c], t[8 + c], 0x88);
        x[8 + c] = _mm512_shuffle_i32x4(t[c], t[8 + c], 0xdd);
        x[4 + c] = _mm512_shuffle_i32x4(t[4 + c], t[12 + c], 0x88);
        x[12 + c] = _mm512_shuffle_i32x4(t[4 + c], t[12 + c], 0xdd);
      }
      for (int c = 0; c < 16; ++c)
        _mm512_storeu_si512(pa + (r0 + c) * (KT / 2) + g * 16, x[c]);
    }
}

/// attnScores on AMX tiles: p[j*QT + r] for keys j < nk (and up to the next
/// 16, from the zero rows) and the rows of the 16-row blocks below nq,
/// tmax[r] over the keys j < nk. tmm0..3: the scores of 4 blocks of 16 keys x
/// 16 rows; tmm4 / tmm5 16 keys' hi / lo parts x 32 of D; tmm6 / tmm7 the
/// rows' hi / lo parts.
template <int D, int QT, int KT>
void attnScoresAmx(const uint32_t *qhi, const uint32_t *qlo, const uint16_t *khi, const uint16_t *klo, float *p,
                   float *tmax, int nk, int nq, int (&loaded)[2]) {
  constexpr int L = kAttnLanes, QV = QT / L;
  amxConfigure(16, 16, loaded);
  constexpr int64_t ldK = D * sizeof(uint16_t), ldQ = QT * sizeof(uint32_t), ldP = QT * sizeof(float);
  const int blocks = (nk + 15) / 16;
  for (int r0 = 0; r0 < nq; r0 += 16)
    for (int b0 = 0; b0 < blocks; b0 += 4) {
      const int nb = std::min(4, blocks - b0);
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
      for (int s = 0; s < D / 32; ++s) {
        _tile_loadd(6, qhi + s * 16 * QT + r0, ldQ);
        _tile_loadd(7, qlo + s * 16 * QT + r0, ldQ);
#define ENC_ATTN_SCORE_BLOCK(t)                                                                                       \
  if (nb > t) {                                                                                                       \
    _tile_loadd(4, khi + (b0 + t) * 16 * D + s * 32, ldK);                                                           \
    _tile_loadd(5, klo + (b0 + t) * 16 * D + s * 32, ldK);                                                           \
    _tile_dpbf16ps(t, 4, 6);                                                                                          \
    _tile_dpbf16ps(t, 4, 7);                                                                                          \
    _tile_dpbf16ps(t, 5, 6);                                                                                          \
  }
        ENC_ATTN_SCORE_BLOCK(0)
        ENC_ATTN_SCORE_BLOCK(1)
        ENC_ATTN_SCORE_BLOCK(2)
        ENC_ATTN_SCORE_BLOCK(3)
#undef ENC_ATTN_SCORE_BLOCK
      }
      float *c = p + b0 * 16 * QT + r0;
      _tile_stored(0, c, ldP);
      if (nb > 1)
        _tile_stored(1, c + 16 * QT, ldP);
      if (nb > 2)
        _tile_stored(2, c + 32 * QT, ldP);
      if (nb > 3)
        _tile_stored(3, c + 48 * QT, ldP);
    }
  for (int w = 0; w < QV; ++w) {
    attn_vf mx = attnSplat(-INFINITY);
    for (int j = 0; j < nk; ++j)
      mx = attnMax(mx, attnLoad(p + j * QT + L * w));
    attnStore(tmax + L * w, mx);
  }
}
#endif

/// ws.seq*: head k / v's keys and values [0, len) (rows `ld` apart) laid out
/// for every unit of the head (AttnScratch), rows up to the next 32 zero.
/// The next head's queries, keys and values are prefetched on the way (the
/// next units' work, usually; prefetches never fault, so rows past the end
/// are harmless).
template <int D, bool PVBf16, bool Split>
void attnLayOutSequence(AttnScratch<D, PVBf16, Split> &ws, const float *qHead, int64_t ldq, const float *k,
                        const float *v, int64_t ld, int64_t len) {
  using Scratch = AttnScratch<D, PVBf16, Split>;
  const int64_t rows = (len + 31) / 32 * 32, pairs = (len + 1) / 2;
  // resize, not assign: the rows are written below, the padding zeroed.
  auto padded = [&](auto &buffer, int64_t from) {
    buffer.resize(rows * D);
    if (rows * D > from)
      std::memset(buffer.data() + from, 0, sizeof(buffer[0]) * (rows * D - from));
  };
  if constexpr (Scratch::kAmxScores) {
#if ENC_ATTN_AMX
    padded(ws.seqKhi, len * D);
    padded(ws.seqKlo, len * D);
    attnSplitK<D>(k, ld, len, ws.seqKhi.data(), ws.seqKlo.data());
#endif
  } else {
    padded(ws.seqKf, len * D);
  }
  if constexpr (PVBf16) {
    padded(ws.seqV, pairs * 2 * D);
    attnCopyVBf16<D>(ws.seqV.data(), v, ld, 0, int(len));
    if constexpr (Scratch::kSplit) {
      padded(ws.seqVlo, pairs * 2 * D);
      attnCopyVBf16Lo<D>(ws.seqVlo.data(), v, ld, 0, int(len));
    }
  } else {
    padded(ws.seqVf, len * D);
  }
  for (int64_t j = 0; j < len; ++j) {
    if constexpr (!Scratch::kAmxScores)
      std::memcpy(ws.seqKf.data() + j * D, k + j * ld, sizeof(float) * D);
    if constexpr (!PVBf16)
      std::memcpy(ws.seqVf.data() + j * D, v + j * ld, sizeof(float) * D);
    for (int c = 0; c < D; c += 16) {
      __builtin_prefetch(qHead + j * ldq + D + c);
      __builtin_prefetch(k + j * ld + D + c);
      __builtin_prefetch(v + j * ld + D + c);
    }
  }
  ws.seqK = k;
  ws.seqLen = len;
}

/// One unit: nq (<= kAttnRows) query rows i0.. at q (rows `ld` apart)
/// against keys and values [0, len) at k and v; output rows at y, `ldy`
/// apart (fp32, or rounded to bf16 for uint16_t). Query row r is lane r % L
/// of score vector r / L. PVBf16: p·v over bf16 probabilities and values.
template <int D, bool PVBf16, bool Split, typename Y>
void attentionTile(AttnScratch<D, PVBf16, Split> &ws, const float *q, int64_t ldq, int64_t i0,
                   const float *k, const float *v, int64_t ld, Y *y,
                   int64_t ldy, int nq, int64_t len, float scale,
                   const AttnHeadBias &bias, const AttnBand &band) {
  const float *qHead = q - i0 * ldq; // the head's first query row
  constexpr int QT = kAttnRows, KT = kAttnKeyTile, L = kAttnLanes;
  constexpr int QV = QT / L;
  attnTransposeQ<D, QT>(q, ldq, nq, scale * kLog2e, ws.qT);
#if ENC_ATTN_AMX
  if constexpr (AttnScratch<D, PVBf16, Split>::kAmxScores)
    attnSplitQ<D, QT>(ws.qT, ws.qhi, ws.qlo);
#endif
  constexpr bool amx = AttnScratch<D, PVBf16, Split>::kAmx;
  // AMX works on blocks of 16 rows: the rows past nq in the last block are
  // computed too (finite: their queries are 0).
  const int accRows = amx ? std::min(QT, (nq + 15) / 16 * 16) : nq;
  for (int r = 0; r < accRows; ++r)
    for (int d = 0; d < D; ++d)
      ws.acc[r][d] = 0.0f;
  attn_vf m[QV], l[QV];
  for (int w = 0; w < QV; ++w) {
    m[w] = attnSplat(-INFINITY);
    l[w] = attnSplat(0.0f);
  }

  // The keys the rows may see: all valid ones, or the band's.
  const bool masked = band.any();
  const int64_t kBegin = band.left < 0 ? 0 : std::max<int64_t>(0, i0 - band.left);
  const int64_t kEnd = band.right < 0 ? len : std::min<int64_t>(len, i0 + nq + band.right);
  // Without a band every unit of the head reads all its keys: laid out once.
  const bool wholeSequence = !masked;
  if (wholeSequence && len > 0 && !(ws.seqK == k && ws.seqLen == len))
    attnLayOutSequence<D>(ws, qHead, ldq, k, v, ld, len);
  for (int64_t j0 = kBegin; j0 < kEnd; j0 += KT) {
    const int nk = static_cast<int>(std::min<int64_t>(KT, kEnd - j0));
    // With a band, copy the tile's k and v rows to contiguous buffers (rows
    // `ld` apart, ld = 3H for packed qkv, would map onto few cache sets).
    if (!wholeSequence) {
      for (int jj = 0; jj < nk; ++jj) {
        const int64_t row = (j0 + jj) * ld;
        std::memcpy(ws.kbuf + jj * D, k + row, sizeof(float) * D);
        if constexpr (!PVBf16)
          std::memcpy(ws.vbuf + jj * D, v + row, sizeof(float) * D);
        // The next head's queries, keys and values (usually the next
        // units' work; prefetches never fault, so rows past the end are
        // harmless).
        for (int c = 0; c < D; c += 16) {
          __builtin_prefetch(qHead + (j0 + jj) * ldq + D + c);
          __builtin_prefetch(k + row + D + c);
          __builtin_prefetch(v + row + D + c);
        }
      }
      if constexpr (PVBf16) {
        attnCopyVBf16<D>(ws.vbuf, v, ld, j0, nk);
        if constexpr (amx) { // key pairs up to the next 16 are zero for the tiles
          const int pairs = (nk + 1) / 2, padded = (pairs + 15) / 16 * 16;
          std::memset(ws.vbuf + pairs * D * 2, 0, sizeof(uint16_t) * (padded - pairs) * D * 2);
          if constexpr (AttnScratch<D, PVBf16, Split>::kSplit) {
            attnCopyVBf16Lo<D>(ws.vbufLo, v, ld, j0, nk);
            std::memset(ws.vbufLo + pairs * D * 2, 0, sizeof(uint16_t) * (padded - pairs) * D * 2);
          }
        }
#if ENC_ATTN_AMX
        if constexpr (AttnScratch<D, PVBf16, Split>::kAmxScores)
          attnSplitK<D>(ws.kbuf, D, nk, ws.khi, ws.klo);
#endif
      }
    }
    if constexpr (AttnScratch<D, PVBf16, Split>::kAmxScores) {
#if ENC_ATTN_AMX
      attnScoresAmx<D, QT, KT>(ws.qhi, ws.qlo, wholeSequence ? ws.seqKhi.data() + j0 * D : ws.khi,
                               wholeSequence ? ws.seqKlo.data() + j0 * D : ws.klo, ws.p, ws.tmax, nk, nq,
                               ws.amxLoaded);
#endif
    } else {
      attnScores<D>(ws.qT, wholeSequence ? ws.seqKf.data() + j0 * D : ws.kbuf, ws.p, ws.tmax, nk);
    }
    if (bias.enabled())
      attnAddBias(bias, i0, j0, ws.p, ws.tmax, nk);
    if (masked)
      attnMaskBand(i0, nq, j0, nk, band, ws.p, ws.tmax);
    // Online softmax, vectorised over the query rows.
    for (int w = 0; w < QV; ++w) {
      float *pw = ws.p + L * w;
      attn_vf mNew = attnMax(m[w], attnLoad(ws.tmax + L * w));
      // A row with no key in its band so far (only padded query rows, whose
      // band may lie past the valid keys): a finite stand-in, not -inf - -inf.
      if (masked)
        mNew = attnMax(mNew, attnSplat(-3.0e38f));
      // alpha = 2^(m - mNew): the rescale of the earlier tiles' sums (2^-125
      // on the first tile, where m = -inf and there is nothing to rescale).
      const attn_vf a = attnExp2(m[w] - mNew);
      attn_vf sum = attnSplat(0.0f);
      if constexpr (PVBf16) {
        // Keys 2i and 2i+1 rounded into one bf16 pair (the sum stays that
        // of the fp32 exponentials).
        for (int j = 0; j < nk; j += 2) {
          const attn_vf e0 = attnExpScore(attnLoad(pw + j * QT), mNew, masked);
          const attn_vf e1 =
              j + 1 < nk ? attnExpScore(attnLoad(pw + (j + 1) * QT), mNew, masked) : attnSplat(0.0f);
          sum += e0 + e1;
          const attn_vu hi = attnPackBf16(e0, e1);
          attnStoreU(ws.pb + j / 2 * QT + L * w, hi);
#if ENC_ATTN_AMX
          if constexpr (AttnScratch<D, PVBf16, Split>::kSplit)
            attnStoreU(ws.pbLo + j / 2 * QT + L * w, attnPackBf16(e0 - attnLowBf16(hi), e1 - attnHighBf16(hi)));
#endif
        }
      } else {
        for (int j = 0; j < nk; ++j) {
          const attn_vf e = attnExpScore(attnLoad(pw + j * QT), mNew, masked);
          attnStore(pw + j * QT, e);
          sum += e;
        }
      }
      l[w] = l[w] * a + sum;
      m[w] = mNew;
      attnStore(ws.alpha + L * w, a);
    }
    if constexpr (amx) {
#if ENC_ATTN_AMX
      const int pairs = (nk + 1) / 2, steps = (pairs + 15) / 16;
      constexpr bool split = AttnScratch<D, PVBf16, Split>::kSplit;
      attnTransposePairs<QT, KT>(ws.pb, ws.pa, pairs, steps, accRows);
      if constexpr (split)
        attnTransposePairs<QT, KT>(ws.pbLo, ws.paLo, pairs, steps, accRows);
      attnAccumulateAmx<D, QT, KT, split>(ws.acc, ws.pa, ws.paLo, ws.alpha,
                                          wholeSequence ? ws.seqV.data() + j0 * D : ws.vbuf,
                                          split && wholeSequence ? ws.seqVlo.data() + j0 * D : ws.vbufLo, steps,
                                          accRows,
                                          ws.amxLoaded);
#endif
    } else if constexpr (PVBf16)
      attnAccumulate<D, QT>(ws.acc, ws.pb, ws.alpha, wholeSequence ? ws.seqV.data() + j0 * D : ws.vbuf, (nk + 1) / 2,
                            nq);
    else
      attnAccumulate<D, QT>(ws.acc, ws.p, ws.alpha, wholeSequence ? ws.seqVf.data() + j0 * D : ws.vbuf, nk, nq);
  }
  alignas(32) float lv[QT];
  for (int w = 0; w < QV; ++w)
    attnStore(lv + L * w, l[w]);
  for (int r = 0; r < nq; ++r) {
    const float inv = lv[r] > 0.0f ? 1.0f / lv[r] : 0.0f; // len == 0: zeros
    for (int d = 0; d < D; ++d)
      storeOut(y + r * ldy + d, ws.acc[r][d] * inv);
  }
}

} // namespace detail

/// enc.attention in the merged layout: q, k, v point at the first element
/// of their [B, S, ld] views (ld = NH*D for three inputs; packed qkv:
/// ld = 3*NH*D, k = q + NH*D, v = q + 2*NH*D); y is [B, S, NH*D].
/// y[b,s,h*D+d] = sum_{j < len_b} softmax_j(scale * <q_s, k_j>) v[j][d]
/// (len_b = lengths[b] clamped to [0, S]; len_b == 0 gives zeros). Work
/// units: (b, h, 32-row query tile), contiguous per task. y: float, or
/// uint16_t (rounded to bf16: an enc.to_bf16 of the result fused in).
/// PVBf16 (enc.attention {bf16_pv}): p·v over probabilities and values
/// rounded to bf16, fp32 sums. band: query s sees only the keys
/// s - left <= j <= s + right (a local layer, causal attention; default: all).
/// kv: grouped key/value heads (k and v rows kv.ld apart, head h / kv.group).
template <int NH, int D, bool PVBf16 = false, bool Split = false, typename Y>
void attention(const float *q, const float *k, const float *v, int64_t ld,
               const int32_t *lengths, Y *y, int64_t B, int64_t S,
               float scale, int32_t task, int32_t numTasks,
               const RelativeBias &rb = {}, const AttnBand &band = {}, const AttnKv &kv = {}) {
  constexpr int QT = detail::kAttnRows;
  const int64_t tiles = (S + QT - 1) / QT;
  const int64_t ldy = int64_t(NH) * D;
  int64_t u0, u1;
  taskShare(B * NH * tiles, task, numTasks, u0, u1);
  if (u0 >= u1)
    return;
  detail::AttnScratch<D, PVBf16, Split> ws;
  detail::AttnHeadBias bias(rb, NH, S);
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t b = u / (NH * tiles), h = (u / tiles) % NH;
    const int64_t i0 = (u % tiles) * QT;
    const int nq = static_cast<int>(std::min<int64_t>(QT, S - i0));
    const int64_t len = std::min<int64_t>(std::max<int64_t>(lengths[b], 0), S);
    const int64_t col = h * D, kvCol = h / kv.group * D, ldkv = kv.ld > 0 ? kv.ld : ld;
    bias.selectHead(h);
    detail::attentionTile<D, PVBf16, Split>(ws, q + (b * S + i0) * ld + col, ld, i0,
                             k + b * S * ldkv + kvCol, v + b * S * ldkv + kvCol, ldkv,
                             y + (b * S + i0) * ldy + col, ldy, nq, len,
                             scale, bias, band);
  }
}

/// enc.attention on the packed layout: q, k, v point at the first element
/// of their [tokens, ld] views (ld as in attention()); sequence b's rows are
/// [offsets[b], offsets[b+1]) for queries, keys and values alike, its keys
/// the first keys[b] of them (null: all; clamped to its rows: the enc.attention's
/// lengths operand, which the runtime sets below a row count only for
/// tokens that attend but are not attended to, ColBERT's query expansion);
/// y is [tokens, NH*D]. Work units: (b, h, 32-row query tile) over the real
/// queries only (ceil(len_b / 32) tiles per head), contiguous per task.
template <int NH, int D, bool PVBf16 = false, bool Split = false, typename Y>
void attentionPacked(const float *q, const float *k, const float *v,
                     int64_t ld, const int32_t *offsets, const int32_t *keys, Y *y, int64_t B,
                     float scale, int32_t task, int32_t numTasks,
                     const RelativeBias &rb = {}, const AttnBand &band = {}, const AttnKv &kv = {}) {
  constexpr int QT = detail::kAttnRows;
  const int64_t ldy = int64_t(NH) * D;
  auto tilesOf = [&](int64_t b) {
    return (int64_t(offsets[b + 1]) - offsets[b] + QT - 1) / QT;
  };
  int64_t total = 0;
  for (int64_t b = 0; b < B; ++b)
    total += NH * tilesOf(b);
  int64_t u0, u1;
  taskShare(total, task, numTasks, u0, u1);
  if (u0 >= u1)
    return;
  detail::AttnScratch<D, PVBf16, Split> ws;
  int64_t maxLen = 0;
  if (rb.any())
    for (int64_t s = 0; s < B; ++s)
      maxLen = std::max<int64_t>(maxLen, int64_t(offsets[s + 1]) - offsets[s]);
  detail::AttnHeadBias bias(rb, NH, maxLen);
  // Find the sequence holding unit u0, then walk the units in order.
  int64_t b = 0, first = 0; // first: index of sequence b's first unit
  while (b < B && first + NH * tilesOf(b) <= u0)
    first += NH * tilesOf(b++);
  for (int64_t u = u0; u < u1; ++u) {
    int64_t tiles = tilesOf(b);
    while (u >= first + NH * tiles) {
      first += NH * tiles;
      tiles = tilesOf(++b);
    }
    const int64_t local = u - first, h = local / tiles;
    const int64_t i0 = (local % tiles) * QT;
    const int64_t row0 = offsets[b], len = int64_t(offsets[b + 1]) - row0;
    const int64_t nk = keys ? std::min<int64_t>(std::max<int64_t>(keys[b], 0), len) : len;
    const int nq = static_cast<int>(std::min<int64_t>(QT, len - i0));
    const int64_t col = h * D, kvCol = h / kv.group * D, ldkv = kv.ld > 0 ? kv.ld : ld;
    bias.selectHead(h);
    detail::attentionTile<D, PVBf16, Split>(ws, q + (row0 + i0) * ld + col, ld, i0,
                             k + row0 * ldkv + kvCol, v + row0 * ldkv + kvCol, ldkv,
                             y + (row0 + i0) * ldy + col, ldy, nq, nk,
                             scale, bias, band);
  }
}

} // namespace enc_kernels

#endif // ENC_KERNELS_ATTENTION_H
