//===- enc_cuda_elementwise.cuh - Elementwise kernels over packed tokens --===//
//
// Grid kind ENC_CUDA_GRID_ELEMENTS: p0 = kElemThreads elements per block (one
// per thread), p1 = N elements per token; the kernels cover tokens * N.
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

/// y = epilogue(x) (bias+GELU-erf after a GEMM with a bias epilogue).
template <typename T, int N, int Epi>
__device__ __forceinline__ void activation(const enc_cuda_args &a, const T *x, T *y) {
  const int64_t i = elementIndex();
  if (i < a.tokens * N)
    y[i] = fromF<T>(applyEpilogue<Epi>(toF(x[i])));
}

/// out[m, n] = epilogue(acc[m, n] * xs[m] * ws[n] + bias[n]).
template <typename T, int N, int Epi, bool Bias>
__device__ __forceinline__ void dequantize(const enc_cuda_args &a, const int32_t *acc,
                                           const float *xs, const float *ws,
                                           const float *bias, T *out) {
  const int64_t i = elementIndex();
  if (i >= a.tokens * N)
    return;
  const int64_t m = i / N;
  const int n = static_cast<int>(i - m * N);
  float v = static_cast<float>(acc[i]) * xs[m] * ws[n];
  if (Bias)
    v += bias[n];
  out[i] = fromF<T>(applyEpilogue<Epi>(v));
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
