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

/// V adjacent elements, loaded and stored as one access (V * sizeof(T) <= 16).
template <typename T, int V> struct alignas(sizeof(T) * V) Packed {
  T v[V];
};

/// How a warp (Lanes = 32; or a block of Lanes threads) holds one row of H
/// elements in registers: lane l keeps the groups g = l + Lanes i (i < P) of
/// VW adjacent elements, in v[i * VW + k]. VW = 8 where H % 8 == 0 (16-byte
/// accesses of 2-byte activations, whole groups per row, every group 16-byte
/// aligned), else 1.
template <int H, int Lanes = 32> struct WarpRow {
  static constexpr int VW = H % 8 == 0 ? 8 : 1;
  static constexpr int G = H / VW;                   ///< groups per row
  static constexpr int P = (G + Lanes - 1) / Lanes; ///< groups per lane
  static constexpr int R = P * VW;                   ///< floats per lane
  __device__ static bool has(int lane, int i) { return lane + Lanes * i < G; }
  __device__ static int at(int lane, int i) { return (lane + Lanes * i) * VW; }
};

/// Max over the block (blockDim.x a multiple of 32, <= 1024); every thread
/// gets the result. `scratch` holds 32 floats.
__device__ __forceinline__ float blockMax(float v, float *scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warpMax(v);
  __syncthreads(); // scratch may still be read by a previous call
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  const int warps = blockDim.x >> 5;
  return warpMax(lane < warps ? scratch[lane] : 0.0f);
}

/// One group of VW adjacent elements of type S (aligned to the group's size).
template <typename S, int VW>
__device__ __forceinline__ Packed<S, VW> loadGroup(const S *p) {
  return *reinterpret_cast<const Packed<S, VW> *>(p);
}

/// Adds row x (H elements of type S, scaled by `scale`) to the warp's v.
template <int H, typename S>
__device__ __forceinline__ void addWarpRow(float (&v)[WarpRow<H>::R], int lane, const S *x,
                                           float scale = 1.0f) {
  using L = WarpRow<H>;
#pragma unroll
  for (int i = 0; i < L::P; ++i)
    if (L::has(lane, i)) {
      const Packed<S, L::VW> g = loadGroup<S, L::VW>(x + L::at(lane, i));
#pragma unroll
      for (int k = 0; k < L::VW; ++k)
        v[i * L::VW + k] += toF(g.v[k]) * scale;
    }
}

/// Symmetric per-row int8 quantisation of the warp's (or with Lanes > 32, the
/// block's: `scratch` holds 32 floats) row in WarpRow<K, Lanes> layout:
/// scale = max|x| / 127, or `staticScale` if > 0.
template <int K, int Lanes = 32>
__device__ __forceinline__ void quantizeWarpRow(const float (&v)[WarpRow<K, Lanes>::R], int lane,
                                                int8_t *q, float *qs, float staticScale,
                                                float *scratch = nullptr) {
  using L = WarpRow<K, Lanes>;
  float scale = staticScale;
  if (!(scale > 0.0f)) {
    float amax = 0.0f;
#pragma unroll
    for (int i = 0; i < L::P; ++i)
      if (L::has(lane, i))
#pragma unroll
        for (int k = 0; k < L::VW; ++k)
          amax = fmaxf(amax, fabsf(v[i * L::VW + k]));
    scale = (Lanes == 32 ? warpMax(amax) : blockMax(amax, scratch)) / 127.0f;
  }
  const float inv = scale > 0.0f ? 1.0f / scale : 0.0f;
#pragma unroll
  for (int i = 0; i < L::P; ++i)
    if (L::has(lane, i)) {
      Packed<int8_t, L::VW> g;
#pragma unroll
      for (int k = 0; k < L::VW; ++k) {
        const int r = __float2int_rn(v[i * L::VW + k] * inv);
        g.v[k] = static_cast<int8_t>(max(-127, min(127, r)));
      }
      *reinterpret_cast<Packed<int8_t, L::VW> *>(q + L::at(lane, i)) = g;
    }
  if (lane == 0)
    *qs = scale;
}

} // namespace enc_cuda

#endif // ENC_CUDA_COMMON_CUH
