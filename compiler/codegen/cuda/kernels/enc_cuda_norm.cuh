//===- enc_cuda_norm.cuh - Row kernels: embedding, LayerNorm, quantise ----===//
//
// One warp per packed token row (grid kind ENC_CUDA_GRID_ROWS, p0 = kRowsPerBlock
// rows per block of 32 * kRowsPerBlock threads). Each lane keeps the elements
// lane + 32 i of its row in registers, so H (static) is read once.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_CUDA_NORM_CUH
#define ENC_CUDA_NORM_CUH

#include "enc_cuda_common.cuh"

namespace enc_cuda {

constexpr int kRowsPerBlock = 4;
constexpr int kRowThreads = 32 * kRowsPerBlock;

/// LayerNorm of the warp's row in place (fp32).
template <int H>
__device__ __forceinline__ void layerNormWarpRow(float (&v)[(H + 31) / 32], int lane,
                                                 const float *gamma, const float *beta,
                                                 float eps) {
  constexpr int P = (H + 31) / 32;
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < P; ++i)
    if (lane + 32 * i < H)
      s += v[i];
  const float mean = warpSum(s) / H;
  float q = 0.0f;
#pragma unroll
  for (int i = 0; i < P; ++i)
    if (lane + 32 * i < H) {
      const float d = v[i] - mean;
      q += d * d;
    }
  const float rstd = rsqrtf(warpSum(q) / H + eps);
#pragma unroll
  for (int i = 0; i < P; ++i) {
    const int h = lane + 32 * i;
    if (h < H)
      v[i] = (v[i] - mean) * rstd * gamma[h] + beta[h];
  }
}

template <typename T, int H>
__device__ __forceinline__ void storeWarpRow(const float (&v)[(H + 31) / 32], int lane, T *y) {
#pragma unroll
  for (int i = 0; i < (H + 31) / 32; ++i)
    if (lane + 32 * i < H)
      y[lane + 32 * i] = fromF<T>(v[i]);
}

/// word[ids[b, s]] (x wordScale[id] for an int8 table) + pos[s + offset] +
/// type[typeIds[b, s]] (type[0] when typeIds is null; the type id clamped
/// into the typeRows rows), then optionally LayerNorm and a per-row int8
/// quantisation. Row r of the packed output is token s = r - offsets[b] of
/// sequence b.
template <typename T, typename WT, int H, bool LN, bool Quant>
__device__ __forceinline__ void embedding(const enc_cuda_args &a, const int32_t *ids,
                                          const int32_t *typeIds, int64_t typeRows,
                                          const WT *word, const float *wordScale,
                                          const T *pos, const T *type, const float *gamma,
                                          const float *beta, T *y, int8_t *q, float *qs,
                                          int64_t positionOffset, float eps, float staticScale) {
  const int lane = threadIdx.x & 31;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
  if (r >= a.tokens)
    return;
  const int b = seqOfRow(a.offsets, a.batch, r);
  const int64_t s = r - a.offsets[b];
  const int64_t id = ids[b * a.seq + s];
  const float ws = wordScale ? wordScale[id] : 1.0f;
  const WT *wr = word + id * H;
  const T *pr = pos + (s + positionOffset) * H;
  if (typeIds)
    type += min(max(static_cast<int64_t>(typeIds[b * a.seq + s]), int64_t(0)), typeRows - 1) * H;
  constexpr int P = (H + 31) / 32;
  float v[P];
#pragma unroll
  for (int i = 0; i < P; ++i) {
    const int h = lane + 32 * i;
    v[i] = h < H ? toF(wr[h]) * ws + toF(pr[h]) + toF(type[h]) : 0.0f;
  }
  if (LN)
    layerNormWarpRow<H>(v, lane, gamma, beta, eps);
  storeWarpRow<T, H>(v, lane, y + r * H);
  if (Quant)
    quantizeWarpRow<H>(v, lane, q + r * H, qs + r, staticScale);
}

/// y = LayerNorm(x (+ residual)), optionally also quantised per row.
template <typename T, int H, bool Residual, bool Quant>
__device__ __forceinline__ void layerNorm(const enc_cuda_args &a, const T *x, const T *res,
                                          const float *gamma, const float *beta, T *y,
                                          int8_t *q, float *qs, float eps, float staticScale) {
  const int lane = threadIdx.x & 31;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
  if (r >= a.tokens)
    return;
  constexpr int P = (H + 31) / 32;
  float v[P];
#pragma unroll
  for (int i = 0; i < P; ++i) {
    const int h = lane + 32 * i;
    v[i] = h < H ? toF(x[r * H + h]) + (Residual ? toF(res[r * H + h]) : 0.0f) : 0.0f;
  }
  layerNormWarpRow<H>(v, lane, gamma, beta, eps);
  storeWarpRow<T, H>(v, lane, y + r * H);
  if (Quant)
    quantizeWarpRow<H>(v, lane, q + r * H, qs + r, staticScale);
}

/// Per-row symmetric int8 quantisation of x [tokens, K].
template <typename T, int K>
__device__ __forceinline__ void quantize(const enc_cuda_args &a, const T *x, int8_t *q,
                                         float *qs, float staticScale) {
  const int lane = threadIdx.x & 31;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
  if (r >= a.tokens)
    return;
  constexpr int P = (K + 31) / 32;
  float v[P];
#pragma unroll
  for (int i = 0; i < P; ++i) {
    const int k = lane + 32 * i;
    v[i] = k < K ? toF(x[r * K + k]) : 0.0f;
  }
  quantizeWarpRow<K>(v, lane, q + r * K, qs + r, staticScale);
}

} // namespace enc_cuda

#endif // ENC_CUDA_NORM_CUH
