//===- enc_gemm.h - fp32 batched matmul kernels (attention) -------*- C++ -*-===//
//
// matmulNT: y = a · bᵀ per batch entry (both operands K-contiguous), so every
// output is a K-contiguous dot product: the micro-kernel computes an R x C
// tile of such dots with R*C eight-lane accumulators (vectorised over K),
// reduces them once at the end, and handles any K, M, N. matmulNN: y = a · b.
// enc.linear has its own kernel over packed weights (enc_sgemm.h).
//
//===----------------------------------------------------------------------===//
#ifndef ENC_KERNELS_GEMM_H
#define ENC_KERNELS_GEMM_H

#include "enc_common.h"

namespace enc_kernels {

/// out[r][c] = sum_k x[r*ldx + k] * w[c*ldw + k] for k in [0, K).
template <int R, int C>
ENC_INLINE void dotTile(const float *x, int64_t ldx, const float *w,
                        int64_t ldw, int64_t K, float (&out)[R][C]) {
  v8f acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      acc[r][c] = v8f{0, 0, 0, 0, 0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 8 <= K; k += 8) {
    v8f wv[C];
    for (int c = 0; c < C; ++c)
      wv[c] = load8(w + c * ldw + k);
    for (int r = 0; r < R; ++r) {
      const v8f xv = load8(x + r * ldx + k);
      for (int c = 0; c < C; ++c)
        acc[r][c] += xv * wv[c];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      float s = hsum8(acc[r][c]);
      for (int64_t kk = k; kk < K; ++kk)
        s += x[r * ldx + kk] * w[c * ldw + kk];
      out[r][c] = s;
    }
}

/// enc.matmul {transpose_b}: a [nb, M, K], b [nb, N, K], y [nb, M, N].
/// KS > 0 fixes K at compile time (the head dim); KS == 0 uses `k`.
template <int KS>
void matmulNT(const float *a, const float *b, float *y, int64_t nb, int64_t M,
              int64_t N, int64_t k, int32_t task, int32_t numTasks) {
  const int64_t K = KS > 0 ? KS : k;
  constexpr int64_t TR = 4;
  // Work unit: TR rows of one batch entry against all N columns.
  const int64_t rowTiles = (M + TR - 1) / TR;
  int64_t u0, u1;
  taskShare(nb * rowTiles, task, numTasks, u0, u1);
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t bi = u / rowTiles, i0 = (u % rowTiles) * TR;
    const int64_t i1 = std::min(M, i0 + TR);
    const float *ab = a + bi * M * K, *bb = b + bi * N * K;
    float *yb = y + bi * M * N;
    if (i1 - i0 == TR) {
      int64_t j = 0;
      for (; j + 3 <= N; j += 3) {
        float t[TR][3];
        dotTile<TR, 3>(ab + i0 * K, K, bb + j * K, K, K, t);
        for (int r = 0; r < TR; ++r)
          for (int c = 0; c < 3; ++c)
            yb[(i0 + r) * N + j + c] = t[r][c];
      }
      for (; j < N; ++j) {
        float t[TR][1];
        dotTile<TR, 1>(ab + i0 * K, K, bb + j * K, K, K, t);
        for (int r = 0; r < TR; ++r)
          yb[(i0 + r) * N + j] = t[r][0];
      }
    } else {
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = 0; j < N; ++j) {
          float t[1][1];
          dotTile<1, 1>(ab + i * K, K, bb + j * K, K, K, t);
          yb[i * N + j] = t[0][0];
        }
    }
  }
}

/// enc.matmul: a [nb, M, K], b [nb, K, N], y [nb, M, N]. NS > 0 fixes N at
/// compile time (the head dim); NS == 0 uses `n`.
template <int NS>
void matmulNN(const float *a, const float *b, float *y, int64_t nb, int64_t M,
              int64_t n, int64_t K, int32_t task, int32_t numTasks) {
  const int64_t N = NS > 0 ? NS : n;
  int64_t r0, r1;
  taskShare(nb * M, task, numTasks, r0, r1);
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t bi = row / M;
    const float *ar = a + row * K, *bb = b + bi * K * N;
    float *yr = y + row * N;
    if (NS > 0) {
      float acc[NS > 0 ? NS : 1];
      for (int64_t j = 0; j < NS; ++j)
        acc[j] = 0.0f;
      for (int64_t kk = 0; kk < K; ++kk) {
        const float av = ar[kk];
        const float *br = bb + kk * NS;
        for (int64_t j = 0; j < NS; ++j)
          acc[j] += av * br[j];
      }
      for (int64_t j = 0; j < NS; ++j)
        yr[j] = acc[j];
    } else {
      for (int64_t j = 0; j < N; ++j)
        yr[j] = 0.0f;
      for (int64_t kk = 0; kk < K; ++kk) {
        const float av = ar[kk];
        const float *br = bb + kk * N;
        for (int64_t j = 0; j < N; ++j)
          yr[j] += av * br[j];
      }
    }
  }
}

} // namespace enc_kernels

#endif // ENC_KERNELS_GEMM_H
