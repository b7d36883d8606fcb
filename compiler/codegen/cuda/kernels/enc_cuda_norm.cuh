//===- enc_cuda_norm.cuh - Row kernels: embedding, LayerNorm, quantise ----===//
//
// One warp per packed token row (grid kind ENC_CUDA_GRID_ROWS, p0 = kRowsPerBlock
// rows per block of 32 * kRowsPerBlock threads). Each lane keeps its groups of
// the row in registers (WarpRow<H>: 8 adjacent elements per group, read and
// written in 16-byte accesses, where H % 8 == 0), so H (static) is read once.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_CUDA_NORM_CUH
#define ENC_CUDA_NORM_CUH

#include "enc_cuda_common.cuh"

namespace enc_cuda {

constexpr int kRowsPerBlock = 4;
constexpr int kRowThreads = 32 * kRowsPerBlock;

/// LayerNorm of the warp's row (WarpRow<H> layout) in place, fp32.
template <int H>
__device__ __forceinline__ void layerNormWarpRow(float (&v)[WarpRow<H>::R], int lane,
                                                 const float *gamma, const float *beta,
                                                 float eps) {
  using L = WarpRow<H>;
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < L::P; ++i)
    if (L::has(lane, i))
#pragma unroll
      for (int k = 0; k < L::VW; ++k)
        s += v[i * L::VW + k];
  const float mean = warpSum(s) / H;
  float q = 0.0f;
#pragma unroll
  for (int i = 0; i < L::P; ++i)
    if (L::has(lane, i))
#pragma unroll
      for (int k = 0; k < L::VW; ++k) {
        const float d = v[i * L::VW + k] - mean;
        q += d * d;
      }
  const float rstd = rsqrtf(warpSum(q) / H + eps);
  constexpr int Q = L::VW < 4 ? L::VW : 4; // floats per 16-byte access
#pragma unroll
  for (int i = 0; i < L::P; ++i)
    if (L::has(lane, i))
#pragma unroll
      for (int p = 0; p < L::VW; p += Q) {
        const Packed<float, Q> g = loadGroup<float, Q>(gamma + L::at(lane, i) + p);
        const Packed<float, Q> b = loadGroup<float, Q>(beta + L::at(lane, i) + p);
#pragma unroll
        for (int k = 0; k < Q; ++k) {
          float &x = v[i * L::VW + p + k];
          x = (x - mean) * rstd * g.v[k] + b.v[k];
        }
      }
}

/// Stores the warp's row (WarpRow<H> layout) as T.
template <typename T, int H>
__device__ __forceinline__ void storeWarpRow(const float (&v)[WarpRow<H>::R], int lane, T *y) {
  using L = WarpRow<H>;
#pragma unroll
  for (int i = 0; i < L::P; ++i)
    if (L::has(lane, i)) {
      Packed<T, L::VW> g;
#pragma unroll
      for (int k = 0; k < L::VW; ++k)
        g.v[k] = fromF<T>(v[i * L::VW + k]);
      *reinterpret_cast<Packed<T, L::VW> *>(y + L::at(lane, i)) = g;
    }
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
                                          int64_t positionOffset, int64_t padId, float eps,
                                          float staticScale) {
  const int lane = threadIdx.x & 31;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
  if (r >= a.tokens)
    return;
  const int b = seqOfRow(a.offsets, a.batch, r);
  const int64_t s = r - a.offsets[b];
  const int64_t id = ids[b * a.seq + s];
  if (typeIds)
    type += min(max(static_cast<int64_t>(typeIds[b * a.seq + s]), int64_t(0)), typeRows - 1) * H;
  float v[WarpRow<H>::R] = {};
  addWarpRow<H>(v, lane, word + id * H, wordScale ? wordScale[id] : 1.0f);
  // Positions s + offset, or (padId >= 0, enc.embedding's position_pad_id)
  // padId + the number of non-pad ids among ids[b, 0..s], padId for a pad.
  int64_t position = s + positionOffset;
  if (padId >= 0) {
    const int32_t *row = ids + b * a.seq;
    int count = 0;
    for (int64_t j = lane; j <= s; j += 32)
      count += row[j] != padId;
    for (int o = 16; o > 0; o >>= 1)
      count += __shfl_xor_sync(0xffffffffu, count, o);
    position = id == padId ? padId : padId + count;
  }
  addWarpRow<H>(v, lane, pos + position * H);
  addWarpRow<H>(v, lane, type);
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
  float v[WarpRow<H>::R] = {};
  addWarpRow<H>(v, lane, x + r * H);
  if (Residual)
    addWarpRow<H>(v, lane, res + r * H);
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
  float v[WarpRow<K>::R] = {};
  addWarpRow<K>(v, lane, x + r * K);
  quantizeWarpRow<K>(v, lane, q + r * K, qs + r, staticScale);
}

/// The warp's row of an int8 GEMM's result, dequantised (WarpRow<N>
/// layout): v[n] = epilogue(acc[n] * rowScale * ws[n] + bias[n]), in fp32.
template <int N, int Epi, bool Bias, int Lanes = 32>
__device__ __forceinline__ void dequantizeWarpRow(float (&v)[WarpRow<N, Lanes>::R], int lane,
                                                  const int32_t *acc, float rowScale,
                                                  const float *ws, const float *bias) {
  using L = WarpRow<N, Lanes>;
  constexpr int Q = L::VW < 4 ? L::VW : 4; // 4-byte values per 16-byte access
#pragma unroll
  for (int i = 0; i < L::P; ++i)
    if (L::has(lane, i))
#pragma unroll
      for (int p = 0; p < L::VW; p += Q) {
        const int n = L::at(lane, i) + p;
        const Packed<int32_t, Q> c = loadGroup<int32_t, Q>(acc + n);
        const Packed<float, Q> w = loadGroup<float, Q>(ws + n);
        Packed<float, Q> b = {};
        if (Bias)
          b = loadGroup<float, Q>(bias + n);
#pragma unroll
        for (int k = 0; k < Q; ++k)
          v[i * L::VW + p + k] =
              applyEpilogue<Epi>(static_cast<float>(c.v[k]) * rowScale * w.v[k] + b.v[k]);
      }
}

/// Rows per block of qlinearQuantize<N> (blocks of kRowThreads threads): a
/// warp per row, or for rows over 1024 elements the whole block per row (a
/// warp per 3072-wide row held 96 floats per lane and ran at half the memory
/// bandwidth on an H200).
template <int N> __host__ __device__ constexpr int qlinearQuantizeRows() {
  return N > 1024 ? 1 : kRowsPerBlock;
}

/// An int8 GEMM's result row (acc [tokens, N] int32, xs per row, ws and bias
/// per column) dequantised with its epilogue and quantised again per row for
/// the next int8 GEMM (q, qs): enc.qlinear + the enc.quantize of its result,
/// whose float rows are never stored.
template <int N, int Epi, bool Bias>
__device__ __forceinline__ void qlinearQuantize(const enc_cuda_args &a, const int32_t *acc,
                                                const float *xs, const float *ws,
                                                const float *bias, int8_t *q, float *qs,
                                                float staticScale) {
  if constexpr (qlinearQuantizeRows<N>() == 1) {
    __shared__ float scratch[32];
    const int64_t r = blockIdx.x; // the whole block leaves together (blockMax syncs)
    if (r >= a.tokens)
      return;
    float v[WarpRow<N, kRowThreads>::R] = {};
    dequantizeWarpRow<N, Epi, Bias, kRowThreads>(v, threadIdx.x, acc + r * N, xs[r], ws, bias);
    quantizeWarpRow<N, kRowThreads>(v, threadIdx.x, q + r * N, qs + r, staticScale, scratch);
  } else {
    const int lane = threadIdx.x & 31;
    const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
    if (r >= a.tokens)
      return;
    float v[WarpRow<N>::R] = {};
    dequantizeWarpRow<N, Epi, Bias>(v, lane, acc + r * N, xs[r], ws, bias);
    quantizeWarpRow<N>(v, lane, q + r * N, qs + r, staticScale);
  }
}

/// y = LayerNorm(dequantise(acc) + residual) (+ its per-row quantisation):
/// enc.qlinear + the enc.add_layernorm of its result, whose dequantised rows
/// are never stored.
template <typename T, int H, int Epi, bool Bias, bool Quant>
__device__ __forceinline__ void qlinearAddLayerNorm(const enc_cuda_args &a, const int32_t *acc,
                                                    const float *xs, const float *ws,
                                                    const float *bias, const T *res,
                                                    const float *gamma, const float *beta, T *y,
                                                    int8_t *q, float *qs, float eps,
                                                    float staticScale) {
  const int lane = threadIdx.x & 31;
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
  if (r >= a.tokens)
    return;
  float v[WarpRow<H>::R] = {};
  dequantizeWarpRow<H, Epi, Bias>(v, lane, acc + r * H, xs[r], ws, bias);
  addWarpRow<H>(v, lane, res + r * H);
  layerNormWarpRow<H>(v, lane, gamma, beta, eps);
  storeWarpRow<T, H>(v, lane, y + r * H);
  if (Quant)
    quantizeWarpRow<H>(v, lane, q + r * H, qs + r, staticScale);
}

} // namespace enc_cuda

#endif // ENC_CUDA_NORM_CUH
