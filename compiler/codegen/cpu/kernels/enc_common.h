//===- enc_common.h - Shared helpers of the encc CPU kernels ------*- C++ -*-===//
//
// Plain C++17 (plus GCC/Clang vector extensions), no MLIR, no library beyond
// <cmath>/<cstdint>/<cstring>/<algorithm>. Included by the generated code of
// every model and by the kernel unit tests.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_KERNELS_COMMON_H
#define ENC_KERNELS_COMMON_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#define ENC_INLINE inline __attribute__((always_inline))

/// A micro-kernel compiled as a function of its own, neither inlined into
/// its caller nor cloned for the caller's constant arguments: GCC 12 then
/// stopped keeping the accumulators of the int8 tile in place and copied
/// each one out of and back into a register around every product
/// (enc_qgemm.h q8TileDispatch).
#if defined(__clang__)
#define ENC_OPAQUE __attribute__((noinline))
#else
#define ENC_OPAQUE __attribute__((noipa))
#endif

namespace enc_kernels {

/// Eight floats; lowered to one AVX register or two SSE registers.
typedef float v8f __attribute__((vector_size(32)));

ENC_INLINE v8f load8(const float *p) {
  v8f v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

ENC_INLINE void store8(float *p, v8f v) { std::memcpy(p, &v, sizeof(v)); }

ENC_INLINE float hsum8(v8f v) {
  return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}

/// Sum of p[0..n), vectorised in eight lanes.
ENC_INLINE float rowSum(const float *p, int64_t n) {
  v8f acc = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    acc += load8(p + i);
  float s = hsum8(acc);
  for (; i < n; ++i)
    s += p[i];
  return s;
}

/// Sum of (p[i] - c)^2 over [0, n), vectorised in eight lanes.
ENC_INLINE float rowSumSqDiff(const float *p, int64_t n, float c) {
  v8f acc = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v8f d = load8(p + i) - c;
    acc += d * d;
  }
  float s = hsum8(acc);
  for (; i < n; ++i)
    s += (p[i] - c) * (p[i] - c);
  return s;
}

/// One LayerNorm row of width H (biased variance): y = (x - mean) * rstd * gamma + beta.
/// y may alias x.
template <int H>
ENC_INLINE void layerNormRow(const float *x, const float *gamma, const float *beta, float *y, float eps) {
  const float mean = rowSum(x, H) / H;
  const float sq = rowSumSqDiff(x, H, mean);
  const float rstd = 1.0f / std::sqrt(sq / H + eps);
  for (int64_t h = 0; h < H; ++h)
    y[h] = (x[h] - mean) * rstd * gamma[h] + beta[h];
}

/// One row of layernorm(x + residual): the sum goes to y, normalised in place.
template <int H>
ENC_INLINE void addLayerNormRow(const float *x, const float *residual, const float *gamma, const float *beta,
                                float *y, float eps) {
  for (int64_t h = 0; h < H; ++h)
    y[h] = x[h] + residual[h];
  layerNormRow<H>(y, gamma, beta, y, eps);
}

/// Max of p[0..n) (-inf for n == 0), vectorised in eight lanes.
ENC_INLINE float rowMax(const float *p, int64_t n) {
  const float ninf = -INFINITY;
  v8f acc = {ninf, ninf, ninf, ninf, ninf, ninf, ninf, ninf};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const v8f v = load8(p + i);
    acc = acc > v ? acc : v;
  }
  float m = ninf;
  for (int l = 0; l < 8; ++l)
    m = std::max(m, acc[l]);
  for (; i < n; ++i)
    m = std::max(m, p[i]);
  return m;
}

/// The share [begin, end) of `total` work items that task `task` of
/// `numTasks` owns; the shares of all tasks partition [0, total).
ENC_INLINE void taskShare(int64_t total, int32_t task, int32_t numTasks,
                          int64_t &begin, int64_t &end) {
  if (numTasks < 1 || task < 0 || task >= numTasks) {
    begin = end = 0;
    return;
  }
  begin = total * task / numTasks;
  end = total * (task + 1) / numTasks;
}

/// The packed layout (kernel_abi.h): sequence b owns rows [offsets[b],
/// offsets[b+1]) of a [tokens, ...] value. sequenceOfRow returns the b with
/// offsets[b] <= row < offsets[b+1] (binary search; offsets non-decreasing,
/// offsets[0] = 0, row < offsets[B]).
ENC_INLINE int64_t sequenceOfRow(const int32_t *offsets, int64_t B, int64_t row) {
  int64_t lo = 0, hi = B; // invariant: offsets[lo] <= row < offsets[hi]
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    if (offsets[mid] <= row)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/// Calls f(row, b, s) for the packed rows [r0, r1): row = offsets[b] + s.
template <class F>
ENC_INLINE void forEachPackedRow(const int32_t *offsets, int64_t B, int64_t r0,
                                 int64_t r1, F &&f) {
  if (r0 >= r1)
    return;
  int64_t b = sequenceOfRow(offsets, B, r0);
  for (int64_t row = r0; row < r1; ++row) {
    while (row >= offsets[b + 1])
      ++b;
    f(row, b, row - offsets[b]);
  }
}

/// The token-type row of element i of enc.embedding's [B, S] ids:
/// type[typeIds[i]] clamped into the T rows, or type[0] without type ids.
template <int H>
ENC_INLINE const float *typeRow(const float *type, const int32_t *typeIds,
                                int64_t T, int64_t i) {
  if (!typeIds)
    return type;
  return type + std::min<int64_t>(std::max<int64_t>(typeIds[i], 0), T - 1) * H;
}

/// The position-table row of token s of a sequence's ids `row`: s + offset,
/// or with a pad id (padId >= 0, transformers' create_position_ids_from_input_ids)
/// padId + the number of non-pad ids among row[0..s], and padId for a pad.
ENC_INLINE int64_t positionRow(const int32_t *row, int64_t s, int64_t offset, int64_t padId) {
  if (padId < 0)
    return s + offset;
  if (row[s] == padId)
    return padId;
  int64_t count = 0;
  for (int64_t j = 0; j <= s; ++j)
    count += row[j] != padId;
  return padId + count;
}

/// One row of enc.embedding: yr = word[id] (times wordScale[id] for an int8
/// table; unused for f32) + pos[position] + type (the token's row of the
/// type table, typeRow()), with the id clamped into [0, V) and the position
/// (positionRow()) into [0, P).
template <int H, class W>
ENC_INLINE void embeddingRow(int64_t id, const W *word, const float *wordScale,
                             int64_t V, const float *pos, int64_t P,
                             const float *type, int64_t position,
                             float *yr) {
  id = std::min<int64_t>(std::max<int64_t>(id, 0), V - 1);
  const int64_t p = std::min<int64_t>(std::max<int64_t>(position, 0), P - 1);
  const W *wr = word + id * H;
  const float *pr = pos + p * H;
  if constexpr (sizeof(W) == 1) { // int8 word table
    const float sc = wordScale[id];
    for (int64_t h = 0; h < H; ++h)
      yr[h] = float(wr[h]) * sc + pr[h] + type[h];
  } else if constexpr (sizeof(W) == 2) { // bf16 word table (bits), widened exactly
    for (int64_t h = 0; h < H; ++h) {
      const uint32_t bits = uint32_t(wr[h]) << 16;
      float w;
      std::memcpy(&w, &bits, sizeof w);
      yr[h] = w + pr[h] + type[h];
    }
  } else {
    for (int64_t h = 0; h < H; ++h)
      yr[h] = wr[h] + pr[h] + type[h];
  }
}

/// exp(x) to about 2 ulp, written so that loops over it vectorise (no libm
/// call). exp(-inf) = 0, exp(x > 88.7) = +inf, NaN propagates.
ENC_INLINE float fastExp(float x) {
  // NaN is mapped to 0 before the float->int conversion (which would be UB)
  // and restored at the end.
  const float clamped = x != x ? 0.0f : std::min(std::max(x, -87.0f), 88.0f);
  const float n = std::nearbyint(clamped * 1.44269504088896341f);
  // Cody-Waite reduction: r = x - n*ln2 in two steps.
  float r = clamped - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  // exp(r) on [-ln2/2, ln2/2], Cephes coefficients.
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  float y = p * scale;
  y = x < -87.0f ? 0.0f : y;
  y = x > 88.0f ? INFINITY : y;
  return x != x ? x : y;
}

/// erf(x) to about 1e-7 absolute (Abramowitz-Stegun 7.1.26 is too coarse;
/// this is the rational approximation used by Eigen/XNNPACK for float).
ENC_INLINE float fastErf(float x) {
  const float a = std::min(std::max(x, -4.0f), 4.0f);
  const float a2 = a * a;
  float p = -2.72614225801306e-10f;
  p = p * a2 + 2.77068142495902e-08f;
  p = p * a2 + -2.10102402082508e-06f;
  p = p * a2 + -5.69250639462346e-05f;
  p = p * a2 + -7.34990630326855e-04f;
  p = p * a2 + -2.95459980854025e-03f;
  p = p * a2 + -1.60960333262415e-02f;
  p = p * a;
  float q = -1.45660718464996e-05f;
  q = q * a2 + -2.13374055278905e-04f;
  q = q * a2 + -1.68282697438203e-03f;
  q = q * a2 + -7.37332916720468e-03f;
  q = q * a2 + -1.42647390514189e-02f;
  return p / q;
}

/// tanh(x) through fastExp: 1 - 2/(exp(2x)+1), exact limits at +-inf.
ENC_INLINE float fastTanh(float x) {
  const float c = std::min(std::max(x, -9.0f), 9.0f);
  return 1.0f - 2.0f / (fastExp(2.0f * c) + 1.0f);
}

/// Eight int32 lanes (comparison results, exponent bits).
typedef int32_t v8i __attribute__((vector_size(32)));

ENC_INLINE v8f splat8(float f) { return v8f{f, f, f, f, f, f, f, f}; }

ENC_INLINE v8f max8(v8f a, v8f b) { return a > b ? a : b; }

ENC_INLINE float hmax8(v8f v) {
  float m = v[0];
  for (int l = 1; l < 8; ++l)
    m = std::max(m, v[l]);
  return m;
}

/// fastExp on eight lanes (same reduction and polynomial; round-to-nearest
/// through the 1.5 * 2^23 trick): exp(-inf) = 0, exp(x > 88) = +inf, NaN
/// propagates.
ENC_INLINE v8f fastExp8(v8f x) {
  const v8f lo = splat8(-87.0f), hi = splat8(88.0f);
  const v8f c = x < lo ? lo : (x > hi ? hi : x);
  const v8f magic = splat8(12582912.0f);
  const v8f n = (c * 1.44269504088896341f + magic) - magic;
  v8f r = c - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  v8f p = splat8(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const v8i bits = (__builtin_convertvector(n, v8i) + 127) << 23;
  v8f scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  v8f y = p * scale;
  y = x < lo ? splat8(0.0f) : y;
  y = x > hi ? splat8(INFINITY) : y;
  return x != x ? x : y;
}

enum GeluMode : int { kGeluErf = 0, kGeluTanh = 1 };

template <int Mode> ENC_INLINE float gelu(float x) {
  if (Mode == kGeluTanh) {
    const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + fastTanh(u));
  }
  return 0.5f * x * (1.0f + fastErf(x * 0.7071067811865476f));
}

} // namespace enc_kernels

#endif // ENC_KERNELS_COMMON_H
