//===- enc_cuda_pool.cuh - Pooling and L2 normalisation -------------------===//
//
// Grid kind ENC_CUDA_GRID_BATCH with p0 = 1: one block of kPoolThreads per
// sequence. Output rows are f32 [batch, H].
//
//===----------------------------------------------------------------------===//
#ifndef ENC_CUDA_POOL_CUH
#define ENC_CUDA_POOL_CUH

#include "enc_cuda_common.cuh"

namespace enc_cuda {

constexpr int kPoolThreads = 128;
enum PoolMode : int { kPoolCls = 0, kPoolMean = 1 };

/// out[b] = x[offsets[b]] (cls) or the mean of sequence b's rows, then
/// (Norm) out[b] / max(||out[b]||, 1e-12).
template <typename T, int H, int Mode, bool Norm>
__device__ __forceinline__ void pool(const enc_cuda_args &a, const T *x, float *out) {
  __shared__ float scratch[32];
  const int64_t b = blockIdx.x;
  if (b >= a.batch)
    return;
  const int64_t first = a.offsets[b];
  const int len = a.lengths[b];
  constexpr int P = (H + kPoolThreads - 1) / kPoolThreads;
  float v[P];
  float sq = 0.0f;
#pragma unroll
  for (int i = 0; i < P; ++i) {
    const int h = threadIdx.x + kPoolThreads * i;
    float s = 0.0f;
    if (h < H) {
      if (Mode == kPoolCls) {
        s = toF(x[first * H + h]);
      } else {
        for (int t = 0; t < len; ++t)
          s += toF(x[(first + t) * H + h]);
        s /= static_cast<float>(len > 0 ? len : 1);
      }
    }
    v[i] = s;
    sq += s * s;
  }
  float inv = 1.0f;
  if (Norm)
    inv = 1.0f / fmaxf(sqrtf(blockSum(sq, scratch)), 1e-12f);
#pragma unroll
  for (int i = 0; i < P; ++i) {
    const int h = threadIdx.x + kPoolThreads * i;
    if (h < H)
      out[b * H + h] = v[i] * inv;
  }
}

/// y[b] = x[b] / max(||x[b]||, 1e-12) over f32 rows [batch, H].
template <int H>
__device__ __forceinline__ void l2Norm(const enc_cuda_args &a, const float *x, float *y) {
  __shared__ float scratch[32];
  const int64_t b = blockIdx.x;
  if (b >= a.batch)
    return;
  float sq = 0.0f;
  for (int h = threadIdx.x; h < H; h += kPoolThreads)
    sq += x[b * H + h] * x[b * H + h];
  const float inv = 1.0f / fmaxf(sqrtf(blockSum(sq, scratch)), 1e-12f);
  for (int h = threadIdx.x; h < H; h += kPoolThreads)
    y[b * H + h] = x[b * H + h] * inv;
}

} // namespace enc_cuda

#endif // ENC_CUDA_POOL_CUH
