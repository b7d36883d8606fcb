//===- enc_cuda_attention_mma.cuh - Attention on tensor cores -------------===//
//
// The same function as enc_cuda::attention (enc_cuda_attention.cuh), with
// both products on tensor cores: mma.sync m16n8k16, fp16 or bf16 operands,
// fp32 accumulate (sm_80 and later). One block per (query tile of kBQ rows,
// head, sequence): grid kind ENC_CUDA_GRID_SEQ_HEAD_TILE with p0 = kBQ,
// p1 = heads; a block past its sequence's length returns at once, and only
// keys j < lengths[b] are visited (packed rows, no padding computed).
//
// Each warp owns 16 query rows. Q stays in registers as A fragments for the
// whole block; S = Q K^T of a tile of kBK keys lands in the accumulators,
// where the online softmax (fp32 running max and sum per row, exp2 with the
// scale folded in) turns it into P; P is re-packed from the accumulator
// layout into A fragments of O += P V without a trip through shared memory.
// K and V tiles are staged in shared memory as [key][dim] (rows padded by 8
// elements: the fragment reads and ldmatrix rows are free of bank
// conflicts); V's B fragments come from ldmatrix.trans.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16"), with
// g = lane / 4 and t = lane % 4:
//   A 16x16: a0 (g, 2t..2t+1), a1 (g+8, 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..)
//   B 16x8:  b0 (k 2t..2t+1, n g), b1 (k 2t+8..2t+9, n g)
//   C 16x8:  c0 c1 (g, 2t..2t+1), c2 c3 (g+8, 2t..2t+1)
//
//===----------------------------------------------------------------------===//
#ifndef ENC_CUDA_ATTENTION_MMA_CUH
#define ENC_CUDA_ATTENTION_MMA_CUH

#include "enc_cuda_common.cuh"

#include <type_traits>

namespace enc_cuda {

template <int D> struct AttnMmaConfig {
  static_assert(D % 16 == 0 && D <= 128, "head dim must be a multiple of 16, <= 128");
  // Measured on an H200 (bench/RESULTS.md): 8 warps (128 query rows a block)
  // was 1.1-1.3x slower; loading the next K/V tile into registers while the
  // current one computes gained at most 6% at seq 128 and lost at batch 32.
  static constexpr int kWarps = 4;
  static constexpr int kBQ = 16 * kWarps; ///< query rows per block
  static constexpr int kBK = 64;          ///< keys per shared-memory tile
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kRow = D + 8; ///< staged row stride in elements (16-byte multiple)
  static constexpr int kSmemBytes = 2 * 2 * kBK * kRow;
  static_assert(kSmemBytes <= 48 * 1024, "static shared memory above 48 KB");
};

/// Two floats as one register of two T (the first in the low half).
template <typename T> __device__ __forceinline__ uint32_t packPair(float lo, float hi);
template <> __device__ __forceinline__ uint32_t packPair<__half>(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&v);
}
template <> __device__ __forceinline__ uint32_t packPair<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t *>(&v);
}

/// c += a . b, one m16n8k16 tensor-core product with fp32 accumulators.
template <typename T>
__device__ __forceinline__ void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
  if constexpr (std::is_same<T, __half>::value)
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  else
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// Four transposed 8x8 tiles of 16-bit elements from shared memory: lane l
/// names row l % 8 of tile l / 8.
__device__ __forceinline__ void ldmatrixX4Trans(uint32_t (&r)[4], const void *rowAddress) {
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(rowAddress));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

/// out[r, h*D + d] for every packed row r = offsets[b] + s, s < lengths[b]:
/// softmax_j(scale * q_r . k_j) . v_j over keys j < lengths[b] of sequence b.
/// q/k/v point at head 0 of row 0 and advance by `LD` per row; every row
/// start is 16-byte aligned (LD and D are multiples of 8 elements).
template <typename T, int D, int NH, int LD>
__device__ __forceinline__ void attentionMma(const enc_cuda_args &a, const T *q, const T *k,
                                             const T *v, T *out, float scale) {
  static_assert(sizeof(T) == 2, "tensor-core attention reads fp16 or bf16");
  static_assert(LD % 8 == 0, "rows must start 16-byte aligned");
  using C = AttnMmaConfig<D>;
  constexpr int BQ = C::kBQ, BK = C::kBK, ROW = C::kRow, H = NH * D;
  constexpr int DK = D / 16;   // k-steps of S = Q K^T
  constexpr int DN = D / 8;    // n-tiles of O
  constexpr int KN = BK / 8;   // n-tiles of S
  constexpr int CH = D / 8;    // 16-byte chunks per staged row
  __shared__ __align__(16) T sK[BK * ROW];
  __shared__ __align__(16) T sV[BK * ROW];

  const int b = blockIdx.z, h = blockIdx.y;
  const int len = a.lengths[b];
  const int q0 = blockIdx.x * BQ;
  if (q0 >= len)
    return;
  const int64_t base = a.offsets[b];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int g = lane >> 2, t = lane & 3;
  const int row0 = q0 + warp * 16 + g, row1 = row0 + 8; // this thread's query rows

  // Q as A fragments (rows past the sequence are zero: their results are dropped).
  uint32_t qf[DK][4];
  {
    const uint32_t *p0 = row0 < len
        ? reinterpret_cast<const uint32_t *>(q + (base + row0) * LD + h * D) : nullptr;
    const uint32_t *p1 = row1 < len
        ? reinterpret_cast<const uint32_t *>(q + (base + row1) * LD + h * D) : nullptr;
#pragma unroll
    for (int kk = 0; kk < DK; ++kk) {
      qf[kk][0] = p0 ? p0[kk * 8 + t] : 0u;
      qf[kk][1] = p1 ? p1[kk * 8 + t] : 0u;
      qf[kk][2] = p0 ? p0[kk * 8 + 4 + t] : 0u;
      qf[kk][3] = p1 ? p1[kk * 8 + 4 + t] : 0u;
    }
  }

  const float scaleLog2 = scale * 1.4426950408889634f; // exp(x) = exp2(x log2 e)
  float m[2] = {-INFINITY, -INFINITY}; // running max of each row (log2 domain)
  float l[2] = {0.0f, 0.0f};           // this thread's part of each row's sum
  float o[DN][4];
#pragma unroll
  for (int n = 0; n < DN; ++n)
    o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;

  for (int k0 = 0; k0 < len; k0 += BK) {
    const int kn = min(BK, len - k0);
    __syncthreads(); // the previous tile is consumed
    for (int i = tid; i < BK * CH; i += C::kThreads) {
      const int r = i / CH, c = i - r * CH;
      uint4 kv = make_uint4(0, 0, 0, 0), vv = kv; // zeros past the sequence: 0 * p stays 0
      if (r < kn) {
        const int64_t at = (base + k0 + r) * LD + h * D + c * 8;
        kv = *reinterpret_cast<const uint4 *>(k + at);
        vv = *reinterpret_cast<const uint4 *>(v + at);
      }
      *reinterpret_cast<uint4 *>(&sK[r * ROW + c * 8]) = kv;
      *reinterpret_cast<uint4 *>(&sV[r * ROW + c * 8]) = vv;
    }
    __syncthreads();

    // S = Q K^T: B fragment b0 = K[key n*8+g][dims kk*16 + 2t, +1].
    float s[KN][4];
#pragma unroll
    for (int n = 0; n < KN; ++n) {
      s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
      const T *kr = &sK[(n * 8 + g) * ROW + 2 * t];
#pragma unroll
      for (int kk = 0; kk < DK; ++kk)
        mma16816<T>(s[n], qf[kk], *reinterpret_cast<const uint32_t *>(kr + kk * 16),
                    *reinterpret_cast<const uint32_t *>(kr + kk * 16 + 8));
    }

    // Online softmax: c0 c1 belong to row0, c2 c3 to row1; the four lanes
    // of a quad hold one row's columns.
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int n = 0; n < KN; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int col = n * 8 + 2 * t + (e & 1);
        s[n][e] = col < kn ? s[n][e] * scaleLog2 : -INFINITY;
        mx[e >> 1] = fmaxf(mx[e >> 1], s[n][e]);
      }
    float alpha[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      mx[i] = fmaxf(mx[i], __shfl_xor_sync(kFullMask, mx[i], 1));
      mx[i] = fmaxf(mx[i], __shfl_xor_sync(kFullMask, mx[i], 2));
      alpha[i] = exp2f(m[i] - mx[i]); // finite mx: key 0 of the tile is valid
      m[i] = mx[i];
      l[i] *= alpha[i];
    }
#pragma unroll
    for (int n = 0; n < KN; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[n][e] = exp2f(s[n][e] - m[e >> 1]);
        l[e >> 1] += s[n][e];
      }
#pragma unroll
    for (int n = 0; n < DN; ++n) {
      o[n][0] *= alpha[0];
      o[n][1] *= alpha[0];
      o[n][2] *= alpha[1];
      o[n][3] *= alpha[1];
    }

    // O += P V over 16 keys at a time: P's A fragment is the C fragments of
    // two adjacent S n-tiles; V's B fragments for dims n*8.. and n*8+8.. come
    // from one ldmatrix.x4.trans (tiles: keys +0/+8 x dims +0/+8).
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      const uint32_t pa[4] = {packPair<T>(s[2 * kk][0], s[2 * kk][1]),
                              packPair<T>(s[2 * kk][2], s[2 * kk][3]),
                              packPair<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              packPair<T>(s[2 * kk + 1][2], s[2 * kk + 1][3])};
      const int tile = lane >> 3;
      const T *vrow = &sV[(kk * 16 + (lane & 7) + (tile & 1) * 8) * ROW + (tile >> 1) * 8];
#pragma unroll
      for (int n = 0; n < DN; n += 2) {
        uint32_t vb[4];
        ldmatrixX4Trans(vb, vrow + n * 8);
        mma16816<T>(o[n], pa, vb[0], vb[1]);
        mma16816<T>(o[n + 1], pa, vb[2], vb[3]);
      }
    }
  }

#pragma unroll
  for (int i = 0; i < 2; ++i) {
    l[i] += __shfl_xor_sync(kFullMask, l[i], 1);
    l[i] += __shfl_xor_sync(kFullMask, l[i], 2);
  }
  const float inv0 = 1.0f / l[0], inv1 = 1.0f / l[1];
  if (row0 < len) {
    uint32_t *dst = reinterpret_cast<uint32_t *>(out + (base + row0) * H + h * D);
#pragma unroll
    for (int n = 0; n < DN; ++n)
      dst[n * 4 + t] = packPair<T>(o[n][0] * inv0, o[n][1] * inv0);
  }
  if (row1 < len) {
    uint32_t *dst = reinterpret_cast<uint32_t *>(out + (base + row1) * H + h * D);
#pragma unroll
    for (int n = 0; n < DN; ++n)
      dst[n * 4 + t] = packPair<T>(o[n][2] * inv1, o[n][3] * inv1);
  }
}

} // namespace enc_cuda

#endif // ENC_CUDA_ATTENTION_MMA_CUH
