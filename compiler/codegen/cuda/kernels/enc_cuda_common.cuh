//===- enc_cuda_common.cuh - Shared helpers of the generated CUDA kernels -===//
//
// Plain CUDA C++ (no MLIR): element conversions, warp reductions, GELU and
// the packed-row -> sequence lookup. Every kernel computes in fp32 and reads /
// writes activations as T = __half or __nv_bfloat16.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_CUDA_COMMON_CUH
#define ENC_CUDA_COMMON_CUH

#include "encrt/cuda_kernel_abi.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace enc_cuda {

constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float toF(float x) { return x; }
__device__ __forceinline__ float toF(__half x) { return __half2float(x); }
__device__ __forceinline__ float toF(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float toF(int8_t x) { return static_cast<float>(x); }

template <typename T> __device__ __forceinline__ T fromF(float x);
template <> __device__ __forceinline__ float fromF<float>(float x) { return x; }
template <> __device__ __forceinline__ __half fromF<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 fromF<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

__device__ __forceinline__ float warpSum(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

__device__ __forceinline__ float warpMax(float v) {
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(kFullMask, v, o));
  return v;
}

/// Sum over the block (blockDim.x a multiple of 32, <= 1024); every thread
/// gets the result. `scratch` holds 32 floats.
__device__ __forceinline__ float blockSum(float v, float *scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warpSum(v);
  __syncthreads(); // scratch may still be read by a previous call
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  const int warps = blockDim.x >> 5;
  float t = lane < warps ? scratch[lane] : 0.0f;
  return warpSum(t);
}

enum Epilogue : int { kEpiNone = 0, kEpiGelu = 1, kEpiGeluTanh = 2 };

__device__ __forceinline__ float geluErf(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
}
__device__ __forceinline__ float geluTanh(float x) {
  return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
}
template <int Epi> __device__ __forceinline__ float applyEpilogue(float x) {
  if (Epi == kEpiGelu)
    return geluErf(x);
  if (Epi == kEpiGeluTanh)
    return geluTanh(x);
  return x;
}

/// The sequence of packed row r: the largest b with offsets[b] <= r.
__device__ __forceinline__ int seqOfRow(const int32_t *offsets, int64_t batch, int64_t r) {
  int lo = 0, hi = static_cast<int>(batch) - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (offsets[mid] <= r)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/// Symmetric per-row int8 quantisation of the warp's row (lane holds
/// v[i] = x[lane + 32 i]): scale = max|x| / 127, or `staticScale` if > 0.
template <int K>
__device__ __forceinline__ void quantizeWarpRow(const float (&v)[(K + 31) / 32], int lane,
                                                int8_t *q, float *qs, float staticScale) {
  constexpr int P = (K + 31) / 32;
  float scale = staticScale;
  if (!(scale > 0.0f)) {
    float amax = 0.0f;
#pragma unroll
    for (int i = 0; i < P; ++i)
      if (lane + 32 * i < K)
        amax = fmaxf(amax, fabsf(v[i]));
    scale = warpMax(amax) / 127.0f;
  }
  const float inv = scale > 0.0f ? 1.0f / scale : 0.0f;
#pragma unroll
  for (int i = 0; i < P; ++i) {
    const int k = lane + 32 * i;
    if (k < K) {
      int r = __float2int_rn(v[i] * inv);
      q[k] = static_cast<int8_t>(max(-127, min(127, r)));
    }
  }
  if (lane == 0)
    *qs = scale;
}

} // namespace enc_cuda

#endif // ENC_CUDA_COMMON_CUH
