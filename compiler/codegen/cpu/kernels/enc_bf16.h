//===- enc_bf16.h - bf16 rounding and the packed bf16 weight layout -*- C++ -*-===//
//
// bf16 values are their raw bits in a uint16_t (the top half of an fp32).
// Rounding is to nearest, ties to even, on every CPU (a plain integer
// formula, so the AVX-512 BF16 and the fallback objects of one artifact see
// the same activations); NaN stays NaN.
//
// Packed bf16 weights (packWeightsBf16; ISA-independent, so the compiler packs
// without knowing the target), for Np = N rounded up to 16 and an even K:
//    uint16_t panel[Np/16][K/2][16][2]   panel[p][k/2][j][k%2] = W[16p + j][k]
// i.e. the fp32 panel layout of enc_sgemm.h with pairs of k interleaved per
// column: one 64-byte row holds 16 columns x 2 k, the operand layout of
// vdpbf16ps. Element offsets match the fp32 layout ((p*K + k) * 16 for an
// even k), so enc_sgemm.h's blocking serves both.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_KERNELS_BF16_H
#define ENC_KERNELS_BF16_H

#include "enc_common.h"

#include <cstddef>

namespace enc_kernels {

/// fp32 -> bf16 bits: round to nearest even; NaN -> quiet NaN (branch-free,
/// so loops over it vectorise).
ENC_INLINE uint16_t toBf16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quietNan = (u >> 16) | 0x40u;
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quietNan : rounded);
}

ENC_INLINE float bf16ToFloat(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

/// enc.to_bf16: y[i] = bf16(x[i]) for the task's share of [0, count).
inline void toBf16(const float *x, uint16_t *y, int64_t count, int32_t task, int32_t numTasks) {
  int64_t i0, i1;
  taskShare(count, task, numTasks, i0, i1);
  for (int64_t i = i0; i < i1; ++i)
    y[i] = toBf16Bits(x[i]);
}

/// An output element: fp32 as is, or rounded to bf16 (the kernels that
/// write an enc.to_bf16 fused into them).
ENC_INLINE void storeOut(float *p, float v) { *p = v; }
ENC_INLINE void storeOut(uint16_t *p, float v) { *p = toBf16Bits(v); }

/// enc.layernorm with an enc.to_bf16 of its result fused in: y as
/// layerNorm, yb = bf16(y).
template <int H>
void layerNormBf16(const float *x, const float *gamma, const float *beta, float *y, uint16_t *yb,
                   int64_t rows, float eps, int32_t task, int32_t numTasks) {
  int64_t r0, r1;
  taskShare(rows, task, numTasks, r0, r1);
  for (int64_t r = r0; r < r1; ++r) {
    layerNormRow<H>(x + r * H, gamma, beta, y + r * H, eps);
    for (int64_t h = 0; h < H; ++h)
      yb[r * H + h] = toBf16Bits(y[r * H + h]);
  }
}

/// enc.add_layernorm with an enc.to_bf16 of its result fused in.
template <int H>
void addLayerNormBf16(const float *x, const float *residual, const float *gamma, const float *beta,
                      float *y, uint16_t *yb, int64_t rows, float eps, int32_t task, int32_t numTasks) {
  int64_t r0, r1;
  taskShare(rows, task, numTasks, r0, r1);
  for (int64_t r = r0; r < r1; ++r) {
    addLayerNormRow<H>(x + r * H, residual + r * H, gamma, beta, y + r * H, eps);
    for (int64_t h = 0; h < H; ++h)
      yb[r * H + h] = toBf16Bits(y[r * H + h]);
  }
}

/// Output columns per packed panel (as kSgemmPanel).
constexpr int kBf16Panel = 16;

/// uint16_t elements of the packed form of an [N, K] weight (K even).
inline size_t packedWeightsBf16Elems(int64_t N, int64_t K) {
  return static_cast<size_t>((N + kBf16Panel - 1) / kBf16Panel * K * kBf16Panel);
}

/// Packs w [N, K] (row-major bf16 bits, K even) into `out`
/// (packedWeightsBf16Elems(N, K)); padding columns are 0.
inline void packWeightsBf16(const uint16_t *w, int64_t N, int64_t K, uint16_t *out) {
  const int64_t panels = (N + kBf16Panel - 1) / kBf16Panel;
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < kBf16Panel; ++j) {
        const int64_t n = p * kBf16Panel + j;
        out[(p * K + (k & ~int64_t(1))) * kBf16Panel + 2 * j + (k & 1)] = n < N ? w[n * K + k] : 0;
      }
}

} // namespace enc_kernels

#endif // ENC_KERNELS_BF16_H
