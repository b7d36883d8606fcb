//===- enc_cuda_attention.cuh - Fused multi-head attention ----------------===//
//
// One block per (query tile, head, sequence): grid kind
// ENC_CUDA_GRID_SEQ_HEAD_TILE with p0 = AttnConfig<D>::kBQ, p1 = heads. Q, K
// and V are read in place from the packed [tokens, ld] activations (ld = 3H for
// the fused QKV output); each tile of kBK keys and values is staged in shared
// memory as fp32, scores and the running max / sum per query row are fp32
// (online softmax), so the S x S score matrix never exists and only keys
// j < lengths[b] are visited. Four threads ("a quad") own one query row: each
// computes the scores of every fourth key of the tile and accumulates every
// fourth output dim.
//
//===----------------------------------------------------------------------===//
#ifndef ENC_CUDA_ATTENTION_CUH
#define ENC_CUDA_ATTENTION_CUH

#include "enc_cuda_common.cuh"

namespace enc_cuda {

template <int D> struct AttnConfig {
  static_assert(D % 4 == 0 && D <= 128, "head dim must be a multiple of 4, <= 128");
  static constexpr int kBQ = D <= 64 ? 32 : 16; ///< query rows per block
  static constexpr int kBK = 32; ///< keys per shared-memory tile
  static constexpr int kThreads = 4 * kBQ;
  static constexpr int kSmemBytes =
      4 * (kBQ * (D + 1) + kBK * (D + 1) + kBK * D + kBQ * (kBK + 1));
  static_assert(kSmemBytes <= 48 * 1024, "static shared memory above 48 KB");
};

/// out[r, h*D + d] for every packed row r = offsets[b] + s, s < lengths[b]:
/// softmax_j(scale * q_r . k_j) . v_j over keys j < lengths[b] of sequence b.
/// q/k/v point at head 0 of row 0 and advance by `LD` per row.
template <typename T, int D, int NH, int LD>
__device__ __forceinline__ void attention(const enc_cuda_args &a, const T *q, const T *k,
                                          const T *v, T *out, float scale) {
  using C = AttnConfig<D>;
  constexpr int BQ = C::kBQ, BK = C::kBK, H = NH * D, KPT = BK / 4, DPT = D / 4;
  __shared__ float sQ[BQ][D + 1];
  __shared__ float sK[BK][D + 1];
  __shared__ float sV[BK][D];
  __shared__ float sP[BQ][BK + 1];

  const int b = blockIdx.z, h = blockIdx.y;
  const int len = a.lengths[b];
  const int q0 = blockIdx.x * BQ;
  if (q0 >= len)
    return;
  const int64_t base = a.offsets[b];
  const int tid = threadIdx.x, qi = tid >> 2, t = tid & 3;
  const int qn = min(BQ, len - q0);

  for (int i = tid; i < BQ * D; i += C::kThreads) {
    const int r = i / D, d = i - r * D;
    sQ[r][d] = r < qn ? toF(q[(base + q0 + r) * LD + h * D + d]) * scale : 0.0f;
  }

  float m = -INFINITY, l = 0.0f;
  float acc[DPT];
#pragma unroll
  for (int i = 0; i < DPT; ++i)
    acc[i] = 0.0f;

  for (int k0 = 0; k0 < len; k0 += BK) {
    const int kn = min(BK, len - k0);
    __syncthreads(); // the previous tile is consumed (first pass: sQ written)
    for (int i = tid; i < BK * D; i += C::kThreads) {
      const int r = i / D, d = i - r * D;
      float kv = 0.0f, vv = 0.0f;
      if (r < kn) {
        const int64_t at = (base + k0 + r) * LD + h * D + d;
        kv = toF(k[at]);
        vv = toF(v[at]);
      }
      sK[r][d] = kv;
      sV[r][d] = vv;
    }
    __syncthreads();

    float s[KPT];
#pragma unroll
    for (int j = 0; j < KPT; ++j)
      s[j] = 0.0f;
#pragma unroll 8
    for (int d = 0; d < D; ++d) {
      const float qd = sQ[qi][d];
#pragma unroll
      for (int j = 0; j < KPT; ++j)
        s[j] += qd * sK[t + 4 * j][d];
    }
    float tmax = -INFINITY;
#pragma unroll
    for (int j = 0; j < KPT; ++j)
      if (t + 4 * j < kn)
        tmax = fmaxf(tmax, s[j]);
    tmax = fmaxf(tmax, __shfl_xor_sync(kFullMask, tmax, 1));
    tmax = fmaxf(tmax, __shfl_xor_sync(kFullMask, tmax, 2));
    const float mNew = fmaxf(m, tmax); // finite: kn >= 1
    const float alpha = __expf(m - mNew);
    float psum = 0.0f;
#pragma unroll
    for (int j = 0; j < KPT; ++j) {
      const float p = t + 4 * j < kn ? __expf(s[j] - mNew) : 0.0f;
      sP[qi][t + 4 * j] = p;
      psum += p;
    }
    psum += __shfl_xor_sync(kFullMask, psum, 1);
    psum += __shfl_xor_sync(kFullMask, psum, 2);
    l = l * alpha + psum;
    m = mNew;
    __syncwarp();
#pragma unroll
    for (int i = 0; i < DPT; ++i)
      acc[i] *= alpha;
    for (int j = 0; j < kn; ++j) {
      const float p = sP[qi][j];
#pragma unroll
      for (int i = 0; i < DPT; ++i)
        acc[i] += p * sV[j][t + 4 * i];
    }
  }
  if (qi < qn) {
    const float inv = 1.0f / l;
    T *o = out + (base + q0 + qi) * H + h * D;
#pragma unroll
    for (int i = 0; i < DPT; ++i)
      o[t + 4 * i] = fromF<T>(acc[i] * inv);
  }
}

} // namespace enc_cuda

#endif // ENC_CUDA_ATTENTION_CUH
