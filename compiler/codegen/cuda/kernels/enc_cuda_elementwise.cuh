//===- enc_cuda_elementwise.cuh - Elementwise kernels over packed tokens --===//
//
// Grid kind ENC_CUDA_GRID_ELEMENTS: p0 elements per block, p1 = N elements
// per token; the kernels cover tokens * N. Most take one element per thread
// (p0 = kElemThreads); activation and dequantize take elemVec<N>() adjacent
// elements per thread (16-byte loads and stores of 2-byte activations; p0 =
// kElemThreads * elemVec<N>()), which keeps them near memory bandwidth.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_CUDA_ELEMENTWISE_CUH
#define ENC_CUDA_ELEMENTWISE_CUH

#include "enc_cuda_common.cuh"

namespace enc_cuda {

constexpr int kElemThreads = 256;

__device__ __forceinline__ int64_t elementIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

/// Elements per thread of the vectorised kernels: 8 (16 bytes of a 2-byte
/// activation) where a row of N holds whole groups of 8, so one thread's
/// elements share a row and every group starts 16-byte aligned; else 1.
template <int N> __host__ __device__ constexpr int elemVec() { return N % 8 == 0 ? 8 : 1; }

/// y = epilogue(x) (bias+GELU-erf after a GEMM with a bias epilogue).
template <typename T, int N, int Epi>
__device__ __forceinline__ void activation(const enc_cuda_args &a, const T *x, T *y) {
  constexpr int V = elemVec<N>();
  static_assert(V * sizeof(T) <= 16, "one 16-byte access per thread");
  const int64_t i = elementIndex() * V;
  if (i >= a.tokens * N)
    return;
  const Packed<T, V> in = *reinterpret_cast<const Packed<T, V> *>(x + i);
  Packed<T, V> o;
#pragma unroll
  for (int k = 0; k < V; ++k)
    o.v[k] = fromF<T>(applyEpilogue<Epi>(toF(in.v[k])));
  *reinterpret_cast<Packed<T, V> *>(y + i) = o;
}

/// out[m, n] = epilogue(acc[m, n] * xs[m] * ws[n] + bias[n]).
template <typename T, int N, int Epi, bool Bias>
__device__ __forceinline__ void dequantize(const enc_cuda_args &a, const int32_t *acc,
                                           const float *xs, const float *ws,
                                           const float *bias, T *out) {
  constexpr int V = elemVec<N>();
  constexpr int Q = V < 4 ? V : 4; // 4-byte values per 16-byte access
  const int64_t i = elementIndex() * V;
  if (i >= a.tokens * N)
    return;
  const int64_t m = i / N;
  const int n = static_cast<int>(i - m * N);
  const float rowScale = xs[m];
  Packed<T, V> o;
#pragma unroll
  for (int p = 0; p < V; p += Q) {
    const Packed<int32_t, Q> c = *reinterpret_cast<const Packed<int32_t, Q> *>(acc + i + p);
    const Packed<float, Q> w = *reinterpret_cast<const Packed<float, Q> *>(ws + n + p);
    Packed<float, Q> b = {};
    if (Bias)
      b = *reinterpret_cast<const Packed<float, Q> *>(bias + n + p);
#pragma unroll
    for (int k = 0; k < Q; ++k)
      o.v[p + k] = fromF<T>(applyEpilogue<Epi>(static_cast<float>(c.v[k]) * rowScale * w.v[k] + b.v[k]));
  }
  *reinterpret_cast<Packed<T, V> *>(out + i) = o;
}

/// y = x + z.
template <typename T, int N>
__device__ __forceinline__ void add(const enc_cuda_args &a, const T *x, const T *z, T *y) {
  const int64_t i = elementIndex();
  if (i < a.tokens * N)
    y[i] = fromF<T>(toF(x[i]) + toF(z[i]));
}

/// y = x * factor.
template <typename T, int N>
__device__ __forceinline__ void scale(const enc_cuda_args &a, const T *x, T *y, float factor) {
  const int64_t i = elementIndex();
  if (i < a.tokens * N)
    y[i] = fromF<T>(toF(x[i]) * factor);
}

/// The f32 hidden output: y = float(x).
template <typename T, int N>
__device__ __forceinline__ void toFloat(const enc_cuda_args &a, const T *x, float *y) {
  const int64_t i = elementIndex();
  if (i < a.tokens * N)
    y[i] = toF(x[i]);
}

/// Equal slices of the last dim: y_p[m, n] = x[m, p * N + n], p < Parts
/// (p1 = Parts * N: one thread per element of x).
template <typename T, int N, int Parts>
__device__ __forceinline__ void split(const enc_cuda_args &a, const T *x, void *const *ys) {
  const int64_t i = elementIndex();
  if (i >= a.tokens * N * Parts)
    return;
  const int64_t m = i / (N * Parts);
  const int c = static_cast<int>(i - m * N * Parts);
  static_cast<T *>(ys[c / N])[m * N + c % N] = x[i];
}

} // namespace enc_cuda

#endif // ENC_CUDA_ELEMENTWISE_CUH
